//! A person's devices in the engine: who may hand us the person's items,
//! the driver setting the device book, a new device catching up on the
//! person's memory while a friend of both gets none of it, an unlink
//! reaching the side it ends and stopping the flow, and a property test
//! over random graphs of persons (1 to 3 devices each) and friendships
//! (some across persons, so friends are themselves devices of other
//! persons): every `devices` item reaches every device of its author's
//! person that live links connect to the author, and no other node ever
//! gets a copy of it or hears its id, not even as a relay.

mod engine_support;

use std::collections::BTreeSet;

use engine_support::*;
use porfiry_protocol::devices::{
    DEVICES_MAX_HOPS, DeviceBook, DeviceError, DeviceLink, DeviceStatement, DeviceUnlink,
    LinkProposal,
};
use porfiry_protocol::engine::{Event, Input, MAX_PARKED_STATEMENTS, Output, RejectReason};
use porfiry_protocol::item::body::Body;
use porfiry_protocol::wire::WireMessage;
use porfiry_protocol::{Audience, ItemId, PayloadDraft, VerifiedItem, sign};
use proptest::prelude::*;

fn link(a: usize, b: usize, since_ms: u64) -> DeviceLink {
    LinkProposal::new(&key(a), &peer(b), since_ms)
        .unwrap()
        .countersign(&key(b))
        .unwrap()
}

fn statement(author: usize, created_ms: u64, s: DeviceStatement) -> VerifiedItem {
    let draft = PayloadDraft {
        created_ms,
        audience: Audience::Devices,
        max_hops: DEVICES_MAX_HOPS,
        expires_ms: None,
        replaces: None,
        body: Body::DeviceLink(s),
    };
    sign(&key(author), &draft).expect("test statement signs")
}

/// The `device_link` item of `a` linking `b`, published by `a`.
fn link_item(a: usize, b: usize, at: u64) -> VerifiedItem {
    statement(a, at, DeviceStatement::Link(link(a, b, at)))
}

/// `by` ends its link with `other`.
fn unlink_item(by: usize, other: usize, at: u64) -> VerifiedItem {
    let u = DeviceUnlink::sign(&key(by), &peer(other), at).unwrap();
    statement(by, at, DeviceStatement::Unlink(u))
}

/// A record of the person's memory written on `author`.
fn memory(author: usize, at: u64, text: &str) -> VerifiedItem {
    note(&key(author), at, Audience::Devices, DEVICES_MAX_HOPS, text)
}

/// The book of `local` holding these links (all at T0).
fn book(local: usize, links: &[(usize, usize)]) -> DeviceBook {
    let mut b = DeviceBook::new(&peer(local));
    for &(x, y) in links {
        b.insert_link(&link(x, y, T0)).unwrap();
    }
    b
}

fn rejected(out: &[Output], why: &RejectReason) -> bool {
    out.iter()
        .any(|o| matches!(o, Output::Event(Event::Rejected { reason, .. }) if reason == why))
}

fn devices_of(net: &Net, n: usize) -> BTreeSet<usize> {
    (0..net.nodes.len())
        .filter(|&m| net.nodes[n].engine.devices().is_device(&peer(m)))
        .collect()
}

/// The nodes outside `insiders` that got a copy of one of `ids` or heard
/// one announced (`Have`), as "node: what" lines.
fn leaks(net: &Net, insiders: &BTreeSet<usize>, ids: &[ItemId]) -> Vec<String> {
    let mut out: Vec<String> = net
        .copies
        .keys()
        .filter(|(to, id)| !insiders.contains(to) && ids.contains(id))
        .map(|(to, id)| format!("{to}: a copy of {id}"))
        .collect();
    for line in net.trace.iter().flatten() {
        let Some(to) = line
            .split_whitespace()
            .nth(1)
            .and_then(|hop| hop.split("->").nth(1))
            .and_then(|to| to.parse::<usize>().ok())
        else {
            continue;
        };
        if !insiders.contains(&to) && ids.iter().any(|id| line.contains(&format!("{id:?}"))) {
            out.push(format!("{to}: {line}"));
        }
    }
    out
}

