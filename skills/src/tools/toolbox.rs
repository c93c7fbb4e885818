//! The toolbox: what every session of a node shares — the toolset registry,
//! the skill registry, the pre-rendered prompt parts and the loop settings.
//! Build it once (or again after reloading skills) and share it in an `Arc`.

use crate::limits::{DEFAULT_TOOLSET_IDLE_MS, MAX_TOOL_ROUNDS};
use crate::llm::budgets::DEFAULT_CHAT_REPLY_MAX_TOKENS;
use crate::session::prompt::PromptBuilder;
use crate::skills::registry::SkillRegistry;
use crate::texts::Language;
use crate::tools::context::CallContext;
use crate::tools::prepared::{PrepareError, Prepared};
use crate::tools::registry::ToolsetRegistry;
use crate::tools::toolset::ToolOutput;

/// Settings of the chat loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopConfig {
    /// The language of every model-visible text.
    pub language: Language,
    /// How long a set stays active after its last use (seed §5: 10 min).
    pub toolset_idle_ms: u64,
    /// Tool rounds allowed per user turn before the user is told we stopped.
    pub max_tool_rounds: u32,
    /// The most tokens one model reply may have (every round of a turn).
    pub reply_max_tokens: u32,
    /// Whether each request carries the reply's grammar
    /// ([`crate::ModelRequest::grammar`], built from the same state as the
    /// prompt), which a backend that can constrain decoding applies.
    pub constrained: bool,
    /// Whether the prompt shows worked examples after the preamble (a
    /// cheap remedy for small models; `docs/benchmarks.md` measures it).
    pub worked_examples: bool,
}

impl Default for LoopConfig {
    fn default() -> Self {
        Self {
            language: Language::En,
            toolset_idle_ms: DEFAULT_TOOLSET_IDLE_MS,
            max_tool_rounds: MAX_TOOL_ROUNDS,
            reply_max_tokens: DEFAULT_CHAT_REPLY_MAX_TOKENS,
            constrained: false,
            worked_examples: false,
        }
    }
}

impl LoopConfig {
    /// Defaults in `language`.
    pub fn in_language(language: Language) -> Self {
        Self {
            language,
            ..Self::default()
        }
    }
}

/// Registries, prompt parts and settings shared by all sessions.
#[derive(Debug)]
pub struct Toolbox {
    toolsets: ToolsetRegistry,
    skills: SkillRegistry,
    prompt: PromptBuilder,
    config: LoopConfig,
}

impl Toolbox {
    /// Builds the toolbox and renders the fixed prompt parts. The toolsets
    /// must already speak `config.language`.
    pub fn new(toolsets: ToolsetRegistry, skills: SkillRegistry, config: LoopConfig) -> Self {
        let mut prompt = PromptBuilder::new(config.language, &toolsets, &skills);
        if config.worked_examples {
            prompt = prompt.with_worked_examples();
        }
        Self {
            toolsets,
            skills,
            prompt,
            config,
        }
    }

    /// The toolsets.
    pub fn toolsets(&self) -> &ToolsetRegistry {
        &self.toolsets
    }

    /// The skills.
    pub fn skills(&self) -> &SkillRegistry {
        &self.skills
    }

    /// The prompt builder.
    pub fn prompt(&self) -> &PromptBuilder {
        &self.prompt
    }

    /// The settings.
    pub fn config(&self) -> &LoopConfig {
        &self.config
    }

    /// The language.
    pub fn language(&self) -> Language {
        self.config.language
    }

    /// Routes `tool` to its set and binds `raw_args` (positional `a|b` or a
    /// JSON object by name): the one path every caller of toolset tools
    /// takes (the chat dispatcher through `Step::RunTool`, the core directly).
    pub fn prepare(&self, tool: &str, raw_args: &str) -> Result<Prepared, PrepareError> {
        self.toolsets.prepare(tool, raw_args)
    }

    /// [`Toolbox::prepare`], then runs the call. No deadline: callers that
    /// need one wrap it (the chat driver does).
    pub async fn invoke(
        &self,
        tool: &str,
        raw_args: &str,
        ctx: &CallContext,
    ) -> Result<ToolOutput, PrepareError> {
        let prepared = self.prepare(tool, raw_args)?;
        Ok(prepared.run(ctx).await)
    }
}
