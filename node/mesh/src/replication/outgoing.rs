//! The one task that talks to the mesh driver's command queue.
//!
//! The daemon's loop (and its database thread, which carries out the
//! engine's sends) pushes commands into a bounded channel of
//! [`OUTGOING_QUEUE_LEN`] and waits when it is full; this task forwards
//! them, in order, waiting as long as the driver needs. Nothing is dropped
//! for being queued: a slow friend makes the sender wait instead. The
//! driver never stops taking commands while it waits to hand the loop an
//! event (see `crate::net::driver`), so the loop waiting here cannot
//! deadlock with the driver waiting on the loop.

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::frame_sink::FrameSink;
use crate::net::{MeshCommand, MeshHandle, PeerId, SendTag};

/// Commands waiting between the daemon and the forwarding task: 16 is a few
/// catch-up chunks' frames plus a burst of live sends; the driver's own queue
/// behind it holds more, so a deeper one here would only hide back-pressure.
pub const OUTGOING_QUEUE_LEN: usize = 16;

/// The sending side, used by the daemon loop and its database thread.
#[derive(Debug, Clone)]
pub struct Outgoing {
    tx: mpsc::Sender<MeshCommand>,
}

impl Outgoing {
    /// Starts the forwarding task for `handle`. The task ends after
    /// forwarding `MeshCommand::Shutdown`, when every `Outgoing` is dropped,
    /// or when the driver has stopped.
    pub fn spawn(handle: MeshHandle) -> (Outgoing, JoinHandle<()>) {
        let (tx, mut rx) = mpsc::channel::<MeshCommand>(OUTGOING_QUEUE_LEN);
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

    /// Queues a command for the driver, waiting while the queue is full.
    pub async fn command(&self, command: MeshCommand) {
        if self.tx.send(command).await.is_err() {
            tracing::debug!("mesh command dropped: the forwarding task has ended");
        }
    }

    /// Like [`Outgoing::command`], from a thread outside the async runtime
    /// (the database thread that carries out engine outputs).
    fn command_blocking(&self, command: MeshCommand) {
        if self.tx.blocking_send(command).is_err() {
            tracing::debug!("mesh command dropped: the forwarding task has ended");
        }
    }
}

fn parse_peer(peer: &str) -> Option<PeerId> {
    match peer.parse::<PeerId>() {
        Ok(p) => Some(p),
        // Engine peers are the driver's own PeerId strings.
        Err(e) => {
            tracing::error!(%peer, error = %e, "frame for a peer id that does not parse");
            None
        }
    }
}

impl FrameSink for Outgoing {
    fn send_frame(&mut self, peer: &str, frame: Vec<u8>) {
        if let Some(peer) = parse_peer(peer) {
            self.command_blocking(MeshCommand::Send { peer, frame });
        }
    }

    fn send_tracked(&mut self, peer: &str, frames: Vec<Vec<u8>>, tag: SendTag) {
        if let Some(peer) = parse_peer(peer) {
            self.command_blocking(MeshCommand::SendTracked { peer, frames, tag });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_full_queue_makes_the_sender_wait_and_loses_nothing() {
        let (tx, mut rx) = mpsc::channel::<MeshCommand>(OUTGOING_QUEUE_LEN);
        let out = Outgoing { tx };
        for _ in 0..OUTGOING_QUEUE_LEN {
            out.command(MeshCommand::Shutdown).await;
        }
        // The queue is full: one more waits until the reader takes one.
        let more = out.clone();
        let waiting = tokio::spawn(async move { more.command(MeshCommand::Shutdown).await });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "the sender waits on a full queue");
        let mut got = 0;
        while got < OUTGOING_QUEUE_LEN + 1 {
            rx.recv().await.unwrap();
            got += 1;
        }
        waiting.await.unwrap();
        assert_eq!(got, OUTGOING_QUEUE_LEN + 1);
    }
}
