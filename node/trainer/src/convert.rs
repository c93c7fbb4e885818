//! Files in and out of training: a quantised model dequantised to F32 (the
//! type llama.cpp's optimizer updates), the taught F32 model quantised back
//! (Q8_0 keeps a small fine-tune's changes that a 4-bit type would round
//! away), and the metadata llama.cpp's saver leaves out or changes put back
//! into the written file (the chat template, the trained context).

use std::ffi::CString;
use std::path::{Path, PathBuf};

use llama_cpp_sys_2 as sys;

use crate::TrainError;

/// What a taught file is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutType {
    /// 8-bit: ~1.06 bytes a weight, near-lossless.
    Q8_0,
    /// 4-bit with a scale and a minimum per block: ~0.56 bytes a weight,
    /// the type of the SmolLM2 base the node fetches, so the taught file
    /// generates as fast as it does (a small fine-tune's changes are
    /// partly rounded away).
    Q4_1,
    /// 16-bit floats.
    F16,
    /// 32-bit floats, as trained.
    F32,
}

/// The base's metadata a saved model must carry again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseMetadata {
    /// `general.architecture`.
    pub architecture: String,
    /// The context the base was trained for (training sets it to its
    /// window).
    pub context_length: u32,
    /// The base's own chat template, if it had one (llama.cpp's saver does
    /// not write it).
    pub chat_template: Option<String>,
}

pub(crate) fn c_path(path: &Path) -> Result<CString, TrainError> {
    CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| TrainError::File {
        path: path.to_owned(),
        detail: "the path holds a NUL byte".into(),
    })
}

/// Checks that `path` is a GGUF before llama.cpp reads it (llama.cpp
/// answers a foreign file with a log line only).
pub(crate) fn check_gguf(path: &Path) -> Result<(), TrainError> {
    let bad = |detail: String| TrainError::File {
        path: path.to_owned(),
        detail,
    };
    let mut magic = [0u8; 4];
    let mut file = std::fs::File::open(path).map_err(|e| bad(e.to_string()))?;
    std::io::Read::read_exact(&mut file, &mut magic).map_err(|_| bad("not a GGUF file".into()))?;
    if &magic != b"GGUF" {
        return Err(bad("not a GGUF file".into()));
    }
    Ok(())
}

fn convert(
    src: &Path,
    dst: &Path,
    ftype: sys::llama_ftype,
    threads: i32,
) -> Result<(), TrainError> {
    check_gguf(src)?;
    crate::backend::init();
    let tmp = tmp_of(dst);
    let (c_src, c_tmp) = (c_path(src)?, c_path(&tmp)?);
    // SAFETY: returns a plain struct of defaults.
    let mut params = unsafe { sys::llama_model_quantize_default_params() };
    params.nthread = threads.max(1);
    params.ftype = ftype;
    params.allow_requantize = true;
    params.quantize_output_tensor = true;
    // SAFETY: both paths are NUL-terminated and outlive the call; `params`
    // is a valid struct whose pointers are the defaults' (null).
    let failed = unsafe { sys::llama_model_quantize(c_src.as_ptr(), c_tmp.as_ptr(), &params) };
    if failed != 0 {
        let _ = std::fs::remove_file(&tmp);
        return Err(TrainError::Convert {
            from: src.to_owned(),
            to: dst.to_owned(),
        });
    }
    std::fs::rename(&tmp, dst).map_err(|e| TrainError::Write {
        path: dst.to_owned(),
        detail: e.to_string(),
    })
}

