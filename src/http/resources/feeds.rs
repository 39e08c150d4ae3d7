//! The calendar feeds (docs/api.md, "Calendar feeds"): `/events.ics`, `/events/{id}.ics`,
//! `/events/by-slug/{slug}.ics`. They take the parameters of their JSON twins, answer as
//! they do when something is wrong, and keep whole feeds between polls (`answer_cache`).

use crate::http::answer_cache::{AnswerKey, CachedAnswer};
use crate::http::error::{from_service, ApiError};
use crate::http::ical;
use crate::http::params::{ParamKind, ParamSpec};
use crate::http::resources::events::{self as event_routes, event_query, single_read_params};
use crate::http::resources::{invalid, request};
use crate::http::response::SharedBody;
use crate::http::routes::{
    Endpoint, Group, OperationClass, Permission, ResponseSchema, Route, Seg,
};
use crate::http::{ApiResponse, AppState, Context};
use crate::model::event::Event;
use crate::service::events;
use crate::service::series::{self, FeedRecord};
use crate::service::Request;
use chrono::{DateTime, Utc};
use std::sync::Arc;
use warp::http::header::{HeaderName, LAST_MODIFIED};

/// Most events one feed holds; beyond it the feed keeps the first ones of the list's order
/// and says so.
const FEED_LIMIT: usize = 5_000;

/// The feed routes. They come before the JSON routes in the table: `events/by-slug/{slug}`
/// would take `x.ics` for a slug.
pub(crate) fn routes() -> Vec<Route> {
    let endpoint = |operation_id: &str, class, summary: &str, params, handler| Endpoint {
        group: Group::Read,
        operation_id: operation_id.to_string(),
        summary: summary.to_string(),
        class,
        response: ResponseSchema::Calendar,
        params,
        handler,
        checks_references: true,
        permission: Permission::Everyone,
    };
    let id = ParamSpec::path(
        "id",
        "Event ID.",
        ParamKind::Integer {
            minimum: Some(0),
            maximum: None,
        },
    );
    let slug = ParamSpec::path("slug", "Event slug.", ParamKind::NonEmptyString);
    vec![
        Route {
            segments: &[Seg::Lit("events.ics")],
            endpoints: vec![endpoint(
                "listEventsCalendar",
                OperationClass::PostList,
                "Every event of the list query (not one page) as an iCalendar feed.",
                event_routes::list_params(),
                feed,
            )],
        },
        Route {
            segments: &[Seg::Lit("events"), Seg::IdWith(".ics")],
            endpoints: vec![endpoint(
                "getEventCalendar",
                OperationClass::GetSingle,
                "One event as an iCalendar file.",
                single_read_params(id),
                single,
            )],
        },
        Route {
            segments: &[
                Seg::Lit("events"),
                Seg::Lit("by-slug"),
                Seg::SlugWith(".ics"),
            ],
            endpoints: vec![endpoint(
                "getEventCalendarBySlug",
                OperationClass::GetSingle,
                "One event, by slug, as an iCalendar file.",
                single_read_params(slug),
                single,
            )],
        },
    ]
}

/// A built feed and how long it answers for.
struct Built {
    feed: CachedAnswer,
    /// The answer follows the clock by the second (strict bounds, scheduled records), not
    /// just by the day.
    clock_bound: bool,
}

/// Answers from the cache, or builds the feed with `build` and keeps it.
fn cached(
    state: &AppState,
    ctx: &Context,
    build: impl FnOnce(DateTime<Utc>, u64) -> Result<Built, ApiError>,
) -> Result<ApiResponse, ApiError> {
    let now = Utc::now();
    // Read before anything else: what is built afterwards is at least this current.
    let version = state.store.version();
    let Some(key) = AnswerKey::of(ctx) else {
        // An invalid parameter: the feed's error, never kept.
        return build(now, version).map(|built| built.feed.answer());
    };
    let feed = match state.feeds.get(&key, version, now.timestamp()) {
        Some(feed) => {
            crate::metrics::cache(crate::metrics::Cache::Feeds, 1, 0);
            feed
        }
        None => {
            crate::metrics::cache(crate::metrics::Cache::Feeds, 0, 1);
            let built = build(now, version)?;
            let expires = if built.clock_bound {
                now.timestamp() + 1
            } else {
                (now.date_naive() + chrono::Days::new(1))
                    .and_hms_opt(0, 0, 0)
                    .expect("midnight is a valid time")
                    .and_utc()
                    .timestamp()
            };
            let from = now.timestamp();
            state
                .feeds
                .put(key, version, from..expires, built.feed.clone());
            built.feed
        }
    };
    Ok(feed.answer())
}

