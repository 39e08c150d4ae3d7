//! Overload benchmark: the real server (`almanac serve`, release build) on loopback, driven by
//! wrk far beyond what it can answer, with a `/healthz` probe alongside. It checks that no
//! connection is lost and that the probe is still answered while lists saturate the server
//! (docs/performance.md, "Overload").
//!
//!     ALMANAC_BENCH_EVENTS=100000 cargo bench --bench overload
//!
//! Steps: `almanac generate` fills a temporary data directory (under `target/tmp`) with the
//! seeded calendar of `ALMANAC_BENCH_EVENTS` events (default 100,000: at 1,000 a list is too
//! cheap to saturate the server) and `almanac serve --listen 127.0.0.1:0` serves it without the
//! response cache, so that every list is built. Then, for 256 and 1,000 connections, for
//! `ALMANAC_BENCH_SECONDS` seconds (default 10):
//!
//! - `benches/wrk/mix.lua` sends, on kept-alive connections (`-t2`), the upcoming list with 50
//!   events, the default list, a search for the calendar's most frequent title word and a
//!   two-word search with 20 events, in turn;
//! - `benches/wrk/report.lua` probes `GET /healthz` over 4 connections, each request on a new
//!   connection (`Connection: close`), so the probe also measures accepting one.
//!
//! Every request has 10 s to be answered (wrk's `--timeout`). 1,000 connections stay under the
//! default cap of 1,024 (`ALMANAC_MAX_CONNECTIONS`), so that the probe is served and not kept
//! in the listen backlog. Output: a Markdown table on stdout and
//! `target/bench-results/overload-<N>.json`. Any socket error (connect, read, write, timeout) or
//! error answer (4xx, 5xx) fails the benchmark.

mod support;

use serde_json::{json, Value};
use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use support::{env_number, path_str, run, wrk_command, wrk_report, Server};

const BINARY: &str = env!("CARGO_BIN_EXE_almanac");
const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");
const NAMESPACE: &str = "/cal/events/v1";
/// Kept-alive list connections of each run.
const CONNECTIONS: [u32; 2] = [256, 1000];
/// Connections of the `/healthz` probe.
const PROBES: u32 = 4;
const ERRORS: [&str; 5] = [
    "connect_errors",
    "read_errors",
    "write_errors",
    "timeouts",
    "status_errors",
];

fn main() {
    let events: usize = env_number("ALMANAC_BENCH_EVENTS", 100_000);
    let seconds: u64 = env_number("ALMANAC_BENCH_SECONDS", 10);
    if Command::new("wrk").arg("--version").output().is_err() {
        eprintln!("wrk is not installed (Debian/Ubuntu: apt-get install -y wrk)");
        std::process::exit(1);
    }
    let scripts = Path::new(MANIFEST_DIR).join("benches/wrk");
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(tmp).expect("target tmp dir");
    let dir = tempfile::Builder::new()
        .prefix("overload-")
        .tempdir_in(tmp)
        .expect("temp dir");
    let data = dir.path().join("data");
    eprintln!("generating {events} events into {}", data.display());
    run(Command::new(BINARY).args([
        "generate",
        "--events",
        &events.to_string(),
        "--seed",
        "2026",
        "--data-dir",
        path_str(&data),
    ]));

    let mut server = start_server(&data, dir.path());
    let (first, second) = frequent_title_words(&format!("{}{NAMESPACE}", server.url));
    let paths = format!(
        "/events?per_page=50 /events /events?search={first} /events?search={first}+{second}&per_page=20"
    );
    eprintln!("list mix: {paths}");
    let lists_url = format!("{}{NAMESPACE}", server.url);
    let health_url = format!("{}/healthz", server.url);
    // A short warm-up, so that the first run does not pay for cold pages.
    wrk(&scripts.join("mix.lua"), &lists_url, 1, 4, 2, &[], &paths);

    let mut results = Vec::new();
    for connections in CONNECTIONS {
        let cpu_before = server.cpu_seconds();
        let lists = spawn_wrk(
            &scripts.join("mix.lua"),
            &lists_url,
            2,
            connections,
            seconds,
            &[],
            &paths,
        );
        // The probe starts once the lists have filled the server's queues.
        std::thread::sleep(std::time::Duration::from_secs(1));
        let health = wrk(
            &scripts.join("report.lua"),
            &health_url,
            1,
            PROBES,
            seconds.saturating_sub(2).max(1),
            &["Connection: close"],
            "",
        );
        let lists = report(lists.wait_with_output().expect("wrk runs"));
        let cpu = server.cpu_seconds() - cpu_before;
        eprintln!(
            "c{connections}: lists {}; healthz {}; server CPU {cpu:.1} s, {} threads",
            summary(&lists),
            summary(&health),
            server.status("Threads").unwrap_or(0)
        );
        results.push(json!({
            "connections": connections,
            "lists": lists,
            "healthz": health,
            "server_cpu_s": cpu,
        }));
    }
    server.stop();

    let report = json!({
        "events": events,
        "seconds_per_run": seconds,
        "list_paths": paths,
        "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "results": results,
    });
    let out_dir = Path::new(MANIFEST_DIR).join("target/bench-results");
    std::fs::create_dir_all(&out_dir).expect("results dir");
    let out = out_dir.join(format!("overload-{events}.json"));
    std::fs::write(&out, serde_json::to_string_pretty(&report).unwrap() + "\n")
        .expect("results file");

    println!();
    println!(
        "Overload, {events} events, {seconds} s per run, wrk on loopback ({} CPUs)",
        report["cpus"]
    );
    println!();
    println!("| connections | lists req/s | lists p50 | lists p99 | lists max | healthz req/s | healthz p50 | healthz p99 | socket errors | 4xx/5xx |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut failures = Vec::new();
    for r in &results {
        let (lists, health) = (&r["lists"], &r["healthz"]);
        let socket = |w: &Value| -> u64 { ERRORS[..4].iter().map(|k| count(w, k)).sum() };
        let status = |w: &Value| count(w, "status_errors");
        println!(
            "| {} | {:.0} | {} | {} | {} | {:.0} | {} | {} | {} | {} |",
            r["connections"],
            lists["rps"].as_f64().unwrap_or(0.0),
            ms(&lists["p50_us"]),
            ms(&lists["p99_us"]),
            ms(&lists["max_us"]),
            health["rps"].as_f64().unwrap_or(0.0),
            ms(&health["p50_us"]),
            ms(&health["p99_us"]),
            socket(lists) + socket(health),
            status(lists) + status(health),
        );
        for (name, w) in [("lists", lists), ("healthz", health)] {
            for key in ERRORS {
                if count(w, key) > 0 {
                    failures.push(format!(
                        "c{} {name}: {} {key}",
                        r["connections"],
                        count(w, key)
                    ));
                }
            }
        }
    }
    println!("results: {}", out.display());
    if !failures.is_empty() {
        eprintln!("FAILED: requests or connections were lost under overload:");
        for f in &failures {
            eprintln!("  {f}");
        }
        std::process::exit(1);
    }
}

fn count(wrk: &Value, key: &str) -> u64 {
    wrk[key].as_u64().unwrap_or(0)
}

fn ms(us: &Value) -> String {
    let us = us.as_f64().unwrap_or(f64::NAN);
    if us < 10_000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{:.0} ms", us / 1000.0)
    }
}

