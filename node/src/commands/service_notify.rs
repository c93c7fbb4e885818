//! Telling systemd how `porfiry run` is (`Type=notify` in the unit):
//! `READY=1` once the node listens and serves, `WATCHDOG=1` every half
//! watchdog period while the node's database still answers (a wedged node
//! stops feeding it and systemd restarts it), `STOPPING=1` when it stops.
//!
//! Everything here is a no-op unless systemd set `NOTIFY_SOCKET` (and
//! `WATCHDOG_USEC` for the watchdog): run from a terminal, nothing is sent.

use std::time::Duration;

use porfiry_mesh::node::NodeHandle;
use sd_notify::NotifyState;

/// The shortest watchdog ping period: 100 ms. A unit asking for a tighter
/// watchdog than this is misconfigured; pinging faster only burns CPU.
pub const MIN_PING_PERIOD: Duration = Duration::from_millis(100);

/// How often to ping for a watchdog of `timeout`: half of it (what
/// sd_watchdog_enabled(3) advises), never under [`MIN_PING_PERIOD`].
pub fn ping_period(timeout: Duration) -> Duration {
    (timeout / 2).max(MIN_PING_PERIOD)
}

/// Sends `state` if systemd is listening; a failure is logged, never fatal.
fn send(state: &[NotifyState<'_>]) {
    if let Err(e) = sd_notify::notify(state) {
        tracing::warn!("cannot notify systemd: {e}");
    }
}

/// `READY=1` with a one-line status (the peer id).
pub fn ready(status: &str) {
    send(&[NotifyState::Ready, NotifyState::Status(status)]);
}

/// `STOPPING=1`.
pub fn stopping() {
    send(&[NotifyState::Stopping]);
}

/// Starts feeding systemd's watchdog, when the unit set one: every
/// [`ping_period`], one read on the node's database; `WATCHDOG=1` only if it
/// answers within the period. Aborting the task stops the pings.
pub fn spawn_watchdog(node: &NodeHandle) -> Option<tokio::task::JoinHandle<()>> {
    let timeout = sd_notify::watchdog_enabled()?;
    let period = ping_period(timeout);
    let node = node.clone();
    tracing::info!(?timeout, ?period, "feeding systemd's watchdog");
    Some(tokio::spawn(async move {
        let mut ticks = tokio::time::interval(period);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let check = node.db().read(|store| store.schema_version());
            match tokio::time::timeout(period, check).await {
                Ok(Ok(Ok(_))) => send(&[NotifyState::Watchdog]),
                Ok(Ok(Err(e))) => tracing::warn!("watchdog: the database failed: {e}"),
                Ok(Err(e)) => tracing::warn!("watchdog: the database is gone: {e}"),
                Err(_) => tracing::warn!("watchdog: the database did not answer in {period:?}"),
            }
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ping_period_is_half_the_watchdog_and_never_below_the_floor() {
        assert_eq!(
            ping_period(Duration::from_secs(60)),
            Duration::from_secs(30)
        );
        assert_eq!(ping_period(Duration::from_millis(10)), MIN_PING_PERIOD);
    }
}
