//! Every text the model sees from this crate — the prompt frame, core tool
//! descriptions, core tool replies — in
//! English and Russian, chosen by [`Language`]. Keep them short: a small model
//! reads all of them on every request (seed §10).
//!
//! Protocol keywords (`TOOL_CALL`, `TOOL_RESULT`), tool names and argument
//! names stay English in both languages: they are identifiers, not prose.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The language of every model-visible text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// English.
    #[default]
    En,
    /// Russian.
    Ru,
}

/// A language code that is neither `en` nor `ru`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown language {0:?}; expected \"en\" or \"ru\"")]
pub struct UnknownLanguage(pub String);

impl FromStr for Language {
    type Err = UnknownLanguage;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "en" | "english" => Ok(Language::En),
            "ru" | "russian" => Ok(Language::Ru),
            _ => Err(UnknownLanguage(s.to_owned())),
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Language::En => "en",
            Language::Ru => "ru",
        })
    }
}

/// Picks the English or the Russian variant.
fn pick(lang: Language, en: &'static str, ru: &'static str) -> &'static str {
    match lang {
        Language::En => en,
        Language::Ru => ru,
    }
}

// ---------------------------------------------------------------- prompt frame

/// The opening lines: who the model is and the call protocol.
pub fn preamble(lang: Language) -> &'static str {
    pick(
        lang,
        "You are Porfiry, a brief helpful assistant.\n\
         To use a tool, reply with one line: TOOL_CALL: name|arg1|arg2\n\
         One call per reply, then wait for TOOL_RESULT. A reply without TOOL_CALL goes to the user.\n",
        "Ты Порфирий, краткий и полезный помощник.\n\
         Чтобы вызвать инструмент, ответь одной строкой: TOOL_CALL: имя|арг1|арг2\n\
         Один вызов за ответ, потом жди TOOL_RESULT. Ответ без TOOL_CALL уходит пользователю.\n",
    )
}

/// Worked examples shown after the preamble when the loop asks for them
/// (`LoopConfig::worked_examples`, `porfiry model score --worked-examples`):
/// a request and the reply it gets, each a call line or a plain answer.
/// None of them is a request of the scoring set.
pub fn worked_examples(lang: Language) -> &'static str {
    pick(
        lang,
        "Examples (a message, then the whole reply):\n         \"is it morning yet?\" → TOOL_CALL: get_current_time\n         \"put 'call mum' on my screen\" → TOOL_CALL: show_text|call mum\n         \"any good space films?\" → TOOL_CALL: enable_toolset|media\n         \"thank you!\" → You're welcome!\n",
        "Примеры (сообщение, затем весь ответ):\n         «уже утро?» → TOOL_CALL: get_current_time\n         «выведи на экран „позвонить маме“» → TOOL_CALL: show_text|позвонить маме\n         «есть хорошие фильмы про космос?» → TOOL_CALL: enable_toolset|media\n         «спасибо!» → Пожалуйста!\n",
    )
}

/// Heading of the core tools section.
pub fn core_heading(lang: Language) -> &'static str {
    pick(lang, "Core tools:\n", "Базовые инструменты:\n")
}

/// Heading of the toolset catalogue (one line per set follows).
pub fn catalogue_heading(lang: Language) -> &'static str {
    pick(
        lang,
        "Toolsets (turn on with enable_toolset|name):\n",
        "Наборы инструментов (включить: enable_toolset|имя):\n",
    )
}

/// The "Active toolsets: …" line; the active sets' tool lines follow it.
pub fn active_heading(lang: Language, names: &str) -> String {
    match lang {
        Language::En => format!("Active toolsets: {names}. Their tools:\n"),
        Language::Ru => format!("Активные наборы: {names}. Их инструменты:\n"),
    }
}

/// Heading of the skill index (one line per skill follows).
pub fn skills_heading(lang: Language) -> &'static str {
    pick(
        lang,
        "Skills (steps via read_skill|name):\n",
        "Навыки (шаги: read_skill|имя):\n",
    )
}

// ------------------------------------------------------ core tool descriptions

/// One-line description of `get_current_time`.
pub fn desc_get_current_time(lang: Language) -> &'static str {
    pick(lang, "date, time, time zone", "дата, время, часовой пояс")
}

/// One-line description of `show_text`.
pub fn desc_show_text(lang: Language) -> &'static str {
    pick(
        lang,
        "show text on the user's screen",
        "показать текст на экране пользователя",
    )
}

/// One-line description of `read_skill`.
pub fn desc_read_skill(lang: Language) -> &'static str {
    pick(lang, "read a skill's steps", "прочитать шаги навыка")
}

