//! Friends served in turn, by bytes: one bounded queue per friend, and a
//! turn that goes round the friends with something queued (deficit
//! round-robin). Each turn gives a friend [`FAIR_QUANTUM_BYTES`] more
//! credit, and it is served while its credit covers its next item, so every
//! friend gets about the same bytes, whatever the size of its frames. A
//! friend whose queue was empty joins at the back of the turn: its item waits
//! for at most one turn of each friend already queued, about a quantum (or
//! one frame larger than that) each, however many they have waiting. So a
//! flooding friend cannot delay a quiet one by more than about a frame,
//! while a friend's small frames (a note, a `Want`) go several to a turn.
//! Pure: no IO, no clock; the receive stage (`verify_stage`) drives it.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

/// Credit a friend gets per turn: 64 KiB is a live push of about 200 notes,
/// so a friend's usual frames (a note, announcements, `Want`s) all go in
/// one turn, while a full 1 MiB frame of catch-up (the wire cap) waits 16
/// turns and others' small frames go between. Verifying and storing cost
/// roughly by the byte, so equal bytes is equal time.
pub const FAIR_QUANTUM_BYTES: usize = 64 * 1024;

/// A peer's queue is at its bound; the item is handed back.
#[derive(Debug, PartialEq, Eq)]
pub struct Full<T>(pub T);

/// One peer's queue and its credit.
#[derive(Debug)]
struct PeerQueue<T> {
    items: VecDeque<(T, usize)>,
    credit: usize,
}

/// Per-peer FIFO queues of at most `bound` items each, served by deficit
/// round-robin over the items' sizes.
#[derive(Debug)]
pub struct FairQueue<P, T> {
    bound: usize,
    quantum: usize,
    queues: HashMap<P, PeerQueue<T>>,
    /// Peers with at least one item queued, the one whose turn it is first.
    turn: VecDeque<P>,
    /// Whether the peer at the front has had this turn's credit.
    credited: bool,
    len: usize,
}

impl<P: Eq + Hash + Clone, T> FairQueue<P, T> {
    /// Queues of at most `bound` items per peer (at least one), each turn
    /// worth [`FAIR_QUANTUM_BYTES`].
    pub fn new(bound: usize) -> Self {
        Self::with_quantum(bound, FAIR_QUANTUM_BYTES)
    }

    /// Queues with another credit per turn (at least one byte).
    pub fn with_quantum(bound: usize, quantum: usize) -> Self {
        Self {
            bound: bound.max(1),
            quantum: quantum.max(1),
            queues: HashMap::new(),
            turn: VecDeque::new(),
            credited: false,
            len: 0,
        }
    }

    /// Queues `item` of `bytes` from `peer` behind its others; hands it
    /// back when the peer already has `bound` queued.
    pub fn push(&mut self, peer: P, item: T, bytes: usize) -> Result<(), Full<T>> {
        let queue = self.queues.entry(peer.clone()).or_insert(PeerQueue {
            items: VecDeque::new(),
            credit: 0,
        });
        if queue.items.len() >= self.bound {
            return Err(Full(item));
        }
        if queue.items.is_empty() {
            self.turn.push_back(peer);
        }
        queue.items.push_back((item, bytes));
        self.len += 1;
        Ok(())
    }

    /// The next item: the oldest of the peer whose turn it is, if its
    /// credit covers it; otherwise the turn passes on.
    pub fn pop(&mut self) -> Option<(P, T)> {
        loop {
            let peer = self.turn.front()?.clone();
            let Some(queue) = self.queues.get_mut(&peer) else {
                // Never left behind (`take_peer` removes both); heal anyway.
                self.turn.pop_front();
                self.credited = false;
                continue;
            };
            if !self.credited {
                queue.credit = queue.credit.saturating_add(self.quantum);
                self.credited = true;
            }
            let Some(&(_, bytes)) = queue.items.front() else {
                self.end_turn(&peer, false);
                continue;
            };
            if queue.credit < bytes {
                // Not enough this turn: the credit waits for the next.
                self.end_turn(&peer, true);
                continue;
            }
            queue.credit -= bytes;
            let (item, _) = queue.items.pop_front()?;
            self.len -= 1;
            if queue.items.is_empty() {
                self.end_turn(&peer, false);
            }
            return Some((peer, item));
        }
    }

    /// Ends the front peer's turn: to the back of the turn while it has
    /// items (`more`), otherwise out, its credit gone with its queue.
    fn end_turn(&mut self, peer: &P, more: bool) {
        self.turn.pop_front();
        self.credited = false;
        if more {
            self.turn.push_back(peer.clone());
        } else {
            self.queues.remove(peer);
        }
    }

    /// Every item `peer` has queued, oldest first; the peer leaves the turn.
    pub fn take_peer(&mut self, peer: &P) -> Vec<T> {
        let Some(queue) = self.queues.remove(peer) else {
            return Vec::new();
        };
        if self.turn.front() == Some(peer) {
            self.credited = false;
        }
        self.turn.retain(|p| p != peer);
        self.len -= queue.items.len();
        queue.items.into_iter().map(|(item, _)| item).collect()
    }

    /// Items queued by `peer`.
    #[cfg(test)]
    pub fn queued(&self, peer: &P) -> usize {
        self.queues.get(peer).map_or(0, |q| q.items.len())
    }

    /// Items queued in all.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is queued.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: usize = 1024;

