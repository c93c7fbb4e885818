//! The simulator's links as the real driver runs them: each direction of a
//! connection is a [`BoundedPipe`] with the driver's window (8 frames) and
//! queue (16 MiB), holding what does not fit as the driver does, with the
//! scenario's bandwidth, latency, loss and (if asked) reordering.

use super::Sim;
use crate::link::LinkModel;
use crate::link_queue::{BoundedPipe, Overflow};

/// Fresh pipes for a connection that just came up.
pub(super) fn fresh_pipes(model: &LinkModel) -> [BoundedPipe; 2] {
    let pipe = BoundedPipe::new(Overflow::Hold, model.reorder());
    [pipe.clone(), pipe]
}

/// Puts a frame of `bytes` on `pipe` at `now`; its arrival time (`None`
/// only under [`Overflow::Drop`], which the simulator does not use).
pub(super) fn offer(
    pipe: &mut BoundedPipe,
    now: u64,
    model: &LinkModel,
    bytes: usize,
    latency_ms: u64,
) -> Option<u64> {
    pipe.offer(now, bytes, model.transmit_ms(bytes), latency_ms)
        .ok()
}

impl Sim<'_> {
    /// The link model between nodes `a` and `b` (a phone's if either is).
    pub(super) fn link_model(&self, a: usize, b: usize) -> &LinkModel {
        if self.world.phones[a] || self.world.phones[b] {
            &self.phone_link
        } else {
            &self.server_link
        }
    }
}
