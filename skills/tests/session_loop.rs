//! The whole loop through the async driver with a scripted model: what the
//! model receives per round, what enters the history, events, round limit,
//! model failures.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{ScriptedLlm, block_on, clock, media_only, settle, toolbox, toolbox_with};
use porfiry_skills::{
    Action, ChatMessage, ChatSession, ClientEvent, Clock, Language, LlmError, LoopConfig, Reply,
    ResultKind, Role, Session, SessionError, Step, TraceEvent,
};

fn chat(tb: Arc<porfiry_skills::Toolbox>, llm: &ScriptedLlm) -> ChatSession {
    ChatSession::new(tb, Arc::new(llm.clone()), Arc::new(clock()))
}

#[test]
fn seed_scenario_question_read_skill_enable_search_answer() {
    let llm = ScriptedLlm::new(&[
        "TOOL_CALL: read_skill|media",
        "TOOL_CALL: enable_toolset|media",
        "Searching.\nTOOL_CALL: media_search|lara croft",
        "I found Lara Croft: Tomb Raider (2001) and two more.",
    ]);
    let mut chat = chat(media_only(Language::En), &llm);
    let reply = block_on(chat.send("Is there a Lara Croft film?")).unwrap();
    assert_eq!(
        reply.text,
        "I found Lara Croft: Tomb Raider (2001) and two more."
    );
    assert!(reply.events.is_empty());

    let reqs = llm.requests();
    assert_eq!(reqs.len(), 4);
    // Rounds 1-2: state 1; round 3 on: state 3.
    assert!(!reqs[0].system.contains("Active toolsets"));
    assert!(!reqs[1].system.contains("Active toolsets"));
    assert!(reqs[2].system.contains("Active toolsets: media."));
    assert!(
        !reqs[2].system.contains("Skills ("),
        "the media skill left the index"
    );
    // The enable call never reached the history.
    assert_eq!(reqs[2].messages, reqs[1].messages);
    for r in &reqs {
        assert!(
            r.messages
                .iter()
                .all(|m| !m.content.starts_with("TOOL_CALL: enable_toolset")
                    && !m.content.starts_with("TOOL_RESULT enable_toolset")),
            "{:?}",
            r.messages
        );
    }
    let h = chat.session().history();
    let roles: Vec<Role> = h.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [
            Role::User,
            Role::Assistant,
            Role::User,
            Role::Assistant,
            Role::User,
            Role::Assistant
        ]
    );
    assert_eq!(h[1].content, "TOOL_CALL: read_skill|media");
    assert!(h[2].content.starts_with("TOOL_RESULT read_skill: # Films"));
    assert_eq!(
        h[3].content, "TOOL_CALL: media_search|lara croft",
        "canonical call line, preamble dropped"
    );
    assert!(
        h[4].content
            .starts_with("TOOL_RESULT media_search: tt0146316 — Lara Croft: Tomb Raider (2001)\n")
    );
}

#[test]
fn history_is_never_cleaned_across_turns() {
    let llm = ScriptedLlm::new(&[
        "TOOL_CALL: media_search|matrix",
        "The Matrix (1999).",
        "You asked about The Matrix.",
    ]);
    let mut chat = chat(toolbox(), &llm);
    block_on(chat.send("find matrix")).unwrap();
    block_on(chat.send("what did you show me?")).unwrap();
    let last = llm.requests().pop().unwrap();
    assert_eq!(last.messages.len(), 5);
    assert!(
        last.messages[2]
            .content
            .contains("tt0133093 — The Matrix (1999)"),
        "old tool results stay"
    );
}

#[test]
fn a_ghost_call_to_an_inactive_set_is_substituted_and_then_retried() {
    let llm = ScriptedLlm::new(&[
        "TOOL_CALL: media_info",
        "TOOL_CALL: media_info|tt0133093",
        "A hacker film.",
    ]);
    let mut chat = chat(toolbox(), &llm);
    let reply = block_on(chat.send("details?")).unwrap();
    assert_eq!(reply.text, "A hacker film.");
    let reqs = llm.requests();
    let sub = &reqs[1].messages;
    assert_eq!(sub[1].content, "TOOL_CALL: media_info");
    assert!(
        sub[2].content.contains("media_info was NOT executed yet"),
        "{}",
        sub[2].content
    );
    assert!(reqs[1].system.contains("Active toolsets: media."));
    assert!(
        reqs[2].messages[4]
            .content
            .starts_with("TOOL_RESULT media_info: tt0133093 — The Matrix (1999): A hacker")
    );
}

