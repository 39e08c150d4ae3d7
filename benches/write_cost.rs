//! What a write costs the server, and what it does to readers: the real server (`almanac
//! serve`, release build) on loopback, driven by wrk (`apt-get install wrk`).
//!
//!     ALMANAC_BENCH_SIZES=1000,100000 cargo bench --bench write_cost
//!
//! For each calendar size in `ALMANAC_BENCH_SIZES` (events, default `1000,100000`):
//! `almanac generate` fills a temporary data directory (under `target/tmp`) with the seeded
//! calendar, `almanac user add` adds an administrator, `almanac serve --listen 127.0.0.1:0`
//! starts the server. Then, each run for `ALMANAC_BENCH_SECONDS` seconds (default 10):
//!
//! - Reads while someone writes: a search + date-window list (the most frequent title word of
//!   the upcoming events, six calendar months from the month of a mid-list one) at two
//!   connections (`-t2 -c2`), once alone and once while a second wrk sends creates at one
//!   connection: requests/s, p50 and p99 of both, and their ratios. These run first, on the
//!   calendar as generated.
//! - Creates (`benches/wrk/post_event.lua`) at one writer (`-t1 -c1`) and four (`-t2 -c4`),
//!   updates (`benches/wrk/patch_event.lua`: a new title for one of 50 existing events in turn)
//!   and deletes (`benches/wrk/delete_event.lua`: events the create runs added, each moved to
//!   the trash once) at one writer: writes/s and the server's CPU time per write. The CPU time is the server
//!   process's user + system time from `/proc/<pid>/stat`, read before the run and again once
//!   the run has settled; it is divided by the writes the server acknowledged (the growth of
//!   the `position` of its `/healthz`).
//!
//! The server runs without its response cache (`ALMANAC_RESPONSE_CACHE_MB=0`, unless the
//! variable is set), as in `http_load`: the reads measure what a list costs to build.
//!
//! Output: a markdown table on stdout and `target/bench-results/write-cost-<N>.json` per size
//! (the raw wrk figures, CPU times, the machine). The binary is the one Cargo builds for
//! benchmarks (`CARGO_BIN_EXE_almanac`); the server logs at `warn` to a file in the data
//! directory.

mod support;

use serde_json::{json, Value};
use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;
use support::{clock_ticks, env_number, path_str, run, wrk_command, wrk_report, Server};

const BINARY: &str = env!("CARGO_BIN_EXE_almanac");
const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");
const NAMESPACE: &str = "/cal/events/v1";
const ADMIN: &str = "bench";
const PASSWORD: &str = "bench-password-0123456789";
/// Existing events whose titles the update run changes, one after the other.
const UPDATED_EVENTS: usize = 50;
/// Wait after a write run before the server's CPU time is read: the request each connection
/// still had in flight is answered, and the index files the run wrote are synced, which
/// happens at most once a second (docs/architecture.md, "Consistency").
const SETTLE: Duration = Duration::from_secs(2);
/// Words too frequent in every language to be useful search terms.
const STOP_WORDS: &[&str] = &[
    "the", "and", "for", "with", "of", "a", "an", "in", "on", "at", "to", "de", "da", "do", "das",
    "dos", "e", "o", "os", "as", "em", "com", "para", "la", "el", "los", "las", "y", "con", "del",
    "en", "por", "un", "una", "um", "uma", "no", "na",
];
/// The words of the titles this benchmark writes: the read must not match what the writer adds.
const OWN_WORDS: &[&str] = &["benchmark", "concert", "update", "check"];

type Client = reqwest::blocking::Client;

