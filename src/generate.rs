//! A deterministic generator of realistic calendars, for `almanac generate` and the
//! benchmarks. For one seed it writes the same records every time.
//!
//! What it writes, in three languages (`en`, `pt-br`, `es`):
//! - a fixed category taxonomy (parents and children, every category in all three languages,
//!   one translation group each) and a list of tags (a third of them translation groups);
//! - venues in ten real cities (street addresses, postal codes, phones, coordinates near the
//!   city centre) and organizers, about a fifth of them translated; events go to venues and
//!   organizers whose kind fits them (a market to a market hall, not to a jazz club);
//! - events whose titles come from templates over parallel vocabularies ("Jazz Night at the
//!   Harbour", "Noite de Jazz no Cais", "Noche de Jazz en el Puerto"), topics and kinds drawn
//!   under a Zipf-like law, so that a translation group shares its dates and venue city and
//!   carries a translated title;
//! - descriptions planned once per translation group and written in each of its languages:
//!   sentences of the event's kind of event and domain whose slots are filled from lists that
//!   fit them, with no word repeated within a sentence; excerpts for some events, image URLs
//!   for a quarter of them;
//! - local times in the venue's time zone (UTC instants and abbreviations derived by
//!   [`Event::place_in`]), with all-day and multi-day events and some events in the weeks
//!   around daylight-saving switches.
//!
//! The words and sentence templates are data, not code: `data/generator/*.toml`, embedded in
//! the binary and parsed once (see [`Tables`]).
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
use serde::Deserialize;
use serde_json::json;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::sync::LazyLock;

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
            categories: TABLES.categories.len(),
            tags: TABLES.tags.len(),
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
    let mut slugs = SlugBook::default();
    let terms = store.write(|tx| write_terms(tx, shape, &mut slugs))?;
    let places = store.write(|tx| write_venues(tx, shape, &mut rng, &mut slugs))?;
    let organizers = store.write(|tx| write_organizers(tx, shape, &mut rng, &mut slugs))?;
    let calendar = Calendar::new(shape);
    let pools = Pools {
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
    let tables = &*TABLES;
    let mut categories: Vec<[u64; 3]> = Vec::new();
    for category in tables.categories.iter().take(shape.categories) {
        let mut ids = [0; 3];
        for language in Language::ALL {
            let s = slot(language);
            let id = tx.next_id(Kind::Category.sequence())?;
            ids[s] = id;
            let name = category.names.get(language);
            let term = Term {
                id,
                kind: Kind::Category,
                language,
                // A taxonomy is translated as a whole: each category founds a group in `en`.
                group: ids[0],
                name: name.to_string(),
                slug: slugs.claim(Kind::Category, language, name, id),
                description: String::new(),
                parent: category.parent.map_or(0, |p| categories[p][s]),
            };
            put_term(tx, &term)?;
        }
        categories.push(ids);
    }
    let mut tags: Vec<[u64; 3]> = Vec::new();
    for (n, names) in tables.tags.iter().take(shape.tags).enumerate() {
        // Every third tag is a translation group; the others were created in each language
        // on their own, as editors do.
        let grouped = n % 3 == 0;
        let mut ids = [0; 3];
        for language in Language::ALL {
            let id = tx.next_id(Kind::Tag.sequence())?;
            ids[slot(language)] = id;
            let name = names.get(language);
            let term = Term {
                id,
                kind: Kind::Tag,
                language,
                group: if grouped { ids[0] } else { id },
                name: name.to_string(),
                slug: slugs.claim(Kind::Tag, language, name, id),
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
    /// Index into [`Tables::cities`].
    city: usize,
    /// The domains whose events it takes, one bit per index into [`Tables::domains`].
    domains: u64,
}

impl Linked {
    fn hosts(&self, domain: usize) -> bool {
        self.domains & (1 << domain) != 0
    }
}

/// The venues (or organizers) by language, and their translation groups.
struct LinkedPool {
    by_language: [Vec<Linked>; 3],
    /// By language slot and domain: the records that take that domain's events.
    by_language_domain: [Vec<Vec<Linked>>; 3],
    /// Member IDs per language slot.
    groups: Vec<[Option<u64>; 3]>,
    /// By language slot and city: the records of that language in that city.
    by_language_city: [Vec<Vec<Linked>>; 3],
}

impl LinkedPool {
    fn new() -> LinkedPool {
        let tables = &*TABLES;
        LinkedPool {
            by_language: Default::default(),
            by_language_domain: std::array::from_fn(|_| vec![Vec::new(); tables.domains.len()]),
            groups: Vec::new(),
            by_language_city: std::array::from_fn(|_| vec![Vec::new(); tables.cities.len()]),
        }
    }

    fn add(&mut self, language: Language, linked: Linked) {
        let s = slot(language);
        self.groups[linked.group][s] = Some(linked.id);
        self.by_language[s].push(linked);
        for (domain, pool) in self.by_language_domain[s].iter_mut().enumerate() {
            if linked.hosts(domain) {
                pool.push(linked);
            }
        }
        self.by_language_city[s][linked.city].push(linked);
    }

    /// The records of a language that take a domain's events, or all of the language's when
    /// none does.
    fn for_domain(&self, language: Language, domain: usize) -> &[Linked] {
        let fitting = &self.by_language_domain[slot(language)][domain];
        if fitting.is_empty() {
            &self.by_language[slot(language)]
        } else {
            fitting
        }
    }
}

/// A domain bit mask from a list of domain indices; all domains when the list is empty.
fn domain_mask(domains: &[usize]) -> u64 {
    if domains.is_empty() {
        u64::MAX
    } else {
        domains.iter().fold(0, |mask, d| mask | 1 << d)
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
    rng: &mut StdRng,
    slugs: &mut SlugBook,
) -> StoreResult<LinkedPool> {
    let tables = &*TABLES;
    let mut pool = LinkedPool::new();
    for n in 0..shape.venues {
        let city_index = n % tables.cities.len();
        let city = &tables.cities[city_index];
        let founder = linked_language(rng, city);
        let languages = group_languages(rng, founder, 0.2);
        let venue_type = zipf_pick(rng, &tables.venue_types);
        let name = pick(rng, &tables.proper_names);
        let street = pick(rng, &city.streets);
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
        let scene = Scene {
            languages: &languages,
            event: None,
            city: Some(city_index),
            district: Some(rng.gen_range(0..city.districts.len())),
            year: rng.gen_range(1950..=2020),
            lists: Lists::Venue(venue_type.group),
            venue: true,
        };
        let sentences = rng.gen_range(1..=3);
        let plan = scene.plan_venue(rng, sentences);
        let group_index = pool.groups.len();
        pool.groups.push([None; 3]);
        let mut group = 0;
        let mut website = String::new();
        for &language in &languages {
            let id = tx.next_id(Kind::Venue.sequence())?;
            if group == 0 {
                group = id;
            }
            let title = match language {
                Language::En => format!("{name} {}", venue_type.names.get(language)),
                _ => format!("{} {name}", venue_type.names.get(language)),
            };
            let description = scene.render(&plan, language);
            let mut meta = post_meta(id, group, language, title, description, date);
            register_post(tx, slugs, Kind::Venue, &mut meta)?;
            if website.is_empty() {
                website = format!("https://{}.example.org", meta.slug);
            }
            let (province, state) = match city.country {
                Country::Us => ("", city.region.as_str()),
                _ => (city.region.as_str(), ""),
            };
            let venue = Venue {
                post: meta,
                address: address.clone(),
                city: city.names.text.get(language).to_string(),
                country: city.country.name().to_string(),
                province: province.to_string(),
                state: state.to_string(),
                zip: zip.clone(),
                phone: phone.clone(),
                // The rule a save applies (docs/api.md, "Venues and organizers").
                stateprovince: city.region.clone(),
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
                    domains: domain_mask(&venue_type.hosts),
                },
            );
        }
    }
    Ok(pool)
}

fn write_organizers(
    tx: &mut WriteTx,
    shape: &Shape,
    rng: &mut StdRng,
    slugs: &mut SlugBook,
) -> StoreResult<LinkedPool> {
    let tables = &*TABLES;
    let mut pool = LinkedPool::new();
    for n in 0..shape.organizers {
        let city_index = (n * 7 + 3) % tables.cities.len();
        let city = &tables.cities[city_index];
        let founder = linked_language(rng, city);
        let languages = group_languages(rng, founder, 0.2);
        let organizer_type = pick(rng, &tables.organizer_types);
        let name = pick(rng, &tables.proper_names);
        let phone = if rng.gen_bool(0.8) {
            phone_number(rng, city)
        } else {
            String::new()
        };
        let date = publication_date(rng, shape);
        let scene = Scene {
            languages: &languages,
            event: None,
            city: Some(city_index),
            district: None,
            year: rng.gen_range(1975..=2022),
            lists: Lists::Organizer(organizer_type.group),
            venue: true,
        };
        let plan = rng.gen_bool(0.7).then(|| {
            let sentences = rng.gen_range(1..=2);
            scene.plan_organizer(rng, sentences)
        });
        let group_index = pool.groups.len();
        pool.groups.push([None; 3]);
        let mut group = 0;
        let mut domain = String::new();
        for &language in &languages {
            let id = tx.next_id(Kind::Organizer.sequence())?;
            if group == 0 {
                group = id;
            }
            let title = match language {
                Language::En => format!("{name} {}", organizer_type.names.get(language)),
                _ => format!("{} {name}", organizer_type.names.get(language)),
            };
            let description = plan
                .as_ref()
                .map_or_else(String::new, |plan| scene.render(plan, language));
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
                    domains: domain_mask(&organizer_type.hosts),
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
    let prefix = &city.postal_prefix;
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
                pick(rng, &TABLES.uk_outward_codes),
                rng.gen_range(1..10)
            )
        }
    }
}

/// Phone numbers in each country's format, in ranges set aside for fiction where there are
/// such ranges (555-01xx in North America, 020 7946 0xxx in London).
fn phone_number(rng: &mut StdRng, city: &City) -> String {
    let prefix = &city.phone_prefix;
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
    /// One zone per entry of [`Tables::cities`], then UTC.
    zones: Vec<Zone>,
    /// Per zone: the days within the span whose noon has another offset than the day before.
    switches: Vec<Vec<NaiveDate>>,
    first_day: NaiveDate,
    days: i64,
    /// By currency, language slot and variant.
    costs: Vec<[Vec<Cost>; 3]>,
}

impl Calendar {
    fn new(shape: &Shape) -> Calendar {
        let tables = &*TABLES;
        let mut zones: Vec<Zone> = tables
            .cities
            .iter()
            .map(|city| Zone::parse(&city.zone).expect("a zone of the bundled database"))
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
        let costs = tables
            .money
            .currencies
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

    /// The zone index of online events announced in UTC.
    fn utc(&self) -> usize {
        self.zones.len() - 1
    }

    /// A day of the span, clamped into it.
    fn day(&self, offset: i64) -> NaiveDate {
        self.first_day + Duration::days(offset.clamp(0, self.days - 1))
    }
}

/// The cost variants for a currency: free first, then plain amounts, amounts with the symbol,
/// and ranges. The same variant index gives the same price in every language.
fn cost_pool(symbol: &str, language: usize) -> Vec<Cost> {
    let money = &TABLES.money;
    let mut values = vec![json!(money.free.at(language))];
    values.extend(money.amounts.iter().map(|a| json!(a)));
    values.extend(money.amounts.iter().enumerate().map(|(n, a)| {
        // Symbols after the amount are common for the euro.
        if symbol == "€" && n % 3 == 0 {
            json!(format!("{a}{symbol}"))
        } else {
            json!(format!("{symbol}{a}"))
        }
    }));
    values.extend(money.ranges.iter().map(|[low, high]| json!([low, high])));
    values
        .iter()
        .map(|value| Cost::from_write(value).expect("a valid cost"))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Events

struct Pools<'a> {
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
    /// Index into the domain's kinds.
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
    /// A title for an event with a venue, or an online one (no place or city in its title,
    /// and only kinds that can happen online).
    fn draw(rng: &mut StdRng, online: bool) -> TitlePlan {
        let tables = &*TABLES;
        let weight = |d: &Domain| if online { d.online_weight } else { d.weight };
        let total: u32 = tables.domains.iter().map(&weight).sum();
        loop {
            let mut roll = rng.gen_range(0..total);
            let domain = tables
                .domains
                .iter()
                .position(|d| {
                    let hit = roll < weight(d);
                    roll = roll.saturating_sub(weight(d));
                    hit
                })
                .expect("a domain under the total weight");
            let d = &tables.domains[domain];
            let topic_index = zipf_rank(rng, d.topics.len());
            let topic = &d.topics[topic_index];
            let kinds = if online {
                &topic.online_kinds
            } else {
                &topic.kinds
            };
            if kinds.is_empty() {
                continue;
            }
            let kind = *zipf_pick(rng, kinds);
            let modifiers = &tables.modifiers_for[d.kinds[kind].format][usize::from(online)];
            let form = match rng.gen_range(0..100) {
                0..=34 => TitleForm::Plain,
                35..=59 if !online && !topic.places.is_empty() => {
                    TitleForm::Place(*pick(rng, &topic.places))
                }
                60..=71 if !topic.audiences.is_empty() => TitleForm::Audience(if d.family {
                    *pick(rng, &topic.audiences)
                } else {
                    *zipf_pick(rng, &topic.audiences)
                }),
                72..=89 if !modifiers.is_empty() => TitleForm::Modifier(*zipf_pick(rng, modifiers)),
                90..=99 if !online => TitleForm::City,
                _ => TitleForm::Plain,
            };
            return TitlePlan {
                domain,
                topic: topic_index,
                kind,
                form,
            };
        }
    }

    fn render(&self, language: Language, city: Option<usize>) -> String {
        let tables = &*TABLES;
        let domain = &tables.domains[self.domain];
        let topic = domain.topics[self.topic].names.get(language);
        let kind = domain.kinds[self.kind].names.get(language);
        let city = city.map(|c| &tables.cities[c]);
        let city_name = city.map_or("", |c| c.names.text.get(language));
        let of_city = city.map_or("", |c| c.of.text.get(language));
        match (language, self.form) {
            (Language::En, TitleForm::Plain) => format!("{topic} {kind}"),
            (Language::En, TitleForm::Place(p)) => {
                format!("{topic} {kind} {}", tables.places[p].get(language))
            }
            (Language::En, TitleForm::Audience(a)) => {
                format!(
                    "{topic} {kind} for {}",
                    tables.audiences[a].names.get(language)
                )
            }
            (Language::En, TitleForm::Modifier(m)) => {
                format!("{} {topic} {kind}", tables.modifiers[m].names.get(language))
            }
            (Language::En, TitleForm::City) => format!("{city_name} {topic} {kind}"),
            (_, TitleForm::Plain) => format!("{kind} de {topic}"),
            (_, TitleForm::Place(p)) => {
                format!("{kind} de {topic} {}", tables.places[p].get(language))
            }
            (_, TitleForm::Audience(a)) => format!(
                "{kind} de {topic} para {}",
                tables.audiences[a].names.get(language)
            ),
            (_, TitleForm::Modifier(m)) => {
                format!(
                    "{kind} de {topic} {}",
                    tables.modifiers[m].names.get(language)
                )
            }
            (_, TitleForm::City) => format!("{kind} de {topic} {of_city}"),
        }
    }

    /// An image URL for the event: one of a few per topic (URLs only; nothing is fetched).
    fn image_url(&self, rng: &mut StdRng) -> String {
        let topic = &TABLES.domains[self.domain].topics[self.topic];
        format!("{}-{}.jpg", topic.image_base, rng.gen_range(1..=3))
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
    let tables = &*TABLES;
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
    let online = pools.places.by_language[slot(founder)].is_empty() || !rng.gen_bool(0.92);
    let plan = TitlePlan::draw(rng, online);
    let domain = &tables.domains[plan.domain];
    let founding_venue =
        (!online).then(|| *zipf_pick(rng, pools.places.for_domain(founder, plan.domain)));
    let city = founding_venue.map(|v| v.city);
    let zone = match city {
        Some(c) => c,
        // Online events: mostly announced in UTC.
        None if rng.gen_bool(0.5) => pools.calendar.utc(),
        None => rng.gen_range(0..tables.cities.len()),
    };
    let when = draw_when(rng, pools.calendar, zone);
    let currency = city.map_or(tables.money.online[slot(founder)], |c| {
        tables.cities[c].currency
    });
    let free = matches!(plan.form, TitleForm::Modifier(m) if tables.modifiers[m].free);
    let cost_variant = if free {
        Some(0)
    } else {
        rng.gen_bool(0.5).then(|| {
            if rng.gen_bool(0.25) {
                0
            } else {
                rng.gen_range(1..pools.calendar.costs[currency][0].len())
            }
        })
    };
    let leaf = domain.category;
    let mut categories = vec![leaf];
    if rng.gen_bool(0.25) {
        if let Some(parent) = tables.categories[leaf].parent {
            categories.push(parent);
        }
    }
    let audience = match plan.form {
        TitleForm::Audience(a) => Some(a),
        _ => None,
    };
    if audience.is_some_and(|a| tables.audiences[a].family) && leaf != tables.family_category {
        categories.push(tables.family_category);
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
        let pool = pools.organizers.for_domain(founder, plan.domain);
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

    // One description (and maybe one excerpt) for the whole group, written in each language.
    let scene = Scene {
        languages: &languages,
        event: Some(EventScene {
            domain: plan.domain,
            topic: plan.topic,
            kind: plan.kind,
            audience,
        }),
        city,
        district: None,
        year: 0,
        lists: Lists::Event {
            domain: plan.domain,
            topic: plan.topic,
        },
        venue: !online,
    };
    let description = scene.plan_event(rng);
    let excerpt = rng
        .gen_bool(0.3)
        .then(|| scene.plan_summary(rng, &description));
    let image = if rng.gen_bool(0.25) {
        Some(tx.image_for_url(&plan.image_url(rng))?)
    } else {
        None
    };

    let mut group = 0;
    for (n, &language) in languages.iter().enumerate() {
        let id = tx.next_id(Kind::Event.sequence())?;
        if group == 0 {
            group = id;
        }
        let s = slot(language);
        // A translation keeps the venue when its group has a member in the language, else
        // takes a venue of its language in the same city (one that fits the event if there
        // is one), else has none.
        let venue = founding_venue.and_then(|v| {
            pools.places.groups[v.group][s].or_else(|| {
                let local = &pools.places.by_language_city[s][v.city];
                let fitting = local.iter().filter(|l| l.hosts(plan.domain)).count();
                match fitting {
                    0 if local.is_empty() => None,
                    0 => Some(pick(rng, local).id),
                    _ => local
                        .iter()
                        .filter(|l| l.hosts(plan.domain))
                        .nth(rng.gen_range(0..fitting))
                        .map(|l| l.id),
                }
            })
        });
        let title = plan.render(language, city);
        let mut meta = post_meta(
            id,
            group,
            language,
            title,
            scene.render(&description, language),
            date + Duration::hours(n as i64 * 5),
        );
        meta.status = status;
        meta.image = image;
        if let Some(excerpt) = &excerpt {
            meta.excerpt = scene.render(excerpt, language);
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

/// What a description may mention, and the languages it is written in.
struct Scene<'a> {
    /// The languages of the translation group: every sentence must read well in each.
    languages: &'a [Language],
    event: Option<EventScene>,
    /// Index into [`Tables::cities`].
    city: Option<usize>,
    /// Index into the city's districts.
    district: Option<usize>,
    year: u32,
    lists: Lists,
    /// Whether the record has a place (events without a venue are online).
    venue: bool,
}

/// The parts of an event's title that its description may mention.
#[derive(Clone, Copy)]
struct EventScene {
    domain: usize,
    topic: usize,
    kind: usize,
    audience: Option<usize>,
}

/// Where the list slots of a description take their items.
#[derive(Clone, Copy)]
enum Lists {
    Event {
        domain: usize,
        topic: usize,
    },
    /// Index into [`Tables::venue_groups`].
    Venue(usize),
    /// Index into [`Tables::organizer_fields`].
    Organizer(usize),
}

/// The sentences of a description, the same in every language: templates and, for each list
/// slot of a template, the index of its item.
struct Plan {
    /// Each template with the position of its first item in `fills`.
    sentences: Vec<(&'static Template, usize)>,
    fills: Vec<u16>,
}

impl Plan {
    /// The list items the plan names, in order.
    fn items(&self) -> impl Iterator<Item = (List, u16)> + '_ {
        let fills = &self.fills;
        self.sentences.iter().flat_map(move |&(template, first)| {
            (template.lists.iter().enumerate()).map(move |(n, &list)| (list, fills[first + n]))
        })
    }
}

impl Scene<'_> {
    /// An event's description: an opening of its kind's format, the audience when the title
    /// names one, a line of its domain, then maybe more (see data/generator/descriptions.toml).
    fn plan_event(&self, rng: &mut StdRng) -> Plan {
        let tables = &*TABLES;
        let event = self.event.expect("an event");
        let domain = &tables.domains[event.domain];
        let format = &tables.formats[domain.kinds[event.kind].format];
        let mut builder = Builder::new(self);
        builder.one_of(rng, &format.opening);
        if event.audience.is_some() {
            builder.one_of(rng, &tables.audience_sentences);
        }
        let lines = &domain.topics[event.topic].lines[event.kind];
        builder.one_of_n(rng, lines.len(), |n| &domain.lines[lines[n]]);
        if rng.gen_bool(0.5) {
            builder.one_of(rng, &format.body);
        }
        if !self.venue {
            builder.one_of(rng, &tables.online_sentences);
        } else if rng.gen_bool(0.5) {
            builder.one_of(rng, &format.practical);
        }
        if rng.gen_bool(0.2) {
            builder.one_of(rng, &tables.closing_sentences);
        }
        builder.plan
    }

    /// An event's excerpt: one summary sentence, naming what its description names where
    /// it can.
    fn plan_summary(&self, rng: &mut StdRng, description: &Plan) -> Plan {
        let tables = &*TABLES;
        let event = self.event.expect("an event");
        let format = tables.domains[event.domain].kinds[event.kind].format;
        let mut builder = Builder::new(self);
        builder.preferred = description.items().collect();
        builder.one_of(rng, &tables.formats[format].summary);
        builder.plan
    }

    fn plan_venue(&self, rng: &mut StdRng, sentences: usize) -> Plan {
        let mut builder = Builder::new(self);
        builder.some_of(rng, &TABLES.venue_sentences, sentences);
        builder.plan
    }

    fn plan_organizer(&self, rng: &mut StdRng, sentences: usize) -> Plan {
        let mut builder = Builder::new(self);
        builder.some_of(rng, &TABLES.organizer_sentences, sentences);
        builder.plan
    }

    /// Whether a template's slots can be filled in this scene.
    fn allows(&self, template: &Template) -> bool {
        (self.venue || !template.venue)
            && template
                .context
                .iter()
                .flatten()
                .all(|context| match context {
                    Context::Event | Context::Kind | Context::Topic => self.event.is_some(),
                    Context::Audience => self.event.is_some_and(|e| e.audience.is_some()),
                    Context::City | Context::InCity | Context::OfCity => self.city.is_some(),
                    Context::District => self.district.is_some(),
                    Context::Year => true,
                })
    }

    fn list(&self, list: List) -> &'static [Phrase] {
        let tables = &*TABLES;
        match (self.lists, list) {
            (Lists::Event { domain, topic }, _) => tables.domains[domain].list(topic, list),
            (Lists::Venue(group), List::Offers) => &tables.venue_groups[group].offers,
            (Lists::Venue(group), List::Features) => &tables.venue_groups[group].features,
            (Lists::Organizer(field), List::Programme) => &tables.organizer_fields[field].programme,
            (Lists::Organizer(field), List::People) => &tables.organizer_fields[field].people,
            _ => &[],
        }
    }

    /// The phrases a context slot writes, in the order it writes them.
    fn context_phrases(&self, context: Context) -> [Option<&'static Phrase>; 2] {
        let tables = &*TABLES;
        let event = self.event.map(|e| {
            let domain = &tables.domains[e.domain];
            (e, &domain.topics[e.topic], &domain.kinds[e.kind])
        });
        let city = self.city.map(|c| &tables.cities[c]);
        match context {
            Context::Event => [
                event.map(|(_, topic, _)| &topic.attributive),
                event.map(|(_, _, kind)| &kind.lower),
            ],
            Context::Kind => [event.map(|(_, _, kind)| &kind.lower), None],
            Context::Topic => [event.map(|(_, topic, _)| &topic.prose), None],
            Context::Audience => [
                event
                    .and_then(|(e, _, _)| e.audience)
                    .map(|a| &tables.audiences[a].lower),
                None,
            ],
            Context::City => [city.map(|c| &c.names), None],
            Context::InCity => [city.map(|c| &c.in_city), None],
            Context::OfCity => [city.map(|c| &c.of), None],
            Context::District => [city.zip(self.district).map(|(c, d)| &c.districts[d]), None],
            Context::Year => [None, None],
        }
    }

    fn feminine(&self, s: usize) -> bool {
        self.event
            .is_some_and(|e| TABLES.domains[e.domain].kinds[e.kind].feminine[s])
    }

    /// A planned description in one language.
    fn render(&self, plan: &Plan, language: Language) -> String {
        let s = slot(language);
        let mut text = String::with_capacity(plan.sentences.len() * 100);
        for &(template, first) in &plan.sentences {
            if !text.is_empty() {
                text.push(' ');
            }
            let start = text.len();
            for piece in &template.pieces[s] {
                match piece {
                    Piece::Text(fixed) => text.push_str(fixed),
                    Piece::Gender(masculine, feminine) => text.push_str(if self.feminine(s) {
                        feminine
                    } else {
                        masculine
                    }),
                    Piece::List(n) => {
                        let item = usize::from(plan.fills[first + n]);
                        text.push_str(self.list(template.lists[*n])[item].text.at(s));
                    }
                    Piece::Context(Context::Year) => {
                        let _ = write!(text, "{}", self.year);
                    }
                    Piece::Context(context) => match self.context_phrases(*context) {
                        // English puts the topic before the kind ("jazz night"), Portuguese
                        // and Spanish after it ("noite de jazz").
                        [Some(topic), Some(kind)] if s == 0 => {
                            let _ = write!(text, "{} {}", topic.text.at(s), kind.text.at(s));
                        }
                        [Some(topic), Some(kind)] => {
                            let _ = write!(text, "{} de {}", kind.text.at(s), topic.text.at(s));
                        }
                        [Some(phrase), None] => text.push_str(phrase.text.at(s)),
                        _ => {}
                    },
                }
            }
            capitalize_at(&mut text, start);
        }
        text
    }
}

/// Uppercases the character at a byte position, when it is a lowercase letter.
fn capitalize_at(text: &mut String, at: usize) {
    if let Some(first) = text[at..].chars().next().filter(|c| c.is_lowercase()) {
        let upper: String = first.to_uppercase().collect();
        text.replace_range(at..at + first.len_utf8(), &upper);
    }
}

/// A content word cut to its first five letters (so that "music" and "musicians" meet), kept
/// as up to 16 bytes of UTF-8 in an integer: the comparisons of every planned sentence stay a
/// few instructions each.
#[derive(Clone, Copy)]
struct Key {
    bytes: u128,
    len: u32,
}

impl Key {
    fn new(word: &str) -> Key {
        let cut: String = word.chars().take(5).collect();
        let len = cut.len().min(16);
        let mut bytes = [0; 16];
        bytes[..len].copy_from_slice(&cut.as_bytes()[..len]);
        Key {
            bytes: u128::from_le_bytes(bytes),
            len: len as u32,
        }
    }

    /// Whether two keys count as the same word: one is a prefix of the other ("wine" and
    /// "wines").
    fn clash(self, other: Key) -> bool {
        let shorter = self.len.min(other.len);
        let mask = u128::MAX.checked_shr(128 - shorter * 8).unwrap_or(0);
        (self.bytes ^ other.bytes) & mask == 0
    }
}

/// Builds a plan sentence by sentence, keeping the words of the sentence being filled (per
/// language) and the items already used in the description.
struct Builder<'a> {
    scene: &'a Scene<'a>,
    plan: Plan,
    words: [Vec<Key>; 3],
    used: Vec<(List, u16)>,
    /// Items to try first, in order.
    preferred: Vec<(List, u16)>,
}

impl<'a> Builder<'a> {
    fn new(scene: &'a Scene<'a>) -> Builder<'a> {
        // Sized for a whole description, so that filling it does not reallocate.
        Builder {
            scene,
            plan: Plan {
                sentences: Vec::with_capacity(8),
                fills: Vec::with_capacity(16),
            },
            words: std::array::from_fn(|_| Vec::with_capacity(32)),
            used: Vec::with_capacity(16),
            preferred: Vec::new(),
        }
    }

    /// Adds one of the templates, tried from a random one on.
    fn one_of(&mut self, rng: &mut StdRng, templates: &'static [Template]) -> bool {
        self.one_of_n(rng, templates.len(), |n| &templates[n])
    }

    /// Adds one of `count` templates, tried from a random one on.
    fn one_of_n(
        &mut self,
        rng: &mut StdRng,
        count: usize,
        template: impl Fn(usize) -> &'static Template,
    ) -> bool {
        if count == 0 {
            return false;
        }
        let first = rng.gen_range(0..count);
        (0..count).any(|k| self.add(rng, template((first + k) % count)))
    }

    /// An opening, then distinct body sentences up to `sentences` in all.
    fn some_of(&mut self, rng: &mut StdRng, sentences: &'static Sentences, count: usize) {
        self.one_of(rng, &sentences.opening);
        let bodies = &sentences.body;
        let first = rng.gen_range(0..bodies.len());
        for k in 0..bodies.len() {
            if self.plan.sentences.len() >= count {
                break;
            }
            self.add(rng, &bodies[(first + k) % bodies.len()]);
        }
    }

    /// Adds a template when the scene can fill it without repeating a word in any of the
    /// scene's languages; fills its list slots under the Zipf-like law.
    fn add(&mut self, rng: &mut StdRng, template: &'static Template) -> bool {
        let scene = self.scene;
        if !scene.allows(template) {
            return false;
        }
        for &language in scene.languages {
            let s = slot(language);
            let words = &mut self.words[s];
            words.clear();
            words.extend_from_slice(&template.keys[s]);
            for &context in &template.context[s] {
                for phrase in scene.context_phrases(context).into_iter().flatten() {
                    for &key in &phrase.keys[s] {
                        if words.iter().any(|w| w.clash(key)) {
                            return false;
                        }
                        words.push(key);
                    }
                }
            }
        }
        let (fills, used) = (self.plan.fills.len(), self.used.len());
        let fixed: [usize; 3] = std::array::from_fn(|s| self.words[s].len());
        // Items are chosen one after the other; when an early choice leaves nothing for a
        // later slot, start again from other random items.
        for _ in 0..3 {
            let filled = template.lists.iter().all(|&list| {
                self.item(rng, template, list).is_some_and(|item| {
                    self.plan.fills.push(item);
                    self.used.push((list, item));
                    true
                })
            });
            if filled {
                self.plan.sentences.push((template, fills));
                return true;
            }
            self.plan.fills.truncate(fills);
            self.used.truncate(used);
            for (words, len) in self.words.iter_mut().zip(fixed) {
                words.truncate(len);
            }
        }
        false
    }

    /// An item for a list slot whose words meet none of the sentence's, not used before in
    /// the description, and without a conjunction when the slot is one of a list.
    fn item(&mut self, rng: &mut StdRng, template: &Template, list: List) -> Option<u16> {
        let items = self.scene.list(list);
        if items.is_empty() {
            return None;
        }
        let in_a_list = template.lists.iter().filter(|l| **l == list).count() > 1;
        let first = zipf_rank(rng, items.len());
        let preferred = (self.preferred.iter())
            .filter(|(l, _)| *l == list)
            .map(|(_, index)| usize::from(*index));
        let index = preferred
            .chain((0..items.len()).map(|k| (first + k) % items.len()))
            .find(|&index| {
                let item = &items[index];
                !self.used.contains(&(list, index as u16))
                    && self.scene.languages.iter().all(|&language| {
                        let s = slot(language);
                        let meets = |key: &Key| self.words[s].iter().any(|w| w.clash(*key));
                        (!in_a_list || !item.conjunction[s]) && !item.keys[s].iter().any(meets)
                    })
            })?;
        for &language in self.scene.languages {
            let s = slot(language);
            self.words[s].extend_from_slice(&items[index].keys[s]);
        }
        Some(index as u16)
    }
}

// ---------------------------------------------------------------------------------------------
// Tables: the vocabularies and sentence templates of data/generator/, parsed once.

/// The generator's data files, embedded at build time.
const DATA_FILES: [(&str, &str); 8] = [
    ("terms.toml", include_str!("../data/generator/terms.toml")),
    ("titles.toml", include_str!("../data/generator/titles.toml")),
    (
        "domains.toml",
        include_str!("../data/generator/domains.toml"),
    ),
    (
        "descriptions.toml",
        include_str!("../data/generator/descriptions.toml"),
    ),
    ("cities.toml", include_str!("../data/generator/cities.toml")),
    ("names.toml", include_str!("../data/generator/names.toml")),
    ("venues.toml", include_str!("../data/generator/venues.toml")),
    (
        "organizers.toml",
        include_str!("../data/generator/organizers.toml"),
    ),
];

static TABLES: LazyLock<Tables> =
    LazyLock::new(|| Tables::load().unwrap_or_else(|e| panic!("data/generator/{e}")));

/// Words in the three languages, `[en, pt-br, es]`: the same thing at the same position.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "Vec<String>")]
struct Trio([String; 3]);

impl TryFrom<Vec<String>> for Trio {
    type Error = String;

    fn try_from(words: Vec<String>) -> Result<Trio, String> {
        let words: [String; 3] = words
            .try_into()
            .map_err(|w: Vec<String>| format!("{w:?} is not [en, pt-br, es]"))?;
        if words.iter().any(|w| w.trim().is_empty()) {
            return Err(format!("{words:?} has an empty word"));
        }
        Ok(Trio(words))
    }
}

impl Trio {
    fn get(&self, language: Language) -> &str {
        self.at(slot(language))
    }

    fn at(&self, s: usize) -> &str {
        &self.0[s]
    }

    fn lowercase(&self) -> Trio {
        Trio(self.0.clone().map(|w| w.to_lowercase()))
    }
}

/// Words that may fill a description slot, with their word keys per language (for the rule
/// that no word repeats within a sentence) and whether they contain a conjunction.
struct Phrase {
    text: Trio,
    keys: [Vec<Key>; 3],
    conjunction: [bool; 3],
}

// The files, as written.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TermsFile {
    category: Vec<CategoryRow>,
    tags: NamesRow,
    family: FamilyRow,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CategoryRow {
    names: Trio,
    parent: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NamesRow {
    names: Vec<Trio>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FamilyRow {
    category: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TitlesFile {
    places: NamesRow,
    audience: Vec<AudienceRow>,
    modifier: Vec<ModifierRow>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AudienceRow {
    names: Trio,
    #[serde(default)]
    family: bool,
    #[serde(default)]
    minors: bool,
    #[serde(default)]
    domains: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModifierRow {
    names: Trio,
    #[serde(default)]
    formats: Vec<String>,
    only: Option<Only>,
    #[serde(default)]
    free: bool,
}

/// Titles a modifier is limited to.
#[derive(Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Only {
    Venue,
    Online,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DomainsFile {
    domain: Vec<DomainRow>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DomainRow {
    category: String,
    weight: u32,
    #[serde(default)]
    works: Vec<Trio>,
    #[serde(default)]
    people: Vec<Trio>,
    #[serde(default)]
    teachers: Vec<Trio>,
    #[serde(default)]
    skills: Vec<Trio>,
    topic: Vec<TopicRow>,
    kind: Vec<KindRow>,
    #[serde(default)]
    line: Vec<SentenceRow>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TopicRow {
    names: Trio,
    prose: Option<Trio>,
    attributive: Option<Trio>,
    #[serde(default)]
    kinds: Vec<String>,
    #[serde(default)]
    places: Vec<String>,
    #[serde(default)]
    adults: bool,
    online: Option<bool>,
    #[serde(default)]
    works: Vec<Trio>,
    #[serde(default)]
    people: Vec<Trio>,
    #[serde(default)]
    teachers: Vec<Trio>,
    #[serde(default)]
    skills: Vec<Trio>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KindRow {
    names: Trio,
    format: String,
    #[serde(default)]
    feminine: Vec<String>,
    #[serde(default)]
    online: bool,
}

/// A sentence template; `formats`, `topics`, `except` and `kinds` only for lines of a domain.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SentenceRow {
    en: String,
    #[serde(rename = "pt-br")]
    pt_br: String,
    es: String,
    #[serde(default)]
    venue: bool,
    #[serde(default)]
    formats: Vec<String>,
    #[serde(default)]
    topics: Vec<String>,
    #[serde(default)]
    except: Vec<String>,
    #[serde(default)]
    kinds: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DescriptionsFile {
    conjunctions: LanguageWords,
    stopwords: LanguageWords,
    format: BTreeMap<String, FormatRow>,
    audience: Vec<SentenceRow>,
    online: Vec<SentenceRow>,
    closing: Vec<SentenceRow>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LanguageWords {
    en: Vec<String>,
    #[serde(rename = "pt-br")]
    pt_br: Vec<String>,
    es: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FormatRow {
    opening: Vec<SentenceRow>,
    body: Vec<SentenceRow>,
    practical: Vec<SentenceRow>,
    summary: Vec<SentenceRow>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CitiesFile {
    city: Vec<CityRow>,
    uk: UkRow,
    money: MoneyRow,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CityRow {
    names: Trio,
    #[serde(rename = "in")]
    in_city: Trio,
    of: Trio,
    language: String,
    zone: String,
    country: Country,
    region: String,
    lat: f64,
    lng: f64,
    streets: Vec<String>,
    districts: Vec<Trio>,
    postal_prefix: String,
    phone_prefix: String,
    currency: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UkRow {
    outward_codes: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MoneyRow {
    currencies: Vec<String>,
    online: Trio,
    free: Trio,
    amounts: Vec<String>,
    ranges: Vec<[String; 2]>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProperNamesFile {
    names: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VenuesFile {
    #[serde(rename = "type")]
    types: Vec<HostRow>,
    group: BTreeMap<String, VenueGroupRow>,
    opening: Vec<SentenceRow>,
    body: Vec<SentenceRow>,
}

/// A venue or organizer type: `group` (venues) or `field` (organizers) names its lists.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HostRow {
    names: Trio,
    #[serde(alias = "field")]
    group: String,
    #[serde(default)]
    hosts: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VenueGroupRow {
    offers: Vec<Trio>,
    features: Vec<Trio>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OrganizersFile {
    #[serde(rename = "type")]
    types: Vec<HostRow>,
    field: BTreeMap<String, OrganizerFieldRow>,
    opening: Vec<SentenceRow>,
    body: Vec<SentenceRow>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OrganizerFieldRow {
    programme: Vec<Trio>,
    people: Vec<Trio>,
}

// The tables, resolved: names become indices, sentences become templates.

/// The generator's vocabularies and sentence templates (data/generator/*.toml).
struct Tables {
    categories: Vec<Category>,
    /// The category that family audiences add.
    family_category: usize,
    tags: Vec<Trio>,
    domains: Vec<Domain>,
    places: Vec<Trio>,
    audiences: Vec<Audience>,
    modifiers: Vec<Modifier>,
    /// By format, for events with a venue and online ones: the modifiers titles may take.
    modifiers_for: Vec<[Vec<usize>; 2]>,
    cities: Vec<City>,
    uk_outward_codes: Vec<String>,
    money: Money,
    proper_names: Vec<String>,
    venue_types: Vec<HostType>,
    venue_groups: Vec<VenueGroup>,
    venue_sentences: Sentences,
    organizer_types: Vec<HostType>,
    organizer_fields: Vec<OrganizerField>,
    organizer_sentences: Sentences,
    /// By format name, sorted ([`EventKind::format`] indexes them).
    formats: Vec<Format>,
    audience_sentences: Vec<Template>,
    online_sentences: Vec<Template>,
    closing_sentences: Vec<Template>,
}

struct Category {
    names: Trio,
    parent: Option<usize>,
}

/// A kind of event (see data/generator/domains.toml).
struct Domain {
    /// Index into [`Tables::categories`].
    category: usize,
    weight: u32,
    /// `weight` if some of its events can be online, else 0.
    online_weight: u32,
    /// Whether its category is the family one: titles then name only family audiences.
    family: bool,
    lists: EventLists,
    topics: Vec<Topic>,
    kinds: Vec<EventKind>,
    lines: Vec<Template>,
}

impl Domain {
    /// A description list of a topic: its own, else the domain's; teachers are the people
    /// when neither names teachers.
    fn list(&self, topic: usize, list: List) -> &[Phrase] {
        let own = self.topics[topic].lists.get(list);
        let found = if own.is_empty() {
            self.lists.get(list)
        } else {
            own
        };
        if found.is_empty() && list == List::Teachers {
            self.list(topic, List::People)
        } else {
            found
        }
    }
}

#[derive(Default)]
struct EventLists {
    works: Vec<Phrase>,
    people: Vec<Phrase>,
    teachers: Vec<Phrase>,
    skills: Vec<Phrase>,
}

impl EventLists {
    fn get(&self, list: List) -> &[Phrase] {
        match list {
            List::Works => &self.works,
            List::People => &self.people,
            List::Teachers => &self.teachers,
            List::Skills => &self.skills,
            _ => &[],
        }
    }
}

struct Topic {
    names: Trio,
    /// The topic as a noun in sentences, and before a kind.
    prose: Phrase,
    attributive: Phrase,
    /// Indices into the domain's kinds, most common first; those of online events.
    kinds: Vec<usize>,
    online_kinds: Vec<usize>,
    /// Indices into [`Tables::places`].
    places: Vec<usize>,
    /// Indices into [`Tables::audiences`] that titles may name.
    audiences: Vec<usize>,
    lists: EventLists,
    /// An image URL without its number and extension.
    image_base: String,
    /// By index into the domain's kinds: the domain lines that fit.
    lines: Vec<Vec<usize>>,
}

struct EventKind {
    names: Trio,
    lower: Phrase,
    /// Index into [`Tables::formats`].
    format: usize,
    feminine: [bool; 3],
}

struct Audience {
    names: Trio,
    lower: Phrase,
    family: bool,
}

struct Modifier {
    names: Trio,
    free: bool,
}

#[derive(Clone, Copy, PartialEq, Deserialize)]
enum Country {
    #[serde(rename = "Portugal")]
    Pt,
    #[serde(rename = "Brazil")]
    Br,
    #[serde(rename = "Spain")]
    Es,
    #[serde(rename = "Mexico")]
    Mx,
    #[serde(rename = "United States")]
    Us,
    #[serde(rename = "United Kingdom")]
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
    names: Phrase,
    in_city: Phrase,
    of: Phrase,
    districts: Vec<Phrase>,
    language: Language,
    zone: String,
    country: Country,
    region: String,
    lat: f64,
    lng: f64,
    streets: Vec<String>,
    postal_prefix: String,
    phone_prefix: String,
    /// Index into [`Money::currencies`].
    currency: usize,
}

struct Money {
    currencies: Vec<String>,
    /// By language slot: the currency of online events.
    online: [usize; 3],
    free: Trio,
    amounts: Vec<String>,
    ranges: Vec<[String; 2]>,
}

/// A venue or organizer type.
struct HostType {
    names: Trio,
    /// Index into the venue groups or organizer fields.
    group: usize,
    /// Indices into [`Tables::domains`] of the events it takes; all when empty.
    hosts: Vec<usize>,
}

struct VenueGroup {
    offers: Vec<Phrase>,
    features: Vec<Phrase>,
}

struct OrganizerField {
    programme: Vec<Phrase>,
    people: Vec<Phrase>,
}

/// Description sentences of venues or organizers.
struct Sentences {
    opening: Vec<Template>,
    body: Vec<Template>,
}

/// Sentences of events of one format.
struct Format {
    opening: Vec<Template>,
    body: Vec<Template>,
    practical: Vec<Template>,
    summary: Vec<Template>,
}

/// A sentence in the three languages, parsed.
struct Template {
    pieces: [Vec<Piece>; 3],
    /// Word keys of the fixed words, per language.
    keys: [Vec<Key>; 3],
    /// The list slots, in English order; `Piece::List` indexes them (and the plan's items).
    lists: Vec<List>,
    /// The context slots of each language.
    context: [Vec<Context>; 3],
    /// Only for records with a place.
    venue: bool,
    /// For lines of a domain: the formats, the topics they are limited to or exclude, and
    /// the kinds they are limited to.
    formats: Vec<usize>,
    topics: Vec<usize>,
    except: Vec<usize>,
    kinds: Vec<usize>,
}

impl Template {
    /// Whether a line of a domain fits an event of this format, topic and kind.
    fn fits(&self, format: usize, topic: usize, kind: usize) -> bool {
        self.formats.contains(&format)
            && (self.topics.is_empty() || self.topics.contains(&topic))
            && !self.except.contains(&topic)
            && (self.kinds.is_empty() || self.kinds.contains(&kind))
    }
}

enum Piece {
    Text(String),
    /// The masculine and feminine forms, chosen by the gender of the event's kind.
    Gender(String, String),
    Context(Context),
    /// Index into [`Template::lists`].
    List(usize),
}

/// Slots filled from what the record is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Context {
    Event,
    Kind,
    Topic,
    City,
    InCity,
    OfCity,
    Audience,
    Year,
    District,
}

/// Slots filled from lists.
#[derive(Debug, Clone, Copy, PartialEq)]
enum List {
    Works,
    People,
    Teachers,
    Skills,
    Offers,
    Features,
    Programme,
}

/// Which slots the sentences of each kind of record may use.
#[derive(Clone, Copy)]
enum Purpose {
    Event,
    Venue,
    Organizer,
}

impl Purpose {
    fn slot(self, name: &str) -> Option<Result<Context, List>> {
        let slot = match name {
            "event" => Ok(Context::Event),
            "kind" => Ok(Context::Kind),
            "topic" => Ok(Context::Topic),
            "audience" => Ok(Context::Audience),
            "city" => Ok(Context::City),
            "in_city" => Ok(Context::InCity),
            "of_city" => Ok(Context::OfCity),
            "year" => Ok(Context::Year),
            "district" => Ok(Context::District),
            "works" => Err(List::Works),
            "people" => Err(List::People),
            "teachers" => Err(List::Teachers),
            "skills" => Err(List::Skills),
            "offers" => Err(List::Offers),
            "features" => Err(List::Features),
            "programme" => Err(List::Programme),
            _ => return None,
        };
        let allowed = match (self, slot) {
            (_, Ok(Context::City | Context::InCity | Context::OfCity)) => true,
            (Purpose::Event, Ok(Context::Year | Context::District)) => false,
            (Purpose::Event, Ok(_)) => true,
            (Purpose::Event, Err(list)) => {
                matches!(
                    list,
                    List::Works | List::People | List::Teachers | List::Skills
                )
            }
            (Purpose::Venue, Ok(context)) => matches!(context, Context::Year | Context::District),
            (Purpose::Venue, Err(list)) => matches!(list, List::Offers | List::Features),
            (Purpose::Organizer, Ok(context)) => context == Context::Year,
            (Purpose::Organizer, Err(list)) => matches!(list, List::Programme | List::People),
        };
        allowed.then_some(slot)
    }
}

/// Function words and conjunctions per language: what word keys leave out, and what keeps an
/// item out of a list.
struct Lexicon {
    stopwords: [HashSet<String>; 3],
    conjunctions: [HashSet<String>; 3],
}

impl Lexicon {
    fn new(file: &DescriptionsFile) -> Lexicon {
        let sets = |words: &LanguageWords| {
            [&words.en, &words.pt_br, &words.es]
                .map(|list| list.iter().map(|w| w.to_lowercase()).collect())
        };
        Lexicon {
            stopwords: sets(&file.stopwords),
            conjunctions: sets(&file.conjunctions),
        }
    }

    /// The keys of a text's content words: lowercase, at least three letters, not function
    /// words.
    fn keys(&self, s: usize, text: &str) -> Vec<Key> {
        words_of(text)
            .filter(|w| w.chars().count() >= 3 && !self.stopwords[s].contains(w))
            .map(|w| Key::new(&w))
            .collect()
    }

    fn phrase(&self, text: Trio) -> Phrase {
        Phrase {
            keys: std::array::from_fn(|s| self.keys(s, text.at(s))),
            conjunction: std::array::from_fn(|s| {
                words_of(text.at(s)).any(|w| self.conjunctions[s].contains(&w))
            }),
            text,
        }
    }

    fn phrases(&self, rows: &[Trio]) -> Vec<Phrase> {
        rows.iter().map(|t| self.phrase(t.clone())).collect()
    }

    fn event_lists(&self, lists: [&[Trio]; 4]) -> EventLists {
        let [works, people, teachers, skills] = lists.map(|rows| self.phrases(rows));
        EventLists {
            works,
            people,
            teachers,
            skills,
        }
    }

    /// Parses a sentence in its three languages.
    fn template(&self, row: &SentenceRow, purpose: Purpose) -> Result<Template, String> {
        let texts = [&row.en, &row.pt_br, &row.es];
        let mut pieces: [Vec<Piece>; 3] = Default::default();
        let mut lists_by_language: [Vec<List>; 3] = Default::default();
        let mut context: [Vec<Context>; 3] = Default::default();
        for (s, text) in texts.iter().enumerate() {
            let mut rest = text.as_str();
            while let Some(open) = rest.find('{') {
                if open > 0 {
                    pieces[s].push(Piece::Text(rest[..open].to_string()));
                }
                let close = open
                    + rest[open..]
                        .find('}')
                        .ok_or_else(|| format!("an unclosed slot in {text:?}"))?;
                let name = &rest[open + 1..close];
                if let Some((masculine, feminine)) = name.split_once('|') {
                    if !matches!(purpose, Purpose::Event) {
                        return Err(format!("{text:?}: only event sentences agree in gender"));
                    }
                    pieces[s].push(Piece::Gender(masculine.into(), feminine.into()));
                } else {
                    match purpose.slot(name) {
                        Some(Ok(slot)) => {
                            if !context[s].contains(&slot) {
                                context[s].push(slot);
                            }
                            pieces[s].push(Piece::Context(slot));
                        }
                        Some(Err(list)) => {
                            // The n-th slot of a list in any language takes the item of its
                            // n-th slot in English.
                            let nth = lists_by_language[s].iter().filter(|l| **l == list).count();
                            lists_by_language[s].push(list);
                            pieces[s].push(Piece::List(nth));
                        }
                        None => return Err(format!("{text:?}: no slot {{{name}}} here")),
                    }
                }
                rest = &rest[close + 1..];
            }
            if !rest.is_empty() {
                pieces[s].push(Piece::Text(rest.to_string()));
            }
        }
        let lists = lists_by_language[0].clone();
        for (s, language_lists) in lists_by_language.iter().enumerate() {
            for list in [
                List::Works,
                List::People,
                List::Teachers,
                List::Skills,
                List::Offers,
                List::Features,
                List::Programme,
            ] {
                let count = |l: &Vec<List>| l.iter().filter(|x| **x == list).count();
                if count(language_lists) != count(&lists) {
                    return Err(format!(
                        "{:?}: not the list slots of {:?}",
                        texts[s], texts[0]
                    ));
                }
            }
            // Replace each occurrence number by the English position of that occurrence.
            let mut seen: Vec<List> = Vec::new();
            for piece in &mut pieces[s] {
                if let Piece::List(nth) = piece {
                    let list = language_lists[seen.len()];
                    seen.push(list);
                    *nth = lists
                        .iter()
                        .enumerate()
                        .filter(|(_, l)| **l == list)
                        .nth(*nth)
                        .map(|(position, _)| position)
                        .expect("counted above");
                }
            }
        }
        // Fixed words as written, with the masculine forms and a break at every slot.
        let keys = std::array::from_fn(|s| {
            let mut fixed = String::new();
            for piece in &pieces[s] {
                match piece {
                    Piece::Text(t) => fixed.push_str(t),
                    Piece::Gender(masculine, _) => fixed.push_str(masculine),
                    Piece::Context(_) | Piece::List(_) => fixed.push_str(" | "),
                }
            }
            self.keys(s, &fixed)
        });
        let venue = row.venue
            || context
                .iter()
                .flatten()
                .any(|c| matches!(c, Context::City | Context::InCity | Context::OfCity));
        let filters = [&row.formats, &row.topics, &row.except, &row.kinds];
        if !matches!(purpose, Purpose::Event) && filters.iter().any(|f| !f.is_empty()) {
            return Err(format!(
                "{:?}: `formats`, `topics`, `except` and `kinds` are for domain lines",
                texts[0]
            ));
        }
        Ok(Template {
            pieces,
            keys,
            lists,
            context,
            venue,
            formats: Vec::new(),
            topics: Vec::new(),
            except: Vec::new(),
            kinds: Vec::new(),
        })
    }

    fn templates(&self, rows: &[SentenceRow], purpose: Purpose) -> Result<Vec<Template>, String> {
        rows.iter().map(|row| self.template(row, purpose)).collect()
    }
}

/// The lowercase words of a text (letters and digits between other characters).
fn words_of(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// The position of a name in a list of names, or an error naming what was looked for.
fn position_of<'a>(
    mut names: impl Iterator<Item = &'a str>,
    name: &str,
    what: &str,
) -> Result<usize, String> {
    names
        .position(|n| n == name)
        .ok_or_else(|| format!("no {what} named {name:?}"))
}

/// The positions of names, each found by `of`.
fn positions(
    names: &[String],
    of: impl Fn(&str) -> Result<usize, String>,
) -> Result<Vec<usize>, String> {
    names.iter().map(|name| of(name)).collect()
}

fn parse<T: serde::de::DeserializeOwned>(name: &str) -> Result<T, String> {
    let (_, text) = DATA_FILES
        .iter()
        .find(|(file, _)| *file == name)
        .expect("a data file");
    toml::from_str(text).map_err(|e| format!("{name}: {e}"))
}

impl Tables {
    fn load() -> Result<Tables, String> {
        let descriptions: DescriptionsFile = parse("descriptions.toml")?;
        let lexicon = Lexicon::new(&descriptions);
        fn in_file(file: &'static str) -> impl Fn(String) -> String {
            move |e| format!("{file}: {e}")
        }

        // Categories.
        let terms: TermsFile = parse("terms.toml")?;
        let mut categories: Vec<Category> = Vec::new();
        for row in &terms.category {
            let parent = match &row.parent {
                None => None,
                Some(name) => Some(
                    position_of(
                        categories.iter().map(|c| c.names.at(0)),
                        name,
                        "earlier category",
                    )
                    .map_err(in_file("terms.toml"))?,
                ),
            };
            categories.push(Category {
                names: row.names.clone(),
                parent,
            });
        }
        let category_of =
            |name: &str| position_of(categories.iter().map(|c| c.names.at(0)), name, "category");
        let family_category = category_of(&terms.family.category).map_err(in_file("terms.toml"))?;

        // Formats.
        let format_names: Vec<String> = descriptions.format.keys().cloned().collect();
        let format_of =
            |name: &str| position_of(format_names.iter().map(String::as_str), name, "format");
        let formats = descriptions
            .format
            .values()
            .map(|f| {
                Ok(Format {
                    opening: lexicon.templates(&f.opening, Purpose::Event)?,
                    body: lexicon.templates(&f.body, Purpose::Event)?,
                    practical: lexicon.templates(&f.practical, Purpose::Event)?,
                    summary: lexicon.templates(&f.summary, Purpose::Event)?,
                })
            })
            .collect::<Result<Vec<Format>, String>>()
            .map_err(in_file("descriptions.toml"))?;

        // Titles.
        let titles: TitlesFile = parse("titles.toml")?;
        let places = titles.places.names;
        let domains_file: DomainsFile = parse("domains.toml")?;
        let domain_of = |name: &str| {
            position_of(
                domains_file.domain.iter().map(|d| d.category.as_str()),
                name,
                "domain",
            )
        };
        let audience_domains = (titles.audience.iter())
            .map(|a| positions(&a.domains, domain_of))
            .collect::<Result<Vec<_>, _>>()
            .map_err(in_file("titles.toml"))?;
        let mut modifiers_for: Vec<[Vec<usize>; 2]> = vec![Default::default(); formats.len()];
        let mut modifiers = Vec::new();
        for (m, row) in titles.modifier.iter().enumerate() {
            let fitting = positions(&row.formats, format_of).map_err(in_file("titles.toml"))?;
            for (format, lists) in modifiers_for.iter_mut().enumerate() {
                if fitting.is_empty() || fitting.contains(&format) {
                    for (online, list) in lists.iter_mut().enumerate() {
                        let only = if online == 1 {
                            Only::Online
                        } else {
                            Only::Venue
                        };
                        if row.only.is_none_or(|o| o == only) {
                            list.push(m);
                        }
                    }
                }
            }
            modifiers.push(Modifier {
                names: row.names.clone(),
                free: row.free,
            });
        }
        let audiences: Vec<Audience> = titles
            .audience
            .iter()
            .map(|row| Audience {
                lower: lexicon.phrase(row.names.lowercase()),
                names: row.names.clone(),
                family: row.family,
            })
            .collect();

        // Domains.
        let mut domains = Vec::new();
        for (d, row) in domains_file.domain.iter().enumerate() {
            let in_domain = |e: String| format!("domains.toml: {}: {e}", row.category);
            let category = category_of(&row.category).map_err(in_domain)?;
            let family = category == family_category;
            let mut kinds = Vec::new();
            for kind in &row.kind {
                let mut feminine = [false; 3];
                for code in &kind.feminine {
                    let language = Language::from_code(code)
                        .ok_or_else(|| in_domain(format!("no language {code:?}")))?;
                    feminine[slot(language)] = true;
                }
                kinds.push((
                    EventKind {
                        lower: lexicon.phrase(kind.names.lowercase()),
                        names: kind.names.clone(),
                        format: format_of(&kind.format).map_err(in_domain)?,
                        feminine,
                    },
                    kind.online,
                ));
            }
            let kind_of =
                |name: &str| position_of(kinds.iter().map(|(k, _)| k.names.at(0)), name, "kind");
            let topic_of =
                |name: &str| position_of(row.topic.iter().map(|t| t.names.at(0)), name, "topic");
            let mut topics = Vec::new();
            for topic in &row.topic {
                let kind_indices = if topic.kinds.is_empty() {
                    (0..kinds.len()).collect()
                } else {
                    let mut listed = positions(&topic.kinds, kind_of).map_err(in_domain)?;
                    // Most common first, as the domain lists them.
                    listed.sort_unstable();
                    listed
                };
                let online_kinds = if topic.online == Some(false) {
                    Vec::new()
                } else {
                    kind_indices
                        .iter()
                        .copied()
                        .filter(|&k| kinds[k].1)
                        .collect()
                };
                let place_indices = if topic.places.is_empty() {
                    (0..places.len()).collect()
                } else {
                    let place_of =
                        |p: &str| position_of(places.iter().map(|t| t.at(0)), p, "place");
                    positions(&topic.places, place_of).map_err(in_domain)?
                };
                let audience_indices = titles
                    .audience
                    .iter()
                    .enumerate()
                    .filter(|(a, audience)| {
                        (!family || audience.family)
                            && !(topic.adults && audience.minors)
                            && (audience_domains[*a].is_empty()
                                || audience_domains[*a].contains(&d))
                    })
                    .map(|(a, _)| a)
                    .collect();
                let prose = topic
                    .prose
                    .clone()
                    .unwrap_or_else(|| topic.names.lowercase());
                let attributive = topic.attributive.clone().unwrap_or_else(|| prose.clone());
                topics.push(Topic {
                    image_base: format!(
                        "https://images.example.org/events/{}/{}",
                        slug::sanitize(&row.category),
                        slug::sanitize(topic.names.at(0))
                    ),
                    names: topic.names.clone(),
                    prose: lexicon.phrase(prose),
                    attributive: lexicon.phrase(attributive),
                    kinds: kind_indices,
                    online_kinds,
                    places: place_indices,
                    audiences: audience_indices,
                    lists: lexicon.event_lists([
                        &topic.works,
                        &topic.people,
                        &topic.teachers,
                        &topic.skills,
                    ]),
                    lines: Vec::new(),
                });
            }
            let mut lines = Vec::new();
            for line in &row.line {
                let mut template = lexicon.template(line, Purpose::Event).map_err(in_domain)?;
                template.formats = positions(&line.formats, format_of).map_err(in_domain)?;
                template.topics = positions(&line.topics, topic_of).map_err(in_domain)?;
                template.except = positions(&line.except, topic_of).map_err(in_domain)?;
                template.kinds = positions(&line.kinds, kind_of).map_err(in_domain)?;
                if template.formats.is_empty() {
                    return Err(in_domain(format!("{:?} has no `formats`", line.en)));
                }
                lines.push(template);
            }
            for (t, topic) in topics.iter_mut().enumerate() {
                topic.lines = (kinds.iter().enumerate())
                    .map(|(k, (kind, _))| {
                        (lines.iter().enumerate())
                            .filter(|(_, line)| line.fits(kind.format, t, k))
                            .map(|(n, _)| n)
                            .collect()
                    })
                    .collect();
            }
            let online_weight = if topics.iter().any(|t| !t.online_kinds.is_empty()) {
                row.weight
            } else {
                0
            };
            domains.push(Domain {
                category,
                weight: row.weight,
                online_weight,
                family,
                lists: lexicon.event_lists([&row.works, &row.people, &row.teachers, &row.skills]),
                topics,
                kinds: kinds.into_iter().map(|(k, _)| k).collect(),
                lines,
            });
        }

        // Cities and money.
        let cities_file: CitiesFile = parse("cities.toml")?;
        let money = &cities_file.money;
        let currency_of = |symbol: &str| {
            position_of(
                money.currencies.iter().map(String::as_str),
                symbol,
                "currency",
            )
        };
        let mut cities = Vec::new();
        for row in &cities_file.city {
            let in_city = |e: String| format!("cities.toml: {}: {e}", row.names.at(0));
            cities.push(City {
                names: lexicon.phrase(row.names.clone()),
                in_city: lexicon.phrase(row.in_city.clone()),
                of: lexicon.phrase(row.of.clone()),
                districts: lexicon.phrases(&row.districts),
                language: Language::from_code(&row.language)
                    .ok_or_else(|| in_city(format!("no language {:?}", row.language)))?,
                zone: row.zone.clone(),
                country: row.country,
                region: row.region.clone(),
                lat: row.lat,
                lng: row.lng,
                streets: row.streets.clone(),
                postal_prefix: row.postal_prefix.clone(),
                phone_prefix: row.phone_prefix.clone(),
                currency: currency_of(&row.currency).map_err(in_city)?,
            });
        }
        let online_currency =
            |s: usize| currency_of(money.online.at(s)).map_err(in_file("cities.toml"));
        let money = Money {
            online: [
                online_currency(0)?,
                online_currency(1)?,
                online_currency(2)?,
            ],
            currencies: money.currencies.clone(),
            free: money.free.clone(),
            amounts: money.amounts.clone(),
            ranges: money.ranges.clone(),
        };

        // Venues and organizers.
        let host_types = |rows: &[HostRow], groups: &[&String], file: &'static str| {
            rows.iter()
                .map(|row| {
                    Ok(HostType {
                        names: row.names.clone(),
                        group: position_of(groups.iter().map(|g| g.as_str()), &row.group, "group")?,
                        hosts: positions(&row.hosts, domain_of)?,
                    })
                })
                .collect::<Result<Vec<HostType>, String>>()
                .map_err(in_file(file))
        };
        let venues: VenuesFile = parse("venues.toml")?;
        let venue_groups: Vec<&String> = venues.group.keys().collect();
        let organizers: OrganizersFile = parse("organizers.toml")?;
        let organizer_fields: Vec<&String> = organizers.field.keys().collect();
        let names: ProperNamesFile = parse("names.toml")?;

        Ok(Tables {
            venue_types: host_types(&venues.types, &venue_groups, "venues.toml")?,
            organizer_types: host_types(&organizers.types, &organizer_fields, "organizers.toml")?,
            venue_groups: venues
                .group
                .values()
                .map(|g| VenueGroup {
                    offers: lexicon.phrases(&g.offers),
                    features: lexicon.phrases(&g.features),
                })
                .collect(),
            venue_sentences: Sentences {
                opening: lexicon
                    .templates(&venues.opening, Purpose::Venue)
                    .map_err(in_file("venues.toml"))?,
                body: lexicon
                    .templates(&venues.body, Purpose::Venue)
                    .map_err(in_file("venues.toml"))?,
            },
            organizer_fields: organizers
                .field
                .values()
                .map(|f| OrganizerField {
                    programme: lexicon.phrases(&f.programme),
                    people: lexicon.phrases(&f.people),
                })
                .collect(),
            organizer_sentences: Sentences {
                opening: lexicon
                    .templates(&organizers.opening, Purpose::Organizer)
                    .map_err(in_file("organizers.toml"))?,
                body: lexicon
                    .templates(&organizers.body, Purpose::Organizer)
                    .map_err(in_file("organizers.toml"))?,
            },
            audience_sentences: lexicon
                .templates(&descriptions.audience, Purpose::Event)
                .map_err(in_file("descriptions.toml"))?,
            online_sentences: lexicon
                .templates(&descriptions.online, Purpose::Event)
                .map_err(in_file("descriptions.toml"))?,
            closing_sentences: lexicon
                .templates(&descriptions.closing, Purpose::Event)
                .map_err(in_file("descriptions.toml"))?,
            categories,
            family_category,
            tags: terms.tags.names,
            domains,
            places,
            audiences,
            modifiers,
            modifiers_for,
            cities,
            uk_outward_codes: cities_file.uk.outward_codes,
            money,
            proper_names: names.names,
            formats,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Reads;

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
        assert_eq!(c.categories.len(), 3 * TABLES.categories.len());
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

    #[test]
    fn word_keys_meet_when_one_begins_the_other() {
        let key = Key::new;
        assert!(key("wine").clash(key("wines")) && key("wines").clash(key("wine")));
        assert!(key("music").clash(key("musicians")));
        assert!(key("música").clash(key("músicos")));
        assert!(!key("jazz").clash(key("java")));
        assert!(!key("poetry").clash(key("poets")));
    }

    #[test]
    fn the_data_files_parse_and_hold_what_the_generator_needs() {
        let tables = Tables::load().unwrap_or_else(|e| panic!("data/generator/{e}"));
        assert!(!tables.categories.is_empty() && !tables.tags.is_empty());
        assert!(!tables.places.is_empty() && !tables.audiences.is_empty());
        assert!(!tables.modifiers.is_empty() && !tables.proper_names.is_empty());
        assert!(!tables.venue_types.is_empty() && !tables.organizer_types.is_empty());
        assert!(!tables.uk_outward_codes.is_empty() && !tables.money.amounts.is_empty());
        // Domains are bits of a venue's or organizer's mask.
        assert!((1..=64).contains(&tables.domains.len()));
        assert!(tables.domains.iter().any(|d| d.online_weight > 0));
        assert!(tables.audiences.iter().any(|a| a.family));
        for domain in &tables.domains {
            let name = tables.categories[domain.category].names.at(0);
            assert!(domain.weight > 0 && !domain.kinds.is_empty(), "{name}");
            assert!(
                !domain.topics.is_empty() && !domain.lines.is_empty(),
                "{name}"
            );
            for topic in &domain.topics {
                assert!(!topic.kinds.is_empty(), "{name}: {}", topic.names.at(0));
            }
        }
        for city in &tables.cities {
            assert!(!city.streets.is_empty() && !city.districts.is_empty());
            assert!(Zone::parse(&city.zone).is_ok(), "{}", city.zone);
        }
        for group in &tables.venue_groups {
            assert!(group.offers.len() >= 4 && group.features.len() >= 3);
        }
        for field in &tables.organizer_fields {
            assert!(field.programme.len() >= 3 && field.people.len() >= 2);
        }
        for sentences in [&tables.venue_sentences, &tables.organizer_sentences] {
            assert!(!sentences.opening.is_empty() && sentences.body.len() >= 2);
        }
        for format in &tables.formats {
            assert!(!format.opening.is_empty() && !format.summary.is_empty());
            assert!(!format.body.is_empty() && !format.practical.is_empty());
        }
        for sentences in [
            &tables.audience_sentences,
            &tables.online_sentences,
            &tables.closing_sentences,
        ] {
            assert!(!sentences.is_empty());
        }

        // Every template in every language, and every item, says each word once.
        let lexicon = Lexicon::new(&parse("descriptions.toml").unwrap());
        let repeated = |s: usize, text: &str| {
            let mut seen = HashSet::new();
            words_of(text)
                .filter(|w| w.chars().count() >= 3 && !lexicon.stopwords[s].contains(w))
                .find(|w| !seen.insert(w.clone()))
        };
        let mut templates: Vec<&Template> = Vec::new();
        for format in &tables.formats {
            templates.extend(
                [
                    &format.opening,
                    &format.body,
                    &format.practical,
                    &format.summary,
                ]
                .into_iter()
                .flatten(),
            );
        }
        templates.extend(tables.domains.iter().flat_map(|d| &d.lines));
        templates.extend(
            [
                &tables.audience_sentences,
                &tables.online_sentences,
                &tables.closing_sentences,
                &tables.venue_sentences.opening,
                &tables.venue_sentences.body,
                &tables.organizer_sentences.opening,
                &tables.organizer_sentences.body,
            ]
            .into_iter()
            .flatten(),
        );
        let mut repeats: Vec<String> = Vec::new();
        for template in templates {
            for s in 0..3 {
                let fixed: String = template.pieces[s]
                    .iter()
                    .map(|piece| match piece {
                        Piece::Text(t) => t.as_str(),
                        Piece::Gender(masculine, _) => masculine.as_str(),
                        _ => " | ",
                    })
                    .collect();
                if let Some(word) = repeated(s, &fixed) {
                    repeats.push(format!("{word:?} in {fixed:?}"));
                }
            }
        }
        let mut phrases: Vec<&Phrase> = Vec::new();
        for domain in &tables.domains {
            for list in [List::Works, List::People, List::Teachers, List::Skills] {
                phrases.extend(domain.lists.get(list));
                phrases.extend(domain.topics.iter().flat_map(|t| t.lists.get(list)));
            }
        }
        for group in &tables.venue_groups {
            phrases.extend(group.offers.iter().chain(&group.features));
        }
        for field in &tables.organizer_fields {
            phrases.extend(field.programme.iter().chain(&field.people));
        }
        for phrase in phrases {
            for s in 0..3 {
                if let Some(word) = repeated(s, phrase.text.at(s)) {
                    repeats.push(format!("{word:?} in {:?}", phrase.text.at(s)));
                }
            }
        }
        assert!(repeats.is_empty(), "{}", repeats.join("\n"));
    }

    /// Every title the generator can draw gets a description opening, a line of its domain
    /// and an excerpt that read well in all three languages; every venue and organizer an
    /// opening.
    #[test]
    fn every_kind_of_record_can_be_described_in_three_languages() {
        let tables = &*TABLES;
        let languages = Language::ALL;
        let mut rng = StdRng::seed_from_u64(1);
        let mut missing: Vec<String> = Vec::new();
        let mut fitting =
            |scene: &Scene, templates: &'static [Template], fits: &dyn Fn(&Template) -> bool| {
                templates
                    .iter()
                    .filter(|t| fits(t) && Builder::new(scene).add(&mut rng, t))
                    .count()
            };
        for (d, domain) in tables.domains.iter().enumerate() {
            for (t, topic) in domain.topics.iter().enumerate() {
                let audiences = [None]
                    .into_iter()
                    .chain(topic.audiences.iter().map(|a| Some(*a)));
                for (kind, audience) in topic
                    .kinds
                    .iter()
                    .flat_map(|k| audiences.clone().map(move |a| (*k, a)))
                {
                    let format = domain.kinds[kind].format;
                    let places = (0..tables.cities.len()).map(Some);
                    let online = topic.online_kinds.contains(&kind).then_some(None);
                    for city in places.chain(online) {
                        let what = format!(
                            "{} {} in {:?} for {audience:?}",
                            topic.names.at(0),
                            domain.kinds[kind].names.at(0),
                            city.map(|c| tables.cities[c].names.text.at(0))
                        );
                        let scene = Scene {
                            languages: &languages,
                            event: Some(EventScene {
                                domain: d,
                                topic: t,
                                kind,
                                audience,
                            }),
                            city,
                            district: None,
                            year: 0,
                            lists: Lists::Event {
                                domain: d,
                                topic: t,
                            },
                            venue: city.is_some(),
                        };
                        let formats = &tables.formats[format];
                        if fitting(&scene, &formats.opening, &|_| true) == 0 {
                            missing.push(format!("no opening: {what}"));
                        }
                        if fitting(&scene, &formats.summary, &|_| true) == 0 {
                            missing.push(format!("no summary: {what}"));
                        }
                        let line = |l: &Template| l.fits(format, t, kind);
                        if fitting(&scene, &domain.lines, &line) == 0 {
                            missing.push(format!("no line: {what}"));
                        }
                        if audience.is_some()
                            && fitting(&scene, &tables.audience_sentences, &|_| true) == 0
                        {
                            missing.push(format!("no audience sentence: {what}"));
                        }
                    }
                }
            }
        }
        for (c, city) in tables.cities.iter().enumerate() {
            for district in 0..city.districts.len() {
                for group in 0..tables.venue_groups.len() {
                    let scene = Scene {
                        languages: &languages,
                        event: None,
                        city: Some(c),
                        district: Some(district),
                        year: 1999,
                        lists: Lists::Venue(group),
                        venue: true,
                    };
                    let sentences = &tables.venue_sentences;
                    if fitting(&scene, &sentences.opening, &|_| true) == 0
                        || fitting(&scene, &sentences.body, &|_| true) < 2
                    {
                        missing.push(format!("venue group {group} in {c}/{district}"));
                    }
                }
            }
            for field in 0..tables.organizer_fields.len() {
                let scene = Scene {
                    languages: &languages,
                    event: None,
                    city: Some(c),
                    district: None,
                    year: 1999,
                    lists: Lists::Organizer(field),
                    venue: true,
                };
                let sentences = &tables.organizer_sentences;
                if fitting(&scene, &sentences.opening, &|_| true) == 0 {
                    missing.push(format!("organizer field {field} in {c}"));
                }
            }
        }
        missing.dedup();
        assert!(
            missing.is_empty(),
            "{} cases:\n{}",
            missing.len(),
            missing.join("\n")
        );
    }

    #[test]
    fn descriptions_are_sentences_without_repeated_words() {
        let (_dir, store) = generated(&Shape::for_events(2000), 5);
        let c = contents(&store);
        let lexicon = Lexicon::new(&parse("descriptions.toml").unwrap());
        let check = |language: Language, text: &str| {
            assert!(!text.contains(['{', '}', '|']), "{text}");
            assert!(text.ends_with('.'), "{text}");
            for sentence in text.split(". ") {
                assert!(
                    sentence.starts_with(|c: char| c.is_uppercase() || c.is_ascii_digit()),
                    "{text}"
                );
                let s = slot(language);
                let mut seen = HashSet::new();
                for word in words_of(sentence)
                    .filter(|w| w.chars().count() >= 3 && !lexicon.stopwords[s].contains(w))
                {
                    assert!(seen.insert(word.clone()), "{word:?} twice in {sentence:?}");
                }
            }
        };
        let posts = (c.events.iter().map(|e| &e.post))
            .chain(c.venues.iter().map(|v| &v.post))
            .chain(c.organizers.iter().map(|o| &o.post));
        for post in posts {
            if !post.description.is_empty() {
                check(post.language, &post.description);
            }
            if !post.excerpt.is_empty() {
                check(post.language, &post.excerpt);
                assert!(
                    !post.excerpt.contains(". "),
                    "one sentence: {}",
                    post.excerpt
                );
            }
        }
        assert!(c.events.iter().all(|e| !e.post.description.is_empty()));
        assert!(c.venues.iter().all(|v| !v.post.description.is_empty()));
        let n = c.events.len() as f64;
        let share =
            |f: &dyn Fn(&Event) -> bool| c.events.iter().filter(|e| f(e)).count() as f64 / n;
        let excerpts = share(&|e| !e.post.excerpt.is_empty());
        let images = share(&|e| e.post.image.is_some());
        assert!((0.2..0.4).contains(&excerpts), "excerpts {excerpts}");
        assert!((0.15..0.35).contains(&images), "images {images}");

        // A group's members say the same thing: as many sentences, the same image.
        let rx = store.read().unwrap();
        for (kind, group, members) in &c.groups {
            if *kind != Kind::Event || members.len() < 2 {
                continue;
            }
            let posts: Vec<&PostMeta> = members
                .iter()
                .map(|(_, id)| &c.events.iter().find(|e| e.post.id == *id).unwrap().post)
                .collect();
            let sentences = |p: &PostMeta| p.description.matches(". ").count();
            assert!(
                posts.iter().all(|p| sentences(p) == sentences(posts[0])),
                "{group}"
            );
            assert!(posts.iter().all(|p| p.image == posts[0].image), "{group}");
        }
        let image = c.events.iter().find_map(|e| e.post.image).unwrap();
        let url = rx.image(image).unwrap().unwrap().url;
        assert!(url.starts_with("https://images.example.org/events/") && url.ends_with(".jpg"));
    }
}
