//! Venues and organizers ("linked post" kinds): their own write fields,
//! the duplicate check on create, and the use cases (create, read, update, trash, list) that
//! both kinds run through one generic path.

use crate::auth::{Caller, Capability};
use crate::index::planner::{self, LinkedFilter, Visibility};
use crate::index::SearchIndex;
use crate::model::post::{GeoPoint, Image, Organizer, PostMeta, PostRecord, Venue};
use crate::model::{Language, Status};
use crate::service::posts::{self, PostWrite};
use crate::service::Refusals;
use crate::service::{Page, Request, ServiceError, ServiceResult};
use crate::store::{Reads, Store, WriteTx};
use crate::values::search::SearchQuery;
use crate::values::{slug, text, Invalid, SubCode};
use chrono::NaiveDateTime;

/// A venue's own write fields; `None` = not sent.
#[derive(Debug, Clone, Default)]
pub struct VenueFields {
    pub address: Option<String>,
    pub city: Option<String>,
    pub country: Option<String>,
    pub province: Option<String>,
    pub state: Option<String>,
    pub zip: Option<String>,
    pub phone: Option<String>,
    pub stateprovince: Option<String>,
    pub website: Option<String>,
    pub show_map: Option<bool>,
    pub show_map_link: Option<bool>,
    /// `Some(None)` clears the coordinates.
    pub geo: Option<Option<GeoPoint>>,
}

/// An organizer's own write fields.
#[derive(Debug, Clone, Default)]
pub(crate) struct OrganizerFields {
    pub phone: Option<String>,
    pub website: Option<String>,
    pub email: Option<String>,
}

/// What distinguishes venues from organizers in the shared use cases.
pub trait LinkedKind: PostRecord {
    type Fields: Clone + Send;
    fn build(meta: PostMeta, fields: &Self::Fields) -> Self;
    /// Applies the kind's own fields that were sent (also used by the duplicate merge).
    fn apply(&mut self, fields: &Self::Fields);
    /// The searchable fields, the name first.
    fn search_fields(&self) -> Vec<&str>;
}

/// A venue or organizer as its representations show it: the record, its image and the
/// translations the caller may see.
pub(crate) struct LinkedView<R> {
    pub record: R,
    pub image: Option<Image>,
    pub translations: Vec<(Language, u64)>,
}

/// The view of `record` at `now`, for `caller`.
pub(crate) fn view<R: LinkedKind>(
    store: &Store,
    record: R,
    caller: Caller,
    now: NaiveDateTime,
) -> ServiceResult<LinkedView<R>> {
    view_in(&store.read()?, record, caller, now)
}

/// [`view`] from a snapshot already open.
pub(crate) fn view_in<R: LinkedKind>(
    rx: &impl Reads,
    record: R,
    caller: Caller,
    now: NaiveDateTime,
) -> ServiceResult<LinkedView<R>> {
    let image = match record.meta().image {
        Some(id) => rx.image(id)?,
        None => None,
    };
    Ok(LinkedView {
        image,
        translations: posts::visible_translations(rx, &record, caller, now)?,
        record,
    })
}

fn set_plain(target: &mut String, value: &Option<String>) {
    if let Some(v) = value {
        *target = text::clean_plain(v);
    }
}

impl LinkedKind for Venue {
    type Fields = VenueFields;

    fn build(post: PostMeta, fields: &VenueFields) -> Venue {
        let mut venue = Venue {
            post,
            address: String::new(),
            city: String::new(),
            country: String::new(),
            province: String::new(),
            state: String::new(),
            zip: String::new(),
            phone: String::new(),
            stateprovince: String::new(),
            website: String::new(),
            show_map: true,
            show_map_link: true,
            geo: None,
        };
        venue.apply(fields);
        venue
    }

