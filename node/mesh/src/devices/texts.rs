//! What the core reads of a conflict between two devices' versions of one
//! record (HMP's `resolve_conflict`): a pinned task naming both versions
//! and what each says, in the node's language. Kept together here, in
//! English and Russian, like every text a model sees.

use porfiry_protocol::mind::{MindRecord, MindTable, MindValue};
use porfiry_skills::Language;
use porfiry_storage::mind::OpenConflict;

/// Most characters of each version's text quoted in the task: enough to
/// tell the two apart and decide, while two quotes and the frame stay far
/// under a task description's limit and a small model's context.
pub const QUOTE_CHARS: usize = 400;

/// The field that says what a record of `table` is about.
fn main_field(table: MindTable) -> &'static str {
    match table {
        MindTable::Diary => "text",
        MindTable::Concept => "name",
        MindTable::Link => "relation",
        MindTable::Goal | MindTable::Task => "title",
        MindTable::LlmMemory => "content",
        MindTable::Strategy | MindTable::Method | MindTable::Llm => "name",
        MindTable::Rating => "comment",
    }
}

/// What a version says, quoted: its main field cut to [`QUOTE_CHARS`],
/// then the other fields that differ from `other`'s.
fn quote(v: &MindRecord, other: &MindRecord) -> String {
    let main = main_field(v.table);
    let text = match v.fields.get(main) {
        Some(MindValue::Text(t)) => t.chars().take(QUOTE_CHARS).collect::<String>(),
        _ => String::new(),
    };
    let mut out = format!("\"{text}\"");
    for (name, value) in &v.fields {
        if name != main && other.fields.get(name) != Some(value) {
            let shown = match value {
                MindValue::Text(t) => t.chars().take(80).collect::<String>(),
                MindValue::Int(i) => i.to_string(),
                MindValue::Bool(b) => b.to_string(),
            };
            out.push_str(&format!("; {name}={shown}"));
        }
    }
    out
}

/// Most characters of each version quoted in the task's title: the core
/// sees a pinned task by its title alone (context 1), so the title names
/// both versions, short enough to stay one line.
pub const TITLE_QUOTE_CHARS: usize = 40;

/// A version's main text cut to [`TITLE_QUOTE_CHARS`], quoted.
fn title_quote(v: &MindRecord) -> String {
    match v.fields.get(main_field(v.table)) {
        Some(MindValue::Text(t)) => {
            let cut: String = t.chars().take(TITLE_QUOTE_CHARS).collect();
            let more = if t.chars().count() > TITLE_QUOTE_CHARS {
                "…"
            } else {
                ""
            };
            format!("\"{cut}{more}\"")
        }
        _ => "\"\"".to_owned(),
    }
}

fn short(peer: &str) -> &str {
    peer.get(peer.len().saturating_sub(8)..).unwrap_or(peer)
}

fn table_name(table: MindTable, language: Language) -> &'static str {
    match (language, table) {
        (Language::Ru, MindTable::Diary) => "запись дневника",
        (Language::Ru, MindTable::Concept) => "понятие",
        (Language::Ru, MindTable::Link) => "связь",
        (Language::Ru, MindTable::Goal) => "цель",
        (Language::Ru, MindTable::Task) => "задача",
        (Language::Ru, MindTable::LlmMemory) => "заметка блокнота",
        (Language::Ru, MindTable::Strategy) => "стратегия выхода из застоя",
        (Language::Ru, MindTable::Method) => "метод мышления",
        (Language::Ru, MindTable::Rating) => "оценка",
        (Language::Ru, MindTable::Llm) => "модель из реестра",
        (_, MindTable::Diary) => "diary entry",
        (_, MindTable::Concept) => "concept",
        (_, MindTable::Link) => "link",
        (_, MindTable::Goal) => "goal",
        (_, MindTable::Task) => "task",
        (_, MindTable::LlmMemory) => "notebook line",
        (_, MindTable::Strategy) => "stagnation strategy",
        (_, MindTable::Method) => "thinking method",
        (_, MindTable::Rating) => "rating",
        (_, MindTable::Llm) => "registered model",
    }
}

