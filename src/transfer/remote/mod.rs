//! `almanac import --from URL`: copies a calendar from another site's events API (The Events
//! Calendar's or another almanac's) and, run again, brings the copy up to date; with
//! `mirror`, records gone from the source are trashed (docs/operations.md, "Moving in from
//! WordPress").
//!
//! The walk reads categories, tags, venues, organizers and events (in that order, so that
//! every reference points backwards), each with the source's own paging and with the
//! parameters that make it complete: every date, empty terms, venues and organizers without
//! upcoming events, and with credentials every status and (at an almanac) the lossless
//! `context=export` form. Each page is loaded in one store transaction by the same rules as
//! `almanac import FILE` (a refused record is reported and leaves nothing), except that a
//! stored record is replaced when the source's `modified_utc` differs.

mod source;

use super::collection;
use super::import::{load_record, KnownLanguages, LoadRules, Loaded, RecordError};
use crate::model::event::Event;
use crate::model::post::{Organizer, PostMeta, Venue};
use crate::model::term::Term;
use crate::model::{Kind, Language, Status};
use crate::store::{Reads, Store, StoreError, WriteTx};
use serde_json::Value;
pub(crate) use source::Connection;
use source::{Flavour, Page, Source, SourceError};
use std::collections::{HashMap, HashSet};

/// Records per page asked of the source (the most both APIs give).
const PER_PAGE: u32 = 50;

/// The date window that holds every event (the default is only yesterday plus two years).
const EVERY_START: &str = "1900-01-01 00:00:00";
const EVERY_END: &str = "2999-12-31 23:59:59";

/// Every status, for a reader with credentials (the source answers with those it may read).
const EVERY_STATUS: &str = "publish,future,draft,pending,private,trash";

/// What to copy and how.
pub(crate) struct PullOptions {
    /// The REST root of the source's events API.
    pub url: String,
    pub connection: Connection,
    /// At an almanac source: copy only this language (default: all three). At The Events
    /// Calendar: the language of the copied records (default: English).
    pub language: Option<Language>,
    /// Trash (terms: delete) the records of the copied kinds and languages that are no longer
    /// at the source, after a walk without errors.
    pub mirror: bool,
    /// Pages fetched at once.
    pub concurrency: usize,
}

/// What a run did, record by record.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PullSummary {
    pub added: u64,
    pub updated: u64,
    pub unchanged: u64,
    pub trashed: u64,
    pub refused: u64,
}

impl PullSummary {
    /// Each outcome's name and count, as the metrics and the log report them.
    pub(crate) fn outcomes(&self) -> [(&'static str, u64); 5] {
        [
            ("added", self.added),
            ("updated", self.updated),
            ("unchanged", self.unchanged),
            ("trashed", self.trashed),
            ("refused", self.refused),
        ]
    }
}

impl std::fmt::Display for PullSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, (outcome, n)) in self.outcomes().into_iter().enumerate() {
            let separator = if i == 0 { "" } else { ", " };
            write!(f, "{separator}{outcome} {n}")?;
        }
        Ok(())
    }
}

