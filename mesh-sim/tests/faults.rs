//! Each fault and link property does what the scenario says: partitions
//! hold items back until they heal, churn takes phones off, a crash keeps
//! storage, a crashed author publishes on restart, loss drops messages,
//! bandwidth delays them, and two phones never connect.

mod common;

use common::run_toml;

/// A small explicit graph on fixed 10 ms links. `nodes` is the body of the
/// `[nodes]` table (a bare count is fine), `items` of `[items]`; `extra`
/// continues the `[links.server]` table and may add tables after it.
fn toml(nodes: &str, edges: &str, items: &str, extra: &str) -> String {
    format!(
        r#"
name = "t"
seed = 3
duration_ms = 900_000
heal_ms = 300_000

[nodes]
{nodes}

[graph]
kind = "explicit"
edges = {edges}

[items]
{items}

[links.server]
latency = {{ dist = "fixed", ms = 10 }}
{extra}
"#
    )
}

#[test]
fn a_partition_holds_items_back_until_it_heals() {
    let out = run_toml(&toml(
        "count = 2",
        "[[0, 1]]",
        "count = 1\nstart_ms = 20_000\nend_ms = 20_000\nauthors = [0]",
        "[[faults.partitions]]\nstart_ms = 10_000\nend_ms = 120_000\nnodes = [1]",
    ));
    let r = &out.report;
    assert_eq!(r.faults.planned.partitions, 1);
    assert_eq!(r.delivery.held_at_end, 1);
    assert!(
        r.delivery.delay_ms.max >= 100_000,
        "delivered {} ms after publishing, inside the partition",
        r.delivery.delay_ms.max
    );
    let during: Vec<_> = out
        .series
        .iter()
        .filter(|s| (10_000..120_000).contains(&s.time_ms))
        .collect();
    assert!(!during.is_empty() && during.iter().all(|s| s.links_up == 0));
    assert!(out.series.last().is_some_and(|s| s.links_up == 1));
}

#[test]
fn churn_takes_phones_offline_and_back() {
    let out = run_toml(&toml(
        "count = 3\nphones = [1, 2]",
        "[[0, 1], [0, 2]]",
        "count = 20\nstart_ms = 0\nend_ms = 250_000",
        "[faults.churn]\nmean_online_ms = 20_000\nmean_offline_ms = 20_000",
    ));
    let r = &out.report;
    assert!(r.faults.planned.churn_offline > 2);
    assert!(
        out.series.iter().any(|s| s.nodes_up < 3),
        "no phone ever went offline"
    );
    assert_eq!(
        out.series.last().map(|s| s.nodes_up),
        Some(3),
        "all back after heal"
    );
    assert_eq!(r.delivery.held_at_end, r.delivery.entitled_pairs);
}

#[test]
fn a_crash_keeps_storage_so_nothing_is_fetched_twice() {
    let out = run_toml(&toml(
        "count = 2",
        "[[0, 1]]",
        "count = 1\nstart_ms = 1_000\nend_ms = 1_000\nauthors = [0]",
        "[[faults.crash_at]]\nnode = 1\nat_ms = 10_000\ndowntime_ms = 60_000",
    ));
    let r = &out.report;
    assert_eq!(r.faults.planned.crashes, 1);
    assert_eq!(r.delivery.held_at_end, 1);
    assert_eq!(
        r.copies.total, 1,
        "the restarted node fetched its item again"
    );
    assert!(
        r.engine.syncs_finished > 0,
        "the restart reconnected and reconciled"
    );
}

#[test]
fn a_crashed_author_publishes_when_it_restarts() {
    let out = run_toml(&toml(
        "count = 2",
        "[[0, 1]]",
        "count = 1\nstart_ms = 5_000\nend_ms = 5_000\nauthors = [0]",
        "[[faults.crash_at]]\nnode = 0\nat_ms = 1_000\ndowntime_ms = 60_000",
    ));
    let r = &out.report;
    assert_eq!(r.delivery.published, 1);
    assert_eq!(r.delivery.held_at_end, 1);
    assert!(
        r.delivery.delay_ms.max < 5_000,
        "delay counts from the real publish at restart, got {}",
        r.delivery.delay_ms.max
    );
    let at_30s = out
        .series
        .iter()
        .find(|s| s.time_ms >= 30_000)
        .expect("sample");
    assert_eq!(
        at_30s.published, 0,
        "nothing is published while the author is down"
    );
}

#[test]
fn loss_drops_messages_and_catch_up_recovers() {
    let lossy = run_toml(
        &toml(
            "count = 2",
            "[[0, 1]]",
            "count = 30\nstart_ms = 0\nend_ms = 200_000",
            "loss = 0.3",
        )
        .replace("duration_ms = 900_000", "duration_ms = 3_600_000"),
    );
    assert!(lossy.report.faults.messages_lost > 0);
    assert_eq!(
        lossy.report.faults.messages_lost,
        lossy.report.messages.lost
    );
    assert_eq!(
        lossy.report.delivery.held_at_end,
        lossy.report.delivery.entitled_pairs
    );
    let clean = run_toml(&toml(
        "count = 2",
        "[[0, 1]]",
        "count = 30\nstart_ms = 0\nend_ms = 200_000",
        "",
    ));
    assert_eq!(clean.report.faults.messages_lost, 0);
}

