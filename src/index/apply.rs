//! Applying the outbox to the index (see `indexer` for when, and docs/architecture.md).

use super::collectors::values_in;
use super::merge_policy::live_merge_policy;
use super::*;
use crate::model::term::Term;
use crate::store::Reads;
use std::ops::Bound;
use tantivy::indexer::{AddOperation, SegmentWriter};
use tantivy::query::{BooleanQuery, Occur, RangeQuery, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::Term as IndexTerm;

/// New documents of an outbox batch of up to this many records are written as a segment by
/// the applying thread itself (see [`add_small_segment`]); larger batches (bulk loads) go
/// through the writer.
const SMALL_SEGMENT_DOCS: usize = 1000;

/// Memory budget of such a segment: sizes its term hash table at 32K slots (it grows when a
/// batch needs more).
const SMALL_SEGMENT_MEMORY: usize = 1024 * 1024;

/// When the records an application brings are committed to the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Commit {
    /// At once, with whatever the overlay holds (opening, rebuilding, bulk loads, stopping).
    Now,
    /// Once the overlay is full or its oldest record is this old (see `overlay`); until then
    /// they join it.
    After(std::time::Duration),
}

impl SearchIndex {
    /// Applies the outbox entries after `applied` of a store snapshot: each named record is
    /// re-read from the snapshot and its document replaced (or removed when the record is
    /// gone). A venue or organizer change also refreshes the events that link it, whose
    /// documents carry its name and coordinates. The documents join the overlay, or are
    /// committed with it (see [`Commit`]); a commit records the last sequence number applied.
    /// Returns the last entry's sequence number (`None` when there was nothing to apply).
    /// Entries and documents come from one snapshot, so the index then mirrors it exactly: it
    /// becomes the index's [`View`].
    pub(crate) fn apply_after(
        &self,
        store: &Store,
        applied: u64,
        commit: Commit,
    ) -> IndexResult<Option<u64>> {
        let _serialised = self.apply_lock.lock().expect("index apply lock");
        // An online rebuild applies what was written meanwhile itself, beyond what the caller
        // knows of: applied again, those records' documents would be committed twice.
        let applied = applied.max(self.applied_position());
        self.apply_to(&self.live(), store, applied, commit)
    }

    /// How long until the overlay's writes are due for their commit after `delay` (`None`
    /// when it is empty).
    pub(crate) fn overlay_due_in(&self, delay: std::time::Duration) -> Option<std::time::Duration> {
        self.live()
            .overlay
            .lock()
            .expect("overlay lock")
            .due_in(delay)
    }

    pub(super) fn apply_to(
        &self,
        live: &Live,
        store: &Store,
        applied: u64,
        commit: Commit,
    ) -> IndexResult<Option<u64>> {
        let rx = store.read()?;
        let entries: Vec<OutboxEntry> = rx.outbox_after(applied)?;
        let mut overlay = live.overlay.lock().expect("overlay lock");
        let last = entries.last().map(|e| e.seq);
        let before = live.view.read().expect("view lock").clone();
        self.record_changes(&entries, before.as_ref().map(View::store), &rx)?;
        // In outbox order, each indexed record once (a bulk load applies many thousands at a
        // time). Term entries change no document: their view is all they need.
        let mut seen = std::collections::HashSet::new();
        let mut touched: Vec<(Kind, u64)> = Vec::new();
        for e in &entries {
            let indexed = matches!(e.kind, Kind::Event | Kind::Venue | Kind::Organizer);
            if indexed && seen.insert((e.kind, e.id)) {
                touched.push((e.kind, e.id));
            }
        }
        let linked: Vec<u64> = touched
            .iter()
            .filter(|(k, _)| *k != Kind::Event)
            .map(|(_, id)| *id)
            .collect();
        if !linked.is_empty() {
            for event in self.events_linking(live, &linked)? {
                if seen.insert((Kind::Event, event)) {
                    touched.push((Kind::Event, event));
                }
            }
        }
        // Term entries alone change no document: no commit (the payload's seq stays behind,
        // and a restart re-reads them, which again changes nothing).
        let fresh = touched.iter().filter(|r| !overlay.contains(r)).count();
        let documents = !(touched.is_empty() && overlay.is_empty());
        let due = match commit {
            Commit::Now => true,
            Commit::After(delay) => overlay.due_with(fresh, delay),
        };
        if documents && due {
            let mut records: Vec<(Kind, u64)> = overlay.records().collect();
            records.extend(touched.iter().filter(|r| !overlay.contains(r)));
            self.commit(live, &rx, &records, last.unwrap_or(applied).max(applied))?;
            if let Some(replaced) = overlay.clear() {
                live.filter_cache.forget(replaced.segment_id());
            }
            live.changed();
        } else if !touched.is_empty() {
            let seq = last.unwrap_or(applied);
            let committed = live.reader.searcher();
            for (kind, id) in &touched {
                let document = self.document(&rx, *kind, *id, seq)?;
                overlay.put(
                    (*kind, *id),
                    document,
                    &committed,
                    &self.fields.key(Key::Id, id),
                )?;
            }
            if let Some(replaced) = overlay.rebuild(committed.schema())? {
                live.filter_cache.forget(replaced.segment_id());
            }
            live.changed();
        }
        self.publish(live, &overlay, rx)?;
        Ok(last)
    }

