//! `ItemRecord`: one item's routing facts, everything but its envelope bytes.
//!
//! This is the one record of an item shared by the crates: the replication
//! engine is seeded with it and keeps it (interned) in its index, storage
//! reads and writes it as the `items` table's columns next to the envelope,
//! and [`ItemRecord::route`] hands [`may_send`](crate::policy::may_send)
//! what it decides on.

use crate::club::ClubAction;
use crate::item::audience::Audience;
use crate::item::body::Body;
use crate::item::id::ItemId;
use crate::item::kinds::ItemKind;
use crate::item::verified::VerifiedItem;
use crate::policy::ItemRoute;

/// One held item's routing facts: enough to route it and to seed the engine
/// at start-up from storage without re-reading the envelopes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemRecord {
    /// Item id (SHA-256 of the envelope).
    pub id: ItemId,
    /// Author's peer id.
    pub author: String,
    /// Item kind.
    pub kind: ItemKind,
    /// Who may receive it.
    pub audience: Audience,
    /// Author's creation time (Unix ms); the reconciliation key.
    pub created_ms: u64,
    /// Expiry (Unix ms), if the author set one.
    pub expires_ms: Option<u64>,
    /// The friend whose copy this is; `None` for this node's own items.
    pub received_from: Option<String>,
    /// The author's hop limit.
    pub max_hops: u8,
    /// How many more hops this copy may travel (at most `max_hops`).
    pub hops_left: u8,
    /// For a retraction: the item it withdraws.
    pub retracts: Option<ItemId>,
    /// The earlier item of the same author this one supersedes.
    pub replaces: Option<ItemId>,
    /// For a club change: the member it concerns (who also receives it).
    pub club_target: Option<String>,
    /// For a club change: true if it ends a membership (remove, leave).
    pub club_removal: bool,
    /// Size of the signed envelope in bytes (at most `MAX_ENVELOPE_BYTES`):
    /// what sending it costs, so catch-up chunks are cut by bytes.
    pub envelope_bytes: u32,
}

impl ItemRecord {
    /// The record of `item` held with `hops_left` and got from `received_from`.
    pub fn of(item: &VerifiedItem, hops_left: u8, received_from: Option<String>) -> ItemRecord {
        ItemRecord {
            id: item.id(),
            author: item.author_peer_id().to_owned(),
            kind: item.kind(),
            audience: item.audience().clone(),
            created_ms: item.created_ms(),
            expires_ms: item.expires_ms(),
            received_from,
            max_hops: item.max_hops(),
            hops_left,
            retracts: retraction_target(item),
            replaces: item.replaces(),
            club_target: club_target(item).map(str::to_owned),
            club_removal: club_removal(item),
            envelope_bytes: u32::try_from(item.envelope_bytes().len()).unwrap_or(u32::MAX),
        }
    }

    /// The items this one withdraws: its retraction target and the item it
    /// replaces, either or both.
    pub fn supersedes(&self) -> impl Iterator<Item = ItemId> + '_ {
        self.retracts.iter().chain(self.replaces.iter()).copied()
    }

    /// The routing facts [`may_send`](crate::policy::may_send) decides on.
    pub fn route(&self) -> ItemRoute<'_> {
        ItemRoute {
            author: &self.author,
            audience: &self.audience,
            hops_left: self.hops_left,
            received_from: self.received_from.as_deref(),
            expires_ms: self.expires_ms,
            created_ms: self.created_ms,
            club_target: self.club_target.as_deref(),
            club_removal: self.club_removal,
            device_statement: self.kind == ItemKind::DeviceLink,
        }
    }
}

/// The target of a retraction item, `None` for every other kind.
pub fn retraction_target(item: &VerifiedItem) -> Option<ItemId> {
    match item.body() {
        Body::Retraction(r) => Some(r.target),
        _ => None,
    }
}

/// The member a club change concerns, `None` for every other kind.
pub fn club_target(item: &VerifiedItem) -> Option<&str> {
    match item.body() {
        Body::ClubChange(c) => Some(&c.target),
        _ => None,
    }
}

/// True for a club change that ends a membership (remove, leave).
pub fn club_removal(item: &VerifiedItem) -> bool {
    matches!(item.body(), Body::ClubChange(c) if matches!(c.action, ClubAction::Remove | ClubAction::Leave))
}
