//! Tag statistics across tables ("tags stats --source=…").

use crate::error::{Result, StorageError};
use crate::store::Store;
use crate::values::TagSource;

impl TagSource {
    /// The table this source reads.
    pub fn table(self) -> &'static str {
        match self {
            TagSource::Diary => "diary_entries",
            TagSource::Concepts => "concepts",
            TagSource::Links => "links",
            TagSource::Goals => "goals",
            TagSource::Tasks => "tasks",
            TagSource::Notes => "notes",
            TagSource::Memory => "llm_memory",
        }
    }
}

impl Store {
    /// How many rows carry each tag across `sources` (use [`TagSource::ALL`]
    /// for all), most used first, then by tag.
    pub fn tag_stats(&self, sources: &[TagSource]) -> Result<Vec<(String, u64)>> {
        if sources.is_empty() {
            return Err(StorageError::invalid("tag sources", "name at least one"));
        }
        let mut tables: Vec<&str> = sources.iter().map(|s| s.table()).collect();
        tables.sort_unstable();
        tables.dedup();
        let union = tables
            .iter()
            .map(|t| format!("SELECT j.value AS tag FROM {t}, json_each({t}.tags) AS j"))
            .collect::<Vec<_>>()
            .join(" UNION ALL ");
        let sql =
            format!("SELECT tag, count(*) AS n FROM ({union}) GROUP BY tag ORDER BY n DESC, tag");
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}
