//! Shared harness for the integration tests: runs the real `almanac` binary (CLI and server) and
//! talks to it over real HTTP (reqwest for ordinary requests, raw TCP for requests reqwest
//! cannot make). Nothing here imports the `almanac` crate.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::Value;

pub mod browser;
mod http;
pub mod node;
pub mod postgres;
pub mod python;
mod records;
pub mod schema;

// Not every suite uses every helper.
#[allow(unused_imports)]
pub use http::*;
#[allow(unused_imports)]
pub use records::*;

// ---------------------------------------------------------------------------------------------
// Randomness
// ---------------------------------------------------------------------------------------------

/// Randomness for load-style tests (rand's StdRng): a seed replays the same run.
pub struct Rng(rand::rngs::StdRng);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(rand::SeedableRng::seed_from_u64(seed))
    }

    /// A different run each time (tests that print their seed are better; this is for
    /// tests whose outcome must not depend on it).
    pub fn from_entropy() -> Rng {
        Rng(rand::SeedableRng::from_entropy())
    }

    pub fn next(&mut self) -> u64 {
        rand::RngCore::next_u64(&mut self.0)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        rand::Rng::gen_range(&mut self.0, 0..n)
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        rand::seq::SliceRandom::choose(items, &mut self.0)
    }
}

/// A searchable word that only its own record carries: `zq` and twelve random consonants.
/// Without vowels the stemmers leave it alone; with equal lengths no word is a prefix of
/// another; two random words within one edit (search's typo tolerance) are
/// vanishingly unlikely.
pub fn unique_word(rng: &mut Rng) -> String {
    const CONSONANTS: &[u8] = b"bcdfghjkmnpqrstvwxz";
    let mut w = String::from("zq");
    for _ in 0..12 {
        w.push(CONSONANTS[rng.below(CONSONANTS.len() as u64) as usize] as char);
    }
    w
}

/// The package version, which `--version` and `/healthz` report.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The namespace prefix.
pub const NS: &str = "/cal/events/v1";

pub const ALLOW_HEADERS: &str = "Authorization, X-WP-Nonce, Content-Disposition, Content-MD5, Content-Type, If-None-Match, X-HTTP-Method-Override, X-Cal-Min-Seq";
pub const EXPOSE_HEADERS: &str =
    "X-Cal-Total, X-Cal-TotalPages, Link, ETag, Allow, Location, X-Cal-Seq";
pub const ALLOW_METHODS: &str = "OPTIONS, GET, POST, PUT, PATCH, DELETE";
pub const CC_ANON: &str = "no-cache";
pub const CC_AUTH: &str = "no-cache, must-revalidate, max-age=0, no-store, private";
pub const CC_ERROR: &str = "no-store";
pub const JSON_CT: &str = "application/json; charset=UTF-8";

/// Path to the binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_almanac")
}

// ---------------------------------------------------------------------------------------------
// Users
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
pub struct TestUser {
    pub name: &'static str,
    pub role: &'static str,
    pub password: &'static str,
}

pub const ADMIN: TestUser = TestUser {
    name: "admin",
    role: "administrator",
    password: "Admin-pass-0001",
};
pub const EDITOR: TestUser = TestUser {
    name: "editor",
    role: "editor",
    password: "Editor-pass-0002",
};
pub const AUTHOR: TestUser = TestUser {
    name: "author",
    role: "author",
    password: "Author-pass-0003",
};
pub const CONTRIBUTOR: TestUser = TestUser {
    name: "contributor",
    role: "contributor",
    password: "Contributor-pass-0004",
};
pub const SUBSCRIBER: TestUser = TestUser {
    name: "subscriber",
    role: "subscriber",
    password: "Subscriber-pass-0005",
};

/// One user per role, `admin` first (so it gets ID 1).
pub const STANDARD_USERS: [TestUser; 5] = [ADMIN, EDITOR, AUTHOR, CONTRIBUTOR, SUBSCRIBER];

/// `Basic base64(name:password)`.
pub fn basic(name: &str, password: &str) -> String {
    basic_bytes(format!("{name}:{password}").as_bytes())
}

/// `Basic base64(bytes)` for arbitrary payloads (malformed-credential tests).
pub fn basic_bytes(payload: &[u8]) -> String {
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(payload)
    )
}

// ---------------------------------------------------------------------------------------------
// Running CLI commands
// ---------------------------------------------------------------------------------------------

