//! The editors' pages (docs/pages.md, "Editors' pages"), under `/manage/` and each language
//! segment: signing in and out, changing one's password and the dashboard of events. Plain
//! HTML forms; every form that changes something carries its session's form token (CSRF),
//! checked before anything else, and the sign-in form a token of its own cookie. What may be
//! done is decided by the same service functions as the API's.

mod linked;
pub(crate) mod propose;
mod terms;
mod users;

use super::event_form::{self, Choices, EventForm, StoredEvent};
use super::manage_texts::ManageTexts;
use super::templates::{layout, Head, PageCtx};
use super::{put, Pages};
use crate::auth::{AuthError, Caller};
use crate::http::response::{Body, Finish, SharedBody};
use crate::http::{ApiResponse, AppState};
use crate::model::event::Event;
use crate::model::post::{Organizer, Venue};
use crate::model::session::Session;
use crate::model::{Language, Status, User};
use crate::service::events::{self, EventQuery, Target};
use crate::service::posts::PostWrite;
use crate::service::{sessions, Request, ServiceError};
use chrono::NaiveDateTime;
use maud::{html, Markup};
use serde_json::{json, Value};
use std::net::IpAddr;
use std::sync::Arc;
use warp::http::header::{self, HeaderMap};
use warp::http::{Method, StatusCode};
use warp::reply::Response;

/// The session cookie.
const SESSION_COOKIE: &str = "almanac_session";
/// The sign-in form's own token (there is no session yet to hold it).
const SIGN_IN_COOKIE: &str = "almanac_sign_in";
/// The position of the browser's last form (on a cluster, the node answering the next page
/// waits until it has that write: a session opened or an event changed on another node).
const SEEN_COOKIE: &str = "almanac_seen";
/// Events per dashboard page.
const PER_PAGE: usize = 20;

/// A request to a manage page, as the handlers need it.
pub(crate) struct ManageRequest<'a> {
    pub method: &'a Method,
    /// The path after the language segment and `manage`.
    pub rest: &'a [String],
    pub language: Language,
    pub query: &'a str,
    /// The form of a POST (`application/x-www-form-urlencoded`).
    pub form: Vec<(String, String)>,
    pub headers: &'a HeaderMap,
    pub client: IpAddr,
}

impl ManageRequest<'_> {
    fn field(&self, name: &str) -> Option<&str> {
        self.form
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn fields<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> {
        self.form
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn query_param(&self, name: &str) -> Option<String> {
        url::form_urlencoded::parse(self.query.as_bytes())
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.into_owned())
    }

    fn cookie(&self, name: &str) -> Option<String> {
        self.headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.to_string())
    }
}

/// What a manage handler answers.
enum Answer {
    Page {
        status: StatusCode,
        html: Markup,
        cookies: Vec<String>,
    },
    /// `303 See Other` to a path of this site.
    Redirect { to: String, cookies: Vec<String> },
}

fn page(status: StatusCode, html: Markup) -> Answer {
    Answer::Page {
        status,
        html,
        cookies: Vec::new(),
    }
}

/// A signed-in editor.
struct Editor {
    /// The session's cookie value.
    token: String,
    session: Session,
    user: User,
}

impl Editor {
    fn caller(&self) -> Caller {
        crate::auth::caller_of(&self.user)
    }
}

