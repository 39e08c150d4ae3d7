//! A corpus of hostile requests against the real server over HTTP: invalid UTF-8, numbers beyond
//! every range, oversized and deeply nested bodies, header floods, path traversal, script tags,
//! NUL bytes, wrong JSON types, repeated parameters and method-override abuse.
//!
//! Every answer must be the documented status and code (docs/api.md, "Requests", "Values",
//! "Errors", "Limits"), never a 5xx; every refused write must leave the store as it was, which
//! is checked through the list totals (`X-Cal-Total`) and by reading records back. Requests
//! that reqwest cannot make (bytes that are not valid in a request line, header floods,
//! conflicting framing) go over raw TCP.
//!
//! All tests share one server. Tests that are meant to write do so in `es` or `pt-br` only, so
//! that the `en` totals each test compares before and after stay its own.

mod common;

use common::*;
use serde_json::{json, Value};
use std::sync::OnceLock;

fn server() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(|| Server::start_with_users(&STANDARD_USERS).into_static())
}

/// One record of each kind, in `es`, for refused updates and deletes to aim at.
struct Fixture {
    event: u64,
    venue: u64,
    organizer: u64,
    category: u64,
    tag: u64,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let create = |path: &str, body: Value| -> u64 {
            let r = server()
                .req("POST", &format!("/es{NS}/{path}"))
                .user(&ADMIN)
                .json_body(&body)
                .send();
            assert_eq!(r.status, 201, "fixture {path}: {}", r.describe());
            r.json()["id"].as_u64().unwrap()
        };
        Fixture {
            event: create(
                "events",
                json!({"title": "Fixture night", "start_date": "2030-05-01 20:00:00", "end_date": "2030-05-01 23:00:00"}),
            ),
            venue: create("venues", json!({"venue": "Fixture hall"})),
            organizer: create("organizers", json!({"organizer": "Fixture club"})),
            category: create("categories", json!({"name": "Fixture category"})),
            tag: create("tags", json!({"name": "Fixture tag"})),
        }
    })
}

fn admin_auth() -> String {
    basic(ADMIN.name, ADMIN.password)
}

/// The `en` list totals of the five kinds as the administrator sees them, every status and
/// every date included: what a refused write must leave unchanged.
fn en_totals() -> Vec<(&'static str, String)> {
    const ALL: &str = "status=publish,future,draft,pending,private,trash";
    [
        (
            "events",
            format!("events?per_page=1&start_date=0001-01-01&end_date=9999-12-31&{ALL}"),
        ),
        ("venues", format!("venues?per_page=1&{ALL}")),
        ("organizers", format!("organizers?per_page=1&{ALL}")),
        (
            "categories",
            "categories?per_page=1&hide_empty=false".to_owned(),
        ),
        ("tags", "tags?per_page=1&hide_empty=false".to_owned()),
    ]
    .into_iter()
    .map(|(kind, query)| {
        let r = server().get_as(&format!("{NS}/{query}"), &ADMIN);
        assert_eq!(r.status, 200, "{kind}: {}", r.describe());
        let total = r
            .header("x-cal-total")
            .unwrap_or_else(|| panic!("{kind}: X-Cal-Total; {}", r.describe()))
            .to_owned();
        (kind, total)
    })
    .collect()
}

/// Each fixture record as the administrator reads it (byte for byte).
fn fixture_bodies() -> Vec<Vec<u8>> {
    let f = fixture();
    [
        format!("events/{}", f.event),
        format!("venues/{}", f.venue),
        format!("organizers/{}", f.organizer),
        format!("categories/{}", f.category),
        format!("tags/{}", f.tag),
    ]
    .iter()
    .map(|path| {
        let r = server().get_as(&format!("{NS}/{path}"), &ADMIN);
        assert_eq!(r.status, 200, "{path}: {}", r.describe());
        r.body
    })
    .collect()
}

/// Runs `attack` and asserts that it changed neither the `en` totals nor the fixtures.
fn writes_nothing(what: &str, attack: impl FnOnce()) {
    let totals = en_totals();
    let bodies = fixture_bodies();
    attack();
    assert_eq!(en_totals(), totals, "{what}: the totals changed");
    assert!(
        fixture_bodies() == bodies,
        "{what}: a fixture record changed"
    );
}

/// Never a server error, and the server still answers afterwards without having panicked.
fn assert_survived(r: &Resp, what: &str) {
    assert!(r.status < 500, "{what}: {}", r.describe());
    assert_healthy();
}

fn assert_healthy() {
    let h = server().get("/healthz");
    assert_eq!(h.status, 200, "the server stopped answering");
    let log = server().stderr_text();
    assert!(
        !log.contains("panicked"),
        "the server panicked:\n{}",
        &log[log.find("panicked").unwrap().saturating_sub(200)..]
    );
}

/// The one invalid parameter of a `rest_invalid_param` answer and its sub-code.
fn assert_invalid(r: &Resp, name: &str, sub_code: &str) {
    assert_invalid_params(r, &[(name, sub_code)]);
}

fn post_json(path: &str, user: &TestUser, body: &[u8]) -> Resp {
    server()
        .req("POST", path)
        .user(user)
        .header("Content-Type", "application/json")
        .body(body.to_vec())
        .send()
}

fn post_form(path: &str, user: &TestUser, body: &[u8]) -> Resp {
    server()
        .req("POST", path)
        .user(user)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(body.to_vec())
        .send()
}

/// A valid create body of each kind, as JSON.
fn valid_create(kind: &str) -> Value {
    match kind {
        "events" => {
            json!({"title": "Hostile", "start_date": "2031-01-01 10:00:00", "end_date": "2031-01-01 11:00:00"})
        }
        "venues" => json!({"venue": "Hostile hall"}),
        "organizers" => json!({"organizer": "Hostile club"}),
        _ => json!({"name": "Hostile term"}),
    }
}

const KINDS: [&str; 5] = ["events", "venues", "organizers", "categories", "tags"];

// ---------------------------------------------------------------------------------------------
// Invalid UTF-8
// ---------------------------------------------------------------------------------------------

