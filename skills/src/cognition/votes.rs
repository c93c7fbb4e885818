//! Cognitive validation (seed 003 §6): the validators' question about a
//! reply and its prompt, tolerant reading of a vote (−3 ..= +3), the
//! aggregate stored in `llm_recent_responses` (mean rating, the seed's
//! `"+2"`-keyed distribution, the raw votes, abstentions), and the rule that
//! runs a command only when the rating reaches the threshold for its effect.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::cognition::reflex::{cut_to, find_object};
use crate::cognition::texts::reflex as t;
use crate::{ChatMessage, Language, ModelRequest, ToolEffect};

/// Votes run −this ..= +this (seed: "от -3 до +3").
pub const MAX_VOTE: i8 = 3;

/// The prompt shown to a validator is cut to this many characters: a
/// validator may be a small model with a short context, and the prompt's
/// start (the recent replies, goals) is what the reply answers.
pub const MAX_VALIDATOR_PROMPT_CHARS: usize = 6_000;

/// The reply shown to a validator is cut to this many characters.
pub const MAX_VALIDATOR_REPLY_CHARS: usize = 4_000;

/// The `config` key holding [`Thresholds`].
pub const THRESHOLDS_CONFIG_KEY: &str = "validation.thresholds";

/// The validators' request: the seed's universal question as the system
/// message (none of the core's system prompts), the prompt and the reply
/// as the user's.
pub fn validator_request(lang: Language, reply: &str, prompt: &str) -> ModelRequest {
    let user = format!(
        "{}\n{}\n\n{}\n{}",
        t::prompt_heading(lang),
        cut_to(lang, prompt, MAX_VALIDATOR_PROMPT_CHARS),
        t::message_heading(lang),
        cut_to(lang, reply, MAX_VALIDATOR_REPLY_CHARS)
    );
    ModelRequest::new(
        t::validator_system(lang).to_owned(),
        vec![ChatMessage::user(user)],
        Some(crate::llm::budgets::VALIDATOR_VOTE_MAX_TOKENS),
    )
}

/// Reads a validator's vote, −3 ..= +3. Tolerant: "+2", "−1" (Unicode
/// minus), "Оценка: 2", "rating: -1", "2/3" (the numerator), "1.6" (rounded),
/// {"rating": 2}; the scale echoed back ("from -3 to +3 … 2") is skipped.
/// `None` when there is no number or it is outside the range.
pub fn parse_vote(answer: &str) -> Option<i8> {
    if let Some(object) = find_object(answer) {
        let keyed = object.iter().find_map(|(k, v)| {
            let k = k.to_lowercase();
            let rating_key = ["rating", "score", "vote", "оцен", "рейтинг", "голос"]
                .iter()
                .any(|w| k.contains(w));
            let value = match v {
                serde_json::Value::Number(n) => n.as_f64(),
                serde_json::Value::String(s) => numbers(s).first().map(|n| n.value),
                _ => None,
            };
            value.filter(|_| rating_key)
        });
        if keyed.is_some() {
            return in_range(keyed);
        }
    }
    let found = numbers(answer);
    let kept: Vec<&Number> = found
        .iter()
        .enumerate()
        .filter(|(i, n)| {
            let ends_range = i
                .checked_sub(1)
                .and_then(|p| found.get(p))
                .is_some_and(|prev| is_range(answer, prev, n));
            let starts_range = found
                .get(i + 1)
                .is_some_and(|next| is_range(answer, n, next));
            !n.after_slash && !starts_range && !ends_range
        })
        .map(|(_, n)| n)
        .collect();
    let marked = kept.iter().find(|n| after_marker(answer, n.start));
    in_range(marked.or(kept.first()).map(|n| n.value))
}

fn in_range(value: Option<f64>) -> Option<i8> {
    let v = value?.round();
    // In −3..=3 after the check: the cast is exact.
    (v.is_finite() && v.abs() <= f64::from(MAX_VOTE)).then_some(v as i8)
}

/// A number found in text, with where it starts and whether a `/` came
/// right before it (a denominator: "2/3").
struct Number {
    value: f64,
    start: usize,
    end: usize,
    after_slash: bool,
}

