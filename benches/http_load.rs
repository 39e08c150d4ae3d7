//! HTTP load benchmark: the real server (`almanac serve`, release build) on loopback, driven by
//! wrk (`apt-get install wrk`; only this benchmark needs it).
//!
//!     ALMANAC_BENCH_EVENTS=100000 cargo bench --bench http_load
//!
//! Steps: `almanac generate` fills a temporary data directory (under `target/tmp`) with the
//! seeded calendar of `ALMANAC_BENCH_EVENTS` events (default 1,000) and indexes it; `almanac
//! user add` adds an administrator; `almanac serve --listen 127.0.0.1:0` starts the server.
//! The request parameters are read from the running server (an event's ID and slug, a category,
//! frequent title words, a venue word, a month with events, a venue's coordinates). Then every
//! request of the query mix runs under wrk for `ALMANAC_BENCH_SECONDS` seconds (default 5) with
//! 1 connection (`-t1 -c1`) and 4 connections (`-t2 -c4`); `benches/wrk/report.lua` prints the
//! latency percentiles and the request rate, `benches/wrk/post_event.lua` sends the creates
//! (unique titles, Basic credentials), `benches/wrk/distinct.lua` asks for a calendar feed
//! under ever new spellings (so that the feed cache never answers). The creates run last, since
//! they grow the calendar. The server runs without its response cache
//! (`ALMANAC_RESPONSE_CACHE_MB=0`, unless the variable is set), so that every list request is
//! built: a repeated list is otherwise answered from that cache. Before the creates, the same
//! server answers `/healthz`, a list page and single records (an event by ID and by slug, a
//! venue, a category) under each load: their ratios to `/healthz` are what a request costs
//! past the HTTP layer with nothing kept.
//!
//! Then the server starts again on the same data directory with the response cache at its
//! default, and the same loads measure repeated reads answered from it (`/healthz`, a list page,
//! an event by ID and by slug, a venue, a category), each with its ratio to `/healthz` of that
//! run, and reads that are all different (`benches/wrk/distinct.lua`: the default list's pages,
//! a month window, title words, each request spelling its start day with another second), with
//! the cache's hits during each run read from `/metrics`.
//!
//! Output: a markdown table on stdout and `target/bench-results/http-<N>.json`. The binary is
//! the one Cargo builds for benchmarks (`CARGO_BIN_EXE_almanac`, the release profile under
//! `cargo bench`). The server logs at `ALMANAC_BENCH_LOG` (default `warn`: the per-request
//! info line is left out; its stderr goes to a file in the data directory).

mod support;

use serde_json::{json, Value};
use std::collections::HashMap;
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
/// (wrk threads, connections) of each run.
const LOADS: [(u32, u32); 2] = [(1, 1), (2, 4)];
/// Concurrent writers of the extra create run (group commit batches them).
const MANY_WRITERS: u32 = 64;
/// Words too frequent in every language to be useful search terms.
const STOP_WORDS: &[&str] = &[
    "the", "and", "for", "with", "of", "a", "an", "in", "on", "at", "to", "de", "da", "do", "das",
    "dos", "e", "o", "os", "as", "em", "com", "para", "la", "el", "los", "las", "y", "con", "del",
    "en", "por", "un", "una", "um", "uma", "no", "na",
];

