//! `mesh-sim minds` on small worlds: real cores over real SQLite files, the
//! real replication run between them. The same seed repeats byte for byte;
//! know-how travels with sharing on and stays home with it off, and only
//! as far as its audience (`policy.audience`) lets it; twins and
//! seeds add their keys; bad scenarios are refused in one line naming the
//! field, before anything runs.

use std::process::Command;

use mesh_sim::minds::{MindsOptions, MindsScenario, run_minds, run_world, write_outcome};

/// Four minds, everyone a friend, twelve simulated hours of ten-minute
/// ticks; loops come often and shared strategies are adopted readily, so a
/// short run shows every path.
const SMALL: &str = r#"
name = "minds-small"
seed = 3
duration_ms = 43_200_000
tick_ms = 600_000

[nodes]
count = 4

[graph]
kind = "complete"

[policy]
drift = 0.2
self_escape = 0.05
user_notes = 0.3
invent = 1.0
invented_effectiveness = [0.9, 0.9]
share_at_rating = -3.0
adopt = 1.0
adopt_at_rating = -3.0

[policy.effectiveness]
external_stimulation = 0.3
context_switch = 0.3
internal_restructuring = 0.3
radical_pause = 0.3
"#;

fn small() -> MindsScenario {
    MindsScenario::from_toml(SMALL).expect("valid")
}

fn options(seed: u64) -> MindsOptions {
    MindsOptions {
        seed,
        seeds: 1,
        twin: false,
    }
}

#[test]
fn the_same_seed_gives_a_byte_identical_result() {
    let s = small();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut files = Vec::new();
    for run in ["a", "b"] {
        let outcome = run_minds(&s, options(5), &mut |_, _| {}).expect("runs");
        let out = dir.path().join(run);
        write_outcome(&out, &outcome).expect("writes");
        files.push(std::fs::read(out.join("result.json")).expect("result"));
        let csv = std::fs::read_to_string(out.join("timeseries.csv")).expect("csv");
        assert_eq!(
            csv.lines().count(),
            1 + 72,
            "a header and one row per tick time"
        );
    }
    assert_eq!(files[0], files[1], "same seed, same bytes");
    let json: serde_json::Value = serde_json::from_slice(&files[0]).expect("json");
    let keys: Vec<&str> = json
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    let mut expected = [
        "minds",
        "ticks",
        "stagnant_tick_share",
        "episodes",
        "mean_ticks_to_escape",
        "strategies_shared",
        "wire_bytes",
    ];
    let mut got = keys.clone();
    got.sort_unstable();
    expected.sort_unstable();
    assert_eq!(got, expected, "exactly the issue's keys");
    assert_eq!(json["minds"], 4);
    assert!(json["episodes"].as_u64().expect("episodes") > 0, "{json}");
}

#[test]
fn strategies_travel_with_sharing_on_and_stay_home_with_it_off() {
    let s = small();
    let on = run_world(&s, 5, true, &mut |_| {}).expect("on");
    let off = run_world(&s, 5, false, &mut |_| {}).expect("off");
    assert!(on.figures.strategies_shared > 0, "{:?}", on.figures);
    assert_eq!(off.figures.strategies_shared, 0, "{:?}", off.figures);
    let adopted = |r: &mesh_sim::minds::run::WorldRun| r.series.last().map_or(0, |x| x.adopted);
    assert!(
        adopted(&on) > 0,
        "a friend's strategy reached a mind's database through the engine and was adopted"
    );
    assert_eq!(
        adopted(&off),
        0,
        "nothing of a friend's arrives with sharing off"
    );
    assert!(on.figures.wire_bytes > off.figures.wire_bytes);
    let applied = on.series.last().map_or(0, |x| x.applied);
    assert!(applied > 0, "the cores applied strategies");
}

/// A strategy item carries its mechanism, so a friend's core chooses and
/// applies what it received: even with a model that adopts nothing,
/// sharing changes how the minds stagnate. (Before the item carried it,
/// sharing changed nothing but the bytes, and this test said so.)
#[test]
fn without_adoption_received_strategies_still_change_the_world() {
    let toml = SMALL.replace("adopt = 1.0", "adopt = 0.0");
    let s = MindsScenario::from_toml(&toml).expect("valid");
    let on = run_world(&s, 5, true, &mut |_| {}).expect("on").figures;
    let off = run_world(&s, 5, false, &mut |_| {}).expect("off").figures;
    assert!(on.strategies_shared > 0, "{on:?}");
    assert_ne!(
        (
            on.ticks,
            on.episodes,
            on.stagnant_tick_share,
            on.mean_ticks_to_escape
        ),
        (
            off.ticks,
            off.episodes,
            off.stagnant_tick_share,
            off.mean_ticks_to_escape
        )
    );
}

