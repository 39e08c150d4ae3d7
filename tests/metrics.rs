//! `GET /metrics` (docs/operations.md, "Metrics"): administrators only on the main listener,
//! without credentials on `--metrics-listen`; what the counters, gauges and histograms show
//! after requests, writes, cached reads and refused guesses; and the JSON log format
//! (`ALMANAC_LOG_FORMAT`).

mod common;

use common::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

/// One sample of the text exposition format: `name{label="value",...} value`.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// The samples of an exposition (comments skipped). Minimal: what the exporter writes.
fn parse(text: &str) -> Vec<Sample> {
    let mut samples = Vec::new();
    for line in text.lines() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (series, value) = line
            .rsplit_once(' ')
            .unwrap_or_else(|| panic!("no value in {line:?}"));
        let value: f64 = match value {
            "+Inf" => f64::INFINITY,
            v => v
                .parse()
                .unwrap_or_else(|e| panic!("bad value in {line:?}: {e}")),
        };
        let (name, labels) = match series.split_once('{') {
            None => (series.to_string(), BTreeMap::new()),
            Some((name, rest)) => {
                let inner = rest
                    .strip_suffix('}')
                    .unwrap_or_else(|| panic!("unclosed labels in {line:?}"));
                (name.to_string(), parse_labels(inner, line))
            }
        };
        samples.push(Sample {
            name,
            labels,
            value,
        });
    }
    samples
}

/// `k="v",k2="v2"` with `\"`, `\\` and `\n` escapes in values.
fn parse_labels(mut rest: &str, line: &str) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::new();
    while !rest.is_empty() {
        let (key, after) = rest
            .split_once("=\"")
            .unwrap_or_else(|| panic!("bad labels in {line:?}"));
        let mut value = String::new();
        let mut chars = after.char_indices();
        let end = loop {
            match chars.next() {
                Some((_, '\\')) => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, c)) => value.push(c),
                    None => panic!("bad escape in {line:?}"),
                },
                Some((i, '"')) => break i,
                Some((_, c)) => value.push(c),
                None => panic!("unterminated label value in {line:?}"),
            }
        };
        labels.insert(key.to_string(), value);
        rest = after[end + 1..].trim_start_matches(',');
    }
    labels
}

struct Scrape(Vec<Sample>);

impl Scrape {
    /// The sum of the samples named `name` whose labels include `labels` (0 when none).
    fn value(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.0
            .iter()
            .filter(|s| s.name == name)
            .filter(|s| {
                labels
                    .iter()
                    .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
            })
            .map(|s| s.value)
            .sum()
    }

    fn has(&self, name: &str) -> bool {
        self.0.iter().any(|s| s.name == name)
    }
}

const METRICS_CT: &str = "text/plain; version=0.0.4";

fn scrape(srv: &Server) -> Scrape {
    let r = srv.get_as("/metrics", &ADMIN);
    assert_eq!(r.status, 200, "{}", r.describe());
    Scrape(parse(&r.text()))
}

fn requests(m: &Scrape, route: &str, method: &str, status: &str) -> f64 {
    m.value(
        "almanac_http_requests_total",
        &[("route", route), ("method", method), ("status", status)],
    )
}

fn create_event(srv: &Server, title: &str) -> u64 {
    let r = srv
        .req("POST", &format!("{NS}/events"))
        .user(&ADMIN)
        .json_body(&json!({
            "title": title,
            "status": "publish",
            "start_date": "2030-05-01 19:00:00",
            "end_date": "2030-05-01 21:00:00",
        }))
        .send();
    assert_eq!(r.status, 201, "{}", r.describe());
    r.json()["id"].as_u64().expect("an ID")
}

