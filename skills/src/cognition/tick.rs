//! One tick of the thinking cycle (seed 003 §3–7) as a sans-IO state
//! machine. The driver (`node/agent/src/cognition/`) loads the contexts, builds
//! the prompt and starts a [`Tick`]; then it asks [`Tick::next`] what to do,
//! does it, and hands the result back, until the tick finishes with a
//! [`TickReport`] that says everything to record:
//!
//! ```text
//! CallModel ──► model_answered ──► Reflect ──► reflected ──► Run ──► ran ──► Finish
//!      │ error                        │ repeat (identical): no calls, no commands
//!      └──────────────► Finish        └─────────────────────────────────────► Finish
//!                                  reflected: evaluated novelty 0 ──► Finish (no commands)
//! ```
//!
//! `Reflect` holds the anti-stagnation evaluations (§5: cognitive and
//! emotional, short calls without the context) and the validators'
//! questions (§6) together, so the driver runs them all at once. `Run`
//! lists only the commands whose validation reaches their effect's
//! threshold; the others are reported as not validated and never run.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::cognition::commands::{Command, CommandArgs, CommandProblem, extract_commands};
use crate::cognition::context::BuiltPrompt;
use crate::cognition::detectors::Observation;
use crate::cognition::reflex::{
    CognitiveEval, cognitive_request, emotional_request, is_repeat, lexical_similarity,
    merge_emotion_list, parse_cognitive, parse_emotions, reflection_line,
};
use crate::cognition::votes::{Thresholds, Validation, aggregate, may_run, validator_request};
use crate::llm::ModelRequest;
use crate::texts::Language;
use crate::tools::ToolEffect;

/// The name of the core's built-in help command (it has no toolset).
pub const HELP_COMMAND: &str = "help";

/// The core's built-in request to friends over the mesh (seed 003: "mesh
/// interact"); its answers land in `process_log`. Network: it leaves the node.
pub const MESH_INTERACT_COMMAND: &str = "mesh_interact";

/// What a tick starts from; the driver loads it.
#[derive(Debug, Clone)]
pub struct TickStart {
    /// The tick's number (`agent_log.tick`).
    pub tick: u64,
    /// When it started (Unix ms, the injected clock).
    pub started_ms: u64,
    /// The prompt built from contexts 0–6 under the budget.
    pub prompt: BuiltPrompt,
    /// The last stored reply, to judge novelty against.
    pub previous_reply: Option<String>,
    /// The known emotions (config), which the emotional evaluation uses.
    pub emotions: Vec<String>,
    /// Registry names of the validators.
    pub validators: Vec<String>,
    /// Registry name of the main model (self-validation is when it is the
    /// only validator).
    pub main_model: String,
    /// Validators registered under another name at the main model's
    /// endpoint and model: the main model too, for self-validation.
    pub main_aliases: Vec<String>,
    /// Least rating per effect for a command to run.
    pub thresholds: Thresholds,
    /// Every tool the registry knows, with its effect.
    pub effects: Arc<BTreeMap<String, ToolEffect>>,
    /// The language of the short prompts.
    pub language: Language,
}

/// What the driver must do next.
#[derive(Debug, Clone)]
pub enum TickStep {
    /// Ask the main model; answer with [`Tick::model_answered`].
    CallModel(ModelRequest),
    /// Run these short calls at once; answer with [`Tick::reflected`].
    Reflect(Box<Reflection>),
    /// Run these validated commands in order; answer with [`Tick::ran`].
    Run(Vec<Command>),
    /// The tick is over; record the report.
    Finish(Box<TickReport>),
}

/// The short calls of step 5 and 6, run together.
#[derive(Debug, Clone)]
pub struct Reflection {
    /// Cognitive evaluation against the previous reply (none on a first reply).
    pub cognitive: Option<ModelRequest>,
    /// Emotional evaluation.
    pub emotional: ModelRequest,
    /// One question per validator, by registry name.
    pub validators: Vec<(String, ModelRequest)>,
}

/// The answers to a [`Reflection`]: `Err` carries why a call failed.
#[derive(Debug, Clone, Default)]
pub struct ReflectionAnswers {
    /// The cognitive evaluation's answer (`None` when none was asked).
    pub cognitive: Option<Result<String, String>>,
    /// The emotional evaluation's answer.
    pub emotional: Option<Result<String, String>>,
    /// Each validator's answer, by registry name.
    pub validators: Vec<(String, Result<String, String>)>,
}

