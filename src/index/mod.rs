//! The search index: a tantivy mirror of events, venues and organizers that answers every
//! listing, date window and search. redb is the truth; this is derived from it and can always
//! be rebuilt from it (see `indexer` for how it is kept current, and docs/architecture.md).

pub mod analysis;
mod directory;
mod docs;
pub mod filters;
pub mod geo;
pub mod indexer;
pub mod planner;
pub mod schema;

use crate::model::Kind;
use crate::store::{OutboxEntry, ReadTx, Reads, Store, StoreError};
use planner::{EventFilter, LinkedFilter};
use schema::{Fields, IndexSchema, Key};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use tantivy::collector::{Collector, Count, SegmentCollector, TopDocs};
use tantivy::indexer::{AddOperation, SegmentWriter};
use tantivy::query::Query;
use tantivy::{
    DocId, Index, IndexReader, IndexWriter, Order, ReloadPolicy, Score, SegmentReader,
    TantivyDocument,
};

/// Memory for the index writer's buffers.
const WRITER_MEMORY: usize = 64 * 1024 * 1024;

/// Indexing threads of the serving index's writer. One: a commit turns what each thread
/// holds into a segment of its own, and every segment (and every merge) pays a fixed cost
/// per field (term dictionary builders, fast-field writers), so a batch of a few writes spread
/// over two threads cost two segments. Full builds use tantivy's default (one per CPU).
const LIVE_WRITER_THREADS: usize = 1;

/// Segments below this many documents form the lowest merge level of the serving index.
/// Every acknowledged write commits a segment of a few documents; with tantivy's default
/// (10,000) each merge of those also rewrote the largest segment under that size, so at a few
/// thousand events every eighth create paid for rewriting the whole index.
const LIVE_MIN_LAYER_DOCS: u32 = 100;

/// New documents of an outbox batch of up to this many records are written as a segment by
/// the applying thread itself (see [`add_small_segment`]); larger batches (bulk loads) go
/// through the writer.
const SMALL_SEGMENT_DOCS: usize = 1000;

/// Memory budget of such a segment: sizes its term hash table at 32K slots (it grows when a
/// batch needs more).
const SMALL_SEGMENT_MEMORY: usize = 1024 * 1024;

fn live_merge_policy() -> tantivy::indexer::LogMergePolicy {
    let mut policy = tantivy::indexer::LogMergePolicy::default();
    policy.set_min_layer_size(LIVE_MIN_LAYER_DOCS);
    policy
}

/// Memory for cached filter bitsets: one bit per document per filter and segment, so 125 KB
/// per filter at a million documents, about 500 filters.
const FILTER_CACHE_BYTES: usize = 64 * 1024 * 1024;

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

pub type IndexResult<T> = Result<T, IndexError>;

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
    pub fields: Fields,
    schema_version: u32,
}

/// One open tantivy index: its reader and its single writer.
struct Live {
    reader: IndexReader,
    writer: Mutex<IndexWriter>,
    /// The last commit together with the store snapshot it was built from.
    view: RwLock<Option<View>>,
    /// Term counts of one searcher generation (see [`SearchIndex::term_counts`]).
    term_counts: Mutex<TermCounts>,
    /// Per-segment bitsets of list filters (see `filters`).
    filter_cache: Arc<filters::FilterCache>,
}

/// Published-event counts per term, valid for the searcher generation they were counted in.
#[derive(Default)]
struct TermCounts {
    generation: u64,
    counts: HashMap<(Kind, u64), u64>,
}

/// A state of the index and the store snapshot it mirrors exactly: a list answered from one
/// view reads each record of its page as the index saw it, so a write that is committed to
/// the store but not yet searchable (not yet acknowledged) cannot show up half-way, e.g. a
/// record listed by its old status with its new one (common.md §1.11).
#[derive(Clone)]
pub struct View {
    searcher: tantivy::Searcher,
    store: Arc<ReadTx>,
}

impl View {
    /// The store snapshot of this view.
    pub fn store(&self) -> &ReadTx {
        &self.store
    }
}

