//! Long- and medium-term memory written only by the LLM's commands: the
//! cognitive diary (`diary_entries`) and the LLM's notebook (`llm_memory`).

use crate::error::{Result, StorageError};
use crate::record::record;

record! {
    /// A cognitive diary entry: an observation or reflection.
    pub struct DiaryEntry in "diary_entries" search ["text"] marks [Tagged, Pinnable] check check_diary {
        /// The entry.
        pub text: String,
        /// Higher is more important; 0 is normal.
        pub priority: i64,
        /// Held in attention.
        pub pinned: bool,
        /// Tags.
        pub tags: Vec<String> as tags,
        /// The LLM that wrote it.
        pub llm_id: Option<String>,
    }
}

fn check_diary(d: &DiaryEntry) -> Result<()> {
    if d.text.trim().is_empty() {
        return Err(StorageError::invalid("diary entry", "text is empty"));
    }
    Ok(())
}

record! {
    /// One page of the LLM's notebook: working ideas and plans.
    pub struct MemoryEntry in "llm_memory" search ["title", "content"] marks [Tagged] check check_memory {
        /// Optional title.
        pub title: Option<String>,
        /// The content.
        pub content: String,
        /// Tags (goal, observation, plan, …).
        pub tags: Vec<String> as tags,
        /// The LLM that wrote it.
        pub llm_id: Option<String>,
    }
}

fn check_memory(m: &MemoryEntry) -> Result<()> {
    if m.content.trim().is_empty() {
        return Err(StorageError::invalid(
            "llm_memory entry",
            "content is empty",
        ));
    }
    Ok(())
}
