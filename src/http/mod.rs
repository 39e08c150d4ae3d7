//! The HTTP layer: warp is used as the server and for request extraction only; routing,
//! parameter handling and the processing order are almanac's own (docs/architecture.md),
//! implemented by [`process`] over the [`routes::RouteTable`].

pub(crate) mod answer_cache;
pub mod body;
pub(crate) mod connections;
pub(crate) mod error;
pub(crate) mod ical;
pub(crate) mod links;
pub(crate) mod lists;
pub(crate) mod meta;
pub(crate) mod openapi;
pub mod pages;
pub mod params;
mod parse_errors;
pub(crate) mod render;
pub(crate) mod representation_cache;
pub(crate) mod resources;
pub(crate) mod response;
pub(crate) mod routes;

use crate::auth::{Authenticator, Caller};
use crate::model::Language;
use crate::store::Store;
use error::{ApiError, MAX_TARGET_BYTES};
use futures_util::Stream;
use links::Links;
use params::Params;
pub(crate) use response::ApiResponse;
use response::Finish;
use routes::{PathValues, RouteTable, Target};
use serde_json::json;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use warp::http::header::{HeaderMap, HeaderName, HeaderValue};
use warp::http::Method;
use warp::reply::Response;
use warp::Filter;

use crate::values::form::RawParams;

/// Everything a handler may use.
pub struct AppState {
    pub store: Arc<Store>,
    pub index: Arc<crate::index::SearchIndex>,
    pub auth: Authenticator,
    /// `P` of the contract: absolute, no trailing slash.
    pub public_url: Arc<str>,
    pub routes: RouteTable,
    /// Serialized list members of the current store version and second.
    pub representations: representation_cache::RepresentationCache,
    /// When the store last changed, for the `Last-Modified` of calendar feeds.
    pub changes: ical::ChangeClock,
    /// Whole calendar feeds of the current store version.
    pub feeds: answer_cache::AnswerCache,
    /// Whole JSON answers of list and single-record reads of the current store version and
    /// second.
    pub responses: answer_cache::AnswerCache,
    /// How long a client may take to send a request body (`ConnectionLimits`).
    pub body_read_timeout: Duration,
    /// The store's users generation the authenticator's users are from.
    users_generation: std::sync::atomic::AtomicU64,
    /// Slots for read handlers running at once ([`READS_PER_CORE`] per core).
    reads: tokio::sync::Semaphore,
    /// The public pages' settings and assets.
    pub(crate) pages: pages::Pages,
}

/// Read handlers (`GET`, `HEAD`) running at once, per core. Unbounded, every read in progress
/// held a thread of its own (over 500 under overload) and `/healthz` waited hundreds of
/// milliseconds among them; with 8 per core lists keep their throughput at 100,000 events and
/// `/healthz` answers in a few milliseconds (docs/performance.md, "Overload").
const READS_PER_CORE: usize = 8;

impl AppState {
    pub fn new(
        store: Arc<Store>,
        index: Arc<crate::index::SearchIndex>,
        auth: Authenticator,
        public_url: &str,
        body_read_timeout: Duration,
    ) -> AppState {
        let version = store.version();
        AppState {
            store,
            index,
            auth,
            public_url: public_url.into(),
            routes: RouteTable::new(route_table()),
            representations: Default::default(),
            changes: ical::ChangeClock::new(version),
            feeds: answer_cache::AnswerCache::new(crate::config::DEFAULT_FEED_CACHE_MB << 20),
            responses: answer_cache::AnswerCache::new(
                crate::config::DEFAULT_RESPONSE_CACHE_MB << 20,
            ),
            body_read_timeout,
            users_generation: std::sync::atomic::AtomicU64::new(0),
            reads: tokio::sync::Semaphore::new(
                READS_PER_CORE * std::thread::available_parallelism().map_or(1, |n| n.get()),
            ),
            pages: pages::Pages::new(pages::Settings::default(), public_url),
        }
    }

    /// Shows the public pages with these settings instead of the defaults.
    pub fn with_pages(mut self, settings: pages::Settings) -> AppState {
        self.pages = pages::Pages::new(settings, &self.public_url);
        self
    }

    /// Bounds the caches of whole answers as configured instead of the defaults.
    pub(crate) fn with_caches(mut self, sizes: crate::config::CacheSizes) -> AppState {
        self.feeds = answer_cache::AnswerCache::new(sizes.feeds);
        self.responses = answer_cache::AnswerCache::new(sizes.responses);
        self
    }

