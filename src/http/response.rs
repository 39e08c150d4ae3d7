//! What every answer carries (docs/api.md, "Responses, caching and compression"): JSON bytes,
//! standard and CORS headers, the discovery `Link`, `Allow`, `Cache-Control`, weak ETags with
//! `If-None-Match` → 304, and gzip. Handlers only produce an [`ApiResponse`] or an error.

use crate::auth::Caller;
use crate::http::error::ApiError;
use crate::http::links::Links;
use bytes::Bytes;
use flate2::write::GzEncoder;
use flate2::Compression;
use serde_json::Value;
use std::io::Write;
use std::sync::{Arc, OnceLock};
use warp::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use warp::http::{Method, StatusCode};
use warp::reply::Response;

/// A successful answer as a handler produces it.
#[derive(Debug)]
pub struct ApiResponse {
    pub status: StatusCode,
    pub body: Body,
    /// Extra headers (e.g. `Location`, `X-Cal-Total`).
    pub headers: Vec<(HeaderName, String)>,
    /// Entries of the `Link` header besides the discovery link: a URL and its parameters,
    /// e.g. `rel="next"`.
    pub link_relations: Vec<(String, &'static str)>,
}

impl ApiResponse {
    pub(crate) fn ok(body: Value) -> ApiResponse {
        ApiResponse::ok_body(Body::Json(body))
    }

    pub(crate) fn ok_body(body: Body) -> ApiResponse {
        ApiResponse {
            status: StatusCode::OK,
            body,
            headers: Vec::new(),
            link_relations: Vec::new(),
        }
    }

    pub(crate) fn header(mut self, name: HeaderName, value: impl Into<String>) -> ApiResponse {
        self.headers.push((name, value.into()));
        self
    }
}

/// A success body: a JSON value, JSON already serialized (lists splice their members'
/// cached serializations, see `representations`), or another format (calendar feeds).
#[derive(Debug)]
pub enum Body {
    Json(Value),
    Serialized(Vec<u8>),
    Shared(Arc<SharedBody>),
}

impl Body {
    /// The body as one built once and answered many times (kept in `answer_cache`).
    pub(crate) fn into_shared(self) -> Arc<SharedBody> {
        match self {
            Body::Json(value) => Arc::new(SharedBody::new(
                JSON,
                serde_json::to_vec(&value).expect("JSON values always serialize"),
            )),
            Body::Serialized(bytes) => Arc::new(SharedBody::new(JSON, bytes)),
            Body::Shared(shared) => shared,
        }
    }
}

/// A body built once and answered many times (whole answers from `answer_cache`): its tag
/// and its compressed form are computed once too.
#[derive(Debug)]
pub struct SharedBody {
    media_type: &'static str,
    bytes: Bytes,
    etag: String,
    gzipped: OnceLock<Bytes>,
}

impl SharedBody {
    pub(crate) fn new(media_type: &'static str, bytes: Vec<u8>) -> SharedBody {
        SharedBody {
            media_type,
            etag: weak_etag(&bytes),
            bytes: bytes.into(),
            gzipped: OnceLock::new(),
        }
    }

    /// The size in memory, for the cache's bound.
    pub(crate) fn size(&self) -> usize {
        self.bytes.len() + self.gzipped.get().map_or(0, Bytes::len)
    }
}

const JSON: &str = "application/json; charset=UTF-8";

/// Everything the finishing step needs to know about the request.
pub(crate) struct Finish<'a> {
    pub method: &'a Method,
    pub request_headers: &'a HeaderMap,
    pub caller: Caller,
    /// `None` on `/healthz`, which has no discovery link.
    pub links: Option<&'a Links>,
    pub allow: Option<String>,
}

const ALLOW_HEADERS: &str = "Authorization, X-WP-Nonce, Content-Disposition, Content-MD5, Content-Type, If-None-Match, X-HTTP-Method-Override, X-Cal-Min-Seq";
const EXPOSE_HEADERS: &str =
    "X-Cal-Total, X-Cal-TotalPages, Link, ETag, Allow, Location, X-Cal-Seq";
const ALLOW_METHODS: &str = "OPTIONS, GET, POST, PUT, PATCH, DELETE";
const AUTHENTICATED_CACHE: &str = "no-cache, must-revalidate, max-age=0, no-store, private";
/// Bodies smaller than this are not worth compressing.
const GZIP_MIN_BYTES: usize = 1024;

