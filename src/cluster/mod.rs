//! Cluster mode: several almanac nodes on one PostgreSQL database, which holds the truth as an
//! ordered log of committed write transactions and a snapshot of every row at its latest
//! version (docs/architecture.md, "Cluster mode").
//!
//! - [`PgLog`] is the store's [`ClusterLog`]: a write takes a transaction-level advisory lock
//!   (one writer at a time, cluster-wide), reads the entries the local replica lacks, and
//!   appends its changes as the entry after the head, updating the snapshot rows and notifying
//!   the other nodes in the same PostgreSQL transaction.
//! - [`Follower`] keeps a node's replica current: it listens on the log's channel, polls as a
//!   fallback, and applies new entries in order.
//! - A node with an empty data directory starts from the snapshot ([`PgLog::snapshot`]).
//!
//! Reads never touch PostgreSQL.

use crate::store::{codec, Change, ClusterLog, LogEntry, LogWrite, Store};
use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, NoTls};

mod conninfo;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// Version of almanac's tables in PostgreSQL.
const SCHEMA_VERSION: i64 = 1;
/// The advisory lock every write holds for its PostgreSQL transaction ("almanac" in ASCII).
const WRITERS_LOCK: i64 = 0x0061_6c6d_616e_6163;
/// The advisory lock under which the tables are created or migrated.
const SCHEMA_LOCK: i64 = WRITERS_LOCK + 1;
/// The channel new log entries are announced on.
const CHANNEL: &str = "almanac_log";
/// How long a follower waits for an announcement before it looks at the log anyway.
const POLL_EVERY: Duration = Duration::from_millis(500);
/// Log entries a follower applies in one local transaction at most.
const BATCH: i64 = 500;

const CREATE_TABLES: &str = "
CREATE TABLE IF NOT EXISTS almanac_meta (
    key text PRIMARY KEY,
    value bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS almanac_log (
    seq bigint PRIMARY KEY,
    node text NOT NULL,
    at timestamptz NOT NULL DEFAULT now(),
    changes bytea NOT NULL
);
CREATE TABLE IF NOT EXISTS almanac_snapshot (
    row_key text PRIMARY KEY,
    change bytea NOT NULL
);
CREATE TABLE IF NOT EXISTS almanac_nodes (
    node text PRIMARY KEY,
    applied bigint NOT NULL,
    seen timestamptz NOT NULL
);
INSERT INTO almanac_meta (key, value) VALUES ('head', 0) ON CONFLICT DO NOTHING;
";

#[derive(Debug, thiserror::Error)]
pub(crate) enum ClusterError {
    #[error("PostgreSQL: {}", conninfo::describe(.0))]
    Postgres(#[from] postgres::Error),
    #[error("{0}")]
    ConnectionString(String),
    #[error(
        "the cluster's tables have version {found}; this build knows version {SCHEMA_VERSION}"
    )]
    NewerSchema { found: i64 },
    #[error("a log entry cannot be read: {0}")]
    Codec(#[from] codec::CodecError),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error("the cluster already holds {head} writes; cluster init needs an empty one")]
    NotEmpty { head: u64 },
    #[error("the log's head moved from {expected} while this node held the writers' lock")]
    HeadMoved { expected: u64 },
    #[error("PostgreSQL answered something other than {0}")]
    Unreadable(&'static str),
}

/// The log's head (the last entry's `seq`, 0 for an empty log).
const HEAD: &str = "SELECT value FROM almanac_meta WHERE key = 'head'";

/// A connection to the cluster's database (see [`conninfo`]), its tables created or checked
/// first.
fn connect(url: &str) -> Result<Client, ClusterError> {
    let info = conninfo::parse(url).map_err(ClusterError::ConnectionString)?;
    let mut client = match info.tls {
        Some(tls) => info
            .config
            .connect(tokio_postgres_rustls::MakeRustlsConnect::new(tls))?,
        None => info.config.connect(NoTls)?,
    };
    migrate(&mut client)?;
    Ok(client)
}

/// Creates almanac's tables if they do not exist yet, refusing newer ones.
fn migrate(client: &mut Client) -> Result<(), ClusterError> {
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])?;
    tx.batch_execute(CREATE_TABLES)?;
    let found: Option<i64> = tx
        .query_opt("SELECT value FROM almanac_meta WHERE key = 'schema'", &[])?
        .map(|row| row.get(0));
    match found {
        Some(found) if found > SCHEMA_VERSION => return Err(ClusterError::NewerSchema { found }),
        Some(_) => {}
        None => {
            tx.execute(
                "INSERT INTO almanac_meta (key, value) VALUES ('schema', $1)",
                &[&SCHEMA_VERSION],
            )?;
        }
    }
    tx.commit()?;
    Ok(())
}

