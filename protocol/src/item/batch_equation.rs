//! The ed25519 batch equation over many signatures, with the terms of each
//! signer summed before the one multiscalar multiplication.
//!
//! `ed25519_dalek::verify_batch` checks, for random 128-bit weights `zᵢ`,
//!
//! ```text
//! −(Σ zᵢ·sᵢ)·B + Σ zᵢ·Rᵢ + Σ (zᵢ·hᵢ)·Aᵢ = 0        hᵢ = SHA-512(Rᵢ ‖ Aᵢ ‖ Mᵢ)
//! ```
//!
//! as one multiscalar multiplication over 2n + 1 points. A frame's items
//! come from few authors (a returning phone sends its own notes; a server
//! pushes its owner's), and the `Aᵢ` terms of one author fold into one:
//! `(Σ zᵢ·hᵢ)·A`. The sum then runs over n + k + 1 points for k authors,
//! about half the work when k is small. It is the same equation (the same
//! point for the same weights), so a batch holds here exactly when it holds
//! there, but for the 2⁻¹²⁸-scale chance the random weights carry.
//!
//! The weights are drawn the way dalek draws them, deterministically from
//! every hᵢ and sᵢ of the batch (so no one can choose a signature after
//! seeing them), here with SHA-512 instead of a merlin transcript.
//!
//! Like dalek's batch, this does not refuse small-order keys or signatures
//! only an author could craft on purpose; `batch.rs` refuses weak keys
//! before, and verifies each item strictly when a batch fails.

use std::collections::HashMap;

use curve25519_dalek::constants::ED25519_BASEPOINT_POINT;
use curve25519_dalek::edwards::{CompressedEdwardsY, EdwardsPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::{IsIdentity, VartimeMultiscalarMul};
use ed25519_dalek::VerifyingKey;
use sha2::{Digest, Sha512};

use crate::limits::SIGNATURE_LEN;

/// Separates this use of SHA-512 (the weights' seed) from every other.
const WEIGHTS_DOMAIN: &[u8] = b"porfiry ed25519 batch weights v1";

/// One signature to check: the signed bytes, the signature, the signer.
#[derive(Clone, Copy)]
pub(crate) struct Signed<'a> {
    /// The exact bytes signed.
    pub message: &'a [u8],
    /// `R ‖ s`.
    pub signature: &'a [u8; SIGNATURE_LEN],
    /// The signer's key.
    pub key: &'a VerifyingKey,
}