impl Live {
    fn open(dir: &Path, parsed: &IndexSchema) -> IndexResult<Live> {
        std::fs::create_dir_all(dir)?;
        let directory =
            directory::IndexDirectory::open(dir).map_err(tantivy::TantivyError::from)?;
        let index = open_in(directory, parsed)?;
        // A commit cut short (the process killed between writing a segment's files and
        // publishing them in meta.json) leaves orphan files behind, and the catch-up commit
        // can want one of the same names: tantivy then refuses to overwrite, e.g.
        // `FileAlreadyExists("<segment>.286.del")`, and the server could never start again.
        // Removing what meta.json does not reference first makes every restart after a kill
        // start from a clean directory (tantivy's own collection only knows the files on its
        // list, which is not synced: see `directory`).
        directory::remove_unlisted(&index, dir)?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        let writer: IndexWriter =
            index.writer_with_num_threads(LIVE_WRITER_THREADS, WRITER_MEMORY)?;
        writer.set_merge_policy(Box::new(live_merge_policy()));
        // Drops the files just removed from tantivy's list of managed files.
        writer.garbage_collect_files().wait()?;
        Ok(Live {
            reader,
            writer: Mutex::new(writer),
            view: RwLock::new(None),
            term_counts: Mutex::new(TermCounts::default()),
            filter_cache: Arc::new(filters::FilterCache::new(FILTER_CACHE_BYTES)),
        })
    }

    fn set_view(&self, store: ReadTx) {
        *self.view.write().expect("view lock") = Some(View {
            searcher: self.reader.searcher(),
            store: Arc::new(store),
        });
    }

    fn applied_seq(&self) -> u64 {
        let metas = self.reader.searcher().index().load_metas().ok();
        metas
            .and_then(|m| m.payload)
            .and_then(|p| serde_json::from_str::<CommitPayload>(&p).ok())
            .map(|p| p.seq)
            .unwrap_or(0)
    }
}

/// The order of an event list (events.md §2.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventOrder {
    /// Local start, then ID.
    Start,
    /// Publication date, then ID (with `include`).
    Publication,
}

/// A page of IDs and the total number of matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hits {
    pub ids: Vec<u64>,
    pub total: usize,
}

fn open_in(
    directory: impl tantivy::directory::Directory,
    parsed: &IndexSchema,
) -> IndexResult<Index> {
    let index = Index::open_or_create(directory, parsed.schema.clone())?;
    analysis::register(index.tokenizers());
    Ok(index)
}

impl SearchIndex {
    /// Opens the index in `dir` and brings it up to date with the store: rebuilt from scratch
    /// when missing, unreadable or of another schema version, else caught up from the outbox.
    pub fn open(dir: &Path, store: &Store) -> IndexResult<SearchIndex> {
        let parsed = IndexSchema::load()?;
        let usable = match Self::payload_in(dir) {
            Some(p) => p.schema == parsed.version,
            None => false,
        };
        if !usable {
            tracing::info!(dir = %dir.display(), "building the search index from the store");
            Self::rebuild(dir, store, |_| {})?;
        }
        let live = match Live::open(dir, &parsed) {
            Ok(live) => live,
            Err(e) => {
                tracing::warn!(error = %e, "search index unreadable; rebuilding it");
                Self::rebuild(dir, store, |_| {})?;
                Live::open(dir, &parsed)?
            }
        };
        let search = SearchIndex {
            dir: dir.to_path_buf(),
            live: RwLock::new(Arc::new(live)),
            apply_lock: Mutex::new(()),
            rebuilding: AtomicBool::new(false),
            fields: parsed.fields,
            schema_version: parsed.version,
        };
        let applied = search.applied_seq();
        if let Some(last) = search.apply_after(store, applied)? {
            tracing::info!(
                entries = last - applied,
                "caught the search index up with the store"
            );
            store.prune_outbox(last)?;
        }
        Ok(search)
    }

    fn live(&self) -> Arc<Live> {
        self.live.read().expect("live index lock").clone()
    }

    /// The current view: the last index commit and the store snapshot it mirrors. Lists
    /// search it and read their page's records from its snapshot.
    pub fn view(&self, store: &Store) -> IndexResult<View> {
        let live = self.live();
        let view = live.view.read().expect("view lock").clone();
        match view {
            Some(view) => Ok(view),
            // Not reached once the index is open (opening sets the view); a fresh snapshot
            // is the best stand-in.
            None => Ok(View {
                searcher: live.reader.searcher(),
                store: Arc::new(store.read()?),
            }),
        }
    }

