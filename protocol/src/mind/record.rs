//! The body of a `mind_record` item (kind 9): one version of one row of a
//! person's long-term memory (a diary entry, a concept, a link, a goal, a
//! task, a line of the core's notebook, one of the person's own stagnation
//! strategies, thinking methods and ratings, an entry of the model
//! registry), as the person's devices replicate it among themselves.
//!
//! A record is named by its table and a 16-byte `key` that every device
//! uses for it; each edit is a new item carrying the record's whole state
//! (`fields`), its version vector `vv` and the writer's clock `at_ms`; a
//! deletion is a version with `deleted` set and no fields (a tombstone).
//! Which version a device shows is decided by [`super::merge`].

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};

use crate::error::ItemError;
use crate::limits::MAX_NAME_LEN;
use crate::mind::version::VersionVector;

/// Most fields in one record. The widest memory row (a task: text, status,
/// priority, pinned, goal, due, tags, …) has about a dozen columns; 32
/// leaves room for new columns while keeping a record's check short.
pub const MAX_MIND_FIELDS: usize = 32;

/// Longest text value: 32 KiB, as a note's text (`MAX_TEXT_BYTES`); a diary
/// entry is a few paragraphs, a long one several pages.
pub const MAX_MIND_TEXT_BYTES: usize = 32 * 1024;

/// Most bytes of field names and text values in one record together: 48
/// KiB keeps the whole item, with a full version vector (about 2 KiB) and
/// the header, under the 64 KiB envelope (`MAX_ENVELOPE_BYTES`), so a
/// record that passes this check can always be signed.
pub const MAX_MIND_RECORD_TEXT_BYTES: usize = 48 * 1024;

/// Domain of [`MindRecord::content_hash`], so the hash of a record's
/// fields is never the hash of anything else.
const CONTENT_DOMAIN: &[u8] = b"porfiry mind content v1\0";

/// Which table of the long-term memory a record belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MindTable {
    /// `diary_entries`.
    Diary,
    /// `concepts`.
    Concept,
    /// `links` between concepts.
    Link,
    /// `goals`.
    Goal,
    /// `tasks`, with their pins.
    Task,
    /// The core's notebook, `llm_memory`.
    LlmMemory,
    /// The person's own ways out of stagnation, `stagnation_strategies`.
    Strategy,
    /// The person's own `thinking_methods`.
    Method,
    /// The person's own `ratings`.
    Rating,
    /// The model registry, `llm_registry`: addresses and settings, never a
    /// secret (the registry's `api_key_env` stays on each device).
    Llm,
}

impl MindTable {
    /// Every table, in wire-name order of introduction.
    pub const ALL: [MindTable; 10] = [
        MindTable::Diary,
        MindTable::Concept,
        MindTable::Link,
        MindTable::Goal,
        MindTable::Task,
        MindTable::LlmMemory,
        MindTable::Strategy,
        MindTable::Method,
        MindTable::Rating,
        MindTable::Llm,
    ];

    /// The text name written on the wire: `diary`, `concept`, `link`,
    /// `goal`, `task`, `llm_memory`, `strategy`, `method`, `rating` or
    /// `llm`.
    pub const fn as_str(self) -> &'static str {
        match self {
            MindTable::Diary => "diary",
            MindTable::Concept => "concept",
            MindTable::Link => "link",
            MindTable::Goal => "goal",
            MindTable::Task => "task",
            MindTable::LlmMemory => "llm_memory",
            MindTable::Strategy => "strategy",
            MindTable::Method => "method",
            MindTable::Rating => "rating",
            MindTable::Llm => "llm",
        }
    }
}

impl fmt::Display for MindTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for MindTable {
    type Err = ItemError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        MindTable::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| ItemError::UnknownMindTable(s.to_owned()))
    }
}

crate::text_form::serde_as_text!(MindTable);

/// One field's value: written as a bare CBOR text, integer or boolean.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MindValue {
    /// Text, at most [`MAX_MIND_TEXT_BYTES`].
    Text(String),
    /// A signed 64-bit integer (times, priorities, ids of local rows).
    Int(i64),
    /// A flag.
    Bool(bool),
}

impl Serialize for MindValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            MindValue::Text(t) => serializer.serialize_str(t),
            MindValue::Int(i) => serializer.serialize_i64(*i),
            MindValue::Bool(b) => serializer.serialize_bool(*b),
        }
    }
}

