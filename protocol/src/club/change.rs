//! The body of a `club_change` item: which club, what happens, to whom.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::ClubRef;

/// What a club change does to its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClubAction {
    /// Makes the target a member (by an admin).
    Add,
    /// Makes the target a member and an admin (by the founder only).
    AddAdmin,
    /// Ends the target's membership (by an admin; an admin only by the founder).
    Remove,
    /// Ends the author's own membership (signed by the leaving member).
    Leave,
}

impl ClubAction {
    /// The text name: `add`, `add_admin`, `remove` or `leave`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ClubAction::Add => "add",
            ClubAction::AddAdmin => "add_admin",
            ClubAction::Remove => "remove",
            ClubAction::Leave => "leave",
        }
    }

    /// The action with this text name.
    pub fn parse(s: &str) -> Option<ClubAction> {
        [
            ClubAction::Add,
            ClubAction::AddAdmin,
            ClubAction::Remove,
            ClubAction::Leave,
        ]
        .into_iter()
        .find(|a| a.as_str() == s)
    }
}

impl fmt::Display for ClubAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A signed change to a club's member list. Its item's audience is the club
/// itself; its author's right to make it is checked against the membership
/// at the item's creation time (see [`super::ClubBook`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClubChange {
    /// The club.
    pub club: ClubRef,
    /// What happens.
    pub action: ClubAction,
    /// The member concerned (for `leave`, the author itself).
    pub target: String,
}
