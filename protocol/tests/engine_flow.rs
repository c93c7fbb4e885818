//! Flow-controlled catch-up: once reconciliation has named what the friend
//! lacks, the initiator hands its driver at most `MAX_CHUNKS_IN_FLIGHT`
//! chunks of at most `chunk_items` items and about `chunk_bytes` of
//! envelopes, the next only after one drained
//! (`Input::ItemsDrained`), and `SyncDone` (counting what the driver really
//! sent) only after the last. Both sides time out on idleness, never on a
//! session that keeps moving. Two real engines, the real codec, a fake clock;
//! the test plays the driver and decides when chunks drain.

mod engine_support;

use std::collections::{BTreeMap, BTreeSet};

use engine_support::*;
use porfiry_protocol::engine::{
    CHUNK_BYTES, CHUNK_ITEMS, Engine, EngineConfig, Event, Input, MAX_CHUNKS_IN_FLIGHT, Output,
    RESYNC_INTERVAL_MS, SYNC_SESSION_TIMEOUT_MS, SYNC_STALL_MS, SyncRole,
};
use porfiry_protocol::wire::{self, Announce, WireItem, WireMessage};
use porfiry_protocol::{Audience, ItemId, ItemRecord, VerifiedItem};

const T0: u64 = 1_700_000_000_000;

/// Items per chunk in these tests (the engine's `chunk_items`), with no
/// byte limit, so the counts below are exact whatever the notes' sizes.
const CHUNK: usize = 16;

/// A's settings: chunks of `CHUNK` items, cut by bytes at `chunk_bytes`.
fn sender_config(chunk_bytes: usize) -> EngineConfig {
    EngineConfig {
        chunk_items: CHUNK,
        chunk_bytes,
        ..config(&peer(0))
    }
}

/// A chunk handed to the driver and not yet drained.
#[derive(Debug, Clone)]
struct Chunk {
    session: u64,
    chunk: u32,
    items: Vec<Announce>,
}

/// A (sender, holding `n` notes) and B (empty receiver), connected; the
/// test moves messages and decides when chunks drain.
struct Pair {
    a: Engine,
    b: Engine,
    store: BTreeMap<ItemId, VerifiedItem>,
    now: u64,
    /// Chunks A handed out, in order, not yet drained.
    out: Vec<Chunk>,
    /// Every `SyncDone` A sent, and every event either side gave.
    done: Vec<(u64, u32)>,
    events: Vec<Event>,
    aborts_to_b: usize,
    /// Every id A announced to B in a `Have`, with its hops.
    haves: Vec<Announce>,
}

impl Pair {
    fn new(n: usize) -> Pair {
        Pair::of(n, Audience::Friends, 0)
    }

    /// A holds `n` notes for `audience` by node `author` (A itself is 0;
    /// another author's notes came to A from that author).
    fn of(n: usize, audience: Audience, author: usize) -> Pair {
        Pair::with(sender_config(usize::MAX), n, audience, author, 0)
    }

    /// Like [`Pair::of`], A running with `a_config`, each note's text
    /// padded to at least `text_len` bytes.
    fn with(
        a_config: EngineConfig,
        n: usize,
        audience: Audience,
        author: usize,
        text_len: usize,
    ) -> Pair {
        let key = key(author);
        let items: Vec<VerifiedItem> = (0..n)
            .map(|i| {
                note(
                    &key,
                    T0 - 10_000 + i as u64,
                    audience.clone(),
                    3,
                    &format!("n{i:<text_len$}"),
                )
            })
            .collect();
        let from = (author != 0).then(|| peer(author));
        let records: Vec<ItemRecord> = items
            .iter()
            .map(|x| ItemRecord::of(x, 3, from.clone()))
            .collect();
        let mut pair = Pair {
            a: Engine::new(a_config, records),
            b: Engine::new(config(&peer(1)), Vec::<ItemRecord>::new()),
            store: items.into_iter().map(|x| (x.id(), x)).collect(),
            now: T0,
            out: Vec::new(),
            done: Vec::new(),
            events: Vec::new(),
            aborts_to_b: 0,
            haves: Vec::new(),
        };
        let to_a = pair.b.handle(
            T0,
            Input::PeerConnected {
                peer: peer(0),
                groups: vec![],
            },
        );
        let to_b = pair.a.handle(
            T0,
            Input::PeerConnected {
                peer: peer(1),
                groups: vec![],
            },
        );
        pair.route_b(to_a);
        pair.route_a(to_b);
        pair
    }

