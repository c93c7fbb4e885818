//! `agent_peers` (friends: the peers this node replicates with) and
//! `agent_reputation` (what this node thinks of other agents), both keyed by
//! peer id.

use std::collections::BTreeMap;

use porfiry_protocol::item::audience::valid_group_name;
use rusqlite::OptionalExtension;
use serde::{Deserialize, Serialize};

use crate::error::{Result, StorageError};
use crate::limits::MAX_PEER_ID_BYTES;
use crate::peer_names::check_friend_name;
use crate::query::{Filter, int_param};
use crate::record::{Stored, record};
use crate::store::Store;
use crate::values::PeerStatus;

/// What one friend may do on this node.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PeerPermissions {
    /// May ask this node to run LLM tasks on its model (offload).
    pub offload: bool,
    /// Permissions added by later code, kept as they are on rewrite.
    #[serde(flatten)]
    pub other: BTreeMap<String, serde_json::Value>,
}

record! {
    /// A friend: a peer this node connects to and replicates with.
    pub struct Friend in "agent_peers" search ["peer_id", "name", "description"] check check_friend {
        /// Its peer id (`12D3KooW…`), unique.
        pub peer_id: String,
        /// What the user calls it here (`anna`), never sent; unique
        /// ignoring case, checked by [`check_friend_name`]; empty for none.
        pub name: String,
        /// Free text about it.
        pub description: String,
        /// Multiaddrs to dial it at.
        pub addresses: Vec<String> as json,
        /// Groups this node tagged it with (`family`, `club`); group items go to these.
        pub groups: Vec<String> as json,
        /// What it may do here.
        pub permissions: PeerPermissions as json,
        /// Connection state as last seen.
        pub status: PeerStatus,
        /// When it was last connected (Unix ms).
        pub last_seen: Option<u64>,
    }
}

/// Checks a peer id: non-empty, no spaces, at most [`MAX_PEER_ID_BYTES`].
pub fn check_peer_id(peer_id: &str) -> Result<()> {
    if peer_id.is_empty()
        || peer_id.len() > MAX_PEER_ID_BYTES
        || peer_id.chars().any(char::is_whitespace)
    {
        return Err(StorageError::invalid(
            "peer id",
            format!("{peer_id:?}: 1 to {MAX_PEER_ID_BYTES} bytes without spaces"),
        ));
    }
    Ok(())
}

/// Checks group names with the protocol's rule, and that none repeats.
pub fn check_groups(groups: &[String]) -> Result<()> {
    for (i, g) in groups.iter().enumerate() {
        if !valid_group_name(g) {
            return Err(StorageError::invalid(
                "group name",
                format!("{g:?}: 1 to 32 of a-z, 0-9, '-', '_'"),
            ));
        }
        if groups[..i].contains(g) {
            return Err(StorageError::invalid(
                "group name",
                format!("{g:?} given twice"),
            ));
        }
    }
    Ok(())
}

fn check_friend(f: &Friend) -> Result<()> {
    check_peer_id(&f.peer_id)?;
    if !f.name.is_empty() {
        check_friend_name(&f.name)?;
    }
    check_groups(&f.groups)
}

fn peer_key(peer_id: &str) -> impl FnOnce() -> String + '_ {
    move || format!("peer {peer_id}")
}

impl Store {
    /// Adds a friend; an existing peer id is [`StorageError::Duplicate`], a
    /// name another friend has is [`StorageError::NameTaken`].
    pub fn add_friend(&self, friend: &Friend, now_ms: u64) -> Result<i64> {
        self.transaction(|s| {
            if !friend.name.is_empty() {
                check_friend_name(&friend.name)?;
                s.check_name_free(&friend.name, &friend.peer_id)?;
            }
            s.add(friend, now_ms)
        })
    }

    /// All friends, by peer id.
    pub fn friends(&self) -> Result<Vec<Stored<Friend>>> {
        self.select::<Friend>(&Filter::default(), "peer_id", u32::MAX, 0)
    }

    /// One friend, or [`StorageError::NotFound`].
    pub fn friend(&self, peer_id: &str) -> Result<Stored<Friend>> {
        self.find_friend(peer_id)?
            .ok_or_else(|| StorageError::NotFound {
                table: "agent_peers",
                key: peer_key(peer_id)(),
            })
    }

    /// One friend, or `None` when `peer_id` is not a friend.
    pub fn find_friend(&self, peer_id: &str) -> Result<Option<Stored<Friend>>> {
        let mut f = Filter::default();
        f.and("peer_id = ?", [peer_id.to_owned().into()]);
        Ok(self.select::<Friend>(&f, "id", 1, 0)?.pop())
    }

    /// Removes a friend, or [`StorageError::NotFound`].
    pub fn remove_friend(&self, peer_id: &str) -> Result<()> {
        let n = self
            .conn
            .prepare_cached("DELETE FROM agent_peers WHERE peer_id = ?")?
            .execute([peer_id])?;
        if n == 0 {
            Err(StorageError::NotFound {
                table: "agent_peers",
                key: peer_key(peer_id)(),
            })
        } else {
            Ok(())
        }
    }

    /// Replaces a friend's groups (each checked like an audience group name).
    pub fn set_friend_groups(&self, peer_id: &str, groups: &[String], now_ms: u64) -> Result<()> {
        check_groups(groups)?;
        let json = serde_json::to_string(groups)
            .map_err(|e| StorageError::invalid("groups", e.to_string()))?;
        self.set_columns_by::<Friend>(
            "peer_id",
            &peer_id,
            peer_key(peer_id),
            "groups = ?",
            &[&json],
            now_ms,
        )
    }

