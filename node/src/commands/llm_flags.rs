//! The model flags `porfiry chat` and `porfiry run` share: the server and
//! model (`--llm-url`, `--llm-model`, or `PORFIRY_LLM_URL`,
//! `PORFIRY_LLM_MODEL`), the call settings, and the key from
//! `PORFIRY_LLM_API_KEY`, or a local GGUF (`--model-file`,
//! [`crate::commands::model_file_flags`]) — one place, so the commands reach
//! a model the same way.

use std::path::Path;

use clap::Args;

use crate::commands::constrained_flag::ConstrainedArgs;
use crate::commands::model_file_flags::{ModelFileArgs, ModelFileConflict};

use porfiry_agent::llm::config::{DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT};
use porfiry_agent::llm::{LlmConfig, LlmTarget};

/// Call settings of the model.
#[derive(Debug, Clone, Args)]
pub struct LlmCallArgs {
    /// Seconds one model request may take before the turn fails.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_TIMEOUT.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..))]
    pub llm_timeout_secs: u64,
    /// Retries of a model request after HTTP 429/5xx or a connection error.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_RETRIES)]
    pub llm_retries: u32,
}

impl LlmCallArgs {
    /// The model at `base_url` named `model`, with these settings and the
    /// key from `PORFIRY_LLM_API_KEY` when set.
    pub fn target(&self, base_url: &str, model: &str) -> LlmTarget {
        LlmTarget {
            config: LlmConfig {
                timeout_ms: Some(self.llm_timeout_secs.saturating_mul(1_000)),
                max_retries: Some(self.llm_retries),
                ..LlmConfig::default()
            },
            ..LlmTarget::new(base_url, model)
        }
        .with_api_key_from_env()
    }
}

/// The model flags of a command that also runs without a model (`porfiry run`).
#[derive(Debug, Clone, Args)]
pub struct OptionalLlmArgs {
    /// Base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1.
    /// Without it (and --llm-model) the node runs and chat requests get an
    /// error saying no model is configured.
    #[arg(long, env = "PORFIRY_LLM_URL", value_name = "URL")]
    pub llm_url: Option<String>,
    /// Model name as the server knows it.
    #[arg(long, env = "PORFIRY_LLM_MODEL", value_name = "NAME")]
    pub llm_model: Option<String>,
    /// Call settings.
    #[command(flatten)]
    pub call: LlmCallArgs,
    /// A local GGUF model instead of a server.
    #[command(flatten)]
    pub file: ModelFileArgs,
    /// Decoding under the reply grammar.
    #[command(flatten)]
    pub constrained: ConstrainedArgs,
}

/// One of the two model flags without the other.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--{given} is set but --{missing} is not: give both (or neither, to run without a model)")]
pub struct HalfConfiguredModel {
    /// The flag given.
    pub given: &'static str,
    /// The flag missing.
    pub missing: &'static str,
}

impl OptionalLlmArgs {
    /// The `--model-file` given, refused together with a server's flags.
    pub fn model_file(&self) -> Result<Option<&Path>, ModelFileConflict> {
        let Some(path) = self.file.model_file.as_deref() else {
            return Ok(None);
        };
        if self.llm_url.is_some() {
            return Err(ModelFileConflict::with("llm-url", "PORFIRY_LLM_URL"));
        }
        if self.llm_model.is_some() {
            return Err(ModelFileConflict::with("llm-model", "PORFIRY_LLM_MODEL"));
        }
        Ok(Some(path))
    }

    /// The model these flags name; `None` without both. It is sent reply
    /// grammars with `--constrained on`.
    pub fn target(&self) -> Result<Option<LlmTarget>, HalfConfiguredModel> {
        match (&self.llm_url, &self.llm_model) {
            (Some(url), Some(model)) => Ok(Some(LlmTarget {
                send_grammar: self.constrained.mode().sends_to_http(),
                ..self.call.target(url, model)
            })),
            (None, None) => Ok(None),
            (Some(_), None) => Err(HalfConfiguredModel {
                given: "llm-url",
                missing: "llm-model",
            }),
            (None, Some(_)) => Err(HalfConfiguredModel {
                given: "llm-model",
                missing: "llm-url",
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(url: Option<&str>, model: Option<&str>) -> OptionalLlmArgs {
        OptionalLlmArgs {
            llm_url: url.map(str::to_owned),
            llm_model: model.map(str::to_owned),
            call: LlmCallArgs {
                llm_timeout_secs: 7,
                llm_retries: 1,
            },
            file: ModelFileArgs::default(),
            constrained: ConstrainedArgs::default(),
        }
    }

    #[test]
    fn model_file_with_a_server_flag_is_refused() {
        let mut a = args(None, None);
        a.file.model_file = Some("m.gguf".into());
        assert_eq!(a.model_file().unwrap(), Some(Path::new("m.gguf")));
        let mut both = args(Some("http://h/v1"), None);
        both.file.model_file = Some("m.gguf".into());
        let e = both.model_file().unwrap_err().to_string();
        assert!(e.contains("--model-file and --llm-url"), "{e}");
        assert!(args(None, None).model_file().unwrap().is_none());
    }

    #[test]
    fn both_flags_name_a_model_neither_none_and_one_is_an_error() {
        let target = args(Some("http://h/v1"), Some("m"))
            .target()
            .unwrap()
            .unwrap();
        assert_eq!(
            (target.base_url.as_str(), target.model.as_str()),
            ("http://h/v1", "m")
        );
        assert_eq!(target.config.timeout_ms, Some(7_000));
        assert_eq!(target.config.max_retries, Some(1));
        assert!(args(None, None).target().unwrap().is_none());
        let err = args(Some("http://h/v1"), None).target().unwrap_err();
        assert!(err.to_string().contains("--llm-model is not"), "{err}");
    }
}
