//! `porfiry club create|add|remove|leave|list|members|status`: found a club,
//! change its member list with signed club changes (a running daemon sends
//! them), and see the clubs, members and reachability this node knows.
//! Every command takes `--json`. A club is named by its short name when
//! that is unambiguous among the clubs known here, else `NAME@FOUNDER`.

use clap::{Args, Subcommand};
use porfiry_protocol::club::ClubAction;
use serde::Serialize;

use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::friends::friend_names;
use porfiry_mesh::friends::{FriendsError, open, resolve_friend};
use porfiry_mesh::sharing::clubs::{self, ClubsError};

/// `porfiry club …`
#[derive(Debug, Subcommand)]
pub enum ClubCommand {
    /// Found a club with this node as founder (always a member and admin).
    Create {
        /// Short name: 1 to 32 of a-z, 0-9, '-' or '_'.
        #[arg(value_name = "NAME")]
        name: String,
        #[command(flatten)]
        out: Json,
    },
    /// Add a member (admins only); with --admin make it an admin (founder only).
    Add {
        /// The club (NAME or NAME@FOUNDER).
        #[arg(value_name = "NAME")]
        club: String,
        /// The new member: a peer id or a friend's name.
        #[arg(value_name = "PEER")]
        peer: String,
        /// Make it an admin too (only the founder may).
        #[arg(long)]
        admin: bool,
        #[command(flatten)]
        out: Json,
    },
    /// Remove a member (admins only; an admin only by the founder). It gets
    /// nothing published after this; what it has stays with it.
    Remove {
        /// The club (NAME or NAME@FOUNDER).
        #[arg(value_name = "NAME")]
        club: String,
        /// The member: a peer id or a friend's name.
        #[arg(value_name = "PEER")]
        peer: String,
        #[command(flatten)]
        out: Json,
    },
    /// Leave a club (signed by this node; the founder cannot leave).
    Leave {
        /// The club (NAME or NAME@FOUNDER).
        #[arg(value_name = "NAME")]
        club: String,
        #[command(flatten)]
        out: Json,
    },
    /// List the clubs this node knows, with its role and the member count.
    List {
        #[command(flatten)]
        out: Json,
    },
    /// List a club's members (friends by name where known).
    Members {
        /// The club (NAME or NAME@FOUNDER).
        #[arg(value_name = "NAME")]
        club: String,
        #[command(flatten)]
        out: Json,
    },
    /// Which members this node sees no member path to, and through whom
    /// they could be reached.
    Status {
        /// The club (NAME or NAME@FOUNDER).
        #[arg(value_name = "NAME")]
        club: String,
        #[command(flatten)]
        out: Json,
    },
}

/// The `--json` flag every club command takes.
#[derive(Debug, Args, Clone, Copy)]
pub struct Json {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Why a `club` command failed.
#[derive(Debug, thiserror::Error)]
pub enum ClubCommandError {
    /// Opening the node, or finding a friend, failed.
    #[error(transparent)]
    Friends(#[from] FriendsError),
    /// The club command was refused.
    #[error(transparent)]
    Club(#[from] ClubsError),
    /// Reading failed.
    #[error(transparent)]
    Storage(#[from] porfiry_storage::StorageError),
    /// JSON output failed.
    #[error("cannot print JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// A change made, as printed.
#[derive(Debug, Serialize)]
struct Changed {
    club: String,
    action: &'static str,
    target: String,
    item_id: String,
}

/// Runs one `club` command; returns what to print.
pub fn club(dir: &DataDir, command: &ClubCommand, now_ms: u64) -> Result<String, ClubCommandError> {
    let (key, store) = open(dir)?;
    let me = key.peer_id().to_string();
    let change = |club: &str, action: ClubAction, target: String, json: bool| {
        let club = clubs::resolve_club(&store, club)?;
        let item = clubs::change_club(&store, &key, &club, action, &target, now_ms)?;
        let done = Changed {
            club: club.to_string(),
            action: action.as_str(),
            target,
            item_id: item.id().to_string(),
        };
        Ok::<_, ClubCommandError>(if json {
            serde_json::to_string_pretty(&done)?
        } else {
            format!(
                "{} {} in club {} (item {})",
                done.action, done.target, done.club, done.item_id
            )
        })
    };
    Ok(match command {
        ClubCommand::Create { name, out } => {
            let club = clubs::create_club(&store, &key, name, now_ms)?;
            if out.json {
                serde_json::to_string_pretty(&serde_json::json!({
                    "club": club.to_string(),
                    "name": club.name,
                    "founder": club.founder,
                }))?
            } else {
                format!("created club {club}")
            }
        }
        ClubCommand::Add {
            club,
            peer,
            admin,
            out,
        } => {
            let target = resolve_friend(&store, peer)?.to_string();
            let action = if *admin {
                ClubAction::AddAdmin
            } else {
                ClubAction::Add
            };
            change(club, action, target, out.json)?
        }
        ClubCommand::Remove { club, peer, out } => {
            let target = resolve_friend(&store, peer)?.to_string();
            change(club, ClubAction::Remove, target, out.json)?
        }
        ClubCommand::Leave { club, out } => change(club, ClubAction::Leave, me.clone(), out.json)?,
        ClubCommand::List { out } => {
            let listed = clubs::list(&store, &me)?;
            if out.json {
                serde_json::to_string_pretty(&listed)?
            } else if listed.is_empty() {
                "no clubs".to_owned()
            } else {
                listed
                    .iter()
                    .map(|l| format!("{}  {}  {} members", l.club, l.role, l.members))
                    .collect::<Vec<_>>()
                    .join("\n")
            }
        }
        ClubCommand::Members { club, out } => {
            let club = clubs::resolve_club(&store, club)?;
            let names = friend_names(&store)?;
            let members = clubs::members(&store.club_book()?, &club, &names);
            if out.json {
                serde_json::to_string_pretty(&members)?
            } else {
                members
                    .iter()
                    .map(|m| match &m.name {
                        Some(n) => format!("{}  {}  {n}", m.peer, m.role),
                        None => format!("{}  {}", m.peer, m.role),
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            }
        }
        ClubCommand::Status { club, out } => {
            let club = clubs::resolve_club(&store, club)?;
            let names = friend_names(&store)?;
            let status = clubs::status(&store, &club, &me, &names)?;
            if out.json {
                serde_json::to_string_pretty(&status)?
            } else {
                let mut lines = vec![format!(
                    "club {}: {} members, {} reachable from here",
                    status.club,
                    status.members,
                    status.reachable.len()
                )];
                for u in &status.unreachable {
                    let who = u.name.as_deref().unwrap_or(&u.peer);
                    lines.push(if u.through.is_empty() {
                        format!("unreachable: {who} (no known path)")
                    } else {
                        format!(
                            "unreachable: {who}, could be reached through {}",
                            u.through.join(", ")
                        )
                    });
                }
                lines.join("\n")
            }
        }
    })
}
