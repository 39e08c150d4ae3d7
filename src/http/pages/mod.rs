//! The public pages (docs/pages.md): HTML renderings of the same service views as the JSON
//! routes and the feeds — calendar views, event, venue and organizer pages, category and tag
//! archives, embeds — with their assets. Handlers turn an address into service calls
//! (`views`) and fill templates (`templates`); they never read the store or the index.

mod address;
mod assets;
mod event_form;
mod locale;
pub(crate) mod manage;
mod manage_texts;
pub mod settings;
mod templates;
mod views;

use crate::http::answer_cache::AnswerKey;
use crate::http::links::Links;
use crate::http::response::{Body, Finish, SharedBody};
use crate::http::{cached_answer, keep_answer, AnswerStamp, ApiResponse, AppState};
use crate::model::event::Event;
use crate::model::{Kind, Language};
use crate::service::events::EventView;
use crate::service::ServiceError;
use address::{Address, Page, Paths, RecordKind, Scope, View};
use chrono::{Datelike, Duration, Months, NaiveDate, NaiveDateTime};
use locale::{fill, PageLocale};
use maud::Markup;
pub use settings::Settings;
use settings::ViewKind;
use std::net::IpAddr;
use std::sync::Arc;
use templates::{Calendar, Head, PageCtx};
use views::Filters;
use warp::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use warp::http::{Method, StatusCode};
use warp::reply::Response;

use assets::Assets;

/// Events a day of the week view lists before its "+ N more" link.
const WEEK_PER_DAY: usize = 12;

/// The media type of every page.
const HTML: &str = "text/html; charset=utf-8";

/// What a page handler answers.
enum Answer {
    /// A page (see [`page`]).
    Page(ApiResponse),
    /// `303 See Other` to a path of this site (the bar's form, a page in another language).
    Redirect(String),
    /// Refused as the API refuses it (event password guesses beyond the throttle).
    Refused(crate::http::error::ApiError),
}

/// A failure below the pages: logged, answered by the API's error body (a 500 is a bug or a
/// broken store, not something a visitor can fix).
type PageResult = Result<Answer, ServiceError>;

/// The pages of one server: their settings and assets.
pub(crate) struct Pages {
    pub settings: Settings,
    assets: Assets,
    /// The path of the public URL ([`address::base_path`]).
    base: Arc<str>,
    /// The scheme, host and port of the public URL.
    origin: String,
    /// What each address may still propose.
    proposals: manage::propose::ProposalLimit,
    policies: SecurityPolicies,
}

impl Pages {
    pub(crate) fn new(settings: Settings, public_url: &str) -> Pages {
        let origin = url::Url::parse(public_url)
            .map(|u| u.origin().ascii_serialization())
            .unwrap_or_else(|_| public_url.to_string());
        Pages {
            assets: Assets::build(&settings, public_url),
            base: address::base_path(public_url).into(),
            origin,
            policies: SecurityPolicies::new(&settings),
            settings,
            proposals: Default::default(),
        }
    }
}

/// A request for a public page, and where its answer may be kept.
pub(crate) struct PageRequest<'r> {
    method: &'r Method,
    query: &'r str,
    password: Option<String>,
    address: Address,
    /// The links of the page's language segment.
    links: Links,
    /// A page an anonymous visitor reads (no password, no form sent) is a function of its
    /// address, the store's version (read first) and the clock's second, like the JSON
    /// answers: repeated requests within the second come from the response cache.
    kept: Option<(AnswerKey, AnswerStamp)>,
}

