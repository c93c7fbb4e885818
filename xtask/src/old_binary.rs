//! The `porfiry` binary of a fixed earlier commit, for the mixed-version
//! and schema-upgrade tests (`tests/tests/mixed_versions.rs`,
//! `tests/tests/schema_upgrade.rs`, issue 47 §3): where it is cached,
//! and how it is built there when missing. A `git worktree` of the commit
//! is built with `CARGO_TARGET_DIR` set to this checkout's `target/`, so
//! the registry crates (llama.cpp's among them) compiled for the current
//! tree are reused and only the workspace's own crates build again; the
//! binary is copied into the cache and the worktree removed.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::process;

/// The commit whose binary plays the older node: the last one before the
/// devices item kinds (`mind_record`, `device_link`) and the `devices`
/// audience landed (204f143). Moving it means a new cached build, about as
/// long as a debug build of the workspace's crates.
pub const OLD_COMMIT: &str = "0f8c4f7ba62801fc43b2ebeac3a1ca1ecd3a58a6";

/// Names the old binary for the tests; `cargo xtask test` sets it.
pub const OLD_BINARY_ENV: &str = "PORFIRY_OLD_BINARY";

/// The binary's name, in the worktree's `target/debug` and in the cache.
const BINARY: &str = "porfiry";

/// Where old binaries live: `$HOME/.cache/porfiry/old-binaries`.
pub fn cache_dir(home: Option<PathBuf>) -> Result<PathBuf> {
    match home {
        Some(home) if !home.as_os_str().is_empty() => {
            Ok(home.join(".cache").join("porfiry").join("old-binaries"))
        }
        _ => bail!("HOME is not set: no folder for the old porfiry binary"),
    }
}

/// The cache folder of this process's environment.
pub fn cache_dir_from_env() -> Result<PathBuf> {
    cache_dir(std::env::var_os("HOME").map(PathBuf::from))
}

/// The cached binary of `commit`: `<cache>/<commit>/porfiry`.
pub fn binary_path(cache: &Path, commit: &str) -> PathBuf {
    cache.join(commit).join(BINARY)
}

/// Whether the binary is cached: a non-empty file (a build copies to a
/// temporary name and renames, so an interrupted one leaves no binary).
pub fn is_present(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() > 0)
}

/// The target folder the old build shares: `$CARGO_TARGET_DIR` when set
/// (the caller's builds go there too), else `<root>/target`.
pub fn shared_target(root: &Path, target_env: Option<PathBuf>) -> PathBuf {
    match target_env {
        Some(dir) if !dir.as_os_str().is_empty() => {
            if dir.is_absolute() {
                dir
            } else {
                root.join(dir)
            }
        }
        _ => root.join("target"),
    }
}

/// Builds `porfiry` at `commit` from the repository at `root` into `dest`.
/// Fetches the commit from `origin` first if the clone lacks it. The
/// shared target's `debug/porfiry` (the current tree's binary, which the
/// old build's overwrites) is put back afterwards.
pub fn build(root: &Path, commit: &str, dest: &Path) -> Result<()> {
    if !process::succeeds(git(root).args(["cat-file", "-e", &format!("{commit}^{{commit}}")])) {
        process::checked(git(root).args(["fetch", "origin", commit])).with_context(|| {
            format!("this clone lacks commit {commit}, and fetching it from origin failed")
        })?;
    }
    let worktree = std::env::temp_dir().join(format!(
        "porfiry-old-{}-{}",
        &commit[..commit.len().min(12)],
        std::process::id()
    ));
    let target = shared_target(
        root,
        std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from),
    );
    process::checked(
        git(root)
            .args(["worktree", "add", "--detach", "--quiet"])
            .arg(&worktree)
            .arg(commit),
    )?;
    let built = build_in(&worktree, &target, dest);
    let removed = process::checked(
        git(root)
            .args(["worktree", "remove", "--force"])
            .arg(&worktree),
    );
    built?;
    removed
}