    /// Carries out A's outputs: messages to B, chunks kept for the test.
    fn route_a(&mut self, outputs: Vec<Output>) {
        for o in outputs {
            match o {
                Output::Send { message, .. } => {
                    match &message {
                        WireMessage::SyncDone { session, sent } => {
                            self.done.push((*session, *sent));
                        }
                        WireMessage::SyncAbort { .. } => self.aborts_to_b += 1,
                        WireMessage::Have { items } => self.haves.extend(items.iter().copied()),
                        _ => {}
                    }
                    let inbound = over_wire(&message, self.now);
                    let back = self.b.handle(
                        self.now,
                        Input::Received {
                            peer: peer(0),
                            message: inbound,
                        },
                    );
                    self.route_b(back);
                }
                Output::SendChunk {
                    session,
                    chunk,
                    items,
                    ..
                } => self.out.push(Chunk {
                    session,
                    chunk,
                    items,
                }),
                Output::Event(e) => self.events.push(e),
                _ => {}
            }
        }
    }

    /// Carries out B's outputs: messages to A.
    fn route_b(&mut self, outputs: Vec<Output>) {
        for o in outputs {
            match o {
                Output::Send { message, .. } => {
                    let inbound = over_wire(&message, self.now);
                    let back = self.a.handle(
                        self.now,
                        Input::Received {
                            peer: peer(1),
                            message: inbound,
                        },
                    );
                    self.route_a(back);
                }
                Output::Event(e) => self.events.push(e),
                _ => {}
            }
        }
    }

    /// Delivers chunk `i` of those out (its frames reach B), then tells A
    /// it drained, reporting `sent` envelopes (all of them if `None`).
    fn drain(&mut self, i: usize, sent: Option<u32>, delivered: bool) {
        let c = self.out.remove(i);
        let wire_items: Vec<WireItem> = c
            .items
            .iter()
            .map(|a| WireItem {
                hops: a.hops,
                envelope: self.store[&a.id].envelope_bytes().to_vec(),
            })
            .collect();
        let (messages, packed) = wire::pack_chunk(Some(c.session), wire_items);
        if delivered {
            for m in &messages {
                let inbound = over_wire(m, self.now);
                let back = self.b.handle(
                    self.now,
                    Input::Received {
                        peer: peer(0),
                        message: inbound,
                    },
                );
                self.route_b(back);
            }
        }
        let out = self.a.handle(
            self.now,
            Input::ItemsDrained {
                peer: peer(1),
                session: c.session,
                chunk: c.chunk,
                sent: sent.unwrap_or(packed),
                delivered,
            },
        );
        self.route_a(out);
    }

    fn tick(&mut self, at: u64) {
        self.now = at;
        let out = self.a.handle(at, Input::Tick);
        self.route_a(out);
        let out = self.b.handle(at, Input::Tick);
        self.route_b(out);
    }

    fn finished(&self, role: SyncRole) -> Vec<usize> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::SyncFinished { role: r, items, .. } if *r == role => Some(*items),
                _ => None,
            })
            .collect()
    }

    fn aborted(&self) -> usize {
        self.events
            .iter()
            .filter(|e| matches!(e, Event::SyncAborted { .. }))
            .count()
    }
}

