//! `porfiry run`: the node daemon.

use clap::{Args, ValueEnum};

use crate::commands::init::open_or_init;
use crate::data_dir::DataDir;

/// How the node behaves on the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Profile {
    /// Listens, keeps idle connections open longer.
    #[default]
    Server,
    /// Dials its friends, does not listen, reconnects with backoff.
    Phone,
}

/// Flags of `porfiry run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Address to listen on (repeatable), e.g. /ip4/127.0.0.1/tcp/4001.
    #[arg(long = "listen", value_name = "MULTIADDR")]
    pub listen: Vec<String>,
    /// Network profile.
    #[arg(long, value_enum, default_value_t = Profile::Server)]
    pub profile: Profile,
}

/// Opens (or creates) the node, prints its id and runs until SIGINT/SIGTERM.
pub async fn run(dir: &DataDir, args: &RunArgs) -> anyhow::Result<()> {
    let (key, _store) = open_or_init(dir)?;
    println!("peer id: {}", key.peer_id());
    tracing::info!(profile = ?args.profile, "node running; Ctrl-C to stop");
    shutdown_signal().await;
    println!("shutting down");
    Ok(())
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(e) => {
                tracing::warn!("cannot listen for SIGTERM: {e}");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
