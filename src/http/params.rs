//! Parameter definitions: one [`ParamSpec`] per parameter drives validation (the required and
//! validity checks of the request pipeline, docs/architecture.md), the `args` of the namespace
//! index and the parameters and request bodies of `/doc`, so the three can never disagree.

use crate::http::error::ApiError;
use crate::model::Language;
use crate::values::form::RawParams;
use crate::values::{scalars, Invalid, SubCode};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// The value syntax of a parameter. Validation normalises the value into a typed JSON value
/// (see each variant); handlers read it back through [`Params`].
#[derive(Debug, Clone, Copy)]
pub enum ParamKind {
    /// Any string → string.
    String,
    /// A string of at least one character → string.
    NonEmptyString,
    /// A `description`: a string bounded only by the body limit, optionally
    /// required to be non-empty → string.
    Description { non_empty: bool },
    /// One of a fixed set, exactly → string.
    Enum(&'static [&'static str]),
    /// One of a fixed set, any letter case → the lower-cased string.
    EnumCaseless(&'static [&'static str]),
    /// An integer with optional bounds → number.
    Integer {
        minimum: Option<i64>,
        maximum: Option<i64>,
    },
    /// WordPress boolean → bool.
    Boolean,
    /// Truthy-string write flag (venue `show_map`, `show_map_link`) → bool.
    Flag,
    /// Filter flag (`has_events`, `only_with_upcoming`): boolean, truthy or falsy string → bool;
    /// the empty string means "not given" (no entry).
    FilterFlag,
    /// A URL, or `""` to clear → string.
    Url,
    /// A date-time of the one grammar → the value as sent (re-read in its zone later).
    DateTime,
    /// A number within bounds, or `""` to clear → number or `""`.
    Coordinate { limit: f64 },
    /// A finite number within bounds (`exclusive_minimum` when the lower bound is excluded;
    /// no upper bound when `maximum` is `None`) → number.
    Number {
        minimum: f64,
        maximum: Option<f64>,
        exclusive_minimum: bool,
    },
    /// A list of positive integers → array of numbers.
    IdList,
    /// A list of IDs or names/slugs (event `categories`, `tags`) → array of numbers and strings;
    /// `allow_empty` lets the empty list through (write fields clear with it).
    RefList { allow_empty: bool },
    /// A value checked by its handler (event `cost`, `venue`, `organizer`); the string is the
    /// documented JSON Schema.
    Raw(&'static str),
    /// A post-kind `status` filter: statuses or `any` → array of strings.
    StatusFilter,
    /// An `image` write value → `false` (remove), an ID, or a URL string.
    Image,
}

/// Where a parameter is documented (validation reads query and body alike).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    Path,
    Query,
}

#[derive(Debug, Clone)]
pub struct ParamSpec {
    pub name: &'static str,
    pub description: Option<&'static str>,
    pub kind: ParamKind,
    pub required: bool,
    pub default: Option<Value>,
    pub location: Location,
}

impl ParamSpec {
    pub fn query(name: &'static str, kind: ParamKind) -> ParamSpec {
        ParamSpec {
            name,
            description: None,
            kind,
            required: false,
            default: None,
            location: Location::Query,
        }
    }

    pub(crate) fn path(
        name: &'static str,
        description: &'static str,
        kind: ParamKind,
    ) -> ParamSpec {
        ParamSpec {
            name,
            description: Some(description),
            kind,
            required: true,
            default: None,
            location: Location::Path,
        }
    }

    pub(crate) fn describe(mut self, description: &'static str) -> ParamSpec {
        self.description = Some(description);
        self
    }

    pub(crate) fn default(mut self, value: Value) -> ParamSpec {
        self.default = Some(value);
        self
    }

    /// The parameter every route takes.
    pub(crate) fn translation_language() -> ParamSpec {
        ParamSpec::query("translation_language", ParamKind::Enum(LANGUAGE_CODES))
            .describe("Language of the content.")
    }

