//! `/events`, `/events/{id}`, `/events/by-slug/{slug}` (docs/api.md, "Events"): routes, parameters and
//! handlers.

use crate::http::error::{from_service, ApiError};
use crate::http::lists::{self, ListAnswer};
use crate::http::params::{ParamKind, ParamSpec, Params};
use crate::http::render::{self, EventParts, LinkedContext};
use crate::http::representation_cache::{
    current_template, Cached, Generation, RepresentationKey, Template,
};
use crate::http::resources::linked::{inline, LinkedResource};
use crate::http::resources::{common_write_params, export_form, invalid, post_write, request};
use crate::http::response::Body;
use crate::http::routes::{
    Endpoint, Group, OperationClass, Permission, ResponseSchema, Route, Seg,
};
use crate::http::{ApiResponse, AppState, Context};
use crate::model::event::Event;
use crate::model::post::{Organizer, Venue};
use crate::model::Kind;
use crate::service::events::{
    self, Dependency, EventFields, EventQuery, EventView, EventViews, LinkRef, Target, TermRef,
    Unlock,
};
use crate::service::linked::LinkedView;
use crate::service::Request;
use crate::values::cost::Cost;
use crate::values::timezone::Zone;
use crate::values::{datetime, scalars, Invalid, SubCode};
use chrono::NaiveDateTime;
use serde_json::{json, Value};
use std::sync::Arc;
use warp::http::header::LOCATION;
use warp::http::StatusCode;

const DATE_HELP: &str = "A date-time: YYYY-MM-DD HH:MM:SS (optionally with T, seconds, a zone \
such as Z or +02:00), MM/DD/YYYY, a Unix timestamp, or relative forms such as now, today, \
tomorrow 9am, next wednesday 4pm, +1 week, 2 days ago.";

fn date_param(name: &'static str) -> ParamSpec {
    ParamSpec::query(name, ParamKind::DateTime).describe(DATE_HELP)
}

fn boolean(name: &'static str) -> ParamSpec {
    ParamSpec::query(name, ParamKind::Boolean)
}

fn id_list(name: &'static str) -> ParamSpec {
    ParamSpec::query(name, ParamKind::IdList)
}

pub(super) fn list_params() -> Vec<ParamSpec> {
    let mut specs = lists::paging_params();
    for name in [
        "start_date",
        "end_date",
        "starts_before",
        "starts_after",
        "ends_before",
        "ends_after",
    ] {
        specs.push(date_param(name));
    }
    specs.extend([
        ParamSpec::query("strict_dates", ParamKind::NonEmptyString)
            .describe("1, true, on or yes: bounds apply at the exact times given.")
            .default(json!("false")),
        ParamSpec::query("search", ParamKind::NonEmptyString),
        ParamSpec::query("orderby", ParamKind::Enum(&["relevance"])),
        ParamSpec::query("categories", ParamKind::RefList { allow_empty: false })
            .describe("Category IDs or slugs; descendants match too."),
        ParamSpec::query("tags", ParamKind::RefList { allow_empty: false })
            .describe("Tag IDs or slugs."),
        id_list("venue"),
        id_list("organizer"),
        boolean("featured"),
        ParamSpec::query("status", ParamKind::StatusFilter),
        boolean("geoloc"),
        ParamSpec::query(
            "geoloc_lat",
            ParamKind::Number {
                minimum: -90.0,
                maximum: Some(90.0),
                exclusive_minimum: false,
            },
        ),
        ParamSpec::query(
            "geoloc_lng",
            ParamKind::Number {
                minimum: -180.0,
                maximum: Some(180.0),
                exclusive_minimum: false,
            },
        ),
        ParamSpec::query(
            "geoloc_radius",
            ParamKind::Number {
                minimum: 0.0,
                maximum: None,
                exclusive_minimum: true,
            },
        )
        .default(json!(25)),
        ParamSpec::query("geoloc_unit", ParamKind::Enum(&["mi", "km"])).default(json!("mi")),
        id_list("include"),
        ParamSpec::query(
            "post_parent",
            ParamKind::Integer {
                minimum: Some(1),
                maximum: None,
            },
        ),
        boolean("ticketed"),
        ParamSpec::query("password", ParamKind::String)
            .describe("Unlocks password-protected events."),
        ParamSpec::query("context", ParamKind::String).describe(LIST_CONTEXT_HELP),
    ]);
    specs
}

const LIST_CONTEXT_HELP: &str = "edit: unlocks the password-protected events the caller may \
edit. export (editors and administrators; 401/403 rest_forbidden_context for others): the \
export form of almanac export (stored description, excerpt, status and cost values, event \
passwords, nothing masked) and events hidden from listings too.";

