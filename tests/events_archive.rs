//! `GET /events` — the event archive (docs/api.md, "Listing events: `GET /events`"), tested over
//! real HTTP against the binary.
//!
//! Two servers:
//! - server `A` (shared by most tests, which run in parallel). Every test owns one calendar year
//!   in which only it creates events, and keeps its queries inside that year (explicit
//!   `start_date`/`end_date`, or relative bounds within it). Those years are far from "now", so
//!   they are outside the default window and never leak into other lists. The tests about the
//!   default window itself put a unique word in their titles and search for it instead.
//! - server `B` (clean lists): the exact default listing with its pagination and links (`en`), and
//!   the empty archive (`pt-br`).

mod common;

use chrono::{Datelike, Duration as CDuration, NaiveDate, NaiveDateTime, Timelike, Utc};
use common::*;
use serde_json::{json, Value};
use std::sync::OnceLock;

// ---------------------------------------------------------------------------------------------
// Servers
// ---------------------------------------------------------------------------------------------

fn server_a() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(|| Server::start_with_users(&STANDARD_USERS).into_static())
}

fn server_b() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(|| Server::start_with_users(&STANDARD_USERS).into_static())
}

// ---------------------------------------------------------------------------------------------
// Query strings and links
// ---------------------------------------------------------------------------------------------

/// An ordered list of query parameters; `s()` renders it form-encoded.
#[derive(Clone, Default)]
struct Q(Vec<(String, String)>);

fn q() -> Q {
    Q::default()
}

impl Q {
    fn p(mut self, k: &str, v: impl ToString) -> Q {
        self.0.push((k.to_string(), v.to_string()));
        self
    }
    fn s(&self) -> String {
        self.0
            .iter()
            .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(v)))
            .collect::<Vec<_>>()
            .join("&")
    }
}

/// Request query restricting to one calendar year.
fn year(y: i32) -> Q {
    q().p("start_date", format!("{y}-01-01"))
        .p("end_date", format!("{y}-12-31"))
}

/// Expected link query start for a year window: `per_page`, the normalised window.
fn year_link(per_page: u64, y: i32) -> Q {
    q().p("per_page", per_page)
        .p("start_date", format!("{y}-01-01 00:00:00"))
        .p("end_date", format!("{y}-12-31 23:59:59"))
}

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

fn events_path(seg: &str, query: &str) -> String {
    if query.is_empty() {
        format!("{seg}{NS}/events")
    } else {
        format!("{seg}{NS}/events?{query}")
    }
}

fn get_seg(s: &Server, seg: &str, query: &str, u: Option<&TestUser>) -> Resp {
    s.send("GET", &events_path(seg, query), u, None)
}

fn anon(s: &Server, query: &str) -> Resp {
    get_seg(s, "", query, None)
}

fn as_user(s: &Server, query: &str, u: &TestUser) -> Resp {
    get_seg(s, "", query, Some(u))
}

/// Follows an absolute link handed out by the server.
fn follow(s: &Server, url: &str, u: Option<&TestUser>) -> Resp {
    let path = url
        .strip_prefix(&s.public)
        .unwrap_or_else(|| panic!("link {url} does not start with {}", s.public));
    s.send("GET", path, u, None)
}

fn ev(title: &str, start: &str, end: &str) -> Value {
    json!({"title": title, "start_date": start, "end_date": end})
}

fn create(s: &Server, u: &TestUser, body: Value) -> Value {
    s.create(u, &format!("{NS}/events"), &body)
}

fn create_seg(s: &Server, seg: &str, u: &TestUser, body: Value) -> Value {
    s.create(u, &format!("{seg}{NS}/events"), &body)
}

/// Creates the events in parallel (8 workers); results in input order.
fn create_many(s: &Server, u: &TestUser, bodies: Vec<Value>) -> Vec<Value> {
    par_map(&bodies, |b| create(s, u, b.clone()))
}

fn id(v: &Value) -> u64 {
    v["id"]
        .as_u64()
        .unwrap_or_else(|| panic!("no integer id in {v}"))
}

fn ids(v: &Value) -> Vec<u64> {
    v["events"]
        .as_array()
        .unwrap_or_else(|| panic!("no events array in {v}"))
        .iter()
        .map(id)
        .collect()
}