/// The log's head and up to `$2` entries after `$1`, in one snapshot: a row per entry, or a
/// row without one when there is none.
const HEAD_AND_NEXT: &str = "
SELECT head.value, log.seq, log.changes FROM almanac_meta head
LEFT JOIN LATERAL (
    SELECT seq, changes FROM almanac_log WHERE seq > $1 ORDER BY seq LIMIT $2
) log ON true
WHERE head.key = 'head'";

/// The rows of [`HEAD_AND_NEXT`]: the head and the entries.
fn head_and_next(rows: Vec<postgres::Row>) -> Result<(u64, Vec<LogEntry>), ClusterError> {
    let mut head = None;
    let mut found = Vec::new();
    for row in rows {
        head = Some(row.try_get::<_, i64>(0)? as u64);
        if let Some(seq) = row.try_get::<_, Option<i64>>(1)? {
            let bytes: Vec<u8> = row.try_get(2)?;
            found.push(LogEntry {
                seq: seq as u64,
                changes: codec::decode(&bytes)?,
            });
        }
    }
    Ok((
        head.ok_or(ClusterError::Unreadable("the log's head"))?,
        found,
    ))
}

/// The log in PostgreSQL, as the store's [`ClusterLog`]. One connection, lent to one write
/// (a batch of writes, see `Store::write`) at a time (writes are serialized cluster-wide
/// anyway); a broken connection is replaced at the next write.
pub(crate) struct PgLog {
    url: String,
    node: String,
    client: Arc<Mutex<Option<Client>>>,
}

/// A connection for the log's writes: `almanac_append` prepared on it ([`prepare_append`]).
fn log_connection(url: &str) -> Result<Client, ClusterError> {
    let mut client = connect(url)?;
    client.batch_execute(&prepare_append())?;
    Ok(client)
}

impl PgLog {
    /// Connects, and creates almanac's tables when the database has none.
    pub(crate) fn connect(url: &str, node: &str) -> Result<PgLog, ClusterError> {
        let client = log_connection(url)?;
        Ok(PgLog {
            url: url.to_string(),
            node: node.to_string(),
            client: Arc::new(Mutex::new(Some(client))),
        })
    }

    /// A log that connects at its first use (a node starting while PostgreSQL is away serves
    /// reads from its replica meanwhile; writes answer 503 until it is back).
    pub(crate) fn unconnected(url: &str, node: &str) -> PgLog {
        PgLog {
            url: url.to_string(),
            node: node.to_string(),
            client: Arc::new(Mutex::new(None)),
        }
    }

    fn client(&self) -> Result<MutexGuard<'_, Option<Client>>, String> {
        let mut guard = self.client.lock().expect("cluster connection lock");
        if guard.as_ref().is_none_or(|c| c.is_closed()) {
            *guard = Some(log_connection(&self.url).map_err(|e| e.to_string())?);
        }
        Ok(guard)
    }

    /// The snapshot of every row at one consistent log position: (head, rows).
    pub(crate) fn snapshot(&self) -> Result<(u64, Vec<Change>), ClusterError> {
        self.snapshot_where("true")
    }

    /// The snapshot rows of `condition` (on `row_key`) at one consistent log position.
    fn snapshot_where(&self, condition: &str) -> Result<(u64, Vec<Change>), ClusterError> {
        let mut guard = self
            .client()
            .map_err(|e| ClusterError::Store(crate::store::StoreError::ClusterUnavailable(e)))?;
        snapshot_with(guard.as_mut().expect("connected above"), condition)
    }
}

