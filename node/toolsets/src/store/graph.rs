//! The concept graph as both its sets show and name it: a concept named by
//! id or name ([`concept_id`]) and a link as one line ([`link_line`]).

use porfiry_storage::{Concept, Link, StorageError, Store, Stored};

use super::records::tag_suffix;

/// The id of the concept named by `key`: a number is an id (which must
/// exist), anything else an exact name.
pub(crate) fn concept_id(store: &Store, key: &str) -> Result<i64, StorageError> {
    let key = key.trim().trim_start_matches('#');
    if let Ok(id) = key.parse::<i64>() {
        return Ok(store.get::<Concept>(id)?.id);
    }
    store
        .concept_by_name(key)?
        .map(|c| c.id)
        .ok_or_else(|| StorageError::NotFound {
            table: "concepts",
            key: format!("name {key}"),
        })
}

/// `#id from —relation→ to (w …)` with the concepts' names.
pub(crate) fn link_line(store: &Store, l: &Stored<Link>) -> Result<String, StorageError> {
    let name = |id: i64| -> Result<String, StorageError> {
        Ok(match store.get::<Concept>(id) {
            Ok(c) => format!("{}(#{id})", c.row.name),
            Err(StorageError::NotFound { .. }) => format!("#{id}"),
            Err(e) => return Err(e),
        })
    };
    Ok(format!(
        "#{} {} —{}→ {} (w {}){}",
        l.id,
        name(l.row.from_concept)?,
        l.row.relation,
        name(l.row.to_concept)?,
        l.row.weight,
        tag_suffix(&l.row.tags)
    ))
}
