//! Crash safety of writes, trashing and restoring (docs/architecture.md, "Consistency").
//!
//! Writer threads create, update and trash events, venues and organizers as fast as the server
//! answers; the server is killed with SIGKILL at seeded random moments and restarted on the same
//! data directory. After every restart:
//!
//! - every acknowledged write is there exactly as acknowledged (the stable fields of the GET
//!   representation equal those of the acknowledged body; a later acknowledged write to the same
//!   record supersedes an earlier one);
//! - every acknowledged delete holds (events: 403 `event-no-longer-available`; venues and
//!   organizers: status `trash`), `force=true` notwithstanding (a `force` parameter is ignored);
//! - a write whose answer was lost to the kill is either wholly applied or wholly absent;
//! - nothing that was never attempted exists (every ID the posts sequence handed out is probed);
//! - the lists and searches of the search index agree with the store: the IDs listed (all
//!   pages) are exactly the records readable by ID, and each record's unique title word finds it
//!   and nothing else, while the words of superseded titles find nothing.
//!
//! Each writer owns its records, so the order of the writes to one record is the order in which
//! one thread sent them, and each writer has at most one write in flight at the kill.

mod common;

use common::*;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// The whole run is reproducible from this seed (except the server's own timing);
/// `ALMANAC_CRASH_SEED` overrides it to explore other schedules.
const SEED: u64 = 0x00c0_ffee_5eed_0007;
const WRITERS: usize = 6;
const CYCLES: usize = 5;
/// Every test event lies in 2031; lists name the window explicitly (the default one ends
/// 24 months from now).
const WINDOW: &str = "start_date=2000-01-01&end_date=2099-12-31";
/// Every status a list may ask for.
const ALL_STATUSES: &str = "publish,future,draft,pending,private,trash";

// ---------------------------------------------------------------------------------------------
// Randomness
// ---------------------------------------------------------------------------------------------

fn seed() -> u64 {
    std::env::var("ALMANAC_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(SEED)
}

// ---------------------------------------------------------------------------------------------
// Records and what is known about them
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum K {
    Event,
    Venue,
    Organizer,
}

impl K {
    fn collection(self) -> &'static str {
        match self {
            K::Event => "events",
            K::Venue => "venues",
            K::Organizer => "organizers",
        }
    }
    /// The name field: `title`, `venue`, `organizer`.
    fn name_field(self) -> &'static str {
        match self {
            K::Event => "title",
            K::Venue => "venue",
            K::Organizer => "organizer",
        }
    }
    fn prefix(self) -> &'static str {
        match self {
            K::Event => "Ev",
            K::Venue => "Hall",
            K::Organizer => "Org",
        }
    }
    /// The list path for `status`, without `page` (events need the explicit window).
    fn list_path(self, status: &str) -> String {
        match self {
            K::Event => format!("/events?per_page=50&{WINDOW}&status={status}"),
            _ => format!("/{}?per_page=50&status={status}", self.collection()),
        }
    }
}

/// The unique word of a record: the second word of its name (`Ev zq…`, `Hall zq…`, `Org zq…`).
fn word_of(kind: K, body: &Value) -> String {
    body[kind.name_field()]
        .as_str()
        .and_then(|t| t.split_whitespace().nth(1))
        .unwrap_or("")
        .to_string()
}

fn id_of(v: &Value) -> u64 {
    v["id"]
        .as_u64()
        .unwrap_or_else(|| panic!("no integer id in {v}"))
}

