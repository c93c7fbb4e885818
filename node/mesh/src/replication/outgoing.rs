//! The one task that talks to the mesh driver's command queue.
//!
//! The daemon's loop (and its database thread, which carries out the
//! engine's sends through a [`WriterSink`]) pushes commands into a bounded channel of
//! [`OUTGOING_QUEUE_LEN`] and waits when it is full; this task forwards
//! them, in order, waiting as long as the driver needs. Nothing is dropped
//! for being queued: a slow friend makes the sender wait instead. The
//! driver never stops taking commands while it waits to hand the loop an
//! event (see `crate::net::driver`), so the loop waiting here cannot
//! deadlock with the driver waiting on the loop.

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::frame_sink::{FrameSink, HeldFrames};
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
    /// (the database thread that carries out engine outputs, past
    /// [`HELD_FRAME_BYTES`]).
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

/// Bytes of frames the database writer sets aside for the loop while the
/// driver has no room, before it waits for the driver itself as it did
/// before: a live push's page of 1,024 ordinary notes is about 300 KB and a
/// catch-up chunk 256 KiB, so 4 MiB holds any one send of ordinary items,
/// while a page of 64 KiB items cannot pile up beyond it.
pub const HELD_FRAME_BYTES: usize = 4 << 20;

/// The sink the writer's turns use ([`super::engine_io`]): a frame goes
/// to the forwarding task at once when its queue has room; when it has
/// none, the frame and every later one of the turn are held (up to
/// [`HELD_FRAME_BYTES`]) and the loop sends them after the turn, so a
/// friend slow to take our frames holds back the loop, never the writer
/// that the user's own writes wait for.
#[derive(Debug)]
pub struct WriterSink {
    out: Outgoing,
    held: Vec<MeshCommand>,
    held_bytes: usize,
}

impl WriterSink {
    /// A sink in front of `out`, holding nothing.
    pub fn new(out: Outgoing) -> WriterSink {
        WriterSink {
            out,
            held: Vec::new(),
            held_bytes: 0,
        }
    }

    fn push(&mut self, command: MeshCommand, bytes: usize) {
        let command = if self.held.is_empty() {
            match self.out.tx.try_send(command) {
                Ok(()) => return,
                Err(mpsc::error::TrySendError::Full(command)) => command,
                Err(mpsc::error::TrySendError::Closed(_)) => {
                    tracing::debug!("mesh command dropped: the forwarding task has ended");
                    return;
                }
            }
        } else {
            command
        };
        if self.held_bytes.saturating_add(bytes) > HELD_FRAME_BYTES {
            // Past the bound: wait for the driver here, in order.
            for held in std::mem::take(&mut self.held) {
                self.out.command_blocking(held);
            }
            self.held_bytes = 0;
            self.out.command_blocking(command);
            return;
        }
        self.held.push(command);
        self.held_bytes += bytes;
    }
}

impl FrameSink for WriterSink {
    fn send_frame(&mut self, peer: &str, frame: Vec<u8>) {
        if let Some(peer) = parse_peer(peer) {
            let bytes = frame.len();
            self.push(MeshCommand::Send { peer, frame }, bytes);
        }
    }

    fn send_tracked(&mut self, peer: &str, frames: Vec<Vec<u8>>, tag: SendTag) {
        if let Some(peer) = parse_peer(peer) {
            let bytes = frames.iter().map(Vec::len).sum();
            self.push(MeshCommand::SendTracked { peer, frames, tag }, bytes);
        }
    }

    fn holds_frames(&self) -> bool {
        !self.held.is_empty()
    }
}

impl HeldFrames for WriterSink {
    async fn send_held(&mut self) {
        for command in std::mem::take(&mut self.held) {
            self.out.command(command).await;
        }
        self.held_bytes = 0;
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

    fn frame_of(command: MeshCommand) -> Vec<u8> {
        match command {
            MeshCommand::Send { frame, .. } => frame,
            other => panic!("not a frame: {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_full_queue_sets_frames_aside_for_the_loop_in_order() {
        let (tx, mut rx) = mpsc::channel::<MeshCommand>(1);
        let mut sink = WriterSink::new(Outgoing { tx });
        let peer = porfiry_protocol::NodeKey::from_seed([70; 32])
            .peer_id()
            .to_string();
        sink.send_frame(&peer, vec![1]);
        assert!(!sink.holds_frames(), "the queue had room");
        sink.send_frame(&peer, vec![2]);
        assert!(sink.holds_frames(), "full: held, not waited for");
        assert_eq!(frame_of(rx.recv().await.unwrap()), [1]);
        // Room again, but a later frame must not pass the held one.
        sink.send_frame(&peer, vec![3]);
        assert!(rx.try_recv().is_err());
        let ((), got) = tokio::join!(sink.send_held(), async {
            let mut got = Vec::new();
            for _ in 0..2 {
                got.push(frame_of(rx.recv().await.unwrap()));
            }
            got
        });
        assert_eq!(got, [vec![2], vec![3]]);
        assert!(!sink.holds_frames());
        sink.send_frame(&peer, vec![4]);
        assert!(!sink.holds_frames(), "sent at once again");
        assert_eq!(frame_of(rx.recv().await.unwrap()), [4]);
    }
}
