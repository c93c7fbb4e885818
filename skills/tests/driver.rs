//! The driver and the tool half of the state machine: `Step::RunTool` and
//! `tool_output`, the per-call deadline (virtual time, nothing sleeps),
//! arguments by name, the call context, summed token counts, streaming
//! through the gate, and replacing the history.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Notes, ScriptedLlm, clock, settle};
use futures::StreamExt;
use porfiry_skills::{
    Action, ArgSpec, Args, BoxFuture, CallContext, Caller, ChatMessage, ChatSession, Clock,
    Completion, Delta, DeltaStream, Language, Llm, LlmError, LoopConfig, ModelRequest, ResultKind,
    Session, SessionError, SkillRegistry, Step, ToolCall, ToolEffect, ToolOutput, ToolSpec,
    Toolbox, Toolset, ToolsetRegistry, TraceEvent, Usage,
};

/// `slow_wait` never finishes; `slow_who` reports its call context.
struct Slow {
    tools: Vec<ToolSpec>,
}

impl Slow {
    fn new() -> Self {
        Self {
            tools: vec![
                ToolSpec::new("slow_wait", "waits forever", vec![], ToolEffect::Read),
                ToolSpec::new(
                    "slow_who",
                    "who is calling",
                    vec![ArgSpec::word("tag").optional()],
                    ToolEffect::Read,
                ),
            ],
        }
    }
}

impl Toolset for Slow {
    fn name(&self) -> &str {
        "slow"
    }
    fn summary(&self) -> &str {
        "slow things"
    }
    fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }
    fn call<'a>(
        &'a self,
        tool: &'a str,
        _args: &'a Args,
        ctx: &'a CallContext,
    ) -> BoxFuture<'a, ToolOutput> {
        match tool {
            "slow_wait" => Box::pin(std::future::pending()),
            _ => Box::pin(std::future::ready(ToolOutput::ok(format!(
                "{} {:?} {} {}",
                ctx.session,
                ctx.caller,
                ctx.now.iso8601(),
                ctx.language
            )))),
        }
    }
}

fn toolbox() -> Arc<Toolbox> {
    let mut sets = ToolsetRegistry::new();
    sets.register(Slow::new()).unwrap();
    sets.register(Notes::new()).unwrap();
    Arc::new(Toolbox::new(
        sets,
        SkillRegistry::new(),
        LoopConfig::default(),
    ))
}

fn chat(llm: impl Llm + 'static) -> ChatSession {
    ChatSession::new(toolbox(), Arc::new(llm), Arc::new(clock()))
}

#[tokio::test(start_paused = true)]
async fn a_tool_that_hangs_past_its_deadline_fails_and_the_turn_goes_on() {
    let llm = ScriptedLlm::new(&["TOOL_CALL: slow_wait", "It took too long, sorry."]);
    let mut chat = chat(llm.clone()).with_tool_timeout(Duration::from_secs(5));
    let actions = Arc::new(Mutex::new(Vec::new()));
    let seen = actions.clone();
    let started = tokio::time::Instant::now();
    let reply = chat
        .send_traced("wait for it", move |e| {
            if let TraceEvent::Action(a) = e {
                seen.lock().unwrap().push(a.clone());
            }
        })
        .await
        .unwrap();
    assert_eq!(
        started.elapsed(),
        Duration::from_secs(5),
        "virtual time ran exactly to the deadline"
    );
    assert_eq!(reply.text, "It took too long, sorry.");
    let result = "slow_wait did not finish within 5 s and was stopped; \
                  try again later or answer without it";
    assert_eq!(
        llm.requests()[1].messages.last().unwrap().content,
        format!("TOOL_RESULT slow_wait: {result}")
    );
    assert_eq!(
        actions.lock().unwrap()[0],
        Action::Tool {
            call: ToolCall::new("slow_wait", ""),
            result: result.into(),
            kind: ResultKind::ActivatedAndExecuted,
            ok: false,
        }
    );
}

#[test]
fn the_timeout_text_is_russian_in_a_russian_session() {
    assert_eq!(
        porfiry_skills::texts::tool_timed_out(Language::Ru, "slow_wait", 20),
        "slow_wait не завершился за 20 с и был остановлен; попробуй позже или ответь без него"
    );
}

