//! VTIMEZONE components built from chrono-tz data. Many clients (ICAL.js, Outlook) ignore the
//! IANA name and compute instants from the component's own rules, and ICAL.js misreads RDATE
//! lists, so transitions are grouped into yearly RRULEs wherever one rule fits.

use chrono::{
    DateTime, Datelike, NaiveDate, NaiveDateTime, NaiveTime, Offset, TimeZone, Utc, Weekday,
};
use chrono_tz::{OffsetComponents, OffsetName, Tz, TzOffset};

/// A change of UTC offset (or the start of the covered range); `local` is in the `from` offset.
struct Onset {
    utc: i64,
    local: NaiveDateTime,
    from: i32,
    to: i32,
    daylight: bool,
    name: String,
}

/// How an onset's date is named within its month; the variant order is the preference order.
#[derive(Clone, Copy, PartialEq)]
enum DaySpec {
    Last(Weekday),
    Nth(u32, Weekday),
    MonthDay(u32),
}

/// Consecutive yearly onsets of one class, with the day specs that fit all of them.
struct Group<'a> {
    first: &'a Onset,
    last: &'a Onset,
    specs: Vec<DaySpec>,
}

/// The VTIMEZONE of `tz` that gives the right offset for every instant from `from` to `to`
/// (with a year of margin each side), as unfolded lines without line endings.
pub(crate) fn vtimezone(tz: Tz, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<String> {
    let last_year = to.year() + 1;
    // Start at local midnight so the leading observance reads naturally.
    let midnight = utc_midnight(from.year() - 1);
    let start = midnight - i64::from(seconds(&offset_at(tz, midnight)));
    let lead = onset(tz, start, seconds(&offset_at(tz, start)));
    let onsets = transitions(tz, start, utc_midnight(last_year + 1));

    let mut groups: Vec<Group> = Vec::new();
    for o in &onsets {
        let specs = day_specs(o.local.date());
        let open = groups.iter_mut().find(|g| {
            class(g.last) == class(o)
                && g.last.local.year() + 1 == o.local.year()
                && g.specs.iter().any(|s| specs.contains(s))
        });
        match open {
            Some(g) => {
                g.specs.retain(|s| specs.contains(s));
                g.last = o;
            }
            None => groups.push(Group {
                first: o,
                last: o,
                specs,
            }),
        }
    }

    let mut observances = vec![(lead.local, lead.utc, observance(&lead, None))];
    for g in &groups {
        let rule = (g.first.utc != g.last.utc).then(|| {
            let by = match g.specs[0] {
                DaySpec::Last(w) => format!("BYDAY=-1{}", weekday(w)),
                DaySpec::Nth(n, w) => format!("BYDAY={n}{}", weekday(w)),
                DaySpec::MonthDay(d) => format!("BYMONTHDAY={d}"),
            };
            // A rule that stopped inside the range must not be extrapolated by clients.
            let until = if g.last.local.year() < last_year {
                format!(";UNTIL={}", naive(g.last.utc).format("%Y%m%dT%H%M%SZ"))
            } else {
                String::new()
            };
            format!(
                "RRULE:FREQ=YEARLY;BYMONTH={};{by}{until}",
                g.first.local.month()
            )
        });
        observances.push((g.first.local, g.first.utc, observance(g.first, rule)));
    }
    observances.sort_by_key(|o| (o.0, o.1));

    let mut lines = vec!["BEGIN:VTIMEZONE".to_string(), format!("TZID:{}", tz.name())];
    lines.extend(observances.into_iter().flat_map(|o| o.2));
    lines.push("END:VTIMEZONE".to_string());
    lines
}

/// Every offset change in [start, end]: daily steps, then bisection to the second.
fn transitions(tz: Tz, start: i64, end: i64) -> Vec<Onset> {
    let mut out = Vec::new();
    let (mut t, mut off) = (start, seconds(&offset_at(tz, start)));
    while t < end {
        let next = (t + 86_400).min(end);
        if seconds(&offset_at(tz, next)) == off {
            t = next;
            continue;
        }
        let (mut lo, mut hi) = (t, next);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if seconds(&offset_at(tz, mid)) == off {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let o = onset(tz, hi, off);
        (t, off) = (hi, o.to);
        out.push(o);
    }
    out
}

fn onset(tz: Tz, utc: i64, from: i32) -> Onset {
    let o = offset_at(tz, utc);
    Onset {
        utc,
        local: naive(utc + i64::from(from)),
        from,
        to: seconds(&o),
        daylight: !o.dst_offset().is_zero(),
        name: tz_name(&o),
    }
}

/// Onsets that one yearly rule may cover agree on all of this.
fn class(o: &Onset) -> impl PartialEq + '_ {
    (
        o.daylight,
        o.from,
        o.to,
        &o.name,
        o.local.time(),
        o.local.month(),
    )
}

fn day_specs(d: NaiveDate) -> Vec<DaySpec> {
    let month_len = (28..=31)
        .rev()
        .find(|&n| d.with_day(n).is_some())
        .unwrap_or(28);
    let mut specs = Vec::new();
    if d.day() + 7 > month_len {
        specs.push(DaySpec::Last(d.weekday()));
    }
    if d.day() <= 28 {
        specs.push(DaySpec::Nth(d.day().div_ceil(7), d.weekday()));
    }
    specs.push(DaySpec::MonthDay(d.day()));
    specs
}

fn observance(o: &Onset, rule: Option<String>) -> Vec<String> {
    let kind = if o.daylight { "DAYLIGHT" } else { "STANDARD" };
    let mut lines = vec![
        format!("BEGIN:{kind}"),
        format!("DTSTART:{}", o.local.format("%Y%m%dT%H%M%S")),
    ];
    lines.extend(rule);
    lines.extend([
        format!("TZOFFSETFROM:{}", utc_offset(o.from)),
        format!("TZOFFSETTO:{}", utc_offset(o.to)),
        format!("TZNAME:{}", o.name),
        format!("END:{kind}"),
    ]);
    lines
}

fn offset_at(tz: Tz, utc: i64) -> TzOffset {
    tz.offset_from_utc_datetime(&naive(utc))
}

fn seconds(o: &TzOffset) -> i32 {
    o.fix().local_minus_utc()
}

fn naive(secs: i64) -> NaiveDateTime {
    DateTime::from_timestamp(secs, 0).map_or(NaiveDateTime::MAX, |d| d.naive_utc())
}

fn utc_midnight(year: i32) -> i64 {
    let date = NaiveDate::from_ymd_opt(year, 1, 1).unwrap_or(NaiveDate::MAX);
    date.and_time(NaiveTime::MIN).and_utc().timestamp()
}

/// RFC 5545 UTC-OFFSET: ±HHMM, with seconds only when present.
fn utc_offset(secs: i32) -> String {
    let (sign, a) = (if secs < 0 { '-' } else { '+' }, secs.abs());
    let hm = format!("{sign}{:02}{:02}", a / 3600, a % 3600 / 60);
    if a % 60 == 0 {
        hm
    } else {
        format!("{hm}{:02}", a % 60)
    }
}

/// The abbreviation (TEXT-escaped), or ±HH[MM] where tzdata has only a numeric one.
fn tz_name(o: &TzOffset) -> String {
    match o.abbreviation() {
        Some(a) => a
            .replace('\\', "\\\\")
            .replace(',', "\\,")
            .replace(';', "\\;"),
        None => {
            let numeric = utc_offset(seconds(o));
            match numeric.strip_suffix("00") {
                Some(hours) if hours.len() == 3 => hours.to_string(),
                _ => numeric,
            }
        }
    }
}

fn weekday(w: Weekday) -> &'static str {
    ["MO", "TU", "WE", "TH", "FR", "SA", "SU"][w.num_days_from_monday() as usize]
}

