//! The pull scheduler: each missing item announced by friends is asked of
//! one announcer at a time (the one offering the most hops, first come on a
//! tie), with a timeout after which the next announcer is asked. A cap on
//! asks in flight per friend keeps one slow friend from holding everything.
//! Iteration that decides outputs is in a fixed order, so runs replay.
//!
//! When every announcer of an item was asked in vain, the item is given up
//! (catch-up brings it later), but the announcers' offers are kept a while:
//! they do hold it, and the copy that arrives later from someone else may
//! travel fewer hops than they offered. Without that, a lost answer left a
//! short copy for good, and the friends past it without the item.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::output::Output;
use super::peer_map::PeerMap;
use crate::item::id::ItemId;
use crate::wire::{MAX_IDS_PER_MESSAGE, WireMessage};

/// Most given-up items whose offers are kept (oldest forgotten first). A
/// give-up needs every announcer to miss a 5 s answer, so even a phone on a
/// bad link gives up a few items an hour; 4,096 is hours of those, at about
/// 100 B each.
pub const MAX_STALE_OFFERS: usize = 4_096;

/// Rounds of asks over an item's announcers before it is given up: a
/// second round asks each once more. One lost `want` or answer (a phone
/// link drops about 1 % of messages in the simulated city) would otherwise
/// leave the item to the announcer's next catch-up session, which a quiet
/// friend runs only every 30 minutes (mesh-sim `clubs`, seed 13: a pair
/// still missing at the end of the run). A third round would mostly ask
/// friends that are gone or overloaded.
pub const WANT_ROUNDS: u8 = 2;

/// One wanted item.
#[derive(Debug, Default)]
struct WantState {
    /// Rounds over the announcers started, less one (see `WANT_ROUNDS`).
    rounds: u8,
    /// Friends that announced it, with the hops each offers us.
    candidates: Vec<(String, u8)>,
    /// Friends that did not answer in time, with their offers.
    tried: Vec<(String, u8)>,
    /// Asked of whom, and until when.
    asked: Option<(String, u64)>,
    /// In the waiting line for a friend with room.
    waiting: bool,
}

/// What became of an attempt to ask for an item.
enum Assign {
    Asked,
    Waiting,
    NoOneLeft,
}

/// All wanted items.
#[derive(Debug, Default)]
pub(super) struct Wants {
    /// Ordered: `peer_gone` walks it, and what it re-asks comes out in
    /// this order. At most `max_wanted` entries.
    map: BTreeMap<ItemId, WantState>,
    waiting: VecDeque<ItemId>,
    /// Asks in flight per friend (lookups only; one entry per friend).
    in_flight: PeerMap<usize>,
    deadlines: BTreeSet<(u64, ItemId)>,
    asks: PeerMap<Vec<ItemId>>,
    room_freed: bool,
    /// While we are served a catch-up session, new asks wait: the session
    /// is likely to bring the same items, and asking too would double them.
    hold: bool,
    /// Offers of given-up items (see the module doc), oldest first in
    /// `stale_order`; at most `MAX_STALE_OFFERS`.
    stale: BTreeMap<ItemId, Vec<(String, u8)>>,
    stale_order: VecDeque<ItemId>,
}

impl Wants {
    /// `peer` announced `id`, offering `offer` hops.
    pub(super) fn add(
        &mut self,
        id: ItemId,
        peer: &str,
        offer: u8,
        now_ms: u64,
        timeout_ms: u64,
        cap: usize,
    ) {
        let state = self.map.entry(id).or_default();
        if state.tried.iter().any(|(p, _)| p == peer) {
            return;
        }
        match state.candidates.iter_mut().find(|(p, _)| p == peer) {
            Some(c) => c.1 = c.1.max(offer),
            None => state.candidates.push((peer.to_owned(), offer)),
        }
        if state.asked.is_none() && !state.waiting {
            self.assign(id, now_ms, timeout_ms, cap);
        }
    }

    /// Holds new asks (while a catch-up session is served) or lets them go.
    pub(super) fn set_hold(&mut self, hold: bool) {
        if self.hold && !hold {
            self.room_freed = true;
        }
        self.hold = hold;
    }

    /// How many items are wanted.
    pub(super) fn len(&self) -> usize {
        self.map.len()
    }

    /// True if `id` is wanted.
    pub(super) fn contains(&self, id: &ItemId) -> bool {
        self.map.contains_key(id)
    }

    /// The earliest ask deadline.
    pub(super) fn next_deadline(&self) -> Option<u64> {
        self.deadlines.first().map(|(t, _)| *t)
    }

