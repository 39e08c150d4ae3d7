//! `context=export` on the event, venue and organizer read routes (docs/api.md, "The export
//! form: `context=export`"), tested over real HTTP against the binary.
//!
//! One server shared by every test. Each test that lists events owns one calendar year in which
//! only it creates events and keeps its queries inside that year; venue and organizer lists are
//! narrowed with a unique word in the name.

mod common;

use common::*;
use serde_json::{json, Value};
use std::sync::OnceLock;

fn server() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(|| Server::start_with_users(&STANDARD_USERS).into_static())
}

const DESCRIPTION: &str = "First line\n\nSecond";
const RENDERED: &str = "<p>First line</p>\n<p>Second</p>";
const EXCERPT: &str = "Short\nexcerpt";

/// `GET path` as `who`, asserting 200; the JSON.
fn get(path: &str, who: Option<&TestUser>) -> Value {
    server().get_ok(path, who)
}

fn year_query(year: i32) -> String {
    format!("start_date={year}-01-01&end_date={year}-12-31")
}

fn event(title: &str, year: i32, day: u32, extra: Value) -> Value {
    let body = merge(
        json!({
            "title": title,
            "start_date": format!("{year}-03-{day:02} 10:00:00"),
            "end_date": format!("{year}-03-{day:02} 12:00:00"),
        }),
        extra,
    );
    server().create(&ADMIN, &format!("{NS}/events"), &body)
}

fn items<'a>(list: &'a Value, collection: &str) -> &'a Vec<Value> {
    list[collection]
        .as_array()
        .unwrap_or_else(|| panic!("{collection} must be a list: {list}"))
}

fn by_id(list: &[Value], id: &Value) -> Option<Value> {
    list.iter().find(|e| e["id"] == *id).cloned()
}

/// Three events of `year`: one with text and a cost, one protected by a password, one hidden
/// from listings.
fn three_events(year: i32) -> (Value, Value, Value) {
    let plain = event(
        "Plain",
        year,
        1,
        json!({"description": DESCRIPTION, "excerpt": EXCERPT, "cost": ["$1,000", "$25,55"]}),
    );
    let protected = event(
        "Protected",
        year,
        2,
        json!({"description": DESCRIPTION, "password": "s3cret-pass"}),
    );
    let hidden = event(
        "Hidden",
        year,
        3,
        json!({"description": DESCRIPTION, "hide_from_listings": true}),
    );
    (plain, protected, hidden)
}

#[test]
fn event_lists_answer_in_the_export_form_to_editors_and_administrators() {
    let (plain, protected, hidden) = three_events(2071);
    let path = format!("{NS}/events?{}&context=export", year_query(2071));
    for who in [&ADMIN, &EDITOR] {
        let list = get(&path, Some(who));
        let events = items(&list, "events");
        assert_eq!(
            list["total"], 3,
            "{}: the hidden event counts: {list}",
            who.name
        );
        assert_eq!(events.len(), 3);

        let p = by_id(events, &plain["id"]).expect("the plain event is listed");
        assert_eq!(p["description"], DESCRIPTION, "stored source text");
        assert_eq!(p["excerpt"], EXCERPT);
        assert_eq!(p["status"], "publish");
        assert_eq!(
            p["cost_details"]["values"],
            json!(["$1,000", "$25,55"]),
            "cost values as stored"
        );
        assert!(p.get("password").is_none(), "no password, no key: {p}");
        assert!(p.get("json_ld").is_none());

        let x = by_id(events, &protected["id"]).expect("the protected event is listed");
        assert_eq!(x["password"], "s3cret-pass");
        assert_eq!(x["description"], DESCRIPTION, "never masked");
        assert!(x["show_map"].is_boolean(), "flags are not blanked: {x}");

        let h = by_id(events, &hidden["id"]).expect("the hidden event is listed");
        assert_eq!(h["hide_from_listings"], true);
        assert_eq!(h["description"], DESCRIPTION);
    }
    // The query docs/api.md suggests for a complete copy: every status, every date.
    let all = get(
        &format!(
            "{NS}/events?status=publish,future,draft,pending,private,trash             &start_date=0001-01-01&end_date=9999-12-31&per_page=50&context=export"
        ),
        Some(&ADMIN),
    );
    assert!(all["total"].as_u64().unwrap() >= 3, "{all}");
}

