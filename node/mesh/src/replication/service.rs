//! The running node: one loop that owns the replication engine and glues it
//! to the libp2p driver and the database actor ([`porfiry_storage::db::Db`]).
//!
//! ```text
//! driver events ──► verify stage (own thread: friends' frames served in
//!                    turn, each acknowledged when taken, then decode +
//!                    batch verify, `verify_stage`) ──► engine
//! engine outputs ──► engine_io on the DB writer thread: one SQLite
//!                    transaction per run of writes (cut after a chunk
//!                    when another write waits), frames to the
//!                    `Outgoing` task; one timer (WakeAt)
//! LoopCommand (in-process writes through a NodeHandle) ──► Input::Publish /
//!                       friends diff at once; status snapshots
//! data_version poll ──► (other processes only) friends diff (driver
//!                       allow-list, engine groups), publish rows marked for
//!                       sharing, pick up items other processes signed
//!                       (`notes post`) ──► Input::Publish
//! ```
//!
//! Every input is handled to the end — its writes committed — before the
//! next is taken, so when shutdown is asked for between two inputs all that
//! the engine accepted is on disk. Storage is read at start without
//! re-verifying signatures: every row was verified (or signed) before it
//! was written, the file is private to this user, and re-verifying 100,000
//! items would add seconds to every start for no new guarantee. For the
//! same reason our own items another process signed into the file are
//! decoded but not verified again when the poll picks them up
//! (`VerifiedItem::vouch_own`).
//!
//! Publishing our own items is in `service_publish.rs`; telling friends our
//! addresses and restarting catch-up over a moved link in `service_reach.rs`;
//! pruning the memory shared with devices in `service_prune.rs`.

use std::collections::{BTreeMap, HashSet};
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use porfiry_protocol::engine::{Engine, EngineConfig, Event, Inbound, Input, Output, Quotas};
use porfiry_protocol::{ItemId, NodeKey, VerifiedItem};
use porfiry_skills::Clock;
use porfiry_storage::PeerStatus;
use tokio::sync::{mpsc, oneshot, watch};

use super::chunks::drained;
use super::engine_clock::EngineTime;
use super::engine_io::carry_out_in_turns;
use super::error::ReplicationError;
use super::frame_sink::Counters;
use super::friend_set::{self, FriendSet};
use super::limits::{OWN_ITEM_LOOKBACK_MS, SHUTDOWN_TIMEOUT, change_poll_intervals};
use super::outgoing::{Outgoing, WriterSink};
use super::refused_file::{RefusedAuthor, RefusedSchedule};
use super::verify_stage::{Arrival, Frame, spawn_verify_stage, verify_frame};
use super::watch::{ChangeWatcher, spawn_watch};
use crate::devices::prune::{MIND_PRUNED_AT_KEY, PruneSchedule};
use crate::net::{
    FrameTaker, MeshCommand, MeshConfig, MeshDriver, MeshError, MeshEvent, Multiaddr, Profile,
    StreamControl,
};
use crate::sharing::reach::{Announced, own_reach};
use porfiry_storage::db::Db;

#[path = "service_disk.rs"]
mod service_disk;
#[path = "service_prune.rs"]
mod service_prune;
#[path = "service_publish.rs"]
mod service_publish;
#[path = "service_reach.rs"]
mod service_reach;

/// How to run the node.
#[derive(Debug, Clone)]
pub struct DaemonOptions {
    /// Server (listens) or phone (dials only).
    pub profile: Profile,
    /// Listen addresses (server only).
    pub listen: Vec<Multiaddr>,
    /// Offload streams; the node handle holds a clone made before the mesh runs.
    pub streams: StreamControl,
    /// Relaying, LAN discovery and the links file (see `mesh::reach`).
    pub reach: crate::net::ReachConfig,
    /// What one author may make this node hold (`porfiry run --quota-*`).
    pub quotas: Quotas,
    /// Where to write who the quotas refused (`refused.json`); none in
    /// tests that need no file.
    pub refused_file: Option<PathBuf>,
    /// The data dir, whose free space a full disk is reported with and
    /// watched for (`service_disk.rs`).
    pub data_dir: Option<PathBuf>,
}

