//! Time-zone values: what the event `timezone` field accepts, and the zone arithmetic the
//! event representation needs: local ↔ UTC conversion with the daylight-saving rules of
//! [`Zone::to_utc`], the offset and the abbreviation at an instant.

use chrono::{DateTime, FixedOffset, NaiveDateTime, Offset, TimeDelta, TimeZone, Utc};
use chrono_tz::{OffsetName, Tz};

use crate::values::{Invalid, SubCode};

/// Bounds of a `UTC±offset` zone, in seconds (−12 … +14 hours).
const MIN_OFFSET_SECONDS: i32 = -12 * 3600;
const MAX_OFFSET_SECONDS: i32 = 14 * 3600;

/// A valid time zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Zone {
    /// `UTC`, the site zone and the default of events.
    Utc,
    /// A zone of the bundled IANA database.
    Named(Tz),
    /// A fixed `UTC±offset` zone; `spelling` is the value as sent, which is also what is stored
    /// and shown (as `timezone` and as `timezone_abbr`).
    Offset { seconds: i32, spelling: String },
}

impl Zone {
    /// Reads a time-zone value. The value is taken as it is: no trimming, and the empty string
    /// is refused (an event write treats `""` as "omitted" before this is called).
    pub fn parse(s: &str) -> Result<Zone, Invalid> {
        // `UTC` is checked before the database, which also knows a zone called `UTC`: it is
        // stored and shown as the plain site zone.
        if s.eq_ignore_ascii_case("UTC") {
            return Ok(Zone::Utc);
        }
        if let Some(seconds) = s
            .get(..3)
            .filter(|prefix| prefix.eq_ignore_ascii_case("UTC"))
            .and_then(|_| parse_hour_offset(&s[3..]))
        {
            return Ok(Zone::Offset {
                seconds,
                spelling: s.to_owned(),
            });
        }
        // chrono-tz only matches names case-insensitively behind a build feature; a scan of the
        // ~600 names is cheap and keeps the dependency plain.
        chrono_tz::TZ_VARIANTS
            .iter()
            .find(|tz| tz.name().eq_ignore_ascii_case(s))
            .map(|tz| Zone::Named(*tz))
            .ok_or_else(|| Invalid::new(SubCode::InvalidFormat, "is not a valid time zone."))
    }

    /// The stored spelling: the database name, `UTC`, or the `UTC±offset` string as sent.
    pub fn name(&self) -> String {
        match self {
            Zone::Utc => "UTC".to_owned(),
            Zone::Named(tz) => tz.name().to_owned(),
            Zone::Offset { spelling, .. } => spelling.clone(),
        }
    }

    /// The instant of a wall-clock value in this zone. A wall clock skipped by a daylight-saving
    /// jump is moved forward by the size of the jump; a repeated one takes its first occurrence
    /// Like chrono's own arithmetic, it panics only at the ends of
    /// chrono's range (year ±262143), far beyond any date-time value.
    pub(crate) fn to_utc(&self, local: NaiveDateTime) -> DateTime<Utc> {
        match self {
            Zone::Utc => local.and_utc(),
            Zone::Offset { seconds, .. } => {
                (local - TimeDelta::seconds(i64::from(*seconds))).and_utc()
            }
            Zone::Named(tz) => match tz.from_local_datetime(&local).earliest() {
                Some(dt) => dt.with_timezone(&Utc),
                // Reading the skipped wall clock with the offset in force just before the gap
                // lands exactly "the size of the jump" later on the new side of it.
                None => (local - offset_before_gap(*tz, local)).and_utc(),
            },
        }
    }

    /// Whether the wall clock `local` names exactly one instant (not one skipped or repeated by
    /// a daylight-saving change).
    pub(crate) fn names_one_instant(&self, local: NaiveDateTime) -> bool {
        match self {
            Zone::Named(tz) => matches!(
                tz.from_local_datetime(&local),
                chrono::LocalResult::Single(_)
            ),
            _ => true,
        }
    }

