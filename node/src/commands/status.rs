//! `porfiry status`: node id, schema version, friends (by name where they
//! have one, each with its link: `direct`, `relayed` or `not connected`, and
//! since when) and row counts per table.
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
use porfiry_mesh::friends::{FriendView, FriendsError, friend_views};
use porfiry_mesh::net::{LINKS_FILE_NAME, Link, LinksFile};

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
}

/// A friend as `status` shows it: what `friends list` shows, plus its link.
#[derive(Debug, Serialize)]
pub struct StatusFriend {
    /// The friend.
    #[serde(flatten)]
    pub friend: FriendView,
    /// `direct`, `relayed` or `not connected`.
    pub link: Link,
    /// Since when it has been so (Unix ms); `null` when unknown (no daemon
    /// running, or not connected since the daemon started).
    pub link_since_ms: Option<u64>,
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

/// Each friend with its link from `links` (`not connected` when absent).
pub fn with_links(friends: Vec<FriendView>, links: Option<&LinksFile>) -> Vec<StatusFriend> {
    friends
        .into_iter()
        .map(|friend| {
            let record = links.and_then(|l| l.friends.get(&friend.peer_id));
            StatusFriend {
                link: record.map_or(Link::NotConnected, |r| r.link),
                link_since_ms: record.map(|r| r.since_ms),
                friend,
            }
        })
        .collect()
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
                f.peer_id, f.status, sf.link
            );
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
    Ok(Status {
        peer_id: key.peer_id().to_string(),
        data_dir: dir.root().display().to_string(),
        schema_version: store.schema_version()?,
        friends: with_links(
            friend_views(&store)?,
            daemon_running(dir)
                .then(|| LinksFile::read(&dir.root().join(LINKS_FILE_NAME)))
                .flatten()
                .as_ref(),
        ),
        tables,
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
        }
    }

    #[test]
    fn each_friend_gets_its_link_or_not_connected() {
        let mut links = LinksFile::default();
        links.friends.insert(
            "a".into(),
            LinkRecord {
                link: Link::Relayed,
                since_ms: 1_700_000_000_000,
            },
        );
        let shown = with_links(vec![view("a"), view("b")], Some(&links));
        assert_eq!(shown[0].link, Link::Relayed);
        assert_eq!(shown[0].link_since_ms, Some(1_700_000_000_000));
        assert_eq!(shown[1].link, Link::NotConnected);
        assert_eq!(shown[1].link_since_ms, None);
        let json = serde_json::to_value(&shown[0]).unwrap();
        assert_eq!(json["link"], "relayed");
        assert_eq!(json["peer_id"], "a");
        assert_eq!(json["link_since_ms"], 1_700_000_000_000_u64);
        let none = with_links(vec![view("a")], None);
        assert_eq!(none[0].link, Link::NotConnected);
        assert_eq!(utc_text(0), "1970-01-01 00:00:00 UTC");
    }
}
