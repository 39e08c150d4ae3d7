//! The response cache (docs/api.md, "Responses, caching and compression"): whole answers of
//! the five JSON lists and of their single records kept per request, caller, store version and
//! second. Repeated requests
//! get the same bytes and tag, counted as hits in `/metrics`; every acknowledged write is in
//! the next answer; callers who see different things never share an entry; the next second
//! builds the answer again; `ALMANAC_RESPONSE_CACHE_MB` bounds or disables it. Public pages
//! share the cache the same way.

mod common;

use common::*;
use serde_json::{json, Value};
use std::time::Duration;

/// Lookups of the response cache so far: (hits, misses).
fn counts(s: &Server) -> (f64, f64) {
    let r = s.get_as("/metrics", &ADMIN);
    assert_eq!(r.status, 200, "{}", r.describe());
    let text = r.text();
    let value = |name: &str| {
        let prefix = format!("{name}{{cache=\"responses\"}} ");
        text.lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("no {prefix} in\n{text}"))
            .parse::<f64>()
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    (
        value("almanac_cache_hits_total"),
        value("almanac_cache_misses_total"),
    )
}

/// `GET path` as `who`, twice, until the second answer comes from the cache (an entry lives
/// for one second: a second boundary between the two makes the second one build again, so
/// retry); returns both answers.
fn until_cached(s: &Server, path: &str, who: Option<&TestUser>) -> (Resp, Resp) {
    let get = || {
        let r = s.send("GET", path, who, None);
        assert_eq!(r.status, 200, "GET {path}: {}", r.describe());
        r
    };
    let first = get();
    (first, until_hit(s, get))
}

/// Sends a request until its answer comes from the cache (a retry builds the entry again when
/// a second boundary ended the one before); returns that answer.
fn until_hit(s: &Server, send: impl Fn() -> Resp) -> Resp {
    for _ in 0..10 {
        let (hits, _) = counts(s);
        let r = send();
        if counts(s).0 > hits {
            return r;
        }
    }
    panic!("never answered from the response cache");
}

fn ids(list: &Value, collection: &str) -> Vec<u64> {
    list[collection]
        .as_array()
        .unwrap_or_else(|| panic!("{collection} in {list}"))
        .iter()
        .map(|item| item["id"].as_u64().expect("an ID"))
        .collect()
}

fn event(title: &str, extra: Value) -> Value {
    merge(
        json!({
            "title": title,
            "status": "publish",
            "start_date": "2030-05-01 19:00:00",
            "end_date": "2030-05-01 21:00:00",
        }),
        extra,
    )
}

const EVENTS_2030: &str = "/events?start_date=2030-01-01&end_date=2030-12-31";

