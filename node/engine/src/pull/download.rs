//! One model file fetched over HTTP(S): into `<file>.part` beside its final
//! path, resumed with a `Range` request when a `.part` is already there
//! (an earlier pull was interrupted), hashed as it arrives, and renamed to
//! its final name only when the SHA-256 matches and the header reads as a
//! GGUF. A mismatch deletes the file and says so; an interruption keeps the
//! `.part` and says the same command resumes. A file lock on the `.part`
//! keeps two pulls of one file from writing it at once.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{CONTENT_RANGE, RANGE};
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

use super::Sha256Digest;
use crate::gguf::{GgufError, inspect};

/// How long to wait for a connection (TCP and TLS): a reachable host
/// answers within seconds even on mobile data; past this it is not coming.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a download may go without a byte arriving: a stalled CDN
/// connection. The `.part` keeps what came, so giving up costs nothing.
pub const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// The largest file a pull accepts: above any model a node loads (a 70B
/// model at 4 bits is about 40 GB), so a larger length is a broken server,
/// refused before it fills the disk.
pub const MAX_MODEL_BYTES: u64 = 64 << 30;

/// The buffer an existing `.part` or file is hashed through.
const HASH_BUFFER: usize = 1 << 20;

/// What an unfinished download is called beside its final name.
pub const PART_SUFFIX: &str = ".part";

/// What to fetch and what it must be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// Where from.
    pub url: String,
    /// The hash the file must have.
    pub sha256: Sha256Digest,
    /// Its exact length, where known (a server offering another is refused
    /// before anything is downloaded).
    pub bytes: Option<u64>,
}

/// How far a pull has come, for a progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// The body starts: its total length if the server said, and the bytes
    /// already in the `.part` (resumed from).
    Started {
        /// The whole file's length.
        total: Option<u64>,
        /// Bytes an earlier pull left.
        from: u64,
    },
    /// Bytes of the file on disk so far.
    Received(u64),
}

/// A finished pull.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pulled {
    /// The verified file.
    pub path: PathBuf,
    /// Its length.
    pub bytes: u64,
    /// Bytes an earlier, interrupted pull had left (0: a fresh download).
    pub resumed_from: u64,
    /// The file was already there with the right hash: nothing was fetched.
    pub already_here: bool,
}

/// Why a pull stopped.
#[derive(Debug, thiserror::Error)]
pub enum PullError {
    /// The HTTP client could not be built (no TLS roots).
    #[error("cannot set up HTTP: {0}")]
    Client(#[source] reqwest::Error),
    /// No answer from the server.
    #[error("cannot download {url}: {source}")]
    Request {
        /// The URL.
        url: String,
        /// What failed.
        #[source]
        source: reqwest::Error,
    },
    /// The server answered, but not with the file.
    #[error("the server answered {status} for {url}")]
    Status {
        /// The URL.
        url: String,
        /// Its answer.
        status: StatusCode,
    },
    /// The server offers more than any model.
    #[error(
        "{url} is {bytes} bytes, more than the {MAX_MODEL_BYTES} a model file can be; not downloaded"
    )]
    TooBig {
        /// The URL.
        url: String,
        /// What it offered.
        bytes: u64,
    },
    /// The server offers another length than the catalogue pins.
    #[error("{url} is {offered} bytes, but the file pinned is {expected}; not downloaded")]
    WrongSize {
        /// The URL.
        url: String,
        /// What the catalogue says.
        expected: u64,
        /// What the server offered.
        offered: u64,
    },
    /// The connection broke (or went quiet) mid-file.
    #[error(
        "download interrupted after {have} of {} bytes ({detail}); {} keeps them: run the same command again to resume",
        total.map_or_else(|| "?".to_owned(), |t| t.to_string()),
        part.display()
    )]
    Interrupted {
        /// The `.part` file.
        part: PathBuf,
        /// Bytes in it.
        have: u64,
        /// The whole file's length, if known.
        total: Option<u64>,
        /// What broke.
        detail: String,
    },
    /// The bytes are not the pinned ones.
    #[error(
        "SHA-256 mismatch for {}: expected {expected}, got {actual}; the file was deleted (a corrupted download, or the server's file changed)",
        path.display()
    )]
    Mismatch {
        /// The file (now deleted).
        path: PathBuf,
        /// The pinned hash.
        expected: Sha256Digest,
        /// What came.
        actual: Sha256Digest,
    },
    /// Another file already has the final name.
    #[error(
        "{} already exists with SHA-256 {actual}, not the {expected} asked for; move it away or pull under another name",
        path.display()
    )]
    Occupied {
        /// The file.
        path: PathBuf,
        /// The pinned hash.
        expected: Sha256Digest,
        /// Its hash.
        actual: Sha256Digest,
    },
    /// Another pull is writing this file now.
    #[error("another pull is writing {} now; wait for it to finish", .0.display())]
    Busy(PathBuf),
    /// The hash matched but the file is no model (a wrong `--url`).
    #[error("{0}; the file was deleted")]
    NotGguf(#[source] GgufError),
    /// The disk refused (full, read-only, no such folder).
    #[error("cannot write {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: io::Error,
    },
}

