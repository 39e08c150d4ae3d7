//! Property tests of every parameter parser and body decoder, through the library's public API.
//!
//! Covered: query-string and form syntax, request bodies (media types, JSON depth and top
//! level), validation sub-codes, limits, scalars (integers, booleans, strings, lists), the
//! date-time grammar, time zones, URLs, slugs, search, paragraphs, HTML sanitizing and costs
//! (docs/api.md, "Requests", "Values", "Limits").
//!
//! Two kinds of property: robustness (no parser panics, whatever the input: arbitrary strings,
//! bytes and JSON) and exactness (a generated valid input reads back as the value it was built
//! from; a generated invalid one is refused with the documented sub-code). Case counts are
//! modest so that the whole file runs in seconds in CI.

use almanac::http::body;
use almanac::http::params::{self, ParamKind, ParamSpec};
use almanac::model::Language;
use almanac::values::cost::Cost;
use almanac::values::datetime;
use almanac::values::form::{parse_json_body, RawParams};
use almanac::values::scalars;
use almanac::values::search::{analyze, SearchQuery};
use almanac::values::slug;
use almanac::values::text;
use almanac::values::timezone::Zone;
use almanac::values::{SubCode, MAX_LIST_ITEMS, MAX_STRING_BYTES};
use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc};
use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
use proptest::prelude::*;
use serde_json::{json, Map, Value};
use warp::http::header::{self, HeaderMap, HeaderValue};

fn config() -> ProptestConfig {
    ProptestConfig::with_cases(256)
}

/// A fixed "now" for the date-time grammar, so that failures reproduce.
fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 5, 19, 20, 0).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------------------------

/// Arbitrary JSON values, a few levels deep.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        // Binary fractions with short decimal forms, which every JSON reader reads back
        // exactly (serde_json's default float parser is not exact for all doubles).
        any::<i32>().prop_map(|n| json!(f64::from(n) / 8.0)),
        ".{0,20}".prop_map(Value::String),
        "[0-9+\\-.eE ]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[a-z0-9_]{0,6}", inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// A valid date-time of the working range, whole seconds.
fn any_datetime() -> impl Strategy<Value = NaiveDateTime> {
    (
        1i32..=9999,
        1u32..=12,
        1u32..=28,
        0u32..24,
        0u32..60,
        0u32..60,
    )
        .prop_map(|(y, mo, d, h, mi, s)| {
            NaiveDate::from_ymd_opt(y, mo, d)
                .unwrap()
                .and_time(NaiveTime::from_hms_opt(h, mi, s).unwrap())
        })
}

/// Tokens of the date-time grammar's vocabulary, and near misses, for token-soup inputs.
fn datetime_token() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "now",
            "today",
            "midnight",
            "noon",
            "tomorrow",
            "yesterday",
            "next",
            "last",
            "previous",
            "this",
            "ago",
            "monday",
            "sun",
            "fortnight",
            "fortnights",
            "sec",
            "min",
            "hour",
            "hours",
            "day",
            "week",
            "month",
            "months",
            "year",
            "years",
            "am",
            "pm",
            "t",
            "z",
            "utc",
            "gmt",
            "+",
            "-",
            ":",
            "/",
            ".",
            "  ",
        ])
        .prop_map(str::to_owned),
        "[+-]?[0-9]{1,25}",
        "[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}",
        "[0-9]{1,2}/[0-9]{1,2}/[0-9]{4}",
        "[0-9]{1,2}(:[0-9]{2}){0,2}(\\.[0-9]{1,3})?",
        "[+-][0-9]{2}:?[0-9]{2}",
    ]
}

/// `word` with each ASCII letter in a random case. (Regex `(?i:…)` classes would also produce
/// Unicode case variants such as `ſ` for `s`, which HTML and the contract do not fold.)
fn ascii_cased(word: &'static str) -> impl Strategy<Value = String> {
    prop::collection::vec(any::<bool>(), word.len()).prop_map(move |upper| {
        word.chars()
            .zip(upper)
            .map(|(c, up)| if up { c.to_ascii_uppercase() } else { c })
            .collect()
    })
}

/// A parameter name: ASCII, no brackets or form syntax.
fn param_name() -> impl Strategy<Value = String> {
    "[a-z_][a-z0-9_]{0,7}"
}

/// Form-encodes one key or value as a client would (every byte but letters and digits escaped,
/// so `+`, `&`, `=`, `%`, `[` survive).
fn enc(s: &str) -> String {
    utf8_percent_encode(s, NON_ALPHANUMERIC).to_string()
}

fn json_headers() -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    h
}

fn form_headers() -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-www-form-urlencoded"),
    );
    h
}

/// `depth` nested arrays around an object member: `{"a":[[0]]}` has depth + 1 levels.
fn nested_body(depth: usize) -> String {
    format!("{{\"a\":{}0{}}}", "[".repeat(depth), "]".repeat(depth))
}