#[test]
fn only_devices_may_hand_us_the_persons_items() {
    let mut e = engine(0);
    connect(&mut e, 1, &[]);
    connect(&mut e, 3, &[]);
    assert!(e.set_devices(T0, book(0, &[(0, 1)])).is_ok());
    // A friend that is no device, writing for its own devices.
    let out = items_from(&mut e, T0, 3, 2, &memory(3, T0, "theirs"));
    assert!(rejected(&out, &RejectReason::NotADevice), "{out:?}");
    // A device relaying something by a node that is not one of ours.
    let out = items_from(&mut e, T0, 1, 2, &memory(3, T0, "relayed"));
    assert!(rejected(&out, &RejectReason::NotADevice), "{out:?}");
    // A friend showing its own link with a stranger: no claim on us.
    let out = items_from(&mut e, T0, 3, 2, &link_item(3, 4, T0));
    assert!(
        rejected(&out, &RejectReason::BadDeviceLink(DeviceError::NotOurs)),
        "{out:?}"
    );
    assert!(!e.devices().is_device(&peer(3)) && !e.devices().is_device(&peer(4)));
    // A device's own record, relayed onward by it or not: taken.
    let mine = memory(1, T0, "ours");
    let out = items_from(&mut e, T0, 1, 2, &mine);
    assert_eq!(stored(&out), vec![mine.id()]);
    assert_eq!(e.hops_left(&mine.id()), Some(1));
}

#[test]
fn a_link_from_its_other_side_makes_us_devices() {
    let mut e = engine(1);
    connect(&mut e, 0, &[]);
    // Something of ours for the new device, written before the link.
    e.handle(
        T0,
        Input::Publish {
            item: memory(1, T0, "on the phone"),
        },
    );
    let l = link_item(0, 1, T0);
    let out = items_from(&mut e, T0, 0, DEVICES_MAX_HOPS, &l);
    assert_eq!(stored(&out), vec![l.id()]);
    assert!(e.devices().is_device(&peer(0)));
    // And we are reconciled with our new device at once.
    assert!(
        sent_to(&out, &peer(0))
            .iter()
            .any(|m| matches!(m, WireMessage::SyncQuery { .. })),
        "{out:?}"
    );
}

#[test]
fn a_statement_that_comes_before_the_one_that_makes_it_ours_is_taken_after_it() {
    // 2 joins 1, which was linked to 0 before: 1 may send link(0, 1)
    // before link(1, 2).
    let mut e = engine(2);
    connect(&mut e, 1, &[]);
    let early = link_item(0, 1, T0);
    let out = items_from(&mut e, T0, 1, DEVICES_MAX_HOPS, &early);
    assert!(rejected(
        &out,
        &RejectReason::BadDeviceLink(DeviceError::NotOurs)
    ));
    assert_eq!(e.parked_statements(), 1);
    let ours = link_item(1, 2, T0 + 1);
    let out = items_from(&mut e, T0 + 1, 1, DEVICES_MAX_HOPS, &ours);
    assert_eq!(stored(&out), vec![ours.id(), early.id()]);
    assert_eq!(e.parked_statements(), 0);
    let devices: Vec<&str> = e.devices().devices().collect();
    let mut want = [peer(0), peer(1)];
    want.sort();
    assert_eq!(devices, want.iter().map(String::as_str).collect::<Vec<_>>());
}

#[test]
fn a_friend_cannot_make_us_keep_more_than_max_parked_statements() {
    let mut e = engine(0);
    connect(&mut e, 1, &[]);
    for i in 0..MAX_PARKED_STATEMENTS + 5 {
        // Links of 1 with made-up nodes: well signed, nothing of ours.
        let other = 100 + i;
        items_from(&mut e, T0, 1, 2, &link_item(1, other, T0 + i as u64));
    }
    assert_eq!(e.parked_statements(), MAX_PARKED_STATEMENTS);
    assert_eq!(e.item_count(), 0);
    assert_eq!(e.devices().device_count(), 0);
}

