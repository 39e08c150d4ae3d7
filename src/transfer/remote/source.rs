//! The other site's events API, as the copier reads it: which API it is, and each GET with
//! the network faults handled (timeouts, retries with backoff, `Retry-After`), never leaving
//! the site it was given.

use crate::model::Language;
use reqwest::blocking::{Client, Response};
use reqwest::StatusCode;
use serde_json::Value;
use std::time::Duration;
use url::Url;

/// The longest wait between two tries of a request (backoff, or a `Retry-After` asking more).
const MAX_WAIT: Duration = Duration::from_secs(60);

/// Which events API the source runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavour {
    /// Another almanac (`…/cal/events/v1`): languages, translations and the lossless
    /// `context=export` form for editors.
    Almanac,
    /// The Events Calendar on WordPress (`…/wp-json/tribe/events/v1`): one language.
    EventsCalendar,
}

impl Flavour {
    fn of_namespace(namespace: &str) -> Option<Flavour> {
        match namespace {
            "cal/events/v1" => Some(Flavour::Almanac),
            "tribe/events/v1" => Some(Flavour::EventsCalendar),
            _ => None,
        }
    }

    fn total_pages_header(self) -> &'static str {
        match self {
            Flavour::Almanac => "X-Cal-TotalPages",
            Flavour::EventsCalendar => "X-TEC-TotalPages",
        }
    }

    fn total_header(self) -> &'static str {
        match self {
            Flavour::Almanac => "X-Cal-Total",
            Flavour::EventsCalendar => "X-TEC-Total",
        }
    }
}

/// Why a request to the source failed for good.
#[derive(Debug, thiserror::Error)]
#[error("{url}: {message}")]
pub(crate) struct SourceError {
    pub url: String,
    pub message: String,
    /// The source's answer, when it answered: 404 or 401 on a single record means the record
    /// is not (or no longer) at the source for this reader.
    pub status: Option<u16>,
    /// The source refused the ID in the URL as naming none of its records of that kind: The
    /// Events Calendar (and almanac, which answers as it does) says so about an unknown venue,
    /// organizer or term with `400 rest_invalid_param` on `id`, and about an ID that is not an
    /// event's with `400 rest-invalid-event-id`.
    pub unknown_id: bool,
}

impl SourceError {
    /// Whether a single record's answer means the record is not at the source (for this
    /// reader).
    pub(crate) fn record_gone(&self) -> bool {
        matches!(self.status, Some(401 | 403 | 404 | 410)) || self.unknown_id
    }
}

/// A list page: its records, and the totals the source announced.
pub(crate) struct Page {
    pub body: Value,
    pub total: Option<u64>,
    pub total_pages: Option<u64>,
}

/// How the source is reached.
pub(crate) struct Connection {
    pub user: Option<(String, String)>,
    pub timeout: Duration,
    /// Tries after the first on a connection error, a timeout, a 5xx or a 429.
    pub retries: u32,
    /// The first backoff; each retry doubles it.
    pub backoff: Duration,
}

pub(crate) struct Source {
    client: Client,
    root: Url,
    pub flavour: Flavour,
    connection: Connection,
}

impl Connection {
    /// Sends the request `build` makes until it is answered with neither a 5xx nor a 429, or
    /// the tries run out: connection errors, timeouts, 5xx and 429 are tried `retries` times
    /// more, after a wait doubling from `backoff` up to a minute, or as long as `Retry-After`
    /// asks (a minute at most). The last answer, or the last error.
    pub(crate) fn send(
        &self,
        build: impl Fn() -> reqwest::blocking::RequestBuilder,
    ) -> Result<Response, reqwest::Error> {
        let mut wait = self.backoff;
        let mut tries_left = self.retries;
        loop {
            let mut request = build();
            if let Some((name, password)) = &self.user {
                request = request.basic_auth(name, Some(password));
            }
            let outcome = request.send();
            let retryable = match &outcome {
                Ok(response) => {
                    let status = response.status();
                    status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS
                }
                Err(_) => true,
            };
            if !retryable || tries_left == 0 {
                return outcome;
            }
            tries_left -= 1;
            let (url, said) = match &outcome {
                Ok(response) => (Some(response.url()), response.status().to_string()),
                Err(e) => (e.url(), e.to_string()),
            };
            let url = url.map(Url::to_string).unwrap_or_default();
            if let Some(asked) = outcome.as_ref().ok().and_then(retry_after) {
                wait = asked.min(MAX_WAIT);
            }
            tracing::warn!(url = %url, error = %said, wait_ms = wait.as_millis() as u64, "retrying");
            std::thread::sleep(wait);
            wait = (wait * 2).min(MAX_WAIT);
        }
    }
}

