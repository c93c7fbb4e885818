//! End to end with a real model in a local GGUF (SmolLM2-135M-Instruct,
//! `PORFIRY_TEST_GGUF`, fetched by `.ci/run`): `porfiry chat --model-file`
//! answers piped lines; `porfiry think --ticks 2 --model-file` records two
//! ticks without an error; `porfiry llm add --file` registers it, `porfiry
//! run` with no model flags then uses it and says so, and
//! `llm list` shows its header; a missing file stops the command with one
//! line naming it; Gemma 3 270M, a base model whose file has no chat
//! template, chats with the template of its architecture (issue 43 §1).
//! Tests that run the model are named `real_model_…`
//! (one at a time: .config/nextest.toml) and decode on one thread.

use std::io::Write;
use std::process::{Command, Stdio};

use porfiry_engine::test_model::{test_gemma_path, test_model_path};
use porfiry_storage::{ListQuery, TickRecord};
use porfiry_tests::mesh_node::MeshNode;
use porfiry_tests::porfiry_bin::porfiry_bin;

fn model() -> String {
    test_model_path()
        .unwrap_or_else(|e| panic!("{e}"))
        .display()
        .to_string()
}

/// `porfiry chat --model-file FILE` with `extra` flags, fed two lines:
/// (stdout, stderr), the command having succeeded.
fn chat_two_lines(file: &str, extra: &[&str]) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(porfiry_bin())
        .args(["--data-dir", &dir.path().display().to_string()])
        .args(["chat", "--model-file", file, "--model-threads", "1"])
        .args(extra)
        .env_remove("PORFIRY_LLM_URL")
        .env_remove("PORFIRY_LLM_MODEL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"What is the capital of France?\nSay hello.\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stdout}\n{stderr}");
    (stdout, stderr)
}

#[test]
fn real_model_chat_with_a_model_file_answers_each_line() {
    let (stdout, stderr) = chat_two_lines(&model(), &[]);
    assert!(!stdout.trim().is_empty(), "no answer: {stderr}");
    assert!(
        !stdout.lines().any(|l| l.starts_with("[error]")),
        "{stdout}"
    );
}

/// Gemma 3 270M's file carries no `tokenizer.chat_template`: it used to be
/// refused ("it has no chat template"); it now gets llama.cpp's Gemma turns.
#[test]
fn real_model_gemma_without_a_chat_template_chats_with_its_architectures() {
    let gemma = test_gemma_path()
        .unwrap_or_else(|e| panic!("{e}"))
        .display()
        .to_string();
    let (stdout, stderr) = chat_two_lines(&gemma, &[]);
    assert!(!stdout.trim().is_empty(), "no answer: {stderr}");
    assert!(
        !stdout.lines().any(|l| l.starts_with("[error]")),
        "{stdout}\n{stderr}"
    );
    // An explicit name works too; a wrong one stops before loading, one line.
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(porfiry_bin())
        .args(["--data-dir", &dir.path().display().to_string()])
        .args(["chat", "--model-file", &gemma, "--chat-template", "gemmma"])
        .env_remove("PORFIRY_LLM_URL")
        .env_remove("PORFIRY_LLM_MODEL")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("--chat-template gemmma") && stderr.trim().lines().count() == 1,
        "{stderr}"
    );
}

#[test]
fn real_model_think_two_ticks_with_a_model_file_records_two_ticks() {
    let node = MeshNode::init("local-thinker");
    let out = node
        .command()
        .args(["think", "--ticks", "2", "--pause-secs", "0"])
        .args(["--context-tokens", "1024", "--model-threads", "1"])
        .args(["--model-file", &model()])
        .env_remove("PORFIRY_LLM_URL")
        .env_remove("PORFIRY_LLM_MODEL")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(
        lines[0].starts_with("tick 1: ") && !lines[0].contains("error"),
        "{stdout}"
    );
    assert!(
        lines[1].starts_with("tick 2: ") && !lines[1].contains("error"),
        "{stdout}"
    );
    let ticks = node
        .store()
        .list::<TickRecord>(&ListQuery {
            limit: Some(10),
            oldest_first: true,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(ticks.iter().map(|t| t.row.tick).collect::<Vec<_>>(), [1, 2]);
    assert!(ticks.iter().all(|t| t.row.error.is_none()));
}

#[test]
fn llm_add_file_registers_it_and_list_shows_its_header() {
    let node = MeshNode::init("registrar");
    let said = node.cli_ok(&["llm", "add", "smol", "--file", &model(), "--main"]);
    assert!(said.contains("arch: llama  context: 8192"), "{said}");
    let list = node.cli_ok(&["llm", "list"]);
    assert!(
        list.contains("registry smol  model: SmolLM2-135M-Instruct.Q4_1  at: file:/"),
        "{list}"
    );
    assert!(
        list.contains("size: 99 MB  arch: llama  context: 8192  template: own (file)  [main]"),
        "{list}"
    );
    let both = node.cli(&[
        "llm",
        "add",
        "x",
        "--file",
        &model(),
        "--url",
        "http://h/v1",
    ]);
    assert!(!both.status.success());
}

#[test]
fn a_missing_model_file_is_one_line_naming_it_and_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("absent.gguf").display().to_string();
    for command in [&["chat"][..], &["think", "--ticks", "1"]] {
        let out = Command::new(porfiry_bin())
            .args(["--data-dir", &dir.path().join("node").display().to_string()])
            .args(command)
            .args(["--model-file", &missing])
            .env_remove("PORFIRY_LLM_URL")
            .env_remove("PORFIRY_LLM_MODEL")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains("absent.gguf") && stderr.contains("does not exist"),
            "{stderr}"
        );
    }
    assert!(!dir.path().join("node").exists(), "think created a node");
}

#[test]
fn real_model_run_without_model_flags_uses_the_registry_main_file_and_says_so() {
    let mut node = MeshNode::init("registry-main");
    node.cli_ok(&["llm", "add", "smol", "--file", &model(), "--main"]);
    node.start(&["--profile", "phone", "--model-threads", "1"]);
    porfiry_tests::mesh_node::wait_for("the model line", || {
        node.stdout_lines().iter().any(|l| l.starts_with("model: "))
    });
    let lines = node.stdout_lines();
    let line = lines.iter().find(|l| l.starts_with("model: ")).unwrap();
    assert!(
        line.starts_with("model: smol (SmolLM2-135M-Instruct.Q4_1 at file:/")
            && line.ends_with("the registry's main model)"),
        "{line}"
    );
}
