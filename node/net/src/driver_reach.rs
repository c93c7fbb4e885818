//! The driver's hooks for reaching friends that cannot be dialled: it sees
//! every swarm event before the driver's own handling and
//!
//! - keeps each friend's link (direct / relayed through which relay / not
//!   connected and why, since when) and writes it to `links.json` when it
//!   changes;
//! - closes a relayed connection once a direct one to the same friend is up
//!   (hole punching succeeded, or the friend dialled us directly);
//! - reserves a slot at every friend whose identify lists the relay
//!   protocol (see [`super::reach`]), and again when the slot ends;
//! - keeps those relaying friends as paths: a friend with no working
//!   address is dialled through each of them too ([`dial_addresses`]), and
//!   a relaying friend that connects makes every unconnected friend due
//!   again, so a friend known only by its peer id is reached through it;
//! - on a relay, advertises its listen addresses as external so that the
//!   reservations it grants carry addresses to dial (unless the operator
//!   gave its external addresses: `--external-address`);
//! - with `--mdns`, dials friends found on the LAN, never a stranger;
//! - reports where this node can be reached (`MeshEvent::Reachable`)
//!   whenever its listen, relay-circuit or external addresses change;
//! - logs one line per friend when the reason it cannot be reached changes;
//! - binds a port to dial from on a node that listens nowhere, so hole
//!   punching works for it too ([`bind_punch_port`]; what it does when
//!   that node changes networks is in `driver_roam.rs`).
//!
//! Kept apart from `driver.rs` so the two change independently; it touches
//! only the driver fields named in [`ReachState`] and the swarm.

use std::collections::{BTreeMap, HashMap};
use std::time::{SystemTime, UNIX_EPOCH};

use libp2p::core::ConnectedPoint;
use libp2p::swarm::dial_opts::{DialOpts, PeerCondition};
use libp2p::swarm::{DialError, SwarmEvent};
use libp2p::{Multiaddr, PeerId, dcutr, identify, mdns, relay};

use super::MeshDriver;
use crate::behaviour::MeshBehaviourEvent;
use crate::events::MeshEvent;
use crate::limits::PUNCH_PORT;
use crate::links::{LinkRecord, Links, Unreachable, connection_relay};
use crate::reach::{ReachConfig, Reservations, circuit_listen_address, dial_addresses};
use crate::redial::Jitter;
use crate::unreachable::{UnreachableLog, error_text, why_unreachable};

/// Why a friend is not dialled at all: nothing to dial it at.
const NO_PATH: &str = "no address known and no friend that relays for us is connected (it must dial us, or a friend relay for us)";

/// What the driver keeps for reaching friends.
#[derive(Debug)]
pub(super) struct ReachState {
    config: ReachConfig,
    links: Links,
    reservations: Reservations,
    unreachable: UnreachableLog,
    /// The address each friend was last dialled at directly: where to ask
    /// it for a relay slot.
    dialled_at: HashMap<PeerId, Multiaddr>,
    /// Connected friends that relay (identify lists the relay protocol),
    /// with the address to reach them at: paths to other friends.
    relays: BTreeMap<PeerId, Multiaddr>,
    /// Where this node can be reached, as last reported
    /// (`MeshEvent::Reachable`).
    reachable: Vec<Multiaddr>,
    /// Whether this node roams: it listens nowhere but on its port to dial
    /// from, whose addresses come and go with the networks it is on
    /// (`driver_roam.rs`).
    roams: bool,
}

impl ReachState {
    /// The state for `config`, with no links yet; `roams` when this node
    /// listens nowhere but on its port to dial from.
    pub(super) fn new(config: ReachConfig, roams: bool) -> Self {
        Self {
            config,
            links: Links::new(),
            reservations: Reservations::new(),
            unreachable: UnreachableLog::new(),
            dialled_at: HashMap::new(),
            relays: BTreeMap::new(),
            reachable: Vec::new(),
            roams,
        }
    }

    /// Whether this node roams (see `driver_roam.rs`).
    pub(super) fn roams(&self) -> bool {
        self.roams
    }

    /// The connected relaying friends, in peer-id order, with where each
    /// is reached: the paths a dial may go through.
    fn relay_paths(&self) -> Vec<(PeerId, Multiaddr)> {
        self.relays
            .iter()
            .map(|(peer, at)| (*peer, at.clone()))
            .collect()
    }
}

