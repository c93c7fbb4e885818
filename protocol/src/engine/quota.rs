//! Quotas: what one author may make this node store and relay, and how much
//! of strangers' public items it keeps at all.
//!
//! A public item travels up to its hop limit, so a node two hops away (a
//! stranger) can fill a disk through a friend one valid signed note at a
//! time. Each author therefore has a budget of items and bytes held here:
//! a generous one for the people this node trusts (its friends and the
//! members of its clubs), a small one for everybody else. An item past its
//! author's budget is refused at the edge, before it is stored or queued
//! for relay, and counted against that author ([`Refused`]); no other
//! author's item is ever dropped to make room for it.
//!
//! Apart from the per-author budget, strangers' public items together are
//! kept within [`Quotas::strangers_kept`]: past it the oldest goes
//! ([`super::DeleteReason::Evicted`]). This node's own items, its friends'
//! and its clubs' never count there.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use crate::item::id::ItemId;

/// Items one trusted author (a friend, a club fellow) may have held here.
/// A diary of a hundred notes a day for five years is 182,500 items; a
/// quarter of a million leaves room for strategies, ratings and the rest
/// while still bounding a friend whose node went wrong.
pub const DEFAULT_QUOTA_FRIEND_ITEMS: u32 = 250_000;

/// Bytes one trusted author may have held here: 1 GiB, some 4 KiB per item
/// at the item budget (a note is at most `MAX_NOTE_BYTES`, most are far
/// smaller), a tenth of a small home server's spare disk.
pub const DEFAULT_QUOTA_FRIEND_BYTES: u64 = 1 << 30;

/// Items one stranger (an author who is neither a friend nor a club fellow)
/// may have held here. Strangers' items are public notes relayed by
/// friends: ten thousand is years of a very active friend of a friend's
/// posts (a thousand was first chosen, and cut off a test's ordinary
/// 1,001-note catch-up from a friend of a friend), while a flood's cost
/// stays a few tens of megabytes per author and `DEFAULT_STRANGERS_KEPT`
/// bounds all strangers together.
pub const DEFAULT_QUOTA_STRANGER_ITEMS: u32 = 10_000;

/// Bytes one stranger may have held here: 32 MiB, about 3 KiB per item at
/// the item budget (a public note is a few hundred bytes).
pub const DEFAULT_QUOTA_STRANGER_BYTES: u64 = 32 << 20;

/// Strangers' public items kept in all, oldest out first: 100,000 notes of
/// a few hundred bytes are tens of megabytes, within what a family server
/// spares for what friends of friends say, and ten times the club-sized
/// mesh's traffic in a day.
pub const DEFAULT_STRANGERS_KEPT: u32 = 100_000;

/// Strangers' items one friend's link may bring per minute, all authors
/// together: 6,000 (100 a second) is far above what friends of friends
/// write in a club (the city scenario's busiest link carries a few a
/// minute) and bounds what one link can make this node verify and store
/// while a flood lasts. Items past it are refused without being
/// remembered, so the friend offers them again at a later catch-up: a slow
/// link, not a lost item.
pub const DEFAULT_STRANGER_ITEMS_PER_LINK_MINUTE: u32 = 6_000;

/// Authors whose refusals are remembered for `porfiry status`; past it the
/// one refused longest ago is forgotten. A flood comes from a few authors;
/// 1,024 keeps them all while bounding what a node must remember to a few
/// hundred kilobytes even if every refused item had a new author.
pub const MAX_REFUSED_AUTHORS: usize = 1_024;

/// Refused and evicted items remembered, so that friends' catch-up does not
/// send them again every resync (they join the range-sync set this node
/// answers with, as if held) and a re-offered one is refused without a
/// second look. Past it the oldest is forgotten and may be offered once
/// more. A flood's 100,000 items at about 100 bytes each (id, time, author
/// pointer, the map's and the queue's share) are 10 MB, what a phone can
/// spare for this.
pub const MAX_DECLINED_REMEMBERED: usize = 100_000;

/// The budgets (see the constants for the defaults' reasons).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quotas {
    /// Items a trusted author may have held here.
    pub friend_items: u32,
    /// Bytes a trusted author may have held here.
    pub friend_bytes: u64,
    /// Items a stranger may have held here.
    pub stranger_items: u32,
    /// Bytes a stranger may have held here.
    pub stranger_bytes: u64,
    /// Strangers' public items kept in all, oldest out first.
    pub strangers_kept: u32,
    /// Strangers' items one friend's link may bring per minute.
    pub stranger_items_per_link_minute: u32,
}

impl Default for Quotas {
    fn default() -> Quotas {
        Quotas {
            friend_items: DEFAULT_QUOTA_FRIEND_ITEMS,
            friend_bytes: DEFAULT_QUOTA_FRIEND_BYTES,
            stranger_items: DEFAULT_QUOTA_STRANGER_ITEMS,
            stranger_bytes: DEFAULT_QUOTA_STRANGER_BYTES,
            strangers_kept: DEFAULT_STRANGERS_KEPT,
            stranger_items_per_link_minute: DEFAULT_STRANGER_ITEMS_PER_LINK_MINUTE,
        }
    }
}

