//! Meta routes: namespace index, REST root index, route descriptions via OPTIONS, `/doc`,
//! `/healthz`, CORS, language segments in links.

mod common;

use common::schema::{check_openapi, pointer, resolve, validate};
use common::*;
use serde_json::{json, Value};
use std::sync::OnceLock;

fn server() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(|| Server::start_with_users(&[ADMIN, EDITOR]).into_static())
}

/// The namespace index's route keys, in order (as the decoded JSON strings).
const CATALOGUE: [&str; 15] = [
    "/cal/events/v1",
    "/cal/events/v1/doc",
    "/cal/events/v1/events",
    "/cal/events/v1/events/(?P<id>\\d+)",
    "/cal/events/v1/events/by-slug/(?P<slug>[^/]+)",
    "/cal/events/v1/venues",
    "/cal/events/v1/venues/(?P<id>\\d+)",
    "/cal/events/v1/venues/by-slug/(?P<slug>[^/]+)",
    "/cal/events/v1/organizers",
    "/cal/events/v1/organizers/(?P<id>\\d+)",
    "/cal/events/v1/organizers/by-slug/(?P<slug>[^/]+)",
    "/cal/events/v1/categories",
    "/cal/events/v1/categories/(?P<id>\\d+)",
    "/cal/events/v1/tags",
    "/cal/events/v1/tags/(?P<id>\\d+)",
];

/// Handler groups per catalogue route (READ, CREATE, EDIT, DELETE in the route's order).
fn expected_groups(route_index: usize) -> Vec<Vec<&'static str>> {
    let read = vec!["GET"];
    let create = vec!["POST"];
    let edit = vec!["POST", "PUT", "PATCH"];
    let delete = vec!["DELETE"];
    match route_index {
        0 | 1 => vec![read],
        2 | 5 | 8 | 11 | 13 => vec![read, create],
        3 | 4 | 6 | 7 | 9 | 10 => vec![read, delete, edit],
        12 | 14 => vec![read, edit, delete],
        _ => unreachable!(),
    }
}

const LANGS: [&str; 3] = ["", "/pt-br", "/es"];
const ARG_KEYS: [&str; 17] = [
    "description",
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
    "required",
];

fn ns_index(l: &str) -> Value {
    let r = server().get(&format!("{l}{NS}"));
    assert_eq!(r.status, 200, "{}", r.describe());
    r.json()
}

fn translation_language_arg_ok(arg: &Value) -> bool {
    arg["type"] == "string"
        && arg["enum"] == json!(["en", "pt-br", "es"])
        && arg["required"] == false
}

// ---------------------------------------------------------------------------------------------
// Namespace index
// ---------------------------------------------------------------------------------------------

#[test]
fn namespace_index_top_level_shape_and_headers() {
    let s = server();
    for l in LANGS {
        let r = s.get(&format!("{l}{NS}"));
        assert_eq!(r.status, 200, "{}", r.describe());
        assert_json_content_type(&r);
        assert_standard_headers(&r);
        assert_eq!(
            r.header("allow"),
            Some("GET"),
            "Allow on the namespace index"
        );
        assert_eq!(r.header("cache-control"), Some(CC_ANON));
        assert_discovery_link(&r, &format!("{}{l}", s.public));
        assert_etag(&r);
        assert!(
            !r.has("x-cal-api-version") && !r.has("x-cal-api-root") && !r.has("x-cal-api-origin"),
            "discovery headers are for the REST root index only"
        );
        assert_compact_json(&r.body);
        let v = r.json();
        assert_eq!(keys(&v), vec!["namespace", "routes", "_links"]);
        assert_eq!(v["namespace"], "cal/events/v1");
        assert!(v["routes"].is_object());
        let up = json!({"up": [{"href": format!("{}{l}/", s.public)}]});
        assert!(
            same_json(&v["_links"], &up),
            "_links must be {up}, got {}",
            v["_links"]
        );
    }
}

#[test]
fn namespace_index_lists_root_and_doc_first_then_catalogue_routes_in_order() {
    let v = ns_index("");
    let ks = keys(&v["routes"]);
    assert!(ks.len() >= 2, "at least the two meta routes: {ks:?}");
    assert_eq!(ks[0], "/cal/events/v1");
    assert_eq!(ks[1], "/cal/events/v1/doc");
    let mut last = None;
    for k in &ks {
        let pos = CATALOGUE
            .iter()
            .position(|c| c == k)
            .unwrap_or_else(|| panic!("index key {k:?} is not a catalogue route"));
        if let Some(prev) = last {
            assert!(pos > prev, "routes must follow the catalogue order: {ks:?}");
        }
        last = Some(pos);
    }
    // The index text writes the regex backslash escaped, as WordPress does.
    let raw = server().get(NS).text();
    for k in &ks {
        if k.contains("\\d") {
            assert!(raw.contains(&k.replace('\\', "\\\\")));
        }
    }
}

