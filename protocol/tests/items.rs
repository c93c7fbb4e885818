//! Signing and decoding items: round trips of every kind, every header
//! field, each decode-time refusal (version, kind, mismatch, limits, expiry,
//! size, weak key) with the error that names it.

// One test checks that items hash by id, which needs a `HashSet`; the ban
// on it (protocol/clippy.toml) is for the engine.
#![allow(clippy::disallowed_types)]

mod common;

use common::{draft, key, note_draft, sample_item};
use ed25519_dalek::{Signer, SigningKey, Verifier};
use porfiry_protocol::item::envelope::encode_envelope;
use porfiry_protocol::limits::{MAX_ENVELOPE_BYTES, MAX_HOPS, MAX_TEXT_BYTES};
use porfiry_protocol::{
    AuthorKey, Body, FriendView, ItemError, ItemId, ItemKind, Payload, PayloadDraft, VerifiedItem,
    may_send, sign,
};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Every kind survives sign -> bytes -> decode unchanged, with the same id.
    #[test]
    fn every_kind_round_trips(d in draft(), seed in any::<[u8; 32]>()) {
        let k = common::signer(&d, seed);
        let item = sign(&k, &d).unwrap();
        let back = VerifiedItem::decode(item.envelope_bytes(), 0).unwrap();
        prop_assert_eq!(back.id(), item.id());
        prop_assert_eq!(back.id(), ItemId::of_envelope(item.envelope_bytes()));
        prop_assert_eq!(back.payload(), &Payload::from_draft(k.author(), &d));
        prop_assert_eq!(back.kind(), d.body.kind());
        prop_assert_eq!(back.author(), k.author());
        prop_assert_eq!(back.author_peer_id(), k.peer_id().to_string());
        prop_assert_eq!(back.audience(), &d.audience);
        prop_assert_eq!(back.max_hops(), d.max_hops);
        prop_assert_eq!(back.created_ms(), d.created_ms);
        prop_assert_eq!(back.expires_ms(), d.expires_ms);
        prop_assert_eq!(back.replaces(), d.replaces);
        prop_assert_eq!(back.body(), &d.body);
        // Stored parts rebuild the same item.
        let again = VerifiedItem::from_parts(item.payload_bytes(), item.signature_bytes(), 0).unwrap();
        prop_assert_eq!(again.envelope_bytes(), item.envelope_bytes());
    }
}

#[test]
fn every_kind_is_covered_by_the_round_trip_strategy() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..500 {
        seen.insert(
            common::body()
                .new_tree(&mut runner)
                .unwrap()
                .current()
                .kind(),
        );
    }
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), ItemKind::ALL.to_vec());
}

#[test]
fn signing_is_deterministic_and_ids_differ_per_content() {
    let a = sample_item(1, "hello");
    assert_eq!(a.envelope_bytes(), sample_item(1, "hello").envelope_bytes());
    assert_ne!(a.id(), sample_item(1, "hello!").id());
    assert_ne!(a.id(), sample_item(2, "hello").id());
}

/// Rewrites one top-level payload field, re-signs, and decodes.
fn decode_with(field: &str, value: ciborium::Value) -> Result<VerifiedItem, ItemError> {
    let k = key(1);
    let item = sign(&k, &note_draft("x")).unwrap();
    let mut v: ciborium::Value = ciborium::from_reader(item.payload_bytes()).unwrap();
    let ciborium::Value::Map(m) = &mut v else {
        unreachable!()
    };
    match m.iter_mut().find(|(key, _)| key.as_text() == Some(field)) {
        Some(entry) => entry.1 = value,
        None => m.push((field.into(), value)),
    }
    resign(&k, &v)
}

fn resign(
    k: &porfiry_protocol::NodeKey,
    payload: &ciborium::Value,
) -> Result<VerifiedItem, ItemError> {
    let mut bytes = Vec::new();
    ciborium::into_writer(payload, &mut bytes).unwrap();
    let sig = SigningKey::from_bytes(&k.seed()).sign(&bytes).to_bytes();
    VerifiedItem::decode(&encode_envelope(&bytes, &sig).unwrap(), 0)
}