    /// Whether applied outbox entries may be dropped (not during an online rebuild).
    pub fn may_prune_outbox(&self) -> bool {
        !self.rebuilding.load(Ordering::SeqCst)
    }

    /// The commit payload of the index in `dir`, if it has a readable one.
    fn payload_in(dir: &Path) -> Option<CommitPayload> {
        let index = Index::open_in_dir(dir).ok()?;
        let metas = index.load_metas().ok()?;
        serde_json::from_str(metas.payload.as_deref()?).ok()
    }

    /// The outbox sequence number the index has applied.
    pub fn applied_seq(&self) -> u64 {
        self.live().applied_seq()
    }

    /// Builds a fresh index of every record into a sibling directory and swaps it in place of
    /// `dir` (rename, so that a crash leaves either the old or the new index, never a mix).
    /// `progress` is told the number of records indexed so far.
    pub fn rebuild(
        dir: &Path,
        store: &Store,
        progress: impl FnMut(u64),
    ) -> IndexResult<BuildSummary> {
        let building = sibling(dir, "building");
        let (summary, _) = Self::build_into(&building, store, progress)?;
        swap_in(&building, dir)?;
        Ok(summary)
    }

    /// Indexes every record of a store snapshot into `building` (emptied first); returns the
    /// counts and the outbox sequence number the snapshot includes.
    fn build_into(
        building: &Path,
        store: &Store,
        mut progress: impl FnMut(u64),
    ) -> IndexResult<(BuildSummary, u64)> {
        let parsed = IndexSchema::load()?;
        if building.exists() {
            std::fs::remove_dir_all(building)?;
        }
        std::fs::create_dir_all(building)?;
        let directory = tantivy::directory::MmapDirectory::open(building)
            .map_err(tantivy::TantivyError::from)?;
        let index = open_in(directory, &parsed)?;
        let mut writer: IndexWriter = index.writer(WRITER_MEMORY)?;
        // Everything up to the current head is in the snapshot read below.
        let head = store.outbox_head()?;
        let rx = store.read()?;
        let mut summary = BuildSummary::default();
        let mut done = 0u64;
        let fields = &parsed.fields;
        rx.for_each::<crate::model::post::Venue, IndexError>(Kind::Venue, |v| {
            writer.add_document(docs::venue(fields, &v))?;
            summary.venues += 1;
            done += 1;
            progress(done);
            Ok(())
        })?;
        rx.for_each::<crate::model::post::Organizer, IndexError>(Kind::Organizer, |o| {
            writer.add_document(docs::organizer(fields, &o))?;
            summary.organizers += 1;
            done += 1;
            progress(done);
            Ok(())
        })?;
        rx.for_each::<crate::model::event::Event, IndexError>(Kind::Event, |e| {
            writer.add_document(docs::event(fields, &e, &rx)?)?;
            summary.events += 1;
            done += 1;
            progress(done);
            Ok(())
        })?;
        let mut prepared = writer.prepare_commit()?;
        prepared.set_payload(
            &serde_json::to_string(&CommitPayload {
                seq: head,
                schema: parsed.version,
            })
            .expect("payloads serialize"),
        );
        prepared.commit()?;
        writer.wait_merging_threads()?;
        Ok((summary, head))
    }

    /// Rebuilds the index from the store while the server keeps serving from the current one
    /// (the administrators' reindex route): the new index is built from a snapshot, then,
    /// with writes to the index paused, catches up with what was written meanwhile and
    /// replaces the current one.
    pub fn rebuild_live(&self, store: &Store) -> IndexResult<BuildSummary> {
        self.rebuilding.store(true, Ordering::SeqCst);
        let result = self.rebuild_live_inner(store);
        self.rebuilding.store(false, Ordering::SeqCst);
        result
    }

