//! Short-term memory: `llm_recent_responses`, the LLM's recent replies with
//! their anti-stagnation analysis (novelty, ideas, tags, emotions) and
//! cognitive validation (validator votes, rating, auto_pass).

use std::collections::BTreeMap;

use rusqlite::types::Value;
use serde::{Deserialize, Serialize};

use crate::casefold::casefold;
use crate::error::{Result, StorageError};
use crate::query::{Filter, resolve_limit};
use crate::record::{Stored, record};
use crate::store::Store;

/// Emotion strengths run from 1 (faint) to this (seed 003: "сила от 1 до 5").
pub const MAX_EMOTION_STRENGTH: u8 = 5;

/// Validator votes run from -this to +this (seed 003: "-3 .. +3").
pub const MAX_VALIDATOR_RATING: i8 = 3;

/// One validator's vote on a reply, stored as the seed writes it:
/// `{"LLM": "gpt-4", "rating": -1}` (an older lower-case `"llm"` still reads).
/// A vote by the main model on its own reply, the only one, says so (seed
/// §6: "фиксируется в `validators` как самооценка"):
/// `{"LLM": "qwen", "rating": 2, "self_validation": true}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValidatorVote {
    /// The validating LLM (its `llm_registry` name).
    #[serde(rename = "LLM", alias = "llm")]
    pub llm: String,
    /// Its vote, -3 ..= +3.
    pub rating: i8,
    /// The voter is the main model judging its own reply.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub self_validation: bool,
}

record! {
    /// One recent reply of the LLM and what the reflexes made of it.
    pub struct RecentResponse in "llm_recent_responses" search ["content", "reflection"] marks [Tagged] check check_response {
        /// The full reply.
        pub content: String,
        /// Short summary of new / refined / discarded ideas.
        pub reflection: String,
        /// Quantitative novelty; `None` before it was judged.
        pub novelty_score: Option<f64>,
        /// New ideas.
        pub new_ideas: Vec<String> as json,
        /// Ideas refined from earlier replies.
        pub refined_ideas: Vec<String> as json,
        /// Ideas dropped.
        pub discarded_ideas: Vec<String> as json,
        /// Semantic tags of the reply.
        pub tags: Vec<String> as tags,
        /// Emotions as the seed lists them, `["joy:3", "anxiety:1"]`:
        /// `name:strength`, strength 1 ..= 5 (see [`parse_emotion`]).
        pub emotions: Vec<String> as json,
        /// This row records an anti-stagnation reflex firing instead of a repeated reply.
        pub stagnation_reflex: bool,
        /// No validators existed, so the reply passed unvalidated.
        pub auto_pass: bool,
        /// The only validator was the main LLM itself.
        pub self_validation: bool,
        /// Mean validator vote (0 with auto_pass).
        pub rating: f64,
        /// Votes per value with the seed's keys, `{"-1": 1, "0": 2, "+2": 3}`
        /// (see [`vote_key`]).
        pub distribution: BTreeMap<String, u32> as json,
        /// The raw votes, `[{"LLM": "gpt-4", "rating": -1}]`.
        pub validators: Vec<ValidatorVote> as json,
        /// The LLM that replied.
        pub llm_id: Option<String>,
    }
}

/// Splits one stored emotion `"joy:3"` into its name and strength; `None`
/// when it is not `name:strength` with a non-empty name without `:` and a
/// strength 1 ..= [`MAX_EMOTION_STRENGTH`].
pub fn parse_emotion(entry: &str) -> Option<(&str, u8)> {
    let (name, strength) = entry.split_once(':')?;
    let strength: u8 = strength.parse().ok()?;
    let ok = !name.trim().is_empty() && (1..=MAX_EMOTION_STRENGTH).contains(&strength);
    ok.then_some((name, strength))
}

/// The seed's key for a vote in `distribution`: `"+2"`, `"0"`, `"-1"`.
pub fn vote_key(vote: i8) -> String {
    if vote > 0 {
        format!("+{vote}")
    } else {
        vote.to_string()
    }
}

fn check_response(r: &RecentResponse) -> Result<()> {
    let bad = |reason: String| Err(StorageError::invalid("recent response", reason));
    if let Some(e) = r.emotions.iter().find(|e| parse_emotion(e).is_none()) {
        return bad(format!(
            "emotion {e:?} is not \"name:strength\" with strength 1 to {MAX_EMOTION_STRENGTH}"
        ));
    }
    let in_range = |v: i8| (-MAX_VALIDATOR_RATING..=MAX_VALIDATOR_RATING).contains(&v);
    if let Some(v) = r.validators.iter().find(|v| !in_range(v.rating)) {
        return bad(format!(
            "vote {} by {:?} is outside -3..=3",
            v.rating, v.llm
        ));
    }
    let keys: Vec<String> = (-MAX_VALIDATOR_RATING..=MAX_VALIDATOR_RATING)
        .map(vote_key)
        .collect();
    if let Some(k) = r.distribution.keys().find(|k| !keys.contains(k)) {
        return bad(format!(
            "distribution key {k:?} is not one of {}",
            keys.join(", ")
        ));
    }
    if !r.rating.is_finite() || r.novelty_score.is_some_and(|n| !n.is_finite()) {
        return bad("rating and novelty must be finite numbers".into());
    }
    Ok(())
}

