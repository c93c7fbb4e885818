//! A streamed turn: the turn runs in a spawned task that sends text deltas,
//! each tool's client events as they happen, and then its result through a
//! bounded channel; the response body frames them ([`super::sse`]) and
//! sends a keep-alive comment whenever nothing came for the keep-alive
//! interval.
//!
//! The status is decided before the first byte: the handler waits up to one
//! keep-alive interval for the turn's first event, so a model that is down
//! gives an HTTP 502 with the error object; after that the status is 200
//! and an error is an SSE error event followed by `[DONE]`.
//!
//! **Cancellation:** the body owns an [`AbortOnDrop`] of the task. When the
//! client hangs up, hyper drops the body, the task is aborted, the upstream
//! model request (a future inside the task) is dropped — its connection
//! closes — and the session's lock is released. The slot stays marked
//! unfinished, so the next request resyncs the session's history.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::{Instant, Interval, MissedTickBehavior};

use super::backend::{TurnDelta, TurnReply};
use super::errors::ApiError;
use super::limits::DELTA_CHANNEL;
use super::prepared::{DEFAULT_FINISH_REASON, PreparedTurn, extension, turn_error, via};
use super::sse::{ChunkFramer, KEEPALIVE};
use super::state::ApiState;
use super::wire::WireVia;
use porfiry_agent::chat::ClientEvent;

/// What the turn task reports.
#[derive(Debug)]
pub enum TurnEvent {
    /// Answer text.
    Text(String),
    /// A client event (`show_text`, a media action) as its tool ran.
    Event(ClientEvent),
    /// The end: the reply (with whose model wrote it, when a friend's
    /// did) or the error.
    Done(Result<(TurnReply, Option<WireVia>), ApiError>),
}

/// Aborts its task when dropped.
pub struct AbortOnDrop(pub JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Starts the turn and answers with the event stream (or an error status
/// when the turn fails before its first event).
pub async fn respond(state: &ApiState, turn: PreparedTurn, include_usage: bool) -> Response {
    let framer = ChunkFramer::new(turn.id.clone(), turn.created, include_usage);
    let (events, mut rx) = mpsc::channel(DELTA_CHANNEL);
    let guard = AbortOnDrop(tokio::spawn(run_turn(turn, events)));
    let keepalive = state.keepalive();
    let first = match tokio::time::timeout(keepalive, rx.recv()).await {
        Ok(Some(TurnEvent::Done(Err(error)))) => return error.into_response(),
        Ok(first) => first,
        Err(_elapsed) => None,
    };
    let mut body = BodyState {
        rx,
        framer,
        queue: VecDeque::new(),
        ticker: ticker(keepalive),
        finished: false,
        _guard: guard,
    };
    body.queue.push_back(body.framer.start());
    if let Some(event) = first {
        body.push(Some(event));
    }
    let stream = futures::stream::unfold(body, |mut s| async move {
        s.next_bytes()
            .await
            .map(|bytes| (Ok::<_, Infallible>(bytes), s))
    });
    (
        [
            (CONTENT_TYPE, "text/event-stream"),
            (CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(stream.boxed()),
    )
        .into_response()
}

fn ticker(period: Duration) -> Interval {
    let mut ticker = tokio::time::interval_at(Instant::now() + period, period);
    ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
    ticker
}

/// The turn task: syncs the session, runs the turn with a delta channel,
/// forwards the deltas, then sends the result.
async fn run_turn(turn: PreparedTurn, events: mpsc::Sender<TurnEvent>) {
    let mut slot = turn.slot.lock().await;
    turn.begin(&mut slot);
    let (deltas, mut delta_rx) = futures::channel::mpsc::channel::<TurnDelta>(DELTA_CHANNEL);
    let forward = async {
        let mut shown = String::new();
        while let Some(delta) = delta_rx.next().await {
            let event = match delta {
                TurnDelta::Text(text) => {
                    shown.push_str(&text);
                    TurnEvent::Text(text)
                }
                TurnDelta::Event(event) => TurnEvent::Event(event),
            };
            if events.send(event).await.is_err() {
                break;
            }
        }
        shown
    };
    let message = turn.history.new_message.as_str();
    let (result, mut shown) = futures::join!(slot.agent.send(message, Some(deltas)), forward);
    let result = match result {
        Ok(reply) => {
            // A model that streamed nothing still has its answer shown.
            if shown.is_empty() && !reply.text.is_empty() {
                shown = reply.text.clone();
                let _ = events.send(TurnEvent::Text(shown.clone())).await;
            }
            let change = turn.finish(&mut slot, &shown, &reply);
            Ok((reply, change))
        }
        Err(error) => Err(turn_error(error)),
    };
    drop(slot);
    let result = match result {
        Ok((reply, change)) => {
            turn.state.keep_turn_record(change).await;
            let via = via(&turn.state, &reply).await;
            Ok((reply, via))
        }
        Err(error) => Err(error),
    };
    let _ = events.send(TurnEvent::Done(result)).await;
}

struct BodyState {
    rx: mpsc::Receiver<TurnEvent>,
    framer: ChunkFramer,
    queue: VecDeque<Bytes>,
    ticker: Interval,
    finished: bool,
    _guard: AbortOnDrop,
}

impl BodyState {
    fn push(&mut self, event: Option<TurnEvent>) {
        match event {
            Some(TurnEvent::Text(text)) => self.queue.push_back(self.framer.text(&text)),
            Some(TurnEvent::Event(event)) => self.queue.push_back(self.framer.event(&event)),
            Some(TurnEvent::Done(Ok((reply, via)))) => {
                let reason = reply
                    .finish_reason
                    .as_deref()
                    .unwrap_or(DEFAULT_FINISH_REASON);
                let end = self
                    .framer
                    .finish(reason, extension(&reply, via), reply.usage);
                self.queue.extend(end);
                self.finished = true;
            }
            Some(TurnEvent::Done(Err(error))) => {
                self.queue.extend(self.framer.error(&error));
                self.finished = true;
            }
            None => {
                let error = ApiError::Internal("the turn ended without an answer".to_owned());
                self.queue.extend(self.framer.error(&error));
                self.finished = true;
            }
        }
        self.ticker.reset();
    }

    async fn next_bytes(&mut self) -> Option<Bytes> {
        loop {
            if let Some(bytes) = self.queue.pop_front() {
                return Some(bytes);
            }
            if self.finished {
                return None;
            }
            tokio::select! {
                event = self.rx.recv() => self.push(event),
                _ = self.ticker.tick() => return Some(Bytes::from_static(KEEPALIVE)),
            }
        }
    }
}
