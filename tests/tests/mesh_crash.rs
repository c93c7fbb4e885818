//! End to end over real `porfiry run` processes on loopback: a node stopped
//! in the middle of a catch-up — by SIGKILL, or cleanly by SIGTERM — loses
//! nothing it accepted and, once back, ends with every item exactly once.
//!
//! A (phone) holds `NOTES` notes of ~2 KB (several 1 MiB frames) that B
//! (server) has never seen; B is stopped as soon as its file holds the
//! first of them, restarted on the same port, and A's redial brings the
//! rest.

use std::collections::HashSet;

use porfiry_mesh::clock::now_ms;
use porfiry_mesh::sharing::post_note;
use porfiry_protocol::Audience;
use porfiry_storage::{Note, NoteSource, Sharing};
use porfiry_tests::mesh_node::{Exit, MeshNode, shared_items, wait_for};

/// Notes A holds: ~8 MB, about eight full frames, so stopping B when the
/// first frame is committed lands well inside the catch-up.
const NOTES: usize = 4_000;

/// Two nodes: A with `NOTES` notes B lacks, B a friend of A that listens.
fn setup() -> (MeshNode, MeshNode) {
    let a = MeshNode::init("A");
    let mut b = MeshNode::init("B");
    let store = a.store();
    let key = a.key();
    let filler = "lorem ipsum ".repeat(170);
    store
        .transaction(|s| {
            for i in 0..NOTES {
                post_note(
                    s,
                    &key,
                    &format!("bulk {i} {filler}"),
                    Sharing::Shared(Audience::Friends),
                    NoteSource::Cli,
                    now_ms(),
                )
                .map_err(|e| porfiry_storage::StorageError::Invalid {
                    what: "post".into(),
                    reason: e.to_string(),
                })?;
            }
            Ok(())
        })
        .unwrap();
    b.befriend(&a, false, &[]);
    b.start_server(0);
    a.befriend(&b, true, &[]);
    (a, b)
}

/// Starts A, waits until B's file holds at least one of A's items, then
/// stops B with `stop`; returns how B ended and how many items it held.
fn stop_mid_sync(
    a: &mut MeshNode,
    b: &mut MeshNode,
    stop: fn(&mut MeshNode) -> Exit,
) -> (Exit, u64) {
    let store = b.store();
    a.start_phone();
    let mut count = 0;
    wait_for("B to commit the first items", || {
        count = shared_items(&store);
        count > 0
    });
    let exit = stop(b);
    let held = shared_items(&store);
    assert!(
        held < NOTES as u64,
        "B was stopped after the catch-up ended ({held} items): nothing was interrupted"
    );
    eprintln!("B held {held} of {NOTES} items when stopped");
    (exit, held)
}

/// B's file is sound and every item it holds came with its merged note.
fn consistent(b: &MeshNode, a: &MeshNode) -> usize {
    let store = b.store();
    store.check_integrity().unwrap();
    let notes = b.notes_from(a);
    assert_eq!(
        shared_items(&store) as usize,
        notes.len(),
        "an item without its note, or the reverse"
    );
    assert_eq!(store.count::<Note>().unwrap() as usize, notes.len());
    let ids: HashSet<_> = notes
        .iter()
        .map(|n| n.row.origin_item_id.unwrap())
        .collect();
    assert_eq!(ids.len(), notes.len());
    notes.len()
}

/// Restarts B on its old port and waits for the rest; checks exactly once.
fn restart_and_finish(a: &MeshNode, b: &mut MeshNode) {
    let port: u16 = b
        .address
        .as_deref()
        .and_then(|addr| addr.split("/tcp/").nth(1))
        .and_then(|rest| rest.split('/').next())
        .and_then(|p| p.parse().ok())
        .expect("B's port");
    b.start_server(port);
    wait_for("B to hold every note after the restart", || {
        b.notes_from(a).len() >= NOTES
    });
    assert_eq!(consistent(b, a), NOTES);
    let texts: HashSet<String> = b.notes_from(a).into_iter().map(|n| n.row.text).collect();
    assert_eq!(texts.len(), NOTES, "nothing doubled");
}

#[test]
fn sigkill_in_the_middle_of_a_catch_up_loses_and_doubles_nothing() {
    let (mut a, mut b) = setup();
    let (exit, held) = stop_mid_sync(&mut a, &mut b, MeshNode::kill);
    assert!(!exit.status.success(), "killed, not exited");
    assert_eq!(consistent(&b, &a) as u64, held);
    restart_and_finish(&a, &mut b);
}

#[test]
fn sigterm_in_the_middle_of_a_catch_up_commits_all_it_accepted() {
    let (mut a, mut b) = setup();
    let (exit, held) = stop_mid_sync(&mut a, &mut b, MeshNode::terminate);
    assert!(exit.status.success(), "clean exit: {}", exit.stderr);
    assert_eq!(
        exit.stdout.last().map(String::as_str),
        // The engine counts the nodes' address items too.
        Some(format!("stopped: {} items held", b.item_count()).as_str()),
        "everything the engine held is in the file"
    );
    assert_eq!(consistent(&b, &a) as u64, held);
    restart_and_finish(&a, &mut b);
}
