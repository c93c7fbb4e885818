//! Stagnation detectors beyond the seed's single identity check (seed 003
//! "Признаки когнитивной стагнации"; issue 9): an identical reply, similar
//! replies over a window (by embeddings where the backend gives them, seed:
//! "Высокое сходство эмбеддингов", else by words), the same command several ticks running,
//! two command patterns alternating, no new concepts or links for N ticks,
//! no external stimuli for N ticks — and a stall counter with hysteresis
//! (+1 on a stalled tick, −1 on progress, floor 0) that escalates at 3.
//! A plain state machine fed one [`Observation`] per tick.

use std::collections::VecDeque;

use crate::cognition::reflex::is_repeat;
use crate::cognition::similarity::{likeness, usable};

/// Only the start of a reply is kept for comparison: enough to tell two
/// replies apart, bounded memory per tick.
pub const MAX_KEPT_REPLY_CHARS: usize = 4_000;

/// The stall counter stops here, so a long stall recovers in a bounded
/// number of good ticks; above [`crate::cognition::strategy::FATIGUE_STALL`]
/// so fatigue can be seen.
pub const MAX_STALL: u32 = 10;

/// What one tick did, as the detectors see it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Observation {
    /// The tick's number.
    pub tick: u64,
    /// The model's reply.
    pub reply: String,
    /// The tools the reply called, in order.
    pub commands: Vec<String>,
    /// Concepts and links added this tick.
    pub graph_growth: u32,
    /// New notes and user messages that arrived this tick.
    pub stimuli: u32,
    /// The cognitive evaluation's novelty, 0 ..= 1. 0 counts as an
    /// identical reply (seed §5: "идентичен (новизна = 0)"); pass 1.0 when
    /// the reply was not evaluated.
    pub novelty: f64,
    /// The reply's embedding, when the backend gave one: replies are then
    /// compared by meaning (cosine) with those that also have one.
    pub embedding: Option<Vec<f32>>,
}

/// One sign of stagnation.
#[derive(Debug, Clone, PartialEq)]
pub enum Signal {
    /// The reply repeats an earlier one of the window, or its novelty is 0.
    IdenticalReply,
    /// The reply is close to an earlier one of the window: by the cosine
    /// of their embeddings, or (without them) by shared words.
    SimilarReplies {
        /// The highest likeness found, 0 ..= 1.
        similarity: f64,
        /// Whether embeddings measured it (else word overlap).
        semantic: bool,
    },
    /// The same tool was called on every one of the last ticks.
    CommandStreak {
        /// The tool.
        tool: String,
    },
    /// The ticks' commands alternate between two patterns.
    Alternation {
        /// One pattern (tools joined by ",").
        a: String,
        /// The other.
        b: String,
    },
    /// No concept or link was added for this many ticks.
    NoGraphGrowth {
        /// Ticks without growth, this one included.
        ticks: u32,
    },
    /// No note or user message arrived for this many ticks.
    NoStimuli {
        /// Ticks without stimuli, this one included.
        ticks: u32,
    },
}

/// The detectors' settings; [`Default`] gives the named defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct DetectorConfig {
    /// A reply is compared with this many previous ones.
    pub similarity_window: usize,
    /// Word overlap from which two replies count as similar.
    pub similarity_threshold: f64,
    /// Embedding cosine from which two replies count as similar.
    pub embedding_threshold: f64,
    /// The same tool this many ticks running is a streak.
    pub streak: usize,
    /// A/B alternation over this many ticks (even, ≥ 4).
    pub alternation: usize,
    /// This many ticks without new concepts or links is a stall.
    pub no_growth_ticks: u32,
    /// This many ticks without notes or user messages is a stall.
    pub no_stimuli_ticks: u32,
    /// The stall counter escalates (several mechanisms at once) here.
    pub escalate_at: u32,
}

