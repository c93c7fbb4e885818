//! The `reachable_at` kind: where a node can be reached, for its friends
//! only. Signed and decoded it round-trips; the signer and the decoder both
//! refuse one meant for anyone but friends, or for more than one hop, one
//! with too many addresses and one whose address is not a multiaddr.

mod common;

use ciborium::Value;
use common::key;
use ed25519_dalek::{Signer, SigningKey};
use porfiry_protocol::item::envelope::encode_envelope;
use porfiry_protocol::limits::{MAX_ADDRESS_LEN, MAX_REACH_ADDRESSES};
use porfiry_protocol::{
    Audience, Body, ItemError, ItemKind, PayloadDraft, ReachableAt, VerifiedItem, sign,
};

const T: u64 = 1_767_225_600_000;

fn draft(audience: Audience, max_hops: u8, addresses: &[&str]) -> PayloadDraft {
    PayloadDraft {
        created_ms: T,
        audience,
        max_hops,
        expires_ms: None,
        replaces: None,
        body: Body::ReachableAt(ReachableAt {
            addresses: addresses.iter().map(|a| a.to_string()).collect(),
        }),
    }
}

/// An envelope the signer would refuse, built by hand the way a hostile
/// or buggy implementation would: the decoder must refuse it on its own.
fn hand_made(audience: &str, max_hops: u8, addresses: &[&str]) -> Vec<u8> {
    let k = key(4);
    let text = |s: &str| Value::Text(s.into());
    let payload = Value::Map(vec![
        (text("version"), Value::Integer(1.into())),
        (text("kind"), Value::Integer(8.into())),
        (text("author"), Value::Bytes(k.author().as_bytes().to_vec())),
        (text("created_ms"), Value::Integer(T.into())),
        (text("audience"), text(audience)),
        (text("max_hops"), Value::Integer(max_hops.into())),
        (
            text("body"),
            Value::Map(vec![(
                text("addresses"),
                Value::Array(addresses.iter().map(|a| text(a)).collect()),
            )]),
        ),
    ]);
    let mut bytes = Vec::new();
    ciborium::into_writer(&payload, &mut bytes).unwrap();
    let signature = SigningKey::from_bytes(&k.seed()).sign(&bytes).to_bytes();
    encode_envelope(&bytes, &signature).unwrap()
}

const HOME: &str = "/ip4/192.168.1.20/tcp/4001";
const CIRCUIT: &str = "/ip4/203.0.113.7/tcp/4001/p2p/12D3KooWQK1wnefoLrcVHbbnf5tLzbopUd3K3bFAoJpA7YJgL5pV/p2p-circuit";

#[test]
fn a_friends_only_item_of_addresses_round_trips() {
    let item = sign(&key(1), &draft(Audience::Friends, 1, &[HOME, CIRCUIT])).unwrap();
    assert_eq!(item.kind(), ItemKind::ReachableAt);
    let back = VerifiedItem::decode(item.envelope_bytes(), T).unwrap();
    assert_eq!(back.id(), item.id());
    let Body::ReachableAt(r) = back.body() else {
        panic!("decoded as {:?}", back.kind())
    };
    assert_eq!(r.addresses, [HOME, CIRCUIT]);
    // No addresses at all is allowed: "dial me through a friend".
    assert!(sign(&key(1), &draft(Audience::Friends, 1, &[])).is_ok());
    // The hand-made encoding of the same thing decodes too.
    assert!(VerifiedItem::decode(&hand_made("friends", 1, &[HOME]), T).is_ok());
}

#[test]
fn addresses_never_go_beyond_the_authors_friends() {
    for (audience, hops) in [
        (Audience::Public, 1),
        (Audience::Group("family".into()), 1),
        (Audience::Friends, 2),
    ] {
        assert_eq!(
            sign(&key(1), &draft(audience.clone(), hops, &[HOME])).err(),
            Some(ItemError::AddressesBeyondFriends),
            "{audience:?} hops {hops}"
        );
    }
    for (audience, hops) in [("public", 1), ("group:family", 1), ("friends", 3)] {
        assert_eq!(
            VerifiedItem::decode(&hand_made(audience, hops, &[HOME]), T).err(),
            Some(ItemError::AddressesBeyondFriends),
            "{audience} hops {hops}"
        );
    }
}

#[test]
fn bad_and_too_many_addresses_are_refused_with_what_was_wrong() {
    for bad in [
        "",
        "192.168.1.20:4001",
        "/ip4/300.1.1.1/tcp/1",
        "/",
        "/tcp/x",
    ] {
        let err = VerifiedItem::decode(&hand_made("friends", 1, &[HOME, bad]), T).err();
        assert_eq!(err, Some(ItemError::BadAddress(bad.into())), "{bad:?}");
        assert!(err.unwrap().to_string().contains("not a multiaddr"));
    }
    let many = vec![HOME; MAX_REACH_ADDRESSES + 1];
    assert_eq!(
        sign(&key(1), &draft(Audience::Friends, 1, &many)).err(),
        Some(ItemError::TooManyEntries {
            field: "reachable_at.addresses",
            count: MAX_REACH_ADDRESSES + 1,
            max: MAX_REACH_ADDRESSES,
        })
    );
    assert!(sign(&key(1), &draft(Audience::Friends, 1, &many[1..])).is_ok());
    let long = format!("/dns4/{}/tcp/1", "a".repeat(MAX_ADDRESS_LEN));
    assert!(matches!(
        sign(&key(1), &draft(Audience::Friends, 1, &[&long])),
        Err(ItemError::TooLong {
            field: "reachable_at.addresses",
            ..
        })
    ));
}
