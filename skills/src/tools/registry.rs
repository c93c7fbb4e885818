//! The toolset registry: every registered set by name, routing of a tool call
//! by its `<set>_` prefix, and argument checking before the call runs.
//!
//! It knows nothing about chat or activation, so the HMP cognitive core
//! dispatches through the very same registry.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::limits::MAX_TOOLSET_NAME_CHARS;
use crate::tools::args::bind;
use crate::tools::core_tools::CORE_TOOL_NAMES;
use crate::tools::prepared::{PrepareError, Prepared};
use crate::tools::toolset::{ToolSpec, Toolset};

/// Why a toolset could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// Set names are `[a-z0-9]+`, at most [`MAX_TOOLSET_NAME_CHARS`].
    #[error("toolset name {0:?} must be 1-{MAX_TOOLSET_NAME_CHARS} characters of a-z and 0-9")]
    BadSetName(String),
    /// Two sets with one name.
    #[error("toolset {0:?} is already registered")]
    DuplicateSet(String),
    /// A tool whose name is not `<set>_<verb>` with `verb` of `[a-z0-9_]+`.
    #[error("tool {tool:?} of toolset {set:?} must be named {set}_<verb> (a-z, 0-9, _)")]
    BadToolName {
        /// The set.
        set: String,
        /// The tool.
        tool: String,
    },
    /// A set listing one tool twice.
    #[error("tool {0:?} is listed twice")]
    DuplicateTool(String),
    /// A tool named like a core tool would never be reached.
    #[error("tool {0:?} has the name of a core tool")]
    ClashesWithCoreTool(String),
    /// Optional arguments must come after the required ones.
    #[error("tool {0:?} declares a required argument after an optional one")]
    RequiredAfterOptional(String),
}

/// Where a tool name leads.
pub enum Route<'a> {
    /// A known tool of a known set.
    Tool(&'a dyn Toolset, &'a ToolSpec),
    /// The prefix names a set, but the set has no such tool.
    UnknownVerb(&'a dyn Toolset),
    /// No set has this prefix.
    Unknown,
}

/// All registered toolsets, kept in name order so every listing is stable.
/// Cloning shares the sets (they are `Arc`s): the cognitive core and the
/// chat sessions of one node dispatch to the very same toolset objects.
#[derive(Default, Clone)]
pub struct ToolsetRegistry {
    sets: BTreeMap<String, Arc<dyn Toolset>>,
}

impl std::fmt::Debug for ToolsetRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.sets.keys()).finish()
    }
}

impl ToolsetRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a set after checking its name, its tool names and argument order.
    pub fn register(&mut self, set: impl Toolset + 'static) -> Result<(), RegistryError> {
        self.register_boxed(Box::new(set))
    }

    /// [`ToolsetRegistry::register`] for an already boxed set.
    pub fn register_boxed(&mut self, set: Box<dyn Toolset>) -> Result<(), RegistryError> {
        let name = set.name().to_owned();
        if !is_set_name(&name) {
            return Err(RegistryError::BadSetName(name));
        }
        if self.sets.contains_key(&name) {
            return Err(RegistryError::DuplicateSet(name));
        }
        check_tools(&name, set.tools())?;
        self.sets.insert(name, Arc::from(set));
        Ok(())
    }

    /// The sets named in `names` (unknown names are skipped), sharing the
    /// toolset objects with this registry.
    pub fn only(&self, names: &[&str]) -> ToolsetRegistry {
        ToolsetRegistry {
            sets: self
                .sets
                .iter()
                .filter(|(name, _)| names.contains(&name.as_str()))
                .map(|(name, set)| (name.clone(), set.clone()))
                .collect(),
        }
    }

    /// The set called `name`.
    pub fn get(&self, name: &str) -> Option<&dyn Toolset> {
        self.sets.get(name).map(|s| s.as_ref())
    }

    /// Set names in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.sets.keys().map(String::as_str)
    }

    /// Sets in name order.
    pub fn sets(&self) -> impl Iterator<Item = &dyn Toolset> {
        self.sets.values().map(|s| s.as_ref())
    }

    /// How many sets there are.
    pub fn len(&self) -> usize {
        self.sets.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }

    /// The set a tool name routes to by its prefix (`media_search` → `media`).
    pub fn set_of(&self, tool: &str) -> Option<&dyn Toolset> {
        let (prefix, _) = tool.split_once('_')?;
        self.get(prefix)
    }

    /// Routes a tool name.
    pub fn route(&self, tool: &str) -> Route<'_> {
        let Some(set) = self.set_of(tool) else {
            return Route::Unknown;
        };
        match set.tools().iter().find(|t| t.name == tool) {
            Some(spec) => Route::Tool(set, spec),
            None => Route::UnknownVerb(set),
        }
    }

    /// Routes `tool` and binds `raw_args` (positional or a JSON object) to
    /// its schema: the call, ready to run, or why not.
    pub fn prepare(&self, tool: &str, raw_args: &str) -> Result<Prepared, PrepareError> {
        let Some((name, set)) = tool
            .split_once('_')
            .and_then(|(prefix, _)| self.sets.get_key_value(prefix))
        else {
            return Err(PrepareError::UnknownTool {
                tool: tool.to_owned(),
            });
        };
        let Some(spec) = set.tools().iter().find(|t| t.name == tool) else {
            return Err(PrepareError::UnknownVerb {
                set: name.clone(),
                tool: tool.to_owned(),
            });
        };
        match bind(&spec.args, raw_args) {
            Ok(args) => Ok(Prepared::new(
                set.clone(),
                spec.name.clone(),
                args,
                spec.effect,
            )),
            Err(error) => Err(PrepareError::InvalidArgs {
                schema: spec.schema_line(),
                error,
            }),
        }
    }
}

/// `[a-z0-9]+`, not too long: no `_`, so the prefix before the first `_` of a
/// tool name is exactly the set name.
pub fn is_set_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_TOOLSET_NAME_CHARS
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

fn check_tools(set: &str, tools: &[ToolSpec]) -> Result<(), RegistryError> {
    let mut seen = std::collections::BTreeSet::new();
    for tool in tools {
        let verb_ok = tool
            .name
            .strip_prefix(set)
            .and_then(|rest| rest.strip_prefix('_'))
            .is_some_and(|verb| {
                !verb.is_empty()
                    && verb
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
            });
        if !verb_ok {
            return Err(RegistryError::BadToolName {
                set: set.to_owned(),
                tool: tool.name.clone(),
            });
        }
        if CORE_TOOL_NAMES.contains(&tool.name.as_str()) {
            return Err(RegistryError::ClashesWithCoreTool(tool.name.clone()));
        }
        if !seen.insert(tool.name.as_str()) {
            return Err(RegistryError::DuplicateTool(tool.name.clone()));
        }
        let first_optional = tool.args.iter().position(|a| !a.required);
        if let Some(i) = first_optional
            && tool.args[i..].iter().any(|a| a.required)
        {
            return Err(RegistryError::RequiredAfterOptional(tool.name.clone()));
        }
    }
    Ok(())
}
