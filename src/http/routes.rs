//! The route table: one entry per path of the namespace, each with its endpoints (handler
//! groups). The same table drives dispatch, the namespace index, OPTIONS, the
//! `Allow` header and `/doc`: a route cannot exist undocumented.

use crate::http::error::ApiError;
use crate::http::params::ParamSpec;
use crate::http::{ApiResponse, AppState, Context};
use crate::model::{Kind, Language};
use std::sync::Arc;
use warp::http::Method;

/// One segment of a route path below the namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seg {
    Lit(&'static str),
    /// `{id}`: one or more ASCII digits.
    Id,
    /// `{slug}`: any non-empty segment.
    Slug,
    /// `{id}` followed by a file extension such as `.ics` (another representation of the
    /// record).
    IdWith(&'static str),
    /// `{slug}` followed by a file extension (slugs hold no dots, so no slug is mistaken for
    /// one).
    SlugWith(&'static str),
}

/// The WordPress handler groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    Read,
    Create,
    Edit,
    Delete,
}

impl Group {
    pub(crate) fn methods(self) -> &'static [Method] {
        const READ: &[Method] = &[Method::GET];
        const CREATE: &[Method] = &[Method::POST];
        const EDIT: &[Method] = &[Method::POST, Method::PUT, Method::PATCH];
        const DELETE: &[Method] = &[Method::DELETE];
        match self {
            Group::Read => READ,
            Group::Create => CREATE,
            Group::Edit => EDIT,
            Group::Delete => DELETE,
        }
    }
}

/// Which statuses an operation documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperationClass {
    Meta,
    List,
    /// An event, venue or organizer list (or the events feed): a list that also refuses a
    /// `context=export` the caller may not use (403 to authenticated callers).
    PostList,
    GetSingle,
    Create,
    Update,
    DeletePost,
    DeleteTerm,
    /// Administrators' maintenance (extension).
    Admin,
    /// The change feed (extension): a list by token, whose expired tokens answer 410.
    Changes,
}

impl OperationClass {
    /// A list (paged, with totals) or a feed of one.
    pub(crate) fn is_list(self) -> bool {
        matches!(self, OperationClass::List | OperationClass::PostList)
    }

    /// The contract's table, plus three statuses of almanac's hardening (extensions), because
    /// the document must list every status an operation can return: 429 and 503 wherever 401
    /// is possible (credentials refused unchecked after repeated failures; no password
    /// verifier free in time) and 408 wherever 413 is (a request body that does not arrive in
    /// time); post-kind lists add 403 for `context=export` (an extension).
    pub(crate) fn statuses(self) -> &'static [u16] {
        match self {
            OperationClass::Meta | OperationClass::List => {
                &[200, 304, 400, 401, 404, 414, 429, 500, 503]
            }
            OperationClass::PostList => &[200, 304, 400, 401, 403, 404, 414, 429, 500, 503],
            OperationClass::GetSingle => &[200, 304, 400, 401, 403, 404, 414, 429, 500, 503],
            OperationClass::Create => &[
                201, 400, 401, 403, 404, 408, 409, 413, 414, 415, 429, 500, 503,
            ],
            OperationClass::Update => &[
                200, 400, 401, 403, 404, 408, 409, 413, 414, 415, 429, 500, 503,
            ],
            OperationClass::DeletePost => &[
                200, 400, 401, 403, 404, 408, 410, 413, 414, 415, 429, 500, 503,
            ],
            OperationClass::DeleteTerm => {
                &[200, 400, 401, 403, 404, 408, 413, 414, 415, 429, 500, 503]
            }
            OperationClass::Admin => &[200, 400, 401, 403, 404, 408, 413, 414, 415, 429, 500, 503],
            OperationClass::Changes => &[200, 400, 401, 403, 404, 410, 414, 429, 500, 503],
        }
    }
}

/// The schema of a successful answer, for `/doc`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResponseSchema {
    /// `#/components/schemas/<name>`.
    Component(String),
    /// `{"type": "object"}` (the `/doc` operation itself).
    AnyObject,
    /// A `text/calendar` body (calendar feeds).
    Calendar,
}

