//! `/doc`: the OpenAPI 3.1 document, generated from the route table and the
//! parameter definitions the server validates with. Built with `serde_json` (keys in insertion
//! order), so the document is byte-for-byte deterministic for a given namespace root.

use crate::http::links::Links;
use crate::http::params::{Location, ParamSpec};
use crate::http::routes::{Endpoint, Group, ResponseSchema, RouteTable};
use serde_json::{json, Map, Value};

pub(crate) fn document(routes: &RouteTable, links: &Links) -> Value {
    let mut paths = Map::new();
    for route in &routes.routes {
        let mut item = Map::new();
        for endpoint in &route.endpoints {
            for (method, operation) in operations(endpoint) {
                item.insert(method.into(), operation);
            }
        }
        paths.insert(route.doc_path(), Value::Object(item));
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "almanac events calendar API",
            "version": "1.0.0",
            "description": "Events, venues, organizers, event categories and event tags, compatible with The Events Calendar REST API v1 under the namespace cal/events/v1. Authenticate with HTTP Basic credentials. Read-your-writes: every successful write answers with X-Cal-Seq, its position; a request carrying X-Cal-Min-Seq with that position is answered once the server has reached it (up to 5 seconds, then 503 rest_position_not_reached with Retry-After), on this server or any other of the same calendar."
        },
        "servers": [{"url": links.namespace()}],
        "paths": paths,
        "components": components(routes),
        "security": [{}, {"basicAuth": []}],
    })
}

/// The documented operations of one endpoint: an Edit group is documented three times
/// (`post`, `put`, `patch`), with distinct operation IDs.
fn operations(endpoint: &Endpoint) -> Vec<(&'static str, Value)> {
    match endpoint.group {
        Group::Read => vec![("get", operation(endpoint, endpoint.operation_id.clone()))],
        Group::Create => vec![("post", operation(endpoint, endpoint.operation_id.clone()))],
        Group::Delete => vec![("delete", operation(endpoint, endpoint.operation_id.clone()))],
        Group::Edit => vec![
            ("post", operation(endpoint, endpoint.operation_id.clone())),
            (
                "put",
                operation(endpoint, format!("{}Put", endpoint.operation_id)),
            ),
            (
                "patch",
                operation(endpoint, format!("{}Patch", endpoint.operation_id)),
            ),
        ],
    }
}

/// Writes take their fields in the body; `translation_language` and path parameters stay
/// parameters. Reads and deletes document everything as parameters.
fn in_body(endpoint: &Endpoint, spec: &ParamSpec) -> bool {
    matches!(endpoint.group, Group::Create | Group::Edit)
        && spec.location == Location::Query
        && spec.name != "translation_language"
}

fn operation(endpoint: &Endpoint, operation_id: String) -> Value {
    let parameters: Vec<Value> = endpoint
        .params
        .iter()
        .filter(|p| !in_body(endpoint, p))
        .map(parameter)
        .collect();
    let mut op = json!({
        "operationId": operation_id,
        "summary": endpoint.summary,
        "parameters": parameters,
    });
    if has_body(endpoint) {
        op["requestBody"] = request_body(endpoint);
    }
    op["responses"] = responses(endpoint);
    if endpoint.group != Group::Read {
        op["security"] = json!([{"basicAuth": []}]);
    }
    op
}

/// Writes document a body; an operation without body fields (`POST /index/rebuild`) does not,
/// since a required empty body would ask clients for something the server ignores.
fn has_body(endpoint: &Endpoint) -> bool {
    endpoint.params.iter().any(|p| in_body(endpoint, p))
}

/// The body schema of a write: every body field, `required` only on creates.
pub(crate) fn body_schema(endpoint: &Endpoint) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for spec in endpoint.params.iter().filter(|p| in_body(endpoint, p)) {
        let mut schema = spec.schema();
        if let Some(d) = spec.description {
            schema.insert("description".into(), json!(d));
        }
        properties.insert(spec.name.into(), Value::Object(schema));
        if spec.required {
            required.push(spec.name);
        }
    }
    let mut schema = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

fn request_body(endpoint: &Endpoint) -> Value {
    let schema = match endpoint.group {
        Group::Create => {
            json!({"$ref": format!("#/components/schemas/{}", write_schema_name(endpoint))})
        }
        _ => body_schema(endpoint),
    };
    let mut encoding = Map::new();
    for spec in endpoint.params.iter().filter(|p| in_body(endpoint, p)) {
        match spec.schema().get("type").and_then(Value::as_str) {
            Some("array") => {
                encoding.insert(spec.name.into(), json!({"style": "form", "explode": true}));
            }
            Some("object") => {
                encoding.insert(
                    spec.name.into(),
                    json!({"style": "deepObject", "explode": true}),
                );
            }
            _ => {}
        }
    }
    let mut form = json!({"schema": schema.clone()});
    if !encoding.is_empty() {
        form["encoding"] = Value::Object(encoding);
    }
    json!({
        "required": endpoint.group == Group::Create,
        "content": {
            "application/json": {"schema": schema},
            "application/x-www-form-urlencoded": form,
        },
    })
}