#[test]
fn namespace_index_route_entries_follow_the_wordpress_shape() {
    let s = server();
    for l in LANGS {
        let v = ns_index(l);
        for (key, entry) in v["routes"].as_object().unwrap() {
            let idx = CATALOGUE
                .iter()
                .position(|c| c == key)
                .expect("catalogue route");
            let placeholder = key.contains("(?P<");
            let mut want_keys = vec!["namespace", "methods", "endpoints"];
            if !placeholder {
                want_keys.push("_links");
            }
            assert_eq!(keys(entry), want_keys, "keys of route entry {key}");
            assert_eq!(entry["namespace"], "cal/events/v1", "{key}");

            let groups = expected_groups(idx);
            let endpoints = entry["endpoints"]
                .as_array()
                .unwrap_or_else(|| panic!("{key}: endpoints array"));
            let got_groups: Vec<Vec<String>> = endpoints
                .iter()
                .map(|e| {
                    assert_eq!(keys(e), vec!["methods", "args"], "{key}: endpoint keys");
                    e["methods"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|m| m.as_str().unwrap().to_string())
                        .collect()
                })
                .collect();
            assert_eq!(got_groups, groups, "{key}: handler groups");
            let concat: Vec<Value> = groups.iter().flatten().map(|m| json!(m)).collect();
            assert_eq!(
                entry["methods"],
                Value::Array(concat),
                "{key}: methods = concatenated endpoint methods"
            );

            for e in endpoints {
                let args = e["args"]
                    .as_object()
                    .unwrap_or_else(|| panic!("{key}: args must be an object, got {}", e["args"]));
                for (name, a) in args {
                    let ak = keys(a);
                    for k in &ak {
                        assert!(
                            ARG_KEYS.contains(&k.as_str()),
                            "{key}: arg {name} has forbidden key {k:?}"
                        );
                    }
                    assert_eq!(
                        ak.last().map(|s| s.as_str()),
                        Some("required"),
                        "{key}: arg {name}: `required` last"
                    );
                    assert!(
                        a["required"].is_boolean(),
                        "{key}: arg {name}: required is boolean"
                    );
                }
                let tl = args.get("translation_language").unwrap_or_else(|| {
                    panic!(
                        "{key} {}: translation_language on every group",
                        e["methods"]
                    )
                });
                assert!(
                    translation_language_arg_ok(tl),
                    "{key}: translation_language arg {tl}"
                );
                if key.contains("(?P<id>") {
                    assert_eq!(args["id"]["type"], "integer", "{key}: id arg");
                    assert_eq!(args["id"]["required"], true, "{key}: id arg");
                }
                if key.contains("(?P<slug>") {
                    assert_eq!(args["slug"]["required"], true, "{key}: slug arg");
                }
            }
            if !placeholder {
                let want = json!({"self": [{"href": format!("{}{l}{key}", s.public)}]});
                assert!(
                    same_json(&entry["_links"], &want),
                    "{key}: _links {} != {want}",
                    entry["_links"]
                );
            }
        }
    }
}

#[test]
fn namespace_index_documents_its_own_and_the_doc_route_parameters() {
    let v = ns_index("");
    let root = &v["routes"]["/cal/events/v1"]["endpoints"][0]["args"];
    assert_eq!(
        keys(root),
        vec!["namespace", "context", "translation_language"],
        "namespace index parameters"
    );
    assert_eq!(root["namespace"]["default"], "cal/events/v1");
    assert_eq!(root["namespace"]["required"], false);
    assert_eq!(root["context"]["default"], "view");
    assert_eq!(root["context"]["required"], false);
    assert!(translation_language_arg_ok(&root["translation_language"]));
    let doc = &v["routes"]["/cal/events/v1/doc"]["endpoints"][0]["args"];
    assert_eq!(
        keys(doc),
        vec!["translation_language"],
        "/doc takes only translation_language"
    );
}

#[test]
fn namespace_parameter_accepts_only_the_namespace() {
    let s = server();
    for q in ["?namespace=cal/events/v1", "?namespace=cal%2Fevents%2Fv1"] {
        let r = s.get(&format!("{NS}{q}"));
        assert_eq!(r.status, 200, "{q}: {}", r.describe());
    }
    for q in [
        "?namespace=",
        "?namespace=wp/v2",
        "?namespace=CAL/events/v1",
        "?namespace=cal/events/v2",
        "?namespace=tribe/events/v1",
    ] {
        let r = s.get(&format!("{NS}{q}"));
        assert_plain_error(&r, 404, "rest_invalid_namespace");
        assert_eq!(
            r.header("allow"),
            Some("GET"),
            "errors after routing carry Allow"
        );
        assert_standard_headers(&r);
        assert_discovery_link(&r, &s.public);
    }
}

#[test]
fn translation_language_is_validated_on_the_namespace_index() {
    let s = server();
    for bad in ["fr", "PT-BR", "EN", "", "pt_br", "en-us"] {
        for path in [
            format!("{NS}?translation_language={bad}"),
            format!("/es{NS}?translation_language={bad}"),
        ] {
            let r = s.get(&path);
            assert_invalid_params(&r, &[("translation_language", "rest_not_in_enum")]);
            assert_eq!(r.header("allow"), Some("GET"));
        }
    }
}

#[test]
fn valid_translation_language_does_not_change_the_index() {
    let s = server();
    for l in LANGS {
        let plain = s.get(&format!("{l}{NS}"));
        for tl in ["en", "pt-br", "es"] {
            let r = s.get(&format!("{l}{NS}?translation_language={tl}"));
            assert_eq!(r.status, 200, "{}", r.describe());
            assert_eq!(
                r.body, plain.body,
                "content does not depend on translation_language; links use the path segment"
            );
            assert_eq!(r.header("etag"), plain.header("etag"));
        }
    }
}

