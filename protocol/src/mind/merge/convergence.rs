//! The merge rule under random histories (proptest): 2..=5 devices of one
//! person edit and delete a few records, split into partitions, exchange
//! random subsets of what they hold in random orders with duplicates, then
//! heal and exchange everything. Every device must end with the same
//! versions, the same winner per record and the same conflict keys, and no
//! version that is a head may vanish: it wins, or loses to a tombstone, or
//! is itself a tombstone that lost, or says what the winner says, or forms a
//! reported conflict with the winner.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use super::*;
use crate::mind::record::{MindRecord, MindTable, MindValue};

/// Most devices in a run.
const DEVICES: usize = 5;
/// Records edited in a run: few, so edits collide.
const RECORDS: usize = 3;

#[derive(Debug, Clone)]
enum Op {
    /// Device `dev` writes text number `text` into record `rec`.
    Edit { dev: usize, rec: usize, text: u8 },
    /// Device `dev` deletes record `rec`.
    Delete { dev: usize, rec: usize },
    /// Devices whose bit is set in `mask` can reach each other and no one
    /// else, and so can the rest.
    Split { mask: u8 },
    /// `from` sends `to` a random subset of what it holds, shuffled and
    /// with duplicates (drawn from `seed`), if they can reach each other.
    Send { from: usize, to: usize, seed: u64 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..DEVICES, 0..RECORDS, 0u8..3).prop_map(|(dev, rec, text)| Op::Edit { dev, rec, text }),
        1 => (0..DEVICES, 0..RECORDS).prop_map(|(dev, rec)| Op::Delete { dev, rec }),
        1 => any::<u8>().prop_map(|mask| Op::Split { mask }),
        4 => (0..DEVICES, 0..DEVICES, any::<u64>()).prop_map(|(from, to, seed)| Op::Send { from, to, seed }),
    ]
}

/// SplitMix64: the delivery choices of one `Send`.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

struct Device {
    name: String,
    skew: u64,
    records: Vec<RecordVersions>,
    conflicts: BTreeSet<[u8; 16]>,
}

impl Device {
    fn receive(&mut self, rec: usize, v: VersionRef) {
        let out = self.records[rec].insert(v);
        assert_ne!(out.placement, Placement::Refused);
        assert_eq!(out.evicted, None, "runs stay under the bound");
        self.conflicts.extend(out.conflicts.iter().map(|c| c.key));
    }

    fn held(&self) -> Vec<(usize, VersionRef)> {
        self.records
            .iter()
            .enumerate()
            .flat_map(|(rec, r)| r.versions().iter().map(move |v| (rec, v.clone())))
            .collect()
    }
}

struct World {
    devices: Vec<Device>,
    group: Vec<bool>,
    step: u64,
}

impl World {
    fn new(n: usize, skews: &[u64]) -> World {
        World {
            devices: (0..n)
                .map(|i| Device {
                    name: format!("device-{i}"),
                    skew: skews[i],
                    records: vec![RecordVersions::new(); RECORDS],
                    conflicts: BTreeSet::new(),
                })
                .collect(),
            group: vec![false; n],
            step: 0,
        }
    }

    /// Device `dev` writes a version of `rec` (`None`: deletes it).
    fn write(&mut self, dev: usize, rec: usize, text: Option<String>) -> VersionRef {
        self.step += 1;
        let d = &mut self.devices[dev];
        let record = MindRecord {
            table: MindTable::Goal,
            key: [rec as u8; 16],
            vv: d.records[rec].next_vv(&d.name).unwrap(),
            at_ms: 1_000 + self.step * 10 + d.skew,
            deleted: text.is_none(),
            fields: text
                .map(|t| BTreeMap::from([("text".to_owned(), MindValue::Text(t))]))
                .unwrap_or_default(),
        };
        let id = ItemId(Sha256::digest(self.step.to_be_bytes()).into());
        let v = VersionRef::of(id, d.name.clone(), &record);
        let out = d.records[rec].insert(v.clone());
        // A local write supersedes everything its device holds.
        assert_eq!(out.placement, Placement::Head);
        assert!(out.conflicts.is_empty());
        assert_eq!(d.records[rec].heads(), vec![&v]);
        v
    }

    fn send(&mut self, from: usize, to: usize, seed: u64) {
        if from == to || self.group[from] != self.group[to] {
            return;
        }
        let mut draw = Draw(seed);
        let mut batch: Vec<(usize, VersionRef)> = Vec::new();
        for v in self.devices[from].held() {
            for _ in 0..draw.next() % 3 {
                batch.push(v.clone()); // 0, 1 or 2 copies
            }
        }
        for i in (1..batch.len()).rev() {
            batch.swap(i, (draw.next() % (i as u64 + 1)) as usize);
        }
        for (rec, v) in batch {
            self.devices[to].receive(rec, v);
        }
    }