fn item(v: &Value, event_id: u64) -> Value {
    v["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| id(e) == event_id)
        .unwrap_or_else(|| panic!("event {event_id} not listed in {v}"))
        .clone()
}

// ---------------------------------------------------------------------------------------------
// Assertions
// ---------------------------------------------------------------------------------------------

/// A 200 archive answer: JSON, body keys in order, totals in body and headers agree,
/// every item has the list-item keys. Returns the body.
fn ok(r: &Resp) -> Value {
    assert_eq!(r.status, 200, "expected 200; {}", r.describe());
    assert_json_content_type(r);
    let v = r.json();
    let mut want = vec!["events", "rest_url"];
    if v.get("next_rest_url").is_some() {
        want.push("next_rest_url");
    }
    if v.get("previous_rest_url").is_some() {
        want.push("previous_rest_url");
    }
    want.extend(["total", "total_pages"]);
    assert_eq!(keys(&v), want, "archive body keys; {}", r.describe());
    let total = v["total"]
        .as_u64()
        .unwrap_or_else(|| panic!("total integer; {}", r.describe()));
    let pages = v["total_pages"]
        .as_u64()
        .unwrap_or_else(|| panic!("total_pages integer; {}", r.describe()));
    assert_totals(r, &v);
    assert_eq!(total == 0, pages == 0, "total_pages 0 iff total 0");
    for e in v["events"].as_array().expect("events array") {
        assert_eq!(
            keys(e),
            event_keys(false),
            "list item keys (in order, no json_ld) of event {}",
            e["id"]
        );
    }
    v
}

/// 400 naming exactly one parameter with the given sub-code.
fn bad_sub(r: &Resp, name: &str, sub: &str) {
    assert_invalid_params(r, &[(name, sub)]);
}

/// The three links in the body and the `Link` header, for page `page` of a list
/// requested under the language segment `seg` whose effective parameters render as `qs`.
fn assert_links(s: &Server, r: &Resp, v: &Value, seg: &str, page: u64, qs: &str) {
    let base = format!("{}{}{}/events/", s.public, seg, NS);
    let pages = v["total_pages"].as_u64().unwrap();
    let (rest_url, next, prev) = page_urls(&base, qs, page, pages);
    assert_eq!(
        v["rest_url"].as_str(),
        Some(rest_url.as_str()),
        "rest_url; {}",
        r.describe()
    );
    assert_eq!(
        v.get("next_rest_url").and_then(|x| x.as_str()),
        next.as_deref(),
        "next_rest_url; {}",
        r.describe()
    );
    assert_eq!(
        v.get("previous_rest_url").and_then(|x| x.as_str()),
        prev.as_deref(),
        "previous_rest_url; {}",
        r.describe()
    );
    let link = pages_link(
        &format!("{}{}", s.public, seg),
        next.as_deref(),
        prev.as_deref(),
    );
    let links = r.header_all("link");
    assert_eq!(links.len(), 1, "one Link field; {}", r.describe());
    // The list's calendar feed comes last (docs/api.md, "Calendar feeds").
    let (relations, feed) = links[0].rsplit_once(", <").expect("a feed relation");
    assert!(
        feed.ends_with(">; rel=\"alternate\"; type=\"text/calendar\"")
            && feed.starts_with(&format!("{}{}/cal/events/v1/events.ics", s.public, seg)),
        "feed link; {}",
        r.describe()
    );
    assert_eq!(relations, link, "Link header; {}", r.describe());
}

/// 404 `event-archive-page-not-found`, with only the discovery link.
fn page_not_found(s: &Server, r: &Resp, seg: &str) {
    assert_plain_error(r, 404, "event-archive-page-not-found");
    assert_discovery_link(r, &format!("{}{}", s.public, seg));
}

// ---------------------------------------------------------------------------------------------
// Dates
// ---------------------------------------------------------------------------------------------

fn fmt(dt: NaiveDateTime) -> String {
    dt.format("%Y-%m-%d %H:%M:%S").to_string()
}

fn dt(s: &str) -> NaiveDateTime {
    NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").unwrap()
}

/// Unix timestamp of a UTC wall clock.
fn ts(s: &str) -> i64 {
    dt(s).and_utc().timestamp()
}

/// PHP's `+N months`: keeps the day number and lets an impossible day roll over.
fn plus_months(d: NaiveDate, months: i32) -> NaiveDate {
    let total = d.year() * 12 + d.month0() as i32 + months;
    let first =
        NaiveDate::from_ymd_opt(total.div_euclid(12), total.rem_euclid(12) as u32 + 1, 1).unwrap();
    first + CDuration::days(d.day() as i64 - 1)
}

fn today() -> NaiveDate {
    Utc::now().date_naive()
}

/// The default non-strict window for "now": (yesterday 00:00:00, +24 months 23:59:59).
fn default_window() -> (String, String) {
    let t = today();
    (
        format!("{} 00:00:00", t - CDuration::days(1)),
        format!("{} 23:59:59", plus_months(t, 24)),
    )
}

/// Runs `f`, returning its response and the default window if the day did not change meanwhile.
fn windowed(f: impl FnOnce() -> Resp) -> (Resp, Option<(String, String)>) {
    let w1 = default_window();
    let r = f();
    let w2 = default_window();
    (r, (w1 == w2).then_some(w1))
}

// =============================================================================================
// Empty archive, pagination, links (server B: clean lists)
// =============================================================================================

/// An empty archive: 200, total 0, total_pages 0, headers 0, no next/previous.
/// Uses B's pt-br list, in which nothing is ever created.
#[test]
fn empty_archive() {
    let s = server_b();
    let seg = "/pt-br";
    let (r, w) = windowed(|| get_seg(s, seg, "", None));
    let v = ok(&r);
    assert_eq!(v["events"], json!([]));
    assert_eq!(v["total"], 0);
    assert_eq!(v["total_pages"], 0);
    assert_eq!(r.header("x-cal-total"), Some("0"));
    assert_eq!(r.header("x-cal-totalpages"), Some("0"));
    assert_eq!(
        keys(&v),
        vec!["events", "rest_url", "total", "total_pages"],
        "no next/previous on an empty archive"
    );
    assert_eq!(r.header("cache-control"), Some(CC_ANON));
    assert_etag(&r);
    assert_standard_headers(&r);
    // Allow (as in the capture): the methods this caller may use on /events.
    assert_eq!(r.header("allow"), Some("GET"), "anonymous Allow");
    for (u, allow) in [
        (&ADMIN, "GET, POST"),
        (&CONTRIBUTOR, "GET, POST"),
        (&SUBSCRIBER, "GET"),
    ] {
        let r = get_seg(s, seg, "", Some(u));
        ok(&r);
        assert_eq!(r.header("allow"), Some(allow), "Allow for {}", u.name);
    }
    if let Some((start, end)) = w {
        let qs = q()
            .p("per_page", 10)
            .p("start_date", &start)
            .p("end_date", &end)
            .p("status", "publish")
            .s();
        assert_links(s, &r, &v, seg, 1, &qs);
    }

    // Editors: same, with status=any in the links.
    let (r, w) = windowed(|| get_seg(s, seg, "per_page=5", Some(&EDITOR)));
    let v = ok(&r);
    assert_eq!(v["total"], 0);
    assert_eq!(r.header("cache-control"), Some(CC_AUTH));
    if let Some((start, end)) = w {
        let qs = q()
            .p("per_page", 5)
            .p("start_date", &start)
            .p("end_date", &end)
            .p("status", "any")
            .s();
        assert_links(s, &r, &v, seg, 1, &qs);
    }

    // page 2 of an empty list → 404 (page > 1 without events).
    let r = get_seg(s, seg, "page=2", None);
    page_not_found(s, &r, seg);
    // A filter that matches nothing is an ordinary empty page.
    let v = ok(&get_seg(s, seg, "search=nothing", None));
    assert_eq!(v["total"], 0);
}

/// Default page size, order, links with the default window, Link rel next/prev,
/// page past the end, the cap of 50 in links, `status=any` for editors and following the links.
#[test]
fn default_listing_pagination_and_links() {
    let s = server_b();
    // Empty before anything exists.
    let v = ok(&anon(s, ""));
    assert_eq!(v["total"], 0, "server B's en list must start empty");

    let t = today();
    let day = |k: i64| t + CDuration::days(k);
    // 11 published events on days 1..=11, created in a scrambled order so that ID order and
    // start order differ.
    let order = [5i64, 1, 9, 3, 11, 7, 2, 10, 4, 8, 6];
    let mut by_day = std::collections::BTreeMap::new();
    for k in order {
        let e = create(
            s,
            &ADMIN,
            ev(
                &format!("Listing day {k}"),
                &format!("{} 10:00:00", day(k)),
                &format!("{} 12:00:00", day(k)),
            ),
        );
        by_day.insert(k, id(&e));
    }
    let draft = id(&create(
        s,
        &ADMIN,
        merge(
            ev(
                "Listing draft",
                &format!("{} 10:00:00", day(12)),
                &format!("{} 12:00:00", day(12)),
            ),
            json!({"status": "draft"}),
        ),
    ));
    // Outside the default window: started two days ago; ends after the end bound.
    create(
        s,
        &ADMIN,
        ev(
            "Listing old",
            &format!("{} 10:00:00", day(-2)),
            &format!("{} 12:00:00", day(-2)),
        ),
    );
    let far = plus_months(t, 24) + CDuration::days(1);
    create(
        s,
        &ADMIN,
        ev(
            "Listing far",
            &format!("{far} 10:00:00"),
            &format!("{far} 12:00:00"),
        ),
    );
    let all: Vec<u64> = by_day.values().copied().collect();

    // Default page: 10 items, ordered by start.
    let (r, w) = windowed(|| anon(s, ""));
    let v = ok(&r);
    assert_eq!(
        ids(&v),
        all[..10].to_vec(),
        "default page size 10, by start"
    );
    assert_eq!(v["total"], 11);
    assert_eq!(v["total_pages"], 2);
    if let Some((start, end)) = &w {
        let qs = q()
            .p("per_page", 10)
            .p("start_date", start)
            .p("end_date", end)
            .p("status", "publish")
            .s();
        assert_links(s, &r, &v, "", 1, &qs);
    }
    // Following next_rest_url gives page 2.
    let r2 = follow(s, v["next_rest_url"].as_str().unwrap(), None);
    let v2 = ok(&r2);
    assert_eq!(ids(&v2), all[10..].to_vec());
    if let Some((start, end)) = &w {
        let qs = q()
            .p("per_page", 10)
            .p("start_date", start)
            .p("end_date", end)
            .p("status", "publish")
            .s();
        assert_links(s, &r2, &v2, "", 2, &qs);
    }
    // page 3 of 2 → 404.
    page_not_found(s, &anon(s, "page=3"), "");

    // per_page=5: three pages; the links of each.
    for page in 1..=3u64 {
        let (r, w) = windowed(|| anon(s, &format!("per_page=5&page={page}")));
        let v = ok(&r);
        let lo = ((page - 1) * 5) as usize;
        let hi = (lo + 5).min(11);
        assert_eq!(ids(&v), all[lo..hi].to_vec(), "per_page=5 page {page}");
        assert_eq!(v["total"], 11);
        assert_eq!(v["total_pages"], 3);
        if let Some((start, end)) = &w {
            let qs = q()
                .p("per_page", 5)
                .p("start_date", start)
                .p("end_date", end)
                .p("status", "publish")
                .s();
            assert_links(s, &r, &v, "", page, &qs);
        }
        if page == 3 {
            // previous of page 3 carries page=2; following it gives page 2.
            let rp = follow(s, v["previous_rest_url"].as_str().unwrap(), None);
            assert_eq!(ids(&ok(&rp)), all[5..10].to_vec());
        }
        if page == 2 {
            let rp = follow(s, v["previous_rest_url"].as_str().unwrap(), None);
            assert_eq!(ids(&ok(&rp)), all[..5].to_vec());
        }
    }
    page_not_found(s, &anon(s, "per_page=5&page=4"), "");

    // per_page above 50 is lowered to 50 (visible in the links).
    let (r, w) = windowed(|| anon(s, "per_page=100"));
    let v = ok(&r);
    assert_eq!(ids(&v), all);
    assert_eq!(v["total_pages"], 1);
    if let Some((start, end)) = &w {
        let qs = q()
            .p("per_page", 50)
            .p("start_date", start)
            .p("end_date", end)
            .p("status", "publish")
            .s();
        assert_links(s, &r, &v, "", 1, &qs);
    }

    // Administrator without status: the draft too, status=any in the links, and the links work.
    let (r, w) = windowed(|| as_user(s, "", &ADMIN));
    let v = ok(&r);
    let mut with_draft = all.clone();
    with_draft.push(draft);
    assert_eq!(ids(&v), with_draft[..10].to_vec());
    assert_eq!(v["total"], 12);
    assert_eq!(r.header("cache-control"), Some(CC_AUTH));
    if let Some((start, end)) = &w {
        let qs = q()
            .p("per_page", 10)
            .p("start_date", start)
            .p("end_date", end)
            .p("status", "any")
            .s();
        assert_links(s, &r, &v, "", 1, &qs);
    }
    let r2 = follow(s, v["next_rest_url"].as_str().unwrap(), Some(&ADMIN));
    let v2 = ok(&r2);
    assert_eq!(
        ids(&v2),
        with_draft[10..].to_vec(),
        "status=any from the links is accepted"
    );
    // Editor with an explicit status=any.
    let v = ok(&as_user(s, "status=any&per_page=50", &EDITOR));
    assert_eq!(ids(&v), with_draft);
}

// =============================================================================================
// Page size, bad page/per_page (server A)
// =============================================================================================

/// Default 10, `per_page` overrides, values above 50 give 50 items; `3.0` is 3.
#[test]
fn page_size_default_override_and_cap() {
    let s = server_a();
    let y = 2031;
    let start = NaiveDate::from_ymd_opt(y, 1, 1).unwrap();
    let bodies: Vec<Value> = (0..55)
        .map(|i| {
            let d = start + CDuration::days(i * 6);
            ev(
                &format!("Capacity check {i}"),
                &format!("{d} 10:00:00"),
                &format!("{d} 11:00:00"),
            )
        })
        .collect();
    let all: Vec<u64> = create_many(s, &ADMIN, bodies).iter().map(id).collect();
    let yq = year(y);

    let r = anon(s, &yq.s());
    let v = ok(&r);
    assert_eq!(ids(&v), all[..10].to_vec());
    assert_eq!(v["total"], 55);
    assert_eq!(v["total_pages"], 6);
    assert_links(
        s,
        &r,
        &v,
        "",
        1,
        &year_link(10, y).p("status", "publish").s(),
    );

    let r = anon(s, &yq.clone().p("per_page", 20).p("page", 3).s());
    let v = ok(&r);
    assert_eq!(ids(&v), all[40..].to_vec());
    assert_eq!(v["total_pages"], 3);
    assert_links(
        s,
        &r,
        &v,
        "",
        3,
        &year_link(20, y).p("status", "publish").s(),
    );

    for pp in ["100", "51", "50"] {
        let r = anon(s, &yq.clone().p("per_page", pp).s());
        let v = ok(&r);
        assert_eq!(ids(&v), all[..50].to_vec(), "per_page={pp} → 50 items");
        assert_eq!(v["total"], 55);
        assert_eq!(v["total_pages"], 2);
        assert_links(
            s,
            &r,
            &v,
            "",
            1,
            &year_link(50, y).p("status", "publish").s(),
        );
    }
    let r = anon(s, &yq.clone().p("per_page", 100).p("page", 2).s());
    let v = ok(&r);
    assert_eq!(ids(&v), all[50..].to_vec());
    assert_links(
        s,
        &r,
        &v,
        "",
        2,
        &year_link(50, y).p("status", "publish").s(),
    );
    page_not_found(
        s,
        &anon(s, &yq.clone().p("per_page", 50).p("page", 3).s()),
        "",
    );

    // Unknown parameters (names are case-sensitive: `Page` is unknown) are ignored and never
    // copied into the links.
    let r = anon(
        s,
        &yq.clone()
            .p("Page", 3)
            .p("unknown", "x")
            .p("force", "true")
            .s(),
    );
    let v = ok(&r);
    assert_eq!(ids(&v), all[..10].to_vec());
    assert_links(
        s,
        &r,
        &v,
        "",
        1,
        &year_link(10, y).p("status", "publish").s(),
    );

    // "3.0" is a positive integer; the links carry the integer.
    let r = anon(s, &yq.clone().p("per_page", "3.0").p("page", "2.0").s());
    let v = ok(&r);
    assert_eq!(ids(&v), all[3..6].to_vec());
    assert_links(
        s,
        &r,
        &v,
        "",
        2,
        &year_link(3, y).p("status", "publish").s(),
    );
}

/// Bad page/per_page (`foo`, `-1`, `0`, `foo bar`) → 400 `rest_invalid_param`.
#[test]
fn bad_page_and_per_page() {
    let s = server_a();
    for name in ["page", "per_page"] {
        for (val, sub) in [
            ("foo", Some("rest_invalid_type")),
            ("foo bar", Some("rest_invalid_type")),
            ("1.5", Some("rest_invalid_type")),
            ("-1", Some("rest_out_of_bounds")),
            ("0", Some("rest_out_of_bounds")),
            ("", None),
        ] {
            let r = anon(s, &q().p(name, val).s());
            match sub {
                Some(sub) => bad_sub(&r, name, sub),
                None => {
                    assert_invalid_param_names(&r, &[name]);
                }
            }
            // Validation precedes authorization/visibility: the same for an editor.
            let r = as_user(s, &q().p(name, val).s(), &EDITOR);
            assert_invalid_param_names(&r, &[name]);
        }
    }
    // Both at once are reported together.
    assert_invalid_param_names(&anon(s, "page=foo&per_page=0"), &["page", "per_page"]);
    // A list for a scalar.
    bad_sub(&anon(s, "page[]=1"), "page", "rest_invalid_type");
}

// =============================================================================================
// Dates
// =============================================================================================

/// `"before my birthday"` and other non-grammar values → 400 on every date bound.
#[test]
fn unparseable_dates_rejected() {
    let s = server_a();
    let params = [
        "start_date",
        "end_date",
        "starts_before",
        "starts_after",
        "ends_before",
        "ends_after",
    ];
    for p in params {
        for val in [
            "before my birthday",
            "14.06.2025",
            "14-06-2025",
            "January 5 2018",
            "first day of next month",
            "second monday",
            "2018-13-01",
            "2018-01-01 25:00",
        ] {
            bad_sub(&anon(s, &q().p(p, val).s()), p, "rest_invalid_format");
        }
    }
    // All six at once: all reported together.
    let mut all = q();
    for p in params {
        all = all.p(p, "before my birthday");
    }
    assert_invalid_param_names(&anon(s, &all.s()), &params);
}

/// Empty values are 400, not "no filter".
#[test]
fn empty_values_rejected() {
    let s = server_a();
    for name in [
        "search",
        "categories",
        "tags",
        "venue",
        "organizer",
        "include",
        "strict_dates",
    ] {
        bad_sub(&anon(s, &format!("{name}=")), name, "rest_empty");
        // A key without `=` is the empty string too.
        assert_invalid_param_names(&anon(s, name), &[name]);
    }
    for name in [
        "page",
        "per_page",
        "start_date",
        "end_date",
        "starts_before",
        "starts_after",
        "ends_before",
        "ends_after",
        "featured",
        "ticketed",
        "geoloc",
        "post_parent",
        "status",
        "translation_language",
        "orderby",
    ] {
        assert_invalid_param_names(&anon(s, &format!("{name}=")), &[name]);
    }
    // Several invalid parameters are reported together.
    assert_invalid_param_names(
        &anon(
            s,
            "page=foo&per_page=0&start_date=before+my+birthday&search=&categories=",
        ),
        &["page", "per_page", "start_date", "search", "categories"],
    );
}

/// Containment, whole days vs strict, timestamps as bounds (narrowing to 3 of 10),
/// `strict_dates` spellings, and a given start_date without end_date still getting the default
/// end bound.
#[test]
fn window_containment_whole_days_and_timestamps() {
    let s = server_a();
    let y = 2032;
    let mut bodies = Vec::new();
    for d in 1..=10 {
        bodies.push(ev(
            &format!("Windowday {d}"),
            &format!("{y}-03-{d:02} 10:00:00"),
            &format!("{y}-03-{d:02} 11:00:00"),
        ));
    }
    // An afternoon event on day 4.
    bodies.push(ev(
        "Windowday afternoon",
        &format!("{y}-03-04 16:00:00"),
        &format!("{y}-03-04 17:00:00"),
    ));
    // Containment around 2032-04-06.
    bodies.push(ev(
        "Overnight before",
        &format!("{y}-04-05 22:00:00"),
        &format!("{y}-04-06 02:00:00"),
    ));
    bodies.push(ev(
        "Inside the day",
        &format!("{y}-04-06 10:00:00"),
        &format!("{y}-04-06 12:00:00"),
    ));
    bodies.push(ev(
        "Overnight after",
        &format!("{y}-04-06 23:00:00"),
        &format!("{y}-04-07 01:00:00"),
    ));
    let c = create_many(s, &ADMIN, bodies);
    let d: Vec<u64> = c[..10].iter().map(id).collect(); // d[0] = day 1
    let aft = id(&c[10]);
    let (o1, o2, o3) = (id(&c[11]), id(&c[12]), id(&c[13]));

    // The whole of March, by start: day 4 10:00 before day 4 16:00.
    let mut march_sorted = d[..4].to_vec();
    march_sorted.push(aft);
    march_sorted.extend_from_slice(&d[4..]);
    let v = ok(&anon(
        s,
        &q().p("start_date", format!("{y}-03-01"))
            .p("end_date", format!("{y}-03-31"))
            .p("per_page", 20)
            .s(),
    ));
    assert_eq!(ids(&v), march_sorted);

    // Timestamps, whole days (not strict): 3 of the 10 day events (+ the afternoon one).
    let t1 = ts(&format!("{y}-03-03 15:00:00"));
    let t2 = ts(&format!("{y}-03-05 08:00:00"));
    let r = anon(s, &q().p("start_date", t1).p("end_date", t2).s());
    let v = ok(&r);
    assert_eq!(ids(&v), vec![d[2], d[3], aft, d[4]], "whole-day widening");
    let qs = q()
        .p("per_page", 10)
        .p("start_date", format!("{y}-03-03 00:00:00"))
        .p("end_date", format!("{y}-03-05 23:59:59"))
        .p("status", "publish")
        .s();
    assert_links(s, &r, &v, "", 1, &qs);

    // Same, strict: exact to the second → only day 4 (10:00–11:00) and the afternoon event.
    for spelling in ["true", "1", "TRUE", " on ", "yes", "Yes"] {
        let r = anon(
            s,
            &q().p("start_date", t1)
                .p("end_date", t2)
                .p("strict_dates", spelling)
                .s(),
        );
        let v = ok(&r);
        assert_eq!(ids(&v), vec![d[3], aft], "strict_dates={spelling:?}");
        let qs = q()
            .p("per_page", 10)
            .p("start_date", format!("{y}-03-03 15:00:00"))
            .p("end_date", format!("{y}-03-05 08:00:00"))
            .p("status", "publish")
            .p("strict_dates", "true")
            .s();
        assert_links(s, &r, &v, "", 1, &qs);
    }
    // Any other non-empty string means not strict (and is not written into the links).
    for spelling in ["false", "0", "no", "y", "enable", "off", "strict"] {
        let r = anon(
            s,
            &q().p("start_date", t1)
                .p("end_date", t2)
                .p("strict_dates", spelling)
                .s(),
        );
        let v = ok(&r);
        assert_eq!(
            ids(&v),
            vec![d[2], d[3], aft, d[4]],
            "strict_dates={spelling:?} is not strict"
        );
        assert_links(s, &r, &v, "", 1, &qs_non_strict(y));
    }

    // 15:00–18:00 on one day.
    let sd = format!("{y}-03-04 15:00:00");
    let ed = format!("{y}-03-04 18:00:00");
    let v = ok(&anon(s, &q().p("start_date", &sd).p("end_date", &ed).s()));
    assert_eq!(ids(&v), vec![d[3], aft], "not strict: the whole day");
    let v = ok(&anon(
        s,
        &q().p("start_date", &sd)
            .p("end_date", &ed)
            .p("strict_dates", "1")
            .s(),
    ));
    assert_eq!(ids(&v), vec![aft], "strict: only events inside 15:00–18:00");

    // Contained, not overlapping.
    let v = ok(&anon(
        s,
        &q().p("start_date", format!("{y}-04-06"))
            .p("end_date", format!("{y}-04-06"))
            .s(),
    ));
    assert_eq!(ids(&v), vec![o2], "only the event contained in the day");
    // Overlap via relative bounds.
    let v = ok(&anon(
        s,
        &q().p("ends_after", format!("{y}-04-05"))
            .p("starts_before", format!("{y}-04-06"))
            .s(),
    ));
    assert_eq!(ids(&v), vec![o1, o2, o3], "overlapping 2032-04-06");

    // start_date in the far future without end_date → the default end bound applies →
    // nothing.
    let (r, w) = windowed(|| anon(s, &q().p("start_date", format!("{y}-03-01")).s()));
    let v = ok(&r);
    assert_eq!(v["total"], 0);
    if let Some((_, end)) = w {
        let qs = q()
            .p("per_page", 10)
            .p("start_date", format!("{y}-03-01 00:00:00"))
            .p("end_date", end)
            .p("status", "publish")
            .s();
        assert_links(s, &r, &v, "", 1, &qs);
    }
    // ...and end_date alone keeps the default start bound.
    let (r, w) = windowed(|| {
        anon(
            s,
            &q().p("end_date", format!("{y}-03-02"))
                .p("search", "windowday")
                .s(),
        )
    });
    let v = ok(&r);
    assert_eq!(ids(&v), vec![d[0], d[1]]);
    if let Some((start, _)) = w {
        let qs = q()
            .p("per_page", 10)
            .p("start_date", start)
            .p("end_date", format!("{y}-03-02 23:59:59"))
            .p("search", "windowday")
            .p("status", "publish")
            .s();
        assert_links(s, &r, &v, "", 1, &qs);
    }
}

fn qs_non_strict(y: i32) -> String {
    q().p("per_page", 10)
        .p("start_date", format!("{y}-03-03 00:00:00"))
        .p("end_date", format!("{y}-03-05 23:59:59"))
        .p("status", "publish")
        .s()
}

/// The date-time grammar used as archive bounds (reference zone UTC) and its normalisation
/// in the links.
#[test]
fn date_grammar_as_bounds() {
    let s = server_a();
    let y = 2046;
    let c = create_many(
        s,
        &ADMIN,
        vec![
            ev(
                "Grammar one",
                &format!("{y}-03-03 10:00:00"),
                &format!("{y}-03-03 11:00:00"),
            ),
            ev(
                "Grammar two",
                &format!("{y}-03-04 10:00:00"),
                &format!("{y}-03-04 11:00:00"),
            ),
        ],
    );
    let (e1, e2) = (id(&c[0]), id(&c[1]));
    let link = |start: &str, end: &str| {
        q().p("per_page", 10)
            .p("start_date", start)
            .p("end_date", end)
            .p("status", "publish")
            .s()
    };
    let cases: Vec<(String, String, Vec<u64>, String, String)> = vec![
        // month/day/year
        (
            format!("03/03/{y}"),
            format!("03/03/{y}"),
            vec![e1],
            format!("{y}-03-03 00:00:00"),
            format!("{y}-03-03 23:59:59"),
        ),
        (
            format!("{y}/03/03"),
            format!("{y}/03/04"),
            vec![e1, e2],
            format!("{y}-03-03 00:00:00"),
            format!("{y}-03-04 23:59:59"),
        ),
        // An explicit zone is converted to UTC first: 01:00+05:00 is the previous day 20:00 UTC.
        (
            format!("{y}-03-03T01:00:00+05:00"),
            format!("{y}-03-03 4pm"),
            vec![e1],
            format!("{y}-03-02 00:00:00"),
            format!("{y}-03-03 23:59:59"),
        ),
        (
            format!("{y}-03-03T23:30:00Z"),
            format!("{y}-03-04T00:30:00-02:00"),
            vec![e1, e2],
            format!("{y}-03-03 00:00:00"),
            format!("{y}-03-04 23:59:59"),
        ),
        // A day beyond the month rolls over: 02-30 → 03-02.
        (
            format!("{y}-02-30"),
            format!("{y}-03-03"),
            vec![e1],
            format!("{y}-03-02 00:00:00"),
            format!("{y}-03-03 23:59:59"),
        ),
        // Timestamps (also negative ones would be timestamps).
        (
            ts(&format!("{y}-03-04 05:00:00")).to_string(),
            ts(&format!("{y}-03-04 20:00:00")).to_string(),
            vec![e2],
            format!("{y}-03-04 00:00:00"),
            format!("{y}-03-04 23:59:59"),
        ),
        // Offsets and keywords combine with a date.
        (
            format!("{y}-03-02 +1 day"),
            format!("{y}-03-03 noon"),
            vec![e1],
            format!("{y}-03-03 00:00:00"),
            format!("{y}-03-03 23:59:59"),
        ),
    ];
    for (sd, ed, want, ls, le) in cases {
        let r = anon(s, &q().p("start_date", &sd).p("end_date", &ed).s());
        let v = ok(&r);
        assert_eq!(ids(&v), want, "start_date={sd:?} end_date={ed:?}");
        assert_links(s, &r, &v, "", 1, &link(&ls, &le));
    }
    // "20460303" is a timestamp (1970-08-24 ...), not a compact date.
    let stamp = chrono::DateTime::from_timestamp(20460303, 0)
        .unwrap()
        .naive_utc();
    let r = anon(
        s,
        &q().p("start_date", "20460303")
            .p("end_date", format!("{y}-03-03"))
            .p("search", "grammar")
            .s(),
    );
    let v = ok(&r);
    assert_eq!(ids(&v), vec![e1]);
    assert_eq!(
        query_params(v["rest_url"].as_str().unwrap())[2],
        (
            "start_date".to_string(),
            format!("{} 00:00:00", stamp.date())
        )
    );
    // Relative expressions are evaluated in UTC at the request.
    let (r, w) = windowed(|| anon(s, "start_date=tomorrow"));
    let v = ok(&r);
    if let Some((_, end)) = w {
        let tomorrow = today() + CDuration::days(1);
        assert_eq!(
            v["rest_url"].as_str().unwrap(),
            format!(
                "{}{NS}/events/?page=1&{}",
                s.public,
                link(&format!("{tomorrow} 00:00:00"), &end)
            )
        );
    }
}

/// Relative bounds drop the default window, explicit `start_date`/`end_date` still apply, all
/// four snap to 23:59:59 unless strict; past events need an explicit start_date.
#[test]
fn relative_bounds_example() {
    let s = server_a();
    // This test owns 2017 and 2018.
    let c = create_many(
        s,
        &ADMIN,
        vec![
            ev(
                "Relbound five days",
                "2017-12-29 10:00:00",
                "2018-01-03 10:00:00",
            ),
            ev(
                "Relbound three days",
                "2017-12-30 10:00:00",
                "2018-01-02 10:00:00",
            ),
            ev(
                "Relbound new year eve",
                "2017-12-31 17:00:00",
                "2017-12-31 19:00:00",
            ),
            ev(
                "Relbound afternoon",
                "2018-01-01 16:00:00",
                "2018-01-01 18:00:00",
            ),
            ev(
                "Relbound evening",
                "2018-01-01 19:00:00",
                "2018-01-01 21:00:00",
            ),
            ev(
                "Relbound morning",
                "2018-01-02 10:00:00",
                "2018-01-02 12:00:00",
            ),
        ],
    );
    let e: Vec<u64> = c.iter().map(id).collect();

    let r = anon(s, "ends_after=2017-12-31&starts_before=2018-01-02");
    let v = ok(&r);
    assert_eq!(
        ids(&v),
        vec![e[0], e[1], e[3], e[4], e[5]],
        "all but the 2017-12-31 17:00 one, by start"
    );
    let qs = q()
        .p("per_page", 10)
        .p("status", "publish")
        .p("starts_before", "2018-01-02 23:59:59")
        .p("ends_after", "2017-12-31 23:59:59")
        .s();
    assert_links(s, &r, &v, "", 1, &qs);

    let r = anon(
        s,
        "ends_after=2017-12-31&starts_before=2018-01-02&start_date=2017-12-30&end_date=2018-01-02",
    );
    let v = ok(&r);
    assert_eq!(ids(&v), vec![e[1], e[3], e[4], e[5]], "also without 12-29");
    let qs = q()
        .p("per_page", 10)
        .p("start_date", "2017-12-30 00:00:00")
        .p("end_date", "2018-01-02 23:59:59")
        .p("status", "publish")
        .p("starts_before", "2018-01-02 23:59:59")
        .p("ends_after", "2017-12-31 23:59:59")
        .s();
    assert_links(s, &r, &v, "", 1, &qs);

    // starts_after=D: a later day.
    let r = anon(s, "starts_after=2018-01-01&ends_before=2018-01-31");
    let v = ok(&r);
    assert_eq!(ids(&v), vec![e[5]]);
    let qs = q()
        .p("per_page", 10)
        .p("status", "publish")
        .p("starts_after", "2018-01-01 23:59:59")
        .p("ends_before", "2018-01-31 23:59:59")
        .s();
    assert_links(s, &r, &v, "", 1, &qs);
    // strict: exact values, strictly after 16:00:00.
    let r = anon(
        s,
        &q().p("starts_after", "2018-01-01 16:00:00")
            .p("ends_before", "2018-01-31")
            .p("strict_dates", "1")
            .s(),
    );
    let v = ok(&r);
    assert_eq!(ids(&v), vec![e[4], e[5]]);
    let qs = q()
        .p("per_page", 10)
        .p("status", "publish")
        .p("starts_after", "2018-01-01 16:00:00")
        .p("ends_before", "2018-01-31 00:00:00")
        .p("strict_dates", "true")
        .s();
    assert_links(s, &r, &v, "", 1, &qs);
    // ends_before=D: before the last second of D.
    let v = ok(&anon(s, "ends_before=2018-01-02&ends_after=2017-12-31"));
    assert_eq!(ids(&v), vec![e[1], e[3], e[4], e[5]]);
    let v = ok(&anon(s, "starts_after=2017-12-31&starts_before=2018-01-01"));
    assert_eq!(ids(&v), vec![e[3], e[4]]);

    // Past events are not in the default window; an explicit start_date brings them
    // back (the default end bound still applies).
    let v = ok(&anon(s, "search=relbound"));
    assert_eq!(v["total"], 0, "past events are outside the default window");
    let v = ok(&anon(s, "search=relbound&start_date=2017-12-01"));
    assert_eq!(ids(&v), e);
}

/// The default window starts yesterday 00:00:00 (strict: 23:59:00)
/// and ends 24 months ahead at 23:59:59 (strict: to the second).
#[test]
fn default_window_edges() {
    let s = server_a();
    let word = "zephyrquill";
    let t = today();
    let day = |k: i64| t + CDuration::days(k);
    let d24 = plus_months(t, 24);
    let mk = |label: &str, start: String, end: String| ev(&format!("{word} {label}"), &start, &end);
    // Sequential creation: "last day" and "past the end" share their start, so their order is
    // their ID order.
    let bodies = vec![
        mk(
            "yesterday midnight",
            format!("{} 00:00:00", day(-1)),
            format!("{} 00:30:00", day(-1)),
        ),
        mk(
            "two days ago",
            format!("{} 23:00:00", day(-2)),
            format!("{} 01:00:00", day(-1)),
        ),
        mk(
            "yesterday late",
            format!("{} 23:59:00", day(-1)),
            format!("{} 23:59:30", day(-1)),
        ),
        mk(
            "tomorrow",
            format!("{} 10:00:00", day(1)),
            format!("{} 11:00:00", day(1)),
        ),
        mk(
            "last day",
            format!("{d24} 10:00:00"),
            format!("{d24} 23:59:59"),
        ),
        mk(
            "past the end",
            format!("{d24} 10:00:00"),
            format!("{} 00:00:00", d24 + CDuration::days(1)),
        ),
        mk(
            "day after",
            format!("{} 10:00:00", d24 + CDuration::days(1)),
            format!("{} 11:00:00", d24 + CDuration::days(1)),
        ),
    ];
    let e: Vec<u64> = bodies
        .into_iter()
        .map(|b| id(&create(s, &ADMIN, b)))
        .collect();
    let (y0, y1, y2, n1, l1, l2, l3) = (e[0], e[1], e[2], e[3], e[4], e[5], e[6]);

    let (r, w) = windowed(|| anon(s, &q().p("search", word).s()));
    let v = ok(&r);
    assert_eq!(
        ids(&v),
        vec![y0, y2, n1, l1],
        "started yesterday: listed; started two days ago: not; last day of the window: listed"
    );
    if let Some((start, end)) = w {
        let qs = q()
            .p("per_page", 10)
            .p("start_date", start)
            .p("end_date", end)
            .p("search", word)
            .p("status", "publish")
            .s();
        assert_links(s, &r, &v, "", 1, &qs);
    }

    // Strict default window: yesterday 23:59:00 … now + 24 months to the second.
    let before = Utc::now().naive_utc();
    let r = anon(s, &q().p("search", word).p("strict_dates", "true").s());
    let after = Utc::now().naive_utc();
    let v = ok(&r);
    if before.time().hour() < 23 || before.time().minute() < 59 {
        assert_eq!(ids(&v), vec![y2, n1], "strict default window");
    }
    let params = query_params(v["rest_url"].as_str().unwrap());
    let names: Vec<&str> = params.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "page",
            "per_page",
            "start_date",
            "end_date",
            "search",
            "status",
            "strict_dates"
        ],
        "strict link layout: {}",
        v["rest_url"]
    );
    if before.date() == after.date() {
        assert_eq!(
            params[2].1,
            format!("{} 23:59:00", before.date() - CDuration::days(1)),
            "strict default start bound: yesterday 23:59:00"
        );
        let lo =
            fmt(plus_months(before.date(), 24).and_time(before.time().with_nanosecond(0).unwrap()));
        let hi = fmt(plus_months(after.date(), 24)
            .and_time(after.time().with_nanosecond(0).unwrap())
            + CDuration::seconds(1));
        let got = params[3].1.as_str();
        assert!(
            lo.as_str() <= got && got <= hi.as_str(),
            "strict default end bound {got} should be now + 24 months ({lo} … {hi})"
        );
    }
    assert_eq!(params[6].1, "true");

    // Past events need an explicit start_date.
    let (r, w) = windowed(|| {
        anon(
            s,
            &q().p("search", word)
                .p("start_date", day(-3).to_string())
                .s(),
        )
    });
    let v = ok(&r);
    assert_eq!(ids(&v), vec![y1, y0, y2, n1, l1]);
    if let Some((_, end)) = w {
        let qs = q()
            .p("per_page", 10)
            .p("start_date", format!("{} 00:00:00", day(-3)))
            .p("end_date", end)
            .p("search", word)
            .p("status", "publish")
            .s();
        assert_links(s, &r, &v, "", 1, &qs);
    }
    // end_date alone keeps the default start bound.
    let v = ok(&anon(
        s,
        &q().p("search", word)
            .p("end_date", (d24 + CDuration::days(1)).to_string())
            .s(),
    ));
    assert_eq!(ids(&v), vec![y0, y2, n1, l1, l2, l3]);
    // start_date far ahead without end_date: nothing (default end bound).
    let v = ok(&anon(
        s,
        &q().p("search", word)
            .p("start_date", (d24 + CDuration::days(1)).to_string())
            .s(),
    ));
    assert_eq!(v["total"], 0);
    assert_eq!(v["events"], json!([]));
}

