//! The one error type of the HTTP layer and its mapping to the error body
//! `{code, message, data: {status, ...}}` (docs/api.md, "Errors"). Every failure of any layer below
//! is turned into an [`ApiError`] exactly once, here or in the `From` impls next to it.

use crate::auth::{AuthError, Caller};
use crate::values::Invalid;
use serde_json::{json, Map, Value};
use warp::http::StatusCode;

/// Body limit.
pub(crate) const MAX_BODY_BYTES: usize = 1_048_576;
/// Request-target limit.
pub(crate) const MAX_TARGET_BYTES: usize = 8192;

#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    /// Members of `data` besides `status`.
    pub data: Map<String, Value>,
}

impl ApiError {
    pub(crate) fn new(
        status: StatusCode,
        code: &'static str,
        message: impl Into<String>,
    ) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
            data: Map::new(),
        }
    }

    pub(crate) fn with(mut self, key: &str, value: Value) -> ApiError {
        self.data.insert(key.to_string(), value);
        self
    }

    pub(crate) fn no_route() -> ApiError {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "rest_no_route",
            "No route was found matching the URL and request method.",
        )
    }

    pub(crate) fn invalid_namespace() -> ApiError {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "rest_invalid_namespace",
            "The specified namespace could not be found.",
        )
    }

    pub(crate) fn uri_too_long() -> ApiError {
        ApiError::new(
            StatusCode::URI_TOO_LONG,
            "rest_uri_too_long",
            "The request target is too long.",
        )
        .with("max_bytes", json!(MAX_TARGET_BYTES))
    }

    /// Extension: an `X-Cal-Min-Seq` header that is not a non-negative integer.
    pub(crate) fn invalid_min_seq() -> ApiError {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "rest_invalid_header",
            "X-Cal-Min-Seq must be a non-negative integer.",
        )
    }

    /// Extension: the position an `X-Cal-Min-Seq` read waits for was not reached in time.
    pub(crate) fn position_not_reached(position: u64) -> ApiError {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "rest_position_not_reached",
            "This server has not caught up with the requested write yet. Try again shortly.",
        )
        .with("position", json!(position))
        .with("retry_after", json!(1))
    }

    pub(crate) fn payload_too_large() -> ApiError {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "rest_payload_too_large",
            "The request body is too large.",
        )
        .with("max_bytes", json!(MAX_BODY_BYTES))
    }

    pub(crate) fn unsupported_media_type() -> ApiError {
        ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "rest_unsupported_media_type",
            "The request body must be UTF-8 JSON or form data.",
        )
        .with(
            "supported",
            json!(["application/json", "application/x-www-form-urlencoded"]),
        )
    }

    pub(crate) fn invalid_json(json_error_code: u8, detail: &str) -> ApiError {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "rest_invalid_json",
            "Invalid JSON body passed.",
        )
        .with("json_error_code", json!(json_error_code))
        .with("json_error_message", json!(detail))
    }

    /// Required parameters absent, in the order the route declares them.
    pub(crate) fn missing_params(names: &[&str]) -> ApiError {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "rest_missing_callback_param",
            format!("Required parameter(s) not supplied: {}", names.join(", ")),
        )
        .with("params", json!(names))
    }

    /// Every invalid parameter of the request at once.
    pub(crate) fn invalid_params(invalid: &[(String, Invalid)]) -> ApiError {
        let mut params = Map::new();
        let mut details = Map::new();
        for (name, why) in invalid {
            let message = format!("{name} {}", why.reason);
            params.insert(name.clone(), json!(message));
            details.insert(
                name.clone(),
                json!({"code": why.code.as_str(), "message": message, "data": {"param": name}}),
            );
        }
        let names: Vec<&str> = invalid.iter().map(|(n, _)| n.as_str()).collect();
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "rest_invalid_param",
            format!(
                "Parameter(s) with unacceptable values: {}",
                names.join(", ")
            ),
        )
        .with("params", Value::Object(params))
        .with("details", Value::Object(details))
    }

    /// A refused route-level permission: 401 for anonymous callers, 403 otherwise.
    pub(crate) fn forbidden(caller: Caller) -> ApiError {
        let status = if caller.is_authenticated() {
            StatusCode::FORBIDDEN
        } else {
            StatusCode::UNAUTHORIZED
        };
        ApiError::new(
            status,
            "rest_forbidden",
            "You are not allowed to perform this action.",
        )
    }

    /// A `context` value the caller may not use: 401 for anonymous callers, 403 otherwise, as
    /// WordPress answers a forbidden `context=edit`.
    pub(crate) fn forbidden_context(caller: Caller) -> ApiError {
        let status = if caller.is_authenticated() {
            StatusCode::FORBIDDEN
        } else {
            StatusCode::UNAUTHORIZED
        };
        ApiError::new(
            status,
            "rest_forbidden_context",
            "Sorry, you are not allowed to edit posts in this post type.",
        )
    }

    /// Extension: credentials refused unchecked after repeated failures for the same user name
    /// or client address (`auth::throttle`). `retry_after` (whole seconds, rounded up) is also
    /// sent as the `Retry-After` header.
    pub(crate) fn too_many_attempts(retry_after: std::time::Duration) -> ApiError {
        ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rest_too_many_attempts",
            "Too many failed authentication attempts. Try again later.",
        )
        .with("retry_after", json!(whole_seconds(retry_after)))
    }

    /// Extension: the request body did not arrive within the body read timeout
    /// (`ALMANAC_BODY_TIMEOUT`).
    pub(crate) fn request_timeout(limit: std::time::Duration) -> ApiError {
        ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "rest_request_timeout",
            "The request body was not received in time.",
        )
        .with("max_seconds", json!(limit.as_secs_f64()))
    }

    /// The `Retry-After` value of a 429, if this is one.
    pub(crate) fn retry_after(&self) -> Option<u64> {
        matches!(
            self.status,
            StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE
        )
        .then(|| self.data.get("retry_after").and_then(Value::as_u64))
        .flatten()
    }

    pub(crate) fn internal() -> ApiError {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal_server_error",
            "The server could not complete the request.",
        )
    }

    pub(crate) fn body(&self) -> Value {
        let mut data = Map::new();
        data.insert("status".into(), json!(self.status.as_u16()));
        data.extend(self.data.clone());
        json!({"code": self.code, "message": self.message, "data": data})
    }
}

