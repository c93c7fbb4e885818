//! `porfiry model score`: how well a model drives this node's tools, in one
//! command. Each request of the built-in tool-use set (English and Russian,
//! requests that need a tool and requests that need none) or of a JSONL
//! cases file runs in a fresh session of the API's agent over a fresh
//! database, and the table and summary — format-valid replies, right tool,
//! no-tool precision, tokens, time — are printed (`--json`: the report
//! whose keys `docs/api.md`'s neighbours rely on, see
//! `porfiry_agent::chat::tool_use_run::ScoreReport`). The model is a
//! registry row (`NAME`), a GGUF file (`--model-file`) or any
//! OpenAI-compatible server (`--llm-url` with `--llm-model`: Ollama, vLLM,
//! llama.cpp's server).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use porfiry_agent::chat::tool_use::{ToolUseCase, builtin_cases, is_known_tool, read_cases};
use porfiry_agent::chat::tool_use_run::{
    CaseResult, ScoreReport, TABLE_HEADER, ToolUseRuns, Totals, table_row,
};
use porfiry_agent::chat::{ChatConfig, Language};
use porfiry_agent::llm::constrained::Backend;
use porfiry_agent::llm::local::open_model_file;
use porfiry_agent::llm::registry_models::{RegistryModels, parse_endpoint};
use porfiry_agent::llm::{LlmTarget, OpenAiClient};
use porfiry_mesh::data_dir::DataDir;
use porfiry_skills::Llm;
use porfiry_storage::db::Db;
use porfiry_storage::{DB_FILE_NAME, Store};

use crate::commands::constrained_flag::ConstrainedArgs;
use crate::commands::model_file_flags::ModelFileArgs;

/// Arguments of `model score`.
#[derive(Debug, Clone, Args)]
pub struct ScoreArgs {
    /// A model of this node's registry (`porfiry llm list`); or give
    /// --model-file, or --llm-url with --llm-model.
    #[arg(value_name = "NAME", conflicts_with_all = ["llm_url", "model_file"])]
    pub name: Option<String>,
    /// Base URL of an OpenAI-compatible server (e.g.
    /// http://127.0.0.1:11434/v1 for Ollama).
    #[arg(
        long,
        value_name = "URL",
        requires = "llm_model",
        conflicts_with = "model_file"
    )]
    pub llm_url: Option<String>,
    /// The model's name at --llm-url.
    #[arg(long, value_name = "MODEL", requires = "llm_url")]
    pub llm_model: Option<String>,
    /// A local GGUF model and its engine settings.
    #[command(flatten)]
    pub file: ModelFileArgs,
    /// A JSONL file of cases instead of the built-in set, one a line:
    /// {"request": "...", "expected": ["tool", ...], "language": "en"}
    /// (`expected: []`: the request needs no tool).
    #[arg(long, value_name = "FILE")]
    pub cases: Option<PathBuf>,
    /// Only the built-in cases of this language (en or ru); for a cases
    /// file, the language of lines that name none [default: en].
    #[arg(long, value_name = "en|ru")]
    pub language: Option<Language>,
    /// Decoding under the reply grammar.
    #[command(flatten)]
    pub constrained: ConstrainedArgs,
    /// Tokens one model reply may take.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub reply_tokens: Option<u32>,
    /// Tool rounds one request may take.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: Option<u32>,
    /// Show worked examples in the prompt (a request and its reply each,
    /// none from the scoring set): measures that cheap remedy.
    #[arg(long)]
    pub worked_examples: bool,
    /// Print the report as JSON (progress on stderr).
    #[arg(long)]
    pub json: bool,
}

/// The model to score and its label.
struct Scored {
    llm: Arc<dyn Llm>,
    label: String,
    backend: Backend,
}

/// Opens the model the arguments name.
fn open_model(dir: &DataDir, args: &ScoreArgs) -> anyhow::Result<Scored> {
    let mode = args.constrained.mode();
    if let Some(path) = &args.file.model_file {
        let engine = open_model_file(path, &args.file.engine_options())?;
        let label = format!(
            "{} ({} threads, template {})",
            engine.info().label(),
            engine.info().threads,
            engine.info().template
        );
        return Ok(Scored {
            llm: engine,
            label,
            backend: Backend::Engine,
        });
    }
    if let (Some(url), Some(model)) = (&args.llm_url, &args.llm_model) {
        let target = LlmTarget {
            send_grammar: mode.sends_to_http(),
            ..LlmTarget::new(url.as_str(), model.as_str())
        }
        .with_api_key_from_env();
        return Ok(Scored {
            llm: Arc::new(OpenAiClient::new(target)?),
            label: model.clone(),
            backend: Backend::Http,
        });
    }
    let Some(name) = &args.name else {
        bail!(
            "name the model to score: a registry NAME (porfiry llm list), --model-file \
             PATH.gguf, or --llm-url URL --llm-model MODEL"
        );
    };
    let store = Store::open(dir.db_path())
        .with_context(|| format!("the node's database in {}", dir.root().display()))?;
    let Some(row) = store.llm_by_name(name)? else {
        bail!("no model named {name:?} in the registry (see `porfiry llm list`)");
    };
    let backend = parse_endpoint(&row.row.endpoint)?.backend();
    let llm = RegistryModels::new(None)
        .with_engine_options(args.file.engine_options())
        .with_http_grammars(mode.sends_to_http())
        .model(&row.row)?;
    Ok(Scored {
        llm,
        label: name.clone(),
        backend,
    })
}

