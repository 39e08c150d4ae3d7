//! Cluster mode against a real PostgreSQL (a throw-away server per test, see
//! `common::postgres`): nodes share every write through the log, read-your-writes across nodes
//! with `X-Cal-Seq`/`X-Cal-Min-Seq`, a node joins from the snapshot, and PostgreSQL going away
//! stops writes (503, nothing changed) but not reads (docs/operations.md, "Running several
//! nodes").

mod common;

use common::postgres::Postgres;
use common::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const PUBLIC: &str = "http://calendar.example";

/// A node of the cluster at `pg` on `dir`.
fn node(pg: &Postgres, dir: &Path) -> Server {
    Server::start(
        serve_cmd(dir).args(["--public-url", PUBLIC, "--cluster", &pg.url()]),
        Some(PUBLIC),
        "node",
    )
}

fn stop(mut srv: Server) {
    srv.stop(Duration::from_secs(20));
}

/// The administrator the first node created, whose credentials every node accepts.
struct Admin(String);

impl Admin {
    fn of(first: &Server) -> Admin {
        Admin(
            first
                .initial_admin_password
                .clone()
                .expect("the first node of an empty cluster creates the administrator"),
        )
    }

    fn send(&self, srv: &Server, method: &str, path: &str, body: Option<Value>) -> Resp {
        let req = srv.req(method, path).auth("admin", &self.0);
        match body {
            Some(b) => req.json_body(&b).send(),
            None => req.send(),
        }
    }
}

fn seq_of(r: &Resp) -> u64 {
    r.header("x-cal-seq")
        .unwrap_or_else(|| panic!("X-Cal-Seq: {}", r.describe()))
        .parse()
        .unwrap()
}

/// A read that waits for position `seq`.
fn get_at(srv: &Server, path: &str, seq: u64) -> Resp {
    srv.req("GET", path)
        .header("X-Cal-Min-Seq", &seq.to_string())
        .send()
}

fn position(srv: &Server) -> u64 {
    srv.get("/healthz").json()["position"].as_u64().unwrap()
}

/// Waits (up to 10 s) until `srv` has reached `seq` without being asked to.
fn await_position(srv: &Server, seq: u64) {
    let reached = poll(
        Duration::from_secs(10),
        Duration::from_millis(20),
        || position(srv),
        |p| *p >= seq,
    );
    assert!(reached >= seq, "position {seq} never reached");
}

fn export(dir: &Path) -> String {
    let file = dir.with_extension("jsonl");
    let out = almanac(["export", "--public-url", PUBLIC, "--output"])
        .arg(file.to_str().unwrap())
        .arg("--data-dir")
        .arg(dir.to_str().unwrap())
        .run();
    assert_eq!(out.code, Some(0), "export: {}", out.describe());
    std::fs::read_to_string(&file).unwrap()
}

fn event_body(title: &str, extra: Value) -> Value {
    let mut body = json!({
        "title": title,
        "description": format!("{title} described"),
        "start_date": "2027-05-01 19:00:00",
        "end_date": "2027-05-01 21:00:00",
        "status": "publish",
    });
    if let Value::Object(extra) = extra {
        body.as_object_mut().unwrap().extend(extra);
    }
    body
}

/// Creates a published event of each title on `srv`, in turn; returns the last one's position.
fn create_events(admin: &Admin, srv: &Server, titles: &[impl AsRef<str>]) -> u64 {
    let mut last = 0;
    for title in titles {
        let r = admin.send(
            srv,
            "POST",
            &format!("{NS}/events"),
            Some(event_body(title.as_ref(), json!({}))),
        );
        assert_eq!(r.status, 201, "{}", r.describe());
        last = seq_of(&r);
    }
    last
}

fn dirs(tmp: &tempfile::TempDir, names: &[&str]) -> Vec<PathBuf> {
    names.iter().map(|n| tmp.path().join(n)).collect()
}

