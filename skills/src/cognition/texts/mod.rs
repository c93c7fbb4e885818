//! Every text the cognitive core shows a model — the core system prompt of
//! context 0 and its command instructions, the context headings, the
//! reflexes' short prompts, the validators' question — in English and
//! Russian, chosen by [`Language`](crate::Language). Kept together here so a
//! translator reads one folder.

pub mod prompt;

/// Picks the English or the Russian variant.
#[allow(dead_code)]
pub(crate) fn pick(lang: crate::Language, en: &'static str, ru: &'static str) -> &'static str {
    match lang {
        crate::Language::En => en,
        crate::Language::Ru => ru,
    }
}

pub mod reflex;
pub mod seeds;
