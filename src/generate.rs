//! A deterministic generator of realistic calendars, for `almanac generate` and the
//! benchmarks. For one seed it writes the same records every time.
//!
//! What it writes, in three languages (`en`, `pt-br`, `es`):
//! - a fixed category taxonomy (parents and children, every category in all three languages,
//!   one translation group each) and a list of tags (a third of them translation groups);
//! - venues in ten real cities (street addresses, postal codes, phones, coordinates near the
//!   city centre) and organizers, about a fifth of them translated;
//! - events whose titles come from templates over parallel vocabularies ("Jazz Night at the
//!   Harbour", "Noite de Jazz no Cais", "Noche de Jazz en el Puerto"), so that a translation
//!   group shares its dates and venue city and carries a translated title; descriptions of two
//!   to five sentences whose nouns and verbs follow a Zipf-like law over a few hundred words per
//!   language, so text search meets both common and rare words;
//! - local times in the venue's time zone (UTC instants and abbreviations derived by
//!   [`Event::place_in`]), with all-day and multi-day events and some events in the weeks
//!   around daylight-saving switches.
//!
//! Records are written straight into the store (events in batches, one transaction each);
//! build the index afterwards with [`crate::index::SearchIndex::rebuild`].

use crate::model::event::Event;
use crate::model::post::{GeoPoint, Organizer, PostMeta, Venue};
use crate::model::term::Term;
use crate::model::{Kind, Language, Status};
use crate::store::{Store, StoreError, StoreResult, WriteTx};
use crate::values::cost::Cost;
use crate::values::slug;
use crate::values::timezone::Zone;
use chrono::{Duration, NaiveDate, NaiveDateTime, NaiveTime};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;
use std::collections::{HashMap, HashSet};

/// Sizes of a calendar and its time span.
pub struct Shape {
    /// Event records, translations included.
    pub events: usize,
    /// Events start on the days from `from` to `from + days` (exclusive).
    pub from: NaiveDateTime,
    pub days: i64,
    /// Venues founded, each in one city and language; translations add records.
    pub venues: usize,
    /// Organizers founded; translations add records.
    pub organizers: usize,
    /// How many entries of the category taxonomy to create, in every language (at most its
    /// size; parents come before their children, so any prefix is a valid taxonomy).
    pub categories: usize,
    /// Tags per language (at most the size of the tag list).
    pub tags: usize,
    /// Share of event groups stored as draft, pending or private instead of published.
    pub unpublished_share: f64,
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
            venues: (events / 50).clamp(12, 5000),
            organizers: (events / 100).clamp(8, 2000),
            categories: TAXONOMY.len(),
            tags: TAGS.len(),
            unpublished_share: 0.02,
        }
    }
}

/// A demo-like calendar (`almanac generate --demo`): a few hundred published events over the
/// coming year.
pub fn demo_shape(today: NaiveDateTime) -> Shape {
    Shape {
        from: today.date().and_hms_opt(0, 0, 0).expect("valid time"),
        days: 365,
        venues: 40,
        organizers: 20,
        unpublished_share: 0.0,
        ..Shape::for_events(400)
    }
}

/// Event records per write transaction: large enough that commits do not dominate, small
/// enough that a transaction stays a few megabytes.
const BATCH: usize = 4000;

/// Writes a calendar of the given shape into the store, deterministically for a seed.
pub fn populate(store: &Store, shape: &Shape, seed: u64) -> StoreResult<()> {
    let mut rng = StdRng::seed_from_u64(seed);
    let words = Words::new();
    let mut slugs = SlugBook::default();
    let terms = store.write(|tx| write_terms(tx, shape, &mut slugs))?;
    let places = store.write(|tx| write_venues(tx, shape, &words, &mut rng, &mut slugs))?;
    let organizers = store.write(|tx| write_organizers(tx, shape, &words, &mut rng, &mut slugs))?;
    let calendar = Calendar::new(shape);
    let pools = Pools {
        words: &words,
        terms: &terms,
        places: &places,
        organizers: &organizers,
        calendar: &calendar,
    };
    let mut written = 0;
    while written < shape.events {
        written = store.write(|tx| {
            let mut n = written;
            while n < shape.events && n - written < BATCH {
                n += write_event_group(tx, shape, &pools, &mut rng, &mut slugs, shape.events - n)?;
            }
            Ok::<usize, StoreError>(n)
        })?;
    }
    slugs.write_index(store)
}

/// Position of a language in the `[en, pt-br, es]` arrays of the vocabularies.
fn slot(language: Language) -> usize {
    match language {
        Language::En => 0,
        Language::PtBr => 1,
        Language::Es => 2,
    }
}

/// A rank under a Zipf-like law over `n` ranks: rank r has weight about 1/(r+1). Inverts the
/// continuous approximation of the harmonic CDF, so one draw costs one `powf`.
fn zipf_rank(rng: &mut StdRng, n: usize) -> usize {
    let u: f64 = rng.gen();
    let rank = ((n as f64 + 1.0).powf(u) - 1.0) as usize;
    rank.min(n - 1)
}

fn zipf_pick<'a, T>(rng: &mut StdRng, list: &'a [T]) -> &'a T {
    &list[zipf_rank(rng, list.len())]
}

fn pick<'a, T>(rng: &mut StdRng, list: &'a [T]) -> &'a T {
    &list[rng.gen_range(0..list.len())]
}

/// FNV-1a: a hash that is the same in every build, so that the slug book (which keeps hashes,
/// not strings, to stay small at a million events) behaves identically everywhere.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The slugs handed out so far, per kind and language. Titles repeat a lot, so each base slug
/// remembers its next suffix instead of probing `-2`, `-3`, … from the start every time. A hash
/// collision can only make a free slug look taken, which costs a suffix, never a duplicate.
///
/// The slug index is written at the end, sorted: slugs come in random key order, and inserting
/// them batch by batch would rewrite most of the index's pages at every commit.
#[derive(Default)]
struct SlugBook {
    taken: HashMap<(Kind, Language), HashSet<u64>>,
    next_suffix: HashMap<(Kind, Language, u64), u32>,
    unwritten: Vec<(Kind, Language, String, u64)>,
}

impl SlugBook {
    /// A free slug for a record, registered in the slug index by [`SlugBook::write_index`].
    fn claim(&mut self, kind: Kind, language: Language, title: &str, id: u64) -> String {
        let slug = self.free_slug(kind, language, title, id);
        self.unwritten.push((kind, language, slug.clone(), id));
        slug
    }

    fn free_slug(&mut self, kind: Kind, language: Language, title: &str, id: u64) -> String {
        let base = slug::or_id(slug::sanitize(title), id);
        let base_hash = fnv1a(&base);
        let taken = self.taken.entry((kind, language)).or_default();
        if !slug::is_reserved(&base) && taken.insert(base_hash) {
            return base;
        }
        let next = self
            .next_suffix
            .entry((kind, language, base_hash))
            .or_insert(2);
        loop {
            let candidate = slug::with_suffix(&base, *next);
            *next += 1;
            if taken.insert(fnv1a(&candidate)) {
                return candidate;
            }
        }
    }

    fn write_index(&mut self, store: &Store) -> StoreResult<()> {
        let mut unwritten = std::mem::take(&mut self.unwritten);
        unwritten.sort_unstable_by(|a, b| {
            (a.0.name(), a.1.code(), &a.2).cmp(&(b.0.name(), b.1.code(), &b.2))
        });
        for chunk in unwritten.chunks(100_000) {
            store.write(|tx| {
                for (kind, language, slug, id) in chunk {
                    tx.set_slug(*kind, *language, slug, *id)?;
                }
                StoreResult::Ok(())
            })?;
        }
        Ok(())
    }
}

