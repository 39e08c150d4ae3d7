//! What one read searches: the last index commit's segments, minus the documents the overlay
//! replaces, plus the overlay's segment of the newest writes (see `overlay`).
//!
//! tantivy's own searcher covers one index's committed segments only, so searches go through
//! [`Snapshot::search`], which does what tantivy's does (one weight, every segment, the
//! collector's merge) over this wider set, and hides the replaced documents by wrapping the
//! weight. Scores use the statistics of every searched segment, so a document scores the same
//! in the overlay as after the commit that moves it to disk.

use std::collections::HashMap;
use std::sync::Arc;
use tantivy::collector::{Collector, Count};
use tantivy::index::SegmentId;
use tantivy::query::{
    Bm25StatisticsProvider, EnableScoring, Exclude, ExclusionSet, Explanation, Query, Scorer,
    Weight,
};
use tantivy::schema::Field;
use tantivy::{DocId, DocSet, Score, Searcher, SegmentReader, Term, TERMINATED};

/// Documents of committed segments that newer writes replace, sorted, by segment.
pub(super) type Hidden = HashMap<SegmentId, Arc<Vec<DocId>>>;

#[derive(Clone)]
pub(crate) struct Snapshot {
    inner: Arc<Inner>,
}

struct Inner {
    committed: Searcher,
    /// The committed segments, then the overlay's.
    readers: Vec<SegmentReader>,
    hidden: Arc<Hidden>,
    /// Changes whenever what this snapshot searches does (caches of derived counts key on it).
    generation: u64,
}

impl Snapshot {
    pub(super) fn new(
        committed: Searcher,
        overlay: Option<SegmentReader>,
        hidden: Arc<Hidden>,
        generation: u64,
    ) -> Snapshot {
        let mut readers = committed.segment_readers().to_vec();
        readers.extend(overlay);
        Snapshot {
            inner: Arc::new(Inner {
                committed,
                readers,
                hidden,
                generation,
            }),
        }
    }

    pub(crate) fn segment_readers(&self) -> &[SegmentReader] {
        &self.inner.readers
    }

    pub(crate) fn generation(&self) -> u64 {
        self.inner.generation
    }

    /// Identifies the last index commit this snapshot searches: unlike [`Snapshot::generation`],
    /// it stays the same while only the overlay changes.
    pub(crate) fn committed_generation(&self) -> u64 {
        self.inner.committed.generation().generation_id()
    }

    /// How many documents of the last index commit match `query`, hidden ones included.
    pub(crate) fn count_committed(&self, query: &dyn Query) -> tantivy::Result<u64> {
        Ok(self.inner.committed.search(query, &Count)? as u64)
    }

    /// What the overlay adds to the count of `query`'s matches in the last index commit: its
    /// own matches, less the hidden committed documents that match.
    pub(crate) fn overlay_count_change(&self, query: &dyn Query) -> tantivy::Result<i64> {
        let committed = self.inner.committed.segment_readers();
        let overlay = &self.inner.readers[committed.len()..];
        if overlay.is_empty() && self.inner.hidden.is_empty() {
            return Ok(0);
        }
        let weight = query.weight(EnableScoring::disabled_from_searcher(&self.inner.committed))?;
        let mut change = 0i64;
        for reader in overlay {
            change += i64::from(weight.count(reader)?);
        }
        for reader in committed {
            let Some(docs) = self.inner.hidden.get(&reader.segment_id()) else {
                continue;
            };
            let alive = reader.alive_bitset();
            let mut scorer = weight.scorer(reader, 1.0)?;
            for &doc in docs.iter() {
                if scorer.doc() < doc {
                    scorer.seek(doc);
                }
                if scorer.doc() == doc && alive.is_none_or(|a| a.is_alive(doc)) {
                    change -= 1;
                }
            }
        }
        Ok(change)
    }

    /// The documents of `segment` that newer writes replace (sorted), if any.
    pub(super) fn hidden_in(&self, segment: SegmentId) -> Option<&[DocId]> {
        self.inner.hidden.get(&segment).map(|docs| docs.as_slice())
    }

    /// The searchable documents.
    pub(crate) fn num_docs(&self) -> u64 {
        let hidden: usize = self.inner.hidden.values().map(|docs| docs.len()).sum();
        let all: u64 = self
            .inner
            .readers
            .iter()
            .map(|r| u64::from(r.num_docs()))
            .sum();
        all.saturating_sub(hidden as u64)
    }

