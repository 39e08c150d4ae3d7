//! In-process latency of the query path for the query mix of the benchmark issue, on a
//! generated calendar, in two groups:
//!
//! - `events_<N>`: the service layer (planner + index + hydration from the store), no HTTP,
//!   no JSON;
//! - `http_<N>`: the same mix through the whole HTTP layer without sockets: an
//!   `http::Request` is handed to `warp::service(almanac::http::filter(..))` (the service the
//!   server runs per connection) and the response body is read to the end, so parameter
//!   validation, the JSON representations, headers and serialization are included. This group
//!   adds `GET /events/by-slug/{slug}` and `POST /events` (administrator, Basic credentials,
//!   a unique title per iteration, with the indexer thread running; it runs last because it
//!   grows the calendar).
//!
//! Run with
//!
//! ```text
//! ALMANAC_BENCH_EVENTS=100000 cargo bench --bench query
//! cargo bench --bench query -- http_   # only the HTTP group
//! ```
//!
//! The calendar is generated (seeded) into a temporary data directory and indexed once; the
//! size defaults to 1,000 events.

use almanac::auth::{Authenticator, Caller};
use almanac::generate::{populate, Shape};
use almanac::http::AppState;
use almanac::index::indexer::Indexer;
use almanac::index::SearchIndex;
use almanac::model::post::Venue;
use almanac::model::{Kind, Language, Role};
use almanac::service::events::{self, EventQuery};
use almanac::service::linked::{self, ListQuery};
use almanac::service::Request;
use almanac::store::{Reads, Store};
use chrono::NaiveDate;
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use warp::hyper::body::Body as _;
use warp::hyper::service::Service as _;

struct Fixture {
    _dir: tempfile::TempDir,
    store: Arc<Store>,
    index: Arc<SearchIndex>,
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
        store: Arc::new(store),
        index: Arc::new(index),
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
    http_benches(c, &f, first_category);
}

const BENCH_USER: &str = "bench";
const BENCH_PASSWORD: &str = "bench-password-0123456789";

/// The HTTP layer in-process: requests go through the warp filter the server runs per
/// connection (`warp::service(filter)`), inside `Runtime::block_on`; the response body is
/// read to the end.
fn http_benches(c: &mut Criterion, f: &Fixture, first_category: u64) {
    let mut group = c.benchmark_group(format!("http_{}", f.events));
    let admin =
        almanac::service::users::add(&f.store, BENCH_USER, Role::Administrator, BENCH_PASSWORD)
            .expect("administrator");
    // Without the response cache: every list request is built.
    let state = Arc::new(
        AppState::new(
            f.store.clone(),
            f.index.clone(),
            Authenticator::new(vec![admin]),
            "http://127.0.0.1:8080",
            Duration::from_secs(60),
        )
        .with_response_cache(0),
    );
    let client = std::net::IpAddr::from([127, 0, 0, 1]);
    let service = hyper_util::service::TowerToHyperService::new(warp::service(
        almanac::http::filter(state, client, almanac::http::Listener::Api),
    ));
    // Multi-threaded like the server's: handlers use `block_in_place`.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let send = |method: &str, uri: &str, headers: &[(&str, &str)], body: String| {
        let mut request = warp::http::Request::builder()
            .method(method)
            .uri(uri)
            .header("host", "127.0.0.1:8080");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request.body(body).expect("request");
        runtime.block_on(async {
            let response = service.call(request).await.expect("infallible");
            let status = response.status();
            let mut body = std::pin::pin!(response.into_body());
            let mut bytes = Vec::new();
            while let Some(frame) = std::future::poll_fn(|cx| body.as_mut().poll_frame(cx)).await {
                if let Ok(data) = frame.expect("body").into_data() {
                    bytes.extend_from_slice(&data);
                }
            }
            (status, bytes)
        })
    };

    let e = "/cal/events/v1/events";
    // A published upcoming event from the middle of the first page of 50.
    let (_, page) = send("GET", &format!("{e}?per_page=50"), &[], String::new());
    let page: serde_json::Value = serde_json::from_slice(&page).expect("JSON");
    let listed = page["events"].as_array().expect("events");
    let middle = &listed[listed.len() / 2];
    let id = middle["id"].as_u64().expect("id");
    let slug = middle["slug"].as_str().expect("slug").to_string();
    let mix: Vec<(&str, String)> = vec![
        ("default", e.to_string()),
        ("per_page_50", format!("{e}?per_page=50")),
        ("search_common_word", format!("{e}?search=music")),
        ("search_two_words", format!("{e}?search=jazz+night")),
        (
            "one_month_window",
            format!("{e}?start_date=2027-03-01+00:00:00&end_date=2027-03-31+23:59:59"),
        ),
        (
            "window_category_search",
            format!(
                "{e}?start_date=2027-01-01+00:00:00&end_date=2027-06-30+23:59:59\
                 &categories={first_category}&search=festival"
            ),
        ),
        ("featured", format!("{e}?featured=true")),
        (
            "geoloc_radius",
            format!("{e}?geoloc=1&geoloc_lat=38.7223&geoloc_lng=-9.1393&geoloc_radius=25"),
        ),
        ("get_event_by_id", format!("{e}/{id}")),
        ("get_event_by_slug", format!("{e}/by-slug/{slug}")),
        (
            "venues_search",
            "/cal/events/v1/venues?search=hall".to_string(),
        ),
    ];
    for (name, uri) in &mix {
        let (status, _) = send("GET", uri, &[], String::new());
        assert!(status.is_success(), "{uri}: {status}");
        group.bench_function(*name, |b| b.iter(|| send("GET", uri, &[], String::new())));
    }

    // Creates need the indexer: an acknowledged write waits until the index holds it.
    let indexer = Indexer::start(
        f.store.clone(),
        f.index.clone(),
        almanac::config::DEFAULT_INDEX_COMMIT_DELAY,
    );
    let auth = {
        use base64::Engine;
        let credentials = format!("{BENCH_USER}:{BENCH_PASSWORD}");
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(credentials)
        )
    };
    let headers = [
        ("authorization", auth.as_str()),
        ("content-type", "application/json"),
    ];
    let mut counter = 0u64;
    group.bench_function("create_event", |b| {
        b.iter(|| {
            counter += 1;
            let day = 1 + counter % 28;
            let body = json!({
                "title": format!("Benchmark concert {counter}"),
                "description": format!("Load test event number {counter}."),
                "start_date": format!("2027-05-{day:02} 19:00:00"),
                "end_date": format!("2027-05-{day:02} 21:30:00"),
                "status": "publish",
                "cost": "10",
                "categories": [first_category],
            });
            let (status, _) = send("POST", e, &headers, body.to_string());
            assert_eq!(status.as_u16(), 201, "create");
        })
    });
    group.finish();
    indexer.stop();
}

// No criterion plots: with the plotters dev-dependency's `ab_glyph` feature (benches/plot.rs)
// plotters finds no system fonts, and criterion's report charts would panic.
criterion_group! {
    name = query_mix;
    config = Criterion::default()
        .sample_size(30)
        .measurement_time(std::time::Duration::from_secs(3))
        .without_plots();
    targets = benches
}
criterion_main!(query_mix);
