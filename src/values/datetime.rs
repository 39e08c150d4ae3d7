//! The one date-time grammar (docs/api.md, "Values"): Unix timestamps, calendar dates
//! with optional times and zone designators, keywords, weekdays, times of day and relative
//! offsets, evaluated against a reference zone and the time the request is handled.
//!
//! The plugin hands these values to PHP's free-form parser; almanac accepts exactly the grammar
//! below, read by a small hand-written scanner. The grammar is ASCII-only and each position admits
//! at most one sensible reading, so the scanner never needs more than local look-ahead.

use chrono::{
    DateTime, Datelike, Days, FixedOffset, NaiveDate, NaiveDateTime, NaiveTime, SubsecRound,
    TimeDelta, TimeZone, Utc, Weekday,
};
use serde_json::Value;

use crate::values::timezone::Zone;
use crate::values::{Invalid, SubCode};

/// A parsed date-time: the wall clock in the reference zone and the instant it stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DateTimeValue {
    pub local: NaiveDateTime,
    pub utc: DateTime<Utc>,
}

/// Parses a date-time parameter: a JSON string in the grammar, or a JSON integer read as a Unix
/// timestamp. `zone` is the parameter's reference zone, `now` the time the request is handled.
pub fn parse(value: &Value, zone: &Zone, now: DateTime<Utc>) -> Result<DateTimeValue, Invalid> {
    match value {
        Value::String(s) => parse_str(s, zone, now),
        Value::Number(n) => match n.as_i64() {
            Some(seconds) => from_timestamp(seconds, zone),
            // Floats and integers beyond 64 bits are not timestamps (those are JSON integers).
            None => Err(unrecognised()),
        },
        _ => Err(unrecognised()),
    }
}

/// Parses a date-time string (see [`parse`]).
pub fn parse_str(s: &str, zone: &Zone, now: DateTime<Utc>) -> Result<DateTimeValue, Invalid> {
    let text = s.trim_ascii().to_ascii_lowercase();
    if is_timestamp(&text) {
        // Digits that overflow 64 bits are a timestamp far outside the range, not a bad format.
        return text
            .parse()
            .map_err(|_| out_of_range())
            .and_then(|seconds| from_timestamp(seconds, zone));
    }
    let expression = Scanner::new(text.as_bytes())
        .expression()
        .ok_or_else(unrecognised)?;
    expression.evaluate(zone, now)
}

/// The output form of every date-time in a representation.
const STORED_FORM: &str = "%Y-%m-%d %H:%M:%S";

/// A date-time in the output form of representations.
pub fn format(dt: &NaiveDateTime) -> String {
    dt.format(STORED_FORM).to_string()
}

/// Reads back exactly what [`format`] writes (exported representations), nothing else.
pub(crate) fn parse_formatted(s: &str) -> Option<NaiveDateTime> {
    parse_fixed(s, b' ').or_else(|| NaiveDateTime::parse_from_str(s, STORED_FORM).ok())
}

/// `YYYY-MM-DD?HH:MM:SS` with `separator` for `?`, read digit by digit: the form of every
/// exported date-time (`' '`) and of every stored one (`'T'`, chrono's serde form), read for
/// every line imported and every record decoded, where chrono's general parser took a
/// noticeable share. `None` for anything else, including a leap second, which callers leave
/// to chrono.
pub(crate) fn parse_fixed(s: &str, separator: u8) -> Option<NaiveDateTime> {
    let b: &[u8; 19] = s.as_bytes().try_into().ok()?;
    let punctuation = [
        (4, b'-'),
        (7, b'-'),
        (10, separator),
        (13, b':'),
        (16, b':'),
    ];
    if punctuation.iter().any(|&(at, c)| b[at] != c) {
        return None;
    }
    let number = |from: usize, to: usize| {
        b[from..to].iter().try_fold(0u32, |n, d| {
            d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0'))
        })
    };
    let date = chrono::NaiveDate::from_ymd_opt(
        i32::try_from(number(0, 4)?).ok()?,
        number(5, 7)?,
        number(8, 10)?,
    )?;
    date.and_hms_opt(number(11, 13)?, number(14, 16)?, number(17, 19)?)
}

fn unrecognised() -> Invalid {
    Invalid::new(SubCode::InvalidFormat, "is not a recognised date-time.")
}

fn out_of_range() -> Invalid {
    Invalid::new(
        SubCode::InvalidFormat,
        "is outside the supported range 0001-01-01 00:00:00 to 9999-12-31 23:59:59.",
    )
}

/// `timestamp = ["-"] 1*DIGIT`; it is only ever the whole value (`20240501` is a timestamp, as in
/// PHP).
fn is_timestamp(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

fn from_timestamp(seconds: i64, zone: &Zone) -> Result<DateTimeValue, Invalid> {
    let utc = DateTime::from_timestamp(seconds, 0)
        .filter(|utc| within_working_range(utc.naive_utc()))
        .ok_or_else(out_of_range)?;
    Moment::pinned(zone, utc).finish(zone)
}

/// The first and last representable results.
const FIRST: NaiveDateTime = NaiveDateTime::new(
    NaiveDate::from_ymd_opt(1, 1, 1).expect("a valid date"),
    NaiveTime::MIN,
);
const LAST: NaiveDateTime = NaiveDateTime::new(
    NaiveDate::from_ymd_opt(9999, 12, 31).expect("a valid date"),
    NaiveTime::from_hms_opt(23, 59, 59).expect("a valid time"),
);

/// Offsets may wander outside 0001–9999 on the way (`+20000 years -20000 years` is fine), but
/// chrono panics when a zone conversion crosses the ends of its own range (±262143), so
/// intermediate values are kept well inside it; nothing beyond this bound can come back anyway
/// without equally absurd input.
fn within_working_range(dt: NaiveDateTime) -> bool {
    const LIMIT: i32 = 100_000;
    (-LIMIT..=LIMIT).contains(&dt.year())
}

// ---------------------------------------------------------------------------------------------
// Grammar
// ---------------------------------------------------------------------------------------------

/// The items of one expression, sorted into the slots of the evaluation order.
#[derive(Debug, Default)]
struct Expression {
    now: bool,
    date: Option<DateItem>,
    time: Option<NaiveTime>,
    /// A date and time with a zone designator: an instant, which fills both slots.
    instant: Option<DateTime<Utc>>,
    offsets: Vec<Offset>,
}

#[derive(Debug, Clone, Copy)]
enum DateItem {
    Calendar(NaiveDate),
    Today,
    Tomorrow,
    Yesterday,
    Weekday(Relation, Weekday),
}

#[derive(Debug, Clone, Copy)]
enum Relation {
    /// A bare weekday or `this WEEKDAY`: today or the next occurrence.
    This,
    /// `next WEEKDAY`: strictly after today.
    Next,
    /// `last`/`previous WEEKDAY`: strictly before today.
    Last,
}

#[derive(Debug, Clone, Copy)]
struct Offset {
    amount: i64,
    unit: Unit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Fortnight,
    Month,
    Year,
}

/// One item of the grammar.
enum Item {
    Now,
    Date(DateItem),
    Time(NaiveTime),
    /// A date with a time, one item that fills both slots.
    DateTime(NaiveDate, NaiveTime),
    Zoned(DateTime<Utc>),
    Offset(Offset),
}

impl Expression {
    /// Files an item into its slot; `None` when the slot is taken (two dates, two times).
    fn add(&mut self, item: Item) -> Option<()> {
        let (takes_date, takes_time) = match item {
            Item::Now | Item::Offset(_) => (false, false),
            Item::Date(_) => (true, false),
            Item::Time(_) => (false, true),
            Item::DateTime(..) | Item::Zoned(_) => (true, true),
        };
        let has_date = self.date.is_some() || self.instant.is_some();
        let has_time = self.time.is_some() || self.instant.is_some();
        if (takes_date && has_date) || (takes_time && has_time) {
            return None;
        }
        match item {
            Item::Now => self.now = true,
            Item::Offset(offset) => self.offsets.push(offset),
            Item::Date(date) => self.date = Some(date),
            Item::Time(time) => self.time = Some(time),
            Item::DateTime(date, time) => {
                self.date = Some(DateItem::Calendar(date));
                self.time = Some(time);
            }
            Item::Zoned(instant) => self.instant = Some(instant),
        }
        Some(())
    }
}

/// A cursor over the lower-cased, trimmed value. Every parsing method either consumes what it
/// recognised and returns `Some`, or returns `None` and leaves the position where it was.
struct Scanner<'a> {
    s: &'a [u8],
    pos: usize,
}

