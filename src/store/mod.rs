//! The canonical store: one redb database holding users, records, slug indexes and the ID
//! sequences. Every write is a single redb transaction ([`Store::write`]), so a failed request
//! leaves nothing behind and an acknowledged one is durable.

mod batches;
pub(crate) mod changes;
pub(crate) mod codec;
mod journal;

pub(crate) use changes::Change;

use crate::model::feed::{FeedItem, FeedValidators};
use crate::model::post::Image;
use crate::model::series::{OccurrenceOf, Series, SeriesHorizon};
use crate::model::session::Session;
use crate::model::webhook::Webhook;
use crate::model::{Kind, Language, Role, Sequence, User};
use chrono::NaiveDateTime;
use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::cell::OnceCell;
use std::path::Path;

/// Version of the table layout. A store written with another layout is refused at open.
pub(crate) const STORE_FORMAT: u64 = 1;

const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const USERS: TableDefinition<u64, &[u8]> = TableDefinition::new("users");
/// ASCII-lower-cased user name → user ID (names are unique case-insensitively).
const USER_NAMES: TableDefinition<&str, u64> = TableDefinition::new("user_names");
/// (kind, language, slug) → record ID: slugs are unique per kind per language.
const SLUGS: TableDefinition<(&str, &str, &str), u64> = TableDefinition::new("slugs");

const EVENTS: TableDefinition<u64, &[u8]> = TableDefinition::new("events");
const VENUES: TableDefinition<u64, &[u8]> = TableDefinition::new("venues");
const ORGANIZERS: TableDefinition<u64, &[u8]> = TableDefinition::new("organizers");
const CATEGORIES: TableDefinition<u64, &[u8]> = TableDefinition::new("categories");
const TAGS: TableDefinition<u64, &[u8]> = TableDefinition::new("tags");
/// Image records, by ID and by URL.
const IMAGES: TableDefinition<u64, &[u8]> = TableDefinition::new("images");
const IMAGE_URLS: TableDefinition<&str, u64> = TableDefinition::new("image_urls");
/// Sequence number → (kind, ID) of a changed record, not yet applied to the search index.
const OUTBOX: TableDefinition<u64, &[u8]> = TableDefinition::new("outbox");
/// A series' rule and occurrences, by the series' event ID (see `crate::model::series`).
const SERIES: TableDefinition<u64, &[u8]> = TableDefinition::new("series");
/// What each occurrence's ID names: its series and original start.
const OCCURRENCES: TableDefinition<u64, &[u8]> = TableDefinition::new("occurrences");
/// Each event's revision: how many times its record was written, counted from the second of
/// its last modification before revisions were kept (see [`WriteTx::put_record`]).
const REVISIONS: TableDefinition<u64, u64> = TableDefinition::new("revisions");
/// Editors' sessions, by the hex SHA-256 of their token (see `crate::model::session`).
const SESSIONS: TableDefinition<&str, &[u8]> = TableDefinition::new("sessions");
/// The events copied from iCalendar feeds, by feed and UID (see `crate::model::feed`).
const FEED_ITEMS: TableDefinition<&str, &[u8]> = TableDefinition::new("feed_items");
/// Webhook endpoints by ID (see `crate::model::webhook`).
const WEBHOOKS: TableDefinition<u64, &[u8]> = TableDefinition::new("webhooks");
/// Source → the change feed token a copy of another almanac reached (`import --from`).
const SYNC_TOKENS: TableDefinition<&str, &str> = TableDefinition::new("sync_tokens");
const OUTBOX_SEQUENCE: &str = "seq.outbox";
/// Cluster mode: while a replica commits, one of its commits is made durable at most this often
/// (see [`Store::begin_local_write`]).
const REPLICA_SYNC_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);
/// (kind, group ID, language) → member ID: translation groups.
const GROUPS: TableDefinition<(&str, u64, &str), u64> = TableDefinition::new("translation_groups");

/// The second of `modified_utc` counted from 2020-01-01 UTC: the least revision an event
/// modified then has.
pub(crate) fn revision_floor(modified_utc: chrono::NaiveDateTime) -> u64 {
    const EPOCH: i64 = 1_577_836_800; // 2020-01-01T00:00:00Z
    (modified_utc.and_utc().timestamp() - EPOCH).max(0) as u64
}

