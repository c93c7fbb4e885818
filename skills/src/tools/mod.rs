//! Tools: the [`Toolset`] trait and what a call gives back, the toolset
//! registry that routes calls by their `<set>_` prefix, argument schemas and
//! their grammar, the five core tools, and the [`Toolbox`] every session of
//! a node shares, and the one call path (route → bind → run, [`Toolbox::prepare`]).

pub mod args;
pub mod context;
pub mod core_tools;
pub mod prepared;
pub mod registry;
pub mod toolbox;
pub mod toolset;

pub use args::{ArgKind, ArgSpec, Args, ArgsError, bind, bind_json};
pub use context::{CallContext, Caller};
pub use prepared::{PrepareError, Prepared};
pub use registry::{RegistryError, Route, ToolsetRegistry};
pub use toolbox::{LoopConfig, Toolbox};
pub use toolset::{ClientEvent, ToolEffect, ToolOutput, ToolSpec, Toolset};
