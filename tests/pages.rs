//! The public pages over HTTP (src/http/pages/): the addresses the API's `url`s name, the same
//! events as the API's windows, escaping, protected and unpublished events, headers, languages,
//! the events bar without JavaScript, and a crawl of every link. The browser checks are in
//! tests/pages_browser.rs.

mod common;

use common::*;
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashSet, VecDeque};

fn html(srv: &Server, path: &str) -> String {
    let r = srv.req("GET", path).header("Accept", "text/html").send();
    assert_eq!(r.status, 200, "GET {path}: {}", r.describe());
    assert_eq!(
        r.header("content-type"),
        Some("text/html; charset=utf-8"),
        "{path}"
    );
    r.text()
}

/// The event slugs a page links to (`/event/{slug}/` under any language segment), in order.
fn event_slugs(page: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in page.split("href=\"").skip(1) {
        let href = &part[..part.find('"').unwrap_or(0)];
        let path = href.trim_start_matches("/es").trim_start_matches("/pt-br");
        if let Some(slug) = path.strip_prefix("/event/") {
            out.push(slug.trim_end_matches('/').to_string());
        }
    }
    out
}

/// The slugs of the events the API lists for a window of wall-clock days (`from` to `to`
/// exclusive), as the pages read it.
fn api_window(srv: &Server, lang: &str, from: &str, to: &str, extra: &str) -> BTreeSet<String> {
    let mut slugs = BTreeSet::new();
    let mut page = 1;
    loop {
        let path = format!(
            "{lang}{NS}/events?strict_dates=1&ends_after={from}%2000:00:00&starts_before={to}%2000:00:00&per_page=50&page={page}{extra}"
        );
        let v = srv.get_ok(&path, None);
        for e in v["events"].as_array().unwrap() {
            slugs.insert(e["slug"].as_str().unwrap().to_string());
        }
        if page >= v["total_pages"].as_u64().unwrap_or(1) as usize {
            return slugs;
        }
        page += 1;
    }
}

fn event(srv: &Server, title: &str, start: &str, end: &str, extra: Value) -> Value {
    let mut body =
        json!({"title": title, "start_date": start, "end_date": end, "status": "publish"});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    srv.create(&ADMIN, &format!("{NS}/events"), &body)
}

fn days_of(first: chrono::NaiveDate) -> Vec<chrono::NaiveDate> {
    use chrono::Datelike;
    (0..31)
        .map(|i| first + chrono::Duration::days(i))
        .filter(|d| d.month() == first.month())
        .collect()
}

