//! `/doc`: the OpenAPI 3.1 document (common.md §2.4), generated from the route table and the
//! parameter definitions the server validates with. Built with `serde_json` (keys in insertion
//! order), so the document is byte-for-byte deterministic for a given namespace root.

use crate::http::links::Links;
use crate::http::params::{Location, ParamSpec};
use crate::http::routes::{Endpoint, Group, OperationClass, ResponseSchema, RouteTable};
use serde_json::{json, Map, Value};

pub fn document(routes: &RouteTable, links: &Links) -> Value {
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
            "description": "Events, venues, organizers, event categories and event tags, compatible with The Events Calendar REST API v1 under the namespace cal/events/v1. Authenticate with HTTP Basic credentials."
        },
        "servers": [{"url": links.namespace()}],
        "paths": paths,
        "components": components(),
        "security": [{}, {"basicAuth": []}],
    })
}

/// The documented operations of one endpoint: an Edit group is documented three times
/// (`post`, `put`, `patch`), with distinct operation IDs (§2.4 item 1).
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

fn operation(endpoint: &Endpoint, operation_id: String) -> Value {
    let parameters: Vec<Value> = endpoint.params.iter().map(parameter).collect();
    let mut op = json!({
        "operationId": operation_id,
        "summary": endpoint.summary,
        "parameters": parameters,
        "responses": responses(endpoint),
    });
    if endpoint.group != Group::Read {
        op["security"] = json!([{"basicAuth": []}]);
    }
    op
}

fn parameter(spec: &ParamSpec) -> Value {
    let mut p = json!({
        "name": spec.name,
        "in": match spec.location { Location::Path => "path", Location::Query => "query" },
        "required": spec.required,
        "schema": Value::Object(spec.schema()),
    });
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
                json!({"description": "Not modified (If-None-Match).", "headers": {"ETag": {"$ref": "#/components/headers/ETag"}}})
            }
            _ => json!({"$ref": format!("#/components/responses/Error{status}")}),
        };
        out.insert(status.to_string(), entry);
    }
    Value::Object(out)
}

fn success(endpoint: &Endpoint, status: u16, is_read: bool) -> Value {
    let schema = match &endpoint.response {
        ResponseSchema::Component(name) => json!({"$ref": format!("#/components/schemas/{name}")}),
        ResponseSchema::AnyObject => json!({"type": "object"}),
    };
    let mut headers = Map::new();
    headers.insert("Link".into(), json!({"$ref": "#/components/headers/Link"}));
    if is_read {
        headers.insert("ETag".into(), json!({"$ref": "#/components/headers/ETag"}));
    }
    if endpoint.class == OperationClass::List {
        headers.insert(
            "X-Cal-Total".into(),
            json!({"$ref": "#/components/headers/X-Cal-Total"}),
        );
        headers.insert(
            "X-Cal-TotalPages".into(),
            json!({"$ref": "#/components/headers/X-Cal-TotalPages"}),
        );
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
        "content": {"application/json": {"schema": schema}},
    })
}

const ERROR_STATUSES: [(u16, &str); 10] = [
    (
        400,
        "Invalid request: missing or invalid parameters, malformed JSON.",
    ),
    (401, "Bad credentials, or authentication required."),
    (403, "The caller may not do this."),
    (404, "No such route or record."),
    (409, "Translation-group conflict."),
    (410, "The record is already in the trash."),
    (413, "The request body is larger than 1 MiB."),
    (414, "The request target is longer than 8192 bytes."),
    (415, "Unsupported body media type or encoding."),
    (500, "Unexpected server failure."),
];

fn components() -> Value {
    let mut responses = Map::new();
    for (status, description) in ERROR_STATUSES {
        responses.insert(
            format!("Error{status}"),
            json!({
                "description": description,
                "headers": {"Link": {"$ref": "#/components/headers/Link"}},
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
            }),
        );
    }
    json!({
        "schemas": schemas(),
        "parameters": {},
        "responses": responses,
        "headers": {
            "Link": {"description": "The REST API discovery link, and next/prev links on lists.", "required": true, "schema": {"type": "string"}},
            "ETag": {"description": "Weak entity tag of the body.", "schema": {"type": "string"}},
            "Location": {"description": "The URL of the created record.", "required": true, "schema": {"type": "string"}},
            "X-Cal-Total": {"description": "Number of matching records.", "required": true, "schema": {"type": "integer"}},
            "X-Cal-TotalPages": {"description": "Number of pages.", "required": true, "schema": {"type": "integer"}},
        },
        "securitySchemes": {"basicAuth": {"type": "http", "scheme": "basic"}},
    })
}

fn schemas() -> Value {
    json!({
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
    })
}