    #[test]
    fn a_peer_holds_at_most_its_bound_and_gets_the_rest_back() {
        let mut q = FairQueue::new(3);
        for i in 0..3 {
            q.push("flood", i, K).unwrap();
        }
        assert_eq!(q.push("flood", 3, K), Err(Full(3)));
        assert_eq!(q.queued(&"flood"), 3);
        // Another peer has its own bound.
        q.push("quiet", 10, K).unwrap();
        assert_eq!(q.len(), 4);
        // Room again once one is served.
        assert_eq!(q.pop(), Some(("flood", 0)));
        q.push("flood", 3, K).unwrap();
        assert_eq!(q.queued(&"flood"), 3);
    }

    #[test]
    fn a_quiet_peer_is_served_within_one_frame_of_each_busy_peer() {
        let busy = ["a", "b", "c"];
        let mut q = FairQueue::new(16);
        for peer in busy {
            for i in 0..16 {
                // Frames of a 500-note push, larger than a turn's credit.
                q.push(peer, i, 160 * K).unwrap();
            }
        }
        // Some of the flood is served; then the quiet peer's note arrives.
        for _ in 0..7 {
            q.pop().unwrap();
        }
        q.push("quiet", 99, K).unwrap();
        let served: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        let at = served.iter().position(|(p, _)| *p == "quiet").unwrap();
        assert!(
            at <= busy.len(),
            "the quiet peer waited {at} frames behind {} busy peers",
            busy.len()
        );
        assert_eq!(served.len(), 3 * 16 - 7 + 1, "nothing lost");
    }

    #[test]
    fn with_hundreds_of_busy_friends_a_quiet_one_waits_at_most_a_frame_each() {
        // A family server with 300 friends all catching up at once, each
        // with a full queue of large frames.
        let busy: Vec<u32> = (0..300).collect();
        let mut q = FairQueue::new(16);
        for &peer in &busy {
            for i in 0..16 {
                q.push(peer, i, 160 * K).unwrap();
            }
            assert!(q.push(peer, 99, K).is_err(), "the bound holds");
        }
        for _ in 0..1_000 {
            q.pop().unwrap();
        }
        q.push(1_000, 7, K).unwrap();
        let served: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        let at = served.iter().position(|(p, _)| *p == 1_000).unwrap();
        assert!(at <= busy.len(), "the quiet friend waited {at} frames");
        assert_eq!(served.len(), 300 * 16 - 1_000 + 1, "nothing lost");
        assert!(q.is_empty());
    }

    #[test]
    fn peers_get_equal_bytes_whatever_their_frame_sizes() {
        let mut q = FairQueue::with_quantum(1_000, 64 * K);
        for i in 0..100 {
            q.push("big", i, 160 * K).unwrap();
        }
        for i in 0..1_000 {
            q.push("small", i, 2 * K).unwrap();
        }
        let mut bytes = HashMap::new();
        // While both have frames queued, the bytes served stay within one
        // turn plus one big frame of each other.
        for _ in 0..400 {
            let (peer, _) = q.pop().unwrap();
            let size = if peer == "big" { 160 * K } else { 2 * K };
            *bytes.entry(peer).or_insert(0usize) += size;
            let (b, s) = (bytes.get("big").copied(), bytes.get("small").copied());
            let (b, s) = (b.unwrap_or(0), s.unwrap_or(0));
            assert!(b.abs_diff(s) <= 64 * K + 160 * K, "big {b}, small {s}");
        }
        assert!(bytes["small"] > 0 && bytes["big"] > 0);
    }

    #[test]
    fn each_peer_is_served_in_its_own_order_and_in_turn() {
        // A credit of one item per turn: plain round-robin.
        let mut q = FairQueue::with_quantum(8, 1);
        for i in 0..4 {
            q.push("a", i, 1).unwrap();
        }
        q.push("b", 0, 1).unwrap();
        q.push("b", 1, 1).unwrap();
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            [("a", 0), ("b", 0), ("a", 1), ("b", 1), ("a", 2), ("a", 3)]
        );
        assert!(q.is_empty());
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn a_frame_larger_than_a_turn_is_served_once_its_credit_has_grown() {
        let mut q = FairQueue::with_quantum(8, 10);
        q.push("big", 1, 35).unwrap();
        q.push("small", 1, 10).unwrap();
        q.push("small", 2, 10).unwrap();
        q.push("small", 3, 10).unwrap();
        q.push("small", 4, 10).unwrap();
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        // "big" needs four turns of credit; "small" is served one a turn
        // meanwhile, and nothing is lost.
        assert_eq!(
            order,
            [
                ("small", 1),
                ("small", 2),
                ("small", 3),
                ("big", 1),
                ("small", 4)
            ]
        );
    }

    #[test]
    fn taking_a_peer_out_leaves_the_others_in_turn() {
        let mut q = FairQueue::new(8);
        q.push("a", 1, K).unwrap();
        q.push("b", 1, K).unwrap();
        q.push("a", 2, K).unwrap();
        q.push("c", 1, K).unwrap();
        assert_eq!(q.take_peer(&"a"), vec![1, 2]);
        assert_eq!(q.take_peer(&"a"), Vec::<i32>::new());
        assert_eq!(q.len(), 2);
        assert_eq!(q.pop(), Some(("b", 1)));
        assert_eq!(q.pop(), Some(("c", 1)));
        assert_eq!(q.pop(), None);
        // A peer that comes back joins the turn at its back.
        q.push("c", 2, K).unwrap();
        q.push("a", 3, K).unwrap();
        assert_eq!(q.pop(), Some(("c", 2)));
        assert_eq!(q.pop(), Some(("a", 3)));
    }
}
