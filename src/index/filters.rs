//! Filter clauses answered from cached per-segment bitsets (what Lucene's query cache does).
//!
//! Most clauses of a list are filters whose matches depend only on a segment's postings: the
//! base scope, the status set, months, term/venue/organizer IDs, flags, search words. Segments
//! are immutable (deletes only hide documents, which the collector skips), so a filter's
//! matches in a segment can be computed once and kept as one bit per document. A list then
//! ANDs its filters' bitsets word by word (a 200,000-document segment is 3,125 words), and
//! only the few survivors are checked against the remaining clauses (date ranges on fast
//! fields, `now`-relative statuses, phrases, exclusions) and ordered. Without the cache, every
//! candidate of the broadest clause was sought in every posting list and every prefix, typo
//! and ID-set clause first copied all its postings into a bitset, per request.
//!
//! Date bounds on fast fields are applied to the ANDed bitset in one pass over its documents
//! (one column read each), before any other check: run as predicate clauses of an
//! intersection, each document cost a chain of virtual seeks, and the default upcoming list
//! at a million events visits a quarter of them.
//!
//! When relevance scores are wanted, the plan runs as an ordinary boolean query instead
//! (bitsets carry no scores).

use std::collections::HashMap;
use std::ops::{Bound, RangeBounds};
use std::sync::{Arc, Mutex};
use tantivy::columnar::{Cardinality, Column};
use tantivy::index::SegmentId;
use tantivy::query::doc_predicate_query::{DocPredicateQuery, FunctionPredicate};
use tantivy::query::{
    intersect_scorers, AllQuery, BooleanQuery, ConstScorer, EnableScoring, Explanation, Occur,
    Query, Scorer, Weight,
};
use tantivy::{DocId, DocSet, Score, SegmentReader, TantivyError, TERMINATED};

/// A query as the planner builds it: filters (cacheable, all required), bounds on fast
/// fields (required) and checks (the rest).
#[derive(Debug, Default)]
pub(crate) struct Plan {
    pub filters: Vec<Box<dyn Query>>,
    pub bounds: Vec<ColumnBound>,
    pub checks: Vec<(Occur, Box<dyn Query>)>,
}

/// A required range on an i64 fast field: documents without a value do not match.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ColumnBound {
    pub column: &'static str,
    pub lower: Bound<i64>,
    pub upper: Bound<i64>,
}

impl ColumnBound {
    /// Clears the bits of the documents whose value is out of bounds or missing.
    pub(super) fn apply(
        &self,
        cache: &FilterCache,
        reader: &SegmentReader,
        words: &mut [u64],
    ) -> tantivy::Result<()> {
        let column = cache.i64_column(reader, self.column)?;
        let (low, high) = self.inclusive();
        // A full column (a value in every document) is read directly, a word's documents at a
        // time (one dynamic call per 64 documents); others through their index of present rows.
        let full = column.get_cardinality() == Cardinality::Full;
        let mut docs = [0 as DocId; 64];
        let mut values = [0i64; 64];
        for (at, word) in words.iter_mut().enumerate() {
            let mut count = 0;
            let mut rest = *word;
            while rest != 0 {
                docs[count] = at as DocId * 64 + rest.trailing_zeros();
                count += 1;
                rest &= rest - 1;
            }
            if count == 0 {
                continue;
            }
            if full {
                column.values.get_vals(&docs[..count], &mut values[..count]);
            }
            for (i, doc) in docs[..count].iter().enumerate() {
                let value = if full {
                    Some(values[i])
                } else {
                    column.first(*doc)
                };
                if !value.is_some_and(|v| low <= v && v <= high) {
                    *word &= !(1 << (doc % 64));
                }
            }
        }
        Ok(())
    }

    /// The bounds as an inclusive range (an empty one when nothing fits).
    pub(super) fn inclusive(&self) -> (i64, i64) {
        let low = match self.lower {
            Bound::Included(v) => Some(v),
            Bound::Excluded(v) => v.checked_add(1),
            Bound::Unbounded => Some(i64::MIN),
        };
        let high = match self.upper {
            Bound::Included(v) => Some(v),
            Bound::Excluded(v) => v.checked_sub(1),
            Bound::Unbounded => Some(i64::MAX),
        };
        match (low, high) {
            (Some(low), Some(high)) => (low, high),
            _ => (1, 0),
        }
    }