/// Post metadata of a generated record; the slug is claimed and registered by the caller.
fn post_meta(
    id: u64,
    group: u64,
    language: Language,
    title: String,
    description: String,
    date: NaiveDateTime,
) -> PostMeta {
    PostMeta {
        id,
        language,
        group,
        author: 1,
        status: Status::Publish,
        status_before_trash: None,
        slug: String::new(),
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

/// Claims the record's slug and registers the record's group membership.
fn register_post(
    tx: &mut WriteTx,
    slugs: &mut SlugBook,
    kind: Kind,
    meta: &mut PostMeta,
) -> StoreResult<()> {
    meta.slug = slugs.claim(kind, meta.language, &meta.title, meta.id);
    tx.set_group_member(kind, meta.group, meta.language, meta.id)
}

/// A date some time before the calendar starts (at least half a day, so that translations
/// published a few hours after their original are still in the past): when generated records
/// were published.
fn publication_date(rng: &mut StdRng, shape: &Shape) -> NaiveDateTime {
    shape.from - Duration::minutes(rng.gen_range(12 * 60..180 * 24 * 60))
}

/// The languages of a group founded in `founder`: the founder alone, or with one or both of
/// the other languages.
fn group_languages(rng: &mut StdRng, founder: Language, translated_share: f64) -> Vec<Language> {
    let mut languages = vec![founder];
    if rng.gen_bool(translated_share) {
        let mut others: Vec<Language> = Language::ALL
            .into_iter()
            .filter(|l| *l != founder)
            .collect();
        if rng.gen_bool(0.5) {
            others.swap(0, 1);
            others.truncate(1);
        }
        languages.extend(others);
    }
    languages
}

// ---------------------------------------------------------------------------------------------
// Terms

/// Category and tag IDs by taxonomy (or tag list) position and language slot.
struct TermIds {
    categories: Vec<[u64; 3]>,
    tags: Vec<[u64; 3]>,
}

impl TermIds {
    fn category(&self, index: usize, language: Language) -> Option<u64> {
        self.categories.get(index).map(|ids| ids[slot(language)])
    }
}

fn write_terms(tx: &mut WriteTx, shape: &Shape, slugs: &mut SlugBook) -> StoreResult<TermIds> {
    let mut categories: Vec<[u64; 3]> = Vec::new();
    for (parent, names) in TAXONOMY.iter().take(shape.categories) {
        let mut ids = [0; 3];
        for language in Language::ALL {
            let id = tx.next_id(Kind::Category.sequence())?;
            ids[slot(language)] = id;
            let term = Term {
                id,
                kind: Kind::Category,
                language,
                // A taxonomy is translated as a whole: each category founds a group in `en`.
                group: ids[0],
                name: names[slot(language)].to_string(),
                slug: slugs.claim(Kind::Category, language, names[slot(language)], id),
                description: String::new(),
                parent: parent.map_or(0, |p| categories[p][slot(language)]),
            };
            put_term(tx, &term)?;
        }
        categories.push(ids);
    }
    let mut tags: Vec<[u64; 3]> = Vec::new();
    for (n, names) in TAGS.iter().take(shape.tags).enumerate() {
        // Every third tag is a translation group; the others were created in each language
        // on their own, as editors do.
        let grouped = n % 3 == 0;
        let mut ids = [0; 3];
        for language in Language::ALL {
            let id = tx.next_id(Kind::Tag.sequence())?;
            ids[slot(language)] = id;
            let term = Term {
                id,
                kind: Kind::Tag,
                language,
                group: if grouped { ids[0] } else { id },
                name: names[slot(language)].to_string(),
                slug: slugs.claim(Kind::Tag, language, names[slot(language)], id),
                description: String::new(),
                parent: 0,
            };
            put_term(tx, &term)?;
        }
        tags.push(ids);
    }
    Ok(TermIds { categories, tags })
}

fn put_term(tx: &mut WriteTx, term: &Term) -> StoreResult<()> {
    tx.set_group_member(term.kind, term.group, term.language, term.id)?;
    tx.put_record(term.kind, term.id, term)
}

// ---------------------------------------------------------------------------------------------
// Venues and organizers

/// A generated venue or organizer, as events pick them.
#[derive(Clone, Copy)]
struct Linked {
    id: u64,
    /// Index into the translation groups of its kind.
    group: usize,
    /// Index into [`CITIES`].
    city: usize,
}

/// The venues (or organizers) by language, and their translation groups.
struct LinkedPool {
    by_language: [Vec<Linked>; 3],
    /// Member IDs per language slot.
    groups: Vec<[Option<u64>; 3]>,
    /// By language slot and city: the records of that language in that city.
    by_language_city: [Vec<Vec<u64>>; 3],
}

impl LinkedPool {
    fn new() -> LinkedPool {
        LinkedPool {
            by_language: Default::default(),
            groups: Vec::new(),
            by_language_city: std::array::from_fn(|_| vec![Vec::new(); CITIES.len()]),
        }
    }

    fn add(&mut self, language: Language, linked: Linked) {
        self.groups[linked.group][slot(language)] = Some(linked.id);
        self.by_language[slot(language)].push(linked);
        self.by_language_city[slot(language)][linked.city].push(linked.id);
    }
}

/// The language a venue or organizer in a city is founded in: mostly the city's own.
fn linked_language(rng: &mut StdRng, city: &City) -> Language {
    if rng.gen_bool(0.75) {
        city.language
    } else {
        *pick(rng, &Language::ALL)
    }
}

fn write_venues(
    tx: &mut WriteTx,
    shape: &Shape,
    words: &Words,
    rng: &mut StdRng,
    slugs: &mut SlugBook,
) -> StoreResult<LinkedPool> {
    let mut pool = LinkedPool::new();
    for n in 0..shape.venues {
        let city_index = n % CITIES.len();
        let city = &CITIES[city_index];
        let founder = linked_language(rng, city);
        let languages = group_languages(rng, founder, 0.2);
        let venue_type = *zipf_pick(rng, VENUE_TYPES);
        let name = *pick(rng, PROPER_NAMES);
        let street = *pick(rng, city.streets);
        let number = rng.gen_range(1..400);
        let address = match city.country {
            Country::Us | Country::Uk => format!("{number} {street}"),
            _ => format!("{street}, {number}"),
        };
        let geo = GeoPoint {
            lat: city.lat + rng.gen_range(-0.03..0.03),
            lng: city.lng + rng.gen_range(-0.03..0.03) / city.lat.to_radians().cos(),
        };
        let zip = postal_code(rng, city);
        let phone = phone_number(rng, city);
        let date = publication_date(rng, shape);
        let group_index = pool.groups.len();
        pool.groups.push([None; 3]);
        let mut group = 0;
        let mut website = String::new();
        for language in languages {
            let id = tx.next_id(Kind::Venue.sequence())?;
            if group == 0 {
                group = id;
            }
            let title = match language {
                Language::En => format!("{name} {}", venue_type[0]),
                _ => format!("{} {name}", venue_type[slot(language)]),
            };
            let sentences = rng.gen_range(1..=3);
            let description = words.paragraph(
                rng,
                language,
                Purpose::Venue,
                &Context::city(city_index),
                sentences,
            );
            let mut meta = post_meta(id, group, language, title, description, date);
            register_post(tx, slugs, Kind::Venue, &mut meta)?;
            if website.is_empty() {
                website = format!("https://{}.example.org", meta.slug);
            }
            let (province, state) = match city.country {
                Country::Us => ("", city.region),
                _ => (city.region, ""),
            };
            let venue = Venue {
                post: meta,
                address: address.clone(),
                city: city.names[slot(language)].to_string(),
                country: city.country.name().to_string(),
                province: province.to_string(),
                state: state.to_string(),
                zip: zip.clone(),
                phone: phone.clone(),
                // The rule of venues-organizers.md §5.3, as a save would apply it.
                stateprovince: city.region.to_string(),
                website: website.clone(),
                show_map: true,
                show_map_link: rng.gen_bool(0.9),
                geo: Some(geo),
            };
            tx.put_record(Kind::Venue, id, &venue)?;
            pool.add(
                language,
                Linked {
                    id,
                    group: group_index,
                    city: city_index,
                },
            );
        }
    }
    Ok(pool)
}

fn write_organizers(
    tx: &mut WriteTx,
    shape: &Shape,
    words: &Words,
    rng: &mut StdRng,
    slugs: &mut SlugBook,
) -> StoreResult<LinkedPool> {
    let mut pool = LinkedPool::new();
    for n in 0..shape.organizers {
        let city_index = (n * 7 + 3) % CITIES.len();
        let city = &CITIES[city_index];
        let founder = linked_language(rng, city);
        let languages = group_languages(rng, founder, 0.2);
        let organizer_type = *pick(rng, ORGANIZER_TYPES);
        let name = *pick(rng, PROPER_NAMES);
        let phone = if rng.gen_bool(0.8) {
            phone_number(rng, city)
        } else {
            String::new()
        };
        let date = publication_date(rng, shape);
        let group_index = pool.groups.len();
        pool.groups.push([None; 3]);
        let mut group = 0;
        let mut domain = String::new();
        for language in languages {
            let id = tx.next_id(Kind::Organizer.sequence())?;
            if group == 0 {
                group = id;
            }
            let title = match language {
                Language::En => format!("{name} {}", organizer_type[0]),
                _ => format!("{} {name}", organizer_type[slot(language)]),
            };
            let description = if rng.gen_bool(0.7) {
                let sentences = rng.gen_range(1..=2);
                words.paragraph(
                    rng,
                    language,
                    Purpose::Organizer,
                    &Context::city(city_index),
                    sentences,
                )
            } else {
                String::new()
            };
            let mut meta = post_meta(id, group, language, title, description, date);
            register_post(tx, slugs, Kind::Organizer, &mut meta)?;
            if domain.is_empty() {
                domain = format!("{}.example.org", meta.slug);
            }
            let organizer = Organizer {
                post: meta,
                phone: phone.clone(),
                website: format!("https://{domain}"),
                email: format!("info@{domain}"),
            };
            tx.put_record(Kind::Organizer, id, &organizer)?;
            pool.add(
                language,
                Linked {
                    id,
                    group: group_index,
                    city: city_index,
                },
            );
        }
    }
    Ok(pool)
}

fn digits(rng: &mut StdRng, count: u32) -> String {
    format!(
        "{:0width$}",
        rng.gen_range(0..10u64.pow(count)),
        width = count as usize
    )
}

fn postal_code(rng: &mut StdRng, city: &City) -> String {
    let prefix = city.postal_prefix;
    match city.country {
        Country::Pt => format!("{prefix}{}-{}", digits(rng, 2), digits(rng, 3)),
        Country::Br => format!("{prefix}{}-{}", digits(rng, 3), digits(rng, 3)),
        Country::Es | Country::Mx | Country::Us => format!("{prefix}{}", digits(rng, 2)),
        Country::Uk => {
            const LETTERS: &[u8] = b"ABDEFGHJLNPQRSTUWXYZ";
            let letter = |rng: &mut StdRng| char::from(*pick(rng, LETTERS));
            let (a, b) = (letter(rng), letter(rng));
            format!(
                "{} {}{a}{b}",
                pick(rng, UK_OUTWARD_CODES),
                rng.gen_range(1..10)
            )
        }
    }
}

/// Phone numbers in each country's format, in ranges set aside for fiction where there are
/// such ranges (555-01xx in North America, 020 7946 0xxx in London).
fn phone_number(rng: &mut StdRng, city: &City) -> String {
    let prefix = city.phone_prefix;
    match city.country {
        Country::Pt => format!("{prefix} {} {}", digits(rng, 3), digits(rng, 4)),
        Country::Br => format!("{prefix} 9{}-{}", digits(rng, 4), digits(rng, 4)),
        Country::Es => format!(
            "{prefix} {} {} {}",
            digits(rng, 3),
            digits(rng, 2),
            digits(rng, 2)
        ),
        Country::Mx => format!("{prefix} {} {}", digits(rng, 4), digits(rng, 4)),
        Country::Us => format!("{prefix}-555-01{}", digits(rng, 2)),
        Country::Uk => format!("{prefix} 7946 0{}", digits(rng, 3)),
    }
}

// ---------------------------------------------------------------------------------------------
// Time zones, DST switches and costs

/// What events need to know about places and time: a zone per city (and UTC for online
/// events), the days on which each zone switches offset within the span, and cost pools.
struct Calendar {
    /// One zone per entry of [`CITIES`], then UTC.
    zones: Vec<Zone>,
    /// Per zone: the days within the span whose noon has another offset than the day before.
    switches: Vec<Vec<NaiveDate>>,
    first_day: NaiveDate,
    days: i64,
    /// By currency, language slot and variant.
    costs: Vec<[Vec<Cost>; 3]>,
}

const UTC_ZONE: usize = CITIES.len();

impl Calendar {
    fn new(shape: &Shape) -> Calendar {
        let mut zones: Vec<Zone> = CITIES
            .iter()
            .map(|city| Zone::parse(city.zone).expect("a zone of the bundled database"))
            .collect();
        zones.push(Zone::Utc);
        let first_day = shape.from.date();
        let days = shape.days.max(1);
        let noon = NaiveTime::from_hms_opt(12, 0, 0).expect("valid time");
        let offset_on =
            |zone: &Zone, day: NaiveDate| zone.offset_seconds(zone.to_utc(day.and_time(noon)));
        let switches = zones
            .iter()
            .map(|zone| {
                (1..days)
                    .map(|d| first_day + Duration::days(d))
                    .filter(|day| {
                        offset_on(zone, *day) != offset_on(zone, *day - Duration::days(1))
                    })
                    .collect()
            })
            .collect();
        let costs = CURRENCIES
            .iter()
            .map(|symbol| std::array::from_fn(|language| cost_pool(symbol, language)))
            .collect();
        Calendar {
            zones,
            switches,
            first_day,
            days,
            costs,
        }
    }

    /// A day of the span, clamped into it.
    fn day(&self, offset: i64) -> NaiveDate {
        self.first_day + Duration::days(offset.clamp(0, self.days - 1))
    }
}

/// The cost variants for a currency: free first, then plain amounts, amounts with the symbol,
/// and ranges. The same variant index gives the same price in every language.
fn cost_pool(symbol: &str, language: usize) -> Vec<Cost> {
    const AMOUNTS: [&str; 10] = ["5", "8", "10", "12", "15", "20", "25", "30", "40", "50"];
    const FREE: [&str; 3] = ["Free", "Grátis", "Gratis"];
    let mut values = vec![json!(FREE[language])];
    values.extend(AMOUNTS.iter().map(|a| json!(a)));
    values.extend(AMOUNTS.iter().enumerate().map(|(n, a)| {
        // Symbols after the amount are common for the euro.
        if symbol == "€" && n % 3 == 0 {
            json!(format!("{a}{symbol}"))
        } else {
            json!(format!("{symbol}{a}"))
        }
    }));
    values.extend(
        [
            ("5", "12"),
            ("10", "25"),
            ("15", "30"),
            ("20", "50"),
            ("8", "15"),
        ]
        .iter()
        .map(|(low, high)| json!([low, high])),
    );
    values
        .iter()
        .map(|value| Cost::from_write(value).expect("a valid cost"))
        .collect()
}

const CURRENCIES: [&str; 4] = ["€", "R$", "$", "£"];

fn currency_of_language(language: Language) -> usize {
    match language {
        Language::En => 2,
        Language::PtBr => 1,
        Language::Es => 0,
    }
}

// ---------------------------------------------------------------------------------------------
// Events

struct Pools<'a> {
    words: &'a Words,
    terms: &'a TermIds,
    places: &'a LinkedPool,
    organizers: &'a LinkedPool,
    calendar: &'a Calendar,
}

/// The language-independent part of an event title: which words of the parallel vocabularies
/// it uses, and how they are put together.
#[derive(Clone, Copy)]
struct TitlePlan {
    domain: usize,
    topic: usize,
    kind: usize,
    form: TitleForm,
}

#[derive(Clone, Copy, PartialEq)]
enum TitleForm {
    Plain,
    Place(usize),
    Audience(usize),
    Modifier(usize),
    City,
}

impl TitlePlan {
    fn draw(rng: &mut StdRng, has_city: bool) -> TitlePlan {
        let total: u32 = DOMAINS.iter().map(|d| d.weight).sum();
        let mut roll = rng.gen_range(0..total);
        let domain = DOMAINS
            .iter()
            .position(|d| {
                let hit = roll < d.weight;
                roll = roll.saturating_sub(d.weight);
                hit
            })
            .expect("a domain under the total weight");
        let topic = zipf_rank(rng, DOMAINS[domain].topics.len());
        let kind = zipf_rank(rng, DOMAINS[domain].kinds.len());
        let family = DOMAINS[domain].category == FAMILY;
        let form = match rng.gen_range(0..100) {
            0..=34 => TitleForm::Plain,
            35..=59 => TitleForm::Place(rng.gen_range(0..PLACES.len())),
            60..=71 => TitleForm::Audience(if family {
                rng.gen_range(0..FAMILY_AUDIENCES)
            } else {
                zipf_rank(rng, AUDIENCES.len())
            }),
            72..=89 => TitleForm::Modifier(zipf_rank(rng, MODIFIERS.len())),
            _ if has_city => TitleForm::City,
            _ => TitleForm::Plain,
        };
        TitlePlan {
            domain,
            topic,
            kind,
            form,
        }
    }

    fn render(&self, language: Language, city: Option<usize>) -> String {
        let s = slot(language);
        let domain = &DOMAINS[self.domain];
        let topic = domain.topics[self.topic][s];
        let kind = domain.kinds[self.kind][s];
        let city = city.map_or("", |c| CITIES[c].names[s]);
        match (language, self.form) {
            (Language::En, TitleForm::Plain) => format!("{topic} {kind}"),
            (Language::En, TitleForm::Place(p)) => format!("{topic} {kind} {}", PLACES[p][s]),
            (Language::En, TitleForm::Audience(a)) => {
                format!("{topic} {kind} for {}", AUDIENCES[a][s])
            }
            (Language::En, TitleForm::Modifier(m)) => format!("{} {topic} {kind}", MODIFIERS[m][s]),
            (Language::En, TitleForm::City) => format!("{city} {topic} {kind}"),
            (_, TitleForm::Plain) => format!("{kind} de {topic}"),
            (_, TitleForm::Place(p)) => format!("{kind} de {topic} {}", PLACES[p][s]),
            (_, TitleForm::Audience(a)) => format!("{kind} de {topic} para {}", AUDIENCES[a][s]),
            (_, TitleForm::Modifier(m)) => format!("{kind} de {topic} {}", MODIFIERS[m][s]),
            (_, TitleForm::City) => format!("{kind} de {topic} de {city}"),
        }
    }
}

/// Local start and end of an event.
struct When {
    start: NaiveDateTime,
    end: NaiveDateTime,
    all_day: bool,
}

fn at(day: NaiveDate, hour: u32, minute: u32) -> NaiveDateTime {
    day.and_hms_opt(hour, minute, 0).expect("valid time")
}

/// Start hours from 09:00 to 22:00, evenings most often.
const START_HOUR_WEIGHTS: [(u32, u32); 14] = [
    (9, 4),
    (10, 6),
    (11, 5),
    (12, 3),
    (13, 3),
    (14, 4),
    (15, 5),
    (16, 5),
    (17, 6),
    (18, 10),
    (19, 13),
    (20, 11),
    (21, 6),
    (22, 2),
];

fn start_time(rng: &mut StdRng) -> (u32, u32) {
    let total: u32 = START_HOUR_WEIGHTS.iter().map(|(_, w)| w).sum();
    let mut roll = rng.gen_range(0..total);
    let mut hour = 19;
    for (h, weight) in START_HOUR_WEIGHTS {
        if roll < weight {
            hour = h;
            break;
        }
        roll -= weight;
    }
    let minute = *pick(rng, &[0, 0, 0, 0, 0, 30, 30, 15, 45]);
    (hour, minute)
}

fn draw_when(rng: &mut StdRng, calendar: &Calendar, zone: usize) -> When {
    let switches = &calendar.switches[zone];
    let day = if !switches.is_empty() && rng.gen_bool(0.08) {
        let switch = *pick(rng, switches);
        if rng.gen_bool(0.3) {
            // A late party through the night of the switch: its wall clock skips or repeats
            // an hour, and some start inside the skipped or repeated hour.
            let start = if rng.gen_bool(0.7) {
                at(
                    switch - Duration::days(1),
                    rng.gen_range(22..24),
                    rng.gen_range(0..4) * 15,
                )
            } else {
                at(switch, rng.gen_range(0..3), rng.gen_range(0..4) * 15)
            };
            let end = start + Duration::minutes(rng.gen_range(12..=20) * 15);
            return When {
                start,
                end,
                all_day: false,
            };
        }
        let first = (switch - calendar.first_day).num_days();
        calendar.day(first + rng.gen_range(-10..=10))
    } else {
        calendar.day(rng.gen_range(0..calendar.days))
    };
    match rng.gen_range(0..100) {
        0..=4 => {
            let extra = if rng.gen_bool(0.8) {
                0
            } else {
                rng.gen_range(1..=2)
            };
            When {
                start: at(day, 0, 0),
                end: (day + Duration::days(extra))
                    .and_hms_opt(23, 59, 59)
                    .expect("valid time"),
                all_day: true,
            }
        }
        5..=9 => {
            let (hour, minute) = start_time(rng);
            let last = day + Duration::days(rng.gen_range(1..=4));
            When {
                start: at(day, hour, minute),
                end: at(last, rng.gen_range(16..=23), rng.gen_range(0..4) * 15),
                all_day: false,
            }
        }
        _ => {
            let (hour, minute) = start_time(rng);
            let start = at(day, hour, minute);
            When {
                start,
                end: start + Duration::minutes(rng.gen_range(4..=16) * 15),
                all_day: false,
            }
        }
    }
}

/// Writes one event and its translations (at most `room` records); returns how many it wrote.
fn write_event_group(
    tx: &mut WriteTx,
    shape: &Shape,
    pools: &Pools,
    rng: &mut StdRng,
    slugs: &mut SlugBook,
    room: usize,
) -> StoreResult<usize> {
    let founder = *pick(
        rng,
        &[
            Language::En,
            Language::En,
            Language::En,
            Language::PtBr,
            Language::PtBr,
            Language::Es,
            Language::Es,
        ][..],
    );
    let mut languages = group_languages(rng, founder, 0.12);
    languages.truncate(room);
    let founding_venue = {
        let pool = &pools.places.by_language[slot(founder)];
        (!pool.is_empty() && rng.gen_bool(0.92)).then(|| *zipf_pick(rng, pool))
    };
    let city = founding_venue.map(|v| v.city);
    let zone = match city {
        Some(c) => c,
        // Online events: mostly announced in UTC.
        None if rng.gen_bool(0.5) => UTC_ZONE,
        None => rng.gen_range(0..CITIES.len()),
    };
    let plan = TitlePlan::draw(rng, city.is_some());
    let when = draw_when(rng, pools.calendar, zone);
    let currency = city.map_or(currency_of_language(founder), |c| CITIES[c].currency);
    let cost_variant = rng.gen_bool(0.5).then(|| {
        if rng.gen_bool(0.25) {
            0
        } else {
            rng.gen_range(1..pools.calendar.costs[currency][0].len())
        }
    });
    let leaf = DOMAINS[plan.domain].category;
    let mut categories = vec![leaf];
    if rng.gen_bool(0.25) {
        if let Some(parent) = TAXONOMY[leaf].0 {
            categories.push(parent);
        }
    }
    if let TitleForm::Audience(a) = plan.form {
        if a < FAMILY_AUDIENCES && leaf != FAMILY {
            categories.push(FAMILY);
        }
    }
    let tag_count = *pick(rng, &[0, 0, 0, 1, 1, 1, 1, 2, 2, 3]);
    let mut tags: Vec<usize> = Vec::new();
    if !pools.terms.tags.is_empty() {
        for _ in 0..tag_count {
            let tag = zipf_rank(rng, pools.terms.tags.len());
            if !tags.contains(&tag) {
                tags.push(tag);
            }
        }
    }
    let organizers: Vec<Linked> = {
        let pool = &pools.organizers.by_language[slot(founder)];
        let count = if pool.is_empty() {
            0
        } else {
            *pick(rng, &[0, 0, 1, 1, 1, 1, 1, 1, 2, 2])
        };
        let mut chosen: Vec<Linked> = Vec::new();
        for _ in 0..count {
            let organizer = *pick(rng, pool);
            if !chosen.iter().any(|o| o.id == organizer.id) {
                chosen.push(organizer);
            }
        }
        chosen
    };
    let status = if rng.gen_bool(shape.unpublished_share) {
        *pick(rng, &[Status::Draft, Status::Pending, Status::Private])
    } else {
        Status::Publish
    };
    let featured = rng.gen_bool(0.1);
    let sticky = rng.gen_bool(0.02);
    let ticketed = rng.gen_bool(0.15);
    let hide_from_listings = rng.gen_bool(0.01);
    let has_website = rng.gen_bool(0.25);
    let date = publication_date(rng, shape);
    let zone_value = &pools.calendar.zones[zone];

    let mut group = 0;
    for (n, &language) in languages.iter().enumerate() {
        let id = tx.next_id(Kind::Event.sequence())?;
        if group == 0 {
            group = id;
        }
        let s = slot(language);
        // A translation keeps the venue when its group has a member in the language, else
        // takes a venue of its language in the same city, else has none.
        let venue = founding_venue.and_then(|v| {
            pools.places.groups[v.group][s].or_else(|| {
                let local = &pools.places.by_language_city[s][v.city];
                (!local.is_empty()).then(|| *pick(rng, local))
            })
        });
        let title = plan.render(language, city);
        let context = Context {
            city: city.unwrap_or(zone % CITIES.len()),
            plan: Some(plan),
        };
        let sentences = rng.gen_range(2..=5);
        let description = pools
            .words
            .paragraph(rng, language, Purpose::Event, &context, sentences);
        let mut meta = post_meta(
            id,
            group,
            language,
            title,
            description,
            date + Duration::hours(n as i64 * 5),
        );
        meta.status = status;
        if rng.gen_bool(0.05) {
            meta.excerpt = pools
                .words
                .paragraph(rng, language, Purpose::Event, &context, 1);
        }
        register_post(tx, slugs, Kind::Event, &mut meta)?;
        let website = if has_website {
            format!(
                "https://tickets.example.com/{}/{}",
                language.code(),
                meta.slug
            )
        } else {
            String::new()
        };
        let mut event = Event {
            post: meta,
            start_local: when.start,
            end_local: when.end,
            start_utc: when.start,
            end_utc: when.end,
            timezone: String::new(),
            timezone_abbr: String::new(),
            all_day: when.all_day,
            cost: cost_variant.map_or_else(Cost::default, |v| {
                pools.calendar.costs[currency][s][v].clone()
            }),
            website,
            show_map: venue.is_some(),
            show_map_link: venue.is_some(),
            hide_from_listings,
            sticky,
            featured,
            ticketed,
            post_parent: 0,
            categories: categories
                .iter()
                .filter_map(|&c| pools.terms.category(c, language))
                .collect(),
            tags: tags.iter().map(|&t| pools.terms.tags[t][s]).collect(),
            venue,
            organizers: organizers
                .iter()
                .filter_map(|o| pools.organizers.groups[o.group][s])
                .collect(),
            password: None,
        };
        event.place_in(zone_value);
        tx.put_record(Kind::Event, id, &event)?;
    }
    Ok(languages.len())
}

// ---------------------------------------------------------------------------------------------
// Descriptions

/// What a description may mention besides its Zipf-drawn words.
struct Context {
    city: usize,
    plan: Option<TitlePlan>,
}

impl Context {
    fn city(city: usize) -> Context {
        Context { city, plan: None }
    }
}

#[derive(Clone, Copy)]
enum Purpose {
    Event,
    Venue,
    Organizer,
}

/// A piece of a sentence template.
#[derive(Clone, Copy)]
enum Piece {
    Text(&'static str),
    /// A noun drawn under the Zipf law.
    Noun,
    /// A verb (infinitive) drawn under the Zipf law.
    Verb,
    /// The event's kind, topic, a place phrase, and the city.
    Kind,
    Topic,
    Place,
    City,
}

fn parse_template(template: &'static str) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            pieces.push(Piece::Text(&rest[..open]));
        }
        let close = open + rest[open..].find('}').expect("a closed slot");
        pieces.push(match &rest[open + 1..close] {
            "n" => Piece::Noun,
            "v" => Piece::Verb,
            "k" => Piece::Kind,
            "t" => Piece::Topic,
            "p" => Piece::Place,
            "c" => Piece::City,
            other => panic!("unknown slot {other} in {template}"),
        });
        rest = &rest[close + 1..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Text(rest));
    }
    pieces
}

