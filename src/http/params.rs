//! Parameter definitions: one [`ParamSpec`] per parameter drives validation (steps 8–9 of
//! common.md §1.10), the `args` of the namespace index (§2.2) and the parameters and request
//! bodies of `/doc` (§2.4), so the three can never disagree.

use crate::http::error::ApiError;
use crate::model::Language;
use crate::values::form::RawParams;
use crate::values::{scalars, Invalid, SubCode};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// The value syntax of a parameter.
#[derive(Debug, Clone)]
pub enum ParamKind {
    /// Any string (§9.4).
    String,
    /// A string from a fixed set.
    Enum(&'static [&'static str]),
    /// An integer (§9.2) with optional bounds.
    Integer {
        minimum: Option<i64>,
        maximum: Option<i64>,
    },
}

/// Where a parameter is documented (validation reads query and body alike, §1.5).
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

    pub fn path(name: &'static str, description: &'static str, kind: ParamKind) -> ParamSpec {
        ParamSpec {
            name,
            description: Some(description),
            kind,
            required: true,
            default: None,
            location: Location::Path,
        }
    }

    pub fn describe(mut self, description: &'static str) -> ParamSpec {
        self.description = Some(description);
        self
    }

    pub fn default(mut self, value: Value) -> ParamSpec {
        self.default = Some(value);
        self
    }

    /// The parameter every route takes (common.md §7.1).
    pub fn translation_language() -> ParamSpec {
        ParamSpec::query("translation_language", ParamKind::Enum(LANGUAGE_CODES))
            .describe("Language of the content.")
    }

    /// The JSON Schema of one value of this parameter.
    pub fn schema(&self) -> Map<String, Value> {
        let mut s = Map::new();
        match &self.kind {
            ParamKind::String => {
                s.insert("type".into(), json!("string"));
            }
            ParamKind::Enum(values) => {
                s.insert("type".into(), json!("string"));
                s.insert("enum".into(), json!(values));
            }
            ParamKind::Integer { minimum, maximum } => {
                s.insert("type".into(), json!("integer"));
                if let Some(min) = minimum {
                    s.insert("minimum".into(), json!(min));
                }
                if let Some(max) = maximum {
                    s.insert("maximum".into(), json!(max));
                }
            }
        }
        if let Some(default) = &self.default {
            s.insert("default".into(), default.clone());
        }
        s
    }

    /// The `args` entry of the namespace index: the allowed keys in the contract's order,
    /// `required` last (§2.2).
    pub fn index_arg(&self) -> Value {
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

    fn validate(&self, raw: &Value) -> Result<Value, Invalid> {
        match &self.kind {
            ParamKind::String => scalars::string(raw).map(|s| json!(s)),
            ParamKind::Enum(values) => scalars::one_of(raw, values).map(|s| json!(s)),
            ParamKind::Integer { minimum, maximum } => {
                let n = scalars::integer(raw)?;
                if minimum.is_some_and(|min| n < min) || maximum.is_some_and(|max| n > max) {
                    return Err(Invalid::new(
                        SubCode::OutOfBounds,
                        format!("is out of range ({})", bounds_text(*minimum, *maximum)),
                    ));
                }
                Ok(json!(n))
            }
        }
    }
}

fn bounds_text(minimum: Option<i64>, maximum: Option<i64>) -> String {
    match (minimum, maximum) {
        (Some(a), Some(b)) => format!("{a} to {b}"),
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
}

impl Params {
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.values.get(name)
    }

    pub fn str(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Value::as_str)
    }

    /// The explicitly requested language, if `translation_language` was sent.
    pub fn translation_language(&self) -> Option<Language> {
        self.str("translation_language")
            .and_then(Language::from_code)
    }
}

/// Steps 8 and 9 of §1.10: required parameters first (all missing ones, in declaration order),
/// then every present parameter, all invalid ones reported together. Path parameters are
/// matched by the router and are not read from query or body (§1.5 rule 2).
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
    let mut invalid = Vec::new();
    for spec in specs.iter().filter(|s| s.location != Location::Path) {
        let Some(value) = raw.scalar(spec.name) else {
            if let Some(default) = &spec.default {
                params.values.insert(spec.name, default.clone());
            }
            continue;
        };
        match value.and_then(|v| spec.validate(v)) {
            Ok(v) => {
                params.values.insert(spec.name, v);
            }
            Err(why) => invalid.push((spec.name.to_string(), why)),
        }
    }
    if invalid.is_empty() {
        Ok(params)
    } else {
        Err(ApiError::invalid_params(&invalid))
    }
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
        assert_eq!(params.str("namespace"), Some("cal/events/v1"));
        assert_eq!(params.get("page"), Some(&json!(3)));
        assert_eq!(params.translation_language(), Some(Language::Es));
    }

    #[test]
    fn all_invalid_parameters_are_reported_together() {
        let raw = RawParams::from_form(b"page=0&translation_language=PT-BR");
        let err = validate(&specs(), &raw).unwrap_err().body();
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
