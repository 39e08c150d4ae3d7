//! The search index: acknowledged writes survive a
//! SIGKILL and are searchable after the restart's catch-up, `almanac reindex` rebuilds an index
//! that answers every list exactly as before, a missing or corrupt index is rebuilt at start, and
//! events are found by the current name of their venue and organizers.
//!
//! Every test owns its own data directory and server(s).

mod common;

use chrono::{Duration as CDuration, Utc};
use common::*;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// Servers and commands
// ---------------------------------------------------------------------------------------------

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Links in list bodies carry the public URL; a fixed one keeps bodies comparable across
/// restarts on different ports.
const PUBLIC: &str = "http://almanac.test";

fn start(dir: &Path, what: &str) -> Server {
    Server::start(
        serve_cmd(dir).args(["--public-url", PUBLIC]),
        Some(PUBLIC),
        what,
    )
}

fn reindex(dir: &Path) -> Output {
    almanac(["reindex", "--data-dir", s(dir)]).timeout(60).run()
}

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

fn id(v: &Value) -> u64 {
    v["id"]
        .as_u64()
        .unwrap_or_else(|| panic!("no integer id in {v}"))
}

fn list_ids(v: &Value, key: &str) -> Vec<u64> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} array in {v}"))
        .iter()
        .map(id)
        .collect()
}

fn post(srv: &Server, path: &str, body: Value) -> Value {
    srv.create(&ADMIN, path, &body)
}

fn patch(srv: &Server, path: &str, body: Value) -> Value {
    srv.write("PATCH", path, &ADMIN, &body, 200)
}

// =============================================================================================
// 1. Acknowledged writes survive SIGKILL
// =============================================================================================

const Y2027: &str = "start_date=2027-01-01&end_date=2027-12-31";

/// One write a writer thread attempted. `acked: None` = no complete answer (in flight at the
/// kill, or refused after it): it may or may not have been applied.
#[derive(Debug)]
enum Op {
    CreateEvent {
        word: String,
        acked: Option<u64>,
    },
    CreateVenue {
        word: String,
        acked: Option<u64>,
    },
    Retitle {
        id: u64,
        from: String,
        to: String,
        acked: bool,
    },
    Trash {
        id: u64,
        acked: bool,
    },
}

#[derive(Debug, Clone)]
struct EvState {
    word: String,
    trashed: bool,
}

#[derive(Default)]
struct Known {
    events: BTreeMap<u64, EvState>,
    venues: BTreeMap<u64, String>,
    /// Words no event title carries any more (retitled away, or never applied).
    dead_words: BTreeSet<String>,
    /// Unresolved writes of the last cycle.
    maybe_events: Vec<String>,
    maybe_venues: Vec<String>,
    maybe_retitles: Vec<(u64, String, String)>,
    maybe_trash: Vec<u64>,
    acked_writes: usize,
    /// In-flight writes found applied / not applied after the restarts.
    inflight_applied: usize,
    inflight_dropped: usize,
}

fn event_title(w: &str) -> String {
    format!("Event {w}")
}

fn venue_name(w: &str) -> String {
    format!("Hall {w}")
}

/// One writer: creates events (mostly), venues, retitles and trashes its own events, as fast as
/// it can, until `stop` or the first failed exchange (which is recorded as unresolved).
fn writer(
    base: String,
    stop: &AtomicBool,
    seed: u64,
    mut mine: Vec<(u64, String)>,
) -> (Vec<Op>, Vec<String>) {
    let client = reqwest::blocking::Client::builder()
        .no_proxy()
        // As sent: compression is the tests' to ask for and to undo.
        .no_gzip()
        .timeout(Duration::from_secs(15))
        .build()
        .unwrap();
    let auth = basic(ADMIN.name, ADMIN.password);
    let mut rng = Rng::new(seed);
    let mut ops = Vec::new();
    let mut errors = Vec::new();
    let send = |method: reqwest::Method, path: &str, body: Option<&Value>| {
        let mut rb = client
            .request(method, format!("{base}{NS}{path}"))
            .header("Authorization", &auth);
        if let Some(b) = body {
            rb = rb
                .header("Content-Type", "application/json")
                .body(serde_json::to_vec(b).unwrap());
        }
        let r = rb.send()?;
        let st = r.status().as_u16();
        let b = r.bytes()?;
        Ok::<(u16, Vec<u8>), reqwest::Error>((st, b.to_vec()))
    };
    // An answer that is not the expected success: reported; the write counts as unresolved.
    let check = |res: &Result<(u16, Vec<u8>), reqwest::Error>,
                 want: u16,
                 what: &str,
                 errors: &mut Vec<String>|
     -> Option<Value> {
        match res {
            Err(_) => None,
            Ok((st, b)) => {
                let v: Option<Value> = serde_json::from_slice(b).ok();
                if *st != want || v.is_none() {
                    errors.push(format!(
                        "{what}: expected {want}, got {st} {}",
                        String::from_utf8_lossy(b)
                    ));
                    None
                } else {
                    v
                }
            }
        }
    };
    while !stop.load(Ordering::SeqCst) {
        let choice = rng.below(20);
        if choice < 3 {
            let w = unique_word(&mut rng);
            let body = json!({"venue": venue_name(&w), "city": "Testville"});
            let res = send(reqwest::Method::POST, "/venues", Some(&body));
            let v = check(&res, 201, &format!("POST /venues {body}"), &mut errors);
            let acked = v.as_ref().map(id);
            if let Some(v) = &v {
                if v["venue"] != venue_name(&w) {
                    errors.push(format!("POST /venues answered another name: {v}"));
                }
            }
            ops.push(Op::CreateVenue { word: w, acked });
            if acked.is_none() {
                break;
            }
        } else if choice < 5 && !mine.is_empty() {
            let k = rng.below(mine.len() as u64) as usize;
            let (eid, from) = mine[k].clone();
            let to = unique_word(&mut rng);
            let body = json!({"title": event_title(&to)});
            let res = send(
                reqwest::Method::PATCH,
                &format!("/events/{eid}"),
                Some(&body),
            );
            let v = check(&res, 200, &format!("PATCH /events/{eid}"), &mut errors);
            let acked = v.is_some();
            if let Some(v) = &v {
                if v["title"] != event_title(&to) {
                    errors.push(format!("PATCH /events/{eid} answered another title: {v}"));
                }
                mine[k].1 = to.clone();
            }
            ops.push(Op::Retitle {
                id: eid,
                from,
                to,
                acked,
            });
            if !acked {
                break;
            }
        } else if choice < 6 && mine.len() > 2 {
            let k = rng.below(mine.len() as u64) as usize;
            let (eid, _) = mine.remove(k);
            let res = send(reqwest::Method::DELETE, &format!("/events/{eid}"), None);
            let v = check(&res, 200, &format!("DELETE /events/{eid}"), &mut errors);
            let acked = v.is_some();
            if let Some(v) = &v {
                if v["status"] != "trash" {
                    errors.push(format!("DELETE /events/{eid} answered {v}"));
                }
            }
            ops.push(Op::Trash { id: eid, acked });
            if !acked {
                break;
            }
        } else {
            let w = unique_word(&mut rng);
            let (m, d) = (1 + rng.below(12), 1 + rng.below(28));
            let body = json!({
                "title": event_title(&w),
                "start_date": format!("2027-{m:02}-{d:02} 10:00:00"),
                "end_date": format!("2027-{m:02}-{d:02} 12:00:00"),
            });
            let res = send(reqwest::Method::POST, "/events", Some(&body));
            let v = check(&res, 201, "POST /events", &mut errors);
            let acked = v.as_ref().map(id);
            if let Some(v) = &v {
                if v["title"] != event_title(&w) {
                    errors.push(format!("POST /events answered another title: {v}"));
                }
                mine.push((id(v), w.clone()));
            }
            ops.push(Op::CreateEvent { word: w, acked });
            if acked.is_none() {
                break;
            }
        }
    }
    (ops, errors)
}

