//! Clubs in the engine: the club book's rules (order independence, who may
//! change the member list, membership at publication time), club items
//! travelling member to member and never to a non-member (live and by
//! catch-up), removal cutting a member off from later items only, and a
//! property test over random friend graphs, clubs and removals: every club
//! item reaches exactly the members entitled to it (members at publication
//! time connected to its author through members), never anyone else.

mod engine_support;

use std::collections::BTreeSet;

use engine_support::*;
use porfiry_protocol::club::{
    CLUB_MAX_HOPS, ClubAction, ClubBook, ClubChange, ClubError, ClubRef, ClubRole, MAX_CLUB_CHANGES,
};
use porfiry_protocol::engine::{DeleteReason, Event, Input, Output, RejectReason};
use porfiry_protocol::item::body::Body;
use porfiry_protocol::{Audience, NodeKey, PayloadDraft, VerifiedItem, sign};
use proptest::prelude::*;

/// The club `name` founded by test node `founder`.
fn club(founder: usize) -> ClubRef {
    ClubRef::new("chess", &peer(founder)).unwrap()
}

/// A signed change to `club` by `author`.
fn change(
    author: &NodeKey,
    created_ms: u64,
    club: &ClubRef,
    action: ClubAction,
    target: usize,
) -> VerifiedItem {
    let draft = PayloadDraft {
        created_ms,
        audience: Audience::Club(club.clone()),
        max_hops: CLUB_MAX_HOPS,
        expires_ms: None,
        replaces: None,
        body: Body::ClubChange(ClubChange {
            club: club.clone(),
            action,
            target: peer(target),
        }),
    };
    sign(author, &draft).expect("test change signs")
}

/// A club note by test node `author`.
fn club_note(author: usize, created_ms: u64, club: &ClubRef, text: &str) -> VerifiedItem {
    note(
        &key(author),
        created_ms,
        Audience::Club(club.clone()),
        CLUB_MAX_HOPS,
        text,
    )
}

fn add_to(book: &mut ClubBook, item: &VerifiedItem) {
    let Body::ClubChange(c) = item.body() else {
        panic!("not a change")
    };
    book.insert(item.id(), item.created_ms(), item.author_peer_id(), c)
        .unwrap();
}

fn members(book: &ClubBook, club: &ClubRef) -> Vec<String> {
    book.members(club).into_iter().map(|m| m.peer).collect()
}

#[test]
fn the_book_is_the_same_whatever_order_changes_arrive_in() {
    let c = club(0);
    let changes = [
        change(&key(0), T0, &c, ClubAction::AddAdmin, 1),
        change(&key(1), T0 + 10, &c, ClubAction::Add, 2),
        change(&key(1), T0 + 20, &c, ClubAction::Add, 3),
        change(&key(3), T0 + 30, &c, ClubAction::Leave, 3),
        change(&key(0), T0 + 40, &c, ClubAction::Remove, 1),
        // After 1 lost its rights: does not count.
        change(&key(1), T0 + 50, &c, ClubAction::Add, 4),
    ];
    let mut forward = ClubBook::new();
    changes.iter().for_each(|x| add_to(&mut forward, x));
    let mut backward = ClubBook::new();
    changes.iter().rev().for_each(|x| add_to(&mut backward, x));
    assert_eq!(members(&forward, &c), members(&backward, &c));
    assert_eq!(members(&forward, &c), vec![peer(0), peer(2)]);
    for t in [T0, T0 + 15, T0 + 25, T0 + 35, T0 + 45, T0 + 55] {
        for p in 0..5 {
            assert_eq!(
                forward.role_at(&c, &peer(p), t),
                backward.role_at(&c, &peer(p), t),
                "peer {p} at {t}"
            );
        }
    }
    // Membership at publication time.
    assert!(forward.is_member(&c, &peer(3), T0 + 25));
    assert!(!forward.is_member(&c, &peer(3), T0 + 30));
    assert!(!forward.is_member(&c, &peer(3), T0 + 19));
    assert_eq!(forward.role_at(&c, &peer(1), T0 + 39), ClubRole::Admin);
    assert_eq!(forward.role_at(&c, &peer(0), 0), ClubRole::Admin);
}

