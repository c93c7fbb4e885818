//! Every text the model sees from the acting sets — catalogue lines, tool
//! descriptions, replies, and the result texts stored in `process_log` — in
//! English and Russian, chosen by [`Language`]. One file per set
//! ([`process`], [`cycle`], [`llm`]); the few shared ones are here. Tool,
//! argument and setting names stay English: they are identifiers.

use porfiry_skills::Language;

pub(crate) use crate::texts::pick;

pub mod cycle;
pub mod llm;
pub mod process;

pub use cycle::*;
pub use llm::*;
pub use process::*;

/// The database refused or is gone; nothing changed.
pub fn storage_failed(lang: Language, detail: &str) -> String {
    match lang {
        Language::En => format!("storage error, nothing changed: {detail}"),
        Language::Ru => format!("ошибка хранилища, ничего не изменено: {detail}"),
    }
}

/// A list shows fewer lines than there are.
pub fn and_more(lang: Language, more: usize) -> String {
    match lang {
        Language::En => format!("…and {more} more"),
        Language::Ru => format!("…и ещё {more}"),
    }
}

#[cfg(test)]
mod tests {
    use porfiry_skills::texts::check_translations;

    use super::*;

    fn every_text(lang: Language) -> Vec<(&'static str, String)> {
        vec![
            ("storage_failed", storage_failed(lang, "locked")),
            ("and_more", and_more(lang, 3)),
        ]
    }

    #[test]
    fn every_text_differs_between_languages() {
        assert_eq!(
            check_translations(
                &every_text(Language::En),
                &every_text(Language::Ru),
                include_str!("mod.rs"),
            ),
            Ok(())
        );
    }
}
