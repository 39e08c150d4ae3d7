//! The exact distance check of the geographic filter (docs/api.md, "Listing events"),
//! evaluated on the coordinates' fast fields of the venues whose documents reach it.

use tantivy::query::doc_predicate_query::{DocPredicateQuery, FunctionPredicate};
use tantivy::query::Query;
use tantivy::{DocId, SegmentReader};

/// Mean Earth radius.
const EARTH_KM: f64 = 6371.0088;

/// Great-circle distance (haversine).
pub(crate) fn haversine_km(lat1: f64, lng1: f64, lat2: f64, lng2: f64) -> f64 {
    let (p1, p2) = (lat1.to_radians(), lat2.to_radians());
    let dp = (lat2 - lat1).to_radians();
    let dl = (lng2 - lng1).to_radians();
    let a = (dp / 2.0).sin().powi(2) + p1.cos() * p2.cos() * (dl / 2.0).sin().powi(2);
    2.0 * EARTH_KM * a.sqrt().asin()
}

pub(crate) fn within(lat: f64, lng: f64, radius_km: f64) -> Box<dyn Query> {
    // A point is at least its difference in latitude away along a meridian: most venues of a
    // calendar are ruled out by that subtraction, before the trigonometry.
    let max_lat_degrees = (radius_km / EARTH_KM).to_degrees();
    let predicate = FunctionPredicate::from(move |segment: &SegmentReader| {
        let lats = segment.fast_fields().f64("geo_lat")?;
        let lngs = segment.fast_fields().f64("geo_lng")?;
        Ok(move |doc: DocId| match (lats.first(doc), lngs.first(doc)) {
            (Some(a), Some(b)) => {
                (a - lat).abs() <= max_lat_degrees && haversine_km(lat, lng, a, b) <= radius_km
            }
            _ => false,
        })
    });
    let query: DocPredicateQuery = predicate.into();
    Box::new(query)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porto_to_lisbon_is_about_274_km() {
        assert!((haversine_km(41.15, -8.61, 38.72, -9.14) - 274.0).abs() < 5.0);
    }
}
