//! Cluster mode's writes, gathered: writes that arrive on a node while another batch is in
//! PostgreSQL share the next PostgreSQL transaction (one lock, one append, one commit) and
//! one local transaction, as the single-node indexer shares index commits.
//!
//! A batch is opened by its first writer: the writers' lock in PostgreSQL, the replica caught
//! up with the log, a local write transaction. Each writer then runs its own rules in that
//! transaction in turn (seeing the writes before it in the batch, as it would on a single
//! node) and records its changes as one log entry. The last writer to join (no other on its
//! way) commits: the entries go to PostgreSQL in one transaction, then the local transaction
//! commits with them, then every writer of the batch is answered. A write is acknowledged only
//! after PostgreSQL has committed it; writers arriving meanwhile wait and form the next batch.
//!
//! A writer whose rules refuse the write leaves the batch as it was: when they had changed
//! something, the batch's local transaction is made again from the other writers' recorded
//! changes. Every writer, refused ones included, is answered once its batch is committed.

use super::{
    ClusterLog, InProgress, LogEntry, LogWrite, Store, StoreError, WriteTx, CLUSTER_APPLIED,
    WRITTEN_AT,
};
use crate::store::Change;
use redb::ReadableTable;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// The node's writes on their way into the cluster log.
#[derive(Default)]
pub(super) struct Batches {
    state: Mutex<State>,
    changed: Condvar,
    /// Writers between arriving and taking the state's lock: a writer that sees one leaves
    /// its batch open for it.
    arriving: AtomicUsize,
}

#[derive(Default)]
struct State {
    open: Option<Batch>,
    /// A batch is in PostgreSQL (or committing locally): arrivals wait for the next one.
    committing: bool,
    next_id: u64,
    /// Each finished batch's outcome, and how many of its writers have yet to read it.
    outcomes: HashMap<u64, (Result<(), String>, usize)>,
}

struct Batch {
    id: u64,
    pending: Box<dyn LogWrite + Send>,
    /// The local transaction (none only while it is being made again, see `rebuild`).
    txn: Option<redb::WriteTransaction>,
    /// The log's head the batch's entries follow.
    head: u64,
    /// The changes of the log entries up to `head` that the replica lacked.
    caught_up: Vec<Change>,
    /// Each changing writer's changes, in order: the log entries `head + 1…`.
    entries: Vec<Vec<Change>>,
    last_outbox_seq: Option<u64>,
    /// Writers in the batch besides the one that commits it, who wait for its outcome.
    waiting: usize,
}

impl Batch {
    /// The batch's transaction as the store's write rules see it (changes not recorded).
    fn tx(&self) -> WriteTx<'_> {
        WriteTx::new(self.txn.as_ref().expect("a transaction"), false)
    }
}

