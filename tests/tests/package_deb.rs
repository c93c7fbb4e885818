//! The Debian package, built and installed on this machine (issue 47):
//! `packaging/deb.sh` packages the `porfiry` binary of this test run with
//! its man pages, completions, systemd unit and default config; `dpkg -i`
//! installs it (making the `porfiry` user and /var/lib/porfiry);
//! `systemd-analyze verify` checks the unit where it exists; the installed
//! binary runs as the service user against the installed config and data
//! dir, says READY on a notify socket and stops on SIGTERM; `dpkg --purge`
//! removes every file it installed and keeps the node's data.
//!
//! It changes the machine, so it runs only as root, where `cargo deb` and
//! `dpkg` exist and no `porfiry` package is installed already; elsewhere it
//! prints why it skipped.

use std::io::{BufRead as _, BufReader};
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use porfiry_tests::porfiry_bin::porfiry_bin;

/// The longest the test waits for the installed node's READY.
const READY_WAIT: Duration = Duration::from_secs(120);

/// Files the package must install.
const INSTALLED: &[&str] = &[
    "/usr/bin/porfiry",
    "/etc/porfiry/porfiry.toml",
    "/usr/share/man/man1/porfiry.1.gz",
    "/usr/share/man/man1/porfiry-run.1.gz",
    "/usr/share/bash-completion/completions/porfiry",
    "/usr/share/zsh/vendor-completions/_porfiry",
    "/usr/share/fish/vendor_completions.d/porfiry.fish",
];

fn sh(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .output()
        .unwrap_or_else(|e| panic!("{program} {args:?}: {e}"))
}

