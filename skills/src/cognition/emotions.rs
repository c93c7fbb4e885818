//! The emotional side of the anti-stagnation reflex (seed 003 §5,
//! "Эмоциональная оценка"): reading the model's "emotion:strength" answer
//! tolerantly, the stored form of a reply's emotions, and the emotion list
//! in config that grows with every new emotion seen. Re-exported by
//! [`reflex`](crate::cognition::reflex).

use serde_json::{Map, Value};

use crate::cognition::reflex::find_json;

/// At most this many emotions per reply are kept.
pub const MAX_REPLY_EMOTIONS: usize = 8;

/// An emotion name longer than this is not an emotion but prose.
pub const MAX_EMOTION_NAME_CHARS: usize = 32;

/// The emotion list in config grows to at most this many names: every
/// emotional evaluation sends the whole list.
pub const MAX_KNOWN_EMOTIONS: usize = 48;

/// Emotion strengths run 1 ..= this (seed: "сила от 1 до 5").
pub const MAX_EMOTION_STRENGTH: u8 = 5;

/// The `config` key holding the emotion list (a JSON array of names).
pub const EMOTIONS_CONFIG_KEY: &str = "emotions";

/// Reads the emotional evaluation's answer into (emotion, strength 1..=5)
/// pairs, first mention first, each emotion once (the strongest mention).
/// Tolerant: a JSON array of "emotion:strength" strings (or of objects), a
/// JSON object {"joy": 3}, or plain "радость:3, тревога - 2" text. A
/// strength of 0 is left out, above 5 counts as 5; `None` or garbage gives
/// nothing.
pub fn parse_emotions(answer: Option<&str>) -> Vec<(String, u8)> {
    let Some(answer) = answer else {
        return Vec::new();
    };
    let mut pairs: Vec<(String, f64)> = Vec::new();
    match find_json(answer, '[').or_else(|| find_json(answer, '{')) {
        Some(Value::Array(items)) => {
            for item in items {
                match item {
                    Value::String(s) => pairs.extend(emotion_pair(&s)),
                    Value::Object(map) => pairs.extend(object_pair(&map)),
                    _ => {}
                }
            }
        }
        Some(Value::Object(map)) => {
            for (name, value) in &map {
                if let Some(n) = number_of(value) {
                    pairs.push((name.clone(), n));
                }
            }
        }
        _ => {
            for piece in answer.split([',', ';', '\n', '[', ']', '"', '\'']) {
                pairs.extend(emotion_pair(piece));
            }
        }
    }
    let mut out: Vec<(String, u8)> = Vec::new();
    for (name, strength) in pairs {
        let name = name
            .trim()
            .trim_start_matches(['-', '*', '•'])
            .trim()
            .to_lowercase();
        let strength = strength.round().min(f64::from(MAX_EMOTION_STRENGTH));
        if name.is_empty()
            || name.contains(':')
            || name.chars().count() > MAX_EMOTION_NAME_CHARS
            || strength.is_nan()
            || strength < 1.0
        {
            continue;
        }
        // In 1..=5 after the checks above.
        let strength = strength as u8;
        if let Some(known) = out.iter_mut().find(|(n, _)| *n == name) {
            known.1 = known.1.max(strength);
        } else if out.len() < MAX_REPLY_EMOTIONS {
            out.push((name, strength));
        }
    }
    out
}

/// "joy:3", "joy = 3", "joy - 3", "joy: 3/5".
fn emotion_pair(piece: &str) -> Option<(String, f64)> {
    let (name, strength) = piece
        .rsplit_once(':')
        .or_else(|| piece.rsplit_once('='))
        .or_else(|| piece.rsplit_once(" - "))
        .or_else(|| piece.rsplit_once(" — "))?;
    let strength = strength.trim();
    let strength = strength.split_once('/').map_or(strength, |(a, _)| a);
    Some((name.to_owned(), strength.trim().parse::<f64>().ok()?))
}

/// {"emotion": "joy", "strength": 3}: the string value is the name, the
/// numeric one the strength.
fn object_pair(map: &Map<String, Value>) -> Option<(String, f64)> {
    let name = map.values().find_map(Value::as_str)?;
    let strength = map.values().find_map(|v| match v {
        Value::String(_) => None,
        other => number_of(other),
    })?;
    Some((name.to_owned(), strength))
}

