//! End to end (issue 12, names): `friends add --name`, `friends rename`,
//! names refused when taken or malformed (nothing written), every command
//! that takes a friend taking its name, and two real daemons where a note
//! from a named friend reads "from anna" and `@name` in a note travels as
//! the friend's peer id — while no item anyone signed carries a name.

use porfiry_tests::api_client::call;
use porfiry_tests::mesh_node::{MeshNode, wait_for};

/// Every signed item in `n`'s database, lower-cased as text (the envelope
/// bytes, lossily), for "does any item carry this name" checks.
fn payloads(n: &MeshNode) -> Vec<String> {
    let store = n.store();
    store
        .item_records()
        .unwrap()
        .iter()
        .map(|r| {
            let item = store.get_item(&r.id).unwrap().unwrap();
            String::from_utf8_lossy(&item.payload).to_lowercase()
        })
        .collect()
}

/// Runs a call that must fail and write nothing; returns its error line.
fn refused(n: &MeshNode, args: &[&str]) -> String {
    let snapshot = || {
        (
            n.cli_ok(&["friends", "list", "--json"]),
            n.cli_ok(&["notes", "list", "--json"]),
        )
    };
    let before = snapshot();
    let out = n.cli(args);
    assert!(!out.status.success(), "{args:?} succeeded");
    assert!(out.stdout.is_empty(), "{args:?} printed something");
    assert_eq!(snapshot(), before, "{args:?} changed the database");
    String::from_utf8_lossy(&out.stderr).trim().to_owned()
}

fn friends_json(n: &MeshNode) -> Vec<serde_json::Value> {
    let v: serde_json::Value =
        serde_json::from_str(&n.cli_ok(&["friends", "list", "--json"])).unwrap();
    v.as_array().unwrap().clone()
}

fn friend<'a>(list: &'a [serde_json::Value], peer: &str) -> &'a serde_json::Value {
    list.iter().find(|f| f["peer_id"] == peer).unwrap()
}

#[test]
fn names_are_given_renamed_refused_when_taken_and_taken_for_peer_ids() {
    let a = MeshNode::init("A");
    let b = MeshNode::init("B");
    let c = MeshNode::init("C");
    let out = a.cli_ok(&["friends", "add", &b.peer_id, "--name", "anna"]);
    assert!(
        out.starts_with(&format!("added friend {} as anna", b.peer_id)),
        "{out}"
    );
    a.cli_ok(&["friends", "add", &c.peer_id]);
    let list = friends_json(&a);
    assert_eq!(friend(&list, &b.peer_id)["name"], "anna");
    assert!(friend(&list, &c.peer_id)["name"].is_null());
    let text = a.cli_ok(&["friends", "list"]);
    assert!(text.contains(&format!("anna  {}", b.peer_id)), "{text}");

    // Taken (ignoring case) or malformed: refused, nothing written.
    let e = refused(&a, &["friends", "add", &c.peer_id, "--name", "ANNA"]);
    assert!(e.contains("taken") && e.contains(&b.peer_id), "{e}");
    let e = refused(&a, &["friends", "rename", &c.peer_id, "Anna"]);
    assert!(e.contains("taken") && e.contains(&b.peer_id), "{e}");
    let e = refused(&a, &["friends", "rename", &c.peer_id, "c@home"]);
    assert!(e.contains("friend name"), "{e}");
    let e = refused(&a, &["friends", "rename", &c.peer_id, " carl"]);
    assert!(e.contains("whitespace"), "{e}");
    let e = refused(&a, &["friends", "rename", &c.peer_id, &b.peer_id]);
    assert!(e.contains("peer id"), "{e}");
    let e = refused(&a, &["friends", "rename", "nobody", "zed"]);
    assert!(e.contains("no friend named \"nobody\""), "{e}");
    let e = refused(&a, &["friends", "remove", "nobody"]);
    assert!(e.contains("no friend named \"nobody\""), "{e}");

    // Rename by peer id and by name; re-adding without --name keeps it.
    let out = a.cli_ok(&["friends", "rename", &c.peer_id, "carl"]);
    assert!(out.contains("now called carl"), "{out}");
    a.cli_ok(&["friends", "rename", "ANNA", "Anya"]);
    a.cli_ok(&["friends", "add", &b.peer_id, "--group", "family"]);
    let list = friends_json(&a);
    assert_eq!(friend(&list, &b.peer_id)["name"], "Anya");
    assert_eq!(friend(&list, &c.peer_id)["name"], "carl");
    // The old name is free again.
    a.cli_ok(&["friends", "rename", "carl", "anna"]);
    a.cli_ok(&["friends", "rename", "anna", "carl"]);

    // Commands take the name.
    a.cli_ok(&["friends", "offload", "anya", "on"]);
    assert_eq!(friend(&friends_json(&a), &b.peer_id)["allow_offload"], true);
    let status = a.cli_ok(&["status"]);
    assert!(status.contains(&format!("Anya  {}", b.peer_id)), "{status}");
    let status: serde_json::Value = serde_json::from_str(&a.cli_ok(&["status", "--json"])).unwrap();
    assert_eq!(
        friend(status["friends"].as_array().unwrap(), &b.peer_id)["name"],
        "Anya"
    );

    let out = a.cli_ok(&["notes", "post", "--audience", "peer:anya", "for you"]);
    assert!(out.contains(&format!("to peer:{}", b.peer_id)), "{out}");
    // Names stay here: the message's item names B by peer id only.
    let signed = payloads(&a);
    assert_eq!(signed.len(), 1);
    assert!(signed[0].contains(&b.peer_id.to_lowercase()));
    assert!(!signed[0].contains("anya"), "a name was signed");
    let e = refused(&a, &["notes", "post", "--audience", "peer:zed", "lost"]);
    assert!(e.contains("no friend named \"zed\""), "{e}");
    a.cli_ok(&["notes", "post", "hi @ANYA, @carl and @someone"]);
    let notes: serde_json::Value =
        serde_json::from_str(&a.cli_ok(&["notes", "list", "--json"])).unwrap();
    let last = notes.as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        last["mentions"],
        serde_json::json!([b.peer_id, c.peer_id, "someone"])
    );
    assert_eq!(last["text"], "hi @ANYA, @carl and @someone");
    assert!(last["name"].is_null(), "own notes have no author name");

    let out = a.cli_ok(&["friends", "remove", "carl"]);
    assert!(out.contains(&c.peer_id), "{out}");
    assert_eq!(friends_json(&a).len(), 1);
}

