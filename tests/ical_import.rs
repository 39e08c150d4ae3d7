//! `almanac import --from` an iCalendar feed (docs/operations.md, "Moving in"): feeds in the
//! shapes Google Calendar, Outlook and hand-written calendars take, served over HTTP by the
//! test; series, their changed and cancelled instances, zones by IANA and Windows names and
//! Google's X-WR-TIMEZONE, venues, organizers and categories; a second run that changes
//! nothing; a mirror run; refusals. Each instance of the series is checked against what
//! Python's recurring-ical-events (tests/python) expands from the same feed.

mod common;

use common::python::{python_dir, python_env};
use common::*;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// An HTTP server on loopback that answers each request (its head, lower-cased) with what
/// `answer` writes; its address.
fn serve(answer: impl Fn(&str) -> String + Send + 'static) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = [0u8; 4096];
            let n = stream.read(&mut request).unwrap_or(0);
            let request = String::from_utf8_lossy(&request[..n]).to_ascii_lowercase();
            let _ = stream.write_all(answer(&request).as_bytes());
        }
    });
    address
}

/// Answers every GET with the current feed (`text/calendar`) and its `ETag`, or `304 Not
/// Modified` when asked with that `ETag`.
fn serve_feed(feed: Arc<Mutex<String>>) -> String {
    let address = serve(move |request| {
        let body = feed.lock().unwrap().clone();
        let etag = format!(
            "\"{}\"",
            body.len() * 31 + body.bytes().map(usize::from).sum::<usize>()
        );
        if request.contains(&format!("if-none-match: {etag}")) {
            return "HTTP/1.1 304 Not Modified\r\nConnection: close\r\n\r\n".to_string();
        }
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/calendar; charset=utf-8\r\nETag: {etag}\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    });
    format!("http://{address}/calendar.ics")
}

const GOOGLE: &str = "BEGIN:VCALENDAR\r
PRODID:-//Google Inc//Google Calendar 70.9054//EN\r
VERSION:2.0\r
X-WR-CALNAME:Jazz club\r
X-WR-TIMEZONE:Europe/Lisbon\r
BEGIN:VTIMEZONE\r
TZID:Europe/Lisbon\r
BEGIN:STANDARD\r
TZOFFSETFROM:+0100\r
TZOFFSETTO:+0000\r
DTSTART:19701025T020000\r
RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r
END:STANDARD\r
BEGIN:DAYLIGHT\r
TZOFFSETFROM:+0000\r
TZOFFSETTO:+0100\r
DTSTART:19700329T010000\r
RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r
END:DAYLIGHT\r
END:VTIMEZONE\r
BEGIN:VEVENT\r
DTSTART;TZID=Europe/Lisbon:20270301T190000\r
DTEND;TZID=Europe/Lisbon:20270301T210000\r
RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=6\r
EXDATE;TZID=Europe/Lisbon:20270315T190000\r
DTSTAMP:20270101T000000Z\r
UID:jam@google.com\r
SUMMARY:Monday jam\r
DESCRIPTION:Bring your instrument.\\n\\nAll levels <welcome>.\r
LOCATION:Hot Clube\\, Lisboa\r
GEO:38.7139;-9.1453\r
ORGANIZER;CN=Ana Lima:mailto:ana@example.com\r
CATEGORIES:Jazz,Live music\r
URL:https://example.com/jam\r
SEQUENCE:0\r
END:VEVENT\r
BEGIN:VEVENT\r
DTSTART;TZID=Europe/Lisbon:20270322T200000\r
DTEND;TZID=Europe/Lisbon:20270322T220000\r
RECURRENCE-ID;TZID=Europe/Lisbon:20270322T190000\r
DTSTAMP:20270101T000000Z\r
UID:jam@google.com\r
SUMMARY:Monday jam (late)\r
SEQUENCE:1\r
END:VEVENT\r
BEGIN:VEVENT\r
DTSTART;TZID=Europe/Lisbon:20270329T190000\r
DTEND;TZID=Europe/Lisbon:20270329T210000\r
RECURRENCE-ID;TZID=Europe/Lisbon:20270329T190000\r
DTSTAMP:20270101T000000Z\r
UID:jam@google.com\r
SUMMARY:Monday jam\r
STATUS:CANCELLED\r
END:VEVENT\r
BEGIN:VEVENT\r
DTSTART:20270420T170000Z\r
DTEND:20270420T180000Z\r
DTSTAMP:20270101T000000Z\r
UID:talk@google.com\r
SUMMARY:Talk in UTC\r
END:VEVENT\r
BEGIN:VEVENT\r
DTSTART;VALUE=DATE:20270410\r
DTEND;VALUE=DATE:20270412\r
DTSTAMP:20270101T000000Z\r
UID:fair@example.com\r
SUMMARY:Book fair\r
X-ALT-DESC;FMTTYPE=text/html:<p>Two <b>days</b><script>steal()</script></p>\r
END:VEVENT\r
BEGIN:VEVENT\r
DTSTART;TZID=W. Europe Standard Time:20270405T090000\r
DTEND;TZID=W. Europe Standard Time:20270405T100000\r
DTSTAMP:20270101T000000Z\r
UID:040000008200E00074C5B7101A82E008@outlook\r
SUMMARY:Board meeting\r
CLASS:PRIVATE\r
X-MICROSOFT-CDO-BUSYSTATUS:BUSY\r
END:VEVENT\r
BEGIN:VEVENT\r
DTSTAMP:20270101T000000Z\r
UID:nostart@example.com\r
SUMMARY:No start\r
END:VEVENT\r
BEGIN:VEVENT\r
DTSTART;TZID=Mars/Olympus:20270405T090000\r
DTSTAMP:20270101T000000Z\r
UID:mars@example.com\r
SUMMARY:On Mars\r
END:VEVENT\r
END:VCALENDAR\r
";

