//! The query planner: a pure function from a validated list request to a tantivy query. Every
//! filter of `GET /events`, `GET /venues` and `GET /organizers` becomes a clause here, so lists,
//! totals and pages come from the index; nothing is scanned.

use super::filters::Plan;
use crate::auth::{Caller, Capability};
use crate::index::schema::{Fields, Key};
use crate::model::{Kind, Language, Status};
use crate::values::search::SearchQuery;
use std::ops::Bound;
use tantivy::query::{
    BooleanQuery, BoostQuery, DisjunctionMaxQuery, FuzzyTermQuery, Occur, PhrasePrefixQuery,
    PhraseQuery, Query, RangeQuery, TermQuery, TermSetQuery,
};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::Term;

/// Longest date window (in months) narrowed through the month terms: for narrow windows the
/// month postings lead the intersection (a one-month window at 100k events: 2.2 → 0.45 ms);
/// for wide ones (the default two-year window) their union costs more than it saves.
const MAX_WINDOW_MONTHS: i64 = 6;

/// Query words of this many characters or more also match within one edit.
const TYPO_MIN_CHARS: usize = 5;

/// Boosts of the ways a query word can match: exact (stem) matches rank above prefix
/// matches, prefix above typo-tolerant ones, and title matches above matches elsewhere
/// (`orderby=relevance`). Each word contributes the best of its matches.
const STEM_BOOST: f32 = 4.0;
const PREFIX_BOOST: f32 = 2.0;
const TYPO_BOOST: f32 = 1.0;
const TITLE_FACTOR: f32 = 1.5;

/// Who is listing and which statuses the list shows.
#[derive(Debug, Clone)]
pub(crate) struct Visibility {
    pub caller: Caller,
    /// The effective statuses asked for.
    pub statuses: Vec<Status>,
    /// Now, in UTC seconds: scheduled records published by then count as published.
    pub now: i64,
    /// Whether the index holds any record stored as `future`; without one, "published" is a
    /// single term.
    pub any_scheduled: bool,
}

/// Date bounds on local wall clocks, in seconds, already normalised.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct DateBounds {
    pub start_min: Option<i64>,
    pub end_max: Option<i64>,
    pub starts_before: Option<i64>,
    pub starts_after: Option<i64>,
    pub ends_before: Option<i64>,
    pub ends_after: Option<i64>,
}

/// The geographic filter (`geoloc`, `geoloc_lat`, ...).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum GeoFilter {
    /// Only events whose venue has coordinates.
    HasCoordinates,
    /// Only events whose venue lies within `radius_km` of the point.
    Within { lat: f64, lng: f64, radius_km: f64 },
}

/// A validated `GET /events` request, with references resolved to IDs.
#[derive(Debug, Clone)]
pub(crate) struct EventFilter {
    pub language: Language,
    pub visibility: Visibility,
    pub dates: DateBounds,
    pub search: Option<SearchQuery>,
    /// Category IDs, descendants included.
    pub categories: Option<Vec<u64>>,
    pub tags: Option<Vec<u64>>,
    pub venues: Option<Vec<u64>>,
    pub organizers: Option<Vec<u64>>,
    pub featured: Option<bool>,
    pub ticketed: Option<bool>,
    pub include: Option<Vec<u64>>,
    pub post_parent: Option<u64>,
    /// Only this user's events (the editors' dashboard of callers who edit only their own).
    pub author: Option<u64>,
    /// Also the events flagged `hide_from_listings` (the export form, `context=export`).
    pub hidden: bool,
    pub geo: Option<GeoFilter>,
}

/// A validated `GET /venues` or `GET /organizers` request; the event-derived filters are
/// already turned into ID sets.
#[derive(Debug, Clone)]
pub(crate) struct LinkedFilter {
    pub kind: Kind,
    pub language: Language,
    pub visibility: Visibility,
    pub search: Option<SearchQuery>,
    /// Only these IDs (from `event`, `has_events=true`, `only_with_upcoming`).
    pub only: Option<Vec<u64>>,
    /// None of these IDs (`has_events=false`).
    pub except: Option<Vec<u64>>,
}

fn term_query(term: Term) -> Box<dyn Query> {
    Box::new(TermQuery::new(term, IndexRecordOption::Basic))
}

fn text(field: Field, value: &str) -> Box<dyn Query> {
    term_query(Term::from_field_text(field, value))
}

fn key_is(fields: &Fields, key: Key, value: impl std::fmt::Display) -> Box<dyn Query> {
    term_query(fields.key(key, value))
}

