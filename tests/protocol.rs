//! HTTP layer: path matching, methods / HEAD / override, bodies on GET, responses, processing
//! order, errors, standard headers, Link, ETag, Cache-Control, limits, compression.

mod common;

use common::*;
use serde_json::{json, Value};
use std::sync::OnceLock;

fn server() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(|| Server::start_with_users(&[ADMIN, EDITOR]).into_static())
}

fn raw_get(path: &str) -> Resp {
    server().raw_req("GET", path, &[], b"")
}

fn index_body() -> Vec<u8> {
    let r = server().get(NS);
    assert_eq!(r.status, 200, "{}", r.describe());
    r.body
}

fn doc_body() -> Vec<u8> {
    let r = server().get(&format!("{NS}/doc"));
    assert_eq!(r.status, 200, "{}", r.describe());
    r.body
}

// ---------------------------------------------------------------------------------------------
// Errors and unknown routes
// ---------------------------------------------------------------------------------------------

#[test]
fn unknown_route_answers_exactly_code_message_and_status() {
    let s = server();
    for path in [
        "/nope",
        "/cal/events/v1/nope",
        "/cal/events",
        "/cal",
        "/cal/events/v2",
        "/wp-json/tribe/events/v1",
        "/cal/events/v1/doc/extra",
    ] {
        let r = s.get(path);
        let v = assert_plain_error(&r, 404, "rest_no_route");
        assert_eq!(v["data"], json!({"status": 404}));
        assert_standard_headers(&r);
        assert_discovery_link(&r, &s.public);
        assert!(!r.has("allow"), "{path}: no Allow on an unmatched path");
        assert_compact_json(&r.body);
        let h = s.raw_req("HEAD", path, &[], b"");
        assert_eq!(h.status, 404, "HEAD {path}");
        assert!(h.body.is_empty());
        assert_eq!(h.header("content-type"), Some(JSON_CT));
    }
}

// ---------------------------------------------------------------------------------------------
// Path matching
// ---------------------------------------------------------------------------------------------

#[test]
fn trailing_slashes_are_removed_before_matching() {
    let idx = index_body();
    let doc = doc_body();
    for p in [
        "/cal/events/v1/",
        "/cal/events/v1//",
        "/cal/events/v1///?context=view",
    ] {
        let r = raw_get(p);
        assert_eq!(r.status, 200, "{p}: {}", r.describe());
        assert_eq!(r.body, idx, "{p} is the namespace root");
    }
    for p in ["/cal/events/v1/doc/", "/cal/events/v1/doc///"] {
        let r = raw_get(p);
        assert_eq!(r.status, 200, "{p}: {}", r.describe());
        assert_eq!(r.body, doc, "{p} is /doc");
    }
    for p in ["/es/cal/events/v1/", "/pt-br/cal/events/v1//"] {
        assert_eq!(raw_get(p).status, 200, "{p}");
    }
}

#[test]
fn empty_segments_in_the_middle_never_match() {
    for p in [
        "//cal/events/v1",
        "/cal//events/v1",
        "/cal/events//v1",
        "/cal/events/v1//doc",
        "/es//cal/events/v1",
        "//es/cal/events/v1",
    ] {
        assert_plain_error(&raw_get(p), 404, "rest_no_route");
    }
}

#[test]
fn literal_segments_are_case_sensitive() {
    for p in [
        "/CAL/events/v1",
        "/cal/EVENTS/v1",
        "/cal/events/V1",
        "/cal/events/v1/DOC",
        "/Cal/Events/V1/Doc",
        "/cal/events/v1/Doc",
    ] {
        assert_plain_error(&raw_get(p), 404, "rest_no_route");
    }
}

#[test]
fn only_lower_case_pt_br_and_es_are_language_segments() {
    for p in [
        "/en/cal/events/v1",
        "/ES/cal/events/v1",
        "/Es/cal/events/v1",
        "/pt_BR/cal/events/v1",
        "/pt-BR/cal/events/v1",
        "/fr/cal/events/v1",
        "/es/es/cal/events/v1",
        "/en/cal/events/v1/doc",
        "/pt/cal/events/v1",
    ] {
        assert_plain_error(&raw_get(p), 404, "rest_no_route");
    }
    for p in [
        "/es/cal/events/v1",
        "/pt-br/cal/events/v1",
        "/es/cal/events/v1/doc",
        "/pt-br/cal/events/v1/doc",
    ] {
        assert_eq!(raw_get(p).status, 200, "{p}");
    }
}