/// What a run reports as it goes.
pub(crate) enum PullEvent {
    /// The source announced this many more records.
    Announced(u64),
    /// This many more records were handled.
    Handled(u64),
    /// A record the store cannot take, left out.
    Refused {
        kind: Kind,
        id: String,
        reason: String,
    },
    /// Something the operator should know of how the run went.
    Notice(String),
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum PullError {
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot trash {0}")]
    Trash(String),
}

/// Copies the source into `store`; on an error the records loaded so far stay and nothing
/// is trashed.
pub(crate) fn pull(
    store: &Store,
    options: &PullOptions,
    report: &mut dyn FnMut(PullEvent),
) -> Result<PullSummary, PullError> {
    let source = Source::open(
        &options.url,
        Connection {
            user: options.connection.user.clone(),
            ..options.connection
        },
    )?;
    let languages: Vec<Language> = match (source.flavour, options.language) {
        (Flavour::Almanac, Some(language)) => vec![language],
        (Flavour::Almanac, None) => Language::ALL.to_vec(),
        (Flavour::EventsCalendar, language) => vec![language.unwrap_or(Language::En)],
    };
    let mut copier = Copier {
        store,
        source: &source,
        options,
        rules: LoadRules {
            shift: chrono::Duration::zero(),
            replace: true,
            default_language: (source.flavour == Flavour::EventsCalendar).then(|| languages[0]),
            clean_html: true,
            wordpress: source.flavour == Flavour::EventsCalendar,
        },
        known: KnownLanguages::default(),
        seen: HashSet::new(),
        exceptions: HashMap::new(),
        summary: PullSummary::default(),
        report,
    };
    // Another almanac read in the export form is followed through its change feed once a
    // walk has copied it whole: the token reached is kept in the store.
    let sync_key = copier.follows().then(|| sync_key(options));
    if let Some(key) = &sync_key {
        if let Some(token) = store.read()?.sync_token(key)? {
            match copier.follow(&token)? {
                Followed::To(next) => {
                    store.write(|tx| tx.set_sync_token(key, Some(&next)))?;
                    return Ok(copier.summary);
                }
                Followed::Expired => (copier.report)(PullEvent::Notice(
                    "the source no longer keeps its changes since the last run: copying it whole"
                        .into(),
                )),
                Followed::TooMany => (copier.report)(PullEvent::Notice(format!(
                    "more than {FOLLOW_LIMIT} records changed at the source: copying it whole"
                ))),
            }
        }
    }
    // The token of now, read before the walk: what changes during it is followed next time.
    let start = match &sync_key {
        Some(_) => copier.latest_token()?,
        None => None,
    };
    for kind in LOAD_ORDER {
        for language in &languages {
            copier.walk(kind, *language)?;
        }
    }
    if options.mirror {
        copier.trash_missing(&languages)?;
    }
    if let (Some(key), Some(token)) = (&sync_key, start) {
        store.write(|tx| tx.set_sync_token(key, Some(&token)))?;
    }
    Ok(copier.summary)
}

/// Kinds in the order they are loaded, so that every reference points backwards.
const LOAD_ORDER: [Kind; 5] = [
    Kind::Category,
    Kind::Tag,
    Kind::Venue,
    Kind::Organizer,
    Kind::Event,
];

/// Changes per page asked of a change feed (the most it gives).
const CHANGES_PER_PAGE: u32 = 500;

/// Most changed records a run follows; beyond, walking the source whole costs less memory.
const FOLLOW_LIMIT: usize = 50_000;

/// Under which name the store keeps the change feed token of a copy: the source, the reader,
/// the language and whether deletions are mirrored (a token reached without them would skip
/// the deletions a mirror must apply).
fn sync_key(options: &PullOptions) -> String {
    let reader = options
        .connection
        .user
        .as_ref()
        .map_or("", |(name, _)| name);
    let language = options.language.map_or("all", |l| l.code());
    let mirror = if options.mirror { "mirror" } else { "copy" };
    format!("{} {reader} {language} {mirror}", options.url)
}

/// Where following a change feed ended.
enum Followed {
    /// Every change applied, up to this token.
    To(String),
    /// The source has forgotten changes since the token.
    Expired,
    /// More changes than [`FOLLOW_LIMIT`].
    TooMany,
}

struct Copier<'a> {
    store: &'a Store,
    source: &'a Source,
    options: &'a PullOptions,
    rules: LoadRules,
    known: KnownLanguages,
    /// Every record the source listed (refused ones included: they exist there).
    seen: HashSet<(Kind, u64)>,
    /// The series read so far in the export form, with the IDs of their exceptions.
    exceptions: HashMap<u64, HashSet<u64>>,
    summary: PullSummary,
    report: &'a mut dyn FnMut(PullEvent),
}

