//! Recurrence: the RFC 5545 lines an event's `recurrence` holds (`RRULE`, `RDATE`, `EXDATE`)
//! and their expansion into the local start of every occurrence.
//!
//! The rule is expanded on wall clocks ("floating" time), so that 10:00 stays 10:00 across a
//! daylight-saving change, and each wall clock is placed in the event's zone afterwards by
//! [`Zone::to_utc`], the rule single events follow: a skipped wall clock moves forward by the
//! size of the jump, a repeated one takes the first of its two instants. The rule iteration is
//! the `rrule` crate's (a port of python-dateutil's); what the crate reads from zones, DTSTART,
//! UNTIL and COUNT is done here instead, by the RFC: DTSTART is always the first occurrence
//! and counts towards COUNT, UNTIL in UTC is compared with each occurrence's instant, COUNT
//! is applied before EXDATE removes dates.

use crate::values::timezone::Zone;
use crate::values::{Invalid, SubCode};
use chrono::{DateTime, Months, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc};
use std::collections::BTreeSet;

/// The most occurrences one series has; a rule that gives more is refused.
pub(crate) const MAX_OCCURRENCES: usize = 2000;

/// A rule without COUNT or UNTIL has its occurrences up to this many months after the
/// moment of the write (the horizon moves on every day, see `service::series`).
pub(crate) const HORIZON_MONTHS: u32 = 24;

/// Lines in one `recurrence`.
const MAX_LINES: usize = 100;

/// A validated `recurrence`: at most one rule, and extra and excluded dates.
#[derive(Debug, Clone)]
pub(crate) struct Recurrence {
    rule: Option<Rule>,
    extra: Vec<Moment>,
    excluded: Vec<Moment>,
}

#[derive(Debug, Clone)]
struct Rule {
    /// The rule's parts other than COUNT and UNTIL, for the crate, and as text.
    parts: rrule::RRule<rrule::Unvalidated>,
    text: String,
    count: Option<usize>,
    until: Option<Moment>,
}

/// A date or date-time value of an RDATE, EXDATE or UNTIL.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Moment {
    /// `VALUE=DATE`: a whole day.
    Date(NaiveDate),
    /// A wall clock in the event's zone ("floating").
    Local(NaiveDateTime),
    /// An instant: `…Z`, or a wall clock with its own `TZID`.
    Instant(DateTime<Utc>),
}

impl Moment {
    /// The value as a line writes it, with its parameter.
    fn written(self) -> String {
        match self {
            Moment::Date(d) => format!(";VALUE=DATE:{}", d.format("%Y%m%d")),
            Moment::Local(t) => format!(":{}", t.format("%Y%m%dT%H%M%S")),
            Moment::Instant(i) => format!(":{}", i.format("%Y%m%dT%H%M%SZ")),
        }
    }

    /// The wall clock in `zone` of an extra date, a date taking the series' time of day.
    fn local(self, zone: &Zone, time: NaiveTime) -> NaiveDateTime {
        match self {
            Moment::Date(d) => d.and_time(time),
            Moment::Local(t) => t,
            Moment::Instant(i) => zone.to_local(i),
        }
    }

    /// Whether an occurrence (its wall clock and instant) is this date.
    fn is(self, local: NaiveDateTime, utc: DateTime<Utc>) -> bool {
        match self {
            Moment::Date(d) => local.date() == d,
            Moment::Local(t) => local == t,
            Moment::Instant(i) => utc == i,
        }
    }

    /// Whether an occurrence is at or before this UNTIL.
    fn reaches(self, local: NaiveDateTime, utc: DateTime<Utc>) -> bool {
        match self {
            Moment::Date(d) => local.date() <= d,
            Moment::Local(t) => local <= t,
            Moment::Instant(i) => utc <= i,
        }
    }
}

