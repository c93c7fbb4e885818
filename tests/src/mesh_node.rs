//! Real `porfiry` nodes for the mesh end-to-end tests: a data dir, the CLI
//! run against it, and a `porfiry run` daemon whose stdout (peer id, listen
//! addresses, the shutdown line) and stderr (logs) are read by threads, so
//! tests can wait on what a node printed or on what its SQLite file holds.
//!
//! Waiting is always on an observable condition, polled every
//! [`POLL_INTERVAL`] until [`DEADLINE`] (a safety net, never a
//! synchronisation point).

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use porfiry_mesh::invite::service::LISTENING_CONFIG_KEY;
use porfiry_protocol::NodeKey;
use porfiry_storage::{DB_FILE_NAME, Note, NoteFilter, Store, Stored};
use tempfile::TempDir;

use crate::porfiry_bin::porfiry_bin;

/// Longest any wait lasts before the test fails: far above what a healthy
/// mesh on loopback needs (a second or two), so only a real fault trips it.
pub const DEADLINE: Duration = Duration::from_secs(45);

/// How often a wait looks again.
pub const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// Polls `cond` until it holds; panics naming `what` after [`DEADLINE`].
pub fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < DEADLINE, "timed out waiting for {what}");
        std::thread::sleep(POLL_INTERVAL);
    }
}

/// Rows in `items` but the `reachable_at` ones: what people and thinking
/// cores shared. Every running node tells its friends its addresses, so
/// those come and go with starts and address changes, beside what a test
/// counts.
pub fn shared_items(store: &Store) -> u64 {
    // One query, one snapshot: a running daemon may store a friend's
    // address between two reads, and a count less the addresses read
    // later would then be one short.
    let reachable = porfiry_protocol::ItemKind::ReachableAt.as_str();
    store
        .item_counts_by_kind()
        .expect("count")
        .into_iter()
        .filter(|(kind, _)| kind != reachable)
        .map(|(_, count)| count)
        .sum()
}

/// One node: its data dir and, while running, its daemon.
pub struct MeshNode {
    /// A short name for messages ("A", "B", …).
    pub name: String,
    /// Its peer id.
    pub peer_id: String,
    _tmp: TempDir,
    dir: PathBuf,
    daemon: Option<Daemon>,
    /// The first `listening on …/p2p/…` address of the last run.
    pub address: Option<String>,
    last_stderr: String,
    /// The network namespace `porfiry run` runs in (`ip netns exec`), if any.
    netns: Option<String>,
    /// The `porfiry` program it runs: this build's, or another version's.
    bin: PathBuf,
}

struct Daemon {
    child: Child,
    stdout: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<String>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

/// How a stopped daemon ended.
#[derive(Debug)]
pub struct Exit {
    /// Its exit status.
    pub status: ExitStatus,
    /// Every stdout line it printed.
    pub stdout: Vec<String>,
    /// Its whole stderr.
    pub stderr: String,
}

impl Exit {
    /// Panics unless the daemon `name` exited with success and no panic.
    pub fn assert_clean(&self, name: &str) {
        assert!(self.status.success(), "{name}: {}", self.stderr);
        assert!(!self.stderr.contains("panicked"), "{name}: {}", self.stderr);
    }
}

impl MeshNode {
    /// A new node (`porfiry init` in a fresh temp dir).
    pub fn init(name: &str) -> MeshNode {
        MeshNode::init_with(name, |_| {})
    }

    /// [`MeshNode::init`], calling `prepare` with the data dir's path
    /// before `porfiry init` (to mount a small filesystem there, say).
    pub fn init_with(name: &str, prepare: impl FnOnce(&Path)) -> MeshNode {
        MeshNode::init_full(name, porfiry_bin(), prepare)
    }

    /// A new node run by the `porfiry` program at `bin` (another version's
    /// binary, for the mixed-version test). Only its CLI and files may be
    /// used then: [`MeshNode::store`] and what reads through it would
    /// migrate its database to this build's schema.
    pub fn init_with_binary(name: &str, bin: &Path) -> MeshNode {
        MeshNode::init_full(name, bin.to_path_buf(), |_| {})
    }

    /// Runs the node's data dir with the `porfiry` program at `bin` from
    /// the next command on: an upgrade (or a downgrade) in place, as a
    /// package upgrade does it. The daemon must be stopped.
    pub fn use_binary(&mut self, bin: &Path) {
        assert!(self.daemon.is_none(), "{} is still running", self.name);
        self.bin = bin.to_path_buf();
    }

