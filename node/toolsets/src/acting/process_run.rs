//! Running one allowed program for `process_start`: argv without a shell,
//! stdin closed, stdout and stderr captured up to a cap (the rest drained
//! and counted, so a chatty program never blocks on a full pipe), ended by
//! its own exit, the timeout, or `process_stop`. The caller records the
//! [`Ended`] in `process_log`.
//!
//! A program that starts children of its own (`sh -c …`) is killed alone on
//! timeout or stop; its children are orphaned but no longer read.

use std::process::Stdio;
use std::time::Duration;

use porfiry_skills::Language;
use porfiry_storage::ProcessStatus;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};
use tokio::sync::oneshot;

use super::texts;

/// How an external program is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessLimits {
    /// Killed after this long.
    pub timeout: Duration,
    /// Bytes of stdout and of stderr each kept for the result.
    pub output_bytes: usize,
    /// Programs running at once; more are refused.
    pub max_running: usize,
}

/// A program gets five minutes: enough for a fetch, a build step or a small
/// computation; longer work belongs in a script that reports as it goes.
pub const PROCESS_TIMEOUT: Duration = Duration::from_secs(300);

/// 2 KiB of stdout (and of stderr) land in `process_log.result`: about 500
/// tokens, so one result cannot crowd a 3K-token prompt (context 2).
pub const PROCESS_OUTPUT_BYTES: usize = 2_048;

/// Four programs at once: a phone runs the model too; more would starve it.
pub const MAX_RUNNING_PROCESSES: usize = 4;

/// Bytes read from a pipe at a time.
const READ_CHUNK_BYTES: usize = 4_096;

impl Default for ProcessLimits {
    fn default() -> Self {
        Self {
            timeout: PROCESS_TIMEOUT,
            output_bytes: PROCESS_OUTPUT_BYTES,
            max_running: MAX_RUNNING_PROCESSES,
        }
    }
}

/// How a run ended: the row's status and result text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// `ok` (exit 0), `error` (other exit), `timeout`, or `close` (stopped).
    pub status: ProcessStatus,
    /// Exit line, the captured output, and a note when it was cut.
    pub result: String,
}

/// Starts `argv` (program first) with stdin closed and both outputs piped.
pub fn spawn(argv: &[String]) -> std::io::Result<Child> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "empty command"))?;
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
}

/// What was read from one pipe: the first `cap` bytes and the total.
#[derive(Debug, Default)]
struct Captured {
    kept: Vec<u8>,
    total: usize,
}

impl Captured {
    async fn drain(&mut self, pipe: Option<impl AsyncRead + Unpin>, cap: usize) {
        let Some(mut pipe) = pipe else { return };
        let mut buf = vec![0; READ_CHUNK_BYTES];
        loop {
            match pipe.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    let room = cap.saturating_sub(self.kept.len()).min(n);
                    self.kept.extend_from_slice(&buf[..room]);
                    self.total += n;
                }
            }
        }
    }
}

/// Why the wait ended.
enum Stop {
    Exited(std::io::Result<std::process::ExitStatus>),
    Timeout,
    Stopped,
}

/// Waits for `child` to end (or kills it on timeout or stop) and describes
/// the outcome in `lang`.
pub async fn run(
    mut child: Child,
    limits: ProcessLimits,
    stop: oneshot::Receiver<()>,
    lang: Language,
) -> Ended {
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let mut out = Captured::default();
    let mut err = Captured::default();
    let cap = limits.output_bytes;
    let stopped = {
        let collect = async {
            let (_, _, status) =
                tokio::join!(out.drain(stdout, cap), err.drain(stderr, cap), child.wait());
            status
        };
        tokio::select! {
            status = collect => Stop::Exited(status),
            () = tokio::time::sleep(limits.timeout) => Stop::Timeout,
            // A dropped sender (the toolset gone) is not a stop request.
            Ok(()) = stop => Stop::Stopped,
        }
    };
    let (status, head) = match stopped {
        Stop::Exited(Ok(s)) if s.success() => {
            (ProcessStatus::Ok, texts::process_exit(lang, s.code()))
        }
        Stop::Exited(Ok(s)) => (ProcessStatus::Error, texts::process_exit(lang, s.code())),
        Stop::Exited(Err(e)) => (
            ProcessStatus::Error,
            texts::process_wait_failed(lang, &e.to_string()),
        ),
        Stop::Timeout => {
            kill(&mut child).await;
            (
                ProcessStatus::Timeout,
                texts::process_timed_out(lang, limits.timeout.as_secs()),
            )
        }
        Stop::Stopped => {
            kill(&mut child).await;
            (
                ProcessStatus::Close,
                texts::process_stopped(lang).to_owned(),
            )
        }
    };
    Ended {
        status,
        result: describe(lang, head, &out, &err, cap),
    }
}

async fn kill(child: &mut Child) {
    if let Err(e) = child.kill().await {
        tracing::warn!(error = %e, "cannot kill a process");
    }
}

/// The result text: the head line, then each non-empty output, then a note
/// per output that was cut.
fn describe(lang: Language, head: String, out: &Captured, err: &Captured, cap: usize) -> String {
    let mut text = head;
    for (name, c) in [("stdout", out), ("stderr", err)] {
        if c.kept.is_empty() {
            continue;
        }
        text.push_str(&format!(
            "\n{name}:\n{}",
            String::from_utf8_lossy(&c.kept).trim_end()
        ));
        if c.total > c.kept.len() {
            text.push('\n');
            text.push_str(&texts::process_output_cut(lang, name, cap, c.total));
        }
    }
    text
}
