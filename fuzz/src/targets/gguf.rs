//! The GGUF header reader (`porfiry_engine::gguf::inspect`, compiled from
//! its file, see the crate doc; no llama.cpp). It reads a path, so each
//! input is written to a file of this process and thread first (`run.sh`
//! points `TMPDIR` at a tmpfs).

use std::path::PathBuf;

use crate::engine::gguf::inspect;

/// `gguf::inspect` on the bytes as a file.
pub fn gguf_header(data: &[u8]) {
    let path = scratch_file();
    if std::fs::write(&path, data).is_err() {
        return;
    }
    if let Ok(info) = inspect(&path) {
        assert_eq!(info.file_bytes, data.len() as u64);
    }
}

fn scratch_file() -> PathBuf {
    thread_local! {
        static PATH: PathBuf = std::env::temp_dir().join(format!(
            "porfiry-fuzz-gguf-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
    }
    PATH.with(PathBuf::clone)
}
