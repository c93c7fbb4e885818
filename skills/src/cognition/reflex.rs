//! The anti-stagnation reflex's evaluations (seed 003 §5): the cognitive
//! and the emotional evaluation of a new reply as short model requests
//! without the full context, tolerant reading of their answers (JSON inside
//! prose or code fences, English or Russian keys, "да"/"yes", numbers as
//! strings), a lexical-similarity estimate when an answer is unusable, the
//! reflection line by the seed's rules, and the emotion list kept in config.
//! Pure: the node sends the requests and stores the results.

use serde_json::{Map, Value};

pub use crate::cognition::emotions::{
    EMOTIONS_CONFIG_KEY, MAX_EMOTION_NAME_CHARS, MAX_EMOTION_STRENGTH, MAX_KNOWN_EMOTIONS,
    MAX_REPLY_EMOTIONS, emotion_entries, merge_emotion_list, parse_emotions,
};
use crate::cognition::texts::reflex as t;
use crate::{ChatMessage, Language, ModelRequest};

/// Each answer goes into an evaluation request cut to this many characters:
/// the request must stay short for a phone model's 1–4K context, and the
/// start of a reply says what it is about.
pub const MAX_EVAL_INPUT_CHARS: usize = 2_000;

/// At most this many ideas per list are kept: a reflection is a summary,
/// and context 1 shows it on every tick.
pub const MAX_IDEAS: usize = 8;

/// An idea longer than this is cut: one idea is one short phrase.
pub const MAX_IDEA_CHARS: usize = 200;

/// At most this many tags per reply: concentration mode filters by a few.
pub const MAX_REPLY_TAGS: usize = 8;

/// A tag is cut to this many bytes (the storage's tag limit is 64).
pub const MAX_TAG_BYTES: usize = 64;

/// The lexical fallback calls a reply novel when its novelty (1 − word
/// overlap with the previous reply) is above this: a reworded repeat keeps
/// most of its words.
pub const FALLBACK_NOVEL_ABOVE: f64 = 0.2;

/// A JSON value is looked for from at most this many `{`/`[` positions of
/// an answer, so a long garbage answer costs linear time, not quadratic.
const MAX_JSON_STARTS: usize = 32;

/// What the cognitive evaluation made of a new reply.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CognitiveEval {
    /// The qualitative judgement: new thoughts or commands (yes/no); `false`
    /// when the novelty is unknown.
    pub novel: bool,
    /// The quantitative one, 0 (nothing new) ..= 1 (all new); `None` when
    /// the answer judged nothing (no score, no yes/no, no new ideas): the
    /// novelty is unknown, which is not 0.
    pub novelty: Option<f64>,
    /// New ideas.
    pub new_ideas: Vec<String>,
    /// Old ideas refined.
    pub refined_ideas: Vec<String>,
    /// Old ideas discarded.
    pub discarded_ideas: Vec<String>,
    /// Semantic tags of the new reply.
    pub tags: Vec<String>,
    /// The answer was unusable; novelty is the lexical estimate.
    pub fallback: bool,
}

impl CognitiveEval {
    /// Whether the evaluation judged the reply to hold nothing new (novelty
    /// 0, the seed's §5 reflex). An unknown novelty never does.
    pub fn nothing_new(&self) -> bool {
        self.novelty.is_some_and(|n| n <= 0.0)
    }
}

/// The cognitive evaluation request: the seed's prompt as the system
/// message, the two answers (cut to [`MAX_EVAL_INPUT_CHARS`]) as the user's.
pub fn cognitive_request(lang: Language, previous: &str, new: &str) -> ModelRequest {
    let previous = if previous.trim().is_empty() {
        t::nothing_before(lang).to_owned()
    } else {
        cut(lang, previous)
    };
    let user = format!(
        "{}\n{}\n\n{}\n{}",
        t::previous_heading(lang),
        previous,
        t::new_heading(lang),
        cut(lang, new)
    );
    ModelRequest::new(
        t::cognitive_system(lang).to_owned(),
        vec![ChatMessage::user(user)],
        Some(crate::llm::budgets::COGNITIVE_EVALUATION_MAX_TOKENS),
    )
}

/// The emotional evaluation request: the seed's prompt with the emotion
/// list as JSON, the answer as the user message.
pub fn emotional_request(lang: Language, emotions: &[String], new: &str) -> ModelRequest {
    let list = serde_json::to_string(emotions).unwrap_or_else(|_| "[]".to_owned());
    ModelRequest::new(
        t::emotional_system(lang).replace("{emotions}", &list),
        vec![ChatMessage::user(format!(
            "{}\n{}",
            t::answer_heading(lang),
            cut(lang, new)
        ))],
        Some(crate::llm::budgets::EMOTIONAL_EVALUATION_MAX_TOKENS),
    )
}

/// `text` cut to `max_chars` characters with a mark saying so.
pub(crate) fn cut_to(lang: Language, text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((at, _)) => format!("{}{}", &text[..at], t::cut_mark(lang)),
        None => text.to_owned(),
    }
}

