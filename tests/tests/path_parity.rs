//! The same agent on every path (issue 44 §4): one scripted conversation
//! through the terminal (`porfiry chat`) and through the API (`porfiry run`)
//! sends the model the same requests — the system prompt and every message,
//! byte for byte — apart from what the paths document: the clock's reading
//! (each run has its own now) and the tool result that reads it. Both run
//! on an initialised node (`porfiry chat` before `porfiry init` has the
//! media set alone). The phone's bindings build the chat from the same
//! parts but offer no media set unless the app names a catalogue
//! (`docs/phone.md`).

use std::io::Write;
use std::process::Stdio;

use porfiry_tests::api_client::call;
use porfiry_tests::mesh_node::MeshNode;
use porfiry_tests::{RecordedRequest, Reply, Rule, ScriptedLlm, When};
use serde_json::{Value, json};

fn script() -> ScriptedLlm {
    ScriptedLlm::start(vec![
        Rule::new(
            When::last_message_contains("hello"),
            Reply::text("Hi there."),
        ),
        Rule::new(
            When::last_message_contains("what time"),
            Reply::text("TOOL_CALL: get_current_time"),
        ),
        Rule::new(
            When::last_message_contains("TOOL_RESULT get_current_time"),
            Reply::text("It is about noon."),
        ),
    ])
    .unwrap()
}

/// The chat requests, each as (system prompt, messages), with the clock's
/// readings masked.
fn requests(recorded: Vec<RecordedRequest>) -> Vec<Value> {
    recorded
        .into_iter()
        .filter(|r| r.path.ends_with("/chat/completions"))
        .map(|r| {
            let messages: Vec<Value> = r
                .messages()
                .iter()
                .map(|(role, text)| json!([role, mask_clock(text)]))
                .collect();
            json!(messages)
        })
        .collect()
}

/// Digits of times and dates become `#`: each run reads its own clock.
fn mask_clock(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
        .collect()
}

#[test]
fn the_terminal_and_the_api_send_the_model_the_same_requests() {
    let terminal = script();
    let at_home = MeshNode::init("T");
    let mut child = at_home
        .command()
        .args([
            "chat",
            "--llm-url",
            &terminal.url(),
            "--llm-model",
            "scripted",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"hello\nwhat time is it?\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let api = script();
    let mut node = MeshNode::init("A");
    let (addr, token) = node.start_with_model(&api, &[]);
    let mut history = vec![json!({"role": "user", "content": "hello"})];
    let body = json!({"model": "porfiry", "messages": history, "user": "ann"}).to_string();
    let first = call(addr, "POST", "/v1/chat/completions", Some(&token), &body);
    assert_eq!(first.status, 200, "{}", first.body);
    let answer = first.json()["choices"][0]["message"]["content"].clone();
    history.push(json!({"role": "assistant", "content": answer}));
    history.push(json!({"role": "user", "content": "what time is it?"}));
    let body = json!({"model": "porfiry", "messages": history, "user": "ann"}).to_string();
    let last = call(addr, "POST", "/v1/chat/completions", Some(&token), &body);
    assert_eq!(last.status, 200, "{}", last.body);
    let exit = node.terminate();
    assert!(exit.status.success(), "{}", exit.stderr);

    let (a, b) = (requests(terminal.recorded()), requests(api.recorded()));
    assert_eq!(a.len(), 3, "{a:#?}");
    assert_eq!(a.len(), b.len());
    for (i, (t, p)) in a.iter().zip(&b).enumerate() {
        assert_eq!(t, p, "request {i}: the terminal's, then the API's");
    }
}
