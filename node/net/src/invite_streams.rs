//! Raw streams on `/porfiry/invite/1`: the one protocol a guest (a stranger
//! admitted while an invitation is open, see [`super::gate`]) may speak.
//! The bytes on them are the invitation service's business
//! (`porfiry_mesh::invite::wire`); this file only opens and accepts the streams.

use std::fmt;

use futures::StreamExt;
use libp2p::{PeerId, Stream, StreamProtocol};

use super::error::MeshError;
use super::streams::StreamControl;

/// The invitation protocol name.
pub const INVITE_PROTOCOL: &str = "/porfiry/invite/1";

const PROTOCOL: StreamProtocol = StreamProtocol::new(INVITE_PROTOCOL);

impl StreamControl {
    /// Opens an invitation stream to `peer` (the inviter), dialling it with
    /// the addresses the swarm knows if not connected. The inviter must be
    /// a friend here (`join` allows it first), or the gate refuses the dial.
    pub async fn open_invite(&mut self, peer: PeerId) -> Result<Stream, MeshError> {
        self.open_on(peer, PROTOCOL).await
    }

    /// Starts accepting inbound invitation streams, from friends and
    /// guests alike (nobody else is connected). One acceptor at a time.
    pub fn accept_invites(&mut self) -> Result<IncomingInvites, MeshError> {
        let inner = self
            .control
            .accept(PROTOCOL)
            .map_err(|_| MeshError::AlreadyAccepting)?;
        Ok(IncomingInvites { inner })
    }
}

/// Inbound invitation streams, as `(peer, stream)`.
pub struct IncomingInvites {
    inner: libp2p_stream::IncomingStreams,
}

impl IncomingInvites {
    /// The next inbound stream; `None` once the driver stopped.
    pub async fn next(&mut self) -> Option<(PeerId, Stream)> {
        self.inner.next().await
    }
}

impl fmt::Debug for IncomingInvites {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IncomingInvites").finish_non_exhaustive()
    }
}