/// One-line description of `enable_toolset`.
pub fn desc_enable_toolset(lang: Language) -> &'static str {
    pick(lang, "turn a toolset on", "включить набор")
}

/// One-line description of `disable_toolset`.
pub fn desc_disable_toolset(lang: Language) -> &'static str {
    pick(lang, "turn a toolset off", "выключить набор")
}

// ------------------------------------------------------------ core tool replies

/// Weekday names, Monday first, for `get_current_time`.
pub fn weekday(lang: Language, monday_based: u8) -> &'static str {
    const EN: [&str; 7] = [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
    ];
    const RU: [&str; 7] = [
        "понедельник",
        "вторник",
        "среда",
        "четверг",
        "пятница",
        "суббота",
        "воскресенье",
    ];
    let i = usize::from(monday_based % 7);
    match lang {
        Language::En => EN[i],
        Language::Ru => RU[i],
    }
}

/// `show_text` succeeded.
pub fn shown(lang: Language) -> &'static str {
    pick(lang, "shown to the user", "показано пользователю")
}

/// `enable_toolset` of a set that is already active.
pub fn already_active(lang: Language, set: &str) -> String {
    match lang {
        Language::En => format!("toolset {set} already active, timeout extended"),
        Language::Ru => format!("набор {set} уже активен, таймаут продлён"),
    }
}

/// `enable_toolset` switched a set on (seen only in traces: the call is invisible).
pub fn enabled(lang: Language, set: &str) -> String {
    match lang {
        Language::En => format!("toolset {set} enabled"),
        Language::Ru => format!("набор {set} включён"),
    }
}

/// `disable_toolset` switched sets off (seen only in traces).
pub fn disabled(lang: Language, sets: &str) -> String {
    match lang {
        Language::En => format!("toolset {sets} disabled"),
        Language::Ru => format!("набор {sets} выключен"),
    }
}

/// `disable_toolset` with nothing active.
pub fn no_active_toolsets(lang: Language) -> &'static str {
    pick(lang, "no active toolsets", "нет активных наборов")
}

/// `disable_toolset|x` where x exists but is not active.
pub fn not_active(lang: Language, set: &str, active: &str) -> String {
    match lang {
        Language::En => format!("toolset {set} is not active; active: {active}"),
        Language::Ru => format!("набор {set} не активен; активны: {active}"),
    }
}

/// A toolset name that does not exist.
pub fn no_toolset(lang: Language, set: &str, available: &str) -> String {
    match lang {
        Language::En => format!("no toolset {set:?}; available: {available}"),
        Language::Ru => format!("набора {set:?} нет; доступны: {available}"),
    }
}

/// A skill name that does not exist.
pub fn no_skill(lang: Language, skill: &str, available: &str) -> String {
    match lang {
        Language::En => format!("no skill {skill:?}; available: {available}"),
        Language::Ru => format!("навыка {skill:?} нет; доступны: {available}"),
    }
}

/// A tool name that is neither a core tool nor `<known set>_<verb>`.
pub fn no_tool(lang: Language, tool: &str, core: &str, sets: &str) -> String {
    match lang {
        Language::En => format!("no tool {tool:?}; core tools: {core}; toolsets: {sets}"),
        Language::Ru => format!("инструмента {tool:?} нет; базовые: {core}; наборы: {sets}"),
    }
}

/// `<set>_<verb>` where the set exists but has no such verb; lists its tools.
pub fn no_such_tool_in_set(lang: Language, tool: &str, set: &str, tools: &str) -> String {
    match lang {
        Language::En => format!("no tool {tool:?}. Toolset {set} is active, its tools:\n{tools}"),
        Language::Ru => {
            format!("инструмента {tool:?} нет. Набор {set} активен, его инструменты:\n{tools}")
        }
    }
}

/// Arguments that do not fit the tool's schema.
pub fn args_invalid(lang: Language, schema: &str) -> String {
    match lang {
        Language::En => format!("arguments invalid, expected: {schema}"),
        Language::Ru => format!("аргументы неверны, ожидается: {schema}"),
    }
}

/// Seed §7: a call to a tool of an inactive set whose arguments did not fit.
/// The set is now active; say plainly that the call did NOT run.
pub fn substituted(lang: Language, set: &str, tools: &str, tool: &str, schema: &str) -> String {
    match lang {
        Language::En => format!(
            "Toolset {set} activated. Its tools:\n{tools}\n\
             {tool} was NOT executed yet. To run it, call: TOOL_CALL: {schema}"
        ),
        Language::Ru => format!(
            "Набор {set} активирован. Его инструменты:\n{tools}\n\
             {tool} ещё НЕ выполнялся. Чтобы выполнить, вызови: TOOL_CALL: {schema}"
        ),
    }
}

