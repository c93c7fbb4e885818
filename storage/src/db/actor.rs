//! [`Db`]: the handle to the writer thread and the read connections.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::Store;
use tokio::sync::{mpsc, oneshot};

use super::error::DbError;
use super::limits::{READ_CONNECTIONS, READ_QUEUE_CAPACITY, WRITE_QUEUE_CAPACITY};

/// A closure run on a database thread with that thread's connection.
type Job = Box<dyn FnOnce(&Store) + Send>;

/// What a database thread is asked to do.
enum Request {
    /// Run this closure.
    Run(Job),
    /// Drop the connection and end; the sender learns when it is done.
    Close(oneshot::Sender<()>),
}

/// The database actor (cheap to clone; every clone talks to the same
/// threads). Dropping the last clone ends the threads; [`Db::close`] ends
/// them at once and waits until their connections are closed.
#[derive(Clone)]
pub struct Db {
    inner: Arc<Inner>,
}

struct Inner {
    writes: mpsc::Sender<Request>,
    reads: mpsc::Sender<Request>,
    path: PathBuf,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("path", &self.inner.path)
            .finish_non_exhaustive()
    }
}

impl Db {
    /// Starts the actor with `writer` as the write connection and
    /// [`READ_CONNECTIONS`] read-only connections opened on its file.
    pub fn start(writer: Store) -> Result<Db, DbError> {
        let path = writer.path().to_owned();
        let mut readers = Vec::with_capacity(READ_CONNECTIONS);
        for _ in 0..READ_CONNECTIONS {
            let store = Store::open(&path)?;
            store.set_query_only(true)?;
            readers.push(store);
        }
        let (writes, write_rx) = mpsc::channel(WRITE_QUEUE_CAPACITY);
        std::thread::Builder::new()
            .name("porfiry-db-writer".into())
            .spawn(move || serve(writer, write_rx))
            .map_err(DbError::Thread)?;
        let (reads, read_rx) = mpsc::channel(READ_QUEUE_CAPACITY);
        let shared = Arc::new(Mutex::new(read_rx));
        for (i, store) in readers.into_iter().enumerate() {
            let rx = shared.clone();
            std::thread::Builder::new()
                .name(format!("porfiry-db-reader-{i}"))
                .spawn(move || serve_shared(store, &rx))
                .map_err(DbError::Thread)?;
        }
        Ok(Db {
            inner: Arc::new(Inner {
                writes,
                reads,
                path,
            }),
        })
    }

