//! A throw-away PostgreSQL server for cluster tests: `initdb` and `pg_ctl` from the machine's
//! PostgreSQL installation, a data directory and a Unix socket in a temporary directory, no TCP.
//! When the tests run as root, the server runs as the `postgres` system user (PostgreSQL
//! refuses root). Stopped (immediately) when dropped.

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Postgres {
    bin: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
}

/// The directory of `initdb` and `pg_ctl`, installed from Debian's `postgresql` package first
/// when the machine has none and we may (root): the README's test command sets up what it needs.
fn server_bin() -> PathBuf {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        find_server_bin().unwrap_or_else(|| {
            if is_root() {
                install_postgresql();
            }
            find_server_bin().expect(
                "PostgreSQL server binaries (initdb, pg_ctl) are needed for the cluster tests: \
                 install Debian's `postgresql` package",
            )
        })
    })
    .clone()
}

fn install_postgresql() {
    eprintln!("installing PostgreSQL (Debian's postgresql package) for the cluster tests");
    for args in [
        &["update", "-qq"][..],
        &["install", "-y", "-qq", "postgresql"],
    ] {
        let status = Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .expect("run apt-get");
        assert!(status.success(), "apt-get {args:?} failed");
    }
}

/// `pg_config --bindir`, else the newest `/usr/lib/postgresql/*/bin` (Debian keeps the server
/// binaries off the PATH).
fn find_server_bin() -> Option<PathBuf> {
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if dir.join("initdb").exists() {
            return Some(dir);
        }
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
                .filter(|bin| bin.join("initdb").exists())
                .collect()
        })
        .unwrap_or_default();
    found.sort_by_key(|p| {
        p.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    found.pop()
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Runs a PostgreSQL program, as the `postgres` user when we are root.
fn run(program: &Path, args: &[&str]) {
    let mut command = if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    };
    let out = command
        .args(args)
        .output()
        .expect("run a PostgreSQL program");
    assert!(
        out.status.success(),
        "{} {args:?}: {}\n{}",
        program.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl Postgres {
    pub fn start() -> Postgres {
        let bin = server_bin();
        let dir = tempfile::tempdir().expect("tempdir");
        if is_root() {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777))
                .expect("chmod the PostgreSQL directory");
        }
        let pg = Postgres {
            bin,
            dir,
            port: free_port(),
        };
        let data = pg.data();
        run(
            &pg.bin.join("initdb"),
            &["-D", &data, "-A", "trust", "-U", "postgres", "--no-sync"],
        );
        pg.start_again();
        pg
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    /// Starts the server (again, after [`Postgres::stop`]) on the same socket and data.
    pub fn start_again(&self) {
        let options = format!(
            "-k {} -p {} -c listen_addresses='' -c fsync=off",
            self.dir.path().display(),
            self.port
        );
        let log = self.dir.path().join("log").display().to_string();
        run(
            &self.bin.join("pg_ctl"),
            &[
                "-D",
                &self.data(),
                "-l",
                &log,
                "-o",
                &options,
                "-w",
                "start",
            ],
        );
    }

    /// Stops the server (fast shutdown: connections are closed).
    pub fn stop(&self) {
        run(
            &self.bin.join("pg_ctl"),
            &["-D", &self.data(), "-m", "fast", "-w", "stop"],
        );
    }

    /// The connection string nodes are given.
    pub fn url(&self) -> String {
        format!(
            "host={} port={} user=postgres dbname=postgres",
            self.dir.path().display(),
            self.port
        )
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let pg_ctl = self.bin.join("pg_ctl");
        let data = self.data();
        let mut command = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&pg_ctl);
            c
        } else {
            Command::new(&pg_ctl)
        };
        let _ = command
            .args(["-D", &data, "-m", "immediate", "stop"])
            .output();
    }
}
