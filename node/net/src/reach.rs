//! Reaching friends that cannot be dialled: relay use, hole punching, LAN
//! discovery — the settings and the pure decisions behind them.
//!
//! - [`ReachConfig`]: whether this node relays for its friends
//!   (`--relay`, with [`RelayLimits`]), looks for friends on the LAN
//!   (`--mdns`), where the daemon writes `links.json`, and whether a node
//!   that listens nowhere binds a port to dial from, for hole punching.
//! - [`Reservations`]: a node that is not a relay itself reserves a slot at
//!   every friend that offers the relay protocol (learnt from identify), so
//!   its other friends can dial it at `RELAY/p2p/R/p2p-circuit/p2p/US`. A
//!   node cannot tell on its own whether its listen address is reachable from
//!   outside (a home server behind NAT listens, yet cannot be dialled), so it
//!   reserves whether or not it listens; a slot costs the relay little.
//! - [`dial_addresses`], [`is_interface_address`]: where to dial a friend,
//!   and which of our addresses a network switch takes away.
//!
//! Why a failed dial failed is read in `unreachable.rs`.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use libp2p::core::transport::ListenerId;
use libp2p::multiaddr::Protocol;
use libp2p::{Multiaddr, PeerId};

use tokio::sync::watch;

use super::limits::MAX_ESTABLISHED_TOTAL;
use super::links::LinksFile;
use super::relay::RelayLimits;

/// How this node helps and uses relays and the LAN, and how many
/// connections it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReachConfig {
    /// Relay circuits for friends, within these limits (`--relay`).
    pub relay: Option<RelayLimits>,
    /// Find friends on the LAN with mDNS (`--mdns`); strangers are ignored.
    pub mdns: bool,
    /// Where to write the per-friend link snapshot (`links.json`), if anywhere.
    pub links_file: Option<PathBuf>,
    /// The same snapshot, published in process whenever it changes.
    pub links_watch: LinksWatch,
    /// Most connections held at once; more are refused (and reported as
    /// [`MeshEvent::AtConnectionCap`](super::MeshEvent::AtConnectionCap)).
    pub max_connections: u32,
    /// The addresses friends reach this node at from outside, when they
    /// are not its listen addresses (a port forward on a home router). A
    /// relay offers these in its reservations instead of its listen
    /// addresses.
    pub external_addresses: Vec<Multiaddr>,
    /// When this node listens nowhere (a phone, `--no-listen`), bind one TCP
    /// port on every interface anyway, for its dials to go out from: TCP
    /// hole punching (DCUtR) dials from the port the relay saw, and only a
    /// bound port is reused for dials. Strangers that connect to it are
    /// refused by the gate like anywhere else.
    pub punch_port: bool,
}

impl Default for ReachConfig {
    /// No relaying, no LAN discovery, no snapshot file, a phone's
    /// connection cap ([`MAX_ESTABLISHED_TOTAL`]), no port bound for hole
    /// punching (`porfiry run` and the phone bindings turn it on).
    fn default() -> Self {
        Self {
            relay: None,
            mdns: false,
            links_file: None,
            links_watch: LinksWatch::default(),
            max_connections: MAX_ESTABLISHED_TOTAL,
            external_addresses: Vec::new(),
            punch_port: false,
        }
    }
}

/// The driver's per-friend link snapshot, published whenever a link changes
/// (for embedding programs and tests; `status` reads the file).
#[derive(Debug, Clone)]
pub struct LinksWatch(Arc<watch::Sender<LinksFile>>);

impl Default for LinksWatch {
    fn default() -> Self {
        Self(Arc::new(watch::Sender::new(LinksFile::default())))
    }
}

impl PartialEq for LinksWatch {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for LinksWatch {}

impl LinksWatch {
    /// A receiver of every snapshot from now on.
    pub fn subscribe(&self) -> watch::Receiver<LinksFile> {
        self.0.subscribe()
    }

