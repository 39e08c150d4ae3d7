//! The pages' markup (maud: checked when the crate compiles, every value escaped unless
//! marked otherwise). The layout, the events bar, a list item and a month cell are written
//! once here and shared by every page.

use super::address::{Paths, RecordKind, Scope, View};
use super::locale::{fill, PageLocale};
use super::settings::{Settings, ViewKind};
use super::views::Filters;
use crate::model::event::Event;
use crate::model::Language;
use crate::service::events::EventView;
use crate::service::terms::TermView;
use chrono::{Datelike, Duration, NaiveDate};
use maud::{html, Markup, PreEscaped, DOCTYPE};

/// What every page needs to render links, words and assets.
pub(crate) struct PageCtx<'a> {
    pub settings: &'a Settings,
    pub stylesheet: &'a str,
    pub frame_script: &'a str,
    /// The editors' form script.
    pub manage_script: &'a str,
    pub locale: PageLocale,
    pub paths: Paths,
    /// `P`: the public URL without trailing slash.
    pub public_url: &'a str,
    /// The scheme, host and port of `P`: with a path, an absolute URL.
    pub origin: String,
    /// The same page in each language (paths), for the language switch and `hreflang`.
    pub alternates: Vec<(Language, String)>,
}

impl PageCtx<'_> {
    pub(crate) fn absolute(&self, path: &str) -> String {
        format!("{}{path}", self.origin)
    }

    /// `url` as an absolute URL: a path on this site gets the site's origin.
    fn absolute_url(&self, url: &str) -> String {
        if url.starts_with('/') && !url.starts_with("//") {
            self.absolute(url)
        } else {
            url.to_string()
        }
    }

    fn t(&self) -> &'static super::locale::Texts {
        self.locale.texts
    }

    /// Whether an image may be shown: only from this site or an origin the operator allows,
    /// so that no page makes a request to another origin unless told to.
    pub(crate) fn shows_image(&self, url: &str) -> bool {
        let origin = |u: &str| {
            url::Url::parse(u)
                .ok()
                .map(|u| u.origin().ascii_serialization())
        };
        match origin(url) {
            Some(o) => {
                Some(&o) == origin(self.public_url).as_ref()
                    || self.settings.image_origins.contains(&o)
            }
            None => false,
        }
    }
}

/// The head of a page.
pub(crate) struct Head {
    pub title: String,
    pub description: String,
    /// The canonical path.
    pub canonical: String,
    pub noindex: bool,
    /// The calendar feed of the view's query (absolute URL).
    pub feed: Option<String>,
    pub image: Option<String>,
    pub og_type: &'static str,
    /// Serialized JSON-LD.
    pub json_ld: Option<String>,
}

/// The whole document: head, header (not in embeds), the page's content.
pub(crate) fn layout(ctx: &PageCtx, head: &Head, content: Markup) -> Markup {
    let t = ctx.t();
    let site = &ctx.settings.site_name;
    let title = if head.title == *site {
        site.clone()
    } else {
        format!("{} · {site}", head.title)
    };
    let embed = ctx.paths.embed;
    html! {
        (DOCTYPE)
        html lang=(ctx.locale.html_lang()) {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) }
                meta name="description" content=(head.description);
                @if head.noindex || embed {
                    meta name="robots" content="noindex";
                }
                link rel="canonical" href=(ctx.absolute(&head.canonical));
                @for (language, path) in &ctx.alternates {
                    link rel="alternate" hreflang=(language.code()) href=(ctx.absolute(path));
                }
                @if let Some(feed) = &head.feed {
                    link rel="alternate" type="text/calendar" title=(t.subscribe) href=(feed);
                }
                meta property="og:site_name" content=(site);
                meta property="og:title" content=(head.title);
                meta property="og:description" content=(head.description);
                meta property="og:type" content=(head.og_type);
                meta property="og:url" content=(ctx.absolute(&head.canonical));
                meta property="og:locale" content=(ctx.locale.html_lang().replace('-', "_"));
                @if let Some(image) = &head.image {
                    meta property="og:image" content=(image);
                }
                meta name="color-scheme" content="light dark";
                // No icon of its own: browsers would ask for /favicon.ico.
                link rel="icon" href="data:,";
                link rel="stylesheet" href=(ctx.stylesheet);
                @if let Some(ld) = &head.json_ld {
                    script type="application/ld+json" { (PreEscaped(ld)) }
                }
                @if embed {
                    // Links leave the frame: the site's pages may not be framed elsewhere.
                    base target="_top";
                    script src=(ctx.frame_script) defer {}
                }
            }
            body.embed[embed] {
                a.skip href="#main" { (t.skip) }
                @if !embed {
                    header.site {
                        a.brand href=(ctx.paths.calendar(&Scope::All, View::Default)) {
                            @if let Some(logo) = ctx.settings.logo_url.as_ref().filter(|l| ctx.shows_image(&ctx.absolute_url(l))) {
                                img src=(logo) alt="" width="32" height="32";
                            }
                            span { (site) }
                        }
                        (language_switch(ctx))
                    }
                }
                main #main { (content) }
            }
        }
    }
}

