//! The resource routes: one module per resource family, each contributing its routes to the
//! route table.

pub(crate) mod changes;
pub(crate) mod events;
pub(crate) mod feeds;
pub(crate) mod linked;
pub(crate) mod terms;
pub(crate) mod webhooks;

use crate::http::params::{ParamKind, ParamSpec, Params};
use crate::http::Context;
use crate::model::Status;
use crate::service::posts::{ImageChange, PostWrite};
use crate::service::Request;
use crate::values::datetime::{self, DateTimeValue};
use crate::values::timezone::Zone;
use crate::values::Invalid;
use serde_json::Value;

/// The use-case view of a request.
pub(crate) fn request(ctx: &Context) -> Request {
    Request {
        caller: ctx.caller,
        language: ctx.language,
        explicit_language: ctx.params.translation_language(),
        now: chrono::Utc::now().naive_utc(),
    }
}

/// Whether a read asks for the export form (`context=export`, docs/api.md, "The export
/// form").
pub(crate) fn export_form(ctx: &Context) -> bool {
    ctx.params.str("context") == Some("export")
}

/// For callers who may not edit, any `status` other than `publish` — the empty value
/// included — is a value they may not ask for, whatever its syntax (docs/api.md, "Roles and
/// visibility").
pub(crate) fn status_refusal_for_caller(params: &mut Params, caller: crate::auth::Caller) {
    if caller.has(crate::auth::Capability::EditPosts) {
        return;
    }
    for (name, why) in params.invalid.iter_mut() {
        if name == "status" {
            *why = Invalid::new(
                crate::values::SubCode::ForbiddenValue,
                "may only be publish for this caller.",
            );
        }
    }
}

/// The syntax errors found so far, handed to the use case that adds its reference checks.
pub(crate) fn invalid(params: &Params) -> Vec<(String, Invalid)> {
    params.invalid.clone()
}

const WRITABLE_STATUSES: &[&str] = &["publish", "future", "draft", "pending", "private"];

/// The write fields common to post kinds, as parameters: `name_field` is `title`, `venue` or
/// `organizer`.
pub(crate) fn common_write_params(name_field: &'static str, create: bool) -> Vec<ParamSpec> {
    let mut name =
        ParamSpec::query(name_field, ParamKind::NonEmptyString).describe("The name or title.");
    name.required = create;
    let specs = vec![
        name,
        ParamSpec::query(
            "author",
            ParamKind::Integer {
                minimum: Some(1),
                maximum: None,
            },
        )
        .describe("User ID of the owner."),
        ParamSpec::query("date", ParamKind::DateTime)
            .describe("Publication date (site time zone, UTC)."),
        ParamSpec::query("date_utc", ParamKind::DateTime).describe("Publication date in UTC."),
        ParamSpec::query("description", ParamKind::Description { non_empty: false }),
        ParamSpec::query("excerpt", ParamKind::String),
        ParamSpec::query("status", ParamKind::Enum(WRITABLE_STATUSES)),
        ParamSpec::query("image", ParamKind::Image)
            .describe("Image ID or URL; empty, 0 or false removes it."),
        ParamSpec::query(
            "translation_of",
            ParamKind::Integer {
                minimum: Some(0),
                maximum: None,
            },
        )
        .describe("ID of a record whose translation group this record joins; 0 leaves the group."),
    ];
    specs
}

/// The common write fields, read back from validated parameters. `date` is read in
/// `date_zone` (UTC, or an event's time zone), `date_utc` always in UTC.
pub(crate) fn post_write(params: &Params, name_field: &str, date_zone: &Zone) -> PostWrite {
    let now = chrono::Utc::now();
    let date = |name: &str, zone: &Zone| -> Option<DateTimeValue> {
        params
            .get(name)
            .and_then(|v| datetime::parse(v, zone, now).ok())
    };
    PostWrite {
        title: params.str(name_field).map(|s| s.trim().to_string()),
        author: params.i64("author").map(|a| a as u64),
        date: date("date", date_zone),
        date_utc: date("date_utc", &Zone::Utc),
        description: params.str("description").map(str::to_string),
        excerpt: params.str("excerpt").map(str::to_string),
        status: params.str("status").and_then(Status::parse),
        image: params.get("image").map(|v| match v {
            Value::Bool(_) => ImageChange::Remove,
            Value::Number(n) => ImageChange::Id(n.as_u64().unwrap_or(0)),
            other => ImageChange::Url(other.as_str().unwrap_or_default().to_string()),
        }),
        translation_of: params.i64("translation_of").map(|t| t as u64),
    }
}
