//! The anti-stagnation mechanisms the seed names beside the first twelve,
//! each on a real SQLite file with the node's registry and a scripted model,
//! chosen by a real stall: the check of the outside world (a friend's new
//! note, a feed fetched from a real loopback HTTP server under the URL
//! allow-list, one outside it refused), new material read and marked, the
//! change of setting (the other notes mode for its ticks, then back), the
//! creative intervention, and replies compared by embeddings where the
//! model has them.

mod core_support;

use std::sync::{Arc, Mutex};

use core_support::*;
use porfiry_agent::cognition::{CORE_FEEDS_KEY, CoreEvent, CoreEvents, READING_TAG, Trace};
use porfiry_skills::cognition::strategy::Mechanism;
use porfiry_skills::cognition::{CYCLE_CONFIG_KEY, CycleSettings, NotesMode};
use porfiry_skills::llm::{BoxFuture, Completion, Llm, LlmError, ModelRequest};
use porfiry_skills::{Clock, ManualClock};
use porfiry_storage::db::Db;
use porfiry_storage::{Concept, Note, NoteSource, ProcessEntry, ProcessStatus};
use porfiry_toolsets::acting::PROCESS_ALLOW_URLS_KEY;

/// The same reply every tick, no command: after ten ticks without a note
/// the world is quiet (the seed's "no new data"), so the stall asks for
/// external stimulation.
const QUIET: &str = "Round and round.";

/// The same reply and command every tick: a monotone context, which the
/// seed answers with a change of context.
const MONOTONE: &str = "Round and round.\nTOOL_CALL: tasks_list";

const RSS: &str = r#"<?xml version="1.0"?><rss version="2.0"><channel><title>Village news</title>
<item><title>The new bridge opens</title><link>http://example.invalid/bridge</link></item>
</channel></rss>"#;

/// Serves [`RSS`] at `/feed` and a page at `/other` on a loopback port.
async fn feed_server() -> String {
    use axum::Router;
    use axum::routing::get;
    let app = Router::new()
        .route(
            "/feed",
            get(|| async { ([("content-type", "application/rss+xml")], RSS) }),
        )
        .route("/other", get(|| async { "not for the core" }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

async fn ticks(core: &mut porfiry_agent::cognition::CognitiveCore, clock: &ManualClock, n: usize) {
    for _ in 0..n {
        clock.advance_ms(60_000);
        core.tick().await.unwrap();
    }
}

/// The main calls' prompts that hold `needle`.
fn prompts_with(prompts: &Mutex<Vec<String>>, needle: &str) -> Vec<usize> {
    prompts
        .lock()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, p)| p.contains(needle))
        .map(|(i, _)| i + 1)
        .collect()
}

/// A note a friend wrote an hour before `clock`'s start, so it is not a
/// stimulus of any tick but is new to the first world check.
fn friends_note(text: &str) -> Note {
    // A merged note names the item it came from; any distinct id will do.
    static NEXT: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(1);
    let first = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Note {
        text: text.into(),
        origin_author: Some("12D3KooWFriendAnna".into()),
        origin_item_id: Some(porfiry_protocol::ItemId([first; 32])),
        source: NoteSource::User,
        ..Default::default()
    }
}

fn an_hour_before(clock: &ManualClock) -> u64 {
    clock.now().unix_ms() - 3_600_000
}

#[tokio::test]
async fn the_world_check_shows_friends_notes_and_fetches_only_allowed_feeds() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    keep_only_strategy(&db, Mechanism::WorldCheck).await;
    let base = feed_server().await;
    let clock = start_clock();
    let before = an_hour_before(&clock);
    let (allowed_feed, refused) = (format!("{base}/feed"), format!("{base}/other"));
    let (feeds, allow) = (
        vec![allowed_feed.clone(), refused.clone()],
        vec![format!("{base}/feed")],
    );
    db.write(move |s| {
        s.add(
            &friends_note("Anna: the river flooded the lower field"),
            before,
        )
        .unwrap();
        s.config_set(CORE_FEEDS_KEY, &feeds, before).unwrap();
        s.config_set(PROCESS_ALLOW_URLS_KEY, &allow, before)
            .unwrap();
    })
    .await
    .unwrap();
    let (main, prompts) = scripted(&[QUIET]);
    let events = CoreEvents::new();
    let mut finished = events.subscribe();
    let mut core = core(
        &db,
        ScriptMaker::default().with(main),
        "main",
        clock.clone(),
        events,
        Trace::off(),
    )
    .await;
    ticks(&mut core, &clock, 11).await;
    // Ten quiet ticks (the first counts its start as a stimulus): the
    // check applies after tick 11 and its hint is in tick 12's prompt.
    assert!(prompts_with(&prompts, "check of the outside world").is_empty());
    ticks(&mut core, &clock, 1).await;
    let prompt = prompts.lock().unwrap()[11].clone();
    assert!(
        prompt.contains("Anti-stagnation (check of the outside world)"),
        "{prompt}"
    );
    assert!(
        prompt.contains("the river flooded the lower field"),
        "{prompt}"
    );
    assert!(
        prompt.contains(&format!("fetches {allowed_feed}")),
        "{prompt}"
    );
    // The feed's text lands in its process row; the page outside the
    // allow-list was never fetched.
    let id = loop {
        match tokio::time::timeout(std::time::Duration::from_secs(30), finished.recv())
            .await
            .expect("the fetch finished")
            .unwrap()
        {
            CoreEvent::ProcessFinished { id } => break id,
            _ => continue,
        }
    };
    let (row, fetched) = db
        .read(move |s| {
            let rows = all::<ProcessEntry>(s);
            let fetched: Vec<String> = rows
                .iter()
                .filter(|p| p.row.command["type"] == "process_fetch")
                .map(|p| p.row.command["url"].as_str().unwrap().to_owned())
                .collect();
            (s.get::<ProcessEntry>(id).unwrap().row, fetched)
        })
        .await
        .unwrap();
    assert_eq!(fetched, [allowed_feed]);
    // `ok`, or already `close` when a tick showed it (shown once, then closed).
    assert!(
        matches!(row.status, ProcessStatus::Ok | ProcessStatus::Close),
        "{row:?}"
    );
    assert_eq!(
        row.result.as_deref(),
        Some("Village news\n- The new bridge opens http://example.invalid/bridge")
    );
    // Context 2 shows it to the model (on the tick it finished in, or the next).
    ticks(&mut core, &clock, 1).await;
    assert!(!prompts_with(&prompts, "- The new bridge opens").is_empty());
}

