//! A deterministic generator of large calendars, for benchmarks: seeded, with titles and
//! descriptions drawn from per-language word lists under Zipf-like frequencies, dates spread
//! over several years, categories, tags, and venues with coordinates in several cities.
//! Records are written straight into the store (in batches, one transaction each); build the
//! index afterwards with [`crate::index::SearchIndex::rebuild`].

use crate::model::event::Event;
use crate::model::post::{GeoPoint, Organizer, PostMeta, Venue};
use crate::model::term::Term;
use crate::model::{Kind, Language, Status};
use crate::store::{Store, StoreResult, WriteTx};
use crate::values::cost::Cost;
use chrono::{Duration, NaiveDate, NaiveDateTime};

/// The demo calendar of `almanac serve --demo`: a few hundred events over the coming year.
pub fn demo_shape(today: NaiveDateTime) -> Shape {
    Shape {
        from: today.date().and_hms_opt(0, 0, 0).expect("valid time"),
        days: 365,
        ..Shape::for_events(400)
    }
}
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const WORDS_EN: &[&str] = &[
    "music",
    "jazz",
    "night",
    "festival",
    "workshop",
    "concert",
    "market",
    "open",
    "art",
    "city",
    "garden",
    "family",
    "film",
    "dance",
    "theatre",
    "food",
    "wine",
    "talk",
    "science",
    "history",
    "harbour",
    "river",
    "summer",
    "winter",
    "spring",
    "autumn",
    "youth",
    "classic",
    "modern",
    "poetry",
    "photography",
    "design",
    "coding",
    "yoga",
    "running",
    "cycling",
    "chess",
    "choir",
    "orchestra",
    "exhibition",
    "lecture",
    "tasting",
    "craft",
    "book",
    "comedy",
    "opera",
    "folk",
];
const WORDS_PT: &[&str] = &[
    "música",
    "noite",
    "festival",
    "oficina",
    "concerto",
    "mercado",
    "arte",
    "cidade",
    "jardim",
    "família",
    "cinema",
    "dança",
    "teatro",
    "comida",
    "vinho",
    "palestra",
    "ciência",
    "história",
    "verão",
    "inverno",
    "primavera",
    "outono",
    "juventude",
    "clássico",
    "moderno",
    "poesia",
    "fotografia",
    "exposição",
    "leitura",
    "feira",
    "coral",
    "orquestra",
    "samba",
    "fado",
];
const WORDS_ES: &[&str] = &[
    "música",
    "noche",
    "festival",
    "taller",
    "concierto",
    "mercado",
    "arte",
    "ciudad",
    "jardín",
    "familia",
    "cine",
    "baile",
    "teatro",
    "comida",
    "vino",
    "charla",
    "ciencia",
    "historia",
    "verano",
    "invierno",
    "primavera",
    "otoño",
    "juventud",
    "clásico",
    "moderno",
    "poesía",
    "fotografía",
    "exposición",
    "lectura",
    "feria",
    "coro",
    "orquesta",
    "flamenco",
    "tapas",
];
const CITIES: &[(&str, f64, f64)] = &[
    ("Lisbon", 38.7223, -9.1393),
    ("Porto", 41.1579, -8.6291),
    ("Madrid", 40.4168, -3.7038),
    ("Barcelona", 41.3874, 2.1686),
    ("São Paulo", -23.5505, -46.6333),
    ("New York", 40.7128, -74.0060),
    ("London", 51.5072, -0.1276),
    ("Berlin", 52.52, 13.405),
];
const ZONES: &[&str] = &[
    "UTC",
    "Europe/Lisbon",
    "Europe/Madrid",
    "America/Sao_Paulo",
    "America/New_York",
];

/// Sizes of the supporting records for a calendar of `events` events, and its time span.
pub struct Shape {
    pub events: usize,
    /// Events start between `from` and `from + days`.
    pub from: NaiveDateTime,
    pub days: i64,
    pub venues: usize,
    pub organizers: usize,
    pub categories: usize,
    pub tags: usize,
}

