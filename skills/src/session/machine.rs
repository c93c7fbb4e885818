//! One chat session as a sans-IO state machine: feed it the user's message,
//! the model's replies and the tools' outputs with the current time; it
//! answers with the next step — call the model with this request, run this
//! tool, or the turn is done. It never runs a tool itself: toolset tools may
//! be slow or hang, and the driver owns time (deadlines) and IO.
//!
//! The history is never cleaned (seed §8). What enters it per round:
//! - a call that ran or was substituted: the canonical `TOOL_CALL: …` line as
//!   the assistant's message, then `TOOL_RESULT <tool>: …` as a user message;
//! - `enable_toolset` / `disable_toolset`: nothing. If the call changed
//!   nothing (already active, unknown set, none active), its call and reply
//!   are shown once, appended to the next request only, so the model does not
//!   repeat it; they are never stored.
//! - the answer: the reply text (think blocks removed).
//!
//! Each request carries the chat's stop text, and, when the loop is
//! constrained ([`crate::LoopConfig::constrained`]), the grammar of a reply
//! to exactly the prompt it carries.

use std::sync::Arc;

use crate::clock::ZonedTime;
use crate::limits::{MAX_SKILL_RESULT_CHARS, MAX_TOOL_RESULT_CHARS};
use crate::llm::stops::CHAT_REPLY_STOP;
use crate::llm::{ChatMessage, ModelRequest, Usage};
use crate::session::activation::Activation;
use crate::session::dispatcher::{Outcome, ResultKind, dispatch};
use crate::session::parser::{ParsedReply, ToolCall, parse_reply};
use crate::texts;
use crate::tools::core_tools::{CoreTool, READ_SKILL};
use crate::tools::prepared::Prepared;
use crate::tools::toolbox::Toolbox;
use crate::tools::toolset::{ClientEvent, ToolOutput};

/// A finished turn: the answer and the client events of its tool calls.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Reply {
    /// The answer for the user.
    pub text: String,
    /// Events in the order the tools emitted them (`show_text`, actions).
    pub events: Vec<ClientEvent>,
    /// Token counts summed over the turn's model calls, when any call
    /// reported them (the driver fills this in; the session sees no counts).
    pub usage: Option<Usage>,
    /// Why the model stopped on the turn's last call (`stop`, `length`, …),
    /// when it said (the driver fills this in too).
    pub finish_reason: Option<String>,
    /// The friend whose model wrote the answer (the turn's last call), by
    /// peer id, when it came over the mesh; `None` for the node's own
    /// model (the driver fills this in too).
    pub served_by: Option<String>,
}

/// A toolset call the driver must run, then feed the output to
/// [`Session::tool_output`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolRun {
    /// The call as the model wrote it (canonical form via `line()`).
    pub call: ToolCall,
    /// The routed call with bound arguments.
    pub prepared: Prepared,
}

/// What the driver does next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Send this request to the model and feed the reply to
    /// [`Session::model_reply`].
    CallModel(ModelRequest),
    /// Run this tool and feed its output to [`Session::tool_output`].
    RunTool(ToolRun),
    /// The turn is over.
    Done(Reply),
}

/// What the session did with the last model reply (for traces and tests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// The reply was the answer.
    Answer,
    /// An invisible `enable_toolset` / `disable_toolset`.
    Invisible {
        /// The call.
        call: ToolCall,
        /// Its reply.
        reply: String,
        /// Whether the active sets changed.
        changed: bool,
    },
    /// A call whose result entered the history.
    Tool {
        /// The call.
        call: ToolCall,
        /// The result as stored.
        result: String,
        /// How it came about.
        kind: ResultKind,
        /// Whether the call ran and succeeded ([`ToolOutput::ok`]); false
        /// when it failed, timed out, or did not run (bad arguments,
        /// unknown tool, substitution).
        ok: bool,
    },
    /// The turn used up its rounds; the user was told.
    RoundLimit,
}

