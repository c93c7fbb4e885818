//! When catch-up sessions start: at most `MAX_OUTBOUND_SESSIONS` run at
//! once as initiator and the other friends wait in line, first come first
//! served; each friend's resync comes within the interval, early by an
//! offset fixed per friend, so friends that connected together do not
//! resync together.

mod engine_support;

use engine_support::*;
use porfiry_protocol::engine::{
    Engine, Input, MAX_OUTBOUND_SESSIONS, MAX_RESYNC_INTERVAL_MS, Output, RESYNC_INTERVAL_MS,
    RESYNC_JITTER_MS,
};
use porfiry_protocol::wire::WireMessage;
use porfiry_protocol::{Audience, ItemRecord};

const T0: u64 = 1_700_000_000_000;

fn queries(out: &[Output]) -> Vec<String> {
    out.iter()
        .filter_map(|o| match o {
            Output::Send {
                peer,
                message: WireMessage::SyncQuery { .. },
            } => Some(peer.clone()),
            _ => None,
        })
        .collect()
}

fn with_one_item() -> Engine {
    let x = note(&key(0), T0 - 1_000, Audience::Friends, 3, "shared");
    Engine::new(config(&peer(0)), vec![ItemRecord::of(&x, 3, None)])
}

fn connect(e: &mut Engine, at: u64, n: usize) -> Vec<Output> {
    e.handle(
        at,
        Input::PeerConnected {
            peer: peer(n),
            groups: vec![],
        },
    )
}

#[test]
fn at_most_four_sessions_run_at_once_and_the_rest_wait_in_line() {
    let mut a = with_one_item();
    let mut started = Vec::new();
    for n in 1..=10 {
        started.extend(queries(&connect(&mut a, T0, n)));
    }
    assert_eq!(
        started,
        (1..=MAX_OUTBOUND_SESSIONS).map(peer).collect::<Vec<_>>()
    );
    assert_eq!(a.sessions_waiting(), 10 - MAX_OUTBOUND_SESSIONS);
    // A slot frees (friend 2 leaves): the first in line starts.
    let out = a.handle(T0 + 1, Input::PeerDisconnected { peer: peer(2) });
    assert_eq!(queries(&out), [peer(MAX_OUTBOUND_SESSIONS + 1)]);
    // A friend in line that leaves loses its place.
    a.handle(
        T0 + 2,
        Input::PeerDisconnected {
            peer: peer(MAX_OUTBOUND_SESSIONS + 2),
        },
    );
    let out = a.handle(T0 + 3, Input::PeerDisconnected { peer: peer(1) });
    assert_eq!(queries(&out), [peer(MAX_OUTBOUND_SESSIONS + 3)]);
    assert_eq!(a.sessions_waiting(), 10 - MAX_OUTBOUND_SESSIONS - 3);
}

#[test]
fn resync_comes_within_the_interval_early_by_a_fixed_offset_per_friend() {
    // An engine with nothing to share starts no session, so its next wake
    // is the earliest resync.
    let wake_for = |n: usize| {
        let mut e = Engine::new(config(&peer(0)), Vec::<ItemRecord>::new());
        connect(&mut e, T0, n);
        e.next_wake().expect("a resync is due")
    };
    let mut offsets = std::collections::BTreeSet::new();
    for n in 1..=20 {
        let at = wake_for(n);
        assert_eq!(at, wake_for(n), "the same friend, the same deadline");
        assert!(at <= T0 + RESYNC_INTERVAL_MS);
        assert!(at > T0 + RESYNC_INTERVAL_MS - RESYNC_JITTER_MS);
        offsets.insert(at);
    }
    assert!(offsets.len() >= 15, "friends are spread: {offsets:?}");
}

#[test]
fn a_due_resync_starts_a_session_and_re_arms_the_deadline() {
    let mut a = with_one_item();
    connect(&mut a, T0, 1);
    // The first session goes nowhere; the friend aborts it.
    a.handle(
        T0 + 1,
        Input::Received {
            peer: peer(1),
            message: porfiry_protocol::engine::Inbound::SyncAbort {
                session: 1,
                reason: "test".into(),
            },
        },
    );
    let due = a.next_wake().expect("resync pending");
    assert!(due <= T0 + RESYNC_INTERVAL_MS);
    assert!(queries(&a.handle(due - 1, Input::Tick)).is_empty());
    assert_eq!(queries(&a.handle(due, Input::Tick)), [peer(1)]);
    // Deadlines are an ordered set: the next one is one interval on, less
    // the same offset.
    let gap = T0 + RESYNC_INTERVAL_MS - due;
    let next = a.next_wake().expect("next resync or session timeout");
    assert!(next <= due + RESYNC_INTERVAL_MS - gap);
}

/// Times (ms after `T0`) of the sessions node `from` started toward `to`.
fn session_starts(net: &Net, from: usize, to: usize) -> Vec<u64> {
    let tag = format!(" {from}->{to} SyncQuery");
    let mut starts: Vec<u64> = net
        .trace
        .iter()
        .flatten()
        .filter(|l| l.contains(&tag))
        .filter_map(|l| l.split(' ').next()?.parse::<u64>().ok())
        .map(|t| t - T0)
        .collect();
    // A session's later query frames come within a second of its first.
    starts.dedup_by(|later, first| *later - *first < 1_000);
    starts
}

#[test]
fn quiet_resyncs_back_off_and_one_that_finds_a_loss_brings_them_back() {
    let mut net = Net::new(2, T0, |c| c);
    net.trace = Some(Vec::new());
    net.befriend(0, 1, 20);
    net.connect_all();
    let x = note(&net.nodes[0].key.clone(), T0, Audience::Public, 3, "one");
    net.publish(0, x);
    net.advance(2 * 60 * 60_000);
    let quiet = session_starts(&net, 0, 1);
    let gaps: Vec<u64> = quiet.windows(2).map(|w| w[1] - w[0]).collect();
    // 5, 10, 20, then 30 minutes (each less the friend's fixed jitter).
    assert!(gaps.len() >= 4, "{quiet:?}");
    assert!(gaps[0] <= RESYNC_INTERVAL_MS && gaps[0] > RESYNC_INTERVAL_MS / 2);
    assert!(gaps[1] > RESYNC_INTERVAL_MS && gaps[2] > 2 * RESYNC_INTERVAL_MS);
    assert!(
        gaps.iter().all(|g| *g <= MAX_RESYNC_INTERVAL_MS),
        "{gaps:?}"
    );
    assert!(
        quiet.len() <= 7,
        "two quiet hours took {} sessions",
        quiet.len()
    );

    // A live push is lost: the next session sends it, and the one after
    // comes within the base interval again.
    net.lose_items_until = net.now + 1_000;
    let lost_at = net.now - T0;
    let lost = note(
        &net.nodes[0].key.clone(),
        net.now,
        Audience::Public,
        3,
        "lost",
    );
    let id = lost.id();
    net.publish(0, lost);
    net.advance(MAX_RESYNC_INTERVAL_MS + RESYNC_INTERVAL_MS + 60_000);
    assert!(net.nodes[1].store.contains_key(&id), "a session sent it");
    let after: Vec<u64> = session_starts(&net, 0, 1)
        .into_iter()
        .filter(|t| *t > lost_at)
        .collect();
    assert!(after.len() >= 2, "{after:?}");
    assert!(
        after[1] - after[0] <= RESYNC_INTERVAL_MS,
        "the session after the one that found the loss came {} ms later",
        after[1] - after[0]
    );
}