fn key_in<V: std::fmt::Display>(
    fields: &Fields,
    key: Key,
    values: impl IntoIterator<Item = V>,
) -> Box<dyn Query> {
    Box::new(TermSetQuery::new(
        values.into_iter().map(|v| fields.key(key, v)),
    ))
}

fn i64_range(field: Field, lower: Bound<i64>, upper: Bound<i64>) -> Box<dyn Query> {
    let map = |b: Bound<i64>| match b {
        Bound::Included(v) => Bound::Included(Term::from_field_i64(field, v)),
        Bound::Excluded(v) => Bound::Excluded(Term::from_field_i64(field, v)),
        Bound::Unbounded => Bound::Unbounded,
    };
    Box::new(RangeQuery::new(map(lower), map(upper)))
}

fn all_of(clauses: Vec<Box<dyn Query>>) -> Box<dyn Query> {
    Box::new(BooleanQuery::new(
        clauses.into_iter().map(|q| (Occur::Must, q)).collect(),
    ))
}

fn any_of(clauses: Vec<Box<dyn Query>>) -> Box<dyn Query> {
    Box::new(BooleanQuery::new(
        clauses.into_iter().map(|q| (Occur::Should, q)).collect(),
    ))
}

/// Records whose *effective* status is `status` (a `future` record whose date has come is
/// published).
fn effective_status(
    fields: &Fields,
    status: Status,
    now: i64,
    any_scheduled: bool,
) -> Box<dyn Query> {
    let stored = |s: Status| key_is(fields, Key::Status, s.as_str());
    match status {
        Status::Publish | Status::Future if !any_scheduled => stored(status),
        Status::Publish => any_of(vec![
            stored(Status::Publish),
            all_of(vec![
                stored(Status::Future),
                i64_range(fields.date_utc, Bound::Unbounded, Bound::Included(now)),
            ]),
        ]),
        Status::Future => all_of(vec![
            stored(Status::Future),
            i64_range(fields.date_utc, Bound::Excluded(now), Bound::Unbounded),
        ]),
        other => stored(other),
    }
}

/// Status set and the per-record read rule of lists (docs/api.md, "Roles and visibility"): callers
/// who may edit others' records read everything in the set; everyone else reads published records
/// and their own.
pub(crate) fn visibility_clause(fields: &Fields, v: &Visibility) -> Box<dyn Query> {
    let in_set = any_of(
        v.statuses
            .iter()
            .map(|s| effective_status(fields, *s, v.now, v.any_scheduled))
            .collect(),
    );
    if v.caller.has(Capability::EditOthersPosts) {
        return in_set;
    }
    let mut readable = vec![effective_status(
        fields,
        Status::Publish,
        v.now,
        v.any_scheduled,
    )];
    if let Caller::User { id, .. } = v.caller {
        readable.push(key_is(fields, Key::Author, id));
    }
    all_of(vec![in_set, any_of(readable)])
}

/// One required query word: the best of its stem, prefix and (long words) typo matches in
/// the title and the other fields.
fn word_clause(
    fields: &Fields,
    language: Language,
    folded: &str,
    stem: &str,
    typos: bool,
) -> Box<dyn Query> {
    let mut ways: Vec<Box<dyn Query>> = Vec::new();
    for (stem_field, fold_field, factor) in [
        (fields.title_stem(language), fields.title_fold, TITLE_FACTOR),
        (fields.body_stem(language), fields.body_fold, 1.0),
    ] {
        ways.push(Box::new(BoostQuery::new(
            text(stem_field, stem),
            STEM_BOOST * factor,
        )));
        ways.push(Box::new(BoostQuery::new(
            Box::new(PhrasePrefixQuery::new(vec![Term::from_field_text(
                fold_field, folded,
            )])),
            PREFIX_BOOST * factor,
        )));
        if typos && folded.chars().count() >= TYPO_MIN_CHARS {
            ways.push(Box::new(BoostQuery::new(
                Box::new(FuzzyTermQuery::new(
                    Term::from_field_text(fold_field, folded),
                    1,
                    true,
                )),
                TYPO_BOOST * factor,
            )));
        }
    }
    Box::new(DisjunctionMaxQuery::new(ways))
}

/// Consecutive words, each equal as a stem, in one field (phrases, multi-word exclusions).
fn phrase_clause(fields: &Fields, language: Language, stems: &[String]) -> Box<dyn Query> {
    let in_field = |field: Field| -> Box<dyn Query> {
        Box::new(PhraseQuery::new(
            stems
                .iter()
                .map(|s| Term::from_field_text(field, s))
                .collect(),
        ))
    };
    any_of(vec![
        in_field(fields.title_stem(language)),
        in_field(fields.body_stem(language)),
    ])
}

