//! What a fresh node holds for its cognitive core (`porfiry init`, and any
//! older node at its next start): the core system prompt of context 0 in
//! both languages, the seed's stagnation strategies in all four classes,
//! its thinking methods, the emotion list and the validation thresholds.
//! Seeding never overwrites: a prompt, list or threshold the user (or the
//! model) changed stays as it is, methods are added only to an empty table,
//! and a strategy only for a mechanism never seeded before (the list is kept
//! in [`SEEDED_MECHANISMS_KEY`]): a node from before a mechanism existed
//! gets it at its next start, a seeded strategy the user deleted stays
//! deleted. Seeded rows are not shareable (every node has them);
//! what travels is what the model adds and the ratings of shared ones.
//! Among a person's devices a seeded row is one record on all of them
//! (`devices::seeds`): only the person's change of it travels.

use porfiry_skills::Language;
use porfiry_skills::cognition::reflex::EMOTIONS_CONFIG_KEY;
use porfiry_skills::cognition::seeds::{seed_emotions, seed_methods, seed_strategies};
use porfiry_skills::cognition::texts::prompt::core_system_prompt;
use porfiry_skills::cognition::votes::{THRESHOLDS_CONFIG_KEY, Thresholds};
use porfiry_skills::cognition::{CYCLE_CONFIG_KEY, CycleSettings};
use porfiry_storage::{Result, StagnationStrategy, Store, SystemPrompt, ThinkingMethod};

/// `system_prompts.name` of the core's context 0 (one row per language).
pub const SYSTEM_PROMPT_NAME: &str = "cognitive_core";

/// `config` key listing the mechanisms whose seed strategy was written
/// once (JSON array of names), so a deleted one is not written again.
pub const SEEDED_MECHANISMS_KEY: &str = "core.seeded_mechanisms";

/// The mechanisms a node seeded before [`SEEDED_MECHANISMS_KEY`] existed:
/// a node with strategies and no list had these twelve.
const FIRST_SEEDED: [&str; 12] = [
    "ask_friends",
    "flashback",
    "interest_memory",
    "meta_analysis",
    "rationale",
    "goal_reformulation",
    "switch_model",
    "tune_sampling",
    "task_switch",
    "random_action",
    "long_pause",
    "ask_user",
];

/// What seeding added.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Seeded {
    /// System prompts added.
    pub prompts: usize,
    /// Strategies added.
    pub strategies: usize,
    /// Thinking methods added.
    pub methods: usize,
    /// Config keys added.
    pub settings: usize,
}

/// Seeds what is missing, in one transaction. Strategies and methods are
/// written in `language`; prompts in both.
pub fn seed_core(store: &Store, language: Language, now_ms: u64) -> Result<Seeded> {
    store.transaction(|s| {
        let mut seeded = Seeded::default();
        for lang in [Language::En, Language::Ru] {
            if s.system_prompt(SYSTEM_PROMPT_NAME, &lang.to_string())?
                .is_none()
            {
                s.add(
                    &SystemPrompt {
                        name: SYSTEM_PROMPT_NAME.into(),
                        language: lang.to_string(),
                        content: core_system_prompt(lang).to_owned(),
                    },
                    now_ms,
                )?;
                seeded.prompts += 1;
            }
        }
        let mut done: Vec<String> = match s.config_get::<Vec<String>>(SEEDED_MECHANISMS_KEY)? {
            Some(list) => list,
            None if s.count::<StagnationStrategy>()? > 0 => {
                FIRST_SEEDED.iter().map(|m| (*m).to_owned()).collect()
            }
            None => Vec::new(),
        };
        let before = done.len();
        for st in seed_strategies(language) {
            let name = st.mechanism.as_str();
            if done.iter().any(|d| d == name) {
                continue;
            }
            s.add(
                &StagnationStrategy {
                    name: st.name.into(),
                    class: st.class.as_str().into(),
                    description: st.description.into(),
                    steps: st.steps.iter().map(|x| (*x).to_owned()).collect(),
                    cost: st.cost,
                    tags: vec![st.mechanism.tag()],
                    // Every node holds the seeds: publishing them would
                    // only send each friend copies it has.
                    shareable: false,
                    ..Default::default()
                },
                now_ms,
            )?;
            seeded.strategies += 1;
            done.push(name.to_owned());
        }
        if done.len() != before || s.config_value(SEEDED_MECHANISMS_KEY)?.is_none() {
            s.config_set(SEEDED_MECHANISMS_KEY, &done, now_ms)?;
        }
        if s.count::<ThinkingMethod>()? == 0 {
            for m in seed_methods(language) {
                s.add(
                    &ThinkingMethod {
                        name: m.name.into(),
                        description: m.description.into(),
                        steps: m.steps.iter().map(|x| (*x).to_owned()).collect(),
                        shareable: false,
                        ..Default::default()
                    },
                    now_ms,
                )?;
                seeded.methods += 1;
            }
        }
        if s.config_value(EMOTIONS_CONFIG_KEY)?.is_none() {
            s.config_set(EMOTIONS_CONFIG_KEY, &seed_emotions(language), now_ms)?;
            seeded.settings += 1;
        }
        if s.config_value(THRESHOLDS_CONFIG_KEY)?.is_none() {
            s.config_set(THRESHOLDS_CONFIG_KEY, &Thresholds::default(), now_ms)?;
            seeded.settings += 1;
        }
        if s.config_value(CYCLE_CONFIG_KEY)?.is_none() {
            s.config_set(CYCLE_CONFIG_KEY, &CycleSettings::default(), now_ms)?;
            seeded.settings += 1;
        }
        // Each device has its own copy of the seeds: they are one record
        // of the person's memory, not one per device.
        crate::devices::seeds::adopt_seeds(s)?;
        Ok(seeded)
    })
}

