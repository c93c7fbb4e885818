//! A scenario: the nodes, their friend graph and groups, the items to
//! publish, the link model, the faults and the run length, read from TOML
//! and checked (`scenario_check.rs`) before anything runs. Every field's
//! meaning is in `docs/mesh-sim.md`; times are virtual ms from the start.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::SimError;

/// One simulation set-up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name, used in the report.
    pub name: String,
    /// The seed used when the command line gives none.
    pub seed: u64,
    /// Total virtual time simulated.
    pub duration_ms: u64,
    /// When every fault is over: partitions healed, phones back online,
    /// crashed nodes restarted. Delivery is judged at `duration_ms`.
    pub heal_ms: u64,
    /// Time-series step; default `duration_ms / DEFAULT_SAMPLES`.
    #[serde(default)]
    pub sample_ms: Option<u64>,
    /// The nodes.
    pub nodes: Nodes,
    /// Who is friends with whom.
    pub graph: GraphSpec,
    /// Named groups; friends in the same group tag each other with it.
    #[serde(default)]
    pub groups: Vec<GroupSpec>,
    /// What gets published.
    pub items: ItemsSpec,
    /// The link model.
    #[serde(default)]
    pub links: Links,
    /// Faults injected before `heal_ms`.
    #[serde(default)]
    pub faults: Faults,
    /// Engine timing overrides (defaults are the engine's own).
    #[serde(default)]
    pub engine: EngineOverrides,
    /// The one club of a club scenario (`club` items go to its members).
    #[serde(default)]
    pub club: Option<crate::clubs::ClubSpec>,
}

/// How many nodes and which are phones (phones churn and do not listen, so
/// two phones can never connect to each other).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Nodes {
    /// Number of nodes.
    pub count: usize,
    /// Share of nodes that are phones, drawn at random (0.0–1.0).
    #[serde(default)]
    pub phone_share: f64,
    /// Explicit phone indices; overrides `phone_share` when non-empty.
    #[serde(default)]
    pub phones: Vec<usize>,
}

/// The friend graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum GraphSpec {
    /// Everyone is friends with everyone.
    Complete,
    /// A connected random regular graph of this degree.
    RandomRegular {
        /// Friends per node.
        degree: usize,
    },
    /// These undirected edges, as node index pairs.
    Explicit {
        /// The friendships.
        edges: Vec<[usize; 2]>,
    },
    /// A ring lattice: each node is friends with the `degree / 2` nearest
    /// nodes on either side (node numbers wrap around).
    Ring {
        /// Friends per node (even).
        degree: usize,
    },
    /// A Watts–Strogatz small world: the ring of `degree`, each edge's far
    /// end moved to a random node with chance `rewire`, drawn until connected.
    SmallWorld {
        /// Friends per node before rewiring (even).
        degree: usize,
        /// Chance each edge is rewired (0..=1).
        rewire: f64,
    },
    /// `count` clusters of consecutive nodes, near-equal in size, everyone
    /// friends within a cluster, and `bridges` random friendships between
    /// each cluster and the next (the clusters form a ring).
    Clusters {
        /// Clusters (each of at least two nodes).
        count: usize,
        /// Friendships between neighbouring clusters.
        bridges: usize,
    },
}

/// A group and its members.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupSpec {
    /// Group name as items carry it (`group:NAME`).
    pub name: String,
    /// Explicit member indices.
    #[serde(default)]
    pub members: Vec<usize>,
    /// Or: this many members drawn at random.
    #[serde(default)]
    pub size: Option<usize>,
}

/// The items to publish.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ItemsSpec {
    /// How many items in all.
    pub count: usize,
    /// Publish times are drawn uniformly from `[start_ms, end_ms]`.
    pub start_ms: u64,
    /// End of the publishing window (equal to `start_ms` for a burst).
    pub end_ms: u64,
    /// Length of each note's text in bytes.
    #[serde(default = "default_text_bytes")]
    pub text_bytes: usize,
    /// The author's hop limit for public items.
    #[serde(default = "default_max_hops")]
    pub max_hops: u8,
    /// Relative weights of the audiences.
    #[serde(default)]
    pub audience: AudienceMix,
    /// Only these nodes publish (group items: those of them in the group,
    /// or any member if none is); empty means any node.
    #[serde(default)]
    pub authors: Vec<usize>,
}

fn default_text_bytes() -> usize {
    200
}

fn default_max_hops() -> u8 {
    3
}

/// Relative weights of public, friends, group and direct-message items
/// (need not sum to 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AudienceMix {
    /// Weight of `public`.
    #[serde(default)]
    pub public: f64,
    /// Weight of `friends`.
    #[serde(default)]
    pub friends: f64,
    /// Weight of `group:NAME` (a random group; the author is a member).
    #[serde(default)]
    pub group: f64,
    /// Weight of `peer:ID`: a direct message from a random author to one of
    /// its friends, drawn at random (a friend-less author writes to
    /// `friends` instead).
    #[serde(default)]
    pub peer: f64,
    /// Weight of `club:NAME@FOUNDER`: an item of a random member of the
    /// scenario's `[club]`.
    #[serde(default)]
    pub club: f64,
}

impl Default for AudienceMix {
    fn default() -> AudienceMix {
        AudienceMix {
            public: 1.0,
            friends: 0.0,
            group: 0.0,
            peer: 0.0,
            club: 0.0,
        }
    }
}

