//! Access control and visibility, as one matrix and a set of leak checks.
//!
//! Covered: roles and capabilities, who may read, edit and trash what (`rest_forbidden`, 401
//! anonymous / 403 authenticated), single reads, lists and their `status` filter, `author`,
//! password-protected events, statuses on create, the trash, the error codes per kind, `Allow`
//! and `X-Cal-Total`, conditional GETs, translation groups, and search within what the caller
//! may read, for events, venues, organizers and terms (docs/api.md, "Roles and visibility").
//!
//! The expected answer of every cell comes from the small rule functions below (`can_read`,
//! `can_edit`, `expect_post`, `expect_term`), written from the documented rules and not from the
//! server's own capability table. Each test starts one server, builds its fixtures once, then
//! walks its cells, collecting every failing cell (who, route, owner, status) before failing.
//!
//! One place where the documentation leaves room is deliberately not asserted (comment at the
//! spot): whether `only_with_upcoming` applies the per-record read rule to contributors' and
//! authors' views of other users' events.
//!
//! Users (created in this order by the harness): admin 1, editor 2, author 3, contributor 4,
//! subscriber 5.

mod common;

use chrono::{Duration as CDur, Utc};
use common::*;
use serde_json::{json, Value};
use std::fmt;

// ---------------------------------------------------------------------------------------------
// The access rules
// ---------------------------------------------------------------------------------------------

/// A caller: anonymous, or one of the five roles. The order is the order of privilege, which the
/// roles' capabilities make a strict ladder.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Who {
    Anonymous,
    Subscriber,
    Contributor,
    Author,
    Editor,
    Administrator,
}

const CALLERS: [Who; 6] = [
    Who::Anonymous,
    Who::Subscriber,
    Who::Contributor,
    Who::Author,
    Who::Editor,
    Who::Administrator,
];

/// The roles that can own post-kind records (`edit_posts`).
const OWNERS: [Who; 4] = [
    Who::Administrator,
    Who::Editor,
    Who::Author,
    Who::Contributor,
];

impl Who {
    fn user(self) -> Option<&'static TestUser> {
        match self {
            Who::Anonymous => None,
            Who::Subscriber => Some(&SUBSCRIBER),
            Who::Contributor => Some(&CONTRIBUTOR),
            Who::Author => Some(&AUTHOR),
            Who::Editor => Some(&EDITOR),
            Who::Administrator => Some(&ADMIN),
        }
    }

    /// User ID given by the harness's creation order.
    fn id(self) -> i64 {
        match self {
            Who::Administrator => 1,
            Who::Editor => 2,
            Who::Author => 3,
            Who::Contributor => 4,
            Who::Subscriber => 5,
            Who::Anonymous => 0,
        }
    }

    /// `edit_posts`: may create posts; contributor and up.
    fn edits_posts(self) -> bool {
        self >= Who::Contributor
    }

    /// `publish_posts`, `edit_published_posts`, `delete_published_posts`: author and up.
    fn publishes(self) -> bool {
        self >= Who::Author
    }

    /// `edit_others_posts`, `edit_private_posts`, `read_private_posts` and the `delete_*`
    /// counterparts: editor and up.
    fn handles_others(self) -> bool {
        self >= Who::Editor
    }

    /// The `rest_forbidden` answer of a failed route permission.
    fn forbidden(self) -> Expect {
        if self == Who::Anonymous {
            Expect::Fail(401, "rest_forbidden")
        } else {
            Expect::Fail(403, "rest_forbidden")
        }
    }
}

impl fmt::Display for Who {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Who::Anonymous => "anonymous",
            Who::Subscriber => "subscriber",
            Who::Contributor => "contributor",
            Who::Author => "author",
            Who::Editor => "editor",
            Who::Administrator => "administrator",
        };
        f.write_str(s)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Event,
    Venue,
    Organizer,
}

impl Kind {
    fn collection(self) -> &'static str {
        match self {
            Kind::Event => "events",
            Kind::Venue => "venues",
            Kind::Organizer => "organizers",
        }
    }
    fn name_field(self) -> &'static str {
        match self {
            Kind::Event => "title",
            Kind::Venue => "venue",
            Kind::Organizer => "organizer",
        }
    }
    fn in_trash(self) -> &'static str {
        match self {
            Kind::Event => "event-is-in-trash",
            Kind::Venue => "venue-is-in-trash",
            Kind::Organizer => "organizer-is-in-trash",
        }
    }
    fn not_accessible(self) -> &'static str {
        match self {
            Kind::Event => "event-not-accessible",
            Kind::Venue => "venue-not-accessible",
            Kind::Organizer => "organizer-not-accessible",
        }
    }
}

/// The record states of the matrix: the six statuses (the trash twice, because a trashed record
/// is judged by the status it had before), and a password-protected published event.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Publish,
    Future,
    Draft,
    Pending,
    Private,
    TrashedPublish,
    TrashedDraft,
    Protected,
}

const STATES: [State; 8] = [
    State::Publish,
    State::Future,
    State::Draft,
    State::Pending,
    State::Private,
    State::TrashedPublish,
    State::TrashedDraft,
    State::Protected,
];

impl State {
    /// The status that decides access: the status before the trash, else the status itself.
    fn working(self) -> &'static str {
        match self {
            State::Publish | State::Protected | State::TrashedPublish => "publish",
            State::Future => "future",
            State::Draft | State::TrashedDraft => "draft",
            State::Pending => "pending",
            State::Private => "private",
        }
    }
    fn trashed(self) -> bool {
        matches!(self, State::TrashedPublish | State::TrashedDraft)
    }
    /// The `status` a representation shows.
    fn shown(self) -> &'static str {
        if self.trashed() {
            "trash"
        } else {
            self.working()
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            State::TrashedPublish => "trash (was publish)",
            State::TrashedDraft => "trash (was draft)",
            State::Protected => "publish + password",
            s => s.shown(),
        };
        f.write_str(s)
    }
}

/// Whether `who` may read the record.
fn can_read(who: Who, owner: Who, state: State) -> bool {
    if matches!(state, State::Publish | State::Protected) {
        return true; // effective status `publish`: everyone, anonymous included
    }
    if who == Who::Anonymous {
        return false;
    }
    if who == owner {
        return true; // any status, trash included
    }
    // Others' private: `read_private_posts`; others' draft/pending/future/trash: can_edit, which
    // for someone else's record needs `edit_others_posts`. Both are editor-level.
    who.handles_others()
}

/// Whether `who` may edit the record; deleting has the same shape with the `delete_*`
/// capabilities, which every role holds at the same level as its `edit_*` ones, so one function
/// serves.
fn can_edit(who: Who, owner: Who, state: State) -> bool {
    if who == Who::Anonymous {
        return false;
    }
    if who == owner {
        return match state.working() {
            "publish" | "future" => who.publishes(),
            _ => who.edits_posts(),
        };
    }
    who.handles_others()
}

/// The routes of the matrix for one post-kind record.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Route {
    GetById,
    GetBySlug,
    /// `GET /events/{id}?password=<the right one>`.
    GetWithPassword,
    /// `GET /events/{id}?context=edit`.
    GetEditContext,
    /// `GET /<kind>?search=<token>`: the default status set.
    ListSearch,
    /// `GET /<kind>?search=<token>&status=any`.
    ListAny,
    /// `GET /<kind>?search=<token>&status=trash`.
    ListTrash,
    /// `GET /events?include=<id>`.
    ListInclude,
    /// `GET /events?include=<id>&context=edit` (unlocks what the caller may edit).
    ListEditContext,
    /// `PATCH /<kind>/{id}` with an empty body.
    UpdateById,
    /// `PUT /<kind>/by-slug/{slug}` with an empty body.
    UpdateBySlug,
    DeleteById,
    DeleteBySlug,
}

const READ_ROUTES: [Route; 9] = [
    Route::GetById,
    Route::GetBySlug,
    Route::GetWithPassword,
    Route::GetEditContext,
    Route::ListSearch,
    Route::ListAny,
    Route::ListTrash,
    Route::ListInclude,
    Route::ListEditContext,
];

const WRITE_ROUTES: [Route; 4] = [
    Route::UpdateById,
    Route::UpdateBySlug,
    Route::DeleteById,
    Route::DeleteBySlug,
];

impl Route {
    fn events_only(self) -> bool {
        matches!(
            self,
            Route::GetWithPassword
                | Route::GetEditContext
                | Route::ListInclude
                | Route::ListEditContext
        )
    }
    fn is_list(self) -> bool {
        matches!(
            self,
            Route::ListSearch
                | Route::ListAny
                | Route::ListTrash
                | Route::ListInclude
                | Route::ListEditContext
        )
    }
    fn by_slug(self) -> bool {
        matches!(
            self,
            Route::GetBySlug | Route::UpdateBySlug | Route::DeleteBySlug
        )
    }
    fn unlocks(self, who: Who, owner: Who, state: State) -> bool {
        match self {
            Route::GetWithPassword => true,
            Route::GetEditContext | Route::ListEditContext => can_edit(who, owner, state),
            _ => false,
        }
    }
}

