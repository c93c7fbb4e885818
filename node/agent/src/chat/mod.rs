//! Chat sessions of the node, for the terminal (`porfiry chat`) and for
//! embedding in an app: a [`ChatEngine`] holds what sessions share (toolsets,
//! skills, the model, the clock); each [`ChatSession`] is one conversation
//! with `send(text)` → [`Reply`] (answer text and client events).
//!
//! The tool loop itself (prompt states, invisible enable/disable, call
//! substitution, per-session activation with lazy expiry) is
//! `porfiry_skills`'; this module wires it to the node's OpenAI-compatible
//! client ([`model`], failures worded by [`model_failure`]), toolsets and
//! data dir.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use porfiry_agent::chat::{ChatConfig, ChatEngine};
//! use porfiry_agent::llm::LlmTarget;
//!
//! let config = ChatConfig::new(LlmTarget::new("http://127.0.0.1:11434/v1", "qwen2.5:3b"));
//! let engine = ChatEngine::new(&config)?;
//! let mut session = engine.session();
//! let reply = session.send("find Lara Croft films").await?;
//! println!("{} ({} events)", reply.text, reply.events.len());
//! # Ok(()) }
//! ```

pub(crate) mod clock;
pub(crate) mod config;
pub(crate) mod engine;
pub mod input;
pub(crate) mod model;
pub(crate) mod model_failure;
pub mod session;
pub mod tool_use;
pub mod tool_use_run;
pub mod transcript;

pub use clock::local_clock;
pub use config::{ChatConfig, MAX_USER_MESSAGE_CHARS};
pub use engine::{ChatEngine, ChatError};
pub use session::{ChatSession, SendError};

/// The loop's types an embedder needs, so it does not depend on
/// `porfiry-skills` itself: the reply, its events and token counts, the
/// clocks, the model trait for bringing its own model (with what it returns
/// and its one error type, the HTTP client's too), who is calling, trace
/// events.
pub use porfiry_skills::ChatMessage as HistoryMessage;
pub use porfiry_skills::{
    Action, BoxFuture, Caller, ClientEvent, Clock, Completion, Delta, DeltaStream, Language, Llm,
    LlmError as ModelError, ManualClock, ModelRequest, Reply, SystemClock, TraceEvent, Usage,
    ZonedTime,
};