/// Bounds compare with the event's local wall clock; ordering by local start then ID;
/// sticky/featured do not influence order.
#[test]
fn ordering_by_local_start_then_id() {
    let s = server_a();
    let y = 2045;
    let mk = |t: &str, st: &str, en: &str| ev(t, &format!("{y}-{st}"), &format!("{y}-{en}"));
    // Sequential creation: IDs increase in this order.
    let a = id(&create(
        s,
        &ADMIN,
        mk("Order A", "05-01 10:00:00", "05-01 11:00:00"),
    ));
    let b = id(&create(
        s,
        &ADMIN,
        mk("Order B", "03-01 10:00:00", "03-01 11:00:00"),
    ));
    let c = id(&create(
        s,
        &ADMIN,
        mk("Order C", "05-01 10:00:00", "05-01 11:00:00"),
    ));
    let d = id(&create(
        s,
        &ADMIN,
        merge(
            mk("Order D", "03-01 09:00:00", "03-01 09:30:00"),
            json!({"sticky": true, "featured": true}),
        ),
    ));
    // Tokyo 09:30 local is 00:30 UTC, but it sorts by its local wall clock.
    let tk = id(&create(
        s,
        &ADMIN,
        merge(
            mk("Order Tokyo", "03-01 09:30:00", "03-01 09:45:00"),
            json!({"timezone": "Asia/Tokyo"}),
        ),
    ));
    let b0 = id(&create(
        s,
        &ADMIN,
        mk("Order B twin", "03-01 10:00:00", "03-01 10:30:00"),
    ));
    // New York 22:00 local (03:00 UTC next day).
    let ny = id(&create(
        s,
        &ADMIN,
        merge(
            mk("Order New York", "06-10 22:00:00", "06-10 23:00:00"),
            json!({"timezone": "America/New_York"}),
        ),
    ));
    let v = ok(&anon(s, &year(y).s()));
    assert_eq!(ids(&v), vec![d, tk, b, b0, a, c, ny]);
    // The window uses the local dates.
    let v = ok(&anon(
        s,
        &q().p("start_date", format!("{y}-06-10"))
            .p("end_date", format!("{y}-06-10"))
            .s(),
    ));
    assert_eq!(ids(&v), vec![ny], "local 2045-06-10 22:00 is inside 06-10");
    let v = ok(&anon(
        s,
        &q().p("start_date", format!("{y}-06-11"))
            .p("end_date", format!("{y}-06-11"))
            .s(),
    ));
    assert_eq!(ids(&v), Vec::<u64>::new(), "its UTC day does not count");
    let v = ok(&anon(
        s,
        &q().p("start_date", format!("{y}-03-01 09:15:00"))
            .p("end_date", format!("{y}-03-01 09:50:00"))
            .p("strict_dates", "yes")
            .s(),
    ));
    assert_eq!(ids(&v), vec![tk], "Tokyo event compared at its local 09:30");
}