/// Answers a request to a manage page.
pub(crate) async fn serve(
    state: &Arc<AppState>,
    finish: &Finish<'_>,
    req: ManageRequest<'_>,
) -> Response {
    if let Some(seen) = req.cookie(SEEN_COOKIE).and_then(|v| v.parse().ok()) {
        // Past the wait, the page shows what this node has.
        crate::http::reach_position(&state.store, seen).await;
    }
    let now = chrono::Utc::now().naive_utc();
    let pages = &state.pages;
    let editor = match req.cookie(SESSION_COOKIE) {
        Some(token) => {
            match tokio::task::block_in_place(|| sessions::resolve(&state.store, &token, now)) {
                Ok(found) => found.map(|(session, user)| Editor {
                    token,
                    session,
                    user,
                }),
                Err(e) => return failure(finish, ServiceError::Store(e)),
            }
        }
        None => None,
    };
    let ctx = context(state, pages, req.language, "manage/");
    let rest: Vec<&str> = req.rest.iter().map(String::as_str).collect();
    let answer = match (req.method, rest.as_slice(), &editor) {
        (&Method::POST, ["sign-in"], _) => sign_in(state, &ctx, &req, now).await,
        (&Method::GET | &Method::HEAD, [], None) => {
            Ok(sign_in_page(&ctx, "", None, StatusCode::OK))
        }
        // A form sent without a session (signed out, expired) changes nothing.
        (&Method::POST, _, None) => Ok(page(StatusCode::FORBIDDEN, expired(&ctx, None))),
        (_, _, None) => Ok(Answer::Redirect {
            to: ctx_path(&ctx, ""),
            cookies: Vec::new(),
        }),
        (&Method::POST, _, Some(editor)) if !form_token_ok(&req, &editor.session) => {
            Ok(page(StatusCode::FORBIDDEN, expired(&ctx, Some(editor))))
        }
        (&Method::GET | &Method::HEAD, [], Some(editor)) => {
            tokio::task::block_in_place(|| dashboard(state, &ctx, &req, editor, now))
        }
        (&Method::POST, ["events"], Some(editor)) => {
            tokio::task::block_in_place(|| bulk(state, &ctx, &req, editor, now))
        }
        (&Method::GET | &Method::HEAD, ["venues"], Some(editor)) => {
            tokio::task::block_in_place(|| {
                linked::list_page::<Venue>(state, &ctx, &req, editor, now)
            })
        }
        (&Method::GET | &Method::HEAD, ["organizers"], Some(editor)) => {
            tokio::task::block_in_place(|| {
                linked::list_page::<Organizer>(state, &ctx, &req, editor, now)
            })
        }
        (&Method::POST, ["venues"], Some(editor)) => {
            tokio::task::block_in_place(|| linked::bulk::<Venue>(state, &ctx, &req, editor, now))
        }
        (&Method::POST, ["organizers"], Some(editor)) => tokio::task::block_in_place(|| {
            linked::bulk::<Organizer>(state, &ctx, &req, editor, now)
        }),
        (&Method::GET | &Method::HEAD, ["venues", which], Some(editor)) => {
            tokio::task::block_in_place(|| {
                linked::form_page::<Venue>(state, &ctx, &req, editor, which, now)
            })
        }
        (&Method::GET | &Method::HEAD, ["organizers", which], Some(editor)) => {
            tokio::task::block_in_place(|| {
                linked::form_page::<Organizer>(state, &ctx, &req, editor, which, now)
            })
        }
        (&Method::POST, ["venues", which], Some(editor)) => tokio::task::block_in_place(|| {
            linked::save::<Venue>(state, &ctx, &req, editor, which, now)
        }),
        (&Method::POST, ["organizers", which], Some(editor)) => tokio::task::block_in_place(|| {
            linked::save::<Organizer>(state, &ctx, &req, editor, which, now)
        }),
        (&Method::GET | &Method::HEAD, [collection], Some(editor))
            if term_kind(collection).is_some() =>
        {
            let kind = term_kind(collection).expect("checked");
            tokio::task::block_in_place(|| terms::list_page(state, &ctx, &req, editor, kind, now))
        }
        (&Method::POST, [collection], Some(editor)) if term_kind(collection).is_some() => {
            let kind = term_kind(collection).expect("checked");
            tokio::task::block_in_place(|| terms::bulk(state, &ctx, &req, editor, kind, now))
        }
        (&Method::GET | &Method::HEAD, [collection, which], Some(editor))
            if term_kind(collection).is_some() =>
        {
            let kind = term_kind(collection).expect("checked");
            tokio::task::block_in_place(|| {
                terms::form_page(state, &ctx, &req, editor, kind, which, now)
            })
        }
        (&Method::POST, [collection, which], Some(editor)) if term_kind(collection).is_some() => {
            let kind = term_kind(collection).expect("checked");
            tokio::task::block_in_place(|| terms::save(state, &ctx, &req, editor, kind, which, now))
        }
        (&Method::GET | &Method::HEAD, ["users"], Some(editor)) => {
            tokio::task::block_in_place(|| {
                users::page_of(state, &ctx, editor, None, ("", "author"), StatusCode::OK)
            })
        }
        (&Method::POST, ["users"], Some(editor)) => {
            tokio::task::block_in_place(|| users::change(state, &ctx, &req, editor))
        }
        (&Method::GET | &Method::HEAD, ["events", which], Some(editor)) => {
            tokio::task::block_in_place(|| event_page(state, &ctx, &req, editor, which, now))
        }
        (&Method::POST, ["events", which], Some(editor)) => {
            tokio::task::block_in_place(|| save_event(state, &ctx, &req, editor, which, now))
        }
        (&Method::POST, ["events", which, "translate"], Some(editor)) => {
            tokio::task::block_in_place(|| translate(state, &ctx, &req, editor, which, now))
        }
        (&Method::GET | &Method::HEAD, ["events", which, "preview"], Some(editor)) => {
            tokio::task::block_in_place(|| preview(state, &ctx, editor, which, now))
        }
        (&Method::POST, ["sign-out"], Some(editor)) => {
            tokio::task::block_in_place(|| sessions::close(&state.store, &editor.token))
                .map_err(ServiceError::Store)
                .map(|()| Answer::Redirect {
                    to: ctx_path(&ctx, ""),
                    cookies: vec![cookie(state, SESSION_COOKIE, "", 0)],
                })
        }
        (&Method::GET | &Method::HEAD, ["password"], Some(editor)) => {
            Ok(page(StatusCode::OK, password_page(&ctx, editor, &[])))
        }
        (&Method::POST, ["password"], Some(editor)) => {
            change_password(state, &ctx, &req, editor, now).await
        }
        _ => Ok(page(
            StatusCode::NOT_FOUND,
            super::templates::layout(
                &ctx,
                &head(&ctx, ManageTexts::of(ctx.locale.language).manage),
                super::templates::not_found(&ctx),
            ),
        )),
    };
    let answer = answer.map(|mut answer| {
        if *req.method == Method::POST {
            let seen = cookie(state, SEEN_COOKIE, &state.store.position().to_string(), -1);
            match &mut answer {
                Answer::Page { cookies, .. } | Answer::Redirect { cookies, .. } => {
                    cookies.push(seen)
                }
            }
        }
        answer
    });
    match answer {
        Ok(answer) => respond(state, finish, answer),
        Err(e) => failure(finish, e),
    }
}

fn failure(finish: &Finish<'_>, e: ServiceError) -> Response {
    tracing::error!(error = ?e, "a manage page failed");
    finish.error(&crate::http::error::from_service(e, finish.caller))
}

fn respond(state: &AppState, finish: &Finish<'_>, answer: Answer) -> Response {
    let (mut response, cookies) = match answer {
        Answer::Redirect { to, cookies } => {
            let mut r = Response::new(Vec::new().into());
            *r.status_mut() = StatusCode::SEE_OTHER;
            put(
                r.headers_mut(),
                header::LOCATION,
                &format!("{}{to}", state.pages.origin),
            );
            (r, cookies)
        }
        Answer::Page {
            status,
            html,
            cookies,
        } => {
            let mut body = ApiResponse::ok_body(Body::Shared(Arc::new(SharedBody::new(
                super::HTML,
                html.into_string().into_bytes(),
            ))));
            body.status = status;
            (finish.success(body, Some("no-store")), cookies)
        }
    };
    let h = response.headers_mut();
    put(h, header::CACHE_CONTROL, "no-store");
    for c in cookies {
        if let Ok(v) = header::HeaderValue::from_str(&c) {
            h.append(header::SET_COOKIE, v);
        }
    }
    super::security_headers(state, h, super::Framing::Nobody);
    response
}

/// A `Set-Cookie` value: HttpOnly, SameSite=Lax, Secure when the public URL is https, on the
/// site's path; `max_age` 0 removes it, a negative one makes it last as long as the browser.
fn cookie(state: &AppState, name: &str, value: &str, max_age: i64) -> String {
    let secure = if state.public_url.starts_with("https://") {
        "; Secure"
    } else {
        ""
    };
    let path = if state.pages.base.is_empty() {
        "/"
    } else {
        &state.pages.base
    };
    let max_age = if max_age < 0 {
        String::new()
    } else {
        format!("; Max-Age={max_age}")
    };
    format!("{name}={value}; Path={path}{max_age}; HttpOnly; SameSite=Lax{secure}")
}

