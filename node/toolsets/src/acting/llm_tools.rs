//! The `llm` set (seed 003 § "llm_registry", "постановка задачи другой
//! LLM"): list the known models (never a key), select the main one, tune a
//! model's temperature and presence_penalty, hand a task to another model in
//! the background (`llm_task`, [`super::llm_jobs`]) and ask several models
//! the same question at once (`llm_ask`).

use std::sync::Arc;
use std::time::Duration;

use porfiry_skills::{ArgSpec, Args, CallContext, Language, ToolEffect, ToolOutput, ToolSpec};
use porfiry_storage::{ListQuery, LlmEntry, MAX_PRESENCE_PENALTY, MAX_TEMPERATURE, Stored};
use tokio::sync::Semaphore;

use super::common::{bounded, db_failed, read, write};
use super::jobs::Jobs;
use super::texts;
use crate::StoreTools;
use crate::dispatch::{run_toolset, unknown_tool};
use crate::models::RowModels;

/// The set's name and its tools' prefix.
pub const LLM: &str = "llm";
/// `llm_list`.
pub const LLM_LIST: &str = "llm_list";
/// `llm_select|name`.
pub const LLM_SELECT: &str = "llm_select";
/// `llm_update|name|setting|value`.
pub const LLM_UPDATE: &str = "llm_update";
/// `llm_task|target_llm|task_description` (the seed's example's names).
pub const LLM_TASK: &str = "llm_task";
/// `llm_ask|models|question`.
pub const LLM_ASK: &str = "llm_ask";

/// `llm_list` shows at most this many models.
pub const MAX_LLM_LIST_LINES: usize = 20;

/// An `llm_task` may run ten minutes: it runs in the background, so a small
/// model on a phone may write a long answer; past that it is stuck.
pub const LLM_TASK_DEADLINE: Duration = Duration::from_secs(600);

/// `llm_ask` waits 15 s for its voices: the call itself waits, and the chat
/// driver drops a tool call after 20 s (`DEFAULT_TOOL_TIMEOUT`); a voice
/// that has not answered by then is reported as silent.
pub const LLM_ASK_DEADLINE: Duration = Duration::from_secs(15);

/// Two background model tasks at once: each holds a model (maybe a friend's
/// slot); more would queue behind each other anyway.
pub const MAX_LLM_TASKS: usize = 2;

/// `llm_ask` asks at most four models: four voices fit a small context.
pub const MAX_ASK_VOICES: usize = 4;

/// Characters of each voice in the `llm_ask` reply.
pub const MAX_VOICE_CHARS: usize = 500;

/// Characters of a task's answer kept in `process_log.result`: about 1,000
/// tokens, so one result cannot crowd context 2.
pub const MAX_TASK_ANSWER_CHARS: usize = 4_000;

/// The deadlines and bounds of `llm_task` and `llm_ask`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LlmJobLimits {
    /// One task's deadline.
    pub task_deadline: Duration,
    /// The deadline of one `llm_ask`, for every voice together.
    pub ask_deadline: Duration,
    /// Tasks running at once.
    pub max_tasks: usize,
}

impl Default for LlmJobLimits {
    fn default() -> Self {
        Self {
            task_deadline: LLM_TASK_DEADLINE,
            ask_deadline: LLM_ASK_DEADLINE,
            max_tasks: MAX_LLM_TASKS,
        }
    }
}

/// Lists, selects, tunes and uses the registry's models.
pub struct LlmToolset {
    pub(super) tools: StoreTools,
    pub(super) jobs: Arc<Jobs>,
    pub(super) models: Arc<dyn RowModels>,
    pub(super) limits: LlmJobLimits,
    pub(super) slots: Arc<Semaphore>,
    specs: Vec<ToolSpec>,
}

impl LlmToolset {
    /// The set over `tools`, building models with `models`, sharing `jobs`
    /// with the `process` set.
    pub fn new(
        tools: StoreTools,
        jobs: Arc<Jobs>,
        models: Arc<dyn RowModels>,
        limits: LlmJobLimits,
    ) -> Self {
        let lang = tools.language;
        let specs = vec![
            ToolSpec::new(
                LLM_LIST,
                texts::llm_list_desc(lang),
                vec![],
                ToolEffect::Read,
            ),
            ToolSpec::new(
                LLM_SELECT,
                texts::llm_select_desc(lang),
                vec![ArgSpec::word("name")],
                ToolEffect::Write,
            ),
            ToolSpec::new(
                LLM_UPDATE,
                texts::llm_update_desc(lang),
                vec![
                    ArgSpec::word("name"),
                    ArgSpec::choice("setting", &["temperature", "presence_penalty"]),
                    ArgSpec::word("value"),
                ],
                ToolEffect::Write,
            ),
            ToolSpec::new(
                LLM_TASK,
                texts::llm_task_desc(lang),
                vec![
                    ArgSpec::word("target_llm"),
                    ArgSpec::text("task_description"),
                ],
                ToolEffect::Network,
            ),
            ToolSpec::new(
                LLM_ASK,
                texts::llm_ask_desc(lang),
                vec![ArgSpec::text("models"), ArgSpec::text("question")],
                ToolEffect::Network,
            ),
        ];
        Self {
            slots: Arc::new(Semaphore::new(limits.max_tasks)),
            tools,
            jobs,
            models,
            limits,
            specs,
        }
    }

    /// The registry row named `name`: `Err` is the reply to give.
    pub(super) async fn entry(
        &self,
        name: &str,
        lang: Language,
    ) -> Result<Stored<LlmEntry>, ToolOutput> {
        let owned = name.to_owned();
        match read(&self.tools.db, move |s| s.llm_by_name(&owned)).await {
            Ok(Some(e)) => Ok(e),
            Ok(None) => Err(ToolOutput::failed(texts::llm_no_name(lang, name))),
            Err(e) => Err(db_failed(lang, &e)),
        }
    }