/// What a cell must answer.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Expect {
    /// 200 (or 201) with the record.
    Ok,
    /// The error status and code.
    Fail(u16, &'static str),
    /// A list answer (200) that holds the record, with a locked event's fields masked or not.
    Listed { masked: bool },
    /// A list answer (200) without the record.
    Unlisted,
}

/// The expected answer of one post-kind cell, from the documented rules.
fn expect_post(who: Who, route: Route, kind: Kind, owner: Who, state: State) -> Expect {
    let readable = can_read(who, owner, state);
    let editable = can_edit(who, owner, state);
    let locked = state == State::Protected && !route.unlocks(who, owner, state);
    // Anonymous callers and subscribers may only ask for `status=publish`.
    let lists_drafts = who.edits_posts();
    match route {
        // In this order: the trash (events only), can_read, the password.
        Route::GetById | Route::GetWithPassword | Route::GetEditContext => {
            if kind == Kind::Event && state.trashed() {
                Expect::Fail(403, "event-no-longer-available")
            } else if !readable {
                Expect::Fail(403, kind.not_accessible())
            } else if locked {
                Expect::Fail(403, "event-password-protected")
            } else {
                Expect::Ok
            }
        }
        // Events: only non-trashed events the caller can read resolve, else 400 on `slug`.
        // Venues and organizers: any status resolves (a trashed record by its `__trashed` slug,
        // which is the slug the matrix uses), then the read check.
        Route::GetBySlug => {
            if kind == Kind::Event && (state.trashed() || !readable) {
                Expect::Fail(400, "rest_invalid_param")
            } else if !readable {
                Expect::Fail(403, kind.not_accessible())
            } else if locked {
                Expect::Fail(403, "event-password-protected")
            } else {
                Expect::Ok
            }
        }
        // The default set is `publish` alone, or publish/future/draft/pending/private for
        // callers with `edit_posts` (also what `status=any` means); then can_read per record.
        Route::ListSearch | Route::ListInclude | Route::ListEditContext | Route::ListAny => {
            if route == Route::ListAny && !lists_drafts {
                return Expect::Fail(400, "rest_invalid_param");
            }
            let in_set = if lists_drafts {
                !state.trashed()
            } else {
                matches!(state, State::Publish | State::Protected)
            };
            // A search never finds a protected event for callers who may not edit others'
            // events, unless they wrote it (docs/api.md, "Password-protected events").
            let searchable = !matches!(route, Route::ListSearch | Route::ListAny)
                || state != State::Protected
                || who == owner
                || matches!(who, Who::Editor | Who::Administrator);
            if in_set && readable && searchable {
                Expect::Listed { masked: locked }
            } else {
                Expect::Unlisted
            }
        }
        Route::ListTrash => {
            if !lists_drafts {
                Expect::Fail(400, "rest_invalid_param")
            } else if state.trashed() && readable {
                Expect::Listed { masked: false }
            } else {
                Expect::Unlisted
            }
        }
        // Update needs can_edit on the target; the password plays no part in writes. Updating
        // a trashed record without `status` is allowed.
        Route::UpdateById | Route::UpdateBySlug => {
            if editable {
                Expect::Ok
            } else {
                who.forbidden()
            }
        }
        // can_delete, then 410 for a record already in the trash.
        Route::DeleteById | Route::DeleteBySlug => {
            if !editable {
                who.forbidden()
            } else if state.trashed() {
                Expect::Fail(410, kind.in_trash())
            } else {
                Expect::Ok
            }
        }
    }
}

/// Whether a list item is a password-protected event (shown masked: `all_day` is `null`) that
/// `who`, not an editor, did not write: no search finds it for `who`.
fn protected_by_others(item: &Value, who: Who) -> bool {
    item.get("all_day").is_some_and(Value::is_null) && item["author"] != json!(who.id().to_string())
}

/// `Allow` of a single-record route, in the route's method order: the methods whose
/// permission passes for this caller and target.
fn expected_allow(editable: bool) -> &'static str {
    if editable {
        "GET, DELETE, POST, PUT, PATCH"
    } else {
        "GET"
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// A server with the five standard users on a fresh data directory kept in memory (`/dev/shm`)
/// when the machine has one: this file makes over a thousand writes, and a disk's fsync on each
/// would dominate its run time without testing anything here (durability is tested elsewhere).
struct TestServer {
    server: Server,
    // Dropped after `server`, which kills the process first.
    _dir: tempfile::TempDir,
}

impl std::ops::Deref for TestServer {
    type Target = Server;
    fn deref(&self) -> &Server {
        &self.server
    }
}

fn start() -> TestServer {
    let shm = std::path::Path::new("/dev/shm");
    let dir = shm
        .is_dir()
        .then(|| {
            tempfile::Builder::new()
                .prefix("almanac-access")
                .tempdir_in(shm)
                .ok()
        })
        .flatten()
        .unwrap_or_else(|| tempfile::tempdir().expect("tempdir"));
    let data = dir.path().join("data");
    for u in &STANDARD_USERS {
        add_user(&data, u);
    }
    let cmd = serve_cmd(&data);
    let server = Server::start(cmd, None, "serve");
    TestServer { server, _dir: dir }
}

fn send(s: &Server, method: &str, path: &str, who: Who, body: Option<&Value>) -> Resp {
    s.send(method, path, who.user(), body)
}

/// A unique lower-case word (letters only, so that it is one search word and one slug part).
fn token(n: usize, salt: &str) -> String {
    let mut x = (n as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ salt.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
        });
    let mut s = String::from("qx");
    for _ in 0..10 {
        x ^= x >> 31;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x ^= x >> 29;
        s.push((b'a' + (x % 26) as u8) as char);
    }
    s
}

/// `YYYY-MM-DD HH:MM:SS` of now + `days`.
fn days_from_now(days: i64) -> String {
    (Utc::now() + CDur::days(days))
        .format("%Y-%m-%d %H:%M:%S")
        .to_string()
}

/// Collected cell failures, reported together at the end.
#[derive(Default)]
struct Failures {
    cells: usize,
    list: Vec<String>,
}

impl Failures {
    fn fail(&mut self, cell: &str, what: String) {
        self.list.push(format!("[{cell}] {what}"));
    }
    fn merge(parts: impl Iterator<Item = Failures>) -> Failures {
        let mut all = Failures::default();
        for p in parts {
            all.cells += p.cells;
            all.list.extend(p.list);
        }
        all
    }
    fn finish(self, what: &str) {
        assert!(
            self.list.is_empty(),
            "{} of {} {what} cells failed:\n{}",
            self.list.len(),
            self.cells,
            self.list.join("\n")
        );
    }
}

/// Short form of a response for failure messages.
fn brief(r: &Resp) -> String {
    let t = r.text();
    let t = if t.len() > 300 { &t[..300] } else { &t[..] };
    format!("{} {t}", r.status)
}

/// Checks an error answer: status, `code`, `data.status`.
fn check_error(f: &mut Failures, cell: &str, r: &Resp, status: u16, code: &str) {
    if r.status != status {
        f.fail(cell, format!("expected {status} {code}, got {}", brief(r)));
        return;
    }
    let v: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
    if v["code"] != code || v["data"]["status"] != status {
        f.fail(cell, format!("expected {status} {code}, got {}", brief(r)));
    }
}

/// A list answer: 200, `total` equal to `X-Cal-Total` and to the number of items when they fit
/// on one page. Returns the items.
fn check_list(f: &mut Failures, cell: &str, r: &Resp, key: &str) -> Option<Vec<Value>> {
    if r.status != 200 {
        f.fail(cell, format!("expected a 200 list, got {}", brief(r)));
        return None;
    }
    let v = r.json();
    let items = v[key].as_array().cloned().unwrap_or_default();
    let total = v["total"].as_i64().unwrap_or(-1);
    let header = r
        .header("x-cal-total")
        .and_then(|h| h.parse::<i64>().ok())
        .unwrap_or(-2);
    if total != header {
        f.fail(cell, format!("total {total} but X-Cal-Total {header}"));
    }
    if items.len() < 50 && total != items.len() as i64 {
        f.fail(
            cell,
            format!(
                "total {total} counts records the list does not show ({} shown)",
                items.len()
            ),
        );
    }
    Some(items)
}

// ---------------------------------------------------------------------------------------------
// Post-kind fixtures
// ---------------------------------------------------------------------------------------------

struct Record {
    kind: Kind,
    owner: Who,
    state: State,
    id: i64,
    /// The current slug (with `__trashed` for trashed records).
    slug: String,
    /// Unique word in the name/title.
    title_token: String,
    /// Unique word in the description.
    text_token: String,
    password: Option<String>,
}

impl Record {
    fn cell(&self, who: Who, route: impl fmt::Debug) -> String {
        let whose = if who == self.owner {
            "own".to_string()
        } else {
            format!("others' (owner {})", self.owner)
        };
        format!(
            "{who} | {route:?} {} | {whose} | {} | id {}",
            self.kind.collection(),
            self.state,
            self.id
        )
    }
}