#[test]
fn decoding_checks_version_kind_and_body_shape() {
    assert_eq!(
        decode_with("version", 2.into()).err(),
        Some(ItemError::UnknownVersion(2))
    );
    assert_eq!(
        decode_with("version", "1".into()).err(),
        Some(ItemError::MissingVersion)
    );
    assert_eq!(
        decode_with("kind", 99.into()).err(),
        Some(ItemError::UnknownKind(99))
    );
    assert_eq!(
        decode_with("kind", 0.into()).err(),
        Some(ItemError::UnknownKind(0))
    );
    // A note's body under the rating code.
    assert!(matches!(
        decode_with("kind", ItemKind::Rating.code().into()),
        Err(ItemError::KindMismatch {
            kind: ItemKind::Rating,
            ..
        })
    ));
    // Unknown header fields are refused, not ignored.
    assert!(matches!(
        decode_with("tags", "secret".into()),
        Err(ItemError::Malformed {
            what: "payload",
            ..
        })
    ));
    assert!(matches!(
        decode_with("audience", "private".into()),
        Err(ItemError::Malformed { .. })
    ));
    assert!(matches!(
        decode_with("author", ciborium::Value::Bytes(vec![1; 31])),
        Err(ItemError::Malformed { .. })
    ));
    assert_eq!(
        decode_with("max_hops", 0.into()).err(),
        Some(ItemError::HopsOutOfRange { hops: 0 })
    );
    assert_eq!(
        decode_with("max_hops", (MAX_HOPS + 1).into()).err(),
        Some(ItemError::HopsOutOfRange { hops: MAX_HOPS + 1 })
    );
    // A payload whose author is not the signer.
    assert_eq!(
        decode_with("author", ciborium::Value::Bytes(key(2).author().0.to_vec())).err(),
        Some(ItemError::BadSignature)
    );
    // And one the signer agrees with still passes: the helper itself works.
    assert!(decode_with("created_ms", 5.into()).is_ok());
}

#[test]
fn local_note_fields_are_refused_in_a_body() {
    let k = key(1);
    let item = sign(&k, &note_draft("x")).unwrap();
    let mut v: ciborium::Value = ciborium::from_reader(item.payload_bytes()).unwrap();
    let ciborium::Value::Map(m) = &mut v else {
        unreachable!()
    };
    let body = m
        .iter_mut()
        .find(|(k, _)| k.as_text() == Some("body"))
        .unwrap();
    let ciborium::Value::Map(b) = &mut body.1 else {
        unreachable!()
    };
    b.push(("hidden".into(), true.into()));
    assert!(matches!(
        resign(&k, &v),
        Err(ItemError::KindMismatch {
            kind: ItemKind::Note,
            ..
        })
    ));
}

#[test]
fn sign_enforces_the_same_limits_as_decode() {
    let k = key(1);
    let mut d = note_draft(&"x".repeat(MAX_TEXT_BYTES + 1));
    assert!(matches!(
        sign(&k, &d),
        Err(ItemError::TooLong {
            field: "note.text",
            ..
        })
    ));
    d = note_draft("x");
    d.max_hops = 0;
    assert_eq!(
        sign(&k, &d).err(),
        Some(ItemError::HopsOutOfRange { hops: 0 })
    );
    d.max_hops = 1;
    d.expires_ms = Some(d.created_ms);
    assert!(matches!(
        sign(&k, &d),
        Err(ItemError::ExpiresBeforeCreated { .. })
    ));
}

#[test]
fn an_item_over_the_envelope_limit_cannot_be_signed() {
    // Many long steps: each field within its limit, the whole too big.
    let d = PayloadDraft {
        body: Body::ThinkingMethod(porfiry_protocol::ThinkingMethod {
            name: "big".into(),
            description: "d".repeat(MAX_TEXT_BYTES),
            steps: vec!["s".repeat(2048); 64],
        }),
        ..note_draft("x")
    };
    assert!(matches!(
        sign(&key(1), &d),
        Err(ItemError::Oversized {
            max: MAX_ENVELOPE_BYTES,
            ..
        })
    ));
}

#[test]
fn expired_items_are_refused_and_live_ones_accepted() {
    let mut d = note_draft("soon gone");
    d.expires_ms = Some(d.created_ms + 1000);
    let item = sign(&key(1), &d).unwrap();
    let at = d.created_ms + 999;
    assert!(VerifiedItem::decode(item.envelope_bytes(), at).is_ok());
    assert_eq!(
        VerifiedItem::decode(item.envelope_bytes(), at + 1).err(),
        Some(ItemError::Expired {
            expires_ms: at + 1,
            now_ms: at + 1
        })
    );
}

#[test]
fn oversized_input_is_refused_before_decoding() {
    // Not CBOR at all: only the size check can name it.
    let junk = vec![0xffu8; MAX_ENVELOPE_BYTES + 1];
    assert_eq!(
        VerifiedItem::decode(&junk, 0).err(),
        Some(ItemError::Oversized {
            len: MAX_ENVELOPE_BYTES + 1,
            max: MAX_ENVELOPE_BYTES
        })
    );
    let big_payload = vec![0u8; MAX_ENVELOPE_BYTES + 1];
    assert!(matches!(
        VerifiedItem::from_parts(&big_payload, &[0; 64], 0),
        Err(ItemError::Oversized { .. })
    ));
    assert_eq!(
        VerifiedItem::from_parts(b"x", &[0; 63], 0).err(),
        Some(ItemError::BadSignatureLength { len: 63 })
    );
}

