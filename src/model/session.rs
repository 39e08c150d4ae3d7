//! Editors' sessions (the manage pages): a signed-in browser's cookie names one, by the hash
//! of its token (the token itself is never stored).

use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub user: u64,
    /// What every form of the session carries (its CSRF token).
    pub form_token: String,
    /// A fingerprint of the user's password hash at sign-in: a changed password ends the
    /// session.
    pub password_stamp: String,
    #[serde(with = "crate::store::codec::date_time")]
    pub created_utc: NaiveDateTime,
    /// The last request seen, to a few minutes (it is written at most that often).
    #[serde(with = "crate::store::codec::date_time")]
    pub seen_utc: NaiveDateTime,
}
