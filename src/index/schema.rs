//! The index schema, read from `index_schema/schema.toml` (embedded at build time) and turned
//! into a tantivy schema plus typed handles for the fields the code uses.

use crate::model::Language;
use serde::Deserialize;
use std::fmt::Display;
use tantivy::schema::{
    Field, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions, STRING,
};
use tantivy::{TantivyDocument, Term};

/// The schema file, versioned with the code.
pub(crate) const SCHEMA_FILE: &str = include_str!("../../index_schema/schema.toml");

#[derive(Debug, Deserialize)]
struct SchemaFile {
    version: u32,
    field: Vec<FieldSpec>,
}

#[derive(Debug, Deserialize)]
struct FieldSpec {
    name: String,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    indexed: bool,
    #[serde(default)]
    fast: bool,
    #[serde(default)]
    stored: bool,
    tokenizer: Option<String>,
    #[serde(default = "positions_by_default")]
    positions: bool,
}

fn positions_by_default() -> bool {
    true
}

/// The exact-match properties of a document: each is a term `<prefix>:<value>` of the one
/// `keys` field (see index_schema/schema.toml for why they share a field).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Key {
    Kind,
    /// `<kind>/<language>/<listed|hidden>`: the base clause of every list.
    Scope,
    Language,
    /// The status as stored (a due `future` record is told apart by its date).
    Status,
    Author,
    /// Month of an event's local start, see [`super::docs::month_of_seconds`].
    StartMonth,
    /// Every month an event's local wall clocks cover, from its start's to its end's, or
    /// [`super::docs::LONG_EVENT`] for an event longer than [`super::docs::COVERED_MONTHS`].
    CoveredMonth,
    Category,
    Tag,
    Venue,
    Organizer,
    Featured,
    Sticky,
    HideFromListings,
    Ticketed,
    Protected,
    PostParent,
    HasGeo,
    Id,
}

impl Key {
    fn prefix(self) -> &'static str {
        match self {
            Key::Kind => "kind",
            Key::Scope => "scope",
            Key::Language => "language",
            Key::Status => "status",
            Key::Author => "author",
            Key::StartMonth => "month",
            Key::CoveredMonth => "covers",
            Key::Category => "category",
            Key::Tag => "tag",
            Key::Venue => "venue",
            Key::Organizer => "organizer",
            Key::Featured => "featured",
            Key::Sticky => "sticky",
            Key::HideFromListings => "hidden",
            Key::Ticketed => "ticketed",
            Key::Protected => "protected",
            Key::PostParent => "parent",
            Key::HasGeo => "geo",
            Key::Id => "id",
        }
    }
}

fn key_text(key: Key, value: impl Display) -> String {
    format!("{}:{value}", key.prefix())
}

/// Handles of every field, by role.
#[derive(Debug, Clone)]
pub struct Fields {
    /// Every [`Key`] term.
    keys: Field,
    pub id: Field,
    pub written: Field,
    pub date_utc: Field,
    pub start_local: Field,
    pub end_local: Field,
    pub start_utc: Field,
    pub order_start: Field,
    pub order_date: Field,
    pub order_modified: Field,
    pub venue: Field,
    pub organizers: Field,
    pub geo_lat: Field,
    pub geo_lng: Field,
    /// Stemmed title and body, indexed by [`Language::ALL`] order.
    title_stem: [Field; 3],
    body_stem: [Field; 3],
    pub title_fold: Field,
    pub body_fold: Field,
}

fn language_index(language: Language) -> usize {
    Language::ALL
        .iter()
        .position(|l| *l == language)
        .expect("every language is in ALL")
}

impl Fields {
    pub(crate) fn title_stem(&self, language: Language) -> Field {
        self.title_stem[language_index(language)]
    }

    pub(crate) fn body_stem(&self, language: Language) -> Field {
        self.body_stem[language_index(language)]
    }

    /// The term saying that a document's `key` is `value`.
    pub(crate) fn key(&self, key: Key, value: impl Display) -> Term {
        Term::from_field_text(self.keys, &key_text(key, value))
    }

    /// The field and text prefix of `key`'s terms: a segment's values of `key` are the terms
    /// of its dictionary that start with the prefix.
    pub(crate) fn key_terms(&self, key: Key) -> (Field, String) {
        (self.keys, key_text(key, ""))
    }

