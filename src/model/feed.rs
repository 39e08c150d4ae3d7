//! Events copied from iCalendar feeds (`almanac import --from` a feed): the store keeps, by
//! feed and UID, the event each UID became and a fingerprint of what the feed said of it, so
//! that a later run updates only what changed and a mirror knows what left the feed.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeedItem {
    /// The event (a series when the UID repeats).
    pub event: u64,
    /// A hash of the UID's components as the feed wrote them.
    pub fingerprint: u64,
}
