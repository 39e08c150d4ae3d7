//! JSON representations of records.

use crate::http::links::Links;
use crate::model::post::{Image, Organizer, PostMeta, Venue};
use crate::model::{Kind, Language, Status};
use crate::service::series::Recurring;
use crate::service::terms::TermView;
use crate::values::datetime::format;
use crate::values::text;
use chrono::NaiveDateTime;
use serde_json::{json, Map, Value};

/// The image object: `url`, `id`, `extension`.
pub(crate) fn image(image: &Image) -> Value {
    let path = url::Url::parse(&image.url)
        .map(|u| u.path().to_string())
        .unwrap_or_default();
    let last = path.rsplit('/').next().unwrap_or("");
    let extension = match last.rfind('.') {
        Some(dot) => percent_encoding::percent_decode_str(&last[dot + 1..])
            .decode_utf8_lossy()
            .to_lowercase(),
        None => String::new(),
    };
    json!({"url": image.url, "id": image.id, "extension": extension})
}

/// `language` and `translations`.
pub(crate) fn translations(members: &[(Language, u64)]) -> Value {
    let mut map = Map::new();
    for (language, id) in members {
        map.insert(language.code().into(), json!(id));
    }
    Value::Object(map)
}

/// `global_id`: host and path of the public URL, `?id=`, the ID.
pub(crate) fn global_id(links: &Links, id: u64) -> String {
    let origin = url::Url::parse(links.public_url())
        .map(|u| {
            let path = u.path().trim_end_matches('/');
            format!("{}{}", u.host_str().unwrap_or(""), path)
        })
        .unwrap_or_default();
    format!("{origin}?id={id}")
}

/// The public page address (`url`).
pub(crate) fn public_url(links: &Links, kind: Kind, meta: &PostMeta, status: Status) -> String {
    let (path, post_type) = match kind {
        Kind::Event => ("event", "tribe_events"),
        Kind::Venue => ("venue", "tribe_venue"),
        _ => ("organizer", "tribe_organizer"),
    };
    match status {
        Status::Publish | Status::Private => format!("{}/{path}/{}/", links.site(), meta.slug),
        _ => format!("{}/?post_type={post_type}&p={}", links.site(), meta.id),
    }
}

/// What a linked-post representation needs besides the record.
pub(crate) struct LinkedContext<'a> {
    pub links: &'a Links,
    pub now: NaiveDateTime,
    pub image: Option<Image>,
    pub translations: Vec<(Language, u64)>,
    /// Only single GET routes carry `json_ld`.
    pub json_ld: bool,
}

fn put_text(map: &mut Map<String, Value>, key: &str, value: &str) {
    if !value.is_empty() {
        map.insert(key.into(), json!(value));
    }
}

/// The fields venues and organizers share, up to and including `slug` and `image`.
fn linked_head(
    kind: Kind,
    meta: &PostMeta,
    name_key: &str,
    ctx: &LinkedContext,
) -> Map<String, Value> {
    let status = meta.effective_status(ctx.now);
    let mut m = Map::new();
    m.insert("id".into(), json!(meta.id));
    m.insert("author".into(), json!(meta.author.to_string()));
    m.insert("status".into(), json!(status.as_str()));
    m.insert("date".into(), json!(format(&meta.date)));
    m.insert("date_utc".into(), json!(format(&meta.date_utc)));
    m.insert("modified".into(), json!(format(&meta.modified_utc)));
    m.insert("modified_utc".into(), json!(format(&meta.modified_utc)));
    m.insert(
        "url".into(),
        json!(public_url(ctx.links, kind, meta, status)),
    );
    put_text(&mut m, name_key, &meta.title);
    put_text(
        &mut m,
        "description",
        &text::render_paragraphs(&meta.description),
    );
    put_text(&mut m, "excerpt", &text::render_paragraphs(&meta.excerpt));
    m.insert("slug".into(), json!(meta.slug));
    if let Some(img) = &ctx.image {
        m.insert("image".into(), image(img));
    }
    m
}

fn linked_tail(m: &mut Map<String, Value>, meta: &PostMeta, ctx: &LinkedContext) {
    let id = global_id(ctx.links, meta.id);
    m.insert("global_id".into(), json!(id));
    m.insert("global_id_lineage".into(), json!([id]));
    m.insert("language".into(), json!(meta.language.code()));
    m.insert("translations".into(), translations(&ctx.translations));
}

