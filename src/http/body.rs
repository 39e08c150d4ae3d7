//! Request bodies: size limit, media type, JSON or form parsing.

use crate::http::error::{ApiError, MAX_BODY_BYTES};
use crate::values::form::{parse_json_body, RawParams};
use bytes::{Buf, BytesMut};
use futures_util::{Stream, StreamExt};
use warp::http::header::{self, HeaderMap};

/// Reads the whole body, refusing more than [`MAX_BODY_BYTES`] whether announced by
/// `Content-Length` or discovered while reading.
pub async fn read_limited<S, B>(headers: &HeaderMap, stream: S) -> Result<BytesMut, ApiError>
where
    S: Stream<Item = Result<B, warp::Error>>,
    B: Buf,
{
    let announced = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if announced.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return Err(ApiError::payload_too_large());
    }
    let mut stream = std::pin::pin!(stream);
    let mut body = BytesMut::new();
    while let Some(chunk) = stream.next().await {
        // A client that breaks off mid-body gets no meaningful answer anyway; treat it as an
        // empty, unusable request rather than a server error.
        let mut chunk = chunk.map_err(|_| ApiError::invalid_json(4, "incomplete body"))?;
        if body.len() + chunk.remaining() > MAX_BODY_BYTES {
            return Err(ApiError::payload_too_large());
        }
        while chunk.has_remaining() {
            let part = chunk.chunk();
            body.extend_from_slice(part);
            let n = part.len();
            chunk.advance(n);
        }
    }
    Ok(body)
}

/// The body's parameters, by its media type. An empty body has none, whatever its type.
pub fn parameters(headers: &HeaderMap, body: &[u8]) -> Result<RawParams, ApiError> {
    if body.is_empty() {
        return Ok(RawParams::new());
    }
    let encoding = headers
        .get(header::CONTENT_ENCODING)
        .map(|v| v.to_str().unwrap_or("?").trim().to_ascii_lowercase());
    if encoding.is_some_and(|e| e != "identity" && !e.is_empty()) {
        return Err(ApiError::unsupported_media_type());
    }
    match media_type(headers) {
        Some(MediaType::Json) => parse_json_body(body)
            .map(RawParams::from_json_object)
            .map_err(|e| ApiError::invalid_json(e.json_error_code, &e.message)),
        Some(MediaType::Form) => Ok(RawParams::from_form(body)),
        None => Err(ApiError::unsupported_media_type()),
    }
}

#[derive(Debug, PartialEq, Eq)]
enum MediaType {
    Json,
    Form,
}

/// `application/json`, `application/<x>+json` or form data, with no charset but UTF-8.
fn media_type(headers: &HeaderMap) -> Option<MediaType> {
    let value = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    let mut parts = value.split(';');
    let essence = parts.next()?.trim().to_ascii_lowercase();
    for param in parts {
        if let Some((name, val)) = param.split_once('=') {
            if name.trim().eq_ignore_ascii_case("charset")
                && !val.trim().trim_matches('"').eq_ignore_ascii_case("utf-8")
            {
                return None;
            }
        }
    }
    let (kind, subtype) = essence.split_once('/')?;
    match (kind, subtype) {
        ("application", "json") => Some(MediaType::Json),
        ("application", "x-www-form-urlencoded") => Some(MediaType::Form),
        ("application", s) if s.ends_with("+json") && s.len() > 5 => Some(MediaType::Json),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use warp::http::HeaderValue;

    fn with_type(t: &'static str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static(t));
        h
    }

    #[test]
    fn accepted_and_refused_media_types() {
        assert_eq!(
            media_type(&with_type("application/json")),
            Some(MediaType::Json)
        );
        assert_eq!(
            media_type(&with_type("Application/Problem+JSON; charset=UTF-8")),
            Some(MediaType::Json)
        );
        assert_eq!(
            media_type(&with_type("application/x-www-form-urlencoded")),
            Some(MediaType::Form)
        );
        assert_eq!(
            media_type(&with_type("application/json; charset=latin1")),
            None
        );
        assert_eq!(
            media_type(&with_type("multipart/form-data; boundary=x")),
            None
        );
        assert_eq!(media_type(&with_type("text/plain")), None);
        assert_eq!(media_type(&HeaderMap::new()), None);
    }

    #[test]
    fn bodies_become_parameters_or_errors() {
        assert!(parameters(&HeaderMap::new(), b"").is_ok());
        let err = parameters(&HeaderMap::new(), b"x").unwrap_err();
        assert_eq!(err.code, "rest_unsupported_media_type");
        let err = parameters(&with_type("application/json"), b"{\"a\":").unwrap_err();
        assert_eq!(err.code, "rest_invalid_json");
        let raw = parameters(&with_type("application/json"), b"{\"a\":\"b\"}").unwrap();
        assert!(raw.contains("a"));
        let mut gz = with_type("application/json");
        gz.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        assert_eq!(
            parameters(&gz, b"{}").unwrap_err().code,
            "rest_unsupported_media_type"
        );
    }
}
