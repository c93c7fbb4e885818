//! The receive pipeline's first stage: every driver event passes through
//! one thread that decodes each received frame and batch-verifies its
//! envelopes (a large frame over several cores, `parallel_verify`), so the
//! loop gets the frame as an engine input ready to handle. The loop
//! meanwhile hands the previous frame to the database writer; with
//! verification (about half of a received item's cost) on its own thread,
//! the two overlap on a two-core machine instead of taking turns
//! (`docs/benchmarks.md`, "Two full nodes").
//!
//! Friends are served in turn: the stage takes in whatever the driver has
//! ready into per-friend queues (`receive_order`, `fair_queue`) and verifies
//! the next frame round the friends, so a friend's note waits for at most
//! one frame of each friend that floods, not for all they have sent. A frame
//! is acknowledged to its sender only when the stage takes it to verify
//! (`FrameTaker`), so the sender's window (`MAX_IN_FLIGHT_PER_PEER`) bounds
//! how much of it waits here and a flood slows its own sender. Other events
//! go ahead of frames; a friend's frames still come before the
//! `PeerDisconnected` that followed them. The stage picks the next frame
//! only once the loop's channel has room for it, so a frame that arrives
//! while the loop is busy waits for what the loop holds already, not for
//! frames picked before it came. Every queue is bounded: per
//! friend by the driver (`MAX_WAITING_PER_PEER`), events by
//! `CONTROL_QUEUE_LEN` (then the driver's channel waits), and the stage
//! verifies at most [`VERIFIED_AHEAD`] frames before the loop takes them.
//!
//! It stops when either side goes: the driver's sender dropped (the
//! driver stopped) or the loop's receiver dropped (the node stops).

use std::sync::Arc;
use std::thread::JoinHandle;

use porfiry_protocol::engine::Inbound;
use porfiry_protocol::wire;
use tokio::sync::mpsc;

use super::engine_clock::EngineTime;
use super::error::ReplicationError;
use super::parallel_verify::verify_parallel;
use super::receive_order::{Next, ReceiveOrder};
use crate::net::{FrameTaker, MeshEvent};

/// Frames verified ahead of the loop: one being stored while the next
/// waits is all the overlap two cores can use; a second spare evens out
/// frames of different sizes. Each is at most one wire message
/// (`wire::MAX_WIRE_MESSAGE_BYTES`, 1 MiB), so this bounds what the stage
/// holds to a few MiB.
pub const VERIFIED_AHEAD: usize = 2;

/// What the stage hands the loop.
#[derive(Debug)]
pub enum Arrival {
    /// A frame from a friend, decoded and verified.
    Frame(Frame),
    /// Any other driver event, unchanged.
    Event(MeshEvent),
}

/// A received frame after decoding and verification.
#[derive(Debug)]
pub enum Frame {
    /// A wire message, its envelopes verified.
    Message {
        /// Who sent it (peer id string).
        peer: String,
        /// The engine's input for it.
        message: Inbound,
    },
    /// A frame that is not a wire message (logged and dropped by the loop).
    Garbled {
        /// Who sent it.
        peer: String,
        /// Its size.
        bytes: usize,
        /// Why it does not decode.
        error: wire::WireError,
    },
}

/// Decodes and verifies one frame from `peer` at engine time `now_ms`.
pub fn verify_frame(peer: String, frame: &[u8], now_ms: u64) -> Frame {
    match wire::decode(frame) {
        Ok(message) => Frame::Message {
            peer,
            message: Inbound::from_wire_with(message, |envelopes| {
                verify_parallel(envelopes, now_ms)
            }),
        },
        Err(error) => Frame::Garbled {
            peer,
            bytes: frame.len(),
            error,
        },
    }
}

/// One event out of the order through the stage: a frame taken (told to
/// the driver, which acknowledges it) and verified, the rest as is.
fn arrival(next: Next, taker: &FrameTaker, time: &EngineTime) -> Arrival {
    match next {
        Next::Frame { peer, frame, id } => {
            if let Some(id) = id
                && taker.blocking_taken(id).is_err()
            {
                tracing::debug!(%peer, "the driver stopped; frame taken unacknowledged");
            }
            Arrival::Frame(verify_frame(peer.to_string(), &frame, time.now()))
        }
        Next::Event(event) => Arrival::Event(event),
    }
}

