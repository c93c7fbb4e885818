//! The joining node's side of a device link: dial the linking node, send
//! a version-2 request with the code's secret, check the offered
//! half-signed link, countersign it, and learn whether it was stored.
//! Storing the link here (and the other node as a friend) is
//! [`join_device`]'s, once the other side said yes.

use porfiry_protocol::NodeKey;
use porfiry_protocol::devices::{DeviceLink, LinkProposal};
use porfiry_storage::{InvitationKind, Store};

use super::statements::{DevicesError, store_link};
use crate::friends::{FriendsError, check_friend, save_friend};
use crate::invite::present::{ExchangeError, dial_and_exchange};
use crate::invite::wire::{read_answer, read_offer, write_request, write_signature};
use crate::invite::{InviteCode, PresentError};

/// Why joining as a device failed.
#[derive(Debug, thiserror::Error)]
pub enum DeviceJoinError {
    /// The other device could not be reached or did not take us.
    #[error(transparent)]
    Present(#[from] PresentError),
    /// The other device's address or id could not be stored.
    #[error(transparent)]
    Friends(#[from] FriendsError),
    /// The link could not be stored here.
    #[error(transparent)]
    Devices(#[from] DevicesError),
}

/// Presents `code` as a device of the same person, as `key`; on success
/// the link both signed.
pub async fn present_device_code(
    key: &NodeKey,
    code: &InviteCode,
) -> Result<DeviceLink, PresentError> {
    let secret = code.secret;
    let me = key.clone();
    let other = code.peer.to_string();
    let answer = dial_and_exchange(key.to_libp2p_keypair(), code, move |mut stream| {
        let (me, other) = (me.clone(), other.clone());
        async move {
            write_request(&mut stream, &secret, InvitationKind::Device).await?;
            let (since_ms, sig_a) = match read_offer(&mut stream).await? {
                Ok(offer) => offer,
                Err(refusal) => return Ok(Err(refusal)),
            };
            let proposal = LinkProposal {
                a: other,
                b: me.peer_id().to_string(),
                since_ms,
                sig_a,
            };
            let link = proposal.countersign(&me)?;
            write_signature(&mut stream, &link.sig_b).await?;
            Ok::<_, ExchangeError>(read_answer(&mut stream).await?.map(|()| link))
        }
    })
    .await?;
    answer.map_err(PresentError::Refused)
}

/// Joins the person of `code` from the node `key` whose database is
/// `store`, at `now_ms`: presents the code and, once linked, stores the
/// other node as a friend (with the code's addresses) and the link as
/// this node's `device_link` item. A refused code stores nothing.
pub async fn join_device(
    store: &Store,
    key: &NodeKey,
    code: &InviteCode,
    now_ms: u64,
) -> Result<DeviceLink, DeviceJoinError> {
    let addresses: Vec<String> = code.addresses.iter().map(ToString::to_string).collect();
    // Checked before any dial, so a bad address stores nothing.
    let friend = check_friend(&code.peer.to_string(), &addresses, &[])?;
    let link = present_device_code(key, code).await?;
    store
        .transaction(|s| {
            save_friend(s, &key.peer_id(), &friend, now_ms).map_err(|e| {
                porfiry_storage::StorageError::Invalid {
                    what: "device".into(),
                    reason: e.to_string(),
                }
            })?;
            store_link(s, key, link.clone(), now_ms).map_err(|e| {
                porfiry_storage::StorageError::Invalid {
                    what: "device link".into(),
                    reason: e.to_string(),
                }
            })?;
            Ok(())
        })
        .map_err(DevicesError::Storage)?;
    Ok(link)
}