    /// The JSON Schema of one value of this parameter.
    pub(crate) fn schema(&self) -> Map<String, Value> {
        let mut s = match self.kind {
            ParamKind::String => json!({"type": "string"}),
            ParamKind::NonEmptyString => json!({"type": "string", "minLength": 1}),
            ParamKind::Description { non_empty: true } => json!({"type": "string", "minLength": 1}),
            ParamKind::Description { non_empty: false } => json!({"type": "string"}),
            ParamKind::Enum(values) => json!({"type": "string", "enum": values}),
            ParamKind::EnumCaseless(values) => json!({"type": "string", "enum": values}),
            ParamKind::Integer { minimum, maximum } => {
                let mut s = json!({"type": "integer"});
                if let Some(min) = minimum {
                    s["minimum"] = json!(min);
                }
                if let Some(max) = maximum {
                    s["maximum"] = json!(max);
                }
                s
            }
            ParamKind::Boolean => json!({"type": "boolean"}),
            ParamKind::Flag | ParamKind::FilterFlag => json!({"type": ["boolean", "string"]}),
            // `examples` (annotations only, never in the namespace index) for the values whose
            // grammar no schema keyword expresses, so that generated requests (schemathesis in
            // CI, client generators) can also send valid ones.
            ParamKind::Url => {
                json!({"type": "string", "maxLength": 2048, "examples": ["https://example.org/page", ""]})
            }
            ParamKind::DateTime => json!({
                "type": ["string", "integer"],
                "examples": ["2030-05-01 19:00:00", "2030-05-01T19:00:00+02:00", "05/01/2030", "tomorrow 9am", "+1 week", 1893456000],
            }),
            ParamKind::Coordinate { limit } => {
                json!({"type": ["number", "string"], "minimum": -limit, "maximum": limit, "examples": [38.7223, ""]})
            }
            ParamKind::IdList => {
                json!({"type": "array", "items": {"type": "integer", "minimum": 1}, "maxItems": 1000})
            }
            ParamKind::StatusFilter => {
                json!({"type": "array", "items": {"type": "string", "enum": ["publish", "future", "draft", "pending", "private", "trash", "any"]}})
            }
            ParamKind::Image => {
                json!({"type": ["string", "integer", "boolean"], "examples": ["https://example.org/poster.jpg", false]})
            }
            ParamKind::Number {
                minimum,
                maximum,
                exclusive_minimum,
            } => {
                let mut schema = if exclusive_minimum {
                    json!({"type": "number", "exclusiveMinimum": minimum})
                } else {
                    json!({"type": "number", "minimum": minimum})
                };
                if let Some(maximum) = maximum {
                    schema["maximum"] = json!(maximum);
                }
                schema
            }
            ParamKind::RefList { .. } => {
                json!({"type": "array", "items": {"type": ["integer", "string"]}, "maxItems": 1000})
            }
            ParamKind::Raw(schema) => {
                serde_json::from_str(schema).expect("documented schemas are JSON")
            }
        };
        if let Some(default) = &self.default {
            s["default"] = default.clone();
        }
        match s {
            Value::Object(map) => map,
            _ => unreachable!("schemas are objects"),
        }
    }

    /// The `args` entry of the namespace index: the allowed keys in a fixed order, `required`
    /// last.
    pub(crate) fn index_arg(&self) -> Value {
        const ORDER: [&str; 15] = [
            "type",
            "format",
            "default",
            "enum",
            "items",
            "properties",
            "minimum",
            "maximum",
            "minLength",
            "maxLength",
            "pattern",
            "minItems",
            "maxItems",
            "anyOf",
            "oneOf",
        ];
        let schema = self.schema();
        let mut arg = Map::new();
        if let Some(d) = self.description {
            arg.insert("description".into(), json!(d));
        }
        for key in ORDER {
            if let Some(v) = schema.get(key) {
                arg.insert(key.into(), v.clone());
            }
        }
        arg.insert("required".into(), json!(self.required));
        Value::Object(arg)
    }