// =============================================================================================
// include
// =============================================================================================

/// include voids the window, orders by publication date,
/// keeps hide_from_listings/status/language rules; bad include → 400.
#[test]
fn include_voids_window_and_orders_by_publication() {
    let s = server_a();
    let mk = |t: &str, st: &str, pubd: &str| {
        merge(
            ev(t, st, &st.replace("10:00:00", "11:00:00")),
            json!({"date": pubd}),
        )
    };
    let e1 = id(&create(
        s,
        &ADMIN,
        mk("Include one", "2033-01-10 10:00:00", "2021-03-01 08:00:00"),
    ));
    let e2 = id(&create(
        s,
        &ADMIN,
        mk("Include two", "2033-02-10 10:00:00", "2021-01-01 08:00:00"),
    ));
    let e3 = id(&create(
        s,
        &ADMIN,
        mk("Include past", "2016-06-01 10:00:00", "2021-02-01 08:00:00"),
    ));
    let e4 = id(&create(
        s,
        &ADMIN,
        mk("Include tie", "2033-03-10 10:00:00", "2021-02-01 08:00:00"),
    ));
    let hidden = id(&create(
        s,
        &ADMIN,
        merge(
            mk(
                "Include hidden",
                "2033-04-10 10:00:00",
                "2021-01-15 08:00:00",
            ),
            json!({"hide_from_listings": true}),
        ),
    ));
    let draft = id(&create(
        s,
        &ADMIN,
        merge(
            mk(
                "Include draft",
                "2033-05-10 10:00:00",
                "2021-01-20 08:00:00",
            ),
            json!({"status": "draft"}),
        ),
    ));
    let es = id(&create_seg(
        s,
        "/es",
        &ADMIN,
        mk("Incluir uno", "2033-06-10 10:00:00", "2021-01-05 08:00:00"),
    ));
    let venue = id(&s.create(
        &ADMIN,
        &format!("{NS}/venues"),
        &json!({"venue": "Includeville Hall"}),
    ));
    let list = [e1, e2, e3, e4, hidden, draft, es, venue, 99_999_999];
    let csv = list
        .iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(",");

    let r = anon(s, &q().p("include", &csv).s());
    let v = ok(&r);
    assert_eq!(
        ids(&v),
        vec![e2, e3, e4, e1],
        "by publication date, ties by ID; window ignored; hidden/draft/es/non-events not returned"
    );
    assert_eq!(v["total"], 4);
    let qs = q()
        .p("per_page", 10)
        .p("status", "publish")
        .p("include", &csv)
        .s();
    assert_links(s, &r, &v, "", 1, &qs);

    // An explicit window is ignored too, and left out of the links.
    let r = anon(
        s,
        &q().p("include", &csv)
            .p("start_date", "2033-02-01")
            .p("end_date", "2033-02-28")
            .s(),
    );
    let v = ok(&r);
    assert_eq!(ids(&v), vec![e2, e3, e4, e1]);
    assert_links(s, &r, &v, "", 1, &qs);

    // Array form.
    let v = ok(&anon(s, &format!("include[]={e1}&include[]={e3}")));
    assert_eq!(ids(&v), vec![e3, e1]);

    // Relative bounds still apply.
    let r = anon(
        s,
        &q().p("include", &csv).p("starts_after", "2033-01-31").s(),
    );
    let v = ok(&r);
    assert_eq!(ids(&v), vec![e2, e4]);
    let qs = q()
        .p("per_page", 10)
        .p("status", "publish")
        .p("include", &csv)
        .p("starts_after", "2033-01-31 23:59:59")
        .s();
    assert_links(s, &r, &v, "", 1, &qs);

    // Editors see the draft; nobody sees the hidden one; the es event only in es.
    let v = ok(&as_user(s, &q().p("include", &csv).s(), &EDITOR));
    assert_eq!(ids(&v), vec![e2, draft, e3, e4, e1]);
    let v = ok(&anon(
        s,
        &q().p("include", &csv).p("translation_language", "es").s(),
    ));
    assert_eq!(ids(&v), vec![es]);

    // Pagination with include.
    let r = anon(s, &q().p("include", &csv).p("per_page", 3).p("page", 2).s());
    let v = ok(&r);
    assert_eq!(ids(&v), vec![e1]);
    let qs = q()
        .p("per_page", 3)
        .p("status", "publish")
        .p("include", &csv)
        .s();
    assert_links(s, &r, &v, "", 2, &qs);

    // Bad include lists.
    for bad_q in [
        "include=foo-bar,23,89".to_string(),
        "include[]=foo-bar&include[]=23&include[]=89".to_string(),
        "include=0".to_string(),
        "include=-3".to_string(),
        "include=1.5".to_string(),
        format!("include={e1},x"),
    ] {
        assert_invalid_param_names(&anon(s, &bad_q), &["include"]);
    }
    bad_sub(&anon(s, "include="), "include", "rest_empty");
}

// =============================================================================================
// Search
// =============================================================================================

