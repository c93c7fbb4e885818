//! What reaches the prompt from the database across ticks, on a real
//! SQLite file with the node's registry and a scripted model: finished
//! processes shown once and then closed (running ones stay), pinned and
//! requested records in context 3, the auto-mode note filter applied in
//! SQL, and raised sampling applied for its ticks and then restored.

mod core_support;

use std::sync::{Arc, Mutex};

use core_support::*;
use porfiry_agent::cognition::models::ModelMaker;
use porfiry_agent::cognition::{CoreEvents, Trace};
use porfiry_skills::cognition::strategy::Mechanism;
use porfiry_skills::cognition::{CycleSettings, NoteFilter, NotesMode};
use porfiry_skills::llm::{Llm, LlmError, ModelRequest};
use porfiry_skills::{Clock, Language};
use porfiry_storage::{
    Concept, DiaryEntry, LlmEntry, Note, NoteSource, ProcessEntry, ProcessStatus,
};

#[tokio::test]
async fn a_finished_process_is_shown_once_then_closed_and_a_running_one_stays() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let (main, prompts) = scripted(&[
        "Noting it.\nTOOL_CALL: diary_add|a first note",
        "Seen the result.",
        "Next.",
    ]);
    let clock = start_clock();
    let mut core = core_of(&db, main, &clock).await;
    // Started after the core: one left running from before is an orphan
    // the start closes.
    let running = db
        .write(|s| {
            let job = ProcessEntry {
                name: "long_job".into(),
                status: ProcessStatus::Warning,
                ..Default::default()
            };
            s.add(&job, 1).unwrap()
        })
        .await
        .unwrap();
    for _ in 0..3 {
        clock.advance_ms(1_000);
        core.tick().await.unwrap();
    }
    let prompts = prompts.lock().unwrap().clone();
    let added = db
        .read(|s| {
            all::<ProcessEntry>(s)
                .into_iter()
                .find(|p| p.row.name == "diary_add")
                .unwrap()
        })
        .await
        .unwrap();
    let shown = format!("#{} diary_add [ok]", added.id);
    assert!(!prompts[0].contains(&shown), "not yet run: {}", prompts[0]);
    assert!(
        prompts[1].contains(&shown),
        "shown the tick after: {}",
        prompts[1]
    );
    assert!(
        !prompts[2].contains(&shown),
        "closed once shown: {}",
        prompts[2]
    );
    let long = format!("#{running} long_job [running]");
    assert!(
        prompts.iter().all(|p| p.contains(&long)),
        "a running one stays"
    );
    let statuses = db
        .read(move |s| {
            (
                s.get::<ProcessEntry>(added.id).unwrap().row.status,
                s.get::<ProcessEntry>(running).unwrap().row.status,
            )
        })
        .await
        .unwrap();
    assert_eq!(statuses, (ProcessStatus::Close, ProcessStatus::Warning));
}

#[tokio::test]
async fn a_failed_model_call_closes_nothing_it_never_saw_answered() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let done = db
        .write(|s| {
            let job = ProcessEntry {
                name: "finished_job".into(),
                status: ProcessStatus::Ok,
                result: Some("42".into()),
                ..Default::default()
            };
            s.add(&job, 1).unwrap()
        })
        .await
        .unwrap();
    let down = ScriptLlm::new("main", |_| Err(LlmError::NoModel("down".into())));
    let mut core = core_of(&db, down, &start_clock()).await;
    core.tick().await.unwrap();
    let status = db
        .read(move |s| s.get::<ProcessEntry>(done).unwrap().row.status)
        .await
        .unwrap();
    assert_eq!(
        status,
        ProcessStatus::Ok,
        "the model never answered about it"
    );
}

/// Context 3 of a tick's user message.
fn context_3(p: &str) -> String {
    let from = p.find("## 3.").unwrap();
    let to = p.find("## 4.").unwrap();
    p[from..to].to_owned()
}

