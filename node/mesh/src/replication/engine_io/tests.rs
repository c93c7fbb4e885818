//! Tests of `super`: real engines, real SQLite files, real wire frames —
//! two nodes wired back to back with no network, on a fake clock.

use porfiry_protocol::engine::{
    DeleteReason, Engine, EngineConfig, Inbound, Input, Output, PUSH_BATCH_DELAY_MS,
};
use porfiry_protocol::wire::{self, Announce, WireMessage};
use porfiry_protocol::{Audience, Body, NodeKey, PayloadDraft, Retraction, VerifiedItem, sign};
use porfiry_storage::{DB_FILE_NAME, Note, NoteSource, Sharing, Store};

use super::*;
use crate::sharing::publish::post_note;

/// All of `outputs` in one turn, as the writer does when no other write
/// waits (the turns themselves are tested in `turn_tests.rs`).
pub(super) fn carry_out(
    store: &Store,
    local: &str,
    outputs: Vec<Output>,
    sink: &mut dyn FrameSink,
    counters: &mut Counters,
) -> Result<Option<u64>, StorageError> {
    let mut outputs = outputs.into();
    let wake = carry_out_turn(store, local, &mut outputs, sink, counters, &|| false)?;
    assert!(outputs.is_empty(), "one turn when nobody waits");
    Ok(wake)
}

#[derive(Default)]
struct Frames(Vec<(String, Vec<u8>)>, Vec<crate::net::SendTag>);

impl FrameSink for Frames {
    fn send_frame(&mut self, peer: &str, frame: Vec<u8>) {
        self.0.push((peer.to_owned(), frame));
    }

    fn send_tracked(&mut self, peer: &str, frames: Vec<Vec<u8>>, tag: crate::net::SendTag) {
        self.1.push(tag);
        for frame in frames {
            self.0.push((peer.to_owned(), frame));
        }
    }
}

struct Side {
    _dir: tempfile::TempDir,
    key: NodeKey,
    local: String,
    store: Store,
    engine: Engine,
    frames: Frames,
    counters: Counters,
}

impl Side {
    fn new(seed: u8) -> Side {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::create(dir.path().join(DB_FILE_NAME)).unwrap();
        let key = NodeKey::from_seed([seed; 32]);
        let local = key.peer_id().to_string();
        Side {
            _dir: dir,
            engine: Engine::new(EngineConfig::new(local.clone()), []),
            key,
            local,
            store,
            frames: Frames::default(),
            counters: Counters::default(),
        }
    }

    fn feed(&mut self, now: u64, input: Input) -> Option<u64> {
        let outputs = self.engine.handle(now, input);
        carry_out(
            &self.store,
            &self.local,
            outputs,
            &mut self.frames,
            &mut self.counters,
        )
        .unwrap()
    }

    fn post(&mut self, now: u64, audience: Audience, text: &str) -> VerifiedItem {
        let p = post_note(
            &self.store,
            &self.key,
            text,
            Sharing::Shared(audience),
            NoteSource::Cli,
            now,
        )
        .unwrap();
        let item = p.item.unwrap();
        self.feed(now, Input::Publish { item: item.clone() });
        item
    }
}

/// Delivers frames both ways (decoded and verified as the daemon does)
/// until none are left; returns how many travelled.
fn pump(a: &mut Side, b: &mut Side, now: u64) -> usize {
    let mut n = 0;
    loop {
        let moved = deliver(a, b, now) + deliver(b, a, now);
        if moved == 0 {
            return n;
        }
        n += moved;
    }
}

/// Delivers `from`'s queued frames to `to`, then tells `from` its tracked
/// chunks drained (as the driver's `FrameDone` does).
fn deliver(from: &mut Side, to: &mut Side, now: u64) -> usize {
    let frames = std::mem::take(&mut from.frames.0);
    let tags = std::mem::take(&mut from.frames.1);
    for (peer, frame) in &frames {
        assert_eq!(peer, &to.local);
        let message = Inbound::from_wire(wire::decode(frame).unwrap(), now);
        to.feed(
            now,
            Input::Received {
                peer: from.local.clone(),
                message,
            },
        );
    }
    for tag in &tags {
        from.feed(
            now,
            crate::replication::chunks::drained(to.local.clone(), *tag, true),
        );
    }
    frames.len() + tags.len()
}