/// `GET /events.ics`: every event of the list query, as one calendar.
fn feed(state: &AppState, ctx: &Context) -> Result<ApiResponse, ApiError> {
    cached(state, ctx, |now, version| {
        let mut params = ctx.params.clone();
        let mut query = event_query(ctx, &mut params, now);
        query.page = 1;
        query.per_page = FEED_LIMIT;
        // Whoever may edit a protected event reads it whole, as in an edit context.
        query.unlock.context_edit = true;
        let request: Request = request(ctx);
        let archive = events::list(
            &state.store,
            &state.index,
            &request,
            &query,
            params.invalid.clone(),
        )
        .map_err(|e| from_service(e, ctx.caller))?;
        let items: Vec<&Event> = archive.page.items.iter().collect();
        let records = series::feed_records(&state.store, &request, &items, true)
            .map_err(|e| from_service(e, ctx.caller))?;
        let masked: Vec<bool> = records
            .iter()
            .map(|r| !query.unlock.opens(r.event(), ctx.caller, request.now))
            .collect();
        let clock_bound = query.strict || archive.scheduled;
        let name = format!("{} events", ical::host(&ctx.links));
        let mut feed = calendar(
            state,
            ctx,
            &records,
            &masked,
            &name,
            (now, version),
            clock_bound,
        )?;
        feed.headers.push((
            HeaderName::from_static("x-cal-total"),
            archive.page.total.to_string(),
        ));
        if archive.page.total > FEED_LIMIT {
            feed.headers
                .push((HeaderName::from_static("x-cal-truncated"), "true".into()));
        }
        Ok(Built { feed, clock_bound })
    })
}

/// `GET /events/{id}.ics` and `/events/by-slug/{slug}.ics`: one event, read as by
/// `GET /events/{id}` (same errors).
fn single(state: &AppState, ctx: &Context) -> Result<ApiResponse, ApiError> {
    cached(state, ctx, |now, version| {
        let event = events::get(
            &state.store,
            &request(ctx),
            &event_routes::target(ctx),
            &event_routes::unlock(ctx),
            invalid(&ctx.params),
        )
        .map_err(|e| from_service(e, ctx.caller))?;
        let name = crate::values::text::plain_text(&event.post.title);
        let records = series::feed_records(&state.store, &request(ctx), &[&event], false)
            .map_err(|e| from_service(e, ctx.caller))?;
        // Read as GET /events/{id} reads it: unlocked (a series' occurrences share its
        // password).
        let unlocked = vec![false; records.len()];
        let feed = calendar(
            state,
            ctx,
            &records,
            &unlocked,
            &name,
            (now, version),
            false,
        )?;
        Ok(Built {
            feed,
            clock_bound: false,
        })
    })
}

/// A calendar of `events` with its `Last-Modified`: the newest modification among them, or
/// the last change that could have removed one of them (see [`ical::ChangeClock`]), or now
/// when the answer follows the clock; never later than now (imports can hold future dates).
fn calendar(
    state: &AppState,
    ctx: &Context,
    records: &[FeedRecord],
    masked: &[bool],
    name: &str,
    (now, version): (DateTime<Utc>, u64),
    clock_bound: bool,
) -> Result<CachedAnswer, ApiError> {
    let events: Vec<&Event> = records.iter().map(FeedRecord::event).collect();
    let views = events::EventViews::new(
        &state.store,
        &state.index,
        &events,
        ctx.caller,
        now.naive_utc(),
    )
    .map_err(|e| from_service(e, ctx.caller))?;
    let mut entries = Vec::with_capacity(records.len());
    for (record, masked) in records.iter().zip(masked) {
        let view = views
            .view(record.event())
            .map_err(|e| from_service(e, ctx.caller))?;
        let revision = views
            .revision(record.event())
            .map_err(|e| from_service(e, ctx.caller))?;
        entries.push(ical::entry(record, &view, revision, &ctx.links, *masked));
    }
    let newest = events.iter().map(|e| e.post.modified_utc.and_utc()).max();
    let changed = if clock_bound {
        now
    } else {
        state.changes.last_change(version, now)
    };
    let last_modified = newest.map_or(changed, |n| n.max(changed)).min(now);
    Ok(CachedAnswer {
        body: Arc::new(SharedBody::new(
            ical::MEDIA_TYPE,
            ical::calendar(name, &entries),
        )),
        headers: vec![(
            LAST_MODIFIED,
            last_modified
                .format("%a, %d %b %Y %H:%M:%S GMT")
                .to_string(),
        )],
        link_relations: Vec::new(),
    })
}
