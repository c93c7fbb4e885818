//! How each friend is linked now: `direct`, `relayed` (through which relay)
//! or `not connected` (and why), and since when — the pure state behind
//! `porfiry status`'s `link` column.
//!
//! The driver feeds it every established and closed connection of a friend
//! (with the relay it runs through, if it is a circuit: [`circuit_relay`]),
//! every failed dial of a friend not connected (as an [`Unreachable`]) and
//! the wall-clock time; it answers whether the friend's record changed, and
//! which relayed connections are redundant because a direct one is up (hole
//! punching succeeded, or the friend dialled us directly).
//!
//! [`LinksFile`] is the snapshot the daemon writes to `links.json` in the
//! data dir for `status` to read.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::Path;

use libp2p::core::ConnectedPoint;
use libp2p::multiaddr::Protocol;
use libp2p::swarm::ConnectionId;
use libp2p::{Multiaddr, PeerId};
use serde::{Deserialize, Serialize};

/// The file name of the daemon's links snapshot inside the data dir.
pub const LINKS_FILE_NAME: &str = "links.json";

/// How a friend is linked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Link {
    /// At least one connection that does not go through a relay.
    #[serde(rename = "direct")]
    Direct,
    /// Only connections through a relay circuit.
    #[serde(rename = "relayed")]
    Relayed,
    /// No connection.
    #[serde(rename = "not connected")]
    NotConnected,
}

impl Link {
    /// The spelling in `status` and `links.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Link::Direct => "direct",
            Link::Relayed => "relayed",
            Link::NotConnected => "not connected",
        }
    }
}

impl fmt::Display for Link {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The longest `failed: …` detail kept in a record, in characters: `status`
/// shows it on the friend's one line, and a libp2p error chain can run to
/// hundreds of characters; the daemon's log has the whole of it.
pub const MAX_FAILURE_CHARS: usize = 120;

/// Why a friend that is not connected could not be reached: the last dial's
/// failure, in a short text that stays the same from release to release
/// (`status` shows it, scripts may match it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreachable {
    /// Nothing to dial: no address known and no friend that relays is connected.
    NoAddress,
    /// Its address answered that nothing listens there.
    Refused,
    /// Its address did not answer in time.
    TimedOut,
    /// Only relay circuits were tried, and no relay carried one to it (it
    /// holds no slot there, or the relay refused).
    NoRelayInCommon,
    /// Anything else, with a short error (at most [`MAX_FAILURE_CHARS`]).
    Failed(String),
}

impl Unreachable {
    /// A [`Unreachable::Failed`] with `error` on one line and cut to
    /// [`MAX_FAILURE_CHARS`].
    pub fn failed(error: &str) -> Self {
        let one_line = error.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut short: String = one_line.chars().take(MAX_FAILURE_CHARS).collect();
        if short.len() < one_line.len() {
            short.push('…');
        }
        Self::Failed(short)
    }
}

impl fmt::Display for Unreachable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unreachable::NoAddress => f.write_str("no address"),
            Unreachable::Refused => f.write_str("refused"),
            Unreachable::TimedOut => f.write_str("timed out"),
            Unreachable::NoRelayInCommon => f.write_str("no relay in common"),
            Unreachable::Failed(error) => write!(f, "failed: {error}"),
        }
    }
}

/// The relay a circuit address goes through: the `/p2p/RELAY` right before
/// `/p2p-circuit` (`/…/p2p/RELAY/p2p-circuit/p2p/FRIEND` dialled, or
/// `/…/p2p/RELAY/p2p-circuit` listened on). `None` for an address that is
/// no circuit, or one whose relay is not named there.
pub fn circuit_relay(address: &Multiaddr) -> Option<PeerId> {
    let mut before = None;
    for part in address.iter() {
        match part {
            Protocol::P2pCircuit => return before,
            Protocol::P2p(peer) => before = Some(peer),
            _ => before = None,
        }
    }
    None
}

/// The relay a connection runs through: [`circuit_relay`] of the address
/// dialled, or of the circuit listened on for one that came in. `None`: a
/// direct connection (libp2p's relay transport neither dials nor listens on
/// a circuit that does not name its relay).
pub fn connection_relay(endpoint: &ConnectedPoint) -> Option<PeerId> {
    match endpoint {
        ConnectedPoint::Dialer { address, .. } => circuit_relay(address),
        ConnectedPoint::Listener { local_addr, .. } => circuit_relay(local_addr),
    }
}

