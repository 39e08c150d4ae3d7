//! A small JSON Schema (2020-12 subset) validator and an OpenAPI 3.1 structural checker, used to
//! check `/doc` without extra dev-dependencies. Not a full validator: `pattern`,
//! `patternProperties` and `format` are not evaluated.
#![allow(dead_code)]

use serde_json::Value;
use std::collections::HashSet;

/// Resolves an internal reference `#/a/b` against `root`.
pub fn pointer<'a>(root: &'a Value, r: &str) -> Option<&'a Value> {
    let frag = r.strip_prefix('#')?;
    let decoded = percent_decode(frag);
    if decoded.is_empty() {
        return Some(root);
    }
    root.pointer(&decoded)
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(x) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(x);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Follows `$ref` chains of an OpenAPI object (response, parameter, header, ...).
pub fn resolve<'a>(root: &'a Value, v: &'a Value) -> &'a Value {
    let mut cur = v;
    for _ in 0..32 {
        match cur.get("$ref").and_then(|r| r.as_str()) {
            Some(r) => cur = pointer(root, r).unwrap_or_else(|| panic!("unresolvable $ref {r}")),
            None => return cur,
        }
    }
    panic!("$ref chain too long")
}

fn type_matches(t: &str, inst: &Value) -> bool {
    match t {
        "null" => inst.is_null(),
        "boolean" => inst.is_boolean(),
        "string" => inst.is_string(),
        "array" => inst.is_array(),
        "object" => inst.is_object(),
        "number" => inst.is_number(),
        "integer" => {
            inst.is_i64()
                || inst.is_u64()
                || inst.as_f64().map(|f| f.fract() == 0.0).unwrap_or(false)
        }
        _ => false,
    }
}

/// Validates `inst` against `schema` (resolving `$ref` in `root`); appends errors.
pub fn validate(root: &Value, schema: &Value, inst: &Value, path: &str, errs: &mut Vec<String>) {
    validate_depth(root, schema, inst, path, errs, 0)
}

