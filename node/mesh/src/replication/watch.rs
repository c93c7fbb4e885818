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
//! publish, items signed elsewhere). The checks run on a plain thread of
//! their own, never on a tokio interval: tokio's hierarchical timer wheel
//! reaches a deadline seconds away in steps (one wake-up per wheel level
//! crossed), which made an idle phone's 5 s poll cost three wake-ups of the
//! node thread instead of one.
//!
//! When the operating system reports writes to files (inotify on Linux and
//! Android, [`super::watch_events`]) the thread sleeps until the database's
//! files are written and checks only while they are: an idle node does not
//! wake at all. Elsewhere, or when inotify refuses a watch, it checks once
//! per interval forever ([`spawn_polling`]).

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

/// The watching thread; dropping this stops it at once (or after the
/// check under way, which waits its turn on the writer).
#[derive(Debug)]
pub struct WatchThread {
    _stop: Stop,
}

/// What keeps a watching thread alive: dropping it ends the thread (it is
/// held, never read).
#[derive(Debug)]
#[allow(dead_code)]
enum Stop {
    /// The polling thread's stop channel.
    Poll(std_mpsc::Sender<()>),
    /// The file-event subscription; dropping it closes the thread's events.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    Events(super::watch_events::Subscription),
}

/// Watches `watcher`'s database for others' commits (about every
/// `intervals.others`) and any commit (about every `intervals.any`), and
/// sends `()` to `changed` when either moved: driven by the file events of
/// the database's files where the system gives them, by a poll elsewhere.
/// `changed` has room for one signal: a change seen while a scan is already
/// due adds nothing. The thread ends when dropped, when the loop is gone or
/// when the database closes.
pub fn spawn_watch(
    watcher: ChangeWatcher,
    intervals: PollIntervals,
    changed: mpsc::Sender<()>,
) -> Result<WatchThread, ReplicationError> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let path = watcher.db.path().to_path_buf();
        match super::watch_events::Subscription::start(&path) {
            Ok((subscription, events)) => {
                std::thread::Builder::new()
                    .name("porfiry-watch".into())
                    .spawn(move || {
                        super::watch_events::run(watcher, intervals, &events, &changed);
                    })
                    .map_err(ReplicationError::Thread)?;
                return Ok(WatchThread {
                    _stop: Stop::Events(subscription),
                });
            }
            Err(error) => {
                tracing::info!(%error, path = %path.display(), "no file events for the database; polling it instead");
            }
        }
    }
    spawn_polling(watcher, intervals, changed)
}

/// [`spawn_watch`] without file events: checks once every
/// `intervals.others` whether or not anything was written.
pub fn spawn_polling(
    mut watcher: ChangeWatcher,
    intervals: PollIntervals,
    changed: mpsc::Sender<()>,
) -> Result<WatchThread, ReplicationError> {
    let (stop, stopped) = std_mpsc::channel::<()>();
    let every = any_every(intervals);
    std::thread::Builder::new()
        .name("porfiry-watch".into())
        .spawn(move || {
            let mut tick: u128 = 0;
            // Sleeps one interval; returns at once when the node stops.
            while let Err(std_mpsc::RecvTimeoutError::Timeout) =
                stopped.recv_timeout(intervals.others)
            {
                tick += 1;
                if check(&mut watcher, tick.is_multiple_of(every), &changed) == Checked::Stop {
                    return;
                }
            }
        })
        .map_err(ReplicationError::Thread)?;
    Ok(WatchThread {
        _stop: Stop::Poll(stop),
    })
}

/// Every how many checks of others' commits the "any commit" check comes
/// along.
pub(super) fn any_every(intervals: PollIntervals) -> u128 {
    (intervals.any.as_nanos() / intervals.others.as_nanos().max(1)).max(1)
}

/// How a check went, for the thread running it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Checked {
    /// Go on watching.
    Go,
    /// The loop or the database is gone: end the thread.
    Stop,
}

/// Asks whether others committed (and, with `any`, whether anyone did) and
/// signals the loop when so.
pub(super) fn check(watcher: &mut ChangeWatcher, any: bool, changed: &mpsc::Sender<()>) -> Checked {
    let seen = watcher.others_changed().and_then(|others| {
        let any = any && watcher.any_changed()?;
        Ok(others || any)
    });
    match seen {
        Ok(false) => Checked::Go,
        Ok(true) => match changed.try_send(()) {
            Ok(()) | Err(mpsc::error::TrySendError::Full(())) => Checked::Go,
            Err(mpsc::error::TrySendError::Closed(())) => Checked::Stop,
        },
        Err(ReplicationError::Db(DbError::Closed)) => Checked::Stop,
        // Retried at the next check: nothing is lost by waiting.
        Err(e) => {
            tracing::warn!(error = %e, "change check failed");
            Checked::Go
        }
    }
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
        // The thread ends and drops its sender (after any signal it had
        // already sent: the "any commit" check sees the same commit).
        while rx.recv().await.is_some() {}
    }

    #[tokio::test]
    async fn the_polling_thread_signals_another_process_and_stops_when_dropped() {
        let (_dir, db, path) = temp_db();
        let (tx, mut rx) = mpsc::channel(1);
        let thread = spawn_polling(ChangeWatcher::start(&db).await.unwrap(), fast(), tx).unwrap();
        Store::open(&path).unwrap().add(&note("hi"), 1).unwrap();
        assert_eq!(rx.recv().await, Some(()));
        drop(thread);
        // The thread ends and drops its sender (after any signal it had
        // already sent: the "any commit" check sees the same commit).
        while rx.recv().await.is_some() {}
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