impl From<AuthError> for ApiError {
    fn from(e: AuthError) -> ApiError {
        let (code, message) = match e {
            AuthError::Malformed => (
                "rest_invalid_authorization",
                "The Authorization header is malformed.",
            ),
            AuthError::UnknownUser => ("invalid_username", "Unknown username."),
            AuthError::WrongPassword => (
                "incorrect_password",
                "The provided password is an invalid application password.",
            ),
            AuthError::Throttled { retry_after } => {
                return ApiError::too_many_attempts(retry_after)
            }
            AuthError::Busy => {
                return ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "rest_authentication_busy",
                    "Too many credentials are being checked at once. Try again shortly.",
                )
                .with("retry_after", json!(1))
            }
        };
        ApiError::new(StatusCode::UNAUTHORIZED, code, message)
    }
}

impl From<crate::store::StoreError> for ApiError {
    fn from(e: crate::store::StoreError) -> ApiError {
        if let crate::store::StoreError::ClusterUnavailable(why) = &e {
            tracing::warn!(error = %why, "write refused: the cluster log is unavailable");
            return ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "rest_cluster_unavailable",
                "The calendar cannot take writes right now. Reads go on; try the write again shortly.",
            )
            .with("retry_after", json!(1));
        }
        tracing::error!(error = %e, "store failure");
        ApiError::internal()
    }
}

