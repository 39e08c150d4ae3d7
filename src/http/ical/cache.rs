//! Whole feeds kept between polls. Calendar apps poll the same few feeds every few minutes,
//! and a feed of hundreds of events costs milliseconds to build and compress; a poll of an
//! unchanged calendar is answered from here.
//!
//! A feed is a function of the request (route, path values, parameters as parsed, caller,
//! language segment), the store's version and the clock. The version is the one read before
//! the feed was built (it moves on with every commit and again once the index holds it, as
//! for the representation cache), so a feed is never served after a write it may not show. The
//! clock matters by the day (the default window) or, for queries that follow it closer, by the
//! second: each entry carries the instant it stops being valid.

use crate::auth::Caller;
use crate::http::response::SharedBody;
use crate::http::routes::PathValues;
use crate::model::Language;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use warp::http::header::HeaderName;

/// What names one feed, apart from the store version and the clock.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct FeedKey {
    pub route: usize,
    pub path: PathValues,
    pub params: Vec<(&'static str, String)>,
    pub caller: Caller,
    pub segment: Option<Language>,
}

/// A feed's body and the headers that go with it.
#[derive(Clone)]
pub(crate) struct CachedFeed {
    pub body: Arc<SharedBody>,
    pub headers: Vec<(HeaderName, String)>,
}

struct Entry {
    version: u64,
    /// Unix second from which the entry no longer answers.
    expires: i64,
    feed: CachedFeed,
    /// What the entry counts against the bound.
    size: usize,
}

#[derive(Default)]
struct Kept {
    entries: HashMap<FeedKey, Entry>,
    /// Keys in the order they were stored, oldest first (may name replaced entries).
    order: VecDeque<FeedKey>,
    bytes: usize,
}

pub struct FeedCache {
    kept: Mutex<Kept>,
    /// Bytes kept at most; 0 keeps nothing.
    limit: usize,
}

impl FeedCache {
    pub(crate) fn new(limit: usize) -> FeedCache {
        FeedCache {
            kept: Mutex::default(),
            limit,
        }
    }

    pub(crate) fn get(&self, key: &FeedKey, version: u64, now: i64) -> Option<CachedFeed> {
        let kept = self.kept.lock().expect("feed cache lock");
        kept.entries
            .get(key)
            .filter(|e| e.version == version && now < e.expires)
            .map(|e| e.feed.clone())
    }

    pub(crate) fn put(&self, key: FeedKey, version: u64, expires: i64, feed: CachedFeed) {
        // Room for the compressed form, made on the first request that asks for it.
        let size = feed.body.size() * 3 / 2;
        if size > self.limit {
            return;
        }
        let mut kept = self.kept.lock().expect("feed cache lock");
        // Entries of older versions can never answer again.
        let stale: Vec<FeedKey> = kept
            .entries
            .iter()
            .filter(|(_, e)| e.version < version)
            .map(|(k, _)| k.clone())
            .collect();
        for key in stale {
            kept.remove(&key);
        }
        if kept.entries.values().any(|e| e.version > version) {
            // A slower request of an older version: its feed is already out of date.
            return;
        }
        kept.remove(&key);
        while kept.bytes + size > self.limit {
            let Some(oldest) = kept.order.pop_front() else {
                break;
            };
            kept.remove(&oldest);
        }
        kept.bytes += size;
        kept.order.push_back(key.clone());
        kept.entries.insert(
            key,
            Entry {
                version,
                expires,
                feed,
                size,
            },
        );
    }
}

impl Kept {
    fn remove(&mut self, key: &FeedKey) {
        if let Some(entry) = self.entries.remove(key) {
            self.bytes -= entry.size;
        }
        if self.entries.is_empty() {
            self.order.clear();
        } else if self.order.len() > 2 * self.entries.len() + 16 {
            // Keys of removed entries linger in `order`; drop them once they dominate it.
            let entries = &self.entries;
            self.order.retain(|k| entries.contains_key(k));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::ical::MEDIA_TYPE;

    fn key(n: u64) -> FeedKey {
        FeedKey {
            route: 0,
            path: PathValues::default(),
            params: vec![("categories", format!("[{n}]"))],
            caller: Caller::Anonymous,
            segment: None,
        }
    }

    fn feed(bytes: usize) -> CachedFeed {
        CachedFeed {
            body: Arc::new(SharedBody::new(MEDIA_TYPE, vec![b'x'; bytes])),
            headers: Vec::new(),
        }
    }

    #[test]
    fn entries_answer_for_their_version_until_they_expire() {
        let cache = FeedCache::new(1 << 20);
        cache.put(key(1), 7, 100, feed(10));
        assert!(cache.get(&key(1), 7, 99).is_some());
        assert!(cache.get(&key(1), 7, 100).is_none(), "expired");
        assert!(cache.get(&key(1), 8, 99).is_none(), "a write came since");
        assert!(cache.get(&key(2), 7, 99).is_none());
        cache.put(key(2), 8, 100, feed(10));
        cache.put(key(1), 7, 100, feed(10));
        assert!(
            cache.get(&key(1), 7, 99).is_none(),
            "older than what is kept"
        );
    }

    #[test]
    fn the_oldest_feeds_go_when_the_bound_is_reached() {
        let cache = FeedCache::new(100);
        for n in 0..5 {
            cache.put(key(n), 1, 100, feed(20));
        }
        let kept: Vec<u64> = (0..5)
            .filter(|n| cache.get(&key(*n), 1, 0).is_some())
            .collect();
        assert_eq!(kept, vec![2, 3, 4]);
        cache.put(key(9), 1, 100, feed(1000));
        assert!(cache.get(&key(9), 1, 0).is_none(), "larger than the bound");
    }
}
