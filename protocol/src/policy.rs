//! The one predicate that says whether a friend may receive an item.
//!
//! Live push (the engine), catch-up (reconciliation of exactly the set a
//! friend may receive) and the storage query behind both all call
//! [`may_send`], so the three can never disagree. [`could_come_from`] is
//! its mirror on the receiving side for club items, and
//! [`device_could_come_from`] for items of the author's person's devices.

use crate::club::{ClubBook, ClubRef};
use crate::devices::DeviceBook;
use crate::item::audience::Audience;

/// The routing facts of one stored item, as this node holds it.
#[derive(Debug, Clone, Copy)]
pub struct ItemRoute<'a> {
    /// Peer id string (`12D3KooW…`) of the item's author.
    pub author: &'a str,
    /// Who may receive it.
    pub audience: &'a Audience,
    /// How many more hops this node's copy may travel; 0 = keep it here.
    pub hops_left: u8,
    /// The friend this node got it from; `None` for our own items.
    pub received_from: Option<&'a str>,
    /// Expiry in Unix milliseconds, if the author set one.
    pub expires_ms: Option<u64>,
    /// The author's creation time (Unix ms): club membership is judged at it.
    pub created_ms: u64,
    /// For a club change: the member it concerns, who receives it too.
    pub club_target: Option<&'a str>,
    /// For a club change: true if it ends a membership (remove, leave).
    pub club_removal: bool,
    /// True for a `device_link` item (a link or unlink statement): it also
    /// goes to, and comes from, former devices, so the side an unlink ends
    /// learns of it.
    pub device_statement: bool,
}

/// What this node knows of one friend when deciding what to send it.
#[derive(Debug, Clone, Copy)]
pub struct FriendView<'a> {
    /// The friend's peer id string.
    pub peer_id: &'a str,
    /// The groups this node tagged the friend with (`family`, `club`, …).
    pub groups: &'a [String],
}

/// Peer id equality, cheapest test first. Ids of one key type share their
/// first bytes (every ed25519 peer id starts `12D3KooW`) and differ in
/// their last eight, so comparing those as one word settles nearly every
/// unequal pair without a `memcmp` call. `may_send` runs for every held item
/// when a catch-up set is built: perf put `memcmp` at 11 % of a
/// 100,000-node simulation.
#[inline]
pub fn same_peer(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    if let (Some(x), Some(y)) = (a.last_chunk::<8>(), b.last_chunk::<8>())
        && x != y
    {
        return false;
    }
    a == b
}

/// True when `friend` may receive `item` from the node `local_peer`.
///
/// Rules: never back to its author or to the friend it came from; never
/// once expired or out of hops; `public` goes to any friend; `friends`,
/// `group:NAME` and `peer:ID` travel one hop only, so only their author
/// sends them; a group item goes only to friends tagged with that group,
/// a peer item only to that one friend. A club item goes, from any member,
/// only to a friend [`club_entitled`] to it, and only while this node is a
/// member itself. A `devices` item goes, from any device of the person,
/// only to a friend [`device_entitled`] to it (`devices`: this node's
/// [`DeviceBook`]).
pub fn may_send(
    local_peer: &str,
    item: &ItemRoute<'_>,
    friend: &FriendView<'_>,
    clubs: &ClubBook,
    devices: &DeviceBook,
    now_ms: u64,
) -> bool {
    if same_peer(friend.peer_id, item.author)
        || item
            .received_from
            .is_some_and(|r| same_peer(r, friend.peer_id))
    {
        return false;
    }
    if item.hops_left == 0 || item.expires_ms.is_some_and(|e| e <= now_ms) {
        return false;
    }
    match item.audience {
        Audience::Public => true,
        Audience::Friends => same_peer(item.author, local_peer),
        Audience::Group(g) => {
            same_peer(item.author, local_peer) && friend.groups.iter().any(|x| x == g)
        }
        Audience::Peer(p) => same_peer(item.author, local_peer) && same_peer(friend.peer_id, p),
        Audience::Club(c) => {
            let relays = if item.club_target.is_some() && item.club_removal {
                clubs.was_member(c, local_peer)
            } else {
                clubs.is_member_now(c, local_peer)
            };
            relays && club_entitled(c, item, friend.peer_id, clubs)
        }
        Audience::Devices => device_entitled(local_peer, item, friend.peer_id, devices),
    }
}

