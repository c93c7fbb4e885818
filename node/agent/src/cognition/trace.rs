//! `porfiry think --trace`: each tick's prompt (every context as sent), the
//! model's reply, each command with its result and the tick's outcome, as
//! `[trace] ` lines to a sink (stderr in the CLI, a buffer in tests).
//! Without a sink nothing is formatted.

use std::fmt::Display;
use std::sync::Arc;

use porfiry_skills::cognition::commands::Command;
use porfiry_skills::cognition::context::BuiltPrompt;
use porfiry_skills::cognition::tick::{RunResult, TickReport, raw_args};

/// Where trace lines go.
type Sink = Arc<dyn Fn(&str) + Send + Sync>;

/// The trace writer; `Trace::off()` writes nothing.
#[derive(Clone, Default)]
pub struct Trace {
    sink: Option<Sink>,
}

impl Trace {
    /// No trace.
    pub fn off() -> Self {
        Self { sink: None }
    }

    /// Every line to `sink` (without the trailing newline).
    pub fn to(sink: impl Fn(&str) + Send + Sync + 'static) -> Self {
        Self {
            sink: Some(Arc::new(sink)),
        }
    }

    /// Whether lines are written.
    pub fn is_on(&self) -> bool {
        self.sink.is_some()
    }

    /// One free line.
    pub fn line(&self, text: impl Display) {
        if let Some(sink) = &self.sink {
            for line in text.to_string().lines() {
                sink(&format!("[trace] {line}"));
            }
        }
    }

    /// The prompt as sent, and what the budget cut.
    pub fn prompt(&self, prompt: &BuiltPrompt) {
        if !self.is_on() {
            return;
        }
        self.line(format_args!("prompt: ~{} tokens", prompt.tokens));
        self.line("--- system ---");
        self.line(&prompt.request.system);
        for m in &prompt.request.messages {
            self.line(format_args!("--- {:?} ---", m.role));
            self.line(&m.content);
        }
        for cut in &prompt.cut {
            self.line(format_args!("cut: {cut}"));
        }
    }

    /// The main model's answer or error.
    pub fn reply(&self, answer: &Result<String, String>) {
        match answer {
            Ok(text) => {
                self.line("--- reply ---");
                self.line(text);
            }
            Err(e) => self.line(format_args!("model error: {e}")),
        }
    }

    /// One command and its result.
    pub fn command(&self, command: &Command, result: &RunResult) {
        self.line(format_args!(
            "command {}|{} -> ok={} {}",
            command.tool,
            raw_args(command),
            result.ok,
            result.output
        ));
    }

    /// The tick's outcome.
    pub fn done(&self, report: &TickReport) {
        if !self.is_on() {
            return;
        }
        for c in &report.commands {
            self.line(format_args!("outcome {}: {:?}", c.command.tool, c.outcome));
        }
        for p in &report.problems {
            self.line(format_args!("malformed command block: {}", p.what));
        }
        self.line(format_args!(
            "tick {} done: {} ms, {} model calls, repeat={}, error={:?}",
            report.tick, report.duration_ms, report.model_calls, report.repeat, report.error
        ));
    }
}
