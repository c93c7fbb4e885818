//! Pulling one model from a friend: ask for its signed list, pick the name,
//! decide with [`super::transfer::plan`] (resume, hold while metered,
//! refuse for want of room), fetch the rest into a partial file, and keep
//! the file only when every byte came and its SHA-256 is the listed one.
//! A refusal (no permission, not shared, unknown name, no room) comes before
//! anything is written; a cut keeps the partial file, so the same pull
//! again continues from where it stopped.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use futures::io::AsyncReadExt;
use porfiry_skills::llm::BoxFuture;
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

use super::CHUNK_BYTES;
use super::list::{ListError, ListedModel, ModelList};
use super::transfer::{Plan, Transfer, Verdict, part_name, plan, safe_file_name};
use super::wire::{ErrorKind, ModelAnswer, ModelRequest, WireError, read_frame, write_frame};
use porfiry_mesh::net::{MeshError, PeerId, StreamControl};
use porfiry_offload::OffloadIo;

/// A stream to a friend's model service.
pub type ModelStream = Box<dyn OffloadIo>;

/// Opens streams on `/porfiry/model/1`.
pub trait ModelOpener: Send + Sync {
    /// A new stream to `peer`.
    fn open(&self, peer: PeerId) -> BoxFuture<'_, Result<ModelStream, MeshError>>;
}

impl ModelOpener for StreamControl {
    fn open(&self, peer: PeerId) -> BoxFuture<'_, Result<ModelStream, MeshError>> {
        let mut control = self.clone();
        Box::pin(async move {
            control
                .open_models(peer)
                .await
                .map(|s| Box::new(s) as ModelStream)
        })
    }
}

/// What the phone says about its connection while a pull waits.
pub trait PullConditions: Send + Sync {
    /// Whether the connection is metered now (a pull then waits).
    fn metered(&self) -> bool;
    /// Resolves when the conditions may have changed since this call (the
    /// future must catch a change made after it was made, before it is
    /// first polled: subscribe in the call, not in the future).
    fn changed(&self) -> BoxFuture<'_, ()>;
}

/// A connection that is never metered (a server, the CLI).
#[derive(Debug, Clone, Copy, Default)]
pub struct Unmetered;

impl PullConditions for Unmetered {
    fn metered(&self) -> bool {
        false
    }
    fn changed(&self) -> BoxFuture<'_, ()> {
        Box::pin(std::future::pending())
    }
}

/// What a pull tells its caller as it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PullEvent {
    /// The friend listed it; the transfer starts at `from` of `bytes`.
    Started {
        /// The file's size.
        bytes: u64,
        /// Bytes already here (a resumed pull).
        from: u64,
    },
    /// Waiting: the connection is metered.
    Held,
    /// `at` of `total` bytes are here.
    Received {
        /// Bytes held.
        at: u64,
        /// The file's size.
        total: u64,
    },
}

/// One pull: which friend, which name, into which folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullTarget {
    /// The friend that shares it.
    pub friend: PeerId,
    /// Its name in the friend's list.
    pub name: String,
    /// The folder it is kept in (`<data-dir>/models`).
    pub models_dir: PathBuf,
}

/// A pulled, verified file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PulledModel {
    /// What the friend listed.
    pub listed: ModelList,
    /// The entry pulled.
    pub model: ListedModel,
    /// Where it is kept.
    pub path: PathBuf,
    /// Bytes that were already here when this pull started.
    pub resumed_from: u64,
    /// The file was here already, whole and verified; nothing was fetched.
    pub already_here: bool,
}

