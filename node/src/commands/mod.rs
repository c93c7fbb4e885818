//! One file per `porfiry` subcommand, and the flags several share
//! (`llm_flags`, `model_file_flags`, `offload_flags`, `reach_flags`, `api_start`).

pub mod api_start;
pub mod chat;
pub mod club;
pub mod constrained_flag;
pub mod friends;
pub mod invite;
pub mod join;
pub mod llm;
pub mod llm_flags;
pub mod llm_registry;
pub mod model;
pub mod model_choice;
pub mod model_file_flags;
pub mod model_score;
#[cfg(feature = "engine")]
pub mod model_teach;
pub mod notes;
pub mod offload_flags;
pub mod reach_flags;
pub mod run;
pub mod run_core;
pub mod signal;
pub mod status;
#[cfg(feature = "engine")]
pub mod teach_state;
pub mod think;
pub mod web;