/// The context of a page at `tail` (`manage/`) below each language's root.
fn context<'a>(
    state: &'a AppState,
    pages: &'a Pages,
    language: Language,
    tail: &str,
) -> PageCtx<'a> {
    let paths = super::address::Paths {
        language,
        embed: false,
        base: pages.base.clone(),
    };
    let alternates = Language::ALL
        .iter()
        .map(|l| {
            let mut path = pages.base.to_string();
            if *l != Language::En {
                path.push('/');
                path.push_str(l.code());
            }
            path.push('/');
            path.push_str(tail);
            (*l, path)
        })
        .collect();
    PageCtx {
        settings: &pages.settings,
        stylesheet: pages.assets.stylesheet_href(),
        frame_script: pages.assets.frame_script_href(),
        manage_script: pages.assets.manage_script_href(),
        locale: super::locale::PageLocale::of(language),
        paths,
        public_url: &state.public_url,
        origin: pages.origin.clone(),
        alternates,
    }
}

/// The path of a manage page (`rest` after `/manage/`) in the page's language.
fn ctx_path(ctx: &PageCtx, rest: &str) -> String {
    let mut path = ctx.paths.base.to_string();
    if ctx.locale.language != Language::En {
        path.push('/');
        path.push_str(ctx.locale.language.code());
    }
    path.push_str("/manage/");
    path.push_str(rest);
    path
}

fn head(ctx: &PageCtx, title: &str) -> Head {
    Head {
        title: title.to_string(),
        description: ManageTexts::of(ctx.locale.language).manage.to_string(),
        canonical: ctx_path(ctx, ""),
        noindex: true,
        feed: None,
        image: None,
        og_type: "website",
        json_ld: None,
    }
}

fn form_token_ok(req: &ManageRequest, session: &Session) -> bool {
    req.field("form_token")
        .is_some_and(|given| sessions::form_token_matches(session, given))
}

/// The bar of every page of a signed-in editor: where they are, who they are, sign-out.
fn editor_bar(ctx: &PageCtx, editor: &Editor) -> Markup {
    let t = ManageTexts::of(ctx.locale.language);
    html! {
        nav.manage aria-label=(t.manage) {
            ul {
                li { a href=(ctx_path(ctx, "")) { (t.events) } }
                li { a href=(ctx_path(ctx, "venues/")) { (t.kind(crate::model::Kind::Venue).plural) } }
                li { a href=(ctx_path(ctx, "organizers/")) { (t.kind(crate::model::Kind::Organizer).plural) } }
                li { a href=(ctx_path(ctx, "categories/")) { (t.kind(crate::model::Kind::Category).plural) } }
                li { a href=(ctx_path(ctx, "tags/")) { (t.kind(crate::model::Kind::Tag).plural) } }
                @if crate::service::users::may_manage(editor.caller()) {
                    li { a href=(ctx_path(ctx, "users")) { (t.users) } }
                }
                li { a href=(ctx_path(ctx, "password")) { (t.change_password) } }
            }
            form method="post" action=(ctx_path(ctx, "sign-out")) {
                span { (super::locale::fill(t.signed_in_as, "name", &editor.user.name)) }
                " "
                input type="hidden" name="form_token" value=(editor.session.form_token);
                button type="submit" { (t.sign_out) }
            }
        }
    }
}

/// A field's error, named by the field's `aria-describedby`.
fn field_error(id: &str, error: Option<&str>) -> Markup {
    html! {
        @if let Some(error) = error {
            p.error id=(id) { (error) }
        }
    }
}

fn sign_in_page(ctx: &PageCtx, name: &str, error: Option<String>, status: StatusCode) -> Answer {
    let t = ManageTexts::of(ctx.locale.language);
    let token = sessions::random_token();
    let html = layout(
        ctx,
        &head(ctx, t.sign_in),
        html! {
            h1 { (t.sign_in) }
            p { (t.sign_in_intro) }
            @if let Some(error) = &error {
                p.error role="alert" id="sign-in-error" { (error) }
            }
            form.manage-form method="post" action=(ctx_path(ctx, "sign-in")) {
                input type="hidden" name="form_token" value=(token);
                p {
                    label for="name" { (t.user_name) }
                    input #name type="text" name="name" value=(name) autocomplete="username"
                        required aria-describedby=[error.as_ref().map(|_| "sign-in-error")];
                }
                p {
                    label for="password" { (t.password) }
                    input #password type="password" name="password" autocomplete="current-password"
                        required;
                }
                p { button type="submit" { (t.sign_in) } }
            }
        },
    );
    let state_cookie = format!(
        "{SIGN_IN_COOKIE}={token}; Path={}; Max-Age=3600; HttpOnly; SameSite=Strict",
        sign_in_path(ctx)
    );
    Answer::Page {
        status,
        html,
        cookies: vec![state_cookie],
    }
}

/// Where the sign-in cookie is sent: the sign-in form's action only.
fn sign_in_path(ctx: &PageCtx) -> String {
    ctx_path(ctx, "sign-in")
}

async fn sign_in(
    state: &Arc<AppState>,
    ctx: &PageCtx<'_>,
    req: &ManageRequest<'_>,
    now: NaiveDateTime,
) -> Result<Answer, ServiceError> {
    let t = ManageTexts::of(ctx.locale.language);
    let name = req.field("name").unwrap_or("").trim().to_string();
    let expected = req.cookie(SIGN_IN_COOKIE);
    let given = req.field("form_token");
    let token_ok = match (expected.as_deref(), given) {
        (Some(a), Some(b)) => {
            !a.is_empty() && crate::service::secret_eq(a.as_bytes(), b.as_bytes())
        }
        _ => false,
    };
    if !token_ok {
        return Ok(sign_in_page(
            ctx,
            &name,
            Some(t.form_expired.to_string()),
            StatusCode::FORBIDDEN,
        ));
    }
    let password = req.field("password").unwrap_or("");
    if name.is_empty() || password.is_empty() {
        return Ok(sign_in_page(
            ctx,
            &name,
            Some(t.wrong_credentials.to_string()),
            StatusCode::UNAUTHORIZED,
        ));
    }
    state.refresh_users();
    let user = match state.auth.verify(&name, password, req.client).await {
        Ok(user) => user,
        Err(AuthError::Throttled { retry_after }) => {
            let minutes = retry_after.as_secs().div_ceil(60).max(1).to_string();
            return Ok(sign_in_page(
                ctx,
                &name,
                Some(super::locale::fill(t.throttled, "minutes", &minutes)),
                StatusCode::TOO_MANY_REQUESTS,
            ));
        }
        Err(AuthError::Busy) => {
            return Ok(sign_in_page(
                ctx,
                &name,
                Some(t.busy.to_string()),
                StatusCode::SERVICE_UNAVAILABLE,
            ))
        }
        Err(_) => {
            return Ok(sign_in_page(
                ctx,
                &name,
                Some(t.wrong_credentials.to_string()),
                StatusCode::UNAUTHORIZED,
            ))
        }
    };
    let (token, _) = tokio::task::block_in_place(|| sessions::open(&state.store, &user, now))?;
    Ok(Answer::Redirect {
        to: ctx_path(ctx, ""),
        cookies: vec![
            cookie(
                state,
                SESSION_COOKIE,
                &token,
                sessions::LIFETIME.num_seconds(),
            ),
            format!(
                "{SIGN_IN_COOKIE}=; Path={}; Max-Age=0; HttpOnly; SameSite=Strict",
                sign_in_path(ctx)
            ),
        ],
    })
}

