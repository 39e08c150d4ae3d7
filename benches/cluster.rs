//! Cluster benchmark: real nodes (`almanac serve --cluster`, release build) on one throw-away
//! PostgreSQL server (the tests' `initdb` + `pg_ctl` helper), driven over HTTP by client
//! threads in this process.
//!
//!     ALMANAC_BENCH_EVENTS=1000 cargo bench --bench cluster
//!
//! Steps: `almanac generate` fills a data directory with the seeded calendar of
//! `ALMANAC_BENCH_EVENTS` events (default 1,000); a single server (no cluster) serves one
//! copy, the yardstick of the writes below; the same calendar is uploaded with `almanac
//! cluster init` and node A serves that directory. Then, each for `ALMANAC_BENCH_SECONDS`
//! seconds (default 5):
//!
//! - writes through node A alone, with 1 and 4 writers (what a node's writes cost when its
//!   peers run on other machines), taking turns with the same on the single server;
//! - node B joins from the snapshot; writes through one node (A) and through both (writers
//!   alternating A and B), with 1 and 4 writers, taking turns with the single server again.
//!   Creates per second and latency p50/p99; the runs of each step take turns in five slices
//!   (see `take_turns`), each idle while another is measured;
//! - replication lag: one writer on A; after each acknowledged create, B's `/healthz` is asked
//!   with the create's `X-Cal-Seq` as `X-Cal-Min-Seq` (B answers once it has applied that
//!   write): p50/p99 of the time from A's answer to B's;
//! - reads: a search + date-window list with 4 connections on A alone, then 2 on A and 2 on B.
//!
//! Output: a markdown table and the ratios of cluster writes to a single server's on stdout, and
//! `target/bench-results/cluster-<N>.json`.

#[path = "../tests/common/postgres.rs"]
#[allow(dead_code)]
mod postgres;
mod support;

use serde_json::{json, Value};
use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use support::{env_number, run, Server};

const BINARY: &str = env!("CARGO_BIN_EXE_almanac");
const NAMESPACE: &str = "/cal/events/v1";
const ADMIN: &str = "bench";
const PASSWORD: &str = "bench-password-0123456789";
/// The slices each write run is cut into (see `main`).
const WRITE_SLICES: u32 = 5;