    fn apply(&mut self, f: &VenueFields) {
        set_plain(&mut self.address, &f.address);
        set_plain(&mut self.city, &f.city);
        set_plain(&mut self.country, &f.country);
        set_plain(&mut self.province, &f.province);
        set_plain(&mut self.state, &f.state);
        set_plain(&mut self.zip, &f.zip);
        set_plain(&mut self.phone, &f.phone);
        set_plain(&mut self.stateprovince, &f.stateprovince);
        if let Some(website) = &f.website {
            self.website = website.clone();
        }
        if let Some(b) = f.show_map {
            self.show_map = b;
        }
        if let Some(b) = f.show_map_link {
            self.show_map_link = b;
        }
        if let Some(geo) = f.geo {
            self.geo = geo;
        }
        // An empty stateprovince is derived from state (US or no country) or province.
        if self.stateprovince.is_empty() {
            let us = matches!(self.country.as_str(), "" | "US" | "United States");
            if !self.state.is_empty() && us {
                self.stateprovince = self.state.clone();
            } else if !self.province.is_empty() {
                self.stateprovince = self.province.clone();
            }
        }
    }

    fn search_fields(&self) -> Vec<&str> {
        vec![
            &self.post.title,
            &self.post.description,
            &self.post.excerpt,
            &self.address,
            &self.city,
            &self.province,
            &self.state,
            &self.stateprovince,
            &self.zip,
            &self.phone,
        ]
    }
}

impl LinkedKind for Organizer {
    type Fields = OrganizerFields;

    fn build(post: PostMeta, fields: &OrganizerFields) -> Organizer {
        let mut organizer = Organizer {
            post,
            phone: String::new(),
            website: String::new(),
            email: String::new(),
        };
        organizer.apply(fields);
        organizer
    }

    fn apply(&mut self, f: &OrganizerFields) {
        set_plain(&mut self.phone, &f.phone);
        set_plain(&mut self.email, &f.email);
        if let Some(website) = &f.website {
            self.website = website.clone();
        }
    }

    fn search_fields(&self) -> Vec<&str> {
        vec![
            &self.post.title,
            &self.post.description,
            &self.post.excerpt,
            &self.phone,
            &self.email,
            &self.website,
        ]
    }
}

/// How a single-record route names its target.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    Id(u64),
    /// The raw path slug (sanitized before lookup).
    Slug(String),
}

/// The target check of parameter validation: unknown IDs and slugs are invalid
/// parameters. Returns the record if found.
fn find<R: LinkedKind>(
    rx: &impl Reads,
    target: &Target,
    language: Language,
    invalid: &mut Refusals,
) -> ServiceResult<Option<R>> {
    let (found, name) = match target {
        Target::Id(id) => (rx.get_record::<R>(R::KIND, *id)?, "id"),
        Target::Slug(raw) => {
            let id = rx.slug_owner(R::KIND, language, &slug::sanitize(raw))?;
            let record = match id {
                Some(id) => rx.get_record::<R>(R::KIND, id)?,
                None => None,
            };
            (record, "slug")
        }
    };
    if found.is_none() {
        invalid.push((
            name.into(),
            Invalid::new(
                SubCode::InvalidReference,
                format!("does not name an existing {}.", R::KIND.name()),
            ),
        ));
    }
    Ok(found)
}

/// An explicit language on an ID route selects the group member.
fn select_member<R: LinkedKind>(
    rx: &impl Reads,
    record: R,
    target: &Target,
    request: &Request,
) -> ServiceResult<R> {
    if matches!(target, Target::Slug(_)) {
        return Ok(record);
    }
    let id = posts::group_member(rx, R::KIND, record.meta(), request.explicit_language)?;
    if id == record.meta().id {
        return Ok(record);
    }
    rx.get_record::<R>(R::KIND, id)?
        .ok_or(ServiceError::NoGroupMember(R::KIND))
}

/// `GET /venues/{id}`, `/venues/by-slug/{slug}` (and organizers); `export` for the export
/// form (`context=export`).
pub(crate) fn get<R: LinkedKind>(
    store: &Store,
    request: &Request,
    target: &Target,
    export: bool,
    mut invalid: Refusals,
) -> ServiceResult<R> {
    let rx = store.read()?;
    let found = find::<R>(&rx, target, request.language, &mut invalid)?;
    super::refuse_any(invalid)?;
    let record = select_member(&rx, found.expect("checked above"), target, request)?;
    super::check_export(request.caller, export)?;
    if !posts::can_read(request.caller, record.meta(), request.now) {
        return Err(ServiceError::NotAccessible(R::KIND));
    }
    Ok(record)
}