#[test]
fn run_tool_is_emitted_and_tool_output_continues_the_turn() {
    let c = clock();
    let mut s = Session::new(toolbox());
    s.user_message("my notes?", &c.now());
    let Step::RunTool(run) = s.model_reply("TOOL_CALL: notes_list", &c.now()).unwrap() else {
        panic!("expected a tool run")
    };
    assert_eq!(run.call, ToolCall::new("notes_list", ""));
    assert_eq!(run.prepared.tool(), "notes_list");
    assert_eq!(run.prepared.effect(), ToolEffect::Read);
    assert!(s.awaiting_tool() && !s.awaiting_model());
    assert_eq!(
        s.model_reply("too early", &c.now()),
        Err(SessionError::NoModelCallPending)
    );
    let Step::CallModel(request) = s
        .tool_output(ToolOutput::failed("database locked"), &c.now())
        .unwrap()
    else {
        panic!("expected the next model call")
    };
    assert_eq!(
        request.messages[1..],
        [
            ChatMessage::assistant("TOOL_CALL: notes_list"),
            ChatMessage::user("TOOL_RESULT notes_list: database locked"),
        ]
    );
    assert!(matches!(
        s.last_action(),
        Some(Action::Tool {
            ok: false,
            kind: ResultKind::ActivatedAndExecuted,
            ..
        })
    ));
    assert_eq!(
        s.tool_output(ToolOutput::ok("again"), &c.now()),
        Err(SessionError::NoToolRunPending)
    );
    assert!(matches!(
        s.model_reply("Locked.", &c.now()),
        Ok(Step::Done(_))
    ));
}

