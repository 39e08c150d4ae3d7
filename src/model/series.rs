//! Recurring events. A series is an event record (its fields, and its first occurrence's
//! dates) with a [`Series`] beside it: the rule and the occurrences it has given. Each
//! occurrence is an event record of its own, written with the series (see `service::series`),
//! so that every list, window, filter and count reads it like any event.

use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};

/// The rule of a series and its occurrences.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// For a rule that never ends: the wall clock up to which its occurrences exist. First, so
    /// that [`SeriesHorizon`] reads it alone.
    pub horizon: Option<NaiveDateTime>,
    /// The `recurrence` lines as written (RRULE, RDATE, EXDATE).
    pub lines: Vec<String>,
    /// Every occurrence the rule gives, by original start.
    pub occurrences: Vec<Occurrence>,
}

/// The first field of a stored [`Series`]: what the daily extension of never-ending rules
/// looks at.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct SeriesHorizon {
    pub horizon: Option<NaiveDateTime>,
}

/// One occurrence of a series: its ID is kept as long as the rule gives its original start.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Occurrence {
    /// The start (UTC) the rule gives it: RFC 5545's RECURRENCE-ID.
    pub original_start_utc: NaiveDateTime,
    pub id: u64,
    pub state: OccurrenceState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum OccurrenceState {
    /// The series' fields at the rule's dates.
    Plain,
    /// Changed on its own: its record is kept as written when the series changes.
    Exception,
    /// Cancelled: its record reads like a trashed event.
    Cancelled,
}

impl OccurrenceState {
    pub const ALL: [OccurrenceState; 3] = [
        OccurrenceState::Plain,
        OccurrenceState::Exception,
        OccurrenceState::Cancelled,
    ];

    /// The name in the export form.
    pub fn as_str(self) -> &'static str {
        match self {
            OccurrenceState::Plain => "plain",
            OccurrenceState::Exception => "exception",
            OccurrenceState::Cancelled => "cancelled",
        }
    }

    pub fn parse(name: &str) -> Option<OccurrenceState> {
        Self::ALL.into_iter().find(|s| s.as_str() == name)
    }
}

/// What an occurrence's ID names.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OccurrenceOf {
    pub series: u64,
    pub original_start_utc: NaiveDateTime,
}