    fn rebuild_live_inner(&self, store: &Store) -> IndexResult<BuildSummary> {
        let building = sibling(&self.dir, "building");
        let (summary, head) = Self::build_into(&building, store, |_| {})?;
        let _paused = self.apply_lock.lock().expect("index apply lock");
        let parsed = IndexSchema::load()?;
        {
            let fresh = Live::open(&building, &parsed)?;
            self.apply_to(&fresh, store, head)?;
        }
        let old = self.live();
        swap_in(&building, &self.dir)?;
        let fresh = Arc::new(Live::open(&self.dir, &parsed)?);
        // Writes committed meanwhile wait for the indexer, which waits for this lock: apply
        // them now, which also gives the new index its view.
        self.apply_to(&fresh, store, fresh.applied_seq())?;
        *self.live.write().expect("live index lock") = fresh;
        drop(old);
        Ok(summary)
    }

    /// Applies the outbox entries after `applied` of a store snapshot: each named record is
    /// re-read from the snapshot and its document replaced (or removed when the record is
    /// gone). A venue or organizer change also refreshes the events that link it, whose
    /// documents carry its name and coordinates. Commits once, recording the last sequence
    /// number, which it returns (`None` when there was nothing to apply). Entries and
    /// documents come from one snapshot, so the commit mirrors it exactly: it becomes the
    /// index's [`View`].
    pub fn apply_after(&self, store: &Store, applied: u64) -> IndexResult<Option<u64>> {
        let _serialised = self.apply_lock.lock().expect("index apply lock");
        self.apply_to(&self.live(), store, applied)
    }

    fn apply_to(&self, live: &Live, store: &Store, applied: u64) -> IndexResult<Option<u64>> {
        let rx = store.read()?;
        let entries: Vec<OutboxEntry> = rx.outbox_after(applied)?;
        let Some(last) = entries.last().map(|e| e.seq) else {
            live.set_view(rx);
            return Ok(None);
        };
        // In outbox order, each indexed record once (a bulk load applies many thousands at a
        // time). Term entries change no document: their view is all they need.
        let mut seen = std::collections::HashSet::new();
        let mut touched: Vec<(Kind, u64)> = Vec::new();
        for e in &entries {
            let indexed = matches!(e.kind, Kind::Event | Kind::Venue | Kind::Organizer);
            if indexed && seen.insert((e.kind, e.id)) {
                touched.push((e.kind, e.id));
            }
        }
        if touched.is_empty() {
            // No index commit: the payload's seq stays behind, and a restart re-reads these
            // entries, which again change nothing.
            live.set_view(rx);
            return Ok(Some(last));
        }
        let linked: Vec<u64> = touched
            .iter()
            .filter(|(k, _)| *k != Kind::Event)
            .map(|(_, id)| *id)
            .collect();
        if !linked.is_empty() {
            for event in self.events_linking(live, &linked)? {
                if seen.insert((Kind::Event, event)) {
                    touched.push((Kind::Event, event));
                }
            }
        }
        let payload = serde_json::to_string(&CommitPayload {
            seq: last,
            schema: self.schema_version,
        })
        .expect("payloads serialize");
        let mut writer = live.writer.lock().expect("index writer lock");
        let committed = self.stage(live, &writer, &rx, &touched).and_then(|()| {
            let mut prepared = writer.prepare_commit()?;
            prepared.set_payload(&payload);
            prepared.commit()?;
            Ok(())
        });
        if let Err(e) = committed {
            // What was handed to the writer would otherwise ride along with the next commit,
            // beside what the retry hands it again (and creates are not preceded by deletes).
            writer.rollback()?;
            writer.set_merge_policy(Box::new(live_merge_policy()));
            return Err(e);
        }
        drop(writer);
        live.reader.reload()?;
        live.set_view(rx);
        Ok(Some(last))
    }