impl<'r> PageRequest<'r> {
    /// The request for the page at `segments` (the decoded path).
    pub(crate) fn new(
        state: &AppState,
        method: &'r Method,
        segments: &[String],
        query: &'r str,
        password: Option<String>,
    ) -> PageRequest<'r> {
        let kept =
            (password.is_none() && matches!(*method, Method::GET | Method::HEAD)).then(|| {
                let key = AnswerKey::Page {
                    path: segments.to_vec(),
                    query: query.to_string(),
                };
                (key, AnswerStamp::now(state))
            });
        let address = Address::parse(segments);
        let segment = (address.language != Language::En).then_some(address.language);
        PageRequest {
            method,
            query,
            password,
            links: Links::new(state.public_url.clone(), segment),
            address,
            kept,
        }
    }

    /// Its answer from the response cache, when this version of the store already built it
    /// this second: a lookup, answered without leaving the async worker.
    pub(crate) fn cached(&self, state: &AppState, finish: &Finish) -> Option<Response> {
        let (key, stamp) = self.kept.as_ref()?;
        let found = cached_answer(state, key, *stamp)?;
        Some(self.respond(state, finish, Answer::Page(found.answer())))
    }

    /// Builds its answer from the service views (they read the store and the index: run
    /// off the async workers).
    pub(crate) fn build(mut self, state: &AppState, finish: &Finish, client: IpAddr) -> Response {
        if !matches!(*self.method, Method::GET | Method::HEAD | Method::POST) {
            return finish.error(&crate::http::error::ApiError::no_route());
        }
        let answer = match render(
            state,
            &self.address,
            &self.links,
            self.query,
            self.password.take(),
            client,
        ) {
            Ok(Answer::Page(page)) => match self.kept.take() {
                Some((key, stamp)) if page.status == StatusCode::OK => {
                    Answer::Page(keep_answer(state, key, stamp, page))
                }
                _ => Answer::Page(page),
            },
            Ok(answer) => answer,
            Err(e) => {
                tracing::error!(error = ?e, "rendering a page failed");
                return finish.error(&crate::http::error::from_service(e, finish.caller));
            }
        };
        self.respond(state, finish, answer)
    }

    /// The response of `answer`, with the headers every page carries.
    fn respond(&self, state: &AppState, finish: &Finish, answer: Answer) -> Response {
        let mut response = match answer {
            Answer::Refused(e) => return finish.error(&e),
            Answer::Redirect(path) => {
                let mut r = Response::new(Vec::new().into());
                *r.status_mut() = StatusCode::SEE_OTHER;
                put(
                    r.headers_mut(),
                    header::LOCATION,
                    &format!("{}{path}", state.pages.origin),
                );
                put(r.headers_mut(), header::CACHE_CONTROL, "no-store");
                r
            }
            Answer::Page(page) => {
                let cache = if page.status == StatusCode::OK && *self.method != Method::POST {
                    "public, no-cache"
                } else {
                    "no-store"
                };
                let mut r = finish.success(page, Some(cache));
                r.headers_mut()
                    .remove(HeaderName::from_static("x-robots-tag"));
                r
            }
        };
        let h = response.headers_mut();
        let framing = if self.address.embed {
            Framing::Embeds
        } else {
            Framing::Own
        };
        security_headers(state, h, framing);
        h.insert(
            HeaderName::from_static("x-cal-api-version"),
            HeaderValue::from_static("v1"),
        );
        put(
            h,
            HeaderName::from_static("x-cal-api-root"),
            &format!("{}/", self.links.namespace()),
        );
        put(
            h,
            HeaderName::from_static("x-cal-api-origin"),
            &state.public_url,
        );
        response
    }
}

/// Who may show a page in a frame (CSP `frame-ancestors`).
#[derive(Clone, Copy)]
pub(crate) enum Framing {
    /// This site only: every public page but the embeds.
    Own,
    /// This site and the origins the operator lists (`--embed-origins`): the embeds.
    Embeds,
    /// Nobody: the editors' pages.
    Nobody,
}

/// The `Content-Security-Policy` of each [`Framing`], made once: what a page may load (its own
/// origin, and images from the listed ones), frame and send.
struct SecurityPolicies([HeaderValue; 3]);

impl SecurityPolicies {
    fn new(settings: &Settings) -> SecurityPolicies {
        let policy = |frame_ancestors: &str| {
            let csp = format!(
                "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
                 img-src 'self' data: {}; \
                 form-action 'self'; base-uri 'none'; frame-ancestors {frame_ancestors}",
                settings.image_origins.join(" ")
            );
            // Origins are checked when the settings are read; one that is not a header
            // value's text leaves the strictest policy.
            HeaderValue::from_str(&csp).unwrap_or(HeaderValue::from_static("default-src 'none'"))
        };
        let embeds = if settings.embed_origins.is_empty() {
            "'self'".to_string()
        } else {
            format!("'self' {}", settings.embed_origins.join(" "))
        };
        SecurityPolicies([policy("'self'"), policy(&embeds), policy("'none'")])
    }

    fn get(&self, framing: Framing) -> HeaderValue {
        self.0[framing as usize].clone()
    }
}

