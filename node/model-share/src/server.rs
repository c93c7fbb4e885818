//! [`ModelServer`]: answers one `/porfiry/model/1` stream — the permission
//! first (a friend without it learns nothing, not even the list), then the
//! signed list or one file's bytes from the asked offset. Transfers are
//! capped at [`MAX_CONCURRENT_TRANSFERS`]; one more is refused as busy at
//! once rather than queued. Works on any `futures::io` stream, so tests
//! run it on in-memory pipes as well as on the mesh's streams.

use std::sync::Arc;
use std::time::Duration;

use futures::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use libp2p::PeerId;
use libp2p::identity::Keypair;
use porfiry_skills::Clock;
use porfiry_skills::llm::BoxFuture;
use porfiry_storage::db::Db;
use tokio::sync::Semaphore;

use super::catalog::{HashCache, SharedFile, shared_files};
use super::list::{ListedModel, ModelList, SignedList};
use super::permission::ModelPermissions;
use super::wire::{ErrorKind, ModelAnswer, ModelRequest, WireError, read_frame, write_frame};
use super::{CHUNK_BYTES, MAX_CONCURRENT_TRANSFERS};

/// How long a friend may take to send its request after opening a stream:
/// the request is one small frame sent at once, so a stream silent this
/// long is stuck, and its task is let go.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the shared files come from.
pub trait SharedModels: Send + Sync {
    /// The files shared now.
    fn files(&self) -> BoxFuture<'_, Result<Vec<SharedFile>, String>>;
}

impl SharedModels for Vec<SharedFile> {
    fn files(&self) -> BoxFuture<'_, Result<Vec<SharedFile>, String>> {
        let files = self.clone();
        Box::pin(async move { Ok(files) })
    }
}

/// The node's own `file:` registry rows, read on every request.
pub struct RegistryModels(pub Db);

impl SharedModels for RegistryModels {
    fn files(&self) -> BoxFuture<'_, Result<Vec<SharedFile>, String>> {
        Box::pin(async move {
            self.0
                .read(shared_files)
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| e.to_string())
        })
    }
}

/// How one stream ended, for the log and tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Served {
    /// The list went out with this many entries.
    Listed(usize),
    /// This many bytes of a file went out.
    Sent(u64),
    /// Refused with this kind.
    Refused(ErrorKind),
    /// The stream failed.
    Failed(String),
}

/// Serves this node's shared models. Cheap to clone.
#[derive(Clone)]
pub struct ModelServer {
    inner: Arc<Inner>,
}

struct Inner {
    key: Keypair,
    models: Arc<dyn SharedModels>,
    permissions: Arc<dyn ModelPermissions>,
    clock: Arc<dyn Clock>,
    slots: Arc<Semaphore>,
    hashes: HashCache,
}

