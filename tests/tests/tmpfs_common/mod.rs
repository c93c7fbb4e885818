//! A small tmpfs for the end-to-end tests that need a full disk
//! (`disk_full`, `model_share_cli`): mounted over a folder, unmounted when
//! dropped. Mounting needs root (or mount namespace rights); where it
//! fails, [`Tmpfs::mount`] says why, and the test prints that and skips.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs mounted over a folder, unmounted when dropped, however the test
/// ends (lazily: a daemon killed by the harness may still hold a file).
pub struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounts a tmpfs of `bytes` (rounded up to whole pages by the kernel)
    /// over `dir`, creating `dir` first; the mount's error words if it fails.
    pub fn mount(dir: &Path, bytes: u64) -> Result<Tmpfs, String> {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes}"), "tmpfs"])
            .arg(dir)
            .output()
            .map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(Tmpfs(dir.to_owned()))
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}
