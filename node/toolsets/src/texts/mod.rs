//! Every text the model sees from the node's toolsets — catalogue lines,
//! tool descriptions and replies — in English and Russian, chosen by
//! [`Language`]: [`media`] for the `media` set, [`store`] and
//! [`store_replies`] for the record sets over SQLite. Keep them short: a
//! small model reads the descriptions on every request while a set is active.
//!
//! Tool names and argument names stay English in both languages: they are
//! identifiers, not prose.

pub mod media;
pub mod store;
pub mod store_replies;

use porfiry_skills::Language;

pub use media::*;

/// Picks the English or the Russian variant: the one helper every node
/// toolset's texts (here, `acting::texts`, `messages::texts`) share.
pub(crate) fn pick(lang: Language, en: &'static str, ru: &'static str) -> &'static str {
    match lang {
        Language::En => en,
        Language::Ru => ru,
    }
}
