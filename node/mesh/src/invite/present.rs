//! The joiner's side of an invitation: a short-lived mesh driver with this
//! node's key dials the inviter at the code's addresses, presents the secret
//! over `/porfiry/invite/1` and reads the answer. Storing the inviter as a
//! friend is the caller's: `porfiry join` writes the database, an app with a
//! running node adds the friend through its handle so the mesh dials it.

use std::future::Future;
use std::time::Duration;

use porfiry_storage::InvitationKind;
use tokio::sync::mpsc;
use tokio::time::{Instant, timeout_at};

use super::code::{CodeError, InviteCode};
use super::secret::Refusal;
use super::wire::{WireError, read_answer, write_request};
use crate::net::{
    Keypair, MeshConfig, MeshDriver, MeshError, MeshEvent, PeerId, Stream, StreamControl,
};

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
    /// The inviter's half of a device link does not verify.
    #[error("the other device's link does not verify ({0}); nothing was linked")]
    Device(porfiry_protocol::devices::DeviceError),
}

/// Presents `code`'s secret to its inviter as `key`; `Ok` once admitted.
pub async fn present_invitation(key: Keypair, code: &InviteCode) -> Result<(), PresentError> {
    let secret = code.secret;
    dial_and_exchange(key, code, move |mut stream| async move {
        write_request(&mut stream, &secret, InvitationKind::Friend).await?;
        Ok(read_answer(&mut stream).await?)
    })
    .await?
    .map_err(PresentError::Refused)
}

/// Dials `code`'s inviter with a short-lived mesh driver holding `key`
/// and runs `exchange` on an invitation stream to it, retrying on a new
/// stream while the connection drops (the inviter's door may not be open
/// yet) until [`JOIN_TIMEOUT`]. The friend's join and the device link
/// differ only in `exchange`.
pub(crate) async fn dial_and_exchange<T, F, Fut>(
    key: Keypair,
    code: &InviteCode,
    exchange: F,
) -> Result<T, PresentError>
where
    F: FnMut(Stream) -> Fut,
    Fut: Future<Output = Result<T, ExchangeError>>,
{
    if key.public().to_peer_id() == code.peer {
        return Err(PresentError::OwnInvitation(code.peer));
    }
    let streams = StreamControl::new();
    let mut config = MeshConfig::phone().with_friend(code.peer, code.addresses.clone());
    config.streams = streams.clone();
    let (driver, handle, events) = MeshDriver::new(key, config)?;
    let task = driver.spawn();
    let answer = present(streams, events, code.peer, exchange).await;
    // Best effort: the driver may have stopped already.
    let _ = handle.shutdown().await;
    let _ = task.await;
    answer
}

/// Waits for a connection to `peer` and runs `exchange` on a stream to it,
/// retrying while the connection drops until [`JOIN_TIMEOUT`].
async fn present<T, F, Fut>(
    mut streams: StreamControl,
    mut events: mpsc::Receiver<MeshEvent>,
    peer: PeerId,
    mut exchange: F,
) -> Result<T, PresentError>
where
    F: FnMut(Stream) -> Fut,
    Fut: Future<Output = Result<T, ExchangeError>>,
{
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
        let attempt = async {
            let stream = streams.open_invite(peer).await?;
            exchange(stream).await
        };
        match timeout_at(deadline, attempt).await {
            Ok(Ok(answer)) => return Ok(answer),
            Ok(Err(ExchangeError::Mesh(MeshError::StreamUnsupported { .. }))) => {
                return Err(PresentError::Unsupported(peer));
            }
            Ok(Err(ExchangeError::Device(e))) => return Err(PresentError::Device(e)),
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

/// Why one attempt of an exchange failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExchangeError {
    /// The stream could not be opened.
    #[error(transparent)]
    Mesh(#[from] MeshError),
    /// The stream broke or carried bad bytes.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// The inviter's half of a device link does not verify (not retried).
    #[error(transparent)]
    Device(#[from] porfiry_protocol::devices::DeviceError),
}