    /// Publishes `snapshot` (kept even while nobody listens).
    pub fn publish(&self, snapshot: LinksFile) {
        self.0.send_replace(snapshot);
    }
}

/// The address at which this node listens through relay `relay` reached at
/// `relay_addr` (its `/p2p/` part, if any, is replaced).
pub fn circuit_listen_address(relay_addr: &Multiaddr, relay: PeerId) -> Multiaddr {
    let mut base: Multiaddr = relay_addr
        .iter()
        .take_while(|p| !matches!(p, Protocol::P2p(_) | Protocol::P2pCircuit))
        .collect();
    base.push(Protocol::P2p(relay));
    base.push(Protocol::P2pCircuit);
    base
}

/// The most relaying friends one dial tries a friend through: each path is
/// a circuit request a friend's relay must serve, and a family has a home
/// server or two that relay; four covers a club's few relays without a
/// dial fanning out to every member that runs `--relay`.
pub const MAX_RELAY_PATHS: usize = 4;

/// Where to dial `friend`: its own addresses first, then a circuit through
/// each connected relaying friend (`(relay, where it was dialled)`, in
/// order), at most [`MAX_RELAY_PATHS`] of them, never through `friend`
/// itself and never twice the same address.
pub fn dial_addresses(
    friend: PeerId,
    own: &[Multiaddr],
    relays: &[(PeerId, Multiaddr)],
) -> Vec<Multiaddr> {
    let mut out: Vec<Multiaddr> = own.to_vec();
    let circuits = relays
        .iter()
        .filter(|(relay, _)| *relay != friend)
        .take(MAX_RELAY_PATHS)
        .map(|(relay, at)| {
            let mut circuit = circuit_listen_address(at, *relay);
            circuit.push(Protocol::P2p(friend));
            circuit
        });
    for circuit in circuits {
        if !out.contains(&circuit) {
            out.push(circuit);
        }
    }
    out
}

/// Checks that `address` is a place to dial `peer`: any `/p2p/` before a
/// `/p2p-circuit` names the relay; after it (or, without a circuit, at the
/// end) only `peer` may be named. Returns why not.
pub fn check_friend_address(address: &Multiaddr, peer: &PeerId) -> Result<(), String> {
    let parts: Vec<Protocol<'_>> = address.iter().collect();
    let circuit = parts
        .iter()
        .rposition(|p| matches!(p, Protocol::P2pCircuit));
    let (relay_part, target_part) = match circuit {
        Some(i) => (&parts[..i], &parts[i + 1..]),
        None => (&parts[..0], &parts[..]),
    };
    if let Some(i) = circuit {
        if parts[..i].iter().any(|p| matches!(p, Protocol::P2pCircuit)) {
            return Err("it goes through more than one relay".into());
        }
        if !matches!(relay_part.last(), Some(Protocol::P2p(_))) {
            return Err("the relay before /p2p-circuit is not named by /p2p/<relay id>".into());
        }
        if relay_part.len() < 2 {
            return Err("the relay has no address before /p2p/<relay id>".into());
        }
        if matches!(relay_part.last(), Some(Protocol::P2p(r)) if r == peer) {
            return Err("a friend cannot be its own relay".into());
        }
    }
    for p in target_part {
        if let Protocol::P2p(named) = p
            && named != peer
        {
            return Err(format!("it names peer {named}, not {peer}"));
        }
    }
    Ok(())
}

/// `address` without a trailing `/p2p/<peer>` (any relay named before a
/// `/p2p-circuit` stays).
pub fn without_peer_suffix(mut address: Multiaddr, peer: &PeerId) -> Multiaddr {
    if matches!(address.iter().last(), Some(Protocol::P2p(p)) if p == *peer) {
        address.pop();
    }
    address
}

/// Where this node holds (or is asking for) a relay slot.
#[derive(Debug, Default)]
pub struct Reservations {
    /// Relays asked, by the listener the request runs on.
    asked: HashMap<ListenerId, PeerId>,
    relays: HashSet<PeerId>,
}

impl Reservations {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether to ask `friend` for a slot now: it offers the relay protocol
    /// and we have not asked it yet (or the last slot ended).
    pub fn should_reserve(&self, we_relay: bool, friend: &PeerId, offers_relay: bool) -> bool {
        !we_relay && offers_relay && !self.relays.contains(friend)
    }

