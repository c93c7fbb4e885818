//! Exact tests of the tick machine: no model, no clock, no database.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::*;
use crate::cognition::context::BuiltPrompt;
use crate::cognition::votes::Thresholds;
use crate::llm::{ChatMessage, ModelRequest};
use crate::texts::Language;
use crate::tools::ToolEffect;

fn start(previous: Option<&str>, validators: &[&str]) -> TickStart {
    let effects: BTreeMap<String, ToolEffect> = [
        ("diary_add", ToolEffect::Write),
        ("diary_list", ToolEffect::Read),
        ("messages_send", ToolEffect::Network),
    ]
    .into_iter()
    .map(|(n, e)| (n.to_owned(), e))
    .collect();
    TickStart {
        tick: 7,
        started_ms: 1_000,
        prompt: BuiltPrompt {
            request: ModelRequest {
                system: "core".into(),
                messages: vec![ChatMessage::user("context 1-6")],
                max_tokens: None,
                grammar: None,
                stop: Vec::new(),
            },
            tokens: 42,
            cut: vec![],
            shown_processes: vec![],
        },
        previous_reply: previous.map(str::to_owned),
        emotions: vec!["joy".into()],
        validators: validators.iter().map(|v| (*v).to_owned()).collect(),
        main_model: "main".into(),
        main_aliases: Vec::new(),
        thresholds: Thresholds::default(),
        effects: Arc::new(effects),
        language: Language::En,
    }
}

fn finish(tick: &mut Tick, now: u64) -> TickReport {
    match tick.next(now) {
        TickStep::Finish(report) => *report,
        other => panic!("expected Finish, got {other:?}"),
    }
}

const REPLY: &str =
    "A thought.\nTOOL_CALL: diary_add|a thought\nTOOL_CALL: diary_list\nTOOL_CALL: nosuch_tool|x";

