//! Items from friends becoming local rows: a received note joins `notes`
//! (and a strategy, method, rating or LLM address its table) stamped with
//! its origin — author peer id and item id — so the notebook shows who
//! wrote it, merging the same item twice keeps one row, and a retraction
//! can find and remove it. Local fields (tags, read, hidden, llm_id) start
//! empty: they are this node's own.

use porfiry_protocol::{Body, ItemId, VerifiedItem};
use porfiry_storage::{
    LlmConfig, LlmEntry, Note, NoteSource, Rating, Sharing, StagnationStrategy, StorageError,
    Store, ThinkingMethod,
};

/// Adds the local row of a friend's `item` (nothing for a retraction, whose
/// effect is the deletion of its target). Returns the new or existing row
/// id, `None` for a kind without a row.
pub fn merge_item(store: &Store, item: &VerifiedItem) -> Result<Option<i64>, StorageError> {
    let author = Some(item.author_peer_id().to_owned());
    let origin = Some(item.id());
    let created = item.created_ms();
    let merged = match item.body() {
        Body::Note(n) => store.merge_from_item(
            &Note {
                text: n.text.clone(),
                topic: n.topic.clone(),
                mentions: n.mentions.clone(),
                hashtags: n.hashtags.clone(),
                source: note_source(&n.source),
                priority: i64::from(n.priority),
                reply_to: n.reply_to,
                audience: Sharing::Shared(item.audience().clone()),
                origin_author: author,
                origin_item_id: origin,
                ..Default::default()
            },
            created,
        )?,
        Body::StagnationStrategy(s) => store.merge_from_item(
            &StagnationStrategy {
                name: s.name.clone(),
                class: s.class.clone(),
                description: s.description.clone(),
                steps: s.steps.clone(),
                cost: i64::from(s.cost),
                origin_author: author,
                origin_item_id: origin,
                ..Default::default()
            },
            created,
        )?,
        Body::ThinkingMethod(m) => store.merge_from_item(
            &ThinkingMethod {
                name: m.name.clone(),
                description: m.description.clone(),
                steps: m.steps.clone(),
                origin_author: author,
                origin_item_id: origin,
                ..Default::default()
            },
            created,
        )?,
        Body::Rating(r) => store.merge_from_item(
            &Rating {
                target: r.target.to_string(),
                score: i64::from(r.score),
                comment: r.comment.clone(),
                origin_author: author,
                origin_item_id: origin,
                ..Default::default()
            },
            created,
        )?,
        Body::LlmAddress(a) => {
            let mut config = LlmConfig {
                max_tokens: a.limits.max_output_tokens,
                ..Default::default()
            };
            for (k, v) in [
                ("context_tokens", a.limits.context_tokens),
                ("requests_per_minute", a.limits.requests_per_minute),
            ] {
                if let Some(v) = v {
                    config.other.insert(k.to_owned(), v.into());
                }
            }
            store.merge_from_item(
                &LlmEntry {
                    // Names are unique per node; a friend's "home" must not
                    // collide with ours.
                    name: format!("{}@{}", a.name, item.author_peer_id()),
                    endpoint: a.endpoint.clone(),
                    model: a.model.clone(),
                    features: a.features.clone(),
                    config,
                    origin_author: author,
                    origin_item_id: origin,
                    ..Default::default()
                },
                created,
            )?
        }
        Body::Retraction(_) => return Ok(None),
    };
    Ok(Some(merged.id()))
}

/// Deletes whatever row was merged from item `id` (its author withdrew it),
/// whichever table holds it; returns whether one was.
pub fn forget_merged(store: &Store, id: &ItemId) -> Result<bool, StorageError> {
    Ok(store.delete_merged::<Note>(id)?
        | store.delete_merged::<StagnationStrategy>(id)?
        | store.delete_merged::<ThinkingMethod>(id)?
        | store.delete_merged::<Rating>(id)?
        | store.delete_merged::<LlmEntry>(id)?)
}

/// A note's source label as the local column spells it; a label this node
/// does not know (the protocol allows free labels) counts as `user`.
fn note_source(label: &str) -> NoteSource {
    label.parse().unwrap_or_default()
}

#[cfg(test)]
mod tests;
