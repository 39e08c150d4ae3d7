//! What the pages show, read through the same service calls as the JSON routes: calendar
//! windows (`service::events::list` with the window the API's `starts_before` and
//! `ends_after` give), records by slug, and the terms of the events bar. Nothing here reads
//! the store or the index itself.

use super::address::{RecordKind, Scope};
use crate::auth::Caller;
use crate::http::AppState;
use crate::model::event::Event;
use crate::model::post::{Image, Organizer, Venue};
use crate::model::{Kind, Language};
use crate::service::events::{self, EventQuery, EventView, EventViews};
use crate::service::linked::{self, LinkedView};
use crate::service::terms::{self, TermListQuery, TermView};
use crate::service::{Request, ServiceError, ServiceResult};
use chrono::{NaiveDate, NaiveDateTime, NaiveTime};
use serde_json::Value;

/// Most events a day of any view lists.
pub(crate) const DAY_LIMIT: usize = 100;

/// The filters a visitor sets in the events bar (the query string of every view).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Filters {
    pub search: Option<String>,
    pub category: Option<String>,
    pub venue: Option<u64>,
    pub organizer: Option<u64>,
    pub featured: bool,
}

/// Longest search a page takes (the API's own limits apply below it).
const MAX_SEARCH_CHARS: usize = 200;

impl Filters {
    /// Reads `s`, `category`, `venue`, `organizer` and `featured`; other names are ignored,
    /// values that cannot be one are dropped.
    pub(crate) fn parse(query: &str) -> Filters {
        let mut f = Filters::default();
        for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
            let value = value.trim();
            if value.is_empty() {
                continue;
            }
            match name.as_ref() {
                "s" => f.search = Some(value.chars().take(MAX_SEARCH_CHARS).collect()),
                "category" => f.category = Some(value.chars().take(200).collect()),
                "venue" => f.venue = value.parse().ok(),
                "organizer" => f.organizer = value.parse().ok(),
                "featured" => f.featured = value == "1",
                _ => {}
            }
        }
        f
    }

    /// The query string that gives these filters back ("" or "?…").
    pub(crate) fn query_string(&self) -> String {
        let pairs = self.pairs();
        if pairs.is_empty() {
            return String::new();
        }
        let mut s = url::form_urlencoded::Serializer::new(String::new());
        for (k, v) in pairs {
            s.append_pair(k, &v);
        }
        format!("?{}", s.finish())
    }

    fn pairs(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if let Some(s) = &self.search {
            out.push(("s", s.clone()));
        }
        if let Some(c) = &self.category {
            out.push(("category", c.clone()));
        }
        if let Some(v) = self.venue {
            out.push(("venue", v.to_string()));
        }
        if let Some(o) = self.organizer {
            out.push(("organizer", o.to_string()));
        }
        if self.featured {
            out.push(("featured", "1".into()));
        }
        out
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.pairs().is_empty()
    }

    /// The category and the tag (slugs) a view of `scope` with these filters lists: an
    /// archive's own, else the bar's category.
    fn terms<'a>(&'a self, scope: &'a Scope) -> (Option<&'a str>, Option<&'a str>) {
        match scope {
            Scope::Category(path) => (path.last().map(String::as_str), None),
            Scope::Tag(tag) => (self.category.as_deref(), Some(tag.as_str())),
            Scope::All => (self.category.as_deref(), None),
        }
    }

    /// The parameters of the calendar feed of these filters in `scope` (a query string
    /// without `?`), as `GET /events.ics` takes them.
    pub(crate) fn feed_query(
        &self,
        scope: &Scope,
        window: Option<(NaiveDateTime, NaiveDateTime)>,
    ) -> String {
        let mut s = url::form_urlencoded::Serializer::new(String::new());
        if let Some(q) = &self.search {
            s.append_pair("search", q);
        }
        let (category, tag) = self.terms(scope);
        if let Some(c) = category {
            s.append_pair("categories", c);
        }
        if let Some(t) = tag {
            s.append_pair("tags", t);
        }
        if let Some(v) = self.venue {
            s.append_pair("venue", &v.to_string());
        }
        if let Some(o) = self.organizer {
            s.append_pair("organizer", &o.to_string());
        }
        if self.featured {
            s.append_pair("featured", "1");
        }
        if let Some((from, to)) = window {
            s.append_pair("strict_dates", "1");
            s.append_pair("ends_after", &crate::values::datetime::format(&from));
            s.append_pair("starts_before", &crate::values::datetime::format(&to));
        }
        s.finish()
    }
}

