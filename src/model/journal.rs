//! The change journal: for every event, venue, organizer, category and tag, its latest
//! change — what happened to it and when — at a position that orders all changes of the
//! calendar (the change feed, `GET /changes`, reads it). A record changed again leaves its
//! older entry behind, so the journal holds one entry per record plus the deletions of the
//! retention period.

use super::{Kind, Language};
use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};

/// What happened to a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Action {
    Created,
    Updated,
    Trashed,
    Restored,
    Deleted,
}

impl Action {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Action::Created => "created",
            Action::Updated => "updated",
            Action::Trashed => "trashed",
            Action::Restored => "restored",
            Action::Deleted => "deleted",
        }
    }

    /// Two changes of one record in one write, told as one: a record created in it stays
    /// created unless it is deleted again; otherwise the later change tells.
    pub(crate) fn then(self, later: Action) -> Action {
        match (self, later) {
            (Action::Created, Action::Deleted) => Action::Deleted,
            (Action::Created, _) => Action::Created,
            (_, later) => later,
        }
    }
}

/// One entry of the journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Journaled {
    pub kind: Kind,
    pub id: u64,
    /// The record's language (before its deletion, for a deleted one).
    pub language: Language,
    pub action: Action,
    /// When it happened (UTC).
    pub at: NaiveDateTime,
}
