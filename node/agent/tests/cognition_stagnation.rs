//! Stagnation on a real SQLite file with the node's registry and a
//! scripted model: a stall answered by the cheapest strategy and rated
//! later, a restart in the middle of a strategy, and a run's pause bound
//! capping a strategy's pause.

mod core_support;

use std::time::Duration;

use core_support::*;
use porfiry_agent::cognition::wait::{PauseReason, WaitPlan};
use porfiry_agent::cognition::{CoreEvents, RATE_AFTER_TICKS, Trace};
use porfiry_storage::{DiaryEntry, ProcessEntry, Rating};

#[tokio::test]
async fn a_stall_takes_the_cheapest_strategy_first_and_rates_it_later() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    // A diary entry for the flashback to bring back.
    db.write(|s| {
        s.add(
            &DiaryEntry {
                text: "the first day: the family set up the node".into(),
                ..Default::default()
            },
            1,
        )
    })
    .await
    .unwrap()
    .unwrap();
    let main = thinker("main", "Round and round.");
    let clock = clock();
    let mut core = quiet_core(&db, ScriptMaker::default().with(main), clock.clone()).await;
    let applied = |db: porfiry_storage::db::Db| async move {
        read(&db, |s| {
            all::<ProcessEntry>(s)
                .into_iter()
                .filter(|p| p.row.name == "stagnation_strategy")
                .collect::<Vec<_>>()
        })
        .await
    };
    let strategy_ratings = |db: porfiry_storage::db::Db| async move {
        read(&db, |s| {
            all::<Rating>(s)
                .into_iter()
                .filter(|r| r.row.target.starts_with("stagnation_strategies:"))
                .collect::<Vec<_>>()
        })
        .await
    };
    let mut applied_at = None;
    for tick in 1..=12u64 {
        clock.advance_ms(60_000);
        core.tick().await.unwrap();
        let rows = applied(db.clone()).await;
        if applied_at.is_none() && !rows.is_empty() {
            applied_at = Some((tick, rows[0].clone()));
        }
        if let Some((at, _)) = &applied_at
            && tick < at + RATE_AFTER_TICKS
        {
            assert!(
                strategy_ratings(db.clone()).await.is_empty(),
                "rated at tick {tick}, before its {RATE_AFTER_TICKS} ticks passed"
            );
        }
        if applied_at
            .as_ref()
            .is_some_and(|(at, _)| tick == at + RATE_AFTER_TICKS)
        {
            break;
        }
    }
    let (tick, first) = applied_at.expect("repeated replies are a stall");
    // Tick 1 is new; tick 2 repeats it: stagnation is found and the seed's
    // algorithm acts at once (seed 003: "Стагнация выявлена? → да"), with
    // one strategy, not waiting for the stall to escalate.
    assert_eq!(tick, 2, "the first tick that found stagnation");
    let strategy_id = first.row.command["strategy"].as_i64().unwrap();
    let strategies = read(&db, all::<porfiry_storage::StagnationStrategy>).await;
    let chosen = strategies.iter().find(|x| x.id == strategy_id).unwrap();
    let cheapest = strategies.iter().map(|x| x.row.cost).min().unwrap();
    assert_eq!(
        chosen.row.cost, cheapest,
        "the first applied is the cheapest of all strategies, not only of its class"
    );
    assert_eq!(
        chosen.row.class, "internal_restructuring",
        "repeated thoughts → internal restructuring (seed's diagnosis)"
    );
    assert!(
        first
            .row
            .result
            .as_deref()
            .unwrap()
            .contains("flashback to diary #1")
    );
    let ratings = strategy_ratings(db.clone()).await;
    assert_eq!(ratings.len(), 1, "{ratings:?}");
    let rating = &ratings[0].row;
    assert_eq!(
        rating.target,
        format!("stagnation_strategies:{strategy_id}")
    );
    assert!(rating.comment.contains("(3 ticks)"), "{}", rating.comment);
    assert!(
        rating.score < 0,
        "the replies stayed the same after it: rated down, got {}",
        rating.score
    );
}

