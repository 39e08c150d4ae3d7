//! Users, HTTP Basic authentication and the capability rules.
//!
//! Authentication (docs/api.md, "Authentication") turns an `Authorization` header into a [`Caller`].
//! argon2 is slow and memory-hungry by design, so verifications run a few at a time
//! ([`verifier`]), and the outcome of a check is remembered for [`CACHE_TTL`] in bounded
//! [`CredentialCache`]s keyed by a keyed hash of the decoded user name and password (never the
//! password itself): successes so that clients are not verified on every request, failures so
//! that a client repeating refused credentials costs no argon2 run either. New attempts are
//! counted before they are verified and lock the user name or the client address for a while
//! ([`throttle`], an extension); the same credentials arriving together are verified once.

pub(crate) mod capabilities;
pub(crate) mod password;
pub(crate) mod throttle;
pub(crate) mod verifier;

pub use capabilities::{Caller, Capability};

use crate::model::User;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use throttle::FailureThrottle;
use verifier::Verifier;

/// How long the outcome of a credential check is trusted without running argon2 again.
pub(crate) const CACHE_TTL: Duration = Duration::from_secs(300);
/// Upper bound on remembered credentials (of each outcome).
pub(crate) const CACHE_CAPACITY: usize = 4096;

/// Why a request's credentials were refused (401, or 429 for `Throttled`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AuthError {
    /// The Basic payload is not base64, not UTF-8, or has no colon.
    Malformed,
    UnknownUser,
    WrongPassword,
    /// Too many recent failures for this user name or client address (extension); the
    /// credentials were not checked.
    Throttled {
        retry_after: Duration,
    },
    /// Every password verifier stayed busy for [`verifier::VERIFY_WAIT`] (503): the
    /// credentials were not checked.
    Busy,
}

/// The users of a running server, by lower-cased name: loaded at start, and again whenever a
/// cluster node applies user changes written elsewhere ([`Authenticator::replace_users`]).
pub struct Authenticator {
    users: std::sync::RwLock<HashMap<String, Arc<User>>>,
    verified: CredentialCache<()>,
    refused: CredentialCache<AuthError>,
    throttle: FailureThrottle,
    /// Guesses of event passwords (`?password=`), per client address.
    event_passwords: FailureThrottle,
    verifier: Verifier,
    /// Checks under way, by credentials: see [`Authenticator::verify`].
    checking: InFlight,
}

impl Authenticator {
    pub fn new(users: Vec<User>) -> Authenticator {
        Authenticator {
            users: std::sync::RwLock::new(by_name(users)),
            verified: CredentialCache::new(),
            refused: CredentialCache::new(),
            throttle: FailureThrottle::new(),
            event_passwords: FailureThrottle::new(),
            verifier: Verifier::new(),
            checking: InFlight::default(),
        }
    }

    /// Resolves the `Authorization` header of a request from `client`: none or a non-Basic
    /// scheme is anonymous.
    pub(crate) async fn authenticate(
        &self,
        header: Option<&[u8]>,
        client: IpAddr,
    ) -> Result<Caller, AuthError> {
        let Some(header) = header else {
            return Ok(Caller::Anonymous);
        };
        let Some(payload) = basic_payload(header) else {
            return Ok(Caller::Anonymous);
        };
        let (name, password) = split_credentials(payload)?;
        self.verify(&name, &password, client)
            .await
            .map(|user| caller_of(&user))
    }

