//! `almanac import --from URL` against The Events Calendar, without the internet: a fixture
//! server on 127.0.0.1 answers the plugin's REST API v1 under `/wp-json/tribe/events/v1` in the
//! plugin's own shapes (string author IDs, embedded venues, organizers and terms, `X-TEC-Total`
//! and `X-TEC-TotalPages`, WordPress error bodies), records every request, and can be told to
//! fail. The copy is read back with `almanac export` and through the almanac server.

mod common;

use chrono::{NaiveDateTime, TimeZone};
use common::*;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

/// The plugin's REST root on a WordPress site.
const ROOT: &str = "/wp-json/tribe/events/v1";
/// The site's public pages (named in the records' links, never fetched).
const SITE: &str = "http://wp.example";
/// The statuses a walk with credentials asks for.
const EVERY_STATUS: &str = "publish,future,draft,pending,private,trash";
/// The date-time form of every date in the API.
const FORMAT: &str = "%Y-%m-%d %H:%M:%S";
/// What WordPress shows as the UTC dates of a record that was never published.
const ZERO_DATE: &str = "0000-00-00 00:00:00";
/// A WordPress user and application password.
const USER_NAME: &str = "importer";
const USER_PASSWORD: &str = "abcd EFGH 1234 ijkl";

// ---------------------------------------------------------------------------------------------
// The fixture server
// ---------------------------------------------------------------------------------------------

/// One request the fixture answered.
#[derive(Clone, Debug)]
struct Request {
    path: String,
    query: Vec<(String, String)>,
    authorization: Option<String>,
    at: Instant,
}

impl Request {
    fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn page(&self) -> u64 {
        self.param("page").map_or(1, |p| p.parse().unwrap())
    }

    /// The path under the REST root (`""`, `events`, `events/12`); `None` outside it.
    fn route(&self) -> Option<&str> {
        self.path.strip_prefix(ROOT).map(|r| r.trim_matches('/'))
    }

    /// A list request: the collection it walks.
    fn collection(&self) -> Option<&str> {
        self.route().filter(|r| COLLECTIONS.contains(r))
    }

    /// A single-record request (`events/12`).
    fn is_single(&self) -> bool {
        self.route()
            .and_then(|r| r.split_once('/'))
            .is_some_and(|(c, id)| COLLECTIONS.contains(&c) && id.parse::<u64>().is_ok())
    }
}

/// The fixture's answer to one request.
struct Answer {
    status: u16,
    content_type: &'static str,
    headers: Vec<(&'static str, String)>,
    body: String,
}

fn json_answer(status: u16, body: &Value) -> Answer {
    Answer {
        status,
        content_type: "application/json; charset=UTF-8",
        headers: Vec::new(),
        body: body.to_string(),
    }
}

/// A WordPress REST error.
fn wp_error(status: u16, code: &str, message: &str) -> Answer {
    json_answer(
        status,
        &json!({"code": code, "message": message, "data": {"status": status}}),
    )
}

const COLLECTIONS: [&str; 5] = ["categories", "tags", "venues", "organizers", "events"];

/// What the fixture holds and how it misbehaves.
struct Site {
    /// The namespace its index announces.
    namespace: &'static str,
    /// Each collection's records in the order the plugin lists them. Events name their venue,
    /// organizers and terms by ID; the answers embed those records as the plugin does.
    records: HashMap<&'static str, Vec<Value>>,
    /// Whether list bodies carry `total` and `total_pages`, as the plugin's do (the
    /// `X-TEC-*` headers always carry them).
    totals_in_body: bool,
    /// Every request must carry this `Authorization` header (401 otherwise).
    credentials: Option<String>,
    /// (route, page) answered 500 every time.
    broken: Vec<(&'static str, u64)>,
    /// Routes answered 429 with `Retry-After: 1` once each.
    throttled: Vec<&'static str>,
    requests: Vec<Request>,
}

impl Default for Site {
    fn default() -> Site {
        Site {
            namespace: "tribe/events/v1",
            records: COLLECTIONS.iter().map(|c| (*c, Vec::new())).collect(),
            totals_in_body: true,
            credentials: None,
            broken: Vec::new(),
            throttled: Vec::new(),
            requests: Vec::new(),
        }
    }
}

impl Site {
    fn put(&mut self, collection: &'static str, record: Value) {
        self.records.get_mut(collection).unwrap().push(record);
    }

    fn find(&self, collection: &str, id: u64) -> Option<&Value> {
        self.records[collection]
            .iter()
            .find(|r| r["id"].as_u64() == Some(id))
    }

    fn edit(&mut self, collection: &str, id: u64, change: Value) {
        let record = self
            .records
            .get_mut(collection)
            .unwrap()
            .iter_mut()
            .find(|r| r["id"].as_u64() == Some(id))
            .unwrap_or_else(|| panic!("no {collection} {id} at the fixture"));
        *record = merge(record.clone(), change);
    }

    fn remove(&mut self, collection: &str, id: u64) {
        let records = self.records.get_mut(collection).unwrap();
        let before = records.len();
        records.retain(|r| r["id"].as_u64() != Some(id));
        assert_eq!(
            records.len() + 1,
            before,
            "no {collection} {id} at the fixture"
        );
    }

    fn answer(&mut self, request: Request) -> Answer {
        self.requests.push(request.clone());
        if let Some(wanted) = &self.credentials {
            if request.authorization.as_ref() != Some(wanted) {
                return wp_error(
                    401,
                    "incorrect_password",
                    "The provided password is an invalid application password.",
                );
            }
        }
        let Some(route) = request.route() else {
            return no_route();
        };
        if self
            .broken
            .iter()
            .any(|(r, page)| *r == route && *page == request.page())
        {
            return json_answer(
                500,
                &json!({"code": "internal_server_error",
                        "message": "<p>There has been a critical error on this website.</p>",
                        "data": {"status": 500}, "additional_errors": []}),
            );
        }
        if let Some(at) = self.throttled.iter().position(|r| *r == route) {
            self.throttled.remove(at);
            return Answer {
                status: 429,
                content_type: "text/plain; charset=UTF-8",
                headers: vec![("Retry-After", "1".into())],
                body: "Too Many Requests".into(),
            };
        }
        if route.is_empty() {
            return json_answer(200, &self.index());
        }
        match route.split_once('/') {
            None if COLLECTIONS.contains(&route) => self.list(route, &request),
            Some((collection, id)) if COLLECTIONS.contains(&collection) => {
                match id.parse::<u64>() {
                    Ok(id) => self.single(collection, id, &request),
                    Err(_) => no_route(),
                }
            }
            _ => no_route(),
        }
    }

