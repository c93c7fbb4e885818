//! In what order the receive stage hands the driver's events on: friends'
//! frames wait in per-friend queues served in turn by bytes ([`FairQueue`]), every
//! other event goes ahead of them at once. A friend's connection events
//! keep their place after its frames: `PeerDisconnected` (or a new
//! connection, or a moved link) first lets that friend's queued frames
//! through, then itself, so a frame is never handled after the disconnect
//! that followed it. Pure: the stage (`verify_stage`) feeds it and
//! verifies what comes out.

use std::collections::VecDeque;

use super::fair_queue::FairQueue;
use crate::net::limits::MAX_WAITING_PER_PEER;
use crate::net::{FrameId, MeshEvent, PeerId};

/// Events (other than frames) the order holds before the stage stops
/// taking more from the driver: they are handed on ahead of every frame,
/// so they wait only while the loop is busy with one; 64 is a burst of
/// connection and send reports with room. Past it the driver's own bounded
/// channel waits instead.
pub const CONTROL_QUEUE_LEN: usize = 64;

/// What comes out next.
#[derive(Debug)]
pub enum Next {
    /// A driver event other than a frame.
    Event(MeshEvent),
    /// A friend's frame; `id` when it is to be acknowledged once taken.
    Frame {
        /// Who sent it.
        peer: PeerId,
        /// Its bytes.
        frame: Vec<u8>,
        /// What to hand the driver back (`FrameTaker`).
        id: Option<FrameId>,
    },
}

/// A frame waiting in its friend's queue.
type Queued = (Vec<u8>, Option<FrameId>);

/// The receive stage's queues.
#[derive(Debug)]
pub struct ReceiveOrder {
    /// Handed on first, in order.
    ahead: VecDeque<Next>,
    frames: FairQueue<PeerId, Queued>,
}

impl Default for ReceiveOrder {
    fn default() -> Self {
        Self::new(MAX_WAITING_PER_PEER)
    }
}

impl ReceiveOrder {
    /// Queues of `per_peer` frames for each friend: the driver hands out no
    /// more than `MAX_WAITING_PER_PEER` of a friend's frames untaken.
    pub fn new(per_peer: usize) -> Self {
        Self {
            ahead: VecDeque::new(),
            frames: FairQueue::new(per_peer),
        }
    }

    /// Whether the stage should take more events from the driver now.
    pub fn has_room(&self) -> bool {
        self.ahead.len() < CONTROL_QUEUE_LEN
    }

    /// Takes one driver event in.
    pub fn push(&mut self, event: MeshEvent) {
        match event {
            MeshEvent::FrameToTake { peer, frame, id } => self.frame(peer, frame, Some(id)),
            MeshEvent::FrameReceived { peer, frame } => self.frame(peer, frame, None),
            MeshEvent::PeerConnected { peer }
            | MeshEvent::PeerDisconnected { peer }
            | MeshEvent::LinkMoved { peer } => {
                self.let_through(&peer);
                self.ahead.push_back(Next::Event(event));
            }
            other => self.ahead.push_back(Next::Event(other)),
        }
    }

    /// What to hand on next: events first, then frames in turn.
    pub fn pop(&mut self) -> Option<Next> {
        if let Some(next) = self.ahead.pop_front() {
            return Some(next);
        }
        let (peer, (frame, id)) = self.frames.pop()?;
        Some(Next::Frame { peer, frame, id })
    }

    /// Frames waiting in friends' queues.
    #[cfg(test)]
    pub fn frames_queued(&self) -> usize {
        self.frames.len()
    }

    fn frame(&mut self, peer: PeerId, frame: Vec<u8>, id: Option<FrameId>) {
        let bytes = frame.len();
        if let Err(full) = self.frames.push(peer, (frame, id), bytes) {
            // The driver refuses a friend's frames past the same bound, so
            // this is a driver run without it: go ahead, lose nothing.
            let (frame, id) = full.0;
            tracing::debug!(%peer, "a friend's frame queue is full; frame handed on ahead");
            self.ahead.push_back(Next::Frame { peer, frame, id });
        }
    }