#[test]
fn repeated_lists_are_the_same_bytes_from_the_cache() {
    let s = Server::start_with_users(&[ADMIN]);
    for n in 0..12 {
        s.create(
            &ADMIN,
            &format!("{NS}/events"),
            &event(
                &format!("Concert {n}"),
                json!({"description": "An evening of music. ".repeat(20),
                       "categories": ["Music"], "tags": ["Evening"]}),
            ),
        );
    }
    let path = format!("{NS}{EVENTS_2030}&per_page=10");
    let (first, second) = until_cached(&s, &path, None);
    assert_eq!(first.body, second.body);
    assert_eq!(first.json()["total"], 12);
    let tag = assert_etag(&first);
    assert_eq!(second.header("etag"), Some(tag.as_str()));
    for header in ["x-cal-total", "x-cal-totalpages", "link", "content-type"] {
        assert_eq!(first.header(header), second.header(header), "{header}");
    }
    let link = second.header("link").unwrap_or_default();
    assert!(link.contains("rel=\"next\""), "{link}");
    assert!(link.contains("rel=\"alternate\""), "{link}");
    assert_eq!(second.header("x-cal-totalpages"), Some("2"));

    // The same parameters in another order and spelling share the entry.
    let respelled = format!(
        "{NS}/events?per_page=010&end_date=2030-12-31&start_date=2030-01-01&page=1&unknown=x"
    );
    let plain = format!("{NS}{EVENTS_2030}&per_page=10&page=1");
    let mut shared = false;
    for _ in 0..10 {
        let a = s.get(&plain);
        let (hits, _) = counts(&s);
        let b = s.get(&respelled);
        assert_eq!(a.body, b.body);
        if counts(&s).0 == hits + 1.0 {
            shared = true;
            break;
        }
    }
    assert!(shared, "a respelled request reuses the entry");

    // Conditional requests and compression are answered from the entry too.
    let (hits, _) = counts(&s);
    let r = s.req("GET", &path).header("If-None-Match", &tag).send();
    assert_eq!(r.status, 304, "{}", r.describe());
    assert!(r.body.is_empty());
    let r = s.req("GET", &path).header("Accept-Encoding", "gzip").send();
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    assert_eq!(gunzip(&r.body), first.body);
    assert_eq!(r.header("etag"), Some(tag.as_str()));
    let r = s.req("HEAD", &path).send();
    assert_eq!(r.status, 200, "{}", r.describe());
    assert!(r.body.is_empty());
    assert_eq!(r.header("etag"), Some(tag.as_str()));
    assert!(
        counts(&s).0 > hits,
        "the later requests hit (unless a second passed)"
    );

    // Every list, in every language segment, is cached.
    for path in [
        format!("{NS}/venues"),
        format!("{NS}/organizers"),
        format!("{NS}/categories"),
        format!("{NS}/tags"),
        format!("/es{NS}/events"),
        format!("/es{NS}/categories?hide_empty=false"),
    ] {
        let (first, second) = until_cached(&s, &path, None);
        assert_eq!(first.body, second.body, "{path}");
        assert_eq!(first.header("etag"), second.header("etag"), "{path}");
    }
    let categories = s.get_ok(&format!("{NS}/categories"), None);
    assert_eq!(categories["categories"][0]["count"], 12);

    // An invalid parameter is never taken for the valid request the other values spell.
    let list = format!("{NS}/events");
    until_cached(&s, &list, None);
    for bad in [
        "status=",
        "status=draft",
        "per_page=0",
        "categories=nowhere",
    ] {
        let r = s.get(&format!("{list}?{bad}"));
        assert_eq!(r.status, 400, "{bad}: {}", r.describe());
    }

    // Errors and answers of the caller's own (password, context) are not.
    let id = ids(&first.json(), "events")[0];
    for (path, lookups) in [
        (format!("{NS}/events?page=99"), 3.0),
        (format!("{NS}/events/999999"), 3.0),
        (format!("{NS}/events?password=secret"), 0.0),
        (format!("{NS}/events/{id}?password=secret"), 0.0),
        (format!("{NS}/events?context=view"), 0.0),
        (format!("{NS}/events/{id}?context=view"), 0.0),
        (format!("{NS}/events.ics"), 0.0),
        (format!("{NS}/events/{id}.ics"), 0.0),
    ] {
        let before = counts(&s);
        for _ in 0..3 {
            s.get(&path);
        }
        let after = counts(&s);
        assert_eq!(after.0, before.0, "{path}: no hits");
        assert_eq!(after.1 - before.1, lookups, "{path}: misses");
    }
}

/// The collection of a path in the namespace: `venues` of `/es/cal/events/v1/venues/by-slug/x`.
fn collection(path: &str) -> &str {
    let (_, below) = path.split_once(NS).expect("a path in the namespace");
    below.split('/').nth(1).expect("a collection")
}

/// An event with a venue, an organizer, a category and a tag: the paths of every single read
/// of them (by ID and by slug), with the event's ID, venue, organizer, category and tag.
struct Singles {
    event: u64,
    venue: u64,
    organizer: u64,
    category: u64,
    tag: u64,
    paths: Vec<String>,
}

