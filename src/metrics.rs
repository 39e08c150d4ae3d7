//! Prometheus metrics (docs/operations.md, "Metrics"). Every layer records what happens in it
//! through the small functions here, which wrap the `metrics` facade; the exporter keeps the
//! values and renders the text exposition format when `/metrics` is asked for. Gauges of state
//! (index position and size, resident memory) are set when rendering, from what the caller
//! read. Label values come from fixed sets: route templates, methods, status codes, names.
//!
//! Without an installed recorder (every command but `serve`) recording costs next to nothing.

use ::metrics::{counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use std::sync::{Arc, OnceLock};

/// The media type of the text exposition format.
pub(crate) const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Upper bounds (seconds) of the duration histograms' buckets: from a cached read to the
/// slowest write or index commit worth telling apart.
const BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

const REQUESTS: &str = "almanac_http_requests_total";
const REQUEST_DURATION: &str = "almanac_http_request_duration_seconds";
const IN_FLIGHT: &str = "almanac_http_requests_in_flight";
const INDEX_APPLIED: &str = "almanac_index_applied_sequence";
const INDEX_DOCUMENTS: &str = "almanac_index_documents";
const OUTBOX_LAG: &str = "almanac_index_outbox_lag";
const INDEX_COMMIT: &str = "almanac_index_commit_duration_seconds";
const STORE_COMMIT: &str = "almanac_store_commit_duration_seconds";
const CLUSTER_COMMITS: &str = "almanac_cluster_log_commits_total";
const CLUSTER_WRITES: &str = "almanac_cluster_log_writes_total";
const CACHE_HITS: &str = "almanac_cache_hits_total";
const CACHE_MISSES: &str = "almanac_cache_misses_total";
const THROTTLED: &str = "almanac_auth_throttled_total";
const VERIFIER_BUSY: &str = "almanac_auth_verifier_busy_total";
const RESIDENT_MEMORY: &str = "almanac_process_resident_memory_bytes";
const MIRROR_LAST_RUN: &str = "almanac_mirror_last_run_timestamp_seconds";
const MIRROR_LAST_OK: &str = "almanac_mirror_last_run_ok";
const MIRROR_RECORDS: &str = "almanac_mirror_last_run_records";
const WEBHOOK_DELIVERIES: &str = "almanac_webhook_deliveries_total";
const WEBHOOKS: &str = "almanac_webhooks";

/// The caches whose hits and misses are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cache {
    /// Serialized event list members (`http::representations`).
    Representations,
    /// Whole calendar feeds (`http::answer_cache`).
    Feeds,
    /// Whole JSON answers of lists and single records (`http::answer_cache`).
    Responses,
}

impl Cache {
    fn label(self) -> &'static str {
        match self {
            Cache::Representations => "representations",
            Cache::Feeds => "feeds",
            Cache::Responses => "responses",
        }
    }
}

/// What the throttle refused (`auth::throttle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Throttled {
    /// Basic credentials.
    Login,
    /// An event password (`?password=`).
    EventPassword,
}

impl Throttled {
    fn label(self) -> &'static str {
        match self {
            Throttled::Login => "login",
            Throttled::EventPassword => "event_password",
        }
    }
}

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// Installs the process's recorder (once; later calls return the same handle). `serve` calls
/// it first thing, so that everything after is recorded.
pub(crate) fn install() -> &'static PrometheusHandle {
    HANDLE.get_or_init(|| {
        let recorder = PrometheusBuilder::new()
            .set_buckets(BUCKETS)
            .expect("the bucket list is not empty")
            .build_recorder();
        let handle = recorder.handle();
        // Fails only when another recorder was installed first (a program embedding the
        // library): then this handle renders what it is told here, not what that one holds.
        if ::metrics::set_global_recorder(recorder).is_err() {
            tracing::warn!("another metrics recorder is installed; /metrics stays empty");
        }
        describe();
        handle
    })
}

