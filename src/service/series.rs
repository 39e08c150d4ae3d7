//! Recurring events: a series' occurrences follow it. Every write of a series' event record
//! is followed, in the same transaction, by [`follow`]: the rule is expanded again and each
//! occurrence's record rewritten from the series, keeping the ID of every occurrence whose
//! original start the rule still gives (see docs/api.md, "Recurring events").

use crate::model::event::Event;
use crate::model::series::{Occurrence, OccurrenceOf, OccurrenceState, Series};
use crate::model::{Kind, Sequence, Status};
use crate::service::{ServiceError, ServiceResult};
use crate::store::{Reads, Store, StoreResult, WriteTx};
use crate::values::recurrence::{self, Recurrence};
use crate::values::timezone::Zone;
use crate::values::{Invalid, SubCode};
use chrono::{Duration, NaiveDateTime};
use std::collections::HashMap;

/// How a record takes part in recurrence, for its representations.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Recurring {
    /// A single event.
    Single,
    /// A series: its `recurrence` lines and occurrences.
    Series(Series),
    /// An occurrence of the series `series`, whose rule gave it `original_start_utc`.
    Occurrence {
        series: u64,
        original_start_utc: NaiveDateTime,
    },
}

/// How `id` takes part in recurrence.
pub(crate) fn recurring(rx: &impl Reads, id: u64) -> StoreResult<Recurring> {
    if let Some(of) = rx.occurrence_of(id)? {
        return Ok(Recurring::Occurrence {
            series: of.series,
            original_start_utc: of.original_start_utc,
        });
    }
    Ok(match rx.series(id)? {
        Some(series) => Recurring::Series(series),
        None => Recurring::Single,
    })
}

/// The series `id` belongs to: its own ID for a series (or a single event).
fn series_of(rx: &impl Reads, id: u64) -> StoreResult<u64> {
    Ok(rx.occurrence_of(id)?.map_or(id, |of| of.series))
}

/// The record a change of the event `id` is made on: its series for an occurrence that has
/// not been changed on its own (its fields are the series'), else the event itself.
pub(crate) fn owner(rx: &impl Reads, id: u64) -> ServiceResult<u64> {
    let Some(of) = rx.occurrence_of(id)? else {
        return Ok(id);
    };
    let exception = rx.series(of.series)?.is_some_and(|s| {
        s.occurrences
            .iter()
            .any(|o| o.id == id && o.state == OccurrenceState::Exception)
    });
    Ok(if exception { id } else { of.series })
}

/// The first occurrence of the series `series` whose original start falls on `day` in the
/// series' zone (the date of its page's address).
pub(crate) fn occurrence_on(
    rx: &impl Reads,
    series: &Event,
    day: chrono::NaiveDate,
) -> ServiceResult<Option<Event>> {
    let Some(rule) = rx.series(series.post.id)? else {
        return Ok(None);
    };
    let zone = Zone::parse(&series.timezone).unwrap_or(Zone::Utc);
    let Some(found) = rule
        .occurrences
        .iter()
        .find(|o| zone.to_local(o.original_start_utc.and_utc()).date() == day)
    else {
        return Ok(None);
    };
    Ok(rx.get_record::<Event>(Kind::Event, found.id)?)
}

/// The next `n` occurrences after `event` of its series (`event` being an occurrence or the
/// series) that the caller may read: the other dates an occurrence's page offers.
pub(crate) fn next_dates(
    store: &Store,
    request: &crate::service::Request,
    event: &Event,
    n: usize,
) -> ServiceResult<Vec<Event>> {
    let rx = store.read()?;
    let series_id = series_of(&rx, event.post.id)?;
    let Some(series) = rx.series(series_id)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for occurrence in &series.occurrences {
        if out.len() == n {
            break;
        }
        if occurrence.id == event.post.id || occurrence.state == OccurrenceState::Cancelled {
            continue;
        }
        let Some(record) = rx.get_record::<Event>(Kind::Event, occurrence.id)? else {
            continue;
        };
        if record.start_utc > event.start_utc
            && record.post.status != Status::Trash
            && super::posts::can_read(request.caller, &record.post, request.now)
        {
            out.push(record);
        }
    }
    Ok(out)
}