    /// Keeps `bytes` of whole JSON read answers instead of the default (0: none).
    pub fn with_response_cache(mut self, bytes: usize) -> AppState {
        self.responses = answer_cache::AnswerCache::new(bytes);
        self
    }

    /// Reloads the authenticator's users when log entries from other nodes changed them.
    fn refresh_users(&self) {
        use std::sync::atomic::Ordering;
        let current = self.store.users_generation();
        if self.users_generation.load(Ordering::Relaxed) == current
            || self.users_generation.swap(current, Ordering::SeqCst) == current
        {
            return;
        }
        match crate::service::users::list(&self.store) {
            Ok(users) => self.auth.replace_users(users),
            Err(e) => {
                tracing::error!(error = %e, "reloading users failed");
                self.users_generation.store(0, Ordering::SeqCst);
            }
        }
    }
}

/// Every route of the namespace, in the order of the namespace index.
fn route_table() -> Vec<routes::Route> {
    use crate::model::post::{Organizer, Venue};
    use crate::model::Kind;
    let mut all = meta::routes();
    all.extend(resources::feeds::routes());
    all.extend(resources::events::routes());
    all.extend(resources::linked::routes::<Venue>());
    all.extend(resources::linked::routes::<Organizer>());
    all.extend(resources::terms::routes(Kind::Category));
    all.extend(resources::terms::routes(Kind::Tag));
    all.extend(resources::changes::routes());
    all.extend(resources::webhooks::routes());
    all
}

/// One request inside the namespace, after validation (step 10 on).
pub struct Context {
    pub caller: Caller,
    /// The effective method (after override).
    pub method: Method,
    pub links: Links,
    /// The effective language.
    pub language: Language,
    pub params: Params,
    pub path: PathValues,
    /// The index of the matched route in the table.
    pub route: usize,
    /// What the request's event `password` did (told by the handler).
    pub event_password: Arc<crate::service::events::PasswordTries>,
}

/// What a listener serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listener {
    /// The API, `/healthz` and `/metrics` for administrators.
    Api,
    /// `GET /metrics` without credentials, for a scraper on a private network
    /// (`serve --metrics-listen`); everything else is 404.
    Metrics,
}

/// The warp filter serving every request of one connection of `listener`, from `client`.
pub fn filter(
    state: Arc<AppState>,
    client: IpAddr,
    listener: Listener,
) -> impl Filter<Extract = (Response,), Error = warp::Rejection> + Clone {
    let query = warp::query::raw().or(warp::any().map(String::new)).unify();
    warp::any()
        .map(move || state.clone())
        .and(warp::method())
        .and(warp::path::full())
        .and(query)
        .and(warp::header::headers_cloned())
        .and(warp::body::stream())
        .then(
            move |state: Arc<AppState>,
                  method: Method,
                  path: warp::path::FullPath,
                  query: String,
                  headers: HeaderMap,
                  body| async move {
                let started = Instant::now();
                let target = state.routes.resolve(path.as_str());
                if listener == Listener::Metrics {
                    let response = metrics_listener(&state, &method, &target, &headers);
                    tracing::debug!(
                        method = %method,
                        path = path.as_str(),
                        status = response.status().as_u16(),
                        "metrics request"
                    );
                    return response;
                }
                let _in_flight = crate::metrics::InFlight::enter();
                let route = state.routes.label(&target).clone();
                let response = process(
                    &state,
                    client,
                    method.clone(),
                    path.as_str(),
                    target,
                    &query,
                    &headers,
                    body,
                )
                .await;
                let elapsed = started.elapsed();
                let status = response.status().as_u16();
                crate::metrics::request(&route, method.as_str(), status, elapsed.as_secs_f64());
                // Only the path is logged: query strings may carry event passwords.
                tracing::info!(
                    method = %method,
                    path = path.as_str(),
                    status,
                    micros = elapsed.as_micros() as u64,
                    "request"
                );
                response
            },
        )
}