    /// Hands the writer the deletes and documents of `touched` (records re-read from `rx`).
    fn stage(
        &self,
        live: &Live,
        writer: &IndexWriter,
        rx: &ReadTx,
        touched: &[(Kind, u64)],
    ) -> IndexResult<()> {
        let f = &self.fields;
        let searcher = live.reader.searcher();
        // A bulk load hands every document to the writer as soon as it is built, so that the
        // writer's indexing thread works beside this one reading the store.
        let bulk = touched.len() > SMALL_SEGMENT_DOCS;
        let mut fresh = Vec::new();
        for (kind, id) in touched {
            let id_term = f.key(Key::Id, id);
            // A record the index has never held (a create) has nothing to delete, and a
            // pending delete makes the commit open a reader on every segment to apply it.
            let indexed = searcher.doc_freq(&id_term)? > 0;
            if indexed {
                writer.delete_term(id_term);
            }
            let doc = match kind {
                Kind::Event => rx
                    .get_record::<crate::model::event::Event>(*kind, *id)?
                    .map(|e| docs::event(f, &e, rx))
                    .transpose()?,
                Kind::Venue => rx
                    .get_record::<crate::model::post::Venue>(*kind, *id)?
                    .map(|v| docs::venue(f, &v)),
                Kind::Organizer => rx
                    .get_record::<crate::model::post::Organizer>(*kind, *id)?
                    .map(|o| docs::organizer(f, &o)),
                _ => None,
            };
            match doc {
                Some(doc) if !indexed && !bulk => fresh.push(doc),
                // The writer stamps its documents after the delete replacing them; a segment
                // added whole is subject to every delete still queued, that one included.
                Some(doc) => {
                    writer.add_document(doc)?;
                }
                None => {}
            }
        }
        if !fresh.is_empty() {
            add_small_segment(writer, fresh)?;
        }
        Ok(())
    }

    /// Events whose venue or organizers include any of `ids`.
    fn events_linking(&self, live: &Live, ids: &[u64]) -> IndexResult<Vec<u64>> {
        let f = &self.fields;
        let terms = ids
            .iter()
            .flat_map(|id| [f.key(Key::Venue, id), f.key(Key::Organizer, id)]);
        let query = tantivy::query::TermSetQuery::new(terms);
        Ok(values_in(live, &query, "id")?.into_iter().collect())
    }

    /// Events carrying a term or linking a venue/organizer (any status, any language): the
    /// events a term deletion or a venue/organizer trashing must update.
    pub fn events_carrying(&self, kind: Kind, id: u64) -> IndexResult<Vec<u64>> {
        let f = &self.fields;
        let key = match kind {
            Kind::Category => Key::Category,
            Kind::Tag => Key::Tag,
            Kind::Venue => Key::Venue,
            _ => Key::Organizer,
        };
        let query = tantivy::query::TermQuery::new(
            f.key(key, id),
            tantivy::schema::IndexRecordOption::Basic,
        );
        Ok(self.collect_values(&query, "id")?.into_iter().collect())
    }

    /// Records stored as `future` whose publication time (UTC seconds) has come.
    pub fn scheduled_before(&self, now: i64) -> IndexResult<Vec<u64>> {
        let query = planner::stored_future_until(&self.fields, now);
        Ok(self
            .collect_values(query.as_ref(), "id")?
            .into_iter()
            .collect())
    }

    /// Whether any record is stored as `future` (scheduled), so that "published" must also
    /// look at publication dates.
    pub fn any_scheduled(&self) -> bool {
        let searcher = self.live().reader.searcher();
        let term = self
            .fields
            .key(Key::Status, crate::model::Status::Future.as_str());
        searcher.doc_freq(&term).map(|n| n > 0).unwrap_or(true)
    }

    /// A page of `GET /events` and its total.
    pub fn events(
        &self,
        view: &View,
        filter: &EventFilter,
        order: EventOrder,
        relevance: bool,
        offset: usize,
        limit: usize,
    ) -> IndexResult<Hits> {
        let filter_cache = self.live().filter_cache.clone();
        let radius_venues: Vec<u64> = match filter.geo {
            Some(planner::GeoFilter::Within {
                lat,
                lng,
                radius_km,
            }) => {
                let venues = planner::venues_within(&self.fields, lat, lng, radius_km)
                    .into_query(&filter_cache);
                let ids = view
                    .searcher
                    .search(&venues, &ValueCollector { field: "id" })?;
                ids.into_iter().collect()
            }
            _ => Vec::new(),
        };
        let query = planner::events(&self.fields, filter, &radius_venues).into_query(&filter_cache);
        let key_field = match order {
            EventOrder::Start => "order_start",
            EventOrder::Publication => "order_date",
        };
        // Ascending natural order, expressed as a larger-is-better key.
        self.page(
            &view.searcher,
            &query,
            key_field,
            true,
            relevance,
            offset,
            limit,
        )
    }

