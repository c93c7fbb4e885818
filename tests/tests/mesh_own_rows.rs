//! End to end over real `porfiry run` processes on loopback: our own items
//! that another process wrote into the running daemon's file are decoded but
//! not verified again (`VerifiedItem::vouch_own`). An own row the checks
//! refuse (expired) is not published; one whose signature is broken goes out
//! and the friend refuses it, as catch-up would serve it; neither stops
//! either daemon or the link, and a note posted after them still arrives.
//!
//! ```text
//!   A (server) ◄── B (server)     rows written into A's file by the test
//! ```

use porfiry_mesh::sharing::item_rows::stored_record;
use porfiry_mesh::sharing::publish::note_draft;
use porfiry_protocol::engine::PUSH_BATCH_FULL;
use porfiry_protocol::item::envelope::encode_envelope;
use porfiry_protocol::{Audience, ItemId, NodeKey, VerifiedItem, sign};
use porfiry_storage::{Note, Store, StoredItem};
use porfiry_tests::mesh_node::{MeshNode, wait_for};

/// A's public note `text`, written `age_ms` ago, expiring `expires_after_ms`
/// after that if given.
fn signed(key: &NodeKey, text: &str, age_ms: u64, expires_after_ms: Option<u64>) -> VerifiedItem {
    let created = porfiry_mesh::clock::now_ms() - age_ms;
    let mut draft = note_draft(
        &Note {
            text: text.into(),
            ..Default::default()
        },
        &Audience::Public,
        created,
    );
    draft.expires_ms = expires_after_ms.map(|d| created + d);
    sign(key, &draft).expect("signs")
}

/// Two running servers, friends, B dialling A, connected: A writes the
/// rows, B receives them.
fn connected_servers() -> (MeshNode, MeshNode) {
    let mut a = MeshNode::init("A");
    let mut b = MeshNode::init("B");
    a.befriend(&b, false, &[]);
    a.start_server(0);
    b.befriend(&a, true, &[]);
    b.start_server(0);
    a.wait_logged(&["friend connected", &b.peer_id]);
    (a, b)
}

/// Writes `item` into `store` as another process of its author would.
fn write(store: &Store, item: &VerifiedItem) {
    let stored = stored_record(item, item.max_hops(), None);
    assert_eq!(store.insert_items(&[stored]).expect("stores"), 1);
}

#[test]
fn refused_and_broken_own_rows_cost_nothing_but_themselves() {
    let (mut a, mut b) = connected_servers();

    let key = a.key();
    let store = a.store();
    // Written 10 s ago (inside the daemon's look-back), expired 5 s ago:
    // refused by the checks.
    let expired = signed(&key, "E: expired before it was read", 10_000, Some(5_000));
    write(&store, &expired);
    // The payload of one note under the signature of another: vouched for,
    // sent, refused by the friend.
    let x = signed(&key, "X: payload kept", 0, None);
    let y = signed(&key, "Y: signature taken", 0, None);
    let bad = encode_envelope(x.payload_bytes(), y.signature_bytes()).expect("envelope");
    let broken = VerifiedItem::vouch_own(&key, &[&bad], 0)
        .pop()
        .expect("one result")
        .expect("vouched for");
    write(&store, &broken);

    a.wait_logged(&["own stored item refused", &expired.id().to_string()]);
    b.wait_logged(&["rejected an invalid item", "signature does not verify"]);

    let after = a.post("public", "Z: after the bad rows");
    assert!(!after.is_empty());
    wait_for("B to get the note posted after", || {
        b.has_note(&a, "Z: after the bad rows")
    });
    let held = |id: ItemId| b.store().get_item(&id).expect("reads").is_some();
    assert!(!held(expired.id()), "the expired row never left A");
    assert!(!held(broken.id()), "B refused the broken row");
    assert!(!b.has_note(&a, "X: payload kept"));
    assert!(a.is_running() && b.is_running());
}

/// Bytes of each note's text in the burst: with `2 × PUSH_BATCH_FULL + 1`
/// notes, about 33 MB, the size of a family server's notes.
const BURST_NOTE_BYTES: usize = 4_000;

#[test]
fn a_burst_past_two_push_batches_written_at_once_arrives_whole() {
    let (mut a, mut b) = connected_servers();

    let n = 2 * PUSH_BATCH_FULL + 1;
    let key = a.key();
    let filler = "x".repeat(BURST_NOTE_BYTES);
    let rows: Vec<StoredItem> = (0..n)
        .map(|i| {
            let item = signed(&key, &format!("burst {i}: {filler}"), 0, None);
            stored_record(&item, item.max_hops(), None)
        })
        .collect();
    // One transaction, as a bulk import from another process would write.
    let store = a.store();
    store
        .transaction(|s| {
            for page in rows.chunks(porfiry_storage::limits::MAX_ITEMS_PER_BATCH) {
                s.insert_items(page)?;
            }
            Ok(())
        })
        .expect("written");
    let bytes: usize = rows.iter().map(|r| r.payload.len()).sum();
    assert!(bytes > 32 * 1024 * 1024, "{bytes} bytes");

    wait_for("B to hold every note of the burst", || {
        b.shared_item_count() == n as u64
    });
    assert_eq!(b.notes_from(&a).len(), n, "each merged once");
    assert!(a.is_running() && b.is_running());
}
