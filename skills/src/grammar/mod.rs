//! Grammars that keep a small model inside the protocol (issue 30 §4):
//! pure functions from the tools a prompt shows to GBNF text, llama.cpp's
//! grammar format, which a backend that can constrain decoding applies to
//! the reply ([`crate::ModelRequest::grammar`]): the embedded engine, and a
//! llama.cpp server through its `grammar` request field.
//!
//! - [`chat_reply`]: a chat reply is plain text or one well-formed
//!   `TOOL_CALL: name|args` line naming a shown tool with arguments that fit
//!   its schema;
//! - [`core_reply`]: a cognitive-core reply's commands block is valid JSON
//!   whose `type` is a catalogue tool.
//!
//! The line protocol of seed 000 stays the protocol: these grammars admit a
//! subset of what the parsers read, never anything else. The pieces:
//! [`gbnf`] (escaping, rule lists), `values` (one argument's value),
//! `call` (a call line, a command object), `prose` (text that avoids words).

mod call;
mod chat;
mod core_reply;
pub mod gbnf;
mod prose;
mod values;

pub use call::CALL_PREFIX;
pub use chat::chat_reply;
pub use core_reply::{THINKING_AVOIDS, core_catalogue, core_reply};
pub use values::MAX_INT_DIGITS;

use crate::tools::args::ArgSpec;
use crate::tools::toolset::ToolSpec;

/// A tool as a grammar sees it: its exact name and its arguments in schema
/// order (a choice lists the only words the call may give).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolShape {
    /// The tool's full name (`media_search`).
    pub name: String,
    /// Its arguments, required ones first.
    pub args: Vec<ArgSpec>,
}

impl ToolShape {
    /// A tool named `name` taking `args`.
    pub fn new(name: &str, args: Vec<ArgSpec>) -> Self {
        Self {
            name: name.to_owned(),
            args,
        }
    }
}

impl From<&ToolSpec> for ToolShape {
    fn from(spec: &ToolSpec) -> Self {
        Self::new(&spec.name, spec.args.clone())
    }
}
