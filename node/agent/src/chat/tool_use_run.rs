//! Runs tool-use cases ([`super::tool_use`]) against a model: each request
//! in a fresh session of the API's agent — its six sets over the given
//! database, its built-in skills, in the case's language — with every model
//! reply of the turn scored; the Markdown table, the totals and the JSON
//! report `porfiry model score` prints. The command and the real-model
//! tests share it.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Arc;
use std::time::{Duration, Instant};

use porfiry_mesh::events::CoreEvents;
use porfiry_skills::{Language, Llm, Toolbox, TraceEvent};
use porfiry_storage::db::Db;
use serde::Serialize;

use crate::chat::tool_use::{ToolUseCase, TurnScore, score};
use crate::chat::{ChatConfig, ChatEngine, ChatError};
use crate::llm::registry_models::RegistryModels;
use porfiry_toolsets::{CHAT_SETS, StoreTools, ToolsetOptions, core_toolsets};

/// The agent the set runs against, in one language.
pub struct ToolUseRun {
    engine: ChatEngine,
}

/// One request's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseResult {
    /// Every model reply of the turn, raw, in order.
    pub replies: Vec<String>,
    /// Their score.
    pub score: TurnScore,
    /// The model call that failed, if one did (the turn ended there).
    pub error: Option<String>,
    /// How long the turn took.
    pub elapsed: Duration,
    /// Prompt tokens over the turn's model calls, as the backend counted.
    pub prompt_tokens: u64,
    /// Generated tokens over the turn's model calls.
    pub completion_tokens: u64,
}

/// The sums over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Requests run.
    pub cases: usize,
    /// Of them, requests that need a tool.
    pub tool_cases: usize,
    /// Requests that need a tool and reached one of theirs.
    pub right: usize,
    /// Requests that need no tool.
    pub no_tool_cases: usize,
    /// Requests that need no tool and got no call.
    pub no_tool_ok: usize,
    /// Model replies seen.
    pub replies: usize,
    /// Of them, format-valid.
    pub valid: usize,
    /// Requests whose model call failed.
    pub failed: usize,
    /// Time of all turns together.
    pub elapsed: Duration,
    /// Prompt tokens of all turns.
    pub prompt_tokens: u64,
    /// Generated tokens of all turns.
    pub completion_tokens: u64,
}

impl ToolUseRun {
    /// The API's agent over `llm` with `config`'s settings (its language
    /// too) and the chat sets on `db` (a fresh database gives every run the
    /// same start).
    pub fn new(config: &ChatConfig, llm: Arc<dyn Llm>, db: Db) -> Result<Self, ChatError> {
        Ok(Self {
            engine: api_agent(config, llm, db)?,
        })
    }

    /// The agent's toolbox (what replies are scored against).
    pub fn toolbox(&self) -> &Arc<Toolbox> {
        self.engine.toolbox()
    }

    /// Runs `case` in a fresh session and scores its replies.
    pub async fn run_case(&self, case: &ToolUseCase) -> CaseResult {
        let mut session = self.engine.session();
        let mut replies = Vec::new();
        let started = Instant::now();
        let result = session
            .send_traced(&case.request, |e| {
                if let TraceEvent::ModelReply(text) = e {
                    replies.push(text.to_owned());
                }
            })
            .await;
        let elapsed = started.elapsed();
        let usage = result.as_ref().ok().and_then(|r| r.usage);
        CaseResult {
            score: score(self.toolbox(), case, &replies),
            replies,
            error: result.err().map(|e| e.to_string()),
            elapsed,
            prompt_tokens: usage.map_or(0, |u| u.prompt_tokens),
            completion_tokens: usage.map_or(0, |u| u.completion_tokens),
        }
    }
}

/// The API's agent over `llm` with `config`'s settings and the chat sets on
/// `db`: what `porfiry run` serves, what scoring and teaching run through.
pub fn api_agent(config: &ChatConfig, llm: Arc<dyn Llm>, db: Db) -> Result<ChatEngine, ChatError> {
    let tools = StoreTools {
        db,
        language: config.language,
        events: CoreEvents::new(),
        node: None,
    };
    let options = ToolsetOptions {
        language: config.language,
        ..ToolsetOptions::default()
    };
    let registry = core_toolsets(&options, &tools, Arc::new(RegistryModels::new(None)))?;
    ChatEngine::with_toolsets(config, llm, registry.only(CHAT_SETS))
}

/// One agent per language, made when a case first needs it, all over one
/// model and one database.
pub struct ToolUseRuns {
    config: ChatConfig,
    llm: Arc<dyn Llm>,
    db: Db,
    runs: HashMap<Language, ToolUseRun>,
}