/// `createVenue` → `VenueWrite`.
fn write_schema_name(endpoint: &Endpoint) -> String {
    format!(
        "{}Write",
        endpoint
            .operation_id
            .strip_prefix("create")
            .unwrap_or(&endpoint.operation_id)
    )
}

fn parameter(spec: &ParamSpec) -> Value {
    let schema = spec.schema();
    let is_list = schema.get("type").and_then(Value::as_str) == Some("array");
    let mut p = json!({
        "name": spec.name,
        "in": match spec.location { Location::Path => "path", Location::Query => "query" },
        "required": spec.required,
        "schema": Value::Object(schema),
    });
    // Lists are documented comma-separated, as the plugin documents them (the repeated-key
    // and bracket spellings are accepted too).
    if is_list {
        p["style"] = json!("form");
        p["explode"] = json!(false);
    }
    if let Some(d) = spec.description {
        p["description"] = json!(d);
    }
    p
}

fn responses(endpoint: &Endpoint) -> Value {
    let mut out = Map::new();
    let is_read = endpoint.group == Group::Read;
    for status in endpoint.class.statuses() {
        let entry = match status {
            200 | 201 => success(endpoint, *status, is_read),
            304 => {
                json!({"description": "Not modified (If-None-Match, or If-Modified-Since on calendars).", "headers": {"ETag": {"$ref": "#/components/headers/ETag"}}})
            }
            _ => json!({"$ref": format!("#/components/responses/Error{status}")}),
        };
        out.insert(status.to_string(), entry);
    }
    Value::Object(out)
}

fn success(endpoint: &Endpoint, status: u16, is_read: bool) -> Value {
    let (media_type, schema) = match &endpoint.response {
        ResponseSchema::Component(name) => (
            "application/json",
            json!({"$ref": format!("#/components/schemas/{name}")}),
        ),
        ResponseSchema::AnyObject => ("application/json", json!({"type": "object"})),
        ResponseSchema::Calendar => (
            "text/calendar",
            json!({"type": "string", "description": "An iCalendar (RFC 5545) VCALENDAR."}),
        ),
    };
    let mut headers = Map::new();
    headers.insert("Link".into(), json!({"$ref": "#/components/headers/Link"}));
    if is_read {
        headers.insert("ETag".into(), json!({"$ref": "#/components/headers/ETag"}));
    }
    if endpoint.response == ResponseSchema::Calendar {
        headers.insert(
            "Last-Modified".into(),
            json!({"description": "The newest change the calendar reflects.", "schema": {"type": "string"}}),
        );
    }
    if endpoint.class.is_list() {
        headers.insert(
            "X-Cal-Total".into(),
            json!({"$ref": "#/components/headers/X-Cal-Total"}),
        );
        // A calendar feed is not paged: it holds every match (up to its limit).
        if endpoint.response == ResponseSchema::Calendar {
            headers.insert(
                "X-Cal-Truncated".into(),
                json!({"description": "`true` when the feed holds only the first matches.", "schema": {"type": "string"}}),
            );
        } else {
            headers.insert(
                "X-Cal-TotalPages".into(),
                json!({"$ref": "#/components/headers/X-Cal-TotalPages"}),
            );
        }
    }
    if status == 201 {
        headers.insert(
            "Location".into(),
            json!({"$ref": "#/components/headers/Location"}),
        );
    }
    json!({
        "description": "Success.",
        "headers": headers,
        "content": {media_type: {"schema": schema}},
    })
}

const ERROR_STATUSES: [(u16, &str); 13] = [
    (
        400,
        "Invalid request: missing or invalid parameters, malformed JSON.",
    ),
    (401, "Bad credentials, or authentication required."),
    (403, "The caller may not do this."),
    (404, "No such route or record."),
    (
        408,
        "The request body did not arrive in time (extension: hardening).",
    ),
    (409, "Translation-group conflict."),
    (
        410,
        "The record is already in the trash; a change feed token has expired (extension).",
    ),
    (413, "The request body is larger than 1 MiB."),
    (414, "The request target is longer than 8192 bytes."),
    (415, "Unsupported body media type or encoding."),
    (
        429,
        "Credentials refused unchecked after repeated authentication failures for the same user name or client address (extension: hardening).",
    ),
    (500, "Unexpected server failure."),
    (
        503,
        "Every password verifier stayed busy; the credentials were not checked (extension: hardening).",
    ),
];

