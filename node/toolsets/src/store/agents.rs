//! The `agents` set over `agent_peers`, the friends this node replicates
//! with: list, add `peer [address] [groups]`, delete. With the mesh running
//! in this process the change goes through the [`NodeHandle`], so the node
//! dials or drops the friend at once; without it (`porfiry think` alone)
//! the same checks run and the row waits for the next `porfiry run`.
//!
//! [`NodeHandle`]: porfiry_mesh::node::NodeHandle

use porfiry_skills::{ArgSpec, Args, BoxFuture, CallContext, Language, ToolEffect};
use porfiry_storage::{Friend, Identity, ListQuery, Store};

use super::parse;
use super::records::{MAX_LIST_LINES, Total, page, tag_suffix};
use super::set::{Fail, Reply, StoreSet};
use crate::StoreTools;
use crate::texts::store_replies as texts;
use porfiry_mesh::friends::{
    CheckedFriend, FriendView, check_friend, delete_friend, friend_views, parse_peer_id,
};

/// The `agents` set.
pub(crate) fn set(deps: &StoreTools) -> StoreSet {
    use ToolEffect::{Network, Read};
    StoreSet::new(
        "agents",
        deps,
        vec![
            ("list", vec![parse::offset_arg()], Read),
            // Network: the node connects to the friend and replicates with it.
            (
                "add",
                vec![
                    ArgSpec::word("peer"),
                    ArgSpec::word("address").optional(),
                    ArgSpec::text("groups").optional(),
                ],
                Network,
            ),
            ("delete", vec![ArgSpec::word("peer")], Network),
        ],
        run,
    )
}

fn run<'a>(
    d: &'a StoreTools,
    verb: &'a str,
    args: &'a Args,
    ctx: &'a CallContext,
) -> BoxFuture<'a, Option<Reply>> {
    Box::pin(async move {
        Some(match verb {
            "list" => list(d, ctx, args).await,
            "add" => add(d, ctx, args).await,
            "delete" => delete(d, ctx, args).await,
            _ => return None,
        })
    })
}

fn line(f: &FriendView) -> String {
    format!("{} ({}){}", f.peer_id, f.status, tag_suffix(&f.groups))
}

async fn list(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    let lang = ctx.language;
    let offset = parse::offset(lang, args)?;
    let friends =
        d.db.read(friend_views)
            .await?
            .map_err(|e| Fail::refused(lang, e))?;
    let total = friends.len().saturating_sub(offset as usize) as u64;
    let lines = friends
        .iter()
        .skip(offset as usize)
        .take(MAX_LIST_LINES)
        .map(line)
        .collect();
    Ok(page(lang, lines, offset, Total::Known(total)))
}

async fn add(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    let lang = ctx.language;
    let peer = args.text("peer").to_owned();
    let addresses: Vec<String> = parse::opt(args, "address").into_iter().collect();
    let groups = parse::tags(args.text("groups"))?;
    let friend = check_friend(&peer, &addresses, &groups).map_err(|e| Fail::refused(lang, e))?;
    let id = friend.peer.to_string();
    let lookup = id.clone();
    let known = d.db.read(move |s| s.find_friend(&lookup)).await??.is_some();
    match &d.node {
        Some(node) => {
            node.add_friend(&peer, addresses, groups)
                .await
                .map_err(|e| Fail::refused(lang, e))?;
        }
        None => {
            let now = parse::now(ctx);
            d.db.write(move |s| save_offline(s, lang, &friend, now))
                .await??;
        }
    }
    Ok(texts::friend_added(lang, &id, known))
}

/// Without a node: refuses the node's own id (as far as `identity` knows
/// it), then adds the friend or replaces its addresses and groups, in one
/// transaction.
fn save_offline(s: &Store, lang: Language, friend: &CheckedFriend, now: u64) -> Result<(), Fail> {
    let id = friend.peer.to_string();
    let own = s
        .list::<Identity>(&ListQuery::default())?
        .into_iter()
        .any(|i| i.row.peer_id.as_deref() == Some(id.as_str()));
    if own {
        return Err(Fail::Bad(texts::own_peer(lang).to_owned()));
    }
    s.transaction(|s| match s.find_friend(&id)? {
        Some(_) => {
            s.set_friend_addresses(&id, &friend.addresses, now)?;
            s.set_friend_groups(&id, &friend.groups, now)
        }
        None => {
            let row = Friend {
                peer_id: id.clone(),
                addresses: friend.addresses.clone(),
                groups: friend.groups.clone(),
                ..Default::default()
            };
            s.add_friend(&row, now).map(|_| ())
        }
    })?;
    Ok(())
}

async fn delete(d: &StoreTools, ctx: &CallContext, args: &Args) -> Reply {
    let lang = ctx.language;
    let peer = args.text("peer").to_owned();
    match &d.node {
        Some(node) => node
            .remove_friend(&peer)
            .await
            .map_err(|e| Fail::refused(lang, e))?,
        None => {
            let parsed = parse_peer_id(&peer).map_err(|e| Fail::refused(lang, e))?;
            d.db.write(move |s| delete_friend(s, &parsed))
                .await?
                .map_err(|e| Fail::refused(lang, e))?;
        }
    }
    Ok(texts::friend_removed(lang, &peer))
}