    /// The bound as a clause, for plans run as a scored boolean query.
    fn query(&self) -> Box<dyn Query> {
        let bound = self.clone();
        let predicate = FunctionPredicate::from(move |segment: &SegmentReader| {
            let column = segment.fast_fields().i64(bound.column)?;
            let range = (bound.lower, bound.upper);
            Ok(move |doc: DocId| column.first(doc).is_some_and(|v| range.contains(&v)))
        });
        Box::new(DocPredicateQuery::from(predicate))
    }
}

impl Plan {
    /// A required clause whose matches depend on nothing but the segment (no `now`).
    pub(crate) fn filter(&mut self, query: Box<dyn Query>) {
        self.filters.push(query);
    }

    /// A required range on an i64 fast field.
    pub(crate) fn bound(&mut self, column: &'static str, lower: Bound<i64>, upper: Bound<i64>) {
        self.bounds.push(ColumnBound {
            column,
            lower,
            upper,
        });
    }

    /// A clause evaluated per candidate document.
    pub(crate) fn check(&mut self, occur: Occur, query: Box<dyn Query>) {
        self.checks.push((occur, query));
    }

    /// The plan as a query that uses (and fills) `cache`.
    pub(crate) fn into_query(self, cache: &Arc<FilterCache>) -> FilteredQuery {
        let keys: Vec<String> = self.filters.iter().map(|q| cache_key(q.as_ref())).collect();
        FilteredQuery {
            keys: Arc::new(FilterKeys {
                all: keys.join(" AND "),
                each: keys,
            }),
            plan: Arc::new(self),
            cache: cache.clone(),
        }
    }

    fn checks(&self) -> Vec<(Occur, Box<dyn Query>)> {
        self.checks
            .iter()
            .map(|(o, q)| (*o, q.box_clone()))
            .collect()
    }

    /// Every clause as one boolean query (scored, uncached).
    fn boolean(&self) -> BooleanQuery {
        let mut clauses: Vec<_> = self
            .filters
            .iter()
            .map(|q| (Occur::Must, q.box_clone()))
            .collect();
        clauses.extend(self.bounds.iter().map(|b| (Occur::Must, b.query())));
        clauses.extend(self.checks());
        BooleanQuery::new(clauses)
    }
}

/// A filter's cache key: its rendering, or the digest of a long one (a radius's venues, a long
/// ID list), which is then hashed and compared once per request instead of once per segment.
fn cache_key(query: &dyn Query) -> String {
    const LONGEST: usize = 256;
    let text = format!("{query:?}");
    if text.len() <= LONGEST {
        return text;
    }
    format!("digest {}", blake3::hash(text.as_bytes()).to_hex())
}