/// Search: word semantics, fields incl. venue and organizer names, phrases,
/// exclusions, `orderby=relevance`.
#[test]
fn search() {
    let s = server_a();
    let y = 2034;
    let day = |d: u32| {
        (
            format!("{y}-01-{d:02} 10:00:00"),
            format!("{y}-01-{d:02} 11:00:00"),
        )
    };
    let mk = |t: &str, d: u32| {
        let (a, b) = day(d);
        ev(t, &a, &b)
    };
    let s1 = id(&create(s, &ADMIN, mk("foo", 10)));
    let s2 = id(&create(s, &ADMIN, mk("foo bar", 11)));
    let s3 = id(&create(s, &ADMIN, mk("bar", 12)));
    let s7 = id(&create(s, &ADMIN, mk("bar foo", 13)));
    let s4 = id(&create(s, &ADMIN, mk("Workshops for beginners", 14)));
    let s5 = id(&create(
        s,
        &ADMIN,
        merge(
            mk("Concert night", 15),
            json!({"venue": {"venue": "Quillfeather Pavilion"}}),
        ),
    ));
    let s6 = id(&create(
        s,
        &ADMIN,
        merge(
            mk("Evening social", 16),
            json!({"organizer": [{"organizer": "Marguerite Okonkwo"}]}),
        ),
    ));
    let s8 = id(&create(s, &ADMIN, mk("Música en vivo", 17)));
    let s10 = id(&create(
        s,
        &ADMIN,
        merge(
            mk("Harbour tour", 18),
            json!({"description": "Bring a lantern."}),
        ),
    ));
    let s9 = id(&create(s, &ADMIN, mk("Lantern walk", 19)));
    let s11 = id(&create(
        s,
        &ADMIN,
        merge(mk("foo draft", 20), json!({"status": "draft"})),
    ));
    let all_pub = vec![s1, s2, s3, s7, s4, s5, s6, s8, s10, s9];

    let find = |term: &str| ids(&ok(&anon(s, &year(y).p("search", term).s())));
    assert_eq!(find("foo"), vec![s1, s2, s7], "foo matches foo and foo bar");
    assert_eq!(find("bar"), vec![s2, s3, s7], "bar matches bar and foo bar");
    assert_eq!(find("foo bar"), vec![s2, s7], "every word must match");
    assert_eq!(find("FOO"), vec![s1, s2, s7], "case-insensitive");
    assert_eq!(find("work"), vec![s4], "work finds Workshops");
    assert_eq!(find("pavilion"), vec![s5], "venue name is searchable");
    assert_eq!(find("quillfeather"), vec![s5]);
    assert_eq!(find("okonkwo"), vec![s6], "organizer name is searchable");
    assert_eq!(find("concert okonkwo"), Vec::<u64>::new());
    assert_eq!(find("concerts"), vec![s5], "stemming");
    assert_eq!(find("concret"), vec![s5], "one edit for 5+ characters");
    assert_eq!(find("musica"), vec![s8], "accent folding");
    assert_eq!(
        find("lantern"),
        vec![s10, s9],
        "search alone keeps start order"
    );
    assert_eq!(
        find("\"foo bar\""),
        vec![s2],
        "phrase: consecutive, in order"
    );
    assert_eq!(find("foo -bar"), vec![s1], "exclusion");
    assert_eq!(
        find("-bar"),
        vec![s1, s4, s5, s6, s8, s10, s9],
        "only exclusions"
    );
    assert_eq!(find("   "), all_pub, "only spaces filters nothing");
    assert_eq!(find("!!"), all_pub, "only punctuation filters nothing");
    assert_eq!(find("zzzznothing"), Vec::<u64>::new());
    // Drafts do not leak through search; editors find them.
    let v = ok(&as_user(s, &year(y).p("search", "foo").s(), &EDITOR));
    assert_eq!(ids(&v), vec![s1, s2, s7, s11]);

    // orderby=relevance: title match before description match.
    let r = anon(
        s,
        &year(y).p("search", "lantern").p("orderby", "relevance").s(),
    );
    let v = ok(&r);
    assert_eq!(ids(&v), vec![s9, s10]);
    let qs = year_link(10, y)
        .p("search", "lantern")
        .p("orderby", "relevance")
        .p("status", "publish")
        .s();
    assert_links(s, &r, &v, "", 1, &qs);

    // Links carry the search form-encoded.
    for term in [
        "foo bar",
        "\"foo bar\"",
        "foo -bar",
        "Música",
        "a*b-c.d_e",
        "foo:bar,baz/qux&x=y+z",
    ] {
        let r = anon(s, &year(y).p("search", term).s());
        let v = ok(&r);
        let qs = year_link(10, y)
            .p("search", term)
            .p("status", "publish")
            .s();
        assert_links(s, &r, &v, "", 1, &qs);
    }
    // Pagination keeps the search.
    let r = anon(
        s,
        &year(y).p("search", "foo").p("per_page", 2).p("page", 2).s(),
    );
    let v = ok(&r);
    assert_eq!(ids(&v), vec![s7]);
    let qs = year_link(2, y)
        .p("search", "foo")
        .p("status", "publish")
        .s();
    assert_links(s, &r, &v, "", 2, &qs);

    // Errors.
    bad_sub(&anon(s, "search="), "search", "rest_empty");
    bad_sub(&anon(s, "search[]=foo"), "search", "rest_invalid_type");
    assert_invalid_param_names(
        &anon(s, &year(y).p("orderby", "relevance").s()),
        &["orderby"],
    );
    assert_invalid_param_names(
        &anon(s, &year(y).p("search", "foo").p("orderby", "title").s()),
        &["orderby"],
    );
    assert_invalid_param_names(
        &anon(s, &year(y).p("search", "foo").p("orderby", "date").s()),
        &["orderby"],
    );
}

// =============================================================================================
// Categories, tags
// =============================================================================================

fn term(s: &Server, kind: &str, body: Value) -> u64 {
    id(&s.create(&ADMIN, &format!("{NS}/{kind}"), &body))
}

/// `categories`: ID, slug, name, CSV, array, descendants, unknown → 400, other language →
/// 400, empty term → 200 empty, links and pagination.
#[test]
fn categories_filter() {
    let s = server_a();
    let y = 2035;
    let parent = term(s, "categories", json!({"name": "Tokcat Arts"}));
    let child = term(
        s,
        "categories",
        json!({"name": "Tokcat Painting", "parent": parent}),
    );
    let grandchild = term(
        s,
        "categories",
        json!({"name": "Tokcat Watercolor", "parent": child}),
    );
    let other = term(s, "categories", json!({"name": "Tokcat Sports"}));
    let empty = term(s, "categories", json!({"name": "Tokcat Empty"}));
    let es_cat = term(
        s,
        "categories",
        json!({"name": "Tokcat Artes", "translation_language": "es"}),
    );
    let mk = |t: &str, d: u32, cats: Value| {
        merge(
            ev(
                t,
                &format!("{y}-02-{d:02} 10:00:00"),
                &format!("{y}-02-{d:02} 11:00:00"),
            ),
            json!({"categories": cats}),
        )
    };
    let e1 = id(&create(s, &ADMIN, mk("Cat parent", 1, json!([parent]))));
    let e2 = id(&create(s, &ADMIN, mk("Cat child", 2, json!([child]))));
    let e3 = id(&create(
        s,
        &ADMIN,
        mk("Cat grandchild", 3, json!([grandchild])),
    ));
    let e4 = id(&create(s, &ADMIN, mk("Cat other", 4, json!([other]))));
    let _e5 = id(&create(s, &ADMIN, mk("Cat none", 5, json!([]))));
    let e6 = id(&create(
        s,
        &ADMIN,
        mk("Cat both", 6, json!([parent, other])),
    ));
    let es_ev = id(&create(
        s,
        &ADMIN,
        merge(
            mk("Cat es", 7, json!([es_cat])),
            json!({"translation_language": "es"}),
        ),
    ));

    let by = |val: &str| ids(&ok(&anon(s, &year(y).p("categories", val).s())));
    assert_eq!(
        by(&parent.to_string()),
        vec![e1, e2, e3, e6],
        "descendants included"
    );
    assert_eq!(by("tokcat-arts"), vec![e1, e2, e3, e6], "by slug");
    assert_eq!(
        by("Tokcat Arts"),
        vec![e1, e2, e3, e6],
        "by name (slug form)"
    );
    assert_eq!(by(&child.to_string()), vec![e2, e3]);
    assert_eq!(by(&other.to_string()), vec![e4, e6]);
    assert_eq!(
        by(&format!("{child},{other}")),
        vec![e2, e3, e4, e6],
        "CSV is OR"
    );
    assert_eq!(
        by(&format!("tokcat-painting,{other}")),
        vec![e2, e3, e4, e6]
    );
    let v = ok(&anon(
        s,
        &format!(
            "{}&categories[]=tokcat-painting&categories[]=tokcat-sports",
            year(y).s()
        ),
    ));
    assert_eq!(ids(&v), vec![e2, e3, e4, e6], "array form");
    // Repeated keys are concatenated.
    let v = ok(&anon(
        s,
        &format!("{}&categories={child}&categories={other}", year(y).s()),
    ));
    assert_eq!(ids(&v), vec![e2, e3, e4, e6], "repeated keys");
    let r = anon(s, &year(y).p("categories", empty).s());
    let v = ok(&r);
    assert_eq!(v["total"], 0, "empty term → 200 empty");

    // Links carry the categories as given; pagination keeps them.
    let given = format!("{child},{other}");
    let r = anon(s, &year(y).p("categories", &given).p("per_page", 2).s());
    let v = ok(&r);
    assert_eq!(ids(&v), vec![e2, e3]);
    let qs = year_link(2, y)
        .p("categories", &given)
        .p("status", "publish")
        .s();
    assert_links(s, &r, &v, "", 1, &qs);
    let r2 = follow(s, v["next_rest_url"].as_str().unwrap(), None);
    assert_eq!(ids(&ok(&r2)), vec![e4, e6]);

    // Unknown and foreign categories → 400.
    for val in [
        "tokcat-unknown".to_string(),
        "99999999".to_string(),
        es_cat.to_string(),
        "tokcat-artes".to_string(),
        format!("{parent},tokcat-unknown"),
    ] {
        let r = anon(s, &year(y).p("categories", &val).s());
        bad_sub(&r, "categories", "rest_invalid_reference");
    }
    bad_sub(&anon(s, "categories="), "categories", "rest_empty");
    // The es category works in es.
    let v = ok(&anon(
        s,
        &year(y)
            .p("categories", es_cat)
            .p("translation_language", "es")
            .s(),
    ));
    assert_eq!(ids(&v), vec![es_ev]);
}

/// `tags`: ID, slug, CSV, array; unknown → 400; empty → 400; empty tag → 200 empty.
#[test]
fn tags_filter() {
    let s = server_a();
    let y = 2036;
    let t1 = term(s, "tags", json!({"name": "Toktag Outdoor"}));
    let t2 = term(s, "tags", json!({"name": "Toktag Family"}));
    let t3 = term(s, "tags", json!({"name": "Toktag Unused"}));
    let mk = |t: &str, d: u32, tags: Value| {
        merge(
            ev(
                t,
                &format!("{y}-02-{d:02} 10:00:00"),
                &format!("{y}-02-{d:02} 11:00:00"),
            ),
            json!({"tags": tags}),
        )
    };
    let e1 = id(&create(s, &ADMIN, mk("Tag one", 1, json!([t1]))));
    let e2 = id(&create(s, &ADMIN, mk("Tag two", 2, json!([t2]))));
    let e3 = id(&create(s, &ADMIN, mk("Tag both", 3, json!([t1, t2]))));
    let _e4 = id(&create(s, &ADMIN, mk("Tag none", 4, json!([]))));
    let by = |val: &str| ids(&ok(&anon(s, &year(y).p("tags", val).s())));
    assert_eq!(by(&t1.to_string()), vec![e1, e3]);
    assert_eq!(by("toktag-family"), vec![e2, e3]);
    assert_eq!(by(&format!("{t1},{t2}")), vec![e1, e2, e3]);
    let v = ok(&anon(
        s,
        &format!("{}&tags[]={t1}&tags[]=toktag-family", year(y).s()),
    ));
    assert_eq!(ids(&v), vec![e1, e2, e3]);
    assert_eq!(by(&t3.to_string()), Vec::<u64>::new());
    let r = anon(s, &year(y).p("tags", format!("{t1},toktag-family")).s());
    let v = ok(&r);
    let qs = year_link(10, y)
        .p("tags", format!("{t1},toktag-family"))
        .p("status", "publish")
        .s();
    assert_links(s, &r, &v, "", 1, &qs);
    bad_sub(
        &anon(s, &year(y).p("tags", "toktag-unknown").s()),
        "tags",
        "rest_invalid_reference",
    );
    bad_sub(&anon(s, "tags="), "tags", "rest_empty");
}

// =============================================================================================
// Venue, organizer, featured, ticketed
// =============================================================================================

