//! `/categories` and `/tags`: routes, parameters and handlers, one implementation
//! for both kinds.

use crate::http::error::{from_service, ApiError};
use crate::http::lists::{self, ListAnswer};
use crate::http::params::{ParamKind, ParamSpec, Params};
use crate::http::render;
use crate::http::representation_cache::{
    current_template, Cached, Generation, RepresentationKey, Template,
};
use crate::http::resources::{invalid, request};
use crate::http::response::Body;
use crate::http::routes::{
    Endpoint, Group, OperationClass, Permission, ResponseSchema, Route, Seg,
};
use crate::http::{ApiResponse, AppState, Context};
use crate::model::Kind;
use crate::service::events;
use crate::service::terms::{self, TermListQuery, TermView, TermWrite};
use crate::values::{Invalid, SubCode};
use serde_json::{json, Map, Value};
use std::sync::Arc;
use warp::http::header::LOCATION;
use warp::http::StatusCode;

/// The per-kind constants of the term routes.
struct TermRoutes {
    collection: &'static str,
    singular: &'static str,
    plural: &'static str,
    collection_path: &'static [Seg],
    id_path: &'static [Seg],
}

const CATEGORIES: TermRoutes = TermRoutes {
    collection: "categories",
    singular: "Category",
    plural: "Categories",
    collection_path: &[Seg::Lit("categories")],
    id_path: &[Seg::Lit("categories"), Seg::Id],
};

const TAGS: TermRoutes = TermRoutes {
    collection: "tags",
    singular: "Tag",
    plural: "Tags",
    collection_path: &[Seg::Lit("tags")],
    id_path: &[Seg::Lit("tags"), Seg::Id],
};

fn spec_of(kind: Kind) -> &'static TermRoutes {
    if kind == Kind::Category {
        &CATEGORIES
    } else {
        &TAGS
    }
}

/// The kind a matched term route serves, from its path.
fn kind_of(state: &AppState, ctx: &Context) -> Kind {
    match state.routes.routes[ctx.route].segments.first() {
        Some(Seg::Lit("categories")) => Kind::Category,
        _ => Kind::Tag,
    }
}

const ORDERBY: &[&str] = &[
    "name",
    "slug",
    "description",
    "count",
    "id",
    "term_id",
    "parent",
    "include",
    "include_slugs",
    "term_group",
    "none",
];

fn parent_param() -> ParamSpec {
    ParamSpec::query(
        "parent",
        ParamKind::Integer {
            minimum: Some(0),
            maximum: None,
        },
    )
    .describe("Parent category ID; 0 for the top level.")
}

fn list_params(kind: Kind) -> Vec<ParamSpec> {
    let mut specs = lists::paging_params();
    specs.extend([
        ParamSpec::query("search", ParamKind::NonEmptyString),
        ParamSpec::query("exclude", ParamKind::IdList),
        ParamSpec::query("include", ParamKind::IdList),
        ParamSpec::query("order", ParamKind::EnumCaseless(&["asc", "desc"])).default(json!("asc")),
        ParamSpec::query("orderby", ParamKind::EnumCaseless(ORDERBY)).default(json!("name")),
        ParamSpec::query("hide_empty", ParamKind::Boolean).default(json!(true)),
    ]);
    if kind == Kind::Category {
        specs.push(parent_param());
    }
    let event = ParamKind::Integer {
        minimum: Some(1),
        maximum: None,
    };
    specs.push(ParamSpec::query("post", event).describe("Only terms of this event."));
    specs.push(ParamSpec::query("event", event).describe("Alias of post; wins over it."));
    specs.push(ParamSpec::query("slug", ParamKind::NonEmptyString));
    specs
}