#[test]
fn only_admins_change_the_list_and_the_founder_stays() {
    let c = club(0);
    let mut book = ClubBook::new();
    add_to(&mut book, &change(&key(0), T0, &c, ClubAction::Add, 1));
    add_to(&mut book, &change(&key(0), T0, &c, ClubAction::AddAdmin, 2));
    let not_allowed = |book: &ClubBook, x: &VerifiedItem| {
        let Body::ClubChange(ch) = x.body() else {
            unreachable!()
        };
        matches!(
            book.check(x.created_ms(), x.author_peer_id(), ch),
            Err(ClubError::NotAllowed { .. })
        )
    };
    // A plain member may not add; an admin may; only the founder names
    // admins or removes one; nobody removes the founder; only oneself leaves.
    assert!(not_allowed(
        &book,
        &change(&key(1), T0 + 1, &c, ClubAction::Add, 3)
    ));
    assert!(!not_allowed(
        &book,
        &change(&key(2), T0 + 1, &c, ClubAction::Add, 3)
    ));
    assert!(not_allowed(
        &book,
        &change(&key(2), T0 + 1, &c, ClubAction::AddAdmin, 3)
    ));
    assert!(not_allowed(
        &book,
        &change(&key(0), T0 + 1, &c, ClubAction::Remove, 0)
    ));
    assert!(not_allowed(
        &book,
        &change(&key(1), T0 + 1, &c, ClubAction::Leave, 2)
    ));
    assert!(!not_allowed(
        &book,
        &change(&key(1), T0 + 1, &c, ClubAction::Leave, 1)
    ));
    // An admin's change dated before it became admin does not count, even
    // when it arrives later.
    assert!(not_allowed(
        &book,
        &change(&key(2), T0 - 1, &c, ClubAction::Add, 3)
    ));
    add_to(&mut book, &change(&key(2), T0 - 1, &c, ClubAction::Add, 3));
    assert!(!book.is_member_now(&c, &peer(3)));
}

#[test]
fn the_book_refuses_changes_beyond_its_bound() {
    let c = club(0);
    let mut book = ClubBook::new();
    for i in 0..MAX_CLUB_CHANGES {
        let x = change(&key(0), T0 + i as u64, &c, ClubAction::Add, 1 + i % 3);
        add_to(&mut book, &x);
    }
    assert_eq!(book.change_count(&c), MAX_CLUB_CHANGES);
    let one_more = change(&key(0), T0 - 5, &c, ClubAction::Add, 9);
    let Body::ClubChange(ch) = one_more.body() else {
        unreachable!()
    };
    assert_eq!(
        book.insert(one_more.id(), T0 - 5, &peer(0), ch),
        Err(ClubError::TooManyChanges(c.clone()))
    );
    assert_eq!(book.room_for(ch), Err(ClubError::TooManyChanges(c)));
}

/// The line 0–1–2 of members, 3 a non-member friend of 1, 4 a non-member
/// friend of 2: the founder 0 adds 1 and 2.
fn line_club() -> (Net, ClubRef) {
    let mut net = Net::new(5, T0, |c| c);
    net.befriend(0, 1, 20);
    net.befriend(1, 2, 20);
    net.befriend(1, 3, 20);
    net.befriend(2, 4, 20);
    net.connect_all();
    let c = club(0);
    net.publish(0, change(&key(0), T0, &c, ClubAction::Add, 1));
    net.advance(1_000);
    let t = net.now;
    net.publish(0, change(&key(0), t, &c, ClubAction::Add, 2));
    net.advance(5_000);
    (net, c)
}

#[test]
fn a_club_note_reaches_members_through_members_and_never_a_non_member() {
    let (mut net, c) = line_club();
    for n in 0..3 {
        let got: BTreeSet<String> = members(net.nodes[n].engine.clubs(), &c)
            .into_iter()
            .collect();
        assert_eq!(got, BTreeSet::from([peer(0), peer(1), peer(2)]), "node {n}");
    }
    let x = club_note(0, net.now, &c, "to the club");
    net.publish(0, x.clone());
    net.advance(5_000);
    assert_eq!(net.holders(&x.id()), BTreeSet::from([0, 1, 2]));
    // Nor did a non-member get a club change.
    for n in [3, 4] {
        assert_eq!(net.nodes[n].engine.item_count(), 0, "non-member {n}");
    }
}

