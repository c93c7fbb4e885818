//! Choosing a way out of stagnation (seed 003 "Алгоритм выбора механизма
//! разрыва цикла"): diagnose the source from the detectors' signals (no new
//! data → external stimulation, a monotone context → context switch,
//! repeated thoughts with rich data → internal restructuring, fatigue →
//! radical pause), take the cheapest strategies first, combine classes when
//! the stall escalates, and rate an application by novelty before and after.

use std::fmt;

use crate::cognition::detectors::{Assessment, Signal};

/// A stall counter at or above this is fatigue ("Высокая усталость/перегрев"):
/// twice the escalation point of the default detectors, so the cheaper
/// mechanisms had their ticks first.
pub const FATIGUE_STALL: u32 = 6;

/// At most this many strategies are applied at once when escalated: one per
/// class the diagnosis named, and a second class when it named only one.
pub const MAX_COMBINED: usize = 3;

/// Each 0.1 of mean novelty gained after an application is one rating
/// point: a strategy that lifts novelty from 0.1 to 0.4 earns +3.
pub const NOVELTY_PER_POINT: f64 = 0.1;

/// The seed's four classes of mechanisms that break a loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StrategyClass {
    /// Fresh data or contacts ("Внешняя стимуляция").
    ExternalStimulation,
    /// Moving the task or changing the setting ("Смена контекста").
    ContextSwitch,
    /// Rebuilding the thinking itself ("Внутренняя перестройка мышления").
    InternalRestructuring,
    /// A long pause ("Радикальная пауза").
    RadicalPause,
}

impl StrategyClass {
    /// Every class, in the seed's order.
    pub const ALL: [StrategyClass; 4] = [
        StrategyClass::ExternalStimulation,
        StrategyClass::ContextSwitch,
        StrategyClass::InternalRestructuring,
        StrategyClass::RadicalPause,
    ];

    /// The name stored in `stagnation_strategies.class`.
    pub fn as_str(self) -> &'static str {
        match self {
            StrategyClass::ExternalStimulation => "external_stimulation",
            StrategyClass::ContextSwitch => "context_switch",
            StrategyClass::InternalRestructuring => "internal_restructuring",
            StrategyClass::RadicalPause => "radical_pause",
        }
    }

    /// Reads a stored class; also the storage's older `internal_rebuild`.
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim().to_ascii_lowercase();
        if s == "internal_rebuild" {
            return Some(StrategyClass::InternalRestructuring);
        }
        Self::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

