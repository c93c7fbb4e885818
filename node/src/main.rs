//! The `porfiry` binary: parses the command line, sets up logging and runs
//! the chosen subcommand. Errors are printed as one line; exit code 1. When
//! the reader of stdout goes away (`porfiry notes list | head -1`) the
//! command stops quietly with 141, the status a shell gives SIGPIPE.

mod cli;
mod commands;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::Parser;
use cli::{Cli, Command};
use porfiry_mesh::clock::now_ms;
use porfiry_mesh::data_dir::{DataDir, default_data_dir};
use tracing_subscriber::EnvFilter;

/// Exit status when stdout's reader closed the pipe: 128 + SIGPIPE, what a shell
/// reports for a program the signal stopped, so pipelines read it as usual.
const BROKEN_PIPE_EXIT: u8 = 141;

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => ExitCode::from(BROKEN_PIPE_EXIT),
        Err(e) => {
            eprintln!("porfiry: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Whether the failure is stdout's reader having gone away (not worth a word).
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Writes `text` and a newline to stdout, reporting a closed pipe as an error
/// (where `println!` would panic).
fn say(text: impl std::fmt::Display) -> io::Result<()> {
    let mut out = io::stdout().lock();
    writeln!(out, "{text}")?;
    out.flush()
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let dir = DataDir::new(cli.data_dir.unwrap_or_else(default_data_dir));
    match cli.command {
        Command::Init { language } => {
            let made = porfiry_mesh::init::init(&dir, language)?;
            say(format_args!("initialized {}: {made}", dir.root().display()))?;
        }
        Command::Status { json } => {
            let s = commands::status::status(&dir)?;
            if json {
                say(serde_json::to_string_pretty(&s)?)?;
            } else {
                let mut out = io::stdout().lock();
                out.write_all(s.to_text().as_bytes())?;
                out.flush()?;
            }
        }
        Command::Chat(args) => commands::chat::chat(&dir, &args)?,
        Command::Friends(cmd) => {
            let now = now_ms();
            say(commands::friends::friends(&dir, &cmd, now)?)?;
        }
        Command::Invite(args) => {
            let now = now_ms();
            say(commands::invite::invite(&dir, &args, now)?)?;
        }
        Command::Join(args) => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            let now = now_ms();
            say(rt.block_on(commands::join::join(&dir, &args, now))?)?;
        }
        Command::Llm(cmd) => say(commands::llm::llm(&dir, &cmd)?)?,
        Command::Model(commands::model::ModelCommand::List { json }) => {
            say(commands::model::list(&dir, json)?)?;
        }
        Command::Web => {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            say(rt.block_on(commands::web::web(&dir))?)?;
        }
        Command::Model(commands::model::ModelCommand::Pull(args)) => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            say(rt.block_on(commands::model::pull(&dir, &args))?)?;
        }
        Command::Model(commands::model::ModelCommand::Score(args)) => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            say(rt.block_on(commands::model_score::score(&dir, &args))?)?;
        }
        #[cfg(feature = "engine")]
        Command::Model(commands::model::ModelCommand::Teach(args)) => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            say(rt.block_on(commands::model_teach::teach(&dir, &args))?)?;
        }
        Command::Club(cmd) => {
            let now = now_ms();
            say(commands::club::club(&dir, &cmd, now)?)?;
        }
        Command::Notes(cmd) => {
            let now = now_ms();
            say(commands::notes::notes(&dir, &cmd, now)?)?;
        }
        Command::Think(args) => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            rt.block_on(commands::think::think(&dir, &args))?;
        }
        Command::Run(args) => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            rt.block_on(commands::run::run(&dir, &args))?;
        }
    }
    Ok(())
}
