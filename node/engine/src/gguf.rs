//! Reads a GGUF file's header without llama.cpp: checks that the file is a
//! whole GGUF (magic, version, metadata, tensor table, and that every tensor's
//! data lies inside the file) and returns what `porfiry llm list` shows
//! ([`GgufInfo`]: size, architecture, trained context, name). A missing,
//! truncated or foreign file is a one-line [`GgufError`] naming the file,
//! found before a model is loaded or a node starts.

use std::fs::File;
use std::io::{self, BufReader, Read, Seek};
use std::path::{Path, PathBuf};

/// The four bytes every GGUF file starts with.
const MAGIC: &[u8; 4] = b"GGUF";

/// The longest metadata string read (a chat template, a token): real files
/// stay far below it; a longer one means the header is damaged, and reading
/// it would allocate whatever the damaged length says.
const MAX_STRING_BYTES: u64 = 16 * 1024 * 1024;

/// Alignment of the tensor data when the file does not set
/// `general.alignment` (the GGUF specification's default).
const DEFAULT_ALIGNMENT: u64 = 32;

/// Most dimensions a ggml tensor has.
const MAX_DIMS: u32 = 4;

/// What a GGUF header says about its model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GgufInfo {
    /// The file's size in bytes.
    pub file_bytes: u64,
    /// `general.architecture` (`llama`, `qwen2`, `gemma3`, …).
    pub architecture: String,
    /// `general.name`, when set.
    pub name: Option<String>,
    /// `<architecture>.context_length`: the context the model was trained for.
    pub context_length: Option<u64>,
    /// Whether `tokenizer.chat_template` is present.
    pub has_chat_template: bool,
    /// Tensors in the file.
    pub tensors: u64,
}

/// Why a file is not a usable GGUF model. Each message is one line that
/// names the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GgufError {
    /// Nothing at that path.
    #[error("model file {path} does not exist")]
    Missing {
        /// The path given.
        path: PathBuf,
    },
    /// It could not be read (permissions, a directory, an IO error).
    #[error("model file {path} cannot be read: {detail}")]
    Unreadable {
        /// The path given.
        path: PathBuf,
        /// The OS's message.
        detail: String,
    },
    /// It does not start with `GGUF`.
    #[error("model file {path} is not a GGUF model (it does not start with \"GGUF\")")]
    NotGguf {
        /// The path given.
        path: PathBuf,
    },
    /// A GGUF version this reader does not know.
    #[error("model file {path} is GGUF version {version}; versions 2 and 3 are supported")]
    Version {
        /// The path given.
        path: PathBuf,
        /// The version in the header.
        version: u32,
    },
    /// The file ends before its header or its tensor data does.
    #[error("model file {path} is truncated: {detail} (download it again)")]
    Truncated {
        /// The path given.
        path: PathBuf,
        /// Where it ends too early.
        detail: String,
    },
    /// The header holds something no writer produces.
    #[error("model file {path} has a damaged GGUF header: {detail}")]
    Damaged {
        /// The path given.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
}

/// Reads and checks `path`'s GGUF header.
pub fn inspect(path: &Path) -> Result<GgufInfo, GgufError> {
    let file = File::open(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => GgufError::Missing {
            path: path.to_owned(),
        },
        _ => GgufError::Unreadable {
            path: path.to_owned(),
            detail: e.to_string(),
        },
    })?;
    let unreadable = |e: io::Error| GgufError::Unreadable {
        path: path.to_owned(),
        detail: e.to_string(),
    };
    let metadata = file.metadata().map_err(unreadable)?;
    if metadata.is_dir() {
        return Err(GgufError::Unreadable {
            path: path.to_owned(),
            detail: "it is a directory".into(),
        });
    }
    let mut reader = Reader {
        inner: BufReader::new(file),
        file_bytes: metadata.len(),
    };
    reader.parse().map_err(|failure| failure.into_error(path))
}

