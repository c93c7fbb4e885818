//! An old node made the way a person would make it, with the `porfiry`
//! of an earlier commit (`PORFIRY_OLD_BINARY`) and its own CLI and API,
//! for `schema_upgrade.rs`: a friend by invitation whose notes arrive, one
//! added by hand, a club, thousands of notes in every audience, the
//! registry, an unused invitation, a retraction, and the memory only the
//! thinking core writes (by plain SQL). Its file is read with plain SQL,
//! never this build's `Store`, which would migrate it.

use std::path::Path;

use porfiry_protocol::NodeKey;
use porfiry_storage::DB_FILE_NAME;
use porfiry_tests::api_client;
use porfiry_tests::mesh_node::{MeshNode, wait_for};
use serde_json::json;

/// Notes O posts through its API: a few thousand, a family's year or so
/// (a 2.7 MB file); posting them takes about 10 s of the test's 20 in a
/// debug build on two busy cores.
pub const BULK_NOTES: usize = 3_000;

/// The audiences the bulk notes cycle through: every kind 0f8c4f7 writes.
const AUDIENCES: &[&str] = &[
    "private",
    "friends",
    "public",
    "group:family",
    "peer:pia",
    "club:garden",
];

/// Every this many notes, one (to friends, whatever its turn in
/// [`AUDIENCES`]) answers P's public note.
const REPLY_EVERY: usize = 25;

/// Diary entries written into the old file (beside a few goals, tasks,
/// concepts, a link and a memory row).
const DIARY_ENTRIES: usize = 40;

/// A bulk note's text: varied length and scripts, a hashtag, a mention
/// and a line break, so what the upgrade keeps is more than ASCII.
fn bulk_text(i: usize) -> String {
    match i % 4 {
        0 => format!("note {i}: short"),
        1 => format!("заметка {i}: о саду и погоде, @pia"),
        2 => format!("note {i}: {}", "a longer line of words ".repeat(i % 9 + 1)),
        _ => format!("note {i}: 🌱 #garden\nsecond line"),
    }
}

/// A plain SQLite connection to the data dir's file (the old node's rows
/// are never read through this build's `Store`, which would migrate them).
pub fn sqlite(dir: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(dir.join(DB_FILE_NAME)).expect("the database opens")
}

/// The first column of every row `sql` returns, as text.
pub fn column(dir: &Path, sql: &str) -> Vec<String> {
    let conn = sqlite(dir);
    let mut stmt = conn.prepare(sql).expect("the query prepares");
    stmt.query_map([], |r| r.get(0))
        .expect("the query runs")
        .collect::<Result<_, _>>()
        .expect("text rows")
}

/// Whether `node`'s file holds a note with `text` (any author). Plain SQL:
/// polling a CLI that prints thousands of notes would take the cores the
/// nodes need.
pub fn holds_text(node: &MeshNode, text: &str) -> bool {
    let found: u64 = sqlite(node.dir())
        .query_row("SELECT count(*) FROM notes WHERE text = ?1", [text], |r| {
            r.get(0)
        })
        .expect("the notes are counted");
    found > 0
}

/// O and P become friends by invitation (O's daemon up, P joins); P's
/// notes reach O. Returns the item id of P's public note.
pub fn befriend_by_invitation(o: &mut MeshNode, p: &mut MeshNode) -> String {
    o.start_server(0);
    wait_for("O to record its listen addresses", || {
        column(
            o.dir(),
            "SELECT value FROM config WHERE key = 'mesh.listening'",
        )
        .first()
        .is_some_and(|v| v != "[]")
    });
    let invitation = o.cli_ok(&["invite", "--name", "pia", "--group", "family", "--no-qr"]);
    let code = invitation.lines().next().expect("a code line");
    let joined = p.cli_ok(&["join", code, "--name", "olga"]);
    assert!(joined.contains("friends now"), "{joined}");
    p.start_phone();
    o.wait_logged(&["friend connected", &p.peer_id]);
    p.post("friends", "P1: hello from pia");
    let public = p.post("public", "P2: the garden is blooming");
    p.post("peer:olga", "P3: just for you");
    for text in [
        "P1: hello from pia",
        "P2: the garden is blooming",
        "P3: just for you",
    ] {
        wait_for(&format!("O to get {text:?}"), || holds_text(o, text));
    }
    let exit = p.terminate();
    assert!(exit.status.success(), "P: {}", exit.stderr);
    public
}