/// Creates one record owned by `owner` in `state`. The owner creates it; statuses the owner may
/// not set (a contributor's publish/future/private) and the trash (DELETE) are then
/// applied by the administrator, which leaves the owner unchanged.
fn make_record(s: &Server, n: usize, kind: Kind, owner: Who, state: State) -> Record {
    let title_token = token(n, "title");
    let text_token = token(n, "text");
    let mut body = json!({
        kind.name_field(): format!("Access {title_token} {}", kind.collection()),
        "description": format!("Body {text_token} text"),
        "status": match state.working() { "future" => "publish", s => s },
    });
    if state == State::Future {
        body["date"] = json!(days_from_now(400));
    }
    let password = (state == State::Protected).then(|| format!("pw-{text_token}"));
    if kind == Kind::Event {
        body["start_date"] = json!(days_from_now(30));
        body["end_date"] = json!(days_from_now(31));
        if let Some(pw) = &password {
            body["password"] = json!(pw);
        }
    }
    let path = format!("{NS}/{}", kind.collection());
    let r = send(s, "POST", &path, owner, Some(&body));
    assert_eq!(r.status, 201, "fixture {kind:?} {state}: {}", r.describe());
    let mut v = r.json();
    let id = v["id"].as_i64().unwrap();
    let single = format!("{path}/{id}");
    if v["status"] != state.working() {
        let r = send(
            s,
            "PATCH",
            &single,
            Who::Administrator,
            Some(&json!({"status": state.working()})),
        );
        assert_eq!(r.status, 200, "fixture status: {}", r.describe());
        v = r.json();
    }
    if state.trashed() {
        let r = send(s, "DELETE", &single, Who::Administrator, None);
        assert_eq!(r.status, 200, "fixture trash: {}", r.describe());
        v = r.json();
    }
    assert_eq!(v["status"], state.shown(), "fixture {kind:?} {state}: {v}");
    assert_eq!(v["author"], json!(owner.id().to_string()), "fixture owner");
    Record {
        kind,
        owner,
        state,
        id,
        slug: v["slug"].as_str().unwrap().to_string(),
        title_token,
        text_token,
        password,
    }
}

fn make_matrix_records(s: &Server) -> Vec<Record> {
    let mut out = Vec::new();
    for kind in [Kind::Event, Kind::Venue, Kind::Organizer] {
        for owner in OWNERS {
            for state in STATES {
                // Only events can carry a password.
                if state == State::Protected && kind != Kind::Event {
                    continue;
                }
                let n = out.len();
                out.push(make_record(s, n, kind, owner, state));
            }
        }
    }
    out
}

fn path_of(rec: &Record, route: Route) -> String {
    let c = rec.kind.collection();
    let tok = &rec.title_token;
    match route {
        Route::GetById | Route::UpdateById | Route::DeleteById => {
            format!("{NS}/{c}/{}", rec.id)
        }
        Route::GetBySlug | Route::UpdateBySlug | Route::DeleteBySlug => {
            format!("{NS}/{c}/by-slug/{}", rec.slug)
        }
        Route::GetWithPassword => format!(
            "{NS}/{c}/{}?password={}",
            rec.id,
            rec.password.as_deref().unwrap_or("unused")
        ),
        Route::GetEditContext => format!("{NS}/{c}/{}?context=edit", rec.id),
        Route::ListSearch => format!("{NS}/{c}?search={tok}"),
        Route::ListAny => format!("{NS}/{c}?search={tok}&status=any"),
        Route::ListTrash => format!("{NS}/{c}?search={tok}&status=trash"),
        Route::ListInclude => format!("{NS}/{c}?include={}", rec.id),
        Route::ListEditContext => format!("{NS}/{c}?include={}&context=edit", rec.id),
    }
}

fn method_of(route: Route) -> &'static str {
    match route {
        Route::UpdateById => "PATCH",
        Route::UpdateBySlug => "PUT",
        Route::DeleteById | Route::DeleteBySlug => "DELETE",
        _ => "GET",
    }
}

/// Checks one post-kind cell's answer against its expectation.
fn check_post_cell(f: &mut Failures, who: Who, route: Route, rec: &Record, r: &Resp) {
    f.cells += 1;
    let cell = rec.cell(who, route);
    let expect = expect_post(who, route, rec.kind, rec.owner, rec.state);
    // A list's links repeat the caller's own search word, so only its items are looked at.
    let text = if route.is_list() && r.status == 200 {
        r.json()[rec.kind.collection()].to_string()
    } else {
        r.text()
    };
    // Nothing of a record's hidden text may reach a caller who does not get the record
    // (the title token also makes the slug, which the caller sent itself on slug routes).
    let hidden_text = !matches!(expect, Expect::Ok | Expect::Listed { masked: false });
    if hidden_text && text.contains(&rec.text_token) {
        f.fail(&cell, format!("the description leaks: {}", brief(r)));
    }
    let hidden_title = matches!(expect, Expect::Fail(..) | Expect::Unlisted);
    if hidden_title && !route.by_slug() && text.contains(&rec.title_token) {
        f.fail(&cell, format!("the title leaks: {}", brief(r)));
    }
    if let Some(pw) = &rec.password {
        if text.contains(pw.as_str()) {
            f.fail(&cell, "the password appears in a response".into());
        }
    }
    // Allow on the ID routes reflects this caller's rights on this record; a record the caller
    // may not read gets the header of one that does not exist, the kind-wide rights
    // (docs/api.md, "Security decisions").
    if matches!(route, Route::GetById | Route::UpdateById) {
        let editable = if can_read(who, rec.owner, rec.state) {
            can_edit(who, rec.owner, rec.state)
        } else {
            who.edits_posts()
        };
        let want = expected_allow(editable);
        if r.header("allow") != Some(want) {
            f.fail(
                &cell,
                format!("Allow {:?}, expected {want:?}", r.header("allow")),
            );
        }
    }
    // Allow on a collection: GET, plus POST for callers with `edit_posts`.
    if route.is_list() {
        let want = if who.edits_posts() {
            "GET, POST"
        } else {
            "GET"
        };
        if r.header("allow") != Some(want) {
            f.fail(
                &cell,
                format!("Allow {:?}, expected {want:?}", r.header("allow")),
            );
        }
    }
    match expect {
        Expect::Fail(status, code) => check_error(f, &cell, r, status, code),
        Expect::Ok => {
            if r.status != 200 {
                f.fail(&cell, format!("expected 200, got {}", brief(r)));
                return;
            }
            let v = r.json();
            if v["id"] != rec.id {
                f.fail(&cell, format!("answered another record: {}", brief(r)));
            }
            let want_status = if matches!(route, Route::DeleteById | Route::DeleteBySlug) {
                "trash"
            } else {
                rec.state.shown()
            };
            if v["status"] != want_status {
                f.fail(
                    &cell,
                    format!("status {} instead of {want_status}", v["status"]),
                );
            }
            if rec.kind == Kind::Event
                && rec.state == State::Protected
                && v.get("json_ld").is_some()
            {
                f.fail(&cell, "json_ld on a protected event".into());
            }
        }
        Expect::Listed { masked } => {
            let Some(items) = check_list(f, &cell, r, rec.kind.collection()) else {
                return;
            };
            let Some(item) = items.iter().find(|i| i["id"] == rec.id) else {
                f.fail(&cell, format!("record missing from the list: {}", brief(r)));
                return;
            };
            if items.len() != 1 {
                f.fail(&cell, format!("{} items instead of 1", items.len()));
            }
            if rec.kind == Kind::Event {
                let shows_text = item["description"]
                    .as_str()
                    .is_some_and(|d| d.contains(&rec.text_token));
                if masked == shows_text {
                    f.fail(
                        &cell,
                        format!(
                            "masked should be {masked}: description {}",
                            item["description"]
                        ),
                    );
                }
            }
        }
        Expect::Unlisted => {
            if let Some(items) = check_list(f, &cell, r, rec.kind.collection()) {
                if !items.is_empty() {
                    f.fail(&cell, format!("record listed: {}", brief(r)));
                }
            }
        }
    }
}

/// Puts a record that a cell trashed back in its state (the administrator restores it with its
/// status), so that later cells find the fixture as built.
fn restore(s: &Server, rec: &Record) {
    let path = format!("{NS}/{}/{}", rec.kind.collection(), rec.id);
    let r = send(
        s,
        "PATCH",
        &path,
        Who::Administrator,
        Some(&json!({"status": rec.state.working()})),
    );
    assert_eq!(r.status, 200, "restore {}: {}", rec.id, r.describe());
    let v = r.json();
    assert_eq!(v["status"], rec.state.shown(), "restored status");
    assert_eq!(v["slug"], rec.slug.as_str(), "restored slug");
}

// ---------------------------------------------------------------------------------------------
// The post-kind matrix
// ---------------------------------------------------------------------------------------------

