//! The handle's command queue to the loop: bounded, and a full queue makes
//! the caller wait (its note already committed) rather than drop the command.

use std::time::Duration;

use futures::FutureExt;
use porfiry_skills::SystemClock;
use porfiry_storage::{DB_FILE_NAME, Note, Sharing, Store};

use super::*;
use crate::node::limits::COMMAND_QUEUE_CAPACITY;

fn post(text: &str) -> NotePost {
    NotePost {
        text: text.into(),
        audience: "friends".parse::<Sharing>().unwrap(),
        reply_to: None,
    }
}

#[tokio::test]
async fn a_full_command_queue_makes_the_poster_wait_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE_NAME);
    let db = Db::start(Store::create(&path).unwrap()).unwrap();
    let key = NodeKey::from_seed([3; 32]);
    let (tx, mut rx) = mpsc::channel(COMMAND_QUEUE_CAPACITY);
    let (stop, _) = watch::channel(false);
    let (_, listening) = watch::channel(Vec::new());
    let handle = NodeHandle::new(
        &key,
        Profile::Phone,
        db.clone(),
        tx,
        stop,
        listening,
        Arc::new(SystemClock::utc()),
        crate::net::StreamControl::new(),
        crate::events::CoreEvents::new(),
    );
    // Nobody reads the queue: it fills.
    for i in 0..COMMAND_QUEUE_CAPACITY {
        handle.post_note(post(&format!("n{i}"))).await.unwrap();
    }
    let mut extra = Box::pin(handle.post_note(post("extra")));
    // Its note is committed first, then it waits for a place in the queue.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        assert!(extra.as_mut().now_or_never().is_none(), "must wait");
        let n = db.read(|s| s.count::<Note>()).await.unwrap().unwrap();
        if n == COMMAND_QUEUE_CAPACITY as u64 + 1 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the note was not stored"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(extra.as_mut().now_or_never().is_none(), "the queue is full");
    // Taking one command frees a place; every command arrives, in order.
    let mut published = Vec::new();
    match rx.recv().await {
        Some(LoopCommand::Publish(item)) => published.push(item.id()),
        other => panic!("expected a publish, got {other:?}"),
    }
    let posted = extra.await.unwrap();
    while let Ok(LoopCommand::Publish(item)) = rx.try_recv() {
        published.push(item.id());
    }
    assert_eq!(published.len(), COMMAND_QUEUE_CAPACITY + 1);
    assert_eq!(
        published.last().map(|id| id.to_string()),
        posted.item_id,
        "the waiting command came last"
    );
}
