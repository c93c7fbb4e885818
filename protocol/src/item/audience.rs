//! Who may receive an item: public, friends, one named group, one friend,
//! the members of one club, or the author's person's devices.
//!
//! The textual form (`public`, `friends`, `group:NAME`, `peer:PEER_ID`,
//! `club:NAME@FOUNDER`, `devices`) is
//! what the CLI takes, what the `items.audience` column holds and what the
//! CBOR payload carries.

use std::fmt;
use std::str::FromStr;

use libp2p_identity::PeerId;

use crate::club::{ClubRef, ClubRefError};
use crate::identity::AuthorKey;

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
    /// Exactly one friend of the author, named by its peer id string
    /// (`12D3KooW…`): one hop, never relayed, never offered to anyone else.
    /// A direct message.
    Peer(String),
    /// The members of a club, relayed member to member up to `max_hops`;
    /// a non-member never receives one, even as a relay.
    Club(ClubRef),
    /// The devices of the author's person only (`crate::devices`), relayed
    /// device to device up to `max_hops`: never offered to, relayed
    /// through, or accepted from any other node, on any path.
    Devices,
}

/// Why a string is not an audience.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AudienceError {
    /// Neither `public`, `friends`, `group:NAME`, `peer:PEER_ID`,
    /// `club:NAME@FOUNDER` nor `devices`.
    #[error(
        "unknown audience {0:?}: expected public, friends, group:NAME, peer:PEER_ID, club:NAME@FOUNDER or devices"
    )]
    Unknown(String),
    /// `group:` with an empty, too long or oddly spelled name.
    #[error("bad group name {0:?}: 1 to {MAX_GROUP_NAME_LEN} characters of a-z, 0-9, '-' or '_'")]
    BadGroupName(String),
    /// `peer:` with something that is not a node id as nodes write it.
    #[error(
        "bad peer id {0:?}: expected a node id as `porfiry id` prints it (12D3KooW…, an ed25519 PeerId)"
    )]
    BadPeerId(String),
    /// `club:` with something that is not `NAME@FOUNDER`.
    #[error(transparent)]
    BadClub(#[from] ClubRefError),
}

/// Checks a group name: 1..=MAX_GROUP_NAME_LEN of `[a-z0-9_-]`.
pub fn valid_group_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_GROUP_NAME_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

/// Checks a `peer:` target: the canonical text of an ed25519 PeerId, the
/// only kind of node id there is. Canonical, so that the plain string
/// comparisons of routing (`friend.peer_id == target`) cannot be fooled by
/// a second spelling of the same id.
pub fn valid_peer_id(id: &str) -> bool {
    id.parse::<PeerId>()
        .is_ok_and(|p| AuthorKey::from_peer_id(&p).is_some() && p.to_string() == id)
}

impl Audience {
    /// Checks a hand-built audience the way parsing checks a written one
    /// (a `Group` or `Peer` made in code holds any string).
    pub fn check(&self) -> Result<(), AudienceError> {
        match self {
            Audience::Group(g) if !valid_group_name(g) => {
                Err(AudienceError::BadGroupName(g.clone()))
            }
            Audience::Peer(p) if !valid_peer_id(p) => Err(AudienceError::BadPeerId(p.clone())),
            Audience::Club(c) => Ok(c.check()?),
            _ => Ok(()),
        }
    }

    /// True when a node `local_peer` may hold this audience's item written
    /// by someone else: anything but a direct message to another node.
    pub fn admits_receiver(&self, local_peer: &str) -> bool {
        match self {
            Audience::Peer(p) => p == local_peer,
            _ => true,
        }
    }
}

impl fmt::Display for Audience {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Audience::Public => f.write_str("public"),
            Audience::Friends => f.write_str("friends"),
            Audience::Group(g) => write!(f, "group:{g}"),
            Audience::Peer(p) => write!(f, "peer:{p}"),
            Audience::Club(c) => write!(f, "club:{c}"),
            Audience::Devices => f.write_str("devices"),
        }
    }
}

impl FromStr for Audience {
    type Err = AudienceError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "public" => Ok(Audience::Public),
            "friends" => Ok(Audience::Friends),
            "devices" => Ok(Audience::Devices),
            _ => {
                if let Some(name) = s.strip_prefix("group:") {
                    if valid_group_name(name) {
                        Ok(Audience::Group(name.to_owned()))
                    } else {
                        Err(AudienceError::BadGroupName(name.to_owned()))
                    }
                } else if let Some(id) = s.strip_prefix("peer:") {
                    if valid_peer_id(id) {
                        Ok(Audience::Peer(id.to_owned()))
                    } else {
                        Err(AudienceError::BadPeerId(id.to_owned()))
                    }
                } else if let Some(club) = s.strip_prefix("club:") {
                    Ok(Audience::Club(club.parse()?))
                } else {
                    Err(AudienceError::Unknown(s.to_owned()))
                }
            }
        }
    }
}

crate::text_form::serde_as_text!(Audience);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::NodeKey;

    fn bob() -> String {
        NodeKey::from_seed([7; 32]).peer_id().to_string()
    }

    #[test]
    fn text_form_round_trips() {
        for a in [
            Audience::Public,
            Audience::Friends,
            Audience::Group("chess-club".into()),
            Audience::Peer(bob()),
            Audience::Club(ClubRef::new("chess", &bob()).unwrap()),
            Audience::Devices,
        ] {
            assert_eq!(a.check(), Ok(()));
            assert_eq!(a.to_string().parse::<Audience>(), Ok(a));
        }
        assert_eq!(Audience::Peer(bob()).to_string(), format!("peer:{}", bob()));
        assert_eq!(Audience::Devices.to_string(), "devices");
        // On the wire (the payload's `audience`) it is that text too.
        let wire = ciborium::Value::serialized(&Audience::Devices).unwrap();
        assert_eq!(wire, ciborium::Value::Text("devices".into()));
        assert_eq!(wire.deserialized::<Audience>().unwrap(), Audience::Devices);
    }

    #[test]
    fn peer_targets_are_canonical_ed25519_node_ids() {
        for bad in [
            "peer:",
            "peer:bob",
            "peer:12D3KooW",
            // A valid PeerId, but of an RSA-style sha256 multihash: no node has one.
            "peer:QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N",
        ] {
            assert!(
                matches!(bad.parse::<Audience>(), Err(AudienceError::BadPeerId(_))),
                "{bad}"
            );
        }
        let mut upper = bob();
        upper.make_ascii_uppercase();
        assert!(format!("peer:{upper}").parse::<Audience>().is_err());
        assert!(Audience::Peer("nobody".into()).check().is_err());
        assert!(Audience::Group("Big".into()).check().is_err());
    }

    #[test]
    fn only_the_addressee_may_hold_a_direct_message() {
        let to_bob = Audience::Peer(bob());
        assert!(to_bob.admits_receiver(&bob()));
        assert!(!to_bob.admits_receiver("someone-else"));
        assert!(Audience::Public.admits_receiver("anyone"));
        assert!(Audience::Group("g".into()).admits_receiver("anyone"));
    }

    #[test]
    fn rejects_unknown_and_bad_groups() {
        assert!(matches!(
            "private".parse::<Audience>(),
            Err(AudienceError::Unknown(_))
        ));
        for near in ["Devices", "devices:", "device", "devices:bob"] {
            assert!(
                matches!(near.parse::<Audience>(), Err(AudienceError::Unknown(_))),
                "{near}"
            );
        }
        let listed = AudienceError::Unknown("x".into()).to_string();
        assert!(listed.contains("devices"), "{listed}");
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
