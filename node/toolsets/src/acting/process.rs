//! The `process` set (seed 003 § "Внешние процессы"): list, start, stop,
//! mark and clean up `process_log`. `process_start` runs only programs named
//! in the config allow-list [`PROCESS_ALLOW_KEY`] (empty by default, so a
//! fresh node runs nothing), as argv without a shell, bounded by
//! [`ProcessLimits`]; the run itself is [`super::process_run`], the row's
//! running state is described in [`super::jobs`]. `process_fetch` gets a
//! page or a feed under the URL allow-list ([`super::fetch`]) the same way:
//! a running row whose result is the readable text.

use std::sync::Arc;

use porfiry_skills::{ArgSpec, Args, CallContext, Language, ToolEffect, ToolOutput, ToolSpec};
use porfiry_storage::{ProcessEntry, ProcessStatus, StorageError, Stored};
use tokio::sync::Semaphore;

use super::common::{bounded, cut_chars, db_failed, read, write};
use super::fetch::{self, FetchError, PROCESS_ALLOW_URLS_KEY};
use super::jobs::{Jobs, RUNNING_STATUS, Started, finish, running_row};
use super::process_run::{self, ProcessLimits};
use super::texts;
use crate::StoreTools;
use crate::dispatch::{run_toolset, unknown_tool};

/// The set's name and its tools' prefix.
pub const PROCESS: &str = "process";
/// `process_list|[which(open/all)]`.
pub const PROCESS_LIST: &str = "process_list";
/// `process_start|command`.
pub const PROCESS_START: &str = "process_start";
/// `process_fetch|url`.
pub const PROCESS_FETCH: &str = "process_fetch";
/// `process_stop|id`.
pub const PROCESS_STOP: &str = "process_stop";
/// `process_mark|id|status`.
pub const PROCESS_MARK: &str = "process_mark";
/// `process_cleanup|[older_than_secs]`.
pub const PROCESS_CLEANUP: &str = "process_cleanup";

/// The config key of the allow-list: a JSON array of program names
/// (`["echo", "curl"]`); a command runs only when its program is one of
/// them, written exactly the same.
pub const PROCESS_ALLOW_KEY: &str = "process.allow";

/// `process_list` shows at most this many rows: enough to pick ids from,
/// short enough for a small model's context.
pub const MAX_PROCESS_LIST_LINES: usize = 20;

/// Characters of a result shown per `process_list` line; `process_log`
/// keeps it whole.
pub const PROCESS_LINE_RESULT_CHARS: usize = 120;

/// Lists, starts, stops, marks and cleans up processes.
pub struct ProcessToolset {
    tools: StoreTools,
    jobs: Arc<Jobs>,
    limits: ProcessLimits,
    slots: Arc<Semaphore>,
    specs: Vec<ToolSpec>,
}

impl ProcessToolset {
    /// The set over `tools`, sharing `jobs` with the `llm` set.
    pub fn new(tools: StoreTools, jobs: Arc<Jobs>, limits: ProcessLimits) -> Self {
        let lang = tools.language;
        let statuses: Vec<&str> = ProcessStatus::ALL.iter().map(|s| s.as_str()).collect();
        let specs = vec![
            ToolSpec::new(
                PROCESS_LIST,
                texts::process_list_desc(lang),
                vec![ArgSpec::choice("which", &["open", "all"]).optional()],
                ToolEffect::Read,
            ),
            ToolSpec::new(
                PROCESS_START,
                texts::process_start_desc(lang),
                vec![ArgSpec::text("command")],
                ToolEffect::Network,
            ),
            ToolSpec::new(
                PROCESS_FETCH,
                texts::process_fetch_desc(lang),
                vec![ArgSpec::text("url")],
                ToolEffect::Network,
            ),
            ToolSpec::new(
                PROCESS_STOP,
                texts::process_stop_desc(lang),
                vec![ArgSpec::int("id")],
                ToolEffect::Network,
            ),
            ToolSpec::new(
                PROCESS_MARK,
                texts::process_mark_desc(lang),
                vec![ArgSpec::int("id"), ArgSpec::choice("status", &statuses)],
                ToolEffect::Write,
            ),
            ToolSpec::new(
                PROCESS_CLEANUP,
                texts::process_cleanup_desc(lang),
                vec![ArgSpec::int("older_than_secs").optional()],
                ToolEffect::Write,
            ),
        ];
        Self {
            slots: Arc::new(Semaphore::new(limits.max_running)),
            tools,
            jobs,
            limits,
            specs,
        }
    }

