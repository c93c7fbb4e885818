//! `porfiry status`: node id, schema version, friends (by name where they
//! have one, each with its link: `direct`, `relayed` through which relay or
//! `not connected` and why, and since when) and row counts per table.
//!
//! Links come from `links.json`, which the running daemon rewrites whenever
//! a friend's link changes. It is believed only while a daemon holds the
//! data dir's lock; with no daemon running every friend is `not connected`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use porfiry_protocol::NodeKey;
use porfiry_storage::Store;
use serde::Serialize;

use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::devices::statements::{DeviceListing, DevicesError, list_devices};
use porfiry_mesh::friends::{FriendView, FriendsError, friend_views};
use porfiry_mesh::net::{LINKS_FILE_NAME, Link, LinksFile};
use porfiry_mesh::replication::refused_file::{REFUSED_FILE_NAME, RefusedAuthor, RefusedFile};
use porfiry_mesh::sharing::reach::Announced;

/// Why `status` could not report.
#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    /// No identity: `porfiry init` was not run for this data dir.
    #[error("no node in {0}: run `porfiry init` first")]
    NoNode(String),
    /// The identity key could not be read.
    #[error(transparent)]
    Identity(#[from] porfiry_protocol::IdentityError),
    /// The database could not be opened or read.
    #[error(transparent)]
    Storage(#[from] porfiry_storage::StorageError),
    /// The friends could not be read.
    #[error(transparent)]
    Friends(#[from] FriendsError),
    /// The devices could not be read.
    #[error(transparent)]
    Devices(#[from] DevicesError),
}

/// The status report (`--json` prints it as is).
#[derive(Debug, Serialize)]
pub struct Status {
    /// The node's peer id.
    pub peer_id: String,
    /// The data dir reported on.
    pub data_dir: String,
    /// The database's schema version.
    pub schema_version: u32,
    /// Friends, each with its name (if any), last seen state and link.
    pub friends: Vec<StatusFriend>,
    /// Row count per table.
    pub tables: BTreeMap<String, u64>,
    /// Authors the quotas refused during the daemon's last run, most items
    /// first (`refused.json`; empty when none were).
    pub refused: Vec<RefusedAuthor>,
    /// This person's other devices, each with how far it is behind.
    pub devices: Vec<DeviceListing>,
    /// Memory rows changed here and not yet published to the devices (a
    /// node without devices keeps them for its first link).
    pub mind_unpublished: u64,
}

/// How many characters of a relay's peer id the text form shows when the
/// relay has no name: the last ones, since every ed25519 peer id starts
/// with the same `12D3KooW`; eight base58 characters tell a handful of
/// relays apart (`--json` has the whole id).
const SHORT_PEER_ID_CHARS: usize = 8;

/// A friend as `status` shows it: what `friends list` shows, plus its link.
#[derive(Debug, Serialize)]
pub struct StatusFriend {
    /// The friend.
    #[serde(flatten)]
    pub friend: FriendView,
    /// `direct`, `relayed` or `not connected`.
    pub link: Link,
    /// Since when it has been so (Unix ms); `null` when unknown (no daemon
    /// running, or nothing happened on the link since the daemon started).
    pub link_since_ms: Option<u64>,
    /// For a relayed link, the relay's peer id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// For a friend not connected, why the last dial to it failed
    /// (`no address`, `refused`, `timed out`, `no relay in common`,
    /// `failed: …`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Where the friend said it can be reached (its newest `reachable_at`
    /// item): dialled before the addresses it was added with.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub told_addresses: Vec<String>,
    /// How the text form names the relay: its friend name, else the end of
    /// its peer id.
    #[serde(skip)]
    pub via_shown: Option<String>,
}

/// The end of `peer_id` (its last [`SHORT_PEER_ID_CHARS`] characters) after
/// `…`, or all of it when that short.
fn short_peer_id(peer_id: &str) -> String {
    let count = peer_id.chars().count();
    if count <= SHORT_PEER_ID_CHARS {
        return peer_id.to_owned();
    }
    let tail: String = peer_id.chars().skip(count - SHORT_PEER_ID_CHARS).collect();
    format!("…{tail}")
}

/// `ms` (Unix ms) as `YYYY-MM-DD hh:mm:ss UTC`, or the raw number if out of range.
fn utc_text(ms: u64) -> String {
    let format =
        time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second] UTC");
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|t| t.format(&format).ok())
        .unwrap_or_else(|| format!("{ms} ms"))
}

/// Whether a `porfiry run` holds `dir` now (its lock is taken).
fn daemon_running(dir: &DataDir) -> bool {
    let Ok(file) = std::fs::File::open(dir.daemon_lock_path()) else {
        return false;
    };
    // A shared lock fails only while the daemon holds its exclusive one;
    // taken, it is released when `file` is dropped right here.
    matches!(
        file.try_lock_shared(),
        Err(std::fs::TryLockError::WouldBlock)
    )
}

/// Each friend with its link from `links` (`not connected` when absent),
/// a relay named as in the friend list where it is a named friend.
pub fn with_links(friends: Vec<FriendView>, links: Option<&LinksFile>) -> Vec<StatusFriend> {
    let names: BTreeMap<String, String> = friends
        .iter()
        .filter_map(|f| Some((f.peer_id.clone(), f.name.clone()?)))
        .collect();
    friends
        .into_iter()
        .map(|friend| {
            let record = links.and_then(|l| l.friends.get(&friend.peer_id));
            let via = record.and_then(|r| r.via.clone());
            StatusFriend {
                link: record.map_or(Link::NotConnected, |r| r.link),
                link_since_ms: record.map(|r| r.since_ms),
                via_shown: via
                    .as_ref()
                    .map(|v| names.get(v).cloned().unwrap_or_else(|| short_peer_id(v))),
                via,
                why: record.and_then(|r| r.why.clone()),
                told_addresses: Vec::new(),
                friend,
            }
        })
        .collect()
}

impl StatusFriend {
    /// The link as the text form shows it: `relayed via NAME`, `not
    /// connected (refused)`, `direct`.
    pub fn link_text(&self) -> String {
        match (&self.via_shown, &self.why) {
            (Some(via), _) => format!("{} via {via}", self.link),
            (None, Some(why)) => format!("{} ({why})", self.link),
            (None, None) => self.link.to_string(),
        }
    }
}

impl Status {
    /// The human-readable form.
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "node id:        {}\ndata dir:       {}\nschema version: {}\n",
            self.peer_id, self.data_dir, self.schema_version
        );
        let _ = writeln!(s, "friends:        {}", self.friends.len());
        for sf in &self.friends {
            let f = &sf.friend;
            let name = f
                .name
                .as_ref()
                .map(|n| format!("{n}  "))
                .unwrap_or_default();
            let since = sf
                .link_since_ms
                .map(|ms| format!(" since {}", utc_text(ms)))
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "  {name}{}  {}  link: {}{since}",
                f.peer_id,
                f.status,
                sf.link_text()
            );
            if !sf.told_addresses.is_empty() {
                let _ = writeln!(s, "    reachable at: {}", sf.told_addresses.join(", "));
            }
        }
        if !self.devices.is_empty() {
            let _ = writeln!(
                s,
                "devices:        {} (memory changes not yet sent: {})",
                self.devices.len(),
                self.mind_unpublished
            );
            for d in &self.devices {
                let name = if d.name.is_empty() {
                    String::new()
                } else {
                    format!("{}  ", d.name)
                };
                let seen = d.last_sync_ms.map_or_else(|| "never".to_owned(), utc_text);
                let _ = writeln!(
                    s,
                    "  {name}{}  linked since {}  last seen {seen}  behind {} versions",
                    d.peer,
                    utc_text(d.linked_since_ms),
                    d.behind
                );
            }
        }
        if !self.refused.is_empty() {
            let _ = writeln!(s, "refused (over quota): {} authors", self.refused.len());
            for r in &self.refused {
                let _ = writeln!(
                    s,
                    "  {}  {} items, {} bytes, last {}",
                    r.author,
                    r.items,
                    r.bytes,
                    utc_text(r.last_ms)
                );
            }
        }
        s.push_str("rows per table:\n");
        let width = self.tables.keys().map(String::len).max().unwrap_or(0);
        for (t, n) in &self.tables {
            let _ = writeln!(s, "  {t:<width$}  {n}");
        }
        s
    }
}

