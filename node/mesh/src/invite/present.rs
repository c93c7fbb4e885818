//! The joiner's side of an invitation: a short-lived mesh driver with this
//! node's key dials the inviter at the code's addresses, presents the secret
//! over `/porfiry/invite/1` and reads the answer. Storing the inviter as a
//! friend is the caller's: `porfiry join` writes the database, an app with a
//! running node adds the friend through its handle so the mesh dials it.

use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::{Instant, timeout_at};

use super::code::{CodeError, InviteCode, Secret};
use super::secret::Refusal;
use super::wire::{WireError, read_answer, write_request};
use crate::net::{Keypair, MeshConfig, MeshDriver, MeshError, MeshEvent, PeerId, StreamControl};

/// How long a join tries to reach the inviter and get an answer: it covers
/// a few redials with backoff while the inviter's door opens, and still
/// fails soon enough for a person waiting at the prompt.
pub const JOIN_TIMEOUT: Duration = Duration::from_secs(20);

/// Why the inviter did not admit us.
#[derive(Debug, thiserror::Error)]
pub enum PresentError {
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
    /// The mesh could not start.
    #[error(transparent)]
    Mesh(#[from] MeshError),
}

/// Presents `code`'s secret to its inviter as `key`; `Ok` once admitted.
pub async fn present_invitation(key: Keypair, code: &InviteCode) -> Result<(), PresentError> {
    if key.public().to_peer_id() == code.peer {
        return Err(PresentError::OwnInvitation(code.peer));
    }
    let streams = StreamControl::new();
    let mut config = MeshConfig::phone().with_friend(code.peer, code.addresses.clone());
    config.streams = streams.clone();
    let (driver, handle, events) = MeshDriver::new(key, config)?;
    let task = driver.spawn();
    let answer = present(streams, events, code.peer, &code.secret).await;
    // Best effort: the driver may have stopped already.
    let _ = handle.shutdown().await;
    let _ = task.await;
    answer?.map_err(PresentError::Refused)
}

/// Waits for a connection to `peer`, presents `secret` and reads the
/// answer, retrying while the connection drops (the inviter's door may not
/// be open yet) until [`JOIN_TIMEOUT`].
async fn present(
    mut streams: StreamControl,
    mut events: mpsc::Receiver<MeshEvent>,
    peer: PeerId,
    secret: &Secret,
) -> Result<Result<(), Refusal>, PresentError> {
    let deadline = Instant::now() + JOIN_TIMEOUT;
    let unreachable = |last: String| PresentError::Unreachable {
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
                return Err(PresentError::Unsupported(peer));
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