    /// Commits the documents of `records` (re-read from `rx`) and marks the commit as having
    /// applied the outbox through `seq`.
    fn commit(
        &self,
        live: &Live,
        rx: &ReadTx,
        records: &[(Kind, u64)],
        seq: u64,
    ) -> IndexResult<()> {
        let payload = serde_json::to_string(&CommitPayload {
            seq,
            schema: self.schema_version,
        })
        .expect("payloads serialize");
        let mut writer = live.writer.lock().expect("index writer lock");
        let committed = self.stage(live, &writer, rx, records, seq).and_then(|()| {
            let committing = std::time::Instant::now();
            let mut prepared = writer.prepare_commit()?;
            prepared.set_payload(&payload);
            prepared.commit()?;
            crate::metrics::index_commit(committing.elapsed().as_secs_f64());
            Ok(())
        });
        if let Err(e) = committed {
            // What was handed to the writer would otherwise ride along with the next commit,
            // beside what the retry hands it again (and creates are not preceded by deletes).
            writer.rollback()?;
            writer.set_merge_policy(Box::new(live_merge_policy()));
            return Err(e);
        }
        drop(writer);
        live.reader.reload()?;
        Ok(())
    }

    /// Records what the outbox entries `entries` changed, between the snapshots `before` (the
    /// current view's, if any) and `after`: the records and the translation groups they left
    /// or joined. (The terms' counts that an event's write moves are not cached: see
    /// `http::representation_cache`.)
    /// Called before the entries are acknowledged, so that no representation cached before
    /// them passes for current afterwards.
    fn record_changes(
        &self,
        entries: &[OutboxEntry],
        before: Option<&ReadTx>,
        after: &ReadTx,
    ) -> IndexResult<()> {
        use crate::model::post::PostMeta;
        let mut changed = Vec::new();
        for e in entries {
            changed.push((Dependency::Record(e.kind, e.id), e.seq));
            for rx in before.into_iter().chain([after]) {
                match e.kind {
                    Kind::Category | Kind::Tag => {
                        if let Some(term) = rx.get_record::<Term>(e.kind, e.id)? {
                            changed.push((Dependency::Group(e.kind, term.group), e.seq));
                        }
                    }
                    Kind::Event | Kind::Venue | Kind::Organizer => {
                        if let Some(meta) = rx.get_record::<PostMeta>(e.kind, e.id)? {
                            changed.push((Dependency::Group(e.kind, meta.group), e.seq));
                        }
                    }
                }
            }
        }
        let mut changes = self.changes.write().expect("changes lock");
        for (dependency, seq) in changed {
            let last = changes.entry(dependency).or_insert(seq);
            *last = (*last).max(seq);
        }
        Ok(())
    }

