//! Serving catch-up sessions that friends start toward us (we receive).
//!
//! A node serves one incoming session at a time and queues the rest, so a
//! node coming back to several friends is filled by one before the next
//! looks at what it still lacks: each missed item arrives once. A session
//! ends when its `SyncDone` count of items has arrived, on abort, on
//! disconnect, or when it stalls (see `sync_timers`).

use negentropy::{Id, NegentropyStorageVector};

use super::Engine;
use super::output::{Event, Output, SyncRole};
use super::sync::{InSession, Queued, abort_message, abort_reason, reconciler, sync_aborted};
use crate::item::audience::Audience;
use crate::wire::WireMessage;

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
        match &mut self.sync.active {
            Some(a) if a.peer == peer && a.id == session => {
                a.last_ms = now_ms;
                match a.neg.reconcile(frame) {
                    Ok(reply) => out.push(Output::Send {
                        peer: peer.to_owned(),
                        message: WireMessage::SyncReply {
                            session,
                            frame: reply,
                        },
                    }),
                    Err(e) => {
                        out.push(abort_message(peer, session, &e));
                        self.end_active(now_ms, Some(abort_reason(e)), out);
                    }
                }
            }
            Some(a) if a.peer == peer => {
                // The friend started over: its old session is dead.
                self.end_active(now_ms, Some("replaced by a newer session".into()), out);
                self.queue_or_serve(now_ms, peer, session, frame, out);
            }
            _ => self.queue_or_serve(now_ms, peer, session, frame, out),
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
        if self.sync.active.is_none() {
            self.serve_next(now_ms, out);
        }
    }

    /// Serves the first queued session whose friend is still connected.
    fn serve_next(&mut self, now_ms: u64, out: &mut Vec<Output>) {
        self.serve_queued(now_ms, out);
        self.wants.set_hold(self.sync.active.is_some());
    }

    fn serve_queued(&mut self, now_ms: u64, out: &mut Vec<Output>) {
        while self.sync.active.is_none() {
            let Some(q) = self.sync.queue.pop_front() else {
                return;
            };
            if !self.peers.contains_key(&q.peer) {
                continue;
            }
            let mut storage = NegentropyStorageVector::new();
            for (id, meta) in self.index.iter() {
                // Anything this friend could send us: not ours, not expired,
                // public, or club if the friend is or was a member, unless
                // the friend wrote it (one-hop items come only from their
                // author). Not what it is known to lack (`lacks.rs`): its
                // set leaves those out too.
                let author = meta.author();
                let shared = match meta.audience() {
                    Audience::Public => true,
                    Audience::Club(c) => self.clubs.was_member(c, &q.peer),
                    _ => false,
                };
                let could_come = author != &*self.local
                    && !meta.expired(now_ms)
                    && (shared || author == q.peer)
                    && !self.lacks.contains(&q.peer, id);
                if could_come {
                    let _ = storage.insert(meta.created_ms, Id::from_byte_array(id.0));
                }
            }
            let answered = storage
                .seal()
                .and_then(|()| reconciler(storage))
                .and_then(|mut neg| {
                    let reply = neg.reconcile(&q.frame)?;
                    Ok((neg, reply))
                });
            match answered {
                Ok((neg, reply)) => {
                    // Its items may have reached us by a longer path since it
                    // connected: let it raise our hops (ids only).
                    self.announce_short_of_author(&q.peer, out);
                    self.sync.active = Some(InSession {
                        peer: q.peer.clone(),
                        id: q.id,
                        neg,
                        last_ms: now_ms,
                        expected: None,
                        received: 0,
                    });
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

    /// Ends the session we serve (finished, or with an abort reason) and
    /// serves the next in line.
    pub(super) fn end_active(&mut self, now_ms: u64, abort: Option<String>, out: &mut Vec<Output>) {
        let Some(a) = self.sync.active.take() else {
            return;
        };
        out.push(Output::Event(match abort {
            None => Event::SyncFinished {
                peer: a.peer,
                session: a.id,
                role: SyncRole::Responder,
                items: a.received,
            },
            Some(reason) => Event::SyncAborted {
                peer: a.peer,
                session: a.id,
                role: SyncRole::Responder,
                reason,
            },
        }));
        self.serve_next(now_ms, out);
    }

    pub(super) fn active_is(&self, peer: &str, session: u64) -> bool {
        self.sync
            .active
            .as_ref()
            .is_some_and(|a| a.peer == peer && a.id == session)
    }

    fn finish_if_complete(&mut self, now_ms: u64, out: &mut Vec<Output>) {
        let complete = self
            .sync
            .active
            .as_ref()
            .is_some_and(|a| a.expected.is_some_and(|e| a.received >= e as usize));
        if complete {
            self.end_active(now_ms, None, out);
        }
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
        if !self.active_is(peer, session) {
            return;
        }
        if let Some(a) = &mut self.sync.active {
            a.received += count;
            a.last_ms = now_ms;
        }
        self.finish_if_complete(now_ms, out);
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
        if !self.active_is(peer, session) {
            return;
        }
        if let Some(a) = &mut self.sync.active {
            a.expected = Some(sent);
            a.last_ms = now_ms;
        }
        self.finish_if_complete(now_ms, out);
    }
}
