//! Concurrency: concurrent writes are serialized, the last committed write wins, and every
//! acknowledged write is visible to every later request (docs/architecture.md, "Consistency");
//! slugs, pagination, partial updates and the venue and organizer duplicate check under load.
//!
//! - Records created at the same time with the same title get distinct slugs, each the first
//!   free suffix, as if they had been created one after another; venues and organizers that
//!   are duplicates collapse into one record even when created at the same instant.
//! - Partial updates of one record by several clients, each client its own field, lose nothing:
//!   the record ends with every client's last value, fields nobody sent are untouched, and each
//!   answer shows a state that some serial order of the writes produces.
//! - Readers running beside heavy writes never get an error, never see a torn record (a title
//!   and a description written by one request always appear together) and always get pages
//!   that agree with their totals.

mod common;

use common::*;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::Duration;

const WINDOW: &str = "start_date=2000-01-01&end_date=2099-12-31";
/// Every request here must be answered within this.
const TIMEOUT: Duration = Duration::from_secs(60);

fn id_of(v: &Value) -> u64 {
    v["id"]
        .as_u64()
        .unwrap_or_else(|| panic!("no integer id in {v}"))
}

/// `base`, `base-2`, …, `base-n` (the first free suffix each time).
fn slug_series(base: &str, n: usize) -> BTreeSet<String> {
    (1..=n)
        .map(|i| {
            if i == 1 {
                base.to_string()
            } else {
                format!("{base}-{i}")
            }
        })
        .collect()
}

