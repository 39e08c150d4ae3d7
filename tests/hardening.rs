//! Reliability and security hardening (extensions): slow clients are disconnected, connections
//! are capped, failed Basic authentication is slowed per user and per address, and no secret
//! ever reaches the logs.

mod common;

use common::*;
use serde_json::json;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

/// A server for `users` with the given extra environment, and its temporary directory (dropped
/// after the server).
fn start_with_env(users: &[TestUser], env: &[(&str, &str)]) -> (Server, tempfile::TempDir) {
    let (tmp, dir) = fresh_data_dir(users);
    let mut cmd = serve_cmd(&dir);
    for (k, v) in env {
        cmd = cmd.env(k, v);
    }
    let srv = Server::start(cmd, None, "serve");
    (srv, tmp)
}

/// Waits until the server closes `c` (EOF or reset) and returns how long that took, or `None`
/// when it is still open after `limit`.
fn time_until_closed(c: &mut TcpStream, limit: Duration) -> Option<Duration> {
    let started = Instant::now();
    let mut buf = [0u8; 1024];
    loop {
        let left = limit.checked_sub(started.elapsed())?;
        c.set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .unwrap();
        match c.read(&mut buf) {
            Ok(0) => return Some(started.elapsed()),
            // A response (there should be none before a complete head): keep reading.
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return None
            }
            Err(_) => return Some(started.elapsed()),
        }
    }
}

/// Whether `c` has an answer (or was closed) within `wait`.
fn answered_within(c: &TcpStream, wait: Duration) -> bool {
    c.set_read_timeout(Some(wait)).unwrap();
    let mut probe = [0u8; 1];
    let result = c.peek(&mut probe);
    c.set_read_timeout(None).unwrap();
    match result {
        Ok(_) => true,
        Err(e) => !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
    }
}

fn get_request(addr: SocketAddr, path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").into_bytes()
}

// ---------------------------------------------------------------------------------------------
// Slow clients and the connection cap
// ---------------------------------------------------------------------------------------------