#[test]
fn segments_are_percent_decoded_before_matching() {
    let idx = index_body();
    for p in [
        "/%63al/events/v1",
        "/cal/events/%76%31",
        "/cal/%65vents/v1",
        "/c%61l/events/v1/",
    ] {
        let r = raw_get(p);
        assert_eq!(r.status, 200, "{p}: {}", r.describe());
        assert_eq!(r.body, idx, "{p}");
    }
    let doc = doc_body();
    for p in [
        "/cal/events/v1/%64oc",
        "/cal/events/v1/%64%6F%63",
        "/cal/events/v1/%64%6f%63",
    ] {
        let r = raw_get(p);
        assert_eq!(r.status, 200, "{p}: {}", r.describe());
        assert_eq!(r.body, doc, "{p}");
    }
    // The language segment is a segment like any other.
    let r = raw_get("/%65s/cal/events/v1");
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(
        r.json()["_links"]["up"][0]["href"],
        json!(format!("{}/es/", server().public))
    );
}

#[test]
fn an_encoded_slash_stays_inside_its_segment() {
    for p in [
        "/cal/events/v1%2Fdoc",
        "/cal%2Fevents%2Fv1",
        "/cal/events/v1/doc%2F",
        "/cal/events%2fv1",
        "/es%2Fcal/events/v1",
    ] {
        assert_plain_error(&raw_get(p), 404, "rest_no_route");
    }
}

#[test]
fn segments_that_are_not_valid_utf8_never_match() {
    for p in [
        "/cal/events/v1/%FF",
        "/%FF/cal/events/v1",
        "/cal/events/v1%C3%28",
        "/cal/events/v1/doc%FF",
        "/cal/events/v1/%C3",
        "/%ED%A0%80/cal/events/v1",
        "/cal/events/v1/%zz",
    ] {
        let r = raw_get(p);
        assert_plain_error(&r, 404, "rest_no_route");
    }
}

#[test]
fn the_query_starts_at_the_first_question_mark() {
    let s = server();
    for p in [
        "/cal/events/v1?x=?y",
        "/cal/events/v1?",
        "/cal/events/v1/doc?a=b?c/d",
        "/cal/events/v1/?",
    ] {
        assert_eq!(raw_get(p).status, 200, "{p}");
    }
    // `namespace` gets the value `cal/events/v1?x`: invalid.
    let r = raw_get("/cal/events/v1?namespace=cal/events/v1?x");
    assert_plain_error(&r, 404, "rest_invalid_namespace");
    let r = s.get("/cal/events/v1?namespace=cal/events/v1&y=?");
    assert_eq!(r.status, 200);
}

// ---------------------------------------------------------------------------------------------
// Methods
// ---------------------------------------------------------------------------------------------

#[test]
fn a_method_the_route_does_not_serve_is_404_with_allow() {
    let s = server();
    for (path, l) in [
        (NS.to_string(), ""),
        (format!("{NS}/"), ""),
        (format!("{NS}/doc"), ""),
        ("/".to_string(), ""),
        ("/es/".to_string(), "/es"),
        (format!("/pt-br{NS}"), "/pt-br"),
    ] {
        for m in ["POST", "PUT", "PATCH", "DELETE"] {
            let r = s.req(m, &path).send();
            assert_plain_error(&r, 404, "rest_no_route");
            assert_eq!(
                r.header("allow"),
                Some("GET"),
                "{m} {path}: Allow lists the route's methods"
            );
            assert_standard_headers(&r);
            assert_discovery_link(&r, &format!("{}{l}", s.public));
        }
    }
}

#[test]
fn unknown_methods_are_404_rest_no_route() {
    let s = server();
    for m in ["FOO", "PROPFIND", "BREW", "get"] {
        // A matched path with a method the route does not serve → 404 + Allow.
        let r = s.raw_req(m, NS, &[], b"");
        assert_plain_error(&r, 404, "rest_no_route");
        assert_eq!(r.header("allow"), Some("GET"), "{m} {NS}");
        let r = s.raw_req(m, "/nope", &[], b"");
        assert_plain_error(&r, 404, "rest_no_route");
        assert!(!r.has("allow"));
    }
}

