//! The record sets' replies: what was added, changed or refused, in English
//! and Russian. Short, with the ids the model can reuse.

use porfiry_skills::Language;

use super::pick;

/// What one row of `table` is called ("diary entry", "концепт").
pub fn noun(lang: Language, table: &str) -> &'static str {
    let (en, ru) = match table {
        "diary_entries" => ("diary entry", "запись дневника"),
        "concepts" => ("concept", "концепт"),
        "links" => ("link", "связь"),
        "goals" => ("goal", "цель"),
        "tasks" => ("task", "задача"),
        "agent_reputation" => ("reputation of", "репутация"),
        "notes" => ("note", "заметка"),
        "llm_memory" => ("notebook page", "страница блокнота"),
        "identity" => ("identity", "идентичность"),
        "config" => ("setting", "настройка"),
        "agent_peers" => ("friend", "друг"),
        "agent_scripts" => ("script", "скрипт"),
        "agent_tables" => ("table definition", "описание таблицы"),
        "stagnation_strategies" => ("strategy", "стратегия"),
        "thinking_methods" => ("method", "метод"),
        "ratings" => ("rating", "оценка"),
        "external_services" => ("service", "сервис"),
        "external_accounts" => ("account", "учётная запись"),
        "llm_registry" => ("model", "модель"),
        "users" => ("user", "пользователь"),
        "users_group" => ("group", "группа"),
        _ => ("row", "строка"),
    };
    pick(lang, en, ru)
}

/// A row was added.
pub fn added(lang: Language, noun: &str, id: i64) -> String {
    match lang {
        Language::En => format!("added: {noun} #{id}"),
        Language::Ru => format!("добавлено: {noun} #{id}"),
    }
}

/// A row was changed.
pub fn updated(lang: Language, noun: &str, id: i64) -> String {
    match lang {
        Language::En => format!("updated: {noun} #{id}"),
        Language::Ru => format!("изменено: {noun} #{id}"),
    }
}

/// A row was deleted.
pub fn deleted(lang: Language, noun: &str, id: i64) -> String {
    match lang {
        Language::En => format!("deleted: {noun} #{id}"),
        Language::Ru => format!("удалено: {noun} #{id}"),
    }
}

/// Rows pinned (`on`) or unpinned by tag: `counts` per noun.
pub fn pinned_by_tag(lang: Language, tag: &str, counts: &[(&str, usize)], on: bool) -> String {
    let total: usize = counts.iter().map(|(_, n)| n).sum();
    let parts: Vec<String> = counts
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(noun, n)| format!("{noun} {n}"))
        .collect();
    let detail = if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    };
    match (lang, on) {
        (Language::En, true) => format!("pinned by #{tag}: {total}{detail}"),
        (Language::En, false) => format!("unpinned by #{tag}: {total}{detail}"),
        (Language::Ru, true) => format!("закреплено по #{tag}: {total}{detail}"),
        (Language::Ru, false) => format!("откреплено по #{tag}: {total}{detail}"),
    }
}

/// A row was pinned (`on`) or unpinned.
pub fn pinned(lang: Language, noun: &str, id: i64, on: bool) -> String {
    match (lang, on) {
        (Language::En, true) => format!("pinned: {noun} #{id}"),
        (Language::En, false) => format!("unpinned: {noun} #{id}"),
        (Language::Ru, true) => format!("закреплено: {noun} #{id}"),
        (Language::Ru, false) => format!("откреплено: {noun} #{id}"),
    }
}

/// No row with that key.
pub fn not_found(lang: Language, noun: &str, key: &str) -> String {
    match lang {
        Language::En => format!("no {noun} {key}; nothing changed"),
        Language::Ru => format!("не найдено: {noun} {key}; ничего не изменено"),
    }
}

/// The database refused the write or read; `why` is its reason.
pub fn refused(lang: Language, why: &str) -> String {
    match lang {
        Language::En => format!("refused, nothing changed: {why}"),
        Language::Ru => format!("отказано, ничего не изменено: {why}"),
    }
}