#[test]
fn clients_that_send_nothing_or_trickle_their_request_head_are_disconnected() {
    let (srv, _tmp) = start_with_env(&[], &[("ALMANAC_HEADER_TIMEOUT", "1")]);
    let addr = srv.addr;

    let mut silent = TcpStream::connect(addr).unwrap();
    let mut trickling = TcpStream::connect(addr).unwrap();
    let mut writer = trickling.try_clone().unwrap();
    let trickle = thread::spawn(move || {
        // One byte every 100 ms: the head would take seconds to complete.
        for b in get_request(addr, NS) {
            if writer.write_all(&[b]).is_err() {
                return;
            }
            thread::sleep(Duration::from_millis(100));
        }
    });

    // Meanwhile the server answers others at once.
    assert_eq!(srv.get(NS).status, 200);

    let limit = Duration::from_secs(5);
    let took = time_until_closed(&mut silent, limit).expect("a silent connection is closed");
    assert!(took >= Duration::from_millis(800), "closed after {took:?}");
    let took = time_until_closed(&mut trickling, limit).expect("a trickling client is closed");
    assert!(took < Duration::from_secs(3), "closed after {took:?}");
    trickle.join().unwrap();

    // A kept-alive connection may sit idle between requests for the same time only.
    let mut kept = TcpStream::connect(addr).unwrap();
    kept.write_all(format!("GET {NS} HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .unwrap();
    let r = read_response(&mut kept, false);
    assert_eq!(r.status, 200);
    assert!(
        time_until_closed(&mut kept, limit).is_some(),
        "an idle kept-alive connection is closed"
    );
}

#[test]
fn by_default_a_silent_connection_is_closed_after_10_seconds() {
    let srv = Server::start_with_users(&[]);
    let mut silent = TcpStream::connect(srv.addr).unwrap();
    let took = time_until_closed(&mut silent, Duration::from_secs(20)).expect("closed within 20 s");
    assert!(
        took >= Duration::from_secs(9) && took < Duration::from_secs(13),
        "closed after {took:?}"
    );
}

#[test]
fn connections_beyond_the_cap_wait_until_a_slot_frees() {
    let (srv, _tmp) = start_with_env(
        &[],
        &[
            ("ALMANAC_MAX_CONNECTIONS", "2"),
            ("ALMANAC_HEADER_TIMEOUT", "2"),
        ],
    );
    let addr = srv.addr;

    // Two idle connections take both slots; a third client is not served...
    let first = TcpStream::connect(addr).unwrap();
    let _second = TcpStream::connect(addr).unwrap();
    thread::sleep(Duration::from_millis(200));
    let mut waiting = TcpStream::connect(addr).expect("the kernel still queues the connection");
    waiting.write_all(&get_request(addr, NS)).unwrap();
    assert!(
        !answered_within(&waiting, Duration::from_millis(700)),
        "a third connection is not served while two are open"
    );
    // ...until one of them closes.
    drop(first);
    let started = Instant::now();
    waiting
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let r = read_response(&mut waiting, false);
    assert_eq!(r.status, 200, "{}", r.describe());
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );

    // Clients that hold slots without sending anything lose them to the header timeout, so
    // they cannot starve the others.
    let _hog_a = TcpStream::connect(addr).unwrap();
    let _hog_b = TcpStream::connect(addr).unwrap();
    thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    let r = raw_exchange(addr, get_request(addr, NS), false);
    assert_eq!(r.status, 200, "{}", r.describe());
    let waited = started.elapsed();
    assert!(
        waited < Duration::from_secs(5),
        "served once the silent connections timed out (after {waited:?})"
    );
}

#[test]
fn a_request_body_that_does_not_arrive_in_time_gets_408_and_the_connection_closes() {
    let (srv, _tmp) = start_with_env(&[ADMIN], &[("ALMANAC_BODY_TIMEOUT", "1")]);
    let addr = srv.addr;
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let head = format!(
        "POST {NS}/tags HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {}\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{{\"name\":",
        basic(ADMIN.name, ADMIN.password)
    );
    let started = Instant::now();
    c.write_all(head.as_bytes()).unwrap();
    let r = read_response(&mut c, false);
    let took = started.elapsed();
    let v = assert_error(&r, 408, "rest_request_timeout");
    assert_eq!(v["data"]["max_seconds"], json!(1.0));
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(5),
        "answered after {took:?}"
    );
    assert!(
        time_until_closed(&mut c, Duration::from_secs(3)).is_some(),
        "the connection is closed after the 408"
    );
    // Nothing was created.
    assert_eq!(srv.get(&format!("{NS}/tags")).json()["total"], 0);
}

#[test]
fn invalid_limit_variables_exit_2_before_touching_the_data_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    for (name, value) in [
        ("ALMANAC_MAX_CONNECTIONS", "0"),
        ("ALMANAC_HEADER_TIMEOUT", "soon"),
        ("ALMANAC_BODY_TIMEOUT", "-1"),
        ("ALMANAC_INDEX_COMMIT_DELAY", "0"),
    ] {
        let o = serve_cmd(&dir).env(name, value).timeout(30).run();
        assert_eq!(o.code, Some(2), "{name}={value}: {}", o.describe());
        assert!(o.stderr.starts_with("error: "), "{}", o.describe());
        assert!(o.stderr.contains(name), "{}", o.describe());
        assert!(o.stdout.is_empty());
        assert!(!dir.exists(), "{name}: the data directory was not created");
    }
}

// ---------------------------------------------------------------------------------------------
// Failed Basic authentication
// ---------------------------------------------------------------------------------------------

/// The free failures per user name and per address (`auth::throttle`).
const USER_FREE_FAILURES: usize = 10;
const ADDRESS_FREE_FAILURES: usize = 50;

fn assert_throttled(r: &Resp) -> u64 {
    let v = assert_error(r, 429, "rest_too_many_attempts");
    let seconds = v["data"]["retry_after"]
        .as_u64()
        .unwrap_or_else(|| panic!("data.retry_after; {}", r.describe()));
    assert!(seconds >= 1, "{}", r.describe());
    assert_eq!(
        r.header("retry-after"),
        Some(seconds.to_string().as_str()),
        "Retry-After header"
    );
    assert_standard_headers(r);
    seconds
}

