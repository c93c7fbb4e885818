//! The API chat prompt in real tokens (tiktoken cl100k), against seed §10's
//! budget: state 1 (core tools, the six chat sets' catalogue, the skill
//! index) ≤ 350 tokens, state 3 (one set active) ≤ 400, in both languages,
//! for each of the six sets the API offers. Also: each of them has a skill.
//! A size check, not a timing one; `--nocapture` prints the counts.

use std::sync::{Arc, LazyLock};

use porfiry_agent::chat::{ChatConfig, ChatEngine};
use porfiry_agent::cognition::CoreEvents;
use porfiry_agent::llm::LlmTarget;
use porfiry_agent::llm::registry_models::RegistryModels;
use porfiry_skills::{Language, Llm};
use porfiry_storage::db::Db;
use porfiry_storage::{DB_FILE_NAME, Store};
use porfiry_toolsets::{CHAT_SETS, StoreTools, ToolsetOptions, core_toolsets};
use tiktoken_rs::CoreBPE;

static BPE: LazyLock<CoreBPE> = LazyLock::new(|| tiktoken_rs::cl100k_base().unwrap());

fn count(text: &str) -> usize {
    BPE.encode_with_special_tokens(text).len()
}

/// The API's chat engine over a fresh database, as `porfiry run` builds it.
fn api_engine(dir: &tempfile::TempDir, language: Language) -> ChatEngine {
    let db = Db::start(Store::create(dir.path().join(DB_FILE_NAME)).unwrap()).unwrap();
    let tools = StoreTools {
        db,
        language,
        events: CoreEvents::new(),
        node: None,
    };
    let options = ToolsetOptions {
        language,
        ..ToolsetOptions::default()
    };
    let registry = core_toolsets(&options, &tools, Arc::new(RegistryModels::new(None))).unwrap();
    let config = ChatConfig {
        language,
        ..ChatConfig::new(LlmTarget::new("http://127.0.0.1:9/v1", "m"))
    };
    let llm: Arc<dyn Llm> =
        Arc::new(porfiry_agent::llm::OpenAiClient::new(config.llm.clone()).unwrap());
    ChatEngine::with_toolsets(&config, llm, registry.only(CHAT_SETS)).unwrap()
}

/// Seed §10's budget in tokens, state 1 and state 3. The seed counts in the
/// model's tokens; cl100k is an English-centred stand-in that splits
/// Cyrillic into about 1.6× the tokens of the same English text (measured
/// on these prompts: 403 vs 248 in state 1), where Qwen's and Gemma's
/// tokenizers split it far less. So English is held to the seed's figures
/// and Russian to them × 1.6, which guards against growth without claiming
/// a fit cl100k cannot show. `docs/benchmarks.md` has the figures.
fn budget(language: Language) -> (usize, usize) {
    match language {
        Language::En => (350, 400),
        Language::Ru => (560, 640),
    }
}

#[tokio::test]
async fn the_api_prompt_fits_the_seed_budget_in_states_1_and_3() {
    let mut over = Vec::new();
    for language in [Language::En, Language::Ru] {
        let dir = tempfile::tempdir().unwrap();
        let engine = api_engine(&dir, language);
        let prompt = engine.toolbox().prompt();
        let (idle_budget, active_budget) = budget(language);
        let idle = count(&prompt.build(&[]));
        println!("{language}: state 1 = {idle} tokens (budget {idle_budget})");
        if idle > idle_budget {
            over.push(format!("{language}: state 1 has {idle}"));
        }
        for set in CHAT_SETS {
            let active = count(&prompt.build(&[set]));
            println!(
                "{language}: state 3 ({set} active) = {active} tokens (budget {active_budget})"
            );
            if active > active_budget {
                over.push(format!("{language}: state 3 with {set} has {active}"));
            }
        }
    }
    assert!(over.is_empty(), "over the budget: {over:?}");
}

#[tokio::test]
async fn each_chat_set_has_a_skill_that_names_its_toolset() {
    for language in [Language::En, Language::Ru] {
        let dir = tempfile::tempdir().unwrap();
        let engine = api_engine(&dir, language);
        let skills = engine.toolbox().skills();
        for set in CHAT_SETS {
            let skill = skills
                .iter()
                .find(|s| s.toolset.as_deref() == Some(set))
                .unwrap_or_else(|| panic!("{language}: no skill for the {set} set"));
            assert!(
                skill.body.contains(&format!("enable_toolset|{set}")),
                "{language}: the {set} skill says how to enable it"
            );
        }
    }
}

#[tokio::test]
async fn state_3_with_the_nodes_own_sets_lists_each_tool_tersely_and_drops_the_sets_skill() {
    // Issue 42 (seed 000 #6): the skills crate checks state 3 on a test-only
    // set; here it is the node's own, every set the API offers.
    for language in [Language::En, Language::Ru] {
        let dir = tempfile::tempdir().unwrap();
        let engine = api_engine(&dir, language);
        let toolbox = engine.toolbox();
        let idle = toolbox.prompt().build(&[]);
        for set in CHAT_SETS {
            let active = toolbox.prompt().build(&[set]);
            let tools = toolbox.toolsets().get(set).unwrap().tools();
            let lines: Vec<&str> = active.lines().collect();
            let first = tools[0].prompt_line();
            let at = lines
                .iter()
                .position(|l| *l == first)
                .unwrap_or_else(|| panic!("{language} {set}: no line {first:?} in {active}"));
            for (i, tool) in tools.iter().enumerate() {
                assert_eq!(lines[at + i], tool.prompt_line(), "{language} {set}");
            }
            // As the skills crate's test-only set: 30 cl100k tokens a line,
            // × 1.6 for Cyrillic (see `budget`).
            let terse = match language {
                Language::En => 30,
                Language::Ru => 48,
            };
            for line in &lines {
                let n = count(line);
                assert!(n <= terse, "{language} {set}: {n} tokens: {line:?}");
            }
            let skill = toolbox
                .skills()
                .iter()
                .find(|s| s.toolset.as_deref() == Some(set))
                .unwrap();
            // The skill index follows the catalogue: the set's last line.
            let index_line = idle
                .lines()
                .rev()
                .find(|l| l.starts_with(&format!("{} — ", skill.name)))
                .unwrap_or_else(|| panic!("{language} {set}: no skill line"));
            assert!(
                !active.contains(index_line),
                "{language} {set}: the active set's skill leaves the index: {index_line:?}"
            );
        }
    }
}
