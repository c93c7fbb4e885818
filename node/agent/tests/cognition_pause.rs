//! A person's pause of the daemon's cognitive core (the family page's
//! "Thinking" switch, the `thinking_paused` config key): no tick and no
//! model call while it is on, however long, and a tick again once it is
//! switched off and the core is told (`CoreEvent::ThinkingSwitched`).

mod core_support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use core_support::*;
use porfiry_agent::cognition::{CoreEvent, CoreEvents, Trace};
use porfiry_skills::Language;
use porfiry_skills::cognition::THINKING_PAUSED_KEY;

/// A main model answering the tick with `reply` and the reflexes with a
/// usable evaluation.
fn thinker(name: &str, reply: &'static str) -> Arc<ScriptLlm> {
    ScriptLlm::new(name, move |req| {
        if is_main_call(req, Language::En) {
            Ok(reply.to_owned())
        } else {
            Ok(
                r#"{"novel": "yes", "novelty": 0.8, "new_ideas": ["a"], "tags": ["e2e"]}"#
                    .to_owned(),
            )
        }
    })
}

#[tokio::test(start_paused = true)]
async fn a_paused_daemon_core_starts_no_tick_until_a_person_resumes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let set_paused = |on: bool| {
        let db = db.clone();
        async move {
            db.write(move |s| s.config_set(THINKING_PAUSED_KEY, &on, 1_000))
                .await
                .unwrap()
                .unwrap();
        }
    };
    set_paused(true).await;
    let events = CoreEvents::new();
    let main = thinker("main", "Thinking about the garden.");
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = lines.clone();
    let mut core = core(
        &db,
        ScriptMaker::default().with(main.clone()),
        "main",
        start_clock(),
        events.clone(),
        Trace::to(move |l| sink.lock().unwrap().push(l.to_owned())),
    )
    .await;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(async move {
        core.run(None, async move {
            let _ = stopped.await;
        })
        .await
    });
    let traced = |what: &str| lines.lock().unwrap().iter().any(|l| l.contains(what));
    while !traced("thinking paused") {
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    // An hour (paused, auto-advanced), other events and a switch event that
    // finds the pause still on: no tick, no model call.
    events.send(CoreEvent::NoteArrived { id: 1 });
    events.send(CoreEvent::ThinkingSwitched);
    tokio::time::sleep(Duration::from_secs(3600)).await;
    assert_eq!(main.calls(), 0, "{:?}", lines.lock().unwrap());
    set_paused(false).await;
    events.send(CoreEvent::ThinkingSwitched);
    while main.calls() == 0 {
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    assert!(traced("thinking resumed"));
    stop.send(()).unwrap();
    running.await.unwrap().unwrap();
}
