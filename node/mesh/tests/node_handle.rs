//! `Node::spawn` and `NodeHandle` against real data dirs on disk and real
//! nodes on loopback: notes reach a friend, friends connect and catch up,
//! bad input is refused with typed errors and stores nothing, and shutdown
//! leaves a whole file.

use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::net::{Multiaddr, Profile};
use porfiry_mesh::{
    Node, NodeConfig, NodeError, NodeHandle, NodeJoin, NotePost, NotesQuery, Origin,
};
use porfiry_protocol::{ItemKind, NodeKey};
use porfiry_skills::{Clock, SystemClock};
use porfiry_storage::{Note, Sharing, Store};

mod node_support;
use node_support::eventually;

/// Items in the node's file but its own address items (`reachable_at`): a
/// server signs one once its addresses have settled for 500 ms, which a
/// loaded machine lets happen before a test ends (issue 42: 4 held where 2
/// were shared), so what a test shared is counted apart from them.
fn shared_items(dir: &DataDir) -> u64 {
    let store = Store::open(dir.db_path()).unwrap();
    let addresses = store.items_of_kind(ItemKind::ReachableAt).unwrap().len() as u64;
    store.item_count().unwrap() - addresses
}

/// [`shared_items`] of a running node, from its status.
async fn shared_now(node: &NodeHandle) -> u64 {
    let kinds = node.status().await.unwrap().items_per_kind;
    kinds
        .iter()
        .filter(|(kind, _)| kind.as_str() != ItemKind::ReachableAt.as_str())
        .map(|(_, n)| n)
        .sum()
}

fn loopback() -> Vec<Multiaddr> {
    vec!["/ip4/127.0.0.1/tcp/0".parse().unwrap()]
}

fn spawn(dir: &DataDir, profile: Profile) -> (NodeHandle, NodeJoin) {
    let listen = match profile {
        Profile::Server => loopback(),
        Profile::Phone => vec![],
    };
    Node::spawn(NodeConfig::new(dir.clone(), profile, listen)).unwrap()
}

async fn address(node: &NodeHandle) -> String {
    let mut listening = node.listening();
    let list = listening
        .wait_for(|a| !a.is_empty())
        .await
        .expect("the node listens");
    list[0].clone()
}

fn integrity_ok(dir: &DataDir) {
    let conn = rusqlite::Connection::open(dir.db_path()).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}

fn friends_post(text: &str) -> NotePost {
    NotePost {
        text: text.into(),
        audience: "friends".parse::<Sharing>().unwrap(),
        reply_to: None,
    }
}

#[tokio::test]
async fn friends_added_through_handles_connect_catch_up_and_receive_a_note() {
    let tmp = tempfile::tempdir().unwrap();
    let (a_dir, b_dir) = (
        DataDir::new(tmp.path().join("a")),
        DataDir::new(tmp.path().join("b")),
    );
    let clock = SystemClock::utc();
    let before = clock.now().unix_ms();
    let (a, a_join) = spawn(&a_dir, Profile::Server);
    let (b, b_join) = spawn(&b_dir, Profile::Server);
    // A note written before they are friends travels by catch-up (a
    // node with nothing to share starts no catch-up session).
    b.post_note(friends_post("written while apart"))
        .await
        .unwrap();
    let a_addr = address(&a).await;
    let dial = a_addr.split("/p2p/").next().unwrap().to_owned();

    let view = b
        .add_friend(a.peer_id(), vec![dial.clone()], vec!["family".into()])
        .await
        .unwrap();
    assert_eq!(view.peer_id, a.peer_id());
    assert_eq!(view.addresses, [dial]);
    assert_eq!(view.groups, ["family"]);
    a.add_friend(b.peer_id(), vec![], vec![]).await.unwrap();

    // Both see the other connected, and a catch-up with it finished.
    for (node, friend) in [(&a, b.peer_id()), (&b, a.peer_id())] {
        let status = eventually("a connection and a catch-up", || async {
            let s = node.status().await.unwrap();
            let f = s.friends.iter().find(|f| f.peer_id == friend)?;
            (f.connected && f.last_catchup_ms.is_some()).then_some(s)
        })
        .await;
        assert_eq!(status.friends_connected, 1);
        assert_eq!(status.peer_id, node.peer_id());
        assert_eq!(status.profile, "server");
        let caught_up = status.friends[0].last_catchup_ms.unwrap();
        assert!(caught_up >= before, "{caught_up} < {before}");
    }

    let posted = b.post_note(friends_post("hello #mesh")).await.unwrap();
    let item = posted.item_id.clone().expect("a shared note is an item");
    assert_eq!(posted.audience, "friends");

    // It lands in the friend's database, merged with its author.
    let a_db = a_dir.db_path();
    let b_id = b.peer_id().to_owned();
    let merged = eventually("the note in the friend's file", || {
        let a_db = a_db.clone();
        let b_id = b_id.clone();
        async move {
            let store = Store::open(&a_db).unwrap();
            store
                .list::<Note>(&Default::default())
                .unwrap()
                .into_iter()
                .find(|n| {
                    n.row.origin_author.as_deref() == Some(b_id.as_str())
                        && n.row.text == "hello #mesh"
                })
        }
    })
    .await;
    assert_eq!(merged.row.text, "hello #mesh");
    assert_eq!(merged.row.hashtags, ["mesh"]);
    let from_friends = a
        .notes(NotesQuery {
            origin: Some(Origin::Friends),
            limit: None,
            newest: false,
        })
        .await
        .unwrap();
    let texts: Vec<&str> = from_friends.iter().map(|n| n.text.as_str()).collect();
    assert_eq!(texts, ["written while apart", "hello #mesh"]);
    assert_eq!(from_friends[1].item_id.as_deref(), Some(item.as_str()));
    assert_eq!(from_friends[1].author.as_deref(), Some(b.peer_id()));
    assert!(
        a.notes(NotesQuery {
            origin: Some(Origin::Own),
            limit: None,
            newest: false,
        })
        .await
        .unwrap()
        .is_empty()
    );
    let kinds = a.status().await.unwrap().items_per_kind;
    assert_eq!(kinds.get("note"), Some(&2));

    // Removing the friend through the handle drops its connection.
    b.remove_friend(a.peer_id()).await.unwrap();
    assert!(b.friends().await.unwrap().is_empty());
    eventually("the removed friend to disconnect", || async {
        (b.status().await.unwrap().friends_connected == 0).then_some(())
    })
    .await;

    a.shutdown();
    b.shutdown();
    a_join.await.unwrap();
    b_join.await.unwrap();
    assert_eq!(shared_items(&a_dir), 2);
    assert_eq!(shared_items(&b_dir), 2);
    integrity_ok(&a_dir);
    integrity_ok(&b_dir);
}

