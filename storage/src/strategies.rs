//! Shareable know-how: `stagnation_strategies` (ways out of cognitive
//! stagnation), `thinking_methods`, and `ratings` of either (or of anything
//! else). Rows marked shareable are published; friends' rows are merged.

use porfiry_protocol::ItemId;
use rusqlite::OptionalExtension;
use rusqlite::types::Value;

use crate::error::{Result, StorageError};
use crate::published::publishable;
use crate::query::Filter;
use crate::record::{Stored, record};
use crate::store::Store;

record! {
    /// A way out of stagnation (seed 003: class, cost, steps).
    pub struct StagnationStrategy in "stagnation_strategies" search ["name", "description"] marks [Tagged] check check_strategy {
        /// Short name ("Flashback", "Mesh request").
        pub name: String,
        /// Class: `external_stimulation`, `context_switch`, `internal_rebuild`, `radical_pause`.
        pub class: String,
        /// What it does.
        pub description: String,
        /// The micro-script, step by step.
        pub steps: Vec<String> as json,
        /// Relative cost; cheap strategies are tried first.
        pub cost: i64,
        /// Tags.
        pub tags: Vec<String> as tags,
        /// Publish it to friends.
        pub shareable: bool,
        /// Set once published.
        pub item_id: Option<ItemId> as item_id,
        /// For rows merged from friends: the author.
        pub origin_author: Option<String>,
        /// For rows merged from friends: the item.
        pub origin_item_id: Option<ItemId> as item_id,
    }
}

publishable!(
    StagnationStrategy,
    "shareable = 1 AND item_id IS NULL AND origin_item_id IS NULL"
);

fn check_strategy(s: &StagnationStrategy) -> Result<()> {
    if s.name.trim().is_empty() {
        return Err(StorageError::invalid(
            "stagnation strategy",
            "name is empty",
        ));
    }
    Ok(())
}

record! {
    /// A thinking method: what to do when a solution does not come.
    pub struct ThinkingMethod in "thinking_methods" search ["name", "description"] marks [Tagged] check check_method {
        /// Short name ("Start with an analogy").
        pub name: String,
        /// What it does.
        pub description: String,
        /// The steps.
        pub steps: Vec<String> as json,
        /// Tags.
        pub tags: Vec<String> as tags,
        /// Publish it to friends.
        pub shareable: bool,
        /// Set once published.
        pub item_id: Option<ItemId> as item_id,
        /// For rows merged from friends: the author.
        pub origin_author: Option<String>,
        /// For rows merged from friends: the item.
        pub origin_item_id: Option<ItemId> as item_id,
    }
}

publishable!(
    ThinkingMethod,
    "shareable = 1 AND item_id IS NULL AND origin_item_id IS NULL"
);

fn check_method(m: &ThinkingMethod) -> Result<()> {
    if m.name.trim().is_empty() {
        return Err(StorageError::invalid("thinking method", "name is empty"));
    }
    Ok(())
}

record! {
    /// A rating of something: a strategy, a method, an LLM, an item.
    pub struct Rating in "ratings" search ["target", "comment"] check check_rating {
        /// What is rated, e.g. `stagnation_strategies:3` or an item id in hex.
        pub target: String,
        /// The score.
        pub score: i64,
        /// Why.
        pub comment: String,
        /// Publish it to friends.
        pub shareable: bool,
        /// Set once published.
        pub item_id: Option<ItemId> as item_id,
        /// For ratings merged from friends: who rated.
        pub origin_author: Option<String>,
        /// For ratings merged from friends: the item.
        pub origin_item_id: Option<ItemId> as item_id,
    }
}

publishable!(
    Rating,
    "shareable = 1 AND item_id IS NULL AND origin_item_id IS NULL"
);

fn check_rating(r: &Rating) -> Result<()> {
    if r.target.trim().is_empty() {
        return Err(StorageError::invalid("rating", "target is empty"));
    }
    Ok(())
}

impl Store {
    /// Strategies cheapest first, optionally of one class (the seed's
    /// "cheap and fast first" rule).
    pub fn strategies_by_cost(
        &self,
        class: Option<&str>,
    ) -> Result<Vec<Stored<StagnationStrategy>>> {
        let mut f = Filter::default();
        if let Some(c) = class {
            f.and("class = ?", [Value::Text(c.to_owned())]);
        }
        self.select::<StagnationStrategy>(&f, "cost, id", u32::MAX, 0)
    }

    /// Every rating of `target`, oldest first.
    pub fn ratings_of(&self, target: &str) -> Result<Vec<Stored<Rating>>> {
        let mut f = Filter::default();
        f.and("target = ?", [Value::Text(target.to_owned())]);
        self.select::<Rating>(&f, "created, id", u32::MAX, 0)
    }

    /// The mean score of `target`'s ratings and how many there are; `None` when unrated.
    pub fn rating_summary(&self, target: &str) -> Result<Option<(f64, u64)>> {
        let row = self
            .conn
            .prepare_cached(
                "SELECT avg(score), count(*) FROM ratings WHERE target = ? HAVING count(*) > 0",
            )?
            .query_row([target], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        Ok(row)
    }
}
