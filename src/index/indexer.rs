//! Keeping the index current (docs/architecture.md, "Consistency"): every store write that touches
//! an indexed record appends to the outbox in its own transaction; after the commit, the
//! store's commit hook hands the sequence number to the indexer thread and waits until the
//! index has applied it. Writes arriving while a batch is applied form the next batch (group
//! commit: many writes share one index commit). A crash between the store commit and the index
//! commit leaves the entries in the outbox, and the next start applies them before serving.

use super::SearchIndex;
use crate::store::Store;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Longest an index commit waits for writes already inside a store transaction (a durable
/// redb commit takes about a millisecond here). Each index commit writes a segment whose
/// fixed cost (a few milliseconds of CPU and a dozen fsyncs) dwarfs a single event; without
/// the wait, most commits of a few concurrent writers carry one or two events. A lone writer
/// never waits: nothing else is in progress when it asks.
const GATHER_WAIT: Duration = Duration::from_millis(3);

#[derive(Default)]
struct Progress {
    /// Highest sequence number a writer waits for.
    requested: u64,
    /// Highest sequence number in the index.
    applied: u64,
    stopping: bool,
}

struct Shared {
    progress: Mutex<Progress>,
    /// Wakes the indexer: something new was requested, or it should stop.
    requested: Condvar,
    /// Wakes the writers: something new was applied, or the indexer stopped. Two condition
    /// variables, so that a writer's request does not wake every other waiting writer (with
    /// 64 concurrent creates, each batch woke every writer dozens of times).
    applied: Condvar,
}

/// The background indexer of a running server.
pub struct Indexer {
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Indexer {
    /// Starts the indexer and installs the store's commit hook, so that every acknowledged
    /// write is searchable.
    pub fn start(store: Arc<Store>, index: Arc<SearchIndex>) -> Indexer {
        Indexer::launch(store, index, true)
    }

    /// For bulk loads (`almanac import`): writers go on while the indexer applies what they
    /// committed, so parsing and storing the next batch overlaps indexing the last one; the
    /// indexer takes whatever has accumulated as one commit. Nothing is acknowledged to a
    /// client meanwhile, and [`Indexer::stop`] applies everything before it returns.
    pub(crate) fn start_bulk(store: Arc<Store>, index: Arc<SearchIndex>) -> Indexer {
        Indexer::launch(store, index, false)
    }

    fn launch(store: Arc<Store>, index: Arc<SearchIndex>, acknowledged: bool) -> Indexer {
        let shared = Arc::new(Shared {
            progress: Mutex::new(Progress {
                applied: index.applied_seq(),
                ..Progress::default()
            }),
            requested: Condvar::new(),
            applied: Condvar::new(),
        });
        let thread = {
            let shared = shared.clone();
            let store = store.clone();
            std::thread::Builder::new()
                .name("indexer".into())
                .spawn(move || run(&shared, &store, &index, acknowledged))
                .expect("spawning the indexer thread")
        };
        let hook_shared = shared.clone();
        store.set_commit_hook(if acknowledged {
            Arc::new(move |seq| wait_for(&hook_shared, seq))
        } else {
            Arc::new(move |seq| request(&hook_shared, seq))
        });
        Indexer {
            shared,
            thread: Some(thread),
        }
    }

    /// Applies what is pending and stops the thread.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        {
            let mut p = self.shared.progress.lock().expect("indexer lock");
            p.stopping = true;
        }
        self.shared.requested.notify_all();
        self.shared.applied.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Indexer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Tells the indexer that the outbox holds `seq`.
fn request(shared: &Shared, seq: u64) {
    let mut p = shared.progress.lock().expect("indexer lock");
    p.requested = p.requested.max(seq);
    shared.requested.notify_one();
}

/// Called by a writer after its commit: returns once the index holds `seq`.
fn wait_for(shared: &Shared, seq: u64) {
    request(shared, seq);
    let mut p = shared.progress.lock().expect("indexer lock");
    while p.applied < seq && !p.stopping {
        p = shared.applied.wait(p).expect("indexer lock");
    }
}

fn run(shared: &Shared, store: &Store, index: &SearchIndex, gather: bool) {
    loop {
        let applied = {
            let mut p = shared.progress.lock().expect("indexer lock");
            while p.requested <= p.applied && !p.stopping {
                p = shared.requested.wait(p).expect("indexer lock");
            }
            if p.stopping && p.requested <= p.applied {
                return;
            }
            // Group commit: let the writes already under way join this index commit (each
            // one's request wakes this wait; the outbox is read after it).
            let deadline = Instant::now() + GATHER_WAIT;
            while gather && !p.stopping && store.writes_in_progress() > 0 {
                let now = Instant::now();
                if now >= deadline {
                    break;
                }
                p = shared
                    .requested
                    .wait_timeout(p, deadline - now)
                    .expect("indexer lock")
                    .0;
            }
            p.applied
        };
        match apply_pending(store, index, applied) {
            Ok(Some(last)) => {
                let mut p = shared.progress.lock().expect("indexer lock");
                p.applied = p.applied.max(last);
                shared.applied.notify_all();
            }
            Ok(None) => {
                // Nothing in the outbox beyond what is applied: the request was already met.
                let mut p = shared.progress.lock().expect("indexer lock");
                p.applied = p.applied.max(p.requested);
                shared.applied.notify_all();
            }
            Err(e) => {
                // The writes are safe in the store; keep trying rather than acknowledge a write
                // that search does not show.
                tracing::error!(error = %e, "applying the outbox to the search index failed; retrying");
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    }
}

/// Applies every outbox entry after `applied`; returns the new last sequence number.
fn apply_pending(
    store: &Store,
    index: &SearchIndex,
    applied: u64,
) -> super::IndexResult<Option<u64>> {
    let Some(last) = index.apply_after(store, applied)? else {
        return Ok(None);
    };
    if index.may_prune_outbox() {
        store.prune_outbox(last)?;
    }
    Ok(Some(last))
}
