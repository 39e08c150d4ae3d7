//! Reading an iCalendar feed (RFC 5545) into what almanac keeps of its events: each VEVENT's
//! dates in an IANA zone (TZIDs by IANA name, by the Windows names Outlook writes, or by the
//! rules of the feed's VTIMEZONE; Google's `X-WR-TIMEZONE` for times in UTC), its rule, its
//! texts, place, organizer, categories, links and visibility. A component almanac cannot hold
//! is refused alone, with the reason; a feed that is not iCalendar is refused whole.

use crate::values::timezone::Zone;
use chrono::{Duration, NaiveDate, NaiveDateTime, NaiveTime, Offset, TimeZone};
use icalendar::parser::{Component as Parsed, Property};
use std::collections::HashMap;

/// One VEVENT as almanac keeps it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Component {
    pub uid: String,
    /// RECURRENCE-ID, in UTC: this component is that instance of the series `uid`.
    pub recurrence_id: Option<NaiveDateTime>,
    pub title: String,
    /// HTML (plain text escaped; its blank lines separate paragraphs, as in every description).
    pub description: String,
    /// Wall clocks in `zone`; an all-day event runs from its first day's midnight to its last
    /// day's 23:59:59.
    pub start: NaiveDateTime,
    pub end: NaiveDateTime,
    pub all_day: bool,
    /// An IANA name, or `UTC`.
    pub zone: String,
    /// RRULE, RDATE and EXDATE lines, their TZIDs as IANA names.
    pub recurrence: Vec<String>,
    /// `STATUS:CANCELLED`.
    pub cancelled: bool,
    /// `CLASS:PRIVATE` or `CONFIDENTIAL`.
    pub private: bool,
    pub location: Option<String>,
    pub geo: Option<(f64, f64)>,
    /// The organizer's name (or address) and email.
    pub organizer: Option<(String, Option<String>)>,
    pub categories: Vec<String>,
    pub url: Option<String>,
    pub image: Option<String>,
    /// A hash of the rest of the component.
    pub fingerprint: u64,
}

/// A component left out, and why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Refusal {
    /// Its UID, when it has one (a mirror keeps what a refused UID became).
    pub uid: Option<String>,
    /// Its UID (with its RECURRENCE-ID), or its place in the feed.
    pub component: String,
    pub reason: String,
}

/// A feed read whole.
#[derive(Debug, Default)]
pub(crate) struct Feed {
    pub components: Vec<Component>,
    pub refused: Vec<Refusal>,
}

/// How deep components nest in a feed (VCALENDAR, VTIMEZONE, STANDARD: three; VALARM four).
const MAX_DEPTH: usize = 8;
/// The longest TZID read (zone names and Windows names are far shorter).
const MAX_TZID: usize = 200;

/// Whether `text` is an iCalendar object (what a source answers is told apart by this).
pub(crate) fn is_icalendar(text: &str) -> bool {
    text.trim_start_matches('\u{feff}')
        .trim_start()
        .get(..15)
        .is_some_and(|head| head.eq_ignore_ascii_case("BEGIN:VCALENDAR"))
}

