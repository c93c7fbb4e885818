//! Sending one chunk of a catch-up session (`Output::SendChunk`): its page
//! of envelopes is read from SQLite in one query ([`Store::item_page`]),
//! packed into `Items` frames and handed to the driver as one tracked group
//! (`MeshCommand::SendTracked`), whose `FrameDone` becomes the engine's
//! `Input::ItemsDrained`. So a session holds one page of payloads at a time
//! in this process, never the whole difference.

use porfiry_protocol::engine::Input;
use porfiry_protocol::wire::{self, Announce, WireItem};
use porfiry_storage::{StorageError, Store};

use super::frame_sink::{Counters, FrameSink};
use crate::net::SendTag;

/// Loads, packs and sends one chunk for `peer`. Items no longer stored are
/// skipped; `SendTag::items` counts the envelopes that went out.
pub fn send_chunk(
    store: &Store,
    peer: &str,
    session: u64,
    chunk: u32,
    items: &[Announce],
    sink: &mut dyn FrameSink,
    counters: &mut Counters,
) -> Result<(), StorageError> {
    let ids: Vec<_> = items.iter().map(|a| a.id).collect();
    let payloads = store.item_page(&ids)?;
    let envelopes = items.iter().zip(payloads).filter_map(|(a, p)| {
        p.map(|envelope| WireItem {
            hops: a.hops,
            envelope,
        })
    });
    let (messages, sent) = wire::pack_chunk(Some(session), envelopes);
    let mut frames = Vec::with_capacity(messages.len());
    for message in &messages {
        match wire::encode(message) {
            Ok(frame) => {
                counters.frames_sent += 1;
                counters.bytes_sent += frame.len() as u64;
                frames.push(frame);
            }
            // pack_chunk keeps within the caps; this is a bug.
            Err(e) => tracing::error!(%peer, error = %e, "cannot encode a chunk frame"),
        }
    }
    sink.send_tracked(
        peer,
        frames,
        SendTag {
            session,
            chunk,
            items: sent,
        },
    );
    Ok(())
}

/// The engine input for a driver's `FrameDone`.
pub fn drained(peer: String, tag: SendTag, delivered: bool) -> Input {
    Input::ItemsDrained {
        peer,
        session: tag.session,
        chunk: tag.chunk,
        sent: tag.items,
        delivered,
    }
}