/// Wall-clock time for `since` stamps: read here, at the IO edge.
fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Why a dial failed, in one short line.
fn dial_reason(error: &DialError) -> String {
    match error {
        DialError::Transport(attempts) => attempts
            .iter()
            .map(|(addr, e)| match e {
                libp2p::TransportError::Other(e) => format!("{addr}: {}", error_text(e)),
                other => format!("{addr}: {other}"),
            })
            .collect::<Vec<_>>()
            .join("; "),
        DialError::NoAddresses => {
            "no address known (it must dial us, or be reached through a relay)".into()
        }
        other => other.to_string(),
    }
}

/// Binds [`PUNCH_PORT`] on every IPv4 interface for a node that listens
/// nowhere, so that its dials go out from it and a hole punched from the
/// port the relay saw is one it dials from (`ReachConfig::punch_port`).
/// Where the OS refuses (a phone that may not watch its interfaces), the
/// node runs on without hole punching and says so. True when bound.
pub(super) fn bind_punch_port(swarm: &mut libp2p::Swarm<crate::behaviour::MeshBehaviour>) -> bool {
    use libp2p::multiaddr::Protocol;
    let address = Multiaddr::empty()
        .with(Protocol::Ip4(std::net::Ipv4Addr::UNSPECIFIED))
        .with(Protocol::Tcp(PUNCH_PORT));
    match swarm.listen_on(address) {
        Ok(_) => {
            tracing::info!("bound a port to dial from, for hole punching");
            true
        }
        Err(error) => {
            tracing::warn!(%error, "no port to dial from: links through a relay stay relayed");
            false
        }
    }
}

impl MeshDriver {
    fn is_friend(&self, peer: &PeerId) -> bool {
        self.friends.contains_key(peer)
    }

    /// Logs `record`, `peer`'s new link, and writes the snapshot.
    fn link_changed(&self, peer: PeerId, record: &LinkRecord) {
        tracing::info!(
            %peer,
            link = %record.link,
            via = record.via.as_deref().unwrap_or("-"),
            why = record.why.as_deref().unwrap_or("-"),
            "friend link changed"
        );
        self.write_links();
    }

    /// A dial of friend `peer` failed for `why`: kept for `status` while it
    /// is not connected.
    fn friend_unreachable(&mut self, peer: PeerId, why: &Unreachable) {
        if let Some(record) = self.reach.links.unreachable(peer, why, unix_ms()) {
            self.link_changed(peer, &record);
        }
    }

    fn write_links(&self) {
        let snapshot = self.reach.links.snapshot(unix_ms());
        if let Some(path) = &self.reach.config.links_file
            && let Err(error) = snapshot.write(path)
        {
            tracing::warn!(path = %path.display(), %error, "cannot write the links file");
        }
        self.reach.config.links_watch.publish(snapshot);
    }

    /// `peer` is no friend any more: it leaves the snapshot (a connection
    /// still closing finds no record).
    pub(super) fn reach_friend_removed(&mut self, peer: &PeerId) {
        self.reach.unreachable.reached(peer);
        if self.reach.links.forget(peer) {
            self.write_links();
        }
    }

    /// Sees `event` before the driver handles it.
    pub(super) fn reach_observe(&mut self, event: &SwarmEvent<MeshBehaviourEvent>) {
        self.observe_addresses(event);
        self.observe_links(event);
    }

    /// Reports `MeshEvent::Reachable` when a listen or external address
    /// came or went (an interface changed, a relay slot was granted or
    /// ended) and the set differs from the one reported last.
    fn observe_addresses(&mut self, event: &SwarmEvent<MeshBehaviourEvent>) {
        if let SwarmEvent::NewListenAddr { address, .. } = event
            && self.reach.config.relay.is_some()
            && self.reach.config.external_addresses.is_empty()
            && !address
                .iter()
                .any(|p| matches!(p, libp2p::multiaddr::Protocol::P2pCircuit))
        {
            self.swarm.add_external_address(address.clone());
        }
        if !matches!(
            event,
            SwarmEvent::NewListenAddr { .. }
                | SwarmEvent::ExpiredListenAddr { .. }
                | SwarmEvent::ListenerClosed { .. }
                | SwarmEvent::ExternalAddrConfirmed { .. }
                | SwarmEvent::ExternalAddrExpired { .. }
        ) {
            return;
        }
        let mut now: Vec<Multiaddr> = self
            .swarm
            .listeners()
            .chain(self.swarm.external_addresses())
            .cloned()
            .collect();
        now.sort();
        now.dedup();
        if now != self.reach.reachable {
            tracing::info!(addresses = ?now, "where this node can be reached changed");
            self.reach.reachable = now.clone();
            self.emit(MeshEvent::Reachable { addresses: now });
        }
    }