/// The request pipeline (docs/architecture.md), and the finishing of the answer; `target` is where `path`
/// leads.
#[allow(clippy::too_many_arguments)]
async fn process<S, B>(
    state: &Arc<AppState>,
    client: IpAddr,
    method: Method,
    path: &str,
    target: Target,
    query: &str,
    headers: &HeaderMap,
    body: S,
) -> Response
where
    S: Stream<Item = Result<B, warp::Error>>,
    B: bytes::Buf,
{
    let segment = match &target {
        Target::RestRoot { segment } | Target::Namespace { segment, .. } => *segment,
        _ => path
            .trim_start_matches('/')
            .split('/')
            .next()
            .and_then(Language::from_segment),
    };
    let links = Links::new(state.public_url.clone(), segment);
    let mut finish = Finish {
        method: &method,
        request_headers: headers,
        caller: Caller::Anonymous,
        links: (!matches!(target, Target::Healthz | Target::Metrics)).then_some(&links),
        allow: None,
    };

    // Step 1: the request target's length.
    let target_len = path.len() + if query.is_empty() { 0 } else { query.len() + 1 };
    if target_len > MAX_TARGET_BYTES {
        return finish.error(&ApiError::uri_too_long());
    }
    // The public pages and their assets: read as an anonymous visitor, whatever credentials
    // the browser sends.
    match &target {
        Target::Asset(name) => return pages::asset(state, &finish, name),
        Target::Page(segments) => {
            let password = if method == Method::POST {
                let limit = state.body_read_timeout;
                match tokio::time::timeout(limit, body::read_limited(headers, body)).await {
                    Ok(Ok(bytes)) => url::form_urlencoded::parse(&bytes)
                        .find(|(name, _)| name == "password")
                        .map(|(_, value)| value.into_owned()),
                    Ok(Err(e)) => return finish.error(&e),
                    Err(_elapsed) => return finish.error(&ApiError::request_timeout(limit)),
                }
            } else {
                None
            };
            let request = pages::PageRequest::new(state, &method, segments, query, password);
            if let Some(response) = request.cached(state, &finish) {
                return response;
            }
            let _slot = state
                .reads
                .acquire()
                .await
                .expect("the read semaphore is never closed");
            let _reading = crate::priority::reading();
            return tokio::task::block_in_place(|| request.build(state, &finish, client));
        }
        Target::Manage(language, _) | Target::Propose(language) => {
            if !matches!(method, Method::GET | Method::HEAD | Method::POST) {
                return finish.error(&ApiError::no_route());
            }
            let form = if method == Method::POST {
                let limit = state.body_read_timeout;
                match tokio::time::timeout(limit, body::read_limited(headers, body)).await {
                    Ok(Ok(bytes)) => url::form_urlencoded::parse(&bytes)
                        .map(|(n, v)| (n.into_owned(), v.into_owned()))
                        .collect(),
                    Ok(Err(e)) => return finish.error(&e),
                    Err(_elapsed) => return finish.error(&ApiError::request_timeout(limit)),
                }
            } else {
                Vec::new()
            };
            let request = pages::manage::ManageRequest {
                method: &method,
                rest: match &target {
                    Target::Manage(_, rest) => rest.as_slice(),
                    _ => &[],
                },
                language: language.unwrap_or(Language::En),
                query,
                form,
                headers,
                client,
            };
            return match &target {
                Target::Propose(_) => pages::manage::propose::serve(state, &finish, request),
                _ => pages::manage::serve(state, &finish, request).await,
            };
        }
        Target::RestRoot { .. } if method == Method::GET && accepts_html(headers) => {
            // Browsers go to the calendar; API clients (which ask for JSON) get the index.
            let mut response = Response::new(Vec::new().into());
            *response.status_mut() = warp::http::StatusCode::SEE_OTHER;
            let to = format!("{}/events/", links.site());
            if let Ok(v) = HeaderValue::from_str(&to) {
                response
                    .headers_mut()
                    .insert(warp::http::header::LOCATION, v);
            }
            response
                .headers_mut()
                .insert(warp::http::header::VARY, HeaderValue::from_static("Accept"));
            return response;
        }
        _ => {}
    }
    // Step 2: credentials (not on /healthz).
    if target != Target::Healthz {
        state.refresh_users();
        let authorization = headers.get(warp::http::header::AUTHORIZATION);
        match state
            .auth
            .authenticate(authorization.map(|v| v.as_bytes()), client)
            .await
        {
            Ok(caller) => finish.caller = caller,
            Err(e) => return finish.error(&ApiError::from(e)),
        }
    }
    // Read-your-writes across nodes and connections: a request that carries the position of
    // a write it must see (`X-Cal-Min-Seq`, from that write's `X-Cal-Seq`) waits for it.
    if let Some(value) = headers.get(MIN_SEQ_HEADER) {
        if let Err(e) = wait_for_position(&state.store, value).await {
            return finish.error(&e);
        }
    }
    // Step 3: method override.
    let query_params = RawParams::from_form(query.as_bytes());
    let method = effective_method(&method, &query_params, headers);
    finish.method = &method;

    // Steps 4 and 5: route, method, OPTIONS.
    let (route_index, values) = match target {
        Target::Healthz => {
            return match method {
                Method::GET | Method::HEAD => {
                    let position = state.store.position();
                    let status = if state.store.diverged() {
                        "diverged"
                    } else {
                        "ok"
                    };
                    let mut health = json!({
                        "status": status,
                        "version": crate::VERSION,
                        "position": position,
                    });
                    if let Some(head) = state.store.log_head() {
                        health["log_head"] = json!(head);
                        health["lag"] = json!(head.saturating_sub(position));
                    }
                    finish.success(ApiResponse::ok(health), Some("no-store"))
                }
                _ => finish.error(&ApiError::no_route()),
            };
        }
        Target::Metrics => {
            return match method {
                Method::GET | Method::HEAD => {
                    if finish.caller.administers() {
                        finish.success(metrics_answer(state), Some("no-store"))
                    } else {
                        finish.error(&ApiError::forbidden(finish.caller))
                    }
                }
                _ => finish.error(&ApiError::no_route()),
            };
        }
        // Answered above.
        Target::Unknown
        | Target::Page(_)
        | Target::Asset(_)
        | Target::Manage(..)
        | Target::Propose(_) => return finish.error(&ApiError::no_route()),
        Target::RestRoot { .. } => {
            finish.allow = Some("GET".into());
            return match method {
                Method::GET | Method::HEAD => {
                    let mut response = finish.success(meta::rest_root(state, &links), None);
                    response.headers_mut().insert(
                        warp::http::header::VARY,
                        HeaderValue::from_static("Origin, Authorization, Accept-Encoding, Accept"),
                    );
                    response
                }
                Method::OPTIONS => {
                    finish.success(ApiResponse::ok(meta::rest_root_entry(&links)), None)
                }
                _ => finish.error(&ApiError::no_route()),
            };
        }
        Target::Namespace { route, values, .. } => (route, values),
    };
    let route = &state.routes.routes[route_index];
    let Some(endpoint) = route
        .endpoint_for(&method)
        .or_else(|| (method == Method::OPTIONS).then(|| &route.endpoints[0]))
    else {
        // The method-mismatch 404 lists every method of the route.
        finish.allow = Some(allow_header(&route.methods()));
        return finish.error(&ApiError::no_route());
    };
    let guessed_language = query_params
        .scalar("translation_language")
        .and_then(|v| v.ok())
        .and_then(|v| v.as_str())
        .and_then(Language::from_code)
        .or(segment)
        .unwrap_or(Language::En);
    finish.allow = Some(allow_header(&permitted_methods(
        state,
        route,
        finish.caller,
        &values,
        guessed_language,
    )));
    if method == Method::OPTIONS {
        return finish.success(ApiResponse::ok(meta::route_entry(route, &links)), None);
    }

    // Step 6: the body (read for the size limit even when it is ignored). A client that
    // trickles it would otherwise hold its connection for as long as it likes.
    let limit = state.body_read_timeout;
    let bytes = match tokio::time::timeout(limit, body::read_limited(headers, body)).await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(e)) => return finish.error(&e),
        Err(_elapsed) => return finish.error(&ApiError::request_timeout(limit)),
    };
    // Step 7: parameters (body wins over query).
    let mut raw = query_params;
    if matches!(
        method,
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    ) {
        match body::parameters(headers, &bytes) {
            Ok(body_params) => raw.overlay(body_params),
            Err(e) => return finish.error(&e),
        }
    }
    // Steps 8 and 9: required and valid.
    let params = match params::validate(&endpoint.params, &raw) {
        Ok(p) => p,
        Err(e) => return finish.error(&e),
    };
    // Handlers that check references report them with the syntax errors; the others end
    // validation here.
    if !endpoint.checks_references {
        if let Err(e) = params.check() {
            return finish.error(&e);
        }
    }
    let language = params
        .translation_language()
        .or(segment)
        .unwrap_or(Language::En);
    // An event password on a read is a guess, throttled per address like logins: counted when
    // the handler tells it missed (it opened no event and was compared with one).
    let tries_event_password = matches!(method, Method::GET | Method::HEAD)
        && params.str("password").is_some_and(|p| !p.is_empty());
    if tries_event_password {
        if let Err(e) = state.auth.admit_event_password(client) {
            return finish.error(&ApiError::from(e));
        }
    }
    let context = Context {
        caller: finish.caller,
        method: method.clone(),
        links: links.clone(),
        language,
        params,
        path: values,
        route: route_index,
        event_password: Arc::default(),
    };
    // Whole answers of lists and single records come from the response cache when this version of the store and
    // this second already built them (read before the handler reads anything).
    let cached = cache_key(state, endpoint, &context).map(|key| (key, AnswerStamp::now(state)));
    if let Some(found) = cached
        .as_ref()
        .and_then(|(key, stamp)| cached_answer(state, key, *stamp))
    {
        return finish.success(found.answer(), None);
    }
    let tries = context.event_password.clone();
    // Steps 10–12: the handler, off the async workers (store and index are synchronous).
    let handler = endpoint.handler;
    let single_read = endpoint.class == routes::OperationClass::GetSingle
        && matches!(context.method, Method::GET | Method::HEAD);
    let (outcome, written_at) = if single_read {
        // One record by ID or slug: a store read and a representation mostly cached, a few
        // microseconds; handing it to a blocking thread cost more than the read itself
        // (docs/performance.md, "Overload").
        (handler(state, &context), None)
    } else {
        run_blocking(state, context, handler).await
    };
    if tries_event_password && tries.failed() {
        state.auth.event_password_failed(client);
    }
    let writes = matches!(
        method,
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    );
    match outcome {
        Ok(answer) => {
            let answer = match cached {
                Some((key, stamp)) if answer.status == warp::http::StatusCode::OK => {
                    keep_answer(state, key, stamp, answer)
                }
                _ => answer,
            };
            let mut response = finish.success(answer, None);
            if writes {
                // A write that changed nothing (an idempotent update) is at the current position.
                let position = written_at.unwrap_or_else(|| state.store.position());
                response
                    .headers_mut()
                    .insert(HeaderName::from_static(SEQ_HEADER), position.into());
            }
            response
        }
        Err(e) => finish.error(&e),
    }
}

