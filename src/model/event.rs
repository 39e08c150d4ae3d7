//! The event record.

use super::post::{PostMeta, PostRecord};
use super::Kind;
use crate::values::timezone::Zone;
use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};

/// An event. Local dates are wall clocks in `timezone`; the UTC instants are
/// derived from them at every save.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub post: PostMeta,
    #[serde(with = "crate::store::codec::date_time")]
    pub start_local: NaiveDateTime,
    #[serde(with = "crate::store::codec::date_time")]
    pub end_local: NaiveDateTime,
    #[serde(with = "crate::store::codec::date_time")]
    pub start_utc: NaiveDateTime,
    #[serde(with = "crate::store::codec::date_time")]
    pub end_utc: NaiveDateTime,
    /// Stored spelling: an IANA name, `UTC`, or `UTC±offset`.
    pub timezone: String,
    /// The zone's abbreviation at the local start, computed at save time.
    pub timezone_abbr: String,
    pub all_day: bool,
    pub cost: crate::values::cost::Cost,
    pub website: String,
    pub show_map: bool,
    pub show_map_link: bool,
    pub hide_from_listings: bool,
    pub sticky: bool,
    pub featured: bool,
    pub ticketed: bool,
    pub post_parent: u64,
    pub categories: Vec<u64>,
    pub tags: Vec<u64>,
    pub venue: Option<u64>,
    pub organizers: Vec<u64>,
    pub password: Option<String>,
}

impl Event {
    /// Stores `zone` and derives the UTC instants and the zone's abbreviation at the start
    /// from the local wall clocks, as every save does.
    pub(crate) fn place_in(&mut self, zone: &Zone) {
        self.timezone = zone.name();
        self.start_utc = zone.to_utc(self.start_local).naive_utc();
        self.end_utc = zone.to_utc(self.end_local).naive_utc();
        self.timezone_abbr = zone.abbreviation(zone.to_utc(self.start_local));
    }
}

impl PostRecord for Event {
    const KIND: Kind = Kind::Event;
    fn meta(&self) -> &PostMeta {
        &self.post
    }
    fn meta_mut(&mut self) -> &mut PostMeta {
        &mut self.post
    }
}
