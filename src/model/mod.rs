//! Plain domain types shared by every layer.

use serde::{Deserialize, Serialize};
use std::fmt;

pub use crate::values::language::Language;

/// The five resource kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Kind {
    Event,
    Venue,
    Organizer,
    Category,
    Tag,
}

impl Kind {
    pub(crate) const ALL: [Kind; 5] = [
        Kind::Event,
        Kind::Venue,
        Kind::Organizer,
        Kind::Category,
        Kind::Tag,
    ];

    /// Events, venues and organizers share one ID sequence; categories and tags another.
    pub(crate) fn sequence(self) -> Sequence {
        match self {
            Kind::Event | Kind::Venue | Kind::Organizer => Sequence::Posts,
            Kind::Category | Kind::Tag => Sequence::Terms,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Event => "event",
            Kind::Venue => "venue",
            Kind::Organizer => "organizer",
            Kind::Category => "category",
            Kind::Tag => "tag",
        }
    }

    /// The API's collection of the kind (`events`, `categories`, …).
    pub(crate) fn collection(self) -> &'static str {
        match self {
            Kind::Event => "events",
            Kind::Venue => "venues",
            Kind::Organizer => "organizers",
            Kind::Category => "categories",
            Kind::Tag => "tags",
        }
    }

    /// The kind of a [`Kind::name`].
    pub(crate) fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// The ID sequences of the store. Image records also draw from `Posts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Sequence {
    Posts,
    Terms,
    Users,
    /// Positions in the change journal (`crate::model::journal`).
    Changes,
    /// The newest journal position whose deletion was forgotten (retention): a change
    /// feed token before it is expired. Only raised, like an ID sequence.
    ChangesHorizon,
    Webhooks,
}

impl Sequence {
    pub(crate) fn key(self) -> &'static str {
        match self {
            Sequence::Posts => "seq.posts",
            Sequence::Terms => "seq.terms",
            Sequence::Users => "seq.users",
            Sequence::Changes => "seq.changes",
            Sequence::ChangesHorizon => "changes.horizon",
            Sequence::Webhooks => "seq.webhooks",
        }
    }
}

/// Post statuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Status {
    Publish,
    Future,
    Draft,
    Pending,
    Private,
    Trash,
}

impl Status {
    pub(crate) const ALL: [Status; 6] = [
        Status::Publish,
        Status::Future,
        Status::Draft,
        Status::Pending,
        Status::Private,
        Status::Trash,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Status::Publish => "publish",
            Status::Future => "future",
            Status::Draft => "draft",
            Status::Pending => "pending",
            Status::Private => "private",
            Status::Trash => "trash",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|st| st.as_str() == s)
    }
}

/// User roles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Role {
    Administrator,
    Editor,
    Author,
    Contributor,
    Subscriber,
}

impl Role {
    pub(crate) const ALL: [Role; 5] = [
        Role::Administrator,
        Role::Editor,
        Role::Author,
        Role::Contributor,
        Role::Subscriber,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Role::Administrator => "administrator",
            Role::Editor => "editor",
            Role::Author => "author",
            Role::Contributor => "contributor",
            Role::Subscriber => "subscriber",
        }
    }

    /// Exact, lower-case role names only.
    pub(crate) fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A user account. The password is only ever held as an argon2id PHC string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct User {
    pub id: u64,
    pub name: String,
    pub role: Role,
    pub password_hash: String,
}

pub(crate) mod event;
pub mod feed;
pub mod journal;
pub mod post;
pub mod series;
pub mod session;
pub mod term;
pub mod webhook;
