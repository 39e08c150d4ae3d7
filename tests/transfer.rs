//! `almanac export` / `almanac import` (src/transfer): JSON lines in the API's
//! representations; a dump loads into an empty data directory with IDs, slugs, statuses,
//! dates, groups and links kept, so that the server answers exactly as before; refused lines
//! are reported and leave nothing behind.

mod common;

use common::*;
use serde_json::{json, Value};
use std::path::Path;

const PUBLIC: &str = "http://calendar.example";

fn serve(dir: &Path) -> Server {
    Server::start(
        serve_cmd(dir).args(["--public-url", PUBLIC]),
        Some(PUBLIC),
        "serve",
    )
}

/// SIGTERM and a graceful exit; the server is dropped after.
fn stop(mut srv: Server) {
    srv.stop(std::time::Duration::from_secs(15));
}

fn export(dir: &Path, file: &Path) -> Output {
    almanac(["export", "--public-url", PUBLIC, "--output"])
        .arg(file.to_str().unwrap())
        .arg("--data-dir")
        .arg(dir.to_str().unwrap())
        .run()
}

fn import(dir: &Path, file: &Path) -> Output {
    almanac(["import"])
        .arg(file.to_str().unwrap())
        .arg("--data-dir")
        .arg(dir.to_str().unwrap())
        .run()
}

fn created(srv: &Server, path: &str, body: Value) -> Value {
    srv.create(&ADMIN, &format!("{NS}/{path}"), &body)
}

/// A calendar with every feature the format must carry.
fn fill(srv: &Server) -> Vec<String> {
    let music = created(srv, "categories", json!({"name": "Music"}));
    let jazz = created(
        srv,
        "categories",
        json!({"name": "Jazz", "parent": music["id"]}),
    );
    let tag = created(srv, "tags", json!({"name": "outdoor"}));
    let venue = created(
        srv,
        "venues",
        json!({"venue": "Harbour Hall", "address": "1 Quay", "city": "Lisbon",
               "country": "Portugal", "geo_lat": 38.7071, "geo_lng": -9.1355,
               "image": "https://img.example/hall.png"}),
    );
    let venue_pt = created(
        srv,
        "venues",
        json!({"venue": "Sala do Porto", "city": "Lisboa", "translation_language": "pt-br",
               "translation_of": venue["id"]}),
    );
    let organizer = created(
        srv,
        "organizers",
        json!({"organizer": "Jazz Society", "email": "jazz@example.org"}),
    );
    let night = created(
        srv,
        "events",
        json!({"title": "Jazz Night", "description": "Quartets <b>live</b>.\n\nBring friends.",
               "start_date": "2027-03-27 21:00:00", "end_date": "2027-03-28 01:30:00",
               "timezone": "Europe/Lisbon", "categories": [jazz["id"]], "tags": [tag["id"]],
               "venue": venue["id"], "organizer": [organizer["id"]], "cost": "€12",
               "featured": true, "excerpt": "Late jazz."}),
    );
    let noite = created(
        srv,
        "events",
        json!({"title": "Noite de Jazz", "start_date": "2027-03-27 21:00:00",
               "end_date": "2027-03-28 01:30:00", "timezone": "Europe/Lisbon",
               "venue": venue_pt["id"], "translation_language": "pt-br",
               "translation_of": night["id"]}),
    );
    let fair = created(
        srv,
        "events",
        json!({"title": "Book Fair", "all_day": true, "start_date": "2027-05-01",
               "end_date": "2027-05-03", "timezone": "America/New_York", "ticketed": true,
               "cost": ["5", "10"], "website": "https://fair.example"}),
    );
    let secret = created(
        srv,
        "events",
        json!({"title": "Members Evening", "start_date": "2027-06-01 19:00:00",
               "end_date": "2027-06-01 21:00:00", "password": "open sesame",
               "cost": "Pay what you can"}),
    );
    let draft = created(
        srv,
        "events",
        json!({"title": "Draft Plans", "status": "draft", "start_date": "2027-07-01 10:00:00",
               "end_date": "2027-07-01 11:00:00"}),
    );
    let gone = created(
        srv,
        "events",
        json!({"title": "Cancelled Gig", "start_date": "2027-08-01 10:00:00",
               "end_date": "2027-08-01 11:00:00"}),
    );
    let r = srv
        .req("DELETE", &format!("{NS}/events/{}", gone["id"]))
        .user(&ADMIN)
        .send();
    assert_eq!(r.status, 200, "{}", r.describe());
    let series = yoga(srv);
    let mut paths = vec![
        format!("categories/{}", music["id"]),
        format!("categories/{}", jazz["id"]),
        format!("tags/{}", tag["id"]),
        format!("venues/{}", venue["id"]),
        format!("venues/{}?translation_language=pt-br", venue_pt["id"]),
        format!("organizers/{}", organizer["id"]),
        format!("events/{}", night["id"]),
        format!("events/{}?translation_language=pt-br", noite["id"]),
        format!("events/{}", fair["id"]),
        format!("events/{}?password=open%20sesame", secret["id"]),
        format!("events/{}", draft["id"]),
        "events?per_page=50&start_date=2020-01-01".to_string(),
        "events?search=jazz".to_string(),
        "events?search=noite&translation_language=pt-br".to_string(),
        "events?geoloc=1&geoloc_lat=38.7&geoloc_lng=-9.13&geoloc_radius=5".to_string(),
        format!("events?categories={}", music["id"]),
        "categories?per_page=50".to_string(),
        "venues?search=harbour".to_string(),
        "events/by-slug/jazz-night".to_string(),
        "events?search=yoga&start_date=2027-01-01&status=publish,trash".to_string(),
    ];
    paths.extend(series.iter().map(|id| format!("events/{id}")));
    paths.iter_mut().for_each(|p| *p = format!("{NS}/{p}"));
    paths
}

