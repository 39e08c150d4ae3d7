//! `/venues` and `/organizers`: routes, parameters and handlers, one
//! generic implementation instantiated for both kinds.

use crate::http::error::{from_service, ApiError};
use crate::http::lists::{self, ListAnswer};
use crate::http::params::{ParamKind, ParamSpec, Params};
use crate::http::render::{self, LinkedContext};
use crate::http::representation_cache::{
    current_template, Cached, Generation, RepresentationKey, Template,
};
use crate::http::resources::{common_write_params, export_form, invalid, post_write, request};
use crate::http::response::Body;
use crate::http::routes::{
    Endpoint, Group, OperationClass, Permission, ResponseSchema, Route, Seg,
};
use crate::http::{ApiResponse, AppState, Context};
use crate::model::post::{GeoPoint, Organizer, Venue};
use crate::service::events::{self, Dependency};
use crate::service::linked::{self, LinkedKind, ListQuery, OrganizerFields, Target, VenueFields};
use crate::service::posts::PostWrite;
use crate::values::timezone::Zone;
use crate::values::{Invalid, SubCode};
use serde_json::Value;
use std::sync::Arc;
use warp::http::header::LOCATION;
use warp::http::StatusCode;

/// What the HTTP layer needs to know about a linked kind.
pub(crate) trait LinkedResource: LinkedKind {
    /// `venues`, `organizers`.
    const COLLECTION: &'static str;
    /// The name field: `venue`, `organizer`.
    const NAME_FIELD: &'static str;
    /// `Venue`, `Organizer` (operation IDs).
    const SINGULAR: &'static str;
    const PLURAL: &'static str;
    const COLLECTION_PATH: &'static [Seg];
    const ID_PATH: &'static [Seg];
    const SLUG_PATH: &'static [Seg];
    /// The kind's own write fields.
    fn field_params() -> Vec<ParamSpec>;
    fn fields(params: &mut Params) -> Self::Fields;
    fn represent(&self, ctx: &LinkedContext) -> Value;
}

fn text_field(name: &'static str) -> ParamSpec {
    ParamSpec::query(name, ParamKind::String)
}

fn opt_string(params: &Params, name: &str) -> Option<String> {
    params.str(name).map(str::to_string)
}

impl LinkedResource for Venue {
    const COLLECTION: &'static str = "venues";
    const NAME_FIELD: &'static str = "venue";
    const SINGULAR: &'static str = "Venue";
    const PLURAL: &'static str = "Venues";
    const COLLECTION_PATH: &'static [Seg] = &[Seg::Lit("venues")];
    const ID_PATH: &'static [Seg] = &[Seg::Lit("venues"), Seg::Id];
    const SLUG_PATH: &'static [Seg] = &[Seg::Lit("venues"), Seg::Lit("by-slug"), Seg::Slug];

    fn field_params() -> Vec<ParamSpec> {
        let mut specs: Vec<ParamSpec> = [
            "address",
            "city",
            "country",
            "province",
            "state",
            "zip",
            "phone",
            "stateprovince",
        ]
        .into_iter()
        .map(text_field)
        .collect();
        specs.push(ParamSpec::query("website", ParamKind::Url));
        specs.push(ParamSpec::query("show_map", ParamKind::Flag));
        specs.push(ParamSpec::query("show_map_link", ParamKind::Flag));
        specs.push(ParamSpec::query(
            "geo_lat",
            ParamKind::Coordinate { limit: 90.0 },
        ));
        specs.push(ParamSpec::query(
            "geo_lng",
            ParamKind::Coordinate { limit: 180.0 },
        ));
        specs
    }