// ---------------------------------------------------------------------------------------------
// Integers
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config())]

    #[test]
    fn every_i64_reads_back_exactly_in_every_accepted_spelling(n in any::<i64>(), zeros in 0usize..4) {
        prop_assert_eq!(scalars::integer(&json!(n)), Ok(n));
        prop_assert_eq!(scalars::integer(&json!(n.to_string())), Ok(n));
        let magnitude = n.unsigned_abs().to_string();
        let sign = if n < 0 { "-" } else { "+" };
        let padded = format!("{sign}{}{magnitude}", "0".repeat(zeros));
        prop_assert_eq!(scalars::integer(&json!(padded)), Ok(n));
        prop_assert_eq!(scalars::integer(&json!(format!("{n}.000"))), Ok(n));
        prop_assert_eq!(scalars::integer(&json!(format!("{n}e0"))), Ok(n));
    }

    #[test]
    fn integers_beyond_64_bits_are_out_of_bounds_not_wrapped(n in any::<i128>()) {
        prop_assume!(n > i128::from(i64::MAX) || n < i128::from(i64::MIN));
        let e = scalars::integer(&json!(n.to_string())).unwrap_err();
        prop_assert_eq!(e.code, SubCode::OutOfBounds);
        if let Ok(u) = u64::try_from(n) {
            // A JSON number above i64::MAX (serde reads it as u64).
            let e = scalars::integer(&json!(u)).unwrap_err();
            prop_assert_eq!(e.code, SubCode::OutOfBounds);
        }
    }

    #[test]
    fn integral_floats_are_integers_and_fractional_ones_are_not(n in -(1i64 << 52)..(1i64 << 52), frac in 1u32..1000) {
        prop_assert_eq!(scalars::integer(&json!(n as f64)), Ok(n));
        let fractional = format!("{n}.{frac:03}");
        prop_assume!(!fractional.ends_with('0'));
        let e = scalars::integer(&json!(fractional)).unwrap_err();
        prop_assert_eq!(e.code, SubCode::InvalidType);
    }

    #[test]
    fn exponents_scale_exactly(m in 0i64..100_000, e in 0u32..25) {
        let expected = i128::from(m) * 10i128.pow(e);
        let got = scalars::integer(&json!(format!("{m}e{e}")));
        match i64::try_from(expected) {
            Ok(v) => prop_assert_eq!(got, Ok(v)),
            Err(_) => prop_assert_eq!(got.unwrap_err().code, SubCode::OutOfBounds),
        }
    }

    #[test]
    fn surrounding_whitespace_makes_an_integer_invalid(n in any::<i64>(), ws in "[ \t\n\r]{1,3}", before in any::<bool>()) {
        let s = if before { format!("{ws}{n}") } else { format!("{n}{ws}") };
        let e = scalars::integer(&json!(s)).unwrap_err();
        prop_assert_eq!(e.code, SubCode::InvalidType);
    }

    #[test]
    fn integer_parsing_never_panics_and_accepts_only_decimal_syntax(s in ".{0,30}") {
        if scalars::integer(&json!(s)).is_ok() {
            prop_assert!(s.bytes().all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b)), "{:?}", s);
        }
    }

    #[test]
    fn integer_parsing_never_panics_on_number_shaped_strings(s in "[+-]?[0-9]{0,30}(\\.[0-9]{0,30})?([eE][+-]?[0-9]{0,30})?") {
        let _ = scalars::integer(&json!(s));
        let _ = scalars::number(&json!(s));
    }

    #[test]
    fn positive_integers_start_at_one(n in any::<i64>()) {
        let r = scalars::positive_integer(&json!(n.to_string()));
        if n >= 1 {
            prop_assert_eq!(r, Ok(n));
        } else {
            prop_assert_eq!(r.unwrap_err().code, SubCode::OutOfBounds);
        }
    }

    #[test]
    fn integer_parameters_accept_exactly_their_range(n in any::<i64>(), min in -1000i64..1000, span in 0i64..1000) {
        let max = min + span;
        let specs = [ParamSpec::query("n", ParamKind::Integer { minimum: Some(min), maximum: Some(max) })];
        let raw = RawParams::from_form(format!("n={n}").as_bytes());
        let p = params::validate(&specs, &raw).expect("no required parameters");
        if (min..=max).contains(&n) {
            prop_assert!(p.invalid.is_empty());
            prop_assert_eq!(p.i64("n"), Some(n));
        } else {
            prop_assert_eq!(p.invalid.len(), 1);
            prop_assert_eq!(p.invalid[0].1.code, SubCode::OutOfBounds);
        }
    }

    #[test]
    fn numbers_read_back_every_finite_float(f in any::<f64>().prop_filter("finite", |f| f.is_finite())) {
        prop_assert_eq!(scalars::number(&json!(f)), Ok(f));
        // Rust's shortest round-trip rendering is in the decimal syntax (with an exponent
        // spelled `e`); scientific notation too.
        prop_assert_eq!(scalars::number(&json!(f.to_string())), Ok(f));
        prop_assert_eq!(scalars::number(&json!(format!("{f:e}"))), Ok(f));
    }
}

