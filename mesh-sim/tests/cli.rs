//! The `mesh-sim` binary, run as a real process: `run` writes its three
//! files and prints a summary; bad input exits non-zero with a clear
//! message and writes nothing.

use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mesh-sim"))
}

/// The stdout of a run that must have succeeded (stderr shown if not).
fn succeeded(out: &std::process::Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn family() -> String {
    format!("{}/scenarios/family.toml", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn run_writes_result_series_and_plot() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out_dir = dir.path().join("out");
    let out = bin()
        .args(["run", &family(), "--seed", "9", "--out"])
        .arg(&out_dir)
        .output()
        .expect("runs");
    let stdout = succeeded(&out);
    assert!(stdout.contains("family (seed 9)"), "{stdout}");
    assert!(stdout.contains("ratio 1.0000"), "{stdout}");

    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("result.json")).expect("json"))
            .expect("parses");
    assert_eq!(json["seed"], 9);
    assert_eq!(json["scenario"], "family");
    assert!(json["git_revision"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(json["delivery"]["delay_ms"]["p99"].is_u64());
    assert!(json["faults"]["total"].as_u64().is_some_and(|n| n > 0));

    let csv = std::fs::read_to_string(out_dir.join("timeseries.csv")).expect("csv");
    let mut lines = csv.lines();
    assert!(
        lines
            .next()
            .is_some_and(|h| h.starts_with("time_ms,published,"))
    );
    assert!(lines.count() >= 200, "a row per sample");

    let svg = std::fs::read_to_string(out_dir.join("delivery.svg")).expect("svg");
    assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(80)]);
    assert!(svg.contains("family"));
}

#[test]
fn a_missing_scenario_fails_clearly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = bin()
        .args(["run", "/nonexistent/s.toml", "--out"])
        .arg(dir.path().join("o"))
        .output()
        .expect("runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/s.toml"), "{err}");
    assert!(!dir.path().join("o").exists(), "nothing written");
}

#[test]
fn an_invalid_scenario_names_the_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.toml");
    let text = std::fs::read_to_string(family())
        .expect("family")
        .replace("max_hops = 2", "max_hops = 0");
    std::fs::write(&bad, text).expect("write");
    let out = bin().arg("run").arg(&bad).output().expect("runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("items.max_hops"), "{err}");
}

#[test]
fn an_unwritable_output_folder_fails_clearly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").expect("write");
    let out = bin()
        .args(["run", &family(), "--out"])
        .arg(file.join("sub"))
        .output()
        .expect("runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot write"), "{err}");
}

#[test]
fn trace_item_prints_the_journey_and_refuses_a_missing_item() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = bin()
        .args(["run", &family(), "--trace-item", "0", "--out"])
        .arg(dir.path())
        .output()
        .expect("runs");
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("journey of item 0:"), "{stdout}");
    assert!(stdout.contains("publishes it"), "{stdout}");
    assert!(stdout.contains("stores it from node"), "{stdout}");

    let out = bin()
        .args(["run", &family(), "--trace-item", "60", "--out"])
        .arg(dir.path().join("x"))
        .output()
        .expect("runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("plans 60 items"), "{err}");
}

#[test]
fn redundancy_prints_our_copies_per_node_per_item() {
    let out = bin()
        .args(["redundancy", "--items", "10"])
        .output()
        .expect("runs");
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("ours: 20 nodes, degree 6, 10 items:")
            && stdout.contains("payload copies per node per item")
            && stdout.contains("of 190 deliveries"),
        "{stdout}"
    );
}

#[test]
fn nodes_items_and_duration_scale_the_scenario() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out_dir = dir.path().join("out");
    let out = bin()
        .args(["run", &family(), "--nodes", "12", "--items", "30"])
        .args(["--duration-ms", "600000", "--out"])
        .arg(&out_dir)
        .output()
        .expect("runs");
    let stdout = succeeded(&out);
    assert!(stdout.contains("12 nodes"), "{stdout}");
    assert!(stdout.contains("30 items over 600 s virtual"), "{stdout}");
    assert!(
        out.stderr.is_empty() || !String::from_utf8_lossy(&out.stderr).contains('['),
        "no progress bar when stderr is not a terminal"
    );
}

#[test]
fn a_scale_the_scenario_cannot_take_fails_clearly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out_dir = dir.path().join("out");
    let out = bin()
        .args(["run", &family(), "--nodes", "100001", "--out"])
        .arg(&out_dir)
        .output()
        .expect("runs");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--nodes") && stderr.contains("nodes.count"),
        "{stderr}"
    );
    assert!(!out_dir.exists(), "nothing written");
}
