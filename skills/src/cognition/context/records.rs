//! How each block's records look in the prompt: one line per record
//! (a recent reply adds its reflection line), whitespace collapsed, at most
//! [`MAX_RECORD_CHARS`] characters of text.

use super::ContextBlock;
use super::data::{ContextData, Line, NoteLine, NotesView, ProcessLine, RecentLine};
use crate::Language;
use crate::cognition::budget::Block;
use crate::cognition::texts::prompt as texts;

/// A record is shown with at most this many characters (about 100 English
/// or 250 Russian tokens): one long diary entry or reply must not take a
/// phone model's whole context; `diary_read` and its kin show it whole.
pub const MAX_RECORD_CHARS: usize = 400;

/// A block over `data`'s records of `kind`, rendering lazily.
pub(super) fn block_of<'a>(data: &'a ContextData, lang: Language, kind: ContextBlock) -> Block<'a> {
    let share = kind.share_percent();
    match kind {
        // Rendered last line first, so that the kept "newest" run is the
        // catalogue's first lines (the node lists `help` first).
        ContextBlock::Catalogue => {
            let sets = data.catalogue.len();
            Block::new(sets, share, move |i| clip(&data.catalogue[sets - 1 - i]))
        }
        ContextBlock::Utilities => {
            Block::new(data.utilities.len(), share, |i| clip(&data.utilities[i]))
        }
        ContextBlock::Recent => Block::new(data.recent.len(), share, move |i| {
            recent_record(lang, &data.recent[i])
        }),
        ContextBlock::Goals => Block::new(data.goals.len(), share, |i| id_line(&data.goals[i])),
        ContextBlock::PinnedTasks => Block::new(data.pinned_tasks.len(), share, |i| {
            id_line(&data.pinned_tasks[i])
        }),
        ContextBlock::Processes => Block::new(data.processes.len(), share, move |i| {
            process_record(lang, &data.processes[i])
        }),
        ContextBlock::Requested => Block::new(data.requested.len(), share, |i| {
            clip(&data.requested[i].text)
        }),
        ContextBlock::Notes => match &data.notes {
            NotesView::Manual { unread, .. } => Block::new(unread.len(), share, |i| {
                let n = &unread[i];
                let mut out = format!("#{} p{} {}", n.id, n.priority, n.from);
                if !n.hashtags.is_empty() {
                    let tags: Vec<String> = n.hashtags.iter().map(|t| format!("#{t}")).collect();
                    out.push_str(&format!(" {}", tags.join(" ")));
                }
                clip(&out)
            }),
            NotesView::Auto { notes } => Block::new(notes.len(), share, |i| note_record(&notes[i])),
        },
        ContextBlock::Settings => Block::new(data.settings.len(), share, |i| {
            let (key, value) = &data.settings[i];
            clip(&format!("{key} = {value}"))
        }),
        ContextBlock::Memory => Block::new(data.memory.len(), share, |i| id_line(&data.memory[i])),
    }
}

/// `#12 [mesh, ethics] {joy:3}: reply` and its reflection line.
fn recent_record(lang: Language, r: &RecentLine) -> String {
    let mut out = format!("#{}", r.id);
    if !r.tags.is_empty() {
        out.push_str(&format!(" [{}]", r.tags.join(", ")));
    }
    if !r.emotions.is_empty() {
        out.push_str(&format!(" {{{}}}", r.emotions.join(", ")));
    }
    out.push_str(": ");
    out.push_str(&clip(&r.content));
    if !r.reflection.trim().is_empty() {
        out.push('\n');
        out.push_str(texts::reflection_label(lang));
        out.push_str(&clip(&r.reflection));
    }
    out
}

/// `#5 llm_task [running]` or `#6 process_start [ok] result`.
fn process_record(lang: Language, p: &ProcessLine) -> String {
    match &p.result {
        None if p.status == "warning" => {
            format!("#{} {} [{}]", p.id, p.name, texts::process_running(lang))
        }
        None => format!("#{} {} [{}]", p.id, p.name, p.status),
        Some(result) => format!("#{} {} [{}] {}", p.id, p.name, p.status, clip(result)),
    }
}

/// `#7 p2 alice [mesh]: text`.
fn note_record(n: &NoteLine) -> String {
    let tags = if n.tags.is_empty() {
        String::new()
    } else {
        format!(" [{}]", n.tags.join(", "))
    };
    format!(
        "#{} p{} {}{tags}: {}",
        n.id,
        n.priority,
        n.from,
        clip(&n.text)
    )
}

/// `#3 text`.
fn id_line(line: &Line) -> String {
    format!("#{} {}", line.id, clip(&line.text))
}

/// Whitespace collapsed, at most [`MAX_RECORD_CHARS`] characters (the last
/// one `…` when cut).
fn clip(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_RECORD_CHARS * 2));
    let mut count = 0;
    for word in text.split_whitespace() {
        let sep = (!out.is_empty()).then_some(' ');
        for c in sep.into_iter().chain(word.chars()) {
            if count == MAX_RECORD_CHARS {
                out.pop();
                out.push('…');
                return out;
            }
            out.push(c);
            count += 1;
        }
    }
    out
}

/// The start of `text` that is enough for its record: the builder shows at
/// most [`MAX_RECORD_CHARS`] characters of a field, so a loader keeps only
/// up to the `MAX_RECORD_CHARS + 2`-th non-blank character and a 30 KB note
/// is not carried into the prompt builder whole. The record built from the
/// prefix is the record built from the whole text.
pub fn record_prefix(text: &str) -> &str {
    let mut seen = 0;
    for (i, c) in text.char_indices() {
        if !c.is_whitespace() {
            seen += 1;
            if seen == MAX_RECORD_CHARS + 2 {
                return &text[..i + c.len_utf8()];
            }
        }
    }
    text
}

#[cfg(test)]
mod prefix_tests {
    use super::*;

    #[test]
    fn a_prefix_gives_the_same_clipped_record() {
        let long_word = "x".repeat(5_000);
        let spaced = format!(
            "{}{}",
            "a ".repeat(399),
            " \n\t ".repeat(1_000) + "tail words"
        );
        let cyrillic = "слово ".repeat(2_000);
        let exact = "y".repeat(MAX_RECORD_CHARS);
        for text in [long_word.as_str(), &spaced, &cyrillic, &exact, "short", ""] {
            assert_eq!(clip(record_prefix(text)), clip(text), "{:.40}", text);
        }
        assert!(record_prefix(&long_word).len() < 500);
    }
}