/// The description vocabularies of one language, split and parsed once.
struct LanguageWords {
    nouns: Vec<&'static str>,
    verbs: Vec<&'static str>,
    event_sentences: Vec<Vec<Piece>>,
    venue_sentences: Vec<Vec<Piece>>,
    organizer_sentences: Vec<Vec<Piece>>,
}

struct Words {
    languages: [LanguageWords; 3],
}

impl Words {
    fn new() -> Words {
        let parse = |templates: &[&'static str]| -> Vec<Vec<Piece>> {
            templates.iter().map(|t| parse_template(t)).collect()
        };
        Words {
            languages: std::array::from_fn(|s| LanguageWords {
                nouns: NOUNS[s].split_whitespace().collect(),
                verbs: VERBS[s].split_whitespace().collect(),
                event_sentences: parse(EVENT_SENTENCES[s]),
                venue_sentences: parse(VENUE_SENTENCES[s]),
                organizer_sentences: parse(ORGANIZER_SENTENCES[s]),
            }),
        }
    }

    /// `sentences` sentences, separated by spaces.
    fn paragraph(
        &self,
        rng: &mut StdRng,
        language: Language,
        purpose: Purpose,
        context: &Context,
        sentences: usize,
    ) -> String {
        let s = slot(language);
        let words = &self.languages[s];
        let templates = match purpose {
            Purpose::Event => &words.event_sentences,
            Purpose::Venue => &words.venue_sentences,
            Purpose::Organizer => &words.organizer_sentences,
        };
        let mut text = String::with_capacity(sentences * 90);
        // Consecutive templates from a random start, so sentences of a paragraph differ.
        let first = rng.gen_range(0..templates.len());
        for n in 0..sentences {
            if n > 0 {
                text.push(' ');
            }
            for piece in &templates[(first + n * 5) % templates.len()] {
                match *piece {
                    Piece::Text(t) => text.push_str(t),
                    Piece::Noun => text.push_str(words.nouns[zipf_rank(rng, words.nouns.len())]),
                    Piece::Verb => text.push_str(words.verbs[zipf_rank(rng, words.verbs.len())]),
                    Piece::City => text.push_str(CITIES[context.city].names[s]),
                    Piece::Place => {
                        let place = match context.plan.map(|p| p.form) {
                            Some(TitleForm::Place(p)) => p,
                            _ => rng.gen_range(0..PLACES.len()),
                        };
                        push_lowercase(&mut text, PLACES[place][s]);
                    }
                    Piece::Kind | Piece::Topic => {
                        let plan = context.plan.unwrap_or(TitlePlan {
                            domain: 0,
                            topic: 0,
                            kind: 0,
                            form: TitleForm::Plain,
                        });
                        let domain = &DOMAINS[plan.domain];
                        let word = match piece {
                            Piece::Kind => domain.kinds[plan.kind][s],
                            _ => domain.topics[plan.topic][s],
                        };
                        push_lowercase(&mut text, word);
                    }
                }
            }
        }
        text
    }
}

