//! The running node: one loop that owns the replication engine and the
//! database connection and glues them to the libp2p driver.
//!
//! ```text
//! driver events ──► decode + Inbound::from_wire (batch verify) ──► engine
//! engine outputs ──► engine_io: one SQLite transaction per run of writes,
//!                    frames to the `Outgoing` task, one timer (WakeAt)
//! data_version poll ──► friends diff (driver allow-list, engine groups),
//!                       publish rows marked for sharing, pick up items other
//!                       processes signed (`notes post`) ──► Input::Publish
//! ```
//!
//! Every input is handled to the end — its writes committed — before the
//! next is taken, so when shutdown is asked for between two inputs all that
//! the engine accepted is on disk. Storage is read at start without
//! re-verifying signatures: every row was verified (or signed) before it
//! was written, the file is private to this user, and re-verifying 100,000
//! items would add seconds to every start for no new guarantee.

use std::collections::HashSet;
use std::future::Future;
use std::io::Write;
use std::time::Duration;

use porfiry_protocol::engine::{Engine, EngineConfig, Inbound, Input};
use porfiry_protocol::{ItemId, NodeKey, VerifiedItem, verify_batch, wire};
use porfiry_storage::{PeerStatus, Store};
use tokio::sync::mpsc;

use super::engine_io::{Counters, carry_out};
use super::error::ReplicationError;
use super::friend_set::{self, FriendSet};
use super::limits::{CHANGE_POLL_INTERVAL, OWN_ITEM_LOOKBACK_MS, SHUTDOWN_TIMEOUT};
use super::outgoing::Outgoing;
use super::watch::ChangeWatcher;
use crate::clock::now_ms;
use crate::mesh::{MeshCommand, MeshConfig, MeshDriver, MeshError, MeshEvent, Multiaddr, Profile};
use crate::sharing::publish::publish_pending;

/// How to run the node.
#[derive(Debug, Clone)]
pub struct DaemonOptions {
    /// Server (listens) or phone (dials only).
    pub profile: Profile,
    /// Listen addresses (server only).
    pub listen: Vec<Multiaddr>,
}

/// What the node held when it stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stopped {
    /// Items the engine held, every one of them committed to the file.
    pub items_held: usize,
    /// Traffic counters.
    pub counters: Counters,
}

/// Runs the node until `shutdown` resolves. Prints `peer id: <id>` and one
/// `listening on <addr>/p2p/<id>` line per listen address to `out`,
/// flushing each.
pub async fn run_node(
    key: NodeKey,
    store: Store,
    options: DaemonOptions,
    out: &mut dyn Write,
    shutdown: impl Future<Output = ()>,
) -> Result<Stopped, ReplicationError> {
    let local = key.peer_id().to_string();
    let friends = friend_set::load(&store)?;
    let records = store.item_records()?;
    tracing::info!(peer = %local, items = records.len(), friends = friends.len(), "starting node");
    let engine = Engine::new(EngineConfig::new(local.clone()), records);

    let mut config = match options.profile {
        Profile::Server => MeshConfig::server(options.listen),
        Profile::Phone => MeshConfig {
            listen: options.listen,
            ..MeshConfig::phone()
        },
    };
    for f in friends.values() {
        config = config.with_friend(f.peer, f.addresses.clone());
    }
    let (driver, handle, mut events) = MeshDriver::new(key.to_libp2p_keypair(), config)?;
    let driver_task = driver.spawn();
    let (outgoing, forward_task) = Outgoing::spawn(handle);
    print_line(out, &format!("peer id: {local}"))?;

    let watcher = ChangeWatcher::open(store.path())?;
    let mut node = Node {
        key,
        local,
        store,
        engine,
        friends,
        outgoing,
        counters: Counters::default(),
        wake: None,
        skipped: HashSet::new(),
        fed: HashSet::new(),
        own_since: now_ms().saturating_sub(OWN_ITEM_LOOKBACK_MS),
        watcher,
    };
    let result = node.run(&mut events, out, shutdown).await;

    node.outgoing.command(MeshCommand::Shutdown);
    drop(events); // a driver waiting to hand us an event stops instead
    if tokio::time::timeout(SHUTDOWN_TIMEOUT, driver_task)
        .await
        .is_err()
    {
        tracing::warn!("mesh driver did not stop in time");
    }
    forward_task.abort();
    result?;
    Ok(Stopped {
        items_held: node.engine.item_count(),
        counters: node.counters,
    })
}

