//! Webhooks (docs/api.md, "Webhooks"): administrators register endpoints; the server's
//! delivery task (`crate::delivery`) posts them the change journal's entries after each
//! endpoint's position, one at a time and in order, and moves the position on only once the
//! endpoint accepted a delivery (at least once). An endpoint that keeps failing for longer
//! than the retry period is suspended until an administrator resumes it.

use super::changes;
use super::{refuse_any, Refusals, Request, ServiceError, ServiceResult};
use crate::auth::Caller;
use crate::model::journal::Journaled;
use crate::model::webhook::Webhook;
use crate::model::{Kind, Sequence};
use crate::store::{Reads, Store, StoreError};
use crate::values::{Invalid, SubCode};
use chrono::NaiveDateTime;

/// What a registration gives.
#[derive(Debug, Clone, Default)]
pub(crate) struct WebhookWrite {
    pub url: String,
    pub kinds: Vec<Kind>,
    /// The signing key; made up when not given.
    pub secret: Option<String>,
}

/// Signing keys given by hand are at least this long.
const MIN_SECRET: usize = 16;

fn administrator(caller: Caller) -> ServiceResult<()> {
    if caller.administers() {
        Ok(())
    } else {
        Err(ServiceError::Forbidden)
    }
}

/// The refusals of a registration: an absolute `http(s)` URL without credentials, a key long
/// enough.
fn check(write: &WebhookWrite) -> Refusals {
    let mut refusals = Refusals::new();
    let url = url::Url::parse(&write.url).ok().filter(|u| {
        matches!(u.scheme(), "http" | "https")
            && u.host_str().is_some()
            && u.username().is_empty()
            && u.password().is_none()
    });
    if url.is_none() {
        refusals.push((
            "url".into(),
            Invalid::new(
                SubCode::InvalidFormat,
                "is not an absolute http or https URL without credentials.",
            ),
        ));
    }
    if write
        .secret
        .as_ref()
        .is_some_and(|s| s.chars().count() < MIN_SECRET)
    {
        refusals.push((
            "secret".into(),
            Invalid::new(
                SubCode::OutOfBounds,
                format!("must be at least {MIN_SECRET} characters long."),
            ),
        ));
    }
    refusals
}

/// Registers an endpoint (administrators): it hears of the changes from now on.
pub(crate) fn add(
    store: &Store,
    caller: Caller,
    write: &WebhookWrite,
    mut invalid: Refusals,
) -> ServiceResult<Webhook> {
    invalid.extend(check(write));
    refuse_any(invalid)?;
    administrator(caller)?;
    let secret = write
        .secret
        .clone()
        .unwrap_or_else(|| hex::encode(rand::random::<[u8; 32]>()));
    Ok(store.write(|tx| {
        let webhook = Webhook {
            id: tx.next_id(Sequence::Webhooks)?,
            url: write.url.clone(),
            kinds: write.kinds.clone(),
            secret,
            created_utc: chrono::Utc::now().naive_utc(),
            delivered: tx.journal_head()?,
            failing_since: None,
            attempts: 0,
            suspended: false,
            last_error: None,
        };
        tx.set_webhook(webhook.id, Some(&webhook))?;
        Ok::<_, StoreError>(webhook)
    })?)
}

/// Every endpoint (administrators).
pub(crate) fn list(store: &Store, caller: Caller) -> ServiceResult<Vec<Webhook>> {
    administrator(caller)?;
    Ok(store.read()?.webhooks()?)
}

fn unknown() -> ServiceError {
    ServiceError::Invalid(vec![(
        "id".into(),
        Invalid::new(SubCode::InvalidReference, "does not name a webhook."),
    )])
}

/// One endpoint (administrators).
pub(crate) fn get(store: &Store, caller: Caller, id: u64) -> ServiceResult<Webhook> {
    administrator(caller)?;
    store.read()?.webhook(id)?.ok_or_else(unknown)
}