impl Batches {
    /// The state, also after a panic elsewhere left its lock poisoned (every change to it is
    /// complete before anything that can panic).
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait_while<'a>(
        &self,
        state: MutexGuard<'a, State>,
        condition: impl FnMut(&mut State) -> bool,
    ) -> MutexGuard<'a, State> {
        self.changed
            .wait_while(state, condition)
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Store {
    /// A write in cluster mode (see the module's documentation).
    pub(super) fn write_through_log<T, E: From<StoreError>>(
        &self,
        log: &dyn ClusterLog,
        f: impl FnOnce(&mut WriteTx) -> Result<T, E>,
    ) -> Result<T, E> {
        let unavailable = |e: String| E::from(StoreError::ClusterUnavailable(e));
        if self.diverged() {
            return Err(unavailable(
                "the cluster log is shorter than this node's replica".to_string(),
            ));
        }
        let batches = &self.batches;
        // Counted as arriving until it joins a batch, also while it waits for a commit: the
        // writers of the batch being filled then leave it open for it.
        batches.arriving.fetch_add(1, Ordering::SeqCst);
        let state = batches.lock();
        let mut state = batches.wait_while(state, |s| s.committing);
        batches.arriving.fetch_sub(1, Ordering::SeqCst);
        if state.open.is_none() {
            let id = state.next_id;
            state.next_id += 1;
            state.open = Some(self.open_batch(log, id).map_err(E::from)?);
        }
        let batch = state.open.as_mut().expect("opened above");
        let id = batch.id;
        // The writer's rules, in the batch's transaction.
        let counted = InProgress::enter(&self.in_progress);
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut tx = WriteTx::new(batch.txn.as_ref().expect("a transaction"), true);
            let out = f(&mut tx);
            let wrote = tx.last_outbox_seq;
            (out, wrote, tx.recorded.take().unwrap_or_default())
        }));
        drop(counted);
        let (out, wrote, changes) = match ran {
            Ok(ran) => ran,
            Err(panic) => {
                // Nobody may be left waiting for a batch this writer would have committed.
                abort(&mut state, "a write of its batch failed");
                drop(state);
                batches.changed.notify_all();
                std::panic::resume_unwind(panic);
            }
        };
        let seq = match &out {
            Ok(_) if !changes.is_empty() => {
                batch.entries.push(changes);
                batch.last_outbox_seq = batch.last_outbox_seq.max(wrote);
                Some(batch.head + batch.entries.len() as u64)
            }
            Ok(_) => None,
            Err(_) if changes.is_empty() && wrote.is_none() => None,
            Err(_) => {
                // Refused after changing something: the batch's transaction is made again
                // from the other writes' changes, without this one's.
                if let Err(e) = self.rebuild(state.open.as_mut().expect("still open")) {
                    abort(&mut state, &e.to_string());
                    batches.changed.notify_all();
                    return Err(unavailable(e.to_string()));
                }
                None
            }
        };
        // Every writer, refused ones too (a refusal may rest on the batch's other writes),
        // is answered once the batch is committed.
        let outcome = if batches.arriving.load(Ordering::SeqCst) > 0 {
            // Another writer is on its way into this batch: the last one commits it.
            state.open.as_mut().expect("still open").waiting += 1;
            let mut state = batches.wait_while(state, |s| !s.outcomes.contains_key(&id));
            let (outcome, left) = state.outcomes.get_mut(&id).expect("waited for it");
            let outcome = outcome.clone();
            *left -= 1;
            if *left == 0 {
                state.outcomes.remove(&id);
            }
            outcome
        } else {
            self.commit_open(state)
        };
        outcome.map_err(unavailable)?;
        if seq.is_some() {
            WRITTEN_AT.set(seq);
        }
        out
    }

    /// Starts a batch: the writers' lock in PostgreSQL, a local write transaction, and in it
    /// the log entries the replica lacks (another node's writes: they share the batch's local
    /// commit instead of taking one of their own).
    fn open_batch(&self, log: &dyn ClusterLog, id: u64) -> Result<Batch, StoreError> {
        let unavailable = StoreError::ClusterUnavailable;
        let (pending, head, missing) = log.begin(self.cluster_applied()?).map_err(unavailable)?;
        let mut batch = Batch {
            id,
            pending,
            txn: Some(self.begin_local_write()?),
            head,
            caught_up: Vec::new(),
            entries: Vec::new(),
            last_outbox_seq: None,
            waiting: 0,
        };
        // Read again in the transaction: the follower may have applied some of the entries
        // since, and cannot meanwhile.
        let applied = {
            let mut tx = batch.tx();
            let applied = tx.meta_mut()?.get(CLUSTER_APPLIED)?.map(|v| v.value());
            applied.unwrap_or(0)
        };
        if head < applied {
            // The follower notices too, and says so.
            return Err(unavailable(
                "the cluster log is shorter than this node's replica".to_string(),
            ));
        }
        let missing: Vec<LogEntry> = missing.into_iter().filter(|e| e.seq > applied).collect();
        let next = missing.first().map_or(head + 1, |e| e.seq);
        if head > applied && next > applied + 1 {
            // Pruned away: the follower copies the snapshot instead.
            return Err(unavailable(
                "this node is behind the pruned log and copies the snapshot".to_string(),
            ));
        }
        batch.caught_up = missing.into_iter().flat_map(|e| e.changes).collect();
        self.replay(&mut batch)?;
        Ok(batch)
    }

    /// A new local transaction for `batch` holding its entries' changes (a writer's failed
    /// rules left theirs in the old one, which is rolled back).
    fn rebuild(&self, batch: &mut Batch) -> Result<(), StoreError> {
        // The old transaction goes first: redb has one writer at a time.
        drop(batch.txn.take());
        batch.txn = Some(self.begin_local_write()?);
        self.replay(batch)
    }

    /// Applies the batch's caught-up changes and its writers' entries to its transaction.
    fn replay(&self, batch: &mut Batch) -> Result<(), StoreError> {
        let mut tx = batch.tx();
        let entries = batch.entries.iter().flatten();
        for change in batch.caught_up.iter().chain(entries) {
            tx.apply(change)?;
            if matches!(change, Change::User { .. }) {
                self.users_generation.fetch_add(1, Ordering::SeqCst);
            }
        }
        let last = tx.last_outbox_seq;
        drop(tx);
        batch.last_outbox_seq = last;
        Ok(())
    }

    /// Commits the open batch, tells its waiting writers, and returns the outcome.
    fn commit_open(&self, mut state: MutexGuard<'_, State>) -> Result<(), String> {
        let batch = state.open.take().expect("a batch to commit");
        let (id, waiting) = (batch.id, batch.waiting);
        state.committing = true;
        drop(state);
        let committed =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.commit_batch(batch)));
        let outcome = match &committed {
            Ok(outcome) => outcome.clone(),
            Err(_) => Err("the batch's commit failed".to_string()),
        };
        let mut state = self.batches.lock();
        state.committing = false;
        if waiting > 0 {
            state.outcomes.insert(id, (outcome.clone(), waiting));
        }
        drop(state);
        self.batches.changed.notify_all();
        if let Err(panic) = committed {
            std::panic::resume_unwind(panic);
        }
        outcome
    }

    /// PostgreSQL first (the point of durability), then the local transaction, then the index.
    fn commit_batch(&self, batch: Batch) -> Result<(), String> {
        let Batch {
            pending,
            txn,
            head,
            caught_up,
            entries,
            last_outbox_seq,
            ..
        } = batch;
        if !entries.is_empty() {
            pending.commit(head, &entries)?;
            crate::metrics::cluster_log_commit(entries.len());
        } else {
            // Nothing to append: PostgreSQL's transaction rolls back.
            drop(pending);
        }
        let last = head + entries.len() as u64;
        self.note_log_head(last);
        let Some(txn) = txn.filter(|_| !entries.is_empty() || !caught_up.is_empty()) else {
            return Ok(());
        };
        let committed = (|| -> Result<(), StoreError> {
            let _counted = InProgress::enter(&self.in_progress);
            {
                let mut tx = WriteTx::new(&txn, false);
                tx.meta_mut()?.insert(CLUSTER_APPLIED, last)?;
            }
            let committing = std::time::Instant::now();
            txn.commit()?;
            crate::metrics::store_commit(committing.elapsed().as_secs_f64());
            Ok(())
        })();
        // The log has the writes: a failed local commit is repaired by the follower, which
        // applies them from the log.
        committed.map_err(|e| {
            format!("the writes are in the cluster log; this node applies them shortly ({e})")
        })?;
        self.after_commit(last_outbox_seq, Some(last));
        Ok(())
    }
}

/// Rolls the open batch back (both transactions, by dropping them) and tells its waiting
/// writers why.
fn abort(state: &mut State, why: &str) {
    if let Some(batch) = state.open.take() {
        if batch.waiting > 0 {
            state
                .outcomes
                .insert(batch.id, (Err(why.to_string()), batch.waiting));
        }
    }
}
