//! `porfiry model teach` end to end (issue 43 §3) with the real SmolLM2-135M
//! (`PORFIRY_TEST_GGUF`, fetched by `.ci/run`): a run of a few steps writes
//! the node's own data, shows the loss on the window it trained falling,
//! writes a Q8_0 model that `llm list` shows as taught (base, data hash,
//! date) and that `chat --model-file` loads and answers with; `--data`
//! reuses a data file (the same hash); bad input — a file that is not a
//! model, a `--data` line that is not JSON — is one line naming the file and
//! line, and nothing is written. Named `real_model_…`: one at a time
//! (.config/nextest.toml), small windows and few steps to fit CI's 2 cores.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use porfiry_engine::test_model::test_model_path;
use porfiry_tests::mesh_node::MeshNode;
use porfiry_tests::porfiry_bin::porfiry_bin;

fn model() -> String {
    test_model_path()
        .unwrap_or_else(|e| panic!("{e}"))
        .display()
        .to_string()
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A figure after `label` in `line` (`… loss 2.345 → 1.234 …`): both sides.
fn arrow_figures(line: &str, label: &str) -> (f32, f32) {
    let rest = &line[line
        .find(label)
        .unwrap_or_else(|| panic!("{label}: {line}"))
        + label.len()..];
    let mut words = rest.split_whitespace();
    let before: f32 = words.next().unwrap().parse().unwrap();
    assert_eq!(words.next(), Some("→"), "{line}");
    let after: f32 = words.next().unwrap().trim_end_matches(';').parse().unwrap();
    (before, after)
}

#[test]
fn real_model_a_short_teaching_run_lowers_the_loss_and_the_taught_model_answers() {
    let node = MeshNode::init("teacher");
    let out = node
        .command()
        .args(["model", "teach", "--model-file", &model()])
        .args([
            "--turns",
            "6",
            "--core-ticks",
            "2",
            "--steps",
            "6",
            "--context",
            "128",
            "--layers",
            "2",
        ])
        .args([
            "--learning-rate",
            "0.001",
            "--out",
            "tiny-taught",
            "--threads",
            "2",
        ])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let trained = stdout.lines().find(|l| l.starts_with("trained ")).unwrap();
    assert!(trained.starts_with("trained 6 of 6 steps"), "{trained}");
    let (before, after) = arrow_figures(trained, "the first window's loss ");
    assert!(after < before, "{trained}");
    let data = node.dir().join("teach/tiny-taught/data.jsonl");
    let lines = std::fs::read_to_string(&data).unwrap();
    assert!(lines.lines().count() >= 8, "{lines}");
    assert_eq!(
        lines
            .lines()
            .filter(|l| l.starts_with(r#"{"kind":"core""#))
            .count(),
        2,
        "two core ticks, each an example: {lines}"
    );
    let file = node.dir().join("models/tiny-taught.gguf");
    assert!(std::fs::read(&file).unwrap().starts_with(b"GGUF"));

    let list = node.command().args(["llm", "list"]).output().unwrap();
    let (listed, _) = text(&list);
    let row = listed.lines().find(|l| l.contains("tiny-taught")).unwrap();
    assert!(
        row.contains("taught from ") && row.contains("6 steps"),
        "{row}"
    );
    assert!(row.contains("data sha256 "), "{row}");

    let mut chat = Command::new(porfiry_bin())
        .args(["--data-dir", &node.dir().display().to_string()])
        .args([
            "chat",
            "--model-file",
            &file.display().to_string(),
            "--model-threads",
            "1",
        ])
        .env_remove("PORFIRY_LLM_URL")
        .env_remove("PORFIRY_LLM_MODEL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    chat.stdin
        .take()
        .unwrap()
        .write_all(b"Say hello.\n")
        .unwrap();
    let answered = chat.wait_with_output().unwrap();
    let (said, err) = text(&answered);
    assert!(answered.status.success(), "{said}\n{err}");
    assert!(!said.trim().is_empty(), "no answer: {err}");

    // The same data again, read from the file: the same hash.
    let again = node
        .command()
        .args([
            "model",
            "teach",
            "--model-file",
            &model(),
            "--data",
            &data.display().to_string(),
        ])
        .args([
            "--steps",
            "1",
            "--context",
            "128",
            "--layers",
            "1",
            "--out",
            "tiny-again",
            "--out-type",
            "q4_1",
        ])
        .output()
        .unwrap();
    let (again_out, again_err) = text(&again);
    assert!(again.status.success(), "{again_out}\n{again_err}");
    // Written as Q4_1, the base's type: about half the Q8_0 file.
    assert!(again_out.contains(" MB, Q4_1)"), "{again_out}");
    let size = |name: &str| {
        std::fs::metadata(node.dir().join(format!("models/{name}.gguf")))
            .unwrap()
            .len()
    };
    assert!(
        size("tiny-again") * 10 < size("tiny-taught") * 7,
        "{again_out}"
    );
    let hash = |s: &str| {
        s.lines()
            .find(|l| l.starts_with("data: "))
            .unwrap()
            .rsplit("sha256 ")
            .next()
            .unwrap()
            .to_owned()
    };
    assert_eq!(hash(&stdout), hash(&again_out));
}

#[test]
fn a_file_that_is_no_model_or_a_data_line_that_is_no_json_is_one_line_and_writes_nothing() {
    let node = MeshNode::init("refuser");
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("fake.gguf");
    std::fs::write(&fake, b"GGUF but not really").unwrap();
    let out = node
        .command()
        .args([
            "model",
            "teach",
            "--model-file",
            &fake.display().to_string(),
        ])
        .output()
        .unwrap();
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("fake.gguf"), "{stderr}");
    assert!(!node.dir().join("teach").exists());

    let Ok(real) = test_model_path() else {
        return eprintln!("skipped the --data half: no test model");
    };
    let data = dir.path().join("data.jsonl");
    std::fs::write(&data, "# mine\nnot json\n").unwrap();
    let out = node
        .command()
        .args([
            "model",
            "teach",
            "--model-file",
            &real.display().to_string(),
        ])
        .args(["--data", &data.display().to_string(), "--out", "bad"])
        .output()
        .unwrap();
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("data.jsonl line 2: "), "{stderr}");
    assert!(!node.dir().join("models/bad.gguf").exists());
}
