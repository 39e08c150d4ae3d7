//! Security properties proved end to end against the real server:
//!
//! - password verification is bounded: floods of guesses (many at once, many names, many
//!   addresses) are all answered — 401, 429 or 503 with the error body of docs/api.md "Errors" —
//!   while the server's peak memory stays small, and callers whose credentials were verified
//!   before are still served at once (docs/operations.md "Login throttling");
//! - a `Basic` header respelled with extra spaces is the same credentials;
//! - every write is seen at once by every later read that depends on it (by ID, by slug, lists,
//!   the event list's term, venue and organizer filters, search), on the writer's connection
//!   and on a fresh one;
//! - search does not look into password-protected events for callers who may not edit them
//!   (docs/api.md "Password-protected events"), and event passwords cannot be guessed at speed;
//! - `Allow` does not tell an unreadable record from a missing one;
//! - any positive search radius is accepted (docs/api.md "Listing events");
//! - words of any length are searchable.
//!
//! Every test starts its own server.

mod common;

use common::*;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::io::{Cursor, ErrorKind, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::sync::{Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------------------------

/// A second author, to look at the first one's records.
const AUTHOR2: TestUser = TestUser {
    name: "author2",
    role: "author",
    password: "Author2-pass-0006",
};

/// The most resident memory a server may have used at its peak, in KiB. An argon2 verification
/// holds about 19 MiB; an idle server holds about 25 MiB.
const PEAK_RSS_LIMIT_KIB: u64 = 300 * 1024;

/// The free failures per user name and per address (docs/operations.md "Login throttling").
const USER_FREE_FAILURES: usize = 10;
const ADDRESS_FREE_FAILURES: usize = 50;

/// The flood tests use both cores for seconds; they run one at a time so that they neither
/// slow each other down nor share the machine's memory at their peaks.
/// They also hold a thousand connections at both ends, so the open-file limit (inherited by the
/// servers they start) is raised first where it is lower.
fn heavy() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    raise_open_file_limit(4096);
    guard
}

fn raise_open_file_limit(wanted: libc::rlim_t) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read and write the one struct passed to them.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < wanted {
            limit.rlim_cur = wanted.min(limit.rlim_max);
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

/// `VmHWM` of the server process: the peak resident memory since it started, in KiB.
fn peak_rss_kib(srv: &Server) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", srv.pid()))
        .expect("read /proc/PID/status of the server");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmHWM in /proc/{}/status:\n{status}", srv.pid()))
}

fn assert_peak_rss_bounded(srv: &Server, what: &str) {
    let peak = peak_rss_kib(srv);
    eprintln!("{what}: peak RSS {} MiB", peak / 1024);
    assert!(
        peak < PEAK_RSS_LIMIT_KIB,
        "{what}: the server's peak resident memory was {} MiB (limit {} MiB)",
        peak / 1024,
        PEAK_RSS_LIMIT_KIB / 1024
    );
}

/// A server for `users` (provisioned with `user add`) and extra generated users named
/// `names` (role subscriber, password `Pw-<name>`), with its temporary directory.
fn start_with_generated_users(users: &[TestUser], names: &[String]) -> (Server, tempfile::TempDir) {
    let (tmp, dir) = fresh_data_dir(users);
    for name in names {
        let out = almanac(["user", "add", name, "--role", "subscriber", "--password"])
            .arg(format!("Pw-{name}"))
            .arg("--data-dir")
            .arg(dir.to_str().unwrap())
            .run();
        assert_eq!(out.code, Some(0), "user add {name}: {}", out.describe());
    }
    let srv = Server::start(serve_cmd(&dir), None, "serve");
    (srv, tmp)
}

/// Percent-encodes a query value.
fn enc(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// Start and end of an event `days` from today (inside the default list window).
fn upcoming(days: i64) -> (String, String) {
    let day = chrono::Utc::now().date_naive() + chrono::Duration::days(days);
    (format!("{day} 10:00:00"), format!("{day} 12:00:00"))
}

fn id_of(v: &Value) -> i64 {
    v["id"]
        .as_i64()
        .unwrap_or_else(|| panic!("no integer id in {v}"))
}

/// IDs of the records of a list body (`key` is the collection name).
fn ids_in(v: &Value, key: &str) -> BTreeSet<i64> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} array in {v}"))
        .iter()
        .map(id_of)
        .collect()
}

fn set(ids: &[i64]) -> BTreeSet<i64> {
    ids.iter().copied().collect()
}

/// A caller's name for messages.
fn caller(who: Option<&TestUser>) -> &'static str {
    who.map(|u| u.name).unwrap_or("anonymous")
}

/// `rest_invalid_param` naming `param` among the refused parameters.
fn assert_refused_param(r: &Resp, param: &str, what: &str) {
    assert_eq!(r.status, 400, "{what}: {}", r.describe());
    let v = assert_error(r, 400, "rest_invalid_param");
    assert!(
        v["data"]["params"].get(param).is_some(),
        "{what}: `{param}` is refused; {}",
        r.describe()
    );
}

// ---------------------------------------------------------------------------------------------
// Floods of raw requests
// ---------------------------------------------------------------------------------------------

/// One request of a flood.
struct Shot {
    /// The client address (any 127.x.y.z reaches the loopback server).
    from: Ipv4Addr,
    /// The `Authorization` value.
    authorization: String,
    /// What a refusal of this request is called when it is a 401.
    code_401: &'static str,
}

impl Shot {
    fn guess(from: Ipv4Addr, name: &str, password: &str, known: bool) -> Shot {
        Shot {
            from,
            authorization: basic(name, password),
            code_401: if known {
                "incorrect_password"
            } else {
                "invalid_username"
            },
        }
    }
}

/// A TCP connection to `to` from the local address `from`.
fn connect_from(from: Ipv4Addr, to: SocketAddr) -> TcpStream {
    use std::os::fd::FromRawFd;
    if from == Ipv4Addr::LOCALHOST {
        return TcpStream::connect(to).expect("connect");
    }
    let SocketAddr::V4(to) = to else {
        panic!("the server listens on IPv4")
    };
    let sockaddr = |ip: Ipv4Addr, port: u16| libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(ip).to_be(),
        },
        sin_zero: [0; 8],
    };
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: plain socket calls on a descriptor owned by the TcpStream made from it at once
    // (closed on drop); the address structures outlive the calls that read them.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
        let stream = TcpStream::from_raw_fd(fd);
        let local = sockaddr(from, 0);
        let rc = libc::bind(fd, &local as *const _ as *const libc::sockaddr, len);
        assert_eq!(rc, 0, "bind {from}: {}", std::io::Error::last_os_error());
        let remote = sockaddr(*to.ip(), to.port());
        let rc = libc::connect(fd, &remote as *const _ as *const libc::sockaddr, len);
        assert_eq!(
            rc,
            0,
            "connect from {from}: {}",
            std::io::Error::last_os_error()
        );
        stream
    }
}

fn request_bytes(addr: SocketAddr, path: &str, authorization: &str) -> Vec<u8> {
    format!(
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {authorization}\r\nConnection: close\r\n\r\n"
    )
    .into_bytes()
}

/// The path every flood asks for (small answers when the credentials are good).
fn flood_path() -> String {
    format!("{NS}/tags")
}