    /// A slot was asked of `relay` on `listener`.
    pub fn asked(&mut self, listener: ListenerId, relay: PeerId) {
        self.asked.insert(listener, relay);
        self.relays.insert(relay);
    }

    /// The listener `listener` closed (the relay refused, the connection to
    /// it closed, or the slot ran out): the relay may be asked again.
    pub fn listener_closed(&mut self, listener: ListenerId) -> Option<PeerId> {
        let relay = self.asked.remove(&listener)?;
        self.relays.remove(&relay);
        Some(relay)
    }

    /// Whether a slot is held or asked at `relay`.
    #[cfg(test)]
    pub fn holds(&self, relay: &PeerId) -> bool {
        self.relays.contains(relay)
    }
}

/// Whether `address` is an address of one of this node's interfaces, one
/// that leaving a network takes away: an IP address other than loopback,
/// not a relay circuit. A roaming node closes its links when one of these
/// goes (`driver_roam.rs`).
pub fn is_interface_address(address: &Multiaddr) -> bool {
    let on_an_interface = match address.iter().next() {
        Some(Protocol::Ip4(ip)) => !ip.is_loopback() && !ip.is_unspecified(),
        Some(Protocol::Ip6(ip)) => !ip.is_loopback() && !ip.is_unspecified(),
        _ => false,
    };
    on_an_interface && !is_circuit(address)
}

/// Whether `address` goes through a relay circuit.
pub(super) fn is_circuit(address: &Multiaddr) -> bool {
    address.iter().any(|p| matches!(p, Protocol::P2pCircuit))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u8) -> PeerId {
        porfiry_protocol::NodeKey::from_seed([n; 32]).peer_id()
    }

    #[test]
    fn only_an_address_of_an_interface_is_one_a_network_switch_takes_away() {
        let relay = key(1);
        for (address, left_with_the_network) in [
            ("/ip4/192.168.2.2/tcp/40123", true),
            ("/ip6/fe80::1/tcp/40123", true),
            ("/ip4/127.0.0.1/tcp/40123", false),
            ("/ip6/::1/tcp/40123", false),
            ("/ip4/0.0.0.0/tcp/40123", false),
            (
                &format!("/ip4/10.0.0.1/tcp/4001/p2p/{relay}/p2p-circuit"),
                false,
            ),
            ("/dns4/example.org/tcp/4001", false),
        ] {
            let parsed: Multiaddr = address.parse().unwrap();
            assert_eq!(
                is_interface_address(&parsed),
                left_with_the_network,
                "{address}"
            );
        }
    }

    #[test]
    fn a_friend_is_dialled_at_its_own_addresses_then_through_each_relaying_friend() {
        let friend = key(9);
        let own: Multiaddr = "/ip4/10.0.0.9/tcp/4001".parse().unwrap();
        let relays: Vec<(PeerId, Multiaddr)> = (1..=6)
            .map(|n| {
                let at = format!("/ip4/10.0.0.{n}/tcp/4001/p2p/{}", key(n));
                (key(n), at.parse().unwrap())
            })
            .collect();
        let with_self: Vec<(PeerId, Multiaddr)> = std::iter::once((friend, own.clone()))
            .chain(relays)
            .collect();
        let got = dial_addresses(friend, std::slice::from_ref(&own), &with_self);
        assert_eq!(
            got.len(),
            1 + MAX_RELAY_PATHS,
            "own + capped relays, never via itself"
        );
        assert_eq!(got[0], own);
        assert_eq!(
            got[1].to_string(),
            format!(
                "/ip4/10.0.0.1/tcp/4001/p2p/{}/p2p-circuit/p2p/{friend}",
                key(1)
            )
        );
        for circuit in &got[1..] {
            assert_eq!(check_friend_address(circuit, &friend), Ok(()));
        }
        // A circuit already among the friend's own addresses is not repeated;
        // no addresses and no relays: nothing to dial.
        let again = dial_addresses(friend, &got[1..2], &with_self[1..2]);
        assert_eq!(again, got[1..2]);
        assert!(dial_addresses(friend, &[], &[]).is_empty());
    }