impl ToolUseRuns {
    /// Agents like `config` (its language is replaced by each case's).
    pub fn new(config: ChatConfig, llm: Arc<dyn Llm>, db: Db) -> Self {
        Self {
            config,
            llm,
            db,
            runs: HashMap::new(),
        }
    }

    /// The agent of `language`.
    pub fn agent(&mut self, language: Language) -> Result<&ToolUseRun, ChatError> {
        match self.runs.entry(language) {
            Entry::Occupied(run) => Ok(run.into_mut()),
            Entry::Vacant(slot) => {
                let config = ChatConfig {
                    language,
                    ..self.config.clone()
                };
                let run = ToolUseRun::new(&config, self.llm.clone(), self.db.clone())?;
                Ok(slot.insert(run))
            }
        }
    }

    /// Runs `case` with the agent of its language.
    pub async fn run_case(&mut self, case: &ToolUseCase) -> Result<CaseResult, ChatError> {
        Ok(self.agent(case.language)?.run_case(case).await)
    }
}

impl Totals {
    /// Adds one request's outcome.
    pub fn add(&mut self, case: &ToolUseCase, result: &CaseResult) {
        self.cases += 1;
        if case.needs_tool() {
            self.tool_cases += 1;
            self.right += usize::from(result.score.right_tool);
        } else {
            self.no_tool_cases += 1;
            self.no_tool_ok += usize::from(result.score.no_tool_ok);
        }
        self.replies += result.score.replies;
        self.valid += result.score.valid;
        self.failed += usize::from(result.error.is_some());
        self.elapsed += result.elapsed;
        self.prompt_tokens += result.prompt_tokens;
        self.completion_tokens += result.completion_tokens;
    }

    /// `format-valid 30/31 replies (97 %), right tool 5/32 requests (16 %), …`.
    pub fn summary(&self) -> String {
        format!(
            "format-valid {}/{} replies ({:.0} %), right tool {}/{} requests ({:.0} %), \
             no-tool precision {}/{} ({:.0} %), {} model errors, {} prompt + {} generated \
             tokens, {:.0} s in all",
            self.valid,
            self.replies,
            percent(self.valid, self.replies),
            self.right,
            self.tool_cases,
            percent(self.right, self.tool_cases),
            self.no_tool_ok,
            self.no_tool_cases,
            percent(self.no_tool_ok, self.no_tool_cases),
            self.failed,
            self.prompt_tokens,
            self.completion_tokens,
            self.elapsed.as_secs_f64()
        )
    }
}

/// The table's two header lines.
pub const TABLE_HEADER: &str = "| # | lang | request | expected | called | replies | valid | right | s |\n\
                                |---|---|---|---|---|---|---|---|---|";

/// One table row for request number `n`.
pub fn table_row(n: usize, case: &ToolUseCase, result: &CaseResult) -> String {
    let expected = if case.needs_tool() {
        case.expected.join(" / ")
    } else {
        "(none)".to_owned()
    };
    if let Some(e) = &result.error {
        return format!(
            "| {n} | {} | {} | {expected} | model error: {e} | | | | |",
            case.language, case.request
        );
    }
    format!(
        "| {n} | {} | {} | {expected} | {} | {} | {} | {} | {:.1} |",
        case.language,
        case.request,
        result.score.called.join(", "),
        result.score.replies,
        result.score.valid,
        if result.score.right(case) {
            "yes"
        } else {
            "no"
        },
        result.elapsed.as_secs_f64()
    )
}

/// `porfiry model score --json`: the totals and every case.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ScoreReport {
    /// What was scored (the model's label).
    pub model: String,
    /// Requests run.
    pub cases: usize,
    /// Of them, requests that need a tool.
    pub tool_cases: usize,
    /// Requests that need a tool and reached one of theirs.
    pub right_tool: usize,
    /// Requests that need no tool.
    pub no_tool_cases: usize,
    /// Requests that need none and got no call.
    pub no_tool_ok: usize,
    /// Model replies seen.
    pub replies: usize,
    /// Of them, format-valid.
    pub format_valid: usize,
    /// Requests whose model call failed.
    pub model_errors: usize,
    /// Prompt tokens of all turns.
    pub prompt_tokens: u64,
    /// Generated tokens of all turns.
    pub completion_tokens: u64,
    /// Seconds of all turns.
    pub seconds: f64,
    /// Each request.
    pub results: Vec<CaseReport>,
}

/// One request in the report.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CaseReport {
    /// What the person said.
    pub request: String,
    /// Its language.
    pub language: Language,
    /// The tools that answer it (empty: none needed).
    pub expected: Vec<String>,
    /// The tools the turn called.
    pub called: Vec<String>,
    /// Whether the turn did what the case asks.
    pub right: bool,
    /// The raw model replies.
    pub replies: Vec<String>,
    /// The failed model call, if one failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Seconds the turn took.
    pub seconds: f64,
}