#[tokio::test]
async fn with_nothing_new_and_no_feeds_the_world_check_does_not_apply() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    keep_only_strategy(&db, Mechanism::WorldCheck).await;
    let (main, prompts) = scripted(&[QUIET]);
    let clock = start_clock();
    let mut core = core_of(&db, main, &clock).await;
    ticks(&mut core, &clock, 13).await;
    assert!(prompts_with(&prompts, "check of the outside world").is_empty());
    let applied = db
        .read(|s| {
            all::<ProcessEntry>(s)
                .iter()
                .filter(|p| p.row.name == "stagnation_strategy")
                .count()
        })
        .await
        .unwrap();
    assert_eq!(
        applied, 0,
        "a strategy that cannot act is not recorded as applied"
    );
}

#[tokio::test]
async fn new_material_is_the_unread_reading_note_shown_once_and_marked_read() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    keep_only_strategy(&db, Mechanism::ReadMaterial).await;
    let clock = start_clock();
    let before = an_hour_before(&clock);
    let (reading, longer, own) = db
        .write(move |s| {
            let mut reading = friends_note("A short story about a lighthouse keeper #reading");
            reading.hashtags = vec![READING_TAG.into()];
            let longer = friends_note(&"A long note about the weather, ".repeat(10));
            let own = Note {
                text: "My own much longer thought. ".repeat(20),
                source: NoteSource::Llm,
                ..Default::default()
            };
            (
                s.add(&reading, before).unwrap(),
                s.add(&longer, before).unwrap(),
                s.add(&own, before).unwrap(),
            )
        })
        .await
        .unwrap();
    let (main, prompts) = scripted(&[QUIET]);
    let mut core = core_of(&db, main, &clock).await;
    ticks(&mut core, &clock, 12).await;
    let shown = prompts_with(&prompts, "Anti-stagnation (information feed)");
    assert_eq!(shown, [12]);
    let prompt = prompts.lock().unwrap()[11].clone();
    assert!(
        prompt.contains(&format!("note #{reading} from friend 12D3KooWFriendAnna")),
        "{prompt}"
    );
    assert!(prompt.contains("lighthouse keeper"), "{prompt}");
    let read = db
        .read(move |s| [reading, longer, own].map(|id| s.get::<Note>(id).unwrap().row.read))
        .await
        .unwrap();
    assert_eq!(
        read,
        [true, false, false],
        "only the material shown is marked read"
    );
}

