//! Writes the training data: requests drawn by seed from [`super::phrasings`]
//! run through fresh sessions of the API's agent (its six chat sets over a
//! database, its skills, its prompt) with the [`Teacher`] replying as the
//! node wants its model to. A session carries up to
//! [`MAX_TURNS_PER_SESSION`] requests, so later ones meet a set already
//! active (the tool in the prompt, state 3) and a history.
//!
//! A request for a tool of an inactive set is taught the ways seed 000 runs
//! it: `enable_toolset` then the call (drawn most); `read_skill` →
//! `enable_toolset` → the call; the call straight away (the loop activates
//! the set and runs a reading tool; an acting one answers "NOT executed
//! yet" and the same call is sent again); and, after a call whose arguments did not fit, the
//! loop's "NOT executed yet" activation and the retry (the wrong call is
//! played, not taught).
//!
//! Deterministic by seed: the same seed, turn count and languages give the
//! same examples, byte for byte (a fixed clock, a fresh database, a seeded
//! ChaCha stream).

use std::sync::Arc;

use porfiry_skills::session::parser::ToolCall;
use porfiry_skills::{Clock, Language, Llm, ManualClock, ToolEffect};
use porfiry_storage::db::Db;
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

use super::phrasings::{
    INTENTS, Intent, NO_TOOL_EN, NO_TOOL_RU, arithmetic, fill, is_scoring_request, slot_values,
};
use super::teacher::{Step, Teacher};
use super::{Example, ExampleKind};
use crate::chat::tool_use_run::api_agent;
use crate::chat::{ChatConfig, ChatEngine, ChatError, ChatSession};
use crate::llm::LlmTarget;

/// Requests one session carries before a fresh one starts: enough for a
/// set to be active and a history to exist, few enough that the prompt
/// stays the size people's short chats have.
pub const MAX_TURNS_PER_SESSION: u32 = 3;

/// Of 100 requests, how many need no tool: the scoring set has 17 of 61,
/// and a model must learn to answer plainly as surely as to call.
const NO_TOOL_PERCENT: u32 = 25;

/// Draws before giving up on finding a request that is not a scoring one
/// (a few collide; never this many in a row).
const MAX_DRAWS: u32 = 64;

/// The clock the data is written at: a fixed instant, moved by drawn
/// minutes per request, so time answers vary yet repeat by seed.
pub(super) const START_UNIX: i64 = 1_767_225_600; // 2026-01-01T00:00:00Z

/// Why data could not be written.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// The agent could not be built.
    #[error("the agent could not be built: {0}")]
    Agent(#[from] ChatError),
    /// No language to write in.
    #[error("no language to write the data in")]
    NoLanguage,
}

/// The data and what became of the requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    /// The examples, in order.
    pub examples: Vec<Example>,
    /// Requests run.
    pub turns: usize,
    /// Requests whose turn went another way than its script (left out).
    pub dropped: usize,
}

/// One language's agent and its teacher.
struct Agent {
    engine: ChatEngine,
    teacher: Arc<Teacher>,
    clock: ManualClock,
    session: Option<(ChatSession, u32)>,
}

/// `turns` requests, taken in turn from `languages`, drawn by `seed`; the
/// chat sets work on `db` (a fresh one gives the same data every time).
pub async fn generate(
    seed: u64,
    turns: usize,
    languages: &[Language],
    db: Db,
) -> Result<Generated, GenerateError> {
    if languages.is_empty() {
        return Err(GenerateError::NoLanguage);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut agents = Vec::new();
    for &language in languages {
        let teacher = Arc::new(Teacher::new());
        let config = ChatConfig {
            language,
            // The target is never called: the teacher is the model.
            ..ChatConfig::new(LlmTarget::new("http://127.0.0.1:9/v1", "teacher"))
        };
        let llm: Arc<dyn Llm> = teacher.clone();
        let clock = ManualClock::at(
            time::OffsetDateTime::from_unix_timestamp(START_UNIX)
                .unwrap_or(time::OffsetDateTime::UNIX_EPOCH),
            "UTC",
        );
        let shared: Arc<dyn Clock> = Arc::new(clock.clone());
        let engine = api_agent(&config, llm, db.clone())?.with_clock(shared);
        agents.push((
            language,
            Agent {
                engine,
                teacher,
                clock,
                session: None,
            },
        ));
    }
    let mut out = Generated {
        examples: Vec::new(),
        turns,
        dropped: 0,
    };
    for turn in 0..turns {
        let (language, agent) = &mut agents[turn % languages.len()];
        let language = *language;
        agent
            .clock
            .advance(time::Duration::minutes(i64::from(draw(&mut rng, 600))));
        let (session, used) = match agent.session.take() {
            Some((session, used)) if used < MAX_TURNS_PER_SESSION && draw(&mut rng, 2) == 0 => {
                (session, used)
            }
            _ => (agent.engine.session(), 0),
        };
        let mut session = session;
        let (request, script) = draw_turn(&mut rng, language, &agent.engine, &session);
        agent.teacher.script(script);
        let sent = session.send(&request).await;
        let (exchanges, off_script) = agent.teacher.take();
        if sent.is_err() || off_script {
            tracing::debug!(
                request,
                ?sent,
                "a teaching turn went off its script; left out"
            );
            out.dropped += 1;
            continue;
        }
        for (i, exchange) in exchanges.into_iter().enumerate() {
            if !exchange.taught {
                continue;
            }
            out.examples.push(Example {
                kind: if i == 0 {
                    ExampleKind::Request
                } else {
                    ExampleKind::Episode
                },
                language,
                system: exchange.request.system,
                messages: exchange.request.messages,
                reply: exchange.reply,
            });
        }
        agent.session = Some((session, used + 1));
    }
    Ok(out)
}

/// A number in `0..n`.
fn draw(rng: &mut ChaCha8Rng, n: u32) -> u32 {
    rng.next_u32() % n.max(1)
}

/// One of `items`.
fn pick<'a, T>(rng: &mut ChaCha8Rng, items: &'a [T]) -> &'a T {
    &items[draw(rng, items.len() as u32) as usize]
}