/// Reads a feed; `Err` when it is not an iCalendar object at all.
pub(crate) fn parse(text: &str) -> Result<Feed, String> {
    if !is_icalendar(text) {
        return Err("the source is not an iCalendar feed (no BEGIN:VCALENDAR)".into());
    }
    let unfolded = icalendar::parser::unfold(text.trim_start_matches('\u{feff}'));
    // The parser recurses into nested components: a feed nested deeper than calendars nest
    // is refused before it can exhaust the stack.
    let mut depth = 0usize;
    for line in unfolded.lines() {
        let line = line.trim_start();
        if line.len() >= 6 && line[..6].eq_ignore_ascii_case("BEGIN:") {
            depth += 1;
            if depth > MAX_DEPTH {
                return Err(format!("the feed nests components deeper than {MAX_DEPTH}"));
            }
        } else if line.len() >= 4 && line[..4].eq_ignore_ascii_case("END:") {
            depth = depth.saturating_sub(1);
        }
    }
    let roots = icalendar::parser::read_calendar_simple(&unfolded)
        .map_err(|e| format!("the feed is not valid iCalendar ({:?})", e.code))?;
    let calendar = roots
        .iter()
        .find(|c| c.name.as_str().eq_ignore_ascii_case("VCALENDAR"))
        .ok_or("the feed has no VCALENDAR")?;
    let default_zone = value(calendar, "X-WR-TIMEZONE").and_then(|name| iana(&name));
    let mut zones = HashMap::new();
    for vtimezone in components(calendar, "VTIMEZONE") {
        if let Some(tzid) = value(vtimezone, "TZID") {
            if let Some(zone) = iana(&tzid).or_else(|| by_rules(vtimezone, &tzid)) {
                zones.insert(tzid, zone);
            }
        }
    }
    let context = Context {
        default_zone,
        zones,
    };
    let mut feed = Feed::default();
    for (n, vevent) in components(calendar, "VEVENT").enumerate() {
        match context.component(vevent) {
            Ok(component) => feed.components.push(component),
            Err(reason) => feed.refused.push(Refusal {
                uid: value(vevent, "UID"),
                component: value(vevent, "UID")
                    .map(|uid| match value(vevent, "RECURRENCE-ID") {
                        Some(at) => format!("{uid} ({at})"),
                        None => uid,
                    })
                    .unwrap_or_else(|| format!("VEVENT {} of the feed", n + 1)),
                reason,
            }),
        }
    }
    Ok(feed)
}

fn components<'a>(parent: &'a Parsed<'a>, name: &'a str) -> impl Iterator<Item = &'a Parsed<'a>> {
    parent
        .components
        .iter()
        .filter(move |c| c.name.as_str().eq_ignore_ascii_case(name))
}

fn properties<'a>(
    component: &'a Parsed<'a>,
    name: &'a str,
) -> impl Iterator<Item = &'a Property<'a>> {
    component
        .properties
        .iter()
        .filter(move |p| p.name.as_str().eq_ignore_ascii_case(name))
}

fn property<'a>(component: &'a Parsed<'a>, name: &'a str) -> Option<&'a Property<'a>> {
    properties(component, name).next()
}

/// A property's value as text (TEXT escapes undone).
fn value(component: &Parsed, name: &str) -> Option<String> {
    property(component, name).map(text)
}

fn text(p: &Property) -> String {
    p.val.clone().unescape_text().as_str().to_string()
}

fn param(p: &Property, key: &str) -> Option<String> {
    p.params
        .iter()
        .find(|q| q.key.as_str().eq_ignore_ascii_case(key))
        .and_then(|q| q.val.as_ref())
        .map(|v| v.as_str().trim_matches('"').to_string())
}

/// The IANA zone a TZID names: an IANA name (also at the end of a path such as
/// `/mozilla.org/20070129_1/Europe/Berlin`), or a Windows name (CLDR's mapping).
fn iana(tzid: &str) -> Option<String> {
    let tzid = tzid.trim().trim_matches('"');
    if tzid.len() > MAX_TZID {
        return None;
    }
    let segments: Vec<&str> = tzid.split('/').collect();
    // IANA names have at most three segments (America/Argentina/Buenos_Aires).
    for start in segments.len().saturating_sub(3)..segments.len() {
        let name = segments[start..].join("/");
        if !name.is_empty() {
            if let Ok(zone) = Zone::parse(&name) {
                if !matches!(zone, Zone::Offset { .. }) {
                    return Some(zone.name());
                }
            }
        }
    }
    localzone::win_zone_to_iana(tzid, None).map(str::to_string)
}