impl Finish<'_> {
    pub(crate) fn success(&self, answer: ApiResponse, cache_control: Option<&str>) -> Response {
        let (body, media_type, shared) = match answer.body {
            Body::Json(value) => (
                serde_json::to_vec(&value)
                    .expect("JSON values always serialize")
                    .into(),
                JSON,
                None,
            ),
            Body::Serialized(bytes) => (Bytes::from(bytes), JSON, None),
            Body::Shared(shared) => (shared.bytes.clone(), shared.media_type, Some(shared)),
        };
        let is_read = self.method == Method::GET || self.method == Method::HEAD;
        let etag = (answer.status == StatusCode::OK && is_read).then(|| match &shared {
            Some(shared) => shared.etag.clone(),
            None => weak_etag(&body),
        });
        let cache = cache_control.unwrap_or(if self.caller.is_authenticated() {
            AUTHENTICATED_CACHE
        } else {
            "no-cache"
        });
        let last_modified = answer
            .headers
            .iter()
            .find(|(name, _)| name == header::LAST_MODIFIED)
            .map(|(_, value)| value.as_str());
        if let Some(tag) = &etag {
            if not_modified(self.request_headers, tag, last_modified) {
                let mut response = Response::new(Vec::new().into());
                *response.status_mut() = StatusCode::NOT_MODIFIED;
                let h = response.headers_mut();
                put(h, header::ETAG, tag);
                put(h, header::CACHE_CONTROL, cache);
                if let Some(date) = last_modified {
                    put(h, header::LAST_MODIFIED, date);
                }
                self.common_headers(h, false, &[]);
                return response;
            }
        }
        let compress = |body: &[u8]| match &shared {
            Some(shared) => shared.gzipped.get_or_init(|| gzip(body)).clone(),
            None => gzip(body),
        };
        let mut response = self.bytes(
            answer.status,
            body,
            media_type,
            &answer.link_relations,
            compress,
        );
        let h = response.headers_mut();
        put(h, header::CACHE_CONTROL, cache);
        if let Some(tag) = &etag {
            put(h, header::ETAG, tag);
        }
        for (name, value) in answer.headers {
            put(h, name, &value);
        }
        response
    }

    pub(crate) fn error(&self, error: &ApiError) -> Response {
        let body = serde_json::to_vec(&error.body()).expect("JSON values always serialize");
        let mut response = self.bytes(error.status, body.into(), JSON, &[], gzip);
        put(response.headers_mut(), header::CACHE_CONTROL, "no-store");
        if let Some(seconds) = error.retry_after() {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, seconds.into());
        }
        response
    }

    fn bytes(
        &self,
        status: StatusCode,
        body: Bytes,
        media_type: &str,
        relations: &[(String, &str)],
        compress: impl FnOnce(&[u8]) -> Bytes,
    ) -> Response {
        let (body, gzipped) = if body.len() >= GZIP_MIN_BYTES && accepts_gzip(self.request_headers)
        {
            (compress(&body), true)
        } else {
            (body, false)
        };
        let body = if self.method == Method::HEAD {
            Bytes::new()
        } else {
            body
        };
        let mut response = Response::new(body.into());
        *response.status_mut() = status;
        let h = response.headers_mut();
        put(h, header::CONTENT_TYPE, media_type);
        if gzipped {
            put(h, header::CONTENT_ENCODING, "gzip");
        }
        self.common_headers(h, true, relations);
        response
    }

    fn common_headers(&self, h: &mut HeaderMap, with_link: bool, relations: &[(String, &str)]) {
        put(h, header::VARY, "Origin, Authorization, Accept-Encoding");
        put(h, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
        put(h, HeaderName::from_static("x-robots-tag"), "noindex");
        put(h, header::ACCESS_CONTROL_ALLOW_HEADERS, ALLOW_HEADERS);
        put(h, header::ACCESS_CONTROL_EXPOSE_HEADERS, EXPOSE_HEADERS);
        if let Some(origin) = self.request_headers.get(header::ORIGIN) {
            h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
            put(h, header::ACCESS_CONTROL_ALLOW_CREDENTIALS, "true");
            put(h, header::ACCESS_CONTROL_ALLOW_METHODS, ALLOW_METHODS);
        }
        if let Some(allow) = &self.allow {
            put(h, header::ALLOW, allow);
        }
        if let (true, Some(links)) = (with_link, self.links) {
            let mut value = format!("<{}>; rel=\"https://api.w.org/\"", links.rest_root());
            for (url, parameters) in relations {
                value.push_str(&format!(", <{url}>; {parameters}"));
            }
            put(h, header::LINK, &value);
        }
    }
}