/// A weekly series across Lisbon's clock change with an exception, a cancelled occurrence and
/// a split ("this and following" from the seventh); the IDs of the series, the exception, the
/// cancelled occurrence and the second series.
fn yoga(srv: &Server) -> [u64; 4] {
    let first = created(
        srv,
        "events",
        json!({"title": "Morning Yoga", "start_date": "2027-03-02 08:00:00",
               "end_date": "2027-03-02 09:00:00", "timezone": "Europe/Lisbon",
               "recurrence": ["RRULE:FREQ=WEEKLY;COUNT=8"]}),
    );
    let list = srv
        .get_as(
            &format!("{NS}/events?search=yoga&start_date=2027-01-01"),
            &ADMIN,
        )
        .json();
    let ids: Vec<u64> = list["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids.len(), 8, "{list}");
    let change = |id: u64, query: &str, body: Value| {
        let r = srv
            .req("PATCH", &format!("{NS}/events/{id}{query}"))
            .user(&ADMIN)
            .json_body(&body)
            .send();
        assert_eq!(r.status, 200, "{}", r.describe());
        r.json()
    };
    change(ids[2], "", json!({"title": "Morning Yoga in the Park"}));
    let r = srv
        .req("DELETE", &format!("{NS}/events/{}", ids[4]))
        .user(&ADMIN)
        .send();
    assert_eq!(r.status, 200, "{}", r.describe());
    let second = change(
        ids[6],
        "?scope=following",
        json!({"title": "Evening Yoga", "start_date": "2027-04-13 19:00:00",
               "end_date": "2027-04-13 20:00:00"}),
    );
    [
        first["id"].as_u64().unwrap(),
        ids[2],
        ids[4],
        second["id"].as_u64().unwrap(),
    ]
}

fn answers(srv: &Server, paths: &[String]) -> Vec<(u16, Value)> {
    paths
        .iter()
        .map(|p| {
            let r = srv.get_as(p, &ADMIN);
            (r.status, r.json())
        })
        .collect()
}

#[test]
fn an_export_imported_into_an_empty_directory_answers_exactly_as_the_original() {
    let tmp = tempfile::tempdir().unwrap();
    let (original, copy) = (tmp.path().join("original"), tmp.path().join("copy"));
    add_user(&original, &ADMIN);
    let srv = serve(&original);
    let paths = fill(&srv);
    let before = answers(&srv, &paths);
    stop(srv);

    let dump = tmp.path().join("dump.jsonl");
    let out = export(&original, &dump);
    assert_eq!(out.code, Some(0), "{}", out.describe());
    assert!(
        out.stderr
            .contains("exported 9 events, 2 venues, 1 organizers, 2 categories, 1 tags"),
        "{}",
        out.describe()
    );
    let text = std::fs::read_to_string(&dump).unwrap();
    let resources: Vec<String> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["resource"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        resources,
        [
            "categories",
            "categories",
            "tags",
            "venues",
            "venues",
            "organizers"
        ]
        .iter()
        .chain(["events"; 9].iter())
        .map(|s| s.to_string())
        .collect::<Vec<_>>(),
        "references point backwards"
    );
    assert!(
        text.contains("\"password\":\"open sesame\""),
        "the backup keeps passwords"
    );

    add_user(&copy, &ADMIN);
    let out = import(&copy, &dump);
    assert_eq!(out.code, Some(0), "{}", out.describe());
    assert!(
        out.stdout.contains(
            "imported 9 events, 2 venues, 1 organizers, 2 categories, 1 tags; refused 0 lines"
        ),
        "{}",
        out.describe()
    );
    let srv = serve(&copy);
    let after = answers(&srv, &paths);
    for ((path, b), a) in paths.iter().zip(&before).zip(&after) {
        assert_eq!(a, b, "GET {path} differs after the round trip");
    }
    // New records continue the ID sequences instead of reusing imported IDs.
    let next = created(
        &srv,
        "events",
        json!({"title": "After Import", "start_date": "2027-09-01 10:00:00", "end_date": "2027-09-01 11:00:00"}),
    );
    let highest = before
        .iter()
        .flat_map(|(_, v)| v["id"].as_u64())
        .max()
        .unwrap();
    assert!(next["id"].as_u64().unwrap() > highest, "{next}");
    stop(srv);

    // A second export of the copy is the same dump, byte for byte (without the new event).
    let again = tmp.path().join("again.jsonl");
    let second_copy = tmp.path().join("second");
    assert_eq!(import(&second_copy, &dump).code, Some(0));
    assert_eq!(export(&second_copy, &again).code, Some(0));
    assert_eq!(std::fs::read_to_string(&again).unwrap(), text);
}

#[test]
fn refused_lines_are_reported_and_leave_nothing_while_the_others_load() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let file = tmp.path().join("input.jsonl");
    let event = |id: u64, slug: &str, extra: Value| {
        let mut data = json!({"id": id, "author": "1", "status": "publish",
            "date": "2027-01-01 00:00:00", "date_utc": "2027-01-01 00:00:00",
            "modified_utc": "2027-01-01 00:00:00", "title": format!("Event {id} zanzibar"),
            "slug": slug, "start_date": "2027-02-01 10:00:00", "end_date": "2027-02-01 12:00:00",
            "timezone": "Europe/Madrid", "language": "en"});
        for (k, v) in extra.as_object().unwrap() {
            data[k] = v.clone();
        }
        json!({"resource": "events", "data": data}).to_string()
    };
    let lines = [
        /* 1 */ event(10, "good-one", json!({})),
        /* 2 */ "{not json".to_string(),
        /* 3 */ json!({"resource": "posts", "data": {}}).to_string(),
        /* 4 */ event(11, "good-one", json!({})), // slug taken by line 1
        /* 5 */ event(10, "other", json!({})), // ID taken by line 1
        /* 6 */ event(12, "bad-date", json!({"start_date": "2027-02-30 10:00:00"})),
        /* 7 */ event(13, "no-venue", json!({"venue": {"id": 999}})),
        /* 8 */ event(14, "bad-zone", json!({"timezone": "Mars/Olympus"})),
        /* 9 */ event(15, "backwards", json!({"end_date": "2027-01-01 10:00:00"})),
        /* 10 */
        event(
            16,
            "image-bad",
            json!({"image": {"id": 3, "url": "not a url"}}),
        ),
        /* 11 */
        event(
            17,
            "good-two",
            json!({"image": {"id": 40, "url": "https://img.example/a.png"}}),
        ),
        /* 12 */ "".to_string(),
        /* 13 */
        json!({"resource": "venues", "data": {"id": 20, "language": "en", "status": "publish",
            "slug": "hall", "venue": "Hall", "date": "2027-01-01 00:00:00",
            "date_utc": "2027-01-01 00:00:00", "modified_utc": "2027-01-01 00:00:00"}})
        .to_string(),
        /* 14 */ event(18, "at-the-hall", json!({"venue": {"id": 20}})),
        // The venue's language was looked up for line 14; it is still checked.
        /* 15 */
        event(
            19,
            "en-la-sala",
            json!({"venue": {"id": 20}, "language": "es"}),
        ),
        /* 16 */ json!({"resource": "events", "data": [1]}).to_string(),
        /* 17 */
        r#"{"resource": "events", "data": {"id": 30, "title": "a", "title": "b"}}"#.to_string(),
        /* 18 */
        event(
            31,
            "stray/2027-02-01",
            json!({"series_id": 10, "recurrence_id": "2027-02-01 09:00:00"}),
        ),
        /* 19 */
        event(
            32,
            "hourly",
            json!({"recurrence": ["RRULE:FREQ=HOURLY"], "occurrences": []}),
        ),
        /* 20 */
        event(
            33,
            "claims-ten",
            json!({"recurrence": ["RRULE:FREQ=DAILY;COUNT=2"], "occurrences": [
                {"id": 10, "recurrence_id": "2027-02-01 09:00:00", "state": "plain"}]}),
        ),
    ];
    std::fs::write(&file, lines.join("\n")).unwrap();
    let out = import(&dir, &file);
    assert_eq!(out.code, Some(1), "{}", out.describe());
    assert!(
        out.stdout.contains(
            "imported 3 events, 1 venues, 0 organizers, 0 categories, 0 tags; refused 15 lines"
        ),
        "{}",
        out.describe()
    );
    assert!(
        out.stderr.contains("line 15: venue 20 is not in es"),
        "{}",
        out.describe()
    );
    assert!(
        out.stderr.contains("line 16: `data` must be an object"),
        "{}",
        out.describe()
    );
    assert!(
        out.stderr
            .contains("line 17: not a JSON object: duplicate field `title`"),
        "{}",
        out.describe()
    );
    assert!(
        out.stderr
            .contains("line 18: is no occurrence of the series 10 at `recurrence_id`"),
        "{}",
        out.describe()
    );
    assert!(
        out.stderr.contains("line 19: `recurrence` "),
        "{}",
        out.describe()
    );
    assert!(
        out.stderr
            .contains("line 20: `occurrences` names ID 10, which is already in use"),
        "{}",
        out.describe()
    );
    for n in [2, 3, 4, 5, 6, 7, 8, 9, 10] {
        assert!(
            out.stderr.contains(&format!("line {n}: ")),
            "line {n} reported: {}",
            out.describe()
        );
    }
    // Lines 6 and 10 drew nothing (no image, no slug, no ID) before they were refused.
    add_user(&dir, &ADMIN);
    let srv = serve(&dir);
    let listed = srv.get_as(
        &format!("{NS}/events?search=zanzibar&start_date=2020-01-01"),
        &ADMIN,
    );
    let ids: Vec<u64> = listed.json()["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [10, 17, 18], "{}", listed.describe());
    let two = srv.get_as(&format!("{NS}/events/17"), &ADMIN).json();
    assert_eq!(two["image"]["id"], 40, "{two}");
    for id in [11, 12, 13, 14, 15, 16, 19, 31, 32, 33] {
        assert_eq!(
            srv.get_as(&format!("{NS}/events/{id}"), &ADMIN).status,
            404,
            "event {id}"
        );
    }
    let madrid = srv.get_as(&format!("{NS}/events/10"), &ADMIN).json();
    assert_eq!(
        madrid["utc_start_date"], "2027-02-01 09:00:00",
        "UTC derived in the zone"
    );
    assert_eq!(madrid["timezone_abbr"], "CET");
}

#[test]
fn import_is_refused_while_a_server_holds_the_directory() {
    let srv = Server::start_with_users(&[ADMIN]);
    let file = srv.data_dir.parent().unwrap().join("empty.jsonl");
    std::fs::write(&file, "").unwrap();
    let out = import(&srv.data_dir, &file);
    assert_eq!(out.code, Some(3), "{}", out.describe());
    let out = almanac(["export", "--data-dir"])
        .arg(srv.data_dir.to_str().unwrap())
        .run();
    assert_eq!(out.code, Some(3), "{}", out.describe());
}

#[test]
fn a_generated_calendar_exports_and_imports_from_standard_input_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let (generated, copy) = (tmp.path().join("generated"), tmp.path().join("copy"));
    let out = almanac(["generate", "--events", "300", "--seed", "9", "--data-dir"])
        .arg(generated.to_str().unwrap())
        .run();
    assert_eq!(out.code, Some(0), "{}", out.describe());
    assert!(
        out.stdout.starts_with("generated 300 events"),
        "{}",
        out.describe()
    );
    // A second generate into the same directory is refused.
    let again = almanac(["generate", "--data-dir"])
        .arg(generated.to_str().unwrap())
        .run();
    assert_eq!(again.code, Some(1), "{}", again.describe());

    let dump = tmp.path().join("dump.jsonl");
    assert_eq!(export(&generated, &dump).code, Some(0));
    let text = std::fs::read_to_string(&dump).unwrap();
    let out = almanac(["import", "-", "--batch", "7", "--data-dir"])
        .arg(copy.to_str().unwrap())
        .stdin(&text)
        .run();
    assert_eq!(out.code, Some(0), "{}", out.describe());
    assert!(
        out.stdout.contains("imported 300 events"),
        "{}",
        out.describe()
    );
    let again = tmp.path().join("again.jsonl");
    assert_eq!(export(&copy, &again).code, Some(0));
    assert_eq!(std::fs::read_to_string(&again).unwrap(), text);

    // The copy serves what the generated calendar serves.
    add_user(&generated, &ADMIN);
    add_user(&copy, &ADMIN);
    let paths = [
        format!("{NS}/events?per_page=50&start_date=2020-01-01"),
        format!("{NS}/events?search=jazz&start_date=2020-01-01"),
        format!("{NS}/venues?per_page=50"),
        format!("{NS}/categories?per_page=50&translation_language=es"),
    ];
    let srv = serve(&generated);
    let before = answers(&srv, &paths);
    stop(srv);
    let srv = serve(&copy);
    assert_eq!(answers(&srv, &paths), before);
    assert!(
        before[0].1["total"].as_u64().unwrap() > 50,
        "{}",
        before[0].1
    );
}

