//! What a fresh node knows about stagnation (seed 003, stagnation part):
//! one strategy per mechanism across all four classes with the seed's
//! costs (quick and cheap first: a mesh request, a flashback; costly last:
//! a change of setting, sleep), the thinking methods, and the default
//! emotion list. `porfiry init` stores them; the texts live in
//! [`texts::seeds`](crate::cognition::texts).

use crate::Language;
use crate::cognition::strategy::{Mechanism, StrategyClass};
use crate::cognition::texts::seeds as t;

/// A strategy a fresh node starts with.
#[derive(Debug, Clone, PartialEq)]
pub struct SeedStrategy {
    /// Short name.
    pub name: &'static str,
    /// Its class.
    pub class: StrategyClass,
    /// What it makes the core do (stored as the tag `mechanism:<name>`).
    pub mechanism: Mechanism,
    /// Relative cost; cheap strategies are tried first.
    pub cost: i64,
    /// What it does.
    pub description: &'static str,
    /// The micro-script.
    pub steps: &'static [&'static str],
}

/// A thinking method a fresh node starts with.
#[derive(Debug, Clone, PartialEq)]
pub struct SeedMethod {
    /// Short name ("Start with an analogy").
    pub name: &'static str,
    /// What it does.
    pub description: &'static str,
    /// The steps.
    pub steps: &'static [&'static str],
}

/// The relative cost of each mechanism: a prompt or a note costs a tick
/// (1); reading the store, a fetch, a frame shift and tuning cost a little
/// more (2); a new dialogue or a frozen task costs the user's attention or
/// the task's momentum (3–4); another model costs a model swap (5); a change
/// of setting moves the whole cycle for several ticks (6, the seed's
/// "затратные (смена среды, сон)"); sleep costs hours (8).
pub fn seed_cost(m: Mechanism) -> i64 {
    match m {
        Mechanism::AskFriends | Mechanism::Flashback | Mechanism::MetaAnalysis => 1,
        Mechanism::Rationale
        | Mechanism::InterestMemory
        | Mechanism::TuneSampling
        | Mechanism::WorldCheck
        | Mechanism::ReadMaterial
        | Mechanism::CreativeIntervention => 2,
        Mechanism::GoalReformulation | Mechanism::RandomAction | Mechanism::AskUser => 3,
        Mechanism::TaskSwitch => 4,
        Mechanism::SwitchModel => 5,
        Mechanism::EnvironmentChange => 6,
        Mechanism::LongPause => 8,
    }
}

/// One strategy per mechanism, cheapest first.
pub fn seed_strategies(lang: Language) -> Vec<SeedStrategy> {
    let mut out: Vec<SeedStrategy> = Mechanism::ALL
        .into_iter()
        .map(|m| {
            let (name, description, steps) = t::strategy(lang, m);
            SeedStrategy {
                name,
                class: m.class(),
                mechanism: m,
                cost: seed_cost(m),
                description,
                steps,
            }
        })
        .collect();
    out.sort_by_key(|s| s.cost);
    out
}

/// The seed's micro-scenarios ("Начни с аналогии", "Проверь обратное
/// утверждение", "Сформулируй вопрос для оппонента") and a few more.
pub fn seed_methods(lang: Language) -> Vec<SeedMethod> {
    t::methods(lang)
        .iter()
        .map(|(name, description, steps)| SeedMethod {
            name,
            description,
            steps,
        })
        .collect()
}

/// The default emotion list kept in config.
pub fn seed_emotions(lang: Language) -> Vec<&'static str> {
    t::emotions(lang).to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LANGS: [Language; 2] = [Language::En, Language::Ru];

    #[test]
    fn strategies_cover_every_class_and_mechanism_cheapest_first() {
        for lang in LANGS {
            let s = seed_strategies(lang);
            for m in Mechanism::ALL {
                assert_eq!(
                    s.iter().filter(|x| x.mechanism == m).count(),
                    1,
                    "{lang} {m}"
                );
            }
            for c in StrategyClass::ALL {
                assert!(s.iter().any(|x| x.class == c), "{lang} {c}");
            }
            assert!(s.iter().all(|x| x.class == x.mechanism.class()));
            assert!(s.windows(2).all(|w| w[0].cost <= w[1].cost));
            assert!(
                s.iter().all(|x| !x.name.is_empty()
                    && !x.description.is_empty()
                    && !x.steps.is_empty())
            );
        }
    }

    #[test]
    fn the_seeds_cheap_and_costly_examples_keep_their_order() {
        // Seed: a mesh request and a flashback first; a change of setting and sleep last.
        let s = seed_strategies(Language::Ru);
        assert_eq!(s[0].name, "Mesh-запрос");
        assert_eq!(s.last().unwrap().name, "Временной сон");
        assert!(seed_cost(Mechanism::Flashback) < seed_cost(Mechanism::TaskSwitch));
        assert!(seed_cost(Mechanism::TaskSwitch) < seed_cost(Mechanism::LongPause));
        // The change of setting is the costly one before sleep.
        let n = s.len();
        assert_eq!(s[n - 2].mechanism, Mechanism::EnvironmentChange);
        let en = seed_strategies(Language::En);
        let meta = en
            .iter()
            .find(|x| x.mechanism == Mechanism::MetaAnalysis)
            .unwrap();
        assert_eq!(
            meta.description,
            "Cognitive reformulation: \"If I am looping, what is the meta-problem? Which strategy should I change to?\""
        );
    }

    #[test]
    fn methods_start_with_the_seeds_micro_scenarios() {
        let ru: Vec<&str> = seed_methods(Language::Ru).iter().map(|m| m.name).collect();
        assert_eq!(
            ru[..3],
            [
                "Начни с аналогии",
                "Проверь обратное утверждение",
                "Сформулируй вопрос для оппонента"
            ]
        );
        let en = seed_methods(Language::En);
        assert_eq!(en[0].name, "Start with an analogy");
        assert_eq!(en.len(), ru.len());
        assert!(
            en.iter()
                .all(|m| !m.description.is_empty() && !m.steps.is_empty())
        );
    }

    #[test]
    fn the_emotion_list_starts_with_the_seeds_example() {
        assert_eq!(
            seed_emotions(Language::Ru)[..3],
            ["радость", "грусть", "тревога"]
        );
        assert_eq!(
            seed_emotions(Language::En)[..3],
            ["joy", "sadness", "anxiety"]
        );
        for lang in LANGS {
            let e = seed_emotions(lang);
            assert!(e.len() <= crate::cognition::reflex::MAX_KNOWN_EMOTIONS);
            assert!(e.iter().all(|n| !n.contains(':') && n.trim() == *n));
        }
    }
}
