//! Event lists reuse each member's serialized representation until something it embeds
//! changes (docs/architecture.md, "Consistency"): a write to a venue, an organizer, a term, a
//! translation group or another event carrying the same term is in the very next list, while writes elsewhere leave the cached members in place.

mod common;

use common::*;
use serde_json::{json, Value};

const LIST: &str = "/cal/events/v1/events?start_date=2031-01-01&end_date=2031-12-31&per_page=50";

fn create(s: &Server, path: &str, body: Value) -> Value {
    s.create(&ADMIN, &format!("{NS}/{path}"), &body)
}

fn update(s: &Server, path: &str, body: Value) {
    let r = s
        .req("POST", &format!("{NS}/{path}"))
        .user(&ADMIN)
        .json_body(&body)
        .send();
    assert_eq!(r.status, 200, "{}", r.describe());
}

/// The listed event `id` as an anonymous reader sees it now.
fn listed(s: &Server, id: &Value) -> Value {
    let list = s.get(LIST).json();
    list["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == *id)
        .cloned()
        .unwrap_or_else(|| panic!("event {id} listed: {list}"))
}

fn event(title: &str, extra: Value) -> Value {
    let mut body = json!({"title": title, "status": "publish",
        "start_date": "2031-06-01 20:00:00", "end_date": "2031-06-01 22:00:00"});
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    body
}

/// The category "music", its child "jazz" and the tag "outdoor".
fn music_terms(s: &Server) -> (Value, Value, Value) {
    let parent = create(s, "categories", json!({"name": "Music", "slug": "music"}));
    let child = create(
        s,
        "categories",
        json!({"name": "Jazz", "slug": "jazz", "parent": parent["id"]}),
    );
    let tag = create(s, "tags", json!({"name": "outdoor"}));
    (parent, child, tag)
}

#[test]
fn every_write_to_what_a_listed_event_embeds_is_in_the_next_list() {
    let s = Server::start_with_users(&[ADMIN]);
    let (_, child, tag) = music_terms(&s);
    let venue = create(&s, "venues", json!({"venue": "Harbour Hall"}));
    let organizer = create(&s, "organizers", json!({"organizer": "Jazz Society"}));
    let e = create(
        &s,
        "events",
        event(
            "Quartet night",
            json!({"categories": [child["id"]], "tags": [tag["id"]], "venue": venue["id"],
                   "organizer": [organizer["id"]]}),
        ),
    );
    let id = &e["id"];
    let other = create(&s, "events", event("Unrelated talk", json!({})));

    let first = listed(&s, id);
    assert_eq!(first["venue"]["venue"], "Harbour Hall");
    assert_eq!(first["categories"][0]["count"], 1);
    // A write elsewhere: the member stays as it was.
    update(
        &s,
        &format!("events/{}", other["id"]),
        json!({"title": "Unrelated talk, moved"}),
    );
    assert_eq!(listed(&s, id), first);

    update(
        &s,
        &format!("venues/{}", venue["id"]),
        json!({"venue": "Harbour Hall East"}),
    );
    assert_eq!(listed(&s, id)["venue"]["venue"], "Harbour Hall East");

    update(
        &s,
        &format!("organizers/{}", organizer["id"]),
        json!({"organizer": "Jazz Society of the Coast"}),
    );
    assert_eq!(
        listed(&s, id)["organizer"][0]["organizer"],
        "Jazz Society of the Coast"
    );

    update(
        &s,
        &format!("categories/{}", child["id"]),
        json!({"name": "Modern Jazz"}),
    );
    assert_eq!(listed(&s, id)["categories"][0]["name"], "Modern Jazz");

    update(
        &s,
        &format!("tags/{}", tag["id"]),
        json!({"name": "open air"}),
    );
    assert_eq!(listed(&s, id)["tags"][0]["name"], "open air");

    // Another event carrying the category: its count.
    let second = create(
        &s,
        "events",
        event("Trio night", json!({"categories": [child["id"]]})),
    );
    assert_eq!(listed(&s, id)["categories"][0]["count"], 2);
    update(
        &s,
        &format!("events/{}", second["id"]),
        json!({"status": "draft"}),
    );
    assert_eq!(listed(&s, id)["categories"][0]["count"], 1);

    // A translation joining the group.
    let translation = create(
        &s,
        "events",
        event(
            "Noite de quarteto",
            json!({"translation_language": "pt-br", "translation_of": id}),
        ),
    );
    assert_eq!(
        listed(&s, id)["translations"]["pt-br"],
        translation["id"],
        "{}",
        listed(&s, id)
    );

    // The organizer trashed: it leaves the event.
    let r = s
        .req("DELETE", &format!("{NS}/organizers/{}", organizer["id"]))
        .user(&ADMIN)
        .send();
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(listed(&s, id)["organizer"], json!([]));
}

#[test]
fn a_single_event_follows_what_it_embeds_too() {
    let s = Server::start_with_users(&[ADMIN]);
    let category = create(&s, "categories", json!({"name": "Theatre"}));
    let venue = create(&s, "venues", json!({"venue": "Old Stage"}));
    let e = create(
        &s,
        "events",
        event(
            "Matinee",
            json!({"categories": [category["id"]], "venue": venue["id"]}),
        ),
    );
    let path = format!("{NS}/events/{}", e["id"]);
    let first = s.get(&path).json();
    assert_eq!(first["venue"]["venue"], "Old Stage");
    assert_eq!(first["categories"][0]["count"], 1);
    assert!(first["json_ld"].is_object(), "{first}");
    assert_eq!(s.get(&path).json(), first, "the same answer again");

    update(
        &s,
        &format!("venues/{}", venue["id"]),
        json!({"venue": "New Stage"}),
    );
    let renamed = s.get(&path).json();
    assert_eq!(renamed["venue"]["venue"], "New Stage");
    assert_eq!(
        renamed["json_ld"]["location"]["name"], "New Stage",
        "{renamed}"
    );

    create(
        &s,
        "events",
        event("Evening show", json!({"categories": [category["id"]]})),
    );
    assert_eq!(s.get(&path).json()["categories"][0]["count"], 2);

    update(
        &s,
        &path.replacen(NS, "", 1)[1..],
        json!({"title": "Matinee, moved"}),
    );
    assert_eq!(s.get(&path).json()["title"], "Matinee, moved");
}

#[test]
fn a_single_term_follows_what_it_embeds() {
    let s = Server::start_with_users(&[ADMIN]);
    let (parent, child, tag) = music_terms(&s);
    let path = format!("{NS}/categories/{}", child["id"]);
    let first = s.get(&path).json();
    assert_eq!(first["count"], 0);
    assert!(
        first["url"]
            .as_str()
            .unwrap()
            .ends_with("/events/category/music/jazz/"),
        "{first}"
    );
    assert_eq!(s.get(&path).json(), first, "the same answer again");

    create(
        &s,
        "events",
        event(
            "Late set",
            json!({"categories": [child["id"]], "tags": [tag["id"]]}),
        ),
    );
    assert_eq!(s.get(&path).json()["count"], 1);
    let tag_path = format!("{NS}/tags/{}", tag["id"]);
    assert_eq!(s.get(&tag_path).json()["count"], 1);

    update(
        &s,
        &format!("categories/{}", parent["id"]),
        json!({"slug": "live-music"}),
    );
    let moved = s.get(&path).json();
    assert!(
        moved["url"]
            .as_str()
            .unwrap()
            .ends_with("/events/category/live-music/jazz/"),
        "{moved}"
    );

    update(
        &s,
        &format!("categories/{}", child["id"]),
        json!({"name": "Modern jazz"}),
    );
    assert_eq!(s.get(&path).json()["name"], "Modern jazz");

    let translation = create(
        &s,
        "categories",
        json!({"name": "Jazz moderno", "translation_of": child["id"],
               "translation_language": "pt-br"}),
    );
    let translated = s.get(&path).json();
    assert!(
        translated["translations"]
            .to_string()
            .contains(&translation["id"].to_string()),
        "{translated}"
    );
}