/// The title and description of the task for conflict `c`.
pub fn conflict_task(language: Language, c: &OpenConflict) -> (String, String) {
    let [a, b] = &c.versions;
    let [who_a, who_b] = &c.authors;
    let what = table_name(c.table, language);
    let key = hex::encode(&c.record[..4]);
    match language {
        Language::Ru => (
            format!(
                "resolve_conflict: {what} {key}: {} / {}",
                title_quote(a),
                title_quote(b)
            ),
            format!(
                "Два устройства изменили эту запись ({what} {key}), пока не были связаны. \
                 Версия устройства …{}: {}. Версия устройства …{}: {}. \
                 Сейчас показана одна из них; оставь верную, объедини их или исправь запись, затем закрой задачу.",
                short(who_a),
                quote(a, b),
                short(who_b),
                quote(b, a)
            ),
        ),
        _ => (
            format!(
                "resolve_conflict: {what} {key}: {} / {}",
                title_quote(a),
                title_quote(b)
            ),
            format!(
                "Two devices changed this record ({what} {key}) while apart. \
                 Device …{}'s version: {}. Device …{}'s version: {}. \
                 One of them is shown now; keep the right one, merge them or correct the record, then close this task.",
                short(who_a),
                quote(a, b),
                short(who_b),
                quote(b, a)
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use porfiry_protocol::mind::VersionVector;

    use super::*;

    fn version(text: &str, priority: i64) -> MindRecord {
        let mut fields = BTreeMap::new();
        fields.insert("text".to_owned(), MindValue::Text(text.to_owned()));
        fields.insert("priority".to_owned(), MindValue::Int(priority));
        let mut vv = VersionVector::new();
        vv.bump("12D3KooWdevice").unwrap();
        MindRecord {
            table: MindTable::Diary,
            key: [7; 16],
            vv,
            at_ms: 1,
            deleted: false,
            fields,
        }
    }

    #[test]
    fn a_conflict_task_names_both_versions_in_both_languages() {
        let c = OpenConflict {
            key: [1; 16],
            table: MindTable::Diary,
            record: [7; 16],
            versions: [version("bought milk", 0), version("bought bread", 2)],
            authors: ["12D3KooWphone111".into(), "12D3KooWserver22".into()],
        };
        let (title, text) = conflict_task(Language::En, &c);
        assert_eq!(
            title,
            "resolve_conflict: diary entry 07070707: \"bought milk\" / \"bought bread\""
        );
        assert!(text.contains("\"bought milk\""), "{text}");
        assert!(text.contains("\"bought bread\"; priority=2"), "{text}");
        assert!(
            text.contains("…phone111") && text.contains("…server22"),
            "{text}"
        );
        let (title, text) = conflict_task(Language::Ru, &c);
        assert_eq!(
            title,
            "resolve_conflict: запись дневника 07070707: \"bought milk\" / \"bought bread\""
        );
        assert!(text.contains("Два устройства") && text.contains("\"bought milk\""));
    }

    #[test]
    fn know_how_and_registry_conflicts_quote_their_name_or_comment() {
        let named = |table: MindTable, field: &str, text: &str| {
            let mut v = version("", 0);
            v.table = table;
            v.fields.clear();
            v.fields
                .insert(field.to_owned(), MindValue::Text(text.to_owned()));
            v
        };
        for (table, field, en, ru) in [
            (
                MindTable::Strategy,
                "name",
                "stagnation strategy",
                "стратегия выхода из застоя",
            ),
            (
                MindTable::Method,
                "name",
                "thinking method",
                "метод мышления",
            ),
            (MindTable::Rating, "comment", "rating", "оценка"),
            (
                MindTable::Llm,
                "name",
                "registered model",
                "модель из реестра",
            ),
        ] {
            let c = OpenConflict {
                key: [1; 16],
                table,
                record: [7; 16],
                versions: [named(table, field, "qwen"), named(table, field, "llama")],
                authors: ["a".into(), "b".into()],
            };
            let (title, _) = conflict_task(Language::En, &c);
            assert_eq!(
                title,
                format!("resolve_conflict: {en} 07070707: \"qwen\" / \"llama\"")
            );
            let (title, _) = conflict_task(Language::Ru, &c);
            assert!(title.contains(ru), "{title}");
        }
    }

    #[test]
    fn a_long_text_is_cut_to_the_quote_limit() {
        let long = "ж".repeat(QUOTE_CHARS * 3);
        let c = OpenConflict {
            key: [1; 16],
            table: MindTable::Diary,
            record: [7; 16],
            versions: [version(&long, 0), version("short", 0)],
            authors: ["a".into(), "b".into()],
        };
        let (title, text) = conflict_task(Language::En, &c);
        assert_eq!(text.matches('ж').count(), QUOTE_CHARS);
        assert_eq!(title.matches('ж').count(), TITLE_QUOTE_CHARS);
        assert!(title.contains("ж…\" / \"short\""), "{title}");
    }
}