/// The rule of the series `event` belongs to (or is), in words' terms, if it has a common
/// form (see `recurrence::Summary`), ending on the day of its last occurrence.
pub(crate) fn summary(store: &Store, event: &Event) -> ServiceResult<Option<recurrence::Summary>> {
    let rx = store.read()?;
    let series_id = series_of(&rx, event.post.id)?;
    let Some(series) = rx.series(series_id)? else {
        return Ok(None);
    };
    let Some(record) = rx.get_record::<Event>(Kind::Event, series_id)? else {
        return Ok(None);
    };
    let zone = Zone::parse(&record.timezone).unwrap_or(Zone::Utc);
    let Ok(rule) = Recurrence::parse(&series.lines) else {
        return Ok(None);
    };
    let mut summary = rule.summary(&zone);
    // "Until" names the last occurrence's day (an UNTIL just after midnight UTC may be the
    // next day in the event's zone).
    if let Some(s) = summary
        .as_mut()
        .filter(|s| matches!(s.end, recurrence::End::Until(_)))
    {
        if let Ok((_, expansion)) = expand_stored(&series, &record, &zone) {
            if let Some(last) = expansion.starts.iter().chain(&expansion.excluded).max() {
                s.end = recurrence::End::Until(last.date());
            }
        }
    }
    Ok(summary)
}

/// Brings the occurrences of `event` in line with it after its record was written: with
/// `lines` (a new `recurrence`; empty: none) or with the rule it has. A single event without
/// `lines` is left alone. A rule the event's dates make invalid is refused, naming
/// `recurrence`.
pub(crate) fn follow(
    tx: &mut WriteTx,
    event: &Event,
    lines: Option<&[String]>,
    now: NaiveDateTime,
) -> ServiceResult<()> {
    let id = event.post.id;
    let existing = tx.series(id)?;
    let lines: Vec<String> = match (lines, &existing) {
        (Some(lines), _) => lines.iter().map(|l| l.trim().to_owned()).collect(),
        (None, Some(series)) => series.lines.clone(),
        (None, None) => return Ok(()),
    };
    if tx.occurrence_of(id)?.is_some() {
        if lines.is_empty() {
            return Ok(());
        }
        return Err(refused(Invalid::new(
            SubCode::ForbiddenValue,
            "cannot be set on an occurrence: change its series.",
        )));
    }
    let mut old: HashMap<NaiveDateTime, Occurrence> = existing
        .iter()
        .flat_map(|s| s.occurrences.iter())
        .map(|o| (o.original_start_utc, *o))
        .collect();
    let mut series = Series {
        lines,
        occurrences: Vec::new(),
        horizon: None,
    };
    if !series.lines.is_empty() {
        let zone = Zone::parse(&event.timezone).unwrap_or(Zone::Utc);
        let (expansion, horizon) = expansion(event, &series.lines, &zone, now).map_err(refused)?;
        series.horizon = expansion.open_ended.then_some(horizon);
        for local in expansion.starts {
            let start_utc = zone.to_utc(local).naive_utc();
            let occurrence = match old.remove(&start_utc) {
                Some(kept) => kept,
                None => {
                    let id = tx.next_id(Sequence::Posts)?;
                    tx.set_occurrence(
                        id,
                        Some(&OccurrenceOf {
                            series: event.post.id,
                            original_start_utc: start_utc,
                        }),
                    )?;
                    Occurrence {
                        original_start_utc: start_utc,
                        id,
                        state: OccurrenceState::Plain,
                    }
                }
            };
            write_occurrence(tx, event, &occurrence, local, &zone)?;
            series.occurrences.push(occurrence);
        }
    }
    for gone in old.values() {
        tx.remove_record(Kind::Event, gone.id)?;
        tx.set_occurrence(gone.id, None)?;
    }
    if series.lines.is_empty() {
        tx.set_series(id, None)?;
    } else {
        tx.set_series(id, Some(&series))?;
    }
    Ok(())
}