fn connect(a: &mut Side, b: &mut Side, now: u64) {
    let (pa, pb) = (a.local.clone(), b.local.clone());
    a.feed(
        now,
        Input::PeerConnected {
            peer: pb,
            groups: vec![],
        },
    );
    b.feed(
        now,
        Input::PeerConnected {
            peer: pa,
            groups: vec![],
        },
    );
}

#[test]
fn a_live_note_is_sent_from_storage_stored_and_merged_at_the_friend() {
    let (mut a, mut b) = (Side::new(1), Side::new(2));
    connect(&mut a, &mut b, 1_000);
    pump(&mut a, &mut b, 1_000);
    let item = a.post(2_000, Audience::Public, "live #news");
    let wake = a.feed(2_000 + PUSH_BATCH_DELAY_MS, Input::Tick);
    assert!(pump(&mut a, &mut b, 2_200) > 0);
    assert!(wake.is_some(), "the engine keeps a timer (resync)");

    let rec = b.store.get_item(&item.id()).unwrap().expect("stored at B");
    assert_eq!(rec.record.received_from.as_deref(), Some(a.local.as_str()));
    assert_eq!(rec.record.hops_left, item.max_hops() - 1);
    assert_eq!(rec.payload, item.envelope_bytes(), "the exact envelope");
    let notes = b.store.notes_recent(10).unwrap();
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0].row.text, "live #news");
    assert_eq!(notes[0].row.origin_item_id, Some(item.id()));
    assert_eq!(b.counters.accepted, 1);
    assert_eq!(
        a.store.count::<Note>().unwrap(),
        1,
        "A's own item is not merged again"
    );
}

#[test]
fn catch_up_brings_every_missed_note_once() {
    let (mut a, mut b) = (Side::new(3), Side::new(4));
    for i in 0..300 {
        a.post(10_000 + i, Audience::Friends, &format!("missed {i}"));
    }
    connect(&mut a, &mut b, 20_000);
    pump(&mut a, &mut b, 20_000);
    assert_eq!(b.store.item_count().unwrap(), 300);
    assert_eq!(b.store.count::<Note>().unwrap(), 300);
    assert_eq!(b.counters.accepted, 300);
    // Reconnecting finds nothing new.
    let (pa, pb) = (a.local.clone(), b.local.clone());
    a.feed(21_000, Input::PeerDisconnected { peer: pb });
    b.feed(21_000, Input::PeerDisconnected { peer: pa });
    connect(&mut a, &mut b, 22_000);
    pump(&mut a, &mut b, 22_000);
    assert_eq!(b.store.item_count().unwrap(), 300);
    assert_eq!(b.counters.duplicates, 0);
}

#[test]
fn a_retraction_removes_the_item_and_its_merged_row() {
    let (mut a, mut b) = (Side::new(5), Side::new(6));
    connect(&mut a, &mut b, 1_000);
    pump(&mut a, &mut b, 1_000);
    let note = a.post(2_000, Audience::Public, "oops");
    a.feed(2_200, Input::Tick);
    pump(&mut a, &mut b, 2_200);
    assert_eq!(b.store.count::<Note>().unwrap(), 1);

    let retraction = sign(
        &a.key,
        &PayloadDraft {
            created_ms: 3_000,
            audience: Audience::Public,
            max_hops: note.max_hops(),
            expires_ms: None,
            replaces: None,
            body: Body::Retraction(Retraction { target: note.id() }),
        },
    )
    .unwrap();
    // Stored by its publisher first, as every publisher on a node does.
    a.store
        .insert_items(&[stored_record(&retraction, retraction.max_hops(), None)])
        .unwrap();
    a.feed(3_000, Input::Publish { item: retraction });
    a.feed(3_200, Input::Tick);
    pump(&mut a, &mut b, 3_200);
    assert!(b.store.get_item(&note.id()).unwrap().is_none());
    assert_eq!(
        b.store.count::<Note>().unwrap(),
        0,
        "the merged note is gone too"
    );
    assert!(b.store.is_retracted(&note.id(), &a.local).unwrap());
}

