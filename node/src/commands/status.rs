//! `porfiry status`: node id, schema version, friends (by name where they
//! have one) and row counts per table.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use porfiry_protocol::NodeKey;
use porfiry_storage::Store;
use serde::Serialize;

use super::friends::{FriendView, FriendsError, friend_views};
use crate::data_dir::DataDir;

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
    /// Friends, each with its name (if any) and last seen state.
    pub friends: Vec<FriendView>,
    /// Row count per table.
    pub tables: BTreeMap<String, u64>,
}

impl Status {
    /// The human-readable form.
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "node id:        {}\ndata dir:       {}\nschema version: {}\n",
            self.peer_id, self.data_dir, self.schema_version
        );
        let _ = writeln!(s, "friends:        {}", self.friends.len());
        for f in &self.friends {
            let name = f
                .name
                .as_ref()
                .map(|n| format!("{n}  "))
                .unwrap_or_default();
            let _ = writeln!(s, "  {name}{}  {}", f.peer_id, f.status);
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
        friends: friend_views(&store)?,
        tables,
    })
}
