//! Shared helpers of the `chat_*` end-to-end tests: running a real
//! `porfiry chat` process against a scripted model (whole stdin at once, or
//! line by line), and reading the requests the model server received.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use porfiry_tests::RecordedRequest;
use porfiry_tests::porfiry_bin::porfiry_bin;

/// Longest a test waits for a chat process: far above any test's real need
/// (seconds), so only a hung process trips it.
pub const PROCESS_DEADLINE: Duration = Duration::from_secs(60);

/// The sample catalogue's Lara Croft films as `media_search|lara croft` lists them.
pub const LARA_HITS: [&str; 3] = [
    "tt0146316 — Lara Croft: Tomb Raider (2001)",
    "tt0325703 — Lara Croft Tomb Raider: The Cradle of Life (2003)",
    "tt1365519 — Tomb Raider (2018)",
];

/// The media catalogue line in every English prompt.
pub const CATALOGUE_LINE: &str = "media — films: search, details, play\n";
/// The media skill's index line (state 1 only).
pub const MEDIA_SKILL_LINE: &str =
    "media — films (find, details, play, pause) — call enable_toolset|media\n";
/// The active-set section of state 3, with the media tools.
pub const ACTIVE_MEDIA: &str = "Active toolsets: media. Their tools:\n\
    media_search|query — find films by title or words\n\
    media_info|id — film details by id\n\
    media_play|id — start playing a film by id\n";

/// A `porfiry chat` command with a clean environment.
pub fn chat_command(data_dir: &Path, llm_url: &str, extra: &[&str]) -> Command {
    let mut cmd = Command::new(porfiry_bin());
    cmd.arg("--data-dir")
        .arg(data_dir)
        .args(["chat", "--llm-url", llm_url, "--llm-model", "test-model"])
        .args(extra)
        .env_remove("PORFIRY_DATA_DIR")
        .env_remove("PORFIRY_LLM_URL")
        .env_remove("PORFIRY_LLM_MODEL")
        .env_remove("PORFIRY_LLM_API_KEY")
        .env_remove("RUST_LOG");
    cmd
}

/// What a finished process printed.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `cmd` with `stdin` written whole and closed; waits for the exit.
pub fn run_with_input(mut cmd: Command, stdin: &str) -> Finished {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("porfiry starts");
    let mut input = child.stdin.take().expect("stdin piped");
    // A chat that stops early (a bad catalogue, a bad flag) may exit before
    // reading its input; what it did is judged by its exit and output.
    if let Err(e) = input.write_all(stdin.as_bytes()) {
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::BrokenPipe,
            "stdin written: {e}"
        );
    }
    drop(input);
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = rx
        .recv_timeout(PROCESS_DEADLINE)
        .expect("porfiry chat finished in time")
        .expect("porfiry chat output read");
    let done = Finished {
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(
        !done.stderr.contains("panicked"),
        "no panic: {}",
        done.stderr
    );
    done
}

/// [`run_with_input`] of `porfiry chat` for the common case.
pub fn chat(data_dir: &Path, llm_url: &str, extra: &[&str], stdin: &str) -> Finished {
    run_with_input(chat_command(data_dir, llm_url, extra), stdin)
}

/// A chat process driven line by line, for tests that interleave sessions.
pub struct LiveChat {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl LiveChat {
    /// Starts `porfiry chat`.
    pub fn start(data_dir: &Path, llm_url: &str, extra: &[&str]) -> Self {
        let mut child = chat_command(data_dir, llm_url, extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("porfiry starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout piped");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Self {
            child,
            stdin,
            lines,
        }
    }

    /// Sends one message and returns the next stdout line (a one-line answer).
    pub fn ask(&mut self, message: &str) -> String {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("message written");
        stdin.flush().expect("message flushed");
        self.lines
            .recv_timeout(PROCESS_DEADLINE)
            .expect("porfiry chat answered in time")
    }

    /// Closes stdin and waits for the exit.
    pub fn finish(mut self) -> ExitStatus {
        drop(self.stdin.take());
        self.child.wait().expect("porfiry chat exits")
    }
}

impl Drop for LiveChat {
    fn drop(&mut self) {
        if self.stdin.is_some() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The system prompt of a recorded request.
pub fn system(r: &RecordedRequest) -> String {
    r.system_prompt().expect("a system message").to_owned()
}

/// `(role, content)` of the messages after the system prompt.
pub fn history(r: &RecordedRequest) -> Vec<(String, String)> {
    r.messages()
        .into_iter()
        .skip(1)
        .map(|(role, content)| (role.to_owned(), content.to_owned()))
        .collect()
}

/// `(role, content)` pair.
pub fn msg(role: &str, content: &str) -> (String, String) {
    (role.to_owned(), content.to_owned())
}

/// Asserts no message of any request is an enable/disable call or its reply
/// (a skill body that merely mentions `enable_toolset|media` is fine).
pub fn assert_no_invisible_calls_in_history(requests: &[RecordedRequest]) {
    for r in requests {
        for (_, content) in history(r) {
            for banned in [
                "TOOL_CALL: enable_toolset",
                "TOOL_CALL: disable_toolset",
                "TOOL_RESULT enable_toolset",
                "TOOL_RESULT disable_toolset",
            ] {
                assert!(
                    !content.starts_with(banned),
                    "request #{} has {banned:?} in its history: {content}",
                    r.number
                );
            }
            for reply in ["toolset media enabled", "toolset media disabled"] {
                assert!(
                    !content.contains(reply),
                    "request #{} has {reply:?} in its history: {content}",
                    r.number
                );
            }
        }
    }
}