impl Singles {
    fn create(s: &Server) -> Singles {
        let venue = s.create(
            &ADMIN,
            &format!("{NS}/venues"),
            &json!({"venue": "Harbour", "status": "publish"}),
        );
        let organizer = s.create(
            &ADMIN,
            &format!("{NS}/organizers"),
            &json!({"organizer": "Ensemble", "status": "publish"}),
        );
        let event = s.create(
            &ADMIN,
            &format!("{NS}/events"),
            &event(
                "Concert",
                json!({"venue": venue["id"], "organizer": [organizer["id"]],
                       "categories": ["Music"], "tags": ["Evening"]}),
            ),
        );
        let id = |v: &Value| v["id"].as_u64().unwrap_or_else(|| panic!("an ID in {v}"));
        let slug = |v: &Value| v["slug"].as_str().unwrap().to_string();
        let (category, tag) = (id(&event["categories"][0]), id(&event["tags"][0]));
        let paths = vec![
            format!("{NS}/events/{}", id(&event)),
            format!("{NS}/events/by-slug/{}", slug(&event)),
            format!("{NS}/venues/{}", id(&venue)),
            format!("{NS}/venues/by-slug/{}", slug(&venue)),
            format!("{NS}/organizers/{}", id(&organizer)),
            format!("{NS}/organizers/by-slug/{}", slug(&organizer)),
            format!("{NS}/categories/{category}"),
            format!("{NS}/tags/{tag}"),
            format!("/es{NS}/events/{}", id(&event)),
        ];
        Singles {
            event: id(&event),
            venue: id(&venue),
            organizer: id(&organizer),
            category,
            tag,
            paths,
        }
    }

    /// Every path kept in the cache, then `write` sent: every path's next answer shows it.
    fn after_write(&self, s: &Server, write: impl FnOnce(), shows: impl Fn(&str, &Resp)) {
        for path in &self.paths {
            until_cached(s, path, None);
        }
        write();
        for path in &self.paths {
            shows(path, &s.get(path));
        }
    }
}

#[test]
fn single_records_come_from_the_cache_and_show_every_write() {
    let s = Server::start_with_users(&[ADMIN]);
    let singles = Singles::create(&s);
    for path in &singles.paths {
        let (first, second) = until_cached(&s, path, None);
        assert_eq!(first.body, second.body, "{path}");
        let tag = assert_etag(&first);
        assert_eq!(second.header("etag"), Some(tag.as_str()), "{path}");
        assert_eq!(first.header("allow"), second.header("allow"), "{path}");
        let not_modified = until_hit(&s, || {
            s.req("GET", path).header("If-None-Match", &tag).send()
        });
        assert_eq!(
            not_modified.status,
            304,
            "{path}: {}",
            not_modified.describe()
        );
        assert!(not_modified.body.is_empty());
        // A user's answer is their own, with the methods they may use.
        let (_, admin) = until_cached(&s, path, Some(&ADMIN));
        assert_ne!(admin.header("allow"), second.header("allow"), "{path}");
    }

    // Renames of the event and of everything it links to: each is in the next answer of the
    // record and of the event.
    let renames = [
        (
            format!("{NS}/events/{}", singles.event),
            "title",
            "Grand concert",
        ),
        (
            format!("{NS}/venues/{}", singles.venue),
            "venue",
            "Harbour Hall",
        ),
        (
            format!("{NS}/organizers/{}", singles.organizer),
            "organizer",
            "Ensemble Nova",
        ),
        (
            format!("{NS}/categories/{}", singles.category),
            "name",
            "Chamber music",
        ),
        (format!("{NS}/tags/{}", singles.tag), "name", "Late evening"),
    ];
    for (target, field, name) in renames {
        singles.after_write(
            &s,
            || {
                s.write("POST", &target, &ADMIN, &json!({ field: name }), 200);
            },
            |path, r| {
                assert_eq!(r.status, 200, "{path}: {}", r.describe());
                if [collection(&target), "events"].contains(&collection(path)) {
                    assert!(
                        r.text().contains(name),
                        "{path} after {target}: {}",
                        r.text()
                    );
                }
            },
        );
    }

    // Trashing the event: its reads refuse at once, the others still answer.
    let event = format!("{NS}/events/{}", singles.event);
    singles.after_write(
        &s,
        || {
            let r = s.send("DELETE", &event, Some(&ADMIN), None);
            assert_eq!(r.status, 200, "{}", r.describe());
        },
        |path, r| {
            let refused = collection(path) == "events";
            assert_eq!(r.status != 200, refused, "{path}: {}", r.describe());
        },
    );
    // Deleting the terms, trashing the venue and the organizer: the same.
    for target in [
        format!("{NS}/tags/{}", singles.tag),
        format!("{NS}/categories/{}", singles.category),
        format!("{NS}/venues/{}", singles.venue),
        format!("{NS}/organizers/{}", singles.organizer),
    ] {
        let paths: Vec<&String> = singles
            .paths
            .iter()
            .filter(|p| collection(p) == collection(&target))
            .collect();
        for path in &paths {
            until_cached(&s, path, None);
        }
        let r = s.send("DELETE", &target, Some(&ADMIN), None);
        assert_eq!(r.status, 200, "{}", r.describe());
        for path in paths {
            let r = s.get(path);
            assert_ne!(r.status, 200, "{path} after deleting: {}", r.describe());
        }
    }
}