impl ScoreReport {
    /// The report of `model` over the run's cases and results, in order.
    pub fn new(model: &str, outcomes: &[(ToolUseCase, CaseResult)]) -> Self {
        let mut totals = Totals::default();
        for (case, result) in outcomes {
            totals.add(case, result);
        }
        Self {
            model: model.to_owned(),
            cases: totals.cases,
            tool_cases: totals.tool_cases,
            right_tool: totals.right,
            no_tool_cases: totals.no_tool_cases,
            no_tool_ok: totals.no_tool_ok,
            replies: totals.replies,
            format_valid: totals.valid,
            model_errors: totals.failed,
            prompt_tokens: totals.prompt_tokens,
            completion_tokens: totals.completion_tokens,
            seconds: totals.elapsed.as_secs_f64(),
            results: outcomes
                .iter()
                .map(|(case, r)| CaseReport {
                    request: case.request.clone(),
                    language: case.language,
                    expected: case.expected.clone(),
                    called: r.score.called.clone(),
                    right: r.score.right(case),
                    replies: r.replies.clone(),
                    error: r.error.clone(),
                    seconds: r.elapsed.as_secs_f64(),
                })
                .collect(),
        }
    }
}

fn percent(part: usize, whole: usize) -> f64 {
    100.0 * part as f64 / whole.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::tool_use::builtin_cases;

    fn result(replies: usize, valid: usize, called: &[&str], error: bool) -> CaseResult {
        CaseResult {
            replies: vec![String::new(); replies],
            score: TurnScore {
                replies,
                valid,
                called: called.iter().map(|c| (*c).to_owned()).collect(),
                right_tool: called.contains(&"get_current_time"),
                no_tool_ok: called.is_empty() && !error,
            },
            error: error.then(|| "down".to_owned()),
            elapsed: Duration::from_millis(1500),
            prompt_tokens: 100,
            completion_tokens: 10,
        }
    }

    fn time() -> ToolUseCase {
        ToolUseCase::new("What time is it now?", &["get_current_time"], Language::En)
    }

    fn hello() -> ToolUseCase {
        ToolUseCase::new("Hello!", &[], Language::En)
    }

    #[test]
    fn totals_sum_the_cases_and_the_summary_gives_every_rate() {
        let mut totals = Totals::default();
        totals.add(&time(), &result(2, 2, &["get_current_time"], false));
        totals.add(&time(), &result(2, 1, &[], false));
        totals.add(&time(), &result(0, 0, &[], true));
        totals.add(&hello(), &result(1, 1, &[], false));
        assert_eq!(
            totals,
            Totals {
                cases: 4,
                tool_cases: 3,
                right: 1,
                no_tool_cases: 1,
                no_tool_ok: 1,
                replies: 5,
                valid: 4,
                failed: 1,
                elapsed: Duration::from_millis(6000),
                prompt_tokens: 400,
                completion_tokens: 40,
            }
        );
        assert_eq!(
            totals.summary(),
            "format-valid 4/5 replies (80 %), right tool 1/3 requests (33 %), no-tool \
             precision 1/1 (100 %), 1 model errors, 400 prompt + 40 generated tokens, 6 s in all"
        );
    }

    #[test]
    fn rows_show_the_score_or_the_error_and_the_report_keeps_every_case() {
        let case = &builtin_cases(None)[0];
        let ok = result(1, 1, &["get_current_time"], false);
        assert_eq!(
            table_row(1, case, &ok),
            "| 1 | en | What time is it now? | get_current_time | get_current_time | 1 | 1 | yes | 1.5 |"
        );
        assert_eq!(
            table_row(1, case, &result(0, 0, &[], true)),
            "| 1 | en | What time is it now? | get_current_time | model error: down | | | | |"
        );
        assert_eq!(
            table_row(2, &hello(), &result(1, 1, &[], false)),
            "| 2 | en | Hello! | (none) |  | 1 | 1 | yes | 1.5 |"
        );
        assert_eq!(TABLE_HEADER.lines().count(), 2);

        let report = ScoreReport::new(
            "m",
            &[
                (case.clone(), ok),
                (hello(), result(1, 1, &["show_text"], false)),
            ],
        );
        let json = serde_json::to_value(&report).unwrap();
        for (key, want) in [
            ("cases", 2),
            ("tool_cases", 1),
            ("right_tool", 1),
            ("no_tool_cases", 1),
            ("no_tool_ok", 0),
            ("replies", 2),
            ("format_valid", 2),
        ] {
            assert_eq!(json[key], want, "{key}");
        }
        assert_eq!(json["results"][1]["called"][0], "show_text");
        assert_eq!(json["results"][1]["right"], false);
        assert_eq!(json["results"][0]["expected"][0], "get_current_time");
        assert_eq!(json["results"][0]["request"], "What time is it now?");
    }
}