impl Copier<'_> {
    /// Whether the source is read in the editors' lossless form.
    fn export_form(&self) -> bool {
        self.source.flavour == Flavour::Almanac && self.options.connection.user.is_some()
    }

    /// Whether the source is followed through its change feed: another almanac, read in the
    /// export form (the feed's records are then exactly what a walk loads).
    fn follows(&self) -> bool {
        self.export_form()
    }

    /// The source's change feed token of now (`None` when it has no change feed).
    fn latest_token(&self) -> Result<Option<String>, PullError> {
        let query = [("since", "latest".to_string())];
        match self.source.get(self.source.url("changes", &query)) {
            Ok(page) => Ok(page
                .body
                .get("next_token")
                .and_then(Value::as_str)
                .map(str::to_string)),
            Err(e) if e.status == Some(404) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Applies the source's changes after `token`: changed records are loaded (in the walk's
    /// kind order, so that references point backwards), and with `mirror` records deleted at
    /// the source (or no longer readable there) are trashed, terms deleted.
    fn follow(&mut self, token: &str) -> Result<Followed, PullError> {
        // (kind, ID) → (arrival, record; `None`: gone).
        let mut changed: HashMap<(Kind, u64), (usize, Option<Value>)> = HashMap::new();
        let mut since = token.to_string();
        let mut arrivals = 0;
        let next = loop {
            let mut query = vec![
                ("since", since.clone()),
                ("per_page", CHANGES_PER_PAGE.to_string()),
                ("context", "export".to_string()),
            ];
            query.extend(
                self.options
                    .language
                    .and_then(|l| self.source.language_param(l)),
            );
            let url = self.source.url("changes", &query);
            let page = match self.source.get(url.clone()) {
                Ok(page) => page.body,
                Err(e) if e.status == Some(410) => return Ok(Followed::Expired),
                Err(e) => return Err(e.into()),
            };
            let entries = page.get("changes").and_then(Value::as_array);
            for entry in entries.into_iter().flatten() {
                let kind = entry
                    .get("kind")
                    .and_then(Value::as_str)
                    .and_then(Kind::from_name);
                let id = entry.get("id").and_then(Value::as_u64);
                if let (Some(kind), Some(id)) = (kind, id) {
                    arrivals += 1;
                    changed.insert((kind, id), (arrivals, entry.get("record").cloned()));
                }
            }
            if changed.len() > FOLLOW_LIMIT {
                return Ok(Followed::TooMany);
            }
            let text = |name: &str| page.get(name).and_then(Value::as_str).map(str::to_string);
            match (text("next_page_token"), text("next_token")) {
                (Some(next_page), _) => since = next_page,
                (None, Some(next)) => break next,
                (None, None) => {
                    return Err(PullError::Source(SourceError {
                        url: url.to_string(),
                        message: "a change feed page without next_page_token or next_token".into(),
                        status: None,
                        unknown_id: false,
                    }))
                }
            }
        };
        let mut ordered: Vec<_> = changed.into_iter().collect();
        ordered.sort_by_key(|((kind, _), (arrival, _))| {
            (LOAD_ORDER.iter().position(|k| k == kind), *arrival)
        });
        let mut gone = HashSet::new();
        for kind in LOAD_ORDER {
            let mut records = Vec::new();
            for ((of, id), (_, record)) in &ordered {
                match record {
                    Some(record) if *of == kind => records.push(record.clone()),
                    None if *of == kind => {
                        gone.insert((kind, *id));
                    }
                    _ => {}
                }
            }
            (self.report)(PullEvent::Announced(records.len() as u64));
            if kind == Kind::Category {
                records = parents_first(records);
            }
            let mut records = records.into_iter().peekable();
            while records.peek().is_some() {
                let page: Vec<Value> = records.by_ref().take(PER_PAGE as usize).collect();
                self.load(kind, page)?;
            }
        }
        if self.options.mirror {
            self.remove(gone)?;
        }
        Ok(Followed::To(next))
    }

    /// The query of a walk through `kind` in `language` (page 1).
    fn list_query(&self, kind: Kind, language: Language) -> Vec<(&'static str, String)> {
        let mut query = vec![("per_page", PER_PAGE.to_string())];
        match kind {
            Kind::Category | Kind::Tag => query.push(("hide_empty", "false".into())),
            Kind::Venue | Kind::Organizer => query.push(("only_with_upcoming", "false".into())),
            Kind::Event => {
                query.push(("start_date", EVERY_START.into()));
                query.push(("end_date", EVERY_END.into()));
            }
        }
        let has_status = matches!(kind, Kind::Event | Kind::Venue | Kind::Organizer);
        if has_status && self.options.connection.user.is_some() {
            query.push(("status", EVERY_STATUS.into()));
        }
        if has_status && self.export_form() {
            query.push(("context", "export".into()));
        }
        query.extend(self.source.language_param(language));
        query
    }

    /// Reads every page of `kind` in `language` and loads its records.
    fn walk(&mut self, kind: Kind, language: Language) -> Result<(), PullError> {
        let query = self.list_query(kind, language);
        let first = self.source.get(self.source.url(collection(kind), &query))?;
        let total_pages = first
            .total_pages
            .or_else(|| first.body.get("total_pages").and_then(Value::as_u64))
            .unwrap_or(1);
        let total = first
            .total
            .or_else(|| first.body.get("total").and_then(Value::as_u64))
            .unwrap_or(0);
        (self.report)(PullEvent::Announced(total));
        // Categories wait for the whole list: a child may be listed before its parent.
        let mut terms = Vec::new();
        let mut take = |copier: &mut Self, page: Page| -> Result<(), PullError> {
            let records = members(&page.body, kind);
            if kind == Kind::Category {
                terms.extend(records);
                Ok(())
            } else {
                copier.load(kind, records)
            }
        };
        take(self, first)?;
        // The next pages are this query with `page=N` (The Events Calendar's own links for
        // terms drop the query), fetched a few at a time and loaded in order.
        let concurrency = self.options.concurrency.max(1) as u64;
        let mut next = 2;
        while next <= total_pages {
            let last = (next + concurrency - 1).min(total_pages);
            let urls: Vec<_> = (next..=last)
                .map(|page| {
                    let mut query = query.clone();
                    query.push(("page", page.to_string()));
                    self.source.url(collection(kind), &query)
                })
                .collect();
            let source = self.source;
            let pages: Vec<Result<Page, SourceError>> = std::thread::scope(|scope| {
                let fetches: Vec<_> = urls
                    .into_iter()
                    .map(|url| scope.spawn(move || source.get(url)))
                    .collect();
                fetches
                    .into_iter()
                    .map(|f| f.join().expect("a page fetch panicked"))
                    .collect()
            });
            for page in pages {
                take(self, page?)?;
            }
            next = last + 1;
        }
        if kind == Kind::Category {
            self.load(kind, parents_first(terms))?;
        }
        Ok(())
    }

    /// The records of a page of events as they are loaded. In the export form, a series is
    /// read (once, before the first of its occurrences) and loaded with its rule and its
    /// occurrences' IDs and states; of its occurrences only the exceptions are loaded, the
    /// others are its fields at the rule's dates. Otherwise each occurrence is copied as an
    /// event of its own, its slug made from its page's path.
    fn occurrences_resolved(&mut self, records: Vec<Value>) -> Result<Vec<Value>, PullError> {
        let mut loadable = Vec::with_capacity(records.len());
        for mut record in records {
            let Some(series) = record.get("series_id").and_then(Value::as_u64) else {
                loadable.push(record);
                continue;
            };
            if !self.export_form() {
                if let Some(map) = record.as_object_mut() {
                    map.remove("series_id");
                    map.remove("recurrence_id");
                    if let Some(Value::String(slug)) = map.get_mut("slug") {
                        *slug = slug.replace('/', "-");
                    }
                }
                loadable.push(record);
                continue;
            }
            if !self.exceptions.contains_key(&series) {
                self.load_series(series, &record)?;
            }
            let id = record.get("id").and_then(Value::as_u64).unwrap_or(0);
            if self
                .exceptions
                .get(&series)
                .is_some_and(|e| e.contains(&id))
            {
                loadable.push(record);
            } else {
                self.seen.insert((Kind::Event, id));
            }
        }
        Ok(loadable)
    }

    /// Reads the series `id` (in the language of its `occurrence`) and loads it.
    fn load_series(&mut self, id: u64, occurrence: &Value) -> Result<(), PullError> {
        let mut query: Vec<(&str, String)> = vec![("context", "export".into())];
        let language = occurrence
            .get("language")
            .and_then(Value::as_str)
            .and_then(Language::from_code);
        query.extend(language.and_then(|l| self.source.language_param(l)));
        let series = self
            .source
            .get(self.source.url(&format!("events/{id}"), &query))?
            .body;
        let exceptions = series
            .get("occurrences")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|o| o.get("state").and_then(Value::as_str) == Some("exception"))
            .filter_map(|o| o.get("id").and_then(Value::as_u64))
            .collect();
        self.exceptions.insert(id, exceptions);
        (self.report)(PullEvent::Announced(1));
        self.load_page(Kind::Event, vec![series])
    }

    /// Loads one page's records in one store transaction.
    fn load(&mut self, kind: Kind, records: Vec<Value>) -> Result<(), PullError> {
        let records = match kind {
            Kind::Event => {
                let listed = records.len() as u64;
                let records = self.occurrences_resolved(records)?;
                (self.report)(PullEvent::Handled(listed - records.len() as u64));
                records
            }
            _ => records,
        };
        self.load_page(kind, records)
    }

    fn load_page(&mut self, kind: Kind, records: Vec<Value>) -> Result<(), PullError> {
        let handled = records.len() as u64;
        let mut refused = Vec::new();
        let mut outcomes = Vec::new();
        for record in &records {
            if let Some(id) = record.get("id").and_then(Value::as_u64) {
                self.seen.insert((kind, id));
            }
        }
        let rules = self.rules;
        let known = &mut self.known;
        self.store.write(|tx| {
            outcomes.clear();
            refused.clear();
            for record in &records {
                let id = record
                    .get("id")
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "without an ID".into());
                if let Some(reason) = unreadable(kind, record) {
                    refused.push((id, reason.to_string()));
                    continue;
                }
                match load_record(tx, kind, record.clone(), &rules, known) {
                    Ok(loaded) => outcomes.push(loaded),
                    Err(RecordError::Refused(reason)) => refused.push((id, reason)),
                    Err(RecordError::Store(e)) => return Err(e),
                }
            }
            Ok::<(), StoreError>(())
        })?;
        for loaded in &outcomes {
            self.count(*loaded);
        }
        for (id, reason) in refused {
            self.summary.refused += 1;
            (self.report)(PullEvent::Refused { kind, id, reason });
        }
        (self.report)(PullEvent::Handled(handled));
        Ok(())
    }

    fn count(&mut self, loaded: Loaded) {
        match loaded {
            Loaded::Added => self.summary.added += 1,
            Loaded::Updated => self.summary.updated += 1,
            Loaded::Unchanged => self.summary.unchanged += 1,
        }
    }

    /// Trashes (terms: deletes) the stored records of the walked kinds and languages that the
    /// walk did not see, each first asked of the source by ID: a record that a shifting list
    /// hid from the walk (or that lists never show, such as events hidden from listings at
    /// The Events Calendar) is loaded instead.
    fn trash_missing(&mut self, languages: &[Language]) -> Result<(), PullError> {
        let candidates = self.missing(languages)?;
        let mut gone: Vec<(Kind, u64)> = Vec::new();
        for (kind, id, language) in candidates {
            let mut query: Vec<(&str, String)> = Vec::new();
            if self.export_form() && kind != Kind::Category && kind != Kind::Tag {
                query.push(("context", "export".into()));
            }
            query.extend(self.source.language_param(language));
            let url = self
                .source
                .url(&format!("{}/{id}", collection(kind)), &query);
            match self.source.get(url) {
                Ok(page) => self.load(kind, vec![page.body])?,
                Err(e) if e.record_gone() => gone.push((kind, id)),
                Err(e) => return Err(e.into()),
            }
        }
        self.remove(gone.into_iter().collect())
    }

    /// Trashes (terms: deletes) the stored records of `gone` that are not in the trash yet.
    fn remove(&mut self, gone: HashSet<(Kind, u64)>) -> Result<(), PullError> {
        let gone: HashSet<(Kind, u64)> = {
            let rx = self.store.read()?;
            let mut held = HashSet::new();
            for (kind, id) in gone {
                let present = match kind {
                    Kind::Category | Kind::Tag => rx.get_record::<Term>(kind, id)?.is_some(),
                    _ => rx
                        .get_record::<PostMeta>(kind, id)?
                        .is_some_and(|meta| meta.status != Status::Trash),
                };
                if present {
                    held.insert((kind, id));
                }
            }
            held
        };
        if gone.is_empty() {
            return Ok(());
        }
        // Events that change between this read and the write below are the source's
        // (already loaded by the walk), not a writer's: the mirror is the calendar's only
        // writer.
        let referring = events_referring(self.store, &gone)?;
        let now = chrono::Utc::now().naive_utc();
        self.store
            .write(|tx| remove_gone(tx, &gone, &referring, now))?;
        self.summary.trashed += gone.len() as u64;
        Ok(())
    }

    /// Stored records of the walked kinds and languages that the walk did not see (posts
    /// already in the trash are left there).
    fn missing(&self, languages: &[Language]) -> Result<Vec<(Kind, u64, Language)>, StoreError> {
        let rx = self.store.read()?;
        let mut missing = Vec::new();
        for kind in [Kind::Category, Kind::Tag] {
            for term in rx.scan::<Term>(kind)? {
                if languages.contains(&term.language) && !self.seen.contains(&(kind, term.id)) {
                    missing.push((kind, term.id, term.language));
                }
            }
        }
        for kind in [Kind::Venue, Kind::Organizer, Kind::Event] {
            rx.for_each(kind, |meta: PostMeta| {
                // Occurrences follow their series.
                if languages.contains(&meta.language)
                    && meta.status != Status::Trash
                    && !self.seen.contains(&(kind, meta.id))
                    && rx.occurrence_of(meta.id)?.is_none()
                {
                    missing.push((kind, meta.id, meta.language));
                }
                Ok::<(), StoreError>(())
            })?;
        }
        Ok(missing)
    }
}

