//! End to end: `porfiry init` and `porfiry status` on real data dirs.

use std::path::Path;
use std::process::{Command, Output};

use porfiry_tests::porfiry_bin::porfiry_bin;

fn porfiry(dir: &Path, args: &[&str]) -> Output {
    Command::new(porfiry_bin())
        .arg("--data-dir")
        .arg(dir)
        .args(args)
        .env_remove("PORFIRY_DATA_DIR")
        .output()
        .expect("porfiry runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn init_then_status_json() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("node");
    let out = porfiry(&dir, &["init"]);
    assert!(out.status.success(), "init failed: {}", stderr(&out));

    let out = porfiry(&dir, &["status", "--json"]);
    assert!(out.status.success(), "status failed: {}", stderr(&out));
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("status --json prints JSON");
    let peer_id = v["peer_id"].as_str().expect("peer_id is a string");
    assert!(
        peer_id.starts_with("12D3KooW"),
        "libp2p ed25519 peer id, got {peer_id}"
    );
    assert!(v["schema_version"].as_u64().unwrap() >= 1);
    for table in [
        "notes",
        "items",
        "agent_peers",
        "process_log",
        "llm_recent_responses",
    ] {
        assert_eq!(v["tables"][table].as_u64(), Some(0), "table {table} in {v}");
    }

    // The text form names the same node.
    let out = porfiry(&dir, &["status"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains(peer_id));
}

#[test]
fn second_init_refuses_and_touches_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    assert!(porfiry(dir, &["init"]).status.success());
    let key_before = std::fs::read(dir.join("identity.key")).unwrap();
    let db_before = std::fs::read(dir.join("porfiry.db")).unwrap();

    let out = porfiry(dir, &["init"]);
    assert!(!out.status.success(), "second init must fail");
    assert!(
        stderr(&out).contains("already"),
        "says why: {}",
        stderr(&out)
    );
    assert_eq!(std::fs::read(dir.join("identity.key")).unwrap(), key_before);
    assert_eq!(std::fs::read(dir.join("porfiry.db")).unwrap(), db_before);
}

#[test]
fn status_on_a_corrupt_database_names_the_file_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    assert!(porfiry(dir, &["init"]).status.success());
    let db = dir.join("porfiry.db");
    for side in ["porfiry.db-wal", "porfiry.db-shm"] {
        let _ = std::fs::remove_file(dir.join(side));
    }
    let garbage: Vec<u8> = (0..8192u32).map(|i| (i * 7 + 3) as u8).collect();
    std::fs::write(&db, &garbage).unwrap();

    let out = porfiry(dir, &["status", "--json"]);
    assert!(!out.status.success(), "status must fail on a non-database");
    let err = stderr(&out);
    assert!(err.contains("porfiry.db"), "error names the file: {err}");
    assert_eq!(err.trim().lines().count(), 1, "one-line error: {err}");
    assert!(!err.contains("panicked"), "no panic: {err}");
    assert_eq!(
        std::fs::read(&db).unwrap(),
        garbage,
        "file left byte-for-byte unchanged"
    );
}

#[test]
fn status_without_a_node_says_to_init() {
    let tmp = tempfile::tempdir().unwrap();
    let out = porfiry(&tmp.path().join("nothing-here"), &["status"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("porfiry init"), "{}", stderr(&out));
    assert!(
        !tmp.path().join("nothing-here/porfiry.db").exists(),
        "status creates nothing"
    );
}

#[test]
fn data_dir_comes_from_the_environment() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(porfiry_bin())
        .arg("init")
        .env("PORFIRY_DATA_DIR", tmp.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(tmp.path().join("identity.key").exists());
    assert!(tmp.path().join("porfiry.db").exists());
}

#[test]
fn help_lists_the_commands() {
    let out = Command::new(porfiry_bin()).arg("--help").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for cmd in ["init", "status", "run", "--data-dir"] {
        assert!(text.contains(cmd), "--help mentions {cmd}: {text}");
    }
}