/// Why a pull did not give a kept file.
#[derive(Debug, thiserror::Error)]
pub enum ModelPullError {
    /// The friend does not run with `--share-models`.
    #[error(
        "friend {0} does not share its models (its daemon must run with `porfiry run --share-models`)"
    )]
    NotShared(PeerId),
    /// No link to the friend could be made.
    #[error("cannot reach friend {friend} ({reason}); is it running, and connected to this node?")]
    Unreachable {
        /// The friend.
        friend: PeerId,
        /// What the mesh said.
        reason: String,
    },
    /// The friend refused us.
    #[error("friend {friend} refused: {message}")]
    NotPermitted {
        /// The friend.
        friend: PeerId,
        /// Its words.
        message: String,
    },
    /// The friend shares no model of that name.
    #[error("friend {friend} shares no model {name:?} (it shares: {shared})")]
    Unknown {
        /// The friend.
        friend: PeerId,
        /// The name asked for.
        name: String,
        /// What it does share, comma-separated, or `nothing`.
        shared: String,
    },
    /// The disk lacks room; nothing was fetched.
    #[error(
        "not enough room in {dir}: the model needs {needed} bytes more (with a safety margin), {free} are free"
    )]
    NoRoom {
        /// The models folder.
        dir: PathBuf,
        /// Bytes needed.
        needed: u64,
        /// Bytes free.
        free: u64,
    },
    /// The transfer stopped before the end; the partial file is kept.
    #[error(
        "the transfer stopped at {at} of {total} bytes ({why}); {part} is kept: the same pull again resumes from there"
    )]
    Cut {
        /// Bytes held.
        at: u64,
        /// The file's size.
        total: u64,
        /// What stopped it.
        why: String,
        /// The partial file.
        part: PathBuf,
    },
    /// Every byte came but the hash is not the listed one; the file is gone.
    #[error(
        "the pulled file's SHA-256 is {got}, not the {expected} the friend listed; it was deleted"
    )]
    Corrupt {
        /// The listed hash.
        expected: String,
        /// What came.
        got: String,
    },
    /// A different file of that name is in the models folder.
    #[error("{0} already exists and is not this model; move it away or pull under another name")]
    Exists(PathBuf),
    /// The friend's list names a file we cannot keep.
    #[error("friend's file name {0:?} cannot be a file name here")]
    BadFileName(String),
    /// The friend refused or failed otherwise.
    #[error("friend {friend} answered: {message}")]
    Friend {
        /// The friend.
        friend: PeerId,
        /// Its words.
        message: String,
    },
    /// The signed list does not hold.
    #[error(transparent)]
    List(#[from] ListError),
    /// The mesh could not open a stream.
    #[error(transparent)]
    Mesh(#[from] MeshError),
    /// The stream failed before the transfer.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// A local file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
}

fn io_at(path: &Path) -> impl Fn(std::io::Error) -> ModelPullError + '_ {
    move |source| ModelPullError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Asks `friend` for its signed list and checks the signature.
pub async fn friend_list(
    opener: &dyn ModelOpener,
    friend: PeerId,
) -> Result<ModelList, ModelPullError> {
    let mut stream = open(opener, friend).await?;
    write_frame(&mut stream, &ModelRequest::List).await?;
    match read_frame(&mut stream).await? {
        ModelAnswer::List { list } => Ok(list.verify(&friend)?),
        ModelAnswer::Error { kind, message } => Err(refusal(friend, kind, message)),
        ModelAnswer::Sending { .. } => Err(ModelPullError::Friend {
            friend,
            message: "sent bytes where a list was asked for".into(),
        }),
    }
}

async fn open(opener: &dyn ModelOpener, friend: PeerId) -> Result<ModelStream, ModelPullError> {
    opener.open(friend).await.map_err(|e| match e {
        MeshError::StreamUnsupported { .. } => ModelPullError::NotShared(friend),
        MeshError::StreamOpen { reason, .. } => ModelPullError::Unreachable { friend, reason },
        // Resolved from the database, so a friend: the mesh has not taken
        // it in yet (just started or resumed).
        MeshError::NotFriend { .. } => ModelPullError::Unreachable {
            friend,
            reason: "the mesh has not linked it yet".into(),
        },
        other => other.into(),
    })
}

fn refusal(friend: PeerId, kind: ErrorKind, message: String) -> ModelPullError {
    match kind {
        ErrorKind::NotPermitted => ModelPullError::NotPermitted { friend, message },
        _ => ModelPullError::Friend { friend, message },
    }
}

/// Pulls `target`: see the module comment. `on_event` hears progress; its
/// `Break` stops the transfer after the chunk it heard of (the partial file
/// is kept, as after a cut).
pub async fn pull_from_friend(
    opener: &dyn ModelOpener,
    target: &PullTarget,
    conditions: &dyn PullConditions,
    on_event: &mut (dyn FnMut(PullEvent) -> ControlFlow<()> + Send),
) -> Result<PulledModel, ModelPullError> {
    let friend = target.friend;
    let list = friend_list(opener, friend).await?;
    let Some(model) = list.models.iter().find(|m| m.name == target.name).cloned() else {
        let names: Vec<&str> = list.models.iter().map(|m| m.name.as_str()).collect();
        return Err(ModelPullError::Unknown {
            friend,
            name: target.name.clone(),
            shared: if names.is_empty() {
                "nothing".into()
            } else {
                names.join(", ")
            },
        });
    };
    if !safe_file_name(&model.file) {
        return Err(ModelPullError::BadFileName(model.file));
    }
    let path = target.models_dir.join(&model.file);
    let part = target.models_dir.join(part_name(&model));
    if path.exists() {
        let (sha, _) = hash_prefix(&path, u64::MAX).await?;
        if sha.eq_ignore_ascii_case(&model.sha256) {
            return Ok(PulledModel {
                listed: list,
                resumed_from: model.bytes,
                model,
                path,
                already_here: true,
            });
        }
        return Err(ModelPullError::Exists(path));
    }
    let (from, restart) = loop {
        let have = std::fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
        let free = free_bytes_near(&target.models_dir);
        match plan(&model, have, free, conditions.metered()) {
            Plan::Fetch { from, restart } => break (from, restart),
            Plan::NoRoom { needed, free } => {
                return Err(ModelPullError::NoRoom {
                    dir: target.models_dir.clone(),
                    needed,
                    free,
                });
            }
            Plan::Hold => {
                if on_event(PullEvent::Held).is_break() {
                    return Err(cut(have, model.bytes, "stopped while held", &part));
                }
                // Made before the second look, so a change in between wakes it.
                let change = conditions.changed();
                if conditions.metered() {
                    change.await;
                }
            }
        }
    };
    let mut stream = open(opener, friend).await?;
    write_frame(
        &mut stream,
        &ModelRequest::Fetch {
            name: model.name.clone(),
            sha256: model.sha256.clone(),
            offset: from,
        },
    )
    .await?;
    match read_frame(&mut stream).await? {
        ModelAnswer::Sending { offset, bytes } if offset == from && bytes == model.bytes => {}
        ModelAnswer::Error { kind, message } => return Err(refusal(friend, kind, message)),
        other => {
            return Err(ModelPullError::Friend {
                friend,
                message: format!("answered {other:?} to a fetch from {from}"),
            });
        }
    }
    // The friend agreed: only now is anything written.
    std::fs::create_dir_all(&target.models_dir).map_err(io_at(&target.models_dir))?;
    if restart {
        std::fs::remove_file(&part).map_err(io_at(&part))?;
    }
    let (_, prefix_hasher) = hash_prefix_state(&part, from).await?;
    let mut hasher = prefix_hasher;
    let mut file = tokio::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&part)
        .await
        .map_err(io_at(&part))?;
    // Exactly the bytes hashed above, whatever the file held.
    file.set_len(from).await.map_err(io_at(&part))?;
    let mut stopped: Option<String> = on_event(PullEvent::Started {
        bytes: model.bytes,
        from,
    })
    .is_break()
    .then(|| "stopped".to_owned());
    let mut transfer = Transfer::new(from, model.bytes);
    let mut buf = vec![0u8; CHUNK_BYTES];
    while stopped.is_none() {
        let n = match stream.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => {
                stopped = Some(e.to_string());
                break;
            }
        };
        let keep = match transfer.received(n as u64) {
            Ok(k) => k as usize,
            Err(e) => {
                stopped = Some(e.to_string());
                break;
            }
        };
        file.write_all(&buf[..keep]).await.map_err(io_at(&part))?;
        hasher.update(&buf[..keep]);
        let flow = on_event(PullEvent::Received {
            at: transfer.at(),
            total: transfer.total(),
        });
        if flow.is_break() {
            stopped = Some("stopped".into());
            break;
        }
        // The stream is not tokio's, so tokio's budget never makes this
        // loop yield; a phone's one-worker runtime must still run its
        // other tasks (a pause) between chunks.
        tokio::task::yield_now().await;
    }
    file.flush().await.map_err(io_at(&part))?;
    file.sync_all().await.map_err(io_at(&part))?;
    drop(file);
    let got = hex::encode(hasher.finalize());
    match transfer.verdict(&model.sha256, &got) {
        Verdict::Keep => {
            std::fs::rename(&part, &path).map_err(io_at(&path))?;
            Ok(PulledModel {
                listed: list,
                model,
                path,
                resumed_from: from,
                already_here: false,
            })
        }
        Verdict::Short { at, total } => Err(cut(
            at,
            total,
            stopped.as_deref().unwrap_or("the friend closed the stream"),
            &part,
        )),
        Verdict::Corrupt { expected, got } => {
            let _ = std::fs::remove_file(&part);
            Err(ModelPullError::Corrupt { expected, got })
        }
    }
}