/// The database actor is closed.
pub fn db_closed(lang: Language) -> &'static str {
    pick(
        lang,
        "the database is closed: the node is stopping",
        "база данных закрыта: узел останавливается",
    )
}

/// An empty list.
pub fn nothing(lang: Language) -> &'static str {
    pick(lang, "nothing here yet", "здесь пока пусто")
}

/// A list shows part of its rows; `next` is the offset of the rest.
pub fn more(lang: Language, n: u64, next: u64) -> String {
    match lang {
        Language::En => format!("…and {n} more (offset {next})"),
        Language::Ru => format!("…и ещё {n} (offset {next})"),
    }
}

/// A list shows part of its rows and did not count them all.
pub fn more_at_least(lang: Language, n: u64, next: u64) -> String {
    match lang {
        Language::En => format!("…and at least {n} more (offset {next})"),
        Language::Ru => format!("…и ещё не меньше {n} (offset {next})"),
    }
}

/// A long text was cut for the reply.
pub fn clipped(lang: Language, chars: usize) -> String {
    match lang {
        Language::En => format!("…({chars} more characters)"),
        Language::Ru => format!("…(ещё {chars} символов)"),
    }
}

/// A value that should be a number is not.
pub fn bad_number(lang: Language, field: &str, value: &str) -> String {
    match lang {
        Language::En => format!("{field} must be a number, got {value:?}; nothing changed"),
        Language::Ru => format!("{field} должно быть числом, а не {value:?}; ничего не изменено"),
    }
}

/// A value that should be one of a few words is not.
pub fn bad_choice(lang: Language, field: &str, value: &str, choices: &str) -> String {
    match lang {
        Language::En => format!("{field} must be one of {choices}, got {value:?}; nothing changed"),
        Language::Ru => {
            format!("{field} должно быть одним из {choices}, а не {value:?}; ничего не изменено")
        }
    }
}

/// A field that may not be empty was given nothing.
pub fn empty_value(lang: Language, field: &str) -> String {
    match lang {
        Language::En => format!("{field} needs a value; nothing changed"),
        Language::Ru => format!("для {field} нужно значение; ничего не изменено"),
    }
}

/// An agent's score after a change.
pub fn score_now(lang: Language, peer: &str, score: f64) -> String {
    match lang {
        Language::En => format!("reputation of {peer}: {score}"),
        Language::Ru => format!("репутация {peer}: {score}"),
    }
}

/// Comments on an agent were replaced.
pub fn reputation_notes_saved(lang: Language, peer: &str) -> String {
    match lang {
        Language::En => format!("comments on {peer} saved"),
        Language::Ru => format!("заметки о {peer} сохранены"),
    }
}

/// A note went out to its audience.
pub fn note_published(lang: Language, id: i64, audience: &str) -> String {
    match lang {
        Language::En => format!("added: note #{id}, published to {audience}"),
        Language::Ru => format!("добавлено: заметка #{id}, отправлена: {audience}"),
    }
}

/// Publishing (or befriending) needs the mesh, which is not running.
pub fn needs_node(lang: Language) -> &'static str {
    pick(
        lang,
        "needs the running node (porfiry run); nothing changed. Use audience private to keep a note here",
        "нужен работающий узел (porfiry run); ничего не изменено. Аудитория private оставит заметку здесь",
    )
}

/// A published or merged note's text is signed and cannot change.
pub fn note_not_editable(lang: Language, id: i64) -> String {
    match lang {
        Language::En => {
            format!("note #{id} is published or a friend's: its text and topic cannot change")
        }
        Language::Ru => {
            format!("заметка #{id} отправлена или чужая: её текст и тему не изменить")
        }
    }
}

/// A note's read mark was set.
pub fn note_marked(lang: Language, id: i64, read: bool) -> String {
    match (lang, read) {
        (Language::En, true) => format!("note #{id} marked read"),
        (Language::En, false) => format!("note #{id} marked unread"),
        (Language::Ru, true) => format!("заметка #{id} отмечена прочитанной"),
        (Language::Ru, false) => format!("заметка #{id} отмечена непрочитанной"),
    }
}

