//! Shared helpers for mesh-sim's tests: loading the shipped scenarios and
//! building small ones from TOML.

#![allow(dead_code)] // each test file uses a different part of this

use std::path::PathBuf;

use mesh_sim::{Outcome, Scenario, run};

/// The folder of shipped scenarios.
pub fn scenarios_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

/// A shipped scenario by file stem.
pub fn shipped(name: &str) -> Scenario {
    Scenario::load(&scenarios_dir().join(format!("{name}.toml"))).expect("shipped scenario loads")
}

/// Parses `toml` and runs it with its own seed.
pub fn run_toml(toml: &str) -> Outcome {
    let s = Scenario::from_toml(toml).expect("scenario parses");
    run(&s, s.seed).expect("scenario runs")
}

/// The checks every healed scenario must pass.
pub fn assert_healed_and_exact(out: &Outcome) {
    let r = &out.report;
    assert!(!r.stopped_early, "hit the event cap");
    assert!(r.faults.total > 0, "the scenario injected no fault");
    assert_eq!(
        r.messages.wire_errors, 0,
        "frames that did not encode/decode"
    );
    assert_eq!(
        r.delivery.non_entitled_deliveries, 0,
        "delivered to nodes not entitled: {:?}",
        r.delivery.violations
    );
    assert_eq!(r.delivery.published as usize, r.setup.items);
    assert!(r.delivery.entitled_pairs > 0, "nothing was due");
    assert_eq!(
        r.delivery.held_at_end, r.delivery.entitled_pairs,
        "ratio {} after healing; missing: {:?}",
        r.delivery.ratio, r.delivery.missing
    );
}
