//! Shared helpers for the engine tests and benches: deterministic keys and
//! signed items, and a tiny discrete-event network that drives real engines
//! through the real wire codec and edge verification, with a fake clock.
//!
//! The network plays the driver's part exactly as docs/wire.md describes:
//! it stores what `Store` says, deletes what `Delete` says, fills
//! `SendItems` from its store with `wire::pack_items` (and `SendChunk` with
//! `wire::pack_chunk`, reporting `ItemsDrained` when the frames arrive), encodes every message
//! with `wire::encode`, decodes it at the far end with `wire::decode` and
//! verifies envelopes with `Inbound::from_wire`. It counts every envelope
//! delivered (payload copies) and every byte on the wire.

#![allow(dead_code)] // each test file uses a different part of this

mod net;

#[allow(unused_imports)] // not every test file uses the network
pub use net::{Net, SimNode};

use porfiry_protocol::engine::{Engine, EngineConfig, Event, Inbound, Input, Output};
use porfiry_protocol::item::body::{Body, Note, Retraction};
use porfiry_protocol::wire::{self, Announce, WireItem, WireMessage};
use porfiry_protocol::{Audience, ItemId, NodeKey, PayloadDraft, VerifiedItem, sign};

/// The key of test node `n` (seeded, so runs repeat).
pub fn key(n: usize) -> NodeKey {
    let mut seed = [0u8; 32];
    seed[..8].copy_from_slice(&(n as u64 + 1).to_le_bytes());
    seed[31] = 0x5a;
    NodeKey::from_seed(seed)
}

/// The peer id string of test node `n`.
pub fn peer(n: usize) -> String {
    key(n).peer_id().to_string()
}

/// A signed note.
pub fn note(
    author: &NodeKey,
    created_ms: u64,
    audience: Audience,
    max_hops: u8,
    text: &str,
) -> VerifiedItem {
    note_with(author, created_ms, audience, max_hops, None, None, text)
}

/// A signed note with optional expiry and `replaces`.
pub fn note_with(
    author: &NodeKey,
    created_ms: u64,
    audience: Audience,
    max_hops: u8,
    expires_ms: Option<u64>,
    replaces: Option<ItemId>,
    text: &str,
) -> VerifiedItem {
    let draft = PayloadDraft {
        created_ms,
        audience,
        max_hops,
        expires_ms,
        replaces,
        body: Body::Note(Note::by_user(text.to_owned())),
    };
    sign(author, &draft).expect("test note signs")
}

/// A signed retraction of `target`.
pub fn retraction(
    author: &NodeKey,
    created_ms: u64,
    target: ItemId,
    audience: Audience,
    max_hops: u8,
) -> VerifiedItem {
    let draft = PayloadDraft {
        created_ms,
        audience,
        max_hops,
        expires_ms: None,
        replaces: None,
        body: Body::Retraction(Retraction { target }),
    };
    sign(author, &draft).expect("test retraction signs")
}

/// A config with the defaults but for `local_peer`.
pub fn config(local: &str) -> EngineConfig {
    EngineConfig::new(local)
}

/// Messages of a kind sent to `to` among `outputs`.
pub fn sent_to<'a>(outputs: &'a [Output], to: &str) -> Vec<&'a WireMessage> {
    outputs
        .iter()
        .filter_map(|o| match o {
            Output::Send { peer, message } if peer == to => Some(message),
            _ => None,
        })
        .collect()
}

/// Ids in `SendItems` and `SendChunk` outputs addressed to `to`.
pub fn items_sent_to(outputs: &[Output], to: &str) -> Vec<ItemId> {
    outputs
        .iter()
        .filter_map(|o| match o {
            Output::SendItems { peer, items, .. } | Output::SendChunk { peer, items, .. }
                if peer == to =>
            {
                Some(items.iter().map(|a| a.id))
            }
            _ => None,
        })
        .flatten()
        .collect()
}

/// Ids stored by `outputs`.
pub fn stored(outputs: &[Output]) -> Vec<ItemId> {
    outputs
        .iter()
        .filter_map(|o| match o {
            Output::Store { item, .. } => Some(item.id()),
            _ => None,
        })
        .collect()
}

/// Runs `message` through the real codec and edge verification.
pub fn over_wire(message: &WireMessage, now_ms: u64) -> Inbound {
    let bytes = wire::encode(message).expect("encodes");
    Inbound::from_wire(wire::decode(&bytes).expect("decodes"), now_ms)
}

/// Start of the fake clock in tests.
pub const T0: u64 = 1_700_000_000_000;

/// A fresh engine for test node `n`.
pub fn engine(n: usize) -> Engine {
    Engine::new(config(&peer(n)), vec![])
}

/// Connects friend `n` (with these groups) at `T0`.
pub fn connect(e: &mut Engine, n: usize, groups: &[&str]) -> Vec<Output> {
    let groups = groups.iter().map(|g| g.to_string()).collect();
    e.handle(
        T0,
        Input::PeerConnected {
            peer: peer(n),
            groups,
        },
    )
}

/// `item` arriving from friend `from` with `hops`, through the real codec.
pub fn items_from(
    e: &mut Engine,
    now: u64,
    from: usize,
    hops: u8,
    item: &VerifiedItem,
) -> Vec<Output> {
    let msg = WireMessage::Items {
        session: None,
        items: vec![WireItem {
            hops,
            envelope: item.envelope_bytes().to_vec(),
        }],
    };
    e.handle(
        now,
        Input::Received {
            peer: peer(from),
            message: over_wire(&msg, now),
        },
    )
}

/// A `have` of one id from friend `from`.
pub fn have_from(e: &mut Engine, now: u64, from: usize, id: ItemId, hops: u8) -> Vec<Output> {
    e.handle(
        now,
        Input::Received {
            peer: peer(from),
            message: Inbound::Have(vec![Announce { id, hops }]),
        },
    )
}

/// The events among `outputs`.
pub fn events(outputs: &[Output]) -> Vec<&Event> {
    outputs
        .iter()
        .filter_map(|o| {
            if let Output::Event(e) = o {
                Some(e)
            } else {
                None
            }
        })
        .collect()
}

/// Ids in `want` messages to friend `to`.
pub fn wants_to(outputs: &[Output], to: usize) -> Vec<ItemId> {
    sent_to(outputs, &peer(to))
        .into_iter()
        .filter_map(|m| {
            if let WireMessage::Want { ids } = m {
                Some(ids.clone())
            } else {
                None
            }
        })
        .flatten()
        .collect()
}

/// Announces in `have` messages to friend `to`.
pub fn haves_to(outputs: &[Output], to: usize) -> Vec<Announce> {
    sent_to(outputs, &peer(to))
        .into_iter()
        .filter_map(|m| {
            if let WireMessage::Have { items } = m {
                Some(items.clone())
            } else {
                None
            }
        })
        .flatten()
        .collect()
}
