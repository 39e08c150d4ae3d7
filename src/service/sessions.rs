//! Editors' sessions (docs/pages.md, "Editors' pages"): a browser signs in with a user's name
//! and password and gets a cookie naming a session kept in the store, so that it survives
//! restarts and holds on every node of a cluster. A session ends at sign-out, after
//! [`IDLE`] without a request, [`LIFETIME`] after sign-in, and when its user's password
//! changes or the user is removed.

use crate::model::session::Session;
use crate::model::User;
use crate::store::{Reads, Store, StoreResult};
use base64::Engine;
use chrono::{Duration, NaiveDateTime};
use rand::RngCore;
use sha2::{Digest, Sha256};

/// A session unused this long ends.
pub(crate) const IDLE: Duration = Duration::hours(12);
/// A session ends this long after sign-in, used or not.
pub(crate) const LIFETIME: Duration = Duration::days(7);
/// How stale a session's last-seen time may be before a request writes it again.
const SEEN_GRANULARITY: Duration = Duration::minutes(5);

/// A random token: 32 bytes, URL-safe base64.
pub(crate) fn random_token() -> String {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The key a session is stored under: the hex SHA-256 of its token.
fn key(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// What a session remembers of its user's password: a changed password ends it.
fn password_stamp(user: &User) -> String {
    hex::encode(&Sha256::digest(user.password_hash.as_bytes())[..16])
}

/// Opens a session for `user`, who has just proved their password; returns its token (the
/// cookie's value) and the session. Sessions of the user that have ended are removed.
pub(crate) fn open(
    store: &Store,
    user: &User,
    now: NaiveDateTime,
) -> StoreResult<(String, Session)> {
    let token = random_token();
    let session = Session {
        user: user.id,
        form_token: random_token(),
        password_stamp: password_stamp(user),
        created_utc: now,
        seen_utc: now,
    };
    store.write(|tx| {
        for (key, stale) in tx.all_sessions()? {
            if stale.user == user.id && ended(&stale, now) {
                tx.set_session(&key, None)?;
            }
        }
        tx.set_session(&key(&token), Some(&session))
    })?;
    Ok((token, session))
}

fn ended(session: &Session, now: NaiveDateTime) -> bool {
    now - session.seen_utc > IDLE || now - session.created_utc > LIFETIME
}

/// The session of `token` and its user, if it is still open.
pub(crate) fn resolve(
    store: &Store,
    token: &str,
    now: NaiveDateTime,
) -> StoreResult<Option<(Session, User)>> {
    let key = key(token);
    let rx = store.read()?;
    let Some(session) = rx.session(&key)? else {
        return Ok(None);
    };
    let user = rx.user(session.user)?;
    drop(rx);
    let Some(user) = user.filter(|u| password_stamp(u) == session.password_stamp) else {
        store.write(|tx| tx.set_session(&key, None))?;
        return Ok(None);
    };
    if ended(&session, now) {
        store.write(|tx| tx.set_session(&key, None))?;
        return Ok(None);
    }
    if now - session.seen_utc > SEEN_GRANULARITY {
        let seen = Session {
            seen_utc: now,
            ..session.clone()
        };
        store.write(|tx| tx.set_session(&key, Some(&seen)))?;
    }
    Ok(Some((session, user)))
}

/// Ends the session of `token` (sign-out).
pub(crate) fn close(store: &Store, token: &str) -> StoreResult<()> {
    store.write(|tx| tx.set_session(&key(token), None))
}

/// Removes every session that has ended (the server's hourly housekeeping).
pub(crate) fn purge(store: &Store, now: NaiveDateTime) -> StoreResult<usize> {
    let ended: Vec<String> = store
        .read()?
        .all_sessions()?
        .into_iter()
        .filter(|(_, s)| ended(s, now))
        .map(|(k, _)| k)
        .collect();
    if !ended.is_empty() {
        store.write(|tx| {
            for key in &ended {
                tx.set_session(key, None)?;
            }
            Ok::<(), crate::store::StoreError>(())
        })?;
    }
    Ok(ended.len())
}

/// Whether `given` is the session's form token (compared in constant time).
pub(crate) fn form_token_matches(session: &Session, given: &str) -> bool {
    super::secret_eq(session.form_token.as_bytes(), given.as_bytes())
}
