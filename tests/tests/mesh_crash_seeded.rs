//! End to end: SIGKILL at seeded random points of catch-ups (issue 46 §3).
//! A (server) keeps growing; B (phone, the one killed) catches up with it
//! `KILLS` times and is killed each time once its file holds a number of
//! the new items drawn from a seeded stream. After every kill B's file
//! passes `PRAGMA integrity_check`, every item B holds has its merged note
//! and none is doubled, and B never holds fewer items than it had committed
//! before (nothing acknowledged is lost). At the end B, left running,
//! holds everything exactly once.

use std::collections::HashSet;

use porfiry_mesh::clock::now_ms;
use porfiry_mesh::sharing::post_note;
use porfiry_protocol::Audience;
use porfiry_storage::{Note, NoteSource, Sharing, StorageError};
use porfiry_tests::mesh_node::{MeshNode, shared_items, wait_for};
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

/// Kills, each in a different catch-up.
const KILLS: usize = 50;
/// Notes A adds before each catch-up (about 2 KB each, so a catch-up is
/// several commits and a kill can land between them): 50 × 400 notes is
/// 40 MB by the end, a family's years of notes.
const PER_ROUND: usize = 400;
/// The stream of kill points; a failure names the seed and round.
const SEED: u64 = 46;

fn add_notes(a: &MeshNode, round: usize) {
    let store = a.store();
    let key = a.key();
    let filler = "lorem ipsum ".repeat(170);
    store
        .transaction(|s| {
            for i in 0..PER_ROUND {
                post_note(
                    s,
                    &key,
                    &format!("r{round} n{i} {filler}"),
                    Sharing::Shared(Audience::Friends),
                    NoteSource::Cli,
                    now_ms(),
                )
                .map_err(|e| StorageError::Invalid {
                    what: "post".into(),
                    reason: e.to_string(),
                })?;
            }
            Ok(())
        })
        .unwrap();
}

/// B's file is sound, every item it holds came with its note, none twice;
/// returns how many it holds.
fn consistent(b: &MeshNode, a: &MeshNode, round: usize) -> u64 {
    let store = b.store();
    store
        .check_integrity()
        .unwrap_or_else(|e| panic!("seed {SEED} round {round}: {e}"));
    let notes = b.notes_from(a);
    let held = shared_items(&store);
    assert_eq!(
        held as usize,
        notes.len(),
        "seed {SEED} round {round}: item without note"
    );
    assert_eq!(store.count::<Note>().unwrap() as usize, notes.len());
    let ids: HashSet<_> = notes.iter().map(|n| n.row.origin_item_id).collect();
    assert_eq!(ids.len(), notes.len(), "seed {SEED} round {round}: doubled");
    held
}

#[test]
fn fifty_seeded_kills_mid_catch_up_lose_and_double_nothing() {
    let mut a = MeshNode::init("A");
    let mut b = MeshNode::init("B");
    a.befriend(&b, false, &[]);
    a.start_server(0);
    b.befriend(&a, true, &[]);
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let mut held = 0u64;
    let mut interrupted = 0;
    for round in 0..KILLS {
        add_notes(&a, round);
        let goal = ((round + 1) * PER_ROUND) as u64;
        let kill_at = held + 1 + rng.next_u64() % PER_ROUND as u64;
        let store = b.store();
        b.start_phone();
        wait_for(
            &format!("round {round}: B to commit {kill_at} items"),
            || shared_items(&store) >= kill_at,
        );
        b.kill();
        let now = consistent(&b, &a, round);
        assert!(
            now >= held,
            "seed {SEED} round {round}: {now} < {held} committed before"
        );
        if now < goal {
            interrupted += 1;
        }
        held = now;
    }
    eprintln!("{interrupted} of {KILLS} kills landed inside a catch-up");
    // Not a vacuous test: a good share of the kills cut a catch-up. Where
    // a kill lands depends on how the receiver batches its commits (a
    // round that one transaction stores whole cannot be cut), which
    // changes with the receive path's scheduling: 17 and 23 of 50 in two
    // runs since friends' frames are taken in turn (at least 25 before).
    assert!(
        interrupted >= KILLS / 5,
        "too few kills landed mid-catch-up: {interrupted} of {KILLS}"
    );
    b.start_phone();
    let all = (KILLS * PER_ROUND) as u64;
    let store = b.store();
    wait_for("B to hold everything", || shared_items(&store) >= all);
    assert_eq!(consistent(&b, &a, KILLS), all);
    b.terminate();
    a.terminate();
}
