//! Raw streams on `/porfiry/model/1`: a friend fetches this node's shared
//! model files (the `porfiry-model-share` crate). Like offload, one plain duplex
//! stream per request — a file of gigabytes cannot ride a request/response
//! with a 10 s timeout. This file only opens and accepts the streams; the
//! bytes on them are `porfiry_model_share::wire`'s business.
//!
//! Strangers are refused as on offload: the friend gate denies their
//! connections, [`IncomingModelStreams`] drops an inbound stream from a peer
//! that is not a friend now, and [`StreamControl::open_models`] refuses a
//! non-friend before any dial.

use std::fmt;
use std::sync::Arc;

use futures::StreamExt;
use libp2p::{PeerId, Stream, StreamProtocol};

use super::error::MeshError;
use super::streams::{FriendSet, StreamControl, is_friend};

/// The model-sharing protocol name.
pub const MODEL_PROTOCOL: &str = "/porfiry/model/1";

const PROTOCOL: StreamProtocol = StreamProtocol::new(MODEL_PROTOCOL);

impl StreamControl {
    /// Opens a model stream to `peer`, dialling it with the addresses the
    /// swarm knows if not connected. Fails at once if `peer` is not a
    /// friend; [`MeshError::StreamUnsupported`] when the friend does not
    /// share its models (`porfiry run` without `--share-models`).
    pub async fn open_models(&mut self, peer: PeerId) -> Result<Stream, MeshError> {
        if !is_friend(self.friends(), &peer) {
            return Err(MeshError::NotFriend { peer });
        }
        self.open_on(peer, PROTOCOL).await
    }

    /// Starts accepting inbound model streams from friends. One acceptor
    /// at a time; dropping it stops accepting (friends then get
    /// "unsupported protocol": this node does not share its models).
    pub fn accept_models(&mut self) -> Result<IncomingModelStreams, MeshError> {
        let inner = self
            .control
            .accept(PROTOCOL)
            .map_err(|_| MeshError::AlreadyAccepting)?;
        Ok(IncomingModelStreams {
            inner,
            friends: Arc::clone(self.friends()),
        })
    }
}

/// Inbound model streams from friends, as `(peer, stream)`; streams from
/// anyone else are dropped (closing them) and logged.
pub struct IncomingModelStreams {
    inner: libp2p_stream::IncomingStreams,
    friends: FriendSet,
}

impl IncomingModelStreams {
    /// The next inbound stream from a friend; `None` once the driver stopped.
    pub async fn next(&mut self) -> Option<(PeerId, Stream)> {
        while let Some((peer, stream)) = self.inner.next().await {
            if is_friend(&self.friends, &peer) {
                return Some((peer, stream));
            }
            tracing::warn!(%peer, "refused a model stream from a peer that is not a friend");
            drop(stream);
        }
        None
    }
}

impl fmt::Debug for IncomingModelStreams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IncomingModelStreams")
            .finish_non_exhaustive()
    }
}
