//! The one place where records become bytes: bincode 1.3 inside a small versioned envelope.
//!
//! Envelope: `[b'A', CODEC_VERSION]` followed by the bincode payload. The version byte lets a
//! later release read old records and migrate them; a record written by an unknown version is
//! refused instead of being misread.

use serde::de::DeserializeOwned;
use serde::Serialize;

const MAGIC: u8 = b'A';
/// Bumped whenever the encoding of any stored type changes incompatibly.
pub const CODEC_VERSION: u8 = 1;

#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    #[error("stored record is not an almanac record")]
    NotARecord,
    #[error("stored record has codec version {0}, this build reads version {CODEC_VERSION}")]
    UnknownVersion(u8),
    #[error("stored record cannot be decoded: {0}")]
    Decode(#[from] bincode::Error),
}

pub fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    let mut out = vec![MAGIC, CODEC_VERSION];
    // Serializing plain in-memory structs into a Vec cannot fail (no I/O, no size limit).
    bincode::serialize_into(&mut out, value).expect("bincode serialization into a Vec");
    out
}

pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, CodecError> {
    match bytes {
        [MAGIC, CODEC_VERSION, payload @ ..] => Ok(bincode::deserialize(payload)?),
        [MAGIC, version, ..] => Err(CodecError::UnknownVersion(*version)),
        _ => Err(CodecError::NotARecord),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Role, User};

    #[test]
    fn round_trips_a_record() {
        let user = User {
            id: 7,
            name: "ana".into(),
            role: Role::Editor,
            password_hash: "$argon2id$...".into(),
        };
        let bytes = encode(&user);
        assert_eq!(&bytes[..2], &[b'A', CODEC_VERSION]);
        assert_eq!(decode::<User>(&bytes).unwrap(), user);
    }

    #[test]
    fn refuses_unknown_versions_and_foreign_bytes() {
        let mut bytes = encode(&42u64);
        bytes[1] = 99;
        assert!(matches!(
            decode::<u64>(&bytes),
            Err(CodecError::UnknownVersion(99))
        ));
        assert!(matches!(decode::<u64>(b"xyz"), Err(CodecError::NotARecord)));
        assert!(matches!(decode::<u64>(&[]), Err(CodecError::NotARecord)));
    }
}