/// Starts the stage's thread between the driver's `events` and the loop;
/// `taker` tells the driver which frames it took.
pub fn spawn_verify_stage(
    mut events: mpsc::Receiver<MeshEvent>,
    taker: FrameTaker,
    time: Arc<EngineTime>,
) -> Result<(mpsc::Receiver<Arrival>, JoinHandle<()>), ReplicationError> {
    let (tx, rx) = mpsc::channel(VERIFIED_AHEAD);
    let thread = std::thread::Builder::new()
        .name("porfiry-verify".into())
        .spawn(move || {
            let mut order = ReceiveOrder::default();
            let mut open = true;
            loop {
                // Room in the loop's channel first, the pick after: a
                // frame is chosen (and acknowledged) only when it can go
                // on, among all that came while the loop was busy.
                let Ok(permit) = futures::executor::block_on(tx.reserve()) else {
                    return; // the loop has stopped
                };
                let next = loop {
                    // Whatever the driver has ready is queued before the
                    // pick, so the pick sees every friend that is waiting.
                    while open && order.has_room() {
                        match events.try_recv() {
                            Ok(event) => order.push(event),
                            Err(mpsc::error::TryRecvError::Empty) => break,
                            Err(mpsc::error::TryRecvError::Disconnected) => open = false,
                        }
                    }
                    match order.pop() {
                        Some(next) => break next,
                        None if open => match events.blocking_recv() {
                            Some(event) => order.push(event),
                            None => open = false,
                        },
                        None => return, // the driver stopped, all handed on
                    }
                };
                permit.send(arrival(next, &taker, &time));
            }
        })
        .map_err(ReplicationError::Thread)?;
    Ok((rx, thread))
}

#[cfg(test)]
mod tests {
    use porfiry_protocol::wire::{WireItem, WireMessage};
    use porfiry_protocol::{Audience, NodeKey, sign};
    use porfiry_skills::{Clock, ManualClock, SystemClock};
    use porfiry_storage::Note;

    use super::*;
    use crate::net::limits::MAX_WAITING_PER_PEER;
    use crate::net::{FrameId, PeerId};
    use crate::replication::fair_queue::FAIR_QUANTUM_BYTES;
    use crate::sharing::publish::note_draft;

    /// A taker and what it tells the driver.
    fn taker() -> (FrameTaker, mpsc::Receiver<FrameId>) {
        let (tx, rx) = mpsc::channel(64);
        (FrameTaker::new(tx), rx)
    }

    fn to_take(peer: PeerId, frame: Vec<u8>, id: u64) -> MeshEvent {
        MeshEvent::FrameToTake {
            peer,
            frame,
            id: FrameId(id),
        }
    }

    fn time() -> Arc<EngineTime> {
        let clock = ManualClock::new(SystemClock::utc().now());
        Arc::new(EngineTime::new(Arc::new(clock)))
    }

    /// An `Items` frame of `n` notes, the `forged`-th with a broken signature.
    fn items_frame(n: usize, forged: usize) -> Vec<u8> {
        let key = NodeKey::from_seed([5; 32]);
        let now = SystemClock::utc().now().unix_ms();
        let items = (0..n)
            .map(|i| {
                let row = Note {
                    text: format!("stage {i}"),
                    ..Default::default()
                };
                let item = sign(&key, &note_draft(&row, &Audience::Friends, now)).unwrap();
                let mut envelope = item.envelope_bytes().to_vec();
                if i == forged {
                    let last = envelope.len() - 1;
                    envelope[last] ^= 1;
                }
                WireItem { hops: 2, envelope }
            })
            .collect();
        wire::encode(&WireMessage::Items {
            session: None,
            items,
        })
        .unwrap()
    }

    #[test]
    fn events_come_out_in_order_with_frames_verified() {
        let (tx, events) = mpsc::channel(8);
        let (taker, mut taken) = taker();
        let (mut arrivals, thread) = spawn_verify_stage(events, taker, time()).unwrap();
        let peer = PeerId::random();
        let sent = [
            MeshEvent::PeerConnected { peer },
            to_take(peer, items_frame(3, 1), 1),
            MeshEvent::FrameReceived {
                peer,
                frame: b"not cbor at all".to_vec(),
            },
            MeshEvent::PeerDisconnected { peer },
        ];
        for event in sent {
            tx.blocking_send(event).unwrap();
        }
        drop(tx);
        let mut got = Vec::new();
        while let Some(a) = arrivals.blocking_recv() {
            got.push(a);
        }
        thread.join().unwrap();
        assert_eq!(got.len(), 4, "{got:?}");
        assert!(matches!(
            &got[0],
            Arrival::Event(MeshEvent::PeerConnected { .. })
        ));
        match &got[1] {
            Arrival::Frame(Frame::Message {
                peer: from,
                message: Inbound::Items { items, invalid, .. },
            }) => {
                assert_eq!(from, &peer.to_string());
                assert_eq!(items.len(), 2, "the two good notes");
                assert_eq!(invalid.len(), 1, "the forged one, reported");
            }
            other => panic!("expected verified items, got {other:?}"),
        }
        assert!(matches!(
            &got[2],
            Arrival::Frame(Frame::Garbled { bytes: 15, .. })
        ));
        assert!(matches!(
            &got[3],
            Arrival::Event(MeshEvent::PeerDisconnected { .. })
        ));
        // The frame to take was taken; the one acknowledged on arrival has
        // no id to hand back.
        assert_eq!(taken.blocking_recv(), Some(FrameId(1)));
        assert_eq!(taken.blocking_recv(), None);
    }