// ---------------------------------------------------------------------------------------------
// Booleans, strings, URLs
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config())]

    #[test]
    fn booleans_accept_exactly_true_false_1_0_in_any_case(s in prop_oneof![ascii_cased("true"), ascii_cased("false"), "[01]|.{0,6}"]) {
        let expected = if s.eq_ignore_ascii_case("true") || s == "1" {
            Some(true)
        } else if s.eq_ignore_ascii_case("false") || s == "0" {
            Some(false)
        } else {
            None
        };
        let got = scalars::boolean(&json!(s));
        match expected {
            Some(b) => prop_assert_eq!(got, Ok(b)),
            None => prop_assert_eq!(got.unwrap_err().code, SubCode::InvalidType),
        }
    }

    #[test]
    fn boolean_and_flag_readers_never_panic_on_any_json(v in any_json()) {
        let _ = scalars::boolean(&v);
        let _ = scalars::truthy(&v);
        let _ = scalars::strict_dates(&v);
        let _ = scalars::number(&v);
        let _ = scalars::integer(&v);
        let _ = scalars::url(&v);
        let _ = scalars::one_of(&v, &["a", "b"]);
    }

    #[test]
    fn truthy_strings_are_never_refused(s in ".{0,12}") {
        prop_assert!(scalars::truthy(&json!(s)).is_ok());
    }

    #[test]
    fn strings_are_refused_only_for_nul_or_length(s in "(.|\\x00){0,40}", pad in prop::sample::select(vec![0usize, 65_500, 65_535, 65_536])) {
        let long = format!("{s}{}", "x".repeat(pad));
        let value = json!(long);
        let got = scalars::string(&value);
        if long.contains('\0') {
            prop_assert_eq!(got.unwrap_err().code, SubCode::InvalidCharacters);
        } else if long.len() > MAX_STRING_BYTES {
            prop_assert_eq!(got.unwrap_err().code, SubCode::TooLong);
        } else {
            prop_assert_eq!(got, Ok(long.as_str()));
        }
    }

    #[test]
    fn urls_never_panic_and_accepted_ones_are_the_trimmed_input(s in "([hH][tT][tT][pP][sS]?://)?.{0,40}") {
        if let Ok(u) = scalars::url(&json!(s)) {
            prop_assert_eq!(u.as_str(), s.trim());
            let lower = u.to_ascii_lowercase();
            prop_assert!(lower.starts_with("http://") || lower.starts_with("https://"));
            prop_assert!(!u.chars().any(|c| c.is_whitespace() || c.is_control()));
        }
    }

    #[test]
    fn well_formed_http_urls_are_accepted_verbatim(
        scheme in "[hH][tT][tT][pP][sS]?",
        host in "[a-z][a-z0-9-]{0,15}(\\.[a-z]{2,6}){0,2}",
        port in prop::option::of(1u32..=65535),
        path in "(/[a-zA-Z0-9._~%-]{0,10}){0,3}",
        query in prop::option::of("[a-z0-9=&]{0,10}"),
    ) {
        let mut u = format!("{scheme}://{host}");
        if let Some(p) = port {
            u.push_str(&format!(":{p}"));
        }
        u.push_str(&path);
        if let Some(q) = query {
            u.push('?');
            u.push_str(&q);
        }
        prop_assert_eq!(scalars::url(&json!(format!("  {u}\t"))), Ok(u));
    }

    #[test]
    fn urls_without_an_http_scheme_or_host_are_refused(s in "(ftp|mailto|javascript|file|data):[^\\x00]{0,20}|https?:/{0,1}[a-z]{0,8}|https?:///[^\\x00]{0,8}") {
        prop_assert_eq!(scalars::url(&json!(s)).unwrap_err().code, SubCode::InvalidFormat);
    }
}

