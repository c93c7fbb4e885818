//! End to end: a full disk (issue 46 §3). B's data dir is a small tmpfs; a
//! filler file takes the rest. B, a real `porfiry run`, answers a note post
//! with 507 naming its data dir and the free space, keeps serving reads and
//! keeps running while a friend sends it a note it has no room for; once
//! the filler goes, B takes items again by itself and the friend's note
//! arrives, nothing lost. Skipped, with the reason, where a tmpfs cannot be
//! mounted (not root, no mount namespace rights).

mod tmpfs_common;

use std::io::Write;
use std::path::Path;

use porfiry_tests::api_client::call;
use porfiry_tests::mesh_node::{MeshNode, wait_for};
use tmpfs_common::Tmpfs;

/// The tmpfs: room for a fresh node's database and WAL with some to spare.
const TMPFS_BYTES: u64 = 24 << 20;

/// Writes zeros into `path` until the filesystem says it is full.
fn fill(path: &Path) {
    let mut f = std::fs::File::create(path).expect("filler");
    let block = vec![0u8; 64 * 1024];
    while f.write_all(&block).is_ok() {}
    let _ = f.sync_all();
}

#[test]
fn a_full_disk_refuses_writes_with_507_keeps_serving_and_resumes_by_itself() {
    let mut mounted = Err(String::new());
    let mut b = MeshNode::init_with("B", |dir| mounted = Tmpfs::mount(dir, TMPFS_BYTES));
    let _tmpfs = match mounted {
        Ok(tmpfs) => tmpfs,
        Err(why) => {
            eprintln!("skipped: cannot mount a tmpfs here ({why})");
            return;
        }
    };
    let mut g = MeshNode::init("G");
    b.start_server_with(0, &["--api", "127.0.0.1:0"]);
    let api = b.api_address();
    let token = b.api_token();
    g.befriend(&b, true, &[]);
    b.befriend(&g, false, &[]);
    g.start_server_with(0, &["--no-api"]);
    b.wait_logged(&["friend connected", &g.peer_id]);
    let before = call(
        api,
        "POST",
        "/api/notes",
        Some(&token),
        r#"{"text":"before"}"#,
    );
    assert_eq!(before.status, 201, "{}", before.body);

    let filler = b.dir().join("filler");
    fill(&filler);
    let full = call(
        api,
        "POST",
        "/api/notes",
        Some(&token),
        r#"{"text":"no room"}"#,
    );
    assert_eq!(full.status, 507, "{}", full.body);
    let message = full.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(
        message.contains(&b.dir().display().to_string()),
        "{message}"
    );
    assert!(message.contains("KiB free"), "{message}");
    assert_eq!(full.json()["error"]["code"], "disk_full");

    // Reads go on.
    let notes = call(api, "GET", "/api/notes?origin=own", Some(&token), "");
    assert_eq!(notes.status, 200, "{}", notes.body);
    assert!(notes.body.contains("before"), "{}", notes.body);

    // A friend's note B has no room for: B stays up and says why.
    g.post("friends", "sent while B was full");
    b.wait_logged(&["is full", "nothing new is stored"]);
    assert!(b.is_running(), "{}", b.stderr());
    assert!(!b.has_note(&g, "sent while B was full"));

    // Space returns: B takes items again by itself and catches up.
    std::fs::remove_file(&filler).unwrap();
    b.wait_logged(&["space is back"]);
    wait_for("G's note to reach B after the space came back", || {
        b.has_note(&g, "sent while B was full")
    });
    let after = call(
        api,
        "POST",
        "/api/notes",
        Some(&token),
        r#"{"text":"after"}"#,
    );
    assert_eq!(after.status, 201, "{}", after.body);
    b.store().check_integrity().unwrap();
    assert!(b.terminate().status.success());
    assert!(g.terminate().status.success());
}