#[cfg(test)]
mod tests {
    //! An independent RFC 5545 reading of the output, checked against chrono-tz.
    use super::vtimezone;
    use chrono::{
        DateTime, Datelike, LocalResult, NaiveDate, NaiveDateTime, Offset, TimeZone, Utc,
    };
    use chrono_tz::Tz;
    use std::collections::HashMap;

    /// (UTC instant, TZOFFSETFROM, TZOFFSETTO) of every onset, sorted.
    type Onsets = Vec<(i64, i64, i64)>;

    fn parse_offset(s: &str) -> i64 {
        let n = |r: std::ops::Range<usize>| s.get(r).map_or(0, |d| d.parse::<i64>().unwrap());
        let sign = if s.starts_with('-') { -1 } else { 1 };
        sign * (n(1..3) * 3600 + n(3..5) * 60 + n(5..7))
    }

    fn timestamp(s: &str, format: &str) -> i64 {
        NaiveDateTime::parse_from_str(s, format)
            .unwrap()
            .and_utc()
            .timestamp()
    }

    /// BYDAY=±nWD within one month: the nth such weekday from the start, or from the end.
    fn by_day(year: i32, month: u32, spec: &str) -> NaiveDate {
        let (n, code) = spec.split_at(spec.len() - 2);
        let n: i32 = n.parse().unwrap();
        let days: Vec<NaiveDate> = (1..=31)
            .filter_map(|d| NaiveDate::from_ymd_opt(year, month, d))
            .filter(|d| d.weekday().to_string()[..2].eq_ignore_ascii_case(code))
            .collect();
        days[if n > 0 { n - 1 } else { days.len() as i32 + n } as usize]
    }

