//! The driver's frames: sending them to friends through the per-peer send
//! window (`Outbox`), holding the ones that do not fit, tracking `SendTracked`
//! groups until every frame has ended, and the request-response events that
//! deliver friends' frames to us and end ours. Kept apart from `driver.rs`
//! (the swarm, friends and dialling) so each reads on its own.

use libp2p::PeerId;
use libp2p::request_response::{self, Message, OutboundRequestId};

use super::{MeshDriver, Tracked};
use crate::codec::Frame;
use crate::events::{MeshEvent, SendFailure, SendTag};
use crate::outbox::QueueFull;

impl MeshDriver {
    pub(super) fn send_tracked(&mut self, peer: PeerId, frames: Vec<Vec<u8>>, tag: SendTag) {
        if frames.is_empty() {
            self.emit(MeshEvent::FrameDone {
                peer,
                tag,
                delivered: true,
            });
            return;
        }
        self.next_track += 1;
        let track = self.next_track;
        self.tracked.insert(
            track,
            Tracked {
                peer,
                tag,
                remaining: frames.len(),
                delivered: true,
            },
        );
        for frame in frames {
            self.send(peer, frame, Some(track));
        }
    }

    /// Why a frame for `peer` cannot be sent at all, if it cannot.
    pub(super) fn refusal(&self, peer: &PeerId, len: usize) -> Option<SendFailure> {
        if len as u64 > u64::from(self.max_frame_bytes) {
            Some(SendFailure::TooLarge {
                len: len as u64,
                max: self.max_frame_bytes,
            })
        } else if !self.friends.contains_key(peer) {
            Some(SendFailure::NotFriend)
        } else if !self.swarm.is_connected(peer) {
            Some(SendFailure::NotConnected)
        } else {
            None
        }
    }

    pub(super) fn send(&mut self, peer: PeerId, frame: Vec<u8>, track: Option<u64>) {
        if let Some(reason) = self.refusal(&peer, frame.len()) {
            tracing::debug!(%peer, ?reason, "frame not sent");
            self.frame_failed(peer, track, reason);
            return;
        }
        if !self.held.is_empty() {
            // Behind a held frame (the rest of one tracked group): keep order.
            self.held.push_back((peer, frame, track));
            return;
        }
        let swarm = &mut self.swarm;
        if let Err(QueueFull(frame)) = self.outbox.offer_tracked(&peer, frame, track, |f| {
            swarm.behaviour_mut().send_frame(&peer, f)
        }) {
            tracing::debug!(%peer, "friend's queue is full; holding the frame");
            self.held.push_back((peer, frame, track));
        }
    }

    /// Hands held frames to the outbox while they fit; fails those whose
    /// friend is gone.
    pub(super) fn retry_held(&mut self) {
        while let Some((peer, frame, track)) = self.held.pop_front() {
            if let Some(reason) = self.refusal(&peer, frame.len()) {
                self.frame_failed(peer, track, reason);
                continue;
            }
            let swarm = &mut self.swarm;
            if let Err(QueueFull(frame)) = self.outbox.offer_tracked(&peer, frame, track, |f| {
                swarm.behaviour_mut().send_frame(&peer, f)
            }) {
                self.held.push_front((peer, frame, track));
                return;
            }
            if self.held.is_empty() {
                tracing::debug!(%peer, "held frames sent; taking commands again");
            }
        }
    }

    /// A frame ended without acknowledgement.
    pub(super) fn frame_failed(&mut self, peer: PeerId, track: Option<u64>, reason: SendFailure) {
        match track {
            Some(track) => self.frame_ended(track, false),
            None => self.emit(MeshEvent::SendFailed { peer, reason }),
        }
    }

    /// One frame of tracked group `track` ended; the group is reported once
    /// all have.
    pub(super) fn frame_ended(&mut self, track: u64, ok: bool) {
        let Some(t) = self.tracked.get_mut(&track) else {
            return;
        };
        t.remaining = t.remaining.saturating_sub(1);
        t.delivered &= ok;
        if t.remaining == 0
            && let Some(t) = self.tracked.remove(&track)
        {
            self.emit(MeshEvent::FrameDone {
                peer: t.peer,
                tag: t.tag,
                delivered: t.delivered,
            });
        }
    }

    /// A request ended: free its slot and send the peer's next queued
    /// frame. Returns whether it was ours, and its tracking key.
    pub(super) fn request_finished(
        &mut self,
        id: OutboundRequestId,
        ok: bool,
    ) -> Option<Option<u64>> {
        let swarm = &mut self.swarm;
        let (_, track) = self
            .outbox
            .finished_tracked(&id, |peer, f| swarm.behaviour_mut().send_frame(peer, f))?;
        if let Some(track) = track {
            self.frame_ended(track, ok);
        }
        Some(track)
    }

    pub(super) fn on_frames_event(&mut self, event: request_response::Event<Frame, Vec<u8>>) {
        match event {
            request_response::Event::Message {
                peer,
                message:
                    Message::Request {
                        request, channel, ..
                    },
                ..
            } => {
                if !self.friends.contains_key(&peer) {
                    // Removed while the frame was in transit: not delivered,
                    // not acknowledged.
                    tracing::warn!(%peer, "dropped a frame from a peer that is no longer a friend");
                    return;
                }
                match request {
                    Frame::Body(frame) => self.frame_in(peer, frame, channel),
                    Frame::Refused(reason) => {
                        // Dropping `channel` unanswered ends the stream.
                        tracing::warn!(%peer, %reason, "rejected a frame; stream dropped, connection kept");
                        self.emit(MeshEvent::FrameRejected { peer, reason });
                    }
                }
            }
            request_response::Event::Message {
                message: Message::Response { request_id, .. },
                ..
            } => {
                self.request_finished(request_id, true);
            }
            request_response::Event::OutboundFailure {
                peer,
                request_id,
                error,
                ..
            } => {
                if self.request_finished(request_id, false) == Some(None) {
                    tracing::debug!(%peer, %error, "frame not acknowledged");
                    self.emit(MeshEvent::SendFailed {
                        peer,
                        reason: SendFailure::from(&error),
                    });
                }
            }
            // Our acknowledgement could not be written (link closed, or we
            // dropped it on purpose for a refused frame): nothing to report.
            request_response::Event::InboundFailure { peer, error, .. } => {
                tracing::debug!(%peer, %error, "inbound frame stream ended");
            }
            request_response::Event::ResponseSent { .. } => {}
        }
    }
}
