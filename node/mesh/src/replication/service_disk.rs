//! The replication loop on a full disk. A write SQLite has no room for
//! fails its whole transaction, so the engine believes it holds items the
//! file lacks: the engine is built again from the file (as at start), the
//! friends still connected are told to it again, and until space returns
//! received items are dropped before the engine (friends keep them and send
//! them at the next catch-up). Reads and the API go on; the API answers a
//! write with 507. Every [`DISK_FULL_RECHECK_MS`] the free space is looked
//! at; once [`RESUME_FREE_BYTES`] are free the loop takes items again and
//! drops and redials the link to every connected friend: a friend starts
//! its catch-up toward a node when they connect (the side that may send
//! starts it, docs/wire.md), so what it sent while the disk was full comes
//! again at once rather than at its next resync, and nothing is lost.

use porfiry_protocol::engine::{Engine, Input};
use porfiry_storage::disk::{RESUME_FREE_BYTES, free_bytes, full_message};

use super::Node;
use crate::net::MeshCommand;
use crate::replication::error::ReplicationError;

/// How often a full disk is looked at again: a person freeing space waits
/// at most this long for the node to notice, and a `statvfs` every ten
/// seconds costs nothing.
pub const DISK_FULL_RECHECK_MS: u64 = 10_000;

impl Node {
    /// A write failed for want of room.
    pub(super) async fn on_disk_full(&mut self) -> Result<(), ReplicationError> {
        let message = self
            .data_dir
            .as_deref()
            .map_or_else(|| "the disk is full".to_owned(), full_message);
        let first = self.disk_full.is_none();
        if first {
            tracing::error!("{message}; items from friends wait until then");
        }
        self.disk_full = Some(self.now().saturating_add(DISK_FULL_RECHECK_MS));
        let connected: Vec<String> = self.engine.connected_peers().map(str::to_owned).collect();
        let config = self.engine_config.clone();
        let engine = self
            .db
            .read(move |s| -> Result<Engine, ReplicationError> {
                let clubs = s.club_book()?;
                let devices = s.device_book(&config.local_peer)?;
                let mut engine =
                    s.with_item_records(|records| Engine::with_clubs(config, records, clubs))?;
                // Reconnecting below starts the sessions toward devices.
                if let Err(e) = engine.set_devices(0, devices) {
                    tracing::warn!(error = %e, "the device book was refused; devices get nothing");
                }
                Ok(engine)
            })
            .await??;
        self.engine = engine;
        self.engine.set_trusted(self.friends.keys().cloned());
        self.wake = None;
        if first {
            self.reconnect(connected).await
        } else {
            // Telling the friends again failed for want of room too: they
            // are told when space is back (`check_disk`).
            self.disk_full_peers = connected;
            Ok(())
        }
    }

    /// When the full disk is next looked at.
    pub(super) fn disk_check_due(&self) -> Option<u64> {
        self.disk_full
    }

    /// Looks at the free space; with enough of it, takes items again and
    /// catches up with every connected friend.
    pub(super) async fn check_disk(&mut self) -> Result<(), ReplicationError> {
        let free = self.data_dir.as_deref().and_then(free_bytes);
        if free.is_some_and(|f| f < RESUME_FREE_BYTES) {
            self.disk_full = Some(self.now().saturating_add(DISK_FULL_RECHECK_MS));
            return Ok(());
        }
        tracing::info!(free_bytes = ?free, "space is back: taking items from friends again");
        self.disk_full = None;
        let mut connected: Vec<String> = std::mem::take(&mut self.disk_full_peers);
        connected.extend(self.engine.connected_peers().map(str::to_owned));
        connected.sort();
        connected.dedup();
        for peer in connected {
            let Some(f) = self.friends.get(&peer) else {
                continue;
            };
            let (peer, addresses) = (f.peer, f.addresses.clone());
            self.outgoing
                .command(MeshCommand::RemoveFriend { peer })
                .await;
            self.outgoing
                .command(MeshCommand::AddFriend { peer, addresses })
                .await;
        }
        Ok(())
    }

    /// Tells the engine each of `peers` is connected (again): a friend it
    /// already knows starts a catch-up at once.
    async fn reconnect(&mut self, peers: Vec<String>) -> Result<(), ReplicationError> {
        let inputs = peers
            .into_iter()
            .map(|peer| {
                let groups = self
                    .friends
                    .get(&peer)
                    .map(|f| f.groups.clone())
                    .unwrap_or_default();
                Input::PeerConnected { peer, groups }
            })
            .collect();
        self.inputs(inputs).await
    }
}