/// `POST /venues` (and organizers), with the duplicate check. Returns the created
/// record, or the existing duplicate.
pub(crate) fn create<R: LinkedKind>(
    store: &Store,
    request: &Request,
    write: &PostWrite,
    fields: &R::Fields,
    mut invalid: Refusals,
) -> ServiceResult<R> {
    store.write(|tx| {
        posts::check_references(
            tx,
            R::KIND,
            request.caller,
            write,
            request.now,
            &mut invalid,
        )?;
        super::refuse_any(invalid)?;
        if !request.caller.has(Capability::EditPosts) {
            return Err(ServiceError::Forbidden);
        }
        posts::check_author_change(request.caller, write)?;
        insert::<R>(tx, request, write, fields)
    })
}

/// Stores a new record, or returns its duplicate (merged when the caller may edit it).
/// Also used for venues and organizers written inline in an event, after the
/// event's own validation and permission checks.
pub(crate) fn insert<R: LinkedKind>(
    tx: &mut WriteTx,
    request: &Request,
    write: &PostWrite,
    fields: &R::Fields,
) -> ServiceResult<R> {
    if let Some(mut existing) = duplicate::<R>(tx, request, write)? {
        let access = posts::access(existing.meta(), request.now);
        if crate::auth::capabilities::can_edit(request.caller, &access) {
            existing.apply(fields);
            let current = existing.meta().image;
            let image = posts::resolve_image(tx, write.image.as_ref(), current)?;
            let meta = existing.meta_mut();
            meta.image = image;
            meta.modified_utc = request.now;
            tx.put_record(R::KIND, meta.id, &existing)?;
        }
        return Ok(existing);
    }
    let meta = posts::new_meta(
        tx,
        R::KIND,
        request.caller,
        write,
        request.language,
        None,
        request.now,
    )?;
    let mut record = R::build(meta, fields);
    posts::join(
        tx,
        &mut record,
        write.translation_of,
        request.caller,
        request.now,
    )?;
    tx.put_record(R::KIND, record.meta().id, &record)?;
    Ok(record)
}

/// The duplicate check: same kind and language, not trashed, readable, same name (trimmed,
/// case-insensitive) and, when a description is sent, the same description. Lowest ID wins.
/// The ID of the record [`insert`] would take for `write` (same name, same description if
/// one is given), if there is one.
pub(crate) fn named<R: LinkedKind>(
    tx: &WriteTx,
    request: &Request,
    write: &PostWrite,
) -> ServiceResult<Option<u64>> {
    Ok(duplicate::<R>(tx, request, write)?.map(|r| r.meta().id))
}

fn duplicate<R: LinkedKind>(
    tx: &WriteTx,
    request: &Request,
    write: &PostWrite,
) -> ServiceResult<Option<R>> {
    let fold = |s: &str| s.trim().to_lowercase();
    let name = fold(write.title.as_deref().unwrap_or(""));
    let description = write
        .description
        .as_deref()
        .filter(|d| !d.is_empty())
        .map(fold);
    Ok(tx.scan::<R>(R::KIND)?.into_iter().find(|r| {
        let m = r.meta();
        m.language == request.language
            && m.status != Status::Trash
            && fold(&m.title) == name
            && description
                .as_ref()
                .is_none_or(|d| fold(&m.description) == *d)
            && posts::can_read(request.caller, m, request.now)
    }))
}

/// `POST/PUT/PATCH /venues/{id}` and by slug.
pub(crate) fn update<R: LinkedKind>(
    store: &Store,
    request: &Request,
    target: &Target,
    write: &PostWrite,
    fields: &R::Fields,
    mut invalid: Refusals,
) -> ServiceResult<R> {
    store.write(|tx| {
        let found = find::<R>(tx, target, request.language, &mut invalid)?;
        posts::check_references(
            tx,
            R::KIND,
            request.caller,
            write,
            request.now,
            &mut invalid,
        )?;
        super::refuse_any(invalid)?;
        let mut record = select_member(tx, found.expect("checked above"), target, request)?;
        let access = posts::access(record.meta(), request.now);
        if !crate::auth::capabilities::can_edit(request.caller, &access) {
            return Err(ServiceError::Forbidden);
        }
        posts::check_author_change(request.caller, write)?;
        posts::apply_update(
            tx,
            R::KIND,
            record.meta_mut(),
            request.caller,
            write,
            request.now,
        )?;
        record.apply(fields);
        posts::join(
            tx,
            &mut record,
            write.translation_of,
            request.caller,
            request.now,
        )?;
        tx.put_record(R::KIND, record.meta().id, &record)?;
        Ok(record)
    })
}

