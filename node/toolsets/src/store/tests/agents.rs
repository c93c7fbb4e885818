//! `agents`: friends added and removed through the node when one runs,
//! else straight in `agent_peers`; bad or own peer ids refused.

use porfiry_skills::Language;
use porfiry_storage::{Friend, Identity};

use crate::store::testkit::{Kit, NOW_MS};
use crate::test_support::peer;
use porfiry_mesh::replication::LoopCommand;

async fn friends(kit: &Kit) -> u64 {
    kit.read(|s| s.count::<Friend>().unwrap()).await
}

#[tokio::test]
async fn without_a_node_friends_are_written_to_the_file() {
    let kit = Kit::new(Language::En);
    let p = peer(1);
    assert_eq!(kit.ok("agents_add", &p).await, format!("friend added: {p}"));
    let addr = format!("/ip4/10.0.0.2/tcp/4001/p2p/{p}");
    assert_eq!(
        kit.ok("agents_add", &format!("{p}|{addr}|family, club"))
            .await,
        format!("friend {p} updated: addresses and groups")
    );
    let q = p.clone();
    let f = kit.read(move |s| s.friend(&q).unwrap()).await.row;
    assert_eq!(f.groups, ["family", "club"]);
    assert_eq!(f.addresses, [addr]);
    assert_eq!(
        kit.ok("agents_list", "").await,
        format!("{p} (unknown) [family, club]")
    );
    assert_eq!(
        kit.ok("agents_delete", &p).await,
        format!("friend removed: {p}")
    );
    assert_eq!(friends(&kit).await, 0);
    assert!(
        kit.fails("agents_delete", &p)
            .await
            .contains("not a friend")
    );
}

#[tokio::test]
async fn bad_and_own_peer_ids_are_refused() {
    let kit = Kit::new(Language::En);
    let own = peer(2);
    let id = own.clone();
    kit.db
        .write(move |s| {
            let me = Identity {
                name: "me".into(),
                peer_id: Some(id),
                ..Default::default()
            };
            s.add(&me, NOW_MS).unwrap()
        })
        .await
        .unwrap();
    assert!(
        kit.fails("agents_add", "not-a-peer")
            .await
            .contains("bad peer id")
    );
    assert!(kit.fails("agents_add", &own).await.contains("own peer id"));
    let p = peer(3);
    let bad_group = kit.fails("agents_add", &format!("{p}||No Spaces")).await;
    assert!(bad_group.contains("group"), "{bad_group}");
    assert!(
        kit.fails("agents_add", &format!("{p}|not-an-address"))
            .await
            .contains("bad address")
    );
    assert_eq!(friends(&kit).await, 0);
}

#[tokio::test]
async fn with_a_node_the_mesh_learns_at_once() {
    let (kit, mut loop_rx, key) = Kit::with_node(Language::En);
    let p = peer(4);
    kit.ok("agents_add", &p).await;
    assert!(matches!(
        loop_rx.recv().await,
        Some(LoopCommand::FriendsChanged)
    ));
    assert_eq!(friends(&kit).await, 1);
    let own = key.peer_id().to_string();
    assert!(kit.fails("agents_add", &own).await.contains("own peer id"));
    kit.ok("agents_delete", &p).await;
    assert!(matches!(
        loop_rx.recv().await,
        Some(LoopCommand::FriendsChanged)
    ));
    assert_eq!(friends(&kit).await, 0);
}
