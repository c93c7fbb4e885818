//! The club of a club scenario: which nodes are members (drawn spread over
//! the whole graph), the club book every member starts with (the founder
//! added them before the run), who is entitled to a club item (members
//! connected to its author through member links, within its hops), and the
//! meter that attributes wire bytes to items and counts club envelopes
//! handed to non-members — the figures `result.json` reports under `club`.
//!
//! Nothing of replication is re-implemented: the engines route club items
//! by their own book, exactly as a node does with the one it loads.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use porfiry_protocol::club::{CLUB_MAX_HOPS, ClubAction, ClubBook, ClubChange, ClubRef};
use porfiry_protocol::engine::Inbound;
use porfiry_protocol::{Audience, Body, ItemId, NodeKey, PayloadDraft, sign};
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::error::SimError;
use crate::graph::Graph;
use crate::limits::EPOCH_MS;

/// `[club]` in a scenario: one club, its name and how many members.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClubSpec {
    /// The club's short name.
    pub name: String,
    /// Members, the founder included: grown from a random founder by
    /// adding a random friend of a member each time, so the club is
    /// connected through member links yet spread (each member has only a
    /// few member friends).
    pub members: usize,
}

/// The club as the world holds it.
#[derive(Debug, Clone)]
pub struct SimClub {
    /// `NAME@FOUNDER`.
    pub club: ClubRef,
    /// The founder node.
    pub founder: usize,
    /// Every member, the founder included.
    pub members: BTreeSet<usize>,
    /// The book every member starts with.
    pub book: ClubBook,
}

impl SimClub {
    /// Draws the members over `links` (see [`ClubSpec::members`]) and signs
    /// the founder's `add` of each (dated before the run), building the
    /// members' book.
    pub fn draw(
        spec: &ClubSpec,
        keys: &[NodeKey],
        peers: &[String],
        links: &Graph,
        rng: &mut impl Rng,
    ) -> Result<SimClub, SimError> {
        let bad = |detail: String| SimError::InvalidScenario {
            field: "club",
            detail,
        };
        if keys.is_empty() {
            return Err(bad("a club needs a member".into()));
        }
        let founder = rng.gen_range(0..keys.len());
        let mut drawn = vec![founder];
        let mut frontier: BTreeSet<usize> = links.neighbours(founder).collect();
        while drawn.len() < spec.members && !frontier.is_empty() {
            let pick = rng.gen_range(0..frontier.len());
            let Some(&next) = frontier.iter().nth(pick) else {
                break;
            };
            frontier.remove(&next);
            drawn.push(next);
            frontier.extend(links.neighbours(next).filter(|n| !drawn.contains(n)));
        }
        if drawn.len() < spec.members {
            return Err(bad(format!(
                "only {} nodes are connected to the founder; {} members asked",
                drawn.len(),
                spec.members
            )));
        }
        let club = ClubRef::new(&spec.name, &peers[founder]).map_err(|e| bad(e.to_string()))?;
        let mut book = ClubBook::new();
        book.add_club(&club).map_err(|e| bad(e.to_string()))?;
        let members: BTreeSet<usize> = drawn.iter().copied().collect();
        for (i, &m) in drawn.iter().enumerate().skip(1) {
            let change = ClubChange {
                club: club.clone(),
                action: ClubAction::Add,
                target: peers[m].clone(),
            };
            let created_ms = EPOCH_MS - 1_000 + i as u64;
            let item = sign(
                &keys[founder],
                &PayloadDraft {
                    created_ms,
                    audience: Audience::Club(club.clone()),
                    max_hops: CLUB_MAX_HOPS,
                    expires_ms: None,
                    replaces: None,
                    body: Body::ClubChange(change.clone()),
                },
            )
            .map_err(|e| bad(e.to_string()))?;
            book.insert(item.id(), created_ms, &peers[founder], &change)
                .map_err(|e| bad(e.to_string()))?;
        }
        Ok(SimClub {
            club,
            founder,
            members,
            book,
        })
    }

    /// The book node `n` starts with: the club's for members, none for
    /// the others (they never hear of it).
    pub fn book_for(&self, n: usize) -> ClubBook {
        if self.members.contains(&n) {
            self.book.clone()
        } else {
            ClubBook::new()
        }
    }

    /// Members (author excluded) reachable from `author` through member
    /// links within `max_hops`: who a club item of `author` must reach.
    pub fn entitled(&self, links: &Graph, author: usize, max_hops: u8) -> BTreeSet<usize> {
        let mut dist = BTreeMap::from([(author, 0u8)]);
        let mut queue = VecDeque::from([author]);
        while let Some(x) = queue.pop_front() {
            let d = dist[&x];
            if d >= max_hops {
                continue;
            }
            for y in links.neighbours(x) {
                if self.members.contains(&y) && !dist.contains_key(&y) {
                    dist.insert(y, d + 1);
                    queue.push_back(y);
                }
            }
        }
        dist.remove(&author);
        dist.into_keys().collect()
    }
}

/// Wire bytes attributed to items, and club envelopes handed to
/// non-members. An `items` frame's bytes are split among its envelopes by
/// size, a `have` or `want` frame's evenly among its ids; catch-up frames
/// (range sync) name no item and are left out of both sides alike.
#[derive(Debug, Default)]
pub(crate) struct ClubMeter {
    /// Member nodes (empty without a club).
    members: BTreeSet<usize>,
    /// Ids of the club's items.
    club_items: BTreeSet<ItemId>,
    /// Bytes attributed to each item.
    pub(crate) bytes: BTreeMap<ItemId, f64>,
    /// Club envelopes that reached a non-member's edge.
    pub(crate) to_non_members: u64,
}

