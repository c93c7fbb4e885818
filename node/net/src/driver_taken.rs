//! Acknowledging a friend's frame only when the consumer takes it
//! (`MeshConfig::ack_when_taken`). The frame goes out as
//! `MeshEvent::FrameToTake` with an id; its response channel waits here
//! until the consumer hands the id back (`FrameTaker`), and only then is the
//! frame acknowledged. So a friend's send window (`MAX_IN_FLIGHT_PER_PEER`)
//! bounds what of it waits on this node, and a flooding friend is slowed at
//! its own end instead of queueing ahead of everyone else.
//!
//! Two rules keep this safe:
//! - At most `MAX_WAITING_PER_PEER` frames of one friend wait to be taken;
//!   one past it is refused (its stream dropped unanswered, the sender sees
//!   the failure and sends it again later). A friend that ignores its window
//!   cannot grow the queue.
//! - While the driver holds a frame of ours (a friend's queue is full), it
//!   acknowledges every waiting frame and each new one on arrival, as it did
//!   before frames waited. The consumer that takes frames is the same loop
//!   that waits on the held frame; a friend in the same state would wait on
//!   our acknowledgements while we wait on its, and neither would move.

use libp2p::PeerId;
use libp2p::request_response::ResponseChannel;

use super::MeshDriver;
use crate::events::{FrameId, MeshEvent};
use crate::limits::MAX_WAITING_PER_PEER;

/// A frame handed out and not yet taken.
#[derive(Debug)]
pub(super) struct Waiting {
    peer: PeerId,
    /// Until acknowledged (taken, or early while a frame is held).
    channel: Option<ResponseChannel<Vec<u8>>>,
}

impl MeshDriver {
    /// A friend's frame arrived on `channel`: acknowledged now and handed
    /// out as `FrameReceived`, or (`ack_when_taken`) handed out as
    /// `FrameToTake` to be acknowledged once taken.
    pub(super) fn frame_in(
        &mut self,
        peer: PeerId,
        frame: Vec<u8>,
        channel: ResponseChannel<Vec<u8>>,
    ) {
        if !self.ack_when_taken {
            self.swarm.behaviour_mut().acknowledge(channel);
            self.emit(MeshEvent::FrameReceived { peer, frame });
            return;
        }
        let count = self.waiting_per_peer.entry(peer).or_default();
        if *count >= MAX_WAITING_PER_PEER {
            // Dropping `channel` unanswered ends the stream: the sender
            // sees a failure, and nothing it was told we have is lost.
            tracing::debug!(%peer, waiting = *count, "friend sent past its window; frame refused");
            return;
        }
        *count += 1;
        let channel = if self.held.is_empty() {
            self.unacked += 1;
            Some(channel)
        } else {
            self.swarm.behaviour_mut().acknowledge(channel);
            None
        };
        self.next_frame_id += 1;
        let id = FrameId(self.next_frame_id);
        self.waiting.insert(id, Waiting { peer, channel });
        self.emit(MeshEvent::FrameToTake { peer, frame, id });
    }

    /// The consumer took frame `id`: acknowledge it (unless that was done
    /// already) and free its place.
    pub(super) fn frame_taken(&mut self, id: FrameId) {
        let Some(w) = self.waiting.remove(&id) else {
            tracing::debug!(?id, "a frame taken twice or never handed out");
            return;
        };
        if let Some(count) = self.waiting_per_peer.get_mut(&w.peer) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                self.waiting_per_peer.remove(&w.peer);
            }
        }
        if let Some(channel) = w.channel {
            self.unacked = self.unacked.saturating_sub(1);
            // False when the stream is gone (the link closed): the sender
            // has seen the failure already.
            self.swarm.behaviour_mut().acknowledge(channel);
        }
    }

    /// While a frame is held, acknowledges every waiting frame (see the
    /// module doc: the consumer may be waiting on the held frame).
    pub(super) fn ack_waiting_while_held(&mut self) {
        if self.held.is_empty() || self.unacked == 0 {
            return;
        }
        tracing::debug!(
            frames = self.unacked,
            "a frame is held: acknowledging the frames waiting to be taken"
        );
        for w in self.waiting.values_mut() {
            if let Some(channel) = w.channel.take() {
                self.swarm.behaviour_mut().acknowledge(channel);
            }
        }
        self.unacked = 0;
    }
}
