//! Device link and unlink statements: the signed facts that make two nodes
//! devices of one person, or end it.
//!
//! A link is signed by **both** nodes over the same canonical bytes, so no
//! third node can claim one: the first side makes a half-signed
//! [`LinkProposal`], the second countersigns it into a [`DeviceLink`] (the
//! two can do this over a stream). An unlink is signed by either side alone.
//!
//! Canonical bytes (what the signatures cover; docs/protocol.md):
//! - link: `porfiry-device-link-v1` (ASCII), then the two nodes' 32-byte
//!   ed25519 public keys in ascending byte order, then `since_ms` as 8
//!   bytes big-endian;
//! - unlink: `porfiry-device-unlink-v1`, then the key of `by` (the signer),
//!   the key of `other`, then `at_ms` as 8 bytes big-endian.
//!
//! The domain tags keep these signatures from ever being valid as an item
//! payload's (a payload is a CBOR map, never these bytes) or as each other.

use ed25519_dalek::{Signature, Signer};
use libp2p_identity::PeerId;
use serde::{Deserialize, Serialize};

use super::DeviceError;
use crate::identity::{AuthorKey, NodeKey};
use crate::item::audience::valid_peer_id;

/// Domain tag of a link's canonical bytes.
pub const LINK_DOMAIN: &[u8] = b"porfiry-device-link-v1";

/// Domain tag of an unlink's canonical bytes.
pub const UNLINK_DOMAIN: &[u8] = b"porfiry-device-unlink-v1";

/// Length of an ed25519 signature.
const SIG_LEN: usize = 64;

/// A link statement: `a` and `b` are devices of one person since `since_ms`,
/// each side's signature over the same canonical bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceLink {
    /// One node's peer id (the one that proposed the link).
    pub a: String,
    /// The other node's peer id (the one that countersigned).
    pub b: String,
    /// When the link was made, Unix ms (the proposer's clock).
    pub since_ms: u64,
    /// `a`'s signature over the canonical bytes.
    #[serde(with = "crate::fixed_bytes")]
    pub sig_a: [u8; SIG_LEN],
    /// `b`'s signature over the same bytes.
    #[serde(with = "crate::fixed_bytes")]
    pub sig_b: [u8; SIG_LEN],
}

/// The first half of a link: signed by `a` only, for `b` to countersign.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkProposal {
    /// The proposer's peer id.
    pub a: String,
    /// The node asked to countersign.
    pub b: String,
    /// When the link is made, Unix ms.
    pub since_ms: u64,
    /// `a`'s signature over the link's canonical bytes.
    #[serde(with = "crate::fixed_bytes")]
    pub sig_a: [u8; SIG_LEN],
}

/// An unlink statement: `by` ends its link with `other` at `at_ms`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceUnlink {
    /// The node that ends the link (and signs).
    pub by: String,
    /// The other side.
    pub other: String,
    /// When, Unix ms (the signer's clock).
    pub at_ms: u64,
    /// `by`'s signature over the canonical bytes.
    #[serde(with = "crate::fixed_bytes")]
    pub sig: [u8; SIG_LEN],
}

/// The ed25519 key inside a canonical peer id string.
fn key_of(peer: &str) -> Result<AuthorKey, DeviceError> {
    if !valid_peer_id(peer) {
        return Err(DeviceError::BadPeerId(peer.to_owned()));
    }
    peer.parse::<PeerId>()
        .ok()
        .and_then(|p| AuthorKey::from_peer_id(&p))
        .ok_or_else(|| DeviceError::BadPeerId(peer.to_owned()))
}

/// The two ids as keys, refusing one node linked to itself.
fn pair_keys(a: &str, b: &str) -> Result<(AuthorKey, AuthorKey), DeviceError> {
    let (ka, kb) = (key_of(a)?, key_of(b)?);
    if ka == kb {
        return Err(DeviceError::SameNode(a.to_owned()));
    }
    Ok((ka, kb))
}

/// The bytes both sides of a link sign.
fn link_bytes(a: &str, b: &str, since_ms: u64) -> Result<Vec<u8>, DeviceError> {
    let (ka, kb) = pair_keys(a, b)?;
    let (lo, hi) = if ka.as_bytes() <= kb.as_bytes() {
        (ka, kb)
    } else {
        (kb, ka)
    };
    let mut out = Vec::with_capacity(LINK_DOMAIN.len() + 72);
    out.extend_from_slice(LINK_DOMAIN);
    out.extend_from_slice(lo.as_bytes());
    out.extend_from_slice(hi.as_bytes());
    out.extend_from_slice(&since_ms.to_be_bytes());
    Ok(out)
}

