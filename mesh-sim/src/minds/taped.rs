//! The model of a model-backed mind ([`TapedLlm`]): the `Llm` the mind's
//! core talks to, in front of the real model (live, every call recorded
//! for the tape) or of a tape (replay, no model reached). Both give the
//! core the same thing — the answer text, or an error whose words are the
//! recorded ones — so a replay is the recording bit for bit.
//!
//! Live calls wait for their model's `concurrency` permit and then for the
//! answer under this module's own deadlines, just under the core's (90 s
//! for the reflex questions, 11 min for the main call): a call that runs
//! out is a recorded error rather than the core's own timeout, which a
//! replay could not reproduce. Embeddings are never asked of the model
//! (the default `Llm::embed` says unsupported), so the stagnation detectors
//! compare words in both runs. [`OneModel`] hands the mind's one model to
//! its core and toolsets for every registry row, so no call bypasses it.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use porfiry_agent::cognition::models::ModelMaker;
use porfiry_skills::llm::{BoxFuture, Completion, Llm, LlmError, ModelRequest};
use porfiry_storage::LlmEntry;
use porfiry_toolsets::RowModels;
use tokio::sync::Semaphore;

use super::policy::is_main_call;
use super::tape::{TapeEntry, TapeReplay, WorldKey, prompt_hash};

/// A live main call gives up after this: a minute under the core's own
/// 11-minute deadline, so the core always sees this module's answer.
const MAIN_CALL_DEADLINE: Duration = Duration::from_secs(10 * 60);

/// A live reflex call (the evaluations, a validator) gives up after this:
/// ten seconds under the core's own 90 s for them.
const REFLEX_CALL_DEADLINE: Duration = Duration::from_secs(80);

/// Most model calls one mind makes in one step: a tick asks the main
/// model once, two evaluations and one question per validator; 64 leaves
/// room for 60 validators. Past it a call is refused in both runs alike,
/// which keeps each step's recorded calls bounded.
pub const MAX_CALLS_PER_STEP: u32 = 64;

/// Which step a mind is in, and how many calls it has made in it.
#[derive(Debug, Default)]
pub(crate) struct Cursor {
    tick: AtomicU64,
    call: AtomicU32,
}

impl Cursor {
    /// The mind starts step `tick`.
    pub(crate) fn start(&self, tick: u64) {
        self.tick.store(tick, Ordering::SeqCst);
        self.call.store(0, Ordering::SeqCst);
    }
}

/// Where a model-backed mind's answers come from.
#[derive(Clone)]
pub(crate) enum Source {
    /// The real model, at most `limit` calls of it in flight.
    Live {
        /// The client (HTTP or the embedded engine).
        inner: Arc<dyn Llm>,
        /// Its `concurrency` permits, shared by all its minds.
        limit: Arc<Semaphore>,
    },
    /// A tape.
    Replay(Arc<TapeReplay>),
}

/// The model one model-backed mind talks to.
pub(crate) struct TapedLlm {
    /// The model's `name` in the scenario.
    pub(crate) name: String,
    mind: usize,
    world: WorldKey,
    pub(crate) cursor: Cursor,
    source: Source,
    /// Live calls of the current step, for the tape.
    calls: Mutex<Vec<TapeEntry>>,
}

impl TapedLlm {
    /// Mind `mind`'s model `name` in `world`, answering from `source`.
    pub(crate) fn new(name: String, mind: usize, world: WorldKey, source: Source) -> Self {
        Self {
            name,
            mind,
            world,
            cursor: Cursor::default(),
            source,
            calls: Mutex::new(Vec::new()),
        }
    }

    /// The live calls made since the last take, in call order.
    pub(crate) fn take_calls(&self) -> Vec<TapeEntry> {
        let mut calls =
            std::mem::take(&mut *self.calls.lock().unwrap_or_else(PoisonError::into_inner));
        calls.sort_by_key(|e| e.call);
        calls
    }

