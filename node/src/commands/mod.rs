//! One file per `porfiry` subcommand.

pub mod chat;
pub mod friends;
pub mod init;
pub mod llm_flags;
pub mod notes;
pub mod run;
pub mod status;
