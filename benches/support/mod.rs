//! Helpers the benchmarks share: environment numbers, running commands, and the server.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};

/// A number from the environment, or `default` when unset or unreadable.
pub fn env_number<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

#[allow(dead_code)] // not every benchmark passes paths as strings
pub fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// Runs a command to completion; stdout is returned, a failure ends the benchmark.
pub fn run(command: &mut Command) -> String {
    let out = command.output().expect("command runs");
    if !out.status.success() {
        panic!(
            "{command:?} failed: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `ALMANAC_BENCH {…}` line `benches/wrk/report.lua` prints, from wrk's output `out`.
#[allow(dead_code)] // not every benchmark drives wrk
pub fn wrk_report(out: &str) -> serde_json::Value {
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix("ALMANAC_BENCH "))
        .unwrap_or_else(|| panic!("no report from wrk:\n{out}"));
    serde_json::from_str(line).expect("wrk report")
}

/// wrk with `script` against `url` for `seconds`, 10 s timeout, the `headers` and the script's
/// environment `env`.
#[allow(dead_code)] // not every benchmark drives wrk
pub fn wrk_command(
    script: &Path,
    url: &str,
    threads: u32,
    connections: u32,
    seconds: u64,
    headers: &[&str],
    env: &[(&str, &str)],
) -> Command {
    let mut command = Command::new("wrk");
    command
        .arg(format!("-t{threads}"))
        .arg(format!("-c{connections}"))
        .arg(format!("-d{seconds}s"))
        .args(["--timeout", "10s"])
        .arg("-s")
        .arg(script);
    for h in headers {
        command.args(["-H", h]);
    }
    for (k, v) in env {
        command.env(k, v);
    }
    command.arg(url);
    command
}

/// Clock ticks per second, the unit of `/proc/<pid>/stat`'s CPU times.
#[allow(dead_code)] // not every benchmark reads CPU times
pub fn clock_ticks() -> u64 {
    // SAFETY: sysconf only reads a system constant.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    assert!(ticks > 0, "sysconf(_SC_CLK_TCK)");
    ticks as u64
}

/// A running `almanac serve` (or cluster node) on a free loopback port: SIGTERM by `stop`,
/// killed if still running when dropped.
pub struct Server {
    child: Child,
    pub url: String,
    _stdout: BufReader<ChildStdout>,
}

impl Server {
    /// `almanac serve --listen 127.0.0.1:0` followed by `args`, logging at `warn` (the caller may
    /// set `ALMANAC_LOG` and other variables through `configure`), stderr appended to `log` or
    /// discarded; returns once the server prints the address it listens on.
    // The child is waited for by `Server`'s `Drop` (or `stop`) once returned, and on the path
    // that panics.
    #[allow(clippy::zombie_processes)]
    pub fn start(
        args: &[&OsStr],
        log: Option<&Path>,
        configure: impl FnOnce(&mut Command),
    ) -> Server {
        let mut command = Command::new(env!("CARGO_BIN_EXE_almanac"));
        command
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .env("ALMANAC_LOG", "warn");
        configure(&mut command);
        let stderr = match log {
            Some(path) => Stdio::from(
                std::fs::File::options()
                    .create(true)
                    .append(true)
                    .open(path)
                    .expect("log file"),
            ),
            None => Stdio::null(),
        };
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("server starts");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        loop {
            line.clear();
            if stdout.read_line(&mut line).unwrap_or(0) == 0 {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "the server exited before listening; see {}",
                    log.map_or("its stderr".into(), |p| p.display().to_string())
                );
            }
            if let Some(url) = line.trim().strip_prefix("listening on ") {
                return Server {
                    url: url.to_string(),
                    child,
                    _stdout: stdout,
                };
            }
        }
    }

    fn proc_file(&self, name: &str) -> String {
        std::fs::read_to_string(format!("/proc/{}/{name}", self.child.id())).unwrap_or_default()
    }

    /// User + system CPU time of the server process (all its threads), in seconds: fields 14
    /// and 15 of `/proc/<pid>/stat`, in clock ticks.
    #[allow(dead_code)] // not every benchmark reads it
    pub fn cpu_seconds(&self) -> f64 {
        let stat = self.proc_file("stat");
        // Field 2 (the command name, in parentheses) may hold spaces: count after its end.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .expect("stat line")
            .1
            .split_whitespace()
            .collect();
        // fields[0] is field 3 (state).
        let field = |n: usize| -> u64 { fields[n - 3].parse().expect("clock ticks") };
        (field(14) + field(15)) as f64 / clock_ticks() as f64
    }

    /// A `/proc/<pid>/status` line's number (`Threads`, `VmRSS` and `VmHWM` in KiB, ...).
    #[allow(dead_code)] // not every benchmark reads it
    pub fn status(&self, key: &str) -> Option<u64> {
        self.proc_file("status").lines().find_map(|l| {
            let (name, value) = l.split_once(':')?;
            let value = value.trim();
            (name == key).then(|| value.trim_end_matches(" kB").trim().parse().ok())?
        })
    }

    /// SIGTERM: a graceful shutdown (pending index work, store closed).
    #[allow(dead_code)] // not every benchmark stops its server before the end
    pub fn stop(&mut self) {
        // SAFETY: signals the child this process spawned and has not reaped yet.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
