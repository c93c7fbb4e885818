//! One server with a thousand phone friends (a club's home server): every
//! phone churns, the server runs at most `MAX_OUTBOUND_SESSIONS` sessions
//! at once and serves `SERVER_SERVED_SESSIONS`, and still every item
//! reaches every phone entitled to it, once, and no other.

mod common;

use common::{assert_healed_and_exact, run_toml};

const PHONES: usize = 1_000;

fn hub_scenario() -> String {
    let edges: Vec<String> = (1..=PHONES).map(|p| format!("[0, {p}]")).collect();
    let phones: Vec<String> = (1..=PHONES).map(|p| p.to_string()).collect();
    // Every tenth phone writes, and the server: public notes that go phone
    // → server → every other phone (two hops).
    let authors: Vec<String> = std::iter::once(0)
        .chain((1..=PHONES).step_by(10))
        .map(|a| a.to_string())
        .collect();
    format!(
        r#"
name = "hub"
seed = 11
duration_ms = 3_600_000
heal_ms = 2_400_000

[nodes]
count = {count}
phones = [{phones}]

[graph]
kind = "explicit"
edges = [{edges}]

[items]
count = 200
start_ms = 0
end_ms = 1_800_000
text_bytes = 200
max_hops = 2
authors = [{authors}]

[items.audience]
public = 1.0

[links.server]
latency = {{ dist = "fixed", ms = 20 }}

[links.phone]
latency = {{ dist = "fixed", ms = 80 }}
loss = 0.001
bandwidth_kbps = 1_000

[faults.churn]
mean_online_ms = 600_000
mean_offline_ms = 200_000
"#,
        count = PHONES + 1,
        phones = phones.join(", "),
        edges = edges.join(", "),
        authors = authors.join(", "),
    )
}

#[test]
fn a_server_with_a_thousand_churning_phone_friends_delivers_everything_once() {
    let out = run_toml(&hub_scenario());
    assert_healed_and_exact(&out);
    let r = &out.report;
    assert_eq!(r.setup.nodes, PHONES + 1);
    // Every public item is due at every other node (two hops via the hub).
    assert_eq!(r.delivery.entitled_pairs, 200 * PHONES as u64);
    assert!(
        r.copies.per_delivery <= 1.01,
        "payload copies per delivery {}",
        r.copies.per_delivery
    );
}