    /// The namespace index: the namespace and its routes.
    fn index(&self) -> Value {
        let ns = self.namespace;
        let mut routes = serde_json::Map::new();
        let route = |methods: &[&str]| {
            json!({"namespace": ns, "methods": methods,
                   "endpoints": [{"methods": methods, "args": {}}]})
        };
        routes.insert(format!("/{ns}"), route(&["GET"]));
        for c in COLLECTIONS {
            routes.insert(format!("/{ns}/{c}"), route(&["GET", "POST"]));
            routes.insert(
                format!("/{ns}/{c}/(?P<id>\\d+)"),
                route(&["GET", "POST", "PUT", "PATCH", "DELETE"]),
            );
        }
        json!({"namespace": ns, "routes": routes,
               "_links": {"up": [{"href": format!("{SITE}/wp-json/")}]}})
    }

    /// How many events carry a term (the plugin's `count`).
    fn count(&self, collection: &str, id: u64) -> u64 {
        self.records["events"]
            .iter()
            .filter(|e| ids(&e[collection]).contains(&id))
            .count() as u64
    }

    /// A record as the plugin shows it: terms with their count, events with their venue,
    /// organizers and terms embedded (references to records the site no longer has left out).
    fn shown(&self, collection: &str, record: &Value) -> Value {
        let mut shown = record.clone();
        match collection {
            "categories" | "tags" => {
                shown["count"] = json!(self.count(collection, record["id"].as_u64().unwrap()));
            }
            "events" => {
                shown["venue"] = ids(&record["venue"])
                    .first()
                    .and_then(|id| self.find("venues", *id))
                    .cloned()
                    .unwrap_or(json!([]));
                shown["organizer"] = ids(&record["organizer"])
                    .iter()
                    .filter_map(|id| self.find("organizers", *id))
                    .cloned()
                    .collect();
                for terms in ["categories", "tags"] {
                    shown[terms] = ids(&record[terms])
                        .iter()
                        .filter_map(|id| self.find(terms, *id))
                        .map(|t| embedded_term(t, self.count(terms, t["id"].as_u64().unwrap())))
                        .collect();
                }
            }
            _ => {}
        }
        shown
    }

    /// A list page, filtered as the plugin filters: only published records without
    /// credentials (with them, the `status` asked for), events within the date window (by
    /// default from yesterday to two years ahead), terms in use unless `hide_empty=false`.
    fn list(&self, collection: &str, request: &Request) -> Answer {
        let statuses: Vec<&str> = match (request.param("status"), &request.authorization) {
            (Some(asked), Some(_)) => asked.split(',').collect(),
            _ => vec!["publish"],
        };
        let now = chrono::Utc::now().naive_utc();
        let from = request.param("start_date").map_or_else(
            || (now - chrono::Duration::days(1)).format(FORMAT).to_string(),
            str::to_string,
        );
        let to = request.param("end_date").map_or_else(
            || {
                (now + chrono::Duration::days(730))
                    .format(FORMAT)
                    .to_string()
            },
            str::to_string,
        );
        let listed: Vec<Value> = self.records[collection]
            .iter()
            .filter(|r| match collection {
                "categories" | "tags" => {
                    request.param("hide_empty") == Some("false")
                        || self.count(collection, r["id"].as_u64().unwrap()) > 0
                }
                _ => {
                    statuses.contains(&r["status"].as_str().unwrap())
                        && (collection != "events"
                            || (r["end_date"].as_str().unwrap() >= from.as_str()
                                && r["start_date"].as_str().unwrap() <= to.as_str()))
                }
            })
            .map(|r| self.shown(collection, r))
            .collect();
        let per_page: usize = request.param("per_page").map_or(10, |p| p.parse().unwrap());
        let total = listed.len();
        let total_pages = total.div_ceil(per_page);
        let page = request.page() as usize;
        let records: Vec<Value> = listed
            .into_iter()
            .skip((page - 1) * per_page)
            .take(per_page)
            .collect();
        let mut body =
            json!({collection: records, "rest_url": format!("{SITE}{ROOT}/{collection}/")});
        if self.totals_in_body {
            body["total"] = json!(total);
            body["total_pages"] = json!(total_pages);
        }
        let mut answer = json_answer(200, &body);
        answer.headers = vec![
            ("X-TEC-Total", total.to_string()),
            ("X-TEC-TotalPages", total_pages.to_string()),
        ];
        answer
    }