#[test]
fn every_write_is_in_the_next_list() {
    let s = Server::start_with_users(&[ADMIN]);
    let titles = |list: &Value, collection: &str, field: &str| -> Vec<String> {
        list[collection]
            .as_array()
            .unwrap_or_else(|| panic!("{collection} in {list}"))
            .iter()
            .map(|item| item[field].as_str().unwrap_or_default().to_string())
            .collect()
    };

    // Events: create, update, trash.
    let events = format!("{NS}{EVENTS_2030}");
    let (_, r) = until_cached(&s, &events, None);
    assert_eq!(r.json()["total"], 0);
    let created = s.create(
        &ADMIN,
        &format!("{NS}/events"),
        &event("Opening", json!({})),
    );
    let id = created["id"].as_u64().unwrap();
    let list = s.get_ok(&events, None);
    assert_eq!(ids(&list, "events"), vec![id], "created: {list}");

    until_cached(&s, &events, None);
    s.write(
        "POST",
        &format!("{NS}/events/{id}"),
        &ADMIN,
        &json!({"title": "Grand opening"}),
        200,
    );
    let list = s.get_ok(&events, None);
    assert_eq!(titles(&list, "events", "title"), vec!["Grand opening"]);

    // A category renamed changes the events that carry it; its count follows the events.
    let categories = format!("{NS}/categories");
    let (_, r) = until_cached(&s, &categories, None);
    assert_eq!(r.json()["total"], 0, "no category with events yet");
    let second = s.create(
        &ADMIN,
        &format!("{NS}/events"),
        &event("Matinee", json!({"categories": ["Theatre"]})),
    );
    let second_id = second["id"].as_u64().unwrap();
    let category = second["categories"][0]["id"].as_u64().unwrap();
    let list = s.get_ok(&categories, None);
    assert_eq!(ids(&list, "categories"), vec![category], "{list}");
    assert_eq!(list["categories"][0]["count"], 1);
    until_cached(&s, &events, None);
    s.write(
        "POST",
        &format!("{NS}/categories/{category}"),
        &ADMIN,
        &json!({"name": "Drama"}),
        200,
    );
    let list = s.get_ok(&events, None);
    let matinee = list["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == second_id)
        .unwrap_or_else(|| panic!("{list}"));
    assert_eq!(matinee["categories"][0]["name"], "Drama", "{matinee}");

    until_cached(&s, &events, None);
    until_cached(&s, &categories, None);
    let r = s.send("DELETE", &format!("{NS}/events/{id}"), Some(&ADMIN), None);
    assert_eq!(r.status, 200, "{}", r.describe());
    let list = s.get_ok(&events, None);
    assert_eq!(ids(&list, "events"), vec![second_id], "trashed: {list}");
    let r = s.send(
        "DELETE",
        &format!("{NS}/events/{second_id}"),
        Some(&ADMIN),
        None,
    );
    assert_eq!(r.status, 200, "{}", r.describe());
    let list = s.get_ok(&categories, None);
    assert_eq!(list["total"], 0, "the category has no event left: {list}");

    // Venues and organizers: create, update, trash.
    for (collection, field) in [("venues", "venue"), ("organizers", "organizer")] {
        let path = format!("{NS}/{collection}");
        until_cached(&s, &path, None);
        let record = s.create(
            &ADMIN,
            &path,
            &json!({field: "Harbour", "status": "publish"}),
        );
        let rid = record["id"].as_u64().unwrap();
        let list = s.get_ok(&path, None);
        assert_eq!(ids(&list, collection), vec![rid], "{collection} created");

        until_cached(&s, &path, None);
        s.write(
            "POST",
            &format!("{path}/{rid}"),
            &ADMIN,
            &json!({field: "Harbour Hall"}),
            200,
        );
        let list = s.get_ok(&path, None);
        assert_eq!(titles(&list, collection, field), vec!["Harbour Hall"]);

        until_cached(&s, &path, None);
        let r = s.send("DELETE", &format!("{path}/{rid}"), Some(&ADMIN), None);
        assert_eq!(r.status, 200, "{}", r.describe());
        let list = s.get_ok(&path, None);
        assert_eq!(list["total"], 0, "{collection} trashed: {list}");
    }

    // Tags: create, update, delete.
    let tags = format!("{NS}/tags?hide_empty=false");
    until_cached(&s, &tags, None);
    let tag = s.create(&ADMIN, &format!("{NS}/tags"), &json!({"name": "Outdoor"}));
    let tid = tag["id"].as_u64().unwrap();
    let list = s.get_ok(&tags, None);
    assert_eq!(ids(&list, "tags"), vec![tid]);
    until_cached(&s, &tags, None);
    s.write(
        "POST",
        &format!("{NS}/tags/{tid}"),
        &ADMIN,
        &json!({"name": "Open air"}),
        200,
    );
    let list = s.get_ok(&tags, None);
    assert_eq!(titles(&list, "tags", "name"), vec!["Open air"]);
    until_cached(&s, &tags, None);
    let r = s.send("DELETE", &format!("{NS}/tags/{tid}"), Some(&ADMIN), None);
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(s.get_ok(&tags, None)["total"], 0);
}

#[test]
fn callers_who_see_different_things_never_share_an_entry() {
    let s = Server::start_with_users(&[ADMIN, EDITOR, AUTHOR]);
    let published = s.create(&ADMIN, &format!("{NS}/events"), &event("Public", json!({})));
    let draft = s.create(
        &EDITOR,
        &format!("{NS}/events"),
        &event("Secret rehearsal", json!({"status": "draft"})),
    );
    let (public_id, draft_id) = (
        published["id"].as_u64().unwrap(),
        draft["id"].as_u64().unwrap(),
    );
    let events = format!("{NS}{EVENTS_2030}");
    let ids_of = |r: &Resp| {
        let mut found = ids(&r.json(), "events");
        found.sort_unstable();
        found
    };

    // The anonymous entry first: the editor still sees the draft.
    let (_, anonymous) = until_cached(&s, &events, None);
    assert_eq!(ids_of(&anonymous), vec![public_id]);
    let (_, editor) = until_cached(&s, &events, Some(&EDITOR));
    assert_eq!(ids_of(&editor), vec![public_id, draft_id]);
    assert_ne!(anonymous.header("etag"), editor.header("etag"));
    // The editor's entry is there: anonymous callers still do not see the draft, and another
    // user (who may not read an editor's draft) gets their own answer.
    for _ in 0..3 {
        assert_eq!(ids_of(&s.get(&events)), vec![public_id]);
        assert_eq!(
            ids_of(&s.get_as(&events, &EDITOR)),
            vec![public_id, draft_id]
        );
        assert_eq!(ids_of(&s.get_as(&events, &AUTHOR)), vec![public_id]);
    }
    let (_, author) = until_cached(&s, &events, Some(&AUTHOR));
    assert_eq!(ids_of(&author), vec![public_id]);
    assert_eq!(author.header("cache-control"), Some(CC_AUTH));
    assert_eq!(anonymous.header("cache-control"), Some(CC_ANON));

    // The same in the other order, after a write made every entry obsolete.
    s.write(
        "POST",
        &format!("{NS}/events/{draft_id}"),
        &EDITOR,
        &json!({"title": "Secret rehearsal two"}),
        200,
    );
    let (_, editor) = until_cached(&s, &events, Some(&EDITOR));
    assert_eq!(ids_of(&editor), vec![public_id, draft_id]);
    let (_, anonymous) = until_cached(&s, &events, None);
    assert_eq!(ids_of(&anonymous), vec![public_id]);
    assert!(!anonymous.text().contains("Secret rehearsal"));
}

#[test]
fn single_records_are_never_shared_between_callers_who_see_them_differently() {
    let s = Server::start_with_users(&[ADMIN, EDITOR, AUTHOR]);
    let events = format!("{NS}/events");
    let draft = s.create(
        &EDITOR,
        &events,
        &event("Secret rehearsal", json!({"status": "draft"})),
    );
    let private = s.create(
        &ADMIN,
        &events,
        &event(
            "Board dinner",
            json!({"status": "private", "categories": ["Board"]}),
        ),
    );
    let venue = s.create(
        &EDITOR,
        &format!("{NS}/venues"),
        &json!({"venue": "Back room", "status": "draft"}),
    );
    let hidden = [
        (format!("{NS}/events/{}", draft["id"]), "Secret rehearsal"),
        (format!("{NS}/events/{}", private["id"]), "Board dinner"),
        (
            format!("{NS}/events/by-slug/{}", private["slug"].as_str().unwrap()),
            "Board dinner",
        ),
        (format!("{NS}/venues/{}", venue["id"]), "Back room"),
    ];
    let refused = |r: &Resp, path: &str, title: &str| {
        assert_ne!(r.status, 200, "{path}: {}", r.describe());
        assert!(!r.text().contains(title), "{path}: {}", r.describe());
    };
    for (path, title) in &hidden {
        // Refusals are not kept: the editor still reads the record.
        for _ in 0..2 {
            refused(&s.get(path), path, title);
        }
        let (_, editor) = until_cached(&s, path, Some(&EDITOR));
        assert!(
            editor.text().contains(title),
            "{path}: {}",
            editor.describe()
        );
        // The editor's entry is there: anonymous callers and another user still get refusals.
        for _ in 0..3 {
            refused(&s.get(path), path, title);
            refused(&s.get_as(path, &AUTHOR), path, title);
        }
    }

    // A term's answer names the methods of its caller: an editor's is not an anonymous one.
    let category = format!("{NS}/categories/{}", private["categories"][0]["id"]);
    let (_, anonymous) = until_cached(&s, &category, None);
    let (_, editor) = until_cached(&s, &category, Some(&EDITOR));
    assert_ne!(anonymous.body, editor.body);
    assert!(editor.text().contains("DELETE"), "{}", editor.describe());
    assert!(
        !anonymous.text().contains("DELETE"),
        "{}",
        anonymous.describe()
    );
    assert_eq!(s.get(&category).body, anonymous.body);
    assert_eq!(anonymous.header("cache-control"), Some(CC_ANON));
    assert_eq!(editor.header("cache-control"), Some(CC_AUTH));

    // A password-protected event is refused unless the password comes with the request, which
    // is never answered from (nor kept in) the cache.
    let protected = s.create(
        &ADMIN,
        &events,
        &event("Members' night", json!({"password": "open sesame"})),
    );
    let path = format!("{NS}/events/{}", protected["id"]);
    for who in [None, Some(&EDITOR)] {
        for _ in 0..2 {
            let r = s.send("GET", &path, who, None);
            assert_eq!(r.status, 403, "{}", r.describe());
            assert!(!r.text().contains("Members"), "{}", r.describe());
        }
    }
    for (unlocked, who) in [
        (format!("{path}?password=open+sesame"), None),
        (format!("{path}?context=edit"), Some(&EDITOR)),
    ] {
        let before = counts(&s);
        for _ in 0..3 {
            let r = s.send("GET", &unlocked, who, None);
            assert_eq!(r.status, 200, "{unlocked}: {}", r.describe());
            assert!(r.text().contains("Members"), "{}", r.describe());
        }
        assert_eq!(counts(&s), before, "{unlocked}: no lookups");
        let r = s.send("GET", &path, who, None);
        assert_eq!(r.status, 403, "{}", r.describe());
    }
}

#[test]
fn the_next_second_builds_the_answer_again() {
    let s = Server::start_with_users(&[ADMIN]);
    s.create(&ADMIN, &format!("{NS}/events"), &event("Tick", json!({})));
    let events = format!("{NS}{EVENTS_2030}");
    let (first, _) = until_cached(&s, &events, None);
    let (_, misses) = counts(&s);
    std::thread::sleep(Duration::from_millis(1100));
    let later = s.get(&events);
    assert_eq!(later.status, 200, "{}", later.describe());
    assert_eq!(
        counts(&s).1,
        misses + 1.0,
        "the entry of the last second is over"
    );
    assert_eq!(later.body, first.body, "the same answer, built again");
    assert_eq!(later.header("etag"), first.header("etag"));
}

#[test]
fn a_zero_bound_disables_the_cache() {
    let (_tmp, dir) = fresh_data_dir(&[ADMIN]);
    let s = Server::start(
        serve_cmd(&dir).env("ALMANAC_RESPONSE_CACHE_MB", "0"),
        None,
        "serve without a response cache",
    );
    s.create(
        &ADMIN,
        &format!("{NS}/events"),
        &event("Uncached", json!({})),
    );
    let events = format!("{NS}{EVENTS_2030}");
    let before = counts(&s);
    let first = s.get(&events);
    for _ in 0..5 {
        let r = s.get(&events);
        assert_eq!(r.status, 200, "{}", r.describe());
        assert_eq!(r.body, first.body);
        assert_eq!(r.header("etag"), first.header("etag"));
    }
    assert_eq!(counts(&s), before, "no lookups");
    assert_eq!(first.json()["total"], 1);
}

#[test]
fn invalid_bounds_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    for value in ["lots", "-1", "1.5", "2000000"] {
        let o = serve_cmd(&dir)
            .env("ALMANAC_RESPONSE_CACHE_MB", value)
            .timeout(30)
            .run();
        assert_eq!(o.code, Some(2), "{value}: {}", o.describe());
        assert!(
            o.stderr
                .starts_with("error: invalid ALMANAC_RESPONSE_CACHE_MB")
                && o.stderr.contains(value)
                && o.stderr.contains("expected megabytes from 0 to 1048576"),
            "{}",
            o.describe()
        );
    }
    assert!(
        !dir.exists(),
        "configuration is checked before the data directory"
    );
    // Empty counts as unset.
    let (_tmp, dir) = fresh_data_dir(&[ADMIN]);
    let s = Server::start(
        serve_cmd(&dir).env("ALMANAC_RESPONSE_CACHE_MB", ""),
        None,
        "serve with an empty bound",
    );
    until_cached(&s, &format!("{NS}/tags"), None);
}

