//! The change journal's tables (see `crate::model::journal`). The journal's entries are
//! changes like any other (recorded, shipped through the cluster log, kept in its snapshot),
//! so positions are the same on every node; which entry is a record's latest and which
//! entries are deletions are derived from them where they are applied.

use super::{
    codec, exclusive, shared, Change, OpenTables, ReadTx, Reads, Store, StoreError, StoreResult,
    WriteTx, META,
};
use crate::model::journal::{Action, Journaled};
use crate::model::post::PostMeta;
use crate::model::series::{OccurrenceState, Series};
use crate::model::term::Term;
use crate::model::{Kind, Language, Sequence, Status};
use chrono::NaiveDateTime;
use redb::{ReadableTable, TableDefinition};

/// Position → entry.
pub(super) const JOURNAL: TableDefinition<u64, &[u8]> = TableDefinition::new("journal");
/// (kind, ID) → the position of the record's entry. Derived.
pub(super) const JOURNAL_LATEST: TableDefinition<(&str, u64), u64> =
    TableDefinition::new("journal_latest");
/// Position → time (Unix seconds) of the deletions the journal keeps. Derived.
pub(super) const JOURNAL_DELETIONS: TableDefinition<u64, i64> =
    TableDefinition::new("journal_deletions");

/// Up to where the seeding of a kind went (see [`WriteTx::seed_journal`]); `u64::MAX` once
/// done.
fn seeded_key(kind: Kind) -> String {
    format!("changes.seeded.{}", kind.name())
}

/// A record's language and (posts) status, from its stored bytes.
fn state(kind: Kind, bytes: &[u8]) -> StoreResult<(Language, Option<Status>)> {
    Ok(match kind {
        Kind::Category | Kind::Tag => (codec::decode::<Term>(bytes)?.language, None),
        Kind::Event | Kind::Venue | Kind::Organizer => {
            let meta: PostMeta = codec::decode(bytes)?;
            (meta.language, Some(meta.status))
        }
    })
}

/// Applies an entry's change: the entry itself and what is derived from it.
pub(super) fn apply(open: &mut OpenTables, seq: u64, value: Option<&[u8]>) -> StoreResult<()> {
    let journal = exclusive(open.txn, &mut open.journal, JOURNAL)?;
    let entry: Journaled = match value {
        Some(bytes) => {
            journal.insert(seq, bytes)?;
            codec::decode(bytes)?
        }
        None => {
            let Some(old) = journal.remove(seq)? else {
                return Ok(());
            };
            codec::decode(old.value())?
        }
    };
    let key = (entry.kind.name(), entry.id);
    let latest = exclusive(open.txn, &mut open.journal_latest, JOURNAL_LATEST)?;
    if value.is_some() {
        latest.insert(key, seq)?;
    } else if latest.get(key)?.map(|v| v.value()) == Some(seq) {
        latest.remove(key)?;
    }
    let deletions = exclusive(open.txn, &mut open.journal_deletions, JOURNAL_DELETIONS)?;
    if value.is_some() && entry.action == Action::Deleted {
        deletions.insert(seq, entry.at.and_utc().timestamp())?;
    } else {
        deletions.remove(seq)?;
    }
    Ok(())
}