fn language_switch(ctx: &PageCtx) -> Markup {
    let t = ctx.t();
    html! {
        nav.languages aria-label=(t.language_label) {
            ul {
                @for (language, path) in &ctx.alternates {
                    @let name = PageLocale::of(*language).texts.lang_name;
                    li {
                        @if *language == ctx.locale.language {
                            a href=(path) hreflang=(language.code()) lang=(PageLocale::of(*language).html_lang()) aria-current="page" { (name) }
                        } @else {
                            a href=(path) hreflang=(language.code()) lang=(PageLocale::of(*language).html_lang()) { (name) }
                        }
                    }
                }
            }
        }
    }
}

/// The state of a calendar view the bar and the navigation describe.
pub(crate) struct Calendar<'a> {
    pub scope: &'a Scope,
    pub kind: ViewKind,
    /// The date the view shows (the list: today).
    pub date: NaiveDate,
    pub filters: &'a Filters,
    pub categories: &'a [TermView],
    /// The venues and organizers the bar offers (IDs and names; none when there are many).
    pub venues: &'a [(u64, String)],
    pub organizers: &'a [(u64, String)],
    /// The feed of the scope and filters (no window), absolute.
    pub feed: String,
}

/// The events bar: search, date, view, category and featured in one form that works without
/// JavaScript, then the view switcher and the subscribe menu.
pub(crate) fn events_bar(ctx: &PageCtx, cal: &Calendar) -> Markup {
    let t = ctx.t();
    let f = cal.filters;
    let action = ctx.paths.calendar(cal.scope, View::Default);
    html! {
        form.bar role="search" action=(action) method="get" {
            div.field.grow {
                label for="bar-s" { (t.search_label) }
                input #bar-s type="search" name="s" value=[f.search.as_deref()] maxlength="200";
            }
            div.field {
                label for="bar-date" { (t.date_label) }
                input #bar-date type="date" name="date" value=(cal.date.format("%Y-%m-%d")) min="1900-01-01" max="2200-12-31";
            }
            div.field {
                label for="bar-view" { (t.view_label) }
                select #bar-view name="view" {
                    @for kind in ViewKind::ALL {
                        option value=(kind.word()) selected[kind == cal.kind] { (view_name(ctx, kind)) }
                    }
                }
            }
            @if matches!(cal.scope, Scope::All) && !cal.categories.is_empty() {
                (choice_field(
                    ("category", t.category_label, t.all_categories),
                    cal.categories.iter().map(|c| (c.term.slug.clone(), c.term.name.as_str())),
                    f.category.clone(),
                ))
            }
            @if !cal.venues.is_empty() {
                (choice_field(
                    ("venue", t.venue, t.all_venues),
                    cal.venues.iter().map(|(id, name)| (id.to_string(), name.as_str())),
                    f.venue.map(|v| v.to_string()),
                ))
            }
            @if !cal.organizers.is_empty() {
                (choice_field(
                    ("organizer", t.organizer_label, t.all_organizers),
                    cal.organizers.iter().map(|(id, name)| (id.to_string(), name.as_str())),
                    f.organizer.map(|o| o.to_string()),
                ))
            }
            div.field.check {
                input #bar-featured type="checkbox" name="featured" value="1" checked[f.featured];
                label for="bar-featured" { (t.featured_only) }
            }
            // A venue or organizer filter the bar offers no list for is kept as it is.
            @if let Some(v) = f.venue.filter(|_| cal.venues.is_empty()) { input type="hidden" name="venue" value=(v); }
            @if let Some(o) = f.organizer.filter(|_| cal.organizers.is_empty()) { input type="hidden" name="organizer" value=(o); }
            button type="submit" { (t.search_button) }
        }
        div.toolbar {
            nav.views aria-label=(t.view_label) {
                ul {
                    @for kind in ViewKind::ALL {
                        @let href = format!("{}{}", ctx.paths.calendar(cal.scope, View::at(kind, Some(cal.date).filter(|_| kind != ViewKind::List))), f.query_string());
                        li {
                            @if kind == cal.kind {
                                a href=(href) aria-current="page" { (view_name(ctx, kind)) }
                            } @else {
                                a href=(href) { (view_name(ctx, kind)) }
                            }
                        }
                    }
                }
            }
            (subscribe_menu(ctx, &cal.feed))
            @if ctx.settings.public_submissions {
                a.propose href=(ctx.paths.propose()) {
                    (super::manage_texts::ManageTexts::of(ctx.locale.language).propose)
                }
            }
        }
    }
}