/// The occurrences `lines` give `event` today, and the horizon of a never-ending rule; an
/// error names what is wrong with the rule (the message of `recurrence`'s refusal).
fn expansion(
    event: &Event,
    lines: &[String],
    zone: &Zone,
    now: NaiveDateTime,
) -> Result<(recurrence::Expansion, NaiveDateTime), Invalid> {
    let rule = Recurrence::parse(lines)?;
    let horizon = recurrence::horizon(zone, now.and_utc());
    let expansion = rule.expand(event.start_local, zone, event.all_day, horizon)?;
    if expansion.starts.is_empty() {
        return Err(Invalid::new(
            SubCode::InvalidFormat,
            "gives no occurrence: its EXDATE lines exclude every date.",
        ));
    }
    Ok((expansion, horizon))
}

/// Whether `lines` are a rule [`follow`] accepts for `event` (checked before a copy writes).
pub(crate) fn check_rule(
    event: &Event,
    lines: &[String],
    now: NaiveDateTime,
) -> Result<(), Invalid> {
    let zone = Zone::parse(&event.timezone).unwrap_or(Zone::Utc);
    expansion(event, lines, &zone, now).map(|_| ())
}

/// Loads a series as a copy names it (`almanac import`, `import --from`): its occurrences take
/// the `given` IDs and cancellations, then follow the rule as after any write. An exception is
/// kept when the store has it already, else it starts plain and its own record, loaded after
/// the series, makes it one again ([`settle`]). Occurrences the store had and `given` leaves
/// out are removed. The `given` IDs are free or this series' (checked by the caller).
pub(crate) fn restore(
    tx: &mut WriteTx,
    event: &Event,
    lines: &[String],
    given: &[Occurrence],
    now: NaiveDateTime,
) -> ServiceResult<()> {
    let id = event.post.id;
    let stored: HashMap<u64, OccurrenceState> = tx
        .series(id)?
        .iter()
        .flat_map(|s| s.occurrences.iter())
        .map(|o| (o.id, o.state))
        .collect();
    let mut occurrences = Vec::with_capacity(given.len());
    for o in given {
        let state = match o.state {
            OccurrenceState::Exception
                if stored.get(&o.id) == Some(&OccurrenceState::Exception) =>
            {
                OccurrenceState::Exception
            }
            OccurrenceState::Cancelled => OccurrenceState::Cancelled,
            _ => OccurrenceState::Plain,
        };
        tx.set_occurrence(
            o.id,
            Some(&OccurrenceOf {
                series: id,
                original_start_utc: o.original_start_utc,
            }),
        )?;
        tx.raise_sequence(Sequence::Posts, o.id)?;
        occurrences.push(Occurrence { state, ..*o });
    }
    for gone in stored.keys().filter(|k| !given.iter().any(|o| o.id == **k)) {
        tx.remove_record(Kind::Event, *gone)?;
        tx.set_occurrence(*gone, None)?;
    }
    let series = Series {
        horizon: None,
        lines: lines.to_vec(),
        occurrences,
    };
    tx.set_series(id, Some(&series))?;
    follow(tx, event, Some(lines), now)
}