fn cut(lang: Language, text: &str) -> String {
    cut_to(lang, text, MAX_EVAL_INPUT_CHARS)
}

/// Reads the cognitive evaluation's answer. Tolerant: the first JSON object
/// in the answer (prose and code fences around it are fine), English or
/// Russian keys, yes/no/да/нет or booleans, numbers or numeric strings
/// ("0.7", "70%", "7/10"). `None` or an answer without a usable object
/// gives the lexical estimate with `fallback: true`. An object that judges
/// nothing (lists without a score, a yes/no or new ideas) leaves the novelty
/// unknown (`None`). An identical reply ([`is_repeat`]) always has novelty 0.
pub fn parse_cognitive(answer: Option<&str>, previous: &str, new: &str) -> CognitiveEval {
    let repeat = is_repeat(previous, new);
    let Some(read) = answer.and_then(find_object).and_then(|o| read_eval(&o)) else {
        return lexical_eval(previous, new, repeat);
    };
    let mut eval = read.lists;
    let lexical = 1.0 - lexical_similarity(previous, new);
    eval.novelty = match (read.score, read.novel) {
        (Some(score), _) => Some(score),
        (None, Some(true)) => Some(lexical),
        (None, Some(false)) => Some(0.0),
        // No judgement: new ideas say something is new (the lexical estimate
        // stands in for the score); without them nothing was judged.
        (None, None) => (!eval.new_ideas.is_empty()).then_some(lexical),
    };
    eval.novel = read.novel.unwrap_or(eval.novelty.is_some_and(|n| n > 0.0));
    if repeat {
        eval.novel = false;
        eval.novelty = Some(0.0);
    }
    eval
}

/// The lexical estimate: novelty is 1 − word overlap.
fn lexical_eval(previous: &str, new: &str, repeat: bool) -> CognitiveEval {
    let novelty = if repeat {
        0.0
    } else {
        1.0 - lexical_similarity(previous, new)
    };
    CognitiveEval {
        novel: novelty > FALLBACK_NOVEL_ABOVE,
        novelty: Some(novelty),
        fallback: true,
        ..CognitiveEval::default()
    }
}

/// What one evaluation object said, before defaults.
struct ReadEval {
    novel: Option<bool>,
    score: Option<f64>,
    lists: CognitiveEval,
}

/// Which field a key of the evaluation object means.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    Tags,
    Discarded,
    Refined,
    NewIdeas,
    /// A judgement: a yes/no value or a number.
    Judgement,
}

/// Classifies a key by the words in it ("new_ideas", "Новые идеи",
/// "JSON-список отбракованных идей", "novelty_score", "качественная оценка").
fn field_of(key: &str) -> Option<Field> {
    let k = key.to_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| k.contains(w));
    if has(&["tag", "тег"]) {
        Some(Field::Tags)
    } else if has(&["discard", "reject", "drop", "отброш", "отбрак", "отверг"]) {
        Some(Field::Discarded)
    } else if has(&["refin", "improv", "доработ", "улучш", "уточн"]) {
        Some(Field::Refined)
    } else if has(&["idea", "thought", "иде", "мысл"]) {
        Some(Field::NewIdeas)
    } else if has(&[
        "novel",
        "new",
        "score",
        "qualit",
        "quantit",
        "assess",
        "нов",
        "оцен",
        "качеств",
        "количеств",
    ]) {
        Some(Field::Judgement)
    } else {
        None
    }
}

/// Reads an evaluation object; `None` when no key means anything.
fn read_eval(object: &Map<String, Value>) -> Option<ReadEval> {
    let mut read = ReadEval {
        novel: None,
        score: None,
        lists: CognitiveEval::default(),
    };
    let mut any = false;
    for (key, value) in object {
        let Some(field) = field_of(key) else { continue };
        let slot = match field {
            Field::Tags => &mut read.lists.tags,
            Field::Discarded => &mut read.lists.discarded_ideas,
            Field::Refined => &mut read.lists.refined_ideas,
            Field::NewIdeas => &mut read.lists.new_ideas,
            Field::Judgement => {
                if let Some(flag) = yes_no(value) {
                    read.novel.get_or_insert(flag);
                    any = true;
                } else if let Some(score) = score_of(value) {
                    read.score.get_or_insert(score);
                    any = true;
                }
                continue;
            }
        };
        if matches!(value, Value::Array(_) | Value::String(_)) {
            let items = list_of(value);
            *slot = if field == Field::Tags {
                clean_tags(items)
            } else {
                clean_ideas(items)
            };
            any = true;
        }
    }
    any.then_some(read)
}

