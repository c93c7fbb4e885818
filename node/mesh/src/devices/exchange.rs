//! The linking node's side of a device link on `/porfiry/invite/1`: after
//! a version-2 request, the secret is judged (nothing written), the link
//! half-signed and offered, the joiner's countersignature read and checked,
//! and only then, in ONE transaction, the code is used up, the joiner made
//! a friend and the link stored as this node's `device_link` item. A
//! joiner that goes away before countersigning leaves the code open.

use std::time::{SystemTime, UNIX_EPOCH};

use porfiry_protocol::devices::{DeviceLink, LinkProposal};
use porfiry_protocol::{NodeKey, VerifiedItem};
use porfiry_storage::{InvitationKind, StorageError, Store};

use super::statements::store_link;
use crate::friends::{check_friend, save_friend};
use crate::invite::Secret;
use crate::invite::secret::{Refusal, hash_secret, judge};
use crate::invite::wire::{WireError, read_signature, write_answer, write_offer};
use crate::net::{PeerId, Stream};
use crate::node::NodeHandle;

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Whether `secret` opens a device invitation here now (nothing written).
pub fn check_device_code(
    store: &Store,
    secret: &Secret,
    now_ms: u64,
) -> Result<Result<(), Refusal>, StorageError> {
    let hash = hash_secret(secret);
    let found = store.invitation_by_hash(&hash)?;
    Ok(judge(found.as_ref(), &hash, InvitationKind::Device, now_ms).map(|_| ()))
}

/// In one transaction: judges `secret` again, marks its invitation used by
/// `peer`, makes `peer` a friend and stores `link` as `key`'s item (which
/// it returns). `Ok(Err(refusal))` writes nothing.
pub fn redeem_device(
    store: &Store,
    key: &NodeKey,
    peer: &PeerId,
    secret: &Secret,
    link: DeviceLink,
    now_ms: u64,
) -> Result<Result<VerifiedItem, Refusal>, StorageError> {
    let hash = hash_secret(secret);
    store.transaction(|s| {
        let found = s.invitation_by_hash(&hash)?;
        let id = match judge(found.as_ref(), &hash, InvitationKind::Device, now_ms) {
            Ok(id) => id,
            Err(refusal) => return Ok(Err(refusal)),
        };
        if !s.redeem_invitation(id, &peer.to_string(), now_ms)? {
            return Ok(Err(Refusal::Used));
        }
        let fail = |e: &dyn std::fmt::Display| StorageError::Invalid {
            what: "device link".into(),
            reason: e.to_string(),
        };
        // A friend already: keep its addresses and groups.
        let (addresses, groups) = s
            .find_friend(&peer.to_string())?
            .map(|f| (f.row.addresses, f.row.groups))
            .unwrap_or_default();
        let friend = check_friend(&peer.to_string(), &addresses, &groups).map_err(|e| fail(&e))?;
        save_friend(s, &key.peer_id(), &friend, now_ms).map_err(|e| fail(&e))?;
        let item = store_link(s, key, link, now_ms).map_err(|e| fail(&e))?;
        Ok(Ok(item))
    })
}

/// Runs the rest of a device request from `peer` that presented `secret`
/// (`admitted`: not rate-limited); answers on `stream`.
pub(crate) async fn link_exchange(
    node: &NodeHandle,
    peer: PeerId,
    stream: &mut Stream,
    secret: Secret,
    admitted: bool,
) -> Result<(), WireError> {
    if !admitted {
        return write_answer(stream, Err(Refusal::RateLimited)).await;
    }
    let now = unix_ms();
    let checked = node
        .db()
        .read(move |s| check_device_code(s, &secret, now))
        .await;
    match checked {
        Ok(Ok(Ok(()))) => {}
        Ok(Ok(Err(refusal))) => {
            tracing::warn!(%peer, %refusal, "device link refused");
            return write_answer(stream, Err(refusal)).await;
        }
        _ => return write_answer(stream, Err(Refusal::Failed)).await,
    }
    let Ok(proposal) = LinkProposal::new(node.key(), &peer.to_string(), now) else {
        return write_answer(stream, Err(Refusal::Failed)).await;
    };
    write_offer(stream, proposal.since_ms, &proposal.sig_a).await?;
    let sig_b = read_signature(stream).await?;
    let Ok(link) = proposal.complete(sig_b) else {
        tracing::warn!(%peer, "device link refused: the countersignature does not verify");
        return write_answer(stream, Err(Refusal::BadSignature)).await;
    };
    let answer = match node.redeem_device_link(peer, secret, link).await {
        Ok(Ok(())) => {
            tracing::info!(%peer, "device linked");
            Ok(())
        }
        Ok(Err(refusal)) => Err(refusal),
        Err(e) => {
            tracing::warn!(%peer, error = %e, "cannot store a device link");
            Err(Refusal::Failed)
        }
    };
    write_answer(stream, answer).await
}
