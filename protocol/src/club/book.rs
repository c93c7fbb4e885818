//! `ClubBook`: every club this node knows and its membership over time,
//! computed from the set of club changes alone.
//!
//! Order independence: the changes of a club are replayed sorted by
//! (created_ms, item id), whatever order they arrived in, so two nodes
//! holding the same set of changes agree on every membership question. A
//! change counts only if its author had the right to make it in the state
//! the replay has reached (the membership at that change's creation time);
//! the founder is always a member and an admin and cannot be removed. Ties
//! at the same millisecond are broken by item id, and a member added at
//! time t is a member for items created at t.

use std::collections::BTreeMap;

use super::{ClubAction, ClubChange, ClubError, ClubRef, MAX_CLUB_CHANGES, MAX_CLUBS};
use crate::item::id::ItemId;

/// A peer's standing in a club.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ClubRole {
    /// Not a member (never added, removed, or left).
    Outside,
    /// A member.
    Member,
    /// A member who may add and remove members.
    Admin,
}

/// One member as [`ClubBook::members`] lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClubMember {
    /// Peer id.
    pub peer: String,
    /// Member or admin (the founder is an admin).
    pub role: ClubRole,
}

/// One stored change: who signed it and what it says.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Change {
    author: String,
    action: ClubAction,
    target: String,
}

/// One club: its changes and the membership timeline they give.
#[derive(Debug, Clone, Default)]
struct Club {
    /// Every change, in replay order.
    changes: BTreeMap<(u64, ItemId), Change>,
    /// Peer → (from_ms, role) steps, in time order (the founder has none).
    timeline: BTreeMap<String, Vec<(u64, ClubRole)>>,
    /// Target of each change item (valid or not), for routing.
    targets: BTreeMap<ItemId, String>,
}

/// Every club this node knows.
#[derive(Debug, Clone, Default)]
pub struct ClubBook {
    clubs: BTreeMap<ClubRef, Club>,
}

impl ClubBook {
    /// An empty book.
    pub const fn new() -> ClubBook {
        ClubBook {
            clubs: BTreeMap::new(),
        }
    }

    /// Makes the book know `club` even with no change yet (a club its
    /// founder just created). False if the book is full.
    pub fn add_club(&mut self, club: &ClubRef) -> Result<(), ClubError> {
        if !self.clubs.contains_key(club) {
            if self.clubs.len() >= MAX_CLUBS {
                return Err(ClubError::TooManyClubs);
            }
            self.clubs.insert(club.clone(), Club::default());
        }
        Ok(())
    }

    /// Every club known, in order.
    pub fn clubs(&self) -> impl Iterator<Item = &ClubRef> {
        self.clubs.keys()
    }

    /// True if the book knows `club`.
    pub fn knows(&self, club: &ClubRef) -> bool {
        self.clubs.contains_key(club)
    }

    /// How many changes of `club` are held.
    pub fn change_count(&self, club: &ClubRef) -> usize {
        self.clubs.get(club).map_or(0, |c| c.changes.len())
    }

    /// Checks that `author` may make `change` at `created_ms` given what the
    /// book holds now. A change refused now may be accepted once an earlier
    /// change (naming its author admin, say) has arrived.
    pub fn check(
        &self,
        created_ms: u64,
        author: &str,
        change: &ClubChange,
    ) -> Result<(), ClubError> {
        let role = |p: &str| self.role_at(&change.club, p, created_ms);
        if allowed(
            &change.club,
            author,
            role(author),
            change,
            role(&change.target),
        ) {
            Ok(())
        } else {
            Err(ClubError::NotAllowed {
                club: change.club.clone(),
                author: author.to_owned(),
                action: change.action,
                target: change.target.clone(),
            })
        }
    }

    /// Adds a change (item `id` by `author` created at `created_ms`) and
    /// recomputes its club's membership. Returns false if it was held
    /// already. Changes that were not allowed are kept (a later, earlier-dated
    /// change may make them count) but have no effect.
    pub fn insert(
        &mut self,
        id: ItemId,
        created_ms: u64,
        author: &str,
        change: &ClubChange,
    ) -> Result<bool, ClubError> {
        self.add_club(&change.club)?;
        let Some(club) = self.clubs.get_mut(&change.club) else {
            return Err(ClubError::TooManyClubs);
        };
        if club.targets.contains_key(&id) {
            return Ok(false);
        }
        if club.changes.len() >= MAX_CLUB_CHANGES {
            return Err(ClubError::TooManyChanges(change.club.clone()));
        }
        club.changes.insert(
            (created_ms, id),
            Change {
                author: author.to_owned(),
                action: change.action,
                target: change.target.clone(),
            },
        );
        club.targets.insert(id, change.target.clone());
        club.timeline = replay(&change.club, &club.changes);
        Ok(true)
    }

    /// Checks that the book can take `change` (its club, one more change).
    pub fn room_for(&self, change: &ClubChange) -> Result<(), ClubError> {
        match self.clubs.get(&change.club) {
            None if self.clubs.len() >= MAX_CLUBS => Err(ClubError::TooManyClubs),
            Some(c) if c.changes.len() >= MAX_CLUB_CHANGES => {
                Err(ClubError::TooManyChanges(change.club.clone()))
            }
            _ => Ok(()),
        }
    }

