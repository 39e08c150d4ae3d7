//! Users, HTTP Basic authentication and the capability rules.
//!
//! Authentication (common.md §3.1, §3.2) turns an `Authorization` header into a [`Caller`].
//! argon2 is slow by design, so successful verifications are remembered for
//! [`CACHE_TTL`] in a bounded [`CredentialCache`] keyed by a keyed hash of the header value
//! (never the password itself).

pub mod capabilities;
pub mod password;

pub use capabilities::{Caller, Capability};

use crate::model::User;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a verified credential is trusted without running argon2 again.
pub const CACHE_TTL: Duration = Duration::from_secs(300);
/// Upper bound on remembered credentials.
pub const CACHE_CAPACITY: usize = 4096;

/// Why a request's credentials were refused (all 401).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthError {
    /// The Basic payload is not base64, not UTF-8, or has no colon.
    Malformed,
    UnknownUser,
    WrongPassword,
}

/// The users of a running server, by lower-cased name. Users only change while the server is
/// stopped (the CLI refuses a locked data directory), so this is loaded once at start.
pub struct Authenticator {
    users: HashMap<String, Arc<User>>,
    cache: CredentialCache,
}

impl Authenticator {
    pub fn new(users: Vec<User>) -> Authenticator {
        Authenticator {
            users: users
                .into_iter()
                .map(|u| (u.name.to_ascii_lowercase(), Arc::new(u)))
                .collect(),
            cache: CredentialCache::new(),
        }
    }

    /// Resolves the `Authorization` header: none or a non-Basic scheme is anonymous.
    pub async fn authenticate(&self, header: Option<&[u8]>) -> Result<Caller, AuthError> {
        let Some(header) = header else {
            return Ok(Caller::Anonymous);
        };
        let Some(payload) = basic_payload(header) else {
            return Ok(Caller::Anonymous);
        };
        let (name, password) = split_credentials(payload)?;
        let user = self
            .users
            .get(&name.to_ascii_lowercase())
            .cloned()
            .ok_or(AuthError::UnknownUser)?;
        let key = self.cache.key(header);
        if self.cache.is_fresh(&key, &user) {
            return Ok(caller_of(&user));
        }
        let verified = {
            let user = user.clone();
            tokio::task::spawn_blocking(move || password::verify(&password, &user.password_hash))
                .await
                .unwrap_or(false)
        };
        if !verified {
            return Err(AuthError::WrongPassword);
        }
        self.cache.remember(key, &user);
        Ok(caller_of(&user))
    }
}

fn caller_of(user: &User) -> Caller {
    Caller::User {
        id: user.id,
        role: user.role,
    }
}

/// The payload of a `Basic` header, if the scheme is Basic (scheme names are case-insensitive).
fn basic_payload(header: &[u8]) -> Option<&[u8]> {
    let header = header.trim_ascii();
    let space = header.iter().position(|b| *b == b' ')?;
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

struct CacheEntry {
    user_id: u64,
    /// Keyed hash of the PHC string the credential was verified against: a changed password
    /// (or a recreated user) invalidates the entry.
    hash_fingerprint: [u8; 32],
    role: crate::model::Role,
    verified_at: Instant,
}

/// Bounded, time-limited memory of verified `Authorization` header values.
pub struct CredentialCache {
    secret: [u8; 32],
    entries: Mutex<HashMap<[u8; 32], CacheEntry>>,
}

impl CredentialCache {
    fn new() -> CredentialCache {
        CredentialCache {
            secret: rand::random(),
            entries: Mutex::new(HashMap::new()),
        }
    }

    fn key(&self, bytes: &[u8]) -> [u8; 32] {
        let mut mac =
            Hmac::<Sha256>::new_from_slice(&self.secret).expect("HMAC accepts any key length");
        mac.update(bytes);
        mac.finalize().into_bytes().into()
    }

    fn is_fresh(&self, key: &[u8; 32], user: &User) -> bool {
        let fingerprint = self.key(user.password_hash.as_bytes());
        let entries = self.entries.lock().expect("credential cache lock");
        entries.get(key).is_some_and(|e| {
            e.user_id == user.id
                && e.role == user.role
                && e.hash_fingerprint == fingerprint
                && e.verified_at.elapsed() < CACHE_TTL
        })
    }

    fn remember(&self, key: [u8; 32], user: &User) {
        let entry = CacheEntry {
            user_id: user.id,
            hash_fingerprint: self.key(user.password_hash.as_bytes()),
            role: user.role,
            verified_at: Instant::now(),
        };
        let mut entries = self.entries.lock().expect("credential cache lock");
        if entries.len() >= CACHE_CAPACITY {
            entries.retain(|_, e| e.verified_at.elapsed() < CACHE_TTL);
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
        assert_eq!(auth.authenticate(None).await, Ok(Caller::Anonymous));
        assert_eq!(
            auth.authenticate(Some(b"Bearer abc")).await,
            Ok(Caller::Anonymous)
        );
        assert_eq!(auth.authenticate(Some(&basic("ANA:pa:ss"))).await, Ok(ana));
        // Second time from the cache.
        assert_eq!(auth.authenticate(Some(&basic("ANA:pa:ss"))).await, Ok(ana));
        assert_eq!(
            auth.authenticate(Some(&basic("ana:pa"))).await,
            Err(AuthError::WrongPassword)
        );
        assert_eq!(
            auth.authenticate(Some(&basic(":x"))).await,
            Err(AuthError::UnknownUser)
        );
        assert_eq!(
            auth.authenticate(Some(&basic("nocolon"))).await,
            Err(AuthError::Malformed)
        );
        assert_eq!(
            auth.authenticate(Some(b"Basic !!!")).await,
            Err(AuthError::Malformed)
        );
    }

    #[test]
    fn cache_entries_die_with_a_password_change() {
        let cache = CredentialCache::new();
        let mut user = User {
            id: 1,
            name: "a".into(),
            role: Role::Editor,
            password_hash: "h1".into(),
        };
        let key = cache.key(b"Basic xyz");
        cache.remember(key, &user);
        assert!(cache.is_fresh(&key, &user));
        user.password_hash = "h2".into();
        assert!(!cache.is_fresh(&key, &user));
        user.password_hash = "h1".into();
        user.role = Role::Subscriber;
        assert!(!cache.is_fresh(&key, &user));
    }
}