    async fn list(&self, lang: Language) -> ToolOutput {
        let limit = u32::try_from(MAX_LLM_LIST_LINES).unwrap_or(u32::MAX);
        let rows = read(&self.tools.db, move |s| {
            let total = s.count::<LlmEntry>()?;
            let query = ListQuery {
                oldest_first: true,
                ..ListQuery::recent(limit)
            };
            Ok((s.list::<LlmEntry>(&query)?, total))
        })
        .await;
        let (rows, total) = match rows {
            Ok(r) => r,
            Err(e) => return db_failed(lang, &e),
        };
        if rows.is_empty() {
            return ToolOutput::ok(texts::llm_none(lang));
        }
        let lines = rows.iter().map(|r| list_line(&r.row)).collect();
        let total = usize::try_from(total).unwrap_or(usize::MAX);
        ToolOutput::ok(bounded(lang, lines, MAX_LLM_LIST_LINES, total))
    }

    async fn select(&self, name: &str, ctx: &CallContext) -> ToolOutput {
        let lang = ctx.language;
        let entry = match self.entry(name, lang).await {
            Ok(e) => e,
            Err(out) => return out,
        };
        let (id, now) = (entry.id, ctx.now.unix_ms());
        match write(&self.tools.db, move |s| s.llm_select_main(id, now)).await {
            Ok(()) => ToolOutput::ok(texts::llm_selected(lang, &entry.row.name)),
            Err(e) => db_failed(lang, &e),
        }
    }

    async fn update(
        &self,
        name: &str,
        setting: &str,
        value: &str,
        ctx: &CallContext,
    ) -> ToolOutput {
        let lang = ctx.language;
        let (min, max) = match setting {
            "temperature" => (0.0, MAX_TEMPERATURE),
            _ => (-MAX_PRESENCE_PENALTY, MAX_PRESENCE_PENALTY),
        };
        let new = if ["default", "reset", "none"].contains(&value.to_ascii_lowercase().as_str()) {
            None
        } else {
            match value.replace(',', ".").parse::<f64>() {
                Ok(v) if v.is_finite() && (min..=max).contains(&v) => Some(v),
                _ => {
                    return ToolOutput::failed(texts::llm_bad_value(
                        lang, setting, value, min, max,
                    ));
                }
            }
        };
        let mut entry = match self.entry(name, lang).await {
            Ok(e) => e,
            Err(out) => return out,
        };
        if setting == "temperature" {
            entry.row.config.temperature = new;
        } else {
            entry.row.config.presence_penalty = new;
        }
        let (id, row, now) = (entry.id, entry.row.clone(), ctx.now.unix_ms());
        match write(&self.tools.db, move |s| s.update(id, &row, now)).await {
            Ok(()) => {
                let shown = new.map_or_else(
                    || texts::llm_default_value(lang).to_owned(),
                    |v| v.to_string(),
                );
                ToolOutput::ok(texts::llm_updated(lang, &entry.row.name, setting, &shown))
            }
            Err(e) => db_failed(lang, &e),
        }
    }

    async fn run(&self, tool: &str, args: &Args, ctx: &CallContext) -> ToolOutput {
        match tool {
            LLM_LIST => self.list(ctx.language).await,
            LLM_SELECT => self.select(args.text("name"), ctx).await,
            LLM_UPDATE => {
                self.update(
                    args.text("name"),
                    args.text("setting"),
                    args.text("value"),
                    ctx,
                )
                .await
            }
            LLM_TASK => {
                self.task(args.text("target_llm"), args.text("task_description"), ctx)
                    .await
            }
            LLM_ASK => {
                self.ask(args.text("models"), args.text("question"), ctx)
                    .await
            }
            other => ToolOutput::failed(unknown_tool(ctx.language, other, LLM, &self.specs)),
        }
    }
}

/// `name — model @ endpoint [main, validator] temperature=0.7`: never the
/// key, nor its variable, nor a URL's password or query.
fn list_line(e: &LlmEntry) -> String {
    let mut line = format!("{} — {} @ {}", e.name, e.model, safe_endpoint(&e.endpoint));
    let marks: Vec<&str> = [(e.is_main, "main"), (e.is_validator, "validator")]
        .iter()
        .filter_map(|(on, mark)| on.then_some(*mark))
        .collect();
    if !marks.is_empty() {
        line.push_str(&format!(" [{}]", marks.join(", ")));
    }
    if let Some(t) = e.config.temperature {
        line.push_str(&format!(" temperature={t}"));
    }
    if let Some(p) = e.config.presence_penalty {
        line.push_str(&format!(" presence_penalty={p}"));
    }
    line
}

/// A URL without user, password, query or fragment (where keys hide); a
/// peer id as it is.
fn safe_endpoint(endpoint: &str) -> String {
    match reqwest::Url::parse(endpoint) {
        Ok(mut url) if url.has_host() => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.set_query(None);
            url.set_fragment(None);
            url.to_string()
        }
        _ => endpoint.to_owned(),
    }
}

run_toolset!(LlmToolset, LLM, texts::llm_summary, tools);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_endpoint_never_shows_credentials() {
        assert_eq!(
            safe_endpoint("https://user:sk-secret@api.example.com/v1?key=sk-2#x"),
            "https://api.example.com/v1"
        );
        assert_eq!(safe_endpoint("12D3KooWabc"), "12D3KooWabc");
    }
}
