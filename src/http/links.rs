//! Absolute links: the public URL `P`, the request's language segment `L`, and the namespace
//! root `N = P + L + "/cal/events/v1"`.

use crate::model::Language;
use std::sync::Arc;

pub(crate) const NAMESPACE: &str = "cal/events/v1";

#[derive(Debug, Clone)]
pub struct Links {
    public_url: Arc<str>,
    /// The language segment the request came in with (`None` for the bare, English paths).
    segment: Option<Language>,
}

impl Links {
    pub(crate) fn new(public_url: Arc<str>, segment: Option<Language>) -> Links {
        Links {
            public_url,
            segment,
        }
    }

    /// The language segment the request came in with.
    pub(crate) fn segment(&self) -> Option<Language> {
        self.segment
    }

    /// `P`, without trailing slash.
    pub(crate) fn public_url(&self) -> &str {
        &self.public_url
    }

    /// `P + L`.
    pub(crate) fn site(&self) -> String {
        match self.segment {
            Some(lang) => format!("{}/{}", self.public_url, lang.code()),
            None => self.public_url.to_string(),
        }
    }

    /// `P + L + "/"`: the REST root index, target of the discovery link.
    pub(crate) fn rest_root(&self) -> String {
        format!("{}/", self.site())
    }

    /// `N`.
    pub(crate) fn namespace(&self) -> String {
        format!("{}/{NAMESPACE}", self.site())
    }

    /// `N` + a path relative to the namespace (`"/events"`, or `""` for the root itself).
    pub(crate) fn route(&self, relative: &str) -> String {
        format!("{}{relative}", self.namespace())
    }
}

/// `application/x-www-form-urlencoded` encoding of link query strings: ASCII letters, digits
/// and `*-._` unchanged, space as `+`, every other byte as `%XX`.
pub(crate) fn form_encode(pairs: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for (i, (name, value)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        encode_component(name, &mut out);
        out.push('=');
        encode_component(value, &mut out);
    }
    out
}

fn encode_component(s: &str, out: &mut String) {
    for b in s.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_follow_the_request_segment() {
        let en = Links::new("http://h".into(), None);
        let es = Links::new("http://h/api".into(), Some(Language::Es));
        assert_eq!(en.rest_root(), "http://h/");
        assert_eq!(en.route("/events"), "http://h/cal/events/v1/events");
        assert_eq!(es.namespace(), "http://h/api/es/cal/events/v1");
        assert_eq!(es.rest_root(), "http://h/api/es/");
    }

    #[test]
    fn form_encoding_matches_the_contract() {
        assert_eq!(
            form_encode(&[("start_date", "2025-01-01 10:00:00"), ("c", "3,7")]),
            "start_date=2025-01-01+10%3A00%3A00&c=3%2C7"
        );
        assert_eq!(form_encode(&[("s", "São*-._~")]), "s=S%C3%A3o*-._%7E");
    }
}
