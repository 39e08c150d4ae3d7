//! Scheduled publication: records stored as `future` become `publish` once their date has come,
//! for every post kind (an event series with its occurrences).

use super::ServiceResult;
use crate::model::post::PostRecord;
use crate::model::{Kind, Status};
use crate::store::{PostIdKind, Reads, WriteTx};
use chrono::NaiveDateTime;

/// Persists the scheduled `future` → `publish` transitions that are due, for every post
/// kind, in one transaction; `modified` is not changed. Reads already treat due records as
/// published, so this only keeps the stored status in step with what clients see. The due
/// records are found through the index, not by reading every record.
pub(crate) fn publish_due(
    store: &crate::store::Store,
    index: &crate::index::SearchIndex,
    now: NaiveDateTime,
) -> ServiceResult<usize> {
    fn publish<R: PostRecord>(
        tx: &mut WriteTx,
        id: u64,
        now: NaiveDateTime,
    ) -> ServiceResult<usize> {
        let Some(mut record) = tx.get_record::<R>(R::KIND, id)? else {
            return Ok(0);
        };
        let meta = record.meta_mut();
        if meta.status != Status::Future || meta.date_utc > now {
            return Ok(0);
        }
        meta.status = Status::Publish;
        tx.put_record(R::KIND, id, &record)?;
        Ok(1)
    }
    let due = index.scheduled_before(now.and_utc().timestamp())?;
    if due.is_empty() {
        return Ok(0);
    }
    store.write(|tx| {
        let mut published = 0;
        for id in due {
            published += match tx.post_kind_of(id)? {
                Some(PostIdKind::Record(Kind::Event)) => {
                    // An occurrence is published with its series, which its occurrences follow.
                    let owner = super::series::owner(tx, id)?;
                    let published = publish::<crate::model::event::Event>(tx, owner, now)?;
                    if published > 0 && owner != id {
                        if let Some(series) =
                            tx.get_record::<crate::model::event::Event>(Kind::Event, owner)?
                        {
                            super::series::follow(tx, &series, None, now)?;
                        }
                    }
                    published
                }
                Some(PostIdKind::Record(Kind::Venue)) => {
                    publish::<crate::model::post::Venue>(tx, id, now)?
                }
                Some(PostIdKind::Record(Kind::Organizer)) => {
                    publish::<crate::model::post::Organizer>(tx, id, now)?
                }
                _ => 0,
            };
        }
        Ok(published)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{populate, Shape};
    use crate::index::SearchIndex;
    use crate::store::{Reads, Store};

    #[test]
    fn due_scheduled_records_are_published_through_the_index() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("almanac.redb")).unwrap();
        populate(&store, &Shape::for_events(3), 1).unwrap();
        let now = chrono::NaiveDate::from_ymd_opt(2030, 1, 1)
            .unwrap()
            .and_hms_opt(0, 0, 0)
            .unwrap();
        let first_event = store
            .read()
            .unwrap()
            .scan::<crate::model::event::Event>(Kind::Event)
            .unwrap()[0]
            .post
            .id;
        // Schedule it: stored as future, publication date before `now`.
        store
            .write(|tx| {
                let mut e: crate::model::event::Event =
                    tx.get_record(Kind::Event, first_event)?.unwrap();
                e.post.status = Status::Future;
                e.post.date_utc = now - chrono::Duration::hours(1);
                tx.put_record(Kind::Event, first_event, &e)?;
                crate::store::StoreResult::Ok(())
            })
            .unwrap();
        let index = SearchIndex::open(&dir.path().join("index"), &store).unwrap();
        assert_eq!(
            index.scheduled_before(now.and_utc().timestamp()).unwrap(),
            vec![first_event]
        );
        assert_eq!(publish_due(&store, &index, now).unwrap(), 1);
        let stored: crate::model::event::Event = store
            .read()
            .unwrap()
            .get_record(Kind::Event, first_event)
            .unwrap()
            .unwrap();
        assert_eq!(stored.post.status, Status::Publish);
        // Nothing is due before the publication date.
        let earlier = now - chrono::Duration::days(1);
        assert!(index
            .scheduled_before(earlier.and_utc().timestamp())
            .unwrap()
            .is_empty());
    }
}
