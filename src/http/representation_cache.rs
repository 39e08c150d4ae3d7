//! Serialized list representations, reused between requests.
//!
//! An event's representation embeds its venue, organizers, terms (with their event counts),
//! image and visible translations: a dozen store reads and a few kilobytes of JSON, which is
//! most of what a list request costs. It is a function of the records it embeds, their
//! translation groups, the terms' counts, the clock, the caller, the language path segment,
//! whether the event is shown masked and whether it is in the export form
//! (`context=export`). The last five are the key. The clock is the current second:
//! representations are built with the clock truncated to it, and an entry serves only within
//! it. The terms' counts are left out of the entry ([`Template`]) and filled in when it is
//! served: every event written with a category changes that category's count, which every
//! event carrying it embeds. The rest are the entry's dependencies
//! (`service::events::Dependency`), with the outbox position of the view the entry was built
//! from: the entry serves while none of them changed after that position, so that writes to
//! other records (an editor at work, an import) leave the cached representations of the rest
//! of the calendar in place. A venue's or organizer's single representation (its image, which
//! never changes, and its visible translations) is kept the same way, depending on the record
//! and its translation group.

use crate::auth::Caller;
use crate::http::AppState;
use crate::model::{Kind, Language};
use crate::service::events::Dependency;
use chrono::{NaiveDateTime, Timelike};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Entries kept at most (a few kilobytes each: about 20 MB); the cache starts over when full.
const MAX_ENTRIES: usize = 5_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct RepresentationKey {
    pub kind: Kind,
    pub id: u64,
    pub masked: bool,
    /// The export form (`context=export`).
    pub export: bool,
    /// A single GET's representation (with `json_ld`), not a list member's.
    pub single: bool,
    pub caller: Caller,
    pub segment: Option<Language>,
}

/// The clock second a request's representations are built at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Generation {
    second: i64,
}