/// Result of one finished command.
#[derive(Debug, Clone)]
pub struct Output {
    /// Exit code; `None` when killed by a signal.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    pub fn describe(&self) -> String {
        format!(
            "exit {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// Builder for one invocation of the binary. ALMANAC_* variables of the test environment are
/// removed; only those given with [`Cmd::env`] are set.
#[derive(Clone, Debug, Default)]
pub struct Cmd {
    args: Vec<String>,
    envs: Vec<(String, String)>,
    stdin: Option<Vec<u8>>,
    cwd: Option<PathBuf>,
    timeout_secs: Option<u64>,
}

pub fn almanac<I, S>(args: I) -> Cmd
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    Cmd::default().args(args)
}

impl Cmd {
    pub fn arg(mut self, a: impl AsRef<str>) -> Self {
        self.args.push(a.as_ref().to_string());
        self
    }
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        for a in args {
            self.args.push(a.as_ref().to_string());
        }
        self
    }
    pub fn env(mut self, k: &str, v: &str) -> Self {
        self.envs.push((k.to_string(), v.to_string()));
        self
    }
    pub fn stdin(mut self, data: &str) -> Self {
        self.stdin = Some(data.as_bytes().to_vec());
        self
    }
    pub fn cwd(mut self, dir: &Path) -> Self {
        self.cwd = Some(dir.to_path_buf());
        self
    }
    /// Kill the command after this many seconds (default 120).
    pub fn timeout(mut self, secs: u64) -> Self {
        self.timeout_secs = Some(secs);
        self
    }

    fn command(&self) -> Command {
        let mut c = Command::new(bin());
        c.args(&self.args);
        for k in [
            "ALMANAC_DATA_DIR",
            "ALMANAC_LISTEN",
            "ALMANAC_METRICS_LISTEN",
            "ALMANAC_PUBLIC_URL",
            "ALMANAC_LOG",
            "ALMANAC_LOG_FORMAT",
            "RUST_LOG",
        ] {
            c.env_remove(k);
        }
        for (k, v) in &self.envs {
            c.env(k, v);
        }
        if let Some(d) = &self.cwd {
            c.current_dir(d);
        }
        c
    }

    /// Runs to completion (killed after 120 s).
    pub fn run(&self) -> Output {
        let mut c = self.command();
        c.stdin(if self.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = c.spawn().expect("spawn almanac");
        if let Some(data) = &self.stdin {
            let mut si = child.stdin.take().unwrap();
            let data = data.clone();
            thread::spawn(move || {
                let _ = si.write_all(&data);
            });
        }
        let mut so = child.stdout.take().unwrap();
        let mut se = child.stderr.take().unwrap();
        let to = thread::spawn(move || {
            let mut b = Vec::new();
            let _ = so.read_to_end(&mut b);
            b
        });
        let te = thread::spawn(move || {
            let mut b = Vec::new();
            let _ = se.read_to_end(&mut b);
            b
        });
        let deadline = Instant::now() + Duration::from_secs(self.timeout_secs.unwrap_or(120));
        let status = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                break child.wait().unwrap();
            }
            thread::sleep(Duration::from_millis(10));
        };
        Output {
            code: status.code(),
            stdout: String::from_utf8_lossy(&to.join().unwrap()).into_owned(),
            stderr: String::from_utf8_lossy(&te.join().unwrap()).into_owned(),
        }
    }
}

/// `almanac user add NAME --role ROLE --password PW --data-dir DIR`, asserting success.
pub fn add_user(dir: &Path, u: &TestUser) {
    let out = almanac([
        "user",
        "add",
        u.name,
        "--role",
        u.role,
        "--password",
        u.password,
        "--data-dir",
    ])
    .arg(dir.to_str().unwrap())
    .run();
    assert_eq!(
        out.code,
        Some(0),
        "user add {} failed: {}",
        u.name,
        out.describe()
    );
}

/// A temporary directory and its `data` subdirectory with `users` provisioned (in order).
pub fn fresh_data_dir(users: &[TestUser]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    for u in users {
        add_user(&dir, u);
    }
    (tmp, dir)
}

/// `serve --listen 127.0.0.1:0 --data-dir DIR`: a server on a free local port over `dir`.
pub fn serve_cmd(dir: &Path) -> Cmd {
    almanac(["serve", "--listen", "127.0.0.1:0", "--data-dir"]).arg(dir.to_str().unwrap())
}

/// The error line of a command refused because another process holds the data directory `dir`.
pub fn locked_message(dir: &Path) -> String {
    format!(
        "error: data directory {} is in use by another almanac process (is \"almanac serve\" running?)",
        dir.display()
    )
}

// ---------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------

