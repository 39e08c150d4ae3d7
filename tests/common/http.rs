//! Request shorthands on [`Server`], a keep-alive client for load tests, and form-encoded query
//! strings.

use std::time::Duration;

use serde_json::Value;

use super::{basic, Resp, Server, TestUser, NS};

impl Server {
    /// `method path` as `who` (anonymous when `None`), with `body` as JSON when given.
    pub fn send(
        &self,
        method: &str,
        path: &str,
        who: Option<&TestUser>,
        body: Option<&Value>,
    ) -> Resp {
        let mut r = self.req(method, path);
        if let Some(u) = who {
            r = r.user(u);
        }
        if let Some(b) = body {
            r = r.json_body(b);
        }
        r.send()
    }

    /// `method path` with a JSON body as `u`, asserting `status`; returns the answer's JSON.
    pub fn write(
        &self,
        method: &str,
        path: &str,
        u: &TestUser,
        body: &Value,
        status: u16,
    ) -> Value {
        let r = self.send(method, path, Some(u), Some(body));
        assert_eq!(r.status, status, "{method} {path} {body}: {}", r.describe());
        r.json()
    }

    /// `POST path` with a JSON body as `u`, asserting 201; returns the created record.
    pub fn create(&self, u: &TestUser, path: &str, body: &Value) -> Value {
        self.write("POST", path, u, body, 201)
    }

    /// `GET path` as `who` (anonymous when `None`), asserting 200; returns the JSON.
    pub fn get_ok(&self, path: &str, who: Option<&TestUser>) -> Value {
        let r = self.send("GET", path, who, None);
        assert_eq!(r.status, 200, "GET {path}: {}", r.describe());
        r.json()
    }
}

/// One answer of [`Http`]: status, the totals headers and the JSON body (`Value::String` with
/// the raw text when the body is not JSON).
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub total: Option<String>,
    pub total_pages: Option<String>,
    pub body: Value,
}

/// A keep-alive client for many requests under the namespace (a [`Server`] request opens a
/// connection each); `user: None` is anonymous.
#[derive(Clone)]
pub struct Http {
    client: reqwest::blocking::Client,
    base: String,
    prefix: String,
    auth: Option<String>,
}

impl Http {
    /// A client of the server at `base` (`http://HOST:PORT`) whose requests time out after
    /// `timeout`.
    pub fn new(base: &str, user: Option<&TestUser>, timeout: Duration) -> Http {
        Http {
            client: reqwest::blocking::Client::builder()
                .no_proxy()
                // As sent: compression is the tests' to ask for and to undo.
                .no_gzip()
                .timeout(timeout)
                .build()
                .unwrap(),
            base: base.to_string(),
            prefix: format!("{base}{NS}"),
            auth: user.map(|u| basic(u.name, u.password)),
        }
    }

    /// The same client with its requests under the language segment `seg` (`/es`).
    pub fn language(&self, seg: &str) -> Http {
        Http {
            prefix: format!("{}{seg}{NS}", self.base),
            ..self.clone()
        }
    }

    /// `method NS+path` with `body` as JSON when given; a transport failure is an `Err`.
    pub fn try_send(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Answer, String> {
        let url = format!("{}{path}", self.prefix);
        let mut rb = self.client.request(
            reqwest::Method::from_bytes(method.as_bytes()).unwrap(),
            &url,
        );
        if let Some(a) = &self.auth {
            rb = rb.header("Authorization", a);
        }
        if let Some(b) = body {
            rb = rb
                .header("Content-Type", "application/json")
                .body(serde_json::to_vec(b).unwrap());
        }
        let r = rb.send().map_err(|e| format!("{method} {url}: {e}"))?;
        let status = r.status().as_u16();
        let header = |n: &str| {
            r.headers()
                .get(n)
                .map(|v| v.to_str().unwrap_or("?").to_string())
        };
        let (total, total_pages) = (header("x-cal-total"), header("x-cal-totalpages"));
        let bytes = r
            .bytes()
            .map_err(|e| format!("{method} {url}: body not read: {e}"))?;
        let body = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
        Ok(Answer {
            status,
            total,
            total_pages,
            body,
        })
    }

    /// [`Http::try_send`] for a request that must be answered.
    pub fn send(&self, method: &str, path: &str, body: Option<&Value>) -> Answer {
        self.try_send(method, path, body)
            .unwrap_or_else(|e| panic!("no answer: {e}"))
    }

    /// `GET NS+path`, which must be answered.
    pub fn get(&self, path: &str) -> Answer {
        self.send("GET", path, None)
    }

    /// A write that must succeed with `status`; returns the body.
    pub fn write(&self, method: &str, path: &str, body: &Value, status: u16) -> Value {
        let a = self.send(method, path, Some(body));
        assert_eq!(a.status, status, "{method} {path} {body}: {}", a.body);
        a.body
    }
}

/// `application/x-www-form-urlencoded` encoding: letters, digits and `*-._` kept, space as `+`.
pub fn form_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Decodes one form-encoded key or value (`+` is a space).
pub fn form_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).expect("bad escape"));
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).unwrap()
}

/// The decoded parameters of a URL's query, in order.
pub fn query_params(url: &str) -> Vec<(String, String)> {
    let query = url.split_once('?').map(|(_, q)| q).unwrap_or("");
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (form_decode(k), form_decode(v))
        })
        .collect()
}

/// The `rest_url`, `next_rest_url` and `previous_rest_url` of page `page` of `pages` of a list at
/// `coll_base` (ending in `/`) whose effective parameters render as `q`.
pub fn page_urls(
    coll_base: &str,
    q: &str,
    page: u64,
    pages: u64,
) -> (String, Option<String>, Option<String>) {
    let rest = format!("{coll_base}?page={page}&{q}");
    let next = (page < pages).then(|| format!("{coll_base}?{q}&page={}", page + 1));
    let prev = (page > 1).then(|| {
        if page - 1 > 1 {
            format!("{coll_base}?{q}&page={}", page - 1)
        } else {
            format!("{coll_base}?{q}")
        }
    });
    (rest, next, prev)
}

/// The `Link` value of a list page: the discovery link of `site` (`P` and any language
/// segment), then `next` and `prev` where given.
pub fn pages_link(site: &str, next: Option<&str>, prev: Option<&str>) -> String {
    let mut link = format!("<{site}/>; rel=\"https://api.w.org/\"");
    if let Some(n) = next {
        link.push_str(&format!(", <{n}>; rel=\"next\""));
    }
    if let Some(p) = prev {
        link.push_str(&format!(", <{p}>; rel=\"prev\""));
    }
    link
}