#[test]
fn a_no_op_enable_is_shown_once_but_never_stored() {
    let llm = ScriptedLlm::new(&[
        "TOOL_CALL: enable_toolset|media",
        "TOOL_CALL: enable_toolset|media",
        "TOOL_CALL: media_search|matrix",
        "Found.",
    ]);
    let mut chat = chat(toolbox(), &llm);
    block_on(chat.send("matrix?")).unwrap();
    let reqs = llm.requests();
    assert_eq!(reqs[1].messages.len(), 1, "a changing enable adds nothing");
    assert_eq!(
        reqs[2].messages.len(),
        3,
        "the no-op enable and its reply are shown"
    );
    assert_eq!(
        reqs[2].messages[1],
        ChatMessage::assistant("TOOL_CALL: enable_toolset|media")
    );
    assert_eq!(
        reqs[2].messages[2],
        ChatMessage::tool_result(
            "enable_toolset",
            "toolset media already active, timeout extended"
        )
    );
    assert_eq!(
        reqs[3].messages.len(),
        3,
        "then gone: user, search call, search result"
    );
    assert!(
        chat.session()
            .history()
            .iter()
            .all(|m| !m.content.contains("enable_toolset"))
    );
}

#[test]
fn double_disable_is_harmless() {
    let llm = ScriptedLlm::new(&[
        "TOOL_CALL: enable_toolset|media",
        "TOOL_CALL: disable_toolset|media",
        "TOOL_CALL: disable_toolset|media",
        "Done.",
    ]);
    let mut chat = chat(toolbox(), &llm);
    assert_eq!(block_on(chat.send("toggle")).unwrap().text, "Done.");
    let reqs = llm.requests();
    assert!(reqs[1].system.contains("Active toolsets: media."));
    assert!(!reqs[2].system.contains("Active toolsets"));
    assert_eq!(
        reqs[3].messages[2].content,
        "TOOL_RESULT disable_toolset: no active toolsets"
    );
    assert_eq!(chat.session().history().len(), 2);
}

#[test]
fn only_the_first_of_several_calls_runs_and_the_model_is_told() {
    let llm = ScriptedLlm::new(&[
        "TOOL_CALL: media_search|matrix\nTOOL_CALL: media_play|tt0133093",
        "ok",
    ]);
    let mut chat = chat(toolbox(), &llm);
    let reply = block_on(chat.send("play matrix")).unwrap();
    assert!(reply.events.is_empty(), "media_play did not run");
    let result = &chat.session().history()[2].content;
    assert!(
        result.ends_with("(only the first TOOL_CALL of a reply runs; 1 more ignored)"),
        "{result}"
    );
}

#[test]
fn events_of_the_turn_come_with_the_answer_in_order() {
    let llm = ScriptedLlm::new(&[
        "TOOL_CALL: show_text|Searching…",
        "TOOL_CALL: enable_toolset|media",
        "TOOL_CALL: media_play|tt0133093",
        "Enjoy.",
    ]);
    let mut chat = chat(toolbox(), &llm);
    let reply = block_on(chat.send("play the matrix")).unwrap();
    assert_eq!(
        reply,
        Reply {
            text: "Enjoy.".into(),
            events: vec![
                ClientEvent::ShowText {
                    text: "Searching…".into()
                },
                ClientEvent::Action {
                    tool: "media_play".into(),
                    value: "tt0133093".into()
                },
            ],
            usage: None,
            finish_reason: None,
            served_by: None,
        }
    );
}

#[test]
fn hitting_the_round_limit_tells_the_user_plainly() {
    let config = LoopConfig {
        max_tool_rounds: 3,
        ..LoopConfig::default()
    };
    let llm = ScriptedLlm::new(&["TOOL_CALL: get_current_time"; 5]);
    let mut chat = chat(toolbox_with(config), &llm);
    let reply = block_on(chat.send("loop forever")).unwrap();
    assert_eq!(
        reply.text,
        "Sorry, I stopped after 3 tool steps without reaching an answer. Please rephrase or ask me to continue."
    );
    assert_eq!(llm.requests().len(), 3);
    assert_eq!(chat.session().history().last().unwrap().content, reply.text);
    assert_eq!(chat.session().last_action(), Some(&Action::RoundLimit));
}

