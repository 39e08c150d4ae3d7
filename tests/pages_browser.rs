//! The public HTML pages (src/http/pages/) in a real browser: `almanac serve --demo` checked by
//! tests/browser/check.mjs in the system's headless Chromium, driven by playwright-core, with
//! axe-core for accessibility (WCAG 2.2 AA rules).
//!
//! Needs /usr/bin/chromium (installed here with apt-get when missing and running as root), `node`
//! and `npm` (the modules of tests/browser/package-lock.json are installed with `npm ci` when
//! missing or older than the lock file). A missing browser or node fails the test: it never skips.
//!
//! Each page is checked in English, Spanish and Brazilian Portuguese at 1280 and 390 px wide:
//! status and content type, axe violations, requests to other origins, horizontal scrolling,
//! broken subresources, CSP violations and uncaught exceptions; a full-page screenshot of each goes
//! to target/screenshots/LANG-NAME-WIDTH.png. Then, in English: the month view without JavaScript,
//! the month view with the keyboard only, the list view's subscribe links and their feed, and the
//! embedding script on another origin (with `frame-ancestors` on the pages).

mod common;

use common::browser::{
    ensure_chromium, ensure_node, free_port, manifest_dir, run_node_script, setup_lock, CHROMIUM,
};
use common::node::ensure_node_modules;
use common::*;

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

/// Page widths check.mjs uses (its default; passed explicitly).
const WIDTHS: [u32; 2] = [1280, 390];
/// How long check.mjs may take in all (its own budget is 20 s per page and width).
const CHECK_TIMEOUT: Duration = Duration::from_secs(20 * 60);
/// Languages: report name and path segment.
const LANGUAGES: [(&str, &str); 3] = [("en", ""), ("es", "/es"), ("pt-br", "/pt-br")];
/// Pages at fixed addresses: name, path under the language segment, expected status.
const FIXED_PAGES: [(&str, &str, u16); 7] = [
    ("list", "/events/", 200),
    ("list-page-2", "/events/list/page/2/", 200),
    ("month", "/events/month/", 200),
    ("week", "/events/week/", 200),
    ("day", "/events/today/", 200),
    ("search", "/events/list/?s=festival", 200),
    ("404", "/events/nope/nothing/", 404),
];
/// Pages found through the API: name, collection (`?per_page=1` plus these parameters), the
/// collection's key in the answer.
const DISCOVERED_PAGES: [(&str, &str, &str); 5] = [
    ("event", "events?per_page=1", "events"),
    ("venue", "venues?per_page=1", "venues"),
    ("organizer", "organizers?per_page=1", "organizers"),
    (
        "category",
        "categories?per_page=1&hide_empty=1",
        "categories",
    ),
    ("tag", "tags?per_page=1&hide_empty=1", "tags"),
];

