//! One file per `porfiry` subcommand.

pub mod chat;
pub mod init;
pub mod run;
pub mod status;
