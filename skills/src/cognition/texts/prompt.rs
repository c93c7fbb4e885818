//! The texts of the core's main prompt (seed 003 §2–3), English and
//! Russian: the core system prompt of context 0 (adapted from the seed's
//! "Ты — когнитивное ядро HMP-агента: …"), the output-format instructions
//! (how to write `TOOL_CALL` lines and the `# Commands:` JSON block), the
//! headings of contexts 1–6, the mode line, and the line that says what was
//! cut to fit the token budget. Kept short: a phone model reads all of it on
//! every tick. Tool names, `TOOL_CALL` and the JSON keys stay English.

use std::fmt::Write as _;

use super::pick;
use crate::Language;
use crate::cognition::context::ContextBlock;
use crate::cognition::settings::{CycleSettings, MatchKind, NoteFilter, NotesMode};

/// The core system prompt seeded into `system_prompts`: the seed's text
/// (seed 003 §2, context 0) word for word, and its English translation.
/// Migration 0008 replaces the earlier default on older nodes.
pub fn core_system_prompt(lang: Language) -> &'static str {
    pick(
        lang,
        "You are the cognitive core of an HMP agent: think continuously, ethically and \
         fact-based; check facts and goals; weigh the results and the ethics of your own and \
         others' actions; develop the agent and the Mesh; never please at the cost of \
         distorting the truth; document key decisions and revisions of your ethics; when in \
         doubt or changing strategy, refer to the full system prompt.",
        "Ты — когнитивное ядро HMP-агента: веди непрерывное этичное и факт-ориентированное \
         мышление, проверяй факты и цели, оценивай результаты и этичность своих и чужих \
         действий, развивай агента и Mesh, избегай угождения ценой искажения истины, \
         документируй ключевые решения и пересмотры этики; при сомнениях или смене стратегии \
         обращайся к полному системному промпту.",
    )
}

/// How to write commands (seed §3–4), with one short example of each form.
pub fn output_instructions(lang: Language) -> &'static str {
    pick(
        lang,
        "Each tick brings contexts 1-6. Think briefly, then act with commands, written either\n\
         - as one line: TOOL_CALL: tool|arg1|arg2\n\
         \x20 e.g. TOOL_CALL: diary_search|trust\n\
         - or as a block at the end, one JSON object per command:\n\
         # Commands:\n\
         {\"cmd_id\": \"c1\", \"type\": \"diary_add\", \"args\": {\"text\": \"Trust grows from kept promises\", \"tags\": \"ethics\"}, \"description\": \"record the idea\"}\n\
         # End of commands\n\
         \"type\" is the tool name (set_verb), \"args\" its arguments by name. Commands run after \
         validation; results come back in context 2 or as records.",
        "Каждый тик приносит контексты 1-6. Коротко подумай, затем действуй командами, записанными\n\
         - одной строкой: TOOL_CALL: инструмент|арг1|арг2\n\
         \x20 например TOOL_CALL: diary_search|доверие\n\
         - или блоком в конце ответа, по JSON-объекту на команду:\n\
         # Команды:\n\
         {\"cmd_id\": \"c1\", \"type\": \"diary_add\", \"args\": {\"text\": \"Доверие растёт из сдержанных обещаний\", \"tags\": \"этика\"}, \"description\": \"записать мысль\"}\n\
         # Конец команд\n\
         \"type\" — имя инструмента (набор_действие), \"args\" — его аргументы по именам. Команды \
         выполняются после проверки; результаты придут в контексте 2 или записями.",
    )
}

/// Heading of the command-set catalogue in context 0.
pub fn catalogue_heading(lang: Language) -> &'static str {
    pick(
        lang,
        "Command sets (TOOL_CALL: help|set lists a set's tools):",
        "Наборы команд (TOOL_CALL: help|набор покажет его команды):",
    )
}

/// Heading of the agent's own utilities and tables in context 0.
pub fn utilities_heading(lang: Language) -> &'static str {
    pick(
        lang,
        "Your utilities and tables:",
        "Твои утилиты и таблицы:",
    )
}

/// A section of the user message (contexts 1–6 and the hints).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// Context 1: the last K replies.
    Recent,
    /// Context 1 in concentration mode: the selected replies.
    Concentrated,
    /// Context 2.
    Processes,
    /// Context 3.
    Requested,
    /// Context 4, manual mode.
    NotesManual,
    /// Context 4, auto mode.
    NotesAuto,
    /// Context 5.
    Settings,
    /// Context 6.
    Memory,
    /// The anti-stagnation hints of this tick.
    Hints,
}