/// The record `id` if the caller may edit it (the editors' forms, before they are shown).
pub(crate) fn editable<R: LinkedKind>(
    store: &Store,
    request: &Request,
    id: u64,
) -> ServiceResult<R> {
    let record = store
        .read()?
        .get_record::<R>(R::KIND, id)?
        .ok_or(ServiceError::NotAccessible(R::KIND))?;
    let access = posts::access(record.meta(), request.now);
    if crate::auth::capabilities::can_edit(request.caller, &access) {
        Ok(record)
    } else {
        Err(ServiceError::Forbidden)
    }
}

/// Takes the record `id` out of the trash with the status it had before (a draft when that is
/// unknown), as an update that sends that status does; a record not in the trash is left as
/// it is.
pub(crate) fn restore<R: LinkedKind>(store: &Store, request: &Request, id: u64) -> ServiceResult<R>
where
    R::Fields: Default,
{
    let record: R = editable(store, request, id)?;
    if record.meta().status != Status::Trash {
        return Ok(record);
    }
    let write = PostWrite {
        status: Some(record.meta().status_before_trash.unwrap_or(Status::Draft)),
        ..PostWrite::default()
    };
    update(
        store,
        request,
        &Target::Id(id),
        &write,
        &R::Fields::default(),
        Vec::new(),
    )
}

/// `DELETE /venues/{id}` and by slug: to the trash.
pub(crate) fn delete<R: LinkedKind>(
    store: &Store,
    index: &SearchIndex,
    request: &Request,
    target: &Target,
    mut invalid: Refusals,
) -> ServiceResult<R> {
    store.write(|tx| {
        let found = find::<R>(tx, target, request.language, &mut invalid)?;
        super::refuse_any(invalid)?;
        let mut record = select_member(tx, found.expect("checked above"), target, request)?;
        let access = posts::access(record.meta(), request.now);
        if !crate::auth::capabilities::can_delete(request.caller, &access) {
            return Err(ServiceError::Forbidden);
        }
        if record.meta().status == Status::Trash {
            return Err(ServiceError::InTrash(R::KIND));
        }
        posts::trash(tx, R::KIND, record.meta_mut(), request.now)?;
        super::cascades::forget_linked(tx, index, R::KIND, record.meta().id, request.now)?;
        tx.put_record(R::KIND, record.meta().id, &record)?;
        Ok(record)
    })
}

/// The parameters of `GET /venues` and `GET /organizers` that this stage answers.
#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    pub page: usize,
    pub per_page: usize,
    pub search: Option<String>,
    pub relevance: bool,
    /// The `status` filter as sent.
    pub status: Option<Vec<String>>,
    /// Only records linked to this event.
    pub event: Option<u64>,
    /// Only records with (true) or without (false) a counting event.
    pub has_events: Option<bool>,
    /// Only records with an upcoming event whose status is in the list's status set.
    pub only_with_upcoming: bool,
    /// `context=export`: the export form, for callers who may edit other users' records.
    pub export: bool,
}

/// Which events link a venue or organizer.
fn links_of<R: LinkedKind>(event: &crate::model::event::Event) -> Vec<u64> {
    match R::KIND {
        crate::model::Kind::Venue => event.venue.into_iter().collect(),
        _ => event.organizers.clone(),
    }
}