/// The identity point: small order, so `s·B = R + h·A` holds for R = B,
/// s = 1 and ANY message — a forgery that lax verification accepts.
pub const WEAK_AUTHOR: [u8; 32] = {
    let mut b = [0u8; 32];
    b[0] = 1;
    b
};

/// The envelope of a note "signed" by [`WEAK_AUTHOR`] with the forged
/// signature that lax verification would accept.
pub fn forged_weak_envelope(text: &str) -> Vec<u8> {
    let payload = Payload::from_draft(AuthorKey(WEAK_AUTHOR), &note_draft(text))
        .encode()
        .unwrap();
    let mut sig = [0u8; 64];
    sig[..32].copy_from_slice(&BASEPOINT);
    sig[32] = 1;
    encode_envelope(&payload, &sig).unwrap()
}

/// The ed25519 base point B, compressed (RFC 8032).
const BASEPOINT: [u8; 32] = {
    let mut b = [0x66u8; 32];
    b[0] = 0x58;
    b
};

#[test]
fn a_weak_author_key_is_refused_even_though_its_forgery_verifies_laxly() {
    let env = forged_weak_envelope("forged");
    // Show the forgery is real: plain (non-strict) verification accepts it.
    let payload = &env[10..env.len() - 76];
    let mut sig = [0u8; 64];
    sig.copy_from_slice(&env[env.len() - 64..]);
    let lax = ed25519_dalek::VerifyingKey::from_bytes(&WEAK_AUTHOR).unwrap();
    assert!(
        lax.verify_strict(payload, &ed25519_dalek::Signature::from_bytes(&sig))
            .is_err()
    );
    lax.verify(payload, &ed25519_dalek::Signature::from_bytes(&sig))
        .expect("lax verify accepts the forgery");

    assert_eq!(
        VerifiedItem::decode(&env, 0).err(),
        Some(ItemError::WeakKey)
    );
    let good = sample_item(1, "honest");
    let results =
        porfiry_protocol::verify_batch(&[good.envelope_bytes(), &env, good.envelope_bytes()], 0);
    assert_eq!(results[1].as_ref().err(), Some(&ItemError::WeakKey));
    assert!(results[0].is_ok() && results[2].is_ok());
}

#[test]
fn an_author_that_is_not_a_curve_point_is_refused() {
    // y = 2 has no x on the curve.
    let mut bad = [0u8; 32];
    bad[0] = 2;
    assert!(
        ed25519_dalek::VerifyingKey::from_bytes(&bad).is_err(),
        "test needs an off-curve point"
    );
    let payload = Payload::from_draft(AuthorKey(bad), &note_draft("x"))
        .encode()
        .unwrap();
    let env = encode_envelope(&payload, &[0; 64]).unwrap();
    assert_eq!(
        VerifiedItem::decode(&env, 0).err(),
        Some(ItemError::BadAuthorKey)
    );
}

#[test]
fn route_feeds_may_send() {
    let me = key(1);
    let item = sign(&me, &note_draft("hi")).unwrap();
    let my_id = me.peer_id().to_string();
    let groups: Vec<String> = vec![];
    let bob_id = key(2).peer_id().to_string();
    let bob = FriendView {
        peer_id: &bob_id,
        groups: &groups,
    };
    let own = item.route(item.max_hops(), None);
    assert_eq!(own.author, my_id);
    assert_eq!(own.hops_left, 3);
    assert!(may_send(
        &my_id,
        &own,
        &bob,
        &porfiry_protocol::ClubBook::new(),
        &porfiry_protocol::devices::DeviceBook::new(&my_id),
        0
    ));
    assert!(
        !may_send(
            &my_id,
            &item.route(0, None),
            &bob,
            &porfiry_protocol::ClubBook::new(),
            &porfiry_protocol::devices::DeviceBook::new(&my_id),
            0
        ),
        "no hops left"
    );
    assert!(
        !may_send(
            &my_id,
            &item.route(2, Some(&bob_id)),
            &bob,
            &porfiry_protocol::ClubBook::new(),
            &porfiry_protocol::devices::DeviceBook::new(&my_id),
            0
        ),
        "not back to sender"
    );
}

#[test]
fn verified_items_compare_and_hash_by_id() {
    let a = sample_item(1, "a");
    let set: std::collections::HashSet<_> =
        [a.clone(), sample_item(1, "a"), sample_item(1, "b")].into();
    assert_eq!(set.len(), 2);
    assert!(format!("{a:?}").contains(&a.id().to_string()));
}
