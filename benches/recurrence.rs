//! What recurring events cost: the real server (`almanac serve`, release build) on loopback,
//! reads driven by wrk (`apt-get install wrk`).
//!
//!     ALMANAC_BENCH_EVENTS=100000 cargo bench --bench recurrence
//!
//! Two calendars of `ALMANAC_BENCH_EVENTS` events (default 100,000), generated with the same
//! seed into temporary data directories under `target/tmp`:
//!
//! - **plain**: every event single;
//! - **with series**: 80 % of the events single, and weekly series of two years (104
//!   occurrences each, `RRULE:FREQ=WEEKLY;COUNT=104`, starting on days spread over the
//!   generated calendar's years) created through the API until occurrences make up the other
//!   20 %.
//!
//! On each: three lists at two connections (`-t2 -c2`) for `ALMANAC_BENCH_SECONDS` seconds
//! (default 10) — the default upcoming list, a three-month window and a search — and the
//! server's resident memory. On the second, while creating its series: the latency of creating
//! a series, of updating one (a new title: every occurrence is rewritten), and of creating a
//! single event, one request at a time. The response cache is off
//! (`ALMANAC_RESPONSE_CACHE_MB=0`): the lists measure what they cost to build.
//!
//! Output: a markdown table on stdout and `target/bench-results/recurrence.json`.

mod support;

use serde_json::{json, Value};
use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use support::{env_number, path_str, run, wrk_command, wrk_report, Server};

const BINARY: &str = env!("CARGO_BIN_EXE_almanac");
const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");
const NAMESPACE: &str = "/cal/events/v1";
const ADMIN: &str = "bench";
const PASSWORD: &str = "bench-password-0123456789";
/// Occurrences of each series: weekly for two years.
const OCCURRENCES: usize = 104;

type Client = reqwest::blocking::Client;

fn main() {
    let events: usize = env_number("ALMANAC_BENCH_EVENTS", 100_000);
    let seconds: u64 = env_number("ALMANAC_BENCH_SECONDS", 10);
    if Command::new("wrk").arg("--version").output().is_err() {
        eprintln!("wrk is not installed (Debian/Ubuntu: apt-get install -y wrk)");
        std::process::exit(1);
    }
    let client = Client::builder()
        .timeout(Duration::from_secs(300))
        .build()
        .expect("client");
    let series = events / 5 / OCCURRENCES;
    let plain = calendar(&client, events, 0, seconds);
    let with_series = calendar(&client, events - series * OCCURRENCES, series, seconds);
    let report = json!({
        "events": events,
        "seconds": seconds,
        "plain": plain,
        "with_series": with_series,
        "loadavg_after": std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim(),
    });
    let out_dir = Path::new(MANIFEST_DIR).join("target/bench-results");
    std::fs::create_dir_all(&out_dir).expect("results dir");
    let out = out_dir.join("recurrence.json");
    std::fs::write(&out, serde_json::to_string_pretty(&report).unwrap() + "\n")
        .expect("results file");
    eprintln!("results: {}", out.display());

    println!();
    println!(
        "Recurring events: {events} events, {series} weekly series of {OCCURRENCES} \
         occurrences in the second calendar, {seconds} s per read run"
    );
    println!();
    println!("| read (2 connections) | plain req/s | with series req/s | ratio |");
    println!("|---|---|---|---|");
    for name in ["upcoming", "window", "search"] {
        let a = plain["reads"][name]["rps"].as_f64().unwrap_or(0.0);
        let b = with_series["reads"][name]["rps"].as_f64().unwrap_or(0.0);
        println!("| {name} | {a:.0} | {b:.0} | {:.2} |", b / a);
    }
    println!(
        "| resident memory (MiB) | {} | {} | |",
        plain["rss_kib"].as_u64().unwrap_or(0) / 1024,
        with_series["rss_kib"].as_u64().unwrap_or(0) / 1024
    );
    println!();
    println!("| write (one at a time) | median ms | p90 ms |");
    println!("|---|---|---|");
    for name in ["create_single", "create_series", "update_series"] {
        let w = &with_series["writes"][name];
        println!(
            "| {name} | {:.1} | {:.1} |",
            w["median_ms"].as_f64().unwrap_or(0.0),
            w["p90_ms"].as_f64().unwrap_or(0.0)
        );
    }
}