/// Three previous replies: a loop of period 2 or 3 is inside the window.
pub const DEFAULT_SIMILARITY_WINDOW: usize = 3;
/// 0.8 word overlap: a reworded repeat, not a new thought on the same topic
/// (which shares maybe half the words).
pub const DEFAULT_SIMILARITY_THRESHOLD: f64 = 0.8;
/// 0.9 cosine: sentence-embedding models put paraphrases at about 0.85–0.95
/// and a new thought on the same topic at 0.6–0.8, so 0.9 catches the
/// reworded repeat words miss without calling every on-topic reply a loop.
pub const DEFAULT_EMBEDDING_THRESHOLD: f64 = 0.9;
/// Issue 9: "the same command 3 ticks running".
pub const DEFAULT_STREAK: usize = 3;
/// Issue 9: "A/B alternation over 6 ticks".
pub const DEFAULT_ALTERNATION: usize = 6;
/// Ten ticks (five minutes at the default pause) without a new concept or
/// link: thinking that adds nothing to the graph.
pub const DEFAULT_NO_GROWTH_TICKS: u32 = 10;
/// Ten ticks without a note or a user message: the world is quiet.
pub const DEFAULT_NO_STIMULI_TICKS: u32 = 10;
/// Issue 9: the stall counter "escalates at 3".
pub const DEFAULT_ESCALATE_AT: u32 = 3;

impl Default for DetectorConfig {
    fn default() -> Self {
        Self {
            similarity_window: DEFAULT_SIMILARITY_WINDOW,
            similarity_threshold: DEFAULT_SIMILARITY_THRESHOLD,
            embedding_threshold: DEFAULT_EMBEDDING_THRESHOLD,
            streak: DEFAULT_STREAK,
            alternation: DEFAULT_ALTERNATION,
            no_growth_ticks: DEFAULT_NO_GROWTH_TICKS,
            no_stimuli_ticks: DEFAULT_NO_STIMULI_TICKS,
            escalate_at: DEFAULT_ESCALATE_AT,
        }
    }
}

/// What the detectors made of one tick.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Assessment {
    /// The signs of stagnation seen on this tick.
    pub signals: Vec<Signal>,
    /// The stall counter after this tick.
    pub stall: u32,
    /// The counter reached `escalate_at`: combine mechanisms.
    pub escalate: bool,
}

/// One tick's remembered part.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
struct Past {
    reply: String,
    commands: Vec<String>,
    /// Not stored: after a restart the window compares by words until new
    /// replies bring vectors (a stored window of 4,096-float vectors would
    /// be most of every tick's write).
    #[serde(skip)]
    embedding: Option<Vec<f32>>,
}

/// What the detectors remember between ticks: the last few ticks and the
/// counters. The node stores it (SQLite) after each tick, so a node the OS
/// killed goes on where it was instead of forgetting a stall.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct DetectorMemory {
    past: VecDeque<Past>,
    no_growth: u32,
    no_stimuli: u32,
    stall: u32,
}

impl DetectorMemory {
    /// The stall counter.
    pub fn stall(&self) -> u32 {
        self.stall
    }
}

/// The detectors' state: the last few ticks and the counters.
pub struct Detectors {
    cfg: DetectorConfig,
    mem: DetectorMemory,
}

impl Detectors {
    /// Fresh detectors.
    pub fn new(cfg: DetectorConfig) -> Self {
        Self::resume(cfg, DetectorMemory::default())
    }

    /// Detectors that go on from `mem` (as stored by the node), bounded
    /// again by `cfg` so a stored value cannot grow them.
    pub fn resume(cfg: DetectorConfig, mut mem: DetectorMemory) -> Self {
        mem.stall = mem.stall.min(MAX_STALL);
        for p in &mut mem.past {
            if p.reply.chars().count() > MAX_KEPT_REPLY_CHARS {
                p.reply = p.reply.chars().take(MAX_KEPT_REPLY_CHARS).collect();
            }
        }
        let mut d = Self { cfg, mem };
        while d.mem.past.len() > d.keep() {
            d.mem.past.pop_front();
        }
        d
    }

    /// What to store to resume later.
    pub fn memory(&self) -> &DetectorMemory {
        &self.mem
    }