/// `import --from` another almanac with an editor's credentials (docs/operations.md, "Moving
/// in from WordPress"): the copy's export equals the source's.
fn copy_from(source: &Server, into: &Path, extra: &[&str]) -> Output {
    almanac([
        "import",
        "--from",
        &format!("{}{NS}", source.base),
        "--user",
    ])
    .arg(format!("{}:{}", ADMIN.name, ADMIN.password))
    .args(["--retries", "0", "--data-dir"])
    .arg(into.to_str().unwrap())
    .args(extra)
    .run()
}

fn exported(dir: &Path, tmp: &Path, name: &str) -> String {
    let file = tmp.join(name);
    let out = export(dir, &file);
    assert_eq!(out.code, Some(0), "{}", out.describe());
    std::fs::read_to_string(file).unwrap()
}

#[test]
fn a_calendar_copied_over_http_exports_exactly_as_its_source_and_follows_its_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let (source, copy) = (tmp.path().join("source"), tmp.path().join("copy"));
    add_user(&source, &ADMIN);
    let srv = serve(&source);
    fill(&srv);
    // The third language, an event hidden from listings, a category's child.
    let fiesta = created(
        &srv,
        "events",
        json!({"title": "Fiesta de Jazz", "start_date": "2027-04-10 22:00:00",
               "end_date": "2027-04-11 02:00:00", "timezone": "Europe/Madrid",
               "translation_language": "es", "hide_from_listings": true,
               "description": "Con <em>invitados</em>.\n\nEntrada libre."}),
    );
    let musica = created(
        &srv,
        "categories",
        json!({"name": "Música", "translation_language": "es"}),
    );
    created(
        &srv,
        "categories",
        json!({"name": "Flamenco", "parent": musica["id"], "translation_language": "es"}),
    );

    let out = copy_from(&srv, &copy, &[]);
    assert_eq!(out.code, Some(0), "{}", out.describe());
    assert_eq!(
        out.stdout.trim(),
        "added 18, updated 0, unchanged 0, trashed 0, refused 0",
        "{}",
        out.describe()
    );
    let again = copy_from(&srv, &copy, &["--mirror"]);
    assert_eq!(
        again.stdout.trim(),
        "added 0, updated 0, unchanged 18, trashed 0, refused 0",
        "{}",
        again.describe()
    );
    stop(srv);
    assert_eq!(
        exported(&copy, tmp.path(), "copy.jsonl"),
        exported(&source, tmp.path(), "source.jsonl"),
        "the copy exports as its source"
    );

    // Changes at the source: an update, a deleted tag (its event keeps its `modified`). The
    // copy tells an update by `modified_utc`, in whole seconds: the update must fall in a later
    // second than the event's creation.
    let created_at = fiesta["modified_utc"].as_str().unwrap().to_string();
    while chrono::Utc::now().format("%Y-%m-%d %H:%M:%S").to_string() <= created_at {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let srv = serve(&source);
    let r = srv
        .req(
            "PATCH",
            &format!("{NS}/events/{}?translation_language=es", fiesta["id"]),
        )
        .user(&ADMIN)
        .json_body(&json!({"title": "Fiesta de Jazz y Blues"}))
        .send();
    assert_eq!(r.status, 200, "{}", r.describe());
    let tags = srv
        .get_as(&format!("{NS}/tags?hide_empty=false"), &ADMIN)
        .json();
    let tag = tags["tags"][0]["id"].as_u64().unwrap();
    let r = srv
        .req("DELETE", &format!("{NS}/tags/{tag}"))
        .user(&ADMIN)
        .send();
    assert_eq!(r.status, 200, "{}", r.describe());
    // A cancelled occurrence changes its series (whose own record stays as it was).
    let yoga = srv
        .get_as(
            &format!("{NS}/events?search=yoga&start_date=2027-01-01"),
            &ADMIN,
        )
        .json();
    let r = srv
        .req(
            "DELETE",
            &format!("{NS}/events/{}", yoga["events"][1]["id"]),
        )
        .user(&ADMIN)
        .send();
    assert_eq!(r.status, 200, "{}", r.describe());
    let mirrored = copy_from(&srv, &copy, &["--mirror"]);
    assert_eq!(
        mirrored.stdout.trim(),
        "added 0, updated 2, unchanged 15, trashed 1, refused 0",
        "{}",
        mirrored.describe()
    );
    stop(srv);
    assert_eq!(
        exported(&copy, tmp.path(), "copy2.jsonl"),
        exported(&source, tmp.path(), "source2.jsonl"),
        "the copy follows its source"
    );
}