/// The link model: one for links between servers, one for any link with a
/// phone at either end.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Links {
    /// Server–server links.
    #[serde(default)]
    pub server: LinkSpec,
    /// Links with a phone end; defaults to `server`'s model when absent.
    #[serde(default)]
    pub phone: Option<LinkSpec>,
}

/// Latency, loss and bandwidth of one class of links.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// One-way latency distribution.
    #[serde(default)]
    pub latency: Latency,
    /// Probability a message is lost (its request times out).
    #[serde(default)]
    pub loss: f64,
    /// Bandwidth per direction in kbit/s; 0 means unlimited.
    #[serde(default)]
    pub bandwidth_kbps: u64,
    /// Whether frames in flight may arrive out of order (the real driver
    /// sends each on its own stream); off by default.
    #[serde(default)]
    pub reorder: bool,
}

impl Default for LinkSpec {
    fn default() -> LinkSpec {
        LinkSpec {
            latency: Latency::default(),
            loss: 0.0,
            bandwidth_kbps: 0,
            reorder: false,
        }
    }
}

/// A one-way latency distribution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
pub enum Latency {
    /// Always this many ms.
    Fixed {
        /// Latency.
        ms: u64,
    },
    /// Uniform in `[min_ms, max_ms]`.
    Uniform {
        /// Lower bound.
        min_ms: u64,
        /// Upper bound.
        max_ms: u64,
    },
    /// Log-normal with this median and shape (σ of the underlying normal).
    Lognormal {
        /// Median latency.
        median_ms: f64,
        /// Shape; 0.5 gives a p99 about 3.2× the median.
        sigma: f64,
    },
}

impl Default for Latency {
    fn default() -> Latency {
        Latency::Fixed { ms: 20 }
    }
}

/// Faults injected before `heal_ms`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Faults {
    /// Windows during which a share of the nodes is cut off from the rest.
    #[serde(default)]
    pub partitions: Vec<PartitionSpec>,
    /// Phones going offline and back.
    #[serde(default)]
    pub churn: Option<ChurnSpec>,
    /// Nodes crashing and restarting with their storage kept.
    #[serde(default)]
    pub crashes: Option<CrashSpec>,
    /// Crash-restarts of given nodes at given times.
    #[serde(default)]
    pub crash_at: Vec<CrashAt>,
    /// Windows during which every message on some links is lost while the
    /// connections stay up (requests timing out).
    #[serde(default)]
    pub blackholes: Vec<BlackholeSpec>,
}

/// A window of total message loss on given links.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlackholeSpec {
    /// Start.
    pub start_ms: u64,
    /// End.
    pub end_ms: u64,
    /// The friendships affected, both directions.
    pub links: Vec<[usize; 2]>,
}

/// One crash-restart placed by hand.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrashAt {
    /// The node.
    pub node: usize,
    /// When it crashes.
    pub at_ms: u64,
    /// How long it stays down.
    pub downtime_ms: u64,
}

/// One partition window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartitionSpec {
    /// Start.
    pub start_ms: u64,
    /// End (healed).
    pub end_ms: u64,
    /// Share of nodes on the cut-off side, drawn at random.
    #[serde(default)]
    pub share: f64,
    /// Or: exactly these nodes are cut off.
    #[serde(default)]
    pub nodes: Vec<usize>,
}

/// Phone churn: online and offline spells with exponential lengths.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChurnSpec {
    /// Mean length of an online spell.
    pub mean_online_ms: u64,
    /// Mean length of an offline spell.
    pub mean_offline_ms: u64,
}

/// Crash-restarts at random times of random nodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrashSpec {
    /// How many crashes.
    pub count: usize,
    /// How long a crashed node stays down.
    pub downtime_ms: u64,
}

/// Engine timing overrides; `None` keeps the engine's default.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineOverrides {
    /// See `porfiry_protocol::engine::PUSH_BATCH_DELAY_MS`.
    #[serde(default)]
    pub push_batch_delay_ms: Option<u64>,
    /// See `WANT_TIMEOUT_MS`.
    #[serde(default)]
    pub want_timeout_ms: Option<u64>,
    /// See `RESYNC_INTERVAL_MS`.
    #[serde(default)]
    pub resync_interval_ms: Option<u64>,
    /// See `SYNC_SESSION_TIMEOUT_MS`.
    #[serde(default)]
    pub sync_timeout_ms: Option<u64>,
    /// See `SYNC_STALL_MS`.
    #[serde(default)]
    pub sync_stall_ms: Option<u64>,
}

impl Scenario {
    /// Parses and checks a scenario.
    pub fn from_toml(text: &str) -> Result<Scenario, SimError> {
        let scenario: Scenario = toml::from_str(text)?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// Reads, parses and checks a scenario file.
    pub fn load(path: &Path) -> Result<Scenario, SimError> {
        let text = std::fs::read_to_string(path).map_err(|source| SimError::ReadScenario {
            path: path.to_owned(),
            source,
        })?;
        Scenario::from_toml(&text)
    }

    /// The time-series step.
    pub fn sample_ms(&self) -> u64 {
        self.sample_ms
            .unwrap_or(self.duration_ms / crate::limits::DEFAULT_SAMPLES)
            .max(crate::limits::MIN_SAMPLE_MS)
    }
}
