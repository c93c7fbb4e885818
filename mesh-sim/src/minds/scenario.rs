//! A minds scenario (`mesh-sim minds SCENARIO.toml`): the mesh part — nodes,
//! friend graph, links, faults, engine timings, exactly the fields and
//! checks of a `mesh-sim run` scenario — plus how often the minds think,
//! each one's scripted policy and the real models some minds use instead
//! ([`super::models`]). Read from TOML and checked before anything runs;
//! every error is one line naming the field.

use std::path::Path;

use serde::Deserialize;

use super::audience::KnowhowAudience;
use super::models::ModelSpec;
use crate::scenario::{
    AudienceMix, EngineOverrides, Faults, GraphSpec, GroupSpec, ItemsSpec, Links, Nodes, Scenario,
};

/// Most minds in one scenario: each holds a SQLite database (three
/// connections, three threads) and a cognitive core; 10,000 is twice the
/// town scenario and about the most a 2-core machine's thread and file
/// limits allow.
pub const MAX_MINDS: usize = 10_000;

/// Shortest tick interval: one simulated minute. Shorter ticks only add
/// model calls without changing what the policy can express.
pub const MIN_TICK_MS: u64 = 60_000;

/// One minds set-up, as read from TOML.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MindsScenario {
    /// Short name.
    pub name: String,
    /// The seed when the command line gives none.
    pub seed: u64,
    /// Simulated time, ms.
    pub duration_ms: u64,
    /// Simulated time between two ticks of a mind, ms (600,000 = ten
    /// minutes); a strategy's pause may make one mind skip ticks.
    pub tick_ms: u64,
    /// When every fault is over; default `duration_ms`.
    #[serde(default)]
    pub heal_ms: Option<u64>,
    /// The minds (as `mesh-sim run`'s `[nodes]`).
    pub nodes: Nodes,
    /// Who is friends with whom.
    pub graph: GraphSpec,
    /// Link model.
    #[serde(default)]
    pub links: Links,
    /// Faults.
    #[serde(default)]
    pub faults: Faults,
    /// Engine timing overrides.
    #[serde(default)]
    pub engine: EngineOverrides,
    /// Every mind's scripted model.
    pub policy: Policy,
    /// Real models some minds think with instead (`[[models]]`, see
    /// [`ModelSpec`]); none by default.
    #[serde(default)]
    pub models: Vec<ModelSpec>,
}

/// The scripted model of every mind (seeded per mind): it drifts into
/// repeating itself, escapes when a strategy is applied with that
/// strategy's effectiveness, writes strategies and shares those that
/// worked. Probabilities are per tick unless said otherwise.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Chance a thinking mind starts repeating itself.
    pub drift: f64,
    /// Chance a repeating mind gets out on its own, no strategy needed.
    #[serde(default)]
    pub self_escape: f64,
    /// Chance the mind's user writes it a note (the detectors' stimuli).
    #[serde(default = "default_user_notes")]
    pub user_notes: f64,
    /// Escape chance when a seeded strategy of each class is applied.
    pub effectiveness: ClassEffectiveness,
    /// Chance, on each escape, that the mind writes a new strategy of its own.
    pub invent: f64,
    /// A new strategy's true effectiveness is drawn uniformly from this
    /// range `[low, high]`.
    pub invented_effectiveness: [f64; 2],
    /// An own strategy is shared once its mean rating reaches this (−3..=3).
    #[serde(default = "default_share_at")]
    pub share_at_rating: f64,
    /// Chance, on a thinking tick, that the mind adopts the best-rated
    /// strategy a friend shared: it writes a copy the core can choose (a
    /// received row has no mechanism tag, so the core never picks it).
    #[serde(default)]
    pub adopt: f64,
    /// A friend's strategy is adopted only once its mean rating, as the
    /// ratings that reached this mind say, is at least this (−3..=3).
    #[serde(default = "default_share_at")]
    pub adopt_at_rating: f64,
    /// Share of minds that are adversaries (0..=1, drawn by seed): each
    /// shares a useless strategy (it never gets anyone out of a loop) and
    /// keeps rating it +3, as a tampered node could.
    #[serde(default)]
    pub adversaries: f64,
    /// Who every mind's know-how goes to: `public` (the default),
    /// `friends` or `club` (see [`KnowhowAudience`]).
    #[serde(default)]
    pub audience: KnowhowAudience,
}

fn default_user_notes() -> f64 {
    0.3
}

fn default_share_at() -> f64 {
    1.0
}

/// Escape chance per strategy class (seed 003's four classes).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassEffectiveness {
    /// `external_stimulation`.
    pub external_stimulation: f64,
    /// `context_switch`.
    pub context_switch: f64,
    /// `internal_restructuring`.
    pub internal_restructuring: f64,
    /// `radical_pause`.
    pub radical_pause: f64,
}

impl ClassEffectiveness {
    /// The chance for a stored class name; an unknown class escapes never.
    pub fn of(&self, class: &str) -> f64 {
        match class {
            "external_stimulation" => self.external_stimulation,
            "context_switch" => self.context_switch,
            "internal_restructuring" | "internal_rebuild" => self.internal_restructuring,
            "radical_pause" => self.radical_pause,
            _ => 0.0,
        }
    }
}