/// A running `almanac serve`. Killed (SIGKILL) on drop. A watchdog shell process kills it (and
/// removes the temporary data directory) when the test process exits without dropping it, which
/// is what happens to servers kept in a `static`.
pub struct Server {
    child: Option<Child>,
    watchdog: Option<Child>,
    /// `http://HOST:PORT` of the bound address, from the `listening on` line.
    pub base: String,
    pub addr: SocketAddr,
    /// The public URL `P` the links are expected to use (defaults to `base`).
    pub public: String,
    pub data_dir: PathBuf,
    pub initial_admin_password: Option<String>,
    stdout_lines: Arc<Mutex<Vec<String>>>,
    stdout_closed: Arc<Mutex<bool>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    client: reqwest::blocking::Client,
    _tmp: Option<tempfile::TempDir>,
}

/// A `serve` that exited instead of printing its listening line.
#[derive(Debug)]
pub struct StartFailure {
    pub output: Output,
}

impl Server {
    /// Fresh temporary data dir, `users` provisioned with `user add` (in order), then
    /// `serve --listen 127.0.0.1:0 --data-dir DIR`.
    pub fn start_with_users(users: &[TestUser]) -> Server {
        Server::start_with_users_and(users, |cmd| cmd)
    }

    /// [`Server::start_with_users`], with `extra` applied to the command (flags, environment).
    pub fn start_with_users_and(users: &[TestUser], extra: impl FnOnce(Cmd) -> Cmd) -> Server {
        let (tmp, dir) = fresh_data_dir(users);
        let mut s = Server::start(extra(serve_cmd(&dir)), None, "serve");
        s.data_dir = dir;
        s._tmp = Some(tmp);
        s
    }

    /// [`Server::launch`], panicking (with `what` and the command's output) when it does not start.
    pub fn start(cmd: Cmd, public: Option<&str>, what: &str) -> Server {
        Server::launch(cmd, public)
            .unwrap_or_else(|f| panic!("{what}: the server did not start: {}", f.output.describe()))
    }

