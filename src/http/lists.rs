//! What the five list routes share (docs/api.md, "Pagination and links"): `page`/`per_page`,
//! the link URLs `rest_url`, `next_rest_url`, `previous_rest_url`, the totals headers and the
//! `Link` relations.

use crate::http::links::{form_encode, Links};
use crate::http::params::{ParamKind, ParamSpec, Params};
use crate::http::response::Body;
use crate::http::ApiResponse;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use warp::http::header::HeaderName;

/// `per_page` values above this are lowered to it.
pub(crate) const MAX_PER_PAGE: i64 = 50;

/// The `page` and `per_page` parameters every list declares.
pub(crate) fn paging_params() -> Vec<ParamSpec> {
    let positive = ParamKind::Integer {
        minimum: Some(1),
        maximum: None,
    };
    vec![
        ParamSpec::query("page", positive)
            .describe("Page of the list to return.")
            .default(json!(1)),
        ParamSpec::query("per_page", positive)
            .describe("Records per page; values above 50 are lowered to 50.")
            .default(json!(10)),
    ]
}

/// The `status` of post-kind list links: `publish` for callers who may not
/// edit, else the list given, or `any`.
pub(crate) fn status_link_value(caller: crate::auth::Caller, given: Option<&[String]>) -> String {
    if !caller.has(crate::auth::Capability::EditPosts) {
        return "publish".into();
    }
    given.map(|s| s.join(",")).unwrap_or_else(|| "any".into())
}

/// `(page, per_page)` after clamping.
pub(crate) fn paging(params: &Params) -> (usize, usize) {
    let page = params.i64("page").unwrap_or(1).max(1) as usize;
    let per_page = params.i64("per_page").unwrap_or(10).clamp(1, MAX_PER_PAGE) as usize;
    (page, per_page)
}

/// One list answer: the items under their key, and the link and total members placed in the
/// order the resource wants them.
pub(crate) struct ListAnswer<'a> {
    pub links: &'a Links,
    /// `"venues"`, `"categories"`, ...
    pub collection: &'static str,
    pub page: usize,
    pub per_page: usize,
    pub total: usize,
    /// The link query after `per_page`: the list's own parameters, normalised, in order.
    pub query: Vec<(&'static str, String)>,
    /// `translation_language` when it was sent explicitly.
    pub explicit_language: Option<&'static str>,
}

pub(crate) struct ListLinks {
    pub rest_url: String,
    pub next: Option<String>,
    pub previous: Option<String>,
    pub total_pages: usize,
}