    fn observe_links(&mut self, event: &SwarmEvent<MeshBehaviourEvent>) {
        match event {
            SwarmEvent::ConnectionEstablished {
                peer_id,
                connection_id,
                endpoint,
                ..
            } => self.on_established(*peer_id, *connection_id, endpoint),
            SwarmEvent::ConnectionClosed {
                peer_id,
                connection_id,
                num_established,
                ..
            } => {
                let peer = *peer_id;
                if *num_established == 0 && self.reach.relays.remove(&peer).is_some() {
                    tracing::debug!(relay = %peer, "relaying friend gone; no longer a path");
                }
                let changed = self.reach.links.closed(peer, *connection_id, unix_ms());
                if !self.is_friend(&peer) {
                    // A friend removed meanwhile leaves the snapshot; a
                    // guest was never in it.
                    if self.reach.links.forget(&peer) {
                        self.write_links();
                    }
                } else if let Some(record) = changed {
                    self.link_changed(peer, &record);
                }
            }
            SwarmEvent::OutgoingConnectionError {
                peer_id: Some(peer),
                error,
                ..
            } if self.is_friend(peer) && !self.swarm.is_connected(peer) => {
                let reason = dial_reason(error);
                if self.reach.unreachable.failed(*peer, &reason) {
                    tracing::warn!(%peer, "friend unreachable: {reason}");
                }
                if let Some(why) = why_unreachable(error) {
                    self.friend_unreachable(*peer, &why);
                }
            }
            SwarmEvent::ListenerClosed { listener_id, .. } => {
                if let Some(relay) = self.reach.reservations.listener_closed(*listener_id) {
                    tracing::info!(%relay, "relay slot ended; asking again on the next connection");
                }
            }
            SwarmEvent::Behaviour(event) => self.reach_behaviour(event),
            _ => {}
        }
    }

    fn on_established(
        &mut self,
        peer: PeerId,
        id: libp2p::swarm::ConnectionId,
        endpoint: &ConnectedPoint,
    ) {
        if !self.is_friend(&peer) {
            return;
        }
        let now = unix_ms();
        let relay = connection_relay(endpoint);
        self.reach.unreachable.reached(&peer);
        if let ConnectedPoint::Dialer { address, .. } = endpoint
            && relay.is_none()
        {
            self.reach.dialled_at.insert(peer, address.clone());
        }
        let tracked = self.reach.links.track(peer, now);
        let changed = self.reach.links.established(peer, id, relay, now);
        let redundant = self.reach.links.redundant(&peer, id);
        if !redundant.is_empty() {
            if relay.is_some() {
                tracing::info!(%peer, "the friend came back through a relay: its direct link here is dead; closing both, its next dial can be hole-punched");
            } else {
                tracing::info!(%peer, "direct link up; closing the relayed one");
            }
        }
        for old in redundant {
            self.swarm.close_connection(old);
        }
        match changed {
            Some(record) => self.link_changed(peer, &record),
            None if tracked => self.write_links(),
            None => {}
        }
    }

    fn reach_behaviour(&mut self, event: &MeshBehaviourEvent) {
        match event {
            MeshBehaviourEvent::Identify(identify::Event::Received { peer_id, info, .. }) => {
                let offers = info.protocols.contains(&relay::HOP_PROTOCOL_NAME);
                if offers && self.is_friend(peer_id) {
                    self.relay_found(*peer_id);
                }
                let we_relay = self.reach.config.relay.is_some();
                if self.is_friend(peer_id)
                    && self
                        .reach
                        .reservations
                        .should_reserve(we_relay, peer_id, offers)
                {
                    self.reserve_at(*peer_id);
                }
            }
            MeshBehaviourEvent::RelayClient(relay::client::Event::ReservationReqAccepted {
                relay_peer_id,
                renewal: false,
                ..
            }) => {
                tracing::info!(relay = %relay_peer_id, "relay slot reserved; friends can reach us through it");
            }
            MeshBehaviourEvent::RelayClient(event) => tracing::debug!(?event, "relay client"),
            MeshBehaviourEvent::Relay(event) => match event {
                relay::Event::ReservationReqAccepted {
                    src_peer_id,
                    renewed: false,
                } => {
                    tracing::info!(friend = %src_peer_id, "granted a relay slot");
                }
                relay::Event::ReservationReqDenied {
                    src_peer_id,
                    status,
                } => {
                    tracing::warn!(peer = %src_peer_id, ?status, "refused a relay slot");
                }
                relay::Event::CircuitReqAccepted {
                    src_peer_id,
                    dst_peer_id,
                } => {
                    tracing::info!(from = %src_peer_id, to = %dst_peer_id, "relaying a circuit");
                }
                relay::Event::CircuitReqDenied {
                    src_peer_id,
                    dst_peer_id,
                    status,
                } => {
                    tracing::warn!(from = %src_peer_id, to = %dst_peer_id, ?status, "refused a relay circuit");
                }
                other => tracing::debug!(event = ?other, "relay"),
            },
            MeshBehaviourEvent::Dcutr(dcutr::Event {
                remote_peer_id,
                result,
            }) => match result {
                Ok(_) => {
                    tracing::info!(peer = %remote_peer_id, "hole punched: direct link to a friend")
                }
                Err(error) => {
                    tracing::info!(peer = %remote_peer_id, %error, "hole punching failed; the link stays relayed");
                }
            },
            MeshBehaviourEvent::Mdns(mdns::Event::Discovered(found)) => {
                for (peer, address) in found {
                    self.found_on_lan(*peer, address.clone());
                }
            }
            _ => {}
        }
    }

