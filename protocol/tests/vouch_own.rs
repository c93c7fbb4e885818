//! `VerifiedItem::vouch_own`: our own stored items come back with every
//! check but the signature, another author's are refused, and bad bytes
//! get the same errors as `decode`.

mod common;

use common::{key, note_draft, sample_item};
use porfiry_protocol::item::envelope::encode_envelope;
use porfiry_protocol::{ItemError, VerifiedItem, sign};

#[test]
fn our_own_items_come_back_whole_in_order() {
    let items: Vec<_> = (0..5)
        .map(|i| sample_item(1, &format!("mine {i}")))
        .collect();
    let bytes: Vec<&[u8]> = items.iter().map(|i| i.envelope_bytes()).collect();
    let got = VerifiedItem::vouch_own(&key(1), &bytes, 0);
    assert_eq!(got.len(), items.len());
    for (item, res) in items.iter().zip(got) {
        let back = res.unwrap();
        assert_eq!(back.id(), item.id());
        assert_eq!(back.author_peer_id(), item.author_peer_id());
        assert_eq!(back.body(), item.body());
    }
}

#[test]
fn another_authors_item_is_refused_and_named() {
    let theirs = sample_item(2, "theirs");
    let mine = sample_item(1, "mine");
    let got = VerifiedItem::vouch_own(
        &key(1),
        &[theirs.envelope_bytes(), mine.envelope_bytes()],
        0,
    );
    match &got[0] {
        Err(ItemError::NotOwn { author, local }) => {
            assert_eq!(author, theirs.author_peer_id());
            assert_eq!(local, mine.author_peer_id());
        }
        other => panic!("expected NotOwn, got {other:?}"),
    }
    assert!(
        got[0]
            .as_ref()
            .unwrap_err()
            .to_string()
            .contains("not by this node")
    );
    assert_eq!(
        got[1].as_ref().unwrap().id(),
        mine.id(),
        "one refusal costs the others nothing"
    );
}

#[test]
fn bad_bytes_and_expired_items_get_decodes_errors() {
    let garbage = vec![0xa2, 0x00];
    let mut expiring = note_draft("expiring");
    expiring.expires_ms = Some(expiring.created_ms + 1);
    let expired = sign(&key(1), &expiring).unwrap();
    let now = expiring.created_ms + 5;
    let inputs: Vec<&[u8]> = vec![&garbage, expired.envelope_bytes()];
    for (bytes, res) in inputs
        .iter()
        .zip(VerifiedItem::vouch_own(&key(1), &inputs, now))
    {
        assert_eq!(res.err(), VerifiedItem::decode(bytes, now).err());
    }
}

#[test]
fn the_signature_is_vouched_for_not_checked() {
    // The documented trade: a row of our own file with a broken signature
    // passes here (friends refuse it on arrival), as it would be served by
    // catch-up straight from the file.
    let a = sample_item(1, "a");
    let b = sample_item(1, "b");
    let swapped = encode_envelope(a.payload_bytes(), b.signature_bytes()).unwrap();
    assert_eq!(
        VerifiedItem::decode(&swapped, 0).err(),
        Some(ItemError::BadSignature)
    );
    let got = VerifiedItem::vouch_own(&key(1), &[&swapped], 0);
    let back = got[0].as_ref().unwrap();
    assert_eq!(back.payload_bytes(), a.payload_bytes());
    assert_eq!(back.signature_bytes(), b.signature_bytes());
}

/// `VerifiedItem::stored_payload`: a stored envelope's payload comes back
/// as signed, without a second signature check (the store verified it on
/// the way in); bytes that are not a canonical envelope are refused.
#[test]
fn a_stored_envelope_gives_back_its_payload() {
    let item = sample_item(2, "stored");
    let payload = VerifiedItem::stored_payload(item.envelope_bytes()).unwrap();
    assert_eq!(&payload, item.payload());
    // The signature is not checked again: a store only holds what it
    // verified.
    let unsigned = encode_envelope(item.payload_bytes(), &[0; 64]).unwrap();
    assert_eq!(
        &VerifiedItem::stored_payload(&unsigned).unwrap(),
        item.payload()
    );
    assert!(VerifiedItem::stored_payload(b"not an envelope").is_err());
    assert!(VerifiedItem::stored_payload(&item.envelope_bytes()[..20]).is_err());
}
