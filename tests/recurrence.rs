//! Recurring events (docs/api.md, "Recurring events"), over real HTTP against the binary: a
//! series' occurrences in lists and single reads, their IDs across edits of the series,
//! cancelled occurrences, visibility, refused rules.
//!
//! One shared server; every test names its records with a unique word (`tok()`).

mod common;

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
    // An occurrence is changed through its series.
    let s = series(
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
        Some(&json!({"title": "x"})),
    );
    let body = assert_invalid_param_names(&r, &["id"]);
    assert!(body.to_string().contains(&id_of(&s).to_string()), "{body}");
}