impl Shape {
    /// A calendar of `events` events over three years from 2026-01-01 (benchmarks).
    pub fn for_events(events: usize) -> Shape {
        Shape {
            events,
            from: NaiveDate::from_ymd_opt(2026, 1, 1)
                .expect("valid date")
                .and_hms_opt(0, 0, 0)
                .expect("valid time"),
            days: 3 * 365,
            venues: (events / 50).clamp(5, 5000),
            organizers: (events / 100).clamp(5, 2000),
            categories: 24,
            tags: 60,
        }
    }
}

fn words(language: Language) -> &'static [&'static str] {
    match language {
        Language::En => WORDS_EN,
        Language::PtBr => WORDS_PT,
        Language::Es => WORDS_ES,
    }
}

/// A word under a Zipf-like law: the r-th word has weight 1/r.
fn zipf_word(rng: &mut StdRng, list: &'static [&'static str]) -> &'static str {
    let n = list.len() as f64;
    // Inverse of the continuous approximation of the harmonic CDF.
    let u: f64 = rng.gen();
    let rank = ((n + 1.0).powf(u) - 1.0).floor() as usize;
    list[rank.min(list.len() - 1)]
}

fn sentence(rng: &mut StdRng, language: Language, len: usize) -> String {
    let list = words(language);
    (0..len)
        .map(|_| zipf_word(rng, list))
        .collect::<Vec<_>>()
        .join(" ")
}

fn language_of(rng: &mut StdRng) -> Language {
    match rng.gen_range(0..10) {
        0..=5 => Language::En,
        6..=7 => Language::PtBr,
        _ => Language::Es,
    }
}

fn meta(
    id: u64,
    language: Language,
    title: String,
    description: String,
    date: NaiveDateTime,
) -> PostMeta {
    PostMeta {
        id,
        language,
        group: id,
        author: 1,
        status: Status::Publish,
        status_before_trash: None,
        slug: format!("{}-{id}", crate::values::slug::sanitize(&title)),
        slug_before_trash: None,
        date,
        date_utc: date,
        modified_utc: date,
        title,
        description,
        excerpt: String::new(),
        image: None,
    }
}

fn put_slug(tx: &mut WriteTx, kind: Kind, m: &PostMeta) -> StoreResult<()> {
    tx.set_slug(kind, m.language, &m.slug, m.id)?;
    tx.set_group_member(kind, m.id, m.language, m.id)
}