#[test]
fn calendar_views_show_the_events_the_api_lists_for_their_windows() {
    let srv = Server::start_with_users(&[ADMIN]);
    let music = srv.create(
        &ADMIN,
        &format!("{NS}/categories"),
        &json!({"name": "Music"}),
    );
    let music_id = music["id"].as_u64().unwrap();
    // Several months, zones on both hemispheres' daylight-saving changes (Lisbon springs
    // forward on 2027-03-28, Sydney falls back on 2027-04-04), multi-day, across midnight and
    // all-day events, and a busy day with more than a month cell shows.
    event(
        &srv,
        "Lisbon night",
        "2027-03-27 23:30:00",
        "2027-03-28 03:30:00",
        json!({"timezone": "Europe/Lisbon", "categories": [music_id]}),
    );
    event(
        &srv,
        "Sydney dawn",
        "2027-04-04 01:30:00",
        "2027-04-04 04:00:00",
        json!({"timezone": "Australia/Sydney"}),
    );
    event(
        &srv,
        "Festival week",
        "2027-03-30 10:00:00",
        "2027-04-03 22:00:00",
        json!({"categories": [music_id]}),
    );
    event(
        &srv,
        "Market day",
        "2027-04-10 00:00:00",
        "2027-04-10 23:59:59",
        json!({"all_day": true}),
    );
    event(
        &srv,
        "Ends at midnight",
        "2027-04-12 20:00:00",
        "2027-04-13 00:00:00",
        json!({}),
    );
    for i in 0..6 {
        event(
            &srv,
            &format!("Busy jazz {i}"),
            &format!("2027-03-16 {:02}:00:00", 9 + i),
            &format!("2027-03-16 {:02}:30:00", 9 + i),
            json!({"categories": [music_id]}),
        );
    }
    event(
        &srv,
        "Concierto",
        "2027-03-20 19:00:00",
        "2027-03-20 21:00:00",
        json!({"translation_language": "es"}),
    );
    // Events running for months, and for years, are on every day they cover.
    event(
        &srv,
        "Season exhibition",
        "2027-01-10 10:00:00",
        "2027-05-20 18:00:00",
        json!({}),
    );
    event(
        &srv,
        "Permanent collection",
        "2025-01-01 09:00:00",
        "2030-12-31 18:00:00",
        json!({}),
    );

    for (lang, months) in [("", vec!["2027-03", "2027-04"]), ("/es", vec!["2027-03"])] {
        for month in months {
            let first =
                chrono::NaiveDate::parse_from_str(&format!("{month}-01"), "%Y-%m-%d").unwrap();
            let page = html(&srv, &format!("{lang}/events/month/{month}/"));
            let page = &page[page.find("<table").expect("a month table")..];
            // Every day cell: the events shown and the "+ N more" count add up to the API's
            // list of that day, and each shown event is one of them.
            for day in days_of(first) {
                let next = day + chrono::Duration::days(1);
                let api = api_window(&srv, lang, &day.to_string(), &next.to_string(), "");
                let marker = format!("href=\"{lang}/events/{day}/\"");
                let cell_start = page
                    .find(&marker)
                    .unwrap_or_else(|| panic!("{day} has a link: {page}"));
                let cell = &page[cell_start..];
                let cell = &cell[..cell.find("</td>").unwrap()];
                let shown: BTreeSet<String> = event_slugs(cell).into_iter().collect();
                assert!(
                    shown.is_subset(&api),
                    "{lang} {day}: {shown:?} within {api:?}"
                );
                let more = cell
                    .split("class=\"more\"")
                    .nth(1)
                    .and_then(|m| m.split("+ ").nth(1))
                    .and_then(|m| m.split(' ').next())
                    .and_then(|n| n.parse::<usize>().ok())
                    .unwrap_or(0);
                assert_eq!(shown.len() + more, api.len(), "{lang} {day}: {cell}");
                // The day view lists exactly the API's events of that day.
                if !api.is_empty() {
                    let day_page = html(&srv, &format!("{lang}/events/{day}/"));
                    let listed: BTreeSet<String> =
                        event_slugs(&day_page[day_page.find("<main").unwrap()..])
                            .into_iter()
                            .collect();
                    assert_eq!(listed, api, "{lang} day {day}");
                }
            }
        }
    }
    // What the API lists for a day is what is on it.
    let expected = [
        (
            "2027-03-16",
            vec!["busy-jazz-0", "permanent-collection", "season-exhibition"],
        ),
        (
            "2027-03-28",
            vec!["lisbon-night", "permanent-collection", "season-exhibition"],
        ),
        (
            "2027-04-02",
            vec!["festival-week", "permanent-collection", "season-exhibition"],
        ),
        ("2027-06-01", vec!["permanent-collection"]),
    ];
    for (day, slugs) in expected {
        let next =
            chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d").unwrap() + chrono::Duration::days(1);
        let api = api_window(&srv, "", day, &next.to_string(), "");
        for slug in slugs {
            assert!(api.contains(slug), "{day}: {slug} in {api:?}");
        }
    }
    // A category and a search narrow the month as they narrow the API's list.
    let page = html(&srv, "/events/category/music/month/2027-03/");
    let shown: HashSet<String> = event_slugs(&page).into_iter().collect();
    assert!(
        shown.contains("lisbon-night") && !shown.contains("sydney-dawn"),
        "{shown:?}"
    );
    let week = html(&srv, "/events/week/2027-03-29/?s=festival");
    let shown: BTreeSet<String> = event_slugs(&week[week.find("<main").unwrap()..])
        .into_iter()
        .collect();
    let api = api_window(&srv, "", "2027-03-29", "2027-04-05", "&search=festival");
    assert_eq!(shown, api);
    assert!(week.contains("noindex"), "search results are not indexed");
    // The month between two busy ones says it is empty and still leads on.
    let empty = html(&srv, "/events/month/2031-06/");
    assert!(empty.contains("No events this month."), "{empty}");
    assert!(
        empty.contains("href=\"/events/month/2031-07/\" rel=\"next\""),
        "{empty}"
    );
    // An event ending at midnight is not on the next day.
    let day13 = html(&srv, "/events/2027-04-13/");
    assert!(!event_slugs(&day13).contains(&"ends-at-midnight".to_string()));
}

