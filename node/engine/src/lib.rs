//! The Porfiry node's embedded model engine: a GGUF model run in-process by
//! llama.cpp (through the `llama-cpp-2` binding), behind the same
//! [`porfiry_skills::Llm`] trait as the HTTP client and a friend's model, so
//! chat, the API, the cognitive core and offload use it unchanged. This is
//! how phone apps run models: no server beside the node.
//!
//! Files: [`gguf`] reads and checks a file's header without loading it
//! (what `porfiry llm list` shows; the one-line error for a missing,
//! truncated or foreign file); [`template_choice`] which chat template a
//! file is prompted with (the flag, its own, its architecture's), decided
//! before loading; [`options`] the engine's settings and their
//! limits; [`engine`] the handle callers hold (a bounded queue to the
//! inference thread); `actor` (feature `llama`) the one thread that owns
//! the model and its context — llama.cpp's context is not `Sync` and its
//! KV cache is the state prefix reuse keeps, and it applies a request's
//! grammar and stop texts (`stops`), and formats prompts with the model's
//! chat template (`chat_template`: llama.cpp's formatting where it knows the
//! template, else the template's Jinja text through `jinja`); `embed` (feature `llama`) vectors of
//! texts in a small context of their own; [`stats`] the counters tests and
//! benches read; [`test_model`] where real-model tests find their GGUF;
//! [`pull`] downloads model files (`porfiry model pull`): a catalogue of
//! small models with pinned hashes, resumed and verified downloads.
//!
//! Without the `llama` feature the crate still reads GGUF headers, and
//! [`Engine::open`] answers that this build has no embedded engine.

#[cfg(feature = "llama")]
mod actor;
#[cfg(feature = "llama")]
mod chat_template;
#[cfg(feature = "llama")]
mod embed;
pub mod engine;
pub mod gguf;
#[cfg(all(test, feature = "llama"))]
mod grammar_check;
#[cfg(feature = "llama")]
mod jinja;
pub mod options;
pub mod pull;
pub mod stats;
#[cfg(feature = "llama")]
mod stops;
pub mod template_choice;
pub mod test_model;
#[cfg(feature = "llama")]
pub mod training_text;
#[cfg(feature = "llama")]
mod utf8;

pub use engine::{Engine, EngineError, ModelInfo};
pub use gguf::{GgufError, GgufInfo, inspect};
pub use options::EngineOptions;
pub use stats::EngineStats;
pub use template_choice::{TemplateChoice, TemplateError, TemplateSource};

/// Whether this build carries the llama.cpp engine (the `llama` feature).
pub const BUILT_IN: bool = cfg!(feature = "llama");