#[test]
fn translation_language_repeated_key_last_wins_and_list_form_is_invalid_type() {
    let s = server();
    let r = s.get(&format!(
        "{NS}?translation_language=fr&translation_language=es"
    ));
    assert_eq!(
        r.status,
        200,
        "last occurrence of a scalar wins: {}",
        r.describe()
    );
    let r = s.get(&format!(
        "{NS}?translation_language=es&translation_language=fr"
    ));
    assert_invalid_params(&r, &[("translation_language", "rest_not_in_enum")]);
    let r = s.get(&format!("{NS}?translation_language[]=es"));
    assert_invalid_params(&r, &[("translation_language", "rest_invalid_type")]);
}

#[test]
fn context_and_unknown_parameters_are_ignored() {
    let s = server();
    let plain = s.get(NS);
    for q in [
        "?context=edit",
        "?context=anything",
        "?foo=bar",
        "?Page=3&_fields=id&_embed=1&rest_route=/x",
        "?TRANSLATION_LANGUAGE=fr",
    ] {
        let r = s.get(&format!("{NS}{q}"));
        assert_eq!(r.status, 200, "{q}: {}", r.describe());
        assert_eq!(r.body, plain.body, "{q}");
    }
}

#[test]
fn language_segment_links_differ_only_by_segment() {
    let s = server();
    let en = s.get(NS).text();
    for l in ["/pt-br", "/es"] {
        let t = s.get(&format!("{l}{NS}")).text();
        let p = &s.public;
        let normalized = t.replace(&format!("{p}{l}/"), &format!("{p}/"));
        assert_eq!(
            normalized, en,
            "the {l} index differs from the default one only in its links"
        );
        assert!(t.contains(&format!("\"href\":\"{p}{l}/cal/events/v1\"")));
        assert!(t.contains(&format!("\"href\":\"{p}{l}/\"")));
    }
}

// ---------------------------------------------------------------------------------------------
// REST root index
// ---------------------------------------------------------------------------------------------

#[test]
fn rest_root_index_body_headers_and_routes() {
    let s = server();
    let p = s.public.clone();
    for (path, l) in [
        ("/", ""),
        ("/pt-br/", "/pt-br"),
        ("/es/", "/es"),
        ("/es", "/es"),
        ("/pt-br", "/pt-br"),
        ("/?context=edit", ""),
    ] {
        let r = s.get(path);
        assert_eq!(r.status, 200, "{path}: {}", r.describe());
        assert_json_content_type(&r);
        assert_standard_headers(&r);
        assert_compact_json(&r.body);
        assert_eq!(r.header("x-cal-api-version"), Some("v1"), "{path}");
        assert_eq!(
            r.header("x-cal-api-root"),
            Some(format!("{p}{l}/cal/events/v1/").as_str()),
            "{path}"
        );
        assert_eq!(r.header("x-cal-api-origin"), Some(p.as_str()), "{path}");
        assert_eq!(r.header("allow"), Some("GET"), "{path}");
        assert_eq!(r.header("cache-control"), Some(CC_ANON), "{path}");
        assert_discovery_link(&r, &format!("{p}{l}"));
        assert_etag(&r);
        let v = r.json();
        assert_eq!(
            keys(&v),
            vec![
                "name",
                "description",
                "url",
                "home",
                "gmt_offset",
                "timezone_string",
                "namespaces",
                "routes"
            ],
            "{path}"
        );
        assert_eq!(v["name"], "almanac");
        assert_eq!(v["description"], "Events calendar REST service");
        assert_eq!(v["url"], json!(p), "url is P (no language segment)");
        assert_eq!(v["home"], json!(p));
        assert!(
            v["gmt_offset"].is_i64() && v["gmt_offset"] == 0,
            "gmt_offset is the integer 0"
        );
        assert_eq!(v["timezone_string"], "UTC");
        assert_eq!(v["namespaces"], json!(["cal/events/v1"]));
        let routes = v["routes"].as_object().unwrap();
        let rk: Vec<&String> = routes.keys().collect();
        assert_eq!(rk[0], "/", "{path}: the `/` entry comes first");
        // Contract ambiguity: the `/` entry's self link under a language segment. We read "links
        // built from the request's language segment" as P + L + "/".
        let root_entry = json!({
            "namespace": "",
            "methods": ["GET"],
            "endpoints": [{"methods": ["GET"], "args": {"context": {"default": "view", "required": false}}}],
            "_links": {"self": [{"href": format!("{p}{l}/")}]}
        });
        assert!(
            same_json(&routes["/"], &root_entry),
            "{path}: `/` entry {} != {root_entry}",
            routes["/"]
        );
        // Then exactly the namespace index entries, same order, same language.
        let idx = ns_index(l);
        let mut rest = serde_json::Map::new();
        for (k, e) in routes.iter().skip(1) {
            rest.insert(k.clone(), e.clone());
        }
        assert!(
            same_json(&Value::Object(rest), &idx["routes"]),
            "{path}: routes after `/` must equal the namespace index routes"
        );
    }
}