/// The records of a list page (`{"events": [...]}`), or a single record's answer.
fn members(body: &Value, kind: Kind) -> Vec<Value> {
    match body {
        Value::Array(items) => items.clone(),
        _ => body
            .get(collection(kind))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
    }
}

/// Why a listed record cannot be copied, before it reaches the store: a password-protected
/// event that the source lists without its content (masked fields are `null`) would arrive
/// empty and unprotected.
fn unreadable(kind: Kind, record: &Value) -> Option<&'static str> {
    (kind == Kind::Event && record.get("all_day").is_some_and(Value::is_null)).then_some(
        "password-protected at the source, which lists it without its content or password",
    )
}

/// Categories with every parent before its children (parents the list does not hold come
/// first as they are: the store may know them, or the load refuses the child).
fn parents_first(mut terms: Vec<Value>) -> Vec<Value> {
    let id_of = |t: &Value| t.get("id").and_then(Value::as_u64).unwrap_or(0);
    let parent_of = |t: &Value| t.get("parent").and_then(Value::as_u64).unwrap_or(0);
    let listed: HashSet<u64> = terms.iter().map(id_of).collect();
    let mut placed: HashSet<u64> = HashSet::new();
    let mut ordered = Vec::with_capacity(terms.len());
    while !terms.is_empty() {
        let (ready, rest): (Vec<Value>, Vec<Value>) = terms.into_iter().partition(|t| {
            let parent = parent_of(t);
            parent == 0 || !listed.contains(&parent) || placed.contains(&parent)
        });
        if ready.is_empty() {
            // A cycle: the load refuses what it cannot place.
            ordered.extend(rest);
            break;
        }
        placed.extend(ready.iter().map(id_of));
        ordered.extend(ready);
        terms = rest;
    }
    ordered
}