    fn fields(params: &mut Params) -> VenueFields {
        // geo_lat and geo_lng are set or cleared together; a value already refused
        // for its own syntax or range is not reported a second time.
        let refused = |name: &str| params.invalid.iter().any(|(n, _)| n == name);
        let geo = if refused("geo_lat") || refused("geo_lng") {
            None
        } else {
            match (
                params.get("geo_lat").cloned(),
                params.get("geo_lng").cloned(),
            ) {
                (None, None) => None,
                (Some(Value::String(a)), Some(Value::String(b)))
                    if a.is_empty() && b.is_empty() =>
                {
                    Some(None)
                }
                (Some(lat), Some(lng)) if lat.is_number() && lng.is_number() => {
                    Some(Some(GeoPoint {
                        lat: lat.as_f64().unwrap_or_default(),
                        lng: lng.as_f64().unwrap_or_default(),
                    }))
                }
                (lat, _) => {
                    let name = if lat.is_none() { "geo_lat" } else { "geo_lng" };
                    params.refuse(
                        name,
                        Invalid::new(
                            SubCode::InvalidFormat,
                            "must be given together with the other coordinate, both numbers or both empty.",
                        ),
                    );
                    None
                }
            }
        };
        VenueFields {
            address: opt_string(params, "address"),
            city: opt_string(params, "city"),
            country: opt_string(params, "country"),
            province: opt_string(params, "province"),
            state: opt_string(params, "state"),
            zip: opt_string(params, "zip"),
            phone: opt_string(params, "phone"),
            stateprovince: opt_string(params, "stateprovince"),
            website: opt_string(params, "website"),
            show_map: params.bool("show_map"),
            show_map_link: params.bool("show_map_link"),
            geo,
        }
    }

    fn represent(&self, ctx: &LinkedContext) -> Value {
        render::venue(self, ctx)
    }
}

impl LinkedResource for Organizer {
    const COLLECTION: &'static str = "organizers";
    const NAME_FIELD: &'static str = "organizer";
    const SINGULAR: &'static str = "Organizer";
    const PLURAL: &'static str = "Organizers";
    const COLLECTION_PATH: &'static [Seg] = &[Seg::Lit("organizers")];
    const ID_PATH: &'static [Seg] = &[Seg::Lit("organizers"), Seg::Id];
    const SLUG_PATH: &'static [Seg] = &[Seg::Lit("organizers"), Seg::Lit("by-slug"), Seg::Slug];

    fn field_params() -> Vec<ParamSpec> {
        vec![
            text_field("phone"),
            ParamSpec::query("website", ParamKind::Url),
            text_field("email"),
        ]
    }

    fn fields(params: &mut Params) -> OrganizerFields {
        OrganizerFields {
            phone: opt_string(params, "phone"),
            website: opt_string(params, "website"),
            email: opt_string(params, "email"),
        }
    }

    fn represent(&self, ctx: &LinkedContext) -> Value {
        render::organizer(self, ctx)
    }
}

/// The write parameters of a linked kind: the common post fields and the kind's own.
pub(crate) fn write_params<R: LinkedResource>(create: bool) -> Vec<ParamSpec> {
    let mut specs = common_write_params(R::NAME_FIELD, create);
    specs.extend(R::field_params());
    specs
}

/// The common write fields; a name made only of spaces is refused.
fn linked_write<R: LinkedResource>(params: &mut Params) -> PostWrite {
    let write = post_write(params, R::NAME_FIELD, &Zone::Utc);
    if write.title.as_deref() == Some("") {
        params.refuse(
            R::NAME_FIELD,
            Invalid::new(SubCode::Empty, "must not be empty or only spaces."),
        );
    }
    write
}

/// Reads a write of a linked kind from validated parameters (the routes' and the editors'
/// forms'): the common fields and the kind's own, with what they refused in the parameters.
pub(crate) fn write<R: LinkedResource>(params: &Params) -> (Params, PostWrite, R::Fields) {
    let mut params = params.clone();
    let write = linked_write::<R>(&mut params);
    let fields = R::fields(&mut params);
    (params, write, fields)
}

