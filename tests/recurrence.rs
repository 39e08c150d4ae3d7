//! Recurring events (docs/api.md, "Recurring events"), over real HTTP against the binary: a
//! series' occurrences in lists and single reads, their IDs across edits of the series,
//! cancelled occurrences, visibility, refused rules.
//!
//! One shared server; every test names its records with a unique word (`tok()`).

mod common;

use common::node::{ensure_node_modules, node_dir};
use common::python::{python_dir, python_env};
use common::*;
use serde_json::{json, Value};
use std::sync::OnceLock;

fn srv() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(|| Server::start_with_users(&STANDARD_USERS).into_static())
}

fn events() -> String {
    format!("{NS}/events")
}

fn ev(id: i64) -> String {
    format!("{NS}/events/{id}")
}

fn id_of(v: &Value) -> i64 {
    v["id"].as_i64().unwrap_or_else(|| panic!("no id in {v}"))
}

/// A series titled `title` in `zone` from `start` (local, two hours long) with `lines`.
fn series(title: &str, zone: &str, start: &str, lines: &[&str]) -> Value {
    let end = format!(
        "{} {:02}{}",
        &start[..10],
        start[11..13].parse::<u32>().unwrap() + 2,
        &start[13..]
    );
    srv().create(
        &ADMIN,
        &events(),
        &json!({"title": title, "start_date": start, "end_date": end, "timezone": zone,
                "recurrence": lines}),
    )
}

/// The events listed for a search word from 2026 on, as `who`.
fn listed(word: &str, who: Option<&TestUser>) -> Vec<Value> {
    let path = format!(
        "{}?search={word}&start_date=2026-01-01&per_page=50",
        events()
    );
    let r = srv().send("GET", &path, who, None);
    assert_eq!(r.status, 200, "{}", r.describe());
    r.json()["events"].as_array().cloned().unwrap_or_default()
}

fn field(items: &[Value], key: &str) -> Vec<String> {
    items
        .iter()
        .map(|e| match &e[key] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

#[test]
fn a_series_lists_each_occurrence_with_its_own_id_dates_and_page() {
    let word = tok();
    let s = series(
        &format!("Lisbon class {word}"),
        "Europe/Lisbon",
        "2027-03-16 10:00:00",
        &["RRULE:FREQ=WEEKLY;COUNT=4"],
    );
    let series_id = id_of(&s);
    assert_eq!(s["recurrence"], json!(["RRULE:FREQ=WEEKLY;COUNT=4"]), "{s}");
    let items = listed(&word, None);
    assert_eq!(
        field(&items, "start_date"),
        [
            "2027-03-16 10:00:00",
            "2027-03-23 10:00:00",
            "2027-03-30 10:00:00",
            "2027-04-06 10:00:00"
        ]
    );
    // Lisbon moves to summer time on 2027-03-28: the wall clock stays, the instant moves.
    assert_eq!(
        field(&items, "utc_start_date"),
        [
            "2027-03-16 10:00:00",
            "2027-03-23 10:00:00",
            "2027-03-30 09:00:00",
            "2027-04-06 09:00:00"
        ]
    );
    assert_eq!(
        field(&items, "recurrence_id"),
        field(&items, "utc_start_date")
    );
    assert!(items.iter().all(|e| e["series_id"] == json!(series_id)));
    let ids: Vec<i64> = items.iter().map(id_of).collect();
    assert!(!ids.contains(&series_id));
    let mut distinct = ids.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), 4);
    let slug = s["slug"].as_str().unwrap();
    assert_eq!(
        items[1]["url"],
        json!(format!("{}/event/{slug}/2027-03-23/", srv().public))
    );
    // One occurrence by its ID; the series by its own.
    let one = srv().get_ok(&ev(ids[2]), None);
    assert_eq!(one["start_date"], "2027-03-30 10:00:00");
    assert_eq!(one["series_id"], json!(series_id));
    let again = srv().get_ok(&ev(series_id), None);
    assert_eq!(again["recurrence"], s["recurrence"]);
    assert!(again.get("series_id").is_none());
}