fn validate_depth(
    root: &Value,
    schema: &Value,
    inst: &Value,
    path: &str,
    errs: &mut Vec<String>,
    depth: usize,
) {
    if depth > 200 {
        errs.push(format!("{path}: schema recursion too deep"));
        return;
    }
    let s = match schema {
        Value::Bool(true) => return,
        Value::Bool(false) => {
            errs.push(format!("{path}: schema `false` admits nothing"));
            return;
        }
        Value::Object(m) => m,
        _ => {
            errs.push(format!("{path}: schema is not an object"));
            return;
        }
    };
    if let Some(r) = s.get("$ref").and_then(|r| r.as_str()) {
        match pointer(root, r) {
            Some(t) => validate_depth(root, t, inst, path, errs, depth + 1),
            None => errs.push(format!("{path}: unresolvable $ref {r}")),
        }
    }
    if let Some(t) = s.get("type") {
        let ok = match t {
            Value::String(t) => type_matches(t, inst),
            Value::Array(ts) => ts
                .iter()
                .any(|t| t.as_str().map(|t| type_matches(t, inst)).unwrap_or(false)),
            _ => false,
        };
        if !ok {
            errs.push(format!("{path}: type {t} does not admit {}", short(inst)));
            return;
        }
    }
    if let Some(e) = s.get("enum").and_then(|e| e.as_array()) {
        if !e.iter().any(|x| x == inst) {
            errs.push(format!(
                "{path}: {} not in enum {}",
                short(inst),
                Value::Array(e.clone())
            ));
        }
    }
    if let Some(c) = s.get("const") {
        if c != inst {
            errs.push(format!("{path}: {} is not const {c}", short(inst)));
        }
    }
    if let Some(n) = inst.as_f64() {
        if let Some(m) = s.get("minimum").and_then(|m| m.as_f64()) {
            if n < m {
                errs.push(format!("{path}: {n} < minimum {m}"));
            }
        }
        if let Some(m) = s.get("maximum").and_then(|m| m.as_f64()) {
            if n > m {
                errs.push(format!("{path}: {n} > maximum {m}"));
            }
        }
        if let Some(m) = s.get("exclusiveMinimum").and_then(|m| m.as_f64()) {
            if n <= m {
                errs.push(format!("{path}: {n} <= exclusiveMinimum {m}"));
            }
        }
        if let Some(m) = s.get("exclusiveMaximum").and_then(|m| m.as_f64()) {
            if n >= m {
                errs.push(format!("{path}: {n} >= exclusiveMaximum {m}"));
            }
        }
    }
    if let Some(st) = inst.as_str() {
        let len = st.chars().count() as u64;
        if let Some(m) = s.get("minLength").and_then(|m| m.as_u64()) {
            if len < m {
                errs.push(format!("{path}: length {len} < minLength {m}"));
            }
        }
        if let Some(m) = s.get("maxLength").and_then(|m| m.as_u64()) {
            if len > m {
                errs.push(format!("{path}: length {len} > maxLength {m}"));
            }
        }
    }
    if let Some(a) = inst.as_array() {
        let mut start = 0;
        if let Some(pi) = s.get("prefixItems").and_then(|p| p.as_array()) {
            for (i, (ps, x)) in pi.iter().zip(a.iter()).enumerate() {
                validate_depth(root, ps, x, &format!("{path}[{i}]"), errs, depth + 1);
            }
            start = pi.len();
        }
        if let Some(items) = s.get("items") {
            for (i, x) in a.iter().enumerate().skip(start) {
                validate_depth(root, items, x, &format!("{path}[{i}]"), errs, depth + 1);
            }
        }
        if let Some(m) = s.get("minItems").and_then(|m| m.as_u64()) {
            if (a.len() as u64) < m {
                errs.push(format!("{path}: {} items < minItems {m}", a.len()));
            }
        }
        if let Some(m) = s.get("maxItems").and_then(|m| m.as_u64()) {
            if (a.len() as u64) > m {
                errs.push(format!("{path}: {} items > maxItems {m}", a.len()));
            }
        }
    }
    if let Some(o) = inst.as_object() {
        let props = s.get("properties").and_then(|p| p.as_object());
        if let Some(req) = s.get("required").and_then(|r| r.as_array()) {
            for r in req {
                if let Some(r) = r.as_str() {
                    if !o.contains_key(r) {
                        errs.push(format!("{path}: required property {r:?} missing"));
                    }
                }
            }
        }
        if let Some(props) = props {
            for (k, ps) in props {
                if let Some(x) = o.get(k) {
                    validate_depth(root, ps, x, &format!("{path}.{k}"), errs, depth + 1);
                }
            }
        }
        if s.get("patternProperties").is_none() {
            if let Some(ap) = s.get("additionalProperties") {
                for (k, x) in o {
                    if props.map(|p| p.contains_key(k)).unwrap_or(false) {
                        continue;
                    }
                    match ap {
                        Value::Bool(false) => {
                            errs.push(format!("{path}: additional property {k:?} not allowed"))
                        }
                        Value::Bool(true) => {}
                        other => {
                            validate_depth(root, other, x, &format!("{path}.{k}"), errs, depth + 1)
                        }
                    }
                }
            }
        }
    }
    if let Some(all) = s.get("allOf").and_then(|a| a.as_array()) {
        for sub in all {
            validate_depth(root, sub, inst, path, errs, depth + 1);
        }
    }
    if let Some(any) = s.get("anyOf").and_then(|a| a.as_array()) {
        let ok = any.iter().any(|sub| {
            let mut e = Vec::new();
            validate_depth(root, sub, inst, path, &mut e, depth + 1);
            e.is_empty()
        });
        if !ok {
            errs.push(format!("{path}: matches no anyOf branch: {}", short(inst)));
        }
    }
    if let Some(one) = s.get("oneOf").and_then(|a| a.as_array()) {
        let n = one
            .iter()
            .filter(|sub| {
                let mut e = Vec::new();
                validate_depth(root, sub, inst, path, &mut e, depth + 1);
                e.is_empty()
            })
            .count();
        if n != 1 {
            errs.push(format!(
                "{path}: matches {n} oneOf branches (exactly 1 required): {}",
                short(inst)
            ));
        }
    }
    if let Some(not) = s.get("not") {
        let mut e = Vec::new();
        validate_depth(root, not, inst, path, &mut e, depth + 1);
        if e.is_empty() {
            errs.push(format!("{path}: matches `not` schema"));
        }
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 120 {
        format!("{}…", &s[..120])
    } else {
        s
    }
}

// ---------------------------------------------------------------------------------------------
// OpenAPI 3.1 structural checks
// ---------------------------------------------------------------------------------------------

const OPS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];
const PATH_ITEM_KEYS: [&str; 13] = [
    "$ref",
    "summary",
    "description",
    "get",
    "put",
    "post",
    "delete",
    "options",
    "head",
    "patch",
    "trace",
    "servers",
    "parameters",
];
const JSON_TYPES: [&str; 7] = [
    "null", "boolean", "object", "array", "number", "string", "integer",
];