/// A request that is not a scoring one and the replies that serve it.
fn draw_turn(
    rng: &mut ChaCha8Rng,
    language: Language,
    engine: &ChatEngine,
    session: &ChatSession,
) -> (String, Vec<Step>) {
    for _ in 0..MAX_DRAWS {
        let (request, script) = if draw(rng, 100) < NO_TOOL_PERCENT {
            no_tool_turn(rng, language)
        } else {
            let intent = *pick(rng, INTENTS);
            tool_turn(rng, language, &intent, engine, session)
        };
        if !is_scoring_request(&request) {
            return (request, script);
        }
    }
    // Unreachable with the phrasings as they are (most never collide); a
    // plain greeting is still right rather than a scoring request.
    let (request, answer) = match language {
        Language::En => NO_TOOL_EN[0],
        Language::Ru => NO_TOOL_RU[0],
    };
    (request.to_owned(), vec![Step::Say(answer.to_owned())])
}

/// A request no tool serves and its plain answer.
fn no_tool_turn(rng: &mut ChaCha8Rng, language: Language) -> (String, Vec<Step>) {
    let (request, answer) = if draw(rng, 3) == 0 {
        arithmetic(
            language,
            2 + draw(rng, 40),
            2 + draw(rng, 40),
            draw(rng, 2) == 0,
        )
    } else {
        let (request, answer) = pick(
            rng,
            match language {
                Language::En => NO_TOOL_EN,
                Language::Ru => NO_TOOL_RU,
            },
        );
        ((*request).to_owned(), (*answer).to_owned())
    };
    (request, vec![Step::Say(answer)])
}

/// A request for `intent`'s tool and the route to it.
fn tool_turn(
    rng: &mut ChaCha8Rng,
    language: Language,
    intent: &Intent,
    engine: &ChatEngine,
    session: &ChatSession,
) -> (String, Vec<Step>) {
    let a = intent
        .a
        .map_or("", |slot| *pick(rng, slot_values(slot, language)));
    let b = intent
        .b
        .map_or("", |slot| *pick(rng, slot_values(slot, language)));
    let template: &&str = pick(rng, intent.requests(language));
    let request = fill(template, a, b);
    let call = Step::Say(ToolCall::new(intent.tool, &fill(intent.args, a, b)).line());
    let answer = Step::Report(fill(intent.answer(language), a, b));
    let toolbox = engine.toolbox();
    let Some(set) = toolbox
        .toolsets()
        .set_of(intent.tool)
        .map(|s| s.name().to_owned())
    else {
        // A core tool: always in the prompt.
        return (request, vec![call, answer]);
    };
    if session.active_toolsets().contains(&set) {
        return (request, vec![call, answer]);
    }
    let enable = Step::Say(ToolCall::new("enable_toolset", &set).line());
    let skill = toolbox
        .skills()
        .iter()
        .find(|s| s.toolset.as_deref() == Some(set.as_str()))
        .map(|s| s.name.clone());
    let needs_args = intent.args.contains("{a}");
    // A tool that acts on the world is not run by a call to an inactive set
    // (the loop activates the set and says "NOT executed yet"); the same
    // call, sent again, runs.
    let acts = toolbox
        .prepare(intent.tool, &fill(intent.args, a, b))
        .is_ok_and(|p| p.effect() != ToolEffect::Read);
    let script = match (draw(rng, 5), skill) {
        (2, Some(skill)) => vec![
            Step::Say(ToolCall::new("read_skill", &skill).line()),
            enable,
            call,
            answer,
        ],
        (3, _) if acts => vec![call.clone(), call, answer],
        (3, _) => vec![call, answer],
        // The call without its arguments: the loop activates the set and
        // says the call did NOT run; the retry is taught.
        (4, _) if needs_args => vec![
            Step::Mistake(ToolCall::new(intent.tool, "").line()),
            call,
            answer,
        ],
        _ => vec![enable, call, answer],
    };
    (request, script)
}
