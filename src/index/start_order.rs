//! Pages of an event list in start order, found month by month instead of by ordering every
//! match.
//!
//! An event list in start order (the default) visited every match to order and count it: at a
//! million events the default upcoming list has a quarter of a million. Every event carries its
//! start month as a term, so a segment's matches split by month without reading a value:
//!
//! - The **total** is the popcount of the matches' bitset.
//! - A **page** is found by walking the months in order, counting each month's matches (the
//!   popcount of their AND with the month's bitset) until the month holding the page's first
//!   match; that month's events are then read in start order (kept per segment beside the
//!   bitsets) until the page is full, and the next months' if it is not. A page deep in a list
//!   skips whole months by their counts.
//! - **Date bounds** go through the months too: a month whose every start — and, for bounds on
//!   the end, every end, at most the segment's longest event after its start — lies inside the
//!   bounds passes whole, one entirely outside drops out, and in a month a bound cuts, a start
//!   bound is a binary search in the month's start order and an end bound an exact check of
//!   the matches that start within the segment's longest event of it (earlier or later
//!   starts are in or out by their start alone).
//!
//! Plans with checks (phrases, exclusions, `now`-dependent statuses) are left to the ordinary
//! query: their matches are not a bitset.

use super::docs::{month_seconds, ID_SPAN};
use super::filters::{words_for, ColumnBound, FilterCache, FilteredQuery};
use super::snapshot::Snapshot;
use super::Hits;
use std::collections::BTreeMap;
use std::sync::Arc;
use tantivy::index::SegmentId;
use tantivy::postings::TermInfo;
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocId, DocSet, SegmentReader, TERMINATED};

/// Below this many matches the month walk saves nothing: every match is read and ordered.
const WALK_MIN_MATCHES: usize = 2048;

/// A segment whose month table would be larger (a calendar spread over many years, at a
/// million events) is left to the ordinary query, which needs no table.
const MAX_MONTH_TABLE_BYTES: usize = 32 << 20;

/// The filter cache's keys of a segment's month table: its months and their event counts
/// (read from the term dictionary once, not per list), their cumulative bitsets, their events
/// in start order.
const MONTHS_KEY: &str = "start months: months and counts";
const CUMULATIVE_KEY: &str = "start months: cumulative bitsets";
const SORTED_KEY: &str = "start months: events in start order";

/// The start-month terms: their field and text prefix (see `schema::Fields::key_terms`).
pub(crate) struct MonthTerms {
    pub field: Field,
    pub prefix: String,
}

/// How a month's documents fare against a plan's date bounds (ordered: a month fares as its
/// worst bound).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Fit {
    Inside,
    Across,
    Outside,
}

/// A segment's start months in order and, for each, the documents starting in it or before,
/// one bit each: any run of months is then two bitsets away (`upto(last) & !upto(first - 1)`),
/// whatever its length. And the month's documents in start order, with their `order_start`
/// keys: a bound that cuts a month is a binary search in it, and a page is read from it in
/// order. Both kept while their segment is searched (`FilterCache::pinned`).
struct MonthTable {
    months: Vec<i64>,
    words: usize,
    cumulative: Arc<Vec<u64>>,
    /// `months.len() + 1` offsets into the keys, the keys, then the documents two per word.
    sorted: Arc<Vec<u64>>,
}

