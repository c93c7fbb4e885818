//! End to end: every command whose stdout reader has gone away
//! (`porfiry notes list --json | head -1`) stops quietly — status 0 or 141,
//! no panic text, nothing on stderr — and the database is left as it was.

use std::io::pipe;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use porfiry_tests::mesh_node::MeshNode;

/// Safety net for `porfiry run`, which should stop on its first stdout line.
const RUN_DEADLINE: Duration = Duration::from_secs(30);

/// Runs `porfiry <args>` with stdout a pipe whose read end is already closed,
/// so the first write fails with EPIPE however little the command prints.
fn with_closed_stdout(node: &MeshNode, args: &[&str]) -> Output {
    let mut command = node.command();
    command.args(args);
    run_with_closed_stdout(command, args)
}

/// Runs `command` with stdout a closed pipe, killing it after [`RUN_DEADLINE`].
fn run_with_closed_stdout(mut command: Command, args: &[&str]) -> Output {
    let (reader, writer) = pipe().expect("pipe");
    drop(reader);
    let child = command
        .env_remove("RUST_LOG")
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .spawn()
        .expect("porfiry starts");
    let pid = child.id().to_string();
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || done.send(child.wait_with_output()));
    match finished.recv_timeout(RUN_DEADLINE) {
        Ok(out) => out.expect("output"),
        Err(_) => {
            Command::new("kill").args(["-9", &pid]).status().ok();
            panic!("porfiry {args:?} kept running with nobody reading its stdout");
        }
    }
}

/// Asserts the quiet exit the issue asks for.
fn assert_quiet(args: &[&str], out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    assert!(stderr.is_empty(), "{args:?} complained: {stderr}");
    assert!(
        matches!(out.status.code(), Some(0 | 141)),
        "{args:?} exited with {:?}",
        out.status
    );
}

#[test]
fn every_printing_command_exits_quietly_when_its_reader_is_gone() {
    let node = MeshNode::init("A");
    node.cli_ok(&["notes", "post", "hello"]);
    let friend = MeshNode::init("B");
    node.cli_ok(&["friends", "add", &friend.peer_id]);
    let before = node.cli_ok(&["notes", "list", "--json"]);
    for args in [
        &["notes", "list", "--json"][..],
        &["notes", "list"],
        &["friends", "list"],
        &["friends", "list", "--json"],
        &["status"],
        &["status", "--json"],
        &["notes", "post", "second"],
    ] {
        let out = with_closed_stdout(&node, args);
        assert_quiet(args, &out);
        assert_eq!(out.status.code(), Some(141), "{args:?}: stdout was closed");
    }
    let after = node.cli_ok(&["notes", "list", "--json"]);
    assert!(after.contains("second"), "the post was stored: {after}");
    assert!(after.contains("hello") && before.contains("hello"));
}

#[test]
fn run_stops_quietly_when_its_reader_is_gone() {
    let node = MeshNode::init("A");
    let out = with_closed_stdout(&node, &["run", "--listen", "/ip4/127.0.0.1/tcp/0"]);
    assert_quiet(&["run"], &out);
    let status = node.cli_ok(&["status"]);
    assert!(status.contains("schema"), "the node is intact: {status}");
}

#[test]
fn init_exits_quietly_and_still_makes_the_node() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("fresh");
    let mut init = Command::new(porfiry_tests::porfiry_bin::porfiry_bin());
    init.arg("--data-dir")
        .arg(&dir)
        .arg("init")
        .env_remove("PORFIRY_DATA_DIR");
    let out = run_with_closed_stdout(init, &["init"]);
    assert_quiet(&["init"], &out);
    assert!(dir.join("identity.key").exists(), "init made the key");
}
