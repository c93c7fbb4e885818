//! What a friend driven in-process sends in the flood tests: signed public
//! notes and the `Items` frames that carry them, as a real node's push does.

use porfiry_protocol::wire::{self, WireItem, WireMessage};
use porfiry_protocol::{Audience, Body, NodeKey, PayloadDraft, VerifiedItem, sign};

/// Public note `i` by `key` ("`text` `i`", four hops), a millisecond apart
/// from its neighbours.
pub fn public_note(key: &NodeKey, i: usize, text: &str) -> VerifiedItem {
    sign(
        key,
        &PayloadDraft {
            created_ms: porfiry_mesh::clock::now_ms() + i as u64,
            audience: Audience::Public,
            max_hops: 4,
            expires_ms: None,
            replaces: None,
            body: Body::Note(porfiry_protocol::Note::by_user(format!("{text} {i}"))),
        },
    )
    .expect("a test note signs")
}

/// One live-push `Items` frame holding `items`, each offered with 3 hops.
pub fn items_frame(items: &[VerifiedItem]) -> Vec<u8> {
    wire::encode(&WireMessage::Items {
        session: None,
        items: items
            .iter()
            .map(|x| WireItem {
                hops: 3,
                envelope: x.envelope_bytes().to_vec(),
            })
            .collect(),
    })
    .expect("the frame encodes")
}