impl MonthTable {
    fn load(
        query: &FilteredQuery,
        terms: &MonthTerms,
        reader: &SegmentReader,
        live: &[SegmentId],
    ) -> tantivy::Result<Option<MonthTable>> {
        let segment = reader.segment_id();
        let counted = query.cache().pinned(segment, MONTHS_KEY, live, || {
            Ok(segment_months(terms, reader)?
                .iter()
                .flat_map(|(month, info)| [*month as u64, u64::from(info.doc_freq)])
                .collect())
        })?;
        let months: Vec<i64> = counted.iter().step_by(2).map(|m| *m as i64).collect();
        let words = words_for(reader.max_doc());
        let documents: usize = counted.iter().skip(1).step_by(2).map(|n| *n as usize).sum();
        if months.len() * words * 8 + documents * 12 > MAX_MONTH_TABLE_BYTES {
            return Ok(None);
        }
        let cumulative = query.cache().pinned(segment, CUMULATIVE_KEY, live, || {
            let present = segment_months(terms, reader)?;
            let mut table = vec![0u64; present.len() * words];
            let mut so_far = vec![0u64; words];
            for (at, info) in present.values().enumerate() {
                for_each_posting(reader, terms.field, info, |doc| {
                    so_far[(doc / 64) as usize] |= 1 << (doc % 64);
                })?;
                table[at * words..(at + 1) * words].copy_from_slice(&so_far);
            }
            Ok(table)
        })?;
        let sorted = query.cache().pinned(segment, SORTED_KEY, live, || {
            let column = reader
                .fast_fields()
                .i64("order_start")?
                .first_or_default_col(0);
            let present = segment_months(terms, reader)?;
            let mut offsets = vec![0u64];
            let mut pairs: Vec<(i64, DocId)> = Vec::with_capacity(documents);
            for info in present.values() {
                let from = pairs.len();
                for_each_posting(reader, terms.field, info, |doc| {
                    pairs.push((column.get_val(doc), doc));
                })?;
                pairs[from..].sort_unstable();
                offsets.push(pairs.len() as u64);
            }
            let mut data = offsets;
            data.extend(pairs.iter().map(|(key, _)| *key as u64));
            data.extend(pairs.chunks(2).map(|two| {
                two.iter()
                    .enumerate()
                    .fold(0u64, |w, (i, (_, doc))| w | (u64::from(*doc) << (32 * i)))
            }));
            Ok(data)
        })?;
        Ok(Some(MonthTable {
            months,
            words,
            cumulative,
            sorted,
        }))
    }

    /// The documents starting in the months `first..=last` (positions in `months`), word by
    /// word.
    fn run(&self, first: usize, last: usize) -> impl Iterator<Item = u64> + '_ {
        let upto = &self.cumulative[last * self.words..(last + 1) * self.words];
        let before = first
            .checked_sub(1)
            .map(|b| &self.cumulative[b * self.words..(b + 1) * self.words]);
        upto.iter().enumerate().map(move |(at, word)| match before {
            Some(before) => word & !before[at],
            None => *word,
        })
    }

    /// The positions in start order of the month at `at`.
    fn span(&self, at: usize) -> std::ops::Range<usize> {
        self.sorted[at] as usize..self.sorted[at + 1] as usize
    }

    fn key(&self, position: usize) -> i64 {
        self.sorted[self.months.len() + 1 + position] as i64
    }

    fn doc(&self, position: usize) -> DocId {
        let documents = self.sorted[self.months.len()] as usize;
        let word = self.sorted[self.months.len() + 1 + documents + position / 2];
        (word >> (32 * (position % 2))) as DocId
    }

    /// The positions of the month at `at` whose key lies in `low..=high`.
    fn keys_within(&self, at: usize, low: i64, high: i64) -> std::ops::Range<usize> {
        let span = self.span(at);
        let first = span.start + partition(span.len(), |i| self.key(span.start + i) < low);
        let end = span.start + partition(span.len(), |i| self.key(span.start + i) <= high);
        first..end.max(first)
    }
}

/// The first index in `0..len` for which `before` is false (`before` holds for a prefix).
fn partition(len: usize, before: impl Fn(usize) -> bool) -> usize {
    let (mut low, mut high) = (0, len);
    while low < high {
        let mid = (low + high) / 2;
        if before(mid) {
            low = mid + 1;
        } else {
            high = mid;
        }
    }
    low
}

/// A segment's exact matches (filters, live documents, date bounds) and the positions in
/// its month table of the months that may hold them.
struct SegmentMatches<'a> {
    reader: &'a SegmentReader,
    words: Vec<u64>,
    table: MonthTable,
    candidates: std::ops::Range<usize>,
}