pub(crate) fn write_params(kind: Kind, create: bool) -> Vec<ParamSpec> {
    let mut name = ParamSpec::query("name", ParamKind::NonEmptyString);
    name.required = create;
    let mut specs = vec![
        name,
        ParamSpec::query("description", ParamKind::Description { non_empty: true }),
        ParamSpec::query("slug", ParamKind::NonEmptyString),
    ];
    // Tags take no parent; one sent anyway is refused by the handler, so it is
    // read, but not documented as a tag field.
    // Tags take no parent: any value sent is refused by the handler with
    // rest_taxonomy_not_hierarchical, so it is read without syntax rules.
    specs.push(match kind {
        Kind::Category => parent_param(),
        _ => ParamSpec::query("parent", ParamKind::Raw(r#"{"not": {}}"#))
            .describe("Not accepted: tags are not hierarchical."),
    });
    specs.push(
        ParamSpec::query(
            "translation_of",
            ParamKind::Integer {
                minimum: Some(0),
                maximum: None,
            },
        )
        .describe("ID of a term whose translation group this term joins; 0 leaves the group."),
    );
    specs
}

pub(crate) fn routes(kind: Kind) -> Vec<Route> {
    let r = spec_of(kind);
    let id = || {
        ParamSpec::path(
            "id",
            "Term ID.",
            ParamKind::Integer {
                minimum: Some(0),
                maximum: None,
            },
        )
    };
    let endpoint = |group, operation_id: String, class, response: &str, params, handler| Endpoint {
        permission: match group {
            Group::Read => Permission::Everyone,
            _ => Permission::ManageTerms(kind),
        },
        group,
        operation_id,
        summary: String::new(),
        class,
        response: ResponseSchema::Component(response.to_string()),
        params,
        handler,
        checks_references: true,
    };
    let with_id = |mut rest: Vec<ParamSpec>| {
        rest.insert(0, id());
        rest
    };
    vec![
        Route {
            segments: r.collection_path,
            endpoints: vec![
                endpoint(
                    Group::Read,
                    format!("list{}", r.plural),
                    OperationClass::List,
                    &format!("{}Archive", r.singular),
                    list_params(kind),
                    list,
                ),
                endpoint(
                    Group::Create,
                    format!("create{}", r.singular),
                    OperationClass::Create,
                    "Term",
                    write_params(kind, true),
                    create,
                ),
            ],
        },
        Route {
            segments: r.id_path,
            endpoints: vec![
                endpoint(
                    Group::Read,
                    format!("get{}", r.singular),
                    OperationClass::GetSingle,
                    "Term",
                    vec![id()],
                    get,
                ),
                endpoint(
                    Group::Edit,
                    format!("update{}", r.singular),
                    OperationClass::Update,
                    "Term",
                    with_id(write_params(kind, false)),
                    update,
                ),
                endpoint(
                    Group::Delete,
                    format!("delete{}", r.singular),
                    OperationClass::DeleteTerm,
                    "Term",
                    vec![id()],
                    delete,
                ),
            ],
        },
    ]
}

/// The methods of the term route this caller may use (`_links.self.targetHints.allow`).
fn allowed(ctx: &Context, kind: Kind) -> &'static [&'static str] {
    if ctx.caller.may_manage_terms(kind) {
        &["GET", "POST", "PUT", "PATCH", "DELETE"]
    } else {
        &["GET"]
    }
}

/// A term write read from validated parameters (the routes' and the editors' forms'); what
/// it refuses is added to the parameters.
pub(crate) fn term_write(params: &mut Params, kind: Kind) -> TermWrite {
    let name = params.str("name").map(terms::clean_name);
    match &name {
        Some(n) if n.is_empty() => params.refuse(
            "name",
            Invalid::new(SubCode::Empty, "must not be empty after cleaning."),
        ),
        Some(n) if n.chars().count() > terms::MAX_NAME_CHARS => params.refuse(
            "name",
            Invalid::new(SubCode::TooLong, "must be at most 200 characters."),
        ),
        _ => {}
    }
    let parent = match kind {
        // Any parent sent for a tag is refused by the use case; 0 stands for "sent".
        Kind::Tag => params.has("parent").then_some(0),
        _ => params.i64("parent").map(|p| p as u64),
    };
    TermWrite {
        name,
        description: params.str("description").map(str::to_string),
        slug: params.str("slug").map(str::to_string),
        parent,
        translation_of: params.i64("translation_of").map(|t| t as u64),
    }
}

fn single(ctx: &Context, kind: Kind, view: &TermView, with_links: bool) -> Value {
    render::term(view, &ctx.links, with_links.then(|| allowed(ctx, kind)))
}

fn path_id(ctx: &Context) -> u64 {
    ctx.path.id.unwrap_or(u64::MAX)
}

fn get(state: &AppState, ctx: &Context) -> Result<ApiResponse, ApiError> {
    let kind = kind_of(state, ctx);
    let generation = Generation::now();
    let error = |e| from_service(e, ctx.caller);
    // Read before the term: a representation built afterwards is at least this current.
    let head = events::position(&state.store).map_err(error)?;
    let request = request(ctx);
    let term = terms::get(
        &state.store,
        kind,
        &request,
        path_id(ctx),
        invalid(&ctx.params),
    )
    .map_err(error)?;
    let id = term.id;
    let count = terms::counts(&state.index, kind, &[id], request.now)
        .map_err(error)?
        .get(&id)
        .copied()
        .unwrap_or(0);
    // The representation comes from the representation cache with its count as a slot, like
    // the terms an event embeds.
    let key = RepresentationKey {
        kind,
        id,
        masked: false,
        export: false,
        single: true,
        caller: ctx.caller,
        segment: ctx.links.segment(),
    };
    if let Some(template) = current_template(state, generation, &key) {
        let text = template.fill(|_, _| count);
        return Ok(ApiResponse::ok_body(Body::Serialized(text.into_bytes())));
    }
    let view = terms::describe(&state.store, term, Template::placeholder(0)).map_err(error)?;
    let text = single(ctx, kind, &view, true).to_string();
    let Some(template) = Template::from_placeholders(&text, vec![(kind, id)]) else {
        let view = TermView { count, ..view };
        return Ok(ApiResponse::ok(single(ctx, kind, &view, true)));
    };
    let text = template.fill(|_, _| count);
    let cached = Cached {
        template: Arc::new(template),
        head,
        dependencies: view.dependencies().into(),
    };
    state.representations.put(generation, key, cached);
    Ok(ApiResponse::ok_body(Body::Serialized(text.into_bytes())))
}

fn create(state: &AppState, ctx: &Context) -> Result<ApiResponse, ApiError> {
    let kind = kind_of(state, ctx);
    let mut params = ctx.params.clone();
    let fields = term_write(&mut params, kind);
    let view = terms::create(
        &state.store,
        &state.index,
        kind,
        &request(ctx),
        &fields,
        invalid(&params),
    )
    .map_err(|e| from_service(e, ctx.caller))?;
    let location = ctx
        .links
        .route(&format!("/{}/{}", spec_of(kind).collection, view.term.id));
    let mut answer = ApiResponse::ok(single(ctx, kind, &view, true)).header(LOCATION, location);
    answer.status = StatusCode::CREATED;
    Ok(answer)
}

fn update(state: &AppState, ctx: &Context) -> Result<ApiResponse, ApiError> {
    let kind = kind_of(state, ctx);
    let mut params = ctx.params.clone();
    let fields = term_write(&mut params, kind);
    let view = terms::update(
        &state.store,
        &state.index,
        kind,
        &request(ctx),
        path_id(ctx),
        &fields,
        invalid(&params),
    )
    .map_err(|e| from_service(e, ctx.caller))?;
    Ok(ApiResponse::ok(single(ctx, kind, &view, true)))
}

fn delete(state: &AppState, ctx: &Context) -> Result<ApiResponse, ApiError> {
    let kind = kind_of(state, ctx);
    let view = terms::delete(
        &state.store,
        &state.index,
        kind,
        &request(ctx),
        path_id(ctx),
        invalid(&ctx.params),
    )
    .map_err(|e| from_service(e, ctx.caller))?;
    Ok(ApiResponse::ok(single(ctx, kind, &view, false)))
}

fn list(state: &AppState, ctx: &Context) -> Result<ApiResponse, ApiError> {
    let kind = kind_of(state, ctx);
    let params = &ctx.params;
    let (page, per_page) = lists::paging(params);
    let order = params.str("order").unwrap_or("asc").to_string();
    let orderby = params.str("orderby").unwrap_or("name").to_string();
    let hide_empty = params.bool("hide_empty").unwrap_or(true);
    let query = TermListQuery {
        page,
        per_page,
        search: params.str("search").map(str::to_string),
        include: params.ids("include"),
        exclude: params.ids("exclude"),
        descending: order == "desc",
        orderby: orderby.clone(),
        hide_empty,
        parent: params.i64("parent").map(|p| p as u64),
        slug: params.str("slug").map(str::to_string),
        event: params
            .i64("event")
            .map(|id| ("event", id as u64))
            .or_else(|| params.i64("post").map(|id| ("post", id as u64))),
    };
    let found = terms::list(
        &state.store,
        &state.index,
        kind,
        &request(ctx),
        &query,
        invalid(params),
    )
    .map_err(|e| from_service(e, ctx.caller))?;
    // The links' query: only what the request supplied, normalised.
    let sent = |name: &str| ctx.params.sent(name);
    let join = |ids: &Option<Vec<u64>>| {
        ids.as_ref()
            .map(|v| v.iter().map(u64::to_string).collect::<Vec<_>>().join(","))
            .unwrap_or_default()
    };
    let mut q: Vec<(&'static str, String)> = Vec::new();
    if let Some(s) = &query.search {
        q.push(("search", s.clone()));
    }
    if query.exclude.is_some() {
        q.push(("exclude", join(&query.exclude)));
    }
    if query.include.is_some() {
        q.push(("include", join(&query.include)));
    }
    if sent("order") {
        q.push(("order", order));
    }
    if sent("orderby") {
        q.push(("orderby", orderby));
    }
    if sent("hide_empty") {
        q.push(("hide_empty", hide_empty.to_string()));
    }
    if let Some(parent) = query.parent {
        q.push(("parent", parent.to_string()));
    }
    for name in ["post", "event"] {
        if let Some(id) = params.i64(name) {
            q.push((name, id.to_string()));
        }
    }
    if let Some(s) = &query.slug {
        q.push(("slug", s.clone()));
    }
    let answer = ListAnswer {
        links: &ctx.links,
        collection: spec_of(kind).collection,
        page,
        per_page,
        total: found.total,
        query: q,
        explicit_language: params.translation_language().map(|l| l.code()),
    };
    let links = answer.links();
    let items: Vec<Value> = found
        .items
        .iter()
        .map(|v| single(ctx, kind, v, false))
        .collect();
    let mut body = Map::new();
    body.insert("rest_url".into(), json!(links.rest_url));
    body.insert("total".into(), json!(found.total));
    body.insert("total_pages".into(), json!(links.total_pages));
    body.insert(spec_of(kind).collection.into(), Value::Array(items));
    if let Some(next) = &links.next {
        body.insert("next_rest_url".into(), json!(next));
    }
    if let Some(previous) = &links.previous {
        body.insert("previous_rest_url".into(), json!(previous));
    }
    Ok(answer.respond(body, &links))
}