/// The route-level permission of an endpoint, as the `Allow` header reports
/// it. The handlers enforce the same rules through the use cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    Everyone,
    CreatePost,
    EditPost(Kind),
    DeletePost(Kind),
    ManageTerms(Kind),
    /// Administrators only (almanac's own maintenance routes).
    Administrator,
}

/// A synchronous handler: it runs on the blocking pool, so it may use the store and index.
pub(crate) type Handler = fn(&AppState, &Context) -> Result<ApiResponse, ApiError>;

pub struct Endpoint {
    pub group: Group,
    /// `operationId` of `/doc`; an Edit group documents `<id>`, `<id>Put`, `<id>Patch`.
    pub operation_id: String,
    pub summary: String,
    pub class: OperationClass,
    pub response: ResponseSchema,
    pub params: Vec<ParamSpec>,
    pub handler: Handler,
    /// The handler adds reference checks (unknown IDs, ...) to the syntax errors of
    /// [`crate::http::params::validate`] and calls [`crate::http::params::Params::check`] itself.
    pub checks_references: bool,
    pub permission: Permission,
}

impl Endpoint {
    /// Whether its whole answers are kept between requests (`answer_cache`, docs/api.md,
    /// "Responses, caching and compression"): the reads of the five JSON lists and of their
    /// single records, by ID and by slug.
    pub(crate) fn caches_whole_answer(&self) -> bool {
        self.group == Group::Read
            && (self.class.is_list() || self.class == OperationClass::GetSingle)
            && matches!(self.response, ResponseSchema::Component(_))
    }
}

pub struct Route {
    pub segments: &'static [Seg],
    pub endpoints: Vec<Endpoint>,
}

impl Route {
    /// All methods of the route, in endpoint order (HEAD and OPTIONS are implicit).
    pub(crate) fn methods(&self) -> Vec<Method> {
        self.endpoints
            .iter()
            .flat_map(|e| e.group.methods().iter().cloned())
            .collect()
    }

    pub(crate) fn endpoint_for(&self, method: &Method) -> Option<&Endpoint> {
        let method = if method == Method::HEAD {
            &Method::GET
        } else {
            method
        };
        self.endpoints
            .iter()
            .find(|e| e.group.methods().contains(method))
    }

    /// Routes of the plugin's catalogue are listed in the namespace index;
    /// almanac's extensions (administrators' routes, the calendar feeds, the change feed) are documented in
    /// `/doc` only.
    pub(crate) fn in_catalogue(&self) -> bool {
        let administrative = self
            .endpoints
            .iter()
            .all(|e| e.permission == Permission::Administrator);
        let feed = self.segments.iter().any(|s| match s {
            Seg::Lit(lit) => lit.contains('.'),
            Seg::IdWith(_) | Seg::SlugWith(_) => true,
            Seg::Id | Seg::Slug => false,
        });
        let extension = self
            .endpoints
            .iter()
            .all(|e| e.class == OperationClass::Changes);
        !administrative && !feed && !extension
    }

    pub(crate) fn has_placeholders(&self) -> bool {
        self.segments.iter().any(|s| !matches!(s, Seg::Lit(_)))
    }

    /// The key of the namespace index: `/cal/events/v1/events/(?P<id>\d+)`.
    pub(crate) fn index_key(&self) -> String {
        format!(
            "/{}{}",
            crate::http::links::NAMESPACE,
            self.relative_with("(?P<id>\\d+)", "(?P<slug>[^/]+)", "\\.")
        )
    }

    /// The path relative to the namespace, with placeholders as in `/doc`: `/events/{id}`.
    pub(crate) fn doc_path(&self) -> String {
        let path = self.relative_with("{id}", "{slug}", ".");
        if path.is_empty() {
            "/".into()
        } else {
            path
        }
    }

    /// The path relative to the namespace root (`""` for the root), for placeholder-free routes.
    pub(crate) fn relative_path(&self) -> String {
        self.relative_with("{id}", "{slug}", ".")
    }