/// The loop's state.
struct Node {
    key: NodeKey,
    local: String,
    store: Store,
    engine: Engine,
    friends: FriendSet,
    outgoing: Outgoing,
    counters: Counters,
    /// When the engine wants its next `Tick` (Unix ms).
    wake: Option<u64>,
    /// Rows that cannot be published (logged once).
    skipped: HashSet<(&'static str, i64)>,
    /// Our own items found in storage and handed to the engine already.
    fed: HashSet<ItemId>,
    /// Where the next scan for items signed by other processes starts.
    own_since: u64,
    watcher: ChangeWatcher,
}

impl Node {
    async fn run(
        &mut self,
        events: &mut mpsc::Receiver<MeshEvent>,
        out: &mut dyn Write,
        shutdown: impl Future<Output = ()>,
    ) -> Result<(), ReplicationError> {
        self.tick()?;
        self.scan();
        let mut poll = tokio::time::interval(CHANGE_POLL_INTERVAL);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tokio::pin!(shutdown);
        loop {
            let timer = sleep_until_ms(self.wake);
            tokio::select! {
                biased;
                () = &mut shutdown => {
                    tracing::info!("shutting down");
                    return Ok(());
                }
                event = events.recv() => match event {
                    Some(event) => self.on_event(event, out)?,
                    None => return Err(MeshError::DriverStopped.into()),
                },
                () = timer => self.tick()?,
                _ = poll.tick() => {
                    if self.watcher.changed()? {
                        self.scan();
                    }
                }
            }
        }
    }

    /// Feeds one input and carries out what comes of it.
    fn input(&mut self, input: Input) -> Result<(), ReplicationError> {
        self.inputs(vec![input])
    }

    /// Feeds several inputs, then carries out all their outputs at once
    /// (one transaction for their writes).
    fn inputs(&mut self, inputs: Vec<Input>) -> Result<(), ReplicationError> {
        let now = now_ms();
        let mut outputs = Vec::new();
        for input in inputs {
            self.engine.handle_into(now, input, &mut outputs);
        }
        let mut sink = self.outgoing.clone();
        if let Some(at) = carry_out(
            &self.store,
            &self.local,
            outputs,
            &mut sink,
            &mut self.counters,
        )? {
            self.wake = Some(at);
        }
        Ok(())
    }

    fn tick(&mut self) -> Result<(), ReplicationError> {
        // The timer is spent; the engine asks again if anything is pending.
        self.wake = None;
        self.input(Input::Tick)
    }

    fn on_event(&mut self, event: MeshEvent, out: &mut dyn Write) -> Result<(), ReplicationError> {
        match event {
            MeshEvent::Listening { address } => {
                print_line(out, &format!("listening on {address}/p2p/{}", self.local))?;
            }
            MeshEvent::PeerConnected { peer } => {
                let peer = peer.to_string();
                tracing::info!(%peer, "friend connected");
                self.set_status(&peer, PeerStatus::Online);
                let groups = self
                    .friends
                    .get(&peer)
                    .map(|f| f.groups.clone())
                    .unwrap_or_default();
                self.input(Input::PeerConnected { peer, groups })?;
            }
            MeshEvent::PeerDisconnected { peer } => {
                let peer = peer.to_string();
                tracing::info!(%peer, "friend disconnected");
                self.set_status(&peer, PeerStatus::Offline);
                self.input(Input::PeerDisconnected { peer })?;
            }
            MeshEvent::FrameReceived { peer, frame } => {
                let peer = peer.to_string();
                match wire::decode(&frame) {
                    Ok(message) => {
                        let message = Inbound::from_wire(message, now_ms());
                        self.input(Input::Received { peer, message })?;
                    }
                    Err(e) => {
                        tracing::warn!(%peer, bytes = frame.len(), error = %e, "dropped a frame that is not a wire message");
                    }
                }
            }
            // The driver has logged these already.
            MeshEvent::FrameRejected { peer, reason } => {
                tracing::debug!(%peer, %reason, "frame rejected by the transport");
            }
            MeshEvent::SendFailed { peer, reason } => {
                tracing::debug!(%peer, ?reason, "frame not delivered; catch-up will cover it");
            }
            MeshEvent::PeerRefused { peer } => {
                tracing::debug!(%peer, "stranger refused");
            }
        }
        Ok(())
    }

