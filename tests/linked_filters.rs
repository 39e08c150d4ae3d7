//! How events link venues, organizers and terms, seen from the linked records' side:
//!
//! - venue and organizer list filters `event`, `has_events`, `only_with_upcoming`
//!   and their links;
//! - trashing a venue or organizer unlinks it from every event;
//! - term `count`, `hide_empty` with the descendant exception, the `post`/`event` term filters
//!   and deletion removing the term from events;
//! - references to another language's event are unknown.
//!
//! One server shared by all tests (they run in parallel). Every test isolates the records it
//! counts: venue/organizer/term names carry a unique random word (a "token") and lists are read
//! with `search=<token>`, or are narrowed by an event that only the test links.

mod common;

use common::*;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::sync::OnceLock;

fn server() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(|| Server::start_with_users(&STANDARD_USERS).into_static())
}

type Who = Option<TestUser>;
const ANON: Who = None;
const AD: Who = Some(ADMIN);
const ED: Who = Some(EDITOR);

/// An ID that names nothing (far beyond anything created here; small IDs such as
/// `23` name records of other tests on this shared server).
const UNKNOWN_ID: i64 = 999_999;

/// Start of an upcoming event (well after the test run).
const UPCOMING: &str = "2027-06-01 10:00:00";
const UPCOMING_END: &str = "2027-06-01 12:00:00";
/// Start of a past event.
const PAST: &str = "2020-03-01 10:00:00";
const PAST_END: &str = "2020-03-01 12:00:00";

// ---------------------------------------------------------------------------------------------
// Request helpers
// ---------------------------------------------------------------------------------------------

fn send(method: &str, path: &str, who: Who, body: Option<&Value>) -> Resp {
    server().send(method, path, who.as_ref(), body)
}

fn get_ok(path: &str, who: Who) -> Value {
    server().get_ok(path, who.as_ref())
}

/// `POST path` as an administrator, asserting 201; returns the body.
fn create(path: &str, body: Value) -> Value {
    server().create(&ADMIN, path, &body)
}

fn id_of(v: &Value) -> i64 {
    v["id"]
        .as_i64()
        .unwrap_or_else(|| panic!("no integer id in {v}"))
}

/// Creates an event as an administrator. `extra` is merged into the body (it may override the
/// dates). Returns the event's representation.
fn event_full(title: &str, start: &str, end: &str, status: &str, extra: Value) -> Value {
    let body = merge(
        json!({
            "title": title,
            "start_date": start,
            "end_date": end,
            "status": status,
        }),
        extra,
    );
    let v = create(&format!("{NS}/events"), body.clone());
    assert_eq!(
        v["status"], status,
        "event status as created from {body}: {v}"
    );
    v
}

/// Creates an upcoming event and returns its ID.
fn event(title: &str, status: &str, extra: Value) -> i64 {
    id_of(&event_full(title, UPCOMING, UPCOMING_END, status, extra))
}

/// Creates a scheduled (`future`) event: publication date in 2031.
fn future_event(title: &str, start: &str, end: &str, extra: Value) -> i64 {
    let mut extra = extra;
    extra["date"] = json!("2031-01-01 00:00:00");
    id_of(&event_full(title, start, end, "future", extra))
}

/// Trashes an event as an administrator.
fn trash_event(id: i64) {
    let r = send("DELETE", &format!("{NS}/events/{id}"), AD, None);
    assert_eq!(r.status, 200, "DELETE event {id}: {}", r.describe());
    assert_eq!(r.json()["status"], "trash");
}

fn get_event(id: i64) -> Value {
    get_ok(&format!("{NS}/events/{id}"), AD)
}

fn set(ids: &[i64]) -> BTreeSet<i64> {
    ids.iter().copied().collect()
}

// ---------------------------------------------------------------------------------------------
// Venues and organizers
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
struct Lk {
    /// Collection segment and list key: `venues`.
    coll: &'static str,
    /// Name field and event field: `venue`.
    name: &'static str,
}

const VENUE: Lk = Lk {
    coll: "venues",
    name: "venue",
};
const ORGANIZER: Lk = Lk {
    coll: "organizers",
    name: "organizer",
};

impl Lk {
    fn is_venue(self) -> bool {
        self.name == "venue"
    }
    fn path(self) -> String {
        format!("{NS}/{}", self.coll)
    }
    /// Creates a record (as an administrator) and returns its ID.
    fn mk(self, name: &str, status: &str) -> i64 {
        let v = create(&self.path(), json!({ self.name: name, "status": status }));
        assert_eq!(v["status"], status, "{v}");
        id_of(&v)
    }
    fn mk_lang(self, name: &str, lang: &str) -> i64 {
        let v = create(
            &self.path(),
            json!({ self.name: name, "translation_language": lang }),
        );
        assert_eq!(v["language"], lang, "{v}");
        id_of(&v)
    }
    /// Restores a trashed record (`status: publish`) as an administrator; returns it.
    fn restore(self, id: i64) -> Value {
        let r = send(
            "PATCH",
            &format!("{}/{id}", self.path()),
            AD,
            Some(&json!({"status": "publish"})),
        );
        assert_eq!(r.status, 200, "{}", r.describe());
        r.json()
    }
    /// The event body fields linking `ids` (a venue: exactly one).
    fn link(self, ids: &[i64]) -> Value {
        if self.is_venue() {
            assert_eq!(ids.len(), 1, "an event has at most one venue");
            json!({ "venue": ids[0] })
        } else {
            json!({ "organizer": ids })
        }
    }
    /// IDs of the records an event representation embeds for this kind.
    fn linked_in(self, ev: &Value) -> Vec<i64> {
        let f = &ev[self.name];
        if self.is_venue() {
            if f.as_array().map(|a| a.is_empty()).unwrap_or(false) {
                vec![]
            } else {
                vec![id_of(f)]
            }
        } else {
            f.as_array()
                .unwrap_or_else(|| panic!("organizer is an array: {ev}"))
                .iter()
                .map(id_of)
                .collect()
        }
    }
    fn list(self, query: &str, who: Who) -> Resp {
        send("GET", &format!("{}?{query}", self.path()), who, None)
    }
    /// A 200 list answer: body, with totals checked against the headers.
    fn list_ok(self, query: &str, who: Who) -> Value {
        let r = self.list(query, who);
        assert_eq!(r.status, 200, "{} ?{query}: {}", self.coll, r.describe());
        let v = r.json();
        assert_totals(&r, &v);
        v
    }
    /// IDs in list order.
    fn ids(self, v: &Value) -> Vec<i64> {
        v[self.coll]
            .as_array()
            .unwrap_or_else(|| panic!("no `{}` array: {v}", self.coll))
            .iter()
            .map(id_of)
            .collect()
    }
    /// Asserts the listed IDs (as a set), `total` and `total_pages` (per_page 10 or more).
    fn expect(self, query: &str, who: Who, want: &[i64]) -> Value {
        let v = self.list_ok(query, who);
        let got = self.ids(&v);
        assert_eq!(
            set(&got),
            set(want),
            "{} ?{query} as {:?}: listed IDs; {v}",
            self.coll,
            who.map(|u| u.name)
        );
        assert_eq!(got.len(), want.len(), "no duplicates; {v}");
        assert_eq!(v["total"], want.len(), "total; ?{query}; {v}");
        let pages = if want.is_empty() { 0 } else { 1 };
        assert_eq!(v["total_pages"], pages, "total_pages; ?{query}; {v}");
        v
    }
}