/// The snapshot rows of `condition` (on `row_key`) at one consistent log position.
fn snapshot_with(client: &mut Client, condition: &str) -> Result<(u64, Vec<Change>), ClusterError> {
    let mut tx = client
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()?;
    let head: i64 = tx.query_one(HEAD, &[])?.get(0);
    let mut changes = Vec::new();
    let rows = tx.query(
        &format!("SELECT change FROM almanac_snapshot WHERE {condition}"),
        &[],
    )?;
    for row in rows {
        let bytes: Vec<u8> = row.get(0);
        changes.push(codec::decode(&bytes)?);
    }
    tx.commit()?;
    Ok((head as u64, changes))
}

/// Snapshot rows inserted per statement by [`initialize`].
const INIT_BATCH: usize = 1000;

/// `almanac cluster init`: uploads a single-node calendar into an empty cluster. Its rows become
/// the snapshot, the log starts with one empty entry (seq 1) that stands for them, and the data
/// directory is marked as holding it, so that it can serve as the first node at once; other
/// nodes copy the snapshot. Refused when the cluster already holds writes.
pub(crate) fn initialize(url: &str, node: &str, store: &Store) -> Result<u64, ClusterError> {
    let mut client = connect(url)?;
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&WRITERS_LOCK])?;
    let head: i64 = tx.query_one(HEAD, &[])?.get(0);
    if head != 0 {
        return Err(ClusterError::NotEmpty { head: head as u64 });
    }
    let insert = |tx: &mut postgres::Transaction, rows: &mut Vec<Change>| {
        let keys: Vec<String> = rows.iter().map(Change::row).collect();
        let values: Vec<Vec<u8>> = rows.iter().map(codec::encode).collect();
        rows.clear();
        tx.execute(
            "INSERT INTO almanac_snapshot (row_key, change) \
             SELECT * FROM unnest($1::text[], $2::bytea[])",
            &[&keys, &values],
        )
    };
    let mut batch = Vec::with_capacity(INIT_BATCH);
    let rx = store.read()?;
    rx.for_each_row(|change| {
        batch.push(change);
        if batch.len() == INIT_BATCH {
            insert(&mut tx, &mut batch)?;
        }
        Ok::<(), ClusterError>(())
    })?;
    insert(&mut tx, &mut batch)?;
    tx.execute(
        "INSERT INTO almanac_log (seq, node, changes) VALUES (1, $1, $2)",
        &[&node, &codec::encode(&Vec::<Change>::new())],
    )?;
    tx.execute("UPDATE almanac_meta SET value = 1 WHERE key = 'head'", &[])?;
    tx.commit()?;
    store.apply_entries(&[LogEntry {
        seq: 1,
        changes: Vec::new(),
    }])?;
    Ok(1)
}

impl ClusterLog for PgLog {
    fn begin(
        &self,
        applied: u64,
    ) -> Result<(Box<dyn LogWrite + Send>, u64, Vec<LogEntry>), String> {
        let mut client = self.client()?.take().expect("connected above");
        // One round trip: the transaction, the writers' lock, the head and the entries after
        // `applied` (as text: hexadecimal, whatever the server's bytea_output).
        let found = client.simple_query(&format!(
            "BEGIN; SELECT pg_advisory_xact_lock({WRITERS_LOCK}); {HEAD}; \
             SELECT seq, encode(changes, 'hex') FROM almanac_log WHERE seq > {applied} ORDER BY seq"
        ));
        let read = found
            .map_err(ClusterError::from)
            .and_then(|messages| head_and_entries(&messages));
        let (head, entries) = read.map_err(|e| e.to_string())?;
        let write = PgWrite {
            slot: self.client.clone(),
            client: Some(client),
            node: self.node.clone(),
            open: true,
        };
        Ok((Box::new(write), head, entries))
    }
}

