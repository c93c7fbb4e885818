//! Device link and unlink statements as this node's own `device_link`
//! items: signed, stored in one transaction (the `device_links` row with
//! it), and published by the running daemon like any own item. Also what
//! `porfiry devices list` shows.

use porfiry_protocol::devices::{
    DEVICES_MAX_HOPS, DeviceError, DeviceLink, DeviceStatement, DeviceUnlink,
};
use porfiry_protocol::{Audience, Body, NodeKey, PayloadDraft, VerifiedItem, sign};
use porfiry_storage::{StorageError, Store};
use serde::Serialize;

use crate::sharing::item_rows::stored_record;

/// Why a device command failed.
#[derive(Debug, thiserror::Error)]
pub enum DevicesError {
    /// The peer is not one of this node's devices.
    #[error("{0} is not a device of this person here: `porfiry devices list` shows them")]
    NotADevice(String),
    /// The statement does not verify or the book refuses it.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The database refused.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The item could not be signed.
    #[error("cannot sign the device statement: {0}")]
    Item(#[from] porfiry_protocol::ItemError),
}

/// One device of this person, as `porfiry devices list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceListing {
    /// Its peer id.
    pub peer: String,
    /// Its local name here (a friend's name; may be empty).
    pub name: String,
    /// When the link that makes it a device was signed (Unix ms).
    pub linked_since_ms: u64,
    /// When this node last saw it connected (Unix ms); `None` if never.
    pub last_sync_ms: Option<u64>,
    /// How far it is behind: memory versions written here since it was
    /// last seen (all of them if never).
    pub behind: u64,
}

/// `body` signed by `key` at `now_ms` for this person's devices (audience
/// `devices`, `DEVICES_MAX_HOPS`): how every device link and memory version
/// is made.
pub fn devices_item(
    key: &NodeKey,
    body: Body,
    now_ms: u64,
) -> Result<VerifiedItem, porfiry_protocol::ItemError> {
    sign(
        key,
        &PayloadDraft {
            created_ms: now_ms,
            audience: Audience::Devices,
            max_hops: DEVICES_MAX_HOPS,
            expires_ms: None,
            replaces: None,
            body,
        },
    )
}

/// Signs `statement` as `key`'s `device_link` item at `now_ms` and stores
/// it (the daemon sends it to the person's devices). Returns the item.
pub fn store_statement(
    store: &Store,
    key: &NodeKey,
    statement: DeviceStatement,
    now_ms: u64,
) -> Result<VerifiedItem, DevicesError> {
    statement.verify()?;
    let item = devices_item(key, Body::DeviceLink(statement), now_ms)?;
    store.insert_items(&[stored_record(&item, item.max_hops(), None)])?;
    Ok(item)
}

/// Stores a link this node just made (either side of the exchange).
pub fn store_link(
    store: &Store,
    key: &NodeKey,
    link: DeviceLink,
    now_ms: u64,
) -> Result<VerifiedItem, DevicesError> {
    store_statement(store, key, DeviceStatement::Link(link), now_ms)
}

/// Ends the link with `peer` (a peer id): signs and stores the unlink.
/// The device learns of it (the unlink is sent to it too) and keeps what
/// it holds of the person's memory; nothing more flows either way.
pub fn unlink_device(
    store: &Store,
    key: &NodeKey,
    peer: &str,
    now_ms: u64,
) -> Result<VerifiedItem, DevicesError> {
    let me = key.peer_id().to_string();
    let book = store.device_book(&me)?;
    if !book.is_device(peer) {
        return Err(DevicesError::NotADevice(peer.to_owned()));
    }
    let unlink = DeviceUnlink::sign(key, peer, now_ms)?;
    store_statement(store, key, DeviceStatement::Unlink(unlink), now_ms)
}

/// This node's devices now, oldest link first.
pub fn list_devices(store: &Store, me: &str) -> Result<Vec<DeviceListing>, DevicesError> {
    list_devices_synced(store, me, &std::collections::BTreeMap::new())
}

/// [`list_devices`], where `synced` says when a running node last finished
/// a catch-up with a device (peer → Unix ms): that, when later than its
/// last seen time, is what it is behind from (a device connected and caught
/// up is behind by nothing written before).
pub fn list_devices_synced(
    store: &Store,
    me: &str,
    synced: &std::collections::BTreeMap<String, u64>,
) -> Result<Vec<DeviceListing>, DevicesError> {
    let book = store.device_book(me)?;
    let names = crate::friend_names::friend_names(store).map_err(|e| match e {
        crate::friends::FriendsError::Storage(e) => DevicesError::Storage(e),
        other => DevicesError::Storage(StorageError::Invalid {
            what: "friends".into(),
            reason: other.to_string(),
        }),
    })?;
    let mut out: Vec<DeviceListing> = book
        .devices()
        .map(|peer| DeviceListing {
            peer: peer.to_owned(),
            name: names.get(peer).cloned().unwrap_or_default(),
            linked_since_ms: book.linked_since(peer).unwrap_or_default(),
            last_sync_ms: None,
            behind: 0,
        })
        .collect();
    for d in &mut out {
        let seen = store.find_friend(&d.peer)?.and_then(|f| f.row.last_seen);
        d.last_sync_ms = seen.max(synced.get(&d.peer).copied());
        d.behind = store.mind_versions_since(me, d.last_sync_ms)?;
    }
    out.sort_by(|a, b| (a.linked_since_ms, &a.peer).cmp(&(b.linked_since_ms, &b.peer)));
    Ok(out)
}
