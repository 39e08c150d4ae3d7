//! The public pages under load: the real server (`almanac serve`, release build) on loopback,
//! driven by wrk (`apt-get install wrk`).
//!
//!     ALMANAC_BENCH_EVENTS=1000000 cargo bench --bench pages
//!
//! `almanac generate` fills a temporary data directory (under `target/tmp`) with the seeded
//! calendar of `ALMANAC_BENCH_EVENTS` events (default 100,000). The server first runs without
//! its response cache, so that every page is built afresh: `/healthz`, the month view of the
//! current month, the list view, the day view and an event page each run under wrk for
//! `ALMANAC_BENCH_SECONDS` seconds (default 5) at 1 connection (latency) and 4 (rate). Then
//! it runs again with the response cache at its default and the same pages are repeated at 4
//! connections, each with its rate as a share of `/healthz`'s in that run. The month view's
//! size, plain and gzipped, is read once. Output: a markdown table on stdout and
//! `target/bench-results/pages-<N>.json`.

mod support;

use serde_json::{json, Value};
use std::ffi::OsStr;
use std::io::Read;
use std::path::Path;
use std::process::Command;
use support::{env_number, path_str, run, wrk_command, wrk_report, Server};

const BINARY: &str = env!("CARGO_BIN_EXE_almanac");
const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");

fn main() {
    let events: usize = env_number("ALMANAC_BENCH_EVENTS", 100_000);
    let seconds: u64 = env_number("ALMANAC_BENCH_SECONDS", 5);
    if Command::new("wrk").arg("--version").output().is_err() {
        eprintln!("wrk is not installed (Debian/Ubuntu: apt-get install -y wrk)");
        std::process::exit(1);
    }
    let report = Path::new(MANIFEST_DIR).join("benches/wrk/report.lua");
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(tmp).expect("target tmp dir");
    let dir = tempfile::Builder::new()
        .prefix("pages-")
        .tempdir_in(tmp)
        .expect("temp dir");
    let data = dir.path().join("data");
    eprintln!("generating {events} events into {}", data.display());
    let generated = run(Command::new(BINARY).args([
        "generate",
        "--events",
        &events.to_string(),
        "--seed",
        "2026",
        "--data-dir",
        path_str(&data),
    ]));
    eprintln!("{}", generated.trim());

    let start = |cache_mb: Option<&str>| {
        Server::start(
            &[OsStr::new("--data-dir"), data.as_os_str()],
            Some(&dir.path().join("server.log")),
            |command| {
                command.env("ALMANAC_LOG", "warn");
                match cache_mb {
                    Some(mb) => command.env("ALMANAC_RESPONSE_CACHE_MB", mb),
                    None => command.env_remove("ALMANAC_RESPONSE_CACHE_MB"),
                };
            },
        )
    };
    let mut server = start(Some("0"));
    // Bodies as sent: the gzipped size is measured too, so nothing is decompressed.
    let client = reqwest::blocking::Client::builder()
        .no_gzip()
        .build()
        .expect("an HTTP client");
    let first: Value = client
        .get(format!("{}/cal/events/v1/events?per_page=1", server.url))
        .send()
        .and_then(|r| r.json())
        .expect("an event");
    let event_path = first["events"][0]["url"]
        .as_str()
        .and_then(|u| u.strip_prefix(&server.url))
        .expect("an event's url")
        .to_string();
    let pages = [
        ("healthz", "/healthz".to_string()),
        ("month view", "/events/month/".into()),
        ("list view", "/events/".into()),
        ("day view", "/events/today/".into()),
        ("event page", event_path),
    ];
    let month_url = format!("{}/events/month/", server.url);
    let plain = body_size(&client, &month_url, false);
    let gzipped = body_size(&client, &month_url, true);
    eprintln!("month view: {plain} bytes, {gzipped} gzipped");

    let wrk = |url: &str, threads: u32, connections: u32| {
        wrk_report(&run(&mut wrk_command(
            &report,
            url,
            threads,
            connections,
            seconds,
            &["Accept-Encoding: gzip"],
            &[],
        )))
    };
    let mut built = Vec::new();
    for (name, path) in &pages {
        let url = format!("{}{path}", server.url);
        let one = wrk(&url, 1, 1);
        let four = wrk(&url, 2, 4);
        eprintln!(
            "built: {name}: p50 {} us, {} req/s",
            one["p50_us"], four["rps"]
        );
        built.push(json!({"page": name, "url": url, "c1": one, "c4": four}));
    }
    server.stop();
    let server = start(None);
    let mut repeated = Vec::new();
    for (name, path) in &pages {
        let url = format!("{}{path}", server.url);
        let four = wrk(&url, 2, 4);
        eprintln!("repeated: {name}: {} req/s", four["rps"]);
        repeated.push(json!({"page": name, "url": url, "c4": four}));
    }
    let healthz = |rows: &[Value], key: &str| rows[0][key]["rps"].as_f64().unwrap_or(f64::NAN);
    println!("| Page ({events} events) | built: p50 at 1 connection | built: req/s at 4 | built: share of /healthz | repeated: req/s at 4 | repeated: share of /healthz |");
    println!("|---|---|---|---|---|---|");
    for (b, r) in built.iter().zip(&repeated) {
        let rps = |v: &Value| v["c4"]["rps"].as_f64().unwrap_or(0.0);
        println!(
            "| {} | {:.2} ms | {:.0} | {:.3} | {:.0} | {:.3} |",
            b["page"].as_str().unwrap_or("?"),
            b["c1"]["p50_us"].as_f64().unwrap_or(0.0) / 1000.0,
            rps(b),
            rps(b) / healthz(&built, "c4"),
            rps(r),
            rps(r) / healthz(&repeated, "c4"),
        );
    }
    println!("\nMonth view: {plain} bytes of HTML, {gzipped} gzipped.");
    let out = Path::new(MANIFEST_DIR).join("target/bench-results");
    std::fs::create_dir_all(&out).expect("results dir");
    let results = json!({
        "events": events,
        "seconds": seconds,
        "month_view_bytes": plain,
        "month_view_gzip_bytes": gzipped,
        "built": built,
        "repeated": repeated,
    });
    std::fs::write(
        out.join(format!("pages-{events}.json")),
        serde_json::to_string_pretty(&results).expect("JSON"),
    )
    .expect("write results");
}

/// The size of `url`'s body as sent, gzipped when asked.
fn body_size(client: &reqwest::blocking::Client, url: &str, gzip: bool) -> usize {
    let mut request = client.get(url);
    if gzip {
        request = request.header("Accept-Encoding", "gzip");
    }
    let mut body = Vec::new();
    request
        .send()
        .expect("a page")
        .read_to_end(&mut body)
        .expect("its body");
    body.len()
}