fn expired(ctx: &PageCtx, editor: Option<&Editor>) -> Markup {
    let t = ManageTexts::of(ctx.locale.language);
    layout(
        ctx,
        &head(ctx, t.manage),
        html! {
            @if let Some(editor) = editor { (editor_bar(ctx, editor)) }
            h1 { (t.manage) }
            p.error role="alert" { (t.form_expired) }
            p { a href=(ctx_path(ctx, "")) { (t.events) } }
        },
    )
}

fn password_page(ctx: &PageCtx, editor: &Editor, errors: &[(&str, String)]) -> Markup {
    let t = ManageTexts::of(ctx.locale.language);
    let error = |field: &str| {
        errors
            .iter()
            .find(|(f, _)| *f == field)
            .map(|(_, e)| e.as_str())
    };
    let described = |field: &str| error(field).map(|_| format!("{field}-error"));
    layout(
        ctx,
        &head(ctx, t.change_password),
        html! {
            (editor_bar(ctx, editor))
            h1 { (t.change_password) }
            form.manage-form method="post" action=(ctx_path(ctx, "password")) {
                input type="hidden" name="form_token" value=(editor.session.form_token);
                p {
                    label for="current" { (t.current_password) }
                    input #current type="password" name="current" autocomplete="current-password"
                        required aria-invalid=[error("current").map(|_| "true")]
                        aria-describedby=[described("current")];
                    (field_error("current-error", error("current")))
                }
                p {
                    label for="new" { (t.new_password) }
                    input #new type="password" name="new" autocomplete="new-password" required
                        aria-invalid=[error("new").map(|_| "true")]
                        aria-describedby=[described("new").or(Some("new-rules".into()))];
                    small #new-rules { (t.password_rules) }
                    (field_error("new-error", error("new")))
                }
                p {
                    label for="repeat" { (t.repeat_password) }
                    input #repeat type="password" name="repeat" autocomplete="new-password" required
                        aria-invalid=[error("repeat").map(|_| "true")]
                        aria-describedby=[described("repeat")];
                    (field_error("repeat-error", error("repeat")))
                }
                p { button type="submit" { (t.save) } }
            }
        },
    )
}

async fn change_password(
    state: &Arc<AppState>,
    ctx: &PageCtx<'_>,
    req: &ManageRequest<'_>,
    editor: &Editor,
    now: NaiveDateTime,
) -> Result<Answer, ServiceError> {
    let t = ManageTexts::of(ctx.locale.language);
    let current = req.field("current").unwrap_or("");
    let new = req.field("new").unwrap_or("");
    let repeat = req.field("repeat").unwrap_or("");
    let mut errors = Vec::new();
    for (field, value) in [("current", current), ("new", new), ("repeat", repeat)] {
        if value.is_empty() {
            errors.push((field, t.required.to_string()));
        }
    }
    if !new.is_empty() && crate::service::users::validate_password(new).is_err() {
        errors.push(("new", t.password_rules.to_string()));
    }
    if !repeat.is_empty() && new != repeat {
        errors.push(("repeat", t.passwords_differ.to_string()));
    }
    if errors.is_empty() {
        match state
            .auth
            .verify(&editor.user.name, current, req.client)
            .await
        {
            Ok(_) => {}
            Err(AuthError::Throttled { retry_after }) => {
                let minutes = retry_after.as_secs().div_ceil(60).max(1).to_string();
                errors.push((
                    "current",
                    super::locale::fill(t.throttled, "minutes", &minutes),
                ));
            }
            Err(AuthError::Busy) => errors.push(("current", t.busy.to_string())),
            Err(_) => errors.push(("current", t.wrong_credentials.to_string())),
        }
    }
    if !errors.is_empty() {
        return Ok(page(
            StatusCode::UNPROCESSABLE_ENTITY,
            password_page(ctx, editor, &errors),
        ));
    }
    // A new password ends every session of the user; this browser gets a new one.
    let (token, session, user) = tokio::task::block_in_place(|| {
        let user = crate::service::users::set_password(&state.store, &editor.user.name, new)
            .map_err(|e| match e {
                crate::service::users::UserError::Store(e) => ServiceError::Store(e),
                other => {
                    ServiceError::Store(crate::store::StoreError::UnknownUser(other.to_string()))
                }
            })?;
        let (token, session) = sessions::open(&state.store, &user, now)?;
        Ok::<_, ServiceError>((token, session, user))
    })?;
    state.refresh_users();
    let renewed = Editor {
        token: token.clone(),
        session,
        user,
    };
    let html = layout(
        ctx,
        &head(ctx, t.change_password),
        html! {
            (editor_bar(ctx, &renewed))
            h1 { (t.change_password) }
            p.notice role="status" { (t.password_changed) }
            p { a href=(ctx_path(ctx, "")) { (t.events) } }
        },
    );
    Ok(Answer::Page {
        status: StatusCode::OK,
        html,
        cookies: vec![cookie(
            state,
            SESSION_COOKIE,
            &token,
            sessions::LIFETIME.num_seconds(),
        )],
    })
}

/// The dashboard's tabs: a status, or every status but the trash.
fn status_filter(value: Option<&str>) -> Option<Status> {
    value.and_then(Status::parse)
}

fn request_of(ctx: &PageCtx, editor: &Editor, now: NaiveDateTime) -> Request {
    Request {
        caller: editor.caller(),
        language: ctx.locale.language,
        explicit_language: None,
        now,
    }
}