#[test]
fn every_caller_gets_the_contract_answer_on_every_post_route_owner_and_status() {
    let s = start();
    let records = make_matrix_records(&s);

    // Reads change nothing, so they run first, over every caller and record (one thread per
    // caller).
    let reads = std::thread::scope(|scope| {
        let threads: Vec<_> = CALLERS
            .iter()
            .map(|&who| {
                let (s, records) = (&s, &records);
                scope.spawn(move || {
                    let mut f = Failures::default();
                    for rec in records {
                        for route in READ_ROUTES {
                            if route.events_only() && rec.kind != Kind::Event {
                                continue;
                            }
                            let r = send(s, method_of(route), &path_of(rec, route), who, None);
                            check_post_cell(&mut f, who, route, rec, &r);
                        }
                    }
                    f
                })
            })
            .collect();
        Failures::merge(threads.into_iter().map(|t| t.join().unwrap()))
    });

    // Writes: an empty update changes nothing that matters here; a successful delete is undone
    // at once, so every cell sees the fixture as built. Each thread owns a share of the records,
    // so a delete and its undo never overlap another thread's cells; concurrent writes also
    // share the index commits.
    let empty = json!({});
    let writes = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..4)
            .map(|part| {
                let (s, records, empty) = (&s, &records, &empty);
                scope.spawn(move || {
                    let mut f = Failures::default();
                    for rec in records.iter().skip(part).step_by(4) {
                        for who in CALLERS {
                            for route in WRITE_ROUTES {
                                let update =
                                    matches!(route, Route::UpdateById | Route::UpdateBySlug);
                                let body = update.then_some(empty);
                                let r = send(s, method_of(route), &path_of(rec, route), who, body);
                                check_post_cell(&mut f, who, route, rec, &r);
                                if !update && r.status == 200 {
                                    restore(s, rec);
                                }
                            }
                        }
                    }
                    f
                })
            })
            .collect();
        Failures::merge(threads.into_iter().map(|t| t.join().unwrap()))
    });
    Failures::merge([reads, writes].into_iter()).finish("post-kind");
}

/// Who may create, the status a create gets, and who may set `author`.
#[test]
fn creating_posts_follows_the_role_the_status_scale_back_and_the_author_rule() {
    let s = start();
    let mut f = Failures::default();
    let mut n = 0;
    for kind in [Kind::Event, Kind::Venue, Kind::Organizer] {
        let path = format!("{NS}/{}", kind.collection());
        for who in CALLERS {
            // `None` is a create without `status`.
            for requested in [
                None,
                Some("publish"),
                Some("future"),
                Some("draft"),
                Some("pending"),
                Some("private"),
            ] {
                n += 1;
                f.cells += 1;
                let mut body = json!({kind.name_field(): format!("Create {}", token(n, "create"))});
                if let Some(st) = requested {
                    body["status"] = json!(st);
                }
                if requested == Some("future") {
                    body["date"] = json!(days_from_now(400));
                }
                if kind == Kind::Event {
                    body["start_date"] = json!(days_from_now(30));
                    body["end_date"] = json!(days_from_now(31));
                }
                let cell = format!("{who} | POST /{} | status {requested:?}", kind.collection());
                let r = send(&s, "POST", &path, who, Some(&body));
                if !who.edits_posts() {
                    let Expect::Fail(st, code) = who.forbidden() else {
                        unreachable!()
                    };
                    check_error(&mut f, &cell, &r, st, code);
                    continue;
                }
                // Publishers get what they ask for (absent → publish); contributors get
                // draft when absent, `draft`/`pending` as asked, and `pending` for the rest.
                let want = match (who.publishes(), requested) {
                    (true, None) => "publish",
                    (true, Some(st)) => st,
                    (false, None) => "draft",
                    (false, Some(st @ ("draft" | "pending"))) => st,
                    (false, Some(_)) => "pending",
                };
                if r.status != 201 {
                    f.fail(&cell, format!("expected 201, got {}", brief(&r)));
                } else if r.json()["status"] != want {
                    f.fail(
                        &cell,
                        format!("status {} instead of {want}", r.json()["status"]),
                    );
                }
            }
            // Naming another user as `author` needs `edit_others_posts`.
            f.cells += 1;
            n += 1;
            let mut body = json!({kind.name_field(): format!("Create {}", token(n, "create"))});
            if kind == Kind::Event {
                body["start_date"] = json!(days_from_now(30));
                body["end_date"] = json!(days_from_now(31));
            }
            let other = if who == Who::Author {
                Who::Editor
            } else {
                Who::Author
            };
            body["author"] = json!(other.id());
            let cell = format!("{who} | POST /{} | author {other}", kind.collection());
            let r = send(&s, "POST", &path, who, Some(&body));
            if !who.edits_posts() {
                let Expect::Fail(st, code) = who.forbidden() else {
                    unreachable!()
                };
                check_error(&mut f, &cell, &r, st, code);
            } else if !who.handles_others() {
                check_error(&mut f, &cell, &r, 403, "rest_cannot_edit_others");
            } else if r.status != 201 || r.json()["author"] != json!(other.id().to_string()) {
                f.fail(
                    &cell,
                    format!("expected 201 owned by {other}, got {}", brief(&r)),
                );
            }
        }
    }
    f.finish("create");
}

// ---------------------------------------------------------------------------------------------
// Terms
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum TermKind {
    Category,
    Tag,
}

impl TermKind {
    fn collection(self) -> &'static str {
        match self {
            TermKind::Category => "categories",
            TermKind::Tag => "tags",
        }
    }
    /// Categories need `edit_posts` and `publish_posts` (author and up), tags need
    /// `edit_posts` and `manage_categories` (editor and up).
    fn may_manage(self, who: Who) -> bool {
        match self {
            TermKind::Category => who.edits_posts() && who.publishes(),
            TermKind::Tag => who.edits_posts() && who.handles_others(),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum TermRoute {
    List,
    Get,
    Create,
    Update,
    Delete,
}

/// Reads are public; writes need the management capability, failing with
/// `rest_forbidden` (401 anonymous, 403 otherwise).
fn expect_term(who: Who, route: TermRoute, kind: TermKind) -> Expect {
    match route {
        TermRoute::List | TermRoute::Get => Expect::Ok,
        _ if kind.may_manage(who) => Expect::Ok,
        _ => who.forbidden(),
    }
}

#[test]
fn term_routes_are_public_to_read_and_managed_by_the_roles_that_manage_terms() {
    let s = start();
    let mut f = Failures::default();
    for kind in [TermKind::Category, TermKind::Tag] {
        let c = kind.collection();
        let mk = |name: &str| -> i64 {
            let r = send(
                &s,
                "POST",
                &format!("{NS}/{c}"),
                Who::Administrator,
                Some(&json!({"name": name})),
            );
            assert_eq!(r.status, 201, "term fixture: {}", r.describe());
            r.json()["id"].as_i64().unwrap()
        };
        let shared = mk(&format!("Shared {c}"));
        for who in CALLERS {
            // One term per caller to delete, so that each delete cell has its own target.
            let doomed = mk(&format!("Doomed {c} {who}"));
            for route in [
                TermRoute::List,
                TermRoute::Get,
                TermRoute::Create,
                TermRoute::Update,
                TermRoute::Delete,
            ] {
                f.cells += 1;
                let cell = format!("{who} | {route:?} /{c}");
                let (method, path, body) = match route {
                    TermRoute::List => ("GET", format!("{NS}/{c}?hide_empty=false"), None),
                    TermRoute::Get => ("GET", format!("{NS}/{c}/{shared}"), None),
                    TermRoute::Create => (
                        "POST",
                        format!("{NS}/{c}"),
                        Some(json!({"name": format!("New {c} by {who}")})),
                    ),
                    TermRoute::Update => (
                        "PATCH",
                        format!("{NS}/{c}/{shared}"),
                        Some(json!({"description": format!("Changed by {who}")})),
                    ),
                    TermRoute::Delete => ("DELETE", format!("{NS}/{c}/{doomed}"), None),
                };
                let r = send(&s, method, &path, who, body.as_ref());
                let manage = kind.may_manage(who);
                // Allow and `targetHints.allow` list what this caller may use.
                if matches!(route, TermRoute::Get | TermRoute::Update) {
                    let want = if manage {
                        "GET, POST, PUT, PATCH, DELETE"
                    } else {
                        "GET"
                    };
                    if r.header("allow") != Some(want) {
                        f.fail(
                            &cell,
                            format!("Allow {:?}, expected {want:?}", r.header("allow")),
                        );
                    }
                    if r.status == 200 {
                        let hints = r.json()["_links"]["self"][0]["targetHints"]["allow"].clone();
                        let want: Vec<&str> = want.split(", ").collect();
                        if hints != json!(want) {
                            f.fail(
                                &cell,
                                format!("targetHints.allow {hints}, expected {want:?}"),
                            );
                        }
                    }
                }
                if route == TermRoute::List {
                    let want = if manage { "GET, POST" } else { "GET" };
                    if r.header("allow") != Some(want) {
                        f.fail(
                            &cell,
                            format!("Allow {:?}, expected {want:?}", r.header("allow")),
                        );
                    }
                }
                match expect_term(who, route, kind) {
                    Expect::Fail(st, code) => check_error(&mut f, &cell, &r, st, code),
                    _ => {
                        let want = if route == TermRoute::Create { 201 } else { 200 };
                        if r.status != want {
                            f.fail(&cell, format!("expected {want}, got {}", brief(&r)));
                        }
                    }
                }
            }
        }
    }
    f.finish("term");
}

// ---------------------------------------------------------------------------------------------
// Leaks
// ---------------------------------------------------------------------------------------------

/// The statuses a record can have that hide it from anonymous callers, with the one that
/// does not, for comparison. All leak fixtures are the administrator's, so that no other caller
/// owns them.
const HIDDEN: [State; 5] = [
    State::Draft,
    State::Pending,
    State::Private,
    State::Future,
    State::TrashedPublish,
];

struct Leaks<'a> {
    s: &'a Server,
    f: Failures,
    /// The protected event's password, which no response may carry.
    password: String,
}

impl Leaks<'_> {
    fn get(&mut self, who: Who, path: &str) -> Resp {
        let r = send(self.s, "GET", path, who, None);
        if r.text().contains(&self.password) {
            self.f.fail(
                &format!("{who} | GET {path}"),
                "the event password appears".into(),
            );
        }
        r
    }

    /// GET of a list that must hold exactly `want` (IDs, in any order), with matching totals.
    fn list_is(&mut self, who: Who, path: &str, key: &str, want: &[i64], why: &str) {
        self.f.cells += 1;
        let cell = format!("{who} | GET {path} | {why}");
        let r = self.get(who, path);
        let Some(items) = check_list(&mut self.f, &cell, &r, key) else {
            return;
        };
        let mut got: Vec<i64> = items.iter().filter_map(|i| i["id"].as_i64()).collect();
        got.sort_unstable();
        let mut want = want.to_vec();
        want.sort_unstable();
        if got != want {
            self.f
                .fail(&cell, format!("IDs {got:?}, expected {want:?}"));
        }
    }

    /// A GET that must fail with `status`/`code` and show none of `secrets`.
    fn refused(&mut self, who: Who, path: &str, status: u16, code: &str, secrets: &[&str]) {
        self.f.cells += 1;
        let cell = format!("{who} | GET {path}");
        let r = self.get(who, path);
        check_error(&mut self.f, &cell, &r, status, code);
        for sec in secrets {
            if r.text().contains(sec) {
                self.f.fail(&cell, format!("{sec} leaks: {}", brief(&r)));
            }
        }
    }
}

