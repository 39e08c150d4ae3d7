//! A throw-away PostgreSQL server for cluster tests: `initdb` and `pg_ctl` from the machine's
//! PostgreSQL installation, a data directory and a Unix socket in a temporary directory, and
//! TCP on 127.0.0.1 only when a test configures it ([`Postgres::listen_tcp`]). When the tests
//! run as root, the server runs as the `postgres` system user (PostgreSQL refuses root).
//! Stopped (immediately) when dropped.

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Postgres {
    bin: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
    tcp: bool,
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
        let pg = Postgres::init();
        pg.start_again();
        pg
    }

    /// A server's data directory, not started yet.
    pub fn init() -> Postgres {
        let pg = Postgres::blank();
        run(
            &pg.bin.join("initdb"),
            &[
                "-D",
                &pg.data(),
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
            ],
        );
        pg
    }

    /// A temporary directory and a port for a server, no data directory yet.
    fn blank() -> Postgres {
        let bin = server_bin();
        let dir = tempfile::tempdir().expect("tempdir");
        if is_root() {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777))
                .expect("chmod the PostgreSQL directory");
        }
        Postgres {
            bin,
            dir,
            port: free_port(),
            tcp: false,
        }
    }

    /// Listens on 127.0.0.1 too, with `conf` added to postgresql.conf and `hba` as the whole
    /// of pg_hba.conf (its first matching line decides).
    pub fn listen_tcp(&mut self, conf: &[String], hba: &str) {
        let data = Path::new(&self.data()).to_path_buf();
        let mut lines = std::fs::read_to_string(data.join("postgresql.conf")).expect("read conf");
        lines.push_str("\nlisten_addresses = '127.0.0.1'\n");
        for line in conf {
            lines.push_str(line);
            lines.push('\n');
        }
        std::fs::write(data.join("postgresql.conf"), lines).expect("write conf");
        std::fs::write(data.join("pg_hba.conf"), hba).expect("write pg_hba.conf");
        self.tcp = true;
    }

    /// Writes a file the server reads (a certificate, a key) into its directory: the server's
    /// own, and only its own when `private` (PostgreSQL refuses a key others can read).
    pub fn server_file(&self, name: &str, contents: &str, private: bool) -> String {
        use std::os::unix::fs::PermissionsExt;
        let path = self.dir.path().join(name);
        std::fs::write(&path, contents).expect("write a server file");
        let mode = if private { 0o600 } else { 0o644 };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).expect("chmod");
        if is_root() {
            // SAFETY: getpwnam reads a static entry, copied out before any other call.
            let (uid, gid) = unsafe {
                let entry = libc::getpwnam(c"postgres".as_ptr());
                assert!(!entry.is_null(), "the postgres user exists");
                ((*entry).pw_uid, (*entry).pw_gid)
            };
            std::os::unix::fs::chown(&path, Some(uid), Some(gid)).expect("chown to postgres");
        }
        path.display().to_string()
    }

    /// A file of the test's own (a client key) in the server's directory.
    pub fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    /// The connection string over TCP to `host` (which resolves to 127.0.0.1).
    pub fn tcp_url(&self, host: &str) -> String {
        format!(
            "host={host} port={} user=postgres dbname=postgres",
            self.port
        )
    }

    /// The port, for URLs.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The socket directory (libpq's `host` for it).
    pub fn socket_dir(&self) -> String {
        self.dir.path().display().to_string()
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    /// Starts the server (again, after [`Postgres::stop`]) on the same socket and data.
    pub fn start_again(&self) {
        // Command-line settings win over postgresql.conf's: TCP servers listen as configured.
        let listen = if self.tcp {
            ""
        } else {
            "-c listen_addresses=''"
        };
        let options = format!(
            "-k {} -p {} {listen} -c fsync=off",
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

    /// A streaming standby of `primary` (which must be running): a copy made with
    /// `pg_basebackup -R`, started on a socket and port of its own.
    pub fn standby_of(primary: &Postgres) -> Postgres {
        let standby = Postgres::blank();
        run(
            &standby.bin.join("pg_basebackup"),
            &[
                "-D",
                &standby.data(),
                "-h",
                &primary.dir.path().display().to_string(),
                "-p",
                &primary.port.to_string(),
                "-U",
                "postgres",
                "-R",
                "-X",
                "stream",
                "--no-sync",
            ],
        );
        standby.start_again();
        standby
    }

    /// Promotes a standby to primary (waiting until it accepts writes).
    pub fn promote(&self) {
        run(
            &self.bin.join("pg_ctl"),
            &["-D", &self.data(), "-w", "promote"],
        );
    }

    /// Stops the server as a crash would (no shutdown checkpoint, connections cut).
    pub fn crash(&self) {
        run(
            &self.bin.join("pg_ctl"),
            &["-D", &self.data(), "-m", "immediate", "-w", "stop"],
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
