//! The `porfiry` binary: parses the command line, sets up logging and runs
//! the chosen subcommand. Errors are printed as one line; exit code 1 (78
//! for an unusable config file, 2 for bad flags). When
//! the reader of stdout goes away (`porfiry notes list | head -1`) the
//! command stops quietly with 141, the status a shell gives SIGPIPE.

mod cli;
mod commands;

use std::io::{self, Write};
use std::process::ExitCode;

use cli::{Cli, Command, ParseError};
use porfiry_mesh::clock::now_ms;
use porfiry_mesh::data_dir::{DataDir, default_data_dir};
use tracing_subscriber::EnvFilter;

/// Exit status for an unusable config file: sysexits' EX_CONFIG, which the
/// systemd unit names in `RestartPreventExitStatus` (restarting cannot fix
/// a file; the service stops with the one line in its journal).
const CONFIG_ERROR_EXIT: u8 = 78;

/// Exit status when stdout's reader closed the pipe: 128 + SIGPIPE, what a shell
/// reports for a program the signal stopped, so pipelines read it as usual.
const BROKEN_PIPE_EXIT: u8 = 141;

fn main() -> ExitCode {
    let default_config = std::path::Path::new(commands::run_config::DEFAULT_CONFIG_PATH);
    let cli = match cli::parse_args(std::env::args_os().collect(), default_config) {
        Ok(cli) => cli,
        Err(ParseError::Clap(e)) => e.exit(),
        Err(ParseError::Config(e)) => {
            eprintln!("porfiry: {e}");
            return ExitCode::from(CONFIG_ERROR_EXIT);
        }
    };
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
    let given_dir = cli.data_dir.clone();
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
        Command::Doctor { json, repair } => {
            let report = commands::doctor::doctor(&dir, repair, now_ms());
            if json {
                say(serde_json::to_string_pretty(&report)?)?;
            } else {
                let mut out = io::stdout().lock();
                out.write_all(report.to_text().as_bytes())?;
                out.flush()?;
            }
            if report.verdict == commands::doctor::Verdict::Fail {
                std::process::exit(1);
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
        Command::Devices(commands::devices::DevicesCommand::Join { code }) => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            let now = now_ms();
            say(rt.block_on(commands::devices::join(&dir, &code, now))?)?;
        }
        Command::Devices(cmd) => say(commands::devices::devices(&dir, &cmd, now_ms())?)?,
        Command::Club(cmd) => {
            let now = now_ms();
            say(commands::club::club(&dir, &cmd, now)?)?;
        }
        Command::Sharing(cmd) => {
            let now = now_ms();
            say(commands::sharing::sharing(&dir, &cmd, now)?)?;
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
        Command::Backup(args) => say(commands::backup::backup(
            &dir,
            &args,
            std::path::Path::new(commands::run_config::DEFAULT_CONFIG_PATH),
        )?)?,
        Command::Restore(args) => say(commands::restore::restore(given_dir.as_deref(), &args)?)?,
        Command::Manpage { dir } => say(commands::docs_gen::write_manpages(&dir)?)?,
        Command::Completions { shell } => {
            let mut out = io::stdout().lock();
            commands::docs_gen::write_completions(shell, &mut out)?;
            out.flush()?;
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
