//! The scenario's `[[models]]`: real models some minds think with instead
//! of the scripted policy — an OpenAI-compatible server (`url`, `model`,
//! `concurrency`: a vLLM, Ollama or llama.cpp server) or a GGUF file run by
//! the node's embedded engine (`gguf`). Each table names the minds (node
//! indices) that use it; every other mind keeps its scripted policy.
//! Checked with the rest of the scenario, one line naming the field.

use std::path::PathBuf;

use porfiry_storage::MAX_TEMPERATURE;
use serde::Deserialize;

use super::scenario::MindsScenarioError;

/// Most calls in flight to one model: a vLLM server batches a few dozen
/// sequences well and Ollama serves 1–4 by default; past 64 a call only
/// waits longer in the server's own queue.
pub const MAX_MODEL_CONCURRENCY: usize = 64;

/// Most `[[models]]` tables: a comparison of a handful of models is what a
/// scenario is for; more is a sweep.
pub const MAX_MODELS: usize = 16;

/// Calls in flight when `concurrency` is not given: one, what a laptop's
/// Ollama serves without tuning.
const DEFAULT_CONCURRENCY: usize = 1;

/// One real model and the minds that think with it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// Short name: the minds' registry row and the tape carry it.
    pub name: String,
    /// The minds (node indices, from 0) that think with it.
    pub nodes: Vec<usize>,
    /// Base URL of an OpenAI-compatible server (`http://127.0.0.1:8000/v1`);
    /// exactly one of `url` and `gguf`.
    #[serde(default)]
    pub url: Option<String>,
    /// The model's name at the server (the request's `model`); needed
    /// with `url`.
    #[serde(default)]
    pub model: Option<String>,
    /// A GGUF file for the embedded engine (a path as given, from the
    /// working folder); needs mesh-sim built with `--features engine`.
    #[serde(default)]
    pub gguf: Option<PathBuf>,
    /// Most calls in flight to this model at once, all its minds together.
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
    /// Sampling temperature sent to the server (default 0).
    #[serde(default)]
    pub temperature: f64,
    /// The environment variable holding the server's API key, if it needs
    /// one (the key itself never goes into a scenario).
    #[serde(default)]
    pub api_key_env: Option<String>,
}

fn default_concurrency() -> usize {
    DEFAULT_CONCURRENCY
}

fn invalid(field: String, detail: impl Into<String>) -> MindsScenarioError {
    MindsScenarioError::Invalid {
        field,
        detail: detail.into(),
    }
}

impl ModelSpec {
    /// Where the model is, for messages: the URL or the file.
    pub fn source(&self) -> String {
        match (&self.url, &self.gguf) {
            (Some(url), _) => url.clone(),
            (None, Some(path)) => format!("file:{}", path.display()),
            (None, None) => "-".into(),
        }
    }

    fn validate(&self, k: usize, minds: usize) -> Result<(), MindsScenarioError> {
        let field = |name: &str| format!("models[{k}].{name}");
        if self.name.trim().is_empty() {
            return Err(invalid(field("name"), "must not be empty"));
        }
        match (&self.url, &self.gguf) {
            (Some(_), Some(_)) | (None, None) => {
                return Err(invalid(
                    field("url"),
                    "give exactly one of `url` and `gguf`",
                ));
            }
            (Some(url), None) => {
                let lower = url.trim().to_ascii_lowercase();
                if !(lower.starts_with("http://") || lower.starts_with("https://")) {
                    return Err(invalid(
                        field("url"),
                        format!("{url:?} is not an http(s):// URL"),
                    ));
                }
                if self.model.as_deref().is_none_or(|m| m.trim().is_empty()) {
                    return Err(invalid(
                        field("model"),
                        "a `url` model needs the model's name at the server",
                    ));
                }
            }
            (None, Some(_)) => {}
        }
        if !(1..=MAX_MODEL_CONCURRENCY).contains(&self.concurrency) {
            return Err(invalid(
                field("concurrency"),
                format!("{} is not in 1..={MAX_MODEL_CONCURRENCY}", self.concurrency),
            ));
        }
        if !(0.0..=MAX_TEMPERATURE).contains(&self.temperature) {
            return Err(invalid(
                field("temperature"),
                format!("{} is not in 0..={MAX_TEMPERATURE}", self.temperature),
            ));
        }
        if self.nodes.is_empty() {
            return Err(invalid(field("nodes"), "names no mind"));
        }
        if let Some(&n) = self.nodes.iter().find(|&&n| n >= minds) {
            return Err(invalid(
                field("nodes"),
                format!("mind {n} is not in 0..{minds}"),
            ));
        }
        Ok(())
    }
}