/// Per-segment bitsets of filters, keyed by segment and the filter's rendering, within a
/// memory budget (when it is exceeded the cache starts over: entries of merged-away segments
/// and of rare filters go, the common ones come back at their next use).
pub(crate) struct FilterCache {
    budget: usize,
    entries: Mutex<Entries>,
    /// Facts of a segment that are costly to rebuild (see [`FilterCache::pinned`]).
    pinned: Mutex<HashMap<(SegmentId, &'static str), SegmentWords>>,
    /// Opened fast-field columns (see [`FilterCache::i64_column`]).
    columns: Mutex<HashMap<(SegmentId, &'static str), Column<i64>>>,
}

/// Opened columns kept at most: a few per segment (merged-away segments' also go when a new
/// segment's facts are pinned).
const MAX_COLUMNS: usize = 1024;

type SegmentWords = Arc<Vec<u64>>;

#[derive(Default)]
struct Entries {
    /// By filter rendering, then segment (looked up by `&str`, without building a key).
    bits: HashMap<String, HashMap<SegmentId, Arc<Vec<u64>>>>,
    bytes: usize,
}

impl FilterCache {
    pub(crate) fn new(budget: usize) -> FilterCache {
        FilterCache {
            budget,
            entries: Mutex::new(Entries::default()),
            pinned: Mutex::new(HashMap::new()),
            columns: Mutex::new(HashMap::new()),
        }
    }

    /// The segment's i64 fast-field column `name`. Opening a column reads its header and, for
    /// some encodings, the parameters of every block of values; reads did that for every
    /// segment they visited, and a stream of writes keeps more segments around.
    pub(super) fn i64_column(
        &self,
        reader: &SegmentReader,
        name: &'static str,
    ) -> tantivy::Result<Column<i64>> {
        let key = (reader.segment_id(), name);
        if let Some(column) = self.columns.lock().expect("filter cache lock").get(&key) {
            return Ok(column.clone());
        }
        let column = reader.fast_fields().i64(name)?;
        let mut columns = self.columns.lock().expect("filter cache lock");
        if columns.len() >= MAX_COLUMNS {
            columns.clear();
        }
        columns.insert(key, column.clone());
        Ok(column)
    }

    fn get(&self, segment: SegmentId, key: &str) -> Option<Arc<Vec<u64>>> {
        let entries = self.entries.lock().expect("filter cache lock");
        entries.bits.get(key)?.get(&segment).cloned()
    }

    fn put(&self, segment: SegmentId, key: &str, bits: Arc<Vec<u64>>) {
        let size = bits.len() * 8 + key.len();
        let mut entries = self.entries.lock().expect("filter cache lock");
        if entries.bytes + size > self.budget {
            entries.bits.clear();
            entries.bytes = 0;
        }
        let per_segment = entries.bits.entry(key.to_string()).or_default();
        if per_segment.insert(segment, bits).is_none() {
            entries.bytes += size;
        }
    }

    /// Drops what is kept for a segment no longer searched (an overlay's, replaced at the next
    /// write; merged-away segments go when the budget is exceeded).
    pub(super) fn forget(&self, segment: SegmentId) {
        let mut entries = self.entries.lock().expect("filter cache lock");
        let mut freed = 0;
        for (key, per_segment) in entries.bits.iter_mut() {
            if let Some(bits) = per_segment.remove(&segment) {
                freed += bits.len() * 8 + key.len();
            }
        }
        entries
            .bits
            .retain(|_, per_segment| !per_segment.is_empty());
        entries.bytes = entries.bytes.saturating_sub(freed);
        drop(entries);
        self.pinned
            .lock()
            .expect("filter cache lock")
            .retain(|(kept, _), _| *kept != segment);
        self.columns
            .lock()
            .expect("filter cache lock")
            .retain(|(kept, _), _| *kept != segment);
    }

    /// The matches of `query` in the segment, one bit per document (deleted ones included).
    fn bits(
        &self,
        key: &str,
        query: &dyn Query,
        reader: &SegmentReader,
    ) -> tantivy::Result<Arc<Vec<u64>>> {
        let segment = reader.segment_id();
        if let Some(bits) = self.get(segment, key) {
            return Ok(bits);
        }
        let mut words = vec![0u64; words_for(reader.max_doc())];
        let weight = query.weight(EnableScoring::disabled_from_schema(reader.schema()))?;
        let mut scorer = weight.scorer(reader, 1.0)?;
        let mut doc = scorer.doc();
        while doc != TERMINATED {
            words[(doc / 64) as usize] |= 1 << (doc % 64);
            doc = scorer.advance();
        }
        let bits = Arc::new(words);
        self.put(segment, key, bits.clone());
        Ok(bits)
    }

    /// Words derived from a segment alone that cost much more than a filter to rebuild (the
    /// month tables of `start_order`, which sort the segment): outside the filters' budget,
    /// kept while their segment is among `live` (the segments being searched), so a burst of
    /// new filters never drops them.
    pub(super) fn pinned(
        &self,
        segment: SegmentId,
        key: &'static str,
        live: &[SegmentId],
        compute: impl FnOnce() -> tantivy::Result<Vec<u64>>,
    ) -> tantivy::Result<Arc<Vec<u64>>> {
        let found = self
            .pinned
            .lock()
            .expect("filter cache lock")
            .get(&(segment, key))
            .cloned();
        if let Some(words) = found {
            return Ok(words);
        }
        let words = Arc::new(compute()?);
        let mut pinned = self.pinned.lock().expect("filter cache lock");
        pinned.retain(|(segment, _), _| live.contains(segment));
        pinned.insert((segment, key), words.clone());
        drop(pinned);
        // Merged-away segments' columns go too: they keep the segment's files mapped.
        self.columns
            .lock()
            .expect("filter cache lock")
            .retain(|(segment, _), _| live.contains(segment));
        Ok(words)
    }
}

/// The AND of a plan's filters in a segment (every document when it has none), deleted
/// documents included.
///
/// The AND of several filters is kept in the cache too, under their keys joined: at a million
/// documents ANDing whole-segment bitsets was most of what a small list cost.
fn filter_words(
    keys: &FilterKeys,
    plan: &Plan,
    cache: &FilterCache,
    reader: &SegmentReader,
) -> tantivy::Result<Arc<Vec<u64>>> {
    match keys.each.as_slice() {
        [] => Ok(Arc::new(all_docs(reader.max_doc()))),
        [key] => cache.bits(key, plan.filters[0].as_ref(), reader),
        each => {
            let segment = reader.segment_id();
            if let Some(bits) = cache.get(segment, &keys.all) {
                return Ok(bits);
            }
            let mut words: Option<Vec<u64>> = None;
            for (key, query) in each.iter().zip(&plan.filters) {
                let bits = cache.bits(key, query.as_ref(), reader)?;
                match words.as_mut() {
                    None => words = Some(bits.as_ref().clone()),
                    Some(acc) => acc.iter_mut().zip(bits.iter()).for_each(|(a, b)| *a &= b),
                }
            }
            let bits = Arc::new(words.unwrap_or_default());
            cache.put(segment, &keys.all, bits.clone());
            Ok(bits)
        }
    }
}

/// The cache keys of a plan's filters: each filter's rendering, and all of them joined.
#[derive(Debug)]
struct FilterKeys {
    each: Vec<String>,
    all: String,
}

pub(super) fn words_for(max_doc: u32) -> usize {
    (max_doc as usize).div_ceil(64)
}

/// A [`Plan`] bound to a cache: see the module documentation.
#[derive(Clone)]
pub(crate) struct FilteredQuery {
    keys: Arc<FilterKeys>,
    plan: Arc<Plan>,
    cache: Arc<FilterCache>,
}

impl std::fmt::Debug for FilteredQuery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FilteredQuery")
            .field("filters", &self.keys.each)
            .field("bounds", &self.plan.bounds)
            .field("checks", &self.plan.checks)
            .finish()
    }
}

