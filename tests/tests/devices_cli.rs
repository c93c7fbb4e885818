//! End to end over real `porfiry` processes on loopback: a person's devices
//! (issue 45). The server runs `porfiry run` and makes a code with
//! `devices link`; the phone redeems it with `devices join` (its daemon
//! off), then runs too; a third node is a friend of both and nothing more.
//!
//! ```text
//!   server ◄══ devices ══► phone        (mind_record, device_link)
//!        ▲                   ▲
//!        └──── friend ───────┘          (notes only)
//! ```
//!
//! Checked: `devices list --json` on both sides; a code used twice, a
//! device code given to `join` and a friend's code given to `devices join`
//! are refused saying why, storing nothing; a diary entry and a goal that
//! another process writes into the phone's SQLite file reach the server's
//! file and never the friend's; one entry edited on both sides while the
//! phone is off converges to one text with a `resolve_conflict:` task on
//! each; `devices unlink` on the phone reaches the server and stops the flow.

use porfiry_protocol::ItemKind;
use porfiry_storage::DB_FILE_NAME;
use porfiry_tests::mesh_node::{MeshNode, wait_for};
use serde_json::Value;

/// The keys every `devices list --json` entry has.
const LISTING_KEYS: [&str; 4] = ["peer", "name", "linked_since_ms", "last_sync_ms"];

/// `devices link` on `node`: the code, alone on the last line.
fn link_code(node: &MeshNode) -> String {
    let out = node.cli_ok(&["devices", "link", "--valid-for", "1h"]);
    let code = out.lines().last().unwrap_or_default().trim().to_owned();
    assert!(code.starts_with("porfiry:"), "{out}");
    assert!(!code.contains(' '), "the code is alone on its line: {out}");
    code
}

/// `invite` on `node`: a friend's code (its first line).
fn friend_code(node: &MeshNode) -> String {
    let out = node.cli_ok(&["invite", "--no-qr"]);
    let code = out.lines().next().unwrap_or_default().trim().to_owned();
    assert!(code.starts_with("porfiry:"), "{out}");
    code
}