/// A search as clauses: every word required (a filter: its matches depend on the
/// segment alone), phrases required, exclusions removed (checks).
pub(crate) fn add_search(plan: &mut Plan, fields: &Fields, language: Language, q: &SearchQuery) {
    for word in q.words() {
        plan.filter(word_clause(
            fields,
            language,
            &word.folded,
            &word.stem,
            true,
        ));
    }
    for phrase in q.phrases() {
        if phrase.len() > 1 {
            let stems: Vec<String> = phrase.iter().map(|w| w.stem.clone()).collect();
            plan.check(Occur::Must, phrase_clause(fields, language, &stems));
        }
    }
    for exclusion in q.exclusions() {
        let clause = match exclusion.as_slice() {
            [one] => word_clause(fields, language, &one.folded, &one.stem, false),
            many => phrase_clause(
                fields,
                language,
                &many.iter().map(|w| w.stem.clone()).collect::<Vec<_>>(),
            ),
        };
        plan.check(Occur::MustNot, clause);
    }
}

/// The base of every list: the kind and language's listed records (and the hidden ones too
/// when `hidden`) that the caller may see. The visibility clause is a filter unless it depends
/// on `now` (scheduled records).
fn base_plan(
    fields: &Fields,
    kind: Kind,
    language: Language,
    v: &Visibility,
    hidden: bool,
) -> Plan {
    let mut plan = Plan::default();
    let listed = super::docs::scope(kind, language, true);
    plan.filter(if hidden {
        key_in(
            fields,
            Key::Scope,
            [listed, super::docs::scope(kind, language, false)],
        )
    } else {
        key_is(fields, Key::Scope, listed)
    });
    let visibility = visibility_clause(fields, v);
    if v.any_scheduled {
        plan.check(Occur::Must, visibility);
    } else {
        plan.filter(visibility);
    }
    plan
}

/// Venues (any language or status) whose coordinates lie within the radius. An event's point
/// is its venue's (copied into its document, refreshed when the venue changes), so a radius
/// filter on events is "linked to one of these venues": a distance check on each venue that
/// has coordinates (thousands) instead of on each event that has them (hundreds of thousands).
pub(crate) fn venues_within(fields: &Fields, lat: f64, lng: f64, radius_km: f64) -> Plan {
    let mut plan = Plan::default();
    plan.filter(key_is(fields, Key::Kind, Kind::Venue.name()));
    plan.filter(key_is(fields, Key::HasGeo, true));
    plan.check(Occur::Must, super::geo::within(lat, lng, radius_km));
    plan
}