fn cut(at: u64, total: u64, why: &str, part: &Path) -> ModelPullError {
    ModelPullError::Cut {
        at,
        total,
        why: why.to_owned(),
        part: part.to_owned(),
    }
}

/// Free bytes on the disk that holds `dir`, or its nearest existing parent.
fn free_bytes_near(dir: &Path) -> Option<u64> {
    dir.ancestors()
        .find(|p| p.exists())
        .and_then(porfiry_storage::disk::free_bytes)
}

/// The SHA-256 (hex) of the first `limit` bytes of `path`, and how many.
async fn hash_prefix(path: &Path, limit: u64) -> Result<(String, u64), ModelPullError> {
    let (n, hasher) = hash_prefix_state(path, limit).await?;
    Ok((hex::encode(hasher.finalize()), n))
}

/// A hasher fed the first `limit` bytes of `path` (none if it is missing),
/// off the async threads.
async fn hash_prefix_state(path: &Path, limit: u64) -> Result<(u64, Sha256), ModelPullError> {
    let owned = path.to_owned();
    let hashed = tokio::task::spawn_blocking(move || -> std::io::Result<(u64, Sha256)> {
        use std::io::Read;
        let mut hasher = Sha256::new();
        let file = match std::fs::File::open(&owned) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((0, hasher)),
            Err(e) => return Err(e),
        };
        let mut reader = file.take(limit);
        let mut buf = vec![0u8; CHUNK_BYTES];
        let mut n = 0u64;
        loop {
            let got = reader.read(&mut buf)?;
            if got == 0 {
                break;
            }
            hasher.update(&buf[..got]);
            n += got as u64;
        }
        Ok((n, hasher))
    })
    .await
    .map_err(|e| ModelPullError::Io {
        path: path.to_owned(),
        source: std::io::Error::other(e.to_string()),
    })?;
    hashed.map_err(io_at(path))
}