/// A friend was added (`known`: it was one already; addresses and groups replaced).
pub fn friend_added(lang: Language, peer: &str, known: bool) -> String {
    match (lang, known) {
        (Language::En, false) => format!("friend added: {peer}"),
        (Language::En, true) => format!("friend {peer} updated: addresses and groups"),
        (Language::Ru, false) => format!("друг добавлен: {peer}"),
        (Language::Ru, true) => format!("друг {peer} обновлён: адреса и группы"),
    }
}

/// A friend was removed.
pub fn friend_removed(lang: Language, peer: &str) -> String {
    match lang {
        Language::En => format!("friend removed: {peer}"),
        Language::Ru => format!("друг удалён: {peer}"),
    }
}

/// The peer id given is this node's own.
pub fn own_peer(lang: Language) -> &'static str {
    pick(
        lang,
        "that is this node's own peer id; nothing changed",
        "это peer id самого узла; ничего не изменено",
    )
}

/// A setting was stored.
pub fn config_saved(lang: Language, key: &str) -> String {
    match lang {
        Language::En => format!("setting {key} saved"),
        Language::Ru => format!("настройка {key} сохранена"),
    }
}

/// A setting the model may not change.
pub fn config_protected(lang: Language, key: &str) -> String {
    match lang {
        Language::En => format!(
            "setting {key} is not yours to change here (cycle: use the cycle tools; the rest only the user sets); nothing changed"
        ),
        Language::Ru => format!(
            "настройку {key} здесь менять нельзя (cycle — через инструменты cycle; остальное задаёт только пользователь); ничего не изменено"
        ),
    }
}

/// A setting only a person changes (the "Thinking" switch).
pub fn config_person_only(lang: Language, key: &str) -> String {
    match lang {
        Language::En => format!(
            "setting {key} is the person's switch: only a person pauses or resumes thinking (the Thinking switch); nothing changed"
        ),
        Language::Ru => format!(
            "настройка {key} — выключатель человека: приостановить или возобновить мышление может только человек (переключатель «Размышления»); ничего не изменено"
        ),
    }
}

/// A setting named like a secret.
pub fn config_secret(lang: Language, key: &str) -> String {
    match lang {
        Language::En => format!(
            "{key} looks like a secret: secrets are never stored; name an env var instead; nothing changed"
        ),
        Language::Ru => format!(
            "{key} похоже на секрет: секреты не хранятся; укажи имя переменной окружения; ничего не изменено"
        ),
    }
}

/// No identity row yet.
pub fn identity_missing(lang: Language) -> &'static str {
    pick(
        lang,
        "no identity yet; give it a name first: identity_update|name|…",
        "идентичности пока нет; сначала дай имя: identity_update|name|…",
    )
}

/// A secret reference that does not look like a reference.
pub fn secret_ref_bad(lang: Language) -> &'static str {
    pick(
        lang,
        "secret_ref must name where the secret is (env var or keyring entry: letters, digits, _ . : / -), never hold it; nothing changed",
        "secret_ref — имя места секрета (переменная окружения или запись keyring: буквы, цифры, _ . : / -), не сам секрет; ничего не изменено",
    )
}

/// "links" label word.
pub fn links_word(lang: Language) -> &'static str {
    pick(lang, "links", "связи")
}

/// "tasks" label word.
pub fn tasks_word(lang: Language) -> &'static str {
    pick(lang, "tasks", "задачи")
}

/// "pinned" marker in a row's line.
pub fn pinned_mark(lang: Language) -> &'static str {
    pick(lang, "pinned", "закреплено")
}

/// `notes_cleanup` done.
pub fn notes_cleaned(lang: Language, n: usize, read_only: bool) -> String {
    match (lang, read_only) {
        (Language::En, true) => format!("{n} old read note(s) deleted"),
        (Language::En, false) => format!("{n} old note(s) deleted"),
        (Language::Ru, true) => format!("удалено старых прочитанных заметок: {n}"),
        (Language::Ru, false) => format!("удалено старых заметок: {n}"),
    }
}