/// The headers that keep a page to its own origin: what it may load, frame and send.
fn security_headers(state: &AppState, h: &mut HeaderMap, framing: Framing) {
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        state.pages.policies.get(framing),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("strict-origin-when-cross-origin"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
}

/// Answers `/assets/{name}`: content-hashed names are immutable, `embed.js` (named in other
/// sites' pages) is revalidated.
pub(crate) fn asset(state: &AppState, finish: &Finish, name: &str) -> Response {
    match state.pages.assets.get(name) {
        Some((body, immutable)) => {
            let cache = if immutable {
                "public, max-age=31536000, immutable"
            } else {
                "public, max-age=300"
            };
            let mut r = finish.success(ApiResponse::ok_body(Body::Shared(body)), Some(cache));
            r.headers_mut()
                .remove(HeaderName::from_static("x-robots-tag"));
            r.headers_mut().remove(header::LINK);
            r
        }
        None => finish.error(&crate::http::error::ApiError::no_route()),
    }
}

/// A page's answer: its HTML with `status`, and for a record page its JSON twin
/// (`Link: <…>; rel="alternate"; type="application/json"`).
fn page(status: StatusCode, html: Markup, json: Option<String>) -> Answer {
    let mut answer = ApiResponse::ok_body(Body::Shared(Arc::new(SharedBody::new(
        HTML,
        html.into_string().into_bytes(),
    ))));
    answer.status = status;
    if let Some(json) = json {
        answer
            .link_relations
            .push((json, "rel=\"alternate\"; type=\"application/json\""));
    }
    Answer::Page(answer)
}

fn put(h: &mut HeaderMap, name: HeaderName, value: &str) {
    if let Ok(v) = HeaderValue::from_str(value) {
        h.insert(name, v);
    }
}

fn render(
    state: &AppState,
    address: &Address,
    links: &Links,
    query: &str,
    password: Option<String>,
    client: IpAddr,
) -> PageResult {
    let language = address.language;
    let pages = &state.pages;
    let paths = Paths {
        language,
        embed: address.embed,
        base: pages.base.clone(),
    };
    let mut ctx = PageCtx {
        settings: &pages.settings,
        stylesheet: pages.assets.stylesheet_href(),
        frame_script: pages.assets.frame_script_href(),
        manage_script: pages.assets.manage_script_href(),
        locale: PageLocale::of(language),
        paths,
        public_url: &state.public_url,
        origin: pages.origin.clone(),
        alternates: Vec::new(),
    };
    match &address.page {
        Page::Calendar { scope, view } => {
            if let Some(target) = bar_redirect(&ctx, scope, *view, query) {
                return Ok(Answer::Redirect(target));
            }
            calendar(state, &mut ctx, links, scope, *view, query)
        }
        Page::Record {
            kind: RecordKind::Event,
            slug,
        } => event_page(state, &mut ctx, links, slug, password, client),
        Page::Record { kind, slug } => linked_page(state, &mut ctx, links, *kind, slug),
        Page::Unknown => not_found(&mut ctx),
    }
}

fn not_found(ctx: &mut PageCtx) -> PageResult {
    let t = ctx.locale.texts;
    ctx.alternates = Language::ALL
        .into_iter()
        .map(|l| {
            (
                l,
                ctx.paths
                    .in_language(l)
                    .calendar(&Scope::All, View::Default),
            )
        })
        .collect();
    let head = Head {
        title: t.not_found_title.to_string(),
        description: t.not_found_text.to_string(),
        canonical: ctx.paths.calendar(&Scope::All, View::Default),
        noindex: true,
        feed: None,
        image: None,
        og_type: "website",
        json_ld: None,
    };
    Ok(page(
        StatusCode::NOT_FOUND,
        templates::layout(ctx, &head, templates::not_found(ctx)),
        None,
    ))
}

/// The bar's form sends `view` and `date`: they lead to the clean address of that view, the
/// filters kept in the query string.
fn bar_redirect(ctx: &PageCtx, scope: &Scope, view: View, query: &str) -> Option<String> {
    let mut kind = None;
    let mut date = None;
    let mut sent = false;
    for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
        match name.as_ref() {
            "view" => {
                sent = true;
                kind = ViewKind::parse(value.trim());
            }
            "date" => {
                sent = true;
                date = address::date(value.trim());
            }
            _ => {}
        }
    }
    if !sent {
        return None;
    }
    let kind = kind.unwrap_or_else(|| view.kind(ctx.settings.default_view));
    let view = match (kind, date) {
        (ViewKind::Month, Some(d)) => View::Month(d.with_day(1)),
        (kind, date) => View::at(kind, date),
    };
    let filters = Filters::parse(query);
    Some(format!(
        "{}{}",
        ctx.paths.calendar(scope, view),
        filters.query_string()
    ))
}

/// The site's wall clock now.
fn local_now(ctx: &PageCtx) -> NaiveDateTime {
    ctx.settings.zone.to_local(chrono::Utc::now())
}

/// The feed of a scope and filters, absolute, in the page's language.
fn feed_url(
    links: &Links,
    scope: &Scope,
    filters: &Filters,
    window: Option<(NaiveDateTime, NaiveDateTime)>,
) -> String {
    let q = filters.feed_query(scope, window);
    if q.is_empty() {
        links.route("/events.ics")
    } else {
        format!("{}?{q}", links.route("/events.ics"))
    }
}

/// A scope's name (none for every event) and the scope in each language.
type ScopeNames = (Option<String>, Vec<(Language, Scope)>);