impl SegmentMatches<'_> {
    /// The matches starting in the month at `at` of the table, word by word.
    fn in_month(&self, at: usize) -> impl Iterator<Item = u64> + '_ {
        self.words
            .iter()
            .zip(self.table.run(at, at))
            .map(|(w, m)| w & m)
    }
}

/// The page `offset..offset + limit` of `query`'s matches in ascending `order_start`, and the
/// total; `None` when the plan has clauses that are not bitsets, or a segment's month table
/// would be too large (the caller runs the query).
pub(crate) fn page(
    query: &FilteredQuery,
    months: &MonthTerms,
    searcher: &Snapshot,
    offset: usize,
    limit: usize,
) -> tantivy::Result<Option<Hits>> {
    let plan = query.plan();
    let on_dates = |column: &str| matches!(column, "start_local" | "end_local");
    if !plan.checks.is_empty() || !plan.bounds.iter().all(|b| on_dates(b.column)) {
        return Ok(None);
    }
    let live: Vec<SegmentId> = searcher
        .segment_readers()
        .iter()
        .map(|r| r.segment_id())
        .collect();
    let mut segments = Vec::new();
    let mut total = 0;
    for reader in searcher.segment_readers() {
        let hidden = searcher.hidden_in(reader.segment_id()).unwrap_or_default();
        let Some(matches) = segment_matches(query, months, reader, hidden, &live)? else {
            return Ok(None);
        };
        total += count(matches.words.iter().copied());
        segments.push(matches);
    }
    let keys = if total <= WALK_MIN_MATCHES {
        let mut keys = Vec::with_capacity(total);
        for segment in &segments {
            read_keys(
                query.cache(),
                segment.reader,
                segment.words.iter().copied(),
                &mut keys,
            )?;
        }
        smallest(keys, offset, limit)
    } else {
        walk_months(&segments, offset, limit)?
    };
    Ok(Some(Hits {
        ids: keys
            .into_iter()
            .map(|k| k.rem_euclid(ID_SPAN) as u64)
            .collect(),
        total,
    }))
}

/// The months in order, each month's matches counted, until the page is full.
fn walk_months(
    segments: &[SegmentMatches],
    offset: usize,
    limit: usize,
) -> tantivy::Result<Vec<i64>> {
    let mut all: Vec<i64> = segments
        .iter()
        .flat_map(|s| s.table.months[s.candidates.clone()].iter().copied())
        .collect();
    all.sort_unstable();
    all.dedup();
    let mut before = 0usize;
    let mut page = Vec::with_capacity(limit);
    for month in all {
        let in_month: Vec<(&SegmentMatches, usize)> = segments
            .iter()
            .filter_map(|s| {
                let at = s.table.months.binary_search(&month).ok()?;
                s.candidates.contains(&at).then_some((s, at))
            })
            .collect();
        let count_in_month: usize = in_month.iter().map(|(s, at)| count(s.in_month(*at))).sum();
        if before + count_in_month <= offset {
            before += count_in_month;
            continue;
        }
        // Each segment's first `skip + need` matches of the month, in order; merged.
        let skip = offset.saturating_sub(before);
        let need = limit - page.len();
        let mut keys = Vec::new();
        for (segment, at) in &in_month {
            let mut found = 0;
            for position in segment.table.span(*at) {
                if found == skip + need {
                    break;
                }
                let doc = segment.table.doc(position);
                if segment.words[(doc / 64) as usize] & (1 << (doc % 64)) != 0 {
                    keys.push(segment.table.key(position));
                    found += 1;
                }
            }
        }
        page.extend(smallest(keys, skip, need));
        before += count_in_month;
        if page.len() >= limit {
            break;
        }
    }
    Ok(page)
}

