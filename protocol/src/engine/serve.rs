//! Serving catch-up sessions that friends start toward us (we receive).
//!
//! A node serves at most `max_served_sessions` incoming sessions at a time
//! and queues the rest. A phone serves one: coming back to several friends,
//! it is filled by one before the next looks at what it still lacks, so
//! each missed item arrives once. A server serves a few, so a thousand
//! phones reconnecting at once are not served one by one while the others'
//! sessions time out in the queue; the price is that two friends offering
//! the same missed item at the same moment both send it. A session ends
//! when its `SyncDone` count of items has arrived, on abort, on disconnect,
//! or when it stalls (see `sync_timers`).

use super::Engine;
use super::output::{Event, Output, SyncRole};
use super::sync::{InSession, Queued, abort_message, abort_reason, sync_aborted};
use crate::item::audience::Audience;
use crate::policy::device_could_come_from;
use crate::range_sync::{Reconciler, SyncSet};
use crate::wire::{SYNC_FRAME_BYTES, WireMessage};

impl Engine {
    /// A frame of a session a friend started toward us.
    pub(super) fn on_sync_query(
        &mut self,
        now_ms: u64,
        peer: &str,
        session: u64,
        frame: &[u8],
        out: &mut Vec<Output>,
    ) {
        match self.sync.active.get_mut(peer) {
            Some(a) if a.id == session => {
                a.last_ms = now_ms;
                match a.recon.reconcile(frame) {
                    Ok(reply) => out.push(Output::Send {
                        peer: peer.to_owned(),
                        message: WireMessage::SyncReply {
                            session,
                            frame: reply,
                        },
                    }),
                    Err(e) => {
                        out.push(abort_message(peer, session, &e));
                        self.end_active(now_ms, peer, Some(abort_reason(e)), out);
                    }
                }
            }
            Some(_) => {
                // The friend started over: its old session is dead.
                self.end_active(
                    now_ms,
                    peer,
                    Some("replaced by a newer session".into()),
                    out,
                );
                self.queue_or_serve(now_ms, peer, session, frame, out);
            }
            None => self.queue_or_serve(now_ms, peer, session, frame, out),
        }
    }

    fn queue_or_serve(
        &mut self,
        now_ms: u64,
        peer: &str,
        session: u64,
        frame: &[u8],
        out: &mut Vec<Output>,
    ) {
        self.sync.queue.retain(|q| q.peer != peer);
        self.sync.queue.push_back(Queued {
            peer: peer.to_owned(),
            id: session,
            frame: frame.to_vec(),
            at_ms: now_ms,
        });
        self.serve_next(now_ms, out);
    }

    /// Serves queued sessions whose friends are still connected, while
    /// there is room.
    fn serve_next(&mut self, now_ms: u64, out: &mut Vec<Output>) {
        self.serve_queued(now_ms, out);
        self.wants.set_hold(!self.sync.active.is_empty());
    }

    fn serve_queued(&mut self, now_ms: u64, out: &mut Vec<Output>) {
        while self.sync.active.len() < self.cfg.max_served_sessions.max(1) {
            let Some(q) = self.sync.queue.pop_front() else {
                return;
            };
            if !self.peers.contains_key(&q.peer) {
                continue;
            }
            let mut set = SyncSet::new();
            let lacking = self.lacks.of(&q.peer);
            let (local, friend) = (
                self.index.known_name(&self.local),
                self.index.known_name(&q.peer),
            );
            for (id, meta) in self.index.iter() {
                // Anything this friend could send us: not ours, not expired,
                // public, or club if the friend is or was a member, unless
                // the friend wrote it (one-hop items come only from their
                // author), devices if the friend and the author are our
                // devices. Not what it is known to lack (`lacks.rs`): its
                // set leaves those out too.
                let shared = match meta.audience() {
                    Audience::Public => true,
                    Audience::Club(c) => self.clubs.was_member(c, &q.peer),
                    Audience::Devices => {
                        device_could_come_from(&self.local, &meta.route(), &q.peer, &self.devices)
                            .is_ok()
                    }
                    _ => false,
                };
                let could_come = !meta.is_by(local)
                    && !meta.expired(now_ms)
                    && (shared || meta.is_by(friend))
                    && !lacking.is_some_and(|l| l.contains(id));
                if could_come {
                    set.insert(meta.created_ms, *id);
                }
            }
            // What we declined (over a quota, evicted) counts as held, or
            // the friend would send it again at every resync.
            for (created_ms, id) in self.declined_items() {
                set.insert(created_ms, id);
            }
            let mut recon = Reconciler::responder(set, SYNC_FRAME_BYTES);
            match recon.reconcile(&q.frame).map(|reply| (recon, reply)) {
                Ok((recon, reply)) => {
                    // Its items may have reached us by a longer path since it
                    // connected: let it raise our hops (ids only).
                    self.announce_short_of_author(&q.peer, out);
                    self.sync.active.insert(
                        q.peer.clone(),
                        InSession {
                            id: q.id,
                            recon,
                            last_ms: now_ms,
                            expected: None,
                            received: 0,
                        },
                    );
                    out.push(Output::Send {
                        peer: q.peer,
                        message: WireMessage::SyncReply {
                            session: q.id,
                            frame: reply,
                        },
                    });
                }
                Err(e) => {
                    out.push(abort_message(&q.peer, q.id, &e));
                    out.push(sync_aborted(&q.peer, q.id, SyncRole::Responder, e));
                }
            }
        }
    }

    /// Ends the session we serve for `peer` (finished, or with an abort
    /// reason) and serves the next in line.
    pub(super) fn end_active(
        &mut self,
        now_ms: u64,
        peer: &str,
        abort: Option<String>,
        out: &mut Vec<Output>,
    ) {
        let Some(a) = self.sync.active.remove(peer) else {
            return;
        };
        out.push(Output::Event(match abort {
            None => Event::SyncFinished {
                peer: peer.to_owned(),
                session: a.id,
                role: SyncRole::Responder,
                items: a.received,
            },
            Some(reason) => Event::SyncAborted {
                peer: peer.to_owned(),
                session: a.id,
                role: SyncRole::Responder,
                reason,
            },
        }));
        self.serve_next(now_ms, out);
    }

    pub(super) fn active_is(&self, peer: &str, session: u64) -> bool {
        self.sync.active.get(peer).is_some_and(|a| a.id == session)
    }

    /// `count` envelopes of session `session` arrived from `peer`.
    pub(super) fn sync_items_received(
        &mut self,
        now_ms: u64,
        peer: &str,
        session: u64,
        count: usize,
        out: &mut Vec<Output>,
    ) {
        self.served_progress(now_ms, peer, session, out, |a| a.received += count);
    }

    /// The initiator says how many items it sent for the session.
    pub(super) fn on_sync_done(
        &mut self,
        now_ms: u64,
        peer: &str,
        session: u64,
        sent: u32,
        out: &mut Vec<Output>,
    ) {
        self.served_progress(now_ms, peer, session, out, |a| a.expected = Some(sent));
    }

    /// Applies `step` to the session we serve for `peer` if it is
    /// `session`, and ends it once its `SyncDone` count has arrived.
    fn served_progress(
        &mut self,
        now_ms: u64,
        peer: &str,
        session: u64,
        out: &mut Vec<Output>,
        step: impl FnOnce(&mut InSession),
    ) {
        let Some(a) = self.sync.active.get_mut(peer).filter(|a| a.id == session) else {
            return;
        };
        step(a);
        a.last_ms = now_ms;
        if a.expected.is_some_and(|e| a.received >= e as usize) {
            self.end_active(now_ms, peer, None, out);
        }
    }
}