/// A scope's name and its address in each language (a category's or tag's translations).
fn scope_names(
    state: &AppState,
    ctx: &PageCtx,
    scope: &Scope,
) -> Result<Option<ScopeNames>, ServiceError> {
    let (kind, slug) = match scope {
        Scope::All => {
            return Ok(Some((
                None,
                Language::ALL.into_iter().map(|l| (l, Scope::All)).collect(),
            )))
        }
        Scope::Category(path) => (Kind::Category, path.last().cloned().unwrap_or_default()),
        Scope::Tag(slug) => (Kind::Tag, slug.clone()),
    };
    let language = ctx.locale.language;
    let Some(term) = views::terms(state, language, kind, Some(&slug))?
        .into_iter()
        .next()
    else {
        return Ok(None);
    };
    // A category's address is its whole path: another path to the same slug names nothing.
    if matches!(scope, Scope::Category(path) if *path != term.path) {
        return Ok(None);
    }
    let mut alternates = vec![(language, scope.clone())];
    for (other, id) in &term.translations {
        if *other == language {
            continue;
        }
        if let Some(view) = views::term_by_id(state, *other, kind, *id)? {
            let scope = match kind {
                Kind::Category => Scope::Category(view.path.clone()),
                _ => Scope::Tag(view.term.slug.clone()),
            };
            alternates.push((*other, scope));
        }
    }
    Ok(Some((Some(term.term.name.clone()), alternates)))
}

