//! The editors' event form (docs/pages.md, "Editors' pages"): a plain HTML form whose fields
//! are read into the same parameters as `POST /events` and `PATCH /events/{id}` and checked
//! by the same code (`resources::events::write`), then written by the same service calls. A
//! refused form comes back with every value kept and each error next to its field.

use super::manage_texts::ManageTexts;
use super::templates::PageCtx;
use crate::http::params::{self, Params};
use crate::http::resources::events::{write, write_params};
use crate::model::event::Event;
use crate::model::post::{Organizer, Venue};
use crate::model::series::OccurrenceState;
use crate::model::{Language, Status};
use crate::service::events::EventView;
use crate::service::series::Recurring;
use crate::service::terms::TermView;
use crate::values::form::RawParams;
use crate::values::recurrence::{End, Every, Recurrence};
use crate::values::timezone::Zone;
use crate::values::{Invalid, SubCode};
use chrono::Datelike;
use maud::{html, Markup};
use serde_json::{json, Map, Value};

/// The flags of the form, as API parameters, with their labels.
const FLAGS: [&str; 5] = [
    "featured",
    "sticky",
    "hide_from_listings",
    "show_map",
    "show_map_link",
];

/// Who fills the form in: an editor (every field), or a visitor proposing an event (what an
/// event needs to be reviewed, and the field robots fill).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FormKind {
    Editor,
    Proposal,
}

/// The field people leave empty on the proposal form.
pub(crate) const HONEYPOT: &str = "homepage";

/// The flags a new event has on.
const NEW_EVENT_FLAGS: [&str; 2] = ["show_map", "show_map_link"];

/// What the form holds, as the editor typed it (every value is kept when it is refused).
#[derive(Debug, Clone, Default)]
pub(crate) struct EventForm {
    pub title: String,
    pub description: String,
    pub excerpt: String,
    pub status: String,
    /// `datetime-local` values: `YYYY-MM-DDTHH:MM`.
    pub start: String,
    pub end: String,
    pub all_day: bool,
    pub timezone: String,
    pub cost: String,
    pub website: String,
    pub image: String,
    pub flags: Vec<&'static str>,
    /// A venue ID, or empty for none.
    pub venue: String,
    pub new_venue: String,
    pub organizers: Vec<u64>,
    pub new_organizers: String,
    pub categories: Vec<u64>,
    pub new_categories: String,
    pub tags: Vec<u64>,
    pub new_tags: String,
    pub password: String,
    pub repeat: RepeatForm,
    /// The publication date (`datetime-local`, the site's clock as the API keeps it); sent
    /// only when changed from `publication_shown`, so that publishing a draft dates it then.
    pub publication: String,
    pub publication_shown: String,
}

/// The recurrence part of the form, as typed.
#[derive(Debug, Clone, Default)]
pub(crate) struct RepeatForm {
    /// `none` (or empty), `daily`, `weekly`, `monthly`, `yearly`; `custom`: a rule the form
    /// cannot show, kept as it is.
    pub every: String,
    pub interval: String,
    /// `MO` … `SU`.
    pub weekdays: Vec<String>,
    /// `day` (of the month) or `weekday` (of the month).
    pub monthly_by: String,
    /// `never`, `until` or `count`.
    pub ends: String,
    /// `YYYY-MM-DD`, in the event's zone.
    pub until: String,
    pub count: String,
    /// The rule the form was shown with (its RRULE line, empty or `custom`): sent back
    /// unchanged, the series' lines are not touched.
    pub shown: String,
    /// The series' RDATE and EXDATE lines, kept when the rule changes.
    pub kept: Vec<String>,
}

/// RFC 5545's weekday codes, Monday first.
const WEEKDAYS: [&str; 7] = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"];
/// The form's frequencies, as `frequencies` names them, and RFC 5545's.
const FREQUENCIES: [(&str, &str); 5] = [
    ("none", ""),
    ("daily", "DAILY"),
    ("weekly", "WEEKLY"),
    ("monthly", "MONTHLY"),
    ("yearly", "YEARLY"),
];