fn main() {
    // `cargo bench` passes `--bench` (and maybe a filter); nothing here takes arguments.
    let events: usize = env_number("ALMANAC_BENCH_EVENTS", 1000);
    let seconds: u64 = env_number("ALMANAC_BENCH_SECONDS", 5);
    if Command::new("wrk").arg("--version").output().is_err() {
        eprintln!("wrk is not installed (Debian/Ubuntu: apt-get install -y wrk)");
        std::process::exit(1);
    }
    let scripts = Path::new(MANIFEST_DIR).join("benches/wrk");
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(tmp).expect("target tmp dir");
    let dir = tempfile::Builder::new()
        .prefix("http-load-")
        .tempdir_in(tmp)
        .expect("temp dir");
    let data = dir.path().join("data");

    eprintln!("binary: {BINARY}");
    eprintln!("generating {events} events into {}", data.display());
    let started = Instant::now();
    let generated = run(Command::new(BINARY).args([
        "generate",
        "--events",
        &events.to_string(),
        "--seed",
        "2026",
        "--data-dir",
        path_str(&data),
    ]));
    let generate_wall = started.elapsed().as_secs_f64();
    let (generate_s, index_s) = parse_generate_line(&generated);
    let index_bytes = dir_size(&data.join("index"));
    let data_bytes = dir_size(&data);
    eprintln!(
        "{} ({generate_wall:.1} s wall); index {:.1} MiB, data dir {:.1} MiB",
        generated.trim(),
        mib(index_bytes),
        mib(data_bytes)
    );
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

    let uncached = std::env::var("ALMANAC_RESPONSE_CACHE_MB").unwrap_or_else(|_| "0".into());
    let mut server = start_server(&data, dir.path(), Some(&uncached));
    let base = format!("{}{NAMESPACE}", server.url);
    let client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()
        .expect("client");
    let p = Parameters::read(&client, &base);
    eprintln!(
        "parameters: {}",
        serde_json::to_string(&p.describe()).unwrap()
    );
    let memory_start = memory(&server);

    let mut mix: Vec<(&str, String)> = vec![
        ("default", "/events".into()),
        ("per_page_50", "/events?per_page=50".into()),
        (
            "search_common_word",
            format!("/events?search={}", p.common_word),
        ),
        (
            "search_two_words",
            format!("/events?search={}+{}", p.two_words.0, p.two_words.1),
        ),
        (
            "one_month_window",
            format!("/events?start_date={}&end_date={}", p.month.0, p.month.1),
        ),
        (
            "window_category_search",
            format!(
                "/events?start_date={}&end_date={}&categories={}&search={}",
                p.six_months.0, p.six_months.1, p.category, p.common_word
            ),
        ),
        ("featured", "/events?featured=true".into()),
        (
            "geoloc_radius",
            format!(
                "/events?geoloc=1&geoloc_lat={}&geoloc_lng={}&geoloc_radius=25",
                p.point.0, p.point.1
            ),
        ),
        ("get_event_by_id", format!("/events/{}", p.event_id)),
        (
            "get_event_by_slug",
            format!("/events/by-slug/{}", p.event_slug),
        ),
        ("venues_search", format!("/venues?search={}", p.venue_word)),
    ];
    let mut results = Vec::new();
    for (name, path) in mix.drain(..) {
        let url = format!("{base}{path}");
        let check = client.get(&url).send().expect("request");
        assert!(
            check.status().is_success(),
            "{name}: {url} answered {}",
            check.status()
        );
        let total = check
            .headers()
            .get("x-cal-total")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        results.extend(under_loads(&scripts, seconds, "", name, &path, &url, total));
    }
    // A calendar feed of about FEED_EVENTS events of one category, polled again and again
    // (answered from the feed cache) and built afresh for each request.
    let (day, end_day, feed_total) = feed_window(&client, &base, p.category);
    let feed_path = format!("/events.ics?categories={}&end_date={end_day}", p.category);
    let gzip = "Accept-Encoding: gzip";
    for (name, script, path) in [
        (
            "calendar_feed",
            "report.lua",
            format!("{feed_path}&start_date={day}"),
        ),
        ("calendar_feed_uncached", "distinct.lua", feed_path),
    ] {
        for (threads, connections) in LOADS {
            let r = wrk(
                &scripts.join(script),
                &format!("{base}{path}"),
                threads,
                connections,
                seconds,
                &[gzip],
                &[("ALMANAC_BENCH_DAY", &day)],
            );
            eprintln!("{name} c{connections}: {}", summary(&r));
            results.push(entry(
                name,
                "GET",
                &path,
                threads,
                connections,
                Some(feed_total),
                r,
            ));
        }
    }
    let uncached_repeated = against_healthz(&server, &base, &scripts, seconds, &p, "uncached ");
    let memory_reads = memory(&server);
    let auth = format!(
        "Authorization: Basic {}",
        base64_encode(format!("{ADMIN}:{PASSWORD}").as_bytes())
    );
    let url = format!("{base}/events");
    for (threads, connections) in LOADS {
        let category = p.category.to_string();
        let r = wrk(
            &scripts.join("post_event.lua"),
            &url,
            threads,
            connections,
            seconds,
            &[&auth],
            &[("ALMANAC_BENCH_CATEGORY", &category)],
        );
        eprintln!("create_event c{connections}: {}", summary(&r));
        results.push(entry(
            "create_event",
            "POST",
            "/events",
            threads,
            connections,
            None,
            r,
        ));
    }
    // Concurrent creates share index commits (group commit): the rate with many writers.
    let category = p.category.to_string();
    let many_writers = wrk(
        &scripts.join("post_event.lua"),
        &url,
        2,
        MANY_WRITERS,
        seconds,
        &[&auth],
        &[("ALMANAC_BENCH_CATEGORY", &category)],
    );
    eprintln!("create_event c{MANY_WRITERS}: {}", summary(&many_writers));
    let memory_end = memory(&server);
    let events_after = client
        .get(format!(
            "{base}/events?per_page=1&status=any&start_date=2000-01-01"
        ))
        .basic_auth(ADMIN, Some(PASSWORD))
        .send()
        .ok()
        .and_then(|r| {
            r.headers()
                .get("x-cal-total")?
                .to_str()
                .ok()?
                .parse::<u64>()
                .ok()
        });
    server.stop();
    let (cached, distinct) = with_response_cache(&data, dir.path(), &scripts, seconds, &p);

    let machine = machine();
    let report = json!({
        "events": events,
        "seconds_per_run": seconds,
        "machine": machine,
        "generate_s": generate_s,
        "index_s": index_s,
        "generate_wall_s": generate_wall,
        "index_bytes": index_bytes,
        "data_dir_bytes": data_bytes,
        "memory_kib": {
            "rss_before_load": memory_start.get("VmRSS"),
            "rss_after_reads": memory_reads.get("VmRSS"),
            "hwm_after_reads": memory_reads.get("VmHWM"),
            "rss_after_creates": memory_end.get("VmRSS"),
            "hwm": memory_end.get("VmHWM"),
        },
        "events_after_creates": events_after,
        "parameters": p.describe(),
        "results": results,
        "create_event_many_writers": entry(
            "create_event",
            "POST",
            "/events",
            2,
            MANY_WRITERS,
            None,
            many_writers.clone(),
        ),
        "repeated_without_response_cache": uncached_repeated,
        "response_cache": {"repeated": cached, "distinct": distinct},
    });
    let out_dir = Path::new(MANIFEST_DIR).join("target/bench-results");
    std::fs::create_dir_all(&out_dir).expect("results dir");
    let out = out_dir.join(format!("http-{events}.json"));
    std::fs::write(&out, serde_json::to_string_pretty(&report).unwrap() + "\n")
        .expect("results file");

    println!();
    println!(
        "HTTP load, {events} events, {seconds} s per run, wrk on loopback ({} CPUs, {})",
        machine["cpus"],
        machine["cpu"].as_str().unwrap_or("?")
    );
    println!();
    print_table(
        &[
            "request", "total", "c1 p50", "c1 p95", "c1 p99", "c1 req/s", "c4 p50", "c4 p95",
            "c4 p99", "c4 req/s",
        ],
        &results,
        |one, four| {
            let total = one["total"]
                .as_u64()
                .map(|t| t.to_string())
                .unwrap_or_else(|| "–".into());
            let mut cells = vec![request_cell(one), total];
            for r in [one, four] {
                cells.extend(["p50_us", "p95_us", "p99_us"].map(|p| ms(&r[p])));
                cells.push(rps(r));
            }
            cells
        },
    );
    println!();
    println!(
        "`POST /events` with {MANY_WRITERS} concurrent writers: {:.0} creates/s, p50 / p95 / p99 \
         {} / {} / {}",
        many_writers["rps"].as_f64().unwrap_or(0.0),
        ms(&many_writers["p50_us"]),
        ms(&many_writers["p95_us"]),
        ms(&many_writers["p99_us"]),
    );
    println!();
    println!(
        "generate {generate_s:.1} s, index {index_s:.1} s, index {:.1} MiB, data dir {:.1} MiB; \
         server RSS {} MiB before load, {} MiB after the GET runs (peak {} MiB), {} MiB after \
         the creates, peak {} MiB",
        mib(index_bytes),
        mib(data_bytes),
        kib_to_mib(memory_start.get("VmRSS")),
        kib_to_mib(memory_reads.get("VmRSS")),
        kib_to_mib(memory_reads.get("VmHWM")),
        kib_to_mib(memory_end.get("VmRSS")),
        kib_to_mib(memory_end.get("VmHWM")),
    );
    println!();
    for (heading, rows) in [
        ("Without the response cache", &uncached_repeated),
        ("With the response cache at its default", &cached),
    ] {
        println!("{heading} (paths below {NAMESPACE} but `/healthz`), repeated requests:");
        println!();
        print_against_healthz(rows);
    }
    println!();
    println!("Every request different (nothing to find in the cache):");
    println!();
    print_table(
        &["request", "c1 req/s", "c4 req/s", "cache hits / lookups"],
        &distinct,
        |one, four| {
            let hits = |r: &Value| format!("{} / {}", r["cache_hits"], r["cache_lookups"]);
            vec![
                format!(
                    "{} ({})",
                    request_cell(one),
                    one["query"].as_str().unwrap_or("?")
                ),
                rps(one),
                rps(four),
                format!("{}, {}", hits(one), hits(four)),
            ]
        },
    );
    let errors: u64 = results
        .iter()
        .chain(&cached)
        .chain(&distinct)
        .map(|r| {
            [
                "connect_errors",
                "read_errors",
                "write_errors",
                "timeouts",
                "status_errors",
            ]
            .iter()
            .map(|k| r[*k].as_u64().unwrap_or(0))
            .sum::<u64>()
        })
        .sum();
    if errors > 0 {
        println!("WARNING: {errors} failed requests (see the JSON file)");
    }
    println!("results: {}", out.display());
}