fn comparable_headers(r: &Resp) -> Vec<(String, String)> {
    let mut h: Vec<(String, String)> = r
        .headers
        .iter()
        .filter(|(k, _)| {
            !matches!(
                k.as_str(),
                "date" | "content-length" | "connection" | "transfer-encoding" | "keep-alive"
            )
        })
        .cloned()
        .collect();
    h.sort();
    h
}

#[test]
fn head_answers_what_get_answers_without_a_body() {
    let s = server();
    for path in [
        NS.to_string(),
        format!("{NS}/doc"),
        "/".to_string(),
        "/es/".to_string(),
        format!("{NS}?translation_language=xx"),
        "/nope".to_string(),
        format!("{NS}?namespace=x"),
    ] {
        let g = s.raw_req("GET", &path, &[], b"");
        let h = s.raw_req("HEAD", &path, &[], b"");
        assert_eq!(h.status, g.status, "HEAD {path}");
        assert!(h.body.is_empty(), "HEAD {path} has no body");
        assert_eq!(
            comparable_headers(&h),
            comparable_headers(&g),
            "HEAD {path}: same headers as GET"
        );
    }
    let r = s.req("HEAD", NS).send();
    assert_eq!(r.status, 200);
    assert!(r.body.is_empty());
}

#[test]
fn method_override_on_post_selects_get() {
    let s = server();
    let idx = index_body();
    for q in ["_method=GET", "_method=get", "_method=Get"] {
        let r = s.req("POST", &format!("{NS}?{q}")).send();
        assert_eq!(r.status, 200, "POST ?{q}: {}", r.describe());
        assert_eq!(r.body, idx);
    }
    for h in ["GET", "get"] {
        let r = s.req("POST", NS).header("X-HTTP-Method-Override", h).send();
        assert_eq!(
            r.status,
            200,
            "POST + X-HTTP-Method-Override {h}: {}",
            r.describe()
        );
        assert_eq!(r.body, idx);
    }
    let r = s.req("POST", "/?_method=GET").send();
    assert_eq!(
        r.status,
        200,
        "REST root honours the override: {}",
        r.describe()
    );
    let r = s.req("POST", &format!("{NS}/doc?_method=GET")).send();
    assert_eq!(r.status, 200);
    // /healthz honours the override too
    let r = s.req("POST", "/healthz?_method=GET").send();
    assert_eq!(r.status, 200, "POST /healthz?_method=GET: {}", r.describe());
}

#[test]
fn method_override_query_parameter_beats_the_header() {
    let s = server();
    let r = s
        .req("POST", &format!("{NS}?_method=GET"))
        .header("X-HTTP-Method-Override", "DELETE")
        .send();
    assert_eq!(r.status, 200, "{}", r.describe());
    let r = s
        .req("POST", &format!("{NS}?_method=DELETE"))
        .header("X-HTTP-Method-Override", "GET")
        .send();
    assert_plain_error(&r, 404, "rest_no_route");
    assert_eq!(r.header("allow"), Some("GET"));
}

#[test]
fn method_override_to_an_unserved_or_unknown_method_is_404() {
    let s = server();
    for v in ["DELETE", "PUT", "PATCH", "POST", "FOO", ""] {
        let r = s.req("POST", &format!("{NS}?_method={v}")).send();
        if v.is_empty() {
            // Contract ambiguity: an empty `_method` is an unknown word → 404 (no route serves "").
            assert_eq!(r.status, 404, "POST ?_method= : {}", r.describe());
            continue;
        }
        assert_plain_error(&r, 404, "rest_no_route");
        assert_eq!(r.header("allow"), Some("GET"), "POST ?_method={v}");
        let r = s.req("POST", NS).header("X-HTTP-Method-Override", v).send();
        assert_plain_error(&r, 404, "rest_no_route");
    }
}

#[test]
fn method_override_is_ignored_on_other_real_methods() {
    let s = server();
    let idx = index_body();
    let r = s.get(&format!("{NS}?_method=DELETE"));
    assert_eq!(
        r.status,
        200,
        "GET with _method=DELETE is just a GET: {}",
        r.describe()
    );
    assert_eq!(r.body, idx);
    let r = s
        .req("GET", NS)
        .header("X-HTTP-Method-Override", "DELETE")
        .send();
    assert_eq!(r.status, 200);
    let r = s.req("HEAD", &format!("{NS}?_method=POST")).send();
    assert_eq!(r.status, 200);
    for m in ["DELETE", "PUT", "PATCH"] {
        let r = s.req(m, &format!("{NS}?_method=GET")).send();
        assert_plain_error(&r, 404, "rest_no_route");
        let r = s.req(m, NS).header("X-HTTP-Method-Override", "GET").send();
        assert_plain_error(&r, 404, "rest_no_route");
    }
}