/// Every signed decimal number in `text`.
fn numbers(text: &str) -> Vec<Number> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        let signed = matches!(c, '+' | '-' | '−' | '–')
            && chars.get(i + 1).is_some_and(|(_, d)| d.is_ascii_digit());
        if !(c.is_ascii_digit() || signed) {
            i += 1;
            continue;
        }
        let negative = signed && c != '+';
        let mut j = if signed { i + 1 } else { i };
        let mut digits = String::new();
        while let Some((_, d)) = chars.get(j).filter(|(_, d)| d.is_ascii_digit()) {
            digits.push(*d);
            j += 1;
        }
        let point = chars.get(j).is_some_and(|(_, d)| matches!(d, '.' | ','))
            && chars.get(j + 1).is_some_and(|(_, d)| d.is_ascii_digit());
        if point {
            digits.push('.');
            j += 1;
            while let Some((_, d)) = chars.get(j).filter(|(_, d)| d.is_ascii_digit()) {
                digits.push(*d);
                j += 1;
            }
        }
        let end = chars.get(j).map_or(text.len(), |(e, _)| *e);
        if let Ok(v) = digits.parse::<f64>() {
            let after_slash = text[..at].trim_end().ends_with('/');
            out.push(Number {
                value: if negative { -v } else { v },
                start: at,
                end,
                after_slash,
            });
        }
        i = j;
    }
    out
}

/// Two numbers joined as a range: "-3 to +3", "от -3 до +3", "-3..3".
fn is_range(text: &str, a: &Number, b: &Number) -> bool {
    let between = text[a.end..b.start].trim().to_lowercase();
    matches!(between.as_str(), "to" | "до" | ".." | "..." | "—" | "…")
}

/// A rating word ("rating", "оценка", "score") or a colon right before.
fn after_marker(text: &str, at: usize) -> bool {
    let before = text[..at].trim_end().to_lowercase();
    let before = before.trim_end_matches(['*', '"']).trim_end();
    before.ends_with(':')
        || before.ends_with('=')
        || [
            "rating",
            "score",
            "vote",
            "оценка",
            "рейтинг",
            "ответ",
            "answer",
        ]
        .iter()
        .any(|w| before.ends_with(w))
}

/// The validation of one reply as stored (seed §6).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Validation {
    /// No validators: the reply passes unvalidated (rating 0).
    pub auto_pass: bool,
    /// The only validator is the main model itself (limited trust).
    pub self_validation: bool,
    /// The mean vote (0 with auto_pass or when every validator abstained).
    pub rating: f64,
    /// Votes per value, keys as the seed writes them: `"+2"`, `"0"`, `"-1"`.
    pub distribution: BTreeMap<String, u32>,
    /// The votes: (validator, vote).
    pub validators: Vec<(String, i8)>,
    /// Validators that gave no vote: (validator, why).
    pub abstained: Vec<(String, String)>,
}

/// The seed's key for a vote: `"+2"`, `"0"`, `"-1"`.
pub fn vote_key(vote: i8) -> String {
    if vote > 0 {
        format!("+{vote}")
    } else {
        vote.to_string()
    }
}

/// Aggregates the validators' answers: `Ok(vote)` counts (clamped to
/// −3..=3), `Err(why)` abstains and is listed. No validators at all →
/// auto_pass with rating 0. One validator that is the main model (`is_main`
/// of its name: the main's own registry name, or another entry at the same
/// endpoint and model) → self-validation. All abstaining → rating 0 without
/// auto_pass, so only commands whose threshold is 0 (reads) run.
pub fn aggregate(
    votes: &[(String, Result<i8, String>)],
    is_main: impl Fn(&str) -> bool,
) -> Validation {
    if votes.is_empty() {
        return Validation {
            auto_pass: true,
            ..Validation::default()
        };
    }
    let mut v = Validation {
        self_validation: votes.len() == 1 && is_main(&votes[0].0),
        ..Validation::default()
    };
    for (name, vote) in votes {
        match vote {
            Ok(n) => {
                let n = (*n).clamp(-MAX_VOTE, MAX_VOTE);
                v.validators.push((name.clone(), n));
                *v.distribution.entry(vote_key(n)).or_insert(0) += 1;
            }
            Err(why) => v.abstained.push((name.clone(), why.clone())),
        }
    }
    if !v.validators.is_empty() {
        let sum: f64 = v.validators.iter().map(|(_, n)| f64::from(*n)).sum();
        // At most a few validators: the count converts exactly.
        v.rating = sum / v.validators.len() as f64;
    }
    v
}

/// The least rating a command needs to run, by its effect (seed: "для
/// разных типов команд минимально допустимый рейтинг может быть разный").
/// Stored as JSON under [`THRESHOLDS_CONFIG_KEY`]; missing fields default.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Thresholds {
    /// Commands that only read: 0, so an unsure vote still lets the model look.
    pub read: f64,
    /// Commands that change local tables: +1 (the seed's rule).
    pub write: f64,
    /// Commands that leave the node, start a process or call a model: +2.
    pub network: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self {
            read: 0.0,
            write: 1.0,
            network: 2.0,
        }
    }
}