/// The second server, on the same data directory with the response cache at its default: the
/// repeated reads (answered from the cache) with their ratio to `/healthz` of this run, then the
/// distinct reads (every request a new one) with the cache's hits and lookups during each run.
fn with_response_cache(
    data: &Path,
    logs: &Path,
    scripts: &Path,
    seconds: u64,
    p: &Parameters,
) -> (Vec<Value>, Vec<Value>) {
    let mut server = start_server(data, logs, None);
    let base = format!("{}{NAMESPACE}", server.url);
    let client = reqwest::blocking::Client::new();
    let cached = against_healthz(&server, &base, scripts, seconds, p, "cached ");

    // The default window snaps its start to the day: yesterday at any second is the default.
    let yesterday = (chrono::Utc::now().date_naive() - chrono::Days::new(1)).to_string();
    let default_list = client
        .get(format!("{base}/events"))
        .send()
        .expect("request");
    let pages: u64 = default_list
        .headers()
        .get("x-cal-totalpages")
        .and_then(|v| v.to_str().ok()?.parse().ok())
        .unwrap_or(1);
    let page_variants: Vec<String> = (1..=pages.min(100)).map(|n| format!("page={n}")).collect();
    let word_variants: Vec<String> = p
        .words
        .iter()
        .take(50)
        .map(|w| format!("search={w}"))
        .collect();
    let distinct_runs = [
        (
            "default_pages",
            "/events".to_string(),
            yesterday.clone(),
            page_variants.join("|"),
        ),
        (
            "one_month_windows",
            format!("/events?end_date={}", p.month.1),
            p.month.0[..10].to_string(),
            String::new(),
        ),
        (
            "search_words",
            "/events".into(),
            yesterday,
            word_variants.join("|"),
        ),
    ];
    let mut distinct = Vec::new();
    for (name, path, day, variants) in distinct_runs {
        for (threads, connections) in LOADS {
            // Each run spells its requests in the same sequence: the previous run's last answers
            // are kept for the rest of their second, which this run must not share.
            std::thread::sleep(Duration::from_millis(1100));
            let before = response_cache_lookups(&client, &server.url);
            let r = wrk(
                &scripts.join("distinct.lua"),
                &format!("{base}{path}"),
                threads,
                connections,
                seconds,
                &[],
                &[
                    ("ALMANAC_BENCH_DAY", &day),
                    ("ALMANAC_BENCH_VARIANTS", &variants),
                ],
            );
            let after = response_cache_lookups(&client, &server.url);
            eprintln!("distinct {name} c{connections}: {}", summary(&r));
            let mut row = entry(name, "GET", &path, threads, connections, None, r);
            row["cache_hits"] = json!(after.0 - before.0);
            row["cache_lookups"] = json!(after.0 + after.1 - before.0 - before.1);
            distinct.push(row);
        }
    }
    server.stop();
    (cached, distinct)
}