#[test]
fn the_driver_sets_the_book_and_a_connected_new_device_is_reconciled_at_once() {
    let mut e = engine(0);
    connect(&mut e, 1, &[]);
    let m = memory(0, T0, "diary");
    e.handle(T0, Input::Publish { item: m.clone() });
    let out = e.handle(T0 + 10_000, Input::Tick);
    assert!(items_sent_to(&out, &peer(1)).is_empty(), "not a device yet");
    assert_eq!(
        e.set_devices(T0, book(1, &[(0, 1)])).unwrap_err(),
        DeviceError::NotLocal(peer(1))
    );
    let out = e.set_devices(T0 + 10_000, book(0, &[(0, 1)])).unwrap();
    assert!(e.devices().is_device(&peer(1)));
    assert!(
        sent_to(&out, &peer(1))
            .iter()
            .any(|m| matches!(m, WireMessage::SyncQuery { .. })),
        "{out:?}"
    );
}

#[test]
fn a_new_device_catches_up_on_the_persons_memory_and_a_friend_gets_none_of_it() {
    // 0 (a server) and 1 (a phone) become devices of one person; 2 is a
    // friend of both.
    let mut net = Net::new(3, T0, |c| c);
    net.trace = Some(Vec::new());
    for (a, b) in [(0, 1), (0, 2), (1, 2)] {
        net.befriend(a, b, 20);
    }
    net.connect_all();
    let old: Vec<VerifiedItem> = (0..5)
        .map(|i| memory(0, T0 + i, &format!("written before the link {i}")))
        .collect();
    for m in &old {
        net.publish(0, m.clone());
    }
    let public = note(&key(0), T0, Audience::Public, 3, "hello, everyone");
    net.publish(0, public.clone());
    net.advance(10_000);
    for m in &old {
        assert_eq!(net.holders(&m.id()), BTreeSet::from([0]));
    }
    assert_eq!(net.holders(&public.id()), BTreeSet::from([0, 1, 2]));
    let l = link_item(0, 1, net.now);
    net.publish(0, l.clone());
    net.advance(10_000);
    assert_eq!(devices_of(&net, 0), BTreeSet::from([1]));
    assert_eq!(devices_of(&net, 1), BTreeSet::from([0]));
    assert_eq!(devices_of(&net, 2), BTreeSet::new());
    for m in &old {
        assert_eq!(net.holders(&m.id()), BTreeSet::from([0, 1]), "by catch-up");
    }
    // New memory on the phone reaches the server live.
    let new = memory(1, net.now, "written on the phone");
    net.publish(1, new.clone());
    net.advance(10_000);
    assert_eq!(net.holders(&new.id()), BTreeSet::from([0, 1]));
    let mut ids: Vec<ItemId> = old.iter().map(VerifiedItem::id).collect();
    ids.extend([l.id(), new.id()]);
    assert_eq!(
        leaks(&net, &BTreeSet::from([0, 1]), &ids),
        Vec::<String>::new()
    );
    assert_eq!(net.nodes[2].store.len(), 1, "the public note only");
}