/// Checks `sig` over `msg` by the node `peer`.
fn check_sig(peer: &str, msg: &[u8], sig: &[u8; SIG_LEN]) -> Result<(), DeviceError> {
    let bad = || DeviceError::BadSignature(peer.to_owned());
    let key = key_of(peer)?.verifying_key().map_err(|_| bad())?;
    key.verify_strict(msg, &Signature::from_bytes(sig))
        .map_err(|_| bad())
}

/// The node `key` as a peer id string.
fn id_of(key: &NodeKey) -> String {
    key.peer_id().to_string()
}

impl LinkProposal {
    /// `key`'s node proposes to link with `other` at `since_ms`.
    pub fn new(key: &NodeKey, other: &str, since_ms: u64) -> Result<LinkProposal, DeviceError> {
        let a = id_of(key);
        let bytes = link_bytes(&a, other, since_ms)?;
        Ok(LinkProposal {
            sig_a: key.signing_key().sign(&bytes).to_bytes(),
            a,
            b: other.to_owned(),
            since_ms,
        })
    }

    /// Checks the proposer's signature.
    pub fn verify(&self) -> Result<(), DeviceError> {
        let bytes = link_bytes(&self.a, &self.b, self.since_ms)?;
        check_sig(&self.a, &bytes, &self.sig_a)
    }

    /// `key`'s node (which must be `b`) countersigns a proposal whose own
    /// signature verifies, making the link.
    pub fn countersign(&self, key: &NodeKey) -> Result<DeviceLink, DeviceError> {
        let me = id_of(key);
        if me != self.b {
            return Err(DeviceError::NotAddressedTo(me));
        }
        self.verify()?;
        let bytes = link_bytes(&self.a, &self.b, self.since_ms)?;
        Ok(DeviceLink {
            a: self.a.clone(),
            b: self.b.clone(),
            since_ms: self.since_ms,
            sig_a: self.sig_a,
            sig_b: key.signing_key().sign(&bytes).to_bytes(),
        })
    }

    /// The link, from `b`'s signature as it came back over the stream;
    /// refused unless both signatures verify.
    pub fn complete(&self, sig_b: [u8; SIG_LEN]) -> Result<DeviceLink, DeviceError> {
        let link = DeviceLink {
            a: self.a.clone(),
            b: self.b.clone(),
            since_ms: self.since_ms,
            sig_a: self.sig_a,
            sig_b,
        };
        link.verify()?;
        Ok(link)
    }
}

impl DeviceLink {
    /// The canonical bytes both signatures cover.
    pub fn canonical_bytes(&self) -> Result<Vec<u8>, DeviceError> {
        link_bytes(&self.a, &self.b, self.since_ms)
    }

    /// Checks both signatures against the two peer ids: `sig_a` by `a`,
    /// `sig_b` by `b`.
    pub fn verify(&self) -> Result<(), DeviceError> {
        let bytes = self.canonical_bytes()?;
        check_sig(&self.a, &bytes, &self.sig_a)?;
        check_sig(&self.b, &bytes, &self.sig_b)
    }

    /// True if `peer` is one of the two sides.
    pub fn involves(&self, peer: &str) -> bool {
        self.a == peer || self.b == peer
    }

    /// The two sides in ascending text order: the pair's key in a book.
    pub fn pair(&self) -> (&str, &str) {
        sorted_pair(&self.a, &self.b)
    }
}

impl DeviceUnlink {
    /// `key`'s node ends its link with `other` at `at_ms`.
    pub fn sign(key: &NodeKey, other: &str, at_ms: u64) -> Result<DeviceUnlink, DeviceError> {
        let by = id_of(key);
        let bytes = unlink_bytes(&by, other, at_ms)?;
        Ok(DeviceUnlink {
            sig: key.signing_key().sign(&bytes).to_bytes(),
            by,
            other: other.to_owned(),
            at_ms,
        })
    }

    /// The canonical bytes the signature covers.
    pub fn canonical_bytes(&self) -> Result<Vec<u8>, DeviceError> {
        unlink_bytes(&self.by, &self.other, self.at_ms)
    }

    /// Checks the signature against `by`.
    pub fn verify(&self) -> Result<(), DeviceError> {
        check_sig(&self.by, &self.canonical_bytes()?, &self.sig)
    }

    /// True if `peer` is one of the two sides.
    pub fn involves(&self, peer: &str) -> bool {
        self.by == peer || self.other == peer
    }

    /// The two sides in ascending text order: the pair's key in a book.
    pub fn pair(&self) -> (&str, &str) {
        sorted_pair(&self.by, &self.other)
    }
}

/// The bytes the signer of an unlink signs.
fn unlink_bytes(by: &str, other: &str, at_ms: u64) -> Result<Vec<u8>, DeviceError> {
    let (kb, ko) = pair_keys(by, other)?;
    let mut out = Vec::with_capacity(UNLINK_DOMAIN.len() + 72);
    out.extend_from_slice(UNLINK_DOMAIN);
    out.extend_from_slice(kb.as_bytes());
    out.extend_from_slice(ko.as_bytes());
    out.extend_from_slice(&at_ms.to_be_bytes());
    Ok(out)
}