fn records_table(kind: Kind) -> TableDefinition<'static, u64, &'static [u8]> {
    match kind {
        Kind::Event => EVENTS,
        Kind::Venue => VENUES,
        Kind::Organizer => ORGANIZERS,
        Kind::Category => CATEGORIES,
        Kind::Tag => TAGS,
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("store error: {0}")]
    Redb(#[from] redb::Error),
    #[error(transparent)]
    Codec(#[from] codec::CodecError),
    #[error("the store was written with format {found}; this build reads format {STORE_FORMAT}")]
    IncompatibleFormat { found: u64 },
    #[error("user name {0} is already taken")]
    UserNameTaken(String),
    #[error("no user named {0}")]
    UnknownUser(String),
    /// Cluster mode: the log could not take the write (PostgreSQL unreachable or failing).
    /// Nothing changed locally.
    #[error("the cluster log is unavailable: {0}")]
    ClusterUnavailable(String),
}

// redb reports failures through several error types; all of them are storage failures here.
macro_rules! from_redb {
    ($($t:ty),*) => {$(
        impl From<$t> for StoreError {
            fn from(e: $t) -> Self {
                StoreError::Redb(e.into())
            }
        }
    )*};
}
from_redb!(
    redb::DatabaseError,
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError,
    redb::SetDurabilityError
);

pub(crate) type StoreResult<T> = Result<T, StoreError>;

/// redb's own page cache. Its default (1 GiB) filled with the pages of concurrent writes and
/// held them: 720 MB resident after a burst of creates at a million events. Reads of records
/// not in it come from the operating system's file cache, which the kernel sizes and shares.
const STORE_CACHE_BYTES: usize = 64 * 1024 * 1024;

pub struct Store {
    db: Database,
    /// Called after every commit that appended outbox entries, with the last sequence number:
    /// the search index applies them before the write is acknowledged (see `crate::index`).
    after_commit: std::sync::RwLock<Option<CommitHook>>,
    /// Counts commits, twice each: right after the store commit and again once the index
    /// holds it. Whatever was derived from the store and the index under one value (cached
    /// representations) is current for as long as the value stays.
    version: std::sync::atomic::AtomicU64,
    /// Writes between their start and their store commit (see [`Store::writes_in_progress`]).
    in_progress: std::sync::atomic::AtomicUsize,
    /// The position of the last write every later read sees (see [`Store::position`]).
    position: std::sync::atomic::AtomicU64,
    /// Wakes those waiting for the position to reach a write (see [`Store::reached`]).
    position_moved: tokio::sync::Notify,
    /// Cluster mode: the log every write goes through.
    log: std::sync::RwLock<Option<std::sync::Arc<dyn ClusterLog>>>,
    /// Cluster mode: the writes on their way into the log.
    batches: batches::Batches,
    /// Counts the applied log entries that changed users (see [`Store::users_generation`]).
    users_generation: std::sync::atomic::AtomicU64,
    /// Cluster mode: the log's head when last seen (see [`Store::log_head`]).
    log_head: std::sync::atomic::AtomicU64,
    /// Cluster mode: the log turned out shorter than this replica (see [`Store::diverged`]).
    diverged: std::sync::atomic::AtomicBool,
    /// Cluster mode: when a local commit was last made durable.
    synced_at: std::sync::Mutex<std::time::Instant>,
}

/// Counts one write in progress for as long as it lives (errors and panics included).
struct InProgress<'a>(&'a std::sync::atomic::AtomicUsize);

impl<'a> InProgress<'a> {
    fn enter(counter: &'a std::sync::atomic::AtomicUsize) -> InProgress<'a> {
        counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        InProgress(counter)
    }
}

impl Drop for InProgress<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

thread_local! {
    /// The position of the last write committed on this thread (see
    /// [`Store::take_written_position`]).
    static WRITTEN_AT: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// The key of a feed item: the feed, a line break (in no URL or path), the UID; the feed's
/// validators have the empty UID (a UID is never empty).
fn feed_key(source: &str, uid: &str) -> String {
    format!("{source}\n{uid}")
}

/// The meta key of the last cluster log entry this data directory holds.
const CLUSTER_APPLIED: &str = "cluster.applied";

/// The cluster's log as the store sees it (implemented by `crate::cluster`). In cluster mode
/// every write goes through it: one writer at a time cluster-wide, the replica caught up with
/// the log before the write runs, and the write's changes appended to the log (the point of
/// durability) before the local commit.
pub(crate) trait ClusterLog: Send + Sync {
    /// Takes the cluster-wide writers' lock and reads the log's head and the entries after
    /// `applied`, in order; the writes end when the returned value is committed or dropped
    /// (rolled back).
    #[allow(clippy::type_complexity)]
    fn begin(&self, applied: u64)
        -> Result<(Box<dyn LogWrite + Send>, u64, Vec<LogEntry>), String>;
}

/// Writes in progress on the cluster log (a batch, see `batches`).
pub(crate) trait LogWrite {
    /// Appends `writes` as the entries `head + 1…` (the log's head must still be `head`) and
    /// commits. An error leaves the outcome unknown: catching up from the log settles it.
    fn commit(self: Box<Self>, head: u64, writes: &[Vec<Change>]) -> Result<(), String>;
}

/// One committed write transaction of the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LogEntry {
    pub seq: u64,
    pub changes: Vec<Change>,
}

/// Receives the last outbox sequence number of a committed transaction.
pub(crate) type CommitHook = std::sync::Arc<dyn Fn(u64) + Send + Sync>;

/// One outbox entry: a record that changed (or disappeared).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutboxEntry {
    pub seq: u64,
    pub kind: Kind,
    pub id: u64,
}

impl Store {
    /// Opens (or creates) the store file and its tables, refusing an incompatible format.
    pub fn open(path: &Path) -> StoreResult<Store> {
        let db = Database::builder()
            .set_cache_size(STORE_CACHE_BYTES)
            .create(path)?;
        let store = Store {
            db,
            after_commit: std::sync::RwLock::new(None),
            version: std::sync::atomic::AtomicU64::new(0),
            in_progress: std::sync::atomic::AtomicUsize::new(0),
            position: std::sync::atomic::AtomicU64::new(0),
            position_moved: tokio::sync::Notify::new(),
            log: std::sync::RwLock::new(None),
            batches: Default::default(),
            users_generation: std::sync::atomic::AtomicU64::new(0),
            log_head: std::sync::atomic::AtomicU64::new(0),
            diverged: std::sync::atomic::AtomicBool::new(false),
            synced_at: std::sync::Mutex::new(std::time::Instant::now()),
        };
        store.write(|tx| {
            let meta = tx.meta_mut()?;
            let found = meta.get("format")?.map(|v| v.value());
            match found {
                None => {
                    meta.insert("format", STORE_FORMAT)?;
                }
                Some(STORE_FORMAT) => {}
                Some(found) => return Err(StoreError::IncompatibleFormat { found }),
            }
            // Create every table up front so that read transactions never miss one.
            tx.users()?;
            tx.user_names_mut()?;
            tx.slugs()?;
            tx.images()?;
            tx.image_urls()?;
            tx.groups()?;
            tx.outbox()?;
            tx.series_table()?;
            tx.occurrences()?;
            tx.revisions()?;
            tx.sessions()?;
            tx.feed_items_table()?;
            tx.sync_tokens()?;
            tx.webhooks_table()?;
            tx.journal_tables()?;
            for kind in Kind::ALL {
                tx.records(kind)?;
            }
            Ok(())
        })?;
        // Everything committed before this start is visible once the index has opened.
        store
            .position
            .store(store.outbox_head()?, std::sync::atomic::Ordering::SeqCst);
        Ok(store)
    }

    /// Runs `f` in one write transaction and commits it (durably) only when `f` succeeds. In
    /// cluster mode the write goes through the log first (see [`ClusterLog`]).
    pub(crate) fn write<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&mut WriteTx) -> Result<T, E>,
    ) -> Result<T, E> {
        let log = self.log.read().expect("cluster log lock").clone();
        if let Some(log) = log {
            return self.write_through_log(log.as_ref(), f);
        }
        let (out, last) = self.transact(false, f)?;
        // On a single node a write's position is its outbox sequence number.
        self.after_commit(last, last);
        if last.is_some() {
            WRITTEN_AT.set(last);
        }
        Ok(out)
    }

    /// One local write transaction: `f` runs in it (its changes recorded when `recording`),
    /// and it commits only when `f` succeeds. Returns `f`'s result and the transaction's last
    /// outbox sequence number.
    fn transact<T, E: From<StoreError>>(
        &self,
        recording: bool,
        f: impl FnOnce(&mut WriteTx) -> Result<T, E>,
    ) -> Result<(T, Option<u64>), E> {
        let _counted = InProgress::enter(&self.in_progress);
        let txn = self.begin_local_write()?;
        let (out, last) = {
            let mut tx = WriteTx::new(&txn, recording);
            let out = f(&mut tx)?;
            (out, tx.last_outbox_seq)
            // The open tables close here, before the commit.
        };
        let committing = std::time::Instant::now();
        txn.commit().map_err(StoreError::from)?;
        crate::metrics::store_commit(committing.elapsed().as_secs_f64());
        Ok((out, last))
    }

    /// A local write transaction. On a single node every commit is durable: the store is the
    /// truth. In cluster mode the log in PostgreSQL is, and a replica that loses its last
    /// commits to a crash applies them again from the log when it starts: the first commit
    /// begun [`REPLICA_SYNC_INTERVAL`] after the last durable one is durable (and makes those
    /// before it durable too; closing the store makes the rest durable), the others pay no
    /// fsync.
    fn begin_local_write(&self) -> StoreResult<redb::WriteTransaction> {
        let mut txn = self.db.begin_write()?;
        if self.log.read().expect("cluster log lock").is_some() {
            let mut synced_at = self.synced_at.lock().unwrap_or_else(|e| e.into_inner());
            if synced_at.elapsed() < REPLICA_SYNC_INTERVAL {
                txn.set_durability(redb::Durability::None)?;
            } else {
                *synced_at = std::time::Instant::now();
            }
        }
        Ok(txn)
    }

    /// After a local commit: the index takes the outbox entries up to `last_outbox_seq` (the
    /// write waits for it), then the position moves to `position`.
    fn after_commit(&self, last_outbox_seq: Option<u64>, position: Option<u64>) {
        self.bump_version();
        if let Some(seq) = last_outbox_seq {
            let hook = self.after_commit.read().expect("commit hook lock").clone();
            if let Some(hook) = hook {
                hook(seq);
                // What was derived meanwhile may hold the new records with the index's
                // older answers (term counts): it is not current either.
                self.bump_version();
            }
        }
        if let Some(position) = position {
            self.position
                .fetch_max(position, std::sync::atomic::Ordering::SeqCst);
            self.position_moved.notify_waiters();
        }
    }

    /// The position of the last write this thread committed since the last call, if any:
    /// what a request that wrote answers in `X-Cal-Seq`.
    pub(crate) fn take_written_position() -> Option<u64> {
        WRITTEN_AT.take()
    }

    /// Cluster mode from now on: every write goes through `log`, and positions are the log's
    /// sequence numbers.
    pub(crate) fn attach_log(&self, log: std::sync::Arc<dyn ClusterLog>) -> StoreResult<()> {
        *self.log.write().expect("cluster log lock") = Some(log);
        self.position
            .store(self.cluster_applied()?, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    /// Grows whenever users change (here, or in log entries written elsewhere): whoever keeps
    /// users in memory (the authenticator) reloads them when it moves.
    pub(crate) fn users_generation(&self) -> u64 {
        self.users_generation
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Cluster mode: the log's head as last seen by this node (`None` on a single node). The
    /// gap to [`Store::position`] is this node's replication lag.
    pub(crate) fn log_head(&self) -> Option<u64> {
        let attached = self.log.read().expect("cluster log lock").is_some();
        attached.then(|| {
            self.log_head
                .load(std::sync::atomic::Ordering::SeqCst)
                .max(self.position())
        })
    }

    /// Whether the cluster log was found shorter than this replica: it lost writes this node
    /// holds, and writing on would fork the calendar, so writes are refused until an operator
    /// restarts the node on a data directory copied from the log.
    pub(crate) fn diverged(&self) -> bool {
        self.diverged.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub(crate) fn note_diverged(&self) {
        self.diverged
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Records the log's head as seen by the follower.
    pub(crate) fn note_log_head(&self, head: u64) {
        self.log_head
            .fetch_max(head, std::sync::atomic::Ordering::SeqCst);
    }

    /// The last cluster log entry this data directory holds (0: none).
    pub(crate) fn cluster_applied(&self) -> StoreResult<u64> {
        let rx = self.read()?;
        let meta = rx.txn.open_table(META)?;
        let found = meta.get(CLUSTER_APPLIED)?;
        Ok(found.map(|v| v.value()).unwrap_or(0))
    }

    /// Applies cluster log entries in order, in one local transaction, skipping those this
    /// data directory already holds; returns once they are searchable.
    pub(crate) fn apply_entries(&self, entries: &[LogEntry]) -> StoreResult<()> {
        let Some(newest) = entries.last().map(|e| e.seq) else {
            return Ok(());
        };
        let ((), last) = self.transact(false, |tx| {
            let applied = tx.meta_mut()?.get(CLUSTER_APPLIED)?.map(|v| v.value());
            let applied = applied.unwrap_or(0);
            for entry in entries.iter().filter(|e| e.seq > applied) {
                for change in &entry.changes {
                    tx.apply(change)?;
                    if matches!(change, Change::User { .. }) {
                        self.users_generation
                            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                }
            }
            if newest > applied {
                tx.meta_mut()?.insert(CLUSTER_APPLIED, newest)?;
            }
            Ok::<(), StoreError>(())
        })?;
        self.after_commit(last, Some(newest));
        Ok(())
    }

    /// Replaces every canonical row with a cluster's snapshot at `seq`, in one transaction: for
    /// a replica that fell behind the oldest entry the log still keeps. Every record held before
    /// or after enters the outbox, so the index drops what the snapshot no longer has.
    pub(crate) fn replace_with_snapshot(&self, seq: u64, rows: &[Change]) -> StoreResult<()> {
        let ((), last) = self.transact(false, |tx| {
            for kind in Kind::ALL {
                let mut held = Vec::new();
                for entry in tx.records(kind)?.iter()? {
                    held.push(entry?.0.value());
                }
                for id in held {
                    tx.apply(&Change::Record {
                        kind,
                        id,
                        value: None,
                    })?;
                }
            }
            let open = &mut tx.open;
            exclusive(open.txn, &mut open.users, USERS)?.retain(|_, _| false)?;
            exclusive(open.txn, &mut open.user_names, USER_NAMES)?.retain(|_, _| false)?;
            exclusive(open.txn, &mut open.slugs, SLUGS)?.retain(|_, _| false)?;
            exclusive(open.txn, &mut open.images, IMAGES)?.retain(|_, _| false)?;
            exclusive(open.txn, &mut open.image_urls, IMAGE_URLS)?.retain(|_, _| false)?;
            exclusive(open.txn, &mut open.groups, GROUPS)?.retain(|_, _| false)?;
            exclusive(open.txn, &mut open.series, SERIES)?.retain(|_, _| false)?;
            exclusive(open.txn, &mut open.occurrences, OCCURRENCES)?.retain(|_, _| false)?;
            exclusive(open.txn, &mut open.revisions, REVISIONS)?.retain(|_, _| false)?;
            exclusive(open.txn, &mut open.sessions, SESSIONS)?.retain(|_, _| false)?;
            exclusive(open.txn, &mut open.feed_items, FEED_ITEMS)?.retain(|_, _| false)?;
            exclusive(open.txn, &mut open.sync_tokens, SYNC_TOKENS)?.retain(|_, _| false)?;
            exclusive(open.txn, &mut open.webhooks, WEBHOOKS)?.retain(|_, _| false)?;
            exclusive(open.txn, &mut open.journal, journal::JOURNAL)?.retain(|_, _| false)?;
            exclusive(open.txn, &mut open.journal_latest, journal::JOURNAL_LATEST)?
                .retain(|_, _| false)?;
            exclusive(
                open.txn,
                &mut open.journal_deletions,
                journal::JOURNAL_DELETIONS,
            )?
            .retain(|_, _| false)?;
            for change in rows {
                tx.apply(change)?;
            }
            tx.meta_mut()?.insert(CLUSTER_APPLIED, seq)?;
            Ok::<(), StoreError>(())
        })?;
        self.users_generation
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.after_commit(last, Some(seq));
        Ok(())
    }

    /// The position of the newest write that every later read sees, search included: the
    /// outbox sequence number of the last acknowledged write (positions only grow). A client
    /// that read it after its write (`X-Cal-Seq`) can ask any later read to wait for it
    /// (`X-Cal-Min-Seq`).
    pub(crate) fn position(&self) -> u64 {
        self.position.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Returns once [`Store::position`] has reached `wanted`: woken by the commit that moves
    /// it there (a cluster node applying another node's write), not by polling.
    pub(crate) async fn reached(&self, wanted: u64) {
        loop {
            // Registered before the position is read, so a move in between still wakes it.
            let moved = self.position_moved.notified();
            let mut moved = std::pin::pin!(moved);
            moved.as_mut().enable();
            if self.position() >= wanted {
                return;
            }
            moved.await;
        }
    }

    /// How many writes have started and not yet committed (or failed): the indexer lets a
    /// commit wait briefly for them, so that concurrent writers share one index commit.
    pub(crate) fn writes_in_progress(&self) -> usize {
        self.in_progress.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn bump_version(&self) {
        self.version
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// See the `version` field: read it before reading what is derived under it.
    pub(crate) fn version(&self) -> u64 {
        self.version.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Installs the function told about committed outbox entries.
    pub(crate) fn set_commit_hook(&self, hook: CommitHook) {
        *self.after_commit.write().expect("commit hook lock") = Some(hook);
    }

    /// Drops the outbox entries up to and including `seq` (they are in the index).
    ///
    /// Not durable by itself (it becomes so with the next durable commit): a prune lost to a
    /// crash only leaves entries that the next start finds already applied, so it need not
    /// pay its own fsyncs after every index commit.
    pub fn prune_outbox(&self, seq: u64) -> StoreResult<()> {
        let mut tx = self.db.begin_write()?;
        tx.set_durability(redb::Durability::None)?;
        {
            let mut table = tx.open_table(OUTBOX)?;
            let applied: Vec<u64> = table
                .range(..=seq)?
                .map(|e| e.map(|(k, _)| k.value()))
                .collect::<Result<_, _>>()?;
            for k in applied {
                table.remove(k)?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Makes the next outbox sequence numbers follow `seq`, durably: the index holds entries up
    /// to `seq` that this store no longer has (a cluster replica's last commits lost to a crash,
    /// see [`Store::begin_local_write`]), and the writes applied again from the log must reach
    /// the index under numbers it has not applied yet.
    pub(crate) fn draw_outbox_after(&self, seq: u64) -> StoreResult<()> {
        let txn = self.db.begin_write()?;
        {
            let mut meta = txn.open_table(META)?;
            let drawn = meta.get(OUTBOX_SEQUENCE)?.map(|v| v.value()).unwrap_or(0);
            meta.insert(OUTBOX_SEQUENCE, drawn.max(seq))?;
        }
        txn.commit()?;
        Ok(())
    }

    /// The last outbox sequence number drawn (0 when none).
    pub fn outbox_head(&self) -> StoreResult<u64> {
        self.read()?.outbox_head()
    }

    /// A consistent snapshot for reading.
    pub fn read(&self) -> StoreResult<ReadTx> {
        Ok(ReadTx {
            txn: self.db.begin_read()?,
            records: Default::default(),
        })
    }

    pub(crate) fn users(&self) -> StoreResult<Vec<User>> {
        let rx = self.read()?;
        let table = rx.users()?;
        let mut users = Vec::new();
        for entry in table.iter()? {
            let (_, bytes) = entry?;
            users.push(codec::decode(bytes.value())?);
        }
        Ok(users)
    }

    /// Adds a user with the next user ID. Names are unique ASCII-case-insensitively.
    pub(crate) fn add_user(
        &self,
        name: &str,
        role: Role,
        password_hash: String,
    ) -> StoreResult<User> {
        self.write(|tx| {
            let key = name.to_ascii_lowercase();
            if tx.user_names_mut()?.get(key.as_str())?.is_some() {
                return Err(StoreError::UserNameTaken(name.to_string()));
            }
            let id = tx.next_id(Sequence::Users)?;
            let user = User {
                id,
                name: name.to_string(),
                role,
                password_hash,
            };
            tx.change(Change::User {
                id,
                value: Some(codec::encode(&user)),
            })?;
            tx.change(Change::UserName {
                name: key,
                id: Some(id),
            })?;
            Ok(user)
        })
        .inspect(|_| {
            self.users_generation
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        })
    }

    /// Replaces a user's password hash; returns the updated user.
    pub(crate) fn set_password(&self, name: &str, password_hash: String) -> StoreResult<User> {
        self.write(|tx| {
            let id = tx
                .user_names_mut()?
                .get(name.to_ascii_lowercase().as_str())?
                .map(|v| v.value())
                .ok_or_else(|| StoreError::UnknownUser(name.to_string()))?;
            let mut user: User = match tx.users_mut()?.get(id)? {
                Some(bytes) => codec::decode(bytes.value())?,
                None => return Err(StoreError::UnknownUser(name.to_string())),
            };
            user.password_hash = password_hash;
            tx.change(Change::User {
                id,
                value: Some(codec::encode(&user)),
            })?;
            Ok(user)
        })
        .inspect(|_| {
            self.users_generation
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        })
    }
}

/// Reading, the same in write and read transactions: service code that only reads takes
/// `&impl Reads` and works inside either.
pub trait Reads {
    fn get_record<T: DeserializeOwned>(&self, kind: Kind, id: u64) -> StoreResult<Option<T>>;
    /// The records of `ids` that exist, in their order (the table opened once for all).
    fn get_records<T: DeserializeOwned>(&self, kind: Kind, ids: &[u64]) -> StoreResult<Vec<T>>;
    /// Every record of a kind, in ID order.
    fn scan<T: DeserializeOwned>(&self, kind: Kind) -> StoreResult<Vec<T>>;
    fn slug_owner(&self, kind: Kind, language: Language, slug: &str) -> StoreResult<Option<u64>>;
    /// Which kind of record an ID of the shared posts sequence names, if any.
    fn post_kind_of(&self, id: u64) -> StoreResult<Option<PostIdKind>>;
    fn image(&self, id: u64) -> StoreResult<Option<Image>>;
    fn image_by_url(&self, url: &str) -> StoreResult<Option<u64>>;
    /// The members of a translation group, in the order en, pt-br, es.
    fn group_members(&self, kind: Kind, group: u64) -> StoreResult<Vec<(Language, u64)>>;
    fn user_exists(&self, id: u64) -> StoreResult<bool>;
    fn user(&self, id: u64) -> StoreResult<Option<User>>;
    /// The rule and occurrences of the series with this event ID, if it is one.
    fn series(&self, id: u64) -> StoreResult<Option<Series>>;
    /// The series and original start of an occurrence's ID, if it is one.
    fn occurrence_of(&self, id: u64) -> StoreResult<Option<OccurrenceOf>>;
    /// The revision of the event `id`, once it was written with revisions kept.
    fn revision(&self, id: u64) -> StoreResult<Option<u64>>;
    /// The session whose token hashes to `key`.
    fn session(&self, key: &str) -> StoreResult<Option<Session>>;
    /// Every stored session, by key.
    fn all_sessions(&self) -> StoreResult<Vec<(String, Session)>>;
    /// Outbox entries after `seq` in this snapshot, in order.
    fn outbox_after(&self, seq: u64) -> StoreResult<Vec<OutboxEntry>>;
    /// The events copied from the feed `source`, by UID.
    fn feed_items(&self, source: &str) -> StoreResult<Vec<(String, FeedItem)>>;
    /// The validators of the feed `source`'s last answer read whole.
    fn feed_validators(&self, source: &str) -> StoreResult<Option<FeedValidators>>;
    /// Every feed the store holds events or validators of.
    fn feed_sources(&self) -> StoreResult<Vec<String>>;
    /// The change feed token the copy of `source` reached.
    fn sync_token(&self, source: &str) -> StoreResult<Option<String>>;
    /// Every webhook endpoint, by ID.
    fn webhooks(&self) -> StoreResult<Vec<Webhook>>;
    fn webhook(&self, id: u64) -> StoreResult<Option<Webhook>>;
}

/// Read methods shared by write and read transactions: both kinds of redb transaction open
/// tables with the same method names, so one body serves both.
macro_rules! read_methods {
    () => {
        fn get_record<T: DeserializeOwned>(&self, kind: Kind, id: u64) -> StoreResult<Option<T>> {
            let table = self.records(kind)?;
            let found = table.get(id)?;
            Ok(match found {
                Some(bytes) => Some(codec::decode(bytes.value())?),
                None => None,
            })
        }

        fn get_records<T: DeserializeOwned>(&self, kind: Kind, ids: &[u64]) -> StoreResult<Vec<T>> {
            let table = self.records(kind)?;
            let mut out = Vec::with_capacity(ids.len());
            for id in ids {
                if let Some(bytes) = table.get(*id)? {
                    out.push(codec::decode(bytes.value())?);
                }
            }
            Ok(out)
        }

        /// Every record of a kind, in ID order.
        fn scan<T: DeserializeOwned>(&self, kind: Kind) -> StoreResult<Vec<T>> {
            let table = self.records(kind)?;
            let mut out = Vec::new();
            for entry in table.iter()? {
                let (_, bytes) = entry?;
                out.push(codec::decode(bytes.value())?);
            }
            Ok(out)
        }

        fn slug_owner(
            &self,
            kind: Kind,
            language: Language,
            slug: &str,
        ) -> StoreResult<Option<u64>> {
            let table = self.slugs()?;
            let found = table.get((kind.name(), language.code(), slug))?;
            Ok(found.map(|v| v.value()))
        }

        /// Which kind of record an ID of the shared posts sequence names, if any.
        fn post_kind_of(&self, id: u64) -> StoreResult<Option<PostIdKind>> {
            for kind in [Kind::Event, Kind::Venue, Kind::Organizer] {
                if self.records(kind)?.get(id)?.is_some() {
                    return Ok(Some(PostIdKind::Record(kind)));
                }
            }
            if self.images()?.get(id)?.is_some() {
                return Ok(Some(PostIdKind::Image));
            }
            Ok(None)
        }

        fn image(&self, id: u64) -> StoreResult<Option<Image>> {
            let table = self.images()?;
            let found = table.get(id)?;
            Ok(match found {
                Some(bytes) => Some(codec::decode(bytes.value())?),
                None => None,
            })
        }

        fn image_by_url(&self, url: &str) -> StoreResult<Option<u64>> {
            let table = self.image_urls()?;
            let found = table.get(url)?;
            Ok(found.map(|v| v.value()))
        }

        /// The members of a translation group, in the order en, pt-br, es.
        fn group_members(&self, kind: Kind, group: u64) -> StoreResult<Vec<(Language, u64)>> {
            let table = self.groups()?;
            let mut out = Vec::new();
            for language in Language::ALL {
                if let Some(id) = table.get((kind.name(), group, language.code()))? {
                    out.push((language, id.value()));
                }
            }
            Ok(out)
        }

        fn user_exists(&self, id: u64) -> StoreResult<bool> {
            Ok(self.users()?.get(id)?.is_some())
        }

        fn user(&self, id: u64) -> StoreResult<Option<User>> {
            let table = self.users()?;
            let found = table.get(id)?;
            Ok(match found {
                Some(bytes) => Some(codec::decode(bytes.value())?),
                None => None,
            })
        }

        fn series(&self, id: u64) -> StoreResult<Option<Series>> {
            let table = self.series_table()?;
            let found = table.get(id)?;
            Ok(match found {
                Some(bytes) => Some(codec::decode(bytes.value())?),
                None => None,
            })
        }

        fn occurrence_of(&self, id: u64) -> StoreResult<Option<OccurrenceOf>> {
            let table = self.occurrences()?;
            let found = table.get(id)?;
            Ok(match found {
                Some(bytes) => Some(codec::decode(bytes.value())?),
                None => None,
            })
        }

        fn revision(&self, id: u64) -> StoreResult<Option<u64>> {
            let table = self.revisions()?;
            let found = table.get(id)?;
            Ok(found.map(|v| v.value()))
        }

        fn session(&self, key: &str) -> StoreResult<Option<Session>> {
            let table = self.sessions()?;
            let found = table.get(key)?;
            Ok(match found {
                Some(bytes) => Some(codec::decode(bytes.value())?),
                None => None,
            })
        }

        fn all_sessions(&self) -> StoreResult<Vec<(String, Session)>> {
            let mut out = Vec::new();
            for entry in self.sessions()?.iter()? {
                let (key, value) = entry?;
                out.push((key.value().to_string(), codec::decode(value.value())?));
            }
            Ok(out)
        }

        fn feed_items(&self, source: &str) -> StoreResult<Vec<(String, FeedItem)>> {
            let prefix = feed_key(source, "");
            let mut out = Vec::new();
            for entry in self.feed_items_table()?.range(prefix.as_str()..)? {
                let (key, value) = entry?;
                let Some(uid) = key.value().strip_prefix(prefix.as_str()) else {
                    break;
                };
                if !uid.is_empty() {
                    out.push((uid.to_string(), codec::decode(value.value())?));
                }
            }
            Ok(out)
        }

        fn feed_sources(&self) -> StoreResult<Vec<String>> {
            let mut sources: Vec<String> = Vec::new();
            for entry in self.feed_items_table()?.iter()? {
                let (key, _) = entry?;
                let source = key.value().split('\n').next().unwrap_or_default();
                if sources.last().map(String::as_str) != Some(source) {
                    sources.push(source.to_string());
                }
            }
            Ok(sources)
        }

        fn feed_validators(&self, source: &str) -> StoreResult<Option<FeedValidators>> {
            let table = self.feed_items_table()?;
            let found = table.get(feed_key(source, "").as_str())?;
            Ok(match found {
                Some(bytes) => Some(codec::decode(bytes.value())?),
                None => None,
            })
        }

        fn webhooks(&self) -> StoreResult<Vec<Webhook>> {
            let mut out = Vec::new();
            for entry in self.webhooks_table()?.iter()? {
                out.push(codec::decode(entry?.1.value())?);
            }
            Ok(out)
        }

        fn webhook(&self, id: u64) -> StoreResult<Option<Webhook>> {
            let table = self.webhooks_table()?;
            let found = table.get(id)?;
            Ok(match found {
                Some(bytes) => Some(codec::decode(bytes.value())?),
                None => None,
            })
        }

        fn sync_token(&self, source: &str) -> StoreResult<Option<String>> {
            let table = self.sync_tokens()?;
            let found = table.get(source)?;
            Ok(found.map(|token| token.value().to_string()))
        }

        /// Outbox entries after `seq` in this snapshot, in order.
        fn outbox_after(&self, seq: u64) -> StoreResult<Vec<OutboxEntry>> {
            let table = self.outbox()?;
            let mut out = Vec::new();
            for entry in table.range((seq + 1)..)? {
                let (k, v) = entry?;
                let (kind, id): (Kind, u64) = codec::decode(v.value())?;
                out.push(OutboxEntry {
                    seq: k.value(),
                    kind,
                    id,
                });
            }
            Ok(out)
        }
    };
}

/// What an ID of the posts sequence names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PostIdKind {
    Record(Kind),
    Image,
}

type RecordTable<'t> = redb::Table<'t, u64, &'static [u8]>;
type SlugKey = (&'static str, &'static str, &'static str);
type GroupKey = (&'static str, u64, &'static str);

/// The tables of one write transaction, each opened at its first use and kept open until the
/// transaction ends: opening a table is a lookup in redb's table tree, and a bulk import,
/// which touches a handful of tables per line, spent a fifth of its store thread on it.
struct OpenTables<'t> {
    txn: &'t redb::WriteTransaction,
    meta: OnceCell<redb::Table<'t, &'static str, u64>>,
    users: OnceCell<RecordTable<'t>>,
    user_names: OnceCell<redb::Table<'t, &'static str, u64>>,
    slugs: OnceCell<redb::Table<'t, SlugKey, u64>>,
    records: [OnceCell<RecordTable<'t>>; Kind::ALL.len()],
    images: OnceCell<RecordTable<'t>>,
    image_urls: OnceCell<redb::Table<'t, &'static str, u64>>,
    outbox: OnceCell<RecordTable<'t>>,
    groups: OnceCell<redb::Table<'t, GroupKey, u64>>,
    series: OnceCell<RecordTable<'t>>,
    occurrences: OnceCell<RecordTable<'t>>,
    revisions: OnceCell<redb::Table<'t, u64, u64>>,
    sessions: OnceCell<redb::Table<'t, &'static str, &'static [u8]>>,
    feed_items: OnceCell<redb::Table<'t, &'static str, &'static [u8]>>,
    sync_tokens: OnceCell<redb::Table<'t, &'static str, &'static str>>,
    webhooks: OnceCell<RecordTable<'t>>,
    journal: OnceCell<RecordTable<'t>>,
    journal_latest: OnceCell<redb::Table<'t, (&'static str, u64), u64>>,
    journal_deletions: OnceCell<redb::Table<'t, u64, i64>>,
}

impl<'t> OpenTables<'t> {
    fn new(txn: &'t redb::WriteTransaction) -> OpenTables<'t> {
        OpenTables {
            txn,
            meta: OnceCell::new(),
            users: OnceCell::new(),
            user_names: OnceCell::new(),
            slugs: OnceCell::new(),
            records: Default::default(),
            images: OnceCell::new(),
            image_urls: OnceCell::new(),
            outbox: OnceCell::new(),
            groups: OnceCell::new(),
            series: OnceCell::new(),
            occurrences: OnceCell::new(),
            revisions: OnceCell::new(),
            sessions: OnceCell::new(),
            feed_items: OnceCell::new(),
            sync_tokens: OnceCell::new(),
            webhooks: OnceCell::new(),
            journal: OnceCell::new(),
            journal_latest: OnceCell::new(),
            journal_deletions: OnceCell::new(),
        }
    }
}

/// The table in `cell`, opened first if need be.
fn shared<'c, 't, K: redb::Key + 'static, V: redb::Value + 'static>(
    txn: &'t redb::WriteTransaction,
    cell: &'c OnceCell<redb::Table<'t, K, V>>,
    definition: TableDefinition<'static, K, V>,
) -> StoreResult<&'c redb::Table<'t, K, V>> {
    if let Some(table) = cell.get() {
        return Ok(table);
    }
    let table = txn.open_table(definition)?;
    Ok(cell.get_or_init(|| table))
}

/// [`shared`], for changing the table.
fn exclusive<'c, 't, K: redb::Key + 'static, V: redb::Value + 'static>(
    txn: &'t redb::WriteTransaction,
    cell: &'c mut OnceCell<redb::Table<'t, K, V>>,
    definition: TableDefinition<'static, K, V>,
) -> StoreResult<&'c mut redb::Table<'t, K, V>> {
    if cell.get().is_none() {
        // Cannot fail: the cell was empty.
        let _ = cell.set(txn.open_table(definition)?);
    }
    Ok(cell.get_mut().expect("the table was opened above"))
}

fn kind_slot(kind: Kind) -> usize {
    Kind::ALL
        .iter()
        .position(|k| *k == kind)
        .expect("every kind is in ALL")
}

/// One write transaction. Everything done through it commits together or not at all.
pub(crate) struct WriteTx<'t> {
    open: OpenTables<'t>,
    last_outbox_seq: Option<u64>,
    /// The changes made so far, when the transaction is recorded (cluster mode).
    recorded: Option<Vec<Change>>,
    /// The records journaled in this transaction, with their entry's position and action.
    journaled: std::collections::HashMap<(Kind, u64), (u64, crate::model::journal::Action)>,
}

impl<'t> WriteTx<'t> {
    fn new(txn: &'t redb::WriteTransaction, recording: bool) -> WriteTx<'t> {
        WriteTx {
            open: OpenTables::new(txn),
            last_outbox_seq: None,
            recorded: recording.then(Vec::new),
            journaled: Default::default(),
        }
    }
}

impl Reads for WriteTx<'_> {
    read_methods!();
}

// The tables the read methods use, by the names they use in both kinds of transaction.
impl<'t> WriteTx<'t> {
    fn records(&self, kind: Kind) -> StoreResult<&RecordTable<'t>> {
        let open = &self.open;
        shared(
            open.txn,
            &open.records[kind_slot(kind)],
            records_table(kind),
        )
    }

    fn slugs(&self) -> StoreResult<&redb::Table<'t, SlugKey, u64>> {
        shared(self.open.txn, &self.open.slugs, SLUGS)
    }

    fn images(&self) -> StoreResult<&RecordTable<'t>> {
        shared(self.open.txn, &self.open.images, IMAGES)
    }

    fn image_urls(&self) -> StoreResult<&redb::Table<'t, &'static str, u64>> {
        shared(self.open.txn, &self.open.image_urls, IMAGE_URLS)
    }

    fn groups(&self) -> StoreResult<&redb::Table<'t, GroupKey, u64>> {
        shared(self.open.txn, &self.open.groups, GROUPS)
    }

    fn users(&self) -> StoreResult<&RecordTable<'t>> {
        shared(self.open.txn, &self.open.users, USERS)
    }

    fn outbox(&self) -> StoreResult<&RecordTable<'t>> {
        shared(self.open.txn, &self.open.outbox, OUTBOX)
    }

    fn series_table(&self) -> StoreResult<&RecordTable<'t>> {
        shared(self.open.txn, &self.open.series, SERIES)
    }

    fn occurrences(&self) -> StoreResult<&RecordTable<'t>> {
        shared(self.open.txn, &self.open.occurrences, OCCURRENCES)
    }

    fn revisions(&self) -> StoreResult<&redb::Table<'t, u64, u64>> {
        shared(self.open.txn, &self.open.revisions, REVISIONS)
    }

    fn sessions(&self) -> StoreResult<&redb::Table<'t, &'static str, &'static [u8]>> {
        shared(self.open.txn, &self.open.sessions, SESSIONS)
    }

    fn feed_items_table(&self) -> StoreResult<&redb::Table<'t, &'static str, &'static [u8]>> {
        shared(self.open.txn, &self.open.feed_items, FEED_ITEMS)
    }

    fn sync_tokens(&self) -> StoreResult<&redb::Table<'t, &'static str, &'static str>> {
        shared(self.open.txn, &self.open.sync_tokens, SYNC_TOKENS)
    }

    fn webhooks_table(&self) -> StoreResult<&RecordTable<'t>> {
        shared(self.open.txn, &self.open.webhooks, WEBHOOKS)
    }

    /// Stores (or with `None` removes) the webhook endpoint `id`.
    pub(crate) fn set_webhook(&mut self, id: u64, webhook: Option<&Webhook>) -> StoreResult<()> {
        self.change(Change::Webhook {
            id,
            value: webhook.map(codec::encode),
        })
    }

    /// Keeps (or with `None` forgets) the change feed token the copy of `source` reached.
    pub(crate) fn set_sync_token(&mut self, source: &str, token: Option<&str>) -> StoreResult<()> {
        self.change(Change::SyncToken {
            source: source.to_string(),
            token: token.map(str::to_string),
        })
    }

    /// Keeps the validators of the feed `source`'s last answer read whole.
    pub(crate) fn set_feed_validators(
        &mut self,
        source: &str,
        validators: &FeedValidators,
    ) -> StoreResult<()> {
        self.change(Change::FeedItem {
            key: feed_key(source, ""),
            value: Some(codec::encode(validators)),
        })
    }

    /// Keeps (or with `None` forgets) the event copied from the feed `source` for `uid`.
    pub(crate) fn set_feed_item(
        &mut self,
        source: &str,
        uid: &str,
        item: Option<&FeedItem>,
    ) -> StoreResult<()> {
        self.change(Change::FeedItem {
            key: feed_key(source, uid),
            value: item.map(codec::encode),
        })
    }

    /// Stores (or with `None` removes) the session whose token hashes to `key`.
    pub(crate) fn set_session(&mut self, key: &str, session: Option<&Session>) -> StoreResult<()> {
        self.change(Change::Session {
            key: key.to_string(),
            value: session.map(codec::encode),
        })
    }

    fn meta_mut(&mut self) -> StoreResult<&mut redb::Table<'t, &'static str, u64>> {
        exclusive(self.open.txn, &mut self.open.meta, META)
    }

    fn users_mut(&mut self) -> StoreResult<&mut RecordTable<'t>> {
        exclusive(self.open.txn, &mut self.open.users, USERS)
    }

    fn user_names_mut(&mut self) -> StoreResult<&mut redb::Table<'t, &'static str, u64>> {
        exclusive(self.open.txn, &mut self.open.user_names, USER_NAMES)
    }
}

