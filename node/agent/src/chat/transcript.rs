//! How a terminal chat writes a turn: the transcript format on stdout
//! (events, the answer, one-line errors) and the `--trace` lines on stderr.
//! Pure functions from a turn's outcome to text; the command prints them.
//!
//! stdout, per turn:
//! - `[show] TEXT` for each `show_text` event,
//! - `[action] TOOL VALUE` for each toolset action (`media_play` → play VALUE),
//! - the answer's lines as they are,
//! - or one `[error] MESSAGE` line when the turn failed.

use porfiry_skills::{Action, ClientEvent, LlmError, Reply, TraceEvent};

use super::session::SendError;
use crate::llm::API_KEY_ENV;

/// Prefix of a `show_text` line.
pub const SHOW_PREFIX: &str = "[show] ";
/// Prefix of a toolset action line.
pub const ACTION_PREFIX: &str = "[action] ";
/// Prefix of the line that reports a failed turn.
pub const ERROR_PREFIX: &str = "[error] ";
/// Prefix of every `--trace` line.
pub const TRACE_PREFIX: &str = "[trace] ";

/// The stdout lines of a finished turn: events in order, then the answer.
pub fn render_reply(reply: &Reply) -> String {
    let mut out = String::new();
    for event in &reply.events {
        match event {
            ClientEvent::ShowText { text } => prefixed(&mut out, SHOW_PREFIX, text),
            ClientEvent::Action { tool, value } => {
                prefixed(&mut out, ACTION_PREFIX, &format!("{tool} {value}"));
            }
        }
    }
    out.push_str(&reply.text);
    out.push('\n');
    out
}

/// The one stdout line of a failed turn.
pub fn render_error(error: &SendError) -> String {
    let mut line = error.to_string();
    if let SendError::Model(LlmError::Unauthorized { .. }) = error {
        line.push_str(&format!("; set {API_KEY_ENV}"));
    }
    format!("{ERROR_PREFIX}{}\n", one_line(&line))
}

/// Writes `text` with `prefix` on each of its lines, so a multi-line event
/// cannot pass for the answer.
fn prefixed(out: &mut String, prefix: &str, text: &str) {
    if text.is_empty() {
        out.push_str(prefix.trim_end());
        out.push('\n');
        return;
    }
    for line in text.lines() {
        out.push_str(prefix);
        out.push_str(line);
        out.push('\n');
    }
}

/// Whitespace runs (newlines included) collapsed to one space.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Renders `--trace` events. A prompt is printed whole only when it differs
/// from the previous request's, so each prompt state shows once per change.
#[derive(Debug, Default)]
pub struct TraceWriter {
    requests: usize,
    last_system: Option<String>,
}

impl TraceWriter {
    /// A writer that has seen nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The stderr lines for one event.
    pub fn render(&mut self, event: &TraceEvent<'_>) -> String {
        let mut out = String::new();
        match event {
            TraceEvent::Request(request) => {
                self.requests += 1;
                let n = self.requests;
                let messages = request.messages.len();
                if self.last_system.as_deref() == Some(request.system.as_str()) {
                    line(
                        &mut out,
                        &format!("request {n}: prompt unchanged, {messages} message(s)"),
                    );
                } else {
                    line(
                        &mut out,
                        &format!("request {n}: new prompt state, {messages} message(s):"),
                    );
                    block(&mut out, &request.system);
                    self.last_system = Some(request.system.clone());
                }
                if let Some(last) = request.messages.last() {
                    line(&mut out, &format!("last message ({:?}):", last.role));
                    block(&mut out, &last.content);
                }
            }
            TraceEvent::ModelReply(text) => {
                line(&mut out, "model replied:");
                block(&mut out, text);
            }
            TraceEvent::Action(action) => line(&mut out, &describe(action)),
            TraceEvent::Events(events) => {
                line(&mut out, &format!("{} client event(s)", events.len()));
            }
        }
        out
    }
}

/// One line saying what the dispatcher did.
fn describe(action: &Action) -> String {
    match action {
        Action::Answer => "answer to the user".to_owned(),
        Action::Invisible {
            call,
            reply,
            changed,
        } => {
            let effect = if *changed {
                "prompt rebuilt"
            } else {
                "no change"
            };
            format!(
                "invisible call {} -> {} ({effect}; not in the history)",
                call.line(),
                one_line(reply)
            )
        }
        Action::Tool {
            call,
            result,
            kind,
            ok,
        } => {
            format!(
                "tool call {} -> {kind:?} ok={ok}: {}",
                call.line(),
                one_line(result)
            )
        }
        Action::RoundLimit => "tool round limit reached; the user was told".to_owned(),
    }
}

