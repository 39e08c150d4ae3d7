//! The one place where records become bytes: bincode 1.3 inside a small versioned envelope.
//!
//! Envelope: `[b'A', CODEC_VERSION]` followed by the bincode payload. The version byte lets a
//! later release read old records and migrate them; a record written by an unknown version is
//! refused instead of being misread.

use serde::de::DeserializeOwned;
use serde::Serialize;

const MAGIC: u8 = b'A';
/// Bumped whenever the encoding of any stored type changes incompatibly.
pub(crate) const CODEC_VERSION: u8 = 1;

#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    #[error("stored record is not an almanac record")]
    NotARecord,
    #[error("stored record has codec version {0}, this build reads version {CODEC_VERSION}")]
    UnknownVersion(u8),
    #[error("stored record cannot be decoded: {0}")]
    Decode(#[from] bincode::Error),
}

pub(crate) fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    let mut out = vec![MAGIC, CODEC_VERSION];
    // Serializing plain in-memory structs into a Vec cannot fail (no I/O, no size limit).
    bincode::serialize_into(&mut out, value).expect("bincode serialization into a Vec");
    out
}

pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, CodecError> {
    match bytes {
        [MAGIC, CODEC_VERSION, payload @ ..] => Ok(bincode::deserialize(payload)?),
        [MAGIC, version, ..] => Err(CodecError::UnknownVersion(*version)),
        _ => Err(CodecError::NotARecord),
    }
}

/// Date-times of stored records (`#[serde(with = "…::date_time")]`): written in chrono's own
/// serde form, read back by [`crate::values::datetime::parse_fixed`] (chrono's parser for
/// anything else that form can hold), so that stored bytes are unchanged.
pub(crate) mod date_time {
    use chrono::NaiveDateTime;
    use serde::de::{Deserializer, Error, Visitor};
    use serde::{Serialize, Serializer};

    pub(crate) fn serialize<S: Serializer>(
        t: &NaiveDateTime,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        t.serialize(serializer)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<NaiveDateTime, D::Error> {
        struct DateTimeVisitor;
        impl Visitor<'_> for DateTimeVisitor {
            type Value = NaiveDateTime;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a date-time string")
            }

            fn visit_str<E: Error>(self, s: &str) -> Result<NaiveDateTime, E> {
                crate::values::datetime::parse_fixed(s, b'T')
                    .map(Ok)
                    .unwrap_or_else(|| s.parse().map_err(E::custom))
            }
        }
        deserializer.deserialize_str(DateTimeVisitor)
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
    fn date_times_are_stored_as_chrono_writes_them() {
        #[derive(Serialize, serde::Deserialize, PartialEq, Debug)]
        struct Stamped(#[serde(with = "date_time")] chrono::NaiveDateTime);
        let date = |y, m, d| chrono::NaiveDate::from_ymd_opt(y, m, d).unwrap();
        let times = [
            date(2026, 11, 22).and_hms_opt(1, 37, 0).unwrap(),
            date(1, 1, 1).and_hms_opt(0, 0, 0).unwrap(),
            date(9999, 12, 31).and_hms_opt(23, 59, 59).unwrap(),
            date(2024, 2, 29).and_hms_milli_opt(12, 0, 1, 250).unwrap(),
            date(2016, 12, 31)
                .and_hms_nano_opt(23, 59, 59, 1_000_000_000)
                .unwrap(),
            date(12345, 6, 7).and_hms_opt(8, 9, 10).unwrap(),
        ];
        for t in times {
            let bytes = encode(&Stamped(t));
            assert_eq!(bytes, encode(&t), "{t}");
            assert_eq!(decode::<Stamped>(&bytes).unwrap(), Stamped(t));
        }
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