macro_rules! both_linked_kinds {
    ($($f:ident),* $(,)?) => {
        mod venues {
            $( #[test] fn $f() { super::$f(super::VENUE) } )*
        }
        mod organizers {
            $( #[test] fn $f() { super::$f(super::ORGANIZER) } )*
        }
    };
}

both_linked_kinds!(
    event_filter,
    event_filter_validation_and_language,
    has_events_filter,
    has_events_flag_spellings,
    only_with_upcoming_filter,
    filters_in_links,
    trashing_unlinks_from_events,
    trashed_record_leaves_list_filters,
);

/// `event`: the records linked to the event, of any status the caller may read; draft records
/// only for callers who may read them; an event without links gives an empty list.
fn event_filter(k: Lk) {
    let t = tok();
    let pub1 = k.mk(&format!("{t} public"), "publish");
    let draft = k.mk(&format!("{t} draft"), "draft");

    if k.is_venue() {
        let e_pub = event(&format!("{t} ev1"), "publish", k.link(&[pub1]));
        let e_draft_link = event(&format!("{t} ev2"), "publish", k.link(&[draft]));
        k.expect(&format!("event={e_pub}"), ANON, &[pub1]);
        k.expect(&format!("event={e_pub}"), ED, &[pub1]);
        // A draft venue linked to the event: hidden from anonymous callers, shown to editors.
        k.expect(&format!("event={e_draft_link}"), ANON, &[]);
        k.expect(&format!("event={e_draft_link}"), ED, &[draft]);
    } else {
        let e = event(&format!("{t} ev1"), "publish", k.link(&[pub1, draft]));
        k.expect(&format!("event={e}"), ANON, &[pub1]);
        let v = k.expect(&format!("event={e}"), ED, &[pub1, draft]);
        // Newest first: the draft was created after the public one.
        assert_eq!(k.ids(&v), vec![draft, pub1], "order; {v}");
    }

    // The event may be of any status the caller may read; one it may not read is refused as
    // an unknown one, so the filter does not tell which drafts exist (docs/api.md, "Security
    // decisions").
    for st in ["draft", "pending", "private"] {
        let e = event(&format!("{t} {st} ev"), st, k.link(&[pub1]));
        k.expect(&format!("event={e}"), ED, &[pub1]);
        let r = k.list(&format!("event={e}"), ANON);
        assert_invalid_param_codes(&r, &[("event", Some("rest_invalid_reference"))]);
    }
    let e_trashed = event(&format!("{t} trashed ev"), "publish", k.link(&[pub1]));
    trash_event(e_trashed);
    k.expect(&format!("event={e_trashed}"), ED, &[pub1]);

    // An event without links: 200, empty, zero totals, no page links.
    let bare = event(&format!("{t} bare"), "publish", json!({}));
    let v = k.expect(&format!("event={bare}"), ANON, &[]);
    assert!(v.get("next_rest_url").is_none() && v.get("previous_rest_url").is_none());

    // Combines (AND) with the other filters.
    let e = event(&format!("{t} combo"), "publish", k.link(&[pub1]));
    k.expect(&format!("event={e}&search={t}"), ANON, &[pub1]);
    k.expect(&format!("event={e}&search=zqnomatchxx"), ANON, &[]);
}

/// `event` validation: unknown event (also the ID of a venue/organizer), empty, non-numeric,
/// and an event of another language → 400 `rest_invalid_param` naming `event`.
fn event_filter_validation_and_language(k: Lk) {
    let t = tok();
    let rec = k.mk(&format!("{t} rec"), "publish");

    let r = k.list(&format!("event={UNKNOWN_ID}"), ANON);
    assert_invalid_param_codes(&r, &[("event", Some("rest_invalid_reference"))]);
    let r = k.list(&format!("event={}", UNKNOWN_ID + 1), ED);
    assert_invalid_param_codes(&r, &[("event", Some("rest_invalid_reference"))]);
    // The ID of a venue/organizer is not an event.
    let r = k.list(&format!("event={rec}"), ANON);
    assert_invalid_param_codes(&r, &[("event", Some("rest_invalid_reference"))]);
    let r = k.list("event=foo", ANON);
    assert_invalid_param_codes(&r, &[("event", Some("rest_invalid_type"))]);
    let r = k.list("event=", ANON);
    assert_invalid_param_codes(&r, &[("event", None)]);
    let r = k.list("event=0", ANON);
    assert_invalid_param_codes(&r, &[("event", None)]);
    // Reported together with other invalid parameters.
    let r = k.list(&format!("event={UNKNOWN_ID}&has_events=maybe"), ANON);
    assert_invalid_param_codes(&r, &[("event", None), ("has_events", None)]);

    // An event of another language: unknown in the default (en) list.
    let es_rec = k.mk_lang(&format!("{t} es rec"), "es");
    let mut extra = k.link(&[es_rec]);
    extra["translation_language"] = json!("es");
    let es_event = id_of(&event_full(
        &format!("{t} es ev"),
        UPCOMING,
        UPCOMING_END,
        "publish",
        extra,
    ));
    let r = k.list(&format!("event={es_event}"), ANON);
    assert_invalid_param_codes(&r, &[("event", Some("rest_invalid_reference"))]);
    let r = k.list(&format!("event={es_event}&translation_language=en"), ED);
    assert_invalid_param_codes(&r, &[("event", Some("rest_invalid_reference"))]);
    // ... and found in its own language (parameter or path segment).
    k.expect(
        &format!("event={es_event}&translation_language=es"),
        ANON,
        &[es_rec],
    );
    let r = send(
        "GET",
        &format!("/es{NS}/{}?event={es_event}", k.coll),
        ANON,
        None,
    );
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(k.ids(&r.json()), vec![es_rec]);
    // An en event is unknown in the es list.
    let en_event = event(&format!("{t} en ev"), "publish", k.link(&[rec]));
    let r = k.list(&format!("event={en_event}&translation_language=es"), ANON);
    assert_invalid_param_codes(&r, &[("event", Some("rest_invalid_reference"))]);
}

/// The records of one filter test: each linked to events of exactly one kind.
struct HasEventsFixture {
    t: String,
    with_publish: i64,
    with_past_publish: i64,
    with_future: i64,
    with_private: i64,
    with_draft: i64,
    with_pending: i64,
    with_trashed: i64,
    without: i64,
}

impl HasEventsFixture {
    fn new(k: Lk) -> Self {
        let t = tok();
        let mk = |label: &str| k.mk(&format!("{t} {label}"), "publish");
        let f = HasEventsFixture {
            with_publish: mk("publish"),
            with_past_publish: mk("pastpublish"),
            with_future: mk("future"),
            with_private: mk("private"),
            with_draft: mk("draft"),
            with_pending: mk("pending"),
            with_trashed: mk("trashed"),
            without: mk("none"),
            t: t.clone(),
        };
        event(&format!("{t} e1"), "publish", k.link(&[f.with_publish]));
        event_full(
            &format!("{t} e2"),
            PAST,
            PAST_END,
            "publish",
            k.link(&[f.with_past_publish]),
        );
        future_event(
            &format!("{t} e3"),
            UPCOMING,
            UPCOMING_END,
            k.link(&[f.with_future]),
        );
        event(&format!("{t} e4"), "private", k.link(&[f.with_private]));
        event(&format!("{t} e5"), "draft", k.link(&[f.with_draft]));
        event(&format!("{t} e6"), "pending", k.link(&[f.with_pending]));
        let tr = event(&format!("{t} e7"), "publish", k.link(&[f.with_trashed]));
        trash_event(tr);
        f
    }
    fn with(&self) -> Vec<i64> {
        vec![
            self.with_publish,
            self.with_past_publish,
            self.with_future,
            self.with_private,
        ]
    }
    fn without(&self) -> Vec<i64> {
        vec![
            self.with_draft,
            self.with_pending,
            self.with_trashed,
            self.without,
        ]
    }
    fn all(&self) -> Vec<i64> {
        let mut v = self.with();
        v.extend(self.without());
        v
    }
}

/// `has_events`: counting events are publish, future and private (whatever
/// their dates and whoever asks); draft, pending and trashed events do not count.
fn has_events_filter(k: Lk) {
    let f = HasEventsFixture::new(k);
    let t = &f.t;
    for who in [ANON, ED] {
        k.expect(&format!("search={t}&has_events=true"), who, &f.with());
        k.expect(&format!("search={t}&has_events=false"), who, &f.without());
        k.expect(&format!("search={t}"), who, &f.all());
    }
    // No linked events at all → 200, empty, zero totals.
    let t2 = tok();
    k.mk(&format!("{t2} lonely one"), "publish");
    k.mk(&format!("{t2} lonely two"), "publish");
    let v = k.expect(&format!("search={t2}&has_events=true"), ANON, &[]);
    assert!(v.get("next_rest_url").is_none() && v.get("previous_rest_url").is_none());
    assert_eq!(v["total_pages"], 0);
    assert_eq!(
        k.list_ok(&format!("search={t2}&has_events=false"), ANON)["total"],
        2
    );
}

/// Filter flags: truthy and falsy strings in any letter case; empty = not given; anything
/// else → 400 `rest_invalid_param` naming the parameter.
fn has_events_flag_spellings(k: Lk) {
    let f = HasEventsFixture::new(k);
    let t = &f.t;
    for v in [
        "1", "true", "TRUE", "yes", "Yes", "y", "on", "ON", "enable", "enabled",
    ] {
        k.expect(&format!("search={t}&has_events={v}"), ANON, &f.with());
    }
    for v in [
        "0", "false", "False", "no", "NO", "n", "off", "Off", "disable", "disabled",
    ] {
        k.expect(&format!("search={t}&has_events={v}"), ANON, &f.without());
    }
    k.expect(&format!("search={t}&has_events="), ANON, &f.all());
    k.expect(&format!("search={t}&only_with_upcoming="), ANON, &f.all());
    for bad in ["maybe", "2", "truthy", "-1"] {
        let r = k.list(&format!("search={t}&has_events={bad}"), ANON);
        assert_invalid_param_codes(&r, &[("has_events", None)]);
        let r = k.list(&format!("search={t}&only_with_upcoming={bad}"), ED);
        assert_invalid_param_codes(&r, &[("only_with_upcoming", None)]);
    }
    let r = k.list("has_events=maybe&only_with_upcoming=perhaps", ANON);
    assert_invalid_param_codes(&r, &[("has_events", None), ("only_with_upcoming", None)]);
}

/// `only_with_upcoming`: records with an event starting in the future whose
/// status is in the list's status set (anonymous: publish only; editors: every status); past and
/// already-running events do not count; `false` means no filter.
fn only_with_upcoming_filter(k: Lk) {
    let t = tok();
    let mk = |label: &str| k.mk(&format!("{t} {label}"), "publish");
    let up_publish = mk("uppublish");
    let up_private = mk("upprivate");
    let up_draft = mk("updraft");
    let up_pending = mk("uppending");
    let past_only = mk("pastonly");
    let running = mk("running");
    let up_trashed = mk("uptrashed");
    let none = mk("none");
    let all = [
        up_publish, up_private, up_draft, up_pending, past_only, running, up_trashed, none,
    ];

    event(&format!("{t} e1"), "publish", k.link(&[up_publish]));
    // The past-only record also gets a past private event: still not upcoming.
    event_full(
        &format!("{t} e2"),
        PAST,
        PAST_END,
        "publish",
        k.link(&[past_only]),
    );
    event_full(
        &format!("{t} e2b"),
        PAST,
        PAST_END,
        "private",
        k.link(&[past_only]),
    );
    // Started in the past, ends in the future: running, not upcoming.
    event_full(
        &format!("{t} e3"),
        PAST,
        "2030-01-01 00:00:00",
        "publish",
        k.link(&[running]),
    );
    event(&format!("{t} e4"), "private", k.link(&[up_private]));
    event(&format!("{t} e5"), "draft", k.link(&[up_draft]));
    event(&format!("{t} e6"), "pending", k.link(&[up_pending]));
    let tr = event(&format!("{t} e7"), "publish", k.link(&[up_trashed]));
    trash_event(tr);

    let q = format!("search={t}&only_with_upcoming=true");
    k.expect(&q, ANON, &[up_publish]);
    k.expect(&q, Some(SUBSCRIBER), &[up_publish]);
    k.expect(&q, ED, &[up_publish, up_private, up_draft, up_pending]);
    k.expect(&q, AD, &[up_publish, up_private, up_draft, up_pending]);
    // The status set S of the list decides which events count.
    k.expect(&format!("{q}&status=publish"), ED, &[up_publish]);
    k.expect(
        &format!("{q}&status=any"),
        ED,
        &[up_publish, up_private, up_draft, up_pending],
    );
    // Other spellings.
    k.expect(
        &format!("search={t}&only_with_upcoming=yes"),
        ANON,
        &[up_publish],
    );
    k.expect(
        &format!("search={t}&only_with_upcoming=1"),
        ANON,
        &[up_publish],
    );
    k.expect(
        &format!("search={t}&only_with_upcoming=On"),
        ANON,
        &[up_publish],
    );
    // False is no filter.
    for v in ["false", "0", "no", "off"] {
        k.expect(&format!("search={t}&only_with_upcoming={v}"), ANON, &all);
    }
    // AND with has_events: draft and pending events never count there.
    k.expect(
        &format!("{q}&has_events=true"),
        ED,
        &[up_publish, up_private],
    );
    k.expect(
        &format!("{q}&has_events=false"),
        ED,
        &[up_draft, up_pending],
    );
    k.expect(&format!("{q}&has_events=true"), ANON, &[up_publish]);
}

/// The list links carry `per_page`, `search`, `orderby`, `event`, `has_events`,
/// `only_with_upcoming` (flags normalised to `true`/`false`, only when given), `status`,
/// `translation_language`.
fn filters_in_links(k: Lk) {
    let t = tok();
    let a = k.mk(&format!("{t} one"), "publish");
    let b = k.mk(&format!("{t} two"), "publish");
    event(&format!("{t} e1"), "publish", k.link(&[a]));
    event(&format!("{t} e2"), "publish", k.link(&[b]));
    let coll_base = format!("{}{NS}/{}/", server().public, k.coll);

    // Two pages of one record each.
    let v = k.list_ok(
        &format!("per_page=1&search={t}&has_events=yes&only_with_upcoming=ON"),
        ANON,
    );
    let q = format!("per_page=1&search={t}&has_events=true&only_with_upcoming=true&status=publish");
    assert_eq!(v["total"], 2, "{v}");
    assert_eq!(v["rest_url"], format!("{coll_base}?page=1&{q}"), "{v}");
    assert_eq!(v["next_rest_url"], format!("{coll_base}?{q}&page=2"), "{v}");
    let v = k.list_ok(
        &format!("per_page=1&page=2&search={t}&has_events=yes&only_with_upcoming=ON"),
        ANON,
    );
    assert_eq!(v["rest_url"], format!("{coll_base}?page=2&{q}"), "{v}");
    assert_eq!(v["previous_rest_url"], format!("{coll_base}?{q}"), "{v}");

    // `false` values are written when given; editors get `status=any`.
    let v = k.list_ok(
        &format!("search={t}&only_with_upcoming=off&has_events=no"),
        ED,
    );
    assert_eq!(
        v["rest_url"],
        format!(
            "{coll_base}?page=1&per_page=10&search={t}&has_events=false&only_with_upcoming=false&status=any"
        ),
        "{v}"
    );

    // `event` sits between search and has_events; empty flags are not given.
    let e = event(&format!("{t} e3"), "publish", k.link(&[a]));
    let v = k.list_ok(
        &format!("has_events=1&only_with_upcoming=&event={e}&search={t}&translation_language=en"),
        ANON,
    );
    assert_eq!(k.ids(&v), vec![a]);
    assert_eq!(
        v["rest_url"],
        format!(
            "{coll_base}?page=1&per_page=10&search={t}&event={e}&has_events=true&status=publish&translation_language=en"
        ),
        "{v}"
    );
}

/// Trashing removes the record from every event that links it (any event
/// status); other links stay; the events' `modified` does not change; restoring does not re-link.
fn trashing_unlinks_from_events(k: Lk) {
    let t = tok();
    let victim = k.mk(&format!("{t} victim"), "publish");
    let other = k.mk(&format!("{t} other"), "publish");
    // The other kind's link, which must survive.
    let (other_kind, side) = if k.is_venue() {
        (ORGANIZER, ORGANIZER.mk(&format!("{t} side org"), "publish"))
    } else {
        (VENUE, VENUE.mk(&format!("{t} side venue"), "publish"))
    };

    let mut events = Vec::new();
    for st in ["publish", "draft", "private", "pending"] {
        let mut extra = other_kind.link(&[side]);
        let own = k.link(&[victim]);
        for (key, val) in own.as_object().unwrap() {
            extra[key] = val.clone();
        }
        events.push(event(&format!("{t} {st}"), st, extra));
    }
    // For organizers: an event linking both, in that order.
    let both = if k.is_venue() {
        None
    } else {
        Some(event(
            &format!("{t} both"),
            "publish",
            k.link(&[other, victim]),
        ))
    };
    let untouched = event(&format!("{t} untouched"), "publish", k.link(&[other]));

    let before: Vec<Value> = events.iter().map(|e| get_event(*e)).collect();
    for (ev, b) in events.iter().zip(&before) {
        assert_eq!(k.linked_in(b), vec![victim], "event {ev} before: {b}");
    }
    let before_both = both.map(get_event);

    let r = send("DELETE", &format!("{}/{victim}", k.path()), AD, None);
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(r.json()["status"], "trash");

    for (ev, b) in events.iter().zip(&before) {
        let a = get_event(*ev);
        assert_eq!(k.linked_in(&a), Vec::<i64>::new(), "event {ev} after: {a}");
        if k.is_venue() {
            assert_eq!(a["venue"], json!([]), "venue is [] after unlinking: {a}");
            assert_eq!(other_kind.linked_in(&a), vec![side], "organizers stay: {a}");
        } else {
            assert_eq!(a["organizer"], json!([]), "{a}");
            assert_eq!(other_kind.linked_in(&a), vec![side], "venue stays: {a}");
        }
        assert_eq!(
            a["modified"], b["modified"],
            "event {ev} modified unchanged"
        );
        assert_eq!(a["modified_utc"], b["modified_utc"], "event {ev}");
        assert_eq!(a["status"], b["status"], "event {ev} status unchanged");
    }
    if let (Some(both), Some(b)) = (both, before_both) {
        assert_eq!(k.linked_in(&b), vec![other, victim]);
        let a = get_event(both);
        assert_eq!(
            k.linked_in(&a),
            vec![other],
            "the other organizer stays: {a}"
        );
        assert_eq!(a["modified"], b["modified"]);
    }
    let u = get_event(untouched);
    assert_eq!(k.linked_in(&u), vec![other]);

    // Restoring the record does not re-link it.
    assert_eq!(k.restore(victim)["status"], "publish");
    let a = get_event(events[0]);
    assert_eq!(k.linked_in(&a), Vec::<i64>::new(), "not re-linked: {a}");
}

/// Trashing seen through the list filters: a trashed record is no longer "linked" to the
/// events for `event` and `has_events`, also once restored.
fn trashed_record_leaves_list_filters(k: Lk) {
    let t = tok();
    let victim = k.mk(&format!("{t} victim"), "publish");
    let other = k.mk(&format!("{t} other"), "publish");
    let e = if k.is_venue() {
        event(&format!("{t} e"), "publish", k.link(&[victim]))
    } else {
        event(&format!("{t} e"), "publish", k.link(&[other, victim]))
    };
    if k.is_venue() {
        event(&format!("{t} e2"), "publish", k.link(&[other]));
    }
    let linked_before: Vec<i64> = if k.is_venue() {
        vec![victim]
    } else {
        vec![other, victim]
    };
    k.expect(&format!("event={e}"), ED, &linked_before);
    k.expect(&format!("search={t}&has_events=true"), ED, &[victim, other]);

    let r = send("DELETE", &format!("{}/{victim}", k.path()), AD, None);
    assert_eq!(r.status, 200, "{}", r.describe());
    let after: Vec<i64> = if k.is_venue() { vec![] } else { vec![other] };
    // status=trash lists the trashed record; it is linked to nothing any more.
    k.expect(&format!("event={e}&status=any"), ED, &after);
    k.expect(&format!("event={e}&status=trash"), ED, &[]);
    k.expect(
        &format!("search={t}&status=trash&has_events=false"),
        ED,
        &[victim],
    );
    k.expect(&format!("search={t}&has_events=true"), ED, &[other]);

    k.restore(victim);
    k.expect(&format!("event={e}"), ED, &after);
    k.expect(&format!("search={t}&has_events=true"), ED, &[other]);
    k.expect(&format!("search={t}&has_events=false"), ED, &[victim]);
}

// ---------------------------------------------------------------------------------------------
// Terms
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
enum Tk {
    Cat,
    Tag,
}

impl Tk {
    /// Collection, list key and event field.
    fn coll(self) -> &'static str {
        match self {
            Tk::Cat => "categories",
            Tk::Tag => "tags",
        }
    }
    fn path(self) -> String {
        format!("{NS}/{}", self.coll())
    }
    fn item(self, id: i64) -> String {
        format!("{NS}/{}/{id}", self.coll())
    }
    fn mk(self, name: &str) -> i64 {
        let v = create(&self.path(), json!({ "name": name }));
        assert_eq!(v["count"], 0, "{v}");
        id_of(&v)
    }
    fn mk_child(self, name: &str, parent: i64) -> i64 {
        assert_eq!(self, Tk::Cat);
        let v = create(&self.path(), json!({ "name": name, "parent": parent }));
        assert_eq!(v["parent"], parent, "{v}");
        id_of(&v)
    }
    fn terms(self, ids: &[i64]) -> Value {
        json!({ self.coll(): ids })
    }
    fn count(self, id: i64) -> Value {
        get_ok(&self.item(id), ANON)["count"].clone()
    }
    fn list(self, query: &str, who: Who) -> Resp {
        send("GET", &format!("{}?{query}", self.path()), who, None)
    }
    fn list_ok(self, query: &str) -> Value {
        let r = self.list(query, ANON);
        assert_eq!(r.status, 200, "{} ?{query}: {}", self.coll(), r.describe());
        let v = r.json();
        assert_totals(&r, &v);
        v
    }
    fn items(self, v: &Value) -> Vec<Value> {
        v[self.coll()]
            .as_array()
            .unwrap_or_else(|| panic!("no `{}` array: {v}", self.coll()))
            .clone()
    }
    /// Asserts the listed IDs in order, `total` and `total_pages`.
    fn expect(self, query: &str, want: &[i64]) -> Value {
        let v = self.list_ok(query);
        let got: Vec<i64> = self.items(&v).iter().map(id_of).collect();
        assert_eq!(got, want, "{} ?{query}: listed IDs; {v}", self.coll());
        assert_eq!(v["total"], want.len(), "total; ?{query}; {v}");
        let pages = if want.is_empty() { 0 } else { 1 };
        assert_eq!(v["total_pages"], pages, "total_pages; ?{query}; {v}");
        v
    }
    /// IDs of this kind's terms embedded in an event.
    fn on_event(self, ev: &Value) -> Vec<i64> {
        ev[self.coll()]
            .as_array()
            .unwrap_or_else(|| panic!("`{}` array in event: {ev}", self.coll()))
            .iter()
            .map(id_of)
            .collect()
    }
    /// The `count` of term `id` as embedded in an event.
    fn embedded_count(self, ev: &Value, id: i64) -> Value {
        ev[self.coll()]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["id"] == id)
            .unwrap_or_else(|| panic!("term {id} not embedded: {ev}"))["count"]
            .clone()
    }
}