    /// Expands every observance's DTSTART and yearly RRULE up to the end of `last_year`.
    fn expand(lines: &[String], last_year: i32) -> Onsets {
        let (mut out, mut props) = (Vec::new(), HashMap::new());
        for line in lines {
            let (key, value) = line.split_once(':').unwrap();
            match (key, value) {
                ("BEGIN", "STANDARD" | "DAYLIGHT") => props.clear(),
                ("END", "STANDARD" | "DAYLIGHT") => {
                    let from = parse_offset(props["TZOFFSETFROM"]);
                    let to = parse_offset(props["TZOFFSETTO"]);
                    let start = NaiveDateTime::parse_from_str(props["DTSTART"], "%Y%m%dT%H%M%S");
                    let start = start.unwrap();
                    out.push((start.and_utc().timestamp() - from, from, to));
                    let Some(rule) = props.get("RRULE") else {
                        continue;
                    };
                    let rule: HashMap<_, _> =
                        rule.split(';').filter_map(|p| p.split_once('=')).collect();
                    assert_eq!(rule["FREQ"], "YEARLY");
                    let month: u32 = rule["BYMONTH"].parse().unwrap();
                    let until = rule.get("UNTIL").map(|u| timestamp(u, "%Y%m%dT%H%M%SZ"));
                    for year in start.year()..=last_year {
                        let day = match rule.get("BYMONTHDAY") {
                            Some(d) => NaiveDate::from_ymd_opt(year, month, d.parse().unwrap()),
                            None => Some(by_day(year, month, rule["BYDAY"])),
                        };
                        let local = day.unwrap().and_time(start.time());
                        let utc = local.and_utc().timestamp() - from;
                        if until.is_some_and(|u| utc > u) {
                            break;
                        }
                        if local > start {
                            out.push((utc, from, to));
                        }
                    }
                }
                _ => {
                    props.insert(key, value);
                }
            }
        }
        out.sort();
        out
    }

    /// The offset at a UTC instant: TZOFFSETTO of the latest onset at or before it.
    fn rules_offset(onsets: &Onsets, t: i64) -> i64 {
        onsets
            .iter()
            .rev()
            .find(|o| o.0 <= t)
            .expect("before the first onset")
            .2
    }

