//! Events: create, read by ID and slug, update, trash and the archive. The common
//! post rules come from [`super::posts`]; inline venues and organizers from [`super::linked`].

use crate::auth::capabilities;
use crate::auth::{Caller, Capability};
use crate::index::planner::{DateBounds, EventFilter, GeoFilter, Visibility};
pub(crate) use crate::index::Dependency;
use crate::index::{EventOrder, SearchIndex};
use crate::model::event::Event;
use crate::model::post::{Image, Organizer, PostMeta, Venue};
use crate::model::term::Term;
use crate::model::{Kind, Language, Status};
use crate::service::linked::{self, LinkedKind, LinkedView};
use crate::service::posts::{self, PostWrite};
use crate::service::series;
use crate::service::terms::{self, TermView};
use crate::service::Refusals;
use crate::service::Request;
use crate::service::{Page, ServiceError, ServiceResult};
use crate::store::{PostIdKind, ReadTx, Reads, Store, WriteTx};
use crate::values::cost::Cost;
use crate::values::datetime;
use crate::values::search::SearchQuery;
use crate::values::timezone::Zone;
use crate::values::{slug, Invalid, SubCode};
use chrono::{Duration, NaiveDateTime, NaiveTime};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A category or tag named in an event write.
#[derive(Debug, Clone)]
pub(crate) enum TermRef {
    Id(u64),
    Name(String),
}

/// A venue or organizer named in an event write.
#[derive(Debug, Clone)]
pub(crate) enum LinkRef<R: LinkedKind> {
    Id(u64),
    Inline(Box<(PostWrite, R::Fields)>),
    /// The record of this name, linked as it is; made with these fields when there is none
    /// (a copier's link: what it copies does not change records people made).
    Named(Box<(PostWrite, R::Fields)>),
}

/// The event's own write fields; `None` = not sent.
#[derive(Debug, Clone, Default)]
pub(crate) struct EventFields {
    pub start_date: Option<Value>,
    pub end_date: Option<Value>,
    pub timezone: Option<Zone>,
    pub all_day: Option<bool>,
    pub cost: Option<Cost>,
    pub website: Option<String>,
    pub show_map: Option<bool>,
    pub show_map_link: Option<bool>,
    pub hide_from_listings: Option<bool>,
    pub sticky: Option<bool>,
    pub featured: Option<bool>,
    pub ticketed: Option<bool>,
    pub categories: Option<Vec<TermRef>>,
    pub tags: Option<Vec<TermRef>>,
    /// `Some(None)` unlinks the venue.
    pub venue: Option<Option<LinkRef<Venue>>>,
    pub organizers: Option<Vec<LinkRef<Organizer>>>,
    /// `Some("")` removes the password.
    pub password: Option<String>,
    pub post_parent: Option<u64>,
    pub slug: Option<String>,
    /// `recurrence` lines; empty: the event stops repeating.
    pub recurrence: Option<Vec<String>>,
    /// `scope=following`: an update of an occurrence splits its series there.
    pub following: bool,
}

fn refuse(invalid: &mut Refusals, name: &str, reason: &str) {
    invalid.push((
        name.into(),
        Invalid::new(SubCode::InvalidReference, reason.to_string()),
    ));
}

/// Checks of the event's references in `language` (the event's language). A record
/// the caller may not read is refused as if it did not exist: linking must not tell which
/// drafts exist (see docs/api.md, "Security decisions").
fn check_references(
    tx: &impl Reads,
    request: &Request,
    language: Language,
    own_id: Option<u64>,
    fields: &EventFields,
    invalid: &mut Refusals,
) -> ServiceResult<()> {
    let in_language = |kind: Kind, id: u64| -> ServiceResult<bool> {
        Ok(tx.get_record::<PostMeta>(kind, id)?.is_some_and(|m| {
            m.language == language && posts::can_read(request.caller, &m, request.now)
        }))
    };
    if let Some(Some(LinkRef::Id(id))) = &fields.venue {
        if tx.post_kind_of(*id)? != Some(PostIdKind::Record(Kind::Venue))
            || !in_language(Kind::Venue, *id)?
        {
            refuse(
                invalid,
                "venue",
                "must name an existing venue in the event's language.",
            );
        }
    }
    if let Some(organizers) = &fields.organizers {
        for link in organizers {
            if let LinkRef::Id(id) = link {
                if tx.post_kind_of(*id)? != Some(PostIdKind::Record(Kind::Organizer))
                    || !in_language(Kind::Organizer, *id)?
                {
                    refuse(
                        invalid,
                        "organizer",
                        "must name existing organizers in the event's language.",
                    );
                    break;
                }
            }
        }
    }
    if let Some(parent) = fields.post_parent.filter(|p| *p != 0) {
        let ok = Some(parent) != own_id
            && tx.post_kind_of(parent)? == Some(PostIdKind::Record(Kind::Event))
            && in_language(Kind::Event, parent)?;
        if !ok {
            refuse(
                invalid,
                "post_parent",
                "must name another existing event in the same language.",
            );
        }
    }
    Ok(())
}

