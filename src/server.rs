//! `almanac serve` (docs/operations.md, "Running the server"): start-up in a fixed order,
//! serving, and graceful shutdown on SIGINT/SIGTERM (in-flight requests get up to 10 s, then
//! the store is closed and the lock released).

use crate::auth::{password, Authenticator};
use crate::cluster::{Follower, PgLog};
use crate::config::{default_public_url, CacheSizes, ConnectionLimits};
use crate::datadir::{DataDir, DataDirError};
use crate::http::{self, AppState};
use crate::index::indexer::Indexer;
use crate::index::SearchIndex;
use crate::model::Role;
use crate::service::users;
use crate::store::{LogEntry, Store};
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::signal::unix::{signal, SignalKind};

/// How long in-flight requests may run on after a shutdown signal.
pub(crate) const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

pub(crate) struct ServeOptions {
    pub data_dir: PathBuf,
    pub listen: SocketAddr,
    /// A second listener serving only `GET /metrics`, without credentials.
    pub metrics_listen: Option<SocketAddr>,
    pub public_url: Option<String>,
    /// Load the demo calendar when the store has no events yet.
    pub demo: bool,
    /// Cluster mode: the PostgreSQL database holding the log.
    pub cluster: Option<String>,
    /// The public pages' settings.
    pub pages: crate::http::pages::Settings,
    /// iCalendar feeds mirrored while serving.
    pub mirrors: Vec<crate::transfer::ical::MirrorSpec>,
    /// How long the change feed remembers deletions.
    pub change_retention: Duration,
    /// How long a webhook endpoint may fail before it is suspended.
    pub webhook_retry_period: Duration,
}

/// One housekeeping task on a blocking thread: logs how many things `work` did (when any) as
/// `done`, or that `what` failed.
async fn housekeeping<N, E>(
    what: &'static str,
    done: &'static str,
    work: impl FnOnce() -> Result<N, E> + Send + 'static,
) where
    N: std::fmt::Display + PartialEq + Default + Send + 'static,
    E: std::fmt::Debug + Send + 'static,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(Ok(n)) if n == N::default() => {}
        Ok(Ok(n)) => tracing::info!(count = %n, "{done}"),
        Ok(Err(e)) => tracing::error!(error = ?e, "{what} failed"),
        Err(e) => tracing::error!(error = %e, "{what} failed"),
    }
}

/// Runs a mirror of an iCalendar feed at start-up and then every `spec.every` (see
/// `transfer::ical::run`: a feed whose server says it has not changed is not read again). On a cluster,
/// a node runs a mirror only while no other node runs it (an advisory lock in PostgreSQL).
async fn keep_mirror(
    store: Arc<Store>,
    cluster: Option<String>,
    spec: crate::transfer::ical::MirrorSpec,
) {
    use crate::transfer::ical;
    let mut every = tokio::time::interval(spec.every);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        let (store, cluster, spec) = (store.clone(), cluster.clone(), spec.clone());
        // Logs and metrics name the feed without its secret part.
        let source = ical::feed_label(&spec.options.source);
        let ran = tokio::task::spawn_blocking(move || {
            let _turn = match &cluster {
                Some(url) => match crate::cluster::try_exclusive(
                    url,
                    &format!("mirror {}", spec.options.source),
                ) {
                    Ok(Some(turn)) => Some(turn),
                    Ok(None) => return Ok(None),
                    Err(e) => return Err(e.to_string()),
                },
                None => None,
            };
            let connection = crate::transfer::Connection {
                user: None,
                timeout: Duration::from_secs(30),
                retries: 2,
                backoff: Duration::from_millis(500),
            };
            match ical::run(&store, &spec.options, &connection, &mut |_| {})? {
                Some(summary) => Ok(Some(summary)),
                None => Err("the address does not answer an iCalendar feed".to_string()),
            }
        })
        .await
        .unwrap_or_else(|e| Err(e.to_string()));
        match ran {
            Ok(None) => tracing::info!(feed = %source, "mirror: another node is running it"),
            Ok(Some(summary)) => {
                crate::metrics::mirror_run(&source, true, Some(summary.outcomes()));
                tracing::info!(feed = %source, %summary, "mirror run");
            }
            Err(e) => {
                crate::metrics::mirror_run(&source, false, None);
                tracing::error!(feed = %source, error = %e, "mirror run failed (nothing was trashed)");
            }
        }
    }
}