#[test]
fn every_url_of_the_api_is_a_page_and_every_link_leads_somewhere() {
    let tmp = tempfile::tempdir().unwrap();
    let srv = Server::start(
        almanac(["serve", "--demo", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(tmp.path().join("d").to_str().unwrap()),
        None,
        "serve --demo",
    );
    for lang in ["", "/es", "/pt-br"] {
        for (collection, extra) in [
            ("events", ""),
            ("venues", ""),
            ("organizers", ""),
            ("categories", "&hide_empty=1"),
            ("tags", "&hide_empty=1"),
        ] {
            let v = srv.get_ok(&format!("{lang}{NS}/{collection}?per_page=20{extra}"), None);
            for record in v[collection].as_array().unwrap() {
                let url = record["url"].as_str().unwrap();
                let path = url.strip_prefix(&srv.base).unwrap();
                html(&srv, path);
            }
        }
    }
    // A crawl from /events/ in each language, two links deep, same-origin links only.
    for start in ["/events/", "/es/events/", "/pt-br/events/"] {
        let mut seen = HashSet::new();
        let mut queue = VecDeque::from([(start.to_string(), 0)]);
        while let Some((path, depth)) = queue.pop_front() {
            if !seen.insert(path.clone()) {
                continue;
            }
            let r = srv.req("GET", &path).header("Accept", "text/html").send();
            assert!(
                r.status < 400,
                "GET {path} (from the crawl of {start}): {}",
                r.status
            );
            if depth == 2
                || !r
                    .header("content-type")
                    .unwrap_or("")
                    .starts_with("text/html")
            {
                continue;
            }
            let page = r.text();
            for part in page.split("href=\"").skip(1) {
                let href = part[..part.find('"').unwrap()].replace("&amp;", "&");
                let local = href
                    .strip_prefix(&srv.base)
                    .map(str::to_string)
                    .unwrap_or(href);
                if local.starts_with('/') && !local.starts_with("//") {
                    queue.push_back((local, depth + 1));
                }
            }
        }
        assert!(
            seen.len() > 50,
            "the crawl from {start} reached {} pages",
            seen.len()
        );
    }
}

#[test]
fn what_pages_show_of_hostile_protected_and_unpublished_events() {
    let srv = Server::start_with_users(&[ADMIN]);
    let hostile = "<script>alert(1)</script>Tom & Jerry <b>bold</b> \"quoted\"";
    let e = event(
        &srv,
        hostile,
        "2027-05-01 10:00:00",
        "2027-05-01 12:00:00",
        json!({"description": "<p>Fine</p><script>alert(2)</script><img src=x onerror=alert(3)>"}),
    );
    let slug = e["slug"].as_str().unwrap().to_string();
    for path in [
        format!("/event/{slug}/"),
        "/events/2027-05-01/".into(),
        "/events/month/2027-05/".into(),
    ] {
        let page = html(&srv, &path);
        assert!(!page.contains("<script>alert"), "{path}: {page}");
        assert!(!page.contains("onerror"), "{path}: {page}");
        assert!(page.contains("Tom &amp; Jerry"), "{path}: {page}");
    }
    // A protected event: title and dates, a password form, nothing protected until the right
    // password is given.
    let secret = event(
        &srv,
        "Secret party",
        "2027-05-02 20:00:00",
        "2027-05-02 23:00:00",
        json!({"password": "s3cret", "description": "The hidden address", "excerpt": "Hidden excerpt",
               "cost": "Hidden fee", "featured": true, "venue": {"venue": "Hidden Hall", "city": "Porto"}}),
    );
    let path = format!("/event/{}/", secret["slug"].as_str().unwrap());
    let locked = html(&srv, &path);
    assert!(
        locked.contains("Secret party") && locked.contains("type=\"password\""),
        "{locked}"
    );
    for hidden in [
        "hidden address",
        "Hidden excerpt",
        "Hidden Hall",
        "Hidden fee",
        ".ics",
        "Featured",
        "calendar.google.com/calendar/render?action",
    ] {
        assert!(
            !locked.contains(hidden),
            "{hidden} on the locked page: {locked}"
        );
    }
    // In the lists, as in the API's: title and dates only.
    let day = html(&srv, "/events/2027-05-02/");
    // (The venue itself is published: the events bar lists it.)
    let day = &day[day.find("</form>").expect("the events bar")..];
    assert!(day.contains("Secret party"), "{day}");
    for hidden in ["Hidden excerpt", "Hidden Hall", "Hidden fee", "★"] {
        assert!(!day.contains(hidden), "{hidden} in the day view: {day}");
    }
    let post = |password: &str| {
        srv.req("POST", &path)
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(format!("password={password}"))
            .send()
    };
    let wrong = post("nope");
    assert_eq!(wrong.status, 403);
    assert!(wrong.text().contains("not right") && !wrong.text().contains("hidden address"));
    let right = post("s3cret");
    assert_eq!(right.status, 200);
    assert!(
        right.text().contains("hidden address")
            && right.text().contains("Hidden Hall")
            && right.text().contains("Hidden fee"),
        "{}",
        right.text()
    );
    assert_eq!(right.header("cache-control"), Some("no-store"));
    // Drafts and trashed events are the 404 page, as the API answers anyone anonymous.
    let draft = event(
        &srv,
        "Draft plan",
        "2027-05-03 10:00:00",
        "2027-05-03 11:00:00",
        json!({"status": "draft"}),
    );
    let r = srv.get(&format!("/event/{}/", draft["slug"].as_str().unwrap()));
    assert_eq!(r.status, 404);
    assert!(r.text().contains("Page not found"));
    let gone = event(
        &srv,
        "Gone soon",
        "2027-05-04 10:00:00",
        "2027-05-04 11:00:00",
        json!({}),
    );
    srv.write(
        "DELETE",
        &format!("{NS}/events/{}", gone["id"]),
        &ADMIN,
        &json!({}),
        200,
    );
    assert_eq!(
        srv.get(&format!("/event/{}/", gone["slug"].as_str().unwrap()))
            .status,
        404
    );
    assert!(!html(&srv, "/events/2027-05-04/").contains("Gone soon"));
}

#[test]
fn pages_carry_their_headers_languages_and_links() {
    let srv = Server::start_with_users(&[ADMIN]);
    let e = event(
        &srv,
        "Harbour concert",
        "2027-06-05 19:00:00",
        "2027-06-05 21:00:00",
        json!({}),
    );
    let es = event(
        &srv,
        "Concierto del puerto",
        "2027-06-05 19:00:00",
        "2027-06-05 21:00:00",
        json!({"translation_language": "es", "translation_of": e["id"]}),
    );
    // Browsers asking for `/` go to the calendar; API clients get the index.
    let r = srv
        .req("GET", "/")
        .header("Accept", "text/html,application/xhtml+xml")
        .send();
    assert_eq!(r.status, 303);
    assert_eq!(
        r.header("location"),
        Some(format!("{}/events/", srv.base).as_str())
    );
    assert!(r.header("vary").unwrap().contains("Accept"));
    let api = srv.get("/");
    assert_eq!(api.status, 200);
    assert!(api.json()["namespaces"].is_array());
    assert!(api.header("vary").unwrap().contains("Accept"));
    // An event page: its headers, its JSON twin, its translation and its structured data.
    let path = format!("/event/{}/", e["slug"].as_str().unwrap());
    let r = srv
        .req("GET", &path)
        .header("Accept-Encoding", "gzip")
        .send();
    assert_eq!(r.status, 200);
    let csp = r.header("content-security-policy").unwrap();
    assert!(
        csp.contains("frame-ancestors 'self'")
            && csp.contains("script-src 'self'")
            && !csp.contains("unsafe-inline"),
        "{csp}"
    );
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    assert!(r.header("referrer-policy").is_some());
    assert_eq!(r.header("x-cal-api-version"), Some("v1"));
    assert_eq!(
        r.header("x-cal-api-root"),
        Some(format!("{}{NS}/", srv.base).as_str())
    );
    assert!(r.header("link").unwrap().contains(&format!(
        "<{}{NS}/events/{}>; rel=\"alternate\"; type=\"application/json\"",
        srv.base, e["id"]
    )));
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    let etag = r.header("etag").unwrap().to_string();
    let again = srv.req("GET", &path).header("If-None-Match", &etag).send();
    assert_eq!(again.status, 304);
    let page = html(&srv, &path);
    assert!(
        page.contains(&format!(
            "hreflang=\"es\" href=\"{}/es/event/{}/\"",
            srv.base,
            es["slug"].as_str().unwrap()
        )),
        "{page}"
    );
    assert!(
        page.contains("\"@type\":\"Event\"")
            && page.contains("\"startDate\":\"2027-06-05T19:00:00+00:00\""),
        "{page}"
    );
    assert!(page.contains(&format!("{NS}/events/{}.ics", e["id"])));
    assert!(page.contains("calendar.google.com/calendar/render?action=TEMPLATE"));
    // The Spanish page is in Spanish; a slug of another language leads to its own page.
    let spanish = html(&srv, "/es/events/month/2027-06/");
    assert!(
        spanish.contains("lang=\"es\"")
            && spanish.contains("Junio de 2027")
            && spanish.contains("Mes siguiente"),
        "{spanish}"
    );
    let r = srv.get(&format!("/event/{}/", es["slug"].as_str().unwrap()));
    assert_eq!(r.status, 303);
    assert!(r
        .header("location")
        .unwrap()
        .ends_with(&format!("/es/event/{}/", es["slug"].as_str().unwrap())));
    // Assets are content-hashed and immutable; embed.js keeps its name.
    let css = page
        .split("rel=\"stylesheet\" href=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    let r = srv.get(css);
    assert_eq!(r.status, 200);
    assert!(r.header("cache-control").unwrap().contains("immutable"));
    assert_eq!(srv.get("/assets/embed.js").status, 200);
    assert_eq!(srv.get("/assets/nothing.css").status, 404);
    // The events bar without JavaScript: its form leads to the clean address of the view.
    let r = srv.get("/events/?s=harbour&date=2027-06-05&view=month&category=");
    assert_eq!(r.status, 303);
    assert_eq!(
        r.header("location"),
        Some(format!("{}/events/month/2027-06/?s=harbour", srv.base).as_str())
    );
    // Unknown addresses in the pages' space are the HTML 404 page; the API's stay JSON.
    let r = srv
        .req("GET", "/events/nowhere/")
        .header("Accept", "text/html")
        .send();
    assert_eq!(r.status, 404);
    assert!(r.header("content-type").unwrap().starts_with("text/html"));
    assert_eq!(srv.get("/events/list/page/99/").status, 404);
    // Visitors' proposals are off unless the operator turns them on.
    let r = srv
        .req("GET", "/es/events/propose/")
        .header("Accept", "text/html")
        .send();
    assert_eq!(r.status, 404);
    assert!(!srv.get("/events/list/").text().contains("/events/propose/"));
    let r = srv.get(&format!("{NS}/nowhere"));
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["code"], "rest_no_route");
    // Embeds may only be framed by the listed origins (none here: only the site itself).
    let r = srv.get("/embed/events/month/");
    assert_eq!(r.status, 200);
    assert!(r
        .header("content-security-policy")
        .unwrap()
        .contains("frame-ancestors 'self'"));
    assert!(
        !r.text().contains("class=\"site\""),
        "an embed has no site header"
    );
    assert!(
        r.text().contains("<base target=\"_top\">"),
        "links leave the frame"
    );
    // A category's address is its whole path.
    let music = srv.create(
        &ADMIN,
        &format!("{NS}/categories"),
        &json!({"name": "Music"}),
    );
    let jazz = srv.create(
        &ADMIN,
        &format!("{NS}/categories"),
        &json!({"name": "Jazz", "parent": music["id"]}),
    );
    assert_eq!(
        jazz["url"].as_str().unwrap(),
        format!("{}/events/category/music/jazz/", srv.base)
    );
    html(&srv, "/events/category/music/jazz/");
    assert_eq!(srv.get("/events/category/jazz/").status, 404);
    assert_eq!(srv.get("/events/category/other/jazz/").status, 404);
}

#[test]
fn busy_days_are_bounded_and_say_so() {
    let srv = Server::start_with_users(&[ADMIN]);
    for i in 0..105 {
        event(
            &srv,
            &format!("Stall {i}"),
            &format!("2027-08-14 {:02}:{:02}:00", 8 + i / 60, i % 60),
            "2027-08-14 20:00:00",
            json!({}),
        );
    }
    let day = html(&srv, "/events/2027-08-14/");
    assert_eq!(event_slugs(&day[day.find("<main").unwrap()..]).len(), 100);
    assert!(
        day.contains("The first 100 of the 105 events of this day"),
        "{day}"
    );
    let week = html(&srv, "/events/week/2027-08-14/");
    assert!(
        week.contains("+ 93 more") && week.contains("93 more events on Saturday, August 14, 2027"),
        "{week}"
    );
    let month = html(&srv, "/events/month/2027-08/");
    assert!(month.contains("+ 102 more"), "{month}");
    // Previous and next stop where addresses do.
    let last = html(&srv, "/events/2200-12-31/");
    assert!(
        last.contains("rel=\"prev\"") && !last.contains("rel=\"next\""),
        "{last}"
    );
    assert_eq!(srv.get("/events/2201-01-01/").status, 404);
}

#[test]
fn the_events_bar_offers_venues_and_organizers_and_pages_write_numbers_in_their_language() {
    let srv = Server::start_with_users(&[ADMIN]);
    let hall = srv.create(
        &ADMIN,
        &format!("{NS}/venues"),
        &json!({"venue": "Harbour Hall", "status": "publish"}),
    );
    let mill = srv.create(
        &ADMIN,
        &format!("{NS}/venues"),
        &json!({"venue": "Old Mill", "status": "publish"}),
    );
    let ana = srv.create(
        &ADMIN,
        &format!("{NS}/organizers"),
        &json!({"organizer": "Ana's choir", "status": "publish"}),
    );
    let (hall_id, mill_id) = (hall["id"].as_u64().unwrap(), mill["id"].as_u64().unwrap());
    let concert = event(
        &srv,
        "Choir concert",
        "2027-06-05 19:00:00",
        "2027-06-05 21:00:00",
        json!({"venue": hall_id, "organizer": [ana["id"]], "cost": "1500"}),
    );
    event(
        &srv,
        "Mill tour",
        "2027-06-06 10:00:00",
        "2027-06-06 11:00:00",
        json!({"venue": mill_id, "cost": "12.5"}),
    );
    let online = event(
        &srv,
        "Online talk",
        "2027-06-07 18:00:00",
        "2027-06-07 19:00:00",
        json!({"website": "https://talks.example/live"}),
    );
    // The bar lists the venues and organizers by name, each filter kept in its list.
    let month = html(&srv, "/events/month/2027-06/");
    let venue_list = &month[month.find("id=\"bar-venue\"").expect("a venue list")..];
    let (hall_at, mill_at) = (
        venue_list.find("Harbour Hall").unwrap(),
        venue_list.find("Old Mill").unwrap(),
    );
    assert!(hall_at < mill_at, "{venue_list}");
    assert!(month.contains("id=\"bar-organizer\""), "{month}");
    assert!(month.contains("Ana&#39;s choir") || month.contains("Ana's choir"));
    let filtered = html(&srv, &format!("/events/month/2027-06/?venue={mill_id}"));
    assert_eq!(event_slugs(&filtered), vec!["mill-tour".to_string()]);
    assert!(
        filtered.contains(&format!("<option value=\"{mill_id}\" selected>")),
        "{filtered}"
    );
    assert!(!filtered.contains("type=\"hidden\" name=\"venue\""));
    // Numbers as each language writes them.
    let page = |lang: &str, slug: &str| html(&srv, &format!("{lang}/event/{slug}/"));
    assert!(page("", "choir-concert").contains("$1,500"));
    let pt = event(
        &srv,
        "Concerto do coro",
        "2027-06-05 19:00:00",
        "2027-06-05 21:00:00",
        json!({"translation_language": "pt-br", "translation_of": concert["id"], "cost": "1500"}),
    );
    assert!(page("/pt-br", pt["slug"].as_str().unwrap()).contains("$1.500"));
    // Without a venue, an event with a website is an online event to search engines.
    let talk = page("", online["slug"].as_str().unwrap());
    assert!(
        talk.contains("\"@type\":\"VirtualLocation\"")
            && talk.contains("OnlineEventAttendanceMode"),
        "{talk}"
    );
    // A calendar with many venues lists none: a venue's events are on its page.
    for i in 0..50 {
        srv.create(
            &ADMIN,
            &format!("{NS}/venues"),
            &json!({"venue": format!("Venue {i}"), "status": "publish"}),
        );
    }
    let month = html(&srv, &format!("/events/month/2027-06/?venue={mill_id}"));
    assert!(!month.contains("id=\"bar-venue\"") && month.contains("id=\"bar-organizer\""));
    assert!(month.contains(&format!(
        "type=\"hidden\" name=\"venue\" value=\"{mill_id}\""
    )));
}
