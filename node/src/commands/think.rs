//! `porfiry think`: the cognitive core in the foreground, without the mesh.
//! Each tick prints one line (`tick N: …`) to stdout; `--trace` writes each
//! prompt, reply and command to stderr as `[trace] ` lines. It stops after
//! `--ticks N`, or on Ctrl-C. The model comes from `--llm-url`/`--llm-model`
//! (or their env vars) or `--model-file PATH.gguf` (the embedded engine,
//! loaded before the first tick), else from the registry's main model
//! (`porfiry llm add NAME --url URL --model M --main`, or `--file`).

use std::sync::Arc;

use anyhow::Context as _;
use clap::Args;
use porfiry_skills::Language;
use porfiry_skills::cognition::DEFAULT_CONTEXT_TOKENS;
use porfiry_storage::LlmEntry;

use crate::commands::llm_flags::OptionalLlmArgs;
use crate::commands::model_file_flags::file_entry;
use porfiry_agent::cognition::advice::validator_advice;
use porfiry_agent::cognition::{CognitiveCore, CoreConfig, CoreEvents, CoreParts, TickDone, Trace};
use porfiry_agent::llm::registry_models::{RegistryModels, parse_endpoint};
use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::init::open_or_init;
use porfiry_storage::db::Db;
use porfiry_toolsets::{StoreTools, ToolsetOptions, core_toolsets};

/// The least prompt budget accepted: below it the core's own instructions
/// would not fit.
pub const MIN_CONTEXT_TOKENS: usize = 512;

/// Flags of `porfiry think`.
#[derive(Debug, Clone, Args)]
pub struct ThinkArgs {
    /// Stop after this many ticks (default: run until Ctrl-C).
    #[arg(long, value_name = "N")]
    pub ticks: Option<u64>,
    /// Print each tick's contexts, reply and commands to stderr.
    #[arg(long)]
    pub trace: bool,
    /// The main model (default: the registry's main model).
    #[command(flatten)]
    pub llm: OptionalLlmArgs,
    /// The prompt budget in tokens: the whole prompt fits it (phone models
    /// run 1–4K contexts).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_CONTEXT_TOKENS,
          value_parser = parse_context_tokens)]
    pub context_tokens: usize,
    /// Seconds between ticks for this run, instead of the cycle setting the
    /// model controls (`cycle_pause`).
    #[arg(long, value_name = "SECS")]
    pub pause_secs: Option<u64>,
    /// Language of prompts and command replies: en or ru.
    #[arg(long, value_name = "LANG", default_value = "en")]
    pub language: Language,
}

fn parse_context_tokens(s: &str) -> Result<usize, String> {
    let n: usize = s.parse().map_err(|e| format!("{e}"))?;
    if n < MIN_CONTEXT_TOKENS {
        return Err(format!("at least {MIN_CONTEXT_TOKENS} tokens"));
    }
    Ok(n)
}

/// The flags' model as a registry-shaped row (named after the model, or
/// after the file of `--model-file`).
pub fn flags_model(llm: &OptionalLlmArgs) -> anyhow::Result<Option<LlmEntry>> {
    if let Some(path) = llm.model_file()? {
        return Ok(Some(file_entry(path)));
    }
    Ok(llm.target()?.map(|target| LlmEntry {
        name: target.model.clone(),
        endpoint: target.base_url.clone(),
        model: target.model.clone(),
        config: target.config.clone(),
        ..Default::default()
    }))
}