#[test]
fn an_overridden_get_ignores_the_body_but_validates_the_query() {
    let s = server();
    let idx = index_body();
    let cases: [(&str, &[u8]); 5] = [
        ("text/plain", b"hello"),
        ("application/json", b"{not json"),
        ("application/json", br#"{"translation_language":"fr"}"#),
        ("multipart/form-data; boundary=x", b"--x--"),
        (
            "application/x-www-form-urlencoded",
            b"translation_language=fr",
        ),
    ];
    for (ct, body) in cases {
        let r = s
            .req("POST", &format!("{NS}?_method=GET"))
            .header("Content-Type", ct)
            .body(body.to_vec())
            .send();
        assert_eq!(
            r.status,
            200,
            "POST ?_method=GET with {ct} body: {}",
            r.describe()
        );
        assert_eq!(r.body, idx);
    }
    let r = s
        .req("POST", &format!("{NS}?_method=GET&translation_language=fr"))
        .send();
    assert_invalid_params(&r, &[("translation_language", "rest_not_in_enum")]);
}

// ---------------------------------------------------------------------------------------------
// Bodies on GET, processing order
// ---------------------------------------------------------------------------------------------

#[test]
fn request_bodies_on_get_are_ignored_whatever_their_type() {
    let s = server();
    let idx = index_body();
    let cases: Vec<Vec<(&str, &str)>> = vec![
        vec![("Content-Type", "text/plain")],
        vec![("Content-Type", "application/json")],
        vec![],
        vec![("Content-Type", "application/json; charset=latin1")],
        vec![
            ("Content-Type", "application/json"),
            ("Content-Encoding", "gzip"),
        ],
        vec![("Content-Type", "multipart/form-data; boundary=zz")],
    ];
    for headers in cases {
        let r = s.raw_req("GET", NS, &headers, b"{not json at all \xff");
        assert_eq!(
            r.status,
            200,
            "GET with body and {headers:?}: {}",
            r.describe()
        );
        assert_eq!(r.body, idx, "{headers:?}");
    }
    // A JSON body is not a parameter source for GET.
    let r = s.raw_req(
        "GET",
        NS,
        &[("Content-Type", "application/json")],
        br#"{"translation_language":"xx","namespace":"x"}"#,
    );
    assert_eq!(r.status, 200, "{}", r.describe());
    let r = s.raw_req(
        "GET",
        &format!("{NS}/doc"),
        &[("Content-Type", "text/plain")],
        b"abc",
    );
    assert_eq!(r.status, 200);
    let r = s.raw_req("OPTIONS", NS, &[("Content-Type", "text/plain")], b"abc");
    assert_eq!(r.status, 200, "OPTIONS ignores bodies: {}", r.describe());
}

#[test]
fn routing_happens_before_the_body_is_examined() {
    let s = server();
    // POST is not served by the namespace root: routing (404) comes before the body (415/400).
    let r = s.raw_req("POST", NS, &[("Content-Type", "text/plain")], b"hello");
    assert_plain_error(&r, 404, "rest_no_route");
    let r = s.raw_req("POST", NS, &[("Content-Type", "application/json")], b"{bad");
    assert_plain_error(&r, 404, "rest_no_route");
    let r = s.raw_req("PUT", "/nope", &[("Content-Type", "text/plain")], b"hello");
    assert_plain_error(&r, 404, "rest_no_route");
}

// ---------------------------------------------------------------------------------------------
// Limits
// ---------------------------------------------------------------------------------------------

fn target_of_len(base: &str, n: usize) -> String {
    let prefix = format!("{base}?pad=");
    assert!(n > prefix.len());
    format!("{prefix}{}", "a".repeat(n - prefix.len()))
}

fn assert_uri_too_long(r: &Resp) {
    let v = assert_error(r, 414, "rest_uri_too_long");
    assert_eq!(
        v["data"],
        json!({"status": 414, "max_bytes": 8192}),
        "414 data"
    );
    assert_standard_headers(r);
}

#[test]
fn request_target_longer_than_8192_bytes_is_414() {
    let s = server();
    let ok = s.raw_req("GET", &target_of_len(NS, 8192), &[], b"");
    assert_eq!(
        ok.status,
        200,
        "a target of exactly 8192 bytes is allowed: {}",
        ok.describe()
    );
    let r = s.raw_req("GET", &target_of_len(NS, 8193), &[], b"");
    assert_uri_too_long(&r);
    assert_discovery_link(&r, &s.public);
    // Long path instead of long query.
    let long_path = format!("/nope/{}", "b".repeat(9000));
    assert_uri_too_long(&s.raw_req("GET", &long_path, &[], b""));
    // Applies to every path and method, /healthz included (the first check).
    assert_uri_too_long(&s.raw_req("GET", &target_of_len("/healthz", 8193), &[], b""));
    assert_uri_too_long(&s.raw_req("GET", &target_of_len("/", 10000), &[], b""));
    assert_uri_too_long(&s.raw_req("DELETE", &target_of_len(NS, 8193), &[], b""));
    assert_uri_too_long(&s.raw_req("OPTIONS", &target_of_len(NS, 8193), &[], b""));
    let h = s.raw_req("HEAD", &target_of_len(NS, 8193), &[], b"");
    assert_eq!(h.status, 414);
    // Beyond 64 KiB the HTTP parser refuses the target before almanac reads it; the answer
    // still carries the JSON error body.
    for len in [65_535, 70_000, 300_000] {
        let r = s.raw_req("GET", &target_of_len(NS, len), &[], b"");
        let v = assert_error(&r, 414, "rest_uri_too_long");
        assert_eq!(v["data"]["max_bytes"], json!(8192), "{len}");
    }
    // The server goes on serving.
    assert_eq!(s.raw_req("GET", NS, &[], b"").status, 200);
}

#[test]
fn uri_length_is_checked_before_credentials() {
    let s = server();
    let auth = basic("admin", "wrong-password");
    let r = s.raw_req(
        "GET",
        &target_of_len(NS, 8193),
        &[("Authorization", auth.as_str())],
        b"",
    );
    assert_uri_too_long(&r);
    let r = s.raw_req(
        "GET",
        &target_of_len(NS, 8193),
        &[("Authorization", "Basic ???")],
        b"",
    );
    assert_uri_too_long(&r);
}

fn assert_payload_too_large(r: &Resp) {
    let v = assert_error(r, 413, "rest_payload_too_large");
    assert_eq!(
        v["data"],
        json!({"status": 413, "max_bytes": 1048576}),
        "413 data"
    );
    assert_standard_headers(r);
}

#[test]
fn body_larger_than_1_mib_by_content_length_is_413() {
    let s = server();
    let body = vec![b' '; 1_048_577];
    let r = s.raw_req("GET", NS, &[("Content-Type", "application/json")], &body);
    assert_payload_too_large(&r);
    assert_eq!(
        r.header("allow"),
        Some("GET"),
        "413 comes after routing: Allow"
    );
    // Announced length only: the server must not wait for the body.
    let mut req = format!(
        "GET {NS} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\n\r\n",
        s.addr
    )
    .into_bytes();
    req.extend_from_slice(b"{\"a\":1}");
    assert_payload_too_large(&s.raw(&req, false));
    // Overridden GET: the size limit still applies.
    let r = s.raw_req(
        "POST",
        &format!("{NS}?_method=GET"),
        &[
            ("Content-Type", "application/json"),
            ("Content-Length", "2000000"),
        ],
        b"{}",
    );
    assert_payload_too_large(&r);
}

#[test]
fn body_of_exactly_1_mib_is_accepted() {
    let s = server();
    let body = vec![b'x'; 1_048_576];
    let r = s.raw_req("GET", NS, &[("Content-Type", "text/plain")], &body);
    assert_eq!(r.status, 200, "{}", r.describe());
}

fn chunked(total: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut left = total;
    while left > 0 {
        let n = left.min(65536);
        out.extend_from_slice(format!("{n:x}\r\n").as_bytes());
        out.extend(std::iter::repeat_n(b'z', n));
        out.extend_from_slice(b"\r\n");
        left -= n;
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

#[test]
fn body_larger_than_1_mib_while_streaming_chunked_is_413() {
    let s = server();
    let r = s.raw_req(
        "GET",
        NS,
        &[
            ("Content-Type", "text/plain"),
            ("Transfer-Encoding", "chunked"),
        ],
        &chunked(1_048_577),
    );
    assert_payload_too_large(&r);
    let r = s.raw_req(
        "GET",
        NS,
        &[
            ("Content-Type", "text/plain"),
            ("Transfer-Encoding", "chunked"),
        ],
        &chunked(1_048_576),
    );
    assert_eq!(r.status, 200, "exactly 1 MiB chunked: {}", r.describe());
}

#[test]
fn credentials_and_routing_are_checked_before_the_body_size() {
    let s = server();
    let auth = basic("admin", "wrong-password");
    let r = s.raw_req(
        "GET",
        NS,
        &[
            ("Authorization", auth.as_str()),
            ("Content-Length", "2000000"),
        ],
        b"",
    );
    assert_plain_error(&r, 401, "incorrect_password");
    let r = s.raw_req(
        "POST",
        NS,
        &[
            ("Content-Type", "application/json"),
            ("Content-Length", "2000000"),
        ],
        b"{}",
    );
    assert_plain_error(&r, 404, "rest_no_route");
    let r = s.raw_req(
        "POST",
        "/nope",
        &[
            ("Content-Type", "application/json"),
            ("Content-Length", "2000000"),
        ],
        b"{}",
    );
    assert_plain_error(&r, 404, "rest_no_route");
}

// ---------------------------------------------------------------------------------------------
// Responses, headers, Link
// ---------------------------------------------------------------------------------------------

#[test]
fn responses_are_compact_utf8_json_with_the_json_content_type() {
    let s = server();
    for path in [
        NS.to_string(),
        "/".to_string(),
        format!("{NS}/doc"),
        "/healthz".to_string(),
        "/nope".to_string(),
        format!("{NS}?translation_language=zz"),
        "/es/".to_string(),
    ] {
        let r = s.get(&path);
        assert_json_content_type(&r);
        assert_compact_json(&r.body);
        let _: Value = r.json();
    }
    let t = s.get(NS).text();
    assert!(
        t.contains(&format!("\"href\":\"{}/cal/events/v1\"", s.public)),
        "`/` is not escaped in links"
    );
}

#[test]
fn the_accept_header_is_ignored() {
    let s = server();
    for a in ["text/html", "application/xml", "image/png;q=1, */*;q=0"] {
        let r = s.req("GET", NS).header("Accept", a).send();
        assert_eq!(r.status, 200, "Accept: {a}");
        assert_json_content_type(&r);
    }
}

#[test]
fn standard_headers_on_successes_and_errors() {
    let s = server();
    let admin_pw_wrong = basic("admin", "nope");
    let cases: Vec<Resp> = vec![
        s.get(NS),
        s.get(&format!("{NS}/doc")),
        s.get("/"),
        s.get("/es/"),
        s.get("/nope"),
        s.get(&format!("{NS}?translation_language=x")),
        s.req("DELETE", NS).send(),
        s.req("GET", NS)
            .header("Authorization", &admin_pw_wrong)
            .send(),
        s.get_as(NS, &ADMIN),
        s.req("OPTIONS", NS).send(),
    ];
    for r in &cases {
        assert_standard_headers(r);
        assert_json_content_type(r);
        assert!(
            !r.has("x-wp-total") && !r.has("x-tec-total") && !r.has("x-wp-totalpages"),
            "no WordPress/plugin total headers"
        );
        assert!(!r.has("www-authenticate"));
    }
}

#[test]
fn discovery_link_header_on_namespace_root_and_unknown_paths_and_errors() {
    let s = server();
    let p = s.public.clone();
    assert_discovery_link(&s.get(NS), &p);
    assert_discovery_link(&s.get(&format!("/es{NS}")), &format!("{p}/es"));
    assert_discovery_link(&s.get(&format!("/pt-br{NS}/doc")), &format!("{p}/pt-br"));
    assert_discovery_link(&s.get("/"), &p);
    assert_discovery_link(&s.get("/pt-br/"), &format!("{p}/pt-br"));
    assert_discovery_link(&s.get("/nope"), &p);
    assert_discovery_link(&s.get(&format!("{NS}/nope")), &p);
    assert_discovery_link(
        &s.get(&format!("/es{NS}?translation_language=x")),
        &format!("{p}/es"),
    );
    assert_discovery_link(
        &s.req("PUT", &format!("/es{NS}")).send(),
        &format!("{p}/es"),
    );
    assert_discovery_link(&s.req("GET", NS).auth("nobody", "x").send(), &p);
    assert!(!s.get("/healthz").has("link"), "no Link on /healthz");
}

// ---------------------------------------------------------------------------------------------
// ETag and conditional GET
// ---------------------------------------------------------------------------------------------

#[test]
fn etags_are_weak_stable_and_depend_on_the_body_only() {
    let s = server();
    let a = assert_etag(&s.get(NS));
    let b = assert_etag(&s.get(NS));
    assert_eq!(a, b, "equal bodies give equal ETags");
    let es = assert_etag(&s.get(&format!("/es{NS}")));
    assert_ne!(a, es, "different bodies give different ETags");
    let authed = s.get_as(NS, &ADMIN);
    assert_eq!(authed.status, 200);
    assert_eq!(
        assert_etag(&authed),
        a,
        "same body for an authenticated caller → same ETag"
    );
    let d = assert_etag(&s.get(&format!("{NS}/doc")));
    assert_ne!(a, d);
    assert_etag(&s.get("/"));
    assert_etag(&s.req("HEAD", NS).send());
}

fn assert_not_modified(r: &Resp, etag: &str, cc: &str) {
    assert_eq!(r.status, 304, "{}", r.describe());
    assert!(r.body.is_empty(), "304 has no body");
    assert_eq!(r.header("etag"), Some(etag), "304 carries the ETag");
    assert_eq!(r.header("cache-control"), Some(cc), "304 Cache-Control");
    assert_eq!(r.header("allow"), Some("GET"), "304 carries Allow");
    assert_vary(r);
    assert!(!r.has("link"), "no Link on 304");
    assert_eq!(
        r.header("access-control-allow-headers").map(tokens),
        Some(tokens(ALLOW_HEADERS))
    );
    assert_eq!(
        r.header("access-control-expose-headers").map(tokens),
        Some(tokens(EXPOSE_HEADERS))
    );
}

#[test]
fn if_none_match_with_the_current_etag_gives_304() {
    let s = server();
    for path in [
        NS.to_string(),
        format!("{NS}/doc"),
        "/".to_string(),
        format!("/es{NS}"),
    ] {
        let etag = assert_etag(&s.get(&path));
        let strong = etag.trim_start_matches("W/").to_string();
        for inm in [
            etag.clone(),
            strong.clone(),
            "*".to_string(),
            format!("\"0000000000000000\", {etag}"),
            format!("W/\"1111111111111111\",{strong}"),
        ] {
            let r = s.raw_req("GET", &path, &[("If-None-Match", inm.as_str())], b"");
            assert_not_modified(&r, &etag, CC_ANON);
        }
        let r = s.raw_req("HEAD", &path, &[("If-None-Match", etag.as_str())], b"");
        assert_not_modified(&r, &etag, CC_ANON);
        let r = s
            .req("GET", &path)
            .header("If-None-Match", &etag)
            .user(&EDITOR)
            .send();
        assert_not_modified(&r, &etag, CC_AUTH);
    }
}

#[test]
fn if_none_match_with_another_etag_gives_200() {
    let s = server();
    let etag = assert_etag(&s.get(NS));
    for inm in ["W/\"0123456789abcdef\"", "\"0123456789abcdef\"", "garbage"] {
        let r = s.req("GET", NS).header("If-None-Match", inm).send();
        assert_eq!(r.status, 200, "If-None-Match {inm}");
        assert_eq!(r.header("etag"), Some(etag.as_str()));
        assert!(!r.body.is_empty());
    }
    // Other conditional headers are ignored.
    for (h, v) in [
        ("If-Modified-Since", "Wed, 21 Oct 2099 07:28:00 GMT"),
        ("If-Match", "\"nope\""),
        ("If-Unmodified-Since", "Wed, 21 Oct 2015 07:28:00 GMT"),
        ("If-Range", "\"x\""),
    ] {
        let r = s.req("GET", NS).header(h, v).send();
        assert_eq!(r.status, 200, "{h} is ignored");
    }
}

#[test]
fn errors_never_carry_etags_or_answer_304() {
    let s = server();
    for path in [
        "/nope".to_string(),
        format!("{NS}?translation_language=x"),
        format!("{NS}?namespace=x"),
    ] {
        let r = s.req("GET", &path).header("If-None-Match", "*").send();
        assert!(
            r.status >= 400,
            "{path} with If-None-Match: * keeps its error: {}",
            r.describe()
        );
        assert!(!r.has("etag"));
    }
    let r = s
        .req("GET", NS)
        .header("If-None-Match", "*")
        .auth("admin", "bad")
        .send();
    assert_plain_error(&r, 401, "incorrect_password");
}

// ---------------------------------------------------------------------------------------------
// Cache-Control
// ---------------------------------------------------------------------------------------------

#[test]
fn cache_control_depends_on_the_caller_and_the_outcome() {
    let s = server();
    assert_eq!(s.get(NS).header("cache-control"), Some(CC_ANON));
    assert_eq!(s.get("/").header("cache-control"), Some(CC_ANON));
    assert_eq!(
        s.get(&format!("{NS}/doc")).header("cache-control"),
        Some(CC_ANON)
    );
    let r = s.get_as(NS, &ADMIN);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("cache-control"), Some(CC_AUTH));
    assert_eq!(
        s.get_as("/", &EDITOR).header("cache-control"),
        Some(CC_AUTH)
    );
    assert_eq!(
        s.get_as(&format!("{NS}/doc"), &EDITOR)
            .header("cache-control"),
        Some(CC_AUTH)
    );
    // Errors: no-store for everyone.
    assert_eq!(s.get("/nope").header("cache-control"), Some(CC_ERROR));
    assert_eq!(
        s.get_as("/nope", &ADMIN).header("cache-control"),
        Some(CC_ERROR)
    );
    assert_eq!(
        s.get_as(&format!("{NS}?translation_language=x"), &ADMIN)
            .header("cache-control"),
        Some(CC_ERROR)
    );
    assert_eq!(s.get("/healthz").header("cache-control"), Some(CC_ERROR));
    assert_eq!(
        s.get_as("/healthz", &ADMIN).header("cache-control"),
        Some(CC_ERROR)
    );
}

// ---------------------------------------------------------------------------------------------
// Compression
// ---------------------------------------------------------------------------------------------

#[test]
fn bodies_of_at_least_1024_bytes_are_gzipped_when_accepted() {
    let s = server();
    let mut saw_big = false;
    for path in [
        NS.to_string(),
        "/".to_string(),
        format!("{NS}/doc"),
        "/healthz".to_string(),
        "/nope".to_string(),
        format!("/es{NS}"),
    ] {
        let plain = s.get(&path);
        assert!(
            !plain.has("content-encoding"),
            "{path}: not compressed without Accept-Encoding"
        );
        let gz = s.req("GET", &path).header("Accept-Encoding", "gzip").send();
        assert_eq!(gz.status, plain.status);
        if plain.body.len() >= 1024 {
            saw_big = true;
            assert_eq!(
                gz.header("content-encoding"),
                Some("gzip"),
                "{path}: {} bytes must be gzipped",
                plain.body.len()
            );
            assert_eq!(
                gunzip(&gz.body),
                plain.body,
                "{path}: gunzipped body equals the plain body"
            );
            assert_eq!(
                gz.header("etag"),
                plain.header("etag"),
                "{path}: ETag of the uncompressed bytes"
            );
        } else {
            assert!(
                !gz.has("content-encoding"),
                "{path}: {} bytes (< 1024) are not compressed",
                plain.body.len()
            );
            assert_eq!(gz.body, plain.body);
        }
        assert_vary(&gz);
    }
    assert!(saw_big, "/doc is surely at least 1024 bytes");
}

#[test]
fn accept_encoding_variants() {
    let s = server();
    let path = format!("{NS}/doc");
    let plain = s.get(&path).body;
    for ae in [
        "x-gzip",
        "deflate, gzip;q=0.5",
        "br, gzip",
        "gzip;q=1.0",
        "identity, gzip",
    ] {
        let r = s.req("GET", &path).header("Accept-Encoding", ae).send();
        assert_eq!(
            r.header("content-encoding"),
            Some("gzip"),
            "Accept-Encoding: {ae}"
        );
        assert_eq!(gunzip(&r.body), plain, "Accept-Encoding: {ae}");
    }
    for ae in [
        "gzip;q=0",
        "br",
        "deflate",
        "identity",
        "br;q=1, gzip;q=0.0",
    ] {
        let r = s.req("GET", &path).header("Accept-Encoding", ae).send();
        assert_eq!(r.status, 200, "never 406");
        assert!(
            !r.has("content-encoding"),
            "Accept-Encoding: {ae} → identity"
        );
        assert_eq!(r.body, plain);
    }
}