#[test]
fn metrics_answer_administrators_only() {
    let srv = Server::start_with_users(&[ADMIN, EDITOR, AUTHOR]);

    let r = srv.get("/metrics");
    assert_plain_error(&r, 401, "rest_forbidden");
    for user in [&EDITOR, &AUTHOR] {
        let r = srv.get_as("/metrics", user);
        assert_plain_error(&r, 403, "rest_forbidden");
    }
    let r = srv.get_as("/metrics", &ADMIN);
    assert_eq!(r.status, 200, "{}", r.describe());
    let content_type = r.header("content-type").unwrap_or_default();
    assert!(
        content_type.starts_with(METRICS_CT),
        "content type {content_type:?}"
    );
    assert_eq!(r.header("cache-control"), Some("no-store"));
    let text = r.text();
    for name in [
        "almanac_http_requests_total",
        "almanac_http_requests_in_flight",
        "almanac_index_applied_sequence",
        "almanac_index_documents",
        "almanac_index_outbox_lag",
        "almanac_cache_hits_total",
        "almanac_cache_misses_total",
        "almanac_auth_throttled_total",
        "almanac_auth_verifier_busy_total",
        "almanac_process_resident_memory_bytes",
    ] {
        assert!(
            text.contains(&format!("# TYPE {name} ")),
            "{name} is described:\n{text}"
        );
    }
    let m = Scrape(parse(&text));
    assert!(m.value("almanac_process_resident_memory_bytes", &[]) > 1_000_000.0);

    // HEAD as GET; other methods find no route; the path takes no language segment.
    let r = srv.req("HEAD", "/metrics").user(&ADMIN).send();
    assert_eq!(r.status, 200, "{}", r.describe());
    let r = srv.req("POST", "/metrics").user(&ADMIN).send();
    assert_plain_error(&r, 404, "rest_no_route");
    let r = srv.get_as("/es/metrics", &ADMIN);
    assert_plain_error(&r, 404, "rest_no_route");
    // Credentials are checked as everywhere: wrong ones are refused before the role is.
    let r = srv.req("GET", "/metrics").auth(ADMIN.name, "wrong").send();
    assert_plain_error(&r, 401, "incorrect_password");

    // Outside the namespace: neither in the namespace index nor in /doc.
    let index = srv.get(NS).json();
    let routes = index["routes"].as_object().expect("routes");
    assert!(routes.keys().all(|k| !k.contains("metrics")), "{routes:?}");
    let doc = srv.get(&format!("{NS}/doc")).json();
    let paths = doc["paths"].as_object().expect("paths");
    assert!(paths.keys().all(|k| !k.contains("metrics")), "{paths:?}");
}

#[test]
fn requests_writes_and_caches_are_counted() {
    let srv = Server::start_with_users(&[ADMIN]);
    let before = scrape(&srv);

    for path in [
        format!("{NS}/events"),
        format!("/es{NS}/events"),
        format!("{NS}/events/424242"),
        "/nowhere".to_string(),
    ] {
        srv.get(&path);
    }
    let m = scrape(&srv);
    let grew = |route, method, status| {
        requests(&m, route, method, status) - requests(&before, route, method, status)
    };
    assert_eq!(grew("/events", "GET", "200"), 2.0, "both languages");
    assert_eq!(grew("/events/{id}", "GET", "404"), 1.0);
    assert_eq!(grew("unmatched", "GET", "404"), 1.0);
    assert_eq!(grew("metrics", "GET", "200"), 1.0, "the first scrape");
    let durations = |m: &Scrape| {
        m.value(
            "almanac_http_request_duration_seconds_count",
            &[("route", "/events")],
        )
    };
    assert_eq!(durations(&m) - durations(&before), 2.0);
    let slowest_bucket = m.value(
        "almanac_http_request_duration_seconds_bucket",
        &[("route", "/events"), ("le", "+Inf")],
    );
    assert_eq!(slowest_bucket, durations(&m));
    // The scrape itself is the one request in flight.
    assert_eq!(m.value("almanac_http_requests_in_flight", &[]), 1.0);

    // A create: counted, acknowledged once the index holds it (no lag), one more document.
    let commits = |m: &Scrape, name: &str| m.value(&format!("{name}_count"), &[]);
    create_event(&srv, "Metrics night");
    let after = scrape(&srv);
    assert_eq!(requests(&after, "/events", "POST", "201"), 1.0);
    assert_eq!(after.value("almanac_index_outbox_lag", &[]), 0.0);
    assert_eq!(
        after.value("almanac_index_documents", &[]),
        m.value("almanac_index_documents", &[]) + 1.0
    );
    assert!(
        after.value("almanac_index_applied_sequence", &[])
            > m.value("almanac_index_applied_sequence", &[])
    );
    let name = "almanac_store_commit_duration_seconds";
    assert!(
        commits(&after, name) > commits(&m, name),
        "{name}: {} → {}",
        commits(&m, name),
        commits(&after, name)
    );
    // The index commits the newest writes together a little later (docs/architecture.md,
    // "Consistency"); until then they are searchable from memory.
    let name = "almanac_index_commit_duration_seconds";
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut later = scrape(&srv);
    while commits(&later, name) <= commits(&m, name) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
        later = scrape(&srv);
    }
    assert!(
        commits(&later, name) > commits(&m, name),
        "{name}: {} → {}",
        commits(&m, name),
        commits(&later, name)
    );

    // A term write changes no document and needs no index commit: still no lag.
    let r = srv
        .req("POST", &format!("{NS}/tags"))
        .user(&ADMIN)
        .json_body(&json!({"name": "gauges"}))
        .send();
    assert_eq!(r.status, 201, "{}", r.describe());
    assert_eq!(scrape(&srv).value("almanac_index_outbox_lag", &[]), 0.0);

    // Another list of the same events within the same second reuses their representations,
    // and the same list again is answered whole from the response cache (both caches keep one
    // second of one store version: retry when a second boundary fell between).
    let hits = |m: &Scrape, cache| m.value("almanac_cache_hits_total", &[("cache", cache)]);
    let misses = |m: &Scrape, cache| m.value("almanac_cache_misses_total", &[("cache", cache)]);
    let start = scrape(&srv);
    let list = format!("{NS}/events?start_date=2030-01-01&end_date=2030-12-31");
    let mut cached = false;
    for _ in 0..10 {
        for path in [list.clone(), format!("{list}&per_page=5"), list.clone()] {
            let r = srv.get(&path);
            assert_eq!(r.status, 200, "{}", r.describe());
            assert_eq!(r.json()["total"], 1, "{}", r.describe());
        }
        let m = scrape(&srv);
        if hits(&m, "representations") > hits(&start, "representations")
            && hits(&m, "responses") > hits(&start, "responses")
        {
            cached = true;
            break;
        }
    }
    assert!(
        cached,
        "the lists hit the representation and response caches"
    );
    let m = scrape(&srv);
    assert!(misses(&m, "representations") > misses(&start, "representations"));
    assert!(misses(&m, "responses") > misses(&start, "responses"));

    // A calendar feed polled twice is built once (kept for the day and the store version).
    let feed = format!("{NS}/events.ics");
    let start = scrape(&srv);
    let mut cached = false;
    for _ in 0..3 {
        for _ in 0..2 {
            assert_eq!(srv.get(&feed).status, 200);
        }
        if hits(&scrape(&srv), "feeds") > hits(&start, "feeds") {
            cached = true;
            break;
        }
    }
    assert!(cached, "a repeated feed hit the feed cache");
    assert!(misses(&scrape(&srv), "feeds") > misses(&start, "feeds"));
    assert!(scrape(&srv).has("almanac_http_request_duration_seconds_bucket"));
}

