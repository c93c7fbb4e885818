//! The scenario fields `mesh-sim minds sweep --param KEY=V1,V2,…` can vary,
//! how their values are read and written back (one canonical spelling per
//! value, so run ids are stable), and how a run's settings are applied to
//! the scenario. Pure: no files, no runs.

use crate::scenario::GraphSpec;

use super::super::audience::KnowhowAudience;
use super::super::scenario::MindsScenario;
use super::error::SweepError;
use super::plan::{Axis, Setting};

/// Most `--param` keys in one sweep: each key multiplies the runs, and a
/// run id names every key, so more than four would outgrow a file name.
pub const MAX_PARAMS: usize = 4;

/// Most values of one key: 64 already makes a sweep of a single key take
/// 64 worlds per seed; finer grids belong in a second sweep.
pub const MAX_VALUES: usize = 64;

/// Longest canonical value: keeps a run id (every key and value) within a
/// file name; `0.000001` and `small_world:100:0.125` fit, `1e-300` written
/// out does not.
pub const MAX_VALUE_CHARS: usize = 32;

/// What a key's values are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The friend graph (see [`parse_graph`]).
    Graph,
    /// A whole number (minds).
    Count,
    /// A decimal number (the scenario's own check gives its range).
    Number,
    /// Who know-how goes to: `public`, `friends` or `club`.
    Audience,
}

/// Every sweepable key, in the order help lists them.
const KEYS: &[(&str, Kind)] = &[
    ("graph", Kind::Graph),
    ("nodes.count", Kind::Count),
    ("policy.audience", Kind::Audience),
    ("policy.adversaries", Kind::Number),
    ("policy.drift", Kind::Number),
    ("policy.self_escape", Kind::Number),
    ("policy.user_notes", Kind::Number),
    ("policy.invent", Kind::Number),
    ("policy.share_at_rating", Kind::Number),
    ("policy.adopt", Kind::Number),
    ("policy.adopt_at_rating", Kind::Number),
    ("policy.effectiveness.external_stimulation", Kind::Number),
    ("policy.effectiveness.context_switch", Kind::Number),
    ("policy.effectiveness.internal_restructuring", Kind::Number),
    ("policy.effectiveness.radical_pause", Kind::Number),
];

/// The sweepable keys, comma-separated (for help and errors).
pub fn key_list() -> String {
    KEYS.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
}

/// A parsed value.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Graph(GraphSpec),
    Count(usize),
    Number(f64),
    Audience(KnowhowAudience),
}

fn kind_of(key: &str) -> Option<Kind> {
    KEYS.iter().find(|(k, _)| *k == key).map(|&(_, kind)| kind)
}

fn parse(kind: Kind, raw: &str) -> Result<Value, String> {
    let raw = raw.trim();
    match kind {
        Kind::Graph => parse_graph(raw).map(Value::Graph),
        Kind::Count => raw
            .parse::<usize>()
            .map(Value::Count)
            .map_err(|_| format!("{raw:?} is not a whole number")),
        Kind::Number => match raw.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(Value::Number(x)),
            _ => Err(format!("{raw:?} is not a number")),
        },
        Kind::Audience => raw.parse().map(Value::Audience),
    }
}

/// The graph shapes: `complete`, `random:DEGREE` (random regular),
/// `ring:DEGREE`, `small_world:DEGREE:REWIRE`, `clusters:COUNT:BRIDGES`.
fn parse_graph(raw: &str) -> Result<GraphSpec, String> {
    let parts: Vec<&str> = raw.split(':').collect();
    let whole = |x: &str| {
        x.parse::<usize>()
            .map_err(|_| format!("{raw:?}: {x:?} is not a whole number"))
    };
    match parts[..] {
        ["complete"] => Ok(GraphSpec::Complete),
        ["random", d] => Ok(GraphSpec::RandomRegular { degree: whole(d)? }),
        ["ring", d] => Ok(GraphSpec::Ring { degree: whole(d)? }),
        ["small_world", d, p] => match p.parse::<f64>() {
            Ok(rewire) if rewire.is_finite() => Ok(GraphSpec::SmallWorld {
                degree: whole(d)?,
                rewire,
            }),
            _ => Err(format!("{raw:?}: {p:?} is not a number")),
        },
        ["clusters", c, b] => Ok(GraphSpec::Clusters {
            count: whole(c)?,
            bridges: whole(b)?,
        }),
        _ => Err(format!(
            "{raw:?}: expected complete, random:DEGREE, ring:DEGREE, small_world:DEGREE:REWIRE or clusters:COUNT:BRIDGES"
        )),
    }
}