    /// Checks a user's name and password, as HTTP Basic and the editors' sign-in form do:
    /// the same caches, throttle and verifiers.
    pub(crate) async fn verify(
        &self,
        name: &str,
        password: &str,
        client: IpAddr,
    ) -> Result<Arc<User>, AuthError> {
        let name = name.to_ascii_lowercase();
        let user = self.users.read().expect("users lock").get(&name).cloned();
        // The caches are keyed on what the credentials say, not on how the header spells them
        // (extra spaces, another base64 padding): a respelling is the same credentials.
        let credentials = format!("{name}\0{password}");
        let credentials = credentials.as_bytes();
        // Credentials verified recently pass even while their user or address is locked: they
        // prove knowledge of the password, they are not a guess.
        if self.verified.get(credentials, user.as_deref()).is_some() {
            return Ok(user.expect("only known users are verified"));
        }
        // Credentials refused recently get the same answer again, unchecked and uncounted:
        // repeating them teaches nothing (a misconfigured client retrying is not guessing).
        if let Some(refusal) = self.refused.get(credentials, user.as_deref()) {
            return Err(refusal);
        }
        // The same credentials arriving together (a client opening many connections at once)
        // are checked once: the others wait for that check and take its outcome from the
        // caches, or its `Busy` (which is not cached: each waiter would otherwise wait for a
        // verifier in turn). Each admitted one would run argon2, and count as a possible
        // failure until it ended, locking the user past the free failures with the right
        // password.
        let mut turn = self.checking.turn(self.verified.mac(credentials)).await;
        if self.verified.get(credentials, user.as_deref()).is_some() {
            return Ok(user.expect("only known users are verified"));
        }
        if let Some(refusal) = self.refused.get(credentials, user.as_deref()) {
            return Err(refusal);
        }
        if turn.found_busy() {
            return Err(AuthError::Busy);
        }
        // Unknown names are counted against the address only: they have no account to protect,
        // and counting them per name would let a flood of invented names evict real records.
        let known_name = user.as_ref().map(|_| name.as_str());
        self.throttle
            .admit(known_name, client, Instant::now())
            .map_err(|retry_after| {
                crate::metrics::throttled(crate::metrics::Throttled::Login);
                AuthError::Throttled { retry_after }
            })?;
        let Some(user) = user else {
            self.refused
                .remember(credentials, None, AuthError::UnknownUser);
            return Err(AuthError::UnknownUser);
        };
        let verified = match self
            .verifier
            .verify(password.to_string(), user.password_hash.clone())
            .await
        {
            Ok(verified) => verified,
            Err(verifier::Busy) => {
                crate::metrics::verifier_busy();
                self.throttle.withdraw(known_name, client);
                turn.note_busy();
                return Err(AuthError::Busy);
            }
        };
        if !verified {
            self.refused
                .remember(credentials, Some(&user), AuthError::WrongPassword);
            return Err(AuthError::WrongPassword);
        }
        self.throttle.record_success(known_name, client);
        self.verified.remember(credentials, Some(&user), ());
        Ok(user)
    }

    /// Admits a request that tries an event password from `client`, or says how long the
    /// address must wait: event passwords are guessed like login passwords, and throttled the
    /// same way (per address). Only a guess that failed is counted, once it has
    /// ([`Authenticator::event_password_failed`]): counting every request first would let
    /// many concurrent right passwords lock an address.
    pub(crate) fn admit_event_password(&self, client: IpAddr) -> Result<(), AuthError> {
        self.event_passwords
            .check(None, client, Instant::now())
            .map_err(|retry_after| {
                crate::metrics::throttled(crate::metrics::Throttled::EventPassword);
                AuthError::Throttled { retry_after }
            })
    }

    /// The event password `client` sent was a failed guess.
    pub(crate) fn event_password_failed(&self, client: IpAddr) {
        self.event_passwords
            .record_failure(None, client, Instant::now());
    }
}

fn by_name(users: Vec<User>) -> HashMap<String, Arc<User>> {
    users
        .into_iter()
        .map(|u| (u.name.to_ascii_lowercase(), Arc::new(u)))
        .collect()
}

impl Authenticator {
    /// Replaces the known users (cached outcomes stay valid only for unchanged users: they
    /// carry the user's fingerprint).
    pub(crate) fn replace_users(&self, users: Vec<User>) {
        *self.users.write().expect("users lock") = by_name(users);
    }
}

pub(crate) fn caller_of(user: &User) -> Caller {
    Caller::User {
        id: user.id,
        role: user.role,
    }
}

/// The payload of a `Basic` header, if the scheme is Basic (scheme names are case-insensitive).
/// A bare `Basic` has an empty payload, which has no colon (401, not anonymous).
fn basic_payload(header: &[u8]) -> Option<&[u8]> {
    let header = header.trim_ascii();
    let space = header
        .iter()
        .position(|b| *b == b' ')
        .unwrap_or(header.len());
    let (scheme, rest) = header.split_at(space);
    scheme
        .eq_ignore_ascii_case(b"basic")
        .then(|| rest.trim_ascii())
}

/// base64 → UTF-8 → split at the first colon.
fn split_credentials(payload: &[u8]) -> Result<(String, String), AuthError> {
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(payload)
        .map_err(|_| AuthError::Malformed)?;
    let text = String::from_utf8(decoded).map_err(|_| AuthError::Malformed)?;
    let (name, password) = text.split_once(':').ok_or(AuthError::Malformed)?;
    Ok((name.to_string(), password.to_string()))
}

/// Credential checks under way, each a lock that the attempts with the same credentials take
/// in turn, holding whether the last check found every verifier busy; an entry lives while
/// someone holds or waits for its lock.
#[derive(Default)]
struct InFlight {
    checks: Mutex<HashMap<[u8; 32], Arc<tokio::sync::Mutex<bool>>>>,
}

