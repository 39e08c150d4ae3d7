//! The change feed (`GET /changes`, docs/api.md, "Following changes"), over real HTTP against
//! the binary: random write sequences of every kind, applied by a client from nothing and
//! from a token taken midway, reach exactly what `almanac export` holds; what each role sees;
//! expired tokens; the same feed on two cluster nodes.

mod common;

use common::postgres::Postgres;
use common::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// A copy of the calendar kept by applying the change feed: (kind, ID) → record.
#[derive(Debug, Default, Clone, PartialEq)]
struct Replica {
    records: BTreeMap<(String, u64), Value>,
    token: Option<String>,
    /// Every (kind, action) applied.
    seen: std::collections::BTreeSet<(String, String)>,
}

impl Replica {
    /// Reads the feed after the replica's token (from the beginning without one), page by
    /// page, as `who` (with `context=export` for editors), and applies it.
    fn sync(&mut self, srv: &Server, who: Option<&TestUser>, per_page: usize) {
        let export = who.is_some_and(|u| matches!(u.role, "administrator" | "editor"));
        let mut pages = 0;
        loop {
            pages += 1;
            assert!(pages < 10_000, "the feed never ends");
            let mut path = format!("{NS}/changes?per_page={per_page}");
            if let Some(token) = &self.token {
                path.push_str(&format!("&since={token}"));
            }
            if export {
                path.push_str("&context=export");
            }
            let page = srv.get_ok(&path, who);
            let changes = page["changes"].as_array().expect("changes");
            assert!(changes.len() <= per_page, "{page}");
            for change in changes {
                let key = (
                    change["kind"].as_str().unwrap().to_string(),
                    change["id"].as_u64().unwrap(),
                );
                let action = change["action"].as_str().unwrap().to_string();
                self.seen.insert((key.0.clone(), action));
                match change.get("record") {
                    Some(record) => {
                        assert_eq!(record["id"], change["id"], "{change}");
                        self.records.insert(key, record.clone());
                    }
                    None => {
                        let action = change["action"].as_str().unwrap();
                        assert!(matches!(action, "deleted" | "removed"), "{change}");
                        self.records.remove(&key);
                    }
                }
            }
            match (page.get("next_page_token"), page.get("next_token")) {
                (Some(next), None) => self.token = Some(next.as_str().unwrap().to_string()),
                (None, Some(sync)) => {
                    self.token = Some(sync.as_str().unwrap().to_string());
                    return;
                }
                _ => panic!("a page has either next_page_token or next_token: {page}"),
            }
        }
    }

    /// What the replica holds, field by field where the export and the feed must agree.
    fn summary(&self) -> BTreeMap<(String, u64), Value> {
        self.records
            .iter()
            .map(|(key, record)| (key.clone(), summary_of(&key.0, record)))
            .collect()
    }
}

fn summary_of(kind: &str, record: &Value) -> Value {
    match kind {
        "category" | "tag" => json!([record["name"], record["slug"], record["parent"]]),
        _ => {
            let name = match kind {
                "event" => &record["title"],
                "venue" => &record["venue"],
                _ => &record["organizer"],
            };
            json!([
                name,
                record["slug"],
                record["status"],
                record["modified_utc"],
                record["language"]
            ])
        }
    }
}

/// `almanac export` of a stopped server's data directory, summarized like [`Replica::summary`].
fn exported(dir: &Path) -> BTreeMap<(String, u64), Value> {
    let file = dir.with_extension("jsonl");
    let out = almanac(["export", "--output"])
        .arg(file.to_str().unwrap())
        .arg("--data-dir")
        .arg(dir.to_str().unwrap())
        .run();
    assert_eq!(out.code, Some(0), "export: {}", out.describe());
    let text = std::fs::read_to_string(&file).unwrap();
    text.lines()
        .map(|line| {
            let line: Value = serde_json::from_str(line).unwrap();
            let kind = match line["resource"].as_str().unwrap() {
                "events" => "event",
                "venues" => "venue",
                "organizers" => "organizer",
                "categories" => "category",
                "tags" => "tag",
                other => panic!("resource {other}"),
            };
            let id = line["data"]["id"].as_u64().unwrap();
            ((kind.to_string(), id), summary_of(kind, &line["data"]))
        })
        .collect()
}

