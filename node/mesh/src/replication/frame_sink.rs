//! Where the engine's outputs go besides the database: the frames for the
//! mesh driver ([`FrameSink`]) and the counts of what was carried out
//! ([`Counters`]). Shared by [`super::engine_io`] and [`super::chunks`].

use crate::net::SendTag;

/// Where encoded frames go (the mesh driver, or a test's list). Both calls
/// may wait until the driver has room (they run on the database thread).
pub trait FrameSink {
    /// Queues one frame for `peer` (a peer id string).
    fn send_frame(&mut self, peer: &str, frame: Vec<u8>);
    /// Queues a group of frames for `peer` whose end is to be reported with
    /// `tag` (`MeshEvent::FrameDone`).
    fn send_tracked(&mut self, peer: &str, frames: Vec<Vec<u8>>, tag: SendTag);
    /// Whether frames wait in the sink for the loop to send them (the
    /// driver had no room): the writer's turn ends so that the loop, not
    /// the database writer, waits for the driver (`engine_io`).
    fn holds_frames(&self) -> bool {
        false
    }
}

/// The frames a sink set aside during a turn on the writer, sent by the
/// loop between turns, in order and before the next turn's.
pub trait HeldFrames {
    /// Sends what the sink holds, waiting for the driver as long as needed.
    fn send_held(&mut self) -> impl std::future::Future<Output = ()> + Send;
}

/// Counters kept for the log and the shutdown line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counters {
    /// Items accepted from friends (stored and merged).
    pub accepted: u64,
    /// Copies of items already held.
    pub duplicates: u64,
    /// Items refused (bad signature, not from author, withdrawn, ...).
    pub rejected: u64,
    /// Of those, items refused because their author was over its quota.
    pub over_quota: u64,
    /// Frames handed to the sink.
    pub frames_sent: u64,
    /// Their bytes (wire messages, before transport framing and encryption).
    pub bytes_sent: u64,
    /// Row ids of notes merged since the loop last took them: the loop
    /// turns them into the cognitive core's wake-up events.
    pub merged_notes: Vec<i64>,
    /// Memory versions storage refused as pruned since the loop last took
    /// them (a device that was away offered them back): the loop makes the
    /// engine forget them. At most one write run's items.
    pub refused_pruned: Vec<porfiry_protocol::ItemId>,
}