fn create(s: &Server, who: Who, kind: &str, body: Value) -> Value {
    let r = send(s, "POST", &format!("{NS}/{kind}"), who, Some(&body));
    assert_eq!(r.status, 201, "fixture {kind} {body}: {}", r.describe());
    r.json()
}

fn id(v: &Value) -> i64 {
    v["id"].as_i64().unwrap()
}

/// Creates an administrator's venue or organizer in `state`, named after `title_token` and
/// described with `text_token`.
fn linked(s: &Server, kind: Kind, state: State, title_token: &str, text_token: &str) -> Value {
    let mut body = json!({
        kind.name_field(): format!("Place {title_token}"),
        "description": format!("About {text_token}"),
        "status": match state.working() { "future" => "publish", s => s },
    });
    if state == State::Future {
        body["date"] = json!(days_from_now(400));
    }
    let mut v = create(s, Who::Administrator, kind.collection(), body);
    if state.trashed() {
        let path = format!("{NS}/{}/{}", kind.collection(), id(&v));
        v = send(s, "DELETE", &path, Who::Administrator, None).json();
    }
    assert_eq!(v["status"], state.shown(), "fixture {kind:?} {state}");
    v
}

#[test]
fn hidden_records_never_leak_through_lists_search_slugs_filters_counts_or_masks() {
    let s = start();
    let start = days_from_now(30);
    let end = days_from_now(31);
    let tok = |n: usize, what: &str| token(1000 + n, what);

    // Terms: `mixed` is carried by the public, the protected and every hidden event; `hidden`
    // only by hidden events.
    let term = |c: &str, name: &str| id(&create(&s, Who::Administrator, c, json!({"name": name})));
    let cat_mixed = term("categories", "Mixed category");
    let cat_hidden = term("categories", "Hidden category");
    let tag_mixed = term("tags", "Mixed tag");
    let tag_hidden = term("tags", "Hidden tag");

    // Venues and organizers: one public of each that no event uses, one hidden of each per
    // hidden status, and one public of each per event below ("for_*"), the event's only links.
    let v_free = linked(&s, Kind::Venue, State::Publish, &tok(1, "t"), &tok(1, "d"));
    let o_free = linked(
        &s,
        Kind::Organizer,
        State::Publish,
        &tok(2, "t"),
        &tok(2, "d"),
    );
    let mut hidden_linked: Vec<(Kind, State, Value, String, String)> = Vec::new();
    for (i, state) in HIDDEN.iter().enumerate() {
        for kind in [Kind::Venue, Kind::Organizer] {
            let (t, d) = (tok(10 + 2 * i, "t"), tok(11 + 2 * i, "d"));
            let v = linked(&s, kind, *state, &t, &d);
            hidden_linked.push((kind, *state, v, t, d));
        }
    }
    let hidden_venue = |st: State| {
        let (_, _, v, _, _) = hidden_linked
            .iter()
            .find(|(k, s2, ..)| *k == Kind::Venue && *s2 == st)
            .unwrap();
        id(v)
    };
    let hidden_organizer = |st: State| {
        let (_, _, v, _, _) = hidden_linked
            .iter()
            .find(|(k, s2, ..)| *k == Kind::Organizer && *s2 == st)
            .unwrap();
        id(v)
    };

    // Events.
    let password = format!("pw-{}", tok(3, "pw"));
    let mk_event = |n: usize, state: State, venue: i64, organizers: Vec<i64>, extra: Value| {
        let mut body = json!({
            "title": format!("Show {}", tok(100 + n, "t")),
            "description": format!("Programme {}", tok(100 + n, "d")),
            "start_date": start, "end_date": end,
            "status": match state.working() { "future" => "publish", s => s },
            "venue": venue, "organizer": organizers,
            "categories": [cat_mixed], "tags": [tag_mixed],
        });
        if state == State::Future {
            body["date"] = json!(days_from_now(400));
        }
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        let mut v = create(&s, Who::Administrator, "events", body);
        if state.trashed() {
            v = send(
                &s,
                "DELETE",
                &format!("{NS}/events/{}", id(&v)),
                Who::Administrator,
                None,
            )
            .json();
        }
        assert_eq!(v["status"], state.shown(), "event fixture {state}");
        v
    };
    let v_for_pub = linked(
        &s,
        Kind::Venue,
        State::Publish,
        &tok(30, "t"),
        &tok(30, "d"),
    );
    let o_for_pub = linked(
        &s,
        Kind::Organizer,
        State::Publish,
        &tok(31, "t"),
        &tok(31, "d"),
    );
    // The public event links a hidden (draft) venue and a public and a hidden organizer.
    let e_pub = mk_event(
        0,
        State::Publish,
        hidden_venue(State::Draft),
        vec![id(&o_for_pub), hidden_organizer(State::Draft)],
        json!({}),
    );
    let v_for_prot = linked(
        &s,
        Kind::Venue,
        State::Publish,
        &tok(32, "t"),
        &tok(32, "d"),
    );
    let o_for_prot = linked(
        &s,
        Kind::Organizer,
        State::Publish,
        &tok(33, "t"),
        &tok(33, "d"),
    );
    let e_prot = mk_event(
        1,
        State::Protected,
        id(&v_for_prot),
        vec![id(&o_for_prot)],
        json!({"password": password, "excerpt": "Secret excerpt", "cost": "25",
               "website": "https://secret.example.org/", "featured": true}),
    );
    let mut hidden_events = Vec::new(); // (state, event, its venue, its organizer)
    for (i, state) in HIDDEN.iter().enumerate() {
        let v = linked(
            &s,
            Kind::Venue,
            State::Publish,
            &tok(40 + i, "t"),
            &tok(40 + i, "d"),
        );
        let o = linked(
            &s,
            Kind::Organizer,
            State::Publish,
            &tok(50 + i, "t"),
            &tok(50 + i, "d"),
        );
        let e = mk_event(
            2 + i,
            *state,
            id(&v),
            vec![id(&o), id(&o_for_pub)],
            json!({"categories": [cat_mixed, cat_hidden], "tags": [tag_mixed, tag_hidden]}),
        );
        hidden_events.push((*state, e, id(&v), id(&o)));
    }
    // A contributor's own draft: the contributor sees it, nobody else below the editor does.
    let e_contrib = id(&create(
        &s,
        Who::Contributor,
        "events",
        json!({"title": "Contributor draft", "start_date": start, "end_date": end}),
    ));
    // An unreadable translation of the public event (for `translations`).
    let e_es_draft = id(&create(
        &s,
        Who::Administrator,
        "events",
        json!({"title": "Borrador", "start_date": start, "end_date": end, "status": "draft",
               "translation_language": "es", "translation_of": id(&e_pub)}),
    ));

    let mut l = Leaks {
        s: &s,
        f: Failures::default(),
        password: password.clone(),
    };
    let non_editors = [
        Who::Anonymous,
        Who::Subscriber,
        Who::Contributor,
        Who::Author,
    ];
    let hidden_event_ids: Vec<i64> = hidden_events.iter().map(|(_, e, ..)| id(e)).collect();
    let for_venues: Vec<i64> = hidden_events.iter().map(|(_, _, v, _)| *v).collect();
    let for_organizers: Vec<i64> = hidden_events.iter().map(|(.., o)| *o).collect();

    // 1. Plain lists: exactly the readable records, totals included.
    for who in CALLERS {
        let mut events = vec![id(&e_pub), id(&e_prot)];
        if who == Who::Contributor || who.handles_others() {
            events.push(e_contrib);
        }
        if who.handles_others() {
            // The editor's default set: everything but the trash.
            events.extend(
                hidden_events
                    .iter()
                    .filter(|(st, ..)| !st.trashed())
                    .map(|(_, e, ..)| id(e)),
            );
        }
        l.list_is(
            who,
            &format!("{NS}/events?per_page=50"),
            "events",
            &events,
            "default list",
        );
        for kind in [Kind::Venue, Kind::Organizer] {
            let (free, for_pub, for_prot, for_hidden) = match kind {
                Kind::Venue => (&v_free, &v_for_pub, &v_for_prot, &for_venues),
                _ => (&o_free, &o_for_pub, &o_for_prot, &for_organizers),
            };
            let mut want = vec![id(free), id(for_pub), id(for_prot)];
            want.extend(for_hidden.iter());
            if who.handles_others() {
                want.extend(
                    hidden_linked
                        .iter()
                        .filter(|(k, st, ..)| *k == kind && !st.trashed())
                        .map(|(.., v, _, _)| id(v)),
                );
            }
            let path = format!("{NS}/{}?per_page=50", kind.collection());
            l.list_is(who, &path, kind.collection(), &want, "default list");
        }
    }

    // 2. `status=`: callers without `edit_posts` may not ask; the others see none of the
    //    administrator's hidden records, whatever status they ask for.
    for who in non_editors {
        for kind in [Kind::Event, Kind::Venue, Kind::Organizer] {
            let c = kind.collection();
            for st in [
                "draft",
                "pending",
                "private",
                "future",
                "trash",
                "any",
                "publish,draft",
            ] {
                let path = format!("{NS}/{c}?status={st}&per_page=50");
                if who.edits_posts() {
                    let own: Vec<i64> = if kind == Kind::Event
                        && who == Who::Contributor
                        && ["draft", "any", "publish,draft"].contains(&st)
                    {
                        vec![e_contrib]
                    } else {
                        vec![]
                    };
                    let mut want = own;
                    if st == "any" || st == "publish,draft" {
                        // Only the public records come on top.
                        let r = l.get(Who::Anonymous, &format!("{NS}/{c}?per_page=50"));
                        want.extend(r.json()[c].as_array().unwrap().iter().map(id));
                    }
                    l.list_is(who, &path, c, &want, "status filter");
                } else {
                    l.refused(who, &path, 400, "rest_invalid_param", &[]);
                }
            }
        }
    }

    // 3. Search only narrows what the caller may see: neither the title word nor
    //    the description word of a hidden record finds it, under any status the caller may ask.
    let mut searchable: Vec<(Kind, State, String, String)> = hidden_linked
        .iter()
        .map(|(k, st, _, t, d)| (*k, *st, t.clone(), d.clone()))
        .collect();
    for (i, (state, ..)) in hidden_events.iter().enumerate() {
        searchable.push((Kind::Event, *state, tok(102 + i, "t"), tok(102 + i, "d")));
    }
    for (kind, state, t, d) in &searchable {
        let c = kind.collection();
        for word in [t, d] {
            for who in non_editors {
                let statuses: &[&str] = if who.edits_posts() {
                    &[
                        "",
                        "&status=any",
                        "&status=trash",
                        "&status=draft,pending,private,future,trash",
                    ]
                } else {
                    &[""]
                };
                for st in statuses {
                    let path = format!("{NS}/{c}?search={word}{st}");
                    l.list_is(
                        who,
                        &path,
                        c,
                        &[],
                        &format!("search for a hidden {state} record"),
                    );
                }
            }
            // The editor does find them (so the searches above test something).
            let st = if state.trashed() { "trash" } else { "any" };
            let path = format!("{NS}/{c}?search={word}&status={st}");
            let r = l.get(Who::Editor, &path);
            if r.json()["total"] != 1 {
                l.f.fail(
                    &format!("editor | GET {path}"),
                    format!("expected 1 match: {}", brief(&r)),
                );
            }
        }
    }

    // 4. `include=`: IDs that are not visible events are simply not returned.
    let mut all: Vec<i64> = hidden_event_ids.clone();
    all.push(id(&e_pub));
    all.push(e_es_draft);
    let include = all
        .iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",");
    for who in non_editors {
        let path = format!("{NS}/events?include={include}&status=publish");
        l.list_is(who, &path, "events", &[id(&e_pub)], "include of hidden IDs");
    }

    // 5. Slug lookups.
    for (state, e, ..) in &hidden_events {
        let slug = e["slug"].as_str().unwrap();
        let text = tok(102 + HIDDEN.iter().position(|s2| s2 == state).unwrap(), "d");
        for who in non_editors {
            let path = format!("{NS}/events/by-slug/{slug}");
            l.refused(who, &path, 400, "rest_invalid_param", &[&text]);
            let path = format!("{NS}/events/{}", id(e));
            let code = if state.trashed() {
                "event-no-longer-available"
            } else {
                "event-not-accessible"
            };
            l.refused(who, &path, 403, code, &[&text]);
        }
        if state.trashed() {
            // The former slug is free: nobody finds the trashed event by it.
            let former = slug.trim_end_matches("__trashed");
            l.refused(
                Who::Editor,
                &format!("{NS}/events/by-slug/{former}"),
                400,
                "rest_invalid_param",
                &[&text],
            );
        }
    }
    for (kind, state, v, _, d) in &hidden_linked {
        let c = kind.collection();
        let slug = v["slug"].as_str().unwrap();
        for who in non_editors {
            let path = format!("{NS}/{c}/by-slug/{slug}");
            l.refused(who, &path, 403, kind.not_accessible(), &[d]);
            let path = format!("{NS}/{c}/{}", id(v));
            l.refused(who, &path, 403, kind.not_accessible(), &[d]);
        }
        if state.trashed() {
            let former = slug.trim_end_matches("__trashed");
            let path = format!("{NS}/{c}/by-slug/{former}");
            l.refused(Who::Editor, &path, 400, "rest_invalid_param", &[d]);
        }
    }

    // 6. Term counts: only `publish` events count — the public and the protected
    //    one — whoever asks; a term carried only by hidden events counts 0 and is left out of
    //    the default list (hide_empty).
    for who in [Who::Anonymous, Who::Author, Who::Administrator] {
        for (c, mixed, hidden) in [
            ("categories", cat_mixed, cat_hidden),
            ("tags", tag_mixed, tag_hidden),
        ] {
            for (term, want) in [(mixed, 2), (hidden, 0)] {
                l.f.cells += 1;
                let path = format!("{NS}/{c}/{term}");
                let r = l.get(who, &path);
                if r.status != 200 || r.json()["count"] != want {
                    l.f.fail(
                        &format!("{who} | GET {path}"),
                        format!("count should be {want}: {}", brief(&r)),
                    );
                }
            }
            l.list_is(
                who,
                &format!("{NS}/{c}"),
                c,
                &[mixed],
                "hide_empty drops terms of hidden events",
            );
            l.f.cells += 1;
            let path = format!("{NS}/{c}?hide_empty=false");
            let r = l.get(who, &path);
            for item in r.json()[c].as_array().cloned().unwrap_or_default() {
                let want = if item["id"] == mixed { 2 } else { 0 };
                if item["count"] != want {
                    l.f.fail(
                        &format!("{who} | GET {path}"),
                        format!("count should be {want}: {item}"),
                    );
                }
            }
        }
        // The terms embedded in an event carry the same count.
        l.f.cells += 1;
        let path = format!("{NS}/events/{}", id(&e_pub));
        let v = l.get(who, &path).json();
        for key in ["categories", "tags"] {
            if v[key][0]["count"] != 2 {
                l.f.fail(
                    &format!("{who} | GET {path}"),
                    format!("embedded {key} count: {}", v[key]),
                );
            }
        }
    }

    // 7. Venue and organizer filters and the event list's `venue` and `organizer` filters:
    //    hidden records stay hidden behind every filter.
    let d = hidden_venue(State::Draft);
    let od = hidden_organizer(State::Draft);
    for who in CALLERS {
        let editor = who.handles_others();
        let path = format!("{NS}/venues?event={}", id(&e_pub));
        let want: Vec<i64> = if editor { vec![d] } else { vec![] };
        l.list_is(
            who,
            &path,
            "venues",
            &want,
            "the public event's draft venue",
        );
        let path = format!("{NS}/organizers?event={}", id(&e_pub));
        let want: Vec<i64> = if editor {
            vec![id(&o_for_pub), od]
        } else {
            vec![id(&o_for_pub)]
        };
        l.list_is(
            who,
            &path,
            "organizers",
            &want,
            "the public event's organizers",
        );
        // The public organizer is also linked to every hidden event.
        let path = format!("{NS}/events?organizer={}&status=publish", id(&o_for_pub));
        l.list_is(
            who,
            &path,
            "events",
            &[id(&e_pub)],
            "events of a shared organizer",
        );
        let path = format!("{NS}/events?venue={d}&status=publish");
        l.list_is(
            who,
            &path,
            "events",
            &[id(&e_pub)],
            "events of a draft venue",
        );
        for (state, e, v, _) in &hidden_events {
            let path = format!("{NS}/events?venue={v}");
            let want: Vec<i64> = if editor && !state.trashed() {
                vec![id(e)]
            } else {
                vec![]
            };
            l.list_is(
                who,
                &path,
                "events",
                &want,
                &format!("events of the {state} event's venue"),
            );
        }
        // has_events counts publish, future and private events whoever asks; the records it
        // lists are still only the visible ones.
        let counts = |st: &State| matches!(st, State::Future | State::Private);
        let mut with: Vec<i64> = vec![id(&v_for_pub), id(&v_for_prot)];
        with.extend(
            hidden_events
                .iter()
                .filter(|(st, ..)| counts(st))
                .map(|(_, _, v, _)| *v),
        );
        let mut without: Vec<i64> = vec![id(&v_free)];
        without.extend(
            hidden_events
                .iter()
                .filter(|(st, ..)| !counts(st))
                .map(|(_, _, v, _)| *v),
        );
        if editor {
            // The draft venue has the public event; the other hidden venues have none.
            with.push(d);
            without.extend(
                hidden_linked
                    .iter()
                    .filter(|(k, st, ..)| *k == Kind::Venue && *st != State::Draft && !st.trashed())
                    .map(|(_, _, v, _, _)| id(v)),
            );
        }
        // v_for_pub has no event: the public event uses the draft venue.
        with.retain(|v| *v != id(&v_for_pub));
        without.push(id(&v_for_pub));
        l.list_is(
            who,
            &format!("{NS}/venues?has_events=true&per_page=50"),
            "venues",
            &with,
            "has_events=true",
        );
        l.list_is(
            who,
            &format!("{NS}/venues?has_events=false&per_page=50"),
            "venues",
            &without,
            "has_events=false",
        );
        // only_with_upcoming counts upcoming events whose status is in the caller's status set:
        // `publish` alone below contributor. For contributors and authors S holds draft, pending
        // and private too, and docs/api.md says "among the statuses the list shows" without the
        // per-record read rule (unlike the lists themselves), so other users' hidden events may
        // or may not count: that cell is left out until that is decided.
        if !who.edits_posts() || editor {
            let mut want: Vec<i64> = vec![id(&v_for_prot)];
            if editor {
                want.push(d);
                want.extend(
                    hidden_events
                        .iter()
                        .filter(|(st, ..)| !st.trashed())
                        .map(|(_, _, v, _)| *v),
                );
            }
            l.list_is(
                who,
                &format!("{NS}/venues?only_with_upcoming=true&per_page=50"),
                "venues",
                &want,
                "only_with_upcoming",
            );
        }
    }

    // 8. The protected event.
    let prot = id(&e_prot);
    let masked = json!({
        "description": "", "excerpt": "", "image": false, "all_day": null, "cost": "",
        "cost_details": {"currency_symbol": "", "currency_position": "", "currency_code": "", "values": []},
        "website": "", "show_map": null, "show_map_link": null, "hide_from_listings": null,
        "sticky": null, "featured": null, "categories": [], "tags": [], "venue": [],
        "organizer": [], "custom_fields": [], "ticketed": null,
    });
    let list_item = |l: &mut Leaks, who: Who, query: &str| -> Value {
        let r = l.get(who, &format!("{NS}/events?include={prot}{query}"));
        r.json()["events"][0].clone()
    };
    for (who, query, unlocked) in [
        (Who::Anonymous, "", false),
        (Who::Anonymous, "&password=wrong", false),
        (
            Who::Anonymous,
            &format!("&password={}", password.to_uppercase()) as &str,
            false,
        ),
        (Who::Administrator, "", false),
        (Who::Author, "&context=edit", false),
        (Who::Subscriber, "&context=edit", false),
        (
            Who::Anonymous,
            &format!("&password={password}") as &str,
            true,
        ),
        (Who::Administrator, "&context=edit", true),
        (Who::Editor, "&context=edit", true),
    ] {
        l.f.cells += 1;
        let cell = format!("{who} | GET /events?include={prot}{query}");
        let item = list_item(&mut l, who, query);
        if item["id"] != prot {
            l.f.fail(&cell, format!("protected event not listed: {item}"));
            continue;
        }
        if item["title"] != e_prot["title"] || item["slug"] != e_prot["slug"] {
            l.f.fail(&cell, "title and slug stay visible".into());
        }
        if unlocked {
            let shows = item["description"]
                .as_str()
                .is_some_and(|d| d.contains(&tok(101, "d")))
                && item["excerpt"] != ""
                && item["cost"] != ""
                && item["featured"] == true
                && item["venue"]["id"] == id(&v_for_prot)
                && item["organizer"][0]["id"] == id(&o_for_prot)
                && item["categories"][0]["id"] == cat_mixed;
            if !shows {
                l.f.fail(&cell, format!("the unlocked item is masked: {item}"));
            }
        } else {
            for (k, v) in masked.as_object().unwrap() {
                if &item[k] != v {
                    l.f.fail(&cell, format!("{k} = {}, masked form {v}", item[k]));
                }
            }
        }
        let single = format!("{NS}/events/{prot}?{}", query.trim_start_matches('&'));
        if unlocked {
            let r = l.get(who, &single);
            if r.status != 200 || r.json().get("json_ld").is_some() {
                l.f.fail(
                    &cell,
                    format!("single GET should be 200 without json_ld: {}", brief(&r)),
                );
            }
        } else {
            let text = tok(101, "d");
            l.refused(
                who,
                &single,
                403,
                "event-password-protected",
                &[&text, "Secret excerpt"],
            );
        }
    }

    // 9. `translations` lists only the members the caller may read.
    for who in CALLERS {
        l.f.cells += 1;
        let path = format!("{NS}/events/{}", id(&e_pub));
        let v = l.get(who, &path).json();
        let want = if who.handles_others() {
            json!({"en": id(&e_pub), "es": e_es_draft})
        } else {
            json!({"en": id(&e_pub)})
        };
        if v["translations"] != want {
            l.f.fail(
                &format!("{who} | GET {path}"),
                format!("translations {}", v["translations"]),
            );
        }
    }

    // 10. Other ways into the same lists: relevance order, phrases, exclusion-only searches,
    //     HEAD, and `translation_language` on ID routes (the resolved member goes through the
    //     same visibility rules).
    for (kind, state, t, d) in &searchable {
        let c = kind.collection();
        for who in [Who::Anonymous, Who::Author] {
            for q in [
                format!("search={t}&orderby=relevance"),
                format!("search=%22{d}%22"),
                format!("search={t}+{d}"),
            ] {
                let path = format!("{NS}/{c}?{q}");
                l.list_is(
                    who,
                    &path,
                    c,
                    &[],
                    &format!("search for a hidden {state} record"),
                );
            }
        }
    }
    for who in [Who::Anonymous, Who::Contributor] {
        // A query of exclusions only filters by exclusion alone: the visible records minus none.
        for kind in [Kind::Event, Kind::Venue, Kind::Organizer] {
            let c = kind.collection();
            let r = l.get(who, &format!("{NS}/{c}?per_page=50"));
            // ... except protected events, which no search finds for these callers unless
            // they wrote them.
            let want: Vec<i64> = r.json()[c]
                .as_array()
                .unwrap()
                .iter()
                .filter(|e| !protected_by_others(e, who))
                .map(id)
                .collect();
            let path = format!("{NS}/{c}?per_page=50&search=-qqqqqqqq");
            l.list_is(who, &path, c, &want, "exclusion-only search");
        }
        l.f.cells += 1;
        let path = format!("{NS}/events?per_page=50");
        let head = send(&s, "HEAD", &path, who, None);
        let get = l.get(who, &path);
        if head.header("x-cal-total") != get.header("x-cal-total") {
            l.f.fail(
                &format!("{who} | HEAD {path}"),
                "HEAD totals differ from GET".into(),
            );
        }
    }
    for who in non_editors {
        let path = format!("{NS}/events/{}?translation_language=es", id(&e_pub));
        l.refused(who, &path, 403, "event-not-accessible", &["Borrador"]);
    }
    l.f.cells += 1;
    let path = format!("{NS}/events/{}?translation_language=es", id(&e_pub));
    if l.get(Who::Editor, &path).json()["id"] != e_es_draft {
        l.f.fail(&format!("editor | GET {path}"), "the es member".into());
    }

    // 11. Conditional GETs: a 304 only replaces an answer that would be 200,
    //     so neither `*` nor the editor's ETag turns a refusal into "not modified".
    for (kind, path) in [
        (Kind::Event, format!("{NS}/events/{}", hidden_event_ids[0])),
        (
            Kind::Venue,
            format!("{NS}/venues/{}", hidden_venue(State::Draft)),
        ),
        (
            Kind::Organizer,
            format!("{NS}/organizers/{}", hidden_organizer(State::Draft)),
        ),
    ] {
        let editor = send(&s, "GET", &path, Who::Editor, None);
        let etag = editor.header("etag").unwrap_or("W/\"0\"").to_string();
        for tag in ["*", etag.as_str()] {
            for who in [Who::Anonymous, Who::Author] {
                l.f.cells += 1;
                let cell = format!("{who} | GET {path} | If-None-Match {tag}");
                let mut req = s.req("GET", &path).header("If-None-Match", tag);
                if let Some(u) = who.user() {
                    req = req.user(u);
                }
                let r = req.send();
                check_error(&mut l.f, &cell, &r, 403, kind.not_accessible());
            }
        }
    }

    // 12. Writes that look records up must not find what the caller may not read: the
    //     venue/organizer duplicate check, inline venues in event writes (same check), and
    //     `translation_of`.
    for (kind, state, v, t, d) in &hidden_linked {
        if state.trashed() {
            continue; // trashed records take no part in the duplicate check anyway
        }
        let c = kind.collection();
        let name = format!("Place {t}");
        for who in [Who::Contributor, Who::Author] {
            l.f.cells += 1;
            let cell = format!("{who} | POST /{c} named like a hidden {state} record");
            let r = send(
                &s,
                "POST",
                &format!("{NS}/{c}"),
                who,
                Some(&json!({kind.name_field(): name})),
            );
            if r.status != 201 || r.json()["id"] == v["id"] || r.text().contains(d.as_str()) {
                l.f.fail(&cell, format!("expected a new record: {}", brief(&r)));
            }
        }
        if *kind == Kind::Venue {
            l.f.cells += 1;
            let cell = format!(
                "author | POST /events with an inline venue named like a hidden {state} venue"
            );
            let body = json!({"title": "Inline", "start_date": start, "end_date": end,
                              "venue": {"venue": name}});
            let r = send(
                &s,
                "POST",
                &format!("{NS}/events"),
                Who::Author,
                Some(&body),
            );
            if r.status != 201
                || r.json()["venue"]["id"] == v["id"]
                || r.text().contains(d.as_str())
            {
                l.f.fail(&cell, format!("expected a new venue: {}", brief(&r)));
            }
        }
    }
    for (_, e, ..) in &hidden_events {
        for who in [Who::Contributor, Who::Author] {
            l.f.cells += 1;
            let cell = format!(
                "{who} | POST /events translation_of a hidden {}",
                e["status"]
            );
            let body = json!({"title": "Traduccion", "start_date": start, "end_date": end,
                              "translation_language": "es", "translation_of": id(e)});
            let r = send(&s, "POST", &format!("{NS}/events"), who, Some(&body));
            check_error(&mut l.f, &cell, &r, 400, "rest_invalid_param");
        }
    }

    // 13. Event filters on terms carried by hidden events: only the visible events come back.
    for who in non_editors {
        for q in [
            format!("categories={cat_hidden}"),
            format!("tags={tag_hidden}"),
        ] {
            let path = format!("{NS}/events?{q}");
            l.list_is(
                who,
                &path,
                "events",
                &[],
                "a term carried only by hidden events",
            );
        }
        let path = format!("{NS}/events?categories={cat_mixed}&per_page=50");
        l.list_is(
            who,
            &path,
            "events",
            &[id(&e_pub), id(&e_prot)],
            "a term of every event",
        );
    }

    // That no word of a locked event's masked description finds it is checked in
    // tests/security.rs (docs/api.md, "Password-protected events").

    // 14. The same for a venue's translation (only readable members are listed).
    let v_es_draft = id(&create(
        &s,
        Who::Administrator,
        "venues",
        json!({"venue": "Lugar borrador", "status": "draft",
               "translation_language": "es", "translation_of": id(&v_free)}),
    ));
    for who in CALLERS {
        l.f.cells += 1;
        let path = format!("{NS}/venues/{}", id(&v_free));
        let v = l.get(who, &path).json();
        let want = if who.handles_others() {
            json!({"en": id(&v_free), "es": v_es_draft})
        } else {
            json!({"en": id(&v_free)})
        };
        if v["translations"] != want {
            l.f.fail(
                &format!("{who} | GET {path}"),
                format!("translations {}", v["translations"]),
            );
        }
        if !who.handles_others() {
            let path = format!("{path}?translation_language=es");
            l.refused(who, &path, 403, "venue-not-accessible", &["borrador"]);
        }
    }
    l.f.finish("leak");
}

