//! The Porfiry tool loop for small models (seed 000) — mechanism only:
//! skills (knowledge read on demand, [`skills`]), toolsets (tools switched on
//! per session for 10 minutes, [`tools`]), and one chat session
//! ([`session`]): the prompt builder, the `TOOL_CALL: name|args` parser, the
//! dispatcher, and the chat loop as a sans-IO [`Session`] with a thin async
//! driver over [`Llm`]. Concrete toolsets (the node's `media` set) live with
//! their users.
//!
//! Pure logic: time comes in through [`Clock`] / [`ZonedTime`], the model
//! through [`Llm`]; the only IO is reading skill files. The toolset registry
//! does not depend on chat, so the HMP cognitive core dispatches through the
//! same [`ToolsetRegistry`]. See `docs/skills.md`.

pub mod clock;
pub mod cognition;
pub mod grammar;
pub mod limits;
pub mod llm;
pub mod session;
pub mod skills;
pub mod texts;
pub mod tools;

pub use clock::{Clock, ManualClock, SystemClock, ZonedTime};
pub use llm::{
    BoxFuture, ChatMessage, Completion, Delta, DeltaStream, Llm, LlmError, ModelRequest, Role,
    Usage,
};
pub use session::{
    Action, Activation, ChatSession, DEFAULT_TOOL_TIMEOUT, Outcome, ParsedReply, PromptBuilder,
    Reply, ResultKind, Session, SessionError, Step, StreamGate, ToolCall, ToolRun, TraceEvent,
    TurnIo, dispatch, find_calls, parse_reply, run_turn,
};
pub use skills::{Skill, SkillError, SkillLoad, SkillOrigin, SkillRegistry, SkillRepository};
pub use texts::Language;
pub use tools::{
    ArgKind, ArgSpec, Args, ArgsError, CallContext, Caller, ClientEvent, LoopConfig, PrepareError,
    Prepared, RegistryError, Route, ToolEffect, ToolOutput, ToolSpec, Toolbox, Toolset,
    ToolsetRegistry, bind, bind_json,
};
