//! The messages friends exchange for replication, and their CBOR codec.
//!
//! Every message is one CBOR array whose first element is a numeric type
//! code and whose other elements are positional fields (see `docs/wire.md`
//! for the table and test vectors). [`decode`] checks the frame size cap
//! before parsing anything, then how many CBOR data items the frame holds
//! ([`MAX_CBOR_ITEMS`], one pass, nothing built), then the shape, then every
//! per-field cap, and names what was wrong in a [`WireError`]. An unknown type code is refused
//! as [`WireError::UnknownType`] rather than skipped.

mod cbor_form;
mod heads;

use crate::item::id::ItemId;
use crate::limits::MAX_ENVELOPE_BYTES;
use cbor_form::{from_value, map_cbor_error, to_value};

/// Largest encoded wire message accepted or produced (one decoded message,
/// the body of one transport frame): 1 MiB holds sixteen maximum-size
/// envelopes, or thousands of ordinary notes, per message while keeping what
/// one hostile message can make us allocate small. The node's transport
/// frame cap (`porfiry_mesh::net::limits::MAX_TRANSPORT_FRAME_BYTES`,
/// 4 MiB) is deliberately larger, so every message this cap admits fits in a
/// frame; this cap is the one that binds.
pub const MAX_WIRE_MESSAGE_BYTES: usize = 1024 * 1024;

/// Largest range-sync frame (`crate::range_sync`): 256 KiB carries about
/// 32,000 short ids per round, so a catch-up of tens of thousands of items
/// needs only a round or two, and still fits in one wire message with room
/// for the header.
pub const SYNC_FRAME_BYTES: usize = 256 * 1024;

/// Size up to which items are packed into one `Items` message (the cap,
/// [`MAX_WIRE_MESSAGE_BYTES`], is what a receiver accepts): 256 KiB is
/// about 800 ordinary notes or four of the largest envelopes. A batch of
/// 10,000 notes then arrives as a dozen messages rather than three, so the
/// receiver verifies the next while it stores the one before (measured in
/// `live_10k`, docs/benchmarks.md); a single envelope larger than this
/// still travels, alone in its message.
pub const ITEMS_MESSAGE_TARGET_BYTES: usize = 256 * 1024;

/// Most ids in one `Have` or `Want`: 4,096 ids are 128 KiB, an eighth of a
/// frame, and more than any batch delay collects from a person typing.
pub const MAX_IDS_PER_MESSAGE: usize = 4096;

/// Most envelopes in one `Items` message; the byte cap usually binds first,
/// this bounds the per-item bookkeeping a frame of tiny items can cause.
pub const MAX_ITEMS_PER_MESSAGE: usize = 4096;

/// Most CBOR data items one message may hold: the largest message is an
/// `Items` of [`MAX_ITEMS_PER_MESSAGE`] envelopes, three items each
/// (`[hops, envelope]`), in a four-item frame. Checked before the frame is
/// parsed, because the parser builds a value of 32 bytes or more per item,
/// and a frame of one-byte items would otherwise cost 32 times its size.
pub const MAX_CBOR_ITEMS: usize = 4 + 3 * MAX_ITEMS_PER_MESSAGE;

/// Longest `SyncAbort` reason: a log line, not a document.
pub const MAX_REASON_BYTES: usize = 256;

/// Room left for the array header, type code and session field when packing
/// items into a frame (a CBOR u64 plus two headers is at most 19 bytes).
const FRAME_HEADER_SLACK: usize = 32;

/// "This node holds item `id` and may pass it on `hops` more hops."
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Announce {
    /// The item.
    pub id: ItemId,
    /// The announcer's hops left for it (the receiver keeps one fewer).
    pub hops: u8,
}

/// One envelope in an `Items` message, with the sender's hops left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireItem {
    /// The sender's hops left; the receiver keeps `min(hops - 1, max_hops)`.
    pub hops: u8,
    /// The exact signed envelope bytes.
    pub envelope: Vec<u8>,
}

