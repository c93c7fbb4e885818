//! [`Node::spawn`]: the node's own thread, running a current-thread tokio
//! runtime with the replication loop, the mesh driver and its forwarding
//! task; the database actor's threads beside it. One thread for the loop
//! keeps the engine single-threaded (it is a plain `&mut` state machine)
//! and costs a phone no idle wake-ups of a worker pool; the embedding
//! program's own runtime, if any, is not touched.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::sync::{mpsc, oneshot, watch};

use super::config::NodeConfig;
use super::error::NodeError;
use super::handle::NodeHandle;
use super::limits::COMMAND_QUEUE_CAPACITY;
use crate::init::open_or_init;
use crate::lock::lock_data_dir;
use crate::net::{LINKS_FILE_NAME, MeshError, Profile, ReachConfig, StreamControl};
use crate::replication::refused_file::REFUSED_FILE_NAME;
use crate::replication::{DaemonOptions, LoopIo, ReplicationError, run_node};
use porfiry_storage::db::Db;

pub use crate::replication::Stopped;

/// Starts nodes.
#[derive(Debug)]
pub struct Node;

impl Node {
    /// Opens `config.data_dir` (creating a node there when it holds none),
    /// takes its daemon lock, and starts the node on its own thread. Returns
    /// the handle and the join that resolves when the node has stopped
    /// (after [`NodeHandle::shutdown`], after every handle is dropped, or
    /// on a failure), its daemon lock released and its database closed.
    pub fn spawn(config: NodeConfig) -> Result<(NodeHandle, NodeJoin), NodeError> {
        if config.profile == Profile::Phone && !config.listen.is_empty() {
            return Err(ReplicationError::from(MeshError::PhoneListens(config.listen)).into());
        }
        let lock = lock_data_dir(&config.data_dir)?;
        let (key, store) = open_or_init(&config.data_dir)?;
        // A server reads its whole file once at start, so a damaged page is
        // found before it can cost anything (a second or two for hundreds
        // of megabytes, docs/benchmarks.md); a phone, which starts on every
        // resume, leaves that to `porfiry doctor`.
        if config.profile == Profile::Server {
            store.quick_check()?;
        }
        let db = Db::start(store)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(NodeError::Start)?;
        let (commands_tx, commands) = mpsc::channel(COMMAND_QUEUE_CAPACITY);
        let (listening, listening_rx) = watch::channel(Vec::new());
        let (stop, mut stop_rx) = watch::channel(false);
        let (done_tx, done) = oneshot::channel();
        let streams = StreamControl::new();
        let handle = NodeHandle::new(
            &key,
            config.profile,
            db.clone(),
            commands_tx,
            stop,
            listening_rx,
            config.clock.clone(),
            streams.clone(),
            config.events.clone(),
        )
        .with_data_dir(config.data_dir.root().to_owned());
        let options = DaemonOptions {
            profile: config.profile,
            listen: config.listen,
            streams,
            reach: ReachConfig {
                links_file: Some(config.data_dir.root().join(LINKS_FILE_NAME)),
                ..config.reach
            },
            quotas: config.quotas,
            refused_file: Some(config.data_dir.root().join(REFUSED_FILE_NAME)),
            data_dir: Some(config.data_dir.root().to_owned()),
        };
        let io = LoopIo {
            commands,
            listening,
            clock: config.clock,
            events: config.events,
            db_changed: handle.db_changes_sender(),
        };
        std::thread::Builder::new()
            .name("porfiry-node".into())
            .spawn(move || {
                let result = runtime.block_on(async move {
                    // Stops when asked, or when every handle is gone.
                    let shutdown = async move {
                        let _ = stop_rx.wait_for(|stop| *stop).await;
                    };
                    let result = run_node(key, db.clone(), options, io, shutdown).await;
                    db.close().await;
                    result.map_err(NodeError::from)
                });
                drop(runtime);
                drop(lock);
                // The joiner may be gone; the node has stopped either way.
                let _ = done_tx.send(result);
            })
            .map_err(NodeError::Start)?;
        Ok((handle, NodeJoin { done }))
    }
}

/// Resolves when the node has stopped: with what it held, every item of it
/// committed, or with why it failed.
#[derive(Debug)]
pub struct NodeJoin {
    done: oneshot::Receiver<Result<Stopped, NodeError>>,
}

impl Future for NodeJoin {
    type Output = Result<Stopped, NodeError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.done)
            .poll(cx)
            .map(|r| r.unwrap_or(Err(NodeError::Stopped)))
    }
}
