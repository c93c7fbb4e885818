//! The one path a tool call takes, for the chat dispatcher and the cognitive
//! core alike: route the name to its set, bind the arguments to the tool's
//! schema ([`Prepared`], or a [`PrepareError`] saying why not), then run it
//! with a [`CallContext`]. A `Prepared` call owns what it needs (the set is
//! shared by `Arc`), so a driver can run it while the session that asked for
//! it waits, and compare or log it.

use std::fmt;
use std::sync::Arc;

use crate::llm::BoxFuture;
use crate::tools::args::{Args, ArgsError};
use crate::tools::context::CallContext;
use crate::tools::toolset::{ToolEffect, ToolOutput, Toolset};

/// Why a call could not be prepared; nothing ran.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrepareError {
    /// No set has this prefix.
    #[error("no toolset has a tool named {tool:?}")]
    UnknownTool {
        /// The name called.
        tool: String,
    },
    /// The prefix names a set that lacks this tool.
    #[error("toolset {set:?} has no tool {tool:?}")]
    UnknownVerb {
        /// The set.
        set: String,
        /// The name called.
        tool: String,
    },
    /// The arguments did not fit.
    #[error("arguments of {schema} do not fit: {error}")]
    InvalidArgs {
        /// `tool|arg|…`, the form the call must take.
        schema: String,
        /// What was wrong.
        error: ArgsError,
    },
}

/// A routed call with arguments bound to its tool's schema, ready to run.
#[derive(Clone)]
pub struct Prepared {
    set: Arc<dyn Toolset>,
    tool: String,
    args: Args,
    effect: ToolEffect,
}

impl Prepared {
    /// A prepared call of `tool` of `set`.
    pub(crate) fn new(set: Arc<dyn Toolset>, tool: String, args: Args, effect: ToolEffect) -> Self {
        Self {
            set,
            tool,
            args,
            effect,
        }
    }

    /// Runs the call. No deadline here: the caller sets one (the chat
    /// driver does, per call).
    pub fn run<'a>(&'a self, ctx: &'a CallContext) -> BoxFuture<'a, ToolOutput> {
        self.set.call(&self.tool, &self.args, ctx)
    }

    /// The tool's full name.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The set's name.
    pub fn set_name(&self) -> &str {
        self.set.name()
    }

    /// The bound arguments.
    pub fn args(&self) -> &Args {
        &self.args
    }

    /// What the call does to the world.
    pub fn effect(&self) -> ToolEffect {
        self.effect
    }
}

impl fmt::Debug for Prepared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prepared")
            .field("tool", &self.tool)
            .field("args", &self.args)
            .field("effect", &self.effect)
            .finish()
    }
}

/// Two prepared calls are equal when they call the same tool of the same set
/// with the same arguments.
impl PartialEq for Prepared {
    fn eq(&self, other: &Self) -> bool {
        self.tool == other.tool
            && self.args == other.args
            && self.set.name() == other.set.name()
            && self.effect == other.effect
    }
}

impl Eq for Prepared {}
