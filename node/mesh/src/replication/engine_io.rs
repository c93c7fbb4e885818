//! Carries out what the replication engine asks, in the order given:
//! storage writes (`Store`, `UpdateRoute`, `Delete`), frames (`Send`,
//! `SendItems` after loading the envelopes from storage page by page, and
//! `SendChunk`, one catch-up chunk, in `super::chunks`), the one timer
//! (`WakeAt`) and log lines for events.
//!
//! The outputs are carried out in turns on the database writer thread
//! ([`carry_out_in_turns`]). Storage outputs are written in ONE
//! transaction per run between frames (events and timers in between do
//! not split it), and a received item is stored together with its merged
//! row, so a crash leaves either both or neither and a frame's worth of
//! items costs one commit — unless another write waits for the writer (a
//! note the user posts, say): every [`WRITE_TURN_ITEMS`] writes the turn
//! looks, and if one waits it commits what it has and ends, and the next
//! turn, queued behind that write, goes on with the rest. So a friend's
//! flood of 500-note frames holds the user's write back by one chunk, not
//! by a frame; a crash may then keep the first chunks of a frame, which
//! the engine, rebuilt from the file at the next start, simply holds (a
//! catch-up brings the rest).
//! Our own published items (`Store` with no `received_from`) are not
//! written: every publisher on this node (`post_note`, `publish_pending`,
//! the offload advertisement, club changes) stores its item before the
//! engine sees it, and items signed by another process are read from the
//! file, so writing them again would cost the writer a query per item and
//! hold back the frames that push them.
//! A storage failure is returned (the daemon stops rather than run with an
//! engine that believes it holds items the file lacks; on restart the
//! engine is rebuilt from the file and catch-up fills the gap).

use std::collections::VecDeque;

use porfiry_protocol::devices::DeviceBook;
use porfiry_protocol::engine::{DeleteReason, Event, Output, RejectReason};
use porfiry_protocol::wire::{self, WireItem, WireMessage};
use porfiry_storage::db::{Db, DbError};
use porfiry_storage::{MAX_PAGE_IDS, StorageError, Store, StoredItem};

use super::chunks::send_chunk;
use super::frame_sink::{Counters, FrameSink, HeldFrames};
use super::limits::WRITE_TURN_ITEMS;

use crate::sharing::item_rows::stored_record;
use crate::sharing::merge::{forget_merged, merge_items};

/// Carries out `outputs` for node `local` on `db`'s writer thread, in as
/// many turns as other writes waiting for the writer make (one when none
/// waits), each turn a closure of its own queued behind them; between
/// turns the frames `sink` held (the driver was full) are sent from here. Returns the
/// last `WakeAt` asked for, if any, or the storage failure that stopped
/// it (what earlier turns committed stays), with the counters either way.
pub async fn carry_out_in_turns<S>(
    db: &Db,
    local: &str,
    outputs: Vec<Output>,
    sink: S,
    counters: Counters,
) -> Result<(Result<Option<u64>, StorageError>, Counters), DbError>
where
    S: FrameSink + HeldFrames + Send + 'static,
{
    let mut pending: VecDeque<Output> = outputs.into();
    let mut sink = sink;
    let mut counters = counters;
    let mut wake = None;
    loop {
        let local = local.to_owned();
        let asker = db.clone();
        let (result, rest, back, c) = db
            .write(move |store| {
                let waiting = || asker.writes_waiting();
                let r = carry_out_turn(
                    store,
                    &local,
                    &mut pending,
                    &mut sink,
                    &mut counters,
                    &waiting,
                );
                (r, pending, sink, counters)
            })
            .await?;
        (pending, sink, counters) = (rest, back, c);
        // Frames the driver had no room for, before the next turn's.
        sink.send_held().await;
        match result {
            Ok(Some(at)) => wake = Some(at),
            Ok(None) => {}
            Err(e) => return Ok((Err(e), counters)),
        }
        if pending.is_empty() {
            return Ok((Ok(wake), counters));
        }
    }
}

