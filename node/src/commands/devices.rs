//! `porfiry devices link|join|list|unlink`: make this node and another of
//! the same person devices of one person, so their long-term memory (the
//! diary, concepts, links, goals, tasks, the core's notebook) travels
//! between them and nowhere else. `link` prints a one-time code alone on
//! its last line (like `invite`; the daemon here redeems it), `join CODE`
//! on the other node presents it; `list` shows the devices (`--json`),
//! `unlink PEER` ends a link (the other side learns; what it holds stays).

use clap::{Args, Subcommand};
use porfiry_storage::{InvitationKind, StorageError};

use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::devices::statements::{DeviceListing, DevicesError};
use porfiry_mesh::devices::{DeviceJoinError, join_device, list_devices, unlink_device};
use porfiry_mesh::friends::{FriendsError, open, resolve_friend};
use porfiry_mesh::init::{InitError, open_or_init};
use porfiry_mesh::invite::duration::parse_valid_for;
use porfiry_mesh::invite::service::LISTENING_CONFIG_KEY;
use porfiry_mesh::invite::{CodeError, InvitationRequest, InviteCode, MakeError, make_invitation};

/// `porfiry devices …`
#[derive(Debug, Subcommand)]
pub enum DevicesCommand {
    /// Make a one-time code that links another node of yours (the daemon
    /// here must run when it is used); prints the code alone on its last line.
    Link(LinkArgs),
    /// Link this node to the node whose `devices link` printed CODE.
    Join {
        /// The code `porfiry devices link` printed.
        #[arg(value_name = "CODE")]
        code: String,
    },
    /// List this person's other devices: peer, name, linked since, last seen,
    /// and how many memory versions written here it has yet to get.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// End the link with a device (a peer id or a friend's name). It
    /// learns of it and keeps what it holds; nothing more flows.
    Unlink {
        /// The device: a peer id or its friend name.
        #[arg(value_name = "PEER")]
        peer: String,
    },
}

/// Arguments of `porfiry devices link`.
#[derive(Debug, Args)]
pub struct LinkArgs {
    /// How long the code works: a number and s, m, h or d (at most 30d).
    #[arg(long, value_name = "DURATION", default_value = "1h")]
    pub valid_for: String,
    /// An address the other node should dial (repeatable); default: the
    /// addresses this node's daemon listens on.
    #[arg(long = "address", value_name = "MULTIADDR")]
    pub addresses: Vec<String>,
}

/// Why a `devices` command failed.
#[derive(Debug, thiserror::Error)]
pub enum DevicesCommandError {
    /// A flag's value was refused.
    #[error("{0}")]
    BadArgument(String),
    /// The code could not be made.
    #[error(transparent)]
    Make(#[from] MakeError),
    /// The code could not be read.
    #[error(transparent)]
    Code(#[from] CodeError),
    /// Joining failed (refused, unreachable).
    #[error(transparent)]
    Join(#[from] DeviceJoinError),
    /// A device command was refused.
    #[error(transparent)]
    Devices(#[from] DevicesError),
    /// No node here, or a friend lookup failed.
    #[error(transparent)]
    Friends(#[from] FriendsError),
    /// The node could not be opened or made.
    #[error(transparent)]
    Init(#[from] InitError),
    /// The database refused.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// JSON could not be written.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// Runs `porfiry devices link|list|unlink` at `now_ms` (`join` is
/// [`join`], which needs a runtime); returns what to print.
pub fn devices(
    dir: &DataDir,
    cmd: &DevicesCommand,
    now_ms: u64,
) -> Result<String, DevicesCommandError> {
    match cmd {
        DevicesCommand::Link(args) => link(dir, args, now_ms),
        DevicesCommand::List { json } => {
            let (key, store) = open(dir)?;
            let list = list_devices(&store, &key.peer_id().to_string())?;
            if *json {
                return Ok(serde_json::to_string_pretty(&list)?);
            }
            Ok(render(&list))
        }
        DevicesCommand::Unlink { peer } => {
            let (key, store) = open(dir)?;
            let peer = resolve_friend(&store, peer)?.to_string();
            unlink_device(&store, &key, &peer, now_ms)?;
            Ok(format!(
                "unlinked: {peer} is no longer a device of this person (it keeps what it holds; a running daemon tells it)"
            ))
        }
        DevicesCommand::Join { .. } => Err(DevicesCommandError::BadArgument(
            "`devices join` runs with a runtime".into(),
        )),
    }
}

fn link(dir: &DataDir, args: &LinkArgs, now_ms: u64) -> Result<String, DevicesCommandError> {
    let valid_for = parse_valid_for(&args.valid_for)
        .map_err(|e| DevicesCommandError::BadArgument(format!("--valid-for {e}")))?;
    let (key, store) = open(dir)?;
    let addresses = if args.addresses.is_empty() {
        store
            .config_get::<Vec<String>>(LISTENING_CONFIG_KEY)?
            .unwrap_or_default()
    } else {
        args.addresses.clone()
    };
    let request = InvitationRequest {
        valid_for,
        addresses,
        kind: InvitationKind::Device,
        ..InvitationRequest::default()
    };
    let code = make_invitation(&store, &key.peer_id(), &request, now_ms)?;
    Ok(format!(
        "one-time device link, valid for {}; on your other node run: porfiry devices join <code>\n{code}",
        args.valid_for.trim()
    ))
}

/// Presents `code` as a device of the same person; returns what to print.
pub async fn join(dir: &DataDir, code: &str, now_ms: u64) -> Result<String, DevicesCommandError> {
    let code = InviteCode::decode(code)?;
    let key = open_or_init(dir)?.0;
    let (_, store) = open(dir)?;
    let link = join_device(&store, &key, &code, now_ms).await?;
    Ok(format!(
        "linked: {} and this node are devices of one person now (since {}); their memory is shared from the next sync",
        code.peer, link.since_ms
    ))
}

fn render(list: &[DeviceListing]) -> String {
    if list.is_empty() {
        return "no other devices; `porfiry devices link` makes a code for one".into();
    }
    let mut out = String::new();
    for d in list {
        let name = if d.name.is_empty() { "-" } else { &d.name };
        let seen = d
            .last_sync_ms
            .map_or_else(|| "never".to_owned(), |t| format!("{t}"));
        out.push_str(&format!(
            "{}  {name}  linked since {}  last seen {seen}  behind {} versions\n",
            d.peer, d.linked_since_ms, d.behind
        ));
    }
    out.pop();
    out
}