fn main() {
    // `cargo bench` passes `--bench` (and maybe a filter); nothing here takes arguments.
    let sizes: Vec<usize> = std::env::var("ALMANAC_BENCH_SIZES")
        .unwrap_or_else(|_| "1000,100000".into())
        .split(',')
        .map(|s| {
            s.trim()
                .replace('_', "")
                .parse()
                .unwrap_or_else(|_| panic!("ALMANAC_BENCH_SIZES: {s:?} is not a number"))
        })
        .collect();
    let seconds: u64 = env_number("ALMANAC_BENCH_SECONDS", 10);
    if Command::new("wrk").arg("--version").output().is_err() {
        eprintln!("wrk is not installed (Debian/Ubuntu: apt-get install -y wrk)");
        std::process::exit(1);
    }
    eprintln!("binary: {BINARY}");
    let out_dir = Path::new(MANIFEST_DIR).join("target/bench-results");
    std::fs::create_dir_all(&out_dir).expect("results dir");

    let mut rows = Vec::new();
    let mut failed = 0;
    for &events in &sizes {
        let report = measure(events, seconds);
        failed += report["failed_requests"].as_u64().unwrap_or(0);
        let out = out_dir.join(format!("write-cost-{events}.json"));
        std::fs::write(&out, serde_json::to_string_pretty(&report).unwrap() + "\n")
            .expect("results file");
        eprintln!("results: {}", out.display());
        rows.extend(table_rows(&report));
    }

    let machine = machine();
    println!();
    println!(
        "Write cost, {seconds} s per run, wrk on loopback ({} CPUs, {}; load average at the \
         end {})",
        machine["cpus"],
        machine["cpu"].as_str().unwrap_or("?"),
        machine["loadavg_after"]
            .as_str()
            .unwrap_or("?")
            .split(' ')
            .take(3)
            .collect::<Vec<_>>()
            .join(" "),
    );
    println!();
    println!("| events | run | load | req/s | p50 | p99 | server CPU per request | ratios |");
    println!("|---|---|---|---|---|---|---|---|");
    for row in rows {
        println!("{row}");
    }
    if failed > 0 {
        println!();
        println!("WARNING: {failed} failed requests (see the JSON files)");
    }
}

