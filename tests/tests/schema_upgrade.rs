//! Schema upgrade (issue 47 §3): the database an earlier version wrote
//! opens under this build, migrates to the current schema and loses
//! nothing. The `porfiry` of commit 0f8c4f7 (schema 9, the last before the
//! devices tables; built and cached by `cargo xtask setup --for test`,
//! named by `PORFIRY_OLD_BINARY`; without it the test prints why and
//! passes) makes a node the way a person would, through its own CLI and
//! API:
//!
//! ```text
//!   O (old) ◄── invite / join ──► P (old)
//! ```
//!
//! a friend made by invitation (named, in a group) and one added by hand
//! (named, renamed, its offload and model sharing on), P's notes received,
//! a club with P in it, thousands of notes in every audience O can write
//! (private, friends, public, group, one friend, the club; replies among
//! them), a retracted note, an unused invitation, three registry models
//! and the recorded settings; the memory's goals, tasks, diary, concepts
//! and links (which only the thinking core writes) go in by plain SQL.
//! Then this build's binary on the same data dir, as a package upgrade
//! does it: `doctor` passes and migrates the file to the current version;
//! every row count, every note (all fields as the old CLI printed them),
//! friend, club, member, model and setting reads back the same through this
//! build's CLI; the memory rows are queued for the person's devices;
//! `porfiry run` serves the notes and the memory over the API and the old
//! friend P still connects and replicates both ways. The old binary on the
//! migrated file refuses in one line and leaves it unchanged, and this
//! build restores the old binary's backup into the same node.
//!
//! Schemas 1 to 8 are older than 0f8c4f7: their upgrades are covered in
//! process by `storage/tests/storage/migrate.rs` (files written by SQL).

mod old_node_common;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use old_node_common::{
    BULK_NOTES, befriend_by_invitation, column, fill_through_the_cli, holds_text, post_bulk,
    sqlite, write_memory,
};
use porfiry_storage::{DB_FILE_NAME, SCHEMA_VERSION};
use porfiry_tests::api_client;
use porfiry_tests::mesh_node::{DEADLINE, MeshNode, POLL_INTERVAL, wait_for};
use porfiry_tests::old_binary::old_binary;
use porfiry_tests::porfiry_bin::porfiry_bin;
use serde_json::{Value, json};

/// The backup's passphrase (8 characters at least).
const PASSPHRASE: &str = "a long garden path";

/// Runs `node`'s CLI and parses its stdout as JSON.
fn cli_json(node: &MeshNode, args: &[&str]) -> Value {
    let out = node.cli_ok(args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("porfiry {args:?}: {e}: {out}"))
}

/// Where `new` fails to hold everything `old` holds: every key of an
/// object with the same value, arrays entry by entry. A newer build may
/// add fields; it never drops or changes one.
fn lost(old: &Value, new: &Value, at: &str) -> Option<String> {
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => o.iter().find_map(|(k, v)| match n.get(k) {
            Some(nv) => lost(v, nv, &format!("{at}.{k}")),
            None => Some(format!("{at}.{k} is gone")),
        }),
        (Value::Array(o), Value::Array(n)) if o.len() == n.len() => o
            .iter()
            .zip(n)
            .enumerate()
            .find_map(|(i, (a, b))| lost(a, b, &format!("{at}[{i}]"))),
        (Value::Array(o), Value::Array(n)) => Some(format!(
            "{at}: {} entries before, {} after",
            o.len(),
            n.len()
        )),
        (o, n) if o == n => None,
        (o, n) => Some(format!("{at}: {o} before, {n} after")),
    }
}

/// What a node's CLI prints about everything it holds.
struct Snapshot {
    status: Value,
    notes: Value,
    friends: Value,
    registry: Value,
    clubs: Value,
    members: Value,
    /// The `config` table (the node's settings), key to JSON value.
    config: BTreeMap<String, String>,
}

