//! `llm_task` and `llm_ask`: using other registry models.
//!
//! `llm_task` hands a task to a model in the background: a `process_log`
//! row named `llm_task` (running: see [`super::jobs`]) gets the answer as its
//! result — or the error, or `timeout` past the deadline — and the core is
//! told with `ProcessFinished`. `llm_ask` asks several models the same
//! question at once and waits (one deadline for all) for a multi-voice
//! answer: one line per voice, silent or failing voices said so.

use std::sync::Arc;

use porfiry_skills::llm::budgets::LLM_JOB_MAX_TOKENS;
use porfiry_skills::llm::{ChatMessage, Llm, ModelRequest};
use porfiry_skills::{CallContext, Language, ToolOutput};
use porfiry_storage::{ListQuery, LlmEntry, ProcessStatus, Stored};
use tokio::time::{Instant, timeout_at};

use super::common::{cut_chars, db_failed, read, write};
use super::jobs::{Started, finish, running_row};
use super::llm_tools::{
    LLM_TASK, LlmToolset, MAX_ASK_VOICES, MAX_TASK_ANSWER_CHARS, MAX_VOICE_CHARS,
};
use super::texts;

/// How one voice of `llm_ask` ended.
enum Voice {
    Answer(String),
    Failed(String),
    Silent,
}

impl LlmToolset {
    /// `llm_task|target_llm|task_description`.
    pub(super) async fn task(&self, name: &str, task: &str, ctx: &CallContext) -> ToolOutput {
        let lang = ctx.language;
        let entry = match self.entry(name, lang).await {
            Ok(e) => e,
            Err(out) => return out,
        };
        let model = match self.models.model(&entry.row) {
            Ok(m) => m,
            Err(e) => {
                return ToolOutput::failed(texts::llm_model_unusable(lang, name, &e.to_string()));
            }
        };
        let Ok(permit) = self.slots.clone().try_acquire_owned() else {
            return ToolOutput::failed(texts::llm_task_busy(lang, self.limits.max_tasks));
        };
        let started = Started::at(ctx.now.unix_ms());
        let command = serde_json::json!({
            "type": LLM_TASK,
            "target_llm": entry.row.name,
            "args": { "task_description": task },
        });
        let row = running_row(LLM_TASK, command, Some(entry.row.name.clone()));
        let id = match write(&self.tools.db, move |s| s.add(&row, started.at_ms)).await {
            Ok(id) => id,
            Err(e) => return db_failed(lang, &e),
        };
        let stop = self.jobs.insert(id);
        let request = ModelRequest::new(
            texts::llm_task_system(lang).to_owned(),
            vec![ChatMessage::user(task)],
            Some(LLM_JOB_MAX_TOKENS),
        );
        let (tools, jobs, deadline) = (
            self.tools.clone(),
            self.jobs.clone(),
            self.limits.task_deadline,
        );
        tokio::spawn(async move {
            let (status, result) = tokio::select! {
                answer = tokio::time::timeout(deadline, model.complete(&request)) => match answer {
                    Ok(Ok(c)) => (ProcessStatus::Ok, cut_chars(&c.text, MAX_TASK_ANSWER_CHARS)),
                    Ok(Err(e)) if e.is_unreachable() => {
                        (ProcessStatus::Offline, texts::llm_task_failed(lang, &e.to_string()))
                    }
                    Ok(Err(e)) => (ProcessStatus::Error, texts::llm_task_failed(lang, &e.to_string())),
                    Err(_) => (ProcessStatus::Timeout, texts::llm_task_timed_out(lang, deadline.as_secs())),
                },
                Ok(()) = stop => (ProcessStatus::Close, texts::process_stopped(lang).to_owned()),
            };
            drop(permit);
            finish(&tools, &jobs, id, status, result, started).await;
        });
        ToolOutput::ok(texts::llm_task_started(lang, id, &entry.row.name))
    }

    /// `llm_ask|models|question`: `models` is `all` or names separated by commas.
    pub(super) async fn ask(&self, models: &str, question: &str, ctx: &CallContext) -> ToolOutput {
        let lang = ctx.language;
        let entries = match self.voices(models, lang).await {
            Ok(e) => e,
            Err(out) => return out,
        };
        let skipped = entries.len().saturating_sub(MAX_ASK_VOICES);
        let deadline = Instant::now() + self.limits.ask_deadline;
        let request = ModelRequest::new(
            texts::llm_ask_system(lang).to_owned(),
            vec![ChatMessage::user(question)],
            Some(LLM_JOB_MAX_TOKENS),
        );
        let asks = entries.iter().take(MAX_ASK_VOICES).map(|e| {
            let model = self.models.model(&e.row);
            let request = &request;
            async move {
                let model: Arc<dyn Llm> = match model {
                    Ok(m) => m,
                    Err(e) => return Voice::Failed(e.to_string()),
                };
                match timeout_at(deadline, model.complete(request)).await {
                    Ok(Ok(c)) => Voice::Answer(c.text),
                    Ok(Err(e)) => Voice::Failed(e.to_string()),
                    Err(_) => Voice::Silent,
                }
            }
        });
        let voices = futures::future::join_all(asks).await;
        let mut answered = false;
        let mut lines = Vec::with_capacity(voices.len() + 1);
        for (entry, voice) in entries.iter().zip(voices) {
            let name = &entry.row.name;
            lines.push(match voice {
                Voice::Answer(text) => {
                    answered = true;
                    let text = cut_chars(
                        &text.split_whitespace().collect::<Vec<_>>().join(" "),
                        MAX_VOICE_CHARS,
                    );
                    format!("{name}: {text}")
                }
                Voice::Failed(e) => {
                    texts::llm_voice_failed(lang, name, &cut_chars(&e, MAX_VOICE_CHARS))
                }
                Voice::Silent => {
                    texts::llm_voice_silent(lang, name, self.limits.ask_deadline.as_secs())
                }
            });
        }
        if skipped > 0 {
            lines.push(texts::llm_ask_skipped(lang, skipped, MAX_ASK_VOICES));
        }
        let text = lines.join("\n");
        if answered {
            ToolOutput::ok(text)
        } else {
            ToolOutput::failed(text)
        }
    }

    /// The rows `models` names (`all`: every row, by name); unknown names
    /// are refused, naming them.
    async fn voices(
        &self,
        models: &str,
        lang: Language,
    ) -> Result<Vec<Stored<LlmEntry>>, ToolOutput> {
        let names = super::cycle_parse::parse_list(models);
        let all = names.is_empty() || (names.len() == 1 && names[0].eq_ignore_ascii_case("all"));
        let found = read(&self.tools.db, move |s| {
            if all {
                let mut rows = s.list::<LlmEntry>(&ListQuery::recent(
                    porfiry_storage::limits::MAX_LIST_LIMIT,
                ))?;
                rows.sort_by(|a, b| a.row.name.cmp(&b.row.name));
                return Ok((rows, Vec::new()));
            }
            let mut rows = Vec::new();
            let mut unknown = Vec::new();
            for name in names {
                match s.llm_by_name(&name)? {
                    Some(row) => rows.push(row),
                    None => unknown.push(name),
                }
            }
            Ok((rows, unknown))
        })
        .await;
        match found {
            Ok((_, unknown)) if !unknown.is_empty() => Err(ToolOutput::failed(texts::llm_no_name(
                lang,
                &unknown.join(", "),
            ))),
            Ok((rows, _)) if rows.is_empty() => Err(ToolOutput::failed(texts::llm_none(lang))),
            Ok((rows, _)) => Ok(rows),
            Err(e) => Err(db_failed(lang, &e)),
        }
    }
}
