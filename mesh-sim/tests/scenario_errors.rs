//! Bad scenarios are refused with an error that names the field, before
//! anything runs.

use std::path::Path;

use mesh_sim::{Scenario, SimError};

const GOOD: &str = r#"
name = "ok"
seed = 1
duration_ms = 100_000
heal_ms = 50_000

[nodes]
count = 6

[graph]
kind = "random_regular"
degree = 3

[[groups]]
name = "family"
size = 3

[items]
count = 5
start_ms = 0
end_ms = 40_000
"#;

fn field_of(toml: &str) -> &'static str {
    match Scenario::from_toml(toml) {
        Err(SimError::InvalidScenario { field, .. }) => field,
        other => panic!("expected InvalidScenario, got {other:?}"),
    }
}

#[test]
fn the_base_scenario_is_valid() {
    let s = Scenario::from_toml(GOOD).expect("valid");
    assert_eq!(s.nodes.count, 6);
    assert_eq!(s.sample_ms(), 500, "duration / 200 samples");
}

#[test]
fn unknown_fields_and_bad_toml_are_parse_errors() {
    let unknown = GOOD.replace("seed = 1", "seed = 1\ncolour = \"red\"");
    assert!(matches!(
        Scenario::from_toml(&unknown),
        Err(SimError::ParseScenario(_))
    ));
    let mistyped = GOOD.replace("seed = 1", "seed = \"one\"");
    assert!(matches!(
        Scenario::from_toml(&mistyped),
        Err(SimError::ParseScenario(_))
    ));
    let msg = Scenario::from_toml(&unknown)
        .expect_err("refused")
        .to_string();
    assert!(msg.contains("colour"), "{msg}");
}

#[test]
fn each_bad_value_names_its_field() {
    let cases = [
        (GOOD.replace("count = 6", "count = 1"), "nodes.count"),
        (GOOD.replace("degree = 3", "degree = 6"), "graph.degree"),
        (GOOD.replace("count = 6", "count = 7"), "graph.degree"),
        (
            GOOD.replace("heal_ms = 50_000", "heal_ms = 200_000"),
            "heal_ms",
        ),
        (
            GOOD.replace("duration_ms = 100_000", "duration_ms = 0"),
            "duration_ms",
        ),
        (
            GOOD.replace("end_ms = 40_000", "end_ms = 400_000"),
            "items.end_ms",
        ),
        (GOOD.replace("count = 5", "count = 0"), "items.count"),
        (
            GOOD.replace("size = 3", "size = 3\nmembers = [1]"),
            "groups",
        ),
        (
            GOOD.replace("name = \"family\"", "name = \"Family!\""),
            "groups.name",
        ),
        (
            GOOD.replace("size = 3", "members = [1, 9]"),
            "groups.members",
        ),
        (
            GOOD.replace("end_ms = 40_000", "end_ms = 40_000\nmax_hops = 0"),
            "items.max_hops",
        ),
        (
            GOOD.replace("end_ms = 40_000", "end_ms = 40_000\nauthors = [6]"),
            "items.authors",
        ),
        (
            GOOD.replace("[[groups]]\nname = \"family\"\nsize = 3\n", "")
                + "[items.audience]\ngroup = 1.0\n",
            "items.audience.group",
        ),
        (
            GOOD.to_owned() + "[items.audience]\npublic = -1.0\n",
            "items.audience",
        ),
        (
            GOOD.to_owned() + "[links.server]\nloss = 1.0\n",
            "links.server",
        ),
        (
            GOOD.to_owned()
                + "[links.phone]\nlatency = { dist = \"uniform\", min_ms = 9, max_ms = 1 }\n",
            "links.phone",
        ),
        (
            GOOD.to_owned() + "[[faults.partitions]]\nstart_ms = 0\nend_ms = 60_000\nshare = 0.5\n",
            "faults.partitions",
        ),
        (
            GOOD.to_owned()
                + "[[faults.partitions]]\nstart_ms = 0\nend_ms = 10\nshare = 0.5\nnodes = [1]\n",
            "faults.partitions",
        ),
        (
            GOOD.to_owned() + "[faults.crashes]\ncount = 1\ndowntime_ms = 50_000\n",
            "faults.crashes.downtime_ms",
        ),
        (
            GOOD.to_owned() + "[faults.churn]\nmean_online_ms = 0\nmean_offline_ms = 5\n",
            "faults.churn",
        ),
        (
            GOOD.to_owned() + "[[faults.crash_at]]\nnode = 6\nat_ms = 0\ndowntime_ms = 5\n",
            "faults.crash_at.node",
        ),
        (
            GOOD.to_owned() + "[[faults.blackholes]]\nstart_ms = 0\nend_ms = 5\nlinks = [[1, 1]]\n",
            "faults.blackholes.links",
        ),
    ];
    for (toml, field) in cases {
        assert_eq!(field_of(&toml), field, "for:\n{toml}");
    }
}

#[test]
fn explicit_edges_must_name_real_nodes() {
    let bad = GOOD.replace(
        "kind = \"random_regular\"\ndegree = 3",
        "kind = \"explicit\"\nedges = [[0, 6]]",
    );
    assert_eq!(field_of(&bad), "graph.edges");
    let lonely = GOOD.replace(
        "kind = \"random_regular\"\ndegree = 3",
        "kind = \"explicit\"\nedges = []",
    );
    assert_eq!(field_of(&lonely), "graph.edges");
}

#[test]
fn a_missing_file_is_a_read_error_naming_it() {
    let err = Scenario::load(Path::new("/nonexistent/scenario.toml")).expect_err("refused");
    assert!(matches!(err, SimError::ReadScenario { .. }));
    assert!(err.to_string().contains("/nonexistent/scenario.toml"));
}

#[test]
fn shrinking_keeps_a_valid_scenario() {
    let s = Scenario::from_toml(GOOD).expect("valid");
    let small = s.shrunk(4, 2);
    small.validate().expect("still valid");
    assert_eq!((small.nodes.count, small.items.count), (4, 2));
}

#[test]
fn ring_small_world_and_clusters_check_their_fields_and_run() {
    let graph = |spec: &str| GOOD.replace("kind = \"random_regular\"\ndegree = 3", spec);
    let cases = [
        ("kind = \"ring\"\ndegree = 3", "graph.degree"),
        ("kind = \"ring\"\ndegree = 6", "graph.degree"),
        (
            "kind = \"small_world\"\ndegree = 2\nrewire = 1.5",
            "graph.rewire",
        ),
        ("kind = \"clusters\"\ncount = 4\nbridges = 1", "graph.count"),
        (
            "kind = \"clusters\"\ncount = 2\nbridges = 4",
            "graph.bridges",
        ),
    ];
    for (spec, field) in cases {
        assert_eq!(field_of(&graph(spec)), field, "{spec}");
    }
    for spec in [
        "kind = \"ring\"\ndegree = 2",
        "kind = \"small_world\"\ndegree = 4\nrewire = 0.3",
        "kind = \"clusters\"\ncount = 2\nbridges = 2",
    ] {
        let s = Scenario::from_toml(&graph(spec)).expect(spec);
        let world = mesh_sim::World::build(&s, 1).expect(spec);
        assert!(world.graph.is_connected(), "{spec}");
        s.shrunk(4, 2).validate().expect("shrunk stays valid");
    }
}
