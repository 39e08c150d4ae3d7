//! `almanac import --from` over loopback: how fast one almanac copies another.
//!
//!     ALMANAC_BENCH_EVENTS=100000 cargo bench --bench import_from
//!
//! Steps: `almanac generate` fills a source data directory (under `target/tmp`) with the seeded
//! calendar of `ALMANAC_BENCH_EVENTS` events (default 100,000), `almanac user add` adds an
//! administrator, `almanac serve --listen 127.0.0.1:0` serves it; then `almanac import --from
//! <source> --user …` copies it into an empty data directory (every status, the lossless
//! export form, `--concurrency` from `ALMANAC_BENCH_CONCURRENCY`, default 4), and runs again
//! (everything unchanged: it follows the source's change feed), then twice with `--mirror`
//! (a walk, then the change feed). Reported: records, wall time, events per second, and the peak
//! resident memory of each import process (its own, from `wait4`). Output: a markdown table
//! on stdout and `target/bench-results/import-from-<N>.json`.

mod support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;
use support::{env_number, path_str, run, Server};

const BINARY: &str = env!("CARGO_BIN_EXE_almanac");
const ADMIN: &str = "bench";
const PASSWORD: &str = "bench-password-0123456789";

/// One `import --from` run: its summary line, wall seconds and peak RSS (MiB).
// Reaped by `wait4` below, which `Child` does not know about.
#[allow(clippy::zombie_processes)]
fn import(source: &str, into: &Path, concurrency: u32, extra: &[&str]) -> (String, f64, f64) {
    let started = Instant::now();
    let mut child = Command::new(BINARY)
        .args(["import", "--from", source, "--user"])
        .arg(format!("{ADMIN}:{PASSWORD}"))
        .args(["--concurrency", &concurrency.to_string(), "--data-dir"])
        .arg(into)
        .args(extra)
        .env("ALMANAC_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("import starts");
    let pid = child.id() as libc::pid_t;
    let mut summary = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut summary)
        .expect("summary line");
    // wait4 rather than Child::wait: it also gives this process's own peak memory. (The
    // `Child` is then dropped without a wait: the process is already reaped.)
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "waiting for the import");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "the import failed: {summary}"
    );
    (
        summary.trim().to_string(),
        started.elapsed().as_secs_f64(),
        usage.ru_maxrss as f64 / 1024.0,
    )
}

fn main() {
    let events: usize = env_number("ALMANAC_BENCH_EVENTS", 100_000);
    let concurrency: u32 = env_number("ALMANAC_BENCH_CONCURRENCY", 4);
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(tmp).expect("target tmp dir");
    let dir = tempfile::Builder::new()
        .prefix("import-from-")
        .tempdir_in(tmp)
        .expect("temp dir");
    let (source_dir, copy_dir) = (dir.path().join("source"), dir.path().join("copy"));
    eprintln!("generating {events} events into {}", source_dir.display());
    run(Command::new(BINARY)
        .args(["generate", "--events", &events.to_string(), "--data-dir"])
        .arg(&source_dir));
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
        .arg(&source_dir));
    let source = Server::start(
        &[OsStr::new("--data-dir"), source_dir.as_os_str()],
        None,
        |_| {},
    );
    let root = format!("{}/cal/events/v1", source.url);

    let mut rows = Vec::new();
    // A run keeps the source's change feed token for the next run with the same options:
    // the second run follows the feed; the first with --mirror walks (it trashes what a walk
    // did not see), the next one follows again.
    for (run_name, extra) in [
        ("first copy (walk)", &[][..]),
        ("again, unchanged (change feed)", &[][..]),
        ("--mirror, first (walk)", &["--mirror"][..]),
        ("--mirror again, unchanged (change feed)", &["--mirror"][..]),
    ] {
        let (summary, seconds, rss_mib) = import(&root, &copy_dir, concurrency, extra);
        eprintln!("{run_name}: {summary} in {seconds:.1} s, peak RSS {rss_mib:.0} MiB");
        rows.push(json!({
            "run": run_name,
            "summary": summary,
            "seconds": seconds,
            "events_per_second": events as f64 / seconds,
            "peak_rss_mib": rss_mib,
        }));
    }
    let follow = follow_figures(&root, &copy_dir, concurrency);
    drop(source);

    println!("| run | records | wall time | events/s | peak RSS |");
    println!("|---|---|---|---|---|");
    for row in &rows {
        println!(
            "| {} | {} | {:.3} s | {:.0} | {:.0} MiB |",
            row["run"].as_str().unwrap_or_default(),
            row["summary"].as_str().unwrap_or_default(),
            row["seconds"].as_f64().unwrap_or_default(),
            row["events_per_second"].as_f64().unwrap_or_default(),
            row["peak_rss_mib"].as_f64().unwrap_or_default(),
        );
    }
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-results");
    std::fs::create_dir_all(&results).expect("results dir");
    println!();
    println!("| run | figure |");
    println!("|---|---|");
    for (run, figure) in follow.as_object().into_iter().flatten() {
        println!("| {run} | {} |", figure.as_str().unwrap_or_default());
    }
    let report: Value = json!({
        "events": events,
        "concurrency": concurrency,
        "source": path_str(&source_dir),
        "runs": rows,
        "change_feed": follow,
        "loadavg_after": std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim(),
    });
    std::fs::write(
        results.join(format!("import-from-{events}.json")),
        serde_json::to_string_pretty(&report).expect("JSON"),
    )
    .expect("results written");
}