/// Runs `args` on `node` expecting a refusal: non-zero exit, nothing on
/// stdout; returns stderr.
fn refused(node: &MeshNode, args: &[&str]) -> String {
    let out = node.cli(args);
    assert!(!out.status.success(), "{args:?} succeeded");
    assert!(
        out.stdout.is_empty(),
        "{args:?} printed {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).trim().to_owned()
}

/// `devices list --json` on `node`, each entry checked for its keys.
fn devices(node: &MeshNode) -> Vec<Value> {
    let out = node.cli_ok(&["devices", "list", "--json"]);
    let list: Value = serde_json::from_str(&out).expect("devices list --json is JSON");
    let list = list.as_array().expect("a JSON array").clone();
    for entry in &list {
        for key in LISTING_KEYS {
            assert!(entry.get(key).is_some(), "no {key} in {entry}");
        }
        assert!(entry["peer"].is_string(), "{entry}");
        assert!(entry["name"].is_string(), "{entry}");
        assert!(entry["linked_since_ms"].is_u64(), "{entry}");
        assert!(
            entry["last_sync_ms"].is_null() || entry["last_sync_ms"].is_u64(),
            "{entry}"
        );
    }
    list
}

/// The peer ids `devices list --json` shows on `node`.
fn device_peers(node: &MeshNode) -> Vec<String> {
    devices(node)
        .iter()
        .map(|d| d["peer"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// A second connection to `node`'s SQLite file: another process's writes
/// and reads, as the core, the API or a user's tool would make them.
fn sqlite(node: &MeshNode) -> rusqlite::Connection {
    rusqlite::Connection::open(node.dir().join(DB_FILE_NAME)).expect("the database opens")
}

fn exec(node: &MeshNode, sql: &str) {
    sqlite(node).execute_batch(sql).expect("the write succeeds");
}

/// The first column of every row `sql` returns on `node`'s file.
fn texts(node: &MeshNode, sql: &str) -> Vec<String> {
    let conn = sqlite(node);
    let mut stmt = conn.prepare(sql).expect("the query prepares");
    stmt.query_map([], |r| r.get(0))
        .expect("the query runs")
        .collect::<Result<_, _>>()
        .expect("text rows")
}

/// The `resolve_conflict:` tasks on `node`: (title, description), by title.
fn conflict_tasks(node: &MeshNode) -> Vec<(String, String)> {
    let conn = sqlite(node);
    let mut stmt = conn
        .prepare(
            "SELECT title, description FROM tasks
             WHERE title LIKE 'resolve_conflict:%' ORDER BY title, description",
        )
        .expect("the query prepares");
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("the query runs")
        .collect::<Result<_, _>>()
        .expect("task rows")
}

fn kind_count(node: &MeshNode, kind: ItemKind) -> usize {
    node.store().items_of_kind(kind).expect("items read").len()
}

/// The text of the diary entry that began as `went to the sea` on `node`.
fn sea_entry(node: &MeshNode) -> Vec<String> {
    texts(
        node,
        "SELECT text FROM diary_entries WHERE text LIKE 'went to the sea%' ORDER BY id",
    )
}

#[test]
fn devices_share_the_memory_a_friend_of_both_gets_none_and_unlink_stops_it() {
    let mut server = MeshNode::init("server");
    let mut phone = MeshNode::init("phone");
    let mut friend = MeshNode::init("friend");
    // Only tries codes: never runs, never links.
    let other = MeshNode::init("other");

    // The friend of both: it knows them, they dial it.
    friend.befriend(&server, false, &[]);
    friend.befriend(&phone, false, &[]);
    friend.start_server(0);
    server.befriend(&friend, true, &[]);
    server.start_server_recording_addresses();

    // Linking: the phone's daemon is off, the server's runs.
    let code = link_code(&server);
    let joined = phone.cli_ok(&["devices", "join", &code]);
    assert!(joined.contains("linked"), "{joined}");
    assert!(joined.contains(&server.peer_id), "{joined}");
    server.wait_logged(&["device linked", &phone.peer_id]);

    // Both sides list the other, with the one link they both signed.
    let on_server = devices(&server);
    let on_phone = devices(&phone);
    assert_eq!(on_server.len(), 1, "{on_server:?}");
    assert_eq!(on_phone.len(), 1, "{on_phone:?}");
    assert_eq!(on_server[0]["peer"], phone.peer_id.as_str());
    assert_eq!(on_phone[0]["peer"], server.peer_id.as_str());
    assert_eq!(
        on_server[0]["linked_since_ms"],
        on_phone[0]["linked_since_ms"]
    );
    assert!(on_server[0]["linked_since_ms"].as_u64().unwrap() > 0);

    // Used twice by the same phone: it is a friend now, so it reaches the
    // server even with no invitation open (the door shut after the link).
    server.wait_logged(&["invitation door", "open=false"]);
    let err = refused(&phone, &["devices", "join", &code]);
    assert!(err.contains("used already"), "{err}");
    assert_eq!(devices(&phone).len(), 1);

    refusals(&server, &other, &code);
    assert_eq!(device_peers(&server), vec![phone.peer_id.clone()]);

    phone.befriend(&friend, true, &[]);
    phone.start_phone();
    server.wait_logged(&["friend connected", &phone.peer_id]);
    friend.wait_logged(&["friend connected", &phone.peer_id]);
    friend.wait_logged(&["friend connected", &server.peer_id]);

    memory_reaches_the_server_never_the_friend(&server, &phone, &friend);
    edits_apart_converge_with_a_conflict_task(&server, &mut phone);
    unlink_reaches_the_server_and_stops_the_flow(&server, &phone);

    for node in [&mut server, &mut phone, &mut friend] {
        let exit = node.interrupt();
        assert!(exit.status.success(), "{}: {}", node.name, exit.stderr);
    }
}

/// `other`, a stranger to the server, tries `used` (redeemed already), a
/// fresh device code with `join` and a friend's code with `devices join`:
/// each is refused saying why, and nothing is stored on `other`. The two
/// fresh codes are made first: a stranger reaches the server only while
/// an invitation is open (its door), as in `mesh_invite`.
fn refusals(server: &MeshNode, other: &MeshNode, used: &str) {
    let device = link_code(server);
    let invitation = friend_code(server);

    let err = refused(other, &["devices", "join", used]);
    assert!(err.contains("used already"), "{err}");

    let err = refused(other, &["join", &device]);
    assert!(err.contains("use `porfiry devices join"), "{err}");

    let err = refused(other, &["devices", "join", &invitation]);
    assert!(err.contains("invites a friend"), "{err}");

    assert!(device_peers(other).is_empty());
    assert!(other.store().friends().unwrap().is_empty());
    assert_eq!(kind_count(other, ItemKind::DeviceLink), 0);
}

/// A diary entry and a goal written into the phone's file by another
/// process reach the server's file; the friend, shown connected by a note
/// the phone posts afterwards, holds no memory item, link or row.
fn memory_reaches_the_server_never_the_friend(
    server: &MeshNode,
    phone: &MeshNode,
    friend: &MeshNode,
) {
    exec(
        phone,
        "INSERT INTO diary_entries (text, created, updated) VALUES ('went to the sea', 1, 1);
         INSERT INTO goals (title, created, updated) VALUES ('learn to swim', 1, 1);",
    );
    wait_for("the phone's diary entry and goal on the server", || {
        sea_entry(server) == ["went to the sea"]
            && texts(server, "SELECT title FROM goals") == ["learn to swim"]
    });
    assert!(kind_count(server, ItemKind::MindRecord) >= 2);

    // Posted after the memory was on the server, so after it was sent.
    phone.post("friends", "N: hello from the phone");
    wait_for("the phone's note at the friend", || {
        friend.has_note(phone, "N: hello from the phone")
    });
    assert_eq!(kind_count(friend, ItemKind::MindRecord), 0);
    assert_eq!(kind_count(friend, ItemKind::DeviceLink), 0);
    assert!(texts(friend, "SELECT text FROM diary_entries").is_empty());
    assert!(texts(friend, "SELECT title FROM goals").is_empty());
    assert!(device_peers(friend).is_empty());
}

/// The entry is edited on both sides while the phone's daemon is off; once
/// it runs again both files show one of the two texts, the same, and each
/// holds one `resolve_conflict:` task quoting both.
fn edits_apart_converge_with_a_conflict_task(server: &MeshNode, phone: &mut MeshNode) {
    let exit = phone.terminate();
    assert!(exit.status.success(), "phone: {}", exit.stderr);
    exec(
        phone,
        "UPDATE diary_entries SET text = 'went to the sea by train', updated = 2
         WHERE text = 'went to the sea'",
    );
    exec(
        server,
        "UPDATE diary_entries SET text = 'went to the sea by car', updated = 2
         WHERE text = 'went to the sea'",
    );
    // The server's daemon signs its edit while the phone is away.
    wait_for("the server to publish its edit", || {
        texts(server, "SELECT CAST(count(*) AS TEXT) FROM mind_outbox") == ["0"]
    });

    phone.start_phone();
    let edits = ["went to the sea by train", "went to the sea by car"];
    wait_for(
        "both edits to converge with a conflict task on each side",
        || {
            let (s, p) = (sea_entry(server), sea_entry(phone));
            s == p
                && s.len() == 1
                && edits.contains(&s[0].as_str())
                && !conflict_tasks(server).is_empty()
                && !conflict_tasks(phone).is_empty()
        },
    );
    wait_for("the conflict tasks to be the same on both sides", || {
        conflict_tasks(server) == conflict_tasks(phone)
    });
    let tasks = conflict_tasks(server);
    assert_eq!(tasks.len(), 1, "{tasks:?}");
    let (title, description) = &tasks[0];
    assert!(
        title.starts_with("resolve_conflict: diary entry"),
        "{title}"
    );
    for edit in edits {
        assert!(description.contains(edit), "{description}");
    }
}

/// `devices unlink` on the phone: the server learns of it, keeps what it
/// holds, and gets nothing the phone writes afterwards.
fn unlink_reaches_the_server_and_stops_the_flow(server: &MeshNode, phone: &MeshNode) {
    let out = phone.cli_ok(&["devices", "unlink", &server.peer_id]);
    assert!(out.contains("unlinked"), "{out}");
    assert!(device_peers(phone).is_empty());
    wait_for("the server to learn of the unlink", || {
        device_peers(server).is_empty()
    });
    assert_eq!(sea_entry(server).len(), 1, "the server keeps what it holds");

    exec(
        phone,
        "INSERT INTO diary_entries (text, created, updated) VALUES ('after the unlink', 3, 3)",
    );
    // Two notes one after the other: the second is published in a later
    // pass of the phone's loop than the entry, so the entry, had it been
    // sent at all, would be on the server before it.
    for note in ["N: after the unlink 1", "N: after the unlink 2"] {
        phone.post("friends", note);
        wait_for("the phone's note on the server", || {
            server.has_note(phone, note)
        });
    }
    assert!(
        !texts(server, "SELECT text FROM diary_entries").contains(&"after the unlink".to_owned()),
        "an entry written after the unlink reached the server"
    );
}