/// `venue`/`organizer`: ID lists with OR semantics, AND with each other; non-numeric or
/// unknown → 400; any status; other language → 400.
#[test]
fn venue_and_organizer_filters() {
    let s = server_a();
    let y = 2043;
    let vpath = format!("{NS}/venues");
    let opath = format!("{NS}/organizers");
    let v1 = id(&s.create(&ADMIN, &vpath, &json!({"venue": "Tokven Alpha Hall"})));
    let v2 = id(&s.create(&ADMIN, &vpath, &json!({"venue": "Tokven Beta Hall"})));
    let v3 = id(&s.create(&ADMIN, &vpath, &json!({"venue": "Tokven Gamma Hall"})));
    let v4 = id(&s.create(
        &ADMIN,
        &vpath,
        &json!({"venue": "Tokven Draft Hall", "status": "draft"}),
    ));
    let ves = id(&s.create(
        &ADMIN,
        &vpath,
        &json!({"venue": "Tokven Sala", "translation_language": "es"}),
    ));
    let o1 = id(&s.create(&ADMIN, &opath, &json!({"organizer": "Tokorg Ann"})));
    let o2 = id(&s.create(&ADMIN, &opath, &json!({"organizer": "Tokorg Bo"})));
    let mk = |t: &str, d: u32, extra: Value| {
        merge(
            ev(
                t,
                &format!("{y}-05-{d:02} 10:00:00"),
                &format!("{y}-05-{d:02} 11:00:00"),
            ),
            extra,
        )
    };
    let e1 = id(&create(
        s,
        &ADMIN,
        mk("Ven one", 1, json!({"venue": v1, "organizer": [o1]})),
    ));
    let e2 = id(&create(
        s,
        &ADMIN,
        mk("Ven two", 2, json!({"venue": v2, "organizer": [o1, o2]})),
    ));
    let e3 = id(&create(
        s,
        &ADMIN,
        mk("Ven three", 3, json!({"venue": v3, "organizer": [o2]})),
    ));
    let _e4 = id(&create(s, &ADMIN, mk("Ven none", 4, json!({}))));

    let by = |k: &str, val: &str| ids(&ok(&anon(s, &year(y).p(k, val).s())));
    assert_eq!(by("venue", &v1.to_string()), vec![e1]);
    assert_eq!(by("venue", &format!("{v1},{v2}")), vec![e1, e2]);
    let v = ok(&anon(
        s,
        &format!("{}&venue[]={v1}&venue[]={v3}", year(y).s()),
    ));
    assert_eq!(ids(&v), vec![e1, e3]);
    assert_eq!(by("organizer", &o1.to_string()), vec![e1, e2]);
    assert_eq!(by("organizer", &o2.to_string()), vec![e2, e3]);
    assert_eq!(by("organizer", &format!("{o1},{o2}")), vec![e1, e2, e3]);
    let v = ok(&anon(
        s,
        &format!("{}&organizer[]={o1}&organizer[]={o2}", year(y).s()),
    ));
    assert_eq!(ids(&v), vec![e1, e2, e3]);
    // AND between filters.
    let v = ok(&anon(s, &year(y).p("venue", v1).p("organizer", o2).s()));
    assert_eq!(v["total"], 0);
    let v = ok(&anon(s, &year(y).p("venue", v2).p("organizer", o2).s()));
    assert_eq!(ids(&v), vec![e2]);
    // A draft venue is a valid reference (any status).
    let v = ok(&anon(s, &year(y).p("venue", v4).s()));
    assert_eq!(v["total"], 0);
    // Links.
    let r = anon(
        s,
        &year(y)
            .p("venue", format!("{v1},{v2}"))
            .p("organizer", format!("{o1},{o2}"))
            .s(),
    );
    let v = ok(&r);
    assert_eq!(ids(&v), vec![e1, e2]);
    let qs = year_link(10, y)
        .p("venue", format!("{v1},{v2}"))
        .p("organizer", format!("{o1},{o2}"))
        .p("status", "publish")
        .s();
    assert_links(s, &r, &v, "", 1, &qs);

    // Errors.
    for (k, val, sub) in [
        ("venue", "foo".to_string(), Some("rest_invalid_type")),
        ("venue", format!("{v1},foo"), None),
        (
            "venue",
            "99999999".to_string(),
            Some("rest_invalid_reference"),
        ),
        ("venue", o1.to_string(), Some("rest_invalid_reference")),
        ("venue", e1.to_string(), Some("rest_invalid_reference")),
        ("venue", ves.to_string(), Some("rest_invalid_reference")),
        ("organizer", "foo".to_string(), Some("rest_invalid_type")),
        (
            "organizer",
            "99999999".to_string(),
            Some("rest_invalid_reference"),
        ),
        ("organizer", v1.to_string(), Some("rest_invalid_reference")),
    ] {
        let r = anon(s, &year(y).p(k, &val).s());
        match sub {
            Some(sub) => bad_sub(&r, k, sub),
            None => {
                assert_invalid_param_names(&r, &[k]);
            }
        }
    }
    bad_sub(&anon(s, "venue="), "venue", "rest_empty");
    bad_sub(&anon(s, "organizer="), "organizer", "rest_empty");
    // The es venue is valid in es.
    let v = ok(&anon(
        s,
        &year(y).p("venue", ves).p("translation_language", "es").s(),
    ));
    assert_eq!(v["total"], 0);
}

/// `featured`/`ticketed` true/false/absent; creation-order ties; links `1`/`0`.
#[test]
fn featured_and_ticketed_filters() {
    let s = server_a();
    let y = 2044;
    let mk = |t: &str, d: u32, extra: Value| {
        merge(
            ev(
                t,
                &format!("{y}-02-{d:02} 10:00:00"),
                &format!("{y}-02-{d:02} 11:00:00"),
            ),
            extra,
        )
    };
    let a = id(&create(
        s,
        &ADMIN,
        mk("Feat A", 1, json!({"featured": true})),
    ));
    let b = id(&create(s, &ADMIN, mk("Feat B", 2, json!({}))));
    let c = id(&create(
        s,
        &ADMIN,
        mk("Feat C", 3, json!({"ticketed": true})),
    ));
    let d = id(&create(
        s,
        &ADMIN,
        mk("Feat D", 4, json!({"featured": true, "ticketed": true})),
    ));
    let e = id(&create(s, &ADMIN, mk("Feat E", 5, json!({"sticky": true}))));
    // Same start: ordered by creation (ID).
    let f1 = id(&create(
        s,
        &ADMIN,
        mk("Feat tie 1", 6, json!({"featured": true})),
    ));
    let f2 = id(&create(
        s,
        &ADMIN,
        mk("Feat tie 2", 6, json!({"featured": true})),
    ));
    let dr = id(&create(
        s,
        &ADMIN,
        mk(
            "Feat draft",
            7,
            json!({"featured": true, "status": "draft"}),
        ),
    ));

    let by = |extra: &str| ids(&ok(&anon(s, &format!("{}&{extra}", year(y).s()))));
    for t in ["featured=true", "featured=1", "featured=TRUE"] {
        assert_eq!(by(t), vec![a, d, f1, f2], "{t}");
    }
    for f in ["featured=false", "featured=0", "featured=False"] {
        assert_eq!(by(f), vec![b, c, e], "{f}");
    }
    assert_eq!(by("per_page=20"), vec![a, b, c, d, e, f1, f2]);
    // Drafts hidden from anonymous callers, shown to editors.
    let v = ok(&as_user(s, &year(y).p("featured", "true").s(), &EDITOR));
    assert_eq!(ids(&v), vec![a, d, f1, f2, dr]);
    for t in ["ticketed=true", "ticketed=1"] {
        assert_eq!(by(t), vec![c, d], "{t}");
    }
    for f in ["ticketed=false", "ticketed=0"] {
        assert_eq!(by(f), vec![a, b, e, f1, f2], "{f}");
    }
    assert_eq!(by("featured=1&ticketed=1"), vec![d]);
    assert_eq!(by("featured=0&ticketed=0"), vec![b, e]);

    // Links: featured=1/0, ticketed=1/0 (both kept, in their places).
    let r = anon(s, &year(y).p("featured", "true").p("ticketed", "false").s());
    let v = ok(&r);
    assert_eq!(ids(&v), vec![a, f1, f2]);
    let qs = year_link(10, y)
        .p("featured", "1")
        .p("status", "publish")
        .p("ticketed", "0")
        .s();
    assert_links(s, &r, &v, "", 1, &qs);
    let r = anon(s, &year(y).p("featured", "0").p("ticketed", "TRUE").s());
    let v = ok(&r);
    assert_eq!(ids(&v), vec![c]);
    let qs = year_link(10, y)
        .p("featured", "0")
        .p("status", "publish")
        .p("ticketed", "1")
        .s();
    assert_links(s, &r, &v, "", 1, &qs);

    for bad_val in ["yes", "on", "2", "no"] {
        bad_sub(
            &anon(s, &q().p("featured", bad_val).s()),
            "featured",
            "rest_invalid_type",
        );
        bad_sub(
            &anon(s, &q().p("ticketed", bad_val).s()),
            "ticketed",
            "rest_invalid_type",
        );
    }
}

// =============================================================================================
// Status and visibility
// =============================================================================================

/// The effective status set per role, `any`, bad statuses, contributors and
/// authors do not see others' non-public events.
#[test]
fn status_filter_per_role() {
    let s = server_a();
    let y = 2037;
    let mk = |t: &str, d: u32, extra: Value| {
        merge(
            ev(
                t,
                &format!("{y}-03-{d:02} 10:00:00"),
                &format!("{y}-03-{d:02} 11:00:00"),
            ),
            extra,
        )
    };
    let p1 = id(&create(s, &ADMIN, mk("Stat publish", 1, json!({}))));
    let d1 = id(&create(
        s,
        &ADMIN,
        mk("Stat draft", 2, json!({"status": "draft"})),
    ));
    let pe = id(&create(
        s,
        &ADMIN,
        mk("Stat pending", 3, json!({"status": "pending"})),
    ));
    let pr = id(&create(
        s,
        &ADMIN,
        mk("Stat private", 4, json!({"status": "private"})),
    ));
    let future_pub = fmt(Utc::now().naive_utc() + CDuration::days(400));
    let fu_ev = create(s, &ADMIN, mk("Stat future", 5, json!({"date": future_pub})));
    assert_eq!(fu_ev["status"], "future");
    let fu = id(&fu_ev);
    let tr = id(&create(s, &ADMIN, mk("Stat trash", 6, json!({}))));
    let del = s
        .req("DELETE", &format!("{NS}/events/{tr}"))
        .user(&ADMIN)
        .send();
    assert_eq!(del.status, 200, "trash: {}", del.describe());
    let cd = id(&create(
        s,
        &CONTRIBUTOR,
        mk("Stat contributor draft", 7, json!({})),
    ));
    let ad = id(&create(
        s,
        &AUTHOR,
        mk("Stat author draft", 8, json!({"status": "draft"})),
    ));
    let ap = id(&create(s, &AUTHOR, mk("Stat author publish", 9, json!({}))));
    let cp_ev = create(
        s,
        &CONTRIBUTOR,
        mk("Stat contributor pending", 10, json!({"status": "publish"})),
    );
    assert_eq!(cp_ev["status"], "pending");
    let cp = id(&cp_ev);

    let yq = year(y);
    let get = |extra: &str, u: Option<&TestUser>| {
        let query = if extra.is_empty() {
            yq.s()
        } else {
            format!("{}&{extra}", yq.s())
        };
        get_seg(s, "", &query, u)
    };
    let editors_default = vec![p1, d1, pe, pr, fu, cd, ad, ap, cp];

    // Anonymous and subscriber.
    for u in [None, Some(&SUBSCRIBER)] {
        let r = get("", u);
        let v = ok(&r);
        assert_eq!(ids(&v), vec![p1, ap], "{u:?}");
        assert_links(
            s,
            &r,
            &v,
            "",
            1,
            &year_link(10, y).p("status", "publish").s(),
        );
        let r = get("status=publish", u);
        let v = ok(&r);
        assert_eq!(ids(&v), vec![p1, ap]);
        assert_links(
            s,
            &r,
            &v,
            "",
            1,
            &year_link(10, y).p("status", "publish").s(),
        );
        assert_eq!(ids(&ok(&get("status[]=publish", u))), vec![p1, ap]);
        for bad_status in [
            "status=publish,draft",
            "status=publish%2C+draft",
            "status=draft",
            "status=any",
            "status=publish,publish",
            "status=trash",
            "status[]=publish&status[]=draft",
        ] {
            bad_sub(&get(bad_status, u), "status", "rest_forbidden_value");
        }
        assert_invalid_param_names(&get("status=", u), &["status"]);
    }

    // Editor and administrator.
    for u in [&EDITOR, &ADMIN] {
        let r = get("", Some(u));
        let v = ok(&r);
        assert_eq!(ids(&v), editors_default, "{} default", u.name);
        assert_links(s, &r, &v, "", 1, &year_link(10, y).p("status", "any").s());
        let r = get("status=any", Some(u));
        let v = ok(&r);
        assert_eq!(ids(&v), editors_default, "{} any", u.name);
        assert_links(s, &r, &v, "", 1, &year_link(10, y).p("status", "any").s());
        let r = get("status=publish", Some(u));
        let v = ok(&r);
        assert_eq!(ids(&v), vec![p1, ap]);
        assert_links(
            s,
            &r,
            &v,
            "",
            1,
            &year_link(10, y).p("status", "publish").s(),
        );
        let r = get("status=publish,draft", Some(u));
        let v = ok(&r);
        assert_eq!(ids(&v), vec![p1, d1, cd, ad, ap]);
        assert_links(
            s,
            &r,
            &v,
            "",
            1,
            &year_link(10, y).p("status", "publish,draft").s(),
        );
        assert_eq!(
            ids(&ok(&get("status=publish%2C+draft", Some(u)))),
            vec![p1, d1, cd, ad, ap],
            "spaces after commas"
        );
        assert_eq!(
            ids(&ok(&get("status[]=publish&status[]=draft", Some(u)))),
            vec![p1, d1, cd, ad, ap],
            "array"
        );
        assert_eq!(ids(&ok(&get("status=trash", Some(u)))), vec![tr]);
        assert_eq!(ids(&ok(&get("status=future", Some(u)))), vec![fu]);
        assert_eq!(ids(&ok(&get("status=private", Some(u)))), vec![pr]);
        assert_eq!(ids(&ok(&get("status=pending", Some(u)))), vec![pe, cp]);
        for bad_status in [
            "status=foo",
            "status=foo%2C+bar",
            "status=foo%2C+bar%2C+publish",
            "status=any,publish",
        ] {
            bad_sub(&get(bad_status, Some(u)), "status", "rest_not_in_enum");
        }
    }

    // Author: published events + own non-public ones.
    let r = get("", Some(&AUTHOR));
    let v = ok(&r);
    assert_eq!(ids(&v), vec![p1, ad, ap], "author sees no others' drafts");
    assert_links(s, &r, &v, "", 1, &year_link(10, y).p("status", "any").s());
    assert_eq!(
        ids(&ok(&get("status=any", Some(&AUTHOR)))),
        vec![p1, ad, ap]
    );
    assert_eq!(ids(&ok(&get("status=draft", Some(&AUTHOR)))), vec![ad]);
    assert_eq!(
        ids(&ok(&get("status=private", Some(&AUTHOR)))),
        Vec::<u64>::new()
    );

    // Contributor: own draft and pending, nobody else's.
    let v = ok(&get("", Some(&CONTRIBUTOR)));
    assert_eq!(
        ids(&v),
        vec![p1, cd, ap, cp],
        "contributor sees no others' drafts"
    );
    assert_eq!(v["total"], 4);
    assert_eq!(
        ids(&ok(&get("status=any", Some(&CONTRIBUTOR)))),
        vec![p1, cd, ap, cp]
    );
    assert_eq!(ids(&ok(&get("status=draft", Some(&CONTRIBUTOR)))), vec![cd]);
    assert_eq!(
        ids(&ok(&get("status=pending", Some(&CONTRIBUTOR)))),
        vec![cp]
    );
    assert_eq!(
        ids(&ok(&get("status=private,future", Some(&CONTRIBUTOR)))),
        Vec::<u64>::new()
    );
}