/// What the node held when it stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stopped {
    /// Items the engine held, every one of them committed to the file.
    pub items_held: usize,
    /// Traffic counters.
    pub counters: Counters,
}

/// What the process tells the loop directly (a `NodeHandle`'s writes and
/// questions), so it need not wait for the `data_version` poll.
#[derive(Debug)]
pub enum LoopCommand {
    /// A note was stored and signed in this process: publish it now.
    Publish(VerifiedItem),
    /// Friends were added, changed or removed in this process: re-read them.
    FriendsChanged,
    /// Report what only the loop knows.
    Status(oneshot::Sender<LoopStatus>),
}

/// What only the loop knows, for `NodeHandle::status`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoopStatus {
    /// Friends connected now (peer ids, sorted).
    pub connected: Vec<String>,
    /// When a catch-up session with each friend last ended (Unix ms, the
    /// node's clock).
    pub last_catchup_ms: BTreeMap<String, u64>,
    /// Items the engine holds.
    pub items_held: usize,
    /// Authors the quotas refused since the daemon started, most first.
    pub refused: Vec<RefusedAuthor>,
}

/// The loop's links to the rest of the process.
pub struct LoopIo {
    /// In-process writes and questions.
    pub commands: mpsc::Receiver<LoopCommand>,
    /// Every `<addr>/p2p/<id>` the node listens on, as they come.
    pub listening: watch::Sender<Vec<String>>,
    /// The node's clock (Unix ms for the engine and the catch-up times).
    pub clock: Arc<dyn Clock>,
    /// Where merged notes are announced to the cognitive core.
    pub events: crate::events::CoreEvents,
    /// Moved on every database change the loop notices.
    pub db_changed: watch::Sender<u64>,
}

impl std::fmt::Debug for LoopIo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopIo").finish_non_exhaustive()
    }
}