/// The occurrences of a series.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Expansion {
    /// Each occurrence's local start, in order, without repeats.
    pub starts: Vec<NaiveDateTime>,
    /// Whether the rule never ends, so that `starts` stops at the horizon.
    pub open_ended: bool,
    /// The local starts EXDATE removed.
    pub excluded: Vec<NaiveDateTime>,
    /// What a calendar client is given: one VEVENT for what the RRULE gives by itself, starting
    /// at `client_start` (absent when the rule gives no start), its RRULE with COUNT or UNTIL
    /// written as an UNTIL at the last start the rule gives (in UTC, or a date for an all-day
    /// series); and the occurrences `outside_rule` (RDATE, and a first start the rule does not
    /// give) as events of their own. Clients differ on a DTSTART the rule does not give (the
    /// RFC counts it, dateutil never, ICAL.js for some frequencies) and on RDATEs before
    /// DTSTART; written this way, every client finds the same occurrences.
    pub client_rule: Option<String>,
    pub client_start: Option<NaiveDateTime>,
    pub outside_rule: Vec<NaiveDateTime>,
}

/// A rule as people say it ("every week on Tuesday, until June 30"), for the common forms.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Summary {
    pub every: Every,
    /// 1 for every day (week, ...), 2 for every other one.
    pub interval: u16,
    pub end: End,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Every {
    Day,
    /// On these weekdays (none: the start's).
    Week(Vec<chrono::Weekday>),
    /// On this day of the month (-1: the last).
    MonthDay(i8),
    /// On the n-th (-1: last) weekday of the month.
    MonthWeekday(i16, chrono::Weekday),
    Year,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum End {
    Never,
    After(usize),
    /// Until this date (in the event's zone).
    Until(NaiveDate),
}

impl Expansion {
    /// The wall clock the rule gave the occurrence starting at `utc` (a start in a
    /// daylight-saving gap was moved past it, so its instant's wall clock differs).
    pub(crate) fn wall_clock(&self, zone: &Zone, utc: NaiveDateTime) -> NaiveDateTime {
        self.starts
            .iter()
            .chain(&self.excluded)
            .find(|l| zone.to_utc(**l).naive_utc() == utc)
            .copied()
            .unwrap_or_else(|| zone.to_local(utc.and_utc()))
    }
}

fn refusal(reason: String) -> Invalid {
    Invalid::new(SubCode::InvalidFormat, reason)
}

impl Recurrence {
    /// Reads the lines of a `recurrence` value. Names are case-insensitive; an `RRULE` may
    /// carry FREQ (DAILY, WEEKLY, MONTHLY, YEARLY), INTERVAL, COUNT, UNTIL, BYDAY, BYMONTHDAY,
    /// BYMONTH, BYYEARDAY, BYWEEKNO, BYSETPOS and WKST.
    pub(crate) fn parse(lines: &[String]) -> Result<Recurrence, Invalid> {
        if lines.len() > MAX_LINES {
            return Err(Invalid::new(
                SubCode::TooManyItems,
                format!("has more than {MAX_LINES} lines."),
            ));
        }
        let mut recurrence = Recurrence {
            rule: None,
            extra: Vec::new(),
            excluded: Vec::new(),
        };
        for (n, line) in lines.iter().enumerate() {
            let at = |why: String| refusal(format!("line {}: {why}", n + 1));
            let (head, value) = line
                .trim()
                .split_once(':')
                .ok_or_else(|| at("is not an RFC 5545 line (NAME:VALUE).".into()))?;
            let mut params = head.split(';');
            let name = params.next().unwrap_or_default().to_ascii_uppercase();
            let params: Vec<&str> = params.collect();
            match name.as_str() {
                "RRULE" => {
                    if recurrence.rule.is_some() {
                        return Err(at("a series has one RRULE.".into()));
                    }
                    if !params.is_empty() {
                        return Err(at("RRULE takes no parameters.".into()));
                    }
                    recurrence.rule = Some(Rule::parse(value).map_err(at)?);
                }
                "RDATE" | "EXDATE" => {
                    let moments = moments(&name, &params, value).map_err(at)?;
                    let list = if name == "RDATE" {
                        &mut recurrence.extra
                    } else {
                        &mut recurrence.excluded
                    };
                    list.extend(moments);
                    if list.len() > MAX_OCCURRENCES {
                        return Err(at(format!("more than {MAX_OCCURRENCES} {name} dates.")));
                    }
                }
                _ => {
                    return Err(at(format!(
                        "`{name}` is not one of RRULE, RDATE and EXDATE."
                    )))
                }
            }
        }
        Ok(recurrence)
    }

    /// The occurrences of a series whose first occurrence starts at the wall clock `first` in
    /// `zone`, up to `horizon` (a wall clock) when the rule never ends. An all-day series
    /// repeats by date (its `first` is a midnight).
    pub(crate) fn expand(
        &self,
        first: NaiveDateTime,
        zone: &Zone,
        all_day: bool,
        horizon: NaiveDateTime,
    ) -> Result<Expansion, Invalid> {
        let mut starts = BTreeSet::from([first]);
        let mut open_ended = false;
        // What the RRULE gives by itself (the first start only if it matches the rule).
        let mut from_rule = BTreeSet::new();
        let mut client_rule = None;
        if let Some(rule) = &self.rule {
            open_ended = rule.count.is_none() && rule.until.is_none();
            if let Some(until) = rule.until {
                if !until.reaches(first, zone.to_utc(first)) {
                    return Err(refusal("UNTIL is before the event's start.".into()));
                }
            }
            // Wall clocks as if in UTC: no zone rule touches the iteration.
            let floating = rrule::Tz::UTC.from_utc_datetime(&first);
            let set = rrule::RRuleSet::new(floating)
                .rrule(
                    rule.parts
                        .clone()
                        .validate(floating)
                        .map_err(|e| refusal(format!("the RRULE is not valid: {}", bare(&e))))?,
                )
                .limit();
            let count = rule.count.unwrap_or(usize::MAX);
            for start in &set {
                let local = start.naive_utc();
                if local != first
                    && (starts.len() >= count
                        || (open_ended && local > horizon)
                        || rule
                            .until
                            .is_some_and(|u| !u.reaches(local, zone.to_utc(local))))
                {
                    break;
                }
                starts.insert(local);
                from_rule.insert(local);
                if starts.len() > MAX_OCCURRENCES {
                    return Err(too_many());
                }
            }
            if let Some(last) = from_rule.last() {
                let mut line = format!("RRULE:{}", rule.text);
                if !open_ended {
                    let until = if all_day {
                        last.format("%Y%m%d").to_string()
                    } else {
                        zone.to_utc(*last).format("%Y%m%dT%H%M%SZ").to_string()
                    };
                    line.push_str(&format!(";UNTIL={until}"));
                }
                client_rule = Some(line);
            }
        }
        starts.extend(self.extra.iter().map(|m| m.local(zone, first.time())));
        if starts.len() > MAX_OCCURRENCES {
            return Err(too_many());
        }
        let (kept, excluded): (Vec<NaiveDateTime>, Vec<NaiveDateTime>) =
            starts.into_iter().partition(|local| {
                let utc = zone.to_utc(*local);
                !self.excluded.iter().any(|m| m.is(*local, utc))
            });
        Ok(Expansion {
            outside_rule: kept
                .iter()
                .filter(|s| !from_rule.contains(*s))
                .copied()
                .collect(),
            client_start: from_rule.first().copied(),
            starts: kept,
            open_ended,
            excluded,
            client_rule,
        })
    }

    /// The lines of the two series a series becomes when it is split at the wall clock `at`
    /// (one of its starts, after its first): the first ends before `at`, the second starts
    /// there with the rest of the rule — what is left of COUNT, the same UNTIL — and the extra
    /// dates from `at` on. Excluded dates stay with both.
    pub(crate) fn split(
        &self,
        first: NaiveDateTime,
        zone: &Zone,
        all_day: bool,
        at: NaiveDateTime,
    ) -> (Vec<String>, Vec<String>) {
        let (mut before, mut after) = (Vec::new(), Vec::new());
        if let Some(rule) = &self.rule {
            let end = if all_day {
                (at - chrono::Duration::days(1))
                    .format("%Y%m%d")
                    .to_string()
            } else {
                (zone.to_utc(at) - chrono::Duration::seconds(1))
                    .format("%Y%m%dT%H%M%SZ")
                    .to_string()
            };
            before.push(format!("RRULE:{};UNTIL={end}", rule.text));
            let rest = match (rule.count, rule.until) {
                (Some(count), _) => {
                    let counted = rule.counted_before(first, at);
                    format!(";COUNT={}", count.saturating_sub(counted).max(1))
                }
                (None, Some(until)) => format!(";UNTIL{}", until.written().replacen(':', "=", 1)),
                (None, None) => String::new(),
            };
            after.push(format!("RRULE:{}{rest}", rule.text));
        }
        for m in &self.extra {
            let line = format!("RDATE{}", m.written());
            if m.local(zone, first.time()) < at {
                before.push(line);
            } else {
                after.push(line);
            }
        }
        for m in &self.excluded {
            before.push(format!("EXDATE{}", m.written()));
            after.push(format!("EXDATE{}", m.written()));
        }
        (before, after)
    }

    /// The rule in the common forms people name (see [`Summary`]); `None` for the others
    /// (BYSETPOS, BYWEEKNO, several monthly days...) and for extra dates alone.
    pub(crate) fn summary(&self, zone: &Zone) -> Option<Summary> {
        use rrule::{Frequency, NWeekday};
        let rule = self.rule.as_ref()?;
        let p = &rule.parts;
        if !p.get_by_set_pos().is_empty()
            || !p.get_by_week_no().is_empty()
            || !p.get_by_year_day().is_empty()
            || !p.get_by_month().is_empty()
        {
            return None;
        }
        let days = p.get_by_weekday();
        let month_days = p.get_by_month_day();
        let every = match p.get_freq() {
            Frequency::Daily if days.is_empty() && month_days.is_empty() => Every::Day,
            Frequency::Weekly if month_days.is_empty() => Every::Week(
                days.iter()
                    .map(|d| match d {
                        NWeekday::Every(w) => Some(*w),
                        NWeekday::Nth(..) => None,
                    })
                    .collect::<Option<Vec<_>>>()?,
            ),
            Frequency::Monthly => match (days, month_days) {
                ([], [day]) => Every::MonthDay(*day),
                ([NWeekday::Nth(n, w)], []) => Every::MonthWeekday(*n, *w),
                _ => return None,
            },
            Frequency::Yearly if days.is_empty() && month_days.is_empty() => Every::Year,
            _ => return None,
        };
        let end = match (rule.count, rule.until) {
            (Some(n), _) => End::After(n),
            (None, Some(Moment::Date(d))) => End::Until(d),
            (None, Some(Moment::Local(t))) => End::Until(t.date()),
            (None, Some(Moment::Instant(i))) => End::Until(zone.to_local(i).date()),
            (None, None) => End::Never,
        };
        Some(Summary {
            every,
            interval: p.get_interval(),
            end,
        })
    }
}

/// The wall clock `HORIZON_MONTHS` after `now` in `zone`: where a never-ending rule stops.
pub(crate) fn horizon(zone: &Zone, now: DateTime<Utc>) -> NaiveDateTime {
    let local = zone.to_local(now);
    local
        .checked_add_months(Months::new(HORIZON_MONTHS))
        .unwrap_or(local)
}

fn too_many() -> Invalid {
    refusal(format!(
        "gives more than {MAX_OCCURRENCES} occurrences: end the rule sooner (COUNT or UNTIL)."
    ))
}

/// The crate's message without its "RRule validation error: " prefix.
fn bare(e: &rrule::RRuleError) -> String {
    match e {
        rrule::RRuleError::ParserError(p) => p.to_string(),
        rrule::RRuleError::ValidationError(v) => v.to_string(),
        rrule::RRuleError::IterError(s) => s.clone(),
    }
}

impl Rule {
    /// How many of the starts COUNT counts come before the wall clock `at`: the first start,
    /// and the ones the rule gives (EXDATE aside).
    fn counted_before(&self, first: NaiveDateTime, at: NaiveDateTime) -> usize {
        let floating = rrule::Tz::UTC.from_utc_datetime(&first);
        let Ok(rule) = self.parts.clone().validate(floating) else {
            return 1;
        };
        let set = rrule::RRuleSet::new(floating).rrule(rule).limit();
        1 + (&set)
            .into_iter()
            .map(|s| s.naive_utc())
            .take_while(|s| *s < at)
            .filter(|s| *s != first)
            .count()
    }

    fn parse(value: &str) -> Result<Rule, String> {
        let mut kept = Vec::new();
        let mut count = None;
        let mut until = None;
        let mut freq = None;
        for part in value.split(';').filter(|p| !p.is_empty()) {
            let (name, v) = part
                .split_once('=')
                .ok_or_else(|| format!("`{part}` is not NAME=VALUE."))?;
            let name = name.to_ascii_uppercase();
            match name.as_str() {
                "FREQ" => {
                    let f = v.to_ascii_uppercase();
                    match f.as_str() {
                        "DAILY" | "WEEKLY" | "MONTHLY" | "YEARLY" => freq = Some(f.clone()),
                        "SECONDLY" | "MINUTELY" | "HOURLY" => {
                            return Err(format!(
                                "FREQ={f} is not offered: an occurrence is at least a day \
                                 apart (DAILY, WEEKLY, MONTHLY or YEARLY)."
                            ))
                        }
                        _ => return Err(format!("FREQ `{v}` is not a frequency.")),
                    }
                    kept.push(format!("FREQ={f}"));
                }
                "COUNT" => {
                    let n: usize = v
                        .parse()
                        .ok()
                        .filter(|n| *n >= 1)
                        .ok_or_else(|| format!("COUNT `{v}` is not a number of at least 1."))?;
                    if n > MAX_OCCURRENCES {
                        return Err(format!("COUNT is more than {MAX_OCCURRENCES}."));
                    }
                    count = Some(n);
                }
                "UNTIL" => until = Some(moment(v, None).map_err(|e| format!("UNTIL {e}"))?),
                "INTERVAL" | "BYDAY" | "BYMONTHDAY" | "BYMONTH" | "BYYEARDAY" | "BYWEEKNO"
                | "BYSETPOS" | "WKST" => kept.push(format!("{name}={}", v.to_ascii_uppercase())),
                "BYHOUR" | "BYMINUTE" | "BYSECOND" => {
                    return Err(format!(
                        "{name} is not offered: every occurrence starts at the event's time."
                    ))
                }
                _ => return Err(format!("`{name}` is not a part of an RRULE.")),
            }
        }
        if freq.is_none() {
            return Err("an RRULE needs FREQ.".into());
        }
        if count.is_some() && until.is_some() {
            return Err("an RRULE has COUNT or UNTIL, not both.".into());
        }
        let text = kept.join(";");
        let parts = text
            .parse::<rrule::RRule<rrule::Unvalidated>>()
            .map_err(|e| format!("the RRULE is not valid: {}", bare(&e)))?;
        Ok(Rule {
            parts,
            text,
            count,
            until,
        })
    }
}

/// The values of an RDATE or EXDATE line.
fn moments(name: &str, params: &[&str], value: &str) -> Result<Vec<Moment>, String> {
    let mut zone = None;
    let mut date_only = false;
    for param in params {
        let (key, v) = param
            .split_once('=')
            .ok_or_else(|| format!("`{param}` is not a parameter (NAME=VALUE)."))?;
        match key.to_ascii_uppercase().as_str() {
            "TZID" => {
                let z = Zone::parse(v.trim_matches('"'))
                    .map_err(|_| format!("TZID `{v}` is not a time zone."))?;
                zone = Some(z);
            }
            "VALUE" => match v.to_ascii_uppercase().as_str() {
                "DATE" => date_only = true,
                "DATE-TIME" => {}
                _ => return Err(format!("{name} values are dates or date-times, not {v}.")),
            },
            _ => return Err(format!("`{key}` is not a parameter of {name}.")),
        }
    }
    value
        .split(',')
        .map(|v| {
            let m = moment(v.trim(), zone.as_ref()).map_err(|e| format!("{name} {e}"))?;
            if date_only != matches!(m, Moment::Date(_)) {
                return Err(format!("{name} `{v}` does not match its VALUE type."));
            }
            Ok(m)
        })
        .collect()
}

/// `YYYYMMDD`, `YYYYMMDDTHHMMSS` (in `zone` if given, else floating) or `YYYYMMDDTHHMMSSZ`.
fn moment(v: &str, zone: Option<&Zone>) -> Result<Moment, String> {
    let wrong = || format!("`{v}` is not a date (YYYYMMDD) or date-time (YYYYMMDDTHHMMSS[Z]).");
    if v.len() == 8 {
        return NaiveDate::parse_from_str(v, "%Y%m%d")
            .map(Moment::Date)
            .map_err(|_| wrong());
    }
    let (clock, utc) = match v.strip_suffix(['Z', 'z']) {
        Some(clock) => (clock, true),
        None => (v, false),
    };
    if clock.len() != 15 {
        return Err(wrong());
    }
    let t = NaiveDateTime::parse_from_str(clock, "%Y%m%dT%H%M%S").map_err(|_| wrong())?;
    Ok(match (utc, zone) {
        (true, _) => Moment::Instant(t.and_utc()),
        (false, Some(z)) => Moment::Instant(z.to_utc(t)),
        (false, None) => Moment::Local(t),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ny() -> Zone {
        Zone::parse("America/New_York").unwrap()
    }

    fn at(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y%m%dT%H%M%S").unwrap()
    }

    fn far() -> NaiveDateTime {
        at("21000101T000000")
    }

    /// The local starts of `lines` from `first` in `zone`, as `YYYYMMDDTHHMMSS`.
    fn starts(lines: &[&str], first: &str, zone: &Zone) -> Vec<String> {
        let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        Recurrence::parse(&lines)
            .unwrap()
            .expand(at(first), zone, false, far())
            .unwrap()
            .starts
            .iter()
            .map(|t| t.format("%Y%m%dT%H%M%S").to_string())
            .collect()
    }

    fn days(list: &[String]) -> Vec<String> {
        list.iter().map(|s| s[..8].to_string()).collect()
    }

    // RFC 5545, section 3.8.5.3, with DTSTART;TZID=America/New_York:19970902T090000.
    #[test]
    fn the_rfc_examples_expand_as_written() {
        let z = ny();
        let first = "19970902T090000";
        let d = |l: &str| days(&starts(&[l], first, &z));
        assert_eq!(
            d("RRULE:FREQ=DAILY;COUNT=10"),
            [
                "19970902", "19970903", "19970904", "19970905", "19970906", "19970907", "19970908",
                "19970909", "19970910", "19970911"
            ]
        );
        assert_eq!(d("RRULE:FREQ=DAILY;UNTIL=19971224T000000Z").len(), 113);
        assert_eq!(
            d("RRULE:FREQ=WEEKLY;INTERVAL=2;WKST=SU;COUNT=4;BYDAY=TU,TH")[..],
            ["19970902", "19970904", "19970916", "19970918"]
        );
        // Monthly on the first Friday for 10 occurrences: DTSTART (a Tuesday) counts first.
        let first_fridays = days(&starts(
            &["RRULE:FREQ=MONTHLY;COUNT=10;BYDAY=1FR"],
            "19970905T090000",
            &z,
        ));
        assert_eq!(
            first_fridays[..4],
            ["19970905", "19971003", "19971107", "19971205"]
        );
        assert_eq!(
            d("RRULE:FREQ=MONTHLY;COUNT=6;BYDAY=-2MO")[1..],
            ["19970922", "19971020", "19971117", "19971222", "19980119"]
        );
        // The last weekday of the month (BYSETPOS).
        assert_eq!(
            days(&starts(
                &["RRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;COUNT=4"],
                "19970930T090000",
                &z
            )),
            ["19970930", "19971031", "19971128", "19971231"]
        );
        // Every Friday the 13th (DTSTART is not one, and is still the first occurrence).
        assert_eq!(
            d("RRULE:FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13;COUNT=4"),
            ["19970902", "19980213", "19980313", "19981113"]
        );
        // Week number 20, Mondays.
        assert_eq!(
            days(&starts(
                &["RRULE:FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO;COUNT=3"],
                "19970512T090000",
                &z
            )),
            ["19970512", "19980511", "19990517"]
        );
        assert_eq!(
            days(&starts(
                &["RRULE:FREQ=YEARLY;INTERVAL=3;COUNT=4;BYYEARDAY=1,100,200"],
                "19970101T090000",
                &z
            )),
            ["19970101", "19970410", "19970719", "20000101"]
        );
    }

    #[test]
    fn wall_clocks_stay_across_daylight_saving_and_instants_follow_the_zone() {
        let lisbon = Zone::parse("Europe/Lisbon").unwrap();
        let weekly = starts(&["RRULE:FREQ=WEEKLY;COUNT=3"], "20250323T100000", &lisbon);
        assert_eq!(
            weekly,
            ["20250323T100000", "20250330T100000", "20250406T100000"]
        );
        let utc: Vec<_> = weekly
            .iter()
            .map(|s| lisbon.to_utc(at(s)).naive_utc().format("%H").to_string())
            .collect();
        assert_eq!(utc, ["10", "09", "09"]);
        // 01:30 does not exist in Lisbon on 2025-03-30: the occurrence is kept, one hour on.
        let gap = starts(&["RRULE:FREQ=DAILY;COUNT=3"], "20250329T013000", &lisbon);
        assert_eq!(gap.len(), 3);
        assert_eq!(
            lisbon.to_utc(at(&gap[1])).naive_utc(),
            at("20250330T013000")
        );
        // São Paulo's clocks jumped from midnight in November 2018: a series at midnight
        // keeps its occurrence that day (an expansion through the zone loses it).
        let sp = Zone::parse("America/Sao_Paulo").unwrap();
        assert_eq!(
            days(&starts(
                &["RRULE:FREQ=DAILY;COUNT=3"],
                "20181103T000000",
                &sp
            )),
            ["20181103", "20181104", "20181105"]
        );
    }

    #[test]
    fn until_in_utc_is_compared_with_instants_and_count_comes_before_exdate() {
        let z = ny();
        // 09:00 New York is 13:00Z in summer: UNTIL 13:00Z on the 4th includes the 4th.
        let until = starts(
            &["RRULE:FREQ=DAILY;UNTIL=19970904T130000Z"],
            "19970902T090000",
            &z,
        );
        assert_eq!(days(&until), ["19970902", "19970903", "19970904"]);
        let until = starts(
            &["RRULE:FREQ=DAILY;UNTIL=19970904T125959Z"],
            "19970902T090000",
            &z,
        );
        assert_eq!(until.len(), 2);
        let excluded = starts(
            &[
                "RRULE:FREQ=DAILY;COUNT=3",
                "EXDATE;TZID=America/New_York:19970903T090000",
                "RDATE:19971001T130000Z",
            ],
            "19970902T090000",
            &z,
        );
        assert_eq!(days(&excluded), ["19970902", "19970904", "19971001"]);
    }

    #[test]
    fn rare_dates_far_ahead_are_found() {
        // Thursdays of ISO week 53 happen every five or six years.
        let lisbon = Zone::parse("Europe/Lisbon").unwrap();
        let found = starts(
            &["RRULE:FREQ=YEARLY;BYWEEKNO=53;BYDAY=TH;COUNT=17"],
            "20270805T024500",
            &lisbon,
        );
        assert_eq!(found.len(), 17, "{found:?}");
    }

    #[test]
    fn never_ending_rules_stop_at_the_horizon() {
        let lines = vec!["RRULE:FREQ=WEEKLY".to_string()];
        let e = Recurrence::parse(&lines)
            .unwrap()
            .expand(
                at("20260101T100000"),
                &Zone::Utc,
                false,
                at("20261231T235959"),
            )
            .unwrap();
        assert!(e.open_ended);
        assert_eq!(e.starts.len(), 53);
    }

    #[test]
    fn bad_rules_are_refused_naming_what_is_wrong() {
        let refused = |lines: &[&str]| {
            let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            match Recurrence::parse(&lines) {
                Err(e) => e.reason,
                Ok(r) => {
                    r.expand(at("20260101T100000"), &Zone::Utc, false, far())
                        .expect_err("refused")
                        .reason
                }
            }
        };
        assert!(refused(&["RRULE:FREQ=HOURLY"]).contains("HOURLY is not offered"));
        assert!(refused(&["RRULE:COUNT=3"]).contains("needs FREQ"));
        assert!(refused(&["RRULE:FREQ=DAILY;COUNT=2;UNTIL=20270101"]).contains("not both"));
        assert!(refused(&["RRULE:FREQ=DAILY;BYHOUR=3"]).contains("BYHOUR"));
        assert!(refused(&["RRULE:FREQ=WEEKLY;BYDAY=XX"]).contains("line 1"));
        assert!(refused(&["RRULE:FREQ=MONTHLY;BYMONTHDAY=40"]).contains("BYMONTHDAY"));
        assert!(refused(&["RRULE:FREQ=DAILY;COUNT=5000"]).contains("2000"));
        assert!(refused(&["RRULE:FREQ=DAILY;UNTIL=21000101"]).contains("more than 2000"));
        assert!(refused(&["RRULE:FREQ=DAILY;UNTIL=20200101"]).contains("before"));
        assert!(refused(&["RRULE:FREQ=DAILY", "EXDATE:2026"]).contains("line 2: EXDATE"));
        assert!(refused(&["EXRULE:FREQ=DAILY"]).contains("EXRULE"));
        assert!(refused(&["RRULE:FREQ=DAILY", "RRULE:FREQ=WEEKLY"]).contains("one RRULE"));
    }
}