impl Source {
    /// Reads the namespace index at `root` to learn which API it is.
    pub(crate) fn open(root: &str, connection: Connection) -> Result<Source, SourceError> {
        let root = Url::parse(root.trim_end_matches('/'))
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
            .ok_or_else(|| SourceError {
                url: root.to_string(),
                message: "not an http:// or https:// URL".into(),
                status: None,
                unknown_id: false,
            })?;
        let origin = root.origin();
        // Redirects are followed only within the site: nothing is ever asked of another host.
        let redirects = reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() >= 5 || attempt.url().origin() != origin {
                attempt.stop()
            } else {
                attempt.follow()
            }
        });
        let client = Client::builder()
            .timeout(connection.timeout)
            .connect_timeout(connection.timeout.min(Duration::from_secs(10)))
            .redirect(redirects)
            .user_agent(concat!("almanac/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| SourceError {
                url: root.to_string(),
                message: format!("cannot set up an HTTP client: {e}"),
                status: None,
                unknown_id: false,
            })?;
        let mut source = Source {
            client,
            root,
            flavour: Flavour::Almanac,
            connection,
        };
        let index = source.get(source.root.clone())?;
        let namespace = index
            .body
            .get("namespace")
            .and_then(Value::as_str)
            .unwrap_or_default();
        source.flavour = Flavour::of_namespace(namespace).ok_or_else(|| SourceError {
            url: source.root.to_string(),
            message: format!(
                "not the REST root of an events API (its namespace is {namespace:?}; expected \
                 \"tribe/events/v1\" or \"cal/events/v1\")"
            ),
            status: None,
            unknown_id: false,
        })?;
        Ok(source)
    }

    /// The URL of a collection (`events`) or record (`events/12`) with `query`.
    pub(crate) fn url(&self, path: &str, query: &[(&str, String)]) -> Url {
        let mut url = self.root.clone();
        url.set_path(&format!(
            "{}/{path}",
            self.root.path().trim_end_matches('/')
        ));
        if !query.is_empty() {
            url.query_pairs_mut()
                .extend_pairs(query.iter().map(|(k, v)| (*k, v.as_str())));
        }
        url
    }

    /// The parameter that selects a language at an almanac source.
    pub(crate) fn language_param(&self, language: Language) -> Option<(&'static str, String)> {
        (self.flavour == Flavour::Almanac)
            .then(|| ("translation_language", language.code().to_string()))
    }

    /// GET `url`, retried on faults that may pass; a JSON body.
    pub(crate) fn get(&self, url: Url) -> Result<Page, SourceError> {
        let answer = self.connection.send(|| {
            self.client
                .get(url.clone())
                .header("Accept", "application/json")
        });
        match answer {
            Ok(response) if response.status().is_success() => self.page(&url, response),
            Ok(response) => Err(refusal(&url, response.status(), response)),
            Err(e) => Err(SourceError {
                url: url.to_string(),
                message: if e.is_timeout() {
                    format!("no answer within {} s", self.connection.timeout.as_secs())
                } else {
                    format!("cannot reach the source: {e}")
                },
                status: None,
                unknown_id: false,
            }),
        }
    }

    fn page(&self, url: &Url, response: Response) -> Result<Page, SourceError> {
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
        };
        let total = header(self.flavour.total_header());
        let total_pages = header(self.flavour.total_pages_header());
        let bytes = response.bytes().map_err(|e| SourceError {
            url: url.to_string(),
            message: format!("the answer was cut short: {e}"),
            status: None,
            unknown_id: false,
        })?;
        let body = serde_json::from_slice(&bytes).map_err(|e| SourceError {
            url: url.to_string(),
            message: format!("the answer is not JSON: {e}"),
            status: None,
            unknown_id: false,
        })?;
        Ok(Page {
            body,
            total,
            total_pages,
        })
    }
}

/// `Retry-After` in seconds (the form APIs send; an HTTP date is read as "the usual backoff").
fn retry_after(response: &Response) -> Option<Duration> {
    response
        .headers()
        .get("Retry-After")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs)
}

/// A failure answer, with what the source said about it.
fn refusal(url: &Url, status: StatusCode, response: Response) -> SourceError {
    let body = response.json::<Value>().ok();
    let said = body.as_ref().and_then(|body| {
        body.get("message")
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    let code = body
        .as_ref()
        .and_then(|b| b.get("code"))
        .and_then(Value::as_str);
    let unknown_id = status == StatusCode::BAD_REQUEST
        && match code {
            Some("rest-invalid-event-id") => true,
            Some("rest_invalid_param") => body
                .as_ref()
                .and_then(|b| b.pointer("/data/params/id"))
                .is_some(),
            _ => false,
        };
    let hint = match status.as_u16() {
        401 => " (the source wants credentials: --user NAME:APPLICATION-PASSWORD)",
        403 => " (the user may not read this)",
        404 => " (no such route at the source: is the URL the REST root of its events API?)",
        _ if status.is_redirection() => " (a redirect to another site, not followed)",
        _ => "",
    };
    SourceError {
        url: url.to_string(),
        message: match said {
            Some(said) => format!("{status}: {said}{hint}"),
            None => format!("{status}{hint}"),
        },
        status: Some(status.as_u16()),
        unknown_id,
    }
}
