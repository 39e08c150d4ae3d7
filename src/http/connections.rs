//! Accepting and serving connections (HTTP/1.1). warp's own `serve` has no header read timeout
//! and no connection cap, so the accept loop is ours: hyper (through hyper-util) serves each
//! connection with the warp filter as its service.
//!
//! - At most `max_connections` connections are open at once. Further clients are not accepted
//!   until one closes: they wait in the kernel's listen backlog (and are served late, not
//!   refused).
//! - A request head (and the idle time before the next request on a kept-alive connection)
//!   must arrive within `header_read_timeout`, otherwise the connection is closed without an
//!   answer. A client that connects and sends nothing is closed the same way.
//! - Requests hyper refuses before almanac sees them (a target over 64 KiB, say) still get the
//!   contract's JSON error body (see `parse_errors`).
//! - Graceful shutdown: the listener is closed, idle connections are closed, requests in flight
//!   finish (the caller bounds how long it waits for [`serve`]).

use super::parse_errors::ParseErrorBodies;
use super::{AppState, Listener};
use crate::config::ConnectionLimits;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// Serves `listener` (what `serving` says) until `shutdown` completes, then waits for the open
/// connections' requests to finish.
pub(crate) async fn serve(
    listener: TcpListener,
    serving: Listener,
    state: Arc<AppState>,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()>,
) {
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        // A slot first: while every slot is taken, nothing is accepted.
        let slot = tokio::select! {
            biased;
            () = &mut shutdown => break,
            slot = slots.clone().acquire_owned() => slot.expect("the slot semaphore is never closed"),
        };
        let (stream, peer) = tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    accept_failed(e).await;
                    continue;
                }
            },
        };
        let service = TowerToHyperService::new(warp::service(super::filter(
            state.clone(),
            peer.ip(),
            serving,
        )));
        let watcher = graceful.watcher();
        let header_read_timeout = limits.header_read_timeout;
        tokio::spawn(async move {
            let builder = connection_builder(header_read_timeout);
            let connection = watcher.watch(
                builder.serve_connection(TokioIo::new(ParseErrorBodies::new(stream)), service),
            );
            if let Err(e) = connection.await {
                // Timeouts and clients going away are routine, not server errors.
                tracing::debug!(error = %e, "connection closed with an error");
            }
            drop(slot);
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// HTTP/1.1 only: automatic HTTP/2 detection would first wait for the client's preface with no
/// timeout of its own, which is exactly the slow client the header timeout is meant to stop.
fn connection_builder(header_read_timeout: Duration) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new()).http1_only();
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout);
    builder
}

/// Per-connection failures (the client reset before we accepted) are skipped; anything else,
/// such as running out of file descriptors, is logged and retried after a pause instead of
/// spinning.
async fn accept_failed(e: std::io::Error) {
    use std::io::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::ConnectionRefused | ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset
    ) {
        return;
    }
    tracing::error!(error = %e, "accepting a connection failed");
    tokio::time::sleep(Duration::from_secs(1)).await;
}