impl WriteTx<'_> {
    /// Opens (creating) the journal's tables.
    pub(super) fn journal_tables(&self) -> StoreResult<()> {
        shared(self.open.txn, &self.open.journal, JOURNAL)?;
        shared(self.open.txn, &self.open.journal_latest, JOURNAL_LATEST)?;
        shared(
            self.open.txn,
            &self.open.journal_deletions,
            JOURNAL_DELETIONS,
        )?;
        Ok(())
    }

    /// What `change` does to the records the journal follows, read before it is applied: each
    /// record's kind, ID, language and action. The journal follows events (series and the
    /// occurrences changed on their own, not the others: a series stands for them), venues,
    /// organizers and terms; a series' change is its event's update, and an occurrence that
    /// becomes or stops being an exception enters or leaves the journal.
    pub(super) fn journal_actions(
        &self,
        change: &Change,
    ) -> StoreResult<Vec<(Kind, u64, Language, Action)>> {
        let mut actions = Vec::new();
        match change {
            Change::Record { kind, id, value } => {
                let occurrence = *kind == Kind::Event && self.occurrence_of(*id)?.is_some();
                let before = self.stored_state(*kind, *id)?;
                let after = value.as_deref().map(|b| state(*kind, b)).transpose()?;
                let (listed_before, listed_after) = if occurrence {
                    let exception = after.is_some() && self.is_exception(*id)?;
                    (self.listed(*kind, *id)?, exception)
                } else {
                    (before.is_some(), after.is_some())
                };
                let language = after.or(before).map(|(language, _)| language);
                let trash = |s: Option<(Language, Option<Status>)>| {
                    s.and_then(|(_, status)| status) == Some(Status::Trash)
                };
                let action = match (listed_before, listed_after) {
                    (false, false) => None,
                    (true, false) => Some(Action::Deleted),
                    (false, true) => Some(Action::Created),
                    (true, true) => Some(match (trash(before), trash(after)) {
                        (false, true) => Action::Trashed,
                        (true, false) => Action::Restored,
                        _ => Action::Updated,
                    }),
                };
                if let (Some(action), Some(language)) = (action, language) {
                    actions.push((*kind, *id, language, action));
                }
            }
            Change::Series { id, value } => {
                if let Some((language, _)) = self.stored_state(Kind::Event, *id)? {
                    actions.push((Kind::Event, *id, language, Action::Updated));
                }
                let exceptions = |series: Option<&Series>| -> Vec<u64> {
                    series
                        .iter()
                        .flat_map(|s| s.occurrences.iter())
                        .filter(|o| o.state == OccurrenceState::Exception)
                        .map(|o| o.id)
                        .collect()
                };
                let after: Option<Series> = value.as_deref().map(codec::decode).transpose()?;
                let (old, new) = (
                    exceptions(self.series(*id)?.as_ref()),
                    exceptions(after.as_ref()),
                );
                for occurrence in new.iter().filter(|o| !old.contains(o)) {
                    if let Some((language, _)) = self.stored_state(Kind::Event, *occurrence)? {
                        let action = if self.listed(Kind::Event, *occurrence)? {
                            Action::Updated
                        } else {
                            Action::Created
                        };
                        actions.push((Kind::Event, *occurrence, language, action));
                    }
                }
                for occurrence in old.iter().filter(|o| !new.contains(o)) {
                    if self.listed(Kind::Event, *occurrence)? {
                        let language = self.stored_state(Kind::Event, *occurrence)?;
                        let language = language.map_or(Language::En, |(language, _)| language);
                        actions.push((Kind::Event, *occurrence, language, Action::Deleted));
                    }
                }
            }
            _ => {}
        }
        Ok(actions)
    }

    fn stored_state(&self, kind: Kind, id: u64) -> StoreResult<Option<(Language, Option<Status>)>> {
        let found = self.records(kind)?.get(id)?;
        found.map(|bytes| state(kind, bytes.value())).transpose()
    }

    /// Whether the occurrence `id` is an exception of its series (as stored now).
    fn is_exception(&self, id: u64) -> StoreResult<bool> {
        let Some(of) = self.occurrence_of(id)? else {
            return Ok(false);
        };
        Ok(self.series(of.series)?.is_some_and(|series| {
            series
                .occurrences
                .iter()
                .any(|o| o.id == id && o.state == OccurrenceState::Exception)
        }))
    }

    /// Whether the record's latest journal entry shows it (anything but a deletion).
    fn listed(&self, kind: Kind, id: u64) -> StoreResult<bool> {
        if let Some((_, action)) = self.journaled.get(&(kind, id)) {
            return Ok(*action != Action::Deleted);
        }
        let latest = shared(self.open.txn, &self.open.journal_latest, JOURNAL_LATEST)?
            .get((kind.name(), id))?
            .map(|v| v.value());
        let Some(seq) = latest else {
            return Ok(false);
        };
        let journal = shared(self.open.txn, &self.open.journal, JOURNAL)?;
        let entry = journal.get(seq)?;
        let Some(entry) = entry else {
            return Ok(false);
        };
        let entry: Journaled = codec::decode(entry.value())?;
        Ok(entry.action != Action::Deleted)
    }

    /// Journals a record's change: its older entry goes, a new one takes the next position
    /// (one entry per record and write: a second change in the same write amends it).
    pub(super) fn journal(
        &mut self,
        kind: Kind,
        id: u64,
        language: Language,
        action: Action,
    ) -> StoreResult<()> {
        let (seq, action) = match self.journaled.get(&(kind, id)) {
            Some(&(seq, earlier)) => (seq, earlier.then(action)),
            None => {
                let older = shared(self.open.txn, &self.open.journal_latest, JOURNAL_LATEST)?
                    .get((kind.name(), id))?
                    .map(|v| v.value());
                if let Some(older) = older {
                    self.change(Change::Journal {
                        seq: older,
                        value: None,
                    })?;
                }
                (self.next_id(Sequence::Changes)?, action)
            }
        };
        self.journaled.insert((kind, id), (seq, action));
        let entry = Journaled {
            kind,
            id,
            language,
            action,
            at: chrono::Utc::now().naive_utc(),
        };
        self.change(Change::Journal {
            seq,
            value: Some(codec::encode(&entry)),
        })
    }

    /// The newest journal position.
    pub(crate) fn journal_head(&mut self) -> StoreResult<u64> {
        let key = Sequence::Changes.key();
        Ok(self.meta_mut()?.get(key)?.map_or(0, |v| v.value()))
    }

    /// Journals as created up to `limit` stored records that have no entry (those written
    /// before the journal existed), continuing where the last call stopped; how many.
    pub(crate) fn seed_journal(&mut self, limit: usize) -> StoreResult<usize> {
        let mut seeded = 0;
        for kind in Kind::ALL {
            if seeded == limit {
                break;
            }
            let key = seeded_key(kind);
            let from = self.meta_mut()?.get(key.as_str())?.map_or(0, |v| v.value());
            if from == u64::MAX {
                continue;
            }
            let mut found = Vec::new();
            let mut more = false;
            for entry in self.records(kind)?.range(from.saturating_add(1)..)? {
                let (id, bytes) = entry?;
                if found.len() == limit - seeded {
                    more = true;
                    break;
                }
                found.push((id.value(), state(kind, bytes.value())?.0));
            }
            let latest = shared(self.open.txn, &self.open.journal_latest, JOURNAL_LATEST)?;
            let mut unjournaled = Vec::with_capacity(found.len());
            for (id, language) in &found {
                let plain_occurrence = kind == Kind::Event
                    && self.occurrence_of(*id)?.is_some()
                    && !self.is_exception(*id)?;
                if latest.get((kind.name(), *id))?.is_none() && !plain_occurrence {
                    unjournaled.push((*id, *language));
                }
            }
            for (id, language) in unjournaled {
                self.journal(kind, id, language, Action::Created)?;
            }
            seeded += found.len();
            let reached = match found.last() {
                Some((id, _)) if more => *id,
                _ => u64::MAX,
            };
            self.change(Change::Sequence {
                key,
                value: reached,
            })?;
            if more {
                break;
            }
        }
        Ok(seeded)
    }

    /// Forgets up to `limit` deletions journaled before `before`, raising the horizon past
    /// them; how many.
    pub(crate) fn prune_journal(
        &mut self,
        before: NaiveDateTime,
        limit: usize,
    ) -> StoreResult<usize> {
        let before = before.and_utc().timestamp();
        let mut expired = Vec::new();
        let deletions = shared(
            self.open.txn,
            &self.open.journal_deletions,
            JOURNAL_DELETIONS,
        )?;
        for entry in deletions.iter()? {
            let (seq, at) = entry?;
            if expired.len() == limit || at.value() >= before {
                break;
            }
            expired.push(seq.value());
        }
        for seq in &expired {
            self.change(Change::Journal {
                seq: *seq,
                value: None,
            })?;
        }
        if let Some(newest) = expired.last() {
            self.raise_sequence(Sequence::ChangesHorizon, *newest)?;
        }
        Ok(expired.len())
    }
}

