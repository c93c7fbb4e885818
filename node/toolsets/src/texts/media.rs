//! The `media` set's texts: its catalogue line, tool descriptions and
//! replies, in English and Russian.

use porfiry_skills::Language;

use super::pick;

/// Catalogue line of the media toolset.
pub fn media_summary(lang: Language) -> &'static str {
    pick(
        lang,
        "films: search, details, play",
        "фильмы: поиск, детали, запуск",
    )
}

/// `media_search` description.
pub fn media_search_desc(lang: Language) -> &'static str {
    pick(
        lang,
        "find films by title or words",
        "найти фильмы по названию или словам",
    )
}

/// `media_info` description.
pub fn media_info_desc(lang: Language) -> &'static str {
    pick(lang, "film details by id", "детали фильма по id")
}

/// `media_play` description.
pub fn media_play_desc(lang: Language) -> &'static str {
    pick(lang, "start playing a film by id", "запустить фильм по id")
}

/// `media_control` description.
pub fn media_control_desc(lang: Language) -> &'static str {
    pick(
        lang,
        "pause, resume or stop playback",
        "пауза, продолжить или стоп",
    )
}

/// `media_control` told the player; `action` is pause, resume or stop.
pub fn media_controlled(lang: Language, action: &str) -> String {
    match lang {
        Language::En => format!("player told: {action}"),
        Language::Ru => format!("плееру передано: {action}"),
    }
}

/// `media_search` found nothing.
pub fn media_nothing_found(lang: Language, query: &str) -> String {
    match lang {
        Language::En => format!("nothing found for {query:?}"),
        Language::Ru => format!("по запросу {query:?} ничего не найдено"),
    }
}

/// `media_search` found more than it shows.
pub fn media_more(lang: Language, more: usize) -> String {
    match lang {
        Language::En => format!("…and {more} more; refine the query"),
        Language::Ru => format!("…и ещё {more}; уточни запрос"),
    }
}

/// `media_info` / `media_play` with an id not in the catalogue.
pub fn media_no_id(lang: Language, id: &str) -> String {
    match lang {
        Language::En => format!("no film with id {id:?}; find ids with media_search|query"),
        Language::Ru => format!("фильма с id {id:?} нет; id ищи через media_search|query"),
    }
}

/// `media_play` started.
pub fn media_playing(lang: Language, title: &str) -> String {
    match lang {
        Language::En => format!("playing: {title}"),
        Language::Ru => format!("запущено: {title}"),
    }
}

#[cfg(test)]
mod tests {
    use porfiry_skills::texts::check_translations;

    use super::*;

    /// Every text of this file in `lang`, named by its function, with sample
    /// arguments. A new text must be added here, or
    /// `every_text_differs_between_languages` fails.
    fn every_text(lang: Language) -> Vec<(&'static str, String)> {
        vec![
            ("media_summary", media_summary(lang).to_owned()),
            ("media_search_desc", media_search_desc(lang).to_owned()),
            ("media_info_desc", media_info_desc(lang).to_owned()),
            ("media_play_desc", media_play_desc(lang).to_owned()),
            ("media_control_desc", media_control_desc(lang).to_owned()),
            ("media_controlled", media_controlled(lang, "pause")),
            ("media_nothing_found", media_nothing_found(lang, "x")),
            ("media_more", media_more(lang, 3)),
            ("media_no_id", media_no_id(lang, "tt9")),
            ("media_playing", media_playing(lang, "The Matrix")),
        ]
    }

    #[test]
    fn every_text_differs_between_languages() {
        assert_eq!(
            check_translations(
                &every_text(Language::En),
                &every_text(Language::Ru),
                include_str!("media.rs"),
            ),
            Ok(())
        );
    }
}