impl RepeatForm {
    /// The form of a series' `lines` starting at `start` in `zone`: `custom` when the form
    /// cannot show the rule exactly as it is.
    fn of_series(lines: &[String], start: &str, zone: &Zone) -> RepeatForm {
        let kept: Vec<String> = lines
            .iter()
            .filter(|l| !l.trim_start().to_ascii_uppercase().starts_with("RRULE"))
            .cloned()
            .collect();
        let custom = RepeatForm {
            every: "custom".into(),
            shown: "custom".into(),
            kept: kept.clone(),
            ..RepeatForm::default()
        };
        let summary =
            |lines: &[String]| Recurrence::parse(lines).ok().and_then(|r| r.summary(zone));
        let Some(stored) = summary(lines) else {
            return custom;
        };
        let (every, weekdays, monthly_by) = match &stored.every {
            Every::Day => ("daily", Vec::new(), "day"),
            Every::Week(days) => (
                "weekly",
                days.iter()
                    .map(|d| WEEKDAYS[d.num_days_from_monday() as usize].to_string())
                    .collect(),
                "day",
            ),
            Every::MonthDay(_) => ("monthly", Vec::new(), "day"),
            Every::MonthWeekday(..) => ("monthly", Vec::new(), "weekday"),
            Every::Year => ("yearly", Vec::new(), "day"),
        };
        let (ends, until, count) = match &stored.end {
            End::Never => ("never", String::new(), String::new()),
            End::After(n) => ("count", String::new(), n.to_string()),
            End::Until(d) => ("until", d.format("%Y-%m-%d").to_string(), String::new()),
        };
        let mut form = RepeatForm {
            every: every.into(),
            interval: stored.interval.to_string(),
            weekdays,
            monthly_by: monthly_by.into(),
            ends: ends.into(),
            until,
            count,
            shown: String::new(),
            kept,
        };
        // Shown as the form would write it back, if that is the same rule (with RDATEs and
        // EXDATEs, a rule by the start's day of the month, …); else kept as it is.
        match form.rule(start) {
            Ok(Some(line)) if summary(std::slice::from_ref(&line)).as_ref() == Some(&stored) => {
                form.shown = line;
                form
            }
            _ => custom,
        }
    }

    fn of_fields(one: impl Fn(&str) -> String, all: impl Fn(&str) -> Vec<String>) -> RepeatForm {
        RepeatForm {
            every: one("repeat"),
            interval: one("interval"),
            weekdays: all("weekdays"),
            monthly_by: one("monthly_by"),
            ends: one("ends"),
            until: one("until"),
            count: one("count"),
            shown: one("rule_shown"),
            kept: all("rule_kept"),
        }
    }

    /// The RRULE line the fields give for an event starting at `start` (`datetime-local`),
    /// none when it does not repeat; or the errors of the fields.
    fn rule(&self, start: &str) -> Result<Option<String>, Vec<(&'static str, SubCode)>> {
        let Some((_, freq)) = FREQUENCIES
            .iter()
            .find(|(name, _)| *name == self.every)
            .filter(|(_, freq)| !freq.is_empty())
        else {
            return Ok(None);
        };
        let mut errors = Vec::new();
        let number = |field: &'static str, text: &str, max: u32, errors: &mut Vec<_>| match text
            .trim()
            .parse::<u32>()
        {
            Ok(n) if (1..=max).contains(&n) => n,
            Ok(_) => {
                errors.push((field, SubCode::OutOfBounds));
                1
            }
            Err(_) => {
                errors.push((field, SubCode::InvalidFormat));
                1
            }
        };
        let interval = if self.interval.trim().is_empty() {
            1
        } else {
            number("interval", &self.interval, 999, &mut errors)
        };
        let mut line = format!("RRULE:FREQ={freq};INTERVAL={interval}");
        let start = chrono::NaiveDateTime::parse_from_str(start, "%Y-%m-%dT%H:%M").ok();
        match self.every.as_str() {
            "weekly" => {
                let days: Vec<&str> = WEEKDAYS
                    .iter()
                    .copied()
                    .filter(|d| self.weekdays.iter().any(|w| w == d))
                    .collect();
                if !days.is_empty() {
                    line.push_str(&format!(";BYDAY={}", days.join(",")));
                }
            }
            "monthly" => {
                if let Some(start) = start {
                    let day = start.day();
                    if self.monthly_by == "weekday" {
                        // The fifth of a weekday is its last in every month that has one.
                        let nth = match (day - 1) / 7 + 1 {
                            5 => -1,
                            n => n as i32,
                        };
                        let weekday = WEEKDAYS[start.weekday().num_days_from_monday() as usize];
                        line.push_str(&format!(";BYDAY={nth}{weekday}"));
                    } else {
                        line.push_str(&format!(";BYMONTHDAY={day}"));
                    }
                }
            }
            _ => {}
        }
        match self.ends.as_str() {
            "until" => match chrono::NaiveDate::parse_from_str(self.until.trim(), "%Y-%m-%d") {
                Ok(date) => line.push_str(&format!(";UNTIL={}", date.format("%Y%m%d"))),
                Err(_) if self.until.trim().is_empty() => errors.push(("until", SubCode::Empty)),
                Err(_) => errors.push(("until", SubCode::InvalidFormat)),
            },
            "count" => {
                let count = number("count", &self.count, 100_000, &mut errors);
                line.push_str(&format!(";COUNT={count}"));
            }
            _ => {}
        }
        if errors.is_empty() {
            Ok(Some(line))
        } else {
            Err(errors)
        }
    }

