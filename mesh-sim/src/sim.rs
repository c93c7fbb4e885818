//! The event loop: pops the queue of `(virtual time, sequence, event)`,
//! delivers encoded messages, fires engine timers, publishes the planned
//! items and replays the fault plan. It plays the driver's part for every
//! node: encode each outgoing message with the real wire codec, decode and
//! batch-verify it at the receiving edge, store what the engine says to
//! store, and fill `SendItems` (and `SendChunk`, `sim_chunks.rs`) from the
//! node's store.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap;

use porfiry_protocol::VerifiedItem;
use porfiry_protocol::engine::{EngineConfig, Input, Output};
use porfiry_protocol::wire::{self, WireMessage};
use rand_chacha::ChaCha20Rng;

use crate::clubs::ClubMeter;
use crate::error::SimError;
use crate::faults::{FaultEvent, FaultPlan};
use crate::limits::{EPOCH_MS, MAX_EVENTS, PROGRESS_EVERY_EVENTS};
use crate::link::LinkModel;
use crate::link_queue::BoundedPipe;
use crate::metrics::{Metrics, Sample};
use crate::node::{SimNode, Stored};
use crate::queue::{Ev, Queue};
use crate::report::{Report, RunFacts};
use crate::rng::{Stream, fork};
use crate::scenario::Scenario;
use crate::trace::Trace;
use crate::verify_cache::VerifyCache;
use crate::world::World;

#[path = "sim_chunks.rs"]
mod chunks;
#[path = "sim_links.rs"]
mod links;
#[path = "sim_live.rs"]
pub(crate) mod live;

/// Everything a run produces: the report, the time series, and the fault
/// windows for the plot.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The figures.
    pub report: Report,
    /// One row per sample step.
    pub series: Vec<Sample>,
    /// Partition windows, virtual ms.
    pub partitions: Vec<crate::faults::Window>,
    /// The journey of the traced item (empty unless one was asked for).
    pub trace: Vec<String>,
}

/// Builds the world of `scenario` under `seed` and runs it.
pub fn run(scenario: &Scenario, seed: u64) -> Result<Outcome, SimError> {
    let world = World::build(scenario, seed)?;
    run_outcome(scenario, seed, &world)
}

/// Runs `scenario` on an already built `world` (the redundancy comparison
/// builds the world once and hands it to gossipsub too).
pub fn run_outcome(scenario: &Scenario, seed: u64, world: &World) -> Result<Outcome, SimError> {
    run_traced(scenario, seed, world, None)
}

/// Like [`run_outcome`], also recording the journey of planned item
/// `trace_item` (publish, stores, messages naming it, faults) in
/// `Outcome::trace`.
pub fn run_traced(
    scenario: &Scenario,
    seed: u64,
    world: &World,
    trace_item: Option<usize>,
) -> Result<Outcome, SimError> {
    run_watched(scenario, seed, world, trace_item, &mut |_, _| {})
}

/// Like [`run_traced`], also calling `watch(virtual_now_ms, events)` every
/// [`PROGRESS_EVERY_EVENTS`] events (the command line's progress bar). The
/// watcher only looks: the run is the same with or without it.
pub fn run_watched(
    scenario: &Scenario,
    seed: u64,
    world: &World,
    trace_item: Option<usize>,
    watch: &mut dyn FnMut(u64, u64),
) -> Result<Outcome, SimError> {
    let plan = FaultPlan::draw(scenario, seed, &world.phones);
    let mut sim = Sim::new(scenario, seed, world, &plan)?;
    sim.trace = Trace::of(
        trace_item
            .and_then(|i| world.items.get(i))
            .map(|p| p.item.id()),
    );
    sim.run(watch);
    let stopped_early = sim.events >= MAX_EVENTS;
    let held = sim.held();
    let report = Report::build(&RunFacts {
        scenario,
        seed,
        world,
        plan: &plan,
        metrics: &sim.metrics,
        held: &held,
        events: sim.events,
        stopped_early,
        clubs: &sim.clubs,
    });
    Ok(Outcome {
        report,
        series: std::mem::take(&mut sim.metrics.samples),
        partitions: plan.partition_windows.clone(),
        trace: std::mem::take(&mut sim.trace.lines),
    })
}

