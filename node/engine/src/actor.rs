//! The inference thread: it loads the model, makes its one context and then
//! answers queued requests one at a time. It owns both because llama.cpp's
//! context borrows the model and may not be shared between threads.
//!
//! Prefix reuse: the tokens now in the KV cache are remembered; a new
//! prompt keeps the cache up to the first token that differs and decodes
//! only the rest (the seed's prompts are built so that the same state gives
//! the same bytes, so a second turn decodes little more than what is new).
//!
//! A request's grammar ([`ModelRequest::grammar`], GBNF) constrains the
//! answer: each token is sampled as usual, then checked against the grammar
//! alone; only a token the grammar refuses makes the grammar mask every
//! candidate and the sampling run again (llama.cpp's own order of work, so
//! most tokens cost one check, not a pass over the whole vocabulary). A
//! grammar llama.cpp cannot parse fails the request before its prompt is
//! read. Stop texts ([`ModelRequest::stop`]) end the answer where they start.

use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, OnceLock};

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use porfiry_skills::llm::{Delta, LlmError, ModelRequest, Role, Usage};

use crate::chat_template::ChatTemplate;
use crate::engine::{EngineError, Job, Work};
use crate::options::{EngineOptions, PROMPT_BATCH};
use crate::stats::Counters;
use crate::stops::Stops;
use crate::template_choice::TemplateChoice;
use crate::utf8::Utf8Joiner;

/// The one sequence this engine decodes.
const SEQ: i32 = 0;

/// Sampling beyond greedy: llama.cpp's own defaults for its server.
const TOP_K: i32 = 40;
const TOP_P: f32 = 0.95;
const MIN_P: f32 = 0.05;

/// The rule a request's grammar starts from (GBNF's convention, and what
/// `porfiry_skills::grammar` writes).
pub(crate) const GRAMMAR_ROOT: &str = "root";

/// What the thread reports once the model is loaded.
pub(crate) struct Loaded {
    pub(crate) context: u32,
    pub(crate) threads: usize,
}

/// llama.cpp's backend, initialised once per process (a second init fails).
pub(crate) fn backend() -> Result<&'static LlamaBackend, String> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            llama_cpp_2::send_logs_to_tracing(llama_cpp_2::LogOptions::default());
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Starts the thread; returns its queue once the model is loaded.
pub(crate) fn spawn(
    path: PathBuf,
    options: EngineOptions,
    template: &TemplateChoice,
    counters: Arc<Counters>,
) -> Result<(SyncSender<Work>, Loaded), EngineError> {
    let (jobs, queue) = sync_channel(options.queue_depth);
    let (ready_tx, ready_rx) = sync_channel(1);
    let thread_path = path.clone();
    let template = template.clone();
    std::thread::Builder::new()
        .name("porfiry-engine".into())
        .spawn(move || run(thread_path, options, template, counters, queue, ready_tx))
        .map_err(|e| EngineError::Load {
            path: path.clone(),
            detail: format!("could not start the inference thread: {e}"),
        })?;
    match ready_rx.recv() {
        Ok(Ok(loaded)) => Ok((jobs, loaded)),
        Ok(Err(detail)) => Err(EngineError::Load { path, detail }),
        Err(_) => Err(EngineError::Load {
            path,
            detail: "the inference thread ended while loading".into(),
        }),
    }
}

fn run(
    path: PathBuf,
    options: EngineOptions,
    choice: TemplateChoice,
    counters: Arc<Counters>,
    queue: Receiver<Work>,
    ready: SyncSender<Result<Loaded, String>>,
) {
    let loaded = (|| {
        let backend = backend()?;
        let model = LlamaModel::load_from_file(backend, &path, &LlamaModelParams::default())
            .map_err(|e| format!("{e} (is it a model llama.cpp supports?)"))?;
        let template = ChatTemplate::for_model(&model, &choice.template)?;
        tracing::debug!(path = %path.display(), template = %choice, "chat template chosen");
        Ok::<_, String>((backend, model, template))
    })();
    let (backend, model, template) = match loaded {
        Ok(parts) => parts,
        Err(detail) => {
            let _ = ready.send(Err(detail));
            return;
        }
    };
    let context = model.n_ctx_train().clamp(1, options.context_cap.max(1));
    let threads = options.thread_count();
    let threads_c = i32::try_from(threads).unwrap_or(i32::MAX);
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(context))
        .with_n_batch(PROMPT_BATCH)
        .with_n_ubatch(PROMPT_BATCH)
        .with_n_threads(threads_c)
        .with_n_threads_batch(threads_c);
    let mut ctx = match model.new_context(backend, params) {
        Ok(ctx) => ctx,
        Err(e) => {
            let _ = ready.send(Err(format!("could not make its context: {e}")));
            return;
        }
    };
    if ready.send(Ok(Loaded { context, threads })).is_err() {
        return;
    }
    let mut session = Session {
        model: &model,
        template,
        options,
        cached: Vec::new(),
        batch: LlamaBatch::new(PROMPT_BATCH as usize, 1),
        counters: &counters,
    };
    while let Ok(work) = queue.recv() {
        match work {
            Work::Answer(job) => {
                let cancelled = session.answer(&mut ctx, job);
                counters.finish(cancelled);
            }
            Work::Embed(job) => {
                let vectors = crate::embed::embed(backend, &model, &job.texts, threads_c);
                // A caller that gave up does not need them.
                let _ = job.reply.send(vectors);
            }
        }
    }
    tracing::debug!(path = %path.display(), "embedded model unloaded");
}