/// Where a journal read stands: the newest position and the horizon (see
/// [`Sequence::ChangesHorizon`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct JournalBounds {
    pub head: u64,
    pub horizon: u64,
}

/// A stretch of the journal read after a position.
#[derive(Debug)]
pub(crate) struct JournalStretch {
    pub entries: Vec<(u64, Journaled)>,
    /// The last position looked at (entries filtered out included), when the journal goes on
    /// after it: the next stretch starts there.
    pub more_after: Option<u64>,
}

impl ReadTx {
    pub(crate) fn journal_bounds(&self) -> StoreResult<JournalBounds> {
        let meta = self.txn.open_table(META)?;
        let value = |sequence: Sequence| -> StoreResult<u64> {
            Ok(meta.get(sequence.key())?.map_or(0, |v| v.value()))
        };
        Ok(JournalBounds {
            head: value(Sequence::Changes)?,
            horizon: value(Sequence::ChangesHorizon)?,
        })
    }

    /// Up to `limit` entries after `position` that `keep` accepts, looking at `scan` entries
    /// at most (a filter that rejects most of the journal answers in bounded time).
    pub(crate) fn journal_after(
        &self,
        position: u64,
        limit: usize,
        scan: usize,
        keep: impl Fn(&Journaled) -> bool,
    ) -> StoreResult<JournalStretch> {
        let journal = self.txn.open_table(JOURNAL)?;
        let mut entries = Vec::new();
        let mut looked = 0;
        let mut last = None;
        let mut range = journal.range(position.saturating_add(1)..)?;
        for entry in range.by_ref() {
            let (seq, bytes) = entry?;
            let journaled: Journaled = codec::decode(bytes.value())?;
            looked += 1;
            last = Some(seq.value());
            if keep(&journaled) {
                entries.push((seq.value(), journaled));
            }
            if entries.len() == limit || looked == scan {
                break;
            }
        }
        let more_after = match range.next() {
            Some(_) => last,
            None => None,
        };
        Ok(JournalStretch {
            entries,
            more_after,
        })
    }