#[test]
fn at_most_four_chunks_are_out_until_one_drains_and_sync_done_follows_the_last() {
    let n = 5 * CHUNK - 5;
    let mut p = Pair::new(n);
    assert_eq!(p.out.len(), MAX_CHUNKS_IN_FLIGHT, "the window, no more");
    assert!(p.out.iter().all(|c| c.items.len() == CHUNK));
    assert!(p.done.is_empty(), "no SyncDone while items are out");
    p.drain(0, None, true);
    assert_eq!(
        p.out.len(),
        MAX_CHUNKS_IN_FLIGHT,
        "one drained, one more out"
    );
    assert_eq!(p.out.last().unwrap().items.len(), CHUNK - 5);
    for _ in 0..MAX_CHUNKS_IN_FLIGHT - 1 {
        p.drain(0, None, true);
        assert!(p.done.is_empty(), "SyncDone waits for the last chunk");
    }
    assert_eq!(p.out.len(), 1);
    p.drain(0, None, true);
    assert!(p.out.is_empty());
    assert_eq!(p.done.len(), 1);
    assert_eq!(p.done[0].1 as usize, n);
    assert_eq!(p.finished(SyncRole::Initiator), [n]);
    assert_eq!(p.finished(SyncRole::Responder), [n], "B got every item");
    assert_eq!(p.b.item_count(), n);
    assert_eq!(p.aborted(), 0);
}

#[test]
fn a_chunk_closes_at_the_item_that_reaches_chunk_bytes() {
    // Every note here has the same envelope size; a limit of two and a
    // half envelopes closes each chunk at its third item.
    let probe = Pair::of(1, Audience::Friends, 0);
    let size = probe.store.values().next().unwrap().envelope_bytes().len();
    let mut p = Pair::with(sender_config(size * 5 / 2), 10, Audience::Friends, 0, 0);
    let sizes: Vec<usize> = p.out.iter().map(|c| c.items.len()).collect();
    assert_eq!(sizes, [3, 3, 3, 1], "three per chunk, then the rest");
    while !p.out.is_empty() {
        p.drain(0, None, true);
    }
    assert_eq!(p.b.item_count(), 10);
    assert_eq!(p.finished(SyncRole::Responder), [10]);
}

#[test]
fn default_chunks_are_cut_by_bytes_before_items_for_large_notes() {
    // 30 KB notes, as in the 72 MB catch-up: the byte limit binds
    // long before the item limit.
    let config = EngineConfig {
        chunk_items: CHUNK_ITEMS,
        chunk_bytes: CHUNK_BYTES,
        ..config(&peer(0))
    };
    let text = 30_000;
    let mut p = Pair::with(config, 40, Audience::Friends, 0, text);
    let size = p.store.values().next().unwrap().envelope_bytes().len();
    assert!(size > text);
    let per_chunk = CHUNK_BYTES.div_ceil(size);
    assert!(per_chunk < CHUNK_ITEMS);
    let sizes: Vec<usize> = p.out.iter().map(|c| c.items.len()).collect();
    assert_eq!(sizes, [per_chunk; MAX_CHUNKS_IN_FLIGHT]);
    while !p.out.is_empty() {
        p.drain(0, None, true);
    }
    assert_eq!(p.b.item_count(), 40);
}

#[test]
fn chunks_may_drain_out_of_order() {
    let mut p = Pair::new(3 * CHUNK);
    assert_eq!(p.out.len(), 3);
    p.drain(2, None, true);
    p.drain(0, None, true);
    assert!(p.done.is_empty());
    p.drain(0, None, true);
    assert_eq!(p.done.len(), 1);
    assert_eq!(p.b.item_count(), 3 * CHUNK);
    assert_eq!(p.finished(SyncRole::Responder), [3 * CHUNK]);
}

#[test]
fn sync_done_counts_what_the_driver_reports_sent() {
    let mut p = Pair::new(2 * CHUNK);
    p.drain(0, Some(10), true);
    p.drain(0, Some(5), true);
    assert_eq!(p.done.len(), 1);
    assert_eq!(p.done[0].1, 15);
    assert_eq!(p.finished(SyncRole::Initiator), [15]);
}

#[test]
fn an_undelivered_chunk_aborts_the_session_and_later_drains_change_nothing() {
    let mut p = Pair::new(6 * CHUNK);
    p.drain(0, None, true);
    p.drain(0, None, false);
    assert_eq!(p.aborts_to_b, 1, "the friend is told");
    assert!(p.events.iter().any(|e| matches!(
        e,
        Event::SyncAborted {
            role: SyncRole::Initiator,
            reason,
            ..
        } if reason.contains("not delivered")
    )));
    let left = p.out.len();
    p.drain(0, None, true);
    assert_eq!(p.out.len(), left - 1, "no new chunk for a dead session");
    assert!(p.done.is_empty(), "no SyncDone for it either");
}

