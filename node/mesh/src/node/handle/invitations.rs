//! Invitations through a running node: [`NodeHandle::invite`] makes a code
//! with the addresses the node listens on now, and [`NodeHandle::join`]
//! presents a code as this node and, once admitted, adds the inviter as a
//! friend through the handle, so the mesh dials it at once. The bindings
//! use these; `porfiry invite` / `porfiry join` do the same from a terminal
//! with no node running.

use super::{NodeHandle, db_err};
use crate::friends::FriendView;
use crate::invite::{
    CodeError, InvitationRequest, InviteCode, MakeError, PresentError, make_invitation,
    present_invitation,
};
use crate::node::NodeError;

/// Why an invitation could not be made or used.
#[derive(Debug, thiserror::Error)]
pub enum InvitationError {
    /// The code could not be read.
    #[error(transparent)]
    Code(#[from] CodeError),
    /// The invitation could not be made.
    #[error(transparent)]
    Make(#[from] MakeError),
    /// The inviter refused us or could not be reached.
    #[error(transparent)]
    Present(#[from] PresentError),
    /// The node failed (storing the new friend).
    #[error(transparent)]
    Node(#[from] NodeError),
}

impl NodeHandle {
    /// Makes a one-time invitation; without addresses in `request`, the
    /// code carries the addresses this node listens on now.
    pub async fn invite(&self, mut request: InvitationRequest) -> Result<String, InvitationError> {
        if request.addresses.is_empty() {
            request.addresses = self.listening().borrow().clone();
        }
        let us = self.inner.peer;
        let now = self.now();
        self.inner
            .db
            .write(move |s| make_invitation(s, &us, &request, now))
            .await
            .map_err(|e| InvitationError::Node(db_err(e)))?
            .map_err(InvitationError::from)
    }

    /// Presents `code` to its inviter; once admitted the inviter is a
    /// friend here (named `name`, if given) and the mesh is told.
    pub async fn join(
        &self,
        code: &str,
        name: Option<String>,
    ) -> Result<FriendView, InvitationError> {
        let code = InviteCode::decode(code)?;
        if code.peer == self.inner.peer {
            return Err(PresentError::OwnInvitation(code.peer).into());
        }
        let addresses: Vec<String> = code.addresses.iter().map(ToString::to_string).collect();
        // Checked before any dial, so a bad name or address stores nothing.
        crate::friends::check_friend(&code.peer.to_string(), &addresses, &[])
            .map_err(NodeError::from)?;
        if let Some(name) = &name {
            crate::friends::check_name(name).map_err(NodeError::from)?;
        }
        present_invitation(self.inner.key.to_libp2p_keypair(), &code).await?;
        Ok(self
            .add_named_friend(&code.peer.to_string(), addresses, Vec::new(), name, None)
            .await?)
    }
}
