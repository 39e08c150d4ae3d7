//! Venues and organizers (docs/api.md, "Venues and organizers"), tested over real HTTP against
//! the binary.
//!
//! Two servers:
//! - server `A` (shared by most tests, which run in parallel): every test isolates the records it
//!   counts by putting a unique random word (a "token") in their names and listing with
//!   `search=<token>`;
//! - server `B` (clean lists): the archive tests that need an exact store content. Each of them
//!   owns one (kind, language) list of that server: pagination in `es`, status filters in
//!   `pt-br`, search in `en`.
//!
//! Out of scope for now (events do not exist yet): the list filters `event`, `has_events`,
//! `only_with_upcoming`.

mod common;

use common::*;
use serde_json::{json, Value};
use std::sync::OnceLock;

// ---------------------------------------------------------------------------------------------
// Servers, kinds, users
// ---------------------------------------------------------------------------------------------

fn server_a() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(|| Server::start_with_users(&STANDARD_USERS).into_static())
}

fn server_b() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(|| Server::start_with_users(&STANDARD_USERS).into_static())
}

/// One of the two linked-post kinds.
#[derive(Clone, Copy, Debug)]
struct Kind {
    /// Collection segment: `venues`.
    coll: &'static str,
    /// Name field and code prefix: `venue`.
    name: &'static str,
    /// `post_type` of the plain `url` form.
    post_type: &'static str,
}

const VENUE: Kind = Kind {
    coll: "venues",
    name: "venue",
    post_type: "tribe_venue",
};
const ORGANIZER: Kind = Kind {
    coll: "organizers",
    name: "organizer",
    post_type: "tribe_organizer",
};

impl Kind {
    fn is_venue(&self) -> bool {
        self.name == "venue"
    }
    fn code(&self, suffix: &str) -> String {
        format!("{}-{suffix}", self.name)
    }
    /// All keys of the representation, in order.
    fn key_order(&self) -> Vec<&'static str> {
        if self.is_venue() {
            vec![
                "id",
                "author",
                "status",
                "date",
                "date_utc",
                "modified",
                "modified_utc",
                "url",
                "venue",
                "description",
                "excerpt",
                "slug",
                "image",
                "address",
                "city",
                "country",
                "province",
                "state",
                "zip",
                "phone",
                "website",
                "stateprovince",
                "geo_lat",
                "geo_lng",
                "json_ld",
                "show_map",
                "show_map_link",
                "global_id",
                "global_id_lineage",
                "language",
                "translations",
            ]
        } else {
            vec![
                "id",
                "author",
                "status",
                "date",
                "date_utc",
                "modified",
                "modified_utc",
                "url",
                "organizer",
                "description",
                "excerpt",
                "slug",
                "image",
                "phone",
                "website",
                "email",
                "json_ld",
                "global_id",
                "global_id_lineage",
                "language",
                "translations",
            ]
        }
    }
    /// Keys present on every representation.
    fn always_keys(&self) -> Vec<&'static str> {
        let mut v = vec![
            "id",
            "author",
            "status",
            "date",
            "date_utc",
            "modified",
            "modified_utc",
            "url",
            "slug",
        ];
        if self.is_venue() {
            v.extend(["show_map", "show_map_link"]);
        }
        v.extend(["global_id", "global_id_lineage", "language", "translations"]);
        v
    }
    /// The kind's own plain text fields (write and read).
    fn plain_fields(&self) -> Vec<&'static str> {
        if self.is_venue() {
            vec![
                "address",
                "city",
                "country",
                "province",
                "state",
                "zip",
                "phone",
                "stateprovince",
            ]
        } else {
            vec!["phone", "email"]
        }
    }
}

type Who = Option<TestUser>;
const ANON: Who = None;
const AD: Who = Some(ADMIN);
const ED: Who = Some(EDITOR);
const AU: Who = Some(AUTHOR);
const CO: Who = Some(CONTRIBUTOR);
const SU: Who = Some(SUBSCRIBER);

/// User IDs: `STANDARD_USERS` are added in order.
const ADMIN_ID: i64 = 1;
const EDITOR_ID: i64 = 2;
const AUTHOR_ID: i64 = 3;
const CONTRIBUTOR_ID: i64 = 4;

/// An ID that names nothing (far beyond anything created here).
const UNKNOWN_ID: i64 = 999_999;

// ---------------------------------------------------------------------------------------------
// Request helpers
// ---------------------------------------------------------------------------------------------

struct Api {
    s: &'static Server,
    k: Kind,
    /// Language path segment: "", "/es", "/pt-br".
    seg: &'static str,
}

fn api(k: Kind) -> Api {
    Api {
        s: server_a(),
        k,
        seg: "",
    }
}

impl Api {
    fn ns(&self) -> String {
        format!("{}{NS}", self.seg)
    }
    fn coll_path(&self) -> String {
        format!("{}/{}", self.ns(), self.k.coll)
    }
    fn item_path(&self, id: i64) -> String {
        format!("{}/{}/{id}", self.ns(), self.k.coll)
    }
    fn slug_path(&self, slug: &str) -> String {
        format!("{}/{}/by-slug/{slug}", self.ns(), self.k.coll)
    }
    /// `{base}` of the current request's segment.
    fn base(&self) -> String {
        format!("{}{}{NS}", self.s.public, self.seg)
    }
    fn site(&self) -> String {
        format!("{}{}", self.s.public, self.seg)
    }
    fn send(&self, method: &str, path: &str, who: Who, body: Option<&Value>) -> Resp {
        self.s.send(method, path, who.as_ref(), body)
    }
    fn send_form(&self, method: &str, path: &str, who: Who, form: &str) -> Resp {
        let mut r = self.s.req(method, path);
        if let Some(u) = who {
            r = r.user(&u);
        }
        r.header("Content-Type", "application/x-www-form-urlencoded")
            .body(form.as_bytes().to_vec())
            .send()
    }
    fn create(&self, who: Who, body: Value) -> Resp {
        self.send("POST", &self.coll_path(), who, Some(&body))
    }
    fn create_ok(&self, who: Who, body: Value) -> Value {
        let r = self.create(who, body.clone());
        assert_eq!(
            r.status,
            201,
            "create {} {body}: {}",
            self.k.coll,
            r.describe()
        );
        r.json()
    }
    /// Creates a record named `"{name}"` as `who` and returns its ID.
    fn mk(&self, who: Who, name: &str, extra: Value) -> i64 {
        let body = merge(json!({ self.k.name: name }), extra);
        self.create_ok(who, body)["id"].as_i64().unwrap()
    }
    fn get(&self, id: i64, who: Who) -> Resp {
        self.send("GET", &self.item_path(id), who, None)
    }
    fn get_ok(&self, id: i64, who: Who) -> Value {
        self.s.get_ok(&self.item_path(id), who.as_ref())
    }
    fn update(&self, id: i64, who: Who, body: Value) -> Resp {
        self.send("PATCH", &self.item_path(id), who, Some(&body))
    }
    fn update_ok(&self, id: i64, who: Who, body: Value) -> Value {
        let r = self.update(id, who, body.clone());
        assert_eq!(
            r.status,
            200,
            "update {} {body}: {}",
            self.item_path(id),
            r.describe()
        );
        r.json()
    }
    fn delete(&self, id: i64, who: Who) -> Resp {
        self.send("DELETE", &self.item_path(id), who, None)
    }
    fn list(&self, query: &str, who: Who) -> Resp {
        let p = if query.is_empty() {
            self.coll_path()
        } else {
            format!("{}?{query}", self.coll_path())
        };
        self.send("GET", &p, who, None)
    }
    fn list_ok(&self, query: &str, who: Who) -> Value {
        let r = self.list(query, who);
        assert_eq!(r.status, 200, "list ?{query}: {}", r.describe());
        r.json()
    }
    /// IDs of a list answer's records.
    fn ids(&self, v: &Value) -> Vec<i64> {
        v[self.k.coll]
            .as_array()
            .unwrap_or_else(|| panic!("no `{}` array: {v}", self.k.coll))
            .iter()
            .map(|x| x["id"].as_i64().unwrap())
            .collect()
    }
    /// IDs listed (status any, by an administrator) for a token search.
    fn search_ids(&self, token: &str) -> Vec<i64> {
        let v = self.list_ok(&format!("search={token}&status=any&per_page=50"), AD);
        self.ids(&v)
    }
    fn url_public(&self, slug: &str) -> String {
        format!("{}/{}/{slug}/", self.site(), self.k.name)
    }
    fn url_plain(&self, id: i64) -> String {
        format!("{}/?post_type={}&p={id}", self.site(), self.k.post_type)
    }
}

/// Keys of `v` must appear in the order of `order`, and include every `always` key.
fn assert_key_order(k: Kind, v: &Value, with_json_ld: bool) {
    let got = keys(v);
    let order = k.key_order();
    let mut last = 0usize;
    for key in &got {
        let pos = order
            .iter()
            .position(|o| o == key)
            .unwrap_or_else(|| panic!("unexpected key {key:?} in {v}"));
        assert!(pos >= last, "key {key:?} out of order: got {got:?}");
        last = pos;
    }
    for a in k.always_keys() {
        assert!(
            got.iter().any(|g| g == a),
            "always-present key {a:?} missing: {v}"
        );
    }
    assert_eq!(
        got.iter().any(|g| g == "json_ld"),
        with_json_ld,
        "json_ld presence (only single GET routes): {v}"
    );
}

/// Asserts the list body layout and the headers; returns the body.
fn check_list_shape(k: Kind, r: &Resp) -> Value {
    assert_eq!(r.status, 200, "{}", r.describe());
    let v = r.json();
    let ks = keys(&v);
    let mut want = vec![k.coll.to_string(), "rest_url".to_string()];
    if v.get("next_rest_url").is_some() {
        want.push("next_rest_url".into());
    }
    if v.get("previous_rest_url").is_some() {
        want.push("previous_rest_url".into());
    }
    want.push("total".into());
    want.push("total_pages".into());
    assert_eq!(ks, want, "list body keys; {}", r.describe());
    assert_totals(r, &v);
    for item in v[k.coll].as_array().unwrap() {
        assert_key_order(k, item, false);
    }
    v
}

/// Checks `rest_url`, `next_rest_url`, `previous_rest_url` and the `Link` header of a list answer.
/// `coll_base` = `{base}/venues/`, `q` = the expected query the links carry.
fn check_links(r: &Resp, v: &Value, site: &str, coll_base: &str, page: u64, q: &str) {
    let total_pages = v["total_pages"].as_u64().unwrap();
    let (rest_url, next, prev) = page_urls(coll_base, q, page, total_pages);
    assert_eq!(v["rest_url"], rest_url, "rest_url; {}", r.describe());
    match &next {
        Some(next) => assert_eq!(v["next_rest_url"], *next, "next_rest_url"),
        None => assert!(v.get("next_rest_url").is_none(), "no next_rest_url: {v}"),
    }
    match &prev {
        Some(prev) => assert_eq!(v["previous_rest_url"], *prev, "previous_rest_url"),
        None => assert!(
            v.get("previous_rest_url").is_none(),
            "no previous_rest_url: {v}"
        ),
    }
    let links = r.header_all("link");
    assert_eq!(links.len(), 1, "one Link field; {}", r.describe());
    assert_eq!(
        links[0],
        pages_link(site, next.as_deref(), prev.as_deref()),
        "Link header"
    );
}

