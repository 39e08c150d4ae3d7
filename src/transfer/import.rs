//! `almanac import FILE`: loads JSON lines written by `almanac export` (module docs above).

use super::{kind_of_collection, KindCounts, FEED_LINES};
use crate::model::event::Event;
use crate::model::post::{GeoPoint, Image, Organizer, PostMeta, Venue};
use crate::model::series::{Occurrence, OccurrenceOf, OccurrenceState};
use crate::model::term::Term;
use crate::model::{Kind, Language, Status};
use crate::store::{PostIdKind, Reads, Store, StoreError, WriteTx};
use crate::values::cost::Cost;
use crate::values::timezone::Zone;
use crate::values::{datetime, scalars, slug};
use chrono::{Duration, NaiveDateTime};
use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::io::BufRead;

pub(crate) type ImportSummary = KindCounts;

/// How an import runs.
pub(crate) struct ImportOptions {
    /// Lines per redb transaction (and so per index commit).
    pub batch: usize,
    /// Added to every date of every record (the demo calendar is moved to the coming year).
    pub shift: Duration,
}

impl Default for ImportOptions {
    fn default() -> ImportOptions {
        ImportOptions {
            batch: 5000,
            shift: Duration::zero(),
        }
    }
}

/// How records are loaded, whether from lines or from another site's pages.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LoadRules {
    /// Added to every date of every record (the demo calendar is moved to the coming year).
    pub shift: Duration,
    /// A record whose ID the store already holds for the same kind is replaced when it
    /// changed (posts: `modified_utc`; terms: any field) and left alone otherwise; without
    /// it, such a record is refused.
    pub replace: bool,
    /// The language of records whose data names none (The Events Calendar has no languages).
    pub default_language: Option<Language>,
    /// Titles, descriptions and excerpts are cleaned as the API cleans the text of a writer
    /// without unfiltered_html (docs/api.md, "Text fields and HTML"): another site's HTML is
    /// not trusted.
    pub clean_html: bool,
    /// The records come from WordPress, which shows a record never published (a draft, a
    /// pending record) with `0000-00-00 00:00:00` as its UTC dates and an empty slug: such a
    /// record takes its local dates as its UTC ones (almanac's site zone is UTC) and a slug
    /// made from its title.
    pub wordpress: bool,
}

impl LoadRules {
    fn from_file(options: &ImportOptions) -> LoadRules {
        LoadRules {
            shift: options.shift,
            replace: false,
            default_language: None,
            clean_html: false,
            wordpress: false,
        }
    }
}

/// What loading one record did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Loaded {
    Added,
    Updated,
    Unchanged,
}

/// A refused line: its 1-based number and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rejection {
    pub line: u64,
    pub reason: String,
}

/// Why an import stopped (refused lines do not stop it).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ImportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot read the input: {0}")]
    Input(#[from] std::io::Error),
}

/// Loads every valid line of `input`; `on_line` hears the number of lines read so far and
/// `on_reject` each refused line.
pub(crate) fn import(
    store: &Store,
    input: impl BufRead,
    options: &ImportOptions,
    mut on_line: impl FnMut(u64),
    mut on_reject: impl FnMut(Rejection),
) -> Result<ImportSummary, ImportError> {
    let mut counts = KindCounts::default();
    let mut known = KnownLanguages::default();
    let rules = LoadRules::from_file(options);
    let mut lines = input.lines();
    let mut number = 0u64;
    loop {
        let mut batch = Vec::with_capacity(options.batch);
        for line in lines.by_ref().take(options.batch.max(1)) {
            number += 1;
            batch.push((number, line?));
        }
        if batch.is_empty() {
            return Ok(counts);
        }
        store.write(|tx| {
            for (number, line) in &batch {
                if line.trim().is_empty() {
                    continue;
                }
                match load_line(tx, line, &rules, &mut known) {
                    Ok(Some(kind)) => counts.add(kind),
                    Ok(None) => counts.feed_lines += 1,
                    Err(RecordError::Refused(reason)) => on_reject(Rejection {
                        line: *number,
                        reason,
                    }),
                    Err(RecordError::Store(e)) => return Err(e),
                }
            }
            Ok::<(), StoreError>(())
        })?;
        on_line(number);
    }
}

/// Why a record was not loaded: refused (reported, nothing written), or the store failed.
pub(crate) enum RecordError {
    Refused(String),
    Store(StoreError),
}

impl From<StoreError> for RecordError {
    fn from(e: StoreError) -> RecordError {
        RecordError::Store(e)
    }
}

impl From<String> for RecordError {
    fn from(reason: String) -> RecordError {
        RecordError::Refused(reason)
    }
}

type RecordResult<T> = Result<T, RecordError>;

/// The languages of records that records have referred to so far; events refer to the same
/// few venues, organizers and terms over and over. Loading a record updates its entry.
pub(crate) type KnownLanguages = HashMap<(Kind, u64), Language>;

/// Validates one line against the store (and the lines before it in this transaction), then
/// writes it. Every check comes before the first write, so a refused line leaves nothing.
/// Returns the kind of the record loaded (`None`: a feed line).
fn load_line(
    tx: &mut WriteTx,
    line: &str,
    rules: &LoadRules,
    known: &mut KnownLanguages,
) -> RecordResult<Option<Kind>> {
    let parsed: Line = serde_json::from_str(line).map_err(|e| format!("not a JSON object: {e}"))?;
    let resource = parsed
        .resource
        .as_ref()
        .and_then(Value::as_str)
        .ok_or("`resource` must be a string")?;
    if FEED_LINES.contains(&resource) {
        load_feed_line(tx, resource, line)?;
        return Ok(None);
    }
    let kind = kind_of_collection(resource).ok_or_else(|| {
        format!(
            "unknown resource {resource:?} (categories, tags, venues, organizers, events, \
             feed_sources, feed_items)"
        )
    })?;
    let Some(Data(Some(data))) = parsed.data else {
        return Err("`data` must be an object".into());
    };
    load_fields(tx, kind, &data, rules, known)?;
    Ok(Some(kind))
}