/// Runs the node until `shutdown` resolves. Sends every listen address to
/// `io.listening` as `<addr>/p2p/<id>`. When every command sender is gone
/// the loop goes on without commands (other processes' writes are still
/// seen by the poll).
pub async fn run_node(
    key: NodeKey,
    db: Db,
    options: DaemonOptions,
    io: LoopIo,
    shutdown: impl Future<Output = ()>,
) -> Result<Stopped, ReplicationError> {
    let local = key.peer_id().to_string();
    // The engine is built from the rows as they are read: a node holding a
    // million items never has their full records in memory at once. Club
    // items are routed by the club book rebuilt from the stored club
    // changes; the engine keeps it current with every change it accepts.
    // A server serves several friends' catch-up sessions at once, a phone
    // one (see `SERVER_SERVED_SESSIONS`).
    let engine_config = EngineConfig {
        quotas: options.quotas,
        ..match options.profile {
            Profile::Server => EngineConfig::for_server(local.clone()),
            Profile::Phone => EngineConfig::new(local.clone()),
        }
    };
    let engine_config_again = engine_config.clone();
    let start_key = key.clone();
    let (friends, mut engine, announced, told) = db
        .read(move |s| -> Result<_, ReplicationError> {
            let local = start_key.peer_id().to_string();
            let announced = Announced::load(s, &local)?;
            let friends = friend_set::with_told(friend_set::load(s)?, &announced);
            let told = own_reach(s, &start_key)?;
            let clubs = s.club_book()?;
            let devices = s.device_book(&local)?;
            let mut engine =
                s.with_item_records(|records| Engine::with_clubs(engine_config, records, clubs))?;
            // No friend is connected yet: the book's outputs (sessions
            // toward new devices) have nobody to start for.
            if let Err(e) = engine.set_devices(0, devices) {
                tracing::warn!(error = %e, "the device book was refused; devices get nothing");
            }
            Ok((friends, engine, announced, told))
        })
        .await??;
    engine.set_trusted(friends.keys().cloned());
    tracing::info!(peer = %local, items = engine.item_count(), friends = friends.len(), "starting node");

    let poll_intervals = change_poll_intervals(options.profile);
    let mut config = match options.profile {
        Profile::Server => MeshConfig {
            streams: options.streams,
            reach: options.reach,
            ack_when_taken: true,
            ..MeshConfig::server(options.listen)
        },
        Profile::Phone => MeshConfig {
            listen: options.listen,
            streams: options.streams,
            reach: options.reach,
            ack_when_taken: true,
            ..MeshConfig::phone()
        },
    };
    for f in friends.values() {
        config = config.with_friend(f.peer, f.addresses.clone());
    }
    let (driver, handle, events) = MeshDriver::new(key.to_libp2p_keypair(), config)?;
    let driver_task = driver.spawn();
    let LoopIo {
        mut commands,
        listening,
        clock,
        events: core_events,
        db_changed,
    } = io;
    let time = Arc::new(EngineTime::new(clock));
    let taker = handle.frame_taker();
    let (mut arrivals, verify_thread) = spawn_verify_stage(events, taker.clone(), time.clone())?;
    let (outgoing, forward_task) = Outgoing::spawn(handle);

    let (changes_tx, mut changes) = mpsc::channel(1);
    let _watch = spawn_watch(ChangeWatcher::start(&db).await?, poll_intervals, changes_tx)?;
    let now = time.now();
    // When the memory was last pruned, so a restart does not prune again.
    let pruned_at = db
        .read(|s| s.config_get::<u64>(MIND_PRUNED_AT_KEY))
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r.map_err(|e| e.to_string()))
        .unwrap_or_else(|e| {
            tracing::warn!("cannot read when the memory was last pruned: {e}");
            None
        });
    let mut node = Node {
        time,
        key,
        local,
        db,
        engine,
        friends,
        outgoing,
        counters: Counters::default(),
        wake: None,
        skipped: HashSet::new(),
        fed: HashSet::new(),
        own_since: now.saturating_sub(OWN_ITEM_LOOKBACK_MS),
        listening,
        last_catchup: BTreeMap::new(),
        core_events,
        db_changed,
        announced,
        told,
        reach_due: None,
        refused_file: options.refused_file,
        refused_due: RefusedSchedule::default(),
        data_dir: options.data_dir,
        disk_full: None,
        disk_full_peers: Vec::new(),
        engine_config: engine_config_again,
        taker,
        mind_prune: PruneSchedule::new(now, pruned_at),
    };
    let result = node
        .run(&mut arrivals, &mut commands, &mut changes, shutdown)
        .await;

    // The driver may be gone already; waiting for room is bounded too.
    if tokio::time::timeout(
        SHUTDOWN_TIMEOUT,
        node.outgoing.command(MeshCommand::Shutdown),
    )
    .await
    .is_err()
    {
        tracing::warn!("mesh driver did not take the shutdown in time");
    }
    // A driver waiting to hand the stage an event stops instead: the stage
    // ends when it cannot pass an event on.
    drop(arrivals);
    if tokio::time::timeout(SHUTDOWN_TIMEOUT, driver_task)
        .await
        .is_err()
    {
        tracing::warn!("mesh driver did not stop in time");
    }
    // The stage ends with the driver (its events channel closes); it is
    // never blocked long, but the wait is bounded all the same.
    let joined = tokio::task::spawn_blocking(move || verify_thread.join());
    if tokio::time::timeout(SHUTDOWN_TIMEOUT, joined)
        .await
        .is_err()
    {
        tracing::warn!("verify stage did not stop in time");
    }
    forward_task.abort();
    node.write_refused();
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
    db: Db,
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
    listening: watch::Sender<Vec<String>>,
    /// The engine's time: wall clock that never goes back (`engine_clock`),
    /// shared with the verify stage.
    time: Arc<EngineTime>,
    /// When a catch-up session with each friend last ended.
    last_catchup: BTreeMap<String, u64>,
    /// The cognitive core's wake-up events.
    core_events: crate::events::CoreEvents,
    /// Told of every database change the watch reports.
    db_changed: watch::Sender<u64>,
    /// Where each friend said it can be reached (`reachable_at`).
    announced: Announced,
    /// Our last `reachable_at` item: its id and addresses.
    told: Option<(ItemId, Vec<String>)>,
    /// Addresses the driver reported, to tell friends once they have
    /// settled: (when, what), see `REACH_SETTLE_MS`.
    reach_due: Option<(u64, Vec<String>)>,
    /// Where `refused.json` goes, and when it is next due.
    refused_file: Option<PathBuf>,
    refused_due: RefusedSchedule,
    /// The data dir (for the free space), and while the disk is full when
    /// to look at it again (`service_disk.rs`).
    data_dir: Option<PathBuf>,
    disk_full: Option<u64>,
    /// Friends connected while the engine was rebuilt a second time on a
    /// full disk, told to it when space is back.
    disk_full_peers: Vec<String>,
    /// How the engine was set up, to build it again from the file.
    engine_config: EngineConfig,
    /// Tells the driver a frame was taken (see `verify_stage`).
    taker: FrameTaker,
    /// When the memory shared with devices is pruned next
    /// (`service_prune.rs`).
    mind_prune: PruneSchedule,
}

