//! Webhooks (docs/api.md, "Webhooks"), over real HTTP against the binary, to a receiver run
//! by the test: deliveries signed and in order after failed attempts, nothing lost when the
//! sender is killed, a failing endpoint suspended, shown and resumed, and one delivery per
//! change from a cluster whose delivering node dies.

mod common;

use common::postgres::Postgres;
use common::*;
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const SECRET: &str = "a-signing-key-of-some-length";

/// One request the receiver got, and what it answered.
#[derive(Debug, Clone)]
struct Received {
    headers: BTreeMap<String, String>,
    body: Vec<u8>,
    accepted: bool,
}

/// How the receiver answers.
#[derive(Debug, Clone, Copy)]
struct Policy {
    /// Requests answered 500 before the first 200.
    failures: usize,
    /// Every request answered 500.
    always_fail: bool,
    /// Wait before answering.
    delay: Duration,
}

/// An HTTP endpoint on loopback that records every request.
struct Receiver {
    url: String,
    got: Arc<Mutex<Vec<Received>>>,
    policy: Arc<Mutex<Policy>>,
}

impl Receiver {
    fn start(policy: Policy) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let got = Arc::new(Mutex::new(Vec::new()));
        let policy = Arc::new(Mutex::new(policy));
        let (g, p) = (got.clone(), policy.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (g, p) = (g.clone(), p.clone());
                std::thread::spawn(move || answer(stream, &g, &p));
            }
        });
        Receiver { url, got, policy }
    }

    fn set(&self, policy: Policy) {
        *self.policy.lock().unwrap() = policy;
    }

    fn received(&self) -> Vec<Received> {
        self.got.lock().unwrap().clone()
    }

    /// The accepted deliveries' bodies, each delivery once, in the order first accepted.
    fn accepted(&self) -> Vec<Value> {
        let mut seen = std::collections::HashSet::new();
        self.received()
            .into_iter()
            .filter(|r| r.accepted)
            .map(|r| serde_json::from_slice::<Value>(&r.body).unwrap())
            .filter(|b| seen.insert(b["id"].as_str().unwrap().to_string()))
            .collect()
    }

    /// Waits until a delivery of `token` was accepted.
    fn await_token(&self, token: &str) {
        let done = poll(
            Duration::from_secs(60),
            Duration::from_millis(50),
            || self.accepted().iter().any(|b| b["token"] == token),
            |done| *done,
        );
        assert!(done, "no delivery of {token}: {:?}", self.accepted());
    }
}

fn answer(stream: std::net::TcpStream, got: &Mutex<Vec<Received>>, policy: &Mutex<Policy>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut headers = BTreeMap::new();
    let mut line = String::new();
    // A request cut short (its sender killed mid-request) is neither answered nor recorded.
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut complete = false;
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        if line == "\r\n" {
            complete = true;
            break;
        }
        if let Some((name, value)) = line.trim_end().split_once(':') {
            headers.insert(name.to_ascii_lowercase(), value.trim().to_string());
        }
    }
    let Some(length) = headers
        .get("content-length")
        .and_then(|l| l.parse::<usize>().ok())
        .filter(|_| complete)
    else {
        return;
    };
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let policy = *policy.lock().unwrap();
    std::thread::sleep(policy.delay);
    let accepted = {
        let mut got = got.lock().unwrap();
        let failed_so_far = got.iter().filter(|r| !r.accepted).count();
        let accepted = !policy.always_fail && failed_so_far >= policy.failures;
        got.push(Received {
            headers,
            body,
            accepted,
        });
        accepted
    };
    let status = if accepted {
        "200 OK"
    } else {
        "500 Internal Server Error"
    };
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
}

/// Whether `received` carries a valid signature of its body with [`SECRET`].
fn signed(received: &Received) -> bool {
    let header = &received.headers["x-almanac-signature"];
    let (t, v1) = header.split_once(',').unwrap();
    let t = t.strip_prefix("t=").unwrap();
    let v1 = v1.strip_prefix("v1=").unwrap();
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(SECRET.as_bytes()).unwrap();
    mac.update(format!("{t}.").as_bytes());
    mac.update(&received.body);
    hex::encode(mac.finalize().into_bytes()) == v1
}

