//! Looks at the machine and fills [`Probes`]: the same checks `.ci/run`
//! made in shell (`command -v`, the libclang glob, `rustup component list`,
//! `python3 -m pip --version`), done in Rust. Only reads; installs nothing.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::plan::{Model, Probes};
use crate::{models, old_binary};

/// Where Debian puts each LLVM version (`/usr/lib/llvm-14/lib/libclang.so.1`).
const LLVM_ROOT: &str = "/usr/lib";
/// Folders whose `python3` is Debian's own (PEP 668: pip installs refused).
const SYSTEM_BIN_DIRS: [&str; 2] = ["/usr/bin", "/bin"];

/// Everything the plan asks about, for the models in `model_dir` and the
/// old binary at `old_binary_path`.
pub fn probe(model_dir: &Path, old_binary_path: &Path) -> Probes {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let on_path = |name: &str| find_in_path(name, &path).is_some();
    let cargo_bin = cargo_home().map(|home| home.join("bin"));
    let cargo_tool = |name: &str| {
        on_path(name)
            || cargo_bin
                .as_deref()
                .is_some_and(|bin| is_executable(&bin.join(name)))
    };
    let python = find_in_path("python3", &path);
    let (rustfmt, clippy) = if on_path("rustup") {
        let listed = output_of("rustup", &["component", "list", "--installed"]);
        installed_components(&listed.unwrap_or_default())
    } else {
        // No rustup: whatever installed the toolchain decided; take what is there.
        (on_path("rustfmt"), cargo_tool("cargo-clippy"))
    };
    Probes {
        cmake: on_path("cmake"),
        clang: on_path("clang"),
        libclang: has_libclang(Path::new(LLVM_ROOT)),
        pip: python.is_some() && succeeds("python3", &["-m", "pip", "--version"]),
        pytest: python.is_some() && succeeds("python3", &["-m", "pytest", "--version"]),
        system_python: python.as_deref().is_none_or(is_system_python),
        chromium: on_path("chromium"),
        chromedriver: on_path("chromedriver"),
        ip: on_path("ip"),
        nft: on_path("nft"),
        cargo_nextest: cargo_tool("cargo-nextest"),
        cargo_deb: cargo_tool("cargo-deb"),
        cargo_deny: cargo_tool("cargo-deny"),
        rustfmt,
        clippy,
        smollm2: models::is_present(model_dir, Model::SmolLm2),
        gemma: models::is_present(model_dir, Model::Gemma),
        old_binary: old_binary::is_present(old_binary_path),
    }
}

/// `command -v name`: the first executable file called `name` in `path`.
pub fn find_in_path(name: &str, path: &OsStr) -> Option<PathBuf> {
    std::env::split_paths(path)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

/// A regular file (or a link to one) with an execute bit.
fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `$CARGO_HOME`, else `$HOME/.cargo`: where `cargo install` puts tools, and
/// where cargo looks for subcommands besides PATH.
fn cargo_home() -> Option<PathBuf> {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")))
}

/// `ls <root>/llvm-*/lib/libclang*.so*` finds a file.
pub fn has_libclang(root: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(root) else {
        return false;
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("llvm-"))
        .filter_map(|e| std::fs::read_dir(e.path().join("lib")).ok())
        .flat_map(|libs| libs.flatten())
        .any(|lib| {
            let name = lib.file_name();
            let name = name.to_string_lossy();
            name.starts_with("libclang") && name.contains(".so")
        })
}

/// Whether rustfmt and clippy are among `rustup component list --installed`'s
/// lines (`rustfmt-x86_64-unknown-linux-gnu`).
pub fn installed_components(listed: &str) -> (bool, bool) {
    let has = |name: &str| listed.lines().any(|line| line.trim().starts_with(name));
    (has("rustfmt"), has("clippy"))
}

/// A `python3` in a folder Debian's apt owns.
fn is_system_python(python: &Path) -> bool {
    python.parent().is_some_and(|dir| {
        SYSTEM_BIN_DIRS
            .iter()
            .any(|system| dir == Path::new(system))
    })
}

/// Runs a probe command silently; true when it exits 0.
fn succeeds(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A probe command's standard output, when it ran and exited 0.
fn output_of(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder under the system's temp folder, unique to this test.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-probe-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn touch(path: &Path, mode: u32) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, b"").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn find_in_path_takes_the_first_executable() {
        let dir = scratch("path");
        touch(&dir.join("a/tool"), 0o644);
        touch(&dir.join("b/tool"), 0o755);
        touch(&dir.join("c/tool"), 0o755);
        let path = std::env::join_paths([dir.join("a"), dir.join("b"), dir.join("c")]).unwrap();
        assert_eq!(find_in_path("tool", &path), Some(dir.join("b/tool")));
        assert_eq!(find_in_path("other", &path), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn libclang_is_found_by_the_glob_only() {
        let dir = scratch("llvm");
        assert!(!has_libclang(&dir));
        touch(&dir.join("llvm-14/lib/libLLVM-14.so.1"), 0o644);
        touch(&dir.join("gcc/lib/libclang.so.1"), 0o644);
        assert!(!has_libclang(&dir));
        touch(&dir.join("llvm-14/lib/libclang-14.so.1"), 0o644);
        assert!(has_libclang(&dir));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn components_are_read_from_rustups_list() {
        let listed = "cargo-x86_64-unknown-linux-gnu\nclippy-x86_64-unknown-linux-gnu\n";
        assert_eq!(installed_components(listed), (false, true));
        assert_eq!(installed_components(""), (false, false));
    }

    #[test]
    fn only_usr_bin_python_is_debians() {
        assert!(is_system_python(Path::new("/usr/bin/python3")));
        assert!(!is_system_python(Path::new("/root/.pyenv/shims/python3")));
    }
}