macro_rules! both_kinds {
    ($($f:ident),* $(,)?) => {
        mod venues {
            $( #[test] fn $f() { super::$f(super::VENUE) } )*
        }
        mod organizers {
            $( #[test] fn $f() { super::$f(super::ORGANIZER) } )*
        }
    };
}

both_kinds!(
    create_requires_credentials_and_sends_location,
    representation_keys_order_and_json_ld,
    omission_rule_clearing_and_partial_update,
    global_id_author_and_url_forms,
    create_with_author_dates_description_status,
    date_pairing,
    scheduling_and_status_scale_back,
    contributor_and_author_permissions,
    author_reassignment,
    invalid_create_values,
    invalid_update_values,
    malformed_json_body,
    form_encoded_bodies,
    own_fields_are_echoed,
    images_by_id_and_url,
    duplicate_check,
    update_rename_and_methods,
    delete_trash_and_restore,
    single_routes_not_found_and_access,
    allow_header_per_caller,
    by_slug_routes,
    list_visibility_per_caller,
    list_links_headers_and_clamp,
    list_parameter_validation,
    search_relevance_order,
    translation_groups,
    slugs,
    text_cleaning_and_rendering,
    archive_pagination,
    archive_status_filters,
    archive_search,
);

// ---------------------------------------------------------------------------------------------
// Create
// ---------------------------------------------------------------------------------------------

fn create_requires_credentials_and_sends_location(k: Kind) {
    let a = api(k);
    let t = tok();
    let r = a.create(ANON, json!({ k.name: format!("{t} anon") }));
    assert_plain_error(&r, 401, "rest_forbidden");
    let r = a.create(SU, json!({ k.name: format!("{t} sub") }));
    assert_plain_error(&r, 403, "rest_forbidden");
    assert!(a.search_ids(&t).is_empty(), "nothing written");

    let r = a.create(AD, json!({ k.name: format!("{t} Hall") }));
    assert_eq!(r.status, 201, "{}", r.describe());
    let v = r.json();
    let id = v["id"].as_i64().expect("integer id");
    assert_eq!(v[k.name], format!("{t} Hall"));
    assert_eq!(
        r.header("location"),
        Some(format!("{}/{}/{id}", a.base(), k.coll).as_str()),
        "Location; {}",
        r.describe()
    );
    assert_eq!(
        r.header("allow"),
        Some("GET, POST"),
        "Allow on the collection"
    );
    assert_json_content_type(&r);
    assert_compact_json(&r.body);
    // Missing name (any caller) → rest_missing_callback_param with params as an array.
    for who in [AD, ANON] {
        let r = a.create(who, json!({"phone": "123"}));
        let e = assert_error(&r, 400, "rest_missing_callback_param");
        assert_eq!(e["data"]["params"], json!([k.name]), "{}", r.describe());
    }
    // null counts as absent.
    let r = a.create(AD, json!({ k.name: null }));
    let e = assert_error(&r, 400, "rest_missing_callback_param");
    assert_eq!(e["data"]["params"], json!([k.name]));
    // A body `id` is ignored on create.
    let v = a.create_ok(AD, json!({ k.name: format!("{t} withid"), "id": 5 }));
    assert_ne!(v["id"], 5);
}

fn create_with_author_dates_description_status(k: Kind) {
    let a = api(k);
    let t = tok();
    let r = a.create(
        AD,
        json!({
            k.name: format!("{t} Store 19"),
            "author": EDITOR_ID,
            "date": 1514822400,
            "date_utc": "1514822400",
            "description": "Venue description",
            "status": "draft",
            "timezone": "America/New_York",
        }),
    );
    assert_eq!(r.status, 201, "{}", r.describe());
    let v = r.json();
    assert_eq!(
        v["author"],
        json!(EDITOR_ID.to_string()),
        "author is a string"
    );
    assert_eq!(v["date"], "2018-01-01 16:00:00");
    assert_eq!(v["date_utc"], "2018-01-01 16:00:00");
    assert!(is_datetime(&v["modified"]) && is_datetime(&v["modified_utc"]));
    assert_eq!(v["description"], "<p>Venue description</p>");
    assert_eq!(v["status"], "draft");
    assert!(v.get("timezone").is_none(), "unknown field dropped");
    assert_key_order(k, &v, false);
    // Default status: publish for an administrator; dates default to now (real dates).
    let v = a.create_ok(AD, json!({ k.name: format!("{t} defaults") }));
    assert_eq!(v["status"], "publish");
    assert_eq!(v["author"], "1");
    for f in ["date", "date_utc", "modified", "modified_utc"] {
        assert!(is_datetime(&v[f]), "{f}: {v}");
    }
    assert_eq!(v["date"], v["date_utc"], "site time zone is UTC");
    // Drafts have real dates too (no 0000-00-00).
    let v = a.create_ok(
        AD,
        json!({ k.name: format!("{t} draft"), "status": "draft"}),
    );
    assert!(is_datetime(&v["date_utc"]));
    assert_ne!(v["date_utc"], "0000-00-00 00:00:00");
}

fn date_pairing(k: Kind) {
    let a = api(k);
    let t = tok();
    // Only `date` → `date_utc` computed (UTC site zone: equal).
    let v = a.create_ok(
        AD,
        json!({ k.name: format!("{t} a"), "date": "2019-05-06 07:08:09" }),
    );
    assert_eq!(v["date"], "2019-05-06 07:08:09");
    assert_eq!(v["date_utc"], "2019-05-06 07:08:09");
    let id = v["id"].as_i64().unwrap();
    // Only `date_utc`.
    let v = a.create_ok(
        AD,
        json!({ k.name: format!("{t} b"), "date_utc": "2019-05-06 07:08:09" }),
    );
    assert_eq!(v["date"], "2019-05-06 07:08:09");
    assert_eq!(v["date_utc"], "2019-05-06 07:08:09");
    // Both given: stored as given.
    let v = a.create_ok(
        AD,
        json!({ k.name: format!("{t} c"), "date": "2019-05-06 07:08:09", "date_utc": "2019-05-06 09:08:09" }),
    );
    assert_eq!(v["date"], "2019-05-06 07:08:09");
    assert_eq!(v["date_utc"], "2019-05-06 09:08:09");
    // A zone designator: the instant, converted to UTC.
    let v = a.create_ok(
        AD,
        json!({ k.name: format!("{t} d"), "date": "2019-05-06T07:08:09+02:00" }),
    );
    assert_eq!(v["date"], "2019-05-06 05:08:09");
    assert_eq!(v["date_utc"], "2019-05-06 05:08:09");
    // Other accepted forms of the grammar.
    let v = a.create_ok(
        AD,
        json!({ k.name: format!("{t} e"), "date": "01/02/2018 4pm" }),
    );
    assert_eq!(v["date"], "2018-01-02 16:00:00");
    // Update with only `date_utc` re-pairs `date` (no stale value).
    let v = a.update_ok(id, AD, json!({"date_utc": "2020-02-03 04:05:06"}));
    assert_eq!(v["date"], "2020-02-03 04:05:06");
    assert_eq!(v["date_utc"], "2020-02-03 04:05:06");
    // Update without dates leaves them unchanged.
    let v = a.update_ok(id, AD, json!({"phone": "1"}));
    assert_eq!(v["date"], "2020-02-03 04:05:06");
    assert_eq!(v["date_utc"], "2020-02-03 04:05:06");
}

// ---------------------------------------------------------------------------------------------
// Representation
// ---------------------------------------------------------------------------------------------

/// Key order recorded in captures/venues-organizers.json (single GET of a venue and an
/// organizer with the fields set there); almanac adds `language` and `translations`.
const CAPTURE_VENUE_GET_KEYS: &[&str] = &[
    "id",
    "author",
    "status",
    "date",
    "date_utc",
    "modified",
    "modified_utc",
    "url",
    "venue",
    "description",
    "slug",
    "address",
    "city",
    "country",
    "zip",
    "phone",
    "website",
    "json_ld",
    "show_map",
    "show_map_link",
    "global_id",
    "global_id_lineage",
];
const CAPTURE_ORGANIZER_GET_KEYS: &[&str] = &[
    "id",
    "author",
    "status",
    "date",
    "date_utc",
    "modified",
    "modified_utc",
    "url",
    "organizer",
    "description",
    "slug",
    "phone",
    "website",
    "email",
    "json_ld",
    "global_id",
    "global_id_lineage",
];

fn representation_keys_order_and_json_ld(k: Kind) {
    let a = api(k);
    let t = tok();
    // 1. The capture's create, then its single GETs: same keys in the same order (+ extensions).
    let (body, cap_keys): (Value, &[&str]) = if k.is_venue() {
        (
            json!({"venue": format!("Blue Room {t}"), "address": "1 Harbour Road", "city": "Bristol",
                   "country": "United Kingdom", "zip": "BS1 5TY", "phone": "+44 117 000 0000",
                   "website": "https://blueroom.example.com", "description": "A small jazz club."}),
            CAPTURE_VENUE_GET_KEYS,
        )
    } else {
        (
            json!({"organizer": format!("Alice Productions {t}"), "email": "alice@example.com",
                   "phone": "+1 555 0101", "website": "https://alice.example.com",
                   "description": "Indie promoter."}),
            CAPTURE_ORGANIZER_GET_KEYS,
        )
    };
    let created = a.create_ok(AD, body);
    let id = created["id"].as_i64().unwrap();
    let mut want: Vec<&str> = cap_keys
        .iter()
        .copied()
        .filter(|x| *x != "json_ld")
        .collect();
    want.extend(["language", "translations"]);
    assert_eq!(keys(&created), want, "create response keys (capture order)");
    let got = a.get_ok(id, ANON);
    let mut want: Vec<&str> = cap_keys.to_vec();
    want.extend(["language", "translations"]);
    assert_eq!(keys(&got), want, "GET keys (capture order)");
    let slug = got["slug"].as_str().unwrap().to_string();
    let r = a.send("GET", &a.slug_path(&slug), ANON, None);
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(keys(&r.json()), want, "GET by slug keys");
    assert_eq!(r.json()["id"], id);
    // json_ld (plain-text description, url = record url, e-mail not obfuscated).
    let url = a.url_public(&slug);
    let ld = &got["json_ld"];
    let want_ld = if k.is_venue() {
        json!({"@type": "Place", "name": format!("Blue Room {t}"), "description": "A small jazz club.",
               "url": url,
               "address": {"@type": "PostalAddress", "streetAddress": "1 Harbour Road",
                           "addressLocality": "Bristol", "postalCode": "BS1 5TY",
                           "addressCountry": "United Kingdom"},
               "telephone": "+44 117 000 0000", "sameAs": "https://blueroom.example.com"})
    } else {
        json!({"@type": "Person", "name": format!("Alice Productions {t}"),
               "description": "Indie promoter.", "url": "https://alice.example.com",
               "telephone": "+1 555 0101", "email": "alice@example.com",
               "sameAs": "https://alice.example.com"})
    };
    assert!(
        same_json(ld, &want_ld),
        "json_ld\n got {ld}\nwant {want_ld}"
    );
    assert_eq!(got["url"], url);

    // 2. Every field set: all keys, in order.
    let mut full = json!({
        k.name: format!("{t} Full"),
        "description": "Line one\n\nLine two",
        "excerpt": "Short <b>excerpt</b> text",
        "image": format!("https://img.example.org/{t}.JPG"),
        "phone": "+351 220 000 000",
        "website": "https://full.example.org",
    });
    if k.is_venue() {
        for (f, val) in [
            ("address", "12 Quay Road"),
            ("city", "Porto"),
            ("country", "Portugal"),
            ("province", "Douro"),
            ("state", "Norte"),
            ("zip", "4000-123"),
            ("stateprovince", "Norte, Douro"),
        ] {
            full[f] = json!(val);
        }
        full["geo_lat"] = json!(41.1403);
        full["geo_lng"] = json!(-8.611);
        full["show_map"] = json!(false);
    } else {
        full["email"] = json!("hello@full.example.org");
    }
    let r = a.create(AD, full.clone());
    assert_eq!(r.status, 201, "{}", r.describe());
    let c = r.json();
    let id = c["id"].as_i64().unwrap();
    let all_but_ld: Vec<&str> = k
        .key_order()
        .into_iter()
        .filter(|x| *x != "json_ld")
        .collect();
    assert_eq!(keys(&c), all_but_ld, "create response with every field");
    let g = a.get_ok(id, ANON);
    assert_eq!(keys(&g), k.key_order(), "GET with every field");
    assert_eq!(g["description"], "<p>Line one</p>\n<p>Line two</p>");
    assert_eq!(g["excerpt"], "<p>Short <b>excerpt</b> text</p>");
    let img = &g["image"];
    assert_eq!(keys(img), vec!["url", "id", "extension"], "image keys");
    assert_eq!(img["url"], format!("https://img.example.org/{t}.JPG"));
    assert_eq!(img["extension"], "jpg");
    let slug = g["slug"].as_str().unwrap();
    let want_ld = if k.is_venue() {
        assert_eq!(g["geo_lat"], json!(41.1403));
        assert_eq!(g["geo_lng"], json!(-8.611));
        assert_eq!(g["show_map"], false);
        assert_eq!(g["show_map_link"], true);
        json!({"@type": "Place", "name": format!("{t} Full"), "description": "Short excerpt text",
               "image": format!("https://img.example.org/{t}.JPG"), "url": a.url_public(slug),
               "address": {"@type": "PostalAddress", "streetAddress": "12 Quay Road",
                           "addressLocality": "Porto", "addressRegion": "Norte, Douro",
                           "postalCode": "4000-123", "addressCountry": "Portugal"},
               "geo": {"@type": "GeoCoordinates", "latitude": 41.1403, "longitude": -8.611},
               "telephone": "+351 220 000 000", "sameAs": "https://full.example.org"})
    } else {
        json!({"@type": "Person", "name": format!("{t} Full"), "description": "Short excerpt text",
               "image": format!("https://img.example.org/{t}.JPG"),
               "url": "https://full.example.org", "telephone": "+351 220 000 000",
               "email": "hello@full.example.org", "sameAs": "https://full.example.org"})
    };
    assert!(
        same_json(&g["json_ld"], &want_ld),
        "json_ld\n got {}\nwant {want_ld}",
        g["json_ld"]
    );
    // Lists: no json_ld.
    let r = a.list(&format!("search={t}"), ANON);
    let l = check_list_shape(k, &r);
    assert!(l[k.coll]
        .as_array()
        .unwrap()
        .iter()
        .all(|x| x.get("json_ld").is_none()));
    // Update and delete responses: no json_ld.
    let u = a.update_ok(id, AD, json!({"phone": "2"}));
    assert_key_order(k, &u, false);
    let r = a.delete(id, AD);
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_key_order(k, &r.json(), false);

    // 3. Minimal record: json_ld's empty-valued members; description "" when none; the 55-word cut.
    let words: Vec<String> = (1..=60).map(|i| format!("w{i}")).collect();
    let id = a.mk(
        AD,
        &format!("{t} Min"),
        json!({"description": words.join(" ")}),
    );
    let g = a.get_ok(id, ANON);
    let d = g["json_ld"]["description"].as_str().unwrap();
    assert_eq!(
        d,
        format!("{}…", words[..55].join(" ")),
        "json_ld.description cut to 55 words with … appended"
    );
    let id = a.mk(AD, &format!("{t} Bare"), json!({}));
    let g = a.get_ok(id, ANON);
    let ld = &g["json_ld"];
    assert_eq!(ld["description"], "");
    assert_eq!(ld["telephone"], "");
    assert_eq!(ld["sameAs"], "");
    assert!(ld.get("image").is_none());
    if k.is_venue() {
        assert!(ld.get("geo").is_none());
        assert_eq!(ld["url"], g["url"]);
    } else {
        assert_eq!(ld["url"], "");
        assert_eq!(ld["email"], "");
    }
    assert!(ld.get("@context").is_none(), "no @context");
}

fn omission_rule_clearing_and_partial_update(k: Kind) {
    let a = api(k);
    let t = tok();
    let mut body = json!({k.name: format!("{t} Omit"), "description": "d", "excerpt": "e",
                          "website": "https://x.example.org"});
    for f in k.plain_fields() {
        body[f] = json!(format!("{f} value"));
    }
    let v = a.create_ok(AD, body);
    let id = v["id"].as_i64().unwrap();
    for f in k.plain_fields() {
        assert_eq!(v[f], format!("{f} value"), "{f} echoed");
    }
    // Only the name: the other fields are kept.
    let v = a.update_ok(id, AD, json!({k.name: format!("{t} Omit renamed")}));
    for f in k.plain_fields() {
        assert_eq!(v[f], format!("{f} value"), "{f} kept");
    }
    assert_eq!(v["description"], "<p>d</p>");
    assert_eq!(v["website"], "https://x.example.org");
    // Clearing with "" removes the keys.
    let mut clear = json!({"description": "", "excerpt": "", "website": ""});
    for f in k.plain_fields() {
        clear[f] = json!("");
    }
    let v = a.update_ok(id, AD, clear);
    for f in k.plain_fields() {
        assert!(v.get(f).is_none(), "{f} absent after clearing: {v}");
    }
    for f in [
        "description",
        "excerpt",
        "website",
        "image",
        "geo_lat",
        "geo_lng",
    ] {
        assert!(v.get(f).is_none(), "{f} absent: {v}");
    }
    assert_key_order(k, &v, false);
    let g = a.get_ok(id, ANON);
    for f in k.plain_fields() {
        assert!(g.get(f).is_none(), "{f} absent on GET: {g}");
    }
    // Whitespace-only description renders "" and is omitted; "0" is kept.
    let v = a.update_ok(id, AD, json!({"description": "  \n ", "phone": "0"}));
    assert!(v.get("description").is_none(), "{v}");
    assert_eq!(v["phone"], "0", "\"0\" is not empty");
    if k.is_venue() {
        assert_eq!(v["show_map"], true);
        assert_eq!(v["show_map_link"], true);
        // geo: set, zero kept, cleared together.
        let v = a.update_ok(id, AD, json!({"geo_lat": "0", "geo_lng": 0}));
        assert_eq!(v["geo_lat"].as_f64(), Some(0.0), "{v}");
        assert_eq!(v["geo_lng"].as_f64(), Some(0.0), "{v}");
        let v = a.update_ok(id, AD, json!({"geo_lat": "-33.5", "geo_lng": "151.25"}));
        assert_eq!(v["geo_lat"].as_f64(), Some(-33.5));
        assert_eq!(v["geo_lng"].as_f64(), Some(151.25));
        assert!(v["geo_lat"].is_number());
        let v = a.update_ok(id, AD, json!({"phone": "5"}));
        assert_eq!(v["geo_lat"].as_f64(), Some(-33.5), "geo kept");
        let v = a.update_ok(id, AD, json!({"geo_lat": "", "geo_lng": ""}));
        assert!(
            v.get("geo_lat").is_none() && v.get("geo_lng").is_none(),
            "{v}"
        );
        // Flags stay when absent.
        let v = a.update_ok(id, AD, json!({"show_map": false}));
        assert_eq!(v["show_map"], false);
        let v = a.update_ok(id, AD, json!({"city": "x"}));
        assert_eq!(v["show_map"], false, "absent show_map unchanged");
        assert_eq!(v["show_map_link"], true);
    }
}

fn global_id_author_and_url_forms(k: Kind) {
    let a = api(k);
    let t = tok();
    let host =
        a.s.public
            .strip_prefix("http://")
            .unwrap()
            .split(':')
            .next()
            .unwrap()
            .to_string();
    let v = a.create_ok(AD, json!({k.name: format!("{t} Gid")}));
    let id = v["id"].as_i64().unwrap();
    let gid = format!("{host}?id={id}");
    assert_eq!(v["global_id"], gid);
    assert_eq!(v["global_id_lineage"], json!([gid]));
    assert_eq!(v["author"], "1");
    assert!(v["author"].is_string());
    assert_eq!(v["language"], "en");
    assert_eq!(v["translations"], json!({"en": id}));
    let slug = v["slug"].as_str().unwrap().to_string();
    assert_eq!(slug, format!("{t}-gid"));
    assert_eq!(v["url"], a.url_public(&slug), "publish → public url");
    // Via the /es segment the links use that segment; global_id never does.
    let es = Api {
        s: a.s,
        k,
        seg: "/es",
    };
    let g = es.get_ok(id, ANON);
    assert_eq!(g["url"], es.url_public(&slug));
    assert_eq!(g["global_id"], gid);
    // url per status.
    for (status, public) in [
        ("private", true),
        ("draft", false),
        ("pending", false),
        ("publish", true),
    ] {
        let v = a.update_ok(id, AD, json!({"status": status}));
        assert_eq!(v["status"], status);
        let want = if public {
            a.url_public(&slug)
        } else {
            a.url_plain(id)
        };
        assert_eq!(v["url"], want, "url for {status}");
    }
    let v = a.update_ok(id, AD, json!({"status": "future", "date": "+1 hour"}));
    assert_eq!(v["status"], "future");
    assert_eq!(v["url"], a.url_plain(id), "future → plain url");
    // Draft: refused to anonymous, editor sees the plain url.
    let v = a.update_ok(id, AD, json!({"status": "draft"}));
    assert_eq!(v["status"], "draft");
    assert_error(&a.get(id, ANON), 403, &k.code("not-accessible"));
    let g = a.get_ok(id, ED);
    assert_eq!(g["url"], a.url_plain(id));
    let plain = a.url_plain(id);
    assert_eq!(
        g["json_ld"]["url"].as_str(),
        if k.is_venue() {
            Some(plain.as_str())
        } else {
            Some("")
        },
        "json_ld.url follows url (venue)"
    );
    let r = a.delete(id, AD);
    assert_eq!(r.json()["url"], a.url_plain(id), "trash → plain url");
}

// ---------------------------------------------------------------------------------------------
// Statuses and permissions
// ---------------------------------------------------------------------------------------------

fn scheduling_and_status_scale_back(k: Kind) {
    let a = api(k);
    let t = tok();
    // future with a past date → publish.
    let v = a.create_ok(
        AD,
        json!({k.name: format!("{t} past"), "status": "future", "date": "2020-01-01 10:00:00"}),
    );
    assert_eq!(v["status"], "publish");
    // future without a date → publish.
    let v = a.create_ok(
        AD,
        json!({k.name: format!("{t} nodate"), "status": "future"}),
    );
    assert_eq!(v["status"], "publish");
    // future with a date an hour ahead → future; publish with that date → future too.
    let v = a.create_ok(
        AD,
        json!({k.name: format!("{t} ahead"), "status": "future", "date": "+1 hour"}),
    );
    assert_eq!(v["status"], "future");
    let fid = v["id"].as_i64().unwrap();
    let v = a.create_ok(
        AD,
        json!({k.name: format!("{t} ahead2"), "status": "publish", "date_utc": "+1 hour"}),
    );
    assert_eq!(v["status"], "future");
    // Anonymous cannot read a scheduled record.
    assert_error(&a.get(fid, ANON), 403, &k.code("not-accessible"));
    // Update: a past date on a future record publishes it (date rule after every write).
    let v = a.update_ok(fid, AD, json!({"date": "2021-01-01 00:00:00"}));
    assert_eq!(v["status"], "publish");
    // Update without status leaves the status unchanged.
    let id = a.mk(AD, &format!("{t} pend"), json!({"status": "pending"}));
    let v = a.update_ok(id, AD, json!({"phone": "9"}));
    assert_eq!(v["status"], "pending");
    // Contributor scale-back on create.
    for (asked, got) in [
        (None, "draft"),
        (Some("publish"), "pending"),
        (Some("future"), "pending"),
        (Some("private"), "pending"),
        (Some("draft"), "draft"),
        (Some("pending"), "pending"),
    ] {
        let mut b = json!({k.name: format!("{t} contrib {asked:?}")});
        if let Some(s) = asked {
            b["status"] = json!(s);
        }
        let v = a.create_ok(CO, b);
        assert_eq!(v["status"], got, "contributor asking {asked:?}");
        assert_eq!(v["author"], CONTRIBUTOR_ID.to_string());
    }
    // Author default: publish.
    let v = a.create_ok(AU, json!({k.name: format!("{t} by author")}));
    assert_eq!(v["status"], "publish");
    // Writes refuse `trash` and unknown statuses.
    let r = a.update(id, AD, json!({"status": "trash"}));
    assert_invalid_param_codes(&r, &[("status", Some("rest_not_in_enum"))]);
}

fn contributor_and_author_permissions(k: Kind) {
    let a = api(k);
    let t = tok();
    // Own draft: read, update OK; asking publish on update → pending.
    let own = a.mk(CO, &format!("{t} own"), json!({}));
    assert_eq!(a.get_ok(own, CO)["status"], "draft");
    let v = a.update_ok(own, CO, json!({"phone": "1"}));
    assert_eq!(v["status"], "draft");
    let v = a.update_ok(own, CO, json!({"status": "publish"}));
    assert_eq!(v["status"], "pending", "scale-back on update");
    let v = a.update_ok(own, CO, json!({"status": "private"}));
    assert_eq!(v["status"], "pending");
    // Own published record (set up by an admin): 403 on update and delete.
    let own_pub = a.mk(
        AD,
        &format!("{t} own pub"),
        json!({"author": CONTRIBUTOR_ID, "status": "publish"}),
    );
    assert_plain_error(
        &a.update(own_pub, CO, json!({"phone": "2"})),
        403,
        "rest_forbidden",
    );
    assert_plain_error(&a.delete(own_pub, CO), 403, "rest_forbidden");
    // Others' draft: not readable, not editable.
    let others = a.mk(AD, &format!("{t} others"), json!({"status": "draft"}));
    assert_error(&a.get(others, CO), 403, &k.code("not-accessible"));
    assert_error(&a.get(others, AU), 403, &k.code("not-accessible"));
    assert_error(&a.get(others, SU), 403, &k.code("not-accessible"));
    assert_plain_error(
        &a.update(others, CO, json!({"phone": "2"})),
        403,
        "rest_forbidden",
    );
    assert_plain_error(&a.delete(others, CO), 403, "rest_forbidden");
    // Others' published record: readable, not editable by contributor/author.
    let pub_ = a.mk(AD, &format!("{t} pub"), json!({}));
    a.get_ok(pub_, CO);
    assert_plain_error(
        &a.update(pub_, CO, json!({"phone": "2"})),
        403,
        "rest_forbidden",
    );
    assert_plain_error(
        &a.update(pub_, AU, json!({"phone": "2"})),
        403,
        "rest_forbidden",
    );
    assert_plain_error(&a.delete(pub_, AU), 403, "rest_forbidden");
    // Subscriber and anonymous.
    assert_plain_error(
        &a.update(pub_, SU, json!({"phone": "2"})),
        403,
        "rest_forbidden",
    );
    assert_plain_error(
        &a.update(pub_, ANON, json!({"phone": "2"})),
        401,
        "rest_forbidden",
    );
    assert_plain_error(&a.delete(pub_, SU), 403, "rest_forbidden");
    // Editor edits others' records.
    a.update_ok(pub_, ED, json!({"phone": "3"}));
    a.update_ok(others, ED, json!({"phone": "3"}));
    // Author edits own published record.
    let au = a.mk(AU, &format!("{t} author own"), json!({}));
    let v = a.update_ok(au, AU, json!({"phone": "4"}));
    assert_eq!(v["status"], "publish");
    // Contributor trashes own pending record; it stays readable by its owner.
    let r = a.delete(own, CO);
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(r.json()["status"], "trash");
    assert_eq!(a.get_ok(own, CO)["status"], "trash");
    assert_error(&a.get(own, ANON), 403, &k.code("not-accessible"));
    // A trashed record: "its status" is the one it had before the trash.
    assert_eq!(a.delete(own_pub, AD).status, 200);
    assert_eq!(
        a.get_ok(own_pub, CO)["status"],
        "trash",
        "owner reads own trash"
    );
    assert_plain_error(
        &a.update(own_pub, CO, json!({"status": "draft"})),
        403,
        "rest_forbidden",
    );
    let own2 = a.mk(CO, &format!("{t} own2"), json!({}));
    assert_eq!(a.delete(own2, CO).status, 200);
    let v = a.update_ok(own2, CO, json!({"status": "pending"}));
    assert_eq!(
        v["status"], "pending",
        "contributor restores own trashed draft"
    );
    assert_eq!(v["slug"], format!("{t}-own2"));
    // Private: readable by editors and the owner only.
    let p = a.mk(AD, &format!("{t} priv"), json!({"status": "private"}));
    assert_error(&a.get(p, ANON), 403, &k.code("not-accessible"));
    assert_error(&a.get(p, AU), 403, &k.code("not-accessible"));
    a.get_ok(p, ED);
}

fn author_reassignment(k: Kind) {
    let a = api(k);
    let t = tok();
    // Only editors may name another user as `author`.
    let r = a.create(AU, json!({k.name: format!("{t} a"), "author": EDITOR_ID}));
    assert_plain_error(&r, 403, "rest_cannot_edit_others");
    assert!(a.search_ids(&t).is_empty(), "nothing written");
    let v = a.create_ok(AU, json!({k.name: format!("{t} b"), "author": AUTHOR_ID}));
    assert_eq!(v["author"], "3", "own ID is allowed");
    let id = v["id"].as_i64().unwrap();
    let r = a.update(id, AU, json!({"author": ADMIN_ID}));
    assert_plain_error(&r, 403, "rest_cannot_edit_others");
    assert_eq!(a.get_ok(id, AU)["author"], "3", "unchanged");
    let r = a.create(CO, json!({k.name: format!("{t} c"), "author": EDITOR_ID}));
    assert_plain_error(&r, 403, "rest_cannot_edit_others");
    let v = a.create_ok(ED, json!({k.name: format!("{t} d"), "author": AUTHOR_ID}));
    assert_eq!(v["author"], "3");
    let v = a.update_ok(id, ED, json!({"author": CONTRIBUTOR_ID}));
    assert_eq!(v["author"], "4");
    // By slug, same rule.
    let slug = a.get_ok(id, ED)["slug"].as_str().unwrap().to_string();
    let r = a.send(
        "PATCH",
        &a.slug_path(&slug),
        AU,
        Some(&json!({"author": AUTHOR_ID})),
    );
    assert_plain_error(&r, 403, "rest_forbidden"); // not the author's record any more
}

// ---------------------------------------------------------------------------------------------
// Validation and bodies
// ---------------------------------------------------------------------------------------------

/// (field, bad value, sub-code if the contract names it) for both kinds.
fn bad_values(k: Kind) -> Vec<(&'static str, Value, Option<&'static str>)> {
    let mut v: Vec<(&'static str, Value, Option<&'static str>)> = vec![
        (k.name, json!(""), Some("rest_empty")),
        (k.name, json!("   "), None),
        (k.name, json!(5), Some("rest_invalid_type")),
        ("author", json!(23), Some("rest_invalid_reference")),
        ("author", json!("foo"), Some("rest_invalid_type")),
        ("date", json!("foo"), Some("rest_invalid_format")),
        ("date", json!("2018-13-01 10:00:00"), None),
        (
            "date",
            json!("before my birthday"),
            Some("rest_invalid_format"),
        ),
        ("date_utc", json!("foo"), Some("rest_invalid_format")),
        ("date_utc", json!(true), None),
        (
            "status",
            json!("kinda_thinking_about_it"),
            Some("rest_not_in_enum"),
        ),
        ("status", json!("trash"), Some("rest_not_in_enum")),
        ("description", json!(5), Some("rest_invalid_type")),
        ("excerpt", json!(["x"]), Some("rest_invalid_type")),
        ("website", json!("foo"), Some("rest_invalid_format")),
        (
            "website",
            json!("mailto:x@example.org"),
            Some("rest_invalid_format"),
        ),
        (
            "website",
            json!("ftp://example.org"),
            Some("rest_invalid_format"),
        ),
        ("website", json!("http://"), Some("rest_invalid_format")),
        ("phone", json!(12345), Some("rest_invalid_type")),
        ("image", json!("foo bar"), None),
        ("image", json!("ftp://example.org/a.png"), None),
        ("image", json!(UNKNOWN_ID), Some("rest_invalid_reference")),
        ("image", json!({"url": "x"}), None),
        (
            "translation_language",
            json!("fr"),
            Some("rest_not_in_enum"),
        ),
        (
            "translation_language",
            json!("PT-BR"),
            Some("rest_not_in_enum"),
        ),
        (
            "translation_of",
            json!(UNKNOWN_ID),
            Some("rest_invalid_reference"),
        ),
        ("translation_of", json!("foo"), Some("rest_invalid_type")),
    ];
    if k.is_venue() {
        v.extend([
            ("address", json!(5), Some("rest_invalid_type")),
            ("city", json!(["a"]), Some("rest_invalid_type")),
            ("country", json!({"a": 1}), Some("rest_invalid_type")),
            ("province", json!(true), Some("rest_invalid_type")),
            ("state", json!(1.5), Some("rest_invalid_type")),
            ("zip", json!(12345), Some("rest_invalid_type")),
            ("stateprovince", json!(5), Some("rest_invalid_type")),
            ("show_map", json!([true]), None),
            ("show_map_link", json!({"a": 1}), None),
        ]);
    } else {
        v.push(("email", json!(5), Some("rest_invalid_type")));
    }
    v
}

fn invalid_create_values(k: Kind) {
    let a = api(k);
    let t = tok();
    for (field, val, sub) in bad_values(k) {
        let mut b = json!({k.name: format!("{t} bad {field}")});
        b[field] = val.clone();
        let r = a.create(AD, b);
        assert_invalid_param_codes(&r, &[(field, sub)]);
        // Validation precedes permission: anonymous gets the same 400.
        let mut b = json!({k.name: format!("{t} bad anon {field}")});
        b[field] = val.clone();
        let r = a.create(ANON, b);
        assert_eq!(r.status, 400, "anonymous {field}={val}: {}", r.describe());
    }
    if k.is_venue() {
        // Geo rules: both or neither, numbers or "", ranges.
        for (b, names) in [
            (json!({"geo_lat": 10}), vec!["geo_lat", "geo_lng"]),
            (json!({"geo_lng": 10}), vec!["geo_lat", "geo_lng"]),
            (json!({"geo_lat": 91, "geo_lng": 0}), vec!["geo_lat"]),
            (json!({"geo_lat": -90.5, "geo_lng": 0}), vec!["geo_lat"]),
            (json!({"geo_lat": 0, "geo_lng": 181}), vec!["geo_lng"]),
            (json!({"geo_lat": 0, "geo_lng": -180.01}), vec!["geo_lng"]),
            (json!({"geo_lat": "abc", "geo_lng": 1}), vec!["geo_lat"]),
            (
                json!({"geo_lat": "", "geo_lng": 1}),
                vec!["geo_lat", "geo_lng"],
            ),
        ] {
            let mut body = b.clone();
            body["venue"] = json!(format!("{t} geo"));
            let r = a.create(AD, body);
            let e = assert_error(&r, 400, "rest_invalid_param");
            let params = e["data"]["params"].as_object().unwrap();
            // Which of the two fields a pairing failure names is not fixed by the contract; at
            // least one of them, and nothing else, must be named.
            assert!(
                !params.is_empty() && params.keys().all(|p| names.contains(&p.as_str())),
                "{b}: params {:?}",
                params.keys().collect::<Vec<_>>()
            );
            if names.len() == 1 {
                assert_eq!(params.keys().collect::<Vec<_>>(), vec![names[0]], "{b}");
            }
            let details = e["data"]["details"].as_object().unwrap();
            assert_eq!(
                details.keys().collect::<Vec<_>>(),
                params.keys().collect::<Vec<_>>()
            );
        }
        // Boundaries are valid.
        let v = a.create_ok(
            AD,
            json!({"venue": format!("{t} edge"), "geo_lat": -90, "geo_lng": 180}),
        );
        assert_eq!(v["geo_lat"].as_f64(), Some(-90.0));
        assert_eq!(v["geo_lng"].as_f64(), Some(180.0));
        a.delete(v["id"].as_i64().unwrap(), AD);
    }
    // Image ID of a record that is not an image (a venue/organizer).
    let other = a.mk(AD, &format!("{t} not an image"), json!({}));
    let r = a.create(AD, json!({k.name: format!("{t} img"), "image": other}));
    assert_invalid_param_codes(&r, &[("image", Some("rest_invalid_reference"))]);
    a.delete(other, AD);
    // All invalid parameters reported together.
    let mut b = json!({k.name: "", "author": 23, "date": "foo", "date_utc": "foo",
                       "status": "kinda_thinking_about_it", "website": "mailto:x@example.org",
                       "image": "foo bar"});
    let mut names = vec![
        k.name, "author", "date", "date_utc", "status", "website", "image",
    ];
    if k.is_venue() {
        b["address"] = json!(5);
        names.push("address");
    } else {
        b["email"] = json!(5);
        names.push("email");
    }
    let r = a.create(AD, b);
    let exp: Vec<(&str, Option<&str>)> = names.iter().map(|n| (*n, None)).collect();
    assert_invalid_param_codes(&r, &exp);
    // Nothing was written.
    assert!(
        a.search_ids(&t).is_empty(),
        "no record written by refused creates: {:?}",
        a.search_ids(&t)
    );
}

fn invalid_update_values(k: Kind) {
    let a = api(k);
    let t = tok();
    let id = a.mk(
        AD,
        &format!("{t} Target"),
        json!({"description": "keep", "phone": "111", "status": "draft"}),
    );
    let before = a.get_ok(id, AD);
    for (field, val, sub) in bad_values(k) {
        let mut b = json!({});
        b[field] = val.clone();
        // translation_language on an ID route selects a member: an invalid value is still a 400.
        let r = a.update(id, AD, b.clone());
        assert_invalid_param_codes(&r, &[(field, sub)]);
        // Unknown IDs are refused before permission checks.
        let r = a.send("PUT", &a.item_path(id), ANON, Some(&b));
        assert_eq!(r.status, 400, "anonymous {field}={val}: {}", r.describe());
    }
    if k.is_venue() {
        // (sub-codes of the range checks: `venue_geo_ranges`)
        let r = a.update(id, AD, json!({"geo_lat": 95, "geo_lng": 0}));
        assert_invalid_param_codes(&r, &[("geo_lat", None)]);
        let r = a.update(id, AD, json!({"geo_lat": 5}));
        assert_error(&r, 400, "rest_invalid_param");
    }
    // Several at once, and a valid field alongside: nothing applied.
    let r = a.update(
        id,
        AD,
        json!({k.name: "", "date": "foo", "website": "ftp://x.org", "phone": "222"}),
    );
    assert_invalid_param_codes(&r, &[(k.name, None), ("date", None), ("website", None)]);
    let after = a.get_ok(id, AD);
    assert!(
        same_json(&before, &after),
        "record unchanged\nbefore {before}\n after {after}"
    );
}

fn malformed_json_body(k: Kind) {
    let a = api(k);
    let t = tok();
    let id = a.mk(AD, &format!("{t} json"), json!({}));
    for (method, path) in [
        ("POST", a.coll_path()),
        ("PATCH", a.item_path(id)),
        ("POST", a.item_path(id)),
    ] {
        for body in [
            format!("{{\"{}\": \"{t} broken\", ", k.name),
            "[1,2]".to_string(),
            "\"str\"".to_string(),
        ] {
            let r =
                a.s.req(method, &path)
                    .user(&ADMIN)
                    .header("Content-Type", "application/json")
                    .body(body.clone())
                    .send();
            let e = assert_error(&r, 400, "rest_invalid_json");
            assert_eq!(e["data"]["json_error_code"], 4, "{body}: {}", r.describe());
            assert!(e["data"]["json_error_message"].is_string());
        }
    }
    assert_eq!(a.search_ids(&t), vec![id], "nothing created");
}

fn form_encoded_bodies(k: Kind) {
    let a = api(k);
    let t = tok();
    let extra = if k.is_venue() {
        "&show_map=false&show_map_link=0&city=S%C3%A3o+Paulo&geo_lat=1.5&geo_lng=-2.25"
    } else {
        "&email=a%40b.example&phone=%2B1+555"
    };
    let r = a.send_form(
        "POST",
        &a.coll_path(),
        AD,
        &format!(
            "{}={t}+Form&description=Hello+world&status=draft&date=2019-01-02+03%3A04%3A05{extra}",
            k.name
        ),
    );
    assert_eq!(r.status, 201, "{}", r.describe());
    let v = r.json();
    assert_eq!(v[k.name], format!("{t} Form"));
    assert_eq!(v["description"], "<p>Hello world</p>");
    assert_eq!(v["status"], "draft");
    assert_eq!(v["date"], "2019-01-02 03:04:05");
    if k.is_venue() {
        assert_eq!(v["show_map"], false);
        assert_eq!(v["show_map_link"], false);
        assert_eq!(v["city"], "São Paulo");
        assert_eq!(v["geo_lat"].as_f64(), Some(1.5));
        assert_eq!(v["geo_lng"].as_f64(), Some(-2.25));
    } else {
        assert_eq!(v["email"], "a@b.example");
        assert_eq!(v["phone"], "+1 555");
    }
    let id = v["id"].as_i64().unwrap();
    let r = a.send_form("PUT", &a.item_path(id), AD, "phone=777&status=publish");
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(r.json()["phone"], "777");
    assert_eq!(r.json()["status"], "publish");
    // Form values are strings: a bad one still names the field.
    let r = a.send_form("PATCH", &a.item_path(id), AD, "website=foo&date=nope");
    assert_invalid_param_codes(&r, &[("website", None), ("date", None)]);
    // A body with an unsupported content type → 415.
    let r =
        a.s.req("POST", &a.coll_path())
            .user(&ADMIN)
            .header("Content-Type", "text/plain")
            .body(format!("{}={t}", k.name))
            .send();
    assert_error(&r, 415, "rest_unsupported_media_type");
}

fn own_fields_are_echoed(k: Kind) {
    let a = api(k);
    let t = tok();
    if k.is_venue() {
        // Every venue field set.
        let body = json!({"venue": format!("{t} Echo"), "show_map": "false",
            "show_map_link": "false", "address": "221b Baker Street", "city": "London",
            "country": "United Kingdom", "province": "Greater London", "state": "England",
            "zip": "NW1 6XE", "phone": "+44 20 0000", "stateprovince": "England, Greater London",
            "website": "http://venue.com"});
        let v = a.create_ok(AD, body.clone());
        for f in [
            "address",
            "city",
            "country",
            "province",
            "state",
            "zip",
            "phone",
            "stateprovince",
            "website",
        ] {
            assert_eq!(v[f], body[f], "{f}");
        }
        assert_eq!(v["show_map"], false);
        assert_eq!(v["show_map_link"], false);
        let id = v["id"].as_i64().unwrap();
        // Flag forms: truthy strings, other strings false, JSON booleans.
        for (val, want) in [
            (json!("yes"), true),
            (json!("nope"), false),
            (json!("ENABLED"), true),
            (json!("off"), false),
            (json!(true), true),
            (json!(false), false),
            (json!("1"), true),
            (json!(""), false),
        ] {
            let v = a.update_ok(
                id,
                AD,
                json!({"show_map": val.clone(), "show_map_link": val}),
            );
            assert_eq!(v["show_map"], want, "show_map {val}");
            assert_eq!(v["show_map_link"], want);
        }
        // stateprovince derivation.
        for (extra, want) in [
            (
                json!({"state": "TX", "country": "United States"}),
                Some("TX"),
            ),
            (json!({"state": "TX", "country": "US"}), Some("TX")),
            (json!({"state": "TX"}), Some("TX")),
            (json!({"province": "ON", "country": "Canada"}), Some("ON")),
            (
                json!({"state": "Bavaria", "province": "Upper", "country": "Germany"}),
                Some("Upper"),
            ),
            (json!({"state": "Bavaria", "country": "Germany"}), None),
            (
                json!({"state": "TX", "country": "United States", "stateprovince": "Texas!"}),
                Some("Texas!"),
            ),
        ] {
            let mut b = extra.clone();
            b["venue"] = json!(format!("{t} sp {extra}"));
            let v = a.create_ok(AD, b);
            assert_eq!(
                v.get("stateprovince").and_then(|x| x.as_str()),
                want,
                "{extra}: {v}"
            );
        }
    } else {
        let v = a.create_ok(
            AD,
            json!({"organizer": format!("{t} Echo"), "email": "not-checked at all",
                   "phone": "+1 555 0101", "website": "https://o.example.com/p?q=1#f"}),
        );
        assert_eq!(v["email"], "not-checked at all", "no e-mail format check");
        assert_eq!(v["phone"], "+1 555 0101");
        assert_eq!(v["website"], "https://o.example.com/p?q=1#f");
    }
    // website: trimmed, stored verbatim; upper-case scheme accepted.
    let v = a.create_ok(
        AD,
        json!({k.name: format!("{t} Web"), "website": "  HTTPS://Example.ORG/Ä?x=1  "}),
    );
    assert_eq!(v["website"], "HTTPS://Example.ORG/Ä?x=1");
}

fn images_by_id_and_url(k: Kind) {
    let a = api(k);
    let t = tok();
    let url = format!("https://img.example.org/{t}/photo.Png");
    let v = a.create_ok(AD, json!({k.name: format!("{t} i1"), "image": url}));
    let img = v["image"].clone();
    assert_eq!(keys(&img), vec!["url", "id", "extension"]);
    assert_eq!(img["url"], url);
    assert_eq!(img["extension"], "png");
    let img_id = img["id"].as_i64().unwrap();
    let id1 = v["id"].as_i64().unwrap();
    assert_ne!(img_id, id1);
    // The image ID is from the shared sequence: not a venue/organizer.
    assert_invalid_param_codes(&a.get(img_id, ANON), &[("id", None)]);
    // By ID (integer and digit string) and by the same URL → same image record.
    for val in [json!(img_id), json!(img_id.to_string()), json!(url)] {
        let v = a.create_ok(AD, json!({k.name: format!("{t} i2 {val}"), "image": val}));
        assert_eq!(v["image"]["id"], img_id, "image {val}");
        assert_eq!(v["image"]["url"], url);
    }
    // The image on update.
    let id = a.mk(AD, &format!("{t} i3"), json!({}));
    let v = a.update_ok(id, AD, json!({"image": img_id}));
    assert_eq!(v["image"]["id"], img_id);
    let v = a.update_ok(id, AD, json!({"phone": "1"}));
    assert_eq!(v["image"]["id"], img_id, "absent image kept");
    let v = a.update_ok(id, AD, json!({"image": null}));
    assert_eq!(v["image"]["id"], img_id, "null image = absent");
    for clear in [json!(""), json!(0), json!("0"), json!(false)] {
        let v = a.update_ok(id, AD, json!({"image": url}));
        assert_eq!(v["image"]["id"], img_id);
        let v = a.update_ok(id, AD, json!({"image": clear.clone()}));
        assert!(v.get("image").is_none(), "image {clear} removes: {v}");
    }
    // Extension rules.
    for (u, ext) in [
        (format!("https://img.example.org/{t}/noext"), ""),
        (
            format!("https://img.example.org/{t}/a.b/c.JPEG?x=1.gif"),
            "jpeg",
        ),
        (format!("http://img.example.org/{t}/dir.d/file"), ""),
    ] {
        let v = a.update_ok(id, AD, json!({"image": u}));
        assert_eq!(v["image"]["extension"], ext, "{u}");
        assert_eq!(v["image"]["url"], u);
    }
    // Contributor URL → 400 rest_forbidden_value; author → new image record.
    let r = a.create(
        CO,
        json!({k.name: format!("{t} contrib"), "image": format!("https://img.example.org/{t}/c.png")}),
    );
    assert_invalid_param_codes(&r, &[("image", Some("rest_forbidden_value"))]);
    // A contributor may still link an existing image by ID.
    let v = a.create_ok(
        CO,
        json!({k.name: format!("{t} contrib id"), "image": img_id}),
    );
    assert_eq!(v["image"]["id"], img_id);
    let cid = v["id"].as_i64().unwrap();
    let r = a.update(
        cid,
        CO,
        json!({"image": format!("https://img.example.org/{t}/c2.png")}),
    );
    assert_invalid_param_codes(&r, &[("image", Some("rest_forbidden_value"))]);
    let v = a.create_ok(
        AU,
        json!({k.name: format!("{t} author"), "image": format!("https://img.example.org/{t}/au.webp")}),
    );
    let au_img = v["image"]["id"].as_i64().unwrap();
    assert_ne!(au_img, img_id);
    assert_eq!(v["image"]["extension"], "webp");
    let v = a.update_ok(
        v["id"].as_i64().unwrap(),
        AU,
        json!({"image": format!("https://img.example.org/{t}/au2.gif")}),
    );
    assert_eq!(v["image"]["extension"], "gif");
    assert!(v["image"]["id"].as_i64().unwrap() > au_img);
}

fn duplicate_check(k: Kind) {
    let a = api(k);
    let t = tok();
    let name = format!("{t} Dup Hall");
    let v = a.create_ok(AD, json!({k.name: name, "description": "Content one"}));
    let id = v["id"].as_i64().unwrap();
    // Same name and description.
    let r = a.create(AD, json!({k.name: name, "description": "Content one"}));
    assert_eq!(r.status, 201, "{}", r.describe());
    assert_eq!(r.json()["id"], id);
    assert_eq!(
        r.header("location"),
        Some(format!("{}/{}/{id}", a.base(), k.coll).as_str()),
        "Location of the found record"
    );
    // Name only.
    assert_eq!(a.create_ok(AD, json!({k.name: name}))["id"], id);
    // Lower-cased name and description; surrounding spaces.
    assert_eq!(
        a.create_ok(
            AD,
            json!({k.name: format!("  {}  ", name.to_lowercase()), "description": "content ONE"})
        )["id"],
        id
    );
    // Other fields partly different or missing → same record; fields present are applied.
    let mut b = json!({k.name: name, "phone": "999", "website": "https://dup.example.org"});
    if k.is_venue() {
        b["address"] = json!("New Street 1");
    } else {
        b["email"] = json!("dup@example.org");
    }
    let v = a.create_ok(AD, b);
    assert_eq!(v["id"], id);
    assert_eq!(
        v["phone"], "999",
        "present fields applied to the found record"
    );
    assert_eq!(v["website"], "https://dup.example.org");
    assert_eq!(
        v["description"], "<p>Content one</p>",
        "description not changed"
    );
    let v = a.create_ok(
        AD,
        json!({k.name: name, "status": "draft", "description": "", "author": EDITOR_ID}),
    );
    assert_eq!(v["id"], id);
    assert_eq!(v["status"], "publish", "status not changed by a duplicate");
    assert_eq!(v["author"], "1", "author not changed by a duplicate");
    assert_eq!(v["phone"], "999", "absent fields untouched");
    if k.is_venue() {
        assert_eq!(v["address"], "New Street 1");
    }
    // Different description → a new record (with a -2 slug).
    let v = a.create_ok(AD, json!({k.name: name, "description": "Other content"}));
    assert_ne!(v["id"], id);
    assert_eq!(v["slug"], format!("{t}-dup-hall-2"));
    let other = v["id"].as_i64().unwrap();
    // Accents are significant.
    let v = a.create_ok(AD, json!({k.name: format!("{t} Dúp Hall")}));
    assert_ne!(v["id"], id);
    assert_ne!(v["id"], other);
    // A caller who may read but not update the found record: returned unchanged.
    let v = a.create_ok(CO, json!({k.name: name, "phone": "contrib"}));
    assert_eq!(
        v["id"], id,
        "published record is readable by the contributor"
    );
    assert_eq!(v["phone"], "999", "not updated without edit rights");
    assert_eq!(a.get_ok(id, AD)["phone"], "999");
    // Records the caller may not read are not considered: a new record.
    let dn = format!("{t} Draft Dup");
    let d = a.mk(AD, &dn, json!({"status": "draft"}));
    let v = a.create_ok(CO, json!({k.name: dn}));
    assert_ne!(
        v["id"], d,
        "admin's draft is not readable by the contributor"
    );
    // Trashed records are not considered.
    let tn = format!("{t} Trash Dup");
    let tid = a.mk(AD, &tn, json!({}));
    assert_eq!(a.delete(tid, AD).status, 200);
    let v = a.create_ok(AD, json!({k.name: tn}));
    assert_ne!(v["id"], tid);
    // Another language is not considered.
    let v = a.create_ok(AD, json!({k.name: name, "translation_language": "es"}));
    assert_ne!(v["id"], id);
    assert_eq!(v["language"], "es");
}

// ---------------------------------------------------------------------------------------------
// Update and delete
// ---------------------------------------------------------------------------------------------

fn update_rename_and_methods(k: Kind) {
    let a = api(k);
    let t = tok();
    let id = a.mk(AD, &format!("{t} Upd"), json!({"phone": "1"}));
    assert_plain_error(
        &a.update(id, ANON, json!({k.name: format!("{t} x")})),
        401,
        "rest_forbidden",
    );
    for (i, m) in ["POST", "PUT", "PATCH"].iter().enumerate() {
        let r = a.send(
            m,
            &a.item_path(id),
            AD,
            Some(&json!({k.name: format!("{t} Renamed {i}")})),
        );
        assert_eq!(r.status, 200, "{m}: {}", r.describe());
        let v = r.json();
        assert_eq!(v[k.name], format!("{t} Renamed {i}"));
        assert_eq!(v["slug"], format!("{t}-upd"), "slug unchanged by a rename");
        assert_eq!(v["phone"], "1");
        assert!(r.header("location").is_none(), "no Location on update");
    }
    // Post fields as on create.
    let v = a.update_ok(
        id,
        AD,
        json!({"author": EDITOR_ID, "date": 1514822400, "date_utc": 1514822400,
               "description": "Venue description", "status": "draft", "timezone": "UTC"}),
    );
    assert_eq!(v["author"], "2");
    assert_eq!(v["date"], "2018-01-01 16:00:00");
    assert_eq!(v["date_utc"], "2018-01-01 16:00:00");
    assert_eq!(v["description"], "<p>Venue description</p>");
    assert_eq!(v["status"], "draft");
    assert_eq!(a.get_ok(id, AD)["status"], "draft", "stored");
    // Rename to another record's name.
    let other = a.mk(AD, &format!("{t} Other"), json!({}));
    let v = a.update_ok(id, AD, json!({k.name: format!("{t} Other")}));
    assert_eq!(v["id"], id);
    assert_eq!(a.get_ok(other, AD)[k.name], format!("{t} Other"));
    assert_eq!(a.get_ok(id, AD)[k.name], format!("{t} Other"));
    // A path id wins over a body id.
    let v = a.update_ok(id, AD, json!({"id": other, "phone": "path wins"}));
    assert_eq!(v["id"], id);
    assert!(a.get_ok(other, AD).get("phone").is_none());
    // Name rules on update.
    let r = a.update(id, AD, json!({k.name: ""}));
    assert_invalid_param_codes(&r, &[(k.name, None)]);
    let v = a.update_ok(id, AD, json!({k.name: "  Trimmed  "}));
    assert_eq!(v[k.name], "Trimmed");
    // Unknown ID on update: 400 before permission; author given as a digit string.
    assert_invalid_param_codes(
        &a.update(UNKNOWN_ID, ANON, json!({"phone": "1"})),
        &[("id", None)],
    );
    assert_invalid_param_codes(
        &a.update(UNKNOWN_ID, SU, json!({"phone": "1"})),
        &[("id", None)],
    );
    let v = a.update_ok(id, AD, json!({"author": "3", "status": null}));
    assert_eq!(v["author"], "3");
    assert_eq!(v["status"], "draft", "null status = absent");
    // PUT/PATCH on the collection are not routed.
    for m in ["PUT", "PATCH"] {
        let r = a.send(m, &a.coll_path(), AD, Some(&json!({k.name: "x"})));
        assert_plain_error(&r, 404, "rest_no_route");
    }
    // Empty body: nothing changes, 200.
    let before = a.get_ok(id, AD);
    let v = a.update_ok(id, AD, json!({}));
    assert_eq!(v["phone"], before["phone"]);
}

fn delete_trash_and_restore(k: Kind) {
    let a = api(k);
    let t = tok();
    // DELETE of an unknown ID: 400 on `id` for every caller.
    let r = a.delete(UNKNOWN_ID, ANON);
    assert_invalid_param_codes(&r, &[("id", None)]);
    let r = a.delete(UNKNOWN_ID, AD);
    assert_invalid_param_codes(&r, &[("id", None)]);
    let name = format!("{t} Trash Me");
    let id = a.mk(AD, &name, json!({"phone": "1"}));
    assert_plain_error(&a.delete(id, ANON), 401, "rest_forbidden");
    assert_plain_error(&a.delete(id, SU), 403, "rest_forbidden");
    let r = a.send(
        "DELETE",
        &a.item_path(id),
        AD,
        Some(&json!({"force": true})),
    );
    assert_eq!(r.status, 200, "{}", r.describe());
    let v = r.json();
    assert_eq!(v["id"], id);
    assert_eq!(v["status"], "trash");
    let slug = format!("{t}-trash-me");
    assert_eq!(v["slug"], format!("{slug}__trashed"));
    assert_eq!(v["url"], a.url_plain(id));
    assert!(v.get("json_ld").is_none());
    assert_eq!(v["phone"], "1");
    let r = a.delete(id, AD);
    assert_plain_error(&r, 410, &k.code("is-in-trash"));
    // Readable by editors, not by anonymous callers; old slug no longer resolves.
    assert_eq!(a.get_ok(id, ED)["status"], "trash");
    assert_plain_error(&a.get(id, ANON), 403, &k.code("not-accessible"));
    assert_invalid_param_codes(
        &a.send("GET", &a.slug_path(&slug), AD, None),
        &[("slug", None)],
    );
    let r = a.send("GET", &a.slug_path(&format!("{slug}__trashed")), AD, None);
    assert_eq!(r.status, 200, "{}", r.describe());
    // Not in default lists; listed with status=trash.
    let l = a.list_ok(&format!("search={t}"), AD);
    assert!(a.ids(&l).is_empty(), "{l}");
    let l = a.list_ok(&format!("search={t}&status=trash"), AD);
    assert_eq!(a.ids(&l), vec![id]);
    // Update without status stays in the trash.
    let v = a.update_ok(id, AD, json!({"phone": "2"}));
    assert_eq!(v["status"], "trash");
    assert_eq!(v["slug"], format!("{slug}__trashed"));
    // Restore via a status: the remembered slug comes back.
    let v = a.update_ok(id, AD, json!({"status": "publish"}));
    assert_eq!(v["status"], "publish");
    assert_eq!(v["slug"], slug);
    assert_eq!(v["url"], a.url_public(&slug));
    // Trash again, let another record take the slug, restore → made unique.
    assert_eq!(a.delete(id, AD).status, 200);
    let newer = a.create_ok(AD, json!({k.name: name}));
    assert_ne!(newer["id"], id, "trashed records are not duplicates");
    assert_eq!(newer["slug"], slug, "the trashed record freed its slug");
    let v = a.update_ok(id, AD, json!({"status": "draft"}));
    assert_eq!(v["status"], "draft");
    assert_eq!(v["slug"], format!("{slug}-2"));
    // DELETE of a record of the other kind's ID → 400.
    let other = if k.is_venue() { ORGANIZER } else { VENUE };
    let oid = api(other).mk(AD, &format!("{t} other kind"), json!({}));
    assert_invalid_param_codes(&a.delete(oid, AD), &[("id", None)]);
    // DELETE on the collection is not routed.
    let r = a.send("DELETE", &a.coll_path(), AD, None);
    assert_plain_error(&r, 404, "rest_no_route");
}

// ---------------------------------------------------------------------------------------------
// Single routes
// ---------------------------------------------------------------------------------------------

fn single_routes_not_found_and_access(k: Kind) {
    let a = api(k);
    let t = tok();
    for p in ["foo", "foo%20bar", "foo-bar", "-1", "1.5"] {
        let r = a.send("GET", &format!("{}/{p}", a.coll_path()), ANON, None);
        assert_plain_error(&r, 404, "rest_no_route");
    }
    assert_invalid_param_codes(
        &a.get(UNKNOWN_ID, ANON),
        &[("id", Some("rest_invalid_reference"))],
    );
    let other = if k.is_venue() { ORGANIZER } else { VENUE };
    let oid = api(other).mk(AD, &format!("{t} other"), json!({}));
    assert_invalid_param_codes(&a.get(oid, ANON), &[("id", None)]);
    let r = a.send("GET", &a.slug_path(&format!("{t}-nope")), ANON, None);
    assert_invalid_param_codes(&r, &[("slug", None)]);
    // A draft: 403 to anonymous callers and subscribers, readable by editors.
    let d = a.mk(AD, &format!("{t} Draft"), json!({"status": "draft"}));
    let r = a.get(d, ANON);
    assert_plain_error(&r, 403, &k.code("not-accessible"));
    assert_plain_error(&a.get(d, SU), 403, &k.code("not-accessible"));
    let v = a.get_ok(d, ED);
    assert_eq!(v["status"], "draft");
    assert!(v.get("json_ld").is_some());
    let slug = v["slug"].as_str().unwrap().to_string();
    assert_eq!(slug, format!("{t}-draft"), "drafts get a slug");
    let r = a.send("GET", &a.slug_path(&slug), ANON, None);
    assert_plain_error(&r, 403, &k.code("not-accessible"));
    let r = a.send("GET", &a.slug_path(&slug), ED, None);
    assert_eq!(r.status, 200, "{}", r.describe());
    // HEAD mirrors GET.
    let r = a.s.req("HEAD", &a.item_path(d)).send();
    assert_eq!(r.status, 403);
    // Leading zeros in the ID.
    let r = a.send("GET", &format!("{}/00{d}", a.coll_path()), ED, None);
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(r.json()["id"], d);
    // Trailing slash.
    let r = a.send("GET", &format!("{}/", a.item_path(d)), ED, None);
    assert_eq!(r.status, 200);
}

fn allow_header_per_caller(k: Kind) {
    let a = api(k);
    let t = tok();
    let id = a.mk(AD, &format!("{t} Allow"), json!({}));
    let full = "GET, DELETE, POST, PUT, PATCH";
    assert_eq!(a.get(id, ANON).header("allow"), Some("GET"), "anonymous");
    assert_eq!(a.get(id, AD).header("allow"), Some(full), "administrator");
    assert_eq!(a.get(id, ED).header("allow"), Some(full), "editor");
    assert_eq!(a.get(id, SU).header("allow"), Some("GET"), "subscriber");
    assert_eq!(
        a.get(id, CO).header("allow"),
        Some("GET"),
        "contributor, others' record"
    );
    assert_eq!(
        a.get(id, AU).header("allow"),
        Some("GET"),
        "author, others' record"
    );
    let own = a.mk(AU, &format!("{t} own"), json!({}));
    assert_eq!(a.get(own, AU).header("allow"), Some(full), "author, own");
    let cown = a.mk(CO, &format!("{t} cown"), json!({}));
    assert_eq!(
        a.get(cown, CO).header("allow"),
        Some(full),
        "contributor, own draft"
    );
    let slug = a.get_ok(id, AD)["slug"].as_str().unwrap().to_string();
    let r = a.send("GET", &a.slug_path(&slug), ANON, None);
    assert_eq!(r.header("allow"), Some("GET"));
    let r = a.send("GET", &a.slug_path(&slug), AD, None);
    assert_eq!(r.header("allow"), Some(full));
    // On errors after routing too.
    let d = a.mk(AD, &format!("{t} d"), json!({"status": "draft"}));
    assert_eq!(a.get(d, ANON).header("allow"), Some("GET"));
    // Collection.
    assert_eq!(a.list("", ANON).header("allow"), Some("GET"));
    assert_eq!(a.list("", SU).header("allow"), Some("GET"));
    assert_eq!(a.list("", CO).header("allow"), Some("GET, POST"));
    assert_eq!(a.list("", AD).header("allow"), Some("GET, POST"));
}

fn by_slug_routes(k: Kind) {
    let a = api(k);
    let t = tok();
    let id = a.mk(AD, &format!("{t} Rock & Roll Night"), json!({}));
    let slug = format!("{t}-rock-roll-night");
    assert_eq!(a.get_ok(id, ANON)["slug"], slug);
    // Path slugs are sanitized before the lookup.
    for p in [
        format!("{}-Rock-Roll-Night", t.to_uppercase()),
        format!("{t}%20rock%20roll%20night"),
    ] {
        let r = a.send("GET", &a.slug_path(&p), ANON, None);
        assert_eq!(r.status, 200, "{p}: {}", r.describe());
        assert_eq!(r.json()["id"], id);
    }
    // Update by slug (POST/PUT/PATCH), per-record permission checks.
    for m in ["POST", "PUT", "PATCH"] {
        let r = a.send(
            m,
            &a.slug_path(&slug),
            AD,
            Some(&json!({"phone": m, "slug": "ignored"})),
        );
        assert_eq!(r.status, 200, "{m}: {}", r.describe());
        assert_eq!(r.json()["phone"], m);
        assert_eq!(r.json()["slug"], slug, "no slug write field");
    }
    let r = a.send(
        "PATCH",
        &a.slug_path(&slug),
        CO,
        Some(&json!({"phone": "x"})),
    );
    assert_plain_error(&r, 403, "rest_forbidden");
    let r = a.send(
        "PATCH",
        &a.slug_path(&slug),
        ANON,
        Some(&json!({"phone": "x"})),
    );
    assert_plain_error(&r, 401, "rest_forbidden");
    let r = a.send("DELETE", &a.slug_path(&slug), CO, None);
    assert_plain_error(&r, 403, "rest_forbidden");
    // Unknown slug on update/delete → 400, even anonymous.
    let r = a.send(
        "PATCH",
        &a.slug_path(&format!("{t}-missing")),
        ANON,
        Some(&json!({"phone": "x"})),
    );
    assert_invalid_param_codes(&r, &[("slug", None)]);
    let r = a.send("DELETE", &a.slug_path(&format!("{t}-missing")), AD, None);
    assert_invalid_param_codes(&r, &[("slug", None)]);
    // Delete by slug.
    let r = a.send("DELETE", &a.slug_path(&slug), AD, None);
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(r.json()["id"], id);
    assert_eq!(r.json()["status"], "trash");
    let r = a.send(
        "DELETE",
        &a.slug_path(&format!("{slug}__trashed")),
        AD,
        None,
    );
    assert_plain_error(&r, 410, &k.code("is-in-trash"));
    // Empty slug segment → no route.
    let r = a.send("GET", &format!("{}/{}/by-slug/", NS, k.coll), ANON, None);
    assert_plain_error(&r, 404, "rest_no_route");
}

// ---------------------------------------------------------------------------------------------
// Lists on the shared server (token-isolated)
// ---------------------------------------------------------------------------------------------

fn list_visibility_per_caller(k: Kind) {
    let a = api(k);
    let t = tok();
    let p = a.mk(AD, &format!("{t} pub"), json!({}));
    let ad = a.mk(AD, &format!("{t} admin draft"), json!({"status": "draft"}));
    let ap = a.mk(
        AD,
        &format!("{t} admin private"),
        json!({"status": "private"}),
    );
    let cd = a.mk(CO, &format!("{t} contrib draft"), json!({}));
    let ud = a.mk(AU, &format!("{t} author draft"), json!({"status": "draft"}));
    let fu = a.mk(
        AD,
        &format!("{t} future"),
        json!({"status": "future", "date": "+2 hours"}),
    );
    let tr = a.mk(AD, &format!("{t} trashed"), json!({}));
    assert_eq!(a.delete(tr, AD).status, 200);
    let q = format!("search={t}");
    let sorted = |mut v: Vec<i64>| {
        v.sort();
        v
    };
    let ids_for = |who: Who, extra: &str| {
        let r = a.list(&format!("{q}{extra}"), who);
        let v = check_list_shape(k, &r);
        sorted(a.ids(&v))
    };
    assert_eq!(ids_for(ANON, ""), vec![p], "anonymous sees publish only");
    assert_eq!(ids_for(SU, ""), vec![p], "subscriber sees publish only");
    assert_eq!(
        ids_for(CO, ""),
        sorted(vec![p, cd]),
        "contributor: publish + own"
    );
    assert_eq!(
        ids_for(AU, ""),
        sorted(vec![p, ud]),
        "author: publish + own"
    );
    let all = sorted(vec![p, ad, ap, cd, ud, fu]);
    assert_eq!(ids_for(ED, ""), all, "editor: default set (no trash)");
    assert_eq!(ids_for(AD, ""), all, "administrator");
    assert_eq!(
        ids_for(ED, "&status=any"),
        all,
        "editor status=any = default set"
    );
    assert_eq!(ids_for(ED, "&status=trash"), vec![tr]);
    assert_eq!(ids_for(ED, "&status=draft"), sorted(vec![ad, cd, ud]));
    assert_eq!(ids_for(ED, "&status=future,private"), sorted(vec![ap, fu]));
    assert_eq!(
        ids_for(CO, "&status=draft"),
        vec![cd],
        "contributor: own drafts only"
    );
    assert_eq!(ids_for(CO, "&status=any"), sorted(vec![p, cd]));
    assert_eq!(ids_for(AU, "&status=private,future"), Vec::<i64>::new());
    assert_eq!(ids_for(ANON, "&status=publish"), vec![p]);
    assert_eq!(ids_for(ANON, "&status[]=publish"), vec![p]);
    // Refused status values.
    for (who, st) in [
        (ANON, "any"),
        (ANON, "draft"),
        (ANON, "publish,draft"),
        (ANON, "publish,publish"),
        (SU, "any"),
        (SU, "pending"),
        (ED, "foo"),
        (ED, "any,publish"),
        (ED, ""),
        (CO, "bogus"),
    ] {
        let r = a.list(&format!("{q}&status={st}"), who);
        let sub = if who.is_none() || who.map(|u| u.name) == Some("subscriber") {
            Some("rest_forbidden_value")
        } else if st == "foo" || st == "bogus" || st == "any,publish" {
            Some("rest_not_in_enum")
        } else {
            None
        };
        assert_invalid_param_codes(&r, &[("status", sub)]);
    }
    // Totals count only visible records.
    let r = a.list(&q, CO);
    assert_eq!(r.header("x-cal-total"), Some("2"));
    // Anonymous empty status: refused with the sub-code rest_forbidden_value like any value
    // but `publish` (checked last, on its own).
    let r = a.list(&format!("{q}&status="), ANON);
    assert_invalid_param_codes(&r, &[("status", Some("rest_forbidden_value"))]);
}

fn list_links_headers_and_clamp(k: Kind) {
    let a = api(k);
    let t = tok();
    let mut ids = Vec::new();
    for i in 0..5 {
        ids.push(a.mk(AD, &format!("{t} L{i}"), json!({})));
    }
    let newest_first: Vec<i64> = ids.iter().rev().copied().collect();
    let cb = format!("{}/{}/", a.base(), k.coll);
    let site = a.s.public.clone();
    // Anonymous: status=publish in Q; search keeps its place after per_page.
    let q = format!("per_page=2&search={t}&status=publish");
    for page in 1..=3u64 {
        let r = a.list(&format!("search={t}&per_page=2&page={page}"), ANON);
        let v = check_list_shape(k, &r);
        assert_eq!(v["total"], 5);
        assert_eq!(v["total_pages"], 3);
        check_links(&r, &v, &site, &cb, page, &q);
        let start = (page as usize - 1) * 2;
        let end = (start + 2).min(5);
        assert_eq!(a.ids(&v), newest_first[start..end].to_vec(), "page {page}");
    }
    // Page past the end → 404.
    let r = a.list(&format!("search={t}&per_page=2&page=4"), ANON);
    assert_plain_error(&r, 404, &k.code("archive-page-not-found"));
    // Editors: status=any when not given; the given list otherwise, without spaces, encoded.
    let r = a.list(&format!("search={t}&per_page=2&page=2"), ED);
    let v = check_list_shape(k, &r);
    check_links(
        &r,
        &v,
        &site,
        &cb,
        2,
        &format!("per_page=2&search={t}&status=any"),
    );
    let r = a.list(&format!("search={t}&per_page=2&status=publish, draft"), ED);
    let v = check_list_shape(k, &r);
    check_links(
        &r,
        &v,
        &site,
        &cb,
        1,
        &format!("per_page=2&search={t}&status=publish%2Cdraft"),
    );
    // Search text is form-encoded; orderby follows search; per_page clamped to 50.
    let r = a.list(
        &format!("search={t}%20l1:&orderby=relevance&per_page=100"),
        ANON,
    );
    let v = check_list_shape(k, &r);
    assert_eq!(v["total"], 1, "{v}");
    check_links(
        &r,
        &v,
        &site,
        &cb,
        1,
        &format!("per_page=50&search={t}+l1%3A&orderby=relevance&status=publish"),
    );
    // Default per_page is 10.
    let r = a.list(&format!("search={t}"), ANON);
    let v = check_list_shape(k, &r);
    check_links(
        &r,
        &v,
        &site,
        &cb,
        1,
        &format!("per_page=10&search={t}&status=publish"),
    );
    // A query with no match: 200, empty, zero totals, no links.
    let r = a.list(&format!("search={t}xq"), ANON);
    let v = check_list_shape(k, &r);
    assert_eq!(v[k.coll], json!([]));
    assert_eq!(v["total"], 0);
    assert_eq!(v["total_pages"], 0);
    assert_eq!(r.header("x-cal-total"), Some("0"));
    assert_eq!(r.header("x-cal-totalpages"), Some("0"));
    // Explicit translation_language joins Q; the /es segment changes the base.
    let es = Api {
        s: a.s,
        k,
        seg: "/es",
    };
    let es_ids: Vec<i64> = (0..3)
        .map(|i| es.mk(AD, &format!("{t} E{i}"), json!({})))
        .collect();
    let r = a.list(
        &format!("search={t}&per_page=2&page=2&translation_language=es"),
        ANON,
    );
    let v = check_list_shape(k, &r);
    assert_eq!(v["total"], 3);
    assert_eq!(a.ids(&v), vec![es_ids[0]]);
    check_links(
        &r,
        &v,
        &site,
        &cb,
        2,
        &format!("per_page=2&search={t}&status=publish&translation_language=es"),
    );
    let r = es.list(&format!("search={t}&per_page=2"), ANON);
    let v = check_list_shape(k, &r);
    assert_eq!(v["total"], 3);
    assert!(v[k.coll]
        .as_array()
        .unwrap()
        .iter()
        .all(|x| x["language"] == "es"));
    let es_cb = format!("{}/es{NS}/{}/", a.s.public, k.coll);
    check_links(
        &r,
        &v,
        &format!("{site}/es"),
        &es_cb,
        1,
        &format!("per_page=2&search={t}&status=publish"),
    );
    // Records listed through /es have /es urls.
    let item = &v[k.coll][0];
    assert!(
        item["url"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{site}/es/{}/", k.name)),
        "{item}"
    );
    // /es with translation_language=pt-br: pt-br records (none), links under /es with the param.
    let r = es.list(&format!("search={t}&translation_language=pt-br"), ANON);
    let v = check_list_shape(k, &r);
    assert_eq!(v["total"], 0);
    check_links(
        &r,
        &v,
        &format!("{site}/es"),
        &es_cb,
        1,
        &format!("per_page=10&search={t}&status=publish&translation_language=pt-br"),
    );
}

fn list_parameter_validation(k: Kind) {
    let a = api(k);
    for (q, name, sub) in [
        ("page=foo", "page", Some("rest_invalid_type")),
        ("page=-1", "page", Some("rest_out_of_bounds")),
        ("page=0", "page", Some("rest_out_of_bounds")),
        ("page=foo%20bar", "page", Some("rest_invalid_type")),
        ("page=1.5", "page", Some("rest_invalid_type")),
        ("page=", "page", Some("rest_invalid_type")),
        ("per_page=foo", "per_page", Some("rest_invalid_type")),
        ("per_page=-1", "per_page", Some("rest_out_of_bounds")),
        ("per_page=0", "per_page", Some("rest_out_of_bounds")),
        ("per_page=foo%20bar", "per_page", Some("rest_invalid_type")),
        ("per_page=", "per_page", Some("rest_invalid_type")),
        ("search=", "search", Some("rest_empty")),
        ("search[]=x", "search", Some("rest_invalid_type")),
        ("orderby=relevance", "orderby", None),
        ("search=x&orderby=date", "orderby", None),
        ("status=foo", "status", Some("rest_not_in_enum")),
        (
            "translation_language=fr",
            "translation_language",
            Some("rest_not_in_enum"),
        ),
        (
            "translation_language=",
            "translation_language",
            Some("rest_not_in_enum"),
        ),
    ] {
        let who = if name == "status" { ED } else { ANON };
        let r = a.list(q, who);
        assert_invalid_param_codes(&r, &[(name, sub)]);
    }
    // Several at once.
    let r = a.list("page=0&per_page=foo&search=&status=draft", ANON);
    assert_invalid_param_codes(
        &r,
        &[
            ("page", None),
            ("per_page", None),
            ("search", None),
            ("status", None),
        ],
    );
    // Accepted integer spellings.
    for q in [
        "page=1&per_page=%2B5",
        "page=1.0&per_page=007",
        "per_page=1e1",
    ] {
        let r = a.list(q, ANON);
        assert_eq!(r.status, 200, "{q}: {}", r.describe());
    }
    // Unknown and case-different parameters are ignored.
    let r = a.list("Page=foo&foo=bar", ANON);
    assert_eq!(r.status, 200, "{}", r.describe());
}

fn search_relevance_order(k: Kind) {
    let a = api(k);
    let t = tok();
    // Name match created first; description match created later (newer, so first by default).
    let by_name = a.mk(AD, &format!("{t} Hall"), json!({}));
    let by_desc = a.mk(
        AD,
        "Relevance other",
        json!({"description": format!("About {t} here")}),
    );
    let v = a.list_ok(&format!("search={t}"), ANON);
    assert_eq!(
        a.ids(&v),
        vec![by_desc, by_name],
        "normal order: newest first"
    );
    let v = a.list_ok(&format!("search={t}&orderby=relevance"), ANON);
    assert_eq!(
        a.ids(&v),
        vec![by_name, by_desc],
        "name match ranks above description"
    );
    // Excerpt is searchable; HTML tags are ignored for the analysis.
    let t2 = tok();
    let ex = a.mk(
        AD,
        "Excerpt holder",
        json!({"excerpt": format!("<b>{t2}</b>")}),
    );
    let v = a.list_ok(&format!("search={t2}"), ANON);
    assert!(a.ids(&v).contains(&ex), "{v}");
    // Trashed records match only when status asks for them.
    let t3 = tok();
    let tr = a.mk(AD, &format!("{t3} gone"), json!({}));
    a.delete(tr, AD);
    assert!(a.ids(&a.list_ok(&format!("search={t3}"), AD)).is_empty());
    assert_eq!(
        a.ids(&a.list_ok(&format!("search={t3}&status=trash"), AD)),
        vec![tr]
    );
}

// ---------------------------------------------------------------------------------------------
// Translation groups
// ---------------------------------------------------------------------------------------------

fn translation_groups(k: Kind) {
    let a = api(k);
    let t = tok();
    let en = a.mk(AD, &format!("{t} Hall"), json!({}));
    let v = a.create_ok(
        AD,
        json!({k.name: format!("{t} Sala"), "translation_language": "es", "translation_of": en}),
    );
    let es = v["id"].as_i64().unwrap();
    assert_eq!(v["language"], "es");
    assert_eq!(v["translations"], json!({"en": en, "es": es}));
    let g = a.get_ok(en, ANON);
    assert_eq!(g["translations"], json!({"en": en, "es": es}));
    assert_eq!(g["language"], "en");
    // pt-br through the path segment, joining via the es member; key order en, pt-br, es.
    let pt_api = Api {
        s: a.s,
        k,
        seg: "/pt-br",
    };
    let r = pt_api.create(
        AD,
        json!({k.name: format!("{t} Salao"), "translation_of": es}),
    );
    assert_eq!(r.status, 201, "{}", r.describe());
    assert_eq!(
        r.header("location"),
        Some(format!("{}/pt-br{NS}/{}/{}", a.s.public, k.coll, r.json()["id"]).as_str())
    );
    let pt = r.json()["id"].as_i64().unwrap();
    assert_eq!(r.json()["language"], "pt-br");
    let g = a.get_ok(en, ANON);
    assert!(
        same_json(
            &g["translations"],
            &json!({"en": en, "pt-br": pt, "es": es})
        ),
        "{}",
        g["translations"]
    );
    // Conflicts: another es member; pointing at a record of the same language.
    let r = a.create(
        AD,
        json!({k.name: format!("{t} Otra"), "translation_language": "es", "translation_of": en}),
    );
    let e = assert_error(&r, 409, "translation-conflict");
    assert_eq!(e["data"]["language"], "es");
    assert_eq!(e["data"]["translation_id"], es);
    let r = a.create(
        AD,
        json!({k.name: format!("{t} Another"), "translation_of": en}),
    );
    let e = assert_error(&r, 409, "translation-conflict");
    assert_eq!(e["data"]["language"], "en");
    assert_eq!(e["data"]["translation_id"], en);
    assert!(
        !a.search_ids(&t).iter().any(|x| ![en].contains(x)),
        "nothing written by a conflicting create"
    );
    // translation_of of another kind / unknown → 400.
    let other = if k.is_venue() { ORGANIZER } else { VENUE };
    let oid = api(other).mk(AD, &format!("{t} other kind"), json!({}));
    let r = a.create(
        AD,
        json!({k.name: format!("{t} X"), "translation_language": "es", "translation_of": oid}),
    );
    assert_invalid_param_codes(&r, &[("translation_of", Some("rest_invalid_reference"))]);
    // Explicit translation_language on ID routes → the member, or 404 not-found.
    let r = a.send(
        "GET",
        &format!("{}?translation_language=es", a.item_path(en)),
        ANON,
        None,
    );
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(r.json()["id"], es);
    let r = a.send(
        "GET",
        &format!("{}?translation_language=en", a.item_path(en)),
        ANON,
        None,
    );
    assert_eq!(r.json()["id"], en, "itself");
    let lone = a.mk(AD, &format!("{t} Lone"), json!({}));
    let r = a.send(
        "GET",
        &format!("{}?translation_language=es", a.item_path(lone)),
        ANON,
        None,
    );
    assert_plain_error(&r, 404, &k.code("not-found"));
    // Reported before the permission check: anonymous update with a missing member → 404.
    let r = a.send(
        "PATCH",
        &format!("{}?translation_language=pt-br", a.item_path(lone)),
        ANON,
        Some(&json!({"phone": "1"})),
    );
    assert_plain_error(&r, 404, &k.code("not-found"));
    // The path segment alone does not redirect ID routes.
    let r = a.send("GET", &format!("/es{}", a.item_path(en)), ANON, None);
    assert_eq!(r.json()["id"], en);
    // Update through the en ID with translation_language=es updates the es member.
    let r = a.send(
        "PATCH",
        &a.item_path(en),
        AD,
        Some(&json!({"phone": "es phone", "translation_language": "es"})),
    );
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(r.json()["id"], es);
    assert_eq!(r.json()["language"], "es", "language never changes");
    assert_eq!(a.get_ok(es, AD)["phone"], "es phone");
    assert!(a.get_ok(en, AD).get("phone").is_none());
    // Slug lookups are per language.
    let es_slug = a.get_ok(es, AD)["slug"].as_str().unwrap().to_string();
    assert_eq!(es_slug, format!("{t}-sala"));
    let r = a.send("GET", &a.slug_path(&es_slug), ANON, None);
    assert_invalid_param_codes(&r, &[("slug", None)]);
    let r = a.send("GET", &format!("/es{}", a.slug_path(&es_slug)), ANON, None);
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(r.json()["id"], es);
    assert_eq!(
        r.json()["url"],
        format!("{}/es/{}/{es_slug}/", a.s.public, k.name)
    );
    let r = a.send(
        "GET",
        &format!("{}?translation_language=es", a.slug_path(&es_slug)),
        ANON,
        None,
    );
    assert_eq!(r.json()["id"], es);
    // Same slug in two languages is allowed.
    let v = a.create_ok(
        AD,
        json!({k.name: format!("{t} Sala"), "translation_language": "pt-br"}),
    );
    assert_eq!(v["slug"], es_slug, "slugs are unique per language");
    // Language-filtered list.
    let v = a.list_ok(&format!("search={t}&translation_language=es"), ANON);
    assert_eq!(a.ids(&v), vec![es]);
    // Detach with translation_of=0; re-join with translation_of.
    let v = a.update_ok(pt, AD, json!({"translation_of": 0}));
    assert_eq!(v["translations"], json!({"pt-br": pt}));
    assert_eq!(
        a.get_ok(en, AD)["translations"],
        json!({"en": en, "es": es})
    );
    let v = a.update_ok(pt, AD, json!({"translation_of": en}));
    assert!(same_json(
        &v["translations"],
        &json!({"en": en, "pt-br": pt, "es": es})
    ));
    let v = a.update_ok(pt, AD, json!({"translation_of": pt}));
    assert!(
        same_json(
            &v["translations"],
            &json!({"en": en, "pt-br": pt, "es": es})
        ),
        "own ID: no change"
    );
    // Update conflict: lone (en) joining en's group.
    let r = a.update(lone, AD, json!({"translation_of": es}));
    let e = assert_error(&r, 409, "translation-conflict");
    assert_eq!(e["data"]["language"], "en");
    assert_eq!(e["data"]["translation_id"], en);
    // translations lists only members the caller may read.
    let v = a.update_ok(es, AD, json!({"status": "draft"}));
    assert_eq!(v["status"], "draft");
    let g = a.get_ok(en, ANON);
    assert!(
        same_json(&g["translations"], &json!({"en": en, "pt-br": pt})),
        "{}",
        g["translations"]
    );
    // DELETE with a body translation_language trashes the member; it keeps its group slot.
    let r = a.send(
        "DELETE",
        &a.item_path(en),
        AD,
        Some(&json!({"translation_language": "pt-br"})),
    );
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(r.json()["id"], pt);
    assert_eq!(r.json()["status"], "trash");
    let g = a.get_ok(en, AD);
    assert!(same_json(
        &g["translations"],
        &json!({"en": en, "pt-br": pt, "es": es})
    ));
    let r = a.create(
        AD,
        json!({k.name: format!("{t} Novo"), "translation_language": "pt-br", "translation_of": en}),
    );
    let e = assert_error(&r, 409, "translation-conflict");
    assert_eq!(
        e["data"]["translation_id"], pt,
        "trashed members keep their slot"
    );
}

// ---------------------------------------------------------------------------------------------
// Slugs and text
// ---------------------------------------------------------------------------------------------

fn slugs(k: Kind) {
    let a = api(k);
    let t = tok();
    for (name, slug) in [
        (
            format!("{t} Rock &amp; Roll 2.0"),
            format!("{t}-rock-roll-2-0"),
        ),
        (
            format!("Música en São Paulo {t}"),
            format!("musica-en-sao-paulo-{t}"),
        ),
        (format!("Don't stop! {t}"), format!("dont-stop-{t}")),
        (format!("Мир {t}"), format!("мир-{t}")),
        (format!("Straße {t}"), format!("strasse-{t}")),
    ] {
        let v = a.create_ok(AD, json!({k.name: name}));
        assert_eq!(v["slug"], slug, "{name}");
        // Percent-encoded path slugs are decoded before the lookup.
        let enc_slug: String = slug
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b == b'-' {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect();
        let r = a.send("GET", &a.slug_path(&enc_slug), ANON, None);
        assert_eq!(r.status, 200, "{enc_slug}: {}", r.describe());
        assert_eq!(r.json()["id"], v["id"]);
    }
    // A name that sanitizes to nothing → the ID.
    let v = a.create_ok(AD, json!({k.name: "!!! ???"}));
    assert_eq!(v["slug"], v["id"].as_i64().unwrap().to_string());
    // Reserved word gets a suffix.
    let v = a.create_ok(AD, json!({k.name: "Feed"}));
    assert_eq!(
        v["slug"], "feed-2",
        "reserved slug gets the first free suffix"
    );
    // Long names: slug cut to 200 bytes.
    let long = format!("{t} {}", "a".repeat(300));
    let v = a.create_ok(AD, json!({k.name: long}));
    assert_eq!(v["slug"].as_str().unwrap().len(), 200);
    // Drafts by contributors get a slug too.
    let v = a.create_ok(CO, json!({k.name: format!("{t} contrib")}));
    assert_eq!(v["slug"], format!("{t}-contrib"));
}

fn text_cleaning_and_rendering(k: Kind) {
    let a = api(k);
    let t = tok();
    let v = a.create_ok(
        AD,
        json!({k.name: format!("  {t} Clean  "),
               "phone": "  <b>+1</b>\t 555 \n\n 0101 %20 ",
               "description": "a\nb\n\nc",
               "excerpt": "<p>Already wrapped.</p>"}),
    );
    assert_eq!(v[k.name], format!("{t} Clean"), "name trimmed");
    assert_eq!(
        v["phone"], "+1 555 0101 %20",
        "tags removed, whitespace collapsed, %20 kept"
    );
    assert_eq!(v["description"], "<p>a<br />\nb</p>\n<p>c</p>");
    assert_eq!(v["excerpt"], "<p>Already wrapped.</p>");
    if k.is_venue() {
        let v = a.update_ok(
            v["id"].as_i64().unwrap(),
            AD,
            json!({"address": "<i>12</i>   Quay\r\nRoad", "zip": " 4000-123 "}),
        );
        assert_eq!(v["address"], "12 Quay Road");
        assert_eq!(v["zip"], "4000-123");
    } else {
        let v = a.update_ok(
            v["id"].as_i64().unwrap(),
            AD,
            json!({"email": " <b>x</b>@example.org "}),
        );
        assert_eq!(v["email"], "x@example.org");
    }
    // HTML sanitizing for authors/contributors; administrators' HTML kept.
    let dirty = "<div onclick=\"evil()\">Hi <a href=\"javascript:alert(1)\">l</a></div><script>bad()</script><iframe src=\"x\"></iframe>";
    let v = a.create_ok(
        AU,
        json!({k.name: format!("{t} by author <script>x()</script>"), "description": dirty}),
    );
    let d = v["description"].as_str().unwrap();
    assert!(
        !d.contains("script")
            && !d.contains("onclick")
            && !d.contains("javascript:")
            && !d.contains("iframe"),
        "{d}"
    );
    assert!(d.contains("Hi"), "{d}");
    assert!(!v[k.name].as_str().unwrap().contains("script"), "{v}");
    let v = a.create_ok(
        AD,
        json!({k.name: format!("{t} by admin"), "description": dirty}),
    );
    let d = v["description"].as_str().unwrap();
    assert!(
        d.contains("<script>bad()</script>") && d.contains("onclick"),
        "{d}"
    );
}

// ---------------------------------------------------------------------------------------------
// Archives on the clean server
// ---------------------------------------------------------------------------------------------

fn archive_pagination(k: Kind) {
    // The `es` list of server B belongs to this test.
    let a = Api {
        s: server_b(),
        k,
        seg: "/es",
    };
    let site = format!("{}/es", a.s.public);
    let cb = format!("{}/es{NS}/{}/", a.s.public, k.coll);
    // Empty store.
    let r = a.list("", ANON);
    let v = check_list_shape(k, &r);
    assert_eq!(v[k.coll], json!([]));
    assert_eq!(v["total"], 0);
    assert_eq!(v["total_pages"], 0);
    assert_eq!(r.header("x-cal-total"), Some("0"));
    assert_eq!(r.header("x-cal-totalpages"), Some("0"));
    check_links(&r, &v, &site, &cb, 1, "per_page=10&status=publish");
    let r = a.list("page=2", ANON);
    assert_plain_error(&r, 404, &k.code("archive-page-not-found"));
    // 10 records.
    let mut ids = Vec::new();
    for i in 0..10 {
        ids.push(a.mk(AD, &format!("Archive {i}"), json!({})));
    }
    let newest: Vec<i64> = ids.iter().rev().copied().collect();
    let r = a.list("per_page=5", ANON);
    let v = check_list_shape(k, &r);
    assert_eq!(a.ids(&v), newest[..5].to_vec());
    assert_eq!(
        (v["total"].as_i64(), v["total_pages"].as_i64()),
        (Some(10), Some(2))
    );
    assert_eq!(r.header("x-cal-total"), Some("10"));
    assert_eq!(r.header("x-cal-totalpages"), Some("2"));
    check_links(&r, &v, &site, &cb, 1, "per_page=5&status=publish");
    let r = a.list("per_page=5&page=2", ANON);
    let v = check_list_shape(k, &r);
    assert_eq!(a.ids(&v), newest[5..].to_vec());
    assert_eq!(
        (v["total"].as_i64(), v["total_pages"].as_i64()),
        (Some(10), Some(2))
    );
    check_links(&r, &v, &site, &cb, 2, "per_page=5&status=publish");
    // Other page sizes.
    let v = check_list_shape(k, &a.list("per_page=4", ANON));
    assert_eq!(a.ids(&v).len(), 4);
    assert_eq!(v["total_pages"], 3);
    let r = a.list("per_page=4&page=3", ANON);
    let v = check_list_shape(k, &r);
    assert_eq!(a.ids(&v), newest[8..].to_vec());
    check_links(&r, &v, &site, &cb, 3, "per_page=4&status=publish");
    let v = check_list_shape(k, &a.list("per_page=2&page=2", ANON));
    assert_eq!(a.ids(&v), newest[2..4].to_vec());
    assert_eq!(v["total_pages"], 5);
    // Links: page 2 of 5 → previous is the root; page 3 → previous has page=2.
    let r = a.list("per_page=2&page=3", ANON);
    let v = check_list_shape(k, &r);
    check_links(&r, &v, &site, &cb, 3, "per_page=2&status=publish");
    assert_eq!(
        v["previous_rest_url"],
        format!("{cb}?per_page=2&status=publish&page=2")
    );
    let r = a.list("per_page=2&page=2", ANON);
    let v = check_list_shape(k, &r);
    assert_eq!(
        v["previous_rest_url"],
        format!("{cb}?per_page=2&status=publish")
    );
    assert_eq!(
        v["rest_url"],
        format!("{cb}?page=2&per_page=2&status=publish")
    );
    assert_eq!(
        v["next_rest_url"],
        format!("{cb}?per_page=2&status=publish&page=3")
    );
    // Default per_page 10: one page, no next.
    let r = a.list("", ANON);
    let v = check_list_shape(k, &r);
    assert_eq!(a.ids(&v), newest);
    assert!(v.get("next_rest_url").is_none());
    // Pages past the end: 404, also for HEAD.
    let r = a.list("per_page=10&page=2", ANON);
    assert_plain_error(&r, 404, &k.code("archive-page-not-found"));
    let r = a.list("per_page=3&page=5", ANON);
    assert_plain_error(&r, 404, &k.code("archive-page-not-found"));
    let r =
        a.s.req("HEAD", &format!("{}?per_page=3&page=5", a.coll_path()))
            .send();
    assert_eq!(r.status, 404, "HEAD mirrors GET");
    // Bad page and per_page values.
    for bad in ["foo", "-1", "0", "foo%20bar"] {
        for name in ["page", "per_page"] {
            let r = a.list(&format!("{name}={bad}"), ANON);
            assert_invalid_param_codes(&r, &[(name, None)]);
        }
    }
    // 51 records, per_page=100 → 50, clamped in the links.
    for i in 10..51 {
        ids.push(a.mk(AD, &format!("Archive {i}"), json!({})));
    }
    let r = a.list("per_page=100", ANON);
    let v = check_list_shape(k, &r);
    assert_eq!(a.ids(&v).len(), 50);
    assert_eq!(v["total"], 51);
    assert_eq!(v["total_pages"], 2);
    check_links(&r, &v, &site, &cb, 1, "per_page=50&status=publish");
    let r = a.list("per_page=100&page=2", ANON);
    let v = check_list_shape(k, &r);
    assert_eq!(a.ids(&v), vec![ids[0]], "oldest last");
    // Editors' links carry status=any.
    let r = a.list("per_page=50&page=2", ED);
    let v = check_list_shape(k, &r);
    check_links(&r, &v, &site, &cb, 2, "per_page=50&status=any");
    // Ties on date_utc: higher id first — records with one explicit date.
    let same: Vec<i64> = (0..3)
        .map(|i| {
            a.mk(
                AD,
                &format!("Same date {i}"),
                json!({"date": "2030-01-01 00:00:00", "status": "publish"}),
            )
        })
        .collect();
    let v = a.list_ok("per_page=3", ED);
    assert_eq!(
        a.ids(&v),
        vec![same[2], same[1], same[0]],
        "future-dated first, ties by id desc"
    );
    // Dates order newest first even against creation order.
    let old = a.mk(AD, "Old dated", json!({"date": "2001-01-01 00:00:00"}));
    let v = a.list_ok("per_page=50&page=2", ED);
    assert_eq!(*a.ids(&v).last().unwrap(), old, "oldest date last");
}

fn archive_status_filters(k: Kind) {
    // The `pt-br` list of server B belongs to this test.
    let a = Api {
        s: server_b(),
        k,
        seg: "/pt-br",
    };
    let site = format!("{}/pt-br", a.s.public);
    let cb = format!("{}/pt-br{NS}/{}/", a.s.public, k.coll);
    // Only drafts.
    let d1 = a.mk(AD, "Draft one", json!({"status": "draft"}));
    let d2 = a.mk(AD, "Draft two", json!({"status": "draft"}));
    let r = a.list("", ANON);
    let v = check_list_shape(k, &r);
    assert_eq!(v["total"], 0);
    assert_eq!(v["total_pages"], 0);
    assert!(v.get("next_rest_url").is_none() && v.get("previous_rest_url").is_none());
    check_links(&r, &v, &site, &cb, 1, "per_page=10&status=publish");
    let r = a.list("", ED);
    let v = check_list_shape(k, &r);
    assert_eq!(a.ids(&v), vec![d2, d1]);
    check_links(&r, &v, &site, &cb, 1, "per_page=10&status=any");
    // Status lists asked by an editor.
    let p = a.mk(AD, "Published", json!({}));
    let pe = a.mk(AD, "Pending", json!({"status": "pending"}));
    let ids = |who: Who, q: &str| {
        let r = a.list(q, who);
        let v = check_list_shape(k, &r);
        let mut x = a.ids(&v);
        x.sort();
        x
    };
    let sorted = |mut v: Vec<i64>| {
        v.sort();
        v
    };
    assert_eq!(ids(ED, "status=publish"), vec![p]);
    assert_eq!(ids(ED, "status=publish,%20draft"), sorted(vec![p, d1, d2]));
    assert_eq!(
        ids(ED, "status[]=publish&status[]=draft&status[]=pending"),
        sorted(vec![p, d1, d2, pe])
    );
    assert_eq!(
        ids(ED, "status=publish&status=pending"),
        sorted(vec![p, pe]),
        "repeated keys concatenate"
    );
    for bad in ["foo", "foo,%20bar", "foo,%20bar,%20publish"] {
        assert_invalid_param_codes(
            &a.list(&format!("status={bad}"), ED),
            &[("status", Some("rest_not_in_enum"))],
        );
    }
    let r = a.list("status=any", ED);
    let v = check_list_shape(k, &r);
    let mut got = a.ids(&v);
    got.sort();
    assert_eq!(got, sorted(vec![p, pe, d1, d2]), "status=any = default set");
    check_links(&r, &v, &site, &cb, 1, "per_page=10&status=any");
    let r = a.list("status=publish,%20draft", ED);
    let v = check_list_shape(k, &r);
    check_links(&r, &v, &site, &cb, 1, "per_page=10&status=publish%2Cdraft");
    // Anonymous callers and subscribers may ask for `publish` only.
    let r = a.list("status=publish", ANON);
    let v = check_list_shape(k, &r);
    assert_eq!(a.ids(&v), vec![p]);
    check_links(&r, &v, &site, &cb, 1, "per_page=10&status=publish");
    assert_invalid_param_codes(
        &a.list("status=publish,%20draft", ANON),
        &[("status", None)],
    );
    assert_invalid_param_codes(
        &a.list("status=any", ANON),
        &[("status", Some("rest_forbidden_value"))],
    );
    assert_invalid_param_codes(
        &a.list("status=any", SU),
        &[("status", Some("rest_forbidden_value"))],
    );
    // Trash via status; the language of the list: pt-br only.
    a.delete(d1, AD);
    assert_eq!(ids(ED, "status=trash"), vec![d1]);
    let en = Api { s: a.s, k, seg: "" };
    let v = en.list_ok("translation_language=pt-br&status=any", ED);
    let mut got = a.ids(&v);
    got.sort();
    assert_eq!(got, sorted(vec![p, pe, d2]));
    // Contributors see publish + own only; subscribers publish only.
    let c = a.mk(CO, "Contributor draft", json!({}));
    assert_eq!(ids(CO, ""), sorted(vec![p, c]));
    assert_eq!(ids(CO, "status=draft,pending"), vec![c]);
    assert_eq!(ids(SU, ""), vec![p]);
    let r = a.list("", CO);
    let v = check_list_shape(k, &r);
    check_links(&r, &v, &site, &cb, 1, "per_page=10&status=any");
}

fn archive_search(k: Kind) {
    // The `en` list of server B belongs to this test.
    let a = Api {
        s: server_b(),
        k,
        seg: "",
    };
    let count = |q: &str| -> i64 {
        let r = a.list(&format!("search={}", form_encode(q)), ANON);
        let v = check_list_shape(k, &r);
        let n = v["total"].as_i64().unwrap();
        assert_eq!(a.ids(&v).len() as i64, n, "{q}");
        n
    };
    // Searched fields, first part: name, description, excerpt.
    let label = if k.is_venue() { "Venue" } else { "Organizer" };
    let mut first = Vec::new();
    for w in ["foo", "baz", "bar"] {
        first.push(a.mk(
            AD,
            &format!("{label} {w}"),
            json!({"description": format!("Content {w}"), "excerpt": format!("Excerpt {w}")}),
        ));
    }
    assert_eq!(count(label), 3);
    assert_eq!(count(&format!("{label} foo")), 1);
    assert_eq!(count("Content baz"), 1);
    assert_eq!(count("Excerpt"), 3);
    assert_eq!(count("excerpt bar"), 1);
    let r = a.list("search=woo", ANON);
    let v = check_list_shape(k, &r);
    assert_eq!(v["total"], 0);
    assert_eq!(v[k.coll], json!([]));
    for id in first {
        assert_eq!(a.delete(id, AD).status, 200);
    }
    // Second part: the kind's own fields.
    if k.is_venue() {
        for (name, f) in [
            (
                "Hall A",
                [
                    "221b Baker Street",
                    "London",
                    "Greater London",
                    "England",
                    "England, Greater London",
                    "223345",
                    "111111",
                ],
            ),
            (
                "Hall B",
                [
                    "10, Piccadilly Circus",
                    "London",
                    "Greater London",
                    "England",
                    "England, Greater London",
                    "223345",
                    "22222222",
                ],
            ),
            (
                "Hall C",
                [
                    "100, Avenue du Temple",
                    "Paris",
                    "Ile de France",
                    "France",
                    "France, Ile de France",
                    "23443",
                    "3333333",
                ],
            ),
        ] {
            a.mk(
                AD,
                name,
                json!({"address": f[0], "city": f[1], "province": f[2], "state": f[3],
                       "stateprovince": f[4], "zip": f[5], "phone": f[6]}),
            );
        }
        for (q, n) in [
            ("london", 2),
            ("3333333", 1),
            ("temple avenue", 1),
            ("greater london", 2),
            ("france", 1),
            ("france, ile de", 1),
            ("223345", 2),
            // almanac's word search: prefixes, typos, exclusions, phrases.
            ("lond", 2),
            ("Lodnon", 2),
            ("londres", 0),
            ("piccadilly london", 1),
            ("-temple", 2),
            ("\"baker street\"", 1),
            ("\"street baker\"", 0),
            ("LONDON", 2),
            ("piccadily", 1),
        ] {
            assert_eq!(count(q), n, "search {q:?}");
        }
        // country and website are not searchable.
        a.mk(
            AD,
            "Hall D",
            json!({"country": "Narnia", "website": "https://wardrobe.example.org"}),
        );
        assert_eq!(count("narnia"), 0);
        assert_eq!(count("wardrobe"), 0);
    } else {
        for (name, phone, email, web) in [
            ("Org A", "111111111", "one@common.com", "http://one.com"),
            ("Org B", "111112222", "two@common.com", "http://two.com"),
            ("Org C", "222223333", "three@three.com", "http://three.com"),
        ] {
            a.mk(
                AD,
                name,
                json!({"phone": phone, "email": email, "website": web}),
            );
        }
        for (q, n) in [
            ("1111", 2),
            ("111111111", 1),
            ("222223333", 1),
            ("three@three.com", 1),
            ("common.com", 2),
            ("http://one.com", 1),
            ("@common.com", 2),
        ] {
            assert_eq!(count(q), n, "search {q:?}");
        }
    }
    // A query without words filters nothing.
    let all = check_list_shape(k, &a.list("", ANON))["total"]
        .as_i64()
        .unwrap();
    assert_eq!(count("  ,, "), all);
}

/// Venue coordinates: both or neither, ranges −90…90 / −180…180, sub-code
/// `rest_out_of_bounds` for a number outside its range.
#[test]
fn venue_geo_ranges() {
    let a = api(VENUE);
    let t = tok();
    let id = a.mk(
        AD,
        &format!("{t} geo target"),
        json!({"geo_lat": 1, "geo_lng": 2}),
    );
    for (lat, lng, name) in [
        (json!(91), json!(0), "geo_lat"),
        (json!(-90.5), json!(0), "geo_lat"),
        (json!("95"), json!("0"), "geo_lat"),
        (json!(0), json!(181), "geo_lng"),
        (json!(0), json!(-180.01), "geo_lng"),
    ] {
        let r = a.create(
            AD,
            json!({"venue": format!("{t} geo {lat} {lng}"), "geo_lat": lat, "geo_lng": lng}),
        );
        assert_invalid_param_codes(&r, &[(name, Some("rest_out_of_bounds"))]);
        let r = a.update(id, AD, json!({"geo_lat": lat, "geo_lng": lng}));
        assert_invalid_param_codes(&r, &[(name, Some("rest_out_of_bounds"))]);
    }
    let v = a.get_ok(id, AD);
    assert_eq!(v["geo_lat"].as_f64(), Some(1.0));
    assert_eq!(v["geo_lng"].as_f64(), Some(2.0));
    assert!(a.search_ids(&t) == vec![id], "nothing else written");
}