/// One friend's link and when it became so (Unix ms).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkRecord {
    /// The link now.
    pub link: Link,
    /// When it became this kind (Unix ms).
    pub since_ms: u64,
    /// For a relayed link, the relay's peer id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// For a friend not connected, why the last dial to it failed (an
    /// [`Unreachable`]'s text); `None` before any dial failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// The connections of every friend, each with the relay it runs through
/// (`None`: direct), and each friend's record.
#[derive(Debug, Default)]
pub struct Links {
    connections: HashMap<PeerId, HashMap<ConnectionId, Option<PeerId>>>,
    records: BTreeMap<PeerId, LinkRecord>,
}

impl Links {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// `peer` is a friend with no connection yet (shown as not connected
    /// since `now_ms`). Returns whether it was new.
    pub fn track(&mut self, peer: PeerId, now_ms: u64) -> bool {
        if self.records.contains_key(&peer) {
            return false;
        }
        self.records.insert(
            peer,
            LinkRecord {
                link: Link::NotConnected,
                since_ms: now_ms,
                via: None,
                why: None,
            },
        );
        true
    }

    /// `peer` is no friend any more.
    pub fn forget(&mut self, peer: &PeerId) -> bool {
        self.connections.remove(peer);
        self.records.remove(peer).is_some()
    }

    /// A connection to `peer` is up, through `relay` (`None`: direct); the
    /// last reason it was unreachable is cleared. Returns the new record if
    /// it changed.
    pub fn established(
        &mut self,
        peer: PeerId,
        id: ConnectionId,
        relay: Option<PeerId>,
        now_ms: u64,
    ) -> Option<LinkRecord> {
        self.connections.entry(peer).or_default().insert(id, relay);
        self.update(peer, now_ms)
    }

    /// A dial of `peer` failed for `why` (a friend not tracked yet is
    /// tracked from `now_ms`). Kept only while it is not connected. Returns
    /// the new record if it changed.
    pub fn unreachable(
        &mut self,
        peer: PeerId,
        why: &Unreachable,
        now_ms: u64,
    ) -> Option<LinkRecord> {
        if self.link(&peer) != Link::NotConnected {
            return None;
        }
        self.track(peer, now_ms);
        let record = self.records.get_mut(&peer)?;
        let why = Some(why.to_string());
        if record.why == why {
            return None;
        }
        record.why = why;
        Some(record.clone())
    }

    /// A connection to `peer` closed. Returns the new record if it changed.
    pub fn closed(&mut self, peer: PeerId, id: ConnectionId, now_ms: u64) -> Option<LinkRecord> {
        if let Some(conns) = self.connections.get_mut(&peer) {
            conns.remove(&id);
            if conns.is_empty() {
                self.connections.remove(&peer);
            }
        }
        self.update(peer, now_ms)
    }

    /// The connections of `peer` to close now that `new` is established.
    /// A direct one replaces the relayed ones (hole punching). A relayed
    /// one that comes while a direct one is up means the friend dialled us
    /// through a relay because it lost the direct link (it changed
    /// networks): ours is a dead one that TCP has not noticed yet. Then
    /// all go, the new relayed one too: libp2p tries hole punching only on
    /// a relayed link that comes while no direct one is up, so the friend's
    /// next dial through the relay (at its backoff, ~1 s) is the one that
    /// can be made direct again.
    pub fn redundant(&self, peer: &PeerId, new: ConnectionId) -> Vec<ConnectionId> {
        let Some(conns) = self.connections.get(peer) else {
            return Vec::new();
        };
        let new_is_relayed = match conns.get(&new) {
            Some(relay) => relay.is_some(),
            None => return Vec::new(),
        };
        if !conns.values().any(Option::is_none) {
            return Vec::new();
        }
        let mut ids: Vec<ConnectionId> = conns
            .iter()
            .filter(|&(_, relay)| new_is_relayed || relay.is_some())
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        ids
    }

    /// `peer`'s link now.
    pub fn link(&self, peer: &PeerId) -> Link {
        match self.connections.get(peer) {
            None => Link::NotConnected,
            Some(conns) if conns.values().any(Option::is_none) => Link::Direct,
            Some(conns) if conns.is_empty() => Link::NotConnected,
            Some(_) => Link::Relayed,
        }
    }

