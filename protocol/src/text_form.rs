//! Serde for types whose JSON and CBOR form is their text form: serialized
//! with `Display`, read back with `FromStr` (whose error becomes serde's).
//! `ItemKind`, `Audience` and `ClubRef` travel this way.

/// Implements `Serialize` and `Deserialize` for `$t` through its
/// `Display` and `FromStr`.
macro_rules! serde_as_text {
    ($t:ty) => {
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self)
            }
        }

        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let s = <String as serde::Deserialize>::deserialize(deserializer)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

pub(crate) use serde_as_text;
