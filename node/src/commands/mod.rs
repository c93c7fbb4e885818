//! One file per `porfiry` subcommand, and the flags several share
//! (`llm_flags`, `model_file_flags`, `offload_flags`, `reach_flags`, `api_start`),
//! `run`'s config file (`run_config`), systemd's notifications
//! (`service_notify`), and backup's passphrase (`passphrase`; the backup
//! itself is the `porfiry_backup` crate's).

pub mod api_start;
pub mod backup;
pub mod chat;
pub mod club;
pub mod constrained_flag;
pub mod devices;
pub mod docs_gen;
pub mod doctor;
pub mod friends;
pub mod invite;
pub mod join;
pub mod llm;
pub mod llm_flags;
pub mod llm_registry;
pub mod model;
pub mod model_choice;
pub mod model_file_flags;
pub mod model_from_friend;
pub mod model_score;
#[cfg(feature = "engine")]
pub mod model_teach;
pub mod notes;
pub mod offload_flags;
pub mod passphrase;
pub mod quota_flags;
pub mod reach_flags;
pub mod restore;
pub mod run;
pub mod run_config;
pub mod run_core;
pub mod service_notify;
pub mod sharing;
pub mod signal;
pub mod status;
#[cfg(feature = "engine")]
pub mod teach_state;
pub mod think;
pub mod web;
