//! Clubs as this node acts on them: finding a club by the short name the
//! user types, signing club changes (create, add, remove, leave) after
//! checking them against the club book held here, and the views the
//! `club` commands print (members, what this node can see of who is
//! reachable).
//!
//! A club change is stored as an own item in one transaction (its
//! `club_changes` row with it); a running daemon publishes it like any own
//! item another process stored.

use std::collections::BTreeSet;

use porfiry_protocol::club::{
    CLUB_MAX_HOPS, ClubAction, ClubBook, ClubChange, ClubError, ClubRef, ClubRefError, ClubRole,
};
use porfiry_protocol::{Audience, Body, NodeKey, PayloadDraft, VerifiedItem, sign};
use porfiry_storage::{StorageError, Store};

use super::item_rows::stored_record;

/// Why a club command or a club item was refused.
#[derive(Debug, thiserror::Error)]
pub enum ClubsError {
    /// No known club has this name.
    #[error("no club {0:?} here: `porfiry club list` shows the clubs this node knows")]
    NoSuchClub(String),
    /// Several known clubs have this name (different founders).
    #[error("club name {name:?} is ambiguous: write one of {}", candidates.join(", "))]
    Ambiguous {
        /// The name given.
        name: String,
        /// Every matching `NAME@FOUNDER`.
        candidates: Vec<String>,
    },
    /// A malformed club name or reference.
    #[error(transparent)]
    BadClub(#[from] ClubRefError),
    /// This node founded a club of that name already.
    #[error("club {0} exists already")]
    Exists(String),
    /// This node is not a member, so it may not write to the club.
    #[error("this node is not a member of club {0}")]
    NotAMember(String),
    /// The club book refuses the change (no right, or a bound reached).
    #[error(transparent)]
    Refused(#[from] ClubError),
    /// The database refused a read or write.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The change could not be signed.
    #[error("cannot sign the club change: {0}")]
    Item(#[from] porfiry_protocol::ItemError),
}

/// The club `given` names: `NAME@FOUNDER` as is, or a bare `NAME` matched
/// against the clubs this node knows (founded here or heard of).
pub fn resolve_club(store: &Store, given: &str) -> Result<ClubRef, ClubsError> {
    if given.contains('@') {
        return Ok(given.parse()?);
    }
    let found: Vec<ClubRef> = store
        .known_clubs()?
        .into_iter()
        .filter(|c| c.name == given)
        .collect();
    match found.as_slice() {
        [] => Err(ClubsError::NoSuchClub(given.to_owned())),
        [one] => Ok(one.clone()),
        several => Err(ClubsError::Ambiguous {
            name: given.to_owned(),
            candidates: several.iter().map(ToString::to_string).collect(),
        }),
    }
}

/// Refuses unless `peer` is a member of `club` now, by the book held here.
pub fn check_member(store: &Store, club: &ClubRef, peer: &str) -> Result<(), ClubsError> {
    if store.club_book()?.is_member_now(club, peer) {
        Ok(())
    } else {
        Err(ClubsError::NotAMember(club.to_string()))
    }
}

/// Founds the club `name` with this node as founder.
pub fn create_club(
    store: &Store,
    key: &NodeKey,
    name: &str,
    now_ms: u64,
) -> Result<ClubRef, ClubsError> {
    let club = ClubRef::new(name, &key.peer_id().to_string())?;
    if !store.create_club(&club, now_ms)? {
        return Err(ClubsError::Exists(club.to_string()));
    }
    Ok(club)
}

/// Signs and stores a change to `club` (checked against the book held
/// here first, so a change that would not count is never sent).
pub fn change_club(
    store: &Store,
    key: &NodeKey,
    club: &ClubRef,
    action: ClubAction,
    target: &str,
    now_ms: u64,
) -> Result<VerifiedItem, ClubsError> {
    let change = ClubChange {
        club: club.clone(),
        action,
        target: target.to_owned(),
    };
    let me = key.peer_id().to_string();
    let book = store.club_book()?;
    book.check(now_ms, &me, &change)?;
    book.room_for(&change)?;
    let item = sign(
        key,
        &PayloadDraft {
            created_ms: now_ms,
            audience: Audience::Club(club.clone()),
            max_hops: CLUB_MAX_HOPS,
            expires_ms: None,
            replaces: None,
            body: Body::ClubChange(change),
        },
    )?;
    store.insert_items(&[stored_record(&item, item.max_hops(), None)])?;
    Ok(item)
}

/// A club as `club list` and the bindings show it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ClubListing {
    /// `NAME@FOUNDER`, what audiences and commands take.
    pub club: String,
    /// The short name.
    pub name: String,
    /// The founder's peer id.
    pub founder: String,
    /// This node's role now: `founder`, `admin`, `member` or `outside`.
    pub role: &'static str,
    /// How many members the club book holds now.
    pub members: usize,
}

/// Every club this node knows (founded here or heard of), with `me`'s role.
pub fn list(store: &Store, me: &str) -> Result<Vec<ClubListing>, ClubsError> {
    let book = store.club_book()?;
    Ok(store
        .known_clubs()?
        .into_iter()
        .map(|c| ClubListing {
            role: match book.role_now(&c, me) {
                _ if c.founder == me => "founder",
                ClubRole::Admin => "admin",
                ClubRole::Member => "member",
                ClubRole::Outside => "outside",
            },
            members: book.members(&c).len(),
            club: c.to_string(),
            name: c.name,
            founder: c.founder,
        })
        .collect())
}

/// One member as `club members` shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct MemberView {
    /// Peer id.
    pub peer: String,
    /// The friend's local name, if it is a named friend.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `founder`, `admin` or `member`.
    pub role: &'static str,
}

/// The members of `club` now, named where they are named friends.
pub fn members(
    book: &ClubBook,
    club: &ClubRef,
    names: &std::collections::HashMap<String, String>,
) -> Vec<MemberView> {
    book.members(club)
        .into_iter()
        .map(|m| MemberView {
            name: names.get(&m.peer).cloned(),
            role: if m.peer == club.founder {
                "founder"
            } else if m.role == ClubRole::Admin {
                "admin"
            } else {
                "member"
            },
            peer: m.peer,
        })
        .collect()
}

/// A member this node sees no member path to, and who might bridge to it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Unreachable {
    /// The member.
    pub peer: String,
    /// Its local name, if it is a named friend.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Peers that could reach it: the admin who added it (it knew the
    /// member's id) and this node's friends who are not members (adding one
    /// makes it a relay).
    pub through: Vec<String>,
}

