//! The Porfiry node's mind: the model backends, the chat engine and its
//! sessions (the tool loop of seed 000) and the cognitive core's IO (seed
//! 003). The toolsets both of them dispatch through are `porfiry-toolsets`,
//! below this crate.
//!
//! **What it offers**, by module:
//! - [`llm`] — backends behind `porfiry_skills::Llm`: the OpenAI-compatible
//!   HTTP client ([`llm::OpenAiClient`]) and the registry's models, a friend's
//!   included ([`llm::RegistryModels`]);
//! - [`chat`] — [`ChatEngine`] makes [`ChatSession`]s from a [`ChatConfig`]:
//!   the tool loop over one model, with transcripts and client events;
//! - [`cognition`] — [`cognition::CognitiveCore`]: one tick at a time over the
//!   node's diary, goals, notes and memory, with validators and
//!   anti-stagnation;
//! - [`teach`] — the training data the node writes from its own registry,
//!   skills and prompt, to teach its model its tools (`porfiry model teach`).
//!
//! **What it must not do**: open sockets other than its model clients'
//! HTTP, know libp2p, or serve HTTP (that is `porfiry-api`); the pure
//! decisions (prompt assembly, call parsing, the tick machine) stay in
//! `porfiry-skills`.

pub mod chat;
pub mod cognition;
pub mod llm;
pub mod teach;

pub use chat::{ChatConfig, ChatEngine, ChatError, ChatSession, SendError};
pub use llm::{LlmConfig, LlmTarget};