impl<'a> Scanner<'a> {
    fn new(s: &'a [u8]) -> Self {
        Scanner { s, pos: 0 }
    }

    /// `expression = item *( 1*SP item )`, with the slot rules and "`now` may not be combined
    /// with a date item".
    fn expression(mut self) -> Option<Expression> {
        let mut expression = Expression::default();
        loop {
            let item = self.item()?;
            expression.add(item)?;
            if self.pos == self.s.len() {
                break;
            }
            if self.spaces() == 0 {
                return None;
            }
        }
        let has_date = expression.date.is_some() || expression.instant.is_some();
        (!(expression.now && has_date)).then_some(expression)
    }

    fn item(&mut self) -> Option<Item> {
        match self.peek()? {
            b'0'..=b'9' => self.numeric_item(),
            b'+' | b'-' => self.offset().map(Item::Offset),
            b'a'..=b'z' => self.word_item(),
            _ => None,
        }
    }

    /// An item that starts with a digit: a date (the separator after the first number says so),
    /// a time (`:` or `am`/`pm`), or an unsigned offset (a unit).
    fn numeric_item(&mut self) -> Option<Item> {
        if let Some(date) = self.attempt(Self::date) {
            return Some(self.after_date(date));
        }
        self.attempt(Self::time)
            .map(Item::Time)
            .or_else(|| self.offset().map(Item::Offset))
    }

    /// `date [ ("T" | 1*SP) time [ *SP zone ] ]`. A time that is not there leaves the date alone
    /// (the following text is then read as the next item).
    fn after_date(&mut self, date: NaiveDate) -> Item {
        let with_time = self.attempt(|s| {
            if !s.eat(b't') && s.spaces() == 0 {
                return None;
            }
            let time = s.time()?;
            let at = date.and_time(time);
            Some(match s.attempt(Self::zone) {
                Some(zone) => {
                    Item::Zoned(zone.from_local_datetime(&at).single()?.with_timezone(&Utc))
                }
                None => Item::DateTime(date, time),
            })
        });
        with_time.unwrap_or(Item::Date(DateItem::Calendar(date)))
    }

    /// `4DIGIT "-" 1*2DIGIT "-" 1*2DIGIT | 4DIGIT "/" 1*2DIGIT "/" 1*2DIGIT |
    /// 1*2DIGIT "/" 1*2DIGIT "/" 4DIGIT`, with the field checks of [`calendar_date`].
    fn date(&mut self) -> Option<NaiveDate> {
        let first = self.digits();
        let (year, month, day) = match (first.len(), self.peek()?) {
            (4, separator @ (b'-' | b'/')) => {
                self.pos += 1;
                let month = self.number(1, 2)?;
                if !self.eat(separator) {
                    return None;
                }
                (to_number(first), month, self.number(1, 2)?)
            }
            (1 | 2, b'/') => {
                self.pos += 1;
                let day = self.number(1, 2)?;
                if !self.eat(b'/') {
                    return None;
                }
                (self.number(4, 4)?, to_number(first), day)
            }
            _ => return None,
        };
        calendar_date(year, month, day)
    }

    /// `time24 | time12`, with range checks on each field; fractions of a second are dropped.
    fn time(&mut self) -> Option<NaiveTime> {
        let hour = self.number(1, 2)?;
        let mut minute = None;
        let mut second = 0;
        let mut fraction = false;
        if self.eat(b':') {
            minute = Some(self.number(2, 2)?);
            if self.eat(b':') {
                second = self.number(2, 2)?;
                if self.eat(b'.') {
                    fraction = true;
                    if self.digits().is_empty() {
                        return None;
                    }
                }
            }
        }
        let before_meridiem = self.pos;
        self.spaces();
        let pm = match self.letters() {
            b"am" => false,
            b"pm" => true,
            _ => {
                // 24-hour clock: minutes are required, and the spaces belong to what follows.
                self.pos = before_meridiem;
                return NaiveTime::from_hms_opt(hour, minute?, second);
            }
        };
        if fraction || !(1..=12).contains(&hour) {
            return None;
        }
        // 12am is midnight and 12pm is noon.
        let hour = hour % 12 + if pm { 12 } else { 0 };
        NaiveTime::from_hms_opt(hour, minute.unwrap_or(0), second)
    }

    /// `*SP zone`: `Z`, `UTC`, `GMT` or `±HH[[:]MM]` (at most ±23:59).
    fn zone(&mut self) -> Option<FixedOffset> {
        self.spaces();
        let seconds = match self.peek()? {
            b'+' | b'-' => {
                // A signed number followed by a unit is an offset item (`+05 days`), which the
                // zone must leave alone.
                if self.offset().is_some() {
                    return None;
                }
                let sign = if self.s[self.pos] == b'-' { -1 } else { 1 };
                self.pos += 1;
                let digits = self.digits();
                let (hours, minutes) = match digits.len() {
                    2 if self.eat(b':') => (to_number(digits), self.number(2, 2)?),
                    2 => (to_number(digits), 0),
                    4 => (to_number(&digits[..2]), to_number(&digits[2..])),
                    _ => return None,
                };
                if hours > 23 || minutes > 59 {
                    return None;
                }
                sign * i32::try_from(hours * 3600 + minutes * 60).ok()?
            }
            _ => match self.letters() {
                b"z" | b"utc" | b"gmt" => 0,
                _ => return None,
            },
        };
        FixedOffset::east_opt(seconds)
    }

