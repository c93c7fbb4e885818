//! The OpenAI-compatible chat client the node uses to talk to a language model.
//!
//! One `POST {base}/chat/completions` per call, which Ollama, llama.cpp server, vLLM and
//! LM Studio all serve. The base URL is the part before `/chat/completions`, normally
//! ending in `/v1`:
//!
//! | server        | base URL                        |
//! |---------------|---------------------------------|
//! | Ollama        | `http://127.0.0.1:11434/v1`     |
//! | llama.cpp     | `http://127.0.0.1:8080/v1`      |
//! | vLLM          | `http://127.0.0.1:8000/v1`      |
//! | LM Studio     | `http://127.0.0.1:1234/v1`      |
//!
//! A base with no path at all (`http://127.0.0.1:11434`) gets `/v1` appended, since every
//! one of those servers serves the API there; a base given with a trailing `/` or with
//! `/chat/completions` already on it is trimmed back to the base.
//!
//! Files: [`config`] (settings and their limits), [`endpoint`] (base URL normalisation),
//! [`wire`] (request and reply JSON), [`reasoning`] (what counts as the answer when a
//! model also thinks aloud), [`retry`] (backoff arithmetic), [`client`] (the HTTP calls),
//! and for streamed answers [`sse`] (the event-stream line parser), [`chunk`] (one
//! streamed chunk's JSON), [`stream`] (the streaming call and its deadlines) and
//! [`deltas`] (a streamed answer in the tool loop's words); [`embeddings`] asks
//! `{base}/embeddings` for vectors. [`local`] opens models in local GGUF files
//! (`file:` endpoints) with the embedded engine. [`constrained`] is the
//! `--constrained` rule: which backend decodes under a reply's grammar.
//! The vocabulary — the history the caller passes ([`ChatMessage`], [`Role`]) and every
//! failure in words ([`LlmError`]) — is `porfiry_skills::llm`'s, shared with the tool
//! loop, and re-exported here with the [`Llm`] trait this client implements
//! (`crate::chat::model`), its [`ModelRequest`], [`Delta`]s and token [`Usage`].

pub mod chunk;
pub mod client;
pub mod config;
pub mod constrained;
pub(crate) mod deltas;
pub mod embeddings;
pub(crate) mod endpoint;
pub mod local;
pub mod reasoning;
pub mod registry_models;
pub(crate) mod retry;
pub mod sse;
pub(crate) mod stream;
pub mod wire;

pub use client::{Completion, OpenAiClient};
pub use config::{API_KEY_ENV, LlmConfig, LlmTarget};
pub use porfiry_skills::llm::{
    ChatMessage, Delta, DeltaStream, Llm, LlmError, ModelRequest, Role, Usage,
};
pub use registry_models::RegistryModels;
pub use stream::{PieceStream, StreamPiece};
