//! The seven anti-stagnation mechanisms no other test applied (issue 42):
//! ask_friends, interest_memory, rationale, goal_reformulation,
//! switch_model, random_action and ask_user — each the only strategy left,
//! chosen by a real stall (the same reply and command every tick on a
//! quiet node) on a real SQLite file, and each checked by what it does:
//! the note it posts, the hint in the next prompt, the model that answers.

mod core_support;

use std::sync::{Arc, Mutex};

use core_support::*;
use porfiry_agent::cognition::asker::KeyAsker;
use porfiry_agent::cognition::{CognitiveCore, CoreEvents, Trace};
use porfiry_protocol::NodeKey;
use porfiry_skills::ManualClock;
use porfiry_skills::cognition::strategy::Mechanism;
use porfiry_storage::db::Db;
use porfiry_storage::{Goal, Note, NoteSource, ProcessEntry};

/// The same reply and command every tick: a repeat on tick 2, a streak on
/// tick 3, a quiet world after ten: every class of the seed's diagnosis is
/// reached within [`TICKS`].
const MONOTONE: &str = "Round and round.\nTOOL_CALL: tasks_list";

/// Ticks each test runs: past the quiet-world detector (10) and the
/// escalation, so whatever class the strategy is of, it is chosen.
const TICKS: usize = 14;

async fn run(core: &mut CognitiveCore, clock: &ManualClock) {
    for _ in 0..TICKS {
        clock.advance_ms(60_000);
        core.tick().await.unwrap();
    }
}

/// The first main-call prompt (1-based) holding `needle`.
fn first_with(prompts: &Mutex<Vec<String>>, needle: &str) -> Option<usize> {
    prompts
        .lock()
        .unwrap()
        .iter()
        .position(|p| p.contains(needle))
        .map(|i| i + 1)
}

/// What the strategy rows say it did.
async fn applied(db: &Db) -> Vec<String> {
    read(db, |s| {
        all::<ProcessEntry>(s)
            .into_iter()
            .filter(|p| p.row.name == "stagnation_strategy")
            .filter_map(|p| p.row.result)
            .collect()
    })
    .await
}

/// A core on a fresh node keeping only `mechanism`, thinking with `main`.
async fn only(mechanism: Mechanism, dir: &std::path::Path) -> (Db, ManualClock) {
    let db = fresh_db(dir);
    keep_only_strategy(&db, mechanism).await;
    (db, start_clock())
}

#[tokio::test]
async fn ask_friends_posts_a_signed_note_to_friends_and_says_where_answers_come() {
    let tmp = tempfile::tempdir().unwrap();
    let (db, clock) = only(Mechanism::AskFriends, tmp.path()).await;
    let (main, prompts) = scripted(&[MONOTONE]);
    let setup = Setup {
        asker: Some(Arc::new(KeyAsker::new(
            db.clone(),
            NodeKey::from_seed([5; 32]),
        ))),
        ..Setup::default()
    };
    let maker = Arc::new(ScriptMaker::default().with(main));
    let mut core = core_from(&db, maker, "main", clock.clone(), setup).await;
    run(&mut core, &clock).await;
    let asked = read(&db, |s| {
        all::<Note>(s)
            .into_iter()
            .filter(|n| n.row.text.contains("Tell me something new"))
            .collect::<Vec<_>>()
    })
    .await;
    assert!(!asked.is_empty(), "{:?}", applied(&db).await);
    assert_eq!(asked[0].row.source, NoteSource::Llm);
    assert!(first_with(&prompts, "you asked your friends for something new").is_some());
}

#[tokio::test]
async fn interest_memory_names_the_tag_untouched_longest() {
    let tmp = tempfile::tempdir().unwrap();
    let (db, clock) = only(Mechanism::InterestMemory, tmp.path()).await;
    db.write(|s| {
        let entry = |text: &str, tag: &str| porfiry_storage::DiaryEntry {
            text: text.into(),
            tags: vec![tag.into()],
            ..Default::default()
        };
        s.add(&entry("sourdough needs warmth", "baking"), 10)
            .unwrap();
        s.add(&entry("relays in the attic", "mesh"), 20).unwrap();
    })
    .await
    .unwrap();
    let (main, prompts) = scripted(&[MONOTONE]);
    let mut core = core_of(&db, main, &clock).await;
    run(&mut core, &clock).await;
    assert!(
        first_with(&prompts, "you have not returned to the topic #baking").is_some(),
        "{:?}",
        applied(&db).await
    );
}

