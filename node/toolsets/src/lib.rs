//! The node's toolsets: what a session can switch on with `enable_toolset`
//! and what the cognitive core's commands run. The `media` set ([`media`])
//! over a catalogue file ([`media_catalog`]); the HMP command catalogue of
//! seed 003 over the node's storage: the record families ([`store`]), the
//! acting sets — processes, cycle settings, the model registry
//! ([`acting`]) — and direct messages ([`messages`]), all sharing
//! [`StoreTools`] and answering unknown tools alike ([`dispatch`]).
//! [`core_toolsets`] builds the registry chat and the core dispatch through.

pub mod acting;
pub(crate) mod deps;
pub(crate) mod dispatch;
pub mod media;
pub mod media_catalog;
pub(crate) mod messages;
pub mod models;
pub(crate) mod store;
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;
pub(crate) mod texts;

use porfiry_skills::{Language, RegistryError, ToolsetRegistry};

pub use acting::register_acting_sets;
pub use deps::StoreTools;
pub use media::{MediaEntry, MediaToolset};
pub use media_catalog::{CatalogError, CatalogSource, load_catalog, parse_catalog};
pub use messages::{MessagesToolset, register_messages};
pub use models::RowModels;
pub use store::register_store_sets;

/// Why the node's toolsets could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ToolsetError {
    /// The media catalogue is unusable.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// A toolset broke the registry's naming rules (a bug in this crate).
    #[error("toolset registry: {0}")]
    Registry(#[from] RegistryError),
}

/// What the node's toolsets are built from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolsetOptions {
    /// The language of tool descriptions and replies.
    pub language: Language,
    /// Where the `media` set's films come from.
    pub media_catalog: CatalogSource,
}

/// The sets the API's chat sessions may switch on: what a person asks their
/// agent for (films, notes and messages, the diary, goals and tasks). The
/// rest of the catalogue (processes, the model registry, cycle settings,
/// strategies, …) is the core's: listing all 24 sets would cost a small
/// chat model about 300 prompt tokens on every request.
pub const CHAT_SETS: &[&str] = &["media", "notes", "messages", "diary", "goals", "tasks"];

/// The registry the cognitive core and the node's API sessions share: the
/// media set and every command family of seed 003 over the node's storage.
pub fn core_toolsets(
    options: &ToolsetOptions,
    tools: &StoreTools,
    models: std::sync::Arc<dyn RowModels>,
) -> Result<ToolsetRegistry, ToolsetError> {
    let mut registry = node_toolsets(options)?;
    store::register_store_sets(&mut registry, tools)?;
    acting::register_acting_sets(&mut registry, tools, models)?;
    messages::register_messages(&mut registry, tools)?;
    Ok(registry)
}

/// The registry of the toolsets that need no database (`porfiry chat`).
pub fn node_toolsets(options: &ToolsetOptions) -> Result<ToolsetRegistry, ToolsetError> {
    let films = options.media_catalog.load()?;
    tracing::debug!(films = films.len(), "media catalogue loaded");
    let mut registry = ToolsetRegistry::new();
    registry.register(MediaToolset::new(films, options.language))?;
    Ok(registry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_offers_media_in_the_chosen_language() {
        for (language, summary) in [(Language::En, "films"), (Language::Ru, "фильмы")] {
            let options = ToolsetOptions {
                language,
                ..Default::default()
            };
            let registry = node_toolsets(&options).unwrap();
            assert_eq!(registry.names().collect::<Vec<_>>(), ["media"]);
            let media = registry.get("media").unwrap();
            assert!(media.summary().contains(summary), "{}", media.summary());
        }
    }

    #[test]
    fn a_bad_catalogue_stops_the_build_naming_the_file() {
        let options = ToolsetOptions {
            media_catalog: CatalogSource::File("/nonexistent/films.json".into()),
            ..Default::default()
        };
        let e = node_toolsets(&options).unwrap_err();
        assert!(matches!(e, ToolsetError::Catalog(_)));
        assert!(e.to_string().contains("/nonexistent/films.json"), "{e}");
    }
}