/// A `feed_sources` or `feed_items` line (see `FEED_LINES`): what an iCalendar mirror knows of
/// its feed, each UID naming an event the lines before loaded.
fn load_feed_line(tx: &mut WriteTx, resource: &str, line: &str) -> RecordResult<()> {
    let parsed: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let data = parsed.get("data").ok_or("`data` must be an object")?;
    let text = |key: &str| data.get(key).and_then(Value::as_str);
    let optional = |key: &str| -> RecordResult<Option<String>> {
        match data.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("`{key}` must be a string or null").into()),
        }
    };
    let source = text("source")
        .filter(|s| !s.is_empty() && !s.contains('\n'))
        .ok_or("`source` must be a feed's address")?;
    if resource == FEED_LINES[0] {
        let validators = crate::model::feed::FeedValidators {
            etag: optional("etag")?,
            last_modified: optional("last_modified")?,
        };
        tx.set_feed_validators(source, &validators)?;
        return Ok(());
    }
    let uid = text("uid")
        .filter(|u| !u.is_empty())
        .ok_or("`uid` must be a non-empty string")?;
    let event = data
        .get("event")
        .and_then(Value::as_u64)
        .ok_or("`event` must be an event ID")?;
    if tx
        .get_record::<crate::model::post::PostMeta>(Kind::Event, event)?
        .is_none()
    {
        return Err(format!("`event` {event} names no event loaded before").into());
    }
    let fingerprint = text("fingerprint")
        .and_then(|f| f.parse().ok())
        .ok_or("`fingerprint` must be a number in a string")?;
    let mut instances = Vec::new();
    for instance in data
        .get("instances")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let at = instance
            .as_str()
            .and_then(crate::values::datetime::parse_formatted)
            .ok_or("`instances` must hold dates as YYYY-MM-DD HH:MM:SS")?;
        instances.push(at);
    }
    let item = crate::model::feed::FeedItem {
        event,
        fingerprint,
        instances,
    };
    tx.set_feed_item(source, uid, Some(&item))?;
    Ok(())
}

/// Loads one record of `kind` from its representation (a member of a list page), with the
/// same checks as a line.
pub(crate) fn load_record(
    tx: &mut WriteTx,
    kind: Kind,
    representation: Value,
    rules: &LoadRules,
    known: &mut KnownLanguages,
) -> RecordResult<Loaded> {
    let Data(data) = Data::deserialize(representation).map_err(|e| format!("not a record: {e}"))?;
    let data = data.ok_or("not a JSON object")?;
    load_fields(tx, kind, &data, rules, known)
}

fn load_fields(
    tx: &mut WriteTx,
    kind: Kind,
    data: &LineFields,
    rules: &LoadRules,
    known: &mut KnownLanguages,
) -> RecordResult<Loaded> {
    let data = Fields {
        fields: data,
        rules,
    };
    let loaded = match kind {
        Kind::Category | Kind::Tag => load_term(tx, kind, &data)?,
        Kind::Venue => load_venue(tx, &data)?,
        Kind::Organizer => load_organizer(tx, &data)?,
        Kind::Event => load_event(tx, &data, known)?,
    };
    if loaded == Loaded::Updated {
        // An update may have moved the record to another language.
        known.remove(&(kind, data.id(DataKey::id)?));
    }
    Ok(loaded)
}

/// A line, parsed in one pass.
#[derive(serde::Deserialize)]
struct Line {
    resource: Option<Value>,
    data: Option<Data>,
}

/// Declares [`DataKey`], the keys of a line's `data` that import reads, and [`LineFields`],
/// their values (each a JSON value, null when absent). `embedded` keys hold other records'
/// whole representations (an event's venue, organizers and terms: half of an event line), of
/// which import reads only the IDs ([`Embedded`]). Every other key (derived fields, URLs,
/// global IDs) is skipped while parsing: building a map of every value was a large share of
/// an import.
macro_rules! line_fields {
    (values: [$($key:ident),* $(,)?], embedded: [$($embedded:ident),* $(,)?] $(,)?) => {
        /// A key of a line's `data` that import reads, named as in the line.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug)]
        enum DataKey {
            $($key,)*
            $($embedded,)*
        }

        impl DataKey {
            fn as_str(self) -> &'static str {
                match self {
                    $(DataKey::$key => stringify!($key),)*
                    $(DataKey::$embedded => stringify!($embedded),)*
                }
            }
        }

        #[derive(Default, serde::Deserialize)]
        #[serde(default)]
        struct LineFields {
            $($key: Value,)*
            $(#[serde(deserialize_with = "embedded_ids")] $embedded: Value,)*
        }

        impl LineFields {
            fn get(&self, key: DataKey) -> &Value {
                match key {
                    $(DataKey::$key => &self.$key,)*
                    $(DataKey::$embedded => &self.$embedded,)*
                }
            }
        }
    };
}

line_fields!(
    values: [
        id, language, status, slug, translations, author, date, date_utc, modified, modified_utc,
        title, name, description, excerpt, image, parent,
        address, city, country, province, state, stateprovince, zip, phone, email, website,
        url, show_map, show_map_link, geo_lat, geo_lng,
        timezone, start_date, end_date, all_day, cost_details, hide_from_listings, sticky,
        featured, ticketed, post_parent, password, recurrence, occurrences, series_id,
        recurrence_id,
    ],
    embedded: [venue, organizer, categories, tags],
);

fn embedded_ids<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
    Embedded::deserialize(deserializer).map(|Embedded(value)| value)
}

/// A line's `data`: its [`LineFields`], or `None` when `data` is not an object.
struct Data(Option<LineFields>);

impl<'de> Deserialize<'de> for Data {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Data, D::Error> {
        struct DataVisitor;
        impl<'de> Visitor<'de> for DataVisitor {
            type Value = Data;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Data, A::Error> {
                LineFields::deserialize(MapAccessDeserializer::new(map))
                    .map(|fields| Data(Some(fields)))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Data, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Data(None))
            }