/// A parse failure before the path is attached.
enum Failure {
    NotGguf,
    Version(u32),
    Truncated(String),
    Damaged(String),
    Io(io::Error),
}

impl Failure {
    fn into_error(self, path: &Path) -> GgufError {
        let path = path.to_owned();
        match self {
            Failure::NotGguf => GgufError::NotGguf { path },
            Failure::Version(version) => GgufError::Version { path, version },
            Failure::Truncated(detail) => GgufError::Truncated { path, detail },
            Failure::Damaged(detail) => GgufError::Damaged { path, detail },
            Failure::Io(e) => GgufError::Unreadable {
                path,
                detail: e.to_string(),
            },
        }
    }
}

/// A metadata value, kept only where the reader needs it.
enum Value {
    Str(String),
    Uint(u64),
    Other,
}

struct Reader {
    inner: BufReader<File>,
    file_bytes: u64,
}

impl Reader {
    fn parse(&mut self) -> Result<GgufInfo, Failure> {
        let mut magic = [0u8; 4];
        self.exact(&mut magic, "the magic number")
            .map_err(|f| match f {
                Failure::Truncated(_) => Failure::NotGguf,
                other => other,
            })?;
        if &magic != MAGIC {
            return Err(Failure::NotGguf);
        }
        let version = self.u32("the version")?;
        if !(2..=3).contains(&version) {
            return Err(Failure::Version(version));
        }
        let tensors = self.u64("the tensor count")?;
        let kv_count = self.u64("the metadata count")?;
        let mut architecture = None;
        let mut name = None;
        let mut has_chat_template = false;
        let mut alignment = DEFAULT_ALIGNMENT;
        let mut context_lengths = Vec::new();
        for _ in 0..kv_count {
            let key = self.string("a metadata key")?;
            let value = self.value(&key)?;
            match (key.as_str(), value) {
                ("general.architecture", Value::Str(s)) => architecture = Some(s),
                ("general.name", Value::Str(s)) => name = Some(s),
                ("general.alignment", Value::Uint(n)) if n > 0 => alignment = n,
                ("tokenizer.chat_template", _) => has_chat_template = true,
                (k, Value::Uint(n)) if k.ends_with(".context_length") => {
                    context_lengths.push((k.trim_end_matches(".context_length").to_owned(), n));
                }
                _ => {}
            }
        }
        let architecture = architecture
            .ok_or_else(|| Failure::Damaged("it names no general.architecture".into()))?;
        let context_length = context_lengths
            .into_iter()
            .find(|(arch, _)| *arch == architecture)
            .map(|(_, n)| n);
        let data_end = self.tensor_data_end(tensors)?;
        let position = self.position()?;
        let data_start = position.div_ceil(alignment).saturating_mul(alignment);
        let needed = data_start.saturating_add(data_end);
        if needed > self.file_bytes {
            return Err(Failure::Truncated(format!(
                "its tensors need {needed} bytes, the file has {}",
                self.file_bytes
            )));
        }
        Ok(GgufInfo {
            file_bytes: self.file_bytes,
            architecture,
            name,
            context_length,
            has_chat_template,
            tensors,
        })
    }

    /// Reads the tensor table; returns where the last known tensor's data
    /// ends, relative to the data section.
    fn tensor_data_end(&mut self, tensors: u64) -> Result<u64, Failure> {
        let mut end = 0u64;
        for _ in 0..tensors {
            let name = self.string("a tensor name")?;
            let dims = self.u32("a tensor's dimension count")?;
            if dims == 0 || dims > MAX_DIMS {
                return Err(Failure::Damaged(format!(
                    "tensor {name} has {dims} dimensions"
                )));
            }
            let mut elements = 1u64;
            let mut first = 1u64;
            for i in 0..dims {
                let n = self.u64("a tensor dimension")?;
                if i == 0 {
                    first = n;
                }
                elements = elements.saturating_mul(n);
            }
            let kind = self.u32("a tensor type")?;
            let offset = self.u64("a tensor offset")?;
            if let Some((block, bytes)) = block_layout(kind) {
                if !first.is_multiple_of(block) {
                    return Err(Failure::Damaged(format!(
                        "tensor {name}'s rows do not fill whole blocks"
                    )));
                }
                let size = (elements / block).saturating_mul(bytes);
                end = end.max(offset.saturating_add(size));
            } else {
                end = end.max(offset);
            }
        }
        Ok(end)
    }