/// Every run at one calendar size; the report written to its JSON file.
fn measure(events: usize, seconds: u64) -> Value {
    let scripts = Path::new(MANIFEST_DIR).join("benches/wrk");
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(tmp).expect("target tmp dir");
    let dir = tempfile::Builder::new()
        .prefix("write-cost-")
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
    let loadavg_before = loadavg();

    let mut server = start_server(&data, dir.path());
    let base = format!("{}{NAMESPACE}", server.url);
    let client = Client::builder()
        .timeout(Duration::from_secs(120))
        .build()
        .expect("client");
    let p = Parameters::read(&client, &base);
    eprintln!(
        "parameters: {}",
        serde_json::to_string(&p.describe()).unwrap()
    );
    let auth = format!(
        "Authorization: Basic {}",
        base64_encode(format!("{ADMIN}:{PASSWORD}").as_bytes())
    );
    let category = p.category.to_string();
    let ids = p
        .update_ids
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let events_url = format!("{base}/events");
    let create = |threads: u32, connections: u32, seconds: u64| {
        wrk_command(
            &scripts.join("post_event.lua"),
            &events_url,
            threads,
            connections,
            seconds,
            &[&auth],
            &[("ALMANAC_BENCH_CATEGORY", &category)],
        )
    };
    let delete = |threads: u32, connections: u32, seconds: u64, ids: &str| {
        wrk_command(
            &scripts.join("delete_event.lua"),
            &events_url,
            threads,
            connections,
            seconds,
            &[&auth],
            &[("ALMANAC_BENCH_IDS", ids)],
        )
    };
    let update = |threads: u32, connections: u32, seconds: u64| {
        wrk_command(
            &scripts.join("patch_event.lua"),
            &events_url,
            threads,
            connections,
            seconds,
            &[&auth],
            &[("ALMANAC_BENCH_IDS", &ids)],
        )
    };

    // Reads, alone and beside a writer. The writer starts first and runs a second longer, so
    // that it writes during the whole read run.
    let read_url = format!(
        "{base}/events?search={}&start_date={}&end_date={}",
        p.word, p.window.0, p.window.1
    );
    let read_matches = list_total(&client, &read_url, false);
    assert!(read_matches > 0, "{read_url} matches no event");
    let read = || {
        wrk_command(
            &scripts.join("report.lua"),
            &read_url,
            2,
            2,
            seconds,
            &[],
            &[],
        )
    };
    let alone = measured(&server, &client, || wrk_report(&run(&mut read())));
    eprintln!("read, 2 connections alone: {}", summary(&alone.wrk));
    let mut writer_run = None;
    let beside = measured(&server, &client, || {
        let writer = create(1, 1, seconds + 1)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("wrk starts");
        std::thread::sleep(Duration::from_millis(500));
        let r = wrk_report(&run(&mut read()));
        let out = writer.wait_with_output().expect("wrk ends");
        assert!(
            out.status.success(),
            "wrk (writer) failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        writer_run = Some(wrk_report(&String::from_utf8_lossy(&out.stdout)));
        r
    });
    let writer_run = writer_run.expect("the writer ran");
    eprintln!(
        "read, 2 connections beside a writer: {}; writer: {}",
        summary(&beside.wrk),
        summary(&writer_run)
    );
    let ratio = |key: &str| {
        beside.wrk[key].as_f64().unwrap_or(f64::NAN) / alone.wrk[key].as_f64().unwrap_or(f64::NAN)
    };
    let mut alone_json = alone.json();
    alone_json["cpu_ms_per_read"] =
        json!(alone.cpu_ms_per(alone.wrk["requests"].as_u64().unwrap_or(0)));
    let reads = json!({
        "path": read_url.strip_prefix(&base).unwrap_or(&read_url),
        "matches": read_matches,
        "threads": 2,
        "connections": 2,
        "alone": alone_json,
        "beside_writer": beside.json(),
        "writer": writer_run,
        "rps_ratio": ratio("rps"),
        "p50_ratio": ratio("p50_us"),
        "p99_ratio": ratio("p99_us"),
    });

    // Writes, with the server's CPU time.
    let mut writes = Vec::new();
    let runs = [
        ("create", 1, 1),
        ("create", 2, 4),
        ("update", 1, 1),
        ("delete", 1, 1),
    ];
    for (name, threads, connections) in runs {
        // The events the create runs added, for the delete run (each deleted once).
        let doomed = if name == "delete" {
            benchmark_events(&client, &events_url, seconds as usize * 2000)
        } else {
            Vec::new()
        };
        // A single request first: a create must answer 201, an update and a delete 200.
        let target = doomed.last().copied().unwrap_or(p.update_ids[0]);
        check_write(&client, &base, name, p.category, target);
        let ids = doomed[..doomed.len().saturating_sub(1)]
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let before = list_total(&client, &format!("{events_url}?{ALL_EVENTS}"), true);
        let m = measured(&server, &client, || {
            let mut command = match name {
                "create" => create(threads, connections, seconds),
                "update" => update(threads, connections, seconds),
                _ => delete(threads, connections, seconds, &ids),
            };
            wrk_report(&run(&mut command))
        });
        let after = list_total(&client, &format!("{events_url}?{ALL_EVENTS}"), true);
        let requests = m.wrk["requests"].as_u64().unwrap_or(0);
        let added = after.saturating_sub(before);
        // Every acknowledged request is one write; a request still in flight when wrk stopped
        // is written without being counted by wrk.
        if m.writes < requests || m.writes > requests + u64::from(connections) {
            eprintln!(
                "WARNING: {name} c{connections}: wrk counted {requests} answers, the server's \
                 position grew by {}",
                m.writes
            );
        }
        let expected_added = if name == "create" { m.writes } else { 0 };
        if added != expected_added {
            eprintln!(
                "WARNING: {name} c{connections}: {} writes, the calendar grew by {added} events",
                m.writes
            );
        }
        eprintln!(
            "{name} c{connections}: {}; {:.2} ms server CPU per write",
            summary(&m.wrk),
            m.cpu_ms_per(m.writes)
        );
        let mut v = m.json();
        if let Value::Object(o) = &mut v {
            o.insert("kind".into(), json!(name));
            o.insert("threads".into(), json!(threads));
            o.insert("connections".into(), json!(connections));
            o.insert("events_added".into(), json!(added));
            o.insert("cpu_ms_per_write".into(), json!(m.cpu_ms_per(m.writes)));
        }
        writes.push(v);
    }
    let events_after = list_total(&client, &format!("{events_url}?{ALL_EVENTS}"), true);
    drop(client);
    server.stop();

    let failed = std::iter::once(&reads["alone"]["wrk"])
        .chain([&reads["beside_writer"]["wrk"], &reads["writer"]])
        .chain(writes.iter().map(|w| &w["wrk"]))
        .map(failures)
        .sum::<u64>();
    let mut machine = machine();
    if let Value::Object(m) = &mut machine {
        m.insert("loadavg_before".into(), json!(loadavg_before));
    }
    json!({
        "events": events,
        "seconds_per_run": seconds,
        "generated": generated.trim(),
        "machine": machine,
        "parameters": p.describe(),
        "clock_ticks_per_second": clock_ticks(),
        "settle_s": SETTLE.as_secs_f64(),
        "reads": reads,
        "writes": writes,
        "events_after": events_after,
        "failed_requests": failed,
    })
}

/// The markdown rows of one size's report.
fn table_rows(report: &Value) -> Vec<String> {
    let events = thousands(report["events"].as_u64().unwrap_or(0));
    let mut rows = Vec::new();
    for w in report["writes"].as_array().into_iter().flatten() {
        let connections = w["connections"].as_u64().unwrap_or(0);
        rows.push(format!(
            "| {events} | {} | {connections} writer{} (`-t{} -c{connections}`) | {:.0} | {} | {} \
             | {:.2} ms | |",
            w["kind"].as_str().unwrap_or("?"),
            if connections == 1 { "" } else { "s" },
            w["threads"],
            w["wrk"]["rps"].as_f64().unwrap_or(0.0),
            ms(&w["wrk"]["p50_us"]),
            ms(&w["wrk"]["p99_us"]),
            w["cpu_ms_per_write"].as_f64().unwrap_or(f64::NAN),
        ));
    }
    let r = &report["reads"];
    let read = format!("search + 6-month window ({} matches)", r["matches"]);
    let alone = &r["alone"];
    rows.push(format!(
        "| {events} | {read} | 2 connections, no writer | {:.0} | {} | {} | {:.2} ms | |",
        alone["wrk"]["rps"].as_f64().unwrap_or(0.0),
        ms(&alone["wrk"]["p50_us"]),
        ms(&alone["wrk"]["p99_us"]),
        alone["cpu_ms_per_read"].as_f64().unwrap_or(f64::NAN),
    ));
    let beside = &r["beside_writer"];
    rows.push(format!(
        "| {events} | {read} | 2 connections + 1 writer ({:.0} creates/s) | {:.0} | {} | {} | – \
         | req/s ×{:.2}, p99 ×{:.2} |",
        r["writer"]["rps"].as_f64().unwrap_or(0.0),
        beside["wrk"]["rps"].as_f64().unwrap_or(0.0),
        ms(&beside["wrk"]["p50_us"]),
        ms(&beside["wrk"]["p99_us"]),
        r["rps_ratio"].as_f64().unwrap_or(f64::NAN),
        r["p99_ratio"].as_f64().unwrap_or(f64::NAN),
    ));
    rows
}

/// Every event in any status, for the calendar's size.
const ALL_EVENTS: &str = "per_page=1&status=any&start_date=2000-01-01";

/// One run with the server's CPU time around it.
struct Measured {
    wrk: Value,
    cpu_s: f64,
    wall_s: f64,
    /// Writes the server acknowledged (the growth of its position).
    writes: u64,
}

impl Measured {
    /// Server CPU milliseconds per one of `n` requests or writes.
    fn cpu_ms_per(&self, n: u64) -> f64 {
        self.cpu_s * 1000.0 / n as f64
    }

    fn json(&self) -> Value {
        json!({
            "wrk": self.wrk,
            "server_cpu_s": self.cpu_s,
            "wrk_wall_s": self.wall_s,
            "server_cpus_busy": self.cpu_s / self.wall_s,
            "writes": self.writes,
        })
    }
}

/// Runs `f` (a wrk run) between two readings of the server's CPU time and position, the second
/// [`SETTLE`] after the run.
fn measured(server: &Server, client: &Client, f: impl FnOnce() -> Value) -> Measured {
    let position_before = position(client, &server.url);
    let cpu_before = server.cpu_seconds();
    let started = std::time::Instant::now();
    let wrk = f();
    let wall_s = started.elapsed().as_secs_f64();
    std::thread::sleep(SETTLE);
    let cpu_s = server.cpu_seconds() - cpu_before;
    let writes = position(client, &server.url) - position_before;
    Measured {
        wrk,
        cpu_s,
        wall_s,
        writes,
    }
}

/// The server's position (`GET /healthz`): it grows by one with every write.
fn position(client: &Client, url: &str) -> u64 {
    let body: Value = client
        .get(format!("{url}/healthz"))
        .send()
        .expect("healthz")
        .json()
        .expect("healthz JSON");
    body["position"].as_u64().expect("position")
}

/// The `X-Cal-Total` of a list.
fn list_total(client: &Client, url: &str, administrator: bool) -> u64 {
    let mut request = client.get(url);
    if administrator {
        request = request.basic_auth(ADMIN, Some(PASSWORD));
    }
    let r = request.send().expect("request");
    assert!(r.status().is_success(), "{url} answered {}", r.status());
    r.headers()
        .get("x-cal-total")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{url}: no X-Cal-Total"))
}

/// The IDs of up to `most` events the create runs added (titled "Benchmark concert …", in
/// 2027), as an administrator lists them.
fn benchmark_events(client: &Client, events_url: &str, most: usize) -> Vec<u64> {
    let mut ids = Vec::new();
    for page in 1.. {
        let url = format!(
            "{events_url}?search=benchmark+concert&start_date=2027-01-01&end_date=2027-12-31&per_page=50&page={page}"
        );
        let r = client
            .get(&url)
            .basic_auth(ADMIN, Some(PASSWORD))
            .send()
            .expect("request");
        if !r.status().is_success() {
            break;
        }
        let body: Value = r.json().expect("JSON");
        let listed = body["events"].as_array().cloned().unwrap_or_default();
        ids.extend(listed.iter().filter_map(|e| e["id"].as_u64()));
        if listed.len() < 50 || ids.len() >= most {
            break;
        }
    }
    ids.truncate(most);
    assert!(!ids.is_empty(), "the create runs added no event to delete");
    ids
}

/// One write like the Lua scripts send: a create must answer 201, an update and a delete 200.
fn check_write(client: &Client, base: &str, kind: &str, category: u64, id: u64) {
    let (request, expected) = if kind == "delete" {
        (client.delete(format!("{base}/events/{id}")), 200)
    } else if kind == "create" {
        let body = json!({
            "title": "Benchmark concert check",
            "start_date": "2027-01-01 19:00:00",
            "end_date": "2027-01-01 21:30:00",
            "status": "publish",
            "cost": "10",
            "categories": [category],
        });
        (client.post(format!("{base}/events")).json(&body), 201)
    } else {
        let body = json!({"title": "Benchmark update check"});
        (client.patch(format!("{base}/events/{id}")).json(&body), 200)
    };
    let r = request
        .basic_auth(ADMIN, Some(PASSWORD))
        .send()
        .expect("request");
    let status = r.status().as_u16();
    assert_eq!(status, expected, "{kind}: {}", r.text().unwrap_or_default());
}

fn ms(us: &Value) -> String {
    let us = us.as_f64().unwrap_or(f64::NAN);
    if us < 1000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{:.1} ms", us / 1000.0)
    }
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The server on `data`, its log in `server.log` in `logs`.
fn start_server(data: &Path, logs: &Path) -> Server {
    Server::start(
        &[OsStr::new("--data-dir"), data.as_os_str()],
        Some(&logs.join("server.log")),
        |command| {
            // wrk repeats one URL: without this, the reads would measure the response cache
            // (which any write empties) instead of what a list costs to build.
            command.env(
                "ALMANAC_RESPONSE_CACHE_MB",
                std::env::var("ALMANAC_RESPONSE_CACHE_MB").unwrap_or_else(|_| "0".into()),
            );
        },
    )
}

/// Request parameters, read from the running server before any write.
struct Parameters {
    /// The most frequent title word of the upcoming events.
    word: String,
    /// Six calendar months from the month of a mid-list upcoming event: (first day 00:00:00,
    /// last day 23:59:59).
    window: (String, String),
    /// The category most used by the upcoming events (linked by the creates).
    category: u64,
    /// Upcoming events whose titles the update run changes.
    update_ids: Vec<u64>,
}

impl Parameters {
    fn read(client: &Client, base: &str) -> Parameters {
        let get = |path: &str| -> Value {
            let r = client.get(format!("{base}{path}")).send().expect("request");
            assert!(r.status().is_success(), "{path}: {}", r.status());
            r.json().expect("JSON")
        };
        // Upcoming events (the default list), three pages of 50.
        let mut events = Vec::new();
        for page in 1..=3 {
            let body = get(&format!("/events?per_page=50&page={page}"));
            let list = body["events"].as_array().cloned().unwrap_or_default();
            let done = list.len() < 50;
            events.extend(list);
            if done {
                break;
            }
        }
        assert!(!events.is_empty(), "the calendar has no upcoming events");
        let mut words: std::collections::HashMap<String, usize> = Default::default();
        let mut categories: std::collections::HashMap<u64, usize> = Default::default();
        for e in &events {
            for w in title_words(e["title"].as_str().unwrap_or("")) {
                *words.entry(w).or_default() += 1;
            }
            for c in e["categories"].as_array().into_iter().flatten() {
                if let Some(id) = c["id"].as_u64() {
                    *categories.entry(id).or_default() += 1;
                }
            }
        }
        let word = most_frequent(words).expect("title words");
        let category = most_frequent(categories).expect("events with categories");
        let middle = &events[events.len() / 2];
        let date = middle["start_date"].as_str().expect("start_date");
        let (year, month): (i32, u32) = (
            date[0..4].parse().expect("year"),
            date[5..7].parse().expect("month"),
        );
        let update_ids = events
            .iter()
            .take(UPDATED_EVENTS)
            .map(|e| e["id"].as_u64().expect("event id"))
            .collect();
        Parameters {
            word,
            window: window(year, month, 6),
            category,
            update_ids,
        }
    }

    fn describe(&self) -> Value {
        json!({
            "word": self.word,
            "window": [self.window.0, self.window.1],
            "category": self.category,
            "update_ids": self.update_ids,
        })
    }
}

/// Lower-case words of a title (ASCII letters only, at least 3 of them, neither stop words nor
/// the benchmark's own).
fn title_words(title: &str) -> Vec<String> {
    title
        .split(|c: char| !c.is_alphabetic())
        .map(str::to_lowercase)
        .filter(|w| w.chars().count() >= 3)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()) && !OWN_WORDS.contains(&w.as_str()))
        .filter(|w| w.is_ascii())
        .collect()
}