    /// Starts `cmd` (a full `serve ...` command) and waits for its listening line.
    /// `public` overrides the expected public URL (default: the bound base URL).
    pub fn launch(cmd: Cmd, public: Option<&str>) -> Result<Server, StartFailure> {
        let data_dir = cmd
            .args
            .iter()
            .position(|a| a == "--data-dir")
            .map(|i| PathBuf::from(&cmd.args[i + 1]))
            .or_else(|| {
                cmd.args
                    .iter()
                    .find_map(|a| a.strip_prefix("--data-dir=").map(PathBuf::from))
            })
            .unwrap_or_default();
        let mut c = cmd.command();
        c.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().expect("spawn almanac serve");
        let pid = child.id();

        let stdout_lines = Arc::new(Mutex::new(Vec::<String>::new()));
        let stdout_closed = Arc::new(Mutex::new(false));
        let stderr = Arc::new(Mutex::new(Vec::<u8>::new()));
        let (tx, rx) = mpsc::channel::<String>();
        {
            let so = child.stdout.take().unwrap();
            let lines = stdout_lines.clone();
            let closed = stdout_closed.clone();
            thread::spawn(move || {
                let mut r = BufReader::new(so);
                loop {
                    let mut l = String::new();
                    match r.read_line(&mut l) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {
                            lines.lock().unwrap().push(l.clone());
                            let _ = tx.send(l);
                        }
                    }
                }
                *closed.lock().unwrap() = true;
            });
        }
        {
            let mut se = child.stderr.take().unwrap();
            let buf = stderr.clone();
            thread::spawn(move || {
                let mut chunk = [0u8; 8192];
                loop {
                    match se.read(&mut chunk) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => buf.lock().unwrap().extend_from_slice(&chunk[..n]),
                    }
                }
            });
        }

        let deadline = Instant::now() + Duration::from_secs(90);
        let mut initial = None;
        let base = loop {
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(line) => {
                    if let Some(pw) = line
                        .strip_suffix('\n')
                        .unwrap_or(&line)
                        .strip_prefix("initial admin password: ")
                    {
                        initial = Some(pw.to_string());
                    }
                    if let Some(u) = line.trim_end_matches('\n').strip_prefix("listening on ") {
                        break u.to_string();
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {}
            }
            if let Some(_st) = child.try_wait().unwrap() {
                // Exited: collect what it printed.
                thread::sleep(Duration::from_millis(100));
                let st = child.wait().unwrap();
                return Err(StartFailure {
                    output: Output {
                        code: st.code(),
                        stdout: stdout_lines.lock().unwrap().concat(),
                        stderr: String::from_utf8_lossy(&stderr.lock().unwrap()).into_owned(),
                    },
                });
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let st = child.wait().unwrap();
                panic!(
                    "server printed no listening line within 90 s (exit {:?})\nstdout: {}\nstderr: {}",
                    st.code(),
                    stdout_lines.lock().unwrap().concat(),
                    String::from_utf8_lossy(&stderr.lock().unwrap())
                );
            }
        };
        let hostport = base
            .strip_prefix("http://")
            .unwrap_or_else(|| panic!("bad listening line: {base:?}"));
        let addr: SocketAddr = hostport
            .to_socket_addrs()
            .unwrap_or_else(|e| panic!("unparsable listening address {hostport:?}: {e}"))
            .next()
            .unwrap();

        // Watchdog: when this test process goes away (closing the pipe), kill the server.
        let watchdog = Command::new("sh")
            .arg("-c")
            .arg(format!("read -r _x; kill -9 {pid} 2>/dev/null; sleep 0.3; if [ -n \"$WD_RM\" ]; then rm -rf \"$WD_RM\"; fi"))
            .env("WD_RM", "")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok();

        let client = reqwest::blocking::Client::builder()
            .no_proxy()
            // As sent: compression is the tests' to ask for and to undo.
            .no_gzip()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(60))
            .pool_max_idle_per_host(0)
            .build()
            .unwrap();
        Ok(Server {
            child: Some(child),
            watchdog,
            public: public
                .map(|s| s.to_string())
                .unwrap_or_else(|| base.clone()),
            base,
            addr,
            data_dir,
            initial_admin_password: initial,
            stdout_lines,
            stdout_closed,
            stderr,
            client,
            _tmp: None,
        })
    }

    /// Makes the watchdog also delete the temporary directory (for servers kept in a `static`).
    pub fn into_static(mut self) -> Server {
        if let (Some(tmp), Some(pid)) = (&self._tmp, self.child.as_ref().map(|c| c.id())) {
            if let Some(mut w) = self.watchdog.take() {
                let _ = w.kill();
                let _ = w.wait();
            }
            self.watchdog = Command::new("sh")
                .arg("-c")
                .arg(format!(
                    "read -r _x; kill -9 {pid} 2>/dev/null; sleep 0.3; rm -rf \"$WD_RM\""
                ))
                .env("WD_RM", tmp.path())
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .ok();
        }
        self
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("server already reaped").id()
    }

    /// Sends a signal by name (`TERM`, `INT`, ...) with the shell's `kill`.
    pub fn signal(&self, sig: &str) {
        let st = Command::new("sh")
            .arg("-c")
            .arg(format!("kill -{} {}", sig, self.pid()))
            .status()
            .expect("run kill");
        assert!(st.success(), "kill -{sig} failed");
    }

    /// SIGTERM, then asserts a graceful exit (code 0) within `within`.
    pub fn stop(&mut self, within: Duration) {
        self.signal("TERM");
        let code = self.wait_exit(within);
        assert_eq!(
            code,
            Some(0),
            "SIGTERM → exit 0; stderr:\n{}",
            self.stderr_text()
        );
    }

    /// Waits for the server to exit; returns its exit code (None if killed by a signal), or
    /// panics after `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<i32> {
        let deadline = Instant::now() + timeout;
        let child = self.child.as_mut().expect("server already reaped");
        loop {
            if let Some(st) = child.try_wait().unwrap() {
                self.child = None;
                // Let the reader threads drain the pipes.
                let d = Instant::now() + Duration::from_secs(2);
                while !*self.stdout_closed.lock().unwrap() && Instant::now() < d {
                    thread::sleep(Duration::from_millis(10));
                }
                return st.code();
            }
            if Instant::now() > deadline {
                panic!(
                    "server did not exit within {timeout:?}; stderr:\n{}",
                    self.stderr_text()
                );
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether the server process has exited.
    pub fn exited(&mut self) -> bool {
        match self.child.as_mut() {
            None => true,
            Some(c) => c.try_wait().unwrap().is_some(),
        }
    }

    pub fn stdout_text(&self) -> String {
        self.stdout_lines.lock().unwrap().concat()
    }
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }

    /// `P + L + suffix`
    pub fn url(&self, suffix: &str) -> String {
        format!("{}{}", self.public, suffix)
    }

    // ---- requests ----

    pub fn req(&self, method: &str, path: &str) -> Req<'_> {
        Req {
            server: self,
            method: method.to_string(),
            path: path.to_string(),
            headers: Vec::new(),
            body: None,
        }
    }
    pub fn get(&self, path: &str) -> Resp {
        self.req("GET", path).send()
    }
    pub fn get_as(&self, path: &str, u: &TestUser) -> Resp {
        self.req("GET", path).user(u).send()
    }

    /// Sends raw bytes on a new TCP connection and parses one response.
    /// `head`: the request is a HEAD (the response has no body).
    pub fn raw(&self, request: &[u8], head: bool) -> Resp {
        raw_exchange(self.addr, request.to_vec(), head)
    }

    /// A raw request: `METHOD TARGET HTTP/1.1`, Host, `Connection: close`, the given header lines
    /// and the body (with Content-Length unless a header already sets the framing).
    pub fn raw_req(
        &self,
        method: &str,
        target: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Resp {
        let mut r = format!(
            "{method} {target} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
            self.addr
        );
        let mut framed = false;
        for (k, v) in headers {
            if k.eq_ignore_ascii_case("content-length")
                || k.eq_ignore_ascii_case("transfer-encoding")
            {
                framed = true;
            }
            r.push_str(&format!("{k}: {v}\r\n"));
        }
        if !framed && !body.is_empty() {
            r.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        r.push_str("\r\n");
        let mut bytes = r.into_bytes();
        bytes.extend_from_slice(body);
        self.raw(&bytes, method == "HEAD")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut w) = self.watchdog.take() {
            let _ = w.kill();
            let _ = w.wait();
        }
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Builder for one reqwest request.
pub struct Req<'a> {
    server: &'a Server,
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Option<Vec<u8>>,
}

impl<'a> Req<'a> {
    pub fn header(mut self, k: &str, v: &str) -> Self {
        self.headers.push((k.to_string(), v.to_string()));
        self
    }
    pub fn user(self, u: &TestUser) -> Self {
        self.auth(u.name, u.password)
    }
    pub fn auth(self, name: &str, password: &str) -> Self {
        let v = basic(name, password);
        self.header("Authorization", &v)
    }
    pub fn body(mut self, b: impl Into<Vec<u8>>) -> Self {
        self.body = Some(b.into());
        self
    }
    pub fn json_body(self, v: &Value) -> Self {
        self.header("Content-Type", "application/json")
            .body(serde_json::to_vec(v).unwrap())
    }
    pub fn send(self) -> Resp {
        let method = reqwest::Method::from_bytes(self.method.as_bytes()).expect("method");
        let is_head = method == reqwest::Method::HEAD;
        let url = format!("{}{}", self.server.base, self.path);
        let mut rb = self.server.client.request(method, &url);
        for (k, v) in &self.headers {
            rb = rb.header(k.as_str(), v.as_str());
        }
        if let Some(b) = self.body {
            rb = rb.body(b);
        }
        let r = rb
            .send()
            .unwrap_or_else(|e| panic!("{} {} failed: {e}", self.method, url));
        let status = r.status().as_u16();
        let headers = r
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_ascii_lowercase(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let body = if is_head {
            Vec::new()
        } else {
            r.bytes().expect("read body").to_vec()
        };
        Resp {
            status,
            headers,
            body,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
pub struct Resp {
    pub status: u16,
    /// Header fields in order, names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    /// First value of a header (case-insensitive name).
    pub fn header(&self, name: &str) -> Option<&str> {
        let n = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == n)
            .map(|(_, v)| v.as_str())
    }
    /// Every value of a header.
    pub fn header_all(&self, name: &str) -> Vec<&str> {
        let n = name.to_ascii_lowercase();
        self.headers
            .iter()
            .filter(|(k, _)| *k == n)
            .map(|(_, v)| v.as_str())
            .collect()
    }
    pub fn has(&self, name: &str) -> bool {
        self.header(name).is_some()
    }
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "body is not JSON ({e}): status {} body {:?}",
                self.status,
                self.text()
            )
        })
    }
    pub fn describe(&self) -> String {
        let t = self.text();
        let t = if t.len() > 2000 {
            format!("{}…", &t[..2000])
        } else {
            t
        };
        format!(
            "status {} headers {:?} body {}",
            self.status, self.headers, t
        )
    }
}