impl WriteTx<'_> {
    /// Draws the next value of an ID sequence (starting at 1, never reused).
    pub(crate) fn next_id(&mut self, sequence: Sequence) -> StoreResult<u64> {
        let next = self
            .meta_mut()?
            .get(sequence.key())?
            .map(|v| v.value())
            .unwrap_or(0)
            + 1;
        self.change(Change::Sequence {
            key: sequence.key().to_string(),
            value: next,
        })?;
        Ok(next)
    }

    /// Makes sure the sequence never draws `id` or anything below it again (bulk import keeps
    /// the IDs of the records it loads).
    pub(crate) fn raise_sequence(&mut self, sequence: Sequence, id: u64) -> StoreResult<()> {
        let current = self
            .meta_mut()?
            .get(sequence.key())?
            .map(|v| v.value())
            .unwrap_or(0);
        if id > current {
            self.change(Change::Sequence {
                key: sequence.key().to_string(),
                value: id,
            })?;
        }
        Ok(())
    }

    /// Stores an image record under a given ID (bulk import); the caller has checked that the
    /// ID is free and the URL unknown.
    pub(crate) fn put_image(&mut self, image: &Image) -> StoreResult<()> {
        self.insert_image(image)?;
        self.raise_sequence(Sequence::Posts, image.id)
    }

    fn insert_image(&mut self, image: &Image) -> StoreResult<()> {
        self.change(Change::Image {
            id: image.id,
            value: codec::encode(image),
        })?;
        self.change(Change::ImageUrl {
            url: image.url.clone(),
            id: image.id,
        })
    }

    /// Stores a record; it also enters the outbox, in this transaction.
    /// Writes a record; an event's revision grows by one, and is never below the second of
    /// its modification counted from 2020 (what calendar feeds gave as its SEQUENCE before
    /// revisions were kept, so that it never goes back for their subscribers).
    pub(crate) fn put_record<T: Serialize>(
        &mut self,
        kind: Kind,
        id: u64,
        record: &T,
    ) -> StoreResult<()> {
        let value = codec::encode(record);
        if kind == Kind::Event {
            let written: crate::model::post::PostMeta = codec::decode(&value)?;
            let before = match self.revision(id)? {
                Some(revision) => Some(revision),
                None => self
                    .get_record::<crate::model::post::PostMeta>(kind, id)?
                    .map(|stored| revision_floor(stored.modified_utc)),
            };
            let revision = before
                .map_or(0, |r| r + 1)
                .max(revision_floor(written.modified_utc));
            self.change(Change::Revision {
                id,
                value: Some(revision),
            })?;
        }
        self.change(Change::Record {
            kind,
            id,
            value: Some(value),
        })
    }

    pub(crate) fn remove_record(&mut self, kind: Kind, id: u64) -> StoreResult<()> {
        if kind == Kind::Event {
            self.change(Change::Revision { id, value: None })?;
        }
        self.change(Change::Record {
            kind,
            id,
            value: None,
        })
    }

    /// Stores (or with `None` removes) the series of the event `id`.
    pub(crate) fn set_series(&mut self, id: u64, series: Option<&Series>) -> StoreResult<()> {
        self.change(Change::Series {
            id,
            value: series.map(codec::encode),
        })
    }

    /// Stores (or with `None` removes) what the occurrence ID `id` names.
    pub(crate) fn set_occurrence(
        &mut self,
        id: u64,
        occurrence: Option<&OccurrenceOf>,
    ) -> StoreResult<()> {
        self.change(Change::Occurrence {
            id,
            value: occurrence.map(codec::encode),
        })
    }

    /// Makes one change to the canonical tables, and records it when the transaction is
    /// recorded. Every mutation of the canonical tables goes through here; a record's change
    /// also enters the outbox, for the search index.
    pub(crate) fn change(&mut self, change: Change) -> StoreResult<()> {
        let journaled = self.journal_actions(&change)?;
        self.apply(&change)?;
        if let Some(recorded) = &mut self.recorded {
            recorded.push(change);
        }
        for (kind, id, language, action) in journaled {
            self.journal(kind, id, language, action)?;
        }
        Ok(())
    }

    /// Makes `change` without recording it (a change replayed from elsewhere).
    fn apply(&mut self, change: &Change) -> StoreResult<()> {
        let open = &mut self.open;
        match change {
            Change::Sequence { key, value } => {
                exclusive(open.txn, &mut open.meta, META)?.insert(key.as_str(), *value)?;
            }
            Change::User { id, value } => {
                let users = exclusive(open.txn, &mut open.users, USERS)?;
                match value {
                    Some(bytes) => users.insert(*id, bytes.as_slice())?,
                    None => users.remove(*id)?,
                };
            }
            Change::UserName { name, id } => {
                let names = exclusive(open.txn, &mut open.user_names, USER_NAMES)?;
                match id {
                    Some(id) => names.insert(name.as_str(), *id)?,
                    None => names.remove(name.as_str())?,
                };
            }
            Change::Record { kind, id, value } => {
                let records = exclusive(
                    open.txn,
                    &mut open.records[kind_slot(*kind)],
                    records_table(*kind),
                )?;
                match value {
                    Some(bytes) => records.insert(*id, bytes.as_slice())?,
                    None => records.remove(*id)?,
                };
                self.enqueue(*kind, *id)?;
            }
            Change::Slug {
                kind,
                language,
                slug,
                id,
            } => {
                let slugs = exclusive(open.txn, &mut open.slugs, SLUGS)?;
                let key = (kind.name(), language.code(), slug.as_str());
                match id {
                    Some(id) => slugs.insert(key, *id)?,
                    None => slugs.remove(key)?,
                };
            }
            Change::Image { id, value } => {
                exclusive(open.txn, &mut open.images, IMAGES)?.insert(*id, value.as_slice())?;
            }
            Change::ImageUrl { url, id } => {
                exclusive(open.txn, &mut open.image_urls, IMAGE_URLS)?.insert(url.as_str(), *id)?;
            }
            Change::Group {
                kind,
                group,
                language,
                id,
            } => {
                let groups = exclusive(open.txn, &mut open.groups, GROUPS)?;
                let key = (kind.name(), *group, language.code());
                match id {
                    Some(id) => groups.insert(key, *id)?,
                    None => groups.remove(key)?,
                };
            }
            Change::Series { id, value } => {
                let series = exclusive(open.txn, &mut open.series, SERIES)?;
                match value {
                    Some(bytes) => series.insert(*id, bytes.as_slice())?,
                    None => series.remove(*id)?,
                };
            }
            Change::Occurrence { id, value } => {
                let table = exclusive(open.txn, &mut open.occurrences, OCCURRENCES)?;
                match value {
                    Some(bytes) => table.insert(*id, bytes.as_slice())?,
                    None => table.remove(*id)?,
                };
            }
            Change::Revision { id, value } => {
                let table = exclusive(open.txn, &mut open.revisions, REVISIONS)?;
                match value {
                    Some(revision) => table.insert(*id, *revision)?,
                    None => table.remove(*id)?,
                };
            }
            Change::Session { key, value } => {
                let table = exclusive(open.txn, &mut open.sessions, SESSIONS)?;
                match value {
                    Some(bytes) => table.insert(key.as_str(), bytes.as_slice())?,
                    None => table.remove(key.as_str())?,
                };
            }
            Change::FeedItem { key, value } => {
                let table = exclusive(open.txn, &mut open.feed_items, FEED_ITEMS)?;
                match value {
                    Some(bytes) => table.insert(key.as_str(), bytes.as_slice())?,
                    None => table.remove(key.as_str())?,
                };
            }
            Change::Webhook { id, value } => {
                let table = exclusive(open.txn, &mut open.webhooks, WEBHOOKS)?;
                match value {
                    Some(bytes) => table.insert(*id, bytes.as_slice())?,
                    None => table.remove(*id)?,
                };
            }
            Change::SyncToken { source, token } => {
                let table = exclusive(open.txn, &mut open.sync_tokens, SYNC_TOKENS)?;
                match token {
                    Some(token) => table.insert(source.as_str(), token.as_str())?,
                    None => table.remove(source.as_str())?,
                };
            }
            Change::Journal { seq, value } => journal::apply(open, *seq, value.as_deref())?,
        }
        Ok(())
    }

    /// Appends `(seq, kind, id)` to the outbox. Terms are not indexed, but their entries make
    /// the write wait for the next index view like any other: lists resolve term slugs and
    /// IDs from the store snapshot of that view (see `crate::index::View`).
    fn enqueue(&mut self, kind: Kind, id: u64) -> StoreResult<()> {
        let meta = self.meta_mut()?;
        let seq = meta.get(OUTBOX_SEQUENCE)?.map(|v| v.value()).unwrap_or(0) + 1;
        meta.insert(OUTBOX_SEQUENCE, seq)?;
        let open = &mut self.open;
        exclusive(open.txn, &mut open.outbox, OUTBOX)?
            .insert(seq, codec::encode(&(kind, id)).as_slice())?;
        self.last_outbox_seq = Some(seq);
        Ok(())
    }

    pub(crate) fn set_slug(
        &mut self,
        kind: Kind,
        language: Language,
        slug: &str,
        id: u64,
    ) -> StoreResult<()> {
        self.change(Change::Slug {
            kind,
            language,
            slug: slug.to_string(),
            id: Some(id),
        })
    }

    pub(crate) fn remove_slug(
        &mut self,
        kind: Kind,
        language: Language,
        slug: &str,
    ) -> StoreResult<()> {
        self.change(Change::Slug {
            kind,
            language,
            slug: slug.to_string(),
            id: None,
        })
    }

    /// Stores an image record for a URL, or returns the existing one with exactly this URL.
    pub(crate) fn image_for_url(&mut self, url: &str) -> StoreResult<u64> {
        if let Some(id) = self.image_by_url(url)? {
            return Ok(id);
        }
        let id = self.next_id(Sequence::Posts)?;
        self.insert_image(&Image {
            id,
            url: url.to_string(),
        })?;
        Ok(id)
    }

    pub(crate) fn set_group_member(
        &mut self,
        kind: Kind,
        group: u64,
        language: Language,
        id: u64,
    ) -> StoreResult<()> {
        self.change(Change::Group {
            kind,
            group,
            language,
            id: Some(id),
        })
    }

    pub(crate) fn remove_group_member(
        &mut self,
        kind: Kind,
        group: u64,
        language: Language,
    ) -> StoreResult<()> {
        self.change(Change::Group {
            kind,
            group,
            language,
            id: None,
        })
    }
}

