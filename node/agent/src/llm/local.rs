//! Models in local GGUF files, run by the embedded engine (`porfiry-engine`).
//! A registry row or a `--model-file` flag names one as `file:<path>`
//! ([`FILE_ENDPOINT_PREFIX`]). The engines are shared process-wide: every
//! caller that names the same file (the chat, the core, its `llm_*`
//! commands, offload) gets the one loaded model, so it is in memory once
//! and its KV cache serves all of them; it is freed when the last one lets go.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, Weak};

pub use porfiry_engine::{Engine, EngineError, EngineOptions, GgufError, GgufInfo};

/// The endpoint prefix of a local model file (`file:/models/smollm2.gguf`).
pub const FILE_ENDPOINT_PREFIX: &str = "file:";

/// The endpoint a registry row stores for `path`.
pub fn file_endpoint(path: &Path) -> String {
    format!("{FILE_ENDPOINT_PREFIX}{}", path.display())
}

/// The path of a `file:` endpoint; `None` for any other endpoint.
pub fn endpoint_file(endpoint: &str) -> Option<PathBuf> {
    endpoint
        .trim()
        .strip_prefix(FILE_ENDPOINT_PREFIX)
        .map(PathBuf::from)
}

/// The engine for `path`: the one already open in this process with the
/// same chat template, else a new one opened with `options` (which then
/// apply until it is freed). Blocks while the model loads.
pub fn open_model_file(path: &Path, options: &EngineOptions) -> Result<Arc<Engine>, EngineError> {
    // Keyed by the template too: the same file under another template is
    // another prompt format, and sharing its engine would ignore the flag.
    type Key = (PathBuf, Option<String>);
    static OPEN: Mutex<Option<HashMap<Key, Weak<Engine>>>> = Mutex::new(None);
    let key = (
        std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned()),
        options.chat_template.clone(),
    );
    let mut open = OPEN.lock().unwrap_or_else(PoisonError::into_inner);
    let map = open.get_or_insert_with(HashMap::new);
    map.retain(|_, engine| engine.strong_count() > 0);
    if let Some(engine) = map.get(&key).and_then(Weak::upgrade) {
        return Ok(engine);
    }
    let engine = Arc::new(Engine::open(path, options)?);
    tracing::info!(
        file = %path.display(),
        model = %engine.info().label(),
        context = engine.info().context,
        threads = engine.info().threads,
        template = %engine.info().template,
        "embedded model loaded"
    );
    map.insert(key, Arc::downgrade(&engine));
    Ok(engine)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_endpoints_round_trip_and_others_are_not_files() {
        let path = Path::new("/m/smol.gguf");
        assert_eq!(file_endpoint(path), "file:/m/smol.gguf");
        assert_eq!(endpoint_file(" file:/m/smol.gguf"), Some(path.to_owned()));
        assert_eq!(endpoint_file("http://h/v1"), None);
    }

    #[test]
    fn a_missing_file_is_one_line_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("absent.gguf");
        let err = open_model_file(&path, &EngineOptions::default()).unwrap_err();
        let line = err.to_string();
        assert!(
            line.contains("absent.gguf") && !line.contains('\n'),
            "{line}"
        );
    }
}