    /// `[ "+" | "-" ] 1*DIGIT *SP unit [ 1*SP "ago" ]`.
    fn offset(&mut self) -> Option<Offset> {
        self.attempt(|s| {
            let negative = match s.peek()? {
                b'+' | b'-' => {
                    s.pos += 1;
                    s.s[s.pos - 1] == b'-'
                }
                _ => false,
            };
            let digits = s.digits();
            if digits.is_empty() {
                return None;
            }
            // An amount beyond 64 bits saturates: it is well-formed, and evaluation then
            // reports it out of range.
            let amount = digits
                .iter()
                .try_fold(0i64, |n, d| {
                    n.checked_mul(10)?.checked_add(i64::from(d - b'0'))
                })
                .unwrap_or(i64::MAX);
            s.spaces();
            let unit = unit(s.letters())?;
            let ago = s
                .attempt(|s| (s.spaces() > 0 && s.letters() == b"ago").then_some(()))
                .is_some();
            let amount = if negative != ago { -amount } else { amount };
            Some(Offset { amount, unit })
        })
    }

    /// Keywords, `[ next | last | previous | this ] weekday` and `( next | last ) unit`.
    fn word_item(&mut self) -> Option<Item> {
        let word = self.letters();
        let item = match word {
            b"now" => Item::Now,
            b"today" | b"midnight" => Item::Date(DateItem::Today),
            b"tomorrow" => Item::Date(DateItem::Tomorrow),
            b"yesterday" => Item::Date(DateItem::Yesterday),
            b"noon" => Item::Time(NaiveTime::from_hms_opt(12, 0, 0)?),
            b"next" | b"last" | b"previous" | b"this" => {
                if self.spaces() == 0 {
                    return None;
                }
                let next = self.letters();
                if let Some(day) = weekday(next) {
                    let relation = match word {
                        b"next" => Relation::Next,
                        b"this" => Relation::This,
                        _ => Relation::Last,
                    };
                    Item::Date(DateItem::Weekday(relation, day))
                } else {
                    let amount = match word {
                        b"next" => 1,
                        b"last" => -1,
                        _ => return None,
                    };
                    Item::Offset(Offset {
                        amount,
                        unit: unit(next)?,
                    })
                }
            }
            _ => Item::Date(DateItem::Weekday(Relation::This, weekday(word)?)),
        };
        Some(item)
    }

    /// Runs `parse`, restoring the position when it fails.
    fn attempt<T>(&mut self, parse: impl FnOnce(&mut Self) -> Option<T>) -> Option<T> {
        let start = self.pos;
        let result = parse(self);
        if result.is_none() {
            self.pos = start;
        }
        result
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        if found {
            self.pos += 1;
        }
        found
    }

    fn run(&mut self, class: impl Fn(&u8) -> bool) -> &'a [u8] {
        let start = self.pos;
        let len = self.s[start..].iter().take_while(|b| class(b)).count();
        self.pos += len;
        &self.s[start..self.pos]
    }

    /// The whole run of digits here. No grammar symbol is followed by a digit, so taking the
    /// longest run is always the right split.
    fn digits(&mut self) -> &'a [u8] {
        self.run(u8::is_ascii_digit)
    }

    /// The whole word here; words end where letters end, so `monday` is never read as `mon`.
    fn letters(&mut self) -> &'a [u8] {
        self.run(u8::is_ascii_lowercase)
    }

    fn spaces(&mut self) -> usize {
        self.run(|b| *b == b' ').len()
    }

    /// A run of `min..=max` digits (at most four) as a number.
    fn number(&mut self, min: usize, max: usize) -> Option<u32> {
        self.attempt(|s| {
            let digits = s.digits();
            (min..=max)
                .contains(&digits.len())
                .then(|| to_number(digits))
        })
    }
}

/// The value of at most four ASCII digits.
fn to_number(digits: &[u8]) -> u32 {
    digits.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0'))
}

/// A calendar date after the field checks (year 1–9999, month 1–12, day 1–31): a day beyond the
/// end of its month rolls into the next month, as PHP does (2018-02-30 is 2018-03-02).
fn calendar_date(year: u32, month: u32, day: u32) -> Option<NaiveDate> {
    if !(1..=9999).contains(&year) || !(1..=31).contains(&day) {
        return None;
    }
    NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, month, 1)?
        .checked_add_days(Days::new(u64::from(day - 1)))
}

fn weekday(word: &[u8]) -> Option<Weekday> {
    Some(match word {
        b"monday" | b"mon" => Weekday::Mon,
        b"tuesday" | b"tue" => Weekday::Tue,
        b"wednesday" | b"wed" => Weekday::Wed,
        b"thursday" | b"thu" => Weekday::Thu,
        b"friday" | b"fri" => Weekday::Fri,
        b"saturday" | b"sat" => Weekday::Sat,
        b"sunday" | b"sun" => Weekday::Sun,
        _ => return None,
    })
}

