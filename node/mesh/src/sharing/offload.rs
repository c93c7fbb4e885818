//! The offload advertisement: a node that offers its model to friends keeps
//! one own `llm_registry` row named [`OFFLOAD_LLM_NAME`] (endpoint = its own
//! peer id, never the upstream URL or a key) published as an `LlmAddress`
//! item to friends. [`advertise_offload`] replaces it when what is offered
//! changes and retracts it when offload is off; [`offload_candidates`]
//! reads the friends' advertisements merged into `llm_registry`.

use porfiry_protocol::{Body, NodeKey, PayloadDraft, Retraction, VerifiedItem, sign};
use porfiry_storage::{ListQuery, LlmConfig, LlmEntry, Store};

use super::error::SharingError;
use super::item_rows::stored_record;
use super::publish::{LLM_ADDRESS_AUDIENCE, LLM_ADDRESS_MAX_HOPS, llm_draft};

/// The name of this node's own offload row (and item). Merged rows are
/// named `<name>@<peer>`, so a friend's never collides with it.
pub const OFFLOAD_LLM_NAME: &str = "offload";

/// The feature every offload advertisement carries, so a reader tells a
/// model offered over `/porfiry/offload/1` from a shared URL.
pub const OFFLOAD_FEATURE: &str = "offload";

/// Prefix of the feature that carries the advertised concurrency
/// (`concurrency=N`): the `LlmAddress` limits have no such field and the
/// protocol's body refuses unknown fields, so it travels as a feature.
pub const CONCURRENCY_FEATURE_PREFIX: &str = "concurrency=";

/// The config key (in `LlmConfig::other`) of the advertised context size,
/// as `publish` and `merge` already map it to `LlmLimits::context_tokens`.
const CONTEXT_KEY: &str = "context_tokens";

/// What this node offers to its friends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfferedModel {
    /// The model name as the upstream knows it.
    pub model: String,
    /// Extra features (`tools`, `vision`, …); `offload` and the concurrency
    /// are added.
    pub features: Vec<String>,
    /// Context size in tokens, when known.
    pub context_tokens: Option<u32>,
    /// How many requests it serves at once (the global capacity).
    pub concurrency: u32,
}

impl OfferedModel {
    fn row(&self, own_peer_id: &str) -> LlmEntry {
        let mut features = vec![OFFLOAD_FEATURE.to_owned()];
        features.extend(
            self.features
                .iter()
                .filter(|f| *f != OFFLOAD_FEATURE && !f.starts_with(CONCURRENCY_FEATURE_PREFIX))
                .cloned(),
        );
        features.push(format!("{CONCURRENCY_FEATURE_PREFIX}{}", self.concurrency));
        let mut config = LlmConfig::default();
        if let Some(c) = self.context_tokens {
            config.other.insert(CONTEXT_KEY.to_owned(), c.into());
        }
        LlmEntry {
            name: OFFLOAD_LLM_NAME.to_owned(),
            endpoint: own_peer_id.to_owned(),
            model: self.model.clone(),
            description: "offered to friends over /porfiry/offload/1".to_owned(),
            features,
            config,
            shareable: true,
            ..Default::default()
        }
    }
}