fn number_of(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// The seed's stored form of emotions: `["joy:3", "тревога:1"]`.
pub fn emotion_entries(seen: &[(String, u8)]) -> Vec<String> {
    seen.iter().map(|(n, s)| format!("{n}:{s}")).collect()
}

/// The emotion list of config with the newly seen emotions appended (seed:
/// "если появляются новые включаем в [JSON]"), compared without case, up to
/// [`MAX_KNOWN_EMOTIONS`] names.
pub fn merge_emotion_list(known: &[String], seen: &[(String, u8)]) -> Vec<String> {
    let mut out = known.to_vec();
    for (name, _) in seen {
        let lower = name.to_lowercase();
        if out.len() >= MAX_KNOWN_EMOTIONS {
            break;
        }
        if !out.iter().any(|k| k.to_lowercase() == lower) {
            out.push(name.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::Language;
    use crate::cognition::reflex::emotional_request;

    fn pairs(v: &[(&str, u8)]) -> Vec<(String, u8)> {
        v.iter().map(|(n, s)| ((*n).to_owned(), *s)).collect()
    }

    #[test]
    fn the_emotional_request_is_the_seeds_prompt_with_the_list() {
        let r = emotional_request(Language::Ru, &["радость".into(), "тревога".into()], "Ура!");
        assert!(r.system.starts_with(
            "Определи эмоциональное состояние ответа, используя список эмоций [\"радость\",\"тревога\"].\n\
             Верни массив строк в формате \"эмоция:сила\", где сила варьируется от 1 до 5.\n\
             Если эмоция отсутствует (0), не включай её в результат.\n\
             Если в ответе обнаружены эмоции, которых нет в списке, добавь их в результат."
        ));
        assert_eq!(r.messages[0].content, "Ответ:\nУра!");
        let en = emotional_request(Language::En, &[], "x");
        assert!(en.system.contains("using the list of emotions []."));
    }

    #[test]
    fn the_seeds_format_is_read() {
        assert_eq!(
            parse_emotions(Some(r#"["радость:3", "тревога:1"]"#)),
            pairs(&[("радость", 3), ("тревога", 1)])
        );
    }

    #[test]
    fn tolerant_forms_are_read() {
        assert_eq!(
            parse_emotions(Some(
                "Here:\n```json\n[\"Joy: 4\", \"anxiety:0\", \"awe:9\", \"joy:2\"]\n```"
            )),
            pairs(&[("joy", 4), ("awe", 5)]),
            "0 is left out, 9 counts as 5, a repeat keeps the strongest"
        );
        assert_eq!(
            parse_emotions(Some(r#"{"joy": 2, "calm": "3"}"#)),
            pairs(&[("calm", 3), ("joy", 2)])
        );
        assert_eq!(
            parse_emotions(Some(r#"[{"emotion": "joy", "strength": 2}]"#)),
            pairs(&[("joy", 2)])
        );
        assert_eq!(
            parse_emotions(Some("- радость: 3/5\n- тревога = 2\n- grief - 1")),
            pairs(&[("радость", 3), ("тревога", 2), ("grief", 1)])
        );
        assert_eq!(parse_emotions(Some(r#"["joy:2.6"]"#)), pairs(&[("joy", 3)]));
    }

    #[test]
    fn garbage_gives_nothing() {
        for answer in [
            None,
            Some(""),
            Some("no emotions here"),
            Some("[1, 2]"),
            Some("joy:abc"),
        ] {
            assert!(parse_emotions(answer).is_empty(), "{answer:?}");
        }
        let prose = format!("{}:3", "x".repeat(MAX_EMOTION_NAME_CHARS + 1));
        assert!(parse_emotions(Some(&prose)).is_empty());
    }

    #[test]
    fn a_reply_keeps_a_bounded_number_of_emotions() {
        let many: Vec<String> = (0..20).map(|i| format!("e{i}:2")).collect();
        let answer = serde_json::to_string(&many).unwrap();
        assert_eq!(parse_emotions(Some(&answer)).len(), MAX_REPLY_EMOTIONS);
    }

    #[test]
    fn entries_are_stored_as_emotion_colon_strength() {
        assert_eq!(
            emotion_entries(&pairs(&[("joy", 3), ("тревога", 1)])),
            ["joy:3", "тревога:1"]
        );
    }

    #[test]
    fn new_emotions_join_the_list_once_up_to_the_bound() {
        let known = vec!["joy".to_owned(), "Calm".to_owned()];
        assert_eq!(
            merge_emotion_list(&known, &pairs(&[("calm", 2), ("awe", 3), ("awe", 1)])),
            ["joy", "Calm", "awe"]
        );
        let full: Vec<String> = (0..MAX_KNOWN_EMOTIONS).map(|i| format!("e{i}")).collect();
        assert_eq!(merge_emotion_list(&full, &pairs(&[("new", 1)])), full);
    }

    proptest! {
        #[test]
        fn parsing_never_panics(answer in ".{0,300}") {
            for (name, s) in parse_emotions(Some(&answer)) {
                prop_assert!((1..=MAX_EMOTION_STRENGTH).contains(&s));
                prop_assert!(!name.is_empty() && !name.contains(':'));
            }
        }

        #[test]
        fn json_like_answers_never_panic(answer in r#"[\[\]{}":,0-9a-z =/.\-]{0,200}"#) {
            prop_assert!(parse_emotions(Some(&answer)).len() <= MAX_REPLY_EMOTIONS);
        }
    }
}