impl fmt::Display for StrategyClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a strategy makes the core do; stored as the tag `mechanism:<name>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mechanism {
    /// Ask friends over the mesh for something new (a note).
    AskFriends,
    /// Look at the outside world: friends' new notes, the feeds the user
    /// listed (fetched under the URL allow-list).
    WorldCheck,
    /// Read new material: an unread note someone else wrote, the longest
    /// (or one tagged `reading`) first.
    ReadMaterial,
    /// Bring back a distant diary entry.
    Flashback,
    /// Return to the longest-untouched tag.
    InterestMemory,
    /// "If I am looping, what is the meta-problem?"
    MetaAnalysis,
    /// "Why did I take this decision? What made me repeat it?"
    Rationale,
    /// Simplify or sharpen the goal.
    GoalReformulation,
    /// Switch to another registry model.
    SwitchModel,
    /// Raise temperature and presence_penalty, restore them later.
    TuneSampling,
    /// Freeze the task and take another.
    TaskSwitch,
    /// Move the work to another setting for a few ticks: the other notes
    /// mode (manual ↔ auto) and another goal in focus.
    EnvironmentChange,
    /// A creative frame shift: look at a random topic of the store through
    /// an unusual frame.
    CreativeIntervention,
    /// One random allowed action to break the pattern.
    RandomAction,
    /// Sleep for a long while.
    LongPause,
    /// Ask the user for an opinion or a question.
    AskUser,
}

/// The prefix of the tag naming a strategy's mechanism.
pub const MECHANISM_TAG_PREFIX: &str = "mechanism:";

impl Mechanism {
    /// Every mechanism.
    pub const ALL: [Mechanism; 16] = [
        Mechanism::AskFriends,
        Mechanism::WorldCheck,
        Mechanism::ReadMaterial,
        Mechanism::Flashback,
        Mechanism::InterestMemory,
        Mechanism::MetaAnalysis,
        Mechanism::Rationale,
        Mechanism::GoalReformulation,
        Mechanism::SwitchModel,
        Mechanism::TuneSampling,
        Mechanism::TaskSwitch,
        Mechanism::EnvironmentChange,
        Mechanism::CreativeIntervention,
        Mechanism::RandomAction,
        Mechanism::LongPause,
        Mechanism::AskUser,
    ];

    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Mechanism::AskFriends => "ask_friends",
            Mechanism::WorldCheck => "world_check",
            Mechanism::ReadMaterial => "read_material",
            Mechanism::EnvironmentChange => "environment_change",
            Mechanism::CreativeIntervention => "creative_intervention",
            Mechanism::Flashback => "flashback",
            Mechanism::InterestMemory => "interest_memory",
            Mechanism::MetaAnalysis => "meta_analysis",
            Mechanism::Rationale => "rationale",
            Mechanism::GoalReformulation => "goal_reformulation",
            Mechanism::SwitchModel => "switch_model",
            Mechanism::TuneSampling => "tune_sampling",
            Mechanism::TaskSwitch => "task_switch",
            Mechanism::RandomAction => "random_action",
            Mechanism::LongPause => "long_pause",
            Mechanism::AskUser => "ask_user",
        }
    }

    /// Reads a stored name.
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim().to_ascii_lowercase();
        Self::ALL.into_iter().find(|m| m.as_str() == s)
    }

    /// The tag a strategy row carries: `mechanism:flashback`.
    pub fn tag(self) -> String {
        format!("{MECHANISM_TAG_PREFIX}{}", self.as_str())
    }

    /// The mechanism named by a row's tags (the first `mechanism:` tag that
    /// reads).
    pub fn from_tags(tags: &[String]) -> Option<Self> {
        tags.iter()
            .filter_map(|t| t.strip_prefix(MECHANISM_TAG_PREFIX))
            .find_map(Self::parse)
    }

    /// The seed's class of this mechanism.
    pub fn class(self) -> StrategyClass {
        match self {
            Mechanism::AskFriends
            | Mechanism::AskUser
            | Mechanism::WorldCheck
            | Mechanism::ReadMaterial => StrategyClass::ExternalStimulation,
            Mechanism::TaskSwitch
            | Mechanism::RandomAction
            | Mechanism::EnvironmentChange
            | Mechanism::CreativeIntervention => StrategyClass::ContextSwitch,
            Mechanism::Flashback
            | Mechanism::InterestMemory
            | Mechanism::MetaAnalysis
            | Mechanism::Rationale
            | Mechanism::GoalReformulation
            | Mechanism::SwitchModel
            | Mechanism::TuneSampling => StrategyClass::InternalRestructuring,
            Mechanism::LongPause => StrategyClass::RadicalPause,
        }
    }
}

impl fmt::Display for Mechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The sources of a stall, as classes to try, in the seed's order: no new
/// data (no stimuli) → external stimulation; a monotone context (a command
/// streak or alternation) → context switch; repeated thoughts (identical or
/// similar replies, no graph growth) while data arrives → internal
/// restructuring; fatigue (stall ≥ [`FATIGUE_STALL`]) → radical pause.
/// No signals and no fatigue → nothing.
pub fn diagnose(a: &Assessment) -> Vec<StrategyClass> {
    let has = |f: fn(&Signal) -> bool| a.signals.iter().any(f);
    let no_data = has(|s| matches!(s, Signal::NoStimuli { .. }));
    let monotone = has(|s| matches!(s, Signal::CommandStreak { .. } | Signal::Alternation { .. }));
    let repeating = has(|s| {
        matches!(
            s,
            Signal::IdenticalReply | Signal::SimilarReplies { .. } | Signal::NoGraphGrowth { .. }
        )
    });
    let mut out = Vec::new();
    if no_data {
        out.push(StrategyClass::ExternalStimulation);
    }
    if monotone {
        out.push(StrategyClass::ContextSwitch);
    }
    if repeating && !no_data {
        out.push(StrategyClass::InternalRestructuring);
    }
    if a.stall >= FATIGUE_STALL {
        out.push(StrategyClass::RadicalPause);
    }
    out
}

/// A stored strategy the core could apply.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// Its `stagnation_strategies` id.
    pub id: i64,
    /// Its class.
    pub class: StrategyClass,
    /// What it makes the core do.
    pub mechanism: Mechanism,
    /// Relative cost; cheap first.
    pub cost: i64,
    /// Mean rating of earlier applications, if any.
    pub rating: Option<f64>,
}

/// The order strategies are tried in: by cost less rating (each point of
/// mean rating, −3..=3, weighs one unit of cost; unrated counts as 0), so a
/// strategy that kept failing (−3) waits behind unrated ones up to three
/// units dearer instead of keeping its place among its cost; then the
/// cheaper, then the older row.
fn cheaper(a: &Candidate, b: &Candidate) -> std::cmp::Ordering {
    let weighed = |c: &Candidate| c.cost as f64 - c.rating.unwrap_or(0.0);
    weighed(a)
        .total_cmp(&weighed(b))
        .then_with(|| a.cost.cmp(&b.cost))
        .then_with(|| a.id.cmp(&b.id))
}

/// Picks the strategies to apply now (ids, cheapest first). Strategies in
/// `recently_applied` are skipped. Not escalated: the cheapest of the first
/// diagnosed class that has one. Escalated: the cheapest of each diagnosed
/// class, and when that gives only one, the cheapest of another class too
/// (not a radical pause unless diagnosed), at most [`MAX_COMBINED`]. No
/// diagnosis → nothing.
pub fn choose(candidates: &[Candidate], a: &Assessment, recently_applied: &[i64]) -> Vec<i64> {
    let classes = diagnose(a);
    let fresh: Vec<&Candidate> = candidates
        .iter()
        .filter(|c| !recently_applied.contains(&c.id))
        .collect();
    let cheapest_in = |class: StrategyClass| {
        fresh
            .iter()
            .filter(|c| c.class == class)
            .min_by(|x, y| cheaper(x, y))
            .copied()
    };
    let mut picked: Vec<&Candidate> = Vec::new();
    for class in &classes {
        if let Some(c) = cheapest_in(*class) {
            picked.push(c);
            if !a.escalate {
                break;
            }
        }
    }
    if a.escalate && picked.len() == 1 {
        let other = fresh
            .iter()
            .filter(|c| {
                c.class != picked[0].class
                    && (c.class != StrategyClass::RadicalPause || classes.contains(&c.class))
            })
            .min_by(|x, y| cheaper(x, y))
            .copied();
        picked.extend(other);
    }
    picked.sort_by(|x, y| cheaper(x, y));
    picked.truncate(MAX_COMBINED);
    picked.into_iter().map(|c| c.id).collect()
}

/// The rating of one application, −3 ..= 3: mean novelty after minus mean
/// novelty before, one point per [`NOVELTY_PER_POINT`]. Either side empty → 0.
pub fn rate(novelty_before: &[f64], novelty_after: &[f64]) -> i64 {
    let mean = |v: &[f64]| {
        let finite: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
        // A handful of ticks: the count converts exactly.
        (!finite.is_empty()).then(|| finite.iter().sum::<f64>() / finite.len() as f64)
    };
    let (Some(before), Some(after)) = (mean(novelty_before), mean(novelty_after)) else {
        return 0;
    };
    // Clamped to −3..=3 before the cast.
    ((after - before) / NOVELTY_PER_POINT)
        .round()
        .clamp(-3.0, 3.0) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assessed(signals: Vec<Signal>, stall: u32) -> Assessment {
        Assessment {
            signals,
            stall,
            escalate: stall >= 3,
        }
    }

    fn cand(id: i64, m: Mechanism, cost: i64) -> Candidate {
        Candidate {
            id,
            class: m.class(),
            mechanism: m,
            cost,
            rating: None,
        }
    }

    /// One candidate per mechanism, with the seed's costs.
    fn all() -> Vec<Candidate> {
        Mechanism::ALL
            .into_iter()
            .enumerate()
            .map(|(i, m)| cand(i as i64 + 1, m, crate::cognition::seeds::seed_cost(m)))
            .collect()
    }

    fn id_of(m: Mechanism) -> i64 {
        all().into_iter().find(|c| c.mechanism == m).unwrap().id
    }

    #[test]
    fn names_round_trip_and_tags_name_the_mechanism() {
        for c in StrategyClass::ALL {
            assert_eq!(StrategyClass::parse(c.as_str()), Some(c));
        }
        assert_eq!(
            StrategyClass::parse("internal_rebuild"),
            Some(StrategyClass::InternalRestructuring)
        );
        assert_eq!(StrategyClass::parse("nap"), None);
        assert_eq!(StrategyClass::RadicalPause.to_string(), "radical_pause");
        for m in Mechanism::ALL {
            assert_eq!(Mechanism::parse(m.as_str()), Some(m));
            assert_eq!(Mechanism::from_tags(&["x".into(), m.tag()]), Some(m));
        }
        assert_eq!(Mechanism::Flashback.tag(), "mechanism:flashback");
        assert_eq!(
            Mechanism::parse(" Meta_Analysis "),
            Some(Mechanism::MetaAnalysis)
        );
        assert_eq!(Mechanism::from_tags(&["mechanism:nope".into()]), None);
        assert_eq!(Mechanism::TuneSampling.to_string(), "tune_sampling");
    }

    #[test]
    fn diagnosis_follows_the_seed() {
        assert!(diagnose(&Assessment::default()).is_empty());
        assert_eq!(
            diagnose(&assessed(vec![Signal::NoStimuli { ticks: 10 }], 1)),
            [StrategyClass::ExternalStimulation]
        );
        assert_eq!(
            diagnose(&assessed(
                vec![Signal::CommandStreak {
                    tool: "diary_list".into()
                }],
                1
            )),
            [StrategyClass::ContextSwitch]
        );
        assert_eq!(
            diagnose(&assessed(vec![Signal::IdenticalReply], 1)),
            [StrategyClass::InternalRestructuring]
        );
        // Repeated thoughts without new data: the data is what is missing.
        assert_eq!(
            diagnose(&assessed(
                vec![Signal::IdenticalReply, Signal::NoStimuli { ticks: 12 }],
                2
            )),
            [StrategyClass::ExternalStimulation]
        );
        assert_eq!(
            diagnose(&assessed(
                vec![
                    Signal::SimilarReplies {
                        similarity: 0.9,
                        semantic: false,
                    },
                    Signal::Alternation {
                        a: "a".into(),
                        b: "b".into()
                    }
                ],
                FATIGUE_STALL
            )),
            [
                StrategyClass::ContextSwitch,
                StrategyClass::InternalRestructuring,
                StrategyClass::RadicalPause
            ]
        );
    }

    #[test]
    fn the_cheapest_of_the_diagnosed_class_goes_first() {
        let a = assessed(vec![Signal::IdenticalReply], 1);
        // Flashback and meta-analysis both cost 1; the older row wins.
        assert_eq!(choose(&all(), &a, &[]), [id_of(Mechanism::Flashback)]);
        // Applied recently: the next cheapest.
        assert_eq!(
            choose(&all(), &a, &[id_of(Mechanism::Flashback)]),
            [id_of(Mechanism::MetaAnalysis)]
        );
        // A better rating wins at equal cost.
        let mut rated = all();
        for c in &mut rated {
            if c.mechanism == Mechanism::MetaAnalysis {
                c.rating = Some(2.0);
            }
        }
        assert_eq!(choose(&rated, &a, &[]), [id_of(Mechanism::MetaAnalysis)]);
        // A poor rating weighs like cost: the class's strategies of cost 1
        // rated -3 wait behind a dearer unrated one.
        let mut poor = all();
        for c in &mut poor {
            if c.cost == 1 {
                c.rating = Some(-3.0);
            }
        }
        let picked = choose(&poor, &a, &[]);
        let cost_of = |id: i64| poor.iter().find(|c| c.id == id).unwrap().cost;
        assert!(picked.len() == 1 && cost_of(picked[0]) > 1, "{picked:?}");
        let quiet = assessed(vec![Signal::NoStimuli { ticks: 10 }], 1);
        assert_eq!(choose(&all(), &quiet, &[]), [id_of(Mechanism::AskFriends)]);
    }

    #[test]
    fn nothing_is_chosen_without_a_stall_or_without_fresh_candidates() {
        assert!(choose(&all(), &Assessment::default(), &[]).is_empty());
        let a = assessed(vec![Signal::NoStimuli { ticks: 10 }], 1);
        let external: Vec<i64> = all()
            .iter()
            .filter(|c| c.class == StrategyClass::ExternalStimulation)
            .map(|c| c.id)
            .collect();
        assert!(choose(&all(), &a, &external).is_empty());
        assert!(choose(&[], &a, &[]).is_empty());
    }

    #[test]
    fn a_class_without_candidates_hands_over_to_the_next_diagnosed() {
        let a = assessed(
            vec![
                Signal::NoStimuli { ticks: 10 },
                Signal::CommandStreak { tool: "x".into() },
            ],
            1,
        );
        let no_external: Vec<Candidate> = all()
            .into_iter()
            .filter(|c| c.class != StrategyClass::ExternalStimulation)
            .collect();
        // The cheapest context switch: a creative frame shift (cost 2).
        assert_eq!(
            choose(&no_external, &a, &[]),
            [id_of(Mechanism::CreativeIntervention)]
        );
    }

    #[test]
    fn an_escalated_stall_combines_classes() {
        let a = assessed(
            vec![
                Signal::NoStimuli { ticks: 10 },
                Signal::CommandStreak { tool: "x".into() },
            ],
            3,
        );
        assert_eq!(
            choose(&all(), &a, &[]),
            [
                id_of(Mechanism::AskFriends),
                id_of(Mechanism::CreativeIntervention)
            ]
        );
        // Only one class diagnosed: the cheapest of another class joins,
        // never a radical pause that was not diagnosed.
        let one = assessed(vec![Signal::IdenticalReply], 3);
        assert_eq!(
            choose(&all(), &one, &[]),
            [id_of(Mechanism::AskFriends), id_of(Mechanism::Flashback)]
        );
        let only_pause_left: Vec<Candidate> = all()
            .into_iter()
            .filter(|c| {
                matches!(
                    c.class,
                    StrategyClass::InternalRestructuring | StrategyClass::RadicalPause
                )
            })
            .collect();
        assert_eq!(
            choose(&only_pause_left, &one, &[]),
            [id_of(Mechanism::Flashback)]
        );
        // Fatigue: a pause is among the picks, at most MAX_COMBINED.
        let tired = assessed(
            vec![
                Signal::NoStimuli { ticks: 30 },
                Signal::Alternation {
                    a: "a".into(),
                    b: "b".into(),
                },
                Signal::IdenticalReply,
            ],
            FATIGUE_STALL,
        );
        let picked = choose(&all(), &tired, &[]);
        assert_eq!(
            picked,
            [
                id_of(Mechanism::AskFriends),
                id_of(Mechanism::CreativeIntervention),
                id_of(Mechanism::LongPause)
            ]
        );
        assert!(picked.len() <= MAX_COMBINED);
    }

    #[test]
    fn an_application_is_rated_by_novelty_before_and_after() {
        assert_eq!(rate(&[0.1, 0.1], &[0.4, 0.4]), 3);
        assert_eq!(rate(&[0.0], &[0.9]), 3);
        assert_eq!(rate(&[0.5], &[0.3]), -2);
        assert_eq!(rate(&[0.2, 0.4], &[0.3]), 0);
        assert_eq!(rate(&[0.3], &[0.0]), -3);
        assert_eq!(rate(&[], &[0.9]), 0);
        assert_eq!(rate(&[0.1], &[f64::NAN]), 0);
    }
}
