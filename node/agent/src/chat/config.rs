//! What a chat engine is built from: the model, the language, the media
//! catalogue, the user's skill folder and the loop's limits.

use std::path::PathBuf;
use std::time::Duration;

use porfiry_skills::limits::{DEFAULT_TOOLSET_IDLE_MS, MAX_TOOL_ROUNDS};
use porfiry_skills::llm::budgets::DEFAULT_CHAT_REPLY_MAX_TOKENS;
use porfiry_skills::{Language, LoopConfig};

use crate::llm::LlmTarget;
use porfiry_toolsets::{CatalogSource, ToolsetOptions};

/// A user message longer than this is refused: 16,000 characters is about
/// 4,000 tokens, half of a small model's 8k context; longer text crowds out
/// the prompt and the history and belongs in a file a tool reads.
pub const MAX_USER_MESSAGE_CHARS: usize = 16_000;

/// Settings of a chat engine; every session it makes shares them.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatConfig {
    /// The model (unused by [`super::ChatEngine::with_llm`], which brings its own).
    pub llm: LlmTarget,
    /// The language of every text the model sees.
    pub language: Language,
    /// The `media` toolset's films.
    pub media_catalog: CatalogSource,
    /// The user's skills (`<data-dir>/skills`); `None`: built-in skills only.
    pub skills_dir: Option<PathBuf>,
    /// How long a toolset stays active after its last use (seed §5: 10 min).
    pub toolset_idle: Duration,
    /// Tool rounds allowed per user turn.
    pub max_tool_rounds: u32,
    /// The most tokens one model reply may have.
    pub reply_max_tokens: u32,
    /// Whether each request carries its reply's grammar, which a backend
    /// that can constrain decoding applies (`--constrained`, see
    /// [`crate::llm::constrained`]).
    pub constrained: bool,
    /// Whether the prompt shows worked examples after the preamble.
    pub worked_examples: bool,
}

impl ChatConfig {
    /// English, the sample catalogue, built-in skills, the seed's limits.
    pub fn new(llm: LlmTarget) -> Self {
        Self {
            llm,
            language: Language::En,
            media_catalog: CatalogSource::Sample,
            skills_dir: None,
            toolset_idle: Duration::from_millis(DEFAULT_TOOLSET_IDLE_MS),
            max_tool_rounds: MAX_TOOL_ROUNDS,
            reply_max_tokens: DEFAULT_CHAT_REPLY_MAX_TOKENS,
            constrained: false,
            worked_examples: false,
        }
    }

    /// The tool loop's settings.
    pub fn loop_config(&self) -> LoopConfig {
        LoopConfig {
            language: self.language,
            toolset_idle_ms: u64::try_from(self.toolset_idle.as_millis()).unwrap_or(u64::MAX),
            max_tool_rounds: self.max_tool_rounds,
            reply_max_tokens: self.reply_max_tokens,
            constrained: self.constrained,
            worked_examples: self.worked_examples,
        }
    }

    /// What the node's toolsets are built from.
    pub fn toolset_options(&self) -> ToolsetOptions {
        ToolsetOptions {
            language: self.language,
            media_catalog: self.media_catalog.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_seed_and_carry_into_the_loop() {
        let c = ChatConfig::new(LlmTarget::new("http://h/v1", "m"));
        let l = c.loop_config();
        assert_eq!(l.toolset_idle_ms, 10 * 60 * 1000);
        assert_eq!(l.max_tool_rounds, MAX_TOOL_ROUNDS);
        assert_eq!(l.language, Language::En);
        assert_eq!(l.reply_max_tokens, 512);
        assert!(!l.constrained);
        let c = ChatConfig {
            toolset_idle: Duration::from_secs(3),
            language: Language::Ru,
            reply_max_tokens: 64,
            constrained: true,
            ..c
        };
        assert_eq!(c.loop_config().toolset_idle_ms, 3_000);
        assert_eq!(c.loop_config().reply_max_tokens, 64);
        assert!(c.loop_config().constrained);
        assert_eq!(c.toolset_options().language, Language::Ru);
        let huge = ChatConfig {
            toolset_idle: Duration::MAX,
            ..c
        };
        assert_eq!(huge.loop_config().toolset_idle_ms, u64::MAX);
    }
}