    /// How many past ticks are kept: the longest look-back of any detector.
    fn keep(&self) -> usize {
        self.cfg
            .similarity_window
            .max(self.cfg.streak)
            .max(self.cfg.alternation)
            .max(1)
    }

    /// Takes one tick, says what it shows and moves the stall counter.
    pub fn observe(&mut self, o: Observation) -> Assessment {
        let reply: String = o.reply.chars().take(MAX_KEPT_REPLY_CHARS).collect();
        let mut signals = Vec::new();

        let embedding = o.embedding.filter(|v| usable(v));
        let window = self.mem.past.iter().rev().take(self.cfg.similarity_window);
        let mut identical = o.novelty <= 0.0;
        let mut similar: Option<(f64, bool)> = None;
        for p in window {
            identical |= is_repeat(&p.reply, &reply);
            let l = likeness(
                &p.reply,
                p.embedding.as_deref(),
                &reply,
                embedding.as_deref(),
            );
            let threshold = if l.semantic {
                self.cfg.embedding_threshold
            } else {
                self.cfg.similarity_threshold
            };
            if l.value >= threshold && similar.is_none_or(|(v, _)| l.value > v) {
                similar = Some((l.value, l.semantic));
            }
        }
        if identical {
            signals.push(Signal::IdenticalReply);
        } else if let Some((similarity, semantic)) = similar {
            signals.push(Signal::SimilarReplies {
                similarity,
                semantic,
            });
        }

        self.mem.past.push_back(Past {
            reply,
            commands: o.commands,
            embedding,
        });
        while self.mem.past.len() > self.keep() {
            self.mem.past.pop_front();
        }
        if let Some(tool) = self.streak() {
            signals.push(Signal::CommandStreak { tool });
        }
        if let Some((a, b)) = self.alternation() {
            signals.push(Signal::Alternation { a, b });
        }

        self.mem.no_growth = if o.graph_growth == 0 {
            self.mem.no_growth.saturating_add(1)
        } else {
            0
        };
        if self.mem.no_growth >= self.cfg.no_growth_ticks {
            signals.push(Signal::NoGraphGrowth {
                ticks: self.mem.no_growth,
            });
        }
        self.mem.no_stimuli = if o.stimuli == 0 {
            self.mem.no_stimuli.saturating_add(1)
        } else {
            0
        };
        if self.mem.no_stimuli >= self.cfg.no_stimuli_ticks {
            signals.push(Signal::NoStimuli {
                ticks: self.mem.no_stimuli,
            });
        }

        self.mem.stall = if signals.is_empty() {
            self.mem.stall.saturating_sub(1)
        } else {
            (self.mem.stall + 1).min(MAX_STALL)
        };
        Assessment {
            signals,
            stall: self.mem.stall,
            escalate: self.mem.stall >= self.cfg.escalate_at,
        }
    }

    /// A tool called on each of the last `streak` ticks (the first such
    /// tool of the newest tick).
    fn streak(&self) -> Option<String> {
        let n = self.cfg.streak;
        if n == 0 || self.mem.past.len() < n {
            return None;
        }
        let last: Vec<&Past> = self.mem.past.iter().rev().take(n).collect();
        last[0]
            .commands
            .iter()
            .find(|tool| last[1..].iter().all(|p| p.commands.contains(tool)))
            .cloned()
    }