    /// Runs `query` over every segment, as `tantivy::Searcher::search` does over its own.
    pub(crate) fn search<C: Collector>(
        &self,
        query: &dyn Query,
        collector: &C,
    ) -> tantivy::Result<C::Fruit> {
        let scoring = if collector.requires_scoring() {
            EnableScoring::enabled_from_statistics_provider(self, &self.inner.committed)
        } else {
            EnableScoring::disabled_from_searcher(&self.inner.committed)
        };
        let mut weight = query.weight(scoring)?;
        if !self.inner.hidden.is_empty() {
            weight = Box::new(HidingWeight {
                inner: weight,
                hidden: self.inner.hidden.clone(),
            });
        }
        let fruits = self
            .inner
            .readers
            .iter()
            .enumerate()
            .map(|(ord, reader)| collector.collect_segment(weight.as_ref(), ord as u32, reader))
            .collect::<tantivy::Result<Vec<_>>>()?;
        collector.merge_fruits(fruits)
    }
}

impl Bm25StatisticsProvider for Snapshot {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        let mut total = 0;
        for reader in &self.inner.readers {
            total += reader.inverted_index(field)?.total_num_tokens();
        }
        Ok(total)
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self
            .inner
            .readers
            .iter()
            .map(|r| u64::from(r.max_doc()))
            .sum())
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        let mut total = 0;
        for reader in &self.inner.readers {
            total += u64::from(reader.inverted_index(term.field())?.doc_freq(term)?);
        }
        Ok(total)
    }
}

/// A weight whose matches leave out the hidden documents.
struct HidingWeight {
    inner: Box<dyn Weight>,
    hidden: Arc<Hidden>,
}

struct HiddenDocs(Arc<Vec<DocId>>);

impl ExclusionSet for HiddenDocs {
    fn contains(&mut self, doc: DocId) -> bool {
        self.0.binary_search(&doc).is_ok()
    }
}

impl HidingWeight {
    /// The matches in a segment with hidden documents, without them.
    fn visible(
        &self,
        reader: &SegmentReader,
        boost: Score,
    ) -> tantivy::Result<Option<Box<dyn Scorer>>> {
        let Some(docs) = self.hidden.get(&reader.segment_id()) else {
            return Ok(None);
        };
        let scorer = self.inner.scorer(reader, boost)?;
        Ok(Some(Box::new(Exclude::new(
            scorer,
            HiddenDocs(docs.clone()),
        ))))
    }
}

/// Calls `f` for each document of `scorer` that `reader` has not deleted.
fn for_each_alive(
    reader: &SegmentReader,
    mut scorer: Box<dyn Scorer>,
    mut f: impl FnMut(DocId, &mut dyn Scorer),
) {
    let alive = reader.alive_bitset();
    let mut doc = scorer.doc();
    while doc != TERMINATED {
        if alive.is_none_or(|a| a.is_alive(doc)) {
            f(doc, scorer.as_mut());
        }
        doc = scorer.advance();
    }
}

// Segments without hidden documents keep the inner weight's own (faster) iterations; the
// others go through the scorer, as tantivy's defaults do.
impl Weight for HidingWeight {
    fn scorer(&self, reader: &SegmentReader, boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        match self.visible(reader, boost)? {
            Some(scorer) => Ok(scorer),
            None => self.inner.scorer(reader, boost),
        }
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        self.inner.explain(reader, doc)
    }

    fn count(&self, reader: &SegmentReader) -> tantivy::Result<u32> {
        let Some(scorer) = self.visible(reader, 1.0)? else {
            return self.inner.count(reader);
        };
        let mut count = 0;
        for_each_alive(reader, scorer, |_, _| count += 1);
        Ok(count)
    }

    fn for_each(
        &self,
        reader: &SegmentReader,
        callback: &mut dyn FnMut(DocId, Score),
    ) -> tantivy::Result<()> {
        let Some(scorer) = self.visible(reader, 1.0)? else {
            return self.inner.for_each(reader, callback);
        };
        let mut scorer = scorer;
        let mut doc = scorer.doc();
        while doc != TERMINATED {
            callback(doc, scorer.score());
            doc = scorer.advance();
        }
        Ok(())
    }

    fn for_each_no_score(
        &self,
        reader: &SegmentReader,
        callback: &mut dyn FnMut(&[DocId]),
    ) -> tantivy::Result<()> {
        let Some(mut scorer) = self.visible(reader, 1.0)? else {
            return self.inner.for_each_no_score(reader, callback);
        };
        let mut doc = scorer.doc();
        while doc != TERMINATED {
            callback(&[doc]);
            doc = scorer.advance();
        }
        Ok(())
    }

    fn for_each_pruning(
        &self,
        threshold: Score,
        reader: &SegmentReader,
        callback: &mut dyn FnMut(DocId, Score) -> Score,
    ) -> tantivy::Result<()> {
        let Some(mut scorer) = self.visible(reader, 1.0)? else {
            return self.inner.for_each_pruning(threshold, reader, callback);
        };
        let mut threshold = threshold;
        let mut doc = scorer.doc();
        while doc != TERMINATED {
            let score = scorer.score();
            if score > threshold {
                threshold = callback(doc, score);
            }
            doc = scorer.advance();
        }
        Ok(())
    }
}