#[tokio::test]
async fn a_friends_core_note_is_material_and_the_cores_own_is_not() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    keep_only_strategy(&db, Mechanism::ReadMaterial).await;
    let clock = start_clock();
    let before = an_hour_before(&clock);
    let friends_core = db
        .write(move |s| {
            let mut theirs = friends_note(&"What my friend's core thought about tides. ".repeat(5));
            theirs.source = NoteSource::Llm;
            let own = Note {
                text: "My own much longer thought. ".repeat(20),
                source: NoteSource::Llm,
                ..Default::default()
            };
            s.add(&own, before).unwrap();
            s.add(&theirs, before).unwrap()
        })
        .await
        .unwrap();
    let (main, prompts) = scripted(&[QUIET]);
    let mut core = core_of(&db, main, &clock).await;
    ticks(&mut core, &clock, 12).await;
    assert_eq!(
        prompts_with(&prompts, "Anti-stagnation (information feed)"),
        [12]
    );
    let prompt = prompts.lock().unwrap()[11].clone();
    assert!(
        prompt.contains(&format!("note #{friends_core} from friend")),
        "{prompt}"
    );
    assert!(prompt.contains("about tides"), "{prompt}");
}

#[tokio::test]
async fn a_change_of_setting_flips_the_notes_mode_for_its_ticks_then_returns() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    keep_only_strategy(&db, Mechanism::EnvironmentChange).await;
    db.write(|s| {
        use porfiry_storage::Goal;
        let goal = |title: &str| Goal {
            title: title.into(),
            ..Default::default()
        };
        s.add(&goal("learn the old songs"), 10).unwrap();
        s.add(&goal("map the relays"), 20).unwrap();
    })
    .await
    .unwrap();
    let (main, prompts) = scripted(&[MONOTONE]);
    let clock = start_clock();
    let mut core = core_of(&db, main, &clock).await;
    let mode = |db: Db| async move {
        db.read(|s| {
            s.config_get::<CycleSettings>(CYCLE_CONFIG_KEY)
                .unwrap()
                .unwrap_or_default()
                .notes
        })
        .await
        .unwrap()
    };
    ticks(&mut core, &clock, 3).await;
    // The same command three ticks running (the streak) on tick 3: a
    // monotone context, answered at once: auto mode, the goal touched
    // longest ago.
    assert!(matches!(mode(db.clone()).await, NotesMode::Auto { .. }));
    ticks(&mut core, &clock, 1).await;
    let prompt = prompts.lock().unwrap()[3].clone();
    assert!(
        prompt.contains("Anti-stagnation (change of setting)"),
        "{prompt}"
    );
    assert!(prompt.contains("\"learn the old songs\""), "{prompt}");
    // ENVIRONMENT_TICKS (5) ticks in the other setting: 4..=8; back for tick 9.
    ticks(&mut core, &clock, 3).await;
    assert!(matches!(mode(db.clone()).await, NotesMode::Auto { .. }));
    ticks(&mut core, &clock, 1).await;
    assert_eq!(mode(db.clone()).await, NotesMode::Manual);
    ticks(&mut core, &clock, 1).await;
    assert!(prompts.lock().unwrap()[8].contains("Back to the usual setting"));
}

#[tokio::test]
async fn a_mode_the_model_chose_meanwhile_is_not_undone() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    keep_only_strategy(&db, Mechanism::EnvironmentChange).await;
    let (main, _) = scripted(&[MONOTONE]);
    let clock = start_clock();
    let mut core = core_of(&db, main, &clock).await;
    ticks(&mut core, &clock, 4).await;
    // The model sets its own filter while the change lasts.
    let own = NotesMode::Auto {
        filter: porfiry_skills::cognition::NoteFilter {
            tags: vec!["garden".into()],
            ..Default::default()
        },
    };
    let set = own.clone();
    db.write(move |s| {
        set_cycle(
            s,
            CycleSettings {
                notes: set,
                ..Default::default()
            },
            5,
        )
    })
    .await
    .unwrap();
    ticks(&mut core, &clock, 6).await;
    let now = db
        .read(|s| {
            s.config_get::<CycleSettings>(CYCLE_CONFIG_KEY)
                .unwrap()
                .unwrap()
                .notes
        })
        .await
        .unwrap();
    assert_eq!(now, own);
}

#[tokio::test]
async fn a_creative_intervention_shows_a_topic_of_the_store_through_a_frame() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    keep_only_strategy(&db, Mechanism::CreativeIntervention).await;
    db.write(|s| {
        s.add(
            &Concept {
                name: "rainwater barrels".into(),
                ..Default::default()
            },
            10,
        )
        .unwrap();
    })
    .await
    .unwrap();
    let (main, prompts) = scripted(&[MONOTONE]);
    let clock = start_clock();
    let mut core = core_of(&db, main, &clock).await;
    // The streak of one command is found on tick 3: tick 4's prompt.
    ticks(&mut core, &clock, 4).await;
    let prompt = prompts.lock().unwrap()[3].clone();
    let frames = [
        "explain it to a ten-year-old",
        "assume the opposite is true",
        "a gardener, a sailor or a cook",
        "as a story",
        "a hundred years from now",
        "ten times smaller",
    ];
    assert!(
        prompt.contains(
            "Anti-stagnation (creative intervention): shift your focus to \"rainwater barrels\""
        ),
        "{prompt}"
    );
    assert!(frames.iter().any(|f| prompt.contains(f)), "{prompt}");
}

