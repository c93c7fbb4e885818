//! `GET /api/events`: a server-sent-event stream that says `changed`
//! whenever the node's database changes (a friend's note arrived, a note
//! was posted, a friend came or went), so the page refreshes without a
//! reload. One event at once on connect; bursts (a catch-up of thousands of
//! items) are coalesced; a keep-alive comment goes out while nothing happens.

use std::convert::Infallible;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use tokio::sync::watch;

use crate::sse::KEEPALIVE;
use crate::state::ApiState;

/// After an event, changes within this long go into the next one: a
/// catch-up writes items one batch at a time, and a page that refetched
/// for each would fetch hundreds of times a second. A quarter second is
/// still "at once" to a person.
pub const EVENT_COALESCE: Duration = Duration::from_millis(250);

/// The `changed` event with the node's change counter.
pub fn changed_event(counter: u64) -> Bytes {
    Bytes::from(format!("event: changed\ndata: {counter}\n\n"))
}

struct Watch {
    changes: Option<watch::Receiver<u64>>,
    first: bool,
    keepalive: Duration,
}

impl Watch {
    /// The next bytes of the stream; `None` once the node has stopped.
    async fn next(&mut self) -> Option<Bytes> {
        if self.first {
            self.first = false;
            let now = self.changes.as_mut().map_or(0, |c| *c.borrow_and_update());
            return Some(changed_event(now));
        }
        let Some(changes) = self.changes.as_mut() else {
            tokio::time::sleep(self.keepalive).await;
            return Some(Bytes::from_static(KEEPALIVE));
        };
        match tokio::time::timeout(self.keepalive, changes.changed()).await {
            Err(_) => Some(Bytes::from_static(KEEPALIVE)),
            Ok(Err(_)) => None,
            Ok(Ok(())) => {
                tokio::time::sleep(EVENT_COALESCE).await;
                Some(changed_event(*changes.borrow_and_update()))
            }
        }
    }
}

/// The stream.
pub async fn stream(State(state): State<ApiState>) -> Response {
    let watch = Watch {
        changes: state.node().changes(),
        first: true,
        keepalive: state.keepalive(),
    };
    let body = futures::stream::unfold(watch, |mut w| async move {
        let bytes = w.next().await?;
        Some((Ok::<_, Infallible>(bytes), w))
    });
    (
        [
            (CONTENT_TYPE, "text/event-stream"),
            (CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(body),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_burst_of_changes_is_one_event_and_quiet_is_a_keepalive() {
        let (tx, rx) = watch::channel(0u64);
        let mut w = Watch {
            changes: Some(rx),
            first: true,
            keepalive: Duration::from_secs(15),
        };
        assert_eq!(w.next().await.unwrap(), changed_event(0));
        tx.send(1).unwrap();
        let next = tokio::spawn(async move {
            let got = w.next().await;
            (got, w)
        });
        tokio::task::yield_now().await;
        for n in 2..=5 {
            tx.send(n).unwrap();
        }
        let (got, mut w) = next.await.unwrap();
        assert_eq!(got.unwrap(), changed_event(5));
        assert_eq!(w.next().await.unwrap(), Bytes::from_static(KEEPALIVE));
        drop(tx);
        assert!(w.next().await.is_none(), "a stopped node ends the stream");
    }
}
