//! One direction of a connection as the real driver runs it: at most
//! [`MAX_IN_FLIGHT_FRAMES`] frames unacknowledged (each on its own stream,
//! so with `reorder` they may overtake each other), at most
//! [`MAX_QUEUED_BYTES`] waiting behind them, bandwidth shared in order.
//! A frame past both limits is what the old driver dropped (`QueueFull`);
//! the current driver holds it instead. [`Overflow`] picks which, so the
//! simulator runs the current driver and a test can show what the old one
//! lost. Pure arithmetic over virtual time: no events of its own.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Frames in flight per friend: the node driver's `MAX_IN_FLIGHT_PER_PEER`.
pub const MAX_IN_FLIGHT_FRAMES: usize = 8;

/// Bytes queued per friend behind the frames in flight: the node driver's
/// `MAX_QUEUED_BYTES_PER_PEER` (four 4 MiB frames).
pub const MAX_QUEUED_BYTES: usize = 16 * 1024 * 1024;

/// What happens to a frame that fits neither the window nor the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Overflow {
    /// It waits its turn (the current driver: nothing dropped for being
    /// queued; its sender waits).
    #[default]
    Hold,
    /// It is refused (the driver before flow control: `QueueFull`).
    Drop,
}

/// The frame did not fit and was dropped ([`Overflow::Drop`] only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueFull;

/// One direction of a connection.
#[derive(Debug, Clone, Default)]
pub struct BoundedPipe {
    overflow: Overflow,
    reorder: bool,
    /// When the sender is free to transmit again (bandwidth).
    free_at: u64,
    /// When each frame holding a window slot is acknowledged.
    slots: BinaryHeap<Reverse<u64>>,
    /// Frames waiting for a slot: (when they get one, bytes).
    waiting: VecDeque<(u64, usize)>,
    queued_bytes: usize,
    /// The latest arrival so far (frames do not overtake it unless `reorder`).
    last_arrival: u64,
}

impl BoundedPipe {
    /// An empty pipe with the given overflow policy; with `reorder`, frames
    /// in flight arrive in the order their latencies give, not as sent.
    pub fn new(overflow: Overflow, reorder: bool) -> BoundedPipe {
        BoundedPipe {
            overflow,
            reorder,
            ..BoundedPipe::default()
        }
    }

    /// Bytes waiting behind the window at `now`.
    pub fn queued_bytes(&mut self, now: u64) -> usize {
        self.forget_started(now);
        self.queued_bytes
    }

    fn forget_started(&mut self, now: u64) {
        while let Some(&(start, bytes)) = self.waiting.front() {
            if start > now {
                break;
            }
            self.waiting.pop_front();
            self.queued_bytes -= bytes;
        }
        // A frame that had to wait took its slot when it was offered, so
        // every acknowledgement due by now frees a slot.
        while self.slots.peek().is_some_and(|Reverse(ack)| *ack <= now) {
            self.slots.pop();
        }
    }

    /// Offers a frame of `bytes` at `now` that takes `transmit_ms` to send
    /// and `latency_ms` each way; returns when it arrives, or `QueueFull`.
    pub fn offer(
        &mut self,
        now: u64,
        bytes: usize,
        transmit_ms: u64,
        latency_ms: u64,
    ) -> Result<u64, QueueFull> {
        self.forget_started(now);
        let start = if self.slots.len() < MAX_IN_FLIGHT_FRAMES {
            now
        } else {
            self.slots
                .peek()
                .map_or(now, |Reverse(ack)| (*ack).max(now))
        };
        if start > now {
            if self.overflow == Overflow::Drop
                && self.queued_bytes.saturating_add(bytes) > MAX_QUEUED_BYTES
            {
                return Err(QueueFull);
            }
            self.waiting.push_back((start, bytes));
            self.queued_bytes += bytes;
        }
        if self.slots.len() >= MAX_IN_FLIGHT_FRAMES {
            self.slots.pop();
        }
        let done = self.free_at.max(start) + transmit_ms;
        self.free_at = done;
        let mut arrival = done + latency_ms;
        if !self.reorder {
            arrival = arrival.max(self.last_arrival);
        }
        self.last_arrival = self.last_arrival.max(arrival);
        self.slots.push(Reverse(arrival + latency_ms));
        Ok(arrival)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1024 * 1024;

    #[test]
    fn the_window_then_the_queue_then_queue_full() {
        let mut p = BoundedPipe::new(Overflow::Drop, false);
        for _ in 0..MAX_IN_FLIGHT_FRAMES {
            assert_eq!(p.offer(0, MIB, 0, 10), Ok(10));
        }
        for _ in 0..MAX_IN_FLIGHT_FRAMES {
            assert_eq!(p.offer(0, MIB, 0, 10), Ok(30), "waits one round trip");
        }
        for _ in MAX_IN_FLIGHT_FRAMES..MAX_QUEUED_BYTES / MIB {
            assert_eq!(p.offer(0, MIB, 0, 10), Ok(50), "waits two");
        }
        assert_eq!(p.queued_bytes(0), MAX_QUEUED_BYTES);
        assert_eq!(p.offer(0, MIB, 0, 10), Err(QueueFull));
        // As acknowledgements come back, the queue drains.
        assert_eq!(p.queued_bytes(20), MAX_QUEUED_BYTES / 2);
        assert_eq!(p.queued_bytes(40), 0);
        assert!(p.offer(40, MIB, 0, 10).is_ok());
    }

    #[test]
    fn holding_never_refuses_and_keeps_the_order() {
        let mut p = BoundedPipe::new(Overflow::Hold, false);
        let mut last = 0;
        for _ in 0..100 {
            let at = p.offer(0, MIB, 1, 10).expect("held, not dropped");
            assert!(at >= last);
            last = at;
        }
        assert!(
            p.queued_bytes(0) > MAX_QUEUED_BYTES,
            "the hold is past the limit"
        );
    }

    #[test]
    fn bandwidth_queues_frames_and_reordering_lets_fast_ones_overtake() {
        let mut p = BoundedPipe::new(Overflow::Hold, true);
        assert_eq!(p.offer(0, 1, 10, 50), Ok(60));
        assert_eq!(p.offer(0, 1, 10, 5), Ok(25), "overtakes the first");
        let mut q = BoundedPipe::new(Overflow::Hold, false);
        assert_eq!(q.offer(0, 1, 10, 50), Ok(60));
        assert_eq!(q.offer(0, 1, 10, 5), Ok(60), "in order without reordering");
    }
}