/// A scripted model that also embeds: every text's vector is given by
/// `vector_of`, and the texts asked are kept.
struct Embedding {
    llm: Arc<ScriptLlm>,
    asked: Mutex<Vec<String>>,
    vector_of: fn(&str) -> Vec<f32>,
}

impl Llm for Embedding {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Completion, LlmError>> {
        self.llm.complete(request)
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, Result<Vec<Vec<f32>>, LlmError>> {
        self.asked.lock().unwrap().extend(texts.iter().cloned());
        let out = texts.iter().map(|t| (self.vector_of)(t)).collect();
        Box::pin(async move { Ok(out) })
    }

    fn model_name(&self) -> String {
        self.llm.model_name()
    }
}

#[tokio::test]
async fn replies_reworded_each_tick_stall_by_their_embeddings() {
    // Five different wordings of one thought: no word is shared, so word
    // overlap alone never calls them similar; their vectors are alike.
    let replies = [
        "The mesh needs hourly sync.",
        "Every sixty minutes peers should replicate.",
        "Replication between friends, once per hour.",
        "Hourly exchange of memos with nodes.",
        "Each hour: push updates to companions.",
    ];
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    keep_only_strategy(&db, Mechanism::MetaAnalysis).await;
    let (main, prompts) = scripted(&replies);
    let model = Arc::new(Embedding {
        llm: main,
        asked: Mutex::new(Vec::new()),
        vector_of: |_| vec![1.0, 0.05, 0.0],
    });
    let clock = start_clock();
    let mut node = core(
        &db,
        ScriptMaker::default().with_named("main", model.clone()),
        "main",
        clock.clone(),
        CoreEvents::new(),
        Trace::off(),
    )
    .await;
    ticks(&mut node, &clock, 5).await;
    // Tick 2's reply is like tick 1's by its vector: stagnation found, the
    // meta-analysis hint is in tick 3's prompt (once: the cooldown holds).
    assert_eq!(
        prompts_with(&prompts, "Anti-stagnation (meta-analysis)"),
        [3]
    );
    assert!(model.asked.lock().unwrap().iter().any(|t| t == replies[0]));

    // The same five replies with a model that has no embeddings: no stall.
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    keep_only_strategy(&db, Mechanism::MetaAnalysis).await;
    let (main, prompts) = scripted(&replies);
    let clock = start_clock();
    let mut node = core_of(&db, main, &clock).await;
    ticks(&mut node, &clock, 5).await;
    assert!(prompts_with(&prompts, "Anti-stagnation (meta-analysis)").is_empty());
}

#[tokio::test]
async fn the_flashback_takes_the_entry_farthest_in_meaning_when_the_model_embeds() {
    use porfiry_storage::DiaryEntry;
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    keep_only_strategy(&db, Mechanism::Flashback).await;
    db.write(|s| {
        for text in [
            "round and round the garden", // shares words with the reply
            "a quiet morning by the sea", // shares none, but means the same (by vector)
            "tax forms due in April",     // far in meaning
        ] {
            s.add(
                &DiaryEntry {
                    text: text.into(),
                    ..Default::default()
                },
                10,
            )
            .unwrap();
        }
    })
    .await
    .unwrap();
    let (main, prompts) = scripted(&["Round and round."]);
    let model = Arc::new(Embedding {
        llm: main,
        asked: Mutex::new(Vec::new()),
        vector_of: |t| {
            if t.contains("tax") {
                vec![0.0, 1.0]
            } else {
                vec![1.0, 0.0]
            }
        },
    });
    let clock = start_clock();
    let mut core = core(
        &db,
        ScriptMaker::default().with_named("main", model),
        "main",
        clock.clone(),
        CoreEvents::new(),
        Trace::off(),
    )
    .await;
    ticks(&mut core, &clock, 5).await;
    let shown = prompts_with(&prompts, "Anti-stagnation (flashback)");
    assert_eq!(shown.len(), 1, "{shown:?}");
    let prompt = prompts.lock().unwrap()[shown[0] - 1].clone();
    assert!(prompt.contains("tax forms due in April"), "{prompt}");
}