/// `unit = ( sec | second | min | minute | hour | day | week | fortnight | month | year ) [ "s" ]`.
fn unit(word: &[u8]) -> Option<Unit> {
    // No unit name itself ends in "s", so one trailing "s" is always the plural.
    Some(match word.strip_suffix(b"s").unwrap_or(word) {
        b"sec" | b"second" => Unit::Second,
        b"min" | b"minute" => Unit::Minute,
        b"hour" => Unit::Hour,
        b"day" => Unit::Day,
        b"week" => Unit::Week,
        b"fortnight" => Unit::Fortnight,
        b"month" => Unit::Month,
        b"year" => Unit::Year,
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------------
// Meaning
// ---------------------------------------------------------------------------------------------

/// The value under evaluation: a wall clock in the reference zone, and the exact instant when the
/// last step produced one (now, a zoned date-time, elapsed time). The instant matters where the
/// wall clock is ambiguous: `+1 hour` from 01:30 EDT on a fall-back night is 01:30 EST, which the
/// wall clock alone would read as its first occurrence.
struct Moment {
    local: NaiveDateTime,
    instant: Option<DateTime<Utc>>,
}

impl Moment {
    fn pinned(zone: &Zone, instant: DateTime<Utc>) -> Moment {
        Moment {
            local: zone.to_local(instant),
            instant: Some(instant),
        }
    }

    /// A new wall clock from calendar arithmetic; DST is only resolved when an instant is needed,
    /// so `2025-03-09 02:30 +1 day` is 2025-03-10 02:30, not 03:30.
    fn set_local(&mut self, local: NaiveDateTime) -> Option<()> {
        if !within_working_range(local) {
            return None;
        }
        self.local = local;
        self.instant = None;
        Some(())
    }

    fn instant(&self, zone: &Zone) -> DateTime<Utc> {
        self.instant.unwrap_or_else(|| zone.to_utc(self.local))
    }

    fn apply(&mut self, zone: &Zone, Offset { amount, unit }: Offset) -> Option<()> {
        match unit {
            Unit::Second | Unit::Minute | Unit::Hour => {
                let per_unit = match unit {
                    Unit::Second => 1,
                    Unit::Minute => 60,
                    _ => 3600,
                };
                let delta = TimeDelta::try_seconds(amount.checked_mul(per_unit)?)?;
                let instant = self.instant(zone).checked_add_signed(delta)?;
                if !within_working_range(instant.naive_utc()) {
                    return None;
                }
                *self = Moment::pinned(zone, instant);
                Some(())
            }
            Unit::Day | Unit::Week | Unit::Fortnight => {
                let per_unit = match unit {
                    Unit::Day => 1,
                    Unit::Week => 7,
                    _ => 14,
                };
                let delta = TimeDelta::try_days(amount.checked_mul(per_unit)?)?;
                self.set_local(self.local.checked_add_signed(delta)?)
            }
            Unit::Month | Unit::Year => {
                let months = amount.checked_mul(if unit == Unit::Year { 12 } else { 1 })?;
                self.set_local(add_months(self.local, months)?)
            }
        }
    }

    /// The result: DST is resolved (as [`Zone::to_utc`] does) and both the wall clock and the
    /// instant must lie within 0001–9999, so that every representation of the value keeps
    /// four-digit years.
    fn finish(self, zone: &Zone) -> Result<DateTimeValue, Invalid> {
        let utc = self.instant(zone);
        let local = zone.to_local(utc);
        let bounds = FIRST..=LAST;
        if bounds.contains(&local) && bounds.contains(&utc.naive_utc()) {
            Ok(DateTimeValue { local, utc })
        } else {
            Err(out_of_range())
        }
    }
}

impl Expression {
    /// Evaluation order: now in Z, then the date item, the time item, the offsets in
    /// the order written.
    fn evaluate(self, zone: &Zone, now: DateTime<Utc>) -> Result<DateTimeValue, Invalid> {
        // Values are whole seconds, also when they come from the clock.
        let now = now.trunc_subsecs(0);
        let mut moment = Moment::pinned(zone, self.instant.unwrap_or(now));
        if let Some(item) = self.date {
            let date = resolve_date(item, moment.local.date()).ok_or_else(out_of_range)?;
            moment
                .set_local(date.and_time(NaiveTime::MIN))
                .ok_or_else(out_of_range)?;
        }
        if let Some(time) = self.time {
            moment
                .set_local(moment.local.date().and_time(time))
                .ok_or_else(out_of_range)?;
        }
        for offset in self.offsets {
            moment.apply(zone, offset).ok_or_else(out_of_range)?;
        }
        moment.finish(zone)
    }
}

/// The date a date item names, seen from `today`.
fn resolve_date(item: DateItem, today: NaiveDate) -> Option<NaiveDate> {
    match item {
        DateItem::Calendar(date) => Some(date),
        DateItem::Today => Some(today),
        DateItem::Tomorrow => today.succ_opt(),
        DateItem::Yesterday => today.pred_opt(),
        DateItem::Weekday(relation, day) => {
            let ahead =
                (day.num_days_from_monday() + 7 - today.weekday().num_days_from_monday()) % 7;
            match relation {
                Relation::This => today.checked_add_days(Days::new(ahead.into())),
                Relation::Next => {
                    today.checked_add_days(Days::new(if ahead == 0 { 7 } else { ahead }.into()))
                }
                Relation::Last => {
                    let behind = (7 - ahead) % 7;
                    today.checked_sub_days(Days::new(if behind == 0 { 7 } else { behind }.into()))
                }
            }
        }
    }
}

/// Months and years keep the day number and let an impossible day roll into the next month
/// (31 January + 1 month = 3 March in a common year), as PHP does.
fn add_months(local: NaiveDateTime, months: i64) -> Option<NaiveDateTime> {
    let index = i64::from(local.year())
        .checked_mul(12)?
        .checked_add(i64::from(local.month0()))?
        .checked_add(months)?;
    let year = i32::try_from(index.div_euclid(12)).ok()?;
    let month = u32::try_from(index.rem_euclid(12)).ok()? + 1;
    let date = NaiveDate::from_ymd_opt(year, month, 1)?
        .checked_add_days(Days::new(u64::from(local.day0())))?;
    Some(date.and_time(local.time()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ny() -> Zone {
        Zone::parse("America/New_York").unwrap()
    }

    /// Wednesday 2025-03-05 14:20:00 in New York (EST, UTC−5).
    fn now() -> DateTime<Utc> {
        utc("2025-03-05 19:20:00")
    }

    fn naive(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").unwrap()
    }

    fn utc(s: &str) -> DateTime<Utc> {
        naive(s).and_utc()
    }

    #[test]
    fn formatted_date_times_read_back_as_chrono_reads_them() {
        for s in [
            "2026-11-22 01:37:00",
            "0001-01-01 00:00:00",
            "9999-12-31 23:59:59",
            "2024-02-29 12:00:00",
            "2025-02-29 12:00:00",
            "2026-13-01 00:00:00",
            "2026-11-22 24:00:00",
            "2026-11-22 23:60:00",
            "2016-12-31 23:59:60",
            "2026-1-5 1:2:3",
            "2026-11-22T01:37:00",
            "2026-11-22 01:37:0x",
            "+2026-11-22 01:37:0",
            "2026-11-22 01:37:00.5",
            "",
        ] {
            assert_eq!(
                parse_formatted(s),
                NaiveDateTime::parse_from_str(s, STORED_FORM).ok(),
                "{s:?}"
            );
        }
        assert_eq!(
            parse_fixed("2026-11-22T01:37:00", b'T'),
            Some(naive("2026-11-22 01:37:00"))
        );
    }

    /// The local result of `s` in `zone` at `now()`, formatted.
    fn local_in(s: &str, zone: &Zone) -> String {
        let value = parse_str(s, zone, now()).unwrap_or_else(|e| panic!("{s:?}: {e}"));
        format(&value.local)
    }

    fn local(s: &str) -> String {
        local_in(s, &ny())
    }

    fn utc_of(s: &str, zone: &Zone) -> String {
        format(&parse_str(s, zone, now()).unwrap().utc.naive_utc())
    }

    fn refused(s: &str) -> Invalid {
        match parse_str(s, &ny(), now()) {
            Ok(v) => panic!("{s:?} was accepted as {}", format(&v.local)),
            Err(e) => e,
        }
    }

    fn assert_refused(s: &str) {
        let err = refused(s);
        assert_eq!(err.code, SubCode::InvalidFormat, "{s:?}");
        assert_eq!(err.reason, "is not a recognised date-time.", "{s:?}");
    }

    fn assert_out_of_range(s: &str) {
        let err = refused(s);
        assert_eq!(err.code, SubCode::InvalidFormat, "{s:?}");
        assert!(
            err.reason.starts_with("is outside"),
            "{s:?}: {}",
            err.reason
        );
    }

    #[test]
    fn specification_examples() {
        let cases = [
            ("tomorrow 9am", "2025-03-06 09:00:00"),
            ("yesterday 23:59", "2025-03-04 23:59:00"),
            ("next wednesday 4pm", "2025-03-12 16:00:00"),
            ("Wednesday", "2025-03-05 00:00:00"),
            ("+1 week", "2025-03-12 14:20:00"),
            ("2 days ago", "2025-03-03 14:20:00"),
            ("+1 day 9am", "2025-03-06 09:00:00"),
            ("2018-01-01 4pm", "2018-01-01 16:00:00"),
            ("01/02/2018", "2018-01-02 00:00:00"),
            ("2018-01-01T16:00:00Z", "2018-01-01 11:00:00"),
            ("1514822400", "2018-01-01 11:00:00"),
        ];
        for (input, expected) in cases {
            assert_eq!(local(input), expected, "{input:?}");
        }
        assert_eq!(utc_of("2018-01-01T16:00:00Z", &ny()), "2018-01-01 16:00:00");
        assert_eq!(utc_of("1514822400", &ny()), "2018-01-01 16:00:00");
        assert_eq!(utc_of("tomorrow 9am", &ny()), "2025-03-06 14:00:00");
    }

    #[test]
    fn plugin_examples() {
        assert_eq!(local("2018-01-01 16:00:00"), "2018-01-01 16:00:00");
        assert_eq!(local("+24 months"), "2027-03-05 14:20:00");
        assert_eq!(local("now"), "2025-03-05 14:20:00");
    }

    #[test]
    fn calendar_dates() {
        assert_eq!(local("2025-06-14"), "2025-06-14 00:00:00");
        assert_eq!(local("2025-6-4"), "2025-06-04 00:00:00");
        assert_eq!(local("2025/06/14"), "2025-06-14 00:00:00");
        assert_eq!(local("2025/6/4"), "2025-06-04 00:00:00");
        assert_eq!(local("06/14/2025"), "2025-06-14 00:00:00");
        assert_eq!(local("6/4/2025"), "2025-06-04 00:00:00");
        assert_eq!(local("0001-01-01"), "0001-01-01 00:00:00");
        assert_eq!(
            local_in("9999-12-31 23:59:59", &Zone::Utc),
            "9999-12-31 23:59:59"
        );
    }

    #[test]
    fn impossible_days_roll_over_as_in_php() {
        assert_eq!(local("2018-02-30"), "2018-03-02 00:00:00");
        assert_eq!(local("2018-02-31 10:00"), "2018-03-03 10:00:00");
        assert_eq!(local("2024-02-30"), "2024-03-01 00:00:00");
        assert_eq!(local("2025-04-31"), "2025-05-01 00:00:00");
        assert_eq!(local("02/29/2025"), "2025-03-01 00:00:00");
        assert_eq!(local("9999-12-31"), "9999-12-31 00:00:00");
    }

    #[test]
    fn dates_with_times() {
        assert_eq!(local("2025-06-14 19:30"), "2025-06-14 19:30:00");
        assert_eq!(local("2025-06-14T19:30"), "2025-06-14 19:30:00");
        assert_eq!(local("2025-06-14t19:30:05"), "2025-06-14 19:30:05");
        assert_eq!(local("2025-06-14   19:30:05.123456"), "2025-06-14 19:30:05");
        assert_eq!(local("2025/06/14 7pm"), "2025-06-14 19:00:00");
        assert_eq!(local("06/14/2025 7:15 PM"), "2025-06-14 19:15:00");
        assert_eq!(local("2025-06-14 7:15:30pm"), "2025-06-14 19:15:30");
        // The time may also come first, as a separate item.
        assert_eq!(local("9am 2025-06-14"), "2025-06-14 09:00:00");
        assert_eq!(local("noon 2025-06-14"), "2025-06-14 12:00:00");
        // A number after a date is a time only with `:` or `am`/`pm`.
        assert_eq!(local("2025-06-14 9 days"), "2025-06-23 00:00:00");
        assert_eq!(local("2025-06-14 12 pm"), "2025-06-14 12:00:00");
    }

    #[test]
    fn times_of_day() {
        assert_eq!(local("9am"), "2025-03-05 09:00:00");
        assert_eq!(local("9 am"), "2025-03-05 09:00:00");
        assert_eq!(local("9:30pm"), "2025-03-05 21:30:00");
        assert_eq!(local("09:30:15 pm"), "2025-03-05 21:30:15");
        assert_eq!(local("0:00"), "2025-03-05 00:00:00");
        assert_eq!(local("23:59:59"), "2025-03-05 23:59:59");
        assert_eq!(local("7:05"), "2025-03-05 07:05:00");
        assert_eq!(local("noon"), "2025-03-05 12:00:00");
        assert_eq!(local("12am"), "2025-03-05 00:00:00");
        assert_eq!(local("12pm"), "2025-03-05 12:00:00");
        assert_eq!(local("12:30am"), "2025-03-05 00:30:00");
        assert_eq!(local("12:30 pm"), "2025-03-05 12:30:00");
        assert_eq!(local("1am"), "2025-03-05 01:00:00");
        assert_eq!(local("11pm"), "2025-03-05 23:00:00");
    }

    #[test]
    fn keywords() {
        assert_eq!(local("today"), "2025-03-05 00:00:00");
        assert_eq!(local("midnight"), "2025-03-05 00:00:00");
        assert_eq!(local("tomorrow"), "2025-03-06 00:00:00");
        assert_eq!(local("yesterday"), "2025-03-04 00:00:00");
        assert_eq!(local("now 9am"), "2025-03-05 09:00:00");
        assert_eq!(local("today noon"), "2025-03-05 12:00:00");
        assert_eq!(local("noon tomorrow"), "2025-03-06 12:00:00");
        assert_eq!(local("now +1 hour"), "2025-03-05 15:20:00");
        // The clock's fraction of a second is dropped.
        let precise = now() + TimeDelta::milliseconds(999);
        let value = parse_str("now", &Zone::Utc, precise).unwrap();
        assert_eq!(value.utc, now());
        assert_eq!(value.local, now().naive_utc());
    }

    #[test]
    fn weekdays() {
        // Today is a Wednesday.
        assert_eq!(local("wednesday"), "2025-03-05 00:00:00");
        assert_eq!(local("wed"), "2025-03-05 00:00:00");
        assert_eq!(local("this wednesday"), "2025-03-05 00:00:00");
        assert_eq!(local("next wednesday"), "2025-03-12 00:00:00");
        assert_eq!(local("last wednesday"), "2025-02-26 00:00:00");
        assert_eq!(local("previous wed"), "2025-02-26 00:00:00");
        assert_eq!(local("thursday"), "2025-03-06 00:00:00");
        assert_eq!(local("thu"), "2025-03-06 00:00:00");
        assert_eq!(local("next thursday"), "2025-03-06 00:00:00");
        assert_eq!(local("this thu"), "2025-03-06 00:00:00");
        assert_eq!(local("last thursday"), "2025-02-27 00:00:00");
        assert_eq!(local("tuesday"), "2025-03-11 00:00:00");
        assert_eq!(local("next tue"), "2025-03-11 00:00:00");
        assert_eq!(local("last tuesday"), "2025-03-04 00:00:00");
        assert_eq!(local("monday"), "2025-03-10 00:00:00");
        assert_eq!(local("friday"), "2025-03-07 00:00:00");
        assert_eq!(local("sat"), "2025-03-08 00:00:00");
        assert_eq!(local("sunday"), "2025-03-09 00:00:00");
        assert_eq!(local("last sun"), "2025-03-02 00:00:00");
        assert_eq!(local("friday 8pm"), "2025-03-07 20:00:00");
        assert_eq!(local("monday +1 week"), "2025-03-17 00:00:00");
    }

    #[test]
    fn offsets() {
        assert_eq!(local("+1 day"), "2025-03-06 14:20:00");
        assert_eq!(local("1 day"), "2025-03-06 14:20:00");
        assert_eq!(local("-1 day"), "2025-03-04 14:20:00");
        assert_eq!(local("+1day"), "2025-03-06 14:20:00");
        assert_eq!(local("+3 days"), "2025-03-08 14:20:00");
        assert_eq!(local("-3 days ago"), "2025-03-08 14:20:00");
        assert_eq!(local("+30 sec"), "2025-03-05 14:20:30");
        assert_eq!(local("+30 secs"), "2025-03-05 14:20:30");
        assert_eq!(local("+90 seconds"), "2025-03-05 14:21:30");
        assert_eq!(local("+1 second"), "2025-03-05 14:20:01");
        assert_eq!(local("+5 min"), "2025-03-05 14:25:00");
        assert_eq!(local("+5 mins"), "2025-03-05 14:25:00");
        assert_eq!(local("-20 minutes"), "2025-03-05 14:00:00");
        assert_eq!(local("+1 minute"), "2025-03-05 14:21:00");
        assert_eq!(local("+2 hours"), "2025-03-05 16:20:00");
        assert_eq!(local("+10 hour"), "2025-03-06 00:20:00");
        assert_eq!(local("+2 weeks"), "2025-03-19 14:20:00");
        assert_eq!(local("+1 fortnight"), "2025-03-19 14:20:00");
        assert_eq!(local("2 fortnights ago"), "2025-02-05 14:20:00");
        assert_eq!(local("+1 month"), "2025-04-05 14:20:00");
        assert_eq!(local("-3 months"), "2024-12-05 14:20:00");
        assert_eq!(local("+1 year"), "2026-03-05 14:20:00");
        assert_eq!(local("10 years ago"), "2015-03-05 14:20:00");
        assert_eq!(local("next week"), "2025-03-12 14:20:00");
        assert_eq!(local("last week"), "2025-02-26 14:20:00");
        assert_eq!(local("next month"), "2025-04-05 14:20:00");
        assert_eq!(local("last year"), "2024-03-05 14:20:00");
        assert_eq!(local("next day"), "2025-03-06 14:20:00");
        assert_eq!(local("next hour"), "2025-03-05 15:20:00");
        assert_eq!(local("+0 days"), "2025-03-05 14:20:00");
        assert_eq!(local("+007 days"), "2025-03-12 14:20:00");
    }

    #[test]
    fn offsets_apply_in_the_order_written_after_date_and_time() {
        assert_eq!(local("tomorrow +2 hours"), "2025-03-06 02:00:00");
        assert_eq!(local("+2 hours tomorrow"), "2025-03-06 02:00:00");
        assert_eq!(local("+1 day +1 month"), "2025-04-06 14:20:00");
        // 2025-01-31 + 1 month = 2025-02-31 → 2025-03-03; then − 1 month = 2025-02-03.
        assert_eq!(local("2025-01-31 +1 month -1 month"), "2025-02-03 00:00:00");
        assert_eq!(local("2025-01-31 -1 month +1 month"), "2025-01-31 00:00:00");
        assert_eq!(
            local("2025-03-05 10:00 +1 week 2 days ago"),
            "2025-03-10 10:00:00"
        );
        assert_eq!(
            local("2025-01-01 +1 year +1 month +1 week +1 day +1 hour +1 min +1 sec"),
            "2026-02-09 01:01:01"
        );
    }

    #[test]
    fn months_and_years_roll_impossible_days_over() {
        assert_eq!(local("2025-01-31 +1 month"), "2025-03-03 00:00:00");
        assert_eq!(local("2024-01-31 +1 month"), "2024-03-02 00:00:00");
        assert_eq!(local("2024-02-29 +1 year"), "2025-03-01 00:00:00");
        assert_eq!(local("2024-02-29 -4 years"), "2020-02-29 00:00:00");
        assert_eq!(local("2025-03-31 -1 month"), "2025-03-03 00:00:00");
        assert_eq!(local("2025-12-15 +1 month"), "2026-01-15 00:00:00");
        assert_eq!(local("2025-01-15 -13 months"), "2023-12-15 00:00:00");
    }

    #[test]
    fn case_and_whitespace() {
        assert_eq!(local("TOMORROW 9AM"), "2025-03-06 09:00:00");
        assert_eq!(local("Next Wednesday 4PM"), "2025-03-12 16:00:00");
        assert_eq!(local("  tomorrow   9am  "), "2025-03-06 09:00:00");
        assert_eq!(local("\ttomorrow 9am\n"), "2025-03-06 09:00:00");
        assert_eq!(local("2 DAYS AGO"), "2025-03-03 14:20:00");
        assert_eq!(local("+1 Week"), "2025-03-12 14:20:00");
        assert_eq!(local(" 1514822400 "), "2018-01-01 11:00:00");
        // Tokens are separated by spaces only.
        assert_refused("tomorrow\t9am");
        assert_refused("tomorrow\n9am");
    }

    #[test]
    fn zone_designators_give_an_instant_converted_into_the_reference_zone() {
        let cases = [
            ("2018-01-01T16:00:00Z", "2018-01-01 16:00:00"),
            ("2018-01-01T16:00:00z", "2018-01-01 16:00:00"),
            ("2018-01-01 16:00 Z", "2018-01-01 16:00:00"),
            ("2018-01-01 16:00 UTC", "2018-01-01 16:00:00"),
            ("2018-01-01 16:00utc", "2018-01-01 16:00:00"),
            ("2018-01-01 16:00 GMT", "2018-01-01 16:00:00"),
            ("2018-01-01 16:00+05", "2018-01-01 11:00:00"),
            ("2018-01-01 16:00 +05", "2018-01-01 11:00:00"),
            ("2018-01-01 16:00:00+0530", "2018-01-01 10:30:00"),
            ("2018-01-01T16:00:00-05:30", "2018-01-01 21:30:00"),
            ("2018-01-01 16:00:00.250+01:00", "2018-01-01 15:00:00"),
            ("2018-01-01 4pm +01:00", "2018-01-01 15:00:00"),
            ("2018-01-01 4pm z", "2018-01-01 16:00:00"),
            ("2018-01-01 16:00 +23:59", "2017-12-31 16:01:00"),
            ("2018-01-01 16:00 -2359", "2018-01-02 15:59:00"),
        ];
        for (input, expected_utc) in cases {
            assert_eq!(utc_of(input, &ny()), expected_utc, "{input:?}");
            assert_eq!(utc_of(input, &Zone::Utc), expected_utc, "{input:?}");
        }
        // The wall clock is the instant's in Z, not the sent offset's.
        assert_eq!(local("2018-07-01T16:00:00+02:00"), "2018-07-01 10:00:00");
        let berlin = Zone::parse("Europe/Berlin").unwrap();
        assert_eq!(
            local_in("2025-06-14T17:30:00Z", &berlin),
            "2025-06-14 19:30:00"
        );
        // Offsets after a zoned value work from the converted wall clock.
        assert_eq!(local("2018-01-01T16:00:00Z +1 day"), "2018-01-02 11:00:00");
        assert_eq!(local("2018-01-01T16:00:00Z +1 hour"), "2018-01-01 12:00:00");
    }

    #[test]
    fn a_signed_number_with_a_unit_after_a_time_is_an_offset_not_a_zone() {
        assert_eq!(local("2018-01-01 16:00 +05 days"), "2018-01-06 16:00:00");
        assert_eq!(local("2018-01-01 16:00 -02 hours"), "2018-01-01 14:00:00");
        assert_eq!(local("2018-01-01 16:00 +0530 min"), "2018-01-02 00:50:00");
        assert_eq!(local("2018-01-01 16:00 +5 days"), "2018-01-06 16:00:00");
    }

    #[test]
    fn zones_are_refused_where_the_grammar_has_none() {
        for s in [
            "16:00Z",
            "16:00 +05:00",
            "2018-01-01 Z",
            "2018-01-01Z",
            "tomorrow 9am Z",
            "2018-01-01 16:00 +5",
            "2018-01-01 16:00 +053",
            "2018-01-01 16:00 +05:3",
            "2018-01-01 16:00 +24",
            "2018-01-01 16:00 +05:60",
            "2018-01-01 16:00 +0560",
            "2018-01-01 16:00 est",
            "2018-01-01 16:00 Z Z",
            "2018-01-01 16:00 +05:00 +05:00",
            "2018-01-01 16:00 zulu",
            "2018-01-01T16:00:00 Z +1",
        ] {
            assert_refused(s);
        }
    }

    #[test]
    fn timestamps() {
        assert_eq!(utc_of("0", &ny()), "1970-01-01 00:00:00");
        assert_eq!(local("0"), "1969-12-31 19:00:00");
        assert_eq!(utc_of("-86400", &ny()), "1969-12-31 00:00:00");
        assert_eq!(utc_of("-1", &Zone::Utc), "1969-12-31 23:59:59");
        // Compact dates are timestamps, as in PHP.
        assert_eq!(utc_of("20240501", &Zone::Utc), "1970-08-23 06:21:41");
        assert_eq!(utc_of("2025", &Zone::Utc), "1970-01-01 00:33:45");
        assert_eq!(utc_of("0001514822400", &Zone::Utc), "2018-01-01 16:00:00");
        assert_eq!(utc_of("253402300799", &Zone::Utc), "9999-12-31 23:59:59");
        assert_eq!(utc_of("-62135596800", &Zone::Utc), "0001-01-01 00:00:00");
        assert_out_of_range("253402300800");
        assert_out_of_range("-62135596801");
        assert_out_of_range("99999999999999999999999");
        // A timestamp is the whole value; signs other than a leading minus are not timestamps.
        assert_refused("+1514822400");
        assert_refused("1514822400 +1 day");
        assert_refused("- 5");
        assert_refused("1514822400.5");
    }

    #[test]
    fn json_values() {
        let zone = ny();
        let from_integer = parse(&json!(1514822400), &zone, now()).unwrap();
        assert_eq!(format(&from_integer.local), "2018-01-01 11:00:00");
        assert_eq!(from_integer.utc, utc("2018-01-01 16:00:00"));
        let negative = parse(&json!(-86400), &Zone::Utc, now()).unwrap();
        assert_eq!(format(&negative.local), "1969-12-31 00:00:00");
        let from_string = parse(&json!("tomorrow 9am"), &zone, now()).unwrap();
        assert_eq!(format(&from_string.local), "2025-03-06 09:00:00");
        for value in [
            json!(1514822400.0),
            json!(1.5),
            json!(true),
            json!(null),
            json!([1]),
            json!({}),
            json!(u64::MAX),
        ] {
            let err = parse(&value, &zone, now()).unwrap_err();
            assert_eq!(err.code, SubCode::InvalidFormat, "{value}");
        }
        assert_eq!(
            parse(&json!(i64::MAX), &zone, now()).unwrap_err().code,
            SubCode::InvalidFormat
        );
    }

    #[test]
    fn field_checks() {
        for s in [
            "2025-13-01",
            "2025-00-10",
            "2025-01-00",
            "2025-01-32",
            "0000-01-01",
            "13/01/2025",
            "01/32/2025",
            "25:00",
            "24:00",
            "23:60",
            "23:59:60",
            "13pm",
            "0am",
            "00:30 am",
            "13:00 pm",
            "12:60pm",
            "9:30:00.5pm",
        ] {
            assert_refused(s);
        }
    }

    #[test]
    fn results_must_stay_within_years_0001_to_9999() {
        assert_out_of_range("9999-12-31 23:59:59 +1 sec");
        assert_out_of_range("0001-01-01 -1 day");
        assert_out_of_range("+8000 years");
        assert_out_of_range("-3000 years");
        assert_out_of_range("+99999999999999 years");
        assert_out_of_range("+9999999999999999999 days");
        assert_out_of_range("+999999999999999999 seconds");
        // In a zone west of UTC, the UTC instant of the last local second is in year 10000.
        assert_out_of_range("9999-12-31 23:00");
        assert_eq!(
            local_in("9999-12-31 23:00", &Zone::Utc),
            "9999-12-31 23:00:00"
        );
        // Intermediate values may leave the range as long as the result comes back.
        assert_eq!(local("9999-12-01 +1 month -1 month"), "9999-12-01 00:00:00");
        assert_eq!(
            local("2025-01-01 +20000 years -20000 years"),
            "2025-01-01 00:00:00"
        );
        assert_out_of_range("2025-01-01 +200000 years -200000 years");
    }

    #[test]
    fn refused_date_time_values() {
        for s in [
            "",
            "   ",
            "not-a-date",
            "January 5 2018",
            "jan 5",
            "14.06.2025",
            "14-06-2025",
            "2025.06.14",
            "first day of next month",
            "second monday",
            "before my birthday",
            "now tomorrow",
            "tomorrow now",
            "now 2018-01-01",
            "now 2018-01-01T16:00Z",
            "2018-01-01 2018-01-02",
            "tomorrow yesterday",
            "today midnight",
            "monday 2018-01-01",
            "2018-01-01 16:00 2018-01-02",
            "9am 10am",
            "tomorrow 9am 10:00",
            "2018-01-01 16:00 17:00",
            "2018-01-01T16:00Z 9am",
            "noon 9am",
            "next",
            "next 2 days",
            "this week",
            "previous week",
            "+1",
            "1 day ago ago",
            "+ 1 day",
            "++1 day",
            "1 days5",
            "+1 lightyear",
            "tomorrow 9",
            "2018-01-01T",
            "2018-01-01T 16:00",
            "2018-01-01 16",
            "2018-1-1-1",
            "2018/01-01",
            "201-01-01",
            "20180-01-01",
            "01/02/18",
            "01/02/20180",
            "2018-001-01",
            "16:0",
            "16:00:0",
            "16:00:",
            "16:00:00.",
            "16:00.5",
            "9amtomorrow",
            "tomorrow,9am",
            "mondays",
            "wednesdayy",
            "wednes",
            "tomorrow9am",
            "2018‐01‐01",
            "２０１８-01-01",
            "nächsten montag",
        ] {
            assert_refused(s);
        }
    }

    #[test]
    fn daylight_saving_gap_moves_forward() {
        let ny = ny();
        // 2025-03-09 02:00 EST → 03:00 EDT.
        let v = parse_str("2025-03-09 02:30", &ny, now()).unwrap();
        assert_eq!(format(&v.local), "2025-03-09 03:30:00");
        assert_eq!(v.utc, utc("2025-03-09 07:30:00"));
        assert_eq!(local("2025-03-09 01:59:59"), "2025-03-09 01:59:59");
        assert_eq!(local("2025-03-09 03:00"), "2025-03-09 03:00:00");
        // Calendar arithmetic only resolves the gap at the end.
        assert_eq!(local("2025-03-09 02:30 +1 day"), "2025-03-10 02:30:00");
        assert_eq!(local("2025-03-08 02:30 +1 day"), "2025-03-09 03:30:00");
        // Elapsed time crosses the gap as time, not as wall clock.
        assert_eq!(local("2025-03-09 01:30 +1 hour"), "2025-03-09 03:30:00");
        assert_eq!(local("2025-03-09 00:00 +3 hours"), "2025-03-09 04:00:00");

        let lisbon = Zone::parse("Europe/Lisbon").unwrap();
        // 2025-03-30 01:00 WET → 02:00 WEST.
        let v = parse_str("2025-03-30 01:30", &lisbon, now()).unwrap();
        assert_eq!(format(&v.local), "2025-03-30 02:30:00");
        assert_eq!(v.utc, utc("2025-03-30 01:30:00"));
        assert_eq!(local_in("2025-03-30 1am", &lisbon), "2025-03-30 02:00:00");
    }

    #[test]
    fn daylight_saving_ambiguity_takes_the_first_occurrence() {
        let ny = ny();
        // 2025-11-02 02:00 EDT → 01:00 EST.
        let v = parse_str("2025-11-02 01:30", &ny, now()).unwrap();
        assert_eq!(format(&v.local), "2025-11-02 01:30:00");
        assert_eq!(v.utc, utc("2025-11-02 05:30:00"));
        // Elapsed time reaches the second occurrence, which keeps its own instant.
        let v = parse_str("2025-11-02 00:30 +2 hours", &ny, now()).unwrap();
        assert_eq!(format(&v.local), "2025-11-02 01:30:00");
        assert_eq!(v.utc, utc("2025-11-02 06:30:00"));
        let v = parse_str("2025-11-02 01:30 +1 hour", &ny, now()).unwrap();
        assert_eq!(format(&v.local), "2025-11-02 01:30:00");
        assert_eq!(v.utc, utc("2025-11-02 06:30:00"));
        // A zoned instant in the second occurrence keeps it too.
        let v = parse_str("2025-11-02T06:30:00Z", &ny, now()).unwrap();
        assert_eq!(format(&v.local), "2025-11-02 01:30:00");
        assert_eq!(v.utc, utc("2025-11-02 06:30:00"));

        let lisbon = Zone::parse("Europe/Lisbon").unwrap();
        // 2025-10-26 02:00 WEST → 01:00 WET.
        let v = parse_str("2025-10-26 01:30", &lisbon, now()).unwrap();
        assert_eq!(v.utc, utc("2025-10-26 00:30:00"));
    }

    #[test]
    fn relative_values_start_from_now_in_the_reference_zone() {
        // 2025-03-05 19:20 UTC is already the next day in Tokyo and Kiritimati.
        let tokyo = Zone::parse("Asia/Tokyo").unwrap();
        assert_eq!(local_in("today", &tokyo), "2025-03-06 00:00:00");
        assert_eq!(local_in("now", &tokyo), "2025-03-06 04:20:00");
        assert_eq!(utc_of("today", &tokyo), "2025-03-05 15:00:00");
        assert_eq!(local_in("today", &Zone::Utc), "2025-03-05 00:00:00");
        assert_eq!(local_in("wednesday", &tokyo), "2025-03-12 00:00:00");
    }

    #[test]
    fn utc_offset_zones_use_their_fixed_offset() {
        let india = Zone::parse("UTC+5.5").unwrap();
        assert_eq!(local_in("now", &india), "2025-03-06 00:50:00");
        assert_eq!(local_in("tomorrow 9am", &india), "2025-03-07 09:00:00");
        assert_eq!(utc_of("2025-06-14 19:30", &india), "2025-06-14 14:00:00");
        assert_eq!(local_in("1514822400", &india), "2018-01-01 21:30:00");
        let west = Zone::parse("UTC-3:30").unwrap();
        assert_eq!(utc_of("2025-06-14 22:00", &west), "2025-06-15 01:30:00");
        assert_eq!(
            local_in("2025-06-14T22:00:00Z", &west),
            "2025-06-14 18:30:00"
        );
    }

    #[test]
    fn output_format() {
        assert_eq!(format(&naive("2025-06-14 07:05:09")), "2025-06-14 07:05:09");
        assert_eq!(format(&naive("0001-01-01 00:00:00")), "0001-01-01 00:00:00");
    }
}
