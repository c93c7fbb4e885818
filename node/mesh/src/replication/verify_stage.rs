//! The receive pipeline's first stage: every driver event passes through
//! one thread that decodes each received frame and batch-verifies its
//! envelopes (a large frame over several cores, `parallel_verify`), so the
//! loop gets the frame as an engine input ready to handle. The loop
//! meanwhile hands the previous frame to the database writer; with
//! verification (about half of a received item's cost) on its own thread,
//! the two overlap on a two-core machine instead of taking turns
//! (`docs/benchmarks.md`, "Two full nodes").
//!
//! Events keep their order: the stage takes them one at a time from the
//! driver's channel and passes them on in the same order, so a frame is
//! never handled after the `PeerDisconnected` that followed it. Both
//! channels are bounded: the stage verifies at most
//! [`VERIFIED_AHEAD`] frames before the loop takes them, and the driver
//! waits when the stage is behind.
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
use crate::net::MeshEvent;

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

/// One driver event through the stage: a frame verified, the rest as is.
fn arrival(event: MeshEvent, time: &EngineTime) -> Arrival {
    match event {
        MeshEvent::FrameReceived { peer, frame } => {
            Arrival::Frame(verify_frame(peer.to_string(), &frame, time.now()))
        }
        other => Arrival::Event(other),
    }
}

/// Starts the stage's thread between the driver's `events` and the loop.
pub fn spawn_verify_stage(
    mut events: mpsc::Receiver<MeshEvent>,
    time: Arc<EngineTime>,
) -> Result<(mpsc::Receiver<Arrival>, JoinHandle<()>), ReplicationError> {
    let (tx, rx) = mpsc::channel(VERIFIED_AHEAD);
    let thread = std::thread::Builder::new()
        .name("porfiry-verify".into())
        .spawn(move || {
            while let Some(event) = events.blocking_recv() {
                if tx.blocking_send(arrival(event, &time)).is_err() {
                    return; // the loop has stopped
                }
            }
        })
        .map_err(ReplicationError::Thread)?;
    Ok((rx, thread))
}

#[cfg(test)]
mod tests {
    use libp2p::PeerId;
    use porfiry_protocol::wire::{WireItem, WireMessage};
    use porfiry_protocol::{Audience, NodeKey, sign};
    use porfiry_skills::{Clock, ManualClock, SystemClock};
    use porfiry_storage::Note;

    use super::*;
    use crate::sharing::publish::note_draft;

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
        let (mut arrivals, thread) = spawn_verify_stage(events, time()).unwrap();
        let peer = PeerId::random();
        let sent = [
            MeshEvent::PeerConnected { peer },
            MeshEvent::FrameReceived {
                peer,
                frame: items_frame(3, 1),
            },
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
    }

    #[test]
    fn the_stage_stops_when_the_loop_lets_go() {
        let (tx, events) = mpsc::channel(8);
        let (arrivals, thread) = spawn_verify_stage(events, time()).unwrap();
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
