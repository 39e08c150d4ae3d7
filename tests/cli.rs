//! Command line: commands, exit codes, user management, data directory and locking,
//! `serve` configuration (options and environment), initial administrator, output contract,
//! graceful shutdown.

mod common;

use common::*;
use serde_json::json;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn user_list(dir: &Path) -> Output {
    almanac(["user", "list", "--data-dir", s(dir)]).run()
}

fn assert_code(o: &Output, code: i32, what: &str) {
    assert_eq!(o.code, Some(code), "{what}: {}", o.describe());
}

fn assert_error_line(o: &Output, what: &str) {
    assert!(
        o.stderr.lines().any(|l| l.starts_with("error: ")),
        "{what}: stderr must carry an `error: ` message: {}",
        o.describe()
    );
}

fn assert_generated_password(pw: &str) {
    assert_eq!(pw.len(), 24, "generated password has 24 characters: {pw:?}");
    assert!(
        pw.chars().all(|c| c.is_ascii_alphanumeric()),
        "generated password is [A-Za-z0-9]: {pw:?}"
    );
}

/// Every directory under `dir` (inclusive) is 0700 and every file 0600.
fn assert_private_tree(dir: &Path) {
    let mut bad = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        if mode(&d) != 0o700 {
            bad.push(format!("{} is {:o}", d.display(), mode(&d)));
        }
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if mode(&p) != 0o600 {
                bad.push(format!("{} is {:o}", p.display(), mode(&p)));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "directories must be 0700 and files 0600: {bad:?}"
    );
}

fn assert_locked(o: &Output, dir: &Path, what: &str) {
    assert_code(o, 3, what);
    let want = locked_message(dir);
    assert!(
        o.stderr.lines().any(|l| l.trim_end() == want),
        "{what}: stderr must contain {want:?}: {}",
        o.describe()
    );
}

fn start(cmd: Cmd) -> Server {
    Server::start(cmd, None, "serve")
}

fn wait_for_stderr(srv: &Server, needle: &str) -> bool {
    poll(
        Duration::from_secs(3),
        Duration::from_millis(50),
        || srv.stderr_text().contains(needle),
        |found| *found,
    )
}

// ---------------------------------------------------------------------------------------------
// Commands and usage errors
// ---------------------------------------------------------------------------------------------

#[test]
fn version_flags_print_the_version_and_exit_0() {
    for f in ["--version", "-V"] {
        let o = almanac([f]).run();
        assert_code(&o, 0, f);
        assert!(
            o.stdout.contains(VERSION),
            "{f} prints the version {VERSION}: {}",
            o.describe()
        );
    }
}

#[test]
fn help_exits_0() {
    for args in [
        vec!["--help"],
        vec!["-h"],
        vec!["help"],
        vec!["help", "serve"],
        vec!["help", "user"],
    ] {
        let o = almanac(&args).run();
        assert_code(&o, 0, &args.join(" "));
        assert!(
            !o.stdout.trim().is_empty(),
            "{args:?} prints help on stdout"
        );
    }
    let o = almanac(["--help"]).run();
    for cmd in ["serve", "user"] {
        assert!(o.stdout.contains(cmd), "--help lists `{cmd}`: {}", o.stdout);
    }
}

#[test]
fn no_command_prints_help_to_stderr_and_exits_2() {
    let o = almanac(Vec::<&str>::new()).run();
    assert_code(&o, 2, "no command");
    assert!(
        o.stdout.is_empty(),
        "help goes to stderr, stdout stays empty: {}",
        o.describe()
    );
    assert!(
        o.stderr.contains("serve") && o.stderr.contains("user"),
        "stderr carries the help: {}",
        o.describe()
    );
}