#[test]
fn without_credentials_a_copy_holds_what_the_public_sees() {
    let tmp = tempfile::tempdir().unwrap();
    let (source, copy) = (tmp.path().join("source"), tmp.path().join("copy"));
    add_user(&source, &ADMIN);
    let srv = serve(&source);
    fill(&srv);
    let out = almanac([
        "import",
        "--from",
        &format!("{}{NS}", srv.base),
        "--retries",
        "0",
        "--data-dir",
    ])
    .arg(copy.to_str().unwrap())
    .run();
    // The protected event is listed without its content: refused rather than copied empty
    // and unprotected, the rest loaded.
    assert_eq!(out.code, Some(1), "{}", out.describe());
    assert!(
        out.stdout.trim().ends_with("refused 1"),
        "{}",
        out.describe()
    );
    assert!(
        out.stderr.contains("password-protected"),
        "{}",
        out.describe()
    );
    stop(srv);
    let copied = exported(&copy, tmp.path(), "copy.jsonl");
    let statuses: Vec<String> = copied
        .lines()
        .filter_map(|l| {
            let line: Value = serde_json::from_str(l).unwrap();
            line["data"]["status"].as_str().map(str::to_string)
        })
        .collect();
    assert!(
        !statuses.is_empty() && statuses.iter().all(|s| s == "publish"),
        "{statuses:?}"
    );
    for unseen in ["Draft Plans", "Cancelled Gig", "Members Evening"] {
        assert!(!copied.contains(unseen), "{unseen}: {copied}");
    }
}