/// Appended to a tool result when the reply held more than one call.
pub fn only_first_call_ran(lang: Language, dropped: usize) -> String {
    match lang {
        Language::En => {
            format!("\n(only the first TOOL_CALL of a reply runs; {dropped} more ignored)")
        }
        Language::Ru => {
            format!("\n(выполняется только первый TOOL_CALL ответа; ещё {dropped} пропущено)")
        }
    }
}

/// Marks a tool result cut at [`crate::limits::MAX_TOOL_RESULT_CHARS`].
pub fn truncated(lang: Language) -> &'static str {
    pick(lang, "\n[truncated]", "\n[обрезано]")
}

/// Word for "none" in lists.
pub fn none(lang: Language) -> &'static str {
    pick(lang, "none", "нет")
}

/// Told to the user when a turn used up its tool rounds.
pub fn round_limit(lang: Language, rounds: u32) -> String {
    match lang {
        Language::En => format!(
            "Sorry, I stopped after {rounds} tool steps without reaching an answer. \
             Please rephrase or ask me to continue."
        ),
        Language::Ru => format!(
            "Извините, я остановился после {rounds} шагов с инструментами и не дошёл до ответа. \
             Переформулируйте или попросите продолжить."
        ),
    }
}

/// A tool call that did not finish within its deadline; it was dropped.
pub fn tool_timed_out(lang: Language, tool: &str, seconds: u64) -> String {
    match lang {
        Language::En => format!(
            "{tool} did not finish within {seconds} s and was stopped; try again later or answer without it"
        ),
        Language::Ru => format!(
            "{tool} не завершился за {seconds} с и был остановлен; попробуй позже или ответь без него"
        ),
    }
}

/// Stored as the assistant's message when a turn ended because the model call
/// failed, so user and assistant messages keep alternating.
pub fn no_reply(lang: Language) -> &'static str {
    pick(
        lang,
        "(no reply: the model call failed)",
        "(нет ответа: вызов модели не удался)",
    )
}

// ------------------------------------------------- the core's commands block

/// The line that opens a cognitive-core reply's commands block, as the
/// core's output instructions show it; a constrained reply writes exactly it.
pub fn commands_block_start(lang: Language) -> &'static str {
    pick(lang, "# Commands:", "# Команды:")
}

/// The line that closes the commands block.
pub fn commands_block_end(lang: Language) -> &'static str {
    pick(lang, "# End of commands", "# Конец команд")
}

/// Checks a crate's table of model-facing texts, the same way in every crate
/// that has one (its texts test calls this): `en` and `ru` list, in the same
/// order, every `pub fn NAME(lang: Language, …)` of `source` (the texts file,
/// by `include_str!`), and each text is non-empty and differs between the
/// languages. The error names the first text that fails.
pub fn check_translations(
    en: &[(&str, String)],
    ru: &[(&str, String)],
    source: &str,
) -> Result<(), String> {
    let listed: BTreeSet<&str> = en.iter().map(|(name, _)| *name).collect();
    let defined = text_functions(source);
    if listed != defined {
        return Err(format!(
            "the table lists {listed:?} but the file defines {defined:?}"
        ));
    }
    if en.len() != ru.len() || en.iter().zip(ru).any(|((a, _), (b, _))| a != b) {
        return Err("the English and Russian tables list different texts".into());
    }
    for ((name, en), (_, ru)) in en.iter().zip(ru) {
        if en.trim().is_empty() {
            return Err(format!("{name} is empty in English"));
        }
        if ru.trim().is_empty() {
            return Err(format!("{name} is empty in Russian"));
        }
        if en == ru {
            return Err(format!("{name} is not translated"));
        }
    }
    Ok(())
}