/// The thread's state between requests.
struct Session<'m> {
    model: &'m LlamaModel,
    template: ChatTemplate,
    options: EngineOptions,
    /// The tokens the KV cache holds, in order.
    cached: Vec<LlamaToken>,
    batch: LlamaBatch<'static>,
    counters: &'m Counters,
}

/// How one answer ended.
enum End {
    /// The answer is complete: finish reason and usage.
    Done(&'static str, Usage),
    /// The reader dropped the stream.
    Cancelled,
}

impl Session<'_> {
    /// Answers `job`; returns whether its reader went away first.
    fn answer(&mut self, ctx: &mut LlamaContext<'_>, job: Job) -> bool {
        let Job { request, deltas } = job;
        if deltas.is_closed() {
            return true;
        }
        match self.generate(ctx, &request, &deltas) {
            Ok(End::Done(reason, usage)) => {
                let done = Delta::Done {
                    finish_reason: Some(reason.to_owned()),
                    usage: Some(usage),
                    served_by: None,
                };
                deltas.blocking_send(Ok(done)).is_err()
            }
            Ok(End::Cancelled) => true,
            Err(message) => deltas.blocking_send(Err(LlmError::Other(message))).is_err(),
        }
    }

    fn generate(
        &mut self,
        ctx: &mut LlamaContext<'_>,
        request: &ModelRequest,
        deltas: &tokio::sync::mpsc::Sender<Result<Delta, LlmError>>,
    ) -> Result<End, String> {
        let prompt = self.render(request)?;
        let tokens = self.model.vocab().tokenize(prompt.as_bytes(), true, true);
        let n_ctx = ctx.n_ctx() as usize;
        if tokens.is_empty() {
            return Err("the prompt is empty".into());
        }
        if tokens.len() >= n_ctx {
            return Err(format!(
                "the prompt of {} tokens does not fit the embedded model's context of {n_ctx} \
                 tokens (raise --context-tokens if the model allows, or shorten the history)",
                tokens.len()
            ));
        }
        let mut grammar = match request.grammar.as_deref() {
            Some(text) => Some(self.grammar(text)?),
            None => None,
        };
        // Keep what the cache already holds; decode at least the last
        // prompt token again, whose logits start the answer.
        let keep = common_prefix(&self.cached, &tokens).min(tokens.len() - 1);
        self.truncate_cache(ctx, keep);
        self.counters.update(|s| s.reused_tokens += keep as u64);
        for chunk in tokens[keep..].chunks(PROMPT_BATCH as usize) {
            if deltas.is_closed() {
                return Ok(End::Cancelled);
            }
            let last = self.cached.len() + chunk.len() == tokens.len();
            self.decode(ctx, chunk, last)?;
        }
        let mut sampler = self.sampler();
        let room = n_ctx - tokens.len();
        let limit = request.max_tokens.map_or(room, |m| (m as usize).min(room));
        let mut produced = 0usize;
        let mut joiner = Utf8Joiner::default();
        let mut stops = Stops::new(&request.stop);
        let mut logits = self.batch.n_tokens() - 1;
        let reason = loop {
            if produced >= limit {
                break "length";
            }
            let token = match grammar.as_mut() {
                Some(grammar) => self.sample_constrained(ctx, logits, &mut sampler, grammar)?,
                None => sampler.sample(ctx, logits),
            };
            if self.model.vocab().is_eog(token) {
                break "stop";
            }
            produced += 1;
            let text = joiner.push(&self.model.vocab().token_to_piece(token, false, None));
            let scanned = stops.push(&text);
            if !send(deltas, scanned.text) {
                return Ok(End::Cancelled);
            }
            if scanned.stopped {
                return Ok(End::Done(
                    "stop",
                    Usage::new(tokens.len() as u64, produced as u64),
                ));
            }
            if produced >= limit {
                break "length";
            }
            if deltas.is_closed() {
                return Ok(End::Cancelled);
            }
            self.decode(ctx, &[token], true)?;
            logits = 0;
        };
        let last = stops.push(&joiner.finish());
        let rest = if last.stopped {
            last.text
        } else {
            last.text + &stops.finish()
        };
        if !send(deltas, rest) {
            return Ok(End::Cancelled);
        }
        Ok(End::Done(
            reason,
            Usage::new(tokens.len() as u64, produced as u64),
        ))
    }

