//! `porfiry model score` end to end (issue 43 §2): the real binary scores a
//! scripted OpenAI-compatible model over real HTTP on a small cases file,
//! and the JSON report's counts are exactly what the script makes them;
//! bad input (a line that is not JSON, an unknown tool, a file that is not
//! a model) is one line naming the file, and no model is called.

use std::path::Path;

use porfiry_tests::mesh_node::MeshNode;
use porfiry_tests::scripted_llm::{last_user, system_prompt};
use porfiry_tests::{Reply, Rule, ScriptedLlm, When};
use serde_json::Value;

/// Five cases: two need a tool (one reached, one answered in words), three
/// need none (one answered in words, one with a call, one with a garbled
/// call in Russian).
const CASES: &str = r#"# a person's own cases
{"request": "What time is it?", "expected": ["get_current_time"]}
{"request": "Show hi on the screen", "expected": ["show_text"]}
{"request": "Hello there", "expected": []}
{"request": "Say goodbye", "expected": []}

{"request": "Привет", "language": "ru"}
"#;

fn scripted() -> ScriptedLlm {
    ScriptedLlm::start(vec![
        Rule::new(
            When::last_user_contains("What time"),
            Reply::text("TOOL_CALL: get_current_time"),
        ),
        Rule::new(
            When::last_user_contains("Show hi"),
            Reply::text("Sure, done."),
        ),
        Rule::new(When::last_user_contains("Hello there"), Reply::text("Hi!")),
        Rule::new(
            When::last_user_contains("Say goodbye"),
            Reply::text("TOOL_CALL: show_text|bye"),
        ),
        Rule::new(
            When::last_user_contains("Привет"),
            Reply::text("TOOL_CALL: wave_hand|x"),
        ),
    ])
    .unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn a_cases_file_is_scored_with_exact_counts_against_a_scripted_model() {
    let llm = scripted();
    let node = MeshNode::init("scorer");
    let dir = tempfile::tempdir().unwrap();
    let cases = write(dir.path(), "cases.jsonl", CASES);
    let out = node.cli_ok(&[
        "model",
        "score",
        "--llm-url",
        &llm.url(),
        "--llm-model",
        "scripted",
        "--cases",
        &cases,
        "--rounds",
        "1",
        "--json",
    ]);
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    for (key, want) in [
        ("cases", 5),
        ("tool_cases", 2),
        ("right_tool", 1),
        ("no_tool_cases", 3),
        ("no_tool_ok", 1),
        ("replies", 5),
        ("format_valid", 4),
    ] {
        assert_eq!(report[key], want, "{key}: {out}");
    }
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), 5);
    assert_eq!(
        results[0]["called"],
        serde_json::json!(["get_current_time"])
    );
    assert_eq!(results[0]["right"], true);
    assert_eq!(results[3]["called"], serde_json::json!(["show_text"]));
    assert_eq!(results[3]["right"], false);
    assert_eq!(results[4]["language"], "ru");
    assert_eq!(results[4]["replies"][0], "TOOL_CALL: wave_hand|x");
    // The Russian case was asked of the Russian agent: its prompt is Russian.
    let ru_prompt = llm
        .requests()
        .into_iter()
        .find(|r| last_user(r).is_some_and(|u| u.contains("Привет")))
        .and_then(|r| system_prompt(&r).map(str::to_owned))
        .unwrap();
    assert!(
        ru_prompt.chars().any(|c| ('а'..='я').contains(&c)),
        "{ru_prompt}"
    );

    // A model that fails (the script has no rule for this request: HTTP
    // 418) is a model error in its row; the run goes on.
    let failing = write(
        dir.path(),
        "failing.jsonl",
        "{\"request\": \"Nobody scripted this\", \"expected\": [\"show_text\"]}\n\
         {\"request\": \"Hello there\"}\n",
    );
    let out = node.cli_ok(&[
        "model",
        "score",
        "--llm-url",
        &llm.url(),
        "--llm-model",
        "scripted",
        "--cases",
        &failing,
        "--rounds",
        "1",
        "--json",
    ]);
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(report["model_errors"], 1, "{out}");
    assert!(report["results"][0]["error"].is_string(), "{out}");
    assert_eq!(report["results"][1]["right"], true, "{out}");

    // The table form: one row per case and the summary's rates.
    let table = node.cli_ok(&[
        "model",
        "score",
        "--llm-url",
        &llm.url(),
        "--llm-model",
        "scripted",
        "--cases",
        &cases,
        "--rounds",
        "1",
    ]);
    assert_eq!(
        table.lines().filter(|l| l.starts_with("| ")).count(),
        6,
        "{table}"
    );
    assert!(
        table.contains("right tool 1/2 requests (50 %), no-tool precision 1/3 (33 %)"),
        "{table}"
    );
}

#[test]
fn bad_cases_or_a_bad_model_file_are_one_line_naming_it_and_no_model_is_called() {
    let llm = scripted();
    let node = MeshNode::init("scorer");
    let dir = tempfile::tempdir().unwrap();
    let score = |cases: &str| {
        node.cli(&[
            "model",
            "score",
            "--llm-url",
            &llm.url(),
            "--llm-model",
            "scripted",
            "--cases",
            cases,
        ])
    };
    let not_json = write(
        dir.path(),
        "bad.jsonl",
        "{\"request\": \"What time is it?\"}\nnot json\n",
    );
    let unknown = write(
        dir.path(),
        "unknown.jsonl",
        "{\"request\": \"Fly\", \"expected\": [\"fly_to_mars\"]}\n",
    );
    for (file, says) in [
        (not_json, "bad.jsonl line 2: ".to_owned()),
        (
            unknown,
            "unknown.jsonl line 1: unknown tool name \"fly_to_mars\"".to_owned(),
        ),
    ] {
        let out = score(&file);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(stderr.contains(&says), "{stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    }
    let not_a_model = write(dir.path(), "model.gguf", "this is not a model");
    let out = node.cli(&["model", "score", "--model-file", &not_a_model]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("model.gguf") && stderr.trim().lines().count() == 1,
        "{stderr}"
    );
    assert!(llm.requests().is_empty(), "no model was called");
}
