//! The newest writes, searchable before the index commit that makes them part of the index
//! (docs/architecture.md, "Consistency").
//!
//! An index commit writes a segment whose fixed cost (term dictionaries, fast-field writers,
//! files, a merge sooner or later) is many times that of the few documents a single write
//! changes. So a write's documents first join this overlay: one small in-memory segment of
//! every record written since the last commit, rebuilt at each write, searched beside the
//! committed segments (see `snapshot`), whose documents of the same records it hides. The
//! index commits the overlay's records together once it holds [`OVERLAY_RECORDS`] records
//! or its oldest is as old as the server's commit delay (`ALMANAC_INDEX_COMMIT_DELAY`).
//! Nothing in it needs to be durable: until that commit the outbox keeps its entries, and a
//! start replays them.

use super::analysis;
use super::snapshot::Hidden;
use crate::model::Kind;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tantivy::indexer::{AddOperation, SegmentWriter};
use tantivy::schema::{IndexRecordOption, Schema};
use tantivy::{DocSet, Index, Searcher, SegmentReader, TantivyDocument, Term, TERMINATED};

/// Records the overlay holds at most: each write rebuilds its segment, whose cost grows with
/// them, while a commit's cost hardly does (docs/performance.md, "Writes").
const OVERLAY_RECORDS: usize = 16;

/// Memory budget of the overlay's segment writer: sizes its term table, which is allocated
/// and cleared for every build.
const OVERLAY_SEGMENT_MEMORY: usize = 64 * 1024;

#[derive(Default)]
pub(super) struct Overlay {
    /// Records written since the last commit, with their newest document (`None`: removed).
    records: HashMap<(Kind, u64), Option<TantivyDocument>>,
    /// When the oldest of them arrived.
    since: Option<Instant>,
    /// The committed documents of those records.
    hidden: Arc<Hidden>,
    /// The segment of the records' documents, as last built.
    segment: Option<SegmentReader>,
}

impl Overlay {
    pub(super) fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    pub(super) fn records(&self) -> impl Iterator<Item = (Kind, u64)> + '_ {
        self.records.keys().copied()
    }

    pub(super) fn contains(&self, record: &(Kind, u64)) -> bool {
        self.records.contains_key(record)
    }

    pub(super) fn hidden(&self) -> Arc<Hidden> {
        self.hidden.clone()
    }

    pub(super) fn segment(&self) -> Option<SegmentReader> {
        self.segment.clone()
    }

    /// Whether adding `more` records makes the overlay due for its commit, its oldest record
    /// being due once `delay` old.
    pub(super) fn due_with(&self, more: usize, delay: Duration) -> bool {
        self.records.len() + more >= OVERLAY_RECORDS
            || self.since.is_some_and(|t| t.elapsed() >= delay)
    }

    /// How long until the overlay is due for its commit (`None` when empty).
    pub(super) fn due_in(&self, delay: Duration) -> Option<Duration> {
        self.since.map(|t| delay.saturating_sub(t.elapsed()))
    }

    /// Takes in the newest document of `record` (`None` when it was removed); the first time,
    /// hides the committed documents of the record (those with its ID term `id`).
    pub(super) fn put(
        &mut self,
        record: (Kind, u64),
        document: Option<TantivyDocument>,
        committed: &Searcher,
        id: &Term,
    ) -> tantivy::Result<()> {
        if self.records.insert(record, document).is_none() {
            self.since.get_or_insert_with(Instant::now);
            for reader in committed.segment_readers() {
                let Some(mut postings) = reader
                    .inverted_index(id.field())?
                    .read_postings(id, IndexRecordOption::Basic)?
                else {
                    continue;
                };
                let mut doc = postings.doc();
                while doc != TERMINATED {
                    if !reader.is_deleted(doc) {
                        let hidden = Arc::make_mut(&mut self.hidden);
                        let docs = Arc::make_mut(hidden.entry(reader.segment_id()).or_default());
                        if let Err(at) = docs.binary_search(&doc) {
                            docs.insert(at, doc);
                        }
                    }
                    doc = postings.advance();
                }
            }
        }
        Ok(())
    }

    /// Rebuilds the segment from the records' documents; returns the one it replaces.
    pub(super) fn rebuild(&mut self, schema: &Schema) -> tantivy::Result<Option<SegmentReader>> {
        let documents: Vec<&TantivyDocument> = self.records.values().flatten().collect();
        let segment = if documents.is_empty() {
            None
        } else {
            Some(build_segment(schema, documents)?)
        };
        Ok(std::mem::replace(&mut self.segment, segment))
    }

    /// Empties the overlay after its records were committed; returns its segment.
    pub(super) fn clear(&mut self) -> Option<SegmentReader> {
        let segment = self.segment.take();
        *self = Overlay::default();
        segment
    }
}

/// One in-memory segment of `documents`, analysed as the index analyses them.
fn build_segment(
    schema: &Schema,
    documents: Vec<&TantivyDocument>,
) -> tantivy::Result<SegmentReader> {
    let index = Index::create_in_ram(schema.clone());
    analysis::register(index.tokenizers());
    let segment = index.new_segment();
    let mut writer = SegmentWriter::for_segment(OVERLAY_SEGMENT_MEMORY, segment.clone())?;
    for document in documents {
        writer.add_document(AddOperation {
            opstamp: 0,
            document: document.clone(),
        })?;
    }
    let max_doc = writer.max_doc();
    writer.finalize()?;
    SegmentReader::open(&segment.with_max_doc(max_doc))
}