fn sorted_pair<'a>(x: &'a str, y: &'a str) -> (&'a str, &'a str) {
    if x <= y { (x, y) } else { (y, x) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(n: u8) -> NodeKey {
        NodeKey::from_seed([n; 32])
    }

    fn id(n: u8) -> String {
        id_of(&node(n))
    }

    fn link(a: u8, b: u8, since_ms: u64) -> DeviceLink {
        LinkProposal::new(&node(a), &id(b), since_ms)
            .unwrap()
            .countersign(&node(b))
            .unwrap()
    }

    #[test]
    fn a_countersigned_link_verifies_and_both_orders_sign_the_same_bytes() {
        let l = link(1, 2, 1_000);
        assert_eq!(l.verify(), Ok(()));
        let other_way = link(2, 1, 1_000);
        assert_eq!(l.canonical_bytes(), other_way.canonical_bytes());
        assert_eq!(l.pair(), other_way.pair());
        assert!(l.involves(&id(1)) && l.involves(&id(2)) && !l.involves(&id(3)));
        let bytes = l.canonical_bytes().unwrap();
        assert!(bytes.starts_with(LINK_DOMAIN));
        assert_eq!(bytes.len(), LINK_DOMAIN.len() + 32 + 32 + 8);
        assert_eq!(&bytes[bytes.len() - 8..], &1_000u64.to_be_bytes());
    }

    #[test]
    fn forged_or_swapped_signatures_are_refused() {
        let l = link(1, 2, 1_000);
        let mut forged = l.clone();
        forged.sig_b[0] ^= 1;
        assert_eq!(forged.verify(), Err(DeviceError::BadSignature(id(2))));
        // Swapped ids with the signatures left in place: sig_a is not a's.
        let mut swapped = l.clone();
        std::mem::swap(&mut swapped.a, &mut swapped.b);
        assert!(matches!(
            swapped.verify(),
            Err(DeviceError::BadSignature(_))
        ));
        // Another time: both signatures are over other bytes.
        let mut later = l.clone();
        later.since_ms += 1;
        assert!(later.verify().is_err());
        // A third node signing in b's place.
        let mut third = l;
        third.sig_b = LinkProposal::new(&node(3), &id(1), 1_000).unwrap().sig_a;
        assert!(third.verify().is_err());
    }

    #[test]
    fn only_the_addressee_countersigns_and_only_a_genuine_proposal() {
        let p = LinkProposal::new(&node(1), &id(2), 5).unwrap();
        assert_eq!(p.verify(), Ok(()));
        assert_eq!(
            p.countersign(&node(3)),
            Err(DeviceError::NotAddressedTo(id(3)))
        );
        let mut forged = p.clone();
        forged.sig_a[5] ^= 0x40;
        assert_eq!(
            forged.countersign(&node(2)),
            Err(DeviceError::BadSignature(id(1)))
        );
        // The proposer completes it with the countersignature alone.
        let l = p.countersign(&node(2)).unwrap();
        assert_eq!(p.complete(l.sig_b), Ok(l.clone()));
        assert!(p.complete(l.sig_a).is_err());
    }

    #[test]
    fn a_node_cannot_link_itself_or_a_malformed_id() {
        assert_eq!(
            LinkProposal::new(&node(1), &id(1), 5),
            Err(DeviceError::SameNode(id(1)))
        );
        assert!(matches!(
            LinkProposal::new(&node(1), "bob", 5),
            Err(DeviceError::BadPeerId(_))
        ));
        assert!(DeviceUnlink::sign(&node(1), &id(1), 5).is_err());
    }

    #[test]
    fn an_unlink_is_signed_by_its_author_alone() {
        let u = DeviceUnlink::sign(&node(1), &id(2), 9).unwrap();
        assert_eq!(u.verify(), Ok(()));
        assert_eq!(u.pair(), link(1, 2, 1).pair());
        // Claimed by the other side (or a third node): the signature is 1's.
        let mut claimed = u.clone();
        claimed.by = id(2);
        claimed.other = id(1);
        assert!(claimed.verify().is_err());
        let mut third = u.clone();
        third.by = id(3);
        assert_eq!(third.verify(), Err(DeviceError::BadSignature(id(3))));
        // A third node signing an unlink of 1 and 2 in its own name is
        // well signed but names itself: the book refuses it (book.rs).
        let by_third = DeviceUnlink::sign(&node(3), &id(2), 9).unwrap();
        assert_eq!(by_third.verify(), Ok(()));
        assert_ne!(by_third.pair(), u.pair());
    }
}