fn calendar(
    state: &AppState,
    ctx: &mut PageCtx,
    links: &Links,
    scope: &Scope,
    view: View,
    query: &str,
) -> PageResult {
    let t = ctx.locale.texts;
    let language = ctx.locale.language;
    let filters = Filters::parse(query);
    let Some((scope_name, scope_alternates)) = scope_names(state, ctx, scope)? else {
        return not_found(ctx);
    };
    let now = local_now(ctx);
    let today = now.date();
    let kind = view.kind(ctx.settings.default_view);
    let date = match view {
        View::Month(d) | View::Week(d) | View::Day(d) => d.unwrap_or(today),
        _ => today,
    };
    ctx.alternates = Language::ALL
        .into_iter()
        .map(|l| {
            let scope = scope_alternates
                .iter()
                .find(|(a, _)| *a == l)
                .map(|(_, s)| s.clone())
                .unwrap_or(Scope::All);
            let path = ctx.paths.in_language(l).calendar(&scope, view);
            // Filters name records of this language: other languages get the view alone.
            let q = if l == language {
                filters.query_string()
            } else {
                String::new()
            };
            (l, format!("{path}{q}"))
        })
        .collect();
    let categories = match scope {
        Scope::All => views::terms(state, language, Kind::Category, None)?,
        _ => Vec::new(),
    };
    let venues = views::choices(state, language, RecordKind::Venue)?;
    let organizers = views::choices(state, language, RecordKind::Organizer)?;
    let query_string = filters.query_string();
    let here = |v: View| format!("{}{query_string}", ctx.paths.calendar(scope, v));
    // Previous and next, unless they would leave the dates an address can name.
    let step = |d: NaiveDate, view: fn(Option<NaiveDate>) -> View, label: &'static str| {
        address::in_range(d).then(|| (here(view(Some(d))), label))
    };
    // Each filter in force, named, with the query string of the same view without it.
    let mut filter_names = Vec::new();
    let mut name = |label: String, clear: fn(&mut Filters)| {
        let mut without = filters.clone();
        clear(&mut without);
        filter_names.push((label, without.query_string()));
    };
    let linked_name = |kind, id: u64| -> Result<String, ServiceError> {
        let found = views::linked(
            state,
            language,
            kind,
            crate::service::linked::Target::Id(id),
        )?;
        Ok(found.map_or(id.to_string(), |l| {
            crate::values::text::plain_text(l.title())
        }))
    };
    if let Some(c) = &filters.category {
        let term = categories.iter().find(|t| t.term.slug == *c);
        let label = term.map_or(c.as_str(), |t| t.term.name.as_str());
        name(format!("{}: {label}", t.category_label), |f| {
            f.category = None
        });
    }
    if let Some(v) = filters.venue {
        let label = linked_name(RecordKind::Venue, v)?;
        name(format!("{}: {label}", t.venue), |f| f.venue = None);
    }
    if let Some(o) = filters.organizer {
        let label = linked_name(RecordKind::Organizer, o)?;
        name(format!("{}: {label}", t.organizers), |f| f.organizer = None);
    }
    if filters.featured {
        name(t.featured_only.to_string(), |f| f.featured = false);
    }
    if let Some(s) = &filters.search {
        name(fill(t.results_for, "query", s), |f| f.search = None);
    }
    let base_title = scope_name.clone().unwrap_or_else(|| t.events.to_string());
    let mut json_ld = None;
    let (period, content, window): (String, Markup, Option<(NaiveDateTime, NaiveDateTime)>) =
        match kind {
            ViewKind::Month => {
                let first = date.with_day(1).expect("every month has a first day");
                let next = first + Months::new(1);
                let last = next - Duration::days(1);
                let weeks = templates::month_weeks(first, ctx.settings.week_start);
                let days = match views::days(
                    state,
                    language,
                    scope,
                    &filters,
                    (first, last),
                    ctx.settings.month_events_per_day,
                ) {
                    Ok(d) => d,
                    Err(e) if views::names_nothing(&e) => return not_found(ctx),
                    Err(e) => return Err(e),
                };
                let heading = ctx.locale.month_title(first);
                let nav = templates::calendar_nav(
                    ctx,
                    &heading,
                    step(first - Months::new(1), View::Month, t.prev_month),
                    Some(here(View::Month(None))),
                    step(next, View::Month, t.next_month),
                );
                let lookup = |d: NaiveDate| days.of(d);
                let table =
                    templates::month_table(ctx, scope, &filters, first, &weeks, &lookup, today);
                let content = maud::html! {
                    (nav)
                    @if days.is_empty() { (templates::nothing(t.no_events_month)) }
                    (table)
                };
                (
                    heading,
                    content,
                    Some((views::midnight(first), views::midnight(next))),
                )
            }
            ViewKind::Week => {
                let offset = (date.weekday().num_days_from_monday() + 7
                    - ctx.settings.week_start.num_days_from_monday())
                    % 7;
                let start = date - Duration::days(offset as i64);
                let end = start + Duration::days(6);
                let days =
                    match views::days(state, language, scope, &filters, (start, end), WEEK_PER_DAY)
                    {
                        Ok(d) => d,
                        Err(e) if views::names_nothing(&e) => return not_found(ctx),
                        Err(e) => return Err(e),
                    };
                let list: Vec<(NaiveDate, Vec<Event>, usize)> = (0..7)
                    .map(|i| {
                        let d = start + Duration::days(i);
                        let (events, total) = days.of(d).cloned().unwrap_or_default();
                        (d, events, total)
                    })
                    .collect();
                let heading = fill(t.week_of, "date", &ctx.locale.day_month(start));
                let nav = templates::calendar_nav(
                    ctx,
                    &heading,
                    step(start - Duration::days(7), View::Week, t.prev_week),
                    Some(here(View::Week(None))),
                    step(start + Duration::days(7), View::Week, t.next_week),
                );
                let content = maud::html! {
                    (nav)
                    @if days.is_empty() { (templates::nothing(t.no_events_week)) }
                    (templates::week_days(ctx, scope, &filters, &list, today))
                };
                (
                    heading,
                    content,
                    Some((
                        views::midnight(start),
                        views::midnight(end + Duration::days(1)),
                    )),
                )
            }
            ViewKind::Day => {
                let days = match views::days(
                    state,
                    language,
                    scope,
                    &filters,
                    (date, date),
                    views::DAY_LIMIT,
                ) {
                    Ok(d) => d,
                    Err(e) if views::names_nothing(&e) => return not_found(ctx),
                    Err(e) => return Err(e),
                };
                let (events, total) = days.of(date).cloned().unwrap_or_default();
                let event_views =
                    views::event_views(state, &events, chrono::Utc::now().naive_utc())?;
                let items: Vec<(&Event, &EventView)> = events.iter().zip(&event_views).collect();
                json_ld = Some(list_json_ld(ctx, links, &items));
                let heading = ctx.locale.long_date(date);
                let nav = templates::calendar_nav(
                    ctx,
                    &heading,
                    step(date - Duration::days(1), View::Day, t.prev_day),
                    Some(here(View::Day(None))),
                    step(date + Duration::days(1), View::Day, t.next_day),
                );
                let content = maud::html! {
                    (nav)
                    @if items.is_empty() { (templates::nothing(t.no_events_day)) }
                    @else { (templates::day_groups(ctx, &[(date, items.clone())])) }
                    @if total > items.len() {
                        p.nothing { (fill(&fill(t.day_truncated, "n", &ctx.locale.count(items.len())), "total", &ctx.locale.count(total))) }
                    }
                };
                (
                    heading,
                    content,
                    Some((
                        views::midnight(date),
                        views::midnight(date + Duration::days(1)),
                    )),
                )
            }
            ViewKind::List => {
                let page = match view {
                    View::List { page } => page,
                    _ => 1,
                };
                let per_page = ctx.settings.list_per_page;
                let (events, total) =
                    match views::upcoming(state, language, scope, &filters, now, page, per_page) {
                        Ok(found) => found,
                        Err(e) if views::names_nothing(&e) => return not_found(ctx),
                        Err(e) => return Err(e),
                    };
                let event_views =
                    views::event_views(state, &events, chrono::Utc::now().naive_utc())?;
                let items: Vec<(&Event, &EventView)> = events.iter().zip(&event_views).collect();
                json_ld = Some(list_json_ld(ctx, links, &items));
                let groups = by_day(&items, today);
                let pages = total.div_ceil(per_page.max(1));
                let prev = (page > 1).then(|| here(View::List { page: page - 1 }));
                let next = (page < pages).then(|| here(View::List { page: page + 1 }));
                let heading = if page > 1 {
                    format!(
                        "{} ({})",
                        t.upcoming_events,
                        fill(t.page_n, "n", &ctx.locale.count(page))
                    )
                } else {
                    t.upcoming_events.to_string()
                };
                let empty = if filters.is_empty() {
                    t.no_events_upcoming
                } else {
                    t.no_events_found
                };
                let content = maud::html! {
                    h2.period { (heading) }
                    @if items.is_empty() { (templates::nothing(empty)) }
                    @else { (templates::day_groups(ctx, &groups)) }
                    (templates::list_pager(ctx, prev, next))
                };
                (heading, content, None)
            }
        };
    let feed = feed_url(links, scope, &filters, None);
    let cal = Calendar {
        scope,
        kind,
        date,
        filters: &filters,
        categories: &categories,
        venues: &venues,
        organizers: &organizers,
        feed: feed.clone(),
    };
    let title = format!("{base_title} · {period}");
    let h1 = match &filters.search {
        Some(s) => fill(t.results_for, "query", s),
        None => base_title.clone(),
    };
    let body = maud::html! {
        h1 { (h1) }
        (templates::events_bar(ctx, &cal))
        (templates::active_filters(ctx, scope, view, &filter_names))
        (content)
    };
    let head = Head {
        title,
        description: format!("{} — {}", base_title, ctx.settings.site_name),
        canonical: format!("{}{}", ctx.paths.calendar(scope, view), query_string),
        noindex: filters.search.is_some(),
        feed: Some(feed_url(links, scope, &filters, window)),
        image: None,
        og_type: "website",
        json_ld,
    };
    Ok(page(
        StatusCode::OK,
        templates::layout(ctx, &head, body),
        None,
    ))
}