#[test]
fn rest_root_index_only_for_known_language_segments() {
    let s = server();
    for path in [
        "/en/", "/en", "/fr/", "/ES/", "/pt_BR/", "/pt-BR/", "/PT-BR",
    ] {
        let r = s.get(path);
        assert_plain_error(&r, 404, "rest_no_route");
        assert!(
            !r.has("x-cal-api-version"),
            "{path}: discovery headers only on the REST root index"
        );
        assert!(!r.has("allow"), "{path}: unmatched path has no Allow");
    }
}

#[test]
fn discovery_headers_only_on_the_rest_root_index() {
    let s = server();
    for path in [
        NS.to_string(),
        format!("{NS}/doc"),
        "/healthz".to_string(),
        "/nope".to_string(),
    ] {
        let r = s.get(&path);
        for h in ["x-cal-api-version", "x-cal-api-root", "x-cal-api-origin"] {
            assert!(!r.has(h), "{path} must not carry {h}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// OPTIONS
// ---------------------------------------------------------------------------------------------

#[test]
fn options_on_meta_routes_answers_the_route_description_with_allow() {
    let s = server();
    for l in LANGS {
        let idx = ns_index(l);
        for (path, key) in [
            (format!("{l}{NS}"), "/cal/events/v1"),
            (format!("{l}{NS}/doc"), "/cal/events/v1/doc"),
            (format!("{l}{NS}/"), "/cal/events/v1"),
        ] {
            let r = s.req("OPTIONS", &path).send();
            assert_eq!(r.status, 200, "OPTIONS {path}: {}", r.describe());
            assert_json_content_type(&r);
            assert_standard_headers(&r);
            assert_eq!(r.header("allow"), Some("GET"), "OPTIONS {path}: Allow");
            assert_eq!(
                r.header("cache-control"),
                Some(CC_ANON),
                "OPTIONS {path}: anonymous 200"
            );
            assert_discovery_link(&r, &format!("{}{l}", s.public));
            let v = r.json();
            assert!(
                same_json(&v, &idx["routes"][key]),
                "OPTIONS {path}: body must be the index entry {key}; got {v}"
            );
        }
        // REST root: the `/` entry.
        let root_path = if l.is_empty() {
            "/".to_string()
        } else {
            format!("{l}/")
        };
        let r = s.req("OPTIONS", &root_path).send();
        assert_eq!(r.status, 200, "OPTIONS {root_path}: {}", r.describe());
        assert_eq!(r.header("allow"), Some("GET"));
        let root = s.get(&root_path).json();
        assert!(
            same_json(&r.json(), &root["routes"]["/"]),
            "OPTIONS {root_path}: the `/` entry of the root index"
        );
    }
}

#[test]
fn options_performs_no_parameter_validation() {
    let s = server();
    for q in [
        "?translation_language=xx",
        "?namespace=other",
        "?translation_language[]=es",
    ] {
        let r = s.req("OPTIONS", &format!("{NS}{q}")).send();
        assert_eq!(r.status, 200, "OPTIONS {NS}{q}: {}", r.describe());
        let r = s.req("OPTIONS", &format!("{NS}/doc{q}")).send();
        assert_eq!(r.status, 200, "OPTIONS /doc{q}: {}", r.describe());
    }
}

#[test]
fn options_on_unknown_paths_is_404_rest_no_route() {
    let s = server();
    for path in [
        format!("{NS}/nope"),
        "/nope".to_string(),
        format!("/en{NS}"),
        format!("{NS}/events/abc"),
        "/cal/events".to_string(),
    ] {
        let r = s.req("OPTIONS", &path).send();
        assert_plain_error(&r, 404, "rest_no_route");
        assert_standard_headers(&r);
    }
}

// ---------------------------------------------------------------------------------------------
// CORS
// ---------------------------------------------------------------------------------------------

fn assert_cors_origin(r: &Resp, origin: &str) {
    assert_eq!(
        r.header("access-control-allow-origin"),
        Some(origin),
        "ACAO echoes Origin; {}",
        r.describe()
    );
    assert_eq!(
        r.header("access-control-allow-credentials"),
        Some("true"),
        "ACAC; {}",
        r.describe()
    );
    assert_eq!(
        r.header("access-control-allow-methods").map(tokens),
        Some(tokens(ALLOW_METHODS)),
        "ACAM; {}",
        r.describe()
    );
    assert_standard_headers(r);
    assert!(
        !r.has("access-control-max-age"),
        "no Access-Control-Max-Age"
    );
}

#[test]
fn cors_headers_without_origin() {
    let s = server();
    for path in [NS, "/", "/nope"] {
        let r = s.get(path);
        assert_standard_headers(&r);
        for h in [
            "access-control-allow-origin",
            "access-control-allow-credentials",
            "access-control-allow-methods",
        ] {
            assert!(!r.has(h), "{path}: {h} only when the request has Origin");
        }
    }
}

#[test]
fn cors_headers_with_origin_on_success_and_errors() {
    let s = server();
    let o = "https://app.example.com";
    let r = s.req("GET", NS).header("Origin", o).send();
    assert_eq!(r.status, 200);
    assert_cors_origin(&r, o);
    let r = s.req("GET", "/").header("Origin", o).send();
    assert_cors_origin(&r, o);
    let r = s
        .req("GET", &format!("{NS}/doc"))
        .header("Origin", o)
        .send();
    assert_cors_origin(&r, o);
    // errors
    let r = s
        .req("GET", &format!("{NS}/nope"))
        .header("Origin", o)
        .send();
    assert_plain_error(&r, 404, "rest_no_route");
    assert_cors_origin(&r, o);
    let r = s
        .req("GET", &format!("{NS}?translation_language=xx"))
        .header("Origin", o)
        .send();
    assert_eq!(r.status, 400);
    assert_cors_origin(&r, o);
    let r = s
        .req("GET", NS)
        .header("Origin", o)
        .auth("admin", "wrong-password")
        .send();
    assert_plain_error(&r, 401, "incorrect_password");
    assert_cors_origin(&r, o);
    let r = s.req("DELETE", NS).header("Origin", o).send();
    assert_plain_error(&r, 404, "rest_no_route");
    assert_cors_origin(&r, o);
    // The literal `null` origin is echoed.
    let r = s.req("GET", NS).header("Origin", "null").send();
    assert_cors_origin(&r, "null");
}

#[test]
fn cors_preflight_on_matched_routes() {
    let s = server();
    let o = "http://localhost:3000";
    for path in [
        NS.to_string(),
        format!("{NS}/doc"),
        "/".to_string(),
        format!("/es{NS}"),
    ] {
        let r = s
            .req("OPTIONS", &path)
            .header("Origin", o)
            .header("Access-Control-Request-Method", "POST")
            .header(
                "Access-Control-Request-Headers",
                "authorization, content-type, x-wp-nonce",
            )
            .send();
        assert_eq!(r.status, 200, "preflight {path}: {}", r.describe());
        assert_cors_origin(&r, o);
        assert_eq!(r.header("allow"), Some("GET"));
        let body = r.json();
        assert_eq!(
            body["methods"],
            json!(["GET"]),
            "preflight body is the route description"
        );
    }
    // Preflight on an unknown path: 404 with CORS headers.
    let r = s
        .req("OPTIONS", &format!("{NS}/nope"))
        .header("Origin", o)
        .header("Access-Control-Request-Method", "GET")
        .send();
    assert_plain_error(&r, 404, "rest_no_route");
    assert_cors_origin(&r, o);
}

#[test]
fn cors_headers_on_304() {
    let s = server();
    let o = "https://app.example.com";
    let etag = assert_etag(&s.get(NS));
    let r = s
        .req("GET", NS)
        .header("Origin", o)
        .header("If-None-Match", &etag)
        .send();
    assert_eq!(r.status, 304, "{}", r.describe());
    assert_cors_origin(&r, o);
}

// ---------------------------------------------------------------------------------------------
// /doc
// ---------------------------------------------------------------------------------------------

fn doc(l: &str) -> (Resp, Value) {
    let r = server().get(&format!("{l}{NS}/doc"));
    assert_eq!(r.status, 200, "{}", r.describe());
    let v = r.json();
    (r, v)
}

/// The plugin's documented paths, plus almanac's administrators-only reindex route (an
/// extension, documented in `/doc` but not part of the plugin's catalogue).
const DOC_PATHS: [&str; 22] = [
    "/",
    "/doc",
    "/events.ics",
    "/events/{id}.ics",
    "/events/by-slug/{slug}.ics",
    "/events",
    "/events/{id}",
    "/events/by-slug/{slug}",
    "/venues",
    "/venues/{id}",
    "/venues/by-slug/{slug}",
    "/organizers",
    "/organizers/{id}",
    "/organizers/by-slug/{slug}",
    "/categories",
    "/categories/{id}",
    "/tags",
    "/tags/{id}",
    "/index/rebuild",
    "/changes",
    "/webhooks",
    "/webhooks/{id}",
];

/// Expected `(method, operationId)` pairs of a documented path.
fn expected_operations(path: &str) -> Vec<(&'static str, String)> {
    let kind = |p: &str| -> (&'static str, &'static str) {
        match p.split('/').nth(1).unwrap() {
            "events" => ("Event", "Events"),
            "venues" => ("Venue", "Venues"),
            "organizers" => ("Organizer", "Organizers"),
            "categories" => ("Category", "Categories"),
            "tags" => ("Tag", "Tags"),
            other => panic!("{other}"),
        }
    };
    match path {
        "/" => vec![("get", "getNamespaceIndex".into())],
        "/doc" => vec![("get", "getDocumentation".into())],
        "/index/rebuild" => vec![("post", "rebuildIndex".into())],
        // The change feed (docs/api.md, "Following changes"): read-only.
        "/changes" => vec![("get", "listChanges".into())],
        // Webhooks (docs/api.md, "Webhooks"): administrators only.
        "/webhooks" => vec![
            ("get", "listWebhooks".into()),
            ("post", "createWebhook".into()),
        ],
        "/webhooks/{id}" => vec![
            ("get", "getWebhook".into()),
            ("post", "resumeWebhook".into()),
            ("put", "resumeWebhookPut".into()),
            ("patch", "resumeWebhookPatch".into()),
            ("delete", "deleteWebhook".into()),
        ],
        // Calendar feeds (docs/api.md, "Calendar feeds"): read-only.
        "/events.ics" => vec![("get", "listEventsCalendar".into())],
        "/events/{id}.ics" => vec![("get", "getEventCalendar".into())],
        "/events/by-slug/{slug}.ics" => vec![("get", "getEventCalendarBySlug".into())],
        p if p.matches('/').count() == 1 => {
            let (one, many) = kind(p);
            vec![
                ("get", format!("list{many}")),
                ("post", format!("create{one}")),
            ]
        }
        p => {
            let (one, _) = kind(p);
            let sfx = if p.contains("by-slug") { "BySlug" } else { "" };
            vec![
                ("get", format!("get{one}{sfx}")),
                ("post", format!("update{one}{sfx}")),
                ("put", format!("update{one}{sfx}Put")),
                ("patch", format!("update{one}{sfx}Patch")),
                ("delete", format!("delete{one}{sfx}")),
            ]
        }
    }
}

#[test]
fn doc_top_level_is_openapi_3_1_with_servers_security_and_components() {
    let s = server();
    let (r, d) = doc("");
    assert_json_content_type(&r);
    assert_standard_headers(&r);
    assert_eq!(r.header("allow"), Some("GET"));
    assert_eq!(r.header("cache-control"), Some(CC_ANON));
    assert_discovery_link(&r, &s.public);
    assert_etag(&r);
    assert_compact_json(&r.body);
    assert_eq!(d["openapi"], "3.1.0");
    assert_eq!(d["info"]["version"], "1.0.0");
    assert!(
        d["info"]["title"].is_string() && d["info"]["description"].is_string(),
        "info has title and description"
    );
    assert_eq!(
        d["servers"],
        json!([{"url": format!("{}{NS}", s.public)}]),
        "exactly one server: N without trailing slash"
    );
    assert_eq!(d["security"], json!([{}, {"basicAuth": []}]));
    for k in [
        "schemas",
        "parameters",
        "responses",
        "headers",
        "securitySchemes",
    ] {
        assert!(
            d["components"][k].is_object(),
            "components.{k} must be present"
        );
    }
    assert_eq!(
        d["components"]["securitySchemes"]["basicAuth"]["type"],
        "http"
    );
    assert_eq!(
        d["components"]["securitySchemes"]["basicAuth"]["scheme"],
        "basic"
    );
    assert_eq!(keys(&d["components"]["securitySchemes"]), vec!["basicAuth"]);
    for sch in ["Error", "NamespaceIndex", "RouteDescription"] {
        assert!(
            d["components"]["schemas"][sch].is_object(),
            "components.schemas.{sch} required"
        );
    }
    for k in [
        "openapi",
        "info",
        "servers",
        "paths",
        "components",
        "security",
    ] {
        assert!(d.get(k).is_some(), "top-level key {k}");
    }
}

#[test]
fn doc_is_a_structurally_valid_openapi_3_1_document() {
    let (_, d) = doc("");
    let errs = check_openapi(&d);
    assert!(errs.is_empty(), "OpenAPI problems:\n{}", errs.join("\n"));
}

#[test]
fn doc_documents_the_meta_paths_with_their_operation_ids() {
    let (_, d) = doc("");
    let paths = d["paths"].as_object().expect("paths object");
    assert!(
        paths.contains_key("/") && paths.contains_key("/doc"),
        "paths must have / and /doc: {:?}",
        paths.keys()
    );
    assert!(
        !paths.contains_key("/healthz"),
        "/healthz is not documented"
    );
    for (p, item) in paths {
        assert!(DOC_PATHS.contains(&p.as_str()), "unexpected path {p:?}");
        let ops: Vec<&str> = [
            "get", "put", "post", "delete", "options", "head", "patch", "trace",
        ]
        .into_iter()
        .filter(|m| item.get(*m).is_some())
        .collect();
        let want = expected_operations(p);
        let mut want_methods: Vec<&str> = want.iter().map(|(m, _)| *m).collect();
        let mut got = ops.clone();
        want_methods.sort();
        got.sort();
        assert_eq!(got, want_methods, "{p}: operations");
        for (m, id) in want {
            assert_eq!(item[m]["operationId"], json!(id), "{m} {p}: operationId");
        }
    }
}

fn op_params<'a>(d: &'a Value, path: &str, method: &str) -> Vec<&'a Value> {
    let item = &d["paths"][path];
    let mut out = Vec::new();
    for src in [&item["parameters"], &item[method]["parameters"]] {
        if let Some(a) = src.as_array() {
            for p in a {
                out.push(resolve(d, p));
            }
        }
    }
    out
}

#[test]
fn doc_meta_operations_document_their_parameters() {
    let (_, d) = doc("");
    for (path, want) in [
        ("/", vec!["namespace", "context", "translation_language"]),
        ("/doc", vec!["translation_language"]),
    ] {
        let ps = op_params(&d, path, "get");
        let names: Vec<&str> = ps.iter().map(|p| p["name"].as_str().unwrap()).collect();
        for w in &want {
            assert!(
                names.contains(w),
                "get {path}: parameter {w} must be documented; got {names:?}"
            );
        }
        let tl = ps
            .iter()
            .find(|p| p["name"] == "translation_language")
            .unwrap();
        assert_eq!(tl["in"], "query");
        let sch = resolve(&d, &tl["schema"]);
        assert_eq!(
            sch["enum"],
            json!(["en", "pt-br", "es"]),
            "translation_language schema"
        );
        assert_eq!(sch["type"], "string");
    }
}

#[test]
fn doc_meta_operations_document_every_status_headers_and_schemas() {
    let (_, d) = doc("");
    for (path, ok_schema) in [
        ("/", json!({"$ref": "#/components/schemas/NamespaceIndex"})),
        ("/doc", json!({"type": "object"})),
    ] {
        let op = &d["paths"][path]["get"];
        let responses = op["responses"].as_object().expect("responses");
        let mut codes: Vec<&str> = responses.keys().map(|s| s.as_str()).collect();
        codes.sort();
        assert_eq!(
            codes,
            // The contract's table plus 429 and 503 (extensions: authentication throttling and
            // bounded password verification).
            vec!["200", "304", "400", "401", "404", "414", "429", "500", "503"],
            "get {path}: documented statuses"
        );
        let error_schema = pointer(&d, "#/components/schemas/Error").unwrap();
        for (code, resp) in responses {
            let resp = resolve(&d, resp);
            let headers = resp.get("headers").and_then(|h| h.as_object());
            let header = |n: &str| -> Option<&Value> {
                headers.and_then(|h| {
                    h.iter()
                        .find(|(k, _)| k.eq_ignore_ascii_case(n))
                        .map(|(_, v)| resolve(&d, v))
                })
            };
            if code == "304" {
                assert!(
                    header("Link").is_none(),
                    "get {path} 304: no Link header documented"
                );
            } else {
                let link = header("Link")
                    .unwrap_or_else(|| panic!("get {path} {code}: Link header documented"));
                assert_eq!(link["required"], true, "get {path} {code}: Link required");
                assert_eq!(resolve(&d, &link["schema"])["type"], "string");
            }
            if code == "200" || code == "304" {
                let etag =
                    header("ETag").unwrap_or_else(|| panic!("get {path} {code}: ETag documented"));
                assert_eq!(resolve(&d, &etag["schema"])["type"], "string");
            }
            if code.starts_with('4') || code.starts_with('5') {
                let sch = &resp["content"]["application/json"]["schema"];
                let uses_error = *sch == json!({"$ref": "#/components/schemas/Error"})
                    || same_json(resolve(&d, sch), error_schema);
                assert!(
                    uses_error,
                    "get {path} {code}: errors use the Error schema, got {sch}"
                );
            }
            if code == "200" {
                let sch = &resp["content"]["application/json"]["schema"];
                assert!(
                    same_json(sch, &ok_schema),
                    "get {path} 200 schema: want {ok_schema}, got {sch}"
                );
            }
        }
        if let Some(sec) = op.get("security") {
            assert_eq!(
                *sec, d["security"],
                "reads keep the document default security"
            );
        }
    }
}

#[test]
fn doc_is_byte_for_byte_deterministic() {
    let (a, _) = doc("");
    let (b, _) = doc("");
    assert_eq!(a.body, b.body, "two /doc answers must be identical");
    assert_eq!(a.header("etag"), b.header("etag"));
    let (c, _) = doc("");
    assert_eq!(a.body, c.body);
}

#[test]
fn doc_server_url_follows_the_language_segment() {
    let s = server();
    let (en, _) = doc("");
    for l in ["/pt-br", "/es"] {
        let (r, d) = doc(l);
        let n = format!("{}{l}{NS}", s.public);
        assert_eq!(
            d["servers"],
            json!([{"url": n}]),
            "{l}: servers[0].url = N of the segment"
        );
        let normalized = r
            .text()
            .replace(&format!("{}{l}/", s.public), &format!("{}/", s.public));
        assert_eq!(
            normalized,
            en.text(),
            "{l}: the document differs only in its links"
        );
        assert_discovery_link(&r, &format!("{}{l}", s.public));
    }
}

#[test]
fn doc_validates_translation_language_without_changing_content() {
    let s = server();
    let (plain, _) = doc("");
    let r = s.get(&format!("{NS}/doc?translation_language=es"));
    assert_eq!(r.status, 200);
    assert_eq!(r.body, plain.body);
    let r = s.get(&format!("{NS}/doc?translation_language=de"));
    assert_invalid_params(&r, &[("translation_language", "rest_not_in_enum")]);
    assert_eq!(r.header("allow"), Some("GET"));
}

#[test]
fn live_responses_validate_against_the_documented_schemas() {
    let s = server();
    let (_, d) = doc("");
    let check = |schema_ref: &str, inst: &Value, what: &str| {
        let schema = json!({"$ref": schema_ref});
        let mut errs = Vec::new();
        validate(&d, &schema, inst, "$", &mut errs);
        assert!(
            errs.is_empty(),
            "{what} does not validate against {schema_ref}:\n{}",
            errs.join("\n")
        );
    };
    for l in LANGS {
        check(
            "#/components/schemas/NamespaceIndex",
            &ns_index(l),
            "namespace index",
        );
        let o = s.req("OPTIONS", &format!("{l}{NS}")).send().json();
        check(
            "#/components/schemas/RouteDescription",
            &o,
            "OPTIONS description",
        );
        let o = s.req("OPTIONS", &format!("{l}{NS}/doc")).send().json();
        check(
            "#/components/schemas/RouteDescription",
            &o,
            "OPTIONS /doc description",
        );
    }
    check(
        "#/components/schemas/Error",
        &s.get(&format!("{NS}/nope")).json(),
        "rest_no_route body",
    );
    check(
        "#/components/schemas/Error",
        &s.get(&format!("{NS}?translation_language=x")).json(),
        "rest_invalid_param body",
    );
    check(
        "#/components/schemas/Error",
        &s.get(&format!("{NS}?namespace=x")).json(),
        "rest_invalid_namespace body",
    );
    check(
        "#/components/schemas/Error",
        &s.req("GET", NS).auth("nobody", "x").send().json(),
        "invalid_username body",
    );
}

// ---------------------------------------------------------------------------------------------
// /healthz
// ---------------------------------------------------------------------------------------------

fn assert_health_ok(r: &Resp) {
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_json_content_type(r);
    assert_eq!(
        r.header("cache-control"),
        Some("no-store"),
        "/healthz: Cache-Control no-store"
    );
    assert!(!r.has("link"), "/healthz has no Link header");
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(r.header("x-robots-tag"), Some("noindex"));
    assert_vary(r);
}

#[test]
fn healthz_get_reports_status_version_and_position() {
    let s = server();
    let r = s.get("/healthz");
    assert_health_ok(&r);
    assert_compact_json(&r.body);
    let v = r.json();
    // The position moves with the writes of the other tests on this server.
    assert!(v["position"].is_u64(), "body {v}");
    let mut rest = v.clone();
    rest.as_object_mut().unwrap().remove("position");
    assert!(
        same_json(&rest, &json!({"status": "ok", "version": VERSION})),
        "body {v}"
    );
}

#[test]
fn healthz_head_has_no_body() {
    let s = server();
    let r = s.req("HEAD", "/healthz").send();
    assert_health_ok(&r);
    let raw = s.raw_req("HEAD", "/healthz", &[], b"");
    assert_eq!(raw.status, 200);
    assert!(raw.body.is_empty());
}

#[test]
fn healthz_ignores_parameters_and_credentials() {
    let s = server();
    for q in [
        "/healthz?translation_language=xx",
        "/healthz?foo=bar&_method=DELETE",
        "/healthz/",
    ] {
        assert_health_ok(&s.get(q));
    }
    assert_health_ok(
        &s.req("GET", "/healthz")
            .auth("admin", "definitely-wrong")
            .send(),
    );
    assert_health_ok(&s.req("GET", "/healthz").auth("no-such-user", "x").send());
    assert_health_ok(
        &s.req("GET", "/healthz")
            .header("Authorization", "Basic !!!")
            .send(),
    );
}

#[test]
fn healthz_other_methods_are_404() {
    let s = server();
    for m in ["POST", "PUT", "PATCH", "DELETE", "OPTIONS"] {
        let r = s.req(m, "/healthz").send();
        assert_plain_error(&r, 404, "rest_no_route");
    }
}

#[test]
fn healthz_takes_no_language_segment() {
    let s = server();
    for p in [
        "/es/healthz",
        "/pt-br/healthz",
        "/en/healthz",
        "/cal/events/v1/healthz",
        "/HEALTHZ",
    ] {
        assert_plain_error(&s.get(p), 404, "rest_no_route");
    }
}

#[test]
fn query_string_syntax_applies_to_translation_language() {
    let s = server();
    // `;` is not a separator, `+` is a space, a key without `=` has the empty value.
    for q in [
        "translation_language=es;x=1",
        "translation_language=es+",
        "translation_language",
        "translation_language=%20es",
    ] {
        let r = s.get(&format!("{NS}?{q}"));
        assert_invalid_params(&r, &[("translation_language", "rest_not_in_enum")]);
    }
    for q in [
        "translation_language=e%73",
        "translation_language=%70t-br",
        "x=1;translation_language=fr&translation_language=es",
    ] {
        let r = s.get(&format!("{NS}?{q}"));
        assert_eq!(r.status, 200, "?{q}: {}", r.describe());
    }
    // A later occurrence of another shape replaces the earlier one.
    let r = s.get(&format!(
        "{NS}?translation_language=es&translation_language[a]=es"
    ));
    assert_invalid_params(&r, &[("translation_language", "rest_invalid_type")]);
    let r = s.get(&format!(
        "{NS}?translation_language[]=es&translation_language=es"
    ));
    assert_eq!(r.status, 200, "{}", r.describe());
}

#[test]
fn invalid_utf8_or_nul_in_translation_language_is_rest_invalid_characters() {
    // Invalid UTF-8 or NUL in a query value is `rest_invalid_characters`; we expect that
    // sub-code to win over `rest_not_in_enum`.
    let s = server();
    for q in [
        "translation_language=%FF",
        "translation_language=es%00",
        "translation_language=%C3%28",
    ] {
        let r = s.raw_req("GET", &format!("{NS}?{q}"), &[], b"");
        assert_invalid_params(&r, &[("translation_language", "rest_invalid_characters")]);
    }
}

#[test]
fn wordpress_global_parameters_are_unknown_and_ignored() {
    let s = server();
    let plain = s.get(NS);
    for q in [
        "_envelope=1",
        "_jsonp=callback",
        "_fields=namespace",
        "_embed=1",
        "rest_route=/wp/v2",
    ] {
        let r = s.get(&format!("{NS}?{q}"));
        assert_eq!(r.status, 200, "?{q}");
        assert_eq!(r.body, plain.body, "?{q} has no effect");
        assert_json_content_type(&r);
    }
}
