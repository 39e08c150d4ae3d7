//! Authentication over the meta routes: every role, wrong and unknown credentials,
//! malformed Basic payloads, other schemes, case-insensitive names, colons in passwords.

mod common;

use common::*;
use std::sync::OnceLock;

const COLON: TestUser = TestUser {
    name: "colon.user",
    role: "subscriber",
    password: "a:b:c:",
};
const UNICODE: TestUser = TestUser {
    name: "Mixed_Case@x.y",
    role: "author",
    password: "Pässwörd-✓-42",
};

fn server() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(|| {
        let mut users = STANDARD_USERS.to_vec();
        users.push(COLON);
        users.push(UNICODE);
        Server::start_with_users(&users).into_static()
    })
}

fn anon_index() -> Vec<u8> {
    let r = server().get(NS);
    assert_eq!(r.status, 200);
    r.body
}

fn assert_authenticated(r: &Resp, what: &str) {
    assert_eq!(r.status, 200, "{what}: {}", r.describe());
    assert_eq!(
        r.header("cache-control"),
        Some(CC_AUTH),
        "{what}: authenticated Cache-Control"
    );
}

fn assert_anonymous(r: &Resp, what: &str) {
    assert_eq!(r.status, 200, "{what}: {}", r.describe());
    assert_eq!(
        r.header("cache-control"),
        Some(CC_ANON),
        "{what}: anonymous Cache-Control"
    );
}

/// 401 with the given code, before routing: no Allow, discovery Link, no WWW-Authenticate.
fn assert_auth_failure(r: &Resp, code: &str, link_base: &str) {
    assert_plain_error(r, 401, code);
    assert!(!r.has("www-authenticate"), "no WWW-Authenticate on 401");
    assert!(
        !r.has("allow"),
        "credentials are checked before routing: no Allow"
    );
    assert_standard_headers(r);
    assert_discovery_link(r, link_base);
}

#[test]
fn every_role_authenticates_on_the_meta_routes() {
    let s = server();
    let anon = anon_index();
    for u in STANDARD_USERS.iter().chain([COLON, UNICODE].iter()) {
        let r = s.get_as(NS, u);
        assert_authenticated(&r, &format!("{} ({})", u.name, u.role));
        assert_eq!(r.body, anon, "the index does not depend on the caller");
        assert_authenticated(&s.get_as("/", u), "REST root");
        assert_authenticated(&s.get_as(&format!("/es{NS}/doc"), u), "/doc");
    }
}

#[test]
fn repeated_requests_with_the_same_credentials_succeed() {
    let s = server();
    for i in 0..6 {
        assert_authenticated(&s.get_as(NS, &EDITOR), &format!("editor request #{i}"));
    }
    // A remembered success must not make a different (wrong) header value pass.
    let r = s.req("GET", NS).auth(EDITOR.name, "Editor-pass-000").send();
    assert_auth_failure(&r, "incorrect_password", &s.public);
    assert_authenticated(&s.get_as(NS, &EDITOR), "editor after a failure");
    // Same credentials, name in other case: a different header value, still valid.
    let r = s.req("GET", NS).auth("EDITOR", EDITOR.password).send();
    assert_authenticated(&r, "EDITOR");
}

#[test]
fn wrong_password_is_401_incorrect_password_everywhere() {
    let s = server();
    let p = s.public.clone();
    let bad = basic("author", "not-the-password");
    let h = [("Authorization", bad.as_str())];
    for (method, path, l) in [
        ("GET", NS.to_string(), ""),
        ("GET", "/".to_string(), ""),
        ("GET", format!("{NS}/doc"), ""),
        ("GET", "/nope".to_string(), ""),
        ("GET", format!("{NS}/nope"), ""),
        ("OPTIONS", NS.to_string(), ""),
        ("OPTIONS", format!("{NS}/doc"), ""),
        ("DELETE", NS.to_string(), ""),
        ("GET", format!("/es{NS}"), "/es"),
        ("GET", format!("{NS}?translation_language=xx"), ""),
        ("POST", format!("{NS}?_method=GET"), ""),
    ] {
        let r = s.raw_req(method, &path, &h, b"");
        assert_auth_failure(&r, "incorrect_password", &format!("{p}{l}"));
    }
    let r = s.raw_req("HEAD", NS, &h, b"");
    assert_eq!(r.status, 401, "HEAD with a wrong password");
    assert!(r.body.is_empty());
}

#[test]
fn empty_or_near_miss_passwords_are_incorrect() {
    let s = server();
    for pw in [
        "",
        "admin-pass-0001",
        "Admin-pass-0001 ",
        " Admin-pass-0001",
        "Admin-pass-000",
    ] {
        let r = s.req("GET", NS).auth("admin", pw).send();
        assert_auth_failure(&r, "incorrect_password", &s.public);
    }
}