/// The page's use-case request: pages read as an anonymous visitor (what they show is what
/// the API shows anyone without credentials).
pub(crate) fn request(language: Language) -> Request {
    Request {
        caller: Caller::Anonymous,
        language,
        explicit_language: None,
        now: chrono::Utc::now().naive_utc(),
    }
}

/// The query of a view: the scope and the filters, nothing else yet.
fn base_query(scope: &Scope, filters: &Filters) -> EventQuery {
    let mut q = EventQuery {
        page: 1,
        per_page: 10,
        strict: true,
        search: filters.search.clone(),
        featured: filters.featured.then_some(true),
        venues: filters.venue.map(|v| vec![v]),
        organizers: filters.organizer.map(|o| vec![o]),
        ..EventQuery::default()
    };
    let (category, tag) = filters.terms(scope);
    q.categories = category.map(|c| vec![Value::String(c.to_string())]);
    q.tags = tag.map(|t| vec![Value::String(t.to_string())]);
    q
}

pub(crate) fn midnight(day: NaiveDate) -> NaiveDateTime {
    day.and_time(NaiveTime::MIN)
}

/// The events of each day from `first` to `last`: up to a number of each, with each day's
/// total.
pub(crate) struct Days {
    pub first: NaiveDate,
    pub days: Vec<(Vec<Event>, usize)>,
}

impl Days {
    pub(crate) fn of(&self, day: NaiveDate) -> Option<&(Vec<Event>, usize)> {
        let i = (day - self.first).num_days();
        usize::try_from(i).ok().and_then(|i| self.days.get(i))
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.days.iter().all(|(_, total)| *total == 0)
    }
}

/// The days from `first` to `last`, each with its first `per_day` events (at most
/// [`DAY_LIMIT`]) and its total.
pub(crate) fn days(
    state: &AppState,
    language: Language,
    scope: &Scope,
    filters: &Filters,
    (first, last): (NaiveDate, NaiveDate),
    per_day: usize,
) -> ServiceResult<Days> {
    let count = (last - first).num_days() as usize + 1;
    let days = events::days(
        &state.store,
        &state.index,
        &request(language),
        &base_query(scope, filters),
        first,
        count,
        per_day.min(DAY_LIMIT),
    )?;
    Ok(Days { first, days })
}

/// A page of upcoming events (those not over at `now`, a wall clock of the site's zone).
pub(crate) fn upcoming(
    state: &AppState,
    language: Language,
    scope: &Scope,
    filters: &Filters,
    now: NaiveDateTime,
    page: usize,
    per_page: usize,
) -> ServiceResult<(Vec<Event>, usize)> {
    let mut q = base_query(scope, filters);
    q.ends_after = Some(now);
    q.page = page;
    q.per_page = per_page;
    let archive = events::list(
        &state.store,
        &state.index,
        &request(language),
        &q,
        Vec::new(),
    )?;
    Ok((archive.page.items, archive.page.total))
}

/// Whether an anonymous visitor without its password sees `event` masked, as the API's lists
/// mask it: title and dates only.
pub(crate) fn locked(event: &Event) -> bool {
    !events::Unlock::default().opens(event, Caller::Anonymous, chrono::Utc::now().naive_utc())
}

/// What list items and event pages show besides the event: venue, organizers, terms, image.
pub(crate) fn event_views(
    state: &AppState,
    events: &[Event],
    now: NaiveDateTime,
) -> ServiceResult<Vec<EventView>> {
    let refs: Vec<&Event> = events.iter().collect();
    let views = EventViews::new(&state.store, &state.index, &refs, Caller::Anonymous, now)?;
    events.iter().map(|e| views.view(e)).collect()
}

