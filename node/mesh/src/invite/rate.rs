//! Rate limits on invitation attempts, as a pure state machine with the
//! time passed in: at most [`MAX_ATTEMPTS_PER_PEER`] per peer and
//! [`MAX_ATTEMPTS_TOTAL`] over all peers in any [`RATE_WINDOW_MS`].

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

/// The sliding window the caps count over.
pub const RATE_WINDOW_MS: u64 = 60_000;

/// Attempts one peer may make per window: a person mistyping a code tries
/// a few times; guessing 128 bits at this rate is hopeless anyway.
pub const MAX_ATTEMPTS_PER_PEER: usize = 5;

/// Attempts all peers together may make per window, so that many fresh
/// peer ids (free to make) cannot multiply the per-peer cap.
pub const MAX_ATTEMPTS_TOTAL: usize = 30;

/// Counts attempts; bounded: it never holds more than
/// [`MAX_ATTEMPTS_TOTAL`] times, because each one recorded is also in the
/// overall window.
#[derive(Debug)]
pub struct AttemptLimiter<K> {
    all: VecDeque<u64>,
    per_peer: HashMap<K, VecDeque<u64>>,
}

impl<K> Default for AttemptLimiter<K> {
    fn default() -> Self {
        Self {
            all: VecDeque::new(),
            per_peer: HashMap::new(),
        }
    }
}

impl<K: Hash + Eq + Clone> AttemptLimiter<K> {
    /// Records an attempt by `peer` at `now_ms` if the caps allow it;
    /// returns whether it may go ahead. A refused attempt is not counted.
    pub fn try_attempt(&mut self, peer: &K, now_ms: u64) -> bool {
        prune(&mut self.all, now_ms);
        self.per_peer.retain(|_, times| {
            prune(times, now_ms);
            !times.is_empty()
        });
        let mine = self.per_peer.get(peer).map_or(0, VecDeque::len);
        if self.all.len() >= MAX_ATTEMPTS_TOTAL || mine >= MAX_ATTEMPTS_PER_PEER {
            return false;
        }
        self.all.push_back(now_ms);
        self.per_peer
            .entry(peer.clone())
            .or_default()
            .push_back(now_ms);
        true
    }

    /// How many peers are tracked now (for the bound test).
    #[cfg(test)]
    pub fn tracked_peers(&self) -> usize {
        self.per_peer.len()
    }
}

/// Drops the times a whole window before `now_ms`.
fn prune(times: &mut VecDeque<u64>, now_ms: u64) {
    while times
        .front()
        .is_some_and(|t| t.saturating_add(RATE_WINDOW_MS) <= now_ms)
    {
        times.pop_front();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_peer_gets_its_cap_per_window() {
        let mut l = AttemptLimiter::default();
        for i in 0..MAX_ATTEMPTS_PER_PEER {
            assert!(l.try_attempt(&1, i as u64));
        }
        assert!(!l.try_attempt(&1, 10));
        assert!(l.try_attempt(&2, 10), "another peer is not held back");
        // A window after the first attempt (at 0), one slot is free again.
        assert!(!l.try_attempt(&1, RATE_WINDOW_MS - 1));
        assert!(l.try_attempt(&1, RATE_WINDOW_MS));
        assert!(!l.try_attempt(&1, RATE_WINDOW_MS));
    }

    #[test]
    fn many_peers_share_the_overall_cap_and_the_state_stays_bounded() {
        let mut l = AttemptLimiter::default();
        for p in 0..MAX_ATTEMPTS_TOTAL {
            assert!(l.try_attempt(&p, 100));
        }
        assert!(!l.try_attempt(&10_000, 100));
        for p in 0..1_000 {
            l.try_attempt(&(p + 20_000), 200);
        }
        assert_eq!(l.tracked_peers(), MAX_ATTEMPTS_TOTAL);
        assert!(l.try_attempt(&10_000, 100 + RATE_WINDOW_MS + 1));
        assert_eq!(l.tracked_peers(), 1);
    }
}
