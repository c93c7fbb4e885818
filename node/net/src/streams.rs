//! Raw byte streams between friends on `/porfiry/offload/1` (libp2p-stream):
//! a minute-long model answer cannot ride one request/response with a 10 s
//! timeout, so offload gets a plain duplex stream per request.
//!
//! Decisions made here:
//! - [`StreamControl`] is made before the driver (so a node handle can hold
//!   one before its mesh runs); the driver takes its libp2p behaviour once,
//!   at start. It shares the driver's friend set.
//! - Strangers are refused twice: the friend gate denies their connections,
//!   and [`IncomingOffload`] drops any inbound stream from a peer that is
//!   not a friend now (defence in depth; a friend removed mid-connection).
//! - [`StreamControl::open`] refuses a non-friend at once, without a dial.
//!   If the friend is not connected, libp2p-stream dials it with the
//!   addresses the swarm knows; the driver's redial keeps friends connected,
//!   so a phone opens streams over the connection it dialled.
//! - Only one acceptor: a second `accept` is [`MeshError::AlreadyAccepting`].

use std::collections::HashSet;
use std::fmt;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::task::{Context, Poll};

use futures::StreamExt;
use libp2p::{PeerId, Stream, StreamProtocol};

use super::error::MeshError;
use super::gate::InviteDoor;

/// The offload protocol name.
pub const OFFLOAD_PROTOCOL: &str = "/porfiry/offload/1";

const PROTOCOL: StreamProtocol = StreamProtocol::new(OFFLOAD_PROTOCOL);

/// The friends the driver allows now, shared with every [`StreamControl`].
pub(crate) type FriendSet = Arc<RwLock<HashSet<PeerId>>>;

/// Opens offload streams to friends and accepts theirs. Cheap to clone.
#[derive(Clone)]
pub struct StreamControl {
    pub(super) control: libp2p_stream::Control,
    /// The behaviour until the driver takes it.
    behaviour: Arc<Mutex<Option<libp2p_stream::Behaviour>>>,
    friends: FriendSet,
    /// Opened by the invitation service while an invitation is open; the
    /// driver's gate reads it.
    door: InviteDoor,
}

impl StreamControl {
    /// A control whose behaviour a [`super::MeshDriver`] takes when built
    /// from a [`super::MeshConfig`] holding it.
    pub fn new() -> Self {
        let behaviour = libp2p_stream::Behaviour::new();
        Self {
            control: behaviour.new_control(),
            behaviour: Arc::new(Mutex::new(Some(behaviour))),
            friends: FriendSet::default(),
            door: InviteDoor::default(),
        }
    }

    /// The behaviour for the swarm; `None` if a driver already took it.
    pub(crate) fn take_behaviour(&self) -> Option<libp2p_stream::Behaviour> {
        self.behaviour
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// The door through which strangers may come in as invitation guests.
    pub fn door(&self) -> InviteDoor {
        self.door.clone()
    }

    /// The friend set the driver keeps current.
    pub(crate) fn friends(&self) -> &FriendSet {
        &self.friends
    }

    fn is_friend(&self, peer: &PeerId) -> bool {
        is_friend(&self.friends, peer)
    }

    /// Opens a stream to `peer` on [`OFFLOAD_PROTOCOL`], dialling it if not
    /// connected. Fails at once if `peer` is not a friend.
    pub async fn open(&mut self, peer: PeerId) -> Result<Stream, MeshError> {
        if !self.is_friend(&peer) {
            return Err(MeshError::NotFriend { peer });
        }
        self.open_on(peer, PROTOCOL).await
    }

    /// Opens a stream to `peer` on `protocol`, dialling it if not
    /// connected: [`MeshError::StreamUnsupported`] when the peer does not
    /// accept that protocol. Whom it may be opened to is the caller's check.
    pub(super) async fn open_on(
        &mut self,
        peer: PeerId,
        protocol: StreamProtocol,
    ) -> Result<Stream, MeshError> {
        self.control
            .open_stream(peer, protocol)
            .await
            .map_err(|error| match error {
                libp2p_stream::OpenStreamError::UnsupportedProtocol(_) => {
                    MeshError::StreamUnsupported { peer }
                }
                other => MeshError::StreamOpen {
                    peer,
                    reason: other.to_string(),
                },
            })
    }

    /// Starts accepting inbound offload streams from friends. Only one
    /// acceptor at a time; dropping it stops accepting (peers then get
    /// "unsupported protocol").
    pub fn accept(&mut self) -> Result<IncomingOffload, MeshError> {
        let inner = self
            .control
            .accept(PROTOCOL)
            .map_err(|_| MeshError::AlreadyAccepting)?;
        Ok(IncomingOffload {
            inner,
            friends: Arc::clone(&self.friends),
        })
    }
}

impl Default for StreamControl {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for StreamControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamControl").finish_non_exhaustive()
    }
}

/// Two controls are equal when they share one behaviour.
impl PartialEq for StreamControl {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.behaviour, &other.behaviour)
    }
}

impl Eq for StreamControl {}

pub(super) fn is_friend(friends: &FriendSet, peer: &PeerId) -> bool {
    friends
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .contains(peer)
}

/// Inbound offload streams from friends, as `(peer, stream)`; streams from
/// anyone else are dropped (closing them) and logged.
pub struct IncomingOffload {
    inner: libp2p_stream::IncomingStreams,
    friends: FriendSet,
}

impl IncomingOffload {
    /// The next inbound stream from a friend; `None` once the driver stopped.
    pub async fn next(&mut self) -> Option<(PeerId, Stream)> {
        StreamExt::next(self).await
    }
}

impl fmt::Debug for IncomingOffload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IncomingOffload").finish_non_exhaustive()
    }
}

impl futures::Stream for IncomingOffload {
    type Item = (PeerId, Stream);

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            match self.inner.poll_next_unpin(cx) {
                Poll::Ready(Some((peer, stream))) => {
                    if is_friend(&self.friends, &peer) {
                        return Poll::Ready(Some((peer, stream)));
                    }
                    tracing::warn!(%peer, "refused an offload stream from a peer that is not a friend");
                    drop(stream);
                }
                other => return other,
            }
        }
    }
}
