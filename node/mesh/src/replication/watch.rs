//! Noticing that the database changed behind the loop's back, cheaply:
//! SQLite's `PRAGMA data_version` on a connection changes whenever another
//! connection commits, and costs one read of the WAL index. Two such reads,
//! on two clocks ([`PollIntervals`]):
//!
//! - on the DB actor's writer connection, whose own commits never change
//!   it: another process wrote (a `notes post`, a `friends add` from
//!   another terminal). Asked often (50 ms on a server), as nothing the
//!   node does itself sets it off: a server storing a catch-up's items
//!   stays quiet.
//! - on a read-only connection of the watcher's own, which every commit
//!   changes, the node's own included: some in-process writes leave rows
//!   to publish without telling the loop (a thinking core's shareable
//!   rating). Asked less often (250 ms on a server), so a busy writer costs
//!   at most four scans a second.
//!
//! Either change sends one signal, and the loop scans (friends, rows to
//! publish, items signed elsewhere). [`spawn_watch`] polls on a plain thread
//! that sleeps in `recv_timeout`, not on a tokio interval: tokio's
//! hierarchical timer wheel reaches a deadline seconds away in steps (one
//! wake-up per wheel level crossed), which made an idle phone's 5 s poll
//! cost three wake-ups of the node thread instead of one. The thread wakes
//! once per interval and wakes the loop only when something changed.

use std::sync::mpsc as std_mpsc;

use porfiry_storage::Store;
use tokio::sync::mpsc;

use super::error::ReplicationError;
use super::limits::PollIntervals;
use porfiry_storage::db::{Db, DbError};

/// The two connections' last `data_version`s, and the way to ask again.
#[derive(Debug)]
pub struct ChangeWatcher {
    db: Db,
    /// The watcher's own connection, read-only.
    any: Store,
    last_others: i64,
    last_any: i64,
}

impl ChangeWatcher {
    /// Opens the watcher's own read-only connection on `db`'s file and
    /// takes both current versions as the baseline.
    pub async fn start(db: &Db) -> Result<ChangeWatcher, ReplicationError> {
        let any = Store::open(db.path())?;
        any.set_query_only(true)?;
        let last_any = any.data_version()?;
        let last_others = db.write(|s| s.data_version()).await??;
        Ok(ChangeWatcher {
            db: db.clone(),
            any,
            last_others,
            last_any,
        })
    }

    /// True if another connection than the node's writer committed since
    /// this was last asked. Blocks on the writer's queue: for the watch
    /// thread only.
    pub fn others_changed(&mut self) -> Result<bool, ReplicationError> {
        let v = self.db.write_blocking(|s| s.data_version())??;
        Ok(std::mem::replace(&mut self.last_others, v) != v)
    }

    /// True if anyone, the node's writer included, committed since this
    /// was last asked.
    pub fn any_changed(&mut self) -> Result<bool, ReplicationError> {
        let v = self.any.data_version()?;
        Ok(std::mem::replace(&mut self.last_any, v) != v)
    }
}

/// The polling thread; dropping this stops it at once (or after the check
/// under way, which waits its turn on the writer).
#[derive(Debug)]
pub struct WatchThread {
    _stop: std_mpsc::Sender<()>,
}