/// `/healthz`, a list page and single records (an event by ID and by slug, a venue, a
/// category), each repeated under every load, with its ratio to `/healthz` at the same load in
/// this run: what a request costs past the HTTP layer.
fn against_healthz(
    server: &Server,
    base: &str,
    scripts: &Path,
    seconds: u64,
    p: &Parameters,
    label: &str,
) -> Vec<Value> {
    let repeated = [
        (
            "healthz",
            "/healthz".to_string(),
            format!("{}/healthz", server.url),
        ),
        (
            "list_per_page_10",
            "/events?per_page=10".into(),
            String::new(),
        ),
        (
            "get_event_by_id",
            format!("/events/{}", p.event_id),
            String::new(),
        ),
        (
            "get_event_by_slug",
            format!("/events/by-slug/{}", p.event_slug),
            String::new(),
        ),
        (
            "get_venue_by_id",
            format!("/venues/{}", p.venue_id),
            String::new(),
        ),
        (
            "get_category_by_id",
            format!("/categories/{}", p.category),
            String::new(),
        ),
    ];
    let mut rows: Vec<Value> = Vec::new();
    for (name, path, url) in repeated {
        let url = if url.is_empty() {
            format!("{base}{path}")
        } else {
            url
        };
        rows.extend(under_loads(
            scripts, seconds, label, name, &path, &url, None,
        ));
    }
    for run in 0..rows.len() {
        let healthz = rows[run % LOADS.len()]["rps"].as_f64().unwrap_or(f64::NAN);
        let ratio = rows[run]["rps"].as_f64().unwrap_or(0.0) / healthz;
        rows[run]["ratio_to_healthz"] = json!((ratio * 1000.0).round() / 1000.0);
    }
    rows
}