/// The HTTP client a pull uses: rustls, redirects followed (the Hub sends
/// files from a CDN), [`CONNECT_TIMEOUT`] and [`READ_TIMEOUT`], and no
/// overall timeout (a 1 GB file on a slow link takes as long as it takes).
pub fn client() -> Result<reqwest::Client, PullError> {
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .read_timeout(READ_TIMEOUT)
        .user_agent(concat!("porfiry/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(PullError::Client)
}

/// `<path>.part`.
pub fn part_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(PART_SUFFIX);
    path.with_file_name(name)
}

/// Fetches `source` to `path`; `progress` hears how far it is.
pub async fn pull(
    client: &reqwest::Client,
    source: &Source,
    path: &Path,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<Pulled, PullError> {
    let io_err = |p: &Path| {
        let p = p.to_owned();
        move |source| PullError::Io { path: p, source }
    };
    if path.exists() {
        let (actual, bytes) = hash_file(path.to_owned()).await.map_err(io_err(path))?;
        if actual != source.sha256 {
            return Err(PullError::Occupied {
                path: path.to_owned(),
                expected: source.sha256,
                actual,
            });
        }
        return checked_gguf(Pulled {
            path: path.to_owned(),
            bytes,
            resumed_from: 0,
            already_here: true,
        });
    }
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(io_err(dir))?;
    }
    let part = part_path(path);
    let lock = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(&part)
        .map_err(io_err(&part))?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => return Err(PullError::Busy(part)),
        // A filesystem without locks: go on unguarded rather than refuse.
        Err(TryLockError::Error(e)) => tracing::warn!("cannot lock {}: {e}", part.display()),
    }
    let (hasher, have) = hash_open(lock.try_clone().map_err(io_err(&part))?)
        .await
        .map_err(io_err(&part))?;
    let mut download = Download {
        client,
        source,
        part: &part,
        file: lock,
        hasher,
        have,
    };
    let resumed_from = match download.fetch(progress).await {
        Ok(from) => from,
        Err(e) => {
            // Nothing worth resuming: leave no empty `.part` behind.
            if download.have == 0 {
                drop(download);
                let _ = fs::remove_file(&part);
            }
            return Err(e);
        }
    };
    let Download {
        file, hasher, have, ..
    } = download;
    file.sync_all().map_err(io_err(&part))?;
    drop(file);
    let actual = Sha256Digest(hasher.finalize().into());
    if actual != source.sha256 {
        let _ = fs::remove_file(&part);
        return Err(PullError::Mismatch {
            path: part,
            expected: source.sha256,
            actual,
        });
    }
    fs::rename(&part, path).map_err(io_err(path))?;
    checked_gguf(Pulled {
        path: path.to_owned(),
        bytes: have,
        resumed_from,
        already_here: false,
    })
}

/// The pull unless the file is no GGUF, which is then deleted.
fn checked_gguf(pulled: Pulled) -> Result<Pulled, PullError> {
    match inspect(&pulled.path) {
        Ok(_) => Ok(pulled),
        Err(e) => {
            let _ = fs::remove_file(&pulled.path);
            Err(PullError::NotGguf(e))
        }
    }
}

/// One `.part` being filled.
struct Download<'a> {
    client: &'a reqwest::Client,
    source: &'a Source,
    part: &'a Path,
    file: File,
    hasher: Sha256,
    have: u64,
}