impl ModelServer {
    /// A server signing with `key`, sharing `models` with friends
    /// `permissions` allows, at most `slots` transfers at once.
    pub fn new(
        key: Keypair,
        models: Arc<dyn SharedModels>,
        permissions: Arc<dyn ModelPermissions>,
        clock: Arc<dyn Clock>,
        slots: usize,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                key,
                models,
                permissions,
                clock,
                slots: Arc::new(Semaphore::new(slots)),
                hashes: HashCache::default(),
            }),
        }
    }

    /// A server with the default cap of [`MAX_CONCURRENT_TRANSFERS`].
    pub fn with_default_slots(
        key: Keypair,
        models: Arc<dyn SharedModels>,
        permissions: Arc<dyn ModelPermissions>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self::new(key, models, permissions, clock, MAX_CONCURRENT_TRANSFERS)
    }

    /// Answers one stream from `peer`, then closes it.
    pub async fn serve<S>(&self, peer: PeerId, mut stream: S) -> Served
    where
        S: AsyncRead + AsyncWrite + Unpin + Send,
    {
        let served = match tokio::time::timeout(REQUEST_TIMEOUT, read_frame(&mut stream)).await {
            Err(_) => Served::Failed("no request in time".into()),
            Ok(Err(e)) => Served::Failed(e.to_string()),
            Ok(Ok(request)) => self.answer(peer, request, &mut stream).await,
        };
        let _ = stream.close().await;
        served
    }

    async fn answer<S>(&self, peer: PeerId, request: ModelRequest, stream: &mut S) -> Served
    where
        S: AsyncRead + AsyncWrite + Unpin + Send,
    {
        if !self.inner.permissions.allows(&peer).await {
            return refuse(
                stream,
                ErrorKind::NotPermitted,
                "this node does not share its models with you (its owner can allow it: porfiry friends models YOUR_PEER_ID on)".into(),
            )
            .await;
        }
        match request {
            ModelRequest::List => self.list(stream).await,
            ModelRequest::Fetch {
                name,
                sha256,
                offset,
            } => {
                // Held until the bytes are sent.
                let Ok(_slot) = Arc::clone(&self.inner.slots).try_acquire_owned() else {
                    return refuse(
                        stream,
                        ErrorKind::Busy,
                        format!(
                            "{MAX_CONCURRENT_TRANSFERS} transfers are running here; try again in a while"
                        ),
                    )
                    .await;
                };
                self.fetch(stream, &name, &sha256, offset).await
            }
        }
    }

    /// Every shared file as listed (hashed off the async threads).
    async fn listed(&self) -> Result<Vec<(ListedModel, SharedFile)>, String> {
        let files = self.inner.models.files().await?;
        let hashes = self.inner.hashes.clone();
        tokio::task::spawn_blocking(move || {
            files
                .into_iter()
                .filter_map(|f| match hashes.listed(&f) {
                    Ok(l) => Some((l, f)),
                    Err(e) => {
                        tracing::warn!(path = %f.path.display(), error = %e, "cannot read a shared model; not listed");
                        None
                    }
                })
                .collect()
        })
        .await
        .map_err(|e| e.to_string())
    }

    async fn list<S>(&self, stream: &mut S) -> Served
    where
        S: AsyncWrite + Unpin,
    {
        let listed = match self.listed().await {
            Ok(l) => l,
            Err(e) => return refuse(stream, ErrorKind::Io, e).await,
        };
        let list = ModelList {
            node: self.inner.key.public().to_peer_id().to_string(),
            at_ms: self.inner.clock.now().unix_ms(),
            models: listed.into_iter().map(|(l, _)| l).collect(),
        };
        let n = list.models.len();
        let signed = match SignedList::sign(&self.inner.key, &list) {
            Ok(s) => s,
            Err(e) => return refuse(stream, ErrorKind::Io, e.to_string()).await,
        };
        match write_frame(stream, &ModelAnswer::List { list: signed }).await {
            Ok(()) => Served::Listed(n),
            Err(e) => Served::Failed(e.to_string()),
        }
    }

    async fn fetch<S>(&self, stream: &mut S, name: &str, sha256: &str, offset: u64) -> Served
    where
        S: AsyncWrite + Unpin,
    {
        let listed = match self.listed().await {
            Ok(l) => l,
            Err(e) => return refuse(stream, ErrorKind::Io, e).await,
        };
        let Some((model, file)) = listed
            .into_iter()
            .find(|(l, _)| l.name == name && l.sha256.eq_ignore_ascii_case(sha256))
        else {
            return refuse(
                stream,
                ErrorKind::Unknown,
                format!(
                    "no shared model {name:?} with that hash here (list again: it may have changed)"
                ),
            )
            .await;
        };
        if offset > model.bytes {
            return refuse(
                stream,
                ErrorKind::BadRequest,
                format!("offset {offset} is past the end ({} bytes)", model.bytes),
            )
            .await;
        }
        match send_file(stream, &file, offset, model.bytes).await {
            Ok(sent) => Served::Sent(sent),
            Err(e) => Served::Failed(e.to_string()),
        }
    }
}

/// Sends the `Sending` frame, then the file's bytes from `offset` to
/// `bytes`, [`CHUNK_BYTES`] at a time.
async fn send_file<S>(
    stream: &mut S,
    file: &SharedFile,
    offset: u64,
    bytes: u64,
) -> Result<u64, WireError>
where
    S: AsyncWrite + Unpin,
{
    use tokio::io::{AsyncReadExt, AsyncSeekExt};
    let mut opened = match tokio::fs::File::open(&file.path).await {
        Ok(f) => f,
        Err(e) => {
            let message = format!("cannot read the model file: {e}");
            write_frame(
                stream,
                &ModelAnswer::Error {
                    kind: ErrorKind::Io,
                    message,
                },
            )
            .await?;
            return Ok(0);
        }
    };
    opened.seek(std::io::SeekFrom::Start(offset)).await?;
    write_frame(stream, &ModelAnswer::Sending { offset, bytes }).await?;
    let mut left = bytes - offset;
    let mut buf = vec![0u8; CHUNK_BYTES];
    let mut sent = 0u64;
    while left > 0 {
        let want = usize::try_from(left)
            .unwrap_or(CHUNK_BYTES)
            .min(CHUNK_BYTES);
        let n = opened.read(&mut buf[..want]).await?;
        if n == 0 {
            // The file shrank under us; the client sees a short transfer.
            break;
        }
        stream.write_all(&buf[..n]).await?;
        sent += n as u64;
        left -= n as u64;
    }
    stream.flush().await?;
    Ok(sent)
}

async fn refuse<S>(stream: &mut S, kind: ErrorKind, message: String) -> Served
where
    S: AsyncWrite + Unpin,
{
    match write_frame(stream, &ModelAnswer::Error { kind, message }).await {
        Ok(()) => Served::Refused(kind),
        Err(e) => Served::Failed(e.to_string()),
    }
}

impl std::fmt::Debug for ModelServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelServer").finish_non_exhaustive()
    }
}