fn push_lowercase(text: &mut String, word: &str) {
    text.extend(word.chars().flat_map(char::to_lowercase));
}

// ---------------------------------------------------------------------------------------------
// Vocabularies. Arrays of three are `[en, pt-br, es]` and parallel: the same index is the same
// thing in each language, which is what makes generated translations translations.

type Trio = [&'static str; 3];

/// The category taxonomy: parent position (parents first) and names.
const TAXONOMY: &[(Option<usize>, Trio)] = &[
    (None, ["Music", "Música", "Música"]),
    (Some(0), ["Jazz", "Jazz", "Jazz"]),
    (Some(0), ["Classical", "Clássica", "Clásica"]),
    (Some(0), ["Rock & Pop", "Rock e Pop", "Rock y Pop"]),
    (
        Some(0),
        ["World & Folk", "Música do Mundo", "Músicas del Mundo"],
    ),
    (None, ["Arts", "Artes", "Artes"]),
    (Some(5), ["Theatre", "Teatro", "Teatro"]),
    (Some(5), ["Film", "Cinema", "Cine"]),
    (Some(5), ["Visual Arts", "Artes Visuais", "Artes Visuales"]),
    (Some(5), ["Dance", "Dança", "Danza"]),
    (Some(5), ["Literature", "Literatura", "Literatura"]),
    (None, ["Family", "Família", "Familia"]),
    (None, ["Food & Drink", "Comida e Bebida", "Comida y Bebida"]),
    (None, ["Sports", "Esportes", "Deportes"]),
    (
        None,
        [
            "Talks & Workshops",
            "Palestras e Oficinas",
            "Charlas y Talleres",
        ],
    ),
    (
        None,
        ["Markets & Fairs", "Feiras e Mercados", "Mercados y Ferias"],
    ),
];

/// Position of "Family" in [`TAXONOMY`].
const FAMILY: usize = 11;

/// A kind of event: its (leaf) category, how common it is, and what its titles are made of,
/// each list ordered from the most to the least common.
struct Domain {
    category: usize,
    weight: u32,
    topics: &'static [Trio],
    kinds: &'static [Trio],
}

const DOMAINS: &[Domain] = &[
    Domain {
        category: 1,
        weight: 9,
        topics: &[
            ["Jazz", "Jazz", "Jazz"],
            ["Swing", "Swing", "Swing"],
            ["Bossa Nova", "Bossa Nova", "Bossa Nova"],
            ["Blues", "Blues", "Blues"],
            ["Latin Jazz", "Jazz Latino", "Jazz Latino"],
            ["Big Band", "Big Band", "Big Band"],
            ["Bebop", "Bebop", "Bebop"],
            ["Soul", "Soul", "Soul"],
            ["Gospel", "Gospel", "Góspel"],
        ],
        kinds: &[
            ["Night", "Noite", "Noche"],
            ["Concert", "Concerto", "Concierto"],
            ["Jam Session", "Jam Session", "Jam Session"],
            ["Festival", "Festival", "Festival"],
            ["Brunch", "Brunch", "Brunch"],
            ["Masterclass", "Masterclass", "Clase Magistral"],
        ],
    },
    Domain {
        category: 2,
        weight: 7,
        topics: &[
            ["Chamber Music", "Música de Câmara", "Música de Cámara"],
            ["Piano", "Piano", "Piano"],
            ["Baroque", "Barroco", "Barroco"],
            ["Opera", "Ópera", "Ópera"],
            ["String Quartet", "Quarteto de Cordas", "Cuarteto de Cuerda"],
            ["Choral Music", "Música Coral", "Música Coral"],
            ["Symphonic Music", "Música Sinfônica", "Música Sinfónica"],
            ["Organ", "Órgão", "Órgano"],
            ["Guitar", "Violão", "Guitarra"],
            ["Harpsichord", "Cravo", "Clavecín"],
        ],
        kinds: &[
            ["Concert", "Concerto", "Concierto"],
            ["Recital", "Recital", "Recital"],
            ["Gala", "Gala", "Gala"],
            ["Festival", "Festival", "Festival"],
            ["Masterclass", "Masterclass", "Clase Magistral"],
            ["Series", "Ciclo", "Ciclo"],
        ],
    },
    Domain {
        category: 3,
        weight: 8,
        topics: &[
            ["Rock", "Rock", "Rock"],
            ["Indie", "Indie", "Indie"],
            ["Pop", "Pop", "Pop"],
            [
                "Electronic Music",
                "Música Eletrônica",
                "Música Electrónica",
            ],
            ["Hip Hop", "Hip Hop", "Hip Hop"],
            ["Punk", "Punk", "Punk"],
            ["Reggae", "Reggae", "Reggae"],
            ["Karaoke", "Karaokê", "Karaoke"],
            ["Vinyl", "Vinil", "Vinilo"],
        ],
        kinds: &[
            ["Night", "Noite", "Noche"],
            ["Concert", "Show", "Concierto"],
            ["Festival", "Festival", "Festival"],
            ["Party", "Festa", "Fiesta"],
            ["Showcase", "Mostra", "Muestra"],
        ],
    },
    Domain {
        category: 4,
        weight: 7,
        topics: &[
            ["Fado", "Fado", "Fado"],
            ["Samba", "Samba", "Samba"],
            ["Flamenco", "Flamenco", "Flamenco"],
            ["Tango", "Tango", "Tango"],
            ["Forró", "Forró", "Forró"],
            ["Cumbia", "Cumbia", "Cumbia"],
            ["Choro", "Choro", "Choro"],
            ["Celtic Music", "Música Celta", "Música Celta"],
            ["Mariachi", "Mariachi", "Mariachi"],
            ["Bluegrass", "Bluegrass", "Bluegrass"],
            ["Son Jarocho", "Son Jarocho", "Son Jarocho"],
        ],
        kinds: &[
            ["Night", "Noite", "Noche"],
            ["Concert", "Concerto", "Concierto"],
            ["Circle", "Roda", "Rueda"],
            ["Festival", "Festival", "Festival"],
            ["Evening", "Serão", "Velada"],
        ],
    },
    Domain {
        category: 6,
        weight: 6,
        topics: &[
            ["Comedy", "Comédia", "Comedia"],
            ["Improv", "Improviso", "Improvisación"],
            ["Stand-up", "Stand-up", "Monólogos"],
            ["Drama", "Drama", "Drama"],
            ["Musical Theatre", "Teatro Musical", "Teatro Musical"],
            ["Puppetry", "Marionetes", "Títeres"],
            ["Clowning", "Palhaçaria", "Clown"],
            ["Mime", "Mímica", "Mimo"],
        ],
        kinds: &[
            ["Show", "Espetáculo", "Espectáculo"],
            ["Night", "Noite", "Noche"],
            ["Festival", "Festival", "Festival"],
            ["Workshop", "Oficina", "Taller"],
            ["Premiere", "Estreia", "Estreno"],
        ],
    },
    Domain {
        category: 7,
        weight: 6,
        topics: &[
            ["Documentary", "Documentário", "Documental"],
            ["Classic Film", "Cinema Clássico", "Cine Clásico"],
            ["Animation", "Animação", "Animación"],
            ["Short Film", "Curtas-Metragens", "Cortometrajes"],
            ["Horror", "Terror", "Terror"],
            ["Silent Film", "Cinema Mudo", "Cine Mudo"],
            ["Film Noir", "Cinema Noir", "Cine Negro"],
            [
                "Latin American Cinema",
                "Cinema Latino-Americano",
                "Cine Latinoamericano",
            ],
        ],
        kinds: &[
            ["Screening", "Sessão", "Proyección"],
            ["Festival", "Festival", "Festival"],
            ["Night", "Noite", "Noche"],
            ["Marathon", "Maratona", "Maratón"],
            ["Series", "Ciclo", "Ciclo"],
        ],
    },
    Domain {
        category: 8,
        weight: 6,
        topics: &[
            ["Photography", "Fotografia", "Fotografía"],
            ["Painting", "Pintura", "Pintura"],
            ["Ceramics", "Cerâmica", "Cerámica"],
            ["Illustration", "Ilustração", "Ilustración"],
            ["Street Art", "Arte Urbana", "Arte Urbano"],
            ["Sculpture", "Escultura", "Escultura"],
            ["Watercolour", "Aquarela", "Acuarela"],
            [
                "Contemporary Art",
                "Arte Contemporânea",
                "Arte Contemporáneo",
            ],
            ["Printmaking", "Gravura", "Grabado"],
            ["Mosaic", "Mosaico", "Mosaico"],
        ],
        kinds: &[
            ["Exhibition", "Exposição", "Exposición"],
            ["Workshop", "Oficina", "Taller"],
            ["Guided Tour", "Visita Guiada", "Visita Guiada"],
            ["Class", "Aula", "Clase"],
            ["Fair", "Feira", "Feria"],
        ],
    },
    Domain {
        category: 9,
        weight: 6,
        topics: &[
            ["Salsa", "Salsa", "Salsa"],
            ["Tango", "Tango", "Tango"],
            [
                "Contemporary Dance",
                "Dança Contemporânea",
                "Danza Contemporánea",
            ],
            ["Ballet", "Balé", "Ballet"],
            ["Swing", "Swing", "Swing"],
            ["Forró", "Forró", "Forró"],
            ["Flamenco", "Flamenco", "Flamenco"],
            ["Bachata", "Bachata", "Bachata"],
            ["Zouk", "Zouk", "Zouk"],
        ],
        kinds: &[
            ["Class", "Aula", "Clase"],
            ["Night", "Noite", "Noche"],
            ["Workshop", "Oficina", "Taller"],
            ["Social", "Baile", "Baile"],
            ["Festival", "Festival", "Festival"],
            ["Show", "Espetáculo", "Espectáculo"],
        ],
    },
    Domain {
        category: 10,
        weight: 4,
        topics: &[
            ["Poetry", "Poesia", "Poesía"],
            ["Crime Fiction", "Romance Policial", "Novela Negra"],
            ["Science Fiction", "Ficção Científica", "Ciencia Ficción"],
            ["Graphic Novel", "Quadrinhos", "Novela Gráfica"],
            ["Short Story", "Contos", "Cuentos"],
            ["Translation", "Tradução", "Traducción"],
        ],
        kinds: &[
            ["Reading", "Leitura", "Lectura"],
            ["Book Club", "Clube de Leitura", "Club de Lectura"],
            ["Slam", "Slam", "Slam"],
            ["Festival", "Festival", "Festival"],
            ["Talk", "Conversa", "Charla"],
        ],
    },
    Domain {
        category: FAMILY,
        weight: 6,
        topics: &[
            ["Storytelling", "Contação de Histórias", "Cuentacuentos"],
            ["Science", "Ciência", "Ciencia"],
            ["Circus", "Circo", "Circo"],
            ["Puppet", "Fantoches", "Títeres"],
            ["Magic", "Mágica", "Magia"],
            ["Music", "Música", "Música"],
            ["Origami", "Origami", "Origami"],
            ["Robotics", "Robótica", "Robótica"],
        ],
        kinds: &[
            ["Workshop", "Oficina", "Taller"],
            ["Show", "Espetáculo", "Espectáculo"],
            ["Morning", "Manhã", "Mañana"],
            ["Party", "Festa", "Fiesta"],
            ["Day", "Dia", "Día"],
        ],
    },
    Domain {
        category: 12,
        weight: 8,
        topics: &[
            ["Wine", "Vinho", "Vino"],
            ["Craft Beer", "Cerveja Artesanal", "Cerveza Artesanal"],
            ["Coffee", "Café", "Café"],
            ["Cheese", "Queijo", "Queso"],
            ["Street Food", "Comida de Rua", "Comida Callejera"],
            ["Tapas", "Petiscos", "Tapas"],
            ["Chocolate", "Chocolate", "Chocolate"],
            ["Olive Oil", "Azeite", "Aceite de Oliva"],
            ["Cocktail", "Coquetéis", "Cócteles"],
            ["Vegan Cooking", "Cozinha Vegana", "Cocina Vegana"],
            ["Pastry", "Confeitaria", "Repostería"],
            ["Sourdough", "Fermentação Natural", "Masa Madre"],
        ],
        kinds: &[
            ["Tasting", "Degustação", "Cata"],
            ["Festival", "Festival", "Festival"],
            ["Market", "Mercado", "Mercado"],
            ["Class", "Aula", "Clase"],
            ["Dinner", "Jantar", "Cena"],
            ["Tour", "Roteiro", "Ruta"],
        ],
    },
    Domain {
        category: 13,
        weight: 6,
        topics: &[
            ["Running", "Corrida", "Running"],
            ["Yoga", "Ioga", "Yoga"],
            ["Cycling", "Ciclismo", "Ciclismo"],
            ["Chess", "Xadrez", "Ajedrez"],
            ["Climbing", "Escalada", "Escalada"],
            ["Surf", "Surfe", "Surf"],
            ["Football", "Futebol", "Fútbol"],
            ["Swimming", "Natação", "Natación"],
            ["Pilates", "Pilates", "Pilates"],
            ["Skateboarding", "Skate", "Skate"],
            ["Tai Chi", "Tai Chi", "Taichí"],
        ],
        kinds: &[
            ["Session", "Sessão", "Sesión"],
            ["Class", "Aula", "Clase"],
            ["Club", "Clube", "Club"],
            ["Tournament", "Torneio", "Torneo"],
            ["Meetup", "Encontro", "Encuentro"],
            ["Day", "Dia", "Día"],
        ],
    },
    Domain {
        category: 14,
        weight: 8,
        topics: &[
            ["Photography", "Fotografia", "Fotografía"],
            ["Coding", "Programação", "Programación"],
            ["Entrepreneurship", "Empreendedorismo", "Emprendimiento"],
            ["Sustainability", "Sustentabilidade", "Sostenibilidad"],
            ["Urban Gardening", "Horta Urbana", "Huerto Urbano"],
            ["Astronomy", "Astronomia", "Astronomía"],
            ["History", "História", "Historia"],
            ["Architecture", "Arquitetura", "Arquitectura"],
            ["Design", "Design", "Diseño"],
            [
                "Artificial Intelligence",
                "Inteligência Artificial",
                "Inteligencia Artificial",
            ],
            ["Philosophy", "Filosofia", "Filosofía"],
            ["Creative Writing", "Escrita Criativa", "Escritura Creativa"],
            ["Calligraphy", "Caligrafia", "Caligrafía"],
            ["Bookbinding", "Encadernação", "Encuadernación"],
            ["Beekeeping", "Apicultura", "Apicultura"],
        ],
        kinds: &[
            ["Workshop", "Oficina", "Taller"],
            ["Talk", "Palestra", "Charla"],
            ["Course", "Curso", "Curso"],
            ["Lecture", "Conferência", "Conferencia"],
            ["Meetup", "Encontro", "Encuentro"],
            ["Seminar", "Seminário", "Seminario"],
        ],
    },
    Domain {
        category: 15,
        weight: 5,
        topics: &[
            ["Crafts", "Artesanato", "Artesanía"],
            ["Antiques", "Antiguidades", "Antigüedades"],
            ["Vintage", "Vintage", "Vintage"],
            ["Books", "Livros", "Libros"],
            ["Organic Produce", "Orgânicos", "Productos Orgánicos"],
            ["Flowers", "Flores", "Flores"],
            ["Records", "Discos", "Discos"],
            ["Comics", "Gibis", "Cómics"],
        ],
        kinds: &[
            ["Market", "Mercado", "Mercado"],
            ["Fair", "Feira", "Feria"],
            ["Weekend", "Fim de Semana", "Fin de Semana"],
            ["Festival", "Festival", "Festival"],
        ],
    },
];

/// Place phrases of titles ("at the Harbour"), each with its preposition.
const PLACES: &[Trio] = &[
    ["at the Harbour", "no Cais", "en el Puerto"],
    ["in the Park", "no Parque", "en el Parque"],
    ["in the Garden", "no Jardim", "en el Jardín"],
    ["on the Rooftop", "no Terraço", "en la Azotea"],
    ["in the Courtyard", "no Pátio", "en el Patio"],
    ["at the Library", "na Biblioteca", "en la Biblioteca"],
    ["at the Museum", "no Museu", "en el Museo"],
    ["by the River", "à Beira do Rio", "junto al Río"],
    ["on the Beach", "na Praia", "en la Playa"],
    ["in the Square", "na Praça", "en la Plaza"],
    [
        "at the Old Market",
        "no Mercado Antigo",
        "en el Mercado Viejo",
    ],
    ["in the Cloister", "no Claustro", "en el Claustro"],
    ["at the Lighthouse", "no Farol", "en el Faro"],
    [
        "in the Botanical Garden",
        "no Jardim Botânico",
        "en el Jardín Botánico",
    ],
    ["at the Castle", "no Castelo", "en el Castillo"],
    ["in the Vineyard", "na Vinha", "en el Viñedo"],
    [
        "at the Observatory",
        "no Observatório",
        "en el Observatorio",
    ],
    [
        "at the Old Factory",
        "na Antiga Fábrica",
        "en la Antigua Fábrica",
    ],
    ["in the Greenhouse", "na Estufa", "en el Invernadero"],
    ["at the Station", "na Estação", "en la Estación"],
    ["in the Chapel", "na Capela", "en la Capilla"],
    ["on the Pier", "no Píer", "en el Muelle"],
    ["under the Stars", "sob as Estrelas", "bajo las Estrellas"],
    ["in the Forest", "na Floresta", "en el Bosque"],
    ["at the Bookshop", "na Livraria", "en la Librería"],
    ["at the Town Hall", "na Prefeitura", "en el Ayuntamiento"],
    [
        "in the Old Town",
        "no Centro Histórico",
        "en el Casco Antiguo",
    ],
    ["at the Marina", "na Marina", "en la Marina"],
    ["on the Terrace", "na Varanda", "en la Terraza"],
    ["at the Gallery", "na Galeria", "en la Galería"],
    [
        "at the Conservatory",
        "no Conservatório",
        "en el Conservatorio",
    ],
    ["at the Cathedral", "na Catedral", "en la Catedral"],
    ["at the Windmill", "no Moinho", "en el Molino"],
    ["in the Cellar", "na Adega", "en la Bodega"],
    [
        "at the Boathouse",
        "no Galpão dos Barcos",
        "en el Embarcadero",
    ],
    ["at the Monastery", "no Mosteiro", "en el Monasterio"],
];

/// Audiences of titles ("for Beginners"); the first [`FAMILY_AUDIENCES`] are families'.
const AUDIENCES: &[Trio] = &[
    ["Kids", "Crianças", "Niños"],
    ["Families", "Famílias", "Familias"],
    ["Babies", "Bebês", "Bebés"],
    ["Beginners", "Iniciantes", "Principiantes"],
    ["Everyone", "Todos", "Todos"],
    ["Teens", "Adolescentes", "Adolescentes"],
    ["Students", "Estudantes", "Estudiantes"],
    ["Seniors", "Idosos", "Mayores"],
    ["Women", "Mulheres", "Mujeres"],
    ["Professionals", "Profissionais", "Profesionales"],
    ["Newcomers", "Recém-Chegados", "Recién Llegados"],
    ["Couples", "Casais", "Parejas"],
];
const FAMILY_AUDIENCES: usize = 3;

/// Modifiers of titles: before the topic in English, at the end in Portuguese and Spanish,
/// where they are chosen not to need agreement with the kind's gender.
const MODIFIERS: &[Trio] = &[
    ["Live", "ao Vivo", "en Vivo"],
    ["Summer", "de Verão", "de Verano"],
    ["Open-Air", "ao Ar Livre", "al Aire Libre"],
    ["Candlelight", "à Luz de Velas", "a la Luz de las Velas"],
    ["Sunset", "ao Pôr do Sol", "al Atardecer"],
    ["Annual", "Anual", "Anual"],
    ["International", "Internacional", "Internacional"],
    ["Winter", "de Inverno", "de Invierno"],
    ["Spring", "de Primavera", "de Primavera"],
    ["Autumn", "de Outono", "de Otoño"],
    ["Weekly", "Semanal", "Semanal"],
    ["Community", "da Comunidade", "de la Comunidad"],
    ["Sunday", "de Domingo", "de Domingo"],
    ["Free", "Grátis", "Gratis"],
    ["Monthly", "Mensal", "Mensual"],
    ["Neighbourhood", "do Bairro", "del Barrio"],
    ["Online", "Online", "en Línea"],
    ["Midnight", "da Meia-Noite", "de Medianoche"],
    ["Experimental", "Experimental", "Experimental"],
];

const TAGS: &[Trio] = &[
    ["Live Music", "Música ao Vivo", "Música en Vivo"],
    ["Outdoors", "Ao Ar Livre", "Al Aire Libre"],
    ["Free Entry", "Entrada Gratuita", "Entrada Libre"],
    ["Kids", "Crianças", "Niños"],
    ["Family Friendly", "Para a Família", "En Familia"],
    ["Weekend", "Fim de Semana", "Fin de Semana"],
    ["Beginners", "Iniciantes", "Principiantes"],
    ["Accessible", "Acessível", "Accesible"],
    ["Local Artists", "Artistas Locais", "Artistas Locales"],
    ["Wine", "Vinho", "Vino"],
    ["Late Night", "Madrugada", "Trasnoche"],
    ["Summer", "Verão", "Verano"],
    ["Premiere", "Estreia", "Estreno"],
    ["Tasting", "Degustação", "Degustación"],
    ["Sunset", "Pôr do Sol", "Atardecer"],
    ["Vegan", "Vegano", "Vegano"],
    ["Students", "Estudantes", "Estudiantes"],
    ["Charity", "Beneficente", "Solidario"],
    ["Online", "Online", "En Línea"],
    ["Sustainability", "Sustentabilidade", "Sostenibilidad"],
    ["Hands-on", "Mão na Massa", "Práctico"],
    ["Acoustic", "Acústico", "Acústico"],
    ["Rooftop", "Terraço", "Azotea"],
    ["Winter", "Inverno", "Invierno"],
    ["Book Launch", "Lançamento", "Presentación"],
    ["Seniors", "Terceira Idade", "Mayores"],
    ["Christmas", "Natal", "Navidad"],
    ["Carnival", "Carnaval", "Carnaval"],
    ["Pet Friendly", "Aceita Pets", "Se Admiten Mascotas"],
    ["LGBTQ+", "LGBTQ+", "LGBTQ+"],
    ["Sold Out", "Esgotado", "Agotado"],
    ["Street Food", "Comida de Rua", "Comida Callejera"],
    ["Handmade", "Feito à Mão", "Hecho a Mano"],
    ["Science", "Ciência", "Ciencia"],
    ["History", "História", "Historia"],
    ["Poetry", "Poesia", "Poesía"],
    ["Networking", "Networking", "Networking"],
    ["Bilingual", "Bilíngue", "Bilingüe"],
    ["Heritage", "Patrimônio", "Patrimonio"],
    ["Night Market", "Mercado Noturno", "Mercado Nocturno"],
];

/// Venue types, most common first: English names put them after the proper name.
const VENUE_TYPES: &[Trio] = &[
    ["Cultural Centre", "Centro Cultural", "Centro Cultural"],
    ["Music Hall", "Casa de Música", "Sala de Música"],
    ["Theatre", "Teatro", "Teatro"],
    ["Gallery", "Galeria", "Galería"],
    ["Library", "Biblioteca", "Biblioteca"],
    ["Community Hall", "Salão Comunitário", "Salón Comunitario"],
    ["Park", "Parque", "Parque"],
    ["Garden", "Jardim", "Jardín"],
    ["Auditorium", "Auditório", "Auditorio"],
    ["Studio", "Estúdio", "Estudio"],
    ["Jazz Club", "Clube de Jazz", "Club de Jazz"],
    ["Market Hall", "Mercado Coberto", "Mercado Cubierto"],
    ["Arts Centre", "Casa das Artes", "Casa de las Artes"],
    ["Cinema", "Cinema", "Cine"],
    ["Café", "Café", "Café"],
    ["Bookshop", "Livraria", "Librería"],
    ["Wine Bar", "Bar de Vinhos", "Bar de Vinos"],
    ["Sports Centre", "Centro Esportivo", "Centro Deportivo"],
    ["Concert Hall", "Sala Sinfônica", "Sala Sinfónica"],
    ["Pavilion", "Pavilhão", "Pabellón"],
    ["Warehouse", "Armazém", "Almacén"],
    ["Conservatory", "Conservatório", "Conservatorio"],
];

const ORGANIZER_TYPES: &[Trio] = &[
    ["Society", "Sociedade", "Sociedad"],
    ["Collective", "Coletivo", "Colectivo"],
    [
        "Cultural Association",
        "Associação Cultural",
        "Asociación Cultural",
    ],
    ["Foundation", "Fundação", "Fundación"],
    ["Club", "Clube", "Club"],
    ["Productions", "Produções", "Producciones"],
    ["Ensemble", "Ensemble", "Ensemble"],
    ["Orchestra", "Orquestra", "Orquesta"],
    ["Choir", "Coral", "Coro"],
    [
        "Theatre Company",
        "Companhia de Teatro",
        "Compañía de Teatro",
    ],
    ["Film Club", "Cineclube", "Cineclub"],
    ["Runners", "Corredores", "Corredores"],
    ["Cooperative", "Cooperativa", "Cooperativa"],
    ["Workshop", "Ateliê", "Taller"],
    ["Book Club", "Clube do Livro", "Club de Lectura"],
    ["Gastronomic Society", "Confraria", "Cofradía Gastronómica"],
];

/// Proper names for venues and organizers; the same in every language.
const PROPER_NAMES: &[&str] = &[
    "Aurora",
    "Miramar",
    "Boavista",
    "Bellavista",
    "Estrela",
    "Horizonte",
    "Atlântico",
    "Solar",
    "Galileo",
    "Cervantes",
    "Camões",
    "Lorca",
    "Whitman",
    "Lumière",
    "Minerva",
    "Apolo",
    "Orion",
    "Vega",
    "Alameda",
    "Ribeira",
    "Mirador",
    "Sirius",
    "Calypso",
    "Magnolia",
    "Jacarandá",
    "Olivo",
    "Cedro",
    "Andorinha",
    "Gaivota",
    "Ipê",
    "Pampa",
    "Sertão",
    "Marés",
    "Alfama",
    "Tejo",
    "Duero",
    "Hudson",
    "Coimbra",
    "Amazonas",
    "Cassiopeia",
    "Pegasus",
    "Saudade",
    "Zenit",
    "Paraíso",
    "Nebulosa",
    "Palmeira",
    "Mandala",
    "Quimera",
];

#[derive(Clone, Copy, PartialEq)]
enum Country {
    Pt,
    Br,
    Es,
    Mx,
    Us,
    Uk,
}

impl Country {
    fn name(self) -> &'static str {
        match self {
            Country::Pt => "Portugal",
            Country::Br => "Brazil",
            Country::Es => "Spain",
            Country::Mx => "Mexico",
            Country::Us => "United States",
            Country::Uk => "United Kingdom",
        }
    }
}

