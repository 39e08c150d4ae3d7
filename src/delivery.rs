//! Delivers changes to webhooks (docs/api.md, "Webhooks"): a task of the server posts each
//! endpoint its due changes one at a time, in order, signed, and moves the endpoint's
//! position on once it answered 2xx. A failing endpoint is tried again after a backoff (1 s
//! doubling up to 10 minutes) and suspended once it has failed for the retry period. On a
//! cluster one node delivers, the holder of an advisory lock in PostgreSQL; when it goes,
//! another node takes the lock and goes on from the endpoints' positions.

use crate::model::journal::Action;
use crate::model::webhook::Webhook;
use crate::service::changes;
use crate::service::webhooks::{self, Delivery};
use crate::store::{Reads, Store};
use hmac::{Hmac, Mac};
use serde_json::json;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long one delivery may take.
const TIMEOUT: Duration = Duration::from_secs(10);
/// The longest wait between two tries of a failing endpoint.
const MAX_BACKOFF: Duration = Duration::from_secs(600);
/// Changes read per endpoint at a time.
const BATCH: usize = 20;
/// How often a node that does not deliver asks for the delivery lock.
const LEASE_RETRY: Duration = Duration::from_secs(2);

pub(crate) struct DeliveryOptions {
    /// The REST namespace's URL, for the records' `rest_url`.
    pub namespace: String,
    pub cluster: Option<String>,
    /// Failures for this long suspend an endpoint.
    pub retry_period: Duration,
}

/// Runs the deliveries until the runtime stops.
pub(crate) async fn run(store: Arc<Store>, options: DeliveryOptions) {
    // The blocking client makes a runtime of its own: not on a thread of this one.
    let mut deliverer =
        match tokio::task::spawn_blocking(move || Deliverer::new(store, options)).await {
            Ok(Ok(deliverer)) => deliverer,
            Ok(Err(e)) => {
                tracing::error!(error = %e, "webhook deliveries cannot start");
                return;
            }
            Err(e) => {
                tracing::error!(error = %e, "webhook deliveries cannot start");
                return;
            }
        };
    let mut every = tokio::time::interval(Duration::from_millis(250));
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        deliverer = match tokio::task::spawn_blocking(move || {
            deliverer.round();
            deliverer
        })
        .await
        {
            Ok(deliverer) => deliverer,
            Err(e) => {
                tracing::error!(error = %e, "webhook deliveries stopped");
                return;
            }
        };
    }
}

struct Deliverer {
    store: Arc<Store>,
    options: DeliveryOptions,
    client: reqwest::blocking::Client,
    /// Cluster mode: the lock that makes this node the one that delivers.
    lease: Option<crate::cluster::Exclusive>,
    /// Cluster mode: when the lock was last asked for.
    lease_asked: Option<Instant>,
    /// When a failing endpoint is tried next.
    next_try: HashMap<u64, Instant>,
}

impl Deliverer {
    fn new(store: Arc<Store>, options: DeliveryOptions) -> Result<Deliverer, reqwest::Error> {
        let client = reqwest::blocking::Client::builder()
            .timeout(TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("almanac-webhooks/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Deliverer {
            store,
            options,
            client,
            lease: None,
            lease_asked: None,
            next_try: HashMap::new(),
        })
    }

    /// Delivers what is due to every endpoint that is not waiting out a backoff.
    fn round(&mut self) {
        if !self.holds_lease() {
            return;
        }
        let hooks = match self.store.read().and_then(|rx| rx.webhooks()) {
            Ok(hooks) => hooks,
            Err(e) => {
                tracing::error!(error = ?e, "reading the webhooks failed");
                return;
            }
        };
        let now = Instant::now();
        for hook in &hooks {
            if hook.suspended || self.next_try.get(&hook.id).is_some_and(|at| *at > now) {
                continue;
            }
            if let Err(e) = self.deliver_due(hook.clone()) {
                tracing::error!(webhook = hook.id, error = ?e, "webhook delivery bookkeeping failed");
            }
        }
        // The states as this round left them.
        if let Ok(hooks) = self.store.read().and_then(|rx| rx.webhooks()) {
            let count = |state: &str| hooks.iter().filter(|h| h.state() == state).count();
            crate::metrics::webhooks(count("failing"), count("retrying"));
        }
    }

