//! Option values that need more than clap's parsing (common.md §8.2).

use std::net::SocketAddr;

/// `--public-url`: an absolute http(s) URL with a host, optional port and path, no user info,
/// query or fragment. Returned without trailing slashes, otherwise as given.
pub fn parse_public_url(value: &str) -> Result<String, String> {
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
pub fn parse_listen(value: &str) -> Result<SocketAddr, String> {
    value.parse::<SocketAddr>().map_err(|_| {
        format!(
            "invalid listen address {value:?}: expected IP:PORT, e.g. 127.0.0.1:8080 or [::1]:8080"
        )
    })
}

/// The default public URL: `http://` + the bound address (IPv6 in brackets).
pub fn default_public_url(bound: SocketAddr) -> String {
    format!("http://{bound}")
}

#[cfg(test)]
mod tests {
    use super::*;

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