fn dashboard(
    state: &AppState,
    ctx: &PageCtx,
    req: &ManageRequest,
    editor: &Editor,
    now: NaiveDateTime,
) -> Result<Answer, ServiceError> {
    let t = ManageTexts::of(ctx.locale.language);
    let asked = ListAsked::of(req);
    let (status, page_number, by_last_change) = (asked.status, asked.page, asked.by_last_change);
    let caller = editor.caller();
    let query = EventQuery {
        page: page_number,
        per_page: PER_PAGE,
        start_date: Some(
            chrono::NaiveDate::from_ymd_opt(1, 1, 1)
                .expect("a date")
                .into(),
        ),
        end_date: Some(
            chrono::NaiveDate::from_ymd_opt(9999, 12, 31)
                .expect("a date")
                .and_hms_opt(23, 59, 59)
                .expect("a time"),
        ),
        search: asked.search.clone(),
        status: Some(statuses(status)),
        // Callers who edit only their own events see only theirs.
        author: (!caller.has(crate::auth::Capability::EditOthersPosts)).then_some(editor.user.id),
        by_last_change,
        ..EventQuery::default()
    };
    let request = request_of(ctx, editor, now);
    let listed = match events::list(&state.store, &state.index, &request, &query, Vec::new()) {
        Ok(archive) => Some(archive),
        Err(ServiceError::PageNotFound(_)) | Err(ServiceError::Invalid(_)) => None,
        Err(ServiceError::Forbidden) => None,
        Err(e) => return Err(e),
    };
    // Editors see visitors' proposals first, whatever the list below shows.
    let proposals = if caller.has(crate::auth::Capability::EditOthersPosts)
        && page_number == 1
        && state.pages.settings.public_submissions
    {
        let query = EventQuery {
            status: Some(vec![Status::Pending.as_str().to_string()]),
            author: Some(crate::auth::capabilities::VISITOR_ID),
            search: None,
            by_last_change: true,
            ..query.clone()
        };
        // In every language: a visitor proposes in the language of the page they saw.
        let mut proposals = Vec::new();
        for language in Language::ALL {
            let request = Request {
                language,
                ..request_of(ctx, editor, now)
            };
            let listed = events::list(&state.store, &state.index, &request, &query, Vec::new())?;
            proposals.extend(listed.page.items);
        }
        proposals.sort_by_key(|e| std::cmp::Reverse(e.post.modified_utc));
        proposals.truncate(PER_PAGE);
        proposals
    } else {
        Vec::new()
    };
    let notice = notice(t, req);
    let total = listed.as_ref().map_or(0, |a| a.page.total);
    let items: Vec<Event> = listed.map(|a| a.page.items).unwrap_or_default();
    let pages = total.div_ceil(PER_PAGE).max(1);
    let base = ctx_path(ctx, "");
    let link = |n: usize| asked.link(&base, n);
    let html = layout(
        ctx,
        &head(ctx, t.events),
        html! {
            (editor_bar(ctx, editor))
            h1 { (t.events) }
            p { a.button href=(ctx_path(ctx, "events/new")) { (t.new_event) } }
            @if let Some((text, role)) = &notice {
                p.notice role=(role) { (text) }
            }
            @if !proposals.is_empty() {
                section.proposals aria-labelledby="proposals" {
                    h2 #proposals { (t.proposals) }
                    ul {
                        @for event in &proposals {
                            li {
                                a href=(ctx_path(ctx, &format!("events/{}", event.post.id)))
                                    lang=(super::locale::PageLocale::of(event.post.language).html_lang()) { (event.post.title) }
                                " — " (ctx.locale.long_date(event.start_local.date()))
                            }
                        }
                    }
                }
            }
            (filter_form(ctx, &ctx_path(ctx, ""), status, query.search.as_deref(), Some(by_last_change)))
            @if items.is_empty() {
                p { (t.no_events) }
            } @else {
                (bulk_table(
                    ctx,
                    editor,
                    &BulkList {
                        label: t.events,
                        action: ctx_path(ctx, "events"),
                        back: link(page_number),
                        columns: &[t.title, t.starts, t.status, t.last_change],
                        actions: &[("trash", t.trash), ("restore", t.restore), ("publish", t.publish)],
                    },
                    items.iter().map(|event| {
                        let title = if event.post.title.trim().is_empty() {
                            t.untitled.to_string()
                        } else {
                            event.post.title.clone()
                        };
                        let cells = vec![
                            html! { (ctx.locale.long_date(event.start_local.date())) " " (ctx.locale.time(event.start_local)) },
                            html! { (t.status(event.post.status)) },
                            changed(ctx, event.post.modified_utc),
                        ];
                        (event.post.id, ctx_path(ctx, &format!("events/{}", event.post.id)), title, cells)
                    }),
                ))
                (pager(t, t.events, page_number, pages, &link))
            }
        },
    );
    Ok(page(StatusCode::OK, html))
}

/// A list's bulk form: its name, where it is sent, the list's address to come back to, the
/// columns after the selection and the name, and the actions offered.
struct BulkList<'a> {
    label: &'a str,
    action: String,
    back: String,
    columns: &'a [&'a str],
    actions: &'a [(&'a str, &'a str)],
}

/// A list's records in a table inside its bulk form: a row per record (its ID, the address
/// of its form, its name, its other cells).
fn bulk_table(
    ctx: &PageCtx,
    editor: &Editor,
    list: &BulkList,
    rows: impl Iterator<Item = (u64, String, String, Vec<Markup>)>,
) -> Markup {
    let t = ManageTexts::of(ctx.locale.language);
    html! {
        form method="post" action=(list.action) {
            input type="hidden" name="form_token" value=(editor.session.form_token);
            input type="hidden" name="back" value=(list.back);
            div.table-scroll tabindex="0" role="region" aria-label=(list.label) {
                table.manage-events {
                    caption.vh { (list.label) }
                    thead {
                        tr {
                            th scope="col" { span.vh { (t.select_all) } }
                            @for column in list.columns {
                                th scope="col" { (column) }
                            }
                        }
                    }
                    tbody {
                        @for (id, href, name, cells) in rows {
                            @let input_id = format!("select-{id}");
                            tr {
                                td {
                                    input type="checkbox" name="id" value=(id) id=(input_id);
                                    label.vh for=(input_id) { (super::locale::fill(t.select, "title", &name)) }
                                }
                                th scope="row" { a href=(href) { (name) } }
                                @for cell in cells { td { (cell) } }
                            }
                        }
                    }
                }
            }
            p.bulk {
                label for="action" { (t.with_selected) }
                select #action name="action" {
                    @for (value, label) in list.actions {
                        option value=(value) { (label) }
                    }
                }
                button type="submit" { (t.apply) }
            }
        }
    }
}