impl Snapshot {
    fn of(node: &MeshNode) -> Snapshot {
        let rows = column(
            node.dir(),
            "SELECT json_array(key, value) FROM config ORDER BY key",
        );
        let config = rows
            .iter()
            .map(|r| {
                let pair: (String, String) = serde_json::from_str(r).expect("a key and a value");
                pair
            })
            .collect();
        Snapshot {
            status: cli_json(node, &["status", "--json"]),
            notes: cli_json(node, &["notes", "list", "--json"]),
            friends: cli_json(node, &["friends", "list", "--json"]),
            registry: cli_json(node, &["llm", "list", "--json"])["registry"].clone(),
            clubs: cli_json(node, &["club", "list", "--json"]),
            members: cli_json(node, &["club", "members", "garden", "--json"]),
            config,
        }
    }

    /// Asserts `after` holds everything this snapshot does.
    fn assert_kept_in(&self, after: &Snapshot) {
        let parts = [
            ("notes", &self.notes, &after.notes),
            ("friends", &self.friends, &after.friends),
            ("registry", &self.registry, &after.registry),
            ("clubs", &self.clubs, &after.clubs),
            ("members", &self.members, &after.members),
            ("peer id", &self.status["peer_id"], &after.status["peer_id"]),
            ("tables", &self.status["tables"], &after.status["tables"]),
        ];
        for (what, old, new) in parts {
            if let Some(loss) = lost(old, new, what) {
                panic!("the upgrade lost {loss}");
            }
        }
        for (key, value) in &self.config {
            assert_eq!(after.config.get(key), Some(value), "setting {key}");
        }
    }
}

/// Runs `node`'s CLI, killing it if it has not ended within [`DEADLINE`]
/// (an old `run` that did not refuse would serve for ever).
fn cli_bounded(node: &MeshNode, args: &[&str]) -> Output {
    let mut child = node
        .command()
        .args(args)
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("porfiry runs");
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            panic!("porfiry {args:?} did not end");
        }
        std::thread::sleep(POLL_INTERVAL);
    }
    child.wait_with_output().expect("its output")
}

/// The database file byte for byte, its WAL folded in first: the last
/// connection to close a file checkpoints its WAL into it (the same rows
/// in other bytes), and the old binary's open must be judged on a file
/// with nothing left to fold. No WAL may be left beside it afterwards.
fn file_bytes(dir: &Path) -> Vec<u8> {
    let busy: i64 = sqlite(dir)
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))
        .expect("the WAL is folded in");
    assert_eq!(busy, 0, "nothing held the checkpoint back");
    let wal = dir.join(format!("{DB_FILE_NAME}-wal"));
    let left = std::fs::metadata(&wal).map_or(0, |m| m.len());
    assert_eq!(left, 0, "a WAL is left beside the database");
    std::fs::read(dir.join(DB_FILE_NAME)).expect("the database file")
}

/// The TCP port of a `/ip4/…/tcp/PORT/p2p/…` address.
fn tcp_port(address: &str) -> u16 {
    let mut parts = address.split('/');
    parts.find(|p| *p == "tcp").expect("a TCP address");
    parts.next().and_then(|p| p.parse().ok()).expect("a port")
}

/// Each note of a `notes list --json` array as its id and text (JSON).
fn id_and_text(notes: &Value) -> impl Iterator<Item = (String, String)> + '_ {
    notes
        .as_array()
        .expect("a JSON array of notes")
        .iter()
        .map(|n| (n["id"].to_string(), n["text"].to_string()))
}

/// This build's `porfiry` with a clean environment, on `dir`.
fn new_cli(dir: &Path, args: &[&str]) -> Output {
    Command::new(porfiry_bin())
        .arg("--data-dir")
        .arg(dir)
        .args(args)
        .env_remove("PORFIRY_DATA_DIR")
        .env_remove("RUST_LOG")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("porfiry runs")
}