/// Opens one connection per shot, then sends every request: all of them are in flight at once.
fn fire(addr: SocketAddr, shots: &[Shot]) -> Vec<TcpStream> {
    let mut conns: Vec<TcpStream> = shots.iter().map(|s| connect_from(s.from, addr)).collect();
    for (c, s) in conns.iter_mut().zip(shots) {
        c.write_all(&request_bytes(addr, &flood_path(), &s.authorization))
            .expect("send a flood request");
    }
    conns
}

/// Reads one answer from a connection the server closes after answering; `Err` describes a
/// connection dropped without a complete answer.
fn answer(mut c: TcpStream) -> Result<Resp, String> {
    c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 16384];
    loop {
        match c.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(format!(
                    "no complete answer within 30 s (got {} bytes)",
                    bytes.len()
                ))
            }
            Err(e) => {
                if bytes.is_empty() {
                    return Err(format!("connection failed without an answer: {e}"));
                }
                break;
            }
        }
    }
    if !bytes.windows(4).any(|w| w == b"\r\n\r\n") {
        return Err(format!(
            "connection closed without a complete answer: {:?}",
            String::from_utf8_lossy(&bytes)
        ));
    }
    Ok(read_response(&mut Cursor::new(bytes), false))
}

/// How many of `conns` have no answer (nor end) waiting yet.
fn still_unanswered(conns: &[TcpStream]) -> usize {
    let mut probe = [0u8; 1];
    conns
        .iter()
        .filter(|c| {
            c.set_nonblocking(true).unwrap();
            let pending = matches!(c.peek(&mut probe), Err(e) if e.kind() == ErrorKind::WouldBlock);
            c.set_nonblocking(false).unwrap();
            pending
        })
        .count()
}

/// Tally of a flood's answers by status.
#[derive(Debug, Default)]
struct Tally {
    unauthorized: usize,
    throttled: usize,
    busy: usize,
}

/// Checks that a refused guess is 401, 429 or 503 with the error body and headers of
/// docs/api.md "Errors" (and `Retry-After` on 429 and 503); counts it.
fn check_refusal(r: &Resp, shot: &Shot, what: &str, tally: &mut Tally) {
    let code = match r.status {
        401 => shot.code_401,
        429 => "rest_too_many_attempts",
        503 => "rest_authentication_busy",
        _ => panic!("{what}: a guess must get 401, 429 or 503; {}", r.describe()),
    };
    let v = assert_error(r, r.status, code);
    match r.status {
        401 => {
            assert_eq!(keys(&v["data"]), ["status"], "{what}; {}", r.describe());
            tally.unauthorized += 1;
        }
        _ => {
            assert_retry_after(r, &v, what);
            if r.status == 429 {
                tally.throttled += 1;
            } else {
                tally.busy += 1;
            }
        }
    }
}

/// Reads every answer of a flood and checks each refusal.
fn refusals(conns: Vec<TcpStream>, shots: &[Shot], what: &str) -> Tally {
    let mut tally = Tally::default();
    for (i, (c, shot)) in conns.into_iter().zip(shots).enumerate() {
        match answer(c) {
            Ok(r) => check_refusal(&r, shot, &format!("{what}, request #{i}"), &mut tally),
            Err(e) => panic!("{what}, request #{i} from {}: {e}", shot.from),
        }
    }
    eprintln!("{what}: {tally:?}");
    tally
}

/// 11 guesses for each generated user (their free failures and the one that locks the name),
/// spread over as many addresses 127.0.1.x as needed for none of them to pass its own free
/// failures: every one of these guesses is admitted and needs a verifier. Then `unknown`
/// guesses with invented names from 127.0.0.1, which lock that address.
fn guesses_from_many_addresses(names: &[String], unknown: usize) -> Vec<Shot> {
    let per_address = 45;
    let mut shots = Vec::new();
    for round in 0..=USER_FREE_FAILURES {
        for name in names {
            let n = shots.len();
            let from = Ipv4Addr::new(127, 0, 1, 1 + (n / per_address) as u8);
            shots.push(Shot::guess(from, name, &format!("wrong-{round}"), true));
        }
    }
    for i in 0..unknown {
        shots.push(Shot::guess(
            Ipv4Addr::LOCALHOST,
            &format!("nobody-{i}"),
            &format!("guess-{i}"),
            false,
        ));
    }
    shots
}

fn generated_names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("member{i:02}")).collect()
}

// ---------------------------------------------------------------------------------------------
// 1. Bounded password verification
// ---------------------------------------------------------------------------------------------

#[test]
fn sixty_four_concurrent_wrong_passwords_for_one_user_are_answered_in_bounded_memory() {
    let _heavy = heavy();
    let srv = Server::start_with_users(&[ADMIN]);
    let shots: Vec<Shot> = (0..64)
        .map(|i| Shot::guess(Ipv4Addr::LOCALHOST, ADMIN.name, &format!("wrong-{i}"), true))
        .collect();
    let conns = fire(srv.addr, &shots);
    let tally = refusals(conns, &shots, "64 guesses for admin");
    assert_peak_rss_bounded(&srv, "64 concurrent guesses");
    // Attempts are counted before they are verified: the free failures and the one that locks
    // the name get a verifier, the others are refused unchecked. (Each further lock doubles, so
    // even requests spread over seconds could add only one or two.)
    let checked = tally.unauthorized + tally.busy;
    assert!(
        checked <= USER_FREE_FAILURES + 3,
        "only the free failures are verified: {tally:?}"
    );
    assert!(tally.throttled >= 64 - USER_FREE_FAILURES - 3, "{tally:?}");
    // The right password still works once the lock is over.
    thread::sleep(Duration::from_millis(2100));
    let r = srv.get_as(NS, &ADMIN);
    assert_eq!(r.status, 200, "{}", r.describe());
}

#[test]
fn a_thousand_concurrent_guesses_get_json_refusals_in_bounded_memory() {
    let _heavy = heavy();
    let srv = Server::start_with_users(&[ADMIN, EDITOR]);
    // Known and unknown names, every password different, all from one address.
    let shots: Vec<Shot> = (0..1000)
        .map(|i| match i % 3 {
            0 => Shot::guess(Ipv4Addr::LOCALHOST, ADMIN.name, &format!("a-{i}"), true),
            1 => Shot::guess(Ipv4Addr::LOCALHOST, EDITOR.name, &format!("e-{i}"), true),
            _ => Shot::guess(
                Ipv4Addr::LOCALHOST,
                &format!("ghost{i}"),
                &format!("g-{i}"),
                false,
            ),
        })
        .collect();
    let conns = fire(srv.addr, &shots);
    let tally = refusals(conns, &shots, "1,000 guesses");
    assert_peak_rss_bounded(&srv, "1,000 concurrent guesses");
    // The address is locked after its free failures; the doubling windows leave room for a
    // few more only if the requests were spread over many seconds.
    assert!(
        tally.unauthorized + tally.busy <= ADDRESS_FREE_FAILURES + 5,
        "only the address's free failures are checked: {tally:?}"
    );
    // Anonymous requests are never throttled.
    assert_eq!(srv.get(NS).status, 200);
}