/// A replication message between two friends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireMessage {
    /// Lazy push: ids (with hops) the sender holds and may pass on.
    Have {
        /// The announced items.
        items: Vec<Announce>,
    },
    /// Pull: send me these items.
    Want {
        /// The wanted ids.
        ids: Vec<ItemId>,
    },
    /// Item envelopes: an answer to `Want`, an author's eager push, or the
    /// items a catch-up session found missing (`session` set).
    Items {
        /// The catch-up session these belong to, if any.
        session: Option<u64>,
        /// The envelopes.
        items: Vec<WireItem>,
    },
    /// Range-sync frame from the session's initiator (the sending side).
    SyncQuery {
        /// Initiator-chosen session number.
        session: u64,
        /// The range-sync frame.
        frame: Vec<u8>,
    },
    /// Range-sync frame from the responder (the receiving side).
    SyncReply {
        /// The session answered.
        session: u64,
        /// The range-sync frame.
        frame: Vec<u8>,
    },
    /// The initiator finished reconciling and has sent `sent` items for it.
    SyncDone {
        /// The session.
        session: u64,
        /// How many items the session's `Items` messages carry in total.
        sent: u32,
    },
    /// Either side gives up on a session.
    SyncAbort {
        /// The session.
        session: u64,
        /// Why, for the log.
        reason: String,
    },
}

