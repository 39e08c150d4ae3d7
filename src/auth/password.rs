//! Password hashing (argon2id, PHC strings) and generated passwords.

use argon2::password_hash::{rand_core::OsRng, Output, PasswordHash, PasswordHasher, SaltString};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use rand::distributions::Alphanumeric;
use rand::Rng;

/// Length of generated passwords.
pub(crate) const GENERATED_LENGTH: usize = 24;

/// argon2id with m = 19 456 KiB, t = 2, p = 1.
fn hasher() -> Argon2<'static> {
    let params = Params::new(19_456, 2, 1, None).expect("valid argon2 parameters");
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

pub(crate) fn hash(password: &str) -> String {
    let salt = SaltString::generate(&mut OsRng);
    hasher()
        .hash_password(password.as_bytes(), &salt)
        .expect("argon2 hashing with valid parameters")
        .to_string()
}

/// The most argon2 memory one verification may use (64 MiB): a stored hash asking for more
/// never matches, so that no user record can make a login cost unbounded memory.
const MAX_MEMORY_BLOCKS: usize = 64 * 1024;

/// Verifies `password` against a PHC string, computing the hash in `memory` (argon2 blocks,
/// grown as needed and kept by the caller, so that a verifier thread allocates its ~19 MiB
/// once instead of once per guess). The comparison is constant-time. A malformed stored hash,
/// or one beyond [`MAX_MEMORY_BLOCKS`], never matches.
pub(crate) fn verify_in(password: &str, phc: &str, memory: &mut Vec<Block>) -> bool {
    let Ok(parsed) = PasswordHash::new(phc) else {
        return false;
    };
    let (Ok(algorithm), Ok(params)) = (
        Algorithm::try_from(parsed.algorithm),
        Params::try_from(&parsed),
    ) else {
        return false;
    };
    let version = match parsed.version.map(Version::try_from).transpose() {
        Ok(version) => version.unwrap_or_default(),
        Err(_) => return false,
    };
    let (Some(salt), Some(expected)) = (parsed.salt, parsed.hash) else {
        return false;
    };
    let mut salt_bytes = [0u8; 64];
    let Ok(salt) = salt.decode_b64(&mut salt_bytes) else {
        return false;
    };
    let blocks = params.block_count();
    if blocks > MAX_MEMORY_BLOCKS {
        return false;
    }
    if memory.len() < blocks {
        memory.resize(blocks, Block::default());
    }
    let mut computed = vec![0u8; expected.len()];
    Argon2::new(algorithm, version, params)
        .hash_password_into_with_memory(
            password.as_bytes(),
            salt,
            &mut computed,
            &mut memory[..blocks],
        )
        .is_ok()
        && Output::new(&computed).is_ok_and(|computed| computed == expected)
}

/// 24 characters from `[A-Za-z0-9]`, drawn from the operating system's secure source.
pub(crate) fn generate() -> String {
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
        let mut memory = Vec::new();
        assert!(verify_in("s3cret:with:colons", &h, &mut memory));
        assert!(!verify_in("s3cret", &h, &mut memory));
        assert!(!verify_in("x", "not a phc string", &mut memory));
        // Beyond the memory bound: refused without computing.
        let greedy = h.replace("m=19456", "m=1048576");
        assert!(!verify_in("s3cret:with:colons", &greedy, &mut memory));
        assert_eq!(memory.len(), 19_456);
        let p = generate();
        assert_eq!(p.len(), GENERATED_LENGTH);
        assert!(p.chars().all(|c| c.is_ascii_alphanumeric()));
        assert_ne!(p, generate());
    }
}
