//! The in-test network: engines joined by friend links with latencies, a
//! queue of timed events, link drops and node churn, and counters of the
//! payload copies and bytes delivered. It carries out every engine output
//! the way a real driver does (see `engine_support` and docs/wire.md).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

use porfiry_protocol::ItemRecord;
use porfiry_protocol::devices::DeviceBook;
use porfiry_protocol::engine::{Engine, EngineConfig, Inbound, Input, Output};
use porfiry_protocol::wire::{self, WireItem, WireMessage};
use porfiry_protocol::{Audience, ItemId, NodeKey, VerifiedItem};

use super::key;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Deliver {
        to: usize,
        from: usize,
        epoch: u64,
        bytes: Vec<u8>,
    },
    Wake {
        node: usize,
        at: u64,
    },
    /// A chunk's frames arrived (or their link dropped): tell the sender.
    Drained {
        node: usize,
        to: usize,
        epoch: u64,
        session: u64,
        chunk: u32,
        sent: u32,
    },
}

/// One simulated node: the engine and its "storage".
pub struct SimNode {
    pub engine: Engine,
    pub key: NodeKey,
    pub peer: String,
    pub store: BTreeMap<ItemId, (VerifiedItem, u8)>,
    wake: Option<u64>,
    /// Its config, kept for restarts (`Net::seed`).
    cfg: EngineConfig,
}

/// A deterministic network of engines with a fake clock.
pub struct Net {
    pub nodes: Vec<SimNode>,
    pub now: u64,
    queue: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    seq: u64,
    /// Undirected friendships: (a, b) with a < b → link latency in ms.
    pub edges: BTreeMap<(usize, usize), u64>,
    /// Groups node a tagged friend b with.
    pub groups: BTreeMap<(usize, usize), Vec<String>>,
    /// Links currently up, with the epoch messages on them carry.
    up: BTreeMap<(usize, usize), u64>,
    epoch: u64,
    pub online: Vec<bool>,
    /// Envelopes delivered: (receiver, item) → copies.
    pub copies: BTreeMap<(usize, ItemId), u32>,
    /// Bytes of every frame delivered.
    pub wire_bytes: u64,
    /// Bytes of the envelopes inside `Items` frames delivered.
    pub payload_bytes: u64,
    /// `Items` frames arriving before this time are lost (tests of resync).
    pub lose_items_until: u64,
    /// `have` frames from a to b arriving before this time are lost
    /// (tests of hop repair): (a, b) → time.
    pub lose_haves_until: BTreeMap<(usize, usize), u64>,
    /// Bytes delivered per message kind (`have`, `items`, `sync-query`, …).
    pub bytes_by_kind: BTreeMap<&'static str, u64>,
    /// When set, every delivered frame is logged here (for debugging).
    pub trace: Option<Vec<String>>,
    by_peer: BTreeMap<String, usize>,
}

fn edge(a: usize, b: usize) -> (usize, usize) {
    if a < b { (a, b) } else { (b, a) }
}

