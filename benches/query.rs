//! In-process latency of the query path (planner + index + hydration from the store) for the
//! query mix of the benchmark issue, on a generated calendar.
//!
//!     ALMANAC_BENCH_EVENTS=100000 cargo bench --bench query
//!
//! The calendar is generated (seeded) into a temporary data directory and indexed once; the
//! size defaults to 1,000 events.

use almanac::auth::Caller;
use almanac::generate::{populate, Shape};
use almanac::index::SearchIndex;
use almanac::model::post::Venue;
use almanac::model::{Kind, Language};
use almanac::service::events::{self, EventQuery};
use almanac::service::linked::{self, ListQuery, Request};
use almanac::store::{Reads, Store};
use chrono::NaiveDate;
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;
use std::time::Instant;

struct Fixture {
    _dir: tempfile::TempDir,
    store: Store,
    index: SearchIndex,
    events: usize,
}

fn fixture() -> Fixture {
    let events: usize = std::env::var("ALMANAC_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(&dir.path().join("almanac.redb")).expect("store");
    let started = Instant::now();
    populate(&store, &Shape::for_events(events), 42).expect("generated calendar");
    let generated = started.elapsed();
    let index_dir = dir.path().join("index");
    let started = Instant::now();
    SearchIndex::rebuild(&index_dir, &store, |_| {}).expect("index build");
    let built = started.elapsed();
    store
        .prune_outbox(store.outbox_head().expect("head"))
        .expect("prune");
    let index = SearchIndex::open(&index_dir, &store).expect("index");
    let size: u64 = std::fs::read_dir(&index_dir)
        .expect("index dir")
        .filter_map(|e| e.ok()?.metadata().ok())
        .map(|m| m.len())
        .sum();
    eprintln!(
        "calendar: {events} events generated in {generated:.1?}, indexed in {built:.1?}, index {:.1} MiB",
        size as f64 / 1_048_576.0
    );
    Fixture {
        _dir: dir,
        store,
        index,
        events,
    }
}

fn request() -> Request {
    Request {
        caller: Caller::Anonymous,
        language: Language::En,
        explicit_language: None,
        now: NaiveDate::from_ymd_opt(2026, 6, 1)
            .unwrap()
            .and_hms_opt(12, 0, 0)
            .unwrap(),
    }
}

fn query() -> EventQuery {
    EventQuery {
        page: 1,
        per_page: 10,
        geo_radius_km: 25.0 * 1.609_344,
        ..EventQuery::default()
    }
}

fn date(s: &str) -> Option<chrono::NaiveDateTime> {
    chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").ok()
}

fn benches(c: &mut Criterion) {
    let f = fixture();
    let r = request();
    let mut group = c.benchmark_group(format!("events_{}", f.events));
    let first_category = f
        .store
        .read()
        .unwrap()
        .scan::<almanac::model::term::Term>(Kind::Category)
        .unwrap()
        .into_iter()
        .find(|t| t.language == Language::En)
        .map(|t| t.id)
        .unwrap();
    let mix: Vec<(&str, EventQuery)> = vec![
        ("default", query()),
        (
            "per_page_50",
            EventQuery {
                per_page: 50,
                ..query()
            },
        ),
        (
            "search_common_word",
            EventQuery {
                search: Some("music".into()),
                ..query()
            },
        ),
        (
            "search_two_words",
            EventQuery {
                search: Some("jazz night".into()),
                ..query()
            },
        ),
        (
            "one_month_window",
            EventQuery {
                start_date: date("2027-03-01 00:00:00"),
                end_date: date("2027-03-31 23:59:59"),
                ..query()
            },
        ),
        (
            "window_category_search",
            EventQuery {
                start_date: date("2027-01-01 00:00:00"),
                end_date: date("2027-06-30 23:59:59"),
                categories: Some(vec![json!(first_category)]),
                search: Some("festival".into()),
                ..query()
            },
        ),
        (
            "featured",
            EventQuery {
                featured: Some(true),
                ..query()
            },
        ),
        (
            "geoloc_radius",
            EventQuery {
                geoloc: Some(true),
                geo_point: Some((38.7223, -9.1393)),
                ..query()
            },
        ),
    ];
    for (name, q) in &mix {
        group.bench_function(*name, |b| {
            b.iter(|| events::list(&f.store, &f.index, &r, q, Vec::new()).expect("list"))
        });
    }
    group.bench_function("get_event_by_id", |b| {
        b.iter(|| {
            events::get(
                &f.store,
                &r,
                &events::Target::Id((f.events / 2) as u64 + 300),
                &events::Unlock::default(),
                Vec::new(),
            )
        })
    });
    let venues = ListQuery {
        page: 1,
        per_page: 10,
        search: Some("hall".into()),
        ..ListQuery::default()
    };
    group.bench_function("venues_search", |b| {
        b.iter(|| {
            linked::list::<Venue>(&f.store, &f.index, &r, &venues, Vec::new()).expect("venues")
        })
    });
    group.finish();
}

criterion_group! {
    name = query_mix;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(3));
    targets = benches
}
criterion_main!(query_mix);
