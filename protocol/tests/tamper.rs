//! Hostile input: every single-byte change of an envelope is refused, a
//! signature from another key is refused, truncations are refused, and no
//! byte string (random or a mutated real item) makes the decoder panic.

// Error kinds are collected by `mem::discriminant`, which hashes but has no
// order; the ban on `HashSet` (protocol/clippy.toml) is for the engine.
#![allow(clippy::disallowed_types)]

mod common;

use common::{draft, key, note_draft, sample_item};
use ed25519_dalek::{Signer, SigningKey};
use porfiry_protocol::item::envelope::encode_envelope;
use porfiry_protocol::{ItemError, VerifiedItem, sign, verify_batch};
use proptest::prelude::*;

#[test]
fn flipping_any_single_byte_is_refused() {
    let mut d = note_draft("every byte matters");
    d.expires_ms = Some(d.created_ms + 10);
    d.replaces = Some(sample_item(3, "old").id());
    let item = sign(&key(1), &d).unwrap();
    let env = item.envelope_bytes();
    let mut seen_errors = std::collections::HashSet::new();
    for i in 0..env.len() {
        for mask in [0x01u8, 0xff] {
            let mut bad = env.to_vec();
            bad[i] ^= mask;
            match VerifiedItem::decode(&bad, 0) {
                Ok(_) => panic!("byte {i} ^ {mask:#04x} was accepted"),
                Err(e) => seen_errors.insert(std::mem::discriminant(&e)),
            };
        }
    }
    // The flips hit several distinct checks, not just one catch-all.
    assert!(
        seen_errors.len() >= 4,
        "only {} kinds of error",
        seen_errors.len()
    );
}

#[test]
fn every_truncation_is_refused() {
    let env = sample_item(1, "cut me").envelope_bytes().to_vec();
    for len in 0..env.len() {
        assert!(
            VerifiedItem::decode(&env[..len], 0).is_err(),
            "prefix of {len} bytes accepted"
        );
    }
    assert_eq!(
        VerifiedItem::decode(&[], 0).err(),
        Some(ItemError::Truncated { what: "envelope" })
    );
}

#[test]
fn a_signature_from_another_key_is_refused() {
    let item = sample_item(1, "mine");
    let thief = SigningKey::from_bytes(&key(2).seed());
    let sig = thief.sign(item.payload_bytes()).to_bytes();
    let env = encode_envelope(item.payload_bytes(), &sig).unwrap();
    assert_eq!(
        VerifiedItem::decode(&env, 0).err(),
        Some(ItemError::BadSignature)
    );
    // Also a valid signature of a different payload by the right key.
    let other = sample_item(1, "other");
    let env = encode_envelope(item.payload_bytes(), other.signature_bytes()).unwrap();
    assert_eq!(
        VerifiedItem::decode(&env, 0).err(),
        Some(ItemError::BadSignature)
    );
    assert_eq!(
        verify_batch(&[&env, other.envelope_bytes()], 0)[0]
            .as_ref()
            .err(),
        Some(&ItemError::BadSignature)
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Random bytes never panic (and never verify).
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        prop_assert!(VerifiedItem::decode(&bytes, 0).is_err());
        prop_assert!(VerifiedItem::from_parts(&bytes, &[0; 64], 0).is_err());
    }

    /// Bytes that start like an envelope go deeper into the decoder.
    #[test]
    fn envelope_shaped_garbage_never_panics(payload in prop::collection::vec(any::<u8>(), 0..2048), sig in any::<[u8; 32]>()) {
        let mut s = [0u8; 64];
        s[..32].copy_from_slice(&sig);
        let env = encode_envelope(&payload, &s).unwrap();
        prop_assert!(VerifiedItem::decode(&env, 0).is_err());
    }

}

proptest! {
    // Fewer cases: each one signs and verifies, which is slow in debug builds.
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Real items with a few random edits: never a panic, never accepted.
    #[test]
    fn mutated_items_never_panic(
        d in draft(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..6),
    ) {
        let item = sign(&key(1), &d).unwrap();
        let mut bytes = item.envelope_bytes().to_vec();
        for (at, byte, op) in edits {
            let i = at.index(bytes.len().max(1));
            match op {
                0 if i < bytes.len() => bytes[i] = byte,
                1 => bytes.insert(i.min(bytes.len()), byte),
                _ if i < bytes.len() => { bytes.remove(i); }
                _ => {}
            }
        }
        let res = VerifiedItem::decode(&bytes, 0);
        if bytes != item.envelope_bytes() {
            prop_assert!(res.is_err(), "mutated item accepted");
        }
        let _ = verify_batch(&[&bytes, item.envelope_bytes()], 0);
    }
}