/// Connects, writes `request` (from a separate thread, ignoring write errors, so that a server
/// that answers early does not deadlock us) and reads one response.
pub fn raw_exchange(addr: SocketAddr, request: Vec<u8>, head: bool) -> Resp {
    let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(10)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(15)))
        .unwrap();
    let mut w = stream.try_clone().unwrap();
    let writer = thread::spawn(move || {
        let _ = w.write_all(&request);
        let _ = w.flush();
    });
    let mut rs = stream.try_clone().unwrap();
    let resp = read_response(&mut rs, head);
    let _ = stream.shutdown(Shutdown::Both);
    let _ = writer.join();
    resp
}

/// Reads one HTTP/1.1 response (skipping 1xx interim responses) from `s`.
pub fn read_response(s: &mut impl Read, head: bool) -> Resp {
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 16384];
    loop {
        // Headers
        let end = loop {
            if let Some(p) = find(&buf, b"\r\n\r\n") {
                break p;
            }
            match s.read(&mut chunk) {
                Ok(0) => panic!(
                    "connection closed before a complete response head; got {:?}",
                    String::from_utf8_lossy(&buf)
                ),
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                Err(e) => panic!(
                    "read error before a complete response head ({e}); got {:?}",
                    String::from_utf8_lossy(&buf)
                ),
            }
        };
        let head_text = String::from_utf8_lossy(&buf[..end]).into_owned();
        let mut rest = buf[end + 4..].to_vec();
        let mut lines = head_text.split("\r\n");
        let status_line = lines.next().unwrap();
        let status: u16 = status_line
            .split_whitespace()
            .nth(1)
            .and_then(|x| x.parse().ok())
            .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        if (100..200).contains(&status) {
            buf = rest;
            continue;
        }
        let get = |n: &str| headers.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        let body = if head || status == 204 || status == 304 {
            Vec::new()
        } else if get("transfer-encoding")
            .map(|v| v.to_ascii_lowercase().contains("chunked"))
            .unwrap_or(false)
        {
            decode_chunked(s, &mut rest)
        } else if let Some(cl) = get("content-length") {
            let n: usize = cl.parse().expect("content-length");
            while rest.len() < n {
                match s.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(k) => rest.extend_from_slice(&chunk[..k]),
                }
            }
            rest.truncate(n);
            rest
        } else {
            loop {
                match s.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(k) => rest.extend_from_slice(&chunk[..k]),
                }
            }
            rest
        };
        return Resp {
            status,
            headers,
            body,
        };
    }
}