    /// Records in `doc` that its `key` is `value`.
    pub(crate) fn add_key(&self, doc: &mut TantivyDocument, key: Key, value: impl Display) {
        doc.add_text(self.keys, key_text(key, value));
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    #[error("index schema file: {0}")]
    Parse(#[from] toml::de::Error),
    #[error("index schema file: field {0}: {1}")]
    Field(String, &'static str),
}

/// The parsed schema: its version, the tantivy schema and the field handles.
pub(crate) struct IndexSchema {
    pub version: u32,
    pub schema: Schema,
    pub fields: Fields,
}

impl IndexSchema {
    pub(crate) fn load() -> Result<IndexSchema, SchemaError> {
        Self::parse(SCHEMA_FILE)
    }

    fn parse(text: &str) -> Result<IndexSchema, SchemaError> {
        let file: SchemaFile = toml::from_str(text)?;
        let mut builder = Schema::builder();
        for spec in &file.field {
            let bad = |why| SchemaError::Field(spec.name.clone(), why);
            match spec.kind.as_str() {
                "text" => {
                    let tokenizer = spec
                        .tokenizer
                        .as_deref()
                        .ok_or_else(|| bad("needs a tokenizer"))?;
                    let indexing = TextFieldIndexing::default()
                        .set_tokenizer(tokenizer)
                        .set_index_option(if spec.positions {
                            IndexRecordOption::WithFreqsAndPositions
                        } else {
                            IndexRecordOption::WithFreqs
                        });
                    let mut options = TextOptions::default().set_indexing_options(indexing);
                    if spec.stored {
                        options = options.set_stored();
                    }
                    builder.add_text_field(&spec.name, options);
                }
                "string" => {
                    let mut options = STRING;
                    if spec.stored {
                        options = options | tantivy::schema::STORED;
                    }
                    builder.add_text_field(&spec.name, options);
                }
                "u64" | "i64" | "f64" | "bool" => {
                    let mut options = NumericOptions::default();
                    if spec.indexed {
                        options = options.set_indexed();
                    }
                    if spec.fast {
                        options = options.set_fast();
                    }
                    if spec.stored {
                        options = options.set_stored();
                    }
                    match spec.kind.as_str() {
                        "u64" => builder.add_u64_field(&spec.name, options),
                        "i64" => builder.add_i64_field(&spec.name, options),
                        "f64" => builder.add_f64_field(&spec.name, options),
                        _ => builder.add_bool_field(&spec.name, options),
                    };
                }
                _ => return Err(bad("unknown type")),
            }
        }
        let schema = builder.build();
        let get = |name: &str| {
            schema
                .get_field(name)
                .map_err(|_| SchemaError::Field(name.to_string(), "missing from the schema file"))
        };
        let per_language = |prefix: &str| -> Result<[Field; 3], SchemaError> {
            Ok([
                get(&format!("{prefix}_en"))?,
                get(&format!("{prefix}_pt-br"))?,
                get(&format!("{prefix}_es"))?,
            ])
        };
        let fields = Fields {
            keys: get("keys")?,
            id: get("id")?,
            written: get("written")?,
            date_utc: get("date_utc")?,
            start_local: get("start_local")?,
            end_local: get("end_local")?,
            start_utc: get("start_utc")?,
            order_start: get("order_start")?,
            order_date: get("order_date")?,
            order_modified: get("order_modified")?,
            venue: get("venue")?,
            organizers: get("organizers")?,
            geo_lat: get("geo_lat")?,
            geo_lng: get("geo_lng")?,
            title_stem: per_language("title_stem")?,
            body_stem: per_language("body_stem")?,
            title_fold: get("title_fold")?,
            body_fold: get("body_fold")?,
        };
        Ok(IndexSchema {
            version: file.version,
            schema,
            fields,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_file_defines_every_field_the_code_uses() {
        let parsed = IndexSchema::load().unwrap();
        assert!(parsed.version >= 1);
        assert_eq!(
            parsed
                .schema
                .get_field_name(parsed.fields.title_stem(Language::PtBr)),
            "title_stem_pt-br"
        );
    }

    #[test]
    fn bad_files_are_refused() {
        assert!(
            IndexSchema::parse("version = 1\n[[field]]\nname = \"x\"\ntype = \"blob\"").is_err()
        );
        assert!(IndexSchema::parse("version = 1\nfield = []").is_err());
    }
}
