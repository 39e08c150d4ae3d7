//! The meta routes: the namespace index, `/doc`, route descriptions for OPTIONS and the REST
//! root index. All of them are generated from the
//! route table.

use crate::http::error::ApiError;
use crate::http::links::{Links, NAMESPACE};
use crate::http::params::{ParamKind, ParamSpec};
use crate::http::routes::{Endpoint, Group, OperationClass, Permission, ResponseSchema, Route};
use crate::http::{openapi, ApiResponse, AppState, Context};
use serde_json::{json, Map, Value};
use warp::http::header::HeaderName;

pub(crate) fn routes() -> Vec<Route> {
    let mut routes = catalogue_routes();
    routes.push(Route {
        segments: &[
            crate::http::routes::Seg::Lit("index"),
            crate::http::routes::Seg::Lit("rebuild"),
        ],
        endpoints: vec![Endpoint {
            group: Group::Create,
            operation_id: "rebuildIndex".into(),
            summary: "(extension) Rebuilds the search index from the store while serving, \
                      then swaps it in. Administrators only."
                .into(),
            class: OperationClass::Admin,
            response: ResponseSchema::Component("IndexSummary".into()),
            params: vec![],
            handler: rebuild_index,
            checks_references: false,
            permission: Permission::Administrator,
        }],
    });
    routes
}

/// `POST /index/rebuild` (extension): the index rebuilt online, with the counts indexed.
fn rebuild_index(state: &AppState, ctx: &Context) -> Result<ApiResponse, ApiError> {
    if !ctx.caller.administers() {
        return Err(ApiError::forbidden(ctx.caller));
    }
    let summary = crate::service::rebuild_index(&state.store, &state.index).map_err(|e| {
        tracing::error!(error = ?e, "online index rebuild failed");
        ApiError::internal()
    })?;
    Ok(ApiResponse::ok(json!({
        "events": summary.events,
        "venues": summary.venues,
        "organizers": summary.organizers,
    })))
}

/// The routes served by this module: the namespace root and `/doc`.
fn catalogue_routes() -> Vec<Route> {
    vec![
        Route {
            segments: &[],
            endpoints: vec![Endpoint {
                group: Group::Read,
                operation_id: "getNamespaceIndex".into(),
                summary: "The namespace index: every route with its methods and arguments.".into(),
                class: OperationClass::Meta,
                response: ResponseSchema::Component("NamespaceIndex".into()),
                params: vec![
                    ParamSpec::query("namespace", ParamKind::String).default(json!(NAMESPACE)),
                    ParamSpec::query("context", ParamKind::String).default(json!("view")),
                    ParamSpec::translation_language(),
                ],
                handler: namespace_index,
                checks_references: false,
                permission: Permission::Everyone,
            }],
        },
        Route {
            segments: &[crate::http::routes::Seg::Lit("doc")],
            endpoints: vec![Endpoint {
                group: Group::Read,
                operation_id: "getDocumentation".into(),
                summary: "This OpenAPI 3.1 document.".into(),
                class: OperationClass::Meta,
                response: ResponseSchema::AnyObject,
                params: vec![],
                handler: documentation,
                checks_references: false,
                permission: Permission::Everyone,
            }],
        },
    ]
}

fn namespace_index(state: &AppState, ctx: &Context) -> Result<ApiResponse, ApiError> {
    if ctx.params.str("namespace") != Some(NAMESPACE) {
        return Err(ApiError::invalid_namespace());
    }
    let mut routes = Map::new();
    for route in state.routes.routes.iter().filter(|r| r.in_catalogue()) {
        routes.insert(route.index_key(), route_entry(route, &ctx.links));
    }
    Ok(ApiResponse::ok(json!({
        "namespace": NAMESPACE,
        "routes": routes,
        "_links": {"up": [{"href": ctx.links.rest_root()}]},
    })))
}

fn documentation(state: &AppState, ctx: &Context) -> Result<ApiResponse, ApiError> {
    Ok(ApiResponse::ok(openapi::document(
        &state.routes,
        &ctx.links,
    )))
}

/// One entry of the namespace index, also the body of OPTIONS on the route.
pub(crate) fn route_entry(route: &Route, links: &Links) -> Value {
    let endpoints: Vec<Value> = route
        .endpoints
        .iter()
        .map(|e| {
            // On slug routes the path `slug` and the write field `slug` share a name; the
            // path parameter, declared first, is the one the index describes.
            let mut args = Map::new();
            for p in &e.params {
                args.entry(p.name.to_string()).or_insert_with(|| p.index_arg());
            }
            json!({"methods": e.group.methods().iter().map(|m| m.as_str()).collect::<Vec<_>>(), "args": args})
        })
        .collect();
    let mut entry = json!({
        "namespace": NAMESPACE,
        "methods": route.methods().iter().map(|m| m.as_str()).collect::<Vec<_>>(),
        "endpoints": endpoints,
    });
    if !route.has_placeholders() {
        entry["_links"] = json!({"self": [{"href": links.route(&route.relative_path())}]});
    }
    entry
}

/// The `/` entry of the REST root index, also its OPTIONS answer.
pub(crate) fn rest_root_entry(links: &Links) -> Value {
    json!({
        "namespace": "",
        "methods": ["GET"],
        "endpoints": [{"methods": ["GET"], "args": {"context": {"default": "view", "required": false}}}],
        "_links": {"self": [{"href": links.rest_root()}]},
    })
}

/// `GET /`, `/pt-br/`, `/es/` with the discovery headers.
pub(crate) fn rest_root(state: &AppState, links: &Links) -> ApiResponse {
    let mut routes = Map::new();
    routes.insert("/".into(), rest_root_entry(links));
    for route in state.routes.routes.iter().filter(|r| r.in_catalogue()) {
        routes.insert(route.index_key(), route_entry(route, links));
    }
    ApiResponse::ok(json!({
        "name": "almanac",
        "description": "Events calendar REST service",
        "url": links.public_url(),
        "home": links.public_url(),
        "gmt_offset": 0,
        "timezone_string": "UTC",
        "namespaces": [NAMESPACE],
        "routes": routes,
    }))
    .header(HeaderName::from_static("x-cal-api-version"), "v1")
    .header(
        HeaderName::from_static("x-cal-api-root"),
        format!("{}/", links.namespace()),
    )
    .header(
        HeaderName::from_static("x-cal-api-origin"),
        links.public_url(),
    )
}
