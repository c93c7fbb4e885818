//! End to end over the real `porfiry` binary, for running it as a service
//! (issue 47): `--version` names the commit; `run` takes its settings from a
//! config file and tells systemd READY, feeds its watchdog and says
//! STOPPING over a real notify socket; a bad config file is one line; a
//! backup taken while the node runs restores, after its disk is lost, the
//! same node, which catches up with its friend for what it missed; a wrong
//! passphrase restores nothing.

use std::io::{BufRead as _, BufReader};
use std::os::unix::net::UnixDatagram;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use porfiry_tests::mesh_node::{MeshNode, wait_for};
use porfiry_tests::porfiry_bin::porfiry_bin;

/// The longest a test waits for one notify message from the node.
const NOTIFY_WAIT: Duration = Duration::from_secs(60);

#[test]
fn version_names_the_crate_version_and_the_commit() {
    let out = Command::new(porfiry_bin())
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    let line = String::from_utf8(out.stdout).unwrap();
    assert!(
        line.starts_with(&format!("porfiry {} (commit ", env!("CARGO_PKG_VERSION"))),
        "{line}"
    );
    let head = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output();
    match head {
        Ok(head) if head.status.success() => {
            let commit = String::from_utf8(head.stdout).unwrap();
            assert!(line.contains(&commit[..12]), "{line} vs HEAD {commit}");
        }
        _ => eprintln!("no git checkout here: the commit is not compared"),
    }
}

/// Writes `text` to `dir/name` and returns the path as text.
fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

/// The next notify datagram's text.
fn next_notice(socket: &UnixDatagram) -> String {
    let mut buf = [0u8; 4096];
    let n = socket.recv(&mut buf).expect("a notify message in time");
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

#[test]
fn run_reads_its_config_file_and_talks_to_systemd() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("node");
    let config = write(
        tmp.path(),
        "porfiry.toml",
        &format!(
            "data-dir = {:?}\nlisten = [\"/ip4/127.0.0.1/tcp/0\"]\napi = \"127.0.0.1:0\"\nno-think = true\n",
            data.to_str().unwrap()
        ),
    );
    let socket_path = tmp.path().join("notify.sock");
    let socket = UnixDatagram::bind(&socket_path).unwrap();
    socket.set_read_timeout(Some(NOTIFY_WAIT)).unwrap();
    let mut child = Command::new(porfiry_bin())
        .args(["run", "--config", &config])
        .env_remove("PORFIRY_DATA_DIR")
        .env("NOTIFY_SOCKET", &socket_path)
        // A 200 ms watchdog: pings every 100 ms.
        .env("WATCHDOG_USEC", "200000")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let ready = next_notice(&socket);
    assert!(
        ready.contains("READY=1") && ready.contains("STATUS=peer id 12D3Koo"),
        "{ready}"
    );
    // Two pings in a row: the watchdog is fed, not pinged once.
    for _ in 0..2 {
        assert_eq!(next_notice(&socket).trim(), "WATCHDOG=1");
    }
    assert!(
        data.join("identity.key").exists(),
        "the file's data-dir was used"
    );
    let stop = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(stop.success());
    let mut stopping = next_notice(&socket);
    while stopping.trim() == "WATCHDOG=1" {
        stopping = next_notice(&socket);
    }
    assert_eq!(stopping.trim(), "STOPPING=1");
    assert!(child.wait().unwrap().success());
    let lines: Vec<String> = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("listening on /ip4/127.0.0.1/tcp/")),
        "{lines:?}"
    );
    assert!(lines.last().unwrap().starts_with("stopped: "), "{lines:?}");
}

#[test]
fn a_bad_config_file_is_one_line_naming_file_and_key_and_starts_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("node");
    for (text, key) in [
        ("lisen = [\"/ip4/127.0.0.1/tcp/0\"]\n", "lisen"),
        ("offload-capacity = 0\n", "offload-capacity"),
    ] {
        let config = write(tmp.path(), "bad.toml", text);
        let out = Command::new(porfiry_bin())
            .args([
                "--data-dir",
                data.to_str().unwrap(),
                "run",
                "--config",
                &config,
            ])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(78),
            "EX_CONFIG: the unit does not restart"
        );
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(&config) && err.contains(&format!("key \"{key}\"")),
            "{err}"
        );
        assert!(!data.exists(), "nothing was created");
    }
}

