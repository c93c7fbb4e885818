//! `--model-file PATH.gguf` and its settings, shared by `porfiry run`,
//! `porfiry chat` and `porfiry think`: a local GGUF model run in-process by
//! the embedded llama.cpp engine instead of a server. It excludes
//! `--llm-url`/`--llm-model` and `--llm-peer`; the file is checked and loaded
//! before anything else starts, so a missing, truncated or foreign file is
//! one line naming it and nothing runs. `--chat-template` picks the prompt
//! format where the file has none (a Gemma base model) or a wrong one.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;
use porfiry_agent::llm::local::{Engine, EngineOptions, file_endpoint, open_model_file};
use porfiry_engine::options::DEFAULT_CONTEXT_CAP;
use porfiry_storage::LlmEntry;

/// The embedded model's flags.
#[derive(Debug, Clone, Default, Args)]
pub struct ModelFileArgs {
    /// Run this GGUF model in-process (the embedded llama.cpp engine)
    /// instead of a server; excludes --llm-url/--llm-model and --llm-peer.
    #[arg(long, value_name = "PATH.gguf")]
    pub model_file: Option<PathBuf>,
    /// The embedded model's context in tokens, at most what the model was
    /// trained for [default: 4096].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(256..))]
    pub model_context: Option<u32>,
    /// CPU threads of the embedded model [default: every core].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub model_threads: Option<u32>,
    /// The embedded model's chat template: a llama.cpp name (gemma, chatml,
    /// llama3, …) or a Jinja file, instead of the file's own [default: the
    /// file's, else the one llama.cpp knows for its architecture].
    #[arg(long, value_name = "NAME|FILE")]
    pub chat_template: Option<String>,
}

/// `--model-file` given together with another model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--model-file and --{other} both name a model: pick one (a local GGUF file, or a server, or a \
     friend's model){env}"
)]
pub struct ModelFileConflict {
    /// The other flag.
    pub other: &'static str,
    /// A note when the other one may come from the environment.
    pub env: &'static str,
}

impl ModelFileConflict {
    /// The conflict with `--other`, whose value may come from `env_var`.
    pub fn with(other: &'static str, env_var: &'static str) -> Self {
        let env = match env_var {
            "PORFIRY_LLM_URL" => " (unset PORFIRY_LLM_URL if it comes from the environment)",
            "PORFIRY_LLM_MODEL" => " (unset PORFIRY_LLM_MODEL if it comes from the environment)",
            "PORFIRY_LLM_PEER" => " (unset PORFIRY_LLM_PEER if it comes from the environment)",
            _ => "",
        };
        Self { other, env }
    }
}

impl ModelFileArgs {
    /// The engine settings these flags give.
    pub fn engine_options(&self) -> EngineOptions {
        EngineOptions {
            context_cap: self.model_context.unwrap_or(DEFAULT_CONTEXT_CAP),
            threads: self.model_threads.map(|n| n as usize),
            chat_template: self.chat_template.clone(),
            ..EngineOptions::default()
        }
    }

    /// Loads the file (blocking) and returns its engine; `None` without
    /// `--model-file`. The engine stays shared in this process while held.
    pub fn open(&self) -> anyhow::Result<Option<Arc<Engine>>> {
        let Some(path) = &self.model_file else {
            return Ok(None);
        };
        Ok(Some(open_model_file(path, &self.engine_options())?))
    }
}

/// A registry-shaped row for the GGUF at `path`: named after the file's
/// stem, its endpoint `file:<absolute path>`.
pub fn file_entry(path: &Path) -> LlmEntry {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let stem = path
        .file_stem()
        .map_or_else(|| "model".to_owned(), |s| s.to_string_lossy().into_owned());
    LlmEntry {
        name: stem.clone(),
        endpoint: file_endpoint(&absolute),
        model: stem,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_becomes_an_absolute_file_endpoint_named_after_it() {
        let entry = file_entry(Path::new("models/smol.gguf"));
        assert_eq!(entry.name, "smol");
        assert_eq!(entry.model, "smol");
        assert!(entry.endpoint.starts_with("file:/"), "{}", entry.endpoint);
        assert!(entry.endpoint.ends_with("models/smol.gguf"));
    }

    #[test]
    fn the_context_flag_caps_the_engine_and_defaults_to_the_named_cap() {
        let args = ModelFileArgs::default();
        assert_eq!(args.engine_options().context_cap, DEFAULT_CONTEXT_CAP);
        let args = ModelFileArgs {
            model_context: Some(1024),
            model_threads: Some(1),
            chat_template: Some("gemma".into()),
            ..ModelFileArgs::default()
        };
        let options = args.engine_options();
        assert_eq!((options.context_cap, options.thread_count()), (1024, 1));
        assert_eq!(options.chat_template.as_deref(), Some("gemma"));
    }

    #[test]
    fn a_conflict_says_both_flags_and_where_the_other_came_from() {
        let e = ModelFileConflict::with("llm-url", "PORFIRY_LLM_URL").to_string();
        assert!(e.contains("--model-file and --llm-url"), "{e}");
        assert!(e.contains("PORFIRY_LLM_URL"), "{e}");
    }

    #[test]
    fn a_missing_file_is_an_error_naming_it_before_anything_runs() {
        let dir = tempfile::tempdir().unwrap();
        let args = ModelFileArgs {
            model_file: Some(dir.path().join("nope.gguf")),
            ..ModelFileArgs::default()
        };
        let e = args.open().unwrap_err().to_string();
        assert!(
            e.contains("nope.gguf") && e.contains("does not exist"),
            "{e}"
        );
        assert!(ModelFileArgs::default().open().unwrap().is_none());
    }
}