#[test]
fn a_removed_member_keeps_earlier_items_and_gets_no_later_one() {
    let (mut net, c) = line_club();
    let before = club_note(0, net.now, &c, "before");
    net.publish(0, before.clone());
    net.advance(5_000);
    let t = net.now;
    net.publish(0, change(&key(0), t, &c, ClubAction::Remove, 2));
    net.advance(5_000);
    assert!(!net.nodes[1].engine.clubs().is_member_now(&c, &peer(2)));
    let after = club_note(0, net.now, &c, "after");
    net.publish(0, after.clone());
    net.advance(5_000);
    assert_eq!(net.holders(&after.id()), BTreeSet::from([0, 1]));
    assert!(net.holders(&before.id()).contains(&2), "earlier items stay");
    // Nor does catch-up bring it later.
    net.disconnect(1, 2);
    net.connect(1, 2);
    net.advance(10_000);
    assert_eq!(net.holders(&after.id()), BTreeSet::from([0, 1]));
}

#[test]
fn a_member_offline_at_publication_gets_the_item_by_catch_up_once() {
    let (mut net, c) = line_club();
    net.go_offline(2);
    let x = club_note(1, net.now, &c, "while you were away");
    net.publish(1, x.clone());
    net.advance(5_000);
    assert_eq!(net.holders(&x.id()), BTreeSet::from([0, 1]));
    net.go_online(2);
    net.advance(10_000);
    assert_eq!(net.holders(&x.id()), BTreeSet::from([0, 1, 2]));
    assert_eq!(net.copies.get(&(2, x.id())), Some(&1), "delivered once");
    assert!(!net.holders(&x.id()).contains(&3));
}

#[test]
fn non_members_and_bad_changes_are_refused() {
    let c = club(0);
    let mut e = engine(1);
    connect(&mut e, 0, &[]);
    connect(&mut e, 3, &[]);
    // Not a member yet: a club note from the founder is not for us.
    let x = club_note(0, T0, &c, "early");
    let out = items_from(&mut e, T0, 0, CLUB_MAX_HOPS, &x);
    assert!(rejected(&out, RejectReason::NotAClubMember), "{out:?}");
    // A change by a non-admin.
    let bad = change(&key(3), T0, &c, ClubAction::Add, 1);
    let out = items_from(&mut e, T0, 3, CLUB_MAX_HOPS, &bad);
    assert!(
        out.iter().any(|o| matches!(
            o,
            Output::Event(Event::Rejected {
                reason: RejectReason::BadClubChange(ClubError::NotAllowed { .. }),
                ..
            })
        )),
        "{out:?}"
    );
    // Added by the founder: now the founder's notes come in, a non-member's
    // relay of them does not, and our own club items need membership.
    let add = change(&key(0), T0, &c, ClubAction::Add, 1);
    assert_eq!(
        stored(&items_from(&mut e, T0, 0, CLUB_MAX_HOPS, &add)),
        vec![add.id()]
    );
    let y = club_note(0, T0 + 1, &c, "welcome");
    let relayed = items_from(&mut e, T0 + 2, 3, CLUB_MAX_HOPS, &y);
    assert!(rejected(&relayed, RejectReason::NotAClubMember));
    assert_eq!(
        stored(&items_from(&mut e, T0 + 2, 0, CLUB_MAX_HOPS, &y)),
        vec![y.id()]
    );
    let other = ClubRef::new("go", &peer(0)).unwrap();
    let out = e.handle(
        T0 + 3,
        Input::Publish {
            item: club_note(1, T0 + 3, &other, "x"),
        },
    );
    assert!(rejected(&out, RejectReason::NotAClubMember));
    // Nothing of the club is ever offered to the non-member friend.
    let out = e.handle(T0 + 1_000, Input::Tick);
    assert!(items_sent_to(&out, &peer(3)).is_empty());
    assert!(sent_to(&out, &peer(3)).is_empty());
}

#[test]
fn a_late_change_showing_the_author_was_out_drops_its_items() {
    let c = club(0);
    let mut e = engine(1);
    connect(&mut e, 0, &[]);
    connect(&mut e, 2, &[]);
    for x in [
        change(&key(0), T0, &c, ClubAction::Add, 1),
        change(&key(0), T0, &c, ClubAction::Add, 2),
    ] {
        items_from(&mut e, T0, 0, CLUB_MAX_HOPS, &x);
    }
    let x = club_note(2, T0 + 20, &c, "by 2");
    assert_eq!(
        stored(&items_from(&mut e, T0 + 30, 2, CLUB_MAX_HOPS, &x)),
        vec![x.id()]
    );
    // The founder had removed 2 before it wrote that.
    let rm = change(&key(0), T0 + 10, &c, ClubAction::Remove, 2);
    let out = items_from(&mut e, T0 + 40, 0, CLUB_MAX_HOPS, &rm);
    assert!(out.iter().any(|o| matches!(
        o,
        Output::Delete { id, reason: DeleteReason::NotAClubMember } if *id == x.id()
    )));
    assert!(!e.holds(&x.id()));
}

