//! Idle mode (seed 003 §7) on a real SQLite file, the node's real toolsets
//! and a scripted in-process model, in paused time: woken by a matching note
//! (and not without one), by its timeout, by the process it named (not
//! another), by a friend's answer to the question it waits on, and always by
//! the user's own note; waking switches it off.

mod core_support;

use std::time::Duration;

use core_support::*;
use porfiry_agent::cognition::wait::{Waited, WakeCause};
use porfiry_agent::cognition::{CoreEvent, CoreEvents, Trace};
use porfiry_skills::Clock;
use porfiry_skills::cognition::{CYCLE_CONFIG_KEY, CycleSettings, IdleSettings, NoteFilter};
use porfiry_storage::{Note, NoteSource, ProcessEntry, ProcessStatus};

#[tokio::test(start_paused = true)]
async fn idle_wakes_on_a_matching_note_event_and_not_without_one() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let events = CoreEvents::new();
    let clock = clock();
    let main = thinker("main", "Waiting for the user.");
    let mut core = core(
        &db,
        ScriptMaker::default().with(main),
        "main",
        clock.clone(),
        events.clone(),
        Trace::off(),
    )
    .await;
    let since = clock.now().unix_ms();
    idle(
        &db,
        IdleSettings {
            notes: Some(NoteFilter {
                min_priority: Some(1),
                ..Default::default()
            }),
            since_ms: since,
            ..Default::default()
        },
    )
    .await;
    // Nothing happens: an hour of (paused, auto-advanced) time passes
    // without the core waking, so it is not polling a timer either.
    assert!(
        tokio::time::timeout(Duration::from_secs(3600), core.wait())
            .await
            .is_err()
    );
    clock.advance_ms(1_000);
    let now = clock.now().unix_ms();
    let (own, low, wanted) = db
        .write(move |s| {
            let add = |text: &str, source, priority| {
                s.add(
                    &Note {
                        text: text.into(),
                        source,
                        priority,
                        ..Default::default()
                    },
                    now,
                )
                .unwrap()
            };
            (
                add("my own note", NoteSource::Llm, 5),
                // System notes: a user's note would wake it whatever the filter.
                add("low priority", NoteSource::System, 0),
                add("please look", NoteSource::System, 2),
            )
        })
        .await
        .unwrap();
    let waiting = tokio::spawn(async move { (core.wait().await, core) });
    events.send(CoreEvent::NoteArrived { id: own });
    events.send(CoreEvent::NoteArrived { id: low });
    events.send(CoreEvent::NoteArrived { id: wanted });
    let (waited, _core) = waiting.await.unwrap();
    assert_eq!(waited.unwrap(), Waited::Woke(WakeCause::Note(wanted)));
    let cycle: CycleSettings =
        read(&db, |s| s.config_get(CYCLE_CONFIG_KEY).unwrap().unwrap()).await;
    assert_eq!(cycle.idle, None, "waking switches idle mode off");
}

#[tokio::test(start_paused = true)]
async fn idle_with_a_timeout_wakes_when_it_passes() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let clock = clock();
    let mut core = quiet_core(
        &db,
        ScriptMaker::default().with(thinker("main", "x")),
        clock.clone(),
    )
    .await;
    let since = clock.now().unix_ms();
    idle(
        &db,
        IdleSettings {
            timeout_secs: Some(600),
            since_ms: since,
            ..Default::default()
        },
    )
    .await;
    assert_eq!(core.wait().await.unwrap(), Waited::Woke(WakeCause::Timeout));
}

#[tokio::test(start_paused = true)]
async fn idle_wakes_when_the_named_process_ends_not_another() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let events = CoreEvents::new();
    let clock = clock();
    let mut core = core(
        &db,
        ScriptMaker::default().with(thinker("main", "x")),
        "main",
        clock.clone(),
        events.clone(),
        Trace::off(),
    )
    .await;
    let since = clock.now().unix_ms();
    let running = |name: &str| ProcessEntry {
        name: name.into(),
        status: ProcessStatus::Warning,
        ..Default::default()
    };
    let (awaited, other) = {
        let (a, b) = (running("awaited"), running("other"));
        db.write(move |s| (s.add(&a, since).unwrap(), s.add(&b, since).unwrap()))
            .await
            .unwrap()
    };
    idle(
        &db,
        IdleSettings {
            processes: vec![awaited],
            since_ms: since,
            ..Default::default()
        },
    )
    .await;
    clock.advance_ms(1_000);
    let finish = |id: i64, now: u64| {
        let db = db.clone();
        async move {
            db.write(move |s| {
                s.process_finish(id, ProcessStatus::Ok, "done", now)
                    .unwrap();
            })
            .await
            .unwrap()
        }
    };
    finish(other, clock.now().unix_ms()).await;
    events.send(CoreEvent::ProcessFinished { id: other });
    let waiting = tokio::spawn(async move { (core.wait().await, core) });
    tokio::time::sleep(Duration::from_secs(600)).await;
    assert!(!waiting.is_finished(), "another process does not wake it");
    finish(awaited, clock.now().unix_ms()).await;
    events.send(CoreEvent::ProcessFinished { id: awaited });
    let (waited, _core) = waiting.await.unwrap();
    assert_eq!(waited.unwrap(), Waited::Woke(WakeCause::Process(awaited)));
    let cycle: CycleSettings =
        read(&db, |s| s.config_get(CYCLE_CONFIG_KEY).unwrap().unwrap()).await;
    assert_eq!(cycle.idle, None, "waking switches idle mode off");
}

