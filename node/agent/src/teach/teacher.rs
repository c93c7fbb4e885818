//! The teacher: a scripted [`Llm`] that gives the agent the replies a turn
//! should get, in order, and records every request the agent sent with the
//! reply it got. Run through a real session, it turns a script into
//! examples whose prompts are the node's own.

use std::collections::VecDeque;
use std::sync::Mutex;

use porfiry_skills::llm::TOOL_RESULT_PREFIX;
use porfiry_skills::{BoxFuture, Completion, Llm, LlmError, ModelRequest, Role};

/// One scripted reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// This text.
    Say(String),
    /// This template with `{r}` replaced by the first line of the last tool
    /// result the agent passed back (the answer that reports it).
    Report(String),
    /// This text, said but not taught: a wrong call that shows the model
    /// what the loop answers to one (the retry after it is taught).
    Mistake(String),
}

/// What the teacher saw and said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchange {
    /// The request the agent sent.
    pub request: ModelRequest,
    /// The reply it got.
    pub reply: String,
    /// Whether the reply is one to teach (not a [`Step::Mistake`]).
    pub taught: bool,
}

/// Longest tool-result line an answer quotes: a list's first line, a film's
/// title line; the rest stays in the result the person saw.
pub const MAX_REPORTED_CHARS: usize = 160;

#[derive(Default)]
struct State {
    script: VecDeque<Step>,
    exchanges: Vec<Exchange>,
    off_script: bool,
}

/// The scripted model.
#[derive(Default)]
pub struct Teacher {
    state: Mutex<State>,
}

impl Teacher {
    /// A teacher with nothing to say yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the replies of the next turn (what was left is dropped).
    pub fn script(&self, steps: Vec<Step>) {
        let mut state = self.lock();
        state.script = steps.into();
        state.off_script = false;
    }

    /// The exchanges since the last call, and whether the agent asked for
    /// more replies than the script had (the turn went another way than the
    /// script meant: its examples are not to be trusted).
    pub fn take(&self) -> (Vec<Exchange>, bool) {
        let mut state = self.lock();
        let off_script = state.off_script || !state.script.is_empty();
        (std::mem::take(&mut state.exchanges), off_script)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A poisoned lock only means a test panicked mid-turn; the state is
        // plain data and still usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The first line of the last tool result in `request`'s history, without
/// its `TOOL_RESULT tool: ` prefix.
pub fn last_result_line(request: &ModelRequest) -> String {
    let Some(message) = request
        .messages
        .iter()
        .rev()
        .find(|m| m.role == Role::User && m.content.starts_with(TOOL_RESULT_PREFIX))
    else {
        return String::new();
    };
    let text = message
        .content
        .split_once(": ")
        .map_or(message.content.as_str(), |(_, rest)| rest);
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    line.chars().take(MAX_REPORTED_CHARS).collect()
}

impl Llm for Teacher {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Completion, LlmError>> {
        Box::pin(async move {
            let mut state = self.lock();
            let (reply, taught) = match state.script.pop_front() {
                Some(Step::Say(text)) => (text, true),
                Some(Step::Report(template)) => {
                    (template.replace("{r}", &last_result_line(request)), true)
                }
                Some(Step::Mistake(text)) => (text, false),
                None => {
                    state.off_script = true;
                    ("OK.".to_owned(), false)
                }
            };
            state.exchanges.push(Exchange {
                request: request.clone(),
                reply: reply.clone(),
                taught,
            });
            Ok(Completion::text(reply))
        })
    }

    fn model_name(&self) -> String {
        "teacher".to_owned()
    }
}
