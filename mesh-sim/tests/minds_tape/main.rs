//! Model-backed minds and their tape: a world whose minds 0 and 2 think
//! with a real OpenAI-compatible server (`server.rs`, a stand-in for vLLM
//! or Ollama) and mind 1 with its scripted policy. Recorded twice with the
//! same seed it gives the same `result.json` and tape bytes; replayed with
//! the server gone it gives the same `result.json`, through the library and
//! through the binary; a tampered tape, or one of another scenario, is
//! refused in one line; a GGUF model that cannot open is one line before
//! anything runs; and with `PORFIRY_TEST_GGUF` and `--features engine`, a
//! tiny embedded-model world replays from its tape.

mod server;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mesh_sim::minds::{
    MindsOptions, MindsScenario, ModelCalls, TAPE_FILE, run_minds_with, write_outcome,
};
use server::FakeLlm;

/// Three minds, everyone a friend, three simulated hours of ten-minute
/// ticks; minds 0 and 2 ask the server at `URL`. The scripted mind 1 never
/// drifts, so every loop counted is a model-backed mind's repeat.
const WORLD: &str = r#"
name = "minds-tape"
seed = 9
duration_ms = 10_800_000
tick_ms = 600_000

[nodes]
count = 3

[graph]
kind = "complete"

[policy]
drift = 0.0
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

[[models]]
name = "fake"
url = "URL"
model = "fake-model"
concurrency = 2
nodes = [0, 2]
"#;

fn world(url: &str) -> String {
    WORLD.replace("URL", url)
}

fn options(twin: bool) -> MindsOptions {
    MindsOptions {
        seed: 9,
        seeds: 1,
        twin,
    }
}

/// Runs `scenario` through `calls` and writes its outcome into `out`.
fn run_into(scenario: &MindsScenario, twin: bool, calls: &ModelCalls, out: &Path) {
    let outcome = run_minds_with(scenario, options(twin), calls, &mut |_, _| {}).expect("runs");
    write_outcome(out, &outcome).expect("writes");
}

/// Records `scenario` into `out` (result and tape).
fn record(scenario: &MindsScenario, twin: bool, out: &Path) {
    std::fs::create_dir_all(out).expect("out");
    let calls = ModelCalls::record(&out.join(TAPE_FILE), scenario, &options(twin)).expect("tape");
    run_into(scenario, twin, &calls, out);
}

fn read(path: PathBuf) -> Vec<u8> {
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The tape's call lines as JSON.
fn calls_of(tape: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(tape)
        .expect("tape")
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}

#[test]
fn a_recorded_world_replays_bit_for_bit_with_the_server_gone() {
    let server = FakeLlm::start();
    let s = MindsScenario::from_toml(&world(&server.url())).expect("valid");
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    record(&s, true, &a);
    let served = server.served();
    assert!(served > 0, "the minds asked the server");
    record(&s, true, &b);
    assert_eq!(
        read(a.join("result.json")),
        read(b.join("result.json")),
        "same seed, same server: same result bytes"
    );
    assert_eq!(read(a.join(TAPE_FILE)), read(b.join(TAPE_FILE)));
    drop(server);
    let result: serde_json::Value =
        serde_json::from_slice(&read(a.join("result.json"))).expect("json");
    assert!(
        result["episodes"].as_u64().expect("episodes") > 0,
        "the core's repeat verdicts on the server's replies are loops: {result}"
    );

    let calls = calls_of(&a.join(TAPE_FILE));
    assert_eq!(calls.len() as u64, served, "every call is on the tape");
    let mut nodes: Vec<u64> = calls.iter().filter_map(|c| c["node"].as_u64()).collect();
    nodes.dedup();
    nodes.sort_unstable();
    nodes.dedup();
    assert_eq!(nodes, [0, 2], "only the model-backed minds");
    let worlds: std::collections::BTreeSet<bool> = calls
        .iter()
        .filter_map(|c| c["sharing"].as_bool())
        .collect();
    assert_eq!(worlds.len(), 2, "both twins are on the tape");

    let replayed = dir.path().join("replayed");
    let tape = ModelCalls::replay(&a.join(TAPE_FILE), &s, &options(true)).expect("matches");
    run_into(&s, true, &tape, &replayed);
    for file in ["result.json", "timeseries.csv"] {
        assert_eq!(
            read(a.join(file)),
            read(replayed.join(file)),
            "{file}: the replay is the recording, bit for bit"
        );
    }
}

/// The binary's `minds` with `args`; no backtrace asked for, so an error
/// is the one line a user sees.
fn mesh_sim(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mesh-sim"))
        .arg("minds")
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .output()
        .expect("runs")
}

/// The refusal: a failed run whose stderr is one line.
fn refusal(out: &Output) -> String {
    assert!(!out.status.success(), "refused");
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_owned();
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    stderr
}

#[test]
fn the_command_replays_its_tape_and_refuses_a_tampered_one_in_one_line() {
    let server = FakeLlm::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = dir.path().join("world.toml");
    std::fs::write(&scenario, world(&server.url())).expect("scenario");
    let rec = dir.path().join("rec");
    let out = mesh_sim(&[scenario.as_os_str(), "--out".as_ref(), rec.as_os_str()]);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains(TAPE_FILE));
    drop(server);
    let tape = rec.join(TAPE_FILE);

    let rep = dir.path().join("rep");
    let replay = |tape: &Path, scenario: &Path, out: &Path| {
        mesh_sim(&[
            scenario.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
            "--replay".as_ref(),
            tape.as_os_str(),
        ])
    };
    let out = replay(&tape, &scenario, &rep);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(read(rec.join("result.json")), read(rep.join("result.json")));
    assert!(!rep.join(TAPE_FILE).exists(), "a replay records nothing");

    // One call's prompt hash changed: the world asks for the real one.
    let text = std::fs::read_to_string(&tape).expect("tape");
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let mut call: serde_json::Value = serde_json::from_str(&lines[1]).expect("call");
    let prompt = call["prompt"].as_str().expect("prompt").to_owned();
    let flipped = if prompt.starts_with('0') { "1" } else { "0" };
    call["prompt"] = format!("{flipped}{}", &prompt[1..]).into();
    lines[1] = call.to_string();
    let tampered = dir.path().join("tampered.jsonl");
    std::fs::write(&tampered, lines.join("\n") + "\n").expect("tampered");
    let line = refusal(&replay(&tampered, &scenario, &dir.path().join("t")));
    let want = format!("mind {} at tick {}", call["node"], call["tick"]);
    assert!(
        line.contains("does not match") && line.contains(&want) && line.contains(&prompt),
        "{want}: {line}"
    );

    // Another scenario (mind 1 on the model, not mind 2): refused before
    // anything runs.
    let other = dir.path().join("other.toml");
    let toml = std::fs::read_to_string(&scenario).expect("scenario");
    std::fs::write(&other, toml.replace("nodes = [0, 2]", "nodes = [0, 1]")).expect("other");
    let nothing = dir.path().join("nothing");
    let line = refusal(&replay(&tape, &other, &nothing));
    assert!(line.contains("mind 1"), "{line}");
    assert!(!nothing.exists(), "nothing ran, nothing written");
}