#[test]
fn an_unlink_reaches_the_side_it_ends_and_stops_the_flow() {
    // Devices in a chain 0 - 1 - 2; 3 is everyone's friend.
    let mut net = Net::new(4, T0, |c| c);
    net.trace = Some(Vec::new());
    for (a, b) in [(0, 1), (1, 2), (0, 3), (1, 3), (2, 3)] {
        net.befriend(a, b, 15);
    }
    net.connect_all();
    let links = [link_item(0, 1, T0), link_item(1, 2, T0 + 1)];
    net.publish(0, links[0].clone());
    net.publish(1, links[1].clone());
    net.advance(10_000);
    assert_eq!(devices_of(&net, 0), BTreeSet::from([1, 2]));
    assert_eq!(devices_of(&net, 2), BTreeSet::from([0, 1]));
    let before = memory(0, net.now, "before");
    net.publish(0, before.clone());
    net.advance(10_000);
    assert_eq!(net.holders(&before.id()), BTreeSet::from([0, 1, 2]));
    let unlink = unlink_item(0, 1, net.now);
    net.publish(0, unlink.clone());
    net.advance(10_000);
    assert_eq!(net.holders(&unlink.id()), BTreeSet::from([0, 1, 2]));
    assert_eq!(devices_of(&net, 0), BTreeSet::new());
    assert_eq!(devices_of(&net, 1), BTreeSet::from([2]));
    assert_eq!(devices_of(&net, 2), BTreeSet::from([1]));
    let after = memory(0, net.now, "after, on 0");
    let theirs = memory(2, net.now, "after, on 2");
    net.publish(0, after.clone());
    net.publish(2, theirs.clone());
    net.advance(10_000);
    assert_eq!(net.holders(&after.id()), BTreeSet::from([0]));
    assert_eq!(net.holders(&theirs.id()), BTreeSet::from([1, 2]));
    // What the cut-off side had stays where it is.
    assert_eq!(net.holders(&before.id()), BTreeSet::from([0, 1, 2]));
    let ids = [
        links[0].id(),
        links[1].id(),
        before.id(),
        unlink.id(),
        after.id(),
        theirs.id(),
    ];
    assert_eq!(
        leaks(&net, &BTreeSet::from([0, 1, 2]), &ids),
        Vec::<String>::new()
    );
    assert_eq!(
        leaks(&net, &BTreeSet::from([0]), &[after.id()]),
        Vec::<String>::new()
    );
    assert_eq!(
        leaks(&net, &BTreeSet::from([1, 2]), &[theirs.id()]),
        Vec::<String>::new()
    );
}

/// A random world: persons with their devices, the links that make them
/// one person (a random tree per person), random friendships, an unlink.
#[derive(Debug, Clone)]
struct Plan {
    /// Devices of each person, in node order.
    persons: Vec<Vec<usize>>,
    /// Device links (earlier device, later device), per person as a tree.
    links: Vec<(usize, usize)>,
    /// Friendships beyond the links (any two nodes, across persons too).
    friends: Vec<(usize, usize)>,
    /// The link to end, and whether its later device signs the unlink.
    unlink: Option<(usize, bool)>,
    /// Per person, which device writes (an index taken modulo its size).
    authors: Vec<usize>,
}

fn plan() -> impl Strategy<Value = Plan> {
    proptest::collection::vec(1usize..=3, 2..=4)
        .prop_flat_map(|sizes| {
            let n: usize = sizes.iter().sum();
            let pairs = n * (n - 1) / 2;
            (
                Just(sizes),
                proptest::collection::vec(any::<usize>(), n),
                proptest::collection::vec(proptest::bool::weighted(0.3), pairs),
                proptest::option::weighted(0.6, (any::<usize>(), any::<bool>())),
                proptest::collection::vec(any::<usize>(), 4),
            )
        })
        .prop_map(|(sizes, parents, bits, unlink, authors)| {
            let mut persons = Vec::new();
            let mut links = Vec::new();
            let mut next = 0;
            for size in sizes {
                let devices: Vec<usize> = (next..next + size).collect();
                for k in 1..size {
                    links.push((devices[parents[next + k] % k], devices[k]));
                }
                next += size;
                persons.push(devices);
            }
            let friends = (0..next)
                .flat_map(|a| (a + 1..next).map(move |b| (a, b)))
                .zip(bits)
                .filter(|(_, b)| *b)
                .map(|(p, _)| p)
                .collect();
            let unlink = unlink
                .filter(|_| !links.is_empty())
                .map(|(i, later)| (i % links.len(), later));
            Plan {
                persons,
                links,
                friends,
                unlink,
                authors,
            }
        })
}