/// hide_from_listings is never listed, not even via include.
#[test]
fn hidden_events_never_listed() {
    let s = server_a();
    let y = 2038;
    let mk = |t: &str, d: u32, extra: Value| {
        merge(
            ev(
                t,
                &format!("{y}-04-{d:02} 10:00:00"),
                &format!("{y}-04-{d:02} 11:00:00"),
            ),
            extra,
        )
    };
    let h = id(&create(
        s,
        &ADMIN,
        mk("Hidden one", 1, json!({"hide_from_listings": true})),
    ));
    let hs = id(&create(
        s,
        &ADMIN,
        mk("Hidden string", 2, json!({"hide_from_listings": "true"})),
    ));
    let hd = id(&create(
        s,
        &ADMIN,
        mk(
            "Hidden draft",
            3,
            json!({"hide_from_listings": true, "status": "draft"}),
        ),
    ));
    let v1 = id(&create(
        s,
        &ADMIN,
        mk("Hidden not", 4, json!({"hide_from_listings": "false"})),
    ));
    assert_eq!(ids(&ok(&anon(s, &year(y).s()))), vec![v1]);
    assert_eq!(
        ids(&ok(&as_user(s, &year(y).p("status", "any").s(), &ADMIN))),
        vec![v1]
    );
    let inc = format!("{h},{hs},{hd},{v1}");
    assert_eq!(ids(&ok(&anon(s, &q().p("include", &inc).s()))), vec![v1]);
    assert_eq!(
        ids(&ok(&as_user(
            s,
            &q().p("include", &inc).p("context", "edit").s(),
            &ADMIN
        ))),
        vec![v1]
    );
    let v = ok(&anon(s, &year(y).p("search", "hidden").s()));
    assert_eq!(ids(&v), vec![v1]);
    // Still reachable by ID.
    let r = s.get(&format!("{NS}/events/{h}"));
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(r.json()["hide_from_listings"], true);
}

// =============================================================================================
// post_parent, geoloc
// =============================================================================================

/// `post_parent`: filter by parent; bad/unknown/0/other language → 400.
#[test]
fn post_parent_filter() {
    let s = server_a();
    let y = 2039;
    let mk = |t: &str, d: u32, extra: Value| {
        merge(
            ev(
                t,
                &format!("{y}-06-{d:02} 10:00:00"),
                &format!("{y}-06-{d:02} 11:00:00"),
            ),
            extra,
        )
    };
    let p = id(&create(s, &ADMIN, mk("Parent", 1, json!({}))));
    let c1 = id(&create(
        s,
        &ADMIN,
        mk("Child one", 3, json!({"post_parent": p})),
    ));
    let c2 = id(&create(
        s,
        &ADMIN,
        mk("Child two", 2, json!({"post_parent": p})),
    ));
    let g = id(&create(
        s,
        &ADMIN,
        mk("Grandchild", 4, json!({"post_parent": c1})),
    ));
    let _o = id(&create(s, &ADMIN, mk("Orphan", 5, json!({}))));
    let dp = id(&create(
        s,
        &ADMIN,
        mk("Draft parent", 6, json!({"status": "draft"})),
    ));
    let dc = id(&create(
        s,
        &ADMIN,
        mk("Child of draft", 7, json!({"post_parent": dp})),
    ));
    let es = id(&create_seg(s, "/es", &ADMIN, mk("Padre", 8, json!({}))));
    let venue = id(&s.create(
        &ADMIN,
        &format!("{NS}/venues"),
        &json!({"venue": "Tokparent Hall"}),
    ));

    let r = anon(s, &year(y).p("post_parent", p).s());
    let v = ok(&r);
    assert_eq!(ids(&v), vec![c2, c1], "direct children, by start");
    let qs = year_link(10, y)
        .p("status", "publish")
        .p("post_parent", p)
        .s();
    assert_links(s, &r, &v, "", 1, &qs);
    assert_eq!(
        ids(&ok(&anon(s, &year(y).p("post_parent", c1).s()))),
        vec![g]
    );
    assert_eq!(
        ids(&ok(&anon(s, &year(y).p("post_parent", dp).s()))),
        vec![dc],
        "the parent may have any status"
    );
    assert_eq!(
        ids(&ok(&anon(s, &year(y).p("post_parent", g).s()))),
        Vec::<u64>::new()
    );
    for val in [
        "0".to_string(),
        "foo-bar".to_string(),
        "99999999".to_string(),
        "-1".to_string(),
        "1.5".to_string(),
        venue.to_string(),
        es.to_string(),
    ] {
        assert_invalid_param_names(
            &anon(s, &year(y).p("post_parent", &val).s()),
            &["post_parent"],
        );
    }
    // The es event is a valid parent in es.
    let v = ok(&anon(
        s,
        &year(y)
            .p("post_parent", es)
            .p("translation_language", "es")
            .s(),
    ));
    assert_eq!(v["total"], 0);
}

/// geoloc with and without a point; radius in km and mi; one of lat/lng missing → 400.
#[test]
fn geoloc_filter() {
    let s = server_a();
    let y = 2042;
    let vpath = format!("{NS}/venues");
    // ~10.95 km and ~222.4 km from (10, 20).
    let near = id(&s.create(
        &ADMIN,
        &vpath,
        &json!({"venue": "Tokgeo Near Hall", "geo_lat": 10, "geo_lng": 20.1}),
    ));
    let far = id(&s.create(
        &ADMIN,
        &vpath,
        &json!({"venue": "Tokgeo Far Hall", "geo_lat": 12, "geo_lng": 20}),
    ));
    let plain = id(&s.create(&ADMIN, &vpath, &json!({"venue": "Tokgeo Plain Hall"})));
    let mk = |t: &str, d: u32, extra: Value| {
        merge(
            ev(
                t,
                &format!("{y}-03-{d:02} 10:00:00"),
                &format!("{y}-03-{d:02} 11:00:00"),
            ),
            extra,
        )
    };
    let e1 = id(&create(
        s,
        &ADMIN,
        mk("Geo near", 1, json!({"venue": near})),
    ));
    let e2 = id(&create(s, &ADMIN, mk("Geo far", 2, json!({"venue": far}))));
    let e3 = id(&create(
        s,
        &ADMIN,
        mk("Geo plain", 3, json!({"venue": plain})),
    ));
    let e4 = id(&create(s, &ADMIN, mk("Geo none", 4, json!({}))));

    let by = |extra: &str| ids(&ok(&anon(s, &format!("{}&{extra}", year(y).s()))));
    assert_eq!(by("geoloc=1"), vec![e1, e2], "venues with coordinates");
    assert_eq!(by("geoloc=true"), vec![e1, e2]);
    assert_eq!(by("geoloc=0"), vec![e1, e2, e3, e4]);
    assert_eq!(
        by("geoloc=false&geoloc_lat=10"),
        vec![e1, e2, e3, e4],
        "lat/lng ignored without geoloc"
    );
    assert_eq!(by("geoloc_lat=10&geoloc_lng=20"), vec![e1, e2, e3, e4]);
    assert_eq!(
        by("geoloc=1&geoloc_lat=10&geoloc_lng=20"),
        vec![e1],
        "default 25 mi"
    );
    assert_eq!(
        by("geoloc=1&geoloc_lat=10&geoloc_lng=20&geoloc_radius=200&geoloc_unit=km"),
        vec![e1]
    );
    assert_eq!(
        by("geoloc=1&geoloc_lat=10&geoloc_lng=20&geoloc_radius=250&geoloc_unit=km"),
        vec![e1, e2]
    );
    assert_eq!(
        by("geoloc=1&geoloc_lat=10&geoloc_lng=20&geoloc_radius=130"),
        vec![e1],
        "130 mi ≈ 209 km"
    );
    assert_eq!(
        by("geoloc=1&geoloc_lat=10&geoloc_lng=20&geoloc_radius=150"),
        vec![e1, e2],
        "150 mi ≈ 241 km"
    );
    assert_eq!(
        by("geoloc=1&geoloc_lat=10&geoloc_lng=20&geoloc_radius=150&geoloc_unit=mi"),
        vec![e1, e2]
    );
    assert_eq!(
        by("geoloc=1&geoloc_lat=10&geoloc_lng=20&geoloc_radius=150&geoloc_unit=km"),
        vec![e1]
    );
    assert_eq!(
        by("geoloc=1&geoloc_lat=10&geoloc_lng=20&geoloc_radius=10&geoloc_unit=km"),
        Vec::<u64>::new()
    );
    assert_eq!(
        by("geoloc=1&geoloc_lat=10&geoloc_lng=20&geoloc_radius=11.5&geoloc_unit=km"),
        vec![e1]
    );

    // Links. The numbers are non-integral so that echoing them as given and rendering the
    // parsed number agree (the contract does not say which; `10` could come back as `10.0`).
    // From (9.5, 20.5): near ≈ 70 km, far ≈ 282 km.
    let r = anon(
        s,
        &year(y)
            .p("geoloc", "true")
            .p("geoloc_lat", "9.5")
            .p("geoloc_lng", "20.5")
            .p("geoloc_radius", "300.5")
            .p("geoloc_unit", "km")
            .p("featured", "0")
            .s(),
    );
    let v = ok(&r);
    assert_eq!(ids(&v), vec![e1, e2]);
    let qs = year_link(10, y)
        .p("featured", "0")
        .p("geoloc", "1")
        .p("geoloc_lat", "9.5")
        .p("geoloc_lng", "20.5")
        .p("geoloc_radius", "300.5")
        .p("geoloc_unit", "km")
        .p("status", "publish")
        .s();
    assert_links(s, &r, &v, "", 1, &qs);
    // geoloc=false writes nothing.
    let r = anon(s, &year(y).p("geoloc", "false").s());
    let v = ok(&r);
    assert_links(
        s,
        &r,
        &v,
        "",
        1,
        &year_link(10, y).p("status", "publish").s(),
    );

    // Errors.
    let g = |extra: &str| anon(s, &format!("{}&geoloc=1&{extra}", year(y).s()));
    assert_invalid_param_names(&g("geoloc_lat=10"), &["geoloc_lng"]);
    assert_invalid_param_names(&g("geoloc_lng=20"), &["geoloc_lat"]);
    assert_invalid_param_names(&g("geoloc_lat=91&geoloc_lng=20"), &["geoloc_lat"]);
    assert_invalid_param_names(&g("geoloc_lat=10&geoloc_lng=-181"), &["geoloc_lng"]);
    assert_invalid_param_names(&g("geoloc_lat=north&geoloc_lng=20"), &["geoloc_lat"]);
    assert_invalid_param_names(
        &g("geoloc_lat=10&geoloc_lng=20&geoloc_radius=0"),
        &["geoloc_radius"],
    );
    assert_invalid_param_names(
        &g("geoloc_lat=10&geoloc_lng=20&geoloc_radius=-5"),
        &["geoloc_radius"],
    );
    assert_invalid_param_names(
        &g("geoloc_lat=10&geoloc_lng=20&geoloc_unit=ft"),
        &["geoloc_unit"],
    );
    bad_sub(&anon(s, "geoloc=yes"), "geoloc", "rest_invalid_type");
    // A venue that moves takes its events with it (a radius is resolved to the venues in it).
    let moved = s
        .req("POST", &format!("{vpath}/{far}"))
        .user(&ADMIN)
        .json_body(&json!({"geo_lat": 10, "geo_lng": 19.95}))
        .send();
    assert_eq!(moved.status, 200, "{}", moved.describe());
    assert_eq!(
        by("geoloc=1&geoloc_lat=10&geoloc_lng=20&geoloc_radius=11.5&geoloc_unit=km"),
        vec![e1, e2]
    );
}

