//! `porfiry join CODE [--name NAME]`: accepts an invitation. The command
//! itself dials the inviter (a short-lived mesh driver with this node's
//! key; the daemon need not run, and may), presents the secret over
//! `/porfiry/invite/1` and, only when the inviter admits it, stores the
//! inviter as a friend (its peer id, the code's addresses and `--name`).
//! A wrong, used or expired code stores nothing and exits non-zero saying
//! which. The inviter's daemon must be running.

use std::time::Duration;

use clap::Args;
use porfiry_storage::{Friend, StorageError};
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout_at};

use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::friends::{FriendsError, check_friend, open, save_friend};
use porfiry_mesh::init::{InitError, open_or_init};
use porfiry_mesh::invite::wire::{WireError, read_answer, write_request};
use porfiry_mesh::invite::{CodeError, InviteCode, Refusal, Secret};
use porfiry_mesh::net::{MeshConfig, MeshDriver, MeshError, MeshEvent, PeerId, StreamControl};

/// How long `join` tries to reach the inviter and get an answer: it covers
/// the inviter's door poll and a few redials with backoff, and still fails
/// soon enough for a person waiting at the prompt.
pub const JOIN_TIMEOUT: Duration = Duration::from_secs(20);

/// Arguments of `porfiry join`.
#[derive(Debug, Args)]
pub struct JoinArgs {
    /// The code `porfiry invite` printed on the other node (`porfiry:…`).
    #[arg(value_name = "CODE")]
    pub code: String,
    /// The name the inviter gets here (local, never sent).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
}

/// Why `join` failed.
#[derive(Debug, thiserror::Error)]
pub enum JoinError {
    /// The code could not be read.
    #[error(transparent)]
    Code(#[from] CodeError),
    /// This node made the invitation.
    #[error("this invitation was made by this node ({0}); use it on the other node")]
    OwnInvitation(PeerId),
    /// The inviter refused the code.
    #[error("{0}")]
    Refused(Refusal),
    /// The inviter could not be reached in time.
    #[error(
        "could not reach the inviter {peer} within {secs}s ({last}); is its daemon (`porfiry run`) running and reachable, and does it still hold an open invitation?"
    )]
    Unreachable {
        /// The inviter.
        peer: PeerId,
        /// The time tried.
        secs: u64,
        /// The last thing that went wrong.
        last: String,
    },
    /// The inviter does not speak the invitation protocol.
    #[error("the inviter {0} does not take invitations (an older porfiry?)")]
    Unsupported(PeerId),
    /// The node could not be opened or made.
    #[error(transparent)]
    Init(#[from] InitError),
    /// The mesh could not start.
    #[error(transparent)]
    Mesh(#[from] MeshError),
    /// Storing the friend failed.
    #[error(transparent)]
    Friends(#[from] FriendsError),
    /// The database refused.
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// Redeems the code in `args`; returns what to print.
pub async fn join(dir: &DataDir, args: &JoinArgs, now_ms: u64) -> Result<String, JoinError> {
    let code = InviteCode::decode(&args.code)?;
    let key = open_or_init(dir)?.0;
    if key.peer_id() == code.peer {
        return Err(JoinError::OwnInvitation(code.peer));
    }
    let addresses: Vec<String> = code.addresses.iter().map(ToString::to_string).collect();
    // Checked before any dial, so a bad name or address stores nothing.
    let friend = check_friend(&code.peer.to_string(), &addresses, &[])?;
    let streams = StreamControl::new();
    let mut config = MeshConfig::phone().with_friend(code.peer, code.addresses.clone());
    config.streams = streams.clone();
    let (driver, handle, events) = MeshDriver::new(key.to_libp2p_keypair(), config)?;
    let task = driver.spawn();
    let answer = present(streams, events, code.peer, &code.secret).await;
    // Best effort: the driver may have stopped already.
    let _ = handle.shutdown().await;
    let _ = task.await;
    answer?.map_err(JoinError::Refused)?;
    let (_, store) = open(dir)?;
    let id = code.peer.to_string();
    save_friend(&store, &key.peer_id(), &friend, now_ms)?;
    let name = args.name.clone().unwrap_or_default();
    if !name.is_empty() {
        let mut row = store.friend(&id)?;
        row.row.name = name.clone();
        store.update::<Friend>(row.id, &row.row, now_ms)?;
    }
    let named = if name.is_empty() {
        String::new()
    } else {
        format!(" (named {name:?} here)")
    };
    Ok(format!("joined: {id}{named} and this node are friends now"))
}

/// Waits for a connection to `peer`, presents `secret` and reads the
/// answer, retrying while the connection drops (the inviter's door may not
/// be open yet) until [`JOIN_TIMEOUT`].
async fn present(
    mut streams: StreamControl,
    mut events: mpsc::Receiver<MeshEvent>,
    peer: PeerId,
    secret: &Secret,
) -> Result<Result<(), Refusal>, JoinError> {
    let deadline = Instant::now() + JOIN_TIMEOUT;
    let unreachable = |last: String| JoinError::Unreachable {
        peer,
        secs: JOIN_TIMEOUT.as_secs(),
        last,
    };
    let mut last = "no connection".to_owned();
    loop {
        let connected = async {
            while let Some(event) = events.recv().await {
                if matches!(event, MeshEvent::PeerConnected { peer: p } if p == peer) {
                    return true;
                }
            }
            false
        };
        match timeout_at(deadline, connected).await {
            Ok(true) => {}
            Ok(false) => return Err(unreachable("the mesh stopped".into())),
            Err(_) => return Err(unreachable(last)),
        }
        let exchange = async {
            let mut stream = streams.open_invite(peer).await?;
            write_request(&mut stream, secret).await?;
            Ok::<_, ExchangeError>(read_answer(&mut stream).await?)
        };
        match timeout_at(deadline, exchange).await {
            Ok(Ok(answer)) => return Ok(answer),
            Ok(Err(ExchangeError::Mesh(MeshError::StreamUnsupported { .. }))) => {
                return Err(JoinError::Unsupported(peer));
            }
            // The connection dropped (the door was still shut): wait for
            // the driver's redial.
            Ok(Err(e)) => {
                tracing::debug!(%peer, error = %e, "invitation attempt failed; waiting to reconnect");
                last = e.to_string();
            }
            Err(_) => return Err(unreachable("no answer".into())),
        }
    }
}

#[derive(Debug, thiserror::Error)]
enum ExchangeError {
    #[error(transparent)]
    Mesh(#[from] MeshError),
    #[error(transparent)]
    Wire(#[from] WireError),
}