    async fn live(
        &self,
        inner: &Arc<dyn Llm>,
        limit: &Semaphore,
        request: &ModelRequest,
    ) -> Result<String, String> {
        let deadline = if is_main_call(request) {
            MAIN_CALL_DEADLINE
        } else {
            REFLEX_CALL_DEADLINE
        };
        let call = async {
            // The semaphore is never closed; a closed one would only mean
            // no limit.
            let _permit = limit.acquire().await;
            inner.complete(request).await
        };
        match tokio::time::timeout(deadline, call).await {
            Ok(Ok(completion)) => Ok(completion.text),
            Ok(Err(e)) => Err(e.to_string().replace('\n', " ")),
            Err(_) => Err(format!(
                "no answer within {} s (mesh-sim's deadline)",
                deadline.as_secs()
            )),
        }
    }
}

impl Llm for TapedLlm {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Completion, LlmError>> {
        // Numbered when asked, not when answered: the core asks in a fixed
        // order, the model may answer in any.
        let tick = self.cursor.tick.load(Ordering::SeqCst);
        let call = self.cursor.call.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            if call >= MAX_CALLS_PER_STEP {
                return Err(LlmError::NoModel(format!(
                    "more than {MAX_CALLS_PER_STEP} model calls in one step"
                )));
            }
            let prompt = prompt_hash(request);
            let outcome = match &self.source {
                Source::Live { inner, limit } => {
                    let outcome = self.live(inner, limit, request).await;
                    let (reply, error) = match &outcome {
                        Ok(text) => (Some(text.clone()), None),
                        Err(e) => (None, Some(e.clone())),
                    };
                    self.calls
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(TapeEntry {
                            seed: self.world.seed,
                            sharing: self.world.sharing,
                            node: self.mind,
                            tick,
                            call,
                            model: self.name.clone(),
                            prompt,
                            reply,
                            error,
                        });
                    outcome
                }
                Source::Replay(tape) => tape
                    .answer(self.world, self.mind, tick, &prompt, &self.name)
                    .unwrap_or_else(|| Err("the tape holds no answer to this call".into())),
            };
            outcome.map(Completion::text).map_err(LlmError::NoModel)
        })
    }

    fn model_name(&self) -> String {
        self.name.clone()
    }
}

/// One model for every registry row: a mind's core and toolsets reach
/// nothing but it (its scripted policy or its taped model).
pub(crate) struct OneModel(pub(crate) Arc<dyn Llm>);

impl ModelMaker for OneModel {
    fn make(&self, _: &LlmEntry) -> Result<Arc<dyn Llm>, LlmError> {
        Ok(self.0.clone())
    }
}

impl RowModels for OneModel {
    fn model(&self, _: &LlmEntry) -> Result<Arc<dyn Llm>, LlmError> {
        Ok(self.0.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers with the request's system prompt, or fails when it is "fail".
    struct Echo;

    impl Llm for Echo {
        fn complete<'a>(
            &'a self,
            request: &'a ModelRequest,
        ) -> BoxFuture<'a, Result<Completion, LlmError>> {
            Box::pin(async move {
                if request.system == "fail" {
                    return Err(LlmError::NoModel("down\nfor now".into()));
                }
                Ok(Completion::text(format!("echo {}", request.system)))
            })
        }
    }

    #[tokio::test]
    async fn live_calls_are_numbered_recorded_and_errors_kept_in_one_line() {
        let world = WorldKey {
            seed: 2,
            sharing: true,
        };
        let llm = TapedLlm::new(
            "m".into(),
            3,
            world,
            Source::Live {
                inner: Arc::new(Echo),
                limit: Arc::new(Semaphore::new(1)),
            },
        );
        llm.cursor.start(7);
        let ok = ModelRequest::new("hi".into(), Vec::new(), None);
        let bad = ModelRequest::new("fail".into(), Vec::new(), None);
        assert_eq!(llm.complete(&ok).await.unwrap().text, "echo hi");
        let e = llm.complete(&bad).await.unwrap_err().to_string();
        assert_eq!(e, "down for now");
        let calls = llm.take_calls();
        assert_eq!(calls.len(), 2);
        assert_eq!((calls[0].node, calls[0].tick, calls[0].call), (3, 7, 0));
        assert_eq!(calls[0].reply.as_deref(), Some("echo hi"));
        assert_eq!(calls[0].prompt, prompt_hash(&ok));
        assert_eq!(calls[1].error.as_deref(), Some("down for now"));
        assert!(llm.take_calls().is_empty());
        llm.cursor.start(8);
        llm.complete(&ok).await.unwrap();
        assert_eq!(llm.take_calls()[0].call, 0, "numbering restarts each step");
    }
}