/// A failure with the exit code the contract gives it.
#[derive(Debug)]
pub(crate) struct Exit {
    pub code: i32,
    pub message: String,
}

impl Exit {
    pub(crate) fn new(code: i32, message: impl ToString) -> Exit {
        Exit {
            code,
            message: message.to_string(),
        }
    }
}

/// The exit code of a data directory that cannot be used (3: another almanac holds it).
pub(crate) fn data_dir_exit(e: DataDirError) -> Exit {
    let code = match e {
        DataDirError::Locked(_) => 3,
        DataDirError::Missing(_) | DataDirError::Io { .. } => 1,
    };
    Exit::new(code, e)
}

pub(crate) fn serve(options: ServeOptions) -> Result<(), Exit> {
    // Configuration is validated before the data directory is touched.
    let limits = ConnectionLimits::from_env().map_err(|e| Exit::new(2, e))?;
    let caches = CacheSizes::from_env().map_err(|e| Exit::new(2, e))?;
    let commit_delay = crate::config::index_commit_delay_from_env().map_err(|e| Exit::new(2, e))?;
    // Everything from here on is recorded, the start-up's commits included.
    crate::metrics::install();
    let data_dir = DataDir::open(&options.data_dir, true).map_err(data_dir_exit)?;
    let store_path = data_dir.store_path().map_err(data_dir_exit)?;
    let store = Store::open(&store_path).map_err(|e| Exit::new(1, e))?;
    let store = Arc::new(store);
    if let Some(url) = &options.cluster {
        join_cluster(&store, url, &node_name(&options.data_dir))?;
    }
    if options.demo {
        load_demo(&store)?;
    }
    // Records stored before the change journal existed enter it once (after an upgrade).
    let seeded = crate::service::changes::seed(&store)
        .map_err(|e| Exit::new(1, format!("cannot journal the stored records: {e:?}")))?;
    if seeded > 0 {
        tracing::info!(
            records = seeded,
            "stored records entered the change journal"
        );
    }
    // Step 4: the index, rebuilt or caught up before serving.
    let index =
        Arc::new(SearchIndex::open(&data_dir.index_path(), &store).map_err(|e| Exit::new(1, e))?);
    let mut all_users = store.users().map_err(|e| Exit::new(1, e))?;
    if all_users.is_empty() {
        let generated = password::generate();
        let admin = users::add(&store, "admin", Role::Administrator, &generated)
            .map_err(|e| Exit::new(1, e))?;
        data_dir
            .write_initial_password(&generated)
            .map_err(|e| Exit::new(1, format!("cannot write the initial password: {e}")))?;
        print_line(&format!("initial admin password: {generated}"));
        all_users.push(admin);
    }
    let indexer = Indexer::start(store.clone(), index.clone(), commit_delay);
    let follower = options
        .cluster
        .as_deref()
        .map(|url| Follower::start(url, &node_name(&options.data_dir), store.clone()));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Exit::new(1, e))?;
    let result = runtime.block_on(run(
        store.clone(),
        index.clone(),
        all_users,
        options,
        limits,
        caches,
    ));
    // Requests that outlived the grace period are dropped with the runtime.
    runtime.shutdown_timeout(Duration::from_millis(100));
    drop(follower);
    // Pending index work completes before the store closes.
    indexer.stop();
    drop(index);
    drop(store);
    drop(data_dir);
    result
}