#[test]
fn unknown_commands_and_options_exit_2() {
    let t = tmp();
    let dir = t.path().join("d");
    let cases: Vec<Vec<String>> = vec![
        vec!["frobnicate".into()],
        vec!["--bogus".into()],
        vec![
            "serve".into(),
            "--bogus".into(),
            "--listen".into(),
            "127.0.0.1:0".into(),
            "--data-dir".into(),
            s(&dir).into(),
        ],
        vec![
            "serve".into(),
            "--data-dir".into(),
            s(&dir).into(),
            "--listen".into(),
        ],
        vec!["user".into()],
        vec![
            "user".into(),
            "frob".into(),
            "--data-dir".into(),
            s(&dir).into(),
        ],
        vec![
            "user".into(),
            "add".into(),
            "--role".into(),
            "editor".into(),
            "--data-dir".into(),
            s(&dir).into(),
        ],
        vec![
            "user".into(),
            "add".into(),
            "x".into(),
            "--role".into(),
            "editor".into(),
            "--bogus".into(),
            "--data-dir".into(),
            s(&dir).into(),
        ],
        vec![
            "user".into(),
            "list".into(),
            "--bogus".into(),
            "--data-dir".into(),
            s(&dir).into(),
        ],
        vec![
            "user".into(),
            "set-password".into(),
            "--data-dir".into(),
            s(&dir).into(),
        ],
    ];
    for args in cases {
        let o = almanac(&args).timeout(30).run();
        assert_code(&o, 2, &args.join(" "));
        assert!(!o.stderr.is_empty(), "{args:?}: a message on stderr");
        assert!(
            !dir.exists(),
            "{args:?}: a usage error must not create the data directory"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// User commands
// ---------------------------------------------------------------------------------------------

#[test]
fn user_add_prints_the_added_line_and_creates_a_private_data_dir() {
    let t = tmp();
    let dir = t.path().join("a").join("b").join("data");
    let o = almanac([
        "user",
        "add",
        "alice",
        "--role",
        "editor",
        "--password",
        "secret-1",
        "--data-dir",
        s(&dir),
    ])
    .run();
    assert_code(&o, 0, "user add alice");
    assert_eq!(o.stdout, "added user alice (editor) with ID 1\n");
    assert!(
        dir.is_dir(),
        "user add creates the data directory with its parents"
    );
    assert_eq!(mode(&dir), 0o700, "data dir mode");
    let o = almanac([
        "user",
        "add",
        "Bob",
        "--role",
        "author",
        "--password=pw-2",
        &format!("--data-dir={}", s(&dir)),
    ])
    .run();
    assert_code(&o, 0, "user add Bob with = syntax");
    assert_eq!(o.stdout, "added user Bob (author) with ID 2\n");
    let o = user_list(&dir);
    assert_code(&o, 0, "user list");
    assert_eq!(o.stdout, "1\talice\teditor\n2\tBob\tauthor\n");
    assert_private_tree(&dir);
}

#[test]
fn user_add_without_a_password_generates_and_prints_one() {
    let t = tmp();
    let dir = t.path().join("data");
    let mut seen = Vec::new();
    for (i, role) in [
        "administrator",
        "editor",
        "author",
        "contributor",
        "subscriber",
    ]
    .iter()
    .enumerate()
    {
        let name = format!("gen{i}");
        let o = almanac(["user", "add", &name, "--role", role, "--data-dir", s(&dir)]).run();
        assert_code(&o, 0, &name);
        let lines: Vec<&str> = o.stdout.lines().collect();
        assert_eq!(lines.len(), 2, "two stdout lines: {}", o.describe());
        assert_eq!(
            lines[0],
            format!("added user {name} ({role}) with ID {}", i + 1)
        );
        let pw = lines[1]
            .strip_prefix("password: ")
            .unwrap_or_else(|| panic!("second line `password: …`: {:?}", lines[1]));
        assert_generated_password(pw);
        assert!(o.stdout.ends_with('\n'));
        seen.push(pw.to_string());
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 5, "generated passwords differ");
    let o = user_list(&dir);
    assert_eq!(
        o.stdout,
        "1\tgen0\tadministrator\n2\tgen1\teditor\n3\tgen2\tauthor\n4\tgen3\tcontributor\n5\tgen4\tsubscriber\n"
    );
}

#[test]
fn user_add_with_a_taken_name_in_any_case_exits_4() {
    let t = tmp();
    let dir = t.path().join("data");
    add_user(
        &dir,
        &TestUser {
            name: "Alice",
            role: "editor",
            password: "x1",
        },
    );
    for name in ["Alice", "alice", "ALICE", "aLiCe"] {
        let o = almanac([
            "user",
            "add",
            name,
            "--role",
            "author",
            "--password",
            "x2",
            "--data-dir",
            s(&dir),
        ])
        .run();
        assert_code(&o, 4, name);
        assert_error_line(&o, name);
        assert!(o.stdout.is_empty(), "{name}: nothing on stdout");
    }
    assert_eq!(user_list(&dir).stdout, "1\tAlice\teditor\n");
    // IDs keep counting from the last used one.
    let o = almanac([
        "user",
        "add",
        "zed",
        "--role",
        "author",
        "--password",
        "x3",
        "--data-dir",
        s(&dir),
    ])
    .run();
    assert_eq!(o.stdout, "added user zed (author) with ID 2\n");
}

#[test]
fn user_add_rejects_invalid_names_roles_and_passwords_with_exit_2() {
    let t = tmp();
    let dir = t.path().join("data");
    add_user(
        &dir,
        &TestUser {
            name: "keep",
            role: "editor",
            password: "x",
        },
    );
    let long_name = "n".repeat(61);
    let long_pw = "p".repeat(1025);
    let bad_names = [
        "",
        "a b",
        "a:b",
        long_name.as_str(),
        "ünï",
        "a/b",
        "a+b",
        "tab\tname",
        "x,y",
    ];
    for n in bad_names {
        let o = almanac([
            "user",
            "add",
            n,
            "--role",
            "editor",
            "--password",
            "x",
            "--data-dir",
            s(&dir),
        ])
        .run();
        assert_code(&o, 2, &format!("name {n:?}"));
        assert_error_line(&o, n);
    }
    for r in [
        "admin",
        "Editor",
        "EDITOR",
        "superuser",
        "",
        "administrator ",
    ] {
        let o = almanac([
            "user",
            "add",
            "newuser",
            "--role",
            r,
            "--password",
            "x",
            "--data-dir",
            s(&dir),
        ])
        .run();
        assert_code(&o, 2, &format!("role {r:?}"));
    }
    let o = almanac([
        "user",
        "add",
        "newuser",
        "--password",
        "x",
        "--data-dir",
        s(&dir),
    ])
    .run();
    assert_code(&o, 2, "missing --role");
    for pw in ["", long_pw.as_str()] {
        let o = almanac([
            "user",
            "add",
            "newuser",
            "--role",
            "editor",
            "--password",
            pw,
            "--data-dir",
            s(&dir),
        ])
        .run();
        assert_code(&o, 2, &format!("password of {} bytes", pw.len()));
    }
    let o = almanac([
        "user",
        "add",
        "newuser",
        "--role",
        "editor",
        "--password-stdin",
        "--data-dir",
        s(&dir),
    ])
    .stdin("\n")
    .run();
    assert_code(&o, 2, "empty password on stdin");
    let o = almanac([
        "user",
        "add",
        "newuser",
        "--role",
        "editor",
        "--password",
        "x",
        "--password-stdin",
        "--data-dir",
        s(&dir),
    ])
    .stdin("y\n")
    .run();
    // Contract ambiguity: the synopsis `[--password PW | --password-stdin]` makes them exclusive.
    assert_code(&o, 2, "--password with --password-stdin");
    assert_eq!(
        user_list(&dir).stdout,
        "1\tkeep\teditor\n",
        "nothing was added"
    );
}

#[test]
fn user_add_accepts_boundary_names_and_passwords() {
    let t = tmp();
    let dir = t.path().join("data");
    let name60 = "n".repeat(60);
    let pw1024 = "p".repeat(1024);
    let pw1024_multibyte = "é".repeat(512);
    let cases = [
        (name60.as_str(), "x"),
        ("a.b_c-d@e.F9", "x"),
        ("Z", pw1024.as_str()),
        ("multi", pw1024_multibyte.as_str()),
        ("sp", " leading and trailing spaces "),
    ];
    for (i, (n, pw)) in cases.iter().enumerate() {
        let o = almanac([
            "user",
            "add",
            n,
            "--role",
            "subscriber",
            "--password",
            pw,
            "--data-dir",
            s(&dir),
        ])
        .run();
        assert_code(
            &o,
            0,
            &format!("name {n:?}, password of {} bytes", pw.len()),
        );
        assert_eq!(
            o.stdout,
            format!("added user {n} (subscriber) with ID {}\n", i + 1)
        );
    }
}

#[test]
fn user_list_and_set_password_need_an_existing_data_dir() {
    let t = tmp();
    let dir = t.path().join("missing");
    let o = user_list(&dir);
    assert_code(&o, 1, "user list on a missing data dir");
    assert_error_line(&o, "user list");
    assert!(!dir.exists(), "user list must not create the data dir");
    let o = almanac([
        "user",
        "set-password",
        "admin",
        "--password",
        "x",
        "--data-dir",
        s(&dir),
    ])
    .run();
    assert_code(&o, 1, "set-password on a missing data dir");
    assert!(!dir.exists());
}

#[test]
fn user_set_password_for_an_unknown_user_exits_4() {
    let t = tmp();
    let dir = t.path().join("data");
    add_user(
        &dir,
        &TestUser {
            name: "known",
            role: "editor",
            password: "x",
        },
    );
    let o = almanac([
        "user",
        "set-password",
        "unknown",
        "--password",
        "y",
        "--data-dir",
        s(&dir),
    ])
    .run();
    assert_code(&o, 4, "unknown user");
    assert_error_line(&o, "unknown user");
    let o = almanac([
        "user",
        "set-password",
        "known",
        "--password",
        "",
        "--data-dir",
        s(&dir),
    ])
    .run();
    assert_code(&o, 2, "empty new password");
}

#[test]
fn passwords_from_stdin_and_set_password_take_effect_over_http() {
    let t = tmp();
    let dir = t.path().join("data");
    let o = almanac([
        "user",
        "add",
        "carol",
        "--role",
        "author",
        "--password-stdin",
        "--data-dir",
        s(&dir),
    ])
    .stdin("from-stdin-pw\nsecond line\n")
    .run();
    assert_code(&o, 0, "user add --password-stdin");
    assert_eq!(
        o.stdout, "added user carol (author) with ID 1\n",
        "no password line when the password was given"
    );
    add_user(
        &dir,
        &TestUser {
            name: "dave",
            role: "editor",
            password: "old-password",
        },
    );
    assert_code(
        &almanac([
            "user",
            "set-password",
            "dave",
            "--password",
            "new-password",
            "--data-dir",
            s(&dir),
        ])
        .run(),
        0,
        "dave set-password",
    );
    add_user(
        &dir,
        &TestUser {
            name: "erin",
            role: "subscriber",
            password: "x",
        },
    );
    let o = almanac(["user", "set-password", "erin", "--data-dir", s(&dir)]).run();
    assert_code(&o, 0, "erin generated");
    let erin_pw = o
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("password: "))
        .unwrap_or_else(|| {
            panic!(
                "set-password without a password prints `password: …`: {}",
                o.describe()
            )
        })
        .to_string();
    assert_generated_password(&erin_pw);
    add_user(
        &dir,
        &TestUser {
            name: "gina",
            role: "contributor",
            password: "pw:with:colons",
        },
    );
    let o = almanac([
        "user",
        "set-password",
        "carol",
        "--password-stdin",
        "--data-dir",
        s(&dir),
    ])
    .stdin("stdin-new\n")
    .run();
    assert_code(&o, 0, "carol set-password --password-stdin");
    assert_eq!(
        user_list(&dir).stdout,
        "1\tcarol\tauthor\n2\tdave\teditor\n3\terin\tsubscriber\n4\tgina\tcontributor\n"
    );

    let srv = start(serve_cmd(&dir));
    assert!(
        srv.initial_admin_password.is_none(),
        "users exist: no initial admin"
    );
    let ok = |name: &str, pw: &str| {
        let r = srv.req("GET", NS).auth(name, pw).send();
        assert_eq!(r.status, 200, "{name}/{pw}: {}", r.describe());
        assert_eq!(r.header("cache-control"), Some(CC_AUTH));
    };
    let fails = |name: &str, pw: &str, code: &str| {
        let r = srv.req("GET", NS).auth(name, pw).send();
        assert_plain_error(&r, 401, code);
    };
    ok("carol", "stdin-new");
    fails("carol", "from-stdin-pw", "incorrect_password");
    ok("dave", "new-password");
    fails("dave", "old-password", "incorrect_password");
    ok("erin", &erin_pw);
    fails("erin", "x", "incorrect_password");
    ok("gina", "pw:with:colons");
    fails("admin", "anything", "invalid_username");
}

// ---------------------------------------------------------------------------------------------
// Serve, initial administrator, locking, shutdown
// ---------------------------------------------------------------------------------------------

#[test]
fn first_start_creates_the_admin_then_locks_the_dir_and_later_starts_print_no_password() {
    let t = tmp();
    let dir = t.path().join("x").join("data");
    let mut srv = start(serve_cmd(&dir));

    // stdout: the password line, then the listening line.
    let pw = srv
        .initial_admin_password
        .clone()
        .expect("first start prints `initial admin password: …`");
    assert_generated_password(&pw);
    let port = srv.addr.port();
    assert_ne!(port, 0, "port 0 is resolved to the bound port");
    assert_eq!(srv.base, format!("http://127.0.0.1:{port}"));
    assert_eq!(
        srv.stdout_text(),
        format!("initial admin password: {pw}\nlistening on http://127.0.0.1:{port}\n")
    );

    // The password file and the private tree.
    let pf = dir.join("initial-admin-password");
    assert_eq!(
        std::fs::read_to_string(&pf).expect("initial-admin-password file"),
        format!("{pw}\n")
    );
    assert_eq!(mode(&pf), 0o600);
    assert_eq!(mode(&dir), 0o700);
    assert!(
        dir.join("almanac.lock").exists(),
        "lock file DIR/almanac.lock"
    );

    // admin works over HTTP; default public URL = the bound address.
    let r = srv.req("GET", NS).auth("admin", &pw).send();
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(r.header("cache-control"), Some(CC_AUTH));
    assert_eq!(
        r.json()["_links"]["up"],
        json!([{"href": format!("http://127.0.0.1:{port}/")}])
    );
    let r = srv.get(&format!("{NS}/doc"));
    assert_eq!(r.status, 200);

    // Logs: the listening message, one record per request; never a password or Authorization value.
    assert!(
        wait_for_stderr(&srv, &format!("listening on http://127.0.0.1:{port}")),
        "stderr logs the listening line: {}",
        srv.stderr_text()
    );
    assert!(
        wait_for_stderr(&srv, "/cal/events/v1/doc"),
        "stderr logs each request: {}",
        srv.stderr_text()
    );
    let err = srv.stderr_text();
    assert!(
        !err.contains(&pw),
        "the admin password must never be logged"
    );
    assert!(
        !err.contains(basic("admin", &pw).trim_start_matches("Basic ")),
        "Authorization must never be logged"
    );

    // Locked: user commands and a second serve exit 3 and change nothing.
    let o = almanac([
        "user",
        "add",
        "intruder",
        "--role",
        "editor",
        "--password",
        "x",
        "--data-dir",
        s(&dir),
    ])
    .run();
    assert_locked(&o, &dir, "user add while serving");
    assert!(o.stdout.is_empty());
    assert_locked(&user_list(&dir), &dir, "user list while serving");
    let o = almanac([
        "user",
        "set-password",
        "admin",
        "--password",
        "hijacked",
        "--data-dir",
        s(&dir),
    ])
    .run();
    assert_locked(&o, &dir, "set-password while serving");
    let o = serve_cmd(&dir).timeout(30).run();
    assert_locked(&o, &dir, "second serve on the same dir");

    // SIGTERM: graceful exit 0, port closed, stdout unchanged.
    let addr = srv.addr;
    srv.stop(Duration::from_secs(15));
    assert_port_closed(addr);
    assert_eq!(
        srv.stdout_text(),
        format!("initial admin password: {pw}\nlistening on http://127.0.0.1:{port}\n"),
        "stdout carries only the two lines"
    );
    drop(srv);

    let o = user_list(&dir);
    assert_code(&o, 0, "user list after the server stopped");
    assert_eq!(
        o.stdout, "1\tadmin\tadministrator\n",
        "nothing was added while locked"
    );

    // Second start: no password line; the password was not changed while locked.
    let mut srv2 = start(serve_cmd(&dir));
    assert!(
        srv2.initial_admin_password.is_none(),
        "second start prints no password: {}",
        srv2.stdout_text()
    );
    let port2 = srv2.addr.port();
    assert_eq!(
        srv2.stdout_text(),
        format!("listening on http://127.0.0.1:{port2}\n")
    );
    let r = srv2.req("GET", NS).auth("admin", &pw).send();
    assert_eq!(
        r.status,
        200,
        "initial password still valid: {}",
        r.describe()
    );
    let r = srv2.req("GET", NS).auth("admin", "hijacked").send();
    assert_plain_error(&r, 401, "incorrect_password");
    assert_eq!(std::fs::read_to_string(&pf).unwrap(), format!("{pw}\n"));
    srv2.signal("INT");
    assert_eq!(
        srv2.wait_exit(Duration::from_secs(15)),
        Some(0),
        "SIGINT → exit 0"
    );
    assert_port_closed(srv2.addr);
    // Last, so that the checks above still run when this one fails.
    assert_private_tree(&dir);
}

#[test]
fn shutdown_lets_an_in_flight_request_finish_and_does_not_wait_for_idle_connections() {
    let t = tmp();
    let dir = t.path().join("data");
    let mut srv = start(serve_cmd(&dir));
    let addr = srv.addr;

    let _idle = TcpStream::connect(addr).expect("idle connection");
    let mut c = TcpStream::connect(addr).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    let head = format!(
        "GET {NS} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: text/plain\r\nContent-Length: 10\r\nConnection: close\r\n\r\n12345"
    );
    c.write_all(head.as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(300));

    let started = Instant::now();
    srv.signal("TERM");
    std::thread::sleep(Duration::from_millis(500));
    // If the server already answered (it need not read a GET body), just read that answer.
    c.set_nonblocking(true).unwrap();
    let mut probe = [0u8; 1];
    let answered = matches!(c.peek(&mut probe), Ok(n) if n > 0);
    c.set_nonblocking(false).unwrap();
    if !answered {
        let _ = c.write_all(b"67890");
    }
    let mut r = c.try_clone().unwrap();
    let resp = read_response(&mut r, false);
    assert_eq!(
        resp.status,
        200,
        "the in-flight request completes during shutdown: {}",
        resp.describe()
    );
    assert_eq!(
        srv.wait_exit(Duration::from_secs(15)),
        Some(0),
        "graceful exit 0"
    );
    assert!(
        started.elapsed() < Duration::from_secs(12),
        "shutdown within the 10-second grace period"
    );
    assert_port_closed(addr);
    // The lock is released.
    assert_code(&user_list(&dir), 0, "user list after shutdown");
    let mut rest = Vec::new();
    let _ = c.read_to_end(&mut rest);
}

#[test]
fn environment_variables_configure_serve_and_user_commands() {
    let t = tmp();
    let dir = t.path().join("env").join("data");
    let public = "https://example.org/api";
    let mut srv = Server::start(
        almanac(["serve"])
            .env("ALMANAC_DATA_DIR", s(&dir))
            .env("ALMANAC_LISTEN", "127.0.0.1:0")
            .env("ALMANAC_PUBLIC_URL", "https://example.org/api/"),
        Some(public),
        "serve from env",
    );
    assert!(
        srv.base.starts_with("http://127.0.0.1:"),
        "listening line is the bound address, not the public URL: {}",
        srv.base
    );
    assert!(
        dir.join("initial-admin-password").exists(),
        "ALMANAC_DATA_DIR is used"
    );

    let r = srv.get(NS);
    assert_eq!(
        r.status, 200,
        "almanac still serves /cal/events/v1 behind a path prefix"
    );
    let v = r.json();
    assert_eq!(
        v["_links"]["up"],
        json!([{"href": "https://example.org/api/"}]),
        "trailing slash removed from P"
    );
    assert_eq!(
        v["routes"]["/cal/events/v1"]["_links"]["self"],
        json!([{"href": "https://example.org/api/cal/events/v1"}])
    );
    assert_discovery_link(&r, public);
    let r = srv.get("/es/cal/events/v1");
    assert_eq!(
        r.json()["_links"]["up"],
        json!([{"href": "https://example.org/api/es/"}])
    );
    let r = srv.get("/");
    assert_eq!(r.json()["url"], json!(public));
    assert_eq!(
        r.header("x-cal-api-root"),
        Some("https://example.org/api/cal/events/v1/")
    );
    assert_eq!(r.header("x-cal-api-origin"), Some(public));
    let r = srv.get(&format!("{NS}/doc"));
    assert_eq!(
        r.json()["servers"],
        json!([{"url": "https://example.org/api/cal/events/v1"}])
    );

    // User commands read ALMANAC_DATA_DIR too: the dir is locked.
    let o = almanac(["user", "list"])
        .env("ALMANAC_DATA_DIR", s(&dir))
        .run();
    assert_locked(&o, &dir, "user list via ALMANAC_DATA_DIR");
    srv.stop(Duration::from_secs(15));
    let o = almanac(["user", "list"])
        .env("ALMANAC_DATA_DIR", s(&dir))
        .run();
    assert_code(&o, 0, "user list via env");
    assert_eq!(o.stdout, "1\tadmin\tadministrator\n");
}

#[test]
fn command_line_options_beat_environment_variables() {
    let t = tmp();
    let busy = TcpListener::bind("127.0.0.1:0").unwrap();
    let busy_addr = busy.local_addr().unwrap().to_string();
    let env_dir = t.path().join("env-dir");
    let opt_dir = t.path().join("opt-dir");
    let public = "http://opt.example:9000/x";
    let srv = Server::start(
        almanac([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--data-dir",
            s(&opt_dir),
            "--public-url",
            "http://opt.example:9000/x//",
        ])
        .env("ALMANAC_DATA_DIR", s(&env_dir))
        .env("ALMANAC_LISTEN", &busy_addr)
        .env("ALMANAC_PUBLIC_URL", "https://env.example"),
        Some(public),
        "options must beat the environment",
    );
    assert_ne!(srv.addr.to_string(), busy_addr);
    assert_eq!(
        srv.get(NS).json()["_links"]["up"],
        json!([{"href": "http://opt.example:9000/x/"}])
    );
    assert!(opt_dir.exists(), "--data-dir used");
    assert!(
        !env_dir.exists(),
        "ALMANAC_DATA_DIR ignored when --data-dir is given"
    );
    drop(srv);
    let third = t.path().join("third");
    let o = almanac([
        "user",
        "add",
        "u",
        "--role",
        "editor",
        "--password",
        "x",
        "--data-dir",
        s(&third),
    ])
    .env("ALMANAC_DATA_DIR", s(&env_dir))
    .run();
    assert_code(&o, 0, "user add with both");
    assert!(third.exists() && !env_dir.exists());
}

#[test]
fn empty_environment_variables_count_as_unset() {
    let t = tmp();
    let mut srv = Server::start(
        almanac(["serve", "--listen", "127.0.0.1:0"])
            .env("ALMANAC_DATA_DIR", "")
            .env("ALMANAC_PUBLIC_URL", "")
            .env("ALMANAC_LOG", "")
            .cwd(t.path()),
        None,
        "empty env vars must be ignored",
    );
    let default_dir = t.path().join("almanac-data");
    assert!(
        default_dir.join("initial-admin-password").exists(),
        "default data dir ./almanac-data relative to the working directory"
    );
    let port = srv.addr.port();
    assert_eq!(
        srv.get(NS).json()["_links"]["up"],
        json!([{"href": format!("http://127.0.0.1:{port}/")}]),
        "default public URL"
    );
    srv.stop(Duration::from_secs(15));
    let o = almanac(["user", "list"])
        .env("ALMANAC_DATA_DIR", "")
        .cwd(t.path())
        .run();
    assert_code(&o, 0, "user list with empty ALMANAC_DATA_DIR");
    assert_eq!(o.stdout, "1\tadmin\tadministrator\n");
}

#[test]
fn invalid_listen_addresses_exit_2_before_touching_the_data_dir() {
    let t = tmp();
    let values = [
        "localhost:8080",
        "127.0.0.1",
        "127.0.0.1:99999",
        "[::1]",
        "example.org:80",
        "",
        "127.0.0.1:abc",
        "0.0.0.0",
        "127.0.0.1:-1",
        "http://127.0.0.1:0",
    ];
    for (i, v) in values.iter().enumerate() {
        let dir = t.path().join(format!("d{i}"));
        let o = almanac(["serve", "--listen", v, "--data-dir", s(&dir)])
            .timeout(30)
            .run();
        assert_code(&o, 2, &format!("--listen {v:?}"));
        assert_error_line(&o, v);
        assert!(
            !dir.exists(),
            "--listen {v:?}: configuration is validated before the data dir is created"
        );
    }
    let dir = t.path().join("eq");
    let o = almanac(["serve", "--listen=localhost:0", "--data-dir", s(&dir)])
        .timeout(30)
        .run();
    assert_code(&o, 2, "--listen=localhost:0");
    let o = almanac(["serve", "--data-dir", s(&dir)])
        .env("ALMANAC_LISTEN", "localhost:0")
        .timeout(30)
        .run();
    assert_code(&o, 2, "ALMANAC_LISTEN=localhost:0");
    assert!(!dir.exists());
}

#[test]
fn invalid_public_urls_exit_2() {
    let t = tmp();
    let values = [
        "ftp://example.org",
        "example.org",
        "/relative/path",
        "http://",
        "http://user:pw@example.org",
        "http://user@example.org",
        "http://example.org/?q=1",
        "http://example.org/#frag",
        "not a url",
        "mailto:x@example.org",
    ];
    for (i, v) in values.iter().enumerate() {
        let dir = t.path().join(format!("d{i}"));
        let o = almanac([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--public-url",
            v,
            "--data-dir",
            s(&dir),
        ])
        .timeout(30)
        .run();
        assert_code(&o, 2, &format!("--public-url {v:?}"));
        assert_error_line(&o, v);
        assert!(!dir.exists(), "--public-url {v:?}: no data dir created");
    }
    let dir = t.path().join("env");
    let o = serve_cmd(&dir)
        .env("ALMANAC_PUBLIC_URL", "ftp://x")
        .timeout(30)
        .run();
    assert_code(&o, 2, "ALMANAC_PUBLIC_URL=ftp://x");
}

#[test]
fn listen_accepts_the_equals_syntax_and_ipv6_literals() {
    let t = tmp();
    let dir = t.path().join("data");
    let v6 = TcpListener::bind("[::1]:0").is_ok();
    let listen = if v6 {
        "--listen=[::1]:0"
    } else {
        "--listen=127.0.0.1:0"
    };
    let srv = start(almanac([
        "serve",
        listen,
        &format!("--data-dir={}", s(&dir)),
    ]));
    let port = srv.addr.port();
    let host = if v6 { "[::1]" } else { "127.0.0.1" };
    assert_eq!(
        srv.base,
        format!("http://{host}:{port}"),
        "listening line with IPv6 in brackets"
    );
    let r = srv.get(NS);
    assert_eq!(r.status, 200);
    assert_eq!(
        r.json()["_links"]["up"],
        json!([{"href": format!("http://{host}:{port}/")}]),
        "default public URL brackets IPv6"
    );
    assert!(dir.exists(), "--data-dir= syntax");
}

#[test]
fn serve_exits_1_when_the_address_is_in_use_and_releases_the_lock() {
    let t = tmp();
    let dir = t.path().join("data");
    let busy = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let o = almanac(["serve", "--listen", &addr, "--data-dir", s(&dir)])
        .timeout(60)
        .run();
    assert_code(&o, 1, "bind failure");
    assert_error_line(&o, "bind failure");
    assert!(
        !o.stdout.contains("listening on"),
        "no listening line when the bind failed"
    );
    assert_code(&user_list(&dir), 0, "lock released after a failed start");
    drop(busy);
}

#[test]
fn passwords_are_stored_as_argon2id_phc_strings_with_the_minimum_parameters() {
    let t = tmp();
    let dir = t.path().join("data");
    let pw = "Plain-Text-Must-Not-Be-Stored-7";
    let o = almanac([
        "user",
        "add",
        "hashme",
        "--role",
        "author",
        "--password",
        pw,
        "--data-dir",
        s(&dir),
    ])
    .run();
    assert_code(&o, 0, "user add");
    let mut bytes = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            bytes.extend(std::fs::read(&p).unwrap());
        }
    }
    let text = String::from_utf8_lossy(&bytes);
    assert!(!text.contains(pw), "the plain password must not be stored");
    let start = text
        .find("$argon2id$")
        .expect("an argon2id PHC string in the store");
    let phc: String = text[start..]
        .chars()
        .take_while(|c| !c.is_control() && *c != '\u{fffd}')
        .collect();
    let params = phc
        .split('$')
        .nth(3)
        .unwrap_or_else(|| panic!("PHC parameters in {phc:?}"));
    let get = |k: &str| -> u64 {
        params
            .split(',')
            .find_map(|kv| kv.strip_prefix(&format!("{k}=")))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{k} in {phc:?}"))
    };
    assert!(get("m") >= 19456, "m >= 19456 KiB: {phc}");
    assert!(get("t") >= 2, "t >= 2: {phc}");
    assert!(get("p") >= 1, "p >= 1: {phc}");
}

