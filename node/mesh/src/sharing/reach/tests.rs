//! The `reachable_at` items on a real SQLite file: what goes in ours, when
//! a new one is signed, and how friends' addresses order a dial.

use porfiry_protocol::limits::MAX_REACH_ADDRESSES;
use porfiry_protocol::{Audience, Body, NodeKey, PayloadDraft, ReachableAt, VerifiedItem, sign};
use porfiry_storage::{DB_FILE_NAME, Store};

use super::*;

fn key(n: u8) -> NodeKey {
    NodeKey::from_seed([n; 32])
}

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::create(dir.path().join(DB_FILE_NAME)).unwrap();
    (dir, store)
}

fn addr(s: &str) -> Multiaddr {
    s.parse().unwrap()
}

fn told(by: u8, at_ms: u64, addresses: &[&str]) -> VerifiedItem {
    sign(
        &key(by),
        &PayloadDraft {
            created_ms: at_ms,
            audience: Audience::Friends,
            max_hops: 1,
            expires_ms: None,
            replaces: None,
            body: Body::ReachableAt(ReachableAt {
                addresses: addresses.iter().map(|a| a.to_string()).collect(),
            }),
        },
    )
    .unwrap()
}

const CIRCUIT: &str =
    "/ip4/192.0.2.1/tcp/4001/p2p/12D3KooWQK1wnefoLrcVHbbnf5tLzbopUd3K3bFAoJpA7YJgL5pV/p2p-circuit";

#[test]
fn the_list_puts_circuits_first_once_each_leaves_loopback_out_and_is_bounded() {
    let list = reach_list(&[
        addr("/ip4/10.0.0.2/tcp/4001"),
        addr(CIRCUIT),
        addr("/ip4/10.0.0.2/tcp/4001"),
        addr("/ip4/127.0.0.1/tcp/4001"),
    ]);
    assert_eq!(
        list,
        [CIRCUIT, "/ip4/10.0.0.2/tcp/4001"],
        "loopback left out"
    );
    // Nodes that only listen on loopback (all on one machine) tell it.
    let local = reach_list(&[addr("/ip4/127.0.0.1/tcp/4001"), addr("/ip6/::1/tcp/4001")]);
    assert_eq!(local, ["/ip4/127.0.0.1/tcp/4001", "/ip6/::1/tcp/4001"]);
    let circuit_on_loopback = format!("/ip4/127.0.0.1/tcp/9/p2p/{}/p2p-circuit", key(5).peer_id());
    assert_eq!(
        reach_list(&[addr(&circuit_on_loopback), addr("/ip4/10.0.0.2/tcp/1")]),
        ["/ip4/10.0.0.2/tcp/1"],
        "a circuit through this machine's loopback is no use elsewhere"
    );
    let many: Vec<Multiaddr> = (1..=40)
        .map(|n| addr(&format!("/ip4/10.0.0.{n}/tcp/1")))
        .chain([addr(CIRCUIT)])
        .collect();
    let list = reach_list(&many);
    assert_eq!(list.len(), MAX_REACH_ADDRESSES);
    assert_eq!(list[0], CIRCUIT, "the circuit survives the cut");
}

#[test]
fn a_new_item_replaces_the_last_and_the_same_addresses_sign_nothing() {
    let (_dir, store) = store();
    let me = key(1);
    assert_eq!(own_reach(&store, &me).unwrap(), None);
    // Nothing to tell and nothing told: no item.
    assert!(
        announce_reach(&store, &me, vec![], None, 10)
            .unwrap()
            .is_none()
    );
    let first = announce_reach(&store, &me, vec!["/ip4/10.0.0.2/tcp/1".into()], None, 10)
        .unwrap()
        .unwrap();
    let told = own_reach(&store, &me).unwrap().unwrap();
    assert_eq!(told, (first.id(), vec!["/ip4/10.0.0.2/tcp/1".to_string()]));
    let same = vec!["/ip4/10.0.0.2/tcp/1".to_string()];
    assert!(
        announce_reach(&store, &me, same, Some(&told), 20)
            .unwrap()
            .is_none()
    );
    // Moved: the new item names the old one, which leaves the file.
    let moved = vec!["/ip4/10.9.0.7/tcp/1".to_string()];
    let second = announce_reach(&store, &me, moved.clone(), Some(&told), 30)
        .unwrap()
        .unwrap();
    assert_eq!(second.replaces(), Some(first.id()));
    assert!(!store.has_item(&first.id()).unwrap());
    assert_eq!(own_reach(&store, &me).unwrap(), Some((second.id(), moved)));
    // Losing every address is told too: friends stop dialling the old ones.
    let told = own_reach(&store, &me).unwrap().unwrap();
    let gone = announce_reach(&store, &me, vec![], Some(&told), 40)
        .unwrap()
        .unwrap();
    assert!(matches!(gone.body(), Body::ReachableAt(r) if r.addresses.is_empty()));
}

