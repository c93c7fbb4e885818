//! Events that wake an idle cognitive core: a process it started finished,
//! a note arrived, or a person paused or resumed its thinking. Whoever causes one sends it; the core awaits them
//! (never polls) and checks its wake conditions on each.
//!
//! A broadcast channel: senders never wait, and a core that fell behind by
//! more than [`CORE_EVENT_CAPACITY`] events learns it lagged and re-checks
//! everything at once, so nothing is lost by the bound.

use tokio::sync::broadcast;

/// Events kept for a slow receiver: a tick lasts seconds to minutes, and a
/// burst of incoming notes (a friend catching up) can bring hundreds; a
/// lagged receiver re-checks the database instead, so the bound only caps
/// memory.
pub const CORE_EVENT_CAPACITY: usize = 256;

/// Something that may wake an idle core.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoreEvent {
    /// A `process_log` row left the running state (id of the row).
    ProcessFinished {
        /// `process_log.id`.
        id: i64,
    },
    /// A note was stored: the user's, a friend's, or one merged from the mesh.
    NoteArrived {
        /// `notes.id`.
        id: i64,
    },
    /// A person paused or resumed thinking (the `thinking_paused` config key).
    ThinkingSwitched,
}

/// The sending side, cloned into whatever causes events; `subscribe` gives
/// the core its receiver.
#[derive(Debug, Clone)]
pub struct CoreEvents {
    tx: broadcast::Sender<CoreEvent>,
}

impl Default for CoreEvents {
    fn default() -> Self {
        Self::new()
    }
}

impl CoreEvents {
    /// A channel with nobody listening yet.
    pub fn new() -> Self {
        let (tx, _) = broadcast::channel(CORE_EVENT_CAPACITY);
        Self { tx }
    }

    /// Tells every listening core; nobody listening is fine.
    pub fn send(&self, event: CoreEvent) {
        // An error only means no core is running; the event is moot then.
        let _ = self.tx.send(event);
    }

    /// A receiver for events sent from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<CoreEvent> {
        self.tx.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_subscriber_gets_events_sent_after_it_subscribed() {
        let events = CoreEvents::new();
        events.send(CoreEvent::NoteArrived { id: 1 });
        let mut rx = events.subscribe();
        events.send(CoreEvent::ProcessFinished { id: 7 });
        assert_eq!(
            rx.recv().await.unwrap(),
            CoreEvent::ProcessFinished { id: 7 }
        );
    }

    #[tokio::test]
    async fn a_receiver_that_falls_behind_learns_it_lagged() {
        let events = CoreEvents::new();
        let mut rx = events.subscribe();
        for id in 0..(CORE_EVENT_CAPACITY as i64 + 10) {
            events.send(CoreEvent::NoteArrived { id });
        }
        assert!(matches!(
            rx.recv().await,
            Err(broadcast::error::RecvError::Lagged(10))
        ));
    }
}