fn canonical(value: &Value) -> String {
    match value {
        Value::Graph(g) => match g {
            GraphSpec::Complete => "complete".into(),
            GraphSpec::RandomRegular { degree } => format!("random:{degree}"),
            GraphSpec::Ring { degree } => format!("ring:{degree}"),
            GraphSpec::SmallWorld { degree, rewire } => {
                format!("small_world:{degree}:{}", rewire + 0.0)
            }
            GraphSpec::Clusters { count, bridges } => format!("clusters:{count}:{bridges}"),
            // Never parsed from a value.
            GraphSpec::Explicit { .. } => "explicit".into(),
        },
        Value::Count(n) => n.to_string(),
        // Rust writes the shortest spelling that reads back the same, and
        // never with an exponent; `-0` is `0`.
        Value::Number(x) => format!("{}", x + 0.0),
        Value::Audience(a) => a.as_str().to_owned(),
    }
}

/// Reads one `--param KEY=V1,V2,…`: the key must be sweepable and every
/// value parse; values are kept in the given order, canonically spelled.
pub fn parse_param(text: &str) -> Result<Axis, SweepError> {
    let bad = SweepError::Param;
    let Some((key, values)) = text.split_once('=') else {
        return Err(bad(format!("{text}: expected KEY=V1,V2,…")));
    };
    let key = key.trim();
    let Some(kind) = kind_of(key) else {
        return Err(bad(format!(
            "{key}: not a sweepable key (one of {})",
            key_list()
        )));
    };
    let mut out: Vec<String> = Vec::new();
    for raw in values.split(',') {
        let value = canonical(&parse(kind, raw).map_err(|e| bad(format!("{key}: {e}")))?);
        if value.len() > MAX_VALUE_CHARS {
            return Err(bad(format!(
                "{key}: {value} is longer than {MAX_VALUE_CHARS} characters"
            )));
        }
        if out.contains(&value) {
            return Err(bad(format!("{key}: {value} is given twice")));
        }
        out.push(value);
    }
    if out.len() > MAX_VALUES {
        return Err(bad(format!("{key}: more than {MAX_VALUES} values")));
    }
    Ok(Axis {
        key: key.to_owned(),
        values: out,
    })
}

/// Reads every `--param`; a key given twice or more than [`MAX_PARAMS`]
/// keys are refused.
pub fn parse_params(texts: &[String]) -> Result<Vec<Axis>, SweepError> {
    if texts.len() > MAX_PARAMS {
        return Err(SweepError::Param(format!(
            "given {} times: at most {MAX_PARAMS} keys",
            texts.len()
        )));
    }
    let mut axes: Vec<Axis> = Vec::with_capacity(texts.len());
    for text in texts {
        let axis = parse_param(text)?;
        if axes.iter().any(|a| a.key == axis.key) {
            return Err(SweepError::Param(format!("{}: given twice", axis.key)));
        }
        axes.push(axis);
    }
    Ok(axes)
}

fn number_field<'a>(s: &'a mut MindsScenario, key: &str) -> Option<&'a mut f64> {
    let p = &mut s.policy;
    let e = &mut p.effectiveness;
    Some(match key {
        "policy.adversaries" => &mut p.adversaries,
        "policy.drift" => &mut p.drift,
        "policy.self_escape" => &mut p.self_escape,
        "policy.user_notes" => &mut p.user_notes,
        "policy.invent" => &mut p.invent,
        "policy.share_at_rating" => &mut p.share_at_rating,
        "policy.adopt" => &mut p.adopt,
        "policy.adopt_at_rating" => &mut p.adopt_at_rating,
        "policy.effectiveness.external_stimulation" => &mut e.external_stimulation,
        "policy.effectiveness.context_switch" => &mut e.context_switch,
        "policy.effectiveness.internal_restructuring" => &mut e.internal_restructuring,
        "policy.effectiveness.radical_pause" => &mut e.radical_pause,
        _ => return None,
    })
}