/// True if the batch equation holds for every signature in `batch` at once
/// (true for an empty batch). False also when a signature's `s` is not
/// canonical or its `R` is not a point: some item is bad, and the caller
/// looks for it one by one.
pub(crate) fn batch_holds(batch: &[Signed<'_>]) -> bool {
    let n = batch.len();
    let mut rs: Vec<EdwardsPoint> = Vec::with_capacity(n);
    let mut ss: Vec<Scalar> = Vec::with_capacity(n);
    let mut hs: Vec<Scalar> = Vec::with_capacity(n);
    let mut seed = Sha512::new();
    seed.update(WEIGHTS_DOMAIN);
    seed.update((n as u64).to_le_bytes());
    for one in batch {
        let (r_bytes, s_bytes) = one.signature.split_at(32);
        let Ok(r_bytes) = <[u8; 32]>::try_from(r_bytes) else {
            return false;
        };
        let Ok(s_bytes) = <[u8; 32]>::try_from(s_bytes) else {
            return false;
        };
        let Some(s) = Option::<Scalar>::from(Scalar::from_canonical_bytes(s_bytes)) else {
            return false;
        };
        let Some(r) = CompressedEdwardsY(r_bytes).decompress() else {
            return false;
        };
        let hram: [u8; 64] = Sha512::new()
            .chain_update(r_bytes)
            .chain_update(one.key.as_bytes())
            .chain_update(one.message)
            .finalize()
            .into();
        seed.update(hram);
        seed.update(s_bytes);
        rs.push(r);
        ss.push(s);
        hs.push(Scalar::from_bytes_mod_order_wide(&hram));
    }
    let zs = weights(&seed.finalize().into(), n);

    // One coefficient per distinct signer, in order of first appearance.
    let mut signer_of: HashMap<[u8; 32], usize> = HashMap::new();
    let mut signers: Vec<(EdwardsPoint, Scalar)> = Vec::new();
    let mut b_coefficient = Scalar::ZERO;
    for ((one, z), (s, h)) in batch.iter().zip(&zs).zip(ss.iter().zip(&hs)) {
        b_coefficient += z * s;
        let at = *signer_of.entry(*one.key.as_bytes()).or_insert_with(|| {
            signers.push((one.key.to_edwards(), Scalar::ZERO));
            signers.len() - 1
        });
        signers[at].1 += z * h;
    }
    let scalars = std::iter::once(-b_coefficient)
        .chain(zs.iter().copied())
        .chain(signers.iter().map(|(_, c)| *c));
    let points = std::iter::once(ED25519_BASEPOINT_POINT)
        .chain(rs)
        .chain(signers.iter().map(|(a, _)| *a));
    EdwardsPoint::vartime_multiscalar_mul(scalars, points).is_identity()
}

/// `n` weights of 128 bits each, four from each SHA-512 block of the seed
/// and the block's number.
fn weights(seed: &[u8; 64], n: usize) -> Vec<Scalar> {
    let mut zs = Vec::with_capacity(n);
    let mut block = 0u64;
    while zs.len() < n {
        let bytes: [u8; 64] = Sha512::new()
            .chain_update(seed)
            .chain_update(block.to_le_bytes())
            .finalize()
            .into();
        for quarter in bytes.chunks_exact(16) {
            if zs.len() == n {
                break;
            }
            let mut wide = [0u8; 32];
            wide[..16].copy_from_slice(quarter);
            zs.push(Scalar::from_bytes_mod_order(wide));
        }
        block += 1;
    }
    zs
}

#[cfg(test)]
mod tests {
    use ed25519_dalek::{Signature, Signer, SigningKey};
    use proptest::prelude::*;

    use super::*;

    struct Case {
        messages: Vec<Vec<u8>>,
        signatures: Vec<[u8; SIGNATURE_LEN]>,
        keys: Vec<VerifyingKey>,
    }

    impl Case {
        /// `authors[i]` signs message `i`.
        fn new(authors: &[u8]) -> Case {
            let signers: Vec<SigningKey> = (0..=u8::MAX)
                .take(authors.iter().copied().max().map_or(0, |m| m as usize + 1))
                .map(|a| SigningKey::from_bytes(&[a; 32]))
                .collect();
            let messages: Vec<Vec<u8>> = (0..authors.len())
                .map(|i| format!("message {i}").into_bytes())
                .collect();
            let signatures = authors
                .iter()
                .zip(&messages)
                .map(|(&a, m)| signers[a as usize].sign(m).to_bytes())
                .collect();
            let keys = authors
                .iter()
                .map(|&a| signers[a as usize].verifying_key())
                .collect();
            Case {
                messages,
                signatures,
                keys,
            }
        }

        fn ours(&self) -> bool {
            let batch: Vec<Signed<'_>> = (0..self.messages.len())
                .map(|i| Signed {
                    message: &self.messages[i],
                    signature: &self.signatures[i],
                    key: &self.keys[i],
                })
                .collect();
            batch_holds(&batch)
        }

        fn dalek(&self) -> bool {
            let messages: Vec<&[u8]> = self.messages.iter().map(Vec::as_slice).collect();
            let signatures: Vec<Signature> =
                self.signatures.iter().map(Signature::from_bytes).collect();
            ed25519_dalek::verify_batch(&messages, &signatures, &self.keys).is_ok()
        }
    }

    #[test]
    fn good_batches_hold_with_one_or_many_signers() {
        assert!(Case::new(&[]).ours());
        assert!(Case::new(&[0]).ours());
        assert!(
            Case::new(&[3; 300]).ours(),
            "one signer, past Pippenger's threshold"
        );
        let mixed: Vec<u8> = (0..300u16).map(|i| (i % 7) as u8).collect();
        assert!(Case::new(&mixed).ours());
    }

    #[test]
    fn each_kind_of_bad_signature_breaks_the_batch() {
        let authors = [1, 1, 2, 1, 2, 2, 1];
        // A changed message.
        let mut c = Case::new(&authors);
        c.messages[3].push(b'!');
        assert!(!c.ours() && !c.dalek());
        // Another signer's key for a signature.
        let mut c = Case::new(&authors);
        c.keys[2] = c.keys[0];
        assert!(!c.ours() && !c.dalek());
        // A non-canonical s (s + l sets the top bits).
        let mut c = Case::new(&authors);
        c.signatures[4][63] |= 0xf0;
        assert!(!c.ours() && !c.dalek());
        // An R that is not a point (y = 2 has no x on the curve).
        let mut c = Case::new(&authors);
        c.signatures[5][..32].copy_from_slice(&{
            let mut y = [0u8; 32];
            y[0] = 2;
            y
        });
        assert!(!c.ours() && !c.dalek());
        // Two signatures of one signer swapped between its messages.
        let mut c = Case::new(&authors);
        c.signatures.swap(0, 1);
        assert!(!c.ours() && !c.dalek());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Over random signer mixes and one random corruption (or none),
        /// the grouped equation answers as dalek's `verify_batch` does.
        #[test]
        fn answers_as_dalek_verify_batch(
            authors in prop::collection::vec(0u8..4, 1..40),
            flip in prop::option::of((any::<prop::sample::Index>(), 0usize..3, any::<prop::sample::Index>(), 0u8..8)),
        ) {
            let mut c = Case::new(&authors);
            if let Some((item, part, byte, bit)) = flip {
                let i = item.index(authors.len());
                match part {
                    0 => {
                        let m = &mut c.messages[i];
                        let at = byte.index(m.len());
                        m[at] ^= 1 << bit;
                    }
                    1 => c.signatures[i][byte.index(32)] ^= 1 << bit,
                    _ => c.signatures[i][32 + byte.index(32)] ^= 1 << bit,
                }
            }
            prop_assert_eq!(c.ours(), c.dalek());
            prop_assert_eq!(c.ours(), flip.is_none());
        }
    }
}
