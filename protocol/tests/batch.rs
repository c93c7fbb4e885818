//! `verify_batch`: the same answers as one-by-one `decode`, in input order,
//! for all-good batches and batches with bad items of every sort.

mod common;

use common::{key, note_draft, sample_item};
use porfiry_protocol::item::envelope::encode_envelope;
use porfiry_protocol::{ItemError, VerifiedItem, sign, verify_batch};

#[test]
fn an_all_good_batch_verifies_every_item_in_order() {
    let items: Vec<_> = (0..40)
        .map(|i| sample_item(i % 5, &format!("note {i}")))
        .collect();
    let bytes: Vec<&[u8]> = items.iter().map(|i| i.envelope_bytes()).collect();
    let got = verify_batch(&bytes, 0);
    assert_eq!(got.len(), items.len());
    for (item, res) in items.iter().zip(got) {
        let verified = res.unwrap();
        assert_eq!(verified.id(), item.id());
        // Five authors interleaved: each item keeps its own author's
        // peer id (the batch looks each author's key up once).
        assert_eq!(verified.author_peer_id(), item.author_peer_id());
    }
    assert!(verify_batch(&[], 0).is_empty());
}

#[test]
fn bad_items_are_found_and_good_ones_kept() {
    let good: Vec<_> = (0..10)
        .map(|i| sample_item(1, &format!("good {i}")))
        .collect();
    let a = sample_item(2, "a");
    let b = sample_item(2, "b");
    let swapped_sig = encode_envelope(a.payload_bytes(), b.signature_bytes()).unwrap();
    let mut expiring = note_draft("expiring");
    expiring.expires_ms = Some(expiring.created_ms + 1);
    let expired = sign(&key(3), &expiring).unwrap();
    let garbage = vec![0xa2, 0x00];

    let mut inputs: Vec<&[u8]> = good.iter().map(|i| i.envelope_bytes()).collect();
    inputs.insert(3, &swapped_sig);
    inputs.insert(7, expired.envelope_bytes());
    inputs.push(&garbage);
    let now = expiring.created_ms + 5;

    let got = verify_batch(&inputs, now);
    for (bytes, res) in inputs.iter().zip(&got) {
        // Exactly what decoding alone says.
        assert_eq!(
            res.as_ref().map(VerifiedItem::id).ok(),
            VerifiedItem::decode(bytes, now).map(|i| i.id()).ok()
        );
        assert_eq!(
            res.as_ref().err(),
            VerifiedItem::decode(bytes, now).err().as_ref()
        );
    }
    assert_eq!(got[3].as_ref().err(), Some(&ItemError::BadSignature));
    assert!(matches!(
        got[7].as_ref().err(),
        Some(ItemError::Expired { .. })
    ));
    assert!(got.last().unwrap().is_err());
    assert_eq!(got.iter().filter(|r| r.is_ok()).count(), good.len());
}

#[test]
fn a_single_bad_item_is_reported() {
    let a = sample_item(2, "a");
    let b = sample_item(2, "b");
    let bad = encode_envelope(a.payload_bytes(), b.signature_bytes()).unwrap();
    assert_eq!(
        verify_batch(&[&bad], 0)[0].as_ref().err(),
        Some(&ItemError::BadSignature)
    );
    assert_eq!(
        verify_batch(&[a.envelope_bytes()], 0)[0]
            .as_ref()
            .unwrap()
            .id(),
        a.id()
    );
}
