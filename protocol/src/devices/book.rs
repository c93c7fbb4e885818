//! `DeviceBook`: which nodes are this node's person's devices, computed
//! from the link and unlink statements held.
//!
//! A link is live unless the book holds an unlink of the same pair dated at
//! or after it (a tie ends it: when in doubt, memory stops flowing); a
//! later link of the pair brings it back. This node's devices are the nodes
//! a chain of live links connects it to, whatever order the statements
//! arrived in. A former device is one any held link, live or not, connects
//! to this node: `device_link` items still go to it, so that the side an
//! unlink ends learns of it.
//!
//! The book takes only statements whose signatures verify and that involve
//! this node or one of its devices now, so a device link is not a
//! friendship a third node can claim, and it is bounded: at most
//! [`MAX_DEVICES`] devices and [`MAX_DEVICE_STATEMENTS`] statements.

use std::collections::{BTreeMap, BTreeSet};

use super::{
    DeviceError, DeviceLink, DeviceStatement, DeviceUnlink, MAX_DEVICE_STATEMENTS, MAX_DEVICES,
};

/// A pair of nodes, in ascending text order.
type Pair = (String, String);

fn pair_of((x, y): (&str, &str)) -> Pair {
    (x.to_owned(), y.to_owned())
}

/// The devices of this node's person, from the statements held.
#[derive(Debug, Clone)]
pub struct DeviceBook {
    local: String,
    /// The latest link held per pair.
    links: BTreeMap<Pair, DeviceLink>,
    /// The latest unlink held per pair.
    unlinks: BTreeMap<Pair, DeviceUnlink>,
    /// Nodes live links connect to `local` (never `local`).
    devices: BTreeSet<String>,
    /// Nodes any held link connects to `local` (never `local`).
    former: BTreeSet<String>,
}

impl DeviceBook {
    /// An empty book for the node `local` (no devices).
    pub fn new(local: &str) -> DeviceBook {
        DeviceBook {
            local: local.to_owned(),
            links: BTreeMap::new(),
            unlinks: BTreeMap::new(),
            devices: BTreeSet::new(),
            former: BTreeSet::new(),
        }
    }

    /// The node this book routes for.
    pub fn local(&self) -> &str {
        &self.local
    }

    /// True if `peer` is one of this node's devices now (never this node).
    pub fn is_device(&self, peer: &str) -> bool {
        self.devices.contains(peer)
    }

    /// True if `peer` is or was one of this node's devices (linked by a
    /// link the book holds, live or ended).
    pub fn was_device(&self, peer: &str) -> bool {
        self.former.contains(peer)
    }

    /// This node's devices now, in order.
    pub fn devices(&self) -> impl Iterator<Item = &str> {
        self.devices.iter().map(String::as_str)
    }

    /// How many devices this node has now.
    pub fn device_count(&self) -> usize {
        self.devices.len()
    }

    /// How many statements are held.
    pub fn statement_count(&self) -> usize {
        self.links.len() + self.unlinks.len()
    }

    /// The live links held, by pair.
    pub fn links(&self) -> impl Iterator<Item = &DeviceLink> {
        self.links.values().filter(|l| self.is_live(l))
    }