            fn visit_str<E>(self, _: &str) -> Result<Data, E> {
                Ok(Data(None))
            }

            fn visit_bool<E>(self, _: bool) -> Result<Data, E> {
                Ok(Data(None))
            }

            fn visit_i64<E>(self, _: i64) -> Result<Data, E> {
                Ok(Data(None))
            }

            fn visit_u64<E>(self, _: u64) -> Result<Data, E> {
                Ok(Data(None))
            }

            fn visit_f64<E>(self, _: f64) -> Result<Data, E> {
                Ok(Data(None))
            }
        }
        deserializer.deserialize_any(DataVisitor)
    }
}

/// An embedded record (or list of them) reduced to its `id`; any other value (a venue's or
/// organizer's own name under the same key) is kept as it is.
struct Embedded(Value);

impl<'de> Deserialize<'de> for Embedded {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Embedded, D::Error> {
        struct EmbeddedVisitor;
        impl<'de> Visitor<'de> for EmbeddedVisitor {
            type Value = Embedded;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Embedded, A::Error> {
                let mut object = Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    if key == "id" {
                        object.insert(key, map.next_value()?);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(Embedded(Value::Object(object)))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Embedded, A::Error> {
                let mut items = Vec::new();
                while let Some(Embedded(item)) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Embedded(Value::Array(items)))
            }

            fn visit_str<E>(self, v: &str) -> Result<Embedded, E> {
                Ok(Embedded(Value::String(v.to_string())))
            }

            fn visit_bool<E>(self, v: bool) -> Result<Embedded, E> {
                Ok(Embedded(Value::Bool(v)))
            }

            fn visit_i64<E>(self, v: i64) -> Result<Embedded, E> {
                Ok(Embedded(Value::from(v)))
            }

            fn visit_u64<E>(self, v: u64) -> Result<Embedded, E> {
                Ok(Embedded(Value::from(v)))
            }

            fn visit_f64<E>(self, v: f64) -> Result<Embedded, E> {
                Ok(Embedded(Value::from(v)))
            }

            fn visit_unit<E>(self) -> Result<Embedded, E> {
                Ok(Embedded(Value::Null))
            }
        }
        deserializer.deserialize_any(EmbeddedVisitor)
    }
}

impl From<&str> for RecordError {
    fn from(reason: &str) -> RecordError {
        RecordError::Refused(reason.to_string())
    }
}

/// Typed access to a record's fields under the rules it is loaded by, with errors naming the
/// field.
struct Fields<'a> {
    fields: &'a LineFields,
    rules: &'a LoadRules,
}

