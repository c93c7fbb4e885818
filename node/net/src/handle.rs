//! The cloneable handle the rest of the node uses to command the driver.

use libp2p::{Multiaddr, PeerId};
use tokio::sync::mpsc;

use super::error::MeshError;
use super::events::{FrameId, MeshCommand};
use super::streams::StreamControl;

/// Sends [`MeshCommand`]s to a running driver. Each call waits while the
/// command queue is full (back-pressure) and fails only if the driver stopped.
///
/// Do not wait on a full command queue from the same task that drains the
/// event channel while the event channel is full: the driver would wait on
/// you and you on it. Drain events in their own task, or use `try_send`.
#[derive(Debug, Clone)]
pub struct MeshHandle {
    commands: mpsc::Sender<MeshCommand>,
    taken: mpsc::Sender<FrameId>,
    streams: StreamControl,
}

impl MeshHandle {
    pub(crate) fn new(
        commands: mpsc::Sender<MeshCommand>,
        taken: mpsc::Sender<FrameId>,
        streams: StreamControl,
    ) -> Self {
        Self {
            commands,
            taken,
            streams,
        }
    }

    /// Where the consumer says it took a `MeshEvent::FrameToTake`
    /// (`MeshConfig::ack_when_taken`).
    pub fn frame_taker(&self) -> FrameTaker {
        FrameTaker::new(self.taken.clone())
    }

    /// Opens and accepts raw offload streams to and from friends.
    pub fn streams(&self) -> StreamControl {
        self.streams.clone()
    }

    /// Sends any command.
    pub async fn command(&self, command: MeshCommand) -> Result<(), MeshError> {
        self.commands
            .send(command)
            .await
            .map_err(|_| MeshError::DriverStopped)
    }

    /// Sends a command without waiting; fails if the queue is full or the driver stopped.
    pub fn try_command(&self, command: MeshCommand) -> Result<(), MeshError> {
        self.commands.try_send(command).map_err(|e| match e {
            mpsc::error::TrySendError::Full(_) => MeshError::CommandQueueFull,
            mpsc::error::TrySendError::Closed(_) => MeshError::DriverStopped,
        })
    }

    /// Lets `peer` connect; dials it at `addresses` if any.
    pub async fn add_friend(
        &self,
        peer: PeerId,
        addresses: Vec<Multiaddr>,
    ) -> Result<(), MeshError> {
        self.command(MeshCommand::AddFriend { peer, addresses })
            .await
    }

    /// Stops letting `peer` connect and closes its connections.
    pub async fn remove_friend(&self, peer: PeerId) -> Result<(), MeshError> {
        self.command(MeshCommand::RemoveFriend { peer }).await
    }

    /// Sends one frame to a connected friend.
    pub async fn send(&self, peer: PeerId, frame: Vec<u8>) -> Result<(), MeshError> {
        self.command(MeshCommand::Send { peer, frame }).await
    }

    /// Asks the driver to stop. Await its task's `JoinHandle` to know it has.
    pub async fn shutdown(&self) -> Result<(), MeshError> {
        self.command(MeshCommand::Shutdown).await
    }
}

/// Tells the driver which received frames the consumer took, so it
/// acknowledges them to their senders. Its queue is apart from the
/// commands' and the driver takes from it at every turn, even while it
/// holds a frame and takes no commands: a consumer waiting on it never
/// waits on a friend.
#[derive(Debug, Clone)]
pub struct FrameTaker {
    taken: mpsc::Sender<FrameId>,
}

impl FrameTaker {
    /// A taker sending into `taken` (the driver's end, or a test's: the
    /// consumer's tests in `porfiry-mesh` read what it sends).
    pub fn new(taken: mpsc::Sender<FrameId>) -> Self {
        Self { taken }
    }

    /// Frame `id` was taken: acknowledge it. Waits while the queue is full;
    /// fails only if the driver stopped. For a thread outside the runtime.
    pub fn blocking_taken(&self, id: FrameId) -> Result<(), MeshError> {
        self.taken
            .blocking_send(id)
            .map_err(|_| MeshError::DriverStopped)
    }

    /// [`FrameTaker::blocking_taken`] from async code.
    pub async fn taken(&self, id: FrameId) -> Result<(), MeshError> {
        self.taken
            .send(id)
            .await
            .map_err(|_| MeshError::DriverStopped)
    }
}