/// A read snapshot.
pub struct ReadTx {
    txn: redb::ReadTransaction,
    /// Each kind's records table, opened at its first read: a list's representations read
    /// dozens of records, and opening a table looks up its root each time.
    records: [std::sync::OnceLock<redb::ReadOnlyTable<u64, &'static [u8]>>; 5],
}

impl Reads for ReadTx {
    read_methods!();
}

// The tables the read methods use: a read transaction opens them as it goes (opening a table
// for reading takes no lock), the records tables once each (see the `records` field).
impl ReadTx {
    fn records(&self, kind: Kind) -> StoreResult<&redb::ReadOnlyTable<u64, &'static [u8]>> {
        let opened = &self.records[kind_slot(kind)];
        if let Some(table) = opened.get() {
            return Ok(table);
        }
        let table = self.txn.open_table(records_table(kind))?;
        Ok(opened.get_or_init(|| table))
    }

    fn slugs(&self) -> StoreResult<redb::ReadOnlyTable<SlugKey, u64>> {
        Ok(self.txn.open_table(SLUGS)?)
    }

    fn images(&self) -> StoreResult<redb::ReadOnlyTable<u64, &'static [u8]>> {
        Ok(self.txn.open_table(IMAGES)?)
    }

    fn image_urls(&self) -> StoreResult<redb::ReadOnlyTable<&'static str, u64>> {
        Ok(self.txn.open_table(IMAGE_URLS)?)
    }

    fn groups(&self) -> StoreResult<redb::ReadOnlyTable<GroupKey, u64>> {
        Ok(self.txn.open_table(GROUPS)?)
    }

    fn users(&self) -> StoreResult<redb::ReadOnlyTable<u64, &'static [u8]>> {
        Ok(self.txn.open_table(USERS)?)
    }

    fn outbox(&self) -> StoreResult<redb::ReadOnlyTable<u64, &'static [u8]>> {
        Ok(self.txn.open_table(OUTBOX)?)
    }

    fn series_table(&self) -> StoreResult<redb::ReadOnlyTable<u64, &'static [u8]>> {
        Ok(self.txn.open_table(SERIES)?)
    }

    fn occurrences(&self) -> StoreResult<redb::ReadOnlyTable<u64, &'static [u8]>> {
        Ok(self.txn.open_table(OCCURRENCES)?)
    }

    fn revisions(&self) -> StoreResult<redb::ReadOnlyTable<u64, u64>> {
        Ok(self.txn.open_table(REVISIONS)?)
    }

    fn sessions(&self) -> StoreResult<redb::ReadOnlyTable<&'static str, &'static [u8]>> {
        Ok(self.txn.open_table(SESSIONS)?)
    }

    fn feed_items_table(&self) -> StoreResult<redb::ReadOnlyTable<&'static str, &'static [u8]>> {
        Ok(self.txn.open_table(FEED_ITEMS)?)
    }

    fn sync_tokens(&self) -> StoreResult<redb::ReadOnlyTable<&'static str, &'static str>> {
        Ok(self.txn.open_table(SYNC_TOKENS)?)
    }

    fn webhooks_table(&self) -> StoreResult<redb::ReadOnlyTable<u64, &'static [u8]>> {
        Ok(self.txn.open_table(WEBHOOKS)?)
    }
}