/// A bad minds scenario: one line naming the field.
#[derive(Debug, thiserror::Error)]
pub enum MindsScenarioError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// Not TOML, an unknown field or a wrong type.
    #[error("scenario: {0}")]
    Parse(String),
    /// A field has a value the simulator cannot use.
    #[error("scenario field `{field}`: {detail}")]
    Invalid {
        /// Dotted field path.
        field: String,
        /// What would be accepted.
        detail: String,
    },
}

fn invalid(field: &str, detail: impl Into<String>) -> MindsScenarioError {
    MindsScenarioError::Invalid {
        field: field.to_owned(),
        detail: detail.into(),
    }
}

impl MindsScenario {
    /// Parses and checks a minds scenario.
    pub fn from_toml(text: &str) -> Result<MindsScenario, MindsScenarioError> {
        let s: MindsScenario = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|span| text[..span.start.min(text.len())].lines().count().max(1));
            let message = e.message().replace('\n', " ");
            MindsScenarioError::Parse(match line {
                Some(l) => format!("line {l}: {}", message.trim()),
                None => message.trim().to_owned(),
            })
        })?;
        s.validate()?;
        Ok(s)
    }

    /// Reads, parses and checks a minds scenario file.
    pub fn load(path: &Path) -> Result<MindsScenario, MindsScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|source| MindsScenarioError::Read {
            path: path.to_owned(),
            source,
        })?;
        MindsScenario::from_toml(&text)
    }

    /// The number of minds.
    pub fn minds(&self) -> usize {
        self.nodes.count
    }

    /// The mesh part as a `mesh-sim run` scenario that publishes no planned
    /// items: the minds publish theirs while the run goes. Under
    /// `policy.audience = "club"` it has one club holding every mind.
    pub fn mesh(&self) -> Scenario {
        let mut s = self.mesh_with_items(0);
        s.sample_ms = Some(self.duration_ms);
        s
    }

    fn mesh_with_items(&self, count: usize) -> Scenario {
        Scenario {
            name: self.name.clone(),
            seed: self.seed,
            duration_ms: self.duration_ms,
            heal_ms: self.heal_ms.unwrap_or(self.duration_ms),
            sample_ms: None,
            nodes: self.nodes.clone(),
            graph: self.graph.clone(),
            groups: Vec::<GroupSpec>::new(),
            items: ItemsSpec {
                count,
                start_ms: 0,
                end_ms: 0,
                text_bytes: 1,
                max_hops: 1,
                audience: AudienceMix::default(),
                authors: Vec::new(),
            },
            links: self.links.clone(),
            faults: self.faults.clone(),
            engine: self.engine.clone(),
            club: self.policy.audience.club(self.nodes.count),
        }
    }

    /// Checks every field; the error names it.
    pub fn validate(&self) -> Result<(), MindsScenarioError> {
        if !(2..=MAX_MINDS).contains(&self.nodes.count) {
            return Err(invalid(
                "nodes.count",
                format!("{} is not in 2..={MAX_MINDS}", self.nodes.count),
            ));
        }
        if self.tick_ms < MIN_TICK_MS || self.tick_ms > self.duration_ms {
            return Err(invalid(
                "tick_ms",
                format!("must be in {MIN_TICK_MS}..=duration_ms"),
            ));
        }
        // The mesh part is checked by `mesh-sim run`'s own rules; its items
        // section is ours (none), so it is checked with one placeholder item.
        self.mesh_with_items(1).validate().map_err(|e| match e {
            crate::SimError::InvalidScenario { field, detail } => invalid(field, detail),
            other => MindsScenarioError::Parse(other.to_string()),
        })?;
        self.policy.validate()?;
        super::models::validate(&self.models, self.nodes.count)
    }
}

impl Policy {
    fn validate(&self) -> Result<(), MindsScenarioError> {
        let e = &self.effectiveness;
        let chances = [
            ("policy.drift", self.drift),
            ("policy.self_escape", self.self_escape),
            ("policy.user_notes", self.user_notes),
            ("policy.invent", self.invent),
            ("policy.adopt", self.adopt),
            ("policy.adversaries", self.adversaries),
            (
                "policy.effectiveness.external_stimulation",
                e.external_stimulation,
            ),
            ("policy.effectiveness.context_switch", e.context_switch),
            (
                "policy.effectiveness.internal_restructuring",
                e.internal_restructuring,
            ),
            ("policy.effectiveness.radical_pause", e.radical_pause),
            (
                "policy.invented_effectiveness",
                self.invented_effectiveness[0],
            ),
            (
                "policy.invented_effectiveness",
                self.invented_effectiveness[1],
            ),
        ];
        for (field, value) in chances {
            if !(0.0..=1.0).contains(&value) {
                return Err(invalid(
                    field,
                    format!("{value} is not a probability in 0..=1"),
                ));
            }
        }
        let [low, high] = self.invented_effectiveness;
        if low > high {
            return Err(invalid(
                "policy.invented_effectiveness",
                "needs [low, high] with low <= high",
            ));
        }
        for (field, value) in [
            ("policy.share_at_rating", self.share_at_rating),
            ("policy.adopt_at_rating", self.adopt_at_rating),
        ] {
            if !(-3.0..=3.0).contains(&value) {
                return Err(invalid(field, format!("{value} is not in -3..=3")));
            }
        }
        Ok(())
    }
}