/// Checks every `[[models]]` table: its own fields, unique names, and no
/// mind given two models.
pub(crate) fn validate(models: &[ModelSpec], minds: usize) -> Result<(), MindsScenarioError> {
    if models.len() > MAX_MODELS {
        return Err(invalid(
            "models".into(),
            format!("{} tables; at most {MAX_MODELS}", models.len()),
        ));
    }
    let mut owner: Vec<Option<usize>> = vec![None; minds];
    for (k, spec) in models.iter().enumerate() {
        spec.validate(k, minds)?;
        if models[..k].iter().any(|o| o.name == spec.name) {
            return Err(invalid(
                format!("models[{k}].name"),
                format!("{:?} is taken by an earlier table", spec.name),
            ));
        }
        for &n in &spec.nodes {
            // In range: checked by `spec.validate`.
            if let Some(earlier) = owner[n] {
                return Err(invalid(
                    format!("models[{k}].nodes"),
                    format!("mind {n} already thinks with models[{earlier}]"),
                ));
            }
            owner[n] = Some(k);
        }
    }
    Ok(())
}

/// The model of every mind: `Some(k)` for `models[k]`, `None` for the
/// scripted policy.
pub fn model_of_minds(models: &[ModelSpec], minds: usize) -> Vec<Option<usize>> {
    let mut out = vec![None; minds];
    for (k, spec) in models.iter().enumerate() {
        for &n in &spec.nodes {
            if let Some(slot) = out.get_mut(n) {
                *slot = Some(k);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, nodes: Vec<usize>) -> ModelSpec {
        ModelSpec {
            name: name.into(),
            nodes,
            url: Some("http://127.0.0.1:8000/v1".into()),
            model: Some("m".into()),
            gguf: None,
            concurrency: 2,
            temperature: 0.0,
            api_key_env: None,
        }
    }

    fn field_of(models: &[ModelSpec]) -> String {
        match validate(models, 4) {
            Err(MindsScenarioError::Invalid { field, .. }) => field,
            other => panic!("accepted or wrong error: {other:?}"),
        }
    }

    #[test]
    fn every_bad_table_names_its_field() {
        assert!(validate(&[spec("a", vec![0]), spec("b", vec![1, 2])], 4).is_ok());
        let mut both = spec("a", vec![0]);
        both.gguf = Some("m.gguf".into());
        assert_eq!(field_of(&[both]), "models[0].url");
        let mut ftp = spec("a", vec![0]);
        ftp.url = Some("ftp://h".into());
        assert_eq!(field_of(&[ftp]), "models[0].url");
        let mut nameless = spec("a", vec![0]);
        nameless.model = None;
        assert_eq!(field_of(&[nameless]), "models[0].model");
        let mut many = spec("a", vec![0]);
        many.concurrency = 0;
        assert_eq!(field_of(&[many]), "models[0].concurrency");
        let mut hot = spec("a", vec![0]);
        hot.temperature = 3.0;
        assert_eq!(field_of(&[hot]), "models[0].temperature");
        assert_eq!(field_of(&[spec("a", vec![4])]), "models[0].nodes");
        assert_eq!(field_of(&[spec("a", vec![])]), "models[0].nodes");
        assert_eq!(
            field_of(&[spec("a", vec![0]), spec("a", vec![1])]),
            "models[1].name"
        );
        assert_eq!(
            field_of(&[spec("a", vec![0, 1]), spec("b", vec![1])]),
            "models[1].nodes"
        );
    }

    #[test]
    fn minds_map_to_their_table() {
        let models = [spec("a", vec![2]), spec("b", vec![0, 3])];
        assert_eq!(
            model_of_minds(&models, 4),
            vec![Some(1), None, Some(0), Some(1)]
        );
    }
}
