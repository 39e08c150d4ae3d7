//! Positions: every successful write answers with `X-Cal-Seq`, the position of a write every
//! later read sees; a read carrying `X-Cal-Min-Seq` waits until the server has reached it, at
//! most 5 seconds, then answers 503 (docs/api.md, "Read-your-writes").

mod common;

use common::*;
use serde_json::json;
use std::time::{Duration, Instant};

fn seq_of(r: &Resp) -> u64 {
    r.header("x-cal-seq")
        .unwrap_or_else(|| panic!("X-Cal-Seq on a write: {}", r.describe()))
        .parse()
        .unwrap_or_else(|_| panic!("X-Cal-Seq is an integer: {}", r.describe()))
}

#[test]
fn writes_carry_their_position_and_reads_wait_for_the_one_they_ask() {
    let s = Server::start_with_users(&[ADMIN]);
    let health = s.get("/healthz").json();
    let start = health["position"].as_u64().expect("position in /healthz");

    let created = s
        .req("POST", &format!("{NS}/categories"))
        .user(&ADMIN)
        .json_body(&json!({"name": "Positions"}))
        .send();
    assert_eq!(created.status, 201, "{}", created.describe());
    let first = seq_of(&created);
    assert!(first > start, "{first} after {start}");
    let id = created.json()["id"].as_u64().unwrap();

    let updated = s
        .req("POST", &format!("{NS}/categories/{id}"))
        .user(&ADMIN)
        .json_body(&json!({"name": "Positions two"}))
        .send();
    assert_eq!(updated.status, 200, "{}", updated.describe());
    let second = seq_of(&updated);
    assert!(second > first, "{second} after {first}");
    assert_eq!(s.get("/healthz").json()["position"], json!(second));

    // Reads do not carry a position; failed writes neither.
    assert!(!s.get(&format!("{NS}/categories")).has("x-cal-seq"));
    let refused = s
        .req("POST", &format!("{NS}/categories"))
        .json_body(&json!({"name": "Anonymous"}))
        .send();
    assert_eq!(refused.status, 401);
    assert!(!refused.has("x-cal-seq"));

    // A position already reached is answered at once, with the write in it.
    let r = s
        .req("GET", &format!("{NS}/events?categories={id}"))
        .header("X-Cal-Min-Seq", &second.to_string())
        .send();
    assert_eq!(r.status, 200, "{}", r.describe());

    // One the server reaches while the read waits: answered when the write that reaches it is
    // acknowledged, long before the wait would end.
    let third = std::thread::scope(|sc| {
        let waiting = sc.spawn(|| {
            let asked = Instant::now();
            let r = s
                .req("GET", &format!("{NS}/categories/{id}"))
                .header("X-Cal-Min-Seq", &(second + 1).to_string())
                .send();
            (r, asked.elapsed())
        });
        std::thread::sleep(Duration::from_millis(300));
        let renamed = s
            .req("POST", &format!("{NS}/categories/{id}"))
            .user(&ADMIN)
            .json_body(&json!({"name": "Positions three"}))
            .send();
        assert_eq!(renamed.status, 200, "{}", renamed.describe());
        let (r, waited) = waiting.join().unwrap();
        assert_eq!(r.status, 200, "{}", r.describe());
        assert_eq!(r.json()["name"], json!("Positions three"));
        assert!(waited < Duration::from_secs(4), "answered after {waited:?}");
        seq_of(&renamed)
    });

    // One the server never reaches: 503 after the wait, with Retry-After.
    let started = Instant::now();
    let r = s
        .req("GET", &format!("{NS}/categories"))
        .header("X-Cal-Min-Seq", &(third + 1000).to_string())
        .send();
    let v = assert_error(&r, 503, "rest_position_not_reached");
    assert_eq!(v["data"]["position"], json!(third));
    assert_eq!(r.header("retry-after"), Some("1"));
    assert!(started.elapsed() >= Duration::from_secs(5));

    // Not a position: 400.
    for bad in ["abc", "-1", "1.5", ""] {
        let r = s
            .req("GET", &format!("{NS}/categories"))
            .header("X-Cal-Min-Seq", bad)
            .send();
        assert_error(&r, 400, "rest_invalid_header");
    }
}