    fn exchange_everything(&mut self) {
        let n = self.devices.len();
        self.group = vec![false; n];
        for _ in 0..2 {
            for from in 0..n {
                for to in 0..n {
                    let all = self.devices[from].held();
                    if from != to {
                        all.into_iter()
                            .for_each(|(rec, v)| self.devices[to].receive(rec, v));
                    }
                }
            }
        }
    }
}

/// What one run went through, so a test can check that the generated runs
/// reach the interesting cases.
#[derive(Debug, Default)]
struct Seen {
    conflicts: usize,
    concurrent_heads: usize,
    tombstone_wins: usize,
}

/// One run: the ops, then full exchange, then a resolution; checks every
/// property and says what the run went through.
fn run(n: usize, skews: &[u64], ops: Vec<Op>) -> Result<Seen, TestCaseError> {
    let mut world = World::new(n, skews);
    let mut written: Vec<BTreeSet<ItemId>> = vec![BTreeSet::new(); RECORDS];
    for op in ops {
        match op {
            Op::Edit { dev, rec, text } => {
                let v = world.write(dev % n, rec, Some(format!("text {text}")));
                written[rec].insert(v.id);
            }
            Op::Delete { dev, rec } => {
                let v = world.write(dev % n, rec, None);
                written[rec].insert(v.id);
            }
            Op::Split { mask } => {
                world.group = (0..n).map(|i| mask & (1 << i) != 0).collect();
            }
            Op::Send { from, to, seed } => world.send(from % n, to % n, seed),
        }
    }
    world.exchange_everything();

    let mut seen = Seen::default();
    let first = &world.devices[0];
    for (rec, ids) in written.iter().enumerate() {
        let r = &first.records[rec];
        let held: BTreeSet<ItemId> = r.versions().iter().map(|v| v.id).collect();
        prop_assert_eq!(&held, ids, "every version reached device 0");
        for d in &world.devices[1..] {
            let other = &d.records[rec];
            let theirs: BTreeSet<ItemId> = other.versions().iter().map(|v| v.id).collect();
            prop_assert_eq!(&theirs, ids);
            prop_assert_eq!(other.winner().map(|w| w.id), r.winner().map(|w| w.id));
        }
        // No head vanishes.
        if let Some(w) = r.winner() {
            let heads = r.heads();
            seen.concurrent_heads += usize::from(heads.len() > 1);
            seen.tombstone_wins += usize::from(heads.len() > 1 && w.deleted);
            for h in heads {
                let kept = h.id == w.id
                    || w.deleted
                    || h.deleted
                    || h.content == w.content
                    || first.conflicts.contains(&Conflict::of(h.id, w.id).key);
                prop_assert!(kept, "head {:?} lost to {:?} silently", h, w);
            }
        }
    }
    // The same conflicts everywhere, and what the state says they are.
    let from_state: BTreeSet<[u8; 16]> = first
        .records
        .iter()
        .flat_map(|r| r.conflicts())
        .map(|c| c.key)
        .collect();
    seen.conflicts = from_state.len();
    for d in &world.devices {
        prop_assert_eq!(&d.conflicts, &from_state);
    }

    // One device resolves every record; once everyone has it, it is the
    // only head everywhere and raises no new conflict.
    let resolutions: Vec<VersionRef> = (0..RECORDS)
        .map(|rec| world.write(0, rec, Some("resolved".into())))
        .collect();
    for d in &mut world.devices[1..] {
        for (rec, v) in resolutions.iter().enumerate() {
            let out = d.records[rec].insert(v.clone());
            prop_assert!(out.conflicts.is_empty());
            prop_assert_eq!(d.records[rec].heads(), vec![v]);
        }
    }
    Ok(seen)
}

fn skews() -> impl Strategy<Value = Vec<u64>> {
    prop::collection::vec(prop_oneof![Just(0u64), Just(10), Just(35)], DEVICES)
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(), 1..60)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_device_converges_and_no_edit_vanishes(
        n in 2usize..=DEVICES,
        skews in skews(),
        ops in ops(),
    ) {
        run(n, &skews, ops)?;
    }
}

/// The generated runs do reach conflicts, concurrent heads and winning
/// tombstones, so the property above is not passing on easy cases alone.
#[test]
fn the_runs_reach_conflicts_and_winning_tombstones() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut total = Seen::default();
    for _ in 0..200 {
        let (n, skews, ops) = (2usize..=DEVICES, skews(), ops())
            .new_tree(&mut runner)
            .unwrap()
            .current();
        let seen = run(n, &skews, ops).unwrap();
        total.conflicts += seen.conflicts;
        total.concurrent_heads += seen.concurrent_heads;
        total.tombstone_wins += seen.tombstone_wins;
    }
    assert!(total.conflicts > 500, "{total:?}");
    assert!(total.concurrent_heads > 100, "{total:?}");
    assert!(total.tombstone_wins > 20, "{total:?}");
}
