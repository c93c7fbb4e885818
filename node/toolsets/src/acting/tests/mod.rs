//! The acting sets against a real SQLite file, real child processes and a
//! real HTTP model server.

mod cycle;
mod process;

use std::sync::Arc;

use porfiry_skills::{Language, ToolEffect, ToolsetRegistry};

use super::register_acting_sets;
use crate::test_support::{NoModels, store_tools};

#[tokio::test]
async fn the_three_sets_register_with_their_effects() {
    let (_dir, tools) = store_tools(Language::Ru);
    let mut registry = ToolsetRegistry::new();
    register_acting_sets(&mut registry, &tools, Arc::new(NoModels)).unwrap();
    assert_eq!(
        registry.names().collect::<Vec<_>>(),
        ["cycle", "llm", "process"]
    );
    let effect = |set: &str, tool: &str| {
        registry
            .get(set)
            .unwrap()
            .tools()
            .iter()
            .find(|t| t.name == tool)
            .unwrap()
            .effect
    };
    for (set, tool, want) in [
        ("process", "process_list", ToolEffect::Read),
        ("process", "process_start", ToolEffect::Network),
        ("process", "process_stop", ToolEffect::Network),
        ("process", "process_mark", ToolEffect::Write),
        ("process", "process_cleanup", ToolEffect::Write),
        ("cycle", "cycle_responses", ToolEffect::Write),
        ("cycle", "cycle_concentration", ToolEffect::Write),
        ("cycle", "cycle_mode", ToolEffect::Write),
        ("cycle", "cycle_pause", ToolEffect::Write),
        ("cycle", "cycle_idle", ToolEffect::Write),
        ("llm", "llm_list", ToolEffect::Read),
        ("llm", "llm_select", ToolEffect::Write),
        ("llm", "llm_update", ToolEffect::Write),
        ("llm", "llm_task", ToolEffect::Network),
        ("llm", "llm_ask", ToolEffect::Network),
    ] {
        assert_eq!(effect(set, tool), want, "{tool}");
    }
    let llm = registry.get("llm").unwrap();
    assert!(llm.summary().contains("модели"), "{}", llm.summary());
    let again = register_acting_sets(&mut registry, &tools, Arc::new(NoModels));
    assert!(again.is_err(), "a second registration is refused");
}