    /// The `recurrence` to send: none when the rule is as shown (or kept as it is).
    fn recurrence(&self, start: &str) -> Result<Option<Vec<String>>, Vec<(&'static str, SubCode)>> {
        if self.every == "custom" {
            return Ok(None);
        }
        let rule = self.rule(start)?;
        if rule.as_deref().unwrap_or("") == self.shown {
            return Ok(None);
        }
        Ok(Some(match rule {
            Some(line) => std::iter::once(line)
                .chain(self.kept.iter().cloned())
                .collect(),
            // "Does not repeat": the event stops repeating.
            None => Vec::new(),
        }))
    }
}

/// What the form of a stored event shows besides its fields: a series' rule in words and its
/// dates changed or cancelled on their own; for one date of a series, the series; and the
/// event's translations.
#[derive(Debug, Clone, Default)]
pub(crate) struct StoredEvent {
    /// The other members of its translation group.
    pub translations: Vec<(Language, u64)>,
    /// A series' lines, shown when the form cannot show its rule.
    pub lines: Vec<String>,
    pub words: Option<String>,
    /// (ID, original start in the event's zone, cancelled).
    pub exceptions: Vec<(u64, chrono::NaiveDateTime, bool)>,
    /// The series this event is one date of.
    pub occurrence_of: Option<u64>,
}

impl StoredEvent {
    pub(crate) fn of(ctx: &PageCtx, event: &Event, view: &EventView) -> StoredEvent {
        let zone = Zone::parse(&event.timezone).unwrap_or(Zone::Utc);
        let translations = view
            .translations
            .iter()
            .copied()
            .filter(|(l, _)| *l != event.post.language)
            .collect();
        let stored = match &view.recurring {
            Recurring::Single => StoredEvent::default(),
            Recurring::Occurrence { series, .. } => StoredEvent {
                occurrence_of: Some(*series),
                ..StoredEvent::default()
            },
            Recurring::Series(series) => StoredEvent {
                lines: series.lines.clone(),
                words: Recurrence::parse(&series.lines)
                    .ok()
                    .and_then(|r| r.summary(&zone))
                    .map(|s| ctx.locale.rule(&s)),
                exceptions: series
                    .occurrences
                    .iter()
                    .filter(|o| o.state != OccurrenceState::Plain)
                    .take(MAX_EXCEPTIONS_SHOWN)
                    .map(|o| {
                        (
                            o.id,
                            zone.to_local(o.original_start_utc.and_utc()),
                            o.state == OccurrenceState::Cancelled,
                        )
                    })
                    .collect(),
                occurrence_of: None,
                translations: Vec::new(),
            },
        };
        StoredEvent {
            translations,
            ..stored
        }
    }
}

/// Dates a series' form lists as changed or cancelled (the API lists them all).
const MAX_EXCEPTIONS_SHOWN: usize = 200;

/// What the pickers offer: the records of the form's language.
pub(crate) struct Choices {
    pub venues: Vec<Venue>,
    pub organizers: Vec<Organizer>,
    pub categories: Vec<TermView>,
    pub tags: Vec<TermView>,
}

fn local(t: chrono::NaiveDateTime) -> String {
    t.format("%Y-%m-%dT%H:%M").to_string()
}

impl EventForm {
    /// A new event: starting tomorrow at 10:00 for two hours, in the site's zone, a draft.
    pub(crate) fn blank(now: chrono::NaiveDateTime, timezone: &str) -> EventForm {
        let start = (now.date() + chrono::Duration::days(1))
            .and_hms_opt(10, 0, 0)
            .expect("a time");
        EventForm {
            status: "draft".into(),
            start: local(start),
            end: local(start + chrono::Duration::hours(2)),
            timezone: timezone.to_string(),
            flags: NEW_EVENT_FLAGS.to_vec(),
            ..EventForm::default()
        }
    }