    /// Syntax validation of one present value; `Ok(None)` means "treat as not given".
    fn validate(&self, raw: &RawParams) -> Result<Option<Value>, Invalid> {
        let list_kind = matches!(
            self.kind,
            ParamKind::IdList | ParamKind::StatusFilter | ParamKind::RefList { .. }
        );
        if list_kind {
            let items = match raw.list(self.name) {
                Some(items) => items?,
                None => return Ok(None),
            };
            return self.validate_list(items).map(Some);
        }
        let value = match raw.scalar(self.name) {
            Some(v) => v?,
            None => return Ok(None),
        };
        let normalised = match self.kind {
            ParamKind::String => json!(scalars::string(value)?),
            ParamKind::NonEmptyString => json!(scalars::non_empty_string(value)?),
            ParamKind::Description { non_empty } => match value {
                Value::String(text) if text.contains('\0') => {
                    return Err(Invalid::new(
                        SubCode::InvalidCharacters,
                        "must not contain NUL characters.",
                    ))
                }
                Value::String(text) if non_empty && text.is_empty() => {
                    return Err(Invalid::new(SubCode::Empty, "must not be empty."))
                }
                Value::String(text) => json!(text),
                _ => return Err(Invalid::new(SubCode::InvalidType, "must be a string.")),
            },
            ParamKind::Enum(values) => {
                // Characters first: NUL is rest_invalid_characters, not an unknown value.
                scalars::string(value)?;
                json!(scalars::one_of(value, values)?)
            }
            ParamKind::EnumCaseless(values) => {
                let s = scalars::string(value)?.to_ascii_lowercase();
                if !values.contains(&s.as_str()) {
                    return Err(Invalid::new(
                        SubCode::NotInEnum,
                        format!("must be one of: {}.", values.join(", ")),
                    ));
                }
                json!(s)
            }
            ParamKind::Integer { minimum, maximum } => {
                let n = scalars::integer(value)?;
                if minimum.is_some_and(|min| n < min) || maximum.is_some_and(|max| n > max) {
                    return Err(Invalid::new(
                        SubCode::OutOfBounds,
                        format!("must be an integer {}.", bounds_text(minimum, maximum)),
                    ));
                }
                json!(n)
            }
            ParamKind::Boolean => json!(scalars::boolean(value)?),
            ParamKind::Flag => json!(scalars::truthy(value)?),
            ParamKind::FilterFlag => match filter_flag(value)? {
                Some(b) => json!(b),
                None => return Ok(None),
            },
            ParamKind::Url => match value {
                Value::String(s) if s.trim().is_empty() => json!(""),
                _ => json!(scalars::url(value)?),
            },
            ParamKind::DateTime => {
                let zone = crate::values::timezone::Zone::Utc;
                crate::values::datetime::parse(value, &zone, chrono::Utc::now())?;
                value.clone()
            }
            ParamKind::Coordinate { limit } => match value {
                Value::String(s) if s.is_empty() => json!(""),
                _ => {
                    let n = scalars::number(value)?;
                    if !(-limit..=limit).contains(&n) {
                        return Err(Invalid::new(
                            SubCode::OutOfBounds,
                            format!("must be a number between -{limit} and {limit}."),
                        ));
                    }
                    json!(n)
                }
            },
            ParamKind::Image => image_value(value)?,
            ParamKind::Number {
                minimum,
                maximum,
                exclusive_minimum,
            } => {
                let n = scalars::number(value)?;
                let low_ok = if exclusive_minimum {
                    n > minimum
                } else {
                    n >= minimum
                };
                let high_ok = maximum.is_none_or(|maximum| n <= maximum);
                if !low_ok || !high_ok {
                    let message = match maximum {
                        Some(maximum) => {
                            format!("must be a number between {minimum} and {maximum}.")
                        }
                        None if exclusive_minimum => format!("must be a number above {minimum}."),
                        None => format!("must be a number of at least {minimum}."),
                    };
                    return Err(Invalid::new(SubCode::OutOfBounds, message));
                }
                json!(n)
            }
            ParamKind::Raw(_) => value.clone(),
            ParamKind::IdList | ParamKind::StatusFilter | ParamKind::RefList { .. } => {
                unreachable!("lists handled above")
            }
        };
        Ok(Some(normalised))
    }

    fn validate_list(&self, items: Vec<Value>) -> Result<Value, Invalid> {
        let allow_empty = matches!(self.kind, ParamKind::RefList { allow_empty: true });
        // Write fields skip blank items.
        let items: Vec<Value> = if allow_empty {
            items
                .into_iter()
                .filter(|v| !v.as_str().is_some_and(|s| s.trim().is_empty()))
                .collect()
        } else {
            items
        };
        if items.is_empty() && !allow_empty {
            return Err(Invalid::new(SubCode::Empty, "must not be empty."));
        }
        match self.kind {
            ParamKind::RefList { .. } => Ok(json!(scalars::items(items, |v| match v {
                Value::Number(_) => scalars::positive_integer(v).map(|n| json!(n)),
                // Names are strings like any other: no NUL, at most 64 KiB.
                Value::String(s) if !s.trim().is_empty() => {
                    scalars::string(v)?;
                    Ok(json!(s.trim()))
                }
                _ => Err(Invalid::new(
                    SubCode::InvalidType,
                    "must be a list of IDs or names.",
                )),
            })?)),
            ParamKind::IdList => Ok(json!(scalars::items(items, scalars::positive_integer)?)),
            _ => {
                let statuses = scalars::items(items, |v| {
                    let s = scalars::string(v)?;
                    if s == "any" || crate::model::Status::parse(s).is_some() {
                        Ok(s.to_string())
                    } else {
                        Err(Invalid::new(
                            SubCode::NotInEnum,
                            "must be a list of publish, future, draft, pending, private, trash, or any.",
                        ))
                    }
                })?;
                Ok(json!(statuses))
            }
        }
    }
}