/// Upcoming events (in start order) grouped by the day they are listed under: the day they
/// start, or `today` for those already running.
fn by_day<'a>(
    items: &[(&'a Event, &'a EventView)],
    today: NaiveDate,
) -> Vec<(NaiveDate, Vec<(&'a Event, &'a EventView)>)> {
    let mut groups: Vec<(NaiveDate, Vec<(&Event, &EventView)>)> = Vec::new();
    for item in items {
        let day = item.0.start_local.date().max(today);
        match groups.last_mut() {
            Some((d, list)) if *d == day => list.push(*item),
            _ => groups.push((day, vec![*item])),
        }
    }
    groups
}

/// The JSON-LD of an event, as the API's `json_ld` with its location and organizer, the
/// performer left out unless known.
fn event_json_ld(
    ctx: &PageCtx,
    links: &Links,
    event: &Event,
    view: &EventView,
) -> serde_json::Value {
    let now = chrono::Utc::now().naive_utc();
    let linked_ctx = |image| crate::http::render::LinkedContext {
        links,
        now,
        image,
        translations: Vec::new(),
        json_ld: true,
    };
    let location = view
        .venue
        .as_ref()
        .map(|v| crate::http::render::venue_json_ld(&v.record, &linked_ctx(v.image.clone())));
    let organizer = view
        .organizers
        .first()
        .map(|o| crate::http::render::organizer_json_ld(&o.record, &linked_ctx(o.image.clone())));
    let image = view
        .image
        .as_ref()
        .filter(|i| ctx.shows_image(&i.url))
        .map(|i| i.url.as_str());
    // Without a venue, an event with a website is taken to happen there (Google's event
    // results want a location of some kind).
    let online = location.is_none() && !event.website.is_empty();
    let location = location.or_else(|| {
        online.then(|| serde_json::json!({"@type": "VirtualLocation", "url": event.website}))
    });
    let mut ld =
        crate::http::render::event_json_ld(event, links, now, image, location, organizer.clone());
    if online {
        ld["eventAttendanceMode"] = "https://schema.org/OnlineEventAttendanceMode".into();
    }
    match organizer {
        Some(o) => ld["performer"] = o,
        None => {
            if let Some(map) = ld.as_object_mut() {
                map.remove("performer");
            }
        }
    }
    ld
}

fn list_json_ld(ctx: &PageCtx, links: &Links, items: &[(&Event, &EventView)]) -> String {
    let list: Vec<serde_json::Value> = items
        .iter()
        .filter(|(e, _)| e.password.is_none())
        .map(|(e, v)| event_json_ld(ctx, links, e, v))
        .collect();
    script_json(&serde_json::Value::Array(list))
}

/// JSON for a `<script>` element: `<` written as `\u003c` so nothing in it closes the
/// element.
fn script_json(value: &serde_json::Value) -> String {
    serde_json::to_string(value)
        .expect("JSON values always serialize")
        .replace('<', "\\u003c")
}

/// The event pages' links to other languages: each translation's page, else that language's
/// calendar.
fn record_alternates(
    ctx: &PageCtx,
    kind: RecordKind,
    own: &str,
    slugs: &[(Language, String)],
) -> Vec<(Language, String)> {
    Language::ALL
        .into_iter()
        .map(|l| {
            let paths = ctx.paths.in_language(l);
            if l == ctx.locale.language {
                return (l, paths.record(kind, own));
            }
            match slugs.iter().find(|(a, _)| *a == l) {
                Some((_, slug)) => (l, paths.record(kind, slug)),
                None => (l, paths.calendar(&Scope::All, View::Default)),
            }
        })
        .collect()
}