fn register(srv: &Server, url: &str, kinds: Option<&str>) -> Value {
    let mut body = json!({"url": url, "secret": SECRET});
    if let Some(kinds) = kinds {
        body["kinds"] = json!(kinds);
    }
    srv.create(&ADMIN, &format!("{NS}/webhooks"), &body)
}

/// The change feed's newest token.
fn head(srv: &Server) -> String {
    srv.get_ok(&format!("{NS}/changes?since=latest"), None)["next_token"]
        .as_str()
        .unwrap()
        .to_string()
}

fn token_number(token: &Value) -> u64 {
    token.as_str().unwrap()[1..].parse().unwrap()
}

/// A few writes of several kinds (some records stay drafts).
fn writes(srv: &Server, rng: &mut Rng, n: usize) {
    let mut tags = Vec::new();
    for i in 0..n {
        let word = unique_word(rng);
        match i % 4 {
            0 => {
                let t = srv.create(&ADMIN, &format!("{NS}/tags"), &json!({"name": word}));
                tags.push(t["id"].as_u64().unwrap());
            }
            1 => {
                let status = if rng.below(2) == 0 {
                    "draft"
                } else {
                    "publish"
                };
                srv.create(
                    &ADMIN,
                    &format!("{NS}/events"),
                    &json!({"title": word, "start_date": "2027-09-01 10:00:00",
                            "end_date": "2027-09-01 11:00:00", "status": status}),
                );
            }
            2 => {
                srv.create(&ADMIN, &format!("{NS}/venues"), &json!({"venue": word}));
            }
            _ => {
                if let Some(tag) = tags.pop() {
                    let path = format!("{NS}/tags/{tag}?force=true");
                    srv.write("DELETE", &path, &ADMIN, &json!({}), 200);
                }
            }
        }
    }
}

