//! iCalendar (RFC 5545) representations of events, for calendar apps that subscribe to a
//! query (docs/api.md, "Calendar feeds"): one VEVENT per event, and a VTIMEZONE, written out
//! as rules, for each zone the events use.

mod zones;

use crate::http::links::Links;
use crate::http::render::public_url;
use crate::model::{Kind, Status};
use crate::service::events::EventView;
use crate::service::series::FeedRecord;
use crate::values::text::plain_text;
use crate::values::timezone::Zone;
use chrono::{DateTime, Datelike, Duration, NaiveDateTime, Utc};
use chrono_tz::Tz;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, LazyLock, Mutex};

/// The media type of every feed.
pub(crate) const MEDIA_TYPE: &str = "text/calendar; charset=utf-8";

/// How often subscribers are asked to refresh.
const REFRESH: &str = "PT1H";

/// Longest content line, in octets, before it is folded (RFC 5545, section 3.1).
const LINE_OCTETS: usize = 75;

/// One event of a feed: the VEVENT and what the feed needs to know about its zone.
#[derive(Clone)]
pub(crate) struct Entry {
    /// The VEVENT, folded, with CRLF line ends.
    pub text: Arc<str>,
    /// The named zone its times are written in and the UTC span they cover.
    zone: Option<(Tz, DateTime<Utc>, DateTime<Utc>)>,
}

/// The VEVENT of `event`; `masked` leaves out what the JSON lists blank for a protected event
/// the caller may not read: description, venue, organizers, categories and image.
/// `revision` is the event's (its SEQUENCE).
pub(crate) fn entry(
    record: &FeedRecord,
    view: &EventView,
    revision: u64,
    links: &Links,
    masked: bool,
) -> Entry {
    let (event, series, exception) = match record {
        FeedRecord::Event(e) => (e, None, None),
        FeedRecord::Series(e, series) => (e, Some(series), None),
        FeedRecord::Exception(e, exception) => (e, None, Some(exception)),
    };
    let mut out = Lines::default();
    let meta = &event.post;
    out.line("BEGIN:VEVENT");
    match exception {
        // An exception is a VEVENT of its series, named by the start the rule gave it.
        Some(exception) => {
            out.line(&format!("UID:{}@{}", exception.series, host(links)));
            let original = moment(exception.all_day, &exception.zone, exception.original, true);
            out.line(&format!("RECURRENCE-ID{original}"));
        }
        None => out.line(&format!("UID:{}@{}", meta.id, host(links))),
    }
    out.line(&format!("DTSTAMP:{}", utc(meta.modified_utc)));
    out.line(&format!("CREATED:{}", utc(meta.date_utc)));
    out.line(&format!("LAST-MODIFIED:{}", utc(meta.modified_utc)));
    // The event's revision: it grows with every write (SEQUENCE is a 32-bit integer).
    out.line(&format!("SEQUENCE:{}", revision.min(i32::MAX as u64)));
    out.line(&format!("SUMMARY:{}", text(&plain_text(&meta.title))));
    let description = plain_text(&meta.description);
    if !masked && !description.is_empty() {
        out.line(&format!("DESCRIPTION:{}", text(&description)));
    }
    out.line(&format!(
        "URL:{}",
        public_url(links, Kind::Event, meta, meta.status)
    ));
    let zone = Zone::parse(&event.timezone).unwrap_or(Zone::Utc);
    // A series' VEVENT may start at another occurrence than its record (see `SeriesFeed`).
    let (start_local, end_local) = match series {
        Some(series) => (
            series.start,
            series.start + (event.end_local - event.start_local),
        ),
        None => (event.start_local, event.end_local),
    };
    let start = zone.to_utc(start_local);
    let end = zone.to_utc(end_local).max(start);
    let mut named = None;
    if event.all_day {
        out.line(&format!("DTSTART;VALUE=DATE:{}", date(start_local)));
        let last_day = end_local.max(start_local);
        out.line(&format!(
            "DTEND;VALUE=DATE:{}",
            date(last_day + Duration::days(1))
        ));
    } else if let Zone::Named(tz) = zone {
        // A series' rule is written on its wall clocks, as it expands.
        let rule = series.is_some();
        for (name, local) in [("DTSTART", start_local), ("DTEND", end_local)] {
            out.line(&format!("{name}{}", moment(false, &zone, local, rule)));
        }
        named = Some((tz, start, end));
    } else {
        out.line(&format!("DTSTART:{}", utc(start.naive_utc())));
        out.line(&format!("DTEND:{}", utc(end.naive_utc())));
    }
    if let Some(series) = series {
        out.line(&series.rule);
        for local in &series.excluded {
            out.line(&format!(
                "EXDATE{}",
                moment(event.all_day, &zone, *local, true)
            ));
        }
        // The zone's definition covers every occurrence.
        if let Some((tz, from, to)) = named {
            let last = zone.to_utc(series.last) + (end - start);
            named = Some((tz, from, to.max(last)));
        }
    }
    if !masked {
        linked_lines(&mut out, view, links);
    }
    let status = match meta.status {
        Status::Draft | Status::Pending => "TENTATIVE",
        _ => "CONFIRMED",
    };
    out.line(&format!("STATUS:{status}"));
    if meta.status == Status::Private {
        out.line("CLASS:PRIVATE");
    }
    out.line("END:VEVENT");
    Entry {
        text: out.0.into(),
        zone: named,
    }
}

