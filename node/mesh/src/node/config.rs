//! [`NodeConfig`]: what [`super::Node::spawn`] runs.

use std::sync::Arc;

use porfiry_skills::{Clock, SystemClock};

use crate::data_dir::DataDir;
use crate::events::CoreEvents;
use crate::net::{Multiaddr, Profile, ReachConfig};
use porfiry_protocol::engine::Quotas;

/// What to run: which data dir, as a server or a phone, listening where.
#[derive(Clone)]
pub struct NodeConfig {
    /// The data dir; created (with a new identity) when it holds no node.
    pub data_dir: DataDir,
    /// Server (listens) or phone (dials only, polls rarely).
    pub profile: Profile,
    /// Listen addresses (a server's; a phone's must be empty).
    pub listen: Vec<Multiaddr>,
    /// The node's clock: item times, friend status stamps and catch-up
    /// times come from it. [`NodeConfig::new`] uses the system clock.
    pub clock: Arc<dyn Clock>,
    /// Where notes merged from friends and posted through the handle are
    /// announced (the cognitive core waits on them).
    pub events: CoreEvents,
    /// Relaying for friends and LAN discovery (the node sets `links_file`
    /// to `links.json` in the data dir).
    pub reach: ReachConfig,
    /// What one author may make this node hold (`porfiry run --quota-*`);
    /// refusals go to `refused.json` in the data dir.
    pub quotas: Quotas,
}

impl NodeConfig {
    /// A node on `data_dir` with the system clock.
    pub fn new(data_dir: DataDir, profile: Profile, listen: Vec<Multiaddr>) -> NodeConfig {
        NodeConfig {
            data_dir,
            profile,
            listen,
            clock: Arc::new(SystemClock::utc()),
            events: CoreEvents::new(),
            reach: ReachConfig::default(),
            quotas: Quotas::default(),
        }
    }
}

impl std::fmt::Debug for NodeConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeConfig")
            .field("data_dir", &self.data_dir)
            .field("profile", &self.profile)
            .field("listen", &self.listen)
            .finish_non_exhaustive()
    }
}