fn ok(program: &str, args: &[&str]) -> String {
    let out = sh(program, args);
    assert!(
        out.status.success(),
        "{program} {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Why this machine cannot run the test, if it cannot.
fn skip_reason() -> Option<String> {
    if sh("id", &["-u"]).stdout != b"0\n" {
        return Some("not root: dpkg -i needs root".into());
    }
    for (tool, args) in [
        ("dpkg", &["--version"][..]),
        ("cargo", &["deb", "--version"][..]),
    ] {
        if !Command::new(tool)
            .args(args)
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return Some(format!(
                "{tool} {} is missing (cargo install cargo-deb --locked)",
                args[0]
            ));
        }
    }
    let status = sh("dpkg-query", &["-W", "-f=${Status}", "porfiry"]);
    if String::from_utf8_lossy(&status.stdout).contains("installed") {
        return Some("a porfiry package is installed here already; not touching it".into());
    }
    None
}

/// The unit file where this machine's systemd keeps packaged units.
fn unit_path() -> PathBuf {
    [
        "/usr/lib/systemd/system/porfiry.service",
        "/lib/systemd/system/porfiry.service",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
    .expect("the package installs its unit")
}

#[test]
fn the_package_installs_runs_as_its_user_and_purges_cleanly() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let target = tempfile::tempdir().unwrap();
    let release = target.path().join("release");
    std::fs::create_dir_all(&release).unwrap();
    std::fs::copy(porfiry_bin(), release.join("porfiry")).unwrap();
    let out_dir = target.path().join("debian");
    let built = Command::new("bash")
        .arg(workspace.join("packaging/deb.sh"))
        // Fast gzip and no stripping: this is the test build's binary.
        .args(["--fast", "-Z", "gz", "--no-strip", "--output"])
        .arg(&out_dir)
        .env("CARGO_TARGET_DIR", target.path())
        .env("PORFIRY_DEB_NO_BUILD", "1")
        .current_dir(workspace)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "deb.sh: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let deb = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "deb"))
        .expect("a .deb was written");
    let deb = deb.to_str().unwrap();
    let fields = ok("dpkg-deb", &["--field", deb, "Package", "Depends"]);
    assert!(
        fields.contains("Package: porfiry") && fields.contains("passwd"),
        "{fields}"
    );

    let user_was_there = sh("getent", &["passwd", "porfiry"]).status.success();
    let data_was_there = Path::new("/var/lib/porfiry").exists();
    let installed = sh("dpkg", &["-i", deb]);
    let result = std::panic::catch_unwind(check_installed);
    // Purge whatever happened, then judge.
    let purged = sh("dpkg", &["--purge", "porfiry"]);
    let leftovers: Vec<&str> = INSTALLED
        .iter()
        .copied()
        .chain([
            "/usr/lib/systemd/system/porfiry.service",
            "/lib/systemd/system/porfiry.service",
        ])
        .filter(|p| Path::new(p).exists())
        .collect();
    let data_kept = Path::new("/var/lib/porfiry/identity.key").exists();
    if !data_was_there {
        let _ = std::fs::remove_dir_all("/var/lib/porfiry");
    }
    if !user_was_there {
        let _ = sh("userdel", &["porfiry"]);
        let _ = sh("groupdel", &["porfiry"]);
    }
    assert!(
        installed.status.success(),
        "dpkg -i: {}",
        String::from_utf8_lossy(&installed.stderr)
    );
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
    assert!(
        purged.status.success(),
        "dpkg --purge: {}",
        String::from_utf8_lossy(&purged.stderr)
    );
    assert!(leftovers.is_empty(), "purge left {leftovers:?}");
    assert!(data_kept, "purge keeps the node's data");
}

/// What must hold while the package is installed.
fn check_installed() {
    for path in INSTALLED {
        assert!(Path::new(path).exists(), "{path} is not installed");
    }
    let unit = unit_path();
    let user = ok("getent", &["passwd", "porfiry"]);
    assert!(
        user.contains(":/var/lib/porfiry:") && user.contains("nologin"),
        "{user}"
    );
    let owner = ok("stat", &["-c", "%U %a", "/var/lib/porfiry"]);
    assert_eq!(owner.trim(), "porfiry 750");
    let version = ok("/usr/bin/porfiry", &["--version"]);
    assert!(version.contains("(commit "), "{version}");
    match Command::new("systemd-analyze").arg("--version").output() {
        Ok(o) if o.status.success() => {
            let verified = sh("systemd-analyze", &["verify", unit.to_str().unwrap()]);
            let said = String::from_utf8_lossy(&verified.stderr);
            let about_ours: Vec<&str> = said.lines().filter(|l| l.contains("porfiry")).collect();
            assert!(
                verified.status.success() && about_ours.is_empty(),
                "systemd-analyze verify: {said}"
            );
        }
        _ => eprintln!("systemd-analyze is missing: the unit is not verified"),
    }
    run_as_service_user();
}

/// The installed binary, as `porfiry`, with only the installed config: it
/// makes the node in /var/lib/porfiry, says READY, stops on SIGTERM.
fn run_as_service_user() {
    let socket_dir = tempfile::tempdir().unwrap();
    ok("chmod", &["755", socket_dir.path().to_str().unwrap()]);
    let socket_path = socket_dir.path().join("notify.sock");
    let socket = UnixDatagram::bind(&socket_path).unwrap();
    ok("chmod", &["666", socket_path.to_str().unwrap()]);
    socket.set_read_timeout(Some(READY_WAIT)).unwrap();
    let notify = format!("NOTIFY_SOCKET={}", socket_path.display());
    // setpriv and env exec (no fork, unlike runuser): the child is the node.
    let mut child = Command::new("setpriv")
        .args(["--reuid=porfiry", "--regid=porfiry", "--init-groups", "--"])
        .args(["env", "-u", "PORFIRY_DATA_DIR", "-u", "PORFIRY_CONFIG"])
        .arg(&notify)
        // The config's data-dir; ports of our own so nothing here clashes.
        .args([
            "/usr/bin/porfiry",
            "run",
            "--listen",
            "/ip4/127.0.0.1/tcp/0",
            "--api",
            "127.0.0.1:0",
            "--no-think",
        ])
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut buf = [0u8; 4096];
    let got = socket
        .recv(&mut buf)
        .map(|n| String::from_utf8_lossy(&buf[..n]).into_owned());
    let _ = sh("kill", &["-TERM", &child.id().to_string()]);
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    let ready = got.unwrap_or_else(|e| panic!("no READY from the installed node ({e}): {stderr}"));
    assert!(ready.contains("READY=1"), "{ready}");
    assert!(status.success(), "the node as porfiry: {stderr}");
    let lines: Vec<String> = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .collect();
    assert!(
        lines.iter().any(|l| l.starts_with("peer id: ")),
        "{lines:?}"
    );
    let owner = ok("stat", &["-c", "%U %a", "/var/lib/porfiry/identity.key"]);
    assert_eq!(owner.trim(), "porfiry 600");
}