#[test]
fn a_friends_newest_addresses_come_before_the_given_ones() {
    let friend = key(2);
    let peer = friend.peer_id();
    let id = peer.to_string();
    let given = [addr("/ip4/10.0.0.2/tcp/1"), addr("/ip4/10.0.0.3/tcp/1")];
    let mut announced = Announced::default();
    assert_eq!(announced.dial_list(&peer, &given), given);
    assert!(announced.take(
        &told(2, 100, &["/ip4/10.0.0.3/tcp/1", "/ip4/10.7.0.1/tcp/1"]),
        Some(&id)
    ));
    assert_eq!(
        announced.dial_list(&peer, &given),
        [
            addr("/ip4/10.0.0.3/tcp/1"),
            addr("/ip4/10.7.0.1/tcp/1"),
            addr("/ip4/10.0.0.2/tcp/1"),
        ]
    );
    // A newer one replaces it whole: the stale told address is dropped.
    assert!(announced.take(&told(2, 200, &["/ip4/10.8.0.1/tcp/1"]), Some(&id)));
    assert_eq!(announced.of(&id), [addr("/ip4/10.8.0.1/tcp/1")]);
    // An older one arriving late, the same again, one that came through
    // someone else, and another kind change nothing.
    assert!(!announced.take(&told(2, 150, &["/ip4/10.0.0.9/tcp/1"]), Some(&id)));
    assert!(!announced.take(&told(2, 300, &["/ip4/10.8.0.1/tcp/1"]), Some(&id)));
    let other = key(3).peer_id().to_string();
    assert!(!announced.take(&told(2, 400, &["/ip4/10.6.6.6/tcp/1"]), Some(&other)));
    assert!(!announced.take(&told(2, 400, &["/ip4/10.6.6.6/tcp/1"]), None));
    assert_eq!(announced.of(&id), [addr("/ip4/10.8.0.1/tcp/1")]);
}

#[test]
fn load_reads_friends_items_and_leaves_ours_out() {
    let (_dir, store) = store();
    let me = key(1);
    announce_reach(&store, &me, vec!["/ip4/10.0.0.1/tcp/1".into()], None, 5).unwrap();
    let friend = key(2).peer_id().to_string();
    let item = told(2, 100, &["/ip4/10.0.0.2/tcp/1"]);
    store
        .insert_items(&[stored_record(&item, 0, Some(friend.clone()))])
        .unwrap();
    let announced = Announced::load(&store, &me.peer_id().to_string()).unwrap();
    assert_eq!(announced.of(&friend), [addr("/ip4/10.0.0.2/tcp/1")]);
    assert!(announced.of(&me.peer_id().to_string()).is_empty());
}

/// At a club server's size: 300 friends' address items among 5,000 notes
/// of 4 KB (20 MB) — every friend's addresses are read back at start, and
/// each friend is dialled at what it told first.
#[test]
fn a_club_servers_file_gives_every_friends_told_addresses() {
    use porfiry_protocol::{ItemId, ItemKind, ItemRecord};
    use porfiry_storage::StoredItem;
    const PER_HALF: u8 = 150;
    let (_dir, store) = store();
    let me = key(1);
    let notes: Vec<StoredItem> = (0..5_000u32)
        .map(|n| {
            let mut id = [0u8; 32];
            id[..4].copy_from_slice(&n.to_be_bytes());
            StoredItem {
                record: ItemRecord {
                    id: ItemId(id),
                    author: me.peer_id().to_string(),
                    kind: ItemKind::Note,
                    audience: Audience::Friends,
                    created_ms: u64::from(n),
                    expires_ms: None,
                    received_from: None,
                    max_hops: 1,
                    hops_left: 1,
                    retracts: None,
                    replaces: None,
                    club_target: None,
                    club_removal: false,
                    envelope_bytes: 4_096,
                },
                payload: vec![0x42; 4_096],
                signature: vec![0; 64],
            }
        })
        .collect();
    for part in notes.chunks(500) {
        store.insert_items(part).unwrap();
    }
    // 300 distinct keys: the first seed byte tells the two halves apart.
    let keys: Vec<NodeKey> = (0..2u8)
        .flat_map(|half| {
            (0..PER_HALF).map(move |n| {
                let mut seed = [n.wrapping_add(2); 32];
                seed[0] = half;
                NodeKey::from_seed(seed)
            })
        })
        .collect();
    for (i, k) in keys.iter().enumerate() {
        let item = sign(
            k,
            &PayloadDraft {
                created_ms: 10_000,
                audience: Audience::Friends,
                max_hops: 1,
                expires_ms: None,
                replaces: None,
                body: Body::ReachableAt(ReachableAt {
                    addresses: vec![format!("/ip4/10.1.{}.{}/tcp/4001", i / 250, i % 250 + 1)],
                }),
            },
        )
        .unwrap();
        store
            .insert_items(&[stored_record(&item, 0, Some(k.peer_id().to_string()))])
            .unwrap();
    }
    let started = std::time::Instant::now();
    let announced = Announced::load(&store, &me.peer_id().to_string()).unwrap();
    println!(
        "{} friends' addresses read among 5,000 notes of 4 KB in {:?}",
        keys.len(),
        started.elapsed()
    );
    for (i, k) in keys.iter().enumerate() {
        let told = addr(&format!("/ip4/10.1.{}.{}/tcp/4001", i / 250, i % 250 + 1));
        let given = [addr("/ip4/192.0.2.1/tcp/1")];
        assert_eq!(
            announced.dial_list(&k.peer_id(), &given),
            [told, given[0].clone()],
            "friend {i}"
        );
    }
}
