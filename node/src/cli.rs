//! The `porfiry` command line: global flags and subcommands (clap).

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Porfiry: a mesh agent node — chat tool loop for small models and
/// friend-to-friend replication over libp2p, and the HMP cognitive core
/// thinking over the node's memory.
#[derive(Debug, Parser)]
#[command(name = "porfiry", version, about, long_about = None)]
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
    /// Run the node daemon until Ctrl-C (creates identity and database if missing).
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
    /// Clubs: groups whose items reach every member, relayed member to
    /// member (create, add, remove, leave, list, members, status).
    #[command(subcommand)]
    Club(crate::commands::club::ClubCommand),
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
}
