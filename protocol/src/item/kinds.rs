//! The item kinds: their text names (CLI, SQLite `items.kind` column) and
//! their stable numeric codes (the CBOR payload's `kind` field).

use std::fmt;
use std::str::FromStr;

use crate::error::ItemError;

/// What an item is. Codes are part of the wire format and never change or get
/// reused; a new kind takes the next free code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ItemKind {
    /// A message in the shared notebook (HMP `notes`).
    Note,
    /// A way out of a stagnation (HMP `stagnation_strategies`).
    StagnationStrategy,
    /// A thinking method (HMP `thinking_methods`).
    ThinkingMethod,
    /// A score given to another item (HMP `ratings`).
    Rating,
    /// Where an LLM can be reached (HMP `llm_registry`), never with a secret.
    LlmAddress,
    /// A tombstone: the author withdraws one of its own items.
    Retraction,
    /// A change to a club's member list (add, add_admin, remove, leave).
    ClubChange,
    /// Where the author can be reached now (its addresses), for its friends only.
    ReachableAt,
    /// One version of one record of a person's long-term memory, for that
    /// person's devices (`crate::mind`).
    MindRecord,
    /// A device link or unlink statement, for the author's person's
    /// devices only (`crate::devices`).
    DeviceLink,
}

impl ItemKind {
    /// Every kind, in code order.
    pub const ALL: [ItemKind; 10] = [
        ItemKind::Note,
        ItemKind::StagnationStrategy,
        ItemKind::ThinkingMethod,
        ItemKind::Rating,
        ItemKind::LlmAddress,
        ItemKind::Retraction,
        ItemKind::ClubChange,
        ItemKind::ReachableAt,
        ItemKind::MindRecord,
        ItemKind::DeviceLink,
    ];

    /// The stable numeric code written in the payload.
    pub const fn code(self) -> u64 {
        match self {
            ItemKind::Note => 1,
            ItemKind::StagnationStrategy => 2,
            ItemKind::ThinkingMethod => 3,
            ItemKind::Rating => 4,
            ItemKind::LlmAddress => 5,
            ItemKind::Retraction => 6,
            ItemKind::ClubChange => 7,
            ItemKind::ReachableAt => 8,
            ItemKind::MindRecord => 9,
            ItemKind::DeviceLink => 10,
        }
    }

    /// The kind with this code.
    pub fn from_code(code: u64) -> Result<ItemKind, ItemError> {
        ItemKind::ALL
            .into_iter()
            .find(|k| k.code() == code)
            .ok_or(ItemError::UnknownKind(code))
    }

    /// The text name: `note`, `stagnation_strategy`, `thinking_method`,
    /// `rating`, `llm_address`, `retraction`, `club_change`, `reachable_at`,
    /// `mind_record` or `device_link`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ItemKind::Note => "note",
            ItemKind::StagnationStrategy => "stagnation_strategy",
            ItemKind::ThinkingMethod => "thinking_method",
            ItemKind::Rating => "rating",
            ItemKind::LlmAddress => "llm_address",
            ItemKind::Retraction => "retraction",
            ItemKind::ClubChange => "club_change",
            ItemKind::ReachableAt => "reachable_at",
            ItemKind::MindRecord => "mind_record",
            ItemKind::DeviceLink => "device_link",
        }
    }
}

impl fmt::Display for ItemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ItemKind {
    type Err = ItemError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ItemKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| ItemError::UnknownKindName(s.to_owned()))
    }
}

// Serialized by name (for JSON and config); the payload writes `ItemKind::code`.
crate::text_form::serde_as_text!(ItemKind);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_codes_round_trip_and_are_distinct() {
        for k in ItemKind::ALL {
            assert_eq!(k.as_str().parse::<ItemKind>(), Ok(k));
            assert_eq!(ItemKind::from_code(k.code()), Ok(k));
        }
        let mut codes: Vec<u64> = ItemKind::ALL.iter().map(|k| k.code()).collect();
        codes.dedup();
        assert_eq!(
            codes,
            vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
            "codes are wire format: never change them"
        );
    }

    #[test]
    fn unknown_names_and_codes_are_refused() {
        assert_eq!(ItemKind::from_code(0), Err(ItemError::UnknownKind(0)));
        assert_eq!(ItemKind::from_code(999), Err(ItemError::UnknownKind(999)));
        assert!(matches!(
            "Note".parse::<ItemKind>(),
            Err(ItemError::UnknownKindName(_))
        ));
        assert!(matches!(
            "".parse::<ItemKind>(),
            Err(ItemError::UnknownKindName(_))
        ));
    }
}