/// The IANA zone whose offsets through a year are a VTIMEZONE's (standard, and daylight if
/// it has one), preferring one whose name shares a word with the TZID, else the first by
/// name. (The dates of the changes are not compared: zones that share offsets but change on
/// other days are taken for each other.)
fn by_rules(vtimezone: &Parsed, tzid: &str) -> Option<String> {
    let offset = |part: &str| {
        components(vtimezone, part)
            .filter_map(|c| value(c, "TZOFFSETTO"))
            .filter_map(|o| utc_offset(&o))
            .last()
    };
    let standard = offset("STANDARD")?;
    let daylight = offset("DAYLIGHT");
    let year = 2026;
    let sample = |zone: &chrono_tz::Tz, month: u32| {
        let at = NaiveDate::from_ymd_opt(year, month, 15)?.and_time(NaiveTime::MIN);
        Some(zone.offset_from_utc_datetime(&at).fix().local_minus_utc())
    };
    let words: Vec<String> = tzid
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 2)
        .map(str::to_ascii_lowercase)
        .collect();
    // Through the year, each month's offset is the standard or the daylight one, and both
    // occur (a zone without daylight time: the standard one throughout).
    let mut matching = chrono_tz::TZ_VARIANTS.iter().filter(|zone| {
        let months: Vec<Option<i32>> = (1..=12).map(|m| sample(zone, m)).collect();
        match daylight {
            None => months.iter().all(|o| *o == Some(standard)),
            Some(daylight) => {
                months
                    .iter()
                    .all(|o| *o == Some(standard) || *o == Some(daylight))
                    && months.contains(&Some(standard))
                    && months.contains(&Some(daylight))
            }
        }
    });
    let first = matching.next()?;
    let named = std::iter::once(first).chain(matching).find(|zone| {
        let name = zone.name().to_ascii_lowercase();
        words.iter().any(|w| name.contains(w.as_str()))
    });
    Some(named.unwrap_or(first).name().to_string())
}

/// `+0100`, `-0530`, `+013000` as seconds east of UTC.
fn utc_offset(text: &str) -> Option<i32> {
    let text = text.trim();
    let (sign, digits) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => return None,
    };
    if !(digits.len() == 4 || digits.len() == 6) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n = |r: std::ops::Range<usize>| digits[r].parse::<i32>().ok();
    let seconds = if digits.len() == 6 { n(4..6)? } else { 0 };
    Some(sign * (n(0..2)? * 3600 + n(2..4)? * 60 + seconds))
}

/// A DTSTART, DTEND or RECURRENCE-ID value.
#[derive(Debug, Clone)]
enum When {
    Date(NaiveDate),
    /// A wall clock in a zone (floating times are the feed's zone's).
    Local(NaiveDateTime, Option<Zone>),
    Utc(NaiveDateTime),
}

/// What the components of one feed share: its zones.
struct Context {
    /// `X-WR-TIMEZONE`.
    default_zone: Option<String>,
    /// The feed's VTIMEZONEs' TZIDs, mapped.
    zones: HashMap<String, String>,
}

impl Context {
    fn zone_of(&self, tzid: &str) -> Result<Zone, String> {
        let name = self
            .zones
            .get(tzid)
            .cloned()
            .or_else(|| iana(tzid))
            .ok_or_else(|| format!("the time zone `{tzid}` cannot be mapped to an IANA zone"))?;
        Zone::parse(&name).map_err(|_| format!("the time zone `{tzid}` is not known"))
    }

    fn when(&self, p: &Property) -> Result<When, String> {
        let raw = p.val.as_str().trim();
        let date_only =
            param(p, "VALUE").is_some_and(|v| v.eq_ignore_ascii_case("DATE")) || raw.len() == 8;
        let wrong = || format!("{} `{raw}` is not a date or date-time", p.name.as_str());
        if date_only {
            return NaiveDate::parse_from_str(raw, "%Y%m%d")
                .map(When::Date)
                .map_err(|_| wrong());
        }
        let (clock, utc) = match raw.strip_suffix(['Z', 'z']) {
            Some(clock) => (clock, true),
            None => (raw, false),
        };
        let at = NaiveDateTime::parse_from_str(clock, "%Y%m%dT%H%M%S").map_err(|_| wrong())?;
        if utc {
            return Ok(When::Utc(at));
        }
        match param(p, "TZID") {
            Some(tzid) => Ok(When::Local(at, Some(self.zone_of(&tzid)?))),
            None => Ok(When::Local(at, None)),
        }
    }