#[test]
fn throttle_refusals_are_counted() {
    let srv = Server::start_with_users(&[ADMIN, EDITOR]);
    let throttled = |m: &Scrape| m.value("almanac_auth_throttled_total", &[("attempt", "login")]);
    assert_eq!(throttled(&scrape(&srv)), 0.0);
    // The user's free failures (auth::throttle: 10), then one more locks the name for a second.
    for i in 0..=10 {
        let r = srv
            .req("GET", NS)
            .auth(EDITOR.name, &format!("no-{i}"))
            .send();
        assert_plain_error(&r, 401, "incorrect_password");
    }
    // The lock starts when the last failure is admitted, before its verification: on a slow
    // machine it may have run out already, and each further failure doubles it.
    let mut refused = 11.0;
    let locked = (0..5).any(|i| {
        let r = srv
            .req("GET", NS)
            .auth(EDITOR.name, &format!("locked-out-{i}"))
            .send();
        if r.status == 401 {
            refused += 1.0;
        }
        r.status == 429
    });
    assert!(locked, "the name was never locked");
    let m = scrape(&srv);
    assert_eq!(throttled(&m), 1.0);
    assert_eq!(requests(&m, "/", "GET", "429"), 1.0);
    assert_eq!(requests(&m, "/", "GET", "401"), refused);
}

/// The address printed by `serve --metrics-listen` (`metrics on http://ADDR/metrics`).
fn metrics_address(srv: &Server) -> SocketAddr {
    let stdout = srv.stdout_text();
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("metrics on http://"))
        .unwrap_or_else(|| panic!("no metrics line in {stdout:?}"));
    line.strip_suffix("/metrics")
        .unwrap_or_else(|| panic!("bad metrics line {line:?}"))
        .parse()
        .unwrap_or_else(|e| panic!("bad metrics address {line:?}: {e}"))
}

fn exchange(addr: SocketAddr, method: &str, path: &str) -> Resp {
    let request = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    raw_exchange(addr, request.into_bytes(), method == "HEAD")
}

