//! `VerifiedItem`: an item whose envelope decoded, whose limits hold and
//! whose signature verified. Its fields are private and the only ways to
//! make one are [`sign`] and [`VerifiedItem::decode`] (or `verify_batch`),
//! so holding one is proof of all three checks; or
//! [`VerifiedItem::vouch_own`], where the holder of the author's secret key
//! vouches for the signature of an item its own database holds.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use ed25519_dalek::{Signature, Signer, VerifyingKey};

use crate::error::ItemError;
use crate::identity::{AuthorKey, NodeKey};
use crate::item::audience::Audience;
use crate::item::batch_equation::Signed;
use crate::item::body::Body;
use crate::item::envelope::{TAIL_LEN, decode_envelope, encode_envelope};
use crate::item::id::ItemId;
use crate::item::kinds::ItemKind;
use crate::item::payload::{Payload, PayloadDraft};
use crate::item::record::{club_removal, club_target};
use crate::limits::{MAX_ENVELOPE_BYTES, SIGNATURE_LEN};
use crate::policy::ItemRoute;

/// A verified item. Cloning is cheap (shared).
///
/// There is no way to build one from parts without verifying:
///
/// ```compile_fail
/// let item = porfiry_protocol::VerifiedItem(todo!());
/// ```
///
/// ```
/// use porfiry_protocol::{Audience, Body, NodeKey, PayloadDraft, Retraction, ItemId, VerifiedItem, sign};
/// let key = NodeKey::from_seed([1; 32]);
/// let draft = PayloadDraft {
///     created_ms: 1, audience: Audience::Public, max_hops: 2, expires_ms: None, replaces: None,
///     body: Body::Retraction(Retraction { target: ItemId([0; 32]) }),
/// };
/// let item = sign(&key, &draft)?;
/// let back = VerifiedItem::decode(item.envelope_bytes(), 0)?;
/// assert_eq!(back.id(), item.id());
/// # Ok::<(), porfiry_protocol::ItemError>(())
/// ```
#[derive(Clone)]
pub struct VerifiedItem(Arc<Inner>);

struct Inner {
    id: ItemId,
    envelope: Vec<u8>,
    payload_range: Range<usize>,
    signature: [u8; SIGNATURE_LEN],
    payload: Payload,
    author_peer_id: String,
}

/// Signs `draft` as `key`: validates the limits, encodes the payload, signs
/// the exact bytes and wraps them in an envelope.
pub fn sign(key: &NodeKey, draft: &PayloadDraft) -> Result<VerifiedItem, ItemError> {
    let payload = Payload::from_draft(key.author(), draft);
    payload.validate()?;
    let payload_bytes = payload.encode()?;
    let signature = key.signing_key().sign(&payload_bytes).to_bytes();
    let envelope = encode_envelope(&payload_bytes, &signature)?;
    if envelope.len() > MAX_ENVELOPE_BYTES {
        return Err(ItemError::Oversized {
            len: envelope.len(),
            max: MAX_ENVELOPE_BYTES,
        });
    }
    let start = envelope.len() - TAIL_LEN - payload_bytes.len();
    Ok(VerifiedItem::assemble(
        envelope,
        payload.author.peer_id_string(),
        start..start + payload_bytes.len(),
        signature,
        payload,
    ))
}

/// An item that passed every check but the signature (shared with batches).
pub(crate) struct Unverified {
    author_peer_id: String,
    envelope: Vec<u8>,
    payload_range: Range<usize>,
    signature: [u8; SIGNATURE_LEN],
    pub(crate) key: VerifyingKey,
    payload: Payload,
}

impl Unverified {
    /// Size, envelope shape, payload, limits, weak key and expiry: every
    /// check but the signature.
    pub(crate) fn check(bytes: &[u8], now_ms: u64) -> Result<Unverified, ItemError> {
        Unverified::check_with(bytes, now_ms, |author| {
            Ok((author.verifying_key()?, author.peer_id_string()))
        })
    }