impl FilteredQuery {
    pub(super) fn plan(&self) -> &Plan {
        &self.plan
    }

    pub(super) fn cache(&self) -> &FilterCache {
        &self.cache
    }

    /// The AND of the plan's filters in a segment, deleted documents included.
    pub(super) fn filter_words(&self, reader: &SegmentReader) -> tantivy::Result<Vec<u64>> {
        Ok(Arc::unwrap_or_clone(filter_words(
            &self.keys,
            &self.plan,
            &self.cache,
            reader,
        )?))
    }
}

impl Query for FilteredQuery {
    fn weight(&self, scoring: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        if scoring.is_scoring_enabled() {
            return self.plan.boolean().weight(scoring);
        }
        // Exclusions alone would match nothing in a boolean query: they subtract from all.
        let checks = if self.plan.checks.is_empty() {
            None
        } else {
            let mut clauses = self.plan.checks();
            clauses.push((Occur::Must, Box::new(AllQuery)));
            Some(BooleanQuery::new(clauses).weight(scoring)?)
        };
        Ok(Box::new(FilteredWeight {
            keys: self.keys.clone(),
            plan: self.plan.clone(),
            checks,
            cache: self.cache.clone(),
        }))
    }

    fn query_terms<'a>(&'a self, visitor: &mut dyn FnMut(&'a tantivy::Term, bool)) {
        for q in &self.plan.filters {
            q.query_terms(visitor);
        }
        for (_, q) in &self.plan.checks {
            q.query_terms(visitor);
        }
    }
}

/// Filter weights are only built on a cache miss (a typo-tolerant word's automaton, an ID
/// set's term map cost more than the cached answer).
struct FilteredWeight {
    keys: Arc<FilterKeys>,
    plan: Arc<Plan>,
    checks: Option<Box<dyn Weight>>,
    cache: Arc<FilterCache>,
}

impl Weight for FilteredWeight {
    fn scorer(&self, reader: &SegmentReader, boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        let mut words = filter_words(&self.keys, &self.plan, &self.cache, reader)?;
        for bound in &self.plan.bounds {
            bound.apply(
                &self.cache,
                reader,
                Arc::make_mut(&mut words).as_mut_slice(),
            )?;
        }
        let matches: Box<dyn Scorer> = Box::new(ConstScorer::new(BitsDocSet::new(words), boost));
        Ok(match &self.checks {
            None => matches,
            Some(checks) => intersect_scorers(
                vec![matches, checks.scorer(reader, boost)?],
                reader.num_docs(),
            ),
        })
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        let mut scorer = self.scorer(reader, 1.0)?;
        if scorer.seek(doc) == doc {
            Ok(Explanation::new("FilteredQuery", 1.0))
        } else {
            Err(TantivyError::InvalidArgument(format!(
                "document {doc} does not match"
            )))
        }
    }
}