fn components(routes: &RouteTable) -> Value {
    let mut responses = Map::new();
    for (status, description) in ERROR_STATUSES {
        let mut headers = json!({"Link": {"$ref": "#/components/headers/Link"}});
        if status == 429 || status == 503 {
            headers["Retry-After"] = json!({"$ref": "#/components/headers/Retry-After"});
        }
        responses.insert(
            format!("Error{status}"),
            json!({
                "description": description,
                "headers": headers,
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
            }),
        );
    }
    let mut all_schemas = schemas();
    for endpoint in routes.routes.iter().flat_map(|r| &r.endpoints) {
        if endpoint.group == Group::Create && has_body(endpoint) {
            all_schemas.insert(write_schema_name(endpoint), body_schema(endpoint));
        }
    }
    json!({
        "schemas": all_schemas,
        "parameters": {},
        "responses": responses,
        "headers": {
            "Link": {"description": "The REST API discovery link, and next/prev links on lists.", "required": true, "schema": {"type": "string"}},
            "ETag": {"description": "Weak entity tag of the body.", "schema": {"type": "string"}},
            "Location": {"description": "The URL of the created record.", "required": true, "schema": {"type": "string"}},
            "X-Cal-Total": {"description": "Number of matching records.", "required": true, "schema": {"type": "integer"}},
            "X-Cal-TotalPages": {"description": "Number of pages.", "required": true, "schema": {"type": "integer"}},
            "Retry-After": {"description": "Seconds until credentials are checked again.", "required": true, "schema": {"type": "integer", "minimum": 0}},
        },
        "securitySchemes": {"basicAuth": {"type": "http", "scheme": "basic"}},
    })
}

fn schemas() -> Map<String, Value> {
    let mut out = match resource_schemas() {
        Value::Object(m) => m,
        _ => unreachable!("schemas are an object"),
    };
    let meta = json!({
        "Error": {
            "type": "object",
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "data": {
                    "type": "object",
                    "properties": {"status": {"type": "integer"}},
                    "required": ["status"],
                },
            },
            "required": ["code", "message", "data"],
            "additionalProperties": false,
        },
        "RouteDescription": {
            "type": "object",
            "properties": {
                "namespace": {"type": "string"},
                "methods": {"type": "array", "items": {"type": "string"}},
                "endpoints": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "methods": {"type": "array", "items": {"type": "string"}},
                            "args": {"type": "object", "additionalProperties": {"type": "object"}},
                        },
                        "required": ["methods", "args"],
                        "additionalProperties": false,
                    },
                },
                "_links": {"type": "object"},
            },
            "required": ["namespace", "methods", "endpoints"],
            "additionalProperties": false,
        },
        "NamespaceIndex": {
            "type": "object",
            "properties": {
                "namespace": {"type": "string"},
                "routes": {"type": "object", "additionalProperties": {"$ref": "#/components/schemas/RouteDescription"}},
                "_links": {"type": "object"},
            },
            "required": ["namespace", "routes", "_links"],
            "additionalProperties": false,
        },
    });
    if let Value::Object(m) = meta {
        out.extend(m);
    }
    out
}

/// `YYYY-MM-DD HH:MM:SS`; representations are not RFC 3339.
const DATE_PATTERN: &str = "^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$";

fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

fn archive(key: &str, item: &str, links_first: bool) -> Value {
    let mut props = Map::new();
    let items = json!({"type": "array", "items": {"$ref": format!("#/components/schemas/{item}")}});
    if !links_first {
        props.insert(key.into(), items.clone());
    }
    props.insert("rest_url".into(), json!({"type": "string"}));
    props.insert("total".into(), json!({"type": "integer", "minimum": 0}));
    props.insert(
        "total_pages".into(),
        json!({"type": "integer", "minimum": 0}),
    );
    if links_first {
        props.insert(key.into(), items);
    }
    props.insert("next_rest_url".into(), json!({"type": "string"}));
    props.insert("previous_rest_url".into(), json!({"type": "string"}));
    object(
        Value::Object(props),
        &[key, "rest_url", "total", "total_pages"],
    )
}