    /// Replaces a friend's addresses.
    pub fn set_friend_addresses(
        &self,
        peer_id: &str,
        addresses: &[String],
        now_ms: u64,
    ) -> Result<()> {
        let json = serde_json::to_string(addresses)
            .map_err(|e| StorageError::invalid("addresses", e.to_string()))?;
        self.set_columns_by::<Friend>(
            "peer_id",
            &peer_id,
            peer_key(peer_id),
            "addresses = ?",
            &[&json],
            now_ms,
        )
    }

    /// Replaces a friend's permissions.
    pub fn set_friend_permissions(
        &self,
        peer_id: &str,
        p: &PeerPermissions,
        now_ms: u64,
    ) -> Result<()> {
        let json = serde_json::to_string(p)
            .map_err(|e| StorageError::invalid("permissions", e.to_string()))?;
        self.set_columns_by::<Friend>(
            "peer_id",
            &peer_id,
            peer_key(peer_id),
            "permissions = ?",
            &[&json],
            now_ms,
        )
    }

    /// Records a friend's connection state; `last_seen_ms = None` keeps the
    /// previous last-seen time.
    pub fn set_friend_status(
        &self,
        peer_id: &str,
        status: PeerStatus,
        last_seen_ms: Option<u64>,
        now_ms: u64,
    ) -> Result<()> {
        let seen = last_seen_ms
            .map(|t| int_param("last_seen_ms", t))
            .transpose()?;
        let sets = "status = ?, last_seen = COALESCE(?, last_seen)";
        self.set_columns_by::<Friend>(
            "peer_id",
            &peer_id,
            peer_key(peer_id),
            sets,
            &[&status, &seen],
            now_ms,
        )
    }
}

record! {
    /// This node's opinion of another agent (friend or not).
    pub struct Reputation in "agent_reputation" search ["peer_id", "notes"] marks [Tagged] check check_reputation {
        /// The agent's peer id, unique.
        pub peer_id: String,
        /// The score; higher is more trusted. Any finite number.
        pub score: f64,
        /// Comments on the agent's profile ("reputation notes").
        pub notes: String,
        /// Tags.
        pub tags: Vec<String> as tags,
    }
}

fn check_reputation(r: &Reputation) -> Result<()> {
    check_peer_id(&r.peer_id)?;
    check_score(r.score)
}

fn check_score(score: f64) -> Result<()> {
    if score.is_finite() {
        Ok(())
    } else {
        Err(StorageError::invalid(
            "score",
            format!("{score} is not finite"),
        ))
    }
}

impl Store {
    /// The reputation row of `peer_id`, if any.
    pub fn reputation(&self, peer_id: &str) -> Result<Option<Stored<Reputation>>> {
        let mut f = Filter::default();
        f.and("peer_id = ?", [peer_id.to_owned().into()]);
        Ok(self.select::<Reputation>(&f, "id", 1, 0)?.pop())
    }

    /// Sets the score, creating the row when missing ("reputation set").
    pub fn reputation_set(&self, peer_id: &str, score: f64, now_ms: u64) -> Result<f64> {
        check_score(score)?;
        self.reputation_upsert(peer_id, "score = excluded.score", score, now_ms)
    }

    /// Adds `delta` (negative to decrease) to the score, starting from 0 when
    /// the row is missing; returns the new score.
    pub fn reputation_adjust(&self, peer_id: &str, delta: f64, now_ms: u64) -> Result<f64> {
        check_score(delta)?;
        self.reputation_upsert(peer_id, "score = score + excluded.score", delta, now_ms)
    }

    /// Replaces the comments on `peer_id`, creating the row when missing.
    pub fn reputation_set_notes(&self, peer_id: &str, notes: &str, now_ms: u64) -> Result<()> {
        check_peer_id(peer_id)?;
        let now = int_param("time", now_ms)?;
        self.conn
            .prepare_cached(
                "INSERT INTO agent_reputation (peer_id, notes, created, updated) VALUES (?1, ?2, ?3, ?3)
                 ON CONFLICT (peer_id) DO UPDATE SET notes = excluded.notes, updated = excluded.updated",
            )?
            .execute(rusqlite::params![peer_id, notes, now])
            .map_err(|e| StorageError::from_write("agent_reputation", e))?;
        Ok(())
    }

    fn reputation_upsert(&self, peer_id: &str, set: &str, score: f64, now_ms: u64) -> Result<f64> {
        check_peer_id(peer_id)?;
        let now = int_param("time", now_ms)?;
        let sql = format!(
            "INSERT INTO agent_reputation (peer_id, score, created, updated) VALUES (?1, ?2, ?3, ?3)
             ON CONFLICT (peer_id) DO UPDATE SET {set}, updated = excluded.updated RETURNING score"
        );
        let score: Option<f64> = self
            .conn
            .prepare_cached(&sql)?
            .query_row(rusqlite::params![peer_id, score, now], |r| r.get(0))
            .optional()
            .map_err(|e| StorageError::from_write("agent_reputation", e))?;
        score.ok_or_else(|| StorageError::NotFound {
            table: "agent_reputation",
            key: peer_key(peer_id)(),
        })
    }
}
