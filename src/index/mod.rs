//! The search index: a tantivy mirror of events, venues and organizers that answers every
//! listing, date window and search. redb is the truth; this is derived from it and can always
//! be rebuilt from it (see `indexer` for how it is kept current, and docs/architecture.md).

pub(crate) mod analysis;
mod apply;
mod build;
mod collectors;
mod directory;
mod docs;
pub(crate) mod filters;
pub(crate) mod geo;
pub mod indexer;
mod merge_policy;
mod overlay;
pub(crate) mod planner;
pub(crate) mod schema;
mod search;
mod snapshot;
mod start_order;

use crate::model::Kind;
use crate::store::{OutboxEntry, ReadTx, Store, StoreError};
use planner::{EventFilter, LinkedFilter};
use schema::{Fields, IndexSchema, Key};
use serde::{Deserialize, Serialize};
use snapshot::Snapshot;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use tantivy::collector::{Collector, Count, SegmentCollector, TopDocs};
use tantivy::query::Query;
use tantivy::{
    DocId, Index, IndexReader, IndexWriter, Order, ReloadPolicy, Score, SegmentReader,
    TantivyDocument,
};

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("search index: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
    #[error(transparent)]
    Schema(#[from] schema::SchemaError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("search index directory: {0}")]
    Io(#[from] std::io::Error),
}

pub(crate) type IndexResult<T> = Result<T, IndexError>;

/// What each commit records: how far the outbox has been applied, under which schema.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
struct CommitPayload {
    seq: u64,
    schema: u32,
}

/// Counts of what a (re)build indexed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct BuildSummary {
    pub events: u64,
    pub venues: u64,
    pub organizers: u64,
}

pub struct SearchIndex {
    dir: PathBuf,
    /// The index being served; an online rebuild replaces it whole.
    live: RwLock<Arc<Live>>,
    /// Serialises applying the outbox and swapping in a rebuilt index.
    apply_lock: Mutex<()>,
    /// Set while an online rebuild runs: the outbox is then kept, since the new index must
    /// replay what the old one applied meanwhile.
    rebuilding: AtomicBool,
    /// The outbox head of the store snapshot the index last mirrored: every write up to it is
    /// searchable (see [`SearchIndex::applied_position`]).
    applied: AtomicU64,
    /// What each applied write may have changed in the records' representations (see
    /// [`Dependency`]): the outbox position of its last change.
    changes: RwLock<HashMap<Dependency, u64>>,
    pub fields: Fields,
    schema_version: u32,
}

/// One open tantivy index: its directory, its reader and its single writer.
struct Live {
    directory: directory::IndexDirectory,
    reader: IndexReader,
    writer: Mutex<IndexWriter>,
    /// The writes not yet committed (see `overlay`).
    overlay: Mutex<overlay::Overlay>,
    /// The number of the newest [`Snapshot`]: the last commit and the overlay.
    generation: AtomicU64,
    /// The newest snapshot together with the store snapshot it was built from.
    view: RwLock<Option<View>>,
    /// Term counts of one snapshot generation (see [`SearchIndex::term_counts`]).
    term_counts: Mutex<TermCounts>,
    /// Per-segment bitsets of list filters (see `filters`).
    filter_cache: Arc<filters::FilterCache>,
    /// The venues of recent radius filters (see [`SearchIndex::events`]).
    radius_venues: Mutex<RadiusVenues>,
    /// Whether any record is stored as `future`, for one snapshot generation:
    /// `generation << 1 | any`, [`UNKNOWN_SCHEDULED`] before the first answer (see
    /// [`SearchIndex::any_scheduled`]).
    scheduled: AtomicU64,
}

const UNKNOWN_SCHEDULED: u64 = u64::MAX;

/// Venues within a radius, by point and radius (their bits), valid for the snapshot generation
/// they were found in: a site's widget asks for the same point again and again.
#[derive(Default)]
struct RadiusVenues {
    generation: u64,
    found: HashMap<[u64; 3], Arc<Vec<u64>>>,
}

/// Radius filters kept per generation at most (distinct points beyond it start over).
const RADIUS_FILTERS_KEPT: usize = 256;

/// Published-event counts per term: in the snapshot of generation `generation`, and in the
/// index commit `commit` without the overlay's change.
#[derive(Default)]
struct TermCounts {
    generation: u64,
    current: HashMap<(Kind, u64), u64>,
    commit: u64,
    committed: HashMap<(Kind, u64), u64>,
}

impl TermCounts {
    /// Forgets the counts of other snapshots and commits than these.
    fn start(&mut self, commit: u64, generation: u64) {
        if self.generation != generation {
            self.generation = generation;
            self.current.clear();
        }
        if self.commit != commit {
            self.commit = commit;
            self.committed.clear();
        }
    }
}

/// Something a record's representation is derived from. A representation built from a view
/// whose outbox head is `h` is still exact while no dependency changed after `h` (see
/// [`SearchIndex::unchanged_since`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Dependency {
    /// The record itself.
    Record(Kind, u64),
    /// A translation group: its members and their statuses.
    Group(Kind, u64),
}

