//! Shareable know-how, each set listing, adding and deleting:
//! `strategies` (`stagnation_strategies`: ways out of stagnation by class
//! and cost), `methods` (`thinking_methods`) and `ratings` (of a strategy,
//! method, model or item). A strategy or method the model adds stays local
//! unless it says `shared` (seed 003: agents "делиться ими с другими
//! Cognitive Core через mesh"): then the node publishes it to friends like
//! any shareable row, and its ratings travel with it.

use porfiry_skills::{ArgSpec, Args, Language, ToolEffect};
use porfiry_storage::{Rating, StagnationStrategy, ThinkingMethod};

use super::parse;
use super::records::{FromArgs, Shown, list_add_delete_set, list_add_delete_set_with, tag_suffix};
use super::set::{Fail, StoreSet};
use crate::StoreTools;
use crate::texts::store_replies as texts;

/// The strategy classes of seed 003's anti-stagnation reflex, as the core
/// names them.
pub const STRATEGY_CLASSES: &[&str] = &[
    "external_stimulation",
    "context_switch",
    "internal_restructuring",
    "radical_pause",
];

/// The tag that tells the core's strategy choice what a strategy makes it
/// do (`mechanism:flashback`, see `skills::cognition::strategy`); a
/// strategy without one is listed but never chosen.
pub const MECHANISM_TAG_PREFIX: &str = "mechanism:";

/// The last optional argument of `strategies_add` and `methods_add`.
pub const SHARING: &[&str] = &["local", "shared"];

/// Whether the model asked for the row to travel.
fn shared(args: &Args) -> bool {
    args.get("sharing") == Some("shared")
}

/// Steps as `1) a 2) b`.
fn numbered(steps: &[String]) -> String {
    steps
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{}) {s}", i + 1))
        .collect::<Vec<_>>()
        .join(" ")
}

impl Shown for StagnationStrategy {
    fn line(&self, _lang: Language) -> String {
        format!(
            "{} ({}, cost {}) — {} {}{}",
            self.name,
            self.class,
            self.cost,
            self.description,
            numbered(&self.steps),
            tag_suffix(&self.tags)
        )
    }
}

impl Shown for ThinkingMethod {
    fn line(&self, _lang: Language) -> String {
        format!(
            "{} — {} {}{}",
            self.name,
            self.description,
            numbered(&self.steps),
            tag_suffix(&self.tags)
        )
    }
}

impl Shown for Rating {
    fn line(&self, _lang: Language) -> String {
        let from = self
            .origin_author
            .as_ref()
            .map(|a| format!(" ({a})"))
            .unwrap_or_default();
        format!("{}: {}{from} — {}", self.target, self.score, self.comment)
    }
}

/// The `strategies` set.
pub(crate) fn strategies(deps: &StoreTools) -> StoreSet {
    let add = vec![
        ArgSpec::text("name"),
        ArgSpec::choice("class", STRATEGY_CLASSES),
        ArgSpec::int("cost"),
        ArgSpec::text("description"),
        ArgSpec::word("mechanism").optional(),
        ArgSpec::text("steps").optional(),
        ArgSpec::choice("sharing", SHARING).optional(),
    ];
    // Network: a shared one leaves the node (one tool has one effect).
    list_add_delete_set_with::<StagnationStrategy>("strategies", deps, add, ToolEffect::Network)
}

impl FromArgs for StagnationStrategy {
    fn from_args(lang: Language, args: &Args) -> Result<Self, Fail> {
        let tags = match args.get("mechanism") {
            Some(m) => {
                let m = m.to_ascii_lowercase();
                if !m.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
                    return Err(Fail::Bad(texts::bad_choice(
                        lang,
                        "mechanism",
                        &m,
                        "a-z, _ (flashback, ask_friends, …)",
                    )));
                }
                vec![format!("{MECHANISM_TAG_PREFIX}{m}")]
            }
            None => Vec::new(),
        };
        Ok(StagnationStrategy {
            tags,
            name: parse::non_empty(lang, "name", args.text("name"))?,
            class: args.text("class").to_owned(),
            cost: parse::id(lang, args, "cost")?,
            description: args.text("description").trim().to_owned(),
            steps: parse::steps(args.text("steps")),
            shareable: shared(args),
            ..Default::default()
        })
    }
}

/// The `methods` set.
pub(crate) fn methods(deps: &StoreTools) -> StoreSet {
    let add = vec![
        ArgSpec::text("name"),
        ArgSpec::text("description"),
        ArgSpec::text("steps").optional(),
        ArgSpec::choice("sharing", SHARING).optional(),
    ];
    list_add_delete_set_with::<ThinkingMethod>("methods", deps, add, ToolEffect::Network)
}

impl FromArgs for ThinkingMethod {
    fn from_args(lang: Language, args: &Args) -> Result<Self, Fail> {
        Ok(ThinkingMethod {
            name: parse::non_empty(lang, "name", args.text("name"))?,
            description: args.text("description").trim().to_owned(),
            steps: parse::steps(args.text("steps")),
            shareable: shared(args),
            ..Default::default()
        })
    }
}

/// The `ratings` set.
pub(crate) fn ratings(deps: &StoreTools) -> StoreSet {
    let add = vec![
        ArgSpec::word("target"),
        ArgSpec::int("score"),
        ArgSpec::text("comment").optional(),
    ];
    list_add_delete_set::<Rating>("ratings", deps, add)
}

impl FromArgs for Rating {
    fn from_args(lang: Language, args: &Args) -> Result<Self, Fail> {
        Ok(Rating {
            target: parse::non_empty(lang, "target", args.text("target"))?,
            score: parse::id(lang, args, "score")?,
            comment: args.text("comment").trim().to_owned(),
            ..Default::default()
        })
    }
}
