//! `porfiry manpage DIR` and `porfiry completions SHELL`: the man pages and
//! shell completion scripts, generated from the clap definitions so they
//! never drift from the flags (the Debian package ships both).

use std::io::Write;
use std::path::Path;

use anyhow::Context as _;
use clap::CommandFactory as _;

use crate::cli::Cli;

/// Writes `porfiry.1` and `porfiry-<sub>.1` (and deeper, e.g.
/// `porfiry-friends-add.1`) into `dir`; returns the line to print.
pub fn write_manpages(dir: &Path) -> anyhow::Result<String> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut command = Cli::command();
    command.build();
    let mut written = 0usize;
    write_page(&command, "porfiry", dir, &mut written)?;
    Ok(format!("wrote {written} man pages into {}", dir.display()))
}

/// Renders one command's page and recurses into its subcommands.
fn write_page(
    command: &clap::Command,
    name: &str,
    dir: &Path,
    written: &mut usize,
) -> anyhow::Result<()> {
    let path = dir.join(format!("{name}.1"));
    let mut text = Vec::new();
    clap_mangen::Man::new(command.clone())
        .title(name)
        .render(&mut text)?;
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    *written += 1;
    for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
        write_page(sub, &format!("{name}-{}", sub.get_name()), dir, written)?;
    }
    Ok(())
}

/// Writes the completion script for `shell` to `out`.
pub fn write_completions(shell: clap_complete::Shell, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut command = Cli::command();
    clap_complete::generate(shell, &mut command, "porfiry", out);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_subcommand_gets_a_page_that_names_its_flags() {
        let tmp = tempfile::tempdir().unwrap();
        let said = write_manpages(tmp.path()).unwrap();
        let main = std::fs::read_to_string(tmp.path().join("porfiry.1")).unwrap();
        assert!(main.contains(".TH porfiry 1"), "{main}");
        let run = std::fs::read_to_string(tmp.path().join("porfiry-run.1")).unwrap();
        assert!(run.contains("config") && run.contains("listen"), "{run}");
        assert!(tmp.path().join("porfiry-friends-add.1").exists());
        assert!(tmp.path().join("porfiry-backup.1").exists());
        let count = std::fs::read_dir(tmp.path()).unwrap().count();
        assert!(said.contains(&format!("wrote {count} man pages")), "{said}");
    }

    #[test]
    fn completions_name_the_subcommands_and_run_flags() {
        let mut bash = Vec::new();
        write_completions(clap_complete::Shell::Bash, &mut bash).unwrap();
        let bash = String::from_utf8(bash).unwrap();
        assert!(bash.contains("complete -F _porfiry"), "{bash}");
        assert!(bash.contains("--config") && bash.contains("backup"));
        let mut zsh = Vec::new();
        write_completions(clap_complete::Shell::Zsh, &mut zsh).unwrap();
        assert!(String::from_utf8(zsh).unwrap().contains("#compdef porfiry"));
    }
}