/// Parses an inline venue or organizer object of an event write with the
/// create rules of its own route; `Err` carries why it was refused.
pub(crate) fn inline<R: LinkedResource>(
    object: serde_json::Map<String, Value>,
) -> Result<(PostWrite, R::Fields), String> {
    let raw = crate::values::form::RawParams::from_json_object(object);
    let mut params =
        crate::http::params::validate(&write_params::<R>(true), &raw).map_err(|e| e.message)?;
    let write = linked_write::<R>(&mut params);
    let fields = R::fields(&mut params);
    match params.invalid.first() {
        Some((name, why)) => Err(format!("{name} {}", why.reason)),
        None => Ok((write, fields)),
    }
}

fn list_params() -> Vec<ParamSpec> {
    let mut specs = lists::paging_params();
    specs.extend([
        ParamSpec::query("search", ParamKind::NonEmptyString).describe("Words to search for."),
        ParamSpec::query("orderby", ParamKind::Enum(&["relevance"]))
            .describe("Order by search relevance (needs search)."),
        ParamSpec::query(
            "event",
            ParamKind::Integer {
                minimum: Some(1),
                maximum: None,
            },
        )
        .describe("Only records linked to this event."),
        ParamSpec::query("has_events", ParamKind::FilterFlag)
            .describe("Only records with (true) or without (false) published events."),
        ParamSpec::query("only_with_upcoming", ParamKind::FilterFlag)
            .describe("Only records with upcoming events."),
        ParamSpec::query("status", ParamKind::StatusFilter).describe("Statuses to list, or any."),
        context_param(),
    ]);
    specs
}

/// `context` on the reads: `export` asks for the export form; other values change nothing.
fn context_param() -> ParamSpec {
    ParamSpec::query("context", ParamKind::String).describe(
        "export (editors and administrators; 401/403 rest_forbidden_context for others): the \
         export form of almanac export (stored description, excerpt and status, no json_ld). \
         Other values change nothing.",
    )
}

pub(crate) fn routes<R: LinkedResource>() -> Vec<Route> {
    let id = || {
        ParamSpec::path(
            "id",
            "Record ID.",
            ParamKind::Integer {
                minimum: Some(0),
                maximum: None,
            },
        )
    };
    let slug = || ParamSpec::path("slug", "Record slug.", ParamKind::NonEmptyString);
    let endpoint = |group, operation_id: String, class, response, params, handler| Endpoint {
        permission: match group {
            Group::Read => Permission::Everyone,
            Group::Create => Permission::CreatePost,
            Group::Edit => Permission::EditPost(R::KIND),
            Group::Delete => Permission::DeletePost(R::KIND),
        },
        group,
        operation_id,
        summary: String::new(),
        class,
        response,
        params,
        handler,
        checks_references: true,
    };
    let single = || ResponseSchema::Component(R::SINGULAR.to_string());
    let with = |first: ParamSpec, mut rest: Vec<ParamSpec>| {
        rest.insert(0, first);
        rest
    };
    vec![
        Route {
            segments: R::COLLECTION_PATH,
            endpoints: vec![
                endpoint(
                    Group::Read,
                    format!("list{}", R::PLURAL),
                    OperationClass::PostList,
                    ResponseSchema::Component(format!("{}Archive", R::SINGULAR)),
                    list_params(),
                    list::<R>,
                ),
                endpoint(
                    Group::Create,
                    format!("create{}", R::SINGULAR),
                    OperationClass::Create,
                    single(),
                    write_params::<R>(true),
                    create::<R>,
                ),
            ],
        },
        Route {
            segments: R::ID_PATH,
            endpoints: vec![
                endpoint(
                    Group::Read,
                    format!("get{}", R::SINGULAR),
                    OperationClass::GetSingle,
                    single(),
                    vec![id(), context_param()],
                    get::<R>,
                ),
                endpoint(
                    Group::Delete,
                    format!("delete{}", R::SINGULAR),
                    OperationClass::DeletePost,
                    single(),
                    vec![id()],
                    delete::<R>,
                ),
                endpoint(
                    Group::Edit,
                    format!("update{}", R::SINGULAR),
                    OperationClass::Update,
                    single(),
                    with(id(), write_params::<R>(false)),
                    update::<R>,
                ),
            ],
        },
        Route {
            segments: R::SLUG_PATH,
            endpoints: vec![
                endpoint(
                    Group::Read,
                    format!("get{}BySlug", R::SINGULAR),
                    OperationClass::GetSingle,
                    single(),
                    vec![slug(), context_param()],
                    get::<R>,
                ),
                endpoint(
                    Group::Delete,
                    format!("delete{}BySlug", R::SINGULAR),
                    OperationClass::DeletePost,
                    single(),
                    vec![slug()],
                    delete::<R>,
                ),
                endpoint(
                    Group::Edit,
                    format!("update{}BySlug", R::SINGULAR),
                    OperationClass::Update,
                    single(),
                    with(slug(), write_params::<R>(false)),
                    update::<R>,
                ),
            ],
        },
    ]
}