/// Structural checks of an OpenAPI 3.1 document (the parts of the OAS 3.1 schema that matter
/// here, plus almanac's own constraints on schemas). Returns the list of problems.
pub fn check_openapi(doc: &Value) -> Vec<String> {
    let mut e = Vec::new();
    let Some(top) = doc.as_object() else {
        return vec!["document is not an object".into()];
    };
    let allowed_top = [
        "openapi",
        "info",
        "jsonSchemaDialect",
        "servers",
        "webhooks",
        "components",
        "security",
        "tags",
        "paths",
        "externalDocs",
    ];
    for k in top.keys() {
        if !allowed_top.contains(&k.as_str()) && !k.starts_with("x-") {
            e.push(format!("unknown top-level key {k:?}"));
        }
    }
    match doc.get("openapi").and_then(|v| v.as_str()) {
        Some(v) if v.starts_with("3.1.") => {}
        other => e.push(format!("openapi must be 3.1.x, got {other:?}")),
    }
    let info = &doc["info"];
    if !info["title"].is_string() || !info["version"].is_string() {
        e.push("info.title and info.version must be strings".into());
    }
    if let Some(servers) = doc.get("servers") {
        match servers.as_array() {
            Some(a) => {
                for s in a {
                    if !s["url"].is_string() {
                        e.push("server without url".into());
                    }
                }
            }
            None => e.push("servers must be an array".into()),
        }
    }

    // All $refs internal and resolvable.
    let mut refs = Vec::new();
    collect_refs(doc, &mut refs);
    for r in &refs {
        if !r.starts_with("#/") && r != "#" {
            e.push(format!("external or malformed $ref {r:?}"));
        } else if pointer(doc, r).is_none() {
            e.push(format!("unresolvable $ref {r:?}"));
        }
    }

    // Components.
    let comp_sections = [
        "schemas",
        "responses",
        "parameters",
        "examples",
        "requestBodies",
        "headers",
        "securitySchemes",
        "links",
        "callbacks",
        "pathItems",
    ];
    if let Some(c) = doc.get("components") {
        match c.as_object() {
            Some(c) => {
                for (sec, v) in c {
                    if !comp_sections.contains(&sec.as_str()) && !sec.starts_with("x-") {
                        e.push(format!("unknown components section {sec:?}"));
                        continue;
                    }
                    match v.as_object() {
                        Some(m) => {
                            for name in m.keys() {
                                if name.is_empty()
                                    || !name
                                        .chars()
                                        .all(|ch| ch.is_ascii_alphanumeric() || ".-_".contains(ch))
                                {
                                    e.push(format!("component name {sec}/{name:?} does not match ^[a-zA-Z0-9.\\-_]+$"));
                                }
                            }
                        }
                        None => e.push(format!("components.{sec} must be an object")),
                    }
                }
                if let Some(schemas) = c.get("schemas").and_then(|s| s.as_object()) {
                    for (n, s) in schemas {
                        check_schema(s, &format!("components.schemas.{n}"), &mut e);
                    }
                }
                if let Some(ps) = c.get("parameters").and_then(|s| s.as_object()) {
                    for (n, p) in ps {
                        check_parameter(doc, p, &format!("components.parameters.{n}"), &mut e);
                    }
                }
                if let Some(rs) = c.get("responses").and_then(|s| s.as_object()) {
                    for (n, r) in rs {
                        check_response(doc, r, &format!("components.responses.{n}"), &mut e);
                    }
                }
                if let Some(hs) = c.get("headers").and_then(|s| s.as_object()) {
                    for (n, h) in hs {
                        check_header(doc, h, &format!("components.headers.{n}"), &mut e);
                    }
                }
                if let Some(ss) = c.get("securitySchemes").and_then(|s| s.as_object()) {
                    for (n, s) in ss {
                        let s = resolve(doc, s);
                        match s["type"].as_str() {
                            Some("apiKey")
                            | Some("http")
                            | Some("mutualTLS")
                            | Some("oauth2")
                            | Some("openIdConnect") => {}
                            other => e.push(format!("securitySchemes.{n}: bad type {other:?}")),
                        }
                        if s["type"] == "http" && !s["scheme"].is_string() {
                            e.push(format!("securitySchemes.{n}: http scheme needs `scheme`"));
                        }
                    }
                }
            }
            None => e.push("components must be an object".into()),
        }
    }
    let schemes: HashSet<String> = doc["components"]["securitySchemes"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    let check_security = |sec: &Value, at: &str, e: &mut Vec<String>| match sec.as_array() {
        Some(a) => {
            for req in a {
                match req.as_object() {
                    Some(m) => {
                        for (k, v) in m {
                            if !schemes.contains(k) {
                                e.push(format!(
                                    "{at}: security requirement names unknown scheme {k:?}"
                                ));
                            }
                            if !v.is_array() {
                                e.push(format!(
                                    "{at}: security requirement value must be an array"
                                ));
                            }
                        }
                    }
                    None => e.push(format!("{at}: security requirement must be an object")),
                }
            }
        }
        None => e.push(format!("{at}: security must be an array")),
    };
    if let Some(s) = doc.get("security") {
        check_security(s, "security", &mut e);
    }

    // Paths.
    let mut op_ids = HashSet::new();
    match doc.get("paths").and_then(|p| p.as_object()) {
        None => e.push("paths must be an object".into()),
        Some(paths) => {
            for (p, item) in paths {
                if !p.starts_with('/') {
                    e.push(format!("path {p:?} must start with /"));
                }
                let vars = template_vars(p);
                let Some(item_o) = item.as_object() else {
                    e.push(format!("path item {p} must be an object"));
                    continue;
                };
                for k in item_o.keys() {
                    if !PATH_ITEM_KEYS.contains(&k.as_str()) && !k.starts_with("x-") {
                        e.push(format!("path item {p}: unknown key {k:?}"));
                    }
                }
                let path_params: Vec<Value> = item
                    .get("parameters")
                    .and_then(|x| x.as_array())
                    .cloned()
                    .unwrap_or_default();
                for op in OPS {
                    let Some(o) = item.get(op) else { continue };
                    let at = format!("{op} {p}");
                    if let Some(id) = o.get("operationId") {
                        match id.as_str() {
                            Some(id) => {
                                if !op_ids.insert(id.to_string()) {
                                    e.push(format!("{at}: duplicate operationId {id}"));
                                }
                            }
                            None => e.push(format!("{at}: operationId must be a string")),
                        }
                    }
                    let mut params: Vec<Value> = path_params.clone();
                    if let Some(ps) = o.get("parameters") {
                        match ps.as_array() {
                            Some(a) => params.extend(a.iter().cloned()),
                            None => e.push(format!("{at}: parameters must be an array")),
                        }
                    }
                    let mut seen = HashSet::new();
                    let mut path_names = HashSet::new();
                    for (i, pr) in params.iter().enumerate() {
                        check_parameter(doc, pr, &format!("{at} parameter {i}"), &mut e);
                        let r = resolve(doc, pr);
                        let key = (
                            r["name"].as_str().unwrap_or("").to_string(),
                            r["in"].as_str().unwrap_or("").to_string(),
                        );
                        if key.1 == "path" {
                            path_names.insert(key.0.clone());
                            if !vars.contains(&key.0) {
                                e.push(format!(
                                    "{at}: path parameter {:?} not in the template",
                                    key.0
                                ));
                            }
                        }
                        // operation-level parameters override path-level ones; count duplicates within one level only
                        if i >= path_params.len() && !seen.insert(key.clone()) {
                            e.push(format!("{at}: duplicate parameter {key:?}"));
                        }
                    }
                    for v in &vars {
                        if !path_names.contains(v) {
                            e.push(format!(
                                "{at}: template variable {{{v}}} has no path parameter"
                            ));
                        }
                    }
                    if let Some(rb) = o.get("requestBody") {
                        let rb = resolve(doc, rb);
                        match rb.get("content").and_then(|c| c.as_object()) {
                            Some(c) => {
                                for (mt, m) in c {
                                    if let Some(s) = m.get("schema") {
                                        check_schema(s, &format!("{at} requestBody {mt}"), &mut e);
                                    }
                                }
                            }
                            None => e.push(format!("{at}: requestBody needs content")),
                        }
                    }
                    match o.get("responses").and_then(|r| r.as_object()) {
                        Some(rs) if !rs.is_empty() => {
                            for (code, r) in rs {
                                let ok = code == "default"
                                    || (code.len() == 3
                                        && ('1'..='5').contains(&code.chars().next().unwrap())
                                        && (code[1..].chars().all(|c| c.is_ascii_digit())
                                            || &code[1..] == "XX"));
                                if !ok {
                                    e.push(format!("{at}: bad response key {code:?}"));
                                }
                                check_response(doc, r, &format!("{at} {code}"), &mut e);
                            }
                        }
                        _ => e.push(format!("{at}: responses must be a non-empty object")),
                    }
                    if let Some(s) = o.get("security") {
                        check_security(s, &at, &mut e);
                    }
                }
            }
        }
    }
    e
}

fn template_vars(p: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = p;
    while let Some(i) = rest.find('{') {
        let Some(j) = rest[i..].find('}') else { break };
        out.push(rest[i + 1..i + j].to_string());
        rest = &rest[i + j + 1..];
    }
    out
}

fn collect_refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == "$ref" {
                    if let Some(s) = x.as_str() {
                        out.push(s.to_string());
                    }
                } else {
                    collect_refs(x, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_refs(x, out)),
        _ => {}
    }
}