fn find(h: &[u8], n: &[u8]) -> Option<usize> {
    h.windows(n.len()).position(|w| w == n)
}

fn decode_chunked(s: &mut impl Read, buf: &mut Vec<u8>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut chunk = [0u8; 16384];
    let mut fill = |buf: &mut Vec<u8>, need: &dyn Fn(&[u8]) -> bool| -> bool {
        while !need(buf) {
            match s.read(&mut chunk) {
                Ok(0) | Err(_) => return false,
                Ok(k) => buf.extend_from_slice(&chunk[..k]),
            }
        }
        true
    };
    loop {
        if !fill(buf, &|b| find(b, b"\r\n").is_some()) {
            return out;
        }
        let p = find(buf, b"\r\n").unwrap();
        let line = String::from_utf8_lossy(&buf[..p]).into_owned();
        let size =
            usize::from_str_radix(line.split(';').next().unwrap().trim(), 16).expect("chunk size");
        buf.drain(..p + 2);
        if size == 0 {
            // trailers until empty line
            loop {
                if !fill(buf, &|b| find(b, b"\r\n").is_some()) {
                    return out;
                }
                let p = find(buf, b"\r\n").unwrap();
                buf.drain(..p + 2);
                if p == 0 {
                    return out;
                }
            }
        }
        if !fill(buf, &|b| b.len() >= size + 2) {
            out.extend_from_slice(&buf[..buf.len().min(size)]);
            return out;
        }
        out.extend_from_slice(&buf[..size]);
        buf.drain(..size + 2);
    }
}

// ---------------------------------------------------------------------------------------------
// Assertions
// ---------------------------------------------------------------------------------------------

/// Comma-separated header value → trimmed tokens.
pub fn tokens(v: &str) -> Vec<String> {
    v.split(',')
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

/// Keys of a JSON object, in order.
pub fn keys(v: &Value) -> Vec<String> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .cloned()
        .collect()
}

/// Order-sensitive JSON equality (compares the serialized text).
pub fn same_json(a: &Value, b: &Value) -> bool {
    serde_json::to_string(a).unwrap() == serde_json::to_string(b).unwrap()
}

pub fn assert_json_content_type(r: &Resp) {
    assert_eq!(
        r.header("content-type"),
        Some(JSON_CT),
        "Content-Type; {}",
        r.describe()
    );
}

/// Headers every response carries: nosniff, noindex, Vary, the two always-present CORS headers.
pub fn assert_standard_headers(r: &Resp) {
    assert_eq!(
        r.header("x-content-type-options"),
        Some("nosniff"),
        "X-Content-Type-Options; {}",
        r.describe()
    );
    assert_eq!(
        r.header("x-robots-tag"),
        Some("noindex"),
        "X-Robots-Tag; {}",
        r.describe()
    );
    assert_vary(r);
    assert_eq!(
        r.header("access-control-allow-headers").map(tokens),
        Some(tokens(ALLOW_HEADERS)),
        "Access-Control-Allow-Headers; {}",
        r.describe()
    );
    assert_eq!(
        r.header("access-control-expose-headers").map(tokens),
        Some(tokens(EXPOSE_HEADERS)),
        "Access-Control-Expose-Headers; {}",
        r.describe()
    );
}

