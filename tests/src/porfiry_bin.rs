//! Finds the real `porfiry` binary for end-to-end tests.
//!
//! This package builds the node's `main.rs` as its own binary,
//! `porfiry-e2e` (see `Cargo.toml`), and Cargo builds a package's binaries
//! before its integration tests run, into the profile folder above the
//! test executables. Its command name is still `porfiry` (clap's
//! `#[command(name)]`), so what it prints is what users see.

use std::path::PathBuf;

/// Path of the `porfiry` binary built for this test run.
///
/// Panics if it is missing: a test cannot go on without the program under
/// test (run the tests through Cargo, which builds it first).
pub fn porfiry_bin() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    // target/<profile>/deps/<test> -> target/<profile>/porfiry-e2e
    let dir = exe
        .parent()
        .and_then(|p| p.parent())
        .expect("test binary sits in target/<profile>/deps");
    let bin = dir.join(format!("porfiry-e2e{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.exists(),
        "porfiry not found at {} (run the tests with cargo)",
        bin.display()
    );
    bin
}