#[test]
fn route_updates_and_deletes_are_written_and_expiry_keeps_the_note() {
    let (mut a, mut b) = (Side::new(7), Side::new(8));
    connect(&mut a, &mut b, 1_000);
    pump(&mut a, &mut b, 1_000);
    let item = a.post(2_000, Audience::Public, "keep me");
    a.feed(2_200, Input::Tick);
    pump(&mut a, &mut b, 2_200);

    let mut sink = Frames::default();
    let mut c = Counters::default();
    let other = NodeKey::from_seed([9; 32]).peer_id().to_string();
    let outputs = vec![
        Output::UpdateRoute {
            id: item.id(),
            received_from: other.clone(),
            hops_left: 99,
        },
        Output::WakeAt { at_ms: 5 },
        Output::WakeAt { at_ms: 7 },
    ];
    let wake = carry_out(&b.store, &b.local, outputs, &mut sink, &mut c).unwrap();
    assert_eq!(wake, Some(7), "the last timer wins");
    let rec = b.store.get_item(&item.id()).unwrap().unwrap();
    assert_eq!(rec.record.received_from.as_deref(), Some(other.as_str()));
    assert_eq!(
        rec.record.hops_left,
        item.max_hops(),
        "capped at the author's limit"
    );

    let outputs = vec![Output::Delete {
        id: item.id(),
        reason: DeleteReason::Expired,
    }];
    carry_out(&b.store, &b.local, outputs, &mut sink, &mut c).unwrap();
    assert!(b.store.get_item(&item.id()).unwrap().is_none());
    assert_eq!(
        b.store.count::<Note>().unwrap(),
        1,
        "an expired item leaves the note"
    );
}

#[test]
fn send_items_skips_what_storage_no_longer_holds_and_closes_the_session() {
    let (mut a, _b) = (Side::new(10), Side::new(11));
    let kept = a.post(1_000, Audience::Public, "kept");
    let gone = a.post(1_001, Audience::Public, "gone");
    a.store.delete_item(&gone.id()).unwrap();
    let mut sink = Frames::default();
    let mut c = Counters::default();
    let outputs = vec![Output::SendItems {
        peer: "peer".into(),
        session: Some(4),
        items: vec![
            Announce {
                id: kept.id(),
                hops: 2,
            },
            Announce {
                id: gone.id(),
                hops: 2,
            },
        ],
    }];
    carry_out(&a.store, &a.local, outputs, &mut sink, &mut c).unwrap();
    let messages: Vec<WireMessage> = sink
        .0
        .iter()
        .map(|(_, f)| wire::decode(f).unwrap())
        .collect();
    assert_eq!(c.frames_sent, 2);
    let bytes: usize = sink.0.iter().map(|(_, f)| f.len()).sum();
    assert_eq!(c.bytes_sent, bytes as u64);
    match &messages[..] {
        [
            WireMessage::Items {
                session: Some(4),
                items,
            },
            WireMessage::SyncDone {
                session: 4,
                sent: 1,
            },
        ] => {
            assert_eq!(items.len(), 1);
            assert_eq!(items[0].envelope, kept.envelope_bytes());
            assert_eq!(items[0].hops, 2);
        }
        other => panic!("unexpected frames {other:?}"),
    }
}

#[test]
fn a_tampered_envelope_is_counted_and_stores_nothing() {
    let (mut a, mut b) = (Side::new(12), Side::new(13));
    connect(&mut a, &mut b, 1_000);
    pump(&mut a, &mut b, 1_000);
    let item = a.post(2_000, Audience::Public, "genuine text");
    let mut env = item.envelope_bytes().to_vec();
    let at = env.windows(7).position(|w| w == b"genuine").unwrap();
    env[at] = b'G';
    let frame = wire::encode(&WireMessage::Items {
        session: None,
        items: vec![wire::WireItem {
            hops: 3,
            envelope: env,
        }],
    })
    .unwrap();
    let message = Inbound::from_wire(wire::decode(&frame).unwrap(), 2_000);
    b.feed(
        2_000,
        Input::Received {
            peer: a.local.clone(),
            message,
        },
    );
    assert_eq!(b.counters.rejected, 1);
    assert_eq!(b.store.item_count().unwrap(), 0);
    assert_eq!(b.store.count::<Note>().unwrap(), 0);
}

