//! The mesh driver task: owns the swarm, takes [`MeshCommand`]s, gives out
//! [`MeshEvent`]s. This is the IO edge where the replication engine plugs in:
//! `FrameReceived` → decode + verify → engine input; engine output → `Send`.
//!
//! Decisions made here:
//! - Only friends connect. A stranger is denied by the gate when its connection
//!   is established, logged with `warn!` naming it, and reported as
//!   `PeerRefused`; no stream of it is ever opened, so nothing it sends is read.
//!   A frame from a peer removed a moment ago is dropped, not delivered.
//! - An oversized (or truncated) frame drops only its stream; the connection is
//!   KEPT. The peer is an authenticated friend, so an oversized frame means a
//!   bug or a version mismatch, not an attack that gets anywhere (we read only
//!   its 4-byte prefix); closing would also lose every other frame in flight on
//!   that link and make the friend reconnect, catch up and likely send the same
//!   frame again in a loop. It is reported as `FrameRejected`. The sender's
//!   stream stays stalled (it is out of yamux credit and we never read on) until
//!   its `REQUEST_TIMEOUT`, when it sees `SendFailed { Timeout }`; its other
//!   streams are unaffected.
//! - Frames go only to connected friends (no dial on send): the engine learns of
//!   connections from `PeerConnected` and catches up then. At most
//!   `MAX_IN_FLIGHT_PER_PEER` frames are unacknowledged per peer, more wait in a
//!   bounded queue. A frame that does not fit is held, not dropped: the driver
//!   takes no more commands until it fits (the senders wait on the bounded
//!   command channel), and keeps running the swarm and handing out events
//!   meanwhile, so acknowledgements still drain the queue. `SendTracked`
//!   groups are reported with `FrameDone` once all their frames have ended,
//!   which is how the engine learns a catch-up chunk has drained. Frames to
//!   one peer may be delivered out of order (each travels on its own stream).
//! - Friends with addresses are dialled by both profiles and redialled with
//!   backoff ([`RedialPlan`]); only a server listens. A ping failure closes
//!   that connection, which then counts as a drop.
//! - A guest (a stranger admitted by the gate while an invitation is open,
//!   see [`super::gate`]) gets no `PeerConnected`, so replication never
//!   starts with it; its frames are dropped like any non-friend's; its
//!   connections are closed [`GUEST_WINDOW`] after it connected unless it
//!   became a friend meanwhile (then `PeerConnected` is reported at once).
//! - The clock is `tokio::time::Instant` since the driver started, read only
//!   here and passed to the pure schedules as `now_ms`.
//!
//! - A friend's frame is acknowledged when it arrives, or, with
//!   `MeshConfig::ack_when_taken` (the replication daemon), only once the
//!   consumer takes it, so the friend's window bounds what of it waits here
//!   (`driver_taken.rs`: the bound per friend, and why frames are
//!   acknowledged on arrival again while a frame of ours is held).
//!
//! Sending frames and the request-response events are in `driver_frames.rs`;
//! links, relays and addresses in `driver_reach.rs`; acknowledging frames
//! once taken in `driver_taken.rs`.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use futures::StreamExt;
use libp2p::identity::Keypair;
use libp2p::request_response::OutboundRequestId;
use libp2p::swarm::dial_opts::{DialOpts, PeerCondition};
use libp2p::swarm::{DialError, ListenError, SwarmEvent};
use libp2p::{Multiaddr, PeerId, Swarm, connection_limits, identify, ping};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

#[path = "driver_frames.rs"]
mod driver_frames;
#[path = "driver_reach.rs"]
mod driver_reach;
#[path = "driver_roam.rs"]
mod driver_roam;
#[path = "driver_taken.rs"]
mod driver_taken;

use super::behaviour::{MeshBehaviour, MeshBehaviourEvent};
use super::config::MeshConfig;
use super::error::MeshError;
use super::events::{FrameId, MeshCommand, MeshEvent, SendFailure, SendTag};
use super::gate::{GUEST_WINDOW, NotAFriend};
use super::handle::MeshHandle;
use super::limits::{
    COMMAND_QUEUE_LEN, EVENT_QUEUE_LEN, MAX_IN_FLIGHT_PER_PEER, MAX_PENDING_EVENTS,
    MAX_QUEUED_BYTES_PER_PEER, TAKEN_QUEUE_LEN,
};
use super::outbox::Outbox;
use super::redial::{Jitter, RedialPlan};
use super::streams::FriendSet;
use super::swarm::build_swarm;