/// The fields of a representation that a write determines and that must survive a restart
/// unchanged. Links to venues and organizers are reduced to IDs, without those in `trashed`:
/// trashing a venue or organizer unlinks it from every event without touching the events'
/// `modified`.
fn stable(kind: K, v: &Value, trashed: &BTreeSet<u64>) -> Value {
    let mut out = Map::new();
    let names: &[&str] = match kind {
        K::Event => &[
            "title",
            "description",
            "start_date",
            "end_date",
            "status",
            "slug",
            "modified",
        ],
        K::Venue => &["venue", "description", "city", "status", "slug", "modified"],
        K::Organizer => &[
            "organizer",
            "description",
            "phone",
            "status",
            "slug",
            "modified",
        ],
    };
    for n in names {
        out.insert(n.to_string(), v.get(*n).cloned().unwrap_or(Value::Null));
    }
    if kind == K::Event {
        let venue = v["venue"]
            .get("id")
            .and_then(Value::as_u64)
            .filter(|id| !trashed.contains(id));
        out.insert("venue".into(), json!(venue));
        let organizers: Vec<u64> = v["organizer"]
            .as_array()
            .map(|a| a.iter().map(id_of).collect::<Vec<u64>>())
            .unwrap_or_default()
            .into_iter()
            .filter(|id| !trashed.contains(id))
            .collect();
        out.insert("organizer".into(), json!(organizers));
    }
    Value::Object(out)
}