    /// Hands the writer the deletes and documents of `touched` (records re-read from `rx`),
    /// the documents marked as written at `seq`.
    fn stage(
        &self,
        live: &Live,
        writer: &IndexWriter,
        rx: &ReadTx,
        touched: &[(Kind, u64)],
        seq: u64,
    ) -> IndexResult<()> {
        let f = &self.fields;
        let searcher = live.reader.searcher();
        // A bulk load hands every document to the writer as soon as it is built, so that the
        // writer's indexing thread works beside this one reading the store.
        let bulk = touched.len() > SMALL_SEGMENT_DOCS;
        let mut fresh = Vec::new();
        for (kind, id) in touched {
            let id_term = f.key(Key::Id, id);
            // A record the index has never held (a create) has nothing to delete, and a
            // pending delete makes the commit open a reader on every segment to apply it.
            let indexed = searcher.doc_freq(&id_term)? > 0;
            match self.document(rx, *kind, *id, seq)? {
                Some(doc) => {
                    if indexed {
                        // Only the documents written before this one: the new one, in a
                        // segment added whole, is subject to every queued delete.
                        writer.delete_query(Box::new(BooleanQuery::new(vec![
                            (
                                Occur::Must,
                                Box::new(TermQuery::new(id_term, IndexRecordOption::Basic))
                                    as Box<dyn Query>,
                            ),
                            (
                                Occur::Must,
                                Box::new(RangeQuery::new(
                                    Bound::Unbounded,
                                    Bound::Excluded(IndexTerm::from_field_u64(f.written, seq)),
                                )),
                            ),
                        ])))?;
                    }
                    if bulk {
                        writer.add_document(doc)?;
                    } else {
                        fresh.push(doc);
                    }
                }
                None if indexed => {
                    writer.delete_term(id_term);
                }
                None => {}
            }
        }
        if !fresh.is_empty() {
            add_small_segment(writer, fresh)?;
        }
        Ok(())
    }

    /// The document of a record as `rx` holds it, marked as written at `seq` (`None` when the
    /// record is gone).
    fn document(
        &self,
        rx: &ReadTx,
        kind: Kind,
        id: u64,
        seq: u64,
    ) -> IndexResult<Option<TantivyDocument>> {
        let f = &self.fields;
        let doc = match kind {
            Kind::Event => rx
                .get_record::<crate::model::event::Event>(kind, id)?
                .map(|e| docs::event(f, &e, rx))
                .transpose()?
                .flatten(),
            Kind::Venue => rx
                .get_record::<crate::model::post::Venue>(kind, id)?
                .map(|v| docs::venue(f, &v)),
            Kind::Organizer => rx
                .get_record::<crate::model::post::Organizer>(kind, id)?
                .map(|o| docs::organizer(f, &o)),
            _ => None,
        };
        Ok(doc.map(|mut doc| {
            doc.add_u64(f.written, seq);
            doc
        }))
    }

    /// Events whose venue or organizers include any of `ids`.
    fn events_linking(&self, live: &Live, ids: &[u64]) -> IndexResult<Vec<u64>> {
        let f = &self.fields;
        let terms = ids
            .iter()
            .flat_map(|id| [f.key(Key::Venue, id), f.key(Key::Organizer, id)]);
        let query = tantivy::query::TermSetQuery::new(terms);
        Ok(values_in(live, &query, "id")?.into_iter().collect())
    }
}

/// Writes `docs` as one new segment of the writer's index, to be published by its next commit.
/// The writer's own indexing thread sizes every segment's term hash table from its memory
/// budget (at least 15 MB, so a table of 512K slots, allocated, filled and scanned for each
/// segment): for the few documents of a write that was about 40 % of the commit's CPU.
fn add_small_segment(writer: &IndexWriter, docs: Vec<TantivyDocument>) -> IndexResult<()> {
    let segment = writer.new_segment();
    let mut segment_writer = SegmentWriter::for_segment(SMALL_SEGMENT_MEMORY, segment.clone())?;
    for document in docs {
        // Opstamps order documents against deletes applied while a segment is written; this
        // one is complete before it joins the index, and from then on every queued delete
        // applies to it: an update's delete names only the documents written before it.
        segment_writer.add_document(AddOperation {
            opstamp: 0,
            document,
        })?;
    }
    let max_doc = segment_writer.max_doc();
    segment_writer.finalize()?;
    let meta = segment.with_max_doc(max_doc).meta().clone();
    meta.untrack_temp_docstore();
    writer.add_segment(meta)?;
    Ok(())
}