/// The plan of `GET /events`; `radius_venues` are the matches of
/// [`venues_within`] for a radius filter, from the same index state.
pub(crate) fn events(fields: &Fields, f: &EventFilter, radius_venues: &[u64]) -> Plan {
    let mut plan = base_plan(fields, Kind::Event, f.language, &f.visibility, f.hidden);
    let d = &f.dates;
    // The months the window's starts can fall in (a start is never after its end), as a few
    // posting lists: a filter, so only their events reach the exact range checks below.
    // Wide windows are left to the exact checks alone (see MAX_WINDOW_MONTHS).
    // (In whole seconds: an exclusive bound is the inclusive one a second inside it, so a
    // window that ends at a month's first midnight does not reach into that month.)
    let earliest = [d.start_min, d.starts_after.map(|v| v.saturating_add(1))]
        .into_iter()
        .flatten()
        .max();
    let latest = [
        d.starts_before.map(|v| v.saturating_sub(1)),
        d.end_max,
        d.ends_before.map(|v| v.saturating_sub(1)),
    ]
    .into_iter()
    .flatten()
    .min();
    if let (Some(low), Some(high)) = (earliest, latest) {
        let (low, high) = (
            super::docs::month_of_seconds(low),
            super::docs::month_of_seconds(high),
        );
        if (0..=MAX_WINDOW_MONTHS).contains(&(high - low)) {
            plan.filter(key_in(fields, Key::StartMonth, low..=high));
        }
    } else if let (Some(low), Some(high)) = (
        [d.ends_after.map(|v| v.saturating_add(1)), d.start_min]
            .into_iter()
            .flatten()
            .max(),
        latest,
    ) {
        // No bound on the start from below (a calendar's day, week or month: events that end
        // after it starts and start before it ends): the months the window covers, and the
        // long events, which every window may hold.
        let (low, high) = (
            super::docs::month_of_seconds(low),
            super::docs::month_of_seconds(high),
        );
        if (0..=MAX_WINDOW_MONTHS).contains(&(high - low)) {
            let months = (low..=high).chain([super::docs::LONG_EVENT]);
            plan.filter(key_in(fields, Key::CoveredMonth, months));
        }
    }
    // Bounds on the local wall clocks, applied to the filters' matches (see `filters`).
    if let Some(v) = d.start_min {
        plan.bound("start_local", Bound::Included(v), Bound::Unbounded);
    }
    if let Some(v) = d.end_max {
        plan.bound("end_local", Bound::Unbounded, Bound::Included(v));
    }
    if let Some(v) = d.starts_before {
        plan.bound("start_local", Bound::Unbounded, Bound::Excluded(v));
    }
    if let Some(v) = d.starts_after {
        plan.bound("start_local", Bound::Excluded(v), Bound::Unbounded);
    }
    if let Some(v) = d.ends_before {
        plan.bound("end_local", Bound::Unbounded, Bound::Excluded(v));
    }
    if let Some(v) = d.ends_after {
        plan.bound("end_local", Bound::Excluded(v), Bound::Unbounded);
    }
    for (key, ids) in [
        (Key::Category, &f.categories),
        (Key::Tag, &f.tags),
        (Key::Venue, &f.venues),
        (Key::Organizer, &f.organizers),
        (Key::Id, &f.include),
    ] {
        if let Some(ids) = ids {
            plan.filter(key_in(fields, key, ids));
        }
    }
    if let Some(parent) = f.post_parent {
        plan.filter(key_is(fields, Key::PostParent, parent));
    }
    if let Some(author) = f.author {
        plan.filter(key_is(fields, Key::Author, author));
    }
    if let Some(featured) = f.featured {
        plan.filter(key_is(fields, Key::Featured, featured));
    }
    if let Some(ticketed) = f.ticketed {
        plan.filter(key_is(fields, Key::Ticketed, ticketed));
    }
    if let Some(geo) = f.geo {
        plan.filter(key_is(fields, Key::HasGeo, true));
        // A filter: the same point and radius (a city's widget) give the same venues.
        if let GeoFilter::Within { .. } = geo {
            plan.filter(key_in(fields, Key::Venue, radius_venues));
        }
    }
    if let Some(q) = &f.search {
        // A protected event's text is a secret until its password is given: word, prefix,
        // typo and exclusion matches would each reveal some of it. Only callers who may edit
        // the event search it (see docs/api.md, "Password-protected events").
        let caller = f.visibility.caller;
        if !caller.has(Capability::EditOthersPosts) {
            let mut searchable = vec![key_is(fields, Key::Protected, false)];
            if let Caller::User { id, .. } = caller {
                searchable.push(key_is(fields, Key::Author, id));
            }
            plan.filter(any_of(searchable));
        }
        add_search(&mut plan, fields, f.language, q);
    }
    plan
}

/// The plan of `GET /venues` and `GET /organizers`.
pub(crate) fn linked(fields: &Fields, f: &LinkedFilter) -> Plan {
    let mut plan = base_plan(fields, f.kind, f.language, &f.visibility, false);
    // A check, not a filter: the ID set is derived from the events (and can be thousands of
    // IDs long), so it would make a poor cache key.
    if let Some(only) = &f.only {
        plan.check(Occur::Must, key_in(fields, Key::Id, only));
    }
    if let Some(except) = &f.except {
        plan.check(Occur::MustNot, key_in(fields, Key::Id, except));
    }
    if let Some(q) = &f.search {
        add_search(&mut plan, fields, f.language, q);
    }
    plan
}

/// Events (of every language) whose effective status is in `statuses`: the base of
/// `has_events` and `only_with_upcoming`.
pub(crate) fn events_with_statuses(
    fields: &Fields,
    statuses: &[Status],
    now: i64,
) -> Box<dyn Query> {
    all_of(vec![
        key_is(fields, Key::Kind, Kind::Event.name()),
        any_of(
            statuses
                .iter()
                .map(|s| effective_status(fields, *s, now, true))
                .collect(),
        ),
    ])
}

