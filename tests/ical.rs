//! Calendar feeds: `/events.ics`, `/events/{id}.ics`, `/events/by-slug/{slug}.ics`
//! (docs/api.md, "Calendar feeds"), checked as raw bytes, read with an iCalendar parser and
//! compared with the JSON routes of the same server.

mod common;

use chrono::{Datelike, Duration as CDur, NaiveDate, NaiveDateTime, Weekday};
use common::*;
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// Reading a feed
// ---------------------------------------------------------------------------------------------

const ICAL_CT: &str = "text/calendar; charset=utf-8";
const HOST: &str = "127.0.0.1";

#[derive(Debug, Clone)]
struct Prop {
    name: String,
    params: Vec<(String, String)>,
    /// As the parser gives it: TEXT values unescaped, text lists (CATEGORIES) raw.
    value: String,
}

impl Prop {
    fn param(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Debug, Clone)]
struct Comp {
    name: String,
    props: Vec<Prop>,
    comps: Vec<Comp>,
}

impl Comp {
    fn from_parsed(c: &icalendar::parser::Component<'_>) -> Comp {
        Comp {
            name: c.name.as_str().to_string(),
            props: c
                .properties
                .iter()
                .map(|p| Prop {
                    name: p.name.as_str().to_string(),
                    params: p
                        .params
                        .iter()
                        .map(|q| {
                            (
                                q.key.as_str().to_string(),
                                q.val
                                    .as_ref()
                                    .map(|v| v.as_str().to_string())
                                    .unwrap_or_default(),
                            )
                        })
                        .collect(),
                    value: p.val.as_str().to_string(),
                })
                .collect(),
            comps: c.components.iter().map(Comp::from_parsed).collect(),
        }
    }

    fn all(&self, name: &str) -> Vec<&Prop> {
        self.props.iter().filter(|p| p.name == name).collect()
    }

    fn prop(&self, name: &str) -> Option<&Prop> {
        let all = self.all(name);
        assert!(all.len() <= 1, "{name} more than once in {}", self.name);
        all.first().copied()
    }

    fn value(&self, name: &str) -> Option<&str> {
        self.prop(name).map(|p| p.value.as_str())
    }

    fn need(&self, name: &str) -> &str {
        self.value(name)
            .unwrap_or_else(|| panic!("{} has no {name}: {self:?}", self.name))
    }

    fn children(&self, name: &str) -> Vec<&Comp> {
        self.comps.iter().filter(|c| c.name == name).collect()
    }

    fn uid(&self) -> &str {
        self.need("UID")
    }
}

/// A parsed feed: the VCALENDAR and the unfolded text.
struct Feed {
    cal: Comp,
    unfolded: String,
}

impl Feed {
    fn events(&self) -> Vec<&Comp> {
        self.cal.children("VEVENT")
    }

    fn event(&self, id: u64) -> &Comp {
        let uid = uid(id);
        let found: Vec<&Comp> = self
            .events()
            .into_iter()
            .filter(|e| e.uid() == uid)
            .collect();
        assert_eq!(found.len(), 1, "one VEVENT with UID {uid}");
        found[0]
    }

    fn has(&self, id: u64) -> bool {
        let uid = uid(id);
        self.events().iter().any(|e| e.uid() == uid)
    }

    fn ids(&self) -> Vec<u64> {
        self.events().iter().map(|e| id_of_uid(e.uid())).collect()
    }

    /// The unfolded content line of `name` in the VEVENT of `id`, as written (still escaped).
    fn raw_line(&self, id: u64, name: &str) -> String {
        let block = self.raw_event(id);
        block
            .split("\r\n")
            .find(|l| {
                l.strip_prefix(name)
                    .is_some_and(|rest| rest.starts_with(':') || rest.starts_with(';'))
            })
            .unwrap_or_else(|| panic!("no {name} line in {block}"))
            .to_string()
    }

    /// `BEGIN:VEVENT` … `END:VEVENT\r\n` of `id`, unfolded.
    fn raw_event(&self, id: u64) -> String {
        let marker = format!("\r\nUID:{}\r\n", uid(id));
        let at = self
            .unfolded
            .find(&marker)
            .unwrap_or_else(|| panic!("no {marker:?}"));
        let begin = self.unfolded[..at + 2].rfind("BEGIN:VEVENT\r\n").unwrap();
        let end = at + self.unfolded[at..].find("END:VEVENT\r\n").unwrap() + 12;
        self.unfolded[begin..end].to_string()
    }
}

fn uid(id: u64) -> String {
    format!("{id}@{HOST}")
}

fn id_of_uid(uid: &str) -> u64 {
    uid.strip_suffix(&format!("@{HOST}"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("UID {uid:?} is not ID@{HOST}"))
}

/// Checks the raw bytes (UTF-8, CRLF only, at most 75 octets a physical line, folds that
/// begin with one space and split no character) and parses them.
fn parse_feed(body: &[u8]) -> Feed {
    let text = std::str::from_utf8(body).expect("feed is UTF-8");
    assert!(text.ends_with("\r\n"), "feed ends with CRLF");
    for (n, line) in text[..text.len() - 2].split("\r\n").enumerate() {
        assert!(
            !line.contains('\n') && !line.contains('\r'),
            "bare CR or LF in {line:?}"
        );
        assert!(
            line.len() <= 75,
            "physical line of {} octets: {line:?}",
            line.len()
        );
        assert!(!line.is_empty(), "empty line in the feed");
        assert!(
            n > 0 || !line.starts_with(' '),
            "the feed starts with a continuation"
        );
    }
    // The body is valid UTF-8, which a fold inside a character would have broken.
    let unfolded = text.replace("\r\n ", "");
    let cal = {
        let roots = icalendar::parser::read_calendar_simple(&unfolded)
            .unwrap_or_else(|e| panic!("unparsable feed ({e:?}):\n{unfolded}"));
        assert_eq!(roots.len(), 1, "one root component");
        Comp::from_parsed(&roots[0])
    };
    assert_eq!(cal.name, "VCALENDAR");
    Feed { cal, unfolded }
}

/// A 200 calendar answer, parsed.
fn feed_of(r: &Resp) -> Feed {
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(r.header("content-type"), Some(ICAL_CT), "{}", r.describe());
    parse_feed(&r.body)
}

/// Splits a raw text list on unescaped commas and unescapes each item.
fn text_list(raw: &str) -> Vec<String> {
    let mut items = vec![String::new()];
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('n') | Some('N') => items.last_mut().unwrap().push('\n'),
                Some(o) => items.last_mut().unwrap().push(o),
                None => panic!("trailing backslash in {raw:?}"),
            },
            ',' => items.push(String::new()),
            c => items.last_mut().unwrap().push(c),
        }
    }
    items
}

