//! Build script: names the git commit the binary is built from, for
//! `porfiry --version`, as the `PORFIRY_GIT_COMMIT` compile-time variable.
//!
//! The commit comes from `git rev-parse` in the source tree (a clean clone
//! has it); a build without git or outside a checkout (a source tarball, a
//! container build context without `.git`) takes `PORFIRY_GIT_COMMIT` from
//! the environment, else `unknown`. The script reruns when HEAD or the
//! branch it points at moves, so a new commit is a new version string.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Hex digits of the commit shown: 12 stay unique in any repository this
/// size while fitting one line of `--version`.
const SHORT_COMMIT: usize = 12;

fn main() {
    println!("cargo:rerun-if-env-changed=PORFIRY_GIT_COMMIT");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let commit = std::env::var("PORFIRY_GIT_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .or_else(|| git_commit(&manifest))
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=PORFIRY_GIT_COMMIT={commit}");
}

/// The short commit of HEAD, watching the files that move with it.
fn git_commit(dir: &Path) -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    let git_dir = PathBuf::from(git(&["rev-parse", "--absolute-git-dir"])?);
    let common = git(&["rev-parse", "--git-common-dir"])
        .map(|c| dir.join(c))
        .unwrap_or_else(|| git_dir.clone());
    let mut watched = vec![git_dir.join("HEAD"), common.join("packed-refs")];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(common.join(branch));
    }
    // Only files that exist: Cargo reruns the script on every build for a
    // watched path that is missing.
    for path in watched.iter().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    let full = git(&["rev-parse", "HEAD"])?;
    Some(full.chars().take(SHORT_COMMIT).collect())
}
