//! One file per `porfiry` subcommand.

pub mod chat;
pub mod club;
pub mod friend_names;
pub mod friends;
pub mod init;
pub mod invite;
pub mod join;
pub mod llm;
pub mod llm_flags;
pub mod llm_registry;
pub mod model_choice;
pub mod notes;
pub mod offload_flags;
pub mod reach_flags;
pub mod run;
pub mod run_core;
pub mod status;
pub mod think;