    /// Which peer each verified frame came from.
    fn sender(arrival: &Arrival) -> String {
        match arrival {
            Arrival::Frame(Frame::Message { peer, .. } | Frame::Garbled { peer, .. }) => {
                peer.clone()
            }
            Arrival::Event(e) => panic!("expected a frame, got {e:?}"),
        }
    }

    #[test]
    fn a_quiet_friends_frame_is_verified_after_one_of_the_floods() {
        let flood = PeerId::random();
        let quiet = PeerId::random();
        let (tx, events) = mpsc::channel(32);
        // The flood's frames are larger than a turn's credit (bytes that
        // do not decode: the stage's order is the same, and fast).
        let big = vec![0xff; FAIR_QUANTUM_BYTES];
        for id in 0..MAX_WAITING_PER_PEER as u64 {
            tx.blocking_send(to_take(flood, big.clone(), id)).unwrap();
        }
        tx.blocking_send(to_take(quiet, items_frame(1, 1), 100))
            .unwrap();
        drop(tx);
        let (taker, _taken) = taker();
        let (mut arrivals, thread) = spawn_verify_stage(events, taker, time()).unwrap();
        let mut order = Vec::new();
        while let Some(a) = arrivals.blocking_recv() {
            order.push(sender(&a));
        }
        thread.join().unwrap();
        assert_eq!(order.len(), MAX_WAITING_PER_PEER + 1, "nothing lost");
        let at = order.iter().position(|p| *p == quiet.to_string());
        assert!(
            at.is_some_and(|at| at <= 1),
            "the quiet friend's frame waited for {at:?} of the flood's, not at most one"
        );
    }

    #[test]
    fn a_frame_is_acknowledged_only_once_the_stage_takes_it() {
        let peer = PeerId::random();
        let frames = 8u64;
        let (tx, events) = mpsc::channel(16);
        for id in 0..frames {
            tx.blocking_send(to_take(peer, items_frame(1, 1), id))
                .unwrap();
        }
        drop(tx);
        let (taker, mut taken) = taker();
        let (mut arrivals, thread) = spawn_verify_stage(events, taker, time()).unwrap();
        let mut acked = Vec::new();
        let mut handed = 0;
        while arrivals.blocking_recv().is_some() {
            handed += 1;
            while let Ok(id) = taken.try_recv() {
                acked.push(id);
            }
            // At most the frames the loop has and those verified ahead
            // of it (the next is picked only once there is room for it)
            // were acknowledged: the rest still hold the sender's window.
            assert!(
                acked.len() <= handed + VERIFIED_AHEAD,
                "{} acknowledged with {handed} taken by the loop",
                acked.len()
            );
        }
        thread.join().unwrap();
        while let Some(id) = taken.blocking_recv() {
            acked.push(id);
        }
        let want: Vec<_> = (0..frames).map(FrameId).collect();
        assert_eq!(acked, want, "every frame acknowledged once, in order");
    }

    #[test]
    fn the_stage_stops_when_the_loop_lets_go() {
        let (tx, events) = mpsc::channel(8);
        let (taker, _taken) = taker();
        let (arrivals, thread) = spawn_verify_stage(events, taker, time()).unwrap();
        drop(arrivals);
        // The next event finds no loop: the stage ends, and the driver's
        // sender sees the channel closed.
        let peer = PeerId::random();
        tx.blocking_send(MeshEvent::PeerConnected { peer }).unwrap();
        thread.join().unwrap();
        assert!(
            tx.blocking_send(MeshEvent::PeerDisconnected { peer })
                .is_err()
        );
    }
}