    /// The zone of an event starting at `start`: its TZID's; a repeating event given in UTC
    /// repeats in UTC (RFC 5545), a single one is shown in the feed's zone; else UTC.
    fn event_zone(&self, start: &When, repeats: bool) -> Zone {
        match start {
            When::Local(_, Some(zone)) => zone.clone(),
            When::Utc(_) if repeats => Zone::Utc,
            _ => self
                .default_zone
                .as_deref()
                .and_then(|z| Zone::parse(z).ok())
                .unwrap_or(Zone::Utc),
        }
    }

    fn component(&self, vevent: &Parsed) -> Result<Component, String> {
        let uid = value(vevent, "UID")
            .filter(|u| !u.trim().is_empty())
            .ok_or("it has no UID")?;
        let start = self.when(property(vevent, "DTSTART").ok_or("it has no DTSTART")?)?;
        let repeats = ["RRULE", "RDATE"]
            .iter()
            .any(|name| property(vevent, name).is_some());
        let zone = self.event_zone(&start, repeats);
        let local = |when: When| match when {
            When::Date(d) => d.and_time(NaiveTime::MIN),
            When::Local(at, _) => at,
            When::Utc(at) => zone.to_local(at.and_utc()),
        };
        // A time in another zone than the start's is moved to the start's.
        let in_zone = |when: When| match when {
            When::Local(at, Some(other)) if other.name() != zone.name() => {
                zone.to_local(other.to_utc(at))
            }
            other => local(other),
        };
        let all_day = matches!(start, When::Date(_));
        let start_local = local(start);
        let end_local = match (property(vevent, "DTEND"), property(vevent, "DURATION")) {
            (Some(end), _) => in_zone(self.when(end)?),
            (None, Some(duration)) => parse_duration(duration.val.as_str())
                .and_then(|d| start_local.checked_add_signed(d))
                .ok_or_else(|| format!("DURATION `{}` is not a duration", duration.val.as_str()))?,
            (None, None) if all_day => start_local + Duration::days(1),
            (None, None) => start_local,
        };
        let (start_local, end_local) = if all_day {
            // DTEND is the day after the last (exclusive); almanac keeps the last day's end.
            let last = end_local
                .checked_sub_signed(Duration::days(1))
                .unwrap_or(end_local)
                .max(start_local);
            (
                start_local,
                last.date().and_hms_opt(23, 59, 59).expect("a time"),
            )
        } else {
            (start_local, end_local.max(start_local))
        };
        let recurrence_id = match property(vevent, "RECURRENCE-ID") {
            None => None,
            Some(p) => Some(match self.when(p)? {
                When::Utc(at) => at,
                When::Date(d) => zone.to_utc(d.and_time(NaiveTime::MIN)).naive_utc(),
                When::Local(at, Some(z)) => z.to_utc(at).naive_utc(),
                When::Local(at, None) => zone.to_utc(at).naive_utc(),
            }),
        };
        let mut recurrence = Vec::new();
        for p in properties(vevent, "RRULE") {
            recurrence.push(format!("RRULE:{}", p.val.as_str()));
        }
        for name in ["RDATE", "EXDATE"] {
            for p in properties(vevent, name) {
                let mut line = name.to_string();
                if let Some(kind) = param(p, "VALUE") {
                    if kind.eq_ignore_ascii_case("PERIOD") {
                        return Err(format!("{name} periods are not kept"));
                    }
                    line.push_str(&format!(";VALUE={kind}"));
                }
                if let Some(tzid) = param(p, "TZID") {
                    line.push_str(&format!(";TZID={}", self.zone_of(&tzid)?.name()));
                }
                line.push(':');
                line.push_str(p.val.as_str());
                recurrence.push(line);
            }
        }
        let html = properties(vevent, "X-ALT-DESC")
            .find(|p| param(p, "FMTTYPE").is_some_and(|f| f.eq_ignore_ascii_case("text/html")))
            .map(text);
        let description = match html {
            Some(html) => crate::values::text::sanitize_html(&html),
            None => paragraphs(&value(vevent, "DESCRIPTION").unwrap_or_default()),
        };
        let status = value(vevent, "STATUS").unwrap_or_default();
        let class = value(vevent, "CLASS").unwrap_or_default();
        let geo = value(vevent, "GEO").and_then(|g| {
            let (lat, lng) = g.split_once([';', ','])?;
            Some((lat.trim().parse().ok()?, lng.trim().parse().ok()?))
        });
        let organizer = property(vevent, "ORGANIZER").and_then(|p| {
            let email = p
                .val
                .as_str()
                .trim()
                .strip_prefix("mailto:")
                .or_else(|| p.val.as_str().trim().strip_prefix("MAILTO:"))
                .map(str::to_string)
                .filter(|e| e.contains('@'));
            let name = param(p, "CN")
                .filter(|n| !n.trim().is_empty())
                .or_else(|| email.clone())?;
            Some((name, email))
        });
        let categories = properties(vevent, "CATEGORIES")
            .flat_map(|p| {
                split_list(p.val.as_str())
                    .into_iter()
                    .filter(|c| !c.trim().is_empty())
                    .collect::<Vec<_>>()
            })
            .collect();
        let image = properties(vevent, "ATTACH")
            .filter(|p| {
                param(p, "FMTTYPE").is_some_and(|f| f.to_ascii_lowercase().starts_with("image/"))
                    || [".jpg", ".jpeg", ".png", ".gif", ".webp"]
                        .iter()
                        .any(|ext| p.val.as_str().to_ascii_lowercase().ends_with(ext))
            })
            .map(|p| p.val.as_str().trim().to_string())
            .find(|u| u.starts_with("https://") || u.starts_with("http://"));
        let mut component = Component {
            uid,
            recurrence_id,
            title: value(vevent, "SUMMARY").unwrap_or_default(),
            description,
            start: start_local,
            end: end_local,
            all_day,
            zone: zone.name(),
            recurrence,
            cancelled: status.eq_ignore_ascii_case("CANCELLED"),
            private: class.eq_ignore_ascii_case("PRIVATE")
                || class.eq_ignore_ascii_case("CONFIDENTIAL"),
            location: value(vevent, "LOCATION").filter(|l| !l.trim().is_empty()),
            geo,
            organizer,
            categories,
            url: value(vevent, "URL")
                .filter(|u| u.starts_with("https://") || u.starts_with("http://")),
            image,
            fingerprint: 0,
        };
        // What almanac makes of the component (its zones resolved), so that a change of the
        // feed's VTIMEZONE or X-WR-TIMEZONE counts too; DTSTAMP, the moment the feed was
        // written, is not in it.
        let hash = blake3::hash(format!("{component:?}").as_bytes());
        component.fingerprint = u64::from_le_bytes(hash.as_bytes()[..8].try_into().expect("8"));
        Ok(component)
    }
}