impl Node {
    async fn run(
        &mut self,
        arrivals: &mut mpsc::Receiver<Arrival>,
        commands: &mut mpsc::Receiver<LoopCommand>,
        changes: &mut mpsc::Receiver<()>,
        shutdown: impl Future<Output = ()>,
    ) -> Result<(), ReplicationError> {
        self.tick().await?;
        self.scan().await;
        let mut commands_open = true;
        tokio::pin!(shutdown);
        loop {
            let timer = sleep_until_ms(self.next_timer(), self.now());
            tokio::select! {
                biased;
                () = &mut shutdown => {
                    tracing::info!("shutting down");
                    // What the process wrote before asking to stop is taken
                    // in, so `Stopped::items_held` counts it.
                    commands.close();
                    while let Ok(command) = commands.try_recv() {
                        self.on_command(command).await?;
                    }
                    return Ok(());
                }
                arrival = arrivals.recv() => match arrival {
                    Some(arrival) => self.on_arrival(arrival).await?,
                    None => return Err(MeshError::DriverStopped.into()),
                },
                command = commands.recv(), if commands_open => match command {
                    Some(command) => self.on_command(command).await?,
                    None => commands_open = false,
                },
                () = timer => self.on_timer().await?,
                change = changes.recv() => match change {
                    Some(()) => {
                        self.db_changed.send_modify(|n| *n = n.wrapping_add(1));
                        self.scan().await
                    }
                    None => return Err(ReplicationError::WatchStopped),
                },
            }
        }
    }

    /// Engine time: Unix ms from the node's clock, never going back, so a
    /// clock set back does not delay the engine's timers.
    fn now(&self) -> u64 {
        self.time.now()
    }

    async fn on_command(&mut self, command: LoopCommand) -> Result<(), ReplicationError> {
        match command {
            LoopCommand::Publish(item) => {
                self.fed.insert(item.id());
                self.input(Input::Publish { item }).await?;
            }
            LoopCommand::FriendsChanged => {
                if let Err(e) = self.scan_friends().await {
                    tracing::warn!(error = %e, "reading friends failed");
                }
            }
            LoopCommand::Status(reply) => {
                let mut connected: Vec<String> =
                    self.engine.connected_peers().map(str::to_owned).collect();
                connected.sort();
                // The asker may have given up; nothing to do then.
                let _ = reply.send(LoopStatus {
                    connected,
                    last_catchup_ms: self.last_catchup.clone(),
                    items_held: self.engine.item_count(),
                    refused: self.engine.refused().into_iter().map(Into::into).collect(),
                });
            }
        }
        Ok(())
    }