#[test]
fn writes_on_either_node_are_read_and_searched_on_the_other_and_both_end_identical() {
    let pg = Postgres::start();
    let tmp = tempfile::tempdir().unwrap();
    let [a_dir, b_dir] = <[PathBuf; 2]>::try_from(dirs(&tmp, &["a", "b"])).unwrap();
    let a = node(&pg, &a_dir);
    let admin = Admin::of(&a);
    let b = node(&pg, &b_dir);
    assert!(
        b.initial_admin_password.is_none(),
        "the second node finds the administrator in the cluster"
    );

    // A category written on A, read on B at the write's position.
    let r = admin.send(
        &a,
        "POST",
        &format!("{NS}/categories"),
        Some(json!({"name": "Jazz"})),
    );
    assert_eq!(r.status, 201, "{}", r.describe());
    let category = r.json()["id"].as_u64().unwrap();
    let seq = seq_of(&r);
    let r = get_at(&b, &format!("{NS}/categories/{category}"), seq);
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(r.json()["name"], "Jazz");

    // An event on B in that category: searchable on A at once with its position, and within
    // a second without it.
    let r = admin.send(
        &b,
        "POST",
        &format!("{NS}/events"),
        Some(event_body(
            "Quintessential quartet",
            json!({"categories": [category]}),
        )),
    );
    assert_eq!(r.status, 201, "{}", r.describe());
    let event = r.json()["id"].as_u64().unwrap();
    let seq = seq_of(&r);
    let found = get_at(
        &a,
        &format!("{NS}/events?search=quintessential&categories=jazz"),
        seq,
    );
    assert_eq!(found.status, 200, "{}", found.describe());
    assert_eq!(
        found.json()["events"][0]["id"],
        json!(event),
        "{}",
        found.describe()
    );
    let started = Instant::now();
    await_position(&a, seq);
    assert!(started.elapsed() < Duration::from_secs(1) + Duration::from_millis(500));

    // Alternating writes of every kind, with colliding slugs and a translation group.
    let mut last = seq;
    for round in 0..3 {
        for (srv, other) in [(&a, &b), (&b, &a)] {
            let r = admin.send(
                srv,
                "POST",
                &format!("{NS}/events"),
                Some(event_body(
                    "Same title",
                    json!({"tags": [format!("tag {round}")]}),
                )),
            );
            assert_eq!(r.status, 201, "{}", r.describe());
            let id = r.json()["id"].as_u64().unwrap();
            let r = admin.send(
                other,
                "POST",
                &format!("{NS}/events/{id}"),
                Some(json!({"title": format!("Same title, round {round}")})),
            );
            assert_eq!(r.status, 200, "update on the other node: {}", r.describe());
            last = seq_of(&r);
            // A venue and an organizer with colliding names: created on one node, updated on
            // the other, linked to the event, trashed.
            for (collection, field) in [("venues", "venue"), ("organizers", "organizer")] {
                let r = admin.send(
                    srv,
                    "POST",
                    &format!("{NS}/{collection}"),
                    Some(json!({field: "Same place", "status": "publish"})),
                );
                assert_eq!(r.status, 201, "{}", r.describe());
                let linked = r.json()["id"].as_u64().unwrap();
                let r = admin.send(
                    other,
                    "POST",
                    &format!("{NS}/{collection}/{linked}"),
                    Some(json!({"description": format!("Round {round}")})),
                );
                assert_eq!(r.status, 200, "{}", r.describe());
                let r = admin.send(
                    srv,
                    "POST",
                    &format!("{NS}/events/{id}"),
                    Some(json!({field: linked})),
                );
                assert_eq!(r.status, 200, "{}", r.describe());
                if round == 0 {
                    let r = admin.send(
                        other,
                        "DELETE",
                        &format!("{NS}/{collection}/{linked}"),
                        None,
                    );
                    assert_eq!(r.status, 200, "{}", r.describe());
                }
                last = seq_of(&r);
            }
        }
    }
    let r = admin.send(
        &a,
        "POST",
        &format!("{NS}/events"),
        Some(event_body(
            "Cuarteto",
            json!({"translation_language": "es", "translation_of": event}),
        )),
    );
    assert_eq!(r.status, 201, "{}", r.describe());
    let r = admin.send(
        &b,
        "DELETE",
        &format!("{NS}/categories/{category}?force=true"),
        None,
    );
    assert_eq!(r.status, 200, "{}", r.describe());
    let r = admin.send(&a, "DELETE", &format!("{NS}/events/{event}"), None);
    assert_eq!(r.status, 200, "{}", r.describe());
    last = last.max(seq_of(&r));

    // Slugs drawn on either node never collide: the log serializes the writers.
    let slugs = get_at(&b, &format!("{NS}/events?search=same&per_page=50"), last).json();
    let mut seen: Vec<&str> = slugs["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["slug"].as_str().unwrap())
        .collect();
    assert_eq!(seen.len(), 6, "{slugs}");
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 6, "unique slugs: {seen:?}");

    await_position(&a, last);
    await_position(&b, last);
    stop(a);
    stop(b);
    let (a_export, b_export) = (export(&a_dir), export(&b_dir));
    assert!(a_export.lines().count() > 10, "{a_export}");
    assert_eq!(a_export, b_export, "both replicas hold the same calendar");
}

#[test]
fn a_node_started_on_an_empty_directory_joins_from_the_snapshot() {
    let pg = Postgres::start();
    let tmp = tempfile::tempdir().unwrap();
    let [a_dir, c_dir] = <[PathBuf; 2]>::try_from(dirs(&tmp, &["a", "c"])).unwrap();
    let a = node(&pg, &a_dir);
    let admin = Admin::of(&a);
    let last = create_events(&admin, &a, &["First light", "Second wind", "Third time"]);
    let c = node(&pg, &c_dir);
    assert_eq!(
        position(&c),
        last,
        "the snapshot is copied at the log's head"
    );
    // Each node reports where it is: /healthz, and `cluster status` for the operator.
    let health = poll(
        Duration::from_secs(5),
        Duration::from_millis(50),
        || c.get("/healthz").json(),
        |health| health["log_head"] == json!(last),
    );
    assert_eq!(health["log_head"], json!(last), "{health}");
    assert_eq!(health["lag"], json!(0), "{health}");
    let status = almanac(["cluster", "status", "--cluster", &pg.url()]).run();
    assert_eq!(status.code, Some(0), "{}", status.describe());
    let lines: Vec<&str> = status.stdout.lines().collect();
    assert_eq!(lines[0], format!("log head\t{last}"), "{}", status.stdout);
    for dir in [&a_dir, &c_dir] {
        let dir = std::fs::canonicalize(dir).unwrap();
        assert!(
            lines
                .iter()
                .any(|l| l.contains(&format!(":{}\t", dir.display()))),
            "{dir:?} in {}",
            status.stdout
        );
    }
    let list = c.get(&format!("{NS}/events?search=wind"));
    assert_eq!(list.json()["total"], json!(1), "{}", list.describe());
    // ... and then follows the log like any node.
    let r = admin.send(
        &a,
        "POST",
        &format!("{NS}/events"),
        Some(event_body("Fourth wall", json!({}))),
    );
    let r = get_at(&c, &format!("{NS}/events?search=wall"), seq_of(&r));
    assert_eq!(r.json()["total"], json!(1), "{}", r.describe());
    // Writes through the new node work with the shared credentials.
    let r = admin.send(
        &c,
        "POST",
        &format!("{NS}/tags?hide_empty=false"),
        Some(json!({"name": "joined"})),
    );
    assert_eq!(r.status, 201, "{}", r.describe());
}