/// True when the node `local` may pass the `devices` item `item` to `peer`:
/// its author is `local` or one of its devices, and `peer` is one of its
/// devices. A device statement (`device_link` item) also goes to and from
/// former devices (see [`DeviceBook::was_device`]), so that a node an
/// unlink cuts off learns of it; nothing else of the person reaches them.
pub fn device_entitled(
    local: &str,
    item: &ItemRoute<'_>,
    peer: &str,
    devices: &DeviceBook,
) -> bool {
    if same_peer(peer, local) {
        return false;
    }
    let by_us = same_peer(item.author, local);
    if item.device_statement {
        (by_us || devices.was_device(item.author)) && devices.was_device(peer)
    } else {
        (by_us || devices.is_device(item.author)) && devices.is_device(peer)
    }
}

/// Why a `devices` item may not come to this node from a friend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceRefusal {
    /// The friend that sent it is not one of this node's devices.
    SenderNotADevice,
    /// Its author is not one of this node's devices.
    AuthorNotADevice,
}

/// The receiving side of [`may_send`] for a `devices` item: the node
/// `local` may take `item` from `sender` only if both the sender and the
/// author are its devices (former devices too, for a device statement,
/// judged by the book with the statement in it: see the engine's
/// `devices.rs`).
pub fn device_could_come_from(
    local: &str,
    item: &ItemRoute<'_>,
    sender: &str,
    devices: &DeviceBook,
) -> Result<(), DeviceRefusal> {
    let is = |p: &str| {
        !same_peer(p, local)
            && if item.device_statement {
                devices.was_device(p)
            } else {
                devices.is_device(p)
            }
    };
    if !is(sender) {
        return Err(DeviceRefusal::SenderNotADevice);
    }
    if !is(item.author) {
        return Err(DeviceRefusal::AuthorNotADevice);
    }
    Ok(())
}

/// True when `peer` may hold the club item `item` of `club`: a club change
/// goes to every member now (so a new member learns the whole list) and to
/// the member it concerns, and a removal (remove, leave) to everyone who
/// ever was a member and is relayed by them too — else members whose only
/// path to the founder runs through removed members would never learn of
/// it and would go on sending new items to the removed; any other club
/// item goes to a peer that was a member at the item's creation time and
/// still is one.
pub fn club_entitled(club: &ClubRef, item: &ItemRoute<'_>, peer: &str, clubs: &ClubBook) -> bool {
    match item.club_target {
        Some(target) if item.club_removal => target == peer || clubs.was_member(club, peer),
        Some(target) => target == peer || clubs.is_member_now(club, peer),
        None => clubs.is_member(club, peer, item.created_ms) && clubs.is_member_now(club, peer),
    }
}

/// Why a club item may not come to this node from a friend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClubRefusal {
    /// This node is not entitled to it.
    NotForUs,
    /// Its author was not a member when it was created.
    AuthorNotMember,
    /// The friend that sent it is neither its author nor a member.
    SenderNotMember,
}

