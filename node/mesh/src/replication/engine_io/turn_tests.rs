//! Tests of the turns (`carry_out_turn`, `carry_out_in_turns`): a run of
//! writes longer than [`WRITE_TURN_ITEMS`] is committed chunk by chunk
//! while another write waits, and a write queued behind a friend's frame
//! gets in after one chunk of it, not after the frame. Real SQLite files,
//! the real database actor; no clocks.

use std::sync::mpsc as std_mpsc;

use futures::FutureExt;
use porfiry_protocol::{Audience, Body, NodeKey, PayloadDraft, sign};
use porfiry_storage::{DB_FILE_NAME, Note};

use super::*;

/// Counts the frames handed to it.
#[derive(Default)]
struct Count(usize);

impl HeldFrames for Count {
    async fn send_held(&mut self) {}
}

impl FrameSink for Count {
    fn send_frame(&mut self, _: &str, _: Vec<u8>) {
        self.0 += 1;
    }

    fn send_tracked(&mut self, _: &str, frames: Vec<Vec<u8>>, _: crate::net::SendTag) {
        self.0 += frames.len();
    }
}

/// A friend's `n` public notes as the engine asks them stored, each
/// followed by its `Accepted` event (which must not count as a write).
fn received(friend: &NodeKey, from: usize, n: usize) -> Vec<Output> {
    let peer = friend.peer_id().to_string();
    let mut outputs = Vec::new();
    for i in from..from + n {
        let item = sign(
            friend,
            &PayloadDraft {
                created_ms: 1_000 + i as u64,
                audience: Audience::Public,
                max_hops: 4,
                expires_ms: None,
                replaces: None,
                body: Body::Note(porfiry_protocol::Note::by_user(format!("flood {i}"))),
            },
        )
        .unwrap();
        let id = item.id();
        outputs.push(Output::Store {
            item,
            received_from: Some(peer.clone()),
            hops_left: 1,
        });
        outputs.push(Output::Event(Event::Accepted {
            id,
            from: Some(peer.clone()),
        }));
    }
    outputs
}

fn local() -> String {
    NodeKey::from_seed([61; 32]).peer_id().to_string()
}

#[test]
fn a_run_past_a_chunk_is_committed_chunk_by_chunk_while_a_write_waits() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE_NAME);
    let store = Store::create(&path).unwrap();
    let other = Store::open(&path).unwrap();
    let friend = NodeKey::from_seed([62; 32]);
    let w = WRITE_TURN_ITEMS;
    // A chunk and one, a frame for the friend, then two chunks less one.
    let mut outputs = received(&friend, 0, w + 1);
    outputs.push(Output::Send {
        peer: friend.peer_id().to_string(),
        message: WireMessage::SyncDone {
            session: 1,
            sent: 0,
        },
    });
    outputs.extend(received(&friend, w + 1, 2 * w - 1));
    let total = 3 * w;
    let mut outputs: VecDeque<Output> = outputs.into();
    let mut sink = Count::default();
    let mut counters = Counters::default();
    // (items committed, as another connection sees them; frames sent)
    // after each turn, with a write always waiting.
    let mut seen = Vec::new();
    while !outputs.is_empty() {
        carry_out_turn(
            &store,
            &local(),
            &mut outputs,
            &mut sink,
            &mut counters,
            &|| true,
        )
        .unwrap();
        seen.push((other.item_count().unwrap() as usize, sink.0));
        assert!(seen.len() <= 8, "turns end");
    }
    assert_eq!(
        seen,
        [
            // One chunk, then the waiting write.
            (w, 0),
            // The item left before the frame, then the frame (a send,
            // which may have read pages, also lets a waiting write in).
            (w + 1, 1),
            // A chunk, and the rest.
            (2 * w + 1, 1),
            (total, 1),
        ]
    );
    assert_eq!(counters.accepted, total as u64, "every event counted once");
    assert_eq!(counters.merged_notes.len(), total, "every note merged once");
    assert_eq!(other.count::<Note>().unwrap(), total as u64);
}

