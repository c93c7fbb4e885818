//! `mesh-sim minds sweep` and `merge` on a tiny world (three minds, three
//! simulated hours): two shards merged give the same `sweep.json` and
//! `sweep.csv` as the whole sweep; a second sweep into the same folder
//! skips finished runs; the know-how audience sweeps and merges like any
//! key; merge names a missing or malformed file; bad
//! `--param` and `--shard` are one-line errors that write nothing.

use std::path::Path;
use std::process::Command;

use mesh_sim::minds::MindsScenario;
use mesh_sim::minds::sweep::{
    Plan, RunState, Shard, SweepError, merge_dir, prepare, read_plan, run_sweep,
};

/// Three minds, everyone a friend, eighteen ten-minute ticks.
const TINY: &str = r#"
name = "minds-tiny"
seed = 3
duration_ms = 10_800_000
tick_ms = 600_000

[nodes]
count = 3

[graph]
kind = "complete"

[policy]
drift = 0.3
self_escape = 0.05
invent = 1.0
invented_effectiveness = [0.9, 0.9]
share_at_rating = -3.0
adopt = 1.0
adopt_at_rating = -3.0

[policy.effectiveness]
external_stimulation = 0.3
context_switch = 0.3
internal_restructuring = 0.3
radical_pause = 0.3
"#;

fn tiny() -> MindsScenario {
    MindsScenario::from_toml(TINY).expect("valid")
}

/// Two adversary shares × two seeds: four runs.
fn plan() -> Plan {
    prepare(&tiny(), &["policy.adversaries=0,0.34".into()], 5, 2).expect("plan")
}

