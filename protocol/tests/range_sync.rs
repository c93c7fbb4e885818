//! Range-sync reconciliation (`porfiry_protocol::range_sync`) on its own:
//! every difference found whatever the sets, the frame limit held, the
//! bytes it costs, and every malformed frame refused with what was wrong.

use std::collections::BTreeSet;

use porfiry_protocol::ItemId;
use porfiry_protocol::range_sync::{MIN_FRAME_BYTES, RangeSyncError, Reconciler, ShortId, SyncSet};
use proptest::prelude::*;

const KEY: [u8; 16] = *b"range-sync-tests";

fn id(n: u32) -> ItemId {
    let mut b = [0u8; 32];
    // Spread over the whole id so bounds need prefixes of varied length.
    b[..4].copy_from_slice(&n.wrapping_mul(2_654_435_761).to_be_bytes());
    b[28..].copy_from_slice(&n.to_be_bytes());
    ItemId(b)
}

fn set(items: &[(u64, ItemId)]) -> SyncSet {
    let mut s = SyncSet::with_capacity(items.len());
    for (ts, id) in items {
        s.insert(*ts, *id);
    }
    s
}

/// What a whole session found and cost.
struct Outcome {
    have: BTreeSet<ItemId>,
    need: BTreeSet<ShortId>,
    rounds: usize,
    bytes: usize,
    largest_frame: usize,
}

fn run(ours: &[(u64, ItemId)], theirs: &[(u64, ItemId)], limit: usize) -> Outcome {
    let (mut a, mut query) = Reconciler::initiator(set(ours), KEY, limit);
    let mut b = Reconciler::responder(set(theirs), limit);
    let (mut have, mut need) = (Vec::new(), Vec::new());
    let (mut rounds, mut bytes, mut largest) = (0, 0, 0);
    loop {
        rounds += 1;
        assert!(rounds < 10_000, "reconciliation does not end");
        bytes += query.len();
        largest = largest.max(query.len());
        let reply = b.reconcile(&query).expect("responder accepts");
        bytes += reply.len();
        largest = largest.max(reply.len());
        match a
            .reconcile_with_ids(&reply, &mut have, &mut need)
            .expect("initiator accepts")
        {
            Some(next) => query = next,
            None => break,
        }
    }
    assert_eq!(
        have.len(),
        have.iter().collect::<BTreeSet<_>>().len(),
        "an id reported twice"
    );
    Outcome {
        have: have.into_iter().collect(),
        need: need.into_iter().collect(),
        rounds,
        bytes,
        largest_frame: largest,
    }
}

fn expect_difference(ours: &[(u64, ItemId)], theirs: &[(u64, ItemId)], o: &Outcome) {
    let a: BTreeSet<ItemId> = ours.iter().map(|x| x.1).collect();
    let b: BTreeSet<ItemId> = theirs.iter().map(|x| x.1).collect();
    let want_have: BTreeSet<ItemId> = a.difference(&b).copied().collect();
    assert_eq!(o.have, want_have, "have");
    let (short, _) = Reconciler::initiator(SyncSet::new(), KEY, MIN_FRAME_BYTES);
    let want_need: BTreeSet<ShortId> = b.difference(&a).map(|i| short.short_id(i)).collect();
    assert_eq!(o.need, want_need, "need");
}

fn items(range: std::ops::Range<u32>, ts: impl Fn(u32) -> u64) -> Vec<(u64, ItemId)> {
    range.map(|n| (ts(n), id(n))).collect()
}

#[test]
fn equal_sets_settle_in_one_round_for_the_opening_fingerprints() {
    let all = items(0..10_000, |n| 1_000 + u64::from(n));
    let o = run(&all, &all, 256 * 1024);
    assert_eq!(o.rounds, 1);
    assert!(o.have.is_empty() && o.need.is_empty());
    // Sixteen fingerprints (8 bytes, a bound of a few) and the key; the
    // answer is one header byte.
    assert!(o.bytes < 16 * 14 + 20, "{} bytes", o.bytes);
}