async fn run(
    store: Arc<Store>,
    index: Arc<SearchIndex>,
    all_users: Vec<crate::model::User>,
    options: ServeOptions,
    limits: ConnectionLimits,
    caches: CacheSizes,
) -> Result<(), Exit> {
    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .map_err(|e| Exit::new(1, format!("cannot listen on {}: {e}", options.listen)))?;
    let bound = listener.local_addr().map_err(|e| Exit::new(1, e))?;
    let metrics_listener = match options.metrics_listen {
        Some(address) => Some(
            tokio::net::TcpListener::bind(address)
                .await
                .map_err(|e| Exit::new(1, format!("cannot listen on {address}: {e}")))?,
        ),
        None => None,
    };
    let public_url = options
        .public_url
        .unwrap_or_else(|| default_public_url(bound));
    let state = Arc::new(
        AppState::new(
            store,
            index,
            Authenticator::new(all_users),
            &public_url,
            limits.body_read_timeout,
        )
        .with_caches(caches)
        .with_pages(options.pages.clone()),
    );

    let mut sigint = signal(SignalKind::interrupt()).map_err(|e| Exit::new(1, e))?;
    let mut sigterm = signal(SignalKind::terminate()).map_err(|e| Exit::new(1, e))?;
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stopped = move || {
        let mut stop = stop_rx.clone();
        async move {
            let _ = stop.wait_for(|stop| *stop).await;
        }
    };
    let server = http::connections::serve(
        listener,
        http::Listener::Api,
        state.clone(),
        limits,
        stopped(),
    );
    let server = tokio::spawn(server);
    let metrics_server = match metrics_listener {
        Some(listener) => {
            let bound = listener.local_addr().map_err(|e| Exit::new(1, e))?;
            let line = format!("metrics on http://{bound}/metrics");
            print_line(&line);
            tracing::info!("{line}");
            Some(tokio::spawn(http::connections::serve(
                listener,
                http::Listener::Metrics,
                state.clone(),
                limits,
                stopped(),
            )))
        }
        None => None,
    };
    // Recorded durations are folded into their histograms every few seconds, scraped or not.
    tokio::spawn(async {
        let mut every_few_seconds = tokio::time::interval(Duration::from_secs(5));
        loop {
            every_few_seconds.tick().await;
            crate::metrics::upkeep();
        }
    });

    // Scheduled publication: at start-up, then every minute.
    let scheduler_store = state.store.clone();
    let scheduler_index = state.index.clone();
    tokio::spawn(async move {
        let mut every_minute = tokio::time::interval(Duration::from_secs(60));
        loop {
            every_minute.tick().await;
            let store = scheduler_store.clone();
            let index = scheduler_index.clone();
            let now = chrono::Utc::now().naive_utc();
            match tokio::task::spawn_blocking(move || {
                crate::service::scheduled::publish_due(&store, &index, now)
            })
            .await
            {
                Ok(Ok(0)) => {}
                Ok(Ok(n)) => tracing::info!(published = n, "scheduled records published"),
                Ok(Err(e)) => tracing::error!(error = ?e, "scheduled publication failed"),
                Err(e) => tracing::error!(error = %e, "scheduled publication task failed"),
            }
        }
    });

    // Hourly housekeeping (at start-up, then every hour): never-ending series keep their
    // occurrences 24 months ahead, ended editors' sessions are removed, and the change
    // journal forgets the deletions older than its retention.
    let horizon_store = state.store.clone();
    let retention =
        chrono::Duration::from_std(options.change_retention).unwrap_or(chrono::Duration::MAX);
    tokio::spawn(async move {
        let mut every_hour = tokio::time::interval(Duration::from_secs(3600));
        loop {
            every_hour.tick().await;
            let now = chrono::Utc::now().naive_utc();
            let store = horizon_store.clone();
            housekeeping(
                "extending recurring series",
                "recurring series extended",
                move || crate::service::series::extend_horizons(&store, now),
            )
            .await;
            let store = horizon_store.clone();
            housekeeping(
                "removing ended sessions",
                "ended editors' sessions removed",
                move || crate::service::sessions::purge(&store, now),
            )
            .await;
            let store = horizon_store.clone();
            housekeeping(
                "pruning the change journal",
                "old deletions left the change feed",
                move || crate::service::changes::prune(&store, retention),
            )
            .await;
        }
    });

    tokio::spawn(crate::delivery::run(
        state.store.clone(),
        crate::delivery::DeliveryOptions {
            namespace: crate::http::links::Links::new(public_url.as_str().into(), None).namespace(),
            cluster: options.cluster.clone(),
            retry_period: options.webhook_retry_period,
        },
    ));

    for spec in options.mirrors.clone() {
        tokio::spawn(keep_mirror(
            state.store.clone(),
            options.cluster.clone(),
            spec,
        ));
    }

    let listening = format!("listening on http://{bound}");
    print_line(&listening);
    tracing::info!("{listening}");

    tokio::select! {
        _ = sigint.recv() => {}
        _ = sigterm.recv() => {}
    }
    tracing::info!("shutting down");
    let _ = stop_tx.send(true);
    // A second signal during shutdown exits at once with code 1.
    tokio::spawn(async move {
        tokio::select! {
            _ = sigint.recv() => {}
            _ = sigterm.recv() => {}
        }
        eprintln!("error: second signal during shutdown");
        std::process::exit(1);
    });
    let servers = async {
        let _ = server.await;
        if let Some(metrics_server) = metrics_server {
            let _ = metrics_server.await;
        }
    };
    if tokio::time::timeout(SHUTDOWN_GRACE, servers).await.is_err() {
        tracing::warn!("requests still running after the grace period were dropped");
    }
    Ok(())
}