    /// Cluster mode: whether this node holds (or has just taken) the delivery lock.
    fn holds_lease(&mut self) -> bool {
        let Some(url) = &self.options.cluster else {
            return true;
        };
        let asked_lately = self
            .lease_asked
            .is_some_and(|at| at.elapsed() < LEASE_RETRY);
        if self.lease.is_none() && !asked_lately {
            self.lease_asked = Some(Instant::now());
            match crate::cluster::try_exclusive(url, "webhook deliveries") {
                Ok(lease) => self.lease = lease,
                Err(e) => tracing::warn!(error = %e, "cannot ask for the webhook delivery lock"),
            }
        }
        self.lease.is_some()
    }

    /// Posts the endpoint's due changes in order until none is left or one fails.
    fn deliver_due(&mut self, mut hook: Webhook) -> Result<(), crate::service::ServiceError> {
        loop {
            let (due, skipped) = webhooks::due(&self.store, &hook, BATCH)?;
            if due.is_empty() {
                if let Some(position) = skipped {
                    webhooks::delivered(&self.store, hook.id, position)?;
                }
                return Ok(());
            }
            for delivery in &due {
                match self.post(&hook, delivery) {
                    Ok(()) => {
                        crate::metrics::webhook_delivery(true);
                        self.next_try.remove(&hook.id);
                        hook = webhooks::delivered(&self.store, hook.id, delivery.position)?;
                    }
                    Err(error) => {
                        crate::metrics::webhook_delivery(false);
                        let now = chrono::Utc::now().naive_utc();
                        let period = chrono::Duration::from_std(self.options.retry_period)
                            .unwrap_or(chrono::Duration::MAX);
                        let failed = webhooks::failed(&self.store, hook.id, &error, now, period)?;
                        let backoff =
                            Duration::from_secs(1u64 << failed.attempts.saturating_sub(1).min(10))
                                .min(MAX_BACKOFF);
                        self.next_try.insert(hook.id, Instant::now() + backoff);
                        tracing::warn!(
                            webhook = hook.id, error = %error, attempts = failed.attempts,
                            suspended = failed.suspended, "webhook delivery failed"
                        );
                        return Ok(());
                    }
                }
            }
        }
    }

    /// One delivery: the change as JSON, signed with the endpoint's key over the time and the
    /// body; `Err` with what went wrong unless the endpoint answered 2xx.
    fn post(&self, hook: &Webhook, delivery: &Delivery) -> Result<(), String> {
        let journaled = &delivery.journaled;
        let token = changes::token(delivery.position);
        let delivery_id = format!("{}-{token}", hook.id);
        let action = match (delivery.public, journaled.action) {
            (true, action) | (false, action @ Action::Deleted) => action.name(),
            (false, _) => "removed",
        };
        let mut body = json!({
            "id": delivery_id,
            "webhook": hook.id,
            "token": token,
            "kind": journaled.kind.name(),
            "record_id": journaled.id,
            "action": action,
            "date_utc": crate::values::datetime::format(&journaled.at),
            "language": journaled.language.code(),
        });
        if delivery.public {
            body["rest_url"] = json!(format!(
                "{}/{}/{}",
                self.options.namespace,
                journaled.kind.collection(),
                journaled.id
            ));
        }
        let body = body.to_string();
        let timestamp = chrono::Utc::now().timestamp();
        let signature = signature(&hook.secret, timestamp, &body);
        let answer = self
            .client
            .post(&hook.url)
            .header("Content-Type", "application/json")
            .header("X-Almanac-Delivery", &delivery_id)
            .header(
                "X-Almanac-Signature",
                format!("t={timestamp},v1={signature}"),
            )
            .body(body)
            .send()
            .map_err(|e| e.to_string())?;
        let status = answer.status();
        if status.is_success() {
            Ok(())
        } else {
            Err(format!("answered {status}"))
        }
    }
}

/// HMAC-SHA256 of `{timestamp}.{body}` with `secret`, in hex.
fn signature(secret: &str, timestamp: i64, body: &str) -> String {
    let mut mac =
        Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key");
    mac.update(format!("{timestamp}.").as_bytes());
    mac.update(body.as_bytes());
    hex::encode(mac.finalize().into_bytes())
}
