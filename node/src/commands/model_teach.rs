//! `porfiry model teach`: the node teaches its model its own tools, on this
//! machine's CPU, with llama.cpp's own training API (`porfiry-trainer`;
//! `docs/architecture.md`, "Teaching a model", says why this route).
//!
//! 1. The base is checked before any work: a GGUF llama.cpp can train (an
//!    architecture in [`TRAINABLE_ARCHITECTURES`]), with the memory the
//!    run needs free — else one line and nothing is written.
//! 2. The data: `--data FILE` (one example a line, as written before and
//!    perhaps edited), else written by the node itself
//!    (`porfiry_agent::teach`, deterministic by `--seed`) into the work
//!    folder `<data-dir>/teach/<out>/data.jsonl` for a person to read.
//! 3. Each example is rendered in the model's own chat template, as the
//!    engine prompts it, tokenised and packed into windows of `--context`.
//! 4. The quantised base is dequantised to F32 (llama.cpp trains F32
//!    tensors); the top `--layers` layers are trained with AdamW, one
//!    window a step, under a progress bar with the loss, until `--steps`
//!    or `--minutes`. A checkpoint is saved every [`CHECKPOINT_STEPS`] and
//!    on Ctrl-C; the same command resumes from it.
//! 5. The result is written back as Q8_0 (or `--out-type q4_1`) into `<data-dir>/models/<out>.gguf`
//!    and registered like any model (`llm list` shows its base, the data's
//!    hash and the date); `--main` makes it the main model.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use porfiry_agent::llm::local::endpoint_file;
use porfiry_agent::teach::{self, Example};
use porfiry_engine::training_text::{Conversation, TrainingText, training_texts};
use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::init::open_or_init;
use porfiry_skills::{Language, Role};
use porfiry_storage::db::Db;
use porfiry_storage::{DB_FILE_NAME, LlmEntry, Store, Taught};
use porfiry_trainer::{OutType, Text, TrainOptions, Trainable, Trainer};
use sha2::{Digest, Sha256};

use crate::commands::llm_registry::{self, AddArgs};
use crate::commands::teach_state::{
    LossScope, TeachState, available_memory_bytes, learning_rate_at, peak_memory_bytes, window_of,
};

/// Architectures whose training graph llama.cpp builds with a backward pass
/// for every op, tried here: SmolLM2 is `llama`; Gemma 3 is `gemma3`.
pub const TRAINABLE_ARCHITECTURES: &[&str] = &["llama", "gemma3"];

/// Requests the node writes by default: with ~2.4 examples a request,
/// about 2,000 examples, which one epoch on a 2-core machine trains in
/// about the hour the issue allows for a 135M model.
pub const DEFAULT_TURNS: u64 = 800;

/// Core ticks the node writes by default: one example each (a tick's
/// prompt is ~2,000 tokens; its tail with the reply makes one window), a
/// tenth of the data beside the requests' ~2,000 examples.
pub const DEFAULT_CORE_TICKS: u64 = 240;

/// Tokens per step: the node's prompt (~300 tokens in state 1, ~400 with a
/// set active) with a request, its history and the reply fits; the rest of
/// a window is the next example.
pub const DEFAULT_CONTEXT: u32 = 512;

/// Layers trained, counted from the output: the calls are a format and a
/// choice the top of the network makes; training fewer layers makes each
/// step cheaper (no gradient below them) and the memory smaller.
pub const DEFAULT_LAYERS: u32 = 8;

/// AdamW's first step size (it falls to a tenth by the last step): AdamW
/// moves every trained weight by about this much each step whatever its
/// gradient, so it must stay small. Measured on SmolLM2-135M
/// (docs/benchmarks.md): 2e-4 for 191 steps left it writing garbage even
/// for "What is the capital of France?"; 3e-5 for 80 steps kept its
/// language and already had it start calls with `TOOL_CALL:`.
pub const DEFAULT_LEARNING_RATE: f32 = 4e-5;