#[test]
fn a_note_from_a_named_friend_reads_from_its_name_and_mentions_travel_as_peer_ids() {
    let mut x = MeshNode::init("X");
    let mut y = MeshNode::init("Y");
    x.start_server(0);
    x.cli_ok(&["friends", "add", &y.peer_id, "--name", "zelda"]);
    y.befriend(&x, true, &[]);
    y.cli_ok(&["friends", "rename", &x.peer_id, "homebase"]);
    y.start_phone();

    y.post("friends", "ping @homebase #names");
    wait_for("X to get Y's note", || y_note(&x, &y).is_some());
    let note = y_note(&x, &y).unwrap();
    assert_eq!(note["origin_author"], y.peer_id.as_str());
    assert_eq!(note["name"], "zelda");
    // Y's name for X left Y only as X's peer id.
    assert_eq!(note["mentions"], serde_json::json!([x.peer_id]));
    let text = x.cli_ok(&["notes", "list"]);
    assert!(text.contains("from zelda: ping @homebase #names"), "{text}");
    assert!(!text.contains(&format!("from {}", y.peer_id)), "{text}");

    // X writes to Y by name; Y shows it from its own name for X.
    x.post("peer:Zelda", "welcome back");
    wait_for("Y to get X's message", || y.has_note(&x, "welcome back"));
    let text = y.cli_ok(&["notes", "list"]);
    assert!(text.contains("from homebase: welcome back"), "{text}");
    let status: serde_json::Value = serde_json::from_str(&x.cli_ok(&["status", "--json"])).unwrap();
    assert_eq!(status["friends"][0]["name"], "zelda");

    // The API shows and takes names too.
    let (addr, token) = (x.api_address(), x.api_token());
    let notes = call(addr, "GET", "/api/notes?origin=friends", Some(&token), "").json();
    assert_eq!(notes[0]["author"], y.peer_id.as_str());
    assert_eq!(notes[0]["author_name"], "zelda");
    let taken = serde_json::json!({"peer": x.peer_id, "name": "ZELDA"}).to_string();
    let r = call(addr, "POST", "/api/friends", Some(&token), &taken);
    assert_eq!(r.status, 400, "{}", r.body);
    let renamed = serde_json::json!({"peer": y.peer_id, "name": "zed"}).to_string();
    let r = call(addr, "POST", "/api/friends", Some(&token), &renamed);
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.json()["name"], "zed");
    let dm = r#"{"text":"via the API","audience":"peer:Zed"}"#;
    let r = call(addr, "POST", "/api/notes", Some(&token), dm);
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.json()["audience"], format!("peer:{}", y.peer_id));
    let r = call(
        addr,
        "POST",
        "/api/notes",
        Some(&token),
        r#"{"text":"x","audience":"peer:nobody"}"#,
    );
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body.contains("no friend named"), "{}", r.body);
    wait_for("Y to get the API message", || y.has_note(&x, "via the API"));

    // X's name for Y is in no item on either side (Y's own name for X is
    // in the text Y wrote, which travels as written).
    for node in [&x, &y] {
        let signed = payloads(node);
        assert!(signed.len() >= 2, "{}", node.name);
        assert!(signed.iter().all(|p| !p.contains("zelda")), "{}", node.name);
    }
    let r = call(addr, "DELETE", "/api/friends/nobody", Some(&token), "");
    assert_eq!(r.status, 404, "{}", r.body);
    let r = call(addr, "DELETE", "/api/friends/ZED", Some(&token), "");
    assert_eq!(r.status, 204, "{}", r.body);
    assert!(friends_json(&x).is_empty());
    assert!(x.is_running() && y.is_running());
}

/// Y's one note as X's `notes list --json` shows it.
fn y_note(x: &MeshNode, y: &MeshNode) -> Option<serde_json::Value> {
    let v: serde_json::Value =
        serde_json::from_str(&x.cli_ok(&["notes", "list", "--json"])).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .find(|n| n["origin_author"] == y.peer_id.as_str())
        .cloned()
}