#[test]
fn an_old_nodes_database_migrates_under_this_build_and_loses_nothing() {
    let Some(old) = old_binary() else {
        return;
    };
    let started = Instant::now();
    let mut o = MeshNode::init_with_binary("O", &old);
    let mut p = MeshNode::init_with_binary("P", &old);
    o.cli_ok(&["club", "create", "garden"]);
    let answered = befriend_by_invitation(&mut o, &mut p);
    post_bulk(&mut o, &answered);
    let exit = o.terminate();
    assert!(exit.status.success(), "O: {}", exit.stderr);
    fill_through_the_cli(&o);
    let memory_rows = write_memory(o.dir());
    let backup_dir = tempfile::tempdir().expect("temp dir");
    let backup = backup_dir.path().join("o.porfiry-backup");
    let passphrase = backup_dir.path().join("passphrase");
    std::fs::write(&passphrase, format!("{PASSPHRASE}\n")).expect("the passphrase file");
    let backup_arg = backup.to_str().expect("a UTF-8 path");
    let passphrase_arg = passphrase.to_str().expect("a UTF-8 path");
    o.cli_ok(&["backup", backup_arg, "--passphrase-file", passphrase_arg]);
    let before = Snapshot::of(&o);
    let old_version = before.status["schema_version"].as_u64().expect("a version");
    assert!(old_version < u64::from(SCHEMA_VERSION), "{old_version}");
    let notes = before.notes.as_array().expect("a JSON array");
    assert!(notes.len() > BULK_NOTES, "{} notes", notes.len());
    let from_p = notes
        .iter()
        .filter(|n| n["origin_author"] == p.peer_id)
        .count();
    assert_eq!(from_p, 3, "P's notes on O");
    let goals_before = column(o.dir(), "SELECT title FROM goals ORDER BY id");
    let diary_before = column(o.dir(), "SELECT text FROM diary_entries ORDER BY id");
    println!(
        "old node: schema {old_version}, {} notes, {} KiB, filled in {:.1} s",
        notes.len(),
        std::fs::metadata(o.dir().join(DB_FILE_NAME)).map_or(0, |m| m.len() >> 10),
        started.elapsed().as_secs_f64()
    );

    // This build on the same data dir: doctor passes and migrates.
    let new = porfiry_bin();
    o.use_binary(&new);
    let upgrade = Instant::now();
    let doctor = cli_json(&o, &["doctor", "--json"]);
    assert_ne!(doctor["verdict"], "fail", "{doctor}");
    let database = doctor["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["check"] == "database")
        .unwrap_or_else(|| panic!("a database check: {doctor}"));
    assert_eq!(database["verdict"], "ok", "{doctor}");
    let detail = database["detail"].as_str().expect("a detail");
    assert!(
        detail.contains(&format!("schema {SCHEMA_VERSION}")),
        "{detail}"
    );
    println!(
        "doctor migrated in {:.2} s",
        upgrade.elapsed().as_secs_f64()
    );

    // Everything reads back the same through this build's CLI.
    let after = Snapshot::of(&o);
    assert_eq!(after.status["schema_version"], SCHEMA_VERSION);
    before.assert_kept_in(&after);
    // Each memory row waits for the person's first device (migration 10);
    // later migrations may queue other tables' rows beside them.
    let queued = column(
        o.dir(),
        "SELECT count(*) || '' FROM mind_outbox
             WHERE tbl IN ('diary', 'concept', 'link', 'goal', 'task', 'llm_memory')",
    );
    assert_eq!(queued, [memory_rows.to_string()]);
    assert_eq!(after.status["tables"]["device_links"], 0);
    assert_eq!(column(o.dir(), "PRAGMA integrity_check"), ["ok"]);
    assert!(column(o.dir(), "PRAGMA foreign_key_check").is_empty());
    assert_eq!(
        column(o.dir(), "SELECT title FROM goals ORDER BY id"),
        goals_before
    );
    assert_eq!(
        column(o.dir(), "SELECT text FROM diary_entries ORDER BY id"),
        diary_before
    );

    serves_and_keeps_its_friend(&mut o, &mut p, &before);
    old_binary_refuses(&mut o, &old, &before);
    restores_the_old_backup(backup_dir.path(), &before, &[backup_arg, passphrase_arg]);
    println!("the whole test: {:.1} s", started.elapsed().as_secs_f64());
}

/// This build's `porfiry run` on the migrated dir serves the notes and the
/// memory, and the old friend P connects to it and replicates both ways.
fn serves_and_keeps_its_friend(o: &mut MeshNode, p: &mut MeshNode, before: &Snapshot) {
    let port = tcp_port(o.address.as_deref().expect("O listened before"));
    o.start_server(port);
    let api = o.api_address();
    let token = o.api_token();
    let listed = api_client::call(
        api,
        "GET",
        "/api/notes?limit=500&newest=true",
        Some(&token),
        "",
    );
    assert_eq!(listed.status, 200, "{}", listed.body);
    let listed = listed.json();
    let listed = listed.as_array().expect("a JSON array");
    assert_eq!(listed.len(), 500);
    let texts: HashSet<String> = id_and_text(&before.notes).map(|(_, t)| t).collect();
    for note in listed {
        assert!(texts.contains(&note["text"].to_string()), "served {note}");
    }
    assert!(
        listed
            .iter()
            .any(|n| n["reply_to_note"]["excerpt"] == "P2: the garden is blooming"),
        "a reply shows the note it answers"
    );
    let mind = api_client::call(api, "GET", "/api/mind", Some(&token), "");
    assert_eq!(mind.status, 200, "{}", mind.body);
    let mind = mind.json();
    let goals: Vec<&Value> = mind["goals"]
        .as_array()
        .expect("goals")
        .iter()
        .map(|g| &g["title"])
        .collect();
    assert!(goals.contains(&&json!("tidy the garden")), "{mind}");
    assert!(
        !mind["tasks"].as_array().expect("tasks").is_empty(),
        "{mind}"
    );
    assert!(
        !mind["diary"].as_array().expect("diary").is_empty(),
        "{mind}"
    );

    p.start_phone();
    o.wait_logged(&["friend connected", &p.peer_id]);
    p.post("friends", "P4: after your upgrade");
    wait_for("P's note on the upgraded O", || {
        o.has_note(p, "P4: after your upgrade")
    });
    o.post("friends", "O: upgraded and still here");
    wait_for("the upgraded O's note on P", || {
        holds_text(p, "O: upgraded and still here")
    });
    for node in [&mut *o, &mut *p] {
        node.terminate().assert_clean(&node.name);
    }
}

/// The old binary on the migrated file: one line saying the database is
/// newer, for a read, a status and a `run`; the file is left as it was.
fn old_binary_refuses(o: &mut MeshNode, old: &Path, before: &Snapshot) {
    let new = o.dir().to_path_buf();
    let bytes = file_bytes(&new);
    o.use_binary(old);
    let run = [
        "run",
        "--listen",
        "/ip4/127.0.0.1/tcp/0",
        "--no-api",
        "--no-think",
    ];
    for args in [&["notes", "list"][..], &["status"], &run] {
        let out = cli_bounded(o, args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "old porfiry {args:?} ran: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(err.contains("newer than this build supports"), "{err}");
    }
    assert!(file_bytes(&new) == bytes, "the old binary changed the file");
    o.use_binary(&porfiry_bin());
    let notes = cli_json(o, &["notes", "list", "--json"]);
    let now: HashSet<(String, String)> = id_and_text(&notes).collect();
    for note in id_and_text(&before.notes) {
        assert!(
            now.contains(&note),
            "{note:?} is gone after the old binary's tries"
        );
    }
}

/// This build restores the old binary's backup into the same node, at the
/// current schema, with everything in it.
fn restores_the_old_backup(tmp: &Path, before: &Snapshot, args: &[&str; 2]) {
    let dir: PathBuf = tmp.join("restored");
    let out = new_cli(&dir, &["restore", args[0], "--passphrase-file", args[1]]);
    assert!(
        out.status.success(),
        "restore: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json_of = |args: &[&str]| -> Value {
        let out = new_cli(&dir, args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("JSON")
    };
    let status = json_of(&["status", "--json"]);
    assert_eq!(status["peer_id"], before.status["peer_id"]);
    assert_eq!(status["schema_version"], SCHEMA_VERSION);
    let notes = json_of(&["notes", "list", "--json"]);
    if let Some(loss) = lost(&before.notes, &notes, "restored notes") {
        panic!("the restore lost {loss}");
    }
}
