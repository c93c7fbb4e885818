//! The toolbox: what every session of a node shares — the toolset registry,
//! the skill registry, the pre-rendered prompt parts and the loop settings.
//! Build it once (or again after reloading skills) and share it in an `Arc`.

use crate::limits::{DEFAULT_TOOLSET_IDLE_MS, MAX_TOOL_ROUNDS};
use crate::session::prompt::PromptBuilder;
use crate::skills::registry::SkillRegistry;
use crate::texts::Language;
use crate::tools::registry::ToolsetRegistry;

/// Settings of the chat loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopConfig {
    /// The language of every model-visible text.
    pub language: Language,
    /// How long a set stays active after its last use (seed §5: 10 min).
    pub toolset_idle_ms: u64,
    /// Tool rounds allowed per user turn before the user is told we stopped.
    pub max_tool_rounds: u32,
}

impl Default for LoopConfig {
    fn default() -> Self {
        Self {
            language: Language::En,
            toolset_idle_ms: DEFAULT_TOOLSET_IDLE_MS,
            max_tool_rounds: MAX_TOOL_ROUNDS,
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
        let prompt = PromptBuilder::new(config.language, &toolsets, &skills);
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
}