/// Polls `watcher` on a thread of its own, for others' commits every
/// `intervals.others` and for any commit about every `intervals.any`, and
/// sends `()` to `changed` when either moved. `changed` has room for one
/// signal: a change seen while a scan is already due adds nothing. The
/// thread ends when dropped, when the loop is gone or when the database
/// closes.
pub fn spawn_watch(
    mut watcher: ChangeWatcher,
    intervals: PollIntervals,
    changed: mpsc::Sender<()>,
) -> Result<WatchThread, ReplicationError> {
    let (stop, stopped) = std_mpsc::channel::<()>();
    // Every how many ticks the "any commit" check comes along.
    let every = (intervals.any.as_nanos() / intervals.others.as_nanos().max(1)).max(1);
    std::thread::Builder::new()
        .name("porfiry-watch".into())
        .spawn(move || {
            let mut tick: u128 = 0;
            // Sleeps one interval; returns at once when the node stops.
            while let Err(std_mpsc::RecvTimeoutError::Timeout) =
                stopped.recv_timeout(intervals.others)
            {
                tick += 1;
                let seen = watcher.others_changed().and_then(|others| {
                    let any = tick.is_multiple_of(every) && watcher.any_changed()?;
                    Ok(others || any)
                });
                match seen {
                    Ok(false) => {}
                    Ok(true) => match changed.try_send(()) {
                        Ok(()) | Err(mpsc::error::TrySendError::Full(())) => {}
                        Err(mpsc::error::TrySendError::Closed(())) => return,
                    },
                    Err(ReplicationError::Db(DbError::Closed)) => return,
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
    use std::time::Duration;

    use porfiry_storage::{DB_FILE_NAME, Note, Store};

    use super::*;

    fn note(text: &str) -> Note {
        Note {
            text: text.into(),
            ..Default::default()
        }
    }

    fn temp_db() -> (tempfile::TempDir, Db, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE_NAME);
        let db = Db::start(Store::create(&path).unwrap()).unwrap();
        (dir, db, path)
    }

    /// Both checks, asked from a blocking thread as the watch thread asks
    /// them: (others, any).
    async fn check(mut w: ChangeWatcher) -> (ChangeWatcher, (bool, bool)) {
        tokio::task::spawn_blocking(move || {
            let c = (w.others_changed().unwrap(), w.any_changed().unwrap());
            (w, c)
        })
        .await
        .unwrap()
    }

    #[tokio::test]
    async fn others_commits_show_on_both_checks_the_nodes_own_only_on_any() {
        let (_dir, db, path) = temp_db();
        let w = ChangeWatcher::start(&db).await.unwrap();
        let (w, c) = check(w).await;
        assert_eq!(c, (false, false), "nothing happened yet");
        // The node's own write, through the actor's writer.
        db.write(|s| s.add(&note("ours"), 1))
            .await
            .unwrap()
            .unwrap();
        let (w, c) = check(w).await;
        assert_eq!(c, (false, true), "the writer's own commit is not another's");
        // Another process's write, on a connection of its own.
        Store::open(&path).unwrap().add(&note("theirs"), 2).unwrap();
        let (w, c) = check(w).await;
        assert_eq!(c, (true, true));
        let (_, c) = check(w).await;
        assert_eq!(c, (false, false), "reported once");
    }

    fn fast() -> PollIntervals {
        PollIntervals {
            others: Duration::from_millis(1),
            any: Duration::from_millis(3),
        }
    }

    #[tokio::test]
    async fn the_thread_signals_another_process_and_stops_when_dropped() {
        let (_dir, db, path) = temp_db();
        let (tx, mut rx) = mpsc::channel(1);
        let thread = spawn_watch(ChangeWatcher::start(&db).await.unwrap(), fast(), tx).unwrap();
        Store::open(&path).unwrap().add(&note("hi"), 1).unwrap();
        assert_eq!(rx.recv().await, Some(()));
        drop(thread);
        // The thread ends and drops its sender.
        assert_eq!(rx.recv().await, None);
    }

    #[tokio::test]
    async fn the_thread_signals_the_nodes_own_writes_too() {
        let (_dir, db, _path) = temp_db();
        let (tx, mut rx) = mpsc::channel(1);
        let _thread = spawn_watch(ChangeWatcher::start(&db).await.unwrap(), fast(), tx).unwrap();
        db.write(|s| s.add(&note("ours"), 1))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(rx.recv().await, Some(()));
    }

    #[tokio::test]
    async fn the_thread_ends_when_the_database_closes() {
        let (_dir, db, _path) = temp_db();
        let (tx, mut rx) = mpsc::channel(1);
        let _thread = spawn_watch(ChangeWatcher::start(&db).await.unwrap(), fast(), tx).unwrap();
        db.close().await;
        assert_eq!(rx.recv().await, None, "its sender is dropped");
    }

    #[tokio::test]
    async fn a_file_gone_from_under_the_node_is_a_clear_error() {
        let (_dir, db, path) = temp_db();
        // The writer keeps its open file; the watcher's own connection
        // cannot open the name any more.
        std::fs::remove_file(&path).unwrap();
        let err = ChangeWatcher::start(&db).await.unwrap_err();
        assert!(err.to_string().contains(DB_FILE_NAME), "{err}");
    }
}
