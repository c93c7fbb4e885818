//! The replication loop's own items: rows marked for sharing signed and
//! handed to the engine (`publish_pending`), and our items that another
//! process signed into the file (a `notes post`) picked up, read a part at
//! a time and vouched for rather than verified again (see the module doc
//! of `service.rs`).

use porfiry_protocol::engine::Input;
use porfiry_protocol::{ItemId, VerifiedItem};
use porfiry_storage::db::Answer;
use porfiry_storage::{MAX_PAGE_IDS, StorageError};

use super::Node;
use crate::devices::publish::{MIND_PUBLISH_BATCH, publish_mind};
use crate::replication::error::ReplicationError;
use crate::replication::limits::{MIND_BATCHES_PER_SCAN, OWN_ITEM_LOOKBACK_MS, OWN_READ_PART};
use crate::sharing::publish::publish_pending;

impl Node {
    pub(super) async fn scan_publish(&mut self) -> Result<(), ReplicationError> {
        let now = self.now();
        let key = self.key.clone();
        let mut skipped = std::mem::take(&mut self.skipped);
        let (items, skipped) = self
            .db
            .write(move |s| {
                let r = publish_pending(s, &key, now, &mut skipped);
                (r, skipped)
            })
            .await?;
        self.skipped = skipped;
        self.publish(items?).await?;
        // Items signed elsewhere first: a device link stored by `porfiry
        // devices join` must reach the engine before the memory it routes.
        self.publish_signed_elsewhere(now).await?;
        self.publish_mind(now).await
    }

    /// Signs this device's memory changes for its other devices (nothing
    /// while it has none), up to `MIND_BATCHES_PER_SCAN` batches, and
    /// hands them to the engine. A failure is logged: the changes stay
    /// queued for the next scan.
    async fn publish_mind(&mut self, now: u64) -> Result<(), ReplicationError> {
        // The engine's book says whether there is anyone to publish to; a
        // node without devices does nothing here on its scans.
        if self.engine.devices().device_count() == 0 {
            return Ok(());
        }
        for _ in 0..MIND_BATCHES_PER_SCAN {
            let key = self.key.clone();
            let published = self.db.write(move |s| publish_mind(s, &key, now)).await?;
            let published = match published {
                Ok(p) => p,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot publish the memory to this person's devices");
                    return Ok(());
                }
            };
            let more = published.versions.len() == MIND_PUBLISH_BATCH;
            if !published.versions.is_empty() || published.conflicts > 0 {
                tracing::debug!(
                    versions = published.versions.len(),
                    conflicts = published.conflicts,
                    "memory published to this person's devices"
                );
            }
            self.publish(published.versions).await?;
            if !more {
                break;
            }
        }
        Ok(())
    }

    /// Hands our own `items` to the engine, and the batch they join to
    /// friends at once: the run is whole, nothing is gained by the batch
    /// delay (see `Input::FlushPush`).
    pub(super) async fn publish(
        &mut self,
        items: Vec<VerifiedItem>,
    ) -> Result<(), ReplicationError> {
        if items.is_empty() {
            return Ok(());
        }
        for item in &items {
            tracing::debug!(id = %item.id(), kind = %item.kind(), "publishing our own item");
            self.fed.insert(item.id());
        }
        let inputs = items
            .into_iter()
            .map(|item| Input::Publish { item })
            .chain([Input::FlushPush])
            .collect();
        self.inputs(inputs).await
    }

    /// Publishes our own items another process stored (a `notes post`
    /// signs its item itself) that the engine does not hold yet,
    /// `OWN_READ_PART` at a time: each part is read, checked and handed
    /// to the engine, which pushes it at once, while the next part is read.
    async fn publish_signed_elsewhere(&mut self, now: u64) -> Result<(), ReplicationError> {
        let (local, since) = (self.local.clone(), self.own_since);
        let stored = self
            .db
            .read(move |s| s.own_item_ids_since(&local, since))
            .await??;
        // Ids first: the engine holds most of them already (at start-up,
        // every one), and only the rest are worth reading.
        let new: Vec<ItemId> = stored
            .into_iter()
            .filter(|id| !self.engine.holds(id) && !self.fed.contains(id))
            .collect();
        self.own_since = now.saturating_sub(OWN_ITEM_LOOKBACK_MS);
        let mut parts = new.chunks(OWN_READ_PART);
        let mut reading = self.read_own(parts.next()).await?;
        while let Some(answer) = reading {
            let envelopes = answer.get().await??;
            reading = self.read_own(parts.next()).await?;
            let items = self.check_own(&envelopes, now);
            self.publish(items).await?;
        }
        Ok(())
    }

    /// Starts reading our own stored items `ids`, if there is a part to
    /// read (envelopes of those still there; one withdrawn meanwhile is
    /// skipped).
    async fn read_own(
        &self,
        ids: Option<&[ItemId]>,
    ) -> Result<Option<Answer<OwnEnvelopes>>, ReplicationError> {
        let Some(ids) = ids.map(<[ItemId]>::to_vec) else {
            return Ok(None);
        };
        let answer = self
            .db
            .read_ahead(move |s| {
                let mut out = Vec::with_capacity(ids.len());
                for page in ids.chunks(MAX_PAGE_IDS) {
                    let payloads = s.item_page(page)?;
                    out.extend(
                        page.iter()
                            .zip(payloads)
                            .filter_map(|(id, p)| Some((*id, p?))),
                    );
                }
                Ok(out)
            })
            .await?;
        Ok(Some(answer))
    }

    /// Checks our own items read back; those refused are logged and not
    /// asked for again.
    fn check_own(&mut self, envelopes: &[(ItemId, Vec<u8>)], now: u64) -> Vec<VerifiedItem> {
        // Decoded and checked, the signature vouched for rather than
        // verified: our own file holds them, next to our key (see
        // `VerifiedItem::vouch_own`); catch-up serves them from the same
        // file unchecked, and friends verify them on arrival.
        let refs: Vec<&[u8]> = envelopes.iter().map(|(_, e)| e.as_slice()).collect();
        let mut found = Vec::with_capacity(refs.len());
        let checked = VerifiedItem::vouch_own(&self.key, &refs, now);
        for ((id, _), result) in envelopes.iter().zip(checked) {
            match result {
                Ok(item) => found.push(item),
                Err(e) => {
                    tracing::warn!(%id, error = %e, "own stored item refused; not published");
                    self.fed.insert(*id);
                }
            }
        }
        found
    }
}

/// Our own items read back from the file: each id with its envelope.
type OwnEnvelopes = Result<Vec<(ItemId, Vec<u8>)>, StorageError>;
