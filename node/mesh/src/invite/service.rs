//! The inviter's daemon side (started by `porfiry run`): keeps the
//! [`InviteDoor`] open exactly while the database holds an open invitation,
//! records the addresses the node listens on for `porfiry invite` to put in
//! codes, and answers `/porfiry/invite/1` streams — each rate-limited,
//! bounded in time and in number, and redeemed through the node handle so
//! the mesh learns of the new friend at once.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

use super::rate::AttemptLimiter;
use super::secret::Refusal;
use super::wire::{read_request, write_answer};
use crate::net::{IncomingInvites, InviteDoor, MeshError, PeerId, Stream};
use crate::node::NodeHandle;

/// How often the door is re-checked against the database: `porfiry invite`
/// runs in another process, so a new invitation opens the door within
/// this time (`join` retries to cover it), and an expired one shuts it.
pub const DOOR_POLL_INTERVAL: Duration = Duration::from_millis(500);

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
    let mut poll = tokio::time::interval(DOOR_POLL_INTERVAL);
    let mut listening = node.listening();
    let mut listening_open = true;
    loop {
        tokio::select! {
            _ = poll.tick() => refresh_door(&node, &door).await,
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

async fn refresh_door(node: &NodeHandle, door: &InviteDoor) {
    let now = unix_ms();
    let open = match node.db().read(move |s| s.has_open_invitations(now)).await {
        Ok(Ok(open)) => open,
        _ => {
            tracing::warn!("cannot read invitations; the door stays shut");
            false
        }
    };
    if open != door.is_open() {
        tracing::info!(open, "invitation door");
    }
    door.set_open(open);
}

async fn exchange(node: &NodeHandle, peer: PeerId, mut stream: Stream, admitted: bool) {
    let run = async {
        let secret = read_request(&mut stream).await?;
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
