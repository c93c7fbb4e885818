//! The receiving edge of every simulated node, verifying each distinct
//! envelope once per run.
//!
//! The real driver decodes and batch-verifies every `Items` frame before the
//! engine sees it (`Inbound::from_wire`). In a simulation the same signed
//! bytes reach hundreds of nodes, and checking the same signature again at
//! each is most of a big run's time. A signature's verdict depends on the
//! bytes alone, so this edge remembers the items whose exact envelope bytes
//! verified and hands later copies to the engine as the same verified item.
//! The one check that depends on the receiver's clock, expiry, is made again
//! on every copy (an expired copy goes through the full path and is refused
//! there); anything not seen before — forged, tampered or new bytes — goes
//! through `verify_batch` as in the real node. The engine gets the same input
//! as from `Inbound::from_wire`, item for item, in the same order.

use rustc_hash::FxHashMap;

use porfiry_protocol::engine::Inbound;
use porfiry_protocol::wire::WireMessage;
use porfiry_protocol::{VerifiedItem, verify_batch};

/// Envelopes that verified, by their exact bytes.
#[derive(Debug, Default)]
pub struct VerifyCache {
    verified: FxHashMap<Vec<u8>, VerifiedItem>,
    /// Envelopes whose signature was checked (for the tests and reports).
    pub checked: u64,
}

impl VerifyCache {
    /// Converts a decoded frame as `Inbound::from_wire(message, now_ms)`
    /// does, checking each signature only the first time its bytes arrive.
    pub fn inbound(&mut self, message: WireMessage, now_ms: u64) -> Inbound {
        let WireMessage::Items { session, items } = message else {
            return Inbound::from_wire(message, now_ms);
        };
        let known: Vec<Option<VerifiedItem>> = items
            .iter()
            .map(|w| {
                self.verified
                    .get(&w.envelope)
                    .filter(|v| v.expires_ms().is_none_or(|e| e > now_ms))
                    .cloned()
            })
            .collect();
        let fresh: Vec<&[u8]> = items
            .iter()
            .zip(&known)
            .filter(|(_, k)| k.is_none())
            .map(|(w, _)| w.envelope.as_slice())
            .collect();
        self.checked += fresh.len() as u64;
        let mut fresh_results = verify_batch(&fresh, now_ms).into_iter();
        let mut results = Vec::with_capacity(items.len());
        for (wire, known) in items.iter().zip(known) {
            let result = match known {
                Some(item) => Ok(item),
                // One result per fresh envelope, in order.
                None => match fresh_results.next() {
                    Some(Ok(item)) => {
                        self.verified.insert(wire.envelope.clone(), item.clone());
                        Ok(item)
                    }
                    Some(Err(e)) => Err(e),
                    None => break, // verify_batch gives one result per envelope
                },
            };
            results.push(result);
        }
        Inbound::items(session, &items, results)
    }
}

#[cfg(test)]
mod tests {
    use porfiry_protocol::wire::WireItem;
    use porfiry_protocol::{Audience, Body, NodeKey, Note, PayloadDraft, sign};

    use super::*;

    const NOW: u64 = 1_750_000_000_000;

    fn item(key: &NodeKey, text: &str, expires_ms: Option<u64>) -> VerifiedItem {
        let draft = PayloadDraft {
            created_ms: NOW - 1_000,
            audience: Audience::Public,
            max_hops: 3,
            expires_ms,
            replaces: None,
            body: Body::Note(Note::by_user(text)),
        };
        sign(key, &draft).expect("signs")
    }

    fn frame(items: &[&VerifiedItem], tamper: Option<usize>) -> WireMessage {
        let items = items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let mut envelope = v.envelope_bytes().to_vec();
                if tamper == Some(i) {
                    let last = envelope.len() - 1;
                    envelope[last] ^= 1;
                }
                WireItem { hops: 2, envelope }
            })
            .collect();
        WireMessage::Items {
            session: Some(7),
            items,
        }
    }

    fn ids(inbound: &Inbound) -> (Vec<String>, usize) {
        match inbound {
            Inbound::Items { items, invalid, .. } => (
                items.iter().map(|r| r.item.id().to_string()).collect(),
                invalid.len(),
            ),
            other => panic!("not items: {other:?}"),
        }
    }

    #[test]
    fn same_input_as_the_real_edge_with_each_signature_checked_once() {
        let key = NodeKey::from_seed([7; 32]);
        let (a, b) = (item(&key, "a", None), item(&key, "b", None));
        let mut cache = VerifyCache::default();
        for _ in 0..3 {
            let msg = frame(&[&a, &b], None);
            let want = Inbound::from_wire(msg.clone(), NOW);
            assert_eq!(ids(&cache.inbound(msg, NOW)), ids(&want));
        }
        assert_eq!(cache.checked, 2, "two envelopes, each checked once");
    }

    #[test]
    fn tampered_bytes_are_checked_and_refused_even_after_the_good_copy() {
        let key = NodeKey::from_seed([7; 32]);
        let (a, b) = (item(&key, "a", None), item(&key, "b", None));
        let mut cache = VerifyCache::default();
        cache.inbound(frame(&[&a, &b], None), NOW);
        let msg = frame(&[&a, &b], Some(1));
        let want = Inbound::from_wire(msg.clone(), NOW);
        let got = cache.inbound(msg, NOW);
        assert_eq!(ids(&got), ids(&want));
        assert_eq!(ids(&got).1, 1, "the tampered copy is refused");
        assert_eq!(cache.checked, 3);
    }

    #[test]
    fn a_copy_that_expired_since_is_refused() {
        let key = NodeKey::from_seed([7; 32]);
        let a = item(&key, "a", Some(NOW + 1_000));
        let mut cache = VerifyCache::default();
        assert_eq!(ids(&cache.inbound(frame(&[&a], None), NOW)).1, 0);
        let later = cache.inbound(frame(&[&a], None), NOW + 1_000);
        assert_eq!(ids(&later), (vec![], 1), "expired at its expiry time");
    }

    #[test]
    fn other_messages_pass_through() {
        let mut cache = VerifyCache::default();
        let msg = WireMessage::Want { ids: vec![] };
        assert!(matches!(cache.inbound(msg, NOW), Inbound::Want(ids) if ids.is_empty()));
    }
}