// ---------------------------------------------------------------------------------------------
// Server helpers
// ---------------------------------------------------------------------------------------------

fn start() -> Server {
    Server::start_with_users(&[ADMIN])
}

fn write(s: &Server, method: &str, path: &str, body: Value, status: u16) -> Value {
    s.write(method, &format!("{NS}{path}"), &ADMIN, &body, status)
}

fn create_event(s: &Server, body: Value) -> Value {
    write(s, "POST", "/events", body, 201)
}

fn id(v: &Value) -> u64 {
    v["id"].as_u64().unwrap_or_else(|| panic!("no id in {v}"))
}

/// `GET /events/{id}` as the administrator.
fn event_json(s: &Server, id: u64) -> Value {
    s.get_ok(&format!("{NS}/events/{id}"), Some(&ADMIN))
}

/// `YYYY-MM-DD HH:MM:SS` of the JSON.
fn json_time(v: &Value) -> NaiveDateTime {
    let s = v.as_str().unwrap_or_else(|| panic!("not a date-time: {v}"));
    NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S")
        .unwrap_or_else(|e| panic!("date-time {s:?}: {e}"))
}

fn utc_form(t: NaiveDateTime) -> String {
    t.format("%Y%m%dT%H%M%SZ").to_string()
}

fn local_form(t: NaiveDateTime) -> String {
    t.format("%Y%m%dT%H%M%S").to_string()
}

fn ical_time(s: &str) -> NaiveDateTime {
    NaiveDateTime::parse_from_str(s.trim_end_matches('Z'), "%Y%m%dT%H%M%S")
        .unwrap_or_else(|e| panic!("iCalendar date-time {s:?}: {e}"))
}

fn ical_date(s: &str) -> NaiveDate {
    NaiveDate::parse_from_str(s, "%Y%m%d").unwrap_or_else(|e| panic!("iCalendar date {s:?}: {e}"))
}

/// The least SEQUENCE: seconds from 2020-01-01T00:00:00Z (an event's revision starts there).
fn sequence_of(modified_utc: NaiveDateTime) -> i64 {
    modified_utc.and_utc().timestamp() - 1_577_836_800
}

/// The properties every VEVENT takes from the event's JSON.
fn assert_common(e: &Comp, ev: &Value) {
    let modified = json_time(&ev["modified_utc"]);
    assert_eq!(e.uid(), uid(id(ev)));
    assert_eq!(e.need("DTSTAMP"), utc_form(modified), "DTSTAMP");
    assert_eq!(e.need("LAST-MODIFIED"), utc_form(modified), "LAST-MODIFIED");
    assert_eq!(
        e.need("CREATED"),
        utc_form(json_time(&ev["date_utc"])),
        "CREATED"
    );
    let sequence: i64 = e.need("SEQUENCE").parse().expect("SEQUENCE is an integer");
    assert!(
        sequence >= sequence_of(modified),
        "SEQUENCE {sequence} below the second of its modification"
    );
    assert_eq!(e.need("URL"), ev["url"].as_str().unwrap(), "URL");
    let status = match ev["status"].as_str().unwrap() {
        "draft" | "pending" => "TENTATIVE",
        _ => "CONFIRMED",
    };
    assert_eq!(e.need("STATUS"), status, "STATUS of {}", ev["status"]);
    if ev["status"] == "private" {
        assert_eq!(e.value("CLASS"), Some("PRIVATE"));
    } else {
        assert_eq!(e.value("CLASS"), None, "CLASS only on private events");
    }
}

// ---------------------------------------------------------------------------------------------
// 1. Fields
// ---------------------------------------------------------------------------------------------