#[test]
fn unknown_or_empty_user_name_is_401_invalid_username() {
    let s = server();
    for (name, pw) in [
        ("nobody", "x"),
        ("", "Admin-pass-0001"),
        ("admin2", "Admin-pass-0001"),
        ("adm", "Admin-pass-0001"),
        (" admin", "Admin-pass-0001"),
    ] {
        let r = s.req("GET", NS).auth(name, pw).send();
        assert_auth_failure(&r, "invalid_username", &s.public);
    }
    let bad = basic("nobody", "x");
    let r = s.raw_req("GET", "/nope", &[("Authorization", bad.as_str())], b"");
    assert_auth_failure(&r, "invalid_username", &s.public);
    let r = s.raw_req("OPTIONS", NS, &[("Authorization", bad.as_str())], b"");
    assert_auth_failure(&r, "invalid_username", &s.public);
}

#[test]
fn malformed_basic_credentials_are_401_rest_invalid_authorization() {
    let s = server();
    let payloads: Vec<String> = vec![
        "Basic !!!!".to_string(),
        "Basic YWRt aW46eA==".to_string(),
        "Basic %%%=".to_string(),
        basic_bytes(b"no-colon-here"),
        basic_bytes(b"admin"),
        basic_bytes(&[0xff, 0xfe, b':', b'a']),
        basic_bytes(b"admin:\xff\xfe"),
        basic_bytes(b"\xc3(:x"),
        // A bare scheme has an empty payload, which has no colon.
        "Basic".to_string(),
        "basic ".to_string(),
    ];
    for p in &payloads {
        for (method, path) in [
            ("GET", NS.to_string()),
            ("GET", "/nope".to_string()),
            ("OPTIONS", NS.to_string()),
            ("GET", format!("{NS}/doc")),
        ] {
            let r = s.raw_req(method, &path, &[("Authorization", p.as_str())], b"");
            assert_auth_failure(&r, "rest_invalid_authorization", &s.public);
        }
    }
}

#[test]
fn non_basic_schemes_are_anonymous() {
    let s = server();
    for v in [
        "Bearer abc.def.ghi",
        "Bearer",
        "Digest username=\"admin\"",
        "Token xyz",
        "Negotiate YWRtaW46eA==",
        "AWS4-HMAC-SHA256 Credential=x",
    ] {
        let r = s.req("GET", NS).header("Authorization", v).send();
        assert_anonymous(&r, v);
        let r = s.req("GET", "/nope").header("Authorization", v).send();
        assert_plain_error(&r, 404, "rest_no_route");
    }
}

#[test]
fn user_names_compare_ascii_case_insensitively() {
    let s = server();
    for name in ["EDITOR", "Editor", "eDiToR"] {
        assert_authenticated(&s.req("GET", NS).auth(name, EDITOR.password).send(), name);
    }
    for name in ["mixed_case@x.y", "MIXED_CASE@X.Y", "Mixed_Case@x.y"] {
        assert_authenticated(&s.req("GET", NS).auth(name, UNICODE.password).send(), name);
    }
}

#[test]
fn passwords_compare_exactly_and_may_contain_colons_and_non_ascii() {
    let s = server();
    // Split at the first colon: the password is "a:b:c:".
    assert_authenticated(&s.get_as(NS, &COLON), "password with colons");
    for pw in ["a:b:c", "a", "a:b:c::", "A:B:C:"] {
        let r = s.req("GET", NS).auth(COLON.name, pw).send();
        assert_auth_failure(&r, "incorrect_password", &s.public);
    }
    assert_authenticated(&s.get_as(NS, &UNICODE), "non-ASCII password");
    let r = s.req("GET", NS).auth(UNICODE.name, "PÄSSWÖRD-✓-42").send();
    assert_auth_failure(&r, "incorrect_password", &s.public);
}

#[test]
fn authenticated_errors_keep_their_codes_and_no_store() {
    let s = server();
    let r = s.get_as(&format!("{NS}?translation_language=xx"), &ADMIN);
    assert_invalid_params(&r, &[("translation_language", "rest_not_in_enum")]);
    let r = s.get_as("/nope", &SUBSCRIBER);
    assert_plain_error(&r, 404, "rest_no_route");
    let r = s.req("PUT", NS).user(&ADMIN).send();
    assert_plain_error(&r, 404, "rest_no_route");
    assert_eq!(r.header("allow"), Some("GET"));
    let r = s.req("OPTIONS", NS).user(&CONTRIBUTOR).send();
    assert_eq!(
        r.status,
        200,
        "OPTIONS with valid credentials: {}",
        r.describe()
    );
    assert_eq!(r.header("allow"), Some("GET"));
}