    pub(crate) fn of_event(event: &Event, view: &EventView) -> EventForm {
        let ids = |terms: &[TermView]| terms.iter().map(|t| t.term.id).collect();
        let flags = [
            event.featured,
            event.sticky,
            event.hide_from_listings,
            event.show_map,
            event.show_map_link,
        ];
        EventForm {
            title: event.post.title.clone(),
            description: event.post.description.clone(),
            excerpt: event.post.excerpt.clone(),
            status: event.post.status.as_str().to_string(),
            start: local(event.start_local),
            end: local(event.end_local),
            all_day: event.all_day,
            timezone: event.timezone.clone(),
            cost: event.cost.values.join(", "),
            website: event.website.clone(),
            image: view
                .image
                .as_ref()
                .map(|i| i.url.clone())
                .unwrap_or_default(),
            flags: FLAGS
                .iter()
                .zip(flags)
                .filter(|(_, on)| *on)
                .map(|(f, _)| *f)
                .collect(),
            venue: event.venue.map(|v| v.to_string()).unwrap_or_default(),
            organizers: event.organizers.clone(),
            categories: ids(&view.categories),
            tags: ids(&view.tags),
            password: event.password.clone().unwrap_or_default(),
            publication: local(event.post.date),
            publication_shown: local(event.post.date),
            repeat: match &view.recurring {
                Recurring::Series(series) => RepeatForm::of_series(
                    &series.lines,
                    &local(event.start_local),
                    &Zone::parse(&event.timezone).unwrap_or(Zone::Utc),
                ),
                _ => RepeatForm::default(),
            },
            ..EventForm::default()
        }
    }

    /// The form as it was sent.
    pub(crate) fn of_fields(fields: &[(String, String)]) -> EventForm {
        let one = |name: &str| {
            fields
                .iter()
                .rev()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        let ids = |name: &str| {
            fields
                .iter()
                .filter(|(n, _)| n == name)
                .filter_map(|(_, v)| v.parse().ok())
                .collect()
        };
        EventForm {
            title: one("title"),
            description: one("description"),
            excerpt: one("excerpt"),
            status: one("status"),
            start: one("start_date"),
            end: one("end_date"),
            all_day: one("all_day") == "true",
            timezone: one("timezone"),
            cost: one("cost"),
            website: one("website"),
            image: one("image"),
            flags: FLAGS
                .iter()
                .copied()
                .filter(|f| fields.iter().any(|(n, v)| n == f && v == "true"))
                .collect(),
            venue: one("venue"),
            new_venue: one("new_venue"),
            organizers: ids("organizer"),
            new_organizers: one("new_organizers"),
            categories: ids("categories"),
            new_categories: one("new_categories"),
            tags: ids("tags"),
            new_tags: one("new_tags"),
            password: one("password"),
            publication: one("date"),
            publication_shown: one("date_shown"),
            repeat: RepeatForm::of_fields(one, |name| {
                fields
                    .iter()
                    .filter(|(n, _)| n == name)
                    .map(|(_, v)| v.clone())
                    .collect()
            }),
        }
    }

    /// The fields a visitor may propose (whatever else a forged form sent is dropped).
    pub(crate) fn proposal(self) -> EventForm {
        EventForm {
            status: String::new(),
            excerpt: String::new(),
            image: String::new(),
            flags: NEW_EVENT_FLAGS.to_vec(),
            new_categories: String::new(),
            new_tags: String::new(),
            password: String::new(),
            repeat: RepeatForm::default(),
            publication: String::new(),
            publication_shown: String::new(),
            ..self
        }
    }

    /// Fields the form requires, empty: their names.
    fn missing(&self) -> Vec<&'static str> {
        [
            ("title", &self.title),
            ("start_date", &self.start),
            ("end_date", &self.end),
        ]
        .into_iter()
        .filter(|(_, v)| v.trim().is_empty())
        .map(|(n, _)| n)
        .collect()
    }

