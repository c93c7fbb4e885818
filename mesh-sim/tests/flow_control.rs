//! Why the simulator's links now have the real driver's window and queue
//! (`mesh_sim::link_queue`): over such a link, catch-up as it was — the
//! whole difference packed and queued at once — loses every frame past
//! 8 in flight + 16 MiB queued (the old driver's `QueueFull`), while the
//! flow-controlled engine, which hands out four chunks and the next only
//! after one drained, loses none and finishes in one session. Even with
//! the dropping policy of the old driver, nothing of the new one is
//! dropped: the pacing alone keeps it under the limits. Two real engines,
//! the real codec, 36 MB of 30 KB notes, a 10 Mbit/s link with latency.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use mesh_sim::link_queue::{BoundedPipe, Overflow};
use porfiry_protocol::engine::{Engine, EngineConfig, Event, Inbound, Input, Output, SyncRole};
use porfiry_protocol::item::body::{Body, Note};
use porfiry_protocol::wire::{self, WireItem, WireMessage};
use porfiry_protocol::{Audience, ItemId, ItemRecord, NodeKey, PayloadDraft, VerifiedItem, sign};

/// 1,200 notes of 30 KB: the 36 MB catch-up of issue 11.
const NOTES: usize = 1_200;
const NOTE_BYTES: usize = 30_000;
const T0: u64 = 1_750_000_000_000;
/// 10 Mbit/s is 10 kbit per ms.
const KBPS: u64 = 10_000;
const LATENCY_MS: u64 = 40;

fn transmit_ms(bytes: usize) -> u64 {
    (bytes as u64 * 8).div_ceil(KBPS)
}

fn key(n: u8) -> NodeKey {
    NodeKey::from_seed([n + 1; 32])
}

fn notes(author: &NodeKey) -> Vec<VerifiedItem> {
    (0..NOTES)
        .map(|i| {
            let mut text = format!("note {i} ");
            while text.len() < NOTE_BYTES {
                text.push_str("flow control keeps every item ");
            }
            text.truncate(NOTE_BYTES);
            let draft = PayloadDraft {
                created_ms: T0 - 1_000_000 + i as u64,
                audience: Audience::Friends,
                max_hops: 3,
                expires_ms: None,
                replaces: None,
                body: Body::Note(Note::by_user(text)),
            };
            sign(author, &draft).expect("signs")
        })
        .collect()
}

#[test]
fn the_whole_difference_at_once_overruns_the_driver_queue_and_loses_items() {
    let items = notes(&key(0));
    let frames = wire::pack_items(
        Some(1),
        items.iter().map(|x| WireItem {
            hops: 3,
            envelope: x.envelope_bytes().to_vec(),
        }),
    );
    let mut pipe = BoundedPipe::new(Overflow::Drop, false);
    let mut lost_items = 0;
    for m in &frames {
        let bytes = wire::encode(m).expect("encodes");
        if pipe
            .offer(0, bytes.len(), transmit_ms(bytes.len()), LATENCY_MS)
            .is_err()
            && let WireMessage::Items { items, .. } = m
        {
            lost_items += items.len();
        }
    }
    assert!(
        lost_items > NOTES / 10,
        "the old way loses a good part of the difference: {lost_items}"
    );
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// A frame reaches node `to`.
    Deliver { to: usize, bytes: Vec<u8> },
    /// Node 0's chunk drained (its frames acknowledged).
    Drained { session: u64, chunk: u32, sent: u32 },
}

struct Run {
    engines: [Engine; 2],
    /// Pipes 0→1 and 1→0, with the old driver's dropping policy.
    pipes: [BoundedPipe; 2],
    store: BTreeMap<ItemId, VerifiedItem>,
    queue: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    seq: u64,
    now: u64,
    dropped: usize,
    events: Vec<Event>,
}

impl Run {
    fn peer(n: usize) -> String {
        key(n as u8).peer_id().to_string()
    }

    fn schedule(&mut self, at: u64, ev: Ev) {
        self.seq += 1;
        self.queue.push(Reverse((at, self.seq, ev)));
    }