impl Thresholds {
    /// The threshold for one effect.
    pub fn for_effect(&self, effect: ToolEffect) -> f64 {
        match effect {
            ToolEffect::Read => self.read,
            ToolEffect::Write => self.write,
            ToolEffect::Network => self.network,
        }
    }
}

/// A command runs when the reply passed unvalidated (auto_pass) or its
/// rating reaches the threshold for the command's effect.
pub fn may_run(v: &Validation, effect: ToolEffect, t: &Thresholds) -> bool {
    v.auto_pass || v.rating >= t.for_effect(effect)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::Role;

    #[test]
    fn the_validator_request_is_the_seeds_question_about_prompt_and_reply() {
        let r = validator_request(Language::Ru, "ответ", "промпт");
        assert_eq!(
            r.system,
            "Оцени корректность данного сообщения в диапазоне от -3 (полностью некорректное) до +3 (полностью корректное). \
             Если не уверен — 0.\nОтветь только одним целым числом."
        );
        assert_eq!(r.messages.len(), 1);
        assert_eq!(r.messages[0].role, Role::User);
        assert_eq!(
            r.messages[0].content,
            "Исходный промпт:\nпромпт\n\nСообщение:\nответ"
        );
        assert_eq!(r.max_tokens, Some(16));
        let en = validator_request(
            Language::En,
            "reply",
            &"p".repeat(MAX_VALIDATOR_PROMPT_CHARS + 9),
        );
        assert!(en.system.starts_with(
            "Rate the correctness of this message from -3 (completely incorrect) to +3 (completely correct)."
        ));
        assert!(
            en.messages[0]
                .content
                .contains("… [cut]\n\nMessage:\nreply")
        );
    }

    #[test]
    fn votes_are_read_tolerantly() {
        let cases: &[(&str, Option<i8>)] = &[
            ("2", Some(2)),
            ("+2", Some(2)),
            ("-3", Some(-3)),
            ("−1", Some(-1)),
            ("0.", Some(0)),
            ("Оценка: 2", Some(2)),
            ("**Rating:** -1. The message is fine otherwise.", Some(-1)),
            ("2/3", Some(2)),
            ("1.6", Some(2)),
            ("On a scale from -3 to +3 I give 1.", Some(1)),
            ("в диапазоне от -3 до +3: оценка 3", Some(3)),
            (r#"{"rating": "-2"}"#, Some(-2)),
            (
                r#"```json
{"оценка": 1}
```"#,
                Some(1),
            ),
            ("7", None),
            ("I am not sure.", None),
            ("", None),
            (r#"{"rating": 9}"#, None),
        ];
        for (answer, expected) in cases {
            assert_eq!(parse_vote(answer), *expected, "{answer:?}");
        }
    }

    fn ok(name: &str, v: i8) -> (String, Result<i8, String>) {
        (name.to_owned(), Ok(v))
    }

    #[test]
    fn votes_aggregate_as_the_seed_stores_them() {
        let v = aggregate(
            &[
                ok("gpt-4", -1),
                ok("gemini", 0),
                ok("a", 2),
                ok("b", 2),
                ok("c", 3),
                ("slow".to_owned(), Err("no answer in 20 s".to_owned())),
            ],
            |n| n == "main",
        );
        assert!(!v.auto_pass && !v.self_validation);
        assert!((v.rating - 1.2).abs() < 1e-9);
        let dist: Vec<(&str, u32)> = v
            .distribution
            .iter()
            .map(|(k, n)| (k.as_str(), *n))
            .collect();
        assert_eq!(dist, [("+2", 2), ("+3", 1), ("-1", 1), ("0", 1)]);
        assert_eq!(v.validators[0], ("gpt-4".to_owned(), -1));
        assert_eq!(v.validators.len(), 5);
        assert_eq!(
            v.abstained,
            [("slow".to_owned(), "no answer in 20 s".to_owned())]
        );
    }

    #[test]
    fn no_validators_is_auto_pass_and_a_lone_main_model_is_self_validation() {
        let none = aggregate(&[], |n| n == "main");
        assert_eq!(
            none,
            Validation {
                auto_pass: true,
                ..Validation::default()
            }
        );
        let own = aggregate(&[ok("main", 1)], |n| n == "main");
        assert!(own.self_validation && !own.auto_pass);
        assert_eq!(own.rating, 1.0);
        assert!(!aggregate(&[ok("other", 1)], |n| n == "main").self_validation);
        assert!(!aggregate(&[ok("main", 1), ok("other", 1)], |n| n == "main").self_validation);
        // Another registry name for the main model's endpoint and model.
        let alias = |n: &str| n == "main" || n == "main-again";
        assert!(aggregate(&[ok("main-again", 1)], alias).self_validation);
    }

    #[test]
    fn all_abstaining_rates_zero_without_auto_pass() {
        let v = aggregate(&[("x".to_owned(), Err("down".to_owned()))], |n| n == "main");
        assert!(!v.auto_pass);
        assert_eq!(v.rating, 0.0);
        assert!(v.validators.is_empty() && v.distribution.is_empty());
        let t = Thresholds::default();
        assert!(may_run(&v, ToolEffect::Read, &t));
        assert!(!may_run(&v, ToolEffect::Write, &t));
    }

    #[test]
    fn out_of_range_votes_are_clamped() {
        let v = aggregate(&[ok("a", 9), ok("b", -9)], |n| n == "m");
        assert_eq!(v.validators, [("a".to_owned(), 3), ("b".to_owned(), -3)]);
    }

    #[test]
    fn commands_run_only_at_their_threshold() {
        let t = Thresholds::default();
        let rated = |r: f64| Validation {
            rating: r,
            ..Validation::default()
        };
        assert!(may_run(&rated(0.0), ToolEffect::Read, &t));
        assert!(!may_run(&rated(-0.5), ToolEffect::Read, &t));
        assert!(!may_run(&rated(0.9), ToolEffect::Write, &t));
        assert!(may_run(&rated(1.0), ToolEffect::Write, &t));
        assert!(!may_run(&rated(1.5), ToolEffect::Network, &t));
        assert!(may_run(&rated(2.0), ToolEffect::Network, &t));
        let veto = aggregate(&[ok("v", -3)], |n| n == "main");
        assert!(!may_run(&veto, ToolEffect::Write, &t));
        let pass = aggregate(&[], |n| n == "main");
        assert!(may_run(&pass, ToolEffect::Network, &t));
    }

    #[test]
    fn thresholds_read_from_config_json() {
        assert_eq!(THRESHOLDS_CONFIG_KEY, "validation.thresholds");
        let t: Thresholds = serde_json::from_str(r#"{"write": 2}"#).unwrap();
        assert_eq!(
            t,
            Thresholds {
                read: 0.0,
                write: 2.0,
                network: 2.0
            }
        );
        let back: Thresholds =
            serde_json::from_str(&serde_json::to_string(&Thresholds::default()).unwrap()).unwrap();
        assert_eq!(back, Thresholds::default());
    }

    proptest! {
        #[test]
        fn parse_vote_never_panics_and_stays_in_range(answer in ".{0,200}") {
            if let Some(v) = parse_vote(&answer) {
                prop_assert!((-MAX_VOTE..=MAX_VOTE).contains(&v));
            }
        }

        #[test]
        fn numeric_answers_stay_in_range(answer in r#"[\-+−–0-9.,/: {}"a-z]{0,80}"#) {
            if let Some(v) = parse_vote(&answer) {
                prop_assert!((-MAX_VOTE..=MAX_VOTE).contains(&v), "{answer:?} → {v}");
            }
        }

        #[test]
        fn a_lone_vote_in_any_sign_style_reads_back_and_one_out_of_range_does_not(
            vote in -3i8..=3,
            sign in 0usize..3,
            prefix in "[a-z ]{0,20}",
            suffix in "[a-z .]{0,20}",
            outside in 4i64..1_000,
        ) {
            // The signs a model writes: ASCII, Unicode minus, en dash; "+" or none.
            let written = match (vote.signum(), sign) {
                (-1, 0) => format!("-{}", vote.unsigned_abs()),
                (-1, 1) => format!("−{}", vote.unsigned_abs()),
                (-1, _) => format!("–{}", vote.unsigned_abs()),
                (1, 0) => format!("+{vote}"),
                _ => vote.to_string(),
            };
            // A space keeps prose from gluing to the sign ("a-2" is no vote).
            let answer = format!("{prefix} {written}{suffix}");
            prop_assert_eq!(parse_vote(&answer), Some(vote), "{:?}", answer);
            for far in [outside, -outside] {
                let answer = format!("{prefix} {far}{suffix}");
                prop_assert_eq!(parse_vote(&answer), None, "{:?}", answer);
            }
        }
    }
}
