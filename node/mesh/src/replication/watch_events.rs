//! The change watch driven by file events (inotify, Linux and Android): the
//! watching thread sleeps, with no timer at all, until one of the
//! database's files (`porfiry.db`, its `-wal`, `-shm`, `-journal`) is
//! written or created, then checks on the profile's clock while writes go
//! on and for a short tail after the last one, and goes back to sleep. An
//! idle node, connected or not, costs no wake-up here; a poll cost one per
//! interval (12 a minute on a phone, and one more of the writer each).
//!
//! The tail matters: a commit writes its WAL frames (the events) before it
//! updates the WAL index in shared memory (no event: it is a mapped page),
//! so a check right after the last write may still read the old
//! `data_version`. The checks after it see the new one.

use std::path::Path;
use std::sync::mpsc as std_mpsc;
use std::time::Instant;

use notify::event::{AccessKind, AccessMode, EventKind};
use notify::{Event, INotifyWatcher, RecursiveMode, Watcher};
use tokio::sync::mpsc;

use super::limits::PollIntervals;
use super::watch::{ChangeWatcher, Checked, any_every, check};

/// The subscription to the database directory's file events; dropping it
/// stops inotify's thread and closes the events, which ends the watching
/// thread.
pub struct Subscription {
    _watcher: INotifyWatcher,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Subscription")
    }
}

impl Subscription {
    /// Subscribes to writes of `db_path`'s files (watching its directory,
    /// as SQLite creates and deletes the `-wal` and `-journal` files).
    /// The receiver holds at most one signal: a write while a check is due
    /// adds nothing.
    pub fn start(db_path: &Path) -> notify::Result<(Subscription, std_mpsc::Receiver<()>)> {
        let dir = db_path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let name = db_path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (tx, rx) = std_mpsc::sync_channel::<()>(1);
        let mut watcher = INotifyWatcher::new(
            move |event: notify::Result<Event>| {
                let relevant = match &event {
                    Ok(event) => {
                        writes(&event.kind) && event.paths.iter().any(|p| is_db_file(p, &name))
                    }
                    // A lost event (queue overflow) may hide a commit.
                    Err(_) => true,
                };
                if relevant {
                    // Full: a check is already due. Gone: the thread ended.
                    let _ = tx.try_send(());
                }
            },
            notify::Config::default(),
        )?;
        watcher.watch(&dir, RecursiveMode::NonRecursive)?;
        Ok((Subscription { _watcher: watcher }, rx))
    }
}

/// Whether an event of `kind` can be a commit: data written, a file
/// created or closed after writing (opening and reading cannot).
fn writes(kind: &EventKind) -> bool {
    match kind {
        EventKind::Modify(_) | EventKind::Create(_) | EventKind::Any | EventKind::Other => true,
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) | EventKind::Remove(_) => false,
    }
}

/// Whether `path` is the database `name` or one of SQLite's files beside it.
fn is_db_file(path: &Path, name: &str) -> bool {
    path.file_name()
        .map(|f| f.to_string_lossy())
        .is_some_and(|f| {
            f.strip_prefix(name)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
        })
}

/// The watching thread's body: asleep until the files are written, then
/// one check per `intervals.others` while they are and for the tail after.
pub fn run(
    mut watcher: ChangeWatcher,
    intervals: PollIntervals,
    events: &std_mpsc::Receiver<()>,
    changed: &mpsc::Sender<()>,
) {
    let every = any_every(intervals);
    loop {
        // Asleep: no timer until a database file is written.
        if events.recv().is_err() {
            return;
        }
        let mut tick: u128 = 0;
        // Intervals with no write since the last one; the tail lasts past
        // the next "any commit" check, so the last commit is always seen
        // by both checks.
        let mut quiet: u128 = 0;
        while quiet <= every {
            match written_within(events, intervals.others) {
                None => return,
                Some(true) => quiet = 0,
                Some(false) => quiet += 1,
            }
            tick += 1;
            if check(&mut watcher, tick.is_multiple_of(every), changed) == Checked::Stop {
                return;
            }
        }
    }
}

/// Waits `span`, taking every event of it; `Some(written)` says whether
/// any came, `None` that the subscription is gone.
fn written_within(events: &std_mpsc::Receiver<()>, span: std::time::Duration) -> Option<bool> {
    let deadline = Instant::now() + span;
    let mut written = false;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match events.recv_timeout(left) {
            Ok(()) => written = true,
            Err(std_mpsc::RecvTimeoutError::Timeout) => return Some(written),
            Err(std_mpsc::RecvTimeoutError::Disconnected) => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use porfiry_storage::db::Db;
    use porfiry_storage::{DB_FILE_NAME, Note, Store};

    use super::*;

    #[test]
    fn only_the_database_and_its_sqlite_files_count() {
        let name = DB_FILE_NAME;
        for yes in [
            name.to_owned(),
            format!("{name}-wal"),
            format!("{name}-shm"),
            format!("{name}-journal"),
        ] {
            assert!(
                is_db_file(Path::new("/d").join(&yes).as_path(), name),
                "{yes}"
            );
        }
        for no in ["models", "other.db", &format!("{name}x"), "node.key"] {
            assert!(
                !is_db_file(Path::new("/d").join(no).as_path(), name),
                "{no}"
            );
        }
    }

    #[test]
    fn reads_and_opens_are_not_writes() {
        assert!(!writes(&EventKind::Access(AccessKind::Open(
            notify::event::AccessMode::Any
        ))));
        assert!(!writes(&EventKind::Access(AccessKind::Close(
            AccessMode::Read
        ))));
        assert!(writes(&EventKind::Access(AccessKind::Close(
            AccessMode::Write
        ))));
        assert!(writes(&EventKind::Modify(notify::event::ModifyKind::Any)));
        assert!(writes(&EventKind::Create(notify::event::CreateKind::File)));
    }

    fn fast() -> PollIntervals {
        PollIntervals {
            others: Duration::from_millis(1),
            any: Duration::from_millis(3),
        }
    }

    /// Each commit by another connection is signalled, the first one to a
    /// watch asleep with no timer; the watch ends with its subscription.
    #[tokio::test]
    async fn every_write_of_another_connection_is_signalled() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DB_FILE_NAME);
        let db = Db::start(Store::create(&path).unwrap()).unwrap();
        let (subscription, events) = Subscription::start(&path).unwrap();
        let watcher = ChangeWatcher::start(&db).await.unwrap();
        let (tx, mut rx) = mpsc::channel(1);
        let thread = std::thread::spawn(move || run(watcher, fast(), &events, &tx));
        let other = Store::open(&path).unwrap();
        for i in 0..3 {
            let note = Note {
                text: format!("from another process {i}"),
                ..Default::default()
            };
            other.add(&note, i).unwrap();
            assert_eq!(rx.recv().await, Some(()), "write {i} seen");
        }
        drop(subscription);
        thread.join().unwrap();
        // Only signals sent before the end are left; then the channel closes.
        while rx.recv().await.is_some() {}
    }

    #[test]
    fn a_missing_directory_is_an_error_not_a_silent_watch() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gone").join(DB_FILE_NAME);
        assert!(Subscription::start(&path).is_err());
    }
}
