//! Building record bodies and reading representations.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

/// A unique lower-case word (`zq` and eight letters), for names that `search=<word>` isolates.
pub fn tok() -> String {
    static N: AtomicU64 = AtomicU64::new(1);
    let mut x = N
        .fetch_add(1, Ordering::SeqCst)
        .wrapping_add(std::process::id() as u64)
        .wrapping_add(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64,
        )
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut s = String::from("zq");
    for _ in 0..8 {
        x ^= x >> 31;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x ^= x >> 29;
        s.push((b'a' + (x % 26) as u8) as char);
    }
    s
}

/// `base` with the members of `extra` set on it (both JSON objects).
pub fn merge(mut base: Value, extra: Value) -> Value {
    if let (Value::Object(m), Value::Object(e)) = (&mut base, extra) {
        for (k, v) in e {
            m.insert(k, v);
        }
    }
    base
}

/// A `YYYY-MM-DD HH:MM:SS` string naming a real date and time.
pub fn is_datetime(v: &Value) -> bool {
    let Some(s) = v.as_str() else { return false };
    chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").is_ok() && s.len() == 19
}

/// The keys of an event representation in order, with `json_ld` (which list items leave out)
/// when asked.
pub fn event_keys(with_json_ld: bool) -> Vec<&'static str> {
    let mut k = vec![
        "id",
        "global_id",
        "global_id_lineage",
        "author",
        "status",
        "date",
        "date_utc",
        "modified",
        "modified_utc",
        "url",
        "rest_url",
        "title",
        "description",
        "excerpt",
        "slug",
        "image",
        "all_day",
        "start_date",
        "start_date_details",
        "end_date",
        "end_date_details",
        "utc_start_date",
        "utc_start_date_details",
        "utc_end_date",
        "utc_end_date_details",
        "timezone",
        "timezone_abbr",
        "cost",
        "cost_details",
        "website",
        "show_map",
        "show_map_link",
        "hide_from_listings",
        "sticky",
        "featured",
        "categories",
        "tags",
        "venue",
        "organizer",
        "custom_fields",
    ];
    if with_json_ld {
        k.push("json_ld");
    }
    k.extend(["language", "translations", "ticketed", "post_parent"]);
    k
}