    /// The API parameters of the form: every field, as a JSON body would send it.
    fn parameters(&self) -> Map<String, Value> {
        let names = |text: &str| -> Vec<Value> {
            text.split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(|n| json!(n))
                .collect()
        };
        let mut p = Map::new();
        for (key, value) in [
            ("title", &self.title),
            ("description", &self.description),
            ("excerpt", &self.excerpt),
            ("start_date", &self.start),
            ("end_date", &self.end),
            ("website", &self.website),
            ("image", &self.image),
            ("password", &self.password),
        ] {
            p.insert(key.into(), json!(value));
        }
        if !self.status.is_empty() {
            p.insert("status".into(), json!(self.status));
        }
        if !self.publication.trim().is_empty() && self.publication != self.publication_shown {
            p.insert("date".into(), json!(self.publication.trim()));
        }
        if !self.timezone.trim().is_empty() {
            p.insert("timezone".into(), json!(self.timezone.trim()));
        }
        p.insert("all_day".into(), json!(self.all_day));
        p.insert("cost".into(), json!(self.cost));
        for flag in FLAGS {
            p.insert(flag.into(), json!(self.flags.contains(&flag)));
        }
        let venue = if !self.new_venue.trim().is_empty() {
            json!({"venue": self.new_venue.trim()})
        } else {
            json!(self.venue.parse::<u64>().unwrap_or(0))
        };
        p.insert("venue".into(), venue);
        let mut organizers: Vec<Value> = self.organizers.iter().map(|id| json!(id)).collect();
        organizers.extend(
            names(&self.new_organizers)
                .into_iter()
                .map(|n| json!({ "organizer": n })),
        );
        p.insert("organizer".into(), json!(organizers));
        let mut categories: Vec<Value> = self.categories.iter().map(|id| json!(id)).collect();
        categories.extend(names(&self.new_categories));
        p.insert("categories".into(), json!(categories));
        let mut tags: Vec<Value> = self.tags.iter().map(|id| json!(id)).collect();
        tags.extend(names(&self.new_tags));
        p.insert("tags".into(), json!(tags));
        p
    }

    /// The checked parameters of the form, or the errors of its fields (by parameter name).
    pub(crate) fn checked(
        &self,
        create: bool,
        t: &ManageTexts,
    ) -> Result<
        (
            Params,
            crate::service::posts::PostWrite,
            crate::service::events::EventFields,
        ),
        Vec<(String, String)>,
    > {
        let missing = self.missing();
        if !missing.is_empty() {
            return Err(missing
                .into_iter()
                .map(|n| (n.to_string(), t.required.to_string()))
                .collect());
        }
        let mut parameters = self.parameters();
        match self.repeat.recurrence(&self.start) {
            Ok(Some(lines)) => {
                parameters.insert("recurrence".into(), json!(lines));
            }
            Ok(None) => {}
            Err(errors) => {
                return Err(errors
                    .into_iter()
                    .map(|(n, code)| (n.to_string(), t.refusal(code).to_string()))
                    .collect())
            }
        }
        let raw = RawParams::from_json_object(parameters);
        let params = params::validate(&write_params(create), &raw)
            .map_err(|_| vec![(String::new(), t.form_expired.to_string())])?;
        let (params, write, fields) = write(&params);
        if params.invalid.is_empty() {
            Ok((params, write, fields))
        } else {
            Err(errors(params.invalid, t))
        }
    }
}

/// Refusals by field: the API's parameter names, and why in the interface's language.
pub(crate) fn errors(invalid: Vec<(String, Invalid)>, t: &ManageTexts) -> Vec<(String, String)> {
    invalid
        .into_iter()
        .map(|(n, why)| (n, t.refusal(why.code).to_string()))
        .collect()
}