#[test]
fn invisible_calls_count_as_rounds_so_an_enable_loop_ends() {
    let config = LoopConfig {
        max_tool_rounds: 4,
        ..LoopConfig::default()
    };
    let llm = ScriptedLlm::new(&["TOOL_CALL: enable_toolset|media"; 6]);
    let mut chat = chat(toolbox_with(config), &llm);
    let reply = block_on(chat.send("films")).unwrap();
    assert!(
        reply
            .text
            .starts_with("Sorry, I stopped after 4 tool steps")
    );
    assert_eq!(llm.requests().len(), 4);
}

#[test]
fn a_model_failure_aborts_the_turn_and_keeps_turns_alternating() {
    let llm = ScriptedLlm::default();
    llm.push(Ok("TOOL_CALL: get_current_time".into()));
    let timeout = LlmError::Timeout {
        url: "http://127.0.0.1:9/v1/chat/completions".into(),
        timeout: Duration::from_secs(30),
    };
    llm.push(Err(timeout.clone()));
    llm.push(Ok("Hello again.".into()));
    let mut chat = chat(toolbox(), &llm);
    let err = block_on(chat.send("time?")).unwrap_err();
    assert_eq!(err, timeout);
    assert!(!chat.session().awaiting_model());
    let h = chat.session().history();
    assert_eq!(
        h.last().unwrap(),
        &ChatMessage::assistant("(no reply: the model call failed)")
    );
    assert!(
        h.windows(2).all(|w| w[0].role != w[1].role),
        "roles alternate: {h:?}"
    );
    assert_eq!(block_on(chat.send("hi")).unwrap().text, "Hello again.");
}

#[test]
fn trace_reports_requests_replies_and_actions() {
    let llm = ScriptedLlm::new(&["TOOL_CALL: enable_toolset|media", "Ready."]);
    let mut chat = chat(toolbox(), &llm);
    let mut seen = Vec::new();
    block_on(chat.send_traced("films", |e| {
        seen.push(match e {
            TraceEvent::Request(r) => format!("request {}", r.messages.len()),
            TraceEvent::ModelReply(t) => format!("reply {t}"),
            TraceEvent::Action(a) => format!("action {a:?}"),
            TraceEvent::Events(e) => format!("events {e:?}"),
        })
    }))
    .unwrap();
    assert_eq!(seen.len(), 6);
    assert_eq!(seen[0], "request 1");
    assert!(
        seen[2].contains("Invisible") && seen[2].contains("changed: true"),
        "{}",
        seen[2]
    );
    assert_eq!(seen[5], "action Answer");
}

#[test]
fn think_blocks_stay_out_of_the_answer_and_the_history() {
    let llm = ScriptedLlm::new(&["<think>the user greets me</think>\nHello!"]);
    let mut chat = chat(toolbox(), &llm);
    assert_eq!(block_on(chat.send("hi")).unwrap().text, "Hello!");
    assert_eq!(chat.session().history()[1].content, "Hello!");
}

#[test]
fn the_state_machine_refuses_a_reply_nobody_asked_for() {
    let c = clock();
    let mut s = Session::new(toolbox());
    assert_eq!(
        s.model_reply("hello", &c.now()),
        Err(SessionError::NoModelCallPending)
    );
    s.user_message("hi", &c.now());
    assert!(matches!(
        s.model_reply("hello", &c.now()),
        Ok(Step::Done(_))
    ));
    assert_eq!(
        s.model_reply("again", &c.now()),
        Err(SessionError::NoModelCallPending)
    );
    assert_eq!(s.history().len(), 2);
}

#[test]
fn a_new_user_message_mid_turn_abandons_the_old_turn() {
    let c = clock();
    let mut s = Session::new(toolbox());
    s.user_message("first", &c.now());
    s.model_reply("TOOL_CALL: get_current_time", &c.now())
        .unwrap();
    let Step::CallModel(r) = s.user_message("second", &c.now()) else {
        panic!()
    };
    let roles: Vec<Role> = r.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [
            Role::User,
            Role::Assistant,
            Role::User,
            Role::Assistant,
            Role::User
        ]
    );
    assert_eq!(r.messages[4].content, "second");
}