fn tmp_of(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

/// Writes `src` as an F32 GGUF at `dst` (through `dst.tmp`).
pub fn dequantize(src: &Path, dst: &Path, threads: i32) -> Result<(), TrainError> {
    convert(src, dst, sys::LLAMA_FTYPE_ALL_F32, threads)
}

/// Writes `src` as `out` at `dst` (through `dst.tmp`).
pub fn quantize(src: &Path, dst: &Path, out: OutType, threads: i32) -> Result<(), TrainError> {
    let ftype = match out {
        OutType::Q8_0 => sys::LLAMA_FTYPE_MOSTLY_Q8_0,
        OutType::Q4_1 => sys::LLAMA_FTYPE_MOSTLY_Q4_1,
        OutType::F16 => sys::LLAMA_FTYPE_MOSTLY_F16,
        OutType::F32 => sys::LLAMA_FTYPE_ALL_F32,
    };
    convert(src, dst, ftype, threads)
}

/// Puts `meta` back into the GGUF at `path` (rewritten through a temporary
/// file): the trained context and, where the base had one, its template.
pub fn restore_metadata(path: &Path, meta: &BaseMetadata) -> Result<(), TrainError> {
    let tmp = tmp_of(path);
    let c_tmp = c_path(&tmp)?;
    let context_key = CString::new(format!("{}.context_length", meta.architecture))
        .map_err(|_| TrainError::Input("an architecture name with a NUL byte".into()))?;
    let template = meta
        .chat_template
        .as_deref()
        .map(CString::new)
        .transpose()
        .map_err(|_| TrainError::Input("a chat template with a NUL byte".into()))?;
    let gguf = open_metadata(path)?;
    // SAFETY: `gguf` is a live context until gguf_free; keys and values are
    // NUL-terminated and copied by gguf; the metadata written ends padded
    // to the file's alignment, where the tensor data (whose offsets are
    // relative to that point) is appended unchanged below.
    let (data_offset, written) = unsafe {
        let data_offset = sys::gguf_get_data_offset(gguf);
        sys::gguf_set_val_u32(gguf, context_key.as_ptr(), meta.context_length);
        if let Some(template) = &template {
            sys::gguf_set_val_str(gguf, c"tokenizer.chat_template".as_ptr(), template.as_ptr());
        }
        let ok = sys::gguf_write_to_file(gguf, c_tmp.as_ptr(), true);
        sys::gguf_free(gguf);
        (data_offset, ok)
    };
    let write_error = |detail: String| TrainError::Write {
        path: path.to_owned(),
        detail,
    };
    let appended = if written {
        append_from(path, data_offset as u64, &tmp)
    } else {
        Err(std::io::Error::other(
            "llama.cpp could not write the metadata",
        ))
    };
    if let Err(e) = appended {
        let _ = std::fs::remove_file(&tmp);
        return Err(write_error(e.to_string()));
    }
    std::fs::rename(&tmp, path).map_err(|e| TrainError::Write {
        path: path.to_owned(),
        detail: e.to_string(),
    })
}

/// The GGUF metadata of `path` (no tensor data read); the caller frees it
/// with `gguf_free`.
fn open_metadata(path: &Path) -> Result<*mut sys::gguf_context, TrainError> {
    check_gguf(path)?;
    crate::backend::init();
    let c_file = c_path(path)?;
    let params = sys::gguf_init_params {
        no_alloc: true,
        ctx: std::ptr::null_mut(),
    };
    // SAFETY: the path is NUL-terminated; with `no_alloc` and no context
    // only the metadata is read.
    let gguf = unsafe { sys::gguf_init_from_file(c_file.as_ptr(), params) };
    if gguf.is_null() {
        return Err(TrainError::File {
            path: path.to_owned(),
            detail: "llama.cpp could not read its metadata (truncated?)".into(),
        });
    }
    Ok(gguf)
}

/// Appends `src` from byte `offset` on to the end of `dst`.
fn append_from(src: &Path, offset: u64, dst: &Path) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom};
    let mut from = std::fs::File::open(src)?;
    from.seek(SeekFrom::Start(offset))?;
    let mut to = std::fs::OpenOptions::new().append(true).open(dst)?;
    std::io::copy(&mut from, &mut to)?;
    to.sync_all()
}

/// Reads what [`restore_metadata`] puts back from the base file at `path`:
/// its architecture, trained context and own chat template.
pub fn base_metadata(path: &Path) -> Result<BaseMetadata, TrainError> {
    let gguf = open_metadata(path)?;
    let string = |key: &std::ffi::CStr| -> Option<String> {
        // SAFETY: `gguf` is live until gguf_free below; the key is
        // NUL-terminated; a found string value is NUL-terminated and owned
        // by `gguf`, copied out here.
        unsafe {
            let id = sys::gguf_find_key(gguf, key.as_ptr());
            if id < 0 || sys::gguf_get_kv_type(gguf, id) != sys::GGUF_TYPE_STRING {
                return None;
            }
            let value = sys::gguf_get_val_str(gguf, id);
            (!value.is_null()).then(|| {
                std::ffi::CStr::from_ptr(value)
                    .to_string_lossy()
                    .into_owned()
            })
        }
    };
    let architecture = string(c"general.architecture").unwrap_or_default();
    let chat_template = string(c"tokenizer.chat_template");
    let context_key = CString::new(format!("{architecture}.context_length")).unwrap_or_default();
    // SAFETY: as above, for a u32 value.
    let context_length = unsafe {
        let id = sys::gguf_find_key(gguf, context_key.as_ptr());
        if id >= 0 && sys::gguf_get_kv_type(gguf, id) == sys::GGUF_TYPE_UINT32 {
            sys::gguf_get_val_u32(gguf, id)
        } else {
            0
        }
    };
    // SAFETY: freed once, not used after.
    unsafe { sys::gguf_free(gguf) };
    Ok(BaseMetadata {
        architecture,
        context_length,
        chat_template,
    })
}
