//! The node setting [`KNOWHOW_AUDIENCE_KEY`]: who receives the know-how
//! (stagnation strategies, thinking methods, ratings) this node's
//! publishing pass signs. `public` (the default), `friends`, `group:NAME`
//! or `club:NAME@FOUNDER`, stored as a JSON text; a direct message
//! (`peer:`) or the person's own devices (`devices`) is no audience for
//! know-how. A bad stored value is logged once and `friends`
//! ([`KNOWHOW_AUDIENCE_WHEN_BAD`]) used, so a typo never stops publishing
//! nor widens who gets it.
//!
//! A club this node is not a member of is not refused here: routing sends
//! a club item only while its author is a member, so such know-how stays
//! home, as the person asked it to go nowhere else.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

use porfiry_protocol::Audience;
use porfiry_protocol::item::audience::AudienceError;
use porfiry_storage::{StorageError, Store};

use super::{KNOWHOW_AUDIENCE, KNOWHOW_AUDIENCE_KEY, KNOWHOW_AUDIENCE_WHEN_BAD};

/// Why a value cannot be the know-how audience.
#[derive(Debug, thiserror::Error)]
pub enum KnowhowAudienceError {
    /// Not an audience at all.
    #[error("{KNOWHOW_AUDIENCE_KEY}: {0}")]
    Audience(#[from] AudienceError),
    /// An audience, but not one know-how may go to.
    #[error(
        "{KNOWHOW_AUDIENCE_KEY}: {0} is no audience for know-how: expected public, friends, group:NAME or club:NAME@FOUNDER"
    )]
    NotForKnowhow(String),
    /// A stored JSON value that is not a text.
    #[error("{KNOWHOW_AUDIENCE_KEY}: expected a text such as \"friends\", found {0}")]
    NotText(String),
    /// The setting could not be read or written.
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// Reads a know-how audience as the setting writes it (`public`,
/// `friends`, `group:NAME`, `club:NAME@FOUNDER`).
pub fn parse_knowhow_audience(text: &str) -> Result<Audience, KnowhowAudienceError> {
    match text.parse::<Audience>()? {
        a @ (Audience::Public | Audience::Friends | Audience::Group(_) | Audience::Club(_)) => {
            Ok(a)
        }
        Audience::Peer(_) | Audience::Devices => {
            Err(KnowhowAudienceError::NotForKnowhow(text.to_owned()))
        }
    }
}

/// The know-how audience stored in `store`; `None` when the setting is
/// unset (the default, [`KNOWHOW_AUDIENCE`], applies).
pub fn stored_knowhow_audience(store: &Store) -> Result<Option<Audience>, KnowhowAudienceError> {
    match store.config_value(KNOWHOW_AUDIENCE_KEY)? {
        None => Ok(None),
        Some(serde_json::Value::String(text)) => parse_knowhow_audience(&text).map(Some),
        Some(other) => Err(KnowhowAudienceError::NotText(other.to_string())),
    }
}

/// Stores `audience` as the node's know-how audience; one know-how may not
/// go to is refused before anything is written.
pub fn set_knowhow_audience(
    store: &Store,
    audience: &Audience,
    now_ms: u64,
) -> Result<(), KnowhowAudienceError> {
    let text = audience.to_string();
    parse_knowhow_audience(&text)?;
    store.config_set(KNOWHOW_AUDIENCE_KEY, &text, now_ms)?;
    Ok(())
}

/// The know-how audience of one publishing pass: the setting, the default
/// when it is unset, or [`KNOWHOW_AUDIENCE_WHEN_BAD`]. A bad value is warned about once: its
/// mark (this key and a hash of the error) stays in `skipped` while the
/// value stays, at most one such mark at a time, and a good value clears it.
pub(super) fn pass_audience(store: &Store, skipped: &mut HashSet<(&'static str, i64)>) -> Audience {
    match stored_knowhow_audience(store) {
        Ok(audience) => {
            skipped.retain(|(table, _)| *table != KNOWHOW_AUDIENCE_KEY);
            audience.unwrap_or(KNOWHOW_AUDIENCE)
        }
        Err(e) => {
            let text = e.to_string();
            let mark = (KNOWHOW_AUDIENCE_KEY, fingerprint(&text));
            if !skipped.contains(&mark) {
                skipped.retain(|(table, _)| *table != KNOWHOW_AUDIENCE_KEY);
                tracing::warn!(error = %text, fallback = %KNOWHOW_AUDIENCE_WHEN_BAD, "bad know-how audience setting; know-how goes to friends only");
                skipped.insert(mark);
            }
            KNOWHOW_AUDIENCE_WHEN_BAD
        }
    }
}

/// A hash of `text`, the same within one process (all `skipped` needs).
fn fingerprint(text: &str) -> i64 {
    let mut h = DefaultHasher::new();
    text.hash(&mut h);
    i64::from_ne_bytes(h.finish().to_ne_bytes())
}

#[cfg(test)]
mod tests;
