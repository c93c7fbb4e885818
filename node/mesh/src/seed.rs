//! What a fresh node holds for its cognitive core (`porfiry init`, and any
//! older node at its next start): the core system prompt of context 0 in
//! both languages, the seed's stagnation strategies in all four classes,
//! its thinking methods, the emotion list and the validation thresholds.
//! Seeding never overwrites: a prompt, list or threshold the user (or the
//! model) changed stays as it is, and strategies and methods are added only
//! to empty tables. Seeded rows are not shareable (every node has them);
//! what travels is what the model adds and the ratings of shared ones.

use porfiry_skills::Language;
use porfiry_skills::cognition::reflex::EMOTIONS_CONFIG_KEY;
use porfiry_skills::cognition::seeds::{seed_emotions, seed_methods, seed_strategies};
use porfiry_skills::cognition::texts::prompt::core_system_prompt;
use porfiry_skills::cognition::votes::{THRESHOLDS_CONFIG_KEY, Thresholds};
use porfiry_skills::cognition::{CYCLE_CONFIG_KEY, CycleSettings};
use porfiry_storage::{Result, StagnationStrategy, Store, SystemPrompt, ThinkingMethod};

/// `system_prompts.name` of the core's context 0 (one row per language).
pub const SYSTEM_PROMPT_NAME: &str = "cognitive_core";

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
        if s.count::<StagnationStrategy>()? == 0 {
            for st in seed_strategies(language) {
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
            }
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
        Ok(seeded)
    })
}