    /// Wall time (seconds as if UTC) to UTC: the onset in force is the latest begun in wall time.
    fn rules_local_to_utc(onsets: &Onsets, local: i64) -> i64 {
        local - onsets.iter().rev().find(|o| o.0 + o.2 <= local).unwrap().2
    }

    /// Checks the rules against chrono-tz hourly and around every transition.
    fn check(zone: &str, from_year: i32, to_year: i32) -> (Vec<String>, Onsets) {
        let tz: Tz = zone.parse().unwrap();
        let from = Utc.with_ymd_and_hms(from_year, 1, 1, 0, 0, 0).unwrap();
        let to = Utc.with_ymd_and_hms(to_year, 12, 31, 23, 59, 59).unwrap();
        let lines = vtimezone(tz, from, to);
        assert_eq!(lines, vtimezone(tz, from, to), "deterministic");
        assert_eq!(
            lines[..2],
            ["BEGIN:VTIMEZONE".to_string(), format!("TZID:{zone}")]
        );
        assert_eq!(lines.last().unwrap(), "END:VTIMEZONE");
        let onsets = expand(&lines, to_year + 1);
        let truth = |t: i64| {
            let utc = DateTime::from_timestamp(t, 0).unwrap().naive_utc();
            i64::from(tz.offset_from_utc_datetime(&utc).fix().local_minus_utc())
        };
        let range = from.timestamp()..=to.timestamp();
        let mut instants: Vec<i64> = range.clone().step_by(3600).collect();
        // Transitions: those the output claims, and those chrono-tz has (bisected).
        let mut changes: Vec<i64> = onsets.iter().filter(|o| o.1 != o.2).map(|o| o.0).collect();
        for w in instants.windows(2).filter(|w| truth(w[0]) != truth(w[1])) {
            let (mut lo, mut hi) = (w[0], w[1]);
            while hi - lo > 1 {
                let mid = (lo + hi) / 2;
                *(if truth(mid) == truth(lo) {
                    &mut lo
                } else {
                    &mut hi
                }) = mid;
            }
            changes.push(hi);
        }
        for c in changes.into_iter().filter(|c| range.contains(c)) {
            let deltas = [0, 1, 60, 59 * 60, 61 * 60];
            instants.extend(deltas.into_iter().flat_map(|d| [c - d, c + d]));
        }
        let all = lines.join("\n");
        for t in instants {
            let (off, at) = (truth(t), DateTime::from_timestamp(t, 0).unwrap());
            assert_eq!(rules_offset(&onsets, t), off, "{zone} at {at}\n{all}");
            let local = DateTime::from_timestamp(t + off, 0).unwrap().naive_utc();
            if let LocalResult::Single(_) = tz.from_local_datetime(&local) {
                assert_eq!(
                    rules_local_to_utc(&onsets, t + off),
                    t,
                    "{zone} at {local}\n{all}"
                );
            }
        }
        (lines, onsets)
    }

    fn has(lines: &[String], line: &str) -> bool {
        lines.iter().any(|l| l == line)
    }

    #[test]
    fn europe_lisbon() {
        let (lines, onsets) = check("Europe/Lisbon", 2025, 2028);
        let at = |hms| timestamp(&format!("20270328T{hms}"), "%Y%m%dT%H%M%S");
        assert_eq!(
            rules_offset(&onsets, at("003000")),
            0,
            "00:30 UTC/local is WET"
        );
        assert_eq!(rules_offset(&onsets, at("005959")), 0);
        assert_eq!(
            rules_offset(&onsets, at("010000")),
            3600,
            "forward at 01:00 UTC"
        );
        assert_eq!(
            rules_local_to_utc(&onsets, at("023000")),
            at("013000"),
            "02:30 WEST"
        );
        assert!(has(&lines, "RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU"));
    }

