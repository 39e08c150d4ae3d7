//! What the real-browser tests (tests/pages_browser.rs, tests/manage_browser.rs) share: the
//! system's Chromium and Node.js (ensured, never skipped: a missing one fails the test), a lock
//! for installing them, a free port, and running a script of tests/browser that takes its
//! configuration as JSON on stdin and prints a JSON report on stdout.

use super::node::node_dir;
use super::tail;

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The browser the scripts drive (Debian's package `chromium`).
pub const CHROMIUM: &str = "/usr/bin/chromium";

pub fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// An exclusive lock on target/browser-setup.lock (held until dropped): concurrent `cargo test`
/// runs do not install the browser or the node modules at the same time.
pub fn setup_lock() -> fs::File {
    let dir = manifest_dir().join("target");
    fs::create_dir_all(&dir).expect("create target/");
    let path = dir.join("browser-setup.lock");
    let f = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    f.lock()
        .unwrap_or_else(|e| panic!("lock {}: {e}", path.display()));
    f
}

fn run(what: &str, cmd: &mut Command) -> std::process::Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    if !out.status.success() {
        panic!(
            "{what} failed ({}):\n--- stdout ---\n{}\n--- stderr ---\n{}",
            out.status,
            tail(&String::from_utf8_lossy(&out.stdout), 3000),
            tail(&String::from_utf8_lossy(&out.stderr), 3000)
        );
    }
    out
}

/// /usr/bin/chromium, installed with apt-get when missing and running as root.
pub fn ensure_chromium() {
    if Path::new(CHROMIUM).exists() {
        return;
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    if root {
        eprintln!("{CHROMIUM} is missing: installing the Debian package chromium");
        run(
            "apt-get update",
            Command::new("apt-get")
                .args(["update", "-qq"])
                .env("DEBIAN_FRONTEND", "noninteractive"),
        );
        run(
            "apt-get install chromium",
            Command::new("apt-get")
                .args(["install", "-y", "-qq", "chromium"])
                .env("DEBIAN_FRONTEND", "noninteractive"),
        );
    }
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is missing{}: the pages cannot be checked in a browser without it \
         (Debian: `apt-get install chromium`)",
        if root {
            " even after apt-get install chromium"
        } else {
            " and this is not root, so it was not installed"
        }
    );
}

/// `node` and `npm` on the PATH.
pub fn ensure_node() {
    for tool in ["node", "npm"] {
        let out = Command::new(tool).arg("--version").output();
        match out {
            Ok(o) if o.status.success() => {}
            Ok(o) => panic!(
                "`{tool} --version` failed ({}): {}; the browser checks need Node.js 20+ and npm",
                o.status,
                String::from_utf8_lossy(&o.stderr)
            ),
            Err(e) => panic!(
                "cannot run `{tool}` ({e}); the browser checks need Node.js 20+ and npm on the PATH"
            ),
        }
    }
}

/// A port nothing listens on now (bound, read, released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind 127.0.0.1:0")
        .port()
}

/// Runs `node tests/browser/SCRIPT` with `config` on stdin, killing it after `timeout`; its
/// progress lines (stderr) are echoed (captured by the test harness unless `--nocapture`);
/// returns its JSON report (stdout), or panics with what it printed when there is none.
pub fn run_node_script(script: &str, config: &Value, timeout: Duration) -> Value {
    let path = node_dir().join(script);
    let mut child = Command::new("node")
        .arg(&path)
        .current_dir(manifest_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run `node {}`: {e}", path.display()));
    let input = serde_json::to_vec(config).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let mut out = child.stdout.take().unwrap();
    let stdout = thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err = child.stderr.take().unwrap();
    let stderr = thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            eprintln!("{line}");
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait for node") {
            break st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{script} did not finish within {timeout:?}; its output:\n{}",
                tail(&stderr.join().unwrap_or_default(), 4000)
            );
        }
        thread::sleep(Duration::from_millis(100));
    };
    let _ = writer.join();
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "{script} ({status}) printed no JSON report ({e}).\n--- stdout ---\n{}\n--- stderr ---\n{}",
            tail(&stdout, 4000),
            tail(&stderr, 4000)
        )
    })
}
