//! End to end: model faults through `porfiry chat` — endpoint down, one 500
//! then success, a garbage body, a reply slower than the timeout. Each turn
//! that fails prints one `[error]` line; the next line is answered as usual
//! and the process exits 0 at the end of input.

mod chat_common;

use std::time::Duration;

use chat_common::*;
use porfiry_tests::{Reply, ScriptedLlm};

/// Lines of stdout starting with `[error] `.
fn error_lines(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter(|l| l.starts_with("[error] "))
        .collect()
}

#[test]
fn endpoint_down_prints_one_line_per_turn_and_goes_on() {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let dir = tempfile::tempdir().unwrap();
    let run = chat(
        dir.path(),
        &url,
        &["--llm-retries", "0"],
        "hello\nanyone?\n",
    );
    assert!(run.status.success(), "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", run.stdout);
    for line in lines {
        assert!(
            line.starts_with(&format!(
                "[error] model endpoint http://127.0.0.1:{port}/v1/chat/completions unreachable: "
            )),
            "{line}"
        );
        assert!(line.ends_with("(after 1 attempt(s))"), "{line}");
    }
}

#[test]
fn one_500_then_success_fails_that_turn_only_without_retries() {
    let llm =
        ScriptedLlm::queue(vec![Reply::status(500, "boom"), Reply::text("Recovered.")]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = chat(
        dir.path(),
        &llm.url(),
        &["--llm-retries", "0"],
        "first\nsecond\n",
    );
    assert!(run.status.success(), "{run:?}");
    assert_eq!(
        run.stdout,
        "[error] model endpoint answered HTTP 500: boom (after 1 attempt(s))\nRecovered.\n"
    );
    // The failed turn stays in the history, closed by a no-reply note, so
    // user and assistant keep alternating.
    let r = llm.recorded();
    assert_eq!(
        history(&r[1]),
        [
            msg("user", "first"),
            msg("assistant", "(no reply: the model call failed)"),
            msg("user", "second"),
        ]
    );
}

#[test]
fn one_500_then_success_is_retried_away_by_default() {
    let llm =
        ScriptedLlm::queue(vec![Reply::status(500, "boom"), Reply::text("Recovered.")]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = chat(dir.path(), &llm.url(), &[], "first\n");
    assert!(run.status.success(), "{run:?}");
    assert_eq!(
        run.stdout, "Recovered.\n",
        "the client's retry hides the 500"
    );
    let r = llm.recorded();
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].body, r[1].body, "the retry repeats the same request");
}

#[test]
fn a_garbage_body_prints_one_line_and_the_chat_goes_on() {
    let llm = ScriptedLlm::queue(vec![
        Reply::garbage(&b"<html>502 bad gateway</html>"[..]),
        Reply::text("Fine now."),
    ])
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = chat(dir.path(), &llm.url(), &[], "one\ntwo\n");
    assert!(run.status.success(), "{run:?}");
    let errors = error_lines(&run.stdout);
    assert_eq!(errors.len(), 1, "{}", run.stdout);
    assert!(
        errors[0].starts_with("[error] model endpoint sent a body that is not a chat completion: "),
        "{}",
        errors[0]
    );
    assert!(
        errors[0].contains("<html>502 bad gateway</html>"),
        "{}",
        errors[0]
    );
    assert!(run.stdout.ends_with("Fine now.\n"), "{}", run.stdout);
}

#[test]
fn a_reply_slower_than_the_timeout_fails_that_turn_only() {
    let llm = ScriptedLlm::queue(vec![
        Reply::delayed(Duration::from_secs(5), Reply::text("Too late.")),
        Reply::text("On time."),
    ])
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let run = chat(
        dir.path(),
        &llm.url(),
        &["--llm-timeout-secs", "1"],
        "slow\nfast\n",
    );
    assert!(run.status.success(), "{run:?}");
    assert_eq!(
        run.stdout,
        "[error] model did not answer within 1000 ms\nOn time.\n"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the chat did not wait for the slow reply"
    );
}

#[test]
fn a_failure_mid_turn_keeps_what_the_tools_did() {
    let llm = ScriptedLlm::queue(vec![
        Reply::text("TOOL_CALL: media_search|matrix"),
        Reply::status(503, "loading model"),
        Reply::text("The Matrix (1999)."),
    ])
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = chat(
        dir.path(),
        &llm.url(),
        &["--llm-retries", "0"],
        "matrix?\nand?\n",
    );
    assert!(run.status.success(), "{run:?}");
    assert_eq!(
        run.stdout,
        "[error] model endpoint answered HTTP 503: loading model (after 1 attempt(s))\n\
         The Matrix (1999).\n"
    );
    let h = history(&llm.recorded()[2]);
    assert_eq!(
        h[2],
        msg(
            "user",
            "TOOL_RESULT media_search: tt0133093 — The Matrix (1999)"
        )
    );
    assert_eq!(h[3], msg("assistant", "(no reply: the model call failed)"));
    assert_eq!(h[4], msg("user", "and?"));
}