fn sweep(dir: &Path, shard: Shard) -> (usize, usize) {
    let mut ran = 0;
    let report = run_sweep(&tiny(), &plan(), shard, dir, &mut |_, state| {
        if matches!(state, RunState::Ran(_)) {
            ran += 1;
        }
    })
    .expect("sweeps");
    assert_eq!(report.ran, ran);
    (report.ran, report.skipped)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn shards_merge_to_the_whole_sweep_and_finished_runs_are_skipped() {
    let root = tempfile::tempdir().expect("tempdir");
    let sharded = root.path().join("sharded");
    assert_eq!(sweep(&sharded, Shard::parse("0/2").expect("shard")), (2, 0));
    assert_eq!(sweep(&sharded, Shard::parse("1/2").expect("shard")), (2, 0));
    let whole = root.path().join("whole");
    assert_eq!(sweep(&whole, Shard::ALL), (4, 0));

    let (summary, files) = merge_dir(&sharded, None).expect("merges");
    merge_dir(&whole, None).expect("merges");
    for name in ["sweep.json", "sweep.csv"] {
        assert_eq!(
            read(&sharded.join(name)),
            read(&whole.join(name)),
            "{name}: shards merged = the whole sweep"
        );
    }
    assert_eq!(
        files,
        [sharded.join("sweep.json"), sharded.join("sweep.csv")]
    );
    assert_eq!(summary.runs, 4);
    assert_eq!(summary.combinations.len(), 2);
    let c = &summary.combinations[1];
    assert_eq!(c.params[0].value, "0.34");
    assert_eq!(c.seeds, [5, 6]);
    assert!(c.stagnant_tick_share.as_ref().expect("share").low.is_some());
    let csv = read(&whole.join("sweep.csv"));
    assert_eq!(csv.lines().count(), 5, "a header and one row per run");
    let id = "policy.adversaries=0.34__seed=6";
    let params: serde_json::Value =
        serde_json::from_str(&read(&whole.join(id).join("params.json"))).expect("json");
    assert_eq!(params["seed"], 6);
    assert_eq!(params["params"][0]["value"], "0.34");

    // Again into the same folder: nothing runs, nothing is rewritten.
    let result = whole.join(id).join("result.json");
    let written = std::fs::metadata(&result).and_then(|m| m.modified());
    assert_eq!(sweep(&whole, Shard::ALL), (0, 4));
    assert_eq!(
        written.expect("mtime"),
        std::fs::metadata(&result)
            .and_then(|m| m.modified())
            .expect("mtime")
    );
    // A run that never finished runs again, and only it.
    std::fs::remove_file(&result).expect("remove");
    assert_eq!(sweep(&whole, Shard::ALL), (1, 3));
    merge_dir(&whole, None).expect("merges");
    assert_eq!(
        read(&whole.join("sweep.json")),
        read(&sharded.join("sweep.json"))
    );
}

#[test]
fn the_know_how_audience_is_swept_and_merged() {
    let root = tempfile::tempdir().expect("tempdir");
    let dir = root.path();
    let params = ["policy.audience=public,friends,club".to_owned()];
    let plan = prepare(&tiny(), &params, 5, 1).expect("plan");
    let report = run_sweep(&tiny(), &plan, Shard::ALL, dir, &mut |_, _| {}).expect("sweeps");
    assert_eq!((report.ran, report.skipped), (3, 0));
    let (summary, _) = merge_dir(dir, None).expect("merges");
    let values: Vec<&str> = summary
        .combinations
        .iter()
        .map(|c| c.params[0].value.as_str())
        .collect();
    assert_eq!(values, ["public", "friends", "club"]);
    let csv = read(&dir.join("sweep.csv"));
    assert_eq!(csv.lines().count(), 4, "a header and one row per run");
    assert!(
        csv.contains("policy.audience=club__seed=5"),
        "the run id names the audience: {csv}"
    );
    let bad = prepare(&tiny(), &["policy.audience=public,everyone".into()], 5, 1)
        .expect_err("refused")
        .to_string();
    assert!(bad.contains("policy.audience"), "{bad}");
    assert_eq!(bad.lines().count(), 1, "{bad}");
}

/// A sweep folder with a plan and hand-written run files, no world run.
fn fake_sweep(dir: &Path) -> Plan {
    let plan = plan();
    std::fs::create_dir_all(dir).expect("dir");
    std::fs::write(
        dir.join("plan.json"),
        serde_json::to_string(&plan).expect("json"),
    )
    .expect("plan");
    for (k, run) in plan.runs.iter().enumerate() {
        let d = dir.join(&run.id);
        std::fs::create_dir_all(&d).expect("dir");
        std::fs::write(
            d.join("params.json"),
            serde_json::to_string(run).expect("json"),
        )
        .expect("params");
        std::fs::write(
            d.join("result.json"),
            format!(
                r#"{{"minds": 3, "stagnant_tick_share": 0.{k}, "mean_ticks_to_escape": null, "strategies_shared": {k}, "wire_bytes": 100}}"#
            ),
        )
        .expect("result");
    }
    plan
}

#[test]
fn merge_names_a_missing_or_malformed_file_in_one_line() {
    let root = tempfile::tempdir().expect("tempdir");
    let dir = root.path().join("s");
    let plan = fake_sweep(&dir);
    let (summary, _) = merge_dir(&dir, Some(&root.path().join("m/x.json"))).expect("merges");
    assert_eq!(summary.runs, 4);
    assert!(summary.combinations[0].mean_ticks_to_escape.is_none());
    assert!(root.path().join("m/x.csv").exists());
    assert_eq!(read_plan(&dir).expect("plan"), plan);

    let run = dir.join(&plan.runs[2].id);
    let cases: [(&str, &str, &str); 3] = [
        ("result.json", "{\"minds\": 3}", "not a minds result"),
        ("params.json", "{}", "not a run's params"),
        ("result.json", "", "missing"),
    ];
    for (file, text, says) in cases {
        let path = run.join(file);
        let keep = read(&path);
        if text.is_empty() {
            std::fs::remove_file(&path).expect("remove");
        } else {
            std::fs::write(&path, text).expect("write");
        }
        let e = merge_dir(&dir, None).expect_err("refused").to_string();
        assert!(e.contains(&path.display().to_string()), "{e}");
        assert!(e.contains(says), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
        std::fs::write(&path, keep).expect("restore");
    }
    // Another run's params in this run's folder.
    let other = serde_json::to_string(&plan.runs[3]).expect("json");
    std::fs::write(run.join("params.json"), other).expect("write");
    let e = merge_dir(&dir, None).expect_err("refused").to_string();
    assert!(e.contains("is not run 2"), "{e}");
    let e = merge_dir(root.path(), None)
        .expect_err("refused")
        .to_string();
    assert!(e.contains("plan.json: missing"), "{e}");
}

#[test]
fn a_folder_of_another_sweep_is_refused_before_anything_runs() {
    let root = tempfile::tempdir().expect("tempdir");
    let dir = root.path().join("s");
    fake_sweep(&dir);
    let other = prepare(&tiny(), &["policy.drift=0.1".into()], 5, 1).expect("plan");
    let e = run_sweep(&tiny(), &other, Shard::ALL, &dir, &mut |_, _| {
        panic!("nothing runs")
    })
    .expect_err("refused");
    assert!(matches!(e, SweepError::File { .. }), "{e}");
    assert!(e.to_string().contains("holds another sweep"), "{e}");
}

fn mesh_sim(args: &[&str], scenario: &Path, out: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mesh-sim"))
        // A test runner's backtrace setting would add anyhow's backtrace.
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .args(["minds", "sweep"])
        .arg(scenario)
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .expect("runs")
}

#[test]
fn the_binary_refuses_bad_params_and_shards_in_one_line_writing_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = dir.path().join("tiny.toml");
    std::fs::write(&scenario, TINY).expect("write");
    let out_dir = dir.path().join("out");
    let cases: [(&[&str], &str); 6] = [
        (&["--param", "policy.nope=1"], "policy.nope"),
        (&["--param", "policy.drift=x"], "policy.drift"),
        (&["--param", "policy.drift=1.5"], "policy.drift=1.5"),
        (&["--param", "graph=random:5"], "graph.degree"),
        (&["--shard", "3/2"], "--shard 3/2"),
        (&["--seeds", "0"], "--seeds 0"),
    ];
    for (args, names) in cases {
        let out = mesh_sim(args, &scenario, &out_dir);
        assert!(!out.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(names), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(!out_dir.exists(), "{args:?}: nothing written");
    }
}

#[test]
fn the_binary_sweeps_and_merges() {
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = dir.path().join("tiny.toml");
    std::fs::write(&scenario, TINY).expect("write");
    let out_dir = dir.path().join("out");
    let out = mesh_sim(
        &["--param", "graph=complete", "--shard", "0/1"],
        &scenario,
        &out_dir,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("1 of 1 runs ran"), "{stdout}");
    assert!(out_dir.join("graph=complete__seed=3/result.json").exists());
    let merged = Command::new(env!("CARGO_BIN_EXE_mesh-sim"))
        .args(["minds", "merge"])
        .arg(&out_dir)
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&merged.stdout);
    assert!(merged.status.success(), "{stdout}");
    assert!(
        stdout.contains("1 runs, 1 parameter combinations × 1 seeds"),
        "{stdout}"
    );
    assert!(out_dir.join("sweep.json").exists());
}
