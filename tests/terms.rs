//! Event categories and event tags (docs/api.md, "Categories and tags"), with the common rules
//! they follow: permissions, errors, pagination links, languages and translation groups, slugs
//! and search.
//!
//! Not covered yet (events do not exist): the `post`/`event` list filters and `count` values other
//! than 0. Every term therefore has `count` 0, and default lists (`hide_empty=true`) are empty.
//!
//! All tests share one server and look at list totals, so they run one at a time (a global lock)
//! and each one starts from an empty term store (every term of both kinds, in every language, is
//! deleted first).

mod common;

use common::*;
use serde_json::{json, Map, Value};
use std::sync::{Mutex, MutexGuard, OnceLock};

fn server() -> &'static Server {
    static S: OnceLock<Server> = OnceLock::new();
    S.get_or_init(|| Server::start_with_users(&STANDARD_USERS).into_static())
}

/// Takes the global lock and empties the term store.
fn setup() -> (MutexGuard<'static, ()>, &'static Server) {
    static LOCK: Mutex<()> = Mutex::new(());
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let s = server();
    wipe(s);
    (guard, s)
}

const LANGS: [&str; 3] = ["en", "pt-br", "es"];
const ALL_METHODS: [&str; 5] = ["GET", "POST", "PUT", "PATCH", "DELETE"];
const NOT_MANAGERS_CAT: [TestUser; 2] = [SUBSCRIBER, CONTRIBUTOR];
const NOT_MANAGERS_TAG: [TestUser; 3] = [SUBSCRIBER, CONTRIBUTOR, AUTHOR];

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Cat,
    Tag,
}
use Kind::{Cat, Tag};
const KINDS: [Kind; 2] = [Cat, Tag];