    /// The wall clock of an instant in this zone (same caveat as [`Zone::to_utc`]).
    pub fn to_local(&self, utc: DateTime<Utc>) -> NaiveDateTime {
        utc.naive_utc() + TimeDelta::seconds(i64::from(self.offset_seconds(utc)))
    }

    /// The zone's offset from UTC at an instant, in seconds east of Greenwich.
    pub fn offset_seconds(&self, utc: DateTime<Utc>) -> i32 {
        match self {
            Zone::Utc => 0,
            Zone::Offset { seconds, .. } => *seconds,
            Zone::Named(tz) => tz
                .offset_from_utc_datetime(&utc.naive_utc())
                .fix()
                .local_minus_utc(),
        }
    }

    /// The abbreviation in force at an instant, as `timezone_abbr` shows it: the
    /// database abbreviation (`EST`/`EDT`, `CEST`), its numeric form for zones that have no letters
    /// (`-03`), `UTC`, or for `UTC±offset` zones the zone string itself.
    pub(crate) fn abbreviation(&self, utc: DateTime<Utc>) -> String {
        match self {
            Zone::Utc => "UTC".to_owned(),
            Zone::Offset { spelling, .. } => spelling.clone(),
            Zone::Named(tz) => {
                let offset = tz.offset_from_utc_datetime(&utc.naive_utc());
                match offset.abbreviation() {
                    Some(abbr) => abbr.to_owned(),
                    None => numeric_abbreviation(offset.fix()),
                }
            }
        }
    }
}

/// The offset of `UTC±H`, `UTC±H:MM`, `UTC±H.5`, `UTC±H.75` (the part after `UTC`), in seconds,
/// when it is well-formed and within −12 … +14 hours.
fn parse_hour_offset(s: &str) -> Option<i32> {
    let sign = match s.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let rest = &s[1..];
    let hours_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    if !(1..=2).contains(&hours_len) {
        return None;
    }
    let hours: i32 = rest[..hours_len].parse().ok()?;
    let minutes = match &rest[hours_len..] {
        "" => 0,
        ".5" => 30,
        ".75" => 45,
        tail => {
            let mm = tail.strip_prefix(':')?;
            if mm.len() != 2 || !mm.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let mm: i32 = mm.parse().ok()?;
            if mm > 59 {
                return None;
            }
            mm
        }
    };
    let seconds = sign * (hours * 3600 + minutes * 60);
    (MIN_OFFSET_SECONDS..=MAX_OFFSET_SECONDS)
        .contains(&seconds)
        .then_some(seconds)
}

/// The offset in force just before the daylight-saving gap that swallows `local`: the offset of
/// the nearest earlier wall clock that exists. Gaps are at most a day long (Samoa skipped
/// 2011-12-30), so the walk back in quarter hours is short and always ends.
fn offset_before_gap(tz: Tz, local: NaiveDateTime) -> TimeDelta {
    const STEP_MINUTES: i64 = 15;
    const MAX_STEPS: i64 = 4 * 48;
    (1..=MAX_STEPS)
        .filter_map(|step| local.checked_sub_signed(TimeDelta::minutes(step * STEP_MINUTES)))
        .find_map(|earlier| tz.from_local_datetime(&earlier).latest())
        .map_or(TimeDelta::zero(), |dt| {
            TimeDelta::seconds(i64::from(dt.offset().fix().local_minus_utc()))
        })
}

