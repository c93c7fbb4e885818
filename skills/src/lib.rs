//! The Porfiry tool loop for small models (seed 000): skills (knowledge read
//! on demand), toolsets (tools switched on per session for 10 minutes), the
//! prompt builder, the `TOOL_CALL: name|args` parser, the dispatcher, and the
//! chat loop as a sans-IO [`Session`] with a thin async driver over [`Llm`].
//!
//! Pure logic: time comes in through [`Clock`] / [`ZonedTime`], the model
//! through [`Llm`]; the only IO is reading skill files. The toolset registry
//! does not depend on chat, so the HMP cognitive core dispatches through the
//! same [`ToolsetRegistry`]. See `docs/skills.md`.

pub mod activation;
pub mod args;
pub mod clock;
pub mod core_tools;
pub mod dispatcher;
pub mod driver;
pub mod limits;
pub mod llm;
pub mod media;
pub mod parser;
pub mod prompt;
pub mod session;
pub mod skill;
pub mod skill_registry;
pub mod skill_repository;
pub mod texts;
pub mod toolbox;
pub mod toolset;
pub mod toolset_registry;

pub use activation::Activation;
pub use args::{ArgKind, ArgSpec, Args, ArgsError};
pub use clock::{Clock, ManualClock, SystemClock, ZonedTime};
pub use dispatcher::{Outcome, ResultKind, dispatch};
pub use driver::{ChatSession, TraceEvent, run_turn};
pub use llm::{ChatMessage, Llm, LlmError, ModelRequest, Role};
pub use media::{MediaEntry, MediaToolset};
pub use parser::{ParsedReply, ToolCall, find_calls, parse_reply};
pub use prompt::PromptBuilder;
pub use session::{Action, Reply, Session, SessionError, Step};
pub use skill::{Skill, SkillError, SkillOrigin};
pub use skill_registry::SkillRegistry;
pub use skill_repository::{SkillLoad, SkillRepository};
pub use texts::Language;
pub use toolbox::{LoopConfig, Toolbox};
pub use toolset::{ClientEvent, ToolOutput, ToolSpec, Toolset};
pub use toolset_registry::{Invocation, RegistryError, Route, ToolsetRegistry};
