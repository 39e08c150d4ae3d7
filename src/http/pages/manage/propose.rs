//! Visitors' proposals (docs/pages.md, "Proposals from visitors"): when the operator allows
//! them, `/events/propose/` shows the event form's public fields, and what is sent is created
//! by the service's rules for a visitor — pending review, nobody's own. The form carries a
//! token of its own cookie (there is no session); a field hidden from people catches simple
//! robots (they are thanked and nothing is written); each address may send a few proposals
//! an hour (per node).

use super::{choices, context, page, respond, Answer, ManageRequest};
use crate::auth::Caller;
use crate::http::pages::event_form::{self, EventForm, FormKind, StoredEvent, HONEYPOT};
use crate::http::pages::manage_texts::ManageTexts;
use crate::http::pages::templates::{layout, Head, PageCtx};
use crate::http::response::Finish;
use crate::http::AppState;
use crate::service::{events, sessions, Request, ServiceError};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use maud::html;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;
use warp::http::{Method, StatusCode};
use warp::reply::Response;

/// The form's own token cookie.
const TOKEN_COOKIE: &str = "almanac_propose";
/// Proposals an address may send at once; one more each twelve minutes after.
const PER_HOUR: u32 = 5;
/// Addresses remembered before those that are back to their full allowance are forgotten.
const ADDRESSES: usize = 16_384;

/// How many proposals each address may still send.
pub(crate) struct ProposalLimit(DefaultKeyedRateLimiter<IpAddr>);

impl Default for ProposalLimit {
    fn default() -> ProposalLimit {
        let per_hour = NonZeroU32::new(PER_HOUR).expect("not zero");
        ProposalLimit(RateLimiter::keyed(Quota::per_hour(per_hour)))
    }
}

impl ProposalLimit {
    /// Whether `address` may send one more now (which counts it).
    fn admits(&self, address: IpAddr) -> bool {
        if self.0.len() > ADDRESSES {
            self.0.retain_recent();
        }
        self.0.check_key(&address).is_ok()
    }
}

/// Answers `/events/propose/` (404 unless the operator allows proposals).
pub(crate) fn serve(
    state: &Arc<AppState>,
    finish: &Finish<'_>,
    req: ManageRequest<'_>,
) -> Response {
    let ctx = context(state, &state.pages, req.language, "events/propose/");
    let answer = if !state.pages.settings.public_submissions {
        Ok(super::not_found(&ctx))
    } else if *req.method == Method::POST {
        tokio::task::block_in_place(|| send(state, &ctx, &req))
    } else {
        let form = EventForm::blank(now(), &ctx.settings.zone.name()).proposal();
        let sent = req.query_param("sent").is_some();
        form_page(state, &ctx, &form, &[], sent, StatusCode::OK)
    };
    match answer {
        Ok(answer) => respond(state, finish, answer),
        Err(e) => super::failure(finish, e),
    }
}

fn now() -> chrono::NaiveDateTime {
    chrono::Utc::now().naive_utc()
}

/// The form's address in the page's language.
fn path(ctx: &PageCtx) -> String {
    ctx.paths.propose()
}

/// Checks and creates the proposal; a refused one comes back with its values.
fn send(state: &AppState, ctx: &PageCtx, req: &ManageRequest) -> Result<Answer, ServiceError> {
    let t = ManageTexts::of(ctx.locale.language);
    let form = EventForm::of_fields(&req.form).proposal();
    let again = |errors: Vec<(String, String)>, status| {
        form_page(state, ctx, &form, &errors, false, status)
    };
    let token_ok = match (req.cookie(TOKEN_COOKIE), req.field("form_token")) {
        (Some(a), Some(b)) => {
            !a.is_empty() && crate::service::secret_eq(a.as_bytes(), b.as_bytes())
        }
        _ => false,
    };
    if !token_ok {
        return again(
            vec![(String::new(), t.form_expired.into())],
            StatusCode::FORBIDDEN,
        );
    }
    let thanks = Answer::Redirect {
        to: format!("{}?sent=1", path(ctx)),
        cookies: Vec::new(),
    };
    if req.field(HONEYPOT).is_some_and(|v| !v.is_empty()) {
        return Ok(thanks);
    }
    let (params, write, fields) = match form.checked(true, t) {
        Ok(checked) => checked,
        Err(errors) => return again(errors, StatusCode::UNPROCESSABLE_ENTITY),
    };
    if !state.pages.proposals.admits(req.client) {
        return again(
            vec![(String::new(), t.too_many_proposals.into())],
            StatusCode::TOO_MANY_REQUESTS,
        );
    }
    match events::propose(
        &state.store,
        ctx.locale.language,
        now(),
        &write,
        &fields,
        params.invalid,
    ) {
        Ok(_) => Ok(thanks),
        Err(ServiceError::Invalid(refusals)) => again(
            event_form::errors(refusals, t),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        Err(e) => Err(e),
    }
}

/// The proposal form (`sent`: thanking for the last one), with a new token in its cookie.
fn form_page(
    state: &AppState,
    ctx: &PageCtx,
    form: &EventForm,
    errors: &[(String, String)],
    sent: bool,
    status: StatusCode,
) -> Result<Answer, ServiceError> {
    let t = ManageTexts::of(ctx.locale.language);
    // What a visitor may link: what anyone may read, in the page's language.
    let request = Request {
        caller: Caller::Anonymous,
        language: ctx.locale.language,
        explicit_language: None,
        now: now(),
    };
    let choices = choices(state, &request)?;
    let token = sessions::random_token();
    let head = Head {
        title: t.propose.to_string(),
        description: t.propose_intro.to_string(),
        canonical: path(ctx),
        noindex: true,
        feed: None,
        image: None,
        og_type: "website",
        json_ld: None,
    };
    let html = layout(
        ctx,
        &head,
        html! {
            h1 { (t.propose) }
            @if sent {
                p.notice role="status" { (t.proposal_sent) }
            }
            p { (t.propose_intro) }
            (event_form::render(ctx, FormKind::Proposal, &path(ctx), &token, form, &choices, &StoredEvent::default(), errors))
        },
    );
    let mut answer = page(status, html);
    if let Answer::Page { cookies, .. } = &mut answer {
        cookies.push(format!(
            "{TOKEN_COOKIE}={token}; Path={}; Max-Age=3600; HttpOnly; SameSite=Strict",
            path(ctx)
        ));
    }
    Ok(answer)
}
