//! The one task that talks to the mesh driver's command queue.
//!
//! The daemon's loop reads the driver's events; if it also waited on the
//! driver's bounded command queue, the two could wait on each other (see
//! `crate::mesh::handle`). So the loop only pushes commands into an
//! unbounded channel and this task forwards them, in order, waiting as long
//! as the driver needs. What the channel holds is bounded by what the engine
//! produced for inputs already read.

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::engine_io::FrameSink;
use crate::mesh::{MeshCommand, MeshHandle, PeerId};

/// The sending side: cheap to use from the daemon loop, never waits.
#[derive(Debug, Clone)]
pub struct Outgoing {
    tx: mpsc::UnboundedSender<MeshCommand>,
}

impl Outgoing {
    /// Starts the forwarding task for `handle`. The task ends after
    /// forwarding `MeshCommand::Shutdown`, when every `Outgoing` is dropped,
    /// or when the driver has stopped.
    pub fn spawn(handle: MeshHandle) -> (Outgoing, JoinHandle<()>) {
        let (tx, mut rx) = mpsc::unbounded_channel::<MeshCommand>();
        let task = tokio::spawn(async move {
            while let Some(command) = rx.recv().await {
                let last = matches!(command, MeshCommand::Shutdown);
                if handle.command(command).await.is_err() {
                    tracing::debug!("mesh driver stopped; dropping queued commands");
                    break;
                }
                if last {
                    break;
                }
            }
        });
        (Outgoing { tx }, task)
    }

    /// Queues a command for the driver.
    pub fn command(&self, command: MeshCommand) {
        if self.tx.send(command).is_err() {
            tracing::debug!("mesh command dropped: the forwarding task has ended");
        }
    }
}

impl FrameSink for Outgoing {
    fn send_frame(&mut self, peer: &str, frame: Vec<u8>) {
        match peer.parse::<PeerId>() {
            Ok(peer) => self.command(MeshCommand::Send { peer, frame }),
            // Engine peers are the driver's own PeerId strings.
            Err(e) => tracing::error!(%peer, error = %e, "frame for a peer id that does not parse"),
        }
    }
}
