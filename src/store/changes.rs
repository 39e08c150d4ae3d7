//! Changes: every mutation of a write transaction as a value, so that a transaction can be
//! recorded, shipped and applied again elsewhere (the cluster log, see `crate::cluster`). A
//! change names one row of one table and its new value, or its removal; it knows nothing of
//! events or venues. The outbox and the applied position are local to each data directory and
//! are never changes.

use crate::model::{Kind, Language};
use serde::{Deserialize, Serialize};

/// One row of the canonical tables, and what it becomes (`None`: removed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Change {
    /// An ID sequence's last drawn value.
    Sequence {
        key: String,
        value: u64,
    },
    /// A user, codec-encoded.
    User {
        id: u64,
        value: Option<Vec<u8>>,
    },
    /// A lower-cased user name and its user.
    UserName {
        name: String,
        id: Option<u64>,
    },
    /// An event, venue, organizer, category or tag, codec-encoded.
    Record {
        kind: Kind,
        id: u64,
        value: Option<Vec<u8>>,
    },
    Slug {
        kind: Kind,
        language: Language,
        slug: String,
        id: Option<u64>,
    },
    /// An image record, codec-encoded.
    Image {
        id: u64,
        value: Vec<u8>,
    },
    ImageUrl {
        url: String,
        id: u64,
    },
    /// A translation group's member in one language.
    Group {
        kind: Kind,
        group: u64,
        language: Language,
        id: Option<u64>,
    },
    /// A series' rule and occurrences (its event's ID), codec-encoded.
    Series {
        id: u64,
        value: Option<Vec<u8>>,
    },
    /// The series and original start an occurrence's ID names, codec-encoded.
    Occurrence {
        id: u64,
        value: Option<Vec<u8>>,
    },
    /// An event's revision.
    Revision {
        id: u64,
        value: Option<u64>,
    },
    /// An editor's session, by the hash of its token, codec-encoded.
    Session {
        key: String,
        value: Option<Vec<u8>>,
    },
    /// An event copied from an iCalendar feed, by feed and UID, codec-encoded.
    FeedItem {
        key: String,
        value: Option<Vec<u8>>,
    },
    /// Where the copy of another almanac stands in its change feed, by source.
    SyncToken {
        source: String,
        token: Option<String>,
    },
    /// A webhook endpoint, codec-encoded.
    Webhook {
        id: u64,
        value: Option<Vec<u8>>,
    },
    /// A change journal entry, by position, codec-encoded.
    Journal {
        seq: u64,
        value: Option<Vec<u8>>,
    },
}

impl Change {
    /// The row this change is about, as one string: the key of the cluster's snapshot table,
    /// where each row keeps its latest change.
    pub(crate) fn row(&self) -> String {
        match self {
            Change::Sequence { key, .. } => format!("sequence/{key}"),
            Change::User { id, .. } => format!("user/{id}"),
            Change::UserName { name, .. } => format!("user-name/{name}"),
            Change::Record { kind, id, .. } => format!("record/{}/{id}", kind.name()),
            Change::Slug {
                kind,
                language,
                slug,
                ..
            } => format!("slug/{}/{}/{slug}", kind.name(), language.code()),
            Change::Image { id, .. } => format!("image/{id}"),
            Change::ImageUrl { url, .. } => format!("image-url/{url}"),
            Change::Group {
                kind,
                group,
                language,
                ..
            } => format!("group/{}/{group}/{}", kind.name(), language.code()),
            Change::Series { id, .. } => format!("series/{id}"),
            Change::Occurrence { id, .. } => format!("occurrence/{id}"),
            Change::Revision { id, .. } => format!("revision/{id}"),
            Change::Session { key, .. } => format!("session/{key}"),
            Change::FeedItem { key, .. } => format!("feed-item/{key}"),
            Change::Journal { seq, .. } => format!("journal/{seq}"),
            Change::SyncToken { source, .. } => format!("sync-token/{source}"),
            Change::Webhook { id, .. } => format!("webhook/{id}"),
        }
    }

    /// Whether the row is removed by this change (the snapshot then drops it).
    pub(crate) fn removes(&self) -> bool {
        matches!(
            self,
            Change::User { value: None, .. }
                | Change::UserName { id: None, .. }
                | Change::Record { value: None, .. }
                | Change::Slug { id: None, .. }
                | Change::Group { id: None, .. }
                | Change::Series { value: None, .. }
                | Change::Occurrence { value: None, .. }
                | Change::Revision { value: None, .. }
                | Change::Session { value: None, .. }
                | Change::FeedItem { value: None, .. }
                | Change::Journal { value: None, .. }
                | Change::SyncToken { token: None, .. }
                | Change::Webhook { value: None, .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_name_one_row_each_and_removals_are_told() {
        let slug = Change::Slug {
            kind: Kind::Venue,
            language: Language::Es,
            slug: "sala".into(),
            id: Some(4),
        };
        assert_eq!(slug.row(), "slug/venue/es/sala");
        assert!(!slug.removes());
        let gone = Change::Record {
            kind: Kind::Event,
            id: 9,
            value: None,
        };
        assert_eq!(gone.row(), "record/event/9");
        assert!(gone.removes());
        let bytes = crate::store::codec::encode(&vec![slug.clone(), gone.clone()]);
        let back: Vec<Change> = crate::store::codec::decode(&bytes).unwrap();
        assert_eq!(back, vec![slug, gone]);
    }
}
