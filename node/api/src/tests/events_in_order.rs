//! The real agent's events reach a streaming caller in order and none is
//! dropped, however slowly the caller reads (issue 44 §4): a turn whose
//! tools show six texts, read through a channel with no spare room.

use std::sync::Arc;

use futures::StreamExt;
use porfiry_agent::chat::{ChatConfig, ChatEngine, ClientEvent};
use porfiry_agent::llm::LlmTarget;
use porfiry_skills::llm::TOOL_RESULT_PREFIX;
use porfiry_skills::{BoxFuture, Completion, Llm, LlmError, ModelRequest};

use crate::adapters::ChatAgent;
use crate::backend::{Agent, TurnDelta};

/// Texts the scripted model shows before it answers.
const SHOWN: usize = 6;

/// Calls `show_text|step N` until it has seen `SHOWN` results, then answers.
struct ShowsSteps;

impl Llm for ShowsSteps {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Completion, LlmError>> {
        let results = request
            .messages
            .iter()
            .filter(|m| m.content.starts_with(TOOL_RESULT_PREFIX))
            .count();
        let text = if results < SHOWN {
            format!("TOOL_CALL: show_text|step {results}")
        } else {
            "All steps shown.".to_owned()
        };
        Box::pin(async move { Ok(Completion::text(text)) })
    }
}

#[tokio::test]
async fn every_event_reaches_a_slow_caller_in_order_before_the_answer() {
    let config = ChatConfig::new(LlmTarget::new("http://unused/v1", "steps"));
    let engine = ChatEngine::with_llm(&config, Arc::new(ShowsSteps)).unwrap();
    let agent = ChatAgent::new(Arc::new(engine), "steps");
    let mut session = agent.session("s");
    // No spare slot: every event waits for the caller.
    let (tx, rx) = futures::channel::mpsc::channel(0);
    let read = rx.then(|delta| async move {
        tokio::task::yield_now().await;
        delta
    });
    let (reply, deltas) = futures::join!(
        session.send("show the steps", Some(tx)),
        read.collect::<Vec<_>>()
    );
    let reply = reply.unwrap();
    assert_eq!(reply.text, "All steps shown.");
    assert_eq!(reply.events.len(), SHOWN, "the final list has every event");
    let shown: Vec<String> = deltas
        .iter()
        .filter_map(|d| match d {
            TurnDelta::Event(ClientEvent::ShowText { text }) => Some(text.clone()),
            _ => None,
        })
        .collect();
    let expected: Vec<String> = (0..SHOWN).map(|i| format!("step {i}")).collect();
    assert_eq!(shown, expected);
    let answer_at = deltas
        .iter()
        .position(|d| matches!(d, TurnDelta::Text(_)))
        .expect("the answer streamed");
    assert_eq!(
        answer_at, SHOWN,
        "the events came before the answer: {deltas:?}"
    );
}