/// The names of the `pub fn NAME(lang: Language, …)` texts in `source`,
/// however rustfmt wrapped their signatures.
fn text_functions(source: &str) -> BTreeSet<&str> {
    source
        .split("\npub fn ")
        .skip(1)
        .filter_map(|f| f.split_once('('))
        .filter(|(_, params)| params.trim_start().starts_with("lang: Language"))
        .map(|(name, _)| name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn language_parses_codes_and_rejects_others() {
        assert_eq!("en".parse::<Language>(), Ok(Language::En));
        assert_eq!(" RU ".parse::<Language>(), Ok(Language::Ru));
        assert_eq!(
            "de".parse::<Language>(),
            Err(UnknownLanguage("de".to_owned()))
        );
        assert_eq!(Language::Ru.to_string(), "ru");
    }

    /// Every text of this file in `lang`, named by its function, with sample
    /// arguments. A new text must be added here, or
    /// `every_text_differs_between_languages` fails.
    fn every_text(lang: Language) -> Vec<(&'static str, String)> {
        let week: Vec<&str> = (0..7).map(|d| weekday(lang, d)).collect();
        vec![
            ("preamble", preamble(lang).to_owned()),
            ("worked_examples", worked_examples(lang).to_owned()),
            ("core_heading", core_heading(lang).to_owned()),
            ("catalogue_heading", catalogue_heading(lang).to_owned()),
            ("active_heading", active_heading(lang, "media")),
            ("skills_heading", skills_heading(lang).to_owned()),
            (
                "desc_get_current_time",
                desc_get_current_time(lang).to_owned(),
            ),
            ("desc_show_text", desc_show_text(lang).to_owned()),
            ("desc_read_skill", desc_read_skill(lang).to_owned()),
            ("desc_enable_toolset", desc_enable_toolset(lang).to_owned()),
            (
                "desc_disable_toolset",
                desc_disable_toolset(lang).to_owned(),
            ),
            ("weekday", week.join(",")),
            ("shown", shown(lang).to_owned()),
            ("already_active", already_active(lang, "media")),
            ("enabled", enabled(lang, "media")),
            ("disabled", disabled(lang, "media")),
            ("no_active_toolsets", no_active_toolsets(lang).to_owned()),
            ("not_active", not_active(lang, "notes", "media")),
            ("no_toolset", no_toolset(lang, "web", "media")),
            ("no_skill", no_skill(lang, "x", "media")),
            ("no_tool", no_tool(lang, "x", "show_text", "media")),
            (
                "no_such_tool_in_set",
                no_such_tool_in_set(lang, "media_x", "media", "media_play|id"),
            ),
            ("args_invalid", args_invalid(lang, "media_play|id")),
            (
                "substituted",
                substituted(
                    lang,
                    "media",
                    "media_play|id",
                    "media_play",
                    "media_play|id",
                ),
            ),
            ("only_first_call_ran", only_first_call_ran(lang, 2)),
            ("truncated", truncated(lang).to_owned()),
            ("none", none(lang).to_owned()),
            ("round_limit", round_limit(lang, 3)),
            ("tool_timed_out", tool_timed_out(lang, "media_search", 20)),
            ("no_reply", no_reply(lang).to_owned()),
            (
                "commands_block_start",
                commands_block_start(lang).to_owned(),
            ),
            ("commands_block_end", commands_block_end(lang).to_owned()),
        ]
    }

    #[test]
    fn every_text_differs_between_languages() {
        assert_eq!(
            check_translations(
                &every_text(Language::En),
                &every_text(Language::Ru),
                include_str!("texts.rs"),
            ),
            Ok(())
        );
        for day in 0..7 {
            assert_ne!(weekday(Language::En, day), weekday(Language::Ru, day));
        }
    }

    #[test]
    fn the_check_names_what_is_missing_empty_or_untranslated() {
        let src = "//! x\npub fn a(lang: Language) -> &str {}\npub fn b(\n    lang: Language,\n) {}\npub fn other(x: u8) {}";
        let row = |name, text: &str| (name, text.to_owned());
        let en = [row("a", "A"), row("b", "B")];
        assert_eq!(
            check_translations(&en, &[row("a", "А"), row("b", "Б")], src),
            Ok(())
        );
        let missing = check_translations(&en[..1], &[row("a", "А")], src).unwrap_err();
        assert!(missing.contains("defines"), "{missing}");
        let untranslated = check_translations(&en, &[row("a", "А"), row("b", "B")], src);
        assert_eq!(untranslated, Err("b is not translated".into()));
        let empty = check_translations(&en, &[row("a", " "), row("b", "Б")], src);
        assert_eq!(empty, Err("a is empty in Russian".into()));
        let shuffled = check_translations(&en, &[row("b", "Б"), row("a", "А")], src);
        assert!(
            shuffled.is_err(),
            "the two tables must list the same texts in order"
        );
    }

    #[test]
    fn weekday_wraps_instead_of_panicking() {
        assert_eq!(weekday(Language::En, 7), "Monday");
        assert_eq!(weekday(Language::En, 6), "Sunday");
    }
}
