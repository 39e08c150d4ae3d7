//! The exact distance check of the geographic filter (events.md §2.7), evaluated on the
//! coordinates' fast fields of the documents the bounding box lets through.

use super::planner::haversine_km;
use tantivy::query::doc_predicate_query::{DocPredicateQuery, FunctionPredicate};
use tantivy::query::Query;
use tantivy::{DocId, SegmentReader};

pub fn within(lat: f64, lng: f64, radius_km: f64) -> Box<dyn Query> {
    let predicate = FunctionPredicate::from(move |segment: &SegmentReader| {
        let lats = segment.fast_fields().f64("geo_lat")?;
        let lngs = segment.fast_fields().f64("geo_lng")?;
        Ok(move |doc: DocId| match (lats.first(doc), lngs.first(doc)) {
            (Some(a), Some(b)) => haversine_km(lat, lng, a, b) <= radius_km,
            _ => false,
        })
    });
    let query: DocPredicateQuery = predicate.into();
    Box::new(query)
}