/// `Vary: Origin, Authorization, Accept-Encoding` (the tokens, over all Vary fields), and
/// `Accept` on the REST root, which sends browsers to the calendar's pages.
pub fn assert_vary(r: &Resp) {
    let mut got: Vec<String> = r
        .header_all("vary")
        .iter()
        .flat_map(|v| tokens(v))
        .map(|t| t.to_ascii_lowercase())
        .filter(|t| t != "accept")
        .collect();
    got.sort();
    got.dedup();
    let mut want: Vec<String> = ["origin", "authorization", "accept-encoding"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    want.sort();
    assert_eq!(
        got,
        want,
        "Vary must be `Origin, Authorization, Accept-Encoding`; {}",
        r.describe()
    );
}

/// The discovery Link header alone: `<P + L + "/">; rel="https://api.w.org/"`.
pub fn assert_discovery_link(r: &Resp, p_and_l: &str) {
    let links = r.header_all("link");
    assert_eq!(links.len(), 1, "exactly one Link field; {}", r.describe());
    assert_eq!(
        links[0],
        format!("<{p_and_l}/>; rel=\"https://api.w.org/\""),
        "Link; {}",
        r.describe()
    );
}

/// Compact JSON: no whitespace outside strings, no escaped `/`, non-ASCII not escaped, no
/// trailing newline.
pub fn assert_compact_json(body: &[u8]) {
    let text = std::str::from_utf8(body).expect("UTF-8 body");
    assert!(
        !text.ends_with('\n'),
        "JSON body must not end with a newline"
    );
    let mut in_str = false;
    let mut esc = false;
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if in_str {
            if esc {
                esc = false;
                assert!(
                    c != '/',
                    "`/` must not be escaped in JSON output (at char {i})"
                );
                if c == 'u' {
                    let hex: String = chars[i + 1..i + 5].iter().collect();
                    let cp = u32::from_str_radix(&hex, 16).unwrap();
                    assert!(
                        cp < 0x80,
                        "non-ASCII character U+{hex} must be written as itself, not escaped"
                    );
                }
            } else if c == '\\' {
                esc = true;
            } else if c == '"' {
                in_str = false;
            }
        } else if c == '"' {
            in_str = true;
        } else {
            assert!(
                !c.is_whitespace(),
                "JSON must be compact: whitespace outside strings at char {i}: {:?}",
                &text[..text.len().min(200)]
            );
        }
        i += 1;
    }
}

/// Checks the exact error shape and the error-response headers; returns the body.
pub fn assert_error(r: &Resp, status: u16, code: &str) -> Value {
    assert_eq!(r.status, status, "status; {}", r.describe());
    assert_json_content_type(r);
    let v = r.json();
    assert_eq!(
        keys(&v),
        vec!["code", "message", "data"],
        "error body must have exactly code, message, data; {}",
        r.describe()
    );
    assert_eq!(v["code"], code, "error code; {}", r.describe());
    assert!(v["message"].is_string(), "message is a string");
    assert!(v["data"].is_object(), "data is an object");
    assert_eq!(v["data"]["status"], status, "data.status; {}", r.describe());
    assert_eq!(
        r.header("cache-control"),
        Some(CC_ERROR),
        "errors carry Cache-Control: no-store; {}",
        r.describe()
    );
    assert!(!r.has("etag"), "errors carry no ETag; {}", r.describe());
    assert!(
        !r.has("x-cal-total") && !r.has("x-cal-totalpages"),
        "errors carry no X-Cal-Total*"
    );
    v
}

/// Like [`assert_error`] and also checks `data` has only `status`.
pub fn assert_plain_error(r: &Resp, status: u16, code: &str) -> Value {
    let v = assert_error(r, status, code);
    assert_eq!(
        keys(&v["data"]),
        vec!["status"],
        "data holds only status; {}",
        r.describe()
    );
    v
}

/// `rest_invalid_param` with exactly the given parameter names and sub-codes.
pub fn assert_invalid_params(r: &Resp, expected: &[(&str, &str)]) -> Value {
    let expected: Vec<(&str, Option<&str>)> =
        expected.iter().map(|(n, c)| (*n, Some(*c))).collect();
    assert_invalid_param_codes(r, &expected)
}

/// `rest_invalid_param` naming exactly `names`, whatever their sub-codes.
pub fn assert_invalid_param_names(r: &Resp, names: &[&str]) -> Value {
    let expected: Vec<(&str, Option<&str>)> = names.iter().map(|n| (*n, None)).collect();
    assert_invalid_param_codes(r, &expected)
}