    /// Over the last `alternation` ticks the command patterns go A, B, A,
    /// B… with A ≠ B and both non-empty.
    fn alternation(&self) -> Option<(String, String)> {
        let n = self.cfg.alternation;
        if n < 2 || self.mem.past.len() < n {
            return None;
        }
        let patterns: Vec<String> = self
            .mem
            .past
            .iter()
            .skip(self.mem.past.len() - n)
            .map(|p| p.commands.join(","))
            .collect();
        let (a, b) = (&patterns[0], &patterns[1]);
        let alternates = !a.is_empty()
            && !b.is_empty()
            && a != b
            && patterns
                .iter()
                .enumerate()
                .all(|(i, p)| p == if i % 2 == 0 { a } else { b });
        alternates.then(|| (a.clone(), b.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A productive tick: a fresh reply, different commands, graph growth,
    /// a stimulus.
    fn productive(tick: u64) -> Observation {
        let topics = [
            "mesh", "gossip", "storage", "phones", "models", "clubs", "notes",
        ];
        let topic = topics[tick as usize % topics.len()];
        Observation {
            tick,
            reply: format!(
                "tick {tick}: a new thought about {topic} number {}",
                tick * 7
            ),
            commands: vec![format!("tool{tick}")],
            graph_growth: 1,
            stimuli: 1,
            novelty: 0.6,
            embedding: None,
        }
    }

    fn run(d: &mut Detectors, obs: impl IntoIterator<Item = Observation>) -> Vec<Assessment> {
        obs.into_iter().map(|o| d.observe(o)).collect()
    }

    fn has(a: &Assessment, f: impl Fn(&Signal) -> bool) -> bool {
        a.signals.iter().any(f)
    }

    #[test]
    fn a_productive_run_fires_nothing() {
        let mut d = Detectors::new(DetectorConfig::default());
        for a in run(&mut d, (0..30).map(productive)) {
            assert_eq!(a, Assessment::default(), "{a:?}");
        }
    }

    #[test]
    fn detectors_resumed_from_their_stored_memory_go_on_where_they_were() {
        let stalled = |tick| Observation {
            tick,
            reply: "round and round".into(),
            commands: vec!["diary_list".into()],
            ..Default::default()
        };
        let mut d = Detectors::new(DetectorConfig::default());
        run(&mut d, (1..=2).map(stalled));
        let json = serde_json::to_string(d.memory()).unwrap();
        let mut resumed = Detectors::resume(
            DetectorConfig::default(),
            serde_json::from_str(&json).unwrap(),
        );
        let mut fresh = Detectors::new(DetectorConfig::default());
        let a = resumed.observe(stalled(3));
        assert_eq!(a.stall, 3, "{a:?}");
        assert!(
            a.escalate,
            "the third stalled tick escalates after a restart too"
        );
        assert!(has(&a, |s| matches!(s, Signal::CommandStreak { .. })));
        assert!(!fresh.observe(stalled(3)).escalate, "forgetting would not");
        // A stored value cannot grow them past their bounds.
        let mut big = resumed.memory().clone();
        big.stall = 1_000;
        assert_eq!(
            Detectors::resume(DetectorConfig::default(), big)
                .memory()
                .stall(),
            MAX_STALL
        );
    }

    #[test]
    fn an_identical_reply_fires() {
        let mut d = Detectors::new(DetectorConfig::default());
        let mut second = productive(2);
        second.reply = productive(1).reply.to_uppercase();
        let a = run(&mut d, [productive(1), second]);
        assert!(!has(&a[0], |s| *s == Signal::IdenticalReply));
        assert_eq!(a[1].signals, [Signal::IdenticalReply]);
        // Novelty 0 from the evaluation counts as identical too.
        let mut zero = productive(3);
        zero.novelty = 0.0;
        assert_eq!(d.observe(zero).signals, [Signal::IdenticalReply]);
    }

    #[test]
    fn similar_replies_within_the_window_fire() {
        let mut d = Detectors::new(DetectorConfig::default());
        let base = "we should sync the notes with friends over the mesh each hour and log it";
        let mut a = productive(1);
        a.reply = base.to_owned();
        let mut b = productive(3);
        b.reply = format!("{base} today");
        let got = run(&mut d, [a, productive(2), b]);
        assert!(matches!(
            got[2].signals.as_slice(),
            [Signal::SimilarReplies { similarity, semantic: false }] if *similarity >= DEFAULT_SIMILARITY_THRESHOLD
        ));
        // Out of the window (3 replies back) it no longer counts.
        let mut d = Detectors::new(DetectorConfig::default());
        let mut a = productive(1);
        a.reply = base.to_owned();
        let mut far = productive(5);
        far.reply = format!("{base} today");
        let got = run(
            &mut d,
            [a, productive(2), productive(3), productive(4), far],
        );
        assert!(got[4].signals.is_empty(), "{:?}", got[4]);
    }

    #[test]
    fn embeddings_catch_a_reworded_repeat_and_clear_an_on_topic_thought() {
        // No word in common, the same meaning: only the vectors can tell.
        let with = |t: u64, reply: &str, v: [f32; 3]| Observation {
            reply: reply.into(),
            embedding: Some(v.to_vec()),
            ..productive(t)
        };
        let mut d = Detectors::new(DetectorConfig::default());
        let got = run(
            &mut d,
            [
                with(1, "sync notes hourly with friends", [1.0, 0.1, 0.0]),
                with(
                    2,
                    "every sixty minutes, replicate memos to peers",
                    [0.98, 0.12, 0.01],
                ),
            ],
        );
        assert!(
            matches!(
                got[1].signals.as_slice(),
                [Signal::SimilarReplies { similarity, semantic: true }]
                    if *similarity >= DEFAULT_EMBEDDING_THRESHOLD
            ),
            "{:?}",
            got[1]
        );
        // Many shared words, far apart in meaning: the vectors clear it,
        // though words alone would call it a repeat.
        let base = "we should sync the notes with friends over the mesh each hour and log it";
        let mut d = Detectors::new(DetectorConfig::default());
        let got = run(
            &mut d,
            [
                with(1, base, [1.0, 0.0, 0.0]),
                with(2, &format!("{base} today"), [0.0, 1.0, 0.0]),
            ],
        );
        assert!(got[1].signals.is_empty(), "{:?}", got[1]);
        // A reply without a vector (the backend failed this once) is
        // compared by words.
        let mut plain = productive(3);
        plain.reply = format!("{base} now");
        let a = d.observe(plain);
        assert!(
            matches!(
                a.signals.as_slice(),
                [Signal::SimilarReplies {
                    semantic: false,
                    ..
                }]
            ),
            "{a:?}"
        );
        // A vector that cannot be kept (not finite) is dropped, not compared.
        let mut d = Detectors::new(DetectorConfig::default());
        let got = run(
            &mut d,
            [
                with(1, "alpha beta", [1.0, 0.0, 0.0]),
                with(2, "gamma delta", [f32::NAN, 1.0, 0.0]),
            ],
        );
        assert!(got[1].signals.is_empty(), "{:?}", got[1]);
    }

    #[test]
    fn the_same_command_three_ticks_running_fires() {
        let mut d = Detectors::new(DetectorConfig::default());
        let with = |t: u64, cmds: &[&str]| Observation {
            commands: cmds.iter().map(|c| (*c).to_owned()).collect(),
            ..productive(t)
        };
        let got = run(
            &mut d,
            [
                with(1, &["diary_list"]),
                with(2, &["goals_list", "diary_list"]),
                with(3, &["diary_list"]),
            ],
        );
        assert!(got[1].signals.is_empty());
        assert_eq!(
            got[2].signals,
            [Signal::CommandStreak {
                tool: "diary_list".into()
            }]
        );
        // Broken by one tick without it.
        let got = run(&mut d, [with(4, &["notes_list"]), with(5, &["diary_list"])]);
        assert!(got.iter().all(|a| a.signals.is_empty()), "{got:?}");
    }

    #[test]
    fn an_ab_alternation_over_six_ticks_fires() {
        let mut d = Detectors::new(DetectorConfig::default());
        let with = |t: u64, cmd: &str| Observation {
            commands: vec![cmd.to_owned()],
            ..productive(t)
        };
        let got = run(
            &mut d,
            (0..6).map(|t| {
                with(
                    t,
                    if t % 2 == 0 {
                        "diary_list"
                    } else {
                        "notes_list"
                    },
                )
            }),
        );
        assert!(got[..5].iter().all(|a| a.signals.is_empty()), "{got:?}");
        assert_eq!(
            got[5].signals,
            [Signal::Alternation {
                a: "diary_list".into(),
                b: "notes_list".into()
            }]
        );
        // A, B, A, B, A, C is no alternation.
        let mut d = Detectors::new(DetectorConfig::default());
        let cmds = ["a_x", "b_x", "a_x", "b_x", "a_x", "c_x"];
        let got = run(
            &mut d,
            cmds.iter().enumerate().map(|(t, c)| with(t as u64, c)),
        );
        assert!(got.iter().all(|a| a.signals.is_empty()), "{got:?}");
    }

    #[test]
    fn no_graph_growth_for_n_ticks_fires_and_growth_resets_it() {
        let cfg = DetectorConfig {
            no_growth_ticks: 3,
            ..DetectorConfig::default()
        };
        let mut d = Detectors::new(cfg);
        let flat = |t: u64| Observation {
            graph_growth: 0,
            ..productive(t)
        };
        let got = run(&mut d, [flat(1), flat(2), flat(3), flat(4)]);
        assert!(got[1].signals.is_empty());
        assert_eq!(got[2].signals, [Signal::NoGraphGrowth { ticks: 3 }]);
        assert_eq!(got[3].signals, [Signal::NoGraphGrowth { ticks: 4 }]);
        assert!(d.observe(productive(5)).signals.is_empty());
        assert!(d.observe(flat(6)).signals.is_empty());
    }

    #[test]
    fn no_stimuli_for_n_ticks_fires_and_a_note_resets_it() {
        let cfg = DetectorConfig {
            no_stimuli_ticks: 2,
            ..DetectorConfig::default()
        };
        let mut d = Detectors::new(cfg);
        let quiet = |t: u64| Observation {
            stimuli: 0,
            ..productive(t)
        };
        let got = run(&mut d, [quiet(1), quiet(2)]);
        assert!(got[0].signals.is_empty());
        assert_eq!(got[1].signals, [Signal::NoStimuli { ticks: 2 }]);
        assert!(d.observe(productive(3)).signals.is_empty());
    }

    #[test]
    fn the_stall_counter_has_hysteresis_and_escalates_at_three() {
        let mut d = Detectors::new(DetectorConfig::default());
        let stuck = |t: u64| Observation {
            reply: "the same".into(),
            ..productive(t)
        };
        let stalls: Vec<(u32, bool)> = run(
            &mut d,
            [
                productive(0),
                stuck(1),
                stuck(2),
                stuck(3),
                productive(4),
                stuck(5),
                productive(6),
                productive(7),
                productive(8),
                productive(9),
            ],
        )
        .iter()
        .map(|a| (a.stall, a.escalate))
        .collect();
        assert_eq!(
            stalls,
            [
                (0, false),
                (0, false), // the first "the same" is new
                (1, false),
                (2, false),
                (1, false),
                (2, false), // "the same" again, within the window
                (1, false),
                (0, false),
                (0, false),
                (0, false),
            ]
        );
        let mut d = Detectors::new(DetectorConfig::default());
        let got = run(&mut d, (0..4).map(stuck));
        assert_eq!(got[3].stall, 3);
        assert!(got[3].escalate);
        // One good tick lowers the counter by one, not to zero.
        let a = d.observe(productive(10));
        assert_eq!((a.stall, a.escalate), (2, false));
    }

    #[test]
    fn the_stall_counter_and_the_history_are_bounded() {
        let mut d = Detectors::new(DetectorConfig::default());
        let stuck = |t: u64| Observation {
            reply: "x".repeat(MAX_KEPT_REPLY_CHARS * 2),
            ..productive(t)
        };
        let last = run(&mut d, (0..50).map(stuck)).pop().unwrap();
        assert_eq!(last.stall, MAX_STALL);
        assert!(d.mem.past.len() <= DEFAULT_ALTERNATION);
        assert!(
            d.mem
                .past
                .iter()
                .all(|p| p.reply.chars().count() == MAX_KEPT_REPLY_CHARS)
        );
        const { assert!(MAX_STALL > crate::cognition::strategy::FATIGUE_STALL) };
    }
}