#[test]
fn without_postgresql_writes_answer_503_and_change_nothing_and_reads_go_on() {
    let pg = Postgres::start();
    let tmp = tempfile::tempdir().unwrap();
    let a = node(&pg, &tmp.path().join("a"));
    let admin = Admin::of(&a);
    let r = admin.send(
        &a,
        "POST",
        &format!("{NS}/tags?hide_empty=false"),
        Some(json!({"name": "before"})),
    );
    assert_eq!(r.status, 201, "{}", r.describe());
    let before = a.get(&format!("{NS}/tags?hide_empty=false")).json();

    pg.stop();
    let r = admin.send(
        &a,
        "POST",
        &format!("{NS}/tags?hide_empty=false"),
        Some(json!({"name": "during"})),
    );
    let v = assert_error(&r, 503, "rest_cluster_unavailable");
    assert_eq!(v["data"]["retry_after"], json!(1));
    assert_eq!(r.header("retry-after"), Some("1"));
    // Reads are answered from the local replica, unchanged.
    let during = a.get(&format!("{NS}/tags?hide_empty=false"));
    assert_eq!(during.status, 200);
    assert_eq!(during.json(), before);
    // A node (re)started meanwhile serves its replica too.
    stop(a);
    let a = node(&pg, &tmp.path().join("a"));
    assert_eq!(a.get(&format!("{NS}/tags?hide_empty=false")).json(), before);
    let r = admin.send(
        &a,
        "POST",
        &format!("{NS}/tags"),
        Some(json!({"name": "during"})),
    );
    assert_error(&r, 503, "rest_cluster_unavailable");

    pg.start_again();
    // The node reconnects by itself.
    let r = poll(
        Duration::from_secs(15),
        Duration::from_millis(200),
        || {
            admin.send(
                &a,
                "POST",
                &format!("{NS}/tags?hide_empty=false"),
                Some(json!({"name": "after"})),
            )
        },
        |r| r.status != 503,
    );
    assert_eq!(r.status, 201, "{}", r.describe());
    let names: Vec<String> = a.get(&format!("{NS}/tags?hide_empty=false")).json()["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert!(names.contains(&"after".to_string()), "{names:?}");
    assert!(!names.contains(&"during".to_string()), "{names:?}");
}

#[test]
fn users_added_through_the_cluster_log_can_sign_in_on_every_running_node() {
    let pg = Postgres::start();
    let tmp = tempfile::tempdir().unwrap();
    let a = node(&pg, &tmp.path().join("a"));
    let b = node(&pg, &tmp.path().join("b"));
    let out = almanac([
        "user",
        "add",
        "rita",
        "--role",
        "editor",
        "--password",
        "rita-pass-123",
        "--cluster",
        &pg.url(),
    ])
    .run();
    assert_eq!(out.code, Some(0), "{}", out.describe());
    let listed = almanac(["user", "list", "--cluster", &pg.url()]).run();
    assert!(
        listed.stdout.contains("rita\teditor"),
        "{}",
        listed.describe()
    );
    for srv in [&a, &b] {
        let r = within_seconds(5, || {
            srv.req("POST", &format!("{NS}/tags"))
                .auth("rita", "rita-pass-123")
                .json_body(&json!({"name": format!("by rita on {}", srv.base)}))
                .send()
        });
        assert_eq!(r.status, 201, "{}", r.describe());
    }
    let out = almanac([
        "user",
        "set-password",
        "rita",
        "--password",
        "rita-new-456",
        "--cluster",
        &pg.url(),
    ])
    .run();
    assert_eq!(out.code, Some(0), "{}", out.describe());
    let r = within_seconds(5, || {
        b.req("POST", &format!("{NS}/tags"))
            .auth("rita", "rita-new-456")
            .json_body(&json!({"name": "new password"}))
            .send()
    });
    assert_eq!(r.status, 201, "{}", r.describe());
}

/// Every tag named in `names` is on `srv` exactly once (all pages of the tag list read).
fn assert_each_tag_once(srv: &Server, names: &[String]) {
    let mut held: Vec<String> = Vec::new();
    for page in 1.. {
        let list = srv
            .get(&format!(
                "{NS}/tags?hide_empty=false&per_page=100&page={page}"
            ))
            .json();
        held.extend(
            list["tags"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_string()),
        );
        if page >= list["total_pages"].as_u64().unwrap_or(1) {
            break;
        }
    }
    for name in names {
        let count = held.iter().filter(|n| *n == name).count();
        assert_eq!(count, 1, "{name} once on {}", srv.base);
    }
}

/// The first answer of `send` that is not a 401, trying for up to `seconds` (replication of
/// a user written elsewhere).
fn within_seconds(seconds: u64, send: impl Fn() -> Resp) -> Resp {
    poll(
        Duration::from_secs(seconds),
        Duration::from_millis(50),
        send,
        |r| r.status != 401,
    )
}

#[test]
fn a_node_killed_during_concurrent_writes_catches_up_with_every_acknowledged_write() {
    let pg = Postgres::start();
    let tmp = tempfile::tempdir().unwrap();
    let [a_dir, b_dir] = <[PathBuf; 2]>::try_from(dirs(&tmp, &["a", "b"])).unwrap();
    let a = node(&pg, &a_dir);
    let admin = Admin::of(&a);
    let b = node(&pg, &b_dir);
    let acknowledged = std::sync::Mutex::new(Vec::<String>::new());
    std::thread::scope(|scope| {
        for (n, srv) in [(0, &a), (1, &b)] {
            let (admin, acknowledged) = (&admin, &acknowledged);
            scope.spawn(move || {
                // Plain requests: the killed node's connections fail, and that is no
                // acknowledgement.
                let client = reqwest::blocking::Client::new();
                for i in 0..40 {
                    let name = format!("w{n}x{i}");
                    let sent = client
                        .post(format!("{}{NS}/tags", srv.base))
                        .basic_auth("admin", Some(&admin.0))
                        .header("content-type", "application/json")
                        .body(json!({"name": name}).to_string())
                        .send();
                    if sent.is_ok_and(|r| r.status().as_u16() == 201) {
                        acknowledged.lock().unwrap().push(name);
                    }
                }
            });
        }
        std::thread::sleep(Duration::from_millis(300));
        a.signal("KILL");
    });
    let acknowledged = acknowledged.into_inner().unwrap();
    assert!(
        acknowledged.len() >= 40,
        "{} acknowledged",
        acknowledged.len()
    );
    drop(a);
    let a = node(&pg, &a_dir);
    let head = position(&b).max(position(&a));
    await_position(&a, head);
    await_position(&b, head);
    for srv in [&a, &b] {
        assert_each_tag_once(srv, &acknowledged);
    }
    stop(a);
    stop(b);
    assert_eq!(export(&a_dir), export(&b_dir));
}

/// A replica makes its local commits durable about once a second (the log holds the truth): a
/// node killed right after it applied and indexed another node's writes loses them from its
/// store, and applies them again from the log when it starts, each searchable once.
#[test]
fn a_replica_killed_after_indexing_writes_it_had_not_synced_applies_them_again() {
    let pg = Postgres::start();
    let tmp = tempfile::tempdir().unwrap();
    let [a_dir, b_dir] = <[PathBuf; 2]>::try_from(dirs(&tmp, &["a", "b"])).unwrap();
    let a = node(&pg, &a_dir);
    let admin = Admin::of(&a);
    let b = node(&pg, &b_dir);
    let titles: Vec<String> = (0..30).map(|i| format!("Marimba recital {i}")).collect();
    let last = create_events(&admin, &a, &titles);
    await_position(&b, last);
    // The index commits its documents within a quarter of a second; the store has not made
    // most of these commits durable yet.
    std::thread::sleep(Duration::from_millis(600));
    b.signal("KILL");
    drop(b);
    let b = node(&pg, &b_dir);
    await_position(&b, last);
    assert!(
        b.stderr_text()
            .contains("the search index is ahead of the replica"),
        "the restarted node found nothing to apply again: {}",
        b.stderr_text()
    );
    for srv in [&a, &b] {
        let list = srv
            .get(&format!(
                "{NS}/events?start_date=2027-05-01&end_date=2027-05-02&per_page=50&search=marimba"
            ))
            .json();
        let mut found: Vec<String> = list["events"]
            .as_array()
            .unwrap_or_else(|| panic!("{list}"))
            .iter()
            .map(|e| e["title"].as_str().unwrap().to_string())
            .collect();
        found.sort();
        let mut expected = titles.clone();
        expected.sort();
        assert_eq!(found, expected, "on {}", srv.base);
        assert_eq!(list["total"], 30, "on {}", srv.base);
    }
    stop(a);
    stop(b);
    assert_eq!(export(&a_dir), export(&b_dir));
}

#[test]
fn cluster_init_moves_a_single_node_calendar_into_the_cluster() {
    let pg = Postgres::start();
    let tmp = tempfile::tempdir().unwrap();
    let [single_dir, b_dir] = <[PathBuf; 2]>::try_from(dirs(&tmp, &["single", "b"])).unwrap();
    let generated = almanac(["generate", "--events", "60", "--data-dir"])
        .arg(single_dir.to_str().unwrap())
        .run();
    assert_eq!(generated.code, Some(0), "{}", generated.describe());
    let out = almanac([
        "user",
        "add",
        "ana",
        "--role",
        "editor",
        "--password",
        "ana-pass-123",
        "--data-dir",
    ])
    .arg(single_dir.to_str().unwrap())
    .run();
    assert_eq!(out.code, Some(0), "{}", out.describe());
    let before = export(&single_dir);

    // A node refuses a data directory the cluster does not know.
    let refused = Server::launch(
        almanac([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--cluster",
            &pg.url(),
            "--data-dir",
        ])
        .arg(single_dir.to_str().unwrap()),
        None,
    );
    assert!(refused.is_err(), "a foreign calendar is refused");

    let out = almanac(["cluster", "init", "--cluster", &pg.url(), "--data-dir"])
        .arg(single_dir.to_str().unwrap())
        .run();
    assert_eq!(out.code, Some(0), "{}", out.describe());
    // Only once.
    let again = almanac(["cluster", "init", "--cluster", &pg.url(), "--data-dir"])
        .arg(single_dir.to_str().unwrap())
        .run();
    assert_eq!(again.code, Some(1), "{}", again.describe());

    let a = node(&pg, &single_dir);
    let b = node(&pg, &b_dir);
    assert!(
        b.initial_admin_password.is_none(),
        "the calendar's users came along"
    );
    let r = b
        .req("POST", &format!("{NS}/tags"))
        .auth("ana", "ana-pass-123")
        .json_body(&json!({"name": "moved in"}))
        .send();
    assert_eq!(r.status, 201, "{}", r.describe());
    let seq = seq_of(&r);
    let found = get_at(&a, &format!("{NS}/tags?hide_empty=false&search=moved"), seq);
    assert_eq!(
        found.json()["tags"].as_array().unwrap().len(),
        1,
        "{}",
        found.describe()
    );
    let r = b
        .req(
            "DELETE",
            &format!("{NS}/tags/{}?force=true", r.json()["id"]),
        )
        .auth("ana", "ana-pass-123")
        .send();
    assert_eq!(r.status, 200, "{}", r.describe());
    await_position(&a, seq_of(&r));
    stop(a);
    stop(b);
    assert_eq!(
        export(&b_dir),
        before,
        "the new node serves the single node's calendar"
    );
    assert_eq!(export(&single_dir), before);
}

#[test]
fn a_node_behind_the_pruned_log_copies_the_snapshot_again() {
    let pg = Postgres::start();
    let tmp = tempfile::tempdir().unwrap();
    let [a_dir, b_dir] = <[PathBuf; 2]>::try_from(dirs(&tmp, &["a", "b"])).unwrap();
    let a = node(&pg, &a_dir);
    let admin = Admin::of(&a);
    let b = node(&pg, &b_dir);
    let r = admin.send(
        &a,
        "POST",
        &format!("{NS}/tags"),
        Some(json!({"name": "kept"})),
    );
    let doomed = r.json()["id"].as_u64().unwrap();
    await_position(&b, seq_of(&r));
    stop(b);
    // While B is away: a delete (which B must learn of), new writes, then a prune of all but
    // the head.
    let r = admin.send(
        &a,
        "DELETE",
        &format!("{NS}/tags/{doomed}?force=true"),
        None,
    );
    assert_eq!(r.status, 200, "{}", r.describe());
    let mut last = 0;
    for name in ["one", "two", "three"] {
        let r = admin.send(
            &a,
            "POST",
            &format!("{NS}/tags"),
            Some(json!({"name": name})),
        );
        last = seq_of(&r);
    }
    let out = almanac(["cluster", "prune", "--keep", "0s", "--cluster", &pg.url()]).run();
    assert_eq!(out.code, Some(0), "{}", out.describe());
    assert!(out.stdout.starts_with("dropped "), "{}", out.stdout);
    let bad = almanac(["cluster", "prune", "--keep", "soon", "--cluster", &pg.url()]).run();
    assert_eq!(bad.code, Some(2), "{}", bad.describe());

    let b = node(&pg, &b_dir);
    await_position(&b, last);
    let names: Vec<String> = b.get(&format!("{NS}/tags?hide_empty=false")).json()["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(!names.contains(&"kept".to_string()), "{names:?}");
    // A new node joins after the prune, from the snapshot.
    let c = node(&pg, &tmp.path().join("c"));
    assert_eq!(position(&c), position(&b));
    assert_eq!(
        c.get(&format!("{NS}/tags?hide_empty=false")).json(),
        b.get(&format!("{NS}/tags?hide_empty=false")).json()
    );
    drop(c);
    // And B writes again.
    let r = admin.send(
        &b,
        "POST",
        &format!("{NS}/tags"),
        Some(json!({"name": "four"})),
    );
    assert_eq!(r.status, 201, "{}", r.describe());
    await_position(&a, seq_of(&r));
    stop(a);
    stop(b);
    assert_eq!(export(&a_dir), export(&b_dir));
}

#[test]
fn a_node_whose_replica_is_ahead_of_the_log_refuses_writes_and_says_so() {
    let (pg, lost) = (Postgres::start(), Postgres::start());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("a");
    let a = node(&pg, &dir);
    let admin = Admin::of(&a);
    let r = admin.send(
        &a,
        "POST",
        &format!("{NS}/tags"),
        Some(json!({"name": "written"})),
    );
    assert_eq!(r.status, 201, "{}", r.describe());
    stop(a);
    // The same node on a log that never saw its writes (a database restored from an older
    // backup, say).
    let a = node(&lost, &dir);
    let health = poll(
        Duration::from_secs(5),
        Duration::from_millis(50),
        || a.get("/healthz").json(),
        |health| health["status"] == "diverged",
    );
    assert_eq!(health["status"], "diverged", "{health}");
    let r = admin.send(
        &a,
        "POST",
        &format!("{NS}/tags"),
        Some(json!({"name": "forked"})),
    );
    assert_error(&r, 503, "rest_cluster_unavailable");
    // Reads go on from the replica.
    let tags = a.get(&format!("{NS}/tags?hide_empty=false")).json();
    assert_eq!(tags["tags"][0]["name"], "written", "{tags}");
}

#[test]
fn import_and_export_work_on_the_cluster_while_nodes_run() {
    let pg = Postgres::start();
    let tmp = tempfile::tempdir().unwrap();
    let single_dir = tmp.path().join("single");
    let generated = almanac(["generate", "--events", "40", "--data-dir"])
        .arg(single_dir.to_str().unwrap())
        .run();
    assert_eq!(generated.code, Some(0), "{}", generated.describe());
    let dump = export(&single_dir);
    let dump_file = tmp.path().join("dump.jsonl");
    std::fs::write(&dump_file, &dump).unwrap();

    let a = node(&pg, &tmp.path().join("a"));
    let b = node(&pg, &tmp.path().join("b"));
    let out = almanac(["import", "--cluster", &pg.url()])
        .arg(dump_file.to_str().unwrap())
        .run();
    assert_eq!(out.code, Some(0), "{}", out.describe());
    // Both nodes follow the import and search it.
    let head = almanac(["cluster", "status", "--cluster", &pg.url()]).run();
    let head: u64 = head.stdout.lines().next().unwrap()["log head\t".len()..]
        .parse()
        .unwrap();
    let mut totals = Vec::new();
    for srv in [&a, &b] {
        await_position(srv, head);
        let all = srv.get(&format!(
            "{NS}/events?start_date=2020-01-01&end_date=2040-01-01&per_page=1"
        ));
        totals.push(all.json()["total"].as_u64().unwrap());
    }
    assert!(totals[0] > 10 && totals[0] == totals[1], "{totals:?}");
    // The cluster's export is the dump (users aside, which exports leave out).
    let file = tmp.path().join("cluster.jsonl");
    let out = almanac([
        "export",
        "--public-url",
        PUBLIC,
        "--cluster",
        &pg.url(),
        "--output",
    ])
    .arg(file.to_str().unwrap())
    .run();
    assert_eq!(out.code, Some(0), "{}", out.describe());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), dump);
}