/// Misuse of the state machine.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// `model_reply` without a request waiting for it.
    #[error("no model call is pending: start a turn with user_message first")]
    NoModelCallPending,
    /// `tool_output` without a tool run waiting for it.
    #[error("no tool run is pending: tool_output answers a Step::RunTool")]
    NoToolRunPending,
}

/// State of the turn in progress.
#[derive(Debug, Default)]
struct Turn {
    rounds: u32,
    events: Vec<ClientEvent>,
    /// A no-op invisible call and its reply, for the next request only.
    note: Option<[ChatMessage; 2]>,
    /// The tool run the turn waits for, when it waits for one.
    pending: Option<PendingTool>,
}

/// A call sent out as `Step::RunTool`, awaiting its output.
#[derive(Debug)]
struct PendingTool {
    call: ToolCall,
    kind: ResultKind,
    /// Further calls of the same reply that were dropped.
    ignored: usize,
}

/// One chat session: history, active toolsets, the turn in progress.
#[derive(Debug)]
pub struct Session {
    toolbox: Arc<Toolbox>,
    history: Vec<ChatMessage>,
    activation: Activation,
    turn: Option<Turn>,
    last_action: Option<Action>,
    /// A caller's smaller budget for each reply (an API client's
    /// `max_tokens`); the config's `reply_max_tokens` caps it.
    reply_budget: Option<u32>,
}

impl Session {
    /// A fresh session: empty history, no active sets.
    pub fn new(toolbox: Arc<Toolbox>) -> Self {
        let idle = toolbox.config().toolset_idle_ms;
        Self {
            toolbox,
            history: Vec::new(),
            activation: Activation::new(idle),
            turn: None,
            last_action: None,
            reply_budget: None,
        }
    }

    /// Caps each model reply of the next turns at `max_tokens` as well as at
    /// the config's `reply_max_tokens` (`None`: the config's alone).
    pub fn limit_replies(&mut self, max_tokens: Option<u32>) {
        self.reply_budget = max_tokens;
    }

    /// A session that continues an earlier conversation (e.g. one a chat UI
    /// sends whole with every request). Activation starts empty: it is never
    /// persisted (seed §5).
    pub fn resume(toolbox: Arc<Toolbox>, history: Vec<ChatMessage>) -> Self {
        let mut session = Self::new(toolbox);
        session.history = history;
        session
    }

    /// Starts a turn. A turn still in progress is abandoned first.
    pub fn user_message(&mut self, text: &str, now: &ZonedTime) -> Step {
        if self.turn.is_some() {
            tracing::debug!("new user message abandons the turn in progress");
            self.abort_turn();
        }
        self.history.push(ChatMessage::user(text));
        self.turn = Some(Turn::default());
        self.last_action = None;
        Step::CallModel(self.request(now))
    }

    /// Feeds the model's reply to the pending request.
    pub fn model_reply(&mut self, text: &str, now: &ZonedTime) -> Result<Step, SessionError> {
        let Some(mut turn) = self.turn.take_if(|t| t.pending.is_none()) else {
            return Err(SessionError::NoModelCallPending);
        };
        let (call, ignored) = match parse_reply(text) {
            ParsedReply::Answer(answer) => {
                self.history.push(ChatMessage::assistant(answer.clone()));
                self.last_action = Some(Action::Answer);
                return Ok(Step::Done(Reply {
                    text: answer,
                    events: turn.events,
                    usage: None,
                    finish_reason: None,
                    served_by: None,
                }));
            }
            ParsedReply::Call { call, ignored } => (call, ignored),
        };
        turn.rounds += 1;
        turn.note = None;
        match dispatch(&self.toolbox, &mut self.activation, &call, now) {
            Outcome::Invisible { reply, changed } => {
                if !changed {
                    turn.note = Some([
                        ChatMessage::assistant(call.line()),
                        ChatMessage::tool_result(&call.name, &reply),
                    ]);
                }
                self.last_action = Some(Action::Invisible {
                    call,
                    reply,
                    changed,
                });
            }
            Outcome::Run { prepared, kind } => {
                turn.pending = Some(PendingTool {
                    call: call.clone(),
                    kind,
                    ignored,
                });
                self.turn = Some(turn);
                self.last_action = None;
                return Ok(Step::RunTool(ToolRun { call, prepared }));
            }
            Outcome::Visible { text, events, kind } => {
                let ok = kind == ResultKind::Core;
                self.record(&mut turn, call, text, events, kind, ok, ignored);
            }
        }
        Ok(self.next_round(turn, now))
    }