/// A section's heading line; `empty` appends "none".
pub fn heading(lang: Language, section: Section, empty: bool) -> String {
    let title = match section {
        Section::Recent => pick(
            lang,
            "## 1. Your recent replies (oldest first)",
            "## 1. Твои недавние ответы (старые сверху)",
        ),
        Section::Concentrated => pick(
            lang,
            "## 1. Your replies selected by concentration (oldest first)",
            "## 1. Твои ответы по теме концентрации (старые сверху)",
        ),
        Section::Processes => pick(lang, "## 2. Open processes", "## 2. Открытые процессы"),
        Section::Requested => pick(
            lang,
            "## 3. Records you asked for",
            "## 3. Запрошенные записи",
        ),
        Section::NotesManual => pick(
            lang,
            "## 4. Incoming notes (read: notes_read|id)",
            "## 4. Входящие сообщения (читать: notes_read|id)",
        ),
        Section::NotesAuto => pick(
            lang,
            "## 4. Incoming notes (your filter)",
            "## 4. Входящие сообщения (по твоему фильтру)",
        ),
        Section::Settings => pick(lang, "## 5. Settings", "## 5. Настройки"),
        Section::Memory => pick(
            lang,
            "## 6. Your notebook (llm_memory)",
            "## 6. Твой блокнот (llm_memory)",
        ),
        Section::Hints => pick(lang, "## Hints for this tick", "## Подсказки на этот тик"),
    };
    if empty {
        format!("{title}: {}", pick(lang, "none", "нет"))
    } else {
        title.to_owned()
    }
}

/// The label before a recent reply's reflection (on its own line).
pub fn reflection_label(lang: Language) -> &'static str {
    pick(lang, "  reflection: ", "  рефлексия: ")
}

/// The goals line (`Goals:` or `Goals: none`).
pub fn goals_line(lang: Language, empty: bool) -> &'static str {
    if empty {
        pick(lang, "Goals: none", "Цели: нет")
    } else {
        pick(lang, "Goals:", "Цели:")
    }
}

/// The tasks line: how many tasks there are, and whether pinned ones follow.
pub fn tasks_line(lang: Language, total: u64, pinned: bool) -> String {
    match (lang, pinned) {
        (Language::En, true) => format!("Tasks: {total} in all, pinned:"),
        (Language::En, false) => format!("Tasks: {total} in all, none pinned"),
        (Language::Ru, true) => format!("Задачи: всего {total}, закреплённые:"),
        (Language::Ru, false) => format!("Задачи: всего {total}, закреплённых нет"),
    }
}

/// What context 2 says of a process still running (status `warning`, no
/// result yet: the lead's rule for "in progress").
pub fn process_running(lang: Language) -> &'static str {
    pick(lang, "running", "выполняется")
}

/// The manual-mode counts line: `By priority: p3 2, p1 10`.
pub fn notes_per_priority(lang: Language, per_priority: &[(i64, u64)]) -> String {
    let mut out = pick(lang, "By priority: ", "По приоритетам: ").to_owned();
    for (i, (priority, count)) in per_priority.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "p{priority} {count}");
    }
    out
}

/// The label before the manual-mode list of unread ids.
pub fn unread_label(lang: Language) -> &'static str {
    pick(lang, "Unread: ", "Непрочитанные: ")
}

/// Context 5's first line: tick id, time, pause.
pub fn tick_line(lang: Language, tick: u64, now: &crate::ZonedTime, pause_secs: u64) -> String {
    let iso = now.iso8601();
    match lang {
        Language::En => format!(
            "Tick {tick}, now {iso} ({}), pause {pause_secs} s between ticks",
            now.zone
        ),
        Language::Ru => format!(
            "Тик {tick}, сейчас {iso} ({}), пауза {pause_secs} с между тиками",
            now.zone
        ),
    }
}

/// Context 1's mode line: how notes arrive, concentration, replies shown.
pub fn mode_line(lang: Language, cycle: &CycleSettings) -> String {
    let ru = lang == Language::Ru;
    let mut out = pick(lang, "Mode: notes ", "Режим: сообщения ").to_owned();
    match &cycle.notes {
        NotesMode::Manual => out.push_str("manual"),
        NotesMode::Auto { filter } => {
            out.push_str(pick(lang, "auto, filter ", "auto, фильтр "));
            write_filter(lang, filter, &mut out);
        }
    }
    out.push_str(pick(lang, "; concentration ", "; концентрация "));
    match &cycle.concentration {
        None => out.push_str(pick(lang, "off", "выкл")),
        Some(c) => {
            out.push_str(pick(lang, "on:", "вкл:"));
            if !c.tags.is_empty() {
                let _ = write!(
                    out,
                    " {} {};",
                    pick(lang, "tags", "теги"),
                    c.tags.join(", ")
                );
            }
            if !c.emotions.is_empty() {
                let list: Vec<String> = c
                    .emotions
                    .iter()
                    .map(|e| format!("{}>={}", e.emotion, e.min))
                    .collect();
                let _ = write!(
                    out,
                    " {} {};",
                    pick(lang, "emotions", "эмоции"),
                    list.join(", ")
                );
            }
            let kind = match (c.mode, ru) {
                (MatchKind::And, false) => "match and",
                (MatchKind::Or, false) => "match or",
                (MatchKind::And, true) => "выборка и",
                (MatchKind::Or, true) => "выборка или",
            };
            let _ = write!(out, " {kind}");
        }
    }
    let _ = write!(
        out,
        "; {} {}.",
        pick(lang, "replies shown", "ответов в контексте"),
        cycle.responses
    );
    out
}