    fn init_full(name: &str, bin: PathBuf, prepare: impl FnOnce(&Path)) -> MeshNode {
        let tmp = tempfile::tempdir().expect("temp dir");
        let dir = tmp.path().join(name);
        prepare(&dir);
        let mut node = MeshNode {
            name: name.to_owned(),
            peer_id: String::new(),
            _tmp: tmp,
            dir,
            daemon: None,
            address: None,
            last_stderr: String::new(),
            netns: None,
            bin,
        };
        node.cli_ok(&["init"]);
        let key = NodeKey::load(&node.dir.join("identity.key")).expect("identity written by init");
        node.peer_id = key.peer_id().to_string();
        node
    }

    /// The data dir.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The node's key (tests sign with it in-process).
    pub fn key(&self) -> NodeKey {
        NodeKey::load(&self.dir.join("identity.key")).expect("identity")
    }

    /// Runs the daemon inside network namespace `ns` from its next start
    /// (the CLI commands work on the data dir and run here).
    pub fn run_in_netns(&mut self, ns: &str) {
        self.netns = Some(ns.to_owned());
    }

    /// A `porfiry --data-dir <dir>` command with a clean environment.
    pub fn command(&self) -> Command {
        self.command_in(None)
    }

    /// [`MeshNode::command`], inside network namespace `netns` if given.
    fn command_in(&self, netns: Option<&str>) -> Command {
        let mut cmd = match netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns]).arg(&self.bin);
                c
            }
            None => Command::new(&self.bin),
        };
        cmd.arg("--data-dir")
            .arg(&self.dir)
            .env_remove("PORFIRY_DATA_DIR")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        cmd
    }

    /// Runs the CLI with `args` and returns what it did.
    pub fn cli(&self, args: &[&str]) -> Output {
        self.command()
            .args(args)
            .env_remove("RUST_LOG")
            .output()
            .expect("porfiry runs")
    }

    /// Runs the CLI, asserts success, returns stdout.
    pub fn cli_ok(&self, args: &[&str]) -> String {
        let out = self.cli(args);
        assert!(
            out.status.success(),
            "{}: porfiry {args:?} failed: {}",
            self.name,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `friends add` `other`, dialling it at its address when `dial`.
    pub fn befriend(&self, other: &MeshNode, dial: bool, groups: &[&str]) {
        let mut args = vec!["friends", "add", other.peer_id.as_str()];
        if dial {
            args.push(
                other
                    .address
                    .as_deref()
                    .expect("the friend to dial is listening"),
            );
        }
        for g in groups {
            args.extend(["--group", g]);
        }
        self.cli_ok(&args);
    }

    /// `notes post --audience <audience> <text>`; returns the item id (hex),
    /// empty for a private note.
    pub fn post(&self, audience: &str, text: &str) -> String {
        let out = self.cli_ok(&["notes", "post", "--audience", audience, text]);
        out.trim()
            .rsplit_once(" as item ")
            .map(|(_, id)| id.to_owned())
            .unwrap_or_default()
    }

    /// Starts `porfiry run` as a server on a loopback port (`port` 0 = any)
    /// and waits for its address.
    pub fn start_server(&mut self, port: u16) {
        self.start_server_with(port, &[]);
    }

    /// [`MeshNode::start_server`] on any port, then waits until the daemon
    /// has recorded the addresses it listens on, which `invite` and `devices
    /// link` put into their codes.
    pub fn start_server_recording_addresses(&mut self) {
        self.start_server(0);
        wait_for("the listen addresses to be recorded", || {
            self.store()
                .config_get::<Vec<String>>(LISTENING_CONFIG_KEY)
                .unwrap()
                .is_some_and(|a| !a.is_empty())
        });
    }

    /// [`MeshNode::start_server`] with more `porfiry run` flags (a model,
    /// `--offload`, …); returns the address it listens on.
    pub fn start_server_with(&mut self, port: u16, args: &[&str]) -> String {
        let listen = format!("/ip4/127.0.0.1/tcp/{port}");
        let mut all = vec!["--listen", listen.as_str()];
        all.extend_from_slice(args);
        self.start(&all);
        let stdout = self.daemon.as_ref().expect("running").stdout.clone();
        let mut address = None;
        wait_for(&format!("{} to listen", self.name), || {
            address = stdout
                .lock()
                .unwrap()
                .iter()
                .find_map(|l| l.strip_prefix("listening on ").map(str::to_owned));
            address.is_some() || !self.is_running()
        });
        assert!(self.is_running(), "{} exited: {}", self.name, self.stderr());
        self.address = address.clone();
        address.expect("a listen address")
    }

    /// The token of the daemon's HTTP API (`<data-dir>/api-token`).
    pub fn api_token(&self) -> String {
        std::fs::read_to_string(self.dir.join("api-token"))
            .expect("the token file")
            .trim()
            .to_owned()
    }

    /// Starts `porfiry run --profile phone` and waits for its peer id line.
    pub fn start_phone(&mut self) {
        self.start(&["--profile", "phone"]);
    }

    /// Starts a phone whose API (on a free loopback port) talks to `llm`
    /// with no retries, plus `extra` flags; returns the API's address and
    /// token.
    pub fn start_with_model(
        &mut self,
        llm: &crate::ScriptedLlm,
        extra: &[&str],
    ) -> (std::net::SocketAddr, String) {
        let url = llm.url();
        let mut args = model_phone_args(&url);
        args.extend_from_slice(extra);
        self.start(&args);
        (self.api_address(), self.api_token())
    }

    /// [`MeshNode::start_with_model`] with the cognitive core on (no
    /// `--no-think`): the phone thinks with `llm` as well as chatting.
    pub fn start_thinking_with_model(
        &mut self,
        llm: &crate::ScriptedLlm,
    ) -> (std::net::SocketAddr, String) {
        let url = llm.url();
        self.start_thinking(&model_phone_args(&url));
        (self.api_address(), self.api_token())
    }

    /// Starts `porfiry run <args> --no-think` (tests that count model
    /// requests must not see the cognitive core's) and waits for the
    /// `peer id:` line.
    pub fn start(&mut self, args: &[&str]) {
        let mut with = args.to_vec();
        with.push("--no-think");
        self.start_thinking(&with);
    }

    /// Starts `porfiry run <args>` as given — with a model configured, the
    /// cognitive core runs too — and waits for the `peer id:` line.
    pub fn start_thinking(&mut self, args: &[&str]) {
        assert!(self.daemon.is_none(), "{} is already running", self.name);
        // Many daemons run at once in tests: each gets its own API port
        // unless the test picks the API flags itself.
        let api_given = args.iter().any(|a| *a == "--api" || *a == "--no-api");
        let mut child = self
            .command_in(self.netns.as_deref())
            .arg("run")
            .args(args)
            .args(if api_given {
                &[][..]
            } else {
                &["--api", "127.0.0.1:0"][..]
            })
            // PORFIRY_TEST_RUST_LOG sets the daemons' log filter when a
            // failing test needs more (`porfiry_mesh=debug,libp2p_dcutr=debug`).
            .env(
                "RUST_LOG",
                std::env::var("PORFIRY_TEST_RUST_LOG")
                    .unwrap_or_else(|_| "info,libp2p=warn".into()),
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("porfiry run starts");
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let stderr = Arc::new(Mutex::new(String::new()));
        let out = child.stdout.take().expect("piped");
        let lines = stdout.clone();
        let out_reader = std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                lines.lock().unwrap().push(line);
            }
        });
        let mut err = child.stderr.take().expect("piped");
        let text = stderr.clone();
        let err_reader = std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                text.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        self.daemon = Some(Daemon {
            child,
            stdout,
            stderr,
            readers: vec![out_reader, err_reader],
        });
        let want = format!("peer id: {}", self.peer_id);
        wait_for(&format!("{} to start", self.name), || {
            self.stdout_lines().contains(&want) || !self.is_running()
        });
        assert!(self.is_running(), "{} exited: {}", self.name, self.stderr());
    }

    /// The address of the daemon's HTTP API, from its `api on http://ADDR`
    /// line (waits for it).
    pub fn api_address(&mut self) -> std::net::SocketAddr {
        let mut found = None;
        wait_for(&format!("{}'s API to start", self.name), || {
            found = self
                .stdout_lines()
                .iter()
                .find_map(|l| l.strip_prefix("api on http://").map(str::to_owned));
            found.is_some() || !self.is_running()
        });
        found
            .unwrap_or_else(|| panic!("{} exited: {}", self.name, self.stderr()))
            .parse()
            .expect("api address")
    }

    /// True while the daemon process is alive.
    pub fn is_running(&mut self) -> bool {
        match &mut self.daemon {
            Some(d) => matches!(d.child.try_wait(), Ok(None)),
            None => false,
        }
    }

    /// The running daemon's process id.
    pub fn pid(&self) -> Option<u32> {
        self.daemon.as_ref().map(|d| d.child.id())
    }

    /// The running daemon's peak resident memory so far, in bytes
    /// (`VmHWM` in `/proc/PID/status`; Linux only, `None` elsewhere).
    pub fn peak_rss_bytes(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()?)).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb * 1024)
    }

    /// The daemon's stdout lines so far (of the current or last run).
    pub fn stdout_lines(&self) -> Vec<String> {
        self.daemon
            .as_ref()
            .map(|d| d.stdout.lock().unwrap().clone())
            .unwrap_or_default()
    }

    /// The daemon's stderr so far (of the current run, or the last one).
    pub fn stderr(&self) -> String {
        self.daemon
            .as_ref()
            .map(|d| d.stderr.lock().unwrap().clone())
            .unwrap_or_else(|| self.last_stderr.clone())
    }

    /// How many stderr lines hold every one of `needles`.
    pub fn logged_count(&self, needles: &[&str]) -> usize {
        self.stderr()
            .lines()
            .filter(|l| needles.iter().all(|n| l.contains(n)))
            .count()
    }

    /// True when one stderr line holds every one of `needles`.
    pub fn logged(&self, needles: &[&str]) -> bool {
        self.stderr()
            .lines()
            .any(|l| needles.iter().all(|n| l.contains(n)))
    }

    /// Waits until one stderr line holds every one of `needles`.
    pub fn wait_logged(&self, needles: &[&str]) {
        wait_for(&format!("{} to log {needles:?}", self.name), || {
            self.logged(needles)
        });
    }

    /// Sends SIGTERM and waits for the exit.
    pub fn terminate(&mut self) -> Exit {
        self.signal("TERM")
    }

    /// Sends SIGINT and waits for the exit.
    pub fn interrupt(&mut self) -> Exit {
        self.signal("INT")
    }

    fn signal(&mut self, sig: &str) -> Exit {
        let pid = self
            .daemon
            .as_ref()
            .expect("running")
            .child
            .id()
            .to_string();
        let ok = Command::new("kill")
            .args([&format!("-{sig}"), &pid])
            .status()
            .expect("kill runs");
        assert!(ok.success(), "kill -{sig} {pid}");
        self.wait_exit()
    }

    /// Kills the daemon with SIGKILL (no chance to clean up).
    pub fn kill(&mut self) -> Exit {
        self.daemon
            .as_mut()
            .expect("running")
            .child
            .kill()
            .expect("SIGKILL");
        self.wait_exit()
    }

    fn wait_exit(&mut self) -> Exit {
        let mut status = None;
        let daemon = self.daemon.as_mut().expect("running");
        wait_for("the daemon to exit", || {
            status = daemon.child.try_wait().expect("wait");
            status.is_some()
        });
        // The pipes close with the process: the readers take the last bytes and end.
        let mut d = self.daemon.take().expect("running");
        for r in d.readers.drain(..) {
            let _ = r.join();
        }
        let exit = Exit {
            status: status.expect("exited"),
            stdout: d.stdout.lock().unwrap().clone(),
            stderr: d.stderr.lock().unwrap().clone(),
        };
        self.last_stderr = exit.stderr.clone();
        exit
    }

    /// Opens the node's database (a second connection; the daemon may run).
    pub fn store(&self) -> Store {
        Store::open(self.dir.join(DB_FILE_NAME)).expect("database opens")
    }

    /// Notes merged from `author`'s items, oldest first.
    pub fn notes_from(&self, author: &MeshNode) -> Vec<Stored<Note>> {
        let store = self.store();
        let mut all = Vec::new();
        loop {
            let page = store
                .notes_filter(&NoteFilter {
                    author: Some(author.peer_id.clone()),
                    limit: Some(1000),
                    offset: all.len() as u32,
                    oldest_first: true,
                    ..Default::default()
                })
                .expect("notes read");
            let done = page.len() < 1000;
            all.extend(page);
            if done {
                return all;
            }
        }
    }

    /// True when a note with exactly `text` was merged from `author`.
    pub fn has_note(&self, author: &MeshNode, text: &str) -> bool {
        self.notes_from(author).iter().any(|n| n.row.text == text)
    }

    /// Number of rows in `items` (what the engine holds, `stopped: N items held`).
    pub fn item_count(&self) -> u64 {
        self.store().item_count().expect("count")
    }

    /// This node's `status --json` entry for friend `peer` (panics if it
    /// has none).
    pub fn friend_status(&self, peer: &str) -> serde_json::Value {
        let status: serde_json::Value =
            serde_json::from_str(&self.cli_ok(&["status", "--json"])).expect("status json");
        status["friends"]
            .as_array()
            .expect("friends")
            .iter()
            .find(|f| f["peer_id"] == peer)
            .cloned()
            .unwrap_or_else(|| panic!("{peer} in {}'s status: {status}", self.name))
    }

    /// [`shared_items`] of the node's file.
    pub fn shared_item_count(&self) -> u64 {
        shared_items(&self.store())
    }
}

impl Drop for MeshNode {
    fn drop(&mut self) {
        if let Some(d) = &mut self.daemon {
            let _ = d.child.kill();
            let _ = d.child.wait();
        }
    }
}

/// `porfiry run` flags for a phone whose API is on a free loopback port and
/// whose model is the scripted one at `url`, with no retries.
fn model_phone_args(url: &str) -> Vec<&str> {
    vec![
        "--profile",
        "phone",
        "--api",
        "127.0.0.1:0",
        "--llm-url",
        url,
        "--llm-model",
        "scripted",
        "--llm-retries",
        "0",
    ]
}