/// When a record last changed, in UTC.
fn changed(ctx: &PageCtx, modified_utc: NaiveDateTime) -> Markup {
    html! { (ctx.locale.short_date(modified_utc.date())) " " (ctx.locale.time(modified_utc)) " UTC" }
}

/// The outcome of the last action, told by the address it led to.
fn notice(t: &ManageTexts, req: &ManageRequest) -> Option<(String, &'static str)> {
    let count = |name: &str| {
        req.query_param(name)
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(0)
    };
    if req.query_param("none").is_some() {
        return Some((t.nothing_selected.to_string(), "alert"));
    }
    let (done, refused) = (count("done"), count("refused"));
    let mut parts = Vec::new();
    if done > 0 {
        parts.push(super::locale::fill(t.done, "n", &done.to_string()));
    }
    if refused > 0 {
        parts.push(super::locale::fill(t.refused, "n", &refused.to_string()));
    }
    (!parts.is_empty()).then(|| {
        (
            parts.join(" "),
            if refused > 0 { "alert" } else { "status" },
        )
    })
}

/// Trash, restore or publish the selected events, each by the API's rules (one service call
/// per event: what one may not do to one event does not stop the others).
fn bulk(
    state: &AppState,
    ctx: &PageCtx,
    req: &ManageRequest,
    editor: &Editor,
    now: NaiveDateTime,
) -> Result<Answer, ServiceError> {
    let request = request_of(ctx, editor, now);
    let action = req.field("action").unwrap_or("").to_string();
    bulk_each(ctx, req, "", |id| match action.as_str() {
        "trash" => events::delete(&state.store, &request, &Target::Id(id), Vec::new()).map(|_| ()),
        "restore" => events::restore(&state.store, &request, id).map(|_| ()),
        "publish" => events::update(
            &state.store,
            &request,
            &Target::Id(id),
            &PostWrite {
                status: Some(Status::Publish),
                ..PostWrite::default()
            },
            &events::EventFields::default(),
            Vec::new(),
        )
        .map(|_| ()),
        _ => Err(ServiceError::Forbidden),
    })
}

/// Runs `action` on each record selected in a list's form (`rest`: the list's path under
/// `/manage/`), one service call each: what one may not do to one record does not stop the
/// others. Back to the list, which tells how many were done and refused.
fn bulk_each(
    ctx: &PageCtx,
    req: &ManageRequest,
    rest: &str,
    mut action: impl FnMut(u64) -> Result<(), ServiceError>,
) -> Result<Answer, ServiceError> {
    let list = ctx_path(ctx, rest);
    let ids: Vec<u64> = req.fields("id").filter_map(|v| v.parse().ok()).collect();
    let back = req
        .field("back")
        .filter(|b| b.starts_with(&list))
        .map_or(list, str::to_string);
    let with = |params: &str| {
        let separator = if back.contains('?') { '&' } else { '?' };
        format!("{back}{separator}{params}")
    };
    if ids.is_empty() {
        return Ok(Answer::Redirect {
            to: with("none=1"),
            cookies: Vec::new(),
        });
    }
    let (mut done, mut refused) = (0usize, 0usize);
    for id in ids {
        match action(id) {
            Ok(()) => done += 1,
            Err(ServiceError::Store(e)) => return Err(ServiceError::Store(e)),
            Err(_) => refused += 1,
        }
    }
    Ok(Answer::Redirect {
        to: with(&format!("done={done}&refused={refused}")),
        cookies: Vec::new(),
    })
}

/// What a list page was asked for: its status tab, search words and page.
struct ListAsked {
    status: Option<Status>,
    search: Option<String>,
    page: usize,
    /// Events only: newest change first.
    by_last_change: bool,
}

impl ListAsked {
    fn of(req: &ManageRequest) -> ListAsked {
        ListAsked {
            status: status_filter(req.query_param("status").as_deref()),
            search: req
                .query_param("s")
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty()),
            page: req
                .query_param("page")
                .and_then(|p| p.parse::<usize>().ok())
                .filter(|p| *p >= 1)
                .unwrap_or(1),
            by_last_change: req.query_param("order").as_deref() == Some("changed"),
        }
    }

    /// The address of page `n` of the same list at `base`.
    fn link(&self, base: &str, n: usize) -> String {
        let mut q = url::form_urlencoded::Serializer::new(String::new());
        if let Some(s) = self.status {
            q.append_pair("status", s.as_str());
        }
        if let Some(s) = &self.search {
            q.append_pair("s", s);
        }
        if self.by_last_change {
            q.append_pair("order", "changed");
        }
        if n > 1 {
            q.append_pair("page", &n.to_string());
        }
        let q = q.finish();
        if q.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{q}")
        }
    }
}

/// A form page's record: `new`, or an ID.
enum Which {
    New,
    Id(u64),
}

impl Which {
    fn of(segment: &str) -> Option<Which> {
        match segment {
            "new" => Some(Which::New),
            other => other.parse().ok().map(Which::Id),
        }
    }

    fn id(&self) -> Option<u64> {
        match self {
            Which::New => None,
            Which::Id(id) => Some(*id),
        }
    }
}

/// The record a form page may show or change, or the page that says why not (not found, or
/// not the editor's to change).
fn editable_or_page<T>(
    found: Result<T, ServiceError>,
    ctx: &PageCtx,
    editor: &Editor,
) -> Result<Result<T, Answer>, ServiceError> {
    match found {
        Ok(record) => Ok(Ok(record)),
        Err(ServiceError::Forbidden) | Err(ServiceError::CannotEditOthers) => {
            Ok(Err(refused(ctx, editor)))
        }
        Err(ServiceError::EventNotFound)
        | Err(ServiceError::NotAccessible(_))
        | Err(ServiceError::Invalid(_)) => Ok(Err(not_found(ctx))),
        Err(e) => Err(e),
    }
}

/// The kind of term a manage path's first segment names.
fn term_kind(collection: &str) -> Option<crate::model::Kind> {
    match collection {
        "categories" => Some(crate::model::Kind::Category),
        "tags" => Some(crate::model::Kind::Tag),
        _ => None,
    }
}

/// The statuses of a list's tab: one, or every status but the trash.
fn statuses(status: Option<Status>) -> Vec<String> {
    match status {
        Some(s) => vec![s.as_str().to_string()],
        None => Status::ALL
            .iter()
            .filter(|s| **s != Status::Trash)
            .map(|s| s.as_str().to_string())
            .collect(),
    }
}

