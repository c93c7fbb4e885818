//! Test infrastructure for Porfiry's end-to-end tests: a scripted OpenAI-compatible LLM
//! server that real `porfiry` processes (and the node's LLM client) talk to over loopback,
//! and the path of the real `porfiry` binary.

pub mod api_client;
pub mod flood;
pub mod mesh_node;
pub mod old_binary;
pub mod porfiry_bin;
pub mod scripted_llm;

pub use scripted_llm::{RecordedRequest, Reply, Rule, ScriptedLlm, When};