/// What woke the driver loop.
enum Wake {
    Command(Option<MeshCommand>),
    /// The consumer took a frame (`None`: every `FrameTaker` is gone).
    Taken(Option<FrameId>),
    Swarm(Box<SwarmEvent<MeshBehaviourEvent>>),
    Timer,
    /// An event was handed to the consumer (false: the consumer is gone).
    Delivered(bool),
}

/// A `SendTracked` group whose frames have not all ended.
#[derive(Debug)]
struct Tracked {
    peer: PeerId,
    tag: SendTag,
    remaining: usize,
    delivered: bool,
}

/// Whether the loop goes on.
#[derive(PartialEq, Eq)]
enum Flow {
    Continue,
    Stop,
}

/// The task that runs one node's libp2p swarm.
pub struct MeshDriver {
    swarm: Swarm<MeshBehaviour>,
    commands: mpsc::Receiver<MeshCommand>,
    events: mpsc::Sender<MeshEvent>,
    pending: VecDeque<MeshEvent>,
    friends: HashMap<PeerId, Vec<Multiaddr>>,
    /// The friend set offload streams check, kept equal to `friends`' keys.
    stream_friends: FriendSet,
    redial: RedialPlan<PeerId>,
    /// Guests connected now, with when their window ends (ms since start);
    /// `None` once they are being disconnected, until their last
    /// connection has closed.
    guests: HashMap<PeerId, Option<u64>>,
    outbox: Outbox<PeerId, OutboundRequestId>,
    /// Frames that did not fit their peer's queue, in order; while any
    /// wait, no command is taken.
    held: VecDeque<(PeerId, Vec<u8>, Option<u64>)>,
    tracked: HashMap<u64, Tracked>,
    next_track: u64,
    max_frame_bytes: u32,
    started: Instant,
    /// Links, relay slots and LAN discovery (see `driver_reach.rs`).
    reach: driver_reach::ReachState,
    /// Frames are acknowledged once taken (`driver_taken.rs`).
    ack_when_taken: bool,
    /// Where the consumer says it took a frame; `None` once closed.
    taken: Option<mpsc::Receiver<FrameId>>,
    /// Frames handed out and not yet taken.
    waiting: HashMap<FrameId, driver_taken::Waiting>,
    /// How many of them each friend has.
    waiting_per_peer: HashMap<PeerId, usize>,
    /// How many of them are not acknowledged yet.
    unacked: usize,
    next_frame_id: u64,
}

impl MeshDriver {
    /// Builds the swarm for `keypair`, starts listening (server) and returns the
    /// driver with its command handle and event receiver. Friends in `config`
    /// are allowed at once and dialled when the driver runs. Must be called
    /// inside a tokio runtime.
    pub fn new(
        keypair: Keypair,
        config: MeshConfig,
    ) -> Result<(Self, MeshHandle, mpsc::Receiver<MeshEvent>), MeshError> {
        config.validate()?;
        let door = config.streams.door();
        let stream_behaviour = config
            .streams
            .take_behaviour()
            .ok_or(MeshError::StreamsTaken)?;
        let mut swarm = build_swarm(
            keypair,
            config.profile,
            config.max_frame_bytes,
            stream_behaviour,
            door,
            config.reach.clone(),
            Arc::clone(config.streams.friends()),
        )?;
        for address in &config.listen {
            swarm
                .listen_on(address.clone())
                .map_err(|source| MeshError::Listen {
                    address: address.clone(),
                    source,
                })?;
        }
        let roams = config.listen.is_empty()
            && config.reach.punch_port
            && driver_reach::bind_punch_port(&mut swarm);
        // Where friends reach this node from outside (a port forward, a
        // public address the host does not see): relay reservations and
        // identify carry these instead of the listen addresses.
        for address in &config.reach.external_addresses {
            swarm.add_external_address(address.clone());
        }
        let (command_tx, commands) = mpsc::channel(COMMAND_QUEUE_LEN);
        let (events, event_rx) = mpsc::channel(EVENT_QUEUE_LEN);
        let (taken_tx, taken) = mpsc::channel(TAKEN_QUEUE_LEN);
        let mut driver = Self {
            swarm,
            commands,
            events,
            pending: VecDeque::new(),
            friends: HashMap::new(),
            stream_friends: Arc::clone(config.streams.friends()),
            redial: RedialPlan::new(config.backoff),
            guests: HashMap::new(),
            outbox: Outbox::new(MAX_IN_FLIGHT_PER_PEER, MAX_QUEUED_BYTES_PER_PEER),
            held: VecDeque::new(),
            tracked: HashMap::new(),
            next_track: 0,
            max_frame_bytes: config.max_frame_bytes,
            started: Instant::now(),
            reach: driver_reach::ReachState::new(config.reach, roams),
            ack_when_taken: config.ack_when_taken,
            taken: Some(taken),
            waiting: HashMap::new(),
            waiting_per_peer: HashMap::new(),
            unacked: 0,
            next_frame_id: 0,
        };
        for friend in config.friends {
            driver.add_friend(friend.peer, friend.addresses);
        }
        Ok((
            driver,
            MeshHandle::new(command_tx, taken_tx, config.streams),
            event_rx,
        ))
    }