/// `GET url` repeated under each load (`report.lua`), as result entries named `name`; `label`
/// prefixes the progress lines.
fn under_loads(
    scripts: &Path,
    seconds: u64,
    label: &str,
    name: &str,
    path: &str,
    url: &str,
    total: Option<u64>,
) -> Vec<Value> {
    LOADS
        .iter()
        .map(|&(threads, connections)| {
            let r = wrk(
                &scripts.join("report.lua"),
                url,
                threads,
                connections,
                seconds,
                &[],
                &[],
            );
            eprintln!("{label}{name} c{connections}: {}", summary(&r));
            entry(name, "GET", path, threads, connections, total, r)
        })
        .collect()
}

/// The table of [`against_healthz`]'s rows.
fn print_against_healthz(rows: &[Value]) {
    print_table(
        &[
            "request",
            "c1 p50",
            "c1 p99",
            "c1 req/s",
            "c1 / healthz",
            "c4 p50",
            "c4 p99",
            "c4 req/s",
            "c4 / healthz",
        ],
        rows,
        |one, four| {
            let mut cells = vec![request_cell(one)];
            for r in [one, four] {
                cells.extend([ms(&r["p50_us"]), ms(&r["p99_us"]), rps(r)]);
                cells.push(format!(
                    "{:.0} %",
                    r["ratio_to_healthz"].as_f64().unwrap_or(0.0) * 100.0
                ));
            }
            cells
        },
    );
    println!();
}