fn rejected(out: &[Output], why: RejectReason) -> bool {
    out.iter()
        .any(|o| matches!(o, Output::Event(Event::Rejected { reason, .. }) if *reason == why))
}

/// Members at `at` (by the oracle book) connected to `author` through
/// members only: who a club item of `author` written at `at` must reach.
fn expected(net: &Net, book: &ClubBook, c: &ClubRef, author: usize, at: u64) -> BTreeSet<usize> {
    let entitled = |n: usize| {
        book.is_member(c, &net.nodes[n].peer, at) && book.is_member_now(c, &net.nodes[n].peer)
    };
    let mut seen = BTreeSet::from([author]);
    let mut frontier = vec![author];
    while let Some(x) = frontier.pop() {
        for y in net.friends(x) {
            if entitled(y) && seen.insert(y) {
                frontier.push(y);
            }
        }
    }
    seen
}

#[derive(Debug, Clone)]
struct Plan {
    n: usize,
    edges: Vec<(usize, usize)>,
    members: Vec<bool>,
    removed: Vec<bool>,
    authors: (usize, usize),
}

fn plan() -> impl Strategy<Value = Plan> {
    (3usize..=9).prop_flat_map(|n| {
        let pairs: Vec<(usize, usize)> = (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
            .collect();
        let np = pairs.len();
        (
            Just(n),
            Just(pairs),
            proptest::collection::vec(proptest::bool::weighted(0.4), np),
            proptest::collection::vec(any::<bool>(), n),
            proptest::collection::vec(proptest::bool::weighted(0.3), n),
            (0..n, 0..n),
        )
            .prop_map(|(n, pairs, bits, members, removed, authors)| Plan {
                n,
                edges: pairs
                    .into_iter()
                    .zip(bits)
                    .filter(|(_, b)| *b)
                    .map(|(p, _)| p)
                    .collect(),
                members,
                removed,
                authors,
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Every club item reaches exactly the members entitled to it at its
    /// publication time (reachable through members), never a non-member;
    /// club changes reach no non-member either.
    #[test]
    fn club_items_reach_exactly_the_entitled_members(p in plan()) {
        let mut net = Net::new(p.n, T0, |c| c);
        for &(a, b) in &p.edges {
            net.befriend(a, b, 10 + ((a * 7 + b * 3) % 40) as u64);
        }
        net.connect_all();
        let c = club(0);
        let mut oracle = ClubBook::new();
        let mut t = T0;
        for m in 1..p.n {
            if p.members[m] {
                t += 1;
                let x = change(&key(0), t, &c, ClubAction::Add, m);
                add_to(&mut oracle, &x);
                net.publish(0, x);
            }
        }
        net.advance(20_000);
        // An author that knows it is a member (its own book says so).
        let pick = |net: &Net, a: usize| {
            if net.nodes[a].engine.clubs().is_member_now(&c, &peer(a)) { a } else { 0 }
        };
        let first_author = pick(&net, p.authors.0);
        let first = club_note(first_author, net.now, &c, "first");
        let first_at = net.now;
        let want_first = expected(&net, &oracle, &c, first_author, first_at);
        net.publish(first_author, first.clone());
        net.advance(20_000);
        for m in 1..p.n {
            if p.members[m] && p.removed[m] {
                let x = change(&key(0), net.now, &c, ClubAction::Remove, m);
                add_to(&mut oracle, &x);
                net.publish(0, x);
            }
        }
        net.advance(20_000);
        let second_author = pick(&net, p.authors.1);
        let second = club_note(second_author, net.now, &c, "second");
        let want_second = expected(&net, &oracle, &c, second_author, net.now);
        net.publish(second_author, second.clone());
        net.advance(20_000);
        prop_assert_eq!(net.holders(&second.id()), want_second);
        // The first item: its entitled set (removed members keep it).
        prop_assert_eq!(net.holders(&first.id()), want_first);
        // No non-member ever held anything of the club.
        for n in 1..p.n {
            if !p.members[n] {
                prop_assert_eq!(net.nodes[n].engine.item_count(), 0, "non-member {}", n);
            }
        }
    }
}