/// Raw bytes above 0x7F are not allowed in an HTTP/1.1 request target; the HTTP layer refuses
/// such a request line before the application sees it.
#[test]
fn raw_invalid_utf8_in_the_request_line_is_a_400_and_the_server_keeps_serving() {
    let s = server();
    for target in [
        &b"/cal/events/v1/events?search=\xff\xfe"[..],
        b"/cal/events/v1/events/by-slug/\xc3\x28",
        b"/cal/events/v1/\xed\xa0\x80",
    ] {
        let mut req = b"GET ".to_vec();
        req.extend_from_slice(target);
        req.extend_from_slice(b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        let r = s.raw(&req, false);
        assert_eq!(r.status, 400, "{:?}: {}", target, r.describe());
        assert_survived(&r, "raw invalid UTF-8");
    }
}

#[test]
fn percent_encoded_invalid_utf8_in_a_query_value_is_rest_invalid_characters() {
    let s = server();
    for kind in KINDS {
        for bad in ["%FF", "%C3%28", "%ED%A0%80", "ok%C3", "%F8%88%80%80%80"] {
            let r = s.get(&format!("{NS}/{kind}?search={bad}"));
            assert_invalid(&r, "search", "rest_invalid_characters");
        }
        // The name before the brackets is readable, so the bad bracket key is reported on it.
        let r = s.get(&format!("{NS}/{kind}?page[%FF]=1"));
        assert_invalid(&r, "page", "rest_invalid_characters");
        // A name that is not UTF-8 at all names no parameter: it is an unknown one, ignored.
        let r = s.get(&format!("{NS}/{kind}?%FF%FE=1"));
        assert_eq!(r.status, 200, "{kind}: {}", r.describe());
    }
    let r = s.get(&format!("{NS}/events?translation_language=%C3%28"));
    assert_invalid(&r, "translation_language", "rest_invalid_characters");
    assert_healthy();
}

#[test]
fn percent_encoded_invalid_utf8_in_a_path_segment_never_matches_a_route() {
    let s = server();
    for path in [
        "/events/%FF",
        "/events/by-slug/%FF",
        "/venues/by-slug/%C3",
        "/organizers/by-slug/a%ED%A0%80b",
        "/categories/%C3%28",
    ] {
        for method in ["GET", "DELETE", "POST"] {
            let r = s.req(method, &format!("{NS}{path}")).user(&ADMIN).send();
            assert_plain_error(&r, 404, "rest_no_route");
        }
    }
    assert_healthy();
}

#[test]
fn invalid_utf8_in_bodies_is_refused_and_writes_nothing() {
    writes_nothing("invalid UTF-8 bodies", || {
        for kind in KINDS {
            let path = format!("{NS}/{kind}");
            // JSON: a raw byte that is not UTF-8, inside a string.
            let mut json_body = serde_json::to_vec(&valid_create(kind)).unwrap();
            let at = json_body.len() - 1;
            json_body.splice(at..at, b",\"x\":\"\xff\"".iter().copied());
            let r = post_json(&path, &ADMIN, &json_body);
            let v = assert_error(&r, 400, "rest_invalid_json");
            assert_eq!(v["data"]["json_error_code"], 5, "{kind}: {v}");
            // Forms: escaped and raw bytes that are not UTF-8, in the required name field.
            let field = match kind {
                "events" => "title",
                "venues" => "venue",
                "organizers" => "organizer",
                _ => "name",
            };
            let rest = "&start_date=2031-01-01&end_date=2031-01-02";
            for bad in [&b"%FF"[..], b"\xff", b"ok%C3%28"] {
                let mut form = format!("{field}=").into_bytes();
                form.extend_from_slice(bad);
                form.extend_from_slice(rest.as_bytes());
                let r = post_form(&path, &ADMIN, &form);
                assert_invalid(&r, field, "rest_invalid_characters");
            }
        }
    });
    assert_healthy();
}

// ---------------------------------------------------------------------------------------------
// Numbers beyond every range
// ---------------------------------------------------------------------------------------------

#[test]
fn page_and_per_page_beyond_64_bits_below_1_or_not_integers_are_refused() {
    let s = server();
    for kind in KINDS {
        for (query, name, sub) in [
            (
                "per_page=99999999999999999999",
                "per_page",
                "rest_out_of_bounds",
            ),
            ("page=99999999999999999999", "page", "rest_out_of_bounds"),
            ("page=-99999999999999999999", "page", "rest_out_of_bounds"),
            ("page=-1", "page", "rest_out_of_bounds"),
            ("page=0", "page", "rest_out_of_bounds"),
            ("page=-0", "page", "rest_out_of_bounds"),
            ("per_page=0", "per_page", "rest_out_of_bounds"),
            (
                "per_page=-9223372036854775808",
                "per_page",
                "rest_out_of_bounds",
            ),
            ("page=1.5", "page", "rest_invalid_type"),
            ("page=1e999", "page", "rest_out_of_bounds"),
            ("page=0x10", "page", "rest_invalid_type"),
            ("page=", "page", "rest_invalid_type"),
            ("page=%201", "page", "rest_invalid_type"),
            ("page=NaN", "page", "rest_invalid_type"),
        ] {
            let r = s.get(&format!("{NS}/{kind}?{query}"));
            assert_invalid(&r, name, sub);
        }
    }
    assert_healthy();
}

/// A page number anywhere up to 2^63 − 1 is a valid page that holds nothing: 404 for the
/// post-kind lists, an empty 200 for the term lists. (Such a page used to make the index
/// collector overflow or try to allocate terabytes, killing the server.)
#[test]
fn a_page_far_past_the_end_is_an_empty_page_not_a_crash() {
    let s = server();
    fixture();
    for page in [
        "9223372036854775807",
        "4611686018427387904",
        "1000000000",
        "1e9",
    ] {
        for per_page in ["1", "50", "9223372036854775807"] {
            for (kind, code) in [
                ("events", "event-archive-page-not-found"),
                ("venues", "venue-archive-page-not-found"),
                ("organizers", "organizer-archive-page-not-found"),
            ] {
                for extra in ["", "&search=fixture&orderby=relevance"] {
                    let path = format!("/es{NS}/{kind}?page={page}&per_page={per_page}{extra}");
                    let r = s.get(&path);
                    assert_plain_error(&r, 404, code);
                }
            }
            for kind in ["categories", "tags"] {
                let r = s.get(&format!(
                    "/es{NS}/{kind}?page={page}&per_page={per_page}&hide_empty=false"
                ));
                assert_eq!(r.status, 200, "{kind}: {}", r.describe());
                let v = r.json();
                assert_eq!(v[kind], json!([]), "{kind}: {v}");
                assert!(v.get("next_rest_url").is_none(), "{kind}: {v}");
                assert!(v["previous_rest_url"].is_string(), "{kind}: {v}");
            }
        }
    }
    assert_healthy();
}

#[test]
fn per_page_at_the_top_of_the_64_bit_range_is_lowered_to_50() {
    let s = server();
    for kind in KINDS {
        let r = s.get(&format!("{NS}/{kind}?per_page=9223372036854775807"));
        assert_eq!(r.status, 200, "{kind}: {}", r.describe());
        let url = r.json()["rest_url"].as_str().unwrap().to_owned();
        assert!(url.contains("per_page=50"), "{kind}: {url}");
    }
}

#[test]
fn ids_beyond_64_bits_are_unknown_ids_on_every_method() {
    let s = server();
    writes_nothing("IDs beyond 64 bits", || {
        for id in [
            "18446744073709551616",
            "9223372036854775808",
            "99999999999999999999999999999999999999999",
            "0",
            "000000000000000000000000000000000000000001000000",
        ] {
            for method in ["GET", "POST", "PUT", "PATCH", "DELETE"] {
                let r = s
                    .req(method, &format!("{NS}/events/{id}"))
                    .user(&ADMIN)
                    .send();
                assert_plain_error(&r, 404, "rest-event-not-found");
                for kind in ["venues", "organizers", "categories", "tags"] {
                    let r = s
                        .req(method, &format!("{NS}/{kind}/{id}"))
                        .user(&ADMIN)
                        .send();
                    assert_invalid(&r, "id", "rest_invalid_reference");
                }
            }
            // Permission comes before existence for events.
            let r = s.req("DELETE", &format!("{NS}/events/{id}")).send();
            assert_plain_error(&r, 401, "rest_forbidden");
        }
        for path in ["/events/-1", "/events/1.5", "/events/1e3", "/venues/+1"] {
            assert_plain_error(&s.get(&format!("{NS}{path}")), 404, "rest_no_route");
        }
    });
    assert_healthy();
}

#[test]
fn references_beyond_64_bits_in_write_bodies_are_refused_and_write_nothing() {
    writes_nothing("huge references", || {
        let huge = "18446744073709551616";
        for (field, value, sub) in [
            ("author", json!(huge), "rest_out_of_bounds"),
            ("author", json!(1.8446744073709552e19), "rest_out_of_bounds"),
            ("author", json!(-1), "rest_out_of_bounds"),
            ("post_parent", json!(huge), "rest_out_of_bounds"),
            ("translation_of", json!(huge), "rest_out_of_bounds"),
            // Digits are an image ID: too large for any record, so it names none.
            ("image", json!(huge), "rest_invalid_reference"),
        ] {
            let mut body = valid_create("events");
            body[field] = value.clone();
            let r = post_json(
                &format!("{NS}/events"),
                &ADMIN,
                &serde_json::to_vec(&body).unwrap(),
            );
            assert_invalid(&r, field, sub);
        }
        // No sub-code is fixed for linked records; the field is reported.
        for (field, value) in [
            ("venue", json!(huge)),
            ("venue", json!({"id": huge})),
            ("organizer", json!([1, huge])),
        ] {
            let mut body = valid_create("events");
            body[field] = value.clone();
            let r = post_json(
                &format!("{NS}/events"),
                &ADMIN,
                &serde_json::to_vec(&body).unwrap(),
            );
            assert_eq!(r.status, 400, "{field}={value}: {}", r.describe());
            assert!(r.json()["data"]["params"].get(field).is_some(), "{field}");
        }
    });
    assert_healthy();
}

/// A numeric item is a term ID, and an unknown ID is skipped; a run of digits
/// too long for 64 bits is still numeric, so it must not become the name of a new term.
#[test]
fn a_numeric_term_item_beyond_64_bits_is_an_unknown_id_not_a_new_term() {
    let s = server();
    let count = |kind: &str| {
        s.get(&format!("/pt-br{NS}/{kind}?hide_empty=false&per_page=1"))
            .header("x-cal-total")
            .unwrap()
            .to_owned()
    };
    let (categories, tags) = (count("categories"), count("tags"));
    let mut body = valid_create("events");
    body["categories"] = json!(["99999999999999999999999"]);
    body["tags"] = json!("18446744073709551616");
    let r = post_json(
        &format!("/pt-br{NS}/events"),
        &ADMIN,
        &serde_json::to_vec(&body).unwrap(),
    );
    assert_eq!(r.status, 201, "{}", r.describe());
    assert_eq!(r.json()["categories"], json!([]));
    assert_eq!(r.json()["tags"], json!([]));
    assert_eq!(count("categories"), categories);
    assert_eq!(count("tags"), tags);
}

/// Every date-time lies in the years 0001–9999, which the `YYYY-MM-DD HH:MM:SS` form relies on.
/// The all-day end of day or a new zone for stored wall clocks can carry an event's UTC dates
/// past those bounds although every value sent was in range: such writes are refused, naming
/// the date that would leave the range, and change nothing.
#[test]
fn event_dates_whose_utc_values_would_leave_years_1_to_9999_are_refused() {
    let s = server();
    writes_nothing("dates beyond the range", || {
        for (body, names) in [
            (
                json!({"title": "Last day", "start_date": "9999-12-31 01:00", "end_date": "9999-12-31 02:00", "timezone": "UTC-12", "all_day": true}),
                &["end_date"][..],
            ),
            (
                json!({"title": "Last hour", "start_date": "9999-12-31 23:00", "end_date": "9999-12-31 23:30", "timezone": "UTC-1"}),
                &["start_date", "end_date"][..],
            ),
            (
                json!({"title": "First hour", "start_date": "0001-01-01 00:00", "end_date": "0001-01-01 00:30", "timezone": "Asia/Tokyo"}),
                &["start_date", "end_date"][..],
            ),
            (
                json!({"title": "Late news", "start_date": "2031-01-01", "end_date": "2031-01-02", "date": "9999-12-31 23:30", "timezone": "UTC-1"}),
                &["date"][..],
            ),
        ] {
            let r = post_json(
                &format!("{NS}/events"),
                &ADMIN,
                &serde_json::to_vec(&body).unwrap(),
            );
            let expected: Vec<(&str, &str)> =
                names.iter().map(|n| (*n, "rest_invalid_format")).collect();
            assert_invalid_params(&r, &expected);
        }
    });
    // Stored wall clocks re-read in a new zone, and all-day switched on
    // later: refused, and the event stays as it was.
    let r = post_json(
        &format!("/es{NS}/events"),
        &ADMIN,
        br#"{"title":"Edge of time","start_date":"9999-12-31 22:00","end_date":"9999-12-31 23:00"}"#,
    );
    assert_eq!(r.status, 201, "{}", r.describe());
    let id = r.json()["id"].as_u64().unwrap();
    let before = s.get_as(&format!("{NS}/events/{id}"), &ADMIN).body;
    for (body, names) in [
        (
            &br#"{"timezone":"UTC-12"}"#[..],
            &["start_date", "end_date"][..],
        ),
        (
            br#"{"timezone":"America/Los_Angeles"}"#,
            &["start_date", "end_date"][..],
        ),
        (br#"{"timezone":"UTC-2","all_day":true}"#, &["end_date"][..]),
    ] {
        let r = post_json(&format!("{NS}/events/{id}"), &ADMIN, body);
        let expected: Vec<(&str, &str)> =
            names.iter().map(|n| (*n, "rest_invalid_format")).collect();
        assert_invalid_params(&r, &expected);
        assert!(
            s.get_as(&format!("{NS}/events/{id}"), &ADMIN).body == before,
            "a refused update changed the event"
        );
    }
    // Within the range everything is written as four-digit years.
    let r = post_json(
        &format!("{NS}/events/{id}"),
        &ADMIN,
        br#"{"timezone":"UTC+12"}"#,
    );
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(r.json()["utc_start_date"], "9999-12-31 10:00:00");
    assert_healthy();
}

// ---------------------------------------------------------------------------------------------
// Size and depth
// ---------------------------------------------------------------------------------------------

fn chunked(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for piece in body.chunks(65_536) {
        out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        out.extend_from_slice(piece);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

#[test]
fn a_10_mb_body_is_413_and_writes_nothing() {
    let s = server();
    let f = fixture();
    let mut big = valid_create("events");
    big["description"] = json!("x".repeat(10 * 1024 * 1024));
    let big = serde_json::to_vec(&big).unwrap();
    let auth = admin_auth();
    writes_nothing("10 MB bodies", || {
        for path in [
            format!("{NS}/events"),
            format!("{NS}/events/{}", f.event),
            format!("{NS}/venues/{}", f.venue),
        ] {
            // Announced by Content-Length (and sent), then discovered while reading chunks.
            let r = s.raw_req(
                "POST",
                &path,
                &[
                    ("Authorization", &auth),
                    ("Content-Type", "application/json"),
                ],
                &big,
            );
            let v = assert_error(&r, 413, "rest_payload_too_large");
            assert_eq!(v["data"]["max_bytes"], 1_048_576);
            let r = s.raw_req(
                "POST",
                &path,
                &[
                    ("Authorization", &auth),
                    ("Content-Type", "application/json"),
                    ("Transfer-Encoding", "chunked"),
                ],
                &chunked(&big),
            );
            assert_error(&r, 413, "rest_payload_too_large");
        }
    });
    assert_healthy();
}

#[test]
fn deeply_nested_json_is_rest_invalid_json_and_writes_nothing() {
    let path = format!("{NS}/events");
    writes_nothing("deep JSON", || {
        for open in ["[", "{\"a\":"] {
            for depth in [100_000, 1000, 64] {
                // `{"title":` is level 1, so `depth` more brackets make depth + 1 levels.
                let body = format!("{{\"title\":{}", open.repeat(depth));
                let r = post_json(&path, &ADMIN, body.as_bytes());
                let v = assert_error(&r, 400, "rest_invalid_json");
                assert_eq!(v["data"]["json_error_code"], 1, "{open} × {depth}: {v}");
            }
        }
        // 64 levels in all is allowed: the body parses and validation goes on (the required
        // fields are missing).
        let body = format!("{{\"x\":{}{}}}", "[".repeat(63), "]".repeat(63));
        let r = post_json(&path, &ADMIN, body.as_bytes());
        assert_error(&r, 400, "rest_missing_callback_param");
        // Bracket keys nest at most 8 levels.
        let key = format!("title{}", "[a]".repeat(9));
        let form = format!("{key}=x&start_date=2031-01-01&end_date=2031-01-02");
        let r = post_form(&path, &ADMIN, form.as_bytes());
        let v = assert_error(&r, 400, "rest_invalid_param");
        assert!(v["data"]["params"].get("title").is_some(), "{v}");
    });
    // A deep key in the query string of a read, for a known and an unknown name.
    let deep = "[a]".repeat(2000);
    let r = server().get(&format!("{NS}/events?search{deep}=x"));
    let v = assert_error(&r, 400, "rest_invalid_param");
    assert!(v["data"]["params"].get("search").is_some(), "{v}");
    let r = server().get(&format!("{NS}/events?unknown{deep}=x"));
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_healthy();
}

#[test]
fn header_floods_and_conflicting_framing_are_refused_by_the_http_layer() {
    let s = server();
    let request = |extra: &[u8]| {
        let mut req = format!("GET {NS} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n").into_bytes();
        req.extend_from_slice(extra);
        req.extend_from_slice(b"\r\n");
        s.raw(&req, false)
    };
    // A thousand header fields.
    let many: Vec<u8> = (0..1000)
        .flat_map(|i| format!("X-Flood-{i}: v\r\n").into_bytes())
        .collect();
    let r = request(&many);
    assert_eq!(r.status, 431, "{}", r.describe());
    // Refused by the HTTP parser, with the JSON error body all the same.
    assert_eq!(
        r.json()["code"],
        "rest_header_fields_too_large",
        "{}",
        r.describe()
    );
    assert_survived(&r, "1000 headers");
    // One huge header field: within the HTTP layer's buffer it is an ordinary header, beyond
    // it the head is refused; either way no server error.
    for size in [60_000, 200_000, 2_000_000] {
        let mut huge = b"X-Huge: ".to_vec();
        huge.extend(std::iter::repeat_n(b'a', size));
        huge.extend_from_slice(b"\r\n");
        let r = request(&huge);
        assert!(
            r.status == 200 || r.status == 431,
            "{size}: {}",
            r.describe()
        );
        assert_survived(&r, "a huge header");
    }
    // NUL in a header value, and framing that could smuggle a second request.
    for bad in [
        &b"X-Nul: a\x00b\r\n"[..],
        b"Content-Length: 2\r\nContent-Length: 3\r\n",
        b"Content-Length: abc\r\n",
        b"Content-Length: -1\r\n",
    ] {
        let r = request(bad);
        assert_eq!(
            r.status,
            400,
            "{:?}: {}",
            String::from_utf8_lossy(bad),
            r.describe()
        );
        // Refused by the HTTP parser, with the JSON error body all the same.
        assert_eq!(
            r.json()["code"],
            "rest_malformed_request",
            "{}",
            r.describe()
        );
        assert_survived(&r, "bad framing");
    }
    // A header value that is not UTF-8 (obs-text) is allowed by HTTP and simply unknown here.
    let r = request(b"X-Latin: \xe9t\xe9\r\n");
    assert_eq!(r.status, 200, "{}", r.describe());
}

// ---------------------------------------------------------------------------------------------
// Paths
// ---------------------------------------------------------------------------------------------

#[test]
fn dot_segments_and_encoded_slashes_never_leave_their_segment() {
    let s = server();
    for path in [
        "/cal/events/v1/../../../etc/passwd",
        "/cal/events/v1/events/..",
        "/cal/events/v1/events/../doc",
        "/cal/events/v1/events/%2e%2e",
        "/cal/events/v1/events/%2e%2e/doc",
        "/cal/events/v1/events/1%2F2",
        "/cal/events/v1/events/1%2f..%2f2",
        "/cal/events/v1%2F..%2Fdoc",
        "/cal/events/v1/events/by-slug/../../../x",
        "/..%2F..%2Fetc%2Fpasswd",
        "/cal/events/v1/categories/..%2F1",
    ] {
        let r = s.raw_req("GET", path, &[], b"");
        assert_plain_error(&r, 404, "rest_no_route");
    }
    // In the slug position any decoded text is a slug: it is sanitized and names nothing.
    for slug in [
        "..",
        "%2e%2e",
        "%2e%2e%2f%2e%2e",
        "..%2F..%2Fetc%2Fpasswd",
        "a%2Fb",
        "%5C..%5C..%5Cwindows",
        "%00",
    ] {
        for kind in ["events", "venues", "organizers"] {
            let r = s.raw_req("GET", &format!("{NS}/{kind}/by-slug/{slug}"), &[], b"");
            assert_invalid(&r, "slug", "rest_invalid_reference");
        }
    }
    assert_healthy();
}

/// A slug written with dots and slashes is sanitized like any other; the same text sent
/// back as a path slug finds that record, and nothing else.
#[test]
fn a_slug_full_of_dots_and_slashes_is_sanitized_on_write_and_lookup() {
    let s = server();
    let mut body = valid_create("events");
    body["slug"] = json!("../../etc/passwd");
    let r = post_json(
        &format!("/es{NS}/events"),
        &ADMIN,
        &serde_json::to_vec(&body).unwrap(),
    );
    assert_eq!(r.status, 201, "{}", r.describe());
    let slug = r.json()["slug"].as_str().unwrap().to_owned();
    assert!(slug.starts_with("etc-passwd"), "{slug}");
    let id = r.json()["id"].clone();
    if slug == "etc-passwd" {
        let r = s.get(&format!("/es{NS}/events/by-slug/..%2F..%2Fetc%2Fpasswd"));
        assert_eq!(r.status, 200, "{}", r.describe());
        assert_eq!(r.json()["id"], id);
    }
}

// ---------------------------------------------------------------------------------------------
// Script tags and NUL
// ---------------------------------------------------------------------------------------------

const SCRIPT: &str = "<script>alert(1)</script>";
const ONERROR: &str = "<img src=x onerror=\"alert(2)\">";
/// A plain `<`, then markup that is removed, then text that would complete a tag with it: the
/// `<` stays a character (`&lt;`), never the start of a live tag.
const JOINED: &str = "<</script>img src=x onerror=alert(4)>";

/// Administrators and editors (`unfiltered_html`) keep their markup; authors and
/// contributors get `script` elements (with content) and `on…` attributes removed, in every
/// text field of every kind, as stored and as read back.
#[test]
fn script_tags_are_kept_for_unfiltered_html_roles_and_removed_for_the_others() {
    let s = server();
    let cases: [(&str, Value, &[&str]); 4] = [
        (
            "events",
            json!({"title": format!("{SCRIPT}Gig"), "description": format!("{ONERROR}Band{JOINED}"), "excerpt": format!("Short{SCRIPT}"), "start_date": "2031-02-01 20:00:00", "end_date": "2031-02-01 22:00:00"}),
            &["title", "description", "excerpt"],
        ),
        (
            "venues",
            json!({"venue": format!("Hall{SCRIPT}"), "description": format!("{ONERROR}Big")}),
            &["venue", "description"],
        ),
        (
            "organizers",
            json!({"organizer": format!("Club{SCRIPT}"), "excerpt": format!("{SCRIPT}Small")}),
            &["organizer", "excerpt"],
        ),
        (
            "categories",
            json!({"name": "Scripted", "description": format!("{SCRIPT}{ONERROR}Jazz")}),
            &["description"],
        ),
    ];
    for user in [ADMIN, EDITOR, AUTHOR, CONTRIBUTOR] {
        let filtered = matches!(user.role, "author" | "contributor");
        for (kind, body, fields) in &cases {
            if *kind == "categories" && user.role == "contributor" {
                continue; // contributors may not manage categories
            }
            let mut body = body.clone();
            // Names unique per role, so that venue/organizer duplicates and term names do not
            // collide across the loop.
            for name in ["venue", "organizer", "name"] {
                if let Some(Value::String(v)) = body.get(name) {
                    body[name] = json!(format!("{v} {}", user.name));
                }
            }
            let r = post_json(
                &format!("/es{NS}/{kind}"),
                &user,
                &serde_json::to_vec(&body).unwrap(),
            );
            assert_eq!(r.status, 201, "{kind} by {}: {}", user.name, r.describe());
            let id = r.json()["id"].as_u64().unwrap();
            let read = s.get_as(&format!("{NS}/{kind}/{id}"), &user);
            assert_eq!(read.status, 200, "{}", read.describe());
            for v in [r.json(), read.json()] {
                for field in *fields {
                    let text = v[*field]
                        .as_str()
                        .unwrap_or_else(|| panic!("{kind}.{field}: {v}"));
                    let lower = text.to_ascii_lowercase();
                    if filtered {
                        assert!(
                            !lower.contains("<script")
                                && !lower.contains("<img src=x onerror")
                                && !lower.contains("alert(1)")
                                && !lower.contains("alert(2)"),
                            "{kind}.{field} by {}: {text:?}",
                            user.name
                        );
                    } else {
                        assert!(
                            lower.contains("alert("),
                            "{kind}.{field} by {} kept as given: {text:?}",
                            user.name
                        );
                    }
                }
            }
            // The text around the removed markup stays.
            if *kind == "events" {
                assert!(r.json()["title"].as_str().unwrap().contains("Gig"));
            }
        }
    }
    // A script in a search or a filter is just text (no reflection of markup in errors).
    let r = s.get(&format!(
        "{NS}/events?categories=%3Cscript%3Ex%3C%2Fscript%3E"
    ));
    assert_invalid(&r, "categories", "rest_invalid_reference");
    assert_healthy();
}

/// Whether `text` holds markup as a browser would read it: `<` followed by a letter, `!`, `?`
/// or `/` and a letter.
fn holds_markup(text: &str) -> bool {
    text.match_indices('<').any(|(i, _)| {
        let after = &text.as_bytes()[i + 1..];
        match after.first() {
            Some(b'!' | b'?') => true,
            Some(b'/') => after.get(1).is_some_and(u8::is_ascii_alphabetic),
            Some(c) => c.is_ascii_alphabetic(),
            None => false,
        }
    })
}

/// Plain venue and organizer fields and term names are stored with their tags removed, for
/// every caller: removing a tag must not glue a plain `<` to the text after it into a new tag
/// (`<<b>script>` is not `<script>`).
#[test]
fn tag_removal_in_plain_fields_and_term_names_never_leaves_a_tag() {
    let joins = [
        "<<b>script>alert(5)<</b>/script>",
        "<<a>img src=x onerror=alert(6)>",
        "<</<i>i>svg onload=alert(7)>",
        "<<!-- x -->iframe src=javascript:alert(8)>",
        // A tag the text ends inside of goes up to the end of the text.
        "<img src=x onerror=alert(9)",
    ];
    for (n, join) in joins.iter().enumerate() {
        let body = json!({"venue": format!("Joined hall {n}"), "address": join, "city": format!("City {join}"), "phone": join});
        let r = post_json(
            &format!("/es{NS}/venues"),
            &CONTRIBUTOR,
            &serde_json::to_vec(&body).unwrap(),
        );
        assert_eq!(r.status, 201, "{}", r.describe());
        for field in ["address", "city", "phone"] {
            // A field left empty is not shown.
            let text = r.json()[field].as_str().unwrap_or_default().to_owned();
            assert!(!holds_markup(&text), "venue {field} {join:?} -> {text:?}");
        }
        let r = post_json(
            &format!("/es{NS}/categories"),
            &AUTHOR,
            &serde_json::to_vec(&json!({"name": format!("Joined {n} {join}")})).unwrap(),
        );
        assert_eq!(r.status, 201, "{}", r.describe());
        let name = r.json()["name"].as_str().unwrap().to_owned();
        assert!(!holds_markup(&name), "category name {join:?} -> {name:?}");
    }
}

/// Rich fields of authors: a script URL in a list-valued attribute (SVG animation), a refresh
/// to a script URL and a tag left open at the end of the text all go.
#[test]
fn script_urls_in_lists_refreshes_and_unclosed_tags_are_removed_for_authors() {
    let s = server();
    let payloads = [
        "<svg><a><animate attributeName=\"href\" values=\"0;javascript:alert(10)\"/><text>t</text></a></svg>",
        "<animate attributeName=\"href\" values=\"0;javascript:alert(11)\">",
        "<meta http-equiv=\"refresh\" content=\"0;url=javascript:alert(12)\">",
        "<img src=x onerror=alert(13)",
    ];
    for (n, payload) in payloads.iter().enumerate() {
        let body = json!({"title": format!("Gig {n}{payload}"), "description": format!("Band {payload}"),
                          "excerpt": format!("Short {payload}"),
                          "start_date": "2031-03-01 20:00:00", "end_date": "2031-03-01 22:00:00"});
        let r = post_json(
            &format!("/es{NS}/events"),
            &AUTHOR,
            &serde_json::to_vec(&body).unwrap(),
        );
        assert_eq!(r.status, 201, "{}", r.describe());
        let id = r.json()["id"].as_u64().unwrap();
        let read = s.get_as(&format!("{NS}/events/{id}"), &AUTHOR);
        for v in [r.json(), read.json()] {
            for field in ["title", "description", "excerpt"] {
                let text = v[field].as_str().unwrap().to_ascii_lowercase();
                for gone in ["javascript", "alert(", "<animate", "<meta", "<img", "<svg"] {
                    assert!(!text.contains(gone), "{field} of {payload:?}: {text:?}");
                }
            }
        }
    }
}

#[test]
fn nul_bytes_are_refused_wherever_a_string_is_read_and_write_nothing() {
    let s = server();
    for kind in KINDS {
        let r = s.get(&format!("{NS}/{kind}?search=a%00b"));
        assert_invalid(&r, "search", "rest_invalid_characters");
    }
    // (As the administrator: for anonymous callers anything but `publish` is refused first as
    // a forbidden value.)
    let r = s.get_as(&format!("{NS}/events?status=publish%00"), &ADMIN);
    assert_invalid(&r, "status", "rest_invalid_characters");
    let r = s.get(&format!("{NS}/categories?slug=%00"));
    assert_invalid(&r, "slug", "rest_invalid_characters");
    writes_nothing("NUL in bodies", || {
        let events = format!("{NS}/events");
        for (field, value) in [
            ("title", json!("a\u{0}b")),
            ("description", json!("\u{0}")),
            ("website", json!("http://example.org/\u{0}")),
            ("timezone", json!("UTC\u{0}")),
            ("password", json!("p\u{0}")),
            ("cost", json!(["1", "\u{0}"])),
            ("categories", json!(["ok", "a\u{0}b"])),
            ("tags", json!("\u{0}")),
            ("venue", json!({"venue": "v\u{0}"})),
            ("organizer", json!([{"organizer": "\u{0}"}])),
        ] {
            let mut body = valid_create("events");
            body[field] = value.clone();
            let r = post_json(&events, &ADMIN, &serde_json::to_vec(&body).unwrap());
            assert_eq!(r.status, 400, "{field}={value}: {}", r.describe());
            let v = r.json();
            assert_eq!(v["code"], "rest_invalid_param", "{field}: {v}");
            assert!(v["data"]["params"].get(field).is_some(), "{field}: {v}");
        }
        // The same through form bodies, where `%00` decodes to NUL.
        for form in [
            "title=a%00b&start_date=2031-01-01&end_date=2031-01-02",
            "title=t&start_date=2031-01-01&end_date=2031-01-02&tags=a%00b",
            "title=t&start_date=2031-01-01&end_date=2031-01-02&categories[]=%00",
        ] {
            let r = post_form(&events, &ADMIN, form.as_bytes());
            let v = assert_error(&r, 400, "rest_invalid_param");
            let (name, sub) = v["data"]["details"]
                .as_object()
                .unwrap()
                .iter()
                .next()
                .map(|(k, d)| (k.clone(), d["code"].clone()))
                .unwrap();
            assert_eq!(sub, "rest_invalid_characters", "{form}: {name} {v}");
        }
        for (kind, body) in [
            ("venues", json!({"venue": "a\u{0}"})),
            ("organizers", json!({"organizer": "o", "email": "\u{0}"})),
            ("categories", json!({"name": "\u{0}"})),
            ("tags", json!({"name": "t", "slug": "\u{0}"})),
        ] {
            let r = post_json(
                &format!("{NS}/{kind}"),
                &ADMIN,
                &serde_json::to_vec(&body).unwrap(),
            );
            let v = assert_error(&r, 400, "rest_invalid_param");
            let sub = v["data"]["details"]
                .as_object()
                .unwrap()
                .values()
                .next()
                .unwrap()["code"]
                .clone();
            assert_eq!(sub, "rest_invalid_characters", "{kind}: {v}");
        }
    });
    assert_healthy();
}

// ---------------------------------------------------------------------------------------------
// Wrong JSON types
// ---------------------------------------------------------------------------------------------

/// One wrong value per field family, for every write field of every kind: each is refused
/// alone with its field named, and all together with every field named, and none of
/// them writes anything.
#[test]
fn wrong_json_types_for_every_field_family_are_rest_invalid_param_and_write_nothing() {
    let object = json!({"a": {"b": [1]}});
    let string_fields = |names: &[&'static str]| -> Vec<(&'static str, Vec<Value>)> {
        names
            .iter()
            .map(|n| (*n, vec![json!(5), json!(true), json!([]), object.clone()]))
            .collect()
    };
    let integer = vec![
        json!("abc"),
        json!(true),
        json!([[1]]),
        object.clone(),
        json!(1.5),
    ];
    let boolean = vec![json!("yes"), json!(2), json!([]), object.clone(), json!("")];
    let date = vec![
        json!(true),
        json!([]),
        object.clone(),
        json!("not a date"),
        json!(1.5),
    ];
    let mut events = string_fields(&["title", "description", "excerpt", "slug", "password"]);
    events.extend([
        ("status", vec![json!(5), json!("trash"), json!(["publish"])]),
        ("author", integer.clone()),
        ("post_parent", integer.clone()),
        ("translation_of", integer.clone()),
        ("start_date", date.clone()),
        ("end_date", date.clone()),
        ("date", date.clone()),
        ("date_utc", date.clone()),
        ("timezone", vec![json!(5), json!("Mars/Olympus"), json!([])]),
        ("all_day", boolean.clone()),
        ("featured", boolean.clone()),
        ("sticky", boolean.clone()),
        ("ticketed", boolean.clone()),
        ("hide_from_listings", boolean.clone()),
        (
            "image",
            vec![json!(true), object.clone(), json!("foo bar"), json!(1.5)],
        ),
        ("cost", vec![json!(true), object.clone(), json!([[1]])]),
        (
            "website",
            vec![json!(5), json!("javascript:alert(1)"), json!([])],
        ),
        (
            "categories",
            vec![json!(true), json!({"x": 1}), json!([[1]])],
        ),
        ("tags", vec![json!(false), json!([{"a": 1}])]),
        ("venue", vec![json!(true), json!("x"), json!([1, 2])]),
        ("organizer", vec![json!(true), json!({"id": "x"})]),
        (
            "translation_language",
            vec![json!(5), json!("PT-BR"), json!([])],
        ),
    ]);
    let mut venues = string_fields(&[
        "venue",
        "description",
        "address",
        "city",
        "country",
        "zip",
        "phone",
    ]);
    venues.extend([
        ("geo_lat", vec![json!(91), json!("north"), json!(true)]),
        ("geo_lng", vec![json!(-181), json!([]), object.clone()]),
        ("show_map", vec![json!([]), object.clone()]),
        ("website", vec![json!(5), json!("ftp://x")]),
        ("status", vec![json!("trash"), json!(1)]),
        ("author", integer.clone()),
        ("date", date.clone()),
    ]);
    let mut organizers = string_fields(&["organizer", "description", "phone", "email"]);
    organizers.extend([
        ("website", vec![json!(5), json!("mailto:a@b.c")]),
        ("image", vec![json!(true), json!("nope")]),
        ("translation_of", integer.clone()),
    ]);
    let mut categories = string_fields(&["name", "description", "slug"]);
    categories.push(("parent", integer.clone()));
    let tags = string_fields(&["name", "description", "slug"]);

    for (kind, fields) in [
        ("events", &events),
        ("venues", &venues),
        ("organizers", &organizers),
        ("categories", &categories),
        ("tags", &tags),
    ] {
        let path = format!("{NS}/{kind}");
        writes_nothing(kind, || {
            let mut everything = valid_create(kind);
            for (field, values) in fields.iter() {
                for value in values {
                    let mut body = valid_create(kind);
                    body[*field] = value.clone();
                    let r = post_json(&path, &ADMIN, &serde_json::to_vec(&body).unwrap());
                    assert_eq!(r.status, 400, "{kind}.{field}={value}: {}", r.describe());
                    let v = r.json();
                    assert_eq!(
                        v["code"], "rest_invalid_param",
                        "{kind}.{field}={value}: {v}"
                    );
                    let names: Vec<&String> =
                        v["data"]["params"].as_object().unwrap().keys().collect();
                    assert_eq!(names, vec![*field], "{kind}.{field}={value}");
                }
                everything[*field] = values[0].clone();
            }
            // All at once: every field is reported.
            let r = post_json(&path, &ADMIN, &serde_json::to_vec(&everything).unwrap());
            let v = assert_error(&r, 400, "rest_invalid_param");
            let mut got: Vec<String> = v["data"]["params"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            let mut want: Vec<String> = fields.iter().map(|(f, _)| f.to_string()).collect();
            got.sort();
            want.sort();
            assert_eq!(got, want, "{kind}: every wrong field at once");
            // The same wrong values on an update of the fixture.
            let f = fixture();
            let id = match kind {
                "events" => f.event,
                "venues" => f.venue,
                "organizers" => f.organizer,
                "categories" => f.category,
                _ => f.tag,
            };
            let r = post_json(
                &format!("{path}/{id}"),
                &ADMIN,
                &serde_json::to_vec(&everything).unwrap(),
            );
            assert_error(&r, 400, "rest_invalid_param");
        });
    }
    // Query parameters with the wrong shape: a list or object for a scalar.
    for query in [
        "search[]=x",
        "page[a]=1",
        "per_page[]=5",
        "translation_language[]=es",
    ] {
        let r = server().get(&format!("{NS}/events?{query}"));
        let name = query.split('[').next().unwrap();
        assert_invalid(&r, name, "rest_invalid_type");
    }
    // A top level that is not an object.
    for body in [
        "[]",
        "\"title\"",
        "5",
        "null",
        "true",
        "[{\"title\":\"x\"}]",
    ] {
        let r = post_json(&format!("{NS}/events"), &ADMIN, body.as_bytes());
        let v = assert_error(&r, 400, "rest_invalid_json");
        assert_eq!(v["data"]["json_error_code"], 4, "{body}");
    }
    assert_healthy();
}

// ---------------------------------------------------------------------------------------------
// Repeated parameters and media types
// ---------------------------------------------------------------------------------------------

#[test]
fn repeated_scalar_parameters_keep_the_last_and_lists_concatenate() {
    let s = server();
    let r = s.get(&format!("{NS}/events?per_page=5&per_page=abc"));
    assert_invalid(&r, "per_page", "rest_invalid_type");
    let r = s.get(&format!("{NS}/events?per_page=abc&per_page=5"));
    assert_eq!(r.status, 200, "{}", r.describe());
    assert!(r.json()["rest_url"]
        .as_str()
        .unwrap()
        .contains("per_page=5&"));
    // A later bracketed occurrence replaces the scalar: a list where a scalar is expected.
    let r = s.get(&format!("{NS}/events?page=1&page[]=2"));
    assert_invalid(&r, "page", "rest_invalid_type");
    let r = s.get(&format!("{NS}/venues?search=hall&search="));
    assert_invalid(&r, "search", "rest_empty");
    let r = s.get(&format!(
        "{NS}/tags?translation_language=es&translation_language=ES"
    ));
    assert_invalid(&r, "translation_language", "rest_not_in_enum");
    // `status=publish` twice is the list `publish,publish`, which anonymous callers may not ask
    // for.
    let r = s.get(&format!("{NS}/events?status=publish&status=publish"));
    assert_invalid(&r, "status", "rest_forbidden_value");
    // Repetitions of a list parameter concatenate, in every spelling: 1000 items in all are
    // fine, 1001 are too many, however they are spread.
    let many = |n: usize| {
        let hundred = vec!["1"; 100].join(",");
        let mut parts: Vec<String> = (0..n / 100).map(|_| format!("include={hundred}")).collect();
        parts.extend((0..n % 100).map(|_| "include[]=1".to_owned()));
        parts.join("&")
    };
    let r = s.get(&format!("{NS}/events?{}", many(1000)));
    assert_eq!(r.status, 200, "{}", r.describe());
    let r = s.get(&format!("{NS}/events?{}", many(1001)));
    assert_invalid(&r, "include", "rest_too_many_items");
    // Body beats query, also when the body value is the bad one.
    writes_nothing("body over query", || {
        let r = post_json(
            &format!("{NS}/events?title=Fine"),
            &ADMIN,
            br#"{"title":"","start_date":"2031-01-01","end_date":"2031-01-02"}"#,
        );
        assert_invalid(&r, "title", "rest_empty");
    });
}

#[test]
fn unsupported_media_types_and_encodings_are_415_and_write_nothing() {
    let s = server();
    let body = serde_json::to_vec(&valid_create("events")).unwrap();
    writes_nothing("unsupported bodies", || {
        for headers in [
            vec![("Content-Type", "text/plain")],
            vec![("Content-Type", "multipart/form-data; boundary=x")],
            vec![("Content-Type", "application/json; charset=latin1")],
            vec![("Content-Type", "application/jsonx")],
            vec![("Content-Type", "json")],
            vec![],
            vec![
                ("Content-Type", "application/json"),
                ("Content-Encoding", "gzip"),
            ],
            vec![
                ("Content-Type", "application/json"),
                ("Content-Encoding", "br, identity"),
            ],
        ] {
            let mut req = s
                .req("POST", &format!("{NS}/events"))
                .user(&ADMIN)
                .body(body.clone());
            for (k, v) in &headers {
                req = req.header(k, v);
            }
            let r = req.send();
            let v = assert_error(&r, 415, "rest_unsupported_media_type");
            assert_eq!(
                v["data"]["supported"],
                json!(["application/json", "application/x-www-form-urlencoded"]),
                "{headers:?}"
            );
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Method override
// ---------------------------------------------------------------------------------------------

#[test]
fn method_override_cannot_turn_a_read_into_a_write() {
    let s = server();
    let f = fixture();
    writes_nothing("override on reads", || {
        for method in ["GET", "HEAD"] {
            for target in [
                format!("{NS}/events/{}?_method=DELETE", f.event),
                format!("{NS}/venues/{}?_method=POST&venue=Renamed", f.venue),
                format!("{NS}/tags/{}?_method=DELETE", f.tag),
            ] {
                let r = s.req(method, &target).user(&ADMIN).send();
                assert_eq!(r.status, 200, "{method} {target}: {}", r.describe());
                let r = s
                    .req(method, &target.replace("?_method=DELETE", ""))
                    .user(&ADMIN)
                    .header("X-HTTP-Method-Override", "DELETE")
                    .send();
                assert_eq!(
                    r.status,
                    200,
                    "{method} {target} + header: {}",
                    r.describe()
                );
            }
        }
        // On PUT the header is ignored too: PUT is not served by a collection route.
        let r = s
            .req("PUT", &format!("{NS}/events"))
            .user(&ADMIN)
            .header("X-HTTP-Method-Override", "GET")
            .send();
        assert_plain_error(&r, 404, "rest_no_route");
    });
}

#[test]
fn override_values_a_route_does_not_serve_are_404_and_write_nothing() {
    let s = server();
    let f = fixture();
    let long = "X".repeat(5000);
    writes_nothing("bad override values", || {
        for word in [
            "TRACE",
            "CONNECT",
            "",
            "%00",
            "DEL%00ETE",
            "DELETE%20X",
            "PROPFIND",
            &long,
        ] {
            let target = format!("{NS}/events/{}?_method={word}", f.event);
            let r = s.req("POST", &target).user(&ADMIN).send();
            assert_eq!(r.status, 404, "_method={word}: {}", r.describe());
            assert_plain_error(&r, 404, "rest_no_route");
            assert_eq!(
                r.header("allow"),
                Some("GET, DELETE, POST, PUT, PATCH"),
                "the method-mismatch 404 lists the route's methods"
            );
        }
        for word in ["TRACE", "CONNECT", "FOO BAR", &long] {
            let r = s
                .req("POST", &format!("{NS}/events/{}", f.event))
                .user(&ADMIN)
                .header("X-HTTP-Method-Override", word)
                .send();
            assert_plain_error(&r, 404, "rest_no_route");
        }
        // Collections serve no DELETE/PUT/PATCH.
        for word in ["DELETE", "put", "Patch"] {
            let r = s
                .req("POST", &format!("{NS}/events?_method={word}"))
                .user(&ADMIN)
                .json_body(&valid_create("events"))
                .send();
            assert_plain_error(&r, 404, "rest_no_route");
        }
        // An override to GET, HEAD or OPTIONS reads, whatever the body says.
        for (word, status) in [("GET", 200), ("head", 200), ("OPTIONS", 200)] {
            let r = s
                .req("POST", &format!("{NS}/events?_method={word}"))
                .user(&ADMIN)
                .json_body(&valid_create("events"))
                .send();
            assert_eq!(r.status, status, "{word}: {}", r.describe());
        }
        // Anonymous override to DELETE: the permission check refuses it.
        let r = s
            .req("POST", &format!("{NS}/events/{}?_method=DELETE", f.event))
            .send();
        assert_plain_error(&r, 401, "rest_forbidden");
        let r = s
            .req("POST", &format!("{NS}/tags/{}", f.tag))
            .header("X-HTTP-Method-Override", "delete")
            .user(&SUBSCRIBER)
            .send();
        assert_plain_error(&r, 403, "rest_forbidden");
    });
    assert_healthy();
}
