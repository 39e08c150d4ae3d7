//! Password hashing (argon2id, PHC strings) and generated passwords.

use argon2::password_hash::{
    rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString,
};
use argon2::{Algorithm, Argon2, Params, Version};
use rand::distributions::Alphanumeric;
use rand::Rng;

/// Length of generated passwords (common.md §8.5).
pub const GENERATED_LENGTH: usize = 24;

/// argon2id with m = 19 456 KiB, t = 2, p = 1: the contract's floor (common.md §3.1).
fn hasher() -> Argon2<'static> {
    let params = Params::new(19_456, 2, 1, None).expect("valid argon2 parameters");
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

pub fn hash(password: &str) -> String {
    let salt = SaltString::generate(&mut OsRng);
    hasher()
        .hash_password(password.as_bytes(), &salt)
        .expect("argon2 hashing with valid parameters")
        .to_string()
}

/// Constant-time verification (argon2's own comparison). A malformed stored hash never matches.
pub fn verify(password: &str, phc: &str) -> bool {
    match PasswordHash::new(phc) {
        Ok(parsed) => hasher()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok(),
        Err(_) => false,
    }
}

/// 24 characters from `[A-Za-z0-9]`, drawn from the operating system's secure source.
pub fn generate() -> String {
    OsRng
        .sample_iter(&Alphanumeric)
        .take(GENERATED_LENGTH)
        .map(char::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_verify_and_generated_passwords_have_the_contract_shape() {
        let h = hash("s3cret:with:colons");
        assert!(h.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"));
        assert!(verify("s3cret:with:colons", &h));
        assert!(!verify("s3cret", &h));
        assert!(!verify("x", "not a phc string"));
        let p = generate();
        assert_eq!(p.len(), GENERATED_LENGTH);
        assert!(p.chars().all(|c| c.is_ascii_alphanumeric()));
        assert_ne!(p, generate());
    }
}
