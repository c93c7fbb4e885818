//! Which columns of each long-term memory table travel between a person's
//! devices, and as what. The names a received record may write are only
//! these: a field named anything else is refused, so a device can never
//! make this node write a column (or a table) the list does not hold.
//! `id` (local) and `updated` (set on write) never travel, nor the columns
//! [`local_columns`] names (each device's own publishing to friends, its
//! main model); the model registry's secret stays on each device
//! ([`ColumnKind::Config`]).

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
    /// A rating's target: `<table>:<local id>` of one of this person's
    /// rows travels as `<table>#<record key in hex>` (and is written back
    /// as the local id where the record lives); any other target (an item
    /// id, a friend's row) travels as it is.
    Target,
    /// The model registry's call settings, a JSON object: its local keys
    /// (the env var naming the API key, and anything named like a secret:
    /// `super::config::is_local_key`) never travel, and a received version
    /// keeps the row's own values of them here.
    Config,
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

use ColumnKind::{Config, Flag, Int, Real, Ref, Target, Text};

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

// The know-how tables and the registry travel only the person's own rows
// (`origin_author` NULL: a friend's row reaches each device from the
// friend). Whether a row is published to friends, and the item it was
// published as, stay with the device that publishes it.
const STRATEGY: &[Column] = &[
    col("name", Text, false),
    col("class", Text, false),
    col("description", Text, false),
    col("steps", Text, false),
    col("cost", Int, false),
    col("tags", Text, false),
    col("created", Int, false),
];

const METHOD: &[Column] = &[
    col("name", Text, false),
    col("description", Text, false),
    col("steps", Text, false),
    col("tags", Text, false),
    col("created", Int, false),
];

const RATING: &[Column] = &[
    col("target", Target, false),
    col("score", Int, false),
    col("comment", Text, false),
    col("created", Int, false),
];

const LLM: &[Column] = &[
    col("name", Text, false),
    col("endpoint", Text, false),
    col("model", Text, false),
    col("description", Text, false),
    col("features", Text, false),
    col("config", Config, false),
    col("is_validator", Flag, false),
    col("trust", Real, false),
    col("created", Int, false),
];

/// What a know-how row keeps to its device: publishing to friends.
const PUBLISHING: &[&str] = &["shareable", "item_id", "origin_author", "origin_item_id"];

/// What a registry row keeps to its device: publishing, and whether it is
/// this device's main model (a phone thinks with a small model, its
/// server with a large one; at most one row is main on each).
const LLM_LOCAL: &[&str] = &[
    "is_main",
    "shareable",
    "item_id",
    "origin_author",
    "origin_item_id",
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
        MindTable::Strategy => "stagnation_strategies",
        MindTable::Method => "thinking_methods",
        MindTable::Rating => "ratings",
        MindTable::Llm => "llm_registry",
    }
}

/// The table whose SQL name is `name`, if it is a memory table.
pub(crate) fn table_of_sql(name: &str) -> Option<MindTable> {
    MindTable::ALL.into_iter().find(|t| sql_table(*t) == name)
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
        MindTable::Strategy => STRATEGY,
        MindTable::Method => METHOD,
        MindTable::Rating => RATING,
        MindTable::Llm => LLM,
    }
}

/// The columns of `table` besides `id` and `updated` that never travel.
pub(crate) const fn local_columns(table: MindTable) -> &'static [&'static str] {
    match table {
        MindTable::Strategy | MindTable::Method | MindTable::Rating => PUBLISHING,
        MindTable::Llm => LLM_LOCAL,
        _ => &[],
    }
}

/// Whether `table` travels only the rows written here (`origin_author`
/// NULL), not those merged from friends' items.
pub(crate) const fn own_rows_only(table: MindTable) -> bool {
    !local_columns(table).is_empty()
}

/// Publishing order: a table another refers to comes first, so a device
/// receiving a link, a task or a rating in order finds its concepts, goal
/// or what it rates.
pub(crate) const PUBLISH_ORDER: [MindTable; 10] = [
    MindTable::Concept,
    MindTable::Goal,
    MindTable::Strategy,
    MindTable::Method,
    MindTable::Llm,
    MindTable::Diary,
    MindTable::LlmMemory,
    MindTable::Link,
    MindTable::Task,
    MindTable::Rating,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DB_FILE_NAME;
    use crate::store::Store;

    /// Every column named here exists in the schema (a renamed column
    /// would otherwise fail only when a record arrives), and every column
    /// of the schema but `id`, `updated` and the ones named local travels
    /// (a new column forgotten here would silently stay on one device).
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
            schema
                .retain(|c| c != "id" && c != "updated" && !local_columns(t).contains(&c.as_str()));
            for local in local_columns(t) {
                assert!(schema_has(&s, t, local), "{t}: no local column {local}");
            }
            let listed: Vec<&str> = columns(t).iter().map(|c| c.name).collect();
            assert_eq!(schema, listed, "{t}");
        }
        for t in MindTable::ALL {
            assert_eq!(table_of_sql(sql_table(t)), Some(t));
        }
        assert_eq!(table_of_sql("notes"), None);
        let mut order = PUBLISH_ORDER.to_vec();
        order.sort();
        assert_eq!(order, MindTable::ALL.to_vec());
    }

    fn schema_has(s: &Store, t: MindTable, column: &str) -> bool {
        s.conn
            .prepare(&format!(
                "SELECT 1 FROM pragma_table_info('{}') WHERE name = ?",
                sql_table(t)
            ))
            .unwrap()
            .exists([column])
            .unwrap()
    }
}