#[test]
fn concurrent_writers_on_both_nodes_are_all_acknowledged_and_serialized() {
    let pg = Postgres::start();
    let tmp = tempfile::tempdir().unwrap();
    let [a_dir, b_dir] = <[PathBuf; 2]>::try_from(dirs(&tmp, &["a", "b"])).unwrap();
    let a = node(&pg, &a_dir);
    let admin = Admin::of(&a);
    let b = node(&pg, &b_dir);
    let seqs = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for writer in 0..4 {
            let (srv, admin, seqs) = (if writer % 2 == 0 { &a } else { &b }, &admin, &seqs);
            scope.spawn(move || {
                for i in 0..25 {
                    let r = admin.send(
                        srv,
                        "POST",
                        &format!("{NS}/tags"),
                        Some(json!({"name": format!("writer {writer} tag {i}")})),
                    );
                    assert_eq!(r.status, 201, "{}", r.describe());
                    seqs.lock().unwrap().push(seq_of(&r));
                }
            });
        }
    });
    let mut seqs = seqs.into_inner().unwrap();
    seqs.sort();
    let before = seqs.len();
    seqs.dedup();
    assert_eq!(seqs.len(), before, "every write has a position of its own");
    let last = *seqs.last().unwrap();
    for srv in [&a, &b] {
        await_position(srv, last);
        assert_eq!(srv.get("/healthz").json()["status"], "ok");
    }
    stop(a);
    stop(b);
    assert_eq!(export(&a_dir), export(&b_dir));
}