#[test]
fn a_few_differences_in_a_big_set_cost_short_ids() {
    let base = items(0..100_000, |n| 1_000 + u64::from(n) / 3);
    let mut ours = base.clone();
    let mut theirs = base;
    ours.extend(items(200_000..200_005, |n| 50_000 + u64::from(n)));
    theirs.extend(items(300_000..300_005, |n| 9_000 + u64::from(n)));
    let o = run(&ours, &theirs, 256 * 1024);
    expect_difference(&ours, &theirs, &o);
    // Ten differences among 100,000 items: a few rounds of fingerprints
    // down to ranges of under 32 listed as 8-byte ids.
    assert!(o.bytes < 12_000, "{} bytes in {} rounds", o.bytes, o.rounds);
}

#[test]
fn an_empty_responder_gets_everything_in_one_round() {
    let ours = items(0..50_000, u64::from);
    let o = run(&ours, &[], 256 * 1024);
    expect_difference(&ours, &[], &o);
    assert_eq!(o.rounds, 1);
}

#[test]
fn a_long_id_list_is_cut_at_the_frame_limit_and_finished_in_later_rounds() {
    // The initiator's set is small (listed whole); the responder's answer,
    // its list of 20,000, cannot fit one frame.
    let ours = items(0..10, u64::from);
    let theirs = items(5..20_005, u64::from);
    for limit in [MIN_FRAME_BYTES, 4_096, 64 * 1024] {
        let o = run(&ours, &theirs, limit);
        expect_difference(&ours, &theirs, &o);
        assert!(o.largest_frame <= limit, "{} > {limit}", o.largest_frame);
        assert!(o.rounds > 1);
    }
}

#[test]
fn the_frame_limit_is_never_passed_below_the_minimum() {
    let ours = items(0..3_000, |n| u64::from(n % 7));
    let theirs = items(1_500..4_500, |n| u64::from(n % 7));
    let o = run(&ours, &theirs, 10);
    expect_difference(&ours, &theirs, &o);
    assert!(o.largest_frame <= MIN_FRAME_BYTES);
}

#[test]
fn a_round_cut_short_reports_no_id_twice() {
    // Found by `finds_exactly_the_difference`: the responder's answer is cut
    // at the frame limit and its closing fingerprint covers ranges the
    // initiator had already settled; cut again, they are listed again.
    let times = 32;
    let ts = |n: u32| u64::from(n.wrapping_mul(7919)) % times;
    let mut ours = items(0..227, ts);
    let mut theirs = ours.clone();
    ours.extend(items(10_000..10_064, ts));
    theirs.extend(items(20_000..20_258, ts));
    let o = run(&ours, &theirs, MIN_FRAME_BYTES);
    expect_difference(&ours, &theirs, &o);
    assert!(o.rounds > 2, "the case cuts rounds short");
}

#[test]
fn short_ids_depend_on_the_session_key() {
    let (a, _) = Reconciler::initiator(SyncSet::new(), KEY, MIN_FRAME_BYTES);
    let (b, _) = Reconciler::initiator(SyncSet::new(), *b"another key 16 b", MIN_FRAME_BYTES);
    assert_ne!(a.short_id(&id(1)), b.short_id(&id(1)));
    assert_ne!(a.short_id(&id(1)), a.short_id(&id(2)));
}

fn varint(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    out
}

fn opening() -> Vec<u8> {
    Reconciler::initiator(set(&items(0..100, u64::from)), KEY, MIN_FRAME_BYTES).1
}

fn responder() -> Reconciler {
    Reconciler::responder(set(&items(0..100, u64::from)), MIN_FRAME_BYTES)
}