fn all_docs(max_doc: u32) -> Vec<u64> {
    let mut words = vec![u64::MAX; words_for(max_doc)];
    if !max_doc.is_multiple_of(64) {
        if let Some(last) = words.last_mut() {
            *last = (1u64 << (max_doc % 64)) - 1;
        }
    }
    words
}

/// The documents of a bitset, in order.
struct BitsDocSet {
    words: Arc<Vec<u64>>,
    /// Index of the word being consumed, and its bits not yet returned.
    word: usize,
    rest: u64,
    doc: DocId,
    len: u32,
}

impl BitsDocSet {
    fn new(words: Arc<Vec<u64>>) -> BitsDocSet {
        let len = words.iter().map(|w| w.count_ones()).sum();
        let rest = words.first().copied().unwrap_or(0);
        let mut set = BitsDocSet {
            words,
            word: 0,
            rest,
            doc: 0,
            len,
        };
        set.next_set_bit();
        set
    }

    fn next_set_bit(&mut self) -> DocId {
        while self.rest == 0 {
            self.word += 1;
            match self.words.get(self.word) {
                Some(w) => self.rest = *w,
                None => {
                    self.doc = TERMINATED;
                    return TERMINATED;
                }
            }
        }
        let bit = self.rest.trailing_zeros();
        self.rest &= self.rest - 1;
        self.doc = self.word as u32 * 64 + bit;
        self.doc
    }
}

impl DocSet for BitsDocSet {
    fn advance(&mut self) -> DocId {
        if self.doc == TERMINATED {
            return TERMINATED;
        }
        self.next_set_bit()
    }

    fn seek(&mut self, target: DocId) -> DocId {
        if self.doc == TERMINATED || target <= self.doc {
            return self.doc;
        }
        let word = (target / 64) as usize;
        match self.words.get(word) {
            None => {
                self.doc = TERMINATED;
                TERMINATED
            }
            Some(w) => {
                self.word = word;
                self.rest = w & (u64::MAX << (target % 64));
                self.next_set_bit()
            }
        }
    }

    fn doc(&self) -> DocId {
        self.doc
    }

