//! Bulk export and import of calendars (`almanac export`, `almanac import FILE`).
//!
//! The format is JSON lines, one record per line:
//! `{"resource": "<collection>", "data": <representation>}` where `<collection>` is the
//! record's REST collection (`categories`, `tags`, `venues`, `organizers`, `events`) and
//! `<representation>` is what an administrator's `GET` of the single record returns in its
//! own language (without `json_ld`), with four changes that make a dump lossless:
//! `description` and `excerpt` hold the stored source text (not the rendered paragraphs),
//! `status` is the stored status (a due `future` record stays `future`), an event's
//! `cost_details.values` are the cost values as stored (not their sanitized tokens), and a
//! password-protected event carries its `password` (an export is an operator's backup, not
//! a client's view). A series carries its `occurrences` (ID, original start, state) and is
//! followed by its exceptions (with `series_id` and `recurrence_id`); its plain and cancelled
//! occurrences are its fields at the rule's dates and are not written. The same form answers `context=export` on the read routes
//! (`render::export_post`, `render::export_event`). Lines are ordered so that every reference points backwards: categories
//! (parents first), tags, venues, organizers, events, then what iCalendar mirrors know of
//! their feeds (`feed_sources`, `feed_items`, see [`FEED_LINES`]).
//!
//! Import keeps IDs, slugs, dates, statuses, authors and translation groups. Each line is
//! validated on its own against the store and the lines before it; a refused line is
//! reported and leaves nothing behind, the others are loaded. Keys of `data` that import does
//! not read (derived date details, URLs, global IDs) are skipped unread; a key it reads,
//! given twice, refuses the line. Lines are written in batches,
//! one redb transaction per batch; the indexer applies what the batches committed while the
//! next batch is read (at most one index commit per batch), and the import ends once the
//! index holds everything.

mod demo;
mod export;
pub(crate) mod ical;
mod import;
mod remote;

pub(crate) use demo::load_demo;
pub(crate) use export::export;
pub(crate) use import::{import, ImportError, ImportOptions, ImportSummary, Rejection};
pub(crate) use remote::{pull, Connection, PullEvent, PullOptions};

use crate::model::Kind;

/// The REST collection a line's record belongs to.
fn collection(kind: Kind) -> &'static str {
    kind.collection()
}

fn kind_of_collection(name: &str) -> Option<Kind> {
    Kind::ALL.into_iter().find(|k| collection(*k) == name)
}

/// Counts per kind, in the order lines are written.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KindCounts {
    pub categories: u64,
    pub tags: u64,
    pub venues: u64,
    pub organizers: u64,
    pub events: u64,
    /// Lines of what iCalendar mirrors know of their feeds (see [`FEED_LINES`]).
    pub feed_lines: u64,
}

impl KindCounts {
    fn add(&mut self, kind: Kind) {
        match kind {
            Kind::Event => self.events += 1,
            Kind::Venue => self.venues += 1,
            Kind::Organizer => self.organizers += 1,
            Kind::Category => self.categories += 1,
            Kind::Tag => self.tags += 1,
        }
    }
}

impl std::fmt::Display for KindCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} events, {} venues, {} organizers, {} categories, {} tags",
            self.events, self.venues, self.organizers, self.categories, self.tags
        )?;
        if self.feed_lines > 0 {
            write!(f, ", {} feed mappings", self.feed_lines)?;
        }
        Ok(())
    }
}

/// The resources of the lines after the events that carry what iCalendar mirrors know of
/// their feeds: each copied UID's event (`feed_items`) and the feed's validators
/// (`feed_sources`), so that a mirror restored from an export updates its events instead of
/// copying them again.
const FEED_LINES: [&str; 2] = ["feed_sources", "feed_items"];