/// Removes an endpoint (administrators): nothing more is delivered to it.
pub(crate) fn remove(store: &Store, caller: Caller, id: u64) -> ServiceResult<Webhook> {
    administrator(caller)?;
    store.write(|tx| {
        let webhook = tx.webhook(id)?.ok_or_else(unknown)?;
        tx.set_webhook(id, None)?;
        Ok(webhook)
    })
}

/// Resumes a suspended endpoint (administrators): deliveries start again where they stopped.
pub(crate) fn resume(store: &Store, caller: Caller, id: u64) -> ServiceResult<Webhook> {
    administrator(caller)?;
    change(store, id, |webhook| {
        webhook.suspended = false;
        webhook.failing_since = None;
        webhook.attempts = 0;
    })
}

fn change(store: &Store, id: u64, f: impl FnOnce(&mut Webhook)) -> ServiceResult<Webhook> {
    store.write(|tx| {
        let mut webhook = tx.webhook(id)?.ok_or_else(unknown)?;
        f(&mut webhook);
        tx.set_webhook(id, Some(&webhook))?;
        Ok(webhook)
    })
}

/// A change due to an endpoint.
#[derive(Debug, Clone)]
pub(crate) struct Delivery {
    pub position: u64,
    pub journaled: Journaled,
    /// Whether the public may read the record now (when not, the delivery says `removed`,
    /// like the change feed to an anonymous reader).
    pub public: bool,
}

/// What is due to `webhook`: the next changes after its position of the kinds it wants (at
/// most `limit`), and the position past the changes it does not want that were looked at.
pub(crate) fn due(
    store: &Store,
    webhook: &Webhook,
    limit: usize,
) -> ServiceResult<(Vec<Delivery>, Option<u64>)> {
    let rx = store.read()?;
    let stretch = rx.journal_after(webhook.delivered, limit, limit * 20, |j| {
        webhook.wants(j.kind)
    })?;
    let public = Request {
        caller: Caller::Anonymous,
        language: crate::model::Language::En,
        explicit_language: None,
        now: chrono::Utc::now().naive_utc(),
    };
    let mut due = Vec::with_capacity(stretch.entries.len());
    for (position, journaled) in stretch.entries {
        let public = changes::readable(&rx, &public, &journaled)?;
        due.push(Delivery {
            position,
            journaled,
            public,
        });
    }
    let skipped = if due.is_empty() {
        stretch.more_after
    } else {
        None
    };
    Ok((due, skipped))
}

/// The endpoint accepted the deliveries up to `position`.
pub(crate) fn delivered(store: &Store, id: u64, position: u64) -> ServiceResult<Webhook> {
    change(store, id, |webhook| {
        webhook.delivered = webhook.delivered.max(position);
        webhook.failing_since = None;
        webhook.attempts = 0;
        webhook.last_error = None;
    })
}

/// A delivery to the endpoint failed at `now`: after failures for `give_up_after`, the
/// endpoint is suspended.
pub(crate) fn failed(
    store: &Store,
    id: u64,
    error: &str,
    now: NaiveDateTime,
    give_up_after: chrono::Duration,
) -> ServiceResult<Webhook> {
    change(store, id, |webhook| {
        let since = *webhook.failing_since.get_or_insert(now);
        webhook.attempts += 1;
        webhook.last_error = Some(error.to_string());
        if now - since >= give_up_after {
            webhook.suspended = true;
        }
    })
}

/// The kinds named by a comma-separated list of collections (`events,venues`); every kind
/// for an empty list.
pub(crate) fn parse_kinds(text: &str) -> Result<Vec<Kind>, Invalid> {
    let mut kinds = Vec::new();
    for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let kind = Kind::ALL
            .into_iter()
            .find(|k| k.collection() == name)
            .ok_or_else(|| {
                Invalid::new(
                    SubCode::NotInEnum,
                    "must list events, venues, organizers, categories or tags.",
                )
            })?;
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    Ok(kinds)
}
