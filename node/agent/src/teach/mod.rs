//! The node teaching its own model its own tools (issue 43 §3): training
//! data the node writes from what it actually has — the registry, the
//! skills, the prompt it sends — as readable JSONL a person can inspect and
//! edit. Each line is one model request the node makes and the reply it
//! wants: the system prompt, the history, the reply.
//!
//! - [`phrasings`]: requests a person makes, in English and Russian, with
//!   the call (or plain answer) that serves each; never a scoring request;
//! - [`teacher`]: the scripted model that plays the right replies while
//!   recording the requests the agent sends it;
//! - [`generate`]: runs each request through a fresh session of the API's
//!   agent with the teacher, so every example is a prompt the node really
//!   builds (sets activated by the loop, tool results from the real tools);
//! - [`core`] (texts in [`core_texts`], goals in [`core_goals`]): ticks of the real cognitive core on
//!   scratch nodes with goals, a scripted thinker answering each with a
//!   sentence and a command the tick then runs;
//! - this file: the example, its JSONL form, and reading a `--data` file.
//!
//! The training itself (llama.cpp's own, on the CPU) is `porfiry-trainer`'s;
//! `porfiry model teach` joins the two.

use std::path::{Path, PathBuf};

use porfiry_skills::{ChatMessage, Language};
use serde::{Deserialize, Serialize};

pub mod core;
pub mod core_goals;
pub mod core_texts;
pub mod generate;
pub mod phrasings;
pub mod slots;
pub mod teacher;

pub use core::{CoreDataError, CoreGenerated, core_examples};
pub use generate::{GenerateError, Generated, generate};

/// What part of the node's work an example teaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExampleKind {
    /// A person's request → the first reply (a call of the right tool, or a
    /// plain answer where no tool serves).
    Request,
    /// A later step of a turn: after a tool result, the next call or the
    /// answer (skill read → set enabled → call → answer; an inactive set's
    /// "NOT executed yet" → the retry).
    Episode,
    /// A tick of the cognitive core: contexts 1–6 → a sentence about a goal
    /// and one command that serves it.
    Core,
}

/// One model request of the node and the reply it should get.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Example {
    /// What it teaches.
    pub kind: ExampleKind,
    /// The language the agent spoke.
    pub language: Language,
    /// The system prompt, as the node built it for this request.
    pub system: String,
    /// The history the node sent after it.
    pub messages: Vec<ChatMessage>,
    /// The reply the model should give.
    pub reply: String,
}

/// Longest data file read: tens of thousands of examples of ~2 KB each;
/// more would take days to train on a CPU and is not a data file.
pub const MAX_DATA_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// Why a data file cannot be used: one line naming the file (and line).
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// The file cannot be read, is too big or holds no example.
    #[error("data file {path}: {detail}")]
    File {
        /// The file.
        path: PathBuf,
        /// What failed.
        detail: String,
    },
    /// One line is not an example.
    #[error("data file {path} line {line}: {detail}")]
    Line {
        /// The file.
        path: PathBuf,
        /// Its 1-based line number.
        line: usize,
        /// What is wrong.
        detail: String,
    },
}

/// The JSONL text of `examples`, one a line.
pub fn to_jsonl(examples: &[Example]) -> String {
    let mut out = String::new();
    for example in examples {
        // An Example is strings, enums and a list of them: it always serialises.
        out.push_str(&serde_json::to_string(example).unwrap_or_default());
        out.push('\n');
    }
    out
}

/// Reads a data file written by [`to_jsonl`] (and perhaps edited by hand:
/// blank lines and lines starting with `#` are skipped).
pub fn read_examples(path: &Path) -> Result<Vec<Example>, DataError> {
    let file_error = |detail: String| DataError::File {
        path: path.to_owned(),
        detail,
    };
    let meta = std::fs::metadata(path).map_err(|e| file_error(e.to_string()))?;
    if meta.len() > MAX_DATA_FILE_BYTES {
        return Err(file_error(format!(
            "{} bytes; a data file is at most {MAX_DATA_FILE_BYTES}",
            meta.len()
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|e| file_error(e.to_string()))?;
    parse_examples(&text, path)
}

/// [`read_examples`] over text already read from `path`.
pub fn parse_examples(text: &str, path: &Path) -> Result<Vec<Example>, DataError> {
    let mut examples = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let bad = |detail: String| DataError::Line {
            path: path.to_owned(),
            line: i + 1,
            detail,
        };
        let example: Example = serde_json::from_str(trimmed).map_err(|e| bad(e.to_string()))?;
        if example.reply.trim().is_empty() {
            return Err(bad("the reply is empty".into()));
        }
        if example.messages.is_empty() {
            return Err(bad(
                "no messages: the request needs at least the person's".into()
            ));
        }
        examples.push(example);
    }
    if examples.is_empty() {
        return Err(DataError::File {
            path: path.to_owned(),
            detail: "no examples in it".into(),
        });
    }
    Ok(examples)
}

#[cfg(test)]
mod tests;
