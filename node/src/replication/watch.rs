//! Noticing that another process changed the database (a `notes post`, a
//! `friends add` from another terminal, a chat session's tool), cheaply:
//! SQLite's `PRAGMA data_version` on a connection of our own changes
//! whenever any other connection commits, and costs one read of the WAL
//! index. Polled every `CHANGE_POLL_INTERVAL`; the daemon's own writes
//! (through its main connection) count as changes too, which only costs a
//! scan that finds nothing new.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use super::error::ReplicationError;

/// A read-only connection that remembers the last `data_version` it saw.
pub struct ChangeWatcher {
    conn: Connection,
    path: String,
    last: i64,
}

impl std::fmt::Debug for ChangeWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChangeWatcher")
            .field("path", &self.path)
            .field("last", &self.last)
            .finish_non_exhaustive()
    }
}

impl ChangeWatcher {
    /// Opens the database file read-only and takes its current version as
    /// the baseline.
    pub fn open(path: &Path) -> Result<ChangeWatcher, ReplicationError> {
        let shown = path.display().to_string();
        let err = |source| ReplicationError::Watch {
            path: shown.clone(),
            source,
        };
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(err)?;
        let mut w = ChangeWatcher {
            conn,
            path: shown.clone(),
            last: 0,
        };
        w.last = w.version().map_err(err)?;
        Ok(w)
    }

    /// True if another connection committed since the last call (or since
    /// `open`).
    pub fn changed(&mut self) -> Result<bool, ReplicationError> {
        let v = self.version().map_err(|source| ReplicationError::Watch {
            path: self.path.clone(),
            source,
        })?;
        let changed = v != self.last;
        self.last = v;
        Ok(changed)
    }

    fn version(&self) -> rusqlite::Result<i64> {
        self.conn.query_row("PRAGMA data_version", [], |r| r.get(0))
    }
}

#[cfg(test)]
mod tests {
    use porfiry_storage::{DB_FILE_NAME, Note, Store};

    use super::*;

    #[test]
    fn sees_commits_of_other_connections_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE_NAME);
        let store = Store::create(&path).unwrap();
        let mut w = ChangeWatcher::open(&path).unwrap();
        assert!(!w.changed().unwrap(), "nothing happened yet");
        store
            .add(
                &Note {
                    text: "hi".into(),
                    ..Default::default()
                },
                1,
            )
            .unwrap();
        assert!(w.changed().unwrap());
        assert!(!w.changed().unwrap(), "reported once");
        // A second process-like writer on its own connection.
        let other = Store::open(&path).unwrap();
        other
            .add(
                &Note {
                    text: "again".into(),
                    ..Default::default()
                },
                2,
            )
            .unwrap();
        assert!(w.changed().unwrap());
    }

    #[test]
    fn a_missing_file_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = ChangeWatcher::open(&dir.path().join("nope.db")).unwrap_err();
        assert!(err.to_string().contains("nope.db"), "{err}");
    }
}
