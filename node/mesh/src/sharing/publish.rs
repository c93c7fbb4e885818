//! Local rows becoming signed items: `notes post` (note row, item and the
//! link between them in one transaction) and the daemon's publishing pass
//! over rows marked for sharing (notes with an audience that no one signed
//! yet, shareable stagnation strategies, thinking methods, ratings and LLM
//! addresses).
//!
//! Only the fields an item kind has travel: a note's local tags, llm_id,
//! read and hidden marks, and an LLM entry's config (where its API key env
//! var is named) have no field in the item bodies, so they cannot leak.

use std::collections::HashSet;

use porfiry_protocol::club::CLUB_MAX_HOPS;
use porfiry_protocol::{
    Audience, Body, ItemId, ItemRecord, LlmLimits, NodeKey, PayloadDraft, Retraction, VerifiedItem,
    sign,
};
use porfiry_skills::cognition::strategy::Mechanism;
use porfiry_storage::{
    LlmEntry, Note, NoteSource, Publishable, Rating, Sharing, StagnationStrategy, Store, Stored,
    ThinkingMethod,
};

use super::error::SharingError;
use super::item_rows::stored_record;
use super::limits::{
    DEFAULT_KNOWHOW_MAX_HOPS, DEFAULT_NOTE_MAX_HOPS, DIRECT_MESSAGE_MAX_HOPS, PUBLISH_SCAN_LIMIT,
};
use super::note_text;

mod knowhow_audience;

pub use knowhow_audience::{
    KnowhowAudienceError, parse_knowhow_audience, set_knowhow_audience, stored_knowhow_audience,
};

/// Who receives shared strategies, thinking methods and ratings when the
/// node setting [`KNOWHOW_AUDIENCE_KEY`] is unset: know-how helps anyone,
/// so by default it travels like a public note.
pub const KNOWHOW_AUDIENCE: Audience = Audience::Public;

/// Who receives them while that setting holds a value that is no audience
/// (a typo such as `freinds`): a person who wrote one meant to narrow the
/// default, so the narrowest audience that still shares is used, never
/// the wider default.
pub const KNOWHOW_AUDIENCE_WHEN_BAD: Audience = Audience::Friends;

/// The `config` key naming who receives this node's know-how: `public`
/// (the default, [`KNOWHOW_AUDIENCE`]), `friends`, `group:NAME` or
/// `club:NAME@FOUNDER` (see [`parse_knowhow_audience`]).
pub const KNOWHOW_AUDIENCE_KEY: &str = "sharing.knowhow_audience";

/// Who receives a shared LLM address: friends only (one hop). Offloading
/// work onto someone's model is a favour between friends, not something to
/// advertise to friends of friends.
pub const LLM_ADDRESS_AUDIENCE: Audience = Audience::Friends;

/// Hops of a shared LLM address: one, the only distance a friends-only
/// item travels.
pub const LLM_ADDRESS_MAX_HOPS: u8 = 1;

/// A note written by `post_note`.
#[derive(Debug, Clone)]
pub struct Posted {
    /// The note's row id.
    pub id: i64,
    /// The signed item, unless the note is private.
    pub item: Option<VerifiedItem>,
}

/// Writes a note: parses its mentions (a friend's name becomes its peer
/// id) and hashtags, and unless it is
/// private signs a Note item (`DEFAULT_NOTE_MAX_HOPS`; a direct message
/// `DIRECT_MESSAGE_MAX_HOPS`) and stores it with `received_from = NULL`, all
/// in one transaction. An item that would break a limit, or a direct message
/// to someone who is not a friend, is refused before anything is written.
pub fn post_note(
    store: &Store,
    key: &NodeKey,
    text: &str,
    sharing: Sharing,
    source: NoteSource,
    now_ms: u64,
) -> Result<Posted, SharingError> {
    post_reply(store, key, text, sharing, source, None, now_ms)
}

/// [`post_note`] for a note that answers the note published (or merged) as
/// `reply_to`: the row and the signed Note body both carry it, so a friend's
/// node shows what it answers. `None` is a plain note. Whether this node
/// holds the answered note is the caller's check (a reply to a note that
/// never arrived here is still a valid item).
pub fn post_reply(
    store: &Store,
    key: &NodeKey,
    text: &str,
    sharing: Sharing,
    source: NoteSource,
    reply_to: Option<ItemId>,
    now_ms: u64,
) -> Result<Posted, SharingError> {
    let parsed = note_text::parse(text);
    let mentions = if parsed.mentions.is_empty() {
        parsed.mentions
    } else {
        let named: Vec<(String, String)> = store
            .friends()?
            .into_iter()
            .filter(|f| !f.row.name.is_empty())
            .map(|f| (f.row.name, f.row.peer_id))
            .collect();
        note_text::resolve_mentions(parsed.mentions, &named)
    };
    let row = Note {
        text: text.to_owned(),
        mentions,
        hashtags: parsed.hashtags,
        source,
        audience: sharing,
        reply_to,
        ..Default::default()
    };
    let item = match &row.audience {
        Sharing::Private => None,
        Sharing::Shared(audience) => Some(sign(key, &note_draft(&row, audience, now_ms))?),
    };
    // Checked before the write; a friend removed in between only means the
    // message waits unsent, as any item for a friend who is gone.
    if let Sharing::Shared(Audience::Peer(to)) = &row.audience
        && store.find_friend(to)?.is_none()
    {
        return Err(SharingError::NotAFriend(to.clone()));
    }
    if let Sharing::Shared(Audience::Club(club)) = &row.audience {
        super::clubs::check_member(store, club, &key.peer_id().to_string())?;
    }
    let id = store.transaction(|s| {
        let id = s.add(&row, now_ms)?;
        if let Some(item) = &item {
            s.insert_items(&[stored_record(item, item.max_hops(), None)])?;
            s.mark_published::<Note>(id, &item.id(), now_ms)?;
        }
        Ok(id)
    })?;
    Ok(Posted { id, item })
}