#[test]
fn occurrences_keep_their_ids_while_the_rule_keeps_their_start() {
    let word = tok();
    let s = series(
        &format!("Meetup {word}"),
        "America/New_York",
        "2027-01-05 18:00:00",
        &["RRULE:FREQ=MONTHLY;BYDAY=1TU;COUNT=3"],
    );
    let series_id = id_of(&s);
    let before: Vec<i64> = listed(&word, None).iter().map(id_of).collect();
    assert_eq!(before.len(), 3);
    // Another title: the same occurrences, the new title.
    srv().write(
        "PATCH",
        &ev(series_id),
        &ADMIN,
        &json!({"title": format!("Monthly meetup {word}")}),
        200,
    );
    let items = listed(&word, None);
    assert_eq!(items.iter().map(id_of).collect::<Vec<_>>(), before);
    assert!(items
        .iter()
        .all(|e| e["title"].as_str().unwrap().starts_with("Monthly meetup")));
    // A longer rule: the first three keep their IDs.
    srv().write(
        "PATCH",
        &ev(series_id),
        &ADMIN,
        &json!({"recurrence": ["RRULE:FREQ=MONTHLY;BYDAY=1TU;COUNT=5"]}),
        200,
    );
    let longer: Vec<i64> = listed(&word, None).iter().map(id_of).collect();
    assert_eq!(longer.len(), 5);
    assert_eq!(longer[..3], before[..]);
    // Another time of day: other original starts, other IDs; the old ones are gone.
    srv().write(
        "PATCH",
        &ev(series_id),
        &ADMIN,
        &json!({"start_date": "2027-01-05 19:00:00", "end_date": "2027-01-05 21:00:00"}),
        200,
    );
    let moved: Vec<i64> = listed(&word, None).iter().map(id_of).collect();
    assert_eq!(moved.len(), 5);
    assert!(moved.iter().all(|id| !longer.contains(id)));
    let gone = srv().send("GET", &ev(before[0]), None, None);
    assert_eq!(gone.status, 404, "{}", gone.describe());
    // No rule: a single event again.
    let single = srv().write(
        "PATCH",
        &ev(series_id),
        &ADMIN,
        &json!({"recurrence": []}),
        200,
    );
    assert!(single.get("recurrence").is_none(), "{single}");
    assert_eq!(
        listed(&word, None).iter().map(id_of).collect::<Vec<_>>(),
        [series_id]
    );
}

#[test]
fn a_cancelled_occurrence_reads_like_a_trashed_event_and_stays_cancelled() {
    let word = tok();
    let s = series(
        &format!("Festival {word}"),
        "UTC",
        "2027-07-01 20:00:00",
        &["RRULE:FREQ=DAILY;COUNT=5"],
    );
    let ids: Vec<i64> = listed(&word, None).iter().map(id_of).collect();
    let r = srv().send("DELETE", &ev(ids[2]), Some(&ADMIN), None);
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(r.json()["status"], "trash");
    assert_error(
        &srv().send("GET", &ev(ids[2]), None, None),
        403,
        "event-no-longer-available",
    );
    let left: Vec<i64> = listed(&word, None).iter().map(id_of).collect();
    assert_eq!(left, [ids[0], ids[1], ids[3], ids[4]]);
    srv().write(
        "PATCH",
        &ev(id_of(&s)),
        &ADMIN,
        &json!({"title": format!("Summer festival {word}")}),
        200,
    );
    assert_eq!(
        listed(&word, None).iter().map(id_of).collect::<Vec<_>>(),
        left
    );
    // Trashing the series takes every occurrence with it.
    let r = srv().send("DELETE", &ev(id_of(&s)), Some(&ADMIN), None);
    assert_eq!(r.status, 200, "{}", r.describe());
    assert!(listed(&word, None).is_empty());
    assert!(listed(&word, Some(&ADMIN)).is_empty());
}

#[test]
fn a_draft_series_lists_no_occurrence_to_anonymous_callers() {
    let word = tok();
    srv().create(
        &ADMIN,
        &events(),
        &json!({"title": format!("Draft {word}"), "status": "draft",
                "start_date": "2027-02-01 09:00:00", "end_date": "2027-02-01 10:00:00",
                "recurrence": "RRULE:FREQ=WEEKLY;COUNT=3"}),
    );
    assert!(listed(&word, None).is_empty());
    let mine = listed(&format!("{word}&status=draft"), Some(&ADMIN));
    assert_eq!(mine.len(), 3, "{mine:?}");
}