#[tokio::test]
async fn rationale_and_ask_user_put_their_questions_into_the_next_prompt() {
    for (mechanism, hint) in [
        (
            Mechanism::Rationale,
            "why did I take exactly this decision?",
        ),
        (
            Mechanism::AskUser,
            "ask the user a question or their opinion",
        ),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let (db, clock) = only(mechanism, tmp.path()).await;
        let (main, prompts) = scripted(&[MONOTONE]);
        let mut core = core_of(&db, main, &clock).await;
        run(&mut core, &clock).await;
        let at = first_with(&prompts, hint);
        assert!(at.is_some(), "{mechanism:?}: {:?}", applied(&db).await);
        assert!(at > Some(1), "{mechanism:?}: only after a stall");
    }
}

#[tokio::test]
async fn goal_reformulation_names_the_open_goal_of_highest_priority() {
    let tmp = tempfile::tempdir().unwrap();
    let (db, clock) = only(Mechanism::GoalReformulation, tmp.path()).await;
    db.write(|s| {
        let goal = |title: &str, priority| Goal {
            title: title.into(),
            priority,
            ..Default::default()
        };
        s.add(&goal("tidy the shed", 1), 10).unwrap();
        s.add(&goal("teach grandma the family page", 3), 20)
            .unwrap();
    })
    .await
    .unwrap();
    let (main, prompts) = scripted(&[MONOTONE]);
    let mut core = core_of(&db, main, &clock).await;
    run(&mut core, &clock).await;
    assert!(
        first_with(
            &prompts,
            "simplify or sharpen the goal \"teach grandma the family page\""
        )
        .is_some(),
        "{:?}",
        applied(&db).await
    );
}

#[tokio::test]
async fn switch_model_lets_another_registry_model_think_for_a_few_ticks() {
    let tmp = tempfile::tempdir().unwrap();
    let (db, clock) = only(Mechanism::SwitchModel, tmp.path()).await;
    db.write(|s| s.add(&entry("second"), 10).unwrap())
        .await
        .unwrap();
    let (main, _) = scripted(&[MONOTONE]);
    let second = thinker("second", "A fresh angle on the relays.");
    let maker = ScriptMaker::default()
        .with(main.clone())
        .with(second.clone());
    let mut core = core_with_pause(
        &db,
        maker,
        "main",
        clock.clone(),
        CoreEvents::new(),
        Trace::off(),
        Some(0),
    )
    .await;
    run(&mut core, &clock).await;
    let switched = second
        .seen()
        .iter()
        .filter(|r| is_main_call(r, porfiry_skills::Language::En))
        .count();
    assert!(switched >= 1, "{:?}", applied(&db).await);
    assert!(
        second.seen().iter().any(|r| r.messages[0]
            .content
            .contains("this tick thinks with another model, second")),
        "the switched tick is told"
    );
    assert!(
        applied(&db)
            .await
            .iter()
            .any(|a| a.contains("switched to second"))
    );
}

#[tokio::test]
async fn random_action_runs_a_read_command_and_shows_its_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let (db, clock) = only(Mechanism::RandomAction, tmp.path()).await;
    let (main, prompts) = scripted(&[MONOTONE]);
    let mut core = core_of(&db, main, &clock).await;
    run(&mut core, &clock).await;
    let at = first_with(&prompts, "Anti-stagnation (random step): the core ran ");
    assert!(at.is_some(), "{:?}", applied(&db).await);
    let prompt = prompts.lock().unwrap()[at.unwrap() - 1].clone();
    assert!(prompt.contains("It answered: "), "{prompt}");
    let done = applied(&db).await;
    assert!(done.iter().any(|a| a.contains("ran ")), "{done:?}");
}
