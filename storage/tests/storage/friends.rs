//! agent_peers (friends) and agent_reputation.

use porfiry_storage::{
    Friend, MAX_FRIEND_NAME_CHARS, PeerPermissions, PeerStatus, Reputation, StorageError,
    check_friend_name,
};

use crate::temp_store;

const BOB: &str = "12D3KooWBobBobBobBobBobBobBobBobBobBobBobBobBobBob1";
const CAROL: &str = "12D3KooWCarolCarolCarolCarolCarolCarolCarolCarol1";

fn friend(peer: &str) -> Friend {
    Friend {
        peer_id: peer.into(),
        ..Default::default()
    }
}

fn named(peer: &str, name: &str) -> Friend {
    Friend {
        name: name.into(),
        ..friend(peer)
    }
}

const DAVE: &str = "12D3KooWDaveDaveDaveDaveDaveDaveDaveDaveDaveDaveDav1";

#[test]
fn names_are_unique_ignoring_case_and_the_error_names_the_holder() {
    let (_dir, store) = temp_store();
    store.add_friend(&named(BOB, "Anna"), 1).unwrap();
    store.add_friend(&friend(CAROL), 2).unwrap();
    store.add_friend(&friend(DAVE), 3).unwrap();
    for taken in ["anna", "ANNA", "Anna"] {
        let e = store.add_friend(&named(DAVE, taken), 4).unwrap_err();
        assert!(
            matches!(&e, StorageError::NameTaken { peer_id, holder, .. }
                if peer_id == BOB && holder == "Anna"),
            "{e:?}"
        );
        assert!(e.to_string().contains(BOB), "{e}");
        let e = store.set_friend_name(CAROL, taken, 4).unwrap_err();
        assert!(matches!(e, StorageError::NameTaken { .. }), "{e:?}");
    }
    // Unicode case folds too, not only ASCII.
    store.set_friend_name(CAROL, "Мария", 5).unwrap();
    assert!(matches!(
        store.set_friend_name(DAVE, "мария", 6),
        Err(StorageError::NameTaken { .. })
    ));
    // Nothing was written by the refusals; empty names may repeat.
    assert_eq!(store.friend(DAVE).unwrap().row.name, "");
    assert_eq!(store.friend(CAROL).unwrap().row.name, "Мария");
    // Renaming a friend to its own name in another case is fine.
    store.set_friend_name(BOB, "anna", 7).unwrap();
    assert_eq!(store.friend(BOB).unwrap().row.name, "anna");
    let found = store.friends_named("ANNA").unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].row.peer_id, BOB);
    assert!(store.friends_named("").unwrap().is_empty());
    // Un-naming frees the name for another friend.
    store.set_friend_name(BOB, "", 8).unwrap();
    store.set_friend_name(DAVE, "Anna", 9).unwrap();
    assert_eq!(store.friends_named("anna").unwrap()[0].row.peer_id, DAVE);
    assert!(matches!(
        store.set_friend_name("12D3KooWNobody", "zoe", 10),
        Err(StorageError::NotFound { .. })
    ));
}

#[test]
fn the_index_refuses_a_repeated_name_written_past_the_check() {
    let (_dir, store) = temp_store();
    store.add_friend(&named(BOB, "anna"), 1).unwrap();
    store.add_friend(&friend(CAROL), 2).unwrap();
    let raw = crate::raw(&store);
    let r = raw.execute(
        "UPDATE agent_peers SET name = 'ANNA' WHERE peer_id = ?",
        [CAROL],
    );
    assert!(r.is_err(), "{r:?}");
    raw.execute("UPDATE agent_peers SET name = '' WHERE peer_id = ?", [BOB])
        .unwrap();
}

#[test]
fn bad_names_are_refused_with_the_reason() {
    let (_dir, store) = temp_store();
    store.add_friend(&friend(BOB), 1).unwrap();
    let a_peer_id = porfiry_protocol::NodeKey::from_seed([7; 32])
        .peer_id()
        .to_string();
    let long = "x".repeat(MAX_FRIEND_NAME_CHARS + 1);
    for (bad, says) in [
        (" anna", "whitespace"),
        ("anna\t", "whitespace"),
        ("an@na", "'@'"),
        ("an\u{7}na", "control"),
        (long.as_str(), "1 to 32 characters"),
        (a_peer_id.as_str(), "is a peer id"),
    ] {
        let e = store.set_friend_name(BOB, bad, 2).unwrap_err();
        assert!(matches!(e, StorageError::Invalid { .. }), "{bad:?}: {e:?}");
        assert!(e.to_string().contains(says), "{bad:?}: {e}");
        let e = store.add_friend(&named(CAROL, bad), 2).unwrap_err();
        assert!(e.to_string().contains(says), "{bad:?}: {e}");
        assert!(check_friend_name(bad).is_err());
    }
    assert!(store.find_friend(CAROL).unwrap().is_none());
    assert_eq!(store.friend(BOB).unwrap().row.name, "");
    // The longest name, inner spaces and any script are fine.
    let longest = "я".repeat(MAX_FRIEND_NAME_CHARS);
    for good in [longest.as_str(), "Anna K", "бабушка", "a"] {
        store.set_friend_name(BOB, good, 3).unwrap();
        assert_eq!(store.friend(BOB).unwrap().row.name, good);
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