#[test]
fn items_of_an_undelivered_chunk_get_the_next_sessions_hop_check() {
    // Public items A relays (not its own: the author's short copies have a
    // repair of their own): the friend may get them by a longer path, with
    // fewer hops than ours, while our chunk is lost.
    let mut p = Pair::of(2 * CHUNK, Audience::Public, 9);
    let lost: Vec<ItemId> = p.out[1].items.iter().map(|a| a.id).collect();
    p.drain(0, None, true);
    p.drain(0, None, false);
    assert_eq!(p.aborts_to_b, 1);
    // The lost chunk's items reach B another way, with no hops left to give.
    let short: Vec<WireItem> = lost
        .iter()
        .map(|id| WireItem {
            hops: 1,
            envelope: p.store[id].envelope_bytes().to_vec(),
        })
        .collect();
    let (frames, _) = wire::pack_chunk(None, short);
    let b_out = p.b.handle(
        p.now,
        Input::PeerConnected {
            peer: peer(2),
            groups: vec![],
        },
    );
    drop(b_out);
    for m in &frames {
        let inbound = over_wire(m, p.now);
        let _ = p.b.handle(
            p.now,
            Input::Received {
                peer: peer(2),
                message: inbound,
            },
        );
    }
    assert_eq!(p.b.item_count(), 2 * CHUNK);
    assert!(p.haves.is_empty());
    // The next resync finds nothing missing, and offers B our hops for
    // exactly the items the lost chunk carried.
    p.tick(p.now + RESYNC_INTERVAL_MS + 1);
    let offered: BTreeSet<ItemId> = p.haves.iter().map(|a| a.id).collect();
    let lost: BTreeSet<ItemId> = lost.into_iter().collect();
    assert_eq!(offered, lost);
    assert!(p.haves.iter().all(|a| a.hops == 3));
    let raised: BTreeSet<ItemId> = p
        .events
        .iter()
        .filter_map(|e| match e {
            Event::HopsRaised { id, .. } => Some(*id),
            _ => None,
        })
        .collect();
    assert_eq!(raised, lost, "B takes our hops for each of them");
}

#[test]
fn a_session_that_keeps_draining_outlives_the_idle_timeouts() {
    let mut p = Pair::new(8 * CHUNK);
    // One chunk drains just inside each idle timeout: the session lasts
    // far longer than either timeout, and neither side gives up.
    let step = SYNC_SESSION_TIMEOUT_MS.min(SYNC_STALL_MS) - 1;
    let mut at = T0;
    while !p.out.is_empty() {
        at += step;
        p.tick(at);
        p.drain(0, None, true);
    }
    assert!(at - T0 > SYNC_SESSION_TIMEOUT_MS + SYNC_STALL_MS);
    assert_eq!(p.aborted(), 0, "{:?}", p.events);
    assert_eq!(p.b.item_count(), 8 * CHUNK);
    assert_eq!(p.finished(SyncRole::Responder), [8 * CHUNK]);
}

#[test]
fn a_session_whose_chunks_stop_draining_times_out_on_both_sides() {
    let mut p = Pair::new(8 * CHUNK);
    p.drain(0, None, true);
    p.tick(T0 + SYNC_SESSION_TIMEOUT_MS - 1);
    assert_eq!(p.aborted(), 0);
    p.tick(T0 + SYNC_SESSION_TIMEOUT_MS.max(SYNC_STALL_MS));
    let initiator = p.events.iter().any(|e| {
        matches!(e, Event::SyncAborted { role: SyncRole::Initiator, reason, .. } if reason == "timed out")
    });
    let responder = p.events.iter().any(|e| {
        matches!(
            e,
            Event::SyncAborted {
                role: SyncRole::Responder,
                ..
            }
        )
    });
    assert!(initiator && responder, "{:?}", p.events);
}