/// Published events carrying a category or tag (`key` is [`Key::Category`] or [`Key::Tag`]):
/// what a term's `count` counts. Every clause is a cached filter unless scheduled records
/// make "published" depend on `now`, so after a write only the new segment is counted afresh
/// (at a million events, intersecting a popular category with every published event on each
/// index commit was a quarter of a create's cost).
pub(crate) fn published_events_with(
    fields: &Fields,
    key: Key,
    id: u64,
    now: i64,
    any_scheduled: bool,
) -> Plan {
    let mut plan = Plan::default();
    plan.filter(key_is(fields, key, id));
    plan.filter(key_is(fields, Key::Kind, Kind::Event.name()));
    let published = effective_status(fields, Status::Publish, now, any_scheduled);
    if any_scheduled {
        plan.check(Occur::Must, published);
    } else {
        plan.filter(published);
    }
    plan
}

/// Records stored as `future` whose publication time is at or before `now`.
pub(crate) fn stored_future_until(fields: &Fields, now: i64) -> Box<dyn Query> {
    all_of(vec![
        key_is(fields, Key::Status, Status::Future.as_str()),
        i64_range(fields.date_utc, Bound::Unbounded, Bound::Included(now)),
    ])
}

/// Events starting at or after `now` (UTC) whose effective status is in `statuses`.
pub(crate) fn upcoming_events(fields: &Fields, statuses: &[Status], now: i64) -> Box<dyn Query> {
    all_of(vec![
        events_with_statuses(fields, statuses, now),
        i64_range(fields.start_utc, Bound::Included(now), Bound::Unbounded),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::schema::IndexSchema;
    use crate::model::Role;

    fn fields() -> Fields {
        IndexSchema::load().unwrap().fields
    }

    fn anonymous() -> Visibility {
        Visibility {
            caller: Caller::Anonymous,
            statuses: vec![Status::Publish],
            now: 1_000,
            any_scheduled: true,
        }
    }

    fn filter() -> EventFilter {
        EventFilter {
            language: Language::En,
            visibility: anonymous(),
            dates: DateBounds::default(),
            search: None,
            categories: None,
            tags: None,
            venues: None,
            organizers: None,
            featured: None,
            ticketed: None,
            include: None,
            post_parent: None,
            author: None,
            hidden: false,
            geo: None,
        }
    }

    fn events_of(f: &EventFilter) -> Plan {
        events(&fields(), f, &[])
    }

    fn rendered(q: &impl std::fmt::Debug) -> String {
        format!("{q:?}")
    }

    #[test]
    fn base_clauses_select_listed_events_of_the_language() {
        let q = rendered(&events_of(&filter()));
        assert!(q.contains("event/en/listed"), "{q}");
    }

    #[test]
    fn hidden_events_join_the_base_only_when_asked() {
        let listed = rendered(&events_of(&filter()));
        assert!(!listed.contains("event/en/hidden"), "{listed}");
        let mut all = filter();
        all.hidden = true;
        let q = rendered(&events_of(&all));
        assert!(
            q.contains("event/en/listed") && q.contains("event/en/hidden"),
            "{q}"
        );
    }

    #[test]
    fn published_is_one_term_when_nothing_is_scheduled() {
        let f = fields();
        let mut v = anonymous();
        let with = rendered(&visibility_clause(&f, &v));
        v.any_scheduled = false;
        let without = rendered(&visibility_clause(&f, &v));
        assert!(
            with.contains("future") && !without.contains("future"),
            "{without}"
        );
    }

    #[test]
    fn each_filter_adds_its_clause() {
        let base = rendered(&events_of(&filter()));
        let mut with = filter();
        with.featured = Some(true);
        with.categories = Some(vec![7, 8]);
        with.post_parent = Some(3);
        with.dates.start_min = Some(10);
        with.dates.ends_after = Some(20);
        let plan = events_of(&with);
        let q = rendered(&plan);
        assert!(q.len() > base.len());
        assert!(q.contains("TermSetQuery"), "{q}");
        assert_eq!(
            (plan.checks.len(), plan.bounds.len()),
            (1, 2),
            "visibility, two date bounds: {q}"
        );
    }

    #[test]
    fn privileged_callers_skip_the_per_record_rule() {
        let editor = Visibility {
            caller: Caller::User {
                id: 4,
                role: Role::Editor,
            },
            statuses: vec![Status::Draft],
            now: 0,
            any_scheduled: true,
        };
        let author = Visibility {
            caller: Caller::User {
                id: 4,
                role: Role::Author,
            },
            ..editor.clone()
        };
        let f = fields();
        let e = rendered(&visibility_clause(&f, &editor));
        let a = rendered(&visibility_clause(&f, &author));
        assert!(a.len() > e.len(), "authors also need publish-or-own");
    }

    #[test]
    fn search_words_are_required_and_exclusions_removed() {
        let searched = |text: &str| {
            let mut plan = Plan::default();
            add_search(
                &mut plan,
                &fields(),
                Language::En,
                &SearchQuery::parse(text, Language::En),
            );
            plan
        };
        let plan = searched("jazz -rock \"blue note\"");
        let musts = plan
            .checks
            .iter()
            .filter(|(o, _)| *o == Occur::Must)
            .count();
        let nots = plan
            .checks
            .iter()
            .filter(|(o, _)| *o == Occur::MustNot)
            .count();
        assert_eq!(
            (plan.filters.len(), musts, nots),
            (3, 1, 1),
            "jazz, blue and note as filters; the phrase; -rock"
        );
        let short = rendered(&searched("work"));
        assert!(
            !short.contains("Fuzzy"),
            "no typo tolerance under 5 characters: {short}"
        );
        let long = rendered(&searched("concert"));
        assert!(long.contains("Fuzzy"), "{long}");
    }

    #[test]
    fn now_dependent_visibility_is_checked_not_cached() {
        let mut scheduled = filter();
        scheduled.visibility.any_scheduled = false;
        let plan = events_of(&scheduled);
        assert!(plan.checks.is_empty(), "{plan:?}");
        scheduled.visibility.any_scheduled = true;
        scheduled.dates.ends_after = Some(5);
        let plan = events_of(&scheduled);
        assert_eq!(
            (plan.filters.len(), plan.checks.len(), plan.bounds.len()),
            (1, 1, 1),
            "{plan:?}"
        );
    }

    #[test]
    fn narrow_windows_lead_with_their_months() {
        let mut narrow = filter();
        narrow.dates.start_min = Some(1_800_000_000);
        narrow.dates.end_max = Some(1_800_000_000 + 30 * 86_400);
        let q = rendered(&events_of(&narrow));
        assert!(q.contains("TermSetQuery"), "{q}");
        let mut wide = filter();
        wide.dates.start_min = Some(1_800_000_000);
        wide.dates.end_max = Some(1_800_000_000 + 730 * 86_400);
        let q = rendered(&events_of(&wide));
        assert!(!q.contains("TermSetQuery"), "{q}");
    }

    #[test]
    fn a_window_ending_at_a_months_first_midnight_leaves_that_month_out() {
        // November 2026 as a calendar asks for it: ends after its first midnight, starts
        // before December's.
        let (november, december) = (1_793_491_200, 1_796_083_200);
        let mut month = filter();
        month.dates.ends_after = Some(november);
        month.dates.starts_before = Some(december);
        let q = rendered(&events_of(&month));
        let term = |month: i64| format!("{:?}", fields().key(Key::CoveredMonth, month));
        let (nov, dec) = (
            super::super::docs::month_of_seconds(november),
            super::super::docs::month_of_seconds(december),
        );
        assert_eq!(dec, nov + 1);
        assert!(q.contains(&term(nov)), "{q}");
        assert!(!q.contains(&term(dec)), "{q}");
    }

    #[test]
    fn a_radius_becomes_the_venues_inside_it() {
        let venues = venues_within(&fields(), 41.15, -8.61, 10.0);
        assert_eq!((venues.filters.len(), venues.checks.len()), (2, 1));
        assert!(rendered(&venues).contains("venue"), "{venues:?}");
        let mut with = filter();
        with.visibility.any_scheduled = false;
        with.geo = Some(GeoFilter::Within {
            lat: 41.15,
            lng: -8.61,
            radius_km: 10.0,
        });
        let plan = events(&fields(), &with, &[7, 9]);
        let q = rendered(&plan);
        assert!(
            q.contains("TermSetQuery") && !q.contains("RangeQuery"),
            "{q}"
        );
    }

    #[test]
    fn term_counts_are_cached_filters_unless_records_are_scheduled() {
        let f = fields();
        let plan = published_events_with(&f, Key::Category, 7, 1_000, false);
        assert_eq!((plan.filters.len(), plan.checks.len()), (3, 0), "{plan:?}");
        assert!(rendered(&plan).contains("category:7"), "{plan:?}");
        let plan = published_events_with(&f, Key::Tag, 7, 1_000, true);
        assert_eq!((plan.filters.len(), plan.checks.len()), (2, 1), "{plan:?}");
        assert!(rendered(&plan.checks).contains("future"), "{plan:?}");
    }
}