/// The value (with its parameters) of a DTSTART, DTEND or EXDATE at the wall clock `local`:
/// a date for an all-day event, a wall clock with TZID in a named zone, else UTC. An event's
/// own dates are written at the wall clock of their instant: a start written inside a
/// daylight-saving gap was moved past it, and every client must read it the same way (a
/// wall clock the zone repeats is written as the instant, in UTC). A
/// series' rule is written on its own wall clocks (`rule`): its instants in gaps are
/// excluded from it and written as events of their own (see `service::series`).
fn moment(all_day: bool, zone: &Zone, local: NaiveDateTime, rule: bool) -> String {
    match zone {
        _ if all_day => format!(";VALUE=DATE:{}", date(local)),
        Zone::Named(tz) if rule => format!(";TZID={}:{}", tz.name(), local_time(local)),
        // A repeated wall clock would be read as either of its instants: the instant itself.
        Zone::Named(tz) if zone.names_one_instant(zone.to_local(zone.to_utc(local))) => {
            let clock = zone.to_local(zone.to_utc(local));
            format!(";TZID={}:{}", tz.name(), local_time(clock))
        }
        _ => format!(":{}", utc(zone.to_utc(local).naive_utc())),
    }
}

/// The lines of what an event links: venue (as `LOCATION` and `GEO`), categories, organizers
/// and image.
fn linked_lines(out: &mut Lines, view: &EventView, links: &Links) {
    if let Some(venue) = view.venue.as_ref().map(|v| &v.record) {
        let place: Vec<&str> = [
            venue.post.title.as_str(),
            &venue.address,
            &venue.city,
            &venue.stateprovince,
            &venue.zip,
            &venue.country,
        ]
        .into_iter()
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .collect();
        if !place.is_empty() {
            out.line(&format!(
                "LOCATION:{}",
                text(&plain_text(&place.join(", ")))
            ));
        }
        if let Some(geo) = venue.geo {
            out.line(&format!("GEO:{};{}", geo.lat, geo.lng));
        }
    }
    if !view.categories.is_empty() {
        let names: Vec<String> = view.categories.iter().map(|c| text(&c.term.name)).collect();
        out.line(&format!("CATEGORIES:{}", names.join(",")));
    }
    for organizer in view.organizers.iter().map(|o| &o.record) {
        let name = plain_text(&organizer.post.title).replace('"', "'");
        let address = if organizer.email.trim().is_empty() {
            public_url(
                links,
                Kind::Organizer,
                &organizer.post,
                organizer.post.status,
            )
        } else {
            format!("mailto:{}", organizer.email.trim())
        };
        out.line(&format!("ORGANIZER;CN=\"{name}\":{address}"));
    }
    if let Some(image) = &view.image {
        out.line(&format!("ATTACH:{}", image.url));
    }
}

/// The whole calendar: its name, a VTIMEZONE per zone used, then the events in order.
pub(crate) fn calendar(name: &str, entries: &[Entry]) -> Vec<u8> {
    let mut spans: BTreeMap<&str, (Tz, DateTime<Utc>, DateTime<Utc>)> = BTreeMap::new();
    for (tz, start, end) in entries.iter().filter_map(|e| e.zone) {
        spans
            .entry(tz.name())
            .and_modify(|span| {
                span.1 = span.1.min(start);
                span.2 = span.2.max(end);
            })
            .or_insert((tz, start, end));
    }
    let mut out = Lines::default();
    out.line("BEGIN:VCALENDAR");
    out.line("VERSION:2.0");
    out.line(concat!(
        "PRODID:-//almanac//almanac ",
        env!("CARGO_PKG_VERSION"),
        "//EN"
    ));
    out.line("CALSCALE:GREGORIAN");
    out.line("METHOD:PUBLISH");
    out.line(&format!("X-WR-CALNAME:{}", text(name)));
    out.line(&format!("REFRESH-INTERVAL;VALUE=DURATION:{REFRESH}"));
    out.line(&format!("X-PUBLISHED-TTL:{REFRESH}"));
    for (tz, from, to) in spans.into_values() {
        for line in zone_definition(tz, from.year(), to.year()).iter() {
            out.line(line);
        }
    }
    let mut body = out.0.into_bytes();
    for entry in entries {
        body.extend_from_slice(entry.text.as_bytes());
    }
    body.extend_from_slice(b"END:VCALENDAR\r\n");
    body
}

