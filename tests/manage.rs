//! The editors' pages (docs/pages.md, "Editors' pages") over real HTTP against the binary:
//! signing in and out, sessions and their cookies, form tokens, the dashboard and its bulk
//! actions under the API's rules, password changes. The browser and accessibility checks are
//! in tests/pages_browser.rs.

mod common;

use common::*;
use serde_json::json;
use std::sync::OnceLock;

fn srv() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(|| {
        // Visitors' proposals on (they are off by default: tests/pages.rs).
        Server::start_with_users_and(&STANDARD_USERS, |cmd| {
            cmd.env("ALMANAC_PUBLIC_SUBMISSIONS", "true")
        })
        .into_static()
    })
}

fn form(fields: &[(&str, &str)]) -> String {
    let mut out = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in fields {
        out.append_pair(k, v);
    }
    out.finish()
}

/// The value of cookie `name` set by `r`, with the whole `Set-Cookie` line.
fn set_cookie<'a>(r: &'a Resp, name: &str) -> Option<(String, &'a str)> {
    r.header_all("set-cookie").into_iter().find_map(|line| {
        let (pair, _) = line.split_once(';').unwrap_or((line, ""));
        let (n, v) = pair.split_once('=')?;
        (n == name).then(|| (v.to_string(), line))
    })
}

/// The `value` of the hidden input `name` in a page.
fn hidden(html: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html
        .find(&marker)
        .unwrap_or_else(|| panic!("no {name} in {html}"))
        + marker.len();
    html[start..start + html[start..].find('"').unwrap()].to_string()
}

/// A signed-in browser: its session cookie and the session's form token.
struct Browser {
    cookie: String,
    token: String,
}

impl Browser {
    fn get(&self, path: &str) -> Resp {
        srv()
            .req("GET", path)
            .header("Cookie", &format!("almanac_session={}", self.cookie))
            .send()
    }

    fn post(&self, path: &str, fields: &[(&str, &str)]) -> Resp {
        srv()
            .req("POST", path)
            .header("Cookie", &format!("almanac_session={}", self.cookie))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(form(fields))
            .send()
    }
}