    /// Where to reach relaying friend `relay` for a slot or a circuit: where
    /// we last dialled it, else its first configured address.
    fn relay_address(&self, relay: &PeerId) -> Option<Multiaddr> {
        self.reach
            .dialled_at
            .get(relay)
            .or_else(|| self.friends.get(relay).and_then(|a| a.first()))
            .cloned()
    }

    /// A connected friend relays: a new path, so every friend not connected
    /// is dialled again now (through it among its other addresses).
    fn relay_found(&mut self, relay: PeerId) {
        let Some(at) = self.relay_address(&relay) else {
            return;
        };
        if self.reach.relays.insert(relay, at).is_some() {
            return;
        }
        self.dial_unconnected_now(Some(relay));
        tracing::info!(%relay, "a friend that relays is connected; unconnected friends are dialled through it");
    }

    /// Every friend not connected (but `except`) is due for a dial now,
    /// whatever its backoff: a new path to it may have come up.
    pub(super) fn dial_unconnected_now(&mut self, except: Option<PeerId>) {
        let now = self.now_ms();
        let unconnected: Vec<PeerId> = self
            .friends
            .keys()
            .filter(|f| Some(**f) != except && !self.swarm.is_connected(f))
            .copied()
            .collect();
        for friend in unconnected {
            self.redial.remove(&friend);
            self.redial.add(friend, now);
        }
    }

    /// Where to dial `friend` now: its addresses, then circuits through the
    /// connected relaying friends. Empty: nothing to dial it at (the reason
    /// is logged once and the dial counts as failed, so it backs off).
    pub(super) fn dial_paths(&mut self, friend: PeerId) -> Vec<Multiaddr> {
        let own = self.friends.get(&friend).cloned().unwrap_or_default();
        let paths = dial_addresses(friend, &own, &self.reach.relay_paths());
        if paths.is_empty() {
            self.redial
                .dial_failed(&friend, self.now_ms(), Jitter::random());
            if self.reach.unreachable.failed(friend, NO_PATH) {
                tracing::warn!(peer = %friend, "friend unreachable: {NO_PATH}");
            }
            self.friend_unreachable(friend, &Unreachable::NoAddress);
        }
        paths
    }

    fn reserve_at(&mut self, relay: PeerId) {
        let Some(relay_addr) = self.relay_address(&relay) else {
            tracing::debug!(%relay, "relaying friend has no address to reserve at");
            return;
        };
        let address = circuit_listen_address(&relay_addr, relay);
        match self.swarm.listen_on(address.clone()) {
            Ok(listener) => {
                tracing::info!(%relay, %address, "asking a relaying friend for a slot");
                self.reach.reservations.asked(listener, relay);
            }
            Err(error) => tracing::warn!(%relay, %address, %error, "cannot reserve a relay slot"),
        }
    }

    fn found_on_lan(&mut self, peer: PeerId, address: Multiaddr) {
        if !self.is_friend(&peer) {
            tracing::debug!(%peer, %address, "ignored a stranger found on the LAN");
            return;
        }
        if self.swarm.is_connected(&peer) {
            return;
        }
        tracing::info!(%peer, %address, "found a friend on the LAN; dialling it");
        let opts = DialOpts::peer_id(peer)
            .addresses(vec![address])
            .condition(PeerCondition::DisconnectedAndNotDialing)
            .build();
        if let Err(error) = self.swarm.dial(opts) {
            tracing::debug!(%peer, %error, "LAN dial not started");
        }
    }
}
