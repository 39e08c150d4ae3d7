//! `almanac export`: every record as a JSON line (see the module above for the format).

use super::{collection, KindCounts, FEED_LINES};
use crate::http::links::Links;
use crate::http::render::{self, EventParts, LinkedContext};
use crate::http::resources::linked::LinkedResource;
use crate::model::event::Event;
use crate::model::post::{Organizer, PostMeta, Venue};
use crate::model::series::OccurrenceState;
use crate::model::term::Term;
use crate::model::Kind;
use crate::store::{ReadTx, Reads, Store, StoreError};
use chrono::NaiveDateTime;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::Write;

pub(crate) type ExportSummary = KindCounts;

/// Why an export stopped.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot write the export: {0}")]
    Output(#[from] std::io::Error),
}

struct Exporter<'a, W: Write> {
    rx: ReadTx,
    links: Links,
    now: NaiveDateTime,
    out: &'a mut W,
    counts: KindCounts,
    /// Representations embedded in events, built once per record.
    embedded: HashMap<(Kind, u64), Value>,
}

/// Writes every record of the store to `out`; `public_url` is the base of the links in the
/// representations (they are not read back by import).
pub(crate) fn export<W: Write>(
    store: &Store,
    public_url: &str,
    out: &mut W,
) -> Result<ExportSummary, ExportError> {
    let mut exporter = Exporter {
        rx: store.read()?,
        links: Links::new(public_url.into(), None),
        now: chrono::Utc::now().naive_utc(),
        out,
        counts: KindCounts::default(),
        embedded: HashMap::new(),
    };
    exporter.terms(Kind::Category)?;
    exporter.terms(Kind::Tag)?;
    exporter.linked::<Venue>()?;
    exporter.linked::<Organizer>()?;
    let rx = store.read()?;
    // A series is written with its rule and its occurrences' IDs and states, followed by its
    // exceptions; its other occurrences are its fields at the rule's dates.
    rx.for_each(Kind::Event, |event: Event| {
        if rx.occurrence_of(event.post.id)?.is_some() {
            return Ok::<(), ExportError>(());
        }
        exporter.event(&event)?;
        let Some(series) = rx.series(event.post.id)? else {
            return Ok(());
        };
        for occurrence in &series.occurrences {
            if occurrence.state != OccurrenceState::Exception {
                continue;
            }
            if let Some(exception) = rx.get_record::<Event>(Kind::Event, occurrence.id)? {
                exporter.event(&exception)?;
            }
        }
        Ok(())
    })?;
    exporter.feeds()?;
    exporter.out.flush()?;
    Ok(exporter.counts)
}