    /// Every journal entry as the change that makes it (for a cluster's snapshot).
    pub(super) fn for_each_journal_row<E: From<StoreError>>(
        &self,
        f: &mut impl FnMut(Change) -> Result<(), E>,
    ) -> Result<(), E> {
        let journal = self.txn.open_table(JOURNAL).map_err(StoreError::from)?;
        for entry in journal.iter().map_err(StoreError::from)? {
            let (seq, bytes) = entry.map_err(StoreError::from)?;
            f(Change::Journal {
                seq: seq.value(),
                value: Some(bytes.value().to_vec()),
            })?;
        }
        Ok(())
    }
}

impl Store {
    /// Journals the records written before the journal existed, a batch per write; how many.
    pub(crate) fn seed_journal(&self) -> StoreResult<u64> {
        let done = {
            let rx = self.read()?;
            let meta = rx.txn.open_table(META)?;
            let mut done = true;
            for kind in Kind::ALL {
                done &= meta.get(seeded_key(kind).as_str())?.map(|v| v.value()) == Some(u64::MAX);
            }
            done
        };
        let mut total = 0;
        if done {
            return Ok(total);
        }
        loop {
            let seeded = self.write(|tx| tx.seed_journal(SEED_BATCH))?;
            total += seeded as u64;
            if seeded < SEED_BATCH {
                return Ok(total);
            }
        }
    }

    /// Forgets the deletions journaled before `before` (the retention), a batch per write;
    /// how many. Writes nothing when there is none.
    pub(crate) fn prune_journal(&self, before: NaiveDateTime) -> StoreResult<u64> {
        let mut total = 0;
        loop {
            let due = {
                let rx = self.read()?;
                let deletions = rx.txn.open_table(JOURNAL_DELETIONS)?;
                let first = deletions.first()?.map(|(_, at)| at.value());
                first.is_some_and(|at| at < before.and_utc().timestamp())
            };
            if !due {
                return Ok(total);
            }
            let pruned = self.write(|tx| tx.prune_journal(before, SEED_BATCH))?;
            if pruned == 0 {
                return Ok(total);
            }
            total += pruned as u64;
        }
    }
}

/// Records journaled (or deletions forgotten) per write.
const SEED_BATCH: usize = 5_000;

#[cfg(test)]
mod tests {
    use super::super::tests::{event, temp_store};
    use super::*;

    fn entries(store: &Store) -> Vec<(u64, Kind, u64, Action)> {
        let rx = store.read().unwrap();
        let stretch = rx.journal_after(0, 100, 100, |_| true).unwrap();
        stretch
            .entries
            .into_iter()
            .map(|(seq, j)| (seq, j.kind, j.id, j.action))
            .collect()
    }