fn import(dir: &Path, from: &str, extra: &[&str]) -> Output {
    almanac(["import", "--from", from, "--data-dir"])
        .arg(dir.to_str().unwrap())
        .args(extra)
        .run()
}

/// The events of the calendar (every status), by title, from a server over `dir`.
fn events(dir: &Path) -> Vec<Value> {
    let srv = Server::start(serve_cmd(dir), None, "serve");
    let mut all = Vec::new();
    let mut page = 1;
    loop {
        let r = srv.get_as(
            &format!(
                "{NS}/events?start_date=2020-01-01&end_date=2030-01-01&per_page=50&page={page}\
                 &status=publish,draft,private,pending"
            ),
            &ADMIN,
        );
        if r.status != 200 {
            break;
        }
        let v = r.json();
        let items = v["events"].as_array().unwrap().clone();
        let done = items.len() < 50;
        all.extend(items);
        if done {
            break;
        }
        page += 1;
    }
    drop(srv);
    all
}

fn titled<'a>(events: &'a [Value], title: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["title"] == title).collect()
}

/// recurring-ical-events' instances of each UID of `feed` (UTC starts).
fn python_instances(feed: &str) -> serde_json::Map<String, Value> {
    let mut python = std::process::Command::new(python_env());
    python
        .arg(python_dir().join("instances.py"))
        .arg("2030-01-01T00:00:00")
        .current_dir(python_dir())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = python.spawn().expect("the venv's python runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(feed.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "instances.py: {out:?}");
    serde_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_object()
        .unwrap()
        .clone()
}

#[test]
fn an_icalendar_feed_is_copied_updated_and_mirrored() {
    let (_tmp, dir) = fresh_data_dir(&[ADMIN]);
    let feed = Arc::new(Mutex::new(GOOGLE.to_string()));
    let url = serve_feed(feed.clone());
    // An organizer people made: the feed's event links it as it is.
    let srv = Server::start(serve_cmd(&dir), None, "serve");
    let ana = srv.create(
        &ADMIN,
        &format!("{NS}/organizers"),
        &serde_json::json!({"organizer": "Ana Lima", "email": "ana@people.example"}),
    );
    drop(srv);

    let out = import(&dir, &url, &["--category", "Imported"]);
    assert_eq!(
        out.code,
        Some(1),
        "two components are refused: {}",
        out.describe()
    );
    assert_eq!(
        out.stdout.trim(),
        "added 4, updated 0, unchanged 0, trashed 0, refused 2",
        "{}",
        out.describe()
    );
    assert!(
        out.stderr.contains("nostart@example.com") && out.stderr.contains("DTSTART"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("Mars/Olympus"), "{}", out.stderr);

    let all = events(&dir);
    // The series: its dates but the excluded and the cancelled one, one of them changed.
    let jam: Vec<&Value> = all
        .iter()
        .filter(|e| e["title"].as_str().unwrap().starts_with("Monday jam"))
        .collect();
    let starts: Vec<(&str, &str)> = jam
        .iter()
        .map(|e| {
            (
                e["start_date"].as_str().unwrap(),
                e["title"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        starts,
        [
            ("2027-03-01 19:00:00", "Monday jam"),
            ("2027-03-08 19:00:00", "Monday jam"),
            ("2027-03-22 20:00:00", "Monday jam (late)"),
            ("2027-04-05 19:00:00", "Monday jam"),
        ],
        "{starts:?}"
    );
    let first = jam[0];
    assert_eq!(first["timezone"], "Europe/Lisbon");
    assert_eq!(first["venue"]["venue"], "Hot Clube, Lisboa", "{first}");
    assert_eq!(first["organizer"][0]["id"], ana["id"]);
    assert_eq!(first["organizer"][0]["email"], "ana@people.example");
    assert_eq!(first["venue"]["geo_lat"].as_f64(), Some(38.7139), "{first}");
    assert_eq!(first["website"], "https://example.com/jam");
    let categories: Vec<&str> = first["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(categories, ["Imported", "Jazz", "Live music"], "{first}");
    assert!(
        first["description"]
            .as_str()
            .unwrap()
            .contains("&lt;welcome&gt;"),
        "{first}"
    );
    // Every instance is where an independent expansion of the feed puts it.
    // (The components almanac refuses are left out: Python's reading stops at them.)
    let refused_from = GOOGLE
        .find("BEGIN:VEVENT\r\nDTSTAMP:20270101T000000Z\r\nUID:nostart")
        .unwrap();
    let readable = format!("{}END:VCALENDAR\r\n", &GOOGLE[..refused_from]);
    let python = python_instances(&readable);
    let mut expected: Vec<String> = python["jam@google.com"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        // recurring-ical-events lists cancelled instances too (STATUS is its caller's to
        // read): the one the feed cancels, on March 29 at 19:00 in Lisbon, is not copied.
        .filter(|start| start != "2027-03-29 18:00:00")
        .collect();
    let mut ours: Vec<String> = jam
        .iter()
        .map(|e| e["utc_start_date"].as_str().unwrap().to_string())
        .collect();
    expected.sort();
    ours.sort();
    assert_eq!(ours, expected);
    // Google's UTC times in the calendar's zone; Outlook's Windows zone; a private event.
    let talk = titled(&all, "Talk in UTC")[0];
    assert_eq!(
        (talk["start_date"].as_str(), talk["timezone"].as_str()),
        (Some("2027-04-20 18:00:00"), Some("Europe/Lisbon"))
    );
    let board = titled(&all, "Board meeting")[0];
    assert_eq!(board["timezone"], "Europe/Berlin");
    assert_eq!(board["start_date"], "2027-04-05 09:00:00");
    assert_eq!(board["status"], "private");
    let fair = titled(&all, "Book fair")[0];
    assert_eq!(fair["all_day"], true);
    assert_eq!(fair["end_date"], "2027-04-11 23:59:59");
    let description = fair["description"].as_str().unwrap();
    assert!(
        description.contains("<b>days</b>") && !description.contains("script"),
        "{fair}"
    );

    // Again: the feed says it has not changed (its ETag, kept in the store), so it is not
    // read again, and nothing changes.
    let out = import(&dir, &url, &["--category", "Imported"]);
    assert_eq!(
        out.stdout.trim(),
        "added 0, updated 0, unchanged 4, trashed 0, refused 0",
        "{}",
        out.describe()
    );
    assert_eq!(out.code, Some(0), "{}", out.describe());
    assert_eq!(events(&dir).len(), all.len());

    // The source changes: an instance is edited, an event cancelled, another removed.
    let changed = GOOGLE
        .replace(
            "SUMMARY:Monday jam (late)",
            "SUMMARY:Monday jam (very late)",
        )
        .replace("CLASS:PRIVATE\r\n", "CLASS:PRIVATE\r\nSTATUS:CANCELLED\r\n");
    let start = changed.find("BEGIN:VEVENT\r\nDTSTART:20270420").unwrap();
    let end = start + changed[start..].find("END:VEVENT\r\n").unwrap() + "END:VEVENT\r\n".len();
    let changed = format!("{}{}", &changed[..start], &changed[end..]);
    // …and the cancellation of March 29 is withdrawn: that date follows its series again.
    let start = changed
        .find("BEGIN:VEVENT\r\nDTSTART;TZID=Europe/Lisbon:20270329T190000")
        .unwrap();
    let end = start + changed[start..].find("END:VEVENT\r\n").unwrap() + "END:VEVENT\r\n".len();
    let changed = format!("{}{}", &changed[..start], &changed[end..]);
    *feed.lock().unwrap() = changed;
    let out = import(&dir, &url, &["--category", "Imported", "--mirror"]);
    assert_eq!(
        out.stdout.trim(),
        "added 0, updated 1, unchanged 1, trashed 2, refused 2",
        "{}",
        out.describe()
    );
    let after = events(&dir);
    assert_eq!(titled(&after, "Monday jam (very late)").len(), 1);
    assert!(titled(&after, "Talk in UTC").is_empty());
    assert!(titled(&after, "Board meeting").is_empty());
    let dates: Vec<&str> = titled(&after, "Monday jam")
        .iter()
        .map(|e| e["start_date"].as_str().unwrap())
        .collect();
    assert_eq!(
        dates,
        [
            "2027-03-01 19:00:00",
            "2027-03-08 19:00:00",
            "2027-03-29 19:00:00",
            "2027-04-05 19:00:00"
        ]
    );

    // A feed that cannot be read changes nothing.
    *feed.lock().unwrap() = "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:x\r\n".to_string();
    let out = import(&dir, &url, &["--mirror"]);
    assert_eq!(out.code, Some(1), "{}", out.describe());
    assert!(out.stderr.contains("not valid iCalendar"), "{}", out.stderr);
    assert_eq!(events(&dir).len(), after.len());
}

#[test]
fn a_feed_file_too_large_or_not_icalendar_is_refused_whole() {
    let (tmp, dir) = fresh_data_dir(&[ADMIN]);
    let big = tmp.path().join("big.ics");
    let mut file = std::fs::File::create(&big).unwrap();
    file.write_all(b"BEGIN:VCALENDAR\r\n").unwrap();
    let line = format!("X-FILL:{}\r\n", "x".repeat(1000));
    for _ in 0..(65 * 1024) {
        file.write_all(line.as_bytes()).unwrap();
    }
    drop(file);
    let out = import(&dir, big.to_str().unwrap(), &[]);
    assert_eq!(out.code, Some(1), "{}", out.describe());
    assert!(out.stderr.contains("larger than 64 MB"), "{}", out.stderr);
    let text = tmp.path().join("notes.txt");
    std::fs::write(&text, "hello").unwrap();
    let out = import(&dir, text.to_str().unwrap(), &[]);
    assert_eq!(out.code, Some(1), "{}", out.describe());
    assert!(
        out.stderr.contains("is not an iCalendar file"),
        "{}",
        out.stderr
    );
    // A file feed is read like a served one.
    let feed = tmp.path().join("feed.ics");
    std::fs::write(&feed, GOOGLE).unwrap();
    let out = import(&dir, feed.to_str().unwrap(), &["--status", "draft"]);
    assert_eq!(
        out.stdout.trim(),
        "added 4, updated 0, unchanged 0, trashed 0, refused 2",
        "{}",
        out.describe()
    );
    let all = events(&dir);
    assert_eq!(titled(&all, "Book fair")[0]["status"], "draft");
}

#[test]
fn the_server_keeps_a_mirror_of_a_feed() {
    let (_tmp, dir) = fresh_data_dir(&[ADMIN]);
    let feed = Arc::new(Mutex::new(GOOGLE.to_string()));
    let url = serve_feed(feed);
    let srv = Server::start(
        serve_cmd(&dir).args(["--mirror", &format!("{url},every=1h,category=Mirrored")]),
        None,
        "serve --mirror",
    );
    // The first run starts with the server.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let r = srv.get(&format!("{NS}/events?start_date=2027-01-01&search=jam"));
        if r.json()["total"].as_u64().unwrap_or(0) > 0 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the mirror did not run: {}",
            srv.stderr_text()
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let listed = srv
        .get(&format!("{NS}/events?start_date=2027-01-01&per_page=50"))
        .json();
    assert!(listed["events"][0]["categories"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["name"] == "Mirrored"));
    // The feed is named by its scheme, host and a hash of the rest (an address may be secret).
    let metrics = srv.get_as("/metrics", &ADMIN).text();
    assert!(!metrics.contains("calendar.ics"), "{metrics}");
    let line = |name: &str, with: &str| {
        metrics
            .lines()
            .find(|l| {
                l.starts_with(name) && l.contains("feed=\"http://127.0.0.1/…#") && l.contains(with)
            })
            .unwrap_or_else(|| panic!("no {name}: {metrics}"))
            .to_string()
    };
    assert!(
        line("almanac_mirror_last_run_ok", "").ends_with(" 1"),
        "{metrics}"
    );
    assert!(
        line("almanac_mirror_last_run_records", "outcome=\"added\"").ends_with(" 4"),
        "{metrics}"
    );
    assert!(
        srv.stderr_text().contains("mirror run"),
        "{}",
        srv.stderr_text()
    );
}

/// A feed written by Python's icalendar library (as calendar tools write them): a weekly series
/// in New York with an excluded date and a moved instance, a Meetup-shaped event, and a rule
/// almanac refuses.
const WRITE_FEED: &str = r#"
import datetime, sys, zoneinfo
import icalendar
ny = zoneinfo.ZoneInfo("America/New_York")
cal = icalendar.Calendar()
cal.add("prodid", "-//test//icalendar//EN")
cal.add("version", "2.0")
series = icalendar.Event()
series.add("uid", "club@python.example")
series.add("summary", "Book club")
series.add("dtstart", datetime.datetime(2027, 3, 2, 18, 30, tzinfo=ny))
series.add("dtend", datetime.datetime(2027, 3, 2, 20, 0, tzinfo=ny))
series.add("rrule", {"freq": "weekly", "count": 8})
series.add("exdate", datetime.datetime(2027, 3, 16, 18, 30, tzinfo=ny))
series.add("location", "Library, 5th Avenue")
cal.add_component(series)
moved = icalendar.Event()
moved.add("uid", "club@python.example")
moved.add("recurrence-id", datetime.datetime(2027, 3, 23, 18, 30, tzinfo=ny))
moved.add("summary", "Book club (author visit)")
moved.add("dtstart", datetime.datetime(2027, 3, 24, 19, 0, tzinfo=ny))
moved.add("dtend", datetime.datetime(2027, 3, 24, 21, 0, tzinfo=ny))
cal.add_component(moved)
meetup = icalendar.Event()
meetup.add("uid", "event_301234567@meetup.com")
meetup.add("summary", "Rust meetup")
meetup.add("dtstart", datetime.datetime(2027, 4, 8, 18, 0, tzinfo=ny))
meetup.add("dtend", datetime.datetime(2027, 4, 8, 20, 0, tzinfo=ny))
meetup.add("url", "https://www.meetup.com/rust-nyc/events/301234567/")
meetup.add("location", "Tech Hub (100 Main St, New York, NY)")
meetup.add("geo", (40.7128, -74.006))
meetup.add("x-original-url", "https://www.meetup.com/rust-nyc/events/301234567/")
cal.add_component(meetup)
fast = icalendar.Event()
fast.add("uid", "fast@python.example")
fast.add("summary", "Every second")
fast.add("dtstart", datetime.datetime(2027, 4, 1, 9, 0, tzinfo=ny))
fast.add("rrule", {"freq": "secondly", "count": 5})
cal.add_component(fast)
sys.stdout.buffer.write(cal.to_ical())
"#;

#[test]
fn a_feed_written_by_a_calendar_library_is_copied_instance_for_instance() {
    let out = std::process::Command::new(python_env())
        .args(["-c", WRITE_FEED])
        .output()
        .expect("the venv's python runs");
    assert!(out.status.success(), "{out:?}");
    let feed = String::from_utf8(out.stdout).unwrap();
    let (tmp, dir) = fresh_data_dir(&[ADMIN]);
    let path = tmp.path().join("club.ics");
    std::fs::write(&path, &feed).unwrap();
    let out = import(&dir, path.to_str().unwrap(), &[]);
    assert_eq!(
        out.stdout.trim(),
        "added 2, updated 0, unchanged 0, trashed 0, refused 1",
        "{}",
        out.describe()
    );
    assert!(out.stderr.contains("fast@python.example"), "{}", out.stderr);
    let all = events(&dir);
    let club: Vec<&Value> = all
        .iter()
        .filter(|e| e["title"].as_str().unwrap().starts_with("Book club"))
        .collect();
    assert_eq!(club[0]["timezone"], "America/New_York");
    assert_eq!(club[0]["venue"]["venue"], "Library, 5th Avenue");
    // (The refused rule is left out of the independent reading too.)
    let readable = {
        let start = feed
            .find("BEGIN:VEVENT\r\nSUMMARY:Every second")
            .unwrap_or_else(|| feed.rfind("BEGIN:VEVENT").unwrap());
        let end = start + feed[start..].find("END:VEVENT\r\n").unwrap() + "END:VEVENT\r\n".len();
        format!("{}{}", &feed[..start], &feed[end..])
    };
    assert!(!readable.contains("fast@python.example"), "{readable}");
    let python = python_instances(&readable);
    let mut expected: Vec<String> = python["club@python.example"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let mut ours: Vec<String> = club
        .iter()
        .map(|e| e["utc_start_date"].as_str().unwrap().to_string())
        .collect();
    expected.sort();
    ours.sort();
    assert_eq!(ours, expected);
    assert_eq!(ours.len(), 7, "eight dates, one excluded");
    assert!(
        ours.contains(&"2027-03-24 23:00:00".to_string()),
        "the moved one: {ours:?}"
    );
    let meetup = titled(&all, "Rust meetup")[0];
    assert_eq!(
        meetup["website"],
        "https://www.meetup.com/rust-nyc/events/301234567/"
    );
    assert_eq!(
        meetup["venue"]["venue"],
        "Tech Hub (100 Main St, New York, NY)"
    );
    assert_eq!(meetup["start_date"], "2027-04-08 18:00:00");
}

#[test]
fn on_a_cluster_nodes_take_turns_at_a_mirror_and_copy_each_event_once() {
    let pg = common::postgres::Postgres::start();
    let tmp = tempfile::tempdir().unwrap();
    let feed = Arc::new(Mutex::new(GOOGLE.to_string()));
    let url = serve_feed(feed);
    let mirror = format!("{url},every=1m");
    let start = |name: &str| {
        Server::start(
            serve_cmd(&tmp.path().join(name)).args(["--cluster", &pg.url(), "--mirror", &mirror]),
            None,
            "node",
        )
    };
    // Both nodes run the mirror as they start, one while the other may be at it.
    let a = start("a");
    let b = start("b");
    let count = |srv: &Server| {
        srv.get(&format!("{NS}/events?start_date=2027-01-01&per_page=50"))
            .json()["events"]
            .as_array()
            .map_or(0, Vec::len)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !(a.stderr_text().contains("mirror") && b.stderr_text().contains("mirror")) {
        assert!(
            std::time::Instant::now() < deadline,
            "{}\n{}",
            a.stderr_text(),
            b.stderr_text()
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    std::thread::sleep(std::time::Duration::from_secs(2));
    // Four series dates, the talk and the fair (the private meeting is not public).
    for srv in [&a, &b] {
        assert_eq!(count(srv), 6, "{}", srv.stderr_text());
    }
}

#[test]
fn a_feed_behind_http_basic_is_read_with_user() {
    let address = serve(|request| {
        // "reader:secret"
        if request.contains("authorization: basic cmvhzgvyonnly3jlda==") {
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/calendar\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{GOOGLE}",
                GOOGLE.len()
            )
        } else {
            "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic\r\nContent-Length: 0\r\n\
             Connection: close\r\n\r\n"
                .to_string()
        }
    });
    let url = format!("http://{address}/private.ics");
    let (_tmp, dir) = fresh_data_dir(&[ADMIN]);
    let out = import(&dir, &url, &[]);
    assert_eq!(out.code, Some(1), "{}", out.describe());
    assert!(out.stderr.contains("401"), "{}", out.stderr);
    let out = import(&dir, &url, &["--user", "reader:secret"]);
    assert_eq!(
        out.stdout.trim(),
        "added 4, updated 0, unchanged 0, trashed 0, refused 2",
        "{}",
        out.describe()
    );
}

#[test]
fn an_export_carries_the_mirror_so_that_a_restored_copy_updates_its_events() {
    let tmp = tempfile::tempdir().unwrap();
    let (original, restored) = (tmp.path().join("original"), tmp.path().join("restored"));
    let feed = Arc::new(Mutex::new(GOOGLE.to_string()));
    let url = serve_feed(feed.clone());
    let first = import(&original, &url, &["--mirror"]);
    assert!(
        first.stdout.starts_with("added 4, "),
        "{}",
        first.describe()
    );
    let dump = tmp.path().join("dump.jsonl");
    let out = almanac(["export", "--output"])
        .arg(dump.to_str().unwrap())
        .arg("--data-dir")
        .arg(original.to_str().unwrap())
        .run();
    assert_eq!(out.code, Some(0), "{}", out.describe());
    assert!(
        out.stderr.contains(", 5 feed mappings"),
        "{}",
        out.describe()
    );
    let out = almanac(["import"])
        .arg(dump.to_str().unwrap())
        .arg("--data-dir")
        .arg(restored.to_str().unwrap())
        .run();
    assert_eq!(out.code, Some(0), "{}", out.describe());
    assert!(
        out.stdout.contains(", 5 feed mappings"),
        "{}",
        out.describe()
    );
    // The restored copy knows what the feed's UIDs became: a changed feed updates them.
    *feed.lock().unwrap() = GOOGLE.replace("SUMMARY:Book fair", "SUMMARY:Book fair, moved");
    let again = import(&restored, &url, &["--mirror"]);
    assert_eq!(
        again.stdout.trim(),
        "added 0, updated 1, unchanged 3, trashed 0, refused 2",
        "{}",
        again.describe()
    );
    add_user(&restored, &ADMIN);
    let all = events(&restored);
    assert_eq!(titled(&all, "Book fair, moved").len(), 1, "{all:?}");
    assert!(titled(&all, "Book fair").is_empty());
}

#[test]
fn a_feed_answering_429_with_retry_after_is_waited_out() {
    let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = asked.clone();
    let address = serve(move |_| {
        if count.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            return "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nContent-Length: 0\r\n\
                    Connection: close\r\n\r\n"
                .to_string();
        }
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/calendar\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{GOOGLE}",
            GOOGLE.len()
        )
    });
    let (_tmp, dir) = fresh_data_dir(&[ADMIN]);
    let started = std::time::Instant::now();
    let out = import(
        &dir,
        &format!("http://{address}/feed.ics"),
        &["--retries", "2"],
    );
    assert!(out.stdout.starts_with("added 4, "), "{}", out.describe());
    assert!(started.elapsed() >= std::time::Duration::from_secs(1));
    assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 2);
}