/// Opens a connection with a GET whose body is only half sent, so the request stays in flight.
fn half_sent_request(addr: std::net::SocketAddr) -> TcpStream {
    let mut c = TcpStream::connect(addr).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let head = format!(
        "GET {NS} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: text/plain\r\nContent-Length: 10\r\nConnection: close\r\n\r\n12345"
    );
    c.write_all(head.as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    c
}

#[test]
fn a_second_signal_during_shutdown_exits_1_immediately() {
    let t = tmp();
    let dir = t.path().join("data");
    let mut srv = start(serve_cmd(&dir));
    let _c = half_sent_request(srv.addr);
    srv.signal("TERM");
    std::thread::sleep(Duration::from_millis(700));
    assert!(
        !srv.exited(),
        "the server waits for the in-flight request (up to 10 s)"
    );
    let t0 = Instant::now();
    srv.signal("INT");
    assert_eq!(
        srv.wait_exit(Duration::from_secs(5)),
        Some(1),
        "second signal → exit 1"
    );
    assert!(
        t0.elapsed() < Duration::from_secs(3),
        "the second signal exits immediately"
    );
}

#[test]
fn shutdown_drops_requests_still_running_after_the_10_second_grace() {
    let t = tmp();
    let dir = t.path().join("data");
    let mut srv = start(serve_cmd(&dir));
    let _c = half_sent_request(srv.addr);
    let t0 = Instant::now();
    srv.signal("TERM");
    assert_eq!(
        srv.wait_exit(Duration::from_secs(20)),
        Some(0),
        "exit 0 after the grace period"
    );
    let took = t0.elapsed();
    assert!(
        took >= Duration::from_secs(9),
        "in-flight requests get up to 10 s (exited after {took:?})"
    );
    assert!(
        took < Duration::from_secs(14),
        "in-flight requests are dropped after 10 s (exited after {took:?})"
    );
}

#[test]
fn an_unreadable_store_is_a_runtime_failure_exit_1() {
    let t = tmp();
    let dir = t.path().join("data");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("almanac.redb"),
        b"this is not a redb database, just garbage bytes",
    )
    .unwrap();
    let o = serve_cmd(&dir).timeout(30).run();
    assert_code(&o, 1, "serve on a corrupt store");
    assert_error_line(&o, "serve on a corrupt store");
    assert!(!o.stdout.contains("listening on"));
    let o = user_list(&dir);
    assert_code(&o, 1, "user list on a corrupt store");
    // A data dir path that is a regular file cannot be opened either.
    let f = t.path().join("file");
    std::fs::write(&f, b"x").unwrap();
    let o = almanac([
        "user",
        "add",
        "x",
        "--role",
        "editor",
        "--password",
        "x",
        "--data-dir",
        s(&f),
    ])
    .run();
    assert_code(&o, 1, "data dir is a file");
}

