//! The generated bindings of the library this very build made, through the
//! generator at the same UniFFI version (`uniffi-bindgen`, this crate's
//! binary). Python's are run: `porfiry_ffi.py` is written into a temporary
//! folder with the built `libporfiry_ffi.so` beside it and pytest runs the
//! tests of `tests/python/` with that folder on `PYTHONPATH` — what a phone
//! app does through Kotlin or Swift, Python does here through the same C
//! ABI. Kotlin's and Swift's are generated and read (no Kotlin or Swift
//! compiler is on this machine): their names and the checksums left out.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The built cdylib: in `deps/` beside this test's binary (where a test
/// build leaves it) or in the profile folder (where `cargo build` copies
/// it); the newer of the two, so a stale copy is never tested.
fn built_library() -> PathBuf {
    let name = format!(
        "{}porfiry_ffi{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let bindgen = PathBuf::from(env!("CARGO_BIN_EXE_uniffi-bindgen"));
    let profile_dir = bindgen.parent().expect("the binary has a folder");
    let candidates = [
        profile_dir.join("deps").join(&name),
        profile_dir.join(&name),
    ];
    candidates
        .iter()
        .filter_map(|p| Some((std::fs::metadata(p).ok()?.modified().ok()?, p)))
        .max()
        .map(|(_, p)| p.clone())
        .unwrap_or_else(|| panic!("the cdylib is not built: looked at {candidates:?}"))
}

/// The `porfiry` binary in this build's profile folder (it may be absent:
/// the test that needs it then says so and is skipped).
fn porfiry_binary() -> PathBuf {
    let bindgen = PathBuf::from(env!("CARGO_BIN_EXE_uniffi-bindgen"));
    let profile_dir = bindgen.parent().expect("the binary has a folder");
    profile_dir.join(format!("porfiry{}", std::env::consts::EXE_SUFFIX))
}

fn run(command: &mut Command, what: &str) -> String {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{text}",
        out.status
    );
    text
}

/// Writes `language`'s bindings of `library` into `out`.
fn generate(library: &Path, language: &str, out: &Path) {
    run(
        Command::new(env!("CARGO_BIN_EXE_uniffi-bindgen")).args([
            "generate".as_ref(),
            "--library".as_ref(),
            library.as_os_str(),
            "--language".as_ref(),
            language.as_ref(),
            "--no-format".as_ref(),
            "--out-dir".as_ref(),
            out.as_os_str(),
        ]),
        &format!("uniffi-bindgen generate --language {language}"),
    );
}

#[test]
fn kotlin_and_swift_bindings_are_generated_without_checksums() {
    let out = tempfile::tempdir().expect("a temporary folder");
    let library = built_library();
    generate(&library, "kotlin", &out.path().join("kotlin"));
    generate(&library, "swift", &out.path().join("swift"));
    let read = |p: &str| {
        std::fs::read_to_string(out.path().join(p)).unwrap_or_else(|e| panic!("{p}: {e}"))
    };
    let kotlin = read("kotlin/org/porfiry/porfiry_ffi.kt");
    assert!(kotlin.contains("package org.porfiry"));
    assert!(kotlin.contains("class PorfiryNode"));
    // uniffi-rs #2740: no checksum comparison at load.
    assert!(!kotlin.contains("uniffiCheckApiChecksums"));
    let swift = read("swift/Porfiry.swift");
    assert!(swift.contains("open class PorfiryNode"));
    assert!(!swift.contains("uniffi_porfiry_ffi_checksum_"));
    assert!(read("swift/PorfiryFFI.h").contains("ffi_porfiry_ffi_uniffi_contract_version"));
}

#[test]
fn python_bindings_pass_their_tests() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python");
    let has_pytest = Command::new("python3")
        .args(["-c", "import pytest"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        has_pytest,
        "pytest is missing: `python3 -m pip install pytest` (.ci/run installs it)"
    );
    let out = tempfile::tempdir().expect("a temporary folder");
    let library = built_library();
    generate(&library, "python", out.path());
    let file_name = library.file_name().expect("the library has a name");
    std::fs::copy(&library, out.path().join(file_name)).expect("copy the library");
    let report = run(
        Command::new("python3")
            .args(["-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider"])
            .arg(&tests)
            .env("PYTHONPATH", out.path())
            // The model-from-home test runs a real home server: the
            // workspace's `porfiry` beside this build, when it is built.
            .env("PORFIRY_BIN", porfiry_binary())
            .env("PYTHONDONTWRITEBYTECODE", "1"),
        "pytest",
    );
    println!("{report}");
}