/// Why a frame could not be decoded (or encoded).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The frame exceeds [`MAX_WIRE_MESSAGE_BYTES`]; checked before decoding.
    #[error("frame is {len} bytes, more than the limit of {max}")]
    FrameTooLarge {
        /// Size offered.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The bytes end in the middle of a CBOR value.
    #[error("frame is truncated: the CBOR data ends early")]
    Truncated,
    /// Not well-formed CBOR.
    #[error("frame is not valid CBOR: {0}")]
    BadCbor(String),
    /// Bytes follow the message.
    #[error("frame has {0} stray bytes after the message")]
    TrailingBytes(usize),
    /// The top level is not `[type, fields…]`.
    #[error("frame is not an array starting with an unsigned type code")]
    NotAMessage,
    /// A type code this node does not know.
    #[error("unknown message type {0}; known types are 1 (have) to 7 (sync-abort)")]
    UnknownType(u64),
    /// The message has the wrong number of fields.
    #[error("{message} has {got} fields, expected {expected}")]
    WrongArity {
        /// Message name.
        message: &'static str,
        /// Fields found (after the type code).
        got: usize,
        /// Fields required.
        expected: usize,
    },
    /// A field has the wrong CBOR type or an impossible value.
    #[error("{message}.{field}: {detail}")]
    BadField {
        /// Message name.
        message: &'static str,
        /// Field name.
        field: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// A list is longer than its cap.
    #[error("{message} carries {count} {what}, more than the limit of {max}")]
    TooMany {
        /// Message name.
        message: &'static str,
        /// What is counted.
        what: &'static str,
        /// How many.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// A byte field is longer than its cap.
    #[error("{message}.{field} is {len} bytes, more than the limit of {max}")]
    FieldTooLarge {
        /// Message name.
        message: &'static str,
        /// Field name.
        field: &'static str,
        /// Size offered.
        len: usize,
        /// The limit.
        max: usize,
    },
}

impl WireMessage {
    /// The message's name, as used in errors and logs.
    pub fn name(&self) -> &'static str {
        match self {
            WireMessage::Have { .. } => "have",
            WireMessage::Want { .. } => "want",
            WireMessage::Items { .. } => "items",
            WireMessage::SyncQuery { .. } => "sync-query",
            WireMessage::SyncReply { .. } => "sync-reply",
            WireMessage::SyncDone { .. } => "sync-done",
            WireMessage::SyncAbort { .. } => "sync-abort",
        }
    }
}

/// Encodes a message. Refuses (rather than sends) anything that breaks a cap
/// the receiver checks, so a bug here shows up at the sender.
pub fn encode(message: &WireMessage) -> Result<Vec<u8>, WireError> {
    check_caps(message)?;
    let value = to_value(message);
    let mut out = Vec::new();
    ciborium::into_writer(&value, &mut out).map_err(|e| WireError::BadCbor(e.to_string()))?;
    if out.len() > MAX_WIRE_MESSAGE_BYTES {
        return Err(WireError::FrameTooLarge {
            len: out.len(),
            max: MAX_WIRE_MESSAGE_BYTES,
        });
    }
    Ok(out)
}

/// Decodes one frame: size cap first, then the count of CBOR data items,
/// then CBOR, then shape and field caps.
pub fn decode(frame: &[u8]) -> Result<WireMessage, WireError> {
    if frame.len() > MAX_WIRE_MESSAGE_BYTES {
        return Err(WireError::FrameTooLarge {
            len: frame.len(),
            max: MAX_WIRE_MESSAGE_BYTES,
        });
    }
    let items = heads::count(frame);
    if items > MAX_CBOR_ITEMS {
        return Err(WireError::TooMany {
            message: "frame",
            what: "CBOR data items",
            count: items,
            max: MAX_CBOR_ITEMS,
        });
    }
    let mut rest = frame;
    let value: ciborium::Value = ciborium::from_reader(&mut rest).map_err(map_cbor_error)?;
    if !rest.is_empty() {
        return Err(WireError::TrailingBytes(rest.len()));
    }
    let message = from_value(value)?;
    check_caps(&message)?;
    Ok(message)
}

/// Packs envelopes into `Items` messages of about
/// [`ITEMS_MESSAGE_TARGET_BYTES`] (fewer items if the count cap binds), in
/// order. With a `session`, a final `SyncDone` counting them all
/// follows. Envelopes over [`MAX_ENVELOPE_BYTES`] are skipped (no valid item
/// is that large) and not counted.
pub fn pack_items(
    session: Option<u64>,
    items: impl IntoIterator<Item = WireItem>,
) -> Vec<WireMessage> {
    let (mut messages, sent) = pack_chunk(session, items);
    if let Some(session) = session {
        messages.push(WireMessage::SyncDone { session, sent });
    }
    messages
}

/// Packs one chunk of a session's envelopes (or a live batch, without a
/// session) into `Items` messages of about [`ITEMS_MESSAGE_TARGET_BYTES`], in order, with
/// no `SyncDone`; also returns how many envelopes were packed. Envelopes
/// over [`MAX_ENVELOPE_BYTES`] are skipped and not counted.
pub fn pack_chunk(
    session: Option<u64>,
    items: impl IntoIterator<Item = WireItem>,
) -> (Vec<WireMessage>, u32) {
    let budget = ITEMS_MESSAGE_TARGET_BYTES - FRAME_HEADER_SLACK;
    let mut messages = Vec::new();
    let mut current: Vec<WireItem> = Vec::new();
    let mut size = 0usize;
    let mut sent: u32 = 0;
    for item in items {
        if item.envelope.len() > MAX_ENVELOPE_BYTES {
            continue;
        }
        let cost = encoded_item_len(&item);
        if !current.is_empty() && (size + cost > budget || current.len() >= MAX_ITEMS_PER_MESSAGE) {
            messages.push(WireMessage::Items {
                session,
                items: std::mem::take(&mut current),
            });
            size = 0;
        }
        size += cost;
        sent = sent.saturating_add(1);
        current.push(item);
    }
    if !current.is_empty() {
        messages.push(WireMessage::Items {
            session,
            items: current,
        });
    }
    (messages, sent)
}

/// Bytes one item adds to an `Items` array: array header, hops, byte-string
/// header and the envelope itself.
fn encoded_item_len(item: &WireItem) -> usize {
    1 + 2 + 5 + item.envelope.len()
}

fn check_caps(message: &WireMessage) -> Result<(), WireError> {
    let name = message.name();
    let too_many = |what, count: usize, max| {
        if count > max {
            Err(WireError::TooMany {
                message: name,
                what,
                count,
                max,
            })
        } else {
            Ok(())
        }
    };
    match message {
        WireMessage::Have { items } => too_many("ids", items.len(), MAX_IDS_PER_MESSAGE),
        WireMessage::Want { ids } => too_many("ids", ids.len(), MAX_IDS_PER_MESSAGE),
        WireMessage::Items { items, .. } => {
            too_many("items", items.len(), MAX_ITEMS_PER_MESSAGE)?;
            match items.iter().find(|i| i.envelope.len() > MAX_ENVELOPE_BYTES) {
                Some(big) => Err(WireError::FieldTooLarge {
                    message: name,
                    field: "envelope",
                    len: big.envelope.len(),
                    max: MAX_ENVELOPE_BYTES,
                }),
                None => Ok(()),
            }
        }
        WireMessage::SyncQuery { frame, .. } | WireMessage::SyncReply { frame, .. } => {
            if frame.len() > SYNC_FRAME_BYTES {
                Err(WireError::FieldTooLarge {
                    message: name,
                    field: "frame",
                    len: frame.len(),
                    max: SYNC_FRAME_BYTES,
                })
            } else {
                Ok(())
            }
        }
        WireMessage::SyncDone { .. } => Ok(()),
        WireMessage::SyncAbort { reason, .. } => {
            if reason.len() > MAX_REASON_BYTES {
                Err(WireError::FieldTooLarge {
                    message: name,
                    field: "reason",
                    len: reason.len(),
                    max: MAX_REASON_BYTES,
                })
            } else {
                Ok(())
            }
        }
    }
}
