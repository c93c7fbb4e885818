//! The tool-use table (issue 30 §6): every request of
//! `porfiry_agent::chat::tool_use::TOOL_USE_CASES` in a fresh session of the
//! API's agent (its six sets over a fresh database, its skills), against any
//! OpenAI-compatible server or a GGUF file run by the embedded engine,
//! scored for format-valid replies and the right tool. A bench program, not
//! criterion: it needs a model.
//!
//! ```sh
//! cargo bench -p porfiry-agent --bench tool_use -- \
//!     --llm-url http://127.0.0.1:11434/v1 --llm-model qwen2.5:3b [--language ru]
//! cargo bench -p porfiry-agent --features engine --bench tool_use -- \
//!     --model-file SmolLM2-135M-Instruct.Q4_1.gguf --constrained on \
//!     [--model-threads N] [--max-tokens N] [--rounds N] [--temperature T]
//! ```
//! `--constrained on` decodes under each reply's grammar (the engine; a
//! llama.cpp server, which is sent it as `grammar`); `off`, the default,
//! does not. Each raw model reply goes to stderr (`3.1: "TOOL_CALL: …"`).
//! Without a model it says so and exits 0 (CI builds it, never runs it).

// A bench program has no API to document.
#![allow(missing_docs)]

use std::path::PathBuf;
use std::sync::Arc;

use porfiry_agent::chat::tool_use::TOOL_USE_CASES;
use porfiry_agent::chat::tool_use_run::{TABLE_HEADER, ToolUseRun, Totals, table_row};
use porfiry_agent::chat::{ChatConfig, Language, Llm};
use porfiry_agent::llm::constrained::ConstrainedMode;
use porfiry_agent::llm::local::{EngineOptions, open_model_file};
use porfiry_agent::llm::{LlmTarget, OpenAiClient};
use porfiry_storage::db::Db;
use porfiry_storage::{DB_FILE_NAME, Store};

/// Where the model is.
enum Model {
    Url { url: String, model: String },
    File(PathBuf),
}

struct Args {
    model: Option<Model>,
    constrained: ConstrainedMode,
    language: Language,
    threads: Option<usize>,
    max_tokens: Option<u32>,
    rounds: Option<u32>,
    temperature: Option<f32>,
}

fn args() -> Result<Args, String> {
    let mut out = Args {
        model: None,
        constrained: ConstrainedMode::Off,
        language: Language::En,
        threads: None,
        max_tokens: None,
        rounds: None,
        temperature: None,
    };
    let (mut url, mut name, mut file) = (None, "default".to_owned(), None);
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--llm-url" => url = Some(value()?),
            "--llm-model" => name = value()?,
            "--model-file" => file = Some(PathBuf::from(value()?)),
            "--constrained" => out.constrained = value()?.parse().map_err(|e| format!("{e}"))?,
            "--language" => out.language = value()?.parse().map_err(|e| format!("{e}"))?,
            "--model-threads" => out.threads = Some(number(&value()?)?),
            "--max-tokens" => out.max_tokens = Some(number(&value()?)?),
            "--rounds" => out.rounds = Some(number(&value()?)?),
            "--temperature" => out.temperature = Some(number(&value()?)?),
            _ => {} // `--bench` and filters from cargo
        }
    }
    out.model = match (url, file) {
        (Some(_), Some(_)) => return Err("--llm-url and --model-file: pick one".into()),
        (Some(url), None) => Some(Model::Url { url, model: name }),
        (None, Some(path)) => Some(Model::File(path)),
        (None, None) => None,
    };
    Ok(out)
}

fn number<T: std::str::FromStr>(s: &str) -> Result<T, String> {
    s.parse().map_err(|_| format!("{s:?} is not a number"))
}

fn main() {
    let args = match args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("tool_use: {e}");
            std::process::exit(2);
        }
    };
    let Some(model) = &args.model else {
        println!(
            "tool_use: no model; pass -- --llm-url URL --llm-model NAME, or -- --model-file \
             PATH.gguf (with --features engine), to score one"
        );
        return;
    };
    let mut engine_stats = None;
    let (llm, label): (Arc<dyn Llm>, String) = match model {
        Model::Url { url, model } => {
            let mut target = LlmTarget {
                send_grammar: args.constrained.sends_to_http(),
                ..LlmTarget::new(url.as_str(), model.as_str())
            };
            target.config.temperature = args.temperature.map(f64::from);
            let client = OpenAiClient::new(target).unwrap_or_else(|e| fail(&e));
            (Arc::new(client), model.clone())
        }
        Model::File(path) => {
            let defaults = EngineOptions::default();
            let options = EngineOptions {
                threads: args.threads,
                temperature: args.temperature.unwrap_or(defaults.temperature),
                ..defaults
            };
            let engine = open_model_file(path, &options).unwrap_or_else(|e| fail(&e));
            let label = format!(
                "{} ({} threads)",
                engine.info().label(),
                engine.info().threads
            );
            engine_stats = Some(engine.clone());
            (engine, label)
        }
    };
    let mut config = ChatConfig {
        language: args.language,
        constrained: args.constrained.builds_grammars(),
        ..ChatConfig::new(LlmTarget::new("", label.as_str()))
    };
    if let Some(n) = args.max_tokens {
        config.reply_max_tokens = n;
    }
    if let Some(n) = args.rounds {
        config.max_tool_rounds = n;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| fail(&e));
    let dir = tempfile::tempdir().unwrap_or_else(|e| fail(&e));
    let store = Store::create(dir.path().join(DB_FILE_NAME)).unwrap_or_else(|e| fail(&e));
    let db = Db::start(store).unwrap_or_else(|e| fail(&e));
    let run = ToolUseRun::new(&config, llm, db).unwrap_or_else(|e| fail(&e));
    println!(
        "model {label}, constrained {}, reply budget {} tokens, {} rounds, temperature {}",
        args.constrained,
        config.reply_max_tokens,
        config.max_tool_rounds,
        args.temperature
            .map_or_else(|| "the backend's default".to_owned(), |t| t.to_string())
    );
    println!("{TABLE_HEADER}");
    let mut totals = Totals::default();
    for (i, case) in TOOL_USE_CASES.iter().enumerate() {
        let result = runtime.block_on(run.run_case(case));
        println!("{}", table_row(i + 1, case, &result));
        for (k, reply) in result.replies.iter().enumerate() {
            eprintln!("{}.{}: {reply:?}", i + 1, k + 1);
        }
        totals.add(&result);
    }
    println!("\nmodel {label}: {}", totals.summary());
    if let Some(engine) = engine_stats {
        let stats = engine.stats();
        println!(
            "engine: {} tokens decoded, {} prompt tokens reused, {} tokens the grammar refused \
             and sampled again",
            stats.decoded_tokens, stats.reused_tokens, stats.grammar_resamples
        );
    }
}

fn fail(e: &dyn std::fmt::Display) -> ! {
    eprintln!("tool_use: {e}");
    std::process::exit(1);
}