/// HELP lines, and the series of fixed labels at zero so that they exist before their first
/// event.
fn describe() {
    describe_counter!(
        REQUESTS,
        "Requests answered, by route template, method and status code."
    );
    describe_histogram!(
        REQUEST_DURATION,
        "Time from a request's arrival to its answer, by route template."
    );
    describe_gauge!(IN_FLIGHT, "Requests being processed.");
    describe_gauge!(
        INDEX_APPLIED,
        "The outbox sequence number the search index has applied (its generation)."
    );
    describe_gauge!(INDEX_DOCUMENTS, "Documents in the search index.");
    describe_gauge!(
        OUTBOX_LAG,
        "Writes committed to the store and not yet applied by the search index."
    );
    describe_histogram!(INDEX_COMMIT, "Duration of search index commits.");
    describe_histogram!(STORE_COMMIT, "Duration of store write commits.");
    describe_counter!(
        CLUSTER_COMMITS,
        "Cluster mode: PostgreSQL transactions that appended this node's writes to the log."
    );
    describe_counter!(
        CLUSTER_WRITES,
        "Cluster mode: this node's writes appended to the log."
    );
    describe_counter!(CACHE_HITS, "Lookups answered by a cache, by cache.");
    describe_counter!(CACHE_MISSES, "Lookups a cache could not answer, by cache.");
    describe_counter!(
        THROTTLED,
        "Credentials refused unchecked after repeated failures (429), by what was tried."
    );
    describe_counter!(
        VERIFIER_BUSY,
        "Credentials refused unchecked because no password verifier was free (503)."
    );
    describe_gauge!(RESIDENT_MEMORY, "Resident set size of the process.");
    describe_gauge!(
        MIRROR_LAST_RUN,
        "Scheduled mirrors: when each feed's last run ended (Unix time), by feed."
    );
    describe_gauge!(
        MIRROR_LAST_OK,
        "Scheduled mirrors: 1 when each feed's last run succeeded, 0 when it failed."
    );
    describe_gauge!(
        MIRROR_RECORDS,
        "Scheduled mirrors: the events each feed's last run added, updated, left unchanged, trashed and refused."
    );
    describe_counter!(
        WEBHOOK_DELIVERIES,
        "Webhook deliveries, by outcome (delivered, failed)."
    );
    describe_gauge!(
        WEBHOOKS,
        "Webhook endpoints whose deliveries fail: still tried (retrying) or suspended until resumed (failing)."
    );
    for outcome in ["delivered", "failed"] {
        counter!(WEBHOOK_DELIVERIES, "outcome" => outcome).absolute(0);
    }
    for cache in [Cache::Representations, Cache::Feeds, Cache::Responses] {
        counter!(CACHE_HITS, "cache" => cache.label()).absolute(0);
        counter!(CACHE_MISSES, "cache" => cache.label()).absolute(0);
    }
    for what in [Throttled::Login, Throttled::EventPassword] {
        counter!(THROTTLED, "attempt" => what.label()).absolute(0);
    }
    counter!(VERIFIER_BUSY).absolute(0);
    gauge!(IN_FLIGHT).set(0.0);
}

/// Drains recorded histogram values into their buckets; run every few seconds so that memory
/// stays bounded when nothing scrapes.
pub(crate) fn upkeep() {
    if let Some(handle) = HANDLE.get() {
        handle.run_upkeep();
    }
}

/// The state read by the caller at rendering time.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct IndexState {
    /// The outbox sequence number the index has applied.
    pub applied: u64,
    /// The last outbox sequence number committed to the store.
    pub outbox_head: u64,
    pub documents: u64,
}

/// The text exposition of every metric, with the gauges of state set from `index` and the
/// process's resident memory.
pub(crate) fn render(index: IndexState) -> String {
    let handle = install();
    gauge!(INDEX_APPLIED).set(index.applied as f64);
    gauge!(OUTBOX_LAG).set(index.outbox_head.saturating_sub(index.applied) as f64);
    gauge!(INDEX_DOCUMENTS).set(index.documents as f64);
    if let Some(bytes) = resident_bytes() {
        gauge!(RESIDENT_MEMORY).set(bytes as f64);
    }
    handle.render()
}

/// One answered request: `route` is a route template or a fixed name (see
/// `http::routes::RouteTable::label`).
pub(crate) fn request(route: &Arc<str>, method: &str, status: u16, seconds: f64) {
    let route = route.clone();
    counter!(
        REQUESTS,
        "route" => route.clone(),
        "method" => method_label(method),
        "status" => status_label(status)
    )
    .increment(1);
    histogram!(REQUEST_DURATION, "route" => route).record(seconds);
}