macro_rules! both_term_kinds {
    ($($f:ident),* $(,)?) => {
        mod categories {
            $( #[test] fn $f() { super::$f(super::Tk::Cat) } )*
        }
        mod tags {
            $( #[test] fn $f() { super::$f(super::Tk::Tag) } )*
        }
    };
}

both_term_kinds!(
    term_count_counts_published_events,
    hide_empty_default,
    post_and_event_filters,
    post_and_event_validation,
    delete_removes_term_from_events,
);

/// `count`: published events only, live; the same value in the single
/// route, in lists and in the embedded terms.
fn term_count_counts_published_events(k: Tk) {
    let t = tok();
    let term = k.mk(&format!("{t} counted"));
    let link = k.terms(&[term]);
    let p1 = event(&format!("{t} p1"), "publish", link.clone());
    let p2 = id_of(&event_full(
        &format!("{t} p2"),
        PAST,
        PAST_END,
        "publish",
        link.clone(),
    ));
    let draft = event(&format!("{t} d"), "draft", link.clone());
    let pending = event(&format!("{t} pe"), "pending", link.clone());
    let private = event(&format!("{t} pr"), "private", link.clone());
    let future = future_event(&format!("{t} f"), UPCOMING, UPCOMING_END, link.clone());
    let trashed = event(&format!("{t} tr"), "publish", link.clone());
    trash_event(trashed);

    assert_eq!(k.count(term), 2, "GET /{}/{term}", k.coll());
    let v = k.expect(&format!("search={t}"), &[term]);
    assert_eq!(k.items(&v)[0]["count"], 2, "count in the list: {v}");
    // (A trashed event cannot be read.)
    for e in [p1, p2, draft, pending, private, future] {
        let ev = get_event(e);
        assert_eq!(k.on_event(&ev), vec![term], "event {e}: {ev}");
        assert_eq!(
            k.embedded_count(&ev, term),
            2,
            "embedded count in event {e}"
        );
    }

    // Live: unpublishing and publishing events changes the count.
    let r = send(
        "PATCH",
        &format!("{NS}/events/{p1}"),
        AD,
        Some(&json!({"status": "draft"})),
    );
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(
        k.embedded_count(&r.json(), term),
        1,
        "embedded in the update response"
    );
    assert_eq!(k.count(term), 1);
    for (e, st) in [(private, "publish"), (draft, "publish")] {
        let r = send(
            "PATCH",
            &format!("{NS}/events/{e}"),
            AD,
            Some(&json!({ "status": st })),
        );
        assert_eq!(r.status, 200, "{}", r.describe());
    }
    assert_eq!(k.count(term), 3);
    // Removing the term from an event.
    let r = send(
        "PATCH",
        &format!("{NS}/events/{p2}"),
        AD,
        Some(&k.terms(&[])),
    );
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(k.on_event(&r.json()), Vec::<i64>::new());
    assert_eq!(k.count(term), 2);
    let v = k.expect(&format!("search={t}&hide_empty=false"), &[term]);
    assert_eq!(k.items(&v)[0]["count"], 2, "{v}");

    // A term carried only by non-published events has count 0.
    let zero = k.mk(&format!("{t} zero"));
    let e = event(&format!("{t} z"), "pending", k.terms(&[zero]));
    assert_eq!(k.count(zero), 0);
    assert_eq!(k.embedded_count(&get_event(e), zero), 0);

    // Terms given by name on the event write are created and counted too.
    let ev = event_full(
        &format!("{t} byname"),
        UPCOMING,
        UPCOMING_END,
        "publish",
        json!({ k.coll(): [format!("{t} named")] }),
    );
    let named = k.on_event(&ev);
    assert_eq!(named.len(), 1, "{ev}");
    assert_eq!(k.embedded_count(&ev, named[0]), 1, "{ev}");
    assert_eq!(k.count(named[0]), 1);
}

/// `hide_empty` defaults to true and drops
/// count-0 terms, except categories one of whose descendants has a count.
fn hide_empty_default(k: Tk) {
    let t = tok();
    // Names sort in creation order of the letters: a, b, c, d, gp, p, q.
    let a = k.mk(&format!("{t} a"));
    let b = k.mk(&format!("{t} b"));
    event(&format!("{t} ea"), "publish", k.terms(&[a]));
    // b is only on a draft event: count 0.
    event(&format!("{t} eb"), "draft", k.terms(&[b]));

    match k {
        Tk::Tag => {
            k.expect(&format!("search={t}"), &[a]);
            k.expect(&format!("search={t}&hide_empty=true"), &[a]);
            k.expect(&format!("search={t}&hide_empty=false"), &[a, b]);
            k.expect(&format!("search={t}&hide_empty=0"), &[a, b]);
        }
        Tk::Cat => {
            let gp = k.mk(&format!("{t} gp"));
            let p = k.mk_child(&format!("{t} p"), gp);
            let c = k.mk_child(&format!("{t} c"), p);
            let q = k.mk(&format!("{t} q"));
            let d = k.mk_child(&format!("{t} d"), q);
            // Only the grandchild c is on a published event; q's child d is on a pending one.
            event(&format!("{t} ec"), "publish", k.terms(&[c]));
            event(&format!("{t} ed"), "pending", k.terms(&[d]));
            assert_eq!(k.count(gp), 0);
            assert_eq!(k.count(p), 0);
            assert_eq!(k.count(c), 1);
            // gp and p have count 0 but a counted descendant: kept, with total = list size.
            let v = k.expect(&format!("search={t}"), &[a, c, gp, p]);
            let counts: Vec<Value> = k.items(&v).iter().map(|x| x["count"].clone()).collect();
            assert_eq!(counts, vec![json!(1), json!(1), json!(0), json!(0)], "{v}");
            k.expect(&format!("search={t}&hide_empty=true"), &[a, c, gp, p]);
            k.expect(
                &format!("search={t}&hide_empty=false"),
                &[a, b, c, d, gp, p, q],
            );
            k.expect(&format!("parent={gp}"), &[p]);
            k.expect(&format!("parent={p}"), &[c]);
            k.expect(&format!("parent={q}"), &[]);
            k.expect(&format!("parent={q}&hide_empty=false"), &[d]);
            // Paging keeps the exception consistent with the totals.
            let v = k.list_ok(&format!("search={t}&per_page=3"));
            assert_eq!(v["total"], 4, "{v}");
            assert_eq!(v["total_pages"], 2, "{v}");
            let v = k.list_ok(&format!("search={t}&per_page=3&page=2"));
            let ids: Vec<i64> = k.items(&v).iter().map(id_of).collect();
            assert_eq!(ids, vec![p], "{v}");
        }
    }
    // A newly created term does not appear in a default listing.
    let t2 = tok();
    let fresh = k.mk(&format!("{t2} fresh"));
    k.expect(&format!("search={t2}"), &[]);
    k.expect(&format!("search={t2}&hide_empty=false"), &[fresh]);
}

/// `post`/`event` keep the event's terms (any event
/// status, any caller), `event` wins over `post`, `hide_empty` still applies afterwards.
fn post_and_event_filters(k: Tk) {
    let t = tok();
    let one = k.mk(&format!("{t} one"));
    let two = k.mk(&format!("{t} two"));
    let three = k.mk(&format!("{t} three"));
    let _unused = k.mk(&format!("{t} unused"));
    let e1 = event(&format!("{t} e1"), "publish", k.terms(&[one, two]));
    let e2 = event(&format!("{t} e2"), "publish", k.terms(&[three]));
    let draft = event(&format!("{t} e3"), "draft", k.terms(&[one, three]));
    let bare = event(&format!("{t} e4"), "publish", json!({}));

    k.expect(&format!("post={e1}"), &[one, two]);
    k.expect(&format!("event={e1}"), &[one, two]);
    k.expect(&format!("post={e1}&event={e2}"), &[three]);
    k.expect(&format!("event={e2}&post={e1}"), &[three]);
    k.expect(&format!("post={e2}&event={e1}"), &[one, two]);
    k.expect(&format!("post={bare}"), &[]);
    k.expect(&format!("post={bare}&hide_empty=false"), &[]);

    // A draft event: its terms (counts 1 and 1) are listed for anonymous callers too.
    k.expect(&format!("post={draft}"), &[one, three]);
    let r = k.list(&format!("event={draft}"), ED);
    assert_eq!(r.status, 200, "{}", r.describe());
    // Terms of an event that is not published and carried by no published event: count 0,
    // dropped by the default hide_empty, listed with hide_empty=false.
    let lonely = k.mk(&format!("{t} lonely"));
    let pend = event(&format!("{t} e5"), "pending", k.terms(&[lonely]));
    k.expect(&format!("post={pend}"), &[]);
    k.expect(&format!("post={pend}&hide_empty=false"), &[lonely]);
    k.expect(&format!("event={pend}&hide_empty=false"), &[lonely]);
    // A trashed event is an event of status trash: still valid.
    let tr = event(&format!("{t} e6"), "publish", k.terms(&[two]));
    trash_event(tr);
    k.expect(&format!("post={tr}&hide_empty=false"), &[two]);

    // Combines with the other filters.
    k.expect(&format!("post={e1}&search={t}&exclude={two}"), &[one]);
    k.expect(&format!("post={e1}&include={two},{three}"), &[two]);

    // Links carry post and event in that order.
    let v = k.list_ok(&format!("event={e1}&post={e2}"));
    assert_eq!(
        v["rest_url"],
        format!(
            "{}{NS}/{}/?page=1&per_page=10&post={e2}&event={e1}",
            server().public,
            k.coll()
        ),
        "{v}"
    );
}

/// `post`/`event` must name an existing event of
/// the list's language.
fn post_and_event_validation(k: Tk) {
    let t = tok();
    let unknown = UNKNOWN_ID.to_string();
    for p in ["post", "event"] {
        for (val, sub) in [
            ("", None),
            (unknown.as_str(), Some("rest_invalid_reference")),
            ("foo", Some("rest_invalid_type")),
            ("0", None),
        ] {
            let r = k.list(&format!("{p}={val}"), ANON);
            assert_invalid_param_codes(&r, &[(p, sub)]);
        }
    }
    // Both invalid: reported together.
    let r = k.list("post=foo&event=bar", ANON);
    assert_invalid_param_codes(&r, &[("post", None), ("event", None)]);
    // A valid event does not excuse a bad `post`.
    let e = event(&format!("{t} en"), "publish", json!({}));
    let r = k.list(&format!("post=foo&event={e}"), ANON);
    assert_invalid_param_codes(&r, &[("post", None)]);

    // Not an event: a venue ID, a term ID.
    let venue = VENUE.mk(&format!("{t} venue"), "publish");
    let r = k.list(&format!("post={venue}"), ANON);
    assert_invalid_param_codes(&r, &[("post", Some("rest_invalid_reference"))]);

    // An event of another language.
    let es_term = id_of(&create(
        &k.path(),
        json!({"name": format!("{t} es term"), "translation_language": "es"}),
    ));
    let es_ev = id_of(&event_full(
        &format!("{t} es"),
        UPCOMING,
        UPCOMING_END,
        "publish",
        json!({"translation_language": "es", k.coll(): [es_term]}),
    ));
    for p in ["post", "event"] {
        let r = k.list(&format!("{p}={es_ev}"), ANON);
        assert_invalid_param_codes(&r, &[(p, Some("rest_invalid_reference"))]);
        let r = k.list(&format!("{p}={es_ev}&translation_language=en"), ANON);
        assert_invalid_param_codes(&r, &[(p, Some("rest_invalid_reference"))]);
        k.expect(&format!("{p}={es_ev}&translation_language=es"), &[es_term]);
        let r = k.list(&format!("{p}={e}&translation_language=es"), ANON);
        assert_invalid_param_codes(&r, &[(p, Some("rest_invalid_reference"))]);
    }
    let r = send(
        "GET",
        &format!("/es{NS}/{}?post={es_ev}", k.coll()),
        ANON,
        None,
    );
    assert_eq!(r.status, 200, "{}", r.describe());
    let ids: Vec<i64> = k.items(&r.json()).iter().map(id_of).collect();
    assert_eq!(ids, vec![es_term]);
}

/// Deleting a term removes it from every event that carried it, and
/// the response is the term as it was (its count included), without `_links`.
fn delete_removes_term_from_events(k: Tk) {
    let t = tok();
    let parent = if k == Tk::Cat {
        Some(k.mk(&format!("{t} parent")))
    } else {
        None
    };
    let body = match parent {
        Some(p) => {
            json!({"name": format!("{t} doomed"), "description": "Term description", "slug": format!("{t}-foo-bar"), "parent": p})
        }
        None => {
            json!({"name": format!("{t} doomed"), "description": "Term description", "slug": format!("{t}-foo-bar")})
        }
    };
    let doomed = id_of(&create(&k.path(), body));
    let keep = k.mk(&format!("{t} keep"));
    let e1 = event(&format!("{t} e1"), "publish", k.terms(&[doomed, keep]));
    let e2 = event(&format!("{t} e2"), "publish", k.terms(&[doomed]));
    let e3 = id_of(&event_full(
        &format!("{t} e3"),
        PAST,
        PAST_END,
        "publish",
        k.terms(&[doomed]),
    ));
    let e4 = event(&format!("{t} e4"), "draft", k.terms(&[doomed, keep]));
    assert_eq!(k.count(doomed), 3);
    assert_eq!(k.count(keep), 1);

    let r = send("DELETE", &k.item(doomed), ED, None);
    assert_eq!(r.status, 200, "{}", r.describe());
    let v = r.json();
    assert_eq!(v["id"], doomed, "{v}");
    assert_eq!(v["count"], 3, "the count it had: {v}");
    assert_eq!(v["description"], "Term description", "{v}");
    assert_eq!(v["slug"], format!("{t}-foo-bar"), "{v}");
    assert_eq!(v["meta"], json!([]), "{v}");
    assert!(
        v.get("_links").is_none(),
        "no _links in DELETE responses: {v}"
    );
    if let Some(p) = parent {
        assert_eq!(v["parent"], p, "{v}");
        assert_eq!(
            v["urls"]["up"],
            format!("{}{NS}/categories/{p}", server().public),
            "{v}"
        );
    } else {
        assert!(v.get("parent").is_none(), "{v}");
        assert!(v["urls"].get("up").is_none(), "{v}");
    }

    assert_eq!(k.on_event(&get_event(e1)), vec![keep]);
    assert_eq!(k.on_event(&get_event(e2)), Vec::<i64>::new());
    assert_eq!(k.on_event(&get_event(e3)), Vec::<i64>::new());
    assert_eq!(k.on_event(&get_event(e4)), vec![keep]);
    assert_eq!(k.count(keep), 1);
    let r = send("GET", &k.item(doomed), ANON, None);
    assert_invalid_param_codes(&r, &[("id", None)]);
    k.expect(&format!("search={t}&hide_empty=false"), &{
        let mut v = vec![keep];
        if let Some(p) = parent {
            v.push(p);
        }
        v
    });
    // The events filter no longer lists it.
    k.expect(&format!("post={e1}"), &[keep]);
    k.expect(&format!("post={e2}&hide_empty=false"), &[]);
    // Deleting again: unknown ID.
    let r = send("DELETE", &k.item(doomed), ED, None);
    assert_invalid_param_codes(&r, &[("id", None)]);
}
