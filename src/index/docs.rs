//! Index documents of events, venues and organizers (see index_schema/schema.toml).

use super::schema::{Fields, Key};
use super::IndexResult;
use crate::model::event::Event;
use crate::model::post::{GeoPoint, Organizer, PostMeta, Venue};
use crate::model::Kind;
use crate::store::Reads;
use chrono::NaiveDateTime;
use tantivy::TantivyDocument;

fn seconds(t: &NaiveDateTime) -> i64 {
    t.and_utc().timestamp()
}

/// Events covering more months than this are indexed as [`LONG_EVENT`] instead of under each
/// month ([`Key::CoveredMonth`]).
pub(crate) const COVERED_MONTHS: i64 = 24;

/// The [`Key::CoveredMonth`] value of a long event: every window's months include it.
pub(crate) const LONG_EVENT: i64 = -1;

/// Months since year 0 of a wall clock given in seconds (the [`Key::StartMonth`] key).
pub(crate) fn month_of_seconds(secs: i64) -> i64 {
    use chrono::Datelike;
    let t = chrono::DateTime::from_timestamp(secs, 0)
        .map(|t| t.naive_utc())
        .unwrap_or_default();
    i64::from(t.year()) * 12 + i64::from(t.month0())
}

/// The seconds of a [`Key::StartMonth`] month's wall clocks: its first, and the first of the
/// next month.
pub(crate) fn month_seconds(month: i64) -> (i64, i64) {
    let first = |month: i64| {
        i32::try_from(month.div_euclid(12))
            .ok()
            .and_then(|year| {
                chrono::NaiveDate::from_ymd_opt(year, month.rem_euclid(12) as u32 + 1, 1)
            })
            .map(|day| seconds(&day.and_time(chrono::NaiveTime::MIN)))
    };
    match (first(month), first(month + 1)) {
        (Some(start), Some(end)) => (start, end),
        // Outside chrono's years: no wall clock of the index falls there.
        _ => (i64::MAX, i64::MAX),
    }
}

/// Record IDs below this bound order correctly inside a sort key.
pub(crate) const ID_SPAN: i64 = 1 << 24;

/// A sort key ordering by `t`, then by ID: seconds (years 0001–9999 fit in ±2^38) × 2^24 + ID.
pub(crate) fn sort_key(t: &NaiveDateTime, id: u64) -> i64 {
    seconds(t) * ID_SPAN + (id as i64 % ID_SPAN)
}

/// The [`Key::Scope`] value of a document (see index_schema/schema.toml).
pub(crate) fn scope(kind: Kind, language: crate::model::Language, listed: bool) -> String {
    let listing = if listed { "listed" } else { "hidden" };
    format!("{}/{}/{listing}", kind.name(), language.code())
}

/// What every post-kind document carries: identity, language, status, dates, title.
fn base(f: &Fields, kind: Kind, meta: &PostMeta, listed: bool) -> TantivyDocument {
    let mut doc = TantivyDocument::default();
    f.add_key(&mut doc, Key::Kind, kind.name());
    f.add_key(&mut doc, Key::Scope, scope(kind, meta.language, listed));
    f.add_key(&mut doc, Key::Id, meta.id);
    f.add_key(&mut doc, Key::Language, meta.language.code());
    f.add_key(&mut doc, Key::Status, meta.status.as_str());
    f.add_key(&mut doc, Key::Author, meta.author);
    doc.add_u64(f.id, meta.id);
    doc.add_i64(f.date_utc, seconds(&meta.date_utc));
    doc.add_i64(f.order_date, sort_key(&meta.date_utc, meta.id));
    doc.add_i64(f.order_modified, sort_key(&meta.modified_utc, meta.id));
    doc.add_text(f.title_stem(meta.language), &meta.title);
    doc.add_text(f.title_fold, &meta.title);
    doc
}

/// Searchable text besides the title, under the record language's analyzer and folded.
fn body(f: &Fields, doc: &mut TantivyDocument, meta: &PostMeta, texts: &[&str]) {
    for text in texts.iter().filter(|t| !t.is_empty()) {
        doc.add_text(f.body_stem(meta.language), text);
        doc.add_text(f.body_fold, text);
    }
}

fn geo(f: &Fields, doc: &mut TantivyDocument, point: Option<GeoPoint>) {
    f.add_key(doc, Key::HasGeo, point.is_some());
    if let Some(p) = point {
        doc.add_f64(f.geo_lat, p.lat);
        doc.add_f64(f.geo_lng, p.lng);
    }
}