    /// This node's peer id.
    pub fn local_peer_id(&self) -> PeerId {
        *self.swarm.local_peer_id()
    }

    /// Runs [`MeshDriver::run`] on a new tokio task.
    pub fn spawn(self) -> JoinHandle<()> {
        tokio::spawn(self.run())
    }

    /// Runs until `Shutdown`, until every handle is dropped, or until the
    /// event receiver is dropped. The swarm (listeners, connections) is
    /// dropped on return.
    pub async fn run(mut self) {
        tracing::info!(peer = %self.local_peer_id(), "mesh driver started");
        loop {
            let guest_end = self.guests.values().flatten().min().copied();
            let wake_at = match (self.redial.next_wake_ms(), guest_end) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
            .map(|ms| self.started + Duration::from_millis(ms));
            // Commands wait while a frame is held; the swarm is not read
            // while the consumer lags (unless a frame is held: then its
            // acknowledgements are what frees the queue).
            let taking = self.held.is_empty();
            let reading = self.pending.len() < MAX_PENDING_EVENTS || !self.held.is_empty();
            let wake = tokio::select! {
                permit = self.events.reserve(), if !self.pending.is_empty() => match permit {
                    Ok(permit) => {
                        if let Some(event) = self.pending.pop_front() {
                            permit.send(event);
                        }
                        Wake::Delivered(true)
                    }
                    Err(_) => Wake::Delivered(false),
                },
                command = self.commands.recv(), if taking => Wake::Command(command),
                // Taken frames are acknowledged at every turn, a frame held
                // or not (see `driver_taken.rs`).
                id = recv_taken(&mut self.taken) => Wake::Taken(id),
                event = self.swarm.select_next_some(), if reading => Wake::Swarm(Box::new(event)),
                () = sleep_until(wake_at) => Wake::Timer,
            };
            let flow = match wake {
                Wake::Delivered(true) => Flow::Continue,
                Wake::Delivered(false) => {
                    tracing::info!("mesh event receiver dropped; driver stops");
                    break;
                }
                Wake::Command(None) => Flow::Stop,
                Wake::Command(Some(command)) => self.on_command(command),
                Wake::Taken(Some(id)) => {
                    self.frame_taken(id);
                    Flow::Continue
                }
                Wake::Taken(None) => {
                    self.taken = None;
                    Flow::Continue
                }
                Wake::Swarm(event) => {
                    self.on_swarm_event(*event);
                    self.retry_held();
                    Flow::Continue
                }
                Wake::Timer => {
                    self.dial_due();
                    self.close_late_guests();
                    Flow::Continue
                }
            };
            self.ack_waiting_while_held();
            if flow == Flow::Stop {
                // What happened before the stop still reaches the consumer.
                self.flush_events().await;
                break;
            }
        }
        tracing::info!(peer = %self.local_peer_id(), "mesh driver stopped");
    }