#[test]
fn one_batch_stores_every_item_merges_good_rows_and_routes_after_the_store() {
    let b = Side::new(14);
    let friend = Side::new(15);
    let other = NodeKey::from_seed([16; 32]).peer_id().to_string();
    let signed = |n: u64, text: &str| {
        sign(
            &friend.key,
            &PayloadDraft {
                created_ms: 1_000 + n,
                audience: Audience::Public,
                max_hops: 4,
                expires_ms: None,
                replaces: None,
                body: Body::Note(porfiry_protocol::Note::by_user(text)),
            },
        )
        .unwrap()
    };
    let items = [signed(1, "one"), signed(2, "   "), signed(3, "three")];
    let mut outputs: Vec<Output> = items
        .iter()
        .map(|item| Output::Store {
            item: item.clone(),
            received_from: Some(friend.local.clone()),
            hops_left: 1,
        })
        .collect();
    outputs.push(Output::UpdateRoute {
        id: items[0].id(),
        received_from: other.clone(),
        hops_left: 3,
    });
    outputs.push(Output::UpdateRoute {
        id: porfiry_protocol::ItemId([77; 32]),
        received_from: other.clone(),
        hops_left: 3,
    });
    let mut sink = Frames::default();
    let mut c = Counters::default();
    carry_out(&b.store, &b.local, outputs, &mut sink, &mut c).unwrap();

    assert_eq!(
        b.store.item_count().unwrap(),
        3,
        "the blank note travels on"
    );
    let notes = b.store.notes_recent(10).unwrap();
    let mut texts: Vec<&str> = notes.iter().map(|n| n.row.text.as_str()).collect();
    texts.sort_unstable();
    assert_eq!(texts, ["one", "three"], "only the blank row is refused");
    assert!(
        notes
            .iter()
            .all(|n| n.row.origin_author.as_deref() == Some(friend.local.as_str()))
    );
    let routed = b.store.get_item(&items[0].id()).unwrap().unwrap();
    assert_eq!(routed.record.received_from.as_deref(), Some(other.as_str()));
    assert_eq!(
        routed.record.hops_left, 3,
        "the route update came after the store"
    );
    let kept = b.store.get_item(&items[2].id()).unwrap().unwrap();
    assert_eq!(
        kept.record.received_from.as_deref(),
        Some(friend.local.as_str())
    );
    assert_eq!(kept.record.hops_left, 1);
}

#[test]
fn events_between_writes_do_not_split_the_transaction() {
    let mut a = Side::new(17);
    let b = Side::new(18);
    let first = a.post(1_000, Audience::Public, "first");
    let second = a.post(1_001, Audience::Public, "second");
    let store = |item: &VerifiedItem| Output::Store {
        item: item.clone(),
        received_from: Some(a.local.clone()),
        hops_left: 1,
    };
    let accepted = |item: &VerifiedItem| {
        Output::Event(Event::Accepted {
            id: item.id(),
            from: Some(a.local.clone()),
        })
    };
    let outputs = vec![
        store(&first),
        accepted(&first),
        Output::WakeAt { at_ms: 9 },
        store(&second),
        accepted(&second),
        // A write the file refuses, later in the same run.
        Output::UpdateRoute {
            id: first.id(),
            received_from: "not a peer id".into(),
            hops_left: 1,
        },
    ];
    let mut sink = Frames::default();
    let mut c = Counters::default();
    carry_out(&b.store, &b.local, outputs, &mut sink, &mut c).unwrap_err();
    assert_eq!(b.store.item_count().unwrap(), 0, "all of the run or none");
    assert_eq!(b.store.count::<Note>().unwrap(), 0);
    assert_eq!(c.accepted, 2, "the events were still counted");
}

#[test]
fn our_own_published_items_are_not_written_again() {
    let mut a = Side::new(19);
    let posted = a.post(1_000, Audience::Public, "stored by its publisher");
    assert_eq!(a.store.item_count().unwrap(), 1);
    // An item the engine is handed but no publisher stored: the node
    // writes none of its own, so the file shows whether it skipped it.
    let unstored = sign(
        &a.key,
        &PayloadDraft {
            created_ms: 1_001,
            audience: Audience::Public,
            max_hops: 4,
            expires_ms: None,
            replaces: None,
            body: Body::Note(porfiry_protocol::Note::by_user("never stored")),
        },
    )
    .unwrap();
    let outputs = a.engine.handle(
        1_001,
        Input::Publish {
            item: unstored.clone(),
        },
    );
    assert!(
        outputs
            .iter()
            .any(|o| matches!(o, Output::Store { received_from: None, item, .. } if item.id() == unstored.id())),
        "the engine still asks its drivers to store it"
    );
    carry_out(&a.store, &a.local, outputs, &mut a.frames, &mut a.counters).unwrap();
    assert_eq!(a.store.item_count().unwrap(), 1, "not written by the node");
    assert!(a.store.get_item(&posted.id()).unwrap().is_some());
    assert!(a.store.get_item(&unstored.id()).unwrap().is_none());
}