    #[test]
    fn europe_lisbon_exact_lines() {
        let from = Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap();
        let to = Utc.with_ymd_and_hms(2027, 12, 31, 0, 0, 0).unwrap();
        let expected = [
            "BEGIN:VTIMEZONE",
            "TZID:Europe/Lisbon",
            "BEGIN:STANDARD",
            "DTSTART:20260101T000000",
            "TZOFFSETFROM:+0000",
            "TZOFFSETTO:+0000",
            "TZNAME:WET",
            "END:STANDARD",
            "BEGIN:DAYLIGHT",
            "DTSTART:20260329T010000",
            "RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU",
            "TZOFFSETFROM:+0000",
            "TZOFFSETTO:+0100",
            "TZNAME:WEST",
            "END:DAYLIGHT",
            "BEGIN:STANDARD",
            "DTSTART:20261025T020000",
            "RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU",
            "TZOFFSETFROM:+0100",
            "TZOFFSETTO:+0000",
            "TZNAME:WET",
            "END:STANDARD",
            "END:VTIMEZONE",
        ];
        assert_eq!(vtimezone(chrono_tz::Europe::Lisbon, from, to), expected);
    }

    #[test]
    fn northern_and_southern_rules() {
        let (lines, _) = check("America/New_York", 2024, 2027);
        assert!(has(&lines, "RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU"));
        assert!(has(&lines, "RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU"));
        let (lines, _) = check("Australia/Sydney", 2024, 2027);
        assert!(has(&lines, "RRULE:FREQ=YEARLY;BYMONTH=4;BYDAY=1SU"));
        assert!(has(&lines, "RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=1SU"));
    }

    #[test]
    fn sao_paulo_dst_abolished() {
        let (lines, onsets) = check("America/Sao_Paulo", 2017, 2021);
        let daylight: Vec<_> = lines.split(|l| l == "BEGIN:DAYLIGHT").skip(1).collect();
        assert!(!daylight.is_empty());
        for obs in daylight {
            let obs = obs.split(|l| l == "END:DAYLIGHT").next().unwrap();
            let rule = obs.iter().find(|l| l.starts_with("RRULE:"));
            assert!(rule.is_none_or(|r| r.contains(";UNTIL=")), "{rule:?}");
        }
        let summer = timestamp("20200115T120000", "%Y%m%dT%H%M%S");
        assert_eq!(rules_offset(&onsets, summer), -3 * 3600);
    }

    #[test]
    fn no_transitions_single_observance() {
        let (lines, _) = check("Asia/Tokyo", 2026, 2026);
        assert_eq!(
            lines[2..].join(" "),
            "BEGIN:STANDARD DTSTART:20250101T000000 TZOFFSETFROM:+0900 TZOFFSETTO:+0900 \
             TZNAME:JST END:STANDARD END:VTIMEZONE"
        );
        let (lines, _) = check("America/Sao_Paulo", 2022, 2026);
        assert_eq!(lines.len(), 9);
    }

    #[test]
    fn fixed_dates_and_numeric_names() {
        let (lines, _) = check("Asia/Tehran", 2020, 2024);
        let rule = "RRULE:FREQ=YEARLY;BYMONTH=3;BYMONTHDAY=22;UNTIL=20220321T203000Z";
        assert!(has(&lines, rule) && has(&lines, "TZNAME:+0330"));
        assert!(has(&check("America/Sao_Paulo", 2017, 2021).0, "TZNAME:-03"));
    }

    #[test]
    fn irregular_zones() {
        for (zone, from, to) in [
            ("Europe/London", 1990, 1999),
            ("Africa/Casablanca", 2024, 2026),
            ("Pacific/Chatham", 2025, 2027),
            ("Australia/Lord_Howe", 2025, 2027),
            ("America/Santiago", 2022, 2026),
            ("Europe/Dublin", 2024, 2026),
            ("Etc/GMT+5", 2026, 2026),
        ] {
            check(zone, from, to);
        }
    }
}