/// The cases the arguments ask for, checked against the API's toolbox.
fn cases(args: &ScoreArgs, runs: &mut ToolUseRuns) -> anyhow::Result<Vec<ToolUseCase>> {
    let Some(path) = &args.cases else {
        return Ok(builtin_cases(args.language));
    };
    let toolbox = runs.agent(Language::En)?.toolbox().clone();
    Ok(read_cases(
        path,
        args.language.unwrap_or_default(),
        |tool| is_known_tool(&toolbox, tool),
    )?)
}

/// `porfiry model score`: runs the cases, prints rows as they finish (or a
/// progress bar with `--json`); returns the summary or the JSON report.
pub async fn score(dir: &DataDir, args: &ScoreArgs) -> anyhow::Result<String> {
    let scored = open_model(dir, args)?;
    args.constrained.check(scored.backend, &scored.label)?;
    let mut config = ChatConfig {
        constrained: args.constrained.mode().builds_grammars(),
        worked_examples: args.worked_examples,
        ..ChatConfig::new(LlmTarget::new("", scored.label.as_str()))
    };
    if let Some(n) = args.reply_tokens {
        config.reply_max_tokens = n;
    }
    if let Some(n) = args.rounds {
        config.max_tool_rounds = n;
    }
    let scratch = tempfile::tempdir().context("a scratch database for the sessions")?;
    let db = Db::start(Store::create(scratch.path().join(DB_FILE_NAME))?)?;
    let mut runs = ToolUseRuns::new(config.clone(), scored.llm.clone(), db);
    let cases = cases(args, &mut runs)?;
    let bar = progress(args.json, cases.len());
    if !args.json {
        println!(
            "model {}, constrained {}, reply budget {} tokens, {} rounds, worked examples {}",
            scored.label,
            args.constrained.mode(),
            config.reply_max_tokens,
            config.max_tool_rounds,
            if args.worked_examples { "on" } else { "off" }
        );
        println!("{TABLE_HEADER}");
    }
    let mut outcomes: Vec<(ToolUseCase, CaseResult)> = Vec::with_capacity(cases.len());
    for (i, case) in cases.into_iter().enumerate() {
        let result = runs.run_case(&case).await?;
        tracing::debug!(n = i + 1, replies = ?result.replies, "scored");
        if args.json {
            bar.inc(1);
        } else {
            println!("{}", table_row(i + 1, &case, &result));
        }
        outcomes.push((case, result));
    }
    bar.finish_and_clear();
    if args.json {
        return Ok(serde_json::to_string_pretty(&ScoreReport::new(
            &scored.label,
            &outcomes,
        ))?);
    }
    let mut totals = Totals::default();
    for (case, result) in &outcomes {
        totals.add(case, result);
    }
    Ok(format!("\nmodel {}: {}", scored.label, totals.summary()))
}

/// A bar on stderr with `--json` (drawn only on a terminal); hidden otherwise.
fn progress(json: bool, cases: usize) -> ProgressBar {
    if !json {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(cases as u64);
    if let Ok(style) = ProgressStyle::with_template("scoring {bar:30} {pos}/{len} eta {eta}") {
        bar.set_style(style);
    }
    bar
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: ScoreArgs,
    }

    fn parse(args: &[&str]) -> Result<ScoreArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("score").chain(args.iter().copied())).map(|c| c.args)
    }

    #[test]
    fn the_model_is_one_of_name_file_or_server_and_the_flags_parse() {
        let a = parse(&["smol", "--language", "ru", "--json", "--constrained", "on"]).unwrap();
        assert_eq!(a.name.as_deref(), Some("smol"));
        assert_eq!(a.language, Some(Language::Ru));
        assert!(a.json);
        assert!(parse(&["smol", "--model-file", "m.gguf"]).is_err());
        assert!(
            parse(&["--llm-url", "http://h/v1"]).is_err(),
            "needs --llm-model"
        );
        assert!(
            parse(&[
                "--llm-url",
                "http://h/v1",
                "--llm-model",
                "m",
                "--model-file",
                "f"
            ])
            .is_err()
        );
        assert!(parse(&["--language", "fr"]).is_err());
    }

    #[test]
    fn without_a_model_it_says_how_to_name_one() {
        let dir = tempfile::tempdir().unwrap();
        let data = DataDir::new(dir.path());
        let e = open_model(&data, &parse(&[]).unwrap())
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("--model-file") && e.contains("--llm-url"), "{e}");
    }
}
