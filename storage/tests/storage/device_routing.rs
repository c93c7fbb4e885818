//! The friend query and a person's devices: a `devices` item leaves this
//! node only for its devices (the SQL prefilter lets `devices` rows
//! through, `may_send` with the device book decides), never for a friend
//! that is not one, and nowhere without the book.

use porfiry_protocol::club::ClubBook;
use porfiry_protocol::devices::{DEVICES_MAX_HOPS, DeviceBook, LinkProposal};
use porfiry_protocol::{Audience, ItemId, ItemRecord, NodeKey, Note, PayloadDraft, sign};
use porfiry_storage::StoredItem;

use crate::temp_store;

fn key(n: u8) -> NodeKey {
    NodeKey::from_seed([n; 32])
}

fn peer(n: u8) -> String {
    key(n).peer_id().to_string()
}

/// A note by `author` for `audience`, stored as got from `from`.
fn row(author: u8, audience: Audience, from: Option<u8>, text: &str) -> StoredItem {
    let item = sign(
        &key(author),
        &PayloadDraft {
            created_ms: 100,
            audience,
            max_hops: DEVICES_MAX_HOPS,
            expires_ms: None,
            replaces: None,
            body: porfiry_protocol::Body::Note(Note::by_user(text)),
        },
    )
    .unwrap();
    StoredItem {
        record: ItemRecord::of(&item, item.max_hops() - 1, from.map(peer)),
        payload: item.envelope_bytes().to_vec(),
        signature: item.signature_bytes().to_vec(),
    }
}

#[test]
fn a_devices_item_is_for_this_nodes_devices_only() {
    let (_dir, store) = temp_store();
    // 1 is this node, 2 its phone, 3 a friend.
    let me = peer(1);
    let mut book = DeviceBook::new(&me);
    let link = LinkProposal::new(&key(1), &peer(2), 50)
        .unwrap()
        .countersign(&key(2))
        .unwrap();
    book.insert_link(&link).unwrap();
    let mine = row(1, Audience::Devices, None, "my diary");
    let phones = row(2, Audience::Devices, Some(2), "the phone's diary");
    let public = row(1, Audience::Public, None, "hello");
    store
        .insert_items(&[mine.clone(), phones.clone(), public.clone()])
        .unwrap();
    let ids = |friend: u8, book: &DeviceBook| -> Vec<ItemId> {
        let full: Vec<ItemId> = store
            .items_for_friend(&me, &peer(friend), &[], &ClubBook::new(), book, 200)
            .unwrap()
            .iter()
            .map(|i| i.record.id)
            .collect();
        let keys: Vec<ItemId> = store
            .item_keys_for_friend(&me, &peer(friend), &[], &ClubBook::new(), book, 200)
            .unwrap()
            .into_iter()
            .map(|(_, id)| id)
            .collect();
        assert_eq!(full, keys, "both queries decide alike");
        full
    };
    let (mine, phones, public) = (mine.record.id, phones.record.id, public.record.id);
    let to_phone = ids(2, &book);
    assert!(to_phone.contains(&mine) && to_phone.contains(&public));
    assert!(!to_phone.contains(&phones), "not back to its author");
    assert_eq!(ids(3, &book), vec![public], "a friend gets no devices item");
    assert_eq!(
        ids(2, &DeviceBook::new(&me)),
        vec![public],
        "no book, no devices"
    );
}

/// At the size a family's server has: 300 friends, two of them the
/// person's devices, and 2,000 memory items beside 100 public notes. Each
/// device is offered every memory item; each of the other 298 friends is
/// offered the public notes and not one memory item.
#[test]
fn among_three_hundred_friends_only_the_devices_get_the_memory() {
    let (_dir, store) = temp_store();
    let me = peer(1);
    let mut book = DeviceBook::new(&me);
    for device in [2, 3] {
        let link = LinkProposal::new(&key(1), &peer(device), 50)
            .unwrap()
            .countersign(&key(device))
            .unwrap();
        book.insert_link(&link).unwrap();
    }
    let memory: Vec<StoredItem> = (0..2_000)
        .map(|i| row(1, Audience::Devices, None, &format!("entry {i}")))
        .collect();
    let public: Vec<StoredItem> = (0..100)
        .map(|i| row(1, Audience::Public, None, &format!("note {i}")))
        .collect();
    for chunk in memory.chunks(500).chain(public.chunks(100)) {
        store.insert_items(chunk).unwrap();
    }
    let offered = |friend: &str| {
        store
            .item_keys_for_friend(&me, friend, &[], &ClubBook::new(), &book, 200)
            .unwrap()
            .len()
    };
    for device in [2, 3] {
        assert_eq!(offered(&peer(device)), 2_100);
    }
    for n in 10..308u16 {
        let seed: [u8; 32] = std::array::from_fn(|i| if i < 2 { n.to_be_bytes()[i] } else { 7 });
        let friend = NodeKey::from_seed(seed).peer_id().to_string();
        assert_eq!(offered(&friend), 100, "friend {n}");
    }
}
