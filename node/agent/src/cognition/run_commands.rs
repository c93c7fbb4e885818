//! Running a validated command (seed §7) through the node's toolset
//! registry — the same one chat uses — with the core as the caller
//! (`Caller::Core{tick}`), a deadline per call, and the core's own `help`
//! command, which lists the command sets or one set's commands.

use std::sync::Arc;

use porfiry_skills::cognition::commands::Command;
use porfiry_skills::cognition::tick::{RunResult, raw_args};
use porfiry_skills::{
    CallContext, Caller, DEFAULT_TOOL_TIMEOUT, Language, PrepareError, ToolsetRegistry, ZonedTime,
};

use crate::cognition::limits::CORE_SESSION;
use crate::cognition::texts;
use porfiry_skills::cognition::tick::HELP_COMMAND;

/// Runs the core's commands.
pub struct CommandRunner {
    registry: Arc<ToolsetRegistry>,
    language: Language,
}

impl CommandRunner {
    /// A runner over `registry`.
    pub fn new(registry: Arc<ToolsetRegistry>, language: Language) -> Self {
        Self { registry, language }
    }

    /// The registry it runs through.
    pub fn registry(&self) -> &ToolsetRegistry {
        &self.registry
    }

    /// Runs one command of tick `tick`; a command that cannot bind or runs
    /// out of time is a failed result saying why.
    pub async fn run(&self, command: &Command, tick: u64, now: ZonedTime) -> RunResult {
        if is_help(&command.tool) {
            return RunResult {
                ok: true,
                output: self.help(&raw_args(command)),
            };
        }
        let prepared = match self.registry.prepare(&command.tool, &raw_args(command)) {
            Ok(p) => p,
            Err(e) => {
                return RunResult {
                    ok: false,
                    output: prepare_error(&e),
                };
            }
        };
        let ctx = CallContext::new(CORE_SESSION, Caller::Core { tick }, now, self.language);
        match tokio::time::timeout(DEFAULT_TOOL_TIMEOUT, prepared.run(&ctx)).await {
            Ok(out) => RunResult {
                ok: out.ok,
                output: out.text,
            },
            Err(_) => RunResult {
                ok: false,
                output: format!(
                    "{} did not finish within {} s",
                    command.tool,
                    DEFAULT_TOOL_TIMEOUT.as_secs()
                ),
            },
        }
    }

    /// `help`, `help SET` or `help TOOL`.
    pub fn help(&self, args: &str) -> String {
        let what = help_topic(args);
        if what.is_empty() {
            return texts::help_index(self.language, &catalogue_lines(&self.registry));
        }
        if let Some(set) = self.registry.get(&what) {
            return set
                .tools()
                .iter()
                .map(|t| t.prompt_line())
                .collect::<Vec<_>>()
                .join("\n");
        }
        if let Some(set) = self.registry.set_of(&what)
            && let Some(tool) = set.tools().iter().find(|t| t.name == what)
        {
            return tool.prompt_line();
        }
        texts::help_unknown(self.language, &what)
    }
}

/// The topic of a help call: `diary`, `{"command":"diary"}`, `"diary_add"`.
fn help_topic(args: &str) -> String {
    let args = args.trim();
    if let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(args) {
        return map
            .values()
            .find_map(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
    }
    args.trim_matches(|c| c == '"' || c == '\'')
        .trim()
        .to_ascii_lowercase()
}

/// Context 0's catalogue: one line per command set, `diary — cognitive
/// diary: …` (its heading says how `help` shows a set's commands).
pub fn catalogue_lines(registry: &ToolsetRegistry) -> Vec<String> {
    registry
        .sets()
        .map(|set| format!("{} — {}", set.name(), set.summary()))
        .collect()
}

/// Why a command could not be prepared, for process_log.
fn prepare_error(e: &PrepareError) -> String {
    format!("{e}; `help` lists the command sets")
}

/// `help` is the core's own command; the registry has no set for it.
pub fn is_help(tool: &str) -> bool {
    tool == HELP_COMMAND
}
