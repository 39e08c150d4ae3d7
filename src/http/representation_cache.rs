//! Serialized list representations, reused between requests.
//!
//! An event's representation embeds its venue, organizers, terms (with their event counts),
//! image and visible translations: a dozen store reads and a few kilobytes of JSON, which is
//! most of what a list request costs. It is a function of the store and index state, the
//! clock, the caller, the language path segment, whether the event is shown masked and whether
//! it is in the export form (`context=export`). The store's version (bumped by every commit and
//! again once the index holds it) and the current second name the first two, the rest is the
//! key; the cache keeps one generation and starts over when the version or the second moves on.
//! Representations are built with the clock truncated to the second, so a cached one is exactly
//! what building it again would give.

use crate::auth::Caller;
use crate::model::{Kind, Language};
use chrono::{NaiveDateTime, Timelike};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Entries kept per generation at most (a few kilobytes each: about 20 MB).
const MAX_ENTRIES: usize = 5_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct RepresentationKey {
    pub kind: Kind,
    pub id: u64,
    pub masked: bool,
    /// The export form (`context=export`).
    pub export: bool,
    pub caller: Caller,
    pub segment: Option<Language>,
}

/// The state a representation was derived from: store version and clock second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Generation {
    version: u64,
    second: i64,
}

impl Generation {
    /// Reads the version first: what is derived afterwards is at least that current.
    pub(crate) fn now(store: &crate::store::Store) -> Generation {
        let version = store.version();
        Generation {
            version,
            second: chrono::Utc::now().timestamp(),
        }
    }

    /// The clock representations of this generation are built with.
    pub(crate) fn clock(&self) -> NaiveDateTime {
        chrono::DateTime::from_timestamp(self.second, 0)
            .expect("the current second is a valid time")
            .naive_utc()
            .with_nanosecond(0)
            .expect("zero nanoseconds are valid")
    }
}

#[derive(Default)]
pub struct RepresentationCache {
    current: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    generation: Generation,
    items: HashMap<RepresentationKey, Arc<str>>,
}

impl RepresentationCache {
    pub(crate) fn get(&self, generation: Generation, key: &RepresentationKey) -> Option<Arc<str>> {
        let entries = self.current.lock().expect("representation cache lock");
        if entries.generation != generation {
            return None;
        }
        entries.items.get(key).cloned()
    }

    pub(crate) fn put(&self, generation: Generation, key: RepresentationKey, item: Arc<str>) {
        let mut entries = self.current.lock().expect("representation cache lock");
        let newer = (generation.version, generation.second)
            > (entries.generation.version, entries.generation.second);
        if newer || entries.items.len() >= MAX_ENTRIES {
            entries.items.clear();
            entries.generation = generation;
        }
        if entries.generation == generation {
            entries.items.insert(key, item);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: u64) -> RepresentationKey {
        RepresentationKey {
            kind: Kind::Event,
            id,
            masked: false,
            export: false,
            caller: Caller::Anonymous,
            segment: None,
        }
    }

    #[test]
    fn entries_live_for_one_generation() {
        let cache = RepresentationCache::default();
        let g1 = Generation {
            version: 4,
            second: 100,
        };
        cache.put(g1, key(1), "{}".into());
        assert!(cache.get(g1, &key(1)).is_some());
        assert!(cache.get(g1, &key(2)).is_none());
        let later = Generation {
            version: 4,
            second: 101,
        };
        assert!(cache.get(later, &key(1)).is_none(), "the clock moved on");
        let written = Generation {
            version: 5,
            second: 100,
        };
        cache.put(written, key(2), "{}".into());
        assert!(cache.get(g1, &key(1)).is_none(), "a write started over");
        // A slow request of the older generation does not bring its answers back.
        cache.put(g1, key(3), "{}".into());
        assert!(cache.get(g1, &key(3)).is_none());
        assert!(cache.get(written, &key(2)).is_some());
    }
}