/// Steps between checkpoints: each is a full F32 model write (~540 MB for
/// 135M), a few seconds; at ~1–2 s a step this loses at most minutes.
pub const CHECKPOINT_STEPS: u64 = 100;

/// Estimated memory of a run per byte of the quantised file: the F32
/// weights are ~7× a Q4 file, and training adds gradients and two AdamW
/// moments for the trained part, the activations and the logits of a
/// window (measured: see docs/benchmarks.md).
const MEMORY_PER_FILE_BYTE: u64 = 12;

/// Arguments of `model teach`.
#[derive(Debug, Clone, Args)]
pub struct TeachArgs {
    /// The registry model to teach (a `file:` row, `porfiry llm list`);
    /// or give --model-file [default: the main model, when it is a file].
    #[arg(value_name = "NAME", conflicts_with = "model_file")]
    pub name: Option<String>,
    /// The GGUF file to teach.
    #[arg(long, value_name = "PATH.gguf")]
    pub model_file: Option<PathBuf>,
    /// The chat template the examples are rendered in (as `chat
    /// --chat-template`) [default: the model's, as the engine chooses it].
    #[arg(long, value_name = "NAME|FILE")]
    pub chat_template: Option<String>,
    /// Stop after this many minutes and write what was learnt.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u32).range(1..))]
    pub minutes: u32,
    /// Steps to take [default: one epoch, every window once].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub steps: Option<u64>,
    /// The taught model's registry name and file name [default: the base's
    /// name with `-taught`].
    #[arg(long, value_name = "NAME")]
    pub out: Option<String>,
    /// Train on this JSONL file (as the node writes it into the work
    /// folder) instead of writing new data.
    #[arg(long, value_name = "FILE")]
    pub data: Option<PathBuf>,
    /// The seed the data is written and shuffled by.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the data in this language only (en or ru) [default: both, in
    /// turn].
    #[arg(long, value_name = "en|ru")]
    pub language: Option<Language>,
    /// Requests the node writes data from.
    #[arg(long, default_value_t = DEFAULT_TURNS, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub turns: u64,
    /// Ticks of the cognitive core the node writes data from (0: none).
    #[arg(long, default_value_t = DEFAULT_CORE_TICKS, value_parser = clap::value_parser!(u64).range(0..=100_000))]
    pub core_ticks: u64,
    /// Tokens per training step.
    #[arg(long, default_value_t = DEFAULT_CONTEXT, value_parser = clap::value_parser!(u32).range(64..=4096))]
    pub context: u32,
    /// Layers trained from the top (0: every layer).
    #[arg(long, default_value_t = DEFAULT_LAYERS)]
    pub layers: u32,
    /// AdamW's learning rate.
    #[arg(long, default_value_t = DEFAULT_LEARNING_RATE)]
    pub learning_rate: f32,
    /// Which labels the loss counts: every token's, prompt included, or
    /// the reply's (micro-batches of 32 tokens; the attention's K and V do
    /// not train; measured no better yet: docs/benchmarks.md).
    #[arg(long, value_enum, default_value_t = LossScope::All)]
    pub loss: LossScope,
    /// The type the taught file is written as: q8_0 keeps the fine-tune's
    /// changes near-losslessly; q4_1 is the size and generation speed of
    /// a Q4_1 base (docs/benchmarks.md measures both).
    #[arg(long, value_enum, default_value_t = TaughtType::Q8_0)]
    pub out_type: TaughtType,
    /// CPU threads [default: every core].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: Option<u32>,
    /// Make the taught model the node's main model.
    #[arg(long)]
    pub main: bool,
}

/// What `--out-type` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TaughtType {
    /// 8-bit (~1.06 bytes a weight).
    #[value(name = "q8_0")]
    Q8_0,
    /// 4-bit with a minimum (~0.56 bytes a weight).
    #[value(name = "q4_1")]
    Q4_1,
}

impl TaughtType {
    fn out(self) -> OutType {
        match self {
            Self::Q8_0 => OutType::Q8_0,
            Self::Q4_1 => OutType::Q4_1,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Q8_0 => "Q8_0",
            Self::Q4_1 => "Q4_1",
        }
    }
}