impl Download<'_> {
    /// Requests the rest of the file and appends it; the bytes resumed from.
    async fn fetch(
        &mut self,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<u64, PullError> {
        let url = &self.source.url;
        if self.source.bytes.is_some_and(|b| self.have > b) {
            self.restart()?;
        }
        let mut response = self.request(self.have > 0).await?;
        let total = match response.status() {
            StatusCode::PARTIAL_CONTENT if self.have > 0 => {
                match resumed_total(&response, self.have) {
                    Some(total) => total,
                    // A range other than the one asked for: start over.
                    None => {
                        self.restart()?;
                        response = self.request(false).await?;
                        self.whole_length(&response)?
                    }
                }
            }
            StatusCode::RANGE_NOT_SATISFIABLE if self.have > 0 => {
                // The `.part` may already be whole (killed before the rename).
                if self.source.bytes.is_none_or(|b| b == self.have)
                    && self.hasher.clone().finalize()[..] == self.source.sha256.0[..]
                {
                    return Ok(self.have);
                }
                self.restart()?;
                response = self.request(false).await?;
                self.whole_length(&response)?
            }
            StatusCode::OK => {
                // The server ignores ranges: what came before is resent.
                self.restart()?;
                self.whole_length(&response)?
            }
            status => {
                return Err(PullError::Status {
                    url: url.clone(),
                    status,
                });
            }
        };
        if let Some(total) = total {
            self.check_length(total)?;
        }
        let from = self.have;
        progress(Progress::Started { total, from });
        let mut out = tokio::fs::File::from_std(self.file.try_clone().map_err(self.io())?);
        loop {
            let chunk = match response.chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                Err(e) => {
                    out.flush().await.map_err(self.io())?;
                    return Err(self.interrupted(total, e.to_string()));
                }
            };
            let after = self.have + chunk.len() as u64;
            if after > total.unwrap_or(MAX_MODEL_BYTES) {
                out.flush().await.map_err(self.io())?;
                let _ = fs::remove_file(self.part);
                return Err(PullError::TooBig {
                    url: url.clone(),
                    bytes: after,
                });
            }
            out.write_all(&chunk).await.map_err(self.io())?;
            self.hasher.update(&chunk);
            self.have = after;
            progress(Progress::Received(self.have));
        }
        out.flush().await.map_err(self.io())?;
        if let Some(total) = total
            && self.have < total
        {
            return Err(self.interrupted(Some(total), "the server closed early".to_owned()));
        }
        Ok(from)
    }

    /// GET the file, from byte `have` when `resume`.
    async fn request(&self, resume: bool) -> Result<reqwest::Response, PullError> {
        let mut request = self.client.get(&self.source.url);
        if resume {
            request = request.header(RANGE, format!("bytes={}-", self.have));
        }
        request.send().await.map_err(|source| PullError::Request {
            url: self.source.url.clone(),
            source,
        })
    }

    /// A whole-file answer's length (`None`: unknown), or its refusal.
    fn whole_length(&self, response: &reqwest::Response) -> Result<Option<u64>, PullError> {
        match response.status() {
            StatusCode::OK => Ok(response.content_length()),
            status => Err(PullError::Status {
                url: self.source.url.clone(),
                status,
            }),
        }
    }

    /// Refuses a length over the limit or other than the pinned one.
    fn check_length(&self, total: u64) -> Result<(), PullError> {
        let url = self.source.url.clone();
        if total > MAX_MODEL_BYTES {
            return Err(PullError::TooBig { url, bytes: total });
        }
        match self.source.bytes {
            Some(expected) if expected != total => Err(PullError::WrongSize {
                url,
                expected,
                offered: total,
            }),
            _ => Ok(()),
        }
    }

    /// Empties the `.part` to download from the start.
    fn restart(&mut self) -> Result<(), PullError> {
        self.file.set_len(0).map_err(self.io())?;
        self.hasher = Sha256::new();
        self.have = 0;
        Ok(())
    }

    fn interrupted(&self, total: Option<u64>, detail: String) -> PullError {
        PullError::Interrupted {
            part: self.part.to_owned(),
            have: self.have,
            total,
            detail,
        }
    }

    fn io(&self) -> impl Fn(io::Error) -> PullError + use<> {
        let path = self.part.to_owned();
        move |source| PullError::Io {
            path: path.clone(),
            source,
        }
    }
}

/// The total length a `206` for `bytes=have-` gives, if it is that range.
fn resumed_total(response: &reqwest::Response, have: u64) -> Option<Option<u64>> {
    let range = response.headers().get(CONTENT_RANGE)?.to_str().ok()?;
    let (span, total) = range.strip_prefix("bytes ")?.split_once('/')?;
    let (start, _end) = span.split_once('-')?;
    if start.trim().parse::<u64>().ok()? != have {
        return None;
    }
    Some(total.trim().parse::<u64>().ok())
}

/// SHA-256 and length of a whole file.
async fn hash_file(path: PathBuf) -> io::Result<(Sha256Digest, u64)> {
    let file = File::open(&path)?;
    let (hasher, len) = hash_open(file).await?;
    Ok((Sha256Digest(hasher.finalize().into()), len))
}

/// The hasher fed with an open file's bytes, and their count (on the
/// blocking pool: a gigabyte takes seconds).
async fn hash_open(mut file: File) -> io::Result<(Sha256, u64)> {
    tokio::task::spawn_blocking(move || {
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; HASH_BUFFER];
        let mut len = 0u64;
        loop {
            match file.read(&mut buf) {
                Ok(0) => return Ok((hasher, len)),
                Ok(n) => {
                    hasher.update(&buf[..n]);
                    len += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    })
    .await
    .map_err(io::Error::other)?
}

#[cfg(test)]
mod tests;
