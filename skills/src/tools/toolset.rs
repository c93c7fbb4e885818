//! The `Toolset` trait: a named set of tools (`<set>_<verb>`) that a session
//! turns on and off, what each tool does to the world ([`ToolEffect`]), and
//! what a tool call gives back. Calls are async and get a [`CallContext`].

use serde::{Deserialize, Serialize};

use crate::llm::BoxFuture;
use crate::tools::args::{ArgSpec, Args, schema_line};
use crate::tools::context::CallContext;

/// What a tool does beyond answering: the API and the cognitive core's
/// validation decide by it who may call what (a friend may read, not write).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolEffect {
    /// Only reads (search, details, the time, showing text).
    Read,
    /// Changes state the node keeps or the client acts on (play, post, save).
    Write,
    /// Talks to other machines (web, friends).
    Network,
}

/// One tool of a set: its full name, a one-line description, its arguments
/// and its effect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSpec {
    /// Full name, `<set>_<verb>` (e.g. `media_search`).
    pub name: String,
    /// One short line: what it does (seed §10: terse).
    pub description: String,
    /// Positional arguments, required ones first.
    pub args: Vec<ArgSpec>,
    /// What calling it does to the world.
    pub effect: ToolEffect,
}

impl ToolSpec {
    /// A tool spec; every tool states its effect.
    pub fn new(name: &str, description: &str, args: Vec<ArgSpec>, effect: ToolEffect) -> Self {
        Self {
            name: name.to_owned(),
            description: description.to_owned(),
            args,
            effect,
        }
    }

    /// `name|arg|[opt]`: the form a call must take.
    pub fn schema_line(&self) -> String {
        schema_line(&self.name, &self.args)
    }

    /// `name|arg — description`: the tool's line in the prompt.
    pub fn prompt_line(&self) -> String {
        format!("{} — {}", self.schema_line(), self.description)
    }
}

/// Something for the client to do besides reading the answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ClientEvent {
    /// `show_text`: display this text (on glasses, a phone screen, a terminal).
    ShowText {
        /// The text.
        text: String,
    },
    /// A toolset asks the client to act, e.g. `media_play` → play `value`.
    Action {
        /// The tool that asked (`media_play`).
        tool: String,
        /// What to act on (a media id).
        value: String,
    },
}

/// What a tool call gives back.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolOutput {
    /// The reply the model reads as `TOOL_RESULT`.
    pub text: String,
    /// Events for the client, delivered with the turn's answer.
    pub events: Vec<ClientEvent>,
    /// False when the tool failed (the text says why). The chat loop shows the
    /// text either way; the HMP core uses this to record failures.
    pub ok: bool,
}

impl ToolOutput {
    /// A successful reply.
    pub fn ok(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            events: Vec::new(),
            ok: true,
        }
    }

    /// A failed call, explained in `text` for the model.
    pub fn failed(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            events: Vec::new(),
            ok: false,
        }
    }

    /// Adds a client event.
    pub fn with_event(mut self, event: ClientEvent) -> Self {
        self.events.push(event);
        self
    }
}

/// A named set of tools. Every tool name is `<name>_<verb>`; the registry
/// routes a call by that prefix and checks arguments against the tool's
/// [`ToolSpec::args`] before [`Toolset::call`] runs, so `call` sees only
/// arguments that fit. Calls are async (a tool may wait on a database or the
/// network); the driver puts a deadline on each, so a call that hangs is
/// dropped and the model told.
///
/// Implementations pick their language when built (see `texts`), so the
/// descriptions they return are already in the session's language.
pub trait Toolset: Send + Sync {
    /// The set's name: `[a-z0-9]+`, the routing prefix of its tools.
    fn name(&self) -> &str;

    /// One line for the catalogue: what the set is for.
    fn summary(&self) -> &str;

    /// The set's tools; names start with `<name>_`.
    fn tools(&self) -> &[ToolSpec];

    /// Runs `tool` (one of [`Toolset::tools`]) with arguments bound to its spec.
    fn call<'a>(
        &'a self,
        tool: &'a str,
        args: &'a Args,
        ctx: &'a CallContext,
    ) -> BoxFuture<'a, ToolOutput>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_line_is_schema_then_description() {
        let spec = ToolSpec::new(
            "media_info",
            "film details",
            vec![ArgSpec::word("id")],
            ToolEffect::Read,
        );
        assert_eq!(spec.prompt_line(), "media_info|id — film details");
    }

    #[test]
    fn client_events_serialize_with_a_kind_tag() {
        let json = serde_yaml_ng::to_string(&ClientEvent::ShowText { text: "hi".into() }).unwrap();
        assert!(json.contains("kind: show_text"), "{json}");
    }

    #[test]
    fn output_constructors_set_ok_and_events() {
        let out = ToolOutput::failed("db locked").with_event(ClientEvent::Action {
            tool: "media_play".into(),
            value: "tt1".into(),
        });
        assert!(!out.ok);
        assert_eq!(out.events.len(), 1);
        assert!(ToolOutput::ok("fine").ok);
    }
}