impl Fields<'_> {
    fn get(&self, key: DataKey) -> Option<&Value> {
        Some(self.fields.get(key)).filter(|v| !v.is_null())
    }

    fn refuse(key: DataKey, reason: impl std::fmt::Display) -> String {
        format!("`{}` {reason}", key.as_str())
    }

    fn id(&self, key: DataKey) -> Result<u64, String> {
        match self.get(key) {
            Some(v) => id_value(v).ok_or_else(|| Self::refuse(key, "must be a positive integer")),
            None => Err(Self::refuse(key, "is required")),
        }
    }

    /// An ID where 0 means none (`parent`, `post_parent`, `author`).
    fn id_or_zero(&self, key: DataKey) -> Result<u64, String> {
        match self.get(key) {
            None => Ok(0),
            Some(v) => match v {
                Value::String(s) if s == "0" => Ok(0),
                Value::Number(n) if n.as_u64() == Some(0) => Ok(0),
                v => id_value(v).ok_or_else(|| Self::refuse(key, "must be an ID")),
            },
        }
    }

    /// A string field; absent means empty (representations omit empty venue fields).
    fn text(&self, key: DataKey) -> Result<String, String> {
        match self.get(key) {
            None => Ok(String::new()),
            Some(v) => scalars::string(v)
                .map(str::to_string)
                .map_err(|e| Self::refuse(key, e)),
        }
    }

    /// `description` is bounded only by the body limit over HTTP; here by
    /// the line itself.
    fn long_text(&self, key: DataKey) -> Result<String, String> {
        match self.get(key) {
            None => Ok(String::new()),
            Some(Value::String(s)) if !s.contains('\0') => Ok(self.cleaned(s)),
            Some(_) => Err(Self::refuse(key, "must be a string without NUL")),
        }
    }

    /// A text that may hold HTML, cleaned when the rules ask for it.
    fn cleaned(&self, text: &str) -> String {
        if self.rules.clean_html {
            crate::values::text::sanitize_html(text)
        } else {
            text.to_string()
        }
    }

    fn flag(&self, key: DataKey) -> Result<bool, String> {
        match self.get(key) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(Self::refuse(key, "must be true or false")),
        }
    }

    fn date(&self, key: DataKey) -> Result<NaiveDateTime, String> {
        let shift = self.rules.shift;
        let text = self
            .get(key)
            .and_then(Value::as_str)
            .ok_or_else(|| Self::refuse(key, "must be a date-time string"))?;
        datetime::parse_formatted(text)
            .and_then(|d| d.checked_add_signed(shift))
            .ok_or_else(|| Self::refuse(key, "must be `YYYY-MM-DD HH:MM:SS`"))
    }

    /// A UTC date; from WordPress, the local one (`local`) where it shows the UTC date of a
    /// record never published as zero.
    fn utc_date(&self, key: DataKey, local: DataKey) -> Result<NaiveDateTime, String> {
        match self.get(key).and_then(Value::as_str) {
            Some(WORDPRESS_ZERO_DATE) if self.rules.wordpress => self.date(local),
            _ => self.date(key),
        }
    }

    fn language(&self) -> Result<Language, String> {
        match self.get(DataKey::language) {
            None if self.rules.default_language.is_some() => {
                Ok(self.rules.default_language.expect("checked"))
            }
            v => v
                .and_then(Value::as_str)
                .and_then(Language::from_code)
                .ok_or_else(|| Self::refuse(DataKey::language, "must be en, pt-br or es")),
        }
    }

    fn slug(&self) -> Result<String, String> {
        let s = self.text(DataKey::slug)?;
        // A trashed record's slug carries the `__trashed` suffix.
        let base = s.strip_suffix("__trashed").unwrap_or(&s);
        if base.is_empty() || slug::sanitize(base) != base {
            return Err(Self::refuse(
                DataKey::slug,
                "must be a non-empty sanitized slug",
            ));
        }
        Ok(s)
    }

    /// An occurrence's slug: its page's path (`{series slug}/{YYYY-MM-DD}`), or a slug of its
    /// own given by an update.
    fn occurrence_slug(&self) -> Result<String, String> {
        let s = self.text(DataKey::slug)?;
        match s.rsplit_once('/') {
            Some((base, day))
                if !base.is_empty()
                    && slug::sanitize(base) == base
                    && chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d").is_ok() =>
            {
                Ok(s)
            }
            Some(_) => Err(Self::refuse(
                DataKey::slug,
                "must be a sanitized slug or an occurrence's `{slug}/{YYYY-MM-DD}`",
            )),
            None => self.slug(),
        }
    }

    /// A series' `occurrences`: each `{id, recurrence_id, state}`, IDs distinct and not the
    /// series' own.
    fn occurrences(&self, series: u64) -> Result<Vec<Occurrence>, String> {
        let key = DataKey::occurrences;
        let Some(items) = self.get(key) else {
            return Ok(Vec::new());
        };
        let items = items
            .as_array()
            .ok_or_else(|| Self::refuse(key, "must be a list"))?;
        let shift = self.rules.shift;
        let mut seen = std::collections::HashSet::new();
        items
            .iter()
            .map(|item| {
                let id = item
                    .get("id")
                    .and_then(id_value)
                    .filter(|id| *id != series && seen.insert(*id))
                    .ok_or_else(|| Self::refuse(key, "must hold distinct IDs, not the series'"))?;
                let original_start_utc = item
                    .get("recurrence_id")
                    .and_then(Value::as_str)
                    .and_then(datetime::parse_formatted)
                    .and_then(|d| d.checked_add_signed(shift))
                    .ok_or_else(|| {
                        Self::refuse(
                            key,
                            "must give each `recurrence_id` as `YYYY-MM-DD HH:MM:SS`",
                        )
                    })?;
                let state = item
                    .get("state")
                    .and_then(Value::as_str)
                    .and_then(OccurrenceState::parse)
                    .ok_or_else(|| {
                        Self::refuse(key, "must give each `state`: plain, exception or cancelled")
                    })?;
                Ok(Occurrence {
                    original_start_utc,
                    id,
                    state,
                })
            })
            .collect()
    }

    /// The IDs of the translation group's members (`translations`), this record's included.
    fn translations(&self, own: u64, language: Language) -> Result<Vec<(Language, u64)>, String> {
        let mut members = vec![(language, own)];
        if let Some(v) = self.get(DataKey::translations) {
            let map = v
                .as_object()
                .ok_or_else(|| Self::refuse(DataKey::translations, "must be an object"))?;
            for (code, id) in map {
                let member_language = Language::from_code(code).ok_or_else(|| {
                    Self::refuse(DataKey::translations, "has an unknown language")
                })?;
                let id = id_value(id).ok_or_else(|| {
                    Self::refuse(DataKey::translations, "must map languages to IDs")
                })?;
                if member_language == language && id != own {
                    return Err(Self::refuse(
                        DataKey::translations,
                        "names another record in this record's language",
                    ));
                }
                if member_language != language {
                    members.push((member_language, id));
                }
            }
        }
        Ok(members)
    }

    /// The IDs of embedded records: an object with `id`, or a list of them; `[]` is none.
    fn embedded_ids(&self, key: DataKey) -> Result<Vec<u64>, String> {
        let item_id = |v: &Value| {
            v.get("id")
                .and_then(id_value)
                .ok_or_else(|| Self::refuse(key, "must hold objects with an `id`"))
        };
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items.iter().map(item_id).collect(),
            Some(v @ Value::Object(_)) => Ok(vec![item_id(v)?]),
            Some(_) => Err(Self::refuse(key, "must be an object or a list")),
        }
    }
}

/// The date WordPress shows as the UTC date of a record never published.
const WORDPRESS_ZERO_DATE: &str = "0000-00-00 00:00:00";

fn id_value(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
    .filter(|id| *id > 0)
}

/// The translation group: the smallest member ID. Exported groups are named by their founding
/// (first, so smallest) record; if that record is gone the smallest survivor names it, which
/// all members of the dump agree on.
fn group_of(members: &[(Language, u64)]) -> u64 {
    members.iter().map(|(_, id)| *id).min().unwrap_or(0)
}

/// A group may hold one record per language.
fn check_group(
    tx: &WriteTx,
    kind: Kind,
    group: u64,
    language: Language,
    id: u64,
) -> Result<(), String> {
    let members = tx.group_members(kind, group).map_err(|e| e.to_string())?;
    match members.iter().find(|(l, _)| *l == language) {
        Some((_, other)) if *other != id => Err(format!(
            "translation group {group} already has a {language} member ({other})"
        )),
        _ => Ok(()),
    }
}

/// The slug must be free, or the record's own (an update).
fn check_slug(
    tx: &WriteTx,
    kind: Kind,
    language: Language,
    slug: &str,
    id: u64,
) -> RecordResult<()> {
    match tx.slug_owner(kind, language, slug)? {
        Some(owner) if owner != id => Err(format!("`slug` {slug:?} is taken by {owner}").into()),
        _ => Ok(()),
    }
}