    #[test]
    fn circuit_addresses_name_a_relay_then_the_friend() {
        let relay = key(1);
        let friend = key(2);
        let via: Multiaddr = format!("/ip4/1.2.3.4/tcp/4001/p2p/{relay}/p2p-circuit/p2p/{friend}")
            .parse()
            .unwrap();
        assert_eq!(check_friend_address(&via, &friend), Ok(()));
        let bare: Multiaddr = format!("/ip4/1.2.3.4/tcp/4001/p2p/{relay}/p2p-circuit")
            .parse()
            .unwrap();
        assert_eq!(check_friend_address(&bare, &friend), Ok(()));
        let direct: Multiaddr = format!("/ip4/1.2.3.4/tcp/4001/p2p/{friend}")
            .parse()
            .unwrap();
        assert_eq!(check_friend_address(&direct, &friend), Ok(()));
        let wrong_target: Multiaddr =
            format!("/ip4/1.2.3.4/tcp/4001/p2p/{relay}/p2p-circuit/p2p/{relay}")
                .parse()
                .unwrap();
        assert!(check_friend_address(&wrong_target, &friend).is_err());
        let no_relay_id: Multiaddr = "/ip4/1.2.3.4/tcp/4001/p2p-circuit".parse().unwrap();
        assert!(check_friend_address(&no_relay_id, &friend).is_err());
        let own_relay: Multiaddr = format!("/ip4/1.2.3.4/tcp/4001/p2p/{friend}/p2p-circuit")
            .parse()
            .unwrap();
        assert!(check_friend_address(&own_relay, &friend).is_err());
        let twice: Multiaddr = format!(
            "/ip4/1.2.3.4/tcp/4001/p2p/{relay}/p2p-circuit/p2p/{relay}/p2p-circuit/p2p/{friend}"
        )
        .parse()
        .unwrap();
        assert!(check_friend_address(&twice, &friend).is_err());
        let stranger: Multiaddr = format!("/ip4/1.2.3.4/tcp/4001/p2p/{relay}")
            .parse()
            .unwrap();
        assert!(check_friend_address(&stranger, &friend).is_err());
    }

    #[test]
    fn only_the_trailing_peer_id_is_dropped() {
        let relay = key(1);
        let friend = key(2);
        let via: Multiaddr = format!("/ip4/1.2.3.4/tcp/4001/p2p/{relay}/p2p-circuit/p2p/{friend}")
            .parse()
            .unwrap();
        let bare: Multiaddr = format!("/ip4/1.2.3.4/tcp/4001/p2p/{relay}/p2p-circuit")
            .parse()
            .unwrap();
        assert_eq!(without_peer_suffix(via, &friend), bare);
        assert_eq!(without_peer_suffix(bare.clone(), &friend), bare);
    }

    #[test]
    fn the_listen_address_goes_through_the_relay() {
        let relay = key(1);
        let with_id: Multiaddr = format!("/ip4/1.2.3.4/tcp/4001/p2p/{relay}")
            .parse()
            .unwrap();
        let expected: Multiaddr = format!("/ip4/1.2.3.4/tcp/4001/p2p/{relay}/p2p-circuit")
            .parse()
            .unwrap();
        assert_eq!(circuit_listen_address(&with_id, relay), expected);
        let bare: Multiaddr = "/ip4/1.2.3.4/tcp/4001".parse().unwrap();
        assert_eq!(circuit_listen_address(&bare, relay), expected);
    }

    #[test]
    fn a_node_reserves_once_per_relaying_friend_and_again_after_the_slot_ends() {
        let mut r = Reservations::new();
        let relay = key(1);
        assert!(!r.should_reserve(false, &relay, false), "not a relay");
        assert!(!r.should_reserve(true, &relay, true), "we relay ourselves");
        assert!(r.should_reserve(false, &relay, true));
        let (asked, other) = (ListenerId::next(), ListenerId::next());
        r.asked(asked, relay);
        assert!(r.holds(&relay));
        assert!(!r.should_reserve(false, &relay, true));
        assert_eq!(r.listener_closed(other), None);
        assert_eq!(r.listener_closed(asked), Some(relay));
        assert!(r.should_reserve(false, &relay, true));
    }
}