impl Quotas {
    /// True if one more item of `bytes` from an author with `usage` held
    /// stays within the author's budget.
    pub(crate) fn admits(&self, trusted: bool, usage: Usage, bytes: u32) -> bool {
        let (items, max_bytes) = if trusted {
            (self.friend_items, self.friend_bytes)
        } else {
            (self.stranger_items, self.stranger_bytes)
        };
        usage.items < items && usage.bytes.saturating_add(u64::from(bytes)) <= max_bytes
    }
}

/// A token bucket: one link's allowance of strangers' items, refilled
/// evenly over a minute up to a minute's worth.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LinkRate {
    tokens: f64,
    at_ms: u64,
}

impl LinkRate {
    /// A full bucket at `now_ms`.
    pub(crate) fn full(per_minute: u32, now_ms: u64) -> LinkRate {
        LinkRate {
            tokens: f64::from(per_minute),
            at_ms: now_ms,
        }
    }

    /// Takes one token if there is one.
    pub(crate) fn take(&mut self, per_minute: u32, now_ms: u64) -> bool {
        let rate = f64::from(per_minute) / 60_000.0;
        let elapsed = now_ms.saturating_sub(self.at_ms) as f64;
        self.tokens = (self.tokens + elapsed * rate).min(f64::from(per_minute));
        self.at_ms = self.at_ms.max(now_ms);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// What one author's held items cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Items held.
    pub items: u32,
    /// Their envelopes' bytes.
    pub bytes: u64,
}

impl Usage {
    pub(crate) fn add(&mut self, bytes: u32) {
        self.items = self.items.saturating_add(1);
        self.bytes = self.bytes.saturating_add(u64::from(bytes));
    }

    pub(crate) fn sub(&mut self, bytes: u32) {
        self.items = self.items.saturating_sub(1);
        self.bytes = self.bytes.saturating_sub(u64::from(bytes));
    }
}

/// What was refused of one author since the node started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The author's peer id.
    pub author: String,
    /// Items refused.
    pub items: u64,
    /// Their envelopes' bytes.
    pub bytes: u64,
    /// When the last one was refused (Unix ms).
    pub last_ms: u64,
}

#[derive(Debug, Clone)]
struct Count {
    /// The author, shared with the declined items it wrote.
    name: Arc<str>,
    items: u64,
    bytes: u64,
    last_ms: u64,
}

/// Refusals per author, at most [`MAX_REFUSED_AUTHORS`] of them.
#[derive(Debug, Default)]
pub(crate) struct Refusals {
    by_author: BTreeMap<Arc<str>, Count>,
}

impl Refusals {
    /// Counts one refused item of `bytes` by `author`; the author's shared
    /// name.
    pub(crate) fn count(&mut self, now_ms: u64, author: &str, bytes: u32) -> Arc<str> {
        if let Some(c) = self.by_author.get_mut(author) {
            c.items += 1;
            c.bytes += u64::from(bytes);
            c.last_ms = now_ms;
            return Arc::clone(&c.name);
        }
        let author: Arc<str> = Arc::from(author);
        if !self.by_author.contains_key(&author) && self.by_author.len() >= MAX_REFUSED_AUTHORS {
            let oldest = self
                .by_author
                .iter()
                .min_by_key(|(a, c)| (c.last_ms, Arc::clone(a)))
                .map(|(a, _)| Arc::clone(a));
            if let Some(a) = oldest {
                self.by_author.remove(&a);
            }
        }
        self.by_author.insert(
            Arc::clone(&author),
            Count {
                name: Arc::clone(&author),
                items: 1,
                bytes: u64::from(bytes),
                last_ms: now_ms,
            },
        );
        author
    }

    /// Every author refused, most items first.
    pub(crate) fn list(&self) -> Vec<Refused> {
        let mut out: Vec<Refused> = self
            .by_author
            .iter()
            .map(|(a, c)| Refused {
                author: a.to_string(),
                items: c.items,
                bytes: c.bytes,
                last_ms: c.last_ms,
            })
            .collect();
        out.sort_by(|a, b| b.items.cmp(&a.items).then_with(|| a.author.cmp(&b.author)));
        out
    }
}

/// Items refused or evicted, remembered (at most
/// [`MAX_DECLINED_REMEMBERED`], oldest forgotten first) with their creation
/// time and author.
#[derive(Debug, Default)]
pub(crate) struct Declined {
    by_id: BTreeMap<ItemId, (u64, Arc<str>)>,
    order: VecDeque<ItemId>,
}

impl Declined {
    pub(crate) fn remember(&mut self, id: ItemId, created_ms: u64, author: Arc<str>) {
        if self.by_id.insert(id, (created_ms, author)).is_none() {
            self.order.push_back(id);
        }
        while self.order.len() > MAX_DECLINED_REMEMBERED {
            if let Some(old) = self.order.pop_front() {
                self.by_id.remove(&old);
            }
        }
    }