impl Kind {
    /// Collection name, also the list key of the archive body.
    fn coll(self) -> &'static str {
        match self {
            Cat => "categories",
            Tag => "tags",
        }
    }
    fn path(self) -> String {
        format!("{NS}/{}", self.coll())
    }
    fn item(self, id: i64) -> String {
        format!("{NS}/{}/{id}", self.coll())
    }
    fn taxonomy(self) -> &'static str {
        match self {
            Cat => "tribe_events_cat",
            Tag => "post_tag",
        }
    }
    fn other(self) -> Kind {
        match self {
            Cat => Tag,
            Tag => Cat,
        }
    }
    /// Roles that may not manage this kind (authenticated ones).
    fn not_managers(self) -> &'static [TestUser] {
        match self {
            Cat => &NOT_MANAGERS_CAT,
            Tag => &NOT_MANAGERS_TAG,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn wipe(s: &Server) {
    for k in KINDS {
        for lang in LANGS {
            for _ in 0..50 {
                let r = s.get(&format!(
                    "{}?hide_empty=false&per_page=50&translation_language={lang}",
                    k.path()
                ));
                assert_eq!(r.status, 200, "wipe: list {}", r.describe());
                let items = r.json()[k.coll()].as_array().cloned().unwrap_or_default();
                if items.is_empty() {
                    break;
                }
                for it in items {
                    let r = s.req("DELETE", &k.item(id(&it))).user(&ADMIN).send();
                    assert_eq!(r.status, 200, "wipe: delete {}", r.describe());
                }
            }
        }
    }
}

fn id(v: &Value) -> i64 {
    v["id"]
        .as_i64()
        .unwrap_or_else(|| panic!("no integer id in {v}"))
}

fn call(s: &Server, method: &str, path: &str, user: Option<TestUser>, body: Option<Value>) -> Resp {
    s.send(method, path, user.as_ref(), body.as_ref())
}

fn create_as(s: &Server, k: Kind, u: TestUser, body: Value) -> Value {
    s.create(&u, &k.path(), &body)
}

/// Creates as the editor; returns the representation.
fn create(s: &Server, k: Kind, body: Value) -> Value {
    create_as(s, k, EDITOR, body)
}

/// Creates a term with just a name; returns its ID.
fn mk(s: &Server, k: Kind, name: &str) -> i64 {
    id(&create(s, k, json!({ "name": name })))
}

fn get_term(s: &Server, k: Kind, id: i64) -> Value {
    s.get_ok(&k.item(id), None)
}

/// `GET {kind}?{query}` anonymously, asserting 200.
fn list(s: &Server, k: Kind, query: &str) -> (Resp, Value) {
    let r = s.get(&format!("{}?{query}", k.path()));
    assert_eq!(r.status, 200, "GET {}?{query}: {}", k.path(), r.describe());
    let v = r.json();
    (r, v)
}

fn ids_of(v: &Value, k: Kind) -> Vec<i64> {
    v[k.coll()]
        .as_array()
        .unwrap_or_else(|| panic!("no {} array in {v}", k.coll()))
        .iter()
        .map(id)
        .collect()
}

fn list_ids(s: &Server, k: Kind, query: &str) -> Vec<i64> {
    ids_of(&list(s, k, query).1, k)
}

fn total(s: &Server, k: Kind, query: &str) -> i64 {
    list(s, k, query).1["total"].as_i64().expect("total")
}

/// `P + segment + NS`.
fn base(s: &Server, seg: &str) -> String {
    s.url(&format!("{seg}{NS}"))
}

/// Every term of both kinds in every language (bodies of full lists): compared before and after
/// a refused write to show that nothing was written.
fn snapshot(s: &Server) -> String {
    let mut out = String::new();
    for k in KINDS {
        for lang in LANGS {
            let (_, v) = list(
                s,
                k,
                &format!("hide_empty=false&per_page=50&orderby=id&translation_language={lang}"),
            );
            out.push_str(&serde_json::to_string(&v).unwrap());
            out.push('\n');
        }
    }
    out
}

fn assert_unchanged(s: &Server, before: &str, what: &str) {
    assert_eq!(snapshot(s), before, "nothing may be written by {what}");
}

/// `rest_invalid_param` naming exactly `names`; each entry of `subs` fixes one sub-code.
fn assert_bad(r: &Resp, names: &[&str], subs: &[(&str, &str)]) -> Value {
    let v = assert_invalid_param_names(r, names);
    assert_eq!(
        keys(&v["data"]),
        vec!["status", "params", "details"],
        "data keys; {}",
        r.describe()
    );
    for (n, sub) in subs {
        assert_eq!(
            v["data"]["details"][*n]["code"],
            *sub,
            "details.{n}.code; {}",
            r.describe()
        );
    }
    v
}

/// [`assert_bad`] for one parameter refused with `sub`.
fn assert_bad_one(r: &Resp, name: &str, sub: &str) -> Value {
    assert_bad(r, &[name], &[(name, sub)])
}

/// Slug path of a category, from the top-level ancestor down (read anonymously).
fn category_path(s: &Server, v: &Value) -> String {
    let mut parts = vec![v["slug"].as_str().unwrap().to_string()];
    let mut p = v["parent"].as_i64().unwrap();
    let mut guard = 0;
    while p != 0 {
        let t = get_term(s, Cat, p);
        parts.insert(0, t["slug"].as_str().unwrap().to_string());
        p = t["parent"].as_i64().unwrap();
        guard += 1;
        assert!(guard < 50, "parent chain too long");
    }
    parts.join("/")
}

fn js(v: &Value) -> String {
    serde_json::to_string(v).unwrap()
}

/// Checks a term representation as seen through path segment `seg`: key order,
/// types and every derived value. `allow`: `Some(methods)` when `_links` must be present with
/// that `targetHints.allow`, `None` when `_links` must be absent.
fn check_repr(s: &Server, k: Kind, v: &Value, seg: &str, allow: Option<&[&str]>) {
    let mut want = vec!["id", "count", "description", "name", "slug", "taxonomy"];
    if k == Cat {
        want.push("parent");
    }
    want.extend(["meta", "url", "urls", "language", "translations"]);
    if allow.is_some() {
        want.push("_links");
    }
    assert_eq!(keys(v), want, "representation keys of {v}");
    let tid = id(v);
    assert!(tid >= 1);
    // Events do not exist yet: every count is 0.
    assert_eq!(v["count"], json!(0), "count");
    assert!(v["description"].is_string(), "description string: {v}");
    assert!(
        v["name"].as_str().is_some_and(|n| !n.is_empty()),
        "name: {v}"
    );
    let slug = v["slug"].as_str().expect("slug string");
    assert!(!slug.is_empty(), "slug non-empty: {v}");
    assert_eq!(v["taxonomy"], k.taxonomy());
    assert_eq!(v["meta"], json!([]), "meta is []");
    let b = base(s, seg);
    let site = s.url(seg);
    let parent = if k == Cat {
        v["parent"]
            .as_i64()
            .unwrap_or_else(|| panic!("parent integer: {v}"))
    } else {
        0
    };
    let url = match k {
        Cat => format!("{site}/events/category/{}/", category_path(s, v)),
        Tag => format!("{site}/tag/{slug}/"),
    };
    assert_eq!(v["url"], json!(url), "url of {v}");
    let self_url = format!("{b}/{}/{tid}", k.coll());
    let coll_url = format!("{b}/{}", k.coll());
    let up_url = format!("{b}/categories/{parent}");
    let mut urls = Map::new();
    urls.insert("self".into(), json!(self_url));
    urls.insert("collection".into(), json!(coll_url));
    if parent != 0 {
        urls.insert("up".into(), json!(up_url));
    }
    assert_eq!(js(&v["urls"]), js(&Value::Object(urls)), "urls of {v}");
    let lang = v["language"].as_str().expect("language string");
    assert!(LANGS.contains(&lang), "language {lang}");
    let tr = v["translations"].as_object().expect("translations object");
    assert_eq!(tr.get(lang), Some(&json!(tid)), "translations holds itself");
    let order: Vec<&str> = tr.keys().map(|s| s.as_str()).collect();
    let mut sorted = order.clone();
    sorted.sort_by_key(|l| LANGS.iter().position(|x| x == l).expect("known language"));
    assert_eq!(
        order, sorted,
        "translations keys in the order en, pt-br, es"
    );
    for t in tr.values() {
        assert!(t.as_i64().is_some_and(|x| x >= 1), "translation IDs");
    }
    if let Some(allow) = allow {
        let mut l = Map::new();
        l.insert(
            "self".into(),
            json!([{"href": self_url, "targetHints": {"allow": allow}}]),
        );
        l.insert("collection".into(), json!([{ "href": coll_url }]));
        if parent != 0 {
            l.insert("up".into(), json!([{"embeddable": true, "href": up_url}]));
        }
        l.insert(
            "wp:post_type".into(),
            json!([{"href": format!("{b}/events?{}={tid}", k.coll())}]),
        );
        l.insert(
            "curies".into(),
            json!([{"name": "wp", "href": "https://api.w.org/{rel}", "templated": true}]),
        );
        assert_eq!(js(&v["_links"]), js(&Value::Object(l)), "_links of {v}");
    }
}

fn without_links(v: &Value) -> Value {
    let mut o = v.as_object().unwrap().clone();
    o.shift_remove("_links");
    Value::Object(o)
}

/// The archive body's key order and its headers.
fn check_list_shape(r: &Resp, k: Kind, next: bool, prev: bool) {
    let v = r.json();
    let mut want = vec!["rest_url", "total", "total_pages", k.coll()];
    if next {
        want.push("next_rest_url");
    }
    if prev {
        want.push("previous_rest_url");
    }
    assert_eq!(keys(&v), want, "archive keys; {}", r.describe());
    assert!(v["total"].is_i64() && v["total_pages"].is_i64());
    assert_totals(r, &v);
    assert_json_content_type(r);
}

fn discovery(s: &Server, seg: &str) -> String {
    format!("<{}/>; rel=\"https://api.w.org/\"", s.url(seg))
}

// ---------------------------------------------------------------------------------------------
// Representation and single reads
// ---------------------------------------------------------------------------------------------

#[test]
fn created_category_with_parent_has_the_full_representation() {
    let (_g, s) = setup();
    let music = create(s, Cat, json!({"name": "Music", "slug": "music"}));
    let mid = id(&music);
    let r = call(
        s,
        "POST",
        &Cat.path(),
        Some(EDITOR),
        Some(
            json!({"name": "foo", "description": "Term description", "slug": "foo-bar", "parent": mid}),
        ),
    );
    assert_eq!(r.status, 201, "{}", r.describe());
    let v = r.json();
    let cid = id(&v);
    let b = base(s, "");
    assert_eq!(
        r.header("location"),
        Some(format!("{b}/categories/{cid}").as_str()),
        "Location"
    );
    assert_eq!(r.header("cache-control"), Some(CC_AUTH));
    assert_json_content_type(&r);
    assert_compact_json(&r.body);
    let expected = json!({
        "id": cid,
        "count": 0,
        "description": "Term description",
        "name": "foo",
        "slug": "foo-bar",
        "taxonomy": "tribe_events_cat",
        "parent": mid,
        "meta": [],
        "url": s.url("/events/category/music/foo-bar/"),
        "urls": {
            "self": format!("{b}/categories/{cid}"),
            "collection": format!("{b}/categories"),
            "up": format!("{b}/categories/{mid}"),
        },
        "language": "en",
        "translations": {"en": cid},
        "_links": {
            "self": [{"href": format!("{b}/categories/{cid}"), "targetHints": {"allow": ALL_METHODS}}],
            "collection": [{"href": format!("{b}/categories")}],
            "up": [{"embeddable": true, "href": format!("{b}/categories/{mid}")}],
            "wp:post_type": [{"href": format!("{b}/events?categories={cid}")}],
            "curies": [{"name": "wp", "href": "https://api.w.org/{rel}", "templated": true}],
        },
    });
    assert_eq!(js(&v), js(&expected), "create response");

    // Anonymous GET: the same, with GET only.
    let r = s.get(&Cat.item(cid));
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(r.header("cache-control"), Some(CC_ANON));
    let mut exp = expected.clone();
    exp["_links"]["self"][0]["targetHints"]["allow"] = json!(["GET"]);
    assert_eq!(js(&r.json()), js(&exp), "anonymous GET");
    // The top-level parent: no `up` anywhere.
    check_repr(s, Cat, &get_term(s, Cat, mid), "", Some(&["GET"]));
    assert!(music["urls"].get("up").is_none() && music["_links"].get("up").is_none());
    assert_eq!(music["parent"], json!(0));
}

#[test]
fn created_tag_has_the_full_representation() {
    let (_g, s) = setup();
    let r = call(
        s,
        "POST",
        &Tag.path(),
        Some(EDITOR),
        Some(json!({"name": "foo", "description": "Term description", "slug": "foo-bar"})),
    );
    assert_eq!(r.status, 201, "{}", r.describe());
    let v = r.json();
    let tid = id(&v);
    let b = base(s, "");
    assert_eq!(
        r.header("location"),
        Some(format!("{b}/tags/{tid}").as_str())
    );
    let expected = json!({
        "id": tid,
        "count": 0,
        "description": "Term description",
        "name": "foo",
        "slug": "foo-bar",
        "taxonomy": "post_tag",
        "meta": [],
        "url": s.url("/tag/foo-bar/"),
        "urls": {
            "self": format!("{b}/tags/{tid}"),
            "collection": format!("{b}/tags"),
        },
        "language": "en",
        "translations": {"en": tid},
        "_links": {
            "self": [{"href": format!("{b}/tags/{tid}"), "targetHints": {"allow": ALL_METHODS}}],
            "collection": [{"href": format!("{b}/tags")}],
            "wp:post_type": [{"href": format!("{b}/events?tags={tid}")}],
            "curies": [{"name": "wp", "href": "https://api.w.org/{rel}", "templated": true}],
        },
    });
    assert_eq!(js(&v), js(&expected), "create response");
    let r = s.get(&Tag.item(tid));
    assert_eq!(r.status, 200, "{}", r.describe());
    let mut exp = expected.clone();
    exp["_links"]["self"][0]["targetHints"]["allow"] = json!(["GET"]);
    assert_eq!(js(&r.json()), js(&exp), "anonymous GET");
}

#[test]
fn target_hints_allow_depends_on_the_caller() {
    let (_g, s) = setup();
    for k in KINDS {
        let tid = mk(s, k, "Hinted");
        let cases: Vec<(Option<TestUser>, bool)> = vec![
            (None, false),
            (Some(SUBSCRIBER), false),
            (Some(CONTRIBUTOR), false),
            (Some(AUTHOR), k == Cat),
            (Some(EDITOR), true),
            (Some(ADMIN), true),
        ];
        for (u, all) in cases {
            let r = call(s, "GET", &k.item(tid), u, None);
            assert_eq!(r.status, 200, "{}", r.describe());
            let allow: &[&str] = if all { &ALL_METHODS } else { &["GET"] };
            check_repr(s, k, &r.json(), "", Some(allow));
            let who = u.map(|u| u.name).unwrap_or("anonymous");
            assert_eq!(
                r.header("allow"),
                Some(allow.join(", ").as_str()),
                "Allow for {who} on {k:?}"
            );
        }
    }
}

#[test]
fn allow_header_on_the_collection_routes_follows_the_caller() {
    let (_g, s) = setup();
    for k in KINDS {
        let cases: Vec<(Option<TestUser>, bool)> = vec![
            (None, false),
            (Some(SUBSCRIBER), false),
            (Some(CONTRIBUTOR), false),
            (Some(AUTHOR), k == Cat),
            (Some(EDITOR), true),
            (Some(ADMIN), true),
        ];
        for (u, may) in cases {
            let r = call(s, "GET", &format!("{}?hide_empty=false", k.path()), u, None);
            assert_eq!(r.status, 200, "{}", r.describe());
            let want = if may { "GET, POST" } else { "GET" };
            assert_eq!(r.header("allow"), Some(want), "{k:?} {u:?}");
        }
    }
}

#[test]
fn nested_category_url_lists_every_ancestor_slug() {
    let (_g, s) = setup();
    let a = mk(s, Cat, "Arts");
    let b = id(&create(s, Cat, json!({"name": "Music", "parent": a})));
    let c = create(s, Cat, json!({"name": "Jazz Nights", "parent": b}));
    assert_eq!(
        c["url"],
        json!(s.url("/events/category/arts/music/jazz-nights/"))
    );
    check_repr(s, Cat, &c, "", Some(&ALL_METHODS));
    // Through a language segment every link takes the segment.
    let r = s.get(&format!("/es{}", Cat.item(id(&c))));
    assert_eq!(r.status, 200, "{}", r.describe());
    let v = r.json();
    assert_eq!(
        v["url"],
        json!(s.url("/es/events/category/arts/music/jazz-nights/"))
    );
    assert_eq!(v["language"], "en", "by ID: the record's own language");
    check_repr(s, Cat, &v, "/es", Some(&["GET"]));
}

#[test]
fn tag_links_through_a_language_segment() {
    let (_g, s) = setup();
    let t = mk(s, Tag, "Outdoor Fun");
    let r = s.get(&format!("/pt-br{}", Tag.item(t)));
    assert_eq!(r.status, 200, "{}", r.describe());
    let v = r.json();
    assert_eq!(v["url"], json!(s.url("/pt-br/tag/outdoor-fun/")));
    check_repr(s, Tag, &v, "/pt-br", Some(&["GET"]));
}

#[test]
fn get_by_unknown_foreign_kind_or_non_numeric_id() {
    let (_g, s) = setup();
    for k in KINDS {
        let mine = mk(s, k, "Mine");
        let foreign = mk(s, k.other(), "Other kind");
        assert_eq!(get_term(s, k, mine)["id"], json!(mine));
        for bad in [foreign, 2389] {
            let r = s.get(&k.item(bad));
            assert_bad(&r, &["id"], &[]);
            for u in [ADMIN, SUBSCRIBER] {
                let r = s.get_as(&k.item(bad), &u);
                assert_bad(&r, &["id"], &[]);
            }
        }
        for p in [
            format!("{}/foo", k.path()),
            format!("{}/foo%20bar", k.path()),
            format!("{}/-1", k.path()),
            format!("{}/1.5", k.path()),
            format!("{}/by-slug/mine", k.path()),
        ] {
            assert_plain_error(&s.get(&p), 404, "rest_no_route");
        }
        // An ID beyond the 64-bit range is routed and unknown.
        let r = s.get(&format!("{}/99999999999999999999", k.path()));
        assert_bad(&r, &["id"], &[]);
        // Leading zeros are the same ID.
        let r = s.get(&format!("{}/00{mine}", k.path()));
        assert_eq!(r.status, 200, "{}", r.describe());
        assert_eq!(r.json()["id"], json!(mine));
    }
    // Collections serve GET and POST only.
    for k in KINDS {
        for m in ["PUT", "PATCH", "DELETE"] {
            let r = call(s, m, &k.path(), Some(ADMIN), None);
            assert_plain_error(&r, 404, "rest_no_route");
        }
    }
}

#[test]
fn categories_and_tags_share_one_id_sequence() {
    let (_g, s) = setup();
    let c1 = mk(s, Cat, "First");
    let t1 = mk(s, Tag, "Second");
    let c2 = mk(s, Cat, "Third");
    assert!(c1 < t1 && t1 < c2, "{c1} < {t1} < {c2}");
    // IDs are never reused after a delete.
    let r = call(s, "DELETE", &Cat.item(c2), Some(EDITOR), None);
    assert_eq!(r.status, 200);
    let t2 = mk(s, Tag, "Fourth");
    assert!(t2 > c2, "{t2} > {c2}");
}

// ---------------------------------------------------------------------------------------------
// Archives
// ---------------------------------------------------------------------------------------------

#[test]
fn empty_store_lists_nothing() {
    let (_g, s) = setup();
    for k in KINDS {
        for q in ["hide_empty=false", ""] {
            let (r, v) = list(s, k, q);
            check_list_shape(&r, k, false, false);
            assert_eq!(v["total"], json!(0));
            assert_eq!(v["total_pages"], json!(0));
            assert_eq!(v[k.coll()], json!([]));
            assert_eq!(r.header("x-cal-total"), Some("0"));
            assert_eq!(r.header("x-cal-totalpages"), Some("0"));
            assert_eq!(r.header("cache-control"), Some(CC_ANON));
            let suffix = if q.is_empty() {
                String::new()
            } else {
                format!("&{q}")
            };
            assert_eq!(
                v["rest_url"],
                json!(format!(
                    "{}/{}/?page=1&per_page=10{suffix}",
                    base(s, ""),
                    k.coll()
                ))
            );
            assert_eq!(r.header_all("link"), vec![discovery(s, "").as_str()]);
        }
    }
}

#[test]
fn default_list_hides_terms_without_events() {
    let (_g, s) = setup();
    for k in KINDS {
        let a = mk(s, k, "Alpha");
        let b = mk(s, k, "Beta");
        for q in [
            "",
            "hide_empty=true",
            "hide_empty=TRUE",
            "hide_empty=True",
            "hide_empty=1",
        ] {
            let (r, v) = list(s, k, q);
            check_list_shape(&r, k, false, false);
            assert_eq!(v["total"], json!(0), "{k:?} ?{q}");
            assert_eq!(v["total_pages"], json!(0), "{k:?} ?{q}");
            assert_eq!(v[k.coll()], json!([]), "{k:?} ?{q}");
        }
        for q in [
            "hide_empty=false",
            "hide_empty=FALSE",
            "hide_empty=False",
            "hide_empty=0",
        ] {
            assert_eq!(list_ids(s, k, q), vec![a, b], "{k:?} ?{q}");
        }
        // JSON booleans are not possible in a query; the value is normalised in the links.
        let (_, v) = list(s, k, "hide_empty=0");
        assert_eq!(
            v["rest_url"],
            json!(format!(
                "{}/{}/?page=1&per_page=10&hide_empty=false",
                base(s, ""),
                k.coll()
            ))
        );
        let (_, v) = list(s, k, "hide_empty=TRUE");
        // Supplied parameters are written even when they equal the default; only unsupplied
        // defaults are left out.
        assert_eq!(
            v["rest_url"],
            json!(format!(
                "{}/{}/?page=1&per_page=10&hide_empty=true",
                base(s, ""),
                k.coll()
            ))
        );
        for bad in ["", "yes", "no", "2", "on", "truee"] {
            let r = s.get(&format!("{}?hide_empty={bad}", k.path()));
            assert_bad_one(&r, "hide_empty", "rest_invalid_type");
        }
    }
}

#[test]
fn five_terms_are_all_listed_with_items_like_single_reads() {
    let (_g, s) = setup();
    for k in KINDS {
        let mut made = Vec::new();
        for n in ["One", "Two", "Three", "Four", "Five"] {
            made.push(mk(s, k, n));
        }
        let (r, v) = list(s, k, "hide_empty=false");
        check_list_shape(&r, k, false, false);
        assert_eq!(v["total"], json!(5));
        assert_eq!(v["total_pages"], json!(1));
        let items = v[k.coll()].as_array().unwrap();
        assert_eq!(items.len(), 5);
        // Name order: Five, Four, One, Three, Two.
        let want = vec![made[4], made[3], made[0], made[2], made[1]];
        assert_eq!(ids_of(&v, k), want);
        // Unsupported WordPress parameters and unknown names are ignored, also in the links.
        let (r2, v2) = list(
            s,
            k,
            "hide_empty=false&offset=2&context=edit&Page=3&foo=bar",
        );
        check_list_shape(&r2, k, false, false);
        assert_eq!(ids_of(&v2, k), want);
        assert_eq!(
            v2["rest_url"],
            json!(format!(
                "{}/{}/?page=1&per_page=10&hide_empty=false",
                base(s, ""),
                k.coll()
            ))
        );
        for it in items {
            check_repr(s, k, it, "", None);
            let single = get_term(s, k, id(it));
            assert_eq!(
                js(it),
                js(&without_links(&single)),
                "list item = GET minus _links"
            );
        }
    }
}

#[test]
fn six_terms_over_two_pages() {
    let (_g, s) = setup();
    for k in KINDS {
        let mut all = Vec::new();
        for i in 1..=6 {
            all.push(mk(s, k, &format!("Item {i}")));
        }
        let p1 = list_ids(s, k, "hide_empty=false&per_page=3");
        let p2 = list_ids(s, k, "hide_empty=false&per_page=3&page=2");
        assert_eq!(p1, all[..3].to_vec());
        assert_eq!(p2, all[3..].to_vec());
    }
}

#[test]
fn nine_terms_pagination_links_and_headers() {
    let (_g, s) = setup();
    let d = discovery(s, "");
    for k in KINDS {
        let mut all = Vec::new();
        for i in 1..=9 {
            all.push(mk(s, k, &format!("Entry {i}")));
        }
        let root = format!("{}/{}/", base(s, ""), k.coll());
        let q = "per_page=3&hide_empty=false";

        let (r, v) = list(s, k, "hide_empty=false&per_page=3");
        check_list_shape(&r, k, true, false);
        assert_eq!(v["total"], json!(9));
        assert_eq!(v["total_pages"], json!(3));
        assert_eq!(r.header("x-cal-total"), Some("9"));
        assert_eq!(r.header("x-cal-totalpages"), Some("3"));
        assert_eq!(v["rest_url"], json!(format!("{root}?page=1&{q}")));
        let next = format!("{root}?{q}&page=2");
        assert_eq!(v["next_rest_url"], json!(next));
        assert_eq!(
            r.header_all("link"),
            vec![format!("{d}, <{next}>; rel=\"next\"")]
        );
        assert_eq!(ids_of(&v, k), all[..3].to_vec());

        let (r, v) = list(s, k, "hide_empty=false&per_page=3&page=2");
        check_list_shape(&r, k, true, true);
        assert_eq!(v["rest_url"], json!(format!("{root}?page=2&{q}")));
        let next = format!("{root}?{q}&page=3");
        let prev = format!("{root}?{q}");
        assert_eq!(v["next_rest_url"], json!(next));
        assert_eq!(v["previous_rest_url"], json!(prev));
        assert_eq!(
            r.header_all("link"),
            vec![format!(
                "{d}, <{next}>; rel=\"next\", <{prev}>; rel=\"prev\""
            )]
        );
        assert_eq!(ids_of(&v, k), all[3..6].to_vec());

        let (r, v) = list(s, k, "hide_empty=false&per_page=3&page=3");
        check_list_shape(&r, k, false, true);
        let prev = format!("{root}?{q}&page=2");
        assert_eq!(v["previous_rest_url"], json!(prev));
        assert_eq!(
            r.header_all("link"),
            vec![format!("{d}, <{prev}>; rel=\"prev\"")]
        );
        assert_eq!(ids_of(&v, k), all[6..].to_vec());

        // Past the last page: 200, empty, still a previous link.
        let (r, v) = list(s, k, "hide_empty=false&per_page=3&page=7");
        check_list_shape(&r, k, false, true);
        assert_eq!(v["total"], json!(9));
        assert_eq!(v["total_pages"], json!(3));
        assert_eq!(v[k.coll()], json!([]));
        assert_eq!(v["rest_url"], json!(format!("{root}?page=7&{q}")));
        let prev = format!("{root}?{q}&page=6");
        assert_eq!(v["previous_rest_url"], json!(prev));
        assert_eq!(
            r.header_all("link"),
            vec![format!("{d}, <{prev}>; rel=\"prev\"")]
        );

        // Following the links keeps per_page and hide_empty.
        let (_, v) = list(s, k, "hide_empty=false&per_page=3");
        let next = v["next_rest_url"].as_str().unwrap().to_string();
        let path = next.strip_prefix(&s.public).unwrap();
        let r = s.get(path);
        assert_eq!(r.status, 200, "{}", r.describe());
        assert_eq!(ids_of(&r.json(), k), all[3..6].to_vec());
    }
}

#[test]
fn per_page_above_fifty_is_lowered() {
    let (_g, s) = setup();
    for k in KINDS {
        for i in 0..3 {
            mk(s, k, &format!("Clamp {i}"));
        }
        let (r, v) = list(s, k, "hide_empty=false&per_page=100");
        check_list_shape(&r, k, false, false);
        assert_eq!(v["total"], json!(3));
        assert_eq!(v["total_pages"], json!(1));
        assert_eq!(
            v["rest_url"],
            json!(format!(
                "{}/{}/?page=1&per_page=50&hide_empty=false",
                base(s, ""),
                k.coll()
            ))
        );
        let (_, v) = list(s, k, "hide_empty=false&per_page=2");
        assert_eq!(v["total_pages"], json!(2));
    }
}

#[test]
fn search_matches_words_of_name_and_slug() {
    let (_g, s) = setup();
    for k in KINDS {
        let foo = mk(s, k, "Foo");
        let bar = mk(s, k, "Bar");
        mk(s, k, "Baz");
        let one = id(&create(s, k, json!({"name": "One", "slug": "foo-bar"})));
        let (r, v) = list(s, k, "hide_empty=false&search=foo");
        check_list_shape(&r, k, false, false);
        assert_eq!(v["total"], json!(2), "search=foo: {v}");
        assert_eq!(v["total_pages"], json!(1));
        let mut got = ids_of(&v, k);
        got.sort();
        assert_eq!(got, vec![foo, one]);
        let mut got = list_ids(s, k, "hide_empty=false&search=bar");
        got.sort();
        assert_eq!(got, vec![bar, one], "search=bar");
        let (_, v) = list(s, k, "hide_empty=false&search=zoot");
        assert_eq!(v["total"], json!(0));
        assert_eq!(v["total_pages"], json!(0));
        // Search does not change the order (name order: Foo before One).
        assert_eq!(
            list_ids(s, k, "hide_empty=false&search=foo"),
            vec![foo, one]
        );
        // The default still hides empty terms.
        assert_eq!(total(s, k, "search=foo"), 0);
    }
}

#[test]
fn search_by_prefix_and_typo_but_not_inner_substring() {
    let (_g, s) = setup();
    for k in KINDS {
        let a = mk(s, k, "Music");
        let b = mk(s, k, "Music Again");
        for q in ["mus", "musik", "MUSIC", "music%20again"] {
            let want = if q == "music%20again" {
                vec![b]
            } else {
                vec![a, b]
            };
            assert_eq!(
                list_ids(s, k, &format!("hide_empty=false&search={q}")),
                want,
                "{k:?} search={q}"
            );
        }
        assert_eq!(total(s, k, "hide_empty=false&search=usic"), 0);
        // The search value is written into the links, form-encoded.
        let (_, v) = list(s, k, "hide_empty=false&search=music%20again");
        assert_eq!(
            v["rest_url"],
            json!(format!(
                "{}/{}/?page=1&per_page=10&search=music+again&hide_empty=false",
                base(s, ""),
                k.coll()
            ))
        );
    }
}

#[test]
fn exclude_and_include_filters() {
    let (_g, s) = setup();
    for k in KINDS {
        // The previous round left a term of this kind behind (its "other kind" term).
        wipe(s);
        let a = mk(s, k, "Aa");
        let b = mk(s, k, "Bb");
        let c = mk(s, k, "Cc");
        let q = "hide_empty=false";
        assert_eq!(list_ids(s, k, &format!("{q}&exclude={a}")), vec![b, c]);
        assert_eq!(list_ids(s, k, &format!("{q}&exclude={a},{b}")), vec![c]);
        assert_eq!(
            list_ids(s, k, &format!("{q}&exclude[]={a}&exclude[]={c}")),
            vec![b]
        );
        let (r, v) = list(s, k, &format!("{q}&exclude={a},{b},{c}"));
        check_list_shape(&r, k, false, false);
        assert_eq!(v["total"], json!(0));
        assert_bad_one(
            &s.get(&format!("{}?{q}&exclude=2389,1235,3434", k.path())),
            "exclude",
            "rest_invalid_reference",
        );
        assert_eq!(total(s, k, &format!("{q}&include={b}")), 1);
        assert_eq!(list_ids(s, k, &format!("{q}&include={b}")), vec![b]);
        assert_eq!(
            list_ids(s, k, &format!("{q}&include={c},{a},{b}")),
            vec![a, b, c],
            "include keeps name order unless orderby=include"
        );
        assert_bad_one(
            &s.get(&format!("{}?{q}&include=2389,1235,3434", k.path())),
            "include",
            "rest_invalid_reference",
        );
        // One unknown ID among known ones is enough.
        assert_bad_one(
            &s.get(&format!("{}?{q}&include={a},2389", k.path())),
            "include",
            "rest_invalid_reference",
        );
        // An ID of the other kind is not a term of this kind.
        let other = mk(s, k.other(), "Foreign");
        for p in ["include", "exclude"] {
            assert_bad_one(
                &s.get(&format!("{}?{q}&{p}={other}", k.path())),
                p,
                "rest_invalid_reference",
            );
            assert_bad_one(&s.get(&format!("{}?{q}&{p}=", k.path())), p, "rest_empty");
            assert_bad_one(
                &s.get(&format!("{}?{q}&{p}=abc", k.path())),
                p,
                "rest_invalid_type",
            );
            assert_bad(&s.get(&format!("{}?{q}&{p}=0", k.path())), &[p], &[]);
        }
        // include and exclude together: include first, then exclude.
        assert_eq!(
            list_ids(s, k, &format!("{q}&include={a},{b}&exclude={a}")),
            vec![b]
        );
    }
}

#[test]
fn ordering_by_id_and_name_with_any_letter_case() {
    let (_g, s) = setup();
    for k in KINDS {
        let b = mk(s, k, "b");
        let a = mk(s, k, "A");
        let c = mk(s, k, "C");
        let q = "hide_empty=false";
        for (o, want) in [
            ("orderby=id&order=desc", vec![c, a, b]),
            ("orderby=id&order=asc", vec![b, a, c]),
            ("orderby=name&order=asc", vec![a, b, c]),
            ("orderby=name&order=desc", vec![c, b, a]),
            ("", vec![a, b, c]),
            ("order=desc", vec![c, b, a]),
            ("orderby=ID&order=DESC", vec![c, a, b]),
            ("orderby=Id&order=Desc", vec![c, a, b]),
            ("orderby=NAME&order=AsC", vec![a, b, c]),
            ("orderby=term_id", vec![b, a, c]),
            ("orderby=term_id&order=desc", vec![c, a, b]),
            ("orderby=slug", vec![a, b, c]),
            ("orderby=slug&order=desc", vec![c, b, a]),
            ("orderby=term_group", vec![b, a, c]),
            ("orderby=none", vec![b, a, c]),
            ("orderby=none&order=desc", vec![c, a, b]),
            ("orderby=include_slugs", vec![a, b, c]),
            ("orderby=include", vec![a, b, c]),
        ] {
            assert_eq!(list_ids(s, k, &format!("{q}&{o}")), want, "{k:?} {o}");
        }
        // orderby=include follows the include list; order reverses it.
        let inc = format!("{q}&include={c},{b},{a}&orderby=include");
        assert_eq!(list_ids(s, k, &inc), vec![c, b, a]);
        assert_eq!(list_ids(s, k, &format!("{inc}&order=desc")), vec![a, b, c]);
        // order/orderby are lower-cased in the links.
        let (_, v) = list(s, k, &format!("{q}&orderby=ID&order=DESC"));
        assert_eq!(
            v["rest_url"],
            json!(format!(
                "{}/{}/?page=1&per_page=10&order=desc&orderby=id&hide_empty=false",
                base(s, ""),
                k.coll()
            ))
        );
    }
}

#[test]
fn ordering_by_description_and_count_with_ties_by_id() {
    let (_g, s) = setup();
    for k in KINDS {
        let b = id(&create(s, k, json!({"name": "b", "description": "zeta"})));
        let a = id(&create(s, k, json!({"name": "A", "description": "Alpha"})));
        let c = id(&create(s, k, json!({"name": "C", "description": "beta"})));
        let q = "hide_empty=false";
        assert_eq!(
            list_ids(s, k, &format!("{q}&orderby=description")),
            vec![a, c, b]
        );
        assert_eq!(
            list_ids(s, k, &format!("{q}&orderby=description&order=desc")),
            vec![b, c, a]
        );
        // All counts are 0: ties broken by ascending ID, in both directions.
        assert_eq!(list_ids(s, k, &format!("{q}&orderby=count")), vec![b, a, c]);
        assert_eq!(
            list_ids(s, k, &format!("{q}&orderby=count&order=desc")),
            vec![b, a, c]
        );
    }
}

#[test]
fn equal_names_are_ordered_by_id() {
    let (_g, s) = setup();
    for k in KINDS {
        let z = mk(s, k, "Zed");
        let s1 = id(&create(s, k, json!({"name": "Same", "slug": "same-one"})));
        // A different, unused slug: no conflict.
        let s2 = id(&create(s, k, json!({"name": "same", "slug": "same-two"})));
        let q = "hide_empty=false&orderby=name";
        assert_eq!(list_ids(s, k, q), vec![s1, s2, z]);
        assert_eq!(list_ids(s, k, &format!("{q}&order=desc")), vec![z, s1, s2]);
    }
}

#[test]
fn ordering_categories_by_parent() {
    let (_g, s) = setup();
    let p1 = mk(s, Cat, "P one");
    let p2 = mk(s, Cat, "P two");
    let x = id(&create(s, Cat, json!({"name": "x", "parent": p2})));
    let y = id(&create(s, Cat, json!({"name": "y", "parent": p1})));
    let z = id(&create(s, Cat, json!({"name": "z", "parent": p2})));
    let q = "hide_empty=false&orderby=parent";
    assert_eq!(list_ids(s, Cat, q), vec![p1, p2, y, x, z]);
    assert_eq!(
        list_ids(s, Cat, &format!("{q}&order=desc")),
        vec![x, z, y, p1, p2]
    );
    assert_eq!(
        list_ids(s, Cat, "hide_empty=false&orderby=PARENT&order=ASC"),
        vec![p1, p2, y, x, z]
    );
}

#[test]
fn empty_or_unknown_order_and_orderby_are_refused() {
    let (_g, s) = setup();
    for k in KINDS {
        mk(s, k, "Something");
        assert_bad(
            &s.get(&format!("{}?order=&orderby=id", k.path())),
            &["order"],
            &[],
        );
        assert_bad(
            &s.get(&format!("{}?order=desc&orderby=", k.path())),
            &["orderby"],
            &[],
        );
        for v in ["sideways", "descending", "random"] {
            assert_bad_one(
                &s.get(&format!("{}?order={v}", k.path())),
                "order",
                "rest_not_in_enum",
            );
        }
        for v in ["relevance", "foo", "date", "title"] {
            assert_bad_one(
                &s.get(&format!("{}?orderby={v}", k.path())),
                "orderby",
                "rest_not_in_enum",
            );
        }
        assert_bad(
            &s.get(&format!("{}?order=&orderby=", k.path())),
            &["order", "orderby"],
            &[],
        );
    }
}

#[test]
fn parent_filter_on_categories() {
    let (_g, s) = setup();
    let b = mk(s, Cat, "b");
    let a = id(&create(s, Cat, json!({"name": "A", "parent": b})));
    let d = id(&create(s, Cat, json!({"name": "D", "parent": b})));
    let c = mk(s, Cat, "C");
    let (r, v) = list(s, Cat, &format!("hide_empty=false&parent={b}"));
    check_list_shape(&r, Cat, false, false);
    assert_eq!(v["total"], json!(2));
    assert_eq!(ids_of(&v, Cat), vec![a, d]);
    assert_eq!(
        v["rest_url"],
        json!(format!(
            "{}/categories/?page=1&per_page=10&hide_empty=false&parent={b}",
            base(s, "")
        ))
    );
    // almanac: 0 selects the top level.
    assert_eq!(list_ids(s, Cat, "hide_empty=false&parent=0"), vec![b, c]);
    assert_eq!(total(s, Cat, &format!("hide_empty=false&parent={a}")), 0);
    let tag = mk(s, Tag, "A tag");
    let tag_s = tag.to_string();
    for bad in ["2389", "", "foo", "-1", tag_s.as_str()] {
        assert_bad(
            &s.get(&format!("{}?hide_empty=false&parent={bad}", Cat.path())),
            &["parent"],
            &[],
        );
    }
    assert_bad_one(
        &s.get(&format!("{}?parent=2389", Cat.path())),
        "parent",
        "rest_invalid_reference",
    );
    assert_bad_one(
        &s.get(&format!("{}?parent=foo", Cat.path())),
        "parent",
        "rest_invalid_type",
    );
    // Tags have no parent parameter: ignored.
    let (_, v) = list(s, Tag, "hide_empty=false&parent=2389");
    assert_eq!(ids_of(&v, Tag), vec![tag]);
    let (_, v) = list(s, Tag, "hide_empty=false&parent=foo");
    assert_eq!(v["total"], json!(1));
}

#[test]
fn slug_filter() {
    let (_g, s) = setup();
    for k in KINDS {
        let mut by = Vec::new();
        for sl in ["a", "b", "c", "d"] {
            by.push(id(&create(
                s,
                k,
                json!({"name": format!("Term {sl}"), "slug": sl}),
            )));
        }
        let q = "hide_empty=false";
        let (r, v) = list(s, k, &format!("{q}&slug=a"));
        check_list_shape(&r, k, false, false);
        assert_eq!(v["total"], json!(1));
        assert_eq!(ids_of(&v, k), vec![by[0]]);
        assert_eq!(
            v["rest_url"],
            json!(format!(
                "{}/{}/?page=1&per_page=10&hide_empty=false&slug=a",
                base(s, ""),
                k.coll()
            ))
        );
        assert_eq!(list_ids(s, k, &format!("{q}&slug=c")), vec![by[2]]);
        // The value is sanitized like a slug.
        assert_eq!(list_ids(s, k, &format!("{q}&slug=C")), vec![by[2]]);
        let (r, v) = list(s, k, &format!("{q}&slug=foo"));
        check_list_shape(&r, k, false, false);
        assert_eq!(v["total"], json!(0));
        assert_bad_one(
            &s.get(&format!("{}?{q}&slug=", k.path())),
            "slug",
            "rest_empty",
        );
    }
}

#[test]
fn list_links_carry_every_supplied_parameter_in_order() {
    let (_g, s) = setup();
    for k in KINDS {
        let a = mk(s, k, "Link a");
        let b = mk(s, k, "Link b");
        let c = mk(s, k, "Link c");
        let parent = if k == Cat { "&parent=0" } else { "" };
        let query = format!(
            "translation_language=en&slug=zz{parent}&hide_empty=1&orderby=Name&order=DESC\
             &include={c}&exclude=%20{a}%20,%20,{b}&search=foo%20bar&per_page=70&page=2"
        );
        let (r, v) = list(s, k, &query);
        check_list_shape(&r, k, false, true);
        let root = format!("{}/{}/", base(s, ""), k.coll());
        let q = format!(
            "per_page=50&search=foo+bar&exclude={a}%2C{b}&include={c}&order=desc&orderby=name\
             &hide_empty=true{parent}&slug=zz&translation_language=en"
        );
        assert_eq!(v["rest_url"], json!(format!("{root}?page=2&{q}")));
        assert_eq!(v["previous_rest_url"], json!(format!("{root}?{q}")));
        assert_eq!(v["total"], json!(0));
        assert_eq!(v["total_pages"], json!(0));
        assert_eq!(v[k.coll()], json!([]));
    }
}

#[test]
fn bad_list_parameters_are_reported_together() {
    let (_g, s) = setup();
    for k in KINDS {
        mk(s, k, "Present");
        let mut q = String::from(
            "page=0&per_page=abc&search=&order=up&orderby=bogus&hide_empty=maybe\
             &include=&exclude=x&slug=&translation_language=fr",
        );
        let mut names = vec![
            "page",
            "per_page",
            "search",
            "order",
            "orderby",
            "hide_empty",
            "include",
            "exclude",
            "slug",
            "translation_language",
        ];
        if k == Cat {
            q.push_str("&parent=2389");
            names.push("parent");
        }
        let r = s.get(&format!("{}?{q}", k.path()));
        let mut subs = vec![
            ("page", "rest_out_of_bounds"),
            ("per_page", "rest_invalid_type"),
            ("search", "rest_empty"),
            ("order", "rest_not_in_enum"),
            ("orderby", "rest_not_in_enum"),
            ("hide_empty", "rest_invalid_type"),
            ("include", "rest_empty"),
            ("exclude", "rest_invalid_type"),
            ("slug", "rest_empty"),
            ("translation_language", "rest_not_in_enum"),
        ];
        if k == Cat {
            subs.push(("parent", "rest_invalid_reference"));
        }
        assert_bad(&r, &names, &subs);
        assert_eq!(r.header("allow"), Some("GET"));
    }
}

#[test]
fn each_bad_list_parameter_alone_is_refused() {
    let (_g, s) = setup();
    let cases: &[(&str, &[&str])] = &[
        ("page", &["0", "-1", "foo", "", "1.5", "0x10", "%201"]),
        ("per_page", &["0", "-5", "x", "", "2.5", "true"]),
        ("search", &[""]),
        ("search[]", &["x"]),
        ("order", &["", "up", "ascending"]),
        ("orderby", &["", "relevance", "name%20", "%20name"]),
        ("hide_empty", &["", "yes", "2", "null"]),
        ("slug", &[""]),
        ("exclude", &["", "a", "2389", "1,x"]),
        ("include", &["", "a", "2389", "-3"]),
        ("translation_language", &["", "fr", "PT-BR", "EN", "en-us"]),
    ];
    for k in KINDS {
        mk(s, k, "Present");
        for (p, vals) in cases {
            let name = p.trim_end_matches("[]");
            for v in *vals {
                let r = s.get(&format!("{}?hide_empty=false&{p}={v}", k.path()));
                assert_bad(&r, &[name], &[]);
            }
        }
    }
    // Good edge values: accepted integer spellings.
    for k in KINDS {
        for q in ["page=1.0", "per_page=%2B3", "page=007", "per_page=1e1"] {
            list(s, k, &format!("hide_empty=false&{q}"));
        }
    }
}

#[test]
fn lists_are_per_language() {
    let (_g, s) = setup();
    for k in KINDS {
        let en = mk(s, k, "Summer");
        let es = id(&create(
            s,
            k,
            json!({"name": "Verano", "translation_language": "es", "translation_of": en}),
        ));
        let pt = id(&create(
            s,
            k,
            json!({"name": "Verão", "translation_language": "pt-br"}),
        ));
        let q = "hide_empty=false";
        assert_eq!(list_ids(s, k, q), vec![en]);
        assert_eq!(
            list_ids(s, k, &format!("{q}&translation_language=es")),
            vec![es]
        );
        // The path segment selects the language; links keep the segment.
        let r = s.get(&format!("/es{}?{q}", k.path()));
        assert_eq!(r.status, 200, "{}", r.describe());
        let v = r.json();
        assert_eq!(ids_of(&v, k), vec![es]);
        assert_eq!(
            v["rest_url"],
            json!(format!(
                "{}/{}/?page=1&per_page=10&hide_empty=false",
                base(s, "/es"),
                k.coll()
            ))
        );
        assert_eq!(r.header_all("link"), vec![discovery(s, "/es").as_str()]);
        for it in v[k.coll()].as_array().unwrap() {
            check_repr(s, k, it, "/es", None);
            assert_eq!(it["language"], "es");
            assert_eq!(js(&it["translations"]), js(&json!({"en": en, "es": es})));
        }
        // An explicit parameter wins over the segment and is written into the links.
        let r = s.get(&format!("/es{}?{q}&translation_language=pt-br", k.path()));
        assert_eq!(r.status, 200, "{}", r.describe());
        let v = r.json();
        assert_eq!(ids_of(&v, k), vec![pt]);
        assert_eq!(
            v["rest_url"],
            json!(format!(
                "{}/{}/?page=1&per_page=10&hide_empty=false&translation_language=pt-br",
                base(s, "/es"),
                k.coll()
            ))
        );
        // References to a term of another language are unknown references.
        for p in ["include", "exclude"] {
            assert_bad_one(
                &s.get(&format!("{}?{q}&{p}={es}", k.path())),
                p,
                "rest_invalid_reference",
            );
            assert_bad_one(
                &s.get(&format!("/es{}?{q}&{p}={en}", k.path())),
                p,
                "rest_invalid_reference",
            );
            assert_eq!(
                total(s, k, &format!("{q}&{p}={es}&translation_language=es")),
                if p == "include" { 1 } else { 0 }
            );
        }
        // Search and slug stay inside the language.
        assert_eq!(total(s, k, &format!("{q}&search=verano")), 0);
        assert_eq!(
            list_ids(s, k, &format!("{q}&search=verano&translation_language=es")),
            vec![es]
        );
        assert_eq!(total(s, k, &format!("{q}&slug=verano")), 0);
    }
    // Category parent filter: another language's category is unknown.
    let en_parent = mk(s, Cat, "Parent en");
    assert_bad_one(
        &s.get(&format!(
            "{}?hide_empty=false&parent={en_parent}&translation_language=es",
            Cat.path()
        )),
        "parent",
        "rest_invalid_reference",
    );
}

// ---------------------------------------------------------------------------------------------
// Create
// ---------------------------------------------------------------------------------------------

#[test]
fn create_permissions() {
    let (_g, s) = setup();
    for k in KINDS {
        let before = snapshot(s);
        for u in k.not_managers() {
            let r = call(
                s,
                "POST",
                &k.path(),
                Some(*u),
                Some(json!({"name": "Nope"})),
            );
            assert_plain_error(&r, 403, "rest_forbidden");
            assert_eq!(r.header("allow"), Some("GET"), "{}", u.name);
        }
        let r = call(s, "POST", &k.path(), None, Some(json!({"name": "Nope"})));
        assert_plain_error(&r, 401, "rest_forbidden");
        assert_unchanged(s, &before, "refused creates");
        for u in [ADMIN, EDITOR] {
            create_as(s, k, u, json!({"name": format!("By {}", u.name)}));
        }
    }
    // Authors manage categories.
    let v = create_as(s, Cat, AUTHOR, json!({"name": "By author"}));
    check_repr(s, Cat, &v, "", Some(&ALL_METHODS));
}

#[test]
fn missing_name_is_reported_before_everything_else() {
    let (_g, s) = setup();
    for k in KINDS {
        let before = snapshot(s);
        for (u, body) in [
            (Some(EDITOR), json!({})),
            (Some(EDITOR), json!({"description": "no name"})),
            (Some(EDITOR), json!({"name": null, "description": "x"})),
            // Missing parameters are reported on their own, before invalid ones.
            (Some(EDITOR), json!({"description": "", "slug": ""})),
            // Validation precedes the permission check.
            (None, json!({"description": "x"})),
            (Some(SUBSCRIBER), json!({"slug": "x"})),
        ] {
            let r = call(s, "POST", &k.path(), u, Some(body));
            let v = assert_error(&r, 400, "rest_missing_callback_param");
            assert_eq!(
                js(&v["data"]),
                js(&json!({"status": 400, "params": ["name"]})),
                "{}",
                r.describe()
            );
        }
        // No body at all.
        let r = s.req("POST", &k.path()).user(&EDITOR).send();
        assert_error(&r, 400, "rest_missing_callback_param");
        assert_unchanged(s, &before, "missing name");
    }
}

#[test]
fn bad_create_values_are_refused_and_nothing_is_written() {
    let (_g, s) = setup();
    let parent = mk(s, Cat, "Existing parent");
    let tag = mk(s, Tag, "Existing tag");
    for k in KINDS {
        let before = snapshot(s);
        let mut cases: Vec<(Value, &str, Option<&str>)> = vec![
            (json!({"name": ""}), "name", Some("rest_empty")),
            (json!({"name": 5}), "name", Some("rest_invalid_type")),
            (json!({"name": true}), "name", Some("rest_invalid_type")),
            (json!({"name": ["x"]}), "name", Some("rest_invalid_type")),
            (json!({"name": "   "}), "name", None),
            (json!({"name": " \t\n "}), "name", None),
            (json!({"name": "<b> </b>"}), "name", None),
            (
                json!({"name": "ok", "description": ""}),
                "description",
                Some("rest_empty"),
            ),
            (
                json!({"name": "ok", "description": 5}),
                "description",
                Some("rest_invalid_type"),
            ),
            (
                json!({"name": "ok", "slug": ""}),
                "slug",
                Some("rest_empty"),
            ),
            (
                json!({"name": "ok", "slug": 7}),
                "slug",
                Some("rest_invalid_type"),
            ),
            (
                json!({"name": "ok", "translation_language": "fr"}),
                "translation_language",
                Some("rest_not_in_enum"),
            ),
            (
                json!({"name": "ok", "translation_language": ""}),
                "translation_language",
                None,
            ),
            (
                json!({"name": "ok", "translation_of": 2389}),
                "translation_of",
                Some("rest_invalid_reference"),
            ),
            (
                json!({"name": "ok", "translation_of": "x"}),
                "translation_of",
                Some("rest_invalid_type"),
            ),
        ];
        if k == Cat {
            cases.extend([
                (json!({"name": "ok", "parent": ""}), "parent", None),
                (
                    json!({"name": "ok", "parent": 2389}),
                    "parent",
                    Some("rest_invalid_reference"),
                ),
                (
                    json!({"name": "ok", "parent": "foo"}),
                    "parent",
                    Some("rest_invalid_type"),
                ),
                (json!({"name": "ok", "parent": -1}), "parent", None),
                (
                    json!({"name": "ok", "parent": tag}),
                    "parent",
                    Some("rest_invalid_reference"),
                ),
            ]);
        }
        for (body, name, sub) in cases {
            for u in [EDITOR, ADMIN] {
                let r = call(s, "POST", &k.path(), Some(u), Some(body.clone()));
                let subs: Vec<(&str, &str)> = sub.map(|x| vec![(name, x)]).unwrap_or_default();
                assert_bad(&r, &[name], &subs);
            }
            // Validation precedes permission: an anonymous caller gets the same 400. (Not
            // asserted for `translation_of`, whose reference check may be an operation check.)
            if name != "translation_of" {
                let r = call(s, "POST", &k.path(), None, Some(body.clone()));
                assert_bad(&r, &[name], &[]);
            }
        }
        // Every invalid field together.
        let mut body = json!({"name": "", "description": "", "slug": ""});
        let mut names = vec!["name", "description", "slug"];
        if k == Cat {
            body["parent"] = json!("");
            names.push("parent");
        }
        let r = call(s, "POST", &k.path(), Some(EDITOR), Some(body));
        assert_bad(&r, &names, &[]);
        // Form bodies are validated the same way.
        let r = s
            .req("POST", &k.path())
            .user(&EDITOR)
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body("name=&slug=")
            .send();
        assert_bad(&r, &["name", "slug"], &[]);
        assert_unchanged(s, &before, &format!("bad {k:?} creates"));
    }
    // 200 characters is the limit, not beyond it.
    let long = "n".repeat(200);
    let v = create(s, Tag, json!({ "name": long }));
    assert_eq!(v["name"], json!(long));
    // A parent given as a numeric string is an ID.
    let v = create(
        s,
        Cat,
        json!({"name": "Child", "parent": parent.to_string()}),
    );
    assert_eq!(v["parent"], json!(parent));
}

#[test]
fn parent_on_a_tag_is_not_hierarchical() {
    let (_g, s) = setup();
    let t = mk(s, Tag, "Top");
    let before = snapshot(s);
    // `parent` with any value, also values that would not be valid category parents; the
    // non-integer one is last so that a failure there does not hide the rest of the test.
    for parent in [json!(t), json!(0), json!(2389), json!(-4), json!("x")] {
        let r = call(
            s,
            "POST",
            &Tag.path(),
            Some(EDITOR),
            Some(json!({"name": "Child", "parent": parent})),
        );
        assert_plain_error(&r, 400, "rest_taxonomy_not_hierarchical");
        let r = call(
            s,
            "PATCH",
            &Tag.item(t),
            Some(EDITOR),
            Some(json!({ "parent": parent })),
        );
        assert_plain_error(&r, 400, "rest_taxonomy_not_hierarchical");
    }
    // It is an operation check: the permission check comes first.
    let r = call(
        s,
        "POST",
        &Tag.path(),
        Some(SUBSCRIBER),
        Some(json!({"name": "Child", "parent": t})),
    );
    assert_plain_error(&r, 403, "rest_forbidden");
    let r = call(
        s,
        "POST",
        &Tag.path(),
        None,
        Some(json!({"name": "Child", "parent": t})),
    );
    assert_plain_error(&r, 401, "rest_forbidden");
    assert_unchanged(s, &before, "parent on tags");
}

#[test]
fn names_longer_than_200_characters_are_refused() {
    let (_g, s) = setup();
    for k in KINDS {
        let tid = mk(s, k, "Short");
        let before = snapshot(s);
        // Characters, not bytes: 201 two-byte characters and 201 ASCII ones.
        for long in ["x".repeat(201), "é".repeat(201)] {
            let r = call(
                s,
                "POST",
                &k.path(),
                Some(EDITOR),
                Some(json!({ "name": long })),
            );
            assert_bad_one(&r, "name", "rest_too_long");
            let r = call(
                s,
                "PATCH",
                &k.item(tid),
                Some(EDITOR),
                Some(json!({ "name": long })),
            );
            assert_bad_one(&r, "name", "rest_too_long");
        }
        assert_unchanged(s, &before, "too-long names");
        // Exactly 200 characters is allowed.
        for ok in ["n".repeat(200), "ñ".repeat(200)] {
            let v = create(s, k, json!({ "name": ok }));
            assert_eq!(v["name"], json!(ok));
        }
    }
}

#[test]
fn names_are_cleaned() {
    let (_g, s) = setup();
    for k in KINDS {
        let v = create(s, k, json!({"name": "  <b>Bold</b>\t\n  Name  "}));
        assert_eq!(v["name"], "Bold Name");
        assert_eq!(v["slug"], "bold-name");
        let v = create(s, k, json!({"name": "Food & Drink"}));
        assert_eq!(v["name"], "Food & Drink", "plain text, not &amp;");
        assert_eq!(v["slug"], "food-drink");
        let v = create(s, k, json!({"name": "Música en São Paulo"}));
        assert_eq!(v["name"], "Música en São Paulo");
        assert_eq!(v["slug"], "musica-en-sao-paulo");
        check_repr(s, k, &v, "", Some(&ALL_METHODS));
        // Descriptions are stored as given for editors (not rendered into paragraphs).
        let d = "Line one\n\n<em>Two</em> & <script>x()</script>";
        let v = create(s, k, json!({"name": "Described", "description": d}));
        assert_eq!(v["description"], d);
        assert_eq!(get_term(s, k, id(&v))["description"], d);
    }
}

#[test]
fn author_category_descriptions_are_sanitized() {
    let (_g, s) = setup();
    let v = create_as(
        s,
        Cat,
        AUTHOR,
        json!({"name": "Authored", "description": "<p onclick=\"steal()\">Hi <a href=\"javascript:alert(1)\">x</a></p><script>bad()</script>"}),
    );
    let d = v["description"].as_str().unwrap();
    assert!(d.contains("Hi"), "{d}");
    for gone in ["onclick", "steal", "script", "bad()", "javascript"] {
        assert!(!d.contains(gone), "{gone} must be removed: {d}");
    }
}

#[test]
fn slugs_are_sanitized_derived_and_truncated() {
    let (_g, s) = setup();
    for k in KINDS {
        let v = create(s, k, json!({"name": "Given", "slug": "Hello World.Again"}));
        assert_eq!(v["slug"], "hello-world-again");
        // A slug that sanitizes to nothing: derived from the name.
        let v = create(s, k, json!({"name": "Fallback Name", "slug": "!!!"}));
        assert_eq!(v["slug"], "fallback-name");
        // A name without letters or digits: the slug is the ID.
        let v = create(s, k, json!({"name": "!!!"}));
        assert_eq!(v["slug"], json!(id(&v).to_string()));
        // Slugs are cut to 200 bytes.
        let v = create(s, k, json!({"name": "Long", "slug": "b".repeat(250)}));
        assert_eq!(v["slug"], json!("b".repeat(200)));
    }
}

#[test]
fn term_exists_for_duplicate_tag_names() {
    let (_g, s) = setup();
    let fam = mk(s, Tag, "Family");
    create(s, Tag, json!({"name": "Other", "slug": "other"}));
    let before = snapshot(s);
    for body in [
        json!({"name": "Family"}),
        json!({"name": "FAMILY"}),
        json!({"name": " <i>family</i> "}),
        json!({"name": "Family", "slug": "family"}),
        json!({"name": "family", "slug": "FAMILY"}),
        // A different slug that another tag already uses: still the name match.
        json!({"name": "Family", "slug": "other"}),
    ] {
        let r = call(s, "POST", &Tag.path(), Some(EDITOR), Some(body.clone()));
        let v = assert_error(&r, 400, "term_exists");
        assert_eq!(
            js(&v["data"]),
            js(&json!({"status": 400, "term_id": fam})),
            "{body}"
        );
    }
    assert_unchanged(s, &before, "term_exists");
    // A different, unused slug: no conflict.
    let v = create(s, Tag, json!({"name": "Family", "slug": "family-fun"}));
    assert_eq!(v["slug"], "family-fun");
    assert_eq!(v["name"], "Family");
    // Accents are significant.
    let e1 = create(s, Tag, json!({"name": "Cafe"}));
    let e2 = create(s, Tag, json!({"name": "Café"}));
    assert_eq!(e1["slug"], "cafe");
    assert_eq!(e2["slug"], "cafe-2");
    // Unicode lower-casing.
    mk(s, Tag, "ÉTÉ");
    let r = call(
        s,
        "POST",
        &Tag.path(),
        Some(EDITOR),
        Some(json!({"name": "été"})),
    );
    assert_error(&r, 400, "term_exists");
    // Another language does not conflict, and may reuse the slug.
    let v = create(
        s,
        Tag,
        json!({"name": "Family", "translation_language": "es"}),
    );
    assert_eq!(v["slug"], "family");
    assert_eq!(v["language"], "es");
    // Permission comes before the duplicate check.
    let r = call(
        s,
        "POST",
        &Tag.path(),
        Some(AUTHOR),
        Some(json!({"name": "Family"})),
    );
    assert_plain_error(&r, 403, "rest_forbidden");
}

#[test]
fn term_exists_for_duplicate_category_names_among_siblings() {
    let (_g, s) = setup();
    let music = mk(s, Cat, "Music");
    let live = mk(s, Cat, "Live");
    let top_jazz = id(&create(s, Cat, json!({"name": "Top Jazz", "slug": "jazz"})));
    let child_rock = id(&create(
        s,
        Cat,
        json!({"name": "Rock", "slug": "rock", "parent": live}),
    ));
    let before = snapshot(s);
    for (body, want) in [
        (json!({"name": "Music"}), music),
        (json!({"name": "mUsIc", "parent": 0}), music),
        (json!({"name": "Music", "slug": "music"}), music),
        // Different slug used by a term with the same parent P (0): that term is reported.
        (json!({"name": "Music", "slug": "jazz"}), top_jazz),
        (json!({"name": "Rock", "parent": live}), child_rock),
    ] {
        let r = call(s, "POST", &Cat.path(), Some(EDITOR), Some(body.clone()));
        let v = assert_error(&r, 400, "term_exists");
        assert_eq!(
            js(&v["data"]),
            js(&json!({"status": 400, "term_id": want})),
            "{body}"
        );
    }
    assert_unchanged(s, &before, "term_exists");
    // Different slug used by a term with another parent: no conflict; the slug is made unique.
    let v = create(s, Cat, json!({"name": "Music", "slug": "rock"}));
    assert_eq!(v["slug"], "rock-2");
    assert_eq!(v["parent"], json!(0));
    // The same name under another parent is not a sibling.
    let v = create(s, Cat, json!({"name": "Music", "parent": live}));
    assert_eq!(v["slug"], "music-live");
    assert_eq!(v["url"], json!(s.url("/events/category/live/music-live/")));
    // Author may create categories, and gets the same duplicate answer.
    let r = call(
        s,
        "POST",
        &Cat.path(),
        Some(AUTHOR),
        Some(json!({"name": "Live"})),
    );
    let v = assert_error(&r, 400, "term_exists");
    assert_eq!(v["data"]["term_id"], json!(live));
}

#[test]
fn requested_slugs_are_made_unique() {
    let (_g, s) = setup();
    // Tags and top-level categories: -2, -3, …
    for k in KINDS {
        let a = create(s, k, json!({"name": "Alpha", "slug": "x"}));
        let b = create(s, k, json!({"name": "Beta", "slug": "x"}));
        let c = create(s, k, json!({"name": "Gamma", "slug": "x"}));
        assert_eq!(
            [&a["slug"], &b["slug"], &c["slug"]],
            [&json!("x"), &json!("x-2"), &json!("x-3")]
        );
        let d = create(s, k, json!({"name": "Delta Beta", "slug": "Beta"}));
        assert_eq!(d["slug"], "beta");
        let e = create(s, k, json!({"name": "Epsilon", "slug": "beta"}));
        assert_eq!(e["slug"], "beta-2");
    }
    // Slugs and names are unique per kind: a tag may take a category's slug and name.
    let c = create(s, Cat, json!({"name": "Shared", "slug": "shared"}));
    let t = create(s, Tag, json!({"name": "Shared", "slug": "shared"}));
    assert_eq!(
        (&c["slug"], &t["slug"]),
        (&json!("shared"), &json!("shared"))
    );
    mk(s, Cat, "Cat only");
    let r = call(
        s,
        "PATCH",
        &Tag.item(id(&t)),
        Some(EDITOR),
        Some(json!({"slug": "cat-only"})),
    );
    assert_eq!(
        r.status,
        200,
        "a category's slug is free for a tag: {}",
        r.describe()
    );
    // Categories with a parent: parent slug, then grandparent slug, then -2.
    mk(s, Cat, "Jazz");
    let live = mk(s, Cat, "Live");
    let music = id(&create(s, Cat, json!({"name": "Music", "parent": live})));
    assert_eq!(get_term(s, Cat, music)["slug"], "music");
    let j1 = create(s, Cat, json!({"name": "Jazz", "parent": music}));
    assert_eq!(j1["slug"], "jazz-music");
    let j2 = create(
        s,
        Cat,
        json!({"name": "Jazz Two", "slug": "jazz", "parent": music}),
    );
    assert_eq!(j2["slug"], "jazz-music-live");
    let j3 = create(
        s,
        Cat,
        json!({"name": "Jazz Three", "slug": "jazz", "parent": music}),
    );
    assert_eq!(j3["slug"], "jazz-music-live-2");
    assert_eq!(
        j3["url"],
        json!(s.url("/events/category/live/music/jazz-music-live-2/"))
    );
    check_repr(s, Cat, &j3, "", Some(&ALL_METHODS));
}

#[test]
fn create_through_a_language_segment() {
    let (_g, s) = setup();
    for k in KINDS {
        let r = call(
            s,
            "POST",
            &format!("/es{}", k.path()),
            Some(EDITOR),
            Some(json!({"name": "Fiesta"})),
        );
        assert_eq!(r.status, 201, "{}", r.describe());
        let v = r.json();
        let tid = id(&v);
        assert_eq!(v["language"], "es");
        assert_eq!(
            r.header("location"),
            Some(format!("{}/{}/{tid}", base(s, "/es"), k.coll()).as_str())
        );
        check_repr(s, k, &v, "/es", Some(&ALL_METHODS));
        // The body parameter wins over the segment; links keep the segment.
        let r = call(
            s,
            "POST",
            &format!("/es{}", k.path()),
            Some(EDITOR),
            Some(json!({"name": "Festa", "translation_language": "pt-br"})),
        );
        assert_eq!(r.status, 201, "{}", r.describe());
        let v = r.json();
        assert_eq!(v["language"], "pt-br");
        check_repr(s, k, &v, "/es", Some(&ALL_METHODS));
    }
    // A category parent must be in the new term's language.
    let en = mk(s, Cat, "English parent");
    let r = call(
        s,
        "POST",
        &Cat.path(),
        Some(EDITOR),
        Some(json!({"name": "Hijo", "parent": en, "translation_language": "es"})),
    );
    assert_bad_one(&r, "parent", "rest_invalid_reference");
}

// ---------------------------------------------------------------------------------------------
// Update
// ---------------------------------------------------------------------------------------------

#[test]
fn editor_updates_every_field_with_each_method() {
    let (_g, s) = setup();
    let p1 = mk(s, Cat, "First parent");
    let p2 = mk(s, Cat, "Second parent");
    for (i, m) in ["POST", "PUT", "PATCH"].into_iter().enumerate() {
        let c = id(&create(
            s,
            Cat,
            json!({"name": format!("Cat {i}"), "parent": p1}),
        ));
        let r = call(
            s,
            m,
            &Cat.item(c),
            Some(EDITOR),
            Some(json!({
                "name": format!("Renamed {i}"),
                "description": "New description",
                "slug": format!("new-slug-{i}"),
                "parent": p2,
            })),
        );
        assert_eq!(r.status, 200, "{m}: {}", r.describe());
        assert!(!r.has("location"));
        let v = r.json();
        check_repr(s, Cat, &v, "", Some(&ALL_METHODS));
        assert_eq!(v["name"], json!(format!("Renamed {i}")));
        assert_eq!(v["description"], "New description");
        assert_eq!(v["slug"], json!(format!("new-slug-{i}")));
        assert_eq!(v["parent"], json!(p2));
        assert_eq!(
            v["urls"]["up"],
            json!(format!("{}/categories/{p2}", base(s, "")))
        );
        assert_eq!(
            v["url"],
            json!(s.url(&format!("/events/category/second-parent/new-slug-{i}/")))
        );
        assert_eq!(
            js(&without_links(&v)),
            js(&without_links(&get_term(s, Cat, c)))
        );

        let t = mk(s, Tag, &format!("Tag {i}"));
        let r = call(
            s,
            m,
            &Tag.item(t),
            Some(EDITOR),
            Some(json!({
                "name": format!("Renamed tag {i}"),
                "description": "Tag description",
                "slug": format!("tag-slug-{i}"),
            })),
        );
        assert_eq!(r.status, 200, "{m}: {}", r.describe());
        let v = r.json();
        check_repr(s, Tag, &v, "", Some(&ALL_METHODS));
        assert_eq!(v["name"], json!(format!("Renamed tag {i}")));
        assert_eq!(v["description"], "Tag description");
        assert_eq!(v["slug"], json!(format!("tag-slug-{i}")));
        assert_eq!(v["url"], json!(s.url(&format!("/tag/tag-slug-{i}/"))));
    }
}

#[test]
fn partial_updates_leave_other_fields_alone() {
    let (_g, s) = setup();
    for k in KINDS {
        let v = create(
            s,
            k,
            json!({"name": "Keep", "description": "Kept", "slug": "keep"}),
        );
        let tid = id(&v);
        // The slug does not follow the name.
        let r = call(
            s,
            "PATCH",
            &k.item(tid),
            Some(EDITOR),
            Some(json!({"name": "  New <b>name</b> "})),
        );
        assert_eq!(r.status, 200, "{}", r.describe());
        let u = r.json();
        assert_eq!(u["name"], "New name");
        assert_eq!(u["slug"], "keep");
        assert_eq!(u["description"], "Kept");
        // An empty update changes nothing.
        let r = call(s, "PATCH", &k.item(tid), Some(EDITOR), Some(json!({})));
        assert_eq!(r.status, 200, "{}", r.describe());
        assert_eq!(js(&r.json()), js(&u));
        // null is absent.
        let r = call(
            s,
            "PUT",
            &k.item(tid),
            Some(EDITOR),
            Some(json!({"description": null})),
        );
        assert_eq!(r.status, 200, "{}", r.describe());
        assert_eq!(r.json()["description"], "Kept");
        // No duplicate-name check on update.
        let other = mk(s, k, "Other name");
        let r = call(
            s,
            "PATCH",
            &k.item(tid),
            Some(EDITOR),
            Some(json!({"name": "Other name"})),
        );
        assert_eq!(r.status, 200, "{}", r.describe());
        assert_eq!(r.json()["slug"], "keep");
        assert_eq!(get_term(s, k, other)["name"], "Other name");
        // Sending its own slug is not a conflict.
        let r = call(
            s,
            "PATCH",
            &k.item(tid),
            Some(EDITOR),
            Some(json!({"slug": "keep"})),
        );
        assert_eq!(r.status, 200, "{}", r.describe());
    }
}

#[test]
fn update_permissions() {
    let (_g, s) = setup();
    for k in KINDS {
        let tid = mk(s, k, "Guarded");
        let before = snapshot(s);
        for u in k.not_managers() {
            for m in ["POST", "PUT", "PATCH"] {
                let r = call(
                    s,
                    m,
                    &k.item(tid),
                    Some(*u),
                    Some(json!({"name": "Hacked"})),
                );
                assert_plain_error(&r, 403, "rest_forbidden");
                assert_eq!(r.header("allow"), Some("GET"));
            }
            let r = call(s, "DELETE", &k.item(tid), Some(*u), None);
            assert_plain_error(&r, 403, "rest_forbidden");
        }
        for m in ["POST", "PUT", "PATCH", "DELETE"] {
            let r = call(s, m, &k.item(tid), None, Some(json!({"name": "Hacked"})));
            assert_plain_error(&r, 401, "rest_forbidden");
        }
        assert_unchanged(s, &before, "refused updates and deletes");
        let r = call(
            s,
            "PATCH",
            &k.item(tid),
            Some(ADMIN),
            Some(json!({"name": "By admin"})),
        );
        assert_eq!(r.status, 200, "{}", r.describe());
    }
    // Authors manage every category (no ownership).
    let c = mk(s, Cat, "Editor made");
    let r = call(
        s,
        "PATCH",
        &Cat.item(c),
        Some(AUTHOR),
        Some(json!({"name": "Author changed"})),
    );
    assert_eq!(r.status, 200, "{}", r.describe());
    check_repr(s, Cat, &r.json(), "", Some(&ALL_METHODS));
    let r = call(s, "DELETE", &Cat.item(c), Some(AUTHOR), None);
    assert_eq!(r.status, 200, "{}", r.describe());
}

#[test]
fn bad_update_values_are_refused_and_nothing_is_written() {
    let (_g, s) = setup();
    let other_tag = mk(s, Tag, "Some tag");
    for k in KINDS {
        let tid = id(&create(s, k, json!({"name": "Target", "description": "d"})));
        let before = snapshot(s);
        let mut cases: Vec<(Value, &str)> = vec![
            (json!({"name": ""}), "name"),
            (json!({"name": 3}), "name"),
            (json!({"name": "  "}), "name"),
            (json!({"description": ""}), "description"),
            (json!({"description": false}), "description"),
            (json!({"slug": ""}), "slug"),
            (json!({"slug": ["a"]}), "slug"),
            (json!({"translation_of": 2389}), "translation_of"),
        ];
        if k == Cat {
            cases.extend([
                (json!({"parent": ""}), "parent"),
                (json!({"parent": 2389}), "parent"),
                (json!({"parent": "foo"}), "parent"),
                (json!({"parent": other_tag}), "parent"),
            ]);
        }
        for (body, name) in cases {
            for m in ["POST", "PUT", "PATCH"] {
                let r = call(s, m, &k.item(tid), Some(EDITOR), Some(body.clone()));
                assert_bad(&r, &[name], &[]);
            }
            // Validation comes before the permission check.
            if name != "translation_of" {
                let r = call(
                    s,
                    "PATCH",
                    &k.item(tid),
                    Some(SUBSCRIBER),
                    Some(body.clone()),
                );
                assert_bad(&r, &[name], &[]);
            }
        }
        // Valid and invalid fields together: nothing is applied.
        let r = call(
            s,
            "PATCH",
            &k.item(tid),
            Some(EDITOR),
            Some(json!({"name": "Valid", "description": "", "slug": ""})),
        );
        assert_bad(&r, &["description", "slug"], &[]);
        assert_unchanged(s, &before, &format!("bad {k:?} updates"));
    }
}

#[test]
fn update_of_unknown_deleted_or_foreign_ids() {
    let (_g, s) = setup();
    for k in KINDS {
        let gone = mk(s, k, "Gone");
        let r = call(s, "DELETE", &k.item(gone), Some(EDITOR), None);
        assert_eq!(r.status, 200);
        let foreign = mk(s, k.other(), "Foreign");
        for bad in [gone, foreign, 2389] {
            for u in [Some(EDITOR), Some(SUBSCRIBER), None] {
                for m in ["POST", "PUT", "PATCH", "DELETE"] {
                    let r = call(s, m, &k.item(bad), u, Some(json!({"name": "x"})));
                    assert_bad(&r, &["id"], &[]);
                }
            }
        }
        // Allow on an unknown ID follows the kind-wide capability.
        let r = call(s, "GET", &k.item(2389), Some(EDITOR), None);
        assert_eq!(r.header("allow"), Some("GET, POST, PUT, PATCH, DELETE"));
        let r = call(s, "GET", &k.item(2389), None, None);
        assert_eq!(r.header("allow"), Some("GET"));
    }
}

#[test]
fn updating_to_a_used_slug_is_duplicate_term_slug() {
    let (_g, s) = setup();
    for k in KINDS {
        mk(s, k, "Taken");
        let t = mk(s, k, "Mover");
        let before = snapshot(s);
        for slug in ["taken", "Taken", " taken "] {
            let r = call(
                s,
                "PATCH",
                &k.item(t),
                Some(EDITOR),
                Some(json!({ "slug": slug })),
            );
            assert_plain_error(&r, 400, "duplicate_term_slug");
        }
        // Together with a name change: nothing applied.
        let r = call(
            s,
            "PUT",
            &k.item(t),
            Some(EDITOR),
            Some(json!({"slug": "taken", "name": "Changed"})),
        );
        assert_plain_error(&r, 400, "duplicate_term_slug");
        assert_unchanged(s, &before, "duplicate_term_slug");
        // Another language's slug is free.
        let es = id(&create(
            s,
            k,
            json!({"name": "Otro", "translation_language": "es"}),
        ));
        let r = call(
            s,
            "PATCH",
            &k.item(es),
            Some(EDITOR),
            Some(json!({"slug": "taken"})),
        );
        assert_eq!(r.status, 200, "{}", r.describe());
        assert_eq!(r.json()["slug"], "taken");
        // A slug that sanitizes to nothing is re-derived from the name and made unique.
        let twin = id(&create(s, k, json!({"name": "Mover", "slug": "x-mover"})));
        let r = call(
            s,
            "PATCH",
            &k.item(twin),
            Some(EDITOR),
            Some(json!({"slug": "!!!"})),
        );
        assert_eq!(r.status, 200, "{}", r.describe());
        assert_eq!(r.json()["slug"], "mover-2");
    }
    // A category whose parent changes in the same request gets a unique slug instead.
    let music = mk(s, Cat, "Music");
    mk(s, Cat, "Jazz");
    let other = mk(s, Cat, "Other");
    let r = call(
        s,
        "PATCH",
        &Cat.item(other),
        Some(EDITOR),
        Some(json!({"slug": "jazz", "parent": music})),
    );
    assert_eq!(r.status, 200, "{}", r.describe());
    let v = r.json();
    assert_eq!(v["slug"], "jazz-music");
    assert_eq!(v["parent"], json!(music));
    assert_eq!(v["url"], json!(s.url("/events/category/music/jazz-music/")));
}

#[test]
fn category_hierarchy_cycles_are_refused() {
    let (_g, s) = setup();
    let a = mk(s, Cat, "A");
    let b = id(&create(s, Cat, json!({"name": "B", "parent": a})));
    let c = id(&create(s, Cat, json!({"name": "C", "parent": b})));
    let before = snapshot(s);
    for (target, parent) in [(a, a), (a, b), (a, c), (b, c), (c, c)] {
        let r = call(
            s,
            "PATCH",
            &Cat.item(target),
            Some(EDITOR),
            Some(json!({ "parent": parent })),
        );
        assert_plain_error(&r, 400, "rest_term_invalid");
    }
    assert_unchanged(s, &before, "cycles");
    // Moving down a sibling branch is fine; 0 moves to the top level.
    let r = call(
        s,
        "PATCH",
        &Cat.item(c),
        Some(EDITOR),
        Some(json!({ "parent": a })),
    );
    assert_eq!(r.status, 200, "{}", r.describe());
    assert_eq!(r.json()["parent"], json!(a));
    let r = call(
        s,
        "PATCH",
        &Cat.item(b),
        Some(EDITOR),
        Some(json!({"parent": 0})),
    );
    assert_eq!(r.status, 200, "{}", r.describe());
    let v = r.json();
    assert_eq!(v["parent"], json!(0));
    assert!(v["urls"].get("up").is_none() && v["_links"].get("up").is_none());
    assert_eq!(v["url"], json!(s.url("/events/category/b/")));
    check_repr(s, Cat, &v, "", Some(&ALL_METHODS));
    // A parent of another language is an unknown parent.
    let es = id(&create(
        s,
        Cat,
        json!({"name": "Es", "translation_language": "es"}),
    ));
    let r = call(
        s,
        "PATCH",
        &Cat.item(b),
        Some(EDITOR),
        Some(json!({ "parent": es })),
    );
    assert_bad_one(&r, "parent", "rest_invalid_reference");
}

// ---------------------------------------------------------------------------------------------
// Delete
// ---------------------------------------------------------------------------------------------

#[test]
fn delete_returns_the_term_as_it_was_without_links() {
    let (_g, s) = setup();
    let parent = mk(s, Cat, "Parent");
    for k in KINDS {
        let mut body = json!({"name": "foo", "description": "Term description", "slug": "foo-bar"});
        if k == Cat {
            body["parent"] = json!(parent);
        }
        let tid = id(&create(s, k, body));
        let before = get_term(s, k, tid);
        let r = call(s, "DELETE", &k.item(tid), Some(EDITOR), None);
        assert_eq!(r.status, 200, "{}", r.describe());
        assert_eq!(r.header("cache-control"), Some(CC_AUTH));
        let v = r.json();
        assert_eq!(
            js(&v),
            js(&without_links(&before)),
            "deleted representation"
        );
        check_repr(s, k, &v, "", None);
        if k == Cat {
            assert_eq!(v["parent"], json!(parent));
            assert!(v["urls"]["up"].is_string());
        } else {
            assert!(v["urls"].get("up").is_none());
        }
        // Gone for good.
        assert_bad(&s.get(&k.item(tid)), &["id"], &[]);
        assert_bad(
            &call(s, "DELETE", &k.item(tid), Some(EDITOR), None),
            &["id"],
            &[],
        );
        assert_eq!(total(s, k, "hide_empty=false&search=foo"), 0);
        // The slug is free again.
        let again = create(s, k, json!({"name": "foo again", "slug": "foo-bar"}));
        assert_eq!(again["slug"], "foo-bar");
    }
}

#[test]
fn delete_ignores_force() {
    let (_g, s) = setup();
    for k in KINDS {
        for q in ["?force=false", "?force=true", "?force=nonsense", ""] {
            let tid = mk(s, k, &format!("Forced {q}"));
            let r = call(
                s,
                "DELETE",
                &format!("{}{q}", k.item(tid)),
                Some(ADMIN),
                None,
            );
            assert_eq!(r.status, 200, "{q}: {}", r.describe());
            assert_bad(&s.get(&k.item(tid)), &["id"], &[]);
        }
    }
}

#[test]
fn delete_unknown_id_is_400_whoever_asks() {
    let (_g, s) = setup();
    for k in KINDS {
        for u in [Some(SUBSCRIBER), None, Some(EDITOR)] {
            let r = call(s, "DELETE", &k.item(23), u, None);
            assert_bad(&r, &["id"], &[]);
        }
    }
}

#[test]
fn deleting_a_parent_reparents_its_children() {
    let (_g, s) = setup();
    let top = mk(s, Cat, "Top");
    let mid = id(&create(s, Cat, json!({"name": "Mid", "parent": top})));
    let c1 = id(&create(s, Cat, json!({"name": "Child one", "parent": mid})));
    let c2 = id(&create(s, Cat, json!({"name": "Child two", "parent": mid})));
    let grand = id(&create(s, Cat, json!({"name": "Grandchild", "parent": c1})));
    let r = call(s, "DELETE", &Cat.item(mid), Some(EDITOR), None);
    assert_eq!(r.status, 200, "{}", r.describe());
    for c in [c1, c2] {
        let v = get_term(s, Cat, c);
        assert_eq!(v["parent"], json!(top));
        check_repr(s, Cat, &v, "", Some(&["GET"]));
    }
    let g = get_term(s, Cat, grand);
    assert_eq!(g["parent"], json!(c1));
    assert_eq!(
        g["url"],
        json!(s.url("/events/category/top/child-one/grandchild/"))
    );
    assert_eq!(
        list_ids(s, Cat, &format!("hide_empty=false&parent={top}")),
        vec![c1, c2]
    );
    // Deleting a top-level category moves its children to the top level.
    let r = call(s, "DELETE", &Cat.item(top), Some(EDITOR), None);
    assert_eq!(r.status, 200, "{}", r.describe());
    let v = get_term(s, Cat, c1);
    assert_eq!(v["parent"], json!(0));
    assert!(v["urls"].get("up").is_none());
    assert_eq!(list_ids(s, Cat, "hide_empty=false&parent=0"), vec![c1, c2]);
}

// ---------------------------------------------------------------------------------------------
// Translation groups
// ---------------------------------------------------------------------------------------------

#[test]
fn translation_of_joins_a_group() {
    let (_g, s) = setup();
    for k in KINDS {
        let en = mk(s, k, "Concert");
        let es = create(
            s,
            k,
            json!({"name": "Concierto", "translation_language": "es", "translation_of": en}),
        );
        let es_id = id(&es);
        assert_eq!(es["language"], "es");
        assert_eq!(js(&es["translations"]), js(&json!({"en": en, "es": es_id})));
        // pt-br joins through the es member; keys stay in the order en, pt-br, es.
        let pt = create(
            s,
            k,
            json!({"name": "Concerto", "translation_language": "pt-br", "translation_of": es_id.to_string()}),
        );
        let pt_id = id(&pt);
        let group = json!({"en": en, "pt-br": pt_id, "es": es_id});
        for m in [en, es_id, pt_id] {
            let v = get_term(s, k, m);
            assert_eq!(js(&v["translations"]), js(&group), "translations of {m}");
            check_repr(s, k, &v, "", Some(&["GET"]));
        }
        let foreign = mk(s, k.other(), "Foreign");
        // A second es member: conflict.
        let before = snapshot(s);
        for target in [en, es_id, pt_id] {
            let r = call(
                s,
                "POST",
                &k.path(),
                Some(EDITOR),
                Some(
                    json!({"name": "Otro", "translation_language": "es", "translation_of": target}),
                ),
            );
            let v = assert_error(&r, 409, "translation-conflict");
            let mut dk = keys(&v["data"]);
            dk.sort();
            assert_eq!(dk, vec!["language", "status", "translation_id"]);
            assert_eq!(v["data"]["language"], "es");
            assert_eq!(v["data"]["translation_id"], json!(es_id));
        }
        // Pointing at a record of the same language is a conflict too.
        let r = call(
            s,
            "POST",
            &k.path(),
            Some(EDITOR),
            Some(json!({"name": "Another", "translation_of": en})),
        );
        let v = assert_error(&r, 409, "translation-conflict");
        assert_eq!(v["data"]["language"], "en");
        assert_eq!(v["data"]["translation_id"], json!(en));
        // A term of the other kind is not a valid target.
        let r = call(
            s,
            "POST",
            &k.path(),
            Some(EDITOR),
            Some(json!({"name": "Fremd", "translation_language": "es", "translation_of": foreign})),
        );
        assert_bad_one(&r, "translation_of", "rest_invalid_reference");
        assert_unchanged(s, &before, "translation conflicts");
    }
}

#[test]
fn translation_of_on_update_moves_and_detaches() {
    let (_g, s) = setup();
    for k in KINDS {
        let en = mk(s, k, "Night");
        let es = id(&create(
            s,
            k,
            json!({"name": "Noche", "translation_language": "es"}),
        ));
        let r = call(
            s,
            "PATCH",
            &k.item(es),
            Some(EDITOR),
            Some(json!({"translation_of": en})),
        );
        assert_eq!(r.status, 200, "{}", r.describe());
        assert_eq!(
            js(&r.json()["translations"]),
            js(&json!({"en": en, "es": es}))
        );
        // Its own ID, or a member of its own group: nothing changes.
        for t in [es, en] {
            let r = call(
                s,
                "PATCH",
                &k.item(es),
                Some(EDITOR),
                Some(json!({ "translation_of": t })),
            );
            assert_eq!(r.status, 200, "{}", r.describe());
            assert_eq!(
                js(&r.json()["translations"]),
                js(&json!({"en": en, "es": es}))
            );
        }
        // Another en term cannot join the group.
        let en2 = mk(s, k, "Evening");
        let r = call(
            s,
            "PATCH",
            &k.item(en2),
            Some(EDITOR),
            Some(json!({ "translation_of": es })),
        );
        let v = assert_error(&r, 409, "translation-conflict");
        assert_eq!(v["data"]["translation_id"], json!(en));
        // 0 detaches.
        let r = call(
            s,
            "PUT",
            &k.item(es),
            Some(EDITOR),
            Some(json!({"translation_of": 0})),
        );
        assert_eq!(r.status, 200, "{}", r.describe());
        assert_eq!(js(&r.json()["translations"]), js(&json!({ "es": es })));
        assert_eq!(
            js(&get_term(s, k, en)["translations"]),
            js(&json!({ "en": en }))
        );
        // Tags: permission still applies.
        if k == Tag {
            let r = call(
                s,
                "PATCH",
                &k.item(es),
                Some(AUTHOR),
                Some(json!({ "translation_of": en })),
            );
            assert_plain_error(&r, 403, "rest_forbidden");
        }
    }
}

#[test]
fn explicit_translation_language_selects_the_group_member() {
    let (_g, s) = setup();
    for k in KINDS {
        let en = id(&create(
            s,
            k,
            json!({"name": "Winter", "description": "cold"}),
        ));
        let es = id(&create(
            s,
            k,
            json!({"name": "Invierno", "translation_language": "es", "translation_of": en}),
        ));
        // GET: by ID whatever the segment, unless the parameter is explicit.
        assert_eq!(get_term(s, k, en)["id"], json!(en));
        let r = s.get(&format!("/es{}", k.item(en)));
        assert_eq!(r.json()["id"], json!(en));
        let r = s.get(&format!("{}?translation_language=es", k.item(en)));
        assert_eq!(r.status, 200, "{}", r.describe());
        let v = r.json();
        assert_eq!(v["id"], json!(es));
        check_repr(s, k, &v, "", Some(&["GET"]));
        let r = s.get(&format!("{}?translation_language=en", k.item(en)));
        assert_eq!(r.json()["id"], json!(en));
        let r = s.get(&format!("{}?translation_language=en", k.item(es)));
        assert_eq!(r.json()["id"], json!(en));
        // No member in that language: 404 rest_term_invalid, before the permission check.
        let r = s.get(&format!("{}?translation_language=pt-br", k.item(en)));
        assert_plain_error(&r, 404, "rest_term_invalid");
        let before = snapshot(s);
        for u in [Some(EDITOR), Some(SUBSCRIBER), None] {
            for m in ["PATCH", "DELETE"] {
                let r = call(
                    s,
                    m,
                    &format!("{}?translation_language=pt-br", k.item(en)),
                    u,
                    Some(json!({"name": "x"})),
                );
                assert_plain_error(&r, 404, "rest_term_invalid");
            }
        }
        // A bad value is a parameter error.
        let r = s.get(&format!("{}?translation_language=fr", k.item(en)));
        assert_bad_one(&r, "translation_language", "rest_not_in_enum");
        assert_unchanged(s, &before, "unresolved explicit language");
        // Update goes to the member.
        let r = call(
            s,
            "PATCH",
            &format!("{}?translation_language=es", k.item(en)),
            Some(EDITOR),
            Some(json!({"description": "frío"})),
        );
        assert_eq!(r.status, 200, "{}", r.describe());
        assert_eq!(r.json()["id"], json!(es));
        assert_eq!(get_term(s, k, es)["description"], "frío");
        assert_eq!(get_term(s, k, en)["description"], "cold");
        // Delete (parameter in the body) goes to the member and removes it from the group.
        let r = call(
            s,
            "DELETE",
            &k.item(en),
            Some(EDITOR),
            Some(json!({"translation_language": "es"})),
        );
        assert_eq!(r.status, 200, "{}", r.describe());
        let v = r.json();
        assert_eq!(v["id"], json!(es));
        check_repr(s, k, &v, "", None);
        assert_bad(&s.get(&k.item(es)), &["id"], &[]);
        assert_eq!(
            js(&get_term(s, k, en)["translations"]),
            js(&json!({ "en": en }))
        );
    }
}