/// Hits and misses of the response cache so far, from `/metrics`.
fn response_cache_lookups(client: &reqwest::blocking::Client, url: &str) -> (u64, u64) {
    let text = client
        .get(format!("{url}/metrics"))
        .basic_auth(ADMIN, Some(PASSWORD))
        .send()
        .and_then(|r| r.text())
        .expect("metrics");
    let counter = |name: &str| -> u64 {
        let prefix = format!("{name}{{cache=\"responses\"}} ");
        text.lines()
            .find_map(|l| l.strip_prefix(&prefix)?.trim().parse::<f64>().ok())
            .unwrap_or(0.0) as u64
    };
    (
        counter("almanac_cache_hits_total"),
        counter("almanac_cache_misses_total"),
    )
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / 1_048_576.0
}

fn kib_to_mib(kib: Option<&u64>) -> String {
    kib.map(|k| format!("{:.0}", *k as f64 / 1024.0))
        .unwrap_or_else(|| "?".into())
}

fn ms(us: &Value) -> String {
    let us = us.as_f64().unwrap_or(f64::NAN);
    if us < 1000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{:.1} ms", us / 1000.0)
    }
}

/// "generated N events, ... in 1.2 s; indexed in 0.3 s" → (1.2, 0.3).
fn parse_generate_line(line: &str) -> (f64, f64) {
    let seconds_after = |marker: &str| -> f64 {
        line.rsplit(marker)
            .next()
            .filter(|_| line.contains(marker))
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(f64::NAN)
    };
    (
        seconds_after(" organizers in "),
        seconds_after("indexed in "),
    )
}