fn check_parameter(doc: &Value, p: &Value, at: &str, e: &mut Vec<String>) {
    let p = resolve(doc, p);
    if !p["name"].is_string() {
        e.push(format!("{at}: parameter without name"));
    }
    match p["in"].as_str() {
        Some("query") | Some("header") | Some("cookie") => {}
        Some("path") => {
            if p["required"] != true {
                e.push(format!("{at}: path parameter must be required: true"));
            }
        }
        other => e.push(format!("{at}: bad `in` {other:?}")),
    }
    if let Some(r) = p.get("required") {
        if !r.is_boolean() {
            e.push(format!("{at}: parameter `required` must be a boolean"));
        }
    }
    let has_schema = p.get("schema").is_some();
    let has_content = p.get("content").is_some();
    if has_schema == has_content {
        e.push(format!(
            "{at}: a parameter needs exactly one of schema/content"
        ));
    }
    if let Some(s) = p.get("schema") {
        check_schema(s, &format!("{at} schema"), e);
    }
    if let Some(st) = p.get("style").and_then(|s| s.as_str()) {
        if ![
            "matrix",
            "label",
            "form",
            "simple",
            "spaceDelimited",
            "pipeDelimited",
            "deepObject",
        ]
        .contains(&st)
        {
            e.push(format!("{at}: bad style {st}"));
        }
    }
}

