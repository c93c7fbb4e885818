//! Activation timeouts with a fake clock, and per-session isolation.

mod common;

use common::{MIN, clock, settle, toolbox, toolbox_with};
use porfiry_skills::{Clock, LoopConfig, Session, Step};

fn call_model(step: Step) -> porfiry_skills::ModelRequest {
    match step {
        Step::CallModel(r) => r,
        Step::Done(d) => panic!("expected a model call, turn ended with {d:?}"),
        Step::RunTool(t) => panic!("expected a model call, got a tool run {t:?}"),
    }
}

#[test]
fn a_call_at_9_59_extends_and_past_10_00_the_set_is_gone() {
    let c = clock();
    let mut s = Session::new(toolbox());
    s.user_message("find lara", &c.now());
    let step = s
        .model_reply("TOOL_CALL: media_search|lara", &c.now())
        .unwrap();
    let r = call_model(settle(&mut s, step, &c.now()));
    assert!(r.system.contains("Active toolsets: media."));
    s.model_reply("found it", &c.now()).unwrap();

    c.advance_ms(9 * MIN + 59_000);
    s.user_message("and its year?", &c.now());
    let step = s
        .model_reply("TOOL_CALL: media_info|tt0146316", &c.now())
        .unwrap();
    settle(&mut s, step, &c.now());
    s.model_reply("2001", &c.now()).unwrap();

    c.advance_ms(9 * MIN + 59_000); // 19:58 from the start: 9:59 after the last call
    assert!(
        s.current_prompt(&c.now())
            .contains("Active toolsets: media.")
    );
    c.advance_ms(1_001); // 10:00.001 after the last call
    let prompt = s.current_prompt(&c.now());
    assert!(!prompt.contains("Active toolsets"), "{prompt}");
    assert!(
        prompt.contains("media — films (find"),
        "the skill is back in the index"
    );
}

#[test]
fn past_the_timeout_a_fresh_user_message_sees_the_set_gone() {
    let c = clock();
    let mut s = Session::new(toolbox());
    s.user_message("films", &c.now());
    s.model_reply("TOOL_CALL: enable_toolset|media", &c.now())
        .unwrap();
    s.model_reply("ready", &c.now()).unwrap();
    c.advance_ms(10 * MIN + 1);
    let r = call_model(s.user_message("play it", &c.now()));
    assert!(!r.system.contains("Active toolsets"));
    assert!(s.activation().is_empty());
}

#[test]
fn the_idle_time_is_configurable() {
    let c = clock();
    let config = LoopConfig {
        toolset_idle_ms: 2_000,
        ..LoopConfig::default()
    };
    let mut s = Session::new(toolbox_with(config));
    s.user_message("films", &c.now());
    let r = call_model(
        s.model_reply("TOOL_CALL: enable_toolset|media", &c.now())
            .unwrap(),
    );
    assert!(r.system.contains("Active toolsets: media."));
    c.advance_ms(2_001);
    let r = call_model(
        s.model_reply("TOOL_CALL: get_current_time", &c.now())
            .unwrap(),
    );
    assert!(!r.system.contains("Active toolsets"));
}

#[test]
fn two_sessions_do_not_see_each_others_activation() {
    let c = clock();
    let tb = toolbox();
    let mut a = Session::new(tb.clone());
    let mut b = Session::new(tb);
    a.user_message("films", &c.now());
    b.user_message("notes", &c.now());
    let ra = call_model(
        a.model_reply("TOOL_CALL: enable_toolset|media", &c.now())
            .unwrap(),
    );
    let rb = call_model(
        b.model_reply("TOOL_CALL: enable_toolset|notes", &c.now())
            .unwrap(),
    );
    assert!(ra.system.contains("Active toolsets: media."));
    assert!(rb.system.contains("Active toolsets: notes."));
    assert!(!a.activation().is_active("notes"));
    assert!(!b.activation().is_active("media"));
    b.model_reply("TOOL_CALL: disable_toolset|notes", &c.now())
        .unwrap();
    assert!(
        a.activation().is_active("media"),
        "b's disable leaves a alone"
    );
    // Histories are separate too: a's next turn leaves b's as it was.
    let before = b.history().to_vec();
    a.model_reply("ok", &c.now()).unwrap();
    a.user_message("only for a", &c.now());
    assert_eq!(b.history(), &before[..], "a's turn left b's history alone");
}