#[test]
fn a_gguf_model_that_cannot_open_is_one_line_before_anything_runs() {
    let toml = WORLD
        .replace("url = \"URL\"\nmodel = \"fake-model\"\n", "")
        .replace(
            "name = \"fake\"",
            "name = \"local\"\ngguf = \"/nonexistent/m.gguf\"",
        );
    let s = MindsScenario::from_toml(&toml).expect("valid");
    let err = run_minds_with(&s, options(false), &ModelCalls::live(), &mut |_, _| {})
        .expect_err("refused")
        .to_string();
    assert!(err.contains("\"local\"") && err.contains("m.gguf"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// One tiny real-model world (2 minds, 2 ticks) on the embedded engine,
/// recorded and replayed. Needs `PORFIRY_TEST_GGUF` (a small GGUF such as
/// SmolLM2-135M) and mesh-sim built with `--features engine`.
#[test]
fn a_tiny_embedded_model_world_replays_from_its_tape() {
    let Ok(gguf) = std::env::var("PORFIRY_TEST_GGUF") else {
        eprintln!("skipped: set PORFIRY_TEST_GGUF to a small GGUF file to run a real-model world");
        return;
    };
    if !cfg!(feature = "engine") {
        eprintln!(
            "skipped: PORFIRY_TEST_GGUF is set but mesh-sim was built without `--features engine`"
        );
        return;
    }
    let toml = WORLD
        .replace("duration_ms = 10_800_000", "duration_ms = 1_200_000")
        .replace("count = 3", "count = 2")
        .replace("url = \"URL\"\nmodel = \"fake-model\"\n", "")
        .replace(
            "name = \"fake\"",
            &format!("name = \"embedded\"\ngguf = {gguf:?}"),
        )
        .replace("nodes = [0, 2]", "nodes = [0, 1]");
    let s = MindsScenario::from_toml(&toml).expect("valid");
    let dir = tempfile::tempdir().expect("tempdir");
    let rec = dir.path().join("rec");
    record(&s, false, &rec);
    let calls = calls_of(&rec.join(TAPE_FILE));
    assert!(
        calls.iter().any(|c| c["node"] == 0) && calls.iter().any(|c| c["node"] == 1),
        "both minds asked the model"
    );
    let replayed = dir.path().join("replayed");
    let tape = ModelCalls::replay(&rec.join(TAPE_FILE), &s, &options(false)).expect("matches");
    run_into(&s, false, &tape, &replayed);
    assert_eq!(
        read(rec.join("result.json")),
        read(replayed.join("result.json"))
    );
}
