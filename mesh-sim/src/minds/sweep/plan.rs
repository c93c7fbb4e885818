//! A sweep's list of runs and its shards. Pure: the list is the cartesian
//! product of the `--param` values × seeds in a fixed order — the first
//! `--param` outermost, the last varying fastest among the parameters, and
//! the seeds (`seed`, `seed + 1`, …) innermost — numbered from 0; run `r`
//! belongs to shard `r % N == I` of `--shard I/N`. Each run has an id made
//! of its settings and seed, stable and safe as a folder name.

use serde::{Deserialize, Serialize};

use super::error::SweepError;

/// Most runs in one sweep: each is a whole world (seconds for a handful of
/// minds, hours for a town) and a folder of three small files; 10,000 runs
/// keep the plan under a few MB and a merge within seconds, and a larger
/// grid is better split into sweeps one can look at in between.
pub const MAX_RUNS: usize = 10_000;

/// Longest run id: every key and value and the seed, kept under the
/// 255-byte file name limit of common file systems with room to spare.
pub const MAX_ID_CHARS: usize = 200;

/// One key's values, canonically spelled (see `params`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Axis {
    /// The scenario field, dotted (`policy.adversaries`).
    pub key: String,
    /// Its values, in the order given.
    pub values: Vec<String>,
}

/// One key's value in one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setting {
    /// The scenario field.
    pub key: String,
    /// Its value.
    pub value: String,
}

/// One run: what `params.json` holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSpec {
    /// Position in the plan, from 0.
    pub index: usize,
    /// Folder name.
    pub id: String,
    /// One setting per axis, in axis order.
    pub params: Vec<Setting>,
    /// The world's seed.
    pub seed: u64,
}

/// A whole sweep, the same for every shard: what `plan.json` holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// The scenario's name.
    pub scenario: String,
    /// The first seed.
    pub seed: u64,
    /// Seeds per combination.
    pub seeds: usize,
    /// The axes, in `--param` order.
    pub params: Vec<Axis>,
    /// Every run, in order.
    pub runs: Vec<RunSpec>,
}

/// The part of a file name a value may hold: anything but ASCII letters,
/// digits, `.`, `_` and `-` becomes `-` (`random:6` → `random-6`).
fn safe(value: &str) -> String {
    value
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// A run's folder name: `KEY=VALUE` per setting and `seed=S`, joined by
/// `__` (`graph=random-6__policy.adversaries=0.05__seed=200`).
pub fn run_id(params: &[Setting], seed: u64) -> String {
    params
        .iter()
        .map(|s| format!("{}={}", s.key, safe(&s.value)))
        .chain(std::iter::once(format!("seed={seed}")))
        .collect::<Vec<_>>()
        .join("__")
}

impl Plan {
    /// The runs of `axes` × `seeds` seeds from `seed`, in the documented
    /// order; refused past [`MAX_RUNS`], for an empty axis, or when two
    /// runs would share an id.
    pub fn build(
        scenario: &str,
        params: Vec<Axis>,
        seed: u64,
        seeds: usize,
    ) -> Result<Plan, SweepError> {
        if !(1..=super::super::result::MAX_SEEDS).contains(&seeds) {
            return Err(SweepError::Seeds(seeds));
        }
        if let Some(a) = params.iter().find(|a| a.values.is_empty()) {
            return Err(SweepError::Param(format!("{}: no values", a.key)));
        }
        let combinations = params
            .iter()
            .try_fold(1usize, |n, a| n.checked_mul(a.values.len()));
        let runs = combinations.and_then(|c| c.checked_mul(seeds));
        let runs = match runs {
            Some(r) if r <= MAX_RUNS => r,
            other => {
                return Err(SweepError::TooManyRuns {
                    runs: other.map_or(u64::MAX, |r| u64::try_from(r).unwrap_or(u64::MAX)),
                });
            }
        };
        let combinations = runs / seeds;
        let mut list = Vec::with_capacity(runs);
        let mut ids = std::collections::HashSet::with_capacity(runs);
        for c in 0..combinations {
            // Odometer: the last axis varies fastest.
            let mut rest = c;
            let mut settings = vec![None; params.len()];
            for (j, axis) in params.iter().enumerate().rev() {
                let n = axis.values.len();
                settings[j] = Some(Setting {
                    key: axis.key.clone(),
                    value: axis.values[rest % n].clone(),
                });
                rest /= n;
            }
            let settings: Vec<Setting> = settings.into_iter().flatten().collect();
            for k in 0..seeds {
                let seed = seed.wrapping_add(k as u64);
                let id = run_id(&settings, seed);
                if id.len() > MAX_ID_CHARS {
                    return Err(SweepError::Param(format!(
                        "run id {id} is longer than {MAX_ID_CHARS} characters: sweep fewer keys"
                    )));
                }
                if !ids.insert(id.clone()) {
                    return Err(SweepError::Param(format!(
                        "two runs would share the folder {id}"
                    )));
                }
                list.push(RunSpec {
                    index: list.len(),
                    id,
                    params: settings.clone(),
                    seed,
                });
            }
        }
        Ok(Plan {
            scenario: scenario.to_owned(),
            seed,
            seeds,
            params,
            runs: list,
        })
    }
}

/// `--shard I/N`: shard `index` of `count`, counted from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// I: 0..count.
    pub index: usize,
    /// N: 1..=[`MAX_RUNS`].
    pub count: usize,
}

