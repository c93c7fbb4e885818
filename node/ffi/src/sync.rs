//! What runs between the node and the app besides calls: the forwarders
//! that tell a [`NodeListener`] of new notes, link changes and ticks as they
//! happen (awaiting the node's events, never polling), and
//! [`sync_now`]: one catch-up bounded by a deadline, as a push
//! notification's short wake allows.

use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use porfiry_mesh::CoreEvent;
use porfiry_mesh::net::Link;
use tokio::runtime::Handle;
use tokio::sync::broadcast::error::RecvError;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::error::PorfiryError;
use crate::listeners::NodeListener;
use crate::node::{PorfiryNode, State, stop_parts};
use crate::running::Running;
use crate::views::{FriendLink, SyncReport};

/// How often a sync looks at its friends' catch-up state: it runs only for
/// the sync's few seconds, and 100 ms is well under a catch-up's own time
/// on a link (hundreds of ms) while costing nothing between syncs.
pub const SYNC_CHECK_INTERVAL: Duration = Duration::from_millis(100);

/// The longest deadline `sync_now` takes: iOS gives a background push about
/// 30 s, Android a little more; a longer one is cut to this.
pub const MAX_SYNC_DEADLINE: Duration = Duration::from_secs(60);

/// Starts the tasks that tell `listener` what happens on `parts`' node.
pub(crate) fn forward_events(
    runtime: &Handle,
    parts: &Running,
    listener: Arc<dyn NodeListener>,
) -> Vec<JoinHandle<()>> {
    let node = parts.node.clone();
    let mut events = node.events().subscribe();
    let notes_listener = Arc::clone(&listener);
    let notes = runtime.spawn(async move {
        loop {
            match events.recv().await {
                Ok(CoreEvent::NoteArrived { id }) => match crate::node::note_by_id(&node, id).await
                {
                    Ok(note) => notes_listener.on_note(note),
                    Err(e) => tracing::warn!(id, "cannot read the note that arrived: {e}"),
                },
                Ok(CoreEvent::ProcessFinished { .. } | CoreEvent::ThinkingSwitched) => {}
                // Missed some: the app re-reads its notes list anyway.
                Err(RecvError::Lagged(n)) => tracing::warn!(n, "note events were missed"),
                Err(RecvError::Closed) => break,
            }
        }
    });
    let mut ticks = parts.ticks.subscribe();
    let tick_listener = Arc::clone(&listener);
    let thoughts = runtime.spawn(async move {
        loop {
            match ticks.recv().await {
                Ok(tick) => tick_listener.on_tick(tick),
                Err(RecvError::Lagged(n)) => tracing::warn!(n, "tick reports were missed"),
                Err(RecvError::Closed) => break,
            }
        }
    });
    let node = parts.node.clone();
    let mut links = parts.links.subscribe();
    let links = runtime.spawn(async move {
        let mut known: BTreeMap<String, Link> = BTreeMap::new();
        while links.changed().await.is_ok() {
            let now: BTreeMap<String, Link> = links
                .borrow_and_update()
                .friends
                .iter()
                .map(|(peer, record)| (peer.clone(), record.link))
                .collect();
            let changed: Vec<(String, bool)> = now
                .iter()
                .filter(|(peer, link)| known.get(*peer) != Some(link))
                .map(|(peer, link)| (peer.clone(), *link != Link::NotConnected))
                .chain(
                    known
                        .keys()
                        .filter(|p| !now.contains_key(*p))
                        .map(|p| (p.clone(), false)),
                )
                .collect();
            known = now;
            if changed.is_empty() {
                continue;
            }
            // Whether it is connected comes from the watch itself (the
            // status is read after it and may lag); its name and last
            // catch-up from the status.
            let friends = match node.status().await {
                Ok(s) => s.friends,
                Err(e) => {
                    tracing::warn!("cannot read the friends' names: {e}");
                    Vec::new()
                }
            };
            for (peer, connected) in changed {
                let known_friend = friends.iter().find(|f| f.peer_id == peer);
                listener.on_link(FriendLink {
                    name: known_friend.and_then(|f| f.name.clone()),
                    last_catchup_ms: known_friend.and_then(|f| f.last_catchup_ms),
                    peer_id: peer,
                    connected,
                });
            }
        }
    });
    vec![notes, thoughts, links]
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// One bounded catch-up (see [`PorfiryNode::sync_now`]).
pub(crate) async fn sync_now(
    node: &PorfiryNode,
    deadline_ms: u64,
) -> Result<SyncReport, PorfiryError> {
    let budget = Duration::from_millis(deadline_ms).min(MAX_SYNC_DEADLINE);
    let started = Instant::now();
    let started_ms = unix_ms();
    // One due tick may run in the wake (issue 44 §1): the budget, the
    // battery and a metered link still rule.
    node.think().policy().grant_one();
    // A paused node is started for the sync and paused after it.
    let was_paused = node.start_if_paused()?;
    let (runtime, handle, mut ticks, thinks) = {
        let state = node.state.lock().unwrap_or_else(PoisonError::into_inner);
        match &*state {
            State::Running { runtime, parts } => (
                runtime.handle().clone(),
                parts.node.clone(),
                parts.ticks.subscribe(),
                parts.thinks(),
            ),
            _ => {
                return Err(PorfiryError::NotRunning(
                    "the node stopped during the sync".into(),
                ));
            }
        }
    };
    let due = thinks && node.think().policy().hold(unix_ms()).is_none();
    node.think().changed.send_replace(());
    let deadline = started + budget;
    let watch = runtime.spawn(async move {
        let mut events = handle.events().subscribe();
        let mut received = 0u32;
        let mut thought = false;
        let mut caught_up = None;
        let mut check = tokio::time::interval(SYNC_CHECK_INTERVAL);
        loop {
            tokio::select! {
                () = tokio::time::sleep_until(deadline) => break,
                event = events.recv() => {
                    if matches!(event, Ok(CoreEvent::NoteArrived { .. })) {
                        received += 1;
                    }
                }
                tick = ticks.recv(), if due && !thought => thought = tick.is_ok(),
                _ = check.tick(), if caught_up.is_none() => {
                    let Ok(status) = handle.status().await else { break };
                    let done = !status.friends.is_empty()
                        && status.friends.iter().all(|f| f.last_catchup_ms.is_some_and(|t| t >= started_ms));
                    if done {
                        caught_up = Some(status.friends);
                    }
                }
            }
            if let Some(friends) = &caught_up
                && (thought || !due)
            {
                return (friends.clone(), received, false, thought);
            }
        }
        // A node that cannot say (it stopped) reports no friends.
        let friends = handle.status().await.map(|s| s.friends).unwrap_or_default();
        (friends, received, caught_up.is_none(), thought)
    });
    let outcome = watch.await;
    node.think().policy().revoke_grant();
    if was_paused {
        let previous = {
            let mut state = node.state.lock().unwrap_or_else(PoisonError::into_inner);
            std::mem::replace(&mut *state, State::Paused)
        };
        if let State::Running { runtime, parts } = previous {
            stop_parts(runtime, parts).await?;
        }
    }
    let (friends, received, deadline_reached, thought) =
        outcome.map_err(|e| PorfiryError::Internal(format!("the sync was dropped: {e}")))?;
    Ok(SyncReport {
        friends_connected: friends.iter().filter(|f| f.connected).count() as u32,
        friends_caught_up: friends
            .iter()
            .filter(|f| f.last_catchup_ms.is_some_and(|t| t >= started_ms))
            .count() as u32,
        notes_received: received,
        elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        deadline_reached,
        thought,
    })
}