/// Plain text as HTML paragraphs: escaped, blank lines between paragraphs.
fn paragraphs(plain: &str) -> String {
    plain
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace("\r\n", "\n")
}

/// A TEXT list (`a,b\,c`), its escapes undone.
fn split_list(raw: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('n') | Some('N') => out.last_mut().expect("one").push('\n'),
                Some(other) => out.last_mut().expect("one").push(other),
                None => {}
            },
            ',' => out.push(String::new()),
            c => out.last_mut().expect("one").push(c),
        }
    }
    out.into_iter().map(|s| s.trim().to_string()).collect()
}

/// An RFC 5545 duration: `P1D`, `PT1H30M`, `P2W`, `-PT15M`.
fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    let (sign, rest) = match text.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, text.strip_prefix('+').unwrap_or(text)),
    };
    let rest = rest.strip_prefix(['P', 'p'])?;
    let mut total = Duration::zero();
    let mut number = String::new();
    let mut time = false;
    for c in rest.chars() {
        match c.to_ascii_uppercase() {
            'T' => time = true,
            d if d.is_ascii_digit() => number.push(d),
            unit => {
                let n: i64 = number.parse().ok()?;
                number.clear();
                let part = match (unit, time) {
                    ('W', false) => Duration::try_weeks(n),
                    ('D', false) => Duration::try_days(n),
                    ('H', true) => Duration::try_hours(n),
                    ('M', true) => Duration::try_minutes(n),
                    ('S', true) => Duration::try_seconds(n),
                    _ => return None,
                }?;
                total = total.checked_add(&part)?;
            }
        }
    }
    if !number.is_empty() {
        return None;
    }
    Some(if sign < 0 { -total } else { total })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zones_are_read_by_iana_name_windows_name_path_and_rules() {
        assert_eq!(iana("Europe/Lisbon").as_deref(), Some("Europe/Lisbon"));
        assert_eq!(
            iana("/mozilla.org/20070129_1/Europe/Berlin").as_deref(),
            Some("Europe/Berlin")
        );
        assert_eq!(
            iana("W. Europe Standard Time").as_deref(),
            Some("Europe/Berlin")
        );
        assert_eq!(
            iana("E. South America Standard Time").as_deref(),
            Some("America/Sao_Paulo")
        );
        assert_eq!(iana("Nowhere Standard Time"), None);
        assert_eq!(utc_offset("+0530"), Some(19800));
        assert_eq!(utc_offset("-0300"), Some(-10800));
        assert_eq!(parse_duration("PT1H30M"), Some(Duration::minutes(90)));
        assert_eq!(parse_duration("P1W"), Some(Duration::days(7)));
        assert_eq!(parse_duration("1H"), None);
        assert_eq!(split_list("a,b\\,c, d"), ["a", "b,c", "d"]);
    }

    #[test]
    fn a_feed_of_google_and_outlook_shapes_is_read() {
        let feed = parse(
            "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nX-WR-TIMEZONE:America/New_York\r\n\
             BEGIN:VTIMEZONE\r\nTZID:Custom London time\r\nBEGIN:STANDARD\r\nDTSTART:16010101T030000\r\n\
             TZOFFSETFROM:+0100\r\nTZOFFSETTO:+0000\r\nEND:STANDARD\r\nBEGIN:DAYLIGHT\r\n\
             DTSTART:16010101T010000\r\nTZOFFSETFROM:+0000\r\nTZOFFSETTO:+0100\r\nEND:DAYLIGHT\r\n\
             END:VTIMEZONE\r\n\
             BEGIN:VEVENT\r\nUID:a@x\r\nDTSTART:20270110T150000Z\r\nDTEND:20270110T160000Z\r\n\
             SUMMARY:Standup\\, daily\r\nRRULE:FREQ=DAILY;COUNT=3\r\nEND:VEVENT\r\n\
             BEGIN:VEVENT\r\nUID:b@x\r\nDTSTART;TZID=Custom London time:20270601T100000\r\n\
             DURATION:PT2H\r\nEND:VEVENT\r\n\
             BEGIN:VEVENT\r\nUID:c@x\r\nDTSTART;VALUE=DATE:20270301\r\nDTEND;VALUE=DATE:20270303\r\n\
             CATEGORIES:Fair,Food\r\nEND:VEVENT\r\n\
             BEGIN:VEVENT\r\nSUMMARY:no uid\r\nDTSTART:20270101T100000Z\r\nEND:VEVENT\r\n\
             BEGIN:VEVENT\r\nUID:d@x\r\nDTSTART;TZID=Mars:20270101T100000\r\nEND:VEVENT\r\n\
             END:VCALENDAR\r\n",
        )
        .unwrap();
        let a = &feed.components[0];
        // Given in UTC, a repeating event repeats in UTC (a single one is shown in the feed's
        // X-WR-TIMEZONE).
        assert_eq!(
            (a.zone.as_str(), a.title.as_str()),
            ("UTC", "Standup, daily")
        );
        assert_eq!(a.start.to_string(), "2027-01-10 15:00:00");
        assert_eq!(a.recurrence, ["RRULE:FREQ=DAILY;COUNT=3"]);
        let b = &feed.components[1];
        assert_eq!(b.zone, "Europe/London");
        assert_eq!(b.end.to_string(), "2027-06-01 12:00:00");
        let c = &feed.components[2];
        assert!(c.all_day);
        assert_eq!(c.end.to_string(), "2027-03-02 23:59:59");
        assert_eq!(c.categories, ["Fair", "Food"]);
        assert_eq!(feed.refused.len(), 2, "{:?}", feed.refused);
        assert!(feed.refused[1].reason.contains("Mars"));
        assert!(parse("<html></html>").is_err());
    }
}
