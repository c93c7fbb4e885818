//! End to end over real `porfiry run` processes on loopback: nodes that were
//! away get everything they missed, exactly once.
//!
//! ```text
//!   A (phone) ──► B (server) ◄── C (server)      (A and C are not friends)
//! ```
//!
//! C is stopped while A posts 1,000 public notes (a few through the CLI, the
//! rest through the same library call the CLI makes, written into A's file
//! while A's daemon runs); when C comes back, B's catch-up brings all of
//! them, none twice. A note posted while A itself is stopped leaves when A
//! starts again.

use std::collections::HashSet;

use porfiry_mesh::clock::now_ms;
use porfiry_mesh::sharing::post_note;
use porfiry_protocol::Audience;
use porfiry_storage::{NoteSource, Sharing};
use porfiry_tests::mesh_node::{MeshNode, shared_items, wait_for};

/// Notes A posts while C is away.
const MISSED: usize = 1_000;

/// Checks `n` holds exactly `expected` notes from `a`, one item each, no
/// repeats, in a sound file.
fn exactly_once(n: &MeshNode, a: &MeshNode, expected: usize) {
    let notes = n.notes_from(a);
    assert_eq!(notes.len(), expected, "{}: notes from A", n.name);
    let texts: HashSet<&str> = notes.iter().map(|n| n.row.text.as_str()).collect();
    assert_eq!(texts.len(), expected, "{}: a note arrived twice", n.name);
    let ids: HashSet<_> = notes
        .iter()
        .map(|n| n.row.origin_item_id.unwrap())
        .collect();
    assert_eq!(ids.len(), expected);
    let store = n.store();
    assert_eq!(shared_items(&store) as usize, expected, "{}: items", n.name);
    for id in ids {
        assert!(store.has_item(&id).unwrap());
    }
    store.check_integrity().unwrap();
}

#[test]
fn a_node_that_was_away_gets_every_missed_note_once() {
    let mut a = MeshNode::init("A");
    let mut b = MeshNode::init("B");
    let mut c = MeshNode::init("C");
    b.befriend(&a, false, &[]);
    b.befriend(&c, false, &[]);
    b.start_server(0);
    c.befriend(&b, true, &[]);
    c.start_server(0);
    a.befriend(&b, true, &[]);
    a.start_phone();
    b.wait_logged(&["friend connected", &a.peer_id]);
    b.wait_logged(&["friend connected", &c.peer_id]);

    a.post("public", "warm-up");
    wait_for("C to get the warm-up note", || c.has_note(&a, "warm-up"));

    // C stops cleanly: it says how many items it held, and its file holds
    // exactly those.
    let exit = c.terminate();
    assert!(exit.status.success(), "C: {}", exit.stderr);
    let held = exit.stdout.last().cloned().unwrap_or_default();
    assert_eq!(held, format!("stopped: {} items held", c.item_count()));
    c.store().check_integrity().unwrap();

    // A posts 1,000 notes while C is away and A's daemon runs.
    a.post("public", "cli note 1");
    a.post("public", "cli note 2");
    {
        let store = a.store();
        let key = a.key();
        for i in 2..MISSED {
            post_note(
                &store,
                &key,
                &format!("missed note {i} #catchup"),
                Sharing::Shared(Audience::Public),
                NoteSource::Cli,
                now_ms(),
            )
            .unwrap();
        }
    }
    wait_for("B to get all 1,001 notes live", || {
        b.notes_from(&a).len() == MISSED + 1
    });

    // A stops; a note posted now leaves when A starts again.
    assert!(a.terminate().status.success());
    a.post("public", "posted while A was stopped");

    c.start_server(0);
    wait_for("C to catch up on 1,001 notes", || {
        c.notes_from(&a).len() > MISSED
    });
    a.start_phone();
    wait_for("C to get the note A posted while stopped", || {
        c.has_note(&a, "posted while A was stopped")
    });
    b.wait_logged(&["catch-up finished", &c.peer_id]);

    exactly_once(&b, &a, MISSED + 2);
    exactly_once(&c, &a, MISSED + 2);
    for n in [&mut a, &mut b, &mut c] {
        let exit = n.interrupt();
        assert!(exit.status.success(), "{}: {}", n.name, exit.stderr);
    }
    // After a clean stop, each file still holds the same.
    exactly_once(&c, &a, MISSED + 2);
}