pub(crate) fn venue(v: &Venue, ctx: &LinkedContext) -> Value {
    let mut m = linked_head(Kind::Venue, &v.post, "venue", ctx);
    for (key, value) in [
        ("address", &v.address),
        ("city", &v.city),
        ("country", &v.country),
        ("province", &v.province),
        ("state", &v.state),
        ("zip", &v.zip),
        ("phone", &v.phone),
        ("website", &v.website),
        ("stateprovince", &v.stateprovince),
    ] {
        put_text(&mut m, key, value);
    }
    if let Some(geo) = v.geo {
        m.insert("geo_lat".into(), json!(geo.lat));
        m.insert("geo_lng".into(), json!(geo.lng));
    }
    if ctx.json_ld {
        m.insert("json_ld".into(), venue_json_ld(v, ctx));
    }
    m.insert("show_map".into(), json!(v.show_map));
    m.insert("show_map_link".into(), json!(v.show_map_link));
    linked_tail(&mut m, &v.post, ctx);
    Value::Object(m)
}

/// A venue's `json_ld` (a `Place`).
pub(crate) fn venue_json_ld(v: &Venue, ctx: &LinkedContext) -> Value {
    let status = v.post.effective_status(ctx.now);
    let mut ld = Map::new();
    ld.insert("@type".into(), json!("Place"));
    ld.insert("name".into(), json!(v.post.title));
    ld.insert(
        "description".into(),
        json!(text::json_ld_description(
            &v.post.excerpt,
            &v.post.description
        )),
    );
    if let Some(img) = &ctx.image {
        ld.insert("image".into(), json!(img.url));
    }
    ld.insert(
        "url".into(),
        json!(public_url(ctx.links, Kind::Venue, &v.post, status)),
    );
    let region = if !v.stateprovince.is_empty() {
        &v.stateprovince
    } else if v.country == "United States" {
        &v.state
    } else {
        &v.province
    };
    let mut address = Map::new();
    address.insert("@type".into(), json!("PostalAddress"));
    for (key, value) in [
        ("streetAddress", &v.address),
        ("addressLocality", &v.city),
        ("addressRegion", region),
        ("postalCode", &v.zip),
        ("addressCountry", &v.country),
    ] {
        put_text(&mut address, key, value);
    }
    ld.insert("address".into(), Value::Object(address));
    if let Some(geo) = v.geo {
        ld.insert(
            "geo".into(),
            json!({"@type": "GeoCoordinates", "latitude": geo.lat, "longitude": geo.lng}),
        );
    }
    ld.insert("telephone".into(), json!(v.phone));
    ld.insert("sameAs".into(), json!(v.website));
    Value::Object(ld)
}

pub(crate) fn organizer(o: &Organizer, ctx: &LinkedContext) -> Value {
    let mut m = linked_head(Kind::Organizer, &o.post, "organizer", ctx);
    put_text(&mut m, "phone", &o.phone);
    put_text(&mut m, "website", &o.website);
    put_text(&mut m, "email", &o.email);
    if ctx.json_ld {
        m.insert("json_ld".into(), organizer_json_ld(o, ctx));
    }
    linked_tail(&mut m, &o.post, ctx);
    Value::Object(m)
}

/// An organizer's `json_ld` (a `Person`).
pub(crate) fn organizer_json_ld(o: &Organizer, ctx: &LinkedContext) -> Value {
    let mut ld = Map::new();
    ld.insert("@type".into(), json!("Person"));
    ld.insert("name".into(), json!(o.post.title));
    ld.insert(
        "description".into(),
        json!(text::json_ld_description(
            &o.post.excerpt,
            &o.post.description
        )),
    );
    if let Some(img) = &ctx.image {
        ld.insert("image".into(), json!(img.url));
    }
    ld.insert("url".into(), json!(o.website));
    ld.insert("telephone".into(), json!(o.phone));
    ld.insert("email".into(), json!(o.email));
    ld.insert("sameAs".into(), json!(o.website));
    Value::Object(ld)
}

