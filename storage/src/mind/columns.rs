//! Which columns of each long-term memory table travel between a person's
//! devices, and as what. The names a received record may write are only
//! these: a field named anything else is refused, so a device can never
//! make this node write a column (or a table) the list does not hold.
//! `id` (local) and `updated` (set on write) never travel.

use porfiry_protocol::mind::MindTable;

/// What a column holds and how it travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ColumnKind {
    /// An integer, as an integer.
    Int,
    /// Text, as text.
    Text,
    /// A 0/1 flag, as a boolean.
    Flag,
    /// A real number, as its shortest decimal text (which parses back to
    /// the same `f64`): the record's values are text, integers and flags.
    Real,
    /// The local id of a row of another memory table, as that row's record
    /// key in hex: local ids differ between devices, keys do not.
    Ref(MindTable),
}

/// One column that travels.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Column {
    /// Its name, in SQL and in the record's fields.
    pub name: &'static str,
    /// What it holds.
    pub kind: ColumnKind,
    /// Whether it may be NULL (an absent field).
    pub nullable: bool,
}

const fn col(name: &'static str, kind: ColumnKind, nullable: bool) -> Column {
    Column {
        name,
        kind,
        nullable,
    }
}

use ColumnKind::{Flag, Int, Real, Ref, Text};

const DIARY: &[Column] = &[
    col("text", Text, false),
    col("priority", Int, false),
    col("pinned", Flag, false),
    col("tags", Text, false),
    col("llm_id", Text, true),
    col("created", Int, false),
];

const CONCEPT: &[Column] = &[
    col("name", Text, false),
    col("description", Text, false),
    col("pinned", Flag, false),
    col("tags", Text, false),
    col("llm_id", Text, true),
    col("created", Int, false),
];

const LINK: &[Column] = &[
    col("from_concept", Ref(MindTable::Concept), false),
    col("to_concept", Ref(MindTable::Concept), false),
    col("relation", Text, false),
    col("weight", Real, false),
    col("tags", Text, false),
    col("llm_id", Text, true),
    col("created", Int, false),
];

const GOAL: &[Column] = &[
    col("title", Text, false),
    col("description", Text, false),
    col("status", Text, false),
    col("priority", Int, false),
    col("tags", Text, false),
    col("llm_id", Text, true),
    col("created", Int, false),
];

const TASK: &[Column] = &[
    col("goal_id", Ref(MindTable::Goal), true),
    col("title", Text, false),
    col("description", Text, false),
    col("status", Text, false),
    col("priority", Int, false),
    col("pinned", Flag, false),
    col("tags", Text, false),
    col("llm_id", Text, true),
    col("created", Int, false),
];

const LLM_MEMORY: &[Column] = &[
    col("title", Text, true),
    col("content", Text, false),
    col("tags", Text, false),
    col("llm_id", Text, true),
    col("created", Int, false),
];

/// The SQL table a record of `table` lives in.
pub(crate) const fn sql_table(table: MindTable) -> &'static str {
    match table {
        MindTable::Diary => "diary_entries",
        MindTable::Concept => "concepts",
        MindTable::Link => "links",
        MindTable::Goal => "goals",
        MindTable::Task => "tasks",
        MindTable::LlmMemory => "llm_memory",
    }
}

/// The columns of `table` that travel, in schema order.
pub(crate) const fn columns(table: MindTable) -> &'static [Column] {
    match table {
        MindTable::Diary => DIARY,
        MindTable::Concept => CONCEPT,
        MindTable::Link => LINK,
        MindTable::Goal => GOAL,
        MindTable::Task => TASK,
        MindTable::LlmMemory => LLM_MEMORY,
    }
}

/// Publishing order: a table another refers to comes first, so a device
/// receiving a link or a task in order finds its concepts and goal.
pub(crate) const PUBLISH_ORDER: [MindTable; 6] = [
    MindTable::Concept,
    MindTable::Goal,
    MindTable::Diary,
    MindTable::LlmMemory,
    MindTable::Link,
    MindTable::Task,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DB_FILE_NAME;
    use crate::store::Store;

    /// Every column named here exists in the schema (a renamed column
    /// would otherwise fail only when a record arrives), and every column
    /// of the schema but `id` and `updated` travels (a new column forgotten
    /// here would silently stay on one device).
    #[test]
    fn the_lists_match_the_schema() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::create(dir.path().join(DB_FILE_NAME)).unwrap();
        for t in MindTable::ALL {
            let mut schema: Vec<String> = s
                .conn
                .prepare(&format!(
                    "SELECT name FROM pragma_table_info('{}')",
                    sql_table(t)
                ))
                .unwrap()
                .query_map([], |r| r.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            schema.retain(|c| c != "id" && c != "updated");
            let listed: Vec<&str> = columns(t).iter().map(|c| c.name).collect();
            assert_eq!(schema, listed, "{t}");
        }
        let mut order = PUBLISH_ORDER.to_vec();
        order.sort();
        assert_eq!(order, MindTable::ALL.to_vec());
    }
}
