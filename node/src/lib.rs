//! The Porfiry node: wiring of the protocol, storage and tool-loop crates
//! into one process — CLI commands, the LLM client, chat sessions and
//! (later) the libp2p mesh driver and the HMP cognitive core.

pub mod chat;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod daemon;
pub mod data_dir;
pub mod llm;
pub mod mesh;
pub mod replication;
pub mod sharing;
pub mod toolsets;