    /// Puts `message` from `from` on the link; its arrival, if not dropped.
    fn send(&mut self, from: usize, message: &WireMessage) -> Option<u64> {
        let bytes = wire::encode(message).expect("encodes");
        let arrival =
            self.pipes[from].offer(self.now, bytes.len(), transmit_ms(bytes.len()), LATENCY_MS);
        match arrival {
            Ok(at) => {
                self.schedule(
                    at,
                    Ev::Deliver {
                        to: 1 - from,
                        bytes,
                    },
                );
                Some(at)
            }
            Err(_) => {
                self.dropped += 1;
                None
            }
        }
    }

    fn input(&mut self, n: usize, input: Input) {
        let outputs = self.engines[n].handle(self.now, input);
        for o in outputs {
            match o {
                Output::Send { message, .. } => {
                    self.send(n, &message);
                }
                Output::SendChunk {
                    session,
                    chunk,
                    items,
                    ..
                } => {
                    let wire_items: Vec<WireItem> = items
                        .iter()
                        .map(|a| WireItem {
                            hops: a.hops,
                            envelope: self.store[&a.id].envelope_bytes().to_vec(),
                        })
                        .collect();
                    let (messages, sent) = wire::pack_chunk(Some(session), wire_items);
                    let mut last = self.now;
                    for m in &messages {
                        if let Some(at) = self.send(n, m) {
                            last = last.max(at);
                        }
                    }
                    // The acknowledgement of the last frame comes back.
                    self.schedule(
                        last + LATENCY_MS,
                        Ev::Drained {
                            session,
                            chunk,
                            sent,
                        },
                    );
                }
                Output::Event(e) => self.events.push(e),
                _ => {}
            }
        }
    }
}

#[test]
fn flow_controlled_catch_up_loses_nothing_over_the_same_link() {
    let items = notes(&key(0));
    let records: Vec<ItemRecord> = items.iter().map(|x| ItemRecord::of(x, 3, None)).collect();
    let mut run = Run {
        engines: [
            Engine::new(EngineConfig::new(Run::peer(0)), records),
            Engine::new(EngineConfig::new(Run::peer(1)), Vec::<ItemRecord>::new()),
        ],
        pipes: [
            BoundedPipe::new(Overflow::Drop, true),
            BoundedPipe::new(Overflow::Drop, true),
        ],
        store: items.into_iter().map(|x| (x.id(), x)).collect(),
        queue: BinaryHeap::new(),
        seq: 0,
        now: T0,
        dropped: 0,
        events: Vec::new(),
    };
    for (n, other) in [(1, 0), (0, 1)] {
        run.input(
            n,
            Input::PeerConnected {
                peer: Run::peer(other),
                groups: vec![],
            },
        );
    }
    while let Some(Reverse((at, _, ev))) = run.queue.pop() {
        run.now = at;
        match ev {
            Ev::Deliver { to, bytes } => {
                let message = wire::decode(&bytes).expect("decodes");
                let inbound = Inbound::from_wire(message, run.now);
                run.input(
                    to,
                    Input::Received {
                        peer: Run::peer(1 - to),
                        message: inbound,
                    },
                );
            }
            Ev::Drained {
                session,
                chunk,
                sent,
            } => run.input(
                0,
                Input::ItemsDrained {
                    peer: Run::peer(1),
                    session,
                    chunk,
                    sent,
                    delivered: true,
                },
            ),
        }
    }
    assert_eq!(run.dropped, 0, "nothing refused by the driver's queue");
    assert_eq!(run.engines[1].item_count(), NOTES, "every item arrived");
    let served: Vec<usize> = run
        .events
        .iter()
        .filter_map(|e| match e {
            Event::SyncFinished {
                role: SyncRole::Responder,
                items,
                ..
            } => Some(*items),
            _ => None,
        })
        .collect();
    assert_eq!(served, [NOTES], "in one session");
    assert!(
        !run.events
            .iter()
            .any(|e| matches!(e, Event::SyncAborted { .. })),
        "no session aborted"
    );
    // 36 MB at 10 Mbit/s is about 29 s: the pacing costs little of it.
    let took_ms = run.now - T0;
    assert!(took_ms < 60_000, "took {took_ms} ms");
}