/// The receiving side of [`may_send`] for a club item of `club`: the node
/// `local_peer` may take `item` from `sender`. (A club change's own right is
/// checked by the book: [`ClubBook::check`].)
pub fn could_come_from(
    local_peer: &str,
    club: &ClubRef,
    item: &ItemRoute<'_>,
    sender: &str,
    clubs: &ClubBook,
) -> Result<(), ClubRefusal> {
    // A change may reach a new member before the changes that make it one
    // (catch-up sends in time order, not in the order that explains them):
    // it is authentic by its signature and judged by the book, so it is
    // taken whatever the book says of us.
    if item.club_target.is_none() && !club_entitled(club, item, local_peer, clubs) {
        return Err(ClubRefusal::NotForUs);
    }
    if item.club_target.is_none() && !clubs.is_member(club, item.author, item.created_ms) {
        return Err(ClubRefusal::AuthorNotMember);
    }
    // A change is authentic by its signature and judged by the book, so it
    // may come from anyone (a new member does not know the others yet).
    if item.club_target.is_none() && sender != item.author && !clubs.is_member_now(club, sender) {
        return Err(ClubRefusal::SenderNotMember);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// `same_peer` is string equality: short strings, real-looking
        /// peer ids, ids equal but for one byte anywhere.
        #[test]
        fn same_peer_is_string_equality(
            a in "[a-zA-Z0-9]{0,60}",
            b in "[a-zA-Z0-9]{0,60}",
            at in any::<prop::sample::Index>(),
        ) {
            prop_assert_eq!(same_peer(&a, &b), a == b);
            prop_assert!(same_peer(&a, &a.clone()));
            let id = format!("12D3KooW{a}");
            let mut other = id.clone().into_bytes();
            let i = at.index(other.len());
            other[i] = if other[i] == b'x' { b'y' } else { b'x' };
            let other = String::from_utf8(other).unwrap();
            prop_assert_eq!(same_peer(&id, &other), id == other);
        }
    }

    const ME: &str = "me";
    const BOB: &str = "bob";
    const CAROL: &str = "carol";
    static NO_CLUBS: ClubBook = ClubBook::new();

    fn route<'a>(author: &'a str, audience: &'a Audience, from: Option<&'a str>) -> ItemRoute<'a> {
        ItemRoute {
            author,
            audience,
            hops_left: 3,
            received_from: from,
            expires_ms: None,
            created_ms: 0,
            club_target: None,
            club_removal: false,
            device_statement: false,
        }
    }

    fn no_devices() -> DeviceBook {
        DeviceBook::new(ME)
    }

    #[test]
    fn public_goes_to_any_friend_but_not_back() {
        let a = Audience::Public;
        let none: [String; 0] = [];
        let bob = FriendView {
            peer_id: BOB,
            groups: &none,
        };
        let carol = FriendView {
            peer_id: CAROL,
            groups: &none,
        };
        assert!(may_send(
            ME,
            &route(ME, &a, None),
            &bob,
            &NO_CLUBS,
            &no_devices(),
            0
        ));
        assert!(may_send(
            ME,
            &route(CAROL, &a, Some(CAROL)),
            &bob,
            &NO_CLUBS,
            &no_devices(),
            0
        ));
        assert!(
            !may_send(
                ME,
                &route(CAROL, &a, Some(BOB)),
                &bob,
                &NO_CLUBS,
                &no_devices(),
                0
            ),
            "not back to sender"
        );
        assert!(
            !may_send(
                ME,
                &route(CAROL, &a, Some(BOB)),
                &carol,
                &NO_CLUBS,
                &no_devices(),
                0
            ),
            "not back to author"
        );
    }

    #[test]
    fn friends_and_groups_travel_one_hop() {
        let fam = vec!["family".to_owned()];
        let none: Vec<String> = vec![];
        let bob_fam = FriendView {
            peer_id: BOB,
            groups: &fam,
        };
        let bob = FriendView {
            peer_id: BOB,
            groups: &none,
        };
        let f = Audience::Friends;
        let g = Audience::Group("family".into());
        assert!(may_send(
            ME,
            &route(ME, &f, None),
            &bob,
            &NO_CLUBS,
            &no_devices(),
            0
        ));
        assert!(!may_send(
            ME,
            &route(CAROL, &f, Some(CAROL)),
            &bob,
            &NO_CLUBS,
            &no_devices(),
            0
        ));
        assert!(may_send(
            ME,
            &route(ME, &g, None),
            &bob_fam,
            &NO_CLUBS,
            &no_devices(),
            0
        ));
        assert!(!may_send(
            ME,
            &route(ME, &g, None),
            &bob,
            &NO_CLUBS,
            &no_devices(),
            0
        ));
        assert!(!may_send(
            ME,
            &route(CAROL, &g, Some(CAROL)),
            &bob_fam,
            &NO_CLUBS,
            &no_devices(),
            0
        ));
    }

    #[test]
    fn a_peer_item_goes_to_its_addressee_only_and_only_from_its_author() {
        let none: Vec<String> = vec![];
        let fam = vec!["family".to_owned()];
        let bob = FriendView {
            peer_id: BOB,
            groups: &none,
        };
        let carol = FriendView {
            peer_id: CAROL,
            groups: &fam,
        };
        let to_bob = Audience::Peer(BOB.into());
        assert!(may_send(
            ME,
            &route(ME, &to_bob, None),
            &bob,
            &NO_CLUBS,
            &no_devices(),
            0
        ));
        assert!(!may_send(
            ME,
            &route(ME, &to_bob, None),
            &carol,
            &NO_CLUBS,
            &no_devices(),
            0
        ));
        // Held by a relay (it should never be, but if so): not passed on,
        // even to its addressee.
        let to_carol = Audience::Peer(CAROL.into());
        assert!(!may_send(
            ME,
            &route(BOB, &to_carol, Some(BOB)),
            &carol,
            &NO_CLUBS,
            &no_devices(),
            0
        ));
        let mut r = route(ME, &to_bob, None);
        r.hops_left = 0;
        assert!(!may_send(ME, &r, &bob, &NO_CLUBS, &no_devices(), 0));
    }

    #[test]
    fn expired_or_hopless_items_stay() {
        let a = Audience::Public;
        let none: [String; 0] = [];
        let bob = FriendView {
            peer_id: BOB,
            groups: &none,
        };
        let mut r = route(ME, &a, None);
        r.hops_left = 0;
        assert!(!may_send(ME, &r, &bob, &NO_CLUBS, &no_devices(), 0));
        r.hops_left = 1;
        r.expires_ms = Some(100);
        assert!(may_send(ME, &r, &bob, &NO_CLUBS, &no_devices(), 99));
        assert!(!may_send(ME, &r, &bob, &NO_CLUBS, &no_devices(), 100));
    }
}