impl<'de> Deserialize<'de> for MindValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ValueVisitor;

        impl Visitor<'_> for ValueVisitor {
            type Value = MindValue;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a text, a 64-bit signed integer or a boolean")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<MindValue, E> {
                Ok(MindValue::Text(v.to_owned()))
            }

            fn visit_string<E: de::Error>(self, v: String) -> Result<MindValue, E> {
                Ok(MindValue::Text(v))
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<MindValue, E> {
                Ok(MindValue::Int(v))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<MindValue, E> {
                i64::try_from(v)
                    .map(MindValue::Int)
                    .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
            }

            fn visit_bool<E: de::Error>(self, v: bool) -> Result<MindValue, E> {
                Ok(MindValue::Bool(v))
            }
        }

        deserializer.deserialize_any(ValueVisitor)
    }
}

/// One version of one record of a person's long-term memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MindRecord {
    /// The table the record belongs to.
    pub table: MindTable,
    /// The record's id, the same on every device (a CBOR byte string of
    /// 16 bytes).
    #[serde(with = "crate::fixed_bytes")]
    pub key: [u8; 16],
    /// The version vector: which versions of this record its writer had
    /// seen, its own included. At least one device.
    pub vv: VersionVector,
    /// The writer's wall clock, Unix ms; it only orders concurrent versions.
    pub at_ms: u64,
    /// A tombstone: the record is deleted (and has no fields).
    pub deleted: bool,
    /// The record's whole state, by column name; at most
    /// [`MAX_MIND_FIELDS`], names 1..=128 bytes.
    #[serde(deserialize_with = "fields")]
    pub fields: BTreeMap<String, MindValue>,
}

impl MindRecord {
    /// Checks every limit of the body; runs on sign and on decode with the
    /// other kinds' checks.
    pub fn check(&self) -> Result<(), ItemError> {
        if self.vv.is_empty() {
            return Err(ItemError::Empty {
                field: "mind_record.vv",
            });
        }
        self.vv.check()?;
        if self.deleted && !self.fields.is_empty() {
            return Err(ItemError::TombstoneWithFields(self.fields.len()));
        }
        if self.fields.len() > MAX_MIND_FIELDS {
            return Err(ItemError::TooManyEntries {
                field: "mind_record.fields",
                count: self.fields.len(),
                max: MAX_MIND_FIELDS,
            });
        }
        let mut total = 0usize;
        for (name, value) in &self.fields {
            if name.is_empty() {
                return Err(ItemError::Empty {
                    field: "mind_record.field_name",
                });
            }
            too_long("mind_record.field_name", name.len(), MAX_NAME_LEN)?;
            total += name.len();
            if let MindValue::Text(t) = value {
                too_long("mind_record.fields", t.len(), MAX_MIND_TEXT_BYTES)?;
                total += t.len();
            }
        }
        too_long("mind_record.total", total, MAX_MIND_RECORD_TEXT_BYTES)
    }

    /// SHA-256 of the fields alone (domain-separated, every name and value
    /// length-prefixed and tagged, in name order): two versions with the
    /// same hash say the same thing, whoever wrote them and when.
    pub fn content_hash(&self) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(CONTENT_DOMAIN);
        h.update((self.fields.len() as u64).to_be_bytes());
        for (name, value) in &self.fields {
            h.update((name.len() as u64).to_be_bytes());
            h.update(name.as_bytes());
            match value {
                MindValue::Text(t) => {
                    h.update([b't']);
                    h.update((t.len() as u64).to_be_bytes());
                    h.update(t.as_bytes());
                }
                MindValue::Int(i) => {
                    h.update([b'i']);
                    h.update(i.to_be_bytes());
                }
                MindValue::Bool(b) => h.update([b'b', u8::from(*b)]),
            }
        }
        h.finalize().into()
    }
}

fn too_long(field: &'static str, len: usize, max: usize) -> Result<(), ItemError> {
    if len > max {
        Err(ItemError::TooLong { field, len, max })
    } else {
        Ok(())
    }
}

/// Reads `fields`, refusing a repeated name and more than
/// [`MAX_MIND_FIELDS`] entries while decoding (a plain map would keep the
/// last of two equal names silently).
fn fields<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, MindValue>, D::Error> {
    struct FieldsVisitor;

    impl<'de> Visitor<'de> for FieldsVisitor {
        type Value = BTreeMap<String, MindValue>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(
                f,
                "a map of at most {MAX_MIND_FIELDS} distinct field names to values"
            )
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some((name, value)) = map.next_entry::<String, MindValue>()? {
                if out.len() == MAX_MIND_FIELDS {
                    return Err(de::Error::invalid_length(out.len() + 1, &self));
                }
                if out.contains_key(&name) {
                    return Err(de::Error::custom(format!("field {name:?} appears twice")));
                }
                out.insert(name, value);
            }
            Ok(out)
        }
    }

    deserializer.deserialize_map(FieldsVisitor)
}

#[cfg(test)]
pub(crate) mod tests;
