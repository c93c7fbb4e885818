//! The simulator driven from outside, step by step, for `mesh-sim minds`:
//! a driver (the minds' loop) publishes items its nodes made while the run
//! goes, advances virtual time to its next tick, and takes the items other
//! nodes delivered to each node so it can merge them into that node's own
//! database. The events themselves run exactly as in `mesh-sim run`
//! ([`Sim::dispatch`]); nothing about replication changes.

use porfiry_protocol::VerifiedItem;
use porfiry_protocol::engine::Input;

use super::Sim;
use crate::error::SimError;
use crate::faults::FaultPlan;
use crate::limits::MAX_EVENTS;
use crate::scenario::Scenario;
use crate::world::World;

/// A run the caller advances: built like a plain run, with arrivals kept.
pub(crate) struct LiveSim<'w> {
    sim: Sim<'w>,
}

impl<'w> LiveSim<'w> {
    /// The run of `world` under `scenario` and `plan`, at virtual time 0.
    pub(crate) fn new(
        scenario: &'w Scenario,
        seed: u64,
        world: &'w World,
        plan: &'w FaultPlan,
    ) -> Result<LiveSim<'w>, SimError> {
        let mut sim = Sim::new(scenario, seed, world, plan)?;
        sim.arrivals = Some(Vec::new());
        Ok(LiveSim { sim })
    }

    /// Runs every event up to and including virtual time `until_ms` (never
    /// past the scenario's end, nor past [`MAX_EVENTS`]).
    pub(crate) fn advance_to(&mut self, until_ms: u64) {
        let until = until_ms.min(self.sim.scenario.duration_ms);
        while self.sim.events < MAX_EVENTS {
            let Some((at, ev)) = self.sim.queue.pop_until(until) else {
                break;
            };
            self.sim.events += 1;
            self.sim.dispatch(at, ev);
        }
        self.sim.now = self.sim.now.max(until);
    }

    /// Node `node` publishes `item` now, as the daemon hands a new own item
    /// to its engine (`Input::Publish`). A crashed node's engine is down:
    /// the item is dropped here and the caller counts it (the node's own
    /// database still holds the row and its item id).
    pub(crate) fn publish(&mut self, node: usize, item: VerifiedItem) -> bool {
        if self.sim.nodes[node].engine.is_none() {
            return false;
        }
        self.sim.input(node, Input::Publish { item });
        true
    }

    /// The items other nodes delivered since the last call, as
    /// `(receiving node, item)` in delivery order.
    pub(crate) fn take_arrivals(&mut self) -> Vec<(usize, VerifiedItem)> {
        self.sim
            .arrivals
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Bytes delivered on all links so far.
    pub(crate) fn wire_bytes(&self) -> u64 {
        self.sim.metrics.wire_bytes
    }

    /// Events processed so far.
    pub(crate) fn events(&self) -> u64 {
        self.sim.events
    }
}