/// The model to teach.
struct Base {
    path: PathBuf,
    template: Option<String>,
    name: String,
}

/// `porfiry model teach`: what to print.
pub async fn teach(dir: &DataDir, args: &TeachArgs) -> anyhow::Result<String> {
    let (_, store) = open_or_init(dir)?;
    let base = base(&store, args)?;
    check_base(&base.path)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| format!("{}-taught", base.name));
    if out.is_empty()
        || !out
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        || out.starts_with('.')
    {
        bail!("--out {out:?}: a name of letters, digits, '-', '_' and '.'");
    }
    // A given data file is read before anything is written.
    let given = args.data.as_deref().map(teach::read_examples).transpose()?;
    let work = dir.root().join("teach").join(&out);
    std::fs::create_dir_all(&work).with_context(|| format!("cannot create {}", work.display()))?;
    let (examples, data_path) = match (given, &args.data) {
        (Some(examples), Some(path)) => (examples, path.clone()),
        _ => write_data(args, &work).await?,
    };
    let data_text = teach::to_jsonl(&examples);
    let data_sha256 = hex(&Sha256::digest(data_text.as_bytes()));
    let conversations: Vec<Conversation> = examples.iter().map(conversation).collect();
    let texts = training_texts(&base.path, base.template.as_deref(), &conversations)?;

    let stop = Arc::new(AtomicBool::new(false));
    let signal = {
        let stop = stop.clone();
        tokio::spawn(async move {
            crate::commands::signal::shutdown_signal().await;
            stop.store(true, Ordering::SeqCst);
        })
    };
    let run = Run {
        base: base.path.clone(),
        work: work.clone(),
        texts,
        data_sha256: data_sha256.clone(),
        args: args.clone(),
        stop,
    };
    let outcome = tokio::task::spawn_blocking(move || run.train()).await;
    signal.abort();
    let outcome = outcome.context("the training thread failed")??;

    let mut lines = vec![format!(
        "data: {} examples from {} (sha256 {}…)",
        examples.len(),
        data_path.display(),
        &data_sha256[..12]
    )];
    lines.push(outcome.summary());
    let Some(taught_f32) = outcome.finished else {
        lines.push(format!(
            "stopped at step {}; the same command resumes from there",
            outcome.steps_done
        ));
        return Ok(lines.join("\n"));
    };
    std::fs::create_dir_all(dir.models_dir())?;
    let file = dir.models_dir().join(format!("{out}.gguf"));
    porfiry_trainer::quantize(&taught_f32, &file, args.out_type.out(), threads(args))?;
    let _ = std::fs::remove_file(&taught_f32);
    // llama.cpp's saver drops the chat template and writes the training
    // window as the context: the base's are put back.
    porfiry_trainer::restore_metadata(&file, &porfiry_trainer::base_metadata(&base.path)?)?;
    let bytes = std::fs::metadata(&file).map_or(0, |m| m.len());
    lines.push(format!(
        "wrote {} ({} MB, {})",
        file.display(),
        bytes.div_ceil(1_000_000),
        args.out_type.name()
    ));
    let taught = Taught {
        base: base.path.display().to_string(),
        data_sha256,
        examples: examples.len() as u64,
        steps: outcome.steps_done,
        at_ms: porfiry_mesh::clock::now_ms(),
    };
    lines.push(register(&store, &out, &file, &base, taught, args.main)?);
    Ok(lines.join("\n"))
}

