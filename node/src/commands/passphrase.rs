//! The backup passphrase: read from `--passphrase-file PATH` (its first
//! line) or asked on the terminal without echo — twice for a new backup,
//! so a typo cannot seal a backup nobody can open. The rules it follows
//! (not empty, the minimum length of a new one) are `porfiry_backup`'s,
//! shared with the family page's backup.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use clap::Args;

pub use porfiry_backup::passphrase::{MAX_PASSPHRASE_BYTES, Purpose, check};

/// `--passphrase-file`.
#[derive(Debug, Clone, Default, Args)]
pub struct PassphraseArgs {
    /// Read the passphrase from this file's first line instead of asking on
    /// the terminal (for scripts; keep the file private).
    #[arg(long, value_name = "PATH")]
    pub passphrase_file: Option<PathBuf>,
}

/// The passphrase, from the file or the terminal.
pub fn passphrase(args: &PassphraseArgs, purpose: Purpose) -> anyhow::Result<String> {
    let pass = match &args.passphrase_file {
        Some(path) => from_file(path)?,
        None => ask(purpose)?,
    };
    check(&pass, purpose)?;
    Ok(pass)
}

/// The first line of `path` (without its line ending).
pub fn from_file(path: &Path) -> anyhow::Result<String> {
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_PASSPHRASE_BYTES + 1).read_to_string(&mut text))
        .with_context(|| format!("cannot read the passphrase file {}", path.display()))?;
    if text.len() as u64 > MAX_PASSPHRASE_BYTES {
        bail!(
            "the passphrase file {} is over {MAX_PASSPHRASE_BYTES} bytes: not a passphrase",
            path.display()
        );
    }
    Ok(text.lines().next().unwrap_or("").to_owned())
}

/// Asks on the terminal (`/dev/tty`), without echo.
fn ask(purpose: Purpose) -> anyhow::Result<String> {
    let no_tty = "no terminal to ask the passphrase on: give --passphrase-file PATH";
    let first = rpassword::prompt_password("backup passphrase: ").context(no_tty)?;
    if purpose == Purpose::Seal {
        check(&first, purpose)?;
        let again = rpassword::prompt_password("the same again: ").context(no_tty)?;
        if again != first {
            bail!("the two passphrases differ; nothing was written");
        }
    }
    Ok(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_gives_its_first_line_and_a_huge_file_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("pass");
        std::fs::write(&path, "long enough pass\r\nsecond line\n").unwrap();
        assert_eq!(from_file(&path).unwrap(), "long enough pass");
        std::fs::write(&path, vec![b'a'; MAX_PASSPHRASE_BYTES as usize + 1]).unwrap();
        assert!(
            from_file(&path)
                .unwrap_err()
                .to_string()
                .contains("not a passphrase")
        );
        let missing = from_file(&tmp.path().join("none")).unwrap_err();
        assert!(format!("{missing:#}").contains("none"), "{missing:#}");
    }
}