/// Withdraws one of our own items everywhere: signs a `Retraction` with the
/// target's audience and hop limit (so it reaches everyone the target could)
/// and stores it, which deletes and tombstones the target, and deletes the
/// local note row that was published as it — all in one transaction. A
/// running daemon publishes the retraction like any other new own item.
pub fn retract_item(
    store: &Store,
    key: &NodeKey,
    target: &ItemRecord,
    now_ms: u64,
) -> Result<VerifiedItem, SharingError> {
    let draft = PayloadDraft {
        created_ms: now_ms,
        audience: target.audience.clone(),
        max_hops: target.max_hops,
        expires_ms: None,
        replaces: None,
        body: Body::Retraction(Retraction { target: target.id }),
    };
    let item = sign(key, &draft)?;
    store.transaction(|s| {
        if let Some(row) = s.find_by_item::<Note>(&target.id)? {
            s.delete::<Note>(row.id)?;
        }
        s.insert_items(&[stored_record(&item, item.max_hops(), None)])?;
        Ok(())
    })?;
    Ok(item)
}

/// Signs every local row waiting to be published and records each item
/// with its row in one transaction; returns the new items (for
/// `Input::Publish`). A row that cannot become an item (a rating of
/// something that is not an item, a limit broken) is logged once and
/// remembered in `skipped` so later passes do not retry it. Know-how goes
/// to the audience the node setting [`KNOWHOW_AUDIENCE_KEY`] names, read
/// on every pass; a bad value is logged once (also remembered in
/// `skipped`) and [`KNOWHOW_AUDIENCE_WHEN_BAD`] used instead.
pub fn publish_pending(
    store: &Store,
    key: &NodeKey,
    now_ms: u64,
    skipped: &mut HashSet<(&'static str, i64)>,
) -> Result<Vec<VerifiedItem>, SharingError> {
    let mut out = Vec::new();
    pending::<Note>(store, key, now_ms, skipped, &mut out, |n| {
        match &n.row.audience {
            Sharing::Shared(a) => Ok(note_draft(&n.row, a, n.created_ms)),
            Sharing::Private => Err("private notes are never published".into()),
        }
    })?;
    let audience = knowhow_audience::pass_audience(store, skipped);
    pending::<StagnationStrategy>(store, key, now_ms, skipped, &mut out, |s| {
        strategy_draft(s, &audience)
    })?;
    pending::<ThinkingMethod>(store, key, now_ms, skipped, &mut out, |m| {
        method_draft(m, &audience)
    })?;
    pending::<Rating>(store, key, now_ms, skipped, &mut out, |r| {
        rating_draft(r, &audience)
    })?;
    pending::<LlmEntry>(store, key, now_ms, skipped, &mut out, llm_draft)?;
    Ok(out)
}

/// One table's pass of [`publish_pending`].
fn pending<T: Publishable>(
    store: &Store,
    key: &NodeKey,
    now_ms: u64,
    skipped: &mut HashSet<(&'static str, i64)>,
    out: &mut Vec<VerifiedItem>,
    draft_of: impl Fn(&Stored<T>) -> Result<PayloadDraft, String>,
) -> Result<(), SharingError> {
    for row in store.to_publish::<T>(Some(PUBLISH_SCAN_LIMIT))? {
        if skipped.contains(&(T::TABLE, row.id)) {
            continue;
        }
        let item = draft_of(&row).and_then(|d| sign(key, &d).map_err(|e| e.to_string()));
        let item = match item {
            Ok(item) => item,
            Err(reason) => {
                tracing::warn!(table = T::TABLE, id = row.id, %reason, "row marked for sharing cannot be published");
                skipped.insert((T::TABLE, row.id));
                continue;
            }
        };
        let stored = store.transaction(|s| {
            s.insert_items(&[stored_record(&item, item.max_hops(), None)])?;
            s.mark_published::<T>(row.id, &item.id(), now_ms)
        });
        match stored {
            Ok(()) => {
                tracing::info!(table = T::TABLE, id = row.id, item = %item.id(), "published");
                out.push(item);
            }
            // Changed or deleted by another process meanwhile: the next
            // pass sees it as it is now.
            Err(e) => {
                tracing::warn!(table = T::TABLE, id = row.id, error = %e, "not published this time")
            }
        }
    }
    Ok(())
}

/// The draft of a note published to `audience`.
pub fn note_draft(n: &Note, audience: &Audience, created_ms: u64) -> PayloadDraft {
    PayloadDraft {
        created_ms,
        audience: audience.clone(),
        max_hops: match audience {
            Audience::Peer(_) => DIRECT_MESSAGE_MAX_HOPS,
            Audience::Club(_) => CLUB_MAX_HOPS,
            Audience::Devices => porfiry_protocol::devices::DEVICES_MAX_HOPS,
            _ => DEFAULT_NOTE_MAX_HOPS,
        },
        expires_ms: None,
        replaces: None,
        body: Body::Note(porfiry_protocol::Note {
            text: n.text.clone(),
            topic: n.topic.clone(),
            mentions: n.mentions.clone(),
            hashtags: n.hashtags.clone(),
            priority: u8::try_from(n.priority.max(0)).unwrap_or(u8::MAX),
            source: n.source.as_str().to_owned(),
            reply_to: n.reply_to,
        }),
    }
}

/// The draft of a know-how item for `audience`: a club item may travel as
/// far as club items do; any other goes `DEFAULT_KNOWHOW_MAX_HOPS` (a
/// `friends` or `group:` item stops after one hop, as routing says).
fn knowhow(created_ms: u64, audience: &Audience, body: Body) -> PayloadDraft {
    PayloadDraft {
        created_ms,
        audience: audience.clone(),
        max_hops: match audience {
            Audience::Club(_) => CLUB_MAX_HOPS,
            _ => DEFAULT_KNOWHOW_MAX_HOPS,
        },
        expires_ms: None,
        replaces: None,
        body,
    }
}

fn strategy_draft(
    s: &Stored<StagnationStrategy>,
    audience: &Audience,
) -> Result<PayloadDraft, String> {
    let r = &s.row;
    Ok(knowhow(
        s.created_ms,
        audience,
        Body::StagnationStrategy(porfiry_protocol::StagnationStrategy {
            name: r.name.clone(),
            class: r.class.clone(),
            description: r.description.clone(),
            steps: r.steps.clone(),
            // The cost is relative ("cheap first"); the item scale is 0..=255.
            cost: u8::try_from(r.cost.clamp(0, 255)).unwrap_or(u8::MAX),
            // The row's `mechanism:` tag travels, so a friend's core can
            // apply what it receives.
            mechanism: Mechanism::from_tags(&r.tags).map(|m| m.as_str().to_owned()),
        }),
    ))
}

fn method_draft(m: &Stored<ThinkingMethod>, audience: &Audience) -> Result<PayloadDraft, String> {
    let r = &m.row;
    Ok(knowhow(
        m.created_ms,
        audience,
        Body::ThinkingMethod(porfiry_protocol::ThinkingMethod {
            name: r.name.clone(),
            description: r.description.clone(),
            steps: r.steps.clone(),
        }),
    ))
}

fn rating_draft(x: &Stored<Rating>, audience: &Audience) -> Result<PayloadDraft, String> {
    let r = &x.row;
    let target: ItemId = r.target.parse().map_err(|_| {
        format!(
            "rating target {:?} is not an item id; only ratings of items travel",
            r.target
        )
    })?;
    let score = i8::try_from(r.score)
        .map_err(|_| format!("rating score {} is outside the item scale", r.score))?;
    Ok(knowhow(
        x.created_ms,
        audience,
        Body::Rating(porfiry_protocol::Rating {
            target,
            score,
            comment: r.comment.clone(),
        }),
    ))
}

pub(crate) fn llm_draft(x: &Stored<LlmEntry>) -> Result<PayloadDraft, String> {
    let r = &x.row;
    let limit = |k: &str| {
        r.config
            .other
            .get(k)
            .and_then(serde_json::Value::as_u64)
            .and_then(|v| u32::try_from(v).ok())
    };
    Ok(PayloadDraft {
        created_ms: x.created_ms,
        audience: LLM_ADDRESS_AUDIENCE,
        max_hops: LLM_ADDRESS_MAX_HOPS,
        expires_ms: None,
        replaces: None,
        // Deliberately built field by field: `config` (api_key_env and any
        // other local setting) has no place in an LlmAddress.
        body: Body::LlmAddress(porfiry_protocol::LlmAddress {
            name: r.name.clone(),
            endpoint: r.endpoint.clone(),
            model: r.model.clone(),
            features: r.features.clone(),
            limits: LlmLimits {
                context_tokens: limit("context_tokens"),
                max_output_tokens: r.config.max_tokens,
                requests_per_minute: limit("requests_per_minute"),
            },
        }),
    })
}

#[cfg(test)]
mod tests;
