//! Getting a model file onto the device (`porfiry model pull`): what
//! `ollama pull` gives its users, for GGUF files the embedded engine runs.
//!
//! [`catalogue`] names a few small instruct models with pinned hashes;
//! [`download`] fetches one file over HTTP(S) into the node's models folder,
//! resuming an interrupted download from its `.part` file, and keeps it only
//! when its SHA-256 matches and its header is a GGUF's.

pub mod catalogue;
pub mod download;

use std::fmt;

pub use catalogue::{CATALOGUE, CatalogueModel, HF_ENDPOINT, HF_ENDPOINT_ENV};
pub use download::{Progress, PullError, Pulled, Source, client, pull};

/// A SHA-256 digest: what a pull checks a file against.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sha256Digest(pub [u8; 32]);

/// A `--sha256` that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a SHA-256 is 64 hex digits (what `sha256sum` prints); got {0:?}")]
pub struct BadDigest(pub String);

impl Sha256Digest {
    /// Parses 64 hex digits (either case, surrounding spaces ignored).
    pub fn parse(text: &str) -> Result<Self, BadDigest> {
        let trimmed = text.trim();
        let mut out = [0u8; 32];
        if trimmed.len() != 64 || !trimmed.is_ascii() {
            return Err(BadDigest(text.to_owned()));
        }
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&trimmed[2 * i..2 * i + 2], 16)
                .map_err(|_| BadDigest(text.to_owned()))?;
        }
        Ok(Self(out))
    }
}

impl fmt::Display for Sha256Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl fmt::Debug for Sha256Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sha256Digest({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digest_round_trips_through_hex_and_bad_text_is_refused() {
        let hex = "B179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";
        let d = Sha256Digest::parse(&format!(" {hex}\n")).unwrap();
        assert_eq!(d.to_string(), hex.to_ascii_lowercase());
        for bad in [
            "",
            "abc",
            &hex[1..],
            &format!("{}zz", &hex[2..]),
            &"é".repeat(32),
        ] {
            let e = Sha256Digest::parse(bad).unwrap_err().to_string();
            assert!(e.contains("64 hex digits"), "{bad}: {e}");
        }
    }
}