fn summary(r: &Value) -> String {
    format!(
        "{:.0} req/s, p50 {}, p99 {}, errors {}",
        r["rps"].as_f64().unwrap_or(0.0),
        ms(&r["p50_us"]),
        ms(&r["p99_us"]),
        ERRORS.iter().map(|k| count(r, k)).sum::<u64>()
    )
}

/// The two most frequent words (four letters or more) in the titles of the first upcoming
/// events: searches that match a large share of the calendar.
fn frequent_title_words(base: &str) -> (String, String) {
    let body: Value = reqwest::blocking::get(format!("{base}/events?per_page=50"))
        .and_then(|r| r.error_for_status())
        .and_then(|r| r.json())
        .expect("the upcoming list");
    let mut words: HashMap<String, usize> = HashMap::new();
    for e in body["events"].as_array().into_iter().flatten() {
        let title = e["title"].as_str().unwrap_or("");
        for w in title.split(|c: char| !c.is_ascii_alphabetic()) {
            if w.len() >= 4 {
                *words.entry(w.to_ascii_lowercase()).or_default() += 1;
            }
        }
    }
    let mut ranked: Vec<(String, usize)> = words.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut ranked = ranked.into_iter().map(|(w, _)| w);
    let first = ranked.next().expect("titles with words");
    (first, ranked.next().unwrap_or_else(|| "festival".into()))
}

fn wrk(
    script: &Path,
    url: &str,
    threads: u32,
    connections: u32,
    seconds: u64,
    headers: &[&str],
    paths: &str,
) -> Value {
    let child = spawn_wrk(script, url, threads, connections, seconds, headers, paths);
    report(child.wait_with_output().expect("wrk runs"))
}

fn spawn_wrk(
    script: &Path,
    url: &str,
    threads: u32,
    connections: u32,
    seconds: u64,
    headers: &[&str],
    paths: &str,
) -> Child {
    wrk_command(
        script,
        url,
        threads,
        connections,
        seconds,
        headers,
        &[("ALMANAC_BENCH_PATHS", paths)],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("wrk starts")
}

/// The `ALMANAC_BENCH` line of `benches/wrk/report.lua`.
fn report(out: std::process::Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "wrk failed: {}\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    wrk_report(&stdout)
}

/// The server on `data`, its log in `server.log` in `logs`.
fn start_server(data: &Path, logs: &Path) -> Server {
    Server::start(
        &[OsStr::new("--data-dir"), data.as_os_str()],
        Some(&logs.join("server.log")),
        |command| {
            // Every list is built: the mix repeats four URLs, which the response cache would
            // otherwise answer.
            command.env("ALMANAC_RESPONSE_CACHE_MB", "0");
        },
    )
}
