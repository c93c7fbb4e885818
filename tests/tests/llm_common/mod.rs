//! Settings and a history shared by the LLM client tests (`llm_client`,
//! `llm_stream`): fast retries, the scripted server's URL, one short chat.

#![allow(dead_code)] // each test file uses a different subset

use porfiry_agent::llm::{ChatMessage, LlmConfig, LlmTarget, OpenAiClient};
use porfiry_tests::ScriptedLlm;

/// Retries the fast settings allow.
pub const RETRIES: u32 = 2;

/// Fast settings: 1 ms backoff, two retries, a generous timeout for slow CI machines.
pub fn config(base: &str) -> LlmTarget {
    LlmTarget {
        config: LlmConfig {
            max_retries: Some(RETRIES),
            retry_base_delay_ms: Some(1),
            timeout_ms: Some(10_000),
            ..LlmConfig::default()
        },
        ..LlmTarget::new(base, "test-model")
    }
}

/// [`config`] with one call setting changed.
pub fn config_with(base: &str, change: impl FnOnce(&mut LlmConfig)) -> LlmTarget {
    let mut target = config(base);
    change(&mut target.config);
    target
}

pub fn client(llm: &ScriptedLlm) -> OpenAiClient {
    OpenAiClient::new(config(&llm.url())).unwrap()
}

pub fn history() -> Vec<ChatMessage> {
    vec![
        ChatMessage::user("hi"),
        ChatMessage::assistant("hello"),
        ChatMessage::user("films?"),
    ]
}