#[test]
fn repeated_pages_come_from_the_cache_with_their_headers_and_show_every_write() {
    let s = Server::start_with_users(&[ADMIN]);
    let created = s.create(
        &ADMIN,
        &format!("{NS}/events"),
        &event("Opening", json!({})),
    );
    let id = created["id"].as_u64().unwrap();
    // The event is in English: the Spanish pages list Spanish events only.
    for (page, lists_it) in [
        ("/events/month/2030-05/", true),
        ("/events/2030-05-01/", true),
        ("/es/events/2030-05-01/", false),
    ] {
        let (first, second) = until_cached(&s, page, None);
        assert_eq!(first.body, second.body, "{page}");
        assert_eq!(second.text().contains("Opening"), lists_it, "{page}");
        for header in [
            "content-type",
            "etag",
            "cache-control",
            "content-security-policy",
            "x-cal-api-root",
            "x-cal-api-origin",
        ] {
            assert!(first.header(header).is_some(), "{page}: no {header}");
            assert_eq!(
                first.header(header),
                second.header(header),
                "{page}: {header}"
            );
        }
    }
    let root = until_cached(&s, "/es/events/2030-05-01/", None).1;
    assert!(
        root.header("x-cal-api-root")
            .unwrap()
            .ends_with("/es/cal/events/v1/"),
        "{}",
        root.describe()
    );

    until_cached(&s, "/events/month/2030-05/", None);
    s.write(
        "POST",
        &format!("{NS}/events/{id}"),
        &ADMIN,
        &json!({"title": "Grand opening"}),
        200,
    );
    let r = s.get("/events/month/2030-05/");
    assert_eq!(r.status, 200, "{}", r.describe());
    assert!(r.text().contains("Grand opening"), "{}", r.text());
}