    fn size_hint(&self) -> u32 {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(mut set: BitsDocSet) -> Vec<DocId> {
        let mut out = Vec::new();
        while set.doc() != TERMINATED {
            out.push(set.doc());
            set.advance();
        }
        out
    }

    fn words(docs: &[u32], max_doc: u32) -> Vec<u64> {
        let mut w = vec![0u64; words_for(max_doc)];
        for d in docs {
            w[(*d / 64) as usize] |= 1 << (d % 64);
        }
        w
    }

    #[test]
    fn a_bitset_yields_its_documents_in_order() {
        let set = [0, 1, 63, 64, 200, 639];
        assert_eq!(docs(BitsDocSet::new(Arc::new(words(&set, 640)))), set);
        assert_eq!(
            docs(BitsDocSet::new(Arc::new(words(&[], 640)))),
            Vec::<u32>::new()
        );
        assert_eq!(
            docs(BitsDocSet::new(Arc::new(Vec::new()))),
            Vec::<u32>::new()
        );
    }

    #[test]
    fn seek_lands_on_the_first_document_at_or_after_the_target() {
        let mut set = BitsDocSet::new(Arc::new(words(&[3, 70, 130, 131], 200)));
        assert_eq!(set.seek(2), 3);
        assert_eq!(set.seek(3), 3, "seeking the current document stays");
        assert_eq!(set.seek(71), 130);
        assert_eq!(set.advance(), 131);
        assert_eq!(set.seek(132), TERMINATED);
        assert_eq!(set.seek(5000), TERMINATED);
        assert_eq!(set.size_hint(), 4);
    }

    #[test]
    fn cached_filters_follow_new_segments_and_deletes() {
        use tantivy::collector::{Count, DocSetCollector};
        use tantivy::query::TermQuery;
        use tantivy::schema::{IndexRecordOption, Schema, FAST, INDEXED, STRING};
        use tantivy::{doc, Index, Term};

        let mut schema = Schema::builder();
        let tag = schema.add_text_field("tag", STRING);
        let id = schema.add_u64_field("id", INDEXED | FAST);
        let index = Index::create_in_ram(schema.build());
        let mut writer: tantivy::IndexWriter = index.writer(15_000_000).unwrap();
        for n in 0..100u64 {
            let t = if n % 2 == 0 { "even" } else { "odd" };
            writer.add_document(doc!(tag => t, id => n)).unwrap();
        }
        writer.commit().unwrap();
        let reader = index.reader().unwrap();
        let cache = Arc::new(FilterCache::new(1 << 20));
        let even = || {
            let mut plan = Plan::default();
            plan.filter(Box::new(TermQuery::new(
                Term::from_field_text(tag, "even"),
                IndexRecordOption::Basic,
            )));
            plan.into_query(&cache)
        };
        assert_eq!(reader.searcher().search(&even(), &Count).unwrap(), 50);
        writer.delete_term(Term::from_field_u64(id, 4));
        writer
            .add_document(doc!(tag => "even", id => 100u64))
            .unwrap();
        writer
            .add_document(doc!(tag => "even", id => 102u64))
            .unwrap();
        writer.commit().unwrap();
        reader.reload().unwrap();
        let searcher = reader.searcher();
        assert_eq!(searcher.search(&even(), &Count).unwrap(), 51);
        let mut with_check = Plan::default();
        with_check.filter(Box::new(TermQuery::new(
            Term::from_field_text(tag, "even"),
            IndexRecordOption::Basic,
        )));
        with_check.check(
            Occur::MustNot,
            Box::new(TermQuery::new(
                Term::from_field_u64(id, 100),
                IndexRecordOption::Basic,
            )),
        );
        let docs = searcher
            .search(&with_check.into_query(&cache), &DocSetCollector)
            .unwrap();
        assert_eq!(docs.len(), 50, "deleted and excluded documents stay out");
    }

    #[test]
    fn all_documents_stop_at_max_doc() {
        assert_eq!(docs(BitsDocSet::new(Arc::new(all_docs(130)))).len(), 130);
        assert_eq!(docs(BitsDocSet::new(Arc::new(all_docs(128)))).len(), 128);
    }

    #[test]
    fn bounds_keep_values_in_range_and_drop_missing_ones() {
        use tantivy::collector::DocSetCollector;
        use tantivy::schema::{Schema, FAST, STRING};
        use tantivy::{doc, Index, TantivyDocument};

        let build = |with_missing: bool| {
            let mut schema = Schema::builder();
            let tag = schema.add_text_field("tag", STRING);
            let t = schema.add_i64_field("t", FAST);
            let index = Index::create_in_ram(schema.build());
            let mut writer: tantivy::IndexWriter = index.writer(15_000_000).unwrap();
            for n in 0..200i64 {
                if with_missing && n % 10 == 0 {
                    let mut d = TantivyDocument::default();
                    d.add_text(tag, "x");
                    writer.add_document(d).unwrap();
                } else {
                    writer.add_document(doc!(tag => "x", t => n)).unwrap();
                }
            }
            writer.commit().unwrap();
            index.reader().unwrap().searcher()
        };
        let cache = Arc::new(FilterCache::new(1 << 20));
        let matches = |searcher: &tantivy::Searcher, lower, upper, relevance: bool| {
            let mut plan = Plan::default();
            plan.bound("t", lower, upper);
            let mut docs: Vec<DocId> = if relevance {
                searcher
                    .search(&plan.boolean(), &DocSetCollector)
                    .unwrap()
                    .into_iter()
                    .map(|a| a.doc_id)
                    .collect()
            } else {
                searcher
                    .search(&plan.into_query(&cache), &DocSetCollector)
                    .unwrap()
                    .into_iter()
                    .map(|a| a.doc_id)
                    .collect()
            };
            docs.sort();
            docs
        };
        for with_missing in [false, true] {
            let searcher = build(with_missing);
            let expected = |keep: &dyn Fn(i64) -> bool| -> Vec<DocId> {
                (0..200i64)
                    .filter(|n| !(with_missing && n % 10 == 0) && keep(*n))
                    .map(|n| n as DocId)
                    .collect()
            };
            for relevance in [false, true] {
                let got = matches(
                    &searcher,
                    Bound::Excluded(63),
                    Bound::Included(130),
                    relevance,
                );
                assert_eq!(
                    got,
                    expected(&|n| n > 63 && n <= 130),
                    "{with_missing} {relevance}"
                );
                let got = matches(&searcher, Bound::Unbounded, Bound::Excluded(5), relevance);
                assert_eq!(got, expected(&|n| n < 5), "{with_missing} {relevance}");
                let got = matches(
                    &searcher,
                    Bound::Excluded(i64::MAX),
                    Bound::Unbounded,
                    relevance,
                );
                assert!(got.is_empty());
            }
        }
    }
}