impl ReadTx {
    /// The last outbox sequence number drawn in this snapshot (0 when none).
    pub(crate) fn outbox_head(&self) -> StoreResult<u64> {
        let meta = self.txn.open_table(META)?;
        let found = meta.get(OUTBOX_SEQUENCE)?;
        Ok(found.map(|v| v.value()).unwrap_or(0))
    }

    /// The series whose rule never ends, with the wall clock their occurrences reach.
    pub(crate) fn open_ended_series(&self) -> StoreResult<Vec<(u64, NaiveDateTime)>> {
        let mut out = Vec::new();
        for entry in self.series_table()?.iter()? {
            let (id, value) = entry?;
            let head: SeriesHorizon = codec::decode(value.value())?;
            if let Some(horizon) = head.horizon {
                out.push((id.value(), horizon));
            }
        }
        Ok(out)
    }

    /// How many records of a kind the store holds.
    pub(crate) fn count(&self, kind: Kind) -> StoreResult<u64> {
        Ok(self.records(kind)?.len()?)
    }

    /// Visits every record of a kind in ID order without holding them all in memory.
    /// Every row of the canonical tables as the change that would create it (the outbox and
    /// the local positions aside): what a cluster's snapshot holds of this calendar.
    pub(crate) fn for_each_row<E: From<StoreError>>(
        &self,
        mut f: impl FnMut(Change) -> Result<(), E>,
    ) -> Result<(), E> {
        // Every meta value but the format and the local positions is a sequence.
        let meta = self.txn.open_table(META).map_err(StoreError::from)?;
        for entry in meta.iter().map_err(StoreError::from)? {
            let (key, value) = entry.map_err(StoreError::from)?;
            let key = key.value();
            if !["format", OUTBOX_SEQUENCE, CLUSTER_APPLIED].contains(&key) {
                f(Change::Sequence {
                    key: key.to_string(),
                    value: value.value(),
                })?;
            }
        }
        for entry in self.users()?.iter().map_err(StoreError::from)? {
            let (id, value) = entry.map_err(StoreError::from)?;
            f(Change::User {
                id: id.value(),
                value: Some(value.value().to_vec()),
            })?;
        }
        let names = self.txn.open_table(USER_NAMES).map_err(StoreError::from)?;
        for entry in names.iter().map_err(StoreError::from)? {
            let (name, id) = entry.map_err(StoreError::from)?;
            f(Change::UserName {
                name: name.value().to_string(),
                id: Some(id.value()),
            })?;
        }
        for kind in Kind::ALL {
            for entry in self.records(kind)?.iter().map_err(StoreError::from)? {
                let (id, value) = entry.map_err(StoreError::from)?;
                f(Change::Record {
                    kind,
                    id: id.value(),
                    value: Some(value.value().to_vec()),
                })?;
            }
        }
        for entry in self.slugs()?.iter().map_err(StoreError::from)? {
            let (key, id) = entry.map_err(StoreError::from)?;
            let (kind, language, slug) = key.value();
            let (Some(kind), Some(language)) =
                (Kind::from_name(kind), Language::from_code(language))
            else {
                continue;
            };
            f(Change::Slug {
                kind,
                language,
                slug: slug.to_string(),
                id: Some(id.value()),
            })?;
        }
        for entry in self.images()?.iter().map_err(StoreError::from)? {
            let (id, value) = entry.map_err(StoreError::from)?;
            f(Change::Image {
                id: id.value(),
                value: value.value().to_vec(),
            })?;
        }
        for entry in self.image_urls()?.iter().map_err(StoreError::from)? {
            let (url, id) = entry.map_err(StoreError::from)?;
            f(Change::ImageUrl {
                url: url.value().to_string(),
                id: id.value(),
            })?;
        }
        for entry in self.groups()?.iter().map_err(StoreError::from)? {
            let (key, id) = entry.map_err(StoreError::from)?;
            let (kind, group, language) = key.value();
            let (Some(kind), Some(language)) =
                (Kind::from_name(kind), Language::from_code(language))
            else {
                continue;
            };
            f(Change::Group {
                kind,
                group,
                language,
                id: Some(id.value()),
            })?;
        }
        for entry in self.series_table()?.iter().map_err(StoreError::from)? {
            let (id, value) = entry.map_err(StoreError::from)?;
            f(Change::Series {
                id: id.value(),
                value: Some(value.value().to_vec()),
            })?;
        }
        for entry in self.occurrences()?.iter().map_err(StoreError::from)? {
            let (id, value) = entry.map_err(StoreError::from)?;
            f(Change::Occurrence {
                id: id.value(),
                value: Some(value.value().to_vec()),
            })?;
        }
        for entry in self.revisions()?.iter().map_err(StoreError::from)? {
            let (id, value) = entry.map_err(StoreError::from)?;
            f(Change::Revision {
                id: id.value(),
                value: Some(value.value()),
            })?;
        }
        for entry in self.sessions()?.iter().map_err(StoreError::from)? {
            let (key, value) = entry.map_err(StoreError::from)?;
            f(Change::Session {
                key: key.value().to_string(),
                value: Some(value.value().to_vec()),
            })?;
        }
        for entry in self.feed_items_table()?.iter().map_err(StoreError::from)? {
            let (key, value) = entry.map_err(StoreError::from)?;
            f(Change::FeedItem {
                key: key.value().to_string(),
                value: Some(value.value().to_vec()),
            })?;
        }
        for entry in self.webhooks_table()?.iter().map_err(StoreError::from)? {
            let (id, value) = entry.map_err(StoreError::from)?;
            f(Change::Webhook {
                id: id.value(),
                value: Some(value.value().to_vec()),
            })?;
        }
        for entry in self.sync_tokens()?.iter().map_err(StoreError::from)? {
            let (source, token) = entry.map_err(StoreError::from)?;
            f(Change::SyncToken {
                source: source.value().to_string(),
                token: Some(token.value().to_string()),
            })?;
        }
        self.for_each_journal_row(&mut f)
    }