#[test]
fn guesses_beyond_what_the_verifiers_can_check_in_two_seconds_get_503_with_retry_after() {
    let _heavy = heavy();
    // 48 accounts × 11 guesses from 12 addresses: no name and no address passes its free
    // failures, so each of the 528 guesses needs an argon2 run (tens of milliseconds each, a
    // few at a time): far more than the verifiers can do before the 2 s wait runs out.
    let names = generated_names(48);
    let (srv, _tmp) = start_with_generated_users(&[], &names);
    let shots = guesses_from_many_addresses(&names, 0);
    assert_eq!(shots.len(), 528);
    let conns = fire(srv.addr, &shots);
    let tally = refusals(conns, &shots, "528 admitted guesses");
    assert_peak_rss_bounded(&srv, "528 concurrent guesses from 12 addresses");
    // No name or address gets more guesses than its free failures plus one, so 429s are rare;
    // one was seen once under a loaded CI machine, and 429 is a valid answer to a guess.
    assert!(
        tally.throttled <= 5,
        "hardly any guess is throttled: {tally:?}"
    );
    assert!(
        tally.busy > 0,
        "requests that find no free verifier within 2 s get 503: {tally:?}"
    );
    assert!(
        tally.unauthorized > 0,
        "some guesses were verified: {tally:?}"
    );
    // The accounts are not locked for long: their owners log in after the flood.
    let r = srv
        .req("GET", NS)
        .auth(&names[0], &format!("Pw-{}", names[0]))
        .send();
    assert_eq!(
        r.status,
        200,
        "a real login after the flood: {}",
        r.describe()
    );
}

#[test]
fn a_verified_user_is_served_within_a_second_while_a_guessing_flood_keeps_every_verifier_busy() {
    let _heavy = heavy();
    let names = generated_names(48);
    let (srv, _tmp) = start_with_generated_users(&[EDITOR], &names);
    // The editor logs in once before the flood.
    let r = srv.get_as(&flood_path(), &EDITOR);
    assert_eq!(r.status, 200, "{}", r.describe());

    // 528 guesses that each need a verifier, and 472 with invented names from the editor's own
    // address, which lock it: 1,000 requests at once.
    let shots = guesses_from_many_addresses(&names, 472);
    assert_eq!(shots.len(), 1000);
    let mut editor = TcpStream::connect(srv.addr).unwrap();
    let conns = fire(srv.addr, &shots);
    // Let the verifiers fill up and the address lock.
    thread::sleep(Duration::from_millis(300));

    let request = request_bytes(
        srv.addr,
        &flood_path(),
        &basic(EDITOR.name, EDITOR.password),
    );
    editor
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let started = Instant::now();
    editor.write_all(&request).unwrap();
    let r = read_response(&mut editor, false);
    let took = started.elapsed();
    let pending = still_unanswered(&conns);
    eprintln!("the verified editor was answered after {took:?}; {pending} guesses were pending");

    assert_eq!(r.status, 200, "the verified editor: {}", r.describe());
    assert_eq!(r.header("cache-control"), Some(CC_AUTH), "{}", r.describe());
    assert!(
        took < Duration::from_secs(1),
        "the verified editor was answered after {took:?}"
    );
    assert!(
        pending > 0,
        "the flood was still being answered when the editor got its answer"
    );
    let tally = refusals(conns, &shots, "1,000 guesses");
    assert_peak_rss_bounded(&srv, "a 1,000-guess flood");
    assert!(tally.throttled > 0, "the address was locked: {tally:?}");
}

#[test]
fn basic_credentials_respelled_with_extra_spaces_are_served_from_the_cache() {
    let _heavy = heavy();
    let srv = Server::start_with_users(&[ADMIN]);
    // Verified once, spelled the usual way.
    assert_eq!(srv.get_as(&flood_path(), &ADMIN).status, 200);

    // Lock the name (wrong guesses past the free failures, twice more after each window, so
    // that the last lock lasts 4 s). Credentials that are not remembered as verified are now
    // refused unchecked.
    for i in 0..=USER_FREE_FAILURES {
        let r = srv
            .req("GET", NS)
            .auth(ADMIN.name, &format!("no-{i}"))
            .send();
        assert_plain_error(&r, 401, "incorrect_password");
    }
    for (i, wait) in [1100, 2100].into_iter().enumerate() {
        thread::sleep(Duration::from_millis(wait));
        let r = srv
            .req("GET", NS)
            .auth(ADMIN.name, &format!("late-{i}"))
            .send();
        assert_plain_error(&r, 401, "incorrect_password");
    }
    let r = srv.req("GET", NS).auth(ADMIN.name, "not-remembered").send();
    assert_eq!(r.status, 429, "the name is locked; {}", r.describe());

    // `Basic` + 1..200 spaces + the same base64, all at once: the same credentials.
    let encoded = basic(ADMIN.name, ADMIN.password)["Basic ".len()..].to_string();
    let shots: Vec<Shot> = (1..=200)
        .map(|n| Shot {
            from: Ipv4Addr::LOCALHOST,
            authorization: format!("Basic{}{encoded}", " ".repeat(n)),
            code_401: "incorrect_password",
        })
        .collect();
    let conns = fire(srv.addr, &shots);
    for (i, c) in conns.into_iter().enumerate() {
        let r = answer(c).unwrap_or_else(|e| panic!("respelling with {} spaces: {e}", i + 1));
        assert_eq!(
            r.status,
            200,
            "respelling with {} spaces: {}",
            i + 1,
            r.describe()
        );
        assert_eq!(r.header("cache-control"), Some(CC_AUTH));
    }
    // The lock held throughout: unverified credentials are still refused after the flood.
    let r = srv.req("GET", NS).auth(ADMIN.name, "still-locked").send();
    assert_eq!(
        r.status,
        429,
        "the name stayed locked during the respellings; {}",
        r.describe()
    );
    assert_peak_rss_bounded(&srv, "200 respelled credentials");
}

// ---------------------------------------------------------------------------------------------
// 2. Read-your-writes
// ---------------------------------------------------------------------------------------------

/// One kept-alive connection, used for a test's writes and for reads right after them.
struct Conn {
    addr: SocketAddr,
    stream: TcpStream,
}