/// A labelled list of the bar (`bar-{name}`): "all" first, then each value and its text.
fn choice_field<'a>(
    (name, label, all): (&str, &str, &str),
    options: impl Iterator<Item = (String, &'a str)>,
    selected: Option<String>,
) -> Markup {
    let id = format!("bar-{name}");
    html! {
        div.field {
            label for=(id) { (label) }
            select #(id) name=(name) {
                option value="" { (all) }
                @for (value, text) in options {
                    option value=(value) selected[selected.as_deref() == Some(value.as_str())] { (text) }
                }
            }
        }
    }
}

fn view_name(ctx: &PageCtx, kind: ViewKind) -> &'static str {
    let t = ctx.t();
    match kind {
        ViewKind::List => t.list,
        ViewKind::Month => t.month,
        ViewKind::Week => t.week,
        ViewKind::Day => t.day,
    }
}

/// "Subscribe to calendar": a disclosure (`details`) that works with the keyboard and
/// without JavaScript, with the feed for calendar apps and a download.
pub(crate) fn subscribe_menu(ctx: &PageCtx, feed: &str) -> Markup {
    let t = ctx.t();
    let webcal = match feed.split_once("://") {
        Some((_, rest)) => format!("webcal://{rest}"),
        None => feed.to_string(),
    };
    let encoded = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let name = encoded(&ctx.settings.site_name);
    html! {
        details.subscribe data-subscribe {
            summary { (t.subscribe) }
            ul {
                li { a href=(format!("https://calendar.google.com/calendar/render?cid={}", encoded(&webcal))) rel="noopener" { (t.google_calendar) } }
                li { a href=(webcal) { (t.icalendar) } }
                li { a href=(format!("https://outlook.office.com/calendar/0/addfromweb?url={}&name={name}", encoded(&webcal))) rel="noopener" { (t.outlook_365) } }
                li { a href=(format!("https://outlook.live.com/calendar/0/addfromweb?url={}&name={name}", encoded(&webcal))) rel="noopener" { (t.outlook_live) } }
                li { a href=(feed) download { (t.download_ics) } }
            }
        }
    }
}

/// Previous, today and next, with the heading of what is shown between them.
pub(crate) fn calendar_nav(
    ctx: &PageCtx,
    heading: &str,
    prev: Option<(String, &str)>,
    today: Option<String>,
    next: Option<(String, &str)>,
) -> Markup {
    let t = ctx.t();
    html! {
        nav.pager aria-label=(t.calendar_nav) {
            @if let Some((href, label)) = &prev {
                a.prev href=(href) rel="prev" { span aria-hidden="true" { "‹ " } (label) }
            }
            @if let Some(href) = &today {
                a.today-link href=(href) { (t.today) }
            }
            @if let Some((href, label)) = &next {
                a.next href=(href) rel="next" { (label) span aria-hidden="true" { " ›" } }
            }
        }
        h2.period { (heading) }
    }
}

/// The filters in force, each with a link that removes it.
pub(crate) fn active_filters(
    ctx: &PageCtx,
    scope: &Scope,
    view: View,
    names: &[(String, String)],
) -> Markup {
    let t = ctx.t();
    html! {
        @if !names.is_empty() {
            ul.filters {
                @for (label, remove) in names {
                    li {
                        (label) " "
                        a href=(format!("{}{}", ctx.paths.calendar(scope, view), remove)) {
                            span aria-hidden="true" { "×" }
                            span.vh { (t.remove_filter) ": " (label) }
                        }
                    }
                }
            }
        }
    }
}

/// One event in the month or week grid: title (a link), time, featured mark.
fn grid_item(ctx: &PageCtx, event: &Event, day: NaiveDate) -> Markup {
    let t = ctx.t();
    let title = crate::values::text::plain_text(&event.post.title);
    let featured = event.featured && !super::views::locked(event);
    html! {
        li.featured[featured] {
            a href=(event_path(ctx, event)) {
                @if featured {
                    span.star aria-hidden="true" { "★ " }
                    span.vh { (t.featured) ": " }
                }
                (title)
            }
            span.time { (ctx.locale.times_on_day(day, event.start_local, event.end_local, event.all_day)) }
        }
    }
}