// ---------------------------------------------------------------------------------------------
// Date-times, time zones
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_date_time_parser_never_panics_on_arbitrary_text(s in ".{0,40}") {
        let _ = datetime::parse_str(&s, &Zone::Utc, now());
        let _ = datetime::parse_str(&s, &Zone::parse("America/New_York").unwrap(), now());
    }

    #[test]
    fn the_date_time_parser_never_panics_on_grammar_token_soup(
        tokens in prop::collection::vec(datetime_token(), 1..8),
        sep in prop::sample::select(vec![" ", "  ", "", "T"]),
        zone in prop::sample::select(vec!["UTC", "Pacific/Kiritimati", "Pacific/Apia", "America/St_Johns", "UTC-12", "UTC+14"]),
    ) {
        let s = tokens.join(sep);
        let zone = Zone::parse(zone).unwrap();
        if let Ok(v) = datetime::parse_str(&s, &zone, now()) {
            // Whatever is accepted lies within the years 0001–9999, both as a wall
            // clock and as an instant, so that it always formats with four-digit years.
            let first = NaiveDate::from_ymd_opt(1, 1, 1).unwrap().and_time(NaiveTime::MIN);
            let last = NaiveDate::from_ymd_opt(9999, 12, 31).unwrap().and_hms_opt(23, 59, 59).unwrap();
            prop_assert!((first..=last).contains(&v.local), "{:?} -> {:?}", s, v);
            prop_assert!((first..=last).contains(&v.utc.naive_utc()), "{:?} -> {:?}", s, v);
            prop_assert_eq!(datetime::format(&v.local).len(), 19);
        }
    }

    #[test]
    fn a_formatted_date_time_parses_to_itself(dt in any_datetime(), upper in any::<bool>(), pad in "[ ]{0,3}") {
        let text = datetime::format(&dt);
        let text = if upper { text.replace(' ', "T") } else { text };
        let text = format!("{pad}{text}{pad}");
        let v = datetime::parse_str(&text, &Zone::Utc, now()).unwrap();
        prop_assert_eq!(v.local, dt);
        prop_assert_eq!(v.utc.naive_utc(), dt);
        prop_assert_eq!(datetime::format(&v.local), datetime::format(&dt));
    }

    #[test]
    fn a_wall_clock_in_a_fixed_offset_zone_keeps_its_instant(dt in any_datetime(), hours in -12i32..=14) {
        let spelling = format!("UTC{}{}", if hours < 0 { "-" } else { "+" }, hours.abs());
        let zone = Zone::parse(&spelling).unwrap();
        let first = NaiveDate::from_ymd_opt(1, 1, 1).unwrap().and_time(NaiveTime::MIN);
        let last = NaiveDate::from_ymd_opt(9999, 12, 31).unwrap().and_hms_opt(23, 59, 59).unwrap();
        let utc = dt - chrono::TimeDelta::hours(i64::from(hours));
        match datetime::parse_str(&datetime::format(&dt), &zone, now()) {
            Ok(v) => {
                prop_assert_eq!(v.local, dt);
                prop_assert_eq!(v.utc.naive_utc(), utc);
            }
            // Only the ends of the range may fall outside it once converted.
            Err(e) => {
                prop_assert_eq!(e.code, SubCode::InvalidFormat);
                prop_assert!(!(first..=last).contains(&utc));
            }
        }
    }

    #[test]
    fn an_explicit_offset_names_the_instant(dt in any_datetime(), off_h in 0u32..24, off_m in 0u32..60, negative in any::<bool>()) {
        prop_assume!(dt.year() > 1 && dt.year() < 9999);
        let sign = if negative { '-' } else { '+' };
        let text = format!("{}T{}{sign}{off_h:02}:{off_m:02}", dt.date(), dt.time());
        let v = datetime::parse_str(&text, &Zone::Utc, now()).unwrap();
        let seconds = i64::from(off_h * 3600 + off_m * 60) * if negative { -1 } else { 1 };
        prop_assert_eq!(v.utc.naive_utc(), dt - chrono::TimeDelta::seconds(seconds));
    }

    #[test]
    fn month_day_year_dates_read_as_the_american_order(dt in any_datetime()) {
        let d = dt.date();
        let text = format!("{}/{}/{:04}", d.format("%m"), d.format("%-d"), d.format("%Y"));
        let v = datetime::parse_str(&text, &Zone::Utc, now()).unwrap();
        prop_assert_eq!(v.local, d.and_time(NaiveTime::MIN));
    }

    #[test]
    fn unix_timestamps_are_the_instant_they_count(dt in any_datetime()) {
        let seconds = dt.and_utc().timestamp();
        for value in [json!(seconds), json!(seconds.to_string())] {
            let v = datetime::parse(&value, &Zone::Utc, now()).unwrap();
            prop_assert_eq!(v.utc.timestamp(), seconds);
        }
    }

    #[test]
    fn timestamps_of_any_size_are_refused_cleanly(digits in "-?[0-9]{12,40}") {
        // Beyond year 9999 (or before year 1), or beyond 64 bits: a clean refusal.
        let parsed = datetime::parse_str(&digits, &Zone::Utc, now());
        let n: Option<i64> = digits.parse().ok();
        let in_range = n.is_some_and(|n| (-62_135_596_800..=253_402_300_799).contains(&n));
        prop_assert_eq!(parsed.is_ok(), in_range, "{}", digits);
    }

    #[test]
    fn a_named_zone_keeps_every_wall_clock_that_exists(dt in any_datetime(), zone in prop::sample::select(chrono_tz::TZ_VARIANTS.to_vec())) {
        let z = Zone::parse(zone.name()).unwrap();
        prop_assert_eq!(z.name(), zone.name());
        // Away from the ends of the range, so that the instant stays inside it too.
        prop_assume!((2..9999).contains(&dt.year()));
        let v = datetime::parse_str(&datetime::format(&dt), &z, now()).unwrap();
        if let chrono::LocalResult::Single(at) = zone.from_local_datetime(&dt) {
            prop_assert_eq!(v.local, dt);
            prop_assert_eq!(v.utc, at.with_timezone(&Utc));
        }
        prop_assert_eq!(z.to_local(v.utc), v.local);
    }

    #[test]
    fn zone_names_match_in_any_case_and_anything_else_is_refused(zone in prop::sample::select(chrono_tz::TZ_VARIANTS.to_vec()), flips in prop::collection::vec(any::<bool>(), 40), junk in ".{0,12}") {
        let name = zone.name();
        let cased: String = name
            .chars()
            .zip(flips.iter().cycle())
            .map(|(c, up)| if *up { c.to_ascii_uppercase() } else { c.to_ascii_lowercase() })
            .collect();
        let z = Zone::parse(&cased).unwrap();
        if !name.eq_ignore_ascii_case("UTC") {
            prop_assert_eq!(z.name(), name);
        }
        if let Err(e) = Zone::parse(&junk) {
            prop_assert_eq!(e.code, SubCode::InvalidFormat);
        }
    }

    #[test]
    fn utc_offsets_are_accepted_from_minus_12_to_plus_14(hours in 0i32..30, minutes in prop::sample::select(vec!["", ":00", ":30", ":45", ":59", ".5", ".75", ":60", ".25"]), negative in any::<bool>()) {
        let sign = if negative { '-' } else { '+' };
        let spelling = format!("UTC{sign}{hours}{minutes}");
        let extra = match minutes {
            "" | ":00" => Some(0),
            ":30" | ".5" => Some(30),
            ":45" | ".75" => Some(45),
            ":59" => Some(59),
            _ => None,
        };
        let total = extra.map(|m| (hours * 60 + m) * if negative { -1 } else { 1 });
        let expect_ok = hours < 100 && total.is_some_and(|t| (-12 * 60..=14 * 60).contains(&t));
        match Zone::parse(&spelling) {
            Ok(z) => {
                prop_assert!(expect_ok, "{} accepted", spelling);
                prop_assert_eq!(z.name(), spelling.clone());
                prop_assert_eq!(z.offset_seconds(now()), total.unwrap() * 60);
            }
            Err(e) => {
                prop_assert!(!expect_ok, "{} refused", spelling);
                prop_assert_eq!(e.code, SubCode::InvalidFormat);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Slugs
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config())]

    #[test]
    fn slugs_hold_only_lower_case_letters_digits_underscores_and_single_inner_dashes(s in "(.|%[0-9A-F]{2}|&[a-z]{2,5};|<[a-z]{1,3}>){0,40}") {
        let out = slug::sanitize(&s);
        prop_assert!(out.len() <= slug::MAX_SLUG_BYTES);
        prop_assert!(out.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-'), "{:?} -> {:?}", s, out);
        prop_assert!(!out.starts_with('-') && !out.ends_with('-') && !out.contains("--"), "{:?} -> {:?}", s, out);
        prop_assert_eq!(out.to_lowercase(), out.clone());
    }

    #[test]
    fn slug_sanitizing_is_idempotent(s in "(.|%[0-9A-F]{2}|&[a-z]{2,5};|[A-Za-zÀ-ÿ ._/–—-]){0,60}") {
        let once = slug::sanitize(&s);
        prop_assert_eq!(slug::sanitize(&once), once.clone(), "input {:?}", s);
    }

    #[test]
    fn long_slugs_are_cut_to_200_bytes_at_a_character_boundary(word in "[a-zé水-]{1,8}", n in 1usize..200) {
        let out = slug::sanitize(&word.repeat(n));
        prop_assert!(out.len() <= slug::MAX_SLUG_BYTES);
        prop_assert_eq!(slug::sanitize(&out), out.clone());
    }

    #[test]
    fn unique_slugs_avoid_every_taken_one_and_stay_within_the_limit(base in "[a-z0-9-]{1,210}", taken in 0u32..20) {
        let base = slug::sanitize(&base);
        prop_assume!(!base.is_empty());
        let is_taken = |c: &str| {
            c == base || (2..2 + taken).any(|n| c == slug::with_suffix(&base, n))
        };
        let out = slug::make_unique(&base, is_taken);
        prop_assert!(!is_taken(&out));
        prop_assert!(out.len() <= slug::MAX_SLUG_BYTES);
        prop_assert!(!out.contains("--"));
    }
}

// ---------------------------------------------------------------------------------------------
// Search, text, cost
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config())]

    #[test]
    fn search_parsing_matching_and_scoring_never_panic(q in ".{0,30}", field in ".{0,60}", lang in prop::sample::select(Language::ALL.to_vec())) {
        let query = SearchQuery::parse(&q, lang);
        let _ = query.matches(&[&field, ""]);
        let score = query.score(&[&field]);
        prop_assert!(score.is_finite() && score >= 0.0);
        let _ = analyze(&field, lang);
    }

    #[test]
    fn a_query_made_of_a_fields_own_words_finds_it(words in prop::collection::vec("[a-zA-Zàéíõç]{1,10}", 1..6), pick in prop::collection::vec(any::<prop::sample::Index>(), 1..4), lang in prop::sample::select(Language::ALL.to_vec())) {
        let field = words.join(" ");
        let query: Vec<&str> = pick.iter().map(|i| words[i.index(words.len())].as_str()).collect();
        let q = SearchQuery::parse(&query.join(" "), lang);
        prop_assert!(q.matches(&["", &field]), "{:?} in {:?}", query, field);
        prop_assert!(q.score(&[&field]) > 0.0);
    }

    #[test]
    fn text_helpers_never_panic(s in "(.|<[a-z/!?]{0,8}|&#?[a-z0-9]{0,8};?|[<>\"'=\\n])*") {
        let _ = text::render_paragraphs(&s);
        let _ = text::strip_tags(&s);
        let _ = text::clean_plain(&s);
        let _ = text::decode_entities(&s);
        let _ = text::json_ld_description(&s, &s);
        let _ = text::sanitize_html(&s);
    }

    #[test]
    fn html_sanitizing_is_idempotent(s in "(<(/?)(script|style|iframe|object|embed|form|p|a|noscript|textarea|img)( on[a-z]{1,5}=\"x\"| href=\"(java|JAVA)script:x\"| title=\"[<>/a-z ]{0,6}\")?>|[a-z ]{1,5}|<!--|-->|[<>\"'/])*") {
        let once = text::sanitize_html(&s);
        prop_assert_eq!(text::sanitize_html(&once), once.clone(), "input {:?}", s);
    }

    #[test]
    fn a_script_between_plain_texts_disappears_with_its_content(before in "[a-zA-Z0-9 .,]{0,20}", payload in "[a-zA-Z0-9 ();]{0,20}", after in "[a-zA-Z0-9 .,]{0,20}", tag in prop_oneof![ascii_cased("script"), ascii_cased("style"), ascii_cased("iframe")]) {
        let input = format!("{before}<{tag}>ALERT{payload}</{tag}>{after}");
        prop_assert_eq!(text::sanitize_html(&input), format!("{before}{after}"));
    }

    /// A plain `<` followed by removed markup and then tag-like text must not turn into a tag
    /// once the markup between them is gone (`<</script>img onerror=…>`).
    #[test]
    fn removing_markup_never_joins_a_plain_lt_into_a_new_tag(
        removed in prop::sample::select(vec!["</script>", "<script></script>", "</style>", "<embed>", "<object></object>", "</form>", "<iframe>x</iframe>", "<STYLE a='>'>b</style >"]),
        lts in 1usize..4,
        tag in prop::sample::select(vec!["img src=x onerror=alert(1)>", "/a onclick=alert(1)>", "!--x-->", "svg onload=alert(1)>", "a href=javascript:alert(1)>"]),
        before in "[a-z ]{0,5}",
    ) {
        let input = format!("{before}{}{removed}{tag}", "<".repeat(lts));
        let out = text::sanitize_html(&input);
        prop_assert_eq!(text::sanitize_html(&out), out.clone(), "input {:?}", input);
        let lower = out.to_ascii_lowercase();
        prop_assert!(!lower.contains("<img") && !lower.contains("<svg") && !lower.contains("<a "), "{:?} -> {:?}", input, out);
    }

    #[test]
    fn text_without_markup_is_left_alone(s in "[^<&]{0,60}") {
        prop_assert_eq!(text::sanitize_html(&s), s.clone());
        prop_assert_eq!(text::strip_tags(&s), s.clone());
        prop_assert_eq!(text::decode_entities(&s), s.clone());
    }

    #[test]
    fn plain_cleaning_collapses_whitespace(s in "(.|<[a-z]{1,4}>|[ \t\n]{1,3})*") {
        let once = text::clean_plain(&s);
        prop_assert_eq!(once.trim(), once.as_str());
        prop_assert!(!once.contains("  ") && !once.contains('\n') && !once.contains('\t'));
    }

    /// Removing tags never leaves a tag behind (`<<b>script>` does not become `<script>`), so
    /// cleaning again changes nothing.
    #[test]
    fn plain_cleaning_is_idempotent(s in "(.|<[a-z/!]{0,3}|[a-z]{1,4}>|<[a-z]{1,4}>|[ \t\n]{1,3})*") {
        let once = text::clean_plain(&s);
        prop_assert_eq!(text::clean_plain(&once), once.clone(), "input {:?}", s);
        prop_assert_eq!(text::strip_tags(&text::strip_tags(&s)), text::strip_tags(&s));
    }

    #[test]
    fn a_one_line_plain_text_renders_as_one_paragraph(s in "[^<\\r\\n]{0,40}") {
        let out = text::render_paragraphs(&s);
        if s.trim().is_empty() {
            prop_assert_eq!(out, "");
        } else {
            prop_assert_eq!(out, format!("<p>{}</p>", s.trim()));
        }
    }

    #[test]
    fn costs_never_panic_and_refuse_only_other_json_types(v in any_json()) {
        let ok_type = |v: &Value| matches!(v, Value::String(_) | Value::Number(_));
        let expect_ok = match &v {
            Value::Array(items) => items.len() <= MAX_LIST_ITEMS && items.iter().all(ok_type),
            other => ok_type(other),
        };
        let got = Cost::from_write(&v);
        // A string may also be refused for NUL or length; the generator makes neither.
        let nul = v.to_string().contains("\\u0000");
        if !nul {
            prop_assert_eq!(got.is_ok(), expect_ok, "{}", v);
        }
        if let Ok(c) = got {
            let _ = c.formatted();
            let _ = c.details();
            let _ = c.offer_price();
        }
    }

    #[test]
    fn a_cost_string_is_stored_as_sent(s in "[^\\x00]{1,30}") {
        let c = Cost::from_write(&json!(s)).unwrap();
        prop_assert_eq!(c.values, vec![s]);
    }
}