/// Four minds in a line (0–1–2–3), so a mind two or three hops away is
/// no friend: public know-how is relayed past the author's friends,
/// friends-only know-how reaches only them (the protocol relays a
/// `friends` item from its author alone), and a club of every mind relays
/// it member to member as far as public.
#[test]
fn friends_only_know_how_stays_with_friends_while_public_and_club_travel_on() {
    let line = SMALL.replace(
        "kind = \"complete\"",
        "kind = \"explicit\"\nedges = [[0, 1], [1, 2], [2, 3]]",
    );
    let reach = |audience: &str| {
        let toml = line.replace(
            "adopt_at_rating = -3.0",
            &format!("adopt_at_rating = -3.0\naudience = \"{audience}\""),
        );
        let s = MindsScenario::from_toml(&toml).expect("valid");
        run_world(&s, 5, true, &mut |_| {}).expect("runs").reach
    };
    let public = reach("public");
    assert!(public.beyond_friends > 0, "relayed on: {public:?}");
    let friends = reach("friends");
    assert!(friends.knowhow > 0, "friends got it: {friends:?}");
    assert_eq!(friends.beyond_friends, 0, "no one else did: {friends:?}");
    let club = reach("club");
    assert!(club.beyond_friends > 0, "relayed among members: {club:?}");
}

#[test]
fn an_adversarys_plus_three_gets_its_useless_strategy_adopted() {
    let toml = SMALL.replace(
        "adopt_at_rating = -3.0",
        "adopt_at_rating = 2.0\nadversaries = 0.25",
    );
    let s = MindsScenario::from_toml(&toml).expect("valid");
    let last = |sharing| {
        let run = run_world(&s, 5, sharing, &mut |_| {}).expect("runs");
        run.series.last().cloned().expect("rows")
    };
    let on = last(true);
    assert!(
        on.adopted_useless > 0,
        "its +3 ratings travelled and a friend adopted the trick: {on:?}"
    );
    assert_eq!(
        last(false).adopted_useless,
        0,
        "nothing travels with sharing off"
    );
}

#[test]
fn twins_and_seeds_add_their_keys() {
    let mut s = small();
    s.duration_ms = 10_800_000;
    let outcome = run_minds(
        &s,
        MindsOptions {
            seed: 1,
            seeds: 2,
            twin: true,
        },
        &mut |_, _| {},
    )
    .expect("runs");
    let json = serde_json::to_value(&outcome.result).expect("json");
    for side in ["sharing_on", "sharing_off"] {
        assert_eq!(json["twin"][side]["minds"], 4, "{json}");
        assert!(json["twin"][side]["ticks"].as_u64().is_some(), "{json}");
    }
    assert!(json["twin"].get("escape_ratio").is_some(), "{json}");
    assert_eq!(json["ci95"]["seeds"], 2, "{json}");
    assert_eq!(json["twin"]["sharing_off"]["strategies_shared"], 0);
}

fn error_of(toml: &str) -> String {
    match MindsScenario::from_toml(toml) {
        Ok(_) => panic!("accepted:\n{toml}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_scenarios_name_the_field_in_one_line() {
    let cases = [
        (
            SMALL.replace("seed = 3", "seed = 3\ncolour = \"red\""),
            "colour",
        ),
        (SMALL.replace("drift = 0.2", "drift = 1.5"), "policy.drift"),
        (
            SMALL.replace("context_switch = 0.3", "context_switch = -0.1"),
            "policy.effectiveness.context_switch",
        ),
        (
            SMALL.replace(
                "invented_effectiveness = [0.9, 0.9]",
                "invented_effectiveness = [0.9, 0.1]",
            ),
            "policy.invented_effectiveness",
        ),
        (
            SMALL.replace("adopt_at_rating = -3.0", "adopt_at_rating = 4.0"),
            "policy.adopt_at_rating",
        ),
        (
            SMALL.replace("tick_ms = 600_000", "tick_ms = 1_000"),
            "tick_ms",
        ),
        (SMALL.replace("count = 4", "count = 1"), "nodes.count"),
        (
            SMALL.replace(
                "kind = \"complete\"",
                "kind = \"random_regular\"\ndegree = 9",
            ),
            "graph.degree",
        ),
        (SMALL.replace("drift = 0.2\n", ""), "drift"),
        (
            SMALL.replace("adopt = 1.0", "adopt = 1.0\nadversaries = 1.5"),
            "policy.adversaries",
        ),
        (
            SMALL.replace("adopt = 1.0", "adopt = 1.0\naudience = \"everyone\""),
            "policy.audience",
        ),
    ];
    for (toml, field) in cases {
        let e = error_of(&toml);
        assert!(e.contains(field), "{field}: {e}");
        assert_eq!(e.lines().count(), 1, "one line: {e}");
    }
}

#[test]
fn the_command_refuses_a_bad_scenario_before_anything_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, SMALL.replace("drift = 0.2", "drift = 2.0")).expect("write");
    let out_dir = dir.path().join("out");
    let out = Command::new(env!("CARGO_BIN_EXE_mesh-sim"))
        .args(["minds"])
        .arg(&bad)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .expect("runs");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("policy.drift"), "{stderr}");
    assert!(!out_dir.exists(), "nothing written");
}

#[test]
fn the_shipped_scenarios_are_valid() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios");
    let shipped = [
        ("minds-family.toml", 6),
        ("minds-club.toml", 200),
        ("minds-town.toml", 5_000),
    ];
    for (name, minds) in shipped {
        let s = MindsScenario::load(&std::path::Path::new(dir).join(name)).expect(name);
        assert_eq!(s.minds(), minds, "{name}");
    }
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .expect("scenarios folder")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("minds-"))
        .collect();
    found.sort();
    let mut listed: Vec<&str> = shipped.iter().map(|(n, _)| *n).collect();
    listed.sort_unstable();
    assert_eq!(found, listed, "every minds scenario is checked here");
}