#[tokio::test]
async fn bad_input_is_a_typed_error_and_stores_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path().join("n"));
    let (node, join) = spawn(&dir, Profile::Phone);
    let stranger = NodeKey::from_seed([7; 32]).peer_id().to_string();

    let e = node
        .add_friend("not-a-peer", vec![], vec![])
        .await
        .unwrap_err();
    assert!(e.is_bad_input() && !e.is_not_found(), "{e}");
    assert!(e.to_string().contains("not-a-peer"), "{e}");
    let own = node.peer_id().to_owned();
    let e = node.add_friend(&own, vec![], vec![]).await.unwrap_err();
    assert!(e.is_bad_input(), "{e}");
    let e = node
        .add_friend(&stranger, vec!["tcp:80".into()], vec![])
        .await
        .unwrap_err();
    assert!(e.is_bad_input(), "{e}");
    assert!(e.to_string().contains("tcp:80"), "{e}");
    assert!(node.friends().await.unwrap().is_empty(), "nothing stored");

    let e = node.post_note(friends_post("   ")).await.unwrap_err();
    assert!(e.is_bad_input(), "{e}");
    assert!(node.notes(NotesQuery::default()).await.unwrap().is_empty());

    let e = node.remove_friend(&stranger).await.unwrap_err();
    assert!(e.is_not_found() && !e.is_bad_input(), "{e}");
    // "nope" could be a friend's name: none has it, so it is not found.
    let e = node.remove_friend("nope").await.unwrap_err();
    assert!(e.is_not_found() && !e.is_bad_input(), "{e}");
    // "no@pe" can be neither a peer id nor a name.
    let e = node.remove_friend("no@pe").await.unwrap_err();
    assert!(e.is_bad_input(), "{e}");

    // The node keeps running after all that.
    let status = node.status().await.unwrap();
    assert_eq!(status.profile, "phone");
    assert!(status.friends.is_empty());
    node.shutdown();
    join.await.unwrap();
    assert_eq!(shared_items(&dir), 0);
}

