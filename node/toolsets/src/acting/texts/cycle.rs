//! The `cycle` set's texts.

use porfiry_skills::Language;

use super::pick;

/// Catalogue line of the `cycle` set.
pub fn cycle_summary(lang: Language) -> &'static str {
    pick(
        lang,
        "your thinking cycle: recent replies shown, concentration, notes mode, pause, idle",
        "твой цикл мышления: число последних реплик, концентрация, режим сообщений, пауза, ожидание",
    )
}

/// `cycle_responses` description.
pub fn cycle_responses_desc(lang: Language) -> &'static str {
    pick(
        lang,
        "how many of your recent replies the context shows",
        "сколько твоих последних реплик показывать в контексте",
    )
}

/// `cycle_concentration` description.
pub fn cycle_concentration_desc(lang: Language) -> &'static str {
    pick(
        lang,
        "concentration: show only replies with these tags and/or emotions (joy:>=2); off = normal",
        "концентрация: показывать только реплики с этими тегами и/или эмоциями (тревожность:≥2); off = обычный режим",
    )
}

/// `cycle_mode` description.
pub fn cycle_mode_desc(lang: Language) -> &'static str {
    pick(
        lang,
        "incoming notes: manual (counts and ids) or auto with a filter (tags=a,b priority>=important age=3600 sources=user mentions=anna; priority is a number or low, normal, important, urgent, critical)",
        "входящие сообщения: manual (количество и id) или auto с фильтром (tags=a,b priority>=важное age=3600 sources=user mentions=anna; приоритет — число или низкий, обычный, важный, срочный, критический)",
    )
}

/// `cycle_pause` description.
pub fn cycle_pause_desc(lang: Language) -> &'static str {
    pick(
        lang,
        "pause between thinking cycles, in seconds",
        "пауза между циклами мышления, в секундах",
    )
}

/// `cycle_idle` description.
pub fn cycle_idle_desc(lang: Language) -> &'static str {
    pick(
        lang,
        "idle: sleep until a process ends (ids or any), a matching note comes, or the timeout (seconds); a note from the user always wakes",
        "ожидание: спать до завершения процесса (id или any), подходящего сообщения или таймаута (секунды); сообщение пользователя будит всегда",
    )
}

/// A number out of its range.
pub fn cycle_out_of_range(lang: Language, what: &str, min: i64, max: i64, got: i64) -> String {
    match lang {
        Language::En => format!("{what} must be {min} to {max}, got {got}; nothing changed"),
        Language::Ru => {
            format!("{what} должно быть от {min} до {max}, получено {got}; ничего не изменено")
        }
    }
}

/// Concentration switched on with neither tags nor emotions.
pub fn cycle_concentration_empty(lang: Language) -> &'static str {
    pick(
        lang,
        "concentration needs tags or emotions (e.g. cycle_concentration|on|mesh|anxiety:>=2|or)",
        "для концентрации нужны теги или эмоции (например cycle_concentration|on|mesh|тревожность:≥2|or)",
    )
}

/// Idle mode named processes that do not exist.
pub fn cycle_unknown_processes(lang: Language, ids: &str) -> String {
    match lang {
        Language::En => format!("no such process: {ids}; see process_list|all; nothing changed"),
        Language::Ru => {
            format!("нет таких процессов: {ids}; см. process_list|all; ничего не изменено")
        }
    }
}

/// The stored settings do not read back; left untouched.
pub fn cycle_unreadable(lang: Language, key: &str, detail: &str) -> String {
    match lang {
        Language::En => format!(
            "the stored cycle settings (config key {key}) are unreadable, left as they are: {detail}"
        ),
        Language::Ru => format!(
            "сохранённые настройки цикла (ключ {key}) не читаются, оставлены как есть: {detail}"
        ),
    }
}

/// `cycle_responses` done.
pub fn cycle_responses_set(lang: Language, n: u32) -> String {
    match lang {
        Language::En => format!("the context now shows your last {n} replies"),
        Language::Ru => format!("контекст теперь показывает твои последние {n} реплик"),
    }
}

/// Concentration switched off.
pub fn cycle_concentration_off(lang: Language) -> &'static str {
    pick(
        lang,
        "concentration off: the context shows your latest replies",
        "концентрация выключена: контекст показывает последние реплики",
    )
}