#[test]
fn results_record_how_they_came_about() {
    let c = clock();
    let mut s = Session::new(toolbox());
    s.user_message("x", &c.now());
    let step = s.model_reply("TOOL_CALL: notes_list", &c.now()).unwrap();
    assert!(
        s.last_action().is_none(),
        "nothing recorded before the tool ran"
    );
    settle(&mut s, step, &c.now());
    assert!(matches!(
        s.last_action(),
        Some(Action::Tool { kind: ResultKind::ActivatedAndExecuted, result, ok: true, .. }) if result == "1. buy milk"
    ));
}

#[test]
fn a_resumed_session_keeps_the_old_history_but_no_activation() {
    let c = clock();
    let old = vec![ChatMessage::user("hi"), ChatMessage::assistant("hello")];
    let mut s = Session::resume(toolbox(), old.clone());
    let Step::CallModel(r) = s.user_message("films?", &c.now()) else {
        panic!()
    };
    assert_eq!(r.messages[..2], old[..]);
    assert_eq!(r.messages.len(), 3);
    assert!(s.activation().is_empty());
}

#[test]
fn the_send_future_can_move_to_another_thread() {
    fn assert_send<T: Send>(_: &T) {}
    let llm = ScriptedLlm::new(&["hi"]);
    let mut chat = chat(toolbox(), &llm);
    let fut = chat.send("hello");
    assert_send(&fut);
    assert_eq!(block_on(fut).unwrap().text, "hi");
}

#[test]
fn every_round_of_a_turn_asks_for_at_most_the_reply_budget() {
    let config = LoopConfig {
        reply_max_tokens: 40,
        ..LoopConfig::default()
    };
    let llm = ScriptedLlm::new(&["TOOL_CALL: get_current_time", "It is noon."]);
    let mut tooled = chat(toolbox_with(config), &llm);
    block_on(tooled.send("what time is it?")).unwrap();
    let budgets: Vec<Option<u32>> = llm.requests().iter().map(|r| r.max_tokens).collect();
    assert_eq!(budgets, [Some(40), Some(40)]);
    let llm = ScriptedLlm::new(&["hello"]);
    let mut plain = chat(toolbox(), &llm);
    block_on(plain.send("hi")).unwrap();
    assert_eq!(llm.requests()[0].max_tokens, Some(512));
}

#[test]
fn client_events_are_told_as_their_tool_round_ends_not_only_with_the_reply() {
    let llm = ScriptedLlm::new(&["TOOL_CALL: show_text|Searching…", "Found nothing."]);
    let mut chat = chat(toolbox(), &llm);
    let mut seen = Vec::new();
    let reply = block_on(chat.send_traced("films", |e| {
        seen.push(match e {
            TraceEvent::Request(_) => "request".to_owned(),
            TraceEvent::ModelReply(_) => "reply".to_owned(),
            TraceEvent::Action(_) => "action".to_owned(),
            TraceEvent::Events(e) => format!("events {e:?}"),
        })
    }))
    .unwrap();
    let shown = r#"events [ShowText { text: "Searching…" }]"#;
    assert_eq!(
        seen,
        [
            "request", "reply", "action", shown, "request", "reply", "action"
        ]
    );
    assert_eq!(reply.events.len(), 1, "the reply still carries every event");
}

#[test]
fn events_of_a_round_that_hits_the_limit_are_told_before_the_turn_ends() {
    let config = LoopConfig {
        max_tool_rounds: 1,
        ..LoopConfig::default()
    };
    let llm = ScriptedLlm::new(&["TOOL_CALL: show_text|one"]);
    let mut chat = chat(toolbox_with(config), &llm);
    let mut told = 0;
    block_on(chat.send_traced("go", |e| {
        if let TraceEvent::Events(e) = e {
            told += e.len();
        }
    }))
    .unwrap();
    assert_eq!(told, 1);
}

#[test]
fn a_callers_smaller_budget_holds_for_its_turns_and_the_config_caps_a_larger_one() {
    let llm = ScriptedLlm::new(&["a", "b", "c"]);
    let mut s = chat(toolbox(), &llm);
    s.session_mut().limit_replies(Some(30));
    block_on(s.send("one")).unwrap();
    s.session_mut().limit_replies(Some(100_000));
    block_on(s.send("two")).unwrap();
    s.session_mut().limit_replies(None);
    block_on(s.send("three")).unwrap();
    let budgets: Vec<Option<u32>> = llm.requests().iter().map(|r| r.max_tokens).collect();
    assert_eq!(budgets, [Some(30), Some(512), Some(512)]);
}