#[test]
fn a_backup_taken_while_running_brings_back_the_same_node_after_its_disk_is_lost() {
    let mut a = MeshNode::init("A");
    let mut b = MeshNode::init("B");
    b.befriend(&a, false, &[]);
    b.start_server(0);
    a.befriend(&b, true, &[]);
    a.start_server(0);
    b.wait_logged(&["friend connected", &a.peer_id]);
    a.post("friends", "before the backup");
    wait_for("B to get A's note", || b.has_note(&a, "before the backup"));

    let tmp = tempfile::tempdir().unwrap();
    let pass = write(tmp.path(), "pass", "a long family passphrase\n");
    let file = tmp.path().join("a.backup");
    let file_arg = file.to_str().unwrap();
    let said = a.cli_ok(&["backup", file_arg, "--passphrase-file", &pass]);
    assert!(said.contains(&a.peer_id), "{said}");
    // A second backup to the same name is refused; the first stays.
    let again = a.cli(&["backup", file_arg, "--passphrase-file", &pass]);
    assert!(!again.status.success());

    // A's disk is lost while B goes on posting.
    assert!(a.terminate().status.success());
    std::fs::remove_dir_all(a.dir()).unwrap();
    b.post("friends", "while A was away");

    // A wrong passphrase: one line, nothing made.
    let wrong = write(tmp.path(), "wrong", "not the passphrase\n");
    let out = a.cli(&["restore", file_arg, "--passphrase-file", &wrong]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("wrong passphrase"), "{err}");
    assert!(!a.dir().exists());

    let said = a.cli_ok(&["restore", file_arg, "--passphrase-file", &pass]);
    assert!(said.contains(&a.peer_id), "{said}");
    let status: serde_json::Value = serde_json::from_str(&a.cli_ok(&["status", "--json"])).unwrap();
    assert_eq!(status["peer_id"], a.peer_id.as_str());
    a.start_server(0);
    wait_for("the restored A to catch up with B", || {
        a.has_note(&b, "while A was away")
    });
    let own = a.cli_ok(&["notes", "list"]);
    assert!(own.contains("before the backup"), "{own}");
}

/// `porfiry <args>` on a terminal of its own (`script` gives it a pty):
/// each answer is typed once its prompt shows. Returns the exit status's
/// success and everything the terminal showed.
fn on_a_terminal(args: &str, answers: &[(&str, &str)]) -> (bool, String) {
    use std::io::{Read as _, Write as _};
    use std::sync::{Arc, Mutex};
    let command = format!("{} {args}", porfiry_bin().display());
    let mut child = Command::new("script")
        .args(["-qfec", &command, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("script runs");
    let shown = Arc::new(Mutex::new(String::new()));
    let mut out = child.stdout.take().unwrap();
    let sink = shown.clone();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 1024];
        while let Ok(n) = out.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    let mut input = child.stdin.take().unwrap();
    let mut seen = 0;
    for (prompt, answer) in answers {
        wait_for(&format!("the prompt {prompt:?}"), || {
            shown.lock().unwrap()[seen..].contains(prompt)
        });
        seen = shown.lock().unwrap().len();
        input.write_all(format!("{answer}\n").as_bytes()).unwrap();
        input.flush().unwrap();
    }
    let status = child.wait().unwrap();
    drop(input);
    reader.join().unwrap();
    let text = shown.lock().unwrap().clone();
    (status.success(), text)
}

#[test]
fn the_passphrase_is_asked_on_the_terminal_twice_without_echo() {
    if !Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!("SKIPPED: util-linux's `script` is missing (it gives the command a terminal)");
        return;
    }
    let a = MeshNode::init("A");
    let tmp = tempfile::tempdir().unwrap();
    let dir = a.dir().display().to_string();
    let file = tmp.path().join("a.backup");
    let pass = "typed on the terminal";

    // Two different answers: refused, nothing written.
    let (ok, shown) = on_a_terminal(
        &format!("--data-dir {dir} backup {}", file.display()),
        &[
            ("backup passphrase: ", pass),
            ("the same again: ", "something else"),
        ],
    );
    assert!(!ok && shown.contains("differ"), "{shown}");
    assert!(!file.exists());

    let (ok, shown) = on_a_terminal(
        &format!("--data-dir {dir} backup {}", file.display()),
        &[("backup passphrase: ", pass), ("the same again: ", pass)],
    );
    assert!(ok && shown.contains("backed up node"), "{shown}");
    assert!(!shown.contains(pass), "the passphrase was echoed: {shown}");

    let target = tmp.path().join("restored");
    let (ok, shown) = on_a_terminal(
        &format!("restore {} --data-dir {}", file.display(), target.display()),
        &[("backup passphrase: ", pass)],
    );
    assert!(
        ok && shown.contains(&format!("restored node {}", a.peer_id)),
        "{shown}"
    );
    assert!(
        !shown.contains("the same again"),
        "a restore asks once: {shown}"
    );
}
