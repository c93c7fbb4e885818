//! Who may receive an item: public, friends, or one named group.
//!
//! The textual form (`public`, `friends`, `group:NAME`) is what the CLI takes,
//! what the `items.audience` column holds and what the CBOR payload carries.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Longest group name: enough for "family", "chess-club-2026", short enough
/// to keep every item header small.
pub const MAX_GROUP_NAME_LEN: usize = 32;

/// The audience of a replicated item. Private notes never become items, so
/// there is no `Private` variant here.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Audience {
    /// Friends, and their friends onward, up to the item's `max_hops`.
    Public,
    /// The author's friends only (one hop).
    Friends,
    /// The author's friends tagged with this group (one hop).
    Group(String),
}

/// Why a string is not an audience.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AudienceError {
    /// Neither `public`, `friends` nor `group:NAME`.
    #[error("unknown audience {0:?}: expected public, friends or group:NAME")]
    Unknown(String),
    /// `group:` with an empty, too long or oddly spelled name.
    #[error("bad group name {0:?}: 1 to {MAX_GROUP_NAME_LEN} characters of a-z, 0-9, '-' or '_'")]
    BadGroupName(String),
}

/// Checks a group name: 1..=MAX_GROUP_NAME_LEN of `[a-z0-9_-]`.
pub fn valid_group_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_GROUP_NAME_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

impl fmt::Display for Audience {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Audience::Public => f.write_str("public"),
            Audience::Friends => f.write_str("friends"),
            Audience::Group(g) => write!(f, "group:{g}"),
        }
    }
}

impl FromStr for Audience {
    type Err = AudienceError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "public" => Ok(Audience::Public),
            "friends" => Ok(Audience::Friends),
            _ => match s.strip_prefix("group:") {
                Some(name) if valid_group_name(name) => Ok(Audience::Group(name.to_owned())),
                Some(name) => Err(AudienceError::BadGroupName(name.to_owned())),
                None => Err(AudienceError::Unknown(s.to_owned())),
            },
        }
    }
}

impl Serialize for Audience {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Audience {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_form_round_trips() {
        for a in [
            Audience::Public,
            Audience::Friends,
            Audience::Group("chess-club".into()),
        ] {
            assert_eq!(a.to_string().parse::<Audience>(), Ok(a));
        }
    }

    #[test]
    fn rejects_unknown_and_bad_groups() {
        assert!(matches!(
            "private".parse::<Audience>(),
            Err(AudienceError::Unknown(_))
        ));
        assert!(matches!(
            "group:".parse::<Audience>(),
            Err(AudienceError::BadGroupName(_))
        ));
        assert!(matches!(
            "group:Family".parse::<Audience>(),
            Err(AudienceError::BadGroupName(_))
        ));
        let long = format!("group:{}", "a".repeat(MAX_GROUP_NAME_LEN + 1));
        assert!(long.parse::<Audience>().is_err());
    }
}