/// A node of the cluster at `cluster` on `data`, its log beside the directory.
fn start_node(cluster: &str, data: &Path) -> Server {
    Server::start(
        &[
            OsStr::new("--cluster"),
            OsStr::new(cluster),
            OsStr::new("--data-dir"),
            data.as_os_str(),
        ],
        Some(&data.with_extension("log")),
        |_| {},
    )
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

/// Requests/s, p50 and p99 in ms.
fn summary(mut latencies: Vec<Duration>, seconds: f64) -> Value {
    latencies.sort();
    json!({
        "requests": latencies.len(),
        "per_second": (latencies.len() as f64 / seconds).round(),
        "p50_ms": (percentile(&latencies, 0.5) * 100.0).round() / 100.0,
        "p99_ms": (percentile(&latencies, 0.99) * 100.0).round() / 100.0,
    })
}

/// `threads` clients, the i-th sending to `targets[i % len]`, each running `request` for
/// `length`; the latencies of the answers `request` counts as successes.
fn load(
    targets: &[&str],
    threads: usize,
    length: Duration,
    request: impl Fn(&reqwest::blocking::Client, &str) -> bool + Sync,
) -> Vec<Duration> {
    let deadline = Instant::now() + length;
    let latencies: Vec<Duration> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let (target, request) = (targets[i % targets.len()], &request);
                scope.spawn(move || {
                    let client = reqwest::blocking::Client::new();
                    let mut mine = Vec::new();
                    while Instant::now() < deadline {
                        let started = Instant::now();
                        if request(&client, target) {
                            mine.push(started.elapsed());
                        }
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("client thread"))
            .collect()
    });
    latencies
}

/// Creates with 1 and then 4 writers on each of `targets` (a name and its nodes), the runs
/// taking turns in [`WRITE_SLICES`] slices of `seconds` in all: the machine is shared and its
/// speed drifts during a run; alternating, the single server and the cluster meet the same
/// drift. The latencies of each run, named `creates, N writer(s), NAME`.
fn take_turns(targets: &[(&str, Vec<&str>)], seconds: u64) -> Vec<(String, Vec<Duration>)> {
    let runs: Vec<(String, &[&str], usize)> = [1, 4]
        .into_iter()
        .flat_map(|writers| {
            targets.iter().map(move |(name, nodes)| {
                (
                    format!("creates, {writers} writer(s), {name}"),
                    nodes.as_slice(),
                    writers,
                )
            })
        })
        .collect();
    let slice = Duration::from_secs(seconds) / WRITE_SLICES;
    let mut latencies: Vec<Vec<Duration>> = vec![Vec::new(); runs.len()];
    // Numbered across the slices, so that no title (and slug) comes back.
    let numbers = AtomicU64::new(0);
    for _ in 0..WRITE_SLICES {
        for ((_, nodes, writers), mine) in runs.iter().zip(&mut latencies) {
            mine.extend(load(nodes, *writers, slice, |client, base| {
                let n = numbers.fetch_add(1, Ordering::Relaxed);
                create(client, base, n).is_some()
            }));
        }
    }
    runs.into_iter()
        .map(|(name, _, _)| name)
        .zip(latencies)
        .collect()
}

fn create(client: &reqwest::blocking::Client, base: &str, n: u64) -> Option<u64> {
    let body = json!({
        "title": format!("Benchmark concert {n} {}", std::process::id()),
        "description": "Written by the cluster benchmark.",
        "start_date": "2027-03-01 20:00:00",
        "end_date": "2027-03-01 22:00:00",
        "status": "publish",
    });
    let r = client
        .post(format!("{base}{NAMESPACE}/events"))
        .basic_auth(ADMIN, Some(PASSWORD))
        .json(&body)
        .send()
        .ok()?;
    if r.status().as_u16() != 201 {
        return None;
    }
    r.headers()
        .get("x-cal-seq")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
}

/// The node's position, answered once it has reached `seq` (`X-Cal-Min-Seq`: the node answers
/// when it applies that write, without the client polling it).
fn position_once_at(client: &reqwest::blocking::Client, base: &str, seq: u64) -> u64 {
    client
        .get(format!("{base}/healthz"))
        .header("X-Cal-Min-Seq", seq)
        .send()
        .and_then(|r| r.json::<Value>())
        .ok()
        .and_then(|v| v["position"].as_u64())
        .unwrap_or(0)
}

fn main() {
    let events: usize = env_number("ALMANAC_BENCH_EVENTS", 1000);
    let seconds: u64 = env_number("ALMANAC_BENCH_SECONDS", 5);
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temporary directory");
    let (a_dir, b_dir) = (tmp.path().join("a"), tmp.path().join("b"));
    // A data directory with the seeded calendar and the benchmark's administrator.
    let prepare = |dir: &Path| {
        run(Command::new(BINARY)
            .args(["generate", "--events", &events.to_string(), "--data-dir"])
            .arg(dir));
        run(Command::new(BINARY)
            .args([
                "user",
                "add",
                ADMIN,
                "--role",
                "administrator",
                "--password",
                PASSWORD,
            ])
            .arg("--data-dir")
            .arg(dir));
    };
    let mut results = serde_json::Map::new();

    // A single server on the same calendar: the writes' yardstick.
    let single_dir = tmp.path().join("single");
    prepare(&single_dir);
    let mut single = Server::start(
        &[OsStr::new("--data-dir"), single_dir.as_os_str()],
        Some(&single_dir.with_extension("log")),
        |_| {},
    );
    let pg = postgres::Postgres::start();
    let url = pg.url();
    prepare(&a_dir);
    run(Command::new(BINARY)
        .args(["cluster", "init", "--cluster", &url, "--data-dir"])
        .arg(&a_dir));
    let a = start_node(&url, &a_dir);
    let single_url = single.url.as_str();
    // First node A alone (what a node's writes cost when its peers run on other machines),
    // then with node B following it on the same vCPUs, writes through A and through both.
    let alone = take_turns(
        &[
            ("single server, beside A alone", vec![single_url]),
            ("node A alone", vec![a.url.as_str()]),
        ],
        seconds,
    );
    let b = start_node(&url, &b_dir);
    let (a_url, b_url) = (a.url.as_str(), b.url.as_str());
    let with_b = take_turns(
        &[
            ("single server", vec![single_url]),
            ("one node", vec![a_url]),
            ("two nodes", vec![a_url, b_url]),
        ],
        seconds,
    );
    // Each step's cluster runs are compared with the single server's turns of that step.
    for (name, latencies) in alone.into_iter().chain(with_b) {
        results.insert(name, summary(latencies, seconds as f64));
    }
    single.stop();

    // Replication lag: A's answer to B's position.
    let client = reqwest::blocking::Client::new();
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut lags = Vec::new();
    let mut n = 1_000_000;
    while Instant::now() < deadline {
        n += 1;
        let Some(seq) = create(&client, a_url, n) else {
            continue;
        };
        let acknowledged = Instant::now();
        while position_once_at(&client, b_url, seq) < seq {}
        lags.push(acknowledged.elapsed());
    }
    results.insert(
        "replication lag A to B".into(),
        summary(lags, seconds as f64),
    );

    let list =
        format!("{NAMESPACE}/events?search=concert&start_date=2026-01-01&end_date=2027-12-31");
    for (name, targets) in [("one node", vec![a_url]), ("two nodes", vec![a_url, b_url])] {
        let latencies = load(&targets, 4, Duration::from_secs(seconds), |client, base| {
            client
                .get(format!("{base}{list}"))
                .send()
                .is_ok_and(|r| r.status().is_success() && r.bytes().is_ok())
        });
        results.insert(
            format!("search + window list, 4 connections, {name}"),
            summary(latencies, seconds as f64),
        );
    }

    println!("| Run | Requests/s | p50 ms | p99 ms |");
    println!("|---|---|---|---|");
    for (name, r) in &results {
        println!(
            "| {name} | {} | {} | {} |",
            r["per_second"], r["p50_ms"], r["p99_ms"]
        );
    }
    let rate = |name: &str| results[name]["per_second"].as_f64().unwrap_or(0.0);
    for (what, of, to) in [
        (
            "node A alone ÷ single server, 1 writer",
            "creates, 1 writer(s), node A alone",
            "creates, 1 writer(s), single server, beside A alone",
        ),
        (
            "node A alone ÷ single server, 4 writers",
            "creates, 4 writer(s), node A alone",
            "creates, 4 writer(s), single server, beside A alone",
        ),
        (
            "one node ÷ single server, 1 writer",
            "creates, 1 writer(s), one node",
            "creates, 1 writer(s), single server",
        ),
        (
            "one node ÷ single server, 4 writers",
            "creates, 4 writer(s), one node",
            "creates, 4 writer(s), single server",
        ),
        (
            "two nodes ÷ one node, 4 writers",
            "creates, 4 writer(s), two nodes",
            "creates, 4 writer(s), one node",
        ),
    ] {
        println!("{what}: {:.2}", rate(of) / rate(to).max(1.0));
    }
    let out = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target directory")
        .join("bench-results");
    std::fs::create_dir_all(&out).expect("results directory");
    let file = out.join(format!("cluster-{events}.json"));
    let report = json!({"events": events, "seconds": seconds, "results": results});
    std::fs::write(&file, serde_json::to_string_pretty(&report).unwrap()).expect("results file");
    eprintln!("results written to {}", file.display());
}