    /// [`Unverified::check`] with the author's key decompressed and its
    /// peer id spelled by `key_of` (a batch asks once per author, not once
    /// per item).
    pub(crate) fn check_with(
        bytes: &[u8],
        now_ms: u64,
        key_of: impl FnOnce(&AuthorKey) -> Result<(VerifyingKey, String), ItemError>,
    ) -> Result<Unverified, ItemError> {
        let parts = decode_envelope(bytes)?;
        let payload = Payload::decode(&bytes[parts.payload.clone()])?;
        let (key, author_peer_id) = key_of(&payload.author)?;
        if let Some(expires_ms) = payload.expires_ms
            && expires_ms <= now_ms
        {
            return Err(ItemError::Expired { expires_ms, now_ms });
        }
        Ok(Unverified {
            author_peer_id,
            envelope: bytes.to_vec(),
            payload_range: parts.payload,
            signature: parts.signature,
            key,
            payload,
        })
    }

    pub(crate) fn payload_bytes(&self) -> &[u8] {
        &self.envelope[self.payload_range.clone()]
    }

    /// The payload, signature and key, for a batch equation.
    pub(crate) fn signed(&self) -> Signed<'_> {
        Signed {
            message: self.payload_bytes(),
            signature: &self.signature,
            key: &self.key,
        }
    }

    pub(crate) fn signature(&self) -> Signature {
        Signature::from_bytes(&self.signature)
    }

    /// The strict single-item check (RFC 8032 plus small-order refusals).
    pub(crate) fn verify_strict(self) -> Result<VerifiedItem, ItemError> {
        self.key
            .verify_strict(self.payload_bytes(), &self.signature())
            .map_err(|_| ItemError::BadSignature)?;
        Ok(self.into_verified())
    }

    /// Wraps after a successful (batch) verification.
    pub(crate) fn into_verified(self) -> VerifiedItem {
        VerifiedItem::assemble(
            self.envelope,
            self.author_peer_id,
            self.payload_range,
            self.signature,
            self.payload,
        )
    }
}

impl VerifiedItem {
    /// Decodes and verifies envelope bytes received from anywhere. `now_ms`
    /// is the caller's clock; items with `expires_ms <= now_ms` are refused
    /// (pass 0 to accept expired items, e.g. when re-reading local storage).
    pub fn decode(bytes: &[u8], now_ms: u64) -> Result<VerifiedItem, ItemError> {
        Unverified::check(bytes, now_ms)?.verify_strict()
    }

    /// Items of our own read back from our own database (another process
    /// of this node, a `notes post`, signed and stored them): every check
    /// of [`VerifiedItem::decode`] but the signature, which `key`'s holder
    /// vouches for. The database file and the key file share one data
    /// directory and one owner, so whoever could have written a bad row
    /// could as well have signed it; checking again would prove nothing,
    /// and every friend verifies the item on arrival all the same. An item
    /// of another author is refused with [`ItemError::NotOwn`]. Result `i`
    /// belongs to `envelopes[i]`.
    pub fn vouch_own(
        key: &NodeKey,
        envelopes: &[&[u8]],
        now_ms: u64,
    ) -> Vec<Result<VerifiedItem, ItemError>> {
        let local = key.author();
        let verifying = key.signing_key().verifying_key();
        let peer_id = local.peer_id_string();
        envelopes
            .iter()
            .map(|bytes| {
                let unverified = Unverified::check_with(bytes, now_ms, |author| {
                    if *author != local {
                        return Err(ItemError::NotOwn {
                            author: author.peer_id_string(),
                            local: peer_id.clone(),
                        });
                    }
                    Ok((verifying, peer_id.clone()))
                })?;
                Ok(unverified.into_verified())
            })
            .collect()
    }

    /// The payload of envelope bytes this node verified before it stored
    /// them (a row of its own `items` table), decoded and checked like
    /// [`VerifiedItem::decode`]'s but for the signature, which was checked
    /// when the item came or was made. Storage reads the bodies it keeps
    /// tables of (memory versions, device statements) this way: verifying
    /// each again cost a debug build about as much as everything else a
    /// catch-up of 50,000 memory versions did. Never for bytes from outside.
    pub fn stored_payload(bytes: &[u8]) -> Result<Payload, ItemError> {
        let parts = decode_envelope(bytes)?;
        let payload = Payload::decode(&bytes[parts.payload])?;
        payload.validate()?;
        Ok(payload)
    }