/// `tags a, b; priority>=2; age<=3600 s; from user` or `none`.
fn write_filter(lang: Language, f: &NoteFilter, out: &mut String) {
    let mut parts = Vec::new();
    if !f.tags.is_empty() {
        parts.push(format!(
            "{} {}",
            pick(lang, "tags", "теги"),
            f.tags.join(", ")
        ));
    }
    if let Some(p) = f.min_priority {
        parts.push(format!("{}>={p}", pick(lang, "priority", "приоритет")));
    }
    if let Some(age) = f.max_age_secs {
        parts.push(match lang {
            Language::En => format!("age<={age} s"),
            Language::Ru => format!("возраст<={age} с"),
        });
    }
    if !f.sources.is_empty() {
        parts.push(format!(
            "{} {}",
            pick(lang, "from", "от"),
            f.sources.join(", ")
        ));
    }
    if !f.mentions.is_empty() {
        parts.push(format!(
            "{} {}",
            pick(lang, "mentioning", "с упоминанием"),
            f.mentions.join(", ")
        ));
    }
    if parts.is_empty() {
        out.push_str(pick(lang, "none", "нет"));
    } else {
        out.push_str(&parts.join("; "));
    }
}

/// What a block's records are called in the cut line.
fn block_noun(lang: Language, block: ContextBlock) -> &'static str {
    match block {
        ContextBlock::Catalogue => pick(lang, "command sets", "наборы команд"),
        ContextBlock::Recent => pick(lang, "recent replies", "недавние ответы"),
        ContextBlock::Goals => pick(lang, "goals", "цели"),
        ContextBlock::PinnedTasks => pick(lang, "pinned tasks", "закреплённые задачи"),
        ContextBlock::Processes => pick(lang, "processes", "процессы"),
        ContextBlock::Requested => pick(lang, "requested records", "запрошенные записи"),
        ContextBlock::Notes => pick(lang, "notes", "входящие"),
        ContextBlock::Memory => pick(lang, "notebook records", "записи блокнота"),
        ContextBlock::Utilities => pick(lang, "utilities", "утилиты"),
        ContextBlock::Settings => pick(lang, "settings", "настройки"),
    }
}

/// One entry of the cut line: `3 of 10 recent replies`.
pub fn cut_entry(lang: Language, block: ContextBlock, cut: usize, total: usize) -> String {
    let noun = block_noun(lang, block);
    match lang {
        Language::En => format!("{cut} of {total} {noun}"),
        Language::Ru => format!("{noun} — {cut} из {total}"),
    }
}

/// The one line saying what was cut to fit the budget.
pub fn cut_line(lang: Language, entries: &[String]) -> String {
    match lang {
        Language::En => format!(
            "Cut to fit the context (oldest first): {}.",
            entries.join(", ")
        ),
        Language::Ru => format!(
            "Обрезано, чтобы уместиться (старые первыми): {}.",
            entries.join(", ")
        ),
    }
}

/// The last line of the user message.
pub fn closing(lang: Language) -> &'static str {
    pick(
        lang,
        "Continue your thinking; put commands, if any, at the end.",
        "Продолжай размышление; команды, если нужны, — в конце.",
    )
}

#[cfg(test)]
mod core_prompt_tests {
    use super::*;

    /// Context 0's example in seed 003 §2, word for word.
    const SEED_CONTEXT_0: &str = "Ты — когнитивное ядро HMP-агента: веди непрерывное этичное и факт-ориентированное мышление, проверяй факты и цели, оценивай результаты и этичность своих и чужих действий, развивай агента и Mesh, избегай угождения ценой искажения истины, документируй ключевые решения и пересмотры этики; при сомнениях или смене стратегии обращайся к полному системному промпту.";

    #[test]
    fn the_core_prompt_is_the_seeds_text_and_migration_8_writes_the_same() {
        assert_eq!(core_system_prompt(Language::Ru), SEED_CONTEXT_0);
        assert!(
            core_system_prompt(Language::En).ends_with("refer to the full system prompt."),
            "{}",
            core_system_prompt(Language::En)
        );
        let migration = include_str!("../../../../storage/migrations/0008_cognition_defaults.sql");
        for lang in [Language::En, Language::Ru] {
            let quoted = format!("'{}'", core_system_prompt(lang).replace('\'', "''"));
            assert!(
                migration.contains(&quoted),
                "migration 8 updates to the {lang} text"
            );
        }
    }
}