fn check_header(doc: &Value, h: &Value, at: &str, e: &mut Vec<String>) {
    let h = resolve(doc, h);
    if h.get("name").is_some() || h.get("in").is_some() {
        e.push(format!("{at}: header objects must not have name/in"));
    }
    if h.get("schema").is_some() == h.get("content").is_some() {
        e.push(format!(
            "{at}: a header needs exactly one of schema/content"
        ));
    }
    if let Some(r) = h.get("required") {
        if !r.is_boolean() {
            e.push(format!("{at}: header `required` must be a boolean"));
        }
    }
    if let Some(s) = h.get("schema") {
        check_schema(s, &format!("{at} schema"), e);
    }
}

fn check_response(doc: &Value, r: &Value, at: &str, e: &mut Vec<String>) {
    let r = resolve(doc, r);
    if !r["description"].is_string() {
        e.push(format!("{at}: response needs a description"));
    }
    if let Some(hs) = r.get("headers") {
        match hs.as_object() {
            Some(hs) => {
                for (n, h) in hs {
                    check_header(doc, h, &format!("{at} header {n}"), e);
                }
            }
            None => e.push(format!("{at}: headers must be an object")),
        }
    }
    if let Some(c) = r.get("content") {
        match c.as_object() {
            Some(c) => {
                for (mt, m) in c {
                    if let Some(s) = m.get("schema") {
                        check_schema(s, &format!("{at} {mt}"), e);
                    }
                }
            }
            None => e.push(format!("{at}: content must be an object")),
        }
    }
}