// ---------------------------------------------------------------------------------------------
// Missing and foreign targets
// ---------------------------------------------------------------------------------------------

/// What every caller gets (docs/api.md, "Errors") for an ID that names nothing, an ID of
/// another kind, and an unknown slug. Event routes check permission before existence (401/403
/// first); venue, organizer and term routes resolve the target during validation (400 for
/// everyone).
#[test]
fn missing_and_foreign_targets_answer_per_the_quick_reference_for_every_caller() {
    let s = start();
    let mk = |c: &str, body: Value| -> i64 {
        let r = send(
            &s,
            "POST",
            &format!("{NS}/{c}"),
            Who::Administrator,
            Some(&body),
        );
        assert_eq!(r.status, 201, "fixture: {}", r.describe());
        r.json()["id"].as_i64().unwrap()
    };
    let venue = mk("venues", json!({"venue": "A venue"}));
    let organizer = mk("organizers", json!({"organizer": "An organizer"}));
    let category = mk("categories", json!({"name": "A category"}));
    let tag = mk("tags", json!({"name": "A tag"}));
    let unknown = 987_654;
    let mut f = Failures::default();
    let empty = json!({});
    for who in CALLERS {
        let permitted = who.edits_posts();
        let gate = |then: Expect| if permitted { then } else { who.forbidden() };
        let bad = Expect::Fail(400, "rest_invalid_param");
        let mut cells: Vec<(&str, String, Expect)> = vec![
            (
                "GET",
                format!("events/{unknown}"),
                Expect::Fail(404, "rest-event-not-found"),
            ),
            (
                "GET",
                format!("events/{venue}"),
                Expect::Fail(400, "rest-invalid-event-id"),
            ),
            ("GET", "events/by-slug/no-such-event".into(), bad),
            (
                "PATCH",
                format!("events/{unknown}"),
                gate(Expect::Fail(404, "rest-event-not-found")),
            ),
            (
                "PATCH",
                format!("events/{venue}"),
                gate(Expect::Fail(400, "rest-invalid-event-id")),
            ),
            (
                "PUT",
                "events/by-slug/no-such-event".into(),
                gate(Expect::Fail(404, "rest-event-not-found")),
            ),
            (
                "DELETE",
                format!("events/{unknown}"),
                gate(Expect::Fail(404, "rest-event-not-found")),
            ),
            (
                "DELETE",
                format!("events/{organizer}"),
                gate(Expect::Fail(400, "rest-invalid-event-id")),
            ),
            ("DELETE", "events/by-slug/no-such-event".into(), bad),
        ];
        for (c, foreign) in [("venues", organizer), ("organizers", venue)] {
            for method in ["GET", "PATCH", "DELETE"] {
                cells.push((method, format!("{c}/{unknown}"), bad));
                cells.push((method, format!("{c}/{foreign}"), bad));
                cells.push((method, format!("{c}/by-slug/no-such-record"), bad));
            }
        }
        for (c, foreign) in [("categories", tag), ("tags", category)] {
            for method in ["GET", "PATCH", "DELETE"] {
                cells.push((method, format!("{c}/{unknown}"), bad));
                cells.push((method, format!("{c}/{foreign}"), bad));
            }
        }
        for (method, path, expect) in cells {
            f.cells += 1;
            let cell = format!("{who} | {method} /{path}");
            let body = (method == "PATCH" || method == "PUT").then_some(&empty);
            let r = send(&s, method, &format!("{NS}/{path}"), who, body);
            let Expect::Fail(status, code) = expect else {
                unreachable!()
            };
            check_error(&mut f, &cell, &r, status, code);
        }
    }
    f.finish("missing-target");
}