/// An event page's event by slug and whether `password` opens it (an unprotected event is
/// always open); `Ok(None)` when no event of this slug is readable in `language`.
pub(crate) fn event(
    state: &AppState,
    language: Language,
    slug: &str,
    password: Option<String>,
) -> ServiceResult<Option<(Event, bool, std::sync::Arc<events::PasswordTries>)>> {
    let unlock = events::Unlock {
        password,
        ..Default::default()
    };
    let target = events::Target::Slug(slug.to_string());
    match events::get_or_locked(&state.store, &request(language), &target, &unlock) {
        Ok((e, open)) => Ok(Some((e, open, unlock.tries))),
        Err(ServiceError::Invalid(_)) | Err(ServiceError::NotAccessible(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// An event read by ID in its own language (a translation's page link).
pub(crate) fn event_by_id(
    state: &AppState,
    language: Language,
    id: u64,
) -> ServiceResult<Option<Event>> {
    let target = events::Target::Id(id);
    let found = events::get(
        &state.store,
        &request(language),
        &target,
        &events::Unlock::default(),
        Vec::new(),
    );
    match found {
        Ok(e) => Ok(Some(e)),
        Err(ServiceError::PasswordProtected) => Ok(None),
        Err(ServiceError::Invalid(_))
        | Err(ServiceError::NotAccessible(_))
        | Err(ServiceError::EventGone)
        | Err(ServiceError::EventNotFound)
        | Err(ServiceError::NoGroupMember(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The next dates of a recurring event (see `service::series::next_dates`).
pub(crate) fn next_dates(
    state: &AppState,
    language: Language,
    event: &Event,
) -> ServiceResult<Vec<Event>> {
    crate::service::series::next_dates(&state.store, &request(language), event, 5)
}

/// A recurring event's rule, for its words (see `service::series::summary`).
pub(crate) fn rule(
    state: &AppState,
    event: &Event,
) -> ServiceResult<Option<crate::values::recurrence::Summary>> {
    crate::service::series::summary(&state.store, event)
}

/// The published events starting just before and just after `event` (events starting at the
/// same moment are not its neighbours).
pub(crate) fn neighbours(
    state: &AppState,
    language: Language,
    event: &Event,
) -> ServiceResult<(Option<Event>, Option<Event>)> {
    let req = request(language);
    let mut q = base_query(&Scope::All, &Filters::default());
    q.per_page = 1;
    q.starts_after = Some(event.start_local);
    let next = events::list(&state.store, &state.index, &req, &q, Vec::new())?
        .page
        .items
        .into_iter()
        .find(|e| e.post.id != event.post.id);
    let mut q = base_query(&Scope::All, &Filters::default());
    q.per_page = 1;
    q.starts_before = Some(event.start_local);
    let before = events::list(&state.store, &state.index, &req, &q, Vec::new())?;
    let previous = if before.page.total > 0 {
        q.page = before.page.total;
        events::list(&state.store, &state.index, &req, &q, Vec::new())?
            .page
            .items
            .into_iter()
            .next()
    } else {
        None
    };
    Ok((previous, next))
}

/// Most venues (or organizers) the events bar offers as a list; a calendar with more is
/// filtered by venue from the venue's page.
pub(crate) const MAX_CHOICES: usize = 50;

/// The published venues (or organizers) of `language` as the events bar offers them, by name:
/// none when there are more than [`MAX_CHOICES`].
pub(crate) fn choices(
    state: &AppState,
    language: Language,
    kind: RecordKind,
) -> ServiceResult<Vec<(u64, String)>> {
    let req = request(language);
    let query = linked::ListQuery {
        page: 1,
        per_page: MAX_CHOICES,
        ..Default::default()
    };
    // The count first, so that a large calendar reads no records for a list it does not show.
    let total = match kind {
        RecordKind::Venue => linked::count::<Venue>(&state.store, &state.index, &req, &query)?,
        _ => linked::count::<Organizer>(&state.store, &state.index, &req, &query)?,
    };
    if total > MAX_CHOICES {
        return Ok(Vec::new());
    }
    let mut choices = match kind {
        RecordKind::Venue => names::<Venue>(state, &req, &query)?,
        _ => names::<Organizer>(state, &req, &query)?,
    };
    choices.sort_by_cached_key(|(id, name)| (name.to_lowercase(), *id));
    Ok(choices)
}

/// A page of `GET /venues` (or organizers) as IDs and plain-text names.
fn names<R: linked::LinkedKind>(
    state: &AppState,
    req: &Request,
    query: &linked::ListQuery,
) -> ServiceResult<Vec<(u64, String)>> {
    let page = linked::list::<R>(&state.store, &state.index, req, query, Vec::new())?;
    Ok(page
        .items
        .iter()
        .map(|r| {
            (
                r.meta().id,
                crate::values::text::plain_text(&r.meta().title),
            )
        })
        .collect())
}

/// A venue or organizer page's record.
pub(crate) enum Linked {
    Venue(LinkedView<Venue>),
    Organizer(LinkedView<Organizer>),
}

impl Linked {
    pub(crate) fn title(&self) -> &str {
        match self {
            Linked::Venue(v) => &v.record.post.title,
            Linked::Organizer(o) => &o.record.post.title,
        }
    }

    pub(crate) fn id(&self) -> u64 {
        match self {
            Linked::Venue(v) => v.record.post.id,
            Linked::Organizer(o) => o.record.post.id,
        }
    }

    pub(crate) fn translations(&self) -> &[(Language, u64)] {
        match self {
            Linked::Venue(v) => &v.translations,
            Linked::Organizer(o) => &o.translations,
        }
    }

    pub(crate) fn image(&self) -> Option<&Image> {
        match self {
            Linked::Venue(v) => v.image.as_ref(),
            Linked::Organizer(o) => o.image.as_ref(),
        }
    }
}

fn found<T>(result: ServiceResult<T>) -> ServiceResult<Option<T>> {
    match result {
        Ok(r) => Ok(Some(r)),
        Err(ServiceError::Invalid(_))
        | Err(ServiceError::NotAccessible(_))
        | Err(ServiceError::NoGroupMember(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// A venue's or organizer's page record by slug (or by ID, for a translation's link).
pub(crate) fn linked(
    state: &AppState,
    language: Language,
    kind: RecordKind,
    target: linked::Target,
) -> ServiceResult<Option<Linked>> {
    let req = request(language);
    Ok(match kind {
        RecordKind::Venue => linked_view::<Venue>(state, &req, &target)?.map(Linked::Venue),
        _ => linked_view::<Organizer>(state, &req, &target)?.map(Linked::Organizer),
    })
}

/// A venue's or organizer's view as an anonymous visitor may read it.
fn linked_view<R: linked::LinkedKind>(
    state: &AppState,
    req: &Request,
    target: &linked::Target,
) -> ServiceResult<Option<LinkedView<R>>> {
    found(linked::get::<R>(
        &state.store,
        req,
        target,
        false,
        Vec::new(),
    ))?
    .map(|r| linked::view(&state.store, r, Caller::Anonymous, req.now))
    .transpose()
}

/// The slug of a venue or organizer by ID in its own language.
pub(crate) fn linked_slug(
    state: &AppState,
    language: Language,
    kind: RecordKind,
    id: u64,
) -> ServiceResult<Option<String>> {
    Ok(
        linked(state, language, kind, linked::Target::Id(id))?.map(|l| match l {
            Linked::Venue(v) => v.record.post.slug,
            Linked::Organizer(o) => o.record.post.slug,
        }),
    )
}

/// The categories the events bar offers (those with events), or one term by slug.
pub(crate) fn terms(
    state: &AppState,
    language: Language,
    kind: Kind,
    slug: Option<&str>,
) -> ServiceResult<Vec<TermView>> {
    let query = TermListQuery {
        page: 1,
        per_page: 100,
        search: None,
        include: None,
        exclude: None,
        descending: false,
        orderby: "name".into(),
        hide_empty: slug.is_none(),
        parent: None,
        slug: slug.map(str::to_string),
        event: None,
    };
    Ok(terms::list(
        &state.store,
        &state.index,
        kind,
        &request(language),
        &query,
        Vec::new(),
    )?
    .items)
}

/// A category's or tag's view by ID in `language` (a translation's archive link).
pub(crate) fn term_by_id(
    state: &AppState,
    language: Language,
    kind: Kind,
    id: u64,
) -> ServiceResult<Option<TermView>> {
    let req = Request {
        explicit_language: Some(language),
        ..request(language)
    };
    match found(terms::get(&state.store, kind, &req, id, Vec::new()))? {
        Some(term) => Ok(Some(terms::describe(&state.store, term, 0)?)),
        None => Ok(None),
    }
}

/// Whether a list error means the page names nothing that exists (a filter naming no record,
/// a page past the end): the 404 page.
pub(crate) fn names_nothing(e: &ServiceError) -> bool {
    matches!(e, ServiceError::Invalid(_) | ServiceError::PageNotFound(_))
}
