//! `almanac import --from` an iCalendar feed (docs/operations.md, "From an iCalendar feed"):
//! a file, or
//! what an `https://`, `http://` or `webcal://` address answers (Google Calendar's and
//! Outlook's public addresses, Meetup's, any `.ics`). Each UID becomes one event — a series
//! when it repeats, its RECURRENCE-ID instances that series' exceptions or cancellations —
//! written by the API's rules (`service::events`) as a calendar editor who is no user. The
//! store remembers, by feed and UID, the event and a fingerprint of what the feed said, so a
//! later run writes only what changed, and `--mirror` trashes what left the feed. A feed that
//! cannot be read changes nothing.

mod feed;

use super::remote::{Connection, PullEvent, PullSummary};
use crate::auth::Caller;
use crate::model::feed::{FeedItem, FeedValidators};
use crate::model::post::GeoPoint;
use crate::model::{Kind, Language, Role, Status};
use crate::service::events::{self, EventFields, LinkRef, Target, TermRef};
use crate::service::linked::{OrganizerFields, VenueFields};
use crate::service::posts::{ImageChange, PostWrite};
use crate::service::{Request, ServiceError};
use crate::store::{Reads, Store};
use crate::values::text::clean_plain;
use crate::values::timezone::Zone;
use feed::{is_icalendar, Component};
use serde_json::json;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Who writes what a feed holds: an editor who is no user (what it writes is nobody's, and
/// editors may change it), whose HTML the importer has already cleaned.
const IMPORTER: Caller = Caller::User {
    id: 0,
    role: Role::Editor,
};

/// How a feed is copied.
#[derive(Debug, Clone)]
pub(crate) struct FeedOptions {
    /// The feed's address or path, as given: what its UIDs are remembered under.
    pub source: String,
    pub language: Language,
    /// A category every copied event is also in.
    pub category: Option<String>,
    /// The status of copied events (private ones stay private).
    pub status: Status,
    pub mirror: bool,
}

/// The most a feed may hold: more is refused before anything is read.
pub(crate) const MAX_FEED_BYTES: u64 = 64 * 1024 * 1024;

/// What an address answered.
enum Fetched {
    /// An iCalendar feed, and how to ask whether it changed.
    Feed {
        text: String,
        validators: FeedValidators,
    },
    /// Not changed since the answer `validators` came with (`304 Not Modified`).
    Unchanged,
    /// Something else: an events API, or not found there.
    NotAFeed,
}

/// What `address` holds (a file, or what an `http(s)://` or `webcal://` address answers),
/// asking with `validators` whether it changed since (with the connection's credentials, if
/// any). An address that names an events API by its path is not asked.
fn fetch(
    address: &str,
    connection: &Connection,
    validators: Option<&FeedValidators>,
) -> Result<Fetched, String> {
    use std::io::Read;
    if names_an_events_api(address) {
        return Ok(Fetched::NotAFeed);
    }
    let too_big = || {
        format!(
            "the feed is larger than {} MB",
            MAX_FEED_BYTES / (1024 * 1024)
        )
    };
    if !address.contains("://") || address.starts_with("file://") {
        let path = std::path::Path::new(address.strip_prefix("file://").unwrap_or(address));
        let file = std::fs::File::open(path).map_err(|e| format!("cannot read {address}: {e}"))?;
        let mut text = String::new();
        file.take(MAX_FEED_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read {address}: {e}"))?;
        if text.len() as u64 > MAX_FEED_BYTES {
            return Err(too_big());
        }
        return if is_icalendar(&text) {
            Ok(Fetched::Feed {
                text,
                validators: FeedValidators::default(),
            })
        } else {
            Err(format!("{address} is not an iCalendar file"))
        };
    }
    let url = match address.strip_prefix("webcal://") {
        Some(rest) => format!("https://{rest}"),
        None => address.to_string(),
    };
    let client = reqwest::blocking::Client::builder()
        .timeout(connection.timeout)
        .user_agent(concat!("almanac/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("cannot set up an HTTP client: {e}"))?;
    let answer = connection.send(|| {
        let mut request = client
            .get(&url)
            .header("Accept", "text/calendar, application/json;q=0.5, */*;q=0.1");
        if let Some(v) = validators {
            if let Some(etag) = &v.etag {
                request = request.header("If-None-Match", etag);
            }
            if let Some(date) = &v.last_modified {
                request = request.header("If-Modified-Since", date);
            }
        }
        request
    });
    let response = match answer {
        Ok(r) if r.status() == reqwest::StatusCode::NOT_MODIFIED => return Ok(Fetched::Unchanged),
        Ok(r) if r.status().is_success() => r,
        Ok(r) if r.status().is_server_error() || r.status().as_u16() == 429 => {
            return Err(format!("{url}: {}", r.status()))
        }
        // Not a feed: the events API's own reading says what went wrong.
        Ok(_) => return Ok(Fetched::NotAFeed),
        Err(e) => return Err(format!("cannot reach {url}: {e}")),
    };
    let header = |name: reqwest::header::HeaderName| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let calendar = header(reqwest::header::CONTENT_TYPE)
        .is_some_and(|v| v.to_ascii_lowercase().starts_with("text/calendar"));
    let validators = FeedValidators {
        etag: header(reqwest::header::ETAG),
        last_modified: header(reqwest::header::LAST_MODIFIED),
    };
    if response
        .content_length()
        .is_some_and(|n| n > MAX_FEED_BYTES)
    {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    response
        .take(MAX_FEED_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("the answer of {url} was cut short: {e}"))?;
    if bytes.len() as u64 > MAX_FEED_BYTES {
        return Err(too_big());
    }
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Ok(if calendar || is_icalendar(&text) {
        Fetched::Feed { text, validators }
    } else {
        Fetched::NotAFeed
    })
}

/// Whether `address` is the REST root of an events API by its path (`…/tribe/events/v1`,
/// `…/cal/events/v1`): those are read as APIs without asking first whether they are feeds.
fn names_an_events_api(address: &str) -> bool {
    let path = address.split(['?', '#']).next().unwrap_or_default();
    let path = path.trim_end_matches('/');
    path.contains("://") && (path.ends_with("/tribe/events/v1") || path.ends_with("/cal/events/v1"))
}

/// A mirror the server keeps (`almanac serve --mirror URL[,every=15m][,category=NAME]
/// [,language=es][,status=draft]`).
#[derive(Debug, Clone)]
pub(crate) struct MirrorSpec {
    pub every: std::time::Duration,
    pub options: FeedOptions,
}

impl MirrorSpec {
    /// Reads `URL[,key=value…]`.
    pub(crate) fn parse(text: &str) -> Result<MirrorSpec, String> {
        let mut parts = text.trim().split(',');
        let source = parts.next().unwrap_or_default().trim().to_string();
        if source.is_empty() {
            return Err("a mirror needs the feed's address".into());
        }
        let mut spec = MirrorSpec {
            every: std::time::Duration::from_secs(15 * 60),
            options: FeedOptions {
                source,
                language: Language::En,
                category: None,
                status: Status::Publish,
                mirror: true,
            },
        };
        for part in parts {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| format!("`{part}` is not key=value"))?;
            let value = value.trim();
            match key.trim() {
                "every" => spec.every = every(value)?,
                "category" => spec.options.category = Some(value.to_string()),
                "language" => {
                    spec.options.language = Language::from_code(value)
                        .ok_or_else(|| format!("language `{value}` is not en, pt-br or es"))?
                }
                "status" => spec.options.status = parse_status(value)?,
                other => {
                    return Err(format!(
                        "`{other}` is not every, category, language or status"
                    ))
                }
            }
        }
        Ok(spec)
    }
}

/// The status of copied events: `draft` or `publish`.
pub(crate) fn parse_status(value: &str) -> Result<Status, String> {
    match value {
        "draft" => Ok(Status::Draft),
        "publish" => Ok(Status::Publish),
        _ => Err(format!("status `{value}` is not draft or publish")),
    }
}

/// A feed's address as logs and metrics show it: its scheme and host, and a hash of the rest
/// (a calendar's "secret address" is a credential).
pub(crate) fn feed_label(source: &str) -> String {
    let hash = blake3::hash(source.as_bytes()).to_hex();
    match url::Url::parse(source) {
        Ok(url) if url.host_str().is_some() => format!(
            "{}://{}/…#{}",
            url.scheme(),
            url.host_str().unwrap_or_default(),
            &hash[..8]
        ),
        _ => format!("file #{}", &hash[..8]),
    }
}

/// A mirror's period: a duration (`15m`, `2h`, `1d`) of at least a minute.
fn every(text: &str) -> Result<std::time::Duration, String> {
    let period = crate::config::parse_duration(text).map_err(|e| format!("every=`{text}`: {e}"))?;
    if period.as_secs() < 60 {
        return Err(format!(
            "every=`{text}`: a mirror runs at most once a minute"
        ));
    }
    Ok(period)
}

/// Copies the feed at `options.source` into the store when it is a feed (`None` when the
/// address answers something else: an events API). The validators of its last answer read
/// whole are kept in the store: a feed that says it has not changed (`304`) is not read again.
pub(crate) fn run(
    store: &Store,
    options: &FeedOptions,
    connection: &Connection,
    report: &mut dyn FnMut(PullEvent),
) -> Result<Option<PullSummary>, String> {
    let known = store
        .read()
        .and_then(|rx| rx.feed_validators(&options.source))
        .map_err(|e| e.to_string())?;
    match fetch(&options.source, connection, known.as_ref())? {
        Fetched::NotAFeed => Ok(None),
        Fetched::Unchanged => {
            let known = store
                .read()
                .and_then(|rx| rx.feed_items(&options.source))
                .map_err(|e| e.to_string())?;
            Ok(Some(PullSummary {
                unchanged: known.len() as u64,
                ..PullSummary::default()
            }))
        }
        Fetched::Feed { text, validators } => {
            let summary = load(store, &text, options, report)?;
            store
                .write(|tx| tx.set_feed_validators(&options.source, &validators))
                .map_err(|e| e.to_string())?;
            Ok(Some(summary))
        }
    }
}

/// Copies the feed `text` into the store.
fn load(
    store: &Store,
    text: &str,
    options: &FeedOptions,
    report: &mut dyn FnMut(PullEvent),
) -> Result<PullSummary, String> {
    let feed = feed::parse(text)?;
    if options.mirror && feed.components.is_empty() && feed.refused.is_empty() {
        // An empty answer is more often a fault of the source than a calendar emptied.
        return Err("the feed holds no events: nothing was trashed".into());
    }
    let mut summary = PullSummary::default();
    let mut present: HashSet<String> = HashSet::new();
    for refusal in &feed.refused {
        present.extend(refusal.uid.clone());
        refuse(report, &mut summary, &refusal.component, &refusal.reason);
    }
    // A UID whose event was refused keeps its copy, and its instances are not refused again.
    let refused_uids = present.clone();
    // Each UID's series (or single event) and its instances.
    let mut uids: BTreeMap<String, (Option<Component>, Vec<Component>)> = BTreeMap::new();
    for component in feed.components {
        let entry = uids.entry(component.uid.clone()).or_default();
        if component.recurrence_id.is_some() {
            entry.1.push(component);
        } else {
            entry.0 = Some(component);
        }
    }
    report(PullEvent::Announced(uids.len() as u64));
    // Read in a write transaction: on a cluster, that is after this node has caught up with
    // the log, so a mirror that another node ran a moment ago is seen.
    let stored: HashMap<String, FeedItem> = store
        .write(|tx| tx.feed_items(&options.source))
        .map_err(|e| e.to_string())?
        .into_iter()
        .collect();
    let request = Request {
        caller: IMPORTER,
        language: options.language,
        explicit_language: None,
        now: chrono::Utc::now().naive_utc(),
    };
    let copy = Copy {
        store,
        options,
        request: &request,
    };
    for (uid, (series, instances)) in uids {
        present.insert(uid.clone());
        report(PullEvent::Handled(1));
        let Some(series) = series else {
            if refused_uids.contains(&uid) {
                continue;
            }
            refuse(
                report,
                &mut summary,
                &uid,
                "the feed holds instances (RECURRENCE-ID) of this UID but not the event itself",
            );
            continue;
        };
        let existing = match stored.get(&uid) {
            Some(item) if copy.exists(item.event)? => Some(item.clone()),
            _ => None,
        };
        let mut refused_instances = Vec::new();
        match copy.one(&uid, &series, &instances, existing, &mut refused_instances) {
            Ok(Outcome::Added) => summary.added += 1,
            Ok(Outcome::Updated) => summary.updated += 1,
            Ok(Outcome::Unchanged) => summary.unchanged += 1,
            Ok(Outcome::Trashed) => summary.trashed += 1,
            Ok(Outcome::Skipped) => {}
            Err(Failure::Refused(reason)) => refuse(report, &mut summary, &uid, &reason),
            Err(Failure::Store(e)) => return Err(e),
        }
        for (at, why) in refused_instances {
            refuse(report, &mut summary, &format!("{uid} ({at})"), &why);
        }
    }
    if options.mirror {
        for (uid, item) in stored.iter().filter(|(uid, _)| !present.contains(*uid)) {
            if copy.exists(item.event)? {
                copy.trash(item.event)
                    .map_err(|e| format!("{uid}: {e:?}"))?;
                summary.trashed += 1;
            }
            copy.remember(uid, None).map_err(|e| e.to_string())?;
        }
    }
    Ok(summary)
}

fn refuse(report: &mut dyn FnMut(PullEvent), summary: &mut PullSummary, what: &str, why: &str) {
    summary.refused += 1;
    report(PullEvent::Refused {
        kind: Kind::Event,
        id: what.to_string(),
        reason: why.to_string(),
    });
}

enum Outcome {
    Added,
    Updated,
    Unchanged,
    Trashed,
    /// A cancelled event never copied.
    Skipped,
}

enum Failure {
    Refused(String),
    Store(String),
}

impl From<ServiceError> for Failure {
    fn from(e: ServiceError) -> Failure {
        match e {
            ServiceError::Invalid(refusals) => Failure::Refused(
                refusals
                    .into_iter()
                    .map(|(field, why)| format!("{field} {}", why.reason))
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
            ServiceError::Store(e) => Failure::Store(e.to_string()),
            other => Failure::Refused(format!("{other:?}")),
        }
    }
}

struct Copy<'a> {
    store: &'a Store,
    options: &'a FeedOptions,
    request: &'a Request,
}

impl Copy<'_> {
    fn exists(&self, id: u64) -> Result<bool, String> {
        self.store
            .read()
            .and_then(|rx| rx.get_record::<crate::model::event::Event>(Kind::Event, id))
            .map(|found| found.is_some())
            .map_err(|e| e.to_string())
    }

    fn trash(&self, id: u64) -> Result<(), ServiceError> {
        match events::delete(self.store, self.request, &Target::Id(id), Vec::new()) {
            Ok(_) | Err(ServiceError::InTrash(_)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    fn remember(&self, uid: &str, item: Option<&FeedItem>) -> Result<(), crate::store::StoreError> {
        self.store
            .write(|tx| tx.set_feed_item(&self.options.source, uid, item))
    }

    /// Copies one UID: its event, then its instances.
    fn one(
        &self,
        uid: &str,
        series: &Component,
        instances: &[Component],
        existing: Option<FeedItem>,
        refused_instances: &mut Vec<(chrono::NaiveDateTime, String)>,
    ) -> Result<Outcome, Failure> {
        if series.cancelled {
            return Ok(match existing {
                Some(item) => {
                    self.trash(item.event)?;
                    self.remember(uid, None)
                        .map_err(|e| Failure::Store(e.to_string()))?;
                    Outcome::Trashed
                }
                None => Outcome::Skipped,
            });
        }
        let mut fingerprints: Vec<u64> = instances.iter().map(|i| i.fingerprint).collect();
        fingerprints.sort_unstable();
        // The options are part of it: a run with another category or status writes again.
        let fingerprint = {
            let options = self.options;
            let text = format!(
                "{} {fingerprints:?} {:?} {:?} {}",
                series.fingerprint,
                options.category,
                options.status,
                options.language.code()
            );
            let hash = blake3::hash(text.as_bytes());
            u64::from_le_bytes(hash.as_bytes()[..8].try_into().expect("8 bytes"))
        };
        if existing
            .as_ref()
            .is_some_and(|item| item.fingerprint == fingerprint)
        {
            return Ok(Outcome::Unchanged);
        }
        let (write, fields) = self.event_write(series, true)?;
        let event = match &existing {
            Some(item) => events::update(
                self.store,
                self.request,
                &Target::Id(item.event),
                &write,
                &fields,
                Vec::new(),
            )?,
            // The new event is remembered in its own transaction: a run cut short after it
            // finds it again (with a fingerprint no feed has, so it is written again).
            None => events::create_and(
                self.store,
                self.request,
                &write,
                &fields,
                Vec::new(),
                |tx, event| {
                    let item = FeedItem {
                        event: event.post.id,
                        fingerprint: 0,
                        instances: Vec::new(),
                    };
                    Ok(tx.set_feed_item(&self.options.source, uid, Some(&item))?)
                },
            )?,
        };
        let id = event.post.id;
        // Instances the feed no longer changes or cancels follow their series again.
        let now: Vec<chrono::NaiveDateTime> =
            instances.iter().filter_map(|i| i.recurrence_id).collect();
        for gone in existing
            .iter()
            .flat_map(|item| item.instances.iter())
            .filter(|at| !now.contains(at))
        {
            events::revert_occurrence(self.store, self.request, id, *gone)?;
        }
        for instance in instances {
            let at = instance.recurrence_id.expect("an instance");
            // An instance almanac cannot place or take is refused alone.
            let Some(occurrence) = events::occurrence_at(self.store, id, at)? else {
                refused_instances.push((at, "RECURRENCE-ID is no date of the series".into()));
                continue;
            };
            let written = if instance.cancelled {
                self.trash(occurrence)
            } else {
                let (write, fields) = self.event_write(instance, false)?;
                events::update(
                    self.store,
                    self.request,
                    &Target::Id(occurrence),
                    &write,
                    &fields,
                    Vec::new(),
                )
                .map(|_| ())
            };
            match written.map_err(Failure::from) {
                Ok(()) => {}
                Err(Failure::Refused(why)) => refused_instances.push((at, why)),
                Err(e) => return Err(e),
            }
        }
        self.remember(
            uid,
            Some(&FeedItem {
                event: id,
                fingerprint,
                instances: now,
            }),
        )
        .map_err(|e| Failure::Store(e.to_string()))?;
        Ok(if existing.is_some() {
            Outcome::Updated
        } else {
            Outcome::Added
        })
    }

    /// The API's write of a component (`series`: its rule too).
    fn event_write(
        &self,
        c: &Component,
        series: bool,
    ) -> Result<(PostWrite, EventFields), Failure> {
        let date = |at: chrono::NaiveDateTime| json!(crate::values::datetime::format(&at));
        let zone = Zone::parse(&c.zone).map_err(|e| Failure::Refused(e.reason))?;
        let mut categories: Vec<TermRef> = c
            .categories
            .iter()
            .map(|name| clean_plain(name))
            .filter(|name| !name.is_empty())
            .map(TermRef::Name)
            .collect();
        if let Some(category) = &self.options.category {
            categories.push(TermRef::Name(category.clone()));
        }
        let venue = c.location.as_ref().map(|name| {
            LinkRef::Named(Box::new((
                PostWrite {
                    title: Some(clean_plain(name)),
                    ..PostWrite::default()
                },
                VenueFields {
                    geo: c.geo.map(|(lat, lng)| Some(GeoPoint { lat, lng })),
                    ..VenueFields::default()
                },
            )))
        });
        let organizers = c
            .organizer
            .iter()
            .map(|(name, email)| {
                LinkRef::Named(Box::new((
                    PostWrite {
                        title: Some(clean_plain(name)),
                        ..PostWrite::default()
                    },
                    OrganizerFields {
                        email: email.clone(),
                        ..OrganizerFields::default()
                    },
                )))
            })
            .collect();
        let write = PostWrite {
            title: Some(clean_plain(&c.title)),
            description: Some(c.description.clone()),
            status: Some(if c.private {
                Status::Private
            } else {
                self.options.status
            }),
            image: Some(match &c.image {
                Some(url) => ImageChange::Url(url.clone()),
                None => ImageChange::Remove,
            }),
            ..PostWrite::default()
        };
        let fields = EventFields {
            start_date: Some(date(c.start)),
            end_date: Some(date(c.end)),
            timezone: Some(zone),
            all_day: Some(c.all_day),
            website: Some(c.url.clone().unwrap_or_default()),
            categories: Some(categories),
            venue: Some(venue),
            organizers: Some(organizers),
            recurrence: series.then(|| c.recurrence.clone()),
            ..EventFields::default()
        };
        Ok((write, fields))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn a_feed_is_asked_whether_it_changed_with_its_etag() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for stream in listener.incoming().take(2) {
                let mut stream = stream.unwrap();
                let mut request = [0u8; 4096];
                let n = stream.read(&mut request).unwrap();
                let request = String::from_utf8_lossy(&request[..n]).to_ascii_lowercase();
                let body = "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n";
                let answer = if request.contains("if-none-match: \"v1\"") {
                    "HTTP/1.1 304 Not Modified\r\nContent-Length: 0\r\n\r\n".to_string()
                } else {
                    format!(
                        "HTTP/1.1 200 OK\r\nETag: \"v1\"\r\nContent-Type: text/calendar\r\n\
                         Content-Length: {}\r\n\r\n{body}",
                        body.len()
                    )
                };
                stream.write_all(answer.as_bytes()).unwrap();
            }
        });
        let url = format!("http://{address}/feed.ics");
        let connection = Connection {
            user: None,
            timeout: std::time::Duration::from_secs(5),
            retries: 0,
            backoff: std::time::Duration::from_millis(100),
        };
        let Fetched::Feed { validators, .. } = fetch(&url, &connection, None).unwrap() else {
            panic!("a feed");
        };
        assert_eq!(validators.etag.as_deref(), Some("\"v1\""));
        assert!(matches!(
            fetch(&url, &connection, Some(&validators)).unwrap(),
            Fetched::Unchanged
        ));
    }

    #[test]
    fn mirror_specs_are_read() {
        let spec = MirrorSpec::parse("https://x/a.ics,every=2h,category=Town,language=es").unwrap();
        assert_eq!(spec.every, std::time::Duration::from_secs(7200));
        assert_eq!(spec.options.category.as_deref(), Some("Town"));
        assert_eq!(spec.options.language, Language::Es);
        assert!(spec.options.mirror);
        assert!(MirrorSpec::parse("https://x/a.ics,every=10s").is_err());
        assert!(MirrorSpec::parse("https://x/a.ics,colour=red").is_err());
        assert!(MirrorSpec::parse("").is_err());
    }
}