/// `rest_invalid_param` naming exactly the given parameters, each with its sub-code where one
/// is given.
pub fn assert_invalid_param_codes(r: &Resp, expected: &[(&str, Option<&str>)]) -> Value {
    let v = assert_error(r, 400, "rest_invalid_param");
    let params = v["data"]["params"]
        .as_object()
        .unwrap_or_else(|| panic!("data.params object; {}", r.describe()));
    let details = v["data"]["details"]
        .as_object()
        .unwrap_or_else(|| panic!("data.details object; {}", r.describe()));
    let mut pk: Vec<&str> = params.keys().map(|k| k.as_str()).collect();
    pk.sort();
    let mut want: Vec<&str> = expected.iter().map(|(n, _)| *n).collect();
    want.sort();
    want.dedup();
    assert_eq!(pk, want, "data.params names; {}", r.describe());
    let mut dk: Vec<&str> = details.keys().map(|k| k.as_str()).collect();
    dk.sort();
    assert_eq!(dk, want, "data.details names; {}", r.describe());
    for (name, sub) in expected {
        assert!(
            params[*name].is_string(),
            "data.params.{name} is a message string"
        );
        let d = &details[*name];
        assert_eq!(
            keys(d),
            vec!["code", "message", "data"],
            "details.{name} shape; {}",
            r.describe()
        );
        assert!(
            d["code"].is_string(),
            "details.{name}.code; {}",
            r.describe()
        );
        if let Some(sub) = sub {
            assert_eq!(d["code"], *sub, "details.{name}.code; {}", r.describe());
        }
        assert!(d["message"].is_string());
        assert_eq!(d["data"]["param"], *name, "details.{name}.data.param");
    }
    v
}

/// `X-Cal-Total` and `X-Cal-TotalPages` repeat the list body's `total` and `total_pages`.
pub fn assert_totals(r: &Resp, v: &Value) {
    assert_eq!(
        r.header("x-cal-total"),
        Some(v["total"].to_string().as_str()),
        "X-Cal-Total; {}",
        r.describe()
    );
    assert_eq!(
        r.header("x-cal-totalpages"),
        Some(v["total_pages"].to_string().as_str()),
        "X-Cal-TotalPages; {}",
        r.describe()
    );
}

/// Gunzips a body.
pub fn gunzip(b: &[u8]) -> Vec<u8> {
    let mut d = flate2::read::GzDecoder::new(b);
    let mut out = Vec::new();
    d.read_to_end(&mut out).expect("valid gzip body");
    out
}

/// Asserts the weak ETag syntax and returns it.
pub fn assert_etag(r: &Resp) -> String {
    let e = r
        .header("etag")
        .unwrap_or_else(|| panic!("ETag expected; {}", r.describe()))
        .to_string();
    let inner = e
        .strip_prefix("W/\"")
        .and_then(|x| x.strip_suffix('"'))
        .unwrap_or_else(|| panic!("ETag must be W/\"…\": {e}"));
    assert_eq!(inner.len(), 16, "ETag has 16 hex digits: {e}");
    assert!(
        inner
            .chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)),
        "ETag lowercase hex: {e}"
    );
    e
}

/// Waits until nothing accepts connections on `addr` (or panics).
pub fn assert_port_closed(addr: SocketAddr) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(300)).is_err() {
            return;
        }
        if Instant::now() > deadline {
            panic!("{addr} still accepts connections after the server exited");
        }
        thread::sleep(Duration::from_millis(50));
    }
}

/// The last `n` bytes of `s` or a little less (from a character boundary), for long outputs in
/// failure messages.
pub fn tail(s: &str, n: usize) -> &str {
    let mut i = s.len().saturating_sub(n);
    while !s.is_char_boundary(i) {
        i += 1;
    }
    &s[i..]
}

/// Unix mode bits (permission part).
pub fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("stat {}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o777
}

// ---------------------------------------------------------------------------------------------
// Threads and waiting
// ---------------------------------------------------------------------------------------------

/// Runs `f` over `items` on 8 threads; results in input order.
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let n = items.len();
    let f = &f;
    let mut out: Vec<(usize, R)> = thread::scope(|sc| {
        let hs: Vec<_> = (0..8)
            .map(|w| {
                sc.spawn(move || {
                    items
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| i % 8 == w)
                        .map(|(i, x)| (i, f(x)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    out.sort_by_key(|(i, _)| *i);
    assert_eq!(out.len(), n);
    out.into_iter().map(|(_, r)| r).collect()
}

/// Calls `probe` every `every` until `done` holds of its result or `within` has passed; returns
/// the last result.
pub fn poll<T>(
    within: Duration,
    every: Duration,
    mut probe: impl FnMut() -> T,
    done: impl Fn(&T) -> bool,
) -> T {
    let deadline = Instant::now() + within;
    loop {
        let got = probe();
        if done(&got) || Instant::now() > deadline {
            return got;
        }
        thread::sleep(every);
    }
}