/// The base from NAME, --model-file or the main model.
fn base(store: &Store, args: &TeachArgs) -> anyhow::Result<Base> {
    if let Some(path) = &args.model_file {
        let name = path
            .file_stem()
            .map_or_else(|| "model".to_owned(), |s| s.to_string_lossy().into_owned());
        return Ok(Base {
            path: path.clone(),
            template: args.chat_template.clone(),
            name,
        });
    }
    let row = match &args.name {
        Some(name) => store
            .llm_by_name(name)?
            .with_context(|| format!("no model named {name:?} (see `porfiry llm list`)"))?,
        None => store.llm_main()?.context(
            "no model to teach: give NAME (a `file:` model of `porfiry llm list`) or --model-file",
        )?,
    };
    let Some(path) = endpoint_file(&row.row.endpoint) else {
        bail!(
            "model {} is at {}, not in a local file: only a GGUF file on this machine can be taught",
            row.row.name,
            row.row.endpoint
        );
    };
    Ok(Base {
        path,
        template: args
            .chat_template
            .clone()
            .or(row.row.config.chat_template.clone()),
        name: row.row.name,
    })
}

/// Refuses, in one line and before any work, a file that is no GGUF, an
/// architecture llama.cpp cannot train here, or too little memory.
fn check_base(path: &Path) -> anyhow::Result<()> {
    let info = porfiry_engine::inspect(path)?;
    if !TRAINABLE_ARCHITECTURES.contains(&info.architecture.as_str()) {
        bail!(
            "model file {}: architecture {} cannot be taught here (llama.cpp's training is tried \
             with: {})",
            path.display(),
            info.architecture,
            TRAINABLE_ARCHITECTURES.join(", ")
        );
    }
    let needed = info.file_bytes.saturating_mul(MEMORY_PER_FILE_BYTE);
    if let Some(available) = available_memory_bytes()
        && needed > available
    {
        bail!(
            "model file {}: teaching it needs about {} MB of memory and only {} MB are free",
            path.display(),
            needed / 1_000_000,
            available / 1_000_000
        );
    }
    Ok(())
}

/// The node's own examples, written into the work folder.
async fn write_data(args: &TeachArgs, work: &Path) -> anyhow::Result<(Vec<Example>, PathBuf)> {
    let scratch = tempfile::tempdir()?;
    let db = Db::start(Store::create(scratch.path().join(DB_FILE_NAME))?)?;
    let languages = args
        .language
        .map_or_else(|| vec![Language::En, Language::Ru], |l| vec![l]);
    let generated = teach::generate(
        args.seed,
        usize::try_from(args.turns).unwrap_or(usize::MAX),
        &languages,
        db,
    )
    .await?;
    if generated.dropped > 0 {
        tracing::warn!(
            dropped = generated.dropped,
            "requests went off their script"
        );
    }
    let core = teach::core_examples(
        args.seed,
        usize::try_from(args.core_ticks).unwrap_or(usize::MAX),
        &languages,
        scratch.path(),
    )
    .await?;
    if core.dropped > 0 {
        tracing::warn!(dropped = core.dropped, "core ticks ran no command");
    }
    let mut examples = generated.examples;
    examples.extend(core.examples);
    let path = work.join("data.jsonl");
    std::fs::write(&path, teach::to_jsonl(&examples))
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok((examples, path))
}