struct City {
    names: Trio,
    /// The language most of its venues and events use.
    language: Language,
    zone: &'static str,
    country: Country,
    /// State (United States) or province.
    region: &'static str,
    lat: f64,
    lng: f64,
    streets: &'static [&'static str],
    postal_prefix: &'static str,
    phone_prefix: &'static str,
    /// Index into [`CURRENCIES`].
    currency: usize,
}

const CITIES: &[City] = &[
    City {
        names: ["Lisbon", "Lisboa", "Lisboa"],
        language: Language::PtBr,
        zone: "Europe/Lisbon",
        country: Country::Pt,
        region: "Lisboa",
        lat: 38.7223,
        lng: -9.1393,
        streets: &[
            "Rua Augusta",
            "Avenida da Liberdade",
            "Rua do Ouro",
            "Rua da Prata",
            "Rua Garrett",
            "Calçada do Combro",
            "Rua de São Bento",
            "Avenida Almirante Reis",
        ],
        postal_prefix: "11",
        phone_prefix: "+351 21",
        currency: 0,
    },
    City {
        names: ["Porto", "Porto", "Oporto"],
        language: Language::PtBr,
        zone: "Europe/Lisbon",
        country: Country::Pt,
        region: "Porto",
        lat: 41.1579,
        lng: -8.6291,
        streets: &[
            "Rua de Santa Catarina",
            "Avenida dos Aliados",
            "Rua das Flores",
            "Rua de Cedofeita",
            "Rua do Almada",
            "Rua de Miguel Bombarda",
        ],
        postal_prefix: "40",
        phone_prefix: "+351 22",
        currency: 0,
    },
    City {
        names: ["São Paulo", "São Paulo", "São Paulo"],
        language: Language::PtBr,
        zone: "America/Sao_Paulo",
        country: Country::Br,
        region: "SP",
        lat: -23.5505,
        lng: -46.6333,
        streets: &[
            "Avenida Paulista",
            "Rua Augusta",
            "Rua Oscar Freire",
            "Rua da Consolação",
            "Avenida Brigadeiro Faria Lima",
            "Rua Haddock Lobo",
            "Avenida Ipiranga",
        ],
        postal_prefix: "01",
        phone_prefix: "+55 11",
        currency: 1,
    },
    City {
        names: ["Rio de Janeiro", "Rio de Janeiro", "Río de Janeiro"],
        language: Language::PtBr,
        zone: "America/Sao_Paulo",
        country: Country::Br,
        region: "RJ",
        lat: -22.9068,
        lng: -43.1729,
        streets: &[
            "Avenida Atlântica",
            "Rua Visconde de Pirajá",
            "Rua do Ouvidor",
            "Avenida Rio Branco",
            "Rua do Lavradio",
            "Rua Dias Ferreira",
        ],
        postal_prefix: "22",
        phone_prefix: "+55 21",
        currency: 1,
    },
    City {
        names: ["Madrid", "Madri", "Madrid"],
        language: Language::Es,
        zone: "Europe/Madrid",
        country: Country::Es,
        region: "Madrid",
        lat: 40.4168,
        lng: -3.7038,
        streets: &[
            "Calle Mayor",
            "Gran Vía",
            "Calle de Alcalá",
            "Calle de Atocha",
            "Calle del Prado",
            "Calle de Fuencarral",
            "Paseo del Prado",
        ],
        postal_prefix: "280",
        phone_prefix: "+34 91",
        currency: 0,
    },
    City {
        names: ["Barcelona", "Barcelona", "Barcelona"],
        language: Language::Es,
        zone: "Europe/Madrid",
        country: Country::Es,
        region: "Barcelona",
        lat: 41.3874,
        lng: 2.1686,
        streets: &[
            "La Rambla",
            "Passeig de Gràcia",
            "Carrer de Verdi",
            "Carrer del Consell de Cent",
            "Avinguda Diagonal",
            "Carrer de Blai",
        ],
        postal_prefix: "080",
        phone_prefix: "+34 93",
        currency: 0,
    },
    City {
        names: ["Mexico City", "Cidade do México", "Ciudad de México"],
        language: Language::Es,
        zone: "America/Mexico_City",
        country: Country::Mx,
        region: "CDMX",
        lat: 19.4326,
        lng: -99.1332,
        streets: &[
            "Avenida Álvaro Obregón",
            "Calle de Madero",
            "Avenida Amsterdam",
            "Calle Regina",
            "Avenida Insurgentes Sur",
            "Paseo de la Reforma",
        ],
        postal_prefix: "060",
        phone_prefix: "+52 55",
        currency: 2,
    },
    City {
        names: ["New York", "Nova York", "Nueva York"],
        language: Language::En,
        zone: "America/New_York",
        country: Country::Us,
        region: "NY",
        lat: 40.7128,
        lng: -74.0060,
        streets: &[
            "Broadway",
            "West 42nd Street",
            "Bleecker Street",
            "Atlantic Avenue",
            "Lexington Avenue",
            "Bedford Avenue",
            "Amsterdam Avenue",
        ],
        postal_prefix: "100",
        phone_prefix: "+1 212",
        currency: 2,
    },
    City {
        names: ["Boston", "Boston", "Boston"],
        language: Language::En,
        zone: "America/New_York",
        country: Country::Us,
        region: "MA",
        lat: 42.3601,
        lng: -71.0589,
        streets: &[
            "Newbury Street",
            "Boylston Street",
            "Massachusetts Avenue",
            "Tremont Street",
            "Hanover Street",
            "Beacon Street",
        ],
        postal_prefix: "021",
        phone_prefix: "+1 617",
        currency: 2,
    },
    City {
        names: ["London", "Londres", "Londres"],
        language: Language::En,
        zone: "Europe/London",
        country: Country::Uk,
        region: "Greater London",
        lat: 51.5072,
        lng: -0.1276,
        streets: &[
            "Baker Street",
            "Portobello Road",
            "Brick Lane",
            "Charing Cross Road",
            "Camden High Street",
            "Shaftesbury Avenue",
            "Upper Street",
        ],
        postal_prefix: "",
        phone_prefix: "+44 20",
        currency: 3,
    },
];

