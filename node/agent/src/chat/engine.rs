//! The chat engine: what every chat session of a node shares — the toolbox
//! (toolsets, skills, rendered prompt parts), the model and the clock. Build
//! it once per process; [`ChatEngine::session`] opens independent sessions.

use std::sync::Arc;

use porfiry_skills::{Clock, Llm, SkillError, SkillRepository, Toolbox};

use super::clock::local_clock;
use super::config::ChatConfig;
use super::session::ChatSession;
use crate::llm::{LlmError, OpenAiClient};
use porfiry_toolsets::{ToolsetError, node_toolsets};

/// Why a chat engine could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ChatError {
    /// The model settings are unusable (bad base URL, temperature).
    #[error(transparent)]
    Client(#[from] LlmError),
    /// A toolset could not be built (an unusable media catalogue).
    #[error(transparent)]
    Toolsets(#[from] ToolsetError),
}

/// Toolbox, model and clock shared by sessions.
pub struct ChatEngine {
    toolbox: Arc<Toolbox>,
    llm: Arc<dyn Llm>,
    clock: Arc<dyn Clock>,
    skipped_skills: Vec<SkillError>,
}

impl ChatEngine {
    /// An engine talking to the OpenAI-compatible server of `config.llm`.
    pub fn new(config: &ChatConfig) -> Result<Self, ChatError> {
        let llm = OpenAiClient::new(config.llm.clone())?;
        Self::with_llm(config, Arc::new(llm))
    }

    /// An engine over any model (an on-device one in a phone app, a scripted
    /// one in tests); `config.llm` is not used. The clock is the local wall
    /// clock ([`local_clock`]: UTC when the process already runs several
    /// threads and the offset cannot be read); see [`ChatEngine::with_clock`].
    pub fn with_llm(config: &ChatConfig, llm: Arc<dyn Llm>) -> Result<Self, ChatError> {
        let toolsets = node_toolsets(&config.toolset_options())?;
        Self::with_toolsets(config, llm, toolsets)
    }

    /// An engine over `llm` whose sessions may switch on `toolsets` (the
    /// node's whole registry in `porfiry run`, shared with the cognitive
    /// core); `config.llm` is not used.
    pub fn with_toolsets(
        config: &ChatConfig,
        llm: Arc<dyn Llm>,
        toolsets: porfiry_skills::ToolsetRegistry,
    ) -> Result<Self, ChatError> {
        let mut repository = SkillRepository::new(config.language);
        if let Some(dir) = &config.skills_dir {
            repository = repository.with_user_dir(dir);
        }
        let load = repository.load();
        let toolbox = Toolbox::new(toolsets, load.registry, config.loop_config());
        Ok(Self {
            toolbox: Arc::new(toolbox),
            llm,
            clock: Arc::new(local_clock()),
            skipped_skills: load.skipped,
        })
    }

    /// Replaces the clock (tests pass a `ManualClock` to move time by hand).
    /// Sessions opened earlier keep the clock they had.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// A new session: empty history, no active toolsets. Sessions share
    /// nothing but the engine's toolbox, model and clock.
    pub fn session(&self) -> ChatSession {
        ChatSession::new(self.toolbox.clone(), self.llm.clone(), self.clock.clone())
    }

    /// The shared toolbox.
    pub fn toolbox(&self) -> &Arc<Toolbox> {
        &self.toolbox
    }

    /// The model.
    pub fn llm(&self) -> &Arc<dyn Llm> {
        &self.llm
    }

    /// The clock sessions read "now" from.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Skill files that were skipped, each with its cause (also logged).
    pub fn skipped_skills(&self) -> &[SkillError] {
        &self.skipped_skills
    }
}
