//! The demo calendar of `almanac serve --demo`: `data/demo.jsonl`, an export of a generated
//! calendar (data/README.md), built into the binary and moved in time so that it is upcoming.

use super::{import, ImportOptions, ImportSummary, Rejection};
use crate::store::Store;
use crate::values::datetime;
use chrono::{Duration, NaiveDate};

const DEMO: &str = include_str!("../../data/demo.jsonl");

/// The earliest event start of the demo file.
fn first_start(lines: &str) -> Option<NaiveDate> {
    lines
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|v| v["resource"] == "events")
        .filter_map(|v| datetime::parse_formatted(v["data"]["start_date"].as_str()?))
        .map(|d| d.date())
        .min()
}

/// Whole weeks that bring the first event to `today` or the six days after it: weekdays stay
/// what they were (a Friday concert stays on a Friday) and wall-clock times stay as written,
/// while UTC instants are derived again in each event's zone, across daylight-saving changes.
fn shift_to(first: NaiveDate, today: NaiveDate) -> Duration {
    let days = (today - first).num_days();
    Duration::weeks(days.div_euclid(7) + i64::from(days.rem_euclid(7) != 0))
}

/// Loads the demo calendar into `store`; refused lines (none in the shipped file) are
/// handed to `on_reject`.
pub(crate) fn load_demo(
    store: &Store,
    today: NaiveDate,
    on_reject: impl FnMut(Rejection),
) -> Result<ImportSummary, super::ImportError> {
    let shift = first_start(DEMO)
        .map(|first| shift_to(first, today))
        .unwrap_or_else(Duration::zero);
    let options = ImportOptions {
        shift,
        ..ImportOptions::default()
    };
    import(store, DEMO.as_bytes(), &options, |_| {}, on_reject)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Datelike;

    fn day(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn the_shift_is_whole_weeks_landing_on_today_or_the_week_after() {
        let first = day("2026-11-20"); // a Friday
        for today in ["2026-11-20", "2026-11-21", "2027-03-04", "2025-01-01"] {
            let moved = first + shift_to(first, day(today));
            assert_eq!(moved.weekday(), first.weekday());
            let ahead = (moved - day(today)).num_days();
            assert!((0..7).contains(&ahead), "{today}: {moved}");
        }
    }

    #[test]
    fn the_shipped_demo_file_has_events() {
        assert!(first_start(DEMO).is_some());
    }
}