impl ClubMeter {
    /// A meter for `club` (members) and its items `club_items`.
    pub(crate) fn new(club: Option<&SimClub>, club_items: BTreeSet<ItemId>) -> ClubMeter {
        ClubMeter {
            members: club.map(|c| c.members.clone()).unwrap_or_default(),
            club_items,
            ..ClubMeter::default()
        }
    }

    /// A frame of `frame_len` bytes arrived at node `to` as `inbound`.
    pub(crate) fn on_inbound(&mut self, to: usize, inbound: &Inbound, frame_len: usize) {
        let frame = frame_len as f64;
        match inbound {
            Inbound::Items { items, .. } => {
                let total: usize = items.iter().map(|r| r.item.envelope_bytes().len()).sum();
                for r in items {
                    let id = r.item.id();
                    if total > 0 {
                        let share = frame * r.item.envelope_bytes().len() as f64 / total as f64;
                        *self.bytes.entry(id).or_default() += share;
                    }
                    if self.club_items.contains(&id) && !self.members.contains(&to) {
                        self.to_non_members += 1;
                    }
                }
            }
            Inbound::Have(announces) => {
                for a in announces {
                    *self.bytes.entry(a.id).or_default() += frame / announces.len() as f64;
                }
            }
            Inbound::Want(ids) => {
                for id in ids {
                    *self.bytes.entry(*id).or_default() += frame / ids.len() as f64;
                }
            }
            _ => {}
        }
    }
}

/// The club figures of a run (`result.json` → `club`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClubFigures {
    /// `NAME@FOUNDER`.
    pub club: String,
    /// Members, the founder included.
    pub members: usize,
    /// Club items planned.
    pub club_items: u64,
    /// Their (item, entitled member) pairs.
    pub entitled_pairs: u64,
    /// Of those, held at the end.
    pub held_at_end: u64,
    /// `held_at_end / entitled_pairs` (must be 1).
    pub delivery_ratio: f64,
    /// Club items held by non-members at the end plus club envelopes that
    /// reached a non-member at all (must be 0).
    pub non_member_deliveries: u64,
    /// Wire bytes attributed per club item (mean).
    pub wire_bytes_per_club_item: f64,
    /// The same per member that holds it.
    pub wire_bytes_per_member_reached: f64,
    /// Public items planned in the same run (same text size).
    pub public_items: u64,
    /// Wire bytes attributed per public item (mean).
    pub wire_bytes_per_public_item: f64,
    /// The same per node that holds it.
    pub wire_bytes_per_public_node_reached: f64,
}

/// One planned item as the figures need it.
pub(crate) struct ItemFacts<'a> {
    pub(crate) id: ItemId,
    pub(crate) audience: &'a Audience,
    pub(crate) author: usize,
    pub(crate) entitled: &'a BTreeSet<usize>,
    pub(crate) held: &'a BTreeSet<usize>,
}

/// The club figures from the items, who held them and the meter.
pub(crate) fn figures<'a>(
    club: &SimClub,
    items: impl Iterator<Item = ItemFacts<'a>>,
    meter: &ClubMeter,
) -> ClubFigures {
    let (mut club_items, mut pairs, mut held_pairs, mut leaked) = (0u64, 0u64, 0u64, 0u64);
    let (mut club_bytes, mut public_items, mut public_bytes, mut public_held) =
        (0f64, 0u64, 0f64, 0u64);
    let mut club_reached = 0u64;
    for it in items {
        let bytes = meter.bytes.get(&it.id).copied().unwrap_or(0.0);
        let reached = it.held.iter().filter(|&&n| n != it.author).count() as u64;
        match it.audience {
            Audience::Club(_) => {
                club_items += 1;
                pairs += it.entitled.len() as u64;
                held_pairs += it.entitled.intersection(it.held).count() as u64;
                leaked += it.held.iter().filter(|n| !club.members.contains(n)).count() as u64;
                club_bytes += bytes;
                club_reached += reached;
            }
            Audience::Public => {
                public_items += 1;
                public_bytes += bytes;
                public_held += reached;
            }
            _ => {}
        }
    }
    let per = |b: f64, n: u64| if n == 0 { 0.0 } else { b / n as f64 };
    ClubFigures {
        club: club.club.to_string(),
        members: club.members.len(),
        club_items,
        entitled_pairs: pairs,
        held_at_end: held_pairs,
        delivery_ratio: if pairs == 0 {
            1.0
        } else {
            held_pairs as f64 / pairs as f64
        },
        non_member_deliveries: leaked + meter.to_non_members,
        wire_bytes_per_club_item: per(club_bytes, club_items),
        wire_bytes_per_member_reached: per(club_bytes, club_reached),
        public_items,
        wire_bytes_per_public_item: per(public_bytes, public_items),
        wire_bytes_per_public_node_reached: per(public_bytes, public_held),
    }
}

/// The meter of `world`'s run: its club's members and club items.
pub(crate) fn meter(world: &crate::world::World) -> ClubMeter {
    let ids = world
        .items
        .iter()
        .filter(|p| matches!(p.audience, Audience::Club(_)))
        .map(|p| p.item.id())
        .collect();
    ClubMeter::new(world.club.as_ref(), ids)
}

/// The club figures of a finished run, if it has a club.
pub(crate) fn report(
    world: &crate::world::World,
    held: &[BTreeSet<usize>],
    meter: &ClubMeter,
) -> Option<ClubFigures> {
    let club = world.club.as_ref()?;
    let items = world.items.iter().zip(held).map(|(p, held)| ItemFacts {
        id: p.item.id(),
        audience: &p.audience,
        author: p.author,
        entitled: &p.entitled,
        held,
    });
    Some(figures(club, items, meter))
}
