//! Batch verification of many received envelopes at once: every cheap check
//! per item first (size, shape, limits, weak keys, expiry), then one ed25519
//! batch equation over the survivors (`batch_equation.rs`, each author's
//! terms summed); if that fails, each is verified alone to find the bad ones.
//!
//! Weak (small-order) author keys are refused before the batch, as batch
//! verification does not refuse them itself. Honestly made signatures get
//! the same answer here as from `verify_strict`; see docs/protocol.md for
//! the signatures only an author could craft on purpose that may differ.

use std::collections::HashMap;

use ed25519_dalek::VerifyingKey;

use crate::error::ItemError;
use crate::identity::AuthorKey;
use crate::item::batch_equation::{Signed, batch_holds};
use crate::item::verified::{Unverified, VerifiedItem};

/// Decodes and verifies each envelope; result `i` belongs to `envelopes[i]`.
pub fn verify_batch(envelopes: &[&[u8]], now_ms: u64) -> Vec<Result<VerifiedItem, ItemError>> {
    // A frame's items come from few authors: each author's key is
    // decompressed (a field inversion, about a quarter of the batch's cost
    // when every item had its own), checked for weakness and spelled as a
    // peer id (base58, another sixth) once.
    let mut keys: HashMap<AuthorKey, (VerifyingKey, String)> = HashMap::new();
    let checked: Vec<Result<Unverified, ItemError>> = envelopes
        .iter()
        .map(|bytes| {
            Unverified::check_with(bytes, now_ms, |author| {
                if let Some((key, peer_id)) = keys.get(author) {
                    return Ok((*key, peer_id.clone()));
                }
                let found = (author.verifying_key()?, author.peer_id_string());
                keys.insert(*author, found.clone());
                Ok(found)
            })
        })
        .collect();
    let ready: Vec<&Unverified> = checked.iter().filter_map(|c| c.as_ref().ok()).collect();
    let batch_ok = match ready.len() {
        0 | 1 => false, // nothing to gain: verify alone, strictly
        _ => {
            let batch: Vec<Signed<'_>> = ready.iter().map(|u| u.signed()).collect();
            batch_holds(&batch)
        }
    };
    checked
        .into_iter()
        .map(|c| {
            let unverified = c?;
            if batch_ok {
                Ok(unverified.into_verified())
            } else {
                unverified.verify_strict()
            }
        })
        .collect()
}