#[test]
fn a_copy_follows_its_source_through_the_change_feed_and_walks_again_when_it_forgot() {
    let tmp = tempfile::tempdir().unwrap();
    let (source, copy) = (tmp.path().join("source"), tmp.path().join("copy"));
    add_user(&source, &ADMIN);
    // The copy knows its source by its address: the source keeps its port across restarts.
    let port = common::browser::free_port();
    let serve_at = |extra: &[&str]| {
        let cmd = almanac([
            "serve",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--data-dir",
        ])
        .arg(source.to_str().unwrap())
        .args(["--public-url", PUBLIC])
        .args(extra);
        Server::start(cmd, Some(PUBLIC), "serve")
    };
    let srv = serve_at(&[]);
    fill(&srv);
    let first = copy_from(&srv, &copy, &["--mirror"]);
    assert_eq!(first.code, Some(0), "{}", first.describe());
    // Nothing changed: the feed says so, and no record is read again.
    let idle = copy_from(&srv, &copy, &["--mirror"]);
    assert_eq!(
        idle.stdout.trim(),
        "added 0, updated 0, unchanged 0, trashed 0, refused 0",
        "{}",
        idle.describe()
    );
    // Changes of every kind at the source, in a later second than the copy's reads (the copy
    // tells an update by `modified_utc`, in whole seconds).
    let read_at = chrono::Utc::now().format("%Y-%m-%d %H:%M:%S").to_string();
    while chrono::Utc::now().format("%Y-%m-%d %H:%M:%S").to_string() <= read_at {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    created(
        &srv,
        "events",
        json!({"title": "Late Addition", "start_date": "2027-05-20 20:00:00",
               "end_date": "2027-05-20 22:00:00"}),
    );
    let tags = srv
        .get_as(&format!("{NS}/tags?hide_empty=false"), &ADMIN)
        .json();
    let tag = tags["tags"][0]["id"].as_u64().unwrap();
    let r = srv
        .req("DELETE", &format!("{NS}/tags/{tag}"))
        .user(&ADMIN)
        .send();
    assert_eq!(r.status, 200, "{}", r.describe());
    let venues = srv
        .get_as(&format!("{NS}/venues?per_page=50"), &ADMIN)
        .json();
    let venue = venues["venues"][0]["id"].as_u64().unwrap();
    let r = srv
        .req("PATCH", &format!("{NS}/venues/{venue}"))
        .user(&ADMIN)
        .json_body(&json!({"city": "Porto"}))
        .send();
    assert_eq!(r.status, 200, "{}", r.describe());
    let yoga = srv
        .get_as(
            &format!("{NS}/events?search=yoga&start_date=2027-01-01"),
            &ADMIN,
        )
        .json();
    let r = srv
        .req("PATCH", &format!("{NS}/events/{}", yoga["events"][2]["id"]))
        .user(&ADMIN)
        .json_body(&json!({"title": "Yoga on the beach"}))
        .send();
    assert_eq!(r.status, 200, "{}", r.describe());
    let followed = copy_from(&srv, &copy, &["--mirror"]);
    assert_eq!(followed.code, Some(0), "{}", followed.describe());
    let summary = followed.stdout.trim().to_string();
    assert!(summary.starts_with("added 1, "), "{}", followed.describe());
    assert!(
        summary.ends_with("trashed 1, refused 0"),
        "{}",
        followed.describe()
    );
    stop(srv);
    assert_eq!(
        exported(&copy, tmp.path(), "copy.jsonl"),
        exported(&source, tmp.path(), "source.jsonl"),
        "the copy follows its source"
    );

    // The source forgets a deletion newer than the copy's token: the copy walks it whole.
    let srv = serve_at(&[]);
    let categories = srv
        .get_as(
            &format!("{NS}/categories?hide_empty=false&search=jazz"),
            &ADMIN,
        )
        .json();
    let category = categories["categories"][0]["id"].as_u64().unwrap();
    let r = srv
        .req("DELETE", &format!("{NS}/categories/{category}"))
        .user(&ADMIN)
        .send();
    assert_eq!(r.status, 200, "{}", r.describe());
    stop(srv);
    std::thread::sleep(std::time::Duration::from_secs(2));
    let srv = serve_at(&["--change-retention", "1s"]);
    let expired = poll(
        std::time::Duration::from_secs(20),
        std::time::Duration::from_millis(100),
        || srv.get(&format!("{NS}/changes?since=c1")).status,
        |status| *status == 410,
    );
    assert_eq!(expired, 410);
    let walked = copy_from(&srv, &copy, &["--mirror"]);
    assert_eq!(walked.code, Some(0), "{}", walked.describe());
    assert!(
        walked.stderr.contains("copying it whole"),
        "{}",
        walked.describe()
    );
    assert!(
        walked.stdout.trim().ends_with("trashed 1, refused 0"),
        "{}",
        walked.describe()
    );
    stop(srv);
    assert_eq!(
        exported(&copy, tmp.path(), "copy2.jsonl"),
        exported(&source, tmp.path(), "source2.jsonl"),
        "the copy walked its source whole"
    );
}