/// Signs in through the form; the answer of the sign-in POST.
fn try_sign_in(name: &str, password: &str) -> Resp {
    let page = srv().get("/manage/");
    assert_eq!(page.status, 200, "{}", page.describe());
    let (state, _) = set_cookie(&page, "almanac_sign_in").expect("the sign-in cookie");
    let token = hidden(&page.text(), "form_token");
    assert_eq!(token, state, "the form carries its cookie's token");
    srv()
        .req("POST", "/manage/sign-in")
        .header("Cookie", &format!("almanac_sign_in={state}"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(form(&[
            ("form_token", &token),
            ("name", name),
            ("password", password),
        ]))
        .send()
}

fn sign_in(user: &TestUser) -> Browser {
    let r = try_sign_in(user.name, user.password);
    assert_eq!(r.status, 303, "{}", r.describe());
    let (cookie, _) = set_cookie(&r, "almanac_session").expect("a session cookie");
    let browser = Browser {
        cookie,
        token: String::new(),
    };
    let dashboard = browser.get("/manage/");
    assert_eq!(dashboard.status, 200, "{}", dashboard.describe());
    Browser {
        token: hidden(&dashboard.text(), "form_token"),
        ..browser
    }
}

fn event(user: &TestUser, title: &str) -> u64 {
    srv().create(
        user,
        &format!("{NS}/events"),
        &json!({"title": title, "start_date": "2027-05-04 18:00:00",
                "end_date": "2027-05-04 20:00:00"}),
    )["id"]
        .as_u64()
        .unwrap()
}

fn status_of(id: u64) -> String {
    let r = srv().get_as(&format!("{NS}/events/{id}"), &ADMIN);
    match r.status {
        200 => r.json()["status"].as_str().unwrap().to_string(),
        403 => "trash".to_string(),
        other => panic!("event {id}: {other} {}", r.describe()),
    }
}

#[test]
fn signing_in_sets_a_new_http_only_session_cookie_and_shows_the_dashboard() {
    let r = try_sign_in(EDITOR.name, EDITOR.password);
    assert_eq!(r.status, 303, "{}", r.describe());
    assert!(
        r.header("location").unwrap().ends_with("/manage/"),
        "{}",
        r.describe()
    );
    let (first, line) = set_cookie(&r, "almanac_session").unwrap();
    for flag in ["HttpOnly", "SameSite=Lax", "Path=/", "Max-Age="] {
        assert!(line.contains(flag), "{flag} in {line}");
    }
    assert!(!line.contains("Secure"), "plain http: {line}");
    // A second sign-in is a new session, never the old one again.
    let again = try_sign_in(EDITOR.name, EDITOR.password);
    let (second, _) = set_cookie(&again, "almanac_session").unwrap();
    assert_ne!(first, second);
    assert!(first.len() >= 40, "{first}");

    let title = format!("Dashboard {} <script>alert(1)</script>", tok());
    let id = event(&EDITOR, &title);
    let browser = sign_in(&EDITOR);
    let page = browser.get(&format!("/manage/?s={}", title.split(' ').nth(1).unwrap()));
    assert_eq!(page.status, 200);
    assert_eq!(page.header("cache-control"), Some("no-store"));
    let html = page.text();
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{html}"
    );
    assert!(!html.contains("<script>alert"), "{html}");
    assert!(html.contains(&format!("value=\"{id}\"")), "{html}");
    assert!(html.contains("Signed in as editor"), "{html}");
    // The same page in Spanish.
    let es = browser.get("/es/manage/").text();
    assert!(
        es.contains("Cerrar sesión") && es.contains("lang=\"es\""),
        "{es}"
    );
}

#[test]
fn a_sign_in_form_without_its_token_or_with_a_wrong_password_opens_no_session() {
    let page = srv().get("/manage/");
    let token = hidden(&page.text(), "form_token");
    let r = srv()
        .req("POST", "/manage/sign-in")
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(form(&[
            ("form_token", &token),
            ("name", ADMIN.name),
            ("password", ADMIN.password),
        ]))
        .send();
    assert_eq!(r.status, 403, "{}", r.describe());
    assert!(set_cookie(&r, "almanac_session").is_none());
    let wrong = try_sign_in(AUTHOR.name, "not the password");
    assert_eq!(wrong.status, 401, "{}", wrong.describe());
    assert!(set_cookie(&wrong, "almanac_session").is_none());
    let html = wrong.text();
    assert!(
        html.contains("The user name or the password is wrong."),
        "{html}"
    );
    assert!(
        html.contains("value=\"author\""),
        "the name is kept: {html}"
    );
}

#[test]
fn bulk_actions_need_the_form_token_and_follow_the_api_rules() {
    let word = tok();
    let own = event(&AUTHOR, &format!("Own {word}"));
    let others = event(&EDITOR, &format!("Others {word}"));
    let author = sign_in(&AUTHOR);
    // The dashboard of an author lists their own events only.
    let listed = author.get(&format!("/manage/?s={word}")).text();
    assert!(listed.contains(&format!("value=\"{own}\"")), "{listed}");
    assert!(!listed.contains(&format!("value=\"{others}\"")), "{listed}");

    let own_id = own.to_string();
    for token in [None, Some("wrong"), Some("")] {
        let mut fields = vec![("action", "trash"), ("id", own_id.as_str())];
        if let Some(token) = token {
            fields.push(("form_token", token));
        }
        let r = author.post("/manage/events", &fields);
        assert_eq!(r.status, 403, "token {token:?}: {}", r.describe());
        assert_eq!(status_of(own), "publish", "nothing changed");
    }
    // An ID put into the form by hand: the API's rules refuse it.
    let others_id = others.to_string();
    let r = author.post(
        "/manage/events",
        &[
            ("form_token", &author.token),
            ("action", "trash"),
            ("id", &own_id),
            ("id", &others_id),
        ],
    );
    assert_eq!(r.status, 303, "{}", r.describe());
    let back = r.header("location").unwrap().to_string();
    assert!(
        back.contains("done=1") && back.contains("refused=1"),
        "{back}"
    );
    assert_eq!(status_of(own), "trash");
    assert_eq!(status_of(others), "publish");
    let path = back.split_once("://").unwrap().1;
    let path = &path[path.find('/').unwrap()..];
    let notice = author.get(path).text();
    assert!(notice.contains("Done for 1 events."), "{notice}");

    let r = author.post(
        "/manage/events",
        &[
            ("form_token", &author.token),
            ("action", "restore"),
            ("id", &own_id),
        ],
    );
    assert_eq!(r.status, 303, "{}", r.describe());
    assert_eq!(status_of(own), "publish");

    // A contributor's "publish" is a submission for review, as in the API.
    let draft = srv().create(
        &CONTRIBUTOR,
        &format!("{NS}/events"),
        &json!({"title": format!("Proposal {word}"), "status": "draft",
                "start_date": "2027-05-04 18:00:00", "end_date": "2027-05-04 20:00:00"}),
    )["id"]
        .as_u64()
        .unwrap();
    let contributor = sign_in(&CONTRIBUTOR);
    let draft_id = draft.to_string();
    contributor.post(
        "/manage/events",
        &[
            ("form_token", &contributor.token),
            ("action", "publish"),
            ("id", &draft_id),
        ],
    );
    assert_eq!(status_of(draft), "pending");
}

/// Signs `ADMIN` in at `own` with `password`: the session cookie and its form token.
fn sign_in_at(own: &Server, password: &str) -> (String, String) {
    let page = own.get("/manage/");
    let (state, _) = set_cookie(&page, "almanac_sign_in").unwrap();
    let r = own
        .req("POST", "/manage/sign-in")
        .header("Cookie", &format!("almanac_sign_in={state}"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(form(&[
            ("form_token", &state),
            ("name", ADMIN.name),
            ("password", password),
        ]))
        .send();
    assert_eq!(r.status, 303, "{}", r.describe());
    let cookie = set_cookie(&r, "almanac_session").unwrap().0;
    let dashboard = own
        .req("GET", "/manage/")
        .header("Cookie", &format!("almanac_session={cookie}"))
        .send();
    (cookie, hidden(&dashboard.text(), "form_token"))
}

/// Whether the session `cookie` is signed in at `own`.
fn signed_in_at(own: &Server, cookie: &str) -> bool {
    own.req("GET", "/manage/password")
        .header("Cookie", &format!("almanac_session={cookie}"))
        .send()
        .status
        == 200
}

#[test]
fn a_session_is_kept_in_the_store_across_restarts() {
    let (_tmp, dir) = fresh_data_dir(&[ADMIN]);
    let mut own = Server::start(serve_cmd(&dir), None, "server");
    let (cookie, _) = sign_in_at(&own, ADMIN.password);
    assert!(signed_in_at(&own, &cookie));
    own.stop(std::time::Duration::from_secs(15));
    drop(own);
    let own = Server::start(serve_cmd(&dir), None, "restarted server");
    assert!(
        signed_in_at(&own, &cookie),
        "the session survives the restart"
    );
    assert!(
        !signed_in_at(&own, "made-up"),
        "an unknown cookie is no session"
    );
}

#[test]
fn signing_out_or_changing_the_password_ends_sessions() {
    let (_tmp, dir) = fresh_data_dir(&[ADMIN]);
    let own = Server::start(serve_cmd(&dir), None, "server");
    let sign_in_at = |password: &str| sign_in_at(&own, password);
    let signed_in = |cookie: &str| signed_in_at(&own, cookie);
    let post = |cookie: &str, path: &str, fields: &[(&str, &str)]| {
        own.req("POST", path)
            .header("Cookie", &format!("almanac_session={cookie}"))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(form(fields))
            .send()
    };

    let (leaving, token) = sign_in_at(ADMIN.password);
    assert!(signed_in(&leaving));
    let r = post(&leaving, "/manage/sign-out", &[("form_token", &token)]);
    assert_eq!(r.status, 303, "{}", r.describe());
    assert!(set_cookie(&r, "almanac_session")
        .unwrap()
        .1
        .contains("Max-Age=0"));
    assert!(!signed_in(&leaving), "a signed-out session is refused");

    let (other, _) = sign_in_at(ADMIN.password);
    let (changer, token) = sign_in_at(ADMIN.password);
    let mismatch = post(
        &changer,
        "/manage/password",
        &[
            ("form_token", &token),
            ("current", ADMIN.password),
            ("new", "A-new-pass-9"),
            ("repeat", "Another-pass-9"),
        ],
    );
    assert_eq!(mismatch.status, 422, "{}", mismatch.describe());
    assert!(mismatch
        .text()
        .contains("The two new passwords are not the same."));
    let changed = post(
        &changer,
        "/manage/password",
        &[
            ("form_token", &token),
            ("current", ADMIN.password),
            ("new", "A-new-pass-9"),
            ("repeat", "A-new-pass-9"),
        ],
    );
    assert_eq!(changed.status, 200, "{}", changed.describe());
    let renewed = set_cookie(&changed, "almanac_session").unwrap().0;
    assert_ne!(renewed, changer);
    assert!(!signed_in(&other), "another browser's session ended");
    assert!(!signed_in(&changer), "this browser's old session ended");
    assert!(signed_in(&renewed));
    let api = own
        .req("GET", &format!("{NS}/events?status=draft"))
        .auth(ADMIN.name, "A-new-pass-9")
        .send();
    assert_eq!(api.status, 200, "{}", api.describe());
    // A form sent with an ended session changes nothing.
    let stale = post(&other, "/manage/sign-out", &[("form_token", &token)]);
    assert_eq!(stale.status, 403, "{}", stale.describe());
}

#[test]
fn wrong_passwords_on_the_form_count_with_basic_auth_failures() {
    let (_tmp, dir) = fresh_data_dir(&[ADMIN]);
    let own = Server::start(serve_cmd(&dir), None, "server");
    for n in 0..14 {
        let page = own.get("/manage/");
        let (state, _) = set_cookie(&page, "almanac_sign_in").unwrap();
        let r = own
            .req("POST", "/manage/sign-in")
            .header("Cookie", &format!("almanac_sign_in={state}"))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(form(&[
                ("form_token", &state),
                ("name", ADMIN.name),
                ("password", &format!("guess {n}")),
            ]))
            .send();
        assert!(matches!(r.status, 401 | 429), "{}", r.describe());
    }
    // The name is locked now, for HTTP Basic too (the right password is not even checked).
    let basic = own.req("GET", &format!("{NS}/events")).user(&ADMIN).send();
    assert_eq!(basic.status, 429, "{}", basic.describe());
}

/// The fields of a complete event form, as a browser sends them.
fn event_fields<'a>(token: &'a str, title: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("form_token", token),
        ("title", title),
        ("description", "First line.\n\nSecond paragraph."),
        ("excerpt", ""),
        ("start_date", "2027-06-10T19:00"),
        ("end_date", "2027-06-10T21:30"),
        ("timezone", "Europe/Lisbon"),
        ("venue", ""),
        ("new_venue", ""),
        ("new_organizers", ""),
        ("new_categories", ""),
        ("new_tags", ""),
        ("cost", "10"),
        ("website", ""),
        ("image", ""),
        ("show_map", "true"),
        ("password", ""),
        ("status", "publish"),
    ]
}

fn with<'a>(
    mut fields: Vec<(&'a str, &'a str)>,
    changes: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    for (name, value) in changes {
        fields.retain(|(n, _)| n != name);
        fields.push((name, value));
    }
    fields
}