#[tokio::test]
async fn pinned_and_requested_records_reach_context_3_from_the_database() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let (pinned, asked_for, other) = db
        .write(|s| {
            let diary = |text: &str, pinned| DiaryEntry {
                text: text.into(),
                pinned,
                ..Default::default()
            };
            let pinned = s.add(&diary("kept in view: trust", true), 1).unwrap();
            let asked = s.add(&diary("read on request: relays", false), 1).unwrap();
            let other = s.add(&diary("never asked for: weather", false), 1).unwrap();
            s.add(
                &Concept {
                    name: "mesh".into(),
                    description: "friends linked to friends".into(),
                    pinned: true,
                    ..Default::default()
                },
                1,
            )
            .unwrap();
            (pinned, asked, other)
        })
        .await
        .unwrap();
    let read_it = format!("TOOL_CALL: diary_read|{asked_for}");
    let (main, prompts) = scripted(&[&read_it, "Thinking on."]);
    let mut core = core_of(&db, main, &start_clock()).await;
    core.tick().await.unwrap();
    core.tick().await.unwrap();
    let prompts = prompts.lock().unwrap().clone();
    let first = context_3(&prompts[0]);
    assert!(
        first.contains("kept in view: trust") && first.contains("mesh"),
        "{first}"
    );
    assert!(!first.contains("relays"), "not asked for yet: {first}");
    let second = context_3(&prompts[1]);
    for want in [
        "kept in view: trust",
        "friends linked to friends",
        "read on request: relays",
    ] {
        assert!(second.contains(want), "{want:?} missing: {second}");
    }
    assert!(!second.contains("weather"), "{second}");
    assert!(second.contains(&format!("#{pinned}")) && !second.contains(&format!("#{other}")));
}

#[tokio::test]
async fn records_read_by_name_or_in_a_block_reach_context_3() {
    // Issue 42, seed 003 #7: only a leading id was once understood.
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let by_block = db
        .write(|s| {
            let concept = |name: &str, description: &str| Concept {
                name: name.into(),
                description: description.into(),
                ..Default::default()
            };
            s.add(&concept("relays", "hops between friends"), 1)
                .unwrap();
            s.add(&concept("quorum", "enough friends agree"), 1)
                .unwrap()
        })
        .await
        .unwrap();
    let block = format!(
        "Reading.\n# Commands:\n{{\"cmd_id\": \"c1\", \"type\": \"concepts_read\", \
         \"args\": {{\"concept\": {by_block}}}, \"description\": \"read it\"}}\n# End of commands"
    );
    let (main, prompts) = scripted(&["TOOL_CALL: concepts_read|relays", &block, "Thinking on."]);
    let mut core = core_of(&db, main, &start_clock()).await;
    for _ in 0..3 {
        core.tick().await.unwrap();
    }
    let prompts = prompts.lock().unwrap().clone();
    let second = context_3(&prompts[1]);
    assert!(second.contains("hops between friends"), "{second}");
    let third = context_3(&prompts[2]);
    assert!(
        third.contains("hops between friends") && third.contains("enough friends agree"),
        "{third}"
    );
}

#[tokio::test]
async fn the_auto_mode_filter_picks_notes_in_sql_by_tag_priority_age_and_source() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let clock = start_clock();
    let now = clock.now().unix_ms();
    let wanted = db
        .write(move |s| {
            set_cycle(
                s,
                CycleSettings {
                    notes: NotesMode::Auto {
                        filter: NoteFilter {
                            tags: vec!["mesh".into()],
                            min_priority: Some(1),
                            max_age_secs: Some(3_600),
                            sources: vec!["user".into()],
                            mentions: Vec::new(),
                        },
                    },
                    ..Default::default()
                },
                now,
            );
            let note = |text: &str, tags: &[&str], priority, source| Note {
                text: text.into(),
                hashtags: tags.iter().map(|t| (*t).to_owned()).collect(),
                priority,
                source,
                ..Default::default()
            };
            let hour_and_more = now - 3_601_000;
            let wanted = s
                .add(
                    &note("WANTED relays are full", &["mesh"], 2, NoteSource::User),
                    now,
                )
                .unwrap();
            s.add(&note("OFFTOPIC cake", &["food"], 2, NoteSource::User), now)
                .unwrap();
            s.add(&note("LOWKEY mesh", &["mesh"], 0, NoteSource::User), now)
                .unwrap();
            s.add(
                &note("SYSTEMIC mesh", &["mesh"], 2, NoteSource::System),
                now,
            )
            .unwrap();
            s.add(
                &note("STALE mesh", &["mesh"], 2, NoteSource::User),
                hour_and_more,
            )
            .unwrap();
            wanted
        })
        .await
        .unwrap();
    let (main, prompts) = scripted(&["Reading."]);
    let mut core = core(
        &db,
        ScriptMaker::default().with(main),
        "main",
        clock,
        CoreEvents::new(),
        Trace::off(),
    )
    .await;
    core.tick().await.unwrap();
    let prompt = prompts.lock().unwrap()[0].clone();
    let from = prompt.find("## 4.").unwrap();
    let context_4 = &prompt[from..prompt.find("## 5.").unwrap()];
    assert!(
        context_4.contains(&format!("#{wanted} p2 user")),
        "{context_4}"
    );
    assert!(context_4.contains("WANTED"), "{context_4}");
    for left_out in ["OFFTOPIC", "LOWKEY", "SYSTEMIC", "STALE"] {
        assert!(!context_4.contains(left_out), "{left_out}: {context_4}");
    }
}