// =============================================================================================
// Password-protected events
// =============================================================================================

/// The masking of a locked event applied to an unlocked list item.
fn masked(full: &Value) -> Value {
    let mut m = full.clone();
    let o = m.as_object_mut().unwrap();
    let reps = [
        ("description", json!("")),
        ("excerpt", json!("")),
        ("image", json!(false)),
        ("all_day", Value::Null),
        ("cost", json!("")),
        (
            "cost_details",
            json!({"currency_symbol": "", "currency_position": "", "currency_code": "", "values": []}),
        ),
        ("website", json!("")),
        ("show_map", Value::Null),
        ("show_map_link", Value::Null),
        ("hide_from_listings", Value::Null),
        ("sticky", Value::Null),
        ("featured", Value::Null),
        ("categories", json!([])),
        ("tags", json!([])),
        ("venue", json!([])),
        ("organizer", json!([])),
        ("custom_fields", json!([])),
        ("ticketed", Value::Null),
    ];
    for (k, v) in reps {
        assert!(o.contains_key(k), "{k} present");
        o.insert(k.to_string(), v);
    }
    m
}

/// Password-protected events are listed masked (exact values and key
/// order), unlocked by the right `password` or by `context=edit` for callers who may edit them.
#[test]
fn password_protected_events_masked() {
    let s = server_a();
    let y = 2040;
    let pw = "s3cret pass";
    let full_body = merge(
        ev(
            "Secret supper",
            &format!("{y}-05-01 19:00:00"),
            &format!("{y}-05-01 22:00:00"),
        ),
        json!({
            "description": "Menu inside",
            "excerpt": "Short",
            "image": "https://img.example.net/tokpw-supper.png",
            "cost": "$10",
            "website": "https://example.org/supper",
            "show_map": true,
            "show_map_link": true,
            "sticky": true,
            "featured": true,
            "ticketed": true,
            "categories": "Tokpw Dining",
            "tags": "Tokpw Tag",
            "venue": {"venue": "Tokpw Cellar", "city": "Porto"},
            "organizer": [{"organizer": "Tokpw Chef"}],
            "password": pw,
        }),
    );
    let pw_ev = create(s, &ADMIN, full_body);
    let p = id(&pw_ev);
    let p2 = id(&create(
        s,
        &ADMIN,
        merge(
            ev(
                "Second secret",
                &format!("{y}-05-02 19:00:00"),
                &format!("{y}-05-02 22:00:00"),
            ),
            json!({"password": "other", "description": "Hidden too"}),
        ),
    ));
    let n = id(&create(
        s,
        &ADMIN,
        merge(
            ev(
                "Open supper",
                &format!("{y}-05-03 19:00:00"),
                &format!("{y}-05-03 22:00:00"),
            ),
            json!({"description": "Everyone"}),
        ),
    ));
    let yq = year(y);

    // Unlocked with the right password (only that event).
    let r = anon(s, &yq.clone().p("password", pw).s());
    let v = ok(&r);
    assert_eq!(ids(&v), vec![p, p2, n]);
    let full = item(&v, p);
    assert_eq!(full["description"], "<p>Menu inside</p>");
    assert_eq!(full["cost"], "$10");
    assert_eq!(full["featured"], true);
    assert_eq!(full["venue"]["venue"], "Tokpw Cellar");
    assert_eq!(
        keys(&full["cost_details"]),
        vec![
            "currency_symbol",
            "currency_code",
            "currency_position",
            "values"
        ],
        "normal cost_details key order"
    );
    assert_eq!(
        item(&v, p2)["description"],
        "",
        "other password: still masked"
    );
    assert_eq!(item(&v, p2)["featured"], Value::Null);
    // The password never travels in links.
    assert_links(
        s,
        &r,
        &v,
        "",
        1,
        &year_link(10, y).p("status", "publish").s(),
    );

    // Anonymous without password: masked, exactly.
    let r = anon(s, &yq.s());
    let v = ok(&r);
    assert_eq!(ids(&v), vec![p, p2, n], "protected events are listed");
    let m = item(&v, p);
    let want = masked(&full);
    assert!(same_json(&m, &want), "masked item\n got: {m}\nwant: {want}");
    assert_eq!(
        keys(&m["cost_details"]),
        vec![
            "currency_symbol",
            "currency_position",
            "currency_code",
            "values"
        ],
        "masked cost_details key order"
    );
    assert_eq!(m["title"], "Secret supper");
    assert_eq!(m["start_date"], format!("{y}-05-01 19:00:00"));
    assert_eq!(
        item(&v, n)["description"],
        "<p>Everyone</p>",
        "unprotected unaffected"
    );

    // Wrong or empty password: masked (an empty one unlocks nothing and is not an error).
    for val in ["wrong", "", "S3CRET PASS", "s3cret pass "] {
        let v = ok(&anon(s, &yq.clone().p("password", val).s()));
        assert!(
            same_json(&item(&v, p), &want),
            "password={val:?} must not unlock"
        );
    }
    // Administrators need the password or context=edit.
    let v = ok(&as_user(s, &yq.s(), &ADMIN));
    assert!(same_json(&item(&v, p), &want), "admin without password");
    for u in [&ADMIN, &EDITOR] {
        let r = as_user(s, &yq.clone().p("context", "edit").s(), u);
        let v = ok(&r);
        assert_eq!(
            item(&v, p)["description"],
            "<p>Menu inside</p>",
            "{}",
            u.name
        );
        assert_eq!(
            item(&v, p2)["description"],
            "<p>Hidden too</p>",
            "{}",
            u.name
        );
        assert_links(s, &r, &v, "", 1, &year_link(10, y).p("status", "any").s());
    }
    // Callers who cannot edit the event stay masked even with context=edit.
    for u in [&AUTHOR, &CONTRIBUTOR, &SUBSCRIBER] {
        let v = ok(&as_user(s, &yq.clone().p("context", "edit").s(), u));
        assert!(same_json(&item(&v, p), &want), "{} context=edit", u.name);
    }
    let v = ok(&anon(s, &yq.clone().p("context", "edit").s()));
    assert!(same_json(&item(&v, p), &want), "anonymous context=edit");

    // Single GET: 403 without the password.
    let r = s.get(&format!("{NS}/events/{p}"));
    assert_plain_error(&r, 403, "event-password-protected");
    let r = s.get(&format!("{NS}/events/{p}?password={}", form_encode(pw)));
    assert_eq!(r.status, 200, "{}", r.describe());
}

// =============================================================================================
// Languages
// =============================================================================================

/// The archive lists the effective language; links keep the path segment and carry
/// an explicit `translation_language`.
#[test]
fn languages() {
    let s = server_a();
    let y = 2041;
    let mk = |t: &str, d: u32| {
        ev(
            t,
            &format!("{y}-06-{d:02} 10:00:00"),
            &format!("{y}-06-{d:02} 11:00:00"),
        )
    };
    let en1 = id(&create(s, &ADMIN, mk("Lingo concert", 1)));
    let es1_ev = create_seg(s, "/es", &ADMIN, mk("Concierto lingo", 2));
    assert_eq!(es1_ev["language"], "es");
    let es1 = id(&es1_ev);
    let es2 = id(&create(
        s,
        &ADMIN,
        merge(
            mk("Concierto dos", 3),
            json!({"translation_language": "es", "translation_of": en1}),
        ),
    ));
    let pt1 = id(&create(
        s,
        &ADMIN,
        merge(mk("Concerto", 4), json!({"translation_language": "pt-br"})),
    ));

    // en (no segment): only en.
    let v = ok(&anon(s, &year(y).s()));
    assert_eq!(ids(&v), vec![en1]);
    assert_eq!(item(&v, en1)["translations"], json!({"en": en1, "es": es2}));

    // Explicit translation_language=es: es events, no segment, parameter in the links.
    let r = anon(s, &year(y).p("translation_language", "es").s());
    let v = ok(&r);
    assert_eq!(ids(&v), vec![es1, es2]);
    for e in v["events"].as_array().unwrap() {
        assert_eq!(e["language"], "es");
        assert_eq!(
            e["rest_url"],
            format!("{}{NS}/events/{}", s.public, id(e)),
            "item links use the request's (empty) segment"
        );
    }
    let qs = year_link(10, y)
        .p("status", "publish")
        .p("translation_language", "es")
        .s();
    assert_links(s, &r, &v, "", 1, &qs);

    // /es segment: es events, /es links, no translation_language.
    let r = get_seg(s, "/es", &year(y).s(), None);
    let v = ok(&r);
    assert_eq!(ids(&v), vec![es1, es2]);
    assert_eq!(
        item(&v, es1)["rest_url"],
        format!("{}/es{NS}/events/{es1}", s.public)
    );
    assert_links(
        s,
        &r,
        &v,
        "/es",
        1,
        &year_link(10, y).p("status", "publish").s(),
    );
    // Pagination under /es.
    let r = get_seg(s, "/es", &year(y).p("per_page", 1).s(), None);
    let v = ok(&r);
    assert_eq!(ids(&v), vec![es1]);
    assert_links(
        s,
        &r,
        &v,
        "/es",
        1,
        &year_link(1, y).p("status", "publish").s(),
    );
    let r2 = follow(s, v["next_rest_url"].as_str().unwrap(), None);
    let v2 = ok(&r2);
    assert_eq!(ids(&v2), vec![es2]);
    assert_links(
        s,
        &r2,
        &v2,
        "/es",
        2,
        &year_link(1, y).p("status", "publish").s(),
    );

    // /es segment with translation_language=pt-br.
    let r = get_seg(
        s,
        "/es",
        &year(y).p("translation_language", "pt-br").s(),
        None,
    );
    let v = ok(&r);
    assert_eq!(ids(&v), vec![pt1]);
    let qs = year_link(10, y)
        .p("status", "publish")
        .p("translation_language", "pt-br")
        .s();
    assert_links(s, &r, &v, "/es", 1, &qs);
    let r = get_seg(s, "/es", &year(y).p("translation_language", "en").s(), None);
    assert_eq!(ids(&ok(&r)), vec![en1]);
    assert_eq!(
        ids(&ok(&get_seg(s, "/pt-br", &year(y).s(), None))),
        vec![pt1]
    );

    // Bad languages.
    for val in ["fr", "PT-BR", "ES"] {
        bad_sub(
            &anon(s, &q().p("translation_language", val).s()),
            "translation_language",
            "rest_not_in_enum",
        );
    }
    assert_invalid_param_names(&anon(s, "translation_language="), &["translation_language"]);
    let r = s.get(&format!("/en{NS}/events"));
    assert_error(&r, 404, "rest_no_route");
}

// =============================================================================================
// Item shape
// =============================================================================================

fn strip_json_ld(v: &mut Value) {
    if let Some(o) = v.as_object_mut() {
        o.shift_remove("json_ld");
    }
}

/// List items are the event representation without `json_ld` (nor the embedded venue's or
/// organizers' `json_ld`); no venue → `[]`.
#[test]
fn list_item_is_the_representation_without_json_ld() {
    let s = server_a();
    let y = 2047;
    let e = id(&create(
        s,
        &ADMIN,
        merge(
            ev(
                "Shape check",
                &format!("{y}-07-01 19:30:00"),
                &format!("{y}-07-01 23:00:00"),
            ),
            json!({
                "timezone": "Europe/Berlin",
                "description": "Three bands.",
                "cost": ["10€", "25€"],
                "venue": {"venue": "Tokshape Pier", "city": "Hamburg"},
                "organizer": [{"organizer": "Tokshape Club"}],
                "categories": "Tokshape Music",
                "tags": "Tokshape Tag",
                "featured": true,
            }),
        ),
    ));
    let bare = id(&create(
        s,
        &ADMIN,
        ev(
            "Shape bare",
            &format!("{y}-07-02 10:00:00"),
            &format!("{y}-07-02 11:00:00"),
        ),
    ));
    let v = ok(&anon(s, &year(y).s()));
    assert_eq!(ids(&v), vec![e, bare]);
    for eid in [e, bare] {
        let listed = item(&v, eid);
        let r = s.get(&format!("{NS}/events/{eid}"));
        assert_eq!(r.status, 200, "{}", r.describe());
        let mut single = r.json();
        strip_json_ld(&mut single);
        if single["venue"].is_object() {
            strip_json_ld(&mut single["venue"]);
        }
        if let Some(orgs) = single["organizer"].as_array_mut() {
            for o in orgs {
                strip_json_ld(o);
            }
        }
        assert!(
            same_json(&listed, &single),
            "list item of {eid} differs from the single representation without json_ld\n list: {listed}\nsingle: {single}"
        );
    }
    let b = item(&v, bare);
    assert_eq!(b["venue"], json!([]));
    assert_eq!(b["organizer"], json!([]));
    assert_eq!(b["categories"], json!([]));
    assert_eq!(b["custom_fields"], json!([]));
    assert_eq!(b["post_parent"], 0);
    assert_eq!(b["ticketed"], false);
    assert_eq!(b["author"], "1");
}