/// A category or tag; `allow` is `Some` for single-term answers that carry
/// `_links` (the methods this caller may use).
pub(crate) fn term(view: &TermView, links: &Links, allow: Option<&[&str]>) -> Value {
    let t = &view.term;
    let (collection, taxonomy) = match t.kind {
        Kind::Category => ("categories", "tribe_events_cat"),
        _ => ("tags", "post_tag"),
    };
    let self_url = links.route(&format!("/{collection}/{}", t.id));
    let collection_url = links.route(&format!("/{collection}"));
    let up_url = (t.parent != 0).then(|| links.route(&format!("/{collection}/{}", t.parent)));
    let mut m = Map::new();
    m.insert("id".into(), json!(t.id));
    m.insert("count".into(), json!(view.count));
    m.insert("description".into(), json!(t.description));
    m.insert("name".into(), json!(t.name));
    m.insert("slug".into(), json!(t.slug));
    m.insert("taxonomy".into(), json!(taxonomy));
    if t.kind == Kind::Category {
        m.insert("parent".into(), json!(t.parent));
    }
    m.insert("meta".into(), json!([]));
    let url = match t.kind {
        Kind::Category => format!("{}/events/category/{}/", links.site(), view.path.join("/")),
        _ => format!("{}/tag/{}/", links.site(), t.slug),
    };
    m.insert("url".into(), json!(url));
    let mut urls = Map::new();
    urls.insert("self".into(), json!(self_url));
    urls.insert("collection".into(), json!(collection_url));
    if let Some(up) = &up_url {
        urls.insert("up".into(), json!(up));
    }
    m.insert("urls".into(), Value::Object(urls));
    m.insert("language".into(), json!(t.language.code()));
    m.insert("translations".into(), translations(&view.translations));
    if let Some(allow) = allow {
        let mut l = Map::new();
        l.insert(
            "self".into(),
            json!([{"href": self_url, "targetHints": {"allow": allow}}]),
        );
        l.insert("collection".into(), json!([{"href": collection_url}]));
        if let Some(up) = &up_url {
            l.insert("up".into(), json!([{"embeddable": true, "href": up}]));
        }
        let filter = if t.kind == Kind::Category {
            "categories"
        } else {
            "tags"
        };
        l.insert(
            "wp:post_type".into(),
            json!([{"href": format!("{}?{filter}={}", links.route("/events"), t.id)}]),
        );
        l.insert(
            "curies".into(),
            json!([{"name": "wp", "href": "https://api.w.org/{rel}", "templated": true}]),
        );
        m.insert("_links".into(), Value::Object(l));
    }
    Value::Object(m)
}

/// `YYYY`, `MM`, ... strings of a date-time (the `*_details` objects).
fn date_details(t: &NaiveDateTime) -> Value {
    json!({
        "year": t.format("%Y").to_string(),
        "month": t.format("%m").to_string(),
        "day": t.format("%d").to_string(),
        "hour": t.format("%H").to_string(),
        "minutes": t.format("%M").to_string(),
        "seconds": t.format("%S").to_string(),
    })
}

/// A category or tag embedded in an event.
pub(crate) fn embedded_term(view: &TermView, links: &Links) -> Value {
    let t = &view.term;
    let collection = if t.kind == Kind::Category {
        "categories"
    } else {
        "tags"
    };
    let mut urls = Map::new();
    urls.insert(
        "self".into(),
        json!(links.route(&format!("/{collection}/{}", t.id))),
    );
    urls.insert(
        "collection".into(),
        json!(links.route(&format!("/{collection}"))),
    );
    if t.parent != 0 {
        urls.insert(
            "up".into(),
            json!(links.route(&format!("/{collection}/{}", t.parent))),
        );
    }
    json!({
        "name": t.name,
        "slug": t.slug,
        "term_group": 0,
        "term_taxonomy_id": t.id,
        "taxonomy": if t.kind == Kind::Category { "tribe_events_cat" } else { "post_tag" },
        "description": t.description,
        "parent": t.parent,
        "count": view.count,
        "filter": "raw",
        "id": t.id,
        "urls": urls,
        "language": t.language.code(),
        "translations": translations(&view.translations),
    })
}

/// Everything an event representation embeds, resolved by the caller.
pub(crate) struct EventParts<'a> {
    pub links: &'a Links,
    pub now: NaiveDateTime,
    pub image: Option<Image>,
    /// The venue's representation, if linked.
    pub venue: Option<Value>,
    pub organizers: Vec<Value>,
    pub categories: Vec<Value>,
    pub tags: Vec<Value>,
    pub translations: Vec<(Language, u64)>,
    /// `json_ld` (single GET routes, unprotected events only).
    pub json_ld: Option<Value>,
    /// Blank the fields of a locked password-protected event (docs/api.md, "Password-protected
    /// events").
    pub masked: bool,
    pub recurring: crate::service::series::Recurring,
}