/// A list longer than its bound.
pub fn too_many(lang: Language, what: &str, max: usize) -> String {
    match lang {
        Language::En => format!("{what}: at most {max}"),
        Language::Ru => format!("{what}: не больше {max}"),
    }
}

/// "unread" marker in a note's line.
pub fn unread_mark(lang: Language) -> &'static str {
    pick(lang, "unread", "не прочитано")
}

#[cfg(test)]
mod tests {
    use porfiry_skills::texts::check_translations;

    use super::*;

    /// Every text of this file in `lang`, with sample arguments. A new text
    /// must be added here, or `every_text_differs_between_languages` fails.
    fn every_text(lang: Language) -> Vec<(&'static str, String)> {
        vec![
            ("noun", noun(lang, "concepts").to_owned()),
            ("added", added(lang, "x", 1)),
            ("updated", updated(lang, "x", 1)),
            ("deleted", deleted(lang, "x", 1)),
            (
                "pinned",
                pinned(lang, "x", 1, true) + &pinned(lang, "x", 1, false),
            ),
            (
                "pinned_by_tag",
                pinned_by_tag(lang, "x", &[("y", 1)], true) + &pinned_by_tag(lang, "x", &[], false),
            ),
            ("not_found", not_found(lang, "x", "#1")),
            ("refused", refused(lang, "why")),
            ("db_closed", db_closed(lang).to_owned()),
            ("nothing", nothing(lang).to_owned()),
            ("more", more(lang, 3, 10)),
            ("more_at_least", more_at_least(lang, 3, 10)),
            ("clipped", clipped(lang, 9)),
            ("bad_number", bad_number(lang, "weight", "x")),
            ("bad_choice", bad_choice(lang, "status", "x", "a, b")),
            ("empty_value", empty_value(lang, "title")),
            ("score_now", score_now(lang, "p", 1.0)),
            ("reputation_notes_saved", reputation_notes_saved(lang, "p")),
            ("note_published", note_published(lang, 1, "friends")),
            ("needs_node", needs_node(lang).to_owned()),
            ("note_not_editable", note_not_editable(lang, 1)),
            (
                "note_marked",
                note_marked(lang, 1, true) + &note_marked(lang, 1, false),
            ),
            (
                "friend_added",
                friend_added(lang, "p", false) + &friend_added(lang, "p", true),
            ),
            ("friend_removed", friend_removed(lang, "p")),
            ("own_peer", own_peer(lang).to_owned()),
            ("config_saved", config_saved(lang, "k")),
            ("config_protected", config_protected(lang, "k")),
            ("config_person_only", config_person_only(lang, "k")),
            ("config_secret", config_secret(lang, "k")),
            ("identity_missing", identity_missing(lang).to_owned()),
            ("secret_ref_bad", secret_ref_bad(lang).to_owned()),
            ("links_word", links_word(lang).to_owned()),
            ("tasks_word", tasks_word(lang).to_owned()),
            ("pinned_mark", pinned_mark(lang).to_owned()),
            ("unread_mark", unread_mark(lang).to_owned()),
            ("too_many", too_many(lang, "members", 64)),
            (
                "notes_cleaned",
                notes_cleaned(lang, 2, true) + &notes_cleaned(lang, 2, false),
            ),
        ]
    }

    #[test]
    fn every_text_differs_between_languages() {
        assert_eq!(
            check_translations(
                &every_text(Language::En),
                &every_text(Language::Ru),
                include_str!("store_replies.rs"),
            ),
            Ok(())
        );
    }

    #[test]
    fn every_table_has_a_noun_in_both_languages() {
        for table in porfiry_storage::TABLES {
            assert_ne!(
                noun(Language::En, table),
                noun(Language::Ru, table),
                "{table}"
            );
        }
    }
}