/// The form: `action` its address, `errors` by parameter name (those of no field first).
#[allow(clippy::too_many_arguments)]
pub(crate) fn render(
    ctx: &PageCtx,
    kind: FormKind,
    action: &str,
    form_token: &str,
    form: &EventForm,
    choices: &Choices,
    series: &StoredEvent,
    errors: &[(String, String)],
) -> Markup {
    let t = ManageTexts::of(ctx.locale.language);
    let error = |field: &str| {
        errors
            .iter()
            .find(|(f, _)| f == field)
            .map(|(_, e)| e.as_str())
    };
    let known = [
        "title",
        "description",
        "excerpt",
        "status",
        "start_date",
        "end_date",
        "all_day",
        "timezone",
        "cost",
        "website",
        "image",
        "venue",
        "organizer",
        "categories",
        "tags",
        "password",
        "date",
        "recurrence",
        "interval",
        "until",
        "count",
    ];
    let general: Vec<&str> = errors
        .iter()
        .filter(|(f, _)| !known.contains(&f.as_str()) && !FLAGS.contains(&f.as_str()))
        .map(|(_, e)| e.as_str())
        .collect();
    let attrs = |field: &str| {
        (
            error(field).map(|_| "true"),
            error(field).map(|_| format!("{field}-error")),
        )
    };
    // `list`: the datalist of the names it suggests.
    let text_field =
        |field: &str, label: &str, value: &str, kind: &str, required: bool, list: Option<&str>| {
            let (invalid, described) = attrs(field);
            html! {
                p {
                    label for=(field) { (label) }
                    input id=(field) name=(field) type=(kind) value=(value) required[required]
                        list=[list] autocomplete=[list.map(|_| "off")]
                        aria-invalid=[invalid] aria-describedby=[described];
                    (field_error(field, error(field)))
                }
            }
        };
    let statuses = [
        Status::Draft,
        Status::Pending,
        Status::Publish,
        Status::Private,
        Status::Future,
    ];
    let editor = kind == FormKind::Editor;
    html! {
        @if !errors.is_empty() {
            div.error role="alert" {
                p { (t.form_has_errors) }
                @for message in &general { p { (message) } }
            }
        }
        script src=(ctx.manage_script) defer {}
        form.manage-form.event-form method="post" action=(action) {
            input type="hidden" name="form_token" value=(form_token);
            @if !editor {
                // Hidden from people (and from assistive technology); robots fill it in.
                p.trap aria-hidden="true" {
                    label for=(HONEYPOT) { (t.leave_empty) }
                    input id=(HONEYPOT) name=(HONEYPOT) type="text" tabindex="-1" autocomplete="off";
                }
            }
            (text_field("title", t.title, &form.title, "text", true, None))
            p {
                label for="description" { (t.description) }
                textarea #description name="description" rows="8"
                    aria-invalid=[attrs("description").0] aria-describedby=[attrs("description").1] { (form.description) }
                small { (t.description_help) }
                (field_error("description", error("description")))
            }
            @if editor {
                p {
                    label for="excerpt" { (t.excerpt) }
                    textarea #excerpt name="excerpt" rows="2" { (form.excerpt) }
                }
            }
            fieldset {
                legend { (t.when) }
                (text_field("start_date", t.starts, &form.start, "datetime-local", true, None))
                (text_field("end_date", t.ends, &form.end, "datetime-local", true, None))
                p.check {
                    input #all_day type="checkbox" name="all_day" value="true" checked[form.all_day];
                    label for="all_day" { (t.all_day) }
                }
                p {
                    label for="timezone" { (t.timezone) }
                    input #timezone name="timezone" type="text" list="zones" value=(form.timezone)
                        aria-invalid=[attrs("timezone").0] aria-describedby=[attrs("timezone").1];
                    datalist #zones {
                        @for zone in chrono_tz::TZ_VARIANTS.iter() {
                            option value=(zone.name()) {}
                        }
                    }
                    (field_error("timezone", error("timezone")))
                }
            }
            @if let Some(id) = series.occurrence_of {
                p.notice {
                    (t.occurrence_of) " "
                    a href=(format!("{}/{id}", action.rsplit_once('/').map_or("", |(base, _)| base))) { (t.edit_series) }
                }
            } @else if editor {
                (repeat_fields(ctx, &form.repeat, series, &error))
            }
            fieldset {
                legend { (t.where_who) }
                p {
                    label for="venue" { (t.venue) }
                    select #venue name="venue" aria-invalid=[attrs("venue").0] aria-describedby=[attrs("venue").1] {
                        option value="" { (t.none) }
                        @for v in &choices.venues {
                            option value=(v.post.id) selected[form.venue == v.post.id.to_string()] { (v.post.title) }
                        }
                        @if !form.venue.is_empty() && !choices.venues.iter().any(|v| v.post.id.to_string() == form.venue) {
                            option value=(form.venue) selected { "#" (form.venue) }
                        }
                    }
                    (field_error("venue", error("venue")))
                }
                (text_field("new_venue", t.new_venue, &form.new_venue, "text", false, Some("venue-names")))
                (checkboxes(t, t.organizers, "organizer", choices.organizers.iter().map(|o| (o.post.id, o.post.title.as_str())), &form.organizers, error("organizer")))
                (text_field("new_organizers", t.new_organizers, &form.new_organizers, "text", false, Some("organizer-names")))
            }
            fieldset {
                legend { (t.classification) }
                (checkboxes(t, t.categories, "categories", choices.categories.iter().map(|c| (c.term.id, c.term.name.as_str())), &form.categories, error("categories")))
                @if editor {
                    (text_field("new_categories", t.new_categories, &form.new_categories, "text", false, Some("category-names")))
                }
                (checkboxes(t, t.tags, "tags", choices.tags.iter().map(|c| (c.term.id, c.term.name.as_str())), &form.tags, error("tags")))
                @if editor {
                    (text_field("new_tags", t.new_tags, &form.new_tags, "text", false, Some("tag-names")))
                }
            }
            fieldset {
                legend { (t.details) }
                (text_field("cost", t.cost, &form.cost, "text", false, None))
                (text_field("website", t.website, &form.website, "url", false, None))
                @if editor {
                    (text_field("image", t.image, &form.image, "url", false, None))
                    @if !form.image.is_empty() && ctx.shows_image(&form.image) {
                        img.preview src=(form.image) alt="" width="240";
                    }
                    @for (flag, label) in FLAGS.iter().zip(t.flags) {
                        p.check {
                            input id=(flag) type="checkbox" name=(flag) value="true" checked[form.flags.contains(flag)];
                            label for=(flag) { (label) }
                        }
                    }
                    (text_field("password", t.event_password, &form.password, "text", false, None))
                }
            }
            (names_list("venue-names", choices.venues.iter().map(|v| v.post.title.as_str())))
            (names_list("organizer-names", choices.organizers.iter().map(|o| o.post.title.as_str())))
            (names_list("category-names", choices.categories.iter().map(|c| c.term.name.as_str())))
            (names_list("tag-names", choices.tags.iter().map(|c| c.term.name.as_str())))
            @if editor {
                p {
                    label for="status" { (t.status) }
                    select #status name="status" aria-invalid=[attrs("status").0] aria-describedby=[attrs("status").1] {
                        @for s in statuses {
                            option value=(s.as_str()) selected[form.status == s.as_str()] { (t.status(s)) }
                        }
                    }
                    small { (t.status_help) }
                    (field_error("status", error("status")))
                }
                input type="hidden" name="date_shown" value=(form.publication_shown);
                (text_field("date", t.publication_date, &form.publication, "datetime-local", false, None))
                p { button type="submit" { (t.save) } }
            } @else {
                p { button type="submit" { (t.send_proposal) } }
            }
        }
    }
}