/// The key of a request whose whole answer may come from (and go to) the response cache:
/// a read of a JSON list or single record, by its path values, validated parameters, caller
/// (anonymous callers share entries, users have their own: what they see depends on role and
/// authorship) and language segment. `password` and `context`, which make an answer the
/// caller's own (an unlocked event, the edit or export form), bypass it, and so does a request
/// with an invalid parameter (answered with an error).
fn cache_key(
    state: &AppState,
    endpoint: &routes::Endpoint,
    ctx: &Context,
) -> Option<answer_cache::AnswerKey> {
    let cacheable = state.responses.keeps_anything()
        && matches!(ctx.method, Method::GET | Method::HEAD)
        && endpoint.caches_whole_answer()
        && !ctx.params.sent("password")
        && !ctx.params.sent("context");
    if !cacheable {
        return None;
    }
    answer_cache::AnswerKey::of(ctx)
}

/// The state a whole read answer is built from: the store's version (read first: what is
/// derived afterwards is at least that current) and the clock's second.
#[derive(Clone, Copy)]
struct AnswerStamp {
    version: u64,
    second: i64,
}

impl AnswerStamp {
    fn now(state: &AppState) -> AnswerStamp {
        let version = state.store.version();
        AnswerStamp {
            version,
            second: chrono::Utc::now().timestamp(),
        }
    }
}