    async fn list(&self, all: bool, ctx: &CallContext) -> ToolOutput {
        let lang = ctx.language;
        let rows = read(&self.tools.db, move |s| {
            if all {
                let total = s.count::<ProcessEntry>()?;
                let limit = u32::try_from(MAX_PROCESS_LIST_LINES).unwrap_or(u32::MAX);
                let rows = s.list::<ProcessEntry>(&porfiry_storage::ListQuery::recent(limit))?;
                Ok((rows, usize::try_from(total).unwrap_or(usize::MAX)))
            } else {
                // Oldest first from storage; the newest matter most.
                let mut rows = s.processes_open()?;
                let total = rows.len();
                rows.reverse();
                Ok((rows, total))
            }
        })
        .await;
        let (rows, total) = match rows {
            Ok(r) => r,
            Err(e) => return db_failed(lang, &e),
        };
        if rows.is_empty() {
            return ToolOutput::ok(texts::process_none(lang));
        }
        let lines = rows.iter().map(|r| line(lang, r)).collect();
        ToolOutput::ok(bounded(lang, lines, MAX_PROCESS_LIST_LINES, total))
    }

    async fn start(&self, command: &str, ctx: &CallContext) -> ToolOutput {
        let lang = ctx.language;
        let argv = match shlex::split(command) {
            Some(argv) if !argv.is_empty() => argv,
            _ => return ToolOutput::failed(texts::process_bad_command(lang, command)),
        };
        let allowed = read(&self.tools.db, |s| {
            s.config_get::<Vec<String>>(PROCESS_ALLOW_KEY)
        })
        .await;
        let allowed = match allowed {
            Ok(list) => list.unwrap_or_default(),
            Err(e) => return db_failed(lang, &e),
        };
        let program = &argv[0];
        if allowed.is_empty() {
            return ToolOutput::failed(texts::process_allow_empty(lang, PROCESS_ALLOW_KEY));
        }
        if !allowed.iter().any(|a| a == program) {
            return ToolOutput::failed(texts::process_not_allowed(
                lang,
                program,
                &allowed.join(", "),
                PROCESS_ALLOW_KEY,
            ));
        }
        let Ok(permit) = self.slots.clone().try_acquire_owned() else {
            return ToolOutput::failed(texts::process_busy(lang, self.limits.max_running));
        };
        let started = Started::at(ctx.now.unix_ms());
        let row = running_row(
            program,
            serde_json::json!({ "type": PROCESS_START, "command": command, "argv": argv }),
            None,
        );
        let id = match write(&self.tools.db, move |s| s.add(&row, started.at_ms)).await {
            Ok(id) => id,
            Err(e) => return db_failed(lang, &e),
        };
        let stop = self.jobs.insert(id);
        let child = match process_run::spawn(&argv) {
            Ok(child) => child,
            Err(e) => {
                let why = texts::process_spawn_failed(lang, program, &e.to_string());
                finish(
                    &self.tools,
                    &self.jobs,
                    id,
                    ProcessStatus::Error,
                    why.clone(),
                    started,
                )
                .await;
                return ToolOutput::failed(why);
            }
        };
        let (tools, jobs, limits) = (self.tools.clone(), self.jobs.clone(), self.limits);
        tokio::spawn(async move {
            let ended = process_run::run(child, limits, stop, lang).await;
            // The slot frees before the core hears of the end, so a start
            // in answer to the event finds it free.
            drop(permit);
            finish(&tools, &jobs, id, ended.status, ended.result, started).await;
        });
        ToolOutput::ok(texts::process_started(lang, id, program))
    }

    async fn fetch(&self, url: &str, ctx: &CallContext) -> ToolOutput {
        let lang = ctx.language;
        let allowed = read(&self.tools.db, |s| {
            s.config_get::<Vec<String>>(PROCESS_ALLOW_URLS_KEY)
        })
        .await;
        let allowed = match allowed {
            Ok(list) => list.unwrap_or_default(),
            Err(e) => return db_failed(lang, &e),
        };
        if allowed.is_empty() {
            return ToolOutput::failed(texts::fetch_allow_empty(lang, PROCESS_ALLOW_URLS_KEY));
        }
        let parsed = match fetch::parse_url(url) {
            Ok(u) => u,
            Err(FetchError::BadUrl { why, .. }) => {
                return ToolOutput::failed(texts::fetch_bad_url(lang, url, &why));
            }
            Err(e) => return ToolOutput::failed(texts::fetch_failed(lang, &e.to_string())),
        };
        if !fetch::allowed(&parsed, &allowed) {
            return ToolOutput::failed(texts::fetch_not_allowed(
                lang,
                parsed.as_str(),
                &allowed.join(", "),
                PROCESS_ALLOW_URLS_KEY,
            ));
        }
        let Ok(permit) = self.slots.clone().try_acquire_owned() else {
            return ToolOutput::failed(texts::process_busy(lang, self.limits.max_running));
        };
        let started = Started::at(ctx.now.unix_ms());
        let url = parsed.to_string();
        let host = parsed.host_str().unwrap_or("fetch").to_owned();
        let row = running_row(
            &host,
            serde_json::json!({ "type": PROCESS_FETCH, "command": url, "url": url }),
            None,
        );
        let id = match write(&self.tools.db, move |s| s.add(&row, started.at_ms)).await {
            Ok(id) => id,
            Err(e) => return db_failed(lang, &e),
        };
        let stop = self.jobs.insert(id);
        let (tools, jobs, target) = (self.tools.clone(), self.jobs.clone(), url.clone());
        tokio::spawn(async move {
            let (status, result) = tokio::select! {
                got = fetch::fetch(&target, allowed) => match got {
                    Ok(f) if f.cut => (
                        ProcessStatus::Ok,
                        format!("{}\n{}", f.text, texts::fetch_cut(lang, fetch::MAX_FETCH_BYTES)),
                    ),
                    Ok(f) => (ProcessStatus::Ok, f.text),
                    Err(e @ fetch::FetchError::Unreachable { .. }) => {
                        (ProcessStatus::Offline, texts::fetch_failed(lang, &e.to_string()))
                    }
                    Err(e) => (ProcessStatus::Error, texts::fetch_failed(lang, &e.to_string())),
                },
                // A dropped sender (the toolset gone) is not a stop request.
                Ok(()) = stop => (ProcessStatus::Close, texts::process_stopped(lang).to_owned()),
            };
            drop(permit);
            finish(&tools, &jobs, id, status, result, started).await;
        });
        ToolOutput::ok(texts::fetch_started(lang, id, &url))
    }