    /// Every statement held (links first), to persist or pass on.
    pub fn statements(&self) -> impl Iterator<Item = DeviceStatement> + '_ {
        let links = self.links.values().cloned().map(DeviceStatement::Link);
        links.chain(self.unlinks.values().cloned().map(DeviceStatement::Unlink))
    }

    /// Since when `peer` is linked: the earliest live link naming it.
    pub fn linked_since(&self, peer: &str) -> Option<u64> {
        self.links()
            .filter(|l| l.involves(peer))
            .map(|l| l.since_ms)
            .min()
    }

    /// Takes a statement (see [`DeviceBook::insert_link`] and
    /// [`DeviceBook::insert_unlink`]).
    pub fn insert(&mut self, statement: &DeviceStatement) -> Result<bool, DeviceError> {
        match statement {
            DeviceStatement::Link(l) => self.insert_link(l),
            DeviceStatement::Unlink(u) => self.insert_unlink(u),
        }
    }

    /// Takes a link whose two signatures verify and that involves this node
    /// or one of its devices. Returns false if the book held it (or a later
    /// link of the pair) already. Refused, leaving the book as it was, if it
    /// would give this node more than [`MAX_DEVICES`] devices.
    pub fn insert_link(&mut self, link: &DeviceLink) -> Result<bool, DeviceError> {
        link.verify()?;
        if !self.concerns(&link.a) && !self.concerns(&link.b) {
            return Err(DeviceError::NotOurs);
        }
        let pair = pair_of(link.pair());
        if self
            .links
            .get(&pair)
            .is_some_and(|h| h.since_ms >= link.since_ms)
        {
            return Ok(false);
        }
        if !self.links.contains_key(&pair) && self.statement_count() >= MAX_DEVICE_STATEMENTS {
            return Err(DeviceError::TooManyStatements);
        }
        let old = self.links.insert(pair.clone(), link.clone());
        let devices = self.reach(true);
        if devices.len() > MAX_DEVICES {
            match old {
                Some(old) => self.links.insert(pair, old),
                None => self.links.remove(&pair),
            };
            return Err(DeviceError::TooManyDevices);
        }
        self.devices = devices;
        self.former = self.reach(false);
        Ok(true)
    }

    /// Takes an unlink whose signature verifies (by its `by`) and that
    /// involves this node or one of its devices. Returns false if the book
    /// held it (or a later unlink of the pair) already.
    pub fn insert_unlink(&mut self, unlink: &DeviceUnlink) -> Result<bool, DeviceError> {
        unlink.verify()?;
        if !self.concerns(&unlink.by) && !self.concerns(&unlink.other) {
            return Err(DeviceError::NotOurs);
        }
        let pair = pair_of(unlink.pair());
        if self
            .unlinks
            .get(&pair)
            .is_some_and(|h| h.at_ms >= unlink.at_ms)
        {
            return Ok(false);
        }
        if !self.unlinks.contains_key(&pair) && self.statement_count() >= MAX_DEVICE_STATEMENTS {
            return Err(DeviceError::TooManyStatements);
        }
        self.unlinks.insert(pair, unlink.clone());
        self.devices = self.reach(true);
        Ok(true)
    }

    /// This node or one of its devices now.
    fn concerns(&self, peer: &str) -> bool {
        peer == self.local || self.devices.contains(peer)
    }

    /// True if no unlink of its pair is dated at or after it.
    fn is_live(&self, link: &DeviceLink) -> bool {
        self.unlinks
            .get(&pair_of(link.pair()))
            .is_none_or(|u| u.at_ms < link.since_ms)
    }

    /// The nodes connected to `local` by held links (live ones only, or
    /// all), `local` left out.
    fn reach(&self, live_only: bool) -> BTreeSet<String> {
        let mut seen = BTreeSet::from([self.local.as_str()]);
        let mut frontier = vec![self.local.as_str()];
        let edges: Vec<(&str, &str)> = self
            .links
            .values()
            .filter(|l| !live_only || self.is_live(l))
            .map(DeviceLink::pair)
            .collect();
        while let Some(x) = frontier.pop() {
            for &(p, q) in &edges {
                let next = if p == x {
                    q
                } else if q == x {
                    p
                } else {
                    continue;
                };
                if seen.insert(next) {
                    frontier.push(next);
                }
            }
        }
        seen.remove(self.local.as_str());
        seen.into_iter().map(str::to_owned).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::devices::LinkProposal;
    use crate::identity::NodeKey;

    fn node(n: u16) -> NodeKey {
        let mut seed = [0x33; 32];
        seed[..2].copy_from_slice(&n.to_le_bytes());
        NodeKey::from_seed(seed)
    }

    fn id(n: u16) -> String {
        node(n).peer_id().to_string()
    }

    fn link(a: u16, b: u16, since_ms: u64) -> DeviceLink {
        LinkProposal::new(&node(a), &id(b), since_ms)
            .unwrap()
            .countersign(&node(b))
            .unwrap()
    }

    fn unlink(by: u16, other: u16, at_ms: u64) -> DeviceUnlink {
        DeviceUnlink::sign(&node(by), &id(other), at_ms).unwrap()
    }

    fn devices(book: &DeviceBook) -> Vec<String> {
        book.devices().map(str::to_owned).collect()
    }

    fn ids(ns: &[u16]) -> Vec<String> {
        let mut v: Vec<String> = ns.iter().map(|&n| id(n)).collect();
        v.sort();
        v
    }

    #[test]
    fn devices_are_the_nodes_a_chain_of_links_reaches() {
        let mut book = DeviceBook::new(&id(0));
        assert_eq!(book.insert_link(&link(0, 1, 10)), Ok(true));
        assert_eq!(book.insert_link(&link(2, 1, 20)), Ok(true));
        assert_eq!(devices(&book), ids(&[1, 2]));
        assert!(book.is_device(&id(2)) && !book.is_device(&id(0)));
        // Held already (or an older link of the pair): nothing new.
        assert_eq!(book.insert_link(&link(1, 0, 10)), Ok(false));
        assert_eq!(book.insert_link(&link(0, 1, 5)), Ok(false));
        assert_eq!(book.linked_since(&id(1)), Some(10));
        assert_eq!(book.links().count(), 2);
    }

    #[test]
    fn a_link_between_strangers_is_not_taken_until_it_concerns_us() {
        let mut book = DeviceBook::new(&id(0));
        // 3 and 4 are nobody's devices here: a third node cannot make us
        // route to them by showing their link.
        assert_eq!(book.insert_link(&link(3, 4, 10)), Err(DeviceError::NotOurs));
        assert_eq!(book.insert_link(&link(1, 3, 10)), Err(DeviceError::NotOurs));
        book.insert_link(&link(0, 1, 10)).unwrap();
        assert_eq!(book.insert_link(&link(1, 3, 10)), Ok(true));
        assert_eq!(devices(&book), ids(&[1, 3]));
        assert_eq!(book.statement_count(), 2);
    }

    #[test]
    fn forged_links_are_refused_and_change_nothing() {
        let mut book = DeviceBook::new(&id(0));
        let mut forged = link(0, 1, 10);
        forged.sig_b = link(0, 2, 10).sig_b;
        assert!(matches!(
            book.insert_link(&forged),
            Err(DeviceError::BadSignature(_))
        ));
        assert_eq!(book.device_count(), 0);
        assert_eq!(book.statement_count(), 0);
    }

    #[test]
    fn a_later_unlink_ends_a_link_and_a_later_link_brings_it_back() {
        let mut book = DeviceBook::new(&id(0));
        book.insert_link(&link(0, 1, 10)).unwrap();
        book.insert_link(&link(1, 2, 20)).unwrap();
        // An unlink dated before the link does nothing.
        book.insert_unlink(&unlink(1, 0, 9)).unwrap();
        assert_eq!(devices(&book), ids(&[1, 2]));
        // Dated at it or after: 1 goes, and 2 with it (only 1 linked it).
        assert_eq!(book.insert_unlink(&unlink(1, 0, 10)), Ok(true));
        assert_eq!(book.device_count(), 0);
        assert!(book.was_device(&id(1)) && book.was_device(&id(2)));
        assert!(!book.was_device(&id(0)) && !book.was_device(&id(3)));
        // An older unlink of the pair adds nothing.
        assert_eq!(book.insert_unlink(&unlink(0, 1, 10)), Ok(false));
        // Linked again, later: both are back.
        book.insert_link(&link(0, 1, 11)).unwrap();
        assert_eq!(devices(&book), ids(&[1, 2]));
        assert_eq!(book.linked_since(&id(1)), Some(11));
    }

    #[test]
    fn the_same_statements_give_the_same_devices_in_any_order() {
        let statements = [
            DeviceStatement::Link(link(0, 1, 10)),
            DeviceStatement::Link(link(1, 2, 20)),
            DeviceStatement::Unlink(unlink(2, 1, 30)),
            DeviceStatement::Link(link(0, 3, 40)),
        ];
        let mut forward = DeviceBook::new(&id(0));
        for s in &statements {
            forward.insert(s).unwrap();
        }
        // Backward, the unlink of 1-2 first: it concerns nobody of ours
        // yet, so it is retried once the links that make it ours are in.
        let mut backward = DeviceBook::new(&id(0));
        let mut later = Vec::new();
        for s in statements.iter().rev() {
            if backward.insert(s) == Err(DeviceError::NotOurs) {
                later.push(s);
            }
        }
        for s in later.into_iter().rev() {
            backward.insert(s).unwrap();
        }
        assert_eq!(devices(&forward), devices(&backward));
        assert_eq!(devices(&forward), ids(&[1, 3]));
        assert_eq!(forward.statements().count(), backward.statements().count());
    }

    #[test]
    fn an_unlink_by_a_third_node_is_refused() {
        let mut book = DeviceBook::new(&id(0));
        book.insert_link(&link(0, 1, 10)).unwrap();
        // 5 signs an unlink claiming 1 ended its link with 0.
        let mut claimed = unlink(5, 0, 20);
        claimed.by = id(1);
        assert!(matches!(
            book.insert_unlink(&claimed),
            Err(DeviceError::BadSignature(_))
        ));
        // 5 unlinking itself from 6: not about us.
        assert_eq!(
            book.insert_unlink(&unlink(5, 6, 20)),
            Err(DeviceError::NotOurs)
        );
        assert_eq!(devices(&book), ids(&[1]));
    }

    #[test]
    fn the_book_holds_at_most_max_devices() {
        let mut book = DeviceBook::new(&id(0));
        for n in 1..=MAX_DEVICES as u16 {
            book.insert_link(&link(0, n, 10)).unwrap();
        }
        assert_eq!(book.device_count(), MAX_DEVICES);
        let one_more = link(0, 1_000, 10);
        assert_eq!(
            book.insert_link(&one_more),
            Err(DeviceError::TooManyDevices)
        );
        assert!(!book.was_device(&id(1_000)));
        // Through a device, the same.
        assert_eq!(
            book.insert_link(&link(1, 1_000, 10)),
            Err(DeviceError::TooManyDevices)
        );
        // Once one leaves, there is room.
        book.insert_unlink(&unlink(0, 1, 11)).unwrap();
        assert_eq!(book.insert_link(&one_more), Ok(true));
        assert_eq!(book.device_count(), MAX_DEVICES);
    }

    #[test]
    fn the_book_holds_at_most_max_device_statements() {
        let mut book = DeviceBook::new(&id(0));
        for n in 1..=MAX_DEVICE_STATEMENTS as u16 {
            book.insert_unlink(&unlink(0, n, 10)).unwrap();
        }
        assert_eq!(
            book.insert_unlink(&unlink(0, 999, 10)),
            Err(DeviceError::TooManyStatements)
        );
        assert_eq!(
            book.insert_link(&link(0, 999, 10)),
            Err(DeviceError::TooManyStatements)
        );
        // A later statement of a pair held replaces it.
        assert_eq!(book.insert_unlink(&unlink(0, 1, 11)), Ok(true));
        assert_eq!(book.statement_count(), MAX_DEVICE_STATEMENTS);
    }
}