    fn value(&mut self, key: &str) -> Result<Value, Failure> {
        let kind = self.u32("a metadata type")?;
        self.value_of(kind, key)
    }

    fn value_of(&mut self, kind: u32, key: &str) -> Result<Value, Failure> {
        Ok(match kind {
            0 | 1 | 7 => Value::Uint(u64::from(self.byte(key)?)),
            2 | 3 => {
                let mut b = [0u8; 2];
                self.exact(&mut b, key)?;
                Value::Uint(u64::from(u16::from_le_bytes(b)))
            }
            4 | 5 => Value::Uint(u64::from(self.u32(key)?)),
            6 => {
                self.skip(4, key)?;
                Value::Other
            }
            8 => Value::Str(self.string(key)?),
            9 => {
                let inner = self.u32(key)?;
                // llama.cpp refuses an array of arrays too (gguf.cpp). Read,
                // each level would recurse once more: 12 bytes a level, so a
                // megabyte of them overflowed the stack (issue 46, an input
                // written for the `gguf_header` fuzz target).
                if inner == 9 {
                    return Err(Failure::Damaged(format!(
                        "{key} is an array of arrays, which GGUF readers refuse"
                    )));
                }
                let count = self.u64(key)?;
                if count > self.file_bytes {
                    return Err(Failure::Damaged(format!(
                        "{key} claims {count} values, more than the file's bytes"
                    )));
                }
                match fixed_width(inner) {
                    Some(width) => self.skip(count.saturating_mul(width), key)?,
                    None => {
                        for _ in 0..count {
                            self.value_of(inner, key)?;
                        }
                    }
                }
                Value::Other
            }
            10 | 11 => Value::Uint(self.u64(key)?),
            12 => {
                self.skip(8, key)?;
                Value::Other
            }
            other => {
                return Err(Failure::Damaged(format!(
                    "{key} has unknown value type {other}"
                )));
            }
        })
    }