/// What a random writer has made so far.
#[derive(Default)]
struct Made {
    events: Vec<(u64, &'static str)>,
    venues: Vec<u64>,
    organizers: Vec<u64>,
    categories: Vec<(u64, &'static str)>,
    tags: Vec<u64>,
}

const LANGUAGES: [&str; 3] = ["en", "pt-br", "es"];
const STATUSES: [&str; 4] = ["publish", "draft", "private", "pending"];

/// One random write through `srv` as the administrator: creates, updates, trashes, restores
/// and deletes of every kind, translations, series and an occurrence's exception.
fn random_write(srv: &Server, rng: &mut Rng, made: &mut Made) {
    let word = unique_word(rng);
    let status = *rng.pick(&STATUSES).unwrap();
    let language = *rng.pick(&LANGUAGES).unwrap();
    let some = |rng: &mut Rng, ids: &[u64]| rng.pick(ids).copied();
    match rng.below(14) {
        0 => {
            let mut body = json!({"name": format!("Cat {word}")});
            // A translation of an existing category, when one in another language exists.
            if let Some((id, other)) = rng.pick(&made.categories).copied() {
                if other != language && rng.below(2) == 0 {
                    body["translation_of"] = json!(id);
                }
            }
            let path = format!("{NS}/categories?translation_language={language}");
            let r = srv.send("POST", &path, Some(&ADMIN), Some(&body));
            if r.status == 201 {
                made.categories
                    .push((r.json()["id"].as_u64().unwrap(), language));
            } else {
                assert!(matches!(r.status, 400 | 409), "{}", r.describe());
            }
        }
        1 => {
            let t = srv.create(
                &ADMIN,
                &format!("{NS}/tags"),
                &json!({"name": format!("Tag {word}")}),
            );
            made.tags.push(t["id"].as_u64().unwrap());
        }
        2 => {
            if let Some(id) = some(rng, &made.tags) {
                srv.write(
                    "POST",
                    &format!("{NS}/tags/{id}"),
                    &ADMIN,
                    &json!({"name": format!("Tag {word}")}),
                    200,
                );
            }
        }
        3 => {
            // Deleting a term takes it off its events too.
            if !made.categories.is_empty() {
                let i = rng.below(made.categories.len() as u64) as usize;
                let (id, _) = made.categories.remove(i);
                srv.write(
                    "DELETE",
                    &format!("{NS}/categories/{id}?force=true"),
                    &ADMIN,
                    &json!({}),
                    200,
                );
            }
        }
        4 => {
            let v = srv.create(
                &ADMIN,
                &format!("{NS}/venues?translation_language={language}"),
                &json!({"venue": format!("Hall {word}"), "city": "Porto", "status": status}),
            );
            made.venues.push(v["id"].as_u64().unwrap());
        }
        5 => {
            let o = srv.create(
                &ADMIN,
                &format!("{NS}/organizers"),
                &json!({"organizer": format!("Org {word}"), "status": status}),
            );
            made.organizers.push(o["id"].as_u64().unwrap());
        }
        6 => {
            if let Some(id) = some(rng, &made.venues) {
                srv.write(
                    "POST",
                    &format!("{NS}/venues/{id}"),
                    &ADMIN,
                    &json!({"venue": format!("Hall {word}")}),
                    200,
                );
            }
        }
        7 => {
            if let Some(id) = some(rng, &made.organizers) {
                let r = srv.send(
                    "DELETE",
                    &format!("{NS}/organizers/{id}"),
                    Some(&ADMIN),
                    None,
                );
                assert!(matches!(r.status, 200 | 410), "{}", r.describe());
            }
        }
        8 | 9 => {
            let day = 1 + rng.below(28);
            let mut body = json!({
                "title": format!("Event {word}"),
                "start_date": format!("2027-06-{day:02} 10:00:00"),
                "end_date": format!("2027-06-{day:02} 12:00:00"),
                "status": status,
            });
            if let Some(venue) = some(rng, &made.venues) {
                body["venue"] = json!(venue);
            }
            if let Some(organizer) = some(rng, &made.organizers) {
                body["organizer"] = json!([organizer]);
            }
            let categories: Vec<u64> = made
                .categories
                .iter()
                .filter(|c| c.1 == language)
                .map(|c| c.0)
                .collect();
            if let Some(category) = some(rng, &categories) {
                body["categories"] = json!([category]);
            }
            if let Some(tag) = some(rng, &made.tags) {
                body["tags"] = json!([tag]);
            }
            if rng.below(4) == 0 {
                body["recurrence"] = json!(["RRULE:FREQ=WEEKLY;COUNT=3"]);
            }
            if let Some((id, other)) = rng.pick(&made.events).copied() {
                if other != language && rng.below(3) == 0 {
                    body["translation_of"] = json!(id);
                }
            }
            let path = format!("{NS}/events?translation_language={language}");
            let r = srv.send("POST", &path, Some(&ADMIN), Some(&body));
            if r.status == 201 {
                made.events
                    .push((r.json()["id"].as_u64().unwrap(), language));
            } else {
                assert!(matches!(r.status, 400 | 409), "{}", r.describe());
            }
        }
        10 => {
            if let Some((id, _)) = rng.pick(&made.events).copied() {
                let r = srv.send(
                    "POST",
                    &format!("{NS}/events/{id}"),
                    Some(&ADMIN),
                    Some(&json!({"title": format!("Renamed {word}"), "status": status})),
                );
                assert!(matches!(r.status, 200 | 400), "{}", r.describe());
            }
        }
        11 => {
            if let Some((id, _)) = rng.pick(&made.events).copied() {
                let r = srv.send("DELETE", &format!("{NS}/events/{id}"), Some(&ADMIN), None);
                assert!(matches!(r.status, 200 | 410), "{}", r.describe());
            }
        }
        12 => {
            // An occurrence of a series changed alone: an exception, a record of its own.
            if let Some((id, _)) = rng.pick(&made.events).copied() {
                let read = srv.send(
                    "GET",
                    &format!("{NS}/events/{id}?context=export"),
                    Some(&ADMIN),
                    None,
                );
                let series = if read.status == 200 {
                    read.json()
                } else {
                    json!({})
                };
                if series.get("recurrence").is_some() {
                    let list = srv.get_ok(
                        &format!("{NS}/events?start_date=2027-01-01&end_date=2027-12-31&status=any&per_page=50&translation_language={}", series["language"].as_str().unwrap()),
                        Some(&ADMIN),
                    );
                    let occurrence = list["events"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|e| e["series_id"] == json!(id))
                        .map(|e| e["id"].as_u64().unwrap());
                    if let Some(occurrence) = occurrence {
                        srv.write(
                            "POST",
                            &format!("{NS}/events/{occurrence}"),
                            &ADMIN,
                            &json!({"title": format!("Moved {word}")}),
                            200,
                        );
                    }
                }
            }
        }
        _ => {
            if let Some(id) = some(rng, &made.venues) {
                srv.write(
                    "POST",
                    &format!("{NS}/venues/{id}"),
                    &ADMIN,
                    &json!({"status": status}),
                    200,
                );
            }
        }
    }
}

fn stop(srv: &mut Server) {
    srv.stop(Duration::from_secs(20));
}

#[test]
fn a_client_applying_the_feed_from_nothing_or_from_a_token_reaches_the_export() {
    let mut srv = Server::start_with_users(&STANDARD_USERS);
    let mut rng = Rng::from_entropy();
    let mut made = Made::default();
    for _ in 0..60 {
        random_write(&srv, &mut rng, &mut made);
    }
    // Then one change of each kind, which the client following the first part sees.
    let event = |title: &str| -> u64 {
        let body = json!({"title": title, "start_date": "2027-06-01 10:00:00",
            "end_date": "2027-06-01 11:00:00", "status": "publish"});
        srv.create(&ADMIN, &format!("{NS}/events"), &body)["id"]
            .as_u64()
            .unwrap()
    };
    event("Created");
    let trashed = event("Trashed");
    srv.write(
        "DELETE",
        &format!("{NS}/events/{trashed}"),
        &ADMIN,
        &json!({}),
        200,
    );
    let restored = event("Restored");
    srv.write(
        "DELETE",
        &format!("{NS}/events/{restored}"),
        &ADMIN,
        &json!({}),
        200,
    );
    srv.write(
        "POST",
        &format!("{NS}/events/{restored}"),
        &ADMIN,
        &json!({"status": "publish"}),
        200,
    );
    let updated = event("Updated");
    srv.write(
        "POST",
        &format!("{NS}/events/{updated}"),
        &ADMIN,
        &json!({"title": "Updated again"}),
        200,
    );
    let series = srv.create(
        &ADMIN,
        &format!("{NS}/events"),
        &json!({"title": "Series",
        "start_date": "2027-06-01 10:00:00", "end_date": "2027-06-01 11:00:00",
        "status": "publish", "recurrence": ["RRULE:FREQ=WEEKLY;COUNT=3"]}),
    );
    let occurrences = srv.get_ok(
        &format!("{NS}/events?start_date=2027-06-02&end_date=2027-06-30&per_page=50"),
        None,
    );
    let occurrence = occurrences["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["series_id"] == series["id"])
        .expect("an occurrence")["id"]
        .clone();
    srv.write(
        "POST",
        &format!("{NS}/events/{occurrence}"),
        &ADMIN,
        &json!({"title": "Series, moved"}),
        200,
    );
    let category = srv.create(
        &ADMIN,
        &format!("{NS}/categories"),
        &json!({"name": "Passing"}),
    );
    srv.write(
        "DELETE",
        &format!("{NS}/categories/{}?force=true", category["id"]),
        &ADMIN,
        &json!({}),
        200,
    );
    let tag = srv.create(&ADMIN, &format!("{NS}/tags"), &json!({"name": "Named"}));
    srv.write(
        "POST",
        &format!("{NS}/tags/{}", tag["id"]),
        &ADMIN,
        &json!({"name": "Renamed"}),
        200,
    );
    let organizer = srv.create(
        &ADMIN,
        &format!("{NS}/organizers"),
        &json!({"organizer": "Leaving"}),
    );
    srv.write(
        "DELETE",
        &format!("{NS}/organizers/{}", organizer["id"]),
        &ADMIN,
        &json!({}),
        200,
    );
    // A client that followed the first part, with small pages.
    let mut midway = Replica::default();
    midway.sync(&srv, Some(&ADMIN), 7);
    for _ in 0..60 {
        random_write(&srv, &mut rng, &mut made);
    }
    midway.sync(&srv, Some(&ADMIN), 7);
    let mut fresh = Replica::default();
    fresh.sync(&srv, Some(&ADMIN), 500);
    assert_eq!(midway.summary(), fresh.summary());
    assert_eq!(midway.token, fresh.token);
    assert_eq!(midway.records.len(), fresh.records.len());
    // Nothing new: the token answers an empty last page with itself.
    let idle = srv.get_ok(
        &format!("{NS}/changes?since={}", fresh.token.as_ref().unwrap()),
        Some(&ADMIN),
    );
    assert_eq!(idle, json!({"changes": [], "next_token": fresh.token}));
    // Each record once, in write order; the sequence made every kind of change.
    let all = srv.get_ok(
        &format!("{NS}/changes?per_page=500&context=export"),
        Some(&ADMIN),
    );
    for (kind, action) in [
        ("category", "deleted"),
        ("event", "created"),
        ("event", "updated"),
        ("event", "trashed"),
        ("event", "restored"),
        ("organizer", "trashed"),
        ("tag", "updated"),
    ] {
        let expected = (kind.to_string(), action.to_string());
        assert!(
            midway.seen.contains(&expected),
            "{expected:?} in {:?}",
            midway.seen
        );
    }
    let exceptions = all["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["record"]["series_id"].is_u64())
        .count();
    assert!(exceptions > 0, "an occurrence changed alone is in the feed");
    let occurrences = all["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "event" && c.get("record").is_none())
        .count();
    assert_eq!(
        occurrences, 0,
        "no occurrence of a series appears by itself"
    );
    let keys: Vec<_> = all["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["kind"].clone(), c["id"].clone()))
        .collect();
    let mut distinct = keys.clone();
    distinct.sort_by_key(|k| format!("{k:?}"));
    distinct.dedup();
    assert_eq!(distinct.len(), keys.len(), "a record appears once");
    stop(&mut srv);
    assert_eq!(
        fresh.summary(),
        exported(&srv.data_dir),
        "the feed's state is the export's"
    );
}

#[test]
fn each_role_sees_what_it_may_read_and_the_rest_as_removed() {
    let srv = Server::start_with_users(&STANDARD_USERS);
    let event = |who: &TestUser, title: &str, extra: Value| -> u64 {
        let mut body = json!({"title": title, "description": "Secret words inside",
            "start_date": "2027-07-01 10:00:00", "end_date": "2027-07-01 11:00:00"});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        srv.create(who, &format!("{NS}/events"), &body)["id"]
            .as_u64()
            .unwrap()
    };
    let public = event(&ADMIN, "Public", json!({"status": "publish"}));
    let draft = event(&AUTHOR, "Draft", json!({"status": "draft"}));
    let private = event(&ADMIN, "Private", json!({"status": "private"}));
    let protected = event(
        &ADMIN,
        "Protected",
        json!({"status": "publish", "password": "pw-123456"}),
    );
    let trashed = event(&ADMIN, "Trashed", json!({"status": "publish"}));
    srv.write(
        "DELETE",
        &format!("{NS}/events/{trashed}"),
        &ADMIN,
        &json!({}),
        200,
    );
    let seen = |who: Option<&TestUser>, query: &str| -> BTreeMap<u64, (String, Option<Value>)> {
        let page = srv.get_ok(&format!("{NS}/changes?per_page=500{query}"), who);
        page["changes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["kind"] == "event")
            .map(|c| {
                (
                    c["id"].as_u64().unwrap(),
                    (
                        c["action"].as_str().unwrap().to_string(),
                        c.get("record").cloned(),
                    ),
                )
            })
            .collect()
    };
    let anonymous = seen(None, "");
    assert_eq!(anonymous[&public].0, "created");
    for hidden in [draft, private, trashed] {
        assert_eq!(
            anonymous[&hidden],
            ("removed".to_string(), None),
            "{hidden}"
        );
    }
    let masked = anonymous[&protected]
        .1
        .clone()
        .expect("a protected event is listed");
    assert!(!masked.to_string().contains("Secret words"), "{masked}");
    assert_eq!(seen(Some(&SUBSCRIBER), "")[&draft].0, "removed");
    let author = seen(Some(&AUTHOR), "");
    assert_eq!(author[&draft].0, "created", "the author reads their draft");
    assert_eq!(author[&private].0, "removed");
    let editor = seen(Some(&EDITOR), "");
    assert_eq!(editor[&private].0, "created");
    assert_eq!(
        editor[&trashed].0, "removed",
        "the trash only in the export form"
    );
    let export = seen(Some(&EDITOR), "&context=export");
    assert_eq!(export[&trashed].0, "trashed");
    assert!(export[&protected]
        .1
        .as_ref()
        .unwrap()
        .to_string()
        .contains("Secret words"));
    // The export form is for editors only; tokens that are none are refused.
    assert_eq!(
        srv.send(
            "GET",
            &format!("{NS}/changes?context=export"),
            Some(&AUTHOR),
            None
        )
        .status,
        403
    );
    assert_eq!(srv.get(&format!("{NS}/changes?context=export")).status, 401);
    for bad in ["12", "c", "cx1", "c-1", ""] {
        let r = srv.get(&format!("{NS}/changes?since={bad}"));
        assert_eq!(r.status, 400, "since={bad}: {}", r.describe());
        assert_eq!(r.json()["code"], "rest_invalid_param");
    }
    // A language narrows the feed to its records.
    let es = srv.get_ok(&format!("{NS}/changes?translation_language=es"), None);
    assert!(es["changes"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["language"] == "es"));
}

#[test]
fn a_token_from_before_forgotten_deletions_has_expired() {
    let (tmp, dir) = fresh_data_dir(&[ADMIN]);
    let mut srv = Server::start(serve_cmd(&dir), None, "serve");
    let tag = srv.create(&ADMIN, &format!("{NS}/tags"), &json!({"name": "Passing"}));
    srv.create(&ADMIN, &format!("{NS}/tags"), &json!({"name": "Staying"}));
    let before = srv.get_ok(&format!("{NS}/changes"), None)["next_token"]
        .as_str()
        .unwrap()
        .to_string();
    srv.write(
        "DELETE",
        &format!("{NS}/tags/{}?force=true", tag["id"]),
        &ADMIN,
        &json!({}),
        200,
    );
    let after = srv.get_ok(&format!("{NS}/changes?since={before}"), None);
    assert_eq!(after["changes"][0]["action"], "deleted", "{after}");
    let after = after["next_token"].as_str().unwrap().to_string();
    stop(&mut srv);
    // Restarted with a retention shorter than the deletion's age: it is forgotten.
    std::thread::sleep(Duration::from_secs(2));
    let srv = Server::start(
        serve_cmd(&dir).args(["--change-retention", "1s"]),
        None,
        "serve",
    );
    let expired = poll(
        Duration::from_secs(20),
        Duration::from_millis(100),
        || srv.get(&format!("{NS}/changes?since={before}")),
        |r| r.status == 410,
    );
    assert_eq!(expired.status, 410, "{}", expired.describe());
    let body = expired.json();
    assert_eq!(body["code"], "rest_sync_token_expired");
    assert!(
        body["message"].as_str().unwrap().contains("without since"),
        "{body}"
    );
    // The token from after the deletion, and a start from nothing, still work.
    assert_eq!(srv.get(&format!("{NS}/changes?since={after}")).status, 200);
    let all = srv.get_ok(&format!("{NS}/changes"), None);
    let names: Vec<_> = all["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["record"]["name"].clone())
        .collect();
    assert_eq!(names, vec![json!("Staying")]);
    drop(tmp);
}

#[test]
fn a_generated_calendar_is_in_the_feed_whole() {
    let (_tmp, dir) = fresh_data_dir(&[ADMIN]);
    let out = almanac(["generate", "--events", "40", "--seed", "7", "--data-dir"])
        .arg(dir.to_str().unwrap())
        .run();
    assert_eq!(out.code, Some(0), "{}", out.describe());
    let mut srv = Server::start(serve_cmd(&dir), None, "serve");
    let mut replica = Replica::default();
    replica.sync(&srv, Some(&ADMIN), 13);
    stop(&mut srv);
    let exported = exported(&dir);
    assert!(exported.len() > 40);
    assert_eq!(replica.summary(), exported);
}

#[test]
fn cluster_nodes_answer_the_same_feed_and_take_each_others_tokens() {
    let pg = Postgres::start();
    let out = almanac([
        "user",
        "add",
        ADMIN.name,
        "--role",
        ADMIN.role,
        "--password",
        ADMIN.password,
        "--cluster",
        &pg.url(),
    ])
    .run();
    assert_eq!(out.code, Some(0), "{}", out.describe());
    let tmp = tempfile::tempdir().unwrap();
    let (a_dir, b_dir) = (tmp.path().join("a"), tmp.path().join("b"));
    let cluster =
        |dir: &Path| Server::start(serve_cmd(dir).args(["--cluster", &pg.url()]), None, "node");
    let mut a = cluster(&a_dir);
    let b = cluster(&b_dir);
    // Random writes of every kind, alternating between the nodes; a client follows node B
    // midway and node A at the end.
    let mut rng = Rng::from_entropy();
    let mut made = Made::default();
    let mut midway = Replica::default();
    for step in 0..80 {
        random_write(if step % 2 == 0 { &a } else { &b }, &mut rng, &mut made);
        if step == 40 {
            await_same_position(&a, &b);
            midway.sync(&b, Some(&ADMIN), 9);
        }
    }
    await_same_position(&a, &b);
    midway.sync(&a, Some(&ADMIN), 9);
    let feed = |srv: &Server| -> Vec<Value> {
        let page = srv.get_ok(
            &format!("{NS}/changes?per_page=500&context=export"),
            Some(&ADMIN),
        );
        // The records' links name each node's own address: the entries are compared.
        page["changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| json!([c["token"], c["kind"], c["id"], c["action"], c["date_utc"]]))
            .collect()
    };
    assert_eq!(feed(&a), feed(&b), "both nodes give the same feed");
    let mut fresh = Replica::default();
    fresh.sync(&b, Some(&ADMIN), 500);
    assert_eq!(midway.summary(), fresh.summary());
    assert_eq!(midway.token, fresh.token);
    stop(&mut a);
    assert_eq!(
        fresh.summary(),
        exported(&a_dir),
        "the feed's state is the export's"
    );
    drop(b);
}

/// Waits until both nodes have applied every write either of them acknowledged.
fn await_same_position(a: &Server, b: &Server) {
    let position = |srv: &Server| srv.get("/healthz").json()["position"].as_u64().unwrap();
    let target = position(a).max(position(b));
    for srv in [a, b] {
        let reached = poll(
            Duration::from_secs(10),
            Duration::from_millis(20),
            || position(srv),
            |p| *p >= target,
        );
        assert!(reached >= target, "position {target} never reached");
    }
}
