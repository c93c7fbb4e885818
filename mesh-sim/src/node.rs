//! One simulated node: its engine (absent while crashed), the in-memory
//! store that answers the engine's storage requests and survives a crash,
//! and its network state.

use std::collections::BTreeMap;

use porfiry_protocol::ItemRecord;
use porfiry_protocol::club::ClubBook;
use porfiry_protocol::engine::{Engine, EngineConfig};
use porfiry_protocol::wire::{Announce, WireItem};
use porfiry_protocol::{ItemId, VerifiedItem};

/// A stored item with its route columns, as a node's database keeps it.
#[derive(Debug, Clone)]
pub(crate) struct Stored {
    pub(crate) item: VerifiedItem,
    pub(crate) hops_left: u8,
    pub(crate) received_from: Option<String>,
}

/// A node of the simulation.
#[derive(Debug)]
pub(crate) struct SimNode {
    /// The replication engine; `None` while the node is crashed.
    pub(crate) engine: Option<Engine>,
    /// Its storage, kept across crashes.
    pub(crate) store: BTreeMap<ItemId, Stored>,
    /// The one timer the engine asked for, virtual ms.
    pub(crate) wake: Option<u64>,
    /// False while a phone is offline.
    pub(crate) online: bool,
    /// Crashes not yet followed by their restart (crashes may overlap).
    pub(crate) crash_depth: u32,
    /// Items whose publish time came while the node was down.
    pub(crate) deferred: Vec<usize>,
    /// The club book it routes by (kept across crashes, like storage).
    pub(crate) clubs: ClubBook,
}

impl SimNode {
    /// The wire form of `items` this node holds (those it no longer holds
    /// are left out, as the real driver's page read leaves them).
    pub(crate) fn wire_items(&self, items: &[Announce]) -> Vec<WireItem> {
        items
            .iter()
            .filter_map(|a| {
                self.store.get(&a.id).map(|s| WireItem {
                    hops: a.hops,
                    envelope: s.item.envelope_bytes().to_vec(),
                })
            })
            .collect()
    }

    /// A fresh node with an empty store and no club.
    #[allow(dead_code)] // the simulator starts nodes with their book
    pub(crate) fn new(cfg: EngineConfig) -> SimNode {
        SimNode::with_clubs(cfg, ClubBook::new())
    }

    /// A fresh node with an empty store that routes club items by `clubs`.
    pub(crate) fn with_clubs(cfg: EngineConfig, clubs: ClubBook) -> SimNode {
        SimNode {
            engine: Some(Engine::with_clubs(
                cfg,
                Vec::<ItemRecord>::new(),
                clubs.clone(),
            )),
            clubs,
            store: BTreeMap::new(),
            wake: None,
            online: true,
            crash_depth: 0,
            deferred: Vec::new(),
        }
    }

    /// True if it can hold connections: running and with a network.
    pub(crate) fn reachable(&self) -> bool {
        self.online && self.engine.is_some()
    }

    /// Kills the engine; the store stays.
    pub(crate) fn crash(&mut self) {
        self.crash_depth += 1;
        self.engine = None;
        self.wake = None;
    }

    /// Ends one crash; on the last, starts a new engine from the store and
    /// returns true (the caller then ticks it).
    pub(crate) fn restart(&mut self, cfg: EngineConfig) -> bool {
        self.crash_depth = self.crash_depth.saturating_sub(1);
        if self.crash_depth > 0 || self.engine.is_some() {
            return false;
        }
        let records = self
            .store
            .values()
            .map(|s| ItemRecord::of(&s.item, s.hops_left, s.received_from.clone()));
        self.engine = Some(Engine::with_clubs(cfg, records, self.clubs.clone()));
        true
    }
}
