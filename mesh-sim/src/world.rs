//! Everything fixed before a run starts: node keys, which nodes are phones,
//! the friend graph and the links that can ever come up, groups, and the
//! signed items with the nodes entitled to each. Built from a scenario and
//! a seed; the simulation and the gossipsub comparison both use it.

use std::collections::BTreeSet;

use porfiry_protocol::{Audience, NodeKey};
use rand::Rng;
use rand::seq::index::sample;

use crate::clubs::SimClub;
use crate::error::SimError;
use crate::graph::Graph;
use crate::items::{Group, PlannedItem, plan};
use crate::rng::{Stream, fork};
use crate::scenario::Scenario;

/// The fixed part of a run.
#[derive(Debug, Clone)]
pub struct World {
    /// Each node's signing key.
    pub keys: Vec<NodeKey>,
    /// Each node's peer id string.
    pub peers: Vec<String>,
    /// Which nodes are phones.
    pub phones: Vec<bool>,
    /// Friendships.
    pub graph: Graph,
    /// Friendships that can connect: a phone does not listen, so two
    /// phones never reach each other.
    pub links: Graph,
    /// Groups; friends in the same group tag each other with it.
    pub groups: Vec<Group>,
    /// The club of a club scenario.
    pub club: Option<SimClub>,
    /// The items, in publish order.
    pub items: Vec<PlannedItem>,
}

impl World {
    /// Draws the world of `scenario` under `seed`.
    pub fn build(scenario: &Scenario, seed: u64) -> Result<World, SimError> {
        let n = scenario.nodes.count;
        let mut key_rng = fork(seed, Stream::Keys);
        let keys: Vec<NodeKey> = (0..n)
            .map(|_| NodeKey::from_seed(key_rng.r#gen()))
            .collect();
        let peers: Vec<String> = keys.iter().map(|k| k.peer_id().to_string()).collect();
        let mut phones = vec![false; n];
        if scenario.nodes.phones.is_empty() {
            let count = (scenario.nodes.phone_share * n as f64).round() as usize;
            for p in sample(&mut fork(seed, Stream::Phones), n, count.min(n)) {
                phones[p] = true;
            }
        } else {
            for &p in &scenario.nodes.phones {
                phones[p] = true;
            }
        }
        let graph = Graph::build(&scenario.graph, n, &mut fork(seed, Stream::Graph))?;
        let links = graph.filtered(|a, b| !(phones[a] && phones[b]));
        let mut group_rng = fork(seed, Stream::Groups);
        let groups: Vec<Group> = scenario
            .groups
            .iter()
            .map(|g| Group {
                name: g.name.clone(),
                members: match g.size {
                    Some(size) => sample(&mut group_rng, n, size).into_iter().collect(),
                    None => g.members.iter().copied().collect(),
                },
            })
            .collect();
        let club = match &scenario.club {
            Some(spec) => Some(SimClub::draw(
                spec,
                &keys,
                &peers,
                &links,
                &mut fork(seed, Stream::Club),
            )?),
            None => None,
        };
        let mut world = World {
            keys,
            peers,
            phones,
            graph,
            links,
            groups,
            club,
            items: Vec::new(),
        };
        let max_hops = scenario.items.max_hops;
        world.items = plan(
            &scenario.items,
            &world.keys,
            &world.groups,
            world.club.as_ref(),
            &mut fork(seed, Stream::Items),
            |author| world.graph.neighbours(author).collect(),
            |author, audience| world.entitled(author, audience, max_hops),
        )?;
        Ok(world)
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True for a world without nodes.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The groups node `a` tags friend `b` with: those both belong to.
    pub fn tags(&self, a: usize, b: usize) -> Vec<String> {
        self.groups
            .iter()
            .filter(|g| g.members.contains(&a) && g.members.contains(&b))
            .map(|g| g.name.clone())
            .collect()
    }

    /// The nodes (author excluded) entitled to an item of `author`: public
    /// items reach up to `max_hops` links, friends items the author's
    /// friends, group items the friends the author tagged with the group,
    /// a peer item its addressee if it is a friend, a club item the
    /// members reachable through members within `max_hops`, a devices item
    /// nobody (the simulated worlds link no devices: every node is a person
    /// of its own) — always over links that can connect.
    pub fn entitled(&self, author: usize, audience: &Audience, max_hops: u8) -> BTreeSet<usize> {
        match audience {
            Audience::Public => self.links.within(author, max_hops.into()),
            Audience::Friends => self.links.neighbours(author).collect(),
            Audience::Group(g) => self
                .links
                .neighbours(author)
                .filter(|&f| self.tags(author, f).iter().any(|t| t == g))
                .collect(),
            Audience::Peer(p) => self
                .links
                .neighbours(author)
                .filter(|&f| self.peers[f] == *p)
                .collect(),
            Audience::Club(_) => self
                .club
                .as_ref()
                .map(|c| c.entitled(&self.links, author, porfiry_protocol::club::CLUB_MAX_HOPS))
                .unwrap_or_default(),
            Audience::Devices => BTreeSet::new(),
        }
    }
}