/// An example as the engine's messages: the system prompt, the history.
fn conversation(example: &Example) -> Conversation {
    let mut messages = Vec::with_capacity(example.messages.len() + 1);
    if !example.system.is_empty() {
        messages.push(("system".to_owned(), example.system.clone()));
    }
    for m in &example.messages {
        let role = match m.role {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        messages.push((role.to_owned(), m.content.clone()));
    }
    Conversation {
        messages,
        reply: example.reply.clone(),
    }
}

fn threads(args: &TeachArgs) -> i32 {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = args.threads.map_or(cores, |t| t as usize);
    i32::try_from(threads).unwrap_or(1)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Registers the taught file (replacing an earlier teaching of the same
/// name); main when asked.
fn register(
    store: &Store,
    name: &str,
    file: &Path,
    base: &Base,
    taught: Taught,
    main: bool,
) -> anyhow::Result<String> {
    if let Some(old) = store.llm_by_name(name)? {
        if old.row.config.taught.is_none() {
            bail!(
                "a model named {name} is already registered and was not taught here; \
                 choose another --out"
            );
        }
        store.delete::<LlmEntry>(old.id)?;
    }
    let args = AddArgs {
        name: name.to_owned(),
        url: None,
        model: None,
        file: Some(file.to_owned()),
        chat_template: base.template.clone(),
        validator: false,
        main,
        api_key_env: None,
        description: format!("{} taught its tools by this node", base.name),
        taught: Some(taught),
    };
    Ok(llm_registry::add(
        store,
        &args,
        porfiry_mesh::clock::now_ms(),
    )?)
}

/// The training itself, on its own thread.
struct Run {
    base: PathBuf,
    work: PathBuf,
    texts: Vec<TrainingText>,
    data_sha256: String,
    args: TeachArgs,
    stop: Arc<AtomicBool>,
}

/// What a run did.
struct Outcome {
    steps_done: u64,
    total_steps: u64,
    windows: usize,
    first_loss: Option<f32>,
    last_loss: Option<f32>,
    eval_before: Option<f32>,
    eval_after: Option<f32>,
    elapsed: Duration,
    resumed_from: u64,
    trainable: u64,
    /// The taught F32 file, when the run ended (steps or minutes) rather
    /// than stopped.
    finished: Option<PathBuf>,
}

impl Outcome {
    fn summary(&self) -> String {
        let loss = |l: Option<f32>| l.map_or("-".to_owned(), |l| format!("{l:.3}"));
        let peak = peak_memory_bytes().map_or("-".to_owned(), |b| (b / 1_000_000).to_string());
        format!(
            "trained {} of {} steps ({} windows{}) in {:.1} min, {} parameters trained; \
             loss {} → {}; the first window's loss {} → {}; peak memory {peak} MB",
            self.steps_done,
            self.total_steps,
            self.windows,
            if self.resumed_from > 0 {
                format!(", resumed at step {}", self.resumed_from)
            } else {
                String::new()
            },
            self.elapsed.as_secs_f64() / 60.0,
            self.trainable,
            loss(self.first_loss),
            loss(self.last_loss),
            loss(self.eval_before),
            loss(self.eval_after),
        )
    }
}

impl Run {
    fn train(self) -> anyhow::Result<Outcome> {
        let started = Instant::now();
        let deadline = started + Duration::from_secs(u64::from(self.args.minutes) * 60);
        let threads = threads(&self.args);
        let state_path = self.work.join("state.json");
        let checkpoint = self.work.join("checkpoint-f32.gguf");
        let base_f32 = self.work.join("base-f32.gguf");
        let mut wanted = TeachState {
            base: self.base.display().to_string(),
            data_sha256: self.data_sha256.clone(),
            seed: self.args.seed,
            context: self.args.context,
            layers: self.args.layers,
            learning_rate: self.args.learning_rate,
            loss: self.args.loss,
            total_steps: 0,
            steps_done: 0,
            losses: Vec::new(),
        };
        let saved =
            TeachState::read(&state_path).filter(|s| s.resumes(&wanted) && checkpoint.exists());
        let start_file = if saved.is_some() {
            checkpoint.clone()
        } else {
            if !base_f32.exists() {
                porfiry_trainer::dequantize(&self.base, &base_f32, threads)?;
            }
            base_f32.clone()
        };
        let options = TrainOptions {
            threads,
            n_ctx: self.args.context,
            learning_rate: self.args.learning_rate,
            trainable: if self.args.layers == 0 {
                Trainable::All
            } else {
                Trainable::LastLayers(self.args.layers)
            },
            loss: self.args.loss.into(),
        };
        let mut trainer = Trainer::open(&start_file, &options)?;
        let tokens = self
            .texts
            .iter()
            .map(|t| tokenized(&trainer, t))
            .collect::<Result<Vec<_>, _>>()?;
        let windows = porfiry_trainer::pack(&tokens, trainer.n_ctx(), trainer.eos());
        if windows.is_empty() {
            bail!("the data gives no window to train on");
        }
        let total = self.args.steps.unwrap_or(windows.len() as u64);
        wanted.total_steps = total;
        let mut state = saved.unwrap_or(wanted);
        state.total_steps = total;
        state.learning_rate = self.args.learning_rate;
        let resumed_from = state.steps_done;
        let first_window = &windows[window_of(0, windows.len(), state.seed)];
        let eval_before = (resumed_from == 0)
            .then(|| trainer.loss(first_window))
            .transpose()?;

        let bar = ProgressBar::new(total);
        if let Ok(style) = ProgressStyle::with_template(
            "teaching {bar:30} {pos}/{len} steps  loss {msg}  {elapsed_precise} eta {eta}",
        ) {
            bar.set_style(style);
        }
        bar.set_position(state.steps_done);
        let mut stretch = Vec::new();
        let mut first_loss = None;
        let mut last_loss = None;
        let mut stopped = false;
        while state.steps_done < total {
            if self.stop.load(Ordering::SeqCst) {
                stopped = true;
                break;
            }
            if Instant::now() >= deadline {
                break;
            }
            let window = &windows[window_of(state.steps_done, windows.len(), state.seed)];
            trainer.set_learning_rate(learning_rate_at(
                self.args.learning_rate,
                state.steps_done,
                total,
            ));
            let loss = trainer.step(window)?;
            first_loss.get_or_insert(loss);
            stretch.push(loss);
            state.steps_done += 1;
            let recent = &stretch[stretch.len().saturating_sub(10)..];
            let mean = recent.iter().sum::<f32>() / recent.len() as f32;
            last_loss = Some(mean);
            bar.set_message(format!("{mean:.3}"));
            bar.inc(1);
            if state.steps_done.is_multiple_of(CHECKPOINT_STEPS) {
                save_checkpoint(&trainer, &mut state, &mut stretch, &checkpoint, &state_path)?;
            }
        }
        bar.finish_and_clear();
        save_checkpoint(&trainer, &mut state, &mut stretch, &checkpoint, &state_path)?;
        let eval_after = if eval_before.is_some() {
            Some(trainer.loss(first_window)?)
        } else {
            None
        };
        let finished = if stopped {
            None
        } else {
            let taught = self.work.join("taught-f32.gguf");
            trainer.save(&taught)?;
            if state.steps_done >= total {
                // Done: the F32 copies are hundreds of MB each.
                let _ = std::fs::remove_file(&checkpoint);
                let _ = std::fs::remove_file(&state_path);
                let _ = std::fs::remove_file(&base_f32);
            }
            Some(taught)
        };
        Ok(Outcome {
            steps_done: state.steps_done,
            total_steps: total,
            windows: windows.len(),
            first_loss,
            last_loss,
            eval_before,
            eval_after,
            elapsed: started.elapsed(),
            resumed_from,
            trainable: trainer.trainable_params(),
            finished,
        })
    }
}

/// `text`'s tokens, the reply's first marked: where the prompt's own
/// tokens stop matching the whole text's (at a template's special token
/// they are the same).
fn tokenized(trainer: &Trainer, text: &TrainingText) -> anyhow::Result<Text> {
    let tokens = trainer.tokenize(&text.text)?;
    let prompt = trainer.tokenize(text.text.get(..text.prompt_len).unwrap_or_default())?;
    let reply_start = tokens
        .iter()
        .zip(&prompt)
        .take_while(|(a, b)| a == b)
        .count();
    Ok(Text {
        tokens,
        reply_start,
    })
}

/// Saves the model and the state together (the state last: a state file
/// always names a checkpoint as new as itself).
fn save_checkpoint(
    trainer: &Trainer,
    state: &mut TeachState,
    stretch: &mut Vec<f32>,
    checkpoint: &Path,
    state_path: &Path,
) -> anyhow::Result<()> {
    if !stretch.is_empty() {
        state
            .losses
            .push(stretch.iter().sum::<f32>() / stretch.len() as f32);
        stretch.clear();
    }
    trainer.save(checkpoint)?;
    state
        .write(state_path)
        .with_context(|| format!("cannot write {}", state_path.display()))
}
