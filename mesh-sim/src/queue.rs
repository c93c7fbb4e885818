//! The simulation's clock queue: a min-heap of `(virtual time, sequence,
//! slot)` over a slab of events. The sequence number breaks ties in scheduling order, so two
//! runs with the same seed pop events in the same order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Something due at a virtual time.
#[derive(Debug)]
pub(crate) enum Ev {
    /// A frame arrives at `to` over the connection of `epoch`.
    Deliver {
        to: usize,
        from: usize,
        epoch: u64,
        bytes: Vec<u8>,
    },
    /// The frames of a catch-up chunk `node` sent to `to` have all arrived
    /// (or one was lost or cut): the driver's `FrameDone`.
    Drained {
        node: usize,
        to: usize,
        session: u64,
        chunk: u32,
        sent: u32,
        delivered: bool,
    },
    /// The timer `node`'s engine asked for (stale if it asked again since).
    Wake { node: usize, at: u64 },
    /// Planned item `index` is published.
    Publish(usize),
    /// Fault plan entry `k` happens.
    Fault(usize),
    /// A time-series sample is taken.
    Sample,
}

/// The event queue. The heap holds only `(time, sequence, slot)` keys, 24
/// bytes each, and the events wait in a slab: a heap of whole events moved
/// 72 bytes per step of every push and pop, and the heap was the largest
/// single cost of a 100,000-node run (perf: 15 %).
#[derive(Debug, Default)]
pub(crate) struct Queue {
    heap: BinaryHeap<Reverse<(u64, u64, usize)>>,
    slots: Vec<Option<Ev>>,
    free: Vec<usize>,
    seq: u64,
}

impl Queue {
    /// Schedules `ev` at `at`.
    pub(crate) fn push(&mut self, at: u64, ev: Ev) {
        self.seq += 1;
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot] = Some(ev);
                slot
            }
            None => {
                self.slots.push(Some(ev));
                self.slots.len() - 1
            }
        };
        self.heap.push(Reverse((at, self.seq, slot)));
    }

    /// Removes and returns the earliest event due at or before `until`.
    pub(crate) fn pop_until(&mut self, until: u64) -> Option<(u64, Ev)> {
        let Reverse((at, _, _)) = *self.heap.peek()?;
        if at > until {
            return None;
        }
        let Reverse((at, _, slot)) = self.heap.pop()?;
        self.free.push(slot);
        self.slots[slot].take().map(|ev| (at, ev))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_by_time_then_by_scheduling_order() {
        let mut q = Queue::default();
        q.push(20, Ev::Publish(0));
        q.push(10, Ev::Publish(1));
        q.push(10, Ev::Publish(2));
        q.push(30, Ev::Publish(3));
        let mut order = Vec::new();
        while let Some((at, Ev::Publish(i))) = q.pop_until(25) {
            order.push((at, i));
        }
        assert_eq!(order, [(10, 1), (10, 2), (20, 0)]);
        assert!(matches!(q.pop_until(100), Some((30, Ev::Publish(3)))));
        assert!(q.pop_until(100).is_none());
    }
}