/// Keys `offset..offset + limit` of `keys` in ascending order, without sorting the rest.
fn smallest(mut keys: Vec<i64>, offset: usize, limit: usize) -> Vec<i64> {
    let end = offset.saturating_add(limit);
    if end < keys.len() {
        keys.select_nth_unstable(end);
        keys.truncate(end);
    }
    keys.sort_unstable();
    keys.into_iter().skip(offset).collect()
}

/// Appends the `order_start` of every document of `words`.
fn read_keys(
    cache: &FilterCache,
    reader: &SegmentReader,
    words: impl Iterator<Item = u64>,
    keys: &mut Vec<i64>,
) -> tantivy::Result<()> {
    let column = cache
        .i64_column(reader, "order_start")?
        .first_or_default_col(0);
    for_each_doc(words, |doc| keys.push(column.get_val(doc)));
    Ok(())
}

fn for_each_doc(words: impl Iterator<Item = u64>, mut f: impl FnMut(DocId)) {
    for (at, word) in words.enumerate() {
        let mut rest = word;
        while rest != 0 {
            f(at as DocId * 64 + rest.trailing_zeros());
            rest &= rest - 1;
        }
    }
}

fn count(words: impl Iterator<Item = u64>) -> usize {
    words.map(|w| w.count_ones() as usize).sum()
}

/// A segment's exact matches: filters, live documents (neither deleted nor `hidden`, sorted),
/// and date bounds applied through the month table (see the module documentation).
fn segment_matches<'a>(
    query: &FilteredQuery,
    terms: &MonthTerms,
    reader: &'a SegmentReader,
    hidden: &[DocId],
    live: &[SegmentId],
) -> tantivy::Result<Option<SegmentMatches<'a>>> {
    let Some(table) = MonthTable::load(query, terms, reader, live)? else {
        return Ok(None);
    };
    let mut words = query.filter_words(reader)?;
    if let Some(alive) = reader.alive_bitset() {
        let mut live = tantivy::BitSet::with_max_value_and_full(reader.max_doc());
        live.intersect_update(alive.bitset());
        for (at, word) in words.iter_mut().enumerate() {
            *word &= u64::from_le_bytes(live.tinyset(at as u32).into_bytes());
        }
    }
    for doc in hidden {
        words[(doc / 64) as usize] &= !(1 << (doc % 64));
    }
    let bounds = &query.plan().bounds;
    let (shortest, longest) = if bounds.iter().any(|b| b.column == "end_local") {
        durations(query, reader, live)?
    } else {
        (0, 0)
    };
    let bound_fit = |bound: &ColumnBound, month: i64| {
        let (first, next) = month_seconds(month);
        let (low, high) = bound.inclusive();
        let (from, to) = match bound.column {
            "start_local" => (first, next - 1),
            _ => (
                first.saturating_add(shortest),
                (next - 1).saturating_add(longest),
            ),
        };
        if to < low || from > high {
            Fit::Outside
        } else if low <= from && to <= high {
            Fit::Inside
        } else {
            Fit::Across
        }
    };
    let fits: Vec<Fit> = table
        .months
        .iter()
        .map(|m| {
            bounds
                .iter()
                .map(|b| bound_fit(b, *m))
                .max()
                .unwrap_or(Fit::Inside)
        })
        .collect();
    // Each bound keeps a run of months, so the months not outside them are one run too, and so
    // are the months inside them.
    let first = fits.iter().position(|f| *f != Fit::Outside);
    let last = fits.iter().rposition(|f| *f != Fit::Outside);
    let candidates = match (first, last) {
        (Some(first), Some(last)) => first..last + 1,
        _ => 0..0,
    };
    let mut kept = vec![0u64; words.len()];
    let inside_first = fits.iter().position(|f| *f == Fit::Inside);
    let inside_last = fits.iter().rposition(|f| *f == Fit::Inside);
    if let (Some(first), Some(last)) = (inside_first, inside_last) {
        for ((k, w), m) in kept.iter_mut().zip(&words).zip(table.run(first, last)) {
            *k = w & m;
        }
    }
    for at in candidates.clone().filter(|at| fits[*at] == Fit::Across) {
        let month = table.months[at];
        let cut = |column: &str| -> Vec<&ColumnBound> {
            bounds
                .iter()
                .filter(|b| b.column == column && bound_fit(b, month) == Fit::Across)
                .collect()
        };
        let end_cuts = cut("end_local");
        // Start bounds through the month's keys in start order (a key is the start's second
        // times ID_SPAN plus the ID), end bounds through the end column.
        let (mut low, mut high) = (i64::MIN, i64::MAX);
        for bound in cut("start_local") {
            let (from, to) = bound.inclusive();
            low = low.max(from.saturating_mul(ID_SPAN));
            high = high.min(to.saturating_mul(ID_SPAN).saturating_add(ID_SPAN - 1));
        }
        // An end bound through the start: an event ends `shortest..=longest` after it starts,
        // so only starts within `longest - shortest` of the bound need their end checked;
        // earlier or later ones are in or out by their start alone.
        let (mut sure_from, mut sure_to) = (i64::MIN, i64::MAX);
        for bound in &end_cuts {
            let (from, to) = bound.inclusive();
            if from != i64::MIN {
                low = low.max(from.saturating_sub(longest).saturating_mul(ID_SPAN));
                sure_from = sure_from.max(from.saturating_sub(shortest));
            }
            if to != i64::MAX {
                let last = to.saturating_sub(shortest);
                high = high.min(last.saturating_mul(ID_SPAN).saturating_add(ID_SPAN - 1));
                sure_to = sure_to.min(to.saturating_sub(longest));
            }
        }
        let mut across = vec![0u64; words.len()];
        let mut unsure = vec![0u64; words.len()];
        for position in table.keys_within(at, low, high) {
            let doc = table.doc(position);
            let start = table.key(position).div_euclid(ID_SPAN);
            let into = if (sure_from..=sure_to).contains(&start) {
                &mut across
            } else {
                &mut unsure
            };
            into[(doc / 64) as usize] |= words[(doc / 64) as usize] & (1 << (doc % 64));
        }
        for bound in &end_cuts {
            bound.apply(query.cache(), reader, &mut unsure)?;
        }
        for ((k, a), u) in kept.iter_mut().zip(&across).zip(&unsure) {
            *k |= a | u;
        }
    }
    words = kept;
    Ok(Some(SegmentMatches {
        reader,
        words,
        table,
        candidates,
    }))
}