impl Generation {
    pub(crate) fn now() -> Generation {
        Generation {
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

/// First of the placeholder counts a representation is rendered with to become a
/// [`Template`]: far above any real count.
const PLACEHOLDER_BASE: u64 = 17_000_000_000_000_000_000;

/// A serialized representation whose embedded terms' counts are slots: `parts` around them.
pub(crate) struct Template {
    parts: Box<[Box<str>]>,
    slots: Box<[(Kind, u64)]>,
}

impl Template {
    /// The placeholder count of the term in slot `n` (see [`Template::from_placeholders`]).
    pub(crate) fn placeholder(n: usize) -> u64 {
        PLACEHOLDER_BASE + n as u64
    }

    /// The template of `text`, rendered with [`Template::placeholder`]`(n)` as the count of the
    /// term `slots[n]`; `None` if a placeholder is not there exactly once (the text itself holds
    /// such a number).
    pub(crate) fn from_placeholders(text: &str, slots: Vec<(Kind, u64)>) -> Option<Template> {
        let mut found: Vec<(usize, usize, usize)> = Vec::with_capacity(slots.len());
        for n in 0..slots.len() {
            let placeholder = Template::placeholder(n).to_string();
            let mut at = text.match_indices(&placeholder);
            let (start, _) = at.next()?;
            if at.next().is_some() {
                return None;
            }
            found.push((start, start + placeholder.len(), n));
        }
        found.sort_unstable();
        let mut parts = Vec::with_capacity(found.len() + 1);
        let mut ordered = Vec::with_capacity(found.len());
        let mut from = 0;
        for (start, end, n) in found {
            parts.push(text[from..start].into());
            ordered.push(slots[n]);
            from = end;
        }
        parts.push(text[from..].into());
        Some(Template {
            parts: parts.into(),
            slots: ordered.into(),
        })
    }

    /// The terms whose counts the template needs.
    pub(crate) fn slots(&self) -> &[(Kind, u64)] {
        &self.slots
    }

    /// The representation with each slot's count.
    pub(crate) fn fill(&self, count: impl Fn(Kind, u64) -> u64) -> String {
        let mut text = String::with_capacity(
            self.parts.iter().map(|p| p.len()).sum::<usize>() + 8 * self.slots.len(),
        );
        for (part, slot) in self.parts.iter().zip(self.slots.iter()) {
            text.push_str(part);
            text.push_str(&count(slot.0, slot.1).to_string());
        }
        text.push_str(self.parts.last().expect("one part more than slots"));
        text
    }
}

/// A cached representation and what it was derived from.
#[derive(Clone)]
pub(crate) struct Cached {
    pub template: Arc<Template>,
    /// The outbox position of the view it was built from.
    pub head: u64,
    pub dependencies: Arc<[Dependency]>,
}

#[derive(Default)]
pub struct RepresentationCache {
    current: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    generation: Generation,
    items: HashMap<RepresentationKey, Cached>,
}

impl RepresentationCache {
    /// The entry of `key` built in this generation, if any; whether its dependencies are
    /// unchanged is the caller's to check.
    pub(crate) fn get(&self, generation: Generation, key: &RepresentationKey) -> Option<Cached> {
        let entries = self.current.lock().expect("representation cache lock");
        if entries.generation != generation {
            return None;
        }
        entries.items.get(key).cloned()
    }

    pub(crate) fn put(&self, generation: Generation, key: RepresentationKey, cached: Cached) {
        let mut entries = self.current.lock().expect("representation cache lock");
        if generation.second > entries.generation.second || entries.items.len() >= MAX_ENTRIES {
            entries.items.clear();
            entries.generation = generation;
        }
        if entries.generation == generation {
            entries.items.insert(key, cached);
        }
    }
}

/// The cached template of `key`, if it was built in this generation and nothing it depends on
/// changed since.
pub(crate) fn current_template(
    state: &AppState,
    generation: Generation,
    key: &RepresentationKey,
) -> Option<Arc<Template>> {
    state.representations.get(generation, key).and_then(|c| {
        crate::service::events::unchanged_since(&state.index, &c.dependencies, c.head)
            .then_some(c.template)
    })
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
            single: false,
            caller: Caller::Anonymous,
            segment: None,
        }
    }

    fn cached() -> Cached {
        Cached {
            template: Arc::new(Template::from_placeholders("{}", Vec::new()).unwrap()),
            head: 7,
            dependencies: Arc::new([Dependency::Record(Kind::Event, 1)]),
        }
    }

    #[test]
    fn templates_leave_counts_to_be_filled() {
        let text = format!(
            r#"{{"categories":[{{"id":7,"count":{}}}],"tags":[{{"id":9,"count":{}}}]}}"#,
            Template::placeholder(1),
            Template::placeholder(0)
        );
        let template =
            Template::from_placeholders(&text, vec![(Kind::Tag, 9), (Kind::Category, 7)]).unwrap();
        assert_eq!(template.slots(), [(Kind::Category, 7), (Kind::Tag, 9)]);
        let filled = template.fill(|kind, id| if kind == Kind::Category { id * 10 } else { id });
        assert_eq!(
            filled,
            r#"{"categories":[{"id":7,"count":70}],"tags":[{"id":9,"count":9}]}"#
        );
        // A text holding a placeholder twice cannot be told apart.
        let twice = format!("{} {}", Template::placeholder(0), Template::placeholder(0));
        assert!(Template::from_placeholders(&twice, vec![(Kind::Tag, 1)]).is_none());
    }

    #[test]
    fn entries_live_for_one_second() {
        let cache = RepresentationCache::default();
        let g1 = Generation { second: 100 };
        cache.put(g1, key(1), cached());
        assert_eq!(cache.get(g1, &key(1)).map(|c| c.head), Some(7));
        assert!(cache.get(g1, &key(2)).is_none());
        let later = Generation { second: 101 };
        assert!(cache.get(later, &key(1)).is_none(), "the clock moved on");
        cache.put(later, key(2), cached());
        assert!(
            cache.get(g1, &key(1)).is_none(),
            "a new second started over"
        );
        // A slow request of the older second does not bring its answers back.
        cache.put(g1, key(3), cached());
        assert!(cache.get(g1, &key(3)).is_none());
        assert!(cache.get(later, &key(2)).is_some());
    }
}