const UK_OUTWARD_CODES: &[&str] = &["SE1", "E1", "N1", "W1D", "WC2H", "NW1", "SW9", "EC1V"];

/// Nouns of descriptions, most common first (the Zipf law follows this order).
const NOUNS: Trio = [
    "music friends art food wine city stories dance family books songs history culture \
     coffee poetry theatre cinema nature community neighbourhood flavours ideas light colour \
     rhythm voices conversation laughter traditions memories children photography design \
     science garden river summer evening afternoon weekend craft instruments guitar piano \
     drums painting sculpture comedy improvisation harmony melody tapas cheese bread olives \
     chocolate cocktails beer tea desserts recipes spices herbs vegetables fruit markets \
     streets squares parks beaches mountains stars moon sunsets seasons landscapes islands \
     bridges trains journeys maps letters words languages novels essays comics illustrations \
     posters prints portraits films documentaries animation puppets masks costumes lanterns \
     candles flowers plants trees birds bees butterflies horses boats sails waves harbours \
     lighthouses architecture buildings ruins castles museums archives libraries workshops \
     studios ateliers tools wood clay glass paper ink fabric wool silk leather metal stone \
     mosaics tiles ceramics pottery weaving knitting embroidery quilting origami calligraphy \
     typography bookbinding printmaking lithography engraving etching woodcuts watercolours \
     murals graffiti vinyl records cassettes radio podcasts microphones speakers amplifiers \
     saxophones trumpets clarinets violins cellos harps accordions mandolins ukuleles banjos \
     flutes oboes bassoons tubas percussion choirs orchestras quartets duets soloists \
     conductors composers poets painters sculptors dancers actors directors writers editors \
     chefs bakers farmers gardeners scientists astronomers historians architects engineers \
     philosophers storytellers magicians jugglers acrobats clowns mimes volunteers neighbours \
     strangers travellers pilgrims sailors fishermen shepherds beekeepers winemakers brewers \
     cheesemakers coffee-roasters perfumers glassblowers blacksmiths carpenters luthiers \
     harpsichords clavichords theorbos lutes zithers theremins bandoneons ouds koras gamelans \
     madrigals motets fugues sonatas nocturnes lullabies ballads shanties sagas fables myths \
     legends riddles proverbs almanacs atlases astrolabes sextants telescopes microscopes \
     fossils minerals meteorites comets eclipses constellations nebulae lichens mosses ferns \
     mushrooms truffles saffron vanilla cardamom quince medlars persimmons kombucha kefir \
     sourdough marzipan nougat meringues kintsugi marquetry filigree tapestry azulejos \
     cartography ornithology mycology falconry heraldry",
    "música amigos arte comida vinho cidade histórias dança família livros canções memória \
     cultura café poesia teatro cinema natureza comunidade bairro sabores ideias luz cor \
     ritmo vozes conversa risadas tradições lembranças crianças fotografia design ciência \
     jardim rio verão noite tarde feriado artesanato instrumentos violão piano bateria \
     pintura escultura comédia improviso harmonia melodia petiscos queijo pão azeitonas \
     chocolate coquetéis cerveja chá sobremesas receitas especiarias ervas legumes frutas \
     feiras ruas praças parques praias montanhas estrelas lua pores-do-sol estações \
     paisagens ilhas pontes trens viagens mapas cartas palavras idiomas romances ensaios \
     quadrinhos ilustrações cartazes gravuras retratos filmes documentários animação \
     bonecos máscaras fantasias lanternas velas flores plantas árvores pássaros abelhas \
     borboletas cavalos barcos velas ondas portos faróis arquitetura edifícios ruínas \
     castelos museus arquivos bibliotecas oficinas estúdios ateliês ferramentas madeira \
     argila vidro papel tinta tecido lã seda couro metal pedra mosaicos azulejos cerâmica \
     olaria tecelagem tricô bordado retalhos origami caligrafia tipografia encadernação \
     xilogravura litografia aquarelas murais grafite vinil discos fitas rádio podcasts \
     microfones caixas-de-som saxofones trompetes clarinetes violinos violoncelos harpas \
     sanfonas bandolins cavaquinhos banjos flautas oboés fagotes tubas percussão coros \
     orquestras quartetos duetos solistas maestros compositores poetas pintores escultores \
     bailarinos atores diretores escritores editores cozinheiros padeiros agricultores \
     jardineiros cientistas astrônomos historiadores arquitetos engenheiros filósofos \
     contadores malabaristas acrobatas palhaços mímicos voluntários vizinhos viajantes \
     peregrinos marinheiros pescadores pastores apicultores vinicultores cervejeiros \
     queijeiros torrefadores perfumistas vidreiros ferreiros marceneiros luthiers cravos \
     clavicórdios teorbas alaúdes cítaras teremins bandoneons berimbaus koras gamelões \
     madrigais motetos fugas sonatas noturnos cantigas baladas modinhas sagas fábulas mitos \
     lendas adivinhas provérbios almanaques atlas astrolábios sextantes telescópios \
     microscópios fósseis minerais meteoritos cometas eclipses constelações nebulosas \
     líquens musgos samambaias cogumelos trufas açafrão baunilha cardamomo marmelos \
     caquis jabuticabas cupuaçu kombucha kefir fermentação marzipã nogado suspiros \
     kintsugi marchetaria filigrana tapeçaria cartografia ornitologia micologia \
     falcoaria heráldica",
    "música amigos arte comida vino ciudad historias baile familia libros canciones memoria \
     cultura café poesía teatro cine naturaleza comunidad barrio sabores ideas luz color \
     ritmo voces conversación risas tradiciones recuerdos niños fotografía diseño ciencia \
     jardín río verano noche tarde puente artesanía instrumentos guitarra piano batería \
     pintura escultura comedia improvisación armonía melodía tapas queso pan aceitunas \
     chocolate cócteles cerveza té postres recetas especias hierbas verduras fruta \
     mercados calles plazas parques playas montañas estrellas luna atardeceres estaciones \
     paisajes islas puentes trenes viajes mapas cartas palabras idiomas novelas ensayos \
     cómics ilustraciones carteles grabados retratos películas documentales animación \
     títeres máscaras disfraces faroles velas flores plantas árboles pájaros abejas \
     mariposas caballos barcos velas olas puertos faros arquitectura edificios ruinas \
     castillos museos archivos bibliotecas talleres estudios ateliers herramientas madera \
     arcilla vidrio papel tinta tela lana seda cuero metal piedra mosaicos azulejos \
     cerámica alfarería tejido punto bordado patchwork origami caligrafía tipografía \
     encuadernación xilografía litografía acuarelas murales grafiti vinilo discos casetes \
     radio pódcasts micrófonos altavoces saxofones trompetas clarinetes violines \
     violonchelos arpas acordeones mandolinas ukeleles banjos flautas oboes fagotes tubas \
     percusión coros orquestas cuartetos dúos solistas directores compositores poetas \
     pintores escultores bailarines actores cineastas escritores editores cocineros \
     panaderos agricultores jardineros científicos astrónomos historiadores arquitectos \
     ingenieros filósofos cuentistas magos malabaristas acróbatas payasos mimos \
     voluntarios vecinos viajeros peregrinos marineros pescadores pastores apicultores \
     viticultores cerveceros queseros tostadores perfumistas vidrieros herreros \
     carpinteros lutieres clavecines clavicordios tiorbas laúdes cítaras theremines \
     bandoneones guitarrones koras gamelanes madrigales motetes fugas sonatas nocturnos \
     nanas baladas coplas sagas fábulas mitos leyendas adivinanzas refranes almanaques \
     atlas astrolabios sextantes telescopios microscopios fósiles minerales meteoritos \
     cometas eclipses constelaciones nebulosas líquenes musgos helechos setas trufas \
     azafrán vainilla cardamomo membrillos nísperos caquis kombucha kéfir masa-madre \
     mazapán turrón merengues kintsugi marquetería filigrana tapicería cartografía \
     ornitología micología cetrería heráldica",
];