/// The event representation, keys in the plugin's order.
pub(crate) fn event(e: &crate::model::event::Event, parts: EventParts) -> Value {
    let meta = &e.post;
    let status = meta.effective_status(parts.now);
    let url = public_url(parts.links, Kind::Event, meta, status);
    let gid = global_id(parts.links, meta.id);
    let mut m = Map::new();
    m.insert("id".into(), json!(meta.id));
    m.insert("global_id".into(), json!(gid));
    m.insert("global_id_lineage".into(), json!([gid]));
    m.insert("author".into(), json!(meta.author.to_string()));
    m.insert("status".into(), json!(status.as_str()));
    m.insert("date".into(), json!(format(&meta.date)));
    m.insert("date_utc".into(), json!(format(&meta.date_utc)));
    m.insert("modified".into(), json!(format(&meta.modified_utc)));
    m.insert("modified_utc".into(), json!(format(&meta.modified_utc)));
    m.insert("url".into(), json!(url));
    m.insert(
        "rest_url".into(),
        json!(parts.links.route(&format!("/events/{}", meta.id))),
    );
    m.insert("title".into(), json!(meta.title.trim()));
    let masked = parts.masked;
    let text_or_blank = |s: String| if masked { json!("") } else { json!(s) };
    m.insert(
        "description".into(),
        text_or_blank(text::render_paragraphs(&meta.description)),
    );
    m.insert(
        "excerpt".into(),
        text_or_blank(text::render_paragraphs(&meta.excerpt)),
    );
    m.insert("slug".into(), json!(meta.slug));
    m.insert(
        "image".into(),
        match (&parts.image, masked) {
            (Some(img), false) => image(img),
            _ => json!(false),
        },
    );
    let flag = |b: bool| if masked { Value::Null } else { json!(b) };
    m.insert("all_day".into(), flag(e.all_day));
    m.insert("start_date".into(), json!(format(&e.start_local)));
    m.insert("start_date_details".into(), date_details(&e.start_local));
    m.insert("end_date".into(), json!(format(&e.end_local)));
    m.insert("end_date_details".into(), date_details(&e.end_local));
    m.insert("utc_start_date".into(), json!(format(&e.start_utc)));
    m.insert("utc_start_date_details".into(), date_details(&e.start_utc));
    m.insert("utc_end_date".into(), json!(format(&e.end_utc)));
    m.insert("utc_end_date_details".into(), date_details(&e.end_utc));
    m.insert("timezone".into(), json!(e.timezone));
    m.insert("timezone_abbr".into(), json!(e.timezone_abbr));
    if masked {
        m.insert("cost".into(), json!(""));
        m.insert(
            "cost_details".into(),
            json!({"currency_symbol": "", "currency_position": "", "currency_code": "", "values": []}),
        );
        m.insert("website".into(), json!(""));
    } else {
        m.insert("cost".into(), json!(e.cost.formatted()));
        m.insert("cost_details".into(), e.cost.details());
        let website = if e.website.is_empty() {
            &url
        } else {
            &e.website
        };
        m.insert("website".into(), json!(website));
    }
    m.insert("show_map".into(), flag(e.show_map));
    m.insert("show_map_link".into(), flag(e.show_map_link));
    m.insert("hide_from_listings".into(), flag(e.hide_from_listings));
    m.insert("sticky".into(), flag(e.sticky));
    m.insert("featured".into(), flag(e.featured));
    let or_empty = |v: Vec<Value>| if masked { json!([]) } else { Value::Array(v) };
    m.insert("categories".into(), or_empty(parts.categories));
    m.insert("tags".into(), or_empty(parts.tags));
    m.insert(
        "venue".into(),
        match (parts.venue, masked) {
            (Some(v), false) => v,
            _ => json!([]),
        },
    );
    m.insert("organizer".into(), or_empty(parts.organizers));
    m.insert("custom_fields".into(), json!([]));
    if let Some(ld) = parts.json_ld {
        m.insert("json_ld".into(), ld);
    }
    m.insert("language".into(), json!(meta.language.code()));
    m.insert("translations".into(), translations(&parts.translations));
    m.insert("ticketed".into(), flag(e.ticketed));
    m.insert("post_parent".into(), json!(e.post_parent));
    match parts.recurring {
        Recurring::Single => {}
        Recurring::Series(series) => {
            m.insert("recurrence".into(), json!(series.lines));
        }
        Recurring::Occurrence {
            series,
            original_start_utc,
        } => {
            m.insert("series_id".into(), json!(series));
            m.insert("recurrence_id".into(), json!(format(&original_start_utc)));
        }
    }
    Value::Object(m)
}