    /// Moves `peer`'s queued frames ahead, in their order.
    fn let_through(&mut self, peer: &PeerId) {
        for (frame, id) in self.frames.take_peer(peer) {
            self.ahead.push_back(Next::Frame {
                peer: *peer,
                frame,
                id,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replication::fair_queue::FAIR_QUANTUM_BYTES;

    /// A flood's frame: a whole turn's credit.
    const BIG: usize = FAIR_QUANTUM_BYTES;

    /// Frame `n` of `bytes` bytes from `peer`, to be taken.
    fn sized(peer: PeerId, n: u8, bytes: usize) -> MeshEvent {
        MeshEvent::FrameToTake {
            peer,
            frame: vec![n; bytes],
            id: FrameId(u64::from(n)),
        }
    }

    /// A small frame (a note).
    fn frame(peer: PeerId, n: u8) -> MeshEvent {
        sized(peer, n, 300)
    }

    /// What comes out, as (peer index, frame byte) or the event's name.
    fn drain(order: &mut ReceiveOrder, peers: &[PeerId]) -> Vec<String> {
        std::iter::from_fn(|| order.pop())
            .map(|next| match next {
                Next::Frame { peer, frame, .. } => {
                    let i = peers.iter().position(|p| *p == peer).unwrap();
                    format!("{i}:{}", frame[0])
                }
                Next::Event(MeshEvent::PeerDisconnected { peer }) => {
                    let i = peers.iter().position(|p| *p == peer).unwrap();
                    format!("gone {i}")
                }
                Next::Event(e) => format!("{e:?}"),
            })
            .collect()
    }

    #[test]
    fn a_quiet_friend_goes_next_after_one_frame_of_the_flooding_one() {
        let peers = [PeerId::random(), PeerId::random()];
        let mut order = ReceiveOrder::new(MAX_WAITING_PER_PEER);
        for n in 0..MAX_WAITING_PER_PEER as u8 {
            order.push(sized(peers[0], n, BIG));
        }
        order.push(frame(peers[1], 100));
        let out = drain(&mut order, &peers);
        assert_eq!(out[..3], ["0:0", "1:100", "0:1"]);
        assert_eq!(out.len(), MAX_WAITING_PER_PEER + 1);
    }

    #[test]
    fn a_disconnect_comes_after_that_friends_frames_and_before_the_others() {
        let peers = [PeerId::random(), PeerId::random()];
        let mut order = ReceiveOrder::new(4);
        order.push(frame(peers[0], 1));
        order.push(frame(peers[1], 1));
        order.push(frame(peers[0], 2));
        order.push(MeshEvent::PeerDisconnected { peer: peers[0] });
        order.push(frame(peers[1], 2));
        assert_eq!(
            drain(&mut order, &peers),
            ["0:1", "0:2", "gone 0", "1:1", "1:2"]
        );
    }

    #[test]
    fn over_the_bound_nothing_is_lost_and_events_bound_the_intake() {
        let peers = [PeerId::random()];
        let mut order = ReceiveOrder::new(2);
        for n in 0..3 {
            order.push(frame(peers[0], n));
        }
        assert_eq!(order.frames_queued(), 2, "the queue holds its bound");
        // The third went ahead rather than being dropped.
        assert_eq!(drain(&mut order, &peers), ["0:2", "0:0", "0:1"]);

        assert!(order.has_room());
        for _ in 0..CONTROL_QUEUE_LEN {
            order.push(MeshEvent::PeerRefused {
                peer: PeerId::random(),
            });
        }
        assert!(!order.has_room(), "a full queue of events stops the intake");
        order.pop();
        assert!(order.has_room());
    }

    #[test]
    fn frames_acknowledged_on_arrival_are_served_in_turn_too() {
        let peers = [PeerId::random(), PeerId::random()];
        let mut order = ReceiveOrder::new(4);
        for n in 0..3 {
            order.push(MeshEvent::FrameReceived {
                peer: peers[0],
                frame: vec![n; BIG],
            });
        }
        order.push(frame(peers[1], 9));
        match order.pop() {
            Some(Next::Frame { id: None, .. }) => {}
            other => panic!("expected a frame without an id, got {other:?}"),
        }
        assert_eq!(drain(&mut order, &peers), ["1:9", "0:1", "0:2"]);
    }
}