/// The head and the entries of `begin`'s query: the rows of its last two statements.
fn head_and_entries(
    messages: &[postgres::SimpleQueryMessage],
) -> Result<(u64, Vec<LogEntry>), ClusterError> {
    let rows: Vec<&postgres::SimpleQueryRow> = messages
        .iter()
        .filter_map(|m| match m {
            postgres::SimpleQueryMessage::Row(row) => Some(row),
            _ => None,
        })
        .collect();
    let number = |text: Option<&str>| -> Result<u64, ClusterError> {
        text.and_then(|t| t.parse().ok())
            .ok_or(ClusterError::Unreadable("a number"))
    };
    // The lock's row (a void value), the head's, then the entries'.
    let head = number(rows.get(1).and_then(|r| r.get(0)))?;
    let mut entries = Vec::new();
    for row in rows.iter().skip(2) {
        let bytes = hex::decode(row.get(1).unwrap_or_default())
            .map_err(|_| ClusterError::Unreadable("a log entry"))?;
        entries.push(LogEntry {
            seq: number(row.get(0))?,
            changes: codec::decode(&bytes)?,
        });
    }
    Ok((head, entries))
}

/// Writes holding the writers' lock inside an open PostgreSQL transaction, on the log's
/// connection (given back when done; dropped after a failed statement, which PostgreSQL rolls
/// back with it).
struct PgWrite {
    slot: Arc<Mutex<Option<Client>>>,
    client: Option<Client>,
    node: String,
    /// The transaction is still open (rolled back when dropped).
    open: bool,
}

/// The statement that prepares `almanac_append` on a connection: it appends log entries, the
/// snapshot's new rows and the head in one statement, given the entries' sequence numbers, the
/// writing node's name (UTF-8), the entries' changes; the snapshot rows written (their keys in
/// UTF-8, and values) and removed (keys); the new head and the head it must replace. Nothing is
/// written unless the head is still the one given; the entries are announced (at commit) on the
/// log's channel with the node's name, whose own follower has nothing to do. Executed with its
/// values written out (see [`PgWrite::commit`]), so that the append and the commit are one
/// round trip.
fn prepare_append() -> String {
    format!(
        "
PREPARE almanac_append(bigint[], bytea, bytea[], bytea[], bytea[], bytea[], bigint, bigint) AS
WITH head AS (
    UPDATE almanac_meta SET value = $7 WHERE key = 'head' AND value = $8 RETURNING value
), log AS (
    INSERT INTO almanac_log (seq, node, changes)
    SELECT entry.seq, convert_from($2, 'UTF8'), entry.changes
    FROM unnest($1, $3) AS entry(seq, changes)
    WHERE EXISTS (SELECT FROM head)
), written AS (
    INSERT INTO almanac_snapshot (row_key, change)
    SELECT convert_from(kept.row_key, 'UTF8'), kept.change
    FROM unnest($4, $5) AS kept(row_key, change)
    WHERE EXISTS (SELECT FROM head)
    ON CONFLICT (row_key) DO UPDATE SET change = EXCLUDED.change
), removed AS (
    DELETE FROM almanac_snapshot
    WHERE row_key IN (SELECT convert_from(gone, 'UTF8') FROM unnest($6) AS gone)
    AND EXISTS (SELECT FROM head)
)
SELECT pg_notify('{CHANNEL}', convert_from($2, 'UTF8')) FROM head"
    )
}

/// `bytes` as an SQL `bytea` literal: hexadecimal digits only, whatever they hold.
fn bytea_literal(bytes: &[u8]) -> String {
    format!("decode('{}', 'hex')", hex::encode(bytes))
}

/// `items` as an SQL `bytea[]` literal.
fn bytea_array_literal<'a>(items: impl IntoIterator<Item = &'a [u8]>) -> String {
    let items: Vec<String> = items.into_iter().map(bytea_literal).collect();
    format!("ARRAY[{}]::bytea[]", items.join(", "))
}

impl PgWrite {
    /// Runs `statements` on the open transaction; a failure drops the connection.
    fn run<T>(
        &mut self,
        statements: impl FnOnce(&mut Client) -> Result<T, ClusterError>,
    ) -> Result<T, String> {
        let client = self.client.as_mut().ok_or("the connection was lost")?;
        statements(client).map_err(|e| {
            self.client = None;
            e.to_string()
        })
    }
}