#[test]
fn deliveries_arrive_signed_in_order_once_each_after_failed_attempts() {
    let receiver = Receiver::start(Policy {
        failures: 3,
        always_fail: false,
        delay: Duration::ZERO,
    });
    let srv = Server::start_with_users(&STANDARD_USERS);
    let hook = register(&srv, &receiver.url, None);
    assert_eq!(hook["secret"], SECRET);
    assert_eq!(hook["state"], "active");
    // The first change stays the newest of its record: its delivery, refused three times, is
    // the one tried again.
    srv.create(
        &ADMIN,
        &format!("{NS}/events"),
        &json!({"title": "Anchor", "start_date": "2027-09-01 10:00:00",
                "end_date": "2027-09-01 11:00:00", "status": "publish"}),
    );
    let mut rng = Rng::from_entropy();
    writes(&srv, &mut rng, 24);
    let last = head(&srv);
    receiver.await_token(&last);
    let received = receiver.received();
    assert_eq!(received.iter().filter(|r| !r.accepted).count(), 3);
    assert!(received.iter().all(signed), "every delivery is signed");
    // The failed delivery was tried again under the same ID.
    let first_failed: Value = serde_json::from_slice(&received[0].body).unwrap();
    let accepted = receiver.accepted();
    assert_eq!(accepted[0]["id"], first_failed["id"]);
    // In write order, each change once, as the public sees it.
    let tokens: Vec<u64> = accepted.iter().map(|b| token_number(&b["token"])).collect();
    assert!(tokens.windows(2).all(|w| w[0] < w[1]), "{tokens:?}");
    let feed = srv.get_ok(&format!("{NS}/changes?per_page=500"), None);
    let expected: Vec<Value> = feed["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| json!([c["token"], c["kind"], c["id"], c["action"]]))
        .collect();
    let got: Vec<Value> = accepted
        .iter()
        .map(|b| json!([b["token"], b["kind"], b["record_id"], b["action"]]))
        .collect();
    assert_eq!(got, expected);
    for body in &accepted {
        assert_eq!(
            body.get("rest_url").is_some(),
            matches!(body["action"].as_str(), Some("created" | "updated")),
            "{body}"
        );
    }
    let listed = srv.get_ok(&format!("{NS}/webhooks"), Some(&ADMIN));
    assert_eq!(listed["webhooks"][0]["delivered_token"], json!(last));
    assert!(listed["webhooks"][0].get("secret").is_none());
}

#[test]
fn registrations_are_checked_and_for_administrators_only() {
    let srv = Server::start_with_users(&STANDARD_USERS);
    for (body, param) in [
        (json!({"url": "ftp://example.org/x"}), "url"),
        (json!({"url": "/relative"}), "url"),
        (json!({"url": "https://user:pw@example.org/"}), "url"),
        (
            json!({"url": "https://example.org/", "kinds": "events,sessions"}),
            "kinds",
        ),
        (
            json!({"url": "https://example.org/", "secret": "short"}),
            "secret",
        ),
    ] {
        let r = srv.send("POST", &format!("{NS}/webhooks"), Some(&ADMIN), Some(&body));
        assert_eq!(r.status, 400, "{body}: {}", r.describe());
        assert!(
            r.json()["data"]["params"].get(param).is_some(),
            "{}",
            r.describe()
        );
    }
    let body = json!({"url": "https://example.org/hook"});
    let r = srv.send(
        "POST",
        &format!("{NS}/webhooks"),
        Some(&EDITOR),
        Some(&body),
    );
    assert_eq!(r.status, 403, "{}", r.describe());
    assert_eq!(srv.get(&format!("{NS}/webhooks")).status, 401);
    assert_eq!(
        srv.get_ok(&format!("{NS}/webhooks"), Some(&ADMIN)),
        json!({"webhooks": []})
    );
    let made = srv.create(&ADMIN, &format!("{NS}/webhooks"), &body);
    assert_eq!(
        made["secret"].as_str().unwrap().len(),
        64,
        "a key is made up"
    );
    let path = format!("{NS}/webhooks/{}", made["id"]);
    srv.write("DELETE", &path, &ADMIN, &json!({}), 200);
    assert_eq!(srv.send("GET", &path, Some(&ADMIN), None).status, 400);
}

#[test]
fn a_killed_sender_loses_no_change() {
    let receiver = Receiver::start(Policy {
        failures: 0,
        always_fail: false,
        delay: Duration::from_millis(300),
    });
    let (_tmp, dir) = fresh_data_dir(&[ADMIN]);
    let srv = Server::start(serve_cmd(&dir), None, "serve");
    register(&srv, &receiver.url, Some("tags"));
    for i in 0..12 {
        srv.create(
            &ADMIN,
            &format!("{NS}/tags"),
            &json!({"name": format!("Tag {i}")}),
        );
    }
    let last = head(&srv);
    poll(
        Duration::from_secs(20),
        Duration::from_millis(20),
        || receiver.received().len(),
        |n| *n >= 3,
    );
    // Killed while a delivery waits for its answer.
    srv.signal("KILL");
    drop(srv);
    let srv = Server::start(serve_cmd(&dir), None, "serve");
    receiver.await_token(&last);
    let names: Vec<u64> = receiver
        .accepted()
        .iter()
        .map(|b| b["record_id"].as_u64().unwrap())
        .collect();
    assert_eq!(
        names,
        (1..=12).collect::<Vec<_>>(),
        "each tag once, in order"
    );
    drop(srv);
}

#[test]
fn a_failing_endpoint_is_suspended_shown_and_resumed() {
    let receiver = Receiver::start(Policy {
        failures: 0,
        always_fail: true,
        delay: Duration::ZERO,
    });
    let (_tmp, dir) = fresh_data_dir(&[ADMIN]);
    let cmd = || serve_cmd(&dir).args(["--webhook-retry-period", "2s"]);
    let mut srv = Server::start(cmd(), None, "serve");
    let hook = register(&srv, &receiver.url, None);
    srv.create(&ADMIN, &format!("{NS}/tags"), &json!({"name": "Waiting"}));
    let path = format!("{NS}/webhooks/{}", hook["id"]);
    let failing = poll(
        Duration::from_secs(30),
        Duration::from_millis(100),
        || srv.get_ok(&path, Some(&ADMIN)),
        |h| h["state"] == "failing",
    );
    assert_eq!(failing["state"], "failing", "{failing}");
    assert!(failing["attempts"].as_u64().unwrap() >= 2, "{failing}");
    assert_eq!(failing["last_error"], "answered 500 Internal Server Error");
    // The gauge follows at the end of the delivery round that suspended the endpoint.
    let metrics = poll(
        Duration::from_secs(10),
        Duration::from_millis(50),
        || srv.get_as("/metrics", &ADMIN).text(),
        |m| m.contains("almanac_webhooks{state=\"failing\"} 1"),
    );
    assert!(
        metrics.contains("almanac_webhooks{state=\"failing\"} 1"),
        "{metrics}"
    );
    // Suspended: no more attempts.
    let tried = receiver.received().len();
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(receiver.received().len(), tried);
    srv.stop(Duration::from_secs(20));
    let listed = almanac(["webhook", "list", "--data-dir"])
        .arg(dir.to_str().unwrap())
        .run();
    assert_eq!(listed.code, Some(0), "{}", listed.describe());
    assert!(
        listed
            .stdout
            .starts_with(&format!("{}\tfailing\tc0\t{}", hook["id"], receiver.url)),
        "{}",
        listed.describe()
    );
    let srv = Server::start(cmd(), None, "serve");
    receiver.set(Policy {
        failures: 0,
        always_fail: false,
        delay: Duration::ZERO,
    });
    let resumed = srv.write("POST", &path, &ADMIN, &json!({"resume": true}), 200);
    assert_eq!(resumed["state"], "active");
    receiver.await_token(&head(&srv));
    assert_eq!(receiver.accepted()[0]["action"], "created");
}

fn cli_webhook(args: &[&str], cluster: &str) -> Output {
    let out = almanac(["webhook"])
        .args(args)
        .args(["--cluster", cluster])
        .run();
    assert_eq!(out.code, Some(0), "{}", out.describe());
    out
}

#[test]
fn a_cluster_delivers_each_change_once_and_another_node_takes_over() {
    let pg = Postgres::start();
    let receiver = Receiver::start(Policy {
        failures: 0,
        always_fail: false,
        delay: Duration::ZERO,
    });
    let tmp = tempfile::tempdir().unwrap();
    let node =
        |dir: &Path| Server::start(serve_cmd(dir).args(["--cluster", &pg.url()]), None, "node");
    let a = node(&tmp.path().join("a"));
    let password = a.initial_admin_password.clone().unwrap();
    // The first node takes the delivery lock within its first rounds; the second waits.
    std::thread::sleep(Duration::from_secs(1));
    let b = node(&tmp.path().join("b"));
    std::fs::write(tmp.path().join("secret"), SECRET).unwrap();
    let added = cli_webhook(
        &[
            "add",
            &receiver.url,
            "--kinds",
            "tags",
            "--secret-file",
            tmp.path().join("secret").to_str().unwrap(),
        ],
        &pg.url(),
    );
    assert!(
        added.stdout.starts_with("added webhook 1 for"),
        "{}",
        added.describe()
    );
    let tag = |srv: &Server, name: String| {
        let r = srv
            .req("POST", &format!("{NS}/tags"))
            .auth("admin", &password)
            .json_body(&json!({ "name": name }))
            .send();
        assert_eq!(r.status, 201, "{}", r.describe());
        r.header("x-cal-seq").unwrap().parse::<u64>().unwrap()
    };
    for i in 0..10 {
        let srv = if i % 2 == 0 { &a } else { &b };
        tag(srv, format!("Tag {i}"));
    }
    let last = srv_head(&a, &b);
    receiver.await_token(&last);
    // The node that delivers dies; the other one goes on.
    let deliverer_alive = |srv: &Server| srv.get("/healthz").status == 200;
    assert!(deliverer_alive(&a) && deliverer_alive(&b));
    a.signal("KILL");
    drop(a);
    for i in 10..16 {
        tag(&b, format!("Tag {i}"));
    }
    receiver.await_token(&head(&b));
    let accepted = receiver.accepted();
    let ids: Vec<u64> = accepted
        .iter()
        .map(|b| b["record_id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, (1..=16).collect::<Vec<_>>(), "each tag once, in order");
    let all = receiver.received();
    assert!(all.iter().all(signed));
    let listed = cli_webhook(&["list"], &pg.url());
    assert!(
        listed.stdout.contains("\tactive\t"),
        "{}",
        listed.describe()
    );
    drop(b);
}

/// The newest token once both nodes have every write.
fn srv_head(a: &Server, b: &Server) -> String {
    let position = |srv: &Server| srv.get("/healthz").json()["position"].as_u64().unwrap();
    let target = position(a).max(position(b));
    let page = a
        .req("GET", &format!("{NS}/changes?since=latest"))
        .header("X-Cal-Min-Seq", &target.to_string())
        .send()
        .json();
    page["next_token"].as_str().unwrap().to_string()
}