/// Verbs (infinitives) of descriptions, most common first.
const VERBS: Trio = [
    "discover learn dance sing listen share celebrate explore create taste play meet relax \
     paint draw write read cook practise improvise build enjoy imagine remember photograph \
     sketch debate wander unwind rehearse compose experiment collaborate reflect connect \
     stretch breathe laugh travel grow plant harvest restore preserve sew knit weave carve \
     ferment bake brew",
    "descobrir aprender dançar cantar ouvir compartilhar celebrar explorar criar provar \
     tocar conhecer relaxar pintar desenhar escrever ler cozinhar praticar improvisar \
     construir aproveitar imaginar lembrar fotografar rabiscar debater passear descansar \
     ensaiar compor experimentar colaborar refletir conectar alongar respirar rir viajar \
     crescer plantar colher restaurar preservar costurar tricotar tecer esculpir fermentar \
     assar",
    "descubrir aprender bailar cantar escuchar compartir celebrar explorar crear probar \
     tocar conocer relajarse pintar dibujar escribir leer cocinar practicar improvisar \
     construir disfrutar imaginar recordar fotografiar bocetar debatir pasear descansar \
     ensayar componer experimentar colaborar reflexionar conectar estirarse respirar reír \
     viajar crecer plantar cosechar restaurar conservar coser tejer tallar fermentar \
     hornear",
];

/// Sentence templates of event descriptions: `{n}` noun, `{v}` verb, `{k}` the event's kind,
/// `{t}` its topic, `{p}` a place phrase, `{c}` the city.
const EVENT_SENTENCES: [&[&str]; 3] = [
    &[
        "Join us for an afternoon of {n}, {n} and {n}.",
        "This {t} {k} brings together lovers of {n} and {n} from all over {c}.",
        "Come and {v} with us {p}.",
        "No experience is needed: just bring your curiosity and a love of {n}.",
        "Expect {n}, {n}, {n} and much more.",
        "Doors open half an hour before the start, with {n} and {n} on offer.",
        "Our guests will talk about {n}, {n} and the future of {t}.",
        "Places are limited, so book early if you want to {v} with us.",
        "The programme includes {n}, {n} and a short session on {n}.",
        "Suitable for all ages, from fans of {n} to first-timers.",
        "Part of this year's {t} season in {c}.",
        "Learn to {v} and {v} in a relaxed and friendly atmosphere.",
        "Bring a friend, {v} and enjoy the best of {c}.",
        "A {k} for everyone who cares about {n} and {n}.",
        "Afterwards there will be time to {v}, {v} and talk about {n}.",
        "Tickets include {n} and a guided introduction to {n}.",
    ],
    &[
        "Venha passar uma tarde de {n}, {n} e {n}.",
        "Este evento de {t} reúne amantes de {n} e {n} de toda {c}.",
        "Venha {v} com a gente {p}.",
        "Não é preciso experiência: basta trazer curiosidade e vontade de {v}.",
        "Haverá {n}, {n}, {n} e muito mais.",
        "As portas abrem meia hora antes do início, com {n} e {n} para todos.",
        "Nossos convidados vão conversar sobre {n}, {n} e {t}.",
        "As vagas são limitadas: inscreva-se cedo para {v} com a gente.",
        "A programação inclui {n}, {n} e uma breve sessão sobre {n}.",
        "Para todas as idades, dos fãs de {n} aos iniciantes.",
        "Faz parte da temporada de {t} de {c}.",
        "Aprenda a {v} e a {v} em um ambiente descontraído e acolhedor.",
        "Traga um amigo, venha {v} e aproveite o melhor de {c}.",
        "Um encontro para quem gosta de {n} e de {n}.",
        "Depois haverá tempo para {v}, {v} e conversar sobre {n}.",
        "O ingresso inclui {n} e uma introdução guiada a {n}.",
    ],
    &[
        "Acompáñanos en una tarde de {n}, {n} y {n}.",
        "Este evento de {t} reúne a amantes de {n} y {n} de toda {c}.",
        "Ven a {v} con nosotros {p}.",
        "No hace falta experiencia: solo curiosidad y ganas de {v}.",
        "Habrá {n}, {n}, {n} y mucho más.",
        "Las puertas se abren media hora antes del inicio, con {n} y {n} para todos.",
        "Nuestros invitados hablarán de {n}, {n} y {t}.",
        "Las plazas son limitadas: inscríbete pronto para {v} con nosotros.",
        "El programa incluye {n}, {n} y una breve sesión sobre {n}.",
        "Para todas las edades, desde fans de {n} hasta principiantes.",
        "Forma parte de la temporada de {t} de {c}.",
        "Aprende a {v} y a {v} en un ambiente relajado y acogedor.",
        "Trae a un amigo, ven a {v} y disfruta de lo mejor de {c}.",
        "Un encuentro para amantes de {n} y de {n}.",
        "Después habrá tiempo para {v}, {v} y charlar sobre {n}.",
        "La entrada incluye {n} y una introducción guiada a {n}.",
    ],
];

const VENUE_SENTENCES: [&[&str]; 3] = [
    &[
        "A much-loved space in the heart of {c}.",
        "Known for its evenings of {n} and {n}.",
        "A short walk from the centre of {c}, with room for {n} and {n}.",
        "Step-free access, a small café and a programme full of {n}.",
    ],
    &[
        "Um espaço querido no coração de {c}.",
        "Conhecido pelas noites de {n} e {n}.",
        "A poucos minutos do centro de {c}, com lugar para {n} e {n}.",
        "Acesso sem degraus, um pequeno café e uma programação cheia de {n}.",
    ],
    &[
        "Un espacio muy querido en el corazón de {c}.",
        "Conocido por sus noches de {n} y {n}.",
        "A pocos minutos del centro de {c}, con sitio para {n} y {n}.",
        "Acceso sin escalones, una pequeña cafetería y una programación llena de {n}.",
    ],
];

