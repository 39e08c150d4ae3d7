//! Option values that need more than clap's parsing, the connection limits
//! of `serve` and the log format (extensions, environment only).

use std::net::SocketAddr;
use std::time::Duration;

/// `--public-url`: an absolute http(s) URL with a host, optional port and path, no user info,
/// query or fragment. Returned without trailing slashes, otherwise as given.
pub(crate) fn parse_public_url(value: &str) -> Result<String, String> {
    let parsed =
        url::Url::parse(value).map_err(|e| format!("invalid public URL {value:?}: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("public URL {value:?} must use http or https"));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(format!("public URL {value:?} has no host"));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(format!("public URL {value:?} must not carry user info"));
    }
    if value.contains('?') || value.contains('#') {
        return Err(format!(
            "public URL {value:?} must not have a query or fragment"
        ));
    }
    Ok(value.trim_end_matches('/').to_string())
}

/// `--listen`: an IP literal and a port; host names are refused.
/// `30s`, `15m`, `12h`, `7d`.
pub(crate) fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration such as 7d, 12h, 30m or 45s"))?;
    let seconds = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(format!("{text:?}: the unit is s, m, h or d")),
    };
    Ok(std::time::Duration::from_secs(
        number.saturating_mul(seconds),
    ))
}

pub(crate) fn parse_listen(value: &str) -> Result<SocketAddr, String> {
    value.parse::<SocketAddr>().map_err(|_| {
        format!(
            "invalid listen address {value:?}: expected IP:PORT, e.g. 127.0.0.1:8080 or [::1]:8080"
        )
    })
}

/// The default public URL: `http://` + the bound address (IPv6 in brackets).
pub(crate) fn default_public_url(bound: SocketAddr) -> String {
    format!("http://{bound}")
}

/// Default cap on concurrent connections. Each one holds a task, buffers and a file
/// descriptor; without a cap a flood of connections exhausts descriptors (then the store and
/// the index cannot open files either). 1024 is far more than a calendar API serves at once.
pub(crate) const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// How long a client may take to send a request head, and how long a kept-alive connection may
/// sit idle before its next one. Real clients send a head in one packet; a slow-loris client
/// trickling bytes must not keep a connection slot for longer than this.
pub(crate) const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client may take to send a whole request body (at most 1 MiB): 60 s still
/// admits a 1 MiB body over a ~17 KB/s link, while a trickled body cannot hold its connection
/// slot indefinitely. Longer than the 10 s shutdown grace, so a body still arriving at shutdown
/// is dropped by the grace period, not by this timeout.
pub(crate) const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(60);
/// Upper bound for the configurable timeouts: anything longer defeats their purpose.
const MAX_TIMEOUT: Duration = Duration::from_secs(3600);

/// How many connections `serve` holds and how long a client may take to send its request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ConnectionLimits {
    /// Connections beyond this wait in the listen backlog until one closes (they are not
    /// refused: a burst of clients is served late rather than failed).
    pub max_connections: usize,
    pub header_read_timeout: Duration,
    pub body_read_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> ConnectionLimits {
        ConnectionLimits {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
        }
    }
}

impl ConnectionLimits {
    /// `ALMANAC_MAX_CONNECTIONS` (a positive integer), `ALMANAC_HEADER_TIMEOUT` and
    /// `ALMANAC_BODY_TIMEOUT` (seconds, decimals allowed, e.g. `0.5`). These are tuning knobs
    /// rather than everyday options, so they have no command-line flags; as for every
    /// variable, an empty value counts as unset.
    pub(crate) fn from_env() -> Result<ConnectionLimits, String> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<ConnectionLimits, String> {
        let value = |name: &str| lookup(name).filter(|v| !v.is_empty());
        let mut limits = ConnectionLimits::default();
        if let Some(v) = value("ALMANAC_MAX_CONNECTIONS") {
            limits.max_connections = v
                .trim()
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=1_000_000).contains(n))
                .ok_or_else(|| {
                    format!("invalid ALMANAC_MAX_CONNECTIONS {v:?}: expected an integer from 1 to 1000000")
                })?;
        }
        if let Some(v) = value("ALMANAC_HEADER_TIMEOUT") {
            limits.header_read_timeout = parse_seconds("ALMANAC_HEADER_TIMEOUT", &v)?;
        }
        if let Some(v) = value("ALMANAC_BODY_TIMEOUT") {
            limits.body_read_timeout = parse_seconds("ALMANAC_BODY_TIMEOUT", &v)?;
        }
        Ok(limits)
    }
}

