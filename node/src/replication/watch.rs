//! Noticing that another process changed the database (a `notes post`, a
//! `friends add` from another terminal, a chat session's tool), cheaply:
//! SQLite's `PRAGMA data_version` on a connection of our own changes
//! whenever any other connection commits, and costs one read of the WAL
//! index. Polled every `CHANGE_POLL_INTERVAL` (server) or
//! `PHONE_CHANGE_POLL_INTERVAL` (phone) by [`spawn_watch`]; the node's own
//! writes (through the DB actor's writer) count as changes too, which only
//! costs a scan that finds nothing new.
//!
//! The poll runs on a plain thread that sleeps in `recv_timeout`, not on a
//! tokio interval: tokio's hierarchical timer wheel reaches a deadline
//! seconds away in steps (one wake-up per wheel level crossed), which made
//! an idle phone's 5 s poll cost three wake-ups of the node thread instead
//! of one. The thread wakes once per interval and wakes the loop only when
//! something changed.

use std::path::Path;
use std::sync::mpsc as std_mpsc;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use tokio::sync::mpsc;

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

/// The polling thread; dropping this stops it at once.
#[derive(Debug)]
pub struct WatchThread {
    _stop: std_mpsc::Sender<()>,
}

/// Polls `watcher` every `interval` on a thread of its own and sends `()`
/// to `changed` when another connection committed. `changed` has room for
/// one signal: a change seen while a scan is already due adds nothing.
pub fn spawn_watch(
    mut watcher: ChangeWatcher,
    interval: Duration,
    changed: mpsc::Sender<()>,
) -> Result<WatchThread, ReplicationError> {
    let (stop, stopped) = std_mpsc::channel::<()>();
    std::thread::Builder::new()
        .name("porfiry-watch".into())
        .spawn(move || {
            // Sleeps `interval`; returns at once when the node stops.
            while let Err(std_mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(interval) {
                match watcher.changed() {
                    Ok(false) => {}
                    Ok(true) => match changed.try_send(()) {
                        Ok(()) | Err(mpsc::error::TrySendError::Full(())) => {}
                        Err(mpsc::error::TrySendError::Closed(())) => return,
                    },
                    // Retried at the next interval: nothing is lost by waiting.
                    Err(e) => tracing::warn!(error = %e, "change check failed"),
                }
            }
        })
        .map_err(ReplicationError::Thread)?;
    Ok(WatchThread { _stop: stop })
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

    #[tokio::test]
    async fn the_thread_signals_a_change_and_stops_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE_NAME);
        let store = Store::create(&path).unwrap();
        let (tx, mut rx) = mpsc::channel(1);
        let thread = spawn_watch(
            ChangeWatcher::open(&path).unwrap(),
            Duration::from_millis(1),
            tx,
        )
        .unwrap();
        store
            .add(
                &Note {
                    text: "hi".into(),
                    ..Default::default()
                },
                1,
            )
            .unwrap();
        assert_eq!(rx.recv().await, Some(()));
        drop(thread);
        // The thread ends and drops its sender.
        assert_eq!(rx.recv().await, None);
    }

    #[test]
    fn a_missing_file_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = ChangeWatcher::open(&dir.path().join("nope.db")).unwrap_err();
        assert!(err.to_string().contains("nope.db"), "{err}");
    }
}
