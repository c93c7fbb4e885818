//! The `porfiry` binary of an earlier commit, for the tests that run an
//! older version beside or before this build's (issue 47 §3: the mixed
//! mesh in `mixed_versions.rs`, the schema upgrade in `schema_upgrade.rs`).
//! `cargo xtask setup --for test` builds and caches it; `cargo xtask test`
//! names it in [`OLD_BINARY_ENV`]. Without it those tests print why and
//! pass without running.

use std::path::PathBuf;

/// Names the old `porfiry` binary (`cargo xtask test` sets it).
pub const OLD_BINARY_ENV: &str = "PORFIRY_OLD_BINARY";

/// The old binary, or `None` (printing why) when it is not there.
pub fn old_binary() -> Option<PathBuf> {
    let Some(path) = std::env::var_os(OLD_BINARY_ENV).map(PathBuf::from) else {
        println!(
            "skipped: {OLD_BINARY_ENV} is not set (`cargo xtask test` builds the old porfiry and sets it)"
        );
        return None;
    };
    if !path.is_file() {
        println!(
            "skipped: {OLD_BINARY_ENV} names {}, which is not a file (`cargo xtask setup --for test` builds it)",
            path.display()
        );
        return None;
    }
    Some(path)
}