#[tokio::test]
async fn a_restart_mid_strategy_goes_on_and_still_rates_the_strategy() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let main = thinker("main", "Round and round.");
    let clock = clock();
    let strategies = |db: porfiry_storage::db::Db| async move {
        read(&db, |s| {
            all::<ProcessEntry>(s)
                .into_iter()
                .filter(|p| p.row.name == "stagnation_strategy")
                .count()
        })
        .await
    };
    let mut core = quiet_core(
        &db,
        ScriptMaker::default().with(main.clone()),
        clock.clone(),
    )
    .await;
    let mut applied_tick = None;
    for _ in 0..12 {
        clock.advance_ms(60_000);
        let done = core.tick().await.unwrap();
        if strategies(db.clone()).await > 0 {
            applied_tick = Some(done.report.tick);
            break;
        }
    }
    let applied_tick = applied_tick.expect("the stall escalated");
    let first = read(&db, |s| {
        all::<ProcessEntry>(s)
            .into_iter()
            .find(|p| p.row.name == "stagnation_strategy")
            .unwrap()
    })
    .await;
    let id = first.row.command["strategy"].as_i64().unwrap();
    // The OS kills the node: a new core on the same file.
    drop(core);
    let mut core = quiet_core(&db, ScriptMaker::default().with(main), clock.clone()).await;
    assert_eq!(core.next_tick(), applied_tick + 1);
    for _ in 0..3 {
        clock.advance_ms(60_000);
        core.tick().await.unwrap();
    }
    // Forgotten state would start the stall from 0 (escalating again only
    // at the third tick, rated three later): the rating now is the pending
    // one from before the restart.
    let ratings = read(&db, all::<Rating>).await;
    let target = format!("stagnation_strategies:{id}");
    let rating = ratings
        .iter()
        .find(|r| r.row.target == target)
        .unwrap_or_else(|| panic!("no rating for {target}: {ratings:?}"));
    assert!(
        rating.row.comment.contains("(3 ticks)"),
        "{}",
        rating.row.comment
    );
}

/// Ticks a model that repeats itself until the radical-pause strategy
/// applies, planning the wait after each tick; the plans, in order.
async fn plans_of_a_stall(pause_secs: Option<u64>) -> Vec<WaitPlan> {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let clock = clock();
    let mut core = core_with_pause(
        &db,
        ScriptMaker::default().with(thinker("main", "Round and round.")),
        "main",
        clock.clone(),
        CoreEvents::new(),
        Trace::off(),
        pause_secs,
    )
    .await;
    let mut plans = Vec::new();
    for _ in 0..16 {
        clock.advance_ms(60_000);
        core.tick().await.unwrap();
        plans.push(core.plan_wait().await.unwrap());
    }
    plans
}

#[tokio::test]
async fn a_runs_pause_bound_caps_the_strategy_pause_and_says_so() {
    let free = plans_of_a_stall(None).await;
    let slept = free
        .iter()
        .find(|p| {
            matches!(
                p,
                WaitPlan::Pause {
                    reason: PauseReason::Strategy { .. },
                    ..
                }
            )
        })
        .expect("a long stall reaches the radical pause");
    let WaitPlan::Pause { length, .. } = slept else {
        unreachable!()
    };
    assert!(*length >= Duration::from_secs(1_800), "{slept:?}");
    assert!(slept.notice().unwrap().contains("long-pause strategy"));

    let bounded = plans_of_a_stall(Some(0)).await;
    for plan in &bounded {
        let WaitPlan::Pause { length, .. } = plan else {
            panic!("{plan:?}")
        };
        assert_eq!(*length, Duration::ZERO, "--pause-secs 0 caps {plan:?}");
    }
    let capped = bounded
        .iter()
        .find(|p| {
            matches!(
                p,
                WaitPlan::Pause {
                    reason: PauseReason::Strategy { capped: true, .. },
                    ..
                }
            )
        })
        .expect("the strategy still applied, cut short");
    assert!(capped.notice().unwrap().contains("capped by --pause-secs"));
}