#[test]
fn malformed_frames_are_refused_with_what_was_wrong() {
    let mut r = responder();
    assert_eq!(r.reconcile(&[]), Err(RangeSyncError::Empty));
    // negentropy v1's header byte.
    let e = r.reconcile(&[0x61, 0]).unwrap_err();
    assert_eq!(e, RangeSyncError::Version(0x61));
    assert!(e.to_string().contains("0x61"), "{e}");
    assert_eq!(
        r.reconcile(&[0x71, 1, 2]),
        Err(RangeSyncError::Truncated("session key"))
    );
    assert_eq!(
        r.reconcile(&[0x70]),
        Err(RangeSyncError::Order("no opening frame first"))
    );
    let mut head = vec![0x71];
    head.extend_from_slice(&KEY);
    let with = |tail: &[u8]| {
        let mut f = head.clone();
        f.extend_from_slice(tail);
        responder().reconcile(&f)
    };
    assert_eq!(with(&[0, 0, 9]), Err(RangeSyncError::Mode(9)));
    assert_eq!(
        with(&[0, 33]),
        Err(RangeSyncError::Malformed("bound prefix longer than an id"))
    );
    assert_eq!(
        with(&[0, 4, 1]),
        Err(RangeSyncError::Truncated("bound prefix"))
    );
    assert_eq!(
        with(&[0, 0, 1, 1, 2]),
        Err(RangeSyncError::Truncated("fingerprint"))
    );
    // An id list claiming a million ids in a few bytes.
    assert_eq!(
        with(&[0, 0, 2, 0xc0, 0x84, 0x3d, 1, 2]),
        Err(RangeSyncError::Truncated("id list"))
    );
    assert_eq!(
        with(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]),
        Err(RangeSyncError::Malformed("varint longer than 64 bits"))
    );
    // Two bounds whose times add past the largest.
    let mut f = varint(1 << 63);
    f.extend_from_slice(&[0, 0]); // no prefix, Skip
    f.extend(varint((1 << 63) + 1));
    f.extend_from_slice(&[0, 0]);
    assert_eq!(
        with(&f),
        Err(RangeSyncError::Malformed("bound timestamp overflows"))
    );
    // A range after the infinite bound (which covers everything): found by
    // the `range_sync` fuzz target, it made the answer write a bound going
    // back in time (an overflow panic in debug builds, a garbage frame in
    // release ones), on both sides.
    let mut f = vec![0, 0, 1];
    f.extend_from_slice(&[0xab; 8]); // infinite bound, a fingerprint unlike ours
    f.extend_from_slice(&[6, 0, 1]);
    f.extend_from_slice(&[0xcd; 8]); // then a bound at time 5
    let refused = RangeSyncError::Malformed("a range after the infinite bound");
    assert_eq!(with(&f), Err(refused.clone()));
    let (mut a, _) = Reconciler::initiator(set(&items(0..100, u64::from)), KEY, MIN_FRAME_BYTES);
    let mut reply = vec![0x70];
    reply.extend_from_slice(&f);
    assert_eq!(
        a.reconcile_with_ids(&reply, &mut Vec::new(), &mut Vec::new()),
        Err(refused)
    );
    let mut r = responder();
    r.reconcile(&opening()).expect("opening accepted");
    assert_eq!(
        r.reconcile(&opening()),
        Err(RangeSyncError::Order("a second opening frame"))
    );
    let (mut a, _) = Reconciler::initiator(SyncSet::new(), KEY, MIN_FRAME_BYTES);
    assert_eq!(
        a.reconcile(&[0x70]),
        Err(RangeSyncError::Order("the initiator got a query"))
    );
    assert_eq!(
        responder().reconcile_with_ids(&[0x70], &mut Vec::new(), &mut Vec::new()),
        Err(RangeSyncError::Order("the responder got a reply"))
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// Whatever the two sets (few distinct times, so many bounds need id
    /// prefixes) and the frame limit, the initiator learns exactly the
    /// difference, and no frame passes the limit.
    #[test]
    fn finds_exactly_the_difference(
        common in 0u32..600,
        only_ours in 0u32..300,
        only_theirs in 0u32..300,
        times in 1u64..50,
        limit in prop_oneof![Just(MIN_FRAME_BYTES), Just(3_000usize), Just(256 * 1024)],
    ) {
        let ts = |n: u32| u64::from(n.wrapping_mul(7919)) % times;
        let mut ours = items(0..common, ts);
        let mut theirs = ours.clone();
        ours.extend(items(10_000..10_000 + only_ours, ts));
        theirs.extend(items(20_000..20_000 + only_theirs, ts));
        let o = run(&ours, &theirs, limit);
        expect_difference(&ours, &theirs, &o);
        prop_assert!(o.largest_frame <= limit.max(MIN_FRAME_BYTES));
    }

    /// A hostile friend's bytes never panic either side.
    #[test]
    fn garbage_never_panics(tail in proptest::collection::vec(any::<u8>(), 0..300), header in 0x6fu8..0x73) {
        let mut f = vec![header];
        if header == 0x71 {
            f.extend_from_slice(&KEY);
        }
        f.extend_from_slice(&tail);
        let _ = responder().reconcile(&f);
        let (mut a, _) = Reconciler::initiator(set(&items(0..100, u64::from)), KEY, MIN_FRAME_BYTES);
        let _ = a.reconcile_with_ids(&f, &mut Vec::new(), &mut Vec::new());
    }
}