/// Carries out `outputs` from the front against `store` and `sink` for
/// node `local` until none is left or, at a chunk's end, `others_wait`
/// says another write waits for the writer; what is not done stays in
/// `outputs`, in order. Returns the last `WakeAt` it met, if any.
pub fn carry_out_turn(
    store: &Store,
    local: &str,
    outputs: &mut VecDeque<Output>,
    sink: &mut dyn FrameSink,
    counters: &mut Counters,
    others_wait: &dyn Fn() -> bool,
) -> Result<Option<u64>, StorageError> {
    let mut wake = None;
    let mut writes: Vec<Output> = Vec::new();
    while let Some(output) = outputs.pop_front() {
        match output {
            Output::Store { .. } | Output::UpdateRoute { .. } | Output::Delete { .. } => {
                writes.push(output);
                continue;
            }
            // Timers and events touch no storage and send nothing: they
            // must not split the run of writes into many transactions
            // (the engine interleaves an event with every stored item).
            Output::WakeAt { at_ms } => {
                wake = Some(at_ms);
                continue;
            }
            Output::Event(event) => {
                log_event(&event, counters);
                continue;
            }
            _ => {}
        }
        // A frame goes out only after what it depends on is committed.
        if !write_all(store, local, &mut writes, counters, others_wait)? {
            outputs.push_front(output);
            put_back(outputs, writes);
            return Ok(wake);
        }
        match output {
            Output::Send { peer, message } => send(&peer, &message, sink, counters),
            Output::SendItems {
                peer,
                session,
                items,
            } => {
                let mut sent: u32 = 0;
                for page in items.chunks(MAX_PAGE_IDS) {
                    let ids: Vec<_> = page.iter().map(|a| a.id).collect();
                    let payloads = store.item_page(&ids)?;
                    // Gone meanwhile (withdrawn, expired): skipped, as the
                    // engine expects.
                    let envelopes = page.iter().zip(payloads).filter_map(|(a, p)| {
                        p.map(|envelope| WireItem {
                            hops: a.hops,
                            envelope,
                        })
                    });
                    let (messages, n) = wire::pack_chunk(session, envelopes);
                    sent = sent.saturating_add(n);
                    for message in messages {
                        send(&peer, &message, sink, counters);
                    }
                }
                if let Some(session) = session {
                    let done = WireMessage::SyncDone { session, sent };
                    send(&peer, &done, sink, counters);
                }
            }
            Output::SendChunk {
                peer,
                session,
                chunk,
                items,
            } => send_chunk(store, &peer, session, chunk, &items, sink, counters)?,
            Output::Store { .. }
            | Output::UpdateRoute { .. }
            | Output::Delete { .. }
            | Output::WakeAt { .. }
            | Output::Event(_) => {}
        }
        // A send may have read pages of envelopes: a waiting write goes
        // next. Frames the driver had no room for are the loop's to send:
        // the writer does not wait for a friend.
        if !outputs.is_empty() && (sink.holds_frames() || others_wait()) {
            return Ok(wake);
        }
    }
    if !write_all(store, local, &mut writes, counters, others_wait)? {
        put_back(outputs, writes);
    }
    Ok(wake)
}

/// Puts the writes a turn left undone back at the front of `outputs`, in
/// their order.
fn put_back(outputs: &mut VecDeque<Output>, writes: Vec<Output>) {
    for w in writes.into_iter().rev() {
        outputs.push_front(w);
    }
}

fn send(peer: &str, message: &WireMessage, sink: &mut dyn FrameSink, counters: &mut Counters) {
    match wire::encode(message) {
        Ok(frame) => {
            counters.frames_sent += 1;
            counters.bytes_sent += frame.len() as u64;
            sink.send_frame(peer, frame);
        }
        // The engine and pack_items keep within the caps; this is a bug.
        Err(e) => {
            tracing::error!(%peer, message = message.name(), error = %e, "cannot encode a frame")
        }
    }
}

/// Writes a run of storage outputs in one transaction; adds the row ids
/// of the notes it merged and the pruned versions storage refused to
/// `counters` once it is committed. Every [`WRITE_TURN_ITEMS`] writes it
/// stores what it has and asks `others_wait`; if another write waits, it
/// commits there and leaves the rest in `writes` (returns `false`).
fn write_all(
    store: &Store,
    local: &str,
    writes: &mut Vec<Output>,
    counters: &mut Counters,
    others_wait: &dyn Fn() -> bool,
) -> Result<bool, StorageError> {
    if writes.is_empty() {
        return Ok(true);
    }
    let mut rest = std::mem::take(writes).into_iter();
    let (notes, refused) = store.transaction(|s| {
        let mut batch: Vec<StoredItem> = Vec::new();
        let mut merges = Vec::new();
        let mut notes = Vec::new();
        let mut refused = Vec::new();
        let mut done: usize = 0;
        // Read once a turn, at the first know-how item.
        let mut devices: Option<DeviceBook> = None;
        while let Some(w) = rest.next() {
            match w {
                // Ours, stored by its publisher (see the module doc).
                Output::Store {
                    received_from: None,
                    ..
                } => continue,
                Output::Store {
                    item,
                    received_from,
                    hops_left,
                } => {
                    batch.push(stored_record(&item, hops_left, received_from));
                    if item.author_peer_id() != local
                        && !from_own_device(s, local, &mut devices, &item)?
                    {
                        merges.push(item);
                    }
                }
                Output::UpdateRoute {
                    id,
                    received_from,
                    hops_left,
                } => {
                    // Only an item still waiting in the batch needs the
                    // batch written first.
                    if batch.iter().any(|r| r.record.id == id) {
                        notes.extend(flush(s, &mut batch, &mut merges, &mut refused)?);
                    }
                    s.update_item_route(&id, &received_from, hops_left)?;
                }
                Output::Delete { id, reason } => {
                    notes.extend(flush(s, &mut batch, &mut merges, &mut refused)?);
                    s.delete_item(&id)?;
                    match reason {
                        // A club item whose author turned out not to be a
                        // member was never the club's: its note goes too.
                        DeleteReason::Retracted { .. }
                        | DeleteReason::Replaced { .. }
                        | DeleteReason::NotAClubMember
                        // A stranger's item past the retention bound: its
                        // note goes too, or the bound would bound nothing.
                        | DeleteReason::Evicted => {
                            forget_merged(s, &id)?;
                        }
                        // An expired item stops travelling; the note the
                        // user already has stays in the notebook.
                        DeleteReason::Expired => {}
                    }
                }
                _ => continue,
            }
            done += 1;
            if done.is_multiple_of(WRITE_TURN_ITEMS) {
                // A chunk's end: what waits gets in after this commit.
                notes.extend(flush(s, &mut batch, &mut merges, &mut refused)?);
                if !rest.as_slice().is_empty() && others_wait() {
                    break;
                }
            }
        }
        notes.extend(flush(s, &mut batch, &mut merges, &mut refused)?);
        Ok((notes, refused))
    })?;
    counters.merged_notes.extend(notes);
    counters.refused_pruned.extend(refused);
    writes.extend(rest);
    Ok(writes.is_empty())
}

