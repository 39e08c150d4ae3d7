//! `almanac serve --demo`: a first run shows a living calendar (data/README.md).

mod common;

use common::*;

#[test]
fn demo_flag_loads_an_upcoming_calendar_once() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    let serve = || {
        almanac(["serve", "--demo", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.to_str().unwrap())
    };
    let mut srv = Server::start(serve(), None, "serve --demo");
    let events = srv.get(&format!("{NS}/events?per_page=50")).json();
    let total = events["total"].as_u64().expect("total");
    assert!(
        total > 100,
        "the default window lists the demo's upcoming events: {total}"
    );
    for language in ["es", "pt-br"] {
        let v = srv
            .get(&format!("{NS}/events?translation_language={language}"))
            .json();
        assert!(v["total"].as_u64().unwrap() > 0, "{language} events");
    }
    let venues = srv.get(&format!("{NS}/venues")).json();
    assert!(venues["total"].as_u64().unwrap() > 0);
    let found = srv.get(&format!("{NS}/events?search=festival")).json();
    assert!(
        found["total"].as_u64().unwrap() > 0,
        "demo events are searchable"
    );

    // The demo shows what the calendar can do: translations, category parents, venues with
    // coordinates, and events in zones on both sides of daylight saving.
    let page = events["events"].as_array().expect("events");
    assert!(
        page.iter()
            .any(|e| e["translations"].as_object().is_some_and(|t| t.len() > 1)),
        "translation groups"
    );
    let categories = srv.get(&format!("{NS}/categories?per_page=100")).json();
    assert!(
        categories["categories"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["parent"].as_u64() > Some(0)),
        "categories with a parent"
    );
    let geo = srv
        .get(&format!("{NS}/events?geoloc=1&geoloc_lat=38.72&geoloc_lng=-9.14&geoloc_radius=20&geoloc_unit=km"))
        .json();
    assert!(geo["total"].as_u64().unwrap() > 0, "events near Lisbon");
    let year = srv
        .get(&format!("{NS}/events?per_page=50&end_date=%2B1%20year"))
        .json();
    let abbreviations: std::collections::HashSet<&str> = year["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["timezone_abbr"].as_str())
        .collect();
    assert!(abbreviations.len() >= 3, "several zones: {abbreviations:?}");
    let now = chrono::Utc::now().format("%Y-%m-%d %H:%M:%S").to_string();
    assert!(
        page.iter()
            .all(|e| e["utc_end_date"].as_str().unwrap() >= now.as_str()),
        "every listed event is upcoming"
    );

    // A second start with --demo adds nothing.
    srv.stop(std::time::Duration::from_secs(15));
    drop(srv);
    let srv = Server::launch(serve(), None).expect("second start");
    let again = srv.get(&format!("{NS}/events?per_page=50")).json();
    assert_eq!(again["total"].as_u64(), Some(total));
}