/// When this node last saw the store change (or started). A feed can lose an event without any
/// of its remaining events changing, so its `Last-Modified` is never older than this, nor than
/// the start of the current day, when the default date window moves on.
pub struct ChangeClock {
    seen: Mutex<(u64, DateTime<Utc>)>,
}

impl ChangeClock {
    pub(crate) fn new(version: u64) -> ChangeClock {
        ChangeClock {
            seen: Mutex::new((version, Utc::now())),
        }
    }

    /// The last change as of store version `version`, read at `now`.
    pub(crate) fn last_change(&self, version: u64, now: DateTime<Utc>) -> DateTime<Utc> {
        let mut seen = self.seen.lock().expect("change clock lock");
        if seen.0 != version {
            *seen = (version, now);
        }
        let midnight = now
            .date_naive()
            .and_hms_opt(0, 0, 0)
            .expect("midnight is a valid time")
            .and_utc();
        seen.1.max(midnight)
    }
}

/// The VTIMEZONE lines of `tz` for the years `from..=to`, computed once per zone and years.
fn zone_definition(tz: Tz, from: i32, to: i32) -> Arc<Vec<String>> {
    /// Definitions kept at most: a few kilobytes each.
    const KEPT: usize = 1024;
    type Definitions = HashMap<(Tz, i32, i32), Arc<Vec<String>>>;
    static DEFINITIONS: LazyLock<Mutex<Definitions>> = LazyLock::new(Default::default);
    let key = (tz, from, to);
    if let Some(found) = DEFINITIONS.lock().expect("zone definitions lock").get(&key) {
        return found.clone();
    }
    let year_start = |year: i32| {
        chrono::NaiveDate::from_ymd_opt(year, 1, 1)
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .map(|t| t.and_utc())
            .unwrap_or_default()
    };
    let lines = Arc::new(zones::vtimezone(
        tz,
        year_start(from),
        year_start(to.saturating_add(1)) - Duration::seconds(1),
    ));
    let mut kept = DEFINITIONS.lock().expect("zone definitions lock");
    if kept.len() >= KEPT {
        kept.clear();
    }
    kept.insert(key, lines.clone());
    lines
}

/// The host of the public URL, which makes event UIDs globally unique.
pub(crate) fn host(links: &Links) -> String {
    url::Url::parse(links.public_url())
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_else(|| "almanac".into())
}

fn utc(t: NaiveDateTime) -> String {
    t.format("%Y%m%dT%H%M%SZ").to_string()
}

fn local_time(t: NaiveDateTime) -> String {
    t.format("%Y%m%dT%H%M%S").to_string()
}

fn date(t: NaiveDateTime) -> String {
    t.format("%Y%m%d").to_string()
}

/// A TEXT value (RFC 5545, section 3.3.11): backslash, semicolon, comma and line breaks escaped,
/// other control characters dropped.
fn text(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 8);
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            ';' => out.push_str("\\;"),
            ',' => out.push_str("\\,"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Content lines, folded at [`LINE_OCTETS`] octets (never inside a character) and ended with
/// CRLF.
#[derive(Default)]
struct Lines(String);

impl Lines {
    fn line(&mut self, content: &str) {
        let mut width = 0;
        for c in content.chars() {
            let octets = c.len_utf8();
            if width + octets > LINE_OCTETS {
                self.0.push_str("\r\n ");
                // The continuation's leading space counts towards its length.
                width = 1;
            }
            self.0.push(c);
            width += octets;
        }
        self.0.push_str("\r\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_fold_at_75_octets_between_characters() {
        let mut lines = Lines::default();
        let value = format!("SUMMARY:{}", "é".repeat(60));
        lines.line(&value);
        let physical: Vec<&str> = lines.0.trim_end_matches("\r\n").split("\r\n").collect();
        assert!(physical.len() > 1);
        for line in &physical {
            assert!(line.len() <= LINE_OCTETS, "{line:?}");
        }
        let unfolded = lines.0.trim_end_matches("\r\n").replace("\r\n ", "");
        assert_eq!(unfolded, value);
    }

    #[test]
    fn text_values_are_escaped() {
        assert_eq!(text("a;b,c\\d\nnext\u{7}"), "a\\;b\\,c\\\\d\\nnext");
    }
}
