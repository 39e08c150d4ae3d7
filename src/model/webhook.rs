//! Webhooks: endpoints that administrators register to hear of every change (docs/api.md,
//! "Webhooks"). Each endpoint follows the change journal from its own position, advanced only
//! once the endpoint accepted a delivery.

use super::Kind;
use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Webhook {
    pub id: u64,
    pub url: String,
    /// The kinds of record whose changes are delivered (every kind when empty).
    pub kinds: Vec<Kind>,
    /// The key of the deliveries' signatures.
    pub secret: String,
    pub created_utc: NaiveDateTime,
    /// The journal position delivered up to.
    pub delivered: u64,
    /// Since when deliveries have failed, while they do.
    pub failing_since: Option<NaiveDateTime>,
    /// Failed attempts since the last success.
    pub attempts: u32,
    /// Deliveries failed for longer than the retry period: none are tried until it is resumed.
    pub suspended: bool,
    pub last_error: Option<String>,
}

impl Webhook {
    /// Whether changes of `kind` go to this endpoint.
    pub(crate) fn wants(&self, kind: Kind) -> bool {
        self.kinds.is_empty() || self.kinds.contains(&kind)
    }

    /// `active`, `retrying` (deliveries failing, still tried) or `failing` (given up until
    /// resumed).
    pub(crate) fn state(&self) -> &'static str {
        match (self.suspended, self.failing_since) {
            (true, _) => "failing",
            (false, Some(_)) => "retrying",
            (false, None) => "active",
        }
    }
}