fn for_each_posting(
    reader: &SegmentReader,
    field: Field,
    info: &TermInfo,
    mut f: impl FnMut(DocId),
) -> tantivy::Result<()> {
    let mut postings = reader
        .inverted_index(field)?
        .read_postings_from_terminfo(info, IndexRecordOption::Basic)?;
    let mut doc = postings.doc();
    while doc != TERMINATED {
        f(doc);
        doc = postings.advance();
    }
    Ok(())
}

/// The start months present in a segment's term dictionary, with their postings' places.
fn segment_months(
    months: &MonthTerms,
    reader: &SegmentReader,
) -> tantivy::Result<BTreeMap<i64, TermInfo>> {
    let inverted = reader.inverted_index(months.field)?;
    let prefix = months.prefix.as_bytes();
    let mut stream = inverted.terms().range().ge(prefix).into_stream()?;
    let mut found = BTreeMap::new();
    while stream.advance() {
        let Some(value) = stream.key().strip_prefix(prefix) else {
            break;
        };
        if let Some(month) = std::str::from_utf8(value)
            .ok()
            .and_then(|v| v.parse::<i64>().ok())
        {
            found.insert(month, stream.value().clone());
        }
    }
    Ok(found)
}

/// The shortest and longest `end_local - start_local` among a segment's events (deleted ones
/// included), in seconds: how far an event's end can lie from its start month.
fn durations(
    query: &FilteredQuery,
    reader: &SegmentReader,
    live: &[SegmentId],
) -> tantivy::Result<(i64, i64)> {
    let words = query
        .cache()
        .pinned(reader.segment_id(), "event durations", live, || {
            let fast = reader.fast_fields();
            let start = fast.i64("start_local")?;
            let end = fast.i64("end_local")?;
            let (mut shortest, mut longest) = (0i64, 0i64);
            for doc in 0..reader.max_doc() {
                if let (Some(s), Some(e)) = (start.first(doc), end.first(doc)) {
                    let d = e.saturating_sub(s);
                    shortest = shortest.min(d);
                    longest = longest.max(d);
                }
            }
            Ok(vec![shortest as u64, longest as u64])
        })?;
    Ok((words[0] as i64, words[1] as i64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::docs::{month_of_seconds, ID_SPAN};
    use crate::index::filters::Plan;
    use rand::{rngs::StdRng, Rng, SeedableRng};
    use std::ops::{Bound, RangeBounds};
    use tantivy::query::TermQuery;
    use tantivy::schema::{Schema, FAST, INDEXED, STRING};
    use tantivy::{doc, Index, Term};

    struct Event {
        id: u64,
        start: i64,
        end: i64,
        even: bool,
    }

    /// Events over three years in three segments (some deleted, some hidden), and every page of a few plans
    /// compared with the matches ordered by hand: bounds on either date, inside, across and
    /// outside months, pages before, across and past the end, lists small and large.
    #[test]
    fn pages_and_totals_are_those_of_ordering_every_match() {
        let mut schema = Schema::builder();
        let keys = schema.add_text_field("keys", STRING);
        let id = schema.add_u64_field("id", INDEXED | FAST);
        let start_local = schema.add_i64_field("start_local", FAST);
        let end_local = schema.add_i64_field("end_local", FAST);
        let order_start = schema.add_i64_field("order_start", FAST);
        let index = Index::create_in_ram(schema.build());
        let mut writer: tantivy::IndexWriter = index.writer(15_000_000).unwrap();
        let mut rng = StdRng::seed_from_u64(7);
        let first = 1_767_225_600; // 2026-01-01
        let mut events = Vec::new();
        for n in 0..9000u64 {
            let start = first + rng.gen_range(0..3 * 365 * 86_400);
            // Mostly evenings, some lasting days, one lasting half a year.
            let length = match n {
                4000 => 180 * 86_400,
                _ if n % 17 == 0 => rng.gen_range(86_400..4 * 86_400),
                _ => rng.gen_range(3_600..4 * 3_600),
            };
            let event = Event {
                id: n,
                start,
                end: start + length,
                even: n % 2 == 0,
            };
            writer
                .add_document(doc!(
                    keys => format!("month:{}", month_of_seconds(start)),
                    keys => if event.even { "tag:even" } else { "tag:odd" },
                    id => n,
                    start_local => event.start,
                    end_local => event.end,
                    order_start => event.start * ID_SPAN + n as i64,
                ))
                .unwrap();
            events.push(event);
            if n == 5000 || n == 7000 {
                writer.commit().unwrap();
            }
        }
        for n in (0..9000u64).step_by(11) {
            writer.delete_term(Term::from_field_u64(id, n));
        }
        writer.commit().unwrap();
        let committed = index.reader().unwrap().searcher();
        assert!(committed.segment_readers().len() > 1);
        // Newer writes replace every thirteenth event (they are hidden, as the overlay hides
        // the committed documents of the records it holds).
        let mut hidden = super::super::snapshot::Hidden::new();
        for reader in committed.segment_readers() {
            let ids = reader.fast_fields().u64("id").unwrap();
            let docs: Vec<DocId> = (0..reader.max_doc())
                .filter(|doc| ids.first(*doc).is_some_and(|n| n % 13 == 0))
                .collect();
            hidden.insert(reader.segment_id(), Arc::new(docs));
        }
        let searcher = Snapshot::new(committed, None, Arc::new(hidden), 0);
        let months = MonthTerms {
            field: keys,
            prefix: "month:".into(),
        };
        let cache = Arc::new(FilterCache::new(64 << 20));
        let day = 86_400;
        let (low, high) = {
            let (a, b) = (&events[1234], &events[4321]);
            if a.start < b.start {
                (a, b)
            } else {
                (b, a)
            }
        };
        let long = &events[4000];
        type Bounds = Vec<(&'static str, Bound<i64>, Bound<i64>)>;
        let plans: Vec<(Option<bool>, Bounds)> = vec![
            (None, vec![]),
            (Some(true), vec![]),
            (
                None,
                vec![
                    (
                        "start_local",
                        Bound::Included(first + 400 * day),
                        Bound::Unbounded,
                    ),
                    (
                        "end_local",
                        Bound::Unbounded,
                        Bound::Included(first + 800 * day),
                    ),
                ],
            ),
            (
                Some(false),
                vec![(
                    "end_local",
                    Bound::Excluded(first + 500 * day + 7),
                    Bound::Unbounded,
                )],
            ),
            (
                Some(true),
                vec![
                    (
                        "start_local",
                        Bound::Excluded(first + 33 * day),
                        Bound::Unbounded,
                    ),
                    (
                        "start_local",
                        Bound::Unbounded,
                        Bound::Excluded(first + 61 * day),
                    ),
                ],
            ),
            (
                None,
                vec![("end_local", Bound::Unbounded, Bound::Excluded(first - day))],
            ),
            // End bounds only the half-year event reaches across months from its start.
            (
                None,
                vec![(
                    "end_local",
                    Bound::Excluded(long.start + 170 * day),
                    Bound::Unbounded,
                )],
            ),
            (
                Some(true),
                vec![(
                    "end_local",
                    Bound::Included(long.start + 100 * day),
                    Bound::Included(long.end),
                )],
            ),
            // Bounds on events' very starts and ends: included and excluded.
            (
                None,
                vec![(
                    "start_local",
                    Bound::Included(low.start),
                    Bound::Included(high.start),
                )],
            ),
            (
                Some(true),
                vec![
                    (
                        "start_local",
                        Bound::Excluded(low.start),
                        Bound::Excluded(high.start),
                    ),
                    (
                        "end_local",
                        Bound::Excluded(low.end),
                        Bound::Excluded(high.end),
                    ),
                ],
            ),
        ];
        for (even, bounds) in plans {
            let mut plan = Plan::default();
            if let Some(even) = even {
                let tag = if even { "tag:even" } else { "tag:odd" };
                plan.filter(Box::new(TermQuery::new(
                    Term::from_field_text(keys, tag),
                    IndexRecordOption::Basic,
                )));
            }
            for (column, lower, upper) in &bounds {
                plan.bound(column, *lower, *upper);
            }
            let query = plan.into_query(&cache);
            let mut expected: Vec<&Event> = events
                .iter()
                .filter(|e| e.id % 11 != 0 && e.id % 13 != 0)
                .filter(|e| even.is_none_or(|even| e.even == even))
                .filter(|e| {
                    bounds.iter().all(|(column, lower, upper)| {
                        let value = if *column == "start_local" {
                            e.start
                        } else {
                            e.end
                        };
                        (*lower, *upper).contains(&value)
                    })
                })
                .collect();
            expected.sort_by_key(|e| (e.start, e.id));
            let expected: Vec<u64> = expected.iter().map(|e| e.id).collect();
            for (offset, limit) in [(0, 10), (0, 50), (5, 3), (1990, 40), (4000, 25)]
                .into_iter()
                .chain([
                    (expected.len().saturating_sub(3), 10),
                    (expected.len() + 5, 10),
                ])
            {
                let hits = page(&query, &months, &searcher, offset, limit)
                    .unwrap()
                    .expect("a plan of filters and date bounds");
                assert_eq!(hits.total, expected.len(), "{bounds:?}");
                let want: Vec<u64> = expected.iter().skip(offset).take(limit).copied().collect();
                assert_eq!(hits.ids, want, "{even:?} {bounds:?} at {offset}+{limit}");
            }
        }
    }
}
