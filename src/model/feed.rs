//! Events copied from iCalendar feeds (`almanac import --from` a feed): the store keeps, by
//! feed and UID, the event each UID became and a fingerprint of what the feed said of it, so
//! that a later run updates only what changed and a mirror knows what left the feed.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeedItem {
    /// The event (a series when the UID repeats).
    pub event: u64,
    /// A hash of what the feed said of the UID.
    pub fingerprint: u64,
    /// The RECURRENCE-IDs (UTC) of the instances the feed changed or cancelled: one that
    /// leaves the feed follows its series again.
    pub instances: Vec<chrono::NaiveDateTime>,
}

/// What a feed's server said of its last answer read whole (`ETag`, `Last-Modified`), to ask
/// next time whether it changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeedValidators {
    pub etag: Option<String>,
    pub last_modified: Option<String>,
}