/// Runs `f(thread)` on `n` threads at once (released together by a barrier); results in
/// thread order.
fn together<R: Send>(n: usize, f: impl Fn(usize) -> R + Sync) -> Vec<R> {
    let barrier = std::sync::Barrier::new(n);
    let (f, barrier) = (&f, &barrier);
    thread::scope(|sc| {
        let hs: Vec<_> = (0..n)
            .map(|t| {
                sc.spawn(move || {
                    barrier.wait();
                    f(t)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

// =============================================================================================
// (a) Same titles at the same time
// =============================================================================================

#[test]
fn records_created_at_once_with_one_title_get_distinct_slugs_per_language() {
    let srv = Server::start_with_users(&[ADMIN]);
    let http = Http::new(&srv.base, Some(&ADMIN), TIMEOUT);
    let http_es = http.language("/es");
    const THREADS: usize = 8;
    const EACH: usize = 4;

    // Events: even threads write in English, odd ones in Spanish; slugs are unique per kind
    // and language, so each language gets its own series.
    let made = together(THREADS, |t| {
        let http = if t % 2 == 0 { &http } else { &http_es };
        (0..EACH)
            .map(|i| {
                let body = json!({
                    "title": "Harbour Jazz Night",
                    "description": format!("writer {t}, event {i}"),
                    "start_date": "2031-06-14 19:30:00",
                    "end_date": "2031-06-14 23:00:00",
                });
                (t % 2, http.write("POST", "/events", &body, 201))
            })
            .collect::<Vec<_>>()
    });
    let made: Vec<(usize, Value)> = made.into_iter().flatten().collect();
    let ids: BTreeSet<u64> = made.iter().map(|(_, v)| id_of(v)).collect();
    assert_eq!(ids.len(), THREADS * EACH, "every create made its own event");
    for (lang, code) in [(0, "en"), (1, "es")] {
        let slugs: Vec<String> = made
            .iter()
            .filter(|(l, _)| *l == lang)
            .map(|(_, v)| v["slug"].as_str().unwrap().to_string())
            .collect();
        let set: BTreeSet<String> = slugs.iter().cloned().collect();
        assert_eq!(
            set,
            slug_series("harbour-jazz-night", THREADS / 2 * EACH),
            "{code} slugs: {slugs:?}"
        );
    }
    // What was answered is what is stored: each slug leads to the event that got it.
    for (lang, v) in &made {
        let http = if *lang == 0 { &http } else { &http_es };
        let path = format!("/events/by-slug/{}", v["slug"].as_str().unwrap());
        let a = http.send("GET", &path, None);
        assert_eq!(a.status, 200, "GET {path}: {}", a.body);
        assert_eq!(a.body["id"], v["id"], "GET {path}");
    }

    // Venues and organizers with one name but different descriptions are different records
    // (the duplicate check compares the description when one is sent).
    for (kind, name_field, base) in [
        ("venues", "venue", "pier-four"),
        ("organizers", "organizer", "pier-four"),
    ] {
        let made = together(THREADS, |t| {
            (0..EACH)
                .map(|i| {
                    let mut body = json!({"description": format!("{kind} {t}.{i}")});
                    body[name_field] = json!("Pier Four");
                    http.write("POST", &format!("/{kind}"), &body, 201)
                })
                .collect::<Vec<_>>()
        });
        let made: Vec<Value> = made.into_iter().flatten().collect();
        let ids: BTreeSet<u64> = made.iter().map(id_of).collect();
        assert_eq!(ids.len(), THREADS * EACH, "{kind}: one record per create");
        let slugs: BTreeSet<String> = made
            .iter()
            .map(|v| v["slug"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(slugs, slug_series(base, THREADS * EACH), "{kind} slugs");
    }

    // Duplicates (same name, same description) sent at the same instant are still found:
    // the check and the insert are one transaction, so exactly one record results.
    for (kind, name_field) in [("venues", "venue"), ("organizers", "organizer")] {
        let made = together(THREADS, |t| {
            (0..2)
                .map(|_| {
                    let mut body = json!({
                        "description": "The one and only",
                        "phone": format!("+351 {t}"),
                    });
                    body[name_field] = json!("Lighthouse Lodge");
                    id_of(&http.write("POST", &format!("/{kind}"), &body, 201))
                })
                .collect::<Vec<_>>()
        });
        let ids: BTreeSet<u64> = made.into_iter().flatten().collect();
        assert_eq!(
            ids.len(),
            1,
            "{kind}: duplicates collapse into one record: {ids:?}"
        );
        let a = http.send(
            "GET",
            &format!("/{kind}?search=lighthouse&status=any"),
            None,
        );
        assert_eq!(a.status, 200, "{}", a.body);
        assert_eq!(a.body["total"], 1, "{kind}?search=lighthouse: {}", a.body);
    }
}

// =============================================================================================
// (b) Partial updates of one record from several clients
// =============================================================================================

/// One field a client owns: its name and the value of version `k` (0 = the value at creation)
/// as sent and as represented.
struct Field {
    name: &'static str,
    sent: fn(usize) -> Value,
    shown: fn(usize) -> Value,
}

/// Creates the record from version 0 of every field plus `fixed`, lets one client per field
/// send versions 1..=`rounds` of its field alone (each waiting for the previous answer), and
/// checks every answer and the final record.
fn concurrent_field_updates(
    http: &Http,
    collection: &str,
    fields: &[Field],
    fixed: Value,
    rounds: usize,
) {
    let mut body = fixed.clone();
    for f in fields {
        body[f.name] = (f.sent)(0);
    }
    let created = http.write("POST", &format!("/{collection}"), &body, 201);
    let id = id_of(&created);
    let path = format!("/{collection}/{id}");
    // The version of every field that an answer shows; None when it shows no known version
    // (a torn or foreign value).
    let version = |v: &Value, f: &Field| (0..=rounds).find(|k| v[f.name] == (f.shown)(*k));

    let answers: Vec<Vec<Value>> = together(fields.len(), |t| {
        let f = &fields[t];
        (1..=rounds)
            .map(|k| {
                let mut b = json!({});
                b[f.name] = (f.sent)(k);
                // The three update methods are one operation.
                let method = ["PATCH", "POST", "PUT"][k % 3];
                http.write(method, &path, &b, 200)
            })
            .collect()
    });

    let mut problems = Vec::new();
    for (t, seen) in answers.iter().enumerate() {
        let mine = &fields[t];
        let mut floor: Vec<usize> = vec![0; fields.len()];
        for (i, v) in seen.iter().enumerate() {
            // An answer shows the client's own write...
            if version(v, mine) != Some(i + 1) {
                problems.push(format!(
                    "{}'s answer {} shows {} = {}",
                    mine.name,
                    i + 1,
                    mine.name,
                    v[mine.name]
                ));
            }
            // ...and, for the other fields, versions that exist and never go back: later
            // answers of one client come from later states of the serial order.
            for (j, other) in fields.iter().enumerate() {
                match version(v, other) {
                    Some(k) if k >= floor[j] => floor[j] = k,
                    Some(k) => problems.push(format!(
                        "{}'s answer {} shows {} version {k} after version {}",
                        mine.name,
                        i + 1,
                        other.name,
                        floor[j]
                    )),
                    None => problems.push(format!(
                        "{}'s answer {} shows {} = {} (never written)",
                        mine.name,
                        i + 1,
                        other.name,
                        v[other.name]
                    )),
                }
            }
            for (k, want) in fixed.as_object().unwrap() {
                if &v[k.as_str()] != want && k != "venue" {
                    problems.push(format!("{k} changed to {} (nobody sent it)", v[k.as_str()]));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{collection} {id}:\n{}",
        problems.join("\n")
    );

    // The record ends with every client's last write, and the rest as created.
    let a = http.send("GET", &path, None);
    assert_eq!(a.status, 200, "GET {path}: {}", a.body);
    for f in fields {
        assert_eq!(
            a.body[f.name],
            (f.shown)(rounds),
            "{path}: {} after {rounds} writes",
            f.name
        );
    }
    for (k, want) in fixed.as_object().unwrap() {
        if k == "venue" {
            assert_eq!(a.body["venue"]["id"], *want, "{path}: venue untouched");
        } else {
            assert_eq!(&a.body[k.as_str()], want, "{path}: {k} untouched");
        }
    }
}

#[test]
fn concurrent_partial_updates_of_one_record_keep_every_clients_last_write() {
    let srv = Server::start_with_users(&[ADMIN]);
    let http = Http::new(&srv.base, Some(&ADMIN), TIMEOUT);
    let venue = id_of(&http.write(
        "POST",
        "/venues",
        &json!({"venue": "Anchor Hall", "city": "Porto"}),
        201,
    ));
    const ROUNDS: usize = 10;

    let event_fields = [
        Field {
            name: "title",
            sent: |k| json!(format!("Shared event v{k}")),
            shown: |k| json!(format!("Shared event v{k}")),
        },
        Field {
            name: "description",
            sent: |k| json!(format!("Description v{k}")),
            shown: |k| json!(format!("<p>Description v{k}</p>")),
        },
        Field {
            name: "excerpt",
            sent: |k| json!(format!("Excerpt v{k}")),
            shown: |k| json!(format!("<p>Excerpt v{k}</p>")),
        },
        Field {
            name: "website",
            sent: |k| json!(format!("https://example.com/v{k}")),
            shown: |k| json!(format!("https://example.com/v{k}")),
        },
        Field {
            name: "slug",
            sent: |k| json!(format!("shared-slug-v{k}")),
            shown: |k| json!(format!("shared-slug-v{k}")),
        },
        // The end stays later than every start, so that no start moves the end (an end before
        // the start becomes the start).
        Field {
            name: "start_date",
            sent: |k| json!(format!("2031-03-{:02} 10:00:00", k + 1)),
            shown: |k| json!(format!("2031-03-{:02} 10:00:00", k + 1)),
        },
    ];
    concurrent_field_updates(
        &http,
        "events",
        &event_fields,
        json!({
            "end_date": "2031-12-31 22:00:00",
            "status": "draft",
            "timezone": "Europe/Lisbon",
            "featured": true,
            "venue": venue,
        }),
        ROUNDS,
    );

    let venue_fields = [
        Field {
            name: "venue",
            sent: |k| json!(format!("Shared hall v{k}")),
            shown: |k| json!(format!("Shared hall v{k}")),
        },
        Field {
            name: "address",
            sent: |k| json!(format!("Rua {k}")),
            shown: |k| json!(format!("Rua {k}")),
        },
        Field {
            name: "city",
            sent: |k| json!(format!("City v{k}")),
            shown: |k| json!(format!("City v{k}")),
        },
        Field {
            name: "zip",
            sent: |k| json!(format!("4000-{k:03}")),
            shown: |k| json!(format!("4000-{k:03}")),
        },
        Field {
            name: "phone",
            sent: |k| json!(format!("+351 22 {k:03}")),
            shown: |k| json!(format!("+351 22 {k:03}")),
        },
        Field {
            name: "description",
            sent: |k| json!(format!("Hall v{k}")),
            shown: |k| json!(format!("<p>Hall v{k}</p>")),
        },
    ];
    concurrent_field_updates(
        &http,
        "venues",
        &venue_fields,
        json!({"country": "Portugal", "show_map": false, "status": "pending"}),
        ROUNDS,
    );
}

// =============================================================================================
// (c) Readers beside heavy writes
// =============================================================================================

/// The word of a title `Ev <word>` and of a description `<p><word> …</p>`: written together
/// by every create and retitle, so they must always be read together.
fn words(item: &Value) -> (String, String) {
    let title = item["title"].as_str().unwrap_or("").to_string();
    let description = item["description"].as_str().unwrap_or("").to_string();
    let t = title.split_whitespace().nth(1).unwrap_or("").to_string();
    let d = description
        .strip_prefix("<p>")
        .and_then(|d| d.split_whitespace().next())
        .unwrap_or("")
        .to_string();
    (t, d)
}

/// Checks a list answer: totals headers equal the body's, page sizes follow `per_page`, no ID
/// twice, every item whole and of a status the list may show.
fn check_page(
    a: &Answer,
    what: &str,
    page: u64,
    per_page: u64,
    statuses: &[&str],
    problems: &mut Vec<String>,
) {
    let total = a.body["total"].as_u64();
    let pages = a.body["total_pages"].as_u64();
    let items = a.body["events"].as_array();
    let (Some(total), Some(pages), Some(items)) = (total, pages, items) else {
        problems.push(format!("{what}: not a list body: {}", a.body));
        return;
    };
    let want_len = total.saturating_sub((page - 1) * per_page).min(per_page);
    if a.total.as_deref() != Some(total.to_string().as_str())
        || a.total_pages.as_deref() != Some(pages.to_string().as_str())
        || pages != total.div_ceil(per_page)
        || items.len() as u64 != want_len
    {
        problems.push(format!(
            "{what}: total {total}, total_pages {pages}, X-Cal-Total {:?}, X-Cal-TotalPages {:?}, {} items (want {want_len})",
            a.total,
            a.total_pages,
            items.len()
        ));
    }
    let ids: BTreeSet<u64> = items.iter().filter_map(|v| v["id"].as_u64()).collect();
    if ids.len() != items.len() {
        problems.push(format!("{what}: an ID twice or a missing ID"));
    }
    for item in items {
        check_item(item, what, statuses, problems);
    }
}

fn check_item(item: &Value, what: &str, statuses: &[&str], problems: &mut Vec<String>) {
    let (t, d) = words(item);
    if t.is_empty() || t != d {
        problems.push(format!(
            "{what}: torn event {}: title {} with description {}",
            item["id"], item["title"], item["description"]
        ));
    }
    let status = item["status"].as_str().unwrap_or("?");
    if !statuses.contains(&status) {
        problems.push(format!("{what}: event {} with status {status}", item["id"]));
    }
}

#[test]
fn readers_beside_heavy_writes_see_no_errors_torn_records_or_short_pages() {
    let srv = Server::start_with_users(&[ADMIN]);
    let admin = Http::new(&srv.base, Some(&ADMIN), TIMEOUT);
    let anonymous = Http::new(&srv.base, None, TIMEOUT);
    const WRITERS: usize = 3;
    const READERS: usize = 3;
    const OPS: usize = 80;

    // Events readers can look up: (id, current word); trashed ones leave the list.
    let live: Mutex<Vec<(u64, String)>> = Mutex::new(Vec::new());
    let mut rng = Rng::new(0x00c0_ffee_0003);
    for i in 0..20 {
        let w = unique_word(&mut rng);
        let v = admin.write(
            "POST",
            "/events",
            &json!({
                "title": format!("Ev {w}"),
                "description": format!("{w} seeded {i}"),
                "start_date": format!("2031-05-{:02} 10:00:00", 1 + i % 28),
                "end_date": format!("2031-05-{:02} 12:00:00", 1 + i % 28),
            }),
            201,
        );
        live.lock().unwrap().push((id_of(&v), w));
    }

    let done = AtomicBool::new(false);
    let (writer_errors, reader_problems, reads) = thread::scope(|sc| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|t| {
                let (admin, live) = (&admin, &live);
                sc.spawn(move || {
                    let mut rng = Rng::new(0x0077_0000 + t as u64);
                    let mut errors = Vec::new();
                    let mut mine: Vec<u64> = Vec::new();
                    for n in 0..OPS {
                        let w = unique_word(&mut rng);
                        let roll = rng.below(100);
                        let (method, path, body, want) = if roll < 40 || mine.is_empty() {
                            let day = 1 + rng.below(28);
                            let status =
                                ["publish", "publish", "draft", "private"][rng.below(4) as usize];
                            (
                                "POST",
                                "/events".to_string(),
                                Some(json!({
                                    "title": format!("Ev {w}"),
                                    "description": format!("{w} by writer {t}, op {n}"),
                                    "start_date": format!("2031-04-{day:02} 09:00:00"),
                                    "end_date": format!("2031-04-{day:02} 17:00:00"),
                                    "status": status,
                                })),
                                201,
                            )
                        } else if roll < 75 {
                            let id = mine[rng.below(mine.len() as u64) as usize];
                            (
                                "PATCH",
                                format!("/events/{id}"),
                                Some(json!({
                                    "title": format!("Ev {w}"),
                                    "description": format!("{w} retitled by writer {t}, op {n}"),
                                })),
                                200,
                            )
                        } else if roll < 90 {
                            let id = mine[rng.below(mine.len() as u64) as usize];
                            let status =
                                ["publish", "draft", "private", "pending"][rng.below(4) as usize];
                            (
                                "PATCH",
                                format!("/events/{id}"),
                                Some(json!({"status": status})),
                                200,
                            )
                        } else {
                            let i = rng.below(mine.len() as u64) as usize;
                            let id = mine.swap_remove(i);
                            live.lock().unwrap().retain(|(x, _)| *x != id);
                            ("DELETE", format!("/events/{id}"), None, 200)
                        };
                        let a = admin.send(method, &path, body.as_ref());
                        if a.status != want {
                            errors.push(format!("{method} {path}: {} {}", a.status, a.body));
                            continue;
                        }
                        let id = id_of(&a.body);
                        if method == "POST" {
                            mine.push(id);
                        }
                        if method != "DELETE" {
                            let word = a.body["title"]
                                .as_str()
                                .and_then(|t| t.split_whitespace().nth(1))
                                .unwrap_or("")
                                .to_string();
                            let mut l = live.lock().unwrap();
                            l.retain(|(x, _)| *x != id);
                            l.push((id, word));
                        }
                    }
                    errors
                })
            })
            .collect();
        let readers: Vec<_> = (0..READERS)
            .map(|t| {
                let (admin, anonymous, live, done) = (&admin, &anonymous, &live, &done);
                sc.spawn(move || {
                    let mut rng = Rng::new(0x0088_0000 + t as u64);
                    let mut problems = Vec::new();
                    let mut reads = 0usize;
                    let any = ["publish", "future", "draft", "pending", "private"];
                    while !done.load(Ordering::SeqCst) && problems.len() < 20 {
                        reads += 1;
                        let pick = {
                            let l = live.lock().unwrap();
                            l[rng.below(l.len() as u64) as usize].clone()
                        };
                        match rng.below(5) {
                            0 | 1 => {
                                // An administrator's list (every status but trash), some page.
                                let per_page = [5, 7, 50][rng.below(3) as usize];
                                let page = 1 + rng.below(3);
                                let what = format!(
                                    "GET /events?per_page={per_page}&page={page}&{WINDOW}&status=any"
                                );
                                let a = admin.send("GET", &what[4..], None);
                                match (a.status, a.body["code"].as_str()) {
                                    (200, _) => {
                                        check_page(&a, &what, page, per_page, &any, &mut problems)
                                    }
                                    // The list shrank below this page meanwhile (trash).
                                    (404, Some("event-archive-page-not-found")) if page > 1 => {}
                                    _ => problems.push(format!("{what}: {} {}", a.status, a.body)),
                                }
                            }
                            2 => {
                                // An anonymous list shows published events only.
                                let what = format!("GET /events?per_page=20&{WINDOW}");
                                let a = anonymous.send("GET", &what[4..], None);
                                if a.status == 200 {
                                    check_page(&a, &what, 1, 20, &["publish"], &mut problems);
                                } else {
                                    problems.push(format!("{what}: {} {}", a.status, a.body));
                                }
                            }
                            3 => {
                                let what = format!(
                                    "GET /events?search={}&{WINDOW}&status=any",
                                    pick.1
                                );
                                let a = admin.send("GET", &what[4..], None);
                                if a.status == 200 {
                                    check_page(&a, &what, 1, 10, &any, &mut problems);
                                } else {
                                    problems.push(format!("{what}: {} {}", a.status, a.body));
                                }
                            }
                            _ => {
                                let what = format!("GET /events/{}", pick.0);
                                let a = admin.send("GET", &what[4..], None);
                                match (a.status, a.body["code"].as_str()) {
                                    (200, _) => check_item(&a.body, &what, &any, &mut problems),
                                    (403, Some("event-no-longer-available")) => {}
                                    _ => problems.push(format!("{what}: {} {}", a.status, a.body)),
                                }
                            }
                        }
                    }
                    (problems, reads)
                })
            })
            .collect();
        let writer_errors: Vec<String> = writers
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        done.store(true, Ordering::SeqCst);
        let mut problems = Vec::new();
        let mut reads = 0;
        for h in readers {
            let (p, r) = h.join().unwrap();
            problems.extend(p);
            reads += r;
        }
        (writer_errors, problems, reads)
    });
    eprintln!("{} writes and {reads} reads", WRITERS * OPS);
    assert!(
        writer_errors.is_empty(),
        "writes failed:\n{}",
        writer_errors.join("\n")
    );
    assert!(
        reader_problems.is_empty(),
        "{} problems seen by readers:\n{}",
        reader_problems.len(),
        reader_problems.join("\n")
    );

    // Once the writers are done, the list holds exactly the live events, each under its
    // current word.
    let live = live.into_inner().unwrap();
    let want: BTreeMap<u64, String> = live.into_iter().collect();
    let mut listed = BTreeMap::new();
    let mut page = 1;
    loop {
        let a = admin.send(
            "GET",
            &format!("/events?per_page=50&page={page}&{WINDOW}&status=any"),
            None,
        );
        assert_eq!(a.status, 200, "{}", a.body);
        for item in a.body["events"].as_array().unwrap() {
            listed.insert(id_of(item), words(item).0);
        }
        if page >= a.body["total_pages"].as_u64().unwrap() {
            break;
        }
        page += 1;
    }
    assert_eq!(listed, want, "the list after the writes");
}