fn merge(known: &mut Known, ops: Vec<Op>, failures: &mut Vec<String>) {
    for op in ops {
        match op {
            Op::CreateEvent {
                word,
                acked: Some(eid),
            } => {
                known.acked_writes += 1;
                if known.events.contains_key(&eid) || known.venues.contains_key(&eid) {
                    failures.push(format!("create answered an ID already in use: {eid}"));
                }
                known.events.insert(
                    eid,
                    EvState {
                        word,
                        trashed: false,
                    },
                );
            }
            Op::CreateEvent { word, acked: None } => known.maybe_events.push(word),
            Op::CreateVenue {
                word,
                acked: Some(vid),
            } => {
                known.acked_writes += 1;
                if known.events.contains_key(&vid) || known.venues.contains_key(&vid) {
                    failures.push(format!("create answered an ID already in use: {vid}"));
                }
                known.venues.insert(vid, word);
            }
            Op::CreateVenue { word, acked: None } => known.maybe_venues.push(word),
            Op::Retitle {
                id,
                from,
                to,
                acked: true,
            } => {
                known.acked_writes += 1;
                let e = known.events.get_mut(&id).unwrap();
                assert_eq!(e.word, from, "writer bookkeeping");
                e.word = to;
                known.dead_words.insert(from);
            }
            Op::Retitle {
                id,
                from,
                to,
                acked: false,
            } => known.maybe_retitles.push((id, from, to)),
            Op::Trash { id, acked: true } => {
                known.acked_writes += 1;
                known.events.get_mut(&id).unwrap().trashed = true;
            }
            Op::Trash { id, acked: false } => known.maybe_trash.push(id),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Probe {
    Live(Value),
    Trashed,
    NotEvent,
    Missing,
    Other(String),
}

fn probe(srv: &Server, rid: u64) -> Probe {
    let r = srv.get(&format!("{NS}/events/{rid}"));
    let code = serde_json::from_slice::<Value>(&r.body)
        .ok()
        .and_then(|v| v["code"].as_str().map(str::to_string))
        .unwrap_or_default();
    match (r.status, code.as_str()) {
        (200, _) => Probe::Live(r.json()),
        (403, "event-no-longer-available") => Probe::Trashed,
        (400, "rest-invalid-event-id") => Probe::NotEvent,
        (404, "rest-event-not-found") => Probe::Missing,
        _ => Probe::Other(r.describe()),
    }
}

/// `(total, ids)` of `GET /events?search=W` in 2027.
fn search_events(srv: &Server, w: &str) -> Result<(u64, Vec<u64>), String> {
    let r = srv.get(&format!("{NS}/events?search={w}&{Y2027}"));
    if r.status != 200 {
        return Err(format!("search={w}: {}", r.describe()));
    }
    let v = r.json();
    Ok((
        v["total"].as_u64().unwrap_or(u64::MAX),
        list_ids(&v, "events"),
    ))
}

/// Every event of 2027 in the list, following the pages; `(total, ids)`.
fn list_2027(srv: &Server) -> (u64, Vec<u64>) {
    let mut ids = Vec::new();
    let mut total = 0;
    for page in 1.. {
        let r = srv.get(&format!("{NS}/events?per_page=50&{Y2027}&page={page}"));
        assert_eq!(r.status, 200, "list page {page}: {}", r.describe());
        let v = r.json();
        if page == 1 {
            total = v["total"].as_u64().unwrap();
        }
        ids.extend(list_ids(&v, "events"));
        if page >= v["total_pages"].as_u64().unwrap() {
            break;
        }
        assert!(page < 1000, "runaway pagination");
    }
    (total, ids)
}

/// After a restart: resolves last cycle's unresolved writes from what the store shows, then
/// checks that store (by ID), search and list agree with everything acknowledged.
fn verify_after_restart(srv: &Server, known: &mut Known, cycle: usize) {
    let mut failures: Vec<String> = Vec::new();

    // Unresolved retitles and trashes: either state is acceptable, nothing else.
    for (eid, from, to) in std::mem::take(&mut known.maybe_retitles) {
        match probe(srv, eid) {
            Probe::Live(v) if v["title"] == event_title(&to) => {
                known.events.get_mut(&eid).unwrap().word = to;
                known.dead_words.insert(from);
                known.inflight_applied += 1;
            }
            Probe::Live(v) if v["title"] == event_title(&from) => {
                known.dead_words.insert(to);
                known.inflight_dropped += 1;
            }
            p => failures.push(format!(
                "event {eid} with an in-flight retitle {from} → {to}: GET by ID shows {p:?}"
            )),
        }
    }
    for eid in std::mem::take(&mut known.maybe_trash) {
        match probe(srv, eid) {
            Probe::Live(_) => known.inflight_dropped += 1,
            Probe::Trashed => {
                known.events.get_mut(&eid).unwrap().trashed = true;
                known.inflight_applied += 1;
            }
            p => failures.push(format!(
                "event {eid} with an in-flight trash: GET by ID shows {p:?}"
            )),
        }
    }

    // What the store holds, by ID.
    let max = known
        .events
        .keys()
        .chain(known.venues.keys())
        .max()
        .copied()
        .unwrap_or(0);
    let range: Vec<u64> = (1..=max + 20).collect();
    let probes = par_map(&range, |&rid| probe(srv, rid));
    let maybe_events = std::mem::take(&mut known.maybe_events);
    let maybe_venues = std::mem::take(&mut known.maybe_venues);
    let mut found_words = BTreeSet::new();
    for (&rid, p) in range.iter().zip(&probes) {
        match (p, known.events.get(&rid), known.venues.get(&rid)) {
            (Probe::Live(v), Some(e), _) if !e.trashed => {
                if v["title"] != event_title(&e.word) {
                    failures.push(format!(
                        "event {rid}: acknowledged title {:?}, GET by ID shows {}",
                        event_title(&e.word),
                        v["title"]
                    ));
                }
            }
            (Probe::Trashed, Some(e), _) if e.trashed => {}
            (p, Some(e), _) => failures.push(format!(
                "event {rid} ({:?}, trashed: {}): GET by ID shows {p:?}",
                e.word, e.trashed
            )),
            (Probe::NotEvent, None, Some(_)) => {}
            (p, None, Some(w)) => failures.push(format!(
                "venue {rid} ({w}): GET /events/{rid} shows {p:?} instead of rest-invalid-event-id"
            )),
            (Probe::Missing, None, None) => {}
            (Probe::Live(v), None, None) => {
                // An unacknowledged create that was applied: it must be one of ours.
                let title = v["title"].as_str().unwrap_or("");
                match maybe_events.iter().find(|w| event_title(w) == title) {
                    Some(w) => {
                        found_words.insert(w.clone());
                        known.events.insert(
                            rid,
                            EvState {
                                word: w.clone(),
                                trashed: false,
                            },
                        );
                    }
                    None => failures.push(format!(
                        "event {rid} exists but was never acknowledged nor in flight: {v}"
                    )),
                }
            }
            (Probe::NotEvent, None, None) => {
                let r = srv.get(&format!("{NS}/venues/{rid}"));
                let name = if r.status == 200 {
                    r.json()["venue"].as_str().unwrap_or("").to_string()
                } else {
                    String::new()
                };
                match maybe_venues.iter().find(|w| venue_name(w) == name) {
                    Some(w) => {
                        found_words.insert(w.clone());
                        known.venues.insert(rid, w.clone());
                    }
                    None => failures.push(format!(
                        "record {rid} is no event and no in-flight venue: {}",
                        r.describe()
                    )),
                }
            }
            (p, None, None) => failures.push(format!("GET /events/{rid}: {p:?}")),
        }
    }
    for w in maybe_events.iter().chain(&maybe_venues) {
        if found_words.contains(w) {
            known.inflight_applied += 1;
        } else {
            known.inflight_dropped += 1;
            known.dead_words.insert(w.clone());
        }
    }

    // Search finds every live event by its current word, and nothing by dead words or words of
    // trashed events.
    let evs: Vec<(u64, EvState)> = known.events.iter().map(|(k, v)| (*k, v.clone())).collect();
    let res = par_map(&evs, |(eid, e)| {
        let want: Vec<u64> = if e.trashed { vec![] } else { vec![*eid] };
        match search_events(srv, &e.word) {
            Ok((total, ids)) if total == want.len() as u64 && ids == want => None,
            Ok((total, ids)) => Some(format!(
                "search={} (event {eid}, trashed: {}): total {total}, ids {ids:?}, expected {want:?}",
                e.word, e.trashed
            )),
            Err(e) => Some(e),
        }
    });
    failures.extend(res.into_iter().flatten());
    let dead: Vec<String> = known.dead_words.iter().cloned().collect();
    let res = par_map(&dead, |w| match search_events(srv, w) {
        Ok((0, ids)) if ids.is_empty() => None,
        Ok((total, ids)) => Some(format!(
            "search={w} (a title no event carries any more): total {total}, ids {ids:?}"
        )),
        Err(e) => Some(e),
    });
    failures.extend(res.into_iter().flatten());

    // Venues: readable and searchable.
    let vens: Vec<(u64, String)> = known.venues.iter().map(|(k, v)| (*k, v.clone())).collect();
    let res = par_map(&vens, |(vid, w)| {
        let r = srv.get(&format!("{NS}/venues/{vid}"));
        if r.status != 200 || r.json()["venue"] != venue_name(w) {
            return Some(format!("GET /venues/{vid} ({w}): {}", r.describe()));
        }
        let r = srv.get(&format!("{NS}/venues?search={w}"));
        if r.status != 200 {
            return Some(format!("venues?search={w}: {}", r.describe()));
        }
        let v = r.json();
        if v["total"] != 1 || list_ids(&v, "venues") != vec![*vid] {
            return Some(format!(
                "venues?search={w}: total {}, ids {:?}, expected [{vid}]",
                v["total"],
                list_ids(&v, "venues")
            ));
        }
        None
    });
    failures.extend(res.into_iter().flatten());

    // The list holds exactly the live events of the store.
    let live: BTreeSet<u64> = known
        .events
        .iter()
        .filter(|(_, e)| !e.trashed)
        .map(|(k, _)| *k)
        .collect();
    let (total, ids) = list_2027(srv);
    let listed: BTreeSet<u64> = ids.iter().copied().collect();
    if listed.len() != ids.len() {
        failures.push(format!("the list repeats events: {ids:?}"));
    }
    if total != live.len() as u64 || listed != live {
        failures.push(format!(
            "GET /events in 2027: total {total}, {} listed; the store has {} live events; listed but not live: {:?}; live but not listed: {:?}",
            ids.len(),
            live.len(),
            listed.difference(&live).collect::<Vec<_>>(),
            live.difference(&listed).collect::<Vec<_>>()
        ));
    }

    if !failures.is_empty() {
        let n = failures.len();
        failures.truncate(25);
        panic!(
            "after restart #{cycle} ({} events, {} venues known): {n} problems:\n{}\n--- server stderr (tail) ---\n{}",
            known.events.len(),
            known.venues.len(),
            failures.join("\n"),
            tail(&srv.stderr_text(), 3000)
        );
    }
}

#[test]
fn acknowledged_writes_survive_sigkill() {
    let t0 = Instant::now();
    let (_t, dir) = fresh_data_dir(&STANDARD_USERS);
    let mut rng = Rng::from_entropy();
    let mut known = Known::default();
    let mut srv = start(&dir, "first start");
    for cycle in 1..=3 {
        // Hand the live events round-robin to the three writers.
        let mut shares: Vec<Vec<(u64, String)>> = vec![Vec::new(); 3];
        for (i, (eid, e)) in known.events.iter().filter(|(_, e)| !e.trashed).enumerate() {
            shares[i % 3].push((*eid, e.word.clone()));
        }
        let stop = AtomicBool::new(false);
        let run_ms = 300 + rng.below(601);
        let seeds: Vec<u64> = (0..3).map(|_| rng.next()).collect();
        let (ops, errors) = thread::scope(|sc| {
            let hs: Vec<_> = shares
                .into_iter()
                .zip(seeds)
                .map(|(mine, seed)| {
                    let base = srv.base.clone();
                    let stop = &stop;
                    sc.spawn(move || writer(base, stop, seed, mine))
                })
                .collect();
            thread::sleep(Duration::from_millis(run_ms));
            srv.signal("9");
            stop.store(true, Ordering::SeqCst);
            let mut ops = Vec::new();
            let mut errors = Vec::new();
            for h in hs {
                let (o, e) = h.join().unwrap();
                ops.extend(o);
                errors.extend(e);
            }
            (ops, errors)
        });
        let code = srv.wait_exit(Duration::from_secs(10));
        assert_eq!(code, None, "the server was killed by SIGKILL");
        assert!(
            errors.is_empty(),
            "cycle {cycle}: writes answered with errors before the kill:\n{}",
            errors.join("\n")
        );
        let n_ops = ops.len();
        let mut failures = Vec::new();
        merge(&mut known, ops, &mut failures);
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        eprintln!(
            "cycle {cycle}: {run_ms} ms of writes, {n_ops} attempted, {} acknowledged so far, {} in flight at the kill",
            known.acked_writes,
            known.maybe_events.len()
                + known.maybe_venues.len()
                + known.maybe_retitles.len()
                + known.maybe_trash.len()
        );
        drop(srv);

        srv = start(&dir, &format!("restart #{cycle} after SIGKILL"));
        verify_after_restart(&srv, &mut known, cycle);
        eprintln!(
            "cycle {cycle} verified at {:?}; in-flight writes so far: {} applied, {} not applied",
            t0.elapsed(),
            known.inflight_applied,
            known.inflight_dropped
        );
    }
    assert!(
        known.events.values().any(|e| !e.trashed),
        "the writers acknowledged no event at all"
    );
    srv.stop(Duration::from_secs(15));
}

// =============================================================================================
// A mixed calendar and a set of list queries (tests 2 and 4)
// =============================================================================================

struct Counts {
    events: usize,
    venues: usize,
    organizers: usize,
}

fn day(k: i64, hour: u32) -> String {
    let d = Utc::now().date_naive() + CDuration::days(k);
    format!("{} {hour:02}:00:00", d.format("%Y-%m-%d"))
}

/// ≈40 events in `en` and `es` with categories, tags, venues (with and without coordinates),
/// organizers, drafts, a private, a pending, a hidden and a password-protected event, featured
/// ones, then some updates, a venue and an organizer rename and trashed records, so that the
/// index holds replaced and deleted documents.
fn build_calendar(srv: &Server) -> Counts {
    let es = format!("/es{NS}");
    let cat = |base: &str, body: Value| id(&post(srv, &format!("{base}/categories"), body));
    let music = cat(NS, json!({"name": "Music"}));
    let jazz = cat(NS, json!({"name": "Jazz", "parent": music}));
    let theatre = cat(NS, json!({"name": "Theatre"}));
    let _unused = cat(NS, json!({"name": "Unused Category"}));
    let musica = cat(&es, json!({"name": "Música"}));
    let ven = |base: &str, body: Value| id(&post(srv, &format!("{base}/venues"), body));
    let harbour = ven(
        NS,
        json!({"venue": "Harbour Hall", "city": "Lisbon", "country": "Portugal",
               "geo_lat": 38.7071, "geo_lng": -9.1355}),
    );
    let riverside = ven(
        NS,
        json!({"venue": "Riverside Stage", "city": "Porto", "address": "Rua das Flores 1",
               "geo_lat": 41.1403, "geo_lng": -8.6110}),
    );
    let lodge = ven(NS, json!({"venue": "Mountain Lodge", "city": "Covilha"}));
    let empty_hall = ven(NS, json!({"venue": "Empty Hall", "status": "draft"}));
    let sala = ven(
        &es,
        json!({"venue": "Sala Sur", "city": "Madrid", "geo_lat": 40.4168, "geo_lng": -3.7038}),
    );
    let org = |base: &str, body: Value| id(&post(srv, &format!("{base}/organizers"), body));
    let kestrel = org(
        NS,
        json!({"organizer": "Kestrel Collective", "email": "hi@kestrel.example"}),
    );
    let osprey = org(
        NS,
        json!({"organizer": "Osprey Guild", "phone": "+351 555 0101"}),
    );
    let _idle = org(NS, json!({"organizer": "Idle Organizer"}));
    let colectivo = org(&es, json!({"organizer": "Colectivo Azul"}));
    let mut venues = 5;
    let mut organizers = 4;

    let titles = [
        "Jazz concert",
        "Theatre night",
        "Open air concert",
        "Market day",
        "Painting workshop",
        "Harbour festival",
        "Poetry reading",
        "Film screening",
    ];
    let titles_es = ["Concierto de jazz", "Noche de teatro", "Mercado", "Taller"];
    let mut events = Vec::new();
    for i in 0..40usize {
        let (start, end) = (
            day(2 + i as i64, 10 + (i % 3) as u32),
            day(2 + i as i64, 15),
        );
        let mut body = if i % 4 == 3 {
            json!({
                "title": format!("{} {i}", titles_es[(i / 4) % titles_es.len()]),
                "description": "<p>Una velada con música en directo.</p>",
                "start_date": start, "end_date": end,
                "categories": if i % 8 == 3 { json!([musica]) } else { json!([]) },
                "tags": ["aire libre"],
                "venue": sala,
                "organizer": [colectivo],
            })
        } else {
            let cats = match i % 5 {
                0 => json!([music]),
                1 => json!([jazz]),
                2 => json!([theatre, music]),
                _ => json!([]),
            };
            let tags = match i % 3 {
                0 => json!(["outdoor"]),
                1 => json!(["family", "outdoor"]),
                _ => json!([]),
            };
            let venue =
                [json!(harbour), json!(riverside), json!(lodge), json!(null)][i % 4].clone();
            let orgs = [json!([kestrel]), json!([kestrel, osprey]), json!([])][i % 3].clone();
            json!({
                "title": format!("{} {i}", titles[i % titles.len()]),
                "description": format!("<p>Evening number {i} with live music.</p>"),
                "excerpt": "A short summary",
                "start_date": start, "end_date": end,
                "categories": cats,
                "tags": tags,
                "venue": venue,
                "organizer": orgs,
                "cost": if i % 2 == 0 { json!("10") } else { json!(["5", "15"]) },
            })
        };
        let o = body.as_object_mut().unwrap();
        if i % 10 == 4 {
            o.insert("status".into(), json!("draft"));
        }
        if i == 17 {
            o.insert("status".into(), json!("private"));
        }
        if i == 26 {
            o.insert("status".into(), json!("pending"));
        }
        if i == 9 {
            o.insert("password".into(), json!("s3cret"));
        }
        if i == 21 {
            o.insert("hide_from_listings".into(), json!(true));
        }
        if i % 6 == 1 {
            o.insert("featured".into(), json!(true));
        }
        if i == 30 {
            o.insert(
                "venue".into(),
                json!({"venue": "Pop-up Tent", "city": "Faro", "geo_lat": 37.0194, "geo_lng": -7.9304}),
            );
            venues += 1;
        }
        if i == 31 {
            // es event (i % 4 == 3): inline es organizer.
            o.insert(
                "organizer".into(),
                json!([colectivo, {"organizer": "Equipo Volante"}]),
            );
            organizers += 1;
        }
        if i == 33 {
            // One outside the default window.
            o.insert("start_date".into(), json!("2027-06-01 10:00:00"));
            o.insert("end_date".into(), json!("2027-06-01 12:00:00"));
        }
        let base = if i % 4 == 3 { es.as_str() } else { NS };
        events.push(id(&post(srv, &format!("{base}/events"), body)));
    }

    // Updates and deletes, so that the live index has replaced and deleted documents.
    patch(
        srv,
        &format!("{NS}/events/{}", events[0]),
        json!({"title": "Renamed jazz gala", "featured": true}),
    );
    patch(
        srv,
        &format!("{NS}/events/{}", events[8]),
        json!({"categories": [theatre], "venue": riverside}),
    );
    patch(
        srv,
        &format!("{NS}/venues/{riverside}"),
        json!({"venue": "Riverside Arena"}),
    );
    patch(
        srv,
        &format!("{NS}/organizers/{osprey}"),
        json!({"organizer": "Osprey Society"}),
    );
    for k in [5usize, 12, 19] {
        let r = srv
            .req("DELETE", &format!("{NS}/events/{}", events[k]))
            .user(&ADMIN)
            .send();
        assert_eq!(r.status, 200, "trash event {}: {}", events[k], r.describe());
    }
    let r = srv
        .req("DELETE", &format!("{NS}/venues/{empty_hall}"))
        .user(&ADMIN)
        .send();
    assert_eq!(r.status, 200, "trash venue: {}", r.describe());
    Counts {
        events: events.len(),
        venues,
        organizers,
    }
}

/// `(path, user, must be non-empty)`.
fn calendar_queries() -> Vec<(String, Option<TestUser>, bool)> {
    let es = format!("/es{NS}");
    let v = vec![
        (format!("{NS}/events"), None, true),
        (format!("{NS}/events?per_page=50"), None, true),
        (format!("{NS}/events?per_page=7&page=2"), None, true),
        (format!("{NS}/events?search=concert&per_page=50"), None, true),
        (format!("{NS}/events?search=concret"), None, true),
        (format!("{NS}/events?search=harbour&per_page=50"), None, true),
        (format!("{NS}/events?search=arena"), None, true),
        (format!("{NS}/events?search=riverside+stage"), None, false),
        (format!("{NS}/events?search=osprey+society"), None, true),
        (format!("{NS}/events?search=%22live+music%22&per_page=50"), None, true),
        (format!("{NS}/events?search=music+-jazz&per_page=50"), None, true),
        (format!("{NS}/events?categories=music&per_page=50"), None, true),
        (format!("{NS}/events?categories=theatre"), None, true),
        (format!("{NS}/events?tags=outdoor&per_page=50"), None, true),
        (format!("{NS}/events?featured=true&per_page=50"), None, true),
        (format!("{NS}/events?geoloc=true&per_page=50"), None, true),
        (
            format!("{NS}/events?geoloc=true&geoloc_lat=38.72&geoloc_lng=-9.14&geoloc_radius=50&geoloc_unit=km&per_page=50"),
            None,
            true,
        ),
        (format!("{NS}/events?status=any&per_page=50"), Some(ADMIN), true),
        (format!("{NS}/events?status=draft,pending"), Some(EDITOR), true),
        (format!("{NS}/events?status=trash"), Some(ADMIN), true),
        (format!("{NS}/events?start_date=2027-01-01&end_date=2027-12-31"), None, false),
        (format!("{NS}/events?password=s3cret&per_page=50"), None, true),
        (format!("{es}/events?per_page=50"), None, true),
        (format!("{es}/events?search=concierto"), None, true),
        (format!("{es}/events?geoloc=true&geoloc_lat=40.4&geoloc_lng=-3.7"), None, true),
        (format!("{NS}/venues?search=hall"), None, true),
        (format!("{NS}/venues?per_page=50"), None, true),
        (format!("{NS}/venues?status=any&per_page=50"), Some(ADMIN), true),
        (format!("{NS}/venues?search=lisbon"), None, true),
        (format!("{NS}/venues?has_events=true"), None, true),
        (format!("{NS}/organizers?has_events=true&per_page=50"), None, true),
        (format!("{NS}/organizers?has_events=false"), None, true),
        (format!("{NS}/organizers?search=kestrel"), None, true),
        (format!("{es}/organizers?per_page=50"), None, true),
        (format!("{NS}/categories?hide_empty=false&per_page=50"), Some(ADMIN), true),
        (format!("{NS}/categories"), None, true),
        (format!("{es}/categories?hide_empty=false"), Some(ADMIN), true),
        (format!("{NS}/tags?hide_empty=false"), Some(ADMIN), true),
        (format!("{NS}/tags"), None, true),
    ];
    v
}

/// Status, body, ETag and the total headers of every query, in order.
fn snapshot(srv: &Server) -> Vec<(String, String)> {
    calendar_queries()
        .into_iter()
        .map(|(path, user, nonempty)| {
            let mut r = srv.req("GET", &path);
            if let Some(u) = &user {
                r = r.user(u);
            }
            let r = r.send();
            assert_eq!(r.status, 200, "GET {path}: {}", r.describe());
            if nonempty {
                assert!(
                    r.json()["total"].as_u64().unwrap_or(0) > 0,
                    "GET {path} should list something: {}",
                    r.describe()
                );
            }
            let state = format!(
                "status {}\netag {:?}\nx-cal-total {:?}\nx-cal-totalpages {:?}\nbody {}",
                r.status,
                r.header("etag"),
                r.header("x-cal-total"),
                r.header("x-cal-totalpages"),
                r.text()
            );
            (path, state)
        })
        .collect()
}

/// Compares two snapshots query by query; panics listing every difference.
fn assert_same_snapshots(before: &[(String, String)], after: &[(String, String)], what: &str) {
    let mut diffs = Vec::new();
    for ((p, a), (_, b)) in before.iter().zip(after) {
        if a != b {
            diffs.push(format!(
                "GET {p}\n  before: {}\n  after:  {}",
                first_difference(a, b).0,
                first_difference(a, b).1
            ));
        }
    }
    assert!(
        diffs.is_empty(),
        "{what}: {} of {} queries answer differently:\n{}",
        diffs.len(),
        before.len(),
        diffs.join("\n")
    );
}

/// The two strings around their first difference.
fn first_difference(a: &str, b: &str) -> (String, String) {
    let i = a
        .bytes()
        .zip(b.bytes())
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let cut = |s: &str| {
        let mut lo = i.saturating_sub(150);
        while !s.is_char_boundary(lo) {
            lo -= 1;
        }
        let mut hi = (i + 250).min(s.len());
        while !s.is_char_boundary(hi) {
            hi += 1;
        }
        format!("…{}…", &s[lo..hi])
    };
    (cut(a), cut(b))
}

// =============================================================================================
// 2. reindex gives identical results
// =============================================================================================

#[test]
fn reindex_gives_identical_results() {
    let (_t, dir) = fresh_data_dir(&STANDARD_USERS);
    let mut srv = start(&dir, "first start");
    let counts = build_calendar(&srv);
    let before = snapshot(&srv);
    srv.stop(Duration::from_secs(15));
    drop(srv);

    let o = reindex(&dir);
    assert_eq!(o.code, Some(0), "reindex: {}", o.describe());
    assert_eq!(
        o.stdout,
        format!(
            "reindexed {} events, {} venues, {} organizers\n",
            counts.events, counts.venues, counts.organizers
        ),
        "reindex summary: {}",
        o.describe()
    );
    assert!(dir.join("index").is_dir(), "DATA_DIR/index after reindex");

    let mut srv = start(&dir, "start after reindex");
    let after = snapshot(&srv);
    assert_same_snapshots(&before, &after, "after reindex");

    // A second reindex of an unchanged store gives the same summary and answers.
    srv.stop(Duration::from_secs(15));
    drop(srv);
    let o = reindex(&dir);
    assert_eq!(o.code, Some(0), "second reindex: {}", o.describe());
    assert_eq!(
        o.stdout,
        format!(
            "reindexed {} events, {} venues, {} organizers\n",
            counts.events, counts.venues, counts.organizers
        ),
        "second reindex summary"
    );
    let mut srv = start(&dir, "start after the second reindex");
    let again = snapshot(&srv);
    assert_same_snapshots(&before, &again, "after a second reindex");
    srv.stop(Duration::from_secs(15));
}

// =============================================================================================
// 2b. the newest writes, searched from memory, answer as they do once committed
// =============================================================================================

/// How many index commits the server has made (its metrics; none before the first).
fn index_commits(srv: &Server) -> u64 {
    let r = srv.get_as("/metrics", &ADMIN);
    assert_eq!(r.status, 200, "{}", r.describe());
    r.text()
        .lines()
        .find_map(|l| l.strip_prefix("almanac_index_commit_duration_seconds_count "))
        .map_or(0, |n| n.trim().parse().expect("a count"))
}

/// Writes join an in-memory overlay searched beside the index, which hides their committed
/// versions, until the index commits them together (docs/architecture.md, "Consistency"). With
/// a commit delay of an hour, writes made after a restart stay in the overlay until the server
/// stops: every list answers exactly as it does after the commit and a restart.
#[test]
fn the_newest_writes_answer_as_they_do_once_committed() {
    let (_t, dir) = fresh_data_dir(&STANDARD_USERS);
    let start_delayed = |what: &str| {
        Server::start(
            serve_cmd(&dir)
                .args(["--public-url", PUBLIC])
                .env("ALMANAC_INDEX_COMMIT_DELAY", "3600"),
            Some(PUBLIC),
            what,
        )
    };
    let mut srv = start_delayed("first start");
    build_calendar(&srv);
    srv.stop(Duration::from_secs(15));
    drop(srv);

    let mut srv = start_delayed("start with the calendar committed");
    let commits = index_commits(&srv);
    let listed = srv.get(&format!("{NS}/events?per_page=50")).json();
    let events = list_ids(&listed, "events");
    let harbour = srv.get(&format!("{NS}/venues?search=harbour")).json();
    let harbour = list_ids(&harbour, "venues")[0];
    let retitled = events[1];
    // A committed event with a new title, a committed venue renamed (its events carry its
    // name), a committed event trashed, a new event.
    patch(
        &srv,
        &format!("{NS}/events/{retitled}"),
        json!({"title": "Quillwort recital"}),
    );
    patch(
        &srv,
        &format!("{NS}/venues/{harbour}"),
        json!({"venue": "Harbour Hall of Quillwort"}),
    );
    let r = srv
        .req("DELETE", &format!("{NS}/events/{}", events[2]))
        .user(&ADMIN)
        .send();
    assert_eq!(r.status, 200, "trash: {}", r.describe());
    post(
        &srv,
        &format!("{NS}/events"),
        json!({"title": "Concert of quillwort songs", "status": "publish",
               "start_date": day(40, 20), "end_date": day(40, 22),
               "categories": ["music"], "tags": ["outdoor"], "venue": harbour}),
    );
    let from_overlay = snapshot(&srv);
    let quillwort = srv.get(&format!("{NS}/events?search=quillwort&per_page=50"));
    assert_eq!(
        index_commits(&srv),
        commits,
        "the writes were not committed yet"
    );
    let found = list_ids(&quillwort.json(), "events");
    assert!(found.contains(&retitled), "{}", quillwort.describe());
    assert!(!found.contains(&events[2]), "{}", quillwort.describe());
    srv.stop(Duration::from_secs(15));
    drop(srv);

    let mut srv = start_delayed("start with the writes committed");
    assert_same_snapshots(&from_overlay, &snapshot(&srv), "once committed");
    let again = srv.get(&format!("{NS}/events?search=quillwort&per_page=50"));
    assert_eq!(again.text(), quillwort.text());
    srv.stop(Duration::from_secs(15));
}

// =============================================================================================
// 3. reindex refuses a locked directory and a missing one
// =============================================================================================

#[test]
fn reindex_refuses_a_locked_directory_and_a_missing_one() {
    let (t, dir) = fresh_data_dir(&STANDARD_USERS);
    let mut srv = start(&dir, "first start");
    let e = post(
        &srv,
        &format!("{NS}/events"),
        json!({"title": "Lockstep gathering", "start_date": "2029-03-01 10:00:00", "end_date": "2029-03-01 11:00:00"}),
    );

    let o = reindex(&dir);
    assert_eq!(o.code, Some(3), "reindex while serving: {}", o.describe());
    let want = locked_message(&dir);
    assert!(
        o.stderr.lines().any(|l| l.trim_end() == want),
        "reindex while serving: stderr must contain {want:?}: {}",
        o.describe()
    );
    assert!(
        o.stdout.is_empty(),
        "no summary when locked: {}",
        o.describe()
    );
    // The server is unaffected.
    let r = srv.get(&format!(
        "{NS}/events?search=lockstep&start_date=2029-01-01&end_date=2029-12-31"
    ));
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(list_ids(&r.json(), "events"), vec![id(&e)]);
    srv.stop(Duration::from_secs(15));
    drop(srv);

    let missing = t.path().join("nowhere").join("data");
    let o = reindex(&missing);
    assert_eq!(
        o.code,
        Some(1),
        "reindex of a missing dir: {}",
        o.describe()
    );
    assert!(
        o.stderr.lines().any(|l| l.starts_with("error: ")),
        "reindex of a missing dir: an `error: ` line on stderr: {}",
        o.describe()
    );
    assert!(o.stdout.is_empty(), "{}", o.describe());
    assert!(
        !missing.exists(),
        "reindex must not create a missing data directory"
    );

    // Unlocked again: works.
    let o = reindex(&dir);
    assert_eq!(o.code, Some(0), "reindex after stop: {}", o.describe());
    assert_eq!(
        o.stdout,
        "reindexed 1 events, 0 venues, 0 organizers\n",
        "{}",
        o.describe()
    );
}

// =============================================================================================
// 4. A missing or corrupt index is rebuilt at start
// =============================================================================================

#[test]
fn a_missing_or_corrupt_index_is_rebuilt_at_start() {
    let (_t, dir) = fresh_data_dir(&STANDARD_USERS);
    let mut srv = start(&dir, "first start");
    build_calendar(&srv);
    let before = snapshot(&srv);
    srv.stop(Duration::from_secs(15));
    drop(srv);

    // Missing.
    let index = dir.join("index");
    assert!(index.is_dir(), "DATA_DIR/index exists after serving");
    std::fs::remove_dir_all(&index).unwrap();
    let mut srv = start(&dir, "start without DATA_DIR/index");
    let after = snapshot(&srv);
    assert_same_snapshots(&before, &after, "after deleting DATA_DIR/index");
    assert!(index.is_dir(), "the index was rebuilt at start");
    srv.stop(Duration::from_secs(15));
    drop(srv);

    // Corrupt.
    let meta = index.join("meta.json");
    assert!(meta.is_file(), "DATA_DIR/index/meta.json exists");
    std::fs::write(&meta, b"\x00garbage{{{ not json at all").unwrap();
    let mut srv = start(&dir, "start with a garbage DATA_DIR/index/meta.json");
    let after = snapshot(&srv);
    assert_same_snapshots(&before, &after, "after corrupting meta.json");

    // The rebuilt index takes writes and survives a normal restart.
    let e = post(
        &srv,
        &format!("{NS}/events"),
        json!({"title": "Zephyrine recital", "start_date": "2029-04-01 10:00:00", "end_date": "2029-04-01 11:00:00"}),
    );
    let q = format!("{NS}/events?search=zephyrine&start_date=2029-01-01&end_date=2029-12-31");
    let r = srv.get(&q);
    assert_eq!(
        list_ids(&r.json(), "events"),
        vec![id(&e)],
        "{}",
        r.describe()
    );
    srv.stop(Duration::from_secs(15));
    drop(srv);
    let mut srv = start(&dir, "normal restart after the rebuild");
    let r = srv.get(&q);
    assert_eq!(
        list_ids(&r.json(), "events"),
        vec![id(&e)],
        "{}",
        r.describe()
    );
    srv.stop(Duration::from_secs(15));
}

// =============================================================================================
// 5. Events are found by their venue's and organizers' current names
// =============================================================================================

fn search_2029(srv: &Server, q: &str) -> Vec<u64> {
    let r = srv.get(&format!(
        "{NS}/events?search={q}&start_date=2029-01-01&end_date=2029-12-31"
    ));
    assert_eq!(r.status, 200, "search={q}: {}", r.describe());
    let v = r.json();
    let ids = list_ids(&v, "events");
    assert_eq!(v["total"], ids.len(), "search={q}: total; {v}");
    ids
}

#[test]
fn search_sees_renamed_venues() {
    let (_t, dir) = fresh_data_dir(&STANDARD_USERS);
    let mut srv = start(&dir, "first start");
    let venue = id(&post(
        &srv,
        &format!("{NS}/venues"),
        json!({"venue": "Harbour Hall"}),
    ));
    let e = id(&post(
        &srv,
        &format!("{NS}/events"),
        json!({"title": "Quarterly gathering", "start_date": "2029-05-01 10:00:00",
               "end_date": "2029-05-01 11:00:00", "venue": venue}),
    ));
    let other = id(&post(
        &srv,
        &format!("{NS}/events"),
        json!({"title": "Unrelated meetup", "start_date": "2029-05-02 10:00:00",
               "end_date": "2029-05-02 11:00:00"}),
    ));
    assert_eq!(search_2029(&srv, "harbour"), vec![e], "before the rename");
    assert_eq!(
        search_2029(&srv, "pier"),
        Vec::<u64>::new(),
        "before the rename"
    );

    let v = patch(
        &srv,
        &format!("{NS}/venues/{venue}"),
        json!({"venue": "Pier Four"}),
    );
    assert_eq!(v["venue"], "Pier Four");
    assert_eq!(
        search_2029(&srv, "pier"),
        vec![e],
        "search=pier finds the event of the renamed venue"
    );
    assert_eq!(
        search_2029(&srv, "harbour"),
        Vec::<u64>::new(),
        "search=harbour no longer finds it"
    );
    assert_eq!(search_2029(&srv, "pier+four"), vec![e]);
    assert_eq!(search_2029(&srv, "quarterly+pier"), vec![e]);
    assert_eq!(search_2029(&srv, "unrelated"), vec![other]);

    // Also after a restart.
    srv.stop(Duration::from_secs(15));
    drop(srv);
    let mut srv = start(&dir, "restart");
    assert_eq!(search_2029(&srv, "pier"), vec![e], "after a restart");
    assert_eq!(
        search_2029(&srv, "harbour"),
        Vec::<u64>::new(),
        "after a restart"
    );
    srv.stop(Duration::from_secs(15));
}

#[test]
fn search_sees_renamed_organizers() {
    let (_t, dir) = fresh_data_dir(&STANDARD_USERS);
    let mut srv = start(&dir, "first start");
    let o1 = id(&post(
        &srv,
        &format!("{NS}/organizers"),
        json!({"organizer": "Kestrel Collective"}),
    ));
    let o2 = id(&post(
        &srv,
        &format!("{NS}/organizers"),
        json!({"organizer": "Badger Band"}),
    ));
    let e = id(&post(
        &srv,
        &format!("{NS}/events"),
        json!({"title": "Spring fair", "start_date": "2029-06-01 10:00:00",
               "end_date": "2029-06-01 11:00:00", "organizer": [o1, o2]}),
    ));
    assert_eq!(search_2029(&srv, "kestrel"), vec![e]);
    patch(
        &srv,
        &format!("{NS}/organizers/{o1}"),
        json!({"organizer": "Osprey Guild"}),
    );
    assert_eq!(
        search_2029(&srv, "osprey"),
        vec![e],
        "search=osprey finds the event of the renamed organizer"
    );
    assert_eq!(
        search_2029(&srv, "kestrel"),
        Vec::<u64>::new(),
        "search=kestrel no longer finds it"
    );
    assert_eq!(
        search_2029(&srv, "osprey+badger"),
        vec![e],
        "words in two organizers"
    );
    srv.stop(Duration::from_secs(15));
}

// =============================================================================================
// 6. the administrators' online rebuild (extension)
// =============================================================================================

#[test]
fn administrators_rebuild_the_index_while_serving() {
    let (_t, dir) = fresh_data_dir(&STANDARD_USERS);
    let srv = start(&dir, "first start");
    let counts = build_calendar(&srv);
    let before = snapshot(&srv);
    let route = format!("{NS}/index/rebuild");

    let anonymous = srv.req("POST", &route).send();
    assert_eq!(anonymous.status, 401, "{}", anonymous.describe());
    assert_eq!(anonymous.json()["code"], "rest_forbidden");
    let editor = srv.req("POST", &route).user(&EDITOR).send();
    assert_eq!(editor.status, 403, "{}", editor.describe());
    assert_eq!(editor.json()["code"], "rest_forbidden");

    let r = srv.req("POST", &route).user(&ADMIN).send();
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(
        r.json(),
        json!({"events": counts.events, "venues": counts.venues, "organizers": counts.organizers})
    );
    assert_same_snapshots(&before, &snapshot(&srv), "after an online rebuild");

    // Writes after the swap are searchable, and survive a restart.
    let e = post(
        &srv,
        &format!("{NS}/events"),
        json!({"title": "Zqrebuiltword evening", "start_date": "2027-05-01 10:00:00", "end_date": "2027-05-01 11:00:00"}),
    );
    let found = srv
        .req(
            "GET",
            &format!("{NS}/events?search=zqrebuiltword&start_date=2027-01-01"),
        )
        .send()
        .json();
    assert_eq!(list_ids(&found, "events"), vec![id(&e)]);

    // Not part of the plugin's catalogue: absent from the namespace index, present in /doc.
    let index = srv.req("GET", NS).send().json();
    assert!(index["routes"].get(format!("{NS}/index/rebuild")).is_none());
    let doc = srv.req("GET", &format!("{NS}/doc")).send().json();
    assert_eq!(
        doc["paths"]["/index/rebuild"]["post"]["operationId"],
        "rebuildIndex"
    );
}