/// The venue and organizer list filter flags (`has_events`, `only_with_upcoming`).
fn filter_flag(value: &Value) -> Result<Option<bool>, Invalid> {
    const TRUE: [&str; 7] = ["1", "true", "yes", "y", "on", "enable", "enabled"];
    const FALSE: [&str; 7] = ["0", "false", "no", "n", "off", "disable", "disabled"];
    match value {
        Value::Bool(b) => Ok(Some(*b)),
        Value::String(s) if s.is_empty() => Ok(None),
        Value::String(s) => {
            let lower = s.to_ascii_lowercase();
            if TRUE.contains(&lower.as_str()) {
                Ok(Some(true))
            } else if FALSE.contains(&lower.as_str()) {
                Ok(Some(false))
            } else {
                Err(Invalid::new(SubCode::InvalidType, "must be true or false."))
            }
        }
        _ => Err(Invalid::new(SubCode::InvalidType, "must be true or false.")),
    }
}

/// `""`, `0`, `"0"`, `false` remove; a positive integer or digit string is an image ID;
/// otherwise a URL.
fn image_value(value: &Value) -> Result<Value, Invalid> {
    let refused = || {
        Invalid::new(
            SubCode::InvalidFormat,
            "must be an image ID, an http(s) URL, or empty.",
        )
    };
    match value {
        Value::Bool(false) => Ok(json!(false)),
        Value::Number(_) => match scalars::integer(value) {
            Ok(0) => Ok(json!(false)),
            Ok(n) if n > 0 => Ok(json!(n)),
            _ => Err(refused()),
        },
        Value::String(s) if s.is_empty() || s == "0" => Ok(json!(false)),
        Value::String(s) if s.bytes().all(|b| b.is_ascii_digit()) => match s.parse::<i64>() {
            Ok(n) => Ok(json!(n)),
            // Digits are an image ID; beyond 64 bits it names no image record.
            Err(_) => Err(Invalid::new(
                SubCode::InvalidReference,
                "does not name an image record.",
            )),
        },
        Value::String(_) => scalars::url(value)
            .map(|u| json!(u))
            .map_err(|e| match e.code {
                SubCode::TooLong => e,
                _ => refused(),
            }),
        _ => Err(refused()),
    }
}

fn bounds_text(minimum: Option<i64>, maximum: Option<i64>) -> String {
    match (minimum, maximum) {
        (Some(a), Some(b)) => format!("from {a} to {b}"),
        (Some(a), None) => format!("at least {a}"),
        (None, Some(b)) => format!("at most {b}"),
        (None, None) => String::new(),
    }
}

const LANGUAGE_CODES: &[&str] = &["en", "pt-br", "es"];

/// Validated parameter values, by name (absent optional parameters have no entry).
#[derive(Debug, Default, Clone)]
pub struct Params {
    values: HashMap<&'static str, Value>,
    /// Names the request actually sent (defaults are not).
    sent: std::collections::HashSet<&'static str>,
    /// Invalid parameters found so far (syntax here, references in the handlers).
    pub invalid: Vec<(String, Invalid)>,
}

impl Params {
    /// Ends validation: every invalid parameter found is reported together.
    pub(crate) fn check(&self) -> Result<(), ApiError> {
        if self.invalid.is_empty() {
            Ok(())
        } else {
            Err(ApiError::invalid_params(&self.invalid))
        }
    }

    /// Records an invalid parameter found by a reference check.
    pub(crate) fn refuse(&mut self, name: &str, why: Invalid) {
        self.invalid.push((name.to_string(), why));
    }