/// Idle mode on a question to friends (`cycle_idle|on||<row>` on a
/// `mesh_interact` row) wakes when a friend's answer arrives: the answer is
/// gathered then, not at the next tick that idle would never start
/// (issue 42, seed 003 #2). A reply to another note does not wake it.
#[tokio::test(start_paused = true)]
async fn idle_on_a_question_wakes_when_a_friend_answers_it() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let events = CoreEvents::new();
    let clock = clock();
    let mut core = core(
        &db,
        ScriptMaker::default().with(thinker("main", "x")),
        "main",
        clock.clone(),
        events.clone(),
        Trace::off(),
    )
    .await;
    let since = clock.now().unix_ms();
    let asked = porfiry_protocol::ItemId::of_envelope(b"the question");
    let question = db
        .write(move |s| {
            let note = s.add(
                &Note {
                    text: "who maps clubs?".into(),
                    source: NoteSource::Llm,
                    item_id: Some(asked),
                    ..Default::default()
                },
                since,
            )?;
            s.add(
                &ProcessEntry {
                    name: porfiry_skills::cognition::tick::MESH_INTERACT_COMMAND.into(),
                    status: ProcessStatus::Warning,
                    command: serde_json::json!({ "note": note }),
                    ..Default::default()
                },
                since,
            )
        })
        .await
        .unwrap()
        .unwrap();
    idle(
        &db,
        IdleSettings {
            processes: vec![question],
            since_ms: since,
            ..Default::default()
        },
    )
    .await;
    clock.advance_ms(1_000);
    let reply = |to: &'static [u8], text: &str, from: &'static [u8]| {
        let (db, text) = (db.clone(), text.to_owned());
        let now = clock.now().unix_ms();
        async move {
            db.write(move |s| {
                s.add(
                    &Note {
                        text,
                        reply_to: Some(porfiry_protocol::ItemId::of_envelope(to)),
                        origin_author: Some("bob".into()),
                        origin_item_id: Some(porfiry_protocol::ItemId::of_envelope(from)),
                        ..Default::default()
                    },
                    now,
                )
            })
            .await
            .unwrap()
            .unwrap()
        }
    };
    let other = reply(b"another note", "nice photo", b"bob's comment").await;
    events.send(CoreEvent::NoteArrived { id: other });
    let waiting = tokio::spawn(async move { (core.wait().await, core) });
    tokio::time::sleep(Duration::from_secs(600)).await;
    assert!(
        !waiting.is_finished(),
        "a reply to another note does not wake it"
    );
    let answer = reply(b"the question", "clubs! nobody has", b"bob's answer").await;
    events.send(CoreEvent::NoteArrived { id: answer });
    let (waited, _core) = waiting.await.unwrap();
    assert_eq!(waited.unwrap(), Waited::Woke(WakeCause::Process(question)));
    let row = read(&db, move |s| s.get::<ProcessEntry>(question).unwrap()).await;
    assert_eq!(
        (row.row.status, row.row.result.as_deref()),
        (ProcessStatus::Ok, Some("bob: clubs! nobody has"))
    );
}

#[tokio::test(start_paused = true)]
async fn a_note_from_the_user_wakes_idle_mode_that_has_no_note_filter() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let events = CoreEvents::new();
    let clock = clock();
    let mut core = core(
        &db,
        ScriptMaker::default().with(thinker("main", "x")),
        "main",
        clock.clone(),
        events.clone(),
        Trace::off(),
    )
    .await;
    let since = clock.now().unix_ms();
    // Waits on a process that will never end, and no notes at all.
    let pid = db
        .write(move |s| {
            let job = ProcessEntry {
                name: "never ends".into(),
                status: ProcessStatus::Warning,
                ..Default::default()
            };
            s.add(&job, since).unwrap()
        })
        .await
        .unwrap();
    idle(
        &db,
        IdleSettings {
            processes: vec![pid],
            since_ms: since,
            ..Default::default()
        },
    )
    .await;
    clock.advance_ms(1_000);
    let now = clock.now().unix_ms();
    let (own, users) = db
        .write(move |s| {
            let add = |text: &str, source| {
                s.add(
                    &Note {
                        text: text.into(),
                        source,
                        ..Default::default()
                    },
                    now,
                )
                .unwrap()
            };
            (
                add("mine", NoteSource::Llm),
                add("are you there?", NoteSource::User),
            )
        })
        .await
        .unwrap();
    let waiting = tokio::spawn(async move { (core.wait().await, core) });
    events.send(CoreEvent::NoteArrived { id: own });
    tokio::time::sleep(Duration::from_secs(600)).await;
    assert!(
        !waiting.is_finished(),
        "the core's own note does not wake it"
    );
    events.send(CoreEvent::NoteArrived { id: users });
    let (waited, _core) = waiting.await.unwrap();
    assert_eq!(waited.unwrap(), Waited::Woke(WakeCause::Note(users)));
}