impl LogWrite for PgWrite {
    fn commit(mut self: Box<Self>, head: u64, writes: &[Vec<Change>]) -> Result<(), String> {
        let encoded: Vec<Vec<u8>> = writes.iter().map(codec::encode).collect();
        // Each row's last change in these writes is its latest version.
        let mut latest: HashMap<String, &Change> = HashMap::new();
        for change in writes.iter().flatten() {
            latest.insert(change.row(), change);
        }
        let (mut kept, mut values, mut removed) = (Vec::new(), Vec::new(), Vec::new());
        for (row, change) in latest {
            if change.removes() {
                removed.push(row);
            } else {
                kept.push(row);
                values.push(codec::encode(change));
            }
        }
        let new_head = head + writes.len() as u64;
        let seqs: Vec<String> = (head + 1..=new_head).map(|seq| seq.to_string()).collect();
        // One round trip: the prepared append with its values written out, and the commit.
        // Numbers and hexadecimal digits are all the values contain.
        let statements = format!(
            "EXECUTE almanac_append(ARRAY[{}]::bigint[], {}, {}, {}, {}, {}, {new_head}, {head}); \
             COMMIT",
            seqs.join(", "),
            bytea_literal(self.node.as_bytes()),
            bytea_array_literal(encoded.iter().map(Vec::as_slice)),
            bytea_array_literal(kept.iter().map(String::as_bytes)),
            bytea_array_literal(values.iter().map(Vec::as_slice)),
            bytea_array_literal(removed.iter().map(String::as_bytes)),
        );
        self.run(|client| {
            let messages = client.simple_query(&statements)?;
            let announced = messages
                .iter()
                .filter(|m| matches!(m, postgres::SimpleQueryMessage::Row(_)))
                .count();
            if announced != 1 {
                // Nothing was written: the transaction committed without it.
                return Err(ClusterError::HeadMoved { expected: head });
            }
            Ok(())
        })?;
        self.open = false;
        Ok(())
    }
}

impl Drop for PgWrite {
    fn drop(&mut self) {
        // Rolled back unless committed; the connection goes back for the next write unless
        // it broke.
        if let Some(mut client) = self.client.take() {
            if !self.open || client.batch_execute("ROLLBACK").is_ok() {
                let mut slot = self.slot.lock().expect("cluster connection lock");
                if slot.is_none() {
                    *slot = Some(client);
                }
            }
        }
    }
}

/// A temporary store copied from the cluster's snapshot, attached to the log, for the
/// commands that work on a cluster without a node's data directory (which a running node
/// holds): they read it, and write through the log like a node. Removed when dropped.
pub(crate) struct Replica {
    path: std::path::PathBuf,
    store: Option<Store>,
}

/// How much of the snapshot a [`Replica`] copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReplicaScope {
    /// Users and the user ID sequence (`user` commands).
    Users,
    /// Webhook endpoints, their ID sequence and the journal's head (`webhook` commands).
    Webhooks,
    /// Everything (`import`, `export`).
    Calendar,
}

impl Replica {
    pub(crate) fn open(url: &str, scope: ReplicaScope) -> Result<Replica, ClusterError> {
        let log = PgLog::connect(url, "almanac command")?;
        let (head, rows) = log.snapshot_where(match scope {
            ReplicaScope::Users => {
                "row_key LIKE 'user/%' OR row_key LIKE 'user-name/%' \
                 OR row_key = 'sequence/seq.users'"
            }
            ReplicaScope::Webhooks => {
                "row_key LIKE 'webhook/%' OR row_key = 'sequence/seq.webhooks' \
                 OR row_key = 'sequence/seq.changes'"
            }
            ReplicaScope::Calendar => "true",
        })?;
        let path = std::env::temp_dir().join(format!(
            "almanac-replica-{}-{}.redb",
            std::process::id(),
            rand::random::<u64>()
        ));
        let mut replica = Replica { path, store: None };
        let store = Store::open(&replica.path)?;
        store.apply_entries(&[LogEntry {
            seq: head,
            changes: rows,
        }])?;
        store.attach_log(Arc::new(log))?;
        replica.store = Some(store);
        Ok(replica)
    }

