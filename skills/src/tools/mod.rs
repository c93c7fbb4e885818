//! Tools: the [`Toolset`] trait and what a call gives back, the toolset
//! registry that routes calls by their `<set>_` prefix, argument schemas and
//! their grammar, the five core tools, and the [`Toolbox`] every session of
//! a node shares.

pub mod args;
pub mod core_tools;
pub mod registry;
pub mod toolbox;
pub mod toolset;

pub use args::{ArgKind, ArgSpec, Args, ArgsError};
pub use registry::{Invocation, RegistryError, Route, ToolsetRegistry};
pub use toolbox::{LoopConfig, Toolbox};
pub use toolset::{ClientEvent, ToolOutput, ToolSpec, Toolset};