/// The stored post this record replaces: none when the ID is free; refused when the ID is in
/// use and replacing is not allowed or the ID belongs to another kind (or an image).
fn replaced_post(
    tx: &WriteTx,
    kind: Kind,
    id: u64,
    rules: &LoadRules,
) -> RecordResult<Option<PostMeta>> {
    match tx.post_kind_of(id)? {
        None => Ok(None),
        Some(PostIdKind::Record(stored)) if stored == kind && rules.replace => {
            Ok(tx.get_record::<PostMeta>(kind, id)?)
        }
        Some(_) => Err(format!("ID {id} is already in use").into()),
    }
}

/// Slug, group membership and sequence of a record, after every check has passed; a record
/// it replaces gives up its old slug and group membership first.
fn register(
    tx: &mut WriteTx,
    kind: Kind,
    record: Registration<'_>,
    replaced: Option<Registration<'_>>,
) -> RecordResult<()> {
    if let Some(old) = replaced {
        if (old.language, old.slug) != (record.language, record.slug) {
            tx.remove_slug(kind, old.language, old.slug)?;
        }
        if (old.group, old.language) != (record.group, record.language) {
            tx.remove_group_member(kind, old.group, old.language)?;
        }
    }
    tx.set_slug(kind, record.language, record.slug, record.id)?;
    tx.set_group_member(kind, record.group, record.language, record.id)?;
    tx.raise_sequence(kind.sequence(), record.id)?;
    Ok(())
}

/// What [`register`] records of a record.
#[derive(Clone, Copy)]
struct Registration<'a> {
    id: u64,
    language: Language,
    slug: &'a str,
    group: u64,
}