    /// The prompt text: the request's messages through the model's chat
    /// template, ending where the assistant's answer starts.
    fn render(&self, request: &ModelRequest) -> Result<String, String> {
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if !request.system.is_empty() {
            messages.push(("system", request.system.as_str()));
        }
        for message in &request.messages {
            let role = match message.role {
                Role::System => "system",
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            messages.push((role, message.content.as_str()));
        }
        self.template.render(self.model, &messages)
    }

    /// Drops the cache after its first `keep` tokens.
    fn truncate_cache(&mut self, ctx: &mut LlamaContext<'_>, keep: usize) {
        if keep >= self.cached.len() {
            return;
        }
        let p0 = u32::try_from(keep).ok();
        if !matches!(ctx.clear_kv_cache_seq(Some(SEQ as u32), p0, None), Ok(true)) {
            ctx.clear_kv_cache();
            self.cached.clear();
            return;
        }
        self.cached.truncate(keep);
    }

    /// Decodes `tokens` after the cache; the last one's logits are kept
    /// when `logits` is set.
    fn decode(
        &mut self,
        ctx: &mut LlamaContext<'_>,
        tokens: &[LlamaToken],
        logits: bool,
    ) -> Result<(), String> {
        self.batch.clear();
        let start = self.cached.len();
        for (i, token) in tokens.iter().enumerate() {
            let pos = i32::try_from(start + i).map_err(|_| "the context is too long".to_owned())?;
            let want = logits && i + 1 == tokens.len();
            self.batch
                .add(*token, pos, &[SEQ], want)
                .map_err(|e| format!("llama.cpp batch: {e}"))?;
        }
        if let Err(e) = ctx.decode(&mut self.batch) {
            // The cache's state is unknown now: start the next request afresh.
            ctx.clear_kv_cache();
            self.cached.clear();
            return Err(format!("llama.cpp could not decode: {e}"));
        }
        self.cached.extend_from_slice(tokens);
        self.counters
            .update(|s| s.decoded_tokens += tokens.len() as u64);
        Ok(())
    }

    /// The sampler of a request's grammar; llama.cpp's refusal (it logs
    /// where the text is wrong) is this request's error.
    fn grammar(&self, text: &str) -> Result<LlamaSampler, String> {
        LlamaSampler::grammar(self.model, text, GRAMMAR_ROOT).map_err(|e| {
            format!(
                "llama.cpp refused the reply grammar ({e}; its log says where): the answer \
                 cannot be constrained, try --constrained off"
            )
        })
    }

    /// A token under `grammar`: the usual sample when the grammar takes it,
    /// else the sample among the candidates the grammar leaves. The token
    /// is accepted into the grammar (an end-of-generation token is only
    /// ever sampled where the grammar may end).
    fn sample_constrained(
        &self,
        ctx: &LlamaContext<'_>,
        logits: i32,
        sampler: &mut LlamaSampler,
        grammar: &mut LlamaSampler,
    ) -> Result<LlamaToken, String> {
        let first = sampler.sample(ctx, logits);
        let token = if allows(grammar, first) {
            first
        } else {
            self.counters.update(|s| s.grammar_resamples += 1);
            let mut candidates = ctx.token_data_array_ith(logits);
            candidates.apply_sampler(grammar);
            if !candidates.data.iter().any(|d| d.logit().is_finite()) {
                return Err("the reply grammar allows no token at this point".into());
            }
            candidates.apply_sampler(sampler);
            candidates
                .selected_token()
                .ok_or("the sampler chose no token under the reply grammar")?
        };
        if !self.model.vocab().is_eog(token) {
            grammar.accept(token);
        }
        Ok(token)
    }

    fn sampler(&self) -> LlamaSampler {
        let t = self.options.temperature;
        if t <= 0.0 || t.is_nan() {
            return LlamaSampler::greedy();
        }
        LlamaSampler::chain_simple([
            LlamaSampler::top_k(TOP_K),
            LlamaSampler::top_p(TOP_P, 1),
            LlamaSampler::min_p(MIN_P, 1),
            LlamaSampler::temp(t),
            LlamaSampler::dist(self.options.seed),
        ])
    }
}

/// Whether `grammar` takes `token` next (it leaves a refused token's logit
/// at minus infinity).
pub(crate) fn allows(grammar: &mut LlamaSampler, token: LlamaToken) -> bool {
    let mut one = LlamaTokenDataArray::new(vec![LlamaTokenData::new(token, 0.0, 0.0)], false);
    one.apply_sampler(grammar);
    one.data.first().is_some_and(|d| d.logit().is_finite())
}

/// Sends non-empty text; false when the reader went away.
fn send(deltas: &tokio::sync::mpsc::Sender<Result<Delta, LlmError>>, text: String) -> bool {
    text.is_empty() || deltas.blocking_send(Ok(Delta::Text(text))).is_ok()
}

/// How many leading tokens `a` and `b` share.
fn common_prefix(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}
