//! End to end over the real `porfiry` binary, no daemon: `club create`,
//! `add [--admin]`, `remove`, `leave`, `list`, `members`, `status` with
//! their JSON forms, `notes post --audience club:NAME`, and the refusals
//! (a duplicate club, an unknown club, a change this node has no right to
//! make, posting to a club this node is not in) that change nothing.

use porfiry_protocol::Audience;
use porfiry_tests::mesh_node::MeshNode;
use serde_json::Value;

fn json(node: &MeshNode, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    serde_json::from_str(&node.cli_ok(&all)).expect("JSON output")
}

fn fails(node: &MeshNode, args: &[&str]) -> String {
    let out = node.cli(args);
    assert!(!out.status.success(), "{args:?} should fail");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_founder_manages_its_club_and_posts_to_it() {
    let a = MeshNode::init("A");
    let b = MeshNode::init("B");
    let c = MeshNode::init("C");
    a.cli_ok(&["friends", "add", &b.peer_id, "--name", "bob"]);

    let created = json(&a, &["club", "create", "chess"]);
    let club = format!("chess@{}", a.peer_id);
    assert_eq!(created["club"], club.as_str());
    assert_eq!(created["founder"], a.peer_id.as_str());
    assert!(fails(&a, &["club", "create", "chess"]).contains("exists"));

    // A friend by name, a stranger by peer id, an admin.
    let added = json(&a, &["club", "add", "chess", "bob"]);
    assert_eq!(added["action"], "add");
    assert_eq!(added["target"], b.peer_id.as_str());
    assert_eq!(added["item_id"].as_str().unwrap().len(), 64);
    json(&a, &["club", "add", "chess", &c.peer_id, "--admin"]);

    let members = json(&a, &["club", "members", "chess"]);
    let rows = members.as_array().unwrap();
    assert_eq!(rows.len(), 3, "{members}");
    assert_eq!(rows[0]["peer"], a.peer_id.as_str());
    assert_eq!(rows[0]["role"], "founder");
    let bob = rows
        .iter()
        .find(|m| m["peer"] == b.peer_id.as_str())
        .unwrap();
    assert_eq!(bob["name"], "bob");
    assert_eq!(bob["role"], "member");
    let carol = rows
        .iter()
        .find(|m| m["peer"] == c.peer_id.as_str())
        .unwrap();
    assert_eq!(carol["role"], "admin");

    let list = json(&a, &["club", "list"]);
    assert_eq!(list[0]["club"], club.as_str());
    assert_eq!(list[0]["name"], "chess");
    assert_eq!(list[0]["role"], "founder");
    assert_eq!(list[0]["members"], 3);

    // C is no friend and has sent nothing: unreachable from here, and the
    // friend who is not a member... is none (B is one): only the path via
    // a member is missing.
    let status = json(&a, &["club", "status", "chess"]);
    assert_eq!(status["members"], 3);
    let unreachable = status["unreachable"].as_array().unwrap();
    assert_eq!(unreachable.len(), 1, "{status}");
    assert_eq!(unreachable[0]["peer"], c.peer_id.as_str());
    assert!(
        status["reachable"]
            .as_array()
            .unwrap()
            .contains(&Value::from(b.peer_id.as_str()))
    );

    // Posting: the short name resolves to NAME@FOUNDER.
    let posted = a.cli_ok(&["notes", "post", "--audience", "club:chess", "to the club"]);
    assert!(posted.contains(&format!("club:{club}")), "{posted}");
    let items = a.store().item_records().unwrap();
    assert!(
        items
            .iter()
            .any(|r| r.audience == Audience::Club(club.parse().unwrap())
                && r.kind.as_str() == "note"),
        "the note is a club item"
    );

    // Removing and leaving.
    let removed = json(&a, &["club", "remove", "chess", "bob"]);
    assert_eq!(removed["action"], "remove");
    let members = json(&a, &["club", "members", "chess"]);
    assert_eq!(members.as_array().unwrap().len(), 2);
    assert!(fails(&a, &["club", "leave", "chess"]).contains("may not leave"));
    let text = a.cli_ok(&["club", "list"]);
    assert!(text.contains(&club) && text.contains("2 members"), "{text}");
}

#[test]
fn refusals_are_clear_and_change_nothing() {
    let a = MeshNode::init("A");
    let b = MeshNode::init("B");
    // B knows no club called chess.
    assert!(fails(&b, &["club", "add", "chess", &a.peer_id]).contains("no club \"chess\""));
    assert!(
        fails(&b, &["notes", "post", "--audience", "club:chess", "hi"]).contains("no club"),
        "unknown club"
    );
    // A club named in full that B is not a member of.
    let club = format!("club:chess@{}", a.peer_id);
    let err = fails(&b, &["notes", "post", "--audience", &club, "hi"]);
    assert!(err.contains("not a member"), "{err}");
    // B may not change A's club (it is not an admin).
    let err = fails(
        &b,
        &["club", "add", &format!("chess@{}", a.peer_id), &b.peer_id],
    );
    assert!(err.contains("may not add"), "{err}");
    assert_eq!(b.shared_item_count(), 0, "nothing stored");
    assert!(fails(&b, &["club", "create", "Chess"]).contains("bad club name"));
    assert_eq!(b.cli_ok(&["club", "list"]).trim(), "no clubs");
    assert_eq!(json(&b, &["club", "list"]), Value::Array(vec![]));
}