/// The change feed read whole (entries/s, in the export form and as the public), then 1 % of
/// the events changed at the source while a webhook endpoint on loopback hears of them
/// (deliveries/s), then the `--mirror` copy following those changes.
fn follow_figures(root: &str, copy: &Path, concurrency: u32) -> Value {
    let client = reqwest::blocking::Client::new();
    let mut figures = serde_json::Map::new();
    let mut event_ids = Vec::new();
    for export in [true, false] {
        let started = Instant::now();
        let (mut entries, mut since) = (0usize, None::<String>);
        loop {
            let mut url = format!("{root}/changes?per_page=500");
            if export {
                url.push_str("&context=export");
            }
            if let Some(token) = &since {
                url.push_str(&format!("&since={token}"));
            }
            let mut request = client.get(&url);
            if export {
                request = request.basic_auth(ADMIN, Some(PASSWORD));
            }
            let page: Value = request.send().expect("feed page").json().expect("JSON");
            let changes = page["changes"].as_array().expect("changes");
            entries += changes.len();
            if export {
                event_ids.extend(
                    changes
                        .iter()
                        .filter(|c| c["kind"] == "event" && c["record"]["series_id"].is_null())
                        .filter_map(|c| c["id"].as_u64()),
                );
            }
            match page["next_page_token"].as_str() {
                Some(token) => since = Some(token.to_string()),
                None => break,
            }
        }
        let seconds = started.elapsed().as_secs_f64();
        let name = if export {
            "change feed read whole, export form (administrator)"
        } else {
            "change feed read whole, public"
        };
        eprintln!("{name}: {entries} entries in {seconds:.2} s");
        figures.insert(
            name.into(),
            json!(format!(
                "{entries} entries in {seconds:.2} s: {:.0} entries/s",
                entries as f64 / seconds
            )),
        );
    }
    // A receiver that accepts every delivery and notes when each arrived.
    let listener = TcpListener::bind("127.0.0.1:0").expect("receiver");
    let hook = format!("http://{}/hook", listener.local_addr().expect("address"));
    let delivered = Arc::new(AtomicU64::new(0));
    let arrivals: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let (count, times) = (delivered.clone(), arrivals.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = Vec::new();
            let mut buffer = [0u8; 8192];
            // The head, then the body its Content-Length announces.
            loop {
                let n = stream.read(&mut buffer).unwrap_or(0);
                if n == 0 {
                    break;
                }
                request.extend_from_slice(&buffer[..n]);
                let text = String::from_utf8_lossy(&request).to_ascii_lowercase();
                if let Some(end) = text.find("\r\n\r\n") {
                    let length: usize = text
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse().ok())
                        .unwrap_or(0);
                    if request.len() >= end + 4 + length {
                        break;
                    }
                }
            }
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            times.lock().expect("times").push(Instant::now());
            count.fetch_add(1, Ordering::SeqCst);
        }
    });
    let registered = client
        .post(format!("{root}/webhooks"))
        .basic_auth(ADMIN, Some(PASSWORD))
        .json(&json!({"url": hook, "kinds": "events"}))
        .send()
        .expect("webhook registered");
    assert_eq!(registered.status().as_u16(), 201, "webhook registration");
    let changed: Vec<u64> = event_ids.iter().step_by(100).copied().collect();
    let started = Instant::now();
    let writers = 4;
    std::thread::scope(|scope| {
        for part in changed.chunks(changed.len().div_ceil(writers)) {
            let client = &client;
            scope.spawn(move || {
                for id in part {
                    let answer = client
                        .patch(format!("{root}/events/{id}"))
                        .basic_auth(ADMIN, Some(PASSWORD))
                        .json(&json!({"title": format!("Changed {id}")}))
                        .send()
                        .expect("update");
                    assert_eq!(answer.status().as_u16(), 200, "update of {id}");
                }
            });
        }
    });
    let written = started.elapsed().as_secs_f64();
    let target = changed.len() as u64;
    while delivered.load(Ordering::SeqCst) < target {
        assert!(started.elapsed().as_secs() < 600, "deliveries stalled");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let times = arrivals.lock().expect("times").clone();
    let span = times
        .last()
        .expect("deliveries")
        .duration_since(*times.first().expect("deliveries"))
        .as_secs_f64();
    let lag = times
        .last()
        .expect("deliveries")
        .duration_since(started)
        .as_secs_f64()
        - written;
    eprintln!(
        "{target} events changed in {written:.2} s; delivered over {span:.2} s, the last {lag:.2} s after the last write"
    );
    figures.insert(
        format!("{target} events changed (1 %, 4 writers) with a webhook endpoint"),
        json!(format!(
            "writes {:.0}/s; deliveries {:.0}/s ({target} over {span:.2} s), the last {lag:.2} s after the last write",
            target as f64 / written,
            target as f64 / span
        )),
    );
    let (summary, seconds, rss) = import(root, copy, concurrency, &["--mirror"]);
    eprintln!("--mirror after 1 % changed: {summary} in {seconds:.2} s");
    figures.insert(
        "--mirror after 1 % changed (change feed)".into(),
        json!(format!(
            "{summary} in {seconds:.2} s, peak RSS {rss:.0} MiB"
        )),
    );
    Value::Object(figures)
}