// ---------------------------------------------------------------------------------------------
// Query strings and form bodies
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config())]

    #[test]
    fn form_decoding_never_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let raw = RawParams::from_form(&bytes);
        for name in raw.names().map(str::to_owned).collect::<Vec<_>>() {
            let _ = raw.scalar(&name);
            let _ = raw.list(&name);
        }
    }

    #[test]
    fn form_decoding_never_panics_on_bracket_soup(s in "([a-z]{0,2}|\\[|\\]|=|&|%5B|%5D|%FF|[0-9]){0,60}") {
        let raw = RawParams::from_form(s.as_bytes());
        for name in raw.names().map(str::to_owned).collect::<Vec<_>>() {
            let _ = raw.scalar(&name);
            let _ = raw.list(&name);
        }
    }

    #[test]
    fn encoded_pairs_decode_to_their_values_and_the_last_scalar_wins(pairs in prop::collection::vec((param_name(), ".{0,12}"), 1..12)) {
        let query: Vec<String> = pairs.iter().map(|(k, v)| format!("{}={}", enc(k), enc(v))).collect();
        let raw = RawParams::from_form(query.join("&").as_bytes());
        for (name, _) in &pairs {
            let last = pairs.iter().rev().find(|(k, _)| k == name).unwrap();
            prop_assert_eq!(raw.scalar(name).unwrap().unwrap(), &json!(last.1));
            // As a list, every occurrence's comma-separated items, in order.
            let items: Vec<Value> = pairs
                .iter()
                .filter(|(k, _)| k == name)
                .flat_map(|(_, v)| v.split(',').map(str::trim).filter(|i| !i.is_empty()).map(|i| json!(i)).collect::<Vec<_>>())
                .collect();
            prop_assert_eq!(raw.list(name).unwrap().unwrap(), items);
        }
    }

    #[test]
    fn plus_is_a_space_and_a_key_without_equals_is_empty(v in "[a-z ]{0,10}") {
        let raw = RawParams::from_form(format!("a={}&flag", v.replace(' ', "+")).as_bytes());
        prop_assert_eq!(raw.scalar("a").unwrap().unwrap(), &json!(v));
        prop_assert_eq!(raw.scalar("flag").unwrap().unwrap(), &json!(""));
    }

    #[test]
    fn every_list_spelling_gives_back_the_items_in_order(
        spellings in prop::collection::vec((prop::collection::vec("[a-z0-9]{1,5}", 1..4), 0u8..4), 1..5),
    ) {
        // 0: `k=a,b`  1: `k[]=a&k[]=b`  2: `k[0]=a&k[1]=b` (sent in reverse order)  3: `k=a&k=b`
        let mut parts = Vec::new();
        let mut expected = Vec::new();
        for (items, how) in &spellings {
            expected.extend(items.iter().map(|i| json!(i)));
            match how {
                0 => parts.push(format!("k={}", enc(&items.join(", ")))),
                1 => parts.extend(items.iter().map(|i| format!("k%5B%5D={i}"))),
                2 => parts.extend(items.iter().enumerate().rev().map(|(n, i)| format!("k[{n}]={i}"))),
                _ => parts.extend(items.iter().map(|i| format!("k={i}"))),
            }
            // A separator so that consecutive bracketed spellings do not merge into one array.
            parts.push("k=".to_owned());
        }
        let raw = RawParams::from_form(parts.join("&").as_bytes());
        prop_assert_eq!(raw.list("k").unwrap().unwrap(), expected);
    }

    #[test]
    fn bracketed_keys_build_the_nested_object(path in prop::collection::vec("[a-z]{1,4}", 1..=8), v in ".{0,10}") {
        let key = format!("o{}", path.iter().map(|p| format!("[{p}]")).collect::<String>());
        let raw = RawParams::from_form(format!("{}={}", enc(&key), enc(&v)).as_bytes());
        let mut expected = json!(v);
        for step in path.iter().rev() {
            let mut m = Map::new();
            m.insert(step.clone(), expected);
            expected = Value::Object(m);
        }
        prop_assert_eq!(raw.scalar("o").unwrap().unwrap(), &expected);
    }

    #[test]
    fn brackets_deeper_than_8_levels_are_refused(depth in 1usize..20) {
        let key = format!("o{}", "[a]".repeat(depth));
        let raw = RawParams::from_form(format!("{key}=1").as_bytes());
        let got = raw.scalar("o").unwrap();
        if depth <= 8 {
            prop_assert!(got.is_ok());
        } else {
            prop_assert_eq!(got.unwrap_err().code, SubCode::InvalidFormat);
        }
    }

    #[test]
    fn invalid_utf8_after_decoding_is_refused_with_invalid_characters(prefix in "[a-z]{0,4}", bad in prop::sample::select(vec!["%FF", "%C3", "%C3%28", "%ED%A0%80", "%F8%88%80%80%80"])) {
        let raw = RawParams::from_form(format!("v={prefix}{bad}&ok=1").as_bytes());
        prop_assert_eq!(raw.scalar("v").unwrap().unwrap_err().code, SubCode::InvalidCharacters);
        prop_assert_eq!(raw.scalar("ok").unwrap().unwrap(), &json!("1"));
    }

    #[test]
    fn lists_longer_than_1000_items_are_refused(n in 990usize..1010) {
        let value = vec!["1"; n].join(",");
        let raw = RawParams::from_form(format!("ids={value}").as_bytes());
        let got = raw.list("ids").unwrap();
        if n <= MAX_LIST_ITEMS {
            prop_assert_eq!(got.unwrap().len(), n);
        } else {
            prop_assert_eq!(got.unwrap_err().code, SubCode::TooManyItems);
        }
    }

    #[test]
    fn id_list_parameters_read_positive_ids_in_any_spelling(ids in prop::collection::vec(1u64..=i64::MAX as u64, 1..10), brackets in any::<bool>()) {
        let specs = [ParamSpec::query("include", ParamKind::IdList)];
        let query = if brackets {
            ids.iter().map(|i| format!("include[]={i}")).collect::<Vec<_>>().join("&")
        } else {
            format!("include={}", ids.iter().map(u64::to_string).collect::<Vec<_>>().join(","))
        };
        let p = params::validate(&specs, &RawParams::from_form(query.as_bytes())).unwrap();
        prop_assert!(p.invalid.is_empty());
        prop_assert_eq!(p.ids("include"), Some(ids));
    }

    #[test]
    fn parameter_validation_never_panics_whatever_the_query(s in "([a-z]{1,3}(\\[[a-z0-9]{0,2}\\]){0,2}=([0-9a-z,.+-]|%[0-9A-F]{2}){0,8}&){0,8}") {
        let raw = RawParams::from_form(s.as_bytes());
        let _ = params::validate(&all_kinds_for(&raw), &raw);
    }

    #[test]
    fn parameter_validation_never_panics_whatever_the_json_body(v in prop::collection::vec(any_json(), 1..4)) {
        let mut body = Map::new();
        for (i, value) in v.into_iter().enumerate() {
            body.insert(format!("p{i}"), value);
        }
        let raw = RawParams::from_json_object(body);
        let _ = params::validate(&all_kinds_for(&raw), &raw);
    }
}

