//! A person's devices through a running node, for the daemon's stream side
//! and the bindings: [`NodeHandle::link_device`] makes a one-time device
//! code, [`NodeHandle::join_device`] presents one, [`NodeHandle::devices`]
//! lists them and [`NodeHandle::unlink_device`] ends a link. Each change
//! is stored as the CLI stores it and the loop is told at once.

use std::time::Duration;

use porfiry_protocol::NodeKey;
use porfiry_protocol::devices::DeviceLink;
use porfiry_storage::InvitationKind;

use super::invitations::InvitationError;
use super::{NodeHandle, db_err};
use crate::devices::exchange::redeem_device;
use crate::devices::join::present_device_code;
use crate::devices::statements::{DeviceListing, list_devices_synced, store_link};
use crate::invite::secret::Refusal;
use crate::invite::{InvitationRequest, InviteCode, PresentError, Secret};
use crate::net::PeerId;
use crate::node::NodeError;
use crate::replication::LoopCommand;

impl NodeHandle {
    /// The node's key (signing device links on the stream).
    pub(crate) fn key(&self) -> &NodeKey {
        &self.inner.key
    }

    /// Stores the device link `link` with `peer`, which presented
    /// `secret`, in one transaction with using up the code (see
    /// [`redeem_device`]).
    pub(crate) async fn redeem_device_link(
        &self,
        peer: PeerId,
        secret: Secret,
        link: DeviceLink,
    ) -> Result<Result<(), Refusal>, NodeError> {
        let key = self.inner.key.clone();
        let now = self.now();
        let outcome = self
            .inner
            .db
            .write(move |s| redeem_device(s, &key, &peer, &secret, link, now))
            .await
            .map_err(db_err)??;
        let Ok(item) = outcome else {
            return Ok(outcome.map(|_| ()));
        };
        // The link before the friend: the engine routes the person's items
        // by it from the first connection on.
        self.tell(LoopCommand::Publish(item)).await;
        self.tell(LoopCommand::FriendsChanged).await;
        Ok(Ok(()))
    }

    /// Makes a one-time code that links another node of this person,
    /// valid for `valid_for`, carrying the addresses the node listens on.
    pub async fn link_device(&self, valid_for: Duration) -> Result<String, InvitationError> {
        self.invite(InvitationRequest {
            valid_for,
            kind: InvitationKind::Device,
            ..InvitationRequest::default()
        })
        .await
    }

    /// Presents the device code `code` as this node; once linked, the
    /// other node is a friend and a device here, and the mesh is told.
    pub async fn join_device(&self, code: &str) -> Result<DeviceListing, InvitationError> {
        let code = InviteCode::decode(code)?;
        if code.peer == self.inner.peer {
            return Err(PresentError::OwnInvitation(code.peer).into());
        }
        let addresses: Vec<String> = code.addresses.iter().map(ToString::to_string).collect();
        crate::friends::check_friend(&code.peer.to_string(), &addresses, &[])
            .map_err(NodeError::from)?;
        let link = present_device_code(&self.inner.key, &code).await?;
        let since_ms = link.since_ms;
        // The link first, handed to the loop at once: the engine routes
        // the person's items by it from the first connection on.
        let key = self.inner.key.clone();
        let now = self.now();
        let item = self
            .inner
            .db
            .write(move |s| store_link(s, &key, link, now))
            .await
            .map_err(db_err)?
            .map_err(NodeError::from)?;
        self.tell(LoopCommand::Publish(item)).await;
        self.add_named_friend(&code.peer.to_string(), addresses, Vec::new(), None, None)
            .await?;
        Ok(DeviceListing {
            peer: code.peer.to_string(),
            name: String::new(),
            linked_since_ms: since_ms,
            last_sync_ms: None,
            behind: 0,
        })
    }

    /// This person's other devices, each behind by what was written here
    /// since it was last seen or caught up with: a device connected now,
    /// with a catch-up done, gets every new version live, so it is behind
    /// by nothing.
    pub async fn devices(&self) -> Result<Vec<DeviceListing>, NodeError> {
        let me = self.inner.peer_id.clone();
        let now = self.now();
        let synced: std::collections::BTreeMap<String, u64> = self
            .status()
            .await?
            .friends
            .into_iter()
            .filter_map(|f| {
                let at = f.last_catchup_ms?;
                Some((f.peer_id, if f.connected { now } else { at }))
            })
            .collect();
        self.inner
            .db
            .read(move |s| list_devices_synced(s, &me, &synced))
            .await
            .map_err(db_err)?
            .map_err(NodeError::from)
    }

    /// Ends the link with the device `peer` (a peer id, or its name as a
    /// friend).
    pub async fn unlink_device(&self, peer: &str) -> Result<(), NodeError> {
        let key = self.inner.key.clone();
        let (peer, now) = (peer.to_owned(), self.now());
        let item = self
            .inner
            .db
            .write(move |s| {
                let peer = crate::friend_names::resolve_friend(s, &peer)?.to_string();
                Ok::<_, NodeError>(crate::devices::unlink_device(s, &key, &peer, now)?)
            })
            .await
            .map_err(db_err)??;
        self.tell(LoopCommand::Publish(item)).await;
        Ok(())
    }
}