    /// A page of `GET /venues` or `GET /organizers` (newest first) and its total.
    pub fn linked(
        &self,
        view: &View,
        filter: &LinkedFilter,
        relevance: bool,
        offset: usize,
        limit: usize,
    ) -> IndexResult<Hits> {
        let query = planner::linked(&self.fields, filter).into_query(&self.live().filter_cache);
        self.page(
            &view.searcher,
            &query,
            "order_date",
            false,
            relevance,
            offset,
            limit,
        )
    }

    /// One page in the order of a sort-key field (see `docs::sort_key`), ascending or
    /// descending, optionally by relevance first; the total comes from the same search.
    /// Without relevance nothing is scored: the top-k collector reads only the sort key.
    #[allow(clippy::too_many_arguments)]
    fn page(
        &self,
        searcher: &tantivy::Searcher,
        query: &dyn Query,
        key_field: &'static str,
        ascending: bool,
        relevance: bool,
        offset: usize,
        limit: usize,
    ) -> IndexResult<Hits> {
        let limit = limit.max(1);
        // A page that starts past every document of the index is empty whatever the query.
        // Only the total is needed then; tantivy would size its top-k buffer by
        // `offset + limit` (and overflow on a huge `page`), so a client could make it
        // allocate without bound or panic.
        if offset as u64 >= searcher.num_docs() {
            let total = searcher.search(query, &Count)?;
            return Ok(Hits {
                ids: Vec::new(),
                total,
            });
        }
        let id_of = |key: i64| key.rem_euclid(docs::ID_SPAN) as u64;
        if !relevance {
            let order = if ascending { Order::Asc } else { Order::Desc };
            let top = TopDocs::with_limit(limit)
                .and_offset(offset)
                .order_by_fast_field::<i64>(key_field, order);
            let (total, hits) = searcher.search(query, &(Count, top))?;
            return Ok(Hits {
                ids: hits.into_iter().filter_map(|(k, _)| k.map(id_of)).collect(),
                total,
            });
        }
        let sign: i64 = if ascending { -1 } else { 1 };
        let top = TopDocs::with_limit(limit).and_offset(offset).tweak_score(
            move |segment: &SegmentReader| {
                let keys = segment
                    .fast_fields()
                    .i64(key_field)
                    .ok()
                    .map(|c| c.first_or_default_col(0));
                move |doc: DocId, score: Score| {
                    let key = keys.as_ref().map(|c| c.get_val(doc)).unwrap_or(0);
                    (score, sign * key, key)
                }
            },
        );
        let (total, hits) = searcher.search(query, &(Count, top))?;
        Ok(Hits {
            ids: hits
                .into_iter()
                .map(|((_, _, key), _)| id_of(key))
                .collect(),
            total,
        })
    }

    /// Every value of a u64 fast field over the documents matching `query`.
    pub fn collect_values(
        &self,
        query: &dyn Query,
        field: &'static str,
    ) -> IndexResult<HashSet<u64>> {
        values_in(&self.live(), query, field)
    }

    /// Published events per term (terms.md §1 `count`) for the given term IDs: one count
    /// per term, from the cached filter bitsets of the term and of published events (see
    /// [`planner::published_events_with`]), so the cost follows the terms asked for and, after
    /// a write, the new segment.
    ///
    /// Every event representation embeds its terms with their counts, and counting a popular
    /// term still means visiting every event carrying it; so counts are also kept per searcher
    /// generation (any index commit starts afresh). While scheduled records exist a count
    /// also depends on `now` (a due `future` event counts as published) and is not kept.
    pub fn term_counts(&self, kind: Kind, ids: &[u64], now: i64) -> IndexResult<HashMap<u64, u64>> {
        let live = self.live();
        let searcher = live.reader.searcher();
        let key = if kind == Kind::Category {
            Key::Category
        } else {
            Key::Tag
        };
        let any_scheduled = self.any_scheduled();
        let keep = !any_scheduled;
        let mut kept = live.term_counts.lock().expect("term count lock");
        let generation = searcher.generation().generation_id();
        if kept.generation != generation {
            kept.generation = generation;
            kept.counts.clear();
        }
        let mut counts = HashMap::with_capacity(ids.len());
        for id in ids {
            if let Some(count) = kept.counts.get(&(kind, *id)).filter(|_| keep) {
                counts.insert(*id, *count);
                continue;
            }
            let query = planner::published_events_with(&self.fields, key, *id, now, any_scheduled)
                .into_query(&live.filter_cache);
            let count = searcher.search(&query, &Count)? as u64;
            if keep {
                kept.counts.insert((kind, *id), count);
            }
            counts.insert(*id, count);
        }
        Ok(counts)
    }
}