    /// Rebuilds an item from its stored payload and signature (as the
    /// `items` table keeps them) and verifies it like [`VerifiedItem::decode`].
    pub fn from_parts(
        payload: &[u8],
        signature: &[u8],
        now_ms: u64,
    ) -> Result<VerifiedItem, ItemError> {
        let signature: &[u8; SIGNATURE_LEN] =
            signature
                .try_into()
                .map_err(|_| ItemError::BadSignatureLength {
                    len: signature.len(),
                })?;
        if payload.len() > MAX_ENVELOPE_BYTES {
            return Err(ItemError::Oversized {
                len: payload.len(),
                max: MAX_ENVELOPE_BYTES,
            });
        }
        VerifiedItem::decode(&encode_envelope(payload, signature)?, now_ms)
    }

    fn assemble(
        envelope: Vec<u8>,
        author_peer_id: String,
        payload_range: Range<usize>,
        signature: [u8; SIGNATURE_LEN],
        payload: Payload,
    ) -> VerifiedItem {
        VerifiedItem(Arc::new(Inner {
            id: ItemId::of_envelope(&envelope),
            author_peer_id,
            envelope,
            payload_range,
            signature,
            payload,
        }))
    }

    /// SHA-256 of the envelope bytes.
    pub fn id(&self) -> ItemId {
        self.0.id
    }

    /// The exact envelope bytes, as sent on the wire.
    pub fn envelope_bytes(&self) -> &[u8] {
        &self.0.envelope
    }

    /// The exact signed payload bytes.
    pub fn payload_bytes(&self) -> &[u8] {
        &self.0.envelope[self.0.payload_range.clone()]
    }

    /// The 64-byte signature.
    pub fn signature_bytes(&self) -> &[u8; SIGNATURE_LEN] {
        &self.0.signature
    }

    /// The decoded header and body.
    pub fn payload(&self) -> &Payload {
        &self.0.payload
    }

    /// The body.
    pub fn body(&self) -> &Body {
        &self.0.payload.body
    }

    /// The kind.
    pub fn kind(&self) -> ItemKind {
        self.0.payload.kind()
    }

    /// The author's public key.
    pub fn author(&self) -> AuthorKey {
        self.0.payload.author
    }

    /// The author's node id (`12D3KooW…`), computed once.
    pub fn author_peer_id(&self) -> &str {
        &self.0.author_peer_id
    }

    /// Who may receive it.
    pub fn audience(&self) -> &Audience {
        &self.0.payload.audience
    }

    /// How far the author lets it travel.
    pub fn max_hops(&self) -> u8 {
        self.0.payload.max_hops
    }

    /// Creation time, Unix ms (the author's clock).
    pub fn created_ms(&self) -> u64 {
        self.0.payload.created_ms
    }

    /// Expiry, Unix ms.
    pub fn expires_ms(&self) -> Option<u64> {
        self.0.payload.expires_ms
    }

    /// The item this one supersedes.
    pub fn replaces(&self) -> Option<ItemId> {
        self.0.payload.replaces
    }

    /// The routing facts `policy::may_send` needs, for this node's copy that
    /// may travel `hops_left` more hops and came from `received_from`
    /// (`None` for our own items).
    pub fn route<'a>(&'a self, hops_left: u8, received_from: Option<&'a str>) -> ItemRoute<'a> {
        ItemRoute {
            author: &self.0.author_peer_id,
            audience: &self.0.payload.audience,
            hops_left,
            received_from,
            expires_ms: self.0.payload.expires_ms,
            created_ms: self.0.payload.created_ms,
            club_target: club_target(self),
            club_removal: club_removal(self),
            device_statement: self.kind() == ItemKind::DeviceLink,
        }
    }
}

impl PartialEq for VerifiedItem {
    fn eq(&self, other: &Self) -> bool {
        self.0.id == other.0.id
    }
}

impl Eq for VerifiedItem {}

impl std::hash::Hash for VerifiedItem {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.id.hash(state);
    }
}

impl fmt::Debug for VerifiedItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VerifiedItem")
            .field("id", &self.0.id)
            .field("kind", &self.kind())
            .field("author", &self.0.author_peer_id)
            .field("audience", &self.0.payload.audience)
            .field("created_ms", &self.0.payload.created_ms)
            .finish()
    }
}