    pub(crate) fn store(&self) -> &Store {
        self.store.as_ref().expect("opened with a store")
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.store = None;
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A turn at a task one node of the cluster runs at a time (a scheduled mirror): a PostgreSQL
/// session advisory lock, held by its own connection until the value is dropped.
pub(crate) struct Exclusive {
    _session: Client,
}

/// The turn at the task `name`, unless another node has it.
pub(crate) fn try_exclusive(url: &str, name: &str) -> Result<Option<Exclusive>, ClusterError> {
    let mut session = connect(url)?;
    let hash = blake3::hash(name.as_bytes());
    let key = i64::from_le_bytes(hash.as_bytes()[..8].try_into().expect("8 bytes"));
    let taken: bool = session
        .query_one("SELECT pg_try_advisory_lock($1)", &[&key])?
        .get(0);
    Ok(taken.then_some(Exclusive { _session: session }))
}

/// `almanac cluster prune`: drops the log entries older than `keep`, except the head. Nodes
/// that are further behind copy the snapshot when they come back. Returns how many went.
pub(crate) fn prune(url: &str, keep: Duration) -> Result<u64, ClusterError> {
    let mut client = connect(url)?;
    let dropped = client.execute(
        "DELETE FROM almanac_log WHERE at < now() - make_interval(secs => $1) \
         AND seq < (SELECT value FROM almanac_meta WHERE key = 'head')",
        &[&keep.as_secs_f64()],
    )?;
    Ok(dropped)
}

/// What `almanac cluster status` shows of one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NodeStatus {
    pub node: String,
    pub applied: u64,
    /// Seconds since the node last reported.
    pub seen_seconds_ago: u64,
}

/// The log's head and every node that has reported, by name.
pub(crate) fn status(url: &str) -> Result<(u64, Vec<NodeStatus>), ClusterError> {
    let mut client = connect(url)?;
    let head: i64 = client.query_one(HEAD, &[])?.get(0);
    let nodes = client
        .query(
            "SELECT node, applied, extract(epoch FROM now() - seen)::bigint \
             FROM almanac_nodes ORDER BY node",
            &[],
        )?
        .into_iter()
        .map(|row| NodeStatus {
            node: row.get(0),
            applied: row.get::<_, i64>(1) as u64,
            seen_seconds_ago: row.get::<_, i64>(2).max(0) as u64,
        })
        .collect();
    Ok((head as u64, nodes))
}

/// Keeps a node's replica current with the log, on a thread of its own.
pub(crate) struct Follower {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Follower {
    /// Follows the log at `url` into `store`, reporting as `node`.
    pub(crate) fn start(url: &str, node: &str, store: Arc<Store>) -> Follower {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (url, node, stop) = (url.to_string(), node.to_string(), stop.clone());
            std::thread::Builder::new()
                .name("follower".into())
                .spawn(move || follow(&url, &node, &store, &stop))
                .expect("spawning the follower thread")
        };
        Follower {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Reconnects (with a growing pause, up to 5 s) whenever the connection is lost.
fn follow(url: &str, node: &str, store: &Store, stop: &AtomicBool) {
    let mut pause = Duration::from_millis(100);
    while !stop.load(Ordering::SeqCst) {
        match follow_connected(url, node, store, stop) {
            Ok(()) => return,
            Err(e) => {
                tracing::warn!(error = %e, "following the cluster log failed; reconnecting");
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_secs(5));
            }
        }
    }
}

fn follow_connected(
    url: &str,
    node: &str,
    store: &Store,
    stop: &AtomicBool,
) -> Result<(), ClusterError> {
    let mut client = connect(url)?;
    client.batch_execute(&format!("LISTEN {CHANNEL}"))?;
    // Prepared once: each look at the log is then one round trip.
    let head_and_next_statement = client.prepare(HEAD_AND_NEXT)?;
    let report = client.prepare(
        "INSERT INTO almanac_nodes (node, applied, seen) VALUES ($1, $2, now()) \
         ON CONFLICT (node) DO UPDATE SET applied = EXCLUDED.applied, seen = now()",
    )?;
    let mut reported: Option<std::time::Instant> = None;
    while !stop.load(Ordering::SeqCst) {
        // Where this node is, then where the log is (for `cluster status` and `/healthz`). In
        // this order: a local write may move the node on meanwhile, never past the head.
        let applied = store.cluster_applied()?;
        // Reported at most once per poll interval, however busy the log.
        if reported.is_none_or(|at| at.elapsed() >= POLL_EVERY) {
            client.execute(&report, &[&node, &(applied as i64)])?;
            reported = Some(std::time::Instant::now());
        }
        let rows = client.query(&head_and_next_statement, &[&(applied as i64), &BATCH])?;
        let (head, found) = head_and_next(rows)?;
        store.note_log_head(head);
        let expected = applied + 1;
        if head < applied {
            // The log lost writes this replica holds (a PostgreSQL restored from an older
            // backup, or failed over without a synchronous standby): writing on would fork
            // the calendar.
            store.note_diverged();
            tracing::error!(
                applied,
                head,
                "the cluster log is shorter than this node's replica; writes are refused"
            );
        } else if found.first().is_some_and(|e| e.seq > expected)
            || (found.is_empty() && head > applied)
        {
            // The entries this replica needs were pruned: start again from the snapshot.
            tracing::warn!(applied, head, "behind the pruned log; copying the snapshot");
            let (at, rows) = snapshot_with(&mut client, "true")?;
            store.replace_with_snapshot(at, &rows)?;
            continue;
        }
        let full = found.len() as i64 == BATCH;
        store.apply_entries(&found)?;
        if full {
            continue;
        }
        // Wait for another node's announcement (this node's own writes are applied already),
        // or look again after a while.
        let mut notifications = client.notifications();
        let deadline = std::time::Instant::now() + POLL_EVERY;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match notifications.timeout_iter(left).next()? {
                Some(n) if n.payload() == node => continue,
                _ => break,
            }
        }
        while notifications.iter().next()?.is_some() {}
    }
    Ok(())
}

#[cfg(test)]
#[path = "../../tests/common/postgres.rs"]
#[allow(dead_code)]
mod test_postgres;

#[cfg(test)]
mod tests {
    use super::*;