/// How log lines are written to stderr (`ALMANAC_LOG_FORMAT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LogFormat {
    /// Human-readable lines (the default).
    Text,
    /// One JSON object per line.
    Json,
}

impl LogFormat {
    /// `ALMANAC_LOG_FORMAT`: `text` (default; empty counts as unset) or `json`.
    pub(crate) fn from_env() -> Result<LogFormat, String> {
        log_format_from(std::env::var("ALMANAC_LOG_FORMAT").ok())
    }
}

fn log_format_from(value: Option<String>) -> Result<LogFormat, String> {
    match value.as_deref().map(str::trim) {
        None | Some("") | Some("text") => Ok(LogFormat::Text),
        Some("json") => Ok(LogFormat::Json),
        Some(other) => Err(format!(
            "invalid ALMANAC_LOG_FORMAT {other:?}: expected text or json"
        )),
    }
}

/// Memory for whole calendar feeds kept between polls, by default.
pub(crate) const DEFAULT_FEED_CACHE_MB: usize = 64;

/// Memory for whole JSON read answers (lists, single records) kept between requests, by default.
pub(crate) const DEFAULT_RESPONSE_CACHE_MB: usize = 64;

/// The bounds of the caches of whole answers, in bytes (0 keeps nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CacheSizes {
    /// `ALMANAC_FEED_CACHE_MB`: calendar feeds kept between polls.
    pub feeds: usize,
    /// `ALMANAC_RESPONSE_CACHE_MB`: JSON read answers kept between requests.
    pub responses: usize,
}

impl CacheSizes {
    pub(crate) fn from_env() -> Result<CacheSizes, String> {
        CacheSizes::from_lookup(|name| std::env::var(name).ok())
    }

    fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<CacheSizes, String> {
        Ok(CacheSizes {
            feeds: megabytes(
                "ALMANAC_FEED_CACHE_MB",
                lookup("ALMANAC_FEED_CACHE_MB"),
                DEFAULT_FEED_CACHE_MB,
            )?,
            responses: megabytes(
                "ALMANAC_RESPONSE_CACHE_MB",
                lookup("ALMANAC_RESPONSE_CACHE_MB"),
                DEFAULT_RESPONSE_CACHE_MB,
            )?,
        })
    }
}

/// A cache bound given in megabytes, 0 to 1048576 (empty counts as unset), in bytes.
fn megabytes(name: &str, value: Option<String>, default: usize) -> Result<usize, String> {
    let megabytes = match value.filter(|v| !v.is_empty()) {
        None => default,
        Some(v) => v
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|n| *n <= 1 << 20)
            .ok_or_else(|| format!("invalid {name} {v:?}: expected megabytes from 0 to 1048576"))?,
    };
    Ok(megabytes * 1024 * 1024)
}

/// How long the newest writes may stay searchable from memory before the index commits them
/// together (docs/architecture.md, "Consistency"), by default.
pub const DEFAULT_INDEX_COMMIT_DELAY: Duration = Duration::from_millis(250);

/// `ALMANAC_INDEX_COMMIT_DELAY` (seconds, decimals allowed): longer shares each index commit
/// among more writes (less CPU per write), and leaves more for a start after a crash to replay.
pub(crate) fn index_commit_delay_from_env() -> Result<Duration, String> {
    match std::env::var("ALMANAC_INDEX_COMMIT_DELAY")
        .ok()
        .filter(|v| !v.is_empty())
    {
        None => Ok(DEFAULT_INDEX_COMMIT_DELAY),
        Some(v) => parse_seconds("ALMANAC_INDEX_COMMIT_DELAY", &v),
    }
}