/// Concentration switched on.
pub fn cycle_concentration_on(lang: Language, filter: &str) -> String {
    match lang {
        Language::En => format!("concentration on: {filter}"),
        Language::Ru => format!("концентрация включена: {filter}"),
    }
}

/// Notes mode set to manual.
pub fn cycle_mode_manual(lang: Language) -> &'static str {
    pick(
        lang,
        "notes mode manual: counts per priority and ids; read with notes_read",
        "режим сообщений manual: количество по приоритетам и id; читай через notes_read",
    )
}

/// Notes mode set to auto.
pub fn cycle_mode_auto(lang: Language, filter: &str) -> String {
    match (lang, filter.is_empty()) {
        (Language::En, true) => "notes mode auto: every note is shown".to_owned(),
        (Language::En, false) => format!("notes mode auto, filter: {filter}"),
        (Language::Ru, true) => "режим сообщений auto: показываются все сообщения".to_owned(),
        (Language::Ru, false) => format!("режим сообщений auto, фильтр: {filter}"),
    }
}

/// `cycle_pause` done.
pub fn cycle_pause_set(lang: Language, secs: u64) -> String {
    match lang {
        Language::En => format!("pause between cycles: {secs} s"),
        Language::Ru => format!("пауза между циклами: {secs} с"),
    }
}

/// `cycle_cleanup` description.
pub fn cycle_cleanup_desc(lang: Language) -> &'static str {
    pick(
        lang,
        "forget old replies of your short-term memory (llm_recent_responses): keep the newest N",
        "забыть старые реплики кратковременной памяти (llm_recent_responses): оставить N новейших",
    )
}

/// `cycle_cleanup` done.
pub fn cycle_cleaned(lang: Language, deleted: usize, keep: u32) -> String {
    match lang {
        Language::En => format!("{deleted} old replies forgotten; the newest {keep} kept"),
        Language::Ru => format!("забыто старых реплик: {deleted}; оставлено новейших: {keep}"),
    }
}

/// Idle mode switched off.
pub fn cycle_idle_off(lang: Language) -> &'static str {
    pick(
        lang,
        "idle off: thinking every cycle",
        "ожидание выключено: мышление каждый цикл",
    )
}

/// Idle mode switched on, with its wake conditions.
pub fn cycle_idle_on(
    lang: Language,
    any_process: bool,
    processes: &str,
    notes: Option<&str>,
    timeout_secs: Option<u64>,
) -> String {
    let (any, every, none) = match lang {
        Language::En => ("any", "any note", "no"),
        Language::Ru => ("любой", "любое сообщение", "нет"),
    };
    let processes = match (any_process, processes.is_empty()) {
        (true, _) => any,
        (false, true) => none,
        (false, false) => processes,
    };
    let notes = match notes {
        None => none,
        Some("") => every,
        Some(f) => f,
    };
    let timeout = timeout_secs.map_or_else(|| none.to_owned(), |t| t.to_string());
    match lang {
        Language::En => format!(
            "idle on; wakes on: process {processes}; notes: {notes}; timeout s: {timeout}; a note from the user always wakes"
        ),
        Language::Ru => format!(
            "ожидание включено; пробуждение: процесс {processes}; сообщения: {notes}; таймаут, с: {timeout}; сообщение пользователя будит всегда"
        ),
    }
}

/// Appended when idle mode was given no wake condition.
pub fn cycle_idle_default_timeout(lang: Language, secs: u64) -> String {
    match lang {
        Language::En => {
            format!(" (no wake condition given: the default timeout of {secs} s applies)")
        }
        Language::Ru => {
            format!(" (условие пробуждения не задано: действует таймаут по умолчанию, {secs} с)")
        }
    }
}

/// An emotion condition that does not read.
pub fn cycle_bad_emotion(lang: Language, item: &str) -> String {
    match lang {
        Language::En => format!("cannot read emotion {item:?}: write name:>=N with N 1 to 5"),
        Language::Ru => format!("не могу разобрать эмоцию {item:?}: пиши имя:≥N, N от 1 до 5"),
    }
}

/// A list longer than its bound.
pub fn cycle_too_many(lang: Language, what: &str, max: usize) -> String {
    match lang {
        Language::En => format!("too many {what}: at most {max}; nothing changed"),
        Language::Ru => format!("слишком много ({what}): не больше {max}; ничего не изменено"),
    }
}