/// Parses `start_date`/`end_date` in the event's time zone and applies the all-day and
/// end-before-start rules. `current` holds the stored values on update.
///
/// Validation read the values in UTC; in the event's zone a value near the ends of the range
/// may not exist (`9999-12-31 23:00` in `UTC-1` is in year 10000), and the all-day end of day or
/// a new zone for the stored wall clocks can carry the UTC values beyond 0001–9999 although
/// every value sent was in range. Either way the write is refused, naming the date concerned,
/// rather than the value being dropped or written in a form that is no longer
/// `YYYY-MM-DD HH:MM:SS`.
fn schedule_dates(
    event: &mut Event,
    fields: &EventFields,
    zone: &Zone,
    now: chrono::DateTime<chrono::Utc>,
) -> ServiceResult<()> {
    let mut invalid: Refusals = Vec::new();
    let mut parse = |name: &str, v: &Value| match datetime::parse(v, zone, now) {
        Ok(d) => Some(d.local),
        Err(why) => {
            invalid.push((name.to_owned(), why));
            None
        }
    };
    let start = fields
        .start_date
        .as_ref()
        .and_then(|v| parse("start_date", v));
    let end = fields.end_date.as_ref().and_then(|v| parse("end_date", v));
    super::refuse_any(invalid)?;
    if let Some(start) = start {
        event.start_local = start;
    }
    if let Some(end) = end {
        event.end_local = end;
    }
    if let Some(all_day) = fields.all_day {
        event.all_day = all_day;
    }
    if event.all_day {
        event.start_local = event.start_local.date().and_time(NaiveTime::MIN);
        event.end_local = event
            .end_local
            .date()
            .and_hms_opt(23, 59, 59)
            .expect("23:59:59 is a valid time");
    }
    if event.end_local < event.start_local {
        event.end_local = event.start_local;
    }
    event.place_in(zone);
    let first = chrono::NaiveDate::from_ymd_opt(1, 1, 1)
        .expect("a valid date")
        .and_time(NaiveTime::MIN);
    let last = chrono::NaiveDate::from_ymd_opt(9999, 12, 31)
        .expect("a valid date")
        .and_hms_opt(23, 59, 59)
        .expect("a valid time");
    let outside = [("start_date", event.start_utc), ("end_date", event.end_utc)]
        .into_iter()
        .filter(|(_, utc)| !(first..=last).contains(utc))
        .map(|(name, _)| {
            let why = Invalid::new(
                SubCode::InvalidFormat,
                "is outside the supported range 0001-01-01 00:00:00 to 9999-12-31 23:59:59 \
                 once converted to UTC.",
            );
            (name.to_owned(), why)
        })
        .collect();
    super::refuse_any(outside)
}