#[tokio::test]
async fn the_auto_mode_filter_by_mentions_shows_only_the_notes_naming_them() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let clock = start_clock();
    let now = clock.now().unix_ms();
    db.write(move |s| {
        set_cycle(
            s,
            CycleSettings {
                notes: NotesMode::Auto {
                    filter: NoteFilter {
                        mentions: vec!["anna".into()],
                        ..Default::default()
                    },
                },
                ..Default::default()
            },
            now,
        );
        let note = |text: &str, mentions: &[&str]| Note {
            text: text.into(),
            mentions: mentions.iter().map(|m| (*m).to_owned()).collect(),
            source: NoteSource::User,
            ..Default::default()
        };
        s.add(&note("NAMED @anna, the bread is ready", &["anna"]), now)
            .unwrap();
        s.add(&note("UNNAMED the bread is ready", &[]), now)
            .unwrap();
        s.add(&note("OTHER @bob, the bread is ready", &["bob"]), now)
            .unwrap();
    })
    .await
    .unwrap();
    let (main, prompts) = scripted(&["Reading."]);
    let mut core = core_of(&db, main, &clock).await;
    core.tick().await.unwrap();
    let prompt = prompts.lock().unwrap()[0].clone();
    let from = prompt.find("## 4.").unwrap();
    let context_4 = &prompt[from..prompt.find("## 5.").unwrap()];
    assert!(context_4.contains("NAMED @anna"), "{context_4}");
    assert!(
        !context_4.contains("UNNAMED") && !context_4.contains("OTHER"),
        "{context_4}"
    );
    assert!(
        prompt.contains("filter mentioning anna"),
        "the mode line says so: {prompt}"
    );
}

#[tokio::test]
async fn the_auto_mode_leaves_out_the_cores_own_notes_but_not_a_friends_core_notes() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let clock = start_clock();
    let now = clock.now().unix_ms();
    let filter = |sources: &[&str]| NotesMode::Auto {
        filter: NoteFilter {
            tags: vec!["mesh".into()],
            sources: sources.iter().map(|s| (*s).to_owned()).collect(),
            ..Default::default()
        },
    };
    let auto = filter(&[]);
    db.write(move |s| {
        set_cycle(
            s,
            CycleSettings {
                notes: auto,
                ..Default::default()
            },
            now,
        );
        let note = |text: &str, origin_author: Option<String>| Note {
            text: text.into(),
            hashtags: vec!["mesh".into()],
            source: NoteSource::Llm,
            // A merged note names the item it came from.
            origin_item_id: origin_author
                .as_ref()
                .map(|_| porfiry_protocol::ItemId([7; 32])),
            origin_author,
            ..Default::default()
        };
        s.add(&note("OWNTHOUGHT on relays", None), now).unwrap();
        let friend = "12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN".to_owned();
        s.add(&note("FRIENDCORE on relays", Some(friend)), now)
            .unwrap();
    })
    .await
    .unwrap();
    let (main, prompts) = scripted(&["Reading.", "Reading again."]);
    let mut core = core_of(&db, main, &clock).await;
    core.tick().await.unwrap();
    let context_4 = |prompt: &str| {
        let from = prompt.find("## 4.").unwrap();
        prompt[from..prompt.find("## 5.").unwrap()].to_owned()
    };
    let first = context_4(&prompts.lock().unwrap()[0]);
    assert!(first.contains("FRIENDCORE"), "{first}");
    assert!(!first.contains("OWNTHOUGHT"), "{first}");

    let own = filter(&["llm"]);
    db.write(move |s| {
        set_cycle(
            s,
            CycleSettings {
                notes: own,
                ..Default::default()
            },
            now,
        )
    })
    .await
    .unwrap();
    core.tick().await.unwrap();
    let second = context_4(&prompts.lock().unwrap()[1]);
    assert!(
        second.contains("OWNTHOUGHT"),
        "a filter naming llm asks for them: {second}"
    );
}

/// (temperature, presence_penalty) of the row behind each main call.
type Sampling = (Option<f64>, Option<f64>);

/// Every main call's sampling, in order.
type Calls = Arc<Mutex<Vec<Sampling>>>;

