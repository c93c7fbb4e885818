//! The one predicate that says whether a friend may receive an item.
//!
//! Live push (the engine), catch-up (reconciliation of exactly the set a
//! friend may receive) and the storage query behind both all call
//! [`may_send`], so the three can never disagree.

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
}

/// What this node knows of one friend when deciding what to send it.
#[derive(Debug, Clone, Copy)]
pub struct FriendView<'a> {
    /// The friend's peer id string.
    pub peer_id: &'a str,
    /// The groups this node tagged the friend with (`family`, `club`, …).
    pub groups: &'a [String],
}

/// True when `friend` may receive `item` from the node `local_peer`.
///
/// Rules: never back to its author or to the friend it came from; never
/// once expired or out of hops; `public` goes to any friend; `friends`,
/// `group:NAME` and `peer:ID` travel one hop only, so only their author
/// sends them; a group item goes only to friends tagged with that group,
/// a peer item only to that one friend.
pub fn may_send(
    local_peer: &str,
    item: &ItemRoute<'_>,
    friend: &FriendView<'_>,
    now_ms: u64,
) -> bool {
    if friend.peer_id == item.author || item.received_from == Some(friend.peer_id) {
        return false;
    }
    if item.hops_left == 0 || item.expires_ms.is_some_and(|e| e <= now_ms) {
        return false;
    }
    match item.audience {
        Audience::Public => true,
        Audience::Friends => item.author == local_peer,
        Audience::Group(g) => item.author == local_peer && friend.groups.iter().any(|x| x == g),
        Audience::Peer(p) => item.author == local_peer && friend.peer_id == p,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ME: &str = "me";
    const BOB: &str = "bob";
    const CAROL: &str = "carol";

    fn route<'a>(author: &'a str, audience: &'a Audience, from: Option<&'a str>) -> ItemRoute<'a> {
        ItemRoute {
            author,
            audience,
            hops_left: 3,
            received_from: from,
            expires_ms: None,
        }
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
        assert!(may_send(ME, &route(ME, &a, None), &bob, 0));
        assert!(may_send(ME, &route(CAROL, &a, Some(CAROL)), &bob, 0));
        assert!(
            !may_send(ME, &route(CAROL, &a, Some(BOB)), &bob, 0),
            "not back to sender"
        );
        assert!(
            !may_send(ME, &route(CAROL, &a, Some(BOB)), &carol, 0),
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
        assert!(may_send(ME, &route(ME, &f, None), &bob, 0));
        assert!(!may_send(ME, &route(CAROL, &f, Some(CAROL)), &bob, 0));
        assert!(may_send(ME, &route(ME, &g, None), &bob_fam, 0));
        assert!(!may_send(ME, &route(ME, &g, None), &bob, 0));
        assert!(!may_send(ME, &route(CAROL, &g, Some(CAROL)), &bob_fam, 0));
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
        assert!(may_send(ME, &route(ME, &to_bob, None), &bob, 0));
        assert!(!may_send(ME, &route(ME, &to_bob, None), &carol, 0));
        // Held by a relay (it should never be, but if so): not passed on,
        // even to its addressee.
        let to_carol = Audience::Peer(CAROL.into());
        assert!(!may_send(ME, &route(BOB, &to_carol, Some(BOB)), &carol, 0));
        let mut r = route(ME, &to_bob, None);
        r.hops_left = 0;
        assert!(!may_send(ME, &r, &bob, 0));
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
        assert!(!may_send(ME, &r, &bob, 0));
        r.hops_left = 1;
        r.expires_ms = Some(100);
        assert!(may_send(ME, &r, &bob, 99));
        assert!(!may_send(ME, &r, &bob, 100));
    }
}