/// A note-filter key that is not known.
pub fn cycle_bad_filter_key(lang: Language, key: &str, keys: &str) -> String {
    match lang {
        Language::En => format!("unknown filter part {key:?}; use key=value with keys {keys}"),
        Language::Ru => {
            format!("непонятная часть фильтра {key:?}; пиши ключ=значение, ключи: {keys}")
        }
    }
}

/// A note-filter value that does not fit.
pub fn cycle_bad_filter_value(lang: Language, key: &str, value: &str) -> String {
    match lang {
        Language::En => format!("filter {key}: cannot use {value:?} (a whole number is expected)"),
        Language::Ru => {
            format!("фильтр {key}: не подходит {value:?} (нужно целое число)")
        }
    }
}

/// A process id that does not read.
pub fn cycle_bad_id(lang: Language, item: &str) -> String {
    match lang {
        Language::En => format!("{item:?} is not a process id (ids like 4, 7 or any)"),
        Language::Ru => format!("{item:?} — не id процесса (id вроде 4, 7 или any)"),
    }
}

#[cfg(test)]
mod tests {
    use porfiry_skills::texts::check_translations;

    use super::*;

    fn every_text(lang: Language) -> Vec<(&'static str, String)> {
        vec![
            ("cycle_summary", cycle_summary(lang).to_owned()),
            (
                "cycle_responses_desc",
                cycle_responses_desc(lang).to_owned(),
            ),
            (
                "cycle_concentration_desc",
                cycle_concentration_desc(lang).to_owned(),
            ),
            ("cycle_mode_desc", cycle_mode_desc(lang).to_owned()),
            ("cycle_pause_desc", cycle_pause_desc(lang).to_owned()),
            ("cycle_idle_desc", cycle_idle_desc(lang).to_owned()),
            ("cycle_cleanup_desc", cycle_cleanup_desc(lang).to_owned()),
            ("cycle_cleaned", cycle_cleaned(lang, 3, 50)),
            (
                "cycle_out_of_range",
                cycle_out_of_range(lang, "n", 1, 50, 99),
            ),
            (
                "cycle_concentration_empty",
                cycle_concentration_empty(lang).to_owned(),
            ),
            (
                "cycle_unknown_processes",
                cycle_unknown_processes(lang, "#9"),
            ),
            ("cycle_unreadable", cycle_unreadable(lang, "cycle", "bad")),
            ("cycle_responses_set", cycle_responses_set(lang, 5)),
            (
                "cycle_concentration_off",
                cycle_concentration_off(lang).to_owned(),
            ),
            (
                "cycle_concentration_on",
                cycle_concentration_on(lang, "tags=[a]"),
            ),
            ("cycle_mode_manual", cycle_mode_manual(lang).to_owned()),
            (
                "cycle_mode_auto",
                format!(
                    "{} / {}",
                    cycle_mode_auto(lang, ""),
                    cycle_mode_auto(lang, "tags=a")
                ),
            ),
            ("cycle_pause_set", cycle_pause_set(lang, 30)),
            ("cycle_idle_off", cycle_idle_off(lang).to_owned()),
            (
                "cycle_idle_on",
                format!(
                    "{} / {}",
                    cycle_idle_on(lang, true, "", None, None),
                    cycle_idle_on(lang, false, "#4", Some("tags=a"), Some(60))
                ),
            ),
            (
                "cycle_idle_default_timeout",
                cycle_idle_default_timeout(lang, 3600),
            ),
            ("cycle_bad_emotion", cycle_bad_emotion(lang, "joy")),
            ("cycle_too_many", cycle_too_many(lang, "tags", 16)),
            (
                "cycle_bad_filter_key",
                cycle_bad_filter_key(lang, "colour", "tags"),
            ),
            (
                "cycle_bad_filter_value",
                cycle_bad_filter_value(lang, "priority", "x"),
            ),
            ("cycle_bad_id", cycle_bad_id(lang, "x")),
        ]
    }

    #[test]
    fn every_text_differs_between_languages() {
        assert_eq!(
            check_translations(
                &every_text(Language::En),
                &every_text(Language::Ru),
                include_str!("cycle.rs"),
            ),
            Ok(())
        );
    }
}