/// A friendship that can connect, and its connection if up.
#[derive(Debug, Default)]
struct Conn {
    epoch: Option<u64>,
    /// Pipes a→b and b→a for the pair (a, b), a < b, with the real
    /// driver's window and queue (`link_queue.rs`).
    pipes: [BoundedPipe; 2],
}

pub(crate) struct Sim<'w> {
    scenario: &'w Scenario,
    world: &'w World,
    plan: &'w FaultPlan,
    now: u64,
    queue: Queue,
    nodes: Vec<SimNode>,
    rngs: Vec<ChaCha20Rng>,
    server_link: LinkModel,
    phone_link: LinkModel,
    conns: BTreeMap<(usize, usize), Conn>,
    epoch: u64,
    active_partitions: BTreeSet<usize>,
    active_blackholes: BTreeSet<usize>,
    /// Peer id string → node index (lookups only).
    by_peer: FxHashMap<String, usize>,
    metrics: Metrics,
    events: u64,
    trace: Trace,
    /// Every node's receiving edge (decode-time signature checks, once per
    /// distinct envelope).
    edge: VerifyCache,
    clubs: ClubMeter,
    /// Items other nodes delivered, kept for a driver that merges them into
    /// its own stores (`sim_live.rs`); `None` in a plain run.
    arrivals: Option<Vec<(usize, VerifiedItem)>>,
}