/// What `club status` reports.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ClubStatus {
    /// `NAME@FOUNDER`.
    pub club: String,
    /// Members now.
    pub members: usize,
    /// Members reachable: this node, member friends, and members whose
    /// club items arrived here (so a member path reached them).
    pub reachable: Vec<String>,
    /// The other members.
    pub unreachable: Vec<Unreachable>,
}

/// Which members of `club` this node can see a member path to. It knows
/// its own friends and which club items reached it, not the whole graph:
/// a member is reachable if it is this node, a friend, or the author of a
/// club item held here (it came along member links).
pub fn status(
    store: &Store,
    club: &ClubRef,
    me: &str,
    names: &std::collections::HashMap<String, String>,
) -> Result<ClubStatus, ClubsError> {
    let book = store.club_book()?;
    let friends: BTreeSet<String> = store
        .friends()?
        .into_iter()
        .map(|f| f.row.peer_id)
        .collect();
    let audience = Audience::Club(club.clone());
    let heard: BTreeSet<String> = store
        .item_records()?
        .into_iter()
        .filter(|r| r.audience == audience)
        .map(|r| r.author)
        .collect();
    let changes = store.club_changes(Some(club))?;
    let member_list = book.members(club);
    let mut reachable = Vec::new();
    let mut unreachable = Vec::new();
    for m in &member_list {
        let p = &m.peer;
        let member_friend = friends.contains(p);
        if p == me || member_friend || heard.contains(p) {
            reachable.push(p.clone());
            continue;
        }
        let mut through: Vec<String> = changes
            .iter()
            .filter(|c| c.change.target == *p && c.change.action != ClubAction::Remove)
            .map(|c| c.author.clone())
            .filter(|a| a != me)
            .collect();
        through.extend(
            friends
                .iter()
                .filter(|f| !book.is_member_now(club, f))
                .cloned(),
        );
        // Each peer once, in the order found (admins first).
        let mut seen = BTreeSet::new();
        through.retain(|p| seen.insert(p.clone()));
        unreachable.push(Unreachable {
            peer: p.clone(),
            name: names.get(p).cloned(),
            through,
        });
    }
    Ok(ClubStatus {
        club: club.to_string(),
        members: member_list.len(),
        reachable,
        unreachable,
    })
}

#[cfg(test)]
mod tests {
    use porfiry_storage::DB_FILE_NAME;

    use super::*;

    fn key(n: u8) -> NodeKey {
        NodeKey::from_seed([n; 32])
    }

    #[test]
    fn a_short_name_resolves_only_when_one_known_club_has_it() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::create(tmp.path().join(DB_FILE_NAME)).unwrap();
        let me = key(1);
        let mine = create_club(&store, &me, "chess", 10).unwrap();
        assert_eq!(resolve_club(&store, "chess").unwrap(), mine);
        assert!(matches!(
            create_club(&store, &me, "chess", 11),
            Err(ClubsError::Exists(_))
        ));
        // Another founder's chess club, heard of through a change adding us.
        let other = ClubRef::new("chess", &key(2).peer_id().to_string()).unwrap();
        let store2 = Store::create(tmp.path().join("other.db")).unwrap();
        store2.create_club(&other, 1).unwrap();
        let added = change_club(
            &store2,
            &key(2),
            &other,
            ClubAction::Add,
            &me.peer_id().to_string(),
            20,
        )
        .unwrap();
        store
            .insert_items(&[stored_record(
                &added,
                added.max_hops(),
                Some(key(2).peer_id().to_string()),
            )])
            .unwrap();
        match resolve_club(&store, "chess") {
            Err(ClubsError::Ambiguous { candidates, .. }) => {
                assert_eq!(candidates.len(), 2);
                assert!(candidates.contains(&mine.to_string()));
                assert!(candidates.contains(&other.to_string()));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(resolve_club(&store, &other.to_string()).unwrap(), other);
        assert!(matches!(
            resolve_club(&store, "go"),
            Err(ClubsError::NoSuchClub(_))
        ));
        // We are a member of both; a change we have no right to is refused
        // before anything is stored.
        check_member(&store, &other, &me.peer_id().to_string()).unwrap();
        let before = store.item_count().unwrap();
        assert!(matches!(
            change_club(
                &store,
                &me,
                &other,
                ClubAction::Add,
                &key(3).peer_id().to_string(),
                30
            ),
            Err(ClubsError::Refused(ClubError::NotAllowed { .. }))
        ));
        assert_eq!(store.item_count().unwrap(), before);
    }
}