/// Writes `docs` as one new segment of the writer's index, to be published by its next commit.
/// The writer's own indexing thread sizes every segment's term hash table from its memory
/// budget (at least 15 MB, so a table of 512K slots, allocated, filled and scanned for each
/// segment): for the few documents of a create that was about 40 % of the commit's CPU.
fn add_small_segment(writer: &IndexWriter, docs: Vec<TantivyDocument>) -> IndexResult<()> {
    let segment = writer.new_segment();
    let mut segment_writer = SegmentWriter::for_segment(SMALL_SEGMENT_MEMORY, segment.clone())?;
    for document in docs {
        // Opstamps order documents against deletes applied while a segment is written; this
        // one is complete before it joins the index, and from then on every queued delete
        // applies to it, so it must hold only records the index does not (creates).
        segment_writer.add_document(AddOperation {
            opstamp: 0,
            document,
        })?;
    }
    let max_doc = segment_writer.max_doc();
    segment_writer.finalize()?;
    let meta = segment.with_max_doc(max_doc).meta().clone();
    meta.untrack_temp_docstore();
    writer.add_segment(meta)?;
    Ok(())
}

/// Replaces `dir` by `building` with renames, so that a crash leaves the old or the new index,
/// never a mix (a leftover `.old` or `.building` directory is removed next time).
fn swap_in(building: &Path, dir: &Path) -> IndexResult<()> {
    let old = sibling(dir, "old");
    if old.exists() {
        std::fs::remove_dir_all(&old)?;
    }
    if dir.exists() {
        std::fs::rename(dir, &old)?;
    }
    std::fs::rename(building, dir)?;
    if old.exists() {
        std::fs::remove_dir_all(&old)?;
    }
    Ok(())
}

fn sibling(dir: &Path, suffix: &str) -> PathBuf {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "index".into());
    dir.with_file_name(format!("{name}.{suffix}"))
}

/// Every value of a u64 fast field over the documents of `live` matching `query`.
fn values_in(live: &Live, query: &dyn Query, field: &'static str) -> IndexResult<HashSet<u64>> {
    Ok(live
        .reader
        .searcher()
        .search(query, &ValueCollector { field })?)
}

/// Collects the values of a (multi-valued) u64 fast field over the matching documents.
struct ValueCollector {
    field: &'static str,
}

struct SegmentValueCollector {
    column: Option<tantivy::columnar::Column<u64>>,
    values: HashSet<u64>,
}

impl Collector for ValueCollector {
    type Fruit = HashSet<u64>;
    type Child = SegmentValueCollector;

    fn for_segment(
        &self,
        _: u32,
        segment: &SegmentReader,
    ) -> tantivy::Result<SegmentValueCollector> {
        Ok(SegmentValueCollector {
            column: segment.fast_fields().u64(self.field).ok(),
            values: HashSet::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(&self, fruits: Vec<HashSet<u64>>) -> tantivy::Result<HashSet<u64>> {
        Ok(fruits.into_iter().flatten().collect())
    }
}

impl SegmentCollector for SegmentValueCollector {
    type Fruit = HashSet<u64>;

    fn collect(&mut self, doc: DocId, _: Score) {
        if let Some(column) = &self.column {
            self.values.extend(column.values_for_doc(doc));
        }
    }

    fn harvest(self) -> HashSet<u64> {
        self.values
    }
}
