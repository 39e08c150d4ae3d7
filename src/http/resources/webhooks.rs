//! Webhooks (extension, docs/api.md, "Webhooks"): administrators register, list, resume and
//! remove the endpoints that hear of every change.

use crate::http::error::{from_service, ApiError};
use crate::http::params::{ParamKind, ParamSpec};
use crate::http::resources::invalid;
use crate::http::routes::{
    Endpoint, Group, OperationClass, Permission, ResponseSchema, Route, Seg,
};
use crate::http::{ApiResponse, AppState, Context};
use crate::model::webhook::Webhook;
use crate::service::changes;
use crate::service::webhooks::{self, WebhookWrite};
use serde_json::{json, Value};
use warp::http::header::LOCATION;
use warp::http::StatusCode;

pub(crate) fn routes() -> Vec<Route> {
    let endpoint = |group, operation_id: &str, summary: &str, params, handler| Endpoint {
        group,
        operation_id: operation_id.to_string(),
        summary: format!("(extension) {summary} Administrators only."),
        class: if operation_id == "createWebhook" {
            OperationClass::Create
        } else {
            OperationClass::Admin
        },
        response: ResponseSchema::Component(
            if operation_id == "listWebhooks" {
                "WebhookList"
            } else {
                "Webhook"
            }
            .into(),
        ),
        params,
        handler,
        checks_references: true,
        permission: Permission::Administrator,
    };
    let id = || {
        ParamSpec::path(
            "id",
            "Webhook ID.",
            ParamKind::Integer {
                minimum: Some(0),
                maximum: None,
            },
        )
    };
    vec![
        Route {
            segments: &[Seg::Lit("webhooks")],
            endpoints: vec![
                endpoint(
                    Group::Read,
                    "listWebhooks",
                    "The webhook endpoints and their delivery state.",
                    vec![],
                    list,
                ),
                endpoint(
                    Group::Create,
                    "createWebhook",
                    "Registers an endpoint: every change from now on is posted to it, signed.",
                    vec![
                        ParamSpec {
                            required: true,
                            ..ParamSpec::query("url", ParamKind::NonEmptyString)
                                .describe("The endpoint: an absolute http or https URL.")
                        },
                        ParamSpec::query("kinds", ParamKind::String).describe(
                            "The collections whose changes are posted, comma-separated \
                             (events, venues, organizers, categories, tags); all by default.",
                        ),
                        ParamSpec::query("secret", ParamKind::NonEmptyString).describe(
                            "The signing key (16 characters or more); made up when not given \
                             and shown once, in this answer.",
                        ),
                    ],
                    create,
                ),
            ],
        },
        Route {
            segments: &[Seg::Lit("webhooks"), Seg::Id],
            endpoints: vec![
                endpoint(
                    Group::Read,
                    "getWebhook",
                    "One webhook endpoint.",
                    vec![id()],
                    get,
                ),
                endpoint(
                    Group::Edit,
                    "resumeWebhook",
                    "resume=true delivers again to an endpoint suspended after failing.",
                    vec![
                        id(),
                        ParamSpec::query("resume", ParamKind::Boolean)
                            .describe("Deliver again from where deliveries stopped."),
                    ],
                    resume,
                ),
                endpoint(
                    Group::Delete,
                    "deleteWebhook",
                    "Removes an endpoint.",
                    vec![id()],
                    delete,
                ),
            ],
        },
    ]
}

/// The representation (the signing key only when `with_secret`).
fn represent(webhook: &Webhook, with_secret: bool) -> Value {
    let mut value = json!({
        "id": webhook.id,
        "url": webhook.url,
        "kinds": webhook.kinds.iter().map(|k| k.collection()).collect::<Vec<_>>(),
        "state": webhook.state(),
        "delivered_token": changes::token(webhook.delivered),
        "attempts": webhook.attempts,
        "failing_since": webhook.failing_since.as_ref().map(crate::values::datetime::format),
        "last_error": webhook.last_error,
        "created_utc": crate::values::datetime::format(&webhook.created_utc),
    });
    if with_secret {
        value["secret"] = json!(webhook.secret);
    }
    value
}

fn path_id(ctx: &Context) -> u64 {
    ctx.path.id.unwrap_or(u64::MAX)
}

fn list(state: &AppState, ctx: &Context) -> Result<ApiResponse, ApiError> {
    let all = webhooks::list(&state.store, ctx.caller).map_err(|e| from_service(e, ctx.caller))?;
    let items: Vec<Value> = all.iter().map(|w| represent(w, false)).collect();
    Ok(ApiResponse::ok(json!({ "webhooks": items })))
}

fn create(state: &AppState, ctx: &Context) -> Result<ApiResponse, ApiError> {
    let mut refusals = invalid(&ctx.params);
    let kinds = match webhooks::parse_kinds(ctx.params.str("kinds").unwrap_or_default()) {
        Ok(kinds) => kinds,
        Err(why) => {
            refusals.push(("kinds".into(), why));
            Vec::new()
        }
    };
    let write = WebhookWrite {
        url: ctx.params.str("url").unwrap_or_default().to_string(),
        kinds,
        secret: ctx.params.str("secret").map(str::to_string),
    };
    let webhook = webhooks::add(&state.store, ctx.caller, &write, refusals)
        .map_err(|e| from_service(e, ctx.caller))?;
    let mut answer = ApiResponse::ok(represent(&webhook, true)).header(
        LOCATION,
        ctx.links.route(&format!("/webhooks/{}", webhook.id)),
    );
    answer.status = StatusCode::CREATED;
    Ok(answer)
}

fn get(state: &AppState, ctx: &Context) -> Result<ApiResponse, ApiError> {
    let webhook = webhooks::get(&state.store, ctx.caller, path_id(ctx))
        .map_err(|e| from_service(e, ctx.caller))?;
    Ok(ApiResponse::ok(represent(&webhook, false)))
}

fn resume(state: &AppState, ctx: &Context) -> Result<ApiResponse, ApiError> {
    let id = path_id(ctx);
    let webhook = if ctx.params.bool("resume") == Some(true) {
        webhooks::resume(&state.store, ctx.caller, id)
    } else {
        webhooks::get(&state.store, ctx.caller, id)
    }
    .map_err(|e| from_service(e, ctx.caller))?;
    Ok(ApiResponse::ok(represent(&webhook, false)))
}

fn delete(state: &AppState, ctx: &Context) -> Result<ApiResponse, ApiError> {
    let webhook = webhooks::remove(&state.store, ctx.caller, path_id(ctx))
        .map_err(|e| from_service(e, ctx.caller))?;
    Ok(ApiResponse::ok(represent(&webhook, false)))
}