/// The devices `links` connect to `from` (`from` included).
fn component(from: usize, links: &[(usize, usize)]) -> BTreeSet<usize> {
    let mut seen = BTreeSet::from([from]);
    let mut frontier = vec![from];
    while let Some(x) = frontier.pop() {
        for &(a, b) in links {
            let y = if a == x {
                b
            } else if b == x {
                a
            } else {
                continue;
            };
            if seen.insert(y) {
                frontier.push(y);
            }
        }
    }
    seen
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Every `devices` item reaches exactly the devices of its author's
    /// person that live links connect to the author; nobody else gets a
    /// copy or hears its id, and every node's book names exactly those.
    #[test]
    fn devices_items_reach_exactly_the_persons_connected_devices(p in plan()) {
        let n: usize = p.persons.iter().map(Vec::len).sum();
        let mut net = Net::new(n, T0, |c| c);
        net.trace = Some(Vec::new());
        // Linked devices are friends of each other; other friendships are
        // random, across persons too.
        for &(a, b) in p.links.iter().chain(&p.friends) {
            net.befriend(a, b, 10 + ((a * 7 + b * 3) % 40) as u64);
        }
        net.connect_all();
        net.advance(5_000);
        let mut statements = Vec::new();
        for &(a, b) in &p.links {
            let item = link_item(a, b, net.now);
            statements.push((a, item.id()));
            net.publish(a, item);
            net.advance(100);
        }
        net.advance(30_000);
        let person_of = |x: usize| p.persons.iter().position(|d| d.contains(&x)).unwrap();
        let run = |net: &mut Net, live: &[(usize, usize)], tag: &str| -> Vec<(usize, BTreeSet<usize>, ItemId)> {
            let mut written = Vec::new();
            for (i, devices) in p.persons.iter().enumerate() {
                let author = devices[p.authors[i] % devices.len()];
                let item = memory(author, net.now, &format!("{tag} by {author}"));
                written.push((author, component(author, live), item.id()));
                net.publish(author, item);
            }
            net.advance(30_000);
            written
        };
        let first = run(&mut net, &p.links, "first");
        for (x, devices) in p.persons.iter().flat_map(|d| d.iter().map(move |x| (*x, d))) {
            let want: BTreeSet<usize> = devices.iter().copied().filter(|d| *d != x).collect();
            prop_assert_eq!(devices_of(&net, x), want, "the book of {}", x);
        }
        for (author, want, id) in &first {
            prop_assert_eq!(net.holders(id), want.clone(), "first item of {}", author);
        }
        let mut live = p.links.clone();
        if let Some((i, later)) = p.unlink {
            let (a, b) = live.remove(i);
            let (by, other) = if later { (b, a) } else { (a, b) };
            let item = unlink_item(by, other, net.now);
            statements.push((by, item.id()));
            net.publish(by, item);
            net.advance(30_000);
        }
        let second = run(&mut net, &live, "second");
        for x in 0..n {
            let mut want = component(x, &live);
            want.remove(&x);
            prop_assert_eq!(devices_of(&net, x), want, "the book of {} after the unlink", x);
        }
        for (author, want, id) in &second {
            prop_assert_eq!(net.holders(id), want.clone(), "second item of {}", author);
            prop_assert_eq!(leaks(&net, want, &[*id]), Vec::<String>::new());
        }
        // Nothing of a person (memory or statements) ever left it.
        for (i, devices) in p.persons.iter().enumerate() {
            let insiders: BTreeSet<usize> = devices.iter().copied().collect();
            let ids: Vec<ItemId> = statements
                .iter()
                .filter(|(by, _)| person_of(*by) == i)
                .map(|(_, id)| *id)
                .chain(first.iter().chain(&second).filter(|(a, _, _)| person_of(*a) == i).map(|(_, _, id)| *id))
                .collect();
            prop_assert_eq!(leaks(&net, &insiders, &ids), Vec::<String>::new(), "person {}", i);
        }
    }
}