/// Makes `store` a replica of the cluster at `url`: a data directory that has never been part
/// of it starts from the snapshot (and must hold nothing of its own); from then on every write
/// goes through the log.
fn join_cluster(store: &Store, url: &str, node: &str) -> Result<(), Exit> {
    let applied = store.cluster_applied().map_err(|e| Exit::new(1, e))?;
    let log = match PgLog::connect(url, node) {
        Ok(log) => log,
        // A replica can serve reads while PostgreSQL is away; writes wait for it.
        Err(e) if applied > 0 => {
            tracing::warn!(error = %e, "the cluster log is unreachable; serving reads from the replica");
            PgLog::unconnected(url, node)
        }
        Err(e) => return Err(Exit::new(1, format!("cannot use the cluster log: {e}"))),
    };
    if applied == 0 {
        if store_holds_data(store)? {
            return Err(Exit::new(
                1,
                "the data directory holds a calendar that is not part of this cluster; \
                 start the node on an empty data directory",
            ));
        }
        let (head, rows) = log
            .snapshot()
            .map_err(|e| Exit::new(1, format!("cannot copy the cluster's snapshot: {e}")))?;
        if head > 0 {
            store
                .apply_entries(&[LogEntry {
                    seq: head,
                    changes: rows,
                }])
                .map_err(|e| Exit::new(1, e))?;
            tracing::info!(position = head, "copied the cluster's snapshot");
        }
    }
    store.attach_log(Arc::new(log)).map_err(|e| Exit::new(1, e))
}

/// How this node names itself in the log and in `cluster status`: the host and the data
/// directory, which together tell one node from another.
fn node_name(data_dir: &std::path::Path) -> String {
    let mut host = [0u8; 256];
    // SAFETY: the buffer is valid for its whole length; gethostname NUL-terminates within it
    // or truncates, and the length is taken up to the first NUL.
    let named = unsafe { libc::gethostname(host.as_mut_ptr().cast(), host.len()) } == 0;
    let host = if named {
        let end = host.iter().position(|b| *b == 0).unwrap_or(host.len());
        String::from_utf8_lossy(&host[..end]).into_owned()
    } else {
        "localhost".to_string()
    };
    let dir = std::fs::canonicalize(data_dir).unwrap_or_else(|_| data_dir.to_path_buf());
    format!("{host}:{}", dir.display())
}

fn store_holds_data(store: &Store) -> Result<bool, Exit> {
    let rx = store.read().map_err(|e| Exit::new(1, e))?;
    let mut records = 0;
    for kind in crate::model::Kind::ALL {
        records += rx.count(kind).map_err(|e| Exit::new(1, e))?;
    }
    Ok(records > 0 || !store.users().map_err(|e| Exit::new(1, e))?.is_empty())
}

/// Fills a store without events with the demo calendar (data/demo.jsonl, moved so that it is
/// upcoming). The index then catches up with the store in the start-up that follows.
fn load_demo(store: &Store) -> Result<(), Exit> {
    let has_events = store
        .read()
        .and_then(|rx| rx.count(crate::model::Kind::Event))
        .map_err(|e| Exit::new(1, e))?
        > 0;
    if has_events {
        return Ok(());
    }
    let today = chrono::Utc::now().date_naive();
    let loaded = crate::transfer::load_demo(store, today, |rejection| {
        tracing::warn!(line = rejection.line, reason = %rejection.reason, "demo line refused");
    })
    .map_err(|e| Exit::new(1, e))?;
    tracing::info!("demo calendar loaded: {loaded}");
    Ok(())
}

/// stdout carries only the documented lines (the initial password, the listening address), each
/// flushed at once.
fn print_line(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}