impl<'a> Registration<'a> {
    fn of_post(meta: &'a PostMeta) -> Registration<'a> {
        Registration {
            id: meta.id,
            language: meta.language,
            slug: &meta.slug,
            group: meta.group,
        }
    }

    fn of_term(term: &'a Term) -> Registration<'a> {
        Registration {
            id: term.id,
            language: term.language,
            slug: &term.slug,
            group: term.group,
        }
    }
}

fn load_term(tx: &mut WriteTx, kind: Kind, data: &Fields) -> RecordResult<Loaded> {
    let id = data.id(DataKey::id)?;
    let language = data.language()?;
    let slug = data.slug()?;
    let name = crate::service::terms::clean_name(&data.text(DataKey::name)?);
    if name.is_empty() || name.chars().count() > crate::service::terms::MAX_NAME_CHARS {
        return Err("`name` must have 1 to 200 characters".into());
    }
    let parent = data.id_or_zero(DataKey::parent)?;
    if parent != 0 {
        if kind == Kind::Tag {
            return Err("`parent` must be 0 for a tag".into());
        }
        if tx.get_record::<Term>(kind, parent)?.is_none() {
            return Err(format!("`parent` {parent} is not a category").into());
        }
        if ancestors_include(tx, parent, id)? {
            return Err(format!("`parent` {parent} descends from this category").into());
        }
    }
    let replaced = match (
        tx.get_record::<Term>(kind, id)?,
        tx.get_record::<Term>(
            if kind == Kind::Category {
                Kind::Tag
            } else {
                Kind::Category
            },
            id,
        )?,
    ) {
        (None, None) => None,
        (Some(stored), None) if data.rules.replace => Some(stored),
        _ => return Err(format!("ID {id} is already in use").into()),
    };
    check_slug(tx, kind, language, &slug, id)?;
    let members = data.translations(id, language)?;
    let group = group_of(&members);
    check_group(tx, kind, group, language, id)?;
    let term = Term {
        id,
        kind,
        language,
        group,
        name,
        slug,
        description: data.long_text(DataKey::description)?,
        parent,
    };
    if replaced.as_ref() == Some(&term) {
        return Ok(Loaded::Unchanged);
    }
    register(
        tx,
        kind,
        Registration::of_term(&term),
        replaced.as_ref().map(Registration::of_term),
    )?;
    tx.put_record(kind, id, &term)?;
    Ok(if replaced.is_some() {
        Loaded::Updated
    } else {
        Loaded::Added
    })
}

/// Whether `id` is `category` or one of its ancestors (a parent that would close a cycle).
fn ancestors_include(tx: &WriteTx, category: u64, id: u64) -> RecordResult<bool> {
    let mut next = category;
    let mut steps = 0;
    while next != 0 {
        if next == id {
            return Ok(true);
        }
        steps += 1;
        if steps > 10_000 {
            // Damaged data: a cycle among stored categories.
            return Ok(true);
        }
        next = tx
            .get_record::<Term>(Kind::Category, next)?
            .map_or(0, |t| t.parent);
    }
    Ok(false)
}

/// The image of a post: the exported ID is kept when it is free, an image with the same URL
/// is reused, otherwise a new ID is drawn.
enum ImageRef {
    None,
    Existing(u64),
    New(Image),
    Fresh(String),
}

fn image_ref(tx: &WriteTx, data: &Fields) -> RecordResult<ImageRef> {
    let Some(image) = data
        .get(DataKey::image)
        .filter(|v| **v != Value::Bool(false))
    else {
        return Ok(ImageRef::None);
    };
    let url = image
        .get("url")
        .and_then(Value::as_str)
        .filter(|u| url::Url::parse(u).is_ok())
        .ok_or("`image` must be false or an object with a URL")?;
    if let Some(existing) = tx.image_by_url(url)? {
        return Ok(ImageRef::Existing(existing));
    }
    Ok(match image.get("id").and_then(id_value) {
        Some(id) if tx.post_kind_of(id)?.is_none() => ImageRef::New(Image {
            id,
            url: url.to_string(),
        }),
        _ => ImageRef::Fresh(url.to_string()),
    })
}

fn store_image(tx: &mut WriteTx, image: ImageRef) -> RecordResult<Option<u64>> {
    Ok(match image {
        ImageRef::None => None,
        ImageRef::Existing(id) => Some(id),
        ImageRef::New(image) => {
            tx.put_image(&image)?;
            Some(image.id)
        }
        ImageRef::Fresh(url) => Some(tx.image_for_url(&url)?),
    })
}

/// What events, venues and organizers share, validated; `name_key` is `title`, `venue` or
/// `organizer`.
struct PostLine {
    /// An occurrence's record: its slug is its page's path and it has no translation group
    /// of its own, as its series wrote it.
    occurrence: bool,
    meta: PostMeta,
    image: ImageRef,
    /// The stored record this one replaces.
    replaced: Option<PostMeta>,
}

/// The shared part of a post record, or `None` when it replaces a stored record that has the
/// same `modified_utc` (unchanged at the source).
fn post_line(
    tx: &WriteTx,
    kind: Kind,
    data: &Fields,
    name_key: DataKey,
    recurring: &LineRecurrence,
) -> RecordResult<Option<PostLine>> {
    let id = data.id(DataKey::id)?;
    let modified_utc = data.utc_date(DataKey::modified_utc, DataKey::modified)?;
    let occurrence = matches!(recurring, LineRecurrence::Occurrence);
    // An occurrence's record was written by its series' line (checked by the caller).
    let replaced = if occurrence {
        tx.get_record::<PostMeta>(kind, id)?
    } else {
        replaced_post(tx, kind, id, data.rules)?
    };
    if replaced
        .as_ref()
        .is_some_and(|stored| stored.modified_utc == modified_utc)
        && !recurring.changed(tx, id)?
    {
        return Ok(None);
    }
    let language = data.language()?;
    let status = data
        .get(DataKey::status)
        .and_then(Value::as_str)
        .and_then(Status::parse)
        .ok_or("`status` must be a post status")?;
    let title = data.text(name_key)?;
    if kind != Kind::Event && title.trim().is_empty() {
        return Err(format!("`{}` is required", name_key.as_str()).into());
    }
    let slug = if data.rules.wordpress && data.text(DataKey::slug)?.is_empty() {
        unpublished_slug(tx, kind, language, &title, id)?
    } else if occurrence {
        data.occurrence_slug()?
    } else {
        data.slug()?
    };
    let date = data.date(DataKey::date)?;
    let date_utc = data.utc_date(DataKey::date_utc, DataKey::date)?;
    check_slug(tx, kind, language, &slug, id)?;
    let members = data.translations(id, language)?;
    let group = group_of(&members);
    check_group(tx, kind, group, language, id)?;
    let trashed = status == Status::Trash;
    Ok(Some(PostLine {
        occurrence,
        meta: PostMeta {
            id,
            language,
            group,
            author: data.id_or_zero(DataKey::author)?,
            status,
            // What a trashed record was before is not in the representation; restoring an
            // imported trashed record makes it a draft, the plugin's fallback.
            status_before_trash: trashed.then_some(Status::Draft),
            slug_before_trash: trashed
                .then(|| slug.strip_suffix("__trashed").map(str::to_string))
                .flatten(),
            slug,
            date,
            date_utc,
            modified_utc,
            title: data.cleaned(&title),
            description: data.long_text(DataKey::description)?,
            excerpt: data.long_text(DataKey::excerpt)?,
            image: None,
        },
        image: image_ref(tx, data)?,
        replaced,
    }))
}

/// The slug of a record WordPress shows without one (never published): its title's, or its
/// ID's, made unique as the API makes a new record's.
fn unpublished_slug(
    tx: &WriteTx,
    kind: Kind,
    language: Language,
    title: &str,
    id: u64,
) -> RecordResult<String> {
    let candidate = slug::or_id(slug::sanitize(title), id);
    Ok(crate::service::posts::unique_slug(
        tx, kind, language, &candidate, id,
    )?)
}

/// Writes a validated post record.
fn put_post<T: serde::Serialize>(
    tx: &mut WriteTx,
    kind: Kind,
    line: PostLine,
    build: impl FnOnce(PostMeta) -> T,
) -> RecordResult<Loaded> {
    let PostLine {
        occurrence,
        mut meta,
        image,
        replaced,
    } = line;
    meta.image = store_image(tx, image)?;
    if !occurrence || meta.group != meta.id || !meta.slug.contains('/') {
        register(
            tx,
            kind,
            Registration::of_post(&meta),
            replaced.as_ref().map(Registration::of_post),
        )?;
    }
    let id = meta.id;
    tx.put_record(kind, id, &build(meta))?;
    Ok(if replaced.is_some() {
        Loaded::Updated
    } else {
        Loaded::Added
    })
}

fn geo(data: &Fields) -> Result<Option<GeoPoint>, String> {
    let coordinate = |key: DataKey, bound: f64| -> Result<Option<f64>, String> {
        data.get(key)
            .map(|v| {
                scalars::number(v)
                    .ok()
                    .filter(|n| n.abs() <= bound)
                    .ok_or_else(|| Fields::refuse(key, format!("must be a number within ±{bound}")))
            })
            .transpose()
    };
    match (
        coordinate(DataKey::geo_lat, 90.0)?,
        coordinate(DataKey::geo_lng, 180.0)?,
    ) {
        (Some(lat), Some(lng)) => Ok(Some(GeoPoint { lat, lng })),
        (None, None) => Ok(None),
        _ => Err("`geo_lat` and `geo_lng` go together".into()),
    }
}

fn load_venue(tx: &mut WriteTx, data: &Fields) -> RecordResult<Loaded> {
    let Some(line) = post_line(
        tx,
        Kind::Venue,
        data,
        DataKey::venue,
        &LineRecurrence::Single,
    )?
    else {
        return Ok(Loaded::Unchanged);
    };
    // The kind's own fields are validated before anything is written.
    let venue = Venue {
        post: line.meta.clone(),
        address: data.text(DataKey::address)?,
        city: data.text(DataKey::city)?,
        country: data.text(DataKey::country)?,
        province: data.text(DataKey::province)?,
        state: data.text(DataKey::state)?,
        zip: data.text(DataKey::zip)?,
        phone: data.text(DataKey::phone)?,
        stateprovince: data.text(DataKey::stateprovince)?,
        website: data.text(DataKey::website)?,
        show_map: data.flag(DataKey::show_map)?,
        show_map_link: data.flag(DataKey::show_map_link)?,
        geo: geo(data)?,
    };
    put_post(tx, Kind::Venue, line, |post| Venue { post, ..venue })
}

fn load_organizer(tx: &mut WriteTx, data: &Fields) -> RecordResult<Loaded> {
    let Some(line) = post_line(
        tx,
        Kind::Organizer,
        data,
        DataKey::organizer,
        &LineRecurrence::Single,
    )?
    else {
        return Ok(Loaded::Unchanged);
    };
    let phone = data.text(DataKey::phone)?;
    let website = data.text(DataKey::website)?;
    let email = data.text(DataKey::email)?;
    put_post(tx, Kind::Organizer, line, |post| Organizer {
        post,
        phone,
        website,
        email,
    })
}

/// The stored cost from `cost_details` (its `values`, symbol and position are the stored
/// cost itself).
fn cost(data: &Fields) -> Result<Cost, String> {
    let Some(details) = data.get(DataKey::cost_details) else {
        return Ok(Cost::default());
    };
    let text = |key: &str| {
        details
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| format!("`cost_details.{key}` must be a string"))
    };
    let values = details
        .get("values")
        .and_then(Value::as_array)
        .ok_or("`cost_details.values` must be a list")?
        .iter()
        .map(|v| match v {
            Value::String(s) => Ok(s.clone()),
            Value::Number(n) => Ok(n.to_string()),
            _ => Err("`cost_details.values` must hold strings".to_string()),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Cost {
        values,
        currency_symbol: text("currency_symbol")?,
        currency_position: text("currency_position")?,
    })
}

fn references(
    tx: &WriteTx,
    kind: Kind,
    ids: &[u64],
    language: Language,
    known: &mut KnownLanguages,
) -> RecordResult<()> {
    for id in ids {
        let found_language = match known.get(&(kind, *id)) {
            Some(language) => Some(*language),
            None => {
                let stored = stored_language(tx, kind, *id)?;
                if let Some(stored) = stored {
                    known.insert((kind, *id), stored);
                }
                stored
            }
        };
        match found_language {
            None => return Err(format!("{} {id} does not exist", kind.name()).into()),
            Some(l) if l != language => {
                return Err(format!("{} {id} is not in {language}", kind.name()).into())
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// The language of a stored record of `kind`, if there is one.
fn stored_language(tx: &WriteTx, kind: Kind, id: u64) -> RecordResult<Option<Language>> {
    Ok(match kind {
        Kind::Category | Kind::Tag => tx.get_record::<Term>(kind, id)?.map(|t| t.language),
        _ => match tx.post_kind_of(id)? {
            Some(PostIdKind::Record(k)) if k == kind => {
                tx.get_record::<PostMeta>(kind, id)?.map(|m| m.language)
            }
            _ => None,
        },
    })
}

fn load_event(tx: &mut WriteTx, data: &Fields, known: &mut KnownLanguages) -> RecordResult<Loaded> {
    let recurring = LineRecurrence::of(tx, data)?;
    let Some(line) = post_line(tx, Kind::Event, data, DataKey::title, &recurring)? else {
        return Ok(Loaded::Unchanged);
    };
    let language = line.meta.language;
    let zone_name = data.text(DataKey::timezone)?;
    let zone = Zone::parse(if zone_name.is_empty() {
        "UTC"
    } else {
        &zone_name
    })
    .map_err(|e| Fields::refuse(DataKey::timezone, e))?;
    let start_local = data.date(DataKey::start_date)?;
    let end_local = data.date(DataKey::end_date)?;
    if end_local < start_local {
        return Err("`end_date` is before `start_date`".into());
    }
    let categories = data.embedded_ids(DataKey::categories)?;
    let tags = data.embedded_ids(DataKey::tags)?;
    let venue = data.embedded_ids(DataKey::venue)?;
    let organizers = data.embedded_ids(DataKey::organizer)?;
    if venue.len() > 1 {
        return Err("`venue` names one venue".into());
    }
    references(tx, Kind::Category, &categories, language, known)?;
    references(tx, Kind::Tag, &tags, language, known)?;
    references(tx, Kind::Venue, &venue, language, known)?;
    references(tx, Kind::Organizer, &organizers, language, known)?;
    // The representation shows the public URL as `website` when none is stored.
    let website = Some(data.text(DataKey::website)?)
        .filter(|w| Some(w.as_str()) != data.get(DataKey::url).and_then(Value::as_str))
        .unwrap_or_default();
    let password = match data.get(DataKey::password) {
        None => None,
        Some(v) => Some(
            scalars::string_max_chars(v, 255)
                .map_err(|e| Fields::refuse(DataKey::password, e))?
                .to_string(),
        )
        .filter(|p| !p.is_empty()),
    };
    let mut event = Event {
        post: line.meta.clone(),
        start_local,
        end_local,
        start_utc: start_local,
        end_utc: end_local,
        timezone: String::new(),
        timezone_abbr: String::new(),
        all_day: data.flag(DataKey::all_day)?,
        cost: cost(data)?,
        website,
        show_map: data.flag(DataKey::show_map)?,
        show_map_link: data.flag(DataKey::show_map_link)?,
        hide_from_listings: data.flag(DataKey::hide_from_listings)?,
        sticky: data.flag(DataKey::sticky)?,
        featured: data.flag(DataKey::featured)?,
        ticketed: data.flag(DataKey::ticketed)?,
        post_parent: data.id_or_zero(DataKey::post_parent)?,
        categories,
        tags,
        venue: venue.first().copied(),
        organizers,
        password,
    };
    event.place_in(&zone);
    let now = chrono::Utc::now().naive_utc();
    if let LineRecurrence::Series { lines, .. } = &recurring {
        crate::service::series::check_rule(&event, lines, now)
            .map_err(|e| Fields::refuse(DataKey::recurrence, e.reason))?;
    }
    // An exception is new to the store when its occurrence was plain (its record the
    // series' copy).
    let new_exception =
        matches!(recurring, LineRecurrence::Occurrence) && recurring.changed(tx, event.post.id)?;
    let mut loaded = put_post(tx, Kind::Event, line, |post| Event {
        post,
        ..event.clone()
    })?;
    if new_exception {
        loaded = Loaded::Added;
    }
    let event = tx
        .get_record::<Event>(Kind::Event, event.post.id)?
        .expect("just written");
    let written = match recurring {
        LineRecurrence::Single => Ok(()),
        LineRecurrence::Series { lines, occurrences } => {
            crate::service::series::restore(tx, &event, &lines, &occurrences, now)
        }
        LineRecurrence::Occurrence => crate::service::series::settle(tx, &event),
    };
    written.map_err(|e| match e {
        crate::service::ServiceError::Store(e) => RecordError::Store(e),
        // Not reached: the rule was checked above, and the IDs are free or the series' own.
        other => RecordError::Refused(format!("{other:?}")),
    })?;
    Ok(loaded)
}

/// How an event line takes part in recurrence (the export form's `recurrence` and
/// `occurrences` on a series, `series_id` and `recurrence_id` on an exception).
enum LineRecurrence {
    Single,
    Series {
        lines: Vec<String>,
        occurrences: Vec<Occurrence>,
    },
    /// An exception of a series whose line came before: the store holds the occurrence.
    Occurrence,
}

impl LineRecurrence {
    fn of(tx: &WriteTx, data: &Fields) -> RecordResult<LineRecurrence> {
        let id = data.id(DataKey::id)?;
        if data.get(DataKey::series_id).is_some() {
            let series = data.id(DataKey::series_id)?;
            let original_start_utc = data.date(DataKey::recurrence_id)?;
            let stored = tx.occurrence_of(id)?;
            if stored
                != Some(OccurrenceOf {
                    series,
                    original_start_utc,
                })
            {
                return Err(format!(
                    "is no occurrence of the series {series} at `recurrence_id` (the series' line, with \
                     its `occurrences`, comes first)"
                )
                .into());
            }
            return Ok(LineRecurrence::Occurrence);
        }
        let Some(lines) = data.get(DataKey::recurrence) else {
            return Ok(LineRecurrence::Single);
        };
        let lines: Vec<String> = lines
            .as_array()
            .and_then(|l| l.iter().map(|v| v.as_str().map(str::to_string)).collect())
            .ok_or_else(|| Fields::refuse(DataKey::recurrence, "must be a list of strings"))?;
        if lines.is_empty() {
            return Ok(LineRecurrence::Single);
        }
        if tx.occurrence_of(id)?.is_some() {
            return Err(Fields::refuse(DataKey::recurrence, "is set on an occurrence").into());
        }
        let occurrences = data.occurrences(id)?;
        for o in &occurrences {
            let ours = tx.occurrence_of(o.id)?.is_some_and(|of| of.series == id);
            if !ours && tx.post_kind_of(o.id)?.is_some() {
                return Err(Fields::refuse(
                    DataKey::occurrences,
                    format!("names ID {}, which is already in use", o.id),
                )
                .into());
            }
        }
        Ok(LineRecurrence::Series { lines, occurrences })
    }

    /// Whether loading this line changes the store even though its record's `modified_utc`
    /// is the stored one: a series whose rule or occurrences changed (cancelling an
    /// occurrence leaves the series' record as it was), an exception stored as a plain
    /// occurrence.
    fn changed(&self, tx: &WriteTx, id: u64) -> RecordResult<bool> {
        Ok(match self {
            LineRecurrence::Single => false,
            LineRecurrence::Series { lines, occurrences } => tx.series(id)?.is_none_or(|stored| {
                stored.lines != *lines
                    || stored.occurrences.len() != occurrences.len()
                    || stored.occurrences.iter().zip(occurrences).any(|(a, b)| {
                        (a.id, a.original_start_utc) != (b.id, b.original_start_utc)
                            || a.state != b.state
                    })
            }),
            LineRecurrence::Occurrence => {
                let series = tx.occurrence_of(id)?.map(|of| of.series);
                let state = match series {
                    Some(series) => tx
                        .series(series)?
                        .and_then(|s| s.occurrences.into_iter().find(|o| o.id == id))
                        .map(|o| o.state),
                    None => None,
                };
                state != Some(OccurrenceState::Exception)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn data(text: &str) -> Option<LineFields> {
        serde_json::from_str::<Data>(text)
            .ok()
            .and_then(|Data(fields)| fields)
    }

    #[test]
    fn embedded_records_keep_their_ids_and_other_keys_are_skipped() {
        let parsed = data(
            r#"{"id": 5, "venue": {"id": 7, "venue": "Hall", "geo_lat": 1.5},
                "organizer": [{"id": 8, "organizer": "Ann"}, {"id": "9"}],
                "categories": [], "tags": [{"name": "x"}],
                "start_date_details": {"year": "2027"}, "title": "T"}"#,
        )
        .unwrap();
        assert_eq!(parsed.id, json!(5));
        assert_eq!(parsed.venue, json!({"id": 7}));
        assert_eq!(parsed.organizer, json!([{"id": 8}, {"id": "9"}]));
        assert_eq!(parsed.categories, json!([]));
        assert_eq!(parsed.tags, json!([{}]));
        assert_eq!(parsed.title, json!("T"));
        assert_eq!(*parsed.get(DataKey::description), Value::Null);
        // A venue line's own name under the same key stays as it is.
        let venue = data(r#"{"venue": "Hall", "organizer": null}"#).unwrap();
        assert_eq!(venue.venue, json!("Hall"));
        assert_eq!(venue.organizer, Value::Null);
        assert!(data("[1]").is_none());
        assert!(data("\"x\"").is_none());
    }
}
