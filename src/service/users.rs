//! User administration: the rules behind `almanac user ...` (docs/operations.md, "Users and
//! roles").

use crate::auth::password;
use crate::model::{Role, User};
use crate::store::{Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum UserError {
    #[error("invalid user name {0:?}: 1-60 characters from A-Z a-z 0-9 . _ - @")]
    InvalidName(String),
    #[error("invalid password: it must be a non-empty UTF-8 string of at most 1024 bytes")]
    InvalidPassword,
    #[error("user name {0} is already taken")]
    NameTaken(String),
    #[error("no user named {0}")]
    UnknownUser(String),
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for UserError {
    fn from(e: StoreError) -> UserError {
        match e {
            StoreError::UserNameTaken(n) => UserError::NameTaken(n),
            StoreError::UnknownUser(n) => UserError::UnknownUser(n),
            other => UserError::Store(other),
        }
    }
}

pub(crate) fn validate_name(name: &str) -> Result<(), UserError> {
    let ok = (1..=60).contains(&name.chars().count())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@'));
    if ok {
        Ok(())
    } else {
        Err(UserError::InvalidName(name.to_string()))
    }
}

pub(crate) fn validate_password(password: &str) -> Result<(), UserError> {
    if password.is_empty() || password.len() > 1024 {
        return Err(UserError::InvalidPassword);
    }
    Ok(())
}

/// Adds a user; the password is hashed here and never stored in clear.
pub fn add(store: &Store, name: &str, role: Role, password: &str) -> Result<User, UserError> {
    validate_name(name)?;
    validate_password(password)?;
    Ok(store.add_user(name, role, password::hash(password))?)
}

pub(crate) fn set_password(store: &Store, name: &str, password: &str) -> Result<User, UserError> {
    validate_password(password)?;
    Ok(store.set_password(name, password::hash(password))?)
}

/// Whether `caller` may list users, add them and reset their passwords (the editors' users
/// page): administrators.
pub(crate) fn may_manage(caller: crate::auth::Caller) -> bool {
    caller.administers()
}

/// Users ordered by ID.
pub(crate) fn list(store: &Store) -> Result<Vec<User>, UserError> {
    let mut users = store.users()?;
    users.sort_by_key(|u| u.id);
    Ok(users)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_names_and_passwords_are_checked() {
        assert!(validate_name("ana.b_c-d@x").is_ok());
        assert!(validate_name(&"a".repeat(60)).is_ok());
        for bad in ["", "a b", "ana:x", "ñ", &"a".repeat(61)] {
            assert!(validate_name(bad).is_err(), "{bad}");
        }
        assert!(validate_password("x").is_ok());
        assert!(validate_password("").is_err());
        assert!(validate_password(&"x".repeat(1025)).is_err());
    }
}
