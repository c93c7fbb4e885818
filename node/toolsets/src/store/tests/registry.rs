//! Every record set registers under the naming table's names, with texts
//! in both languages and the effect its tools have on the world.

use porfiry_skills::{Language, ToolEffect, ToolsetRegistry};

use crate::MediaToolset;
use crate::store::register_store_sets;
use crate::store::testkit::Kit;

/// The naming table of the plan: set → tools.
const TABLE: &[(&str, &[&str])] = &[
    ("accounts", &["list", "add", "delete"]),
    ("agents", &["list", "add", "delete"]),
    (
        "concepts",
        &["list", "read", "add", "update", "delete", "pin", "unpin"],
    ),
    ("config", &["read", "update"]),
    (
        "diary",
        &[
            "list", "search", "read", "add", "update", "delete", "pin", "unpin",
        ],
    ),
    ("goals", &["list", "read", "add", "update", "delete"]),
    ("groups", &["list", "add", "delete"]),
    ("identity", &["read", "update"]),
    ("links", &["list", "read", "add", "update", "delete"]),
    ("memory", &["list", "add", "delete"]),
    ("methods", &["list", "add", "delete"]),
    (
        "notes",
        &[
            "list", "read", "add", "update", "delete", "tag", "readmark", "cleanup",
        ],
    ),
    ("ratings", &["list", "add", "delete"]),
    (
        "reputation",
        &["list", "read", "set", "increase", "decrease", "notes"],
    ),
    ("scripts", &["list", "add", "delete"]),
    ("services", &["list", "add", "delete"]),
    ("strategies", &["list", "add", "delete"]),
    ("tables", &["list", "add", "delete"]),
    ("tags", &["stats", "pin", "unpin"]),
    (
        "tasks",
        &["list", "read", "add", "update", "delete", "pin", "unpin"],
    ),
    ("users", &["list", "add", "delete"]),
];

/// Tools whose effect leaves the node.
const NETWORK: &[&str] = &[
    "agents_add",
    "agents_delete",
    "notes_add",
    "strategies_add",
    "methods_add",
];

#[test]
fn every_set_and_tool_of_the_naming_table_is_registered() {
    let kit = Kit::new(Language::En);
    let names: Vec<&str> = kit.registry.names().collect();
    let expected: Vec<&str> = TABLE.iter().map(|(s, _)| *s).collect();
    assert_eq!(names, expected);
    for (set, verbs) in TABLE {
        let tools: Vec<String> = kit
            .registry
            .get(set)
            .unwrap()
            .tools()
            .iter()
            .map(|t| t.name.clone())
            .collect();
        let want: Vec<String> = verbs.iter().map(|v| format!("{set}_{v}")).collect();
        assert_eq!(tools, want, "{set}");
    }
}

#[test]
fn every_summary_and_description_exists_in_both_languages() {
    let en = Kit::new(Language::En);
    let ru = Kit::new(Language::Ru);
    for (a, b) in en.registry.sets().zip(ru.registry.sets()) {
        assert!(!a.summary().is_empty(), "{} has no summary", a.name());
        assert_ne!(
            a.summary(),
            b.summary(),
            "{} summary untranslated",
            a.name()
        );
        for (x, y) in a.tools().iter().zip(b.tools()) {
            assert!(!x.description.is_empty(), "{} has no description", x.name);
            assert!(
                !y.description.is_empty(),
                "{} has no Russian description",
                x.name
            );
            assert_ne!(x.description, y.description, "{} untranslated", x.name);
        }
    }
}

#[test]
fn reads_read_writes_write_and_what_leaves_the_node_is_network() {
    let kit = Kit::new(Language::En);
    for set in kit.registry.sets() {
        for tool in set.tools() {
            let verb = tool.name.split_once('_').unwrap().1;
            let want = if NETWORK.contains(&tool.name.as_str()) {
                ToolEffect::Network
            } else if matches!(verb, "list" | "read" | "search" | "stats") {
                ToolEffect::Read
            } else {
                ToolEffect::Write
            };
            assert_eq!(tool.effect, want, "{}", tool.name);
        }
    }
}

#[test]
fn the_record_sets_live_beside_media_in_one_registry() {
    let kit = Kit::new(Language::En);
    let mut registry = ToolsetRegistry::new();
    registry
        .register(MediaToolset::new(Vec::new(), Language::En))
        .unwrap();
    register_store_sets(&mut registry, &kit.deps).unwrap();
    assert_eq!(registry.len(), TABLE.len() + 1);
    // Registering twice is refused by name, not silently doubled.
    assert!(register_store_sets(&mut registry, &kit.deps).is_err());
}

#[tokio::test]
async fn a_verb_the_set_lacks_is_answered_with_its_tools() {
    let kit = Kit::new(Language::En);
    let diary = kit.registry.get("diary").unwrap();
    let ctx = kit.ctx_of(porfiry_skills::Caller::User);
    let out = diary
        .call("diary_fly", &porfiry_skills::Args::default(), &ctx)
        .await;
    assert!(!out.ok);
    assert!(
        out.text.contains("diary_list|[tag]|[offset(number)]"),
        "{}",
        out.text
    );
}