    /// One record by ID, or the plugin's error for an ID it does not hold: 404 for events,
    /// `400 rest_invalid_param` for venues, organizers and terms.
    fn single(&self, collection: &str, id: u64, request: &Request) -> Answer {
        match self.find(collection, id) {
            Some(event) if collection == "events" && event["status"] == "trash" => wp_error(
                403,
                "event-no-longer-available",
                "This event is no longer available",
            ),
            Some(event)
                if collection == "events"
                    && event["status"] != "publish"
                    && request.authorization.is_none() =>
            {
                wp_error(
                    403,
                    "event-not-accessible",
                    "The requested event is not accessible",
                )
            }
            Some(record) => json_answer(200, &self.shown(collection, record)),
            None if collection == "events" => wp_error(
                404,
                "rest-event-not-found",
                &format!("Event with ID {id} does not exist."),
            ),
            None => json_answer(
                400,
                &json!({"code": "rest_invalid_param", "message": "Invalid parameter(s): id",
                        "data": {"status": 400, "params": {"id": "Invalid parameter."},
                                 "details": []}}),
            ),
        }
    }
}

fn no_route() -> Answer {
    wp_error(
        404,
        "rest_no_route",
        "No route was found matching the URL and request method.",
    )
}

/// A term as the plugin embeds it in an event.
fn embedded_term(term: &Value, count: u64) -> Value {
    json!({"name": term["name"], "slug": term["slug"], "term_group": 0,
           "term_taxonomy_id": term["id"], "taxonomy": term["taxonomy"],
           "description": term["description"], "parent": term["parent"], "count": count,
           "filter": "raw", "id": term["id"], "urls": term["urls"]})
}

/// The IDs a reference holds: a number, a list of numbers, or embedded records.
fn ids(v: &Value) -> Vec<u64> {
    match v {
        Value::Number(n) => n.as_u64().into_iter().collect(),
        Value::Object(_) => v["id"].as_u64().into_iter().collect(),
        Value::Array(items) => items.iter().flat_map(ids).collect(),
        _ => Vec::new(),
    }
}

/// A running fixture server; stopped when dropped.
struct Fixture {
    addr: SocketAddr,
    site: Arc<Mutex<Site>>,
    stop: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<()>>,
}

impl Fixture {
    fn start() -> Fixture {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the fixture");
        let addr = listener.local_addr().unwrap();
        let site = Arc::new(Mutex::new(Site::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (site, stop) = (site.clone(), stop.clone());
            thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(stream) = stream {
                        let site = site.clone();
                        thread::spawn(move || exchange(stream, &site));
                    }
                }
            })
        };
        Fixture {
            addr,
            site,
            stop,
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT`
    fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The REST root given to `--from`.
    fn root(&self) -> String {
        format!("{}{ROOT}", self.base())
    }

    fn site(&self) -> MutexGuard<'_, Site> {
        self.site.lock().unwrap()
    }

    /// The requests answered since the last call.
    fn take_requests(&self) -> Vec<Request> {
        std::mem::take(&mut self.site().requests)
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Reads one request (a GET: the head only) and writes the answer; the connection closes.
fn exchange(mut stream: TcpStream, site: &Mutex<Site>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let mut lines = head.split("\r\n");
    let target = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .unwrap_or("/")
        .to_string();
    let authorization = lines.take_while(|l| !l.is_empty()).find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("authorization")
            .then(|| value.trim().to_string())
    });
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let request = Request {
        path: path.to_string(),
        query: url::form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect(),
        authorization,
        at: Instant::now(),
    };
    let answer = site.lock().unwrap().answer(request);
    let reason = match answer.status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        _ => "Internal Server Error",
    };
    let mut out = format!(
        "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        answer.status,
        answer.content_type,
        answer.body.len()
    );
    for (name, value) in &answer.headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(&answer.body);
    let _ = stream.write_all(out.as_bytes());
    let _ = stream.flush();
    let _ = stream.shutdown(Shutdown::Write);
}

// ---------------------------------------------------------------------------------------------
// The plugin's records
// ---------------------------------------------------------------------------------------------

/// `{"year": "2027", "month": "07", ...}` of a date-time.
fn details(at: &str) -> Value {
    json!({"year": &at[0..4], "month": &at[5..7], "day": &at[8..10], "hour": &at[11..13],
           "minutes": &at[14..16], "seconds": &at[17..19]})
}

/// The UTC date-time of a wall clock in a zone (a database name or `UTC±H:MM`), and the
/// zone's abbreviation then.
fn utc_of(local: &str, zone: &str) -> (String, String) {
    let naive = NaiveDateTime::parse_from_str(local, FORMAT).unwrap();
    if let Some(offset) = zone.strip_prefix("UTC").filter(|o| !o.is_empty()) {
        let sign = if offset.starts_with('-') { -1 } else { 1 };
        let (hours, minutes) = offset[1..].split_once(':').unwrap_or((&offset[1..], "0"));
        let seconds =
            sign * (hours.parse::<i64>().unwrap() * 3600 + minutes.parse::<i64>().unwrap() * 60);
        let utc = naive - chrono::Duration::seconds(seconds);
        return (utc.format(FORMAT).to_string(), zone.to_string());
    }
    let tz: chrono_tz::Tz = zone.parse().unwrap();
    let at = tz.from_local_datetime(&naive).earliest().unwrap();
    (
        at.naive_utc().format(FORMAT).to_string(),
        at.format("%Z").to_string(),
    )
}

/// An event's dates as the plugin shows them.
fn schedule(start: &str, end: &str, zone: &str) -> Value {
    let (utc_start, abbr) = utc_of(start, zone);
    let (utc_end, _) = utc_of(end, zone);
    json!({"start_date": start, "start_date_details": details(start),
           "end_date": end, "end_date_details": details(end),
           "utc_start_date": utc_start, "utc_start_date_details": details(&utc_start),
           "utc_end_date": utc_end, "utc_end_date_details": details(&utc_end),
           "timezone": zone, "timezone_abbr": abbr})
}

/// The fields every post shares, on a site whose zone is an hour ahead of UTC.
fn post(id: u64, kind: &str, slug: &str) -> Value {
    json!({"id": id, "global_id": format!("wp.example?id={id}"),
           "global_id_lineage": [format!("wp.example?id={id}")], "author": "1",
           "status": "publish", "date": "2026-10-01 10:00:00",
           "date_utc": "2026-10-01 09:00:00", "modified": "2026-10-02 10:00:00",
           "modified_utc": "2026-10-02 09:00:00", "url": format!("{SITE}/{kind}/{slug}/")})
}

/// A published event of two and a half hours, in UTC, with nothing attached; `merge` to change
/// it.
fn event(id: u64) -> Value {
    let start = format!("2027-{:02}-{:02} 19:00:00", 1 + id % 12, 1 + id % 28);
    let end = format!("{} 21:30:00", &start[..10]);
    let slug = format!("event-{id}");
    let fields = json!({
        "rest_url": format!("{SITE}{ROOT}/events/{id}"),
        "title": format!("Event {id}"), "description": format!("<p>About event {id}.</p>"),
        "excerpt": "", "slug": slug, "image": false, "all_day": false,
        "start_date": null, "start_date_details": null, "end_date": null,
        "end_date_details": null, "utc_start_date": null, "utc_start_date_details": null,
        "utc_end_date": null, "utc_end_date_details": null, "timezone": null,
        "timezone_abbr": null, "cost": "",
        "cost_details": {"currency_symbol": "", "currency_code": "", "currency_position": "",
                         "values": []},
        "website": "", "show_map": false, "show_map_link": false, "hide_from_listings": false,
        "sticky": false, "featured": false, "categories": [], "tags": [], "venue": [],
        "organizer": [], "custom_fields": []
    });
    merge(
        merge(post(id, "event", &slug), fields),
        schedule(&start, &end, "UTC"),
    )
}

/// `event` moved to other dates.
fn at(event: Value, start: &str, end: &str, zone: &str) -> Value {
    merge(event, schedule(start, end, zone))
}

/// A draft or pending event as the plugin lists it to its editors: no UTC dates, no slug.
fn unpublished(event: Value, status: &str) -> Value {
    let id = event["id"].as_u64().unwrap();
    merge(
        event,
        json!({"status": status, "date_utc": ZERO_DATE, "modified_utc": ZERO_DATE, "slug": "",
               "url": format!("{SITE}/?post_type=tribe_events&p={id}")}),
    )
}

/// A password-protected event as the plugin lists it: flags and content masked.
fn masked(event: Value) -> Value {
    merge(
        event,
        json!({"description": "", "excerpt": "", "all_day": null, "show_map": null,
               "show_map_link": null, "hide_from_listings": null, "sticky": null,
               "featured": null, "cost": "", "website": "", "categories": [], "tags": [],
               "venue": [], "organizer": []}),
    )
}

fn venue(id: u64, name: &str) -> Value {
    let slug = name.to_lowercase().replace(' ', "-");
    merge(
        post(id, "venue", &slug),
        json!({"venue": name, "slug": slug, "address": format!("{id} Quay Street"),
               "city": "Lisbon", "country": "Portugal", "zip": "1100-148",
               "phone": "+351 21 000 0000", "website": format!("https://{slug}.example"),
               "stateprovince": "Lisboa", "show_map": true, "show_map_link": false}),
    )
}

fn organizer(id: u64, name: &str) -> Value {
    let slug = name.to_lowercase().replace(' ', "-");
    merge(
        post(id, "organizer", &slug),
        json!({"organizer": name, "slug": slug, "phone": "+351 21 111 1111",
               "website": format!("https://{slug}.example"),
               "email": format!("hello@{slug}.example")}),
    )
}

fn term(taxonomy: &str, id: u64, name: &str, parent: u64) -> Value {
    let (collection, path) = match taxonomy {
        "tribe_events_cat" => ("categories", "events/category"),
        _ => ("tags", "tag"),
    };
    let slug = name.to_lowercase().replace(' ', "-");
    json!({"id": id, "count": 0, "description": format!("All about {name}."), "name": name,
           "slug": slug, "taxonomy": taxonomy, "parent": parent, "meta": [],
           "url": format!("{SITE}/{path}/{slug}/"),
           "urls": {"self": format!("{SITE}{ROOT}/{collection}/{id}"),
                    "collection": format!("{SITE}{ROOT}/{collection}")}})
}

fn category(id: u64, name: &str, parent: u64) -> Value {
    term("tribe_events_cat", id, name, parent)
}

fn tag(id: u64, name: &str) -> Value {
    term("post_tag", id, name, 0)
}

/// An image in the media library as the plugin shows it.
fn image(base: &str, id: u64, file: &str) -> Value {
    let url = format!("{base}/wp-content/uploads/2027/06/{file}");
    let (stem, extension) = file.rsplit_once('.').unwrap();
    json!({"url": url, "id": id, "extension": extension, "width": 1200, "height": 800,
           "filesize": 183_222,
           "sizes": {"medium": {"width": 300, "height": 200, "mime-type": "image/jpeg",
                                "url": format!("{base}/wp-content/uploads/2027/06/{stem}-300x200.{extension}")}}})
}

/// A small calendar: three categories, two tags, two venues, two organizers and `events`
/// events from ID 400 (two pages of 50 for 60 events).
fn small_calendar(site: &mut Site, events: u64) {
    site.put("categories", category(2, "Music", 0));
    site.put("categories", category(3, "Jazz", 2));
    site.put("categories", category(4, "Theatre", 0));
    site.put("tags", tag(6, "Outdoor"));
    site.put("tags", tag(7, "Family"));
    site.put("venues", venue(10, "Harbour Hall"));
    site.put("venues", venue(11, "Old Cinema"));
    site.put("organizers", organizer(20, "Jazz Society"));
    site.put("organizers", organizer(21, "City Theatre"));
    for k in 0..events {
        site.put(
            "events",
            merge(
                event(400 + k),
                json!({"venue": if k.is_multiple_of(2) { 10 } else { 11 },
                       "organizer": [if k.is_multiple_of(3) { 20 } else { 21 }],
                       "categories": if k.is_multiple_of(2) { json!([2]) } else { json!([3, 4]) },
                       "tags": match k % 4 { 0 => json!([6]), 1 => json!([7]), _ => json!([]) }}),
            ),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Running and reading the copy
// ---------------------------------------------------------------------------------------------

/// A temporary data directory (created by the first import).
fn data_dir() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    (tmp, dir)
}

/// `almanac import --from ROOT --data-dir DIR` with `extra` arguments.
fn import_from(fixture: &Fixture, dir: &Path, extra: &[&str]) -> Output {
    almanac(["import", "--from", &fixture.root(), "--data-dir"])
        .arg(dir.to_str().unwrap())
        .args(extra)
        .env("NO_PROXY", "127.0.0.1")
        .timeout(90)
        .run()
}

/// The summary line of a run that must have ended with `code`.
fn summary(out: &Output, code: i32) -> String {
    assert_eq!(out.code, Some(code), "{}", out.describe());
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "one summary line: {}", out.describe());
    lines[0].to_string()
}

/// What `almanac export` writes of a data directory: each record's `data` by collection and ID.
struct Exported(BTreeMap<(String, u64), Value>);

impl Exported {
    fn read(dir: &Path) -> Exported {
        let out = almanac(["export", "--data-dir", dir.to_str().unwrap()]).run();
        assert_eq!(out.code, Some(0), "export: {}", out.describe());
        Exported(
            out.stdout
                .lines()
                .map(|line| {
                    let v: Value = serde_json::from_str(line).unwrap();
                    let key = (
                        v["resource"].as_str().unwrap().to_string(),
                        v["data"]["id"].as_u64().unwrap(),
                    );
                    (key, v["data"].clone())
                })
                .collect(),
        )
    }

    fn get(&self, collection: &str, id: u64) -> &Value {
        self.0
            .get(&(collection.to_string(), id))
            .unwrap_or_else(|| panic!("{collection} {id} is not in the copy"))
    }

    fn has(&self, collection: &str, id: u64) -> bool {
        self.0.contains_key(&(collection.to_string(), id))
    }

    fn ids(&self, collection: &str) -> Vec<u64> {
        self.0
            .keys()
            .filter(|(c, _)| c == collection)
            .map(|(_, id)| *id)
            .collect()
    }
}

/// The almanac server on a copy, with an administrator (user ID 1) added first.
fn serve_copy(dir: &Path) -> Server {
    add_user(dir, &ADMIN);
    Server::start(serve_cmd(dir), None, "serve the copy")
}

/// The requests to one collection's list, in order.
fn list_requests<'a>(requests: &'a [Request], collection: &str) -> Vec<&'a Request> {
    requests
        .iter()
        .filter(|r| r.collection() == Some(collection))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[test]
fn a_paged_calendar_arrives_whole_with_every_field_kept() {
    let fx = Fixture::start();
    let base = fx.base();
    let credentials = basic(USER_NAME, USER_PASSWORD);
    {
        let mut site = fx.site();
        site.credentials = Some(credentials.clone());
        // The pages are found from the X-TEC-* headers alone.
        site.totals_in_body = false;
        // Listed by name, as the plugin lists terms: the child before its parent.
        site.put("categories", category(3, "Jazz", 2));
        site.put("categories", category(2, "Music", 0));
        site.put("categories", category(4, "Theatre", 0));
        site.put("tags", tag(7, "Family"));
        site.put("tags", tag(6, "Outdoor"));
        // Carried by no event: listed only with hide_empty=false.
        site.put("tags", tag(8, "Unused"));
        site.put(
            "venues",
            merge(
                venue(10, "Harbour Hall"),
                json!({"geo_lat": 38.7071, "geo_lng": -9.1355,
                       "image": image(&base, 31, "hall.png")}),
            ),
        );
        site.put("venues", venue(11, "Old Cinema"));
        site.put(
            "venues",
            merge(venue(12, "Empty Room"), json!({"status": "draft"})),
        );
        site.put("organizers", organizer(20, "Jazz Society"));
        site.put(
            "organizers",
            merge(organizer(21, "City Theatre"), json!({"author": "7"})),
        );

        let mut events = vec![
            merge(
                at(
                    event(100),
                    "2027-07-10 21:00:00",
                    "2027-07-10 23:30:00",
                    "Europe/Lisbon",
                ),
                json!({"title": "Jazz by the River", "author": "7",
                       "description": "<p>Late <strong>jazz</strong> by the river.</p><script>alert('x')</script>",
                       "excerpt": "<p>Late jazz.</p>",
                       "venue": 10, "organizer": [20, 21], "categories": [3], "tags": [6, 7],
                       "cost": "12€",
                       "cost_details": {"currency_symbol": "€", "currency_code": "EUR",
                                        "currency_position": "postfix", "values": ["12"]},
                       "website": "https://jazz.example/river", "featured": true,
                       "sticky": true, "show_map": true, "show_map_link": true,
                       "image": image(&base, 30, "jazz.jpg")}),
            ),
            merge(
                at(
                    event(101),
                    "2027-03-05 20:00:00",
                    "2027-03-05 23:00:00",
                    "America/Sao_Paulo",
                ),
                json!({"venue": 11, "hide_from_listings": true, "show_map": true,
                       "cost": "R$30 – R$50",
                       "cost_details": {"currency_symbol": "R$", "currency_code": "BRL",
                                        "currency_position": "prefix", "values": ["30", "50"]},
                       "categories": [2, 4]}),
            ),
            at(
                event(102),
                "2027-12-01 18:00:00",
                "2027-12-01 20:00:00",
                "UTC+5:30",
            ),
            merge(
                at(
                    event(103),
                    "2027-05-01 00:00:00",
                    "2027-05-03 23:59:59",
                    "Europe/Lisbon",
                ),
                json!({"all_day": true}),
            ),
            // Outside the plugin's default window.
            at(
                event(104),
                "1999-12-31 22:00:00",
                "2000-01-01 02:00:00",
                "Europe/Lisbon",
            ),
            unpublished(event(105), "draft"),
            unpublished(
                merge(event(106), json!({"title": "Waiting Review"})),
                "pending",
            ),
            merge(event(107), json!({"status": "private"})),
            merge(
                event(108),
                json!({"status": "future", "date": "2031-01-01 10:00:00",
                       "date_utc": "2031-01-01 10:00:00"}),
            ),
            merge(
                event(109),
                json!({"status": "trash", "slug": "event-109__trashed"}),
            ),
        ];
        let zones = ["Europe/Lisbon", "America/Sao_Paulo", "UTC+5:30", "UTC"];
        for id in 110..220u64 {
            let k = id as usize;
            let start = format!("2027-{:02}-{:02} 19:00:00", 1 + k % 12, 1 + k % 28);
            let end = format!("{} 22:00:00", &start[..10]);
            let venue = [json!([]), json!(10), json!(11)][k % 3].clone();
            let organizers = if k.is_multiple_of(2) {
                json!([20])
            } else {
                json!([])
            };
            let category = if k.is_multiple_of(2) { 2 } else { 4 };
            let tags = if k.is_multiple_of(5) {
                json!([6])
            } else {
                json!([])
            };
            events.push(merge(
                at(event(id), &start, &end, zones[k % 4]),
                json!({"venue": venue, "organizer": organizers, "categories": [category],
                       "tags": tags}),
            ));
        }
        for e in events {
            site.put("events", e);
        }
    }

    let user = format!("{USER_NAME}:{USER_PASSWORD}");
    let (_tmp, dir) = data_dir();
    let out = import_from(&fx, &dir, &["--user", &user]);
    assert_eq!(
        summary(&out, 0),
        "added 131, updated 0, unchanged 0, trashed 0, refused 0"
    );

    // The requests: the namespace index first, then each collection walked with the
    // parameters that make it complete and the credentials on every request.
    let requests = fx.take_requests();
    assert_eq!(requests[0].route(), Some(""), "{requests:?}");
    for r in &requests {
        assert_eq!(
            r.authorization.as_deref(),
            Some(credentials.as_str()),
            "{r:?}"
        );
        assert!(
            !r.path.starts_with("/wp-content/"),
            "images are kept as URLs, never fetched: {r:?}"
        );
        assert!(
            !r.is_single(),
            "a walk without --mirror asks no record by ID: {r:?}"
        );
    }
    let mut order: Vec<&str> = requests.iter().filter_map(|r| r.collection()).collect();
    order.dedup();
    assert_eq!(order, COLLECTIONS, "references point backwards");
    for collection in COLLECTIONS {
        for r in list_requests(&requests, collection) {
            assert_eq!(r.param("per_page"), Some("50"), "{r:?}");
            match collection {
                "categories" | "tags" => {
                    assert_eq!(r.param("hide_empty"), Some("false"), "{r:?}");
                    assert_eq!(r.param("status"), None, "{r:?}");
                }
                _ => assert_eq!(r.param("status"), Some(EVERY_STATUS), "{r:?}"),
            }
            if collection == "venues" || collection == "organizers" {
                assert_eq!(r.param("only_with_upcoming"), Some("false"), "{r:?}");
            }
            if collection == "events" {
                assert_eq!(r.param("start_date"), Some("1900-01-01 00:00:00"), "{r:?}");
                assert_eq!(r.param("end_date"), Some("2999-12-31 23:59:59"), "{r:?}");
            }
        }
    }
    let mut event_pages: Vec<u64> = list_requests(&requests, "events")
        .iter()
        .map(|r| r.page())
        .collect();
    event_pages.sort();
    assert_eq!(event_pages, [1, 2, 3], "120 events are three pages of 50");

    // Every record, every field.
    let copy = Exported::read(&dir);
    assert_eq!(copy.ids("categories"), [2, 3, 4]);
    assert_eq!(copy.ids("tags"), [6, 7, 8]);
    assert_eq!(copy.ids("venues"), [10, 11, 12]);
    assert_eq!(copy.ids("organizers"), [20, 21]);
    assert_eq!(copy.ids("events"), (100..220).collect::<Vec<u64>>());
    let site = fx.site();
    for (collection, keys) in [
        ("categories", &["name", "slug", "description", "parent"][..]),
        ("tags", &["name", "slug", "description"][..]),
    ] {
        for t in &site.records[collection] {
            let copied = copy.get(collection, t["id"].as_u64().unwrap());
            for key in keys {
                assert_eq!(copied[key], t[key], "{collection} {} {key}", t["id"]);
            }
        }
    }
    for (collection, keys) in [
        (
            "venues",
            &[
                "venue",
                "address",
                "city",
                "country",
                "zip",
                "phone",
                "website",
                "stateprovince",
                "show_map",
                "show_map_link",
            ][..],
        ),
        (
            "organizers",
            &["organizer", "phone", "website", "email"][..],
        ),
    ] {
        for p in &site.records[collection] {
            let copied = copy.get(collection, p["id"].as_u64().unwrap());
            for key in [
                "slug",
                "status",
                "author",
                "date",
                "date_utc",
                "modified_utc",
            ]
            .iter()
            .chain(keys)
            {
                assert_eq!(copied[key], p[key], "{collection} {} {key}", p["id"]);
            }
        }
    }
    let hall = copy.get("venues", 10);
    assert_eq!(hall["geo_lat"], json!(38.7071));
    assert_eq!(hall["geo_lng"], json!(-9.1355));
    assert_eq!(
        hall["image"]["url"],
        json!(format!("{base}/wp-content/uploads/2027/06/hall.png"))
    );
    assert_eq!(copy.get("organizers", 21)["author"], "7");

    // Family (7) before Outdoor (6).
    assert_eq!(ids(&copy.get("events", 100)["tags"]), [7, 6]);
    for e in &site.records["events"] {
        let id = e["id"].as_u64().unwrap();
        let copied = copy.get("events", id);
        let mut keys = vec![
            "status",
            "author",
            "title",
            "date",
            "excerpt",
            "start_date",
            "end_date",
            "utc_start_date",
            "utc_end_date",
            "timezone",
            "all_day",
            "show_map",
            "show_map_link",
            "hide_from_listings",
            "sticky",
            "featured",
        ];
        if e["status"] != "draft" && e["status"] != "pending" {
            keys.extend(["slug", "date_utc", "modified_utc"]);
        }
        for key in keys {
            assert_eq!(copied[key], e[key], "event {id} {key}");
        }
        for key in ["currency_symbol", "currency_position", "values"] {
            assert_eq!(
                copied["cost_details"][key], e["cost_details"][key],
                "event {id} cost_details.{key}"
            );
        }
        for key in ["venue", "organizer"] {
            assert_eq!(ids(&copied[key]), ids(&e[key]), "event {id} {key}");
        }
        // Terms in the copy's own order, the API's: by name, then ID.
        for key in ["categories", "tags"] {
            let (mut mine, mut theirs) = (ids(&copied[key]), ids(&e[key]));
            mine.sort_unstable();
            theirs.sort_unstable();
            assert_eq!(mine, theirs, "event {id} {key}");
        }
        assert_eq!(
            copied["image"]["url"], e["image"]["url"],
            "event {id} image"
        );
        if id != 100 {
            assert_eq!(copied["description"], e["description"], "event {id}");
        }
    }
    drop(site);
    let river = copy.get("events", 100);
    // Another site's HTML is cleaned as a writer's without unfiltered_html (docs/api.md,
    // "Text fields and HTML").
    assert_eq!(
        river["description"],
        "<p>Late <strong>jazz</strong> by the river.</p>"
    );
    assert_eq!(river["cost"], "12€");
    assert_eq!(river["website"], "https://jazz.example/river");
    assert_eq!(river["utc_start_date"], "2027-07-10 20:00:00");
    assert_eq!(
        copy.get("events", 101)["utc_start_date"],
        "2027-03-05 23:00:00"
    );
    assert_eq!(
        copy.get("events", 102)["utc_start_date"],
        "2027-12-01 12:30:00"
    );
    assert_eq!(copy.get("events", 102)["timezone"], "UTC+5:30");
    // Records never published: the slug comes from the title, the UTC dates from the local
    // ones (the plugin shows neither).
    let draft = copy.get("events", 105);
    assert_eq!(draft["slug"], "event-105");
    assert_eq!(draft["date_utc"], "2026-10-01 10:00:00");
    assert_eq!(draft["modified_utc"], "2026-10-02 10:00:00");
    assert_eq!(copy.get("events", 106)["slug"], "waiting-review");

    // The almanac server answers from the copy.
    let srv = serve_copy(&dir);
    let river = srv.get_ok(&format!("{NS}/events/100"), None);
    assert_eq!(river["title"], "Jazz by the River");
    assert_eq!(river["venue"]["venue"], "Harbour Hall");
    assert_eq!(river["venue"]["geo_lat"], json!(38.7071));
    assert_eq!(ids(&river["organizer"]), [20, 21]);
    assert_eq!(river["categories"][0]["parent"], 2);
    assert_eq!(river["cost_details"]["currency_symbol"], "€");
    assert_eq!(river["cost_details"]["currency_position"], "postfix");
    assert!(!river["description"].as_str().unwrap().contains("script"));
    let jazz = srv.get_ok(&format!("{NS}/categories/3"), None);
    assert_eq!(jazz["parent"], 2);
    let draft = srv.get_ok(&format!("{NS}/events/105"), Some(&ADMIN));
    assert_eq!(draft["status"], "draft");
    assert_eq!(
        fx.take_requests().len(),
        0,
        "reading the copy asks nothing of the source"
    );
}

#[test]
fn records_the_store_cannot_take_are_named_and_the_rest_loads() {
    let fx = Fixture::start();
    {
        let mut site = fx.site();
        site.put("categories", category(2, "Music", 0));
        site.put("tags", tag(6, "Outdoor"));
        site.put("venues", venue(10, "Harbour Hall"));
        site.put("organizers", organizer(20, "Jazz Society"));
        for id in 300..306 {
            site.put(
                "events",
                merge(
                    event(id),
                    json!({"venue": 10, "organizer": [20], "categories": [2], "tags": [6]}),
                ),
            );
        }
        site.put(
            "events",
            at(
                event(306),
                "2027-06-02 19:00:00",
                "2027-06-01 21:00:00",
                "Europe/Lisbon",
            ),
        );
        site.put("events", masked(event(307)));
    }
    let (_tmp, dir) = data_dir();
    let out = import_from(&fx, &dir, &[]);
    assert_eq!(
        summary(&out, 1),
        "added 10, updated 0, unchanged 0, trashed 0, refused 2"
    );
    assert!(
        out.stderr
            .contains("event 306 refused: `end_date` is before `start_date`"),
        "{}",
        out.describe()
    );
    assert!(
        out.stderr
            .contains("event 307 refused: password-protected at the source"),
        "{}",
        out.describe()
    );
    let copy = Exported::read(&dir);
    assert_eq!(copy.ids("events"), (300..306).collect::<Vec<u64>>());
    for id in 300..306 {
        let e = copy.get("events", id);
        assert_eq!(e["title"], format!("Event {id}"));
        assert_eq!(ids(&e["venue"]), [10]);
        assert_eq!(ids(&e["tags"]), [6]);
    }
    assert!(copy.has("venues", 10) && copy.has("organizers", 20));
}

#[test]
fn a_source_failing_half_way_stops_the_run_and_nothing_is_trashed() {
    let fx = Fixture::start();
    small_calendar(&mut fx.site(), 60);
    let (_tmp, dir) = data_dir();
    let out = import_from(&fx, &dir, &["--mirror"]);
    assert_eq!(
        summary(&out, 0),
        "added 69, updated 0, unchanged 0, trashed 0, refused 0"
    );
    let before = Exported::read(&dir);
    fx.take_requests();

    // Gone from the source, which then fails on the second page of events.
    {
        let mut site = fx.site();
        site.remove("events", 401);
        site.remove("events", 458);
        site.remove("venues", 11);
        site.remove("tags", 7);
        site.broken.push(("events", 2));
    }
    let out = import_from(&fx, &dir, &["--mirror", "--retries", "1"]);
    assert_eq!(out.code, Some(1), "{}", out.describe());
    assert_eq!(out.stdout, "", "no summary: {}", out.describe());
    let failing = format!("{}/events?", fx.root());
    let line = out
        .stderr
        .lines()
        .find(|l| l.contains("the import stopped (nothing was trashed): "))
        .unwrap_or_else(|| panic!("{}", out.describe()));
    assert!(
        line.contains(&failing) && line.contains("page=2") && line.contains("500"),
        "{line}"
    );
    let requests = fx.take_requests();
    let second_pages = list_requests(&requests, "events")
        .iter()
        .filter(|r| r.page() == 2)
        .count();
    assert_eq!(second_pages, 2, "the first try and one retry");
    assert!(
        !requests.iter().any(Request::is_single),
        "nothing was looked up for trashing: {requests:?}"
    );

    let after = Exported::read(&dir);
    assert_eq!(after.0.len(), before.0.len());
    for ((collection, id), data) in &before.0 {
        let now = after.get(collection, *id);
        assert_eq!(now, data, "{collection} {id} is as it was");
        assert_ne!(now["status"], "trash", "{collection} {id}");
    }
    assert!(after.has("tags", 7) && after.has("venues", 11));
}

#[test]
fn a_second_run_updates_what_changed_and_trashes_what_is_gone() {
    let fx = Fixture::start();
    small_calendar(&mut fx.site(), 60);
    let (_tmp, dir) = data_dir();
    let out = import_from(&fx, &dir, &["--mirror"]);
    assert_eq!(
        summary(&out, 0),
        "added 69, updated 0, unchanged 0, trashed 0, refused 0"
    );
    let before = Exported::read(&dir);
    fx.take_requests();

    let changed = json!({"modified": "2026-11-05 13:00:00", "modified_utc": "2026-11-05 12:00:00"});
    {
        let mut site = fx.site();
        for id in [402, 410, 455] {
            site.edit(
                "events",
                id,
                merge(changed.clone(), json!({"title": format!("Renamed {id}")})),
            );
        }
        site.edit(
            "organizers",
            21,
            merge(changed.clone(), json!({"organizer": "Municipal Theatre"})),
        );
        // Terms have no modification date: any changed field counts.
        site.edit("categories", 4, json!({"name": "Stage"}));
        for id in [403, 404, 430, 459] {
            site.remove("events", id);
        }
        site.remove("venues", 11);
        site.remove("tags", 7);
    }
    let out = import_from(&fx, &dir, &["--mirror", "--retries", "0"]);
    assert_eq!(
        summary(&out, 0),
        "added 0, updated 5, unchanged 58, trashed 6, refused 0"
    );
    let requests = fx.take_requests();
    let mut looked_up: Vec<&str> = requests
        .iter()
        .filter(|r| r.is_single())
        .map(|r| r.route().unwrap())
        .collect();
    looked_up.sort();
    assert_eq!(
        looked_up,
        [
            "events/403",
            "events/404",
            "events/430",
            "events/459",
            "tags/7",
            "venues/11"
        ],
        "each missing record is asked for by ID before it is trashed"
    );

    let copy = Exported::read(&dir);
    for id in [402, 410, 455] {
        let e = copy.get("events", id);
        assert_eq!(e["title"], format!("Renamed {id}"));
        assert_eq!(e["modified_utc"], "2026-11-05 12:00:00");
        assert_eq!(e["status"], "publish");
    }
    assert_eq!(copy.get("organizers", 21)["organizer"], "Municipal Theatre");
    assert_eq!(copy.get("categories", 4)["name"], "Stage");
    for id in [403, 404, 430, 459] {
        assert_eq!(copy.get("events", id)["status"], "trash", "event {id}");
    }
    assert_eq!(copy.get("venues", 11)["status"], "trash");
    assert!(
        !copy.has("tags", 7),
        "a term gone from the source is deleted"
    );
    for id in copy.ids("events") {
        let e = copy.get("events", id);
        assert!(!ids(&e["tags"]).contains(&7), "event {id} lost tag 7");
        assert!(!ids(&e["venue"]).contains(&11), "event {id} lost venue 11");
        if e["status"] != "trash" && ![402, 410, 455].contains(&id) {
            assert_eq!(
                e["modified_utc"],
                before.get("events", id)["modified_utc"],
                "event {id}: losing a trashed link is not a change"
            );
        }
    }
    // What did not change is as it was.
    assert_eq!(copy.get("venues", 10), before.get("venues", 10));
    assert_eq!(copy.get("organizers", 20), before.get("organizers", 20));
    for (collection, id) in [("categories", 2), ("categories", 3), ("tags", 6)] {
        for key in ["name", "slug", "description"] {
            assert_eq!(
                copy.get(collection, id)[key],
                before.get(collection, id)[key],
                "{collection} {id} {key}"
            );
        }
    }

    // The server shows the same.
    let mut srv = serve_copy(&dir);
    assert_eq!(
        srv.get_ok(&format!("{NS}/events/410"), None)["title"],
        "Renamed 410"
    );
    let gone = srv.get_as(&format!("{NS}/events/403"), &ADMIN);
    assert_error(&gone, 403, "event-no-longer-available");
    let venue = srv.get_ok(&format!("{NS}/venues/11"), Some(&ADMIN));
    assert_eq!(venue["status"], "trash");
    let tags = srv.get_ok(&format!("{NS}/tags?hide_empty=false"), None);
    assert_eq!(ids(&tags["tags"]), [6]);
    srv.stop(Duration::from_secs(15));
    drop(srv);

    let out = import_from(&fx, &dir, &["--mirror", "--retries", "0"]);
    assert_eq!(
        summary(&out, 0),
        "added 0, updated 0, unchanged 63, trashed 0, refused 0"
    );
    assert!(
        !fx.take_requests().iter().any(Request::is_single),
        "nothing is missing any more"
    );
}

#[test]
fn a_429_with_retry_after_is_waited_out_and_the_run_succeeds() {
    let fx = Fixture::start();
    {
        let mut site = fx.site();
        small_calendar(&mut site, 3);
        site.throttled.push("venues");
    }
    let (_tmp, dir) = data_dir();
    let out = import_from(&fx, &dir, &["--retries", "1"]);
    assert_eq!(
        summary(&out, 0),
        "added 12, updated 0, unchanged 0, trashed 0, refused 0"
    );
    let requests = fx.take_requests();
    let venues = list_requests(&requests, "venues");
    assert_eq!(venues.len(), 2, "one 429, then the page");
    let waited = venues[1].at - venues[0].at;
    assert!(
        waited >= Duration::from_millis(950),
        "Retry-After: 1 is honoured (waited {waited:?})"
    );
    assert_eq!(Exported::read(&dir).ids("venues"), [10, 11]);
}

#[test]
fn wrong_credentials_stop_the_run_at_once() {
    let fx = Fixture::start();
    {
        let mut site = fx.site();
        small_calendar(&mut site, 3);
        site.credentials = Some(basic(USER_NAME, USER_PASSWORD));
    }
    let (_tmp, dir) = data_dir();
    let out = import_from(
        &fx,
        &dir,
        &["--user", &format!("{USER_NAME}:wrong"), "--retries", "3"],
    );
    assert_eq!(out.code, Some(1), "{}", out.describe());
    assert_eq!(out.stdout, "");
    let expected = format!(
        "the import stopped (nothing was trashed): {}: 401 Unauthorized: The provided password \
         is an invalid application password.",
        fx.root()
    );
    assert!(out.stderr.contains(&expected), "{}", out.describe());
    assert_eq!(fx.take_requests().len(), 1, "a 401 is not retried");
}

#[test]
fn a_url_that_is_not_an_events_api_is_refused() {
    let fx = Fixture::start();
    {
        let mut site = fx.site();
        site.namespace = "wp/v2";
        small_calendar(&mut site, 3);
    }
    let (_tmp, dir) = data_dir();
    let out = import_from(&fx, &dir, &[]);
    assert_eq!(out.code, Some(1), "{}", out.describe());
    assert_eq!(out.stdout, "");
    let expected = format!(
        "{}: not the REST root of an events API (its namespace is \"wp/v2\"; expected \
         \"tribe/events/v1\" or \"cal/events/v1\")",
        fx.root()
    );
    assert!(out.stderr.contains(&expected), "{}", out.describe());
    let requests = fx.take_requests();
    assert_eq!(requests.len(), 1, "only the index was read: {requests:?}");
}
