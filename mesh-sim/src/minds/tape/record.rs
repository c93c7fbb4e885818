//! Writing a tape: the header when the run starts, then each step's calls
//! as the world loop hands them over, flushed at the end. A tape that would
//! outgrow [`MAX_TAPE_BYTES`] stops the run, since no replay could read it.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::{MAX_LINE_BYTES, MAX_TAPE_BYTES, TapeEntry, TapeError, TapeHeader};

/// A tape being written.
#[derive(Debug)]
pub struct TapeWriter {
    path: PathBuf,
    out: BufWriter<File>,
    bytes: u64,
    line: usize,
}

impl TapeWriter {
    /// Creates (or truncates) the tape at `path` and writes `header`.
    pub fn create(path: &Path, header: &TapeHeader) -> Result<TapeWriter, TapeError> {
        let file = File::create(path).map_err(|source| TapeError::Io {
            path: path.to_owned(),
            source,
        })?;
        let mut writer = TapeWriter {
            path: path.to_owned(),
            out: BufWriter::new(file),
            bytes: 0,
            line: 0,
        };
        writer.line(header)?;
        Ok(writer)
    }

    /// Appends one call.
    pub fn write(&mut self, entry: &TapeEntry) -> Result<(), TapeError> {
        self.line(entry)
    }

    /// Writes everything buffered to the file.
    pub fn flush(&mut self) -> Result<(), TapeError> {
        self.out.flush().map_err(|source| TapeError::Io {
            path: self.path.clone(),
            source,
        })
    }

    /// Where the tape is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn line(&mut self, value: &impl serde::Serialize) -> Result<(), TapeError> {
        self.line += 1;
        let mut text = serde_json::to_vec(value).map_err(|e| self.bad(e.to_string()))?;
        if text.len() > MAX_LINE_BYTES {
            return Err(self.bad(format!(
                "{} bytes; a line holds at most {MAX_LINE_BYTES}",
                text.len()
            )));
        }
        text.push(b'\n');
        self.bytes += text.len() as u64;
        if self.bytes > MAX_TAPE_BYTES {
            return Err(self.bad(format!(
                "the tape would pass {MAX_TAPE_BYTES} bytes, more than a replay reads"
            )));
        }
        self.out.write_all(&text).map_err(|source| TapeError::Io {
            path: self.path.clone(),
            source,
        })
    }

    fn bad(&self, detail: String) -> TapeError {
        TapeError::Line {
            path: self.path.clone(),
            line: self.line,
            detail,
        }
    }
}