impl ListAnswer<'_> {
    pub(crate) fn links(&self) -> ListLinks {
        let base = format!("{}/", self.links.route(&format!("/{}", self.collection)));
        let per_page = self.per_page.to_string();
        let mut pairs: Vec<(&str, &str)> = vec![("per_page", &per_page)];
        pairs.extend(self.query.iter().map(|(k, v)| (*k, v.as_str())));
        if let Some(language) = self.explicit_language {
            pairs.push(("translation_language", language));
        }
        let q = form_encode(&pairs);
        let total_pages = self.total.div_ceil(self.per_page);
        let page = self.page;
        ListLinks {
            rest_url: format!("{base}?page={page}&{q}"),
            next: (page < total_pages).then(|| format!("{base}?{q}&page={}", page + 1)),
            previous: (page > 1).then(|| {
                if page - 1 > 1 {
                    format!("{base}?{q}&page={}", page - 1)
                } else {
                    format!("{base}?{q}")
                }
            }),
            total_pages,
        }
    }

    /// The 200 answer of a post-kind list (events, venues, organizers): the items, then the
    /// links and totals, in the plugin's key order.
    /// The items are serialized JSON objects (see `representations`): they are spliced into
    /// the body as they are, which is what serializing the whole object would write.
    pub(crate) fn post_kind_answer(&self, items: &[Arc<str>]) -> ApiResponse {
        let links = self.links();
        let mut tail = Map::new();
        tail.insert("rest_url".into(), json!(links.rest_url));
        if let Some(next) = &links.next {
            tail.insert("next_rest_url".into(), json!(next));
        }
        if let Some(previous) = &links.previous {
            tail.insert("previous_rest_url".into(), json!(previous));
        }
        tail.insert("total".into(), json!(self.total));
        tail.insert("total_pages".into(), json!(links.total_pages));
        let tail = serde_json::to_vec(&tail).expect("JSON values always serialize");
        let mut body = Vec::with_capacity(items.iter().map(|i| i.len() + 1).sum::<usize>() + 300);
        body.extend_from_slice(b"{\"");
        body.extend_from_slice(self.collection.as_bytes());
        body.extend_from_slice(b"\":[");
        for (n, item) in items.iter().enumerate() {
            if n > 0 {
                body.push(b',');
            }
            body.extend_from_slice(item.as_bytes());
        }
        body.extend_from_slice(b"],");
        // The members after the items: `tail` without its opening brace.
        body.extend_from_slice(&tail[1..]);
        self.finish(ApiResponse::ok_body(Body::Serialized(body)), &links)
    }

    /// The 200 answer with the totals headers and `Link` relations; `body` already holds the
    /// members in the resource's order, built by the caller with [`ListLinks`].
    pub(crate) fn respond(&self, body: Map<String, Value>, links: &ListLinks) -> ApiResponse {
        self.finish(ApiResponse::ok(Value::Object(body)), links)
    }

    fn finish(&self, answer: ApiResponse, links: &ListLinks) -> ApiResponse {
        let mut answer = answer
            .header(
                HeaderName::from_static("x-cal-total"),
                self.total.to_string(),
            )
            .header(
                HeaderName::from_static("x-cal-totalpages"),
                links.total_pages.to_string(),
            );
        if let Some(next) = &links.next {
            answer.link_relations.push((next.clone(), "rel=\"next\""));
        }
        if let Some(previous) = &links.previous {
            answer
                .link_relations
                .push((previous.clone(), "rel=\"prev\""));
        }
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_follow_the_plugin_layout() {
        let links = Links::new("http://h".into(), None);
        let answer = ListAnswer {
            links: &links,
            collection: "venues",
            page: 2,
            per_page: 2,
            total: 5,
            query: vec![("status", "publish".into())],
            explicit_language: None,
        };
        let l = answer.links();
        assert_eq!(
            l.rest_url,
            "http://h/cal/events/v1/venues/?page=2&per_page=2&status=publish"
        );
        assert_eq!(
            l.next.as_deref(),
            Some("http://h/cal/events/v1/venues/?per_page=2&status=publish&page=3")
        );
        assert_eq!(
            l.previous.as_deref(),
            Some("http://h/cal/events/v1/venues/?per_page=2&status=publish")
        );
        assert_eq!(l.total_pages, 3);
    }

    #[test]
    fn spliced_members_serialize_like_the_whole_object() {
        let links = Links::new("http://h".into(), None);
        let answer = ListAnswer {
            links: &links,
            collection: "events",
            page: 2,
            per_page: 1,
            total: 3,
            query: vec![("search", "a \"b\"".into())],
            explicit_language: None,
        };
        let items: Vec<Value> = vec![json!({"id": 1, "title": "é \u{1F600} <b>"})];
        let spliced: Vec<Arc<str>> = items.iter().map(|v| v.to_string().into()).collect();
        let Body::Serialized(bytes) = answer.post_kind_answer(&spliced).body else {
            panic!("post-kind lists are spliced");
        };
        let l = answer.links();
        let whole = json!({
            "events": items,
            "rest_url": l.rest_url,
            "next_rest_url": l.next,
            "previous_rest_url": l.previous,
            "total": 3,
            "total_pages": 3,
        });
        assert_eq!(String::from_utf8(bytes).unwrap(), whole.to_string());
        let empty = answer.post_kind_answer(&[]);
        let Body::Serialized(bytes) = empty.body else {
            panic!("post-kind lists are spliced");
        };
        let parsed: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(parsed["events"], json!([]));
    }
}