/// How the conditions of a [`Concentration`] combine (seed 003: "и" / "или").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MatchMode {
    /// Every condition must hold.
    #[default]
    All,
    /// Any one condition is enough.
    Any,
}

/// The "concentration" mode of context 1: recent replies with these tags
/// and/or emotions at or above a strength.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Concentration {
    /// Tags the reply must carry.
    pub tags: Vec<String>,
    /// Emotions with a minimum strength, e.g. ("anxiety", 2).
    pub emotions: Vec<(String, u8)>,
    /// How conditions combine.
    pub mode: MatchMode,
    /// At most this many replies (`None` = default list limit).
    pub limit: Option<u32>,
}

impl Store {
    /// The `k` most recent replies, newest first (context 1).
    pub fn responses_recent(&self, k: u32) -> Result<Vec<Stored<RecentResponse>>> {
        self.select::<RecentResponse>(
            &Filter::default(),
            "created DESC, id DESC",
            resolve_limit(Some(k))?,
            0,
        )
    }

    /// Recent replies matching a concentration filter, newest first. With no
    /// conditions at all this is the same as [`Store::responses_recent`].
    pub fn responses_concentrated(&self, c: &Concentration) -> Result<Vec<Stored<RecentResponse>>> {
        let limit = resolve_limit(c.limit)?;
        let mut clauses = Vec::new();
        let mut params = Vec::new();
        // Tags and emotion names compare case-insensitively, Unicode-aware
        // (`casefold`): the reflex stores tags lower-cased, a model asks for
        // "AGI" or "Архитектура".
        for t in &c.tags {
            clauses
                .push("EXISTS (SELECT 1 FROM json_each(tags) WHERE casefold(json_each.value) = ?)");
            params.push(Value::Text(casefold(t)));
        }
        for (e, min) in &c.emotions {
            // Entries are "name:strength" (checked on every write), so the
            // first ':' splits them.
            clauses.push(
                "EXISTS (SELECT 1 FROM json_each(emotions) WHERE json_each.type = 'text' \
                 AND casefold(substr(json_each.value, 1, instr(json_each.value, ':') - 1)) = ? \
                 AND CAST(substr(json_each.value, instr(json_each.value, ':') + 1) AS INTEGER) >= ?)",
            );
            params.push(Value::Text(casefold(e)));
            params.push(Value::Integer((*min).into()));
        }
        let mut f = Filter::default();
        if !clauses.is_empty() {
            let joiner = if c.mode == MatchMode::All {
                " AND "
            } else {
                " OR "
            };
            f.and(format!("({})", clauses.join(joiner)), params);
        }
        self.select::<RecentResponse>(&f, "created DESC, id DESC", limit, 0)
    }

    /// The newest row that is a reply, not the record of a fired reflex:
    /// what the next reply is judged a repeat of, however many reflex
    /// records a long repetition wrote after it ([`Self::responses_keep_latest`]
    /// never deletes it). The scan back stops at that row and the table is
    /// kept small by the same cleanup, so it stays cheap.
    pub fn responses_last_reply(&self) -> Result<Option<Stored<RecentResponse>>> {
        let mut f = Filter::default();
        f.and("stagnation_reflex = 0", []);
        Ok(self
            .select::<RecentResponse>(&f, "created DESC, id DESC", 1, 0)?
            .pop())
    }

    /// Deletes all but the newest `keep` replies ("cleanup of
    /// llm_recent_responses"), keeping also the newest reply that is not a
    /// reflex record ([`Self::responses_last_reply`]): a repetition longer
    /// than `keep` must still be judged against the reply it repeats, or
    /// the repeated commands would run again. Returns how many went.
    pub fn responses_keep_latest(&self, keep: u32) -> Result<usize> {
        let n = self
            .conn
            .prepare_cached(
                "DELETE FROM llm_recent_responses WHERE id NOT IN
                 (SELECT id FROM llm_recent_responses ORDER BY created DESC, id DESC LIMIT ?)
                 AND id IS NOT (SELECT id FROM llm_recent_responses WHERE stagnation_reflex = 0
                                ORDER BY created DESC, id DESC LIMIT 1)",
            )?
            .execute([keep])
            .map_err(|e| StorageError::from_write("llm_recent_responses", e))?;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vote_keys_are_the_seeds() {
        let keys: Vec<String> = (-3..=3).map(vote_key).collect();
        assert_eq!(keys, ["-3", "-2", "-1", "0", "+1", "+2", "+3"]);
    }

    #[test]
    fn emotions_parse_only_as_name_and_strength() {
        assert_eq!(parse_emotion("joy:3"), Some(("joy", 3)));
        assert_eq!(parse_emotion("тревога:5"), Some(("тревога", 5)));
        for bad in ["joy", "joy:0", "joy:6", ":2", " :2", "joy:x", "a:b:3", ""] {
            assert_eq!(parse_emotion(bad), None, "{bad}");
        }
    }
}