const ORGANIZER_SENTENCES: [&[&str]; 3] = [
    &[
        "We organise evenings of {n} and {n} in {c}.",
        "A group of volunteers who love {n}, {n} and {n}.",
        "Bringing people together to {v} since the early days of {n}.",
    ],
    &[
        "Organizamos encontros de {n} e {n} em {c}.",
        "Um grupo de voluntários apaixonados por {n}, {n} e {n}.",
        "Reunimos pessoas para {v} e celebrar {n}.",
    ],
    &[
        "Organizamos encuentros de {n} y {n} en {c}.",
        "Un grupo de voluntarios apasionados por {n}, {n} y {n}.",
        "Reunimos a personas para {v} y celebrar {n}.",
    ],
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Reads;
    use std::collections::BTreeMap;

    fn generated(shape: &Shape, seed: u64) -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("almanac.redb")).unwrap();
        populate(&store, shape, seed).unwrap();
        (dir, store)
    }

    /// A translation group's kind, ID and members.
    type GroupMembers = (Kind, u64, Vec<(Language, u64)>);

    /// Everything a generated store holds, in a comparable form.
    #[derive(Debug, PartialEq)]
    struct Contents {
        events: Vec<Event>,
        venues: Vec<Venue>,
        organizers: Vec<Organizer>,
        categories: Vec<Term>,
        tags: Vec<Term>,
        groups: Vec<GroupMembers>,
        slug_owners: Vec<Option<u64>>,
    }

    fn contents(store: &Store) -> Contents {
        let rx = store.read().unwrap();
        let events: Vec<Event> = rx.scan(Kind::Event).unwrap();
        let venues: Vec<Venue> = rx.scan(Kind::Venue).unwrap();
        let organizers: Vec<Organizer> = rx.scan(Kind::Organizer).unwrap();
        let categories: Vec<Term> = rx.scan(Kind::Category).unwrap();
        let tags: Vec<Term> = rx.scan(Kind::Tag).unwrap();
        let (groups, slug_owners) = {
            let posts = (events.iter().map(|e| (Kind::Event, &e.post)))
                .chain(venues.iter().map(|v| (Kind::Venue, &v.post)))
                .chain(organizers.iter().map(|o| (Kind::Organizer, &o.post)))
                .map(|(kind, m)| (kind, m.group, m.language, m.slug.as_str()));
            let terms = (categories.iter().chain(&tags))
                .map(|t| (t.kind, t.group, t.language, t.slug.as_str()));
            let keys: Vec<(Kind, u64, Language, &str)> = posts.chain(terms).collect();
            let groups = keys
                .iter()
                .map(|(kind, group, _, _)| {
                    (*kind, *group, rx.group_members(*kind, *group).unwrap())
                })
                .collect();
            let slug_owners = keys
                .iter()
                .map(|(kind, _, language, slug)| rx.slug_owner(*kind, *language, slug).unwrap())
                .collect();
            (groups, slug_owners)
        };
        Contents {
            events,
            venues,
            organizers,
            categories,
            tags,
            groups,
            slug_owners,
        }
    }

    #[test]
    fn one_seed_gives_identical_stores_and_another_seed_another() {
        let shape = Shape::for_events(300);
        let (_a, first) = generated(&shape, 7);
        let (_b, second) = generated(&shape, 7);
        let (_c, other) = generated(&shape, 8);
        let first = contents(&first);
        assert_eq!(first.events.len(), 300);
        assert_eq!(first, contents(&second));
        assert_ne!(first.events, contents(&other).events);
    }

    #[test]
    fn generated_calendars_keep_the_invariants_of_saved_records() {
        let shape = Shape::for_events(3000);
        let (_dir, store) = generated(&shape, 42);
        let c = contents(&store);
        assert_eq!(c.events.len(), 3000);

        // Slugs are unique per kind and language, and the slug index names their owners.
        let mut seen = HashSet::new();
        let owners = c
            .events
            .iter()
            .map(|e| (Kind::Event, &e.post))
            .chain(c.venues.iter().map(|v| (Kind::Venue, &v.post)))
            .chain(c.organizers.iter().map(|o| (Kind::Organizer, &o.post)));
        for (kind, meta) in owners {
            assert!(!meta.slug.is_empty());
            assert!(
                seen.insert((kind, meta.language, meta.slug.clone())),
                "{}",
                meta.slug
            );
        }
        for term in c.categories.iter().chain(&c.tags) {
            assert!(seen.insert((term.kind, term.language, term.slug.clone())));
        }
        assert!(c.slug_owners.iter().all(Option::is_some));
        let rx = store.read().unwrap();
        for event in &c.events {
            let owner = rx.slug_owner(Kind::Event, event.post.language, &event.post.slug);
            assert_eq!(owner.unwrap(), Some(event.post.id));
        }

        // Translation groups: the founding record's ID names the group, every member is
        // registered in its language and says it belongs to the group.
        let languages: HashMap<(Kind, u64), (Language, u64)> = c
            .events
            .iter()
            .map(|e| ((Kind::Event, e.post.id), (e.post.language, e.post.group)))
            .chain(
                c.venues
                    .iter()
                    .map(|v| ((Kind::Venue, v.post.id), (v.post.language, v.post.group))),
            )
            .chain(c.organizers.iter().map(|o| {
                (
                    (Kind::Organizer, o.post.id),
                    (o.post.language, o.post.group),
                )
            }))
            .chain(
                c.categories
                    .iter()
                    .chain(&c.tags)
                    .map(|t| ((t.kind, t.id), (t.language, t.group))),
            )
            .collect();
        for (kind, group, members) in &c.groups {
            assert!(
                members.iter().any(|(_, id)| id == group),
                "{kind:?} group {group}"
            );
            for (language, id) in members {
                assert_eq!(languages[&(*kind, *id)], (*language, *group));
            }
        }
        let translated = c
            .groups
            .iter()
            .filter(|(kind, _, members)| *kind == Kind::Event && members.len() > 1)
            .count();
        let in_groups = c
            .events
            .iter()
            .filter(|e| {
                c.groups
                    .iter()
                    .any(|(k, g, m)| *k == Kind::Event && *g == e.post.group && m.len() > 1)
            })
            .count();
        assert!(translated > 0);
        let share = in_groups as f64 / c.events.len() as f64;
        assert!(
            (0.15..0.35).contains(&share),
            "events with translations: {share}"
        );
        for (kind, group, members) in &c.groups {
            if *kind != Kind::Event || members.len() < 2 {
                continue;
            }
            let member = |id: u64| c.events.iter().find(|e| e.post.id == id).unwrap();
            let founder = member(*group);
            for (_, id) in members {
                let e = member(*id);
                assert_eq!(
                    (e.start_local, e.end_local, &e.timezone),
                    (founder.start_local, founder.end_local, &founder.timezone)
                );
            }
        }

        // Categories: parents exist and are categories of the same language.
        let categories: HashMap<u64, &Term> = c.categories.iter().map(|t| (t.id, t)).collect();
        let tags: HashMap<u64, &Term> = c.tags.iter().map(|t| (t.id, t)).collect();
        assert_eq!(c.categories.len(), 3 * TAXONOMY.len());
        for term in &c.categories {
            if term.parent != 0 {
                assert_eq!(categories[&term.parent].language, term.language);
                assert_eq!(categories[&term.parent].parent, 0);
            }
        }
        assert!(c.categories.iter().any(|t| t.parent != 0));
        assert!(c.tags.iter().all(|t| t.parent == 0));

        // Events: times, zones, and links to records of their own language.
        let venues: HashMap<u64, &Venue> = c.venues.iter().map(|v| (v.post.id, v)).collect();
        let organizers: HashMap<u64, &Organizer> =
            c.organizers.iter().map(|o| (o.post.id, o)).collect();
        let midnight = NaiveTime::from_hms_opt(0, 0, 0).unwrap();
        let last_second = NaiveTime::from_hms_opt(23, 59, 59).unwrap();
        let mut zones = BTreeMap::new();
        let (mut all_day, mut multi_day, mut across_switch, mut with_cost) = (0, 0, 0, 0);
        for e in &c.events {
            let language = e.post.language;
            assert!(e.end_local >= e.start_local, "{e:?}");
            assert!(e.end_utc >= e.start_utc, "{e:?}");
            if e.all_day {
                all_day += 1;
                assert_eq!(
                    (e.start_local.time(), e.end_local.time()),
                    (midnight, last_second)
                );
            }
            if e.end_local.date() > e.start_local.date() + Duration::days(1) {
                multi_day += 1;
            }
            let zone = Zone::parse(&e.timezone).unwrap();
            assert_eq!(e.start_utc, zone.to_utc(e.start_local).naive_utc());
            assert_eq!(e.end_utc, zone.to_utc(e.end_local).naive_utc());
            assert_eq!(
                e.timezone_abbr,
                zone.abbreviation(zone.to_utc(e.start_local))
            );
            if e.timezone.starts_with("America/") {
                assert_ne!(e.start_utc, e.start_local);
            }
            *zones.entry(e.timezone.clone()).or_insert(0) += 1;
            if let Some(venue) = e.venue {
                assert_eq!(venues[&venue].post.language, language);
            }
            for id in &e.organizers {
                assert_eq!(organizers[id].post.language, language);
            }
            assert!((1..=3).contains(&e.categories.len()));
            for id in &e.categories {
                assert_eq!(categories[id].language, language);
            }
            assert!(e.tags.len() <= 3);
            for id in &e.tags {
                assert_eq!(tags[id].language, language);
            }
            if !e.cost.values.is_empty() {
                with_cost += 1;
            }
            // Events through a daylight-saving switch last longer or shorter in UTC than on
            // the wall clock.
            if e.end_utc - e.start_utc != e.end_local - e.start_local {
                across_switch += 1;
            }
        }
        let n = c.events.len() as f64;
        assert!(
            (0.02..0.09).contains(&(all_day as f64 / n)),
            "all-day {all_day}"
        );
        assert!(
            (0.02..0.09).contains(&(multi_day as f64 / n)),
            "multi-day {multi_day}"
        );
        assert!(
            (0.35..0.65).contains(&(with_cost as f64 / n)),
            "with cost {with_cost}"
        );
        assert!(across_switch >= 20, "across a DST switch: {across_switch}");
        for zone in [
            "America/New_York",
            "Europe/Lisbon",
            "Europe/Madrid",
            "America/Sao_Paulo",
            "UTC",
        ] {
            assert!(zones.contains_key(zone), "{zone}: {zones:?}");
        }
        let featured = c.events.iter().filter(|e| e.featured).count() as f64 / n;
        assert!((0.05..0.15).contains(&featured));
        for language in [Language::PtBr, Language::Es] {
            assert!(c
                .events
                .iter()
                .filter(|e| e.post.language == language)
                .any(|e| !e.post.title.is_ascii() || !e.post.description.is_ascii()));
        }
        for v in &c.venues {
            assert!(v.geo.is_some() && !v.address.is_empty() && !v.zip.is_empty());
            assert!(!v.city.is_empty() && !v.country.is_empty() && !v.stateprovince.is_empty());
        }
    }

    #[test]
    fn the_demo_is_published_upcoming_and_in_three_languages() {
        let today = NaiveDate::from_ymd_opt(2026, 3, 20)
            .unwrap()
            .and_hms_opt(15, 30, 0)
            .unwrap();
        let (_dir, store) = generated(&demo_shape(today), 2026);
        let c = contents(&store);
        assert_eq!(c.events.len(), 400);
        for e in &c.events {
            assert_eq!(e.post.status, Status::Publish);
            assert!(e.post.date_utc <= today);
            assert!(e.start_local.date() >= today.date() - Duration::days(1));
            assert!(e.start_local.date() <= today.date() + Duration::days(366));
        }
        for language in Language::ALL {
            assert!(c.events.iter().any(|e| e.post.language == language));
        }
        assert!(c.events.iter().any(|e| e.post.title.contains("Festival")));
    }

    /// `cargo test --release --lib generate -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn a_million_events_are_generated_quickly() {
        let started = std::time::Instant::now();
        let (_dir, store) = generated(&Shape::for_events(1_000_000), 42);
        eprintln!("1,000,000 events in {:.1?}", started.elapsed());
        assert_eq!(store.read().unwrap().count(Kind::Event).unwrap(), 1_000_000);
    }
}