impl Shard {
    /// The whole sweep (`0/1`).
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// Reads `I/N`.
    pub fn parse(text: &str) -> Result<Shard, SweepError> {
        let bad = |detail: String| SweepError::Shard {
            given: text.to_owned(),
            detail,
        };
        let Some((i, n)) = text.split_once('/') else {
            return Err(bad("expected I/N, as 0/4".into()));
        };
        let (Ok(index), Ok(count)) = (i.trim().parse::<usize>(), n.trim().parse::<usize>()) else {
            return Err(bad("expected I/N with whole numbers, as 0/4".into()));
        };
        if !(1..=MAX_RUNS).contains(&count) {
            return Err(bad(format!("N must be in 1..={MAX_RUNS}")));
        }
        if index >= count {
            return Err(bad(format!(
                "I must be below N (shards count from 0: 0/{count} … {}/{count})",
                count - 1
            )));
        }
        Ok(Shard { index, count })
    }

    /// Whether run `index` of the plan is this shard's.
    pub fn holds(&self, index: usize) -> bool {
        index % self.count == self.index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(key: &str, values: &[&str]) -> Axis {
        Axis {
            key: key.into(),
            values: values.iter().map(|v| (*v).to_owned()).collect(),
        }
    }

    #[test]
    fn runs_go_first_param_outermost_seeds_innermost() {
        let plan = Plan::build(
            "s",
            vec![
                axis("graph", &["complete", "random:2"]),
                axis("policy.drift", &["0.1", "0.2", "0.3"]),
            ],
            7,
            2,
        )
        .unwrap();
        let got: Vec<(String, String, u64)> = plan
            .runs
            .iter()
            .map(|r| (r.params[0].value.clone(), r.params[1].value.clone(), r.seed))
            .collect();
        let mut want = Vec::new();
        for g in ["complete", "random:2"] {
            for d in ["0.1", "0.2", "0.3"] {
                for seed in [7, 8] {
                    want.push((g.to_owned(), d.to_owned(), seed));
                }
            }
        }
        assert_eq!(got, want);
        assert!(plan.runs.iter().enumerate().all(|(i, r)| r.index == i));
        assert_eq!(plan.runs[2].id, "graph=complete__policy.drift=0.2__seed=7");
        assert_eq!(plan.runs[11].id, "graph=random-2__policy.drift=0.3__seed=8");
    }

    #[test]
    fn no_params_is_one_run_per_seed() {
        let plan = Plan::build("s", Vec::new(), 3, 3).unwrap();
        let ids: Vec<&str> = plan.runs.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["seed=3", "seed=4", "seed=5"]);
    }

    #[test]
    fn every_run_is_in_exactly_one_shard() {
        let plan = Plan::build(
            "s",
            vec![axis("policy.drift", &["0.1", "0.2", "0.3"])],
            0,
            4,
        )
        .unwrap();
        for count in 1..=5 {
            let mut seen = vec![0; plan.runs.len()];
            for index in 0..count {
                let shard = Shard::parse(&format!("{index}/{count}")).unwrap();
                for r in plan.runs.iter().filter(|r| shard.holds(r.index)) {
                    seen[r.index] += 1;
                }
            }
            assert!(seen.iter().all(|&n| n == 1), "N = {count}: {seen:?}");
        }
        assert!(Shard::ALL.holds(11));
        assert_eq!(Shard::parse("1/2").unwrap(), Shard { index: 1, count: 2 });
    }

    #[test]
    fn bad_shards_and_sizes_are_refused_in_one_line() {
        for bad in ["3/2", "2/2", "0/0", "x/2", "1", "-1/2"] {
            let e = Shard::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with(&format!("--shard {bad}:")), "{e}");
            assert_eq!(e.lines().count(), 1);
        }
        let many: Vec<String> = (0..101).map(|i| i.to_string()).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let e = Plan::build("s", vec![axis("a", &many), axis("b", &many)], 0, 1).unwrap_err();
        assert!(matches!(e, SweepError::TooManyRuns { runs: 10_201 }), "{e}");
        assert!(matches!(
            Plan::build("s", Vec::new(), 0, 0),
            Err(SweepError::Seeds(0))
        ));
    }

    #[test]
    fn ids_that_would_collide_are_refused() {
        let e = Plan::build("s", vec![axis("graph", &["random:2", "random-2"])], 0, 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("share the folder"), "{e}");
    }
}