#[test]
fn the_ordinary_form_is_unchanged_around_an_export_request() {
    let (plain, protected, hidden) = three_events(2072);
    let ordinary_path = format!("{NS}/events?{}", year_query(2072));
    let export_path = format!("{ordinary_path}&context=export");
    // Ordinary, export, ordinary, export again: within one second and one store version the
    // list representations come from the cache, which must keep the two forms apart.
    for round in 0..2 {
        let ordinary = get(&ordinary_path, Some(&ADMIN));
        let events = items(&ordinary, "events");
        assert_eq!(ordinary["total"], 2, "round {round}: {ordinary}");
        assert!(
            by_id(events, &hidden["id"]).is_none(),
            "hidden stays hidden"
        );
        let p = by_id(events, &plain["id"]).unwrap();
        assert_eq!(p["description"], RENDERED, "round {round}");
        assert_eq!(p["cost_details"]["values"], json!(["25.55", "1000"]));
        let x = by_id(events, &protected["id"]).unwrap();
        assert_eq!(
            x["description"], "",
            "an administrator without context=edit sees it locked"
        );
        assert!(x.get("password").is_none());

        let export = get(&export_path, Some(&ADMIN));
        assert_eq!(export["total"], 3, "round {round}");
        let p = by_id(items(&export, "events"), &plain["id"]).unwrap();
        assert_eq!(p["description"], DESCRIPTION, "round {round}");
    }
    // `context=edit` keeps its meaning: protected events the caller may edit are unlocked, in
    // the ordinary form, and hidden events stay hidden.
    let edit = get(&format!("{ordinary_path}&context=edit"), Some(&ADMIN));
    assert_eq!(edit["total"], 2);
    let x = by_id(items(&edit, "events"), &protected["id"]).unwrap();
    assert_eq!(x["description"], RENDERED);
    assert!(x.get("password").is_none());
    // Single reads: the ordinary form has json_ld, the export form is the list member.
    let id = plain["id"].as_u64().unwrap();
    let single = get(&format!("{NS}/events/{id}"), Some(&ADMIN));
    assert_eq!(single["description"], RENDERED);
    assert!(single.get("json_ld").is_some());
    let single_export = get(&format!("{NS}/events/{id}?context=export"), Some(&ADMIN));
    let export = get(&export_path, Some(&ADMIN));
    let member = by_id(items(&export, "events"), &plain["id"]).unwrap();
    assert!(
        same_json(&single_export, &member),
        "single {single_export}\nmember {member}"
    );
    let slug = plain["slug"].as_str().unwrap();
    let by_slug = get(
        &format!("{NS}/events/by-slug/{slug}?context=export"),
        Some(&ADMIN),
    );
    assert!(same_json(&by_slug, &member));
    // A protected event read alone opens in the export form, password included.
    let pid = protected["id"].as_u64().unwrap();
    let r = server().get(&format!("{NS}/events/{pid}"));
    assert_error(&r, 403, "event-password-protected");
    let x = get(&format!("{NS}/events/{pid}?context=export"), Some(&EDITOR));
    assert_eq!(x["password"], "s3cret-pass");
}

#[test]
fn pages_of_the_export_form_link_pages_of_the_same_form() {
    let (_, _, hidden) = three_events(2073);
    let path = format!("{NS}/events?{}&per_page=1&context=export", year_query(2073));
    let mut list = get(&path, Some(&ADMIN));
    let mut seen = Vec::new();
    loop {
        let rest_url = list["rest_url"].as_str().unwrap();
        assert!(rest_url.ends_with("&context=export"), "{rest_url}");
        seen.extend(items(&list, "events").iter().map(|e| e["id"].clone()));
        let Some(next) = list["next_rest_url"].as_str() else {
            break;
        };
        let params = query_params(next);
        assert!(
            params.contains(&("context".to_string(), "export".to_string())),
            "{next}"
        );
        let path = next.strip_prefix(&server().public).unwrap().to_string();
        list = get(&path, Some(&ADMIN));
        assert!(
            items(&list, "events")
                .iter()
                .all(|e| e["description"] == DESCRIPTION),
            "every page is in the export form: {list}"
        );
    }
    assert_eq!(seen.len(), 3);
    assert!(seen.contains(&hidden["id"]));
    // Ordinary links do not carry a context.
    let ordinary = get(
        &format!("{NS}/events?{}&per_page=1&context=edit", year_query(2073)),
        Some(&ADMIN),
    );
    let next = ordinary["next_rest_url"].as_str().unwrap();
    assert!(!next.contains("context"), "{next}");
}