/// One calendar: `singles` generated events and `series` series created through the API;
/// its reads, memory and (when it has series) write latencies.
fn calendar(client: &Client, singles: usize, series: usize, seconds: u64) -> Value {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(tmp).expect("target tmp dir");
    let dir = tempfile::Builder::new()
        .prefix("recurrence-")
        .tempdir_in(tmp)
        .expect("temp dir");
    let data = dir.path().join("data");
    eprintln!("generating {singles} events into {}", data.display());
    run(Command::new(BINARY).args([
        "generate",
        "--events",
        &singles.to_string(),
        "--seed",
        "2026",
        "--data-dir",
        path_str(&data),
    ]));
    run(Command::new(BINARY).args([
        "user",
        "add",
        ADMIN,
        "--role",
        "administrator",
        "--password",
        PASSWORD,
        "--data-dir",
        path_str(&data),
    ]));
    let server = Server::start(
        &[OsStr::new("--data-dir"), data.as_os_str()],
        Some(&dir.path().join("server.log")),
        |command| {
            command.env("ALMANAC_RESPONSE_CACHE_MB", "0");
        },
    );
    let base = format!("{}{NAMESPACE}", server.url);
    let mut writes = json!({});
    if series > 0 {
        writes = create_series(client, &base, series);
    }
    let word = frequent_word(client, &base);
    let urls = [
        ("upcoming", format!("{base}/events?per_page=50")),
        (
            "window",
            format!("{base}/events?start_date=2027-03-01&end_date=2027-05-31&per_page=50"),
        ),
        ("search", format!("{base}/events?search={word}&per_page=50")),
    ];
    let scripts = Path::new(MANIFEST_DIR).join("benches/wrk");
    let mut reads = json!({});
    for (name, url) in &urls {
        let report = wrk_report(&run(&mut wrk_command(
            &scripts.join("report.lua"),
            url,
            2,
            2,
            seconds,
            &[],
            &[],
        )));
        eprintln!("{name}: {} req/s", report["rps"]);
        reads[*name] = report;
    }
    json!({
        "singles": singles,
        "series": series,
        "reads": reads,
        "writes": writes,
        "rss_kib": server.status("VmRSS"),
    })
}

/// Creates `count` weekly series (the first 20 timed, with as many single events and series
/// updates), spread over 2026–2028.
fn create_series(client: &Client, base: &str, count: usize) -> Value {
    let timed = |send: &dyn Fn() -> reqwest::blocking::RequestBuilder| -> (f64, Value) {
        let started = Instant::now();
        let r = send()
            .basic_auth(ADMIN, Some(PASSWORD))
            .send()
            .expect("request");
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        assert!(r.status().is_success(), "{}", r.status());
        (ms, r.json().expect("JSON"))
    };
    let (mut singles, mut creates, mut updates) = (Vec::new(), Vec::new(), Vec::new());
    for n in 0..count {
        let day = chrono::NaiveDate::from_ymd_opt(2026, 1, 1).unwrap()
            + chrono::Duration::days((n * 7 % 1000) as i64);
        let start = format!("{} 18:00:00", day.format("%Y-%m-%d"));
        let end = format!("{} 20:00:00", day.format("%Y-%m-%d"));
        let body = json!({"title": format!("Weekly class {n}"), "start_date": start,
                          "end_date": end, "timezone": "Europe/Lisbon",
                          "recurrence": [format!("RRULE:FREQ=WEEKLY;COUNT={OCCURRENCES}")]});
        let (ms, created) = timed(&|| client.post(format!("{base}/events")).json(&body));
        creates.push(ms);
        if n < 20 {
            let id = created["id"].as_u64().unwrap();
            let (ms, _) = timed(&|| {
                client
                    .patch(format!("{base}/events/{id}"))
                    .json(&json!({"title": format!("Weekly class {n}, renamed")}))
            });
            updates.push(ms);
            let single = json!({"title": format!("Single {n}"), "start_date": start,
                                "end_date": end});
            let (ms, _) = timed(&|| client.post(format!("{base}/events")).json(&single));
            singles.push(ms);
        }
    }
    json!({
        "create_single": latencies(&mut singles),
        "create_series": latencies(&mut creates),
        "update_series": latencies(&mut updates),
    })
}

fn latencies(ms: &mut [f64]) -> Value {
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    json!({"count": ms.len(), "median_ms": at(0.5), "p90_ms": at(0.9)})
}

/// The most frequent title word of the first page of upcoming events.
fn frequent_word(client: &Client, base: &str) -> String {
    let body: Value = client
        .get(format!("{base}/events?per_page=50"))
        .send()
        .expect("request")
        .json()
        .expect("JSON");
    let mut counts = std::collections::HashMap::<String, usize>::new();
    for e in body["events"].as_array().into_iter().flatten() {
        for w in e["title"]
            .as_str()
            .unwrap_or("")
            .split(|c: char| !c.is_alphabetic())
            .filter(|w| w.chars().count() >= 4)
        {
            *counts.entry(w.to_lowercase()).or_default() += 1;
        }
    }
    counts
        .into_iter()
        .max_by_key(|(w, n)| (*n, std::cmp::Reverse(w.clone())))
        .map(|(w, _)| w)
        .expect("titles")
}