#[test]
fn a_metrics_listener_serves_metrics_without_credentials() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    add_user(&dir, &ADMIN);
    let mut srv = Server::launch(
        almanac([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--metrics-listen",
            "127.0.0.1:0",
            "--data-dir",
        ])
        .arg(dir.to_str().unwrap()),
        None,
    )
    .unwrap_or_else(|f| panic!("server did not start: {}", f.output.describe()));
    let addr = metrics_address(&srv);
    assert_ne!(addr, srv.addr);

    srv.get(&format!("{NS}/events"));
    let r = exchange(addr, "GET", "/metrics");
    assert_eq!(r.status, 200, "{}", r.describe());
    assert!(r
        .header("content-type")
        .is_some_and(|t| t.starts_with(METRICS_CT)));
    let m = Scrape(parse(&r.text()));
    assert_eq!(requests(&m, "/events", "GET", "200"), 1.0);
    assert_eq!(exchange(addr, "HEAD", "/metrics").status, 200);
    // Nothing else is served there.
    for (method, path) in [
        ("GET", NS),
        ("GET", "/healthz"),
        ("GET", "/"),
        ("POST", "/metrics"),
    ] {
        let r = exchange(addr, method, path);
        assert_plain_error(&r, 404, "rest_no_route");
    }
    // The main listener still wants an administrator.
    assert_plain_error(&srv.get("/metrics"), 401, "rest_forbidden");

    // It stops with the server.
    srv.signal("TERM");
    assert_eq!(srv.wait_exit(Duration::from_secs(15)), Some(0));
    assert_port_closed(addr);
}

#[test]
fn bad_metrics_listen_values_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    for value in ["localhost:9100", "9100", "127.0.0.1:99999"] {
        let o = almanac([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--metrics-listen",
            value,
            "--data-dir",
        ])
        .arg(dir.to_str().unwrap())
        .timeout(30)
        .run();
        assert_eq!(
            o.code,
            Some(2),
            "--metrics-listen {value}: {}",
            o.describe()
        );
        assert!(o.stderr.contains(value), "{}", o.describe());
    }
    let o = almanac(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.to_str().unwrap())
        .env("ALMANAC_METRICS_LISTEN", "metrics.example:80")
        .timeout(30)
        .run();
    assert_eq!(o.code, Some(2), "{}", o.describe());
    assert!(
        !dir.exists(),
        "configuration is checked before the data directory"
    );
}

#[test]
fn json_log_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    add_user(&dir, &ADMIN);
    let mut srv = Server::launch(
        almanac(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.to_str().unwrap())
            .env("ALMANAC_LOG_FORMAT", "json"),
        None,
    )
    .unwrap_or_else(|f| panic!("server did not start: {}", f.output.describe()));
    assert_eq!(srv.get(&format!("{NS}/tags")).status, 200);
    srv.signal("TERM");
    assert_eq!(srv.wait_exit(Duration::from_secs(15)), Some(0));

    let stderr = srv.stderr_text();
    let lines: Vec<Value> = stderr
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l)
                .unwrap_or_else(|e| panic!("not a JSON line ({e}): {l:?}\n{stderr}"))
        })
        .collect();
    assert!(lines.iter().all(Value::is_object), "{stderr}");
    let request = lines
        .iter()
        .find(|l| l["message"] == "request")
        .unwrap_or_else(|| panic!("no request line in {stderr}"));
    assert_eq!(request["method"], "GET", "{request}");
    assert_eq!(request["path"], format!("{NS}/tags"), "{request}");
    assert_eq!(request["status"], 200, "{request}");
    assert!(request["micros"].is_u64(), "{request}");
    assert_eq!(request["level"], "INFO", "{request}");
    assert!(request["timestamp"].is_string(), "{request}");
    assert!(
        lines.iter().any(|l| l["message"] == "shutting down"),
        "{stderr}"
    );
}

#[test]
fn unknown_log_formats_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    for args in [
        vec!["serve", "--listen", "127.0.0.1:0", "--data-dir"],
        vec!["user", "list", "--data-dir"],
    ] {
        let o = almanac(args.clone())
            .arg(dir.to_str().unwrap())
            .env("ALMANAC_LOG_FORMAT", "xml")
            .timeout(30)
            .run();
        assert_eq!(o.code, Some(2), "{args:?}: {}", o.describe());
        assert!(o.stderr.starts_with("error: "), "{}", o.describe());
        assert!(o.stderr.contains("ALMANAC_LOG_FORMAT"), "{}", o.describe());
        assert!(o.stdout.is_empty(), "{}", o.describe());
    }
    assert!(!dir.exists());
    // Empty counts as unset, as for every variable.
    let o = almanac(["user", "list", "--data-dir"])
        .arg(dir.to_str().unwrap())
        .env("ALMANAC_LOG_FORMAT", "")
        .timeout(30)
        .run();
    assert_ne!(o.code, Some(2), "{}", o.describe());
}
