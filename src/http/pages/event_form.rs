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
use crate::model::Status;
use crate::service::events::EventView;
use crate::service::terms::TermView;
use crate::values::form::RawParams;
use crate::values::Invalid;
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
}

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
            flags: vec!["show_map", "show_map_link"],
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
        let raw = RawParams::from_json_object(self.parameters());
        let params = params::validate(&write_params(create), &raw)
            .map_err(|_| vec![(String::new(), t.form_expired.to_string())])?;
        let (params, write, fields) = write(&params);
        if params.invalid.is_empty() {
            Ok((params, write, fields))
        } else {
            Err(errors(params.invalid))
        }
    }
}

/// Refusals by field: the API's parameter names and reasons.
pub(crate) fn errors(invalid: Vec<(String, Invalid)>) -> Vec<(String, String)> {
    invalid
        .into_iter()
        .map(|(n, why)| (n, why.reason))
        .collect()
}

/// The form: `action` its address, `errors` by parameter name (those of no field first).
pub(crate) fn render(
    ctx: &PageCtx,
    action: &str,
    form_token: &str,
    form: &EventForm,
    choices: &Choices,
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
    let text_field = |field: &str, label: &str, value: &str, kind: &str, required: bool| {
        let (invalid, described) = attrs(field);
        html! {
            p {
                label for=(field) { (label) }
                input id=(field) name=(field) type=(kind) value=(value) required[required]
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
    html! {
        @if !errors.is_empty() {
            div.error role="alert" {
                p { (t.form_has_errors) }
                @for message in &general { p { (message) } }
            }
        }
        form.manage-form.event-form method="post" action=(action) {
            input type="hidden" name="form_token" value=(form_token);
            (text_field("title", t.title, &form.title, "text", true))
            p {
                label for="description" { (t.description) }
                textarea #description name="description" rows="8"
                    aria-invalid=[attrs("description").0] aria-describedby=[attrs("description").1] { (form.description) }
                small { (t.description_help) }
                (field_error("description", error("description")))
            }
            p {
                label for="excerpt" { (t.excerpt) }
                textarea #excerpt name="excerpt" rows="2" { (form.excerpt) }
            }
            fieldset {
                legend { (t.when) }
                (text_field("start_date", t.starts, &form.start, "datetime-local", true))
                (text_field("end_date", t.ends, &form.end, "datetime-local", true))
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
                (text_field("new_venue", t.new_venue, &form.new_venue, "text", false))
                (checkboxes(t.organizers, "organizer", choices.organizers.iter().map(|o| (o.post.id, o.post.title.as_str())), &form.organizers, error("organizer")))
                (text_field("new_organizers", t.new_organizers, &form.new_organizers, "text", false))
            }
            fieldset {
                legend { (t.classification) }
                (checkboxes(t.categories, "categories", choices.categories.iter().map(|c| (c.term.id, c.term.name.as_str())), &form.categories, error("categories")))
                (text_field("new_categories", t.new_categories, &form.new_categories, "text", false))
                (checkboxes(t.tags, "tags", choices.tags.iter().map(|c| (c.term.id, c.term.name.as_str())), &form.tags, error("tags")))
                (text_field("new_tags", t.new_tags, &form.new_tags, "text", false))
            }
            fieldset {
                legend { (t.details) }
                (text_field("cost", t.cost, &form.cost, "text", false))
                (text_field("website", t.website, &form.website, "url", false))
                (text_field("image", t.image, &form.image, "url", false))
                @if !form.image.is_empty() && ctx.shows_image(&form.image) {
                    img.preview src=(form.image) alt="" width="240";
                }
                @for (flag, label) in FLAGS.iter().zip(t.flags) {
                    p.check {
                        input id=(flag) type="checkbox" name=(flag) value="true" checked[form.flags.contains(flag)];
                        label for=(flag) { (label) }
                    }
                }
                (text_field("password", t.event_password, &form.password, "text", false))
            }
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
            p { button type="submit" { (t.save) } }
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

/// A group of checkboxes: `name` its parameter, `options` (ID, label), `checked` the IDs on.
fn checkboxes<'a>(
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
        fieldset.choices aria-describedby=[error.map(|_| format!("{name}-error"))] {
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
