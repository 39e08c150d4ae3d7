//! The change feed (`GET /changes`, docs/api.md, "Following changes"): the journal's entries
//! after a token, each with its record as the caller may see it. Tokens are journal
//! positions, the same on every node of a cluster; a token older than the newest deletion
//! forgotten by the retention is expired, since what happened in between is no longer known.

use super::events::Unlock;
use super::linked::{self, LinkedView};
use super::terms::{self, TermView};
use super::{posts, Request, ServiceError, ServiceResult};
use crate::index::SearchIndex;
use crate::model::event::Event;
use crate::model::journal::Journaled;
use crate::model::post::{Organizer, PostMeta, Venue};
use crate::model::term::Term;
use crate::model::{Kind, Status};
use crate::store::{Reads, Store};

/// Entries looked at per page, at most, for each entry asked for: a language filter that
/// rejects most of the journal still answers in bounded time (with a page token to go on).
const SCAN_FACTOR: usize = 20;

/// A change feed token as clients hold it.
pub(crate) fn token(position: u64) -> String {
    format!("c{position}")
}

/// The position a token names (`None`: not a token).
pub(crate) fn position_of(token: &str) -> Option<u64> {
    token.strip_prefix('c')?.parse().ok()
}

/// Where a read of the feed starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Since {
    /// Every record.
    Beginning,
    /// After a token's position.
    Position(u64),
    /// Now: no changes, only the token of the newest position (to follow from there).
    Latest,
}

impl Since {
    /// A `since` as sent (`latest`, or a token); `None` when it is neither.
    pub(crate) fn parse(text: &str) -> Option<Since> {
        if text == "latest" {
            return Some(Since::Latest);
        }
        position_of(text).map(Since::Position)
    }
}

/// What is asked.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChangesQuery {
    pub since: Since,
    pub per_page: usize,
    /// The export form (callers who may edit others' records only).
    pub export: bool,
}

/// A record as the caller may see it now.
pub(crate) enum Seen {
    /// The event, and whether it shows masked (protected, and not opened).
    Event(Box<Event>, bool),
    Venue(LinkedView<Venue>),
    Organizer(LinkedView<Organizer>),
    Term(TermView),
    /// Deleted, or no longer (or never) visible to the caller.
    Removed,
}

pub(crate) struct ChangeEntry {
    pub position: u64,
    pub journaled: Journaled,
    pub seen: Seen,
}

/// A page of the feed.
pub(crate) struct ChangesPage {
    pub entries: Vec<ChangeEntry>,
    /// Where the next page starts, when there is one.
    pub next_page: Option<u64>,
    /// On the last page: where the next sync starts.
    pub next_sync: Option<u64>,
}

/// The entries after `query.since` in the request's explicit language (all languages
/// without one), in write order.
pub(crate) fn since(
    store: &Store,
    index: &SearchIndex,
    request: &Request,
    query: ChangesQuery,
) -> ServiceResult<ChangesPage> {
    super::check_export(request.caller, query.export)?;
    let rx = store.read()?;
    let bounds = rx.journal_bounds()?;
    let since = match query.since {
        Since::Beginning => 0,
        Since::Position(position) if position < bounds.horizon => {
            return Err(ServiceError::ChangesTokenExpired)
        }
        Since::Position(position) => position,
        Since::Latest => {
            return Ok(ChangesPage {
                entries: Vec::new(),
                next_page: None,
                next_sync: Some(bounds.head),
            })
        }
    };
    let language = request.explicit_language;
    let stretch = rx.journal_after(
        since,
        query.per_page,
        query.per_page.saturating_mul(SCAN_FACTOR),
        |j| language.is_none_or(|l| j.language == l),
    )?;
    let term_ids = |kind: Kind| -> Vec<u64> {
        stretch
            .entries
            .iter()
            .filter(|(_, j)| j.kind == kind && j.action != crate::model::journal::Action::Deleted)
            .map(|(_, j)| j.id)
            .collect()
    };
    let counts = [Kind::Category, Kind::Tag]
        .map(|kind| terms::counts(index, kind, &term_ids(kind), request.now).map(|c| (kind, c)));
    let mut term_counts = std::collections::HashMap::new();
    for found in counts {
        let (kind, counts) = found?;
        term_counts.insert(kind, counts);
    }
    let unlock = Unlock {
        export: query.export,
        ..Unlock::default()
    };
    let mut entries = Vec::with_capacity(stretch.entries.len());
    for (position, journaled) in stretch.entries {
        let seen = seen(&rx, request, &unlock, &journaled, &term_counts)?;
        entries.push(ChangeEntry {
            position,
            journaled,
            seen,
        });
    }
    let next_page = stretch.more_after;
    let next_sync = next_page.is_none().then(|| since.max(bounds.head));
    Ok(ChangesPage {
        entries,
        next_page,
        next_sync,
    })
}