#[test]
fn a_mirror_of_another_calendar_runs_into_the_cluster_while_its_nodes_serve() {
    let pg = Postgres::start();
    let tmp = tempfile::tempdir().unwrap();
    let source = Server::start_with_users(&[ADMIN]);
    let root = format!("{}{NS}", source.base);
    let mut ids = Vec::new();
    for title in ["Harbour Concert", "Dune Walk", "Film Night"] {
        let created = source.create(
            &ADMIN,
            &format!("{NS}/events"),
            &event_body(title, json!({})),
        );
        ids.push(created["id"].as_u64().unwrap());
    }
    let a = node(&pg, &tmp.path().join("a"));
    let mirror = || {
        almanac([
            "import",
            "--from",
            &root,
            "--mirror",
            "--retries",
            "0",
            "--cluster",
            &pg.url(),
        ])
        .run()
    };
    let head = |out: &Output| {
        assert_eq!(out.code, Some(0), "{}", out.describe());
        let status = almanac(["cluster", "status", "--cluster", &pg.url()]).run();
        status.stdout.lines().next().unwrap()["log head\t".len()..]
            .parse::<u64>()
            .unwrap()
    };
    let first = mirror();
    assert_eq!(
        first.stdout.trim(),
        "added 3, updated 0, unchanged 0, trashed 0, refused 0",
        "{}",
        first.describe()
    );
    await_position(&a, head(&first));
    let listed = a.get(&format!("{NS}/events?search=harbour")).json();
    assert_eq!(listed["total"], 1, "{listed}");

    // Trashed at the source: no longer listed there, 410 by ID, so trashed on the nodes.
    let r = source
        .req("DELETE", &format!("{NS}/events/{}", ids[0]))
        .user(&ADMIN)
        .send();
    assert_eq!(r.status, 200, "{}", r.describe());
    let second = mirror();
    assert_eq!(
        second.stdout.trim(),
        "added 0, updated 0, unchanged 2, trashed 1, refused 0",
        "{}",
        second.describe()
    );
    await_position(&a, head(&second));
    let listed = a.get(&format!("{NS}/events?search=harbour")).json();
    assert_eq!(listed["total"], 0, "{listed}");
    let gone = a.get(&format!("{NS}/events/{}", ids[0]));
    assert_eq!(
        gone.json()["code"],
        "event-no-longer-available",
        "{}",
        gone.describe()
    );
    stop(a);
}