#[test]
fn occurrences_count_as_events_for_categories() {
    let word = tok();
    let s = srv().create(
        &ADMIN,
        &events(),
        &json!({"title": format!("Yoga {word}"), "categories": [format!("cat-{word}")],
                "start_date": "2027-02-01 09:00:00", "end_date": "2027-02-01 10:00:00",
                "recurrence": ["RRULE:FREQ=WEEKLY;COUNT=3"]}),
    );
    let category = s["categories"][0]["id"].as_i64().unwrap();
    let term = srv().get_ok(&format!("{NS}/categories/{category}"), None);
    assert_eq!(term["count"], 3, "{term}");
    let by_category = srv().get_ok(
        &format!("{}?categories={category}&start_date=2026-01-01", events()),
        None,
    );
    assert_eq!(by_category["total"], 3, "{by_category}");
}

#[test]
fn bad_rules_are_refused_naming_recurrence_and_change_nothing() {
    let word = tok();
    for (lines, says) in [
        (json!(["RRULE:FREQ=HOURLY"]), "HOURLY"),
        (
            json!(["RRULE:FREQ=DAILY;COUNT=3;UNTIL=20280101"]),
            "not both",
        ),
        (json!(["RRULE:FREQ=DAILY;UNTIL=21000101"]), "2000"),
        (json!(["RRULE:FREQ=WEEKLY;BYDAY=XX"]), "line 1"),
        (
            json!(["RRULE:FREQ=DAILY;COUNT=1", "EXDATE:20270201T090000"]),
            "no occurrence",
        ),
        (json!([1]), "list"),
    ] {
        let r = srv().send(
            "POST",
            &events(),
            Some(&ADMIN),
            Some(&json!({"title": format!("Bad {word}"),
                         "start_date": "2027-02-01 09:00:00", "end_date": "2027-02-01 10:00:00",
                         "recurrence": lines})),
        );
        let body = assert_invalid_param_names(&r, &["recurrence"]);
        assert!(body.to_string().contains(says), "{lines}: {body}");
    }
    assert!(listed(&word, Some(&ADMIN)).is_empty());
    // An occurrence has no rule of its own.
    series(
        &format!("Series {word}"),
        "UTC",
        "2027-03-01 09:00:00",
        &["RRULE:FREQ=DAILY;COUNT=2"],
    );
    let ids: Vec<i64> = listed(&word, None).iter().map(id_of).collect();
    let r = srv().send(
        "PATCH",
        &ev(ids[1]),
        Some(&ADMIN),
        Some(&json!({"title": "x", "recurrence": ["RRULE:FREQ=DAILY"]})),
    );
    let body = assert_invalid_param_names(&r, &["recurrence"]);
    assert!(body.to_string().contains("change its series"), "{body}");
    assert_eq!(
        srv().get_ok(&ev(ids[1]), None)["title"],
        json!(format!("Series {word}"))
    );
}

// ---------------------------------------------------------------------------------------------
// A corpus of rules, each expanded by almanac and by a calendar client from the feed
// ---------------------------------------------------------------------------------------------

/// One generated series: what is sent, and what is known of it.
#[derive(Debug, Clone)]
struct Case {
    word: String,
    zone: &'static str,
    start: String,
    all_day: bool,
    lines: Vec<String>,
    count: Option<usize>,
}

/// Zones with daylight-saving edges that implementations get wrong: Lisbon (changes at
/// 01:00 UTC), New York, São Paulo while it still had summer time (clocks jumped from
/// midnight), Sydney and Auckland (southern hemisphere), Chatham (a 45-minute offset, changes
/// at 02:45).
const ZONES: [&str; 6] = [
    "Europe/Lisbon",
    "America/New_York",
    "America/Sao_Paulo",
    "Australia/Sydney",
    "Pacific/Chatham",
    "Pacific/Auckland",
];

