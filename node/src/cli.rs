//! The `porfiry` command line: global flags and subcommands (clap).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::commands::run_config::{self, ConfigError};

/// What `porfiry --version` prints: the crate version and the git commit it
/// was built from (`build.rs`; `unknown` outside a git checkout unless
/// `PORFIRY_GIT_COMMIT` named it).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("PORFIRY_GIT_COMMIT"),
    ")"
);

/// Porfiry: a mesh agent node — chat tool loop for small models and
/// friend-to-friend replication over libp2p, and the HMP cognitive core
/// thinking over the node's memory.
#[derive(Debug, Parser)]
#[command(name = "porfiry", version = VERSION, about, long_about = None)]
pub struct Cli {
    /// The node's data directory (identity key, SQLite file, user skills).
    /// Default: the platform data dir + `/porfiry`.
    #[arg(long, global = true, env = "PORFIRY_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// What to do.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create the node's identity and database; refuses if an identity exists.
    Init {
        /// Language of the seeded stagnation strategies, thinking methods
        /// and emotions: en or ru (system prompts are seeded in both).
        #[arg(long, value_name = "LANG", default_value = "en")]
        language: porfiry_skills::Language,
    },
    /// Show the node id, schema version and row counts per table.
    Status {
        /// Print JSON (`peer_id`, `schema_version`, `tables`, ...).
        #[arg(long)]
        json: bool,
    },
    /// Check the data dir, disk, database, model files, friends and port:
    /// one line and a verdict each (ok, warn, FAIL); exits 1 on a failure.
    Doctor {
        /// Print JSON (`verdict`, `checks: [{check, verdict, detail}]`).
        #[arg(long)]
        json: bool,
        /// Recover a damaged database into a new file (the damaged one is
        /// kept beside it as porfiry.db.damaged-<ms>); the daemon must be
        /// stopped.
        #[arg(long)]
        repair: bool,
    },
    /// Run the node daemon until Ctrl-C (creates identity and database if
    /// missing). Settings may come from a TOML file (`--config`, or
    /// /etc/porfiry/porfiry.toml when it exists) whose keys are these flags'
    /// long names; a flag given here wins over the file.
    Run(crate::commands::run::RunArgs),
    /// Manage friends: the only peers this node connects to and replicates
    /// with (works whether or not the node is running).
    #[command(subcommand)]
    Friends(crate::commands::friends::FriendsCommand),
    /// Make a one-time invitation: prints a code (and its QR code) that
    /// `porfiry join` on another node redeems to make both nodes friends.
    Invite(crate::commands::invite::InviteArgs),
    /// Redeem an invitation code from another node (whose daemon must be
    /// running): both nodes become friends; exits non-zero if refused.
    Join(crate::commands::join::JoinArgs),
    /// A person's devices: link another node of yours so the long-term
    /// memory is shared between them and nowhere else (link, join, list, unlink).
    #[command(subcommand)]
    Devices(crate::commands::devices::DevicesCommand),
    /// Clubs: groups whose items reach every member, relayed member to
    /// member (create, add, remove, leave, list, members, status).
    #[command(subcommand)]
    Club(crate::commands::club::ClubCommand),
    /// Who receives what this node shares by itself: `sharing audience`
    /// shows or sets the audience of its know-how (strategies, thinking
    /// methods, ratings); works whether or not the node is running.
    #[command(subcommand)]
    Sharing(crate::commands::sharing::SharingCommand),
    /// Post and list notes; notes from friends show their author.
    #[command(subcommand)]
    Notes(crate::commands::notes::NotesCommand),
    /// The models this node knows: its own and those friends offer.
    #[command(subcommand)]
    Llm(crate::commands::llm::LlmCommand),
    /// Download model files (a catalogue of small models, or any GGUF by
    /// URL and SHA-256) into the data dir and register them.
    #[command(subcommand)]
    Model(crate::commands::model::ModelCommand),
    /// Print a fresh one-time sign-in link to the family page of the node
    /// running on this data dir (works once, for ten minutes).
    Web,
    /// Chat with the model in the terminal: one message per line on stdin,
    /// answers on stdout; ends at the end of input. Needs no identity.
    Chat(crate::commands::chat::ChatArgs),
    /// Run the cognitive core (seed 003's thinking cycle) in the
    /// foreground: one line per tick; `--trace` shows each context and command.
    Think(crate::commands::think::ThinkArgs),
    /// Write an encrypted backup of this node (identity key, database,
    /// settings, the person's skills) to FILE; works while the node runs.
    Backup(crate::commands::backup::BackupArgs),
    /// Make the node of a backup FILE again in an empty --data-dir: the
    /// same peer id, friends and memory.
    Restore(crate::commands::restore::RestoreArgs),
    /// Write the man pages (porfiry.1 and one per subcommand) into DIR.
    Manpage {
        /// Folder to write the pages into (created if missing).
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
    /// Print the shell completion script for SHELL on stdout.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        #[arg(value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
}

/// Why the command line could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// clap's own answer: a bad flag, or `--help` / `--version`.
    #[error(transparent)]
    Clap(#[from] clap::Error),
    /// `porfiry run`'s config file is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// Parses `args` (argv, program name first); for `run`, adds the settings
/// of its config file (`--config`, else `default_config` when it exists)
/// behind the flags given, which win.
pub fn parse_args(args: Vec<OsString>, default_config: &Path) -> Result<Cli, ParseError> {
    let mut command = Cli::command();
    let matches = command.try_get_matches_from_mut(args.iter())?;
    let Some(("run", run_matches)) = matches.subcommand() else {
        return Ok(Cli::from_arg_matches(&matches)?);
    };
    let Some(file) = run_config::config_path(run_matches, default_config) else {
        return Ok(Cli::from_arg_matches(&matches)?);
    };
    let table = run_config::read_table(&file)?;
    command.build();
    // `run` matched above, so the command has it; were it missing, the
    // command line alone is what there is to parse.
    let Some(run) = command.find_subcommand("run") else {
        return Ok(Cli::from_arg_matches(&matches)?);
    };
    let given = |id: &str| {
        run_config::given_outside_file(run_matches, id)
            || run_config::given_outside_file(&matches, id)
    };
    let extra = run_config::file_args(run, &table, &given, &file)?;
    let mut all = args;
    all.extend(extra);
    // The flags of the file and of the command line are disjoint now; what
    // still fails is the file's keys among themselves (a conflict).
    let merged = Cli::command()
        .try_get_matches_from(all)
        .map_err(|e| ConfigError {
            file: file.display().to_string(),
            what: run_config::first_line(&e),
        })?;
    Ok(Cli::from_arg_matches(&merged)?)
}