/// The stable fields a write body sets, in the form [`stable`] gives them.
fn sent_fields(kind: K, sent: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    for (k, v) in sent.as_object().unwrap() {
        match k.as_str() {
            "description" => {
                out.insert(k.clone(), json!(format!("<p>{}</p>", v.as_str().unwrap())));
            }
            "venue" if kind == K::Event => {
                let id = v.as_u64().filter(|id| *id != 0);
                out.insert(k.clone(), json!(id));
            }
            "organizer" if kind == K::Event => {
                out.insert(k.clone(), v.clone());
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out
}

/// A write a writer attempted.
#[derive(Debug, Clone)]
enum Action {
    Create(Value),
    Update(Value),
    /// DELETE, with or without `force=true` (which must change nothing).
    Trash,
}

#[derive(Debug)]
struct Op {
    kind: K,
    /// `None` for creates.
    id: Option<u64>,
    action: Action,
    /// The body of the success answer; `None` when no answer came (in flight at the kill).
    ack: Option<Value>,
}

#[derive(Debug, Clone)]
struct Rec {
    kind: K,
    owner: usize,
    /// The last acknowledged (or, after a restart, observed) representation; a trashed
    /// record's is the DELETE answer or its item in the `status=trash` list.
    body: Value,
    /// A write to this record whose answer was lost.
    pending: Option<Action>,
}

impl Rec {
    fn trashed(&self) -> bool {
        self.body["status"] == "trash"
    }
}

#[derive(Default)]
struct Known {
    recs: BTreeMap<u64, Rec>,
    /// Creates whose answer was lost: (kind, writer, body sent).
    maybe_created: Vec<(K, usize, Value)>,
    /// Words no record carries any more (renamed away, or a create that did not happen).
    dead: BTreeSet<(K, String)>,
    acked: usize,
    inflight_applied: usize,
    inflight_absent: usize,
}

impl Known {
    fn merge(&mut self, ops: Vec<(usize, Op)>) {
        for (owner, op) in ops {
            match (op.action, op.ack) {
                (Action::Create(_), Some(body)) => {
                    self.acked += 1;
                    let id = id_of(&body);
                    self.recs.insert(
                        id,
                        Rec {
                            kind: op.kind,
                            owner,
                            body,
                            pending: None,
                        },
                    );
                }
                (Action::Create(sent), None) => self.maybe_created.push((op.kind, owner, sent)),
                (action, Some(body)) => {
                    self.acked += 1;
                    let rec = self.recs.get_mut(&op.id.unwrap()).expect("own record");
                    let before = word_of(rec.kind, &rec.body);
                    if word_of(rec.kind, &body) != before {
                        self.dead.insert((rec.kind, before));
                    }
                    if matches!(action, Action::Trash) {
                        assert_eq!(body["status"], "trash", "DELETE answers the trashed record");
                    }
                    rec.body = body;
                }
                (action, None) => {
                    self.recs
                        .get_mut(&op.id.unwrap())
                        .expect("own record")
                        .pending = Some(action)
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Writers
// ---------------------------------------------------------------------------------------------

/// A date-time of 2031 from a day and an hour.
fn date(day: u64, hour: u64) -> String {
    let month = 1 + day / 28;
    let dom = 1 + day % 28;
    format!("2031-{month:02}-{dom:02} {hour:02}:00:00")
}

/// The records a writer owns and may still change (not trashed), by kind.
#[derive(Default, Clone)]
struct Mine {
    events: Vec<u64>,
    venues: Vec<u64>,
    organizers: Vec<u64>,
}

/// One writer: writes to its own records as fast as it can until `stop` or the first
/// exchange without an answer (recorded as in flight). Any answer other than success is a
/// failure of the test.
fn writer(
    http: Http,
    stop: &AtomicBool,
    warm: &AtomicUsize,
    seed: u64,
    owner: usize,
    mut mine: Mine,
) -> (Vec<Op>, Vec<String>) {
    let mut rng = Rng::new(seed);
    let mut ops = Vec::new();
    let mut errors = Vec::new();
    let statuses = ["publish", "publish", "draft", "pending", "private"];
    let mut n = 0u64;
    while !stop.load(Ordering::SeqCst) {
        n += 1;
        let roll = rng.below(100);
        let w = unique_word(&mut rng);
        let (kind, id, action, method, path) = if roll < 10 || mine.venues.is_empty() {
            let body = json!({
                "venue": format!("Hall {w}"),
                "description": format!("{w} hall of writer {owner}"),
                "city": format!("City {n}"),
            });
            (
                K::Venue,
                None,
                Action::Create(body),
                "POST",
                "/venues".into(),
            )
        } else if roll < 15 || mine.organizers.is_empty() {
            let body = json!({
                "organizer": format!("Org {w}"),
                "description": format!("{w} organizer of writer {owner}"),
                "phone": format!("+351 {n}"),
            });
            let path = "/organizers".to_string();
            (K::Organizer, None, Action::Create(body), "POST", path)
        } else if roll < 50 || mine.events.is_empty() {
            let day = rng.below(300);
            let mut body = json!({
                "title": format!("Ev {w}"),
                "description": format!("{w} event of writer {owner}"),
                "start_date": date(day, 9 + rng.below(8)),
                "end_date": date(day, 18 + rng.below(5)),
                "status": *rng.pick(&statuses).unwrap(),
            });
            if rng.below(2) == 0 {
                body["venue"] = json!(*rng.pick(&mine.venues).unwrap());
            }
            if rng.below(3) == 0 {
                body["organizer"] = json!([*rng.pick(&mine.organizers).unwrap()]);
            }
            (
                K::Event,
                None,
                Action::Create(body),
                "POST",
                "/events".into(),
            )
        } else if roll < 80 {
            let id = *rng.pick(&mine.events).unwrap();
            // Partial updates of one or two fields.
            let body = match rng.below(6) {
                0 | 1 => json!({
                    "title": format!("Ev {w}"),
                    "description": format!("{w} retitled by writer {owner}"),
                }),
                2 => {
                    let day = rng.below(300);
                    json!({"start_date": date(day, 8), "end_date": date(day, 20)})
                }
                3 => json!({"status": *rng.pick(&statuses).unwrap()}),
                4 => match rng.pick(&mine.venues) {
                    Some(v) if rng.below(3) > 0 => json!({"venue": *v}),
                    _ => json!({"venue": 0}),
                },
                _ => json!({"slug": format!("renamed-{w}")}),
            };
            let path = format!("/events/{id}");
            (K::Event, Some(id), Action::Update(body), "PATCH", path)
        } else if roll < 88 {
            let id = *rng.pick(&mine.events).unwrap();
            let force = if rng.below(2) == 0 { "?force=true" } else { "" };
            let path = format!("/events/{id}{force}");
            (K::Event, Some(id), Action::Trash, "DELETE", path)
        } else if roll < 93 {
            let (kind, id) = if rng.below(2) == 0 {
                (K::Venue, *rng.pick(&mine.venues).unwrap())
            } else {
                (K::Organizer, *rng.pick(&mine.organizers).unwrap())
            };
            let mut body = json!({"description": format!("{w} renamed by writer {owner}")});
            body[kind.name_field()] = json!(format!("{} {w}", kind.prefix()));
            let path = format!("/{}/{id}", kind.collection());
            (kind, Some(id), Action::Update(body), "POST", path)
        } else {
            // Trash a venue or organizer; only when another one remains to link events to.
            let kind = if rng.below(2) == 0 && mine.venues.len() > 1 {
                K::Venue
            } else if mine.organizers.len() > 1 {
                K::Organizer
            } else {
                continue;
            };
            let list = if kind == K::Venue {
                &mine.venues
            } else {
                &mine.organizers
            };
            let id = *rng.pick(list).unwrap();
            let path = format!("/{}/{id}", kind.collection());
            (kind, Some(id), Action::Trash, "DELETE", path)
        };
        let body = match &action {
            Action::Create(b) | Action::Update(b) => Some(b.clone()),
            Action::Trash => None,
        };
        let expected = if matches!(action, Action::Create(_)) {
            201
        } else {
            200
        };
        match http.try_send(method, &path, body.as_ref()) {
            Err(_) => {
                ops.push(Op {
                    kind,
                    id,
                    action,
                    ack: None,
                });
                break;
            }
            Ok(a) if a.status == expected && a.body.is_object() => {
                if ops.is_empty() {
                    warm.fetch_add(1, Ordering::SeqCst);
                }
                let got = id_of(&a.body);
                match (&action, kind) {
                    (Action::Create(_), K::Event) => mine.events.push(got),
                    (Action::Create(_), K::Venue) => mine.venues.push(got),
                    (Action::Create(_), K::Organizer) => mine.organizers.push(got),
                    (Action::Trash, K::Event) => mine.events.retain(|x| *x != got),
                    (Action::Trash, K::Venue) => mine.venues.retain(|x| *x != got),
                    (Action::Trash, K::Organizer) => mine.organizers.retain(|x| *x != got),
                    _ => {}
                }
                ops.push(Op {
                    kind,
                    id,
                    action,
                    ack: Some(a.body),
                });
            }
            Ok(a) => {
                errors.push(format!(
                    "{method} {path} {body:?} answered {} {} before the kill",
                    a.status, a.body
                ));
                break;
            }
        }
    }
    (ops, errors)
}

// ---------------------------------------------------------------------------------------------
// Verification after a restart
// ---------------------------------------------------------------------------------------------

/// What the store holds under one ID of the posts sequence, as the single-record routes say.
#[derive(Debug)]
enum Found {
    Nothing,
    Live(K, Value),
    /// A trashed event (GET answers 403 `event-no-longer-available`).
    TrashedEvent,
    /// A trashed venue or organizer (readable by administrators).
    Trashed(K, Value),
    Odd(String),
}

fn probe(http: &Http, id: u64) -> Found {
    let a = http.get(&format!("/events/{id}"));
    match (a.status, a.body["code"].as_str()) {
        (200, _) => return Found::Live(K::Event, a.body),
        (403, Some("event-no-longer-available")) => return Found::TrashedEvent,
        (404, Some("rest-event-not-found")) => return Found::Nothing,
        (400, Some("rest-invalid-event-id")) => {}
        _ => return Found::Odd(format!("GET /events/{id}: {} {}", a.status, a.body)),
    }
    for kind in [K::Venue, K::Organizer] {
        let a = http.get(&format!("/{}/{id}", kind.collection()));
        match a.status {
            200 if a.body["status"] == "trash" => return Found::Trashed(kind, a.body),
            200 => return Found::Live(kind, a.body),
            400 => {}
            _ => {
                return Found::Odd(format!(
                    "GET /{}/{id}: {} {}",
                    kind.collection(),
                    a.status,
                    a.body
                ))
            }
        }
    }
    Found::Odd(format!(
        "ID {id} is neither an event, a venue nor an organizer, nor free"
    ))
}

/// Every item of a list, all pages, checking the totals headers and page sizes on the way.
fn list_all(http: &Http, path: &str, key: &str, failures: &mut Vec<String>) -> Vec<Value> {
    let mut items = Vec::new();
    let mut page = 1;
    loop {
        let a = http.get(&format!("{path}&page={page}"));
        if a.status != 200 {
            failures.push(format!("{path}&page={page}: {} {}", a.status, a.body));
            return items;
        }
        let total = a.body["total"].as_u64().unwrap_or(u64::MAX);
        let pages = a.body["total_pages"].as_u64().unwrap_or(u64::MAX);
        let got = a.body[key].as_array().cloned().unwrap_or_default();
        let want_len = total.saturating_sub((page - 1) * 50).min(50);
        if a.total.as_deref() != Some(total.to_string().as_str())
            || a.total_pages.as_deref() != Some(pages.to_string().as_str())
            || pages != total.div_ceil(50)
            || got.len() as u64 != want_len
        {
            failures.push(format!(
                "{path}&page={page}: total {total}, total_pages {pages}, X-Cal-Total {:?}, X-Cal-TotalPages {:?}, {} items",
                a.total,
                a.total_pages,
                got.len()
            ));
        }
        items.extend(got);
        if page >= pages {
            return items;
        }
        page += 1;
    }
}

/// The IDs a search finds (one page of 50 is plenty for a unique word).
fn search(http: &Http, kind: K, w: &str, status: &str) -> Result<Vec<u64>, String> {
    let path = format!("{}&search={w}", kind.list_path(status));
    let a = http.get(&path);
    if a.status != 200 {
        return Err(format!("{path}: {} {}", a.status, a.body));
    }
    let ids: Vec<u64> = a.body[kind.collection()]
        .as_array()
        .map(|a| a.iter().map(id_of).collect())
        .unwrap_or_default();
    if a.body["total"] != json!(ids.len()) {
        return Err(format!("{path}: total {} but {ids:?}", a.body["total"]));
    }
    Ok(ids)
}

/// Whether `got` is `acked` with the write `sent` wholly applied: every field sent has the
/// value sent, every other stable field its acknowledged value, `modified` not earlier.
fn wholly_applied(
    kind: K,
    acked: &Value,
    sent: &Value,
    got: &Value,
    trashed: &BTreeSet<u64>,
) -> bool {
    let mut want = stable(kind, acked, trashed);
    for (k, v) in sent_fields(kind, sent) {
        want[k.as_str()] = v;
    }
    let got_stable = stable(kind, got, trashed);
    let modified_ok = got_stable["modified"].as_str() >= acked["modified"].as_str();
    want["modified"] = got_stable["modified"].clone();
    if kind == K::Event {
        if let Some(v) = want["venue"].as_u64() {
            if trashed.contains(&v) {
                want["venue"] = Value::Null;
            }
        }
    }
    modified_ok && want == got_stable
}

/// Whether `got` is the record a lost create `sent` would have made.
fn created_from(kind: K, sent: &Value, got: &Value) -> bool {
    let none = BTreeSet::new();
    let got_stable = stable(kind, got, &none);
    let fields = sent_fields(kind, sent);
    let slug = format!("{}-{}", kind.prefix().to_lowercase(), word_of(kind, sent));
    fields.iter().all(|(k, v)| &got_stable[k.as_str()] == v) && got["slug"] == slug.as_str()
}

/// Checks the restarted server against everything acknowledged; resolves the writes whose
/// answers were lost (what the server shows now becomes the known state). Returns the problems.
fn verify(http: &Http, known: &mut Known) -> Vec<String> {
    let mut failures = Vec::new();

    // 1. The store, as the single-record routes show it: every ID the posts sequence can have
    //    handed out. IDs are never reused and only committed writes draw them, so the records
    //    of lost creates lie at most one per writer beyond the highest ID seen.
    let top = known.recs.keys().last().copied().unwrap_or(0) + 4 * WRITERS as u64 + 4;
    let ids: Vec<u64> = (1..=top).collect();
    let found = par_map(&ids, |id| probe(http, *id));
    let mut store: BTreeMap<u64, Found> = BTreeMap::new();
    for (id, f) in ids.into_iter().zip(found) {
        match f {
            Found::Nothing => {}
            Found::Odd(why) => failures.push(why),
            f => {
                store.insert(id, f);
            }
        }
    }

    // Trashed events are shown whole only by the trash list.
    let trash_list = list_all(http, &K::Event.list_path("trash"), "events", &mut failures);
    let trashed_events: BTreeMap<u64, Value> =
        trash_list.into_iter().map(|v| (id_of(&v), v)).collect();
    let trashed_links: BTreeSet<u64> = store
        .iter()
        .filter(|(_, f)| matches!(f, Found::Trashed(..)))
        .map(|(id, _)| *id)
        .collect();

    // 2. Every record of the store was written by a writer, as acknowledged or as sent.
    for (id, f) in &store {
        let (kind, got) = match f {
            Found::Live(k, v) | Found::Trashed(k, v) => (*k, v.clone()),
            Found::TrashedEvent => match trashed_events.get(id) {
                Some(v) => (K::Event, v.clone()),
                None => {
                    failures.push(format!(
                        "event {id} answers 403 event-no-longer-available but is not in the trash list"
                    ));
                    continue;
                }
            },
            _ => unreachable!(),
        };
        if got["id"] != json!(id) {
            failures.push(format!("GET of ID {id} answered another record: {got}"));
            continue;
        }
        match known.recs.get_mut(id) {
            Some(rec) => {
                if rec.kind != kind {
                    failures.push(format!("{id} was a {:?}, now a {kind:?}", rec.kind));
                    continue;
                }
                let as_acked =
                    stable(kind, &rec.body, &trashed_links) == stable(kind, &got, &trashed_links);
                let ok = match &rec.pending {
                    None => as_acked,
                    Some(Action::Update(sent)) => {
                        let applied = wholly_applied(kind, &rec.body, sent, &got, &trashed_links);
                        if applied && !as_acked {
                            known.inflight_applied += 1;
                        } else {
                            known.inflight_absent += 1;
                        }
                        // Whichever name lost is a word nobody carries.
                        let now = word_of(kind, &got);
                        for w in [word_of(kind, &rec.body), word_of(kind, sent)] {
                            if !w.is_empty() && w != now {
                                known.dead.insert((kind, w));
                            }
                        }
                        as_acked || applied
                    }
                    Some(Action::Trash) => {
                        if got["status"] == "trash" {
                            known.inflight_applied += 1;
                            let mut want = stable(kind, &rec.body, &trashed_links);
                            let got_s = stable(kind, &got, &trashed_links);
                            // Trashing changes the status, the slug and `modified` only.
                            for k in ["status", "slug", "modified"] {
                                want[k] = got_s[k].clone();
                            }
                            want == got_s
                                && got["slug"]
                                    .as_str()
                                    .is_some_and(|s| s.ends_with("__trashed"))
                        } else {
                            known.inflight_absent += 1;
                            as_acked
                        }
                    }
                    Some(Action::Create(_)) => unreachable!(),
                };
                if !ok {
                    failures.push(format!(
                        "{kind:?} {id}: acknowledged {}\n  lost write in flight: {:?}\n  now {}",
                        stable(kind, &rec.body, &trashed_links),
                        rec.pending,
                        stable(kind, &got, &trashed_links)
                    ));
                }
                rec.body = got;
                rec.pending = None;
            }
            None => {
                // Must be a create whose answer was lost, wholly applied.
                let w = word_of(kind, &got);
                match known
                    .maybe_created
                    .iter()
                    .position(|(k, _, sent)| *k == kind && word_of(kind, sent) == w)
                {
                    Some(i) => {
                        let (_, owner, sent) = known.maybe_created.remove(i);
                        if !created_from(kind, &sent, &got) {
                            failures.push(format!(
                                "{kind:?} {id} from a create in flight at the kill is not as sent: sent {sent}, now {}",
                                stable(kind, &got, &trashed_links)
                            ));
                        }
                        known.inflight_applied += 1;
                        known.recs.insert(
                            *id,
                            Rec {
                                kind,
                                owner,
                                body: got,
                                pending: None,
                            },
                        );
                    }
                    None => failures.push(format!(
                        "{kind:?} {id} exists but no writer created it: {got}"
                    )),
                }
            }
        }
    }
    // Creates in flight that did not happen.
    for (kind, _, sent) in known.maybe_created.drain(..) {
        known.inflight_absent += 1;
        known.dead.insert((kind, word_of(kind, &sent)));
    }
    // 3. Nothing acknowledged is missing.
    let missing: Vec<u64> = known
        .recs
        .keys()
        .filter(|id| !store.contains_key(id))
        .copied()
        .collect();
    for id in missing {
        failures.push(format!(
            "acknowledged {:?} {id} is gone: {}",
            known.recs[&id].kind, known.recs[&id].body
        ));
        known.recs.remove(&id);
    }

    // 4. The lists show exactly the store: live records with `status=any`, trashed ones with
    //    `status=trash`.
    for kind in [K::Event, K::Venue, K::Organizer] {
        for (status, trashed) in [("any", false), ("trash", true)] {
            let items = list_all(
                http,
                &kind.list_path(status),
                kind.collection(),
                &mut failures,
            );
            let listed: Vec<u64> = items.iter().map(id_of).collect();
            let set: BTreeSet<u64> = listed.iter().copied().collect();
            if set.len() != listed.len() {
                failures.push(format!("{kind:?} status={status} lists an ID twice"));
            }
            let want: BTreeSet<u64> = known
                .recs
                .iter()
                .filter(|(_, r)| r.kind == kind && r.trashed() == trashed)
                .map(|(id, _)| *id)
                .collect();
            if set != want {
                failures.push(format!(
                    "{kind:?} list status={status}: listed but not in the store: {:?}; in the store but not listed: {:?}",
                    set.difference(&want).collect::<Vec<_>>(),
                    want.difference(&set).collect::<Vec<_>>()
                ));
            }
            for item in &items {
                if let Some(rec) = known.recs.get(&id_of(item)) {
                    if stable(kind, item, &trashed_links) != stable(kind, &rec.body, &trashed_links)
                    {
                        failures.push(format!(
                            "{kind:?} {} listed as {} but read as {}",
                            id_of(item),
                            stable(kind, item, &trashed_links),
                            stable(kind, &rec.body, &trashed_links)
                        ));
                    }
                }
            }
        }
    }

    // 5. Each record's word finds it alone; superseded words find nothing.
    let recs: Vec<(u64, Rec)> = known.recs.iter().map(|(k, v)| (*k, v.clone())).collect();
    let found = par_map(&recs, |(id, rec)| {
        let status = if rec.trashed() { "trash" } else { "any" };
        let w = word_of(rec.kind, &rec.body);
        match search(http, rec.kind, &w, status) {
            Ok(ids) if ids == vec![*id] => None,
            Ok(ids) => Some(format!(
                "{:?} search={w}&status={status} (record {id}) found {ids:?}",
                rec.kind
            )),
            Err(e) => Some(e),
        }
    });
    failures.extend(found.into_iter().flatten());
    let dead: Vec<(K, String)> = known.dead.iter().cloned().collect();
    let found = par_map(&dead, |(kind, w)| {
        match search(http, *kind, w, ALL_STATUSES) {
            Ok(ids) if ids.is_empty() => None,
            Ok(ids) => Some(format!(
                "{kind:?} search={w} (a word no record carries any more) found {ids:?}"
            )),
            Err(e) => Some(e),
        }
    });
    failures.extend(found.into_iter().flatten());
    failures
}

// ---------------------------------------------------------------------------------------------
// The test
// ---------------------------------------------------------------------------------------------

fn serve(dir: &std::path::Path, what: &str) -> Server {
    Server::start(serve_cmd(dir), None, what)
}

#[test]
fn acknowledged_writes_survive_sigkill_and_lists_and_search_agree_with_the_store() {
    let t0 = Instant::now();
    let (_tmp, dir) = fresh_data_dir(&[ADMIN]);
    let mut rng = Rng::new(seed());
    let mut known = Known::default();
    let mut srv = serve(&dir, "first start");
    for cycle in 1..=CYCLES {
        let mut shares = vec![Mine::default(); WRITERS];
        for (id, rec) in known.recs.iter().filter(|(_, r)| !r.trashed()) {
            let m = &mut shares[rec.owner];
            match rec.kind {
                K::Event => m.events.push(*id),
                K::Venue => m.venues.push(*id),
                K::Organizer => m.organizers.push(*id),
            }
        }
        let load_ms = 300 + rng.below(2201);
        let seeds: Vec<u64> = (0..WRITERS).map(|_| rng.next()).collect();
        let stop = AtomicBool::new(false);
        let warm = AtomicUsize::new(0);
        let (ops, errors) = thread::scope(|sc| {
            let handles: Vec<_> = shares
                .into_iter()
                .zip(seeds)
                .enumerate()
                .map(|(owner, (mine, seed))| {
                    let http = Http::new(&srv.base, Some(&ADMIN), Duration::from_secs(30));
                    let (stop, warm) = (&stop, &warm);
                    sc.spawn(move || writer(http, stop, warm, seed, owner, mine))
                })
                .collect();
            // The load is measured from the moment every writer has had its first answer
            // (the first request of a client pays for verifying its password), so that the
            // kill falls among writes in full flow.
            poll(
                Duration::from_secs(60),
                Duration::from_millis(5),
                || warm.load(Ordering::SeqCst),
                |n| *n >= WRITERS,
            );
            thread::sleep(Duration::from_millis(load_ms));
            srv.signal("KILL");
            stop.store(true, Ordering::SeqCst);
            let mut ops = Vec::new();
            let mut errors = Vec::new();
            for (owner, h) in handles.into_iter().enumerate() {
                let (o, e) = h.join().unwrap();
                ops.extend(o.into_iter().map(|op| (owner, op)));
                errors.extend(e);
            }
            (ops, errors)
        });
        assert_eq!(
            srv.wait_exit(Duration::from_secs(15)),
            None,
            "the server died of SIGKILL"
        );
        assert!(
            errors.is_empty(),
            "cycle {cycle}: writes failed before the kill:\n{}\n--- server stderr (tail) ---\n{}",
            errors.join("\n"),
            tail(&srv.stderr_text(), 3000)
        );
        let attempted = ops.len();
        known.merge(ops);
        drop(srv);

        srv = serve(&dir, &format!("restart after SIGKILL #{cycle}"));
        let http = Http::new(&srv.base, Some(&ADMIN), Duration::from_secs(30));
        let failures = verify(&http, &mut known);
        if !failures.is_empty() {
            let n = failures.len();
            panic!(
                "after SIGKILL #{cycle} (seed {}): {n} problems:\n{}\n--- server stderr (tail) ---\n{}",
                seed(),
                failures.into_iter().take(30).collect::<Vec<_>>().join("\n"),
                tail(&srv.stderr_text(), 3000)
            );
        }
        eprintln!(
            "cycle {cycle}: {load_ms} ms of load, {attempted} writes attempted; {} records, {} acknowledged writes so far; lost answers resolved: {} applied, {} absent; verified at {:?}",
            known.recs.len(),
            known.acked,
            known.inflight_applied,
            known.inflight_absent,
            t0.elapsed()
        );
    }
    assert!(
        known.acked > 0 && known.recs.values().any(|r| r.kind == K::Event),
        "the writers got no event acknowledged at all"
    );
    srv.stop(Duration::from_secs(30));
}