/// A list's filter form: status, search and (events) the order.
fn filter_form(
    ctx: &PageCtx,
    action: &str,
    status: Option<Status>,
    search: Option<&str>,
    by_last_change: Option<bool>,
) -> Markup {
    let t = ManageTexts::of(ctx.locale.language);
    html! {
        form.manage-filter method="get" action=(action) role="search" {
            p {
                label for="status" { (t.status) }
                select #status name="status" {
                    option value="" selected[status.is_none()] { (t.every_status) }
                    @for (s, name) in &t.statuses {
                        option value=(s.as_str()) selected[status == Some(*s)] { (name) }
                    }
                }
            }
            p {
                label for="s" { (t.search) }
                input #s type="search" name="s" value=(search.unwrap_or(""));
            }
            @if let Some(by_last_change) = by_last_change {
                p {
                    label for="order" { (t.order) }
                    select #order name="order" {
                        option value="start" selected[!by_last_change] { (t.by_start) }
                        option value="changed" selected[by_last_change] { (t.by_last_change) }
                    }
                }
            }
            p { button type="submit" { (t.filter) } }
        }
    }
}

/// Previous and next links of a list of `pages` pages.
fn pager(
    t: &ManageTexts,
    label: &str,
    page_number: usize,
    pages: usize,
    link: &dyn Fn(usize) -> String,
) -> Markup {
    html! {
        @if pages > 1 {
            nav.pager aria-label=(label) {
                @if page_number > 1 {
                    a rel="prev" href=(link(page_number - 1)) { (t.previous) }
                }
                " "
                @if page_number < pages {
                    a rel="next" href=(link(page_number + 1)) { (t.next) }
                }
            }
        }
    }
}

/// What the pickers of the event form offer in `request`'s language: the first 100 venues,
/// organizers, categories and tags by name (linked ones beyond them stay linked).
fn choices(state: &AppState, request: &Request) -> Result<Choices, ServiceError> {
    use crate::model::post::{Organizer, Venue};
    use crate::service::{linked, terms};
    let linked = linked::ListQuery {
        page: 1,
        per_page: 100,
        ..linked::ListQuery::default()
    };
    let term_query = self::terms::term_query(1, 100, None);
    let term_list = |kind| {
        terms::list(
            &state.store,
            &state.index,
            kind,
            request,
            &term_query,
            Vec::new(),
        )
        .map(|p| p.items)
    };
    Ok(Choices {
        venues: linked::list::<Venue>(&state.store, &state.index, request, &linked, Vec::new())?
            .items,
        organizers: linked::list::<Organizer>(
            &state.store,
            &state.index,
            request,
            &linked,
            Vec::new(),
        )?
        .items,
        categories: term_list(crate::model::Kind::Category)?,
        tags: term_list(crate::model::Kind::Tag)?,
    })
}

/// The event form's page: a new event, or the event `id` as stored.
#[allow(clippy::too_many_arguments)]
fn form_page(
    state: &AppState,
    ctx: &PageCtx,
    editor: &Editor,
    request: &Request,
    id: Option<u64>,
    form: &EventForm,
    series: &StoredEvent,
    errors: &[(String, String)],
    saved: Option<&Event>,
) -> Result<Answer, ServiceError> {
    let t = ManageTexts::of(ctx.locale.language);
    let choices = choices(state, request)?;
    let (title, action) = match id {
        Some(id) => (t.edit_event, ctx_path(ctx, &format!("events/{id}"))),
        None => (t.new_event, ctx_path(ctx, "events/new")),
    };
    let status = if errors.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::UNPROCESSABLE_ENTITY
    };
    let html = layout(
        ctx,
        &head(ctx, title),
        html! {
            (editor_bar(ctx, editor))
            h1 { (title) }
            @if let Some(event) = saved {
                p.notice role="status" {
                    (t.saved) " "
                    a href=(super::templates::event_path(ctx, event)) { (t.view_page) }
                }
            }
            (event_form::render(ctx, event_form::FormKind::Editor, &action, &editor.session.form_token, form, &choices, series, errors))
            @if let Some(id) = id {
                p { a href=(ctx_path(ctx, &format!("events/{id}/preview"))) { (t.preview) } }
                @if series.occurrence_of.is_none() {
                    (translations(ctx, editor, id, request.language, series))
                }
            }
        },
    );
    Ok(page(status, html))
}

fn event_page(
    state: &AppState,
    ctx: &PageCtx,
    req: &ManageRequest,
    editor: &Editor,
    which: &str,
    now: NaiveDateTime,
) -> Result<Answer, ServiceError> {
    let mut request = request_of(ctx, editor, now);
    let id = match Which::of(which) {
        None => return Ok(not_found(ctx)),
        Some(Which::New) => {
            let form = EventForm::blank(now, &ctx.settings.zone.name());
            let series = StoredEvent::default();
            return form_page(
                state,
                ctx,
                editor,
                &request,
                None,
                &form,
                &series,
                &[],
                None,
            );
        }
        Some(Which::Id(id)) => id,
    };
    let event = match editable_or_page(events::editable(&state.store, &request, id), ctx, editor)? {
        Ok(event) => event,
        Err(page) => return Ok(page),
    };
    request.language = event.post.language;
    let (view, series) = stored_view(state, ctx, &request, &event, now)?;
    let form = EventForm::of_event(&event, &view);
    let saved = req.query_param("saved").is_some().then_some(&event);
    form_page(
        state,
        ctx,
        editor,
        &request,
        Some(id),
        &form,
        &series,
        &[],
        saved,
    )
}

/// The stored event as the caller sees it, and what its form shows besides its fields.
fn stored_view(
    state: &AppState,
    ctx: &PageCtx,
    request: &Request,
    event: &Event,
    now: NaiveDateTime,
) -> Result<(events::EventView, StoredEvent), ServiceError> {
    let views = events::EventViews::new(&state.store, &state.index, &[event], request.caller, now)?;
    let view = views.view(event)?;
    let stored = StoredEvent::of(ctx, event, &view);
    Ok((view, stored))
}