/// A list value: an array (non-strings are written as JSON) or one string
/// split at commas, semicolons and line ends.
fn list_of(value: &Value) -> Vec<String> {
    match value {
        Value::Array(items) => items
            .iter()
            .map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect(),
        Value::String(s) => s.split([',', ';', '\n']).map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

fn clean_ideas(items: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in items {
        let idea: String = item
            .trim()
            .trim_start_matches(['-', '*', '•'])
            .trim()
            .chars()
            .take(MAX_IDEA_CHARS)
            .collect();
        if !idea.is_empty() && !out.contains(&idea) && out.len() < MAX_IDEAS {
            out.push(idea);
        }
    }
    out
}

/// Tags as the storage takes them: trimmed, without `#`, lower case, at
/// most [`MAX_TAG_BYTES`] bytes, no duplicates, at most [`MAX_REPLY_TAGS`].
fn clean_tags(items: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in items {
        let mut tag = item.trim().trim_start_matches('#').trim().to_lowercase();
        while tag.len() > MAX_TAG_BYTES {
            tag.pop();
        }
        let tag = tag.trim().to_owned();
        if !tag.is_empty() && !out.contains(&tag) && out.len() < MAX_REPLY_TAGS {
            out.push(tag);
        }
    }
    out
}

/// A yes/no value: a boolean or "yes", "да", "no", "нет", "true", "false".
fn yes_no(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::String(s) => {
            let word = s.trim().trim_end_matches(['.', '!']).to_lowercase();
            match word.as_str() {
                "yes" | "y" | "true" | "да" | "есть" => Some(true),
                "no" | "n" | "false" | "нет" => Some(false),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A novelty score 0..=1 from a number or a string: "0.7", "70%", "7/10",
/// "7 из 10"; a bare number above 1 is read on a 10 or 100 scale.
fn score_of(value: &Value) -> Option<f64> {
    let (number, scale) = match value {
        Value::Number(n) => (n.as_f64()?, None),
        Value::String(s) => {
            let s = s.trim().replace(',', ".");
            if let Some(p) = s.strip_suffix('%') {
                (p.trim().parse::<f64>().ok()?, Some(100.0))
            } else if let Some((a, b)) = s.split_once('/').or_else(|| s.split_once(" из ")) {
                (
                    a.trim().parse::<f64>().ok()?,
                    Some(b.trim().parse::<f64>().ok()?),
                )
            } else {
                (s.parse::<f64>().ok()?, None)
            }
        }
        _ => return None,
    };
    if !number.is_finite() {
        return None;
    }
    let scale = scale.unwrap_or(if number <= 1.0 {
        1.0
    } else if number <= 10.0 {
        10.0
    } else {
        100.0
    });
    if !(scale.is_finite() && scale > 0.0) {
        return None;
    }
    Some((number / scale).clamp(0.0, 1.0))
}

/// The first JSON object in `text` (prose and code fences around it are
/// fine); `None` when there is none.
pub(crate) fn find_object(text: &str) -> Option<Map<String, Value>> {
    find_json(text, '{').and_then(|v| match v {
        Value::Object(map) => Some(map),
        _ => None,
    })
}

/// The first JSON value starting with `open` (`{` or `[`) in `text`,
/// trying at most [`MAX_JSON_STARTS`] positions.
pub(crate) fn find_json(text: &str, open: char) -> Option<Value> {
    text.match_indices(open)
        .take(MAX_JSON_STARTS)
        .find_map(|(at, _)| {
            serde_json::Deserializer::from_str(&text[at..])
                .into_iter::<Value>()
                .next()
                .and_then(Result::ok)
        })
}

/// The reflection line by the seed's rules: "new ideas: …" when there are
/// new ideas, then "refined ideas: …", then "discarded ideas: …", joined by
/// "; "; "no new ideas" when all are empty; a lexical estimate says so.
pub fn reflection_line(lang: Language, eval: &CognitiveEval) -> String {
    let mut parts = Vec::new();
    for (label, ideas) in [
        (t::new_ideas_label(lang), &eval.new_ideas),
        (t::refined_ideas_label(lang), &eval.refined_ideas),
        (t::discarded_ideas_label(lang), &eval.discarded_ideas),
    ] {
        if !ideas.is_empty() {
            parts.push(format!("{label}{}", ideas.join(", ")));
        }
    }
    if parts.is_empty() {
        parts.push(t::no_ideas(lang).to_owned());
    }
    if eval.fallback {
        parts.push(t::lexical_estimate(lang).to_owned());
    }
    parts.join("; ")
}

/// The short record stored instead of a repeated reply (seed §5).
pub fn reflex_record(lang: Language) -> &'static str {
    t::reflex_fired(lang)
}

/// Novelty 0: the same text after normalising whitespace and case.
pub fn is_repeat(previous: &str, new: &str) -> bool {
    let norm = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    norm(previous) == norm(new)
}

/// Word overlap of two texts, 0 (no word shared) ..= 1 (the same words):
/// the Jaccard index of their sets of lower-case words (letters and digits
/// of any script). Two texts without words are the same (1).
pub fn lexical_similarity(a: &str, b: &str) -> f64 {
    let words = |s: &str| -> std::collections::HashSet<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let (a, b) = (words(a), words(b));
    let union = a.union(&b).count();
    if union == 0 {
        return 1.0;
    }
    // Word counts are far below 2^52: the conversions are exact.
    a.intersection(&b).count() as f64 / union as f64
}

#[cfg(test)]
#[path = "reflex_tests.rs"]
mod tests;