/// Trashes the gone posts and deletes the gone terms, and takes them out of the events that
/// refer to them (docs/api.md: a trashed venue or organizer and a deleted term leave their
/// events without changing the events' `modified`).
fn remove_gone(
    tx: &mut WriteTx,
    set: &HashSet<(Kind, u64)>,
    referring: &[u64],
    now: chrono::NaiveDateTime,
) -> Result<(), PullError> {
    let mut trashed_events = Vec::new();
    for (kind, id) in set {
        match kind {
            Kind::Event => trashed_events.push(*id),
            Kind::Venue => trash_post::<Venue>(tx, *kind, *id, now, |v| &mut v.post)?,
            Kind::Organizer => trash_post::<Organizer>(tx, *kind, *id, now, |o| &mut o.post)?,
            Kind::Category | Kind::Tag => {
                if let Some(term) = tx.get_record::<Term>(*kind, *id)? {
                    crate::service::terms::remove(tx, &term)?;
                }
            }
        }
    }
    for id in trashed_events {
        trash_post::<Event>(tx, Kind::Event, id, now, |e| &mut e.post)?;
        // A series' occurrences go to the trash with it.
        if let Some(event) = tx.get_record::<Event>(Kind::Event, id)? {
            crate::service::series::follow(tx, &event, None, now).map_err(|e| match e {
                crate::service::ServiceError::Store(e) => PullError::Store(e),
                other => PullError::Trash(format!("event {id}: {other:?}")),
            })?;
        }
    }
    for &id in referring {
        let Some(mut event) = tx.get_record::<Event>(Kind::Event, id)? else {
            continue;
        };
        event.venue = event.venue.filter(|v| !set.contains(&(Kind::Venue, *v)));
        event
            .organizers
            .retain(|o| !set.contains(&(Kind::Organizer, *o)));
        event
            .categories
            .retain(|c| !set.contains(&(Kind::Category, *c)));
        event.tags.retain(|t| !set.contains(&(Kind::Tag, *t)));
        tx.put_record(Kind::Event, id, &event)?;
    }
    Ok(())
}

