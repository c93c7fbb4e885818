//! Items from friends becoming local rows: a received note joins `notes`
//! (and a strategy, method, rating or LLM address its table) stamped with
//! its origin — author peer id and item id — so the notebook shows who
//! wrote it, merging the same item twice keeps one row, and a retraction
//! can find and remove it. Local fields (tags, read, hidden, llm_id) start
//! empty: they are this node's own.

use porfiry_protocol::{Body, ItemId, VerifiedItem};
use porfiry_skills::cognition::strategy::Mechanism;
use porfiry_storage::{
    LlmConfig, LlmEntry, Note, NoteSource, Publishable, Rating, Sharing, StagnationStrategy,
    StorageError, Store, ThinkingMethod,
};

/// The local row a friend's item becomes, before it is written.
enum Row {
    Note(Note),
    Strategy(StagnationStrategy),
    Method(ThinkingMethod),
    Rating(Rating),
    Llm(LlmEntry),
}

/// Adds the local row of a friend's `item` (nothing for a retraction, whose
/// effect is the deletion of its target). Returns the new or existing row
/// id, `None` for a kind without a row.
#[cfg(test)]
pub fn merge_item(store: &Store, item: &VerifiedItem) -> Result<Option<i64>, StorageError> {
    let mut out = merge_items(store, std::slice::from_ref(item))?;
    out.pop().unwrap_or(Ok(None))
}

/// Merges many items in one transaction, one batched write per table.
/// Answers each item in input order: its row id (`None` for a retraction),
/// or the error that refused its row alone. A failure of the file itself
/// rolls everything back and is returned.
pub fn merge_items(
    store: &Store,
    items: &[VerifiedItem],
) -> Result<Vec<Result<Option<i64>, StorageError>>, StorageError> {
    let mut out: Vec<Result<Option<i64>, StorageError>> =
        (0..items.len()).map(|_| Ok(None)).collect();
    let mut notes = Batch::default();
    let mut strategies = Batch::default();
    let mut methods = Batch::default();
    let mut ratings = Batch::default();
    let mut llms = Batch::default();
    for (i, item) in items.iter().enumerate() {
        let created = item.created_ms();
        match local_row(item) {
            Some(Row::Note(r)) => notes.push(i, r, created),
            Some(Row::Strategy(r)) => strategies.push(i, r, created),
            Some(Row::Method(r)) => methods.push(i, r, created),
            Some(Row::Rating(r)) => ratings.push(i, r, created),
            Some(Row::Llm(r)) => llms.push(i, r, created),
            None => {}
        }
    }
    store.transaction(|s| {
        notes.write(s, &mut out)?;
        strategies.write(s, &mut out)?;
        methods.write(s, &mut out)?;
        ratings.write(s, &mut out)?;
        llms.write(s, &mut out)
    })?;
    Ok(out)
}

/// Rows of one table waiting to be merged, with their items' positions.
struct Batch<T> {
    at: Vec<usize>,
    rows: Vec<(T, u64)>,
}

impl<T> Default for Batch<T> {
    fn default() -> Self {
        Batch {
            at: Vec::new(),
            rows: Vec::new(),
        }
    }
}

impl<T: Publishable> Batch<T> {
    fn push(&mut self, at: usize, row: T, created_ms: u64) {
        self.at.push(at);
        self.rows.push((row, created_ms));
    }

    fn write(
        &self,
        store: &Store,
        out: &mut [Result<Option<i64>, StorageError>],
    ) -> Result<(), StorageError> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let merged = store.merge_from_items(&self.rows)?;
        for (&i, m) in self.at.iter().zip(merged) {
            out[i] = m.map(|m| Some(m.id()));
        }
        Ok(())
    }
}

/// The row `item` becomes here; `None` for a retraction or a club change.
fn local_row(item: &VerifiedItem) -> Option<Row> {
    let author = Some(item.author_peer_id().to_owned());
    let origin = Some(item.id());
    let row = match item.body() {
        Body::Note(n) => Row::Note(Note {
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
        }),
        Body::StagnationStrategy(s) => Row::Strategy(StagnationStrategy {
            name: s.name.clone(),
            class: s.class.clone(),
            description: s.description.clone(),
            steps: s.steps.clone(),
            cost: i64::from(s.cost),
            // A mechanism this build knows becomes the row's tag, which the
            // core's strategy choice reads; an unknown one is left out.
            tags: s
                .mechanism
                .as_deref()
                .and_then(Mechanism::parse)
                .map(|m| vec![m.tag()])
                .unwrap_or_default(),
            origin_author: author,
            origin_item_id: origin,
            ..Default::default()
        }),
        Body::ThinkingMethod(m) => Row::Method(ThinkingMethod {
            name: m.name.clone(),
            description: m.description.clone(),
            steps: m.steps.clone(),
            origin_author: author,
            origin_item_id: origin,
            ..Default::default()
        }),
        Body::Rating(r) => Row::Rating(Rating {
            target: r.target.to_string(),
            score: i64::from(r.score),
            comment: r.comment.clone(),
            origin_author: author,
            origin_item_id: origin,
            ..Default::default()
        }),
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
            Row::Llm(LlmEntry {
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
            })
        }
        // Club changes live in `club_changes` (storage keeps them); a
        // friend's addresses stay in `items`, where the friend set reads them.
        // Mind records are merged by their own rule (`porfiry_protocol::mind`);
        // device statements live in `device_links` (storage keeps them).
        Body::Retraction(_)
        | Body::ClubChange(_)
        | Body::ReachableAt(_)
        | Body::MindRecord(_)
        | Body::DeviceLink(_) => {
            return None;
        }
    };
    Some(row)
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
