//! Which chat template a GGUF model is prompted with, decided before the
//! model loads, from its header and the `--chat-template` flag (pure: no
//! llama.cpp, so `porfiry llm list` shows it without loading anything).
//!
//! In order: the flag (a llama.cpp template name such as `gemma`, or a Jinja
//! file), else the file's own `tokenizer.chat_template`, else the template
//! llama.cpp has built in for the file's architecture (a base model such as
//! Gemma 3 270M ships without one; llama.cpp knows Gemma's turns). A file
//! with none of these is refused with one line naming the flag.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::gguf::GgufInfo;

/// The template names llama.cpp formats itself (`llm_chat_template_from_str`
/// in the llama.cpp this crate builds); a flag naming one of them is used as
/// is, any other value must be a Jinja file.
pub const LLAMA_TEMPLATE_NAMES: &[&str] = &[
    "chatml",
    "llama2",
    "llama2-sys",
    "llama2-sys-bos",
    "llama2-sys-strip",
    "mistral-v1",
    "mistral-v3",
    "mistral-v3-tekken",
    "mistral-v7",
    "mistral-v7-tekken",
    "phi3",
    "phi4",
    "falcon3",
    "zephyr",
    "monarch",
    "gemma",
    "orion",
    "openchat",
    "vicuna",
    "vicuna-orca",
    "deepseek",
    "deepseek2",
    "deepseek3",
    "command-r",
    "llama3",
    "chatglm3",
    "chatglm4",
    "glmedge",
    "minicpm",
    "exaone3",
    "exaone4",
    "rwkv-world",
    "granite",
    "gigachat",
    "megrez",
    "yandex",
    "bailing",
    "llama4",
    "smolvlm",
    "hunyuan-moe",
    "gpt-oss",
    "hunyuan-dense",
    "kimi-k2",
    "seed_oss",
];

/// Architectures (`general.architecture`) whose every instruction-tuned
/// release uses one turn format, and llama.cpp's name for it. Only families
/// where the architecture alone decides: `llama` is Llama 2, Llama 3,
/// SmolLM2's ChatML and more, so it is not here and such a file without a
/// template needs the flag.
pub const ARCHITECTURE_TEMPLATES: &[(&str, &str)] = &[
    ("gemma", "gemma"),
    ("gemma2", "gemma"),
    ("gemma3", "gemma"),
    ("gemma3n", "gemma"),
    ("qwen2", "chatml"),
    ("qwen3", "chatml"),
    ("phi3", "phi3"),
];

/// Largest Jinja template file read: real chat templates are a few KB (the
/// longest, with tool schemas, under 20 KB); anything far bigger is not one.
pub const MAX_TEMPLATE_FILE_BYTES: u64 = 256 * 1024;

/// Where the template used came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TemplateSource {
    /// The GGUF's own `tokenizer.chat_template`.
    File,
    /// llama.cpp's built-in template for the file's architecture.
    Architecture,
    /// The `--chat-template` flag (or a registry row's `chat_template`).
    Flag,
}

impl TemplateSource {
    /// `file`, `architecture` or `flag`, as `llm list` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::File => "file",
            Self::Architecture => "architecture",
            Self::Flag => "flag",
        }
    }
}

/// The template a model is prompted with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Template {
    /// The GGUF's own template text.
    Own,
    /// A template llama.cpp formats itself, by name (`gemma`, `chatml`).
    Named(String),
    /// A Jinja template read from a file.
    Jinja {
        /// The file it was read from.
        path: PathBuf,
        /// Its text.
        text: String,
    },
}

/// The decision: which template, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateChoice {
    /// The template.
    pub template: Template,
    /// Where it came from.
    pub source: TemplateSource,
}

impl fmt::Display for TemplateChoice {
    /// `gemma (architecture)`, `own (file)`, `my.jinja (flag)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.template {
            Template::Own => write!(f, "own"),
            Template::Named(name) => write!(f, "{name}"),
            Template::Jinja { path, .. } => write!(f, "{}", path.display()),
        }?;
        write!(f, " ({})", self.source.as_str())
    }
}

/// Why no template could be chosen: one line, naming the flag or the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// The file has no template and its architecture has no known one.
    #[error(
        "model file {path} has no chat template and llama.cpp knows none for its architecture \
         '{architecture}': give one with --chat-template NAME|FILE (a llama.cpp name such as \
         chatml, gemma or llama3, or a Jinja file)"
    )]
    NoTemplate {
        /// The model file.
        path: PathBuf,
        /// Its `general.architecture`.
        architecture: String,
    },
    /// The flag is neither a known name nor a readable file.
    #[error("--chat-template {value}: not a llama.cpp template name ({names}, …) and no such file")]
    UnknownName {
        /// What was given.
        value: String,
        /// A few of the names, for the message.
        names: String,
    },
    /// The flag names a file that cannot be used.
    #[error("--chat-template {path}: {detail}")]
    BadFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
}

/// llama.cpp's template for `architecture`, if one decides it.
pub fn architecture_template(architecture: &str) -> Option<&'static str> {
    ARCHITECTURE_TEMPLATES
        .iter()
        .find(|(arch, _)| arch.eq_ignore_ascii_case(architecture))
        .map(|(_, name)| *name)
}