/// The answer the response cache holds for `key` at `stamp`, counted as a hit or a miss.
fn cached_answer(
    state: &AppState,
    key: &answer_cache::AnswerKey,
    stamp: AnswerStamp,
) -> Option<answer_cache::CachedAnswer> {
    let found = state.responses.get(key, stamp.version, stamp.second);
    crate::metrics::cache(
        crate::metrics::Cache::Responses,
        u64::from(found.is_some()),
        u64::from(found.is_none()),
    );
    found
}

/// Keeps a read's `200` answer, built at `stamp`, for the rest of its second, and returns it
/// with its shared body. An answer whose building ran into the next second may hold either
/// second's clock, and is not kept.
fn keep_answer(
    state: &AppState,
    key: answer_cache::AnswerKey,
    stamp: AnswerStamp,
    answer: ApiResponse,
) -> ApiResponse {
    let answer = answer_cache::CachedAnswer::from_answer(answer);
    let second = stamp.second;
    if chrono::Utc::now().timestamp() == second {
        state
            .responses
            .put(key, stamp.version, second..second + 1, answer.clone());
    }
    answer.answer()
}

/// The Prometheus text exposition of every metric, with the index's position and size read
/// now (docs/operations.md, "Metrics").
fn metrics_answer(state: &AppState) -> ApiResponse {
    let index = tokio::task::block_in_place(|| {
        // The index's position first: a write committed in between counts as lag.
        let applied = state.index.applied_position();
        let outbox_head = state.store.outbox_head().unwrap_or_else(|e| {
            tracing::warn!(error = %e, "reading the outbox head for /metrics failed");
            applied
        });
        crate::metrics::IndexState {
            applied,
            outbox_head,
            documents: state.index.documents(),
        }
    });
    let text = crate::metrics::render(index);
    ApiResponse::ok_body(response::Body::Shared(Arc::new(response::SharedBody::new(
        crate::metrics::CONTENT_TYPE,
        text.into_bytes(),
    ))))
}