impl<'w> Sim<'w> {
    fn new(
        scenario: &'w Scenario,
        seed: u64,
        world: &'w World,
        plan: &'w FaultPlan,
    ) -> Result<Sim<'w>, SimError> {
        let server_link = LinkModel::new(&scenario.links.server)?;
        let phone_link = match &scenario.links.phone {
            Some(spec) => LinkModel::new(spec)?,
            None => server_link.clone(),
        };
        let mut sim = Sim {
            scenario,
            world,
            plan,
            now: 0,
            queue: Queue::default(),
            nodes: Vec::with_capacity(world.len()),
            rngs: (0..world.len())
                .map(|i| fork(seed, Stream::Node(i)))
                .collect(),
            server_link,
            phone_link,
            conns: world.links.edges().map(|e| (e, Conn::default())).collect(),
            epoch: 0,
            active_partitions: BTreeSet::new(),
            active_blackholes: BTreeSet::new(),
            by_peer: world
                .peers
                .iter()
                .enumerate()
                .map(|(i, p)| (p.clone(), i))
                .collect(),
            metrics: Metrics::new(world),
            events: 0,
            trace: Trace::default(),
            edge: VerifyCache::default(),
            clubs: crate::clubs::meter(world),
            arrivals: None,
        };
        for i in 0..world.len() {
            let book = world
                .club
                .as_ref()
                .map(|c| c.book_for(i))
                .unwrap_or_default();
            let node = SimNode::with_clubs(sim.engine_config(i), book);
            sim.nodes.push(node);
        }
        for i in 0..world.len() {
            sim.input(i, Input::Tick);
        }
        for p in &world.items {
            sim.schedule(p.at_ms, Ev::Publish(p.index));
        }
        for (k, (at, _)) in plan.events.iter().enumerate() {
            sim.schedule(*at, Ev::Fault(k));
        }
        sim.schedule(0, Ev::Sample);
        sim.refresh_links();
        Ok(sim)
    }

    fn engine_config(&self, node: usize) -> EngineConfig {
        // As the node's daemon does: a phone serves one catch-up session
        // at a time, a server `SERVER_SERVED_SESSIONS`.
        let peer = self.world.peers[node].clone();
        let mut cfg = if self.world.phones[node] {
            EngineConfig::new(peer)
        } else {
            EngineConfig::for_server(peer)
        };
        let o = &self.scenario.engine;
        if let Some(v) = o.push_batch_delay_ms {
            cfg.push_batch_delay_ms = v;
        }
        if let Some(v) = o.want_timeout_ms {
            cfg.want_timeout_ms = v;
        }
        if let Some(v) = o.resync_interval_ms {
            cfg.resync_interval_ms = v;
        }
        if let Some(v) = o.sync_timeout_ms {
            cfg.sync_timeout_ms = v;
        }
        if let Some(v) = o.sync_stall_ms {
            cfg.sync_stall_ms = v;
        }
        cfg
    }

    fn schedule(&mut self, at: u64, ev: Ev) {
        self.queue.push(at, ev);
    }

    fn run(&mut self, watch: &mut dyn FnMut(u64, u64)) {
        let end = self.scenario.duration_ms;
        while self.events < MAX_EVENTS {
            let Some((at, ev)) = self.queue.pop_until(end) else {
                break;
            };
            self.events += 1;
            if self.events.is_multiple_of(PROGRESS_EVERY_EVENTS) {
                watch(self.now, self.events);
            }
            self.dispatch(at, ev);
        }
        self.now = end;
        if self.metrics.samples.last().is_none_or(|s| s.time_ms < end) {
            self.sample();
        }
    }

    /// Handles one event popped from the queue at virtual time `at`.
    fn dispatch(&mut self, at: u64, ev: Ev) {
        let end = self.scenario.duration_ms;
        self.now = self.now.max(at);
        match ev {
            Ev::Deliver {
                to,
                from,
                epoch,
                bytes,
            } => self.deliver(to, from, epoch, bytes),
            Ev::Drained {
                node,
                to,
                session,
                chunk,
                sent,
                delivered,
            } => self.drained(node, to, session, chunk, sent, delivered),
            Ev::Wake { node, at } => {
                if self.nodes[node].wake == Some(at) {
                    self.nodes[node].wake = None;
                    self.input(node, Input::Tick);
                }
            }
            Ev::Publish(index) => self.publish(index),
            Ev::Fault(k) => self.fault(self.plan.events[k].1),
            Ev::Sample => {
                self.sample();
                let next = self.now + self.scenario.sample_ms();
                if next <= end {
                    self.schedule(next, Ev::Sample);
                }
            }
        }
    }

    /// Feeds one input to a running node and carries out its outputs.
    fn input(&mut self, node: usize, input: Input) {
        let Some(engine) = self.nodes[node].engine.as_mut() else {
            return;
        };
        let outputs = engine.handle(EPOCH_MS + self.now, input);
        for o in outputs {
            self.apply(node, o);
        }
    }

    fn apply(&mut self, n: usize, output: Output) {
        match output {
            Output::Send { peer, message } => {
                self.send(n, &peer, &message);
            }
            Output::SendItems {
                peer,
                session,
                items,
            } => {
                let wire_items = self.nodes[n].wire_items(&items);
                for m in wire::pack_items(session, wire_items) {
                    self.send(n, &peer, &m);
                }
            }
            Output::SendChunk {
                peer,
                session,
                chunk,
                items,
            } => self.send_chunk(n, &peer, session, chunk, &items),
            Output::Store {
                item,
                received_from,
                hops_left,
            } => self.store(n, item, received_from, hops_left),
            Output::UpdateRoute {
                id,
                received_from,
                hops_left,
            } => {
                if let Some(s) = self.nodes[n].store.get_mut(&id) {
                    s.hops_left = hops_left;
                    s.received_from = Some(received_from);
                }
            }
            Output::Delete { id, .. } => {
                self.nodes[n].store.remove(&id);
            }
            Output::WakeAt { at_ms } => {
                let at = at_ms.saturating_sub(EPOCH_MS).max(self.now);
                // The engine repeats its next deadline after most inputs; one
                // queue entry per (node, time) is enough, and keeps the heap
                // at about one wake per node instead of one per input.
                if self.nodes[n].wake != Some(at) {
                    self.nodes[n].wake = Some(at);
                    self.schedule(at, Ev::Wake { node: n, at });
                }
            }
            Output::Event(e) => self.metrics.on_event(&e),
        }
    }

    fn store(&mut self, n: usize, item: VerifiedItem, from: Option<String>, hops_left: u8) {
        let id = item.id();
        if self.trace.follows(&id) {
            let from_node = from.as_ref().and_then(|p| self.by_peer.get(p)).copied();
            self.trace.store(self.now, n, from_node, hops_left);
        }
        self.metrics.on_store(self.world, n, &id, self.now);
        if let (Some(arrived), Some(_)) = (self.arrivals.as_mut(), from.as_ref()) {
            arrived.push((n, item.clone()));
        }
        self.nodes[n].store.insert(
            id,
            Stored {
                item,
                hops_left,
                received_from: from,
            },
        );
    }

    /// Encodes `message` and puts it on the link to `to_peer`; its arrival
    /// time, or `None` if it was cut or lost.
    fn send(&mut self, from: usize, to_peer: &str, message: &WireMessage) -> Option<u64> {
        let bytes = match wire::encode(message) {
            Ok(b) => b,
            Err(e) => {
                tracing::warn!(node = from, error = %e, "engine output does not encode");
                self.metrics.wire_errors += 1;
                return None;
            }
        };
        self.metrics.by_kind.add(message, bytes.len());
        let Some(&to) = self.by_peer.get(to_peer) else {
            self.metrics.messages_cut += 1;
            return None;
        };
        let key = (from.min(to), from.max(to));
        let dir = usize::from(from > to);
        let phone_link = self.world.phones[from] || self.world.phones[to];
        let model = if phone_link {
            &self.phone_link
        } else {
            &self.server_link
        };
        let Some(conn) = self.conns.get_mut(&key) else {
            self.metrics.messages_cut += 1;
            return None;
        };
        let Some(epoch) = conn.epoch else {
            self.metrics.messages_cut += 1;
            return None;
        };
        self.metrics.bytes_sent[from] += bytes.len() as u64;
        let blackholed = self
            .active_blackholes
            .iter()
            .any(|&b| self.plan.blackhole_links[b].contains(&key));
        let rng = &mut self.rngs[from];
        let lost = model.lost(rng) || blackholed;
        let latency = model.latency_ms(rng);
        let arrival = links::offer(&mut conn.pipes[dir], self.now, model, bytes.len(), latency)?;
        if lost {
            self.metrics.messages_lost += 1;
            self.trace.message(self.now, "LOST", from, to, message);
            return None;
        }
        self.trace.message(self.now, "send", from, to, message);
        self.schedule(
            arrival,
            Ev::Deliver {
                to,
                from,
                epoch,
                bytes,
            },
        );
        Some(arrival)
    }

    /// A frame arrives: decode, verify at the edge, hand to the engine.
    fn deliver(&mut self, to: usize, from: usize, epoch: u64, bytes: Vec<u8>) {
        let key = (from.min(to), from.max(to));
        if self.conns.get(&key).and_then(|c| c.epoch) != Some(epoch) {
            self.metrics.messages_cut += 1;
            return;
        }
        let message = match wire::decode(&bytes) {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!(node = to, error = %e, "frame does not decode");
                self.metrics.wire_errors += 1;
                return;
            }
        };
        self.metrics.messages_delivered += 1;
        self.metrics.wire_bytes += bytes.len() as u64;
        self.metrics.bytes_received[to] += bytes.len() as u64;
        if let WireMessage::Items { items, .. } = &message {
            for it in items {
                self.metrics.payload_bytes += it.envelope.len() as u64;
                self.metrics.copies_per_node[to] += 1;
                self.metrics.copies_total += 1;
            }
        }
        let inbound = self.edge.inbound(message, EPOCH_MS + self.now);
        self.clubs.on_inbound(to, &inbound, bytes.len());
        let peer = self.world.peers[from].clone();
        self.input(
            to,
            Input::Received {
                peer,
                message: inbound,
            },
        );
    }

    fn publish(&mut self, index: usize) {
        let planned = &self.world.items[index];
        let author = planned.author;
        if self.nodes[author].engine.is_none() {
            self.nodes[author].deferred.push(index);
            return;
        }
        self.metrics.on_publish(self.world, index, self.now);
        if self.trace.follows(&planned.item.id()) {
            self.trace
                .note(self.now, format_args!("node {author} publishes it"));
        }
        let item = planned.item.clone();
        self.input(author, Input::Publish { item });
    }

    fn fault(&mut self, event: FaultEvent) {
        self.trace.fault(self.now, event);
        match event {
            FaultEvent::PartitionStart(p) => {
                self.active_partitions.insert(p);
            }
            FaultEvent::PartitionEnd(p) => {
                self.active_partitions.remove(&p);
            }
            FaultEvent::BlackholeStart(b) => {
                self.active_blackholes.insert(b);
            }
            FaultEvent::BlackholeEnd(b) => {
                self.active_blackholes.remove(&b);
            }
            FaultEvent::Offline(n) => {
                self.nodes[n].online = false;
                return self.refresh_links_of(n);
            }
            FaultEvent::Online(n) => {
                self.nodes[n].online = true;
                return self.refresh_links_of(n);
            }
            FaultEvent::Crash(n) => {
                self.nodes[n].crash();
                return self.refresh_links_of(n);
            }
            FaultEvent::Restart(n) => {
                let cfg = self.engine_config(n);
                if self.nodes[n].restart(cfg) {
                    self.input(n, Input::Tick);
                    for index in std::mem::take(&mut self.nodes[n].deferred) {
                        self.publish(index);
                    }
                }
                return self.refresh_links_of(n);
            }
        }
        self.refresh_links();
    }

    /// Brings up every connection whose ends are reachable and on the same
    /// side of every active partition, and takes down the others.
    fn refresh_links(&mut self) {
        let keys: Vec<(usize, usize)> = self.conns.keys().copied().collect();
        self.refresh(keys);
    }

    /// [`Sim::refresh_links`] for one node whose reachability changed: only
    /// its own connections can change, so a phone going offline costs its
    /// degree, not the whole graph's edge count (at 100,000 nodes churn
    /// would otherwise dominate the run). The keys are visited in the same
    /// order as the full refresh visits them, so results are identical.
    fn refresh_links_of(&mut self, n: usize) {
        let mut keys: Vec<(usize, usize)> = self
            .world
            .links
            .neighbours(n)
            .map(|m| (n.min(m), n.max(m)))
            .collect();
        keys.sort_unstable();
        self.refresh(keys);
    }

    fn refresh(&mut self, keys: Vec<(usize, usize)>) {
        for (a, b) in keys {
            let cut = self
                .active_partitions
                .iter()
                .any(|&p| self.plan.sides[p].contains(&a) != self.plan.sides[p].contains(&b));
            let want_up = !cut && self.nodes[a].reachable() && self.nodes[b].reachable();
            let is_up = self.conns.get(&(a, b)).is_some_and(|c| c.epoch.is_some());
            if want_up && !is_up {
                self.epoch += 1;
                let pipes = links::fresh_pipes(self.link_model(a, b));
                if let Some(c) = self.conns.get_mut(&(a, b)) {
                    c.epoch = Some(self.epoch);
                    c.pipes = pipes;
                }
                for (x, y) in [(a, b), (b, a)] {
                    let peer = self.world.peers[y].clone();
                    let groups = self.world.tags(x, y);
                    self.input(x, Input::PeerConnected { peer, groups });
                }
            } else if !want_up && is_up {
                if let Some(c) = self.conns.get_mut(&(a, b)) {
                    c.epoch = None;
                }
                for (x, y) in [(a, b), (b, a)] {
                    let peer = self.world.peers[y].clone();
                    self.input(x, Input::PeerDisconnected { peer });
                }
            }
        }
    }

    fn sample(&mut self) {
        let m = &self.metrics;
        let sample = Sample {
            time_ms: self.now,
            published: m.published,
            entitled_due: m.entitled_due,
            delivered: m.delivered,
            delivery_ratio: if m.entitled_due == 0 {
                1.0
            } else {
                m.delivered as f64 / m.entitled_due as f64
            },
            nodes_up: self.nodes.iter().filter(|n| n.reachable()).count() as u64,
            links_up: self.conns.values().filter(|c| c.epoch.is_some()).count() as u64,
            wire_bytes: m.wire_bytes,
            payload_copies: m.copies_total,
            messages_lost: m.messages_lost,
        };
        self.metrics.samples.push(sample);
    }

    /// For each planned item, the nodes whose store holds it at the end.
    fn held(&self) -> Vec<BTreeSet<usize>> {
        let mut held = vec![BTreeSet::new(); self.world.items.len()];
        for (n, node) in self.nodes.iter().enumerate() {
            for id in node.store.keys() {
                if let Some(index) = self.metrics.item_index(id) {
                    held[index].insert(n);
                }
            }
        }
        held
    }
}
