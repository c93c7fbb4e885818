//! Sending a catch-up session's items under flow control, in the style of
//! quinn's `poll_transmit`: once reconciliation has named what the friend
//! lacks, the engine keeps a cursor over that list and hands the driver one
//! chunk at a time (`Output::SendChunk`, about `chunk_bytes` of envelopes
//! and at most `chunk_items` ids, which the driver loads from storage as
//! one page). At most
//! `max_chunks_in_flight` chunks are out at once; the next leaves only when
//! the driver reports one drained (`Input::ItemsDrained`). So neither the
//! payloads nor the frames of a whole difference are ever held at once,
//! and the driver's bounded queue is never overrun. `SyncDone`, with the
//! number of envelopes the driver really sent, follows the last chunk's
//! drain, so it cannot overtake the items it counts. A chunk that failed
//! (the link broke) aborts the session; the next resync starts over.

use std::collections::BTreeMap;

use super::Engine;
use super::output::{Event, Output, SyncRole};
use super::sync::{abort_message, sync_aborted};
use crate::wire::{Announce, WireMessage};

/// The sending half of a session we started, after reconciliation.
#[derive(Debug)]
pub(super) struct SendCursor {
    pub(super) id: u64,
    /// What the friend lacks, in the order found.
    items: Vec<Announce>,
    /// The first item not yet handed to the driver.
    next: usize,
    next_chunk: u32,
    /// Chunks handed out and not yet drained, with where each starts in
    /// `items`.
    in_flight: BTreeMap<u32, usize>,
    /// Envelopes the driver reported sent.
    sent: u32,
    /// Last progress (start or a drained chunk), for the idle timeout.
    pub(super) last_ms: u64,
}

impl Engine {
    /// Reconciliation with `peer` found `items` to send: start handing them
    /// out chunk by chunk.
    pub(super) fn begin_sending(
        &mut self,
        now_ms: u64,
        peer: &str,
        session: u64,
        items: Vec<Announce>,
        out: &mut Vec<Output>,
    ) {
        self.sync.sending.insert(
            peer.to_owned(),
            SendCursor {
                id: session,
                items,
                next: 0,
                next_chunk: 0,
                in_flight: BTreeMap::new(),
                sent: 0,
                last_ms: now_ms,
            },
        );
        self.pump_chunks(peer, out);
    }

    /// Hands out chunks while the window allows; after the last chunk has
    /// drained, sends `SyncDone` and ends the session.
    fn pump_chunks(&mut self, peer: &str, out: &mut Vec<Output>) {
        let chunk_items = self.cfg.chunk_items.max(1);
        let chunk_bytes = self.cfg.chunk_bytes;
        let window = self.cfg.max_chunks_in_flight.max(1);
        let Some(c) = self.sync.sending.get_mut(peer) else {
            return;
        };
        while c.in_flight.len() < window && c.next < c.items.len() {
            let start = c.next;
            // Up to `chunk_items` ids, closed by the item that reaches
            // `chunk_bytes`. Items withdrawn or expired since
            // reconciliation stay home.
            let mut items: Vec<Announce> = Vec::new();
            let mut bytes = 0usize;
            while c.next < c.items.len() && items.len() < chunk_items && bytes < chunk_bytes {
                let a = c.items[c.next];
                c.next += 1;
                if let Some(meta) = self.index.get(&a.id) {
                    bytes = bytes.saturating_add(meta.envelope_bytes as usize);
                    items.push(a);
                }
            }
            if items.is_empty() {
                continue;
            }
            let chunk = c.next_chunk;
            c.next_chunk += 1;
            c.in_flight.insert(chunk, start);
            out.push(Output::SendChunk {
                peer: peer.to_owned(),
                session: c.id,
                chunk,
                items,
            });
        }
        if c.next >= c.items.len() && c.in_flight.is_empty() {
            let (session, sent) = (c.id, c.sent);
            self.sync.sending.remove(peer);
            out.push(Output::Send {
                peer: peer.to_owned(),
                message: WireMessage::SyncDone { session, sent },
            });
            out.push(Output::Event(Event::SyncFinished {
                peer: peer.to_owned(),
                session,
                role: SyncRole::Initiator,
                items: sent as usize,
            }));
        }
    }

    /// The driver reports a chunk's frames gone.
    #[allow(clippy::too_many_arguments)] // the fields of Input::ItemsDrained
    pub(super) fn on_items_drained(
        &mut self,
        now_ms: u64,
        peer: &str,
        session: u64,
        chunk: u32,
        sent: u32,
        delivered: bool,
        out: &mut Vec<Output>,
    ) {
        let Some(c) = self.sync.sending.get_mut(peer).filter(|c| c.id == session) else {
            // A session already ended (aborted, disconnected): nothing to do.
            return;
        };
        let Some(start) = c.in_flight.remove(&chunk) else {
            return;
        };
        c.sent = c.sent.saturating_add(sent);
        c.last_ms = now_ms;
        if !delivered {
            c.in_flight.insert(chunk, start);
            if let Some(c) = self.sync.sending.remove(peer) {
                self.offers_unconfirmed(peer, &c);
            }
            out.push(abort_message(peer, session, &"items not delivered"));
            out.push(sync_aborted(
                peer,
                session,
                SyncRole::Initiator,
                "items not delivered",
            ));
            return;
        }
        self.pump_chunks(peer, out);
    }

    /// Drops the sending half of `peer`'s session (disconnect, abort, idle),
    /// reporting why.
    pub(super) fn drop_sending(
        &mut self,
        peer: &str,
        session: Option<u64>,
        reason: &str,
        tell_friend: bool,
        out: &mut Vec<Output>,
    ) {
        let matches = self
            .sync
            .sending
            .get(peer)
            .is_some_and(|c| session.is_none_or(|s| s == c.id));
        if !matches {
            return;
        }
        if let Some(c) = self.sync.sending.remove(peer) {
            self.offers_unconfirmed(peer, &c);
            if tell_friend {
                out.push(abort_message(peer, c.id, &reason));
            }
            out.push(sync_aborted(peer, c.id, SyncRole::Initiator, reason));
        }
    }

    /// A session ended before all its chunks drained: what it may not have
    /// delivered (from the first chunk not known drained to the end) is
    /// owed a hop check. The friend may get those items by a longer path
    /// meanwhile, with fewer hops than ours; the next session's hop check
    /// then gives it ours (`hops_check`), as for a lost live offer.
    fn offers_unconfirmed(&mut self, peer: &str, c: &SendCursor) {
        let from = c.in_flight.values().min().copied().unwrap_or(c.next);
        for a in &c.items[from.min(c.items.len())..] {
            self.hop_checks.offered(peer, a.id);
        }
    }
}
