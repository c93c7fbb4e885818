//! End to end: a damaged data dir (issue 46 §3). The real `porfiry` binary
//! on a database with a torn page, with a newer schema, missing beside its
//! identity, and with a WAL cut in the middle of a frame: `porfiry run`
//! refuses with one line saying what is wrong and what to do (never a
//! panic, never a new empty database beside the old one), `porfiry doctor`
//! says the same with a verdict per check, and `doctor --repair` recovers
//! what can be read into a new file and keeps the damaged one.

use std::path::Path;

use porfiry_storage::{DB_FILE_NAME, Note, Store};
use porfiry_tests::mesh_node::MeshNode;

const NOTES: usize = 2_000;

/// Writes `NOTES` notes straight into the node's file (closing the store
/// folds its WAL into the file).
fn fill(dir: &Path) {
    let s = Store::open(dir.join(DB_FILE_NAME)).unwrap();
    s.transaction(|s| {
        for i in 0..NOTES {
            let text = format!("note {i} {}", "words ".repeat(30));
            s.add(
                &Note {
                    text,
                    ..Default::default()
                },
                1,
            )?;
        }
        Ok(())
    })
    .unwrap();
}

fn tear_a_page(db: &Path) {
    let mut bytes = std::fs::read(db).unwrap();
    let page = 4096;
    let at = (bytes.len() * 6 / 10) / page * page;
    bytes[at..at + page].fill(0xa5);
    std::fs::write(db, &bytes).unwrap();
}

fn stderr_of(node: &MeshNode, args: &[&str]) -> (bool, String) {
    let out = node.cli(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!err.contains("panicked"), "{err}");
    (out.status.success(), err)
}

#[test]
fn a_torn_page_stops_run_with_one_line_and_doctor_repairs_it() {
    let b = MeshNode::init("B");
    fill(b.dir());
    let healthy = b.cli_ok(&["doctor", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&healthy).unwrap();
    assert_ne!(report["verdict"], "fail", "{report}");
    let db = b.dir().join(DB_FILE_NAME);
    tear_a_page(&db);

    let (ok, err) = stderr_of(&b, &["run", "--listen", "/ip4/127.0.0.1/tcp/0", "--no-api"]);
    assert!(!ok);
    assert!(
        err.contains("is corrupt") && err.contains("porfiry doctor --repair"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");

    let out = b.cli(&["doctor"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("FAIL  database"), "{text}");
    assert!(text.contains("ok    disk"), "{text}");

    let repaired = b.cli(&["doctor", "--repair", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&repaired.stdout).unwrap();
    let repair = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "repair")
        .unwrap();
    assert_eq!(repair["verdict"], "ok", "{report}");
    assert!(
        repair["detail"]
            .as_str()
            .unwrap()
            .contains("damaged tables: notes"),
        "{repair}"
    );
    let kept: Vec<_> = std::fs::read_dir(b.dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("porfiry.db.damaged-")
        })
        .collect();
    assert_eq!(kept.len(), 1, "the damaged file is kept");

    let s = Store::open(&db).unwrap();
    s.check_integrity().unwrap();
    let notes = s.count::<Note>().unwrap() as usize;
    assert!(
        (NOTES - 100..NOTES).contains(&notes),
        "{notes} notes recovered"
    );
    drop(s);
    let after = b.cli_ok(&["doctor", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&after).unwrap();
    assert_ne!(report["verdict"], "fail", "{report}");
    b.cli_ok(&["status"]);
}

#[test]
fn a_missing_or_newer_database_is_refused_and_nothing_is_created() {
    let b = MeshNode::init("B");
    let db = b.dir().join(DB_FILE_NAME);
    let saved = std::fs::read(&db).unwrap();

    std::fs::remove_file(&db).unwrap();
    let (ok, err) = stderr_of(&b, &["run", "--listen", "/ip4/127.0.0.1/tcp/0", "--no-api"]);
    assert!(!ok);
    assert!(
        err.contains("is missing while this data dir holds a node's identity"),
        "{err}"
    );
    assert!(!db.exists(), "no new empty database beside the lost one");

    std::fs::write(&db, &saved).unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.pragma_update(None, "user_version", 99).unwrap();
    drop(conn);
    let (ok, err) = stderr_of(&b, &["run", "--listen", "/ip4/127.0.0.1/tcp/0", "--no-api"]);
    assert!(!ok);
    assert!(err.contains("newer than this build supports"), "{err}");
    let out = b.cli(&["doctor"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        std::fs::read(&db).unwrap().len(),
        saved.len(),
        "left unchanged"
    );
}

#[test]
fn a_wal_cut_mid_frame_loses_only_the_unfinished_commit() {
    let b = MeshNode::init("B");
    let db = b.dir().join(DB_FILE_NAME);
    // A writer that never checkpoints, "killed" by copying its files while
    // it is open: the copy is what a crash leaves.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
    conn.execute_batch("CREATE TABLE IF NOT EXISTS probe (x TEXT)")
        .unwrap();
    conn.execute("INSERT INTO probe VALUES ('kept')", [])
        .unwrap();
    conn.execute("INSERT INTO probe VALUES (?1)", [&"cut".repeat(3000)])
        .unwrap();
    let crashed = tempfile::tempdir().unwrap();
    for f in std::fs::read_dir(b.dir()).unwrap().filter_map(|e| e.ok()) {
        std::fs::copy(f.path(), crashed.path().join(f.file_name())).unwrap();
    }
    drop(conn);
    let wal = crashed.path().join(format!("{DB_FILE_NAME}-wal"));
    let len = std::fs::metadata(&wal).unwrap().len();
    let file = std::fs::OpenOptions::new().write(true).open(&wal).unwrap();
    file.set_len(len - 1_000).unwrap();
    drop(file);
    let _ = std::fs::remove_file(crashed.path().join(format!("{DB_FILE_NAME}-shm")));

    let s = Store::open(crashed.path().join(DB_FILE_NAME)).unwrap();
    s.check_integrity().unwrap();
    drop(s);
    let conn = rusqlite::Connection::open(crashed.path().join(DB_FILE_NAME)).unwrap();
    let rows: Vec<String> = conn
        .prepare("SELECT x FROM probe")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        rows,
        ["kept"],
        "the torn commit is gone, the one before it stays"
    );
}
