//! The simulation's clock queue: a min-heap of `(virtual time, sequence,
//! event)`. The sequence number breaks ties in scheduling order, so two
//! runs with the same seed pop events in the same order.

use std::cmp::Ordering;
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

/// A heap entry ordered by time, then by scheduling order.
#[derive(Debug)]
struct Scheduled {
    at: u64,
    seq: u64,
    ev: Ev,
}

impl PartialEq for Scheduled {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scheduled {
    /// Reversed, so the `BinaryHeap` pops the earliest first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

/// The event queue.
#[derive(Debug, Default)]
pub(crate) struct Queue {
    heap: BinaryHeap<Scheduled>,
    seq: u64,
}

impl Queue {
    /// Schedules `ev` at `at`.
    pub(crate) fn push(&mut self, at: u64, ev: Ev) {
        self.seq += 1;
        self.heap.push(Scheduled {
            at,
            seq: self.seq,
            ev,
        });
    }

    /// Removes and returns the earliest event due at or before `until`.
    pub(crate) fn pop_until(&mut self, until: u64) -> Option<(u64, Ev)> {
        if self.heap.peek()?.at > until {
            return None;
        }
        self.heap.pop().map(|s| (s.at, s.ev))
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
