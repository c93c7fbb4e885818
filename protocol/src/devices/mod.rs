//! A person's devices: nodes (a phone, a home server) that each keep their
//! own key but share one long-term memory. Two nodes become devices of one
//! person by a [`DeviceLink`] both sign, and stop being so by a
//! [`DeviceUnlink`] either signs; [`DeviceBook`] computes, from the
//! statements held, which nodes are this node's devices now.
//!
//! Items for the audience `devices` go only to those nodes, on every path
//! (`policy.rs`); the statements themselves travel as `device_link` items
//! ([`DeviceStatement`] is their body) with that audience.

mod book;
mod link;

use serde::{Deserialize, Serialize};

pub use book::DeviceBook;
pub use link::{DeviceLink, DeviceUnlink, LINK_DOMAIN, LinkProposal, UNLINK_DOMAIN};

/// Most devices one person has, this node not counted: a phone, a tablet,
/// a laptop, a home server and a few more are under ten; 32 leaves room for
/// a family that puts all its nodes under one person while bounding what a
/// device gone wrong can make every other device route to (each device is
/// a friend the `devices` items go to).
pub const MAX_DEVICES: usize = 32;

/// Most link and unlink statements one book holds (one of each per pair at
/// most): 32 devices each linked to one other are 31 links; every one
/// unlinked and linked again a few times stays far below 256, which bounds
/// what a device can make the book replay (a few kilobytes a statement
/// at most, the closure a walk over at most 33 nodes).
pub const MAX_DEVICE_STATEMENTS: usize = 256;

/// Hop limit for `devices` items: a person's devices link in a star around
/// one server or in a short chain (a phone joins the laptop that joined the
/// server), so any two are a few links apart; relaying is allowed only
/// through the person's own devices, and the protocol's `MAX_HOPS` (8)
/// reaches across a chain of nine of them.
pub const DEVICES_MAX_HOPS: u8 = crate::limits::MAX_HOPS;

/// The body of a `device_link` item: a link or an unlink statement. In
/// CBOR a map with one key, `link` or `unlink`, holding the statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum DeviceStatement {
    /// Two nodes become devices of one person.
    Link(DeviceLink),
    /// One side ends a link.
    Unlink(DeviceUnlink),
}

impl DeviceStatement {
    /// Checks the statement's signatures (both for a link).
    pub fn verify(&self) -> Result<(), DeviceError> {
        match self {
            DeviceStatement::Link(l) => l.verify(),
            DeviceStatement::Unlink(u) => u.verify(),
        }
    }

    /// True if `peer` signed it (may be the author of its item): either
    /// side of a link, the `by` of an unlink.
    pub fn signed_by(&self, peer: &str) -> bool {
        match self {
            DeviceStatement::Link(l) => l.involves(peer),
            DeviceStatement::Unlink(u) => u.by == peer,
        }
    }

    /// True if `peer` is one of the two nodes it is about.
    pub fn involves(&self, peer: &str) -> bool {
        match self {
            DeviceStatement::Link(l) => l.involves(peer),
            DeviceStatement::Unlink(u) => u.involves(peer),
        }
    }
}

/// Why a device statement is refused or a book cannot take it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeviceError {
    /// A side is not a node id as nodes write it.
    #[error("bad peer id {0:?}: expected a node id as `porfiry id` prints it")]
    BadPeerId(String),
    /// Both sides are the same node.
    #[error("node {0} cannot be linked to itself")]
    SameNode(String),
    /// A signature does not verify for the node named.
    #[error("the signature of {0} does not verify for this statement")]
    BadSignature(String),
    /// A proposal countersigned by a node it does not name.
    #[error("this link proposal is not addressed to {0}")]
    NotAddressedTo(String),
    /// The statement concerns neither this node nor any of its devices.
    #[error("the statement is about neither this node nor one of its devices")]
    NotOurs,
    /// Taking the link would give this node more than [`MAX_DEVICES`] devices.
    #[error("too many devices: at most {MAX_DEVICES} per person")]
    TooManyDevices,
    /// The book already holds [`MAX_DEVICE_STATEMENTS`] statements.
    #[error("too many device statements: at most {MAX_DEVICE_STATEMENTS}")]
    TooManyStatements,
    /// A book made for another node.
    #[error("a device book of {0} cannot route for this node")]
    NotLocal(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::NodeKey;

    #[test]
    fn a_statement_reads_back_as_itself_in_cbor() {
        let (a, b) = (NodeKey::from_seed([1; 32]), NodeKey::from_seed([2; 32]));
        let link = LinkProposal::new(&a, &b.peer_id().to_string(), 7)
            .unwrap()
            .countersign(&b)
            .unwrap();
        let unlink = DeviceUnlink::sign(&b, &a.peer_id().to_string(), 9).unwrap();
        for s in [DeviceStatement::Link(link), DeviceStatement::Unlink(unlink)] {
            let v = ciborium::Value::serialized(&s).unwrap();
            assert_eq!(v.deserialized::<DeviceStatement>().unwrap(), s);
            assert_eq!(bytes_round_trip(&s), s);
            assert_eq!(s.verify(), Ok(()));
        }
    }

    fn bytes_round_trip(s: &DeviceStatement) -> DeviceStatement {
        let mut buf = Vec::new();
        ciborium::into_writer(s, &mut buf).unwrap();
        ciborium::from_reader(buf.as_slice()).unwrap()
    }

    #[test]
    fn who_signs_and_who_is_concerned() {
        let (a, b) = (NodeKey::from_seed([1; 32]), NodeKey::from_seed([2; 32]));
        let (ida, idb) = (a.peer_id().to_string(), b.peer_id().to_string());
        let u = DeviceStatement::Unlink(DeviceUnlink::sign(&a, &idb, 1).unwrap());
        assert!(u.signed_by(&ida) && !u.signed_by(&idb));
        assert!(u.involves(&ida) && u.involves(&idb));
    }
}
