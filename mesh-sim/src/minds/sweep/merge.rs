//! The arithmetic of `mesh-sim minds merge`: every run's key figures, per
//! parameter combination the mean over its seeds with a 95 % interval
//! (Student's t, as `--seeds` gives), as `sweep.json`, and one CSV row per
//! run as `sweep.csv`. Pure: the files are read and written in `io`.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::super::result::interval;
use super::plan::{Axis, Plan, Setting};

/// The figures a merge reads from one run's `result.json` (its other keys
/// are ignored).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RunFigures {
    /// Share of ticks whose reply was a loop.
    pub stagnant_tick_share: f64,
    /// Mean looping ticks before an escape; `null` when no loop ended.
    pub mean_ticks_to_escape: Option<f64>,
    /// Strategy items handed to engines.
    pub strategies_shared: u64,
    /// Bytes delivered on all links.
    pub wire_bytes: u64,
}

/// One figure over a combination's seeds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stat {
    /// Runs that had the figure.
    pub runs: usize,
    /// Their mean.
    pub mean: f64,
    /// The 95 % interval's lower end; `null` for a single run.
    pub low: Option<f64>,
    /// Its upper end.
    pub high: Option<f64>,
}

impl Stat {
    /// Of `xs`; `None` when empty.
    pub fn of(xs: &[f64]) -> Option<Stat> {
        if let Some(i) = interval(xs) {
            return Some(Stat {
                runs: xs.len(),
                mean: i.mean,
                low: Some(i.low),
                high: Some(i.high),
            });
        }
        xs.first().map(|&x| Stat {
            runs: 1,
            mean: x,
            low: None,
            high: None,
        })
    }
}

/// One parameter combination over its seeds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Combination {
    /// Its settings, in `--param` order.
    pub params: Vec<Setting>,
    /// The seeds run.
    pub seeds: Vec<u64>,
    /// Over the runs.
    pub stagnant_tick_share: Option<Stat>,
    /// Over the runs where some loop ended.
    pub mean_ticks_to_escape: Option<Stat>,
    /// Over the runs.
    pub strategies_shared: Option<Stat>,
    /// Over the runs.
    pub wire_bytes: Option<Stat>,
}

/// `sweep.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepSummary {
    /// The scenario's name.
    pub scenario: String,
    /// The first seed.
    pub seed: u64,
    /// Seeds per combination.
    pub seeds: usize,
    /// The axes.
    pub params: Vec<Axis>,
    /// Runs merged.
    pub runs: usize,
    /// One per combination, in plan order.
    pub combinations: Vec<Combination>,
}

/// Merges `figures[i]`, the figures of `plan.runs[i]`.
pub fn summarize(plan: &Plan, figures: &[RunFigures]) -> SweepSummary {
    let mut combinations: Vec<Combination> = Vec::new();
    let mut members: Vec<Vec<&RunFigures>> = Vec::new();
    for (run, f) in plan.runs.iter().zip(figures) {
        match combinations.last_mut() {
            Some(c) if c.params == run.params => {
                c.seeds.push(run.seed);
                if let Some(m) = members.last_mut() {
                    m.push(f);
                }
            }
            _ => {
                combinations.push(Combination {
                    params: run.params.clone(),
                    seeds: vec![run.seed],
                    stagnant_tick_share: None,
                    mean_ticks_to_escape: None,
                    strategies_shared: None,
                    wire_bytes: None,
                });
                members.push(vec![f]);
            }
        }
    }
    for (c, runs) in combinations.iter_mut().zip(&members) {
        let take = |pick: &dyn Fn(&RunFigures) -> Option<f64>| {
            Stat::of(&runs.iter().copied().filter_map(pick).collect::<Vec<_>>())
        };
        c.stagnant_tick_share = take(&|f| Some(f.stagnant_tick_share));
        c.mean_ticks_to_escape = take(&|f| f.mean_ticks_to_escape);
        // Counts of items and bytes of a run: far below 2^53, exact in f64.
        c.strategies_shared = take(&|f| Some(f.strategies_shared as f64));
        c.wire_bytes = take(&|f| Some(f.wire_bytes as f64));
    }
    SweepSummary {
        scenario: plan.scenario.clone(),
        seed: plan.seed,
        seeds: plan.seeds,
        params: plan.params.clone(),
        runs: figures.len().min(plan.runs.len()),
        combinations,
    }
}