/// Where a slug of another language leads: a record page whose slug is not in the address's
/// language but in another's redirects there (the API's `url` of a record read without its
/// language segment).
fn other_language<T>(
    language: Language,
    find: impl Fn(Language) -> Result<Option<T>, ServiceError>,
) -> Result<Option<(Language, T)>, ServiceError> {
    for other in Language::ALL {
        if other != language {
            if let Some(found) = find(other)? {
                return Ok(Some((other, found)));
            }
        }
    }
    Ok(None)
}

fn event_page(
    state: &AppState,
    ctx: &mut PageCtx,
    links: &Links,
    slug: &str,
    password: Option<String>,
    client: IpAddr,
) -> PageResult {
    let language = ctx.locale.language;
    // An empty password is no guess, as on the API's reads.
    let password = password.filter(|p| !p.is_empty());
    let tried = password.is_some();
    if tried {
        if let Err(e) = state.auth.admit_event_password(client) {
            return Ok(Answer::Refused(e.into()));
        }
    }
    let Some((event, open, tries)) = views::event(state, language, slug, password)? else {
        let elsewhere = other_language(language, |l| {
            Ok(views::event(state, l, slug, None)?.map(|(e, _, _)| e.post.slug))
        })?;
        return match elsewhere {
            Some((l, slug)) => Ok(Answer::Redirect(
                ctx.paths.in_language(l).record(RecordKind::Event, &slug),
            )),
            None => not_found(ctx),
        };
    };
    if tried && tries.failed() {
        state.auth.event_password_failed(client);
    }
    let now = chrono::Utc::now().naive_utc();
    let view = views::event_views(state, std::slice::from_ref(&event), now)?
        .pop()
        .expect("one view per event");
    let mut slugs = Vec::new();
    for (l, id) in &view.translations {
        if *l != language {
            if let Some(e) = views::event_by_id(state, *l, *id)? {
                slugs.push((*l, e.post.slug));
            }
        }
    }
    ctx.alternates = record_alternates(ctx, RecordKind::Event, &event.post.slug, &slugs);
    let (previous, next) = views::neighbours(state, language, &event)?;
    let next_dates = views::next_dates(state, language, &event)?;
    let rule = views::rule(state, &event)?.map(|r| ctx.locale.rule(&r));
    let title = crate::values::text::plain_text(&event.post.title);
    let (ics, google, outlook) = calendar_links(ctx, links, &event, &view);
    let locked = (!open).then_some(tried);
    let description = if open {
        templates::excerpt(&event)
    } else {
        ctx.locale.texts.protected.to_string()
    };
    let head = Head {
        title: title.clone(),
        description,
        canonical: templates::event_path(ctx, &event),
        noindex: false,
        feed: open.then(|| ics.clone()),
        image: view
            .image
            .as_ref()
            .filter(|i| open && ctx.shows_image(&i.url))
            .map(|i| i.url.clone()),
        og_type: "article",
        json_ld: open.then(|| script_json(&event_json_ld(ctx, links, &event, &view))),
    };
    let shown = templates::EventPage {
        event: &event,
        view: &view,
        ics,
        google,
        outlook,
        previous: previous.as_ref(),
        next: next.as_ref(),
        next_dates: &next_dates,
        rule,
        locked,
    };
    let status = if tried && !open {
        StatusCode::FORBIDDEN
    } else {
        StatusCode::OK
    };
    Ok(page(
        status,
        templates::layout(ctx, &head, templates::event_page(ctx, &shown)),
        Some(links.route(&format!("/events/{}", event.post.id))),
    ))
}

/// An event's feed, and its addresses at Google Calendar and Outlook that add it there.
fn calendar_links(
    ctx: &PageCtx,
    links: &Links,
    event: &Event,
    view: &EventView,
) -> (String, String, String) {
    let title = crate::values::text::plain_text(&event.post.title);
    let text = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let (start, end) = (event.start_utc.and_utc(), event.end_utc.and_utc());
    let google_dates = if event.all_day {
        format!(
            "{}/{}",
            event.start_local.format("%Y%m%d"),
            (event.end_local.date() + Duration::days(1)).format("%Y%m%d")
        )
    } else {
        format!(
            "{}/{}",
            start.format("%Y%m%dT%H%M%SZ"),
            end.format("%Y%m%dT%H%M%SZ")
        )
    };
    let place = view
        .venue
        .as_ref()
        .map(|v| crate::values::text::plain_text(&v.record.post.title))
        .unwrap_or_default();
    let page_url = ctx.absolute(&templates::event_path(ctx, event));
    let google = format!(
        "https://calendar.google.com/calendar/render?action=TEMPLATE&text={}&dates={google_dates}&details={}&location={}",
        text(&title),
        text(&page_url),
        text(&place)
    );
    let outlook = format!(
        "https://outlook.office.com/calendar/0/deeplink/compose?path=%2Fcalendar%2Faction%2Fcompose&rru=addevent&subject={}&startdt={}&enddt={}&allday={}&body={}&location={}",
        text(&title),
        text(&start.to_rfc3339()),
        text(&end.to_rfc3339()),
        event.all_day,
        text(&page_url),
        text(&place)
    );
    let ics = links.route(&format!("/events/{}.ics", event.post.id));
    (ics, google, outlook)
}

