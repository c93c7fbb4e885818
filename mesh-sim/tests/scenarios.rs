//! Every shipped scenario, at reduced size where it is large: once faults
//! heal, every entitled node holds every item, no other node ever stored
//! one, and the scenario really injected faults.

mod common;

use common::{assert_healed_and_exact, scenarios_dir, shipped};
use mesh_sim::run;

#[test]
fn every_shipped_scenario_has_a_test_here() {
    let mut names: Vec<String> = std::fs::read_dir(scenarios_dir())
        .expect("scenarios folder")
        .filter_map(|e| {
            let p = e.expect("dir entry").path();
            if p.extension()? != "toml" {
                return None;
            }
            Some(p.file_stem()?.to_string_lossy().into_owned())
        })
        // `mesh-sim minds` scenarios have theirs in `minds.rs`.
        .filter(|name| !name.starts_with("minds-"))
        .collect();
    names.sort();
    assert_eq!(names, ["city", "club", "clubs", "family"]);
}

#[test]
fn family_with_a_churning_phone_gets_everything() {
    let s = shipped("family");
    let out = run(&s, s.seed).expect("runs");
    assert!(out.report.faults.planned.churn_offline > 0);
    assert_healed_and_exact(&out);
    for kind in ["public", "friends", "group"] {
        assert!(
            out.report.delivery.by_audience.contains_key(kind),
            "no {kind} items in the family scenario"
        );
    }
}

#[test]
fn club_with_churn_crashes_and_loss_gets_everything() {
    let s = shipped("club").shrunk(24, 80);
    let out = run(&s, s.seed).expect("runs");
    let f = &out.report.faults;
    assert!(f.planned.churn_offline > 0 && f.planned.crashes > 0 && f.messages_lost > 0);
    assert_healed_and_exact(&out);
}

#[test]
fn city_with_partitions_and_crashes_gets_everything() {
    let s = shipped("city").shrunk(40, 120);
    let out = run(&s, s.seed).expect("runs");
    let f = &out.report.faults;
    assert!(f.planned.partitions > 0 && f.planned.crashes > 0);
    assert_healed_and_exact(&out);
}

#[test]
fn clubs_reach_every_connected_member_and_never_a_non_member() {
    let mut s = shipped("clubs").shrunk(80, 120);
    if let Some(c) = &mut s.club {
        c.members = 24;
    }
    let out = run(&s, s.seed).expect("runs");
    let f = &out.report.faults;
    assert!(f.planned.churn_offline > 0 && f.messages_lost > 0);
    assert_healed_and_exact(&out);
    let club = out.report.club.as_ref().expect("club figures");
    assert!(club.club_items > 0 && club.entitled_pairs > 0);
    assert_eq!(club.delivery_ratio, 1.0, "{club:?}");
    assert_eq!(club.non_member_deliveries, 0, "{club:?}");
    assert!(club.wire_bytes_per_club_item > 0.0 && club.wire_bytes_per_public_item > 0.0);
    assert!(out.report.delivery.by_audience.contains_key("club"));
}
