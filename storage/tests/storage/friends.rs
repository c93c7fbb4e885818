//! agent_peers (friends) and agent_reputation.

use porfiry_storage::{Friend, PeerPermissions, PeerStatus, Reputation, StorageError};

use crate::temp_store;

const BOB: &str = "12D3KooWBobBobBobBobBobBobBobBobBobBobBobBobBobBob1";
const CAROL: &str = "12D3KooWCarolCarolCarolCarolCarolCarolCarolCarol1";

fn friend(peer: &str) -> Friend {
    Friend {
        peer_id: peer.into(),
        name: "bob".into(),
        ..Default::default()
    }
}

#[test]
fn add_list_get_remove() {
    let (_dir, store) = temp_store();
    let full = Friend {
        peer_id: BOB.into(),
        name: "Bob".into(),
        description: "server at home".into(),
        addresses: vec!["/ip4/127.0.0.1/tcp/4001".into()],
        groups: vec!["family".into()],
        permissions: PeerPermissions {
            offload: true,
            ..Default::default()
        },
        status: PeerStatus::Online,
        last_seen: Some(55),
    };
    store.add_friend(&full, 1).unwrap();
    store.add_friend(&friend(CAROL), 2).unwrap();
    assert_eq!(store.friend(BOB).unwrap().row, full);
    let peers: Vec<String> = store
        .friends()
        .unwrap()
        .into_iter()
        .map(|f| f.row.peer_id)
        .collect();
    assert_eq!(peers, [BOB, CAROL]);
    assert!(matches!(
        store.add_friend(&friend(BOB), 3),
        Err(StorageError::Duplicate {
            table: "agent_peers",
            ..
        })
    ));
    store.remove_friend(BOB).unwrap();
    assert!(store.find_friend(BOB).unwrap().is_none());
    assert!(matches!(
        store.friend(BOB),
        Err(StorageError::NotFound { .. })
    ));
    assert!(matches!(
        store.remove_friend(BOB),
        Err(StorageError::NotFound { .. })
    ));
}

#[test]
fn groups_status_addresses_and_permissions() {
    let (_dir, store) = temp_store();
    store.add_friend(&friend(BOB), 1).unwrap();
    store
        .set_friend_groups(BOB, &["family".into(), "chess-club".into()], 2)
        .unwrap();
    store
        .set_friend_status(BOB, PeerStatus::Online, Some(100), 3)
        .unwrap();
    store
        .set_friend_status(BOB, PeerStatus::Offline, None, 4)
        .unwrap();
    store
        .set_friend_addresses(BOB, &["/dns4/bob.example/tcp/4001".into()], 5)
        .unwrap();
    let mut p = PeerPermissions {
        offload: true,
        ..Default::default()
    };
    p.other.insert("future".into(), serde_json::json!({"x": 1}));
    store.set_friend_permissions(BOB, &p, 6).unwrap();
    let f = store.friend(BOB).unwrap();
    assert_eq!(f.row.groups, ["family", "chess-club"]);
    assert_eq!(
        (f.row.status, f.row.last_seen),
        (PeerStatus::Offline, Some(100)),
        "None keeps last_seen"
    );
    assert_eq!(f.row.addresses, ["/dns4/bob.example/tcp/4001"]);
    assert_eq!(f.row.permissions, p, "unknown permission keys survive");
    assert_eq!(f.updated_ms, 6);
}

#[test]
fn bad_peer_ids_and_group_names_are_refused() {
    let (_dir, store) = temp_store();
    for bad in ["", "has space", &"x".repeat(200)] {
        assert!(
            matches!(
                store.add_friend(&friend(bad), 1),
                Err(StorageError::Invalid { .. })
            ),
            "{bad:?}"
        );
    }
    let bad_group = Friend {
        groups: vec!["Family".into()],
        ..friend(BOB)
    };
    assert!(matches!(
        store.add_friend(&bad_group, 1),
        Err(StorageError::Invalid { .. })
    ));
    store.add_friend(&friend(BOB), 1).unwrap();
    for groups in [
        vec!["".to_string()],
        vec!["a b".into()],
        vec!["x".into(), "x".into()],
    ] {
        assert!(
            store.set_friend_groups(BOB, &groups, 2).is_err(),
            "{groups:?}"
        );
    }
    assert!(
        store.friend(BOB).unwrap().row.groups.is_empty(),
        "nothing written"
    );
    assert!(matches!(
        store.set_friend_groups(CAROL, &[], 2),
        Err(StorageError::NotFound { .. })
    ));
    assert!(matches!(
        store.set_friend_status(CAROL, PeerStatus::Online, None, 2),
        Err(StorageError::NotFound { .. })
    ));
}

#[test]
fn peer_status_words_are_checked_by_sqlite_too() {
    let (_dir, store) = temp_store();
    let raw = crate::raw(&store);
    let r = raw.execute("INSERT INTO agent_peers (peer_id, status, created, updated) VALUES ('p', 'friendly', 1, 1)", []);
    assert!(r.is_err());
}

#[test]
fn reputation_set_adjust_and_notes() {
    let (_dir, store) = temp_store();
    assert!(store.reputation(BOB).unwrap().is_none());
    assert_eq!(
        store.reputation_adjust(BOB, 1.5, 1).unwrap(),
        1.5,
        "starts from 0"
    );
    assert_eq!(store.reputation_adjust(BOB, -0.5, 2).unwrap(), 1.0);
    assert_eq!(store.reputation_set(BOB, -3.0, 3).unwrap(), -3.0);
    store
        .reputation_set_notes(BOB, "spams the club", 4)
        .unwrap();
    store.reputation_set_notes(CAROL, "helpful", 5).unwrap();
    let r = store.reputation(BOB).unwrap().unwrap();
    assert_eq!(
        (
            r.row.score,
            r.row.notes.as_str(),
            r.created_ms,
            r.updated_ms
        ),
        (-3.0, "spams the club", 1, 4)
    );
    assert_eq!(store.reputation(CAROL).unwrap().unwrap().row.score, 0.0);
    assert!(store.reputation_set(BOB, f64::NAN, 6).is_err());
    assert!(store.reputation_adjust("", 1.0, 6).is_err());
    // The generic API works on the same rows.
    let all = store.list::<Reputation>(&Default::default()).unwrap();
    assert_eq!(all.len(), 2);
    store
        .set_tags::<Reputation>(r.id, &["spam".into()], 7)
        .unwrap();
    assert_eq!(store.reputation(BOB).unwrap().unwrap().row.tags, ["spam"]);
}