    /// The author of a remembered item.
    pub(crate) fn author(&self, id: &ItemId) -> Option<&str> {
        self.by_id.get(id).map(|(_, a)| &**a)
    }

    /// Every remembered item as (creation time, id).
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, ItemId)> + '_ {
        self.by_id.iter().map(|(id, (t, _))| (*t, *id))
    }

    /// Forgets the items of the authors `keep_out` names (a friend now, a
    /// budget raised): they may be offered and taken again.
    pub(crate) fn forget_where(&mut self, mut forget: impl FnMut(&str) -> bool) {
        self.by_id.retain(|_, (_, a)| !forget(a));
        let by_id = &self.by_id;
        self.order.retain(|id| by_id.contains_key(id));
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.order.len()
    }
}

/// Strangers' public items held, oldest first, for the retention bound.
#[derive(Debug, Default)]
pub(crate) struct StrangerShelf {
    by_age: BTreeSet<(u64, ItemId)>,
}

impl StrangerShelf {
    pub(crate) fn put(&mut self, created_ms: u64, id: ItemId) {
        self.by_age.insert((created_ms, id));
    }

    pub(crate) fn remove(&mut self, created_ms: u64, id: &ItemId) {
        self.by_age.remove(&(created_ms, *id));
    }

    pub(crate) fn clear(&mut self) {
        self.by_age.clear();
    }

    pub(crate) fn len(&self) -> usize {
        self.by_age.len()
    }

    /// Takes the oldest item.
    pub(crate) fn pop_oldest(&mut self) -> Option<ItemId> {
        self.by_age.pop_first().map(|(_, id)| id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_admits_up_to_its_items_and_bytes() {
        let q = Quotas {
            friend_items: 3,
            friend_bytes: 100,
            stranger_items: 1,
            stranger_bytes: 10,
            strangers_kept: 5,
            stranger_items_per_link_minute: 60,
        };
        let u = |items, bytes| Usage { items, bytes };
        assert!(q.admits(true, u(2, 50), 50));
        assert!(!q.admits(true, u(3, 0), 1), "item budget");
        assert!(!q.admits(true, u(0, 60), 41), "byte budget");
        assert!(q.admits(false, u(0, 0), 10));
        assert!(!q.admits(false, u(1, 0), 1));
    }

    #[test]
    fn a_link_rate_allows_a_minutes_worth_then_refills_evenly() {
        let mut r = LinkRate::full(60, 0);
        assert_eq!((0..100).filter(|_| r.take(60, 0)).count(), 60);
        assert!(!r.take(60, 999), "a token a second");
        assert!(r.take(60, 1_000));
        assert_eq!(
            (0..100).filter(|_| r.take(60, 61_000)).count(),
            60,
            "never past a minute's worth"
        );
    }

    #[test]
    fn refusals_are_bounded_and_forget_the_oldest() {
        let mut r = Refusals::default();
        for i in 0..MAX_REFUSED_AUTHORS as u64 {
            r.count(i + 10, &format!("a{i}"), 7);
        }
        r.count(5_000, "a0", 3);
        r.count(5_001, "new", 1);
        let list = r.list();
        assert_eq!(list.len(), MAX_REFUSED_AUTHORS);
        assert!(list.iter().any(|x| x.author == "new"));
        assert!(
            !list.iter().any(|x| x.author == "a1"),
            "the author refused longest ago goes"
        );
        assert_eq!(list[0].author, "a0");
        assert_eq!((list[0].items, list[0].bytes), (2, 10));
    }

    #[test]
    fn declined_items_are_bounded_and_forgotten_by_author() {
        let mut d = Declined::default();
        let (a, b): (Arc<str>, Arc<str>) = (Arc::from("a"), Arc::from("b"));
        for i in 0..MAX_DECLINED_REMEMBERED as u32 + 2 {
            let mut id = [0u8; 32];
            id[..4].copy_from_slice(&i.to_be_bytes());
            let who = if i % 2 == 0 { &a } else { &b };
            d.remember(ItemId(id), u64::from(i), Arc::clone(who));
        }
        assert_eq!(d.len(), MAX_DECLINED_REMEMBERED);
        assert_eq!(d.author(&ItemId([0; 32])), None, "the oldest went first");
        d.forget_where(|x| x == "a");
        assert_eq!(d.len(), MAX_DECLINED_REMEMBERED / 2);
        assert!(d.iter().all(|(t, _)| t % 2 == 1));
    }

    #[test]
    fn the_shelf_gives_up_its_oldest_first() {
        let mut s = StrangerShelf::default();
        for i in 0..5u8 {
            s.put(u64::from(10 - i), ItemId([i; 32]));
        }
        assert_eq!(s.pop_oldest(), Some(ItemId([4; 32])));
        s.remove(9, &ItemId([1; 32]));
        assert_eq!(s.pop_oldest(), Some(ItemId([3; 32])));
        assert_eq!(s.len(), 2);
    }
}