/// The representations of venues, organizers, categories and tags.
fn resource_schemas() -> Value {
    let s = json!({"type": "string"});
    let date = json!({"type": "string", "pattern": DATE_PATTERN});
    let language = json!({"type": "string", "enum": ["en", "pt-br", "es"]});
    let translations = json!({"type": "object", "additionalProperties": {"type": "integer"}});
    let status = json!({"type": "string", "enum": ["publish", "future", "draft", "pending", "private", "trash"]});
    let head = json!({
        "id": {"type": "integer"}, "author": s, "status": status,
        "date": date, "date_utc": date, "modified": date, "modified_utc": date, "url": s,
    });
    let linked = |name: &str, extra: Value| {
        let mut props = head.as_object().cloned().unwrap_or_default();
        props.insert(name.into(), s.clone());
        for key in ["description", "excerpt", "slug"] {
            props.insert(key.into(), s.clone());
        }
        props.insert(
            "image".into(),
            json!({"$ref": "#/components/schemas/Image"}),
        );
        if let Value::Object(extra) = extra {
            props.extend(extra);
        }
        props.insert("json_ld".into(), json!({"type": "object"}));
        props.insert("global_id".into(), s.clone());
        props.insert(
            "global_id_lineage".into(),
            json!({"type": "array", "items": s}),
        );
        props.insert("language".into(), language.clone());
        props.insert("translations".into(), translations.clone());
        Value::Object(props)
    };
    let venue = linked(
        "venue",
        json!({
            "address": s, "city": s, "country": s, "province": s, "state": s, "zip": s,
            "phone": s, "website": s, "stateprovince": s,
            "geo_lat": {"type": "number"}, "geo_lng": {"type": "number"},
            "show_map": {"type": "boolean"}, "show_map_link": {"type": "boolean"},
        }),
    );
    let organizer = linked("organizer", json!({"phone": s, "website": s, "email": s}));
    let post_required = [
        "id",
        "author",
        "status",
        "date",
        "date_utc",
        "modified",
        "modified_utc",
        "url",
        "slug",
        "global_id",
        "global_id_lineage",
        "language",
        "translations",
    ];
    let mut venue_required = post_required.to_vec();
    venue_required.extend(["show_map", "show_map_link"]);
    let term = json!({
        "id": {"type": "integer"}, "count": {"type": "integer", "minimum": 0}, "description": s,
        "name": s, "slug": s, "taxonomy": {"type": "string", "enum": ["tribe_events_cat", "post_tag"]},
        "parent": {"type": "integer", "minimum": 0}, "meta": {"type": "array", "maxItems": 0}, "url": s,
        "urls": object(json!({"self": s, "collection": s, "up": s}), &["self", "collection"]),
        "language": language, "translations": translations, "_links": {"type": "object"},
    });
    let nullable_bool = json!({"type": ["boolean", "null"]});
    let details = object(
        json!({"year": s, "month": s, "day": s, "hour": s, "minutes": s, "seconds": s}),
        &["year", "month", "day", "hour", "minutes", "seconds"],
    );
    let embedded_term = object(
        json!({
            "name": s, "slug": s, "term_group": {"type": "integer"}, "term_taxonomy_id": {"type": "integer"},
            "taxonomy": {"type": "string", "enum": ["tribe_events_cat", "post_tag"]}, "description": s,
            "parent": {"type": "integer"}, "count": {"type": "integer"}, "filter": s, "id": {"type": "integer"},
            "urls": object(json!({"self": s, "collection": s, "up": s}), &["self", "collection"]),
            "language": language, "translations": translations,
        }),
        &[
            "name",
            "slug",
            "term_group",
            "term_taxonomy_id",
            "taxonomy",
            "description",
            "parent",
            "count",
            "filter",
            "id",
            "urls",
            "language",
            "translations",
        ],
    );
    let event_props = json!({
        "id": {"type": "integer"}, "global_id": s, "global_id_lineage": {"type": "array", "items": s},
        "author": s, "status": status, "date": date, "date_utc": date, "modified": date, "modified_utc": date,
        "url": s, "rest_url": s, "title": s, "description": s, "excerpt": s, "slug": s,
        "image": {"oneOf": [{"$ref": "#/components/schemas/Image"}, {"const": false}]},
        "all_day": nullable_bool,
        "start_date": date, "start_date_details": {"$ref": "#/components/schemas/DateDetails"},
        "end_date": date, "end_date_details": {"$ref": "#/components/schemas/DateDetails"},
        "utc_start_date": date, "utc_start_date_details": {"$ref": "#/components/schemas/DateDetails"},
        "utc_end_date": date, "utc_end_date_details": {"$ref": "#/components/schemas/DateDetails"},
        "timezone": s, "timezone_abbr": s, "cost": s, "cost_details": {"$ref": "#/components/schemas/CostDetails"},
        "website": s, "show_map": nullable_bool, "show_map_link": nullable_bool,
        "hide_from_listings": nullable_bool, "sticky": nullable_bool, "featured": nullable_bool,
        "categories": {"type": "array", "items": {"$ref": "#/components/schemas/EmbeddedTerm"}},
        "tags": {"type": "array", "items": {"$ref": "#/components/schemas/EmbeddedTerm"}},
        "venue": {"oneOf": [{"$ref": "#/components/schemas/Venue"}, {"type": "array", "maxItems": 0}]},
        "organizer": {"type": "array", "items": {"$ref": "#/components/schemas/Organizer"}},
        "custom_fields": {"type": "array", "maxItems": 0},
        "json_ld": {"type": "object"}, "language": language, "translations": translations,
        "ticketed": nullable_bool, "post_parent": {"type": "integer", "minimum": 0},
        "recurrence": {"type": "array", "items": s}, "series_id": {"type": "integer"},
        "recurrence_id": date,
    });
    let event_required = [
        "id",
        "global_id",
        "global_id_lineage",
        "author",
        "status",
        "date",
        "date_utc",
        "modified",
        "modified_utc",
        "url",
        "rest_url",
        "title",
        "description",
        "excerpt",
        "slug",
        "image",
        "all_day",
        "start_date",
        "start_date_details",
        "end_date",
        "end_date_details",
        "utc_start_date",
        "utc_start_date_details",
        "utc_end_date",
        "utc_end_date_details",
        "timezone",
        "timezone_abbr",
        "cost",
        "cost_details",
        "website",
        "show_map",
        "show_map_link",
        "hide_from_listings",
        "sticky",
        "featured",
        "categories",
        "tags",
        "venue",
        "organizer",
        "custom_fields",
        "language",
        "translations",
        "ticketed",
        "post_parent",
    ];
    json!({
        "IndexSummary": object(
            json!({"events": {"type": "integer"}, "venues": {"type": "integer"}, "organizers": {"type": "integer"}}),
            &["events", "venues", "organizers"],
        ),
        "ChangeFeed": object(
            json!({
                "changes": {"type": "array", "items": object(
                    json!({
                        "token": s,
                        "kind": {"type": "string", "enum": ["event", "venue", "organizer", "category", "tag"]},
                        "id": {"type": "integer"},
                        "action": {"type": "string", "enum": ["created", "updated", "trashed", "restored", "deleted", "removed"]},
                        "date_utc": s,
                        "language": s,
                        "record": {"type": "object"},
                    }),
                    &["token", "kind", "id", "action", "date_utc", "language"],
                )},
                "next_page_token": s,
                "next_token": s,
            }),
            &["changes"],
        ),
        "Webhook": object(
            json!({
                "id": {"type": "integer"},
                "url": s,
                "kinds": {"type": "array", "items": s},
                "state": {"type": "string", "enum": ["active", "retrying", "failing"]},
                "delivered_token": s,
                "attempts": {"type": "integer"},
                "failing_since": {"type": ["string", "null"]},
                "last_error": {"type": ["string", "null"]},
                "created_utc": s,
                "secret": s,
            }),
            &["id", "url", "kinds", "state", "delivered_token", "attempts", "failing_since", "last_error", "created_utc"],
        ),
        "WebhookList": object(
            json!({"webhooks": {"type": "array", "items": {"$ref": "#/components/schemas/Webhook"}}}),
            &["webhooks"],
        ),
        "DateDetails": details,
        "CostDetails": object(
            json!({"currency_symbol": s, "currency_code": s, "currency_position": {"type": "string", "enum": ["prefix", "postfix", ""]}, "values": {"type": "array", "items": s}}),
            &["currency_symbol", "currency_code", "currency_position", "values"],
        ),
        "EmbeddedTerm": embedded_term,
        "Event": object(event_props, &event_required),
        "EventArchive": archive("events", "Event", false),
        "ImageSize": object(json!({"width": {"type": "integer"}, "height": {"type": "integer"}, "mime-type": s, "url": s}), &[]),
        "Image": object(json!({"url": s, "id": {"type": "integer"}, "extension": s}), &["url", "id", "extension"]),
        "Venue": object(venue, &venue_required),
        "Organizer": object(organizer, &post_required),
        "Term": object(term, &["id", "count", "description", "name", "slug", "taxonomy", "meta", "url", "urls", "language", "translations"]),
        "VenueArchive": archive("venues", "Venue", false),
        "OrganizerArchive": archive("organizers", "Organizer", false),
        "CategoryArchive": archive("categories", "Term", true),
        "TagArchive": archive("tags", "Term", true),
    })
}