    fn put(store: &Store, id: u64, status: Status) {
        let mut meta = event(id, "gig", "2026-11-28 10:00:00");
        meta.status = status;
        store
            .write(|tx| tx.put_record(Kind::Event, id, &meta))
            .unwrap();
    }

    #[test]
    fn a_record_keeps_one_entry_telling_its_latest_change() {
        let (_dir, store) = temp_store();
        put(&store, 1, Status::Publish);
        put(&store, 2, Status::Draft);
        assert_eq!(
            entries(&store),
            [
                (1, Kind::Event, 1, Action::Created),
                (2, Kind::Event, 2, Action::Created)
            ]
        );
        put(&store, 1, Status::Publish);
        assert_eq!(entries(&store)[1], (3, Kind::Event, 1, Action::Updated));
        put(&store, 1, Status::Trash);
        assert_eq!(entries(&store)[1], (4, Kind::Event, 1, Action::Trashed));
        put(&store, 1, Status::Draft);
        assert_eq!(entries(&store)[1], (5, Kind::Event, 1, Action::Restored));
        store.write(|tx| tx.remove_record(Kind::Event, 1)).unwrap();
        assert_eq!(entries(&store)[1], (6, Kind::Event, 1, Action::Deleted));
        // Created and changed again in one write: one entry, created.
        store
            .write(|tx| {
                tx.put_record(Kind::Event, 3, &event(3, "a", "2026-11-28 10:00:00"))?;
                tx.put_record(Kind::Event, 3, &event(3, "b", "2026-11-28 10:00:00"))
            })
            .unwrap();
        assert_eq!(entries(&store).len(), 3);
        assert_eq!(entries(&store)[2], (7, Kind::Event, 3, Action::Created));
        let bounds = store.read().unwrap().journal_bounds().unwrap();
        assert_eq!(
            bounds,
            JournalBounds {
                head: 7,
                horizon: 0
            }
        );
    }

    #[test]
    fn forgotten_deletions_raise_the_horizon() {
        let (_dir, store) = temp_store();
        put(&store, 1, Status::Publish);
        put(&store, 2, Status::Publish);
        store.write(|tx| tx.remove_record(Kind::Event, 1)).unwrap();
        let past = chrono::Utc::now().naive_utc() - chrono::Duration::hours(1);
        assert_eq!(store.prune_journal(past).unwrap(), 0);
        let future = chrono::Utc::now().naive_utc() + chrono::Duration::hours(1);
        assert_eq!(store.prune_journal(future).unwrap(), 1);
        assert_eq!(entries(&store), [(2, Kind::Event, 2, Action::Created)]);
        let bounds = store.read().unwrap().journal_bounds().unwrap();
        assert_eq!(
            bounds,
            JournalBounds {
                head: 3,
                horizon: 3
            }
        );
    }

    #[test]
    fn records_stored_without_entries_are_seeded_once() {
        let (_dir, store) = temp_store();
        for id in 1..=12 {
            put(&store, id, Status::Publish);
        }
        // As a store written before the journal existed: records, no entries.
        let txn = store.db.begin_write().unwrap();
        txn.delete_table(JOURNAL).unwrap();
        txn.delete_table(JOURNAL_LATEST).unwrap();
        txn.delete_table(JOURNAL_DELETIONS).unwrap();
        {
            let mut meta = txn.open_table(META).unwrap();
            meta.remove(Sequence::Changes.key()).unwrap();
            for kind in Kind::ALL {
                meta.remove(seeded_key(kind).as_str()).unwrap();
            }
        }
        txn.commit().unwrap();
        store.write(|tx| tx.journal_tables()).unwrap();
        put(&store, 5, Status::Publish);
        let seeded = store
            .write(|tx| {
                let first = tx.seed_journal(4)?;
                let rest = tx.seed_journal(100)?;
                Ok::<_, StoreError>(first + rest + tx.seed_journal(100)?)
            })
            .unwrap();
        assert_eq!(seeded, 12, "records looked at");
        let found = entries(&store);
        let mut ids: Vec<u64> = found.iter().map(|e| e.2).collect();
        ids.sort();
        assert_eq!(ids, (1..=12).collect::<Vec<_>>(), "each record once");
        assert_eq!(found[0], (1, Kind::Event, 5, Action::Updated));
        assert_eq!(store.seed_journal().unwrap(), 0);
    }
}