/// Writes the record of one occurrence from its series: the series' fields at the occurrence's
/// dates (the series' wall-clock length), under its own ID. Its slug is the path of its page,
/// the series' slug and its date. An exception keeps its own fields but goes to the trash and
/// back with its series; a cancelled occurrence reads like a trashed event.
fn write_occurrence(
    tx: &mut WriteTx,
    series: &Event,
    occurrence: &Occurrence,
    local: NaiveDateTime,
    zone: &Zone,
) -> ServiceResult<()> {
    let series_status = series.post.status;
    let record = match occurrence.state {
        OccurrenceState::Exception => {
            let Some(mut own) = tx.get_record::<Event>(Kind::Event, occurrence.id)? else {
                return Ok(());
            };
            match (series_status, own.post.status) {
                (Status::Trash, Status::Trash) => return Ok(()),
                (Status::Trash, before) => {
                    own.post.status_before_trash = Some(before);
                    own.post.status = Status::Trash;
                }
                (_, Status::Trash) => {
                    own.post.status = own.post.status_before_trash.take().unwrap_or(series_status);
                }
                _ => return Ok(()),
            }
            own
        }
        OccurrenceState::Plain | OccurrenceState::Cancelled => {
            let mut copy = series.clone();
            copy.post.id = occurrence.id;
            copy.post.group = occurrence.id;
            let day = local.format("%Y-%m-%d");
            let slug = series
                .post
                .slug_before_trash
                .as_deref()
                .unwrap_or(&series.post.slug);
            copy.post.slug = format!("{slug}/{day}");
            copy.post.slug_before_trash = None;
            copy.start_local = local;
            copy.end_local = local + (series.end_local - series.start_local);
            copy.place_in(zone);
            if occurrence.state == OccurrenceState::Cancelled && series_status != Status::Trash {
                copy.post.status_before_trash = Some(series_status);
                copy.post.status = Status::Trash;
            }
            copy
        }
    };
    tx.put_record(Kind::Event, occurrence.id, &record)?;
    Ok(())
}

/// What a calendar feed writes for a series' rule: one VEVENT starting at `start` with the
/// RRULE and EXDATE lines (see `recurrence::Expansion`'s `client_rule`); the occurrences the
/// rule does not give are written as events of their own.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SeriesFeed {
    /// The local start of the VEVENT's DTSTART.
    pub start: NaiveDateTime,
    pub rule: String,
    /// Local starts the rule gives that are no occurrence: EXDATE and cancelled ones.
    pub excluded: Vec<NaiveDateTime>,
    /// The local start of the last occurrence (of a never-ending rule: its horizon).
    pub last: NaiveDateTime,
}

/// An occurrence changed on its own, as a feed writes it: a VEVENT of its series (same UID)
/// whose RECURRENCE-ID is the wall clock the rule gave it, in the series' zone.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ExceptionFeed {
    pub series: u64,
    pub original: NaiveDateTime,
    pub zone: Zone,
    pub all_day: bool,
}

/// One VEVENT of a feed.
#[derive(Debug, Clone)]
pub(crate) enum FeedRecord {
    Event(Event),
    Series(Event, SeriesFeed),
    Exception(Event, ExceptionFeed),
}

impl FeedRecord {
    pub(crate) fn event(&self) -> &Event {
        match self {
            FeedRecord::Event(e) | FeedRecord::Series(e, _) | FeedRecord::Exception(e, _) => e,
        }
    }
}

/// What a calendar feed writes for `events`: each event as itself, except that a series is
/// written with its rule and, when `as_series`, a list's occurrences are written as their
/// series (once, where its first occurrence is), so that calendar apps show a series.
pub(crate) fn feed_records(
    store: &Store,
    request: &crate::service::Request,
    events: &[&Event],
    as_series: bool,
) -> ServiceResult<Vec<FeedRecord>> {
    let rx = &store.read()?;
    let mut out = Vec::with_capacity(events.len());
    let mut written = std::collections::HashSet::new();
    for event in events {
        let id = event.post.id;
        let series_id = match rx.occurrence_of(id)? {
            Some(of) if as_series => of.series,
            Some(_) => {
                out.push(FeedRecord::Event((*event).clone()));
                continue;
            }
            None => id,
        };
        let Some(series) = rx.series(series_id)? else {
            out.push(FeedRecord::Event((*event).clone()));
            continue;
        };
        if !written.insert(series_id) {
            continue;
        }
        if let Some(record) = rx.get_record::<Event>(Kind::Event, series_id)? {
            series_feed(rx, request, &record, &series, &mut out)?;
        }
    }
    Ok(out)
}