    /// The item arrived (from anyone): forget it and return every friend
    /// that announced it, with its offer (they hold it, and may give it more
    /// hops than its sender did).
    pub(super) fn received(&mut self, id: &ItemId) -> Vec<(String, u8)> {
        let stale = self.stale.remove(id);
        let Some(mut state) = self.map.remove(id) else {
            return stale.unwrap_or_default();
        };
        if let Some(mut stale) = stale {
            state.tried.append(&mut stale);
        }
        if let Some((peer, deadline)) = &state.asked {
            self.release(peer, *deadline, id);
        }
        state.candidates.append(&mut state.tried);
        state.candidates
    }

    /// Times out asks whose deadline passed and asks the next announcer;
    /// returns the items nobody is left to ask for.
    pub(super) fn expire(&mut self, now_ms: u64, timeout_ms: u64, cap: usize) -> Vec<ItemId> {
        let mut gave_up = Vec::new();
        while let Some(&(deadline, id)) = self.deadlines.first() {
            if deadline > now_ms {
                break;
            }
            self.deadlines.pop_first();
            let Some(state) = self.map.get_mut(&id) else {
                continue;
            };
            let Some((peer, _)) = state.asked.take() else {
                continue;
            };
            if let Some(i) = state.candidates.iter().position(|(p, _)| *p == peer) {
                let entry = state.candidates.remove(i);
                state.tried.push(entry);
            }
            if state.candidates.is_empty() && state.rounds + 1 < WANT_ROUNDS {
                state.rounds += 1;
                state.candidates = std::mem::take(&mut state.tried);
            }
            self.drop_in_flight(&peer);
            if let Assign::NoOneLeft = self.assign(id, now_ms, timeout_ms, cap) {
                if let Some(state) = self.map.remove(&id) {
                    self.keep_offers(id, state.tried);
                }
                gave_up.push(id);
            }
        }
        gave_up
    }

    /// Keeps the offers of a given-up item, forgetting the oldest past the
    /// bound.
    fn keep_offers(&mut self, id: ItemId, offers: Vec<(String, u8)>) {
        if offers.is_empty() {
            return;
        }
        if self.stale.insert(id, offers).is_none() {
            self.stale_order.push_back(id);
        }
        while self.stale.len() > MAX_STALE_OFFERS {
            let Some(old) = self.stale_order.pop_front() else {
                break;
            };
            self.stale.remove(&old);
        }
        // Ids received since were removed from the map only: drop them from
        // the line too once it is twice the bound.
        if self.stale_order.len() > 2 * MAX_STALE_OFFERS {
            let stale = &self.stale;
            self.stale_order.retain(|id| stale.contains_key(id));
        }
    }

    /// How many given-up items' offers are kept.
    #[cfg(test)]
    pub(super) fn stale_len(&self) -> usize {
        self.stale.len()
    }

    /// A friend disconnected: ask others for what it was asked for, drop it
    /// from every candidate list; returns the items nobody is left to ask.
    pub(super) fn peer_gone(
        &mut self,
        peer: &str,
        now_ms: u64,
        timeout_ms: u64,
        cap: usize,
    ) -> Vec<ItemId> {
        self.in_flight.remove(peer);
        self.asks.remove(peer);
        let affected: Vec<ItemId> = self
            .map
            .iter()
            .filter(|(_, s)| s.candidates.iter().any(|(p, _)| p == peer))
            .map(|(id, _)| *id)
            .collect();
        let mut gave_up = Vec::new();
        for id in affected {
            let Some(state) = self.map.get_mut(&id) else {
                continue;
            };
            state.candidates.retain(|(p, _)| p != peer);
            let was_asked = match state.asked.take() {
                Some((p, deadline)) if p == peer => {
                    self.deadlines.remove(&(deadline, id));
                    true
                }
                other => {
                    state.asked = other;
                    false
                }
            };
            let idle = self
                .map
                .get(&id)
                .is_some_and(|s| s.asked.is_none() && !s.waiting);
            if (was_asked || idle)
                && matches!(self.assign(id, now_ms, timeout_ms, cap), Assign::NoOneLeft)
            {
                self.map.remove(&id);
                gave_up.push(id);
            }
        }
        self.room_freed = true;
        gave_up
    }

    /// Emits one `Want` per friend for everything asked during this call,
    /// after giving waiting items any room that was freed.
    pub(super) fn flush_asks(
        &mut self,
        now_ms: u64,
        timeout_ms: u64,
        cap: usize,
        out: &mut Vec<Output>,
    ) {
        if self.room_freed {
            self.room_freed = false;
            let n = self.waiting.len();
            for _ in 0..n {
                let Some(id) = self.waiting.pop_front() else {
                    break;
                };
                let Some(state) = self.map.get_mut(&id) else {
                    continue;
                };
                if !state.waiting || state.asked.is_some() {
                    continue;
                }
                state.waiting = false;
                if let Assign::NoOneLeft = self.assign(id, now_ms, timeout_ms, cap) {
                    self.map.remove(&id);
                }
            }
        }
        for (peer, ids) in self.asks.take_sorted() {
            for chunk in ids.chunks(MAX_IDS_PER_MESSAGE) {
                out.push(Output::Send {
                    peer: peer.clone(),
                    message: WireMessage::Want {
                        ids: chunk.to_vec(),
                    },
                });
            }
        }
    }