#[test]
fn the_event_form_creates_and_edits_by_the_api_rules_and_keeps_refused_values() {
    let editor = sign_in(&EDITOR);
    let blank = editor.get("/manage/events/new");
    assert_eq!(blank.status, 200, "{}", blank.describe());
    assert!(
        blank
            .text()
            .contains("name=\"start_date\" type=\"datetime-local\""),
        "{}",
        blank.text()
    );

    // Refused: a missing title, then a time zone the API refuses; every value comes back.
    let word = tok();
    let title = format!("Poetry {word} <b>night</b>");
    let fields = event_fields(&editor.token, &title);
    let r = editor.post(
        "/manage/events/new",
        &with(fields.clone(), &[("title", "")]),
    );
    assert_eq!(r.status, 422, "{}", r.describe());
    let html = r.text();
    assert!(html.contains("id=\"title-error\""), "{html}");
    assert!(
        html.contains("value=\"2027-06-10T19:00\"") && html.contains("value=\"10\""),
        "{html}"
    );
    let r = editor.post(
        "/manage/events/new",
        &with(fields.clone(), &[("timezone", "Mars/Olympus")]),
    );
    assert_eq!(r.status, 422, "{}", r.describe());
    let html = r.text();
    assert!(html.contains("id=\"timezone-error\""), "{html}");
    assert!(html.contains("value=\"Mars/Olympus\""), "{html}");
    let listed = srv().get_as(
        &format!("{NS}/events?search={word}&status=publish,draft"),
        &ADMIN,
    );
    assert_eq!(
        listed.json()["events"].as_array().unwrap().len(),
        0,
        "nothing was written"
    );

    // Created, with a new venue and a new category made in the same write.
    let venue = format!("Hall {word}");
    let category = format!("Verse {word}");
    let r = editor.post(
        "/manage/events/new",
        &with(
            fields.clone(),
            &[("new_venue", &venue), ("new_categories", &category)],
        ),
    );
    assert_eq!(r.status, 303, "{}", r.describe());
    let location = r.header("location").unwrap().to_string();
    let id: u64 = location
        .split("/manage/events/")
        .nth(1)
        .and_then(|rest| rest.split('?').next())
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("{location}"));
    let api = srv().get_as(&format!("{NS}/events/{id}"), &ADMIN).json();
    assert_eq!(api["title"], title.as_str(), "{api}");
    assert_eq!(api["status"], "publish");
    assert_eq!(api["start_date"], "2027-06-10 19:00:00");
    assert_eq!(api["timezone"], "Europe/Lisbon");
    assert_eq!(api["venue"]["venue"], venue.as_str(), "{api}");
    assert_eq!(api["categories"][0]["name"], category.as_str(), "{api}");
    assert_eq!(api["show_map"], true);
    assert_eq!(api["featured"], false);
    // On the public list, and the form shows it escaped.
    let public = srv().get(&format!("/events/list/?s={word}")).text();
    assert!(public.contains("Poetry"), "{public}");
    let form = editor.get(&format!("/manage/events/{id}?saved=1")).text();
    assert!(form.contains("Saved."), "{form}");
    assert!(form.contains("&lt;b&gt;night&lt;/b&gt;"), "{form}");
    assert!(!form.contains("<b>night</b>"), "{form}");

    // Edited: the venue kept by its ID, the title changed.
    let venue_id = api["venue"]["id"].to_string();
    let category_id = api["categories"][0]["id"].to_string();
    let r = editor.post(
        &format!("/manage/events/{id}"),
        &with(
            fields,
            &[
                ("title", "Poetry renamed"),
                ("venue", &venue_id),
                ("categories", &category_id),
            ],
        ),
    );
    assert_eq!(r.status, 303, "{}", r.describe());
    let api = srv().get_as(&format!("{NS}/events/{id}"), &ADMIN).json();
    assert_eq!(api["title"], "Poetry renamed");
    assert_eq!(api["venue"]["venue"], venue.as_str());
    assert_eq!(api["categories"][0]["name"], category.as_str());
}

