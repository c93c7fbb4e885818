//! What one tick writes into `llm_recent_responses` beside the reply — the
//! cognitive evaluation's novelty, ideas and tags, the emotional
//! evaluation's emotions, the reflection — which the concentration mode
//! and the detectors read later, and the emotion list a new emotion joins
//! in `config` (issue 42: untested until now). Real SQLite, a scripted
//! model answering each of the tick's questions.

mod core_support;

use core_support::*;
use porfiry_skills::Language;
use porfiry_skills::cognition::reflex::EMOTIONS_CONFIG_KEY;
use porfiry_storage::RecentResponse;

#[tokio::test]
async fn a_tick_stores_its_evaluation_its_emotions_and_a_new_emotion_in_the_list() {
    let tmp = tempfile::tempdir().unwrap();
    let db = fresh_db(tmp.path());
    let known: Vec<String> = read(&db, |s| s.config_get(EMOTIONS_CONFIG_KEY).unwrap())
        .await
        .unwrap_or_default();
    assert!(!known.iter().any(|e| e == "awe"), "{known:?}");
    let thoughts = std::sync::Mutex::new(
        [
            "Relays run all night and waste the battery.",
            "Relays could sleep at night and wake on a friend's knock.",
        ]
        .into_iter(),
    );
    let main = ScriptLlm::new("main", move |req| {
        Ok(if is_main_call(req, Language::En) {
            thoughts.lock().unwrap().next().unwrap_or("-").to_owned()
        } else if req.system.contains("emotional state") {
            r#"["joy:3", "awe:4"]"#.to_owned()
        } else {
            r#"{"novel": "yes", "novelty": 0.8, "new_ideas": ["sleeping relays"],
                "refined_ideas": ["wake on demand"], "discarded_ideas": ["always on"],
                "tags": ["mesh", "energy"]}"#
                .to_owned()
        })
    });
    let mut core = core_of(&db, main, &start_clock()).await;
    core.tick().await.unwrap();
    // A second tick compares with the first: the cognitive evaluation runs.
    core.tick().await.unwrap();
    let rows = read(&db, all::<RecentResponse>).await;
    let row = &rows.last().unwrap().row;
    assert_eq!(row.novelty_score, Some(0.8));
    assert_eq!(row.new_ideas, ["sleeping relays"]);
    assert_eq!(row.refined_ideas, ["wake on demand"]);
    assert_eq!(row.discarded_ideas, ["always on"]);
    assert_eq!(row.tags, ["mesh", "energy"]);
    assert_eq!(row.emotions, ["joy:3", "awe:4"]);
    assert!(!row.stagnation_reflex);
    let list: Vec<String> = read(&db, |s| s.config_get(EMOTIONS_CONFIG_KEY).unwrap())
        .await
        .unwrap();
    assert!(
        list.iter().any(|e| e == "awe"),
        "a new emotion joins the list: {list:?}"
    );
    assert!(list.len() > known.len());
}