    /// The path with `id` and `slug` in place of the placeholders and `dot` for the dot of an
    /// extension (escaped in the index's regular expressions).
    fn relative_with(&self, id: &str, slug: &str, dot: &str) -> String {
        self.segments
            .iter()
            .map(|s| match s {
                Seg::Lit(l) => format!("/{l}"),
                Seg::Id => format!("/{id}"),
                Seg::Slug => format!("/{slug}"),
                Seg::IdWith(extension) => format!("/{id}{}", extension.replace('.', dot)),
                Seg::SlugWith(extension) => format!("/{slug}{}", extension.replace('.', dot)),
            })
            .collect()
    }
}

/// Values taken from the path (`id` and `slug` come only from there).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct PathValues {
    /// IDs beyond the signed 64-bit range saturate: they behave as IDs that do not exist.
    pub id: Option<u64>,
    pub slug: Option<String>,
}

/// Where a request path leads (docs/api.md, "Paths").
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Target {
    Healthz,
    /// `/metrics` (administrators; see `crate::metrics`).
    Metrics,
    RestRoot {
        segment: Option<Language>,
    },
    Namespace {
        segment: Option<Language>,
        route: usize,
        values: PathValues,
    },
    /// A public page (`/events/…`, `/event/{slug}/`, `/embed/…`; see `http::pages`): the
    /// decoded segments.
    Page(Vec<String>),
    /// `/assets/{name}`: the pages' stylesheet and scripts.
    Asset(String),
    /// The editors' pages (`/manage/…`, see `http::pages::manage`): the language and the
    /// segments after `manage`.
    Manage(Option<Language>, Vec<String>),
    /// `/events/propose/` (and under a language segment): visitors' proposals, when allowed.
    Propose(Option<Language>),
    Unknown,
}

pub struct RouteTable {
    pub routes: Vec<Route>,
    /// The `route` label of request metrics: each route's `/doc` path, then the names of the
    /// targets outside the namespace (see [`RouteTable::label`]).
    labels: Vec<Arc<str>>,
}

/// The labels of the targets outside the namespace, after the routes' in `labels`.
const OUTSIDE_LABELS: [&str; 8] = [
    "rest_root",
    "healthz",
    "metrics",
    "unmatched",
    "page",
    "asset",
    "manage",
    "propose",
];

impl RouteTable {
    /// Every endpoint takes `translation_language`; it is added here, last,
    /// where a route does not declare it itself.
    pub(crate) fn new(mut routes: Vec<Route>) -> RouteTable {
        for endpoint in routes.iter_mut().flat_map(|r| r.endpoints.iter_mut()) {
            if !endpoint
                .params
                .iter()
                .any(|p| p.name == "translation_language")
            {
                endpoint.params.push(ParamSpec::translation_language());
            }
        }
        let labels = routes
            .iter()
            .map(|r| Arc::from(r.doc_path()))
            .chain(OUTSIDE_LABELS.into_iter().map(Arc::from))
            .collect();
        RouteTable { routes, labels }
    }

    /// What request metrics name `target` by: a route's path template as in `/doc`
    /// (`/events/{id}`), or `rest_root`, `healthz`, `metrics`, `unmatched`, `page`, `asset`.
    pub(crate) fn label(&self, target: &Target) -> &Arc<str> {
        let outside = |n: usize| &self.labels[self.routes.len() + n];
        match target {
            Target::Namespace { route, .. } => &self.labels[*route],
            Target::RestRoot { .. } => outside(0),
            Target::Healthz => outside(1),
            Target::Metrics => outside(2),
            Target::Unknown => outside(3),
            Target::Page(_) => outside(4),
            Target::Asset(_) => outside(5),
            Target::Manage(..) => outside(6),
            Target::Propose(_) => outside(7),
        }
    }