/// What became of one command of the reply.
#[derive(Debug, Clone, PartialEq)]
pub enum CommandOutcome {
    /// It ran; `ok` and the tool's reply text.
    Ran {
        /// The tool's verdict.
        ok: bool,
        /// The tool's reply.
        output: String,
    },
    /// Its rating was below its effect's threshold (and no auto_pass).
    NotValidated {
        /// The reply's rating.
        rating: f64,
        /// The threshold its effect needs.
        needed: f64,
    },
    /// No tool has this name.
    UnknownTool,
    /// The reply repeated the previous one: the reflex fired, nothing ran.
    SkippedRepeat,
}

/// One command and what became of it.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandRecord {
    /// The command as the model wrote it.
    pub command: Command,
    /// Its effect, when the tool is known.
    pub effect: Option<ToolEffect>,
    /// What happened.
    pub outcome: CommandOutcome,
}

/// A tool's result as the driver hands it back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunResult {
    /// The tool's verdict (false also when its arguments did not bind).
    pub ok: bool,
    /// Its reply, or why it could not run.
    pub output: String,
}

/// The anti-stagnation findings about the reply (step 5).
#[derive(Debug, Clone, PartialEq)]
pub struct ReflexFindings {
    /// The cognitive evaluation.
    pub evaluation: CognitiveEval,
    /// The reply's emotions, `("joy", 3)`.
    pub emotions: Vec<(String, u8)>,
    /// The known emotion list with new ones appended, when it grew.
    pub emotion_list: Option<Vec<String>>,
    /// The reflection line (seed rules).
    pub reflection: String,
}

/// Everything a tick did, for the driver to record.
#[derive(Debug, Clone)]
pub struct TickReport {
    /// The tick's number.
    pub tick: u64,
    /// Prompt tokens (the estimate the budget used).
    pub prompt_tokens: usize,
    /// What the budget cut, for the trace.
    pub cut: Vec<String>,
    /// The model's reply; `None` when the call failed.
    pub reply: Option<String>,
    /// Why the model call failed.
    pub error: Option<String>,
    /// The reply repeated the previous one (identical, or evaluated with
    /// novelty 0): record the reflex, not the reply.
    pub repeat: bool,
    /// Step 5's findings (none after an error or a repeat).
    pub reflex: Option<ReflexFindings>,
    /// Step 6's verdict (none after an error or a repeat).
    pub validation: Option<Validation>,
    /// Each command and its outcome, in the reply's order.
    pub commands: Vec<CommandRecord>,
    /// Malformed command blocks, recorded in process_log.
    pub problems: Vec<CommandProblem>,
    /// Model calls made: the main one, evaluations and validators.
    pub model_calls: u32,
    /// How long the tick took, by the injected clock.
    pub duration_ms: u64,
    /// What the stagnation detectors learn from this tick (none after an error).
    pub observation: Option<Observation>,
}

impl TickReport {
    /// Commands that ran.
    pub fn executed(&self) -> usize {
        self.commands
            .iter()
            .filter(|c| matches!(c.outcome, CommandOutcome::Ran { .. }))
            .count()
    }
}

/// Where the machine is.
#[derive(Debug)]
enum State {
    /// The main call is to be made.
    Call,
    /// Waiting for the main model.
    AwaitModel,
    /// The reflexes are to be asked.
    Reflect,
    /// Waiting for the reflexes.
    AwaitReflection,
    /// The validated commands are to be run.
    Run,
    /// Waiting for their results.
    AwaitRun,
    /// Done; the report is out.
    Finished,
}

/// One tick in progress.
#[derive(Debug)]
pub struct Tick {
    start: TickStart,
    state: State,
    report: TickReport,
    /// Indices into `report.commands` that were sent to run.
    running: Vec<usize>,
}

impl Tick {
    /// A tick about to call the main model.
    pub fn new(start: TickStart) -> Self {
        let report = TickReport {
            tick: start.tick,
            prompt_tokens: start.prompt.tokens,
            cut: start.prompt.cut.clone(),
            reply: None,
            error: None,
            repeat: false,
            reflex: None,
            validation: None,
            commands: Vec::new(),
            problems: Vec::new(),
            model_calls: 0,
            duration_ms: 0,
            observation: None,
        };
        Self {
            start,
            state: State::Call,
            report,
            running: Vec::new(),
        }
    }

