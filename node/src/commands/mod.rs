//! One file per `porfiry` subcommand.

pub mod init;
pub mod run;
pub mod status;
