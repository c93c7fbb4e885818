//! Crash safety: a child process (this test binary, re-run with an env var)
//! is SIGKILLed while a big batch insert is open inside one transaction, or
//! right after it commits. On reopen the batch is all there or not at all,
//! and `PRAGMA integrity_check` is ok. No sleeps: the child says on stdout
//! when it is where we want it, then blocks on stdin until killed.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use porfiry_protocol::{Audience, ItemId, ItemKind, ItemRecord};
use porfiry_storage::{DB_FILE_NAME, Note, Store, StoredItem};

const DB_ENV: &str = "PORFIRY_STORAGE_CRASH_DB";
const MODE_ENV: &str = "PORFIRY_STORAGE_CRASH_MODE";
const MID: &str = "CRASH-TEST: inside the open batch";
const DONE: &str = "CRASH-TEST: batch committed";
/// Items per `insert_items` call, and calls in the batch: 16 MB in all, far
/// more than SQLite's page cache, so the open transaction spills to the WAL.
const CHUNK: usize = 500;
const CHUNKS: usize = 16;
const PAYLOAD: usize = 2_048;

fn batch_id(n: usize) -> ItemId {
    let mut id = [0u8; 32];
    id[..8].copy_from_slice(&(n as u64).to_be_bytes());
    ItemId(id)
}

fn batch_item(n: usize) -> StoredItem {
    StoredItem {
        record: ItemRecord {
            id: batch_id(n),
            author: "12D3KooWCrash".into(),
            kind: ItemKind::Note,
            audience: Audience::Public,
            created_ms: n as u64,
            expires_ms: None,
            received_from: Some("12D3KooWFriend".into()),
            max_hops: 3,
            hops_left: 2,
            retracts: None,
            replaces: None,
            club_target: None,
            club_removal: false,
            envelope_bytes: PAYLOAD as u32,
        },
        payload: vec![(n % 251) as u8; PAYLOAD],
        signature: vec![1; 64],
    }
}

/// The child's body: run only when the parent sets the env vars.
#[test]
#[ignore = "child process of the crash tests; they run it"]
fn child_process() {
    let (Ok(db), Ok(mode)) = (std::env::var(DB_ENV), std::env::var(MODE_ENV)) else {
        return;
    };
    let store = Store::open(&db).unwrap();
    let say = |line: &str| {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{line}").unwrap();
        out.flush().unwrap();
    };
    let wait_for_kill = || {
        let mut sink = Vec::new();
        let _ = std::io::stdin().read_to_end(&mut sink);
    };
    store
        .transaction(|s| {
            for c in 0..CHUNKS {
                let items: Vec<StoredItem> = (c * CHUNK..(c + 1) * CHUNK).map(batch_item).collect();
                assert_eq!(s.insert_items(&items)?, CHUNK);
                if c == CHUNKS / 2 && mode == "mid" {
                    say(MID);
                    wait_for_kill();
                }
            }
            Ok(())
        })
        .unwrap();
    say(DONE);
    wait_for_kill();
}

/// Runs the child in `mode`, waits for `marker`, SIGKILLs it, and returns
/// the size of the WAL file at the moment of the kill.
fn run_child_and_kill(db: &Path, mode: &str, marker: &str) -> u64 {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "crash::child_process",
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(DB_ENV, db)
        .env(MODE_ENV, mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut seen = false;
    for line in BufReader::new(stdout).lines() {
        if line.unwrap().contains(marker) {
            seen = true;
            break;
        }
    }
    assert!(
        seen,
        "child ended without printing {marker:?}: {:?}",
        child.wait()
    );
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    let wal_size = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
    child.kill().unwrap(); // SIGKILL on Unix: no destructors, no rollback
    let status = child.wait().unwrap();
    assert!(
        !status.success(),
        "child was killed, not finished: {status:?}"
    );
    wal_size
}

fn prepared_db() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE_NAME);
    let store = Store::create(&path).unwrap();
    store
        .add(
            &Note {
                text: "written before the crash".into(),
                ..Default::default()
            },
            1,
        )
        .unwrap();
    (dir, path)
}

fn batch_rows_present(store: &Store) -> usize {
    (0..CHUNK * CHUNKS)
        .filter(|&n| store.has_item(&batch_id(n)).unwrap())
        .count()
}

#[test]
fn killed_inside_the_batch_leaves_none_of_it() {
    let (_dir, path) = prepared_db();
    let wal = run_child_and_kill(&path, "mid", MID);
    assert!(
        wal > 1 << 20,
        "the open batch had reached the WAL file ({wal} bytes)"
    );
    let store = Store::open(&path).unwrap();
    store.check_integrity().unwrap();
    assert_eq!(batch_rows_present(&store), 0);
    assert_eq!(store.count::<Note>().unwrap(), 1, "earlier commits survive");
    // The file is fully usable afterwards.
    assert_eq!(store.insert_items(&[batch_item(0)]).unwrap(), 1);
}

#[test]
fn killed_after_commit_keeps_all_of_it() {
    let (_dir, path) = prepared_db();
    run_child_and_kill(&path, "done", DONE);
    let store = Store::open(&path).unwrap();
    store.check_integrity().unwrap();
    assert_eq!(batch_rows_present(&store), CHUNK * CHUNKS);
    assert_eq!(store.count::<Note>().unwrap(), 1);
}