    fn set_status(&self, peer: &str, status: PeerStatus) {
        let now = now_ms();
        if let Err(e) = self.store.set_friend_status(peer, status, Some(now), now) {
            tracing::debug!(%peer, error = %e, "friend status not recorded");
        }
    }

    /// Picks up what other processes changed. Failures here are logged and
    /// retried at the next change: nothing is lost by waiting.
    fn scan(&mut self) {
        if let Err(e) = self.scan_friends() {
            tracing::warn!(error = %e, "reading friends failed");
        }
        if let Err(e) = self.scan_publish() {
            tracing::warn!(error = %e, "publishing failed");
        }
    }

    fn scan_friends(&mut self) -> Result<(), ReplicationError> {
        let new = friend_set::load(&self.store)?;
        let changes = friend_set::diff(&self.friends, &new);
        self.friends = new;
        for f in changes.allow {
            tracing::info!(peer = %f.peer, addresses = ?f.addresses, "friend allowed");
            self.outgoing.command(MeshCommand::AddFriend {
                peer: f.peer,
                addresses: f.addresses,
            });
        }
        for peer in changes.drop {
            tracing::info!(%peer, "friend removed");
            self.outgoing.command(MeshCommand::RemoveFriend { peer });
        }
        for (peer, groups) in changes.regroup {
            if self.engine.connected_peers().any(|p| p == peer) {
                self.input(Input::PeerConnected { peer, groups })?;
            }
        }
        Ok(())
    }

    fn scan_publish(&mut self) -> Result<(), ReplicationError> {
        let now = now_ms();
        let mut items = publish_pending(&self.store, &self.key, now, &mut self.skipped)?;
        items.extend(self.signed_elsewhere(now)?);
        for item in &items {
            self.fed.insert(item.id());
        }
        self.inputs(
            items
                .into_iter()
                .map(|item| Input::Publish { item })
                .collect(),
        )
    }

    /// Our own items another process stored (a `notes post` signs its item
    /// itself) that the engine does not hold yet.
    fn signed_elsewhere(&mut self, now: u64) -> Result<Vec<VerifiedItem>, ReplicationError> {
        let mut envelopes = Vec::new();
        for (id, payload) in self.store.own_items_since(&self.local, self.own_since)? {
            if !self.engine.holds(&id) && !self.fed.contains(&id) {
                envelopes.push((id, payload));
            }
        }
        self.own_since = now.saturating_sub(OWN_ITEM_LOOKBACK_MS);
        // One batch verification: another process wrote these rows.
        let refs: Vec<&[u8]> = envelopes.iter().map(|(_, e)| e.as_slice()).collect();
        let mut found = Vec::with_capacity(refs.len());
        for ((id, _), result) in envelopes.iter().zip(verify_batch(&refs, now)) {
            match result {
                Ok(item) => found.push(item),
                Err(e) => {
                    tracing::warn!(%id, error = %e, "own stored item does not verify; not published");
                    self.fed.insert(*id);
                }
            }
        }
        Ok(found)
    }
}

/// Writes one whole line in one write and flushes it, so whoever reads
/// our stdout (a supervisor, a test) never sees half of it.
fn print_line(out: &mut dyn Write, line: &str) -> std::io::Result<()> {
    out.write_all(format!("{line}\n").as_bytes())?;
    out.flush()
}

/// Sleeps until the Unix time `at_ms`, or forever without one.
async fn sleep_until_ms(at_ms: Option<u64>) {
    match at_ms {
        Some(at) => {
            let wait = at.saturating_sub(now_ms());
            tokio::time::sleep(Duration::from_millis(wait)).await;
        }
        None => std::future::pending().await,
    }
}