/// A request on the metrics listener: `GET /metrics` without credentials, 404 otherwise.
fn metrics_listener(
    state: &AppState,
    method: &Method,
    target: &Target,
    headers: &HeaderMap,
) -> Response {
    let finish = Finish {
        method,
        request_headers: headers,
        caller: Caller::Anonymous,
        links: None,
        allow: None,
    };
    match (target, method) {
        (Target::Metrics, &Method::GET | &Method::HEAD) => {
            finish.success(metrics_answer(state), Some("no-store"))
        }
        _ => finish.error(&ApiError::no_route()),
    }
}

/// The position of an acknowledged write, on every successful write's answer.
const SEQ_HEADER: &str = "x-cal-seq";
/// The position a read must wait for.
const MIN_SEQ_HEADER: &str = "x-cal-min-seq";
/// How long a read waits for the position it asks for.
const MIN_SEQ_WAIT: Duration = Duration::from_secs(5);

/// Waits until the store's position reaches the one `value` names, at most [`MIN_SEQ_WAIT`].
async fn wait_for_position(store: &Store, value: &HeaderValue) -> Result<(), ApiError> {
    let wanted: u64 = value
        .to_str()
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(ApiError::invalid_min_seq)?;
    if reach_position(store, wanted).await {
        Ok(())
    } else {
        Err(ApiError::position_not_reached(store.position()))
    }
}

/// Waits (up to [`MIN_SEQ_WAIT`]) until this node has applied the write at `wanted`; whether
/// it has.
pub(crate) async fn reach_position(store: &Store, wanted: u64) -> bool {
    tokio::time::timeout(MIN_SEQ_WAIT, store.reached(wanted))
        .await
        .is_ok()
}

/// Runs a read handler under `block_in_place`: the async worker's other connections move to
/// another thread while it runs. Running handlers on the async workers themselves was measured
/// against this under overload (docs/performance.md, "Overload"): no connection was lost either
/// way, but it served 14–23 % fewer lists per second at 100,000 events on a busy machine (a
/// thread per core gets less of the cores than many) and `/healthz` waited behind the lists.
/// Writes run on the writers' threads (see [`writers`]).
async fn run_blocking(
    state: &Arc<AppState>,
    context: Context,
    handler: routes::Handler,
) -> (Result<ApiResponse, ApiError>, Option<u64>) {
    // The position of the request's write is read on the thread that made it.
    let run = move |state: &AppState, context: Context| {
        Store::take_written_position();
        let outcome = handler(state, &context);
        (outcome, Store::take_written_position())
    };
    if !matches!(context.method, Method::GET | Method::HEAD) {
        // Writes are not bounded: they spend their time waiting for the index, not on a core.
        let state = state.clone();
        let write = move || crate::priority::write_beside_reads(|| run(&state, context));
        return match writers().spawn_blocking(write).await {
            Ok(done) => done,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        };
    }
    // A read waits for its slot without holding a thread.
    let _slot = state
        .reads
        .acquire()
        .await
        .expect("the read semaphore is never closed");
    let _reading = crate::priority::reading();
    tokio::task::block_in_place(|| run(state, context))
}

