//! One chat session of the tool loop: the sans-IO state machine
//! ([`Session`]), the `TOOL_CALL` parser, the prompt builder, the dispatcher,
//! per-session toolset activation, the [`StreamGate`] that decides what of a
//! streamed reply may be shown, and the thin async driver ([`run_turn`],
//! [`ChatSession`]) that runs a turn against an [`crate::Llm`] and the tools.

pub mod activation;
pub mod dispatcher;
pub mod driver;
pub mod machine;
pub mod parser;
pub mod prompt;
pub mod stream_gate;

pub use activation::Activation;
pub use dispatcher::{Outcome, ResultKind, dispatch};
pub use driver::{ChatSession, DEFAULT_TOOL_TIMEOUT, TraceEvent, TurnIo, run_turn};
pub use machine::{Action, Reply, Session, SessionError, Step, ToolRun};
pub use parser::{ParsedReply, ToolCall, find_calls, parse_reply};
pub use prompt::PromptBuilder;
pub use stream_gate::StreamGate;