/// An attempt's turn at checking its credentials; given back when dropped.
struct Turn<'a> {
    in_flight: &'a InFlight,
    key: [u8; 32],
    held: Option<tokio::sync::OwnedMutexGuard<bool>>,
}

impl InFlight {
    /// Waits until no other attempt with the credentials whose cache key is `key` is checking
    /// them.
    async fn turn(&self, key: [u8; 32]) -> Turn<'_> {
        let check = self
            .checks
            .lock()
            .expect("checks lock")
            .entry(key)
            .or_default()
            .clone();
        let mut turn = Turn {
            in_flight: self,
            key,
            held: None,
        };
        turn.held = Some(check.lock_owned().await);
        turn
    }
}

impl Turn<'_> {
    /// The attempt before this one with the same credentials found every verifier busy.
    fn found_busy(&self) -> bool {
        self.held.as_deref().copied().unwrap_or(false)
    }

    /// This attempt found every verifier busy: those waiting with the same credentials are
    /// answered so at once.
    fn note_busy(&mut self) {
        if let Some(held) = self.held.as_deref_mut() {
            *held = true;
        }
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let mut checks = self.in_flight.checks.lock().expect("checks lock");
        drop(self.held.take());
        // The map's reference is the last one: nobody holds or waits for this check.
        if checks
            .get(&self.key)
            .is_some_and(|check| Arc::strong_count(check) == 1)
        {
            checks.remove(&self.key);
        }
    }
}

struct CacheEntry<T> {
    outcome: T,
    /// Keyed hash of the user's ID, role and PHC string at the time of the check (`None` for
    /// an unknown user): a changed password, role or recreated user invalidates the entry.
    user_fingerprint: Option<[u8; 32]>,
    checked_at: Instant,
}

/// Bounded, time-limited memory of checked credentials (`name\0password`, the name
/// lower-cased) and what the check concluded (`T`).
pub(crate) struct CredentialCache<T> {
    secret: [u8; 32],
    entries: Mutex<HashMap<[u8; 32], CacheEntry<T>>>,
}

impl<T: Copy> CredentialCache<T> {
    fn new() -> CredentialCache<T> {
        CredentialCache {
            secret: rand::random(),
            entries: Mutex::new(HashMap::new()),
        }
    }

    fn mac(&self, bytes: &[u8]) -> [u8; 32] {
        let mut mac =
            Hmac::<Sha256>::new_from_slice(&self.secret).expect("HMAC accepts any key length");
        mac.update(bytes);
        mac.finalize().into_bytes().into()
    }

    fn fingerprint(&self, user: Option<&User>) -> Option<[u8; 32]> {
        user.map(|u| self.mac(format!("{}\0{:?}\0{}", u.id, u.role, u.password_hash).as_bytes()))
    }

    /// The remembered outcome for these credentials, if fresh and still about the same user.
    fn get(&self, credentials: &[u8], user: Option<&User>) -> Option<T> {
        let key = self.mac(credentials);
        let fingerprint = self.fingerprint(user);
        let entries = self.entries.lock().expect("credential cache lock");
        // Plain `==` on the fingerprint is fine: both sides are HMACs under the cache's secret of
        // server-side data, so timing reveals nothing a client could use.
        entries
            .get(&key)
            .filter(|e| e.user_fingerprint == fingerprint && e.checked_at.elapsed() < CACHE_TTL)
            .map(|e| e.outcome)
    }

    fn remember(&self, credentials: &[u8], user: Option<&User>, outcome: T) {
        let entry = CacheEntry {
            outcome,
            user_fingerprint: self.fingerprint(user),
            checked_at: Instant::now(),
        };
        let key = self.mac(credentials);
        let mut entries = self.entries.lock().expect("credential cache lock");
        if entries.len() >= CACHE_CAPACITY {
            entries.retain(|_, e| e.checked_at.elapsed() < CACHE_TTL);
            if entries.len() >= CACHE_CAPACITY {
                // Still full of live entries: forget them all rather than grow without bound;
                // the cost is one argon2 verification per active client.
                entries.clear();
            }
        }
        entries.insert(key, entry);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Role;

    const CLIENT: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

    fn basic(s: &str) -> Vec<u8> {
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(s)
        )
        .into_bytes()
    }

    fn authenticator() -> Authenticator {
        Authenticator::new(vec![User {
            id: 3,
            name: "Ana".into(),
            role: Role::Author,
            password_hash: password::hash("pa:ss"),
        }])
    }