    /// Matches a raw (still percent-encoded) path.
    pub(crate) fn resolve(&self, raw_path: &str) -> Target {
        let Some(segments) = decode_segments(raw_path) else {
            return Target::Unknown;
        };
        let mut rest: &[String] = &segments;
        if rest == ["healthz"] {
            return Target::Healthz;
        }
        if rest == ["metrics"] {
            return Target::Metrics;
        }
        if let [first, name] = rest {
            if first == "assets" {
                return Target::Asset(name.clone());
            }
        }
        match rest {
            [events, propose] if events == "events" && propose == "propose" => {
                return Target::Propose(None)
            }
            [segment, events, propose] if events == "events" && propose == "propose" => {
                if let Some(language) = Language::from_segment(segment) {
                    return Target::Propose(Some(language));
                }
            }
            _ => {}
        }
        if is_page_path(rest) {
            return Target::Page(segments.clone());
        }
        let segment = rest.first().and_then(|s| Language::from_segment(s));
        if segment.is_some() {
            rest = &rest[1..];
        }
        if rest.first().is_some_and(|s| s == "manage") {
            return Target::Manage(segment, rest[1..].to_vec());
        }
        if rest.is_empty() {
            return Target::RestRoot { segment };
        }
        let Some(below) = rest.strip_prefix(&["cal".to_string(), "events".into(), "v1".into()])
        else {
            return Target::Unknown;
        };
        for (index, route) in self.routes.iter().enumerate() {
            if let Some(values) = match_segments(route.segments, below) {
                return Target::Namespace {
                    segment,
                    route: index,
                    values,
                };
            }
        }
        Target::Unknown
    }
}

/// The first words of the pages' paths (after `/embed` and a language segment).
const FIRST_WORDS: [&str; 5] = ["events", "event", "venue", "organizer", "tag"];

/// Whether decoded path `segments` lie in the pages' space (assets excepted).
fn is_page_path(segments: &[String]) -> bool {
    let mut rest = segments;
    if rest.first().is_some_and(|s| s == "embed") {
        return true;
    }
    if rest
        .first()
        .and_then(|s| Language::from_segment(s))
        .is_some()
    {
        rest = &rest[1..];
    }
    rest.first()
        .is_some_and(|s| FIRST_WORDS.contains(&s.as_str()))
}

/// Trailing slashes removed, split on `/`, each segment percent-decoded as
/// UTF-8; an empty segment in the middle or invalid UTF-8 makes the path unmatched.
fn decode_segments(raw_path: &str) -> Option<Vec<String>> {
    let trimmed = raw_path.trim_end_matches('/');
    if trimmed.is_empty() {
        return Some(Vec::new());
    }
    let body = trimmed.strip_prefix('/')?;
    body.split('/')
        .map(|s| {
            if s.is_empty() {
                return None;
            }
            percent_encoding::percent_decode_str(s)
                .decode_utf8()
                .ok()
                .map(|c| c.into_owned())
        })
        .collect()
}