    /// Feeds one input and carries out what comes of it.
    async fn input(&mut self, input: Input) -> Result<(), ReplicationError> {
        self.inputs(vec![input]).await
    }

    /// Feeds several inputs, then carries out all their outputs at once
    /// (one transaction for their writes, on the DB writer thread, unless
    /// another write waits: then in turns of `WRITE_TURN_ITEMS`, see
    /// `engine_io`).
    async fn inputs(&mut self, inputs: Vec<Input>) -> Result<(), ReplicationError> {
        let now = self.now();
        let mut outputs = Vec::new();
        for input in inputs {
            self.engine.handle_into(now, input, &mut outputs);
        }
        let mut moved = false;
        for output in &outputs {
            match output {
                Output::Event(Event::SyncFinished { peer, .. }) => {
                    self.last_catchup.insert(peer.clone(), now);
                }
                Output::Store {
                    item,
                    received_from: Some(from),
                    ..
                } => moved |= self.announced.take(item, Some(from)),
                _ => {}
            }
        }
        if outputs.is_empty() {
            return Ok(());
        }
        let counters = std::mem::take(&mut self.counters);
        // Compared after the writer's turns: only a refusal made by these
        // outputs schedules the refused list's save (`self.counters` is
        // empty while the writer holds them).
        let over_quota_before = counters.over_quota;
        let (result, counters) = carry_out_in_turns(
            &self.db,
            &self.local,
            outputs,
            WriterSink::new(self.outgoing.clone()),
            counters,
        )
        .await?;
        if counters.over_quota != over_quota_before {
            self.refused_due.refused();
        }
        self.counters = counters;
        if !self.counters.refused_pruned.is_empty() {
            let refused = std::mem::take(&mut self.counters.refused_pruned);
            self.engine.forget(&refused);
        }
        for id in self.counters.merged_notes.drain(..) {
            self.core_events
                .send(crate::events::CoreEvent::NoteArrived { id });
        }
        let wake = match result {
            Ok(wake) => wake,
            Err(e) if porfiry_storage::disk::is_disk_full(&e) => {
                // Boxed: it feeds the rebuilt engine again.
                return Box::pin(self.on_disk_full()).await;
            }
            Err(e) => return Err(e.into()),
        };
        if let Some(at) = wake {
            self.wake = Some(at);
        }
        if moved {
            // A friend told us where it is now: dial it there from now on.
            // (Boxed: re-reading friends may feed the engine again.)
            Box::pin(self.scan_friends()).await?;
        }
        Ok(())
    }

    async fn tick(&mut self) -> Result<(), ReplicationError> {
        // The timer is spent; the engine asks again if anything is pending.
        self.wake = None;
        self.input(Input::Tick).await
    }

    async fn on_arrival(&mut self, arrival: Arrival) -> Result<(), ReplicationError> {
        match arrival {
            Arrival::Frame(frame) => self.on_frame(frame).await,
            Arrival::Event(event) => self.on_event(event).await,
        }
    }

    async fn on_frame(&mut self, frame: Frame) -> Result<(), ReplicationError> {
        match frame {
            // A full disk takes no items; the friend sends them again at
            // the catch-up that follows the space's return.
            Frame::Message {
                message: Inbound::Items { items, .. },
                peer,
            } if self.disk_full.is_some() => {
                tracing::debug!(%peer, items = items.len(), "items dropped: the disk is full");
                Ok(())
            }
            Frame::Message { peer, message } => self.input(Input::Received { peer, message }).await,
            Frame::Garbled { peer, bytes, error } => {
                tracing::warn!(%peer, bytes, %error, "dropped a frame that is not a wire message");
                Ok(())
            }
        }
    }