    fn string(&mut self, what: &str) -> Result<String, Failure> {
        let len = self.u64(what)?;
        if len > MAX_STRING_BYTES {
            return Err(Failure::Damaged(format!("{what} claims {len} bytes")));
        }
        let mut bytes = vec![0u8; len as usize];
        self.exact(&mut bytes, what)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    fn byte(&mut self, what: &str) -> Result<u8, Failure> {
        let mut b = [0u8; 1];
        self.exact(&mut b, what)?;
        Ok(b[0])
    }

    fn u32(&mut self, what: &str) -> Result<u32, Failure> {
        let mut b = [0u8; 4];
        self.exact(&mut b, what)?;
        Ok(u32::from_le_bytes(b))
    }

    fn u64(&mut self, what: &str) -> Result<u64, Failure> {
        let mut b = [0u8; 8];
        self.exact(&mut b, what)?;
        Ok(u64::from_le_bytes(b))
    }

    fn exact(&mut self, buf: &mut [u8], what: &str) -> Result<(), Failure> {
        self.inner.read_exact(buf).map_err(|e| match e.kind() {
            io::ErrorKind::UnexpectedEof => {
                Failure::Truncated(format!("it ends inside the header ({what})"))
            }
            _ => Failure::Io(e),
        })
    }

    fn skip(&mut self, bytes: u64, what: &str) -> Result<(), Failure> {
        let target = self.position()?.saturating_add(bytes);
        if target > self.file_bytes {
            return Err(Failure::Truncated(format!(
                "it ends inside the header ({what})"
            )));
        }
        let offset =
            i64::try_from(bytes).map_err(|_| Failure::Damaged(format!("{what} is too long")))?;
        self.inner.seek_relative(offset).map_err(Failure::Io)
    }

    fn position(&mut self) -> Result<u64, Failure> {
        self.inner.stream_position().map_err(Failure::Io)
    }
}

/// Bytes of one value of a fixed-width metadata type (`None`: a string or array).
fn fixed_width(kind: u32) -> Option<u64> {
    match kind {
        0 | 1 | 7 => Some(1),
        2 | 3 => Some(2),
        4..=6 => Some(4),
        10..=12 => Some(8),
        _ => None,
    }
}

/// (elements per block, bytes per block) of the ggml tensor types in use
/// (ggml.h's `ggml_type` numbering); `None` for the rest, whose data bound
/// llama.cpp checks itself when it loads the file.
fn block_layout(kind: u32) -> Option<(u64, u64)> {
    Some(match kind {
        0 => (1, 4),      // F32
        1 => (1, 2),      // F16
        2 => (32, 18),    // Q4_0
        3 => (32, 20),    // Q4_1
        6 => (32, 22),    // Q5_0
        7 => (32, 24),    // Q5_1
        8 => (32, 34),    // Q8_0
        9 => (32, 36),    // Q8_1
        10 => (256, 84),  // Q2_K
        11 => (256, 110), // Q3_K
        12 => (256, 144), // Q4_K
        13 => (256, 176), // Q5_K
        14 => (256, 210), // Q6_K
        15 => (256, 292), // Q8_K
        20 => (32, 18),   // IQ4_NL
        23 => (256, 136), // IQ4_XS
        24 => (1, 1),     // I8
        25 => (1, 2),     // I16
        26 => (1, 4),     // I32
        27 => (1, 8),     // I64
        28 => (1, 8),     // F64
        30 => (1, 2),     // BF16
        _ => return None,
    })
}

/// Writes small GGUF files for tests (here and in the CLI's): headers only,
/// no model llama.cpp could run.
pub mod write {
    /// A GGUF v3 file with `kv` string/u32 metadata and one F32 tensor of
    /// `elements` values whose data is `data_bytes` long (pass fewer than
    /// `elements * 4` for a truncated file).
    pub fn file(kv: &[(&str, Kv)], elements: u64, data_bytes: usize) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(b"GGUF");
        out.extend_from_slice(&3u32.to_le_bytes());
        out.extend_from_slice(&1u64.to_le_bytes());
        out.extend_from_slice(&(kv.len() as u64).to_le_bytes());
        for (key, value) in kv {
            string(&mut out, key);
            match value {
                Kv::Str(s) => {
                    out.extend_from_slice(&8u32.to_le_bytes());
                    string(&mut out, s);
                }
                Kv::U32(n) => {
                    out.extend_from_slice(&4u32.to_le_bytes());
                    out.extend_from_slice(&n.to_le_bytes());
                }
                Kv::StrArray(items) => {
                    out.extend_from_slice(&9u32.to_le_bytes());
                    out.extend_from_slice(&8u32.to_le_bytes());
                    out.extend_from_slice(&(items.len() as u64).to_le_bytes());
                    for item in items {
                        string(&mut out, item);
                    }
                }
            }
        }
        string(&mut out, "w");
        out.extend_from_slice(&1u32.to_le_bytes());
        out.extend_from_slice(&elements.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&0u64.to_le_bytes());
        while !out.len().is_multiple_of(32) {
            out.push(0);
        }
        out.extend(std::iter::repeat_n(0u8, data_bytes));
        out
    }

    /// A metadata value.
    pub enum Kv {
        /// A string.
        Str(&'static str),
        /// A u32.
        U32(u32),
        /// An array of strings.
        StrArray(Vec<&'static str>),
    }

    fn string(out: &mut Vec<u8>, s: &str) {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    }
}

#[cfg(test)]
mod tests;
