//! The tool loop with the real small model (issue 30 §4, §5):
//! SmolLM2-135M-Instruct run by the embedded engine behind the API's agent,
//! one reply to each of a fixed set of requests. Constrained, every reply
//! parses: plain text, or a call to a tool the prompt shows whose arguments
//! fit its schema. Unconstrained, the rate is printed, not asserted (a
//! small model's format is what the grammar is for). The test model comes
//! from `PORFIRY_TEST_GGUF` or `.ci/run`'s cache; nextest runs `real_model_…`
//! tests one at a time. Needs the `engine` feature (porfiry-node's turns it
//! on, so a workspace run has it).
#![cfg(feature = "engine")]

use std::sync::Arc;

use porfiry_agent::chat::tool_use::{ReplyForm, ToolUseCase, reply_form};
use porfiry_agent::chat::tool_use_run::{ToolUseRun, Totals};
use porfiry_agent::chat::{ChatConfig, Language, Llm};
use porfiry_agent::llm::LlmTarget;
use porfiry_engine::test_model::test_model_path;
use porfiry_engine::{Engine, EngineOptions};
use porfiry_storage::db::Db;
use porfiry_storage::{DB_FILE_NAME, Store};

/// The fixed requests: four of the tool-use set, and two that ask for a
/// call outright, so calls as well as answers go through the grammar.
const REQUESTS: [&str; 6] = [
    "What time is it now?",
    "Show the text 'Dinner at 7' on my screen.",
    "Turn on the films toolset.",
    "Read your notes skill and tell me the steps.",
    "Use the tool. Reply with exactly this line: TOOL_CALL: get_current_time",
    "Reply with exactly this line: TOOL_CALL: enable_toolset|media",
];

/// Each reply's budget: room for a call line or two sentences, and short
/// enough that six replies decode in seconds on one thread.
const REPLY_MAX_TOKENS: u32 = 48;

/// One model call per request: the first reply is what is scored (the
/// prompt then shows the core tools only, so every call must name one).
const ROUNDS: u32 = 1;

/// Every reply to the requests, constrained or not, with the run.
fn replies(constrained: bool) -> (Vec<String>, ToolUseRun) {
    let path = test_model_path().unwrap_or_else(|e| panic!("{e}"));
    let options = EngineOptions {
        threads: Some(1),
        ..EngineOptions::default()
    };
    let engine: Arc<dyn Llm> = Arc::new(Engine::open(&path, &options).unwrap());
    let config = ChatConfig {
        constrained,
        max_tool_rounds: ROUNDS,
        reply_max_tokens: REPLY_MAX_TOKENS,
        ..ChatConfig::new(LlmTarget::new("", "smollm2"))
    };
    let dir = tempfile::tempdir().unwrap();
    let db = Db::start(Store::create(dir.path().join(DB_FILE_NAME)).unwrap()).unwrap();
    let run = ToolUseRun::new(&config, engine, db).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut all = Vec::new();
    let mut totals = Totals::default();
    for request in REQUESTS {
        let case = ToolUseCase::new(request, &[], Language::En);
        let result = runtime.block_on(run.run_case(&case));
        assert_eq!(result.error, None, "{request}");
        totals.add(&case, &result);
        all.extend(result.replies);
    }
    println!("constrained {constrained}: {}", totals.summary());
    (all, run)
}

#[test]
fn real_model_constrained_replies_are_text_or_a_fitting_call_of_a_shown_tool() {
    let (replies, run) = replies(true);
    assert_eq!(replies.len(), REQUESTS.len());
    let shown: Vec<String> = run
        .toolbox()
        .prompt()
        .shown_tools(&[])
        .into_iter()
        .map(|t| t.name)
        .collect();
    let mut calls = 0;
    for reply in &replies {
        match reply_form(run.toolbox(), reply) {
            ReplyForm::Text => {}
            ReplyForm::Call(name) => {
                assert!(shown.contains(&name), "{name} is not shown: {reply:?}");
                calls += 1;
            }
            ReplyForm::Garbled => panic!("a constrained reply is garbled: {reply:?}"),
        }
    }
    println!(
        "constrained: {calls} of {} replies are calls",
        replies.len()
    );
    assert!(
        calls > 0,
        "the requests that ask for a call get one: {replies:?}"
    );
}

#[test]
fn real_model_unconstrained_replies_report_their_format_rate() {
    let (replies, run) = replies(false);
    let forms: Vec<ReplyForm> = replies
        .iter()
        .map(|r| reply_form(run.toolbox(), r))
        .collect();
    let garbled = forms.iter().filter(|f| **f == ReplyForm::Garbled).count();
    let calls = forms
        .iter()
        .filter(|f| matches!(f, ReplyForm::Call(_)))
        .count();
    println!(
        "unconstrained: {} of {} replies format-valid ({calls} calls, {garbled} garbled)",
        replies.len() - garbled,
        replies.len()
    );
    assert_eq!(replies.len(), REQUESTS.len());
}
