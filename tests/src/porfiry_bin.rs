//! Finds the real `porfiry` binary for end-to-end tests, building it once.
//!
//! The binary lives in another package (`porfiry-node`), so Cargo's
//! `CARGO_BIN_EXE_*` does not reach it; we ask Cargo to build it (a no-op
//! when fresh) and take the path from the target dir next to this test.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// Path of a freshly built `porfiry` binary (debug profile).
///
/// Panics with Cargo's output if the build fails: a test cannot go on
/// without the program under test.
pub fn porfiry_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml");
        let out = Command::new(cargo)
            .args([
                "build",
                "--quiet",
                "-p",
                "porfiry-node",
                "--bin",
                "porfiry",
                "--manifest-path",
                manifest,
            ])
            .stdin(Stdio::null())
            .output()
            .expect("cargo can be started");
        assert!(
            out.status.success(),
            "building porfiry failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let exe = std::env::current_exe().expect("test binary path");
        // target/debug/deps/<test> -> target/debug/porfiry
        let dir = exe
            .parent()
            .and_then(|p| p.parent())
            .expect("test binary sits in target/<profile>/deps");
        let bin = dir.join(format!("porfiry{}", std::env::consts::EXE_SUFFIX));
        assert!(bin.exists(), "porfiry not found at {}", bin.display());
        bin
    })
    .clone()
}
