//! Running a validated command (seed §7) through the node's toolset
//! registry — the same one chat uses — with the core as the caller
//! (`Caller::Core{tick}`), a deadline per call, and the core's own commands:
//! `help`, which lists the command sets or one set's commands, and
//! `mesh_interact`, a question to friends ([`crate::cognition::mesh_interact`]).

use std::sync::Arc;

use porfiry_skills::cognition::commands::Command;
use porfiry_skills::cognition::tick::{RunResult, raw_args};
use porfiry_skills::{
    CallContext, Caller, DEFAULT_TOOL_TIMEOUT, Language, PrepareError, ToolsetRegistry, ZonedTime,
};

use crate::cognition::asker::FriendsAsker;
use crate::cognition::limits::CORE_SESSION;
use crate::cognition::mesh_interact::{MAX_QUESTION_CHARS, question_row};
use crate::cognition::texts;
use porfiry_skills::cognition::tick::{HELP_COMMAND, MESH_INTERACT_COMMAND};
use porfiry_storage::Store;
use porfiry_storage::db::Db;

/// Runs the core's commands.
pub struct CommandRunner {
    registry: Arc<ToolsetRegistry>,
    language: Language,
    mesh: Option<MeshAccess>,
}

/// What `mesh_interact` needs: where to open its process row, and who posts
/// the question to friends (none: the command says friends are out of reach).
struct MeshAccess {
    db: Db,
    asker: Option<Arc<dyn FriendsAsker>>,
}

impl CommandRunner {
    /// A runner over `registry`.
    pub fn new(registry: Arc<ToolsetRegistry>, language: Language) -> Self {
        Self {
            registry,
            language,
            mesh: None,
        }
    }

    /// The runner with `mesh_interact` on `db`, asking through `asker`.
    pub fn with_mesh(mut self, db: Db, asker: Option<Arc<dyn FriendsAsker>>) -> Self {
        self.mesh = Some(MeshAccess { db, asker });
        self
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
        if command.tool == MESH_INTERACT_COMMAND {
            return self.mesh_interact(&raw_args(command), now).await;
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

    /// `mesh_interact|question`: posts the question to friends and opens
    /// the process row their answers will fill.
    async fn mesh_interact(&self, args: &str, now: ZonedTime) -> RunResult {
        let lang = self.language;
        let failed = |output: String| RunResult { ok: false, output };
        let question = help_topic_text(args);
        if question.is_empty() || question.chars().count() > MAX_QUESTION_CHARS {
            return failed(texts::mesh_bad_question(lang, MAX_QUESTION_CHARS));
        }
        let Some(mesh) = &self.mesh else {
            return failed(texts::mesh_unreachable(lang, "no mesh in this run"));
        };
        let Some(asker) = &mesh.asker else {
            return failed(texts::mesh_unreachable(lang, "no way to post to friends"));
        };
        let note = match asker.ask(question.clone()).await {
            Ok(id) => id,
            Err(e) => return failed(texts::mesh_unreachable(lang, &e)),
        };
        let row = question_row(&question, note);
        let at = now.unix_ms();
        match mesh.db.write(move |s: &Store| s.add(&row, at)).await {
            Ok(Ok(process)) => RunResult {
                ok: true,
                output: texts::mesh_asked(lang, note, process),
            },
            Ok(Err(e)) => failed(e.to_string()),
            Err(e) => failed(e.to_string()),
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
    help_topic_text(args).to_ascii_lowercase()
}

/// The one text argument of a core command: the line as written, or the
/// first string of a JSON object (`{"question": "…"}`), quotes trimmed.
fn help_topic_text(args: &str) -> String {
    let args = args.trim();
    if let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(args) {
        return map
            .values()
            .find_map(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
            .trim()
            .to_owned();
    }
    args.trim_matches(|c| c == '"' || c == '\'')
        .trim()
        .to_owned()
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