pub(crate) fn event_path(ctx: &PageCtx, event: &Event) -> String {
    ctx.paths.record(RecordKind::Event, &event.post.slug)
}

/// The month table: one row a week, a column a weekday, each day's first events and a
/// "+ N more" link to the day.
pub(crate) fn month_table<'d>(
    ctx: &PageCtx,
    scope: &Scope,
    filters: &Filters,
    first: NaiveDate,
    weeks: &[[NaiveDate; 7]],
    day_events: &dyn Fn(NaiveDate) -> Option<&'d (Vec<Event>, usize)>,
    today: NaiveDate,
) -> Markup {
    let t = ctx.t();
    let query = filters.query_string();
    html! {
        table.month {
            caption.vh { (ctx.locale.month_title(first)) }
            thead {
                tr {
                    @for day in weeks[0] {
                        @let (long, short) = ctx.locale.weekday(day);
                        th scope="col" { abbr title=(long) { (short) } }
                    }
                }
            }
            tbody {
                @for week in weeks {
                    tr {
                        @for day in week {
                            @let inside = day.month() == first.month();
                            @let events = if inside { day_events(*day) } else { None };
                            @let count = events.as_ref().map_or(0, |(_, n)| *n);
                            td.other[!inside].today[inside && *day == today].empty[count == 0] {
                                @if inside {
                                    @let href = format!("{}{query}", ctx.paths.calendar(scope, View::Day(Some(*day))));
                                    div.num {
                                        span.wide-date aria-hidden="true" { (ctx.locale.short_date(*day)) }
                                        @if *day == today {
                                            a href=(href) aria-current="date" { span.vh { (ctx.locale.long_date(*day)) ", " (t.today) } span aria-hidden="true" { (day.day()) } }
                                            span.today-mark aria-hidden="true" { (t.today) }
                                        } @else {
                                            a href=(href) { span.vh { (ctx.locale.long_date(*day)) } span aria-hidden="true" { (day.day()) } }
                                        }
                                    }
                                    @if let Some((shown, total)) = &events {
                                        @if !shown.is_empty() {
                                            ul { @for e in shown { (grid_item(ctx, e, *day)) } }
                                        }
                                        @if *total > shown.len() { (more_link(ctx, &href, total - shown.len(), *day)) }
                                    }
                                } @else {
                                    div.num aria-hidden="true" { (day.day()) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// "+ N more": the link to a day with more events than its cell or column shows, named with
/// its date for those who hear it.
fn more_link(ctx: &PageCtx, href: &str, hidden: usize, day: NaiveDate) -> Markup {
    let t = ctx.t();
    let n = ctx.locale.count(hidden);
    let name = fill(
        &fill(t.more_on, "n", &n),
        "date",
        &ctx.locale.long_date(day),
    );
    html! { a.more href=(href) aria-label=(name) { (fill(t.more, "n", &n)) } }
}

/// The week: its days side by side (stacked on narrow screens), each with its first events'
/// times and a "+ N more" link to the day.
pub(crate) fn week_days(
    ctx: &PageCtx,
    scope: &Scope,
    filters: &Filters,
    days: &[(NaiveDate, Vec<Event>, usize)],
    today: NaiveDate,
) -> Markup {
    let query = filters.query_string();
    html! {
        ol.week {
            @for (day, events, total) in days {
                @let href = format!("{}{query}", ctx.paths.calendar(scope, View::Day(Some(*day))));
                li.today[*day == today] {
                    h3 {
                        @if super::address::in_range(*day) {
                            a href=(href) aria-current=[(*day == today).then_some("date")] {
                                (ctx.locale.short_date(*day))
                            }
                        } @else {
                            (ctx.locale.short_date(*day))
                        }
                    }
                    @if !events.is_empty() {
                        ul { @for e in events { (grid_item(ctx, e, *day)) } }
                    }
                    @if *total > events.len() { (more_link(ctx, &href, total - events.len(), *day)) }
                }
            }
        }
    }
}

/// Events grouped by day, each as a list item with its time, venue, cost, excerpt and image.
pub(crate) fn day_groups(
    ctx: &PageCtx,
    groups: &[(NaiveDate, Vec<(&Event, &EventView)>)],
) -> Markup {
    html! {
        @for (day, items) in groups {
            section.day-group {
                h3 { time datetime=(day.format("%Y-%m-%d")) { (ctx.locale.long_date(*day)) } }
                ul.events { @for (e, v) in items { (list_item(ctx, e, v, *day)) } }
            }
        }
    }
}

fn zone_note(ctx: &PageCtx, event: &Event) -> Option<String> {
    (!event.all_day && event.timezone != ctx.settings.zone.name())
        .then(|| event.timezone_abbr.clone())
}

/// One event of a list or a day.
pub(crate) fn list_item(ctx: &PageCtx, event: &Event, view: &EventView, day: NaiveDate) -> Markup {
    let t = ctx.t();
    let title = crate::values::text::plain_text(&event.post.title);
    // A protected event shows its title and dates only, as the API's lists show it.
    let open = !super::views::locked(event);
    let excerpt = if open { excerpt(event) } else { String::new() };
    let cost = if open {
        ctx.locale.cost(&event.cost)
    } else {
        String::new()
    };
    let image = view
        .image
        .as_ref()
        .filter(|i| open && ctx.shows_image(&i.url));
    let venue = view.venue.as_ref().filter(|_| open);
    let featured = open && event.featured;
    html! {
        li.event.featured[featured] {
            div.body {
                h4 {
                    a href=(event_path(ctx, event)) { (title) }
                }
                p.when {
                    time datetime=(event.start_local.format("%Y-%m-%dT%H:%M")) {
                        (ctx.locale.times_on_day(day, event.start_local, event.end_local, event.all_day))
                    }
                    @if let Some(zone) = zone_note(ctx, event) { " (" (zone) ")" }
                    @if featured { " " span.badge { span aria-hidden="true" { "★ " } (t.featured) } }
                }
                @if let Some(venue) = venue {
                    p.venue {
                        a href=(ctx.paths.record(RecordKind::Venue, &venue.record.post.slug)) { (crate::values::text::plain_text(&venue.record.post.title)) }
                        @if !venue.record.city.is_empty() { ", " (venue.record.city) }
                    }
                }
                @if !cost.is_empty() { p.cost { (cost) } }
                @if !excerpt.is_empty() { p.excerpt { (excerpt) } }
            }
            @if let Some(img) = image {
                img src=(img.url) alt="" width="160" height="107" loading="lazy" decoding="async";
            }
        }
    }
}

/// The first words of an event's excerpt, or of its description.
pub(crate) fn excerpt(event: &Event) -> String {
    let source = if event.post.excerpt.trim().is_empty() {
        &event.post.description
    } else {
        &event.post.excerpt
    };
    let text = crate::values::text::plain_text(source);
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.len() > 30 {
        format!("{}…", words[..30].join(" "))
    } else {
        words.join(" ")
    }
}

/// A message in place of events.
pub(crate) fn nothing(message: &str) -> Markup {
    html! { p.nothing { (message) } }
}

/// Page numbers of the list view.
pub(crate) fn list_pager(ctx: &PageCtx, prev: Option<String>, next: Option<String>) -> Markup {
    let t = ctx.t();
    html! {
        @if prev.is_some() || next.is_some() {
            nav.pager.bottom aria-label=(t.page_nav) {
                @if let Some(href) = prev { a.prev href=(href) rel="prev" { span aria-hidden="true" { "‹ " } (t.prev_page) } }
                @if let Some(href) = next { a.next href=(href) rel="next" { (t.next_page) span aria-hidden="true" { " ›" } } }
            }
        }
    }
}

/// The 404 page's content.
pub(crate) fn not_found(ctx: &PageCtx) -> Markup {
    let t = ctx.t();
    html! {
        h1 { (t.not_found_title) }
        p { (t.not_found_text) }
        p { a href=(ctx.paths.calendar(&Scope::All, View::List { page: 1 })) { (t.see_upcoming) } }
    }
}

/// The weeks (rows of 7 days) of the month of `first`, starting on `week_start`.
pub(crate) fn month_weeks(first: NaiveDate, week_start: chrono::Weekday) -> Vec<[NaiveDate; 7]> {
    let offset =
        (first.weekday().num_days_from_monday() + 7 - week_start.num_days_from_monday()) % 7;
    let mut day = first - Duration::days(offset as i64);
    let mut weeks = Vec::new();
    loop {
        let week: [NaiveDate; 7] = std::array::from_fn(|i| day + Duration::days(i as i64));
        day += Duration::days(7);
        weeks.push(week);
        if day.month() != first.month() {
            break;
        }
    }
    weeks
}

/// An event page: when, where, who, what, and links to add it to a calendar.
pub(crate) struct EventPage<'a> {
    pub event: &'a Event,
    pub view: &'a EventView,
    pub ics: String,
    pub google: String,
    pub outlook: String,
    pub previous: Option<&'a Event>,
    pub next: Option<&'a Event>,
    /// The next occurrences of a recurring event, and its rule in words.
    pub next_dates: &'a [Event],
    pub rule: Option<String>,
    /// A password form instead of what the password protects; `wrong` after a failed try.
    pub locked: Option<bool>,
}

pub(crate) fn event_page(ctx: &PageCtx, page: &EventPage) -> Markup {
    let t = ctx.t();
    let e = page.event;
    let v = page.view;
    let title = crate::values::text::plain_text(&e.post.title);
    let cost = ctx.locale.cost(&e.cost);
    html! {
        article.event-page {
            h1 { (title) }
            p.when {
                (ctx.locale.event_span(e.start_local, e.end_local, e.all_day, zone_note(ctx, e).as_deref()))
                @if e.featured && page.locked.is_none() { " " span.badge { span aria-hidden="true" { "★ " } (t.featured) } }
            }
            @if let Some(rule) = &page.rule { p.repeats { (rule) } }
            @if let Some(wrong) = page.locked {
                form.password method="post" action=(event_path(ctx, e)) {
                    p { (t.protected) }
                    @if wrong { p.error #password-error role="alert" { (t.wrong_password) } }
                    div.field {
                        label for="event-password" { (t.password) }
                        input #event-password type="password" name="password" required autocomplete="off" aria-describedby=[wrong.then_some("password-error")];
                    }
                    button type="submit" { (t.open) }
                }
            } @else {
                @if let Some(img) = v.image.as_ref().filter(|i| ctx.shows_image(&i.url)) {
                    img.hero src=(img.url) alt="" width="1200" height="675" loading="lazy" decoding="async";
                }
                dl.facts {
                    @if !cost.is_empty() { dt { (t.cost) } dd { (cost) } }
                    @if let Some(href) = web_href(&e.website) { dt { (t.website) } dd { a href=(href) rel="noopener" { (e.website) } } }
                    @if !v.categories.is_empty() {
                        dt { (t.categories) }
                        dd { ul.terms { @for c in &v.categories { li { a href=(ctx.paths.calendar(&Scope::Category(c.path.clone()), View::Default)) { (c.term.name) } } } } }
                    }
                    @if !v.tags.is_empty() {
                        dt { (t.tags) }
                        dd { ul.terms { @for tag in &v.tags { li { a href=(ctx.paths.calendar(&Scope::Tag(tag.term.slug.clone()), View::Default)) { (tag.term.name) } } } } }
                    }
                }
                div.description { (PreEscaped(crate::values::text::sanitize_html(&crate::values::text::render_paragraphs(&e.post.description)))) }
                @if let Some(venue) = &v.venue {
                    section.venue {
                        h2 { (t.venue) }
                        (venue_card(ctx, &venue.record))
                    }
                }
                @if !v.organizers.is_empty() {
                    section.organizers {
                        h2 { (t.organizers) }
                        @for o in &v.organizers { (organizer_card(ctx, &o.record)) }
                    }
                }
            }
            @if !page.next_dates.is_empty() {
                section.dates {
                    h2 { (t.next_dates) }
                    ul {
                        @for o in page.next_dates {
                            li { a href=(event_path(ctx, o)) { (ctx.locale.event_span(o.start_local, o.end_local, o.all_day, None)) } }
                        }
                    }
                }
            }
            @if page.locked.is_none() {
                section.add {
                    h2 { (t.add_to_calendar) }
                    ul {
                        li { a href=(page.google) rel="noopener" { (t.google_calendar) } }
                        li { a href=(page.outlook) rel="noopener" { (t.outlook_365) } }
                        li { a href=(page.ics) download { (t.download_ics) } }
                    }
                }
            }
            nav.pager.bottom aria-label=(t.calendar_nav) {
                @if let Some(p) = page.previous { a.prev href=(event_path(ctx, p)) rel="prev" { span aria-hidden="true" { "‹ " } span.vh { (t.prev_event) ": " } (crate::values::text::plain_text(&p.post.title)) } }
                @if let Some(n) = page.next { a.next href=(event_path(ctx, n)) rel="next" { span.vh { (t.next_event) ": " } (crate::values::text::plain_text(&n.post.title)) span aria-hidden="true" { " ›" } } }
            }
        }
    }
}

/// A venue's address, phone, website and map link.
pub(crate) fn venue_card(ctx: &PageCtx, venue: &crate::model::post::Venue) -> Markup {
    let t = ctx.t();
    let region = [&venue.stateprovince, &venue.state, &venue.province]
        .into_iter()
        .find(|s| !s.is_empty())
        .cloned()
        .unwrap_or_default();
    let lines: Vec<String> = [
        venue.address.clone(),
        [venue.city.clone(), region, venue.zip.clone()]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(", "),
        venue.country.clone(),
    ]
    .into_iter()
    .filter(|s| !s.is_empty())
    .collect();
    let map = map_link(venue, &lines);
    html! {
        div.card {
            p.name { a href=(ctx.paths.record(RecordKind::Venue, &venue.post.slug)) { (crate::values::text::plain_text(&venue.post.title)) } }
            @if !lines.is_empty() {
                address { @for (i, line) in lines.iter().enumerate() { @if i > 0 { br; } (line) } }
            }
            @if venue.show_map_link {
                @if let Some(map) = map { p { a href=(map) rel="noopener" { (t.view_map) } } }
            }
            @if !venue.phone.is_empty() { p { (t.phone) ": " a href=(format!("tel:{}", venue.phone.replace(' ', ""))) { (venue.phone) } } }
            @if let Some(href) = web_href(&venue.website) { p { a href=(href) rel="noopener" { (t.website) } } }
        }
    }
}

/// A record's website as a link target: only `http` and `https` URLs (records imported from
/// elsewhere may hold anything).
fn web_href(website: &str) -> Option<String> {
    url::Url::parse(website.trim())
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .map(|u| u.to_string())
}

/// A `mailto:` link to an address, encoded so that nothing in it adds headers.
fn mailto(email: &str) -> String {
    let encoded: String =
        percent_encoding::utf8_percent_encode(email.trim(), percent_encoding::NON_ALPHANUMERIC)
            .to_string()
            .replace("%40", "@")
            .replace("%2E", ".")
            .replace("%2D", "-")
            .replace("%5F", "_");
    format!("mailto:{encoded}")
}

/// A link to OpenStreetMap at the venue (coordinates, else the address): a link only, so the
/// page itself makes no request to a map provider.
fn map_link(venue: &crate::model::post::Venue, lines: &[String]) -> Option<String> {
    if let Some(geo) = venue.geo {
        return Some(format!(
            "https://www.openstreetmap.org/?mlat={:.5}&mlon={:.5}#map=16/{:.5}/{:.5}",
            geo.lat, geo.lng, geo.lat, geo.lng
        ));
    }
    (!lines.is_empty()).then(|| {
        let q: String = url::form_urlencoded::byte_serialize(lines.join(", ").as_bytes()).collect();
        format!("https://www.openstreetmap.org/search?query={q}")
    })
}

pub(crate) fn organizer_card(ctx: &PageCtx, o: &crate::model::post::Organizer) -> Markup {
    let t = ctx.t();
    html! {
        div.card {
            p.name { a href=(ctx.paths.record(RecordKind::Organizer, &o.post.slug)) { (crate::values::text::plain_text(&o.post.title)) } }
            @if !o.phone.is_empty() { p { (t.phone) ": " a href=(format!("tel:{}", o.phone.replace(' ', ""))) { (o.phone) } } }
            @if !o.email.is_empty() { p { (t.email) ": " a href=(mailto(&o.email)) { (o.email) } } }
            @if let Some(href) = web_href(&o.website) { p { a href=(href) rel="noopener" { (t.website) } } }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::post::PostMeta;
    use crate::model::Status;
    use chrono::NaiveDateTime;

    const HOSTILE: &str = "1 < 2 & <script>alert(1)</script>";

    fn at(d: u32, h: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(2027, 3, d)
            .unwrap()
            .and_hms_opt(h, 0, 0)
            .unwrap()
    }

    fn event() -> Event {
        Event {
            post: PostMeta {
                id: 7,
                language: Language::En,
                group: 7,
                author: 1,
                status: Status::Publish,
                status_before_trash: None,
                slug: "x".into(),
                slug_before_trash: None,
                date: at(1, 0),
                date_utc: at(1, 0),
                modified_utc: at(1, 0),
                title: HOSTILE.into(),
                description: format!("<p>Hello</p>{HOSTILE}<img src=x onerror=alert(2)>"),
                excerpt: HOSTILE.into(),
                image: None,
            },
            start_local: at(15, 19),
            end_local: at(15, 21),
            start_utc: at(15, 19),
            end_utc: at(15, 21),
            timezone: "UTC".into(),
            timezone_abbr: "UTC".into(),
            all_day: false,
            cost: Default::default(),
            website: String::new(),
            show_map: false,
            show_map_link: false,
            hide_from_listings: false,
            sticky: false,
            featured: true,
            ticketed: false,
            post_parent: 0,
            categories: Vec::new(),
            tags: Vec::new(),
            venue: None,
            organizers: Vec::new(),
            password: None,
        }
    }

    fn view() -> EventView {
        EventView {
            image: None,
            venue: None,
            organizers: Vec::new(),
            categories: Vec::new(),
            tags: Vec::new(),
            translations: Vec::new(),
            recurring: crate::service::series::Recurring::Single,
        }
    }

    fn with_ctx(language: Language, check: impl FnOnce(&PageCtx)) {
        let settings = Settings::default();
        let ctx = PageCtx {
            settings: &settings,
            stylesheet: "/assets/style.css",
            frame_script: "/assets/frame.js",
            manage_script: "/assets/manage.js",
            locale: PageLocale::of(language),
            paths: Paths {
                language,
                embed: false,
                base: "".into(),
            },
            public_url: "http://h",
            origin: "http://h".into(),
            alternates: Vec::new(),
        };
        check(&ctx);
    }

    /// The month table of `e`'s month, `e` on its day among `total` events.
    fn month_of(ctx: &PageCtx, e: &Event, total: usize) -> String {
        let day = e.start_local.date();
        let first = day.with_day(1).unwrap();
        let weeks = month_weeks(first, chrono::Weekday::Mon);
        let only = (vec![e.clone()], total);
        let lookup = |d: NaiveDate| (d == day).then_some(&only);
        month_table(
            ctx,
            &Scope::All,
            &Filters::default(),
            first,
            &weeks,
            &lookup,
            day,
        )
        .into_string()
    }

    fn assert_inert(html: &str) {
        assert!(!html.contains("<script>alert"), "{html}");
        assert!(!html.contains("onerror"), "{html}");
    }

    #[test]
    fn a_hostile_title_shows_as_text_everywhere() {
        let e = event();
        let v = view();
        let day = e.start_local.date();
        with_ctx(Language::En, |ctx| {
            let item = list_item(ctx, &e, &v, day).into_string();
            assert_inert(&item);
            assert!(item.contains("1 &lt; 2 &amp; "), "{item}");
            assert_inert(&grid_item(ctx, &e, day).into_string());
            let month = month_of(ctx, &e, 5);
            assert_inert(&month);
            assert!(month.contains("+ 4 more"), "{month}");
            assert!(
                month.contains("4 more events on Monday, March 15, 2027"),
                "{month}"
            );
            let page = EventPage {
                event: &e,
                view: &v,
                ics: "http://h/x.ics".into(),
                google: "https://calendar.google.com/".into(),
                outlook: "https://outlook.office.com/".into(),
                previous: Some(&e),
                next: None,
                next_dates: std::slice::from_ref(&e),
                rule: Some("Every week <on> Tuesday".into()),
                locked: None,
            };
            let html = event_page(ctx, &page).into_string();
            assert_inert(&html);
            assert!(
                html.contains("<p>Hello</p>"),
                "the description's HTML stays: {html}"
            );
            let head = Head {
                title: HOSTILE.into(),
                description: HOSTILE.into(),
                canonical: "/event/x/".into(),
                noindex: false,
                feed: None,
                image: None,
                og_type: "article",
                json_ld: None,
            };
            assert_inert(&layout(ctx, &head, html! {}).into_string());
        });
    }

    #[test]
    fn only_web_addresses_are_links() {
        assert_eq!(
            web_href("https://example.org/a?b=c").as_deref(),
            Some("https://example.org/a?b=c")
        );
        assert_eq!(web_href("javascript:alert(1)"), None);
        assert_eq!(web_href("data:text/html,x"), None);
        assert_eq!(web_href("not a url"), None);
        assert_eq!(
            mailto("a@b.org?subject=x&body=y"),
            "mailto:a@b.org%3Fsubject%3Dx%26body%3Dy"
        );
    }

    #[test]
    fn months_start_on_the_configured_weekday() {
        let march = NaiveDate::from_ymd_opt(2027, 3, 1).unwrap();
        let weeks = month_weeks(march, chrono::Weekday::Sun);
        assert_eq!(weeks[0][0], NaiveDate::from_ymd_opt(2027, 2, 28).unwrap());
        assert_eq!(weeks.len(), 5);
        let weeks = month_weeks(march, chrono::Weekday::Mon);
        assert_eq!(weeks[0][0], march);
        assert!(weeks
            .iter()
            .flatten()
            .any(|d| *d == NaiveDate::from_ymd_opt(2027, 3, 31).unwrap()));
    }

    #[test]
    fn pages_speak_the_language_they_are_in() {
        let e = event();
        with_ctx(Language::PtBr, |ctx| {
            let month = month_of(ctx, &e, 3);
            assert!(month.contains("Segunda"), "{month}");
            assert!(
                month.contains("Mais 2 eventos em segunda, 15 de março de 2027"),
                "{month}"
            );
            assert!(month.contains("19:00 – 21:00"), "{month}");
            assert!(month.contains("/pt-br/events/2027-03-15/"), "{month}");
        });
    }
}