/// The threads of write handlers: a pool that grows as writes wait (each one waits for the
/// index to hold it, so 64 concurrent writers share index work), whose threads run at a lower
/// priority than the async workers (see `crate::priority`). Never dropped: a runtime may not be
/// dropped from async code.
fn writers() -> &'static tokio::runtime::Runtime {
    static WRITERS: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    WRITERS.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .thread_name("writer")
            .on_thread_start(crate::priority::yield_to_readers)
            .build()
            .expect("building the writers' thread pool")
    })
}

/// Only a real POST may be overridden, by `_method` (query) first, then the header.
fn effective_method(real: &Method, query: &RawParams, headers: &HeaderMap) -> Method {
    if real != Method::POST {
        return real.clone();
    }
    let from_query = query
        .scalar("_method")
        .and_then(|v| v.ok())
        .and_then(|v| v.as_str().map(str::to_string));
    let from_header = || {
        headers
            .get(HeaderName::from_static("x-http-method-override"))
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    match from_query.or_else(from_header) {
        Some(word) => Method::from_bytes(word.trim().to_ascii_uppercase().as_bytes())
            .unwrap_or_else(|_| Method::from_bytes(b"INVALID").expect("a valid token")),
        None => real.clone(),
    }
}

/// The route's methods whose permission check passes for this caller and this request's
/// target: record-level for single post-kind routes whose record exists, kind-wide
/// otherwise.
fn permitted_methods(
    state: &AppState,
    route: &routes::Route,
    caller: Caller,
    path: &PathValues,
    language: Language,
) -> Vec<Method> {
    use crate::service::posts;
    let now = chrono::Utc::now().naive_utc();
    // A record the caller may not read is answered as if it did not exist, and so is its
    // `Allow` header: the methods must not tell which slugs or IDs exist. It is read once for
    // the route's edit and delete endpoints (they name the same kind), and not at all for
    // anonymous callers, who may do neither whatever the record: a cached read's answer is
    // then finished without touching the store.
    let read = std::cell::OnceCell::new();
    let target = |kind| {
        read.get_or_init(|| {
            posts::readable_target(
                &state.store,
                kind,
                path.id,
                path.slug.as_deref(),
                language,
                caller,
                now,
            )
        })
        .as_ref()
    };
    route
        .endpoints
        .iter()
        .filter(|e| match e.permission {
            routes::Permission::Everyone => true,
            routes::Permission::CreatePost => caller.has(crate::auth::Capability::EditPosts),
            routes::Permission::EditPost(_) | routes::Permission::DeletePost(_)
                if !caller.is_authenticated() =>
            {
                false
            }
            routes::Permission::EditPost(kind) => match target(kind) {
                Some(meta) => {
                    crate::auth::capabilities::can_edit(caller, &posts::access(meta, now))
                }
                None => caller.has(crate::auth::Capability::EditPosts),
            },
            routes::Permission::DeletePost(kind) => match target(kind) {
                Some(meta) => {
                    crate::auth::capabilities::can_delete(caller, &posts::access(meta, now))
                }
                None => caller.has(crate::auth::Capability::DeletePosts),
            },
            routes::Permission::ManageTerms(kind) => caller.may_manage_terms(kind),
            routes::Permission::Administrator => caller.administers(),
        })
        .flat_map(|e| e.group.methods().iter().cloned())
        .collect()
}

/// Whether a request's `Accept` names HTML (what browsers send for a page).
fn accepts_html(headers: &HeaderMap) -> bool {
    headers
        .get_all(warp::http::header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|item| {
            let mut parts = item.split(';');
            let media = parts.next().unwrap_or("").trim();
            let refused = parts.any(|p| matches!(p.trim(), "q=0" | "q=0.0" | "q=0.00" | "q=0.000"));
            (media.eq_ignore_ascii_case("text/html")
                || media.eq_ignore_ascii_case("application/xhtml+xml"))
                && !refused
        })
}

fn allow_header(methods: &[Method]) -> String {
    methods
        .iter()
        .map(Method::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}