/// A state of the index (a [`Snapshot`]) and the store snapshot it mirrors exactly: a list answered from one
/// view reads each record of its page as the index saw it, so a write that is committed to
/// the store but not yet searchable (not yet acknowledged) cannot show up half-way, e.g. a
/// record listed by its old status with its new one.
#[derive(Clone)]
pub(crate) struct View {
    searcher: Snapshot,
    store: Arc<ReadTx>,
    /// The snapshot's outbox head.
    head: u64,
}

impl View {
    /// The store snapshot of this view.
    pub(crate) fn store(&self) -> &ReadTx {
        &self.store
    }

    /// The outbox position this view mirrors.
    pub(crate) fn head(&self) -> u64 {
        self.head
    }
}

/// The order of an event list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventOrder {
    /// Local start, then ID.
    Start,
    /// Publication date, then ID (with `include`).
    Publication,
    /// Last change, newest first (the editors' dashboard).
    LastChange,
}

/// A page of IDs and the total number of matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hits {
    pub ids: Vec<u64>,
    pub total: usize,
}

impl SearchIndex {
    fn live(&self) -> Arc<Live> {
        self.live.read().expect("live index lock").clone()
    }

    /// Whether applied outbox entries may be dropped (not during an online rebuild).
    pub(crate) fn may_prune_outbox(&self) -> bool {
        !self.rebuilding.load(Ordering::SeqCst)
    }

    /// The outbox sequence number the index has applied.
    pub(crate) fn applied_seq(&self) -> u64 {
        self.live().applied_seq()
    }

    /// The outbox sequence number up to which every write is in the index. Unlike
    /// [`SearchIndex::applied_seq`] (the last commit's), it also covers writes that changed no
    /// document (terms), which need no index commit.
    pub(crate) fn applied_position(&self) -> u64 {
        self.applied.load(Ordering::SeqCst)
    }

    /// How many documents (events, venues, organizers) the index holds.
    pub(crate) fn documents(&self) -> u64 {
        self.live().current().num_docs()
    }

    /// Makes `rx`, which `live` and its overlay now mirror, its view.
    fn publish(&self, live: &Live, overlay: &overlay::Overlay, rx: ReadTx) -> IndexResult<()> {
        let head = rx.outbox_head()?;
        self.applied.fetch_max(head, Ordering::SeqCst);
        live.set_view(rx, head, live.snapshot(overlay));
        Ok(())
    }

    /// Whether none of `dependencies` changed after the outbox position `head`.
    pub(crate) fn unchanged_since(&self, dependencies: &[Dependency], head: u64) -> bool {
        let changes = self.changes.read().expect("changes lock");
        dependencies
            .iter()
            .all(|d| changes.get(d).is_none_or(|seq| *seq <= head))
    }
}