/// `GET /venues` (and organizers): newest first (date_utc, then ID, descending), or by
/// relevance, from the search index; only the page's records are read from the store.
pub fn list<R: LinkedKind>(
    store: &Store,
    index: &SearchIndex,
    request: &Request,
    query: &ListQuery,
    invalid: Refusals,
) -> ServiceResult<Page<R>> {
    // The page is searched in, and its records read from, one view (index::View).
    let view = index.view(store)?;
    let rx = view.store();
    let filter = list_filter::<R>(index, rx, request, query, invalid)?;
    let offset = (query.page - 1).saturating_mul(query.per_page);
    let hits = index.linked(&view, &filter, query.relevance, offset, query.per_page)?;
    let mut items = Vec::with_capacity(hits.ids.len());
    for id in hits.ids {
        if let Some(record) = rx.get_record::<R>(R::KIND, id)? {
            items.push(record);
        }
    }
    if query.page > 1 && items.is_empty() {
        return Err(ServiceError::PageNotFound(R::KIND));
    }
    Ok(Page::from_hits(
        items,
        hits.total,
        query.page,
        query.per_page,
    ))
}

/// How many records `GET /venues` (or organizers) with `query` lists in all, without reading
/// or ordering any of them.
pub(crate) fn count<R: LinkedKind>(
    store: &Store,
    index: &SearchIndex,
    request: &Request,
    query: &ListQuery,
) -> ServiceResult<usize> {
    let view = index.view(store)?;
    let filter = list_filter::<R>(index, view.store(), request, query, Vec::new())?;
    Ok(index.linked_count(&view, &filter)?)
}

/// The index filter of a venue (or organizer) list: the query's refusals first.
fn list_filter<R: LinkedKind>(
    index: &SearchIndex,
    rx: &crate::store::ReadTx,
    request: &Request,
    query: &ListQuery,
    mut invalid: Refusals,
) -> ServiceResult<LinkedFilter> {
    let statuses = match posts::status_set(request.caller, query.status.as_deref()) {
        Ok(s) => s,
        Err(why) => {
            invalid.push(("status".into(), why));
            Vec::new()
        }
    };
    let of_event = match query.event {
        // An event the caller may not read is refused as if it did not exist.
        Some(id) => match rx
            .get_record::<crate::model::event::Event>(crate::model::Kind::Event, id)?
            .filter(|e| {
                e.post.language == request.language
                    && posts::can_read(request.caller, &e.post, request.now)
            }) {
            Some(e) => Some(links_of::<R>(&e)),
            None => {
                invalid.push((
                    "event".into(),
                    Invalid::new(
                        SubCode::InvalidReference,
                        "must name an existing event in the selected language.",
                    ),
                ));
                None
            }
        },
        None => None,
    };
    super::refuse_any(invalid)?;
    super::check_export(request.caller, query.export)?;
    let now = request.now.and_utc().timestamp();
    let field = if R::KIND == crate::model::Kind::Venue {
        "venue"
    } else {
        "organizers"
    };
    // has_events: records linked by an event that counts (publish, future or private,
    // whoever asks); only_with_upcoming: by an upcoming event of the list's status set.
    let counting = match query.has_events {
        Some(_) => {
            let q = planner::events_with_statuses(
                &index.fields,
                &[Status::Publish, Status::Future, Status::Private],
                now,
            );
            Some(index.collect_values(q.as_ref(), field)?)
        }
        None => None,
    };
    let upcoming = if query.only_with_upcoming {
        let q = planner::upcoming_events(&index.fields, &statuses, now);
        Some(index.collect_values(q.as_ref(), field)?)
    } else {
        None
    };
    let mut only: Option<Vec<u64>> = of_event;
    let mut restrict = |ids: Vec<u64>| {
        only = Some(match only.take() {
            Some(current) => current.into_iter().filter(|id| ids.contains(id)).collect(),
            None => ids,
        });
    };
    if let (Some(true), Some(ids)) = (query.has_events, &counting) {
        restrict(ids.iter().copied().collect());
    }
    if let Some(ids) = upcoming {
        restrict(ids.into_iter().collect());
    }
    let except = match (query.has_events, counting) {
        (Some(false), Some(ids)) => Some(ids.into_iter().collect()),
        _ => None,
    };
    Ok(LinkedFilter {
        kind: R::KIND,
        language: request.language,
        visibility: Visibility {
            caller: request.caller,
            statuses,
            now,
            any_scheduled: index.any_scheduled(),
        },
        search: query
            .search
            .as_deref()
            .map(|q| SearchQuery::parse(q, request.language))
            .filter(|q| !q.is_empty()),
        only,
        except,
    })
}