    /// The tick's number.
    pub fn number(&self) -> u64 {
        self.start.tick
    }

    /// The next thing to do. Calling it again before answering repeats
    /// nothing: it says `Finish` only once the tick is over and panics
    /// never; a step asked twice is returned twice (the driver's bug, not
    /// the model's).
    pub fn next(&mut self, now_ms: u64) -> TickStep {
        match self.state {
            State::Call => {
                self.state = State::AwaitModel;
                self.report.model_calls += 1;
                TickStep::CallModel(self.start.prompt.request.clone())
            }
            State::Reflect => {
                self.state = State::AwaitReflection;
                let reflection = self.reflection();
                self.report.model_calls += u32::from(reflection.cognitive.is_some())
                    + 1
                    + reflection.validators.len() as u32;
                TickStep::Reflect(Box::new(reflection))
            }
            State::Run => {
                self.state = State::AwaitRun;
                TickStep::Run(
                    self.running
                        .iter()
                        .map(|&i| self.report.commands[i].command.clone())
                        .collect(),
                )
            }
            State::AwaitModel | State::AwaitReflection | State::AwaitRun | State::Finished => {
                self.finish(now_ms)
            }
        }
    }

    /// The main model answered (or failed: `Err` says why).
    pub fn model_answered(&mut self, answer: Result<String, String>) {
        if !matches!(self.state, State::AwaitModel) {
            return;
        }
        match answer {
            Err(error) => {
                self.report.error = Some(error);
                self.state = State::Finished;
            }
            Ok(reply) => {
                let extracted = extract_commands(&reply);
                self.report.problems = extracted.problems;
                let repeat = self
                    .start
                    .previous_reply
                    .as_deref()
                    .is_some_and(|previous| is_repeat(previous, &reply));
                self.report.repeat = repeat;
                self.report.commands = extracted
                    .commands
                    .into_iter()
                    .map(|command| CommandRecord {
                        effect: self.effect_of(&command.tool),
                        outcome: if repeat {
                            CommandOutcome::SkippedRepeat
                        } else {
                            CommandOutcome::UnknownTool
                        },
                        command,
                    })
                    .collect();
                self.report.observation = Some(Observation {
                    tick: self.start.tick,
                    reply: reply.clone(),
                    commands: self
                        .report
                        .commands
                        .iter()
                        .map(|c| c.command.tool.clone())
                        .collect(),
                    graph_growth: 0,
                    stimuli: 0,
                    novelty: if repeat { 0.0 } else { 1.0 },
                    embedding: None,
                });
                self.report.reply = Some(reply);
                self.state = if repeat {
                    State::Finished
                } else {
                    State::Reflect
                };
            }
        }
    }