#[test]
fn repeated_wrong_passwords_lock_that_user_only_for_a_growing_window() {
    let srv = Server::start_with_users(&[ADMIN, EDITOR, AUTHOR]);
    let guesses = std::cell::Cell::new(0);
    let wrong = |u: &TestUser| {
        guesses.set(guesses.get() + 1);
        let guess = format!("guess-{}", guesses.get());
        srv.req("GET", NS).auth(u.name, &guess).send()
    };

    // A client repeating the same refused credentials is not guessing: never locked.
    for _ in 0..USER_FREE_FAILURES * 2 {
        let r = srv
            .req("GET", NS)
            .auth(EDITOR.name, "stale-password")
            .send();
        assert_plain_error(&r, 401, "incorrect_password");
    }
    // New wrong passwords are counted (the stale one counted once): the one past the free
    // failures is still answered, and locks the name.
    for _ in 0..USER_FREE_FAILURES {
        assert_plain_error(&wrong(&EDITOR), 401, "incorrect_password");
    }
    // Locked: refused without checking, even the right password, in any case of the name.
    let seconds = assert_throttled(&wrong(&EDITOR));
    assert_eq!(seconds, 1, "the first window is one second");
    assert_throttled(&srv.get_as(NS, &EDITOR));
    assert_throttled(&srv.req("GET", NS).auth("EDITOR", EDITOR.password).send());
    // Other users and anonymous callers from the same address are not slowed down.
    let started = Instant::now();
    assert_eq!(srv.get_as(NS, &ADMIN).status, 200);
    assert_eq!(srv.get_as(NS, &AUTHOR).status, 200);
    assert_eq!(srv.get(NS).status, 200);
    assert!(started.elapsed() < Duration::from_secs(2));

    // After the window the right password works; the next failure locks for longer.
    thread::sleep(Duration::from_millis(1100));
    assert_plain_error(&wrong(&EDITOR), 401, "incorrect_password");
    assert_eq!(assert_throttled(&wrong(&EDITOR)), 2, "the window doubles");
    thread::sleep(Duration::from_millis(2100));
    let r = srv.get_as(NS, &EDITOR);
    assert_eq!(r.status, 200, "{}", r.describe());
    // Success reset the count: the free failures start again.
    for _ in 0..USER_FREE_FAILURES {
        assert_plain_error(&wrong(&EDITOR), 401, "incorrect_password");
    }
}

#[test]
fn an_address_spraying_guesses_over_many_names_is_locked_but_verified_callers_pass() {
    let srv = Server::start_with_users(&[ADMIN, EDITOR]);
    // The admin authenticated before the attack (its credentials are known good).
    assert_eq!(srv.get_as(NS, &ADMIN).status, 200);
    for i in 0..=ADDRESS_FREE_FAILURES {
        let r = srv.req("GET", NS).auth(&format!("nobody{i}"), "x").send();
        assert_plain_error(&r, 401, "invalid_username");
    }
    assert_throttled(&srv.req("GET", NS).auth("nobody-else", "x").send());
    // Credentials never verified before are refused unchecked while the address is locked...
    assert_throttled(&srv.get_as(NS, &EDITOR));
    // ...but known-good ones and anonymous requests pass.
    assert_eq!(srv.get_as(NS, &ADMIN).status, 200);
    assert_eq!(srv.get(NS).status, 200);
    thread::sleep(Duration::from_millis(1100));
    assert_eq!(srv.get_as(NS, &EDITOR).status, 200);
}

// ---------------------------------------------------------------------------------------------
// Secrets never logged
// ---------------------------------------------------------------------------------------------

