//! A person's devices from a phone app (issue 45): [`PorfiryNode::link_device`]
//! makes a one-time device code on a node that listens (the home server),
//! [`PorfiryNode::join_device`] presents it on another node of the same
//! person (the phone), [`PorfiryNode::devices`] lists them and
//! [`PorfiryNode::unlink_device`] ends a link. Linked devices share the
//! long-term memory (diary, concepts, links, goals, tasks, the core's
//! notebook) and nobody else gets it; a friend's invitation never links a
//! device, nor a device code makes a friend.

use porfiry_mesh::devices::DevicesError;
use porfiry_mesh::node::NodeError;

use crate::error::{PorfiryError, invitation_error};
use crate::node::{MAX_INVITATION_SECS, PorfiryNode};
use crate::views::Device;

#[uniffi::export(async_runtime = "tokio")]
impl PorfiryNode {
    /// Makes a one-time code valid for `valid_secs` (as `invite`'s: 1 s to
    /// [`MAX_INVITATION_SECS`]) that links another node of this person as
    /// a device. The code carries the addresses this node listens on now:
    /// make it on the node the other can reach (the home server) and
    /// present it there with [`PorfiryNode::join_device`].
    pub async fn link_device(&self, valid_secs: u64) -> Result<String, PorfiryError> {
        if valid_secs == 0 || valid_secs > MAX_INVITATION_SECS {
            return Err(PorfiryError::BadInput(format!(
                "a device code is valid for 1 s to {MAX_INVITATION_SECS} s, not {valid_secs}"
            )));
        }
        let valid_for = std::time::Duration::from_secs(valid_secs);
        self.on_node(move |node| async move {
            node.link_device(valid_for)
                .await
                .map_err(|e| PorfiryError::Invitation(e.to_string()))
        })
        .await
    }

    /// Presents the device code `code` (made by [`PorfiryNode::link_device`]
    /// on another node of this person); once that node admits it, the two
    /// are devices of one person and friends, and their memory replicates.
    /// What is not a code is [`PorfiryError::BadInput`]; a code refused (a
    /// friend's invitation, used, expired) or an inviter not reached is
    /// [`PorfiryError::Invitation`], naming why.
    pub async fn join_device(&self, code: String) -> Result<Device, PorfiryError> {
        self.on_node(move |node| async move {
            node.join_device(code.trim())
                .await
                .map(Device::from)
                .map_err(invitation_error)
        })
        .await
    }

    /// This person's other devices, the oldest link first.
    pub async fn devices(&self) -> Result<Vec<Device>, PorfiryError> {
        self.on_node(|node| async move {
            Ok(node
                .devices()
                .await?
                .into_iter()
                .map(Device::from)
                .collect())
        })
        .await
    }

    /// Ends the link with the device `peer` (its peer id, or its name as a
    /// friend): it learns of it and keeps what it holds; nothing more of
    /// the memory flows between the two. A peer that is not a device here
    /// is [`PorfiryError::NotFound`].
    pub async fn unlink_device(&self, peer: String) -> Result<(), PorfiryError> {
        self.on_node(move |node| async move {
            node.unlink_device(&peer).await.map_err(|e| match e {
                NodeError::Devices(DevicesError::NotADevice(peer)) => PorfiryError::NotFound(
                    format!("{peer} is not a device of this person here: devices() lists them"),
                ),
                other => PorfiryError::from(other),
            })
        })
        .await
    }
}