/// Runs `porfiry think`.
pub async fn think(dir: &DataDir, args: &ThinkArgs) -> anyhow::Result<()> {
    let main = flags_model(&args.llm)?;
    // The file is checked and loaded before the node is touched; held for
    // the run, so every tick and `llm_*` call shares the one loaded model.
    let _local = args.llm.file.open()?;
    let (key, store) = open_or_init(dir)?;
    let registry_main = store.llm_main()?;
    if main.is_none() && registry_main.is_none() {
        anyhow::bail!(
            "no model: give --llm-url and --llm-model, or --model-file PATH.gguf, or add one with `porfiry llm add NAME --url URL --model M --main` (or `--file PATH.gguf --main`)"
        );
    }
    // Said once, before the first tick (seed §6: at least two validators).
    let validators: Vec<String> = store
        .llm_validators()?
        .into_iter()
        .map(|v| v.row.name)
        .collect();
    let validators: Vec<&str> = validators.iter().map(String::as_str).collect();
    let main_row = main.clone().or(registry_main.map(|m| m.row));
    // A bad endpoint is each tick's error, as without the flag.
    if let Some(row) = &main_row
        && let Ok(endpoint) = parse_endpoint(&row.endpoint)
    {
        let model = format!("the main model {}", row.name);
        args.llm.constrained.check(endpoint.backend(), &model)?;
    }
    let main_name = main_row.map(|m| m.name);
    if let Some(advice) = validator_advice(&validators, main_name.as_deref()) {
        eprintln!("{advice}");
    }
    drop(store);
    let db = Db::open(&dir.db_path()).context("opening the database")?;
    let events = CoreEvents::new();
    let tools = StoreTools {
        db: db.clone(),
        language: args.language,
        events: events.clone(),
        node: None,
    };
    let constrained = args.llm.constrained.mode();
    let models = Arc::new(
        RegistryModels::new(None)
            .with_engine_options(args.llm.file.engine_options())
            .with_http_grammars(constrained.sends_to_http()),
    );
    // The sets' descriptions in the core's language, as `porfiry run` has them.
    let options = ToolsetOptions {
        language: args.language,
        ..ToolsetOptions::default()
    };
    let registry = core_toolsets(&options, &tools, models.clone())?;
    let trace = if args.trace {
        Trace::to(|line| eprintln!("{line}"))
    } else {
        Trace::off()
    };
    let parts = CoreParts {
        db: db.clone(),
        registry: Arc::new(registry),
        maker: models,
        clock: Arc::new(porfiry_agent::chat::local_clock()),
        events,
        asker: Some(Arc::new(porfiry_agent::cognition::asker::KeyAsker::new(
            db.clone(),
            key,
        ))),
        trace,
    };
    let config = CoreConfig {
        context_tokens: args.context_tokens,
        language: args.language,
        main,
        pause_secs: args.pause_secs,
        constrained: constrained.builds_grammars(),
    };
    let mut core = CognitiveCore::start(parts, config).await?;
    let shutdown = crate::commands::signal::shutdown_signal();
    tokio::pin!(shutdown);
    let mut done = 0u64;
    loop {
        let tick = tokio::select! {
            () = &mut shutdown => break,
            tick = core.tick() => tick?,
        };
        done += 1;
        if args.ticks.is_some_and(|n| done >= n) {
            println!("{}", tick_line(&tick, None));
            break;
        }
        // The wait is said on the tick line before it starts: a long pause
        // (the radical-pause strategy) must not look like a hang.
        let plan = core.plan_wait().await?;
        println!("{}", tick_line(&tick, plan.notice().as_deref()));
        tokio::select! {
            () = &mut shutdown => break,
            waited = core.wait_as(&plan) => { waited?; }
        }
    }
    db.close().await;
    Ok(())
}

/// `tick 3: 2 commands, 1 ran, …` or `tick 3: error: …`, then the wait
/// that follows when it is worth saying (`; next: pause 1800 s (…)`).
pub fn tick_line(done: &TickDone, wait: Option<&str>) -> String {
    let line = tick_summary(done);
    match wait {
        Some(wait) => format!("{line}; next: {wait}"),
        None => line,
    }
}

fn tick_summary(done: &TickDone) -> String {
    let r = &done.report;
    match &r.error {
        Some(e) => format!("tick {}: error: {e}", r.tick),
        None if r.repeat => format!("tick {}: anti-stagnation reflex (repeated reply)", r.tick),
        None => format!(
            "tick {}: {} commands, {} ran, ~{} prompt tokens, {} model calls",
            r.tick,
            r.commands.len(),
            r.executed(),
            r.prompt_tokens,
            r.model_calls
        ),
    }
}