/// Seconds, rounded up, so that a client waiting that long is never early.
fn whole_seconds(d: std::time::Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// The one mapping of use-case failures to the API's codes and statuses.
pub(crate) fn from_service(e: crate::service::ServiceError, caller: Caller) -> ApiError {
    use crate::model::Kind;
    use crate::service::ServiceError as S;
    let kind_code = |kind: Kind, codes: [&'static str; 5]| match kind {
        Kind::Event => codes[0],
        Kind::Venue => codes[1],
        Kind::Organizer => codes[2],
        Kind::Category => codes[3],
        Kind::Tag => codes[4],
    };
    match e {
        S::Invalid(invalid) => ApiError::invalid_params(&invalid),
        S::Forbidden => ApiError::forbidden(caller),
        S::ForbiddenContext => ApiError::forbidden_context(caller),
        S::NoGroupMember(kind) => ApiError::new(
            StatusCode::NOT_FOUND,
            kind_code(
                kind,
                [
                    "rest-event-not-found",
                    "venue-not-found",
                    "organizer-not-found",
                    "rest_term_invalid",
                    "rest_term_invalid",
                ],
            ),
            "No record of this translation group exists in that language.",
        ),
        S::NotAccessible(kind) => ApiError::new(
            StatusCode::FORBIDDEN,
            kind_code(
                kind,
                [
                    "event-not-accessible",
                    "venue-not-accessible",
                    "organizer-not-accessible",
                    "rest_forbidden",
                    "rest_forbidden",
                ],
            ),
            "This record cannot be viewed by the current caller.",
        ),
        S::InTrash(kind) => ApiError::new(
            StatusCode::GONE,
            kind_code(
                kind,
                [
                    "event-is-in-trash",
                    "venue-is-in-trash",
                    "organizer-is-in-trash",
                    "rest_invalid_param",
                    "rest_invalid_param",
                ],
            ),
            "The record is already in the trash.",
        ),
        S::PageNotFound(kind) => ApiError::new(
            StatusCode::NOT_FOUND,
            kind_code(
                kind,
                [
                    "event-archive-page-not-found",
                    "venue-archive-page-not-found",
                    "organizer-archive-page-not-found",
                    "rest_invalid_param",
                    "rest_invalid_param",
                ],
            ),
            "The requested archive page does not exist.",
        ),
        S::ChangesTokenExpired => ApiError::new(
            StatusCode::GONE,
            "rest_sync_token_expired",
            "The changes since this token are no longer kept: start again without since, \
             from every record.",
        ),
        S::EventNotFound => ApiError::new(
            StatusCode::NOT_FOUND,
            "rest-event-not-found",
            "No event with this ID exists.",
        ),
        S::NotAnEvent => ApiError::new(
            StatusCode::BAD_REQUEST,
            "rest-invalid-event-id",
            "The ID does not belong to an event.",
        ),
        S::EventGone => ApiError::new(
            StatusCode::FORBIDDEN,
            "event-no-longer-available",
            "This event has been moved to the trash and is no longer available.",
        ),
        S::PasswordProtected => ApiError::new(
            StatusCode::FORBIDDEN,
            "event-password-protected",
            "This event is protected by a password; send it in the password parameter.",
        ),
        S::CannotEditOthers => ApiError::new(
            StatusCode::FORBIDDEN,
            "rest_cannot_edit_others",
            "Sorry, you are not allowed to set another user as the author.",
        ),
        S::TranslationConflict {
            language,
            translation_id,
        } => {
            let conflict = ApiError::new(
                StatusCode::CONFLICT,
                "translation-conflict",
                "The translation group already has a record in this language.",
            )
            .with("language", json!(language.code()));
            match translation_id {
                Some(id) => conflict.with("translation_id", json!(id)),
                None => conflict,
            }
        }
        S::TermExists(term_id) => ApiError::new(
            StatusCode::BAD_REQUEST,
            "term_exists",
            "A term with the name provided already exists with this parent.",
        )
        .with("term_id", json!(term_id)),
        S::DuplicateTermSlug => ApiError::new(
            StatusCode::BAD_REQUEST,
            "duplicate_term_slug",
            "The slug is already in use by another term.",
        ),
        S::TermCycle => ApiError::new(
            StatusCode::BAD_REQUEST,
            "rest_term_invalid",
            "A category cannot become its own ancestor.",
        ),
        S::NotHierarchical => ApiError::new(
            StatusCode::BAD_REQUEST,
            "rest_taxonomy_not_hierarchical",
            "Can not set parent term, taxonomy is not hierarchical.",
        ),
        S::Store(e) => ApiError::from(e),
        S::Index(e) => {
            tracing::error!(error = %e, "search index failure");
            ApiError::internal()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::SubCode;

    #[test]
    fn bodies_have_exactly_the_contract_shape() {
        let body = ApiError::no_route().body();
        assert_eq!(
            body,
            json!({"code": "rest_no_route", "message": "No route was found matching the URL and request method.", "data": {"status": 404}})
        );
        let invalid = ApiError::invalid_params(&[(
            "page".into(),
            Invalid::new(SubCode::OutOfBounds, "must be an integer of at least 1."),
        )])
        .body();
        assert_eq!(invalid["data"]["status"], 400);
        assert_eq!(
            invalid["data"]["params"]["page"],
            "page must be an integer of at least 1."
        );
        assert_eq!(
            invalid["data"]["details"]["page"]["code"],
            "rest_out_of_bounds"
        );
        assert_eq!(invalid["data"]["details"]["page"]["data"]["param"], "page");
        let missing = ApiError::missing_params(&["title", "start_date"]).body();
        assert_eq!(missing["data"]["params"], json!(["title", "start_date"]));
    }
}
