//! A pull from a process that runs no node (`porfiry model pull NAME --from
//! FRIEND` in a terminal): a short-lived mesh driver with this node's key
//! dials the friend at the addresses stored for it, waits for the link and
//! runs [`pull_from_friend`] over it — as `porfiry join` reaches an inviter.
//! The daemon need not run, and may.

use std::ops::ControlFlow;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::timeout;

use super::client::pull_from_friend;
use super::client::{ModelPullError, PullConditions, PullEvent, PullTarget, PulledModel};
use porfiry_mesh::net::{
    Keypair, MeshConfig, MeshDriver, MeshError, MeshEvent, Multiaddr, StreamControl,
};

/// How long the pull waits for a link to the friend: a few redials with
/// backoff on a LAN or over the internet, and still an answer soon enough
/// for a person at the prompt.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);

/// Pulls `target` as `key` over a link of its own to the friend at
/// `addresses`.
pub async fn pull_over_own_link(
    key: Keypair,
    addresses: Vec<Multiaddr>,
    target: &PullTarget,
    conditions: &dyn PullConditions,
    on_event: &mut (dyn FnMut(PullEvent) -> ControlFlow<()> + Send),
) -> Result<PulledModel, ModelPullError> {
    let streams = StreamControl::new();
    let mut config = MeshConfig::phone().with_friend(target.friend, addresses);
    config.streams = streams.clone();
    let (driver, handle, events) = MeshDriver::new(key, config)?;
    let task = driver.spawn();
    let pulled = async {
        connected(events, target).await?;
        pull_from_friend(&streams, target, conditions, on_event).await
    }
    .await;
    // Best effort: the driver may have stopped already.
    let _ = handle.shutdown().await;
    let _ = task.await;
    pulled
}

/// Waits for the link to the friend (and keeps the driver's events drained
/// afterwards, so the driver never blocks on them).
async fn connected(
    mut events: mpsc::Receiver<MeshEvent>,
    target: &PullTarget,
) -> Result<(), ModelPullError> {
    let peer = target.friend;
    let wait = async {
        while let Some(event) = events.recv().await {
            if matches!(event, MeshEvent::PeerConnected { peer: p } if p == peer) {
                return true;
            }
        }
        false
    };
    match timeout(CONNECT_TIMEOUT, wait).await {
        Ok(true) => {
            tokio::spawn(async move { while events.recv().await.is_some() {} });
            Ok(())
        }
        Ok(false) => Err(MeshError::StreamOpen {
            peer,
            reason: "the mesh stopped".into(),
        }
        .into()),
        Err(_) => Err(MeshError::StreamOpen {
            peer,
            reason: format!(
                "no link within {}s; is its daemon (`porfiry run --share-models`) running and reachable at its stored address?",
                CONNECT_TIMEOUT.as_secs()
            ),
        }
        .into()),
    }
}