/// Venues and organizers carry zero event dates, so that the event date columns have a value
/// in every document: a full column is read directly, an optional one through its index of
/// present rows (7 % of a cached event list went to that lookup for `end_local` alone). Every
/// query on these columns is scoped to events.
fn no_event_dates(f: &Fields, doc: &mut TantivyDocument) {
    for field in [f.start_local, f.end_local, f.order_start, f.start_utc] {
        doc.add_i64(field, 0);
    }
}

pub(crate) fn venue(f: &Fields, v: &Venue) -> TantivyDocument {
    let mut doc = base(f, Kind::Venue, &v.post, true);
    no_event_dates(f, &mut doc);
    body(
        f,
        &mut doc,
        &v.post,
        &[
            &v.post.description,
            &v.post.excerpt,
            &v.address,
            &v.city,
            &v.province,
            &v.state,
            &v.stateprovince,
            &v.zip,
            &v.phone,
        ],
    );
    geo(f, &mut doc, v.geo);
    doc
}

pub(crate) fn organizer(f: &Fields, o: &Organizer) -> TantivyDocument {
    let mut doc = base(f, Kind::Organizer, &o.post, true);
    no_event_dates(f, &mut doc);
    body(
        f,
        &mut doc,
        &o.post,
        &[
            &o.post.description,
            &o.post.excerpt,
            &o.phone,
            &o.email,
            &o.website,
        ],
    );
    doc
}

/// An event's document also carries the current names of its venue and organizers and its
/// venue's coordinates (for search and the geographic filter), read from the same snapshot.
/// An event's document; a series has none (its occurrences are its documents, and every list
/// shows them instead).
pub(crate) fn event(
    f: &Fields,
    e: &Event,
    rx: &impl Reads,
) -> IndexResult<Option<TantivyDocument>> {
    if rx.series(e.post.id)?.is_some() {
        return Ok(None);
    }
    let mut doc = base(f, Kind::Event, &e.post, !e.hide_from_listings);
    let venue = match e.venue {
        Some(id) => rx.get_record::<Venue>(Kind::Venue, id)?,
        None => None,
    };
    let mut names: Vec<String> = venue.iter().map(|v| v.post.title.clone()).collect();
    for id in &e.organizers {
        if let Some(meta) = rx.get_record::<PostMeta>(Kind::Organizer, *id)? {
            names.push(meta.title);
        }
    }
    let mut texts: Vec<&str> = vec![&e.post.description, &e.post.excerpt];
    texts.extend(names.iter().map(String::as_str));
    body(f, &mut doc, &e.post, &texts);
    doc.add_i64(f.start_local, seconds(&e.start_local));
    doc.add_i64(f.order_start, sort_key(&e.start_local, e.post.id));
    doc.add_i64(f.end_local, seconds(&e.end_local));
    doc.add_i64(f.start_utc, seconds(&e.start_utc));
    f.add_key(
        &mut doc,
        Key::StartMonth,
        month_of_seconds(seconds(&e.start_local)),
    );
    let (first, last) = (
        month_of_seconds(seconds(&e.start_local)),
        month_of_seconds(seconds(&e.end_local)),
    );
    if last - first < COVERED_MONTHS {
        for month in first..=last {
            f.add_key(&mut doc, Key::CoveredMonth, month);
        }
    } else {
        f.add_key(&mut doc, Key::CoveredMonth, LONG_EVENT);
    }
    for id in &e.categories {
        f.add_key(&mut doc, Key::Category, id);
    }
    for id in &e.tags {
        f.add_key(&mut doc, Key::Tag, id);
    }
    if let Some(id) = e.venue {
        doc.add_u64(f.venue, id);
        f.add_key(&mut doc, Key::Venue, id);
    }
    for id in &e.organizers {
        doc.add_u64(f.organizers, *id);
        f.add_key(&mut doc, Key::Organizer, id);
    }
    f.add_key(&mut doc, Key::Featured, e.featured);
    f.add_key(&mut doc, Key::Sticky, e.sticky);
    f.add_key(&mut doc, Key::HideFromListings, e.hide_from_listings);
    f.add_key(&mut doc, Key::Ticketed, e.ticketed);
    f.add_key(&mut doc, Key::Protected, e.password.is_some());
    f.add_key(&mut doc, Key::PostParent, e.post_parent);
    geo(f, &mut doc, venue.and_then(|v| v.geo));
    Ok(Some(doc))
}