#[test]
fn pruned_memory_versions_offered_again_are_named_for_the_engine_to_forget() {
    let (phone, mut server) = (Side::new(21), Side::new(22));
    let exec = |side: &Side, sql: &str| {
        rusqlite::Connection::open(side._dir.path().join(DB_FILE_NAME))
            .unwrap()
            .execute_batch(sql)
            .unwrap();
    };
    exec(
        &phone,
        "INSERT INTO diary_entries (text, created, updated) VALUES ('to forget', 1, 1)",
    );
    let mut versions = crate::devices::publish::publish_mind(&phone.store, &phone.key, 1_000)
        .unwrap()
        .versions;
    exec(&phone, "DELETE FROM diary_entries");
    versions.extend(
        crate::devices::publish::publish_mind(&phone.store, &phone.key, 2_000)
            .unwrap()
            .versions,
    );
    assert_eq!(versions.len(), 2);
    let offer = |versions: &[VerifiedItem]| -> Vec<Output> {
        versions
            .iter()
            .map(|item| Output::Store {
                item: item.clone(),
                received_from: Some(phone.local.clone()),
                hops_left: 0,
            })
            .collect()
    };
    let deliver = |server: &mut Side| {
        carry_out(
            &server.store,
            &server.local,
            offer(&versions),
            &mut Frames::default(),
            &mut server.counters,
        )
        .unwrap();
    };
    deliver(&mut server);
    assert!(
        server.counters.refused_pruned.is_empty(),
        "first arrival kept"
    );

    // Past the deletion's time to live the server forgets both versions;
    // the phone, away all along, offers them again.
    let now = 2_000 + porfiry_protocol::mind::TOMBSTONE_TTL_MS;
    let mut after = None;
    while let Some(next) = server.store.prune_mind(now, after.as_ref()).unwrap().next {
        after = Some(next);
    }
    deliver(&mut server);
    let mut refused = server.counters.refused_pruned.clone();
    refused.sort();
    let mut expected: Vec<_> = versions.iter().map(VerifiedItem::id).collect();
    expected.sort();
    assert_eq!(refused, expected, "both named for Engine::forget");
    assert!(server.store.get_item(&versions[0].id()).unwrap().is_none());
}

#[test]
fn know_how_a_device_also_shares_with_friends_is_stored_but_not_merged_twice() {
    let server = Side::new(31);
    let phone = Side::new(32);
    let friend = Side::new(33);
    let link = porfiry_protocol::devices::LinkProposal::new(&phone.key, &server.local, 500)
        .unwrap()
        .countersign(&server.key)
        .unwrap();
    crate::devices::statements::store_link(&server.store, &server.key, link, 500).unwrap();
    let strategy = |key: &NodeKey, name: &str| {
        sign(
            key,
            &PayloadDraft {
                created_ms: 1_000,
                audience: Audience::Friends,
                max_hops: 1,
                expires_ms: None,
                replaces: None,
                body: Body::StagnationStrategy(porfiry_protocol::StagnationStrategy {
                    name: name.to_owned(),
                    class: "context_switch".to_owned(),
                    description: "walk away for a while".to_owned(),
                    steps: vec!["stand up".to_owned()],
                    cost: 1,
                    mechanism: None,
                }),
            },
        )
        .unwrap()
    };
    let items = [
        (strategy(&phone.key, "phone's walk"), phone.local.clone()),
        (strategy(&friend.key, "friend's walk"), friend.local.clone()),
    ];
    let outputs = items
        .iter()
        .map(|(item, from)| Output::Store {
            item: item.clone(),
            received_from: Some(from.clone()),
            hops_left: 0,
        })
        .collect();
    let mut c = Counters::default();
    carry_out(
        &server.store,
        &server.local,
        outputs,
        &mut Frames::default(),
        &mut c,
    )
    .unwrap();

    let names: Vec<String> = server
        .store
        .strategies_by_cost(Some("context_switch"))
        .unwrap()
        .into_iter()
        .filter(|s| s.row.origin_author.is_some())
        .map(|s| s.row.name)
        .collect();
    assert_eq!(
        names,
        ["friend's walk"],
        "the device's own comes as its memory record"
    );
    for (item, _) in &items {
        assert!(server.store.get_item(&item.id()).unwrap().is_some());
    }
}
