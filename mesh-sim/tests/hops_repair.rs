//! A public item that first reaches a node over a longer path (its direct
//! link to the author was down or lost the push) must still travel its full
//! hop budget once the short path works again: catch-up has to repair hop
//! counts, not only the set of items.
//!
//! The first two tests use the same five nodes. Author A=2 (or 0) has friends B and
//! X; X–Y, Y–B; C's only friend is B. C is 2 links from A, so it is
//! entitled to a public item with max_hops 3. The item first reaches B over
//! A→X→Y→B with 0 hops left, so B may pass it on only once its hop count is
//! repaired from A's copy.

use mesh_sim::{Scenario, run};

fn assert_all_delivered(toml: &str, entitled: u64) {
    let s = Scenario::from_toml(toml).expect("scenario parses");
    let out = run(&s, s.seed).expect("runs");
    let d = &out.report.delivery;
    assert_eq!(d.entitled_pairs, entitled, "every node but the author");
    assert_eq!(d.non_entitled_deliveries, 0);
    assert!(out.report.faults.total > 0);
    assert_eq!(
        d.held_at_end, d.entitled_pairs,
        "missing after healing: {:?}",
        d.missing
    );
}

/// B (node 0) is down while A (node 2) publishes. Node numbers make B's
/// restart hear Y's catch-up session first, so B keeps 0 hops; A's session
/// then finds nothing missing.
#[test]
fn hops_repaired_after_a_crash_restart() {
    assert_all_delivered(
        r#"
name = "hops-after-crash"
seed = 1
duration_ms = 1_800_000
heal_ms = 120_000

[nodes]
count = 5

[graph]
kind = "explicit"
edges = [[2, 0], [2, 3], [3, 1], [1, 0], [0, 4]]

[items]
count = 1
start_ms = 5_000
end_ms = 5_000
max_hops = 3
authors = [2]

[links.server]
latency = { dist = "fixed", ms = 20 }

[[faults.crash_at]]
node = 0
at_ms = 1_000
downtime_ms = 60_000
"#,
        4,
    );
}

/// The connection A(0)–B(1) stays up but loses A's eager push (a request
/// that timed out). B gets the item from Y with 0 hops; every later
/// periodic catch-up between A and B finds the sets equal.
#[test]
fn hops_repaired_after_a_lost_push() {
    assert_all_delivered(
        r#"
name = "hops-after-loss"
seed = 1
duration_ms = 1_800_000
heal_ms = 30_000

[nodes]
count = 5

[graph]
kind = "explicit"
edges = [[0, 1], [0, 2], [2, 3], [3, 1], [1, 4]]

[items]
count = 1
start_ms = 5_000
end_ms = 5_000
max_hops = 3
authors = [0]

[links.server]
latency = { dist = "fixed", ms = 20 }

[[faults.blackholes]]
start_ms = 1_000
end_ms = 30_000
links = [[0, 1]]
"#,
        4,
    );
}

/// A relay's announcement is lost instead: author A=0 has friends P=1 and
/// R=2; R–S=3, and Q=4 is a friend of P (2 links from A) and of S; T=5's
/// only friend is Q. P's `Have` to Q is lost, so Q pulls the item from S
/// with 0 hops left and T, 3 links from A, depends on Q's hops being
/// repaired from P's copy.
#[test]
fn hops_repaired_after_a_lost_announcement() {
    assert_all_delivered(
        r#"
name = "hops-after-lost-have"
seed = 1
duration_ms = 1_800_000
heal_ms = 30_000

[nodes]
count = 6

[graph]
kind = "explicit"
edges = [[0, 1], [0, 2], [2, 3], [1, 4], [3, 4], [4, 5]]

[items]
count = 1
start_ms = 5_000
end_ms = 5_000
max_hops = 3
authors = [0]

[links.server]
latency = { dist = "fixed", ms = 20 }

[[faults.blackholes]]
start_ms = 1_000
end_ms = 30_000
links = [[1, 4]]
"#,
        5,
    );
}