    /// Hands queued events to the consumer (at shutdown; stops if it is
    /// gone).
    async fn flush_events(&mut self) {
        while let Some(event) = self.pending.pop_front() {
            if self.events.send(event).await.is_err() {
                return;
            }
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn emit(&mut self, event: MeshEvent) {
        self.pending.push_back(event);
    }

    fn on_command(&mut self, command: MeshCommand) -> Flow {
        match command {
            MeshCommand::AddFriend { peer, addresses } => self.add_friend(peer, addresses),
            MeshCommand::RemoveFriend { peer } => self.remove_friend(peer),
            MeshCommand::Send { peer, frame } => self.send(peer, frame, None),
            MeshCommand::SendTracked { peer, frames, tag } => self.send_tracked(peer, frames, tag),
            MeshCommand::Shutdown => return Flow::Stop,
        }
        Flow::Continue
    }

    fn add_friend(&mut self, peer: PeerId, addresses: Vec<Multiaddr>) {
        self.swarm.behaviour_mut().allow(peer);
        if self.guests.remove(&peer).is_some() && self.swarm.is_connected(&peer) {
            // A guest that redeemed an invitation: a friend from now on.
            tracing::info!(%peer, "guest became a friend");
            self.emit(MeshEvent::PeerConnected { peer });
        }
        self.stream_friends
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(peer);
        let previous = self.friends.insert(peer, addresses.clone());
        tracing::info!(%peer, ?addresses, "friend added");
        if previous.as_ref() != Some(&addresses) {
            // New or changed addresses: dial them at once, not after old backoff.
            self.redial.remove(&peer);
        }
        // A friend with no address is planned too: it is dialled through
        // the relaying friends that are connected (none: it backs off until
        // one connects, which makes it due again).
        self.redial.add(peer, self.now_ms());
        if self.swarm.is_connected(&peer) {
            self.redial.connected(&peer);
        }
    }

    fn remove_friend(&mut self, peer: PeerId) {
        self.friends.remove(&peer);
        self.stream_friends
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&peer);
        self.redial.remove(&peer);
        self.reach_friend_removed(&peer);
        // Disallowing closes every connection to the peer.
        if self.swarm.behaviour_mut().disallow(peer) {
            tracing::info!(%peer, "friend removed; closing its connections");
        }
    }

    fn dial_due(&mut self) {
        let now = self.now_ms();
        for peer in self.redial.take_due(now) {
            let addresses = self.dial_paths(peer);
            if addresses.is_empty() {
                continue;
            }
            let opts = DialOpts::peer_id(peer)
                .addresses(addresses)
                .condition(PeerCondition::DisconnectedAndNotDialing)
                .build();
            match self.swarm.dial(opts) {
                Ok(()) => tracing::debug!(%peer, "dialling friend"),
                Err(DialError::DialPeerConditionFalse(_)) if self.swarm.is_connected(&peer) => {
                    self.redial.connected(&peer);
                }
                // Already dialling (e.g. a dial we did not start): its outcome
                // arrives as a swarm event like any other.
                Err(DialError::DialPeerConditionFalse(_)) => {}
                Err(error) => {
                    tracing::debug!(%peer, %error, "could not dial friend");
                    self.redial.dial_failed(&peer, now, Jitter::random());
                }
            }
        }
    }

    /// Closes the connections of guests whose window is over.
    fn close_late_guests(&mut self) {
        let now = self.now_ms();
        let late: Vec<PeerId> = self
            .guests
            .iter()
            .filter(|&(_, end)| end.is_some_and(|end| end <= now))
            .map(|(peer, _)| *peer)
            .collect();
        for peer in late {
            self.guests.insert(peer, None);
            tracing::warn!(%peer, window = ?GUEST_WINDOW, "guest did not become a friend in time; disconnecting it");
            self.swarm.behaviour_mut().close_guest(peer);
            self.emit(MeshEvent::PeerRefused { peer });
        }
    }

    fn on_swarm_event(&mut self, event: SwarmEvent<MeshBehaviourEvent>) {
        self.reach_observe(&event);
        self.roam_observe(&event);
        match event {
            SwarmEvent::NewListenAddr { address, .. } => {
                tracing::info!(%address, "listening");
                self.emit(MeshEvent::Listening { address });
            }
            SwarmEvent::ConnectionEstablished {
                peer_id,
                num_established,
                endpoint,
                ..
            } => {
                tracing::debug!(peer = %peer_id, address = %endpoint.get_remote_address(), "connected");
                if !self.swarm.behaviour().is_allowed(&peer_id) {
                    let end = self.now_ms().saturating_add(
                        u64::try_from(GUEST_WINDOW.as_millis()).unwrap_or(u64::MAX),
                    );
                    // A second connection keeps the first one's window; one
                    // made while the last window was closing gets its own.
                    self.guests
                        .entry(peer_id)
                        .or_insert(None)
                        .get_or_insert(end);
                    tracing::info!(peer = %peer_id, "a stranger connected as an invitation guest");
                    return;
                }
                self.redial.connected(&peer_id);
                if num_established.get() == 1 {
                    self.emit(MeshEvent::PeerConnected { peer: peer_id });
                }
            }
            SwarmEvent::ConnectionClosed {
                peer_id,
                num_established,
                cause,
                ..
            } => {
                tracing::debug!(peer = %peer_id, ?cause, "connection closed");
                if num_established == 0 && self.guests.remove(&peer_id).is_some() {
                    tracing::debug!(peer = %peer_id, "guest left");
                    return;
                }
                if num_established == 0 {
                    for (_, track) in self.outbox.drop_peer_tracked(&peer_id) {
                        self.frame_failed(peer_id, track, SendFailure::ConnectionClosed);
                    }
                    self.redial
                        .disconnected(&peer_id, self.now_ms(), Jitter::random());
                    self.emit(MeshEvent::PeerDisconnected { peer: peer_id });
                } else if self.friends.contains_key(&peer_id) {
                    // One of several closed (the relayed one a direct link
                    // replaced): frames in flight on it, either way, are lost.
                    self.emit(MeshEvent::LinkMoved { peer: peer_id });
                }
            }
            SwarmEvent::IncomingConnectionError {
                peer_id,
                send_back_addr,
                error,
                ..
            } => {
                self.on_incoming_error(peer_id, send_back_addr, error);
            }
            SwarmEvent::OutgoingConnectionError {
                peer_id: Some(peer),
                error,
                ..
            } => {
                if let DialError::Denied { cause } = &error
                    && cause.downcast_ref::<NotAFriend>().is_some()
                {
                    tracing::warn!(%peer, "refused to dial a peer that is not a friend");
                }
                tracing::debug!(%peer, %error, "dial failed");
                self.redial
                    .dial_failed(&peer, self.now_ms(), Jitter::random());
            }
            SwarmEvent::ListenerClosed {
                addresses, reason, ..
            } => {
                tracing::warn!(?addresses, ?reason, "listener closed");
            }
            SwarmEvent::ListenerError { error, .. } => {
                tracing::warn!(%error, "listener error");
            }
            SwarmEvent::Behaviour(event) => self.on_behaviour_event(event),
            _ => {}
        }
    }

    fn on_incoming_error(&mut self, peer: Option<PeerId>, from: Multiaddr, error: ListenError) {
        match (peer, &error) {
            (Some(peer), ListenError::Denied { cause })
                if cause.downcast_ref::<NotAFriend>().is_some() =>
            {
                tracing::warn!(%peer, %from, "refused a connection from a peer that is not a friend");
                self.emit(MeshEvent::PeerRefused { peer });
            }
            (_, ListenError::Denied { cause })
                if cause
                    .downcast_ref::<connection_limits::Exceeded>()
                    .is_some() =>
            {
                tracing::warn!(?peer, %from, %cause, "refused an incoming connection: this node holds its most connections (raise --max-connections)");
                self.emit(MeshEvent::AtConnectionCap { peer });
            }
            (_, ListenError::Denied { cause }) => {
                tracing::warn!(?peer, %from, %cause, "refused an incoming connection");
            }
            _ => tracing::debug!(?peer, %from, %error, "incoming connection failed"),
        }
    }

    fn on_behaviour_event(&mut self, event: MeshBehaviourEvent) {
        match event {
            MeshBehaviourEvent::Frames(event) => self.on_frames_event(event),
            MeshBehaviourEvent::Ping(ping::Event {
                peer,
                connection,
                result: Err(failure),
            }) => {
                if matches!(failure, ping::Failure::Unsupported) {
                    tracing::debug!(%peer, "friend does not answer pings");
                } else {
                    tracing::info!(%peer, %failure, "ping failed; closing the connection");
                    self.swarm.close_connection(connection);
                }
            }
            MeshBehaviourEvent::Identify(identify::Event::Received { peer_id, info, .. }) => {
                tracing::debug!(
                    peer = %peer_id,
                    protocol = %info.protocol_version,
                    agent = %info.agent_version,
                    "identified friend"
                );
            }
            MeshBehaviourEvent::Gate(never) | MeshBehaviourEvent::Limits(never) => match never {},
            MeshBehaviourEvent::Streams(()) => {}
            // Seen by `driver_reach.rs` before this match.
            MeshBehaviourEvent::Relay(_)
            | MeshBehaviourEvent::RelayClient(_)
            | MeshBehaviourEvent::Dcutr(_)
            | MeshBehaviourEvent::Mdns(_) => {}
            MeshBehaviourEvent::Ping(_) | MeshBehaviourEvent::Identify(_) => {}
        }
    }
}

/// The next taken frame's id; never ready once the channel has closed.
async fn recv_taken(taken: &mut Option<mpsc::Receiver<FrameId>>) -> Option<FrameId> {
    match taken {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// Sleeps until `at`, or forever when there is nothing to wake for.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