    /// The relay of `peer`'s relayed link: that of its oldest relayed
    /// connection (the lowest id), so the answer does not flip between two
    /// circuits. `None` unless the link is relayed.
    fn via(&self, peer: &PeerId) -> Option<PeerId> {
        if self.link(peer) != Link::Relayed {
            return None;
        }
        self.connections
            .get(peer)?
            .iter()
            .filter_map(|(id, relay)| relay.map(|r| (*id, r)))
            .min_by_key(|(id, _)| *id)
            .map(|(_, relay)| relay)
    }

    fn update(&mut self, peer: PeerId, now_ms: u64) -> Option<LinkRecord> {
        let link = self.link(&peer);
        let via = self.via(&peer).map(|relay| relay.to_string());
        let record = self.records.get_mut(&peer)?;
        // Connected: the last failure is old news. Not connected: it stays
        // until a dial says otherwise.
        let why = match link {
            Link::NotConnected => record.why.clone(),
            Link::Direct | Link::Relayed => None,
        };
        let since_ms = if record.link == link {
            record.since_ms
        } else {
            now_ms
        };
        let next = LinkRecord {
            link,
            since_ms,
            via,
            why,
        };
        if *record == next {
            return None;
        }
        *record = next;
        Some(record.clone())
    }

    /// The snapshot written to `links.json`.
    pub fn snapshot(&self, written_ms: u64) -> LinksFile {
        LinksFile {
            written_ms,
            friends: self
                .records
                .iter()
                .map(|(peer, record)| (peer.to_string(), record.clone()))
                .collect(),
        }
    }
}

/// The content of `links.json`: each friend's link, by peer id.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LinksFile {
    /// When the daemon wrote it (Unix ms).
    pub written_ms: u64,
    /// Each friend's link, by peer id.
    pub friends: BTreeMap<String, LinkRecord>,
}