/// Appends what a feed writes for the series `record`: its rule's VEVENT with the exceptions
/// the caller may read, and each occurrence the rule does not give as an event of its own.
fn series_feed(
    rx: &impl Reads,
    request: &crate::service::Request,
    record: &Event,
    series: &Series,
    out: &mut Vec<FeedRecord>,
) -> ServiceResult<()> {
    let zone = Zone::parse(&record.timezone).unwrap_or(Zone::Utc);
    let (_, expansion) = expand_stored(series, record, &zone).map_err(refused)?;
    let local = |o: &Occurrence| expansion.wall_clock(&zone, o.original_start_utc);
    // Clients place a wall clock skipped or repeated by a daylight-saving change in different
    // ways (ICAL.js with the offset after the change): such occurrences leave the rule and are
    // events of their own.
    let in_gap = |l: &NaiveDateTime| !record.all_day && !zone.names_one_instant(*l);
    let on_their_own: Vec<NaiveDateTime> = expansion
        .starts
        .iter()
        .filter(|l| expansion.outside_rule.contains(l) || in_gap(l))
        .copied()
        .collect();
    let readable = |e: &Event| {
        e.post.status != Status::Trash
            && super::posts::can_read(request.caller, &e.post, request.now)
    };
    let mut excluded = expansion.excluded.clone();
    let mut exceptions = Vec::new();
    let mut singles = Vec::new();
    for occurrence in &series.occurrences {
        let start = local(occurrence);
        let own = on_their_own.contains(&start);
        match occurrence.state {
            OccurrenceState::Cancelled => {
                if !own {
                    excluded.push(start);
                }
            }
            OccurrenceState::Plain if !own => {}
            state => {
                let Some(changed) = rx.get_record::<Event>(Kind::Event, occurrence.id)? else {
                    continue;
                };
                if !readable(&changed) {
                    excluded.extend((!own).then_some(start));
                } else if own {
                    singles.push(FeedRecord::Event(changed));
                } else if state == OccurrenceState::Exception {
                    exceptions.push(FeedRecord::Exception(
                        changed,
                        ExceptionFeed {
                            series: record.post.id,
                            original: start,
                            zone: zone.clone(),
                            all_day: record.all_day,
                        },
                    ));
                }
            }
        }
    }
    if let (Some(start), Some(rule)) = (expansion.client_start, expansion.client_rule) {
        excluded.extend(
            on_their_own
                .iter()
                .filter(|l| !expansion.outside_rule.contains(l)),
        );
        excluded.sort_unstable();
        excluded.dedup();
        let last = expansion
            .starts
            .iter()
            .chain(&expansion.excluded)
            .max()
            .copied()
            .unwrap_or(start)
            .max(series.horizon.unwrap_or(start));
        out.push(FeedRecord::Series(
            record.clone(),
            SeriesFeed {
                start,
                rule,
                excluded,
                last,
            },
        ));
        out.extend(exceptions);
    }
    out.extend(singles);
    Ok(())
}

/// Moves the horizon of every never-ending series that has fallen a day behind
/// [`recurrence::horizon`]: its occurrences of the new days are written (run every hour by
/// the server, on every node of a cluster; a series already extended is left alone). Returns
/// how many series were extended.
pub(crate) fn extend_horizons(store: &Store, now: NaiveDateTime) -> ServiceResult<usize> {
    // Zones are at most 26 hours apart: a series whose horizon is later than this cannot be
    // a day behind in its own zone.
    let bound =
        recurrence::horizon(&Zone::Utc, now.and_utc()) - Duration::days(1) + Duration::hours(26);
    let candidates: Vec<u64> = store
        .read()?
        .open_ended_series()?
        .into_iter()
        .filter(|(_, horizon)| *horizon < bound)
        .map(|(id, _)| id)
        .collect();
    if candidates.is_empty() {
        return Ok(0);
    }
    store.write(|tx| {
        let mut extended = 0;
        for id in &candidates {
            let (Some(series), Some(event)) =
                (tx.series(*id)?, tx.get_record::<Event>(Kind::Event, *id)?)
            else {
                continue;
            };
            let zone = Zone::parse(&event.timezone).unwrap_or(Zone::Utc);
            let due = recurrence::horizon(&zone, now.and_utc()) - Duration::days(1);
            if series.horizon.is_some_and(|h| h < due) {
                follow(tx, &event, None, now)?;
                extended += 1;
            }
        }
        Ok(extended)
    })
}

