//! Keeping the index current (docs/architecture.md, "Consistency"): every store write that touches
//! an indexed record appends to the outbox in its own transaction; after the commit, the
//! store's commit hook hands the sequence number to the indexer thread and waits until the
//! index has applied it: its records' documents are in the overlay, searchable beside the
//! index, which commits them together later (see `overlay`). Writes arriving while a batch is
//! applied form the next batch. A crash before the index commit leaves the entries in the
//! outbox, and the next start applies them before serving.
//!
//! Index commits are not synced (see `directory`): the outbox keeps what they applied until a
//! checkpoint, at most every [`CHECKPOINT_INTERVAL`] or [`CHECKPOINT_ENTRIES`], has made
//! their files durable; the indexer's last act is a commit of the overlay and a checkpoint.

use super::apply::Commit;
use super::SearchIndex;
use crate::store::Store;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Longest a batch waits for writes already inside a store transaction (a durable redb commit
/// takes about a millisecond here). Each batch rebuilds the overlay's segment, whose fixed cost
/// dwarfs a single event; without the wait, most batches of a few concurrent writers carry one
/// or two events. A lone writer never waits: nothing else is in progress when it asks.
const GATHER_WAIT: Duration = Duration::from_millis(3);

/// How often index files are synced and the outbox pruned while writes go on: what a power
/// loss can make the next start re-apply (or, when it damaged a file, rebuild).
const CHECKPOINT_INTERVAL: Duration = Duration::from_secs(1);
const CHECKPOINT_ENTRIES: u64 = 1000;

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
    /// write is searchable: at once from the overlay, and committed to the index at most
    /// `commit_delay` later (see `overlay`).
    pub fn start(store: Arc<Store>, index: Arc<SearchIndex>, commit_delay: Duration) -> Indexer {
        Indexer::launch(store, index, Commit::After(commit_delay))
    }

    /// For bulk loads (`almanac import`): writers go on while the indexer applies what they
    /// committed, so parsing and storing the next batch overlaps indexing the last one; the
    /// indexer takes whatever has accumulated as one commit. Nothing is acknowledged to a
    /// client meanwhile, and [`Indexer::stop`] applies everything before it returns.
    pub(crate) fn start_bulk(store: Arc<Store>, index: Arc<SearchIndex>) -> Indexer {
        Indexer::launch(store, index, Commit::Now)
    }

    /// Acknowledged writes commit `After` a delay, a bulk load `Now`.
    fn launch(store: Arc<Store>, index: Arc<SearchIndex>, commit: Commit) -> Indexer {
        let acknowledged = commit != Commit::Now;
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
                .spawn(move || {
                    crate::priority::yield_to_readers();
                    run(&shared, &store, &index, commit)
                })
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

/// The last checkpoint: when, and the outbox entry it pruned through.
struct Checkpoint {
    at: Instant,
    seq: u64,
}

impl Checkpoint {
    fn due(&self, applied: u64) -> bool {
        self.at.elapsed() >= CHECKPOINT_INTERVAL
            || applied - self.seq.min(applied) >= CHECKPOINT_ENTRIES
    }

    /// Syncs the index files written so far, then drops the outbox entries they applied (not
    /// those of the overlay, which no file holds yet).
    fn take(&mut self, store: &Store, index: &SearchIndex) -> super::IndexResult<()> {
        let applied = index.applied_seq();
        if index.may_prune_outbox() {
            index.checkpoint()?;
            store.prune_outbox(applied)?;
        }
        *self = Checkpoint {
            at: Instant::now(),
            seq: applied,
        };
        Ok(())
    }
}

fn run(shared: &Shared, store: &Store, index: &SearchIndex, commit: Commit) {
    let mut checkpoint = Checkpoint {
        at: Instant::now(),
        seq: index.applied_seq(),
    };
    let delay = match commit {
        Commit::After(delay) => Some(delay),
        Commit::Now => None,
    };
    loop {
        let (applied, requested) = {
            let mut p = shared.progress.lock().expect("indexer lock");
            while p.requested <= p.applied && !p.stopping {
                // Idle with writes in the overlay: wake when they are due for their commit.
                match delay.and_then(|d| index.overlay_due_in(d)) {
                    None => p = shared.requested.wait(p).expect("indexer lock"),
                    Some(wait) if wait.is_zero() => break,
                    Some(wait) => {
                        p = shared
                            .requested
                            .wait_timeout(p, wait)
                            .expect("indexer lock")
                            .0
                    }
                }
            }
            if p.stopping && p.requested <= p.applied {
                let applied = p.applied;
                drop(p);
                close(store, index, applied, &mut checkpoint);
                return;
            }
            // Group commit: let the writes already under way join this application (each
            // one's request wakes this wait; the outbox is read after it).
            let deadline = Instant::now() + GATHER_WAIT;
            while delay.is_some() && !p.stopping && store.writes_in_progress() > 0 {
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
            (p.applied, p.requested)
        };
        match index.apply_after(store, applied, commit) {
            Ok(last) => {
                {
                    let mut p = shared.progress.lock().expect("indexer lock");
                    // Without entries beyond `applied`, the requests made before the outbox
                    // was read were already met.
                    p.applied = p.applied.max(last.unwrap_or(requested));
                    shared.applied.notify_all();
                }
                // After the writers are answered: the checkpoint's syncs make derived files
                // durable, which the writes just applied need not wait for (one arriving
                // meanwhile still waits for this thread).
                if checkpoint.due(last.unwrap_or(applied)) {
                    if let Err(e) = checkpoint.take(store, index) {
                        // The outbox keeps the entries; the next checkpoint tries again.
                        tracing::error!(error = %e, "index checkpoint failed");
                    }
                }
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

/// The indexer's last act: the overlay committed, everything applied made durable, the
/// outbox pruned, and the directory marked clean, so that the next start need not check its
/// files.
fn close(store: &Store, index: &SearchIndex, applied: u64, checkpoint: &mut Checkpoint) {
    let closed = index
        .apply_after(store, applied, Commit::Now)
        .and_then(|_| checkpoint.take(store, index))
        .and_then(|()| {
            if index.may_prune_outbox() {
                index.close()
            } else {
                Ok(())
            }
        });
    if let Err(e) = closed {
        tracing::error!(error = %e, "closing the search index failed; the next start checks it");
    }
}