    pub(crate) fn for_each<T: DeserializeOwned, E: From<StoreError>>(
        &self,
        kind: Kind,
        mut f: impl FnMut(T) -> Result<(), E>,
    ) -> Result<(), E> {
        let table = self.records(kind)?;
        for entry in table.iter().map_err(StoreError::from)? {
            let (_, bytes) = entry.map_err(StoreError::from)?;
            f(codec::decode(bytes.value()).map_err(StoreError::from)?)?;
        }
        Ok(())
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(in crate::store) fn temp_store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("almanac.redb")).unwrap();
        (dir, store)
    }

    /// An event record's leading part, which is all the store reads of an event.
    pub(in crate::store) fn event(
        id: u64,
        title: &str,
        modified_utc: &str,
    ) -> crate::model::post::PostMeta {
        let at = crate::values::datetime::parse_formatted(modified_utc).unwrap();
        crate::model::post::PostMeta {
            id,
            language: Language::En,
            group: id,
            author: 1,
            status: crate::model::Status::Publish,
            status_before_trash: None,
            slug: title.to_string(),
            slug_before_trash: None,
            date: at,
            date_utc: at,
            modified_utc: at,
            title: title.to_string(),
            description: String::new(),
            excerpt: String::new(),
            image: None,
        }
    }

    #[test]
    fn an_event_revision_grows_with_every_write_from_the_second_of_its_modification() {
        let (_dir, store) = temp_store();
        let second =
            |at: &str| revision_floor(crate::values::datetime::parse_formatted(at).unwrap());
        let write = |modified: &str| {
            store
                .write(|tx| tx.put_record(Kind::Event, 7, &event(7, "gig", modified)))
                .unwrap();
            store.read().unwrap().revision(7).unwrap()
        };
        let first = write("2026-11-28 10:00:00");
        assert_eq!(first, Some(second("2026-11-28 10:00:00")));
        // Within the same second, and with an older modification (an import), it still grows.
        assert_eq!(write("2026-11-28 10:00:00"), first.map(|r| r + 1));
        assert_eq!(write("2025-01-01 00:00:00"), first.map(|r| r + 2));
        // A later second moves it up to that second.
        assert_eq!(
            write("2026-11-28 10:05:00"),
            Some(second("2026-11-28 10:05:00"))
        );
        store.write(|tx| tx.remove_record(Kind::Event, 7)).unwrap();
        assert_eq!(store.read().unwrap().revision(7).unwrap(), None);
    }

    #[test]
    fn users_get_increasing_ids_and_unique_names() {
        let (_dir, store) = temp_store();
        let a = store.add_user("Ana", Role::Editor, "h1".into()).unwrap();
        let b = store.add_user("bob", Role::Author, "h2".into()).unwrap();
        assert_eq!((a.id, b.id), (1, 2));
        assert!(matches!(
            store.add_user("ANA", Role::Subscriber, "h3".into()),
            Err(StoreError::UserNameTaken(_))
        ));
        // The failed add drew no ID: the transaction was not committed.
        let c = store.add_user("cy", Role::Author, "h4".into()).unwrap();
        assert_eq!(c.id, 3);
        let updated = store.set_password("BOB", "h5".into()).unwrap();
        assert_eq!(updated.password_hash, "h5");
        assert_eq!(store.users().unwrap().len(), 3);
    }

    #[test]
    fn sequences_are_shared_by_post_kinds_and_failed_writes_leave_nothing() {
        let (_dir, store) = temp_store();
        let ids = store
            .write(|tx| {
                let event = tx.next_id(Kind::Event.sequence())?;
                let venue = tx.next_id(Kind::Venue.sequence())?;
                let tag = tx.next_id(Kind::Tag.sequence())?;
                tx.put_record(
                    Kind::Event,
                    event,
                    &self::event(event, "concert", "2026-01-01 00:00:00"),
                )?;
                tx.put_record(
                    Kind::Venue,
                    venue,
                    &self::event(venue, "hall", "2026-01-01 00:00:00"),
                )?;
                tx.set_slug(Kind::Event, Language::En, "concert", event)?;
                StoreResult::Ok((event, venue, tag))
            })
            .unwrap();
        assert_eq!(ids, (1, 2, 1));
        let failed: StoreResult<()> = store.write(|tx| {
            let id = tx.next_id(Sequence::Posts)?;
            tx.put_record(Kind::Event, id, &event(id, "half", "2026-01-01 00:00:00"))?;
            Err(StoreError::UnknownUser("forced".into()))
        });
        assert!(failed.is_err());
        let rx = store.read().unwrap();
        assert_eq!(
            rx.get_record::<crate::model::post::PostMeta>(Kind::Event, 3)
                .unwrap(),
            None
        );
        assert_eq!(
            rx.post_kind_of(2).unwrap(),
            Some(PostIdKind::Record(Kind::Venue))
        );
        assert_eq!(
            rx.slug_owner(Kind::Event, Language::En, "concert").unwrap(),
            Some(1)
        );
        assert_eq!(
            rx.slug_owner(Kind::Event, Language::Es, "concert").unwrap(),
            None
        );
    }
}