#[tokio::test]
async fn friends_are_named_renamed_and_taken_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path().join("n"));
    let (node, join) = spawn(&dir, Profile::Phone);
    let anna = NodeKey::from_seed([7; 32]).peer_id().to_string();
    let bob = NodeKey::from_seed([8; 32]).peer_id().to_string();
    let view = node
        .add_named_friend(&anna, vec![], vec![], Some("Anna".into()), None)
        .await
        .unwrap();
    assert_eq!(view.name.as_deref(), Some("Anna"));
    node.add_friend(&bob, vec![], vec![]).await.unwrap();
    // Taken ignoring case: refused, bob keeps no name.
    let e = node.rename_friend(&bob, "ANNA").await.unwrap_err();
    assert!(e.is_bad_input() && e.to_string().contains(&anna), "{e}");
    let e = node
        .add_named_friend(&bob, vec![], vec![], Some("anna".into()), None)
        .await
        .unwrap_err();
    assert!(e.is_bad_input(), "{e}");
    let e = node.rename_friend(&bob, "b@b").await.unwrap_err();
    assert!(e.is_bad_input(), "{e}");
    let e = node.rename_friend("nobody", "zed").await.unwrap_err();
    assert!(e.is_not_found(), "{e}");
    let view = node.rename_friend("anna", "Anya").await.unwrap();
    assert_eq!(
        (view.peer_id.as_str(), view.name.as_deref()),
        (anna.as_str(), Some("Anya"))
    );
    node.set_friend_offload("anya", true).await.unwrap();
    assert!(node.may_offload(anna.parse().unwrap()).await.unwrap());
    let friends = node.friends().await.unwrap();
    let bob_view = friends.iter().find(|f| f.peer_id == bob).unwrap();
    assert_eq!(bob_view.name, None);
    assert_eq!(
        node.status()
            .await
            .unwrap()
            .friends
            .iter()
            .find(|f| f.peer_id == anna)
            .unwrap()
            .name
            .as_deref(),
        Some("Anya")
    );
    assert_eq!(
        node.resolve_audience("peer:ANYA").await.unwrap(),
        Sharing::Shared(porfiry_protocol::Audience::Peer(anna.clone()))
    );
    node.remove_friend("Anya").await.unwrap();
    assert_eq!(node.friends().await.unwrap().len(), 1);
    node.shutdown();
    join.await.unwrap();
}

#[tokio::test]
async fn a_note_posted_through_the_handle_reaches_the_loop_without_the_poll() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path().join("n"));
    // A phone polls for other processes' writes only every 5 s; the handle
    // tells the loop directly, and its commands are taken in order, so the
    // status asked right after the post already counts the item.
    let (node, join) = spawn(&dir, Profile::Phone);
    node.post_note(friends_post("first")).await.unwrap();
    assert_eq!(shared_now(&node).await, 1);
    let private = NotePost {
        text: "mine only".into(),
        audience: Sharing::Private,
        reply_to: None,
    };
    let posted = node.post_note(private).await.unwrap();
    assert!(posted.item_id.is_none());
    assert_eq!(shared_now(&node).await, 1);
    let notes = node.notes(NotesQuery::default()).await.unwrap();
    let texts: Vec<&str> = notes.iter().map(|n| n.text.as_str()).collect();
    assert_eq!(texts, ["first", "mine only"]);
    let limited = node
        .notes(NotesQuery {
            origin: None,
            limit: Some(1),
            newest: false,
        })
        .await
        .unwrap();
    assert_eq!(limited.len(), 1);
    assert_eq!(limited[0].text, "first", "the oldest one");
    let newest = node
        .notes(NotesQuery {
            origin: None,
            limit: Some(1),
            newest: true,
        })
        .await
        .unwrap();
    let texts: Vec<&str> = newest.iter().map(|n| n.text.as_str()).collect();
    assert_eq!(texts, ["mine only"], "the newest one");
    node.shutdown();
    join.await.unwrap();
    assert_eq!(shared_items(&dir), 1);
}

#[tokio::test]
async fn shutdown_through_the_handle_commits_releases_the_lock_and_ends_calls() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path().join("n"));
    let (node, join) = spawn(&dir, Profile::Server);
    // A second node on the same dir is refused while the first runs.
    let e = Node::spawn(NodeConfig::new(dir.clone(), Profile::Server, loopback())).unwrap_err();
    assert!(e.to_string().contains("already"), "{e}");
    assert!(!e.is_bad_input());

    for i in 0..3 {
        node.post_note(friends_post(&format!("note {i}")))
            .await
            .unwrap();
    }
    let clone = node.clone();
    clone.shutdown();
    join.await.unwrap();
    assert_eq!(shared_items(&dir), 3);
    integrity_ok(&dir);
    assert!(matches!(
        node.post_note(friends_post("late")).await,
        Err(NodeError::Stopped)
    ));
    assert!(matches!(node.status().await, Err(NodeError::Stopped)));

    // The lock is free again and the file holds everything.
    let (again, join) = spawn(&dir, Profile::Server);
    assert_eq!(again.peer_id(), node.peer_id(), "the same identity");
    assert_eq!(again.notes(NotesQuery::default()).await.unwrap().len(), 3);
    drop(again);
    drop(node);
    drop(clone);
    join.await.unwrap();
    assert_eq!(shared_items(&dir), 3, "dropping every handle stops it");
}