/// The journaled record as the caller may see it now, by the single reads' rules.
fn seen(
    rx: &impl Reads,
    request: &Request,
    unlock: &Unlock,
    journaled: &Journaled,
    term_counts: &std::collections::HashMap<Kind, std::collections::HashMap<u64, u64>>,
) -> ServiceResult<Seen> {
    let (caller, now, id) = (request.caller, request.now, journaled.id);
    let readable = |meta: &PostMeta| visible(meta, request, unlock);
    Ok(match journaled.kind {
        Kind::Event => match rx.get_record::<Event>(Kind::Event, id)? {
            Some(event) if readable(&event.post) => {
                let masked = !unlock.opens(&event, caller, now);
                Seen::Event(Box::new(event), masked)
            }
            _ => Seen::Removed,
        },
        Kind::Venue => match rx.get_record::<Venue>(Kind::Venue, id)? {
            Some(venue) if readable(&venue.post) => {
                Seen::Venue(linked::view_in(rx, venue, caller, now)?)
            }
            _ => Seen::Removed,
        },
        Kind::Organizer => match rx.get_record::<Organizer>(Kind::Organizer, id)? {
            Some(organizer) if readable(&organizer.post) => {
                Seen::Organizer(linked::view_in(rx, organizer, caller, now)?)
            }
            _ => Seen::Removed,
        },
        Kind::Category | Kind::Tag => match rx.get_record::<Term>(journaled.kind, id)? {
            Some(term) => {
                let counts = &term_counts[&journaled.kind];
                Seen::Term(terms::view(rx, term, counts)?)
            }
            None => Seen::Removed,
        },
    })
}

/// Whether the caller may read a post-kind record in the feed: a trashed record is gone for
/// readers; editors who may list the trash see it in the export form.
fn visible(meta: &PostMeta, request: &Request, unlock: &Unlock) -> bool {
    (meta.status != Status::Trash || unlock.export)
        && posts::can_read(request.caller, meta, request.now)
}

/// Whether the caller may read the journaled record now, outside the export form.
pub(crate) fn readable(
    rx: &impl Reads,
    request: &Request,
    journaled: &Journaled,
) -> ServiceResult<bool> {
    Ok(match journaled.kind {
        Kind::Category | Kind::Tag => rx
            .get_record::<Term>(journaled.kind, journaled.id)?
            .is_some(),
        kind => rx
            .get_record::<PostMeta>(kind, journaled.id)?
            .is_some_and(|meta| visible(&meta, request, &Unlock::default())),
    })
}

/// Journals the records stored before the journal existed (at start, after an upgrade).
pub(crate) fn seed(store: &Store) -> ServiceResult<u64> {
    Ok(store.seed_journal()?)
}

/// Forgets the deletions older than `retention` (the feed's tokens from before them expire).
pub(crate) fn prune(store: &Store, retention: chrono::Duration) -> ServiceResult<u64> {
    let before = chrono::Utc::now().naive_utc() - retention;
    Ok(store.prune_journal(before)?)
}
