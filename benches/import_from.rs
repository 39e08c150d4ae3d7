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
    let report: Value = json!({
        "events": events,
        "concurrency": concurrency,
        "source": path_str(&source_dir),
        "runs": rows,
        "loadavg_after": std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim(),
    });
    std::fs::write(
        results.join(format!("import-from-{events}.json")),
        serde_json::to_string_pretty(&report).expect("JSON"),
    )
    .expect("results written");
}
