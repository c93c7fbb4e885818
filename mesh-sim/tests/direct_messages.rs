//! Direct messages (`peer:ID`) in the simulator: each reaches its one
//! addressee — live, and by catch-up after a partition heals — and no other
//! node ever stores one, though every node here has friends in common with
//! both ends.

mod common;

use common::{assert_healed_and_exact, run_toml};

const SCENARIO: &str = r#"
name = "direct"
seed = 11
duration_ms = 900_000
heal_ms = 300_000

[nodes]
count = 6

[graph]
kind = "explicit"
edges = [[0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [5, 0], [0, 2], [0, 3], [1, 4]]

[items]
count = 80
start_ms = 0
end_ms = 200_000
text_bytes = 200
max_hops = 3

[items.audience]
public = 0.2
peer = 0.8

[links.server]
latency = { dist = "fixed", ms = 10 }

[[faults.partitions]]
start_ms = 50_000
end_ms = 150_000
nodes = [3]
"#;

#[test]
fn direct_messages_reach_their_addressee_only_also_after_a_partition() {
    let out = run_toml(SCENARIO);
    assert_healed_and_exact(&out);
    let r = &out.report;
    let peer = r
        .delivery
        .by_audience
        .get("peer")
        .expect("the scenario wrote direct messages");
    assert!(peer.items > 40, "{} direct messages", peer.items);
    // One entitled node per message: its addressee, always a friend here.
    assert_eq!(peer.entitled_pairs, peer.items);
    assert_eq!(peer.held_at_end, peer.entitled_pairs);
    assert!(r.delivery.by_audience.contains_key("public"));
}