#[test]
fn bandwidth_delays_large_items() {
    let items = "count = 1\nstart_ms = 1_000\nend_ms = 1_000\ntext_bytes = 4_000\nauthors = [0]";
    let fast = run_toml(&toml("count = 2", "[[0, 1]]", items, ""));
    let slow = run_toml(&toml("count = 2", "[[0, 1]]", items, "bandwidth_kbps = 8"));
    // About 4.2 kB at 8 kbit/s is over 4 s on the wire.
    let (f, s) = (
        fast.report.delivery.delay_ms.max,
        slow.report.delivery.delay_ms.max,
    );
    assert!(s >= f + 4_000, "fast {f} ms, slow {s} ms");
}

#[test]
fn two_phones_never_connect_and_are_not_entitled_to_each_other() {
    // Phones 1 and 2 are friends of each other and of server 0.
    let out = run_toml(&toml(
        "count = 3\nphones = [1, 2]",
        "[[0, 1], [0, 2], [1, 2]]",
        "count = 12\nstart_ms = 0\nend_ms = 100_000\nmax_hops = 2\nauthors = [1]\n\
         [items.audience]\npublic = 1.0\nfriends = 1.0",
        "",
    ));
    let r = &out.report;
    assert_eq!((r.setup.friendships, r.setup.links), (3, 2));
    assert!(out.series.iter().all(|s| s.links_up <= 2));
    let public = &r.delivery.by_audience["public"];
    let friends = &r.delivery.by_audience["friends"];
    assert_eq!(
        public.entitled_pairs,
        2 * public.items,
        "public reaches 0 and, via 0, 2"
    );
    assert_eq!(
        friends.entitled_pairs, friends.items,
        "friends items reach only 0"
    );
    assert_eq!(r.delivery.held_at_end, r.delivery.entitled_pairs);
    assert_eq!(r.delivery.non_entitled_deliveries, 0);
}

#[test]
fn group_items_reach_exactly_the_tagged_friends() {
    let out = run_toml(&toml(
        "count = 4",
        "[[0, 1], [0, 2], [0, 3], [1, 2]]",
        "count = 10\nstart_ms = 0\nend_ms = 100_000\nauthors = [0]\n[items.audience]\ngroup = 1.0",
        "[[groups]]\nname = \"family\"\nmembers = [0, 1, 2]",
    ));
    let r = &out.report;
    assert_eq!(r.delivery.entitled_pairs, 20, "nodes 1 and 2, not 3");
    assert_eq!(r.delivery.held_at_end, 20);
    assert_eq!(r.delivery.non_entitled_deliveries, 0);
}

#[test]
fn a_blackhole_loses_messages_on_its_links_only_while_it_lasts() {
    let out = run_toml(&toml(
        "count = 3",
        "[[0, 1], [0, 2]]",
        "count = 1\nstart_ms = 5_000\nend_ms = 5_000\nauthors = [0]",
        "[[faults.blackholes]]\nstart_ms = 1_000\nend_ms = 60_000\nlinks = [[1, 0]]",
    ));
    let r = &out.report;
    assert_eq!(r.faults.planned.blackholes, 1);
    assert!(r.faults.messages_lost > 0);
    assert_eq!(
        r.delivery.held_at_end, 2,
        "catch-up after the window delivers to 1"
    );
    assert!(
        r.delivery.delay_ms.max >= 55_000,
        "node 1 waited for the window to end"
    );
    assert!(r.delivery.delay_ms.p50 < 1_000, "node 2 got it at once");
}

#[test]
fn a_trace_follows_one_item() {
    let s = mesh_sim::Scenario::from_toml(&toml(
        "count = 2",
        "[[0, 1]]",
        "count = 2\nstart_ms = 5_000\nend_ms = 6_000\nauthors = [0]",
        "[[faults.partitions]]\nstart_ms = 1_000\nend_ms = 60_000\nnodes = [1]",
    ))
    .expect("parses");
    let world = mesh_sim::World::build(&s, s.seed).expect("world");
    let out = mesh_sim::run_traced(&s, s.seed, &world, Some(1)).expect("runs");
    let t = out.trace.join("\n");
    assert!(
        t.contains("PartitionStart(0)") && t.contains("PartitionEnd(0)"),
        "{t}"
    );
    assert!(t.contains("node 0 publishes it"), "{t}");
    assert!(t.contains("node 1 stores it from node 0"), "{t}");
    assert!(t.contains("catch-up session"), "delivered by catch-up: {t}");
    let untraced = mesh_sim::run(&s, s.seed).expect("runs");
    assert!(untraced.trace.is_empty());
    assert_eq!(untraced.report, out.report, "tracing changes nothing");
}
