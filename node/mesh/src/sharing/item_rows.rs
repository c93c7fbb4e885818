//! Between a verified item and its row in the `items` table. The row keeps
//! the whole signed envelope in `payload` (what travels on the wire, so a
//! send needs no re-encoding) next to copies of the routing facts.

use porfiry_protocol::{ItemRecord, VerifiedItem};
use porfiry_storage::StoredItem;

/// The `items` row of `item`, held with `hops_left` (capped at its
/// `max_hops`) and got from `received_from` (`None` for our own).
pub fn stored_record(
    item: &VerifiedItem,
    hops_left: u8,
    received_from: Option<String>,
) -> StoredItem {
    StoredItem {
        record: ItemRecord::of(item, hops_left.min(item.max_hops()), received_from),
        payload: item.envelope_bytes().to_vec(),
        signature: item.signature_bytes().to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use porfiry_protocol::{Audience, Body, ItemId, NodeKey, PayloadDraft, Retraction, sign};

    use super::*;

    #[test]
    fn a_stored_record_keeps_the_exact_envelope_and_routing_facts() {
        let key = NodeKey::from_seed([3; 32]);
        let item = sign(
            &key,
            &PayloadDraft {
                created_ms: 1_000,
                audience: Audience::Group("family".into()),
                max_hops: 2,
                expires_ms: Some(9_000),
                replaces: None,
                body: Body::Retraction(Retraction {
                    target: ItemId([9; 32]),
                }),
            },
        )
        .unwrap();
        let r = stored_record(&item, 7, Some("peer".into()));
        assert_eq!(r.record.id, item.id());
        assert_eq!(r.record.author, key.peer_id().to_string());
        assert_eq!(r.record.hops_left, 2, "capped at max_hops");
        assert_eq!(r.record.retracts, Some(ItemId([9; 32])));
        assert_eq!(r.record.expires_ms, Some(9_000));
        let back = VerifiedItem::decode(&r.payload, 0).unwrap();
        assert_eq!(back.id(), item.id());
        assert_eq!(&r.signature[..], &item.signature_bytes()[..]);
    }
}
