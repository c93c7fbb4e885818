//! `mesh_interact|question` (seed 003 § Mesh: "mesh interact — команды
//! взаимодействия с Mesh"): an explicit question to friends. The core posts
//! it as a note to friends and opens a `process_log` row (`mesh_interact`,
//! running) that names the note; at the start of each later tick the
//! friends' answers (notes whose `reply_to` is that note's item) are
//! gathered into the row, which then shows in context 2 as finished — or,
//! with no answer within [`MESH_ANSWER_WAIT`], times out. A restart of the
//! node does not end the wait: the start-up closes only its own jobs.

use std::time::Duration;

use porfiry_storage::{Note, ProcessEntry, ProcessStatus, Result, Store};

use crate::cognition::load::clip;

/// The process name of an open question: the command's own name, which the
/// node's start-up (`close_orphans`) also knows a question by.
pub const MESH_INTERACT_PROCESS: &str = porfiry_skills::cognition::tick::MESH_INTERACT_COMMAND;

/// How long a question waits for answers: friends' phones sync a few times
/// a day, so a day lets each of them see it at least once.
pub const MESH_ANSWER_WAIT: Duration = Duration::from_secs(24 * 3_600);

/// Answers gathered per question: a handful of friends answer; more would
/// crowd context 2.
pub const MAX_ANSWERS: u32 = 8;

/// One answer in the row's result is clipped to this.
const MAX_ANSWER_CHARS: usize = 300;

/// A question's longest text: a question, not a document.
pub const MAX_QUESTION_CHARS: usize = 1_000;

fn wait_ms() -> u64 {
    u64::try_from(MESH_ANSWER_WAIT.as_millis()).unwrap_or(u64::MAX)
}

/// The process row of a question posted as note `note`.
pub fn question_row(question: &str, note: i64) -> ProcessEntry {
    ProcessEntry {
        name: MESH_INTERACT_PROCESS.into(),
        command: serde_json::json!({ "question": question, "note": note }),
        status: ProcessStatus::Warning,
        result: None,
        ..Default::default()
    }
}

/// Fills open questions with the answers that came, or times them out.
/// Returns the ids of the rows it finished.
pub fn gather_answers(s: &Store, now_ms: u64) -> Result<Vec<i64>> {
    let mut finished = Vec::new();
    for p in s.processes_open()? {
        let open = p.row.name == MESH_INTERACT_PROCESS
            && p.row.status == ProcessStatus::Warning
            && p.row.result.is_none();
        let Some(note_id) = p.row.command["note"].as_i64().filter(|_| open) else {
            continue;
        };
        let item = match s.get::<Note>(note_id) {
            Ok(n) => n.row.item_id,
            Err(porfiry_storage::StorageError::NotFound { .. }) => None,
            Err(e) => return Err(e),
        };
        let answers = match &item {
            Some(item) => s.notes_replying_to(item, MAX_ANSWERS)?,
            None => Vec::new(),
        };
        if !answers.is_empty() {
            let text = answers
                .iter()
                .map(|a| {
                    let from = a
                        .row
                        .origin_author
                        .clone()
                        .unwrap_or_else(|| a.row.source.to_string());
                    format!("{from}: {}", clip(&a.row.text, MAX_ANSWER_CHARS))
                })
                .collect::<Vec<_>>()
                .join("\n");
            s.process_finish(p.id, ProcessStatus::Ok, &text, now_ms)?;
            finished.push(p.id);
        } else if item.is_none() || p.created_ms.saturating_add(wait_ms()) <= now_ms {
            let why = if item.is_none() {
                "the question's note is gone or was never sent"
            } else {
                "no friend answered within 24 h"
            };
            s.process_finish(p.id, ProcessStatus::Timeout, why, now_ms)?;
            finished.push(p.id);
        }
    }
    Ok(finished)
}
