//! How many offloaded requests run at once (pure): a global limit (the
//! upstream's parallelism; 1 for Ollama's default) and a per-friend limit, so
//! one friend cannot take every slot. A full server says busy at once; nothing
//! here queues.

use std::collections::HashMap;
use std::hash::Hash;

/// Default global limit: Ollama and llama.cpp serve one request at a time unless
/// configured otherwise; a second one would only wait behind the first.
pub const DEFAULT_GLOBAL_SLOTS: usize = 1;

/// Default per-friend limit: one conversation at a time is what a phone needs.
pub const DEFAULT_PER_PEER_SLOTS: usize = 1;

/// Why a slot was not given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Full {
    /// Every slot of the server is taken.
    Global,
    /// This peer already holds its share.
    PerPeer,
}

/// Slots in use, in total and per peer.
#[derive(Debug, Clone)]
pub struct Capacity<P> {
    global: usize,
    per_peer: usize,
    in_use: usize,
    by_peer: HashMap<P, usize>,
}

impl<P: Eq + Hash + Clone> Capacity<P> {
    /// Limits of `global` slots and `per_peer` per peer (each at least 1).
    pub fn new(global: usize, per_peer: usize) -> Self {
        Self {
            global: global.max(1),
            per_peer: per_peer.max(1),
            in_use: 0,
            by_peer: HashMap::new(),
        }
    }

    /// Takes a slot for `peer`, or says which limit is full.
    pub fn try_acquire(&mut self, peer: &P) -> Result<(), Full> {
        if self.in_use >= self.global {
            return Err(Full::Global);
        }
        let held = self.by_peer.get(peer).copied().unwrap_or(0);
        if held >= self.per_peer {
            return Err(Full::PerPeer);
        }
        self.in_use += 1;
        self.by_peer.insert(peer.clone(), held + 1);
        Ok(())
    }

    /// Gives back a slot `peer` held; a release without a slot is ignored.
    pub fn release(&mut self, peer: &P) {
        let Some(held) = self.by_peer.get_mut(peer) else {
            return;
        };
        *held -= 1;
        if *held == 0 {
            self.by_peer.remove(peer);
        }
        self.in_use = self.in_use.saturating_sub(1);
    }

    /// Slots in use now.
    pub fn in_use(&self) -> usize {
        self.in_use
    }

    /// Slots `peer` holds now.
    pub fn held_by(&self, peer: &P) -> usize {
        self.by_peer.get(peer).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_give_one_slot() {
        let mut c = Capacity::new(DEFAULT_GLOBAL_SLOTS, DEFAULT_PER_PEER_SLOTS);
        assert_eq!(c.try_acquire(&"a"), Ok(()));
        assert_eq!(c.try_acquire(&"b"), Err(Full::Global));
        assert_eq!(c.try_acquire(&"a"), Err(Full::Global));
        c.release(&"a");
        assert_eq!(c.in_use(), 0);
        assert_eq!(c.try_acquire(&"b"), Ok(()));
    }

    #[test]
    fn per_peer_binds_before_global() {
        let mut c = Capacity::new(3, 2);
        assert_eq!(c.try_acquire(&"a"), Ok(()));
        assert_eq!(c.try_acquire(&"a"), Ok(()));
        assert_eq!(c.try_acquire(&"a"), Err(Full::PerPeer));
        assert_eq!(c.held_by(&"a"), 2);
        assert_eq!(c.try_acquire(&"b"), Ok(()));
        assert_eq!(c.in_use(), 3);
        assert_eq!(c.try_acquire(&"c"), Err(Full::Global));
        c.release(&"a");
        assert_eq!(c.try_acquire(&"c"), Ok(()));
        assert_eq!(c.try_acquire(&"a"), Err(Full::Global));
    }

    #[test]
    fn releases_never_underflow_and_zero_limits_mean_one() {
        let mut c = Capacity::new(0, 0);
        c.release(&"x");
        assert_eq!(c.in_use(), 0);
        assert_eq!(c.try_acquire(&"x"), Ok(()));
        assert_eq!(c.try_acquire(&"y"), Err(Full::Global));
        c.release(&"y");
        assert_eq!(c.in_use(), 1, "a peer without a slot frees nothing");
        c.release(&"x");
        c.release(&"x");
        assert_eq!((c.in_use(), c.held_by(&"x")), (0, 0));
    }
}