/// Schema-level checks: valid types, `required` arrays (naming declared properties),
/// 2020-12 forms (`items` a schema, numeric `exclusiveMinimum`), no 3.0-only `nullable`, no
/// `format: date-time` (almanac describes date-times with a `pattern`).
pub fn check_schema(s: &Value, at: &str, e: &mut Vec<String>) {
    check_schema_depth(s, at, e, 0)
}

fn check_schema_depth(s: &Value, at: &str, e: &mut Vec<String>, depth: usize) {
    if depth > 64 {
        return;
    }
    let m = match s {
        Value::Bool(_) => return,
        Value::Object(m) => m,
        _ => {
            e.push(format!("{at}: schema must be an object or boolean"));
            return;
        }
    };
    if let Some(t) = m.get("type") {
        let ok = match t {
            Value::String(t) => JSON_TYPES.contains(&t.as_str()),
            Value::Array(a) => {
                !a.is_empty()
                    && a.iter()
                        .all(|t| t.as_str().map(|t| JSON_TYPES.contains(&t)).unwrap_or(false))
            }
            _ => false,
        };
        if !ok {
            e.push(format!("{at}: invalid type {t}"));
        }
    }
    if m.contains_key("nullable") {
        e.push(format!(
            "{at}: `nullable` is OpenAPI 3.0; 3.1 uses type arrays"
        ));
    }
    if m.get("format").and_then(|f| f.as_str()) == Some("date-time") {
        e.push(format!(
            "{at}: `format: date-time` is not allowed (date-times use a `pattern`)"
        ));
    }
    for k in ["exclusiveMinimum", "exclusiveMaximum"] {
        if let Some(v) = m.get(k) {
            if !v.is_number() {
                e.push(format!("{at}: {k} must be a number in 3.1"));
            }
        }
    }
    if let Some(en) = m.get("enum") {
        if en.as_array().map(|a| a.is_empty()).unwrap_or(true) {
            e.push(format!("{at}: enum must be a non-empty array"));
        }
    }
    if let Some(r) = m.get("required") {
        match r.as_array() {
            Some(a) => {
                let mut seen = HashSet::new();
                for x in a {
                    match x.as_str() {
                        Some(n) => {
                            if !seen.insert(n) {
                                e.push(format!("{at}: duplicate required {n}"));
                            }
                            if let Some(props) = m.get("properties").and_then(|p| p.as_object()) {
                                if !props.contains_key(n) {
                                    e.push(format!(
                                        "{at}: required {n:?} is not a declared property"
                                    ));
                                }
                            }
                        }
                        None => e.push(format!("{at}: required entries must be strings")),
                    }
                }
            }
            None => e.push(format!("{at}: schema `required` must be an array")),
        }
    }
    if let Some(p) = m.get("properties") {
        match p.as_object() {
            Some(p) => {
                for (k, v) in p {
                    check_schema_depth(v, &format!("{at}.{k}"), e, depth + 1);
                }
            }
            None => e.push(format!("{at}: properties must be an object")),
        }
    }
    if let Some(i) = m.get("items") {
        if i.is_array() {
            e.push(format!(
                "{at}: `items` must be a schema in 3.1 (use prefixItems)"
            ));
        } else {
            check_schema_depth(i, &format!("{at}[]"), e, depth + 1);
        }
    }
    if let Some(ap) = m.get("additionalProperties") {
        check_schema_depth(ap, &format!("{at}.*"), e, depth + 1);
    }
    for k in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(v) = m.get(k) {
            match v.as_array() {
                Some(a) if !a.is_empty() => {
                    for (i, x) in a.iter().enumerate() {
                        check_schema_depth(x, &format!("{at}.{k}[{i}]"), e, depth + 1);
                    }
                }
                _ => e.push(format!("{at}: {k} must be a non-empty array")),
            }
        }
    }
    if let Some(n) = m.get("not") {
        check_schema_depth(n, &format!("{at}.not"), e, depth + 1);
    }
}