/// The export form of a venue's or organizer's representation (docs/api.md, "The export
/// form"; the lines of `almanac export`): `description` and `excerpt` hold the stored source
/// text instead of its paragraphs, `status` the stored status (a due `future` record stays
/// `future`). Representations embedded in events keep their ordinary form.
pub(crate) fn export_post(data: &mut Value, meta: &PostMeta) {
    data["description"] = json!(meta.description);
    data["excerpt"] = json!(meta.excerpt);
    data["status"] = json!(meta.status.as_str());
}

/// The export form of an event's representation, built unmasked and without `json_ld`: as
/// [`export_post`], and `cost_details.values` are the cost values as stored, a protected
/// event carries its `password`, and a series lists its `occurrences` (ID, original start,
/// state), so that a copy keeps their IDs, exceptions and cancellations.
pub(crate) fn export_event(
    data: &mut Value,
    e: &crate::model::event::Event,
    recurring: &Recurring,
) {
    export_post(data, &e.post);
    data["cost_details"]["values"] = json!(e.cost.values);
    if let Some(password) = &e.password {
        data["password"] = json!(password);
    }
    if let Recurring::Series(series) = recurring {
        data["occurrences"] = series
            .occurrences
            .iter()
            .map(|o| {
                json!({
                    "id": o.id,
                    "recurrence_id": format(&o.original_start_utc),
                    "state": o.state.as_str(),
                })
            })
            .collect();
    }
}

/// ISO 8601 with the zone's offset at that moment (`json_ld` dates).
fn iso_with_offset(local: &NaiveDateTime, utc: &NaiveDateTime, zone_name: &str) -> String {
    let offset = crate::values::timezone::Zone::parse(zone_name)
        .map(|z| z.offset_seconds(utc.and_utc()))
        .unwrap_or(0);
    let sign = if offset < 0 { '-' } else { '+' };
    let abs = offset.abs();
    format!(
        "{}{sign}{:02}:{:02}",
        local.format("%Y-%m-%dT%H:%M:%S"),
        abs / 3600,
        (abs % 3600) / 60
    )
}

/// The event's `json_ld`; `location` and `organizer` are the embedded
/// records' own `json_ld` objects.
pub(crate) fn event_json_ld(
    e: &crate::model::event::Event,
    links: &Links,
    now: NaiveDateTime,
    image_url: Option<&str>,
    location: Option<Value>,
    organizer: Option<Value>,
) -> Value {
    let meta = &e.post;
    let url = public_url(links, Kind::Event, meta, meta.effective_status(now));
    let mut ld = Map::new();
    ld.insert("@context".into(), json!("http://schema.org"));
    ld.insert("@type".into(), json!("Event"));
    ld.insert("name".into(), json!(meta.title.trim()));
    ld.insert(
        "description".into(),
        json!(text::json_ld_description(&meta.excerpt, &meta.description)),
    );
    if let Some(img) = image_url {
        ld.insert("image".into(), json!(img));
    }
    ld.insert("url".into(), json!(url));
    ld.insert(
        "eventAttendanceMode".into(),
        json!("https://schema.org/OfflineEventAttendanceMode"),
    );
    ld.insert(
        "eventStatus".into(),
        json!("https://schema.org/EventScheduled"),
    );
    ld.insert(
        "startDate".into(),
        json!(iso_with_offset(&e.start_local, &e.start_utc, &e.timezone)),
    );
    ld.insert(
        "endDate".into(),
        json!(iso_with_offset(&e.end_local, &e.end_utc, &e.timezone)),
    );
    if let Some(location) = location {
        ld.insert("location".into(), location);
    }
    if let Some(organizer) = organizer {
        ld.insert("organizer".into(), organizer);
    }
    if let Some(price) = e.cost.offer_price() {
        ld.insert(
            "offers".into(),
            json!({
                "@type": "Offer",
                "price": price,
                "priceCurrency": "USD",
                "url": url,
                "category": "primary",
                "availability": "inStock",
                "validFrom": format!("{}T00:00:00+00:00", meta.date_utc.format("%Y-%m-%d")),
            }),
        );
    }
    ld.insert("performer".into(), json!("Organization"));
    Value::Object(ld)
}