/// The key counted most often (the smallest of a tie).
fn most_frequent<K: Ord>(counts: std::collections::HashMap<K, usize>) -> Option<K> {
    counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
        .map(|(k, _)| k)
}

/// `months` calendar months from year-month: (first day 00:00:00, last day 23:59:59), in the
/// query grammar with `+` for the space.
fn window(year: i32, month: u32, months: u32) -> (String, String) {
    let first = chrono::NaiveDate::from_ymd_opt(year, month, 1).expect("date");
    let next = first
        .checked_add_months(chrono::Months::new(months))
        .expect("date");
    let last = next.pred_opt().expect("date");
    (
        format!("{}+00:00:00", first.format("%Y-%m-%d")),
        format!("{}+23:59:59", last.format("%Y-%m-%d")),
    )
}

fn failures(r: &Value) -> u64 {
    [
        "connect_errors",
        "read_errors",
        "write_errors",
        "timeouts",
        "status_errors",
    ]
    .iter()
    .map(|k| r[*k].as_u64().unwrap_or(0))
    .sum()
}

fn summary(r: &Value) -> String {
    let failed = failures(r);
    format!(
        "{:.0} req/s, p50 {}, p99 {}{}",
        r["rps"].as_f64().unwrap_or(0.0),
        ms(&r["p50_us"]),
        ms(&r["p99_us"]),
        if failed > 0 {
            format!(", {failed} FAILED")
        } else {
            String::new()
        }
    )
}

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// The machine, for the record: CPU model, CPUs, memory, load average (`/proc/loadavg`) now.
fn machine() -> Value {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")?
                .split_once(':')
                .map(|(_, v)| v.trim())
        })
        .unwrap_or("?")
        .to_string();
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_kib: Option<u64> = meminfo.lines().find_map(|l| {
        l.strip_prefix("MemTotal:")?
            .trim()
            .strip_suffix(" kB")?
            .trim()
            .parse()
            .ok()
    });
    json!({
        "cpu": cpu,
        "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "memory_gib": mem_kib.map(|k| (k as f64 / 1_048_576.0 * 10.0).round() / 10.0),
        "loadavg_after": loadavg(),
        "binary": BINARY,
    })
}
