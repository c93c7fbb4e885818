//! One chat session of the tool loop: the sans-IO state machine
//! ([`Session`]), the `TOOL_CALL` parser, the prompt builder, the dispatcher,
//! per-session toolset activation, and the thin async driver
//! ([`ChatSession`]) that runs a turn against an [`crate::Llm`].

pub mod activation;
pub mod dispatcher;
pub mod driver;
pub mod machine;
pub mod parser;
pub mod prompt;

pub use activation::Activation;
pub use dispatcher::{Outcome, ResultKind, dispatch};
pub use driver::{ChatSession, TraceEvent, run_turn};
pub use machine::{Action, Reply, Session, SessionError, Step};
pub use parser::{ParsedReply, ToolCall, find_calls, parse_reply};
pub use prompt::PromptBuilder;
