//! Whole answers kept between requests: calendar feeds between polls (`resources::feeds`),
//! the pages of the JSON lists and their single records (`http::process`; docs/api.md,
//! "Responses, caching and compression"), and the public pages (`http::pages`). A busy site asks for the same few of them over and over, and each costs
//! milliseconds to build; a repeated request of an unchanged calendar is answered from here.
//!
//! An answer is a function of the request (route, path values, parameters as validated,
//! caller, language segment), the store's version and the clock. The version is the one read
//! before the answer was built (it moves on with every commit and again once the index holds
//! it, as for the representation cache), so an answer is never served after a write it may
//! not show. Each entry carries the seconds it answers for: the rest of the day for a feed of
//! the default window, which moves at midnight, or just the second it was built in. Entries
//! are dropped least recently used first once their bytes reach the bound.

use crate::auth::Caller;
use crate::http::response::{Body, SharedBody};
use crate::http::routes::PathValues;
use crate::http::{ApiResponse, Context};
use crate::model::Language;
use lru::LruCache;
use std::ops::Range;
use std::sync::{Arc, Mutex};
use warp::http::header::HeaderName;
use warp::http::StatusCode;

/// What names one answer, apart from the store version and the clock.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum AnswerKey {
    /// An answer of a route of the namespace.
    Route {
        route: usize,
        path: PathValues,
        /// The parameters sent, as validated (`Params::sent_values`): however a request
        /// spells or orders them, the same values give the same key.
        params: Vec<(&'static str, String)>,
        caller: Caller,
        segment: Option<Language>,
    },
    /// A public page, as an anonymous visitor sees it: its decoded path and raw query.
    Page { path: Vec<String>, query: String },
}

impl AnswerKey {
    /// The key of the request's answer. None while a parameter is invalid: the values as
    /// validated leave it out, so they do not tell that request from a valid one (its answer
    /// is an error, never kept).
    pub(crate) fn of(ctx: &Context) -> Option<AnswerKey> {
        ctx.params.invalid.is_empty().then(|| AnswerKey::Route {
            route: ctx.route,
            path: ctx.path.clone(),
            params: ctx.params.sent_values(),
            caller: ctx.caller,
            segment: ctx.links.segment(),
        })
    }
}

/// A `200` answer's body and what goes with it: headers (totals, `Last-Modified`) and `Link`
/// relations. The body's tag and compressed form are computed once (`SharedBody`).
#[derive(Clone)]
pub(crate) struct CachedAnswer {
    pub body: Arc<SharedBody>,
    pub headers: Vec<(HeaderName, String)>,
    pub link_relations: Vec<(String, &'static str)>,
}

impl CachedAnswer {
    /// A handler's `200` answer, its body made shareable.
    pub(crate) fn from_answer(answer: ApiResponse) -> CachedAnswer {
        CachedAnswer {
            body: answer.body.into_shared(),
            headers: answer.headers,
            link_relations: answer.link_relations,
        }
    }

    pub(crate) fn answer(self) -> ApiResponse {
        ApiResponse {
            status: StatusCode::OK,
            body: Body::Shared(self.body),
            headers: self.headers,
            link_relations: self.link_relations,
        }
    }

    /// What the entry counts against the bound: the body with room for its compressed form
    /// (made on the first request that asks for it), and the headers.
    fn size(&self) -> usize {
        let headers: usize = self
            .headers
            .iter()
            .map(|(name, value)| name.as_str().len() + value.len())
            .sum();
        let relations: usize = self
            .link_relations
            .iter()
            .map(|(url, parameters)| url.len() + parameters.len())
            .sum();
        self.body.size() * 3 / 2 + headers + relations
    }
}

struct Entry {
    /// The Unix seconds it answers for.
    seconds: Range<i64>,
    answer: CachedAnswer,
    size: usize,
}

struct Kept {
    entries: LruCache<AnswerKey, Entry>,
    /// The store version of every entry: one of another version never answers again.
    version: u64,
    bytes: usize,
}

pub struct AnswerCache {
    kept: Mutex<Kept>,
    /// Bytes kept at most; 0 keeps nothing.
    limit: usize,
}

impl AnswerCache {
    pub(crate) fn new(limit: usize) -> AnswerCache {
        AnswerCache {
            kept: Mutex::new(Kept {
                entries: LruCache::unbounded(),
                version: 0,
                bytes: 0,
            }),
            limit,
        }
    }

    /// Whether anything is ever kept (a bound of 0 keeps nothing).
    pub(crate) fn keeps_anything(&self) -> bool {
        self.limit > 0
    }

