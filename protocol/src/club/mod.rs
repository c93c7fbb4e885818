//! Clubs: groups with an identity of their own whose member list travels as
//! signed `club_change` items, so that every node can tell who is a member
//! without asking anyone.
//!
//! A club is named `NAME@FOUNDER` ([`ClubRef`]): the founder's peer id makes
//! the name unique without a registry, and the founder is always a member
//! and an admin. Admins (named by the founder) add and remove members; a
//! member leaves with a change it signs itself. [`ClubBook`] computes the
//! membership from the set of changes, whatever order they arrived in.

mod book;
mod change;
mod club_ref;

pub use book::{ClubBook, ClubMember, ClubRole};
pub use change::{ClubAction, ClubChange};
pub use club_ref::{ClubRef, ClubRefError};

/// Most clubs one book tracks: a person is in a handful of clubs, a busy
/// server in dozens; 1,024 bounds what a friend can make us track (each
/// club costs its change list) far above any real use.
pub const MAX_CLUBS: usize = 1_024;

/// Most changes kept per club: a 500-member club (the upper end of the
/// mission's club networks) with every member added, promoted and removed
/// twice over is ~3,000 changes; 4,096 leaves room and bounds the replay
/// the book does on each new change (a few milliseconds at the cap).
pub const MAX_CLUB_CHANGES: usize = 4_096;

/// Hop limit for club items: club friend graphs are small-world, so a
/// member may be several member-hops from the author; 8 (the protocol's
/// `MAX_HOPS`) reaches across a 500-member club with a diameter of ~6.
pub const CLUB_MAX_HOPS: u8 = crate::limits::MAX_HOPS;

/// Why a club change is refused or a book cannot take it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClubError {
    /// The book already tracks [`MAX_CLUBS`] clubs.
    #[error("too many clubs: at most {MAX_CLUBS} are tracked")]
    TooManyClubs,
    /// The club already has [`MAX_CLUB_CHANGES`] changes.
    #[error("club {0} has too many changes: at most {MAX_CLUB_CHANGES}")]
    TooManyChanges(ClubRef),
    /// The author had no right to make this change at its creation time.
    #[error("{author} may not {action} {target} in club {club} at that time")]
    NotAllowed {
        /// The club.
        club: ClubRef,
        /// The change's author.
        author: String,
        /// What it tried.
        action: ClubAction,
        /// Whom it tried it on.
        target: String,
    },
    /// The item's audience is not the club the change names.
    #[error("a change to club {club} must have audience club:{club}")]
    WrongAudience {
        /// The club the change names.
        club: ClubRef,
    },
}