#[test]
fn nodes_follow_a_promoted_standby_and_keep_every_acknowledged_write() {
    // A primary and a synchronous streaming standby: a commit is acknowledged once the standby
    // has it.
    let primary = Postgres::start();
    let standby = Postgres::standby_of(&primary);
    let mut sql = ::postgres::Client::connect(&primary.url(), ::postgres::NoTls).unwrap();
    for statement in [
        "ALTER SYSTEM SET synchronous_standby_names = '*'",
        "SELECT pg_reload_conf()",
    ] {
        sql.batch_execute(statement).unwrap();
    }
    let synchronous = poll(
        Duration::from_secs(20),
        Duration::from_millis(50),
        || {
            sql.query(
                "SELECT 1 FROM pg_stat_replication WHERE sync_state = 'sync'",
                &[],
            )
            .map(|rows| rows.len())
            .unwrap_or(0)
        },
        |n| *n == 1,
    );
    assert_eq!(synchronous, 1, "the standby never became synchronous");
    drop(sql);
    // Both servers in one connection string: nodes take the one that accepts writes.
    let conninfo = format!(
        "host={},{} port={},{} user=postgres dbname=postgres target_session_attrs=read-write connect_timeout=5",
        primary.socket_dir(),
        standby.socket_dir(),
        primary.port(),
        standby.port()
    );
    let tmp = tempfile::tempdir().unwrap();
    let start = |dir: &Path| {
        Server::start(
            serve_cmd(dir).args(["--public-url", PUBLIC, "--cluster", &conninfo]),
            Some(PUBLIC),
            "node",
        )
    };
    let [a_dir, b_dir] = <[PathBuf; 2]>::try_from(dirs(&tmp, &["a", "b"])).unwrap();
    let a = start(&a_dir);
    let admin = Admin::of(&a);
    let b = start(&b_dir);
    let acknowledged = std::sync::Mutex::new(Vec::<String>::new());
    let promoted = std::sync::atomic::AtomicBool::new(false);
    let after_promotion = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for (n, srv) in [(0, &a), (1, &b)] {
            let (admin, acknowledged) = (&admin, &acknowledged);
            let (promoted, after_promotion) = (&promoted, &after_promotion);
            scope.spawn(move || {
                let deadline = Instant::now() + Duration::from_secs(90);
                for i in 0.. {
                    let name = format!("w{n}x{i}");
                    let r = admin.send(
                        srv,
                        "POST",
                        &format!("{NS}/tags"),
                        Some(json!({"name": name})),
                    );
                    match r.status {
                        201 => {
                            acknowledged.lock().unwrap().push(name);
                            if promoted.load(std::sync::atomic::Ordering::SeqCst)
                                && after_promotion.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
                                    >= 40
                            {
                                return;
                            }
                        }
                        // While no server accepts writes.
                        503 => std::thread::sleep(Duration::from_millis(50)),
                        _ => panic!("{}", r.describe()),
                    }
                    assert!(Instant::now() < deadline, "writes never resumed");
                }
            });
        }
        std::thread::sleep(Duration::from_millis(500));
        primary.crash();
        std::thread::sleep(Duration::from_millis(500));
        standby.promote();
        promoted.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let acknowledged = acknowledged.into_inner().unwrap();
    let head = position(&a).max(position(&b));
    await_position(&a, head);
    await_position(&b, head);
    for srv in [&a, &b] {
        assert_each_tag_once(srv, &acknowledged);
    }
    stop(a);
    stop(b);
    assert_eq!(export(&a_dir), export(&b_dir));
}

