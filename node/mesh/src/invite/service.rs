//! The inviter's daemon side (started by `porfiry run`): keeps the
//! [`InviteDoor`] open exactly while the database holds an open invitation,
//! records the addresses the node listens on for `porfiry invite` to put in
//! codes, and answers `/porfiry/invite/1` streams — each rate-limited,
//! bounded in time and in number, and redeemed through the node handle so
//! the mesh learns of the new friend at once.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use porfiry_storage::InvitationKind;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

use super::rate::AttemptLimiter;
use super::secret::Refusal;
use super::wire::{read_request, write_answer};
use crate::net::{IncomingInvites, InviteDoor, MeshError, PeerId, Stream};
use crate::node::NodeHandle;

// The door is re-checked against the database only when something could
// have changed it: the replication loop saw the database change (`porfiry
// invite` runs in another process and commits the invitation; a redeem
// commits its use) — [`NodeHandle::db_changes`] — or the first open
// invitation's expiry comes. No poll: with no invitation open, the door
// costs no wake-up at all (it cost two a second when it polled every
// 500 ms). A new invitation opens the door within the loop's poll of
// other processes' commits — 50 ms on a server, 5 s on a phone — and
// `join` retries for 20 s to cover it.

/// One exchange (read 17 bytes, check, answer) must finish in this time,
/// well inside the gate's guest window.
pub const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(5);

/// At most this many exchanges at once; more streams are dropped unread.
/// The gate admits few guests, so this only bounds friends' misuse.
pub const MAX_CONCURRENT_EXCHANGES: usize = 4;

/// The config key holding the addresses the daemon listens on
/// (`<addr>/p2p/<id>` strings), read by `porfiry invite`.
pub const LISTENING_CONFIG_KEY: &str = "mesh.listening";

/// The running service; stops when dropped or stopped.
#[derive(Debug)]
pub struct InviteService {
    task: JoinHandle<()>,
    door: InviteDoor,
}

impl InviteService {
    /// Starts the service for `node` on the current tokio runtime.
    pub fn start(node: &NodeHandle) -> Result<Self, MeshError> {
        let mut streams = node.streams();
        let incoming = streams.accept_invites()?;
        let door = streams.door();
        let task = tokio::spawn(serve(node.clone(), incoming, door.clone()));
        Ok(Self { task, door })
    }

    /// Stops answering and shuts the door.
    pub fn stop(self) {
        self.task.abort();
        self.door.set_open(false);
    }
}

impl Drop for InviteService {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

async fn serve(node: NodeHandle, mut incoming: IncomingInvites, door: InviteDoor) {
    let mut limiter = AttemptLimiter::default();
    let slots = Arc::new(Semaphore::new(MAX_CONCURRENT_EXCHANGES));
    let mut changes = node.db_changes();
    let mut changes_open = true;
    let mut expiry = refresh_door(&node, &door).await;
    let mut listening = node.listening();
    let mut listening_open = true;
    loop {
        let expires = door_deadline(expiry, unix_ms());
        tokio::select! {
            changed = changes.changed(), if changes_open => {
                if changed.is_err() {
                    changes_open = false;
                    continue;
                }
                expiry = refresh_door(&node, &door).await;
            }
            () = tokio::time::sleep(expires.unwrap_or_default()), if expires.is_some() => {
                expiry = refresh_door(&node, &door).await;
            }
            changed = listening.changed(), if listening_open => {
                if changed.is_err() {
                    listening_open = false;
                    continue;
                }
                let addresses = listening.borrow_and_update().clone();
                let write = node
                    .db()
                    .write(move |s| s.config_set(LISTENING_CONFIG_KEY, &addresses, unix_ms()))
                    .await;
                if !matches!(write, Ok(Ok(()))) {
                    tracing::warn!("cannot record the listen addresses for invitations");
                }
            }
            next = incoming.next() => {
                let Some((peer, stream)) = next else { break };
                let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
                    tracing::warn!(%peer, "too many invitation exchanges at once; stream dropped");
                    continue;
                };
                let admitted = limiter.try_attempt(&peer, unix_ms());
                let node = node.clone();
                tokio::spawn(async move {
                    exchange(&node, peer, stream, admitted).await;
                    drop(slot);
                });
            }
        }
    }
    door.set_open(false);
}

/// How long until the door must be checked for an expiry at `expiry`
/// (Unix ms), from `now_ms`: 1 ms past it, when the invitation no longer
/// counts as open (`expires_ms > now`); `None` when no invitation is open.
pub fn door_deadline(expiry: Option<u64>, now_ms: u64) -> Option<Duration> {
    expiry.map(|at| Duration::from_millis(at.saturating_sub(now_ms) + 1))
}

/// Opens or shuts the door as the database says; returns when the first
/// open invitation expires.
async fn refresh_door(node: &NodeHandle, door: &InviteDoor) -> Option<u64> {
    let now = unix_ms();
    let expiry = match node.db().read(move |s| s.next_invitation_expiry(now)).await {
        Ok(Ok(expiry)) => expiry,
        _ => {
            tracing::warn!("cannot read invitations; the door stays shut");
            None
        }
    };
    let open = expiry.is_some();
    if open != door.is_open() {
        tracing::info!(open, "invitation door");
    }
    door.set_open(open);
    expiry
}

async fn exchange(node: &NodeHandle, peer: PeerId, mut stream: Stream, admitted: bool) {
    let run = async {
        let (secret, kind) = read_request(&mut stream).await?;
        if kind == InvitationKind::Device {
            return crate::devices::link_exchange(node, peer, &mut stream, secret, admitted).await;
        }
        let answer = if !admitted {
            Err(Refusal::RateLimited)
        } else {
            match node.redeem_invitation(peer, secret).await {
                Ok(Ok(redeemed)) => {
                    tracing::info!(%peer, name = %redeemed.name, groups = ?redeemed.groups, "invitation redeemed; new friend");
                    Ok(())
                }
                Ok(Err(refusal)) => Err(refusal),
                Err(e) => {
                    tracing::warn!(%peer, error = %e, "cannot check an invitation");
                    Err(Refusal::Failed)
                }
            }
        };
        if let Err(refusal) = answer {
            tracing::warn!(%peer, %refusal, "invitation refused");
        }
        write_answer(&mut stream, answer).await
    };
    match tokio::time::timeout(EXCHANGE_TIMEOUT, run).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "invitation exchange failed"),
        Err(_) => tracing::debug!(%peer, "invitation exchange timed out"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_door_waits_for_the_first_expiry_and_not_at_all_when_shut() {
        assert_eq!(door_deadline(None, 5), None);
        assert_eq!(
            door_deadline(Some(1_500), 1_000),
            Some(Duration::from_millis(501))
        );
        // Past it already (a slow read): check again at once, 1 ms on.
        assert_eq!(
            door_deadline(Some(900), 1_000),
            Some(Duration::from_millis(1))
        );
    }
}
