//! The system prompt builder, in seed §3's order: preamble and core tools →
//! toolset catalogue → "Active toolsets: …" with their tools → skill index
//! (minus skills of active sets).
//!
//! Everything that does not depend on the session is rendered once in
//! [`PromptBuilder::new`]; a build only concatenates. So the same state gives
//! byte-identical text, and the core + catalogue prefix never changes, which
//! lets llama.cpp or vLLM keep it in their KV cache.

use std::collections::BTreeMap;

use crate::skills::registry::SkillRegistry;
use crate::texts::{self, Language};
use crate::tools::core_tools::CoreTool;
use crate::tools::registry::ToolsetRegistry;

/// Pre-rendered prompt parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptBuilder {
    language: Language,
    prefix: String,
    tool_blocks: BTreeMap<String, String>,
    skill_heading: &'static str,
    skill_lines: Vec<(Option<String>, String)>,
}

impl PromptBuilder {
    /// Renders every part that does not change while the registries don't.
    pub fn new(language: Language, toolsets: &ToolsetRegistry, skills: &SkillRegistry) -> Self {
        let mut prefix = String::new();
        prefix.push_str(texts::preamble(language));
        prefix.push_str(texts::core_heading(language));
        for tool in CoreTool::all() {
            prefix.push_str(&tool.spec(language).prompt_line());
            prefix.push('\n');
        }
        if !toolsets.is_empty() {
            prefix.push_str(texts::catalogue_heading(language));
            for set in toolsets.sets() {
                prefix.push_str(set.name());
                prefix.push_str(" — ");
                prefix.push_str(set.summary());
                prefix.push('\n');
            }
        }
        let tool_blocks = toolsets
            .sets()
            .map(|set| {
                let mut block = String::new();
                for tool in set.tools() {
                    block.push_str(&tool.prompt_line());
                    block.push('\n');
                }
                (set.name().to_owned(), block)
            })
            .collect();
        // A skill for a set this node does not offer (the diary's skill in
        // `porfiry chat`, which has only films) would send the model to
        // enable a set that is not there: it stays out of the index.
        let skill_lines = skills
            .iter()
            .filter(|s| {
                s.toolset
                    .as_deref()
                    .is_none_or(|set| toolsets.get(set).is_some())
            })
            .map(|s| (s.toolset.clone(), SkillRegistry::index_line(s) + "\n"))
            .collect();
        Self {
            language,
            prefix,
            tool_blocks,
            skill_heading: texts::skills_heading(language),
            skill_lines,
        }
    }

    /// The part every prompt starts with: preamble, core tools, catalogue.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The prompt lines of one set's tools (`name|args — description\n`…).
    pub fn tool_lines(&self, set: &str) -> Option<&str> {
        self.tool_blocks.get(set).map(String::as_str)
    }

    /// The language of the texts.
    pub fn language(&self) -> Language {
        self.language
    }

    /// The whole prompt for a session whose active sets are `active` (names
    /// not in the registry are ignored; order does not matter).
    pub fn build(&self, active: &[&str]) -> String {
        let mut known: Vec<&str> = active
            .iter()
            .copied()
            .filter(|s| self.tool_blocks.contains_key(*s))
            .collect();
        known.sort_unstable();
        known.dedup();
        let mut out = String::with_capacity(self.prefix.len() + 64 * (self.skill_lines.len() + 8));
        out.push_str(&self.prefix);
        if !known.is_empty() {
            out.push_str(&texts::active_heading(self.language, &known.join(", ")));
            for set in &known {
                if let Some(block) = self.tool_blocks.get(*set) {
                    out.push_str(block);
                }
            }
        }
        let mut heading_written = false;
        for (toolset, line) in &self.skill_lines {
            if toolset.as_deref().is_some_and(|t| known.contains(&t)) {
                continue;
            }
            if !heading_written {
                out.push_str(self.skill_heading);
                heading_written = true;
            }
            out.push_str(line);
        }
        out
    }
}
