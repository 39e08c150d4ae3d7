//! How the serving index merges its segments: small ones in pairs, large ones as tantivy's
//! default policy does (used by the index writer of `build` and the segments of `apply`).

/// Segments below this many documents form the lowest merge level of the serving index.
/// Every few acknowledged writes commit a segment of a few documents; with tantivy's default
/// (10,000) each merge of those also rewrote the largest segment under that size, so at a few
/// thousand events every eighth commit paid for rewriting the whole index.
const LIVE_MIN_LAYER_DOCS: u32 = 100;

/// Segments up to this many documents are merged as soon as two of about the same size exist
/// (larger ones as tantivy does by default, eight at a time). Every read visits every segment,
/// and under a stream of writes tantivy's default let a dozen small segments pile up beside
/// the large ones, which made each read a third dearer; merging small segments in pairs costs
/// the writes little (see docs/performance.md, "Writes").
const SMALL_SEGMENT_DOCS: u32 = 10_000;

/// How the serving index merges its segments: small ones in pairs, large ones as tantivy's
/// default policy does.
#[derive(Debug)]
pub(super) struct LiveMergePolicy {
    small: tantivy::indexer::LogMergePolicy,
    large: tantivy::indexer::LogMergePolicy,
}

pub(super) fn live_merge_policy() -> LiveMergePolicy {
    let mut small = tantivy::indexer::LogMergePolicy::default();
    small.set_min_layer_size(LIVE_MIN_LAYER_DOCS);
    small.set_min_num_segments(2);
    LiveMergePolicy {
        small,
        large: tantivy::indexer::LogMergePolicy::default(),
    }
}

impl tantivy::indexer::MergePolicy for LiveMergePolicy {
    fn compute_merge_candidates(
        &self,
        segments: &[tantivy::index::SegmentMeta],
    ) -> Vec<tantivy::indexer::MergeCandidate> {
        let (small, large): (Vec<_>, Vec<_>) = segments
            .iter()
            .cloned()
            .partition(|segment| segment.num_docs() <= SMALL_SEGMENT_DOCS);
        let mut candidates = self.small.compute_merge_candidates(&small);
        candidates.extend(self.large.compute_merge_candidates(&large));
        candidates
    }
}
