//! A person's devices between real nodes on loopback: `link_device` and
//! `join_device` make two nodes devices of one person over
//! `/porfiry/invite/1`; a diary entry and a goal written on one reach the
//! other's tables (with the person's own strategies and models, never a
//! model's secret), and a friend of both never gets a byte of them; a code
//! used twice, or a friend's code used to link, is refused; after an
//! unlink nothing more flows; a deletion is pruned by the node's clock once
//! its time to live has passed, the engine stops offering it at once, and
//! a catch-up with the device that keeps it does not bring it back.

use std::sync::Arc;
use std::time::Duration;

use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::devices::prune::{MIND_PRUNE_EVERY_MS, MIND_PRUNED_AT_KEY};
use porfiry_mesh::invite::InviteService;
use porfiry_mesh::invite::secret::Refusal;
use porfiry_mesh::invite::{InvitationRequest, PresentError};
use porfiry_mesh::net::{Multiaddr, Profile};
use porfiry_mesh::node::InvitationError;
use porfiry_mesh::{Node, NodeConfig, NodeHandle, NodeJoin};
use porfiry_protocol::ItemKind;
use porfiry_protocol::mind::TOMBSTONE_TTL_MS;
use porfiry_skills::{Clock, ManualClock, SystemClock};
use porfiry_storage::Store;

mod node_support;
use node_support::eventually;

fn spawn(dir: &DataDir) -> (NodeHandle, NodeJoin) {
    let listen: Vec<Multiaddr> = vec!["/ip4/127.0.0.1/tcp/0".parse().unwrap()];
    Node::spawn(NodeConfig::new(dir.clone(), Profile::Server, listen)).unwrap()
}

async fn wait_listening(node: &NodeHandle) -> String {
    let mut listening = node.listening();
    let list = listening
        .wait_for(|a| !a.is_empty())
        .await
        .expect("the node listens");
    list[0].split("/p2p/").next().unwrap().to_owned()
}