    /// The target of the change item `id` in `club`, if the book holds it.
    pub fn change_target(&self, club: &ClubRef, id: &ItemId) -> Option<&str> {
        self.clubs.get(club)?.targets.get(id).map(String::as_str)
    }

    /// `peer`'s role in `club` for items created at `at_ms`.
    pub fn role_at(&self, club: &ClubRef, peer: &str, at_ms: u64) -> ClubRole {
        if peer == club.founder {
            return ClubRole::Admin;
        }
        self.clubs
            .get(club)
            .and_then(|c| c.timeline.get(peer))
            .and_then(|steps| steps.iter().rev().find(|(t, _)| *t <= at_ms))
            .map_or(ClubRole::Outside, |(_, r)| *r)
    }

    /// `peer`'s role in `club` after every change held.
    pub fn role_now(&self, club: &ClubRef, peer: &str) -> ClubRole {
        self.role_at(club, peer, u64::MAX)
    }

    /// True if `peer` was a member of `club` for items created at `at_ms`.
    pub fn is_member(&self, club: &ClubRef, peer: &str, at_ms: u64) -> bool {
        self.role_at(club, peer, at_ms) != ClubRole::Outside
    }

    /// True if `peer` is a member of `club` after every change held.
    pub fn is_member_now(&self, club: &ClubRef, peer: &str) -> bool {
        self.role_now(club, peer) != ClubRole::Outside
    }

    /// True if `peer` is or ever was a member of `club` (by the changes held).
    pub fn was_member(&self, club: &ClubRef, peer: &str) -> bool {
        peer == club.founder
            || self
                .clubs
                .get(club)
                .and_then(|c| c.timeline.get(peer))
                .is_some_and(|steps| steps.iter().any(|(_, r)| *r != ClubRole::Outside))
    }

    /// The members of `club` now, the founder first, then by peer id.
    pub fn members(&self, club: &ClubRef) -> Vec<ClubMember> {
        let mut out = vec![ClubMember {
            peer: club.founder.clone(),
            role: ClubRole::Admin,
        }];
        if let Some(c) = self.clubs.get(club) {
            for (peer, steps) in &c.timeline {
                if let Some((_, role)) = steps.last()
                    && *role != ClubRole::Outside
                    && *peer != club.founder
                {
                    out.push(ClubMember {
                        peer: peer.clone(),
                        role: *role,
                    });
                }
            }
        }
        out
    }
}

/// True if a change is allowed given the author's and target's roles at its
/// creation time.
fn allowed(
    club: &ClubRef,
    author: &str,
    author_role: ClubRole,
    change: &ClubChange,
    target_role: ClubRole,
) -> bool {
    if change.target == club.founder || change.club != *club {
        return false;
    }
    match change.action {
        ClubAction::Add => author_role == ClubRole::Admin,
        ClubAction::AddAdmin => author == club.founder,
        ClubAction::Remove => {
            author_role == ClubRole::Admin
                && (target_role != ClubRole::Admin || author == club.founder)
        }
        ClubAction::Leave => author == change.target,
    }
}

/// Replays a club's changes in (created_ms, id) order into per-peer steps.
fn replay(
    club: &ClubRef,
    changes: &BTreeMap<(u64, ItemId), Change>,
) -> BTreeMap<String, Vec<(u64, ClubRole)>> {
    let mut timeline: BTreeMap<String, Vec<(u64, ClubRole)>> = BTreeMap::new();
    let now = |timeline: &BTreeMap<String, Vec<(u64, ClubRole)>>, p: &str| {
        if p == club.founder {
            ClubRole::Admin
        } else {
            timeline
                .get(p)
                .and_then(|s| s.last())
                .map_or(ClubRole::Outside, |(_, r)| *r)
        }
    };
    for ((t, _), c) in changes {
        let body = ClubChange {
            club: club.clone(),
            action: c.action,
            target: c.target.clone(),
        };
        let author_role = now(&timeline, &c.author);
        let target_role = now(&timeline, &c.target);
        if !allowed(club, &c.author, author_role, &body, target_role) {
            continue;
        }
        let role = match c.action {
            // Adding an admin as a plain member does not demote it.
            ClubAction::Add => target_role.max(ClubRole::Member),
            ClubAction::AddAdmin => ClubRole::Admin,
            ClubAction::Remove | ClubAction::Leave => ClubRole::Outside,
        };
        timeline
            .entry(c.target.clone())
            .or_default()
            .push((*t, role));
    }
    timeline
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::NodeKey;

    #[test]
    fn the_book_tracks_at_most_max_clubs() {
        let founder = NodeKey::from_seed([1; 32]).peer_id().to_string();
        let mut book = ClubBook::new();
        for i in 0..MAX_CLUBS {
            book.add_club(&ClubRef::new(&format!("c{i}"), &founder).unwrap())
                .unwrap();
        }
        let one_more = ClubRef::new("late", &founder).unwrap();
        assert_eq!(book.add_club(&one_more), Err(ClubError::TooManyClubs));
        let change = ClubChange {
            club: one_more,
            action: ClubAction::Add,
            target: founder.clone(),
        };
        assert_eq!(book.room_for(&change), Err(ClubError::TooManyClubs));
        assert_eq!(
            book.insert(ItemId([1; 32]), 1, &founder, &change),
            Err(ClubError::TooManyClubs)
        );
        // A known club still takes changes.
        assert!(
            book.add_club(&ClubRef::new("c0", &founder).unwrap())
                .is_ok()
        );
    }
}
