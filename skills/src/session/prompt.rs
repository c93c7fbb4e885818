//! The system prompt builder, in seed §3's order: preamble and core tools →
//! toolset catalogue → "Active toolsets: …" with their tools → skill index
//! (minus skills of active sets).
//!
//! Everything that does not depend on the session is rendered once in
//! [`PromptBuilder::new`]; a build only concatenates. So the same state gives
//! byte-identical text, and the core + catalogue prefix never changes, which
//! lets llama.cpp or vLLM keep it in their KV cache.
//!
//! The same state gives the reply's grammar ([`PromptBuilder::grammar`]):
//! the tools this prompt shows, the set names its catalogue lists and the
//! skills its index lists, so enabling a set changes both together.

use std::collections::BTreeMap;

use crate::grammar::{ToolShape, chat_reply};
use crate::skills::registry::SkillRegistry;
use crate::texts::{self, Language};
use crate::tools::args::ArgSpec;
use crate::tools::core_tools::CoreTool;
use crate::tools::registry::ToolsetRegistry;

/// Pre-rendered prompt parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptBuilder {
    language: Language,
    prefix: String,
    tool_blocks: BTreeMap<String, String>,
    /// Each set's tools, for the grammar.
    tool_shapes: BTreeMap<String, Vec<ToolShape>>,
    skill_heading: &'static str,
    /// Per index line: the set its skill belongs to, the skill's name, the line.
    skill_lines: Vec<SkillLine>,
}

/// One line of the skill index.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SkillLine {
    toolset: Option<String>,
    name: String,
    line: String,
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
        let tool_shapes = toolsets
            .sets()
            .map(|set| {
                let shapes = set.tools().iter().map(ToolShape::from).collect();
                (set.name().to_owned(), shapes)
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
            .map(|s| SkillLine {
                toolset: s.toolset.clone(),
                name: s.name.clone(),
                line: SkillRegistry::index_line(s) + "\n",
            })
            .collect();
        Self {
            language,
            prefix,
            tool_blocks,
            tool_shapes,
            skill_heading: texts::skills_heading(language),
            skill_lines,
        }
    }

    /// With worked examples after the preamble (a request and its reply
    /// each, in the prompt's language); the prefix stays fixed.
    pub fn with_worked_examples(mut self) -> Self {
        let preamble = texts::preamble(self.language);
        self.prefix
            .insert_str(preamble.len(), texts::worked_examples(self.language));
        self
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
        let known = self.known(active);
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
        for skill in self.shown_skills(&known) {
            if !heading_written {
                out.push_str(self.skill_heading);
                heading_written = true;
            }
            out.push_str(&skill.line);
        }
        out
    }

    /// The tools the prompt for `active` shows, in its order, as a grammar
    /// takes them: the core tools, whose names choose only among what the
    /// prompt lists (`read_skill` the index's skills, `enable_toolset` the
    /// catalogue's sets that are not active, `disable_toolset` the active
    /// ones; a core tool left nothing to choose is left out), then the active
    /// sets' tools.
    ///
    /// Enabling an active set is left out of the grammar though the loop
    /// still takes it (seed §2: "already active, timeout extended"): it runs
    /// nothing, a call to any of the set's tools extends the timeout as well,
    /// and a small model's commonest miss was that very call — enabling the
    /// set again instead of calling its tool (docs/benchmarks.md, issue 43).
    pub fn shown_tools(&self, active: &[&str]) -> Vec<ToolShape> {
        let known = self.known(active);
        let skills: Vec<&str> = self.shown_skills(&known).map(|s| s.name.as_str()).collect();
        let sets: Vec<&str> = self
            .tool_blocks
            .keys()
            .map(String::as_str)
            .filter(|set| !known.contains(set))
            .collect();
        let mut out = Vec::with_capacity(CoreTool::all().len() + 8 * known.len());
        for tool in CoreTool::all() {
            let choices: &[&str] = match tool {
                CoreTool::GetCurrentTime | CoreTool::ShowText => {
                    out.push(ToolShape::from(&tool.spec(self.language)));
                    continue;
                }
                CoreTool::ReadSkill => &skills,
                CoreTool::EnableToolset => &sets,
                CoreTool::DisableToolset => &known,
            };
            if !choices.is_empty() {
                out.push(ToolShape::new(
                    tool.name(),
                    vec![ArgSpec::choice("name", choices)],
                ));
            }
        }
        for set in &known {
            out.extend(self.tool_shapes.get(*set).into_iter().flatten().cloned());
        }
        out
    }

    /// The GBNF of a reply to the prompt for `active` ([`chat_reply`] of
    /// [`PromptBuilder::shown_tools`]).
    pub fn grammar(&self, active: &[&str]) -> String {
        chat_reply(&self.shown_tools(active))
    }

    /// The GBNF of the reply that follows an `enable_toolset|enabled` which
    /// changed the active sets in this turn: a call to one of `enabled`'s
    /// tools, or an answer. A set is enabled to be used; what else a small
    /// model wrote there (the same or another enable, another set's skill)
    /// was its commonest miss (docs/benchmarks.md, issue 43). A name that is
    /// not an active set gets [`PromptBuilder::grammar`].
    pub fn grammar_after_enable(&self, active: &[&str], enabled: &str) -> String {
        match self.tool_shapes.get(enabled) {
            Some(tools) if active.contains(&enabled) => chat_reply(tools),
            _ => self.grammar(active),
        }
    }

    /// The registered sets of `active`, sorted, once each.
    fn known<'a>(&self, active: &[&'a str]) -> Vec<&'a str> {
        let mut known: Vec<&str> = active
            .iter()
            .copied()
            .filter(|s| self.tool_blocks.contains_key(*s))
            .collect();
        known.sort_unstable();
        known.dedup();
        known
    }

    /// The index lines shown while `known` sets are active: a skill of an
    /// active set leaves the index (seed §6).
    fn shown_skills<'b>(&'b self, known: &'b [&str]) -> impl Iterator<Item = &'b SkillLine> {
        self.skill_lines
            .iter()
            .filter(move |s| !s.toolset.as_deref().is_some_and(|t| known.contains(&t)))
    }
}