/// The cargo build in the worktree, the copy into `dest`, and the shared
/// target's current binary kept aside and put back around them.
fn build_in(worktree: &Path, target: &Path, dest: &Path) -> Result<()> {
    let current = target.join("debug").join(BINARY);
    let kept = target.join("debug").join(format!("{BINARY}.xtask-kept"));
    let had_current = current.exists();
    if had_current {
        std::fs::rename(&current, &kept)
            .with_context(|| format!("could not set {} aside", current.display()))?;
    }
    let mut cmd = process::cargo();
    cmd.current_dir(worktree)
        // Not `--locked`: 0f8c4f7's lock file still lists three
        // dependencies its manifests had dropped, which cargo prunes
        // (keeping every locked version) in the worktree, thrown away after.
        .args(["build", "-p", "porfiry-node", "--bin", BINARY])
        .env("CARGO_TARGET_DIR", target)
        // A one-time build: incremental state would only take disk.
        .env("CARGO_INCREMENTAL", "0");
    let result = process::checked(&mut cmd).and_then(|()| copy_into(&current, dest));
    // The old binary never stays where the current one is looked for.
    let _ = std::fs::remove_file(&current);
    if had_current {
        std::fs::rename(&kept, &current)
            .with_context(|| format!("could not put {} back", current.display()))?;
    }
    result
}

/// Copies `from` to `dest` through a temporary name in `dest`'s folder.
fn copy_into(from: &Path, dest: &Path) -> Result<()> {
    let dir = dest
        .parent()
        .with_context(|| format!("{} has no folder", dest.display()))?;
    std::fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
    let part = dest.with_extension("part");
    std::fs::copy(from, &part)
        .with_context(|| format!("could not copy {} to {}", from.display(), part.display()))?;
    std::fs::rename(&part, dest)
        .with_context(|| format!("could not rename {} to {}", part.display(), dest.display()))
}

/// `git -C root`.
fn git(root: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(root);
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_binary_is_cached_per_commit_under_home() {
        let cache = cache_dir(Some(PathBuf::from("/home/me"))).unwrap();
        assert_eq!(cache, Path::new("/home/me/.cache/porfiry/old-binaries"));
        assert_eq!(
            binary_path(&cache, OLD_COMMIT),
            Path::new("/home/me/.cache/porfiry/old-binaries")
                .join(OLD_COMMIT)
                .join("porfiry")
        );
        assert!(cache_dir(None).is_err());
        assert!(cache_dir(Some(PathBuf::new())).is_err());
    }

    #[test]
    fn the_shared_target_follows_cargo_target_dir() {
        let root = Path::new("/src/porfiry");
        assert_eq!(shared_target(root, None), root.join("target"));
        assert_eq!(
            shared_target(root, Some(PathBuf::new())),
            root.join("target")
        );
        assert_eq!(
            shared_target(root, Some(PathBuf::from("/t"))),
            Path::new("/t")
        );
        assert_eq!(
            shared_target(root, Some(PathBuf::from("out"))),
            root.join("out")
        );
    }

    #[test]
    fn the_commit_is_a_full_hash() {
        assert_eq!(OLD_COMMIT.len(), 40);
        assert!(OLD_COMMIT.chars().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn only_a_non_empty_file_counts_as_cached() {
        let dir = std::env::temp_dir().join(format!("xtask-old-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = binary_path(&dir, OLD_COMMIT);
        assert!(!is_present(&path));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"").unwrap();
        assert!(!is_present(&path));
        std::fs::write(&path, b"\x7fELF").unwrap();
        assert!(is_present(&path));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn copy_into_creates_the_folder_and_leaves_no_part_file() {
        let dir = std::env::temp_dir().join(format!("xtask-old-copy-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let from = dir.join("built");
        std::fs::write(&from, b"binary").unwrap();
        let dest = dir.join("cache").join("abc").join("porfiry");
        copy_into(&from, &dest).unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), b"binary");
        assert!(!dest.with_extension("part").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
