//! End to end through the embedding API (`porfiry_agent::chat`), as a phone
//! app would use it: the node's real HTTP client against the scripted model,
//! with a manual clock to drive the toolset idle timeout without waiting.

mod chat_common;

use std::sync::Arc;

use chat_common::*;
use porfiry_agent::chat::{
    ChatConfig, ChatEngine, ClientEvent, Clock, ManualClock, ModelError, SendError, SystemClock,
};
use porfiry_agent::{LlmConfig, LlmTarget};
use porfiry_tests::{Reply, ScriptedLlm};

const MIN_MS: i64 = 60_000;

fn config(llm: &ScriptedLlm) -> ChatConfig {
    let llm = LlmTarget {
        config: LlmConfig {
            max_retries: Some(0),
            timeout_ms: Some(10_000),
            ..LlmConfig::default()
        },
        ..LlmTarget::new(llm.url(), "test-model")
    };
    ChatConfig::new(llm)
}

fn engine_with_clock(llm: &ScriptedLlm) -> (ChatEngine, ManualClock) {
    let clock = ManualClock::new(SystemClock::utc().now());
    let engine = ChatEngine::new(&config(llm))
        .unwrap()
        .with_clock(Arc::new(clock.clone()));
    (engine, clock)
}

/// The seed's timeout: a call at 9:59 extends the set; 10 minutes after the
/// last use it is gone from the prompt, and its skill is back.
#[tokio::test]
async fn a_use_at_nine_fifty_nine_extends_and_ten_idle_minutes_expire_the_set() {
    let llm = ScriptedLlm::queue(vec![
        Reply::text("TOOL_CALL: enable_toolset|media"),
        Reply::text("On."),
        Reply::text("TOOL_CALL: media_search|matrix"),
        Reply::text("Found The Matrix."),
        Reply::text("Still here."),
        Reply::text("Gone."),
    ])
    .unwrap();
    let (engine, clock) = engine_with_clock(&llm);
    let mut session = engine.session();

    assert_eq!(session.send("films").await.unwrap().text, "On.");
    assert_eq!(session.active_toolsets(), ["media"]);

    clock.advance_ms(9 * MIN_MS + 59_000);
    assert_eq!(
        session.active_toolsets(),
        ["media"],
        "9:59: not yet expired"
    );
    assert_eq!(
        session.send("matrix?").await.unwrap().text,
        "Found The Matrix."
    );

    clock.advance_ms(2_000); // 10:01 after the enable, 0:02 after the search
    assert_eq!(
        session.active_toolsets(),
        ["media"],
        "the search extended it"
    );
    assert_eq!(session.send("and?").await.unwrap().text, "Still here.");

    clock.advance_ms(10 * MIN_MS - 2_000); // exactly at the new deadline
    assert_eq!(
        session.active_toolsets(),
        ["media"],
        "at the deadline it holds"
    );
    clock.advance_ms(1);
    assert!(
        session.active_toolsets().is_empty(),
        "past the deadline it is gone"
    );
    assert_eq!(session.send("bye").await.unwrap().text, "Gone.");

    let r = llm.recorded();
    assert_eq!(r.len(), 6);
    assert!(system(&r[2]).contains(ACTIVE_MEDIA), "at 9:59");
    assert!(system(&r[4]).contains(ACTIVE_MEDIA), "at 10:01, extended");
    let last = system(&r[5]);
    assert!(!last.contains("Active toolsets"), "{last}");
    assert!(last.contains(MEDIA_SKILL_LINE), "{last}");
    assert_eq!(last, system(&r[0]), "state 1 again, byte for byte");
    // Expiry cleans the activation, never the history.
    assert_eq!(history(&r[5]).len(), 9);
    assert_no_invisible_calls_in_history(&r);
}

/// Two sessions of one engine share the toolbox and the model, not activation
/// or history.
#[tokio::test]
async fn sessions_of_one_engine_keep_their_own_activation_and_history() {
    let llm = ScriptedLlm::queue(vec![
        Reply::text("TOOL_CALL: enable_toolset|media"),
        Reply::text("A on."),
        Reply::text("B hi."),
        Reply::text("A again."),
    ])
    .unwrap();
    let (engine, _clock) = engine_with_clock(&llm);
    let mut a = engine.session();
    let mut b = engine.session();
    assert_eq!(a.send("A: films").await.unwrap().text, "A on.");
    assert_eq!(b.send("B: hello").await.unwrap().text, "B hi.");
    assert_eq!(a.send("A: more").await.unwrap().text, "A again.");
    assert_eq!(a.active_toolsets(), ["media"]);
    assert!(b.active_toolsets().is_empty());
    assert_eq!(b.history().len(), 2);
    assert_eq!(a.history().len(), 4);

    let r = llm.recorded();
    assert!(!system(&r[2]).contains("Active toolsets"));
    assert_eq!(history(&r[2]), [msg("user", "B: hello")]);
    assert!(system(&r[3]).contains(ACTIVE_MEDIA));
}

/// `send` returns the answer with the client events of the turn, in order.
#[tokio::test]
async fn a_reply_carries_show_text_and_play_events_in_order() {
    let llm = ScriptedLlm::queue(vec![
        Reply::text("TOOL_CALL: show_text|Starting The Matrix"),
        // An acting tool of an inactive set first activates it, NOT run.
        Reply::text("TOOL_CALL: media_play|tt0133093"),
        Reply::text("TOOL_CALL: media_play|tt0133093"),
        Reply::text("Enjoy."),
    ])
    .unwrap();
    let (engine, _clock) = engine_with_clock(&llm);
    let mut session = engine.session();
    let reply = session.send("play the matrix").await.unwrap();
    assert_eq!(reply.text, "Enjoy.");
    assert_eq!(
        reply.events,
        [
            ClientEvent::ShowText {
                text: "Starting The Matrix".into()
            },
            ClientEvent::Action {
                tool: "media_play".into(),
                value: "tt0133093".into()
            },
        ]
    );
}

/// Bad input is refused before the model is called; a model failure is an
/// error value and the session takes the next message.
#[tokio::test]
async fn bad_input_and_model_failures_are_errors_not_panics() {
    let llm = ScriptedLlm::queue(vec![Reply::status(500, "down"), Reply::text("Back.")]).unwrap();
    let (engine, _clock) = engine_with_clock(&llm);
    let mut session = engine.session();
    assert_eq!(session.send("  ").await, Err(SendError::Empty));
    let long = "x".repeat(porfiry_agent::chat::MAX_USER_MESSAGE_CHARS + 1);
    assert!(matches!(
        session.send(&long).await,
        Err(SendError::TooLong { .. })
    ));
    assert_eq!(llm.request_count(), 0);
    assert!(
        session.history().is_empty(),
        "refused input leaves no trace"
    );

    let e = session.send("hi").await.unwrap_err();
    assert!(
        matches!(
            e,
            SendError::Model(ModelError::ServerError { status: 500, .. })
        ),
        "{e:?}"
    );
    assert_eq!(session.send("again").await.unwrap().text, "Back.");
}

/// The clock the engine hands out is the one `get_current_time` reports.
#[tokio::test]
async fn get_current_time_reports_the_engines_clock() {
    let llm = ScriptedLlm::queue(vec![
        Reply::text("TOOL_CALL: get_current_time"),
        Reply::text("It is late."),
    ])
    .unwrap();
    let (engine, clock) = engine_with_clock(&llm);
    let mut session = engine.session();
    session.send("time?").await.unwrap();
    let result = &history(&llm.recorded()[1])[2].1;
    let iso = clock.now().iso8601();
    assert!(result.contains(&iso), "{result} should contain {iso}");
}