#[test]
fn venues_and_organizers_answer_in_the_export_form() {
    let word = tok();
    let venue = server().create(
        &ADMIN,
        &format!("{NS}/venues"),
        &json!({"venue": format!("Hall {word}"), "description": DESCRIPTION, "city": "Lisbon"}),
    );
    let organizer = server().create(
        &ADMIN,
        &format!("{NS}/organizers"),
        &json!({"organizer": format!("Club {word}"), "description": DESCRIPTION}),
    );
    for (collection, record) in [("venues", &venue), ("organizers", &organizer)] {
        let id = record["id"].as_u64().unwrap();
        let ordinary = get(&format!("{NS}/{collection}/{id}"), Some(&ADMIN));
        assert_eq!(ordinary["description"], RENDERED, "{collection}");
        assert!(ordinary.get("json_ld").is_some());
        assert!(ordinary.get("excerpt").is_none(), "empty text is left out");

        let export = get(
            &format!("{NS}/{collection}/{id}?context=export"),
            Some(&ADMIN),
        );
        assert_eq!(export["description"], DESCRIPTION, "{collection}: {export}");
        assert_eq!(export["excerpt"], "", "the stored excerpt, even empty");
        assert_eq!(export["status"], "publish");
        assert!(export.get("json_ld").is_none());

        let slug = record["slug"].as_str().unwrap();
        let by_slug = get(
            &format!("{NS}/{collection}/by-slug/{slug}?context=export"),
            Some(&EDITOR),
        );
        assert!(same_json(&by_slug, &export), "{by_slug}\n{export}");

        let list = get(
            &format!("{NS}/{collection}?search={word}&context=export"),
            Some(&ADMIN),
        );
        let member = by_id(items(&list, collection), &record["id"]).expect("listed");
        assert!(same_json(&member, &export), "{member}\n{export}");
        assert!(
            list["rest_url"]
                .as_str()
                .unwrap()
                .ends_with("&context=export"),
            "{list}"
        );
        // And the ordinary list right after is ordinary again.
        let list = get(&format!("{NS}/{collection}?search={word}"), Some(&ADMIN));
        let member = by_id(items(&list, collection), &record["id"]).unwrap();
        assert_eq!(member["description"], RENDERED);
        assert!(!list["rest_url"].as_str().unwrap().contains("context"));
        // Other context values change nothing.
        let edit = get(
            &format!("{NS}/{collection}/{id}?context=edit"),
            Some(&ADMIN),
        );
        assert!(same_json(&edit, &ordinary));
    }
}

#[test]
fn export_is_refused_to_callers_who_may_not_edit_others_records() {
    let (plain, _, _) = three_events(2074);
    let id = plain["id"].as_u64().unwrap();
    let slug = plain["slug"].as_str().unwrap();
    let venue = server().create(
        &ADMIN,
        &format!("{NS}/venues"),
        &json!({"venue": format!("Room {}", tok())}),
    );
    let vid = venue["id"].as_u64().unwrap();
    let paths = [
        format!("{NS}/events?context=export"),
        format!("{NS}/events/{id}?context=export"),
        format!("{NS}/events/by-slug/{slug}?context=export"),
        format!("{NS}/venues?context=export"),
        format!("{NS}/venues/{vid}?context=export"),
        format!("{NS}/organizers?context=export"),
        format!("{NS}/events.ics?context=export"),
        format!("{NS}/events/{id}.ics?context=export"),
        format!("/es{NS}/events?context=export"),
    ];
    for path in &paths {
        let r = server().get(path);
        let v = assert_plain_error(&r, 401, "rest_forbidden_context");
        assert!(v["message"].as_str().unwrap().starts_with("Sorry"), "{v}");
        for who in [&AUTHOR, &CONTRIBUTOR, &SUBSCRIBER] {
            let r = server().get_as(path, who);
            assert_plain_error(&r, 403, "rest_forbidden_context");
        }
    }
    // Invalid parameters are reported first, and an unknown record is still unknown.
    let r = server().get(&format!("{NS}/events?context=export&page=0"));
    assert_invalid_params(&r, &[("page", "rest_out_of_bounds")]);
    let r = server().get(&format!("{NS}/events/999999999?context=export"));
    assert_error(&r, 404, "rest-event-not-found");
    // Without context=export the same callers read as before.
    let r = server().get_as(&format!("{NS}/events/{id}"), &AUTHOR);
    assert_eq!(r.status, 200, "{}", r.describe());
}

#[test]
fn category_and_tag_routes_ignore_a_context() {
    for collection in ["categories", "tags"] {
        let plain = server().get(&format!("{NS}/{collection}?hide_empty=false"));
        for who in [None, Some(&AUTHOR)] {
            let path = format!("{NS}/{collection}?hide_empty=false&context=export");
            let r = server().send("GET", &path, who, None);
            assert_eq!(r.status, 200, "{path}: {}", r.describe());
            if who.is_none() {
                assert_eq!(r.body, plain.body, "{path}");
            }
        }
    }
}

#[test]
fn the_document_describes_the_parameter() {
    let doc = get(&format!("{NS}/doc"), None);
    for (path, method) in [
        ("/events", "get"),
        ("/events/{id}", "get"),
        ("/venues", "get"),
        ("/venues/{id}", "get"),
        ("/venues/by-slug/{slug}", "get"),
        ("/organizers", "get"),
        ("/organizers/{id}", "get"),
    ] {
        let op = &doc["paths"][path][method];
        let params: Vec<&Value> = op["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .chain(
                doc["paths"][path]["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten(),
            )
            .collect();
        let context = params
            .iter()
            .find(|p| p["name"] == "context")
            .unwrap_or_else(|| panic!("{method} {path}: context is documented"));
        assert!(
            context["description"]
                .as_str()
                .is_some_and(|d| d.contains("export")),
            "{method} {path}: {context}"
        );
        assert!(
            op["responses"]["401"].is_object() && op["responses"]["403"].is_object(),
            "{method} {path}: 401 and 403 are documented"
        );
    }
}