#[test]
fn writes_arriving_together_share_a_postgresql_transaction_and_keep_every_rule() {
    let pg = Postgres::start();
    let tmp = tempfile::tempdir().unwrap();
    let [a_dir, b_dir] = <[PathBuf; 2]>::try_from(dirs(&tmp, &["a", "b"])).unwrap();
    let a = node(&pg, &a_dir);
    let admin = Admin::of(&a);
    let b = node(&pg, &b_dir);
    // Eight writers on one node and two on the other: the same title (slugs must differ),
    // refused writes among them (they change nothing and hold nobody up).
    let acknowledged = std::sync::Mutex::new(Vec::<(u64, u64, String)>::new());
    std::thread::scope(|scope| {
        for writer in 0..10 {
            let (srv, admin, acknowledged) =
                (if writer < 8 { &a } else { &b }, &admin, &acknowledged);
            scope.spawn(move || {
                for i in 0..12 {
                    if i % 4 == 3 {
                        // Refused before changing anything, or after drawing an ID and a
                        // slug (a date that the zone carries past year 9999).
                        let body = if i % 8 == 3 {
                            json!({"title": "No dates"})
                        } else {
                            json!({"title": "Phantom", "timezone": "UTC-1",
                                   "start_date": "9999-12-31 23:00:00",
                                   "end_date": "9999-12-31 23:30:00"})
                        };
                        let refused = admin.send(srv, "POST", &format!("{NS}/events"), Some(body));
                        assert_eq!(refused.status, 400, "{}", refused.describe());
                        continue;
                    }
                    let r = admin.send(
                        srv,
                        "POST",
                        &format!("{NS}/events"),
                        Some(event_body("Shared title", json!({}))),
                    );
                    assert_eq!(r.status, 201, "{}", r.describe());
                    let v = r.json();
                    acknowledged.lock().unwrap().push((
                        seq_of(&r),
                        v["id"].as_u64().unwrap(),
                        v["slug"].as_str().unwrap().to_string(),
                    ));
                }
            });
        }
    });
    let acknowledged = acknowledged.into_inner().unwrap();
    assert_eq!(acknowledged.len(), 90);
    let distinct = |f: fn(&(u64, u64, String)) -> String| {
        acknowledged
            .iter()
            .map(f)
            .collect::<std::collections::HashSet<_>>()
            .len()
    };
    assert_eq!(distinct(|w| w.0.to_string()), 90, "a log position each");
    assert_eq!(distinct(|w| w.1.to_string()), 90, "an ID each");
    assert_eq!(distinct(|w| w.2.clone()), 90, "a slug each");
    let last = acknowledged.iter().map(|w| w.0).max().unwrap();
    for srv in [&a, &b] {
        await_position(srv, last);
        let list = srv.get(&format!("{NS}/events?search=shared&per_page=1"));
        assert_eq!(list.json()["total"], 90, "{}", srv.base);
        let phantom = admin.send(srv, "GET", &format!("{NS}/events/by-slug/phantom"), None);
        assert!(
            phantom.text().contains("does not name an event"),
            "{}",
            phantom.describe()
        );
    }
    // Writes that arrived while another batch was in PostgreSQL shared its successor.
    let metrics = admin.send(&a, "GET", "/metrics", None).text();
    let counter = |name: &str| -> u64 {
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("{name} in {metrics}"))
    };
    let (commits, writes) = (
        counter("almanac_cluster_log_commits_total"),
        counter("almanac_cluster_log_writes_total"),
    );
    assert!(
        writes >= 72 && commits < writes,
        "{writes} writes in {commits} commits"
    );
    stop(a);
    stop(b);
    assert_eq!(export(&a_dir), export(&b_dir));
}