impl Conn {
    fn open(addr: SocketAddr) -> Conn {
        let stream = TcpStream::connect(addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        Conn { addr, stream }
    }

    fn send(
        &mut self,
        method: &str,
        path: &str,
        who: Option<&TestUser>,
        body: Option<&Value>,
    ) -> Resp {
        let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\n", self.addr);
        if let Some(u) = who {
            head.push_str(&format!("Authorization: {}\r\n", basic(u.name, u.password)));
        }
        let body = body.map(|b| serde_json::to_vec(b).unwrap());
        if let Some(b) = &body {
            head.push_str(&format!(
                "Content-Type: application/json\r\nContent-Length: {}\r\n",
                b.len()
            ));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(body.as_deref().unwrap_or_default());
        self.stream
            .write_all(&bytes)
            .unwrap_or_else(|e| panic!("{method} {path} on the kept-alive connection: {e}"));
        read_response(&mut self.stream, method == "HEAD")
    }
}

/// Writes on one connection, and reads each dependent answer twice: on that same connection
/// and on a fresh one.
struct Walk<'a> {
    srv: &'a Server,
    conn: Conn,
    /// What was last written, for failure messages.
    step: String,
}

impl<'a> Walk<'a> {
    fn new(srv: &'a Server) -> Walk<'a> {
        Walk {
            srv,
            conn: Conn::open(srv.addr),
            step: "start".into(),
        }
    }

    /// A write as the administrator on the kept connection; returns the answer's body.
    fn write(&mut self, method: &str, path: &str, body: Option<Value>, status: u16) -> Value {
        self.step = format!("{method} {path} {}", body.clone().unwrap_or(Value::Null));
        let r = self.conn.send(method, path, Some(&ADMIN), body.as_ref());
        assert_eq!(r.status, status, "{}: {}", self.step, r.describe());
        r.json()
    }

    /// `GET path` on the kept connection and on a fresh one, both answering `status`.
    fn read(&mut self, path: &str, who: Option<&TestUser>, status: u16) -> Vec<Value> {
        let same = self.conn.send("GET", path, who, None);
        let fresh = self.srv.send("GET", path, who, None);
        let mut bodies = Vec::new();
        for (how, r) in [("same connection", same), ("fresh connection", fresh)] {
            assert_eq!(
                r.status,
                status,
                "after {}: GET {path} on the {how}: {}",
                self.step,
                r.describe()
            );
            bodies.push(r.json());
        }
        bodies
    }

    /// Reads a record (anonymously unless `who`) and checks `field` of both answers.
    fn field(&mut self, path: &str, who: Option<&TestUser>, field: &str, want: Value) {
        for v in self.read(path, who, 200) {
            assert_eq!(
                v[field], want,
                "after {}: GET {path} `{field}`; {v}",
                self.step
            );
        }
    }

    /// A list (anonymously unless `who`) whose `key` records are exactly `want`.
    fn list(&mut self, path: &str, who: Option<&TestUser>, key: &str, want: &[i64]) {
        for v in self.read(path, who, 200) {
            assert_eq!(
                ids_in(&v, key),
                set(want),
                "after {}: GET {path}",
                self.step
            );
        }
    }

    /// A read refused with 400 naming `param`.
    fn refused(&mut self, path: &str, param: &str) {
        let same = self.conn.send("GET", path, None, None);
        let fresh = self.srv.get(path);
        for (how, r) in [("same connection", same), ("fresh connection", fresh)] {
            assert_refused_param(
                &r,
                param,
                &format!("after {}: GET {path} on the {how}", self.step),
            );
        }
    }

    /// A read refused with `status` and `code`.
    fn error(&mut self, path: &str, who: Option<&TestUser>, status: u16, code: &str) {
        let same = self.conn.send("GET", path, who, None);
        let fresh = self.srv.send("GET", path, who, None);
        for (how, r) in [("same connection", same), ("fresh connection", fresh)] {
            assert_eq!(
                r.status,
                status,
                "after {}: GET {path} on the {how}: {}",
                self.step,
                r.describe()
            );
            assert_error(&r, status, code);
        }
    }

    /// IDs of an embedded list (`categories`, `tags`, `organizer`) of an event read by ID.
    fn embedded(&mut self, event: i64, field: &str) -> Vec<BTreeSet<i64>> {
        self.read(&format!("{NS}/events/{event}"), Some(&ADMIN), 200)
            .iter()
            .map(|v| {
                v[field]
                    .as_array()
                    .unwrap_or_else(|| panic!("event `{field}` is an array: {v}"))
                    .iter()
                    .map(id_of)
                    .collect()
            })
            .collect()
    }

    fn assert_embedded(&mut self, event: i64, field: &str, want: &[i64]) {
        let step = self.step.clone();
        for got in self.embedded(event, field) {
            assert_eq!(got, set(want), "after {step}: event {event} `{field}`");
        }
    }

    /// A published upcoming event with `extra` fields, written on the kept connection.
    fn event(&mut self, title: &str, extra: Value) -> Value {
        let (start, end) = upcoming(30);
        let mut body = json!({
            "title": title,
            "start_date": start,
            "end_date": end,
            "status": "publish",
        });
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        self.write("POST", &format!("{NS}/events"), Some(body), 201)
    }
}

/// Create, rename and delete a category or tag (`coll` is also the event list's filter).
fn term_writes_are_seen_at_once(coll: &str, seed: u64) {
    let srv = Server::start_with_users(&[ADMIN]);
    let mut rng = Rng::new(seed);
    let mut w = Walk::new(&srv);
    let terms = format!("{NS}/{coll}");
    let events = format!("{NS}/events");

    // Create: readable by ID, listed by slug and by search, and a valid filter at once (no
    // event carries it yet).
    let w1 = unique_word(&mut rng);
    let s1 = format!("{w1}-one");
    let t = w.write(
        "POST",
        &terms,
        Some(json!({"name": format!("Term {w1}"), "slug": s1})),
        201,
    );
    let id = id_of(&t);
    assert_eq!(t["slug"], s1.as_str());
    w.field(&format!("{terms}/{id}"), None, "slug", json!(s1));
    w.list(
        &format!("{terms}?hide_empty=false&slug={s1}"),
        None,
        coll,
        &[id],
    );
    w.list(
        &format!("{terms}?hide_empty=false&search={w1}"),
        None,
        coll,
        &[id],
    );
    w.list(&format!("{events}?{coll}={s1}"), None, "events", &[]);
    w.list(&format!("{events}?{coll}={id}"), None, "events", &[]);

    // An event carrying it: the filter finds it, the term counts it.
    let we = unique_word(&mut rng);
    let ev = id_of(&w.event(&format!("Show {we}"), json!({ coll: [id] })));
    w.list(&format!("{events}?{coll}={s1}"), None, "events", &[ev]);
    w.list(&format!("{events}?{coll}={id}"), None, "events", &[ev]);
    w.field(&format!("{terms}/{id}"), None, "count", json!(1));
    w.list(&format!("{terms}?slug={s1}"), None, coll, &[id]);
    w.list(&format!("{terms}?post={ev}"), None, coll, &[id]);
    w.assert_embedded(ev, coll, &[id]);

    // A subcategory: the parent's filter takes in its events at once.
    let mut child = None;
    if coll == "categories" {
        let wc = unique_word(&mut rng);
        let c = w.write(
            "POST",
            &terms,
            Some(json!({"name": format!("Child {wc}"), "parent": id})),
            201,
        );
        let c = id_of(&c);
        let ev2 = id_of(&w.event(&format!("Show {wc}"), json!({ coll: [c] })));
        w.list(&format!("{events}?{coll}={s1}"), None, "events", &[ev, ev2]);
        w.list(&format!("{events}?{coll}={c}"), None, "events", &[ev2]);
        child = Some((c, ev2));
    }

    // Rename: the new slug and name are seen everywhere at once, the old ones nowhere.
    let w2 = unique_word(&mut rng);
    let s2 = format!("{w2}-two");
    w.write(
        "POST",
        &format!("{terms}/{id}"),
        Some(json!({"name": format!("Term {w2}"), "slug": s2})),
        200,
    );
    w.field(&format!("{terms}/{id}"), None, "slug", json!(s2));
    w.field(
        &format!("{terms}/{id}"),
        None,
        "name",
        json!(format!("Term {w2}")),
    );
    w.list(
        &format!("{terms}?hide_empty=false&slug={s2}"),
        None,
        coll,
        &[id],
    );
    w.list(
        &format!("{terms}?hide_empty=false&slug={s1}"),
        None,
        coll,
        &[],
    );
    w.list(
        &format!("{terms}?hide_empty=false&search={w2}"),
        None,
        coll,
        &[id],
    );
    w.list(
        &format!("{terms}?hide_empty=false&search={w1}"),
        None,
        coll,
        &[],
    );
    let with_child = |ev: i64| -> Vec<i64> {
        match child {
            Some((_, ev2)) => vec![ev, ev2],
            None => vec![ev],
        }
    };
    w.list(
        &format!("{events}?{coll}={s2}"),
        None,
        "events",
        &with_child(ev),
    );
    w.list(
        &format!("{events}?{coll}={id}"),
        None,
        "events",
        &with_child(ev),
    );
    w.refused(&format!("{events}?{coll}={s1}"), coll);
    for v in w.read(&format!("{events}/{ev}"), None, 200) {
        assert_eq!(v[coll][0]["slug"], s2.as_str(), "after the rename: {v}");
    }

    // Delete: gone from reads, lists, filters and the event at once.
    w.write("DELETE", &format!("{terms}/{id}"), None, 200);
    w.refused(&format!("{terms}/{id}"), "id");
    w.list(
        &format!("{terms}?hide_empty=false&slug={s2}"),
        None,
        coll,
        &[],
    );
    w.list(
        &format!("{terms}?hide_empty=false&search={w2}"),
        None,
        coll,
        &[],
    );
    w.refused(&format!("{events}?{coll}={s2}"), coll);
    w.refused(&format!("{events}?{coll}={id}"), coll);
    w.assert_embedded(ev, coll, &[]);
    w.list(&format!("{events}?search={we}"), None, "events", &[ev]);
    if let Some((c, ev2)) = child {
        // The child moved up to the top level and still filters its event.
        w.field(&format!("{terms}/{c}"), None, "parent", json!(0));
        w.list(&format!("{events}?{coll}={c}"), None, "events", &[ev2]);
    }
}

#[test]
fn category_writes_are_seen_at_once_by_every_read() {
    term_writes_are_seen_at_once("categories", 0xCA7);
}

#[test]
fn tag_writes_are_seen_at_once_by_every_read() {
    term_writes_are_seen_at_once("tags", 0x7A6);
}

/// Create, rename and trash a venue or organizer (`field` is its name field, also the event's
/// field and the event list's filter).
fn linked_writes_are_seen_at_once(coll: &str, field: &str, seed: u64) {
    let srv = Server::start_with_users(&[ADMIN]);
    let mut rng = Rng::new(seed);
    let mut w = Walk::new(&srv);
    let records = format!("{NS}/{coll}");
    let events = format!("{NS}/events");
    let is_venue = field == "venue";

    // Create.
    let w1 = unique_word(&mut rng);
    let v = w.write(
        "POST",
        &records,
        Some(json!({ field: format!("Place {w1}"), "status": "publish" })),
        201,
    );
    let id = id_of(&v);
    let slug = v["slug"].as_str().expect("slug").to_string();
    w.field(
        &format!("{records}/{id}"),
        None,
        field,
        json!(format!("Place {w1}")),
    );
    w.field(&format!("{records}/by-slug/{slug}"), None, "id", json!(id));
    w.list(&format!("{records}?search={w1}"), None, coll, &[id]);
    w.list(&format!("{events}?{field}={id}"), None, "events", &[]);

    // An event linking it: the filter, the event search (the linked name is searchable) and
    // the record's `event` filter see it.
    let we = unique_word(&mut rng);
    let link = if is_venue { json!(id) } else { json!([id]) };
    let ev = id_of(&w.event(&format!("Show {we}"), json!({ field: link })));
    w.list(&format!("{events}?{field}={id}"), None, "events", &[ev]);
    w.list(&format!("{events}?search={w1}"), None, "events", &[ev]);
    w.list(&format!("{records}?event={ev}"), None, coll, &[id]);
    w.list(
        &format!("{records}?search={w1}&has_events=true"),
        None,
        coll,
        &[id],
    );

    // Rename: the new name is found at once, on the record and through the event.
    let w2 = unique_word(&mut rng);
    w.write(
        "POST",
        &format!("{records}/{id}"),
        Some(json!({ field: format!("Place {w2}") })),
        200,
    );
    w.field(
        &format!("{records}/{id}"),
        None,
        field,
        json!(format!("Place {w2}")),
    );
    w.field(
        &format!("{records}/by-slug/{slug}"),
        None,
        field,
        json!(format!("Place {w2}")),
    );
    w.list(&format!("{records}?search={w2}"), None, coll, &[id]);
    w.list(&format!("{records}?search={w1}"), None, coll, &[]);
    w.list(&format!("{events}?search={w2}"), None, "events", &[ev]);
    w.list(&format!("{events}?search={w1}"), None, "events", &[]);
    for e in w.read(&format!("{events}/{ev}"), None, 200) {
        let embedded = if is_venue { &e[field] } else { &e[field][0] };
        assert_eq!(
            embedded[field],
            format!("Place {w2}").as_str(),
            "after the rename: {e}"
        );
    }

    // Trash: out of the lists, unlinked from the event, its slug free.
    w.write("DELETE", &format!("{records}/{id}"), None, 200);
    w.field(
        &format!("{records}/{id}"),
        Some(&ADMIN),
        "status",
        json!("trash"),
    );
    w.refused(&format!("{records}/by-slug/{slug}"), "slug");
    w.list(&format!("{records}?search={w2}"), None, coll, &[]);
    w.list(
        &format!("{records}?search={w2}&status=trash"),
        Some(&ADMIN),
        coll,
        &[id],
    );
    w.list(&format!("{records}?event={ev}"), None, coll, &[]);
    w.list(&format!("{events}?{field}={id}"), None, "events", &[]);
    w.list(&format!("{events}?search={w2}"), None, "events", &[]);
    w.list(&format!("{events}?search={we}"), None, "events", &[ev]);
    for e in w.read(&format!("{events}/{ev}"), None, 200) {
        assert_eq!(e[field], json!([]), "after the trash: {e}");
    }
}

#[test]
fn venue_writes_are_seen_at_once_by_every_read() {
    linked_writes_are_seen_at_once("venues", "venue", 0x7E4);
}

#[test]
fn organizer_writes_are_seen_at_once_by_every_read() {
    linked_writes_are_seen_at_once("organizers", "organizer", 0x046);
}

#[test]
fn event_writes_are_seen_at_once_by_every_read() {
    let srv = Server::start_with_users(&[ADMIN]);
    let mut rng = Rng::new(0xE7E);
    let mut w = Walk::new(&srv);
    let events = format!("{NS}/events");
    let mut term = |w: &mut Walk, coll: &str| {
        let word = unique_word(&mut rng);
        let v = w.write(
            "POST",
            &format!("{NS}/{coll}"),
            Some(json!({ "name": word })),
            201,
        );
        (id_of(&v), v["slug"].as_str().unwrap().to_string())
    };
    let (cat_a, cat_a_slug) = term(&mut w, "categories");
    let (cat_b, cat_b_slug) = term(&mut w, "categories");
    let (tag, tag_slug) = term(&mut w, "tags");
    // New terms are valid filters at once, before any event carries them.
    for filter in [
        format!("categories={cat_a_slug},{cat_b}"),
        format!("tags={tag_slug}"),
    ] {
        w.list(&format!("{events}?{filter}"), None, "events", &[]);
    }
    let mut linked = |w: &mut Walk, coll: &str, field: &str| {
        let word = unique_word(&mut rng);
        id_of(&w.write(
            "POST",
            &format!("{NS}/{coll}"),
            Some(json!({ field: word })),
            201,
        ))
    };
    let venue_a = linked(&mut w, "venues", "venue");
    let venue_b = linked(&mut w, "venues", "venue");
    let organizer = linked(&mut w, "organizers", "organizer");
    let [w1, d1, w2, d2] = [(); 4].map(|_| unique_word(&mut rng));

    // Create.
    let v = w.event(
        &format!("Show {w1}"),
        json!({
            "description": format!("Notes {d1}"),
            "categories": [cat_a],
            "tags": [tag],
            "venue": venue_a,
            "organizer": [organizer],
        }),
    );
    let ev = id_of(&v);
    let slug = v["slug"].as_str().unwrap().to_string();
    w.field(
        &format!("{events}/{ev}"),
        None,
        "title",
        json!(format!("Show {w1}")),
    );
    w.field(&format!("{events}/by-slug/{slug}"), None, "id", json!(ev));
    w.list(&format!("{events}?search={w1}"), None, "events", &[ev]);
    w.list(&format!("{events}?search={d1}"), None, "events", &[ev]);
    w.list(
        &format!("{events}?categories={cat_a_slug}"),
        None,
        "events",
        &[ev],
    );
    w.list(
        &format!("{events}?categories={cat_a}"),
        None,
        "events",
        &[ev],
    );
    w.list(&format!("{events}?tags={tag_slug}"), None, "events", &[ev]);
    w.list(&format!("{events}?venue={venue_a}"), None, "events", &[ev]);
    w.list(
        &format!("{events}?organizer={organizer}"),
        None,
        "events",
        &[ev],
    );
    w.field(&format!("{NS}/categories/{cat_a}"), None, "count", json!(1));
    w.list(
        &format!("{NS}/categories?post={ev}"),
        None,
        "categories",
        &[cat_a],
    );
    w.list(&format!("{NS}/tags?post={ev}"), None, "tags", &[tag]);
    w.list(
        &format!("{NS}/venues?event={ev}"),
        None,
        "venues",
        &[venue_a],
    );
    w.list(
        &format!("{NS}/organizers?event={ev}"),
        None,
        "organizers",
        &[organizer],
    );

    // Update everything at once, the slug included.
    let new_slug = format!("{w2}-renamed");
    w.write(
        "POST",
        &format!("{events}/{ev}"),
        Some(json!({
            "title": format!("Show {w2}"),
            "description": format!("Notes {d2}"),
            "slug": new_slug,
            "categories": [cat_b],
            "tags": [],
            "venue": venue_b,
            "organizer": [],
        })),
        200,
    );
    w.field(
        &format!("{events}/{ev}"),
        None,
        "title",
        json!(format!("Show {w2}")),
    );
    w.field(
        &format!("{events}/by-slug/{new_slug}"),
        None,
        "id",
        json!(ev),
    );
    w.refused(&format!("{events}/by-slug/{slug}"), "slug");
    w.list(&format!("{events}?search={w2}"), None, "events", &[ev]);
    w.list(&format!("{events}?search={d2}"), None, "events", &[ev]);
    w.list(&format!("{events}?search={w1}"), None, "events", &[]);
    w.list(&format!("{events}?search={d1}"), None, "events", &[]);
    w.list(
        &format!("{events}?categories={cat_a_slug}"),
        None,
        "events",
        &[],
    );
    w.list(
        &format!("{events}?categories={cat_b_slug}"),
        None,
        "events",
        &[ev],
    );
    w.list(&format!("{events}?tags={tag}"), None, "events", &[]);
    w.list(&format!("{events}?venue={venue_a}"), None, "events", &[]);
    w.list(&format!("{events}?venue={venue_b}"), None, "events", &[ev]);
    w.list(
        &format!("{events}?organizer={organizer}"),
        None,
        "events",
        &[],
    );
    w.field(&format!("{NS}/categories/{cat_a}"), None, "count", json!(0));
    w.field(&format!("{NS}/categories/{cat_b}"), None, "count", json!(1));
    w.list(
        &format!("{NS}/categories?post={ev}"),
        None,
        "categories",
        &[cat_b],
    );
    w.list(&format!("{NS}/tags?post={ev}"), None, "tags", &[]);
    w.list(
        &format!("{NS}/venues?event={ev}"),
        None,
        "venues",
        &[venue_b],
    );
    w.list(
        &format!("{NS}/organizers?event={ev}"),
        None,
        "organizers",
        &[],
    );

    // Trash.
    w.write("DELETE", &format!("{events}/{ev}"), None, 200);
    w.error(
        &format!("{events}/{ev}"),
        Some(&ADMIN),
        403,
        "event-no-longer-available",
    );
    w.refused(&format!("{events}/by-slug/{new_slug}"), "slug");
    w.list(&format!("{events}?search={w2}"), None, "events", &[]);
    w.list(
        &format!("{events}?search={w2}"),
        Some(&ADMIN),
        "events",
        &[],
    );
    w.list(
        &format!("{events}?search={w2}&status=trash"),
        Some(&ADMIN),
        "events",
        &[ev],
    );
    w.list(&format!("{events}?categories={cat_b}"), None, "events", &[]);
    w.list(&format!("{events}?venue={venue_b}"), None, "events", &[]);
    w.field(&format!("{NS}/categories/{cat_b}"), None, "count", json!(0));
}

// ---------------------------------------------------------------------------------------------
// 3. Password-protected events
// ---------------------------------------------------------------------------------------------

/// `word` with one letter replaced (one edit: search's typo tolerance).
fn typo(word: &str) -> String {
    let mut chars: Vec<char> = word.chars().collect();
    let i = chars.len() / 2;
    chars[i] = if chars[i] == 'b' { 'c' } else { 'b' };
    chars.into_iter().collect()
}

#[test]
fn search_does_not_look_into_protected_events_for_callers_who_cannot_edit_them() {
    let srv = Server::start_with_users(&[ADMIN, EDITOR, AUTHOR, CONTRIBUTOR, SUBSCRIBER, AUTHOR2]);
    let mut rng = Rng::new(0x9A55);
    let [title_word, secret_word, unrelated] = [(); 3].map(|_| unique_word(&mut rng));
    let (start, end) = upcoming(20);
    let body = json!({
        "title": format!("Gathering {title_word}"),
        "description": format!("Private notes {secret_word}"),
        "start_date": start,
        "end_date": end,
        "status": "publish",
    });
    let create = |extra: Value| {
        let mut b = body.clone();
        for (k, v) in extra.as_object().unwrap() {
            b[k] = v.clone();
        }
        let r = srv
            .req("POST", &format!("{NS}/events"))
            .user(&AUTHOR)
            .json_body(&b)
            .send();
        assert_eq!(r.status, 201, "{}", r.describe());
        id_of(&r.json())
    };
    let protected = create(json!({"password": "Open-sesame-1"}));
    let twin = create(json!({}));

    // The protected event is listed (blanked) like any other without a search.
    let r = srv.get(&format!("{NS}/events?include={protected},{twin}"));
    assert_eq!(r.status, 200, "{}", r.describe());
    let v = r.json();
    assert_eq!(ids_in(&v, "events"), set(&[protected, twin]));
    let listed = v["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| id_of(e) == protected)
        .unwrap();
    assert_eq!(listed["description"], "", "locked content is blanked");

    let prefix: String = secret_word.chars().take(8).collect();
    // (query, whether an event with these words and no password matches it)
    let queries = [
        (secret_word.clone(), true),
        (prefix, true),
        (typo(&secret_word), true),
        (title_word.clone(), true),
        (format!("{title_word} {secret_word}"), true),
        (format!("-{secret_word}"), false),
        (format!("-{unrelated}"), true),
        (format!("{title_word} -{secret_word}"), false),
        (format!("{title_word} -{unrelated}"), true),
    ];
    let search = |who: Option<&TestUser>, q: &str| -> BTreeSet<i64> {
        let r = srv.send(
            "GET",
            &format!("{NS}/events?per_page=50&search={}", enc(q)),
            who,
            None,
        );
        assert_eq!(
            r.status,
            200,
            "search {q:?} as {}: {}",
            caller(who),
            r.describe()
        );
        ids_in(&r.json(), "events")
    };
    // Callers who may not edit the event: it matches no search at all, so no answer depends
    // on its text — the unprotected twin shows what would be revealed.
    for who in [None, Some(&SUBSCRIBER), Some(&CONTRIBUTOR), Some(&AUTHOR2)] {
        for (q, matches) in &queries {
            let found = search(who, q);
            assert_eq!(
                found.contains(&twin),
                *matches,
                "search {q:?} as {}: the unprotected twin",
                caller(who)
            );
            assert!(
                !found.contains(&protected),
                "search {q:?} as {} finds the protected event",
                caller(who)
            );
        }
    }
    // Its author, editors and administrators search it like any other.
    for who in [&AUTHOR, &EDITOR, &ADMIN] {
        for (q, matches) in &queries {
            let mut req = srv.req("GET", &format!("{NS}/events?per_page=50&search={}", enc(q)));
            req = req.user(who);
            let r = req.send();
            assert_eq!(r.status, 200, "{}", r.describe());
            let found = ids_in(&r.json(), "events");
            assert_eq!(
                found.contains(&protected),
                *matches,
                "search {q:?} as {}: the protected event",
                who.name
            );
            assert_eq!(
                found.contains(&twin),
                *matches,
                "search {q:?} as {}",
                who.name
            );
        }
    }
}

#[test]
fn event_password_guesses_from_one_address_are_throttled_after_fifty_failures() {
    let srv = Server::start_with_users(&[ADMIN]);
    let (start, end) = upcoming(10);
    let r = srv
        .req("POST", &format!("{NS}/events"))
        .user(&ADMIN)
        .json_body(&json!({
            "title": "Locked evening",
            "description": "Behind the door",
            "start_date": start,
            "end_date": end,
            "status": "publish",
            "password": "Right-pw-7",
        }))
        .send();
    assert_eq!(r.status, 201, "{}", r.describe());
    let id = id_of(&r.json());
    let description = |v: &Value| v["description"].as_str().unwrap_or_default().to_string();
    let wrong = |i: usize| srv.get(&format!("{NS}/events?password=guess-{i}"));
    let opens_by_id = || {
        let r = srv.get(&format!("{NS}/events/{id}?password=Right-pw-7"));
        assert_eq!(
            r.status,
            200,
            "the right password opens it; {}",
            r.describe()
        );
        assert!(description(&r.json()).contains("Behind the door"));
    };

    // The wrong ones are counted; the right one opens the event and is not counted.
    for i in 0..ADDRESS_FREE_FAILURES / 2 {
        let r = wrong(i);
        assert_eq!(r.status, 200, "wrong password #{i}: {}", r.describe());
    }
    opens_by_id();
    for i in ADDRESS_FREE_FAILURES / 2..ADDRESS_FREE_FAILURES {
        let r = wrong(i);
        assert_eq!(r.status, 200, "wrong password #{i}: {}", r.describe());
    }
    // At the limit, the right password still opens it (by ID and in the list).
    opens_by_id();
    let r = srv.get(&format!("{NS}/events?password=Right-pw-7"));
    assert_eq!(r.status, 200, "{}", r.describe());
    let v = r.json();
    let listed = v["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| id_of(e) == id)
        .unwrap_or_else(|| panic!("the event is listed: {v}"));
    assert!(description(listed).contains("Behind the door"), "{listed}");

    // The failure past the free ones is answered and locks the address for a second (then
    // two, four, ...): the next guess is refused unchecked, unless that window is over.
    let mut last = Instant::now();
    let r = wrong(ADDRESS_FREE_FAILURES);
    assert_eq!(r.status, 200, "{}", r.describe());
    let mut n = ADDRESS_FREE_FAILURES + 1;
    loop {
        let sent = Instant::now();
        let r = wrong(n);
        if r.status == 429 {
            assert_throttled(&r);
            break;
        }
        assert_eq!(r.status, 200, "{}", r.describe());
        assert!(
            sent.duration_since(last) > Duration::from_secs(1) && n < ADDRESS_FREE_FAILURES + 4,
            "wrong password #{n} is answered although the address is locked"
        );
        last = sent;
        n += 1;
    }
    let r = srv.get(&format!("{NS}/events/{id}?password=guess-x"));
    assert_throttled(&r);

    // Requests without a password, and logins, are not affected.
    assert_eq!(srv.get(&format!("{NS}/events")).status, 200);
    assert_eq!(srv.get_as(NS, &ADMIN).status, 200);
}

/// 429 `rest_too_many_attempts` with `data.retry_after` and a matching `Retry-After`.
fn assert_throttled(r: &Resp) -> Value {
    let v = assert_error(r, 429, "rest_too_many_attempts");
    assert_retry_after(r, &v, "throttled");
    v
}

/// `data.retry_after` of an error body `v` is at least a second and matches `Retry-After`.
fn assert_retry_after(r: &Resp, v: &Value, what: &str) {
    let seconds = v["data"]["retry_after"]
        .as_u64()
        .unwrap_or_else(|| panic!("{what}: data.retry_after; {}", r.describe()));
    assert!(seconds >= 1, "{what}; {}", r.describe());
    assert_eq!(
        r.header("retry-after"),
        Some(seconds.to_string().as_str()),
        "{what}: Retry-After; {}",
        r.describe()
    );
}

// ---------------------------------------------------------------------------------------------
// 4. Allow
// ---------------------------------------------------------------------------------------------

#[test]
fn allow_is_the_same_for_a_record_the_caller_cannot_read_and_a_missing_one() {
    let srv = Server::start_with_users(&[ADMIN, AUTHOR, AUTHOR2]);
    let (start, end) = upcoming(15);
    let create = |coll: &str, body: Value| -> Value {
        let r = srv
            .req("POST", &format!("{NS}/{coll}"))
            .user(&AUTHOR)
            .json_body(&body)
            .send();
        assert_eq!(r.status, 201, "{}", r.describe());
        r.json()
    };
    let draft = create(
        "events",
        json!({"title": "Draft plans", "start_date": start, "end_date": end, "status": "draft"}),
    );
    let published = create(
        "events",
        json!({"title": "Public plans", "start_date": start, "end_date": end, "status": "publish"}),
    );
    let venue = create("venues", json!({"venue": "Draft hall", "status": "draft"}));
    let organizer = create(
        "organizers",
        json!({"organizer": "Draft crew", "status": "draft"}),
    );
    let slug = |v: &Value| v["slug"].as_str().unwrap().to_string();
    let unused_id = 999_999;

    let ask = |method: &str, path: &str, who: Option<&TestUser>| -> Resp {
        srv.send(method, path, who, None)
    };
    let compare = |hidden: &str, missing: &str, who: Option<&TestUser>| -> (Resp, Resp) {
        for method in ["HEAD", "OPTIONS"] {
            let a = ask(method, hidden, who);
            let b = ask(method, missing, who);
            assert_eq!(
                a.header("allow"),
                b.header("allow"),
                "{method} as {}: Allow of {hidden} ({}) vs {missing} ({})",
                caller(who),
                a.status,
                b.status
            );
        }
        let a = ask("GET", hidden, who);
        let b = ask("GET", missing, who);
        assert!(a.has("allow"), "{}", a.describe());
        assert_eq!(
            a.header("allow"),
            b.header("allow"),
            "GET as {}: Allow of {hidden} vs {missing}: {} / {}",
            caller(who),
            a.describe(),
            b.describe()
        );
        (a, b)
    };

    for who in [Some(&AUTHOR2), None] {
        // Events by slug: the same answer altogether.
        let (a, b) = compare(
            &format!("{NS}/events/by-slug/{}", slug(&draft)),
            &format!("{NS}/events/by-slug/no-such-plans"),
            who,
        );
        assert_eq!(a.status, b.status, "{} / {}", a.describe(), b.describe());
        assert_refused_param(&a, "slug", "another author's draft by slug");
        assert_eq!(a.json(), b.json());

        // Events by ID: the statuses are documented to differ (docs/api.md "Reading, updating
        // and trashing an event"); Allow does not.
        let (a, b) = compare(
            &format!("{NS}/events/{}", id_of(&draft)),
            &format!("{NS}/events/{unused_id}"),
            who,
        );
        assert_error(&a, 403, "event-not-accessible");
        assert_error(&b, 404, "rest-event-not-found");

        // Venues and organizers: a record the caller may not read answers 403, an unknown one
        // 400 (docs/api.md "Venues and organizers", Reads); Allow is the same.
        for (coll, record) in [("venues", &venue), ("organizers", &organizer)] {
            let kind = &coll[..coll.len() - 1];
            for (hidden, missing) in [
                (
                    format!("{NS}/{coll}/by-slug/{}", slug(record)),
                    format!("{NS}/{coll}/by-slug/no-such-{kind}"),
                ),
                (
                    format!("{NS}/{coll}/{}", id_of(record)),
                    format!("{NS}/{coll}/{unused_id}"),
                ),
            ] {
                let (a, b) = compare(&hidden, &missing, who);
                assert_error(&a, 403, &format!("{kind}-not-accessible"));
                assert_error(&b, 400, "rest_invalid_param");
            }
        }
    }

    // A record the caller can read still gets its own methods: the second author may only
    // read the first one's published event.
    let r = ask(
        "GET",
        &format!("{NS}/events/{}", id_of(&published)),
        Some(&AUTHOR2),
    );
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(r.header("allow"), Some("GET"), "{}", r.describe());
    let r = ask(
        "GET",
        &format!("{NS}/events/{}", id_of(&draft)),
        Some(&AUTHOR),
    );
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(
        r.header("allow").map(tokens),
        Some(tokens("GET, DELETE, POST, PUT, PATCH")),
        "{}",
        r.describe()
    );
}

// ---------------------------------------------------------------------------------------------
// 5. Radius
// ---------------------------------------------------------------------------------------------

#[test]
fn any_positive_radius_is_accepted_and_a_huge_one_covers_the_whole_earth() {
    let srv = Server::start_with_users(&[ADMIN]);
    let (start, end) = upcoming(12);
    let post = |coll: &str, body: Value| -> i64 {
        let r = srv
            .req("POST", &format!("{NS}/{coll}"))
            .user(&ADMIN)
            .json_body(&body)
            .send();
        assert_eq!(r.status, 201, "{}", r.describe());
        id_of(&r.json())
    };
    // The query point, its antipode, somewhere else, and a venue without coordinates.
    let (lat, lng) = (10.0, 20.0);
    let here = post(
        "venues",
        json!({"venue": "Here", "geo_lat": lat, "geo_lng": lng}),
    );
    let antipode = post(
        "venues",
        json!({"venue": "Antipode", "geo_lat": -lat, "geo_lng": lng - 180.0}),
    );
    let north = post(
        "venues",
        json!({"venue": "Far north", "geo_lat": 78.2, "geo_lng": 15.6}),
    );
    let nowhere = post("venues", json!({"venue": "Nowhere"}));
    let event = |venue: Option<i64>| -> i64 {
        let mut body = json!({"title": "Somewhere", "start_date": start, "end_date": end});
        if let Some(v) = venue {
            body["venue"] = json!(v);
        }
        post("events", body)
    };
    let at_here = event(Some(here));
    let at_antipode = event(Some(antipode));
    let at_north = event(Some(north));
    let _at_nowhere = event(Some(nowhere));
    let _without_venue = event(None);

    let around = |radius: &str, unit: &str| -> Resp {
        srv.get(&format!(
            "{NS}/events?per_page=50&geoloc=true&geoloc_lat={lat}&geoloc_lng={lng}\
             &geoloc_radius={radius}&geoloc_unit={unit}"
        ))
    };
    let everywhere = set(&[at_here, at_antipode, at_north]);
    for (radius, unit) in [
        ("100000", "km"),
        ("100000", "mi"),
        ("40075", "km"),
        ("20100", "km"),
        ("1000000000", "km"),
    ] {
        let r = around(radius, unit);
        assert_eq!(r.status, 200, "radius {radius} {unit}: {}", r.describe());
        assert_eq!(
            ids_in(&r.json(), "events"),
            everywhere,
            "radius {radius} {unit}: every event with coordinates"
        );
    }
    // The filter still filters.
    let r = around("100", "km");
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(ids_in(&r.json(), "events"), set(&[at_here]));

    for radius in ["0", "-5"] {
        let r = around(radius, "km");
        assert_invalid_params(&r, &[("geoloc_radius", "rest_out_of_bounds")]);
    }
}

// ---------------------------------------------------------------------------------------------
// 6. Long words
// ---------------------------------------------------------------------------------------------

#[test]
fn a_word_of_seventy_thousand_letters_is_indexed_and_found_by_its_start() {
    let srv = Server::start_with_users(&[ADMIN]);
    let mut rng = Rng::new(0x10C);
    let mut word = unique_word(&mut rng);
    while word.len() < 70_000 {
        word.push((b'a' + rng.below(26) as u8) as char);
    }
    let other = unique_word(&mut rng);
    let (start, end) = upcoming(40);
    let create = |description: &str| -> i64 {
        let r = srv
            .req("POST", &format!("{NS}/events"))
            .user(&ADMIN)
            .json_body(&json!({
                "title": "A long read",
                "description": description,
                "start_date": start,
                "end_date": end,
            }))
            .send();
        assert_eq!(
            r.status,
            201,
            "{}",
            r.describe().chars().take(500).collect::<String>()
        );
        id_of(&r.json())
    };
    let long = create(&word);
    let short = create(&format!("Short {other}"));

    let r = srv.get(&format!("{NS}/events/{long}"));
    assert_eq!(r.status, 200);
    assert!(
        r.json()["description"].as_str().unwrap().contains(&word),
        "the description is stored whole"
    );
    for n in [300, 1000] {
        let r = srv.get(&format!("{NS}/events?search={}", &word[..n]));
        assert_eq!(r.status, 200, "{}", r.describe());
        assert_eq!(
            ids_in(&r.json(), "events"),
            set(&[long]),
            "search by the word's first {n} letters"
        );
    }
    let r = srv.get(&format!("{NS}/events?search={other}"));
    assert_eq!(ids_in(&r.json(), "events"), set(&[short]));
}
