//! `porfiry friends add|list|offload|models|remove|rename`: the peers this node
//! connects to and replicates with, and the local names the user calls them
//! by (every command that takes a friend takes its name too). Works whether
//! or not the node is running: a running daemon in another process notices
//! the change within its change poll interval; a `NodeHandle` tells its
//! loop at once. The checks and writes are `porfiry_mesh::friends`', shared
//! with `NodeHandle`, so the CLI and an embedding app refuse the same input
//! the same way.

use clap::{Args, Subcommand};
use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::friends::{
    FriendsError, check_friend, check_name, delete_friend, friend_views, open, rename_friend,
    resolve_friend, save_friend, set_offload,
};
use porfiry_model_share::set_share_models;

/// `porfiry friends …`
#[derive(Debug, Subcommand)]
pub enum FriendsCommand {
    /// Add a friend (or replace its address and groups, and its name when
    /// --name is given). Without an address it is a friend that dials us.
    Add(AddArgs),
    /// List friends.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Allow (`on`) or refuse (`off`) an existing friend's offload
    /// requests: `porfiry friends offload PEER on|off`.
    Offload {
        /// The friend's peer id or name.
        #[arg(value_name = "PEER")]
        peer_id: String,
        /// `on` or `off`.
        #[arg(value_name = "on|off")]
        state: OnOff,
    },
    /// Allow (`on`) or refuse (`off`) an existing friend's pulls of this
    /// node's model files (served with `porfiry run --share-models`):
    /// `porfiry friends models PEER on|off`.
    Models {
        /// The friend's peer id or name.
        #[arg(value_name = "PEER")]
        peer_id: String,
        /// `on` or `off`.
        #[arg(value_name = "on|off")]
        state: OnOff,
    },
    /// Remove a friend; its connections close.
    Remove {
        /// The friend's peer id or name.
        #[arg(value_name = "PEER")]
        peer_id: String,
    },
    /// Give a friend a new name (local to this node, never sent; unique
    /// ignoring case): `porfiry friends rename PEER NAME`.
    Rename {
        /// The friend's peer id or current name.
        #[arg(value_name = "PEER")]
        peer_id: String,
        /// Its new name: 1 to 32 characters, no '@', no spaces at the ends.
        #[arg(value_name = "NAME")]
        name: String,
    },
}

/// Arguments of `friends add`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// The friend's peer id (`12D3KooW…`).
    #[arg(value_name = "PEER_ID")]
    pub peer_id: String,
    /// Where to dial it, e.g. /ip4/192.0.2.7/tcp/4001 (a trailing
    /// /p2p/<peer-id> must name the same peer).
    #[arg(value_name = "MULTIADDR")]
    pub address: Option<String>,
    /// What to call it here (`anna`): shown instead of its peer id, taken
    /// wherever a peer id is (`@anna` in notes, `peer:anna`). Local, never
    /// sent; unique ignoring case; 1 to 32 characters, no '@'.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// A group to tag it with (repeatable); group notes go to these.
    #[arg(long = "group", value_name = "NAME")]
    pub groups: Vec<String>,
    /// Allow it to use this node's model (offload). Without the flag an
    /// existing friend keeps what it had; a new one is not allowed.
    #[arg(long)]
    pub allow_offload: bool,
}

/// `on` or `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnOff {
    /// Allowed.
    On,
    /// Refused.
    Off,
}

/// Runs one `friends` command; returns what to print.
pub fn friends(
    dir: &DataDir,
    command: &FriendsCommand,
    now_ms: u64,
) -> Result<String, FriendsError> {
    match command {
        FriendsCommand::Add(args) => add(dir, args, now_ms),
        FriendsCommand::List { json } => list(dir, *json),
        FriendsCommand::Offload { peer_id, state } => {
            let (_, store) = open(dir)?;
            let peer = resolve_friend(&store, peer_id)?;
            let on = *state == OnOff::On;
            set_offload(&store, &peer, on, now_ms)?;
            let how = if on { "may" } else { "may not" };
            Ok(format!(
                "friend {peer} {how} use this node's model (offload)"
            ))
        }
        FriendsCommand::Models { peer_id, state } => {
            let (_, store) = open(dir)?;
            let peer = resolve_friend(&store, peer_id)?;
            let on = *state == OnOff::On;
            set_share_models(&store, &peer, on, now_ms)?;
            let how = if on { "may" } else { "may not" };
            Ok(format!(
                "friend {peer} {how} pull this node's model files (porfiry run --share-models)"
            ))
        }
        FriendsCommand::Remove { peer_id } => {
            let (_, store) = open(dir)?;
            let peer = resolve_friend(&store, peer_id)?;
            delete_friend(&store, &peer)?;
            Ok(format!("removed friend {peer}"))
        }
        FriendsCommand::Rename { peer_id, name } => {
            check_name(name)?;
            let (_, store) = open(dir)?;
            let peer = resolve_friend(&store, peer_id)?;
            rename_friend(&store, &peer, name, now_ms)?;
            Ok(format!("friend {peer} is now called {name}"))
        }
    }
}

fn add(dir: &DataDir, args: &AddArgs, now_ms: u64) -> Result<String, FriendsError> {
    let given: Vec<String> = args.address.iter().cloned().collect();
    let mut friend = check_friend(&args.peer_id, &given, &args.groups)?;
    if let Some(name) = &args.name {
        check_name(name)?;
        friend.name = Some(name.clone());
    }
    if args.allow_offload {
        friend.allow_offload = Some(true);
    }
    let (key, store) = open(dir)?;
    let updated = save_friend(&store, &key.peer_id(), &friend, now_ms)?;
    let how = if friend.addresses.is_empty() {
        "it dials us".to_owned()
    } else {
        format!("dialled at {}", friend.addresses.join(", "))
    };
    let verb = if updated { "updated" } else { "added" };
    let called = friend
        .name
        .as_ref()
        .map(|n| format!(" as {n}"))
        .unwrap_or_default();
    Ok(format!("{verb} friend {}{called} ({how})", friend.peer))
}

fn list(dir: &DataDir, json: bool) -> Result<String, FriendsError> {
    let (_, store) = open(dir)?;
    let views = friend_views(&store)?;
    if json {
        return Ok(serde_json::to_string_pretty(&views)?);
    }
    if views.is_empty() {
        return Ok("no friends yet".into());
    }
    let lines: Vec<String> = views
        .iter()
        .map(|v| {
            let groups = if v.groups.is_empty() {
                "-".into()
            } else {
                v.groups.join(",")
            };
            let addrs = if v.addresses.is_empty() {
                "(dials us)".into()
            } else {
                v.addresses.join(" ")
            };
            let on_off = |on: bool| if on { "on" } else { "off" };
            let name = v
                .name
                .as_ref()
                .map(|n| format!("{n}  "))
                .unwrap_or_default();
            format!(
                "{name}{}  {}  groups: {groups}  offload: {}  models: {}  {addrs}",
                v.peer_id,
                v.status,
                on_off(v.allow_offload),
                on_off(v.allow_models)
            )
        })
        .collect();
    Ok(lines.join("\n"))
}