#[test]
fn no_password_or_authorization_value_reaches_the_logs_even_at_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let dir_arg = dir.to_str().unwrap();
    let serve = || serve_cmd(&dir).env("ALMANAC_LOG", "trace");

    // First start: the generated admin password is printed once on stdout, never logged.
    let mut first = Server::launch(serve(), None).expect("first start");
    let admin_pw = first
        .initial_admin_password
        .clone()
        .expect("initial password");
    assert_eq!(
        first.req("GET", NS).auth("admin", &admin_pw).send().status,
        200
    );
    let r = first
        .req("GET", NS)
        .auth("admin", "wrong-admin-guess-77")
        .send();
    assert_eq!(r.status, 401);
    first.stop(Duration::from_secs(15));
    assert_eq!(first.stdout_text().matches(&admin_pw).count(), 1);
    let mut secrets = vec![admin_pw.clone(), "wrong-admin-guess-77".to_string()];
    let mut auth_values = vec![
        basic("admin", &admin_pw),
        basic("admin", "wrong-admin-guess-77"),
    ];
    let mut logs = first.stderr_text();
    drop(first);

    // User commands with passwords on the command line and on stdin, logging at trace.
    let editor_pw = "Editor-Secret-Qw7!";
    let o = almanac([
        "user",
        "add",
        "ed",
        "--role",
        "editor",
        "--password",
        editor_pw,
        "--data-dir",
        dir_arg,
    ])
    .env("ALMANAC_LOG", "trace")
    .run();
    assert_eq!(o.code, Some(0), "{}", o.describe());
    logs.push_str(&o.stdout);
    logs.push_str(&o.stderr);
    let author_pw = "Author-Secret-Zx9?";
    let o = almanac([
        "user",
        "add",
        "au",
        "--role",
        "author",
        "--password-stdin",
        "--data-dir",
        dir_arg,
    ])
    .env("ALMANAC_LOG", "trace")
    .stdin(&format!("{author_pw}\n"))
    .run();
    assert_eq!(o.code, Some(0), "{}", o.describe());
    logs.push_str(&o.stdout);
    logs.push_str(&o.stderr);
    secrets.extend([editor_pw.to_string(), author_pw.to_string()]);
    auth_values.extend([basic("ed", editor_pw), basic("au", author_pw)]);

    // Second start: requests with credentials, event passwords in JSON, form and query.
    let mut srv = Server::launch(serve(), None).expect("second start");
    assert!(srv.initial_admin_password.is_none());
    let event_pw = "Event-Secret-Lp3#";
    let form_pw = "Form-Secret-Vb5";
    let r = srv
        .req("POST", &format!("{NS}/events"))
        .auth("ed", editor_pw)
        .json_body(&json!({
            "title": "Quiet Evening",
            "start_date": "2031-05-01 19:00:00",
            "end_date": "2031-05-01 21:00:00",
            "status": "publish",
            "password": event_pw
        }))
        .send();
    assert_eq!(r.status, 201, "{}", r.describe());
    let id = r.json()["id"].as_u64().unwrap();
    let r = srv
        .req("POST", &format!("{NS}/events/{id}"))
        .auth("au", author_pw)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(format!("password={form_pw}"))
        .send();
    assert!(r.status == 200 || r.status == 403, "{}", r.describe());
    let r = srv
        .req("POST", &format!("{NS}/events/{id}"))
        .auth("ed", editor_pw)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(format!("password={form_pw}"))
        .send();
    assert_eq!(r.status, 200, "{}", r.describe());
    let r = srv.get(&format!("{NS}/events/{id}?password={form_pw}"));
    assert_eq!(r.status, 200, "{}", r.describe());
    let r = srv.get(&format!("{NS}/events/{id}?password={event_pw}"));
    assert_eq!(r.status, 403, "{}", r.describe());
    // Wrong passwords until the name is locked.
    for i in 0..=USER_FREE_FAILURES {
        let r = srv
            .req("GET", NS)
            .auth("ed", &format!("Editor-Guess-Mn2-{i}"))
            .send();
        assert_eq!(r.status, 401);
    }
    assert_throttled(&srv.req("GET", NS).auth("ed", "Editor-Guess-Mn2-x").send());
    secrets.extend([event_pw.into(), form_pw.into(), "Editor-Guess-Mn2".into()]);
    auth_values.push(basic("ed", "Editor-Guess-Mn2-0"));
    srv.stop(Duration::from_secs(15));
    assert_eq!(
        srv.stdout_text(),
        format!("listening on {}\n", srv.base),
        "stdout carries only the listening line"
    );
    logs.push_str(&srv.stderr_text());

    assert!(
        logs.contains("TRACE") || logs.contains("DEBUG"),
        "the logs really are verbose"
    );
    assert!(
        logs.contains(&format!("/events/{id}")),
        "requests are logged"
    );
    for secret in &secrets {
        assert!(
            !logs.contains(secret.as_str()),
            "{secret:?} appears in the logs"
        );
    }
    for value in &auth_values {
        let credentials = value.trim_start_matches("Basic ");
        assert!(
            !logs.contains(credentials),
            "the Authorization value {value:?} appears in the logs"
        );
    }
    // Nor any password hash.
    assert!(
        !logs.contains("$argon2"),
        "a password hash appears in the logs"
    );
}