const SINGLE_CONTEXT_HELP: &str = "edit: unlocks a password-protected event the caller may \
edit. export (editors and administrators; 401/403 rest_forbidden_context for others): the \
export form of almanac export (stored description, excerpt, status and cost values, the event \
password, no json_ld).";

pub(crate) fn write_params(create: bool) -> Vec<ParamSpec> {
    let mut specs = common_write_params("title", create);
    let mut start = date_param("start_date");
    start.required = create;
    let mut end = date_param("end_date");
    end.required = create;
    specs.extend([
        start,
        end,
        ParamSpec::query("slug", ParamKind::NonEmptyString),
        ParamSpec::query("timezone", ParamKind::String)
            .describe("IANA time zone, UTC, or UTC+5 / UTC-3:30 / UTC+5.5."),
        boolean("all_day"),
        ParamSpec::query("cost", ParamKind::Raw(r#"{"type": ["string", "number", "array"], "items": {"type": ["string", "number"]}}"#)),
        ParamSpec::query("website", ParamKind::Url),
        boolean("show_map"),
        boolean("show_map_link"),
        boolean("hide_from_listings"),
        boolean("sticky"),
        boolean("featured"),
        boolean("ticketed"),
        ParamSpec::query("categories", ParamKind::RefList { allow_empty: true })
            .describe("Category IDs or names (unknown names are created)."),
        ParamSpec::query("tags", ParamKind::RefList { allow_empty: true })
            .describe("Tag IDs or names (unknown names are created)."),
        ParamSpec::query("venue", ParamKind::Raw(r#"{"type": ["integer", "string", "object", "array"]}"#))
            .describe("A venue ID, {\"id\": ID}, or venue fields to create one; 0, \"\" or [] unlinks."),
        ParamSpec::query("organizer", ParamKind::Raw(r#"{"type": ["integer", "string", "object", "array"]}"#))
            .describe("Organizer IDs or objects (IDs or fields to create); 0, \"\" or [] unlinks all."),
        ParamSpec::query("password", ParamKind::String).describe("Event password; \"\" removes it."),
        ParamSpec::query("post_parent", ParamKind::Integer { minimum: Some(0), maximum: None }),
        ParamSpec::query("recurrence", ParamKind::Raw(r#"{"type": ["array", "string", "null"], "items": {"type": "string"}}"#))
            .describe("Extension: makes the event a series. RFC 5545 lines (RRULE, RDATE, EXDATE), as a list or one per line; [] or \"\" stops the repeating. The rule expands from start_date in the event's time zone."),
        ParamSpec::query("scope", ParamKind::Enum(&["this", "following"]))
            .describe("Extension, on an occurrence of a series: this (the default) changes that occurrence alone; following splits the series there, and the update changes the new series that starts at it."),
    ]);
    specs
}

pub(super) fn single_read_params(path: ParamSpec) -> Vec<ParamSpec> {
    vec![
        path,
        ParamSpec::query("password", ParamKind::NonEmptyString)
            .describe("Password of a protected event."),
        ParamSpec::query("context", ParamKind::String).describe(SINGLE_CONTEXT_HELP),
    ]
}

pub(crate) fn routes() -> Vec<Route> {
    let id = || {
        ParamSpec::path(
            "id",
            "Event ID.",
            ParamKind::Integer {
                minimum: Some(0),
                maximum: None,
            },
        )
    };
    let slug = || ParamSpec::path("slug", "Event slug.", ParamKind::NonEmptyString);
    let endpoint = |group, operation_id: &str, class, response: &str, params, handler| Endpoint {
        permission: match group {
            Group::Read => Permission::Everyone,
            Group::Create => Permission::CreatePost,
            Group::Edit => Permission::EditPost(Kind::Event),
            Group::Delete => Permission::DeletePost(Kind::Event),
        },
        group,
        operation_id: operation_id.to_string(),
        summary: String::new(),
        class,
        response: ResponseSchema::Component(response.to_string()),
        params,
        handler,
        checks_references: true,
    };
    let with = |first: ParamSpec, mut rest: Vec<ParamSpec>| {
        rest.insert(0, first);
        rest
    };
    let delete_params = |path: ParamSpec| {
        vec![
            path,
            ParamSpec::query("password", ParamKind::NonEmptyString),
        ]
    };
    vec![
        Route {
            segments: &[Seg::Lit("events")],
            endpoints: vec![
                endpoint(
                    Group::Read,
                    "listEvents",
                    OperationClass::PostList,
                    "EventArchive",
                    list_params(),
                    list,
                ),
                endpoint(
                    Group::Create,
                    "createEvent",
                    OperationClass::Create,
                    "Event",
                    write_params(true),
                    create,
                ),
            ],
        },
        Route {
            segments: &[Seg::Lit("events"), Seg::Id],
            endpoints: vec![
                endpoint(
                    Group::Read,
                    "getEvent",
                    OperationClass::GetSingle,
                    "Event",
                    single_read_params(id()),
                    get,
                ),
                endpoint(
                    Group::Delete,
                    "deleteEvent",
                    OperationClass::DeletePost,
                    "Event",
                    delete_params(id()),
                    delete,
                ),
                endpoint(
                    Group::Edit,
                    "updateEvent",
                    OperationClass::Update,
                    "Event",
                    with(id(), write_params(false)),
                    update,
                ),
            ],
        },
        Route {
            segments: &[Seg::Lit("events"), Seg::Lit("by-slug"), Seg::Slug],
            endpoints: vec![
                endpoint(
                    Group::Read,
                    "getEventBySlug",
                    OperationClass::GetSingle,
                    "Event",
                    single_read_params(slug()),
                    get,
                ),
                endpoint(
                    Group::Delete,
                    "deleteEventBySlug",
                    OperationClass::DeletePost,
                    "Event",
                    delete_params(slug()),
                    delete,
                ),
                endpoint(
                    Group::Edit,
                    "updateEventBySlug",
                    OperationClass::Update,
                    "Event",
                    with(slug(), write_params(false)),
                    update,
                ),
            ],
        },
    ]
}

pub(super) fn target(ctx: &Context) -> Target {
    match (&ctx.path.id, &ctx.path.slug) {
        (Some(id), _) => Target::Id(*id),
        (None, Some(slug)) => Target::Slug(slug.clone()),
        (None, None) => unreachable!("single routes have an id or a slug"),
    }
}

pub(super) fn unlock(ctx: &Context) -> Unlock {
    Unlock {
        password: ctx.params.str("password").map(str::to_string),
        context_edit: ctx.params.str("context") == Some("edit"),
        export: export_form(ctx),
        tries: ctx.event_password.clone(),
    }
}

/// The term references of a write.
fn term_refs(params: &Params, name: &str) -> Option<Vec<TermRef>> {
    params.get(name).and_then(Value::as_array).map(|items| {
        items
            .iter()
            .map(|v| match v {
                Value::Number(n) => TermRef::Id(n.as_u64().unwrap_or(0)),
                other => {
                    let s = other.as_str().unwrap_or_default();
                    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
                        // Numeric, so an ID, even beyond 64 bits: such an ID names no
                        // term and is skipped like any unknown ID, rather than becoming a name.
                        TermRef::Id(s.parse().unwrap_or(u64::MAX))
                    } else {
                        TermRef::Name(s.to_string())
                    }
                }
            })
            .collect()
    })
}

/// One venue/organizer reference: an ID, `{"id": ID}`, or inline fields.
fn link_ref<R: LinkedResource>(value: &Value) -> Result<LinkRef<R>, String> {
    match value {
        Value::Object(object) => match object.get("id").filter(|v| !v.is_null()) {
            Some(id) => scalars::positive_integer(id)
                .map(|id| LinkRef::Id(id as u64))
                .map_err(|e| format!("id {}", e.reason)),
            None => inline::<R>(object.clone()).map(|parts| LinkRef::Inline(Box::new(parts))),
        },
        other => scalars::positive_integer(other)
            .map(|id| LinkRef::Id(id as u64))
            .map_err(|e| e.reason),
    }
}

/// "Remove" values of `venue`/`organizer`: `0`, `"0"`, `""`, `[]`.
fn is_unlink(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty() || s == "0",
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

fn refuse(params: &mut Params, name: &str, reason: impl Into<String>) {
    params.refuse(name, Invalid::new(SubCode::InvalidFormat, reason.into()));
}

/// The event's own write fields, syntax-checked.
fn event_fields(params: &mut Params) -> EventFields {
    let timezone = match params.str("timezone") {
        None | Some("") => None,
        Some(tz) => match Zone::parse(tz) {
            Ok(zone) => Some(zone),
            Err(why) => {
                params.refuse("timezone", why);
                None
            }
        },
    };
    let cost = match params.get("cost").cloned() {
        None => None,
        Some(v) => match Cost::from_write(&v) {
            Ok(cost) => Some(cost),
            Err(why) => {
                params.refuse("cost", why);
                None
            }
        },
    };
    let venue = match params.get("venue").cloned() {
        None => None,
        Some(v) if is_unlink(&v) => Some(None),
        Some(Value::Array(items)) if items.len() > 1 => {
            refuse(params, "venue", "may name at most one venue.");
            None
        }
        Some(Value::Array(items)) => match link_ref::<Venue>(&items[0]) {
            Ok(link) => Some(Some(link)),
            Err(why) => {
                refuse(params, "venue", why);
                None
            }
        },
        Some(v) => match link_ref::<Venue>(&v) {
            Ok(link) => Some(Some(link)),
            Err(why) => {
                refuse(params, "venue", why);
                None
            }
        },
    };
    let organizers = match params.get("organizer").cloned() {
        None => None,
        Some(v) if is_unlink(&v) => Some(Vec::new()),
        Some(v) => {
            let items: Vec<Value> = match v {
                Value::Array(items) => items,
                Value::String(s) => s
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| json!(s))
                    .collect(),
                other => vec![other],
            };
            let parsed: Result<Vec<LinkRef<Organizer>>, String> =
                items.iter().map(link_ref::<Organizer>).collect();
            match parsed {
                Ok(links) => Some(links),
                Err(why) => {
                    refuse(params, "organizer", why);
                    None
                }
            }
        }
    };
    // Event passwords are limited to 255 characters (docs/api.md, "Limits").
    if let Some(password) = params.get("password").cloned() {
        if let Err(why) = scalars::string_max_chars(&password, 255) {
            params.refuse("password", why);
        }
    }
    let recurrence = match params.get("recurrence") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect(),
        ),
        Some(Value::Array(items)) => {
            let lines: Option<Vec<String>> = items
                .iter()
                .map(|v| v.as_str().map(|s| s.trim().to_string()))
                .collect();
            if lines.is_none() {
                refuse(
                    params,
                    "recurrence",
                    "must be a list of RFC 5545 lines (strings).",
                );
            }
            lines.map(|l| l.into_iter().filter(|l| !l.is_empty()).collect())
        }
        Some(_) => {
            refuse(
                params,
                "recurrence",
                "must be a list of RFC 5545 lines (strings).",
            );
            None
        }
    };
    EventFields {
        start_date: params.get("start_date").cloned(),
        end_date: params.get("end_date").cloned(),
        timezone,
        all_day: params.bool("all_day"),
        cost,
        website: params.str("website").map(str::to_string),
        show_map: params.bool("show_map"),
        show_map_link: params.bool("show_map_link"),
        hide_from_listings: params.bool("hide_from_listings"),
        sticky: params.bool("sticky"),
        featured: params.bool("featured"),
        ticketed: params.bool("ticketed"),
        categories: term_refs(params, "categories"),
        tags: term_refs(params, "tags"),
        venue,
        organizers,
        password: params.str("password").map(str::to_string),
        post_parent: params.i64("post_parent").map(|p| p as u64),
        slug: params.str("slug").map(str::to_string),
        recurrence,
        following: params.str("scope") == Some("following"),
    }
}

/// Reads a write: the common fields (with `date` in the request's time zone) and the
/// event's own (the editors' event form reads its fields here too).
pub(crate) fn write(params: &Params) -> (Params, crate::service::posts::PostWrite, EventFields) {
    let mut params = params.clone();
    let fields = event_fields(&mut params);
    let zone = fields.timezone.clone().unwrap_or(Zone::Utc);
    // Validation read `date` in UTC; in the request's zone a value at the ends of the range
    // may not exist (`9999-12-31 23:30` in `UTC-1`). Refuse it rather than drop it.
    if let Some(Err(why)) = params
        .get("date")
        .map(|v| datetime::parse(v, &zone, chrono::Utc::now()))
    {
        params.refuse("date", why);
    }
    let write = post_write(&params, "title", &zone);
    (params, write, fields)
}

/// Turns events into their JSON representations, from the service's views of what they embed.
struct Embedding<'a> {
    views: EventViews,
    ctx: &'a Context,
    now: NaiveDateTime,
}

impl<'a> Embedding<'a> {
    /// Reads what the representations of `events` embed, at `now`.
    fn new(
        state: &AppState,
        ctx: &'a Context,
        events: &[&Event],
        now: NaiveDateTime,
    ) -> Result<Embedding<'a>, ApiError> {
        let views = EventViews::new(&state.store, &state.index, events, ctx.caller, now)
            .map_err(|e| from_service(e, ctx.caller))?;
        Ok(Embedding { views, ctx, now })
    }

    fn linked<R: LinkedResource>(&self, view: &LinkedView<R>, json_ld: bool) -> Value {
        view.record.represent(&LinkedContext {
            links: &self.ctx.links,
            now: self.now,
            image: view.image.clone(),
            translations: view.translations.clone(),
            json_ld,
        })
    }

    /// The representation; `single` adds `json_ld` (unprotected events) and the embedded
    /// records' own `json_ld`; `masked` blanks a locked protected event.
    fn event(&self, e: &Event, single: bool, masked: bool) -> Result<Value, ApiError> {
        let view = self
            .views
            .view(e)
            .map_err(|err| from_service(err, self.ctx.caller))?;
        Ok(self.event_in(e, view, single, masked))
    }

    /// The representation `key` names (a list member's or a single GET's, maybe in the export
    /// form) as a template whose terms' counts are filled in when served, and what it depends
    /// on, for the representation cache; the representation itself when it cannot be a
    /// template (its text holds a placeholder).
    fn templated(
        &self,
        e: &Event,
        key: &RepresentationKey,
    ) -> Result<(Result<Template, String>, Vec<Dependency>), ApiError> {
        let (single, masked, export) = (key.single, key.masked, key.export);
        let error = |err| from_service(err, self.ctx.caller);
        let render = |view: EventView| {
            let recurring = export.then(|| view.recurring.clone());
            let mut value = self.event_in(e, view, single && !export, masked && !export);
            if let Some(recurring) = recurring {
                render::export_event(&mut value, e, &recurring);
            }
            value.to_string()
        };
        let mut view = self.views.view(e).map_err(error)?;
        let dependencies = self.views.dependencies(e, &view).map_err(error)?;
        let mut slots = Vec::new();
        for term in view.categories.iter_mut().chain(view.tags.iter_mut()) {
            term.count = Template::placeholder(slots.len());
            slots.push((term.term.kind, term.term.id));
        }
        let template = match Template::from_placeholders(&render(view), slots) {
            Some(template) => Ok(template),
            None => Err(render(self.views.view(e).map_err(error)?)),
        };
        Ok((template, dependencies))
    }

    fn event_in(&self, e: &Event, view: EventView, single: bool, masked: bool) -> Value {
        let venue = view.venue.as_ref().map(|v| self.linked(v, single));
        let organizers: Vec<Value> = view
            .organizers
            .iter()
            .map(|o| self.linked(o, single))
            .collect();
        let json_ld = (single && e.password.is_none()).then(|| {
            render::event_json_ld(
                e,
                &self.ctx.links,
                self.now,
                view.image.as_ref().map(|i| i.url.as_str()),
                venue.as_ref().and_then(|v| v.get("json_ld").cloned()),
                organizers.first().and_then(|o| o.get("json_ld").cloned()),
            )
        });
        let terms = |views: &[crate::service::terms::TermView]| -> Vec<Value> {
            views
                .iter()
                .map(|v| render::embedded_term(v, &self.ctx.links))
                .collect()
        };
        render::event(
            e,
            EventParts {
                links: &self.ctx.links,
                now: self.now,
                categories: terms(&view.categories),
                tags: terms(&view.tags),
                image: view.image,
                venue,
                organizers,
                translations: view.translations,
                json_ld,
                masked,
                recurring: view.recurring,
            },
        )
    }
}

/// The representations of `events` as list members (each with whether it shows masked), in
/// the export form when `export`.
pub(super) fn members(
    state: &AppState,
    ctx: &Context,
    events: &[(&Event, bool)],
    export: bool,
) -> Result<Vec<Value>, ApiError> {
    let records: Vec<&Event> = events.iter().map(|(e, _)| *e).collect();
    let embedding = Embedding::new(state, ctx, &records, chrono::Utc::now().naive_utc())?;
    let mut members = Vec::with_capacity(events.len());
    for (event, masked) in events {
        let view = embedding
            .views
            .view(event)
            .map_err(|err| from_service(err, ctx.caller))?;
        let recurring = export.then(|| view.recurring.clone());
        let mut value = embedding.event_in(event, view, false, *masked && !export);
        if let Some(recurring) = recurring {
            render::export_event(&mut value, event, &recurring);
        }
        members.push(value);
    }
    Ok(members)
}

fn get(state: &AppState, ctx: &Context) -> Result<ApiResponse, ApiError> {
    let generation = Generation::now();
    // Read before the event: a representation built afterwards is at least this current.
    let head = events::position(&state.store).map_err(|e| from_service(e, ctx.caller))?;
    let event = events::get(
        &state.store,
        &request(ctx),
        &target(ctx),
        &unlock(ctx),
        invalid(&ctx.params),
    )
    .map_err(|e| from_service(e, ctx.caller))?;
    // A single record in the representation cache beside the list members: the checks above
    // ran, what follows is only its representation.
    let key = RepresentationKey {
        kind: Kind::Event,
        id: event.post.id,
        masked: false,
        export: export_form(ctx),
        single: true,
        caller: ctx.caller,
        segment: ctx.links.segment(),
    };
    let template = match current_template(state, generation, &key) {
        Some(template) => template,
        None => {
            let embedding = Embedding::new(state, ctx, &[&event], generation.clock())?;
            let (template, dependencies) = embedding.templated(&event, &key)?;
            match template {
                Ok(template) => {
                    let template = Arc::new(template);
                    state.representations.put(
                        generation,
                        key,
                        Cached {
                            template: template.clone(),
                            head,
                            dependencies: dependencies.into(),
                        },
                    );
                    template
                }
                Err(text) => return Ok(ApiResponse::ok_body(Body::Serialized(text.into_bytes()))),
            }
        }
    };
    let counts = slot_counts(state, ctx, &[Some(template.clone())], generation)?;
    let text = template.fill(|kind, id| counts.get(&(kind, id)).copied().unwrap_or(0));
    Ok(ApiResponse::ok_body(Body::Serialized(text.into_bytes())))
}

fn create(state: &AppState, ctx: &Context) -> Result<ApiResponse, ApiError> {
    let (params, write, fields) = write(&ctx.params);
    let event = events::create(
        &state.store,
        &request(ctx),
        &write,
        &fields,
        invalid(&params),
    )
    .map_err(|e| from_service(e, ctx.caller))?;
    let embedding = Embedding::new(state, ctx, &[&event], chrono::Utc::now().naive_utc())?;
    let mut answer = ApiResponse::ok(embedding.event(&event, false, false)?).header(
        LOCATION,
        ctx.links.route(&format!("/events/{}", event.post.id)),
    );
    answer.status = StatusCode::CREATED;
    Ok(answer)
}

fn update(state: &AppState, ctx: &Context) -> Result<ApiResponse, ApiError> {
    let (params, write, fields) = write(&ctx.params);
    let event = events::update(
        &state.store,
        &request(ctx),
        &target(ctx),
        &write,
        &fields,
        invalid(&params),
    )
    .map_err(|e| from_service(e, ctx.caller))?;
    let embedding = Embedding::new(state, ctx, &[&event], chrono::Utc::now().naive_utc())?;
    Ok(ApiResponse::ok(embedding.event(&event, false, false)?))
}

fn delete(state: &AppState, ctx: &Context) -> Result<ApiResponse, ApiError> {
    let event = events::delete(
        &state.store,
        &request(ctx),
        &target(ctx),
        invalid(&ctx.params),
    )
    .map_err(|e| from_service(e, ctx.caller))?;
    let embedding = Embedding::new(state, ctx, &[&event], chrono::Utc::now().naive_utc())?;
    Ok(ApiResponse::ok(embedding.event(&event, false, false)?))
}

/// A date filter parsed in UTC.
fn utc_date(
    params: &Params,
    name: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Option<NaiveDateTime> {
    params
        .get(name)
        .and_then(|v| datetime::parse(v, &Zone::Utc, now).ok())
        .map(|d| d.local)
}

/// The archive query of a list or feed request; refusals of combinations of parameters go
/// to `params`.
pub(super) fn event_query(
    ctx: &Context,
    params: &mut Params,
    now: chrono::DateTime<chrono::Utc>,
) -> EventQuery {
    crate::http::resources::status_refusal_for_caller(params, ctx.caller);
    let (page, per_page) = lists::paging(params);
    let strict = params
        .str("strict_dates")
        .map(|s| scalars::strict_dates(&json!(s)).unwrap_or(false))
        .unwrap_or(false);
    let relevance = params.str("orderby") == Some("relevance");
    if relevance && !params.has("search") {
        refuse(params, "orderby", "requires search.");
    }
    let geoloc = params.bool("geoloc");
    let lat = params.get("geoloc_lat").and_then(Value::as_f64);
    let lng = params.get("geoloc_lng").and_then(Value::as_f64);
    if geoloc == Some(true) {
        match (lat, lng) {
            (Some(_), None) => refuse(
                params,
                "geoloc_lng",
                "must be sent together with geoloc_lat.",
            ),
            (None, Some(_)) => refuse(
                params,
                "geoloc_lat",
                "must be sent together with geoloc_lng.",
            ),
            _ => {}
        }
    }
    let unit_km = if params.str("geoloc_unit") == Some("km") {
        1.0
    } else {
        1.609_344
    };
    let radius = params
        .get("geoloc_radius")
        .and_then(Value::as_f64)
        .unwrap_or(25.0);
    // Any radius is accepted; beyond half the Earth's circumference every point is within
    // it, so larger ones are the same filter.
    const HALF_CIRCUMFERENCE_KM: f64 = 20_037.6;
    EventQuery {
        page,
        per_page,
        start_date: utc_date(params, "start_date", now),
        end_date: utc_date(params, "end_date", now),
        starts_before: utc_date(params, "starts_before", now),
        starts_after: utc_date(params, "starts_after", now),
        ends_before: utc_date(params, "ends_before", now),
        ends_after: utc_date(params, "ends_after", now),
        strict,
        search: params.str("search").map(str::to_string),
        relevance,
        categories: params.get("categories").and_then(Value::as_array).cloned(),
        tags: params.get("tags").and_then(Value::as_array).cloned(),
        venues: params.ids("venue"),
        organizers: params.ids("organizer"),
        featured: params.bool("featured"),
        status: params.strings("status"),
        geoloc,
        geo_point: lat.zip(lng),
        geo_radius_km: (radius * unit_km).min(HALF_CIRCUMFERENCE_KM),
        include: params.ids("include"),
        post_parent: params.i64("post_parent").map(|p| p as u64),
        ticketed: params.bool("ticketed"),
        unlock: unlock(ctx),
        author: None,
        by_last_change: false,
    }
}

fn list(state: &AppState, ctx: &Context) -> Result<ApiResponse, ApiError> {
    let mut params = ctx.params.clone();
    let query = event_query(ctx, &mut params, chrono::Utc::now());
    let (page, per_page) = (query.page, query.per_page);
    let request: Request = request(ctx);
    // Before anything is read: what is derived from the store afterwards is at least as
    // current as this generation.
    let generation = Generation::now();
    let archive = events::list(
        &state.store,
        &state.index,
        &request,
        &query,
        params.invalid.clone(),
    )
    .map_err(|e| from_service(e, ctx.caller))?;
    let built = (generation, archive.head);
    let items = list_items(state, ctx, &archive.page.items, built, |event| {
        !query.unlock.opens(event, ctx.caller, request.now)
    })?;
    let q = link_query(&params, &query, &archive.window, ctx);
    let feed = feed_url(ctx, &params);
    let answer = ListAnswer {
        links: &ctx.links,
        collection: "events",
        page,
        per_page,
        total: archive.page.total,
        query: q,
        explicit_language: params.translation_language().map(|l| l.code()),
    };
    let mut answer = answer.post_kind_answer(&items);
    answer
        .link_relations
        .push((feed, "rel=\"alternate\"; type=\"text/calendar\""));
    Ok(answer)
}

/// The calendar feed of the same query: the parameters as sent, without paging (and without a
/// password), so that the feed's default window moves on with the clock as the list's does.
fn feed_url(ctx: &Context, params: &Params) -> String {
    // The list's parameter names, in declaration order, read once rather than rebuilding the
    // specs on every list request.
    static NAMES: std::sync::LazyLock<Vec<&'static str>> =
        std::sync::LazyLock::new(|| list_params().iter().map(|spec| spec.name).collect());
    let mut pairs: Vec<(&str, String)> = Vec::new();
    for &name in NAMES.iter() {
        if matches!(name, "page" | "per_page" | "password") || !params.sent(name) {
            continue;
        }
        let value = match params.get(name) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                .collect::<Vec<_>>()
                .join(","),
            Some(other) => other.to_string(),
            None => continue,
        };
        pairs.push((name, value));
    }
    if let Some(language) = params.translation_language() {
        pairs.push(("translation_language", language.code().to_string()));
    }
    let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let url = ctx.links.route("/events.ics");
    if pairs.is_empty() {
        url
    } else {
        format!("{url}?{}", crate::http::links::form_encode(&pairs))
    }
}

/// The page's representations, serialized: from the cache where this generation already
/// built them, else built (with one embedding for all the missing ones) and cached.
fn list_items(
    state: &AppState,
    ctx: &Context,
    events: &[Event],
    (generation, head): (Generation, u64),
    masked: impl Fn(&Event) -> bool,
) -> Result<Vec<Arc<str>>, ApiError> {
    let export = export_form(ctx);
    let keys: Vec<RepresentationKey> = events
        .iter()
        .map(|e| RepresentationKey {
            kind: Kind::Event,
            id: e.post.id,
            masked: masked(e),
            export,
            single: false,
            caller: ctx.caller,
            segment: ctx.links.segment(),
        })
        .collect();
    let mut templates: Vec<Option<Arc<Template>>> = keys
        .iter()
        .map(|k| current_template(state, generation, k))
        .collect();
    let missing: Vec<usize> = (0..events.len())
        .filter(|n| templates[*n].is_none())
        .collect();
    crate::metrics::cache(
        crate::metrics::Cache::Representations,
        (events.len() - missing.len()) as u64,
        missing.len() as u64,
    );
    // Members whose text cannot be a template (it holds a placeholder) are served as built.
    let mut plain: Vec<Option<Arc<str>>> = vec![None; events.len()];
    if !missing.is_empty() {
        let pending: Vec<&Event> = missing.iter().map(|n| &events[*n]).collect();
        let embedding = Embedding::new(state, ctx, &pending, generation.clock())?;
        for n in missing {
            let (template, dependencies) = embedding.templated(&events[n], &keys[n])?;
            match template {
                Ok(template) => {
                    let template = Arc::new(template);
                    state.representations.put(
                        generation,
                        keys[n],
                        Cached {
                            template: template.clone(),
                            head,
                            dependencies: dependencies.into(),
                        },
                    );
                    templates[n] = Some(template);
                }
                Err(text) => plain[n] = Some(text.into()),
            }
        }
    }
    let counts = slot_counts(state, ctx, &templates, generation)?;
    let items = templates.into_iter().zip(plain).map(|(template, plain)| {
        plain.or_else(|| {
            template.map(|t| {
                let filled = t.fill(|kind, id| counts.get(&(kind, id)).copied().unwrap_or(0));
                Arc::from(filled)
            })
        })
    });
    Ok(items.flatten().collect())
}

/// The counts of every term the templates embed, counted at the generation's clock.
fn slot_counts(
    state: &AppState,
    ctx: &Context,
    templates: &[Option<Arc<Template>>],
    generation: Generation,
) -> Result<std::collections::HashMap<(Kind, u64), u64>, ApiError> {
    let mut counts = std::collections::HashMap::new();
    for kind in [Kind::Category, Kind::Tag] {
        let mut ids: Vec<u64> = templates
            .iter()
            .flatten()
            .flat_map(|t| t.slots().iter())
            .filter(|(k, _)| *k == kind)
            .map(|(_, id)| *id)
            .collect();
        if ids.is_empty() {
            continue;
        }
        ids.sort_unstable();
        ids.dedup();
        let found = crate::service::terms::counts(&state.index, kind, &ids, generation.clock())
            .map_err(|e| from_service(e, ctx.caller))?;
        counts.extend(found.into_iter().map(|(id, count)| ((kind, id), count)));
    }
    Ok(counts)
}

/// The effective parameters of the list's links, in the plugin's order.
fn link_query(
    params: &Params,
    query: &EventQuery,
    window: &events::Window,
    ctx: &Context,
) -> Vec<(&'static str, String)> {
    let fmt = |t: &Option<NaiveDateTime>| t.as_ref().map(datetime::format);
    let flag = |b: bool| if b { "1".to_string() } else { "0".to_string() };
    let joined = |name: &str| {
        params.get(name).and_then(Value::as_array).map(|items| {
            items
                .iter()
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join(",")
        })
    };
    let mut q: Vec<(&'static str, String)> = Vec::new();
    let mut push = |name: &'static str, value: Option<String>| {
        if let Some(v) = value {
            q.push((name, v));
        }
    };
    push("start_date", fmt(&window.start));
    push("end_date", fmt(&window.end));
    push("search", query.search.clone());
    push("orderby", query.relevance.then(|| "relevance".to_string()));
    push("categories", joined("categories"));
    push("tags", joined("tags"));
    push("venue", joined("venue"));
    push("organizer", joined("organizer"));
    push("featured", query.featured.map(flag));
    if query.geoloc == Some(true) {
        push("geoloc", Some("1".into()));
        push("geoloc_lat", params.get("geoloc_lat").map(Value::to_string));
        push("geoloc_lng", params.get("geoloc_lng").map(Value::to_string));
        push(
            "geoloc_radius",
            params
                .sent("geoloc_radius")
                .then(|| params.get("geoloc_radius").map(Value::to_string))
                .flatten(),
        );
        push(
            "geoloc_unit",
            params
                .sent("geoloc_unit")
                .then(|| params.str("geoloc_unit").map(str::to_string))
                .flatten(),
        );
    }
    push(
        "status",
        Some(lists::status_link_value(
            ctx.caller,
            query.status.as_deref(),
        )),
    );
    push("post_parent", query.post_parent.map(|p| p.to_string()));
    push("include", joined("include"));
    push("starts_before", fmt(&window.starts_before));
    push("starts_after", fmt(&window.starts_after));
    push("ends_before", fmt(&window.ends_before));
    push("ends_after", fmt(&window.ends_after));
    push("ticketed", query.ticketed.map(flag));
    push("strict_dates", query.strict.then(|| "true".to_string()));
    // The export form lists more (hidden events): its pages link pages of the same form.
    push("context", query.unlock.export.then(|| "export".to_string()));
    q
}