/// Resolves term references: IDs of the language are kept, unknown IDs skipped, names
/// looked up by slug then by exact name, and created when missing.
fn resolve_terms(
    tx: &mut WriteTx,
    kind: Kind,
    language: Language,
    refs: &[TermRef],
) -> ServiceResult<Vec<u64>> {
    let mut ids: Vec<u64> = Vec::new();
    for r in refs {
        let id = match r {
            TermRef::Id(id) => tx
                .get_record::<Term>(kind, *id)?
                .filter(|t| t.language == language)
                .map(|t| t.id),
            TermRef::Name(name) => Some(super::terms::find_or_create(tx, kind, language, name)?),
        };
        if let Some(id) = id {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    Ok(ids)
}

fn link<R: LinkedKind>(
    tx: &mut WriteTx,
    request: &Request,
    link: &LinkRef<R>,
) -> ServiceResult<u64> {
    match link {
        LinkRef::Id(id) => Ok(*id),
        LinkRef::Inline(inline) => {
            let (write, fields) = inline.as_ref();
            Ok(linked::insert::<R>(tx, request, write, fields)?.meta().id)
        }
        LinkRef::Named(named) => {
            let (write, fields) = named.as_ref();
            match linked::named::<R>(tx, request, write)? {
                Some(id) => Ok(id),
                None => Ok(linked::insert::<R>(tx, request, write, fields)?.meta().id),
            }
        }
    }
}

/// Applies the event's own fields (create and update alike; absent fields unchanged).
fn apply_fields(
    tx: &mut WriteTx,
    request: &Request,
    event: &mut Event,
    fields: &EventFields,
    stored_zone: Option<Zone>,
) -> ServiceResult<()> {
    let language = event.post.language;
    let zone = fields.timezone.clone().or(stored_zone).unwrap_or(Zone::Utc);
    schedule_dates(event, fields, &zone, request.now.and_utc())?;
    macro_rules! set {
        ($($field:ident),*) => {$(
            if let Some(v) = fields.$field {
                event.$field = v;
            }
        )*};
    }
    set!(
        show_map,
        show_map_link,
        hide_from_listings,
        sticky,
        featured,
        ticketed,
        post_parent
    );
    if let Some(cost) = &fields.cost {
        event.cost = cost.clone();
    }
    if let Some(website) = &fields.website {
        event.website = website.clone();
    }
    if let Some(password) = &fields.password {
        event.password = (!password.is_empty()).then(|| password.clone());
    }
    if let Some(refs) = &fields.categories {
        event.categories = resolve_terms(tx, Kind::Category, language, refs)?;
    }
    if let Some(refs) = &fields.tags {
        event.tags = resolve_terms(tx, Kind::Tag, language, refs)?;
    }
    let linked_request = Request {
        language,
        ..*request
    };
    if let Some(venue) = &fields.venue {
        event.venue = match venue {
            Some(v) => Some(link(tx, &linked_request, v)?),
            None => None,
        };
    }
    if let Some(organizers) = &fields.organizers {
        let mut ids = Vec::new();
        for o in organizers {
            let id = link(tx, &linked_request, o)?;
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        event.organizers = ids;
    }
    Ok(())
}

/// `POST /events`.
pub(crate) fn create(
    store: &Store,
    request: &Request,
    write: &PostWrite,
    fields: &EventFields,
    invalid: Refusals,
) -> ServiceResult<Event> {
    create_and(store, request, write, fields, invalid, |_, _| Ok(()))
}

/// [`create`], and `also` in the same transaction once the event is written (what a copier
/// records of the new event is then never without it, nor it without that).
pub(crate) fn create_and(
    store: &Store,
    request: &Request,
    write: &PostWrite,
    fields: &EventFields,
    mut invalid: Refusals,
    also: impl FnOnce(&mut WriteTx, &Event) -> ServiceResult<()>,
) -> ServiceResult<Event> {
    store.write(|tx| {
        posts::check_references(
            tx,
            Kind::Event,
            request.caller,
            write,
            request.now,
            &mut invalid,
        )?;
        check_references(tx, request, request.language, None, fields, &mut invalid)?;
        super::refuse_any(invalid)?;
        if !request.caller.has(Capability::EditPosts) {
            return Err(ServiceError::Forbidden);
        }
        posts::check_author_change(request.caller, write)?;
        let meta = posts::new_meta(
            tx,
            Kind::Event,
            request.caller,
            write,
            request.language,
            fields.slug.as_deref(),
            request.now,
        )?;
        let mut event = Event {
            post: meta,
            start_local: request.now,
            end_local: request.now,
            start_utc: request.now,
            end_utc: request.now,
            timezone: "UTC".into(),
            timezone_abbr: "UTC".into(),
            all_day: false,
            cost: Cost::default(),
            website: String::new(),
            show_map: false,
            show_map_link: false,
            hide_from_listings: false,
            sticky: false,
            featured: false,
            ticketed: false,
            post_parent: 0,
            categories: Vec::new(),
            tags: Vec::new(),
            venue: None,
            organizers: Vec::new(),
            password: None,
        };
        apply_fields(tx, request, &mut event, fields, None)?;
        posts::join(
            tx,
            &mut event,
            write.translation_of,
            request.caller,
            request.now,
        )?;
        tx.put_record(Kind::Event, event.post.id, &event)?;
        series::follow(tx, &event, fields.recurrence.as_deref(), request.now)?;
        also(tx, &event)?;
        Ok(event)
    })
}

/// A visitor's proposal: created by the contributor's rules as nobody's event, pending review
/// whatever the form asked for, and so are the venue and organizers it creates inline.
pub(crate) fn propose(
    store: &Store,
    language: Language,
    now: NaiveDateTime,
    write: &PostWrite,
    fields: &EventFields,
    invalid: Refusals,
) -> ServiceResult<Event> {
    let request = Request {
        caller: capabilities::VISITOR,
        language,
        explicit_language: None,
        now,
    };
    let pending = |w: &PostWrite| PostWrite {
        status: Some(Status::Pending),
        author: None,
        date: None,
        date_utc: None,
        translation_of: None,
        ..w.clone()
    };
    let mut fields = fields.clone();
    if let Some(Some(LinkRef::Inline(inline))) = &mut fields.venue {
        inline.0 = pending(&inline.0);
    }
    for organizer in fields.organizers.iter_mut().flatten() {
        if let LinkRef::Inline(inline) = organizer {
            inline.0 = pending(&inline.0);
        }
    }
    create(store, &request, &pending(write), &fields, invalid)
}

/// "Translate into": a copy of the event `id` in `language`, joined to its translation group,
/// as a draft for the caller to translate. Its dates, zone, cost, website, flags and password
/// are the source's, and a series' rule; its venue, organizers, categories and tags are their
/// translations in `language`, left out where they have none. When the group already has a
/// member in `language`, that member.
pub(crate) fn translate(
    store: &Store,
    request: &Request,
    id: u64,
    language: Language,
) -> ServiceResult<Event> {
    store.write(|tx| {
        let source = tx
            .get_record::<Event>(Kind::Event, id)?
            .ok_or(ServiceError::EventNotFound)?;
        if !request.caller.has(Capability::EditPosts)
            || !capabilities::can_edit(request.caller, &posts::access(&source.post, request.now))
        {
            return Err(ServiceError::Forbidden);
        }
        let in_language = |tx: &WriteTx, kind: Kind, group: u64| -> ServiceResult<Option<u64>> {
            Ok(tx
                .group_members(kind, group)?
                .into_iter()
                .find(|(l, _)| *l == language)
                .map(|(_, id)| id))
        };
        if let Some(existing) = in_language(tx, Kind::Event, source.post.group)? {
            return tx
                .get_record::<Event>(Kind::Event, existing)?
                .ok_or(ServiceError::EventNotFound);
        }
        let post = |tx: &WriteTx, kind: Kind, id: u64| -> ServiceResult<Option<u64>> {
            match tx.get_record::<PostMeta>(kind, id)? {
                Some(meta) => in_language(tx, kind, meta.group),
                None => Ok(None),
            }
        };
        let term = |tx: &WriteTx, kind: Kind, id: u64| -> ServiceResult<Option<u64>> {
            match tx.get_record::<Term>(kind, id)? {
                Some(term) => in_language(tx, kind, term.group),
                None => Ok(None),
            }
        };
        let write = PostWrite {
            title: Some(source.post.title.clone()),
            description: Some(source.post.description.clone()),
            excerpt: Some(source.post.excerpt.clone()),
            status: Some(Status::Draft),
            ..PostWrite::default()
        };
        let meta = posts::new_meta(
            tx,
            Kind::Event,
            request.caller,
            &write,
            language,
            None,
            request.now,
        )?;
        let mut event = Event {
            post: PostMeta {
                image: source.post.image,
                ..meta
            },
            venue: None,
            organizers: Vec::new(),
            categories: Vec::new(),
            tags: Vec::new(),
            post_parent: 0,
            ..source.clone()
        };
        if let Some(venue) = source.venue {
            event.venue = post(tx, Kind::Venue, venue)?;
        }
        for organizer in &source.organizers {
            event
                .organizers
                .extend(post(tx, Kind::Organizer, *organizer)?);
        }
        for category in &source.categories {
            event
                .categories
                .extend(term(tx, Kind::Category, *category)?);
        }
        for tag in &source.tags {
            event.tags.extend(term(tx, Kind::Tag, *tag)?);
        }
        posts::join(
            tx,
            &mut event,
            Some(source.post.id),
            request.caller,
            request.now,
        )?;
        tx.put_record(Kind::Event, event.post.id, &event)?;
        let lines = tx.series(source.post.id)?.map(|s| s.lines);
        series::follow(tx, &event, lines.as_deref(), request.now)?;
        Ok(event)
    })
}

/// Makes the occurrence of the series `series` at `at` (its original start, UTC) follow its
/// series again, when it was changed or cancelled on its own; whether it was. The caller must
/// be allowed to edit the series.
pub(crate) fn revert_occurrence(
    store: &Store,
    request: &Request,
    series: u64,
    at: NaiveDateTime,
) -> ServiceResult<bool> {
    store.write(|tx| {
        let record = tx
            .get_record::<Event>(Kind::Event, series)?
            .ok_or(ServiceError::EventNotFound)?;
        if !capabilities::can_edit(request.caller, &posts::access(&record.post, request.now)) {
            return Err(ServiceError::Forbidden);
        }
        let found = tx.series(series)?.and_then(|s| {
            s.occurrences
                .iter()
                .find(|o| o.original_start_utc == at)
                .map(|o| o.id)
        });
        match found {
            Some(id) => series::revert(tx, id),
            None => Ok(false),
        }
    })
}

/// The occurrence of the series `series` whose original start (UTC) is `at`.
pub(crate) fn occurrence_at(
    store: &Store,
    series: u64,
    at: NaiveDateTime,
) -> ServiceResult<Option<u64>> {
    Ok(store.read()?.series(series)?.and_then(|s| {
        s.occurrences
            .iter()
            .find(|o| o.original_start_utc == at)
            .map(|o| o.id)
    }))
}

/// How a single-event route names its target.
#[derive(Debug, Clone)]
pub enum Target {
    Id(u64),
    Slug(String),
}

/// ID routes: existence (404) and kind (400), then the explicit-language member.
fn by_id(rx: &impl Reads, id: u64, explicit: Option<Language>) -> ServiceResult<Event> {
    let event = match rx.post_kind_of(id)? {
        None => return Err(ServiceError::EventNotFound),
        Some(PostIdKind::Record(Kind::Event)) => rx
            .get_record::<Event>(Kind::Event, id)?
            .ok_or(ServiceError::EventNotFound)?,
        Some(_) => return Err(ServiceError::NotAnEvent),
    };
    // A missing member is NoGroupMember (404 rest-event-not-found), reported before the
    // permission check (the order of checks in docs/api.md, "Errors").
    let member = posts::group_member(rx, Kind::Event, &event.post, explicit)?;
    if member == id {
        return Ok(event);
    }
    rx.get_record::<Event>(Kind::Event, member)?
        .ok_or(ServiceError::NoGroupMember(Kind::Event))
}

/// The event with this (sanitized) slug in the language, any status; `slug/YYYY-MM-DD` names
/// the occurrence of that series on that date.
fn by_slug(rx: &impl Reads, raw: &str, language: Language) -> ServiceResult<Option<Event>> {
    let occurrence = raw.rsplit_once('/').and_then(|(series, day)| {
        let day = chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d").ok()?;
        Some((series, day))
    });
    if let Some((series, day)) = occurrence {
        return match by_slug(rx, series, language)? {
            Some(series) => series::occurrence_on(rx, &series, day),
            None => Ok(None),
        };
    }
    let Some(id) = rx.slug_owner(Kind::Event, language, &slug::sanitize(raw))? else {
        return Ok(None);
    };
    Ok(rx.get_record::<Event>(Kind::Event, id)?)
}

fn slug_invalid() -> ServiceError {
    ServiceError::Invalid(vec![(
        "slug".into(),
        Invalid::new(
            SubCode::InvalidReference,
            "does not name an event you can read.",
        ),
    )])
}

/// What unlocks a password-protected event for this request.
#[derive(Debug, Clone, Default)]
pub struct Unlock {
    pub password: Option<String>,
    pub context_edit: bool,
    /// `context=export`: the export form, which never masks an event (docs/api.md, "The
    /// export form"); honoured only for callers who may edit other users' records.
    pub export: bool,
    /// What the password did, for the caller to tell a failed guess (throttled) from the rest.
    pub tries: Arc<PasswordTries>,
}

/// What a request's event password did: opened an event, or was compared with one and missed.
#[derive(Debug, Default)]
pub struct PasswordTries {
    opened: AtomicBool,
    missed: AtomicBool,
}

impl PasswordTries {
    /// Whether the password was a failed guess: it missed some event and opened none.
    pub(crate) fn failed(&self) -> bool {
        self.missed.load(Ordering::Relaxed) && !self.opened.load(Ordering::Relaxed)
    }
}

impl Unlock {
    pub(crate) fn opens(&self, event: &Event, caller: Caller, now: NaiveDateTime) -> bool {
        let Some(secret) = &event.password else {
            return true;
        };
        let by_password = self
            .password
            .as_deref()
            .is_some_and(|given| super::secret_eq(given.as_bytes(), secret.as_bytes()));
        if self.password.is_some() {
            let outcome = if by_password {
                &self.tries.opened
            } else {
                &self.tries.missed
            };
            outcome.store(true, Ordering::Relaxed);
        }
        by_password
            || (self.export && caller.has(Capability::EditOthersPosts))
            || (self.context_edit
                && capabilities::can_edit(caller, &posts::access(&event.post, now)))
    }
}

/// `GET /events/{id}` and `/events/by-slug/{slug}`.
pub fn get(
    store: &Store,
    request: &Request,
    target: &Target,
    unlock: &Unlock,
    invalid: Refusals,
) -> ServiceResult<Event> {
    let event = readable(store, request, target, unlock, invalid)?;
    if !unlock.opens(&event, request.caller, request.now) {
        return Err(ServiceError::PasswordProtected);
    }
    Ok(event)
}

/// [`get`] for a page that shows a locked protected event as the lists do (title and dates,
/// with a password form): the event, and whether `unlock` opens it.
pub(crate) fn get_or_locked(
    store: &Store,
    request: &Request,
    target: &Target,
    unlock: &Unlock,
) -> ServiceResult<(Event, bool)> {
    let event = readable(store, request, target, unlock, Vec::new())?;
    let opens = unlock.opens(&event, request.caller, request.now);
    Ok((event, opens))
}

/// The event a single read names, if this caller may read it at all (protected or not).
fn readable(
    store: &Store,
    request: &Request,
    target: &Target,
    unlock: &Unlock,
    invalid: Refusals,
) -> ServiceResult<Event> {
    let rx = store.read()?;
    let event = match target {
        Target::Id(id) => {
            super::refuse_any(invalid)?;
            let event = by_id(&rx, *id, request.explicit_language)?;
            super::check_export(request.caller, unlock.export)?;
            if event.post.status == Status::Trash {
                return Err(ServiceError::EventGone);
            }
            if !posts::can_read(request.caller, &event.post, request.now) {
                return Err(ServiceError::NotAccessible(Kind::Event));
            }
            event
        }
        Target::Slug(raw) => {
            let found = by_slug(&rx, raw, request.language)?.filter(|e| {
                e.post.status != Status::Trash
                    && posts::can_read(request.caller, &e.post, request.now)
            });
            let mut invalid = invalid;
            if found.is_none() {
                if let ServiceError::Invalid(mut v) = slug_invalid() {
                    invalid.append(&mut v);
                }
            }
            super::refuse_any(invalid)?;
            super::check_export(request.caller, unlock.export)?;
            found.expect("checked above")
        }
    };
    Ok(event)
}

/// `POST/PUT/PATCH /events/{id}` and by slug.
pub(crate) fn update(
    store: &Store,
    request: &Request,
    target: &Target,
    write: &PostWrite,
    fields: &EventFields,
    mut invalid: Refusals,
) -> ServiceResult<Event> {
    store.write(|tx| {
        // Validation uses the event's language when the event exists.
        let (existing, missing) = match target {
            Target::Id(id) => match by_id(tx, *id, request.explicit_language) {
                Ok(event) => (Some(event), None),
                Err(why @ ServiceError::NoGroupMember(_)) => return Err(why),
                Err(why) => (None, Some(why)),
            },
            Target::Slug(raw) => (
                by_slug(tx, raw, request.language)?,
                Some(ServiceError::EventNotFound),
            ),
        };
        let language = existing
            .as_ref()
            .map(|e| e.post.language)
            .unwrap_or(request.language);
        posts::check_references(
            tx,
            Kind::Event,
            request.caller,
            write,
            request.now,
            &mut invalid,
        )?;
        check_references(
            tx,
            request,
            language,
            existing.as_ref().map(|e| e.post.id),
            fields,
            &mut invalid,
        )?;
        super::refuse_any(invalid)?;
        // Permission on the event when it exists, else the kind-wide one; then why the
        // event could not be found.
        let mut event = match existing {
            Some(event) => {
                if !capabilities::can_edit(request.caller, &posts::access(&event.post, request.now))
                {
                    return Err(ServiceError::Forbidden);
                }
                event
            }
            None => {
                if !request.caller.has(Capability::EditPosts) {
                    return Err(ServiceError::Forbidden);
                }
                return Err(missing.unwrap_or(ServiceError::EventNotFound));
            }
        };
        posts::check_author_change(request.caller, write)?;
        if fields.following {
            event = series::split(tx, event.post.id, request.now)?;
        }
        let stored_zone = Zone::parse(&event.timezone).ok();
        posts::apply_update(
            tx,
            Kind::Event,
            &mut event.post,
            request.caller,
            write,
            request.now,
        )?;
        if let Some(requested) = &fields.slug {
            let candidate = slug::or_id(slug::sanitize(requested), event.post.id);
            if candidate != event.post.slug {
                tx.remove_slug(Kind::Event, event.post.language, &event.post.slug)?;
                event.post.slug = posts::claim_slug(
                    tx,
                    Kind::Event,
                    event.post.language,
                    &candidate,
                    event.post.id,
                )?;
            }
        }
        apply_fields(tx, request, &mut event, fields, stored_zone)?;
        posts::join(
            tx,
            &mut event,
            write.translation_of,
            request.caller,
            request.now,
        )?;
        tx.put_record(Kind::Event, event.post.id, &event)?;
        series::settle(tx, &event)?;
        series::follow(tx, &event, fields.recurrence.as_deref(), request.now)?;
        Ok(event)
    })
}

/// The event `id` if the caller may edit it (the editors' event form, before it is shown).
pub(crate) fn editable(store: &Store, request: &Request, id: u64) -> ServiceResult<Event> {
    let event = store
        .read()?
        .get_record::<Event>(Kind::Event, id)?
        .ok_or(ServiceError::EventNotFound)?;
    if capabilities::can_edit(request.caller, &posts::access(&event.post, request.now)) {
        Ok(event)
    } else {
        Err(ServiceError::Forbidden)
    }
}

/// Takes the event `id` out of the trash with the status it had before (a draft when that is
/// unknown), as an update that sends that status does; an event not in the trash is left as
/// it is.
pub(crate) fn restore(store: &Store, request: &Request, id: u64) -> ServiceResult<Event> {
    let event = store
        .read()?
        .get_record::<Event>(Kind::Event, id)?
        .ok_or(ServiceError::EventNotFound)?;
    if event.post.status != Status::Trash {
        return Ok(event);
    }
    let write = PostWrite {
        status: Some(event.post.status_before_trash.unwrap_or(Status::Draft)),
        ..PostWrite::default()
    };
    update(
        store,
        request,
        &Target::Id(id),
        &write,
        &EventFields::default(),
        Vec::new(),
    )
}

/// `DELETE /events/{id}` and by slug: to the trash.
pub(crate) fn delete(
    store: &Store,
    request: &Request,
    target: &Target,
    invalid: Refusals,
) -> ServiceResult<Event> {
    store.write(|tx| {
        let mut event = match target {
            Target::Id(id) => {
                super::refuse_any(invalid)?;
                match by_id(tx, *id, request.explicit_language) {
                    Ok(event) => event,
                    Err(e @ ServiceError::NoGroupMember(_)) => return Err(e),
                    Err(e) => {
                        if !request.caller.has(Capability::EditPosts) {
                            return Err(ServiceError::Forbidden);
                        }
                        return Err(e);
                    }
                }
            }
            Target::Slug(raw) => {
                let found = by_slug(tx, raw, request.language)?;
                let mut invalid = invalid;
                if found.is_none() {
                    if let ServiceError::Invalid(mut v) = slug_invalid() {
                        invalid.append(&mut v);
                    }
                }
                super::refuse_any(invalid)?;
                found.expect("checked above")
            }
        };
        if !capabilities::can_delete(request.caller, &posts::access(&event.post, request.now)) {
            return Err(ServiceError::Forbidden);
        }
        if event.post.status == Status::Trash {
            return Err(ServiceError::InTrash(Kind::Event));
        }
        if let Some(cancelled) = series::cancel(tx, event.post.id, request.now)? {
            return Ok(cancelled);
        }
        posts::trash(tx, Kind::Event, &mut event.post, request.now)?;
        tx.put_record(Kind::Event, event.post.id, &event)?;
        series::follow(tx, &event, None, request.now)?;
        Ok(event)
    })
}

/// The validated parameters of `GET /events`.
#[derive(Debug, Clone, Default)]
pub struct EventQuery {
    pub page: usize,
    pub per_page: usize,
    pub start_date: Option<NaiveDateTime>,
    pub end_date: Option<NaiveDateTime>,
    pub starts_before: Option<NaiveDateTime>,
    pub starts_after: Option<NaiveDateTime>,
    pub ends_before: Option<NaiveDateTime>,
    pub ends_after: Option<NaiveDateTime>,
    pub strict: bool,
    pub search: Option<String>,
    pub relevance: bool,
    /// Raw items as sent (IDs or slugs/names).
    pub categories: Option<Vec<Value>>,
    pub tags: Option<Vec<Value>>,
    pub venues: Option<Vec<u64>>,
    pub organizers: Option<Vec<u64>>,
    pub featured: Option<bool>,
    pub status: Option<Vec<String>>,
    pub geoloc: Option<bool>,
    pub geo_point: Option<(f64, f64)>,
    /// Radius in kilometres.
    pub geo_radius_km: f64,
    pub include: Option<Vec<u64>>,
    pub post_parent: Option<u64>,
    pub ticketed: Option<bool>,
    pub unlock: Unlock,
    /// Only this user's events (not a parameter of the API: the editors' dashboard).
    pub author: Option<u64>,
    /// Newest change first instead of by start (the editors' dashboard).
    pub by_last_change: bool,
}

/// The date window actually applied, for the links.
#[derive(Debug, Clone, Default)]
pub struct Window {
    pub start: Option<NaiveDateTime>,
    pub end: Option<NaiveDateTime>,
    pub starts_before: Option<NaiveDateTime>,
    pub starts_after: Option<NaiveDateTime>,
    pub ends_before: Option<NaiveDateTime>,
    pub ends_after: Option<NaiveDateTime>,
}

fn day_start(t: NaiveDateTime) -> NaiveDateTime {
    t.date().and_time(NaiveTime::MIN)
}

fn day_end(t: NaiveDateTime) -> NaiveDateTime {
    t.date().and_hms_opt(23, 59, 59).expect("valid time")
}

/// The date window: normalised bounds and defaults.
pub(crate) fn window(query: &EventQuery, now: NaiveDateTime) -> Window {
    let relative_given = query.starts_before.is_some()
        || query.starts_after.is_some()
        || query.ends_before.is_some()
        || query.ends_after.is_some();
    let snap = |t: Option<NaiveDateTime>| t.map(|t| if query.strict { t } else { day_end(t) });
    let mut w = Window {
        starts_before: snap(query.starts_before),
        starts_after: snap(query.starts_after),
        ends_before: snap(query.ends_before),
        ends_after: snap(query.ends_after),
        ..Window::default()
    };
    if query.include.is_some() {
        return w;
    }
    let yesterday = now - Duration::days(1);
    let in_two_years = datetime::parse_str("+24 months", &Zone::Utc, now.and_utc())
        .map(|d| d.local)
        .unwrap_or(now);
    w.start = match query.start_date {
        Some(s) => Some(if query.strict { s } else { day_start(s) }),
        None if relative_given => None,
        None if query.strict => Some(yesterday.date().and_hms_opt(23, 59, 0).expect("valid time")),
        None => Some(day_start(yesterday)),
    };
    w.end = match query.end_date {
        Some(e) => Some(if query.strict { e } else { day_end(e) }),
        None if relative_given => None,
        None if query.strict => Some(in_two_years),
        None => Some(day_end(in_two_years)),
    };
    w
}

/// Resolves a term filter: IDs or slugs/names of the language; unknown → invalid.
fn term_filter(terms: &[Term], items: &[Value]) -> Option<Vec<u64>> {
    let mut ids = Vec::new();
    for item in items {
        let found = match item {
            Value::Number(n) => n.as_u64().and_then(|id| terms.iter().find(|t| t.id == id)),
            Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => s
                .parse::<u64>()
                .ok()
                .and_then(|id| terms.iter().find(|t| t.id == id)),
            Value::String(s) => {
                let wanted = slug::sanitize(s);
                terms.iter().find(|t| t.slug == *s || t.slug == wanted)
            }
            _ => None,
        };
        ids.push(found?.id);
    }
    Some(ids)
}

/// A category and every descendant (a category filter matches its descendants).
fn with_descendants(terms: &[Term], roots: &[u64]) -> Vec<u64> {
    let mut out: Vec<u64> = roots.to_vec();
    let mut i = 0;
    while i < out.len() {
        let parent = out[i];
        for t in terms.iter().filter(|t| t.parent == parent) {
            if !out.contains(&t.id) {
                out.push(t.id);
            }
        }
        i += 1;
    }
    out
}

/// The archive's answer: the page and the window applied.
pub struct Archive {
    pub page: Page<Event>,
    pub window: Window,
    /// Some record waits for its publication date: the same query can answer differently
    /// once the clock reaches it.
    pub scheduled: bool,
    /// The outbox position of the view the page was read from.
    pub head: u64,
}

/// The index filter of an event query for this caller, with the window applied and whether
/// some record waits for its publication: the reference checks of `GET /events` (unknown
/// terms, venues, organizers, parents, statuses) refused with the syntax errors found before.
fn filter_of(
    index: &SearchIndex,
    rx: &ReadTx,
    request: &Request,
    query: &EventQuery,
    mut invalid: Refusals,
) -> ServiceResult<(EventFilter, Window, bool)> {
    let language = request.language;
    let statuses = match posts::status_set(request.caller, query.status.as_deref()) {
        Ok(s) => s,
        Err(why) => {
            invalid.push(("status".into(), why));
            Vec::new()
        }
    };
    // The language's terms are read only when a term filter asks for them (they resolve
    // slugs and a category's descendants).
    let terms_of = |kind: Kind| -> ServiceResult<Vec<Term>> {
        Ok(rx
            .scan::<Term>(kind)?
            .into_iter()
            .filter(|t| t.language == language)
            .collect())
    };
    let categories = match &query.categories {
        Some(_) => terms_of(Kind::Category)?,
        None => Vec::new(),
    };
    let category_ids = query
        .categories
        .as_ref()
        .map(|items| term_filter(&categories, items));
    if matches!(category_ids, Some(None)) {
        refuse(
            &mut invalid,
            "categories",
            "must name existing categories by ID or slug.",
        );
    }
    let tag_ids = match &query.tags {
        Some(items) => Some(term_filter(&terms_of(Kind::Tag)?, items)),
        None => None,
    };
    if matches!(tag_ids, Some(None)) {
        refuse(
            &mut invalid,
            "tags",
            "must name existing tags by ID or slug.",
        );
    }
    for (name, kind, ids) in [
        ("venue", Kind::Venue, &query.venues),
        ("organizer", Kind::Organizer, &query.organizers),
    ] {
        if let Some(ids) = ids {
            for id in ids {
                let ok = rx
                    .get_record::<PostMeta>(kind, *id)?
                    .is_some_and(|m| m.language == language)
                    && rx.post_kind_of(*id)? == Some(PostIdKind::Record(kind));
                if !ok {
                    refuse(
                        &mut invalid,
                        name,
                        "must name existing records in the selected language.",
                    );
                    break;
                }
            }
        }
    }
    if let Some(parent) = query.post_parent {
        let ok = rx.post_kind_of(parent)? == Some(PostIdKind::Record(Kind::Event))
            && rx
                .get_record::<PostMeta>(Kind::Event, parent)?
                .is_some_and(|m| m.language == language);
        if !ok {
            refuse(
                &mut invalid,
                "post_parent",
                "must name an existing event in the selected language.",
            );
        }
    }
    super::refuse_any(invalid)?;
    super::check_export(request.caller, query.unlock.export)?;
    let category_ids = category_ids
        .flatten()
        .map(|ids| with_descendants(&categories, &ids));
    let tag_ids = tag_ids.flatten();
    let window = window(query, request.now);
    let search = query
        .search
        .as_deref()
        .map(|q| SearchQuery::parse(q, language))
        .filter(|q| !q.is_empty());
    let secs = |t: Option<NaiveDateTime>| t.map(|t| t.and_utc().timestamp());
    let any_scheduled = index.any_scheduled();
    let filter = EventFilter {
        language,
        visibility: Visibility {
            caller: request.caller,
            statuses,
            now: request.now.and_utc().timestamp(),
            any_scheduled,
        },
        dates: DateBounds {
            start_min: secs(window.start),
            end_max: secs(window.end),
            starts_before: secs(window.starts_before),
            starts_after: secs(window.starts_after),
            ends_before: secs(window.ends_before),
            ends_after: secs(window.ends_after),
        },
        search,
        categories: category_ids,
        tags: tag_ids,
        venues: query.venues.clone(),
        organizers: query.organizers.clone(),
        featured: query.featured,
        ticketed: query.ticketed,
        include: query.include.clone(),
        post_parent: query.post_parent,
        author: query.author,
        // The export form lists everything the caller may read (docs/api.md, "The export
        // form").
        hidden: query.unlock.export,
        geo: match (query.geoloc, query.geo_point) {
            (Some(true), Some((lat, lng))) => Some(GeoFilter::Within {
                lat,
                lng,
                radius_km: query.geo_radius_km,
            }),
            (Some(true), None) => Some(GeoFilter::HasCoordinates),
            _ => None,
        },
    };
    Ok((filter, window, any_scheduled))
}

/// `GET /events` (docs/api.md, "Listing events"): the search index finds the page and the
/// total from one view; the page's records are read from that view's store snapshot.
pub fn list(
    store: &Store,
    index: &SearchIndex,
    request: &Request,
    query: &EventQuery,
    invalid: Refusals,
) -> ServiceResult<Archive> {
    // The page is searched in, and its records read from, one view (index::View).
    let view = index.view(store)?;
    let rx = view.store();
    let (filter, window, any_scheduled) = filter_of(index, rx, request, query, invalid)?;
    let order = if query.by_last_change {
        EventOrder::LastChange
    } else if query.include.is_some() {
        EventOrder::Publication
    } else {
        EventOrder::Start
    };
    let offset = (query.page - 1).saturating_mul(query.per_page);
    let hits = index.events(
        &view,
        &filter,
        order,
        query.relevance,
        offset,
        query.per_page,
    )?;
    // Only the page's records are read from the store.
    let mut items = Vec::with_capacity(hits.ids.len());
    for id in hits.ids {
        if let Some(event) = rx.get_record::<Event>(Kind::Event, id)? {
            items.push(event);
        }
    }
    if query.page > 1 && items.is_empty() {
        return Err(ServiceError::PageNotFound(Kind::Event));
    }
    Ok(Archive {
        page: Page::from_hits(items, hits.total, query.page, query.per_page),
        window,
        scheduled: any_scheduled,
        head: view.head(),
    })
}

/// A calendar's days: for each of `count` days from `first`, the events of `query` on it
/// (those `GET /events?strict_dates=1&ends_after=…&starts_before=…` lists for that day: they
/// start before the day ends and end after it starts), the first `per_day` of them in start
/// order, and how many there are. One pass over the index, however busy the days.
pub(crate) fn days(
    store: &Store,
    index: &SearchIndex,
    request: &Request,
    query: &EventQuery,
    first: chrono::NaiveDate,
    count: usize,
    per_day: usize,
) -> ServiceResult<Vec<(Vec<Event>, usize)>> {
    let view = index.view(store)?;
    let rx = view.store();
    let start = first.and_time(NaiveTime::MIN);
    let query = EventQuery {
        strict: true,
        start_date: None,
        end_date: None,
        ends_after: Some(start),
        starts_before: Some(start + Duration::days(count as i64)),
        ..query.clone()
    };
    let (filter, _, _) = filter_of(index, rx, request, &query, Vec::new())?;
    let hits = index.days(&view, &filter, start.and_utc().timestamp(), count, per_day)?;
    hits.days
        .into_iter()
        .map(|(ids, total)| Ok((rx.get_records::<Event>(Kind::Event, &ids)?, total)))
        .collect()
}

/// The store's outbox position: a representation built from what is read afterwards is at
/// least this current (see [`unchanged_since`]).
pub(crate) fn position(store: &Store) -> ServiceResult<u64> {
    Ok(store.outbox_head()?)
}

/// Whether a representation built from a view at outbox position `head` with these
/// dependencies is still exact (see [`EventViews::dependencies`]).
pub(crate) fn unchanged_since(index: &SearchIndex, dependencies: &[Dependency], head: u64) -> bool {
    index.unchanged_since(dependencies, head)
}

/// What an event's representations embed besides the event: its image, venue, organizers,
/// categories and tags (in name order, with their event counts) and the translations the
/// caller may see.
pub(crate) struct EventView {
    pub image: Option<Image>,
    pub venue: Option<LinkedView<Venue>>,
    pub organizers: Vec<LinkedView<Organizer>>,
    pub categories: Vec<TermView>,
    pub tags: Vec<TermView>,
    pub translations: Vec<(Language, u64)>,
    pub recurring: series::Recurring,
}

/// Builds the [`EventView`]s of some events from one store snapshot; the event counts of the
/// terms they carry are counted once for all of them.
pub(crate) struct EventViews {
    rx: ReadTx,
    counts: HashMap<u64, u64>,
    caller: Caller,
    now: NaiveDateTime,
}

impl EventViews {
    pub(crate) fn new(
        store: &Store,
        index: &SearchIndex,
        events: &[&Event],
        caller: Caller,
        now: NaiveDateTime,
    ) -> ServiceResult<EventViews> {
        let rx = store.read()?;
        let mut counts = HashMap::new();
        for kind in [Kind::Category, Kind::Tag] {
            let mut ids: Vec<u64> = events
                .iter()
                .flat_map(|e| match kind {
                    Kind::Category => &e.categories,
                    _ => &e.tags,
                })
                .copied()
                .collect();
            ids.sort_unstable();
            ids.dedup();
            counts.extend(index.term_counts(kind, &ids, now.and_utc().timestamp())?);
        }
        Ok(EventViews {
            rx,
            counts,
            caller,
            now,
        })
    }

    pub(crate) fn view(&self, event: &Event) -> ServiceResult<EventView> {
        let venue = match event.venue {
            Some(id) => self.linked::<Venue>(id)?,
            None => None,
        };
        let mut organizers = Vec::with_capacity(event.organizers.len());
        for id in &event.organizers {
            organizers.extend(self.linked::<Organizer>(*id)?);
        }
        Ok(EventView {
            image: self.image(event.post.image)?,
            venue,
            organizers,
            categories: self.terms(Kind::Category, &event.categories)?,
            tags: self.terms(Kind::Tag, &event.tags)?,
            translations: posts::visible_translations(&self.rx, event, self.caller, self.now)?,
            recurring: series::recurring(&self.rx, event.post.id)?,
        })
    }

    /// How many times `event` was written (a calendar feed's SEQUENCE; only feeds read it).
    pub(crate) fn revision(&self, event: &Event) -> ServiceResult<u64> {
        Ok(self
            .rx
            .revision(event.post.id)?
            .unwrap_or_else(|| crate::store::revision_floor(event.post.modified_utc)))
    }

    /// What the representation of `event` with `view` embeds, beyond the clock, what the
    /// caller's key holds and the terms' counts (filled in when served): the event and its
    /// translation group, its venue and organizers and their groups, its terms, their groups
    /// and the categories above them. Images never change.
    pub(crate) fn dependencies(
        &self,
        event: &Event,
        view: &EventView,
    ) -> ServiceResult<Vec<Dependency>> {
        let mut deps = vec![
            Dependency::Record(Kind::Event, event.post.id),
            Dependency::Group(Kind::Event, event.post.group),
        ];
        deps.extend(event.venue.map(|v| Dependency::Record(Kind::Venue, v)));
        if let Some(venue) = &view.venue {
            deps.push(Dependency::Group(Kind::Venue, venue.record.post.group));
        }
        deps.extend(
            event
                .organizers
                .iter()
                .map(|o| Dependency::Record(Kind::Organizer, *o)),
        );
        deps.extend(
            view.organizers
                .iter()
                .map(|o| Dependency::Group(Kind::Organizer, o.record.post.group)),
        );
        for (kind, ids) in [
            (Kind::Category, &event.categories),
            (Kind::Tag, &event.tags),
        ] {
            deps.extend(ids.iter().map(|id| Dependency::Record(kind, *id)));
        }
        for term in view.categories.iter().chain(&view.tags) {
            deps.push(Dependency::Group(term.term.kind, term.term.group));
            let mut parent = term.term.parent;
            // Bounded: damaged data could hold a cycle.
            for _ in 0..64 {
                if parent == 0 {
                    break;
                }
                deps.push(Dependency::Record(Kind::Category, parent));
                parent = self
                    .rx
                    .get_record::<Term>(Kind::Category, parent)?
                    .map_or(0, |t| t.parent);
            }
        }
        Ok(deps)
    }

    fn image(&self, id: Option<u64>) -> ServiceResult<Option<Image>> {
        Ok(match id {
            Some(id) => self.rx.image(id)?,
            None => None,
        })
    }

    fn linked<R: LinkedKind>(&self, id: u64) -> ServiceResult<Option<LinkedView<R>>> {
        match self.rx.get_record::<R>(R::KIND, id)? {
            Some(record) => Ok(Some(linked::view_in(
                &self.rx,
                record,
                self.caller,
                self.now,
            )?)),
            None => Ok(None),
        }
    }

    fn terms(&self, kind: Kind, ids: &[u64]) -> ServiceResult<Vec<TermView>> {
        let mut views = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(term) = self.rx.get_record::<Term>(kind, *id)? {
                views.push(terms::view(&self.rx, term, &self.counts)?);
            }
        }
        views.sort_by(|a, b| terms::event_order(&a.term, &b.term));
        Ok(views)
    }
}
