//! The node endpoints over a real node (`Node::spawn`, SQLite on disk).

use std::sync::Arc;

use axum::http::StatusCode;

use super::fakes::*;
use crate::adapters::NodeAdapter;
use crate::{ApiState, ApiToken};
use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::net::Profile;
use porfiry_mesh::node::{Node, NodeConfig, NodeHandle};

/// The API's state over `node`, with the test token and clock.
fn state_for(node: &NodeHandle) -> ApiState {
    ApiState::new(
        Arc::new(NodeAdapter::new(node.clone())),
        None,
        ApiToken::from_secret(TOKEN),
        Arc::new(clock()),
    )
}

#[tokio::test]
async fn notes_friends_and_status_go_through_to_the_node() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path().join("node"));
    let (node, join) = Node::spawn(NodeConfig::new(dir, Profile::Phone, Vec::new())).unwrap();
    let state = state_for(&node);

    let (status, posted) = call(
        &state,
        request(
            "POST",
            "/api/notes",
            r#"{"text":"hello #api","audience":"private"}"#,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{posted}");
    assert_eq!(posted["audience"], "private");
    let (status, json) = call(
        &state,
        request(
            "POST",
            "/api/notes",
            r#"{"text":"x","audience":"everyone"}"#,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("everyone"),
        "{json}"
    );
    let (status, notes) = call(&state, request("GET", "/api/notes?origin=own", "")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(notes[0]["text"], "hello #api");
    let body = r#"{"text":"second","audience":"private"}"#;
    let (status, _) = call(&state, request("POST", "/api/notes", body)).await;
    assert_eq!(status, StatusCode::CREATED);
    let path = "/api/notes?origin=own&limit=1";
    let (_, oldest) = call(&state, request("GET", path, "")).await;
    assert_eq!(oldest[0]["text"], "hello #api");
    let (_, newest) = call(&state, request("GET", &format!("{path}&newest=true"), "")).await;
    assert_eq!(newest[0]["text"], "second");
    let (status, _) = call(&state, request("GET", "/api/notes?origin=mars", "")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    let (status, json) = call(
        &state,
        request("POST", "/api/friends", r#"{"peer":"not-a-peer"}"#),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{json}");
    let stranger = "12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA";
    let (status, json) = call(
        &state,
        request("DELETE", &format!("/api/friends/{stranger}"), ""),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{json}");

    let (status, json) = call(&state, request("GET", "/api/status", "")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(json["peer_id"], node.peer_id());
    assert_eq!(json["model"], serde_json::Value::Null);
    // The file's size: at least the pages the schema takes.
    let bytes = json["database_bytes"].as_u64().expect("database_bytes");
    assert!(bytes >= 4096, "{json}");

    node.shutdown();
    join.await.unwrap();
}

#[tokio::test]
async fn a_note_posted_to_a_club_by_its_short_name_is_for_that_club() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path().join("node"));
    let db = dir.db_path();
    let (node, join) = Node::spawn(NodeConfig::new(dir, Profile::Phone, Vec::new())).unwrap();
    let club: porfiry_protocol::ClubRef = format!("chess@{}", node.peer_id()).parse().unwrap();
    porfiry_storage::Store::open(&db)
        .unwrap()
        .create_club(&club, 1)
        .unwrap();
    let state = state_for(&node);
    let (status, posted) = call(
        &state,
        request(
            "POST",
            "/api/notes",
            r#"{"text":"blitz on Thursday","audience":"club:chess"}"#,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{posted}");
    assert_eq!(posted["audience"], format!("club:{club}"));
    // An unknown club is the caller's mistake, named as such.
    let (status, json) = call(
        &state,
        request("POST", "/api/notes", r#"{"text":"x","audience":"club:go"}"#),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{json}");
    assert!(
        json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no club \"go\"")
    );
    node.shutdown();
    join.await.unwrap();
}

#[tokio::test]
async fn the_pages_calls_invite_rename_permit_read_the_mind_join_and_stream_changes_on_a_real_node()
{
    use porfiry_mesh::net::{LINKS_FILE_NAME, Link, LinkRecord, LinksFile};
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path().join("node"));
    let links = dir.root().join(LINKS_FILE_NAME);
    let listen = vec!["/ip4/127.0.0.1/tcp/0".parse().unwrap()];
    let (node, join) = Node::spawn(NodeConfig::new(dir.clone(), Profile::Server, listen)).unwrap();
    // The code carries the addresses the node listens on.
    node.listening().wait_for(|l| !l.is_empty()).await.unwrap();
    let state = ApiState::new(
        Arc::new(NodeAdapter::with_links_file(node.clone(), links.clone())),
        None,
        ApiToken::from_secret(TOKEN),
        Arc::new(clock()),
    );
    let mut changes = state.node().changes().expect("a real node reports changes");
    let before = *changes.borrow_and_update();

    let (status, made) = call(
        &state,
        request(
            "POST",
            "/api/invitations",
            r#"{"name":"carol","valid_for":"1h"}"#,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    assert!(
        made["code"].as_str().unwrap().starts_with("porfiry:"),
        "{made}"
    );
    assert!(made["qr_svg"].as_str().unwrap().contains("<svg"));
    changes.changed().await.unwrap();
    assert!(
        *changes.borrow() > before,
        "the invitation was a database change"
    );
    let (status, bad) = call(
        &state,
        request("POST", "/api/invitations", r#"{"valid_for":"1y"}"#),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");

    let friend = "12D3KooWQiz72eyQExYNjKFgUEu7YqqgjPgqMuqXJvcY7PWQ96dW";
    let body = format!(r#"{{"peer":"{friend}","addresses":[]}}"#);
    let (status, _) = call(&state, request("POST", "/api/friends", &body)).await;
    assert_eq!(status, StatusCode::CREATED);
    let path = format!("/api/friends/{friend}");
    let (status, changed) = call(
        &state,
        request("PATCH", &path, r#"{"name":"bob","allow_offload":true}"#),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(changed["name"], "bob");
    assert_eq!(changed["allow_offload"], true);
    let (status, _) = call(
        &state,
        request("PATCH", "/api/friends/nobody", r#"{"name":"x"}"#),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = call(&state, request("PATCH", &path, "{}")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    // The friend's link as the mesh last wrote it.
    let (_, friends) = call(&state, request("GET", "/api/friends", "")).await;
    assert_eq!(friends[0]["link"]["link"], "not connected", "{friends}");
    let mut file = LinksFile::default();
    let record: LinkRecord =
        serde_json::from_value(serde_json::json!({"link": "relayed", "since_ms": 7})).unwrap();
    assert_eq!(record.link, Link::Relayed);
    file.friends.insert(friend.to_owned(), record);
    file.write(&links).unwrap();
    let (_, friends) = call(&state, request("GET", "/api/friends", "")).await;
    assert_eq!(friends[0]["link"]["link"], "relayed", "{friends}");
    assert_eq!(friends[0]["link"]["since_ms"], 7);

    let club = node.create_club("chess").await.unwrap();
    let (status, clubs) = call(&state, request("GET", "/api/clubs", "")).await;
    assert_eq!(status, StatusCode::OK, "{clubs}");
    assert_eq!(clubs[0]["club"], club.as_str(), "{clubs}");
    assert_eq!(clubs[0]["role"], "founder");

    // What the core wrote, as the Mind tab reads it.
    node.db()
        .write(|s| -> Result<(), porfiry_storage::StorageError> {
            use porfiry_storage::{DiaryEntry, Goal, Task, TickRecord};
            let goal = s.add(
                &Goal {
                    title: "tidy the garden".into(),
                    ..Default::default()
                },
                1,
            )?;
            s.add(
                &Task {
                    goal_id: Some(goal),
                    title: "buy seeds".into(),
                    ..Default::default()
                },
                2,
            )?;
            s.add(
                &TickRecord {
                    tick: 1,
                    mode: "auto".into(),
                    commands_total: 2,
                    commands_executed: 1,
                    ..Default::default()
                },
                3,
            )?;
            s.add(
                &DiaryEntry {
                    text: "the garden needs water".into(),
                    ..Default::default()
                },
                4,
            )?;
            Ok(())
        })
        .await
        .unwrap()
        .unwrap();
    let (status, mind) = call(&state, request("GET", "/api/mind", "")).await;
    assert_eq!(status, StatusCode::OK, "{mind}");
    assert_eq!(mind["goals"][0]["title"], "tidy the garden", "{mind}");
    assert_eq!(mind["tasks"][0]["goal_id"], mind["goals"][0]["id"]);
    assert_eq!(mind["ticks"][0]["commands_executed"], 1);
    assert_eq!(mind["diary"][0]["text"], "the garden needs water");
    assert_eq!(mind["paused"], false);
    let mut events = node.events().subscribe();
    let (status, mind) = call(&state, request("POST", "/api/mind", r#"{"paused":true}"#)).await;
    assert_eq!(status, StatusCode::OK, "{mind}");
    assert_eq!(mind["paused"], true);
    assert_eq!(
        events.recv().await.unwrap(),
        porfiry_mesh::events::CoreEvent::ThinkingSwitched,
        "a paused core is told to look again"
    );
    let (status, _) = call(&state, request("POST", "/api/mind", r#"{"paused":"yes"}"#)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    let (status, refused) = call(
        &state,
        request("POST", "/api/join", r#"{"code":"porfiry:garbage"}"#),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");

    node.shutdown();
    join.await.unwrap();
}

/// A family server's size: 5,000 notes of 4 KB (20 MB of text).
const FAMILY_NOTES: usize = 5_000;

#[tokio::test]
async fn the_feed_of_a_family_server_gets_its_newest_notes_of_thousands() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path().join("node"));
    let (node, join) = Node::spawn(NodeConfig::new(dir, Profile::Phone, Vec::new())).unwrap();
    node.db()
        .write(|s| {
            let notes: Vec<porfiry_storage::Note> = (0..FAMILY_NOTES)
                .map(|i| porfiry_storage::Note {
                    text: format!("note {i:05} {}", "x".repeat(4_000)),
                    ..Default::default()
                })
                .collect();
            s.add_many(&notes, 1_000)
        })
        .await
        .unwrap()
        .unwrap();
    let state = state_for(&node);
    let started = std::time::Instant::now();
    let (status, newest) = call(
        &state,
        request("GET", "/api/notes?newest=true&limit=200", ""),
    )
    .await;
    println!(
        "newest 200 of {FAMILY_NOTES} notes in {:?}",
        started.elapsed()
    );
    assert_eq!(status, StatusCode::OK);
    let list = newest.as_array().unwrap();
    assert_eq!(list.len(), 200);
    let head = |n: &serde_json::Value| n["text"].as_str().unwrap()[..10].to_owned();
    assert_eq!(
        head(&list[0]),
        "note 04800",
        "oldest of the newest 200 first"
    );
    assert_eq!(head(&list[199]), "note 04999");
    let (_, oldest) = call(&state, request("GET", "/api/notes?limit=200", "")).await;
    assert_eq!(head(&oldest[0]), "note 00000");
    node.shutdown();
    join.await.unwrap();
}

#[tokio::test]
async fn a_reply_is_signed_with_its_reply_to_and_listed_under_the_note_it_answers() {
    use porfiry_protocol::{Body, ItemId, VerifiedItem};
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path().join("node"));
    let (node, join) = Node::spawn(NodeConfig::new(dir, Profile::Phone, Vec::new())).unwrap();
    let state = state_for(&node);
    let body = r#"{"text":"Dinner at seven, everyone","audience":"friends"}"#;
    let (status, parent) = call(&state, request("POST", "/api/notes", body)).await;
    assert_eq!(status, StatusCode::CREATED, "{parent}");
    let parent_item = parent["item_id"].as_str().unwrap().to_owned();

    let body = format!(r#"{{"text":"See you there #dinner","reply_to":"{parent_item}"}}"#);
    let (status, reply) = call(&state, request("POST", "/api/notes", &body)).await;
    assert_eq!(status, StatusCode::CREATED, "{reply}");
    assert_eq!(reply["reply_to"], parent_item.as_str());
    assert_eq!(reply["audience"], "friends", "the default audience");
    // Signed as it is written (and handed to the mesh at once), so the
    // answer names its item; no publishing pass is waited for.
    let reply_item = reply["item_id"]
        .as_str()
        .expect("a reply's item id at once");
    let (_, notes) = call(&state, request("GET", "/api/notes?limit=500", "")).await;
    let listed = notes
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["id"] == reply["id"])
        .cloned()
        .unwrap();
    assert_eq!(listed["item_id"], reply_item, "{listed}");
    assert_eq!(listed["reply_to"], parent_item.as_str(), "{listed}");
    assert_eq!(listed["hashtags"][0], "dinner");
    let answered = &listed["reply_to_note"];
    assert_eq!(answered["excerpt"], "Dinner at seven, everyone", "{listed}");
    assert_eq!(answered["author"], serde_json::Value::Null, "our own note");
    // The signed item carries it: a friend's node sees what it answers.
    let item: ItemId = listed["item_id"].as_str().unwrap().parse().unwrap();
    let envelope = node
        .db()
        .read(move |s| s.item_page(&[item]))
        .await
        .unwrap()
        .unwrap()
        .pop()
        .flatten()
        .expect("the reply's item is stored");
    let verified = VerifiedItem::decode(&envelope, u64::MAX / 2).unwrap();
    match verified.body() {
        Body::Note(n) => assert_eq!(n.reply_to, Some(parent_item.parse().unwrap())),
        other => panic!("not a note: {other:?}"),
    }
    // A plain note has no reply fields set.
    let (_, notes) = call(&state, request("GET", "/api/notes", "")).await;
    assert_eq!(notes[0]["reply_to"], serde_json::Value::Null);
    assert_eq!(notes[0]["reply_to_note"], serde_json::Value::Null);

    // Refusals: a note this node does not hold, an empty reply, a direct
    // reply to a stranger, a club this node is not in.
    let unknown = "cd".repeat(32);
    for (body, says) in [
        (
            format!(r#"{{"text":"hi","reply_to":"{unknown}"}}"#),
            "holds no note with that item id",
        ),
        (
            format!(r#"{{"text":"  ","reply_to":"{parent_item}"}}"#),
            "empty",
        ),
        (
            format!(
                r#"{{"text":"hi","reply_to":"{parent_item}","audience":"peer:12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA"}}"#
            ),
            "not a friend",
        ),
        (
            format!(r#"{{"text":"hi","reply_to":"{parent_item}","audience":"club:go"}}"#),
            "no club",
        ),
    ] {
        let (status, json) = call(&state, request("POST", "/api/notes", &body)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {json}");
        let message = json["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{body}: {message}");
    }
    node.shutdown();
    join.await.unwrap();
}

#[tokio::test]
async fn the_feed_filters_by_audience_a_club_by_its_full_or_short_name() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path().join("node"));
    let (node, join) = Node::spawn(NodeConfig::new(dir, Profile::Phone, Vec::new())).unwrap();
    let club = node.create_club("chess").await.unwrap();
    let state = state_for(&node);
    for (text, audience) in [
        ("dinner", "friends"),
        ("blitz", "club:chess"),
        ("news", "public"),
        ("garden", "group:family"),
        ("rook", "club:chess"),
    ] {
        let body = format!(r#"{{"text":"{text}","audience":"{audience}"}}"#);
        let (status, json) = call(&state, request("POST", "/api/notes", &body)).await;
        assert_eq!(status, StatusCode::CREATED, "{json}");
    }
    let texts = |notes: &serde_json::Value| -> Vec<String> {
        notes
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["text"].as_str().unwrap().to_owned())
            .collect()
    };
    let full = format!("club:{}", club.as_str()).replace('@', "%40");
    for (filter, want) in [
        (full.as_str(), vec!["blitz", "rook"]),
        ("club:chess", vec!["blitz", "rook"]),
        ("friends", vec!["dinner"]),
        ("public", vec!["news"]),
        ("group:family", vec!["garden"]),
        ("group:work", vec![]),
    ] {
        let path = format!("/api/notes?newest=true&audience={filter}");
        let (status, notes) = call(&state, request("GET", &path, "")).await;
        assert_eq!(status, StatusCode::OK, "{filter}: {notes}");
        assert_eq!(texts(&notes), want, "{filter}");
    }
    let (_, newest) = call(
        &state,
        request(
            "GET",
            "/api/notes?newest=true&limit=1&audience=club:chess",
            "",
        ),
    )
    .await;
    assert_eq!(
        texts(&newest),
        ["rook"],
        "the newest of the club's, not of all"
    );
    let (status, json) = call(&state, request("GET", "/api/notes?audience=club:go", "")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{json}");
    assert!(
        json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no club \"go\""),
        "{json}"
    );
    node.shutdown();
    join.await.unwrap();
}

#[tokio::test]
async fn a_signed_in_browser_stays_signed_in_when_the_node_restarts_and_only_hashes_are_kept() {
    use axum::body::Body;
    use axum::http::Request;
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::new(tmp.path().join("node"));
    let page = |cookie: Option<&str>| {
        let mut r = Request::builder()
            .method("GET")
            .uri("/")
            .header("host", "127.0.0.1:4580");
        if let Some(c) = cookie {
            r = r.header("cookie", c);
        }
        r.body(Body::empty()).unwrap()
    };
    let start = |dir: DataDir| {
        let (node, join) = Node::spawn(NodeConfig::new(dir, Profile::Phone, Vec::new())).unwrap();
        let state = state_for(&node);
        (node, join, state)
    };

    let (node, join, state) = start(dir.clone());
    let code = state.issue_login_code().unwrap();
    let login = Request::builder()
        .uri(format!("/login?code={code}"))
        .header("host", "127.0.0.1:4580")
        .body(Body::empty())
        .unwrap();
    let response = send(&state, login).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let cookie = response.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let value = cookie.split('=').nth(1).unwrap().to_owned();
    assert_eq!(
        send(&state, page(Some(&cookie))).await.status(),
        StatusCode::OK
    );
    node.shutdown();
    join.await.unwrap();

    // What the database holds is the session's hash, never the cookie.
    let store = porfiry_storage::Store::open(dir.db_path()).unwrap();
    let kept = store
        .config_value(crate::adapters::PAGE_SESSIONS_KEY)
        .unwrap()
        .expect("the session is kept");
    let text = kept.to_string();
    assert!(!text.contains(&value), "{text}");
    assert_eq!(kept.as_array().unwrap().len(), 1, "{text}");
    drop(store);

    // The same database file, a new node and API state: the cookie works.
    let (node, join, state) = start(dir);
    assert_eq!(
        send(&state, page(Some(&cookie))).await.status(),
        StatusCode::UNAUTHORIZED,
        "not before the sessions are restored"
    );
    assert_eq!(state.restore_page_sessions().await.unwrap(), 1);
    assert_eq!(
        send(&state, page(Some(&cookie))).await.status(),
        StatusCode::OK
    );
    assert_eq!(
        send(&state, page(Some("porfiry_4580=0123"))).await.status(),
        StatusCode::UNAUTHORIZED
    );
    node.shutdown();
    join.await.unwrap();
}
