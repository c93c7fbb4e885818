//! The GGUF header reader against files written here: whole, truncated in
//! the header and in the data, foreign, missing, damaged.

use std::path::PathBuf;

use super::write::{Kv, file};
use super::*;

fn on_disk(bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    std::fs::write(&path, bytes).unwrap();
    (dir, path)
}

fn model_kv() -> Vec<(&'static str, Kv)> {
    vec![
        ("general.architecture", Kv::Str("llama")),
        ("general.name", Kv::Str("Tiny")),
        ("llama.context_length", Kv::U32(8192)),
        ("qwen2.context_length", Kv::U32(7)),
        ("tokenizer.ggml.tokens", Kv::StrArray(vec!["a", "b", "c"])),
        ("tokenizer.chat_template", Kv::Str("{{ x }}")),
    ]
}

#[test]
fn a_whole_file_gives_its_architecture_context_and_size() {
    let bytes = file(&model_kv(), 8, 32);
    let (_dir, path) = on_disk(&bytes);
    let info = inspect(&path).unwrap();
    assert_eq!(
        info,
        GgufInfo {
            file_bytes: bytes.len() as u64,
            architecture: "llama".into(),
            name: Some("Tiny".into()),
            context_length: Some(8192),
            has_chat_template: true,
            tensors: 1,
        }
    );
}

#[test]
fn a_file_cut_inside_the_tensor_data_is_truncated() {
    let (_dir, path) = on_disk(&file(&model_kv(), 8, 31));
    let err = inspect(&path).unwrap_err();
    assert!(matches!(err, GgufError::Truncated { .. }), "{err}");
    let line = err.to_string();
    assert!(
        line.contains("m.gguf") && line.contains("truncated"),
        "{line}"
    );
    assert!(!line.contains('\n'), "{line}");
}

#[test]
fn a_file_cut_inside_the_header_is_truncated() {
    let whole = file(&model_kv(), 8, 32);
    for cut in [6, 20, 60, 120] {
        let (_dir, path) = on_disk(&whole[..cut]);
        let err = inspect(&path).unwrap_err();
        assert!(matches!(err, GgufError::Truncated { .. }), "{cut}: {err}");
    }
}

#[test]
fn a_foreign_or_empty_file_is_not_gguf() {
    for bytes in [&b"PK\x03\x04 a zip"[..], b"", b"GG"] {
        let (_dir, path) = on_disk(bytes);
        let err = inspect(&path).unwrap_err();
        assert!(matches!(err, GgufError::NotGguf { .. }), "{err}");
        assert!(err.to_string().contains("m.gguf"), "{err}");
    }
}

#[test]
fn a_missing_file_or_a_directory_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.gguf");
    let err = inspect(&missing).unwrap_err();
    assert!(matches!(err, GgufError::Missing { .. }), "{err}");
    assert!(err.to_string().contains("none.gguf"), "{err}");
    let err = inspect(dir.path()).unwrap_err();
    assert!(matches!(err, GgufError::Unreadable { .. }), "{err}");
}

#[test]
fn an_unknown_version_or_a_header_without_architecture_is_refused() {
    let mut bytes = file(&model_kv(), 8, 32);
    bytes[4] = 9;
    let (_dir, path) = on_disk(&bytes);
    assert!(matches!(
        inspect(&path).unwrap_err(),
        GgufError::Version { version: 9, .. }
    ));
    let (_dir, path) = on_disk(&file(&[("general.name", Kv::Str("x"))], 8, 32));
    assert!(matches!(
        inspect(&path).unwrap_err(),
        GgufError::Damaged { .. }
    ));
}

#[test]
fn a_string_longer_than_the_limit_is_damage_not_an_allocation() {
    let mut bytes = file(&model_kv(), 8, 32);
    // The first key's length field follows magic, version and two counts.
    bytes[24..32].copy_from_slice(&(MAX_STRING_BYTES + 1).to_le_bytes());
    let (_dir, path) = on_disk(&bytes);
    assert!(matches!(
        inspect(&path).unwrap_err(),
        GgufError::Damaged { .. }
    ));
}

#[test]
fn an_array_of_arrays_is_damage_not_a_stack_overflow() {
    // Found with the `gguf_header` fuzz target (issue 46): each nested level
    // recursed once more, and 100,000 levels (1.2 MB) overflowed the stack.
    // llama.cpp refuses them.
    let mut bytes = b"GGUF".to_vec();
    bytes.extend_from_slice(&3u32.to_le_bytes());
    bytes.extend_from_slice(&0u64.to_le_bytes());
    bytes.extend_from_slice(&1u64.to_le_bytes());
    bytes.extend_from_slice(&3u64.to_le_bytes());
    bytes.extend_from_slice(b"key");
    bytes.extend_from_slice(&9u32.to_le_bytes());
    for _ in 0..100_000 {
        bytes.extend_from_slice(&9u32.to_le_bytes());
        bytes.extend_from_slice(&1u64.to_le_bytes());
    }
    bytes.extend_from_slice(&4u32.to_le_bytes());
    bytes.extend_from_slice(&0u64.to_le_bytes());
    let (_dir, path) = on_disk(&bytes);
    let err = inspect(&path).unwrap_err();
    assert!(matches!(err, GgufError::Damaged { .. }), "{err}");
    assert!(err.to_string().contains("array of arrays"), "{err}");
}