fn target(ctx: &Context) -> Target {
    match (&ctx.path.id, &ctx.path.slug) {
        (Some(id), _) => Target::Id(*id),
        (None, Some(slug)) => Target::Slug(slug.clone()),
        (None, None) => unreachable!("single routes have an id or a slug"),
    }
}

/// The representation with its image and visible translations; `json_ld` on single reads;
/// `export` gives the export form instead (without `json_ld`), for `context=export`.
fn represent<R: LinkedResource>(
    state: &AppState,
    ctx: &Context,
    record: R,
    json_ld: bool,
    export: bool,
) -> Result<Value, ApiError> {
    let now = chrono::Utc::now().naive_utc();
    let view = linked::view(&state.store, record, ctx.caller, now)
        .map_err(|e| from_service(e, ctx.caller))?;
    Ok(represent_view(ctx, view, now, json_ld, export))
}

/// [`represent`] of a view already read.
pub(crate) fn represent_view<R: LinkedResource>(
    ctx: &Context,
    view: linked::LinkedView<R>,
    now: chrono::NaiveDateTime,
    json_ld: bool,
    export: bool,
) -> Value {
    let mut value = view.record.represent(&LinkedContext {
        links: &ctx.links,
        now,
        image: view.image,
        translations: view.translations,
        json_ld: json_ld && !export,
    });
    if export {
        render::export_post(&mut value, view.record.meta());
    }
    value
}

fn get<R: LinkedResource>(state: &AppState, ctx: &Context) -> Result<ApiResponse, ApiError> {
    let generation = Generation::now();
    // Read before the record: a representation built afterwards is at least this current.
    let head = events::position(&state.store).map_err(|e| from_service(e, ctx.caller))?;
    let record: R = linked::get(
        &state.store,
        &request(ctx),
        &target(ctx),
        export_form(ctx),
        invalid(&ctx.params),
    )
    .map_err(|e| from_service(e, ctx.caller))?;
    // The checks above ran; the representation (the record, its image, which never changes,
    // and its visible translations) comes from the representation cache like an event's.
    let meta = record.meta();
    let key = RepresentationKey {
        kind: R::KIND,
        id: meta.id,
        masked: false,
        export: export_form(ctx),
        single: true,
        caller: ctx.caller,
        segment: ctx.links.segment(),
    };
    let dependencies = [
        Dependency::Record(R::KIND, meta.id),
        Dependency::Group(R::KIND, meta.group),
    ];
    let text = match current_template(state, generation, &key) {
        Some(template) => template.fill(|_, _| 0),
        None => {
            let text = represent(state, ctx, record, true, export_form(ctx))?.to_string();
            if let Some(template) = Template::from_placeholders(&text, Vec::new()) {
                let cached = Cached {
                    template: Arc::new(template),
                    head,
                    dependencies: dependencies.into(),
                };
                state.representations.put(generation, key, cached);
            }
            text
        }
    };
    Ok(ApiResponse::ok_body(Body::Serialized(text.into_bytes())))
}