#[cfg(test)]
mod tests {
    use porfiry_skills::cognition::strategy::Mechanism;
    use porfiry_storage::ListQuery;

    use super::*;

    fn mechanisms(s: &Store) -> Vec<String> {
        let mut out: Vec<String> = s
            .list::<StagnationStrategy>(&ListQuery::recent(1_000))
            .unwrap()
            .into_iter()
            .flat_map(|r| r.row.tags)
            .collect();
        out.sort();
        out
    }

    #[test]
    fn a_fresh_node_gets_one_strategy_per_mechanism_and_a_second_seed_adds_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::create(dir.path().join("n.db")).unwrap();
        let first = seed_core(&s, Language::En, 1).unwrap();
        assert_eq!(first.strategies, Mechanism::ALL.len());
        let mut all: Vec<String> = Mechanism::ALL.iter().map(|m| m.tag()).collect();
        all.sort();
        assert_eq!(mechanisms(&s), all);
        assert_eq!(seed_core(&s, Language::En, 2).unwrap(), Seeded::default());
    }

    #[test]
    fn an_older_node_gets_the_new_mechanisms_and_a_deleted_strategy_stays_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::create(dir.path().join("n.db")).unwrap();
        // A node seeded before the list existed: the first twelve, one deleted.
        for name in FIRST_SEEDED.iter().filter(|m| **m != "long_pause") {
            s.add(
                &StagnationStrategy {
                    name: (*name).into(),
                    class: "context_switch".into(),
                    tags: vec![format!("mechanism:{name}")],
                    ..Default::default()
                },
                1,
            )
            .unwrap();
        }
        let seeded = seed_core(&s, Language::En, 2).unwrap();
        assert_eq!(seeded.strategies, Mechanism::ALL.len() - FIRST_SEEDED.len());
        let have = mechanisms(&s);
        assert!(have.contains(&Mechanism::WorldCheck.tag()), "{have:?}");
        assert!(
            !have.contains(&Mechanism::LongPause.tag()),
            "deleted stays deleted"
        );
        // Deleting a new one: the next start does not bring it back.
        let world = s
            .list::<StagnationStrategy>(&ListQuery::recent(1_000))
            .unwrap()
            .into_iter()
            .find(|r| r.row.tags.contains(&Mechanism::WorldCheck.tag()))
            .unwrap();
        s.delete::<StagnationStrategy>(world.id).unwrap();
        assert_eq!(seed_core(&s, Language::En, 3).unwrap().strategies, 0);
        assert!(!mechanisms(&s).contains(&Mechanism::WorldCheck.tag()));
    }
}