    async fn on_event(&mut self, event: MeshEvent) -> Result<(), ReplicationError> {
        match event {
            MeshEvent::Listening { address } => {
                let full = format!("{address}/p2p/{}", self.local);
                self.listening.send_modify(|all| all.push(full));
            }
            MeshEvent::Reachable { addresses } => self.on_reachable(&addresses),
            MeshEvent::LinkMoved { peer } => self.on_link_moved(peer.to_string()).await?,
            MeshEvent::PeerConnected { peer } => {
                let peer = peer.to_string();
                tracing::info!(%peer, "friend connected");
                self.set_status(&peer, PeerStatus::Online).await;
                let groups = self
                    .friends
                    .get(&peer)
                    .map(|f| f.groups.clone())
                    .unwrap_or_default();
                self.input(Input::PeerConnected { peer, groups }).await?;
            }
            MeshEvent::PeerDisconnected { peer } => {
                let peer = peer.to_string();
                tracing::info!(%peer, "friend disconnected");
                self.disk_full_peers.retain(|p| *p != peer);
                self.set_status(&peer, PeerStatus::Offline).await;
                self.input(Input::PeerDisconnected { peer }).await?;
            }
            // The verify stage turns frames into arrivals before they get
            // here; one that did not pass through it is verified now.
            MeshEvent::FrameReceived { peer, frame } => {
                let frame = verify_frame(peer.to_string(), &frame, self.now());
                self.on_frame(frame).await?;
            }
            MeshEvent::FrameToTake { peer, frame, id } => {
                if self.taker.taken(id).await.is_err() {
                    tracing::debug!(%peer, "the driver stopped; frame taken unacknowledged");
                }
                let frame = verify_frame(peer.to_string(), &frame, self.now());
                self.on_frame(frame).await?;
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
            MeshEvent::AtConnectionCap { peer } => {
                tracing::debug!(?peer, "connection refused at the cap");
            }
            MeshEvent::FrameDone {
                peer,
                tag,
                delivered,
            } => {
                self.input(drained(peer.to_string(), tag, delivered))
                    .await?;
            }
        }
        Ok(())
    }

    async fn set_status(&self, peer: &str, status: PeerStatus) {
        let now = self.now();
        let owned = peer.to_owned();
        let r = self
            .db
            .write(move |s| s.set_friend_status(&owned, status, Some(now), now))
            .await;
        match r {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::debug!(%peer, error = %e, "friend status not recorded"),
            Err(e) => tracing::debug!(%peer, error = %e, "friend status not recorded"),
        }
    }

    /// Picks up what other processes changed. Failures here are logged and
    /// retried at the next change: nothing is lost by waiting.
    async fn scan(&mut self) {
        if let Err(e) = self.scan_friends().await {
            tracing::warn!(error = %e, "reading friends failed");
        }
        if let Err(e) = self.scan_publish().await {
            tracing::warn!(error = %e, "publishing failed");
        }
    }

    async fn scan_friends(&mut self) -> Result<(), ReplicationError> {
        let new = friend_set::with_told(self.db.read(friend_set::load).await??, &self.announced);
        let changes = friend_set::diff(&self.friends, &new);
        self.friends = new;
        self.engine.set_trusted(self.friends.keys().cloned());
        for f in changes.allow {
            tracing::info!(peer = %f.peer, addresses = ?f.addresses, "friend allowed");
            self.outgoing
                .command(MeshCommand::AddFriend {
                    peer: f.peer,
                    addresses: f.addresses,
                })
                .await;
        }
        for peer in changes.drop {
            tracing::info!(%peer, "friend removed");
            self.outgoing
                .command(MeshCommand::RemoveFriend { peer })
                .await;
        }
        for (peer, groups) in changes.regroup {
            if self.engine.connected_peers().any(|p| p == peer) {
                self.input(Input::PeerConnected { peer, groups }).await?;
            }
        }
        Ok(())
    }
}

/// Sleeps until the Unix time `at_ms` (`now` being the time now), or
/// forever without one.
async fn sleep_until_ms(at_ms: Option<u64>, now: u64) {
    match at_ms {
        Some(at) => {
            let wait = at.saturating_sub(now);
            tokio::time::sleep(Duration::from_millis(wait)).await;
        }
        None => std::future::pending().await,
    }
}