/// The scenario with one run's settings applied and checked by the
/// scenario's own rules; an error names the settings and the field.
pub fn apply(base: &MindsScenario, settings: &[Setting]) -> Result<MindsScenario, SweepError> {
    let mut s = base.clone();
    let named = || {
        settings
            .iter()
            .map(|x| format!("{}={}", x.key, x.value))
            .collect::<Vec<_>>()
            .join(" ")
    };
    for x in settings {
        let kind = kind_of(&x.key).ok_or_else(|| {
            SweepError::Param(format!("{}: not a sweepable key ({})", x.key, key_list()))
        })?;
        let value =
            parse(kind, &x.value).map_err(|e| SweepError::Param(format!("{}: {e}", x.key)))?;
        match value {
            Value::Graph(g) => s.graph = g,
            Value::Count(n) => s.nodes.count = n,
            Value::Audience(a) => s.policy.audience = a,
            Value::Number(v) => match number_field(&mut s, &x.key) {
                Some(field) => *field = v,
                None => {
                    return Err(SweepError::Param(format!("{}: not a number key", x.key)));
                }
            },
        }
    }
    s.validate()
        .map_err(|e| SweepError::Param(format!("{}: {e}", named())))?;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"
name = "t"
seed = 1
duration_ms = 3_600_000
tick_ms = 600_000
[nodes]
count = 4
[graph]
kind = "complete"
[policy]
drift = 0.2
invent = 1.0
invented_effectiveness = [0.9, 0.9]
[policy.effectiveness]
external_stimulation = 0.3
context_switch = 0.3
internal_restructuring = 0.3
radical_pause = 0.3
"#;

    fn base() -> MindsScenario {
        MindsScenario::from_toml(SMALL).unwrap()
    }

    fn set(key: &str, value: &str) -> Setting {
        Setting {
            key: key.into(),
            value: value.into(),
        }
    }

    #[test]
    fn values_are_spelled_canonically_in_the_given_order() {
        let a = parse_param("policy.drift=0.50, .1,1,-0").unwrap();
        assert_eq!(a.key, "policy.drift");
        assert_eq!(a.values, ["0.5", "0.1", "1", "0"]);
        let g =
            parse_param("graph=random:2,complete,ring:02,small_world:4:0.10,clusters:3:1").unwrap();
        assert_eq!(
            g.values,
            [
                "random:2",
                "complete",
                "ring:2",
                "small_world:4:0.1",
                "clusters:3:1"
            ]
        );
    }

    #[test]
    fn bad_keys_and_values_are_one_line_naming_the_key() {
        for (text, names) in [
            ("policy.nope=1", "policy.nope"),
            ("policy.drift=x", "policy.drift"),
            ("policy.drift=0.1,0.10", "policy.drift"),
            ("policy.drift=inf", "policy.drift"),
            (
                "policy.drift=0.0000000000000000000000000000000001",
                "policy.drift",
            ),
            ("graph=ring", "graph"),
            ("graph=random:x", "graph"),
            ("graph=small_world:4:x", "graph"),
            ("graph=explicit", "graph"),
            ("nodes.count=2.5", "nodes.count"),
            ("policy.audience=everyone", "policy.audience"),
            ("policy.audience=public,public", "policy.audience"),
            ("drift", "drift"),
        ] {
            let e = parse_param(text).unwrap_err().to_string();
            assert!(e.starts_with("--param "), "{e}");
            assert!(e.contains(names), "{text}: {e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
        let twice = parse_params(&["policy.drift=0.1".into(), "policy.drift=0.2".into()]);
        assert!(twice.unwrap_err().to_string().contains("given twice"));
        let many: Vec<String> = KEYS[..MAX_PARAMS + 1]
            .iter()
            .map(|(k, _)| format!("{k}=1"))
            .collect();
        assert!(parse_params(&many).is_err());
    }

    #[test]
    fn every_key_applies_to_its_field() {
        for &(key, kind) in KEYS {
            let value = match kind {
                Kind::Graph => "random:2",
                Kind::Count => "6",
                Kind::Number => "0.25",
                Kind::Audience => "friends",
            };
            let s = apply(&base(), &[set(key, value)]).unwrap();
            assert_ne!(s, base(), "{key} changed nothing");
        }
    }

    #[test]
    fn audiences_are_spelled_as_the_scenario_writes_them() {
        let a = parse_param("policy.audience=public, friends,club").unwrap();
        assert_eq!(a.values, ["public", "friends", "club"]);
        let club = apply(&base(), &[set("policy.audience", "club")]).unwrap();
        assert_eq!(club.policy.audience, KnowhowAudience::Club);
        assert_eq!(club.mesh().club.map(|c| c.members), Some(4));
    }

    #[test]
    fn a_value_out_of_the_scenarios_range_names_setting_and_field() {
        let e = apply(&base(), &[set("policy.drift", "1.5")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("policy.drift=1.5"), "{e}");
        assert!(e.contains("scenario field `policy.drift`"), "{e}");
        let e = apply(&base(), &[set("graph", "random:5")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("graph.degree"), "{e}");
    }
}