    fn stop(&self, id: i64, lang: Language) -> ToolOutput {
        if self.jobs.stop(id) {
            ToolOutput::ok(texts::process_stopping(lang, id))
        } else {
            ToolOutput::failed(texts::process_not_running(lang, id))
        }
    }

    async fn mark(&self, id: i64, status: &str, ctx: &CallContext) -> ToolOutput {
        let lang = ctx.language;
        let Ok(status) = status.parse::<ProcessStatus>() else {
            // The registry checked the choice; answer anyway.
            return ToolOutput::failed(texts::process_bad_status(lang, status));
        };
        if self.jobs.is_running(id) {
            return ToolOutput::failed(texts::process_mark_running(lang, id));
        }
        let now = ctx.now.unix_ms();
        let done = write(&self.tools.db, move |s| match s.get::<ProcessEntry>(id) {
            Err(StorageError::NotFound { .. }) => Ok(false),
            Err(e) => Err(e),
            Ok(_) => s.process_set_status(id, status, now).map(|()| true),
        })
        .await;
        match done {
            Ok(true) => ToolOutput::ok(texts::process_marked(lang, id, status.as_str())),
            Ok(false) => ToolOutput::failed(texts::process_no_id(lang, id)),
            Err(e) => db_failed(lang, &e),
        }
    }

    async fn cleanup(&self, older_than_secs: Option<i64>, ctx: &CallContext) -> ToolOutput {
        let lang = ctx.language;
        let before = match older_than_secs {
            None => None,
            Some(secs) if secs >= 0 => {
                let ms = u64::try_from(secs).unwrap_or(0).saturating_mul(1_000);
                Some(ctx.now.unix_ms().saturating_sub(ms))
            }
            Some(secs) => return ToolOutput::failed(texts::process_bad_age(lang, secs)),
        };
        match write(&self.tools.db, move |s| s.processes_cleanup(before)).await {
            Ok(n) => ToolOutput::ok(texts::process_cleaned(lang, n)),
            Err(e) => db_failed(lang, &e),
        }
    }

    async fn run(&self, tool: &str, args: &Args, ctx: &CallContext) -> ToolOutput {
        let id = || args.int("id").unwrap_or(0);
        match tool {
            PROCESS_LIST => self.list(args.get("which") == Some("all"), ctx).await,
            PROCESS_START => self.start(args.text("command"), ctx).await,
            PROCESS_FETCH => self.fetch(args.text("url"), ctx).await,
            PROCESS_STOP => self.stop(id(), ctx.language),
            PROCESS_MARK => self.mark(id(), args.text("status"), ctx).await,
            PROCESS_CLEANUP => self.cleanup(args.int("older_than_secs"), ctx).await,
            other => ToolOutput::failed(unknown_tool(ctx.language, other, PROCESS, &self.specs)),
        }
    }
}

/// `#12 echo hi — ok: exit 0…` (a running job shows as running).
fn line(lang: Language, r: &Stored<ProcessEntry>) -> String {
    let label = match &r.row.command {
        serde_json::Value::Object(m) => m
            .get("command")
            .and_then(|c| c.as_str())
            .unwrap_or(&r.row.name)
            .to_owned(),
        _ => r.row.name.clone(),
    };
    // A model task names its model: `llm_task helper`.
    let label = match &r.row.llm_id {
        Some(model) => format!("{label} {model}"),
        None => label,
    };
    match (&r.row.result, r.row.status) {
        (None, RUNNING_STATUS) => {
            format!("#{} {label} — {}", r.id, texts::process_running(lang))
        }
        (None, status) => format!("#{} {label} — {status}", r.id),
        (Some(result), status) => {
            let result = cut_chars(&result.replace('\n', " "), PROCESS_LINE_RESULT_CHARS);
            format!("#{} {label} — {status}: {result}", r.id)
        }
    }
}

run_toolset!(ProcessToolset, PROCESS, texts::process_summary, tools);
