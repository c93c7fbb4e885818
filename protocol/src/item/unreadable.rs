//! What a node can still tell of an item a newer version made and it
//! cannot read (an unknown kind, a field it does not know, an audience it
//! does not know): the item's id, creation time and author, read leniently
//! from the payload, and the author's signature over it checked.
//!
//! The engine remembers such an item as declined (`engine/admit.rs`), so a
//! friend's catch-up finds it held and does not send it again at every
//! resync, while the item itself is neither kept nor relayed: a node cannot
//! check the audience rules of a kind it does not know (docs/protocol.md,
//! "Mixed versions").

use ciborium::Value;
use ed25519_dalek::Signature;

use crate::error::ItemError;
use crate::identity::AuthorKey;
use crate::item::cbor;
use crate::item::envelope::decode_envelope;
use crate::item::id::ItemId;

/// An item this node cannot read, as far as it can tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// The envelope's id.
    pub id: ItemId,
    /// The payload's `created_ms`.
    pub created_ms: u64,
    /// The author's peer id (canonical text).
    pub author: String,
}

impl ItemError {
    /// True for the errors a valid item of a newer version gives this one:
    /// a payload version, a kind, a body field or a header field (an
    /// audience, say) it does not know. Damaged envelopes, limits and
    /// signatures are not among them.
    pub fn is_from_a_newer_version(&self) -> bool {
        matches!(
            self,
            ItemError::UnknownVersion(_)
                | ItemError::UnknownKind(_)
                | ItemError::KindMismatch { .. }
                | ItemError::Malformed {
                    what: "payload",
                    ..
                }
        )
    }
}

/// The id, creation time and author of envelope bytes whose payload this
/// node cannot decode, when the envelope is canonical, the payload a map
/// with an unsigned `created_ms` and a 32-byte `author`, and the author's
/// signature over the payload holds; `None` otherwise.
pub fn unreadable(envelope: &[u8]) -> Option<Unreadable> {
    let parts = decode_envelope(envelope).ok()?;
    let payload = &envelope[parts.payload.clone()];
    let value: Value = cbor::read_exact("payload", payload).ok()?;
    let Value::Map(entries) = value else {
        return None;
    };
    let field = |name: &str| {
        entries
            .iter()
            .find(|(k, _)| k.as_text() == Some(name))
            .map(|(_, v)| v)
    };
    let created_ms = field("created_ms")?
        .as_integer()
        .and_then(|i| u64::try_from(i).ok())?;
    let author = AuthorKey(field("author")?.as_bytes()?.as_slice().try_into().ok()?);
    author
        .verifying_key()
        .ok()?
        .verify_strict(payload, &Signature::from_bytes(&parts.signature))
        .ok()?;
    Some(Unreadable {
        id: ItemId::of_envelope(envelope),
        created_ms,
        author: author.peer_id_string(),
    })
}

#[cfg(test)]
mod tests {
    use ciborium::Value;
    use ed25519_dalek::Signer;

    use super::*;
    use crate::identity::NodeKey;
    use crate::item::envelope::encode_envelope;
    use crate::item::verified::VerifiedItem;

    /// A payload map as a newer version might write it: kind `kind`, and
    /// one header field this version does not know when `extra`.
    fn payload(key: &NodeKey, kind: u64, extra: bool) -> Vec<u8> {
        let text = |s: &str| Value::Text(s.into());
        let mut map = vec![
            (text("version"), Value::Integer(1.into())),
            (text("kind"), Value::Integer(kind.into())),
            (text("author"), Value::Bytes(key.author().0.to_vec())),
            (
                text("created_ms"),
                Value::Integer(1_700_000_000_123u64.into()),
            ),
            (text("audience"), text("public")),
            (text("max_hops"), Value::Integer(3.into())),
            (text("body"), Value::Map(vec![(text("x"), text("y"))])),
        ];
        if extra {
            map.push((text("colour"), text("blue")));
        }
        let mut out = Vec::new();
        ciborium::into_writer(&Value::Map(map), &mut out).unwrap();
        out
    }

    fn envelope(key: &NodeKey, payload: &[u8]) -> Vec<u8> {
        let signature = key.signing_key().sign(payload).to_bytes();
        encode_envelope(payload, &signature).unwrap()
    }

    #[test]
    fn a_newer_kind_or_header_field_is_read_as_far_as_it_can_be() {
        let key = NodeKey::from_seed([7; 32]);
        for (kind, extra, error) in [
            (99, false, ItemError::UnknownKind(99)),
            (
                1,
                true,
                ItemError::Malformed {
                    what: "payload",
                    detail: String::new(),
                },
            ),
        ] {
            let bytes = envelope(&key, &payload(&key, kind, extra));
            let refused = VerifiedItem::decode(&bytes, 0).unwrap_err();
            assert_eq!(
                std::mem::discriminant(&refused),
                std::mem::discriminant(&error),
                "{refused}"
            );
            assert!(refused.is_from_a_newer_version(), "{refused}");
            assert_eq!(
                unreadable(&bytes),
                Some(Unreadable {
                    id: ItemId::of_envelope(&bytes),
                    created_ms: 1_700_000_000_123,
                    author: key.peer_id().to_string(),
                })
            );
        }
    }

    #[test]
    fn a_forged_or_damaged_envelope_tells_nothing() {
        let key = NodeKey::from_seed([7; 32]);
        let other = NodeKey::from_seed([8; 32]);
        let body = payload(&key, 99, false);
        // Signed by a key other than the author's.
        assert_eq!(unreadable(&envelope(&other, &body)), None);
        // Not an envelope at all.
        assert_eq!(unreadable(b"\xa0"), None);
        // A payload with no author.
        let mut bare = Vec::new();
        ciborium::into_writer(&Value::Map(vec![]), &mut bare).unwrap();
        assert_eq!(unreadable(&envelope(&key, &bare)), None);
    }

    #[test]
    fn only_what_a_newer_version_causes_counts_as_newer() {
        for newer in [
            ItemError::UnknownVersion(2),
            ItemError::UnknownKind(11),
            ItemError::KindMismatch {
                kind: crate::item::kinds::ItemKind::Note,
                detail: "unknown field `colour`".into(),
            },
        ] {
            assert!(newer.is_from_a_newer_version(), "{newer}");
        }
        for damaged in [
            ItemError::BadSignature,
            ItemError::NonCanonicalEnvelope,
            ItemError::Malformed {
                what: "envelope",
                detail: "not a map".into(),
            },
            ItemError::MissingVersion,
        ] {
            assert!(!damaged.is_from_a_newer_version(), "{damaged}");
        }
    }
}