fn match_segments(pattern: &[Seg], path: &[String]) -> Option<PathValues> {
    if pattern.len() != path.len() {
        return None;
    }
    let mut values = PathValues::default();
    for (seg, value) in pattern.iter().zip(path) {
        match seg {
            Seg::Lit(lit) if lit == value => {}
            Seg::Lit(_) => return None,
            Seg::Id => {
                if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                let id = value
                    .parse::<u64>()
                    .ok()
                    .filter(|id| *id <= i64::MAX as u64)
                    .unwrap_or(u64::MAX);
                values.id = Some(id);
            }
            Seg::Slug => values.slug = Some(value.clone()),
            Seg::IdWith(extension) => {
                let digits = value.strip_suffix(extension)?;
                values.id = Some(match_segments(&[Seg::Id], &[digits.to_string()])?.id?);
            }
            Seg::SlugWith(extension) => {
                let slug = value.strip_suffix(extension).filter(|s| !s.is_empty())?;
                values.slug = Some(slug.to_string());
            }
        }
    }
    Some(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> RouteTable {
        fn ok(_: &AppState, _: &Context) -> Result<ApiResponse, ApiError> {
            Err(ApiError::internal())
        }
        let endpoint = |group| Endpoint {
            group,
            operation_id: "x".into(),
            summary: String::new(),
            class: OperationClass::Meta,
            response: ResponseSchema::AnyObject,
            params: vec![],
            handler: ok,
            checks_references: false,
            permission: Permission::Everyone,
        };
        RouteTable::new(vec![
            Route {
                segments: &[],
                endpoints: vec![endpoint(Group::Read)],
            },
            Route {
                segments: &[Seg::Lit("events"), Seg::Id],
                endpoints: vec![endpoint(Group::Read), endpoint(Group::Edit)],
            },
            Route {
                segments: &[Seg::Lit("events"), Seg::Lit("by-slug"), Seg::Slug],
                endpoints: vec![endpoint(Group::Read)],
            },
        ])
    }

    fn ns(segment: Option<Language>, route: usize, values: PathValues) -> Target {
        Target::Namespace {
            segment,
            route,
            values,
        }
    }

    #[test]
    fn the_pages_space_is_its_first_words_under_an_optional_language_or_embed() {
        let t = table();
        for page in [
            "/events/",
            "/pt-br/tag/x/",
            "/embed/anything/",
            "/es/event/a/",
        ] {
            assert!(matches!(t.resolve(page), Target::Page(_)), "{page}");
        }
        for other in ["/cal/events/v1/events/1", "/es/cal/events/v1/", "/eventos/"] {
            assert!(!matches!(t.resolve(other), Target::Page(_)), "{other}");
        }
    }

    #[test]
    fn paths_resolve_to_routes_segments_and_values() {
        let t = table();
        assert_eq!(t.resolve("/"), Target::RestRoot { segment: None });
        assert_eq!(
            t.resolve("/es/"),
            Target::RestRoot {
                segment: Some(Language::Es)
            }
        );
        assert_eq!(t.resolve("/healthz"), Target::Healthz);
        assert_eq!(t.resolve("/es/healthz"), Target::Unknown);
        assert_eq!(t.resolve("/metrics/"), Target::Metrics);
        assert_eq!(t.resolve("/es/metrics"), Target::Unknown);
        assert_eq!(t.resolve("/cal/events/v1/metrics"), Target::Unknown);
        assert_eq!(
            t.resolve("/cal/events/v1///"),
            ns(None, 0, PathValues::default())
        );
        assert_eq!(
            t.resolve("/pt-br/cal/events/v1/events/007/"),
            ns(
                Some(Language::PtBr),
                1,
                PathValues {
                    id: Some(7),
                    slug: None
                }
            )
        );
        assert_eq!(
            t.resolve("/cal/events/v1/events/99999999999999999999"),
            ns(
                None,
                1,
                PathValues {
                    id: Some(u64::MAX),
                    slug: None
                }
            )
        );
        for unknown in [
            "/en/cal/events/v1",
            "/ES/cal/events/v1",
            "/Cal/events/v1",
            "/cal//events/v1",
            "/cal/events/v1/events/abc",
            "/cal/events/v1/events/-1",
            "/cal/events/v1/events/1.5",
            "/cal/events/v1/events/by-slug/",
            "/cal/events/v1/%FF",
        ] {
            assert_eq!(t.resolve(unknown), Target::Unknown, "{unknown}");
        }
        assert_eq!(
            t.resolve("/cal/events/v1/events/by-slug/a%2Fb"),
            ns(
                None,
                2,
                PathValues {
                    id: None,
                    slug: Some("a/b".into())
                }
            )
        );
    }

    #[test]
    fn keys_and_doc_paths() {
        let t = table();
        assert_eq!(t.routes[0].index_key(), "/cal/events/v1");
        assert_eq!(t.routes[0].doc_path(), "/");
        assert_eq!(
            t.routes[1].index_key(),
            "/cal/events/v1/events/(?P<id>\\d+)"
        );
        assert_eq!(t.routes[2].doc_path(), "/events/by-slug/{slug}");
        assert_eq!(
            &**t.label(&t.resolve("/es/cal/events/v1/events/7")),
            "/events/{id}"
        );
        assert_eq!(&**t.label(&t.resolve("/cal/events/v1")), "/");
        assert_eq!(&**t.label(&t.resolve("/")), "rest_root");
        assert_eq!(&**t.label(&t.resolve("/metrics")), "metrics");
        assert_eq!(&**t.label(&t.resolve("/nowhere")), "unmatched");
        assert_eq!(
            t.routes[1].methods(),
            vec![Method::GET, Method::POST, Method::PUT, Method::PATCH]
        );
    }
}