/// One spec of every [`ParamKind`] for each name the request has (names cycle through kinds),
/// so that arbitrary values meet every validator.
fn all_kinds_for(raw: &RawParams) -> Vec<ParamSpec> {
    const KINDS: [ParamKind; 19] = [
        ParamKind::String,
        ParamKind::NonEmptyString,
        ParamKind::Description { non_empty: true },
        ParamKind::Enum(&["a", "b"]),
        ParamKind::EnumCaseless(&["asc", "desc"]),
        ParamKind::Integer {
            minimum: Some(1),
            maximum: None,
        },
        ParamKind::Boolean,
        ParamKind::Flag,
        ParamKind::FilterFlag,
        ParamKind::Url,
        ParamKind::DateTime,
        ParamKind::Coordinate { limit: 90.0 },
        ParamKind::Number {
            minimum: 0.0,
            maximum: Some(1000.0),
            exclusive_minimum: true,
        },
        ParamKind::IdList,
        ParamKind::RefList { allow_empty: true },
        ParamKind::RefList { allow_empty: false },
        ParamKind::Raw("{\"type\": \"string\"}"),
        ParamKind::StatusFilter,
        ParamKind::Image,
    ];
    // `ParamSpec::query` wants a `'static` name; leaking a few short names per case is fine in
    // a test process.
    raw.names()
        .enumerate()
        .flat_map(|(i, name)| {
            let name: &'static str = Box::leak(name.to_owned().into_boxed_str());
            let offset = i * 7;
            (0..KINDS.len()).map(move |k| ParamSpec::query(name, KINDS[(k + offset) % KINDS.len()]))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Bodies
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config())]

    #[test]
    fn json_decoding_never_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        if let Err(e) = parse_json_body(&bytes) {
            prop_assert!([1, 4, 5].contains(&e.json_error_code));
        }
    }

    #[test]
    fn json_decoding_never_panics_on_bracket_soup(s in "[\\[\\]{}\",:a0 \\\\]{0,300}") {
        if let Err(e) = parse_json_body(s.as_bytes()) {
            prop_assert!([1, 4].contains(&e.json_error_code));
        }
    }

    #[test]
    fn json_objects_read_back_member_for_member(members in prop::collection::vec(("[a-z]{1,6}", any_json()), 0..6), bom in any::<bool>()) {
        let object: Map<String, Value> = members.into_iter().collect();
        let mut bytes = if bom { b"\xEF\xBB\xBF".to_vec() } else { Vec::new() };
        bytes.extend(serde_json::to_vec(&Value::Object(object.clone())).unwrap());
        prop_assert_eq!(parse_json_body(&bytes).unwrap(), object);
    }

    #[test]
    fn a_top_level_that_is_not_an_object_is_a_syntax_error(v in any_json()) {
        prop_assume!(!v.is_object());
        let e = parse_json_body(&serde_json::to_vec(&v).unwrap()).unwrap_err();
        prop_assert_eq!(e.json_error_code, 4);
    }

    #[test]
    fn json_nesting_is_accepted_to_64_levels_and_refused_beyond(depth in 0usize..200) {
        let got = parse_json_body(nested_body(depth).as_bytes());
        if depth < 64 {
            prop_assert!(got.is_ok(), "{} levels", depth + 1);
        } else {
            prop_assert_eq!(got.unwrap_err().json_error_code, 1);
        }
        // Objects nest like arrays.
        let objects = format!("{}1{}", "{\"a\":".repeat(depth + 1), "}".repeat(depth + 1));
        let got = parse_json_body(objects.as_bytes());
        prop_assert_eq!(got.is_ok(), depth < 64);
    }

    #[test]
    fn json_that_is_not_utf8_is_an_encoding_error(prefix in "[a-z]{0,5}", bad in prop::sample::select(vec![&b"\xFF"[..], b"\xC3", b"\xED\xA0\x80", b"\xC0\xAF"])) {
        let mut bytes = format!("{{\"{prefix}").into_bytes();
        bytes.extend_from_slice(bad);
        bytes.extend_from_slice(b"\":1}");
        prop_assert_eq!(parse_json_body(&bytes).unwrap_err().json_error_code, 5);
    }

    #[test]
    fn body_decoding_never_panics_whatever_the_media_type(ct in "[a-zA-Z/+;= -]{0,40}", bytes in prop::collection::vec(any::<u8>(), 0..100)) {
        let mut h = HeaderMap::new();
        if let Ok(v) = HeaderValue::from_str(&ct) {
            h.insert(header::CONTENT_TYPE, v);
        }
        if let Err(e) = body::parameters(&h, &bytes) {
            prop_assert!(["rest_unsupported_media_type", "rest_invalid_json"].contains(&e.code), "{}", e.code);
            prop_assert!(e.status.is_client_error());
        }
    }

    #[test]
    fn form_and_json_bodies_carry_the_same_strings(pairs in prop::collection::vec((param_name(), "[^\\x00]{0,10}"), 1..6)) {
        let form: Vec<String> = pairs.iter().map(|(k, v)| format!("{}={}", enc(k), enc(v))).collect();
        let from_form = body::parameters(&form_headers(), form.join("&").as_bytes()).unwrap();
        let object: Map<String, Value> = pairs.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        let from_json = body::parameters(&json_headers(), &serde_json::to_vec(&object).unwrap()).unwrap();
        for (name, _) in &pairs {
            prop_assert_eq!(from_form.scalar(name).unwrap().unwrap(), from_json.scalar(name).unwrap().unwrap());
        }
    }

    #[test]
    fn bodies_are_read_whole_up_to_1_mib_in_any_chunking(sizes in prop::collection::vec(0usize..300_000, 0..8)) {
        let total: usize = sizes.iter().sum();
        let chunks: Vec<Result<bytes::Bytes, warp::Error>> = sizes
            .iter()
            .enumerate()
            .map(|(i, n)| Ok(bytes::Bytes::from(vec![b'a' + (i % 26) as u8; *n])))
            .collect();
        let expected: Vec<u8> = sizes.iter().enumerate().flat_map(|(i, n)| vec![b'a' + (i % 26) as u8; *n]).collect();
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let got = rt.block_on(body::read_limited(&HeaderMap::new(), futures_util::stream::iter(chunks)));
        if total <= 1_048_576 {
            prop_assert_eq!(&got.unwrap()[..], &expected[..]);
        } else {
            let e = got.unwrap_err();
            prop_assert_eq!(e.status.as_u16(), 413);
            prop_assert_eq!(e.code, "rest_payload_too_large");
        }
    }
}

/// 100 000 opening brackets (the hostile-request corpus's deep body) are refused as too deep
/// without exhausting the stack, in either bracket kind.
#[test]
fn one_hundred_thousand_open_brackets_are_too_deep_not_a_crash() {
    for open in ["[", "{\"a\":"] {
        let body = format!("{{\"x\":{}", open.repeat(100_000));
        let e = parse_json_body(body.as_bytes()).unwrap_err();
        assert_eq!(e.json_error_code, 1, "{open}");
        let e = body::parameters(&json_headers(), body.as_bytes()).unwrap_err();
        assert_eq!(e.code, "rest_invalid_json");
    }
}