/// A positive number of seconds up to an hour.
fn parse_seconds(name: &str, value: &str) -> Result<Duration, String> {
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= MAX_TIMEOUT.as_secs_f64())
        .map(Duration::from_secs_f64)
        .ok_or_else(|| {
            format!(
                "invalid {name} {value:?}: expected a number of seconds above 0 and at most {}",
                MAX_TIMEOUT.as_secs()
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_formats() {
        assert_eq!(log_format_from(None), Ok(LogFormat::Text));
        assert_eq!(log_format_from(Some(String::new())), Ok(LogFormat::Text));
        assert_eq!(log_format_from(Some("text".into())), Ok(LogFormat::Text));
        assert_eq!(log_format_from(Some("json".into())), Ok(LogFormat::Json));
        for bad in ["xml", "JSON ", "Json"] {
            assert!(log_format_from(Some(bad.into())).is_err(), "{bad}");
        }
    }

    #[test]
    fn cache_sizes_are_megabytes_or_refused() {
        let sizes = |feeds: Option<&'static str>, responses: Option<&'static str>| {
            CacheSizes::from_lookup(move |name| match name {
                "ALMANAC_FEED_CACHE_MB" => feeds.map(str::to_string),
                "ALMANAC_RESPONSE_CACHE_MB" => responses.map(str::to_string),
                _ => None,
            })
        };
        let both = |feeds, responses| Ok(CacheSizes { feeds, responses });
        assert_eq!(sizes(None, None), both(64 << 20, 64 << 20));
        assert_eq!(sizes(Some(""), Some("")), both(64 << 20, 64 << 20));
        assert_eq!(sizes(Some(" 0 "), Some("8")), both(0, 8 << 20));
        assert_eq!(sizes(Some("8"), Some("0")), both(8 << 20, 0));
        for bad in ["-1", "lots", "2000000", "1.5"] {
            let refused = sizes(Some(bad), None).unwrap_err();
            assert!(refused.contains("ALMANAC_FEED_CACHE_MB"), "{refused}");
            let refused = sizes(None, Some(bad)).unwrap_err();
            assert!(refused.contains("ALMANAC_RESPONSE_CACHE_MB"), "{refused}");
        }
    }

    #[test]
    fn connection_limits_from_the_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            ConnectionLimits::from_lookup(move |name| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            })
        };
        assert_eq!(env(&[]), Ok(ConnectionLimits::default()));
        assert_eq!(
            env(&[
                ("ALMANAC_MAX_CONNECTIONS", ""),
                ("ALMANAC_HEADER_TIMEOUT", "")
            ]),
            Ok(ConnectionLimits::default()),
            "empty counts as unset"
        );
        assert_eq!(
            env(&[
                ("ALMANAC_MAX_CONNECTIONS", "2"),
                ("ALMANAC_HEADER_TIMEOUT", "0.5"),
                ("ALMANAC_BODY_TIMEOUT", "3")
            ]),
            Ok(ConnectionLimits {
                max_connections: 2,
                header_read_timeout: Duration::from_millis(500),
                body_read_timeout: Duration::from_secs(3),
            })
        );
        for bad in [
            ("ALMANAC_MAX_CONNECTIONS", "0"),
            ("ALMANAC_MAX_CONNECTIONS", "-1"),
            ("ALMANAC_MAX_CONNECTIONS", "many"),
            ("ALMANAC_HEADER_TIMEOUT", "0"),
            ("ALMANAC_HEADER_TIMEOUT", "NaN"),
            ("ALMANAC_BODY_TIMEOUT", "inf"),
            ("ALMANAC_BODY_TIMEOUT", "3601"),
        ] {
            let pairs: &'static [(&'static str, &'static str)] = Box::leak(Box::new([bad]));
            assert!(env(pairs).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn public_urls() {
        assert_eq!(
            parse_public_url("https://example.org/api/").unwrap(),
            "https://example.org/api"
        );
        assert_eq!(
            parse_public_url("http://127.0.0.1:8080").unwrap(),
            "http://127.0.0.1:8080"
        );
        for bad in [
            "example.org",
            "ftp://example.org",
            "http://u:p@example.org",
            "http://example.org/?q=1",
            "http://example.org/#f",
            "http://",
        ] {
            assert!(parse_public_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn listen_addresses() {
        assert!(parse_listen("127.0.0.1:0").is_ok());
        assert!(parse_listen("[::1]:8080").is_ok());
        assert!(parse_listen("localhost:8080").is_err());
        assert_eq!(
            default_public_url("[::1]:9000".parse().unwrap()),
            "http://[::1]:9000"
        );
    }
}