/// Reads a `--chat-template` value: a llama.cpp name, else a Jinja file.
pub fn parse_flag(value: &str) -> Result<Template, TemplateError> {
    let value = value.trim();
    if let Some(name) = LLAMA_TEMPLATE_NAMES.iter().find(|n| **n == value) {
        return Ok(Template::Named((*name).to_owned()));
    }
    let path = Path::new(value);
    let bad = |detail: String| TemplateError::BadFile {
        path: path.to_owned(),
        detail,
    };
    match std::fs::metadata(path) {
        Err(_) => Err(TemplateError::UnknownName {
            value: value.to_owned(),
            names: LLAMA_TEMPLATE_NAMES[..8].join(", "),
        }),
        Ok(meta) if !meta.is_file() => Err(bad("not a file".into())),
        Ok(meta) if meta.len() > MAX_TEMPLATE_FILE_BYTES => Err(bad(format!(
            "{} bytes; a chat template is at most {MAX_TEMPLATE_FILE_BYTES}",
            meta.len()
        ))),
        Ok(_) => {
            let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
            if text.trim().is_empty() {
                return Err(bad("the file is empty".into()));
            }
            Ok(Template::Jinja {
                path: path.to_owned(),
                text,
            })
        }
    }
}

/// The template for the model at `path` with header `info`, given the flag.
pub fn choose_template(
    path: &Path,
    info: &GgufInfo,
    flag: Option<&str>,
) -> Result<TemplateChoice, TemplateError> {
    if let Some(value) = flag.filter(|v| !v.trim().is_empty()) {
        return Ok(TemplateChoice {
            template: parse_flag(value)?,
            source: TemplateSource::Flag,
        });
    }
    if info.has_chat_template {
        return Ok(TemplateChoice {
            template: Template::Own,
            source: TemplateSource::File,
        });
    }
    match architecture_template(&info.architecture) {
        Some(name) => Ok(TemplateChoice {
            template: Template::Named(name.to_owned()),
            source: TemplateSource::Architecture,
        }),
        None => Err(TemplateError::NoTemplate {
            path: path.to_owned(),
            architecture: info.architecture.clone(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(architecture: &str, has_chat_template: bool) -> GgufInfo {
        GgufInfo {
            file_bytes: 1,
            architecture: architecture.into(),
            name: None,
            context_length: None,
            has_chat_template,
            tensors: 1,
        }
    }

    #[test]
    fn the_files_own_template_comes_first_then_the_architectures() {
        let p = Path::new("m.gguf");
        let own = choose_template(p, &info("gemma3", true), None).unwrap();
        assert_eq!(
            (own.template, own.source),
            (Template::Own, TemplateSource::File)
        );
        let gemma = choose_template(p, &info("gemma3", false), None).unwrap();
        assert_eq!(gemma.template, Template::Named("gemma".into()));
        assert_eq!(gemma.to_string(), "gemma (architecture)");
        let qwen = choose_template(p, &info("qwen2", false), None).unwrap();
        assert_eq!(qwen.template, Template::Named("chatml".into()));
    }

    #[test]
    fn an_unknown_architecture_without_a_template_is_one_line_naming_the_flag() {
        let e = choose_template(Path::new("/m/base.gguf"), &info("llama", false), None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/m/base.gguf") && e.contains("--chat-template"),
            "{e}"
        );
        assert!(e.contains("'llama'") && !e.contains('\n'), "{e}");
    }

    #[test]
    fn the_flag_overrides_with_a_name_or_a_jinja_file_and_refuses_anything_else() {
        let p = Path::new("m.gguf");
        let named = choose_template(p, &info("llama", true), Some("chatml")).unwrap();
        assert_eq!(named.template, Template::Named("chatml".into()));
        assert_eq!(named.to_string(), "chatml (flag)");

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.jinja");
        std::fs::write(&file, "{{ messages[0].content }}").unwrap();
        let jinja = choose_template(p, &info("llama", false), file.to_str()).unwrap();
        assert_eq!(jinja.source, TemplateSource::Flag);
        assert!(
            matches!(&jinja.template, Template::Jinja { text, .. } if text.contains("messages"))
        );

        let e = choose_template(p, &info("gemma3", false), Some("gemmma")).unwrap_err();
        assert!(matches!(e, TemplateError::UnknownName { .. }), "{e}");
        assert!(e.to_string().contains("chatml"), "{e}");
        std::fs::write(&file, "  \n").unwrap();
        let empty = parse_flag(file.to_str().unwrap()).unwrap_err().to_string();
        assert!(
            empty.contains("empty") && empty.contains("t.jinja"),
            "{empty}"
        );
        let dir_flag = parse_flag(dir.path().to_str().unwrap()).unwrap_err();
        assert!(dir_flag.to_string().contains("not a file"), "{dir_flag}");
    }

    #[test]
    fn every_architecture_maps_to_a_name_llama_cpp_knows() {
        for (arch, name) in ARCHITECTURE_TEMPLATES {
            assert!(LLAMA_TEMPLATE_NAMES.contains(name), "{arch} → {name}");
        }
    }
}
