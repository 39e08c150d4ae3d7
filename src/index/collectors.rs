//! A collector of fast-field values over the matching documents.

use super::*;
use tantivy::columnar::Column;

/// Every value of a u64 fast field over the documents of `live` matching `query`.
pub(super) fn values_in(
    live: &Live,
    query: &dyn Query,
    field: &'static str,
) -> IndexResult<HashSet<u64>> {
    Ok(live.current().search(query, &ValueCollector { field })?)
}

/// Collects the values of a (multi-valued) u64 fast field over the matching documents.
pub(super) struct ValueCollector {
    pub(super) field: &'static str,
}

pub(super) struct SegmentValueCollector {
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

/// What a calendar shows of a run of days: for each day, the events on it (those that start
/// before the day ends and end after it starts, by their wall clocks) counted, and the first
/// few of them in start order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct DayHits {
    /// Per day: the first events' IDs in start order, and how many events the day holds.
    pub days: Vec<(Vec<u64>, usize)>,
}

pub(super) const DAY_SECONDS: i64 = 86_400;

/// Collects [`DayHits`] for `days` days from `first` (a day's start, as wall-clock seconds),
/// keeping `per_day` events of each.
pub(super) struct DayCollector {
    pub(super) first: i64,
    pub(super) days: usize,
    pub(super) per_day: usize,
    /// Where the segments' opened columns are kept.
    pub(super) columns: Arc<super::filters::FilterCache>,
}

pub(super) struct SegmentDayCollector {
    /// The start key (`docs::sort_key`: the start's seconds, then the ID) and the end; none
    /// in a segment without events.
    columns: Option<(Column<i64>, Column<i64>)>,
    first: i64,
    per_day: usize,
    /// Per day: the smallest start keys seen (sorted) and the count.
    days: Vec<(Vec<i64>, usize)>,
}

impl Collector for DayCollector {
    type Fruit = DayHits;
    type Child = SegmentDayCollector;

    fn for_segment(&self, _: u32, segment: &SegmentReader) -> tantivy::Result<SegmentDayCollector> {
        Ok(SegmentDayCollector {
            columns: self
                .columns
                .i64_column(segment, "order_start")
                .and_then(|order| Ok((order, self.columns.i64_column(segment, "end_local")?)))
                .ok(),
            first: self.first,
            per_day: self.per_day,
            days: vec![(Vec::new(), 0); self.days],
        })
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(&self, fruits: Vec<Vec<(Vec<i64>, usize)>>) -> tantivy::Result<DayHits> {
        let mut days: Vec<(Vec<i64>, usize)> = vec![(Vec::new(), 0); self.days];
        for fruit in fruits {
            for (day, (keys, count)) in days.iter_mut().zip(fruit) {
                day.0.extend(keys);
                day.1 += count;
            }
        }
        Ok(DayHits {
            days: days
                .into_iter()
                .map(|(mut keys, count)| {
                    keys.sort_unstable();
                    keys.truncate(self.per_day);
                    let ids = keys
                        .into_iter()
                        .map(|k| k.rem_euclid(super::docs::ID_SPAN) as u64)
                        .collect();
                    (ids, count)
                })
                .collect(),
        })
    }
}

impl SegmentDayCollector {
    /// The first and last days (indexes) an event from `start` to `end` is on: from the one
    /// its start falls in (or the first) to the last one it ends after the start of; none
    /// when it ends before the first day or starts after the last.
    fn days_of(&self, start: i64, end: i64) -> Option<(usize, usize)> {
        let first_day = (start - self.first).div_euclid(DAY_SECONDS).max(0);
        let last_day = (end - 1 - self.first)
            .div_euclid(DAY_SECONDS)
            .min(self.days.len() as i64 - 1);
        (first_day <= last_day).then_some((first_day as usize, last_day as usize))
    }

    /// Counts an event on days `first..=last` and keeps its start key among each day's first
    /// ones.
    fn place(&mut self, (first, last): (usize, usize), order: i64) {
        let per_day = self.per_day;
        for (keys, count) in &mut self.days[first..=last] {
            *count += 1;
            if keys.len() == per_day && keys.last().is_some_and(|last| order < *last) {
                keys.pop();
            }
            if keys.len() < per_day {
                let at = keys.partition_point(|k| *k < order);
                keys.insert(at, order);
            }
        }
    }
}

impl SegmentCollector for SegmentDayCollector {
    type Fruit = Vec<(Vec<i64>, usize)>;

    fn collect(&mut self, doc: DocId, _: Score) {
        self.collect_block(&[doc]);
    }

    /// Reads a block's columns a column at a time (one dynamic call per block each): the
    /// start key for all (the start is its seconds), the end only for those starting before
    /// the last day ends.
    fn collect_block(&mut self, docs: &[DocId]) {
        let Some((order, end)) = self.columns.clone() else {
            return;
        };
        let window_end = self.first + DAY_SECONDS * self.days.len() as i64;
        for docs in docs.chunks(BLOCK) {
            let mut values = [None; BLOCK];
            order.first_vals(docs, &mut values[..docs.len()]);
            let mut near = [0; BLOCK];
            let mut keys = [0; BLOCK];
            let mut n = 0;
            for (doc, key) in docs.iter().zip(values) {
                let Some(key) = key else { continue };
                if key.div_euclid(super::docs::ID_SPAN) < window_end {
                    (near[n], keys[n]) = (*doc, key);
                    n += 1;
                }
            }
            // (`first_vals` leaves an output alone when the document has no value.)
            values[..n].fill(None);
            end.first_vals(&near[..n], &mut values[..n]);
            for (key, end) in keys[..n].iter().zip(values) {
                let start = key.div_euclid(super::docs::ID_SPAN);
                if let Some(days) = end.and_then(|end| self.days_of(start, end)) {
                    self.place(days, *key);
                }
            }
        }
    }

    fn harvest(self) -> Vec<(Vec<i64>, usize)> {
        self.days
    }
}

/// Documents read per column call.
const BLOCK: usize = tantivy::COLLECT_BLOCK_BUFFER_LEN;
