//! How each friend is linked now: `direct`, `relayed` or `not connected`,
//! and since when — the pure state behind `porfiry status`'s `link` column.
//!
//! The driver feeds it every established and closed connection of a friend
//! (with whether it runs over a relay circuit) and the wall-clock time; it
//! answers whether the friend's link kind changed, and which relayed
//! connections are redundant because a direct one is up (hole punching
//! succeeded, or the friend dialled us directly).
//!
//! [`LinksFile`] is the snapshot the daemon writes to `links.json` in the
//! data dir for `status` to read.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::Path;

use libp2p::PeerId;
use libp2p::swarm::ConnectionId;
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

/// One friend's link and when it became so (Unix ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkRecord {
    /// The link now.
    pub link: Link,
    /// When it became this kind (Unix ms).
    pub since_ms: u64,
}

/// The connections of every friend, by whether they are relayed.
#[derive(Debug, Default)]
pub struct Links {
    connections: HashMap<PeerId, HashMap<ConnectionId, bool>>,
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
            },
        );
        true
    }

    /// `peer` is no friend any more.
    pub fn forget(&mut self, peer: &PeerId) -> bool {
        self.connections.remove(peer);
        self.records.remove(peer).is_some()
    }

    /// A connection to `peer` is up. Returns the new record if the link kind changed.
    pub fn established(
        &mut self,
        peer: PeerId,
        id: ConnectionId,
        relayed: bool,
        now_ms: u64,
    ) -> Option<LinkRecord> {
        self.connections
            .entry(peer)
            .or_default()
            .insert(id, relayed);
        self.update(peer, now_ms)
    }

    /// A connection to `peer` closed. Returns the new record if the link kind changed.
    pub fn closed(&mut self, peer: PeerId, id: ConnectionId, now_ms: u64) -> Option<LinkRecord> {
        if let Some(conns) = self.connections.get_mut(&peer) {
            conns.remove(&id);
            if conns.is_empty() {
                self.connections.remove(&peer);
            }
        }
        self.update(peer, now_ms)
    }

    /// The relayed connections of `peer` that a direct one makes redundant.
    pub fn redundant_relayed(&self, peer: &PeerId) -> Vec<ConnectionId> {
        let Some(conns) = self.connections.get(peer) else {
            return Vec::new();
        };
        if !conns.values().any(|relayed| !relayed) {
            return Vec::new();
        }
        let mut ids: Vec<ConnectionId> = conns
            .iter()
            .filter(|&(_, relayed)| *relayed)
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        ids
    }

    /// `peer`'s link now.
    pub fn link(&self, peer: &PeerId) -> Link {
        match self.connections.get(peer) {
            None => Link::NotConnected,
            Some(conns) if conns.values().any(|relayed| !relayed) => Link::Direct,
            Some(conns) if conns.is_empty() => Link::NotConnected,
            Some(_) => Link::Relayed,
        }
    }

    fn update(&mut self, peer: PeerId, now_ms: u64) -> Option<LinkRecord> {
        let link = self.link(&peer);
        let record = self.records.get_mut(&peer)?;
        if record.link == link {
            return None;
        }
        *record = LinkRecord {
            link,
            since_ms: now_ms,
        };
        Some(*record)
    }

    /// The snapshot written to `links.json`.
    pub fn snapshot(&self, written_ms: u64) -> LinksFile {
        LinksFile {
            written_ms,
            friends: self
                .records
                .iter()
                .map(|(peer, record)| (peer.to_string(), *record))
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
        let r = links.established(peer, id(1), true, 10).unwrap();
        assert_eq!((r.link, r.since_ms), (Link::Relayed, 10));
        assert!(links.redundant_relayed(&peer).is_empty());
        let r = links.established(peer, id(2), false, 20).unwrap();
        assert_eq!((r.link, r.since_ms), (Link::Direct, 20));
        assert_eq!(links.redundant_relayed(&peer), [id(1)]);
        assert_eq!(links.closed(peer, id(1), 30), None, "still direct");
        let r = links.closed(peer, id(2), 40).unwrap();
        assert_eq!((r.link, r.since_ms), (Link::NotConnected, 40));
        let snap = links.snapshot(50);
        assert_eq!(snap.friends[&peer.to_string()].since_ms, 40);
        assert!(links.forget(&peer));
        assert!(links.snapshot(60).friends.is_empty());
    }

    #[test]
    fn a_peer_not_tracked_gets_no_record() {
        let mut links = Links::new();
        let guest = PeerId::random();
        assert_eq!(links.established(guest, id(1), false, 1), None);
        assert!(links.snapshot(2).friends.is_empty());
    }

    #[test]
    fn the_snapshot_round_trips_through_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LINKS_FILE_NAME);
        assert_eq!(LinksFile::read(&path), None);
        let mut links = Links::new();
        let peer = PeerId::random();
        links.track(peer, 5);
        links.established(peer, id(1), true, 7);
        let snap = links.snapshot(9);
        snap.write(&path).unwrap();
        assert_eq!(LinksFile::read(&path), Some(snap));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"relayed\""), "{text}");
        std::fs::write(&path, b"{ not json").unwrap();
        assert_eq!(LinksFile::read(&path), None);
    }
}