/// Creates (`which` = `new`) or updates the event from the form, by the API's rules; a
/// refused form is shown again with its values and errors.
fn save_event(
    state: &AppState,
    ctx: &PageCtx,
    req: &ManageRequest,
    editor: &Editor,
    which: &str,
    now: NaiveDateTime,
) -> Result<Answer, ServiceError> {
    let t = ManageTexts::of(ctx.locale.language);
    let mut request = request_of(ctx, editor, now);
    let Some(id) = Which::of(which).map(|w| w.id()) else {
        return Ok(not_found(ctx));
    };
    // A form shown again keeps what it showed of the stored event's series.
    let mut series = StoredEvent::default();
    if let Some(id) = id {
        match editable_or_page(events::editable(&state.store, &request, id), ctx, editor)? {
            Ok(event) => {
                request.language = event.post.language;
                series = stored_view(state, ctx, &request, &event, now)?.1;
            }
            Err(page) => return Ok(page),
        }
    }
    let form = EventForm::of_fields(&req.form);
    let (params, write, fields) = match form.checked(id.is_none(), t) {
        Ok(checked) => checked,
        Err(errors) => {
            return form_page(
                state, ctx, editor, &request, id, &form, &series, &errors, None,
            )
        }
    };
    let invalid = params.invalid.clone();
    let written = match id {
        None => events::create(&state.store, &request, &write, &fields, invalid),
        Some(id) => events::update(
            &state.store,
            &request,
            &Target::Id(id),
            &write,
            &fields,
            invalid,
        ),
    };
    after_write(
        written.map(|event| format!("events/{}", event.post.id)),
        ctx,
        editor,
        |errors| {
            form_page(
                state, ctx, editor, &request, id, &form, &series, &errors, None,
            )
        },
    )
}

/// The event's versions in the other languages: a link to each, or a button that makes one.
fn translations(
    ctx: &PageCtx,
    editor: &Editor,
    id: u64,
    language: Language,
    stored: &StoredEvent,
) -> Markup {
    let t = ManageTexts::of(ctx.locale.language);
    html! {
        section.translations aria-labelledby="translations" {
            h2 #translations { (t.translations) }
            ul {
                @for other in Language::ALL.into_iter().filter(|l| *l != language) {
                    @let name = super::locale::PageLocale::of(other).texts.lang_name;
                    li {
                        @if let Some((_, member)) = stored.translations.iter().find(|(l, _)| *l == other) {
                            a href=(ctx_path(ctx, &format!("events/{member}"))) {
                                (super::locale::fill(t.edit_translation, "language", name))
                            }
                        } @else {
                            form method="post" action=(ctx_path(ctx, &format!("events/{id}/translate"))) {
                                input type="hidden" name="form_token" value=(editor.session.form_token);
                                input type="hidden" name="language" value=(other.code());
                                button type="submit" { (super::locale::fill(t.translate_into, "language", name)) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// "Translate into": makes the event's copy in the language asked for (by the API's rules)
/// and opens its form.
fn translate(
    state: &AppState,
    ctx: &PageCtx,
    req: &ManageRequest,
    editor: &Editor,
    which: &str,
    now: NaiveDateTime,
) -> Result<Answer, ServiceError> {
    let (Some(Which::Id(id)), Some(language)) = (
        Which::of(which),
        req.field("language").and_then(Language::from_code),
    ) else {
        return Ok(not_found(ctx));
    };
    let request = request_of(ctx, editor, now);
    match events::translate(&state.store, &request, id, language) {
        Ok(copy) => Ok(Answer::Redirect {
            to: ctx_path(ctx, &format!("events/{}?saved=1", copy.post.id)),
            cookies: Vec::new(),
        }),
        Err(ServiceError::EventNotFound) => Ok(not_found(ctx)),
        Err(ServiceError::Forbidden) => Ok(refused(ctx, editor)),
        Err(e) => Err(e),
    }
}

/// The event's public page as it will be once published, shown to the editor who may edit it.
fn preview(
    state: &AppState,
    ctx: &PageCtx,
    editor: &Editor,
    which: &str,
    now: NaiveDateTime,
) -> Result<Answer, ServiceError> {
    let t = ManageTexts::of(ctx.locale.language);
    let Some(Which::Id(id)) = Which::of(which) else {
        return Ok(not_found(ctx));
    };
    let request = request_of(ctx, editor, now);
    let event = match editable_or_page(events::editable(&state.store, &request, id), ctx, editor)? {
        Ok(event) => event,
        Err(page) => return Ok(page),
    };
    let views =
        events::EventViews::new(&state.store, &state.index, &[&event], request.caller, now)?;
    let view = views.view(&event)?;
    let shown = super::event_page_preview(state, ctx, &event, &view)?;
    let html = layout(
        ctx,
        &head(ctx, t.preview),
        html! {
            (editor_bar(ctx, editor))
            p.notice role="note" {
                (t.preview_notice) " "
                a href=(ctx_path(ctx, &format!("events/{id}"))) { (t.back_to_form) }
            }
            (shown)
        },
    );
    Ok(page(StatusCode::OK, html))
}

/// What a form's write leads to: the record's form, saying it was saved (`written` is its
/// path under `/manage/`); the form again with the API's refusals by field; or the page that
/// says the record is not the editor's to change.
fn after_write(
    written: Result<String, ServiceError>,
    ctx: &PageCtx,
    editor: &Editor,
    again: impl FnOnce(Vec<(String, String)>) -> Result<Answer, ServiceError>,
) -> Result<Answer, ServiceError> {
    match written {
        Ok(path) => Ok(Answer::Redirect {
            to: ctx_path(ctx, &format!("{path}?saved=1")),
            cookies: Vec::new(),
        }),
        Err(ServiceError::Invalid(refusals)) => again(event_form::errors(
            refusals,
            ManageTexts::of(ctx.locale.language),
        )),
        Err(ServiceError::Forbidden) | Err(ServiceError::CannotEditOthers) => {
            Ok(refused(ctx, editor))
        }
        Err(e) => Err(e),
    }
}

fn not_found(ctx: &PageCtx) -> Answer {
    page(
        StatusCode::NOT_FOUND,
        layout(
            ctx,
            &head(ctx, ManageTexts::of(ctx.locale.language).manage),
            super::templates::not_found(ctx),
        ),
    )
}

fn refused(ctx: &PageCtx, editor: &Editor) -> Answer {
    let t = ManageTexts::of(ctx.locale.language);
    page(
        StatusCode::FORBIDDEN,
        layout(
            ctx,
            &head(ctx, t.edit_event),
            html! {
                (editor_bar(ctx, editor))
                h1 { (t.edit_event) }
                p.error role="alert" { (t.not_yours) }
                p { a href=(ctx_path(ctx, "")) { (t.events) } }
            },
        ),
    )
}
