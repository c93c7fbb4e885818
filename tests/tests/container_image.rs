//! The container image (`Containerfile`, issue 47): where this machine has
//! podman and the two base images already (building pulls nothing here), it
//! builds the image, checks `--version` runs as the non-root user, starts
//! the node with its data on a named volume, sees it make its node there,
//! and removes what it made. Elsewhere it prints why it skipped.

use std::path::Path;
use std::process::{Command, Output};

use porfiry_tests::mesh_node::wait_for;

/// Names this test gives what it makes, so it removes only its own.
const IMAGE: &str = "localhost/porfiry-test-image";
const CONTAINER: &str = "porfiry-test-container";
const VOLUME: &str = "porfiry-test-data";
/// The base images the Containerfile names (its default arguments).
const BASES: &[&str] = &[
    "docker.io/library/rust:1.95-bookworm",
    "docker.io/library/debian:bookworm-slim",
];

fn podman(args: &[&str]) -> Output {
    Command::new("podman")
        .args(args)
        .output()
        .expect("podman runs")
}

fn skip_reason() -> Option<String> {
    if !Command::new("podman")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return Some("podman is missing (Debian's `podman` package builds the image)".into());
    }
    BASES
        .iter()
        .find(|base| !podman(&["image", "exists", base]).status.success())
        .map(|base| format!("base image {base} is not here, and this machine cannot pull it"))
}

#[test]
fn the_image_builds_and_runs_the_node_as_non_root_on_a_volume() {
    if let Some(why) = skip_reason() {
        eprintln!("SKIPPED: {why}");
        return;
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let built = Command::new("podman")
        .args([
            "build",
            "--pull=never",
            "-f",
            "Containerfile",
            "-t",
            IMAGE,
            ".",
        ])
        .current_dir(workspace)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let who = podman(&["run", "--rm", "--entrypoint", "id", IMAGE, "-u"]);
    assert_eq!(String::from_utf8_lossy(&who.stdout).trim(), "10001");
    let version = podman(&["run", "--rm", IMAGE, "--version"]);
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("porfiry "));
    let _ = podman(&["rm", "-f", CONTAINER]);
    let _ = podman(&["volume", "rm", "-f", VOLUME]);
    let started = podman(&[
        "run",
        "-d",
        "--name",
        CONTAINER,
        "-v",
        &format!("{VOLUME}:/var/lib/porfiry"),
        IMAGE,
    ]);
    assert!(
        started.status.success(),
        "{}",
        String::from_utf8_lossy(&started.stderr)
    );
    wait_for("the node in the container to start", || {
        String::from_utf8_lossy(&podman(&["logs", CONTAINER]).stdout).contains("peer id: ")
    });
    let key = podman(&[
        "exec",
        CONTAINER,
        "stat",
        "-c",
        "%U %a",
        "/var/lib/porfiry/identity.key",
    ]);
    let stopped = podman(&["stop", CONTAINER]);
    let _ = podman(&["rm", "-f", CONTAINER]);
    let _ = podman(&["volume", "rm", "-f", VOLUME]);
    let _ = podman(&["rmi", "-f", IMAGE]);
    assert_eq!(String::from_utf8_lossy(&key.stdout).trim(), "porfiry 600");
    assert!(stopped.status.success());
}