/// Whether `item` is know-how (a strategy, a thinking method, a rating)
/// written by one of this node's own devices: the person's own know-how
/// arrives as the device's memory records (`crate::devices`, issue 45 §2),
/// so merging the item a device also shares with friends would keep the
/// row twice. The item itself is still stored and relayed.
fn from_own_device(
    s: &Store,
    local: &str,
    devices: &mut Option<DeviceBook>,
    item: &porfiry_protocol::VerifiedItem,
) -> Result<bool, StorageError> {
    use porfiry_protocol::ItemKind;
    if !matches!(
        item.kind(),
        ItemKind::StagnationStrategy | ItemKind::ThinkingMethod | ItemKind::Rating
    ) {
        return Ok(false);
    }
    if devices.is_none() {
        *devices = Some(s.device_book(local)?);
    }
    Ok(devices
        .as_ref()
        .is_some_and(|book| book.is_device(item.author_peer_id())))
}

/// Stores the pending items, then merges their rows; the row ids of the
/// notes merged. Pruned memory versions storage refused go to `refused`.
fn flush(
    s: &Store,
    batch: &mut Vec<StoredItem>,
    merges: &mut Vec<porfiry_protocol::VerifiedItem>,
    refused: &mut Vec<porfiry_protocol::ItemId>,
) -> Result<Vec<i64>, StorageError> {
    // Nothing pending (merges are a part of the batch): no savepoints.
    if batch.is_empty() {
        return Ok(Vec::new());
    }
    for chunk in batch.chunks(porfiry_storage::limits::MAX_ITEMS_PER_BATCH) {
        refused.extend(s.insert_items_reporting(chunk)?.refused_pruned);
    }
    batch.clear();
    let merged = merge_items(s, merges)?;
    let mut notes = Vec::new();
    for (item, m) in merges.iter().zip(merged) {
        match m {
            Ok(Some(row)) if item.kind() == porfiry_protocol::ItemKind::Note => notes.push(row),
            Ok(_) => {}
            // A row the local table refuses (say, a whitespace-only note) must
            // not cost the item: it is stored and relayed all the same.
            Err(e) => {
                tracing::warn!(item = %item.id(), author = item.author_peer_id(), error = %e, "received item kept but not merged");
            }
        }
    }
    merges.clear();
    Ok(notes)
}

fn log_event(event: &Event, c: &mut Counters) {
    match event {
        Event::Accepted { id, from } => {
            if from.is_some() {
                c.accepted += 1;
            }
            tracing::debug!(%id, ?from, "accepted item");
        }
        Event::Duplicate { .. } => c.duplicates += 1,
        Event::Rejected { id, from, reason } => {
            c.rejected += 1;
            match reason {
                // Expected traffic, not a fault of the sender.
                RejectReason::Expired | RejectReason::Withdrawn => {
                    tracing::debug!(?id, ?from, ?reason, "refused item");
                }
                // A flood is refused item by item: counted, not logged
                // one line each (`refused.json` has the totals).
                RejectReason::OverQuota => {
                    c.over_quota += 1;
                    tracing::debug!(?id, ?from, "refused an item over its author's quota");
                }
                // Offered again at a later catch-up: a slow link, not a loss.
                RejectReason::LinkRate => {
                    tracing::debug!(?id, ?from, "a stranger's item past the link's rate; later");
                }
                RejectReason::Invalid(e) => {
                    tracing::warn!(?id, from = from.as_deref().unwrap_or("-"), error = %e, "rejected an invalid item");
                }
                _ => tracing::warn!(
                    ?id,
                    from = from.as_deref().unwrap_or("-"),
                    ?reason,
                    "rejected an item"
                ),
            }
        }
        Event::UnknownPeer { peer } => {
            tracing::warn!(%peer, "ignored a message from a peer that is not a connected friend");
        }
        Event::SyncFinished {
            peer,
            session,
            role,
            items,
        } => tracing::info!(%peer, session, ?role, items, "catch-up finished"),
        Event::SyncAborted {
            peer,
            session,
            role,
            reason,
        } => tracing::info!(%peer, session, ?role, %reason, "catch-up aborted"),
        other => tracing::debug!(?other, "engine event"),
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod turn_tests;