#[test]
fn an_existing_initial_admin_password_file_is_replaced() {
    let t = tmp();
    let dir = t.path().join("data");
    std::fs::create_dir_all(&dir).unwrap();
    let pf = dir.join("initial-admin-password");
    std::fs::write(&pf, b"stale content\n").unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&pf, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let srv = start(serve_cmd(&dir).env("ALMANAC_LOG", "warn"));
    let pw = srv
        .initial_admin_password
        .clone()
        .expect("no user yet: initial admin");
    assert_eq!(std::fs::read_to_string(&pf).unwrap(), format!("{pw}\n"));
    assert_eq!(mode(&pf), 0o600, "the replaced file has mode 0600");
    // ALMANAC_LOG=warn filters the info-level request records out.
    assert_eq!(srv.get(&format!("{NS}/doc?marker=1")).status, 200);
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !srv.stderr_text().contains("/cal/events/v1/doc"),
        "ALMANAC_LOG=warn hides info request logs: {}",
        srv.stderr_text()
    );
}

#[test]
fn relative_data_dirs_are_relative_to_the_working_directory() {
    let t = tmp();
    let o = almanac([
        "user",
        "add",
        "rel",
        "--role",
        "editor",
        "--password",
        "x",
        "--data-dir",
        "rel/data",
    ])
    .cwd(t.path())
    .run();
    assert_code(&o, 0, "user add with a relative --data-dir");
    assert!(t.path().join("rel").join("data").is_dir());
    let o = almanac(["user", "list"])
        .env("ALMANAC_DATA_DIR", "rel/data")
        .cwd(t.path())
        .run();
    assert_eq!(o.stdout, "1\trel\teditor\n");
    // Default: ./almanac-data
    let o = almanac(["user", "add", "dflt", "--role", "author", "--password", "x"])
        .cwd(t.path())
        .run();
    assert_code(&o, 0, "user add with the default data dir");
    assert!(
        t.path().join("almanac-data").is_dir(),
        "default data dir ./almanac-data"
    );
}
