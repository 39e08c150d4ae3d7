//! A collector of fast-field values over the matching documents.

use super::*;

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
