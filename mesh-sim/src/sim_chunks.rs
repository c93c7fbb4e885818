//! The simulator's part in flow-controlled catch-up: a `SendChunk` is
//! packed from the node's store into frames put on the link like any other
//! message, and the engine hears `ItemsDrained` when the last of them
//! arrives, as the real driver reports `FrameDone` when its frames are
//! acknowledged. A frame lost or cut makes the chunk undelivered (the real
//! driver's request fails), which ends the session; the next resync
//! starts over.

use porfiry_protocol::engine::Input;
use porfiry_protocol::wire::{self, Announce};

use super::Sim;
use crate::queue::Ev;

impl Sim<'_> {
    /// Carries out `Output::SendChunk` for node `n`.
    pub(super) fn send_chunk(
        &mut self,
        n: usize,
        peer: &str,
        session: u64,
        chunk: u32,
        items: &[Announce],
    ) {
        let wire_items = self.nodes[n].wire_items(items);
        let (messages, sent) = wire::pack_chunk(Some(session), wire_items);
        let Some(&to) = self.by_peer.get(peer) else {
            return;
        };
        let mut delivered = true;
        let mut last = self.now;
        for m in &messages {
            match self.send(n, peer, m) {
                Some(arrival) => last = last.max(arrival),
                None => delivered = false,
            }
        }
        self.schedule(
            last,
            Ev::Drained {
                node: n,
                to,
                session,
                chunk,
                sent,
                delivered,
            },
        );
    }

    /// The driver's `FrameDone` for a chunk: tell the sending engine.
    pub(super) fn drained(
        &mut self,
        node: usize,
        to: usize,
        session: u64,
        chunk: u32,
        sent: u32,
        delivered: bool,
    ) {
        let peer = self.world.peers[to].clone();
        self.input(
            node,
            Input::ItemsDrained {
                peer,
                session,
                chunk,
                sent,
                delivered,
            },
        );
    }
}
