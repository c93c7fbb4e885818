//! `porfiry model pull NAME --from FRIEND`: a model file from a friend's
//! node instead of the Hub. The friend's daemon must run with
//! `--share-models` and allow this node (`porfiry friends models PEER on`
//! there). The command dials it itself (a short-lived mesh link with this
//! node's key, as `porfiry join` does), so this node's daemon need not run;
//! the transfer logic — signed list, resume, verification, room check — is
//! `porfiry_model_share`'s. Progress goes to a bar on stderr; the
//! kept file is registered as a Hub pull's is.

use std::ops::ControlFlow;

use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::friends::{FriendsError, resolve_friend};
use porfiry_mesh::init::open_or_init;
use porfiry_mesh::net::Multiaddr;
use porfiry_model_share::{PullEvent, PullTarget, Unmetered, pull_over_own_link};

use crate::commands::model::{ModelError, how_pulled, progress_bar, register};

/// Why a pull from a friend failed before or during the transfer.
#[derive(Debug, thiserror::Error)]
pub enum FromFriendError {
    /// `--from` names no friend.
    #[error("--from: {0}")]
    Friend(#[from] FriendsError),
    /// The friend has no address to dial.
    #[error(
        "friend {0} has no stored address to dial (it dials us); add one: porfiry friends add {0} MULTIADDR"
    )]
    NoAddress(String),
    /// The transfer was refused or failed.
    #[error(transparent)]
    Pull(#[from] porfiry_model_share::ModelPullError),
}

/// Pulls `name` from the friend `from` (its peer id or name); what to print.
pub async fn pull_from(dir: &DataDir, name: &str, from: &str) -> Result<String, ModelError> {
    let (key, store) = open_or_init(dir)?;
    let friend = resolve_friend(&store, from).map_err(FromFriendError::from)?;
    let row = store
        .find_friend(&friend.to_string())?
        .ok_or_else(|| FromFriendError::Friend(FriendsError::NotAFriend(friend.to_string())))?;
    let addresses: Vec<Multiaddr> = row
        .row
        .addresses
        .iter()
        .filter_map(|a| a.parse().ok())
        .collect();
    if addresses.is_empty() {
        return Err(FromFriendError::NoAddress(friend.to_string()).into());
    }
    let target = PullTarget {
        friend,
        name: name.to_owned(),
        models_dir: dir.models_dir(),
    };
    let bar = progress_bar(name);
    let mut on_event = |event: PullEvent| {
        match event {
            PullEvent::Started { bytes, from } => {
                bar.set_length(bytes);
                bar.set_position(from);
            }
            PullEvent::Received { at, .. } => bar.set_position(at),
            PullEvent::Held => {}
        }
        ControlFlow::Continue(())
    };
    let pulled = pull_over_own_link(
        key.to_libp2p_keypair(),
        addresses,
        &target,
        &Unmetered,
        &mut on_event,
    )
    .await;
    bar.finish_and_clear();
    let pulled = pulled.map_err(FromFriendError::from)?;
    let how = how_pulled(pulled.already_here, pulled.resumed_from);
    let mb = pulled.model.bytes.div_ceil(1_000_000);
    let mut lines = vec![format!(
        "pulled {name} from {friend}: {mb} MB into {} ({how})",
        pulled.path.display()
    )];
    lines.push(register(&store, name, &pulled.path)?);
    Ok(lines.join("\n"))
}
