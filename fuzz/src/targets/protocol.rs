//! Targets over `porfiry-protocol`: the wire message codec, the signed item
//! envelope, the payload, and range-sync frames. Each feeds the bytes to the
//! decoder a friend's bytes reach, and checks what a decoded value must
//! satisfy (it re-encodes to something that decodes to itself; a range-sync
//! answer stays within its frame limit).

use porfiry_protocol::range_sync::{MIN_FRAME_BYTES, Reconciler, SyncSet};
use porfiry_protocol::{ItemId, Payload, VerifiedItem, wire};

/// 2026-01-01T00:00:00Z in Unix ms: the creation time of the protocol's
/// test vectors, used as "now" so their expiry checks run.
pub const NOW_MS: u64 = 1_767_225_600_000;

/// `protocol::wire::decode`: one replication message.
pub fn wire_frame(data: &[u8]) {
    let Ok(message) = wire::decode(data) else {
        return;
    };
    let again = wire::encode(&message).expect("a decoded message re-encodes");
    assert_eq!(
        wire::decode(&again).as_ref(),
        Ok(&message),
        "a decoded message re-encodes to itself"
    );
}

/// `VerifiedItem::decode`: envelope, payload checks, signature.
pub fn verified_item(data: &[u8]) {
    for now in [0, NOW_MS] {
        if let Ok(item) = VerifiedItem::decode(data, now) {
            assert_eq!(item.envelope_bytes(), data, "the item keeps its bytes");
            assert_eq!(
                Payload::decode(item.payload_bytes()).as_ref(),
                Ok(item.payload()),
                "a verified item's payload decodes alone"
            );
        }
    }
}

/// `Payload::decode`: the signed CBOR map, signature not checked.
pub fn payload(data: &[u8]) {
    let Ok(payload) = Payload::decode(data) else {
        return;
    };
    let again = payload.encode().expect("a decoded payload re-encodes");
    assert_eq!(
        Payload::decode(&again).as_ref(),
        Ok(&payload),
        "a decoded payload re-encodes to itself"
    );
}

/// The session key of the range-sync target's initiator.
pub const SYNC_KEY: [u8; 16] = *b"porfiry-fuzz-key";

/// Items in the range-sync target's set: enough for fingerprints, cut
/// ranges and id lists in one session.
pub const SYNC_ITEMS: u32 = 300;

/// The set both sides of the range-sync target start from.
pub fn sync_set() -> SyncSet {
    let mut set = SyncSet::with_capacity(SYNC_ITEMS as usize);
    for n in 0..SYNC_ITEMS {
        let mut id = [0u8; 32];
        id[..4].copy_from_slice(&n.wrapping_mul(2_654_435_761).to_be_bytes());
        id[28..].copy_from_slice(&n.to_be_bytes());
        set.insert(NOW_MS + u64::from(n / 3) * 1_000, ItemId(id));
    }
    set
}

/// Splits `data` into frames, each a 2-byte big-endian length and its bytes
/// (the last one takes what is left if its length runs past the end).
pub fn frames(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = data;
    std::iter::from_fn(move || {
        let (&[a, b], tail) = rest.split_first_chunk::<2>()?;
        let len = usize::from(u16::from_be_bytes([a, b])).min(tail.len());
        let (frame, tail) = tail.split_at(len);
        rest = tail;
        Some(frame)
    })
}

/// `Reconciler::reconcile` / `reconcile_with_ids`: the first byte picks the
/// side (even: the responder, fed the initiator's frames; odd: the
/// initiator after its opening, fed the responder's), the rest is a series
/// of frames ([`frames`]) played into one session.
pub fn range_sync(data: &[u8]) {
    let Some((&side, rest)) = data.split_first() else {
        return;
    };
    let limit = MIN_FRAME_BYTES;
    if side % 2 == 0 {
        let mut responder = Reconciler::responder(sync_set(), limit);
        for frame in frames(rest) {
            match responder.reconcile(frame) {
                Ok(answer) => assert!(answer.len() <= limit, "an answer over the frame limit"),
                Err(_) => return,
            }
        }
    } else {
        let (mut initiator, opening) = Reconciler::initiator(sync_set(), SYNC_KEY, limit);
        assert!(opening.len() <= limit);
        let (mut have, mut need) = (Vec::new(), Vec::new());
        for frame in frames(rest) {
            match initiator.reconcile_with_ids(frame, &mut have, &mut need) {
                Ok(Some(next)) => assert!(next.len() <= limit, "a query over the frame limit"),
                Ok(None) | Err(_) => return,
            }
            assert!(have.len() <= SYNC_ITEMS as usize, "an item reported twice");
        }
    }
}