/// The tz database's own spelling for an offset without letters: `+05`, `-0330`.
fn numeric_abbreviation(offset: FixedOffset) -> String {
    let seconds = offset.local_minus_utc();
    let sign = if seconds < 0 { '-' } else { '+' };
    let minutes = seconds.unsigned_abs() / 60;
    let (hours, minutes) = (minutes / 60, minutes % 60);
    if minutes == 0 {
        format!("{sign}{hours:02}")
    } else {
        format!("{sign}{hours:02}{minutes:02}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    fn local(y: i32, m: u32, d: u32, h: u32, min: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(y, m, d)
            .unwrap()
            .and_hms_opt(h, min, 0)
            .unwrap()
    }

    fn utc(y: i32, m: u32, d: u32, h: u32, min: u32) -> DateTime<Utc> {
        local(y, m, d, h, min).and_utc()
    }

    fn zone(s: &str) -> Zone {
        Zone::parse(s).unwrap()
    }

    #[test]
    fn iana_names_match_case_insensitively_and_keep_the_database_spelling() {
        assert_eq!(zone("america/new_york"), Zone::Named(Tz::America__New_York));
        assert_eq!(zone("AMERICA/NEW_YORK").name(), "America/New_York");
        assert_eq!(zone("Europe/Berlin").name(), "Europe/Berlin");
        assert_eq!(zone("asia/kolkata").name(), "Asia/Kolkata");
        assert_eq!(zone("etc/gmt+5").name(), "Etc/GMT+5");
    }

    #[test]
    fn utc_in_any_case_is_the_site_zone() {
        for s in ["UTC", "utc", "Utc", "uTc"] {
            assert_eq!(zone(s), Zone::Utc);
            assert_eq!(zone(s).name(), "UTC");
        }
        // Database aliases of UTC stay database zones.
        assert_eq!(zone("Etc/UTC").name(), "Etc/UTC");
    }

    #[test]
    fn utc_offsets_are_kept_verbatim() {
        let cases = [
            ("UTC+5", 5 * 3600),
            ("UTC-3:30", -(3 * 3600 + 1800)),
            ("UTC+5.5", 5 * 3600 + 1800),
            ("UTC+5.75", 5 * 3600 + 2700),
            ("UTC+05:45", 5 * 3600 + 2700),
            ("UTC+14", 14 * 3600),
            ("UTC-12", -12 * 3600),
            ("UTC+0", 0),
            ("UTC-9.5", -(9 * 3600 + 1800)),
            ("utc+8", 8 * 3600),
        ];
        for (s, seconds) in cases {
            assert_eq!(
                zone(s),
                Zone::Offset {
                    seconds,
                    spelling: s.to_owned()
                },
                "{s}"
            );
            assert_eq!(zone(s).name(), s);
        }
    }

    #[test]
    fn everything_else_is_refused() {
        for s in [
            "",
            " UTC",
            "UTC ",
            "America/New York",
            "Mars/Olympus",
            "UTC+",
            "UTC+15",
            "UTC-13",
            "UTC+14.5",
            "UTC-12:30",
            "UTC+5.25",
            "UTC+5.0",
            "UTC+123",
            "UTC+5:3",
            "UTC+5:60",
            "UTC 5",
            "UTC5",
            "+05:00",
            "EST5EDT ",
        ] {
            let err = Zone::parse(s).unwrap_err();
            assert_eq!(err.code, SubCode::InvalidFormat, "{s}");
        }
    }

    #[test]
    fn conversions_in_fixed_zones() {
        let z = zone("UTC+5.5");
        assert_eq!(
            z.to_utc(local(2025, 6, 14, 19, 30)),
            utc(2025, 6, 14, 14, 0)
        );
        assert_eq!(
            z.to_local(utc(2025, 6, 14, 14, 0)),
            local(2025, 6, 14, 19, 30)
        );
        assert_eq!(z.offset_seconds(utc(2025, 1, 1, 0, 0)), 19_800);
        assert_eq!(z.abbreviation(utc(2025, 1, 1, 0, 0)), "UTC+5.5");

        let z = zone("UTC-3:30");
        assert_eq!(z.to_utc(local(2025, 6, 14, 22, 0)), utc(2025, 6, 15, 1, 30));
        assert_eq!(z.abbreviation(utc(2025, 1, 1, 0, 0)), "UTC-3:30");

        assert_eq!(
            Zone::Utc.to_utc(local(2025, 6, 14, 19, 30)),
            utc(2025, 6, 14, 19, 30)
        );
        assert_eq!(
            Zone::Utc.to_local(utc(2025, 6, 14, 19, 30)),
            local(2025, 6, 14, 19, 30)
        );
        assert_eq!(Zone::Utc.offset_seconds(utc(2025, 6, 14, 19, 30)), 0);
        assert_eq!(Zone::Utc.abbreviation(utc(2025, 6, 14, 19, 30)), "UTC");
    }

    #[test]
    fn abbreviations_follow_daylight_saving() {
        let ny = zone("America/New_York");
        assert_eq!(ny.abbreviation(utc(2025, 1, 15, 12, 0)), "EST");
        assert_eq!(ny.abbreviation(utc(2025, 7, 15, 12, 0)), "EDT");
        assert_eq!(ny.offset_seconds(utc(2025, 1, 15, 12, 0)), -5 * 3600);
        assert_eq!(ny.offset_seconds(utc(2025, 7, 15, 12, 0)), -4 * 3600);
        let berlin = zone("Europe/Berlin");
        assert_eq!(berlin.abbreviation(utc(2025, 6, 14, 17, 30)), "CEST");
        assert_eq!(berlin.abbreviation(utc(2025, 1, 14, 17, 30)), "CET");
        assert_eq!(
            zone("Australia/Sydney").abbreviation(utc(2025, 1, 1, 0, 0)),
            "AEDT"
        );
        assert_eq!(zone("Etc/UTC").abbreviation(utc(2025, 1, 1, 0, 0)), "UTC");
    }

    #[test]
    fn zones_without_letters_give_the_numeric_form() {
        assert_eq!(
            zone("America/Sao_Paulo").abbreviation(utc(2025, 1, 1, 0, 0)),
            "-03"
        );
        assert_eq!(
            zone("Asia/Kathmandu").abbreviation(utc(2025, 1, 1, 0, 0)),
            "+0545"
        );
        assert_eq!(
            numeric_abbreviation(FixedOffset::west_opt(12_600).unwrap()),
            "-0330"
        );
        assert_eq!(
            numeric_abbreviation(FixedOffset::east_opt(0).unwrap()),
            "+00"
        );
    }

    #[test]
    fn wall_clocks_in_a_spring_gap_move_forward_by_the_jump() {
        // 2025-03-09 02:00 EST → 03:00 EDT.
        let ny = zone("America/New_York");
        let instant = ny.to_utc(local(2025, 3, 9, 2, 30));
        assert_eq!(instant, utc(2025, 3, 9, 7, 30));
        assert_eq!(ny.to_local(instant), local(2025, 3, 9, 3, 30));
        assert_eq!(ny.abbreviation(instant), "EDT");
        // Either side of the gap is untouched.
        assert_eq!(ny.to_utc(local(2025, 3, 9, 1, 59)), utc(2025, 3, 9, 6, 59));
        assert_eq!(ny.to_utc(local(2025, 3, 9, 3, 0)), utc(2025, 3, 9, 7, 0));

        // Europe/Lisbon: 2025-03-30 01:00 WET → 02:00 WEST.
        let lisbon = zone("Europe/Lisbon");
        let instant = lisbon.to_utc(local(2025, 3, 30, 1, 15));
        assert_eq!(lisbon.to_local(instant), local(2025, 3, 30, 2, 15));

        // Samoa skipped the whole of 2011-12-30 (−10 → +14).
        let apia = zone("Pacific/Apia");
        let instant = apia.to_utc(local(2011, 12, 30, 12, 0));
        assert_eq!(apia.to_local(instant), local(2011, 12, 31, 12, 0));
    }

    #[test]
    fn repeated_wall_clocks_take_their_first_occurrence() {
        // 2025-11-02 02:00 EDT → 01:00 EST: 01:30 happens twice.
        let ny = zone("America/New_York");
        let instant = ny.to_utc(local(2025, 11, 2, 1, 30));
        assert_eq!(instant, utc(2025, 11, 2, 5, 30));
        assert_eq!(ny.abbreviation(instant), "EDT");
        // Europe/Lisbon: 2025-10-26 02:00 WEST → 01:00 WET.
        let lisbon = zone("Europe/Lisbon");
        assert_eq!(
            lisbon.to_utc(local(2025, 10, 26, 1, 30)),
            utc(2025, 10, 26, 0, 30)
        );
    }
}