    /// The writers' lock keeps other almanac nodes out, but the append does not trust it alone:
    /// if the head moved after `begin` read it (a writer that ignored the lock, a restored
    /// database), nothing is written and the write fails.
    #[test]
    fn an_append_after_the_head_moved_writes_nothing() {
        let pg = test_postgres::Postgres::start();
        let url = pg.url();
        let log = PgLog::connect(&url, "node-a").unwrap();
        let sequence = |value| Change::Sequence {
            key: "posts".into(),
            value,
        };
        // A first append goes through.
        let (write, head, entries) = log.begin(0).unwrap();
        assert_eq!((head, entries.len()), (0, 0));
        write.commit(head, &[vec![sequence(1)]]).unwrap();

        let (write, head, _) = log.begin(1).unwrap();
        assert_eq!(head, 1);
        let mut other = connect(&url).unwrap();
        other
            .execute("UPDATE almanac_meta SET value = 2 WHERE key = 'head'", &[])
            .unwrap();
        let refused = write.commit(head, &[vec![sequence(2)]]).unwrap_err();
        assert!(refused.contains("head moved"), "{refused}");

        let entries: i64 = other
            .query_one("SELECT count(*) FROM almanac_log", &[])
            .unwrap()
            .get(0);
        assert_eq!(entries, 1);
        let (at, rows) = log.snapshot().unwrap();
        assert_eq!(at, 2);
        assert_eq!(rows, vec![sequence(1)]);
        // The log's connection still works.
        let (write, head, _) = log.begin(1).unwrap();
        assert_eq!(head, 2);
        drop(write);
    }
}