/// Reads the status of an existing node without changing anything.
pub fn status(dir: &DataDir) -> Result<Status, StatusError> {
    let key_path = dir.identity_path();
    if !key_path.exists() {
        return Err(StatusError::NoNode(dir.root().display().to_string()));
    }
    let key = NodeKey::load(&key_path)?;
    let store = Store::open(dir.db_path())?;
    let tables = store
        .row_counts()?
        .into_iter()
        .map(|(t, n)| (t.to_owned(), n))
        .collect();
    let mut friends = with_links(
        friend_views(&store)?,
        daemon_running(dir)
            .then(|| LinksFile::read(&dir.root().join(LINKS_FILE_NAME)))
            .flatten()
            .as_ref(),
    );
    let told = Announced::load(&store, &key.peer_id().to_string())?;
    for sf in &mut friends {
        sf.told_addresses = told
            .of(&sf.friend.peer_id)
            .iter()
            .map(ToString::to_string)
            .collect();
    }
    Ok(Status {
        peer_id: key.peer_id().to_string(),
        data_dir: dir.root().display().to_string(),
        schema_version: store.schema_version()?,
        friends,
        tables,
        refused: RefusedFile::read(&dir.root().join(REFUSED_FILE_NAME))
            .map(|f| f.refused)
            .unwrap_or_default(),
        devices: list_devices(&store, &key.peer_id().to_string())?,
        mind_unpublished: store.mind_outbox_len()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use porfiry_mesh::net::LinkRecord;

    fn view(peer: &str) -> FriendView {
        FriendView {
            peer_id: peer.into(),
            name: None,
            addresses: Vec::new(),
            groups: Vec::new(),
            status: "online".into(),
            last_seen_ms: None,
            allow_offload: false,
            allow_models: false,
        }
    }

    fn record(link: Link, via: Option<&str>, why: Option<&str>) -> LinkRecord {
        LinkRecord {
            link,
            since_ms: 1_700_000_000_000,
            via: via.map(Into::into),
            why: why.map(Into::into),
        }
    }

    #[test]
    fn each_friend_gets_its_link_or_not_connected() {
        let mut links = LinksFile::default();
        links
            .friends
            .insert("a".into(), record(Link::Direct, None, None));
        let shown = with_links(vec![view("a"), view("b")], Some(&links));
        assert_eq!(shown[0].link, Link::Direct);
        assert_eq!(shown[0].link_since_ms, Some(1_700_000_000_000));
        assert_eq!(shown[0].link_text(), "direct");
        assert_eq!(shown[1].link, Link::NotConnected);
        assert_eq!(shown[1].link_since_ms, None);
        assert_eq!(shown[1].link_text(), "not connected");
        let json = serde_json::to_value(&shown[0]).unwrap();
        assert_eq!(json["link"], "direct");
        assert_eq!(json["peer_id"], "a");
        assert_eq!(json["link_since_ms"], 1_700_000_000_000_u64);
        assert!(
            json.get("via").is_none() && json.get("why").is_none(),
            "{json}"
        );
        assert!(json.get("via_shown").is_none(), "{json}");
        let none = with_links(vec![view("a")], None);
        assert_eq!(none[0].link, Link::NotConnected);
        assert_eq!(utc_text(0), "1970-01-01 00:00:00 UTC");
    }

    #[test]
    fn a_relayed_friend_shows_its_relay_by_name_or_short_id() {
        let named_relay = "12D3KooWRelayNamedAAAAAAAAAAAAAAAAAAAAAAAAAAA1";
        let bare_relay = "12D3KooWRelayBareBBBBBBBBBBBBBBBBBBBBBBBBBBxyz98765";
        let mut links = LinksFile::default();
        links
            .friends
            .insert("a".into(), record(Link::Relayed, Some(named_relay), None));
        links
            .friends
            .insert("b".into(), record(Link::Relayed, Some(bare_relay), None));
        let mut relay = view(named_relay);
        relay.name = Some("home".into());
        let shown = with_links(vec![view("a"), view("b"), relay], Some(&links));
        assert_eq!(shown[0].link_text(), "relayed via home");
        assert_eq!(
            shown[1].link_text(),
            "relayed via …xyz98765",
            "the end of its id"
        );
        let json = serde_json::to_value(&shown[0]).unwrap();
        assert_eq!(json["link"], "relayed");
        assert_eq!(json["via"], named_relay, "the whole id, not the name");
        assert!(json.get("why").is_none(), "{json}");
        assert!(json.get("told_addresses").is_none(), "none told: {json}");
        let status = Status {
            peer_id: "me".into(),
            data_dir: "/d".into(),
            schema_version: 1,
            friends: shown,
            tables: BTreeMap::new(),
            refused: vec![RefusedAuthor {
                author: "12D3KooWflood".into(),
                items: 40,
                bytes: 12_000,
                last_ms: 1_700_000_000_000,
            }],
            devices: vec![DeviceListing {
                peer: "12D3KooWphone".into(),
                name: "phone".into(),
                linked_since_ms: 1_700_000_000_000,
                last_sync_ms: None,
                behind: 7,
            }],
            mind_unpublished: 2,
        };
        let text = status.to_text();
        assert!(
            text.contains(
                "devices:        1 (memory changes not yet sent: 2)\n  phone  12D3KooWphone  linked since 2023-11-14 22:13:20 UTC  last seen never  behind 7 versions"
            ),
            "{text}"
        );
        assert!(
            text.contains("link: relayed via home since 2023-11-14"),
            "{text}"
        );
        assert!(
            text.contains(
                "refused (over quota): 1 authors\n  12D3KooWflood  40 items, 12000 bytes"
            ),
            "{text}"
        );
        let json = serde_json::to_value(&status).unwrap();
        assert_eq!(json["refused"][0]["author"], "12D3KooWflood");
        assert_eq!(json["refused"][0]["items"], 40);
        assert_eq!(json["refused"][0]["bytes"], 12_000);
        assert_eq!(json["devices"][0]["peer"], "12D3KooWphone");
        assert_eq!(json["devices"][0]["behind"], 7);
        assert_eq!(json["mind_unpublished"], 2);
        assert_eq!(short_peer_id("short"), "short");
    }

    #[test]
    fn an_unreachable_friend_shows_why() {
        let mut links = LinksFile::default();
        links.friends.insert(
            "a".into(),
            record(Link::NotConnected, None, Some("refused")),
        );
        let shown = with_links(vec![view("a")], Some(&links));
        assert_eq!(shown[0].link_text(), "not connected (refused)");
        let json = serde_json::to_value(&shown[0]).unwrap();
        assert_eq!(json["link"], "not connected");
        assert_eq!(json["why"], "refused");
        assert!(json.get("via").is_none(), "{json}");
    }
}