    #[tokio::test]
    async fn basic_credentials_resolve_to_callers_or_errors() {
        let auth = authenticator();
        let ana = Caller::User {
            id: 3,
            role: Role::Author,
        };
        assert_eq!(auth.authenticate(None, CLIENT).await, Ok(Caller::Anonymous));
        assert_eq!(
            auth.authenticate(Some(b"Bearer abc"), CLIENT).await,
            Ok(Caller::Anonymous)
        );
        assert_eq!(
            auth.authenticate(Some(&basic("ANA:pa:ss")), CLIENT).await,
            Ok(ana)
        );
        // Second time from the cache.
        assert_eq!(
            auth.authenticate(Some(&basic("ANA:pa:ss")), CLIENT).await,
            Ok(ana)
        );
        assert_eq!(
            auth.authenticate(Some(&basic("ana:pa")), CLIENT).await,
            Err(AuthError::WrongPassword)
        );
        assert_eq!(
            auth.authenticate(Some(&basic(":x")), CLIENT).await,
            Err(AuthError::UnknownUser)
        );
        assert_eq!(
            auth.authenticate(Some(&basic("nocolon")), CLIENT).await,
            Err(AuthError::Malformed)
        );
        assert_eq!(
            auth.authenticate(Some(b"Basic !!!"), CLIENT).await,
            Err(AuthError::Malformed)
        );
        for bare in [&b"Basic"[..], b"basic ", b" BASIC  "] {
            assert_eq!(
                auth.authenticate(Some(bare), CLIENT).await,
                Err(AuthError::Malformed),
                "{bare:?}"
            );
        }
        assert_eq!(
            auth.authenticate(Some(b"Bearer x"), CLIENT).await,
            Ok(Caller::Anonymous)
        );
        assert_eq!(
            auth.authenticate(Some(b"Basicx"), CLIENT).await,
            Ok(Caller::Anonymous)
        );
    }

    #[tokio::test]
    async fn new_failures_lock_the_name_but_not_recently_verified_credentials() {
        let auth = authenticator();
        let right = basic("ana:pa:ss");
        assert!(auth.authenticate(Some(&right), CLIENT).await.is_ok());
        // Repeating the same refused credentials is answered from memory and not counted.
        for _ in 0..=throttle::USER_FREE_FAILURES * 2 {
            assert_eq!(
                auth.authenticate(Some(&basic("ana:same")), CLIENT).await,
                Err(AuthError::WrongPassword)
            );
        }
        for guess in 0..throttle::USER_FREE_FAILURES {
            assert_eq!(
                auth.authenticate(Some(&basic(&format!("ana:guess{guess}"))), CLIENT)
                    .await,
                Err(AuthError::WrongPassword)
            );
        }
        assert!(matches!(
            auth.authenticate(Some(&basic("ana:another")), CLIENT).await,
            Err(AuthError::Throttled { retry_after }) if retry_after <= throttle::FIRST_LOCK
        ));
        // Not verified before: refused unchecked, whatever the password.
        assert!(matches!(
            auth.authenticate(Some(&basic("ana:pa:ss:")), CLIENT).await,
            Err(AuthError::Throttled { .. })
        ));
        // The credentials verified before still pass, however the header spells them.
        assert!(auth.authenticate(Some(&right), CLIENT).await.is_ok());
        let respelled = format!("Basic    {}", &basic("ANA:pa:ss")[6..].escape_ascii());
        assert!(auth
            .authenticate(Some(respelled.as_bytes()), CLIENT)
            .await
            .is_ok());
    }

    #[tokio::test]
    async fn a_burst_of_the_same_right_credentials_is_never_throttled() {
        // A client opening many connections at once (after a restart, nothing cached): were
        // each attempt admitted as a possible failure, those past the free failures would be
        // refused before the first verification ended.
        let auth = authenticator();
        let right = basic("ana:pa:ss");
        let attempts =
            (0..throttle::USER_FREE_FAILURES * 3).map(|_| auth.authenticate(Some(&right), CLIENT));
        for outcome in futures_util::future::join_all(attempts).await {
            assert!(outcome.is_ok(), "{outcome:?}");
        }
    }

    #[test]
    fn cache_entries_die_with_a_password_or_role_change() {
        let cache = CredentialCache::<()>::new();
        let mut user = User {
            id: 1,
            name: "a".into(),
            role: Role::Editor,
            password_hash: "h1".into(),
        };
        cache.remember(b"Basic xyz", Some(&user), ());
        assert_eq!(cache.get(b"Basic xyz", Some(&user)), Some(()));
        assert_eq!(cache.get(b"Basic xyZ", Some(&user)), None);
        assert_eq!(cache.get(b"Basic xyz", None), None);
        user.password_hash = "h2".into();
        assert_eq!(cache.get(b"Basic xyz", Some(&user)), None);
        user.password_hash = "h1".into();
        user.role = Role::Subscriber;
        assert_eq!(cache.get(b"Basic xyz", Some(&user)), None);
    }
}
