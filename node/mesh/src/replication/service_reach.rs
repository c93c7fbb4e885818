//! The replication loop's part in telling friends where this node can be
//! reached (`reachable_at`, see `crate::sharing::reach`) and in a link that
//! moved from one connection to another: the settle timer beside the
//! engine's, signing and publishing our addresses once they settle, and
//! restarting catch-up with a friend whose relayed connection closed under
//! a direct one.

use porfiry_protocol::engine::Input;

use super::Node;
use crate::net::Multiaddr;
use crate::replication::error::ReplicationError;
use crate::replication::limits::REACH_SETTLE_MS;
use crate::replication::refused_file::RefusedFile;
use crate::sharing::reach::{announce_reach, reach_list};

impl Node {
    /// The driver reported where we can be reached: tell friends once the
    /// addresses have settled for `REACH_SETTLE_MS`.
    pub(super) fn on_reachable(&mut self, addresses: &[Multiaddr]) {
        let at = self.now().saturating_add(REACH_SETTLE_MS);
        self.reach_due = Some((at, reach_list(addresses)));
    }

    /// To the engine a moved link is a reconnect: sessions with the friend
    /// whose messages were lost on the closed connection are dropped and
    /// new ones start over the link that stays (a running session would
    /// otherwise wait for its timeout).
    pub(super) async fn on_link_moved(&mut self, peer: String) -> Result<(), ReplicationError> {
        if !self.engine.connected_peers().any(|p| p == peer) {
            return Ok(());
        }
        tracing::info!(%peer, "link moved to another connection; catching up again over it");
        let groups = self
            .friends
            .get(&peer)
            .map(|f| f.groups.clone())
            .unwrap_or_default();
        self.inputs(vec![
            Input::PeerDisconnected { peer: peer.clone() },
            Input::PeerConnected { peer, groups },
        ])
        .await
    }

    /// The earliest of the engine's next tick, telling friends our settled
    /// addresses, writing `refused.json` and looking at a full disk again.
    pub(super) fn next_timer(&self) -> Option<u64> {
        let reach = self.reach_due.as_ref().map(|(at, _)| *at);
        let refused = self.refused_file.as_ref().and(self.refused_due.due_ms());
        [
            self.wake,
            reach,
            refused,
            self.disk_check_due(),
            self.mind_prune_due(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    pub(super) async fn on_timer(&mut self) -> Result<(), ReplicationError> {
        let now = self.now();
        if self.reach_due.as_ref().is_some_and(|(at, _)| *at <= now) {
            self.tell_reach(now).await?;
        }
        if self.wake.is_some_and(|at| at <= now) {
            self.tick().await?;
        }
        if self.refused_due.due_ms().is_some_and(|at| at <= now) {
            self.write_refused();
        }
        if self.disk_check_due().is_some_and(|at| at <= now) {
            self.check_disk().await?;
        }
        if self.mind_prune_due().is_some_and(|at| at <= now) {
            self.prune_mind().await?;
        }
        Ok(())
    }

    /// Writes `refused.json` if there is news for it (a small file, once
    /// per `REFUSED_FILE_EVERY_MS` at most). A failure is logged: the
    /// report is for a person, and the next refusal tries again.
    pub(super) fn write_refused(&mut self) {
        let Some(path) = &self.refused_file else {
            return;
        };
        if self.refused_due.due_ms().is_none() {
            return;
        }
        let now = self.now();
        let file = RefusedFile {
            written_ms: now,
            refused: self.engine.refused().into_iter().map(Into::into).collect(),
        };
        if let Err(e) = file.write(path) {
            tracing::warn!(path = %path.display(), error = %e, "could not write the refusals");
        }
        self.refused_due.written(now);
    }

    /// Signs, stores and publishes our settled addresses, unless friends
    /// were told these already. A failure to sign or store is logged and
    /// the addresses are told at the next change.
    async fn tell_reach(&mut self, now: u64) -> Result<(), ReplicationError> {
        let Some((_, addresses)) = self.reach_due.take() else {
            return Ok(());
        };
        let key = self.key.clone();
        let previous = self.told.clone();
        let list = addresses.clone();
        let made = self
            .db
            .write(move |s| announce_reach(s, &key, list, previous.as_ref(), now))
            .await?;
        match made {
            Ok(Some(item)) => {
                tracing::info!(?addresses, id = %item.id(), "telling friends where this node can be reached");
                self.told = Some((item.id(), addresses));
                self.publish(vec![item]).await?;
            }
            Ok(None) => {}
            Err(error) => {
                tracing::warn!(%error, "cannot tell friends where this node can be reached")
            }
        }
        Ok(())
    }
}