/// The recurrence editor: how often, on which days, until when; and the series' changed
/// and cancelled dates, each linked to its own form.
fn repeat_fields<'a>(
    ctx: &PageCtx,
    repeat: &RepeatForm,
    series: &StoredEvent,
    error: &impl Fn(&str) -> Option<&'a str>,
) -> Markup {
    let t = ManageTexts::of(ctx.locale.language);
    let every = if repeat.every.is_empty() {
        "none"
    } else {
        repeat.every.as_str()
    };
    let custom = every == "custom";
    // 2024-01-01 was a Monday.
    let monday = chrono::NaiveDate::from_ymd_opt(2024, 1, 1).expect("a date");
    let described = |field: &str| error(field).map(|_| format!("{field}-error"));
    let radio = |name: &str, value: &str, label: &str, on: bool| {
        let id = format!("{name}-{value}");
        html! {
            span.check {
                input id=(id) type="radio" name=(name) value=(value) checked[on];
                label for=(id) { (label) }
            }
        }
    };
    html! {
        fieldset.repeat aria-describedby=[described("recurrence")] {
            legend { (t.repeats) }
            input type="hidden" name="rule_shown" value=(repeat.shown);
            @for line in &repeat.kept {
                input type="hidden" name="rule_kept" value=(line);
            }
            @if let Some(words) = &series.words {
                p { (t.rule_now) " " (words) }
            }
            @if custom {
                p { (t.custom_rule) }
                pre { @for line in &series.lines { (line) "\n" } }
            }
            p {
                label for="repeat" { (t.repeats) }
                select #repeat name="repeat" {
                    @for ((value, _), label) in FREQUENCIES.iter().zip(t.frequencies) {
                        option value=(value) selected[every == *value] { (label) }
                    }
                    @if custom {
                        option value="custom" selected { (t.frequencies[5]) }
                    }
                }
            }
            p {
                label for="interval" { (t.interval) }
                input #interval name="interval" type="number" min="1" max="999" inputmode="numeric"
                    value=(if repeat.interval.is_empty() { "1" } else { repeat.interval.as_str() })
                    aria-invalid=[error("interval").map(|_| "true")] aria-describedby=[described("interval")];
                (field_error("interval", error("interval")))
            }
            fieldset.choices {
                legend { (t.on_days) }
                @for (n, code) in WEEKDAYS.iter().enumerate() {
                    @let id = format!("weekday-{code}");
                    @let (name, _) = ctx.locale.weekday(monday + chrono::Duration::days(n as i64));
                    span.check {
                        input id=(id) type="checkbox" name="weekdays" value=(code) checked[repeat.weekdays.iter().any(|w| w == code)];
                        label for=(id) { (name) }
                    }
                }
            }
            fieldset.choices {
                legend { (t.monthly_on) }
                (radio("monthly_by", "day", t.same_month_day, repeat.monthly_by != "weekday"))
                (radio("monthly_by", "weekday", t.same_weekday, repeat.monthly_by == "weekday"))
            }
            fieldset.choices {
                legend { (t.repeat_ends) }
                (radio("ends", "never", t.ends_never, !matches!(repeat.ends.as_str(), "until" | "count")))
                (radio("ends", "until", t.ends_on, repeat.ends == "until"))
                (radio("ends", "count", t.ends_after, repeat.ends == "count"))
            }
            p {
                label for="until" { (t.last_date) }
                input #until name="until" type="date" value=(repeat.until)
                    aria-invalid=[error("until").map(|_| "true")] aria-describedby=[described("until")];
                (field_error("until", error("until")))
            }
            p {
                label for="count" { (t.occurrences) }
                input #count name="count" type="number" min="1" inputmode="numeric" value=(repeat.count)
                    aria-invalid=[error("count").map(|_| "true")] aria-describedby=[described("count")];
                (field_error("count", error("count")))
            }
            (field_error("recurrence", error("recurrence")))
            @if !series.lines.is_empty() {
                h2 { (t.exceptions) }
                @if series.exceptions.is_empty() {
                    p { (t.no_exceptions) }
                } @else {
                    ul.exceptions {
                        @for (id, start, cancelled) in &series.exceptions {
                            @let when = format!("{} {}", ctx.locale.long_date(start.date()), ctx.locale.time(*start));
                            li {
                                @if *cancelled {
                                    s { (when) } " (" (t.cancelled) ")"
                                } @else {
                                    a href=(format!("{id}")) { (when) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The names a "new … by name" field suggests: typing one of them links that record.
fn names_list<'a>(id: &str, names: impl Iterator<Item = &'a str>) -> Markup {
    html! {
        datalist id=(id) {
            @for name in names {
                option value=(name) {}
            }
        }
    }
}

fn field_error(field: &str, error: Option<&str>) -> Markup {
    html! {
        @if let Some(error) = error {
            span.error id=(format!("{field}-error")) { (error) }
        }
    }
}

/// Choices listed before a list gets a filter field.
const FILTERED_FROM: usize = 8;

/// A group of checkboxes: `name` its parameter, `options` (ID, label), `checked` the IDs on.
fn checkboxes<'a>(
    t: &ManageTexts,
    legend: &str,
    name: &str,
    options: impl Iterator<Item = (u64, &'a str)>,
    checked: &[u64],
    error: Option<&str>,
) -> Markup {
    let mut options: Vec<(u64, String)> = options.map(|(id, l)| (id, l.to_string())).collect();
    // A linked record beyond the listed ones stays linked.
    for id in checked {
        if !options.iter().any(|(o, _)| o == id) {
            options.push((*id, format!("#{id}")));
        }
    }
    html! {
        // Long lists get a filter field (assets/manage.js).
        fieldset.choices aria-describedby=[error.map(|_| format!("{name}-error"))]
            data-filter=[(options.len() > FILTERED_FROM).then_some(t.type_to_filter)] {
            legend { (legend) }
            @for (id, label) in &options {
                @let input_id = format!("{name}-{id}");
                span.check {
                    input id=(input_id) type="checkbox" name=(name) value=(id) checked[checked.contains(id)];
                    label for=(input_id) { (label) }
                }
            }
            (field_error(name, error))
        }
    }
}