fn create<R: LinkedResource>(state: &AppState, ctx: &Context) -> Result<ApiResponse, ApiError> {
    let (params, write, fields) = write::<R>(&ctx.params);
    let record: R = linked::create(
        &state.store,
        &request(ctx),
        &write,
        &fields,
        invalid(&params),
    )
    .map_err(|e| from_service(e, ctx.caller))?;
    let location = ctx
        .links
        .route(&format!("/{}/{}", R::COLLECTION, record.meta().id));
    let mut answer =
        ApiResponse::ok(represent(state, ctx, record, false, false)?).header(LOCATION, location);
    answer.status = StatusCode::CREATED;
    Ok(answer)
}

fn update<R: LinkedResource>(state: &AppState, ctx: &Context) -> Result<ApiResponse, ApiError> {
    let (params, write, fields) = write::<R>(&ctx.params);
    let record: R = linked::update(
        &state.store,
        &request(ctx),
        &target(ctx),
        &write,
        &fields,
        invalid(&params),
    )
    .map_err(|e| from_service(e, ctx.caller))?;
    Ok(ApiResponse::ok(represent(
        state, ctx, record, false, false,
    )?))
}

fn delete<R: LinkedResource>(state: &AppState, ctx: &Context) -> Result<ApiResponse, ApiError> {
    let record: R = linked::delete(
        &state.store,
        &state.index,
        &request(ctx),
        &target(ctx),
        invalid(&ctx.params),
    )
    .map_err(|e| from_service(e, ctx.caller))?;
    Ok(ApiResponse::ok(represent(
        state, ctx, record, false, false,
    )?))
}

fn list<R: LinkedResource>(state: &AppState, ctx: &Context) -> Result<ApiResponse, ApiError> {
    let mut params = ctx.params.clone();
    crate::http::resources::status_refusal_for_caller(&mut params, ctx.caller);
    let params = &params;
    let (page, per_page) = lists::paging(params);
    let mut invalid = invalid(params);
    let relevance = params.str("orderby") == Some("relevance");
    if relevance && !params.has("search") {
        invalid.push((
            "orderby".into(),
            Invalid::new(SubCode::InvalidFormat, "requires search."),
        ));
    }
    let status = params.strings("status");
    let query = ListQuery {
        page,
        per_page,
        search: opt_string(params, "search"),
        relevance,
        status: status.clone(),
        event: params.i64("event").map(|e| e as u64),
        has_events: params.bool("has_events"),
        only_with_upcoming: params.bool("only_with_upcoming").unwrap_or(false),
        export: export_form(ctx),
    };
    let found = linked::list::<R>(&state.store, &state.index, &request(ctx), &query, invalid)
        .map_err(|e| from_service(e, ctx.caller))?;
    let mut q: Vec<(&'static str, String)> = Vec::new();
    if let Some(search) = &query.search {
        q.push(("search", search.clone()));
    }
    if relevance {
        q.push(("orderby", "relevance".into()));
    }
    if let Some(event) = query.event {
        q.push(("event", event.to_string()));
    }
    if let Some(flag) = query.has_events {
        q.push(("has_events", flag.to_string()));
    }
    if let Some(flag) = params.bool("only_with_upcoming") {
        q.push(("only_with_upcoming", flag.to_string()));
    }
    q.push((
        "status",
        lists::status_link_value(ctx.caller, status.as_deref()),
    ));
    // Pages of the export form link pages of the same form.
    if query.export {
        q.push(("context", "export".into()));
    }
    let answer = ListAnswer {
        links: &ctx.links,
        collection: R::COLLECTION,
        page,
        per_page,
        total: found.total,
        query: q,
        explicit_language: params.translation_language().map(|l| l.code()),
    };
    let mut items = Vec::with_capacity(found.items.len());
    for record in found.items {
        items.push(
            represent(state, ctx, record, false, query.export)?
                .to_string()
                .into(),
        );
    }
    Ok(answer.post_kind_answer(&items))
}
