//! Serde helpers for fixed-size byte arrays (author keys, item ids): a CBOR
//! byte string in binary formats, lowercase hex text in human-readable ones
//! (JSON), with the length checked on the way in.

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserializer, Serializer};

/// Writes `bytes` as a byte string (binary formats) or hex (JSON and the like).
pub(crate) fn serialize<S: Serializer, const N: usize>(
    bytes: &[u8; N],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    if serializer.is_human_readable() {
        serializer.serialize_str(&hex::encode(bytes))
    } else {
        serializer.serialize_bytes(bytes)
    }
}

/// Reads exactly `N` bytes written by [`serialize`].
pub(crate) fn deserialize<'de, D: Deserializer<'de>, const N: usize>(
    deserializer: D,
) -> Result<[u8; N], D::Error> {
    if deserializer.is_human_readable() {
        deserializer.deserialize_str(FixedVisitor::<N>)
    } else {
        deserializer.deserialize_bytes(FixedVisitor::<N>)
    }
}

struct FixedVisitor<const N: usize>;

impl<const N: usize> Visitor<'_> for FixedVisitor<N> {
    type Value = [u8; N];

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a byte string of exactly {N} bytes")
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
        <[u8; N]>::try_from(v).map_err(|_| E::invalid_length(v.len(), &self))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        let mut out = [0u8; N];
        hex::decode_to_slice(v, &mut out)
            .map_err(|_| E::invalid_value(de::Unexpected::Str(v), &self))?;
        Ok(out)
    }
}