    /// The answer kept for `key` at store version `version`, valid at Unix second `now`.
    pub(crate) fn get(&self, key: &AnswerKey, version: u64, now: i64) -> Option<CachedAnswer> {
        let mut kept = self.kept.lock().expect("answer cache lock");
        if kept.version != version {
            return None;
        }
        let entry = kept.entries.get(key)?;
        if entry.seconds.contains(&now) {
            return Some(entry.answer.clone());
        }
        // Its time is over (or the clock went back): it will not answer again.
        if let Some(entry) = kept.entries.pop(key) {
            kept.bytes -= entry.size;
        }
        None
    }

    /// Keeps `answer`, built from store version `version`, for the Unix seconds `seconds`.
    pub(crate) fn put(
        &self,
        key: AnswerKey,
        version: u64,
        seconds: Range<i64>,
        answer: CachedAnswer,
    ) {
        let size = answer.size();
        if !self.keeps_anything() || size > self.limit {
            return;
        }
        let mut kept = self.kept.lock().expect("answer cache lock");
        if version < kept.version {
            // A slower request of an older version: its answer is already out of date.
            return;
        }
        if version > kept.version {
            // Entries of older versions can never answer again.
            kept.entries.clear();
            kept.bytes = 0;
            kept.version = version;
        }
        if let Some(replaced) = kept.entries.pop(&key) {
            kept.bytes -= replaced.size;
        }
        while kept.bytes + size > self.limit {
            let Some((_, oldest)) = kept.entries.pop_lru() else {
                break;
            };
            kept.bytes -= oldest.size;
        }
        kept.bytes += size;
        kept.entries.put(
            key,
            Entry {
                seconds,
                answer,
                size,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::ical::MEDIA_TYPE;

    fn key(n: u64) -> AnswerKey {
        AnswerKey::Route {
            route: 0,
            path: PathValues::default(),
            params: vec![("categories", format!("[{n}]"))],
            caller: Caller::Anonymous,
            segment: None,
        }
    }

    /// An answer counting `bytes` against the bound.
    fn answer(bytes: usize) -> CachedAnswer {
        CachedAnswer {
            body: Arc::new(SharedBody::new(MEDIA_TYPE, vec![b'x'; bytes * 2 / 3])),
            headers: Vec::new(),
            link_relations: Vec::new(),
        }
    }

    #[test]
    fn entries_answer_for_their_version_and_seconds() {
        let cache = AnswerCache::new(1 << 20);
        cache.put(key(1), 7, 50..100, answer(30));
        assert!(cache.get(&key(1), 7, 99).is_some());
        assert!(cache.get(&key(1), 7, 50).is_some());
        assert!(cache.get(&key(1), 8, 99).is_none(), "a write came since");
        assert!(cache.get(&key(2), 7, 99).is_none());
        assert!(cache.get(&key(1), 7, 100).is_none(), "expired");
        assert!(cache.get(&key(1), 7, 99).is_none(), "dropped once expired");
        cache.put(key(3), 7, 50..51, answer(30));
        assert!(cache.get(&key(3), 7, 49).is_none(), "the clock went back");
        cache.put(key(2), 8, 50..100, answer(30));
        cache.put(key(1), 7, 50..100, answer(30));
        assert!(
            cache.get(&key(1), 7, 60).is_none(),
            "older than what is kept"
        );
        assert!(cache.get(&key(2), 8, 60).is_some());
    }

    #[test]
    fn the_least_recently_used_answers_go_when_the_bound_is_reached() {
        let cache = AnswerCache::new(100);
        for n in 0..4 {
            cache.put(key(n), 1, 0..100, answer(30));
        }
        // 0 was pushed out by 3; 1 is used again, so 2 goes next.
        assert!(cache.get(&key(1), 1, 0).is_some());
        cache.put(key(4), 1, 0..100, answer(30));
        let kept: Vec<u64> = (0..5)
            .filter(|n| cache.get(&key(*n), 1, 0).is_some())
            .collect();
        assert_eq!(kept, vec![1, 3, 4]);
        cache.put(key(9), 1, 0..100, answer(1000));
        assert!(cache.get(&key(9), 1, 0).is_none(), "larger than the bound");
        let nothing = AnswerCache::new(0);
        assert!(!nothing.keeps_anything());
        nothing.put(key(1), 1, 0..100, answer(0));
        assert!(nothing.get(&key(1), 1, 0).is_none());
    }
}
