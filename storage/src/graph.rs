//! The semantic graph: `concepts` (nodes) and `links` (typed edges between
//! them). Deleting a concept deletes its links (foreign key, cascade).

use rusqlite::types::Value;

use crate::error::{Result, StorageError};
use crate::query::Filter;
use crate::record::{Stored, record};
use crate::store::Store;

record! {
    /// A concept: a named idea, entity or notion.
    pub struct Concept in "concepts" search ["name", "description"] marks [Tagged, Pinnable] check check_concept {
        /// Unique name.
        pub name: String,
        /// Definition or description.
        pub description: String,
        /// Held in attention.
        pub pinned: bool,
        /// Tags.
        pub tags: Vec<String> as tags,
        /// The LLM that added it.
        pub llm_id: Option<String>,
    }
}

fn check_concept(c: &Concept) -> Result<()> {
    if c.name.trim().is_empty() {
        return Err(StorageError::invalid("concept", "name is empty"));
    }
    Ok(())
}

record! {
    /// A typed, weighted edge from one concept to another.
    pub struct Link in "links" search ["relation"] marks [Tagged] check check_link {
        /// Source concept id.
        pub from_concept: i64,
        /// Target concept id.
        pub to_concept: i64,
        /// Relation (`is_a`, `causes`, `related_to`, …).
        pub relation: String,
        /// Strength of the relation.
        pub weight: f64,
        /// Tags.
        pub tags: Vec<String> as tags,
        /// The LLM that added it.
        pub llm_id: Option<String>,
    }
}

fn check_link(l: &Link) -> Result<()> {
    if l.relation.trim().is_empty() {
        return Err(StorageError::invalid("link", "relation is empty"));
    }
    if !l.weight.is_finite() {
        return Err(StorageError::invalid(
            "link",
            "weight is not a finite number",
        ));
    }
    Ok(())
}

impl Store {
    /// The concept with this exact name, if any.
    pub fn concept_by_name(&self, name: &str) -> Result<Option<Stored<Concept>>> {
        let mut f = Filter::default();
        f.and("name = ?", [Value::Text(name.to_owned())]);
        Ok(self.select::<Concept>(&f, "id", 1, 0)?.pop())
    }

    /// Every link from or to `concept_id`, oldest first.
    pub fn links_of(&self, concept_id: i64) -> Result<Vec<Stored<Link>>> {
        let mut f = Filter::default();
        f.and(
            "(from_concept = ? OR to_concept = ?)",
            [Value::Integer(concept_id), Value::Integer(concept_id)],
        );
        self.select::<Link>(&f, "created, id", u32::MAX, 0)
    }
}
