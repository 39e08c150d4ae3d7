//! The change feed (extension, docs/api.md, "Following changes"): `GET /changes?since=TOKEN`
//! answers what changed after the token, each record as the caller may see it now.

use crate::http::error::{from_service, ApiError};
use crate::http::links::form_encode;
use crate::http::params::{ParamKind, ParamSpec};
use crate::http::render;
use crate::http::resources::{events as event_routes, export_form, linked, request};
use crate::http::routes::{
    Endpoint, Group, OperationClass, Permission, ResponseSchema, Route, Seg,
};
use crate::http::{ApiResponse, AppState, Context};
use crate::service::changes::{self, ChangesQuery, Seen, Since};
use crate::values::{Invalid, SubCode};
use serde_json::{json, Map, Value};

/// Entries per page unless asked otherwise, and the most a page holds.
const PER_PAGE: i64 = 100;
const MAX_PER_PAGE: i64 = 500;

pub(crate) fn routes() -> Vec<Route> {
    vec![Route {
        segments: &[Seg::Lit("changes")],
        endpoints: vec![Endpoint {
            group: Group::Read,
            operation_id: "listChanges".into(),
            summary: "(extension) What changed after a token, in write order: each event, \
                      venue, organizer, category and tag once, at its latest change, as the \
                      caller may see it now (removed when it is not visible). next_token on \
                      the last page; next_page_token on the others. An expired token answers \
                      410 rest_sync_token_expired: start again without since."
                .into(),
            class: OperationClass::Changes,
            response: ResponseSchema::Component("ChangeFeed".into()),
            params: vec![
                ParamSpec::query("since", ParamKind::NonEmptyString).describe(
                    "A token from an earlier answer (next_token or next_page_token); without \
                     it, every record from the beginning; latest: no changes, only the token \
                     of now, to follow from.",
                ),
                ParamSpec::query(
                    "per_page",
                    ParamKind::Integer {
                        minimum: Some(1),
                        maximum: None,
                    },
                )
                .describe("Changes per page; values above 500 are lowered to 500.")
                .default(json!(PER_PAGE)),
                ParamSpec::query("context", ParamKind::String).describe(
                    "export (editors and administrators): records in the export form, \
                     trashed ones included. Other values change nothing.",
                ),
            ],
            handler: list,
            checks_references: true,
            permission: Permission::Everyone,
        }],
    }]
}

fn list(state: &AppState, ctx: &Context) -> Result<ApiResponse, ApiError> {
    let mut invalid = ctx.params.invalid.clone();
    let since = ctx.params.str("since");
    let parsed = since.and_then(Since::parse);
    if since.is_some() && parsed.is_none() {
        invalid.push((
            "since".into(),
            Invalid::new(
                SubCode::InvalidFormat,
                "is not a change feed token: send next_token or next_page_token as given, \
                 or latest.",
            ),
        ));
    }
    if !invalid.is_empty() {
        return Err(ApiError::invalid_params(&invalid));
    }
    let per_page = ctx.params.i64("per_page").unwrap_or(PER_PAGE);
    let export = export_form(ctx);
    let query = ChangesQuery {
        since: parsed.unwrap_or(Since::Beginning),
        per_page: per_page.clamp(1, MAX_PER_PAGE) as usize,
        export,
    };
    let request = request(ctx);
    let page = changes::since(&state.store, &state.index, &request, query)
        .map_err(|e| from_service(e, ctx.caller))?;
    let now = request.now;
    let events: Vec<_> = page
        .entries
        .iter()
        .filter_map(|entry| match &entry.seen {
            Seen::Event(event, masked) => Some((event.as_ref(), *masked)),
            _ => None,
        })
        .collect();
    let mut events = event_routes::members(state, ctx, &events, export)?.into_iter();
    let mut members = Vec::with_capacity(page.entries.len());
    for entry in page.entries {
        let journaled = &entry.journaled;
        let record = match entry.seen {
            Seen::Event(..) => events.next(),
            Seen::Venue(view) => Some(linked::represent_view(ctx, view, now, false, export)),
            Seen::Organizer(view) => Some(linked::represent_view(ctx, view, now, false, export)),
            Seen::Term(view) => Some(render::term(&view, &ctx.links, None)),
            Seen::Removed => None,
        };
        let action = match (&record, journaled.action) {
            (Some(_), action) => action.name(),
            (None, crate::model::journal::Action::Deleted) => "deleted",
            (None, _) => "removed",
        };
        let mut member = Map::new();
        member.insert("token".into(), json!(changes::token(entry.position)));
        member.insert("kind".into(), json!(journaled.kind.name()));
        member.insert("id".into(), json!(journaled.id));
        member.insert("action".into(), json!(action));
        member.insert(
            "date_utc".into(),
            json!(crate::values::datetime::format(&journaled.at)),
        );
        member.insert("language".into(), json!(journaled.language.code()));
        if let Some(record) = record {
            member.insert("record".into(), record);
        }
        members.push(Value::Object(member));
    }
    let mut body = Map::new();
    body.insert("changes".into(), Value::Array(members));
    let mut answer_links = Vec::new();
    if let Some(next) = page.next_page {
        let token = changes::token(next);
        let mut pairs = vec![("since", token.as_str())];
        let per_page = query.per_page.to_string();
        pairs.push(("per_page", per_page.as_str()));
        if let Some(language) = request.explicit_language {
            pairs.push(("translation_language", language.code()));
        }
        if export {
            pairs.push(("context", "export"));
        }
        answer_links.push(format!(
            "{}?{}",
            ctx.links.route("/changes"),
            form_encode(&pairs)
        ));
        body.insert("next_page_token".into(), json!(token));
    }
    if let Some(sync) = page.next_sync {
        body.insert("next_token".into(), json!(changes::token(sync)));
    }
    let mut answer = ApiResponse::ok(Value::Object(body));
    for link in answer_links {
        answer.link_relations.push((link, "rel=\"next\""));
    }
    Ok(answer)
}