#[test]
fn a_first_reply_without_validators_runs_its_known_commands_with_auto_pass() {
    let mut tick = Tick::new(start(None, &[]));
    let TickStep::CallModel(request) = tick.next(1_000) else {
        panic!("first step calls the model")
    };
    assert_eq!(request.system, "core");
    tick.model_answered(Ok(REPLY.into()));
    let TickStep::Reflect(reflection) = tick.next(1_100) else {
        panic!("then the reflexes")
    };
    assert!(
        reflection.cognitive.is_none(),
        "nothing to compare a first reply with"
    );
    assert!(reflection.validators.is_empty());
    tick.reflected(ReflectionAnswers {
        cognitive: None,
        emotional: Some(Ok(r#"["joy:2", "curiosity:4"]"#.into())),
        validators: vec![],
    });
    let TickStep::Run(commands) = tick.next(1_200) else {
        panic!("then the validated commands")
    };
    let tools: Vec<&str> = commands.iter().map(|c| c.tool.as_str()).collect();
    assert_eq!(
        tools,
        ["diary_add", "diary_list"],
        "the unknown tool never runs"
    );
    tick.ran(vec![
        RunResult {
            ok: true,
            output: "added diary #1".into(),
        },
        RunResult {
            ok: true,
            output: "1 entry".into(),
        },
    ]);
    let report = finish(&mut tick, 1_500);
    assert_eq!(report.duration_ms, 500);
    assert_eq!(report.executed(), 2);
    assert_eq!(report.commands[2].outcome, CommandOutcome::UnknownTool);
    assert_eq!(report.model_calls, 2, "main + emotional");
    let validation = report.validation.unwrap();
    assert!(validation.auto_pass);
    let reflex = report.reflex.unwrap();
    assert_eq!(
        reflex.evaluation.novelty,
        Some(1.0),
        "a first reply is all new"
    );
    assert!(!reflex.evaluation.fallback);
    assert_eq!(reflex.reflection, "", "nothing to compare it with");
    assert_eq!(
        reflex.emotion_list,
        Some(vec!["joy".to_owned(), "curiosity".to_owned()]),
        "a new emotion joins the list"
    );
    assert_eq!(report.observation.unwrap().commands.len(), 3);
}

#[test]
fn a_repeated_reply_fires_the_reflex_without_more_calls_or_commands() {
    let mut tick = Tick::new(start(Some(REPLY), &["judge"]));
    let _ = tick.next(1_000);
    tick.model_answered(Ok(format!("  {REPLY}  ")));
    let report = finish(&mut tick, 1_010);
    assert!(report.repeat);
    assert_eq!(report.model_calls, 1);
    assert!(report.reflex.is_none() && report.validation.is_none());
    assert!(
        report
            .commands
            .iter()
            .all(|c| c.outcome == CommandOutcome::SkippedRepeat)
    );
    assert_eq!(report.observation.unwrap().novelty, 0.0);
}

#[test]
fn a_reworded_reply_evaluated_as_novelty_0_fires_the_reflex_too() {
    let mut tick = Tick::new(start(Some("An older thought, said once."), &[]));
    let _ = tick.next(1_000);
    tick.model_answered(Ok(REPLY.into()));
    let TickStep::Reflect(_) = tick.next(1_000) else {
        panic!("not byte-identical: it is evaluated")
    };
    tick.reflected(ReflectionAnswers {
        cognitive: Some(Ok(
            r#"{"novel": "no", "novelty": 0, "new_ideas": [], "tags": ["loop"]}"#.into(),
        )),
        emotional: Some(Ok("[]".into())),
        validators: vec![],
    });
    let report = finish(&mut tick, 1_000);
    assert!(report.repeat, "seed §5: novelty 0 is the reflex");
    assert!(
        report
            .commands
            .iter()
            .all(|c| c.outcome == CommandOutcome::SkippedRepeat),
        "{:?}",
        report.commands
    );
    assert_eq!(report.executed(), 0);
    assert_eq!(report.observation.unwrap().novelty, 0.0);

    // Any novelty above 0 is a new reply whose commands run.
    let mut tick = Tick::new(start(Some("An older thought, said once."), &[]));
    let _ = tick.next(1_000);
    tick.model_answered(Ok(REPLY.into()));
    let _ = tick.next(1_000);
    tick.reflected(ReflectionAnswers {
        cognitive: Some(Ok(r#"{"novel": "yes", "novelty": 0.1}"#.into())),
        emotional: Some(Ok("[]".into())),
        validators: vec![],
    });
    assert!(matches!(tick.next(1_000), TickStep::Run(_)));
}

#[test]
fn an_evaluation_without_a_novelty_judgement_keeps_the_replys_commands() {
    // Tags and refined ideas, but no score, no yes/no and no new ideas:
    // the novelty is unknown, not 0, so the low-novelty reflex must not
    // fire and the reply's commands go on to validation.
    for answer in [
        r#"{"refined_ideas": ["catch-up"], "tags": ["mesh"]}"#,
        r#"{"доработанные идеи": ["синхронизация"], "теги": ["сеть"]}"#,
    ] {
        let mut tick = Tick::new(start(Some("An older thought, said once."), &[]));
        let _ = tick.next(1_000);
        tick.model_answered(Ok(REPLY.into()));
        let _ = tick.next(1_000);
        tick.reflected(ReflectionAnswers {
            cognitive: Some(Ok(answer.into())),
            emotional: Some(Ok("[]".into())),
            validators: vec![],
        });
        let step = tick.next(1_000);
        let TickStep::Run(commands) = step else {
            panic!("{answer}: the commands should run, got {step:?}")
        };
        let tools: Vec<&str> = commands.iter().map(|c| c.tool.as_str()).collect();
        assert_eq!(tools, ["diary_add", "diary_list"], "{answer}");
    }
}

#[test]
fn a_model_error_finishes_the_tick_with_the_error() {
    let mut tick = Tick::new(start(None, &[]));
    let _ = tick.next(1_000);
    tick.model_answered(Err("connection refused".into()));
    let report = finish(&mut tick, 1_000);
    assert_eq!(report.error.as_deref(), Some("connection refused"));
    assert!(report.reply.is_none() && report.commands.is_empty());
    assert!(report.observation.is_none());
}

#[test]
fn a_validator_voting_minus_3_keeps_every_command_from_running() {
    let mut tick = Tick::new(start(Some("an older thought"), &["judge", "late"]));
    let _ = tick.next(1_000);
    tick.model_answered(Ok(REPLY.into()));
    let TickStep::Reflect(reflection) = tick.next(1_000) else {
        panic!()
    };
    assert!(reflection.cognitive.is_some());
    assert_eq!(reflection.validators.len(), 2);
    tick.reflected(ReflectionAnswers {
        cognitive: Some(Err("timeout".into())),
        emotional: Some(Err("timeout".into())),
        validators: vec![
            ("judge".into(), Ok("-3".into())),
            ("late".into(), Err("no answer within 90 s".into())),
        ],
    });
    let report = finish(&mut tick, 1_000);
    let v = report.validation.clone().unwrap();
    assert_eq!(v.rating, -3.0);
    assert!(!v.auto_pass);
    assert_eq!(report.model_calls, 1 + 2 + 2);
    assert_eq!(
        report.commands[0].outcome,
        CommandOutcome::NotValidated {
            rating: -3.0,
            needed: 1.0
        }
    );
    assert_eq!(
        report.commands[1].outcome,
        CommandOutcome::NotValidated {
            rating: -3.0,
            needed: 0.0
        }
    );
    assert!(
        report.reflex.unwrap().evaluation.fallback,
        "unusable evaluation → lexical"
    );
}

#[test]
fn a_command_block_binds_as_one_json_object() {
    let mut tick = Tick::new(start(None, &[]));
    let _ = tick.next(0);
    tick.model_answered(Ok(
        "# Commands:\n{\"cmd_id\": \"c1\", \"type\": \"diary_add\", \"args\": {\"text\": \"x\"}}\n# End of commands".into(),
    ));
    let _ = tick.next(0);
    tick.reflected(ReflectionAnswers::default());
    let TickStep::Run(commands) = tick.next(0) else {
        panic!()
    };
    assert_eq!(commands[0].cmd_id.as_deref(), Some("c1"));
    assert_eq!(raw_args(&commands[0]), r#"{"text":"x"}"#);
}