/// The page of an event an editor previews: as visitors will see it once it is published
/// (unlocked), without its neighbours and other dates.
pub(crate) fn event_page_preview(
    state: &AppState,
    ctx: &PageCtx,
    event: &Event,
    view: &EventView,
) -> Result<Markup, ServiceError> {
    let language = ctx.locale.language;
    let links = Links::new(
        state.public_url.clone(),
        (language != Language::En).then_some(language),
    );
    let (ics, google, outlook) = calendar_links(ctx, &links, event, view);
    let rule = views::rule(state, event)?.map(|r| ctx.locale.rule(&r));
    Ok(templates::event_page(
        ctx,
        &templates::EventPage {
            event,
            view,
            ics,
            google,
            outlook,
            previous: None,
            next: None,
            next_dates: &[],
            rule,
            locked: None,
        },
    ))
}

fn linked_page(
    state: &AppState,
    ctx: &mut PageCtx,
    links: &Links,
    kind: RecordKind,
    slug: &str,
) -> PageResult {
    use crate::service::linked::Target;
    let t = ctx.locale.texts;
    let language = ctx.locale.language;
    let target = Target::Slug(slug.to_string());
    let Some(record) = views::linked(state, language, kind, target.clone())? else {
        let elsewhere = other_language(language, |l| {
            Ok(views::linked(state, l, kind, target.clone())?.map(|_| slug.to_string()))
        })?;
        return match elsewhere {
            Some((l, slug)) => Ok(Answer::Redirect(
                ctx.paths.in_language(l).record(kind, &slug),
            )),
            None => not_found(ctx),
        };
    };
    let mut slugs = Vec::new();
    for (l, id) in record.translations() {
        if *l != language {
            if let Some(s) = views::linked_slug(state, *l, kind, *id)? {
                slugs.push((*l, s));
            }
        }
    }
    ctx.alternates = record_alternates(ctx, kind, slug, &slugs);
    let filters = match kind {
        RecordKind::Venue => Filters {
            venue: Some(record.id()),
            ..Filters::default()
        },
        _ => Filters {
            organizer: Some(record.id()),
            ..Filters::default()
        },
    };
    let now = local_now(ctx);
    let (events, _) = views::upcoming(
        state,
        language,
        &Scope::All,
        &filters,
        now,
        1,
        ctx.settings.list_per_page,
    )?;
    let event_views = views::event_views(state, &events, chrono::Utc::now().naive_utc())?;
    let items: Vec<(&Event, &EventView)> = events.iter().zip(&event_views).collect();
    let groups = by_day(&items, now.date());
    let title = crate::values::text::plain_text(record.title());
    let (card, description, all_label) = match &record {
        views::Linked::Venue(v) => (
            templates::venue_card(ctx, &v.record),
            &v.record.post.description,
            t.all_events_of_venue,
        ),
        views::Linked::Organizer(o) => (
            templates::organizer_card(ctx, &o.record),
            &o.record.post.description,
            t.all_events_of_organizer,
        ),
    };
    let all_events = format!(
        "{}{}",
        ctx.paths.calendar(&Scope::All, View::List { page: 1 }),
        filters.query_string()
    );
    let heading = match kind {
        RecordKind::Venue => fill(t.events_at, "name", &title),
        _ => fill(t.events_by, "name", &title),
    };
    let body = maud::html! {
        article.record-page {
            h1 { (title) }
            @if let Some(img) = record.image().filter(|i| ctx.shows_image(&i.url)) {
                img.hero src=(img.url) alt="" width="1200" height="675" loading="lazy" decoding="async";
            }
            (card)
            div.description { (maud::PreEscaped(crate::values::text::sanitize_html(&crate::values::text::render_paragraphs(description)))) }
            section {
                h2 { (heading) }
                @if items.is_empty() { (templates::nothing(t.no_events_upcoming)) }
                @else { (templates::day_groups(ctx, &groups)) }
                p { a href=(all_events) { (all_label) } }
            }
        }
    };
    let head = Head {
        title: title.clone(),
        description: crate::values::text::json_ld_description("", description),
        canonical: ctx.paths.record(kind, slug),
        noindex: false,
        feed: None,
        image: None,
        og_type: "website",
        json_ld: None,
    };
    let json_path = match kind {
        RecordKind::Venue => "venues",
        _ => "organizers",
    };
    Ok(page(
        StatusCode::OK,
        templates::layout(ctx, &head, body),
        Some(links.route(&format!("/{json_path}/{}", record.id()))),
    ))
}