#[test]
fn with_no_write_waiting_a_long_run_is_one_turn_and_one_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::create(dir.path().join(DB_FILE_NAME)).unwrap();
    let friend = NodeKey::from_seed([63; 32]);
    let n = 3 * WRITE_TURN_ITEMS + 7;
    let mut outputs = received(&friend, 0, n);
    // A write the file refuses at the end: all of the run or none.
    outputs.push(Output::UpdateRoute {
        id: porfiry_protocol::ItemId([9; 32]),
        received_from: "not a peer id".into(),
        hops_left: 1,
    });
    let mut outputs: VecDeque<Output> = outputs.into();
    let mut counters = Counters::default();
    let r = carry_out_turn(
        &store,
        &local(),
        &mut outputs,
        &mut Count::default(),
        &mut counters,
        &|| false,
    );
    assert!(r.is_err());
    assert_eq!(
        store.item_count().unwrap(),
        0,
        "one transaction, rolled back"
    );

    let mut outputs: VecDeque<Output> = received(&friend, 0, n).into();
    carry_out_turn(
        &store,
        &local(),
        &mut outputs,
        &mut Count::default(),
        &mut counters,
        &|| false,
    )
    .unwrap();
    assert!(outputs.is_empty(), "one turn");
    assert_eq!(store.item_count().unwrap(), n as u64);
}

#[tokio::test]
async fn a_write_queued_behind_a_friends_frame_gets_in_after_one_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::start(Store::create(dir.path().join(DB_FILE_NAME)).unwrap()).unwrap();
    let friend = NodeKey::from_seed([64; 32]);
    // About a flood frame of 500 notes, in chunks.
    let n = 3 * WRITE_TURN_ITEMS + 5;
    let outputs = received(&friend, 0, n);

    // Hold the writer so that the frame's first turn and the user's write
    // queue behind it in that order, as when a post arrives mid-frame.
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
    let me = local();
    let mut turns = Box::pin(carry_out_in_turns(
        &db,
        &me,
        outputs,
        Count::default(),
        Counters::default(),
    ));
    assert!(turns.as_mut().now_or_never().is_none(), "first turn queued");
    let mut post = Box::pin(db.write(|s| s.item_count()));
    assert!(post.as_mut().now_or_never().is_none(), "the post queued");
    release.send(()).unwrap();
    blocker.await.unwrap().unwrap();

    let (carried, seen) = tokio::join!(turns, post);
    let (result, counters) = carried.unwrap();
    assert_eq!(result.unwrap(), None, "no timer asked for");
    assert_eq!(
        seen.unwrap().unwrap(),
        WRITE_TURN_ITEMS as u64,
        "the post ran after one chunk of the frame"
    );
    assert_eq!(counters.merged_notes.len(), n);
    let held = db.read(|s| s.item_count()).await.unwrap().unwrap();
    assert_eq!(held, n as u64, "the rest of the frame followed");
}

/// Holds every frame, as the writer's sink does while the driver is full.
#[derive(Default)]
struct Holding(usize);

impl FrameSink for Holding {
    fn send_frame(&mut self, _: &str, _: Vec<u8>) {
        self.0 += 1;
    }

    fn send_tracked(&mut self, _: &str, frames: Vec<Vec<u8>>, _: crate::net::SendTag) {
        self.0 += frames.len();
    }

    fn holds_frames(&self) -> bool {
        self.0 > 0
    }
}

#[test]
fn a_frame_the_driver_had_no_room_for_ends_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::create(dir.path().join(DB_FILE_NAME)).unwrap();
    let friend = NodeKey::from_seed([65; 32]);
    let mut outputs: VecDeque<Output> = VecDeque::new();
    outputs.push_back(Output::Send {
        peer: friend.peer_id().to_string(),
        message: WireMessage::SyncDone {
            session: 1,
            sent: 0,
        },
    });
    outputs.extend(received(&friend, 0, 2));
    let mut sink = Holding::default();
    let mut counters = Counters::default();
    let turn = |outputs: &mut VecDeque<Output>, sink: &mut Holding, c: &mut Counters| {
        carry_out_turn(&store, &local(), outputs, sink, c, &|| false).unwrap()
    };
    turn(&mut outputs, &mut sink, &mut counters);
    assert_eq!(outputs.len(), 4, "the loop sends the held frame first");
    assert_eq!(store.item_count().unwrap(), 0);
    turn(&mut outputs, &mut sink, &mut counters);
    assert!(outputs.is_empty());
    assert_eq!(store.item_count().unwrap(), 2);
}
