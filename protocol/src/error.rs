//! Why an item was refused: one `ItemError` variant per cause, each message
//! saying what was wrong so a log line is enough to understand a rejection.

use crate::item::kinds::ItemKind;
use crate::limits::{MAX_HOPS, MAX_SCORE, MIN_SCORE, PROTOCOL_VERSION};

/// Every way signing or decoding an item can fail.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ItemError {
    /// The bytes end in the middle of a CBOR value.
    #[error("{what} is truncated: the CBOR data ends early")]
    Truncated {
        /// Which part: "envelope", "payload" or "body".
        what: &'static str,
    },
    /// The bytes are not the CBOR shape expected.
    #[error("{what} is malformed CBOR: {detail}")]
    Malformed {
        /// Which part: "envelope" or "payload".
        what: &'static str,
        /// What the decoder objected to.
        detail: String,
    },
    /// Bytes follow the end of the CBOR value.
    #[error("{what} has {extra} stray bytes after its end")]
    TrailingBytes {
        /// Which part: "envelope" or "payload".
        what: &'static str,
        /// How many bytes follow.
        extra: usize,
    },
    /// The envelope decodes but is not written the one way this protocol
    /// writes it, so its id would not be the item's id.
    #[error("envelope is not in canonical form (map of payload then signature, shortest lengths)")]
    NonCanonicalEnvelope,
    /// Too large; checked before decoding anything.
    #[error("item is {len} bytes, more than the limit of {max}")]
    Oversized {
        /// Size offered.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The payload's `version` is not one this node speaks.
    #[error("unknown payload version {0}; this node speaks version {PROTOCOL_VERSION}")]
    UnknownVersion(u64),
    /// The payload's `version` is missing or not an unsigned integer.
    #[error("payload has no unsigned integer `version` field")]
    MissingVersion,
    /// The payload's numeric `kind` code is not known.
    #[error("unknown item kind code {0}")]
    UnknownKind(u64),
    /// A kind name that is not one of ours.
    #[error(
        "unknown item kind {0:?}: expected note, stagnation_strategy, thinking_method, rating, llm_address or retraction"
    )]
    UnknownKindName(String),
    /// The body does not have the fields of the kind the header names.
    #[error("body does not match kind {kind}: {detail}")]
    KindMismatch {
        /// Kind named in the header.
        kind: ItemKind,
        /// What did not fit.
        detail: String,
    },
    /// A club change names a malformed club or target.
    #[error("bad club change: {0}")]
    BadClub(String),
    /// The signature field has the wrong length.
    #[error("signature is {len} bytes, expected 64")]
    BadSignatureLength {
        /// Length found.
        len: usize,
    },
    /// The author bytes are not a point on the ed25519 curve.
    #[error("author key is not a valid ed25519 public key")]
    BadAuthorKey,
    /// The author key has small order: anyone could forge its signatures.
    #[error("author key is weak (a small-order point) and is refused")]
    WeakKey,
    /// The signature does not verify over the payload bytes for the author.
    #[error("signature does not verify for this payload and author")]
    BadSignature,
    /// The item's expiry has passed.
    #[error("item expired at {expires_ms} ms (now {now_ms} ms)")]
    Expired {
        /// The item's expiry, Unix ms.
        expires_ms: u64,
        /// The time given to the decoder, Unix ms.
        now_ms: u64,
    },
    /// The expiry is not after the creation time.
    #[error("expiry {expires_ms} ms is not after creation {created_ms} ms")]
    ExpiresBeforeCreated {
        /// Creation, Unix ms.
        created_ms: u64,
        /// Expiry, Unix ms.
        expires_ms: u64,
    },
    /// `max_hops` is zero or above the limit.
    #[error("max_hops {hops} is outside 1..={MAX_HOPS}")]
    HopsOutOfRange {
        /// Value given.
        hops: u8,
    },
    /// A text field is longer than its limit.
    #[error("{field} is {len} bytes, more than the limit of {max}")]
    TooLong {
        /// Field name, e.g. "note.text".
        field: &'static str,
        /// Length in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A field that must say something is empty.
    #[error("{field} must not be empty")]
    Empty {
        /// Field name.
        field: &'static str,
    },
    /// A list has more entries than its limit.
    #[error("{field} has {count} entries, more than the limit of {max}")]
    TooManyEntries {
        /// Field name.
        field: &'static str,
        /// Entries given.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// A rating score outside the scale.
    #[error("rating score {0} is outside {MIN_SCORE}..={MAX_SCORE}")]
    ScoreOutOfRange(i8),
    /// An LLM endpoint that is neither an http(s) URL nor a peer id.
    #[error("endpoint {0:?} is neither an http(s) URL nor a peer id")]
    BadEndpoint(String),
    /// An address in a `reachable_at` item that is not a multiaddr.
    #[error("address {0:?} is not a multiaddr (/ip4/…/tcp/…)")]
    BadAddress(String),
    /// A `reachable_at` item meant for anyone but the author's friends, or
    /// allowed more than one hop: addresses never leave the friend set.
    #[error("a reachable_at item must have audience friends and max_hops 1")]
    AddressesBeyondFriends,
    /// An LLM endpoint URL with `user:password@` in it: secrets never travel.
    #[error(
        "endpoint URL carries credentials (user@ or user:password@); secrets never enter items"
    )]
    CredentialsInEndpoint,
    /// A `device_link` item whose statement does not verify, whose
    /// audience is not `devices`, or whose author did not sign it.
    #[error("bad device link: {0}")]
    BadDeviceLink(String),
    /// Text that is not a 64-digit hex item id.
    #[error("bad item id {0:?}: expected 64 hex digits")]
    BadItemId(String),
    /// A mind record's version vector names something that is not a
    /// device's peer id (the canonical text of an ed25519 PeerId).
    #[error("mind record version vector names {0:?}, which is not a device peer id")]
    BadDevice(String),
    /// A mind record's version vector has a counter of 0: a device that
    /// never wrote the record is left out, so each vector has one form.
    #[error(
        "mind record version vector gives device {0} the counter 0; a device that never wrote is left out"
    )]
    ZeroVersionCounter(String),
    /// Counting one more version would overflow a device's counter.
    #[error("version counter of device {0} is at its maximum")]
    VersionCounterOverflow(String),
    /// A `mind_record` item meant for anyone but the author's person's
    /// devices: a person's memory never leaves its devices.
    #[error("a mind_record item must have audience devices")]
    MindBeyondDevices,
    /// A `mind_record` version whose vector does not count its own
    /// writer: every version a device writes bumps its own entry, so one
    /// without it claims history its writer never made.
    #[error("a mind_record version's vector must count its author ({0})")]
    MindWithoutAuthor(String),
    /// A deleted mind record (a tombstone) that still carries fields.
    #[error("a deleted mind record carries {0} fields; a tombstone has none")]
    TombstoneWithFields(usize),
    /// A mind record table name that is not one of ours.
    #[error(
        "unknown mind table {0:?}: expected diary, concept, link, goal, task, llm_memory, strategy, method, rating or llm"
    )]
    UnknownMindTable(String),
    /// An item offered as this node's own names another author.
    #[error("item is by {author}, not by this node ({local})")]
    NotOwn {
        /// The item's author, as a peer id.
        author: String,
        /// This node's peer id.
        local: String,
    },
}