/// Cancels the occurrence `id` (`DELETE` of an occurrence): it stays in its series as an
/// exclusion and its record reads like a trashed event. `None` when `id` is no occurrence.
pub(crate) fn cancel(
    tx: &mut WriteTx,
    id: u64,
    now: NaiveDateTime,
) -> ServiceResult<Option<Event>> {
    let Some(of) = tx.occurrence_of(id)? else {
        return Ok(None);
    };
    let Some(mut series) = tx.series(of.series)? else {
        return Ok(None);
    };
    let Some(mut record) = tx.get_record::<Event>(Kind::Event, id)? else {
        return Ok(None);
    };
    for occurrence in &mut series.occurrences {
        if occurrence.id == id {
            occurrence.state = OccurrenceState::Cancelled;
        }
    }
    set_states(tx, of.series, &series)?;
    record.post.status_before_trash = Some(record.post.status);
    record.post.status = Status::Trash;
    record.post.modified_utc = now;
    tx.put_record(Kind::Event, id, &record)?;
    Ok(Some(record))
}

/// `scope=following` on an update of the occurrence `id`: its series ends before it, and a
/// new series (a new event: its own ID and slug) starts there with the rest of the rule, the
/// occurrences from there on (their IDs kept) and the series' fields — which the update then
/// changes. Named at the series' first occurrence, the whole series is the one updated.
/// Returns the series the update applies to.
pub(crate) fn split(tx: &mut WriteTx, id: u64, now: NaiveDateTime) -> ServiceResult<Event> {
    let Some(of) = tx.occurrence_of(id)? else {
        return Err(ServiceError::Invalid(vec![(
            "scope".into(),
            Invalid::new(
                SubCode::ForbiddenValue,
                "following applies to an occurrence of a series.",
            ),
        )]));
    };
    let (Some(mut series), Some(record)) = (
        tx.series(of.series)?,
        tx.get_record::<Event>(Kind::Event, of.series)?,
    ) else {
        return Err(ServiceError::EventNotFound);
    };
    let zone = Zone::parse(&record.timezone).unwrap_or(Zone::Utc);
    let (rule, expansion) = expand_stored(&series, &record, &zone).map_err(refused)?;
    let at_utc = of.original_start_utc;
    let at = expansion.wall_clock(&zone, at_utc);
    if at <= record.start_local {
        return Ok(record);
    }
    let (before, after) = rule.split(record.start_local, &zone, record.all_day, at);
    let (kept, moved): (Vec<Occurrence>, Vec<Occurrence>) = series
        .occurrences
        .iter()
        .partition(|o| o.original_start_utc < at_utc);
    series.lines = before;
    series.occurrences = kept;
    tx.set_series(record.post.id, Some(&series))?;
    follow(tx, &record, None, now)?;

    let id = tx.next_id(Sequence::Posts)?;
    let language = record.post.language;
    let mut next = record.clone();
    next.post.id = id;
    next.post.group = id;
    next.post.modified_utc = now;
    let slug = record
        .post
        .slug_before_trash
        .clone()
        .unwrap_or_else(|| record.post.slug.clone());
    next.post.slug = super::posts::claim_slug(tx, Kind::Event, language, &slug, id)?;
    next.post.slug_before_trash = None;
    tx.set_group_member(Kind::Event, id, language, id)?;
    next.start_local = at;
    next.end_local = at + (record.end_local - record.start_local);
    next.place_in(&zone);
    for occurrence in &moved {
        tx.set_occurrence(
            occurrence.id,
            Some(&OccurrenceOf {
                series: id,
                original_start_utc: occurrence.original_start_utc,
            }),
        )?;
    }
    tx.set_series(
        id,
        Some(&Series {
            horizon: None,
            lines: after,
            occurrences: moved,
        }),
    )?;
    tx.put_record(Kind::Event, id, &next)?;
    Ok(next)
}

