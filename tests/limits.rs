//! String limits (docs/api.md, "Limits"): 65 535 bytes for any string, except descriptions (bounded
//! only by the 1 MiB body limit) and the shorter limits of names.

mod common;

use common::*;
use serde_json::json;

#[test]
fn descriptions_are_bounded_only_by_the_body_while_other_strings_stop_at_64_kib() {
    let srv = Server::start_with_users(&STANDARD_USERS);
    let long = "word ".repeat(30_000); // 150 000 bytes
    for (path, body) in [
        ("venues", json!({"venue": "Long Hall", "description": long})),
        (
            "organizers",
            json!({"organizer": "Long Club", "description": long}),
        ),
        (
            "categories",
            json!({"name": "Long Category", "description": long}),
        ),
        (
            "events",
            json!({"title": "Long Night", "start_date": "2027-01-01 10:00:00", "end_date": "2027-01-01 11:00:00", "description": long}),
        ),
    ] {
        let r = srv
            .req("POST", &format!("{NS}/{path}"))
            .user(&ADMIN)
            .json_body(&body)
            .send();
        assert_eq!(r.status, 201, "{path}: {}", r.describe());
    }
    let too_long = "x".repeat(65_536);
    for (path, body, field) in [
        (
            "venues",
            json!({"venue": "Short Hall", "city": too_long}),
            "city",
        ),
        (
            "events",
            json!({"title": too_long, "start_date": "2027-01-01 10:00:00", "end_date": "2027-01-01 11:00:00"}),
            "title",
        ),
        ("tags", json!({"name": "y".repeat(201)}), "name"),
    ] {
        let r = srv
            .req("POST", &format!("{NS}/{path}"))
            .user(&ADMIN)
            .json_body(&body)
            .send();
        assert_eq!(r.status, 400, "{path}: {}", r.describe());
        let v = r.json();
        assert_eq!(v["code"], "rest_invalid_param");
        assert_eq!(
            v["data"]["details"][field]["code"], "rest_too_long",
            "{path}: {v}"
        );
    }
    // Nothing was written by the refused requests.
    let venues = srv
        .req("GET", &format!("{NS}/venues?search=short"))
        .send()
        .json();
    assert_eq!(venues["total"], 0);
}