    /// Feeds the output of the tool a [`Step::RunTool`] asked for; the turn
    /// goes on with the next model call (or ends at the round limit).
    pub fn tool_output(
        &mut self,
        output: ToolOutput,
        now: &ZonedTime,
    ) -> Result<Step, SessionError> {
        let Some(mut turn) = self.turn.take_if(|t| t.pending.is_some()) else {
            return Err(SessionError::NoToolRunPending);
        };
        let Some(pending) = turn.pending.take() else {
            return Err(SessionError::NoToolRunPending);
        };
        let PendingTool {
            call,
            kind,
            ignored,
        } = pending;
        self.record(
            &mut turn,
            call,
            output.text,
            output.events,
            kind,
            output.ok,
            ignored,
        );
        Ok(self.next_round(turn, now))
    }

    /// Stores a visible result: the canonical call line and its
    /// `TOOL_RESULT` (cut to size, noting dropped calls) enter the history.
    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        turn: &mut Turn,
        call: ToolCall,
        text: String,
        events: Vec<ClientEvent>,
        kind: ResultKind,
        ok: bool,
        ignored: usize,
    ) {
        let lang = self.toolbox.language();
        // A skill is read whole: its file's limit is its budget, not a
        // tool result's (seed 000: the recipe's end matters as much as its start).
        let max = if call.name == READ_SKILL {
            MAX_SKILL_RESULT_CHARS
        } else {
            MAX_TOOL_RESULT_CHARS
        };
        let mut result = truncate_to(text, max, texts::truncated(lang));
        if ignored > 0 {
            result.push_str(&texts::only_first_call_ran(lang, ignored));
        }
        self.history.push(ChatMessage::assistant(call.line()));
        self.history
            .push(ChatMessage::tool_result(&call.name, &result));
        turn.events.extend(events);
        self.last_action = Some(Action::Tool {
            call,
            result,
            kind,
            ok,
        });
    }

    /// After a tool round: stop at the round limit, else the next request.
    fn next_round(&mut self, turn: Turn, now: &ZonedTime) -> Step {
        let max = self.toolbox.config().max_tool_rounds;
        if turn.rounds >= max {
            let lang = self.toolbox.language();
            let text = texts::round_limit(lang, max);
            tracing::info!(rounds = turn.rounds, "tool round limit reached");
            self.history.push(ChatMessage::assistant(text.clone()));
            self.last_action = Some(Action::RoundLimit);
            return Step::Done(Reply {
                text,
                events: turn.events,
                usage: None,
                finish_reason: None,
                served_by: None,
            });
        }
        self.turn = Some(turn);
        Step::CallModel(self.request(now))
    }

    /// The client events of the turn in progress so far (none between turns:
    /// a finished turn's are in its [`Reply`]).
    pub fn turn_events(&self) -> &[ClientEvent] {
        self.turn.as_ref().map_or(&[], |t| t.events.as_slice())
    }

    /// Replaces the history (an API client that edited or trimmed its
    /// conversation). Any turn in progress is dropped; the active toolsets
    /// stay, as they would in a chat that goes on.
    pub fn replace_history(&mut self, history: Vec<ChatMessage>) {
        self.turn = None;
        self.last_action = None;
        self.history = history;
    }

    /// Ends the turn in progress without an answer (the model call failed).
    /// The history keeps what happened, and an assistant line saying no reply
    /// came keeps user/assistant turns alternating, which strict chat
    /// templates (Gemma's) require.
    pub fn abort_turn(&mut self) {
        if self.turn.take().is_none() {
            return;
        }
        let ends_with_user = self
            .history
            .last()
            .is_some_and(|m| m.role == crate::llm::Role::User);
        if ends_with_user {
            let lang = self.toolbox.language();
            self.history
                .push(ChatMessage::assistant(texts::no_reply(lang)));
        }
    }

    /// The request for the current state: expires stale sets, rebuilds the
    /// prompt, and appends a pending note (once).
    fn request(&mut self, now: &ZonedTime) -> ModelRequest {
        for set in self.activation.expire(now.unix_ms()) {
            tracing::debug!(%set, "toolset expired");
        }
        let active: Vec<&str> = self.activation.active().collect();
        let system = self.toolbox.prompt().build(&active);
        let mut messages = self.history.clone();
        if let Some(note) = self.turn.as_mut().and_then(|t| t.note.take()) {
            messages.extend(note);
        }
        let config = self.toolbox.config();
        let limit = config.reply_max_tokens;
        let max_tokens = self.reply_budget.map_or(limit, |asked| asked.min(limit));
        let just_enabled = match &self.last_action {
            Some(Action::Invisible {
                call,
                changed: true,
                ..
            }) if call.name == CoreTool::EnableToolset.name() => Some(call.args.as_str()),
            _ => None,
        };
        let grammar = config.constrained.then(|| {
            let prompt = self.toolbox.prompt();
            match just_enabled {
                Some(set) => prompt.grammar_after_enable(&active, set),
                None => prompt.grammar(&active),
            }
        });
        ModelRequest::new(system, messages, Some(max_tokens))
            .with_grammar(grammar)
            .with_stop(&CHAT_REPLY_STOP)
    }

    /// The system prompt this session would send now (expiring stale sets).
    pub fn current_prompt(&mut self, now: &ZonedTime) -> String {
        self.activation.expire(now.unix_ms());
        let active: Vec<&str> = self.activation.active().collect();
        self.toolbox.prompt().build(&active)
    }

    /// The history so far.
    pub fn history(&self) -> &[ChatMessage] {
        &self.history
    }

    /// This session's active toolsets.
    pub fn activation(&self) -> &Activation {
        &self.activation
    }

    /// What the last model reply led to.
    pub fn last_action(&self) -> Option<&Action> {
        self.last_action.as_ref()
    }

    /// Whether a model reply is awaited.
    pub fn awaiting_model(&self) -> bool {
        self.turn.as_ref().is_some_and(|t| t.pending.is_none())
    }

    /// Whether a tool's output is awaited.
    pub fn awaiting_tool(&self) -> bool {
        self.turn.as_ref().is_some_and(|t| t.pending.is_some())
    }

    /// The shared toolbox.
    pub fn toolbox(&self) -> &Arc<Toolbox> {
        &self.toolbox
    }
}

/// Cuts `text` to `max` characters, marking the cut.
fn truncate_to(mut text: String, max: usize, mark: &str) -> String {
    if let Some((cut, _)) = text.char_indices().nth(max) {
        text.truncate(cut);
        text.push_str(mark);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_cuts_on_a_char_boundary_and_marks_it() {
        let long = "я".repeat(MAX_TOOL_RESULT_CHARS + 3);
        let cut = truncate_to(long, MAX_TOOL_RESULT_CHARS, "[cut]");
        assert_eq!(cut.chars().count(), MAX_TOOL_RESULT_CHARS + 5);
        assert!(cut.ends_with("я[cut]"));
        assert_eq!(truncate_to("short".into(), 9, "[cut]"), "short");
        let exact = "a".repeat(MAX_TOOL_RESULT_CHARS);
        assert_eq!(
            truncate_to(exact.clone(), MAX_TOOL_RESULT_CHARS, "[cut]"),
            exact
        );
    }
}