/// Counts a request in flight for as long as it lives.
pub(crate) struct InFlight(());

impl InFlight {
    pub(crate) fn enter() -> InFlight {
        gauge!(IN_FLIGHT).increment(1.0);
        InFlight(())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        gauge!(IN_FLIGHT).decrement(1.0);
    }
}

pub(crate) fn store_commit(seconds: f64) {
    histogram!(STORE_COMMIT).record(seconds);
}

/// A PostgreSQL transaction that appended `writes` log entries (a batch).
pub(crate) fn cluster_log_commit(writes: usize) {
    counter!(CLUSTER_COMMITS).increment(1);
    counter!(CLUSTER_WRITES).increment(writes as u64);
}

pub(crate) fn index_commit(seconds: f64) {
    histogram!(INDEX_COMMIT).record(seconds);
}

/// `hits` and `misses` lookups of `cache`.
pub(crate) fn cache(cache: Cache, hits: u64, misses: u64) {
    if hits > 0 {
        counter!(CACHE_HITS, "cache" => cache.label()).increment(hits);
    }
    if misses > 0 {
        counter!(CACHE_MISSES, "cache" => cache.label()).increment(misses);
    }
}

/// A scheduled mirror's run of the feed `source` ended: `ok`, with how many records had each
/// outcome (none when it failed).
pub(crate) fn mirror_run(source: &str, ok: bool, outcomes: Option<[(&'static str, u64); 5]>) {
    let source = source.to_string();
    gauge!(MIRROR_LAST_RUN, "feed" => source.clone()).set(chrono::Utc::now().timestamp() as f64);
    gauge!(MIRROR_LAST_OK, "feed" => source.clone()).set(if ok { 1.0 } else { 0.0 });
    for (outcome, n) in outcomes.into_iter().flatten() {
        gauge!(MIRROR_RECORDS, "feed" => source.clone(), "outcome" => outcome).set(n as f64);
    }
}

/// A webhook delivery ended: accepted (`ok`) or failed.
pub(crate) fn webhook_delivery(ok: bool) {
    let outcome = if ok { "delivered" } else { "failed" };
    counter!(WEBHOOK_DELIVERIES, "outcome" => outcome).increment(1);
}

/// How many webhook endpoints are suspended (`failing`) and failing but still tried.
pub(crate) fn webhooks(failing: usize, retrying: usize) {
    gauge!(WEBHOOKS, "state" => "failing").set(failing as f64);
    gauge!(WEBHOOKS, "state" => "retrying").set(retrying as f64);
}

pub(crate) fn throttled(what: Throttled) {
    counter!(THROTTLED, "attempt" => what.label()).increment(1);
}

pub(crate) fn verifier_busy() {
    counter!(VERIFIER_BUSY).increment(1);
}

/// The standard methods by name, anything else as `other`.
fn method_label(method: &str) -> &'static str {
    match method {
        "GET" => "GET",
        "HEAD" => "HEAD",
        "POST" => "POST",
        "PUT" => "PUT",
        "PATCH" => "PATCH",
        "DELETE" => "DELETE",
        "OPTIONS" => "OPTIONS",
        _ => "other",
    }
}

/// `"100"` … `"599"` (HTTP status codes are three digits), made once.
fn status_label(status: u16) -> &'static str {
    static LABELS: OnceLock<Vec<String>> = OnceLock::new();
    let labels = LABELS.get_or_init(|| (100..600).map(|s| s.to_string()).collect());
    match status {
        100..=599 => &labels[usize::from(status - 100)],
        _ => "other",
    }
}

/// Resident set size from `/proc/self/statm` (its second field, in pages).
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf only reads a configuration value.
    let page_size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(page_size).ok().map(|size| pages * size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_come_from_fixed_sets() {
        assert_eq!(method_label("GET"), "GET");
        assert_eq!(method_label("BREW"), "other");
        assert_eq!(status_label(200), "200");
        assert_eq!(status_label(599), "599");
        assert_eq!(status_label(42), "other");
    }

    #[test]
    fn resident_memory_is_read() {
        assert!(resident_bytes().is_some_and(|b| b > 0));
    }
}