fn generate(rng: &mut Rng, word: String) -> Case {
    let zone = ZONES[rng.below(ZONES.len() as u64) as usize];
    // Dates near the zones' changes; São Paulo in the years it still changed its clocks.
    let year = if zone == "America/Sao_Paulo" {
        2018
    } else {
        2027
    };
    let month = 1 + rng.below(12);
    let day = 1 + rng.below(28);
    // Wall clocks inside gaps and repeated hours, and ordinary ones.
    let clock = *rng
        .pick(&[
            "00:00", "00:30", "01:30", "02:30", "02:45", "03:15", "09:00", "23:30",
        ])
        .unwrap();
    let all_day = rng.below(8) == 0;
    let start = format!("{year}-{month:02}-{day:02} {clock}:00");
    let freq = *rng.pick(&["DAILY", "WEEKLY", "MONTHLY", "YEARLY"]).unwrap();
    let mut parts = vec![format!("FREQ={freq}")];
    if rng.below(3) == 0 {
        parts.push(format!("INTERVAL={}", 2 + rng.below(2)));
    }
    let days = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"];
    match (freq, rng.below(4)) {
        ("WEEKLY", 0 | 1) => {
            let a = days[rng.below(7) as usize];
            let b = days[rng.below(7) as usize];
            parts.push(format!("BYDAY={a},{b}"));
            if rng.below(2) == 0 {
                parts.push("WKST=SU".into());
            }
        }
        ("MONTHLY", 0) => {
            let n = *rng.pick(&["1", "2", "-1", "-2"]).unwrap();
            parts.push(format!("BYDAY={n}{}", days[rng.below(7) as usize]));
        }
        ("MONTHLY", 1) => {
            parts.push(format!(
                "BYMONTHDAY={}",
                rng.pick(&["1", "15", "-1", "31", "29"]).unwrap()
            ));
        }
        ("MONTHLY", 2) => {
            parts.push("BYDAY=MO,TU,WE,TH,FR".into());
            parts.push(format!("BYSETPOS={}", rng.pick(&["1", "-1", "2"]).unwrap()));
        }
        ("YEARLY", 0) => {
            parts.push(format!("BYMONTH={}", 1 + rng.below(12)));
            parts.push(format!(
                "BYDAY={}{}",
                rng.pick(&["1", "-1", "3"]).unwrap(),
                days[rng.below(7) as usize]
            ));
        }
        ("YEARLY", 1) => {
            parts.push(format!(
                "BYYEARDAY={}",
                rng.pick(&["1", "100", "-1", "200"]).unwrap()
            ));
        }
        ("YEARLY", 2) => {
            parts.push(format!(
                "BYWEEKNO={}",
                rng.pick(&["1", "20", "-1", "53"]).unwrap()
            ));
            parts.push(format!("BYDAY={}", days[rng.below(7) as usize]));
        }
        ("DAILY", 0) => {
            parts.push(format!(
                "BYMONTH={},{}",
                1 + rng.below(12),
                1 + rng.below(12)
            ));
        }
        _ => {}
    }
    let mut count = None;
    match rng.below(3) {
        0 => {
            let n = 2 + rng.below(25) as usize;
            parts.push(format!("COUNT={n}"));
            count = Some(n);
        }
        1 => parts.push(format!(
            "UNTIL={}{:02}{:02}T{:02}0000Z",
            year + 1 + rng.below(2) as i32,
            1 + rng.below(12),
            1 + rng.below(28),
            rng.below(24)
        )),
        // Never ending: only where two years of it stay small.
        _ if freq == "DAILY" => parts.push("COUNT=40".into()),
        _ => {}
    }
    let mut lines = vec![format!("RRULE:{}", parts.join(";"))];
    if rng.below(4) == 0 {
        // An EXDATE on the second day at the series' time, and an extra date.
        let mut d = chrono::NaiveDate::parse_from_str(&start[..10], "%Y-%m-%d").unwrap();
        d = d.succ_opt().unwrap();
        let stamp = d.format("%Y%m%d").to_string();
        if all_day {
            lines.push(format!("EXDATE;VALUE=DATE:{stamp}"));
            lines.push(format!("RDATE;VALUE=DATE:{}0615", year));
        } else {
            let hhmm = clock.replace(':', "");
            lines.push(format!("EXDATE;TZID={zone}:{stamp}T{hhmm}00"));
            lines.push(format!("RDATE;TZID={zone}:{}0615T120000", year));
        }
        count = None;
    }
    Case {
        word,
        zone,
        start,
        all_day,
        lines,
        count,
    }
}

/// Every occurrence of the series the search word names, in order, from the JSON lists.
fn all_listed(word: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for page in 1.. {
        let path = format!(
            "{}?search={word}&start_date=2000-01-01&end_date=9999-12-31&per_page=50&page={page}",
            events()
        );
        let r = srv().send("GET", &path, None, None);
        if r.status == 400 || (r.status == 404 && page > 1) {
            break;
        }
        assert_eq!(r.status, 200, "{}", r.describe());
        let items = r.json()["events"].as_array().cloned().unwrap_or_default();
        let last = items.len() < 50;
        out.extend(items);
        if last {
            break;
        }
    }
    out
}