    fn assign(&mut self, id: ItemId, now_ms: u64, timeout_ms: u64, cap: usize) -> Assign {
        let Some(state) = self.map.get_mut(&id) else {
            return Assign::NoOneLeft;
        };
        if state.candidates.is_empty() {
            return Assign::NoOneLeft;
        }
        let mut best: Option<usize> = None;
        for (i, (peer, offer)) in state.candidates.iter().enumerate() {
            if self.hold {
                break;
            }
            if self.in_flight.get(peer).copied().unwrap_or(0) >= cap {
                continue;
            }
            if best.is_none_or(|b| *offer > state.candidates[b].1) {
                best = Some(i);
            }
        }
        let Some(i) = best else {
            if !state.waiting {
                state.waiting = true;
                self.waiting.push_back(id);
            }
            return Assign::Waiting;
        };
        let peer = state.candidates[i].0.clone();
        let deadline = now_ms.saturating_add(timeout_ms);
        state.asked = Some((peer.clone(), deadline));
        state.waiting = false;
        *self.in_flight.entry(peer.clone()).or_default() += 1;
        self.deadlines.insert((deadline, id));
        self.asks.entry(peer).or_default().push(id);
        Assign::Asked
    }

    fn release(&mut self, peer: &str, deadline: u64, id: &ItemId) {
        self.deadlines.remove(&(deadline, *id));
        self.drop_in_flight(peer);
    }

    fn drop_in_flight(&mut self, peer: &str) {
        if let Some(n) = self.in_flight.get_mut(peer) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.in_flight.remove(peer);
            }
        }
        self.room_freed = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u16) -> ItemId {
        ItemId::numbered(n)
    }

    #[test]
    fn a_given_up_item_keeps_its_offers_for_the_copy_that_comes_later() {
        let mut w = Wants::default();
        w.add(id(1), "bob", 2, 0, 5_000, 8);
        assert!(w.expire(5_000, 5_000, 8).is_empty(), "asked again first");
        assert_eq!(w.expire(10_000, 5_000, 8), vec![id(1)]);
        assert!(!w.contains(&id(1)));
        assert_eq!(w.stale_len(), 1);
        assert_eq!(w.received(&id(1)), vec![("bob".to_owned(), 2)]);
        assert_eq!(w.stale_len(), 0);
        assert!(w.received(&id(1)).is_empty());
    }

    fn asks(w: &mut Wants, now_ms: u64) -> Vec<(String, Vec<ItemId>)> {
        let mut out = Vec::new();
        w.flush_asks(now_ms, 5_000, 8, &mut out);
        out.into_iter()
            .filter_map(|o| match o {
                Output::Send {
                    peer,
                    message: WireMessage::Want { ids },
                } => Some((peer, ids)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn every_announcer_is_asked_once_more_before_the_item_is_given_up() {
        let mut w = Wants::default();
        w.add(id(1), "bob", 2, 0, 5_000, 8);
        w.add(id(1), "carol", 1, 0, 5_000, 8);
        assert_eq!(asks(&mut w, 0), vec![("bob".to_owned(), vec![id(1)])]);
        assert!(w.expire(5_000, 5_000, 8).is_empty());
        assert_eq!(asks(&mut w, 5_000), vec![("carol".to_owned(), vec![id(1)])]);
        // Both missed once: the second round starts with the best offer.
        assert!(w.expire(10_000, 5_000, 8).is_empty());
        assert_eq!(asks(&mut w, 10_000), vec![("bob".to_owned(), vec![id(1)])]);
        assert!(w.expire(15_000, 5_000, 8).is_empty());
        assert_eq!(
            asks(&mut w, 15_000),
            vec![("carol".to_owned(), vec![id(1)])]
        );
        assert_eq!(
            w.expire(20_000, 5_000, 8),
            vec![id(1)],
            "two rounds, then given up"
        );
        assert!(asks(&mut w, 20_000).is_empty());
        assert!(!w.contains(&id(1)));
    }

    #[test]
    fn kept_offers_are_bounded_oldest_first() {
        let mut w = Wants::default();
        let n = MAX_STALE_OFFERS as u16 + 1;
        for i in 0..n {
            w.add(id(i), "bob", 1, u64::from(i), 5_000, usize::MAX);
        }
        w.expire(u64::from(n) + 5_000, 5_000, usize::MAX);
        w.expire(u64::from(n) + 10_000, 5_000, usize::MAX);
        assert_eq!(w.stale_len(), MAX_STALE_OFFERS);
        assert!(w.received(&id(0)).is_empty(), "the oldest was forgotten");
        assert_eq!(w.received(&id(n - 1)), vec![("bob".to_owned(), 1)]);
    }
}
