//! What deleting a term or trashing a venue or organizer does to the events that refer to it
//! (docs/api.md, "Categories and tags" and "Venues and organizers"): the reference goes.

use crate::index::SearchIndex;
use crate::model::event::Event;
use crate::model::Kind;
use crate::service::{series, ServiceResult};
use crate::store::{Reads, WriteTx};
use chrono::NaiveDateTime;

/// The events that may carry a term or link a venue/organizer: those the index finds, and
/// those still in the outbox. An event written just before this transaction may not be
/// searchable yet; the outbox is pruned only after the index commit that made its entries
/// searchable, so between the two every such event is seen. An occurrence stands for its
/// series (which is not indexed): the change is made there, and its occurrences follow.
fn events_possibly_carrying(
    tx: &WriteTx,
    index: &SearchIndex,
    kind: Kind,
    id: u64,
) -> ServiceResult<Vec<u64>> {
    let mut found = index.events_carrying(kind, id)?;
    found.extend(
        tx.outbox_after(0)?
            .into_iter()
            .filter(|entry| entry.kind == Kind::Event)
            .map(|entry| entry.id),
    );
    let mut events = Vec::with_capacity(found.len());
    for event in found {
        let owner = series::owner(tx, event)?;
        if !events.contains(&owner) {
            events.push(owner);
        }
    }
    Ok(events)
}

/// Stores an event changed by a cascade; a series' occurrences follow it.
fn put_event(tx: &mut WriteTx, event: &Event, now: NaiveDateTime) -> ServiceResult<()> {
    tx.put_record(Kind::Event, event.post.id, event)?;
    series::follow(tx, event, None, now)
}

/// A deleted term disappears from every event that carried it.
pub(crate) fn forget_term(
    tx: &mut WriteTx,
    index: &SearchIndex,
    kind: Kind,
    term: u64,
    now: NaiveDateTime,
) -> ServiceResult<()> {
    for id in events_possibly_carrying(tx, index, kind, term)? {
        let Some(mut event) = tx.get_record::<Event>(Kind::Event, id)? else {
            continue;
        };
        let list = if kind == Kind::Category {
            &mut event.categories
        } else {
            &mut event.tags
        };
        if list.contains(&term) {
            list.retain(|t| *t != term);
            put_event(tx, &event, now)?;
        }
    }
    Ok(())
}

/// A trashed venue or organizer is removed from every event that links it, without changing
/// the events' `modified`.
pub(crate) fn forget_linked(
    tx: &mut WriteTx,
    index: &SearchIndex,
    kind: Kind,
    id: u64,
    now: NaiveDateTime,
) -> ServiceResult<()> {
    for event_id in events_possibly_carrying(tx, index, kind, id)? {
        let Some(mut event) = tx.get_record::<Event>(Kind::Event, event_id)? else {
            continue;
        };
        let changed = match kind {
            Kind::Venue if event.venue == Some(id) => {
                event.venue = None;
                true
            }
            Kind::Organizer if event.organizers.contains(&id) => {
                event.organizers.retain(|o| *o != id);
                true
            }
            _ => false,
        };
        if changed {
            put_event(tx, &event, now)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{populate, Shape};
    use crate::store::Reads;
    use crate::store::Store;

    /// An event written after the index's last commit (its outbox entry not applied yet) is
    /// still unlinked from a trashed venue and stripped of a deleted term.
    #[test]
    fn cascades_reach_events_the_index_has_not_applied_yet() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("almanac.redb")).unwrap();
        populate(&store, &Shape::for_events(20), 7).unwrap();
        let index = SearchIndex::open(&dir.path().join("index"), &store).unwrap();
        let mut event = store.read().unwrap().scan::<Event>(Kind::Event).unwrap()[0].clone();
        let (venue, category) = (event.venue.expect("a venue"), event.categories[0]);
        // Link a second event too, written after the index opened: only the outbox knows.
        let mut late = store.read().unwrap().scan::<Event>(Kind::Event).unwrap()[1].clone();
        late.venue = Some(venue);
        late.categories = vec![category];
        store
            .write(|tx| tx.put_record(Kind::Event, late.post.id, &late))
            .unwrap();
        assert!(!index
            .events_carrying(Kind::Venue, venue)
            .unwrap()
            .contains(&late.post.id));
        store
            .write(|tx| {
                let now = chrono::Utc::now().naive_utc();
                forget_linked(tx, &index, Kind::Venue, venue, now)?;
                forget_term(tx, &index, Kind::Category, category, now)
            })
            .unwrap();
        let rx = store.read().unwrap();
        for id in [event.post.id, late.post.id] {
            event = rx.get_record(Kind::Event, id).unwrap().unwrap();
            assert_eq!(event.venue, None, "event {id}");
            assert!(!event.categories.contains(&category), "event {id}");
        }
    }
}