#[test]
fn public_pages_pass_the_browser_checks() {
    // One test function, so nothing here runs twice at once within this binary; the lock file
    // keeps concurrent `cargo test` runs from installing at the same time.
    {
        let _lock = setup_lock();
        ensure_chromium();
        ensure_node();
        ensure_node_modules(&["playwright-core/package.json", "axe-core/axe.min.js"]);
    }

    // The port of the page that embeds the calendar, picked before the server starts so that it
    // can be allowed to frame `/embed/`.
    let embed_port = free_port();
    let embed_origin = format!("http://127.0.0.1:{embed_port}");
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    add_user(&dir, &ADMIN);
    add_user(&dir, &AUTHOR);
    let cmd = almanac(["serve", "--demo", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.to_str().unwrap())
        .args(["--embed-origins", &embed_origin, "--public-submissions"]);
    let srv = Server::launch(cmd, None).unwrap_or_else(|f| {
        panic!(
            "`almanac serve --demo --embed-origins {embed_origin} --public-submissions` did not start: {}",
            f.output.describe()
        )
    });

    let (mut pages, category_slug) = page_list(&srv);
    pages.extend(manage_pages(&srv));
    let screenshots = manifest_dir().join("target").join("screenshots");
    let config = json!({
        "base": srv.base,
        "screenshots": screenshots,
        "pages": pages,
        "widths": WIDTHS,
        "embed_host_port": embed_port,
        "category_slug": category_slug,
        "chromium": CHROMIUM,
        "page_timeout_ms": 20000,
    });
    let report = run_check(&config);
    assert_report(&report, &pages, &screenshots, &srv);
}

// ---------------------------------------------------------------------------------------------
// What to check
// ---------------------------------------------------------------------------------------------

/// Every page in every language as `{"lang", "name", "url", "status"}`, and the slug of a
/// category with events (for the embedded list).
fn page_list(srv: &Server) -> (Vec<Value>, String) {
    let mut pages = Vec::new();
    let mut category_slug = None;
    for (lang, segment) in LANGUAGES {
        for (name, path, status) in FIXED_PAGES {
            pages.push(json!({
                "lang": lang,
                "name": name,
                "url": format!("{}{segment}{path}", srv.base),
                "status": status,
            }));
        }
        for (name, collection, key) in DISCOVERED_PAGES {
            // Under the language segment, the links come back carrying it.
            let mut path = format!("{segment}{NS}/{collection}");
            if lang != "en" {
                path.push_str(&format!("&translation_language={lang}"));
            }
            let r = srv.get(&path);
            assert_eq!(
                r.status,
                200,
                "GET {path} (finding the {lang} {name} page): {}",
                r.describe()
            );
            let v = r.json();
            let first = &v[key][0];
            let url = first["url"].as_str().unwrap_or_else(|| {
                panic!("GET {path}: no {key}[0].url to check the {lang} {name} page: {v}")
            });
            if lang == "en" && name == "category" {
                category_slug = first["slug"].as_str().map(str::to_string);
            }
            pages.push(json!({"lang": lang, "name": name, "url": url, "status": 200}));
        }
    }
    let slug = category_slug.expect("the first English category has a slug");
    (pages, slug)
}

/// The editors' pages in every language: the sign-in form, and signed in as an administrator
/// (the session cookie travels with the page), the dashboard and the password form.
fn manage_pages(srv: &Server) -> Vec<Value> {
    let sign_in = srv.get("/manage/");
    assert_eq!(sign_in.status, 200, "{}", sign_in.describe());
    let state = cookie_of(&sign_in, "almanac_sign_in");
    let body = format!(
        "form_token={state}&name={}&password={}",
        ADMIN.name, ADMIN.password
    );
    let r = srv
        .req("POST", "/manage/sign-in")
        .header("Cookie", &format!("almanac_sign_in={state}"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(body)
        .send();
    assert_eq!(r.status, 303, "signing in: {}", r.describe());
    let session = json!({"name": "almanac_session", "value": cookie_of(&r, "almanac_session")});
    // A visitor's proposal, so that the dashboard shows its list of proposals.
    let form = srv.get("/events/propose/");
    assert_eq!(form.status, 200, "{}", form.describe());
    let token = cookie_of(&form, "almanac_propose");
    let r = srv
        .req("POST", "/events/propose/")
        .header("Cookie", &format!("almanac_propose={token}"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(format!(
            "form_token={token}&title=Street+party&start_date=2027-06-10T19:00\
             &end_date=2027-06-10T22:00&timezone=UTC&new_venue=Main+street"
        ))
        .send();
    assert_eq!(r.status, 303, "proposing: {}", r.describe());
    let mut pages = hostile_pages(srv, &session);
    let first = |collection: &str| {
        let v = srv.get(&format!("{NS}/{collection}?per_page=1")).json();
        format!("/manage/{collection}/{}", v[collection][0]["id"])
    };
    let (edit, venue, organizer) = (first("events"), first("venues"), first("organizers"));
    let preview = format!("{edit}/preview");
    for (lang, segment) in LANGUAGES {
        pages.push(json!({"lang": lang, "name": "propose",
                          "url": format!("{}{segment}/events/propose/", srv.base), "status": 200}));
        pages.push(json!({"lang": lang, "name": "manage-sign-in",
                          "url": format!("{}{segment}/manage/", srv.base), "status": 200}));
        for (name, path) in [
            ("manage-events", "/manage/"),
            ("manage-password", "/manage/password"),
            ("manage-new-event", "/manage/events/new"),
            ("manage-edit-event", edit.as_str()),
            ("manage-venues", "/manage/venues/"),
            ("manage-new-venue", "/manage/venues/new"),
            ("manage-edit-venue", venue.as_str()),
            ("manage-organizers", "/manage/organizers/"),
            ("manage-edit-organizer", organizer.as_str()),
            ("manage-categories", "/manage/categories/"),
            ("manage-new-category", "/manage/categories/new"),
            ("manage-tags", "/manage/tags/"),
            ("manage-users", "/manage/users"),
            ("manage-preview", preview.as_str()),
        ] {
            pages.push(json!({"lang": lang, "name": name, "cookie": session,
                              "url": format!("{}{segment}{path}", srv.base), "status": 200}));
        }
    }
    pages
}

/// Text that would become markup if a page did not escape it: the check fails on any element
/// carrying `data-xss`, and on any script or handler the pages' CSP refuses.
/// (No `<img>`: descriptions may hold images, and one without a text alternative is the
/// author's to fix, not an injection.)
const HOSTILE: &str = "\"'><svg data-xss onload=alert(1)></svg><script data-xss>alert(1)</script><b data-xss onclick=alert(1)>b</b>";

/// Records with [`HOSTILE`] in every text field (written by an author, whose HTML the API
/// cleans; the tag by the administrator), and the public and editors' pages that show them.
fn hostile_pages(srv: &Server, session: &Value) -> Vec<Value> {
    let create = |user: &TestUser, collection: &str, body: Value| {
        srv.create(user, &format!("{NS}/{collection}"), &body)
    };
    let text = |field: &str| format!("{field} {HOSTILE}");
    let venue = create(
        &AUTHOR,
        "venues",
        json!({"venue": text("venue"), "address": text("address"), "city": text("city"),
               "country": text("country"), "province": text("province"), "zip": text("zip"),
               "phone": text("phone"), "description": text("description")}),
    );
    let organizer = create(
        &AUTHOR,
        "organizers",
        json!({"organizer": text("organizer"), "phone": text("phone"),
               "description": text("description")}),
    );
    let category = create(
        &AUTHOR,
        "categories",
        json!({"name": text("category"), "description": text("description")}),
    );
    let tag = create(&ADMIN, "tags", json!({"name": text("tag")}));
    let event = create(
        &AUTHOR,
        "events",
        json!({"title": text("title"), "description": text("description"),
               "excerpt": text("excerpt"), "cost": text("cost"),
               "start_date": "2027-03-10 19:00:00", "end_date": "2027-03-10 21:00:00",
               "venue": venue["id"], "organizer": [organizer["id"]],
               "categories": [category["id"]], "tags": [tag["id"]], "status": "publish"}),
    );
    let url = |v: &Value| v["url"].as_str().unwrap().to_string();
    let search = "?s=%22%3E%3Cb%20data-xss%3E";
    let mut pages: Vec<Value> = [
        ("xss-event", url(&event)),
        ("xss-venue", url(&venue)),
        ("xss-organizer", url(&organizer)),
        ("xss-category", url(&category)),
        ("xss-tag", url(&tag)),
        ("xss-month", format!("{}/events/month/2027-03/", srv.base)),
        ("xss-day", format!("{}/events/2027-03-10/", srv.base)),
        ("xss-search", format!("{}/events/list/{search}", srv.base)),
    ]
    .into_iter()
    .map(|(name, url)| json!({"lang": "en", "name": name, "url": url, "status": 200}))
    .collect();
    for (name, path) in [
        (
            "xss-manage-event",
            format!("/manage/events/{}", event["id"]),
        ),
        (
            "xss-manage-preview",
            format!("/manage/events/{}/preview", event["id"]),
        ),
        ("xss-manage-events", format!("/manage/{search}")),
        (
            "xss-manage-venue",
            format!("/manage/venues/{}", venue["id"]),
        ),
        ("xss-manage-venues", format!("/manage/venues/{search}")),
        (
            "xss-manage-organizer",
            format!("/manage/organizers/{}", organizer["id"]),
        ),
        (
            "xss-manage-category",
            format!("/manage/categories/{}", category["id"]),
        ),
        ("xss-manage-categories", "/manage/categories/".to_string()),
        ("xss-manage-tag", format!("/manage/tags/{}", tag["id"])),
    ] {
        pages.push(json!({"lang": "en", "name": name, "cookie": session,
                          "url": format!("{}{path}", srv.base), "status": 200}));
    }
    pages
}

/// The value of the cookie `name` that `r` sets.
fn cookie_of(r: &Resp, name: &str) -> String {
    r.header_all("set-cookie")
        .into_iter()
        .find_map(|line| {
            line.split(';')
                .next()?
                .strip_prefix(&format!("{name}="))
                .map(str::to_string)
        })
        .unwrap_or_else(|| panic!("no {name} cookie: {}", r.describe()))
}

// ---------------------------------------------------------------------------------------------
// Running check.mjs
// ---------------------------------------------------------------------------------------------

/// Runs `node tests/browser/check.mjs` with `config` on stdin; its progress lines are echoed
/// (captured by the test harness unless `--nocapture`); returns its JSON report.
fn run_check(config: &Value) -> Value {
    run_node_script("check.mjs", config, CHECK_TIMEOUT)
}

/// Fails with every failure of the report, readably; checks the report covers every page.
fn assert_report(report: &Value, pages: &[Value], screenshots: &Path, srv: &Server) {
    let failures = report["failures"].as_array().cloned().unwrap_or_default();
    let checked = report["pages"].as_array().cloned().unwrap_or_default();
    let checks = report["checks"].as_array().cloned().unwrap_or_default();
    let mut problems = Vec::new();
    if checked.len() != pages.len() * WIDTHS.len() {
        problems.push(format!(
            "the report covers {} page loads, expected {} ({} pages × {} widths)",
            checked.len(),
            pages.len() * WIDTHS.len(),
            pages.len(),
            WIDTHS.len()
        ));
    }
    for name in [
        "month-no-js",
        "month-keyboard",
        "subscribe",
        "frame-ancestors",
        "embed",
        "frame-refused",
    ] {
        if !checks.iter().any(|c| c["name"] == name) {
            problems.push(format!("the report has no result of the check {name:?}"));
        }
    }
    if failures.is_empty() && problems.is_empty() && report["ok"] == true {
        eprintln!(
            "browser checks passed: {} page loads, {} checks, {}; screenshots in {}",
            checked.len(),
            checks.len(),
            report["browser"].as_str().unwrap_or("?"),
            screenshots.display()
        );
        return;
    }

    let mut s = String::new();
    let failing_loads = checked.iter().filter(|p| p["ok"] != true).count();
    s.push_str(&format!(
        "\n{} browser check failure(s) in {} ({} of {} page loads failing; checks: {})\n",
        failures.len(),
        report["browser"].as_str().unwrap_or("(no browser)"),
        failing_loads,
        checked.len(),
        checks
            .iter()
            .map(|c| format!(
                "{} {}",
                c["name"].as_str().unwrap_or("?"),
                if c["ok"] == true { "ok" } else { "FAILED" }
            ))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    for p in &problems {
        s.push_str(&format!("  ! {p}\n"));
    }
    let mut last_where = String::new();
    for f in &failures {
        let width = f["width"]
            .as_u64()
            .map(|w| format!(" @{w}px"))
            .unwrap_or_default();
        let place = format!(
            "{}{width}  {}",
            f["page"].as_str().unwrap_or("?"),
            f["url"].as_str().unwrap_or("")
        );
        if place != last_where {
            s.push_str(&format!("\n{place}\n"));
            last_where = place;
        }
        let impact = f["impact"]
            .as_str()
            .map(|i| format!(" [{i}]"))
            .unwrap_or_default();
        s.push_str(&format!(
            "  - {}{impact}: {}\n",
            f["rule"].as_str().unwrap_or("?"),
            f["message"].as_str().unwrap_or("")
        ));
        let nodes = f["nodes"].as_array().cloned().unwrap_or_default();
        for n in nodes.iter().take(3) {
            let target = match &n["target"] {
                Value::Array(t) => t
                    .iter()
                    .map(|x| {
                        x.as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| x.to_string())
                    })
                    .collect::<Vec<_>>()
                    .join(" >>> "),
                other => other.to_string(),
            };
            s.push_str(&format!(
                "      {target}\n        {}\n",
                n["html"].as_str().unwrap_or("")
            ));
            if let Some(summary) = n["summary"].as_str() {
                s.push_str(&format!("        ({})\n", summary.replace('\n', " ")));
            }
        }
        let count = f["node_count"].as_u64().unwrap_or(nodes.len() as u64);
        if count > 3 {
            s.push_str(&format!("      … and {} more\n", count - 3));
        }
    }
    s.push_str(&format!(
        "\nscreenshots: {}\nserver stderr (last lines):\n{}\n",
        screenshots.display(),
        tail(&srv.stderr_text(), 2000)
    ));
    eprintln!("{s}");
    panic!(
        "{} browser check failure(s){} (listed above)",
        failures.len(),
        if problems.is_empty() {
            String::new()
        } else {
            format!(" and {} problem(s) with the report", problems.len())
        }
    );
}