/// The events that refer to any of `gone` (their venue, an organizer or a term).
fn events_referring(store: &Store, gone: &HashSet<(Kind, u64)>) -> Result<Vec<u64>, StoreError> {
    let mut referring = Vec::new();
    store.read()?.for_each(Kind::Event, |event: Event| {
        let refers = event
            .venue
            .is_some_and(|v| gone.contains(&(Kind::Venue, v)))
            || event
                .organizers
                .iter()
                .any(|o| gone.contains(&(Kind::Organizer, *o)))
            || event
                .categories
                .iter()
                .any(|c| gone.contains(&(Kind::Category, *c)))
            || event.tags.iter().any(|t| gone.contains(&(Kind::Tag, *t)));
        if refers {
            referring.push(event.post.id);
        }
        Ok::<(), StoreError>(())
    })?;
    Ok(referring)
}

fn trash_post<R: serde::Serialize + serde::de::DeserializeOwned>(
    tx: &mut WriteTx,
    kind: Kind,
    id: u64,
    now: chrono::NaiveDateTime,
    meta: impl Fn(&mut R) -> &mut PostMeta,
) -> Result<(), PullError> {
    let Some(mut record) = tx.get_record::<R>(kind, id)? else {
        return Ok(());
    };
    crate::service::posts::trash(tx, kind, meta(&mut record), now).map_err(|e| match e {
        crate::service::ServiceError::Store(e) => PullError::Store(e),
        other => PullError::Trash(format!("{} {id}: {other:?}", kind.name())),
    })?;
    Ok(tx.put_record(kind, id, &record)?)
}