fn dir_size(path: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(path) else {
        return 0;
    };
    entries
        .filter_map(|e| e.ok())
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_size(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// VmRSS and VmHWM of the server process, in KiB.
fn memory(server: &Server) -> HashMap<String, u64> {
    ["VmRSS", "VmHWM"]
        .into_iter()
        .filter_map(|key| Some((key.to_string(), server.status(key)?)))
        .collect()
}

/// The server on `data`, with `response_cache_mb` for its response cache (its default when
/// `None`), logging at `ALMANAC_BENCH_LOG` (default `warn`); its log is appended to
/// `server.log` in `logs`.
fn start_server(data: &Path, logs: &Path, response_cache_mb: Option<&str>) -> Server {
    let level = std::env::var("ALMANAC_BENCH_LOG").unwrap_or_else(|_| "warn".into());
    Server::start(
        &[OsStr::new("--data-dir"), data.as_os_str()],
        Some(&logs.join("server.log")),
        |command| {
            command.env("ALMANAC_LOG", level);
            match response_cache_mb {
                Some(mb) => command.env("ALMANAC_RESPONSE_CACHE_MB", mb),
                None => command.env_remove("ALMANAC_RESPONSE_CACHE_MB"),
            };
        },
    )
}

/// Realistic request parameters, read from the running server.
struct Parameters {
    event_id: u64,
    event_slug: String,
    /// The venue of an upcoming event.
    venue_id: u64,
    category: u64,
    common_word: String,
    two_words: (String, String),
    /// Title words of upcoming events, most frequent first.
    words: Vec<String>,
    venue_word: String,
    /// A calendar month with events: (first day 00:00:00, last day 23:59:59).
    month: (String, String),
    /// Six months from that month.
    six_months: (String, String),
    point: (f64, f64),
}

impl Parameters {
    fn read(client: &reqwest::blocking::Client, base: &str) -> Parameters {
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
        let middle = &events[events.len() / 2];
        let event_id = middle["id"].as_u64().expect("event id");
        let event_slug = middle["slug"].as_str().expect("slug").to_string();

        let mut words: HashMap<String, usize> = HashMap::new();
        let mut categories: HashMap<u64, usize> = HashMap::new();
        let mut point = None;
        let mut venue_id = None;
        for e in &events {
            venue_id = venue_id.or(e["venue"]["id"].as_u64());
            for w in title_words(e["title"].as_str().unwrap_or("")) {
                *words.entry(w).or_default() += 1;
            }
            for c in e["categories"].as_array().into_iter().flatten() {
                if let Some(id) = c["id"].as_u64() {
                    *categories.entry(id).or_default() += 1;
                }
            }
            if point.is_none() {
                let venue = &e["venue"];
                if let (Some(lat), Some(lng)) =
                    (number(&venue["geo_lat"]), number(&venue["geo_lng"]))
                {
                    point = Some((lat, lng));
                }
            }
        }
        let ranked = ranked(words);
        assert!(ranked.len() >= 2, "too few title words");
        let category = ranked_ids(categories)
            .first()
            .copied()
            .expect("events with categories");

        let venues = get("/venues?per_page=50");
        let mut venue_words: HashMap<String, usize> = HashMap::new();
        for v in venues["venues"].as_array().into_iter().flatten() {
            for w in title_words(v["venue"].as_str().unwrap_or("")) {
                *venue_words.entry(w).or_default() += 1;
            }
        }
        let venue_word = ranked_words_first(venue_words).unwrap_or_else(|| "hall".into());

        // The month of the middle upcoming event, then that month if it holds events.
        let date = middle["start_date"].as_str().expect("start_date");
        let (year, month): (i32, u32) = (
            date[0..4].parse().expect("year"),
            date[5..7].parse().expect("month"),
        );
        let month_range = window(year, month, 1);
        let six_months = window(year, month, 6);
        Parameters {
            event_id,
            event_slug,
            venue_id: venue_id.expect("events with venues"),
            category,
            common_word: ranked[0].clone(),
            two_words: (ranked[0].clone(), ranked[1].clone()),
            words: ranked,
            venue_word,
            month: month_range,
            six_months,
            point: point.unwrap_or((38.7223, -9.1393)),
        }
    }

    fn describe(&self) -> Value {
        json!({
            "event_id": self.event_id,
            "event_slug": self.event_slug,
            "venue_id": self.venue_id,
            "category": self.category,
            "common_word": self.common_word,
            "two_words": [self.two_words.0, self.two_words.1],
            "venue_word": self.venue_word,
            "month": [self.month.0, self.month.1],
            "six_months": [self.six_months.0, self.six_months.1],
            "point": [self.point.0, self.point.1],
        })
    }
}

fn number(v: &Value) -> Option<f64> {
    v.as_f64().or_else(|| v.as_str()?.parse().ok())
}

/// Lower-case words of a title (letters only, at least 3 of them, no stop words).
fn title_words(title: &str) -> Vec<String> {
    title
        .split(|c: char| !c.is_alphabetic())
        .map(str::to_lowercase)
        .filter(|w| w.chars().count() >= 3 && !STOP_WORDS.contains(&w.as_str()))
        .filter(|w| w.is_ascii())
        .collect()
}

fn ranked(counts: HashMap<String, usize>) -> Vec<String> {
    let mut v: Vec<(String, usize)> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v.into_iter().map(|(w, _)| w).collect()
}

fn ranked_words_first(counts: HashMap<String, usize>) -> Option<String> {
    ranked(counts).into_iter().next()
}

fn ranked_ids(counts: HashMap<u64, usize>) -> Vec<u64> {
    let mut v: Vec<(u64, usize)> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v.into_iter().map(|(id, _)| id).collect()
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

/// Events in the benchmark's calendar feed, about.
const FEED_EVENTS: u64 = 500;

/// A window from 2027-01-01 holding about [`FEED_EVENTS`] events of `category`: its first and
/// last day and the events it holds (found from the list's totals, widening or narrowing it).
fn feed_window(
    client: &reqwest::blocking::Client,
    base: &str,
    category: u64,
) -> (String, String, u64) {
    let first = chrono::NaiveDate::from_ymd_opt(2027, 1, 1).expect("a date");
    let mut days: u64 = 30;
    let mut total = 0;
    for _ in 0..4 {
        let last = first + chrono::Days::new(days - 1);
        total = client
            .get(format!(
                "{base}/events?per_page=1&categories={category}&start_date={first}&end_date={last}"
            ))
            .send()
            .ok()
            .and_then(|r| r.headers().get("x-cal-total")?.to_str().ok()?.parse().ok())
            .unwrap_or(0);
        let wanted = (days * FEED_EVENTS / total.max(1)).clamp(1, 3 * 365);
        if wanted == days {
            break;
        }
        days = wanted;
    }
    let last = first + chrono::Days::new(days - 1);
    (first.to_string(), last.to_string(), total)
}

fn wrk(
    script: &Path,
    url: &str,
    threads: u32,
    connections: u32,
    seconds: u64,
    headers: &[&str],
    env: &[(&str, &str)],
) -> Value {
    let out = run(&mut wrk_command(
        script,
        url,
        threads,
        connections,
        seconds,
        headers,
        env,
    ));
    wrk_report(&out)
}

/// `| request | cells... |` rows in markdown, one per pair of runs of `results` (at one
/// connection, then at four) with `cells` of that pair.
fn print_table(columns: &[&str], results: &[Value], cells: impl Fn(&Value, &Value) -> Vec<String>) {
    println!("| {} |", columns.join(" | "));
    println!("|{}", "---|".repeat(columns.len()));
    for pair in results.chunks(2) {
        println!("| {} |", cells(&pair[0], &pair[1]).join(" | "));
    }
}

fn request_cell(r: &Value) -> String {
    format!(
        "`{} {}`",
        r["method"].as_str().unwrap_or("?"),
        r["path"].as_str().unwrap_or("?")
    )
}

fn rps(r: &Value) -> String {
    format!("{:.0}", r["rps"].as_f64().unwrap_or(0.0))
}

fn summary(r: &Value) -> String {
    format!(
        "{:.0} req/s, p50 {}, p95 {}, p99 {}",
        r["rps"].as_f64().unwrap_or(0.0),
        ms(&r["p50_us"]),
        ms(&r["p95_us"]),
        ms(&r["p99_us"])
    )
}

fn entry(
    name: &str,
    method: &str,
    path: &str,
    threads: u32,
    connections: u32,
    total: Option<u64>,
    wrk: Value,
) -> Value {
    let mut v = json!({
        "query": name,
        "method": method,
        "path": path,
        "threads": threads,
        "connections": connections,
        "total": total,
    });
    if let (Some(v), Value::Object(w)) = (v.as_object_mut(), wrk) {
        v.extend(w);
    }
    v
}

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The machine, for the record: CPU model, CPUs, memory, load average at the end of the run.
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
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    json!({
        "cpu": cpu,
        "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "memory_gib": mem_kib.map(|k| (k as f64 / 1_048_576.0 * 10.0).round() / 10.0),
        "loadavg_after": load.trim(),
        "binary": BINARY,
    })
}