/// O's bulk notes through its running daemon's API.
pub fn post_bulk(o: &mut MeshNode, answered: &str) {
    let api = o.api_address();
    let token = o.api_token();
    for i in 0..BULK_NOTES {
        let reply = i.is_multiple_of(REPLY_EVERY);
        let audience = if reply {
            "friends"
        } else {
            AUDIENCES[i % AUDIENCES.len()]
        };
        let mut body = json!({"text": bulk_text(i), "audience": audience});
        if reply {
            body["reply_to"] = answered.into();
        }
        let r = api_client::call(api, "POST", "/api/notes", Some(&token), &body.to_string());
        assert_eq!(r.status, 201, "note {i} to {audience}: {}", r.body);
    }
}

/// What the old CLI writes with the daemon stopped: the club's member, a
/// friend added by hand, the registry, an unused invitation, a retraction.
pub fn fill_through_the_cli(o: &MeshNode) {
    o.cli_ok(&["club", "add", "garden", "pia"]);
    let quinn = NodeKey::from_seed([7; 32]).peer_id().to_string();
    o.cli_ok(&[
        "friends",
        "add",
        &quinn,
        "/ip4/127.0.0.1/tcp/9",
        "--name",
        "quinn",
        "--group",
        "family",
        "--allow-offload",
    ]);
    o.cli_ok(&["friends", "models", "quinn", "on"]);
    o.cli_ok(&["friends", "rename", "quinn", "quentin"]);
    o.cli_ok(&[
        "llm",
        "add",
        "core",
        "--url",
        "http://127.0.0.1:9/v1",
        "--model",
        "qwen",
        "--main",
        "--description",
        "the core's model",
    ]);
    o.cli_ok(&[
        "llm",
        "add",
        "checker",
        "--url",
        "http://127.0.0.1:9/v1",
        "--model",
        "small",
        "--validator",
        "--api-key-env",
        "PORFIRY_TEST_NO_KEY",
    ]);
    o.cli_ok(&[
        "llm", "add", "quentins", "--url", &quinn, "--model", "gemma",
    ]);
    o.cli_ok(&["invite", "--name", "later", "--valid-for", "30d", "--no-qr"]);
    let withdrawn = o.post("public", "withdrawn soon");
    o.cli_ok(&["notes", "retract", &withdrawn]);
}

/// The memory only the thinking core writes, by plain SQL into the old
/// file; returns how many rows (each one the upgrade queues for devices).
pub fn write_memory(dir: &Path) -> u64 {
    let conn = sqlite(dir);
    let now = porfiry_mesh::clock::now_ms() as i64;
    conn.execute_batch(&format!(
        "INSERT INTO goals (title, description, status, priority, created, updated)
             VALUES ('tidy the garden', 'before the frost', 'in_progress', 2, {now}, {now}),
                    ('learn the names of birds', '', 'open', 1, {now}, {now});
         INSERT INTO tasks (goal_id, title, status, pinned, created, updated)
             VALUES (1, 'rake the leaves', 'open', 1, {now}, {now}),
                    (1, 'cover the roses', 'done', 0, {now}, {now}),
                    (2, 'buy a bird book', 'open', 0, {now}, {now});
         INSERT INTO concepts (name, description, created, updated)
             VALUES ('garden', 'the plot behind the house', {now}, {now}),
                    ('frost', 'first nights below zero', {now}, {now});
         INSERT INTO links (from_concept, to_concept, relation, created, updated)
             VALUES (2, 1, 'threatens', {now}, {now});
         INSERT INTO llm_memory (title, content, created, updated)
             VALUES ('pia', 'likes roses', {now}, {now});"
    ))
    .expect("the memory is written");
    for i in 0..DIARY_ENTRIES {
        conn.execute(
            "INSERT INTO diary_entries (text, created, updated) VALUES (?1, ?2, ?2)",
            (
                format!("diary {i}: a quiet day in the garden"),
                now + i as i64,
            ),
        )
        .expect("a diary entry");
    }
    conn.query_row(
        "SELECT (SELECT count(*) FROM goals) + (SELECT count(*) FROM tasks)
              + (SELECT count(*) FROM diary_entries) + (SELECT count(*) FROM concepts)
              + (SELECT count(*) FROM links) + (SELECT count(*) FROM llm_memory)",
        [],
        |r| r.get(0),
    )
    .expect("the memory rows are counted")
}
