//! Runs the tool-use set ([`super::tool_use`]) against a model: each request
//! in a fresh session of the API's agent — its six sets over the given
//! database, its built-in skills — with every model reply of the turn
//! scored, and the Markdown table rows and totals `docs/benchmarks.md`
//! shows. The bench program and the real-model tests share it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use porfiry_mesh::events::CoreEvents;
use porfiry_skills::{Llm, Toolbox, TraceEvent};
use porfiry_storage::db::Db;

use crate::chat::tool_use::{ToolUseCase, TurnScore, score};
use crate::chat::{ChatConfig, ChatEngine, ChatError};
use crate::llm::registry_models::RegistryModels;
use porfiry_toolsets::{CHAT_SETS, StoreTools, ToolsetOptions, core_toolsets};

/// The agent the set runs against.
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
}

/// The sums over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Requests run.
    pub cases: usize,
    /// Model replies seen.
    pub replies: usize,
    /// Of them, format-valid.
    pub valid: usize,
    /// Requests whose turn called an expected tool.
    pub right: usize,
    /// Requests whose model call failed.
    pub failed: usize,
    /// Time of all turns together.
    pub elapsed: Duration,
}

impl ToolUseRun {
    /// The API's agent over `llm` with `config`'s settings and the chat sets
    /// on `db` (a fresh database gives every run the same start).
    pub fn new(config: &ChatConfig, llm: Arc<dyn Llm>, db: Db) -> Result<Self, ChatError> {
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
        let engine = ChatEngine::with_toolsets(config, llm, registry.only(CHAT_SETS))?;
        Ok(Self { engine })
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
            .send_traced(case.request, |e| {
                if let TraceEvent::ModelReply(text) = e {
                    replies.push(text.to_owned());
                }
            })
            .await;
        let elapsed = started.elapsed();
        CaseResult {
            score: score(self.toolbox(), case, &replies),
            replies,
            error: result.err().map(|e| e.to_string()),
            elapsed,
        }
    }
}

impl Totals {
    /// Adds one request's outcome.
    pub fn add(&mut self, result: &CaseResult) {
        self.cases += 1;
        self.replies += result.score.replies;
        self.valid += result.score.valid;
        self.right += usize::from(result.score.right_tool);
        self.failed += usize::from(result.error.is_some());
        self.elapsed += result.elapsed;
    }

    /// `format-valid 30/31 replies (97 %), right tool 5/32 requests (16 %), …`.
    pub fn summary(&self) -> String {
        format!(
            "format-valid {}/{} replies ({:.0} %), right tool {}/{} requests ({:.0} %), \
             {} model errors, {:.0} s in all",
            self.valid,
            self.replies,
            percent(self.valid, self.replies),
            self.right,
            self.cases,
            percent(self.right, self.cases),
            self.failed,
            self.elapsed.as_secs_f64()
        )
    }
}

/// The table's two header lines.
pub const TABLE_HEADER: &str = "| # | request | expected | replies | valid | right tool | s |\n\
                                |---|---|---|---|---|---|---|";

/// One table row for request number `n`.
pub fn table_row(n: usize, case: &ToolUseCase, result: &CaseResult) -> String {
    if let Some(e) = &result.error {
        return format!("| {n} | {} | model error: {e} | | | | |", case.request);
    }
    format!(
        "| {n} | {} | {} | {} | {} | {} | {:.1} |",
        case.request,
        case.expected.join(" / "),
        result.score.replies,
        result.score.valid,
        if result.score.right_tool { "yes" } else { "no" },
        result.elapsed.as_secs_f64()
    )
}

fn percent(part: usize, whole: usize) -> f64 {
    100.0 * part as f64 / whole.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::tool_use::TOOL_USE_CASES;

    fn result(replies: usize, valid: usize, right: bool, error: bool) -> CaseResult {
        CaseResult {
            replies: vec![String::new(); replies],
            score: TurnScore {
                replies,
                valid,
                right_tool: right,
            },
            error: error.then(|| "down".to_owned()),
            elapsed: Duration::from_millis(1500),
        }
    }

    #[test]
    fn totals_sum_the_cases_and_the_summary_gives_both_rates() {
        let mut totals = Totals::default();
        totals.add(&result(2, 2, true, false));
        totals.add(&result(2, 1, false, false));
        totals.add(&result(0, 0, false, true));
        assert_eq!(
            totals,
            Totals {
                cases: 3,
                replies: 4,
                valid: 3,
                right: 1,
                failed: 1,
                elapsed: Duration::from_millis(4500),
            }
        );
        assert_eq!(
            totals.summary(),
            "format-valid 3/4 replies (75 %), right tool 1/3 requests (33 %), 1 model errors, \
             4 s in all"
        );
        assert_eq!(
            Totals::default().summary().split(',').next(),
            Some("format-valid 0/0 replies (0 %)")
        );
    }

    #[test]
    fn rows_show_the_score_or_the_error() {
        let case = &TOOL_USE_CASES[0];
        assert_eq!(
            table_row(1, case, &result(1, 1, true, false)),
            "| 1 | What time is it now? | get_current_time | 1 | 1 | yes | 1.5 |"
        );
        assert_eq!(
            table_row(1, case, &result(0, 0, false, true)),
            "| 1 | What time is it now? | model error: down | | | | |"
        );
        assert_eq!(TABLE_HEADER.lines().count(), 2);
    }
}