/// ICAL.js's instances of each VEVENT of `feed`, up to `until` (UTC).
fn client_instances(feed: &str, until: &str) -> serde_json::Map<String, Value> {
    let mut node = std::process::Command::new("node");
    node.arg(node_dir().join("instances.mjs"))
        .current_dir(node_dir());
    feed_instances(
        node,
        "instances.mjs",
        "node runs (Node.js 20+ is needed)",
        feed,
        until,
    )
}

/// recurring-ical-events' instances of each VEVENT of `feed`, up to `until` (UTC), as
/// [`client_instances`].
fn python_instances(feed: &str, until: &str) -> serde_json::Map<String, Value> {
    let mut python = std::process::Command::new(python_env());
    python
        .arg(python_dir().join("instances.py"))
        .current_dir(python_dir());
    feed_instances(
        python,
        "instances.py",
        "the venv's python runs",
        feed,
        until,
    )
}

/// What `reader` (the command running `script`) prints for `feed` on its stdin and `until`.
fn feed_instances(
    mut reader: std::process::Command,
    script: &str,
    runs: &str,
    feed: &str,
    until: &str,
) -> serde_json::Map<String, Value> {
    use std::io::Write;
    let mut child = reader
        .arg(until)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect(runs);
    child
        .stdin
        .take()
        .unwrap()
        .write_all(feed.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{script} failed: {}\n{feed}",
        String::from_utf8_lossy(&out.stderr)
    );
    match serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{script} prints JSON: {e}"))
    {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

#[test]
fn every_series_of_a_rule_corpus_expands_as_a_calendar_client_expands_its_feed() {
    ensure_node_modules(&["ical.js/dist/ical.js"]);
    python_env();
    let mut rng = Rng::new(0x5e41e5);
    let cases: Vec<Case> = (0..260)
        .map(|_| {
            let word = unique_word(&mut rng);
            generate(&mut rng, word)
        })
        .collect();
    let outcomes = par_map(&cases, |case| {
        let end = if case.all_day {
            case.start.clone()
        } else {
            // One hour on the same wall clock date (23:30 goes past midnight).
            let t =
                chrono::NaiveDateTime::parse_from_str(&case.start, "%Y-%m-%d %H:%M:%S").unwrap();
            (t + chrono::Duration::hours(1))
                .format("%Y-%m-%d %H:%M:%S")
                .to_string()
        };
        let r = srv().send(
            "POST",
            &events(),
            Some(&ADMIN),
            Some(
                &json!({"title": format!("Corpus {}", case.word), "timezone": case.zone,
                         "start_date": case.start, "end_date": end, "all_day": case.all_day,
                         "recurrence": case.lines}),
            ),
        );
        if r.status == 400 {
            return None;
        }
        assert_eq!(r.status, 201, "{case:?}: {}", r.describe());
        let series_id = id_of(&r.json());
        let listed = all_listed(&case.word);
        let ours: Vec<String> = listed
            .iter()
            .map(|e| {
                if case.all_day {
                    e["start_date"].as_str().unwrap()[..10].to_string()
                } else {
                    e["utc_start_date"].as_str().unwrap().to_string()
                }
            })
            .collect();
        assert!(!ours.is_empty(), "{case:?}");
        if let Some(n) = case.count {
            assert_eq!(ours.len(), n, "{case:?}: COUNT={n} gave {ours:?}");
        }
        let feed = srv()
            .send("GET", &format!("{NS}/events/{series_id}.ics"), None, None)
            .text();
        // A never-ending rule has occurrences up to the horizon; the client goes on.
        let until = match listed.last().unwrap() {
            // A date's instances are compared as dates.
            _ if case.all_day => format!("{}T23:59:59", &ours.last().unwrap()),
            last => last["utc_start_date"].as_str().unwrap().replace(' ', "T"),
        };
        let mut ours = ours;
        ours.sort();
        // A series is a VEVENT for its rule and one for each occurrence outside it.
        let mut readings = Vec::new();
        // ICAL.js leaves YEARLY;BYWEEKNO unexpanded (its year expansion has no case for it):
        // those rules are checked by recurring-ical-events and the unit tests' RFC examples.
        if !case.lines[0].contains("BYWEEKNO") {
            readings.push(("ICAL.js", client_instances(&feed, &until)));
        }
        readings.push(("recurring-ical-events", python_instances(&feed, &until)));
        for (client, instances) in readings {
            let mut theirs: Vec<String> = instances
                .values()
                .flat_map(|v| v.as_array().cloned().unwrap_or_default())
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            theirs.sort();
            if ours != theirs {
                let only = |a: &[String], b: &[String]| -> Vec<String> {
                    a.iter().filter(|x| !b.contains(x)).cloned().collect()
                };
                panic!(
                    "{case:?}: only almanac has {:?}, only {client} has {:?} ({} and {} in all)\n{feed}",
                    only(&ours, &theirs),
                    only(&theirs, &ours),
                    ours.len(),
                    theirs.len()
                );
            }
        }
        Some(ours.len())
    });
    let accepted: Vec<usize> = outcomes.iter().flatten().copied().collect();
    assert!(
        accepted.len() >= 200,
        "only {} of {} rules were compared",
        accepted.len(),
        cases.len()
    );
}

#[test]
fn each_occurrence_has_a_page_that_offers_the_next_dates() {
    let word = tok();
    let s = series(
        &format!("Choir {word}"),
        "Europe/Lisbon",
        "2027-05-04 19:00:00",
        &["RRULE:FREQ=WEEKLY;COUNT=8"],
    );
    let items = listed(&word, None);
    let url = items[1]["url"].as_str().unwrap();
    let slug = s["slug"].as_str().unwrap();
    assert!(
        url.ends_with(&format!("/event/{slug}/2027-05-11/")),
        "{url}"
    );
    let path = &url[srv().public.len()..];
    let page = srv().send("GET", path, None, None);
    assert_eq!(page.status, 200, "{}", page.describe());
    let html = page.text();
    assert!(html.contains(&format!("Choir {word}")), "{html}");
    assert!(html.contains("Next dates"), "{html}");
    assert!(html.contains("Every week, 8 times"), "{html}");
    // UNTIL at 23:59:59 UTC is the next day in Lisbon's summer: the words name the last one.
    let until = series(
        &format!("Reading {word}"),
        "Europe/Lisbon",
        "2027-05-04 19:00:00",
        &["RRULE:FREQ=WEEKLY;BYDAY=TU;UNTIL=20270629T235959Z"],
    );
    let page = srv().send(
        "GET",
        &format!("/event/{}/2027-05-11/", until["slug"].as_str().unwrap()),
        None,
        None,
    );
    assert!(
        page.text()
            .contains("Every week on Tuesday, until June 29, 2027"),
        "{}",
        page.text()
    );
    for later in [
        "2027-05-18",
        "2027-05-25",
        "2027-06-01",
        "2027-06-08",
        "2027-06-15",
    ] {
        assert!(
            html.contains(&format!("/event/{slug}/{later}/")),
            "{later} missing: {html}"
        );
    }
    assert!(
        !html.contains(&format!("/event/{slug}/2027-06-22/")),
        "only five"
    );
    // Under another language's segment, the page of the series' language.
    let pt = srv().send("GET", &format!("/pt-br{path}"), None, None);
    assert_eq!(pt.status, 303, "{}", pt.describe());
    assert_eq!(pt.header("location"), Some(url));
    // A cancelled occurrence has no page; a date without one neither.
    let r = srv().send("DELETE", &ev(id_of(&items[1])), Some(&ADMIN), None);
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(srv().send("GET", path, None, None).status, 404);
    let none = format!("/event/{slug}/2027-05-12/");
    assert_eq!(srv().send("GET", &none, None, None).status, 404);
}

#[test]
fn a_changed_occurrence_keeps_its_changes_and_id_and_feeds_name_it_by_its_original_start() {
    ensure_node_modules(&["ical.js/dist/ical.js"]);
    let word = tok();
    let s = series(
        &format!("Workshop {word}"),
        "America/New_York",
        "2027-03-02 18:00:00",
        &["RRULE:FREQ=WEEKLY;COUNT=5"],
    );
    let series_id = id_of(&s);
    let ids: Vec<i64> = listed(&word, None).iter().map(id_of).collect();
    // The third one moves an hour later and gets its own title.
    let changed = srv().write(
        "PATCH",
        &ev(ids[2]),
        &ADMIN,
        &json!({"title": format!("Special workshop {word}"),
                "start_date": "2027-03-16 19:00:00", "end_date": "2027-03-16 21:00:00"}),
        200,
    );
    assert_eq!(id_of(&changed), ids[2]);
    assert_eq!(changed["series_id"], json!(series_id));
    assert_eq!(changed["recurrence_id"], "2027-03-16 22:00:00");
    assert_eq!(changed["utc_start_date"], "2027-03-16 23:00:00");
    // The series changes its title: the exception keeps its own, and its ID.
    srv().write(
        "PATCH",
        &ev(series_id),
        &ADMIN,
        &json!({"title": format!("Evening workshop {word}")}),
        200,
    );
    let items = listed(&word, None);
    assert_eq!(items.iter().map(id_of).collect::<Vec<_>>(), ids);
    let titles = field(&items, "title");
    assert!(titles[2].starts_with("Special workshop"), "{titles:?}");
    assert!(titles[0].starts_with("Evening workshop"), "{titles:?}");
    // The feed: one series, the exception as a VEVENT of it with RECURRENCE-ID.
    let feed = srv()
        .send(
            "GET",
            &format!("{NS}/events.ics?search={word}&start_date=2026-01-01"),
            None,
            None,
        )
        .text();
    assert_eq!(feed.matches("BEGIN:VEVENT").count(), 2, "{feed}");
    assert!(
        feed.contains("RECURRENCE-ID;TZID=America/New_York:20270316T180000"),
        "{feed}"
    );
    let instances = client_instances(&feed, "2100-01-01T00:00:00");
    let theirs: Vec<String> = instances[&format!("{series_id}@127.0.0.1")]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(theirs, field(&items, "utc_start_date"), "{feed}");
    // Moving the series to another day of the week leaves no place for the exception.
    srv().write(
        "PATCH",
        &ev(series_id),
        &ADMIN,
        &json!({"start_date": "2027-03-03 18:00:00", "end_date": "2027-03-03 20:00:00"}),
        200,
    );
    assert_eq!(srv().send("GET", &ev(ids[2]), None, None).status, 404);
}

#[test]
fn this_and_following_splits_a_series_keeping_every_occurrence_id() {
    let word = tok();
    let s = series(
        &format!("Course {word}"),
        "Europe/Lisbon",
        "2027-09-07 18:00:00",
        &["RRULE:FREQ=WEEKLY;COUNT=6"],
    );
    let first = id_of(&s);
    let ids: Vec<i64> = listed(&word, None).iter().map(id_of).collect();
    assert_eq!(ids.len(), 6);
    // From the fourth on: another title and an hour later.
    let next = srv().write(
        "PATCH",
        &format!("{}?scope=following", ev(ids[3])),
        &ADMIN,
        &json!({"title": format!("Advanced course {word}"),
                "start_date": "2027-09-28 19:00:00", "end_date": "2027-09-28 21:00:00"}),
        200,
    );
    let second = id_of(&next);
    assert!(second != first && !ids.contains(&second), "{next}");
    assert_eq!(next["recurrence"], json!(["RRULE:FREQ=WEEKLY;COUNT=3"]));
    let old = srv().get_ok(&ev(first), None);
    assert_eq!(
        old["recurrence"],
        json!(["RRULE:FREQ=WEEKLY;UNTIL=20270928T165959Z"])
    );
    let items = listed(&word, None);
    assert_eq!(
        field(&items, "start_date"),
        [
            "2027-09-07 18:00:00",
            "2027-09-14 18:00:00",
            "2027-09-21 18:00:00",
            "2027-09-28 19:00:00",
            "2027-10-05 19:00:00",
            "2027-10-12 19:00:00"
        ]
    );
    let series_ids: Vec<i64> = items
        .iter()
        .map(|e| e["series_id"].as_i64().unwrap())
        .collect();
    assert_eq!(series_ids, [first, first, first, second, second, second]);
    let titles = field(&items, "title");
    assert!(
        titles[2].starts_with("Course") && titles[3].starts_with("Advanced"),
        "{titles:?}"
    );
    // The occurrences moved to the new series at another time get new IDs; the first three
    // keep theirs.
    let after: Vec<i64> = items.iter().map(id_of).collect();
    assert_eq!(after[..3], ids[..3]);
    // Split at the same time of day, the moved occurrences keep their IDs too.
    let later = srv().write(
        "PATCH",
        &format!("{}?scope=following", ev(after[4])),
        &ADMIN,
        &json!({"title": format!("Final course {word}")}),
        200,
    );
    let again: Vec<i64> = listed(&word, None).iter().map(id_of).collect();
    assert_eq!(again, after);
    assert_eq!(later["recurrence"], json!(["RRULE:FREQ=WEEKLY;COUNT=2"]));
    // On a single event, `scope=following` is refused.
    let single = srv().create(
        &ADMIN,
        &events(),
        &json!({"title": format!("Single {word}"), "start_date": "2027-09-01 10:00:00",
                "end_date": "2027-09-01 11:00:00"}),
    );
    let r = srv().send(
        "PATCH",
        &format!("{}?scope=following", ev(id_of(&single))),
        Some(&ADMIN),
        Some(&json!({"title": "x"})),
    );
    assert_invalid_param_names(&r, &["scope"]);
}

/// A series write is one transaction: killed with SIGKILL among series writes, the server
/// restarts with every acknowledged series and its occurrences as acknowledged, the write in
/// flight wholly applied or wholly absent, and no occurrence without its series.
#[test]
fn series_writes_survive_sigkill_whole() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let (_tmp, dir) = fresh_data_dir(&[ADMIN]);
    let srv = Server::start(serve_cmd(&dir), None, "server");
    let http = Http::new(
        &srv.public,
        Some(&ADMIN),
        std::time::Duration::from_secs(20),
    );
    let word = tok();
    let stop = AtomicBool::new(false);
    let acknowledged = AtomicUsize::new(0);
    // (series ID, occurrences acknowledged, occurrences of the write in flight if unanswered)
    let outcome: Vec<(i64, usize, Option<usize>)> = std::thread::scope(|sc| {
        let writer = sc.spawn(|| {
            let mut known: Vec<(i64, usize, Option<usize>)> = Vec::new();
            for n in 0usize.. {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let count = 3 + n % 5;
                let body = json!({"title": format!("Kept {word} {n}"),
                                  "start_date": "2031-01-06 10:00:00",
                                  "end_date": "2031-01-06 11:00:00",
                                  "recurrence": [format!("RRULE:FREQ=DAILY;COUNT={count}")]});
                let Ok(r) = http.try_send("POST", "/events", Some(&body)) else {
                    break;
                };
                if r.status != 201 {
                    break;
                }
                let id = id_of(&r.body);
                known.push((id, count, None));
                acknowledged.fetch_add(1, Ordering::SeqCst);
                let longer = count + 4;
                let r = http.try_send(
                    "PATCH",
                    &format!("/events/{id}"),
                    Some(&json!({"recurrence": [format!("RRULE:FREQ=DAILY;COUNT={longer}")]})),
                );
                let last = known.last_mut().unwrap();
                if r.is_ok_and(|r| r.status == 200) {
                    last.1 = longer;
                } else {
                    last.2 = Some(longer);
                    break;
                }
            }
            known
        });
        // Killed in the middle of the writes, however slow a busy machine makes them.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while acknowledged.load(Ordering::SeqCst) < 6 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        std::thread::sleep(std::time::Duration::from_millis(150));
        srv.signal("KILL");
        stop.store(true, Ordering::SeqCst);
        writer.join().unwrap()
    });
    drop(srv);
    assert!(
        outcome.len() > 3,
        "too few writes before the kill: {outcome:?}"
    );
    let srv = Server::start(serve_cmd(&dir), None, "restart after SIGKILL");
    let mut listed: std::collections::BTreeMap<i64, usize> = Default::default();
    for page in 1.. {
        let r = srv.send(
            "GET",
            &format!(
                "{}?search={word}&start_date=2031-01-01&end_date=2031-12-31&per_page=50&page={page}",
                events()
            ),
            Some(&ADMIN),
            None,
        );
        if r.status != 200 {
            break;
        }
        let items = r.json()["events"].as_array().cloned().unwrap_or_default();
        for e in &items {
            let series = e["series_id"]
                .as_i64()
                .unwrap_or_else(|| panic!("an event without its series: {e}"));
            *listed.entry(series).or_default() += 1;
        }
        if items.len() < 50 {
            break;
        }
    }
    for (id, acknowledged, in_flight) in &outcome {
        let found = listed.remove(id).unwrap_or(0);
        assert!(
            found == *acknowledged || Some(found) == *in_flight,
            "series {id}: {found} occurrences listed, {acknowledged} acknowledged ({in_flight:?} in flight)"
        );
        let series = srv.send("GET", &ev(*id), Some(&ADMIN), None);
        assert_eq!(series.status, 200, "{}", series.describe());
    }
    // At most the create in flight, wholly applied, is listed besides.
    assert!(listed.len() <= 1, "series nobody acknowledged: {listed:?}");
}