/// Hands out clients that note the sampling of their row on every main call.
struct SamplingMaker {
    llm: Arc<ScriptLlm>,
    calls: Calls,
}

/// A client built for one row: notes the row's sampling, then answers as
/// the scripted model does.
struct Sampled {
    llm: Arc<ScriptLlm>,
    sampling: Sampling,
    calls: Calls,
}

impl Llm for Sampled {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> porfiry_skills::llm::BoxFuture<'a, Result<porfiry_skills::llm::Completion, LlmError>> {
        if is_main_call(request, Language::En) {
            self.calls.lock().unwrap().push(self.sampling);
        }
        self.llm.complete(request)
    }

    fn model_name(&self) -> String {
        self.llm.model_name()
    }
}

impl ModelMaker for SamplingMaker {
    fn make(&self, entry: &LlmEntry) -> Result<Arc<dyn Llm>, LlmError> {
        Ok(Arc::new(Sampled {
            llm: self.llm.clone(),
            sampling: (entry.config.temperature, entry.config.presence_penalty),
            calls: self.calls.clone(),
        }))
    }
}

#[tokio::test]
async fn raised_sampling_lasts_its_ticks_and_the_models_own_values_return() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    // Only the tuning strategy is left, so the stall must choose it.
    keep_only_strategy(&db, Mechanism::TuneSampling).await;
    let (main, _) = scripted(&["Round and round."]);
    let calls = Arc::new(Mutex::new(Vec::new()));
    let maker = SamplingMaker {
        llm: main,
        calls: calls.clone(),
    };
    let clock = start_clock();
    let mut core = core_from(
        &db,
        Arc::new(maker),
        "main",
        clock.clone(),
        Setup::default(),
    )
    .await;
    for _ in 0..10 {
        clock.advance_ms(60_000);
        core.tick().await.unwrap();
    }
    let sampling = calls.lock().unwrap().clone();
    // Ticks 1-2 as configured; tick 2 repeats tick 1, stagnation is found
    // and tuning lasts TUNE_TICKS (3): ticks 3, 4, 5; from tick 6 the
    // model's own.
    let tuned = (Some(0.7 + 0.4), Some(0.6));
    let own = (None, None);
    assert_eq!(
        sampling,
        [own, own, tuned, tuned, tuned, own, own, own, own, own]
    );
    let applied = db
        .read(|s| {
            all::<ProcessEntry>(s)
                .into_iter()
                .filter(|p| p.row.name == "stagnation_strategy")
                .count()
        })
        .await
        .unwrap();
    assert_eq!(applied, 1);
}

#[tokio::test]
async fn a_task_switch_freezes_the_task_and_returns_to_it_with_a_reminder() {
    use porfiry_storage::Task;
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    keep_only_strategy(&db, Mechanism::TaskSwitch).await;
    let (focus, other) = db
        .write(|s| {
            let task = |title: &str, pinned| Task {
                title: title.into(),
                pinned,
                ..Default::default()
            };
            (
                s.add(&task("map the relays", true), 1).unwrap(),
                s.add(&task("tidy the notes", false), 1).unwrap(),
            )
        })
        .await
        .unwrap();
    // The same reply and command each tick: a monotone context, which
    // the seed answers with a context switch.
    let (main, prompts) = scripted(&["Round and round.\nTOOL_CALL: tasks_list"]);
    let clock = start_clock();
    let mut core = core_of(&db, main, &clock).await;
    let pins = |db: porfiry_storage::db::Db| async move {
        db.read(move |s| {
            (
                s.get::<Task>(focus).unwrap().row.pinned,
                s.get::<Task>(other).unwrap().row.pinned,
            )
        })
        .await
        .unwrap()
    };
    for _ in 0..4 {
        clock.advance_ms(60_000);
        core.tick().await.unwrap();
    }
    assert_eq!(
        pins(db.clone()).await,
        (false, true),
        "switched on the stall"
    );
    // Within the two hours it stays switched.
    clock.advance_ms(3_600_000);
    core.tick().await.unwrap();
    assert_eq!(pins(db.clone()).await, (false, true));
    clock.advance_ms(3_600_000);
    core.tick().await.unwrap();
    assert_eq!(
        pins(db.clone()).await,
        (true, false),
        "back to the frozen task"
    );
    core.tick().await.unwrap();
    let last = prompts.lock().unwrap().last().unwrap().clone();
    assert!(
        last.contains("Back to your task: \"map the relays\" is pinned again"),
        "the automatic reminder: {last}"
    );
}