/// After an update wrote an occurrence's own record: it is an exception from now on, kept as
/// written when its series changes (or cancelled, when the update left it in the trash).
pub(crate) fn settle(tx: &mut WriteTx, event: &Event) -> ServiceResult<()> {
    let id = event.post.id;
    let Some(of) = tx.occurrence_of(id)? else {
        return Ok(());
    };
    let Some(mut series) = tx.series(of.series)? else {
        return Ok(());
    };
    let state = if event.post.status == Status::Trash {
        OccurrenceState::Cancelled
    } else {
        OccurrenceState::Exception
    };
    if let Some(occurrence) = series.occurrences.iter_mut().find(|o| o.id == id) {
        if occurrence.state != state {
            occurrence.state = state;
            set_states(tx, of.series, &series)?;
        }
    }
    Ok(())
}

/// Makes the occurrence `id` plain again (its record the series' copy at its date), when it
/// was changed or cancelled on its own; whether it was.
pub(crate) fn revert(tx: &mut WriteTx, id: u64) -> ServiceResult<bool> {
    let Some(of) = tx.occurrence_of(id)? else {
        return Ok(false);
    };
    let (Some(mut series), Some(record)) = (
        tx.series(of.series)?,
        tx.get_record::<Event>(Kind::Event, of.series)?,
    ) else {
        return Ok(false);
    };
    let Some(occurrence) = series
        .occurrences
        .iter_mut()
        .find(|o| o.id == id && o.state != OccurrenceState::Plain)
    else {
        return Ok(false);
    };
    occurrence.state = OccurrenceState::Plain;
    let plain = *occurrence;
    let zone = Zone::parse(&record.timezone).unwrap_or(Zone::Utc);
    let local = zone.to_local(plain.original_start_utc.and_utc());
    write_occurrence(tx, &record, &plain, local, &zone)?;
    set_states(tx, of.series, &series)?;
    Ok(true)
}

/// Stores a series whose occurrences' states changed. The series' record is written again as
/// it is: its export form lists the states, and representations are cached until their
/// records change.
fn set_states(tx: &mut WriteTx, id: u64, series: &Series) -> ServiceResult<()> {
    tx.set_series(id, Some(series))?;
    if let Some(record) = tx.get_record::<Event>(Kind::Event, id)? {
        tx.put_record(Kind::Event, id, &record)?;
    }
    Ok(())
}

/// A series' stored rule and its occurrences' starts as last materialized (to the stored
/// horizon of a never-ending rule).
fn expand_stored(
    series: &Series,
    record: &Event,
    zone: &Zone,
) -> Result<(Recurrence, recurrence::Expansion), Invalid> {
    let rule = Recurrence::parse(&series.lines)?;
    let horizon = series.horizon.unwrap_or(record.start_local);
    let expansion = rule.expand(record.start_local, zone, record.all_day, horizon)?;
    Ok((rule, expansion))
}

fn refused(why: Invalid) -> ServiceError {
    ServiceError::Invalid(vec![("recurrence".into(), why)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{populate, Shape};

    #[test]
    fn never_ending_series_reach_further_every_day_and_only_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("almanac.redb")).unwrap();
        populate(&store, &Shape::for_events(3), 7).unwrap();
        let event = store.read().unwrap().scan::<Event>(Kind::Event).unwrap()[0].clone();
        let written = event.start_local;
        let daily = vec!["RRULE:FREQ=DAILY".to_string()];
        store
            .write(|tx| follow(tx, &event, Some(&daily), written))
            .unwrap();
        let count = |store: &Store| {
            let series = store
                .read()
                .unwrap()
                .series(event.post.id)
                .unwrap()
                .unwrap();
            (series.occurrences.len(), series.horizon)
        };
        let (before, horizon) = count(&store);
        assert!(horizon.is_some());
        // Within a day nothing moves; three days on, three more days of occurrences.
        assert_eq!(
            extend_horizons(&store, written + Duration::hours(12)).unwrap(),
            0
        );
        let later = written + Duration::days(3);
        assert_eq!(extend_horizons(&store, later).unwrap(), 1);
        let (after, moved) = count(&store);
        assert_eq!(after, before + 3);
        assert!(moved > horizon);
        assert_eq!(extend_horizons(&store, later).unwrap(), 0);
    }
}