/// Writes a calendar of the given shape into the store, deterministically for a seed.
pub fn populate(store: &Store, shape: &Shape, seed: u64) -> StoreResult<()> {
    let mut rng = StdRng::seed_from_u64(seed);
    let base = shape.from;
    let mut terms: Vec<(Kind, Language, u64)> = Vec::new();
    let mut venues: Vec<(Language, u64)> = Vec::new();
    let mut organizers: Vec<(Language, u64)> = Vec::new();
    store.write(|tx| {
        for (kind, count) in [(Kind::Category, shape.categories), (Kind::Tag, shape.tags)] {
            for n in 0..count {
                let language = Language::ALL[n % 3];
                let id = tx.next_id(kind.sequence())?;
                let name = format!("{} {n}", zipf_word(&mut rng, words(language)));
                let term = Term {
                    id,
                    kind,
                    language,
                    group: id,
                    slug: format!("{}-{id}", crate::values::slug::sanitize(&name)),
                    name,
                    description: String::new(),
                    parent: 0,
                };
                tx.set_slug(kind, language, &term.slug, id)?;
                tx.set_group_member(kind, id, language, id)?;
                tx.put_record(kind, id, &term)?;
                terms.push((kind, language, id));
            }
        }
        for n in 0..shape.venues {
            let language = Language::ALL[n % 3];
            let (city, lat, lng) = CITIES[n % CITIES.len()];
            let id = tx.next_id(Kind::Venue.sequence())?;
            let m = meta(
                id,
                language,
                format!("{} Hall {n}", city),
                sentence(&mut rng, language, 12),
                base,
            );
            put_slug(tx, Kind::Venue, &m)?;
            let venue = Venue {
                post: m,
                address: format!("{} Main Street", n + 1),
                city: city.to_string(),
                country: String::new(),
                province: String::new(),
                state: String::new(),
                zip: format!("{:05}", n),
                phone: String::new(),
                stateprovince: String::new(),
                website: String::new(),
                show_map: true,
                show_map_link: true,
                geo: Some(GeoPoint {
                    lat: lat + rng.gen_range(-0.05..0.05),
                    lng: lng + rng.gen_range(-0.05..0.05),
                }),
            };
            tx.put_record(Kind::Venue, id, &venue)?;
            venues.push((language, id));
        }
        for n in 0..shape.organizers {
            let language = Language::ALL[n % 3];
            let id = tx.next_id(Kind::Organizer.sequence())?;
            let m = meta(
                id,
                language,
                format!("{} Society {n}", zipf_word(&mut rng, words(language))),
                String::new(),
                base,
            );
            put_slug(tx, Kind::Organizer, &m)?;
            let organizer = Organizer {
                post: m,
                phone: String::new(),
                website: String::new(),
                email: format!("contact{n}@example.org"),
            };
            tx.put_record(Kind::Organizer, id, &organizer)?;
            organizers.push((language, id));
        }
        Ok::<(), crate::store::StoreError>(())
    })?;
    let pick = |rng: &mut StdRng, pool: &[(Language, u64)], language: Language| -> Option<u64> {
        let candidates: Vec<u64> = pool
            .iter()
            .filter(|(l, _)| *l == language)
            .map(|(_, id)| *id)
            .collect();
        (!candidates.is_empty()).then(|| candidates[rng.gen_range(0..candidates.len())])
    };
    const BATCH: usize = 2000;
    let mut written = 0;
    while written < shape.events {
        let batch = BATCH.min(shape.events - written);
        store.write(|tx| {
            for _ in 0..batch {
                let language = language_of(&mut rng);
                let id = tx.next_id(Kind::Event.sequence())?;
                let title_len = rng.gen_range(2..5);
                let title = sentence(&mut rng, language, title_len);
                let description_len = rng.gen_range(10..40);
                let description = sentence(&mut rng, language, description_len);
                let start = base + Duration::minutes(rng.gen_range(0..(shape.days * 24 * 60)));
                let end = start + Duration::minutes(rng.gen_range(30..600));
                let m = meta(id, language, title, description, base);
                put_slug(tx, Kind::Event, &m)?;
                let category_pool: Vec<u64> = terms
                    .iter()
                    .filter(|(k, l, _)| *k == Kind::Category && *l == language)
                    .map(|(_, _, id)| *id)
                    .collect();
                let tag_pool: Vec<u64> = terms
                    .iter()
                    .filter(|(k, l, _)| *k == Kind::Tag && *l == language)
                    .map(|(_, _, id)| *id)
                    .collect();
                let event = Event {
                    post: m,
                    start_local: start,
                    end_local: end,
                    start_utc: start,
                    end_utc: end,
                    timezone: ZONES[rng.gen_range(0..ZONES.len())].to_string(),
                    timezone_abbr: "UTC".into(),
                    all_day: rng.gen_bool(0.05),
                    cost: Cost::default(),
                    website: String::new(),
                    show_map: true,
                    show_map_link: true,
                    hide_from_listings: rng.gen_bool(0.01),
                    sticky: false,
                    featured: rng.gen_bool(0.1),
                    ticketed: rng.gen_bool(0.2),
                    post_parent: 0,
                    categories: vec![category_pool[rng.gen_range(0..category_pool.len())]],
                    tags: (0..rng.gen_range(0..3))
                        .map(|_| tag_pool[rng.gen_range(0..tag_pool.len())])
                        .collect(),
                    venue: pick(&mut rng, &venues, language),
                    organizers: pick(&mut rng, &organizers, language).into_iter().collect(),
                    password: None,
                };
                tx.put_record(Kind::Event, id, &event)?;
            }
            Ok::<(), crate::store::StoreError>(())
        })?;
        written += batch;
    }
    Ok(())
}
