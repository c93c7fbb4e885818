//! The actor against a real file: order, reads beside writes, the queue
//! bound (backpressure, not loss) and closing.

use std::sync::mpsc as std_mpsc;
use std::task::Poll;

use crate::{DB_FILE_NAME, Note};
use futures::FutureExt;

use super::*;

fn note(text: &str) -> Note {
    Note {
        text: text.into(),
        ..Default::default()
    }
}

/// Adds a note through the writer thread.
async fn add(db: &Db, text: &'static str) {
    db.write(move |s| s.add(&note(text), 1))
        .await
        .unwrap()
        .unwrap();
}

fn temp_db() -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::create(dir.path().join(DB_FILE_NAME)).unwrap();
    (dir, Db::start(store).unwrap())
}

#[tokio::test]
async fn writes_run_in_order_and_reads_see_them() {
    let (_dir, db) = temp_db();
    for i in 0..5 {
        let id = db
            .write(move |s| s.add(&note(&format!("n{i}")), 1))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(id, i + 1);
    }
    let count = db.read(|s| s.count::<Note>()).await.unwrap().unwrap();
    assert_eq!(count, 5);
}

#[tokio::test]
async fn a_read_connection_refuses_writes() {
    let (_dir, db) = temp_db();
    let r = db.read(|s| s.add(&note("x"), 1)).await.unwrap();
    assert!(r.is_err(), "a read connection must not write");
}

#[tokio::test]
async fn a_full_write_queue_makes_callers_wait_and_loses_nothing() {
    let (_dir, db) = temp_db();
    // Hold the writer thread inside a closure until released.
    let (release, hold) = std_mpsc::channel::<()>();
    let (started_tx, started) = tokio::sync::oneshot::channel();
    let held = db.clone();
    let blocker = tokio::spawn(async move {
        held.write(move |_| {
            let _ = started_tx.send(());
            let _ = hold.recv();
        })
        .await
    });
    started.await.unwrap();

    // Fill the queue: each call is polled once, which queues it.
    let mut queued = Vec::new();
    for i in 0..WRITE_QUEUE_CAPACITY {
        let mut call = Box::pin(db.write(move |s| s.add(&note(&format!("q{i}")), 1)));
        assert!(call.as_mut().now_or_never().is_none());
        queued.push(call);
    }
    assert_eq!(db.write_queue_free(), 0, "the queue is full");
    // One more waits for a place instead of being dropped or failing.
    let mut extra = Box::pin(db.write(|s| s.add(&note("extra"), 1)));
    assert!(matches!(futures::poll!(extra.as_mut()), Poll::Pending));
    assert_eq!(db.write_queue_free(), 0);

    release.send(()).unwrap();
    blocker.await.unwrap().unwrap();
    let mut ids = Vec::new();
    for call in queued {
        ids.push(call.await.unwrap().unwrap());
    }
    ids.push(extra.await.unwrap().unwrap());
    let expected: Vec<i64> = (1..=WRITE_QUEUE_CAPACITY as i64 + 1).collect();
    assert_eq!(ids, expected, "every write ran, in the order asked");
    let count = db.read(|s| s.count::<Note>()).await.unwrap().unwrap();
    assert_eq!(count, WRITE_QUEUE_CAPACITY as u64 + 1);
}

#[tokio::test]
async fn after_close_calls_fail_and_the_file_is_whole() {
    let (dir, db) = temp_db();
    add(&db, "kept").await;
    db.close().await;
    assert!(matches!(
        db.write(|s| s.add(&note("late"), 1)).await,
        Err(DbError::Closed)
    ));
    assert!(matches!(db.read(|_| ()).await, Err(DbError::Closed)));
    let store = Store::open(dir.path().join(DB_FILE_NAME)).unwrap();
    assert_eq!(store.count::<Note>().unwrap(), 1);
}

#[tokio::test]
async fn a_panicking_closure_costs_only_its_answer() {
    let (_dir, db) = temp_db();
    let r = db.write(|_| -> u8 { panic!("boom") }).await;
    assert!(matches!(r, Err(DbError::Closed)));
    let id = db.write(|s| s.add(&note("after"), 1)).await.unwrap();
    assert!(id.is_ok(), "the writer thread still runs");
}

#[tokio::test]
async fn a_read_ahead_runs_before_its_answer_is_awaited() {
    let (_dir, db) = temp_db();
    add(&db, "there").await;
    let (ran_tx, ran) = tokio::sync::oneshot::channel();
    let answer = db
        .read_ahead(move |s| {
            let _ = ran_tx.send(());
            s.count::<Note>()
        })
        .await
        .unwrap();
    // The reader ran it although nobody has polled the answer yet.
    ran.await.expect("the queued read ran");
    assert_eq!(answer.get().await.unwrap().unwrap(), 1);
    db.close().await;
    // Refused when queued, or queued and dropped unanswered as the
    // readers end: either way the caller learns it is closed.
    let late = match db.read_ahead(|_| ()).await {
        Ok(answer) => answer.get().await,
        Err(e) => Err(e),
    };
    assert!(matches!(late, Err(DbError::Closed)));
}

#[tokio::test]
async fn a_running_write_sees_whether_another_waits_behind_it() {
    let (_dir, db) = temp_db();
    // Nothing queued: a write asking from inside its closure sees no one.
    let asker = db.clone();
    assert!(!db.write(move |_| asker.writes_waiting()).await.unwrap());

    // Hold the writer; the running closure answers once released.
    let (release, hold) = std_mpsc::channel::<()>();
    let (started_tx, started) = tokio::sync::oneshot::channel();
    let asker = db.clone();
    let running = tokio::spawn({
        let db = db.clone();
        async move {
            db.write(move |_| {
                let _ = started_tx.send(());
                let _ = hold.recv();
                asker.writes_waiting()
            })
            .await
        }
    });
    started.await.unwrap();
    assert!(!db.writes_waiting(), "the running write does not count");
    let mut behind = Box::pin(db.write(|s| s.add(&note("behind"), 1)));
    assert!(behind.as_mut().now_or_never().is_none(), "queued");
    assert!(db.writes_waiting());
    release.send(()).unwrap();
    assert!(
        running.await.unwrap().unwrap(),
        "the running write saw the queued one"
    );
    behind.await.unwrap().unwrap();
    assert!(!db.writes_waiting(), "taken and done");
}