#[test]
fn the_event_form_refuses_what_the_api_refuses() {
    let word = tok();
    let others = event(&EDITOR, &format!("Not yours {word}"));
    let author = sign_in(&AUTHOR);
    assert_eq!(author.get(&format!("/manage/events/{others}")).status, 403);
    let title = format!("Taken over {word}");
    let r = author.post(
        &format!("/manage/events/{others}"),
        &event_fields(&author.token, &title),
    );
    assert_eq!(r.status, 403, "{}", r.describe());
    let api = srv()
        .get_as(&format!("{NS}/events/{others}"), &ADMIN)
        .json();
    assert_eq!(api["title"], format!("Not yours {word}").as_str());
    // Without the form token: nothing written.
    let fields = event_fields("", &title);
    assert_eq!(author.post("/manage/events/new", &fields).status, 403);
    // A contributor's "publish" is a submission for review.
    let contributor = sign_in(&CONTRIBUTOR);
    let r = contributor.post(
        "/manage/events/new",
        &event_fields(&contributor.token, &format!("Submitted {word}")),
    );
    assert_eq!(r.status, 303, "{}", r.describe());
    let listed = srv()
        .get_as(
            &format!("{NS}/events?search={word}&status=pending,publish,draft"),
            &ADMIN,
        )
        .json();
    let statuses: Vec<&str> = listed["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["title"].as_str().unwrap().starts_with("Submitted"))
        .map(|e| e["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["pending"]);
}

#[test]
fn venues_and_organizers_are_listed_created_edited_trashed_and_restored_by_the_api_rules() {
    let word = tok();
    let editor = sign_in(&EDITOR);
    // A venue created from the form, with coordinates and the map flags.
    let name = format!("Quay Hall {word}");
    let fields = |name: &str, lat: &str| {
        vec![
            ("form_token".to_string(), editor.token.clone()),
            ("venue".to_string(), name.to_string()),
            ("description".to_string(), "By the river.".to_string()),
            ("address".to_string(), "1 Quay".to_string()),
            ("city".to_string(), "Lisbon".to_string()),
            ("country".to_string(), "Portugal".to_string()),
            ("geo_lat".to_string(), lat.to_string()),
            ("geo_lng".to_string(), "-9.1355".to_string()),
            ("show_map".to_string(), "true".to_string()),
            ("status".to_string(), "publish".to_string()),
        ]
    };
    let post = |path: &str, fields: &[(String, String)]| {
        let pairs: Vec<(&str, &str)> = fields
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        editor.post(path, &pairs)
    };
    // Refused by the API's rules: a latitude out of range; the values come back.
    let r = post("/manage/venues/new", &fields(&name, "123"));
    assert_eq!(r.status, 422, "{}", r.describe());
    let html = r.text();
    assert!(html.contains("id=\"geo_lat-error\""), "{html}");
    assert!(html.contains(&format!("value=\"{name}\"")), "{html}");
    let r = post("/manage/venues/new", &fields(&name, "38.7071"));
    assert_eq!(r.status, 303, "{}", r.describe());
    let location = r.header("location").unwrap().to_string();
    let id: u64 = location
        .split("/manage/venues/")
        .nth(1)
        .and_then(|rest| rest.split('?').next())
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("{location}"));
    let api = srv().get_as(&format!("{NS}/venues/{id}"), &ADMIN).json();
    assert_eq!(api["venue"], name.as_str(), "{api}");
    assert_eq!(api["city"], "Lisbon");
    assert_eq!(api["show_map"], true);
    assert_eq!(api["show_map_link"], false);
    // The list finds it; the form shows what is stored.
    let list = editor.get(&format!("/manage/venues/?s={word}")).text();
    assert!(list.contains(&format!("value=\"{id}\"")), "{list}");
    let form = editor.get(&format!("/manage/venues/{id}")).text();
    assert!(
        form.contains("value=\"1 Quay\"") && form.contains("By the river."),
        "{form}"
    );
    // Edited, trashed and restored.
    let r = post(
        &format!("/manage/venues/{id}"),
        &fields("Quay Hall renamed", "38.7071"),
    );
    assert_eq!(r.status, 303, "{}", r.describe());
    assert_eq!(
        srv().get_as(&format!("{NS}/venues/{id}"), &ADMIN).json()["venue"],
        "Quay Hall renamed"
    );
    let id_text = id.to_string();
    let trash = editor.post(
        "/manage/venues",
        &[
            ("form_token", &editor.token),
            ("action", "trash"),
            ("id", &id_text),
        ],
    );
    assert_eq!(trash.status, 303, "{}", trash.describe());
    let trashed = srv().get_as(&format!("{NS}/venues/{id}"), &ADMIN).json();
    assert_eq!(trashed["status"], "trash", "{trashed}");
    editor.post(
        "/manage/venues",
        &[
            ("form_token", &editor.token),
            ("action", "restore"),
            ("id", &id_text),
        ],
    );
    assert_eq!(
        srv().get_as(&format!("{NS}/venues/{id}"), &ADMIN).json()["status"],
        "publish"
    );

    // An organizer; an author may not edit the editor's organizer.
    let organizer = vec![
        ("form_token".to_string(), editor.token.clone()),
        ("organizer".to_string(), format!("Society {word}")),
        ("email".to_string(), "team@example.org".to_string()),
        ("status".to_string(), "publish".to_string()),
    ];
    let r = post("/manage/organizers/new", &organizer);
    assert_eq!(r.status, 303, "{}", r.describe());
    let location = r.header("location").unwrap().to_string();
    let organizer_id: u64 = location
        .split("/manage/organizers/")
        .nth(1)
        .and_then(|rest| rest.split('?').next())
        .and_then(|id| id.parse().ok())
        .unwrap();
    let api = srv()
        .get_as(&format!("{NS}/organizers/{organizer_id}"), &ADMIN)
        .json();
    assert_eq!(api["email"], "team@example.org", "{api}");
    let author = sign_in(&AUTHOR);
    assert_eq!(
        author
            .get(&format!("/manage/organizers/{organizer_id}"))
            .status,
        403
    );
    let r = author.post(
        &format!("/manage/organizers/{organizer_id}"),
        &[
            ("form_token", &author.token),
            ("organizer", "Taken over"),
            ("status", "publish"),
        ],
    );
    assert_eq!(r.status, 403, "{}", r.describe());
}

#[test]
fn categories_and_tags_are_managed_by_editors_only() {
    let word = tok();
    let editor = sign_in(&EDITOR);
    let name = format!("Poetry {word}");
    let r = editor.post(
        "/manage/categories/new",
        &[
            ("form_token", &editor.token),
            ("name", &name),
            ("slug", ""),
            ("description", "Verse."),
            ("parent", "0"),
        ],
    );
    assert_eq!(r.status, 303, "{}", r.describe());
    let location = r.header("location").unwrap().to_string();
    let id: u64 = location
        .split("/manage/categories/")
        .nth(1)
        .and_then(|rest| rest.split('?').next())
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("{location}"));
    let api = srv()
        .get_as(&format!("{NS}/categories/{id}"), &ADMIN)
        .json();
    assert_eq!(api["name"], name.as_str(), "{api}");
    assert_eq!(api["description"], "Verse.");
    // A child of it; a second category with the same slug is refused by the API's rules.
    let child = format!("Sonnets {word}");
    let id_text = id.to_string();
    let r = editor.post(
        "/manage/categories/new",
        &[
            ("form_token", &editor.token),
            ("name", &child),
            ("slug", ""),
            ("description", ""),
            ("parent", &id_text),
        ],
    );
    assert_eq!(r.status, 303, "{}", r.describe());
    let r = editor.post(
        "/manage/categories/new",
        &[
            ("form_token", &editor.token),
            ("name", "Other"),
            ("slug", ""),
            ("description", ""),
            ("parent", "999999"),
        ],
    );
    assert_eq!(r.status, 422, "{}", r.describe());
    assert!(r.text().contains("value=\"Other\""), "{}", r.text());
    assert!(r.text().contains("id=\"parent-error\""), "{}", r.text());
    let list = editor.get(&format!("/manage/categories/?s={word}")).text();
    assert!(list.contains(&name) && list.contains(&child), "{list}");
    // Authors may not manage terms.
    let author = sign_in(&AUTHOR);
    assert_eq!(author.get("/manage/tags/new").status, 403);
    let r = author.post(
        "/manage/tags/new",
        &[
            ("form_token", &author.token),
            ("name", "Forged"),
            ("slug", ""),
            ("description", ""),
        ],
    );
    assert_eq!(r.status, 403, "{}", r.describe());
    // Deleted for good.
    let r = editor.post(
        "/manage/categories",
        &[
            ("form_token", &editor.token),
            ("action", "delete"),
            ("id", &id_text),
        ],
    );
    assert_eq!(r.status, 303, "{}", r.describe());
    assert_eq!(
        srv()
            .get_as(&format!("{NS}/categories/{id}"), &ADMIN)
            .status,
        400,
        "the API's answer for an unknown term"
    );
}

#[test]
fn administrators_add_users_and_reset_passwords_from_the_browser() {
    let admin = sign_in(&ADMIN);
    let page = admin.get("/manage/users");
    assert_eq!(page.status, 200, "{}", page.describe());
    assert!(
        page.text().contains("<th scope=\"row\">editor</th>"),
        "{}",
        page.text()
    );
    let editor = sign_in(&EDITOR);
    assert_eq!(editor.get("/manage/users").status, 403);
    let r = editor.post(
        "/manage/users",
        &[
            ("form_token", &editor.token),
            ("action", "add"),
            ("name", "sneaky"),
            ("role", "administrator"),
            ("password", "Sneaky-pass-1"),
        ],
    );
    assert_eq!(r.status, 403, "{}", r.describe());

    let bad = admin.post(
        "/manage/users",
        &[
            ("form_token", &admin.token),
            ("action", "add"),
            ("name", "a b"),
            ("role", "author"),
            ("password", "Newbie-pass-1"),
        ],
    );
    assert_eq!(bad.status, 422, "{}", bad.describe());
    assert!(
        bad.text().contains("id=\"name-error\"") && bad.text().contains("value=\"a b\""),
        "{}",
        bad.text()
    );

    let name = format!("newbie{}", tok());
    let r = admin.post(
        "/manage/users",
        &[
            ("form_token", &admin.token),
            ("action", "add"),
            ("name", &name),
            ("role", "author"),
            ("password", "Newbie-pass-1"),
        ],
    );
    assert_eq!(r.status, 200, "{}", r.describe());
    assert!(
        r.text().contains(&format!("{name} was added.")),
        "{}",
        r.text()
    );
    let api = |password: &str| {
        srv()
            .req("GET", &format!("{NS}/events?status=draft"))
            .auth(&name, password)
            .send()
            .status
    };
    assert_eq!(api("Newbie-pass-1"), 200);

    let r = admin.post(
        "/manage/users",
        &[
            ("form_token", &admin.token),
            ("action", "reset"),
            ("name", &name),
        ],
    );
    assert_eq!(r.status, 200, "{}", r.describe());
    let html = r.text();
    let marker = format!("The new password of {name} is ");
    let start = html.find(&marker).unwrap_or_else(|| panic!("{html}")) + marker.len();
    let password: String = html[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    assert_eq!(password.len(), 24, "{html}");
    assert_eq!(api(&password), 200);
    assert_eq!(api("Newbie-pass-1"), 401);
}

/// A visitor's form: its page's token cookie and every field of `fields` besides the token.
fn propose(path: &str, fields: &[(&str, &str)]) -> Resp {
    let page = srv().get(path);
    assert_eq!(page.status, 200, "{}", page.describe());
    let (cookie, line) = set_cookie(&page, "almanac_propose").expect("the form's cookie");
    assert!(
        line.contains("HttpOnly") && line.contains("SameSite=Strict"),
        "{line}"
    );
    let token = hidden(&page.text(), "form_token");
    let mut all = vec![("form_token", token.as_str())];
    all.extend_from_slice(fields);
    srv()
        .req("POST", path)
        .header("Cookie", &format!("almanac_propose={cookie}"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(form(&all))
        .send()
}

/// The events (any status) whose title has `word`, as (title, status, author).
fn found(word: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for language in ["en", "es", "pt-br"] {
        let listed = srv()
            .get_as(
                &format!(
                    "{NS}/events?search={word}&status=pending,publish,draft,private&translation_language={language}"
                ),
                &ADMIN,
            )
            .json();
        for e in listed["events"].as_array().unwrap() {
            out.push((
                e["title"].as_str().unwrap().to_string(),
                e["status"].as_str().unwrap().to_string(),
                e["author"].to_string().trim_matches('"').to_string(),
            ));
        }
    }
    out
}

#[test]
fn visitors_propose_events_that_wait_for_review_within_a_limit_per_address() {
    let word = tok();
    let title = format!("Proposed {word}");
    let venue = format!("Square {word}");
    // A forged form asks to publish, with a password: the proposal is pending and has neither.
    let mut fields = event_fields("", &title);
    fields.retain(|(n, _)| *n != "form_token");
    fields.extend([
        ("status", "publish"),
        ("password", "secret"),
        ("new_venue", venue.as_str()),
        ("featured", "true"),
    ]);
    let r = propose("/es/events/propose/", &fields);
    assert_eq!(r.status, 303, "{}", r.describe());
    assert!(r
        .header("location")
        .unwrap()
        .ends_with("/es/events/propose/?sent=1"));
    let thanks = srv().get("/es/events/propose/?sent=1").text();
    assert!(thanks.contains("¡Gracias!"), "{thanks}");
    assert_eq!(
        found(&word),
        [(title.clone(), "pending".into(), "0".into())]
    );
    let event = &srv()
        .get_as(
            &format!("{NS}/events?search={word}&status=pending&translation_language=es"),
            &ADMIN,
        )
        .json()["events"][0];
    assert_eq!(event["featured"], false);
    assert!(
        event["password"].is_null() || event["password"] == "",
        "{event}"
    );
    assert_eq!(event["venue"]["venue"], venue.as_str());
    assert_eq!(event["venue"]["status"], "pending", "a new venue waits too");
    // Not on the public pages or in the anonymous API until an editor publishes it.
    let anonymous = srv().get(&format!(
        "{NS}/events?search={word}&translation_language=es"
    ));
    assert_eq!(anonymous.json()["total"], 0);
    // Editors see proposals first on the dashboard; authors do not.
    let editor = sign_in(&EDITOR);
    let dashboard = editor.get("/es/manage/?status=publish").text();
    let at = dashboard
        .find("Propuestas de visitantes")
        .expect("the proposals");
    assert!(at < dashboard.find(&title).unwrap());
    let author = sign_in(&AUTHOR);
    // Proposed in Spanish, listed on the English dashboard too.
    let dashboard = editor.get("/manage/").text();
    assert!(dashboard.contains("Proposals from visitors"), "{dashboard}");
    assert!(
        dashboard.contains(&format!("lang=\"es\">{title}</a>")),
        "{dashboard}"
    );
    assert!(!author
        .get("/manage/")
        .text()
        .contains("Proposals from visitors"));

    // The field people leave empty: robots that fill it are thanked and nothing is written.
    let robot_title = format!("Robot {word}");
    let mut robot = event_fields("", &robot_title);
    robot.retain(|(n, _)| *n != "form_token");
    robot.push(("homepage", "http://spam.example/"));
    let r = propose("/events/propose/", &robot);
    assert_eq!(r.status, 303, "{}", r.describe());
    // Without the form's token: refused, nothing written.
    let r = srv()
        .req("POST", "/events/propose/")
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(form(&robot))
        .send();
    assert_eq!(r.status, 403, "{}", r.describe());
    // A refused proposal comes back with its values and the error by its field.
    let refused_title = format!("Refused {word}");
    let mut refused = event_fields("", &refused_title);
    refused.retain(|(n, _)| *n != "form_token" && *n != "start_date");
    refused.push(("start_date", "not a date"));
    let r = propose("/pt-br/events/propose/", &refused);
    assert_eq!(r.status, 422, "{}", r.describe());
    let page = r.text();
    assert!(
        page.contains(&refused_title) && page.contains("not a date"),
        "{page}"
    );
    assert!(page.contains("id=\"start_date-error\""), "{page}");
    assert!(
        found(&word).iter().all(|(t, _, _)| t == &title),
        "{:?}",
        found(&word)
    );

    // Five proposals an hour from one address (the first above counts): the sixth is refused
    // with its values kept.
    for n in 2..=5 {
        let mut more = event_fields("", &title);
        more.retain(|(n, _)| *n != "form_token");
        let r = propose("/events/propose/", &more);
        assert_eq!(r.status, 303, "proposal {n}: {}", r.describe());
    }
    let extra_title = format!("Sixth {word}");
    let mut extra = event_fields("", &extra_title);
    extra.retain(|(n, _)| *n != "form_token");
    let r = propose("/events/propose/", &extra);
    assert_eq!(r.status, 429, "{}", r.describe());
    assert!(r.text().contains(&extra_title));
    assert_eq!(found(&word).len(), 5);
}

/// The occurrences of the series `id` (any status but cancelled), as (ID, start date).
fn occurrences(word: &str, id: u64) -> Vec<(u64, String)> {
    let listed = srv()
        .get_as(
            &format!(
                "{NS}/events?search={word}&per_page=50&start_date=2020-01-01&status=publish,draft"
            ),
            &ADMIN,
        )
        .json();
    listed["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["series_id"] == id || e["id"] == id)
        .map(|e| {
            (
                e["id"].as_u64().unwrap(),
                e["start_date"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn the_recurrence_editor_writes_the_rule_and_lists_changed_and_cancelled_dates() {
    let editor = sign_in(&EDITOR);
    let word = tok();
    let title = format!("Choir {word}");
    // 2027-06-10 is a Thursday: every Tuesday and Thursday, six dates.
    let fields = with(
        event_fields(&editor.token, &title),
        &[
            ("repeat", "weekly"),
            ("interval", "1"),
            ("weekdays", "TU"),
            ("ends", "count"),
            ("count", "6"),
            ("rule_shown", ""),
        ],
    );
    let mut fields = fields;
    fields.push(("weekdays", "TH"));
    let r = editor.post("/manage/events/new", &fields);
    assert_eq!(r.status, 303, "{}", r.describe());
    let location = r.header("location").unwrap().to_string();
    let id: u64 = location
        .split("/manage/events/")
        .nth(1)
        .and_then(|rest| rest.split('?').next())
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("{location}"));
    let api = srv().get_as(&format!("{NS}/events/{id}"), &ADMIN).json();
    assert_eq!(
        api["recurrence"],
        json!(["RRULE:FREQ=WEEKLY;INTERVAL=1;BYDAY=TU,TH;COUNT=6"]),
        "{api}"
    );
    let dates = occurrences(&word, id);
    assert_eq!(dates.len(), 6, "{dates:?}");
    assert_eq!(dates[1].1, "2027-06-15 19:00:00");

    // The series' form shows its rule, in words too.
    let form = editor.get(&format!("/es/manage/events/{id}")).text();
    assert!(
        form.contains("<option value=\"weekly\" selected>"),
        "{form}"
    );
    assert!(
        form.contains("id=\"weekday-TU\" type=\"checkbox\" name=\"weekdays\" value=\"TU\" checked"),
        "{form}"
    );
    assert!(
        form.contains("id=\"ends-count\" type=\"radio\" name=\"ends\" value=\"count\" checked"),
        "{form}"
    );
    assert!(
        form.contains("Todas las semanas: martes y jueves, 6 veces"),
        "{form}"
    );
    assert!(form.contains("Todas las fechas siguen la serie."), "{form}");

    // One date changed on its own, another cancelled: the series' form lists both.
    let (changed, cancelled) = (dates[2].0, dates[3].0);
    let r = srv()
        .req("POST", &format!("{NS}/events/{changed}"))
        .user(&ADMIN)
        .json_body(&json!({"title": format!("Choir {word} (moved)")}))
        .send();
    assert_eq!(r.status, 200, "{}", r.describe());
    let r = srv()
        .req("DELETE", &format!("{NS}/events/{cancelled}"))
        .user(&ADMIN)
        .send();
    assert_eq!(r.status, 200, "{}", r.describe());
    let form = editor.get(&format!("/manage/events/{id}")).text();
    assert!(form.contains(&format!("<a href=\"{changed}\">")), "{form}");
    assert!(form.contains("(cancelled)"), "{form}");
    // A date's own form edits that date alone, and leads to its series.
    let own = editor.get(&format!("/manage/events/{changed}")).text();
    assert!(own.contains("changes this date alone"), "{own}");
    assert!(
        own.contains(&format!("href=\"/manage/events/{id}\"")),
        "{own}"
    );
    assert!(!own.contains("name=\"repeat\""), "{own}");

    // Saved with the rule as shown: the rule, the change and the cancellation stay.
    let shown = hidden(&form, "rule_shown");
    assert_eq!(shown, "RRULE:FREQ=WEEKLY;INTERVAL=1;BYDAY=TU,TH;COUNT=6");
    let renamed = format!("Choir {word} renamed");
    let mut again = with(
        fields.clone(),
        &[("title", &renamed), ("rule_shown", &shown)],
    );
    again.retain(|(n, _)| *n != "weekdays");
    again.extend([("weekdays", "TU"), ("weekdays", "TH")]);
    let r = editor.post(&format!("/manage/events/{id}"), &again);
    assert_eq!(r.status, 303, "{}", r.describe());
    let api = srv().get_as(&format!("{NS}/events/{id}"), &ADMIN).json();
    assert_eq!(api["title"], renamed.as_str());
    assert_eq!(api["recurrence"], json!([shown]));
    let moved = srv()
        .get_as(&format!("{NS}/events/{changed}"), &ADMIN)
        .json();
    assert_eq!(
        moved["title"],
        format!("Choir {word} (moved)").as_str(),
        "{moved}"
    );
    assert_eq!(
        occurrences(&word, id).len(),
        5,
        "the cancelled date stays cancelled"
    );

    // Refused: an end date missing, an interval of none; values and errors by their fields.
    let refused = with(
        again.clone(),
        &[("ends", "until"), ("until", ""), ("interval", "0")],
    );
    let r = editor.post(&format!("/manage/events/{id}"), &refused);
    assert_eq!(r.status, 422, "{}", r.describe());
    let html = r.text();
    assert!(
        html.contains("id=\"until-error\"") && html.contains("id=\"interval-error\""),
        "{html}"
    );
    assert!(html.contains("value=\"0\""), "{html}");

    // Monthly on the start's weekday until a date, then no longer repeating.
    let monthly = with(
        again.clone(),
        &[
            ("repeat", "monthly"),
            ("monthly_by", "weekday"),
            ("ends", "until"),
            ("until", "2027-10-31"),
        ],
    );
    let r = editor.post(&format!("/manage/events/{id}"), &monthly);
    assert_eq!(r.status, 303, "{}", r.describe());
    let api = srv().get_as(&format!("{NS}/events/{id}"), &ADMIN).json();
    assert_eq!(
        api["recurrence"],
        json!(["RRULE:FREQ=MONTHLY;INTERVAL=1;BYDAY=2TH;UNTIL=20271031"]),
        "{api}"
    );
    let dates: Vec<String> = occurrences(&word, id).into_iter().map(|(_, d)| d).collect();
    assert_eq!(
        dates,
        [
            "2027-06-10 19:00:00",
            "2027-07-08 19:00:00",
            "2027-08-12 19:00:00",
            "2027-09-09 19:00:00",
            "2027-10-14 19:00:00"
        ]
    );
    let shown = hidden(
        &editor.get(&format!("/manage/events/{id}")).text(),
        "rule_shown",
    );
    let single = with(monthly, &[("repeat", "none"), ("rule_shown", &shown)]);
    let r = editor.post(&format!("/manage/events/{id}"), &single);
    assert_eq!(r.status, 303, "{}", r.describe());
    let api = srv().get_as(&format!("{NS}/events/{id}"), &ADMIN).json();
    assert!(api.get("recurrence").is_none(), "{api}");

    // A rule the form cannot show is kept as it is.
    let custom = srv().create(
        &ADMIN,
        &format!("{NS}/events"),
        &json!({"title": format!("Market {word}"), "start_date": "2027-06-01 09:00:00",
                "end_date": "2027-06-01 13:00:00",
                "recurrence": ["RRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;COUNT=3"]}),
    );
    let custom_id = custom["id"].as_u64().unwrap();
    let form = editor.get(&format!("/manage/events/{custom_id}")).text();
    assert!(form.contains("BYSETPOS=-1"), "{form}");
    assert_eq!(hidden(&form, "rule_shown"), "custom");
    let r = editor.post(
        &format!("/manage/events/{custom_id}"),
        &with(
            event_fields(&editor.token, &format!("Market {word}")),
            &[
                ("repeat", "custom"),
                ("rule_shown", "custom"),
                ("start_date", "2027-06-01T09:00"),
                ("end_date", "2027-06-01T13:00"),
            ],
        ),
    );
    assert_eq!(r.status, 303, "{}", r.describe());
    let api = srv()
        .get_as(&format!("{NS}/events/{custom_id}"), &ADMIN)
        .json();
    assert_eq!(api["recurrence"], custom["recurrence"], "{api}");
}

#[test]
fn translate_into_makes_a_linked_draft_in_that_language_and_preview_shows_its_page() {
    let word = tok();
    let venue = srv().create(
        &ADMIN,
        &format!("{NS}/venues"),
        &json!({"venue": format!("Hall {word}")}),
    );
    let venue_es = srv().create(
        &ADMIN,
        &format!("{NS}/venues?translation_language=es"),
        &json!({"venue": format!("Sala {word}"), "translation_of": venue["id"]}),
    );
    let category = srv().create(
        &ADMIN,
        &format!("{NS}/categories"),
        &json!({"name": format!("Song {word}")}),
    );
    let category_es = srv().create(
        &ADMIN,
        &format!("{NS}/categories?translation_language=es"),
        &json!({"name": format!("Canción {word}"), "translation_of": category["id"]}),
    );
    let tag = srv().create(
        &ADMIN,
        &format!("{NS}/tags"),
        &json!({"name": format!("Loud {word}")}),
    );
    let source = srv().create(
        &EDITOR,
        &format!("{NS}/events"),
        &json!({"title": format!("Concert {word}"), "start_date": "2027-09-03 20:00:00",
                "end_date": "2027-09-03 22:00:00", "timezone": "Europe/Madrid",
                "venue": venue["id"], "categories": [category["id"]], "tags": [tag["id"]],
                "cost": "12"}),
    );
    let id = source["id"].as_u64().unwrap();
    let editor = sign_in(&EDITOR);
    let form = editor.get(&format!("/manage/events/{id}")).text();
    assert!(form.contains("Translate into Español"), "{form}");
    assert!(
        form.contains(&format!("href=\"/manage/events/{id}/preview\"")),
        "{form}"
    );

    // Without the form token: nothing made.
    let r = editor.post(
        &format!("/manage/events/{id}/translate"),
        &[("language", "es")],
    );
    assert_eq!(r.status, 403, "{}", r.describe());
    // An author may not translate an editor's event.
    let author = sign_in(&AUTHOR);
    let r = author.post(
        &format!("/manage/events/{id}/translate"),
        &[("form_token", &author.token), ("language", "es")],
    );
    assert_eq!(r.status, 403, "{}", r.describe());
    let translations =
        srv().get_as(&format!("{NS}/events/{id}"), &ADMIN).json()["translations"].clone();
    assert!(translations.get("es").is_none(), "{translations}");

    let r = editor.post(
        &format!("/manage/events/{id}/translate"),
        &[("form_token", &editor.token), ("language", "es")],
    );
    assert_eq!(r.status, 303, "{}", r.describe());
    let location = r.header("location").unwrap().to_string();
    let copy: u64 = location
        .split("/manage/events/")
        .nth(1)
        .and_then(|rest| rest.split('?').next())
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("{location}"));
    assert_ne!(copy, id);
    let api = srv()
        .get_as(
            &format!("{NS}/events/{copy}?translation_language=es"),
            &ADMIN,
        )
        .json();
    assert_eq!(api["status"], "draft", "{api}");
    assert_eq!(api["language"], "es");
    assert_eq!(api["title"], format!("Concert {word}").as_str());
    assert_eq!(api["start_date"], "2027-09-03 20:00:00");
    assert_eq!(api["timezone"], "Europe/Madrid");
    assert_eq!(api["cost"], source["cost"]);
    assert_eq!(api["venue"]["id"], venue_es["id"], "{api}");
    assert_eq!(api["categories"][0]["id"], category_es["id"], "{api}");
    assert_eq!(
        api["tags"],
        json!([]),
        "a tag without a Spanish version is left out"
    );
    let translations =
        srv().get_as(&format!("{NS}/events/{id}"), &ADMIN).json()["translations"].clone();
    assert_eq!(translations["es"], copy, "{translations}");
    // The source's form links the copy; asked again, the same copy.
    let form = editor.get(&format!("/manage/events/{id}")).text();
    assert!(
        form.contains(&format!(
            "href=\"/manage/events/{copy}\">Edit the version in Español"
        )),
        "{form}"
    );
    let r = editor.post(
        &format!("/manage/events/{id}/translate"),
        &[("form_token", &editor.token), ("language", "es")],
    );
    assert!(r
        .header("location")
        .unwrap()
        .contains(&format!("/manage/events/{copy}?")));

    // The draft has no public page yet; its preview shows what it will be.
    let slug = api["slug"].as_str().unwrap();
    // (The address leads to the published version in another language, if any.)
    assert_ne!(srv().get(&format!("/es/event/{slug}/")).status, 200);
    let preview = editor.get(&format!("/es/manage/events/{copy}/preview"));
    assert_eq!(preview.status, 200, "{}", preview.describe());
    let html = preview.text();
    assert!(
        html.contains(&format!("Concert {word}")) && html.contains(&format!("Sala {word}")),
        "{html}"
    );
    assert!(html.contains("Una vista previa"), "{html}");
    assert_eq!(
        author.get(&format!("/manage/events/{copy}/preview")).status,
        403
    );
}

#[test]
fn a_later_publication_date_schedules_the_event() {
    let editor = sign_in(&EDITOR);
    let word = tok();
    let title = format!("Scheduled {word}");
    let fields = with(
        event_fields(&editor.token, &title),
        &[("date", "2030-01-01T10:00"), ("date_shown", "")],
    );
    let r = editor.post("/manage/events/new", &fields);
    assert_eq!(r.status, 303, "{}", r.describe());
    let location = r.header("location").unwrap().to_string();
    let id = location
        .split("/manage/events/")
        .nth(1)
        .and_then(|rest| rest.split('?').next())
        .unwrap()
        .to_string();
    let api = srv().get_as(&format!("{NS}/events/{id}"), &ADMIN).json();
    assert_eq!(api["status"], "future", "{api}");
    assert_eq!(api["date"], "2030-01-01 10:00:00");
    let form = editor.get(&format!("/manage/events/{id}")).text();
    assert_eq!(hidden(&form, "date_shown"), "2030-01-01T10:00");
    // A draft's date is not sent back unchanged: publishing it later dates it then.
    let draft_title = format!("Draft {word}");
    let draft = with(
        event_fields(&editor.token, &draft_title),
        &[("status", "draft"), ("date", ""), ("date_shown", "")],
    );
    let r = editor.post("/manage/events/new", &draft);
    assert_eq!(r.status, 303, "{}", r.describe());
    let draft_id = r
        .header("location")
        .unwrap()
        .split("/manage/events/")
        .nth(1)
        .unwrap()
        .split('?')
        .next()
        .unwrap()
        .to_string();
    let form = editor.get(&format!("/manage/events/{draft_id}")).text();
    let shown = hidden(&form, "date_shown");
    let r = editor.post(
        &format!("/manage/events/{draft_id}"),
        &with(
            draft.clone(),
            &[
                ("date", &shown),
                ("date_shown", &shown),
                ("title", &format!("Draft {word} again")),
            ],
        ),
    );
    assert_eq!(r.status, 303, "{}", r.describe());
    let api = srv()
        .get_as(&format!("{NS}/events/{draft_id}"), &ADMIN)
        .json();
    assert_eq!(api["title"], format!("Draft {word} again").as_str());
}