impl LinksFile {
    /// Writes the snapshot to `path` atomically (a temporary file renamed
    /// over it), so a reader never sees half a file.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let tmp = path.with_extension("json.tmp");
        let text = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, path)
    }

    /// Reads a snapshot; `None` when there is none or it cannot be parsed
    /// (an old or foreign file is treated as no information, not an error).
    pub fn read(path: &Path) -> Option<Self> {
        let text = std::fs::read(path).ok()?;
        serde_json::from_slice(&text).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: usize) -> ConnectionId {
        ConnectionId::new_unchecked(n)
    }

    #[test]
    fn a_friend_goes_relayed_then_direct_then_not_connected() {
        let mut links = Links::new();
        let peer = PeerId::random();
        assert!(links.track(peer, 1));
        assert!(!links.track(peer, 2));
        assert_eq!(links.link(&peer), Link::NotConnected);
        let relay = PeerId::random();
        let r = links.established(peer, id(1), Some(relay), 10).unwrap();
        assert_eq!((r.link, r.since_ms), (Link::Relayed, 10));
        assert!(links.redundant(&peer, id(1)).is_empty());
        let r = links.established(peer, id(2), None, 20).unwrap();
        assert_eq!((r.link, r.since_ms), (Link::Direct, 20));
        assert_eq!(links.redundant(&peer, id(2)), [id(1)]);
        assert_eq!(links.closed(peer, id(1), 30), None, "still direct");
        let r = links.closed(peer, id(2), 40).unwrap();
        assert_eq!((r.link, r.since_ms), (Link::NotConnected, 40));
        let snap = links.snapshot(50);
        assert_eq!(snap.friends[&peer.to_string()].since_ms, 40);
        assert!(links.forget(&peer));
        assert!(links.snapshot(60).friends.is_empty());
    }

    #[test]
    fn a_relayed_link_after_a_direct_one_closes_both_the_friend_lost_the_direct_one() {
        let mut links = Links::new();
        let (peer, relay) = (PeerId::random(), PeerId::random());
        links.track(peer, 1);
        links.established(peer, id(1), None, 10);
        links.established(peer, id(2), None, 11);
        assert!(
            links.redundant(&peer, id(2)).is_empty(),
            "two direct: both stay"
        );
        links.established(peer, id(3), Some(relay), 20);
        assert_eq!(links.redundant(&peer, id(3)), [id(1), id(2), id(3)]);
        for n in 1..=3 {
            links.closed(peer, id(n), 21);
        }
        assert_eq!(links.link(&peer), Link::NotConnected);
        // The friend's next dial through the relay stays, and hole
        // punching makes it direct: now the relayed one goes.
        links.established(peer, id(4), Some(relay), 30);
        assert!(links.redundant(&peer, id(4)).is_empty());
        links.established(peer, id(5), None, 31);
        assert_eq!(links.redundant(&peer, id(5)), [id(4)]);
        assert!(
            links.redundant(&peer, id(9)).is_empty(),
            "an unknown connection"
        );
    }

    #[test]
    fn a_peer_not_tracked_gets_no_record() {
        let mut links = Links::new();
        let guest = PeerId::random();
        assert_eq!(links.established(guest, id(1), None, 1), None);
        assert!(links.snapshot(2).friends.is_empty());
    }

    #[test]
    fn the_snapshot_round_trips_through_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LINKS_FILE_NAME);
        assert_eq!(LinksFile::read(&path), None);
        let mut links = Links::new();
        let peer = PeerId::random();
        let (relay, dead) = (PeerId::random(), PeerId::random());
        links.track(peer, 5);
        links.established(peer, id(1), Some(relay), 7);
        links.unreachable(dead, &Unreachable::Refused, 8);
        let snap = links.snapshot(9);
        snap.write(&path).unwrap();
        assert_eq!(LinksFile::read(&path), Some(snap));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"relayed\""), "{text}");
        assert!(text.contains(&format!("\"via\": \"{relay}\"")), "{text}");
        assert!(text.contains("\"why\": \"refused\""), "{text}");
        assert_eq!(
            text.matches("\"via\"").count(),
            1,
            "absent keys are left out: {text}"
        );
        assert_eq!(text.matches("\"why\"").count(), 1, "{text}");
        std::fs::write(&path, b"{ not json").unwrap();
        assert_eq!(LinksFile::read(&path), None);
    }

    #[test]
    fn a_file_from_before_via_and_why_still_reads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LINKS_FILE_NAME);
        std::fs::write(
            &path,
            br#"{"written_ms":9,"friends":{"a":{"link":"relayed","since_ms":7}}}"#,
        )
        .unwrap();
        let file = LinksFile::read(&path).expect("an old file reads");
        let record = &file.friends["a"];
        assert_eq!(
            (record.link, record.via.as_deref(), record.why.as_deref()),
            (Link::Relayed, None, None)
        );
    }

    #[test]
    fn a_relayed_link_names_its_relay_until_it_goes_direct_or_closes() {
        let mut links = Links::new();
        let (peer, r1, r2) = (PeerId::random(), PeerId::random(), PeerId::random());
        links.track(peer, 1);
        let r = links.established(peer, id(3), Some(r1), 10).unwrap();
        assert_eq!(r.via, Some(r1.to_string()));
        // A second circuit changes nothing: the oldest one names the relay.
        assert_eq!(links.established(peer, id(4), Some(r2), 11), None);
        // The oldest closes: the other relay carries it now, since unchanged.
        let r = links.closed(peer, id(3), 12).unwrap();
        assert_eq!(
            (r.link, r.since_ms, r.via),
            (Link::Relayed, 10, Some(r2.to_string()))
        );
        let r = links.established(peer, id(5), None, 13).unwrap();
        assert_eq!((r.link, r.via), (Link::Direct, None), "direct: no relay");
        links.closed(peer, id(5), 14);
        let r = links.closed(peer, id(4), 15).unwrap();
        assert_eq!((r.link, r.via), (Link::NotConnected, None));
    }

    #[test]
    fn why_a_friend_is_unreachable_is_kept_until_it_connects() {
        let mut links = Links::new();
        let (peer, relay) = (PeerId::random(), PeerId::random());
        // A friend never connected is tracked by its first failure.
        let r = links.unreachable(peer, &Unreachable::NoAddress, 5).unwrap();
        assert_eq!(
            (r.link, r.since_ms, r.why.as_deref()),
            (Link::NotConnected, 5, Some("no address"))
        );
        assert_eq!(
            links.unreachable(peer, &Unreachable::NoAddress, 6),
            None,
            "same reason"
        );
        let r = links.unreachable(peer, &Unreachable::TimedOut, 7).unwrap();
        assert_eq!((r.since_ms, r.why.as_deref()), (5, Some("timed out")));
        // Connected: the reason is cleared, and a failed extra dial is no reason.
        let r = links.established(peer, id(1), Some(relay), 8).unwrap();
        assert_eq!((r.link, r.why), (Link::Relayed, None));
        assert_eq!(links.unreachable(peer, &Unreachable::Refused, 9), None);
        assert_eq!(links.snapshot(10).friends[&peer.to_string()].why, None);
        // Gone again: no reason until a dial fails.
        let r = links.closed(peer, id(1), 11).unwrap();
        assert_eq!((r.link, r.why), (Link::NotConnected, None));
        let r = links.unreachable(peer, &Unreachable::Refused, 12).unwrap();
        assert_eq!((r.since_ms, r.why.as_deref()), (11, Some("refused")));
        assert!(links.forget(&peer));
        assert_eq!(links.snapshot(13).friends.get(&peer.to_string()), None);
    }

    #[test]
    fn each_reason_has_its_short_text() {
        let texts: Vec<String> = [
            Unreachable::NoAddress,
            Unreachable::Refused,
            Unreachable::TimedOut,
            Unreachable::NoRelayInCommon,
            Unreachable::failed("noise:\n  handshake  failed"),
        ]
        .iter()
        .map(ToString::to_string)
        .collect();
        assert_eq!(
            texts,
            [
                "no address",
                "refused",
                "timed out",
                "no relay in common",
                "failed: noise: handshake failed"
            ]
        );
        let long = Unreachable::failed(&"é".repeat(MAX_FAILURE_CHARS + 5));
        let Unreachable::Failed(short) = long else {
            unreachable!()
        };
        assert_eq!(
            short.chars().count(),
            MAX_FAILURE_CHARS + 1,
            "cut, with an ellipsis"
        );
        assert!(short.ends_with('…'));
        let exact = Unreachable::failed(&"x".repeat(MAX_FAILURE_CHARS));
        assert_eq!(
            exact,
            Unreachable::Failed("x".repeat(MAX_FAILURE_CHARS)),
            "not cut"
        );
    }

    #[test]
    fn the_relay_is_the_peer_named_right_before_the_circuit() {
        let (relay, friend) = (PeerId::random(), PeerId::random());
        let parse = |s: String| -> Multiaddr { s.parse().unwrap() };
        let dialled = parse(format!(
            "/ip4/1.2.3.4/tcp/4001/p2p/{relay}/p2p-circuit/p2p/{friend}"
        ));
        assert_eq!(circuit_relay(&dialled), Some(relay));
        let listened = parse(format!("/ip4/1.2.3.4/tcp/4001/p2p/{relay}/p2p-circuit"));
        assert_eq!(circuit_relay(&listened), Some(relay));
        let direct = parse(format!("/ip4/1.2.3.4/tcp/4001/p2p/{friend}"));
        assert_eq!(circuit_relay(&direct), None);
        let unnamed = parse(format!("/ip4/1.2.3.4/tcp/4001/p2p-circuit/p2p/{friend}"));
        assert_eq!(circuit_relay(&unnamed), None);
        let not_right_before = parse(format!("/p2p/{relay}/ip4/1.2.3.4/tcp/4001/p2p-circuit"));
        assert_eq!(circuit_relay(&not_right_before), None);

        // A circuit that came in is named by the address listened on.
        let came_in = ConnectedPoint::Listener {
            local_addr: listened,
            send_back_addr: parse(format!("/p2p/{friend}")),
        };
        assert_eq!(connection_relay(&came_in), Some(relay));
        let dialled_out = ConnectedPoint::Dialer {
            address: dialled,
            role_override: libp2p::core::Endpoint::Dialer,
            port_use: libp2p::core::transport::PortUse::Reuse,
        };
        assert_eq!(connection_relay(&dialled_out), Some(relay));
        let direct_in = ConnectedPoint::Listener {
            local_addr: parse("/ip4/127.0.0.1/tcp/4001".into()),
            send_back_addr: parse(format!("/ip4/1.2.3.4/tcp/5000/p2p-circuit/p2p/{relay}")),
        };
        assert_eq!(
            connection_relay(&direct_in),
            None,
            "only our side's address counts"
        );
    }
}
