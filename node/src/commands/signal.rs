//! The signals that stop a foreground command (`run`, `think`).
//!
//! The handlers are installed when [`shutdown_signal`] is called, not when
//! its future is first polled: a supervisor may send SIGTERM the moment the
//! node says READY, and a handler installed later would leave SIGTERM's
//! default action (death without a clean stop) for that window.

use std::future::Future;

/// Installs SIGINT and SIGTERM handlers now; the future resolves on either.
pub fn shutdown_signal() -> impl Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let term = signal(SignalKind::terminate());
        let interrupt = signal(SignalKind::interrupt());
        async move {
            match (term, interrupt) {
                (Ok(mut term), Ok(mut interrupt)) => {
                    tokio::select! {
                        _ = interrupt.recv() => {}
                        _ = term.recv() => {}
                    }
                }
                (term, interrupt) => {
                    if let Err(e) = term.as_ref().and(interrupt.as_ref()) {
                        tracing::warn!("cannot listen for SIGTERM or SIGINT: {e}");
                    }
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