#[test]
fn named_arguments_bind_and_bad_ones_get_the_positional_text() {
    let c = clock();
    let mut s = Session::new(toolbox());
    s.user_message("mark it", &c.now());
    let step = s
        .model_reply("TOOL_CALL: enable_toolset|notes", &c.now())
        .unwrap();
    settle(&mut s, step, &c.now());
    let step = s
        .model_reply(
            r#"TOOL_CALL: notes_mark|{"state": "Open", "n": 3}"#,
            &c.now(),
        )
        .unwrap();
    settle(&mut s, step, &c.now());
    assert_eq!(
        s.history().last().unwrap().content,
        "TOOL_RESULT notes_mark: note 3 is open"
    );
    s.model_reply(r#"TOOL_CALL: notes_mark|{"n": "seven"}"#, &c.now())
        .unwrap();
    let named = s.history().last().unwrap().content.clone();
    s.model_reply("TOOL_CALL: notes_mark|seven", &c.now())
        .unwrap();
    let positional = s.history().last().unwrap().content.clone();
    assert_eq!(
        named,
        "TOOL_RESULT notes_mark: arguments invalid, expected: notes_mark|n(number)|[state(done/open)]"
    );
    assert_eq!(named, positional);
}

#[tokio::test]
async fn tools_see_the_session_the_caller_and_the_injected_time() {
    let llm = ScriptedLlm::new(&["TOOL_CALL: slow_who", "Done."]);
    let mut chat = chat(llm.clone()).with_identity(
        "s7",
        Caller::ApiClient {
            client: "webui".into(),
        },
    );
    chat.send("who?").await.unwrap();
    assert_eq!(
        llm.requests()[1].messages.last().unwrap().content,
        "TOOL_RESULT slow_who: s7 ApiClient { client: \"webui\" } 2026-08-22T14:05:00+03:00 en"
    );
}

/// Answers from a script with fixed token counts, streaming each reply in
/// pieces of three characters.
#[derive(Clone)]
struct Chunky {
    inner: ScriptedLlm,
}

impl Llm for Chunky {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Completion, LlmError>> {
        Box::pin(async move {
            let mut c = self.inner.complete(request).await?;
            c.usage = Some(Usage::new(100, 7));
            Ok(c)
        })
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<DeltaStream, LlmError>> {
        Box::pin(async move {
            let c = self.complete(request).await?;
            let chars: Vec<char> = c.text.chars().collect();
            let mut items: Vec<Result<Delta, LlmError>> = chars
                .chunks(3)
                .map(|p| Ok(Delta::Text(p.iter().collect())))
                .collect();
            items.push(Ok(Delta::Done {
                finish_reason: Some("stop".into()),
                usage: c.usage,
                served_by: c.served_by,
            }));
            let stream: DeltaStream = Box::pin(futures::stream::iter(items));
            Ok(stream)
        })
    }
}

#[tokio::test]
async fn usage_is_summed_over_the_rounds_and_absent_when_never_reported() {
    let inner = ScriptedLlm::new(&["TOOL_CALL: notes_list", "One note."]);
    let mut chat_with = chat(Chunky { inner });
    let reply = chat_with.send("notes?").await.unwrap();
    assert_eq!(reply.usage, Some(Usage::new(200, 14)));
    let mut chat_without = chat(ScriptedLlm::new(&["Hi."]));
    assert_eq!(chat_without.send("hi").await.unwrap().usage, None);
}

/// Says each reply was cut by the length limit unless it is a call.
/// A scripted model whose completions `edit` changes, told whether each
/// is a tool call: how a model that stops early, or a friend's model, differs.
struct Edited {
    inner: ScriptedLlm,
    edit: fn(&mut Completion, bool),
}

impl Llm for Edited {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Completion, LlmError>> {
        Box::pin(async move {
            let mut c = self.inner.complete(request).await?;
            let is_call = c.text.contains("TOOL_CALL");
            (self.edit)(&mut c, is_call);
            Ok(c)
        })
    }
}

/// A model cut short on its answer (it stopped at its length limit).
fn cut(inner: ScriptedLlm) -> Edited {
    Edited {
        inner,
        edit: |c, is_call| c.finish_reason = Some(if is_call { "stop" } else { "length" }.into()),
    }
}

/// A friend's model: says which friend wrote each reply (one for the tool
/// round, another for the answer, as failover between calls can give).
fn friends(inner: ScriptedLlm) -> Edited {
    Edited {
        inner,
        edit: |c, is_call| {
            let friend = if is_call { "call" } else { "answer" };
            c.served_by = Some(format!("12D3KooW{friend}"));
        },
    }
}

#[tokio::test]
async fn the_reply_says_why_the_last_model_call_stopped() {
    let inner = ScriptedLlm::new(&["TOOL_CALL: notes_list", "One note, and then the"]);
    let mut cut = chat(cut(inner));
    let reply = cut.send("notes?").await.unwrap();
    assert_eq!(reply.finish_reason.as_deref(), Some("length"));
    let mut plain = chat(ScriptedLlm::new(&["Hi."]));
    assert_eq!(plain.send("hi").await.unwrap().finish_reason, None);
}

#[tokio::test]
async fn the_reply_names_the_friend_whose_model_wrote_the_answer() {
    let script = ["TOOL_CALL: notes_list", "One note."];
    let mut plain = chat(friends(ScriptedLlm::new(&script)));
    let reply = plain.send("notes?").await.unwrap();
    assert_eq!(reply.served_by.as_deref(), Some("12D3KooWanswer"));
    // Streamed: the final Done carries it (the default stream).
    let mut streamed = chat(friends(ScriptedLlm::new(&script)));
    let (tx, rx) = futures::channel::mpsc::channel(8);
    let (reply, _) = futures::join!(
        streamed.send_streaming("notes?", tx),
        rx.collect::<Vec<_>>()
    );
    assert_eq!(reply.unwrap().served_by.as_deref(), Some("12D3KooWanswer"));
    // The node's own model names no one.
    let mut own = chat(ScriptedLlm::new(&["Hi."]));
    assert_eq!(own.send("hi").await.unwrap().served_by, None);
}

#[tokio::test]
async fn a_streamed_turn_shows_the_answer_but_never_a_call_or_a_thought() {
    let inner = ScriptedLlm::new(&[
        "Let me look.\nTOOL_CALL: notes_list",
        "<think>one note</think>\nYou have **one note**: buy milk.",
    ]);
    let mut chat = chat(Chunky { inner });
    // Capacity 1: the turn waits on a slow reader instead of piling up text.
    let (tx, rx) = futures::channel::mpsc::channel(1);
    let (reply, pieces) = futures::join!(chat.send_streaming("notes?", tx), rx.collect::<Vec<_>>());
    let reply = reply.unwrap();
    assert_eq!(reply.text, "You have **one note**: buy milk.");
    assert!(pieces.len() > 3, "sent as it came: {pieces:?}");
    assert_eq!(
        pieces.concat(),
        "Let me look.You have **one note**: buy milk.",
        "text before a call's marker is the documented exception"
    );
    assert_eq!(chat.session().history()[3].content, reply.text);
}

#[tokio::test]
async fn a_gone_receiver_stops_the_stream_not_the_turn() {
    let inner = ScriptedLlm::new(&["A long answer in many pieces."]);
    let mut chat = chat(Chunky { inner });
    let (tx, rx) = futures::channel::mpsc::channel(1);
    drop(rx);
    let reply = chat.send_streaming("hi", tx).await.unwrap();
    assert_eq!(reply.text, "A long answer in many pieces.");
}

#[test]
fn replace_history_keeps_activation_and_drops_the_turn() {
    let c = clock();
    let mut s = Session::new(toolbox());
    s.user_message("notes", &c.now());
    s.model_reply("TOOL_CALL: enable_toolset|notes", &c.now())
        .unwrap();
    let edited = vec![ChatMessage::user("hi"), ChatMessage::assistant("hello")];
    s.replace_history(edited.clone());
    assert_eq!(s.history(), &edited[..]);
    assert!(!s.awaiting_model());
    assert!(s.activation().is_active("notes"));
    let Step::CallModel(r) = s.user_message("and now?", &c.now()) else {
        panic!()
    };
    assert_eq!(r.messages[..2], edited[..]);
    assert!(r.system.contains("Active toolsets: notes."));
}
