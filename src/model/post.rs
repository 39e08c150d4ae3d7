//! Records of the post kinds (events, venues, organizers) and image records.

use super::{Kind, Language, Status};
use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};

/// What every post-kind record (event, venue, organizer) has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PostMeta {
    pub id: u64,
    pub language: Language,
    /// Translation group: the ID of the group's founding record.
    pub group: u64,
    /// The owner's user ID.
    pub author: u64,
    /// The stored status; a `Future` whose date has passed is `Publish` in effect.
    pub status: Status,
    /// The status before trashing, for the permission rules and for restoring.
    pub status_before_trash: Option<Status>,
    pub slug: String,
    /// The slug before trashing (`slug` then ends in `__trashed`).
    pub slug_before_trash: Option<String>,
    /// Publication date (UTC; the site time zone is UTC, so `date` equals it unless both
    /// were written explicitly).
    #[serde(with = "crate::store::codec::date_time")]
    pub date: NaiveDateTime,
    #[serde(with = "crate::store::codec::date_time")]
    pub date_utc: NaiveDateTime,
    #[serde(with = "crate::store::codec::date_time")]
    pub modified_utc: NaiveDateTime,
    /// The name of a venue or organizer, the title of an event.
    pub title: String,
    pub description: String,
    pub excerpt: String,
    pub image: Option<u64>,
}

impl PostMeta {
    /// The effective status at `now`: scheduled records whose date has come are
    /// published.
    pub(crate) fn effective_status(&self, now: NaiveDateTime) -> Status {
        match self.status {
            Status::Future if self.date_utc <= now => Status::Publish,
            status => status,
        }
    }
}

/// A venue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Venue {
    pub post: PostMeta,
    pub address: String,
    pub city: String,
    pub country: String,
    pub province: String,
    pub state: String,
    pub zip: String,
    pub phone: String,
    pub stateprovince: String,
    pub website: String,
    pub show_map: bool,
    pub show_map_link: bool,
    pub geo: Option<GeoPoint>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GeoPoint {
    pub lat: f64,
    pub lng: f64,
}

/// An organizer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Organizer {
    pub post: PostMeta,
    pub phone: String,
    pub website: String,
    pub email: String,
}

/// An image record: a URL with an ID from the posts sequence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Image {
    pub id: u64,
    pub url: String,
}

/// A record of one of the post kinds, as the generic post machinery sees it.
pub trait PostRecord: Serialize + serde::de::DeserializeOwned + Clone + Send + 'static {
    const KIND: Kind;
    fn meta(&self) -> &PostMeta;
    fn meta_mut(&mut self) -> &mut PostMeta;
}

impl PostRecord for Venue {
    const KIND: Kind = Kind::Venue;
    fn meta(&self) -> &PostMeta {
        &self.post
    }
    fn meta_mut(&mut self) -> &mut PostMeta {
        &mut self.post
    }
}

impl PostRecord for Organizer {
    const KIND: Kind = Kind::Organizer;
    fn meta(&self) -> &PostMeta {
        &self.post
    }
    fn meta_mut(&mut self) -> &mut PostMeta {
        &mut self.post
    }
}