fn line(out: &mut String, text: &str) {
    out.push_str(TRACE_PREFIX);
    out.push_str(text);
    out.push('\n');
}

/// Indented lines of a multi-line text.
fn block(out: &mut String, text: &str) {
    for l in text.lines() {
        out.push_str(TRACE_PREFIX);
        out.push_str("  | ");
        out.push_str(l);
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use porfiry_skills::{ChatMessage, ModelRequest, ResultKind, ToolCall};

    use super::*;

    #[test]
    fn events_come_first_each_line_prefixed_then_the_answer() {
        let reply = Reply {
            text: "Here it is.\nEnjoy.".into(),
            events: vec![
                ClientEvent::ShowText {
                    text: "line 1\nline 2".into(),
                },
                ClientEvent::Action {
                    tool: "media_play".into(),
                    value: "tt1".into(),
                },
                ClientEvent::ShowText { text: "".into() },
            ],
            usage: None,
            finish_reason: None,
            served_by: None,
        };
        assert_eq!(
            render_reply(&reply),
            "[show] line 1\n[show] line 2\n[action] media_play tt1\n[show]\nHere it is.\nEnjoy.\n"
        );
        assert_eq!(render_reply(&Reply::default()), "\n");
    }

    #[test]
    fn errors_are_one_line_and_a_refused_key_names_the_variable() {
        let url = "http://127.0.0.1:9/v1/chat/completions";
        let e = SendError::Model(LlmError::Status {
            url: url.into(),
            status: 500,
            snippet: "boom\nstack".into(),
        });
        assert_eq!(
            render_error(&e),
            "[error] model endpoint answered HTTP 500: boom stack\n"
        );
        let e = SendError::Model(LlmError::Unauthorized {
            url: url.into(),
            status: 401,
            snippet: "no".into(),
        });
        assert!(render_error(&e).contains("PORFIRY_LLM_API_KEY"));
        assert_eq!(
            render_error(&SendError::Empty),
            "[error] the message is empty\n"
        );
    }

    #[test]
    fn trace_prints_a_prompt_only_when_its_state_changes() {
        let mut w = TraceWriter::new();
        let req = |system: &str| ModelRequest {
            system: system.into(),
            messages: vec![ChatMessage::user("films?")],
            max_tokens: None,
            grammar: None,
            stop: Vec::new(),
        };
        let first = w.render(&TraceEvent::Request(&req("STATE 1\ncore")));
        assert!(first.contains("request 1: new prompt state"), "{first}");
        assert!(
            first.contains("[trace]   | STATE 1\n[trace]   | core\n"),
            "{first}"
        );
        assert!(first.contains("[trace]   | films?"), "{first}");
        let same = w.render(&TraceEvent::Request(&req("STATE 1\ncore")));
        assert!(same.contains("request 2: prompt unchanged"), "{same}");
        assert!(!same.contains("STATE 1"), "{same}");
        let third = w.render(&TraceEvent::Request(&req("STATE 3")));
        assert!(third.contains("request 3: new prompt state"), "{third}");

        let enable = Action::Invisible {
            call: ToolCall::new("enable_toolset", "media"),
            reply: "toolset media enabled".into(),
            changed: true,
        };
        assert_eq!(
            w.render(&TraceEvent::Action(&enable)),
            "[trace] invisible call TOOL_CALL: enable_toolset|media -> toolset media enabled \
             (prompt rebuilt; not in the history)\n"
        );
        let tool = Action::Tool {
            call: ToolCall::new("media_search", "lara"),
            result: "tt1 — A\ntt2 — B".into(),
            kind: ResultKind::Executed,
            ok: true,
        };
        assert_eq!(
            w.render(&TraceEvent::Action(&tool)),
            "[trace] tool call TOOL_CALL: media_search|lara -> Executed ok=true: tt1 — A tt2 — B\n"
        );
        let failed = Action::Tool {
            call: ToolCall::new("media_info", "tt9"),
            result: "no film with id \"tt9\"".into(),
            kind: ResultKind::Executed,
            ok: false,
        };
        assert_eq!(
            w.render(&TraceEvent::Action(&failed)),
            "[trace] tool call TOOL_CALL: media_info|tt9 -> Executed ok=false: no film with id \"tt9\"\n"
        );
        assert!(w.render(&TraceEvent::ModelReply("hi")).contains("  | hi"));
        assert!(
            w.render(&TraceEvent::Action(&Action::RoundLimit))
                .contains("limit")
        );
        assert!(
            w.render(&TraceEvent::Action(&Action::Answer))
                .contains("answer")
        );
    }
}