    /// Present, sent or by default.
    pub(crate) fn has(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    /// Sent by the request (not a default).
    pub(crate) fn sent(&self, name: &str) -> bool {
        self.sent.contains(name)
    }

    pub fn i64(&self, name: &str) -> Option<i64> {
        self.get(name).and_then(Value::as_i64)
    }

    pub(crate) fn bool(&self, name: &str) -> Option<bool> {
        self.get(name).and_then(Value::as_bool)
    }

    pub fn ids(&self, name: &str) -> Option<Vec<u64>> {
        self.get(name)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_u64).collect())
    }

    pub(crate) fn strings(&self, name: &str) -> Option<Vec<String>> {
        self.get(name).and_then(Value::as_array).map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Value> {
        self.values.get(name)
    }

    pub(crate) fn str(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Value::as_str)
    }

    /// The parameters sent, by name, each value in its JSON form: the same request, however
    /// it was spelled or ordered, gives the same list.
    pub(crate) fn sent_values(&self) -> Vec<(&'static str, String)> {
        let mut sent: Vec<(&'static str, String)> = self
            .values
            .iter()
            .filter(|(name, _)| self.sent.contains(*name))
            .map(|(name, value)| (*name, value.to_string()))
            .collect();
        sent.sort_unstable();
        sent
    }

    /// The explicitly requested language, if `translation_language` was sent.
    pub(crate) fn translation_language(&self) -> Option<Language> {
        self.str("translation_language")
            .and_then(Language::from_code)
    }
}

/// The syntax checks of every parameter (the validation step of the request pipeline,
/// docs/architecture.md): required parameters first (all missing ones, in declaration order, as
/// an immediate error), then every present parameter. Invalid values are collected in
/// [`Params::invalid`] rather than returned at once, so that the handler can add its reference
/// checks (IDs and names that must name records) and report everything together.
/// Path parameters are matched by the router and never read from query or body.
pub fn validate(specs: &[ParamSpec], raw: &RawParams) -> Result<Params, ApiError> {
    let missing: Vec<&str> = specs
        .iter()
        .filter(|s| s.required && s.location != Location::Path && !raw.contains(s.name))
        .map(|s| s.name)
        .collect();
    if !missing.is_empty() {
        return Err(ApiError::missing_params(&missing));
    }
    let mut params = Params::default();
    for spec in specs.iter().filter(|s| s.location != Location::Path) {
        match spec.validate(raw) {
            Ok(Some(v)) => {
                params.values.insert(spec.name, v);
                params.sent.insert(spec.name);
            }
            Ok(None) => {
                if let Some(default) = &spec.default {
                    params.values.insert(spec.name, default.clone());
                }
            }
            Err(why) => params.invalid.push((spec.name.to_string(), why)),
        }
    }
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs() -> Vec<ParamSpec> {
        vec![
            ParamSpec::query("namespace", ParamKind::String).default(json!("cal/events/v1")),
            ParamSpec::query(
                "page",
                ParamKind::Integer {
                    minimum: Some(1),
                    maximum: None,
                },
            ),
            ParamSpec::translation_language(),
        ]
    }

    #[test]
    fn defaults_apply_and_values_are_typed() {
        let raw = RawParams::from_form(b"page=3&translation_language=es&unknown=1");
        let params = validate(&specs(), &raw).unwrap();
        params.check().unwrap();
        assert_eq!(params.str("namespace"), Some("cal/events/v1"));
        assert_eq!(params.get("page"), Some(&json!(3)));
        assert_eq!(params.translation_language(), Some(Language::Es));
    }

    #[test]
    fn all_invalid_parameters_are_reported_together() {
        let raw = RawParams::from_form(b"page=0&translation_language=PT-BR");
        let err = validate(&specs(), &raw)
            .unwrap()
            .check()
            .unwrap_err()
            .body();
        assert_eq!(err["code"], "rest_invalid_param");
        assert_eq!(err["data"]["details"]["page"]["code"], "rest_out_of_bounds");
        assert_eq!(
            err["data"]["details"]["translation_language"]["code"],
            "rest_not_in_enum"
        );
    }

    #[test]
    fn index_args_keep_the_contract_key_order() {
        let arg = ParamSpec::translation_language().index_arg();
        let keys: Vec<&String> = arg.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["description", "type", "enum", "required"]);
    }
}
