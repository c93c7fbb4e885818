//! Running child commands: the cargo that started us, a command that must
//! succeed, and a child's exit status handed on as ours.

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitCode, ExitStatus, Stdio};

use anyhow::{Context, Result, bail};

/// Shells add 128 to the number of the signal that killed a child.
const SIGNAL_EXIT_BASE: i32 = 128;

/// A command for the cargo that runs this xtask (`$CARGO`), else `cargo`.
pub fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// The program and arguments, as one line for messages.
pub fn describe(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|part| part.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs `cmd` to its end (inheriting stdio) and returns how it ended.
pub fn status(cmd: &mut Command) -> Result<ExitStatus> {
    cmd.status()
        .with_context(|| format!("could not start `{}`", describe(cmd)))
}

/// Runs `cmd` with its output silenced; true when it exits 0.
pub fn succeeds(cmd: &mut Command) -> bool {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `cmd` and fails unless it exits 0.
pub fn checked(cmd: &mut Command) -> Result<()> {
    let status = status(cmd)?;
    if !status.success() {
        bail!("`{}` failed ({status})", describe(cmd));
    }
    Ok(())
}

/// The exit code that hands a child's end on: its code, or 128 + the
/// signal that killed it, as a shell reports it.
pub fn exit_code(status: ExitStatus) -> ExitCode {
    let code = status
        .code()
        .or_else(|| status.signal().map(|signal| SIGNAL_EXIT_BASE + signal))
        .unwrap_or(1);
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_joins_program_and_arguments() {
        let mut cmd = Command::new("apt-get");
        cmd.args(["install", "-y", "cmake"]);
        assert_eq!(describe(&cmd), "apt-get install -y cmake");
    }

    #[test]
    fn exit_codes_and_signals_are_handed_on() {
        let code = |raw: i32| exit_code(ExitStatus::from_raw(raw));
        // wait(2) encodings: exit status in the second byte, signal in the first.
        assert_eq!(code(3 << 8), ExitCode::from(3));
        assert_eq!(code(0), ExitCode::SUCCESS);
        assert_eq!(code(9), ExitCode::from(137));
    }

    #[test]
    fn checked_fails_on_a_non_zero_exit() {
        assert!(checked(&mut Command::new("true")).is_ok());
        let err = checked(&mut Command::new("false")).unwrap_err();
        assert!(err.to_string().contains("`false` failed"), "{err}");
        assert!(checked(&mut Command::new("/nonexistent/xtask-tool")).is_err());
    }

    #[test]
    fn succeeds_is_the_exit_status() {
        assert!(succeeds(&mut Command::new("true")));
        assert!(!succeeds(&mut Command::new("false")));
        assert!(!succeeds(&mut Command::new("/nonexistent/xtask-tool")));
    }
}