    /// Opens the database file at `path` (it must exist) and starts the
    /// actor on it.
    pub fn open(path: &Path) -> Result<Db, DbError> {
        Db::start(Store::open(path)?)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Runs `f` on the writer thread after every write asked for before it;
    /// waits for a place in the queue when it is full. Use
    /// `store.transaction` inside `f` for several statements that must
    /// commit together.
    pub async fn write<F, T>(&self, f: F) -> Result<T, DbError>
    where
        F: FnOnce(&Store) -> T + Send + 'static,
        T: Send + 'static,
    {
        call(&self.inner.writes, f).await
    }

    /// [`Db::write`] for a plain thread (one outside the async runtime,
    /// which must not block): waits for the queue and the answer by
    /// blocking. Panics if called from async code, as tokio's blocking
    /// calls do.
    pub fn write_blocking<F, T>(&self, f: F) -> Result<T, DbError>
    where
        F: FnOnce(&Store) -> T + Send + 'static,
        T: Send + 'static,
    {
        let (job, rx) = answered(f);
        self.inner
            .writes
            .blocking_send(Request::Run(job))
            .map_err(|_| DbError::Closed)?;
        rx.blocking_recv().map_err(|_| DbError::Closed)
    }

    /// Runs `f` on one of the read connections (which refuse writes).
    pub async fn read<F, T>(&self, f: F) -> Result<T, DbError>
    where
        F: FnOnce(&Store) -> T + Send + 'static,
        T: Send + 'static,
    {
        call(&self.inner.reads, f).await
    }

    /// Queues `f` for a read connection now and returns its answer to await
    /// later, so the read runs while the caller does other work; waits only
    /// for a place in the queue.
    pub async fn read_ahead<F, T>(&self, f: F) -> Result<Answer<T>, DbError>
    where
        F: FnOnce(&Store) -> T + Send + 'static,
        T: Send + 'static,
    {
        queue(&self.inner.reads, f).await
    }

    /// Free places in the write queue (for tests and status).
    pub fn write_queue_free(&self) -> usize {
        self.inner.writes.capacity()
    }

    /// Whether a write is queued that the writer thread has not taken yet.
    /// A long write asks it from inside its own closure (which the writer
    /// has taken already, so it does not count itself) to commit what it
    /// has done and let the waiting write in before it goes on: the mesh
    /// stores a friend's flood so, and a note the user posts meanwhile
    /// waits for one small chunk of it instead of the whole frame.
    pub fn writes_waiting(&self) -> bool {
        self.inner.writes.capacity() < WRITE_QUEUE_CAPACITY
    }

    /// Lets the calls already queued run, then closes every connection and
    /// waits for that. Later calls fail with [`DbError::Closed`].
    pub async fn close(&self) {
        let mut done = Vec::new();
        let (tx, rx) = oneshot::channel();
        if self.inner.writes.send(Request::Close(tx)).await.is_ok() {
            done.push(rx);
        }
        for _ in 0..READ_CONNECTIONS {
            let (tx, rx) = oneshot::channel();
            if self.inner.reads.send(Request::Close(tx)).await.is_ok() {
                done.push(rx);
            }
        }
        for rx in done {
            // An error means the thread is gone already: closed all the same.
            let _ = rx.await;
        }
    }
}

async fn call<F, T>(requests: &mpsc::Sender<Request>, f: F) -> Result<T, DbError>
where
    F: FnOnce(&Store) -> T + Send + 'static,
    T: Send + 'static,
{
    queue(requests, f).await?.get().await
}

/// Queues `f` and returns where its answer will come.
async fn queue<F, T>(requests: &mpsc::Sender<Request>, f: F) -> Result<Answer<T>, DbError>
where
    F: FnOnce(&Store) -> T + Send + 'static,
    T: Send + 'static,
{
    let (job, rx) = answered(f);
    requests
        .send(Request::Run(job))
        .await
        .map_err(|_| DbError::Closed)?;
    Ok(Answer(rx))
}

/// The answer of a queued call ([`Db::read_ahead`]).
#[derive(Debug)]
pub struct Answer<T>(oneshot::Receiver<T>);

impl<T> Answer<T> {
    /// Waits for the answer.
    pub async fn get(self) -> Result<T, DbError> {
        // Dropped unanswered: the thread closed (or the closure panicked).
        self.0.await.map_err(|_| DbError::Closed)
    }
}

/// `f` as a job that sends its answer to the returned receiver.
fn answered<F, T>(f: F) -> (Job, oneshot::Receiver<T>)
where
    F: FnOnce(&Store) -> T + Send + 'static,
    T: Send + 'static,
{
    let (tx, rx) = oneshot::channel();
    let job: Job = Box::new(move |store| {
        // The caller may have given up waiting; the work is done either way.
        let _ = tx.send(f(store));
    });
    (job, rx)
}

/// The writer thread: runs jobs in order until closed or forgotten.
fn serve(store: Store, mut rx: mpsc::Receiver<Request>) {
    while let Some(request) = rx.blocking_recv() {
        match request {
            Request::Run(job) => run_job(&store, job),
            Request::Close(done) => {
                rx.close();
                drop(store);
                let _ = done.send(());
                return;
            }
        }
    }
}

/// A read thread: takes the next request from the queue it shares with the
/// other readers.
fn serve_shared(store: Store, rx: &Mutex<mpsc::Receiver<Request>>) {
    loop {
        let request = match rx.lock() {
            Ok(mut rx) => rx.blocking_recv(),
            // Another reader panicked holding the lock: stop too.
            Err(_) => None,
        };
        match request {
            Some(Request::Run(job)) => run_job(&store, job),
            Some(Request::Close(done)) => {
                drop(store);
                let _ = done.send(());
                return;
            }
            None => return,
        }
    }
}

/// Runs one job; a panicking closure loses only its own answer (the caller
/// gets `Closed`), not the thread.
fn run_job(store: &Store, job: Job) {
    let run = std::panic::AssertUnwindSafe(|| job(store));
    if std::panic::catch_unwind(run).is_err() {
        tracing::error!("a database closure panicked; its caller gets no answer");
    }
}

#[cfg(test)]
mod tests;