    /// The reflexes answered.
    pub fn reflected(&mut self, answers: ReflectionAnswers) {
        if !matches!(self.state, State::AwaitReflection) {
            return;
        }
        let reply = self.report.reply.clone().unwrap_or_default();
        let previous = self.start.previous_reply.clone().unwrap_or_default();
        // A first reply has nothing to compare with: all of it is new, and
        // there are no refined or discarded ideas to reflect on.
        let first = self.start.previous_reply.is_none();
        let evaluation = if first {
            CognitiveEval {
                novel: true,
                novelty: Some(1.0),
                ..Default::default()
            }
        } else {
            parse_cognitive(
                answers.cognitive.as_ref().and_then(|a| a.as_deref().ok()),
                &previous,
                &reply,
            )
        };
        let emotions = parse_emotions(answers.emotional.as_ref().and_then(|a| a.as_deref().ok()));
        let merged = merge_emotion_list(&self.start.emotions, &emotions);
        let emotion_list = (merged != self.start.emotions).then_some(merged);
        let votes: Vec<(String, Result<i8, String>)> = answers
            .validators
            .into_iter()
            .map(|(name, answer)| {
                let vote = answer.and_then(|text| {
                    crate::cognition::votes::parse_vote(&text).ok_or_else(|| {
                        format!("no vote in {:?}", crate::cognition::tick::snippet(&text))
                    })
                });
                (name, vote)
            })
            .collect();
        let start = &self.start;
        let validation = aggregate(&votes, |name| {
            name == start.main_model || start.main_aliases.iter().any(|a| a == name)
        });
        if let Some(observation) = &mut self.report.observation {
            // The detectors and the strategies' ratings need a number: an
            // unjudged reply counts by its word overlap with the last one.
            observation.novelty = evaluation
                .novelty
                .unwrap_or_else(|| 1.0 - lexical_similarity(&previous, &reply));
        }
        self.report.reflex = Some(ReflexFindings {
            reflection: if first {
                String::new()
            } else {
                reflection_line(self.start.language, &evaluation)
            },
            evaluation,
            emotions,
            emotion_list,
        });
        self.running.clear();
        // Seed §5: "identical to the previous one (novelty = 0)". The
        // evaluation judging a reworded reply to hold nothing new is the
        // same reflex as a byte-identical repeat: the reply is not stored
        // again (a short record of the reflex is) and its commands do not
        // run again. A first reply is never a repeat, and neither is one
        // whose novelty was not judged: unknown is not 0.
        if !first
            && self
                .report
                .reflex
                .as_ref()
                .is_some_and(|r| r.evaluation.nothing_new())
        {
            self.report.repeat = true;
            for record in &mut self.report.commands {
                record.outcome = CommandOutcome::SkippedRepeat;
            }
            self.report.validation = Some(validation);
            self.state = State::Finished;
            return;
        }
        for (i, record) in self.report.commands.iter_mut().enumerate() {
            let Some(effect) = record.effect else {
                continue;
            };
            if may_run(&validation, effect, &self.start.thresholds) {
                self.running.push(i);
            } else {
                record.outcome = CommandOutcome::NotValidated {
                    rating: validation.rating,
                    needed: self.start.thresholds.for_effect(effect),
                };
            }
        }
        self.report.validation = Some(validation);
        self.state = if self.running.is_empty() {
            State::Finished
        } else {
            State::Run
        };
    }

    /// The commands ran; one result per command of [`TickStep::Run`], in
    /// order (missing results count as failed).
    pub fn ran(&mut self, results: Vec<RunResult>) {
        if !matches!(self.state, State::AwaitRun) {
            return;
        }
        let mut results = results.into_iter();
        for &i in &self.running {
            let result = results.next().unwrap_or(RunResult {
                ok: false,
                output: "no result came back".into(),
            });
            self.report.commands[i].outcome = CommandOutcome::Ran {
                ok: result.ok,
                output: result.output,
            };
        }
        self.state = State::Finished;
    }

    fn effect_of(&self, tool: &str) -> Option<ToolEffect> {
        if tool == HELP_COMMAND {
            return Some(ToolEffect::Read);
        }
        if tool == MESH_INTERACT_COMMAND {
            return Some(ToolEffect::Network);
        }
        self.start.effects.get(tool).copied()
    }

    fn reflection(&self) -> Reflection {
        let reply = self.report.reply.as_deref().unwrap_or_default();
        let language = self.start.language;
        let prompt_text = self
            .start
            .prompt
            .request
            .messages
            .iter()
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        Reflection {
            cognitive: self
                .start
                .previous_reply
                .as_deref()
                .map(|previous| cognitive_request(language, previous, reply)),
            emotional: emotional_request(language, &self.start.emotions, reply),
            validators: self
                .start
                .validators
                .iter()
                .map(|name| {
                    (
                        name.clone(),
                        validator_request(language, reply, &prompt_text),
                    )
                })
                .collect(),
        }
    }

    fn finish(&mut self, now_ms: u64) -> TickStep {
        self.state = State::Finished;
        let mut report = self.report.clone();
        report.duration_ms = now_ms.saturating_sub(self.start.started_ms);
        TickStep::Finish(Box::new(report))
    }
}

/// The first 120 characters of a model's answer, for error messages.
pub(crate) fn snippet(text: &str) -> String {
    text.chars().take(120).collect()
}

/// A command's arguments as the raw text `Toolbox::prepare` binds: the line
/// form as written, the JSON form as one object.
pub fn raw_args(command: &Command) -> String {
    match &command.args {
        CommandArgs::Line(raw) => raw.clone(),
        CommandArgs::Json(map) => serde_json::Value::Object(map.clone()).to_string(),
    }
}

#[cfg(test)]
#[path = "tick_tests.rs"]
mod tests;