#[test]
fn every_property_of_a_vevent_comes_from_the_json_representation() {
    let s = start();
    let venue = write(
        &s,
        "POST",
        "/venues",
        json!({"venue": "Casa do Fado; Alfama", "address": "Rua das Flores, 12",
               "city": "Lisboa", "province": "Lisboa", "zip": "1200-195",
               "country": "Portugal", "geo_lat": 38.7107, "geo_lng": -9.1427}),
        201,
    );
    let with_email = write(
        &s,
        "POST",
        "/organizers",
        json!({"organizer": "Ana Moura", "email": "ana@example.org"}),
        201,
    );
    let without_email = write(
        &s,
        "POST",
        "/organizers",
        json!({"organizer": "Clube de Jazz"}),
        201,
    );
    let music = write(
        &s,
        "POST",
        "/categories",
        json!({"name": "Música, ao vivo"}),
        201,
    );
    let nights = write(&s, "POST", "/categories", json!({"name": "Noites"}), 201);

    let title = "Noite de Fado; Guitarra Portuguesa, Voz e Poesia — São João, \
                 Coração de Lisboa ✓ edição especial";
    assert!(title.len() > 75);
    let lisbon = create_event(
        &s,
        json!({
            "title": title,
            "description": "<p>Fado &amp; jazz; guitars, voices.</p>\n\
                            <p>Second <strong>paragraph</strong> &#8211; Ana&#39;s choice.</p>",
            "start_date": "2027-07-10 21:30:00", "end_date": "2027-07-10 23:45:00",
            "timezone": "Europe/Lisbon",
            "image": "https://images.example.org/fado.jpg",
            "venue": id(&venue),
            "organizer": [id(&with_email), id(&without_email)],
            "categories": [id(&nights), id(&music)],
        }),
    );
    let all_day = create_event(
        &s,
        json!({"title": "Feira do Livro", "all_day": true, "timezone": "Europe/Lisbon",
               "start_date": "2027-08-14 00:00:00", "end_date": "2027-08-16 00:00:00"}),
    );
    let in_utc = create_event(
        &s,
        json!({"title": "UTC meetup", "timezone": "UTC",
               "start_date": "2027-09-01 18:00:00", "end_date": "2027-09-01 20:00:00"}),
    );
    let in_offset = create_event(
        &s,
        json!({"title": "Offset meetup", "timezone": "UTC+5:30",
               "start_date": "2027-09-02 10:00:00", "end_date": "2027-09-02 11:30:00"}),
    );
    let private = create_event(
        &s,
        json!({"title": "Private rehearsal", "status": "private", "timezone": "UTC",
               "start_date": "2027-09-03 10:00:00", "end_date": "2027-09-03 11:00:00"}),
    );
    let draft = create_event(
        &s,
        json!({"title": "Draft idea", "status": "draft", "timezone": "UTC",
               "start_date": "2027-09-04 10:00:00", "end_date": "2027-09-04 11:00:00"}),
    );

    let query = "start_date=2027-01-01&end_date=2027-12-31";
    let r = s.get_as(&format!("{NS}/events.ics?{query}"), &ADMIN);
    let feed = feed_of(&r);
    assert_eq!(r.header("x-cal-total"), Some("6"), "{}", r.describe());
    assert!(!r.has("x-cal-truncated"), "{}", r.describe());

    // The calendar's own properties, then the zones, then the events.
    let cal = &feed.cal;
    assert_eq!(cal.need("VERSION"), "2.0");
    assert!(
        cal.need("PRODID").starts_with("-//"),
        "{}",
        cal.need("PRODID")
    );
    assert_eq!(cal.need("CALSCALE"), "GREGORIAN");
    assert_eq!(cal.need("METHOD"), "PUBLISH");
    assert!(!cal.need("X-WR-CALNAME").is_empty());
    let refresh = cal.prop("REFRESH-INTERVAL").expect("REFRESH-INTERVAL");
    assert_eq!(refresh.value, "PT1H");
    assert_eq!(refresh.param("VALUE"), Some("DURATION"));
    assert_eq!(cal.need("X-PUBLISHED-TTL"), "PT1H");
    let names: Vec<&str> = cal.comps.iter().map(|c| c.name.as_str()).collect();
    let first_event = names.iter().position(|n| *n == "VEVENT").unwrap();
    assert!(
        names[..first_event].iter().all(|n| *n == "VTIMEZONE")
            && names[first_event..].iter().all(|n| *n == "VEVENT"),
        "VTIMEZONEs, then VEVENTs: {names:?}"
    );
    let zones: Vec<&str> = cal
        .children("VTIMEZONE")
        .iter()
        .map(|z| z.need("TZID"))
        .collect();
    assert_eq!(
        zones,
        vec!["Europe/Lisbon"],
        "one VTIMEZONE per named zone used"
    );

    // The list's order.
    let list = s.get_as(&format!("{NS}/events?{query}&per_page=50"), &ADMIN);
    assert_eq!(list.status, 200, "{}", list.describe());
    let list_ids: Vec<u64> = list.json()["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(id)
        .collect();
    assert_eq!(feed.ids(), list_ids, "VEVENTs in the list's order");

    for created in [&lisbon, &all_day, &in_utc, &in_offset, &private, &draft] {
        let ev = event_json(&s, id(created));
        assert_common(feed.event(id(&ev)), &ev);
    }

    // The Lisbon event, property by property.
    let ev = event_json(&s, id(&lisbon));
    let e = feed.event(id(&ev));
    assert_eq!(e.need("SUMMARY"), title);
    let summary_raw = feed.raw_line(id(&ev), "SUMMARY");
    assert!(
        summary_raw.contains("Fado\\; Guitarra Portuguesa\\, Voz"),
        "escaped: {summary_raw}"
    );
    let folded = String::from_utf8(r.body.clone())
        .unwrap()
        .split("\r\n")
        .skip_while(|l| !l.starts_with("SUMMARY:Noite"))
        .skip(1)
        .take_while(|l| l.starts_with(' '))
        .count();
    assert!(folded >= 1, "the long SUMMARY is folded");
    assert_eq!(
        e.need("DESCRIPTION"),
        "Fado & jazz; guitars, voices.\n\nSecond paragraph – Ana's choice."
    );
    assert!(feed
        .raw_line(id(&ev), "DESCRIPTION")
        .contains("Fado & jazz\\; guitars\\, voices.\\n\\nSecond"));
    let start = e.prop("DTSTART").unwrap();
    assert_eq!(start.param("TZID"), Some("Europe/Lisbon"));
    assert_eq!(start.value, local_form(json_time(&ev["start_date"])));
    assert_eq!(start.value, "20270710T213000");
    let end = e.prop("DTEND").unwrap();
    assert_eq!(end.param("TZID"), Some("Europe/Lisbon"));
    assert_eq!(end.value, local_form(json_time(&ev["end_date"])));
    let v = &ev["venue"];
    let place: Vec<&str> = [
        "venue",
        "address",
        "city",
        "stateprovince",
        "zip",
        "country",
    ]
    .iter()
    .filter_map(|k| v[*k].as_str())
    .filter(|p| !p.is_empty())
    .collect();
    assert_eq!(place.len(), 6, "every address part: {v}");
    assert_eq!(e.need("LOCATION"), place.join(", "));
    assert_eq!(
        e.need("LOCATION"),
        "Casa do Fado; Alfama, Rua das Flores, 12, Lisboa, Lisboa, 1200-195, Portugal"
    );
    assert!(feed
        .raw_line(id(&ev), "LOCATION")
        .contains("Casa do Fado\\; Alfama\\, Rua das Flores\\, 12\\, Lisboa"));
    let geo: Vec<f64> = e
        .need("GEO")
        .split(';')
        .map(|x| x.parse().expect("GEO float"))
        .collect();
    assert_eq!(
        geo,
        vec![
            v["geo_lat"].as_f64().unwrap(),
            v["geo_lng"].as_f64().unwrap()
        ]
    );
    let categories: Vec<String> = ev["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(categories, ["Música, ao vivo", "Noites"]);
    let raw_categories = feed.raw_line(id(&ev), "CATEGORIES");
    assert_eq!(raw_categories, "CATEGORIES:Música\\, ao vivo,Noites");
    assert_eq!(text_list(e.need("CATEGORIES")), categories);
    let organizers = e.all("ORGANIZER");
    assert_eq!(organizers.len(), 2, "{e:?}");
    assert_eq!(organizers[0].param("CN"), Some("Ana Moura"));
    assert_eq!(organizers[0].value, "mailto:ana@example.org");
    assert_eq!(organizers[1].param("CN"), Some("Clube de Jazz"));
    assert_eq!(
        organizers[1].value,
        without_email["url"].as_str().unwrap(),
        "an organizer without email: its public page"
    );
    assert!(feed
        .raw_line(id(&ev), "ORGANIZER")
        .starts_with("ORGANIZER;CN=\"Ana Moura\":mailto:"));
    assert_eq!(e.need("ATTACH"), ev["image"]["url"].as_str().unwrap());
    assert_eq!(e.need("ATTACH"), "https://images.example.org/fado.jpg");

    // All day: dates, the end exclusive.
    let ev = event_json(&s, id(&all_day));
    let e = feed.event(id(&ev));
    let start = e.prop("DTSTART").unwrap();
    assert_eq!(start.param("VALUE"), Some("DATE"));
    assert_eq!(start.param("TZID"), None);
    assert_eq!(start.value, "20270814");
    assert_eq!(ical_date(&start.value), json_time(&ev["start_date"]).date());
    let end = e.prop("DTEND").unwrap();
    assert_eq!(end.param("VALUE"), Some("DATE"));
    assert_eq!(end.value, "20270817");
    assert_eq!(
        ical_date(&end.value),
        json_time(&ev["end_date"]).date() + CDur::days(1)
    );

    // UTC and fixed offsets: UTC forms, no TZID.
    for created in [&in_utc, &in_offset, &private, &draft] {
        let ev = event_json(&s, id(created));
        let e = feed.event(id(&ev));
        for (name, key) in [("DTSTART", "utc_start_date"), ("DTEND", "utc_end_date")] {
            let p = e.prop(name).unwrap();
            assert!(p.params.is_empty(), "{name} without parameters: {p:?}");
            assert_eq!(
                p.value,
                utc_form(json_time(&ev[key])),
                "{name} of {}",
                ev["title"]
            );
        }
        assert_eq!(e.need("SUMMARY"), ev["title"].as_str().unwrap());
        for absent in [
            "DESCRIPTION",
            "LOCATION",
            "GEO",
            "CATEGORIES",
            "ORGANIZER",
            "ATTACH",
        ] {
            assert!(e.all(absent).is_empty(), "no {absent} in {e:?}");
        }
    }
    assert_eq!(
        feed.event(id(&in_offset)).need("DTSTART"),
        "20270902T043000Z"
    );

    // The single-event routes write the same VEVENT.
    for (path, who) in [
        (format!("{NS}/events/{}.ics", id(&lisbon)), None),
        (
            format!(
                "{NS}/events/by-slug/{}.ics",
                lisbon["slug"].as_str().unwrap()
            ),
            None,
        ),
        (format!("{NS}/events/{}.ics", id(&private)), Some(&ADMIN)),
    ] {
        let r = match who {
            Some(u) => s.get_as(&path, u),
            None => s.get(&path),
        };
        let single = feed_of(&r);
        let only = single.ids();
        assert_eq!(only.len(), 1, "{path}");
        assert_eq!(single.raw_event(only[0]), feed.raw_event(only[0]), "{path}");
        assert_eq!(single.cal.need("VERSION"), "2.0");
    }
}

#[test]
fn descriptions_become_plain_text_paragraphs() {
    let s = start();
    let cases = [
        ("<p>One &amp; two</p><p>Three</p>", "One & two\n\nThree"),
        ("<p>One</p>\n<p>Two <em>words</em></p>", "One\n\nTwo words"),
        ("First line\n\nSecond &lt;3", "First line\n\nSecond <3"),
        ("<p>Line<br>break</p>", "Line\nbreak"),
    ];
    let mut ids = Vec::new();
    for (n, (html, _)) in cases.iter().enumerate() {
        let ev = create_event(
            &s,
            json!({"title": format!("Text {n}"), "description": html,
                   "start_date": format!("2027-05-0{} 10:00:00", n + 1),
                   "end_date": format!("2027-05-0{} 11:00:00", n + 1)}),
        );
        ids.push(id(&ev));
    }
    let feed = feed_of(&s.get(&format!(
        "{NS}/events.ics?start_date=2027-05-01&end_date=2027-05-31"
    )));
    // Every case is checked before the verdict, so that one failure shows them all.
    let wrong: Vec<String> = cases
        .iter()
        .enumerate()
        .filter_map(|(n, (html, text))| {
            let got = feed.event(ids[n]).need("DESCRIPTION");
            (got != *text).then(|| format!("{html:?} gave {got:?}, not {text:?}"))
        })
        .collect();
    assert!(wrong.is_empty(), "DESCRIPTION:\n{}", wrong.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// 2. Zone rules
// ---------------------------------------------------------------------------------------------

/// `+HHMM` or `+HHMMSS` in seconds.
fn utc_offset(s: &str) -> i64 {
    let (sign, digits) = match s.as_bytes()[0] {
        b'+' => (1, &s[1..]),
        b'-' => (-1, &s[1..]),
        _ => panic!("UTC offset {s:?}"),
    };
    assert!(
        (digits.len() == 4 || digits.len() == 6) && digits.bytes().all(|b| b.is_ascii_digit()),
        "UTC offset {s:?}"
    );
    let n = |r: std::ops::Range<usize>| digits[r].parse::<i64>().unwrap();
    let secs = if digits.len() == 6 { n(4..6) } else { 0 };
    sign * (n(0..2) * 3600 + n(2..4) * 60 + secs)
}

fn weekday(code: &str) -> Weekday {
    match code {
        "MO" => Weekday::Mon,
        "TU" => Weekday::Tue,
        "WE" => Weekday::Wed,
        "TH" => Weekday::Thu,
        "FR" => Weekday::Fri,
        "SA" => Weekday::Sat,
        "SU" => Weekday::Sun,
        _ => panic!("weekday {code:?}"),
    }
}

/// A YEARLY rule of RFC 5545, section 3.3.10, limited to what a VTIMEZONE needs.
struct Rule {
    months: Vec<u32>,
    /// (ordinal, weekday); ordinal 0 = every such weekday.
    days: Vec<(i32, Weekday)>,
    month_days: Vec<i32>,
    until: Option<NaiveDateTime>,
}

fn parse_rule(text: &str) -> Rule {
    let mut rule = Rule {
        months: vec![],
        days: vec![],
        month_days: vec![],
        until: None,
    };
    let mut yearly = false;
    for part in text.split(';') {
        let (k, v) = part
            .split_once('=')
            .unwrap_or_else(|| panic!("rule part {part:?} in {text}"));
        match k {
            "FREQ" => {
                assert_eq!(v, "YEARLY", "only yearly rules: {text}");
                yearly = true;
            }
            "BYMONTH" => rule.months = v.split(',').map(|m| m.parse().unwrap()).collect(),
            "BYMONTHDAY" => rule.month_days = v.split(',').map(|d| d.parse().unwrap()).collect(),
            "BYDAY" => {
                rule.days = v
                    .split(',')
                    .map(|d| {
                        let (n, w) = d.split_at(d.len() - 2);
                        let n = if n.is_empty() {
                            0
                        } else {
                            n.trim_start_matches('+').parse().unwrap()
                        };
                        (n, weekday(w))
                    })
                    .collect()
            }
            "UNTIL" => {
                assert!(v.ends_with('Z'), "UNTIL of a VTIMEZONE rule is UTC: {text}");
                rule.until = Some(ical_time(v));
            }
            _ => panic!("unsupported rule part {k} in {text}"),
        }
    }
    assert!(yearly, "FREQ=YEARLY in {text}");
    assert!(!rule.months.is_empty(), "BYMONTH in {text}");
    assert!(
        !rule.days.is_empty() || !rule.month_days.is_empty(),
        "BYDAY or BYMONTHDAY in {text}"
    );
    rule
}

/// The days of `month` of `year` the rule picks.
fn rule_days(rule: &Rule, year: i32, month: u32) -> Vec<NaiveDate> {
    let first = NaiveDate::from_ymd_opt(year, month, 1).unwrap();
    let next = if month == 12 {
        NaiveDate::from_ymd_opt(year + 1, 1, 1).unwrap()
    } else {
        NaiveDate::from_ymd_opt(year, month + 1, 1).unwrap()
    };
    let days: Vec<NaiveDate> = first.iter_days().take_while(|d| *d < next).collect();
    let len = days.len() as i32;
    days.iter()
        .copied()
        .filter(|d| {
            let day = d.day() as i32;
            rule.month_days.is_empty()
                || rule
                    .month_days
                    .iter()
                    .any(|m| *m == day || (*m < 0 && len + 1 + m == day))
        })
        .filter(|d| {
            rule.days.is_empty()
                || rule.days.iter().any(|(n, w)| {
                    if d.weekday() != *w {
                        return false;
                    }
                    let same: Vec<&NaiveDate> = days.iter().filter(|x| x.weekday() == *w).collect();
                    let at = same.iter().position(|x| *x == d).unwrap() as i32;
                    *n == 0 || *n == at + 1 || *n == at - same.len() as i32
                })
        })
        .collect()
}

/// One change of offset: its UTC instant, its local time in the new offset, the new offset.
#[derive(Debug, Clone, Copy)]
struct Onset {
    utc: NaiveDateTime,
    local_to: NaiveDateTime,
    to: i64,
}

/// Every onset of a VTIMEZONE's observances up to the end of `last_year`.
fn onsets(zone: &Comp, last_year: i32) -> Vec<Onset> {
    assert!(
        !zone.props.iter().any(|p| p.name == "RDATE"),
        "no RDATE: {zone:?}"
    );
    let mut out = Vec::new();
    for obs in &zone.comps {
        assert!(
            obs.name == "STANDARD" || obs.name == "DAYLIGHT",
            "observance {}",
            obs.name
        );
        assert!(obs.all("RDATE").is_empty(), "RDATE in {obs:?}");
        for p in &obs.props {
            assert!(
                [
                    "DTSTART",
                    "TZOFFSETFROM",
                    "TZOFFSETTO",
                    "RRULE",
                    "TZNAME",
                    "COMMENT"
                ]
                .contains(&p.name.as_str()),
                "unsupported observance property {} in {obs:?}",
                p.name
            );
        }
        let dtstart = obs.prop("DTSTART").expect("observance DTSTART");
        assert!(
            dtstart.params.is_empty() && !dtstart.value.ends_with('Z'),
            "observance DTSTART is local time: {dtstart:?}"
        );
        let first = ical_time(&dtstart.value);
        let from = utc_offset(obs.need("TZOFFSETFROM"));
        let to = utc_offset(obs.need("TZOFFSETTO"));
        let mut locals = vec![first];
        if let Some(text) = obs.value("RRULE") {
            let rule = parse_rule(text);
            for year in first.year()..=last_year {
                for month in &rule.months {
                    for day in rule_days(&rule, year, *month) {
                        let local = day.and_time(first.time());
                        let utc = local - CDur::seconds(from);
                        if local > first && rule.until.is_none_or(|u| utc <= u) {
                            locals.push(local);
                        }
                    }
                }
            }
        }
        for local in locals {
            let utc = local - CDur::seconds(from);
            out.push(Onset {
                utc,
                local_to: utc + CDur::seconds(to),
                to,
            });
        }
    }
    out.sort_by_key(|o| o.utc);
    out
}

/// A wall time of the zone in UTC, read as ICAL.js reads it: the offset of the latest onset
/// whose local time (in its new offset) is not after the wall time.
fn wall_to_utc(onsets: &[Onset], wall: NaiveDateTime, tzid: &str) -> NaiveDateTime {
    let onset = onsets
        .iter()
        .filter(|o| o.local_to <= wall)
        .max_by_key(|o| o.utc)
        .unwrap_or_else(|| panic!("no observance of {tzid} starts before {wall}"));
    wall - CDur::seconds(onset.to)
}

#[test]
fn zone_definitions_alone_give_every_instant_of_the_json() {
    let s = start();
    let cases = [
        ("Europe/Lisbon", "2027-03-28 00:30"),
        ("Europe/Lisbon", "2027-03-28 02:30"),
        ("Europe/Lisbon", "2027-10-31 00:30"),
        ("Europe/Lisbon", "2027-10-31 03:30"),
        ("America/Sao_Paulo", "2018-11-03 23:30"),
        ("America/Sao_Paulo", "2018-11-04 01:30"),
        ("America/Sao_Paulo", "2019-02-16 22:30"),
        ("America/Sao_Paulo", "2019-02-17 00:30"),
        ("America/Sao_Paulo", "2020-01-15 12:00"),
        ("Australia/Sydney", "2027-04-04 01:30"),
        ("Australia/Sydney", "2027-04-04 03:30"),
        ("Australia/Sydney", "2027-10-03 01:30"),
        ("Australia/Sydney", "2027-10-03 03:30"),
        ("America/New_York", "2027-03-14 01:30"),
        ("America/New_York", "2027-03-14 03:30"),
    ];
    let mut created = Vec::new();
    for (zone, at) in cases {
        let start =
            NaiveDateTime::parse_from_str(&format!("{at}:00"), "%Y-%m-%d %H:%M:%S").unwrap();
        let end = start + CDur::minutes(20);
        let ev = create_event(
            &s,
            json!({"title": format!("{zone} {at}"), "timezone": zone,
                   "start_date": start.format("%Y-%m-%d %H:%M:%S").to_string(),
                   "end_date": end.format("%Y-%m-%d %H:%M:%S").to_string()}),
        );
        created.push(id(&ev));
    }
    let feed = feed_of(&s.get(&format!(
        "{NS}/events.ics?start_date=2018-01-01&end_date=2028-12-31"
    )));
    assert!(
        !feed.unfolded.contains("\r\nRDATE"),
        "no RDATE anywhere in the feed"
    );
    let mut zones: HashMap<String, Vec<Onset>> = HashMap::new();
    for z in feed.cal.children("VTIMEZONE") {
        let tzid = z.need("TZID").to_string();
        assert!(!zones.contains_key(&tzid), "one VTIMEZONE for {tzid}");
        zones.insert(tzid, onsets(z, 2030));
    }
    let used: BTreeSet<&str> = cases.iter().map(|(z, _)| *z).collect();
    assert_eq!(
        zones.keys().map(String::as_str).collect::<BTreeSet<_>>(),
        used
    );
    assert_eq!(feed.events().len(), cases.len());
    for id in created {
        let ev = event_json(&s, id);
        let e = feed.event(id);
        for (name, local, utc) in [
            ("DTSTART", "start_date", "utc_start_date"),
            ("DTEND", "end_date", "utc_end_date"),
        ] {
            let p = e.prop(name).unwrap();
            let tzid = p.param("TZID").unwrap_or_else(|| panic!("TZID on {p:?}"));
            assert_eq!(tzid, ev["timezone"].as_str().unwrap());
            let wall = ical_time(&p.value);
            assert_eq!(wall, json_time(&ev[local]), "{name} of {}", ev["title"]);
            assert_eq!(
                wall_to_utc(&zones[tzid], wall, tzid),
                json_time(&ev[utc]),
                "{name} {} of {} read from the VTIMEZONE",
                p.value,
                ev["title"]
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 3. Updates
// ---------------------------------------------------------------------------------------------

#[test]
fn an_update_raises_sequence_and_keeps_the_uid() {
    let s = start();
    let ev = create_event(
        &s,
        json!({"title": "Before", "slug": "before-slug",
               "start_date": "2027-06-01 10:00:00", "end_date": "2027-06-01 11:00:00"}),
    );
    let id = id(&ev);
    let path = format!("{NS}/events.ics?start_date=2027-06-01&end_date=2027-06-30");
    let before = feed_of(&s.get(&path));
    let old = before.event(id);
    assert_eq!(old.need("SUMMARY"), "Before");

    std::thread::sleep(Duration::from_millis(1100));
    let updated = write(
        &s,
        "PATCH",
        &format!("/events/{id}"),
        json!({"title": "After", "slug": "after-slug"}),
        200,
    );
    // Read right after the write's answer.
    let after = feed_of(&s.get(&path));
    let new = after.event(id);
    assert_eq!(new.uid(), old.uid(), "UID survives title and slug changes");
    assert_eq!(new.need("SUMMARY"), "After");
    assert_eq!(new.need("URL"), updated["url"].as_str().unwrap());
    assert!(
        new.need("URL").contains("after-slug"),
        "{}",
        new.need("URL")
    );
    let seq = |e: &Comp| e.need("SEQUENCE").parse::<i64>().unwrap();
    assert!(seq(new) > seq(old), "SEQUENCE {} → {}", seq(old), seq(new));
    assert!(
        ical_time(new.need("LAST-MODIFIED")) > ical_time(old.need("LAST-MODIFIED")),
        "LAST-MODIFIED moves"
    );
    assert_common(new, &event_json(&s, id));
    // Updates within one second: SEQUENCE is a revision count, not a clock.
    let mut last = seq(new);
    for title in ["Again", "And again"] {
        write(
            &s,
            "PATCH",
            &format!("/events/{id}"),
            json!({ "title": title }),
            200,
        );
        let feed = feed_of(&s.get(&path));
        let now = seq(feed.event(id));
        let floor = sequence_of(json_time(&event_json(&s, id)["modified_utc"]));
        assert_eq!(
            now,
            (last + 1).max(floor),
            "SEQUENCE {last} → {now} after {title:?}"
        );
        last = now;
    }

    // The slug route follows the slug; the old slug answers as its JSON twin.
    let by_slug = feed_of(&s.get(&format!("{NS}/events/by-slug/after-slug.ics")));
    assert_eq!(by_slug.ids(), vec![id]);
    let ics = s.get(&format!("{NS}/events/by-slug/before-slug.ics"));
    let json = s.get(&format!("{NS}/events/by-slug/before-slug"));
    assert_eq!(ics.status, json.status, "{}", ics.describe());
    assert_eq!(ics.body, json.body);
}

// ---------------------------------------------------------------------------------------------
// 4. Caching
// ---------------------------------------------------------------------------------------------

fn http_date(s: &str) -> chrono::DateTime<chrono::FixedOffset> {
    chrono::DateTime::parse_from_rfc2822(s).unwrap_or_else(|e| panic!("HTTP date {s:?}: {e}"))
}

#[test]
fn feeds_revalidate_and_compress() {
    let s = start();
    for n in 1..=4 {
        create_event(
            &s,
            json!({"title": format!("Cached {n}"),
                   "description": "A long description of the evening. ".repeat(12),
                   "start_date": format!("2027-04-0{n} 19:00:00"),
                   "end_date": format!("2027-04-0{n} 21:00:00")}),
        );
    }
    let path = format!("{NS}/events.ics?start_date=2027-04-01&end_date=2027-04-30");
    let first = s.get(&path);
    feed_of(&first);
    assert!(first.body.len() >= 1024, "{} bytes", first.body.len());
    let etag = assert_etag(&first);
    let last_modified = first
        .header("last-modified")
        .unwrap_or_else(|| panic!("Last-Modified; {}", first.describe()))
        .to_string();
    let lm = http_date(&last_modified);

    let r = s.req("GET", &path).header("If-None-Match", &etag).send();
    assert_eq!(r.status, 304, "{}", r.describe());
    assert!(r.body.is_empty());
    assert_eq!(r.header("etag"), Some(etag.as_str()));

    let r = s
        .req("GET", &path)
        .header("If-Modified-Since", &last_modified)
        .send();
    assert_eq!(
        r.status,
        304,
        "If-Modified-Since = Last-Modified; {}",
        r.describe()
    );
    assert!(r.body.is_empty());

    let later = (lm + CDur::hours(1))
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    let r = s
        .req("GET", &path)
        .header("If-Modified-Since", &later)
        .send();
    assert_eq!(
        r.status,
        304,
        "If-Modified-Since after Last-Modified; {}",
        r.describe()
    );

    let older = (lm - CDur::days(1))
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    let r = s
        .req("GET", &path)
        .header("If-Modified-Since", &older)
        .send();
    assert_eq!(
        r.status,
        200,
        "If-Modified-Since before Last-Modified; {}",
        r.describe()
    );
    assert_eq!(r.body, first.body);

    // If-None-Match decides when both are sent.
    let r = s
        .req("GET", &path)
        .header("If-None-Match", "W/\"0000000000000000\"")
        .header("If-Modified-Since", &last_modified)
        .send();
    assert_eq!(r.status, 200, "{}", r.describe());

    // gzip on request, decompressing to the same body.
    let r = s.req("GET", &path).header("Accept-Encoding", "gzip").send();
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(
        r.header("content-encoding"),
        Some("gzip"),
        "{}",
        r.describe()
    );
    assert_eq!(r.header("content-type"), Some(ICAL_CT));
    assert_eq!(gunzip(&r.body), first.body);
    assert_eq!(r.header("etag"), Some(etag.as_str()));

    // After a write the old tag no longer matches.
    create_event(
        &s,
        json!({"title": "Cached 5", "start_date": "2027-04-09 19:00:00",
               "end_date": "2027-04-09 21:00:00"}),
    );
    let r = s.req("GET", &path).header("If-None-Match", &etag).send();
    assert_eq!(r.status, 200, "{}", r.describe());
    let new_tag = assert_etag(&r);
    assert_ne!(new_tag, etag);
    assert_eq!(feed_of(&r).events().len(), 5);
    let new_lm = http_date(r.header("last-modified").unwrap());
    assert!(new_lm >= lm, "Last-Modified does not go back");
}

// ---------------------------------------------------------------------------------------------
// 5. Visibility
// ---------------------------------------------------------------------------------------------

#[test]
fn feeds_show_what_the_caller_may_read() {
    let s = start();
    let mk = |title: &str, extra: Value| {
        let mut body = json!({"title": title, "description": format!("Secret of {title}"),
                              "start_date": "2027-03-10 10:00:00",
                              "end_date": "2027-03-10 11:00:00"});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        id(&create_event(&s, body))
    };
    let public = mk("Public", json!({}));
    let draft = mk("Draft", json!({"status": "draft"}));
    let private = mk("Private", json!({"status": "private"}));
    let protected = mk("Protected", json!({"password": "right"}));
    let path = format!("{NS}/events.ics?start_date=2027-03-01&end_date=2027-03-31");

    let r = s.get(&path);
    let anonymous = feed_of(&r);
    let mut ids = anonymous.ids();
    ids.sort();
    assert_eq!(ids, vec![public, protected], "published events only");
    assert_eq!(r.header("x-cal-total"), Some("2"));
    assert_eq!(
        anonymous.event(public).value("DESCRIPTION"),
        Some("Secret of Public")
    );
    let locked = anonymous.event(protected);
    assert_eq!(locked.value("DESCRIPTION"), None, "{locked:?}");
    assert_eq!(locked.need("SUMMARY"), "Protected");

    let admin = feed_of(&s.get_as(&path, &ADMIN));
    let mut ids = admin.ids();
    ids.sort();
    assert_eq!(ids, vec![public, draft, private, protected]);
    assert_eq!(
        admin.event(protected).value("DESCRIPTION"),
        Some("Secret of Protected")
    );

    let unlocked = feed_of(&s.get(&format!("{path}&password=right")));
    assert_eq!(
        unlocked.event(protected).value("DESCRIPTION"),
        Some("Secret of Protected")
    );
    assert!(!unlocked.has(draft) && !unlocked.has(private));

    // The single-event route answers as its JSON twin.
    let ics = s.get(&format!("{NS}/events/{protected}.ics"));
    let json = s.get(&format!("{NS}/events/{protected}"));
    assert_error(&json, 403, "event-password-protected");
    assert_error(&ics, 403, "event-password-protected");
    assert_eq!(ics.body, json.body);
    let one = feed_of(&s.get(&format!("{NS}/events/{protected}.ics?password=right")));
    assert_eq!(one.ids(), vec![protected]);
    assert_eq!(
        one.event(protected).value("DESCRIPTION"),
        Some("Secret of Protected")
    );
    for hidden in [draft, private] {
        let ics = s.get(&format!("{NS}/events/{hidden}.ics"));
        let json = s.get(&format!("{NS}/events/{hidden}"));
        assert_eq!(
            (ics.status, &ics.body),
            (json.status, &json.body),
            "{}",
            ics.describe()
        );
        assert!(ics.status >= 400, "{}", ics.describe());
    }
}

/// A locked event shows in the feed no more than the JSON list shows of it (docs/api.md,
/// "Password-protected events": venue, organizers, categories and image blanked).
#[test]
fn a_locked_event_in_a_feed_hides_what_the_list_hides() {
    let s = start();
    let locked = id(&create_event(
        &s,
        json!({"title": "Locked", "password": "right", "description": "Secret",
               "start_date": "2027-03-10 10:00:00", "end_date": "2027-03-10 11:00:00",
               "venue": {"venue": "Hidden Place", "address": "1 Secret Street",
                         "geo_lat": 38.7, "geo_lng": -9.1},
               "organizer": {"organizer": "Hidden Host", "email": "host@example.org"},
               "categories": ["Hidden category"],
               "image": "https://images.example.org/hidden.jpg"}),
    ));
    let window = "start_date=2027-03-01&end_date=2027-03-31";
    let list = s.get(&format!("{NS}/events?{window}")).json();
    let item = &list["events"][0];
    assert_eq!(id(item), locked);
    assert_eq!(item["venue"], json!([]), "{item}");
    assert_eq!(item["organizer"], json!([]), "{item}");
    assert_eq!(item["categories"], json!([]), "{item}");
    assert_eq!(item["image"], json!(false), "{item}");

    let feed = feed_of(&s.get(&format!("{NS}/events.ics?{window}")));
    let e = feed.event(locked);
    let shown: Vec<String> = [
        "DESCRIPTION",
        "LOCATION",
        "GEO",
        "ORGANIZER",
        "CATEGORIES",
        "ATTACH",
    ]
    .iter()
    .flat_map(|name| e.all(name))
    .map(|p| format!("{}:{}", p.name, p.value))
    .collect();
    assert!(
        shown.is_empty(),
        "a locked event's feed entry shows {shown:?}"
    );
    // Unlocked, all of it is there.
    let open = feed_of(&s.get(&format!("{NS}/events.ics?{window}&password=right")));
    let e = open.event(locked);
    for name in [
        "DESCRIPTION",
        "LOCATION",
        "GEO",
        "ORGANIZER",
        "CATEGORIES",
        "ATTACH",
    ] {
        assert_eq!(e.all(name).len(), 1, "{name} once when unlocked: {e:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// 6. Errors
// ---------------------------------------------------------------------------------------------

#[test]
fn feed_errors_are_the_json_routes_errors() {
    let s = start();
    let venue = write(&s, "POST", "/venues", json!({"venue": "Not an event"}), 201);
    // The valid feed is kept first: an invalid request is not taken for it, though the values
    // left once the invalid ones are set aside spell it.
    assert_eq!(s.get(&format!("{NS}/events.ics")).status, 200);
    for query in [
        "start_date=not-a-date",
        "status=",
        "categories=999999",
        "per_page=0",
        "geoloc=true&geoloc_lat=200&geoloc_lng=0",
        "geoloc_lat=200",
        "status=draft",
        "orderby=relevance",
        "page=0&start_date=yesterday-ish",
    ] {
        let json = s.get(&format!("{NS}/events?{query}"));
        let ics = s.get(&format!("{NS}/events.ics?{query}"));
        assert_eq!(json.status, 400, "{query}: {}", json.describe());
        assert_error(&ics, 400, json.json()["code"].as_str().unwrap());
        assert_eq!(ics.body, json.body, "{query}");
    }
    for (ics, json) in [
        ("/events/999999.ics", "/events/999999"),
        ("/events/by-slug/nope.ics", "/events/by-slug/nope"),
        (
            &*format!("/events/{}.ics", id(&venue)),
            &*format!("/events/{}", id(&venue)),
        ),
    ] {
        let a = s.get(&format!("{NS}{ics}"));
        let b = s.get(&format!("{NS}{json}"));
        assert!(b.status >= 400, "{}", b.describe());
        assert_error(&a, b.status, b.json()["code"].as_str().unwrap());
        assert_eq!(a.body, b.body, "{ics}");
    }
}

// ---------------------------------------------------------------------------------------------
// 7. Routes, links and documentation
// ---------------------------------------------------------------------------------------------

/// `(url, parameters)` of each entry of a Link header.
fn link_entries(value: &str) -> Vec<(String, String)> {
    value
        .split(", <")
        .map(|entry| {
            let entry = entry.trim_start_matches('<');
            let (url, params) = entry.split_once('>').expect("<url>");
            (
                url.to_string(),
                params.trim_start_matches(';').trim().to_string(),
            )
        })
        .collect()
}

#[test]
fn feeds_are_linked_documented_and_served_per_language() {
    let s = start();
    let cat = write(&s, "POST", "/categories", json!({"name": "Linked"}), 201);
    let english = create_event(
        &s,
        json!({"title": "English night", "categories": [id(&cat)],
               "start_date": "2027-02-10 20:00:00", "end_date": "2027-02-10 22:00:00"}),
    );
    let spanish = write(
        &s,
        "POST",
        "/events",
        json!({"title": "Noche española", "translation_language": "es",
               "start_date": "2027-02-11 20:00:00", "end_date": "2027-02-11 22:00:00"}),
        201,
    );

    // Language segment.
    let window = "start_date=2027-02-01&end_date=2027-02-28";
    let es = feed_of(&s.get(&format!("/es{NS}/events.ics?{window}")));
    assert_eq!(es.ids(), vec![id(&spanish)]);
    let es_json = s.get(&format!("/es{NS}/events/{}", id(&spanish))).json();
    assert_eq!(
        es.event(id(&spanish)).need("URL"),
        es_json["url"].as_str().unwrap()
    );
    let en = feed_of(&s.get(&format!("{NS}/events.ics?{window}")));
    assert_eq!(en.ids(), vec![id(&english)]);
    let one = feed_of(&s.get(&format!("/es{NS}/events/{}.ics", id(&spanish))));
    assert_eq!(one.ids(), vec![id(&spanish)]);

    // The list links its feed: the parameters as sent, without page, per_page and password.
    let cid = id(&cat);
    let list = s.get(&format!(
        "{NS}/events?{window}&categories={cid}&per_page=1&page=1&password=x"
    ));
    assert_eq!(list.status, 200, "{}", list.describe());
    let links = link_entries(list.header("link").expect("Link"));
    let feeds: Vec<&(String, String)> = links
        .iter()
        .filter(|(_, p)| p == "rel=\"alternate\"; type=\"text/calendar\"")
        .collect();
    assert_eq!(feeds.len(), 1, "{links:?}");
    let url = &feeds[0].0;
    assert!(
        url.starts_with(&format!("{}{NS}/events.ics?", s.public)),
        "{url}"
    );
    let mut want = vec![
        ("categories".to_string(), cid.to_string()),
        ("end_date".to_string(), "2027-02-28".to_string()),
        ("start_date".to_string(), "2027-02-01".to_string()),
    ];
    want.sort();
    let mut got = query_params(url);
    got.sort();
    assert_eq!(got, want, "{url}");
    // Following it gives every event of the list.
    let linked = s.get(url.strip_prefix(&s.public).unwrap());
    assert_eq!(feed_of(&linked).ids(), vec![id(&english)]);
    assert_eq!(linked.header("x-cal-total"), list.header("x-cal-total"));

    // Under a language segment the link keeps it.
    let list = s.get(&format!("/es{NS}/events?{window}"));
    let links = link_entries(list.header("link").expect("Link"));
    assert!(
        links.iter().any(|(u, p)| p.contains("text/calendar")
            && u.starts_with(&format!("{}/es{NS}/events.ics?", s.public))),
        "{links:?}"
    );

    // /doc documents the three routes; the namespace index does not list them.
    let doc = s.get(&format!("{NS}/doc")).json();
    for path in [
        "/events.ics",
        "/events/{id}.ics",
        "/events/by-slug/{slug}.ics",
    ] {
        let op = &doc["paths"][path]["get"];
        assert!(op.is_object(), "{path} in /doc");
        assert!(
            op["responses"]["200"]["content"]["text/calendar"].is_object(),
            "{path}: {}",
            op["responses"]["200"]
        );
    }
    let index = s.get(NS).json();
    let routes = index["routes"].as_object().expect("routes");
    assert!(routes.contains_key(&format!("{NS}/events")));
    for key in routes.keys() {
        assert!(!key.contains("ics"), "{key} in the namespace index");
    }
}

// ---------------------------------------------------------------------------------------------
// 8. Truncation
// ---------------------------------------------------------------------------------------------

#[test]
fn a_feed_keeps_the_first_five_thousand_events_in_list_order() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    // The generator spreads events over three languages: 15,000 give the English list
    // more than 5,000 in the window.
    let out = almanac(["generate", "--events", "15000", "--seed", "7", "--data-dir"])
        .arg(dir.to_str().unwrap())
        .timeout(300)
        .run();
    assert_eq!(out.code, Some(0), "{}", out.describe());
    let s = Server::start(serve_cmd(&dir), None, "serve");

    let query = "start_date=2026-01-01&end_date=2029-12-31";
    let started = Instant::now();
    let r = s.get(&format!("{NS}/events.ics?{query}"));
    let took = started.elapsed();
    let feed = feed_of(&r);
    assert_eq!(
        r.header("x-cal-truncated"),
        Some("true"),
        "{}",
        r.describe()
    );
    let total: u64 = r.header("x-cal-total").unwrap().parse().unwrap();
    assert!(total > 5000, "X-Cal-Total {total}");
    let list = s.get(&format!("{NS}/events?{query}&per_page=50"));
    assert_eq!(list.header("x-cal-total"), Some(total.to_string().as_str()));
    let events = feed.events();
    assert_eq!(events.len(), 5000, "feed of {total} matches ({took:?})");

    // The list's order (local start, then ID): the feed holds the list's first hundred pages
    // of fifty, in order. (A start written inside a daylight-saving gap is shown at the wall
    // clock it moved to, so DTSTART alone need not be ascending.)
    let ids = feed.ids();
    assert_eq!(
        ids.iter().collect::<BTreeSet<_>>().len(),
        5000,
        "UIDs unique"
    );
    let mut listed: Vec<u64> = Vec::with_capacity(5000);
    for page in 1..=100 {
        let r = s.get(&format!("{NS}/events?{query}&per_page=50&page={page}"));
        assert_eq!(r.status, 200, "{}", r.describe());
        listed.extend(r.json()["events"].as_array().unwrap().iter().map(id));
    }
    assert_eq!(
        ids, listed,
        "the feed's events are the list's, in its order"
    );
}