#[test]
fn a_series_written_on_one_node_lists_the_same_occurrences_on_the_other() {
    let pg = Postgres::start();
    let tmp = tempfile::tempdir().unwrap();
    let [a_dir, b_dir] = <[PathBuf; 2]>::try_from(dirs(&tmp, &["a", "b"])).unwrap();
    let a = node(&pg, &a_dir);
    let admin = Admin::of(&a);
    let b = node(&pg, &b_dir);
    let word = tok();
    let list = format!("{NS}/events?search={word}&start_date=2027-01-01");
    let ids_at = |srv: &Server, seq: u64| -> Vec<(i64, String)> {
        let r = get_at(srv, &list, seq);
        assert_eq!(r.status, 200, "{}", r.describe());
        r.json()["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["id"].as_i64().unwrap(),
                    e["title"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let r = admin.send(
        &a,
        "POST",
        &format!("{NS}/events"),
        Some(event_body(
            &format!("Class {word}"),
            json!({"recurrence": ["RRULE:FREQ=WEEKLY;COUNT=4"]}),
        )),
    );
    assert_eq!(r.status, 201, "{}", r.describe());
    let series = r.json()["id"].as_i64().unwrap();
    let on_b = ids_at(&b, seq_of(&r));
    assert_eq!(on_b.len(), 4, "{on_b:?}");
    assert_eq!(on_b, ids_at(&a, seq_of(&r)));
    // An exception written on B, a cancellation and a series edit on A: both nodes agree.
    let r = admin.send(
        &b,
        "PATCH",
        &format!("{NS}/events/{}", on_b[1].0),
        Some(json!({"title": format!("Special class {word}")})),
    );
    assert_eq!(r.status, 200, "{}", r.describe());
    let r = admin.send(&a, "DELETE", &format!("{NS}/events/{}", on_b[2].0), None);
    assert_eq!(r.status, 200, "{}", r.describe());
    let r = admin.send(
        &a,
        "PATCH",
        &format!("{NS}/events/{series}"),
        Some(json!({"title": format!("Weekly class {word}")})),
    );
    assert_eq!(r.status, 200, "{}", r.describe());
    let seq = seq_of(&r);
    let after = ids_at(&b, seq);
    assert_eq!(after, ids_at(&a, seq));
    let ids: Vec<i64> = after.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, [on_b[0].0, on_b[1].0, on_b[3].0]);
    assert!(after[0].1.starts_with("Weekly class"), "{after:?}");
    assert!(after[1].1.starts_with("Special class"), "{after:?}");
    stop(a);
    stop(b);
}

#[test]
fn an_editor_signed_in_on_one_node_works_on_the_other() {
    let pg = Postgres::start();
    let tmp = tempfile::tempdir().unwrap();
    let [a_dir, b_dir] = <[PathBuf; 2]>::try_from(dirs(&tmp, &["a", "b"])).unwrap();
    let a = node(&pg, &a_dir);
    let admin = Admin::of(&a);
    let b = node(&pg, &b_dir);
    let word = tok();
    let r = admin.send(
        &a,
        "POST",
        &format!("{NS}/events"),
        Some(event_body(&format!("Managed {word}"), json!({}))),
    );
    assert_eq!(r.status, 201, "{}", r.describe());
    let id = r.json()["id"].as_u64().unwrap();
    // The cookies a browser holds, by name.
    let mut jar: Vec<(String, String)> = Vec::new();
    let keep = |r: &Resp, jar: &mut Vec<(String, String)>| {
        for line in r.header_all("set-cookie") {
            let pair = line.split(';').next().unwrap();
            let (name, value) = pair.split_once('=').unwrap();
            jar.retain(|(n, _)| n != name);
            jar.push((name.to_string(), value.to_string()));
        }
    };
    let header = |jar: &[(String, String)]| {
        jar.iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let page = a.get("/manage/");
    keep(&page, &mut jar);
    let token = jar
        .iter()
        .find(|(n, _)| n == "almanac_sign_in")
        .unwrap()
        .1
        .clone();
    let r = a
        .req("POST", "/manage/sign-in")
        .header("Cookie", &header(&jar))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(format!(
            "form_token={token}&name=admin&password={}",
            admin.0
        ))
        .send();
    assert_eq!(r.status, 303, "{}", r.describe());
    keep(&r, &mut jar);
    // At once on the other node: it waits for the session's write.
    let dashboard = b
        .req("GET", &format!("/manage/?s={word}"))
        .header("Cookie", &header(&jar))
        .send();
    let html = dashboard.text();
    assert!(html.contains(&format!("value=\"{id}\"")), "{html}");
    let marker = "name=\"form_token\" value=\"";
    let start = html.find(marker).unwrap() + marker.len();
    let form_token = &html[start..start + html[start..].find('"').unwrap()];
    let r = b
        .req("POST", "/manage/events")
        .header("Cookie", &header(&jar))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(format!("form_token={form_token}&action=trash&id={id}"))
        .send();
    assert_eq!(r.status, 303, "{}", r.describe());
    keep(&r, &mut jar);
    let trashed = a
        .req("GET", &format!("/manage/?status=trash&s={word}"))
        .header("Cookie", &header(&jar))
        .send()
        .text();
    assert!(trashed.contains(&format!("value=\"{id}\"")), "{trashed}");
    stop(b);
    stop(a);
}
