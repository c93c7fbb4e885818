//! Where this node and its friends can be reached: the `reachable_at`
//! items (docs/protocol.md, kind 8).
//!
//! - [`reach_list`] turns the driver's current addresses into what the item
//!   carries: no duplicates, in a stable order, circuits and external
//!   addresses before plain listen ones (they are what a friend behind
//!   another NAT can use), at most `MAX_REACH_ADDRESSES`.
//! - [`announce_reach`] signs the new item, replacing our previous one, and
//!   stores it (every publisher stores its item before the engine sees it);
//!   it returns `None` when the addresses are the ones already told.
//! - [`Announced`] holds each friend's newest addresses, read from the file
//!   at start ([`Announced::load`]) and kept current as items arrive
//!   ([`Announced::take`]); [`Announced::dial_list`] puts them before the
//!   addresses the user gave, so a friend that moved is dialled where it is
//!   now, and what it told before is dropped (each item replaces the last).

use std::collections::BTreeMap;

use porfiry_protocol::limits::MAX_REACH_ADDRESSES;
use porfiry_protocol::{
    Audience, Body, ItemId, ItemKind, NodeKey, PayloadDraft, ReachableAt, VerifiedItem, sign,
};
use porfiry_storage::{StorageError, Store};

use super::error::SharingError;
use super::item_rows::stored_record;
use crate::net::{Multiaddr, PeerId};

/// What goes in our item for the addresses the driver has now: each once,
/// relay circuits first, then the rest in text order, at most
/// `MAX_REACH_ADDRESSES` (a node with more interfaces than that keeps its
/// circuits and the first of the others). Loopback addresses reach only
/// this machine, so they are told only when there is nothing else (nodes
/// that all run on one machine).
pub fn reach_list(addresses: &[Multiaddr]) -> Vec<String> {
    use crate::net::Protocol;
    let is_circuit = |a: &Multiaddr| a.iter().any(|p| matches!(p, Protocol::P2pCircuit));
    let is_loopback = |a: &Multiaddr| match a.iter().next() {
        Some(Protocol::Ip4(ip)) => ip.is_loopback(),
        Some(Protocol::Ip6(ip)) => ip.is_loopback(),
        _ => false,
    };
    let only_loopback = addresses.iter().all(is_loopback);
    let mut texts: Vec<(bool, String)> = addresses
        .iter()
        .filter(|a| only_loopback || !is_loopback(a))
        .map(|a| (!is_circuit(a), a.to_string()))
        .collect();
    texts.sort();
    texts.dedup();
    texts
        .into_iter()
        .map(|(_, t)| t)
        .take(MAX_REACH_ADDRESSES)
        .collect()
}

/// Our newest `reachable_at` item in the file: its id and addresses.
pub fn own_reach(
    store: &Store,
    key: &NodeKey,
) -> Result<Option<(ItemId, Vec<String>)>, StorageError> {
    let own = key.peer_id().to_string();
    let newest = store
        .items_of_kind(ItemKind::ReachableAt)?
        .into_iter()
        .rev()
        .find(|i| i.record.author == own);
    Ok(newest.and_then(|stored| {
        let item = VerifiedItem::decode(&stored.payload, 0).ok()?;
        match item.body() {
            Body::ReachableAt(r) => Some((item.id(), r.addresses.clone())),
            _ => None,
        }
    }))
}

/// Signs and stores our item for `addresses`, replacing `previous` (our
/// last one: its id and what it said). `None`: nothing to tell, the
/// addresses are those told already (no item yet counts as none told).
pub fn announce_reach(
    store: &Store,
    key: &NodeKey,
    addresses: Vec<String>,
    previous: Option<&(ItemId, Vec<String>)>,
    now_ms: u64,
) -> Result<Option<VerifiedItem>, SharingError> {
    let told: &[String] = previous.map(|(_, a)| a.as_slice()).unwrap_or(&[]);
    if told == addresses.as_slice() {
        return Ok(None);
    }
    let item = sign(
        key,
        &PayloadDraft {
            created_ms: now_ms,
            audience: Audience::Friends,
            max_hops: 1,
            expires_ms: None,
            replaces: previous.map(|(id, _)| *id),
            body: Body::ReachableAt(ReachableAt { addresses }),
        },
    )?;
    store.insert_items(&[stored_record(&item, item.max_hops(), None)])?;
    Ok(Some(item))
}

/// One friend's newest addresses and when it said them.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Told {
    created_ms: u64,
    addresses: Vec<Multiaddr>,
}

/// Each friend's newest told addresses, by peer id string.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Announced {
    by_peer: BTreeMap<String, Told>,
}

impl Announced {
    /// What the friends' items in the file say (ours is left out).
    pub fn load(store: &Store, local: &str) -> Result<Announced, StorageError> {
        let mut announced = Announced::default();
        for stored in store.items_of_kind(ItemKind::ReachableAt)? {
            if stored.record.author == local {
                continue;
            }
            match VerifiedItem::decode(&stored.payload, 0) {
                Ok(item) => {
                    announced.take(&item, stored.record.received_from.as_deref());
                }
                Err(error) => {
                    tracing::warn!(id = %stored.record.id, %error, "stored addresses item left out")
                }
            }
        }
        Ok(announced)
    }

    /// Takes in `item` if it is a `reachable_at` its author sent us itself
    /// (`received_from`) and newer than what that author told before.
    /// Returns whether the author's addresses changed. Addresses that do
    /// not parse here are left out (the protocol checked their syntax).
    pub fn take(&mut self, item: &VerifiedItem, received_from: Option<&str>) -> bool {
        let Body::ReachableAt(r) = item.body() else {
            return false;
        };
        let author = item.author_peer_id();
        if received_from != Some(author) {
            return false;
        }
        if self
            .by_peer
            .get(author)
            .is_some_and(|t| t.created_ms >= item.created_ms())
        {
            return false;
        }
        let addresses: Vec<Multiaddr> = r.addresses.iter().filter_map(|a| a.parse().ok()).collect();
        let changed = self.by_peer.get(author).map(|t| &t.addresses) != Some(&addresses);
        self.by_peer.insert(
            author.to_owned(),
            Told {
                created_ms: item.created_ms(),
                addresses,
            },
        );
        changed
    }

    /// What `peer` told us, empty if nothing.
    pub fn of(&self, peer: &str) -> &[Multiaddr] {
        self.by_peer
            .get(peer)
            .map(|t| t.addresses.as_slice())
            .unwrap_or(&[])
    }

    /// Where to dial `peer`: what it told us, then what the user gave
    /// (an invitation's or `friends add`'s addresses) that it did not,
    /// each once. (The swarm appends `/p2p/PEER` to each when it dials,
    /// which makes a told relay slot a circuit to the friend.)
    pub fn dial_list(&self, peer: &PeerId, given: &[Multiaddr]) -> Vec<Multiaddr> {
        let mut out: Vec<Multiaddr> = Vec::new();
        let told = self.of(&peer.to_string()).iter();
        for address in told.chain(given) {
            if !out.contains(address) {
                out.push(address.clone());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