impl<W: Write> Exporter<'_, W> {
    fn line(&mut self, kind: Kind, data: Value) -> Result<(), ExportError> {
        serde_json::to_writer(
            &mut *self.out,
            &json!({"resource": collection(kind), "data": data}),
        )
        .map_err(std::io::Error::from)?;
        self.out.write_all(b"\n")?;
        self.counts.add(kind);
        Ok(())
    }

    /// What iCalendar mirrors know of their feeds: validators, then each UID's event.
    fn feeds(&mut self) -> Result<(), ExportError> {
        for source in self.rx.feed_sources()? {
            if let Some(validators) = self.rx.feed_validators(&source)? {
                let data = json!({"source": source, "etag": validators.etag,
                                  "last_modified": validators.last_modified});
                self.feed_line(FEED_LINES[0], data)?;
            }
            for (uid, item) in self.rx.feed_items(&source)? {
                let instances: Vec<String> = item
                    .instances
                    .iter()
                    .map(crate::values::datetime::format)
                    .collect();
                let data = json!({"source": source, "uid": uid, "event": item.event,
                                  "fingerprint": item.fingerprint.to_string(),
                                  "instances": instances});
                self.feed_line(FEED_LINES[1], data)?;
            }
        }
        Ok(())
    }

    fn feed_line(&mut self, resource: &str, data: Value) -> Result<(), ExportError> {
        serde_json::to_writer(&mut *self.out, &json!({"resource": resource, "data": data}))
            .map_err(std::io::Error::from)?;
        self.out.write_all(b"\n")?;
        self.counts.feed_lines += 1;
        Ok(())
    }

    /// Categories with every parent before its children, then tags.
    fn terms(&mut self, kind: Kind) -> Result<(), ExportError> {
        let mut pending: Vec<Term> = self.rx.scan(kind)?;
        let mut written = std::collections::HashSet::new();
        while !pending.is_empty() {
            let (ready, rest): (Vec<Term>, Vec<Term>) = pending
                .into_iter()
                .partition(|t| t.parent == 0 || written.contains(&t.parent));
            // Parents that no longer exist (or a cycle in damaged data) must not stall the
            // export: the rest is written as it is, and import reports the dangling parents.
            let (ready, rest) = if ready.is_empty() {
                (rest, Vec::new())
            } else {
                (ready, rest)
            };
            for term in ready {
                written.insert(term.id);
                let id = term.id;
                let view = crate::service::terms::view(&self.rx, term, &HashMap::new())
                    .map_err(service_store_error)?;
                let mut data = render::term(&view, &self.links, None);
                if let Some(map) = data.as_object_mut() {
                    map.remove("_links");
                }
                self.embedded
                    .insert((kind, id), render::embedded_term(&view, &self.links));
                self.line(kind, data)?;
            }
            pending = rest;
        }
        Ok(())
    }

    fn linked_context(&self, meta: &PostMeta, kind: Kind) -> Result<LinkedContext<'_>, StoreError> {
        Ok(LinkedContext {
            links: &self.links,
            now: self.now,
            image: match meta.image {
                Some(id) => self.rx.image(id)?,
                None => None,
            },
            translations: self.rx.group_members(kind, meta.group)?,
            json_ld: false,
        })
    }

    fn linked<R: LinkedResource>(&mut self) -> Result<(), ExportError> {
        for record in self.rx.scan::<R>(R::KIND)? {
            let meta = record.meta();
            let ctx = self.linked_context(meta, R::KIND)?;
            let embedded = record.represent(&ctx);
            let mut data = embedded.clone();
            render::export_post(&mut data, meta);
            self.embedded.insert((R::KIND, meta.id), embedded);
            self.line(R::KIND, data)?;
        }
        Ok(())
    }

    fn embedded_list(&self, kind: Kind, ids: &[u64]) -> Vec<Value> {
        ids.iter()
            .filter_map(|id| self.embedded.get(&(kind, *id)).cloned())
            .collect()
    }

    /// An event's categories or tags, in the order of its representations.
    fn embedded_terms(&self, kind: Kind, ids: &[u64]) -> Result<Vec<Value>, StoreError> {
        let mut terms = Vec::with_capacity(ids.len());
        for id in ids {
            terms.extend(self.rx.get_record::<Term>(kind, *id)?);
        }
        terms.sort_by(crate::service::terms::event_order);
        Ok(terms
            .iter()
            .filter_map(|t| self.embedded.get(&(kind, t.id)).cloned())
            .collect())
    }

    fn event(&mut self, event: &Event) -> Result<(), ExportError> {
        let meta = &event.post;
        let parts = EventParts {
            links: &self.links,
            now: self.now,
            image: match meta.image {
                Some(id) => self.rx.image(id)?,
                None => None,
            },
            venue: event
                .venue
                .and_then(|id| self.embedded.get(&(Kind::Venue, id)).cloned()),
            organizers: self.embedded_list(Kind::Organizer, &event.organizers),
            categories: self.embedded_terms(Kind::Category, &event.categories)?,
            tags: self.embedded_terms(Kind::Tag, &event.tags)?,
            translations: self.rx.group_members(Kind::Event, meta.group)?,
            json_ld: None,
            masked: false,
            recurring: crate::service::series::recurring(&self.rx, meta.id)?,
        };
        let recurring = parts.recurring.clone();
        let mut data = render::event(event, parts);
        render::export_event(&mut data, event, &recurring);
        self.line(Kind::Event, data)
    }
}

fn service_store_error(e: crate::service::ServiceError) -> ExportError {
    match e {
        crate::service::ServiceError::Store(e) => ExportError::Store(e),
        other => ExportError::Output(std::io::Error::other(format!("{other:?}"))),
    }
}