/// `sweep.csv`: `run, id`, one column per key, `seed` and the four figures
/// (an empty cell for a `null`), one row per run.
pub fn runs_csv(plan: &Plan, figures: &[RunFigures]) -> String {
    let mut out = String::from("run,id");
    for a in &plan.params {
        out.push(',');
        out.push_str(&a.key);
    }
    out.push_str(",seed,stagnant_tick_share,mean_ticks_to_escape,strategies_shared,wire_bytes\n");
    for (run, f) in plan.runs.iter().zip(figures) {
        // Writing to a String cannot fail; keys, values and ids hold no commas.
        let _ = write!(out, "{},{}", run.index, run.id);
        for s in &run.params {
            let _ = write!(out, ",{}", s.value);
        }
        let _ = writeln!(
            out,
            ",{},{},{},{},{}",
            run.seed,
            f.stagnant_tick_share,
            f.mean_ticks_to_escape
                .map_or(String::new(), |m| m.to_string()),
            f.strategies_shared,
            f.wire_bytes
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(share: f64, escape: Option<f64>, strategies: u64, bytes: u64) -> RunFigures {
        RunFigures {
            stagnant_tick_share: share,
            mean_ticks_to_escape: escape,
            strategies_shared: strategies,
            wire_bytes: bytes,
        }
    }

    fn plan() -> Plan {
        Plan::build(
            "s",
            vec![Axis {
                key: "policy.adversaries".into(),
                values: vec!["0".into(), "0.2".into()],
            }],
            10,
            2,
        )
        .unwrap()
    }

    #[test]
    fn a_combination_gets_the_mean_and_interval_of_its_seeds() {
        let runs = [
            figures(0.1, Some(4.0), 10, 100),
            figures(0.3, None, 20, 300),
            figures(0.5, Some(6.0), 0, 1_000),
            figures(0.5, Some(8.0), 2, 1_000),
        ];
        let s = summarize(&plan(), &runs);
        assert_eq!(s.runs, 4);
        assert_eq!(s.combinations.len(), 2);
        let a = &s.combinations[0];
        assert_eq!(a.params[0].value, "0");
        assert_eq!(a.seeds, [10, 11]);
        let share = a.stagnant_tick_share.as_ref().unwrap();
        assert!((share.mean - 0.2).abs() < 1e-12);
        assert_eq!(share, &Stat::of(&[0.1, 0.3]).unwrap());
        // Only one seed's loops ended: a mean, no interval.
        let escape = a.mean_ticks_to_escape.as_ref().unwrap();
        assert_eq!((escape.runs, escape.mean, escape.low), (1, 4.0, None));
        assert_eq!(a.wire_bytes.as_ref().unwrap().mean, 200.0);
        let b = &s.combinations[1];
        assert_eq!(b.strategies_shared.as_ref().unwrap().mean, 1.0);
        let bytes = b.wire_bytes.as_ref().unwrap();
        assert_eq!((bytes.low, bytes.high), (Some(1_000.0), Some(1_000.0)));
    }

    #[test]
    fn the_csv_has_one_row_per_run() {
        let runs = [
            figures(0.1, Some(4.0), 10, 100),
            figures(0.3, None, 20, 300),
            figures(0.5, Some(6.0), 0, 1_000),
            figures(0.5, Some(8.0), 2, 1_000),
        ];
        let csv = runs_csv(&plan(), &runs);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[0],
            "run,id,policy.adversaries,seed,stagnant_tick_share,mean_ticks_to_escape,strategies_shared,wire_bytes"
        );
        assert_eq!(lines[2], "1,policy.adversaries=0__seed=11,0,11,0.3,,20,300");
        assert_eq!(lines.len(), 5);
    }
}