/// Makes the published advertisement match `offer`: nothing when it
/// already does; otherwise retracts the old item (if any), and when
/// `offer` is `Some` writes and signs the new one — in one transaction.
/// Returns the new items (retraction and/or advertisement) for the loop
/// to send.
pub fn advertise_offload(
    store: &Store,
    key: &NodeKey,
    offer: Option<&OfferedModel>,
    now_ms: u64,
) -> Result<Vec<VerifiedItem>, SharingError> {
    let own = key.peer_id().to_string();
    let wanted = offer.map(|o| o.row(&own));
    let existing = store
        .llm_by_name(OFFLOAD_LLM_NAME)?
        .filter(|r| r.row.origin_item_id.is_none());
    if let (Some(have), Some(want)) = (&existing, &wanted) {
        let same = have.row.endpoint == want.endpoint
            && have.row.model == want.model
            && have.row.features == want.features
            && have.row.config.other == want.config.other
            && have.row.item_id.is_some();
        if same {
            return Ok(Vec::new());
        }
    }
    if existing.is_none() && wanted.is_none() {
        return Ok(Vec::new());
    }
    let retraction = match existing.as_ref().and_then(|r| r.row.item_id) {
        Some(target) => Some(sign(
            key,
            &PayloadDraft {
                created_ms: now_ms,
                audience: LLM_ADDRESS_AUDIENCE,
                max_hops: LLM_ADDRESS_MAX_HOPS,
                expires_ms: None,
                replaces: None,
                body: Body::Retraction(Retraction { target }),
            },
        )?),
        None => None,
    };
    let advert = match &wanted {
        Some(row) => {
            let stored = porfiry_storage::Stored {
                id: 0,
                created_ms: now_ms,
                updated_ms: now_ms,
                row: row.clone(),
            };
            let draft = llm_draft(&stored).map_err(SharingError::Draft)?;
            Some(sign(key, &draft)?)
        }
        None => None,
    };
    store.transaction(|s| {
        if let Some(r) = &existing {
            s.delete::<LlmEntry>(r.id)?;
        }
        if let Some(item) = &retraction {
            s.insert_items(&[stored_record(item, item.max_hops(), None)])?;
        }
        if let (Some(row), Some(item)) = (&wanted, &advert) {
            let id = s.add(row, now_ms)?;
            s.insert_items(&[stored_record(item, item.max_hops(), None)])?;
            s.mark_published::<LlmEntry>(id, &item.id(), now_ms)?;
        }
        Ok(())
    })?;
    let out: Vec<VerifiedItem> = retraction.into_iter().chain(advert).collect();
    Ok(out)
}

/// A friend's model this node may offload to.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Candidate {
    /// The friend offering it (`12D3KooW…`).
    pub peer: String,
    /// The model name.
    pub model: String,
    /// Its context size, when advertised.
    pub context: Option<u32>,
    /// How many requests it serves at once (1 when not advertised).
    pub concurrency: u32,
    /// Its features as advertised (without `offload` and `concurrency=`).
    pub features: Vec<String>,
}

/// Every offload advertisement merged from friends (rows whose endpoint is
/// the author's own peer id and that carry the `offload` feature), by peer
/// then model.
pub fn offload_candidates(store: &Store) -> Result<Vec<Candidate>, SharingError> {
    let rows = store.list::<LlmEntry>(&ListQuery {
        limit: Some(porfiry_storage::limits::MAX_LIST_LIMIT),
        ..ListQuery::default()
    })?;
    let mut out: Vec<Candidate> = rows
        .into_iter()
        .filter_map(|r| {
            let r = r.row;
            let author = r.origin_author.as_deref()?;
            if r.endpoint != author || !r.features.iter().any(|f| f == OFFLOAD_FEATURE) {
                return None;
            }
            let concurrency = r
                .features
                .iter()
                .find_map(|f| f.strip_prefix(CONCURRENCY_FEATURE_PREFIX))
                .and_then(|n| n.parse().ok())
                .unwrap_or(1);
            let context = r
                .config
                .other
                .get(CONTEXT_KEY)
                .and_then(serde_json::Value::as_u64)
                .and_then(|v| u32::try_from(v).ok());
            Some(Candidate {
                peer: r.endpoint.clone(),
                model: r.model,
                context,
                concurrency,
                features: r
                    .features
                    .into_iter()
                    .filter(|f| f != OFFLOAD_FEATURE && !f.starts_with(CONCURRENCY_FEATURE_PREFIX))
                    .collect(),
            })
        })
        .collect();
    out.sort_by(|a, b| (&a.peer, &a.model).cmp(&(&b.peer, &b.model)));
    Ok(out)
}

#[cfg(test)]
mod tests;
