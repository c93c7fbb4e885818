//! `porfiry join CODE [--name NAME]`: accepts an invitation. The command
//! itself dials the inviter (a short-lived mesh driver with this node's
//! key; the daemon need not run, and may), presents the secret over
//! `/porfiry/invite/1` and, only when the inviter admits it, stores the
//! inviter as a friend (its peer id, the code's addresses and `--name`).
//! A wrong, used or expired code stores nothing and exits non-zero saying
//! which. The inviter's daemon must be running.

use clap::Args;
use porfiry_storage::{Friend, StorageError};

use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::friends::{FriendsError, check_friend, open, save_friend};
use porfiry_mesh::init::{InitError, open_or_init};
use porfiry_mesh::invite::{CodeError, InviteCode, PresentError, present_invitation};

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
    /// The inviter could not be reached or did not admit us.
    #[error(transparent)]
    Present(#[from] PresentError),
    /// The code could not be read.
    #[error(transparent)]
    Code(#[from] CodeError),
    /// The node could not be opened or made.
    #[error(transparent)]
    Init(#[from] InitError),
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
        return Err(PresentError::OwnInvitation(code.peer).into());
    }
    let addresses: Vec<String> = code.addresses.iter().map(ToString::to_string).collect();
    // Checked before any dial, so a bad name or address stores nothing.
    let friend = check_friend(&code.peer.to_string(), &addresses, &[])?;
    present_invitation(key.to_libp2p_keypair(), &code).await?;
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