impl Net {
    /// `n` nodes, no friendships yet, everyone online, clock at `start_ms`.
    pub fn new(n: usize, start_ms: u64, cfg: impl Fn(EngineConfig) -> EngineConfig) -> Net {
        let nodes: Vec<SimNode> = (0..n)
            .map(|i| {
                let k = key(i);
                let p = k.peer_id().to_string();
                let config = cfg(EngineConfig::new(p.clone()));
                SimNode {
                    engine: Engine::new(config.clone(), Vec::<ItemRecord>::new()),
                    cfg: config,
                    key: k,
                    peer: p,
                    store: BTreeMap::new(),
                    wake: None,
                }
            })
            .collect();
        let by_peer = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.peer.clone(), i))
            .collect();
        Net {
            nodes,
            now: start_ms,
            queue: BinaryHeap::new(),
            seq: 0,
            edges: BTreeMap::new(),
            groups: BTreeMap::new(),
            up: BTreeMap::new(),
            epoch: 0,
            online: vec![true; n],
            copies: BTreeMap::new(),
            wire_bytes: 0,
            payload_bytes: 0,
            lose_items_until: 0,
            lose_haves_until: BTreeMap::new(),
            bytes_by_kind: BTreeMap::new(),
            trace: None,
            by_peer,
        }
    }

    /// Restarts node `n` from a store holding `items` (with their hops and
    /// senders), as a driver does at start-up: the engine is seeded from the
    /// stored records and ticked once.
    pub fn seed(&mut self, n: usize, items: Vec<(VerifiedItem, u8, Option<String>)>) {
        let records: Vec<ItemRecord> = items
            .iter()
            .map(|(it, hops, from)| ItemRecord::of(it, *hops, from.clone()))
            .collect();
        let cfg = self.nodes[n].cfg.clone();
        self.nodes[n].engine = Engine::new(cfg, records);
        self.nodes[n].store = items
            .into_iter()
            .map(|(it, hops, _)| (it.id(), (it, hops)))
            .collect();
        self.input(n, Input::Tick);
    }

    /// Makes a and b friends with this link latency (not connected yet).
    pub fn befriend(&mut self, a: usize, b: usize, latency_ms: u64) {
        self.edges.insert(edge(a, b), latency_ms);
    }

    /// Node `a` tags friend `b` with `group`.
    pub fn tag(&mut self, a: usize, b: usize, group: &str) {
        self.groups
            .entry((a, b))
            .or_default()
            .push(group.to_owned());
    }

    /// Connects every friendship whose two ends are online.
    pub fn connect_all(&mut self) {
        let pairs: Vec<(usize, usize)> = self.edges.keys().copied().collect();
        for (a, b) in pairs {
            if self.online[a] && self.online[b] {
                self.connect(a, b);
            }
        }
    }

    /// Brings the link a–b up (both sides get `PeerConnected`).
    pub fn connect(&mut self, a: usize, b: usize) {
        let e = edge(a, b);
        if self.up.contains_key(&e) || !self.edges.contains_key(&e) {
            return;
        }
        self.epoch += 1;
        self.up.insert(e, self.epoch);
        for (x, y) in [(a, b), (b, a)] {
            let groups = self.groups.get(&(x, y)).cloned().unwrap_or_default();
            let peer = self.nodes[y].peer.clone();
            self.input(x, Input::PeerConnected { peer, groups });
        }
    }

    /// Drops the link a–b (both stay online); messages in flight are lost.
    pub fn disconnect(&mut self, a: usize, b: usize) {
        if self.up.remove(&edge(a, b)).is_none() {
            return;
        }
        for (x, y) in [(a, b), (b, a)] {
            let peer = self.nodes[y].peer.clone();
            self.input(x, Input::PeerDisconnected { peer });
        }
    }

    /// Takes node `n` offline: its links drop, messages in flight are lost.
    pub fn go_offline(&mut self, n: usize) {
        self.online[n] = false;
        let links: Vec<(usize, usize)> = self
            .up
            .keys()
            .copied()
            .filter(|(a, b)| *a == n || *b == n)
            .collect();
        for (a, b) in links {
            self.up.remove(&(a, b));
            for (x, y) in [(a, b), (b, a)] {
                let peer = self.nodes[y].peer.clone();
                self.input(x, Input::PeerDisconnected { peer });
            }
        }
    }

    /// Brings node `n` back and reconnects it to its online friends.
    pub fn go_online(&mut self, n: usize) {
        self.online[n] = true;
        // Its timers did not fire while it was down: wake it once.
        self.input(n, Input::Tick);
        let friends: Vec<usize> = self
            .edges
            .keys()
            .filter_map(|(a, b)| {
                if *a == n {
                    Some(*b)
                } else if *b == n {
                    Some(*a)
                } else {
                    None
                }
            })
            .collect();
        for f in friends {
            if self.online[f] {
                self.connect(n, f);
            }
        }
    }

    /// Hands node `n`'s engine a device book, as a driver does after a
    /// link made over a stream, and carries out what that sets in motion.
    pub fn set_devices(&mut self, n: usize, book: DeviceBook) {
        let outputs = self.nodes[n]
            .engine
            .set_devices(self.now, book)
            .expect("a book of the node itself");
        self.apply(n, outputs);
    }

    /// Node `n` publishes `item` now.
    pub fn publish(&mut self, n: usize, item: VerifiedItem) {
        self.input(n, Input::Publish { item });
    }

    /// Feeds one input to node `n` and carries out its outputs.
    pub fn input(&mut self, n: usize, input: Input) {
        let outputs = self.nodes[n].engine.handle(self.now, input);
        self.apply(n, outputs);
    }

    fn schedule(&mut self, at: u64, ev: Ev) {
        self.seq += 1;
        self.queue.push(Reverse((at, self.seq, ev)));
    }

    fn send(&mut self, from: usize, to_peer: &str, message: &WireMessage) {
        let Some(&to) = self.by_peer.get(to_peer) else {
            return;
        };
        let e = edge(from, to);
        let (Some(&epoch), Some(&latency)) = (self.up.get(&e), self.edges.get(&e)) else {
            return;
        };
        let bytes = wire::encode(message).expect("engine output encodes");
        self.schedule(
            self.now + latency,
            Ev::Deliver {
                to,
                from,
                epoch,
                bytes,
            },
        );
    }

    fn apply(&mut self, n: usize, outputs: Vec<Output>) {
        for o in outputs {
            match o {
                Output::Send { peer, message } => self.send(n, &peer, &message),
                Output::SendItems {
                    peer,
                    session,
                    items,
                } => {
                    let store = &self.nodes[n].store;
                    let wire_items: Vec<WireItem> = items
                        .iter()
                        .filter_map(|a| {
                            store.get(&a.id).map(|(it, _)| WireItem {
                                hops: a.hops,
                                envelope: it.envelope_bytes().to_vec(),
                            })
                        })
                        .collect();
                    for m in wire::pack_items(session, wire_items) {
                        self.send(n, &peer, &m);
                    }
                }
                Output::SendChunk {
                    peer,
                    session,
                    chunk,
                    items,
                } => {
                    let store = &self.nodes[n].store;
                    let wire_items: Vec<WireItem> = items
                        .iter()
                        .filter_map(|a| {
                            store.get(&a.id).map(|(it, _)| WireItem {
                                hops: a.hops,
                                envelope: it.envelope_bytes().to_vec(),
                            })
                        })
                        .collect();
                    let (messages, sent) = wire::pack_chunk(Some(session), wire_items);
                    for m in &messages {
                        self.send(n, &peer, m);
                    }
                    // The transport acknowledges when the frames arrive.
                    if let Some(&to) = self.by_peer.get(&peer) {
                        let e = edge(n, to);
                        let epoch = self.up.get(&e).copied().unwrap_or(u64::MAX);
                        let latency = self.edges.get(&e).copied().unwrap_or(0);
                        self.schedule(
                            self.now + latency,
                            Ev::Drained {
                                node: n,
                                to,
                                epoch,
                                session,
                                chunk,
                                sent,
                            },
                        );
                    }
                }
                Output::Store {
                    item, hops_left, ..
                } => {
                    self.nodes[n].store.insert(item.id(), (item, hops_left));
                }
                Output::UpdateRoute { id, hops_left, .. } => {
                    if let Some(e) = self.nodes[n].store.get_mut(&id) {
                        e.1 = hops_left;
                    }
                }
                Output::Delete { id, .. } => {
                    self.nodes[n].store.remove(&id);
                }
                Output::WakeAt { at_ms } => {
                    self.nodes[n].wake = Some(at_ms);
                    self.schedule(at_ms.max(self.now), Ev::Wake { node: n, at: at_ms });
                }
                Output::Event(_) => {}
            }
        }
    }

    /// Processes events until the clock passes `until_ms` (or none remain).
    pub fn run_until(&mut self, until_ms: u64) {
        while let Some(Reverse((at, _, _))) = self.queue.peek() {
            if *at > until_ms {
                break;
            }
            let Some(Reverse((at, _, ev))) = self.queue.pop() else {
                break;
            };
            self.now = self.now.max(at);
            match ev {
                Ev::Wake { node, at } => {
                    if self.nodes[node].wake == Some(at) && self.online[node] {
                        self.nodes[node].wake = None;
                        self.input(node, Input::Tick);
                    }
                }
                Ev::Drained {
                    node,
                    to,
                    epoch,
                    session,
                    chunk,
                    sent,
                } => {
                    if !self.online[node] {
                        continue;
                    }
                    let delivered = self.up.get(&edge(node, to)) == Some(&epoch);
                    let peer = self.nodes[to].peer.clone();
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
                Ev::Deliver {
                    to,
                    from,
                    epoch,
                    bytes,
                } => {
                    if self.up.get(&edge(from, to)) != Some(&epoch) {
                        continue; // the link dropped while it was in flight
                    }
                    let message = wire::decode(&bytes).expect("frames decode");
                    if matches!(message, WireMessage::Items { .. })
                        && self.now < self.lose_items_until
                    {
                        continue;
                    }
                    if matches!(message, WireMessage::Have { .. })
                        && self
                            .lose_haves_until
                            .get(&(from, to))
                            .is_some_and(|t| self.now < *t)
                    {
                        continue;
                    }
                    self.wire_bytes += bytes.len() as u64;
                    *self.bytes_by_kind.entry(message.name()).or_default() += bytes.len() as u64;
                    if let Some(log) = &mut self.trace {
                        log.push(format!("{} {from}->{to} {message:?}", self.now));
                    }
                    if let WireMessage::Items { items, .. } = &message {
                        for it in items {
                            self.payload_bytes += it.envelope.len() as u64;
                            *self
                                .copies
                                .entry((to, ItemId::of_envelope(&it.envelope)))
                                .or_default() += 1;
                        }
                    }
                    let inbound = Inbound::from_wire(message, self.now);
                    let peer = self.nodes[from].peer.clone();
                    self.input(
                        to,
                        Input::Received {
                            peer,
                            message: inbound,
                        },
                    );
                }
            }
        }
        self.now = self.now.max(until_ms);
    }

    /// Advances the clock by `ms`, processing everything due.
    pub fn advance(&mut self, ms: u64) {
        let until = self.now + ms;
        self.run_until(until);
    }

    /// Which nodes hold `id` in their store.
    pub fn holders(&self, id: &ItemId) -> BTreeSet<usize> {
        (0..self.nodes.len())
            .filter(|&i| self.nodes[i].store.contains_key(id))
            .collect()
    }

    /// Friends of `n`.
    pub fn friends(&self, n: usize) -> Vec<usize> {
        self.edges
            .keys()
            .filter_map(|(a, b)| {
                if *a == n {
                    Some(*b)
                } else if *b == n {
                    Some(*a)
                } else {
                    None
                }
            })
            .collect()
    }

    /// Nodes within `hops` friend links of `from` (excluding `from`).
    pub fn within(&self, from: usize, hops: u8) -> BTreeSet<usize> {
        let mut dist = vec![u32::MAX; self.nodes.len()];
        dist[from] = 0;
        let mut frontier = vec![from];
        while let Some(x) = frontier.pop() {
            for y in self.friends(x) {
                if dist[x] + 1 < dist[y] {
                    dist[y] = dist[x] + 1;
                    frontier.push(y);
                }
            }
        }
        (0..self.nodes.len())
            .filter(|&i| i != from && dist[i] <= hops as u32)
            .collect()
    }

    /// The nodes entitled to an item of `author` with this audience: public
    /// up to `max_hops` friend links, friends one hop, a group the friends
    /// the author tagged with it, a peer item its addressee when that is a
    /// friend. The author holds its own item too.
    pub fn entitled(&self, author: usize, audience: &Audience, max_hops: u8) -> BTreeSet<usize> {
        let mut set = match audience {
            Audience::Public => self.within(author, max_hops),
            Audience::Friends => self.friends(author).into_iter().collect(),
            Audience::Group(g) => self
                .friends(author)
                .into_iter()
                .filter(|f| {
                    self.groups
                        .get(&(author, *f))
                        .is_some_and(|gs| gs.contains(g))
                })
                .collect(),
            Audience::Peer(p) => self
                .friends(author)
                .into_iter()
                .filter(|f| self.nodes[*f].peer == *p)
                .collect(),
            // Depends on the club's membership: engine_clubs.rs computes it.
            Audience::Club(_) => panic!("club audiences: see engine_clubs.rs"),
            // Depends on the device links: engine_devices.rs computes it.
            Audience::Devices => panic!("devices audiences: see engine_devices.rs"),
        };
        set.insert(author);
        set
    }
}
