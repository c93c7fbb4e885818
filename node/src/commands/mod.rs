//! One file per `porfiry` subcommand.

pub mod chat;
pub mod friends;
pub mod init;
pub mod notes;
pub mod run;
pub mod status;