fn put(h: &mut HeaderMap, name: HeaderName, value: &str) {
    // Every value set here is built from ASCII (links are form-encoded); a value that is
    // somehow not a valid header is dropped rather than failing the answer.
    if let Ok(v) = HeaderValue::from_str(value) {
        h.insert(name, v);
    }
}

/// `W/"` + the XXH3 64-bit hash of the uncompressed body, in hex. A weak validator only has to
/// change when the body does; XXH3 is deterministic across processes and nodes (so every node
/// of a cluster tags the same body alike) and several times faster than a cryptographic hash
/// (BLAKE3 of a single event's body was 5 % of its request's CPU).
pub(crate) fn weak_etag(body: &[u8]) -> String {
    format!("W/\"{:016x}\"", xxhash_rust::xxh3::xxh3_64(body))
}

/// Weak comparison: `W/` prefixes are ignored; `*` matches anything.
/// Whether the client's copy is current: `If-None-Match` names our tag, or, when the client
/// sent no `If-None-Match` (which takes precedence, RFC 9110, section 13.2.2), its
/// `If-Modified-Since` is no earlier than our `Last-Modified`.
fn not_modified(headers: &HeaderMap, etag: &str, last_modified: Option<&str>) -> bool {
    if headers.contains_key(header::IF_NONE_MATCH) {
        return if_none_match(headers, etag);
    }
    let date = |value: &str| chrono::DateTime::parse_from_rfc2822(value).ok();
    let since = headers
        .get(header::IF_MODIFIED_SINCE)
        .and_then(|v| v.to_str().ok())
        .and_then(date);
    matches!((since, last_modified.and_then(date)), (Some(since), Some(ours)) if ours <= since)
}

fn if_none_match(headers: &HeaderMap, etag: &str) -> bool {
    let strip = |t: &str| t.trim().trim_start_matches("W/").to_string();
    let ours = strip(etag);
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| t.trim() == "*" || strip(t) == ours)
}

/// `gzip` or `x-gzip` listed with a non-zero quality.
fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|item| {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            let quality = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .filter_map(|q| q.trim().parse::<f32>().ok())
                .next()
                .unwrap_or(1.0);
            (coding == "gzip" || coding == "x-gzip") && quality > 0.0
        })
}

fn gzip(body: &[u8]) -> Bytes {
    let mut encoder = GzEncoder::new(Vec::with_capacity(body.len() / 3), Compression::fast());
    encoder.write_all(body).expect("writing into a Vec");
    encoder
        .finish()
        .expect("finishing a gzip stream into a Vec")
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn etags_are_weak_and_compared_weakly() {
        let tag = weak_etag(b"{}");
        assert!(tag.starts_with("W/\"") && tag.len() == 20);
        let inner = tag.trim_start_matches("W/").to_string();
        let mut h = HeaderMap::new();
        h.insert(
            header::IF_NONE_MATCH,
            HeaderValue::from_str(&inner).unwrap(),
        );
        assert!(if_none_match(&h, &tag));
        assert!(if_none_match(&headers(&[("if-none-match", "*")]), &tag));
        assert!(!if_none_match(
            &headers(&[("if-none-match", "W/\"00\"")]),
            &tag
        ));
    }

    #[test]
    fn gzip_negotiation_honours_quality() {
        assert!(accepts_gzip(&headers(&[("accept-encoding", "br, gzip")])));
        assert!(accepts_gzip(&headers(&[(
            "accept-encoding",
            "x-gzip;q=0.5"
        )])));
        assert!(!accepts_gzip(&headers(&[("accept-encoding", "gzip;q=0")])));
        assert!(!accepts_gzip(&headers(&[("accept-encoding", "identity")])));
    }
}
