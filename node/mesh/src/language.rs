//! The node's language: what `porfiry init --language` chose, kept in the
//! `config` table, so every text the node's models see — the API's agent,
//! the core, the toolsets' replies — speaks it without a flag on every
//! start. `porfiry run --language` overrides it for one run.

use porfiry_skills::Language;
use porfiry_storage::{Result, Store};

/// The `config` key holding the node's [`Language`] (`"en"` or `"ru"`).
pub const LANGUAGE_CONFIG_KEY: &str = "node.language";

/// The language stored in `store`; English when none is (a node made
/// before the key existed).
pub fn node_language(store: &Store) -> Result<Language> {
    Ok(store.config_get(LANGUAGE_CONFIG_KEY)?.unwrap_or_default())
}

/// Stores `language` as the node's.
pub fn set_node_language(store: &Store, language: Language, now_ms: u64) -> Result<()> {
    store.config_set(LANGUAGE_CONFIG_KEY, &language, now_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_without_the_key_speaks_english_and_a_set_one_sticks() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::create(tmp.path().join("n.sqlite")).unwrap();
        assert_eq!(node_language(&store).unwrap(), Language::En);
        set_node_language(&store, Language::Ru, 1).unwrap();
        assert_eq!(node_language(&store).unwrap(), Language::Ru);
        drop(store);
        let again = Store::create(tmp.path().join("n.sqlite")).unwrap();
        assert_eq!(node_language(&again).unwrap(), Language::Ru);
    }
}