fn texts(dir: &DataDir, sql: &str) -> Vec<String> {
    let conn = rusqlite::Connection::open(dir.db_path()).unwrap();
    let mut stmt = conn.prepare(sql).unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn exec(dir: &DataDir, sql: &str) {
    rusqlite::Connection::open(dir.db_path())
        .unwrap()
        .execute_batch(sql)
        .unwrap();
}

fn count(dir: &DataDir, sql: &str) -> i64 {
    rusqlite::Connection::open(dir.db_path())
        .unwrap()
        .query_row(sql, [], |r| r.get(0))
        .unwrap()
}

fn kind_count(dir: &DataDir, kind: ItemKind) -> usize {
    Store::open(dir.db_path())
        .unwrap()
        .items_of_kind(kind)
        .unwrap()
        .len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn linked_devices_share_the_memory_and_a_friend_of_both_gets_none() {
    let tmp = tempfile::tempdir().unwrap();
    let [server_dir, phone_dir, friend_dir] =
        ["server", "phone", "friend"].map(|n| DataDir::new(tmp.path().join(n)));
    let (server, server_join) = spawn(&server_dir);
    let (phone, phone_join) = spawn(&phone_dir);
    let (friend, friend_join) = spawn(&friend_dir);
    let invites = InviteService::start(&server).unwrap();
    let server_addr = wait_listening(&server).await;
    let friend_addr = wait_listening(&friend).await;
    let phone_addr = wait_listening(&phone).await;

    // Written before the link: it travels too (the first link publishes
    // the whole memory), the person's own know-how and models with it,
    // never a model's secret.
    exec(
        &phone_dir,
        "INSERT INTO diary_entries (text, created, updated) VALUES ('before the link', 1, 1);
         INSERT INTO stagnation_strategies (name, created, updated) VALUES ('take a walk', 1, 1);
         INSERT INTO llm_registry (name, endpoint, config, created, updated)
             VALUES ('cloud', 'https://api.example.com/v1', '{\"api_key_env\":\"PHONE_VAR\"}', 1, 1);",
    );

    // A friend's invitation does not link a device.
    let friend_code = server
        .invite(InvitationRequest {
            valid_for: Duration::from_secs(600),
            ..InvitationRequest::default()
        })
        .await
        .unwrap();
    let refused = phone.join_device(&friend_code).await.unwrap_err();
    assert!(
        matches!(
            refused,
            InvitationError::Present(PresentError::Refused(Refusal::NotADeviceCode))
        ),
        "{refused}"
    );

    let code = server.link_device(Duration::from_secs(600)).await.unwrap();
    let linked = phone.join_device(&code).await.unwrap();
    assert_eq!(linked.peer, server.peer_id());
    // Single use.
    let again = friend.join_device(&code).await.unwrap_err();
    assert!(
        matches!(
            again,
            InvitationError::Present(PresentError::Refused(Refusal::Used))
        ),
        "{again}"
    );
    let on_server = server.devices().await.unwrap();
    assert_eq!(on_server.len(), 1);
    assert_eq!(on_server[0].peer, phone.peer_id());
    assert_eq!(on_server[0].linked_since_ms, linked.linked_since_ms);

    // The friend is a friend of both, not a device.
    for (node, addr) in [(&server, &server_addr), (&phone, &phone_addr)] {
        friend
            .add_friend(node.peer_id(), vec![addr.clone()], vec![])
            .await
            .unwrap();
        node.add_friend(friend.peer_id(), vec![friend_addr.clone()], vec![])
            .await
            .unwrap();
    }

    exec(
        &phone_dir,
        "INSERT INTO diary_entries (text, created, updated) VALUES ('went to the sea', 2, 2);
         INSERT INTO goals (title, created, updated) VALUES ('learn to swim', 2, 2);",
    );
    eventually("the phone's diary and goal on the server", || async {
        let diary = texts(&server_dir, "SELECT text FROM diary_entries ORDER BY text");
        let goals = texts(&server_dir, "SELECT title FROM goals");
        let models = texts(
            &server_dir,
            "SELECT endpoint || ' ' || config FROM llm_registry",
        );
        let walks = texts(
            &server_dir,
            "SELECT name FROM stagnation_strategies WHERE name = 'take a walk'",
        );
        (diary == ["before the link", "went to the sea"]
            && goals == ["learn to swim"]
            && models == ["https://api.example.com/v1 {}"]
            && walks == ["take a walk"])
        .then_some(())
    })
    .await;
    // The seeds each node wrote are one set: only the phone's own
    // strategy came as a new row.
    let strategies = "SELECT COUNT(*) FROM stagnation_strategies";
    assert_eq!(
        count(&server_dir, strategies),
        count(&phone_dir, strategies)
    );
    // And back: an edit on the server reaches the phone.
    exec(
        &server_dir,
        "UPDATE diary_entries SET text = 'went to the sea, swam' WHERE text = 'went to the sea'",
    );
    eventually("the server's edit on the phone", || async {
        texts(&phone_dir, "SELECT text FROM diary_entries ORDER BY text")
            .contains(&"went to the sea, swam".to_owned())
            .then_some(())
    })
    .await;
    // Connected and caught up, the phone is behind by nothing, though the
    // server wrote versions since it was first seen.
    eventually("the phone caught up, as the server sees it", || async {
        let listed = server.devices().await.unwrap();
        (listed.len() == 1 && listed[0].behind == 0 && listed[0].last_sync_ms.is_some())
            .then_some(())
    })
    .await;
    // A note to friends reaches the friend meanwhile, so it was connected
    // and catching up all along.
    phone
        .post_note(porfiry_mesh::NotePost {
            text: "hello".into(),
            audience: "friends".parse().unwrap(),
            reply_to: None,
        })
        .await
        .unwrap();
    eventually("the phone's note at the friend", || async {
        (kind_count(&friend_dir, ItemKind::Note) == 1).then_some(())
    })
    .await;
    assert_eq!(kind_count(&friend_dir, ItemKind::MindRecord), 0);
    assert_eq!(kind_count(&friend_dir, ItemKind::DeviceLink), 0);
    assert!(texts(&friend_dir, "SELECT text FROM diary_entries").is_empty());

    // Unlinked: the server learns, and a new entry stays on the phone.
    phone.unlink_device(server.peer_id()).await.unwrap();
    eventually("the unlink on the server", || async {
        server.devices().await.unwrap().is_empty().then_some(())
    })
    .await;
    exec(
        &phone_dir,
        "INSERT INTO diary_entries (text, created, updated) VALUES ('after the unlink', 3, 3)",
    );
    // A note posted after the entry reaches the server: the entry would
    // have been published before it, had it been published at all.
    phone
        .post_note(porfiry_mesh::NotePost {
            text: "after".into(),
            audience: "friends".parse().unwrap(),
            reply_to: None,
        })
        .await
        .unwrap();
    eventually("the later note on the server", || async {
        (kind_count(&server_dir, ItemKind::Note) == 2).then_some(())
    })
    .await;
    assert!(
        !texts(&server_dir, "SELECT text FROM diary_entries")
            .contains(&"after the unlink".to_owned())
    );

    invites.stop();
    for (node, join) in [
        (server, server_join),
        (phone, phone_join),
        (friend, friend_join),
    ] {
        node.shutdown();
        join.await.unwrap();
    }
}

/// The versions of diary records a node holds.
const DIARY_VERSIONS: &str = "SELECT COUNT(*) FROM mind_versions v
     JOIN mind_records r ON r.key = v.key WHERE r.tbl = 'diary'";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deletion_is_pruned_by_the_node_clock_once_its_time_to_live_has_passed() {
    let tmp = tempfile::tempdir().unwrap();
    let [server_dir, phone_dir] = ["server", "phone"].map(|n| DataDir::new(tmp.path().join(n)));
    let clock = ManualClock::new(SystemClock::utc().now());
    let listen: Vec<Multiaddr> = vec!["/ip4/127.0.0.1/tcp/0".parse().unwrap()];
    let (server, server_join) = Node::spawn(NodeConfig {
        clock: Arc::new(clock.clone()),
        ..NodeConfig::new(server_dir.clone(), Profile::Server, listen)
    })
    .unwrap();
    let (phone, phone_join) = spawn(&phone_dir);
    let invites = InviteService::start(&server).unwrap();
    wait_listening(&server).await;
    let code = server.link_device(Duration::from_secs(600)).await.unwrap();
    phone.join_device(&code).await.unwrap();

    exec(
        &phone_dir,
        "INSERT INTO diary_entries (text, created, updated) VALUES ('to forget', 1, 1)",
    );
    eventually("the entry on the server", || async {
        (texts(&server_dir, "SELECT text FROM diary_entries") == ["to forget"]).then_some(())
    })
    .await;
    exec(&phone_dir, "DELETE FROM diary_entries");
    eventually("the deletion on the server", || async {
        (texts(&server_dir, "SELECT text FROM diary_entries").is_empty()
            && count(&server_dir, DIARY_VERSIONS) == 2)
            .then_some(())
    })
    .await;
    let items = kind_count(&server_dir, ItemKind::MindRecord);
    let held = server.status().await.unwrap().items_held;

    // A day past the time to live by the server's clock; any commit wakes
    // its loop, which finds the pass due.
    clock.advance_ms(i64::try_from(TOMBSTONE_TTL_MS + MIND_PRUNE_EVERY_MS).unwrap());
    exec(
        &server_dir,
        "INSERT INTO config (key, value, updated) VALUES ('test.wake', '1', 1)",
    );
    eventually("the deletion pruned on the server", || async {
        (count(&server_dir, DIARY_VERSIONS) == 0).then_some(())
    })
    .await;
    assert_eq!(kind_count(&server_dir, ItemKind::MindRecord), items - 2);
    // The server's engine forgot them too, without a restart: it no
    // longer lists them to the phone (the loop answers `status` only
    // once the batch's turn is over).
    assert_eq!(server.status().await.unwrap().items_held, held - 2);
    assert_eq!(
        count(
            &server_dir,
            "SELECT COUNT(*) FROM mind_pruned WHERE deleted_at IS NOT NULL"
        ),
        1
    );
    // The pass's time is kept, so a restart waits a day before the next.
    let noted = format!(
        "SELECT COUNT(*) FROM config WHERE key = '{MIND_PRUNED_AT_KEY}' \
         AND CAST(value AS INTEGER) >= {TOMBSTONE_TTL_MS}"
    );
    eventually("the pass's time noted", || async {
        (count(&server_dir, &noted) == 1).then_some(())
    })
    .await;
    // The phone's clock has not moved: it keeps both.
    assert_eq!(count(&phone_dir, DIARY_VERSIONS), 2);

    // The phone, which keeps both, comes back and catches up: the pruned
    // items do not come back to the server, in its tables or its engine
    // (a version offered again is refused by storage and forgotten by the
    // engine: engine_io's unit test covers that path).
    let phone_id = phone.status().await.unwrap().peer_id;
    phone.shutdown();
    phone_join.await.unwrap();
    let pruned_at = clock.now().unix_ms();
    let (phone, phone_join) = spawn(&phone_dir);
    eventually("a catch-up with the phone back", || async {
        let status = server.status().await.ok()?;
        status
            .friends
            .iter()
            .any(|f| f.peer_id == phone_id && f.last_catchup_ms.is_some_and(|t| t >= pruned_at))
            .then_some(())
    })
    .await;
    assert_eq!(count(&server_dir, DIARY_VERSIONS), 0);
    assert_eq!(kind_count(&server_dir, ItemKind::MindRecord), items - 2);
    assert_eq!(server.status().await.unwrap().items_held, held - 2);

    invites.stop();
    for (node, join) in [(server, server_join), (phone, phone_join)] {
        node.shutdown();
        join.await.unwrap();
    }
}
