//! The `porfiry` binary: parses the command line, sets up logging and runs
//! the chosen subcommand. Errors are printed as one line; exit code 1.

use clap::Parser;
use porfiry_node::cli::{Cli, Command};
use porfiry_node::commands;
use porfiry_node::data_dir::{DataDir, default_data_dir};
use tracing_subscriber::EnvFilter;

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    match run(cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("porfiry: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let dir = DataDir::new(cli.data_dir.unwrap_or_else(default_data_dir));
    match cli.command {
        Command::Init => {
            let made = commands::init::init(&dir)?;
            println!("initialized {}: {made}", dir.root().display());
        }
        Command::Status { json } => {
            let s = commands::status::status(&dir)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&s)?);
            } else {
                print!("{}", s.to_text());
            }
        }
        Command::Chat(args) => commands::chat::chat(&dir, &args)?,
        Command::Friends(cmd) => {
            let now = porfiry_node::daemon::clock::now_ms();
            println!("{}", commands::friends::friends(&dir, &cmd, now)?);
        }
        Command::Notes(cmd) => {
            let now = porfiry_node::daemon::clock::now_ms();
            println!("{}", commands::notes::notes(&dir, &cmd, now)?);
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
