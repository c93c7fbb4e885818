//! Tests of the cognitive evaluation, the reflection line and similarity.

use proptest::prelude::*;

use super::*;
use crate::Role;

#[test]
fn the_cognitive_request_is_the_seeds_prompt_without_context() {
    let r = cognitive_request(Language::Ru, "старый ответ", "новый ответ");
    assert!(
        r.system.starts_with(
            "Сравни два ответа и оцени:\n* содержатся ли в новом новые мысли или команды,"
        ),
        "{}",
        r.system
    );
    assert!(r.system.contains("JSON-список тегов нового ответа (строгий формат: массив строк, например [\"эмоции\",\"архитектура\"])"));
    assert_eq!(r.messages.len(), 1);
    assert_eq!(r.messages[0].role, Role::User);
    assert_eq!(
        r.messages[0].content,
        "Предыдущий ответ:\nстарый ответ\n\nНовый ответ:\nновый ответ"
    );
    assert_eq!(r.max_tokens, Some(160));
    let emotional = emotional_request(Language::En, &["joy".to_owned()], "hi");
    assert_eq!(emotional.max_tokens, Some(48));
    let en = cognitive_request(Language::En, "", "hello");
    assert!(en.system.starts_with("Compare two answers and judge:"));
    assert_eq!(
        en.messages[0].content,
        "Previous answer:\n(none yet)\n\nNew answer:\nhello"
    );
}

#[test]
fn long_answers_are_cut_in_the_request() {
    let long = "a".repeat(MAX_EVAL_INPUT_CHARS + 50);
    let r = cognitive_request(Language::En, &long, "x");
    let expected = format!("{}… [cut]", "a".repeat(MAX_EVAL_INPUT_CHARS));
    assert!(r.messages[0].content.contains(&expected));
    assert!(
        !r.messages[0]
            .content
            .contains(&"a".repeat(MAX_EVAL_INPUT_CHARS + 1))
    );
}

#[test]
fn a_clean_json_answer_is_read() {
    let answer = r##"{"novel": "yes", "novelty": 0.7, "new_ideas": ["gossip digests"],
        "refined_ideas": ["catch-up"], "discarded_ideas": ["polling"], "tags": ["Mesh", "#sync"]}"##;
    let e = parse_cognitive(Some(answer), "old text", "new text");
    assert_eq!(
        e,
        CognitiveEval {
            novel: true,
            novelty: Some(0.7),
            new_ideas: vec!["gossip digests".into()],
            refined_ideas: vec!["catch-up".into()],
            discarded_ideas: vec!["polling".into()],
            tags: vec!["mesh".into(), "sync".into()],
            fallback: false,
        }
    );
}

#[test]
fn json_in_prose_and_fences_with_russian_keys_is_read() {
    let answer = "Вот оценка:\n```json\n{\"качественная оценка\": \"Да\", \"количественная оценка\": \"7/10\",\n\
                  \"новые идеи\": \"дайджесты, синхронизация\", \"доработанные идеи\": [],\n\
                  \"отбракованные идеи\": [\"опрос\"], \"теги\": [\"сеть\"]}\n```\nГотово.";
    let e = parse_cognitive(Some(answer), "раз", "два");
    assert!(e.novel);
    assert_eq!(e.novelty.map(|n| (n - 0.7).abs() < 1e-9), Some(true));
    assert_eq!(e.new_ideas, ["дайджесты", "синхронизация"]);
    assert!(e.refined_ideas.is_empty());
    assert_eq!(e.discarded_ideas, ["опрос"]);
    assert_eq!(e.tags, ["сеть"]);
    assert!(!e.fallback);
}

#[test]
fn scores_read_on_any_scale_and_flags_in_any_form() {
    let novelty = |v: &str| {
        parse_cognitive(Some(&format!("{{\"novelty\": {v}}}")), "a", "b")
            .novelty
            .expect("a score was given")
    };
    assert!((novelty("\"70%\"") - 0.7).abs() < 1e-9);
    assert!((novelty("8") - 0.8).abs() < 1e-9);
    assert!((novelty("\"0,5\"") - 0.5).abs() < 1e-9);
    assert!((novelty("45") - 0.45).abs() < 1e-9);
    assert_eq!(novelty("-2"), 0.0);
    let flag = |v: &str| parse_cognitive(Some(&format!("{{\"novel\": {v}}}")), "a b", "c d");
    assert!(flag("true").novel);
    assert!(flag("\"да\"").novel);
    assert!(!flag("\"нет\"").novel);
    assert_eq!(flag("\"no\"").novelty, Some(0.0));
    // Yes without a score: the lexical estimate stands in.
    assert_eq!(flag("\"yes\"").novelty, Some(1.0));
}

#[test]
fn an_identical_reply_has_novelty_zero_whatever_the_model_says() {
    let e = parse_cognitive(
        Some(r#"{"novel": "yes", "novelty": 0.9}"#),
        "Same  Thought.",
        "same thought.",
    );
    assert!(!e.novel);
    assert_eq!(e.novelty, Some(0.0));
    assert!(!e.fallback);
}

#[test]
fn unusable_answers_fall_back_to_word_overlap() {
    for answer in [
        None,
        Some(""),
        Some("I think it is new."),
        Some("{\"unrelated\": 1}"),
        Some("{broken json"),
    ] {
        let e = parse_cognitive(answer, "the cat sat", "the dog ran");
        assert!(e.fallback, "{answer:?}");
        // Words {the, cat, sat} vs {the, dog, ran}: 1 shared of 5.
        let novelty = e.novelty.expect("the lexical estimate");
        assert!((novelty - 0.8).abs() < 1e-9, "{answer:?}: {novelty}");
        assert!(e.novel);
        assert!(e.new_ideas.is_empty() && e.tags.is_empty());
    }
    let same = parse_cognitive(None, "a b c", "A b  c");
    assert!(same.fallback && !same.novel);
    assert_eq!(same.novelty, Some(0.0));
    // 9 shared words of 11: novelty 2/11, below the fallback's bar.
    let reworded = parse_cognitive(None, "a b c d e f g h i j", "a b c d e f g h i k");
    assert!(!reworded.novel, "{:?}", reworded.novelty);
}

#[test]
fn lists_without_a_judgement_leave_the_novelty_unknown() {
    // Refined ideas and tags say what the reply is about, not how new it
    // is: a missing score is unknown, never 0 (which fires the reflex).
    let e = parse_cognitive(
        Some(r#"{"refined_ideas": ["catch-up"], "tags": ["mesh"]}"#),
        "old text",
        "new text",
    );
    assert_eq!(e.novelty, None);
    assert!(!e.nothing_new());
    assert_eq!(e.refined_ideas, ["catch-up"]);
    assert_eq!(e.tags, ["mesh"]);
    assert!(!e.fallback);
    // A judgement of 0, by score or by "no", is nothing new.
    for judged in [r#"{"novelty": 0, "tags": ["x"]}"#, r#"{"novel": "нет"}"#] {
        assert!(
            parse_cognitive(Some(judged), "old text", "new text").nothing_new(),
            "{judged}"
        );
    }
}

#[test]
fn lists_are_bounded_and_cleaned() {
    let ideas: Vec<String> = (0..20).map(|i| format!("idea {i}")).collect();
    let answer = serde_json::json!({
        "new_ideas": ideas,
        "tags": ["x".repeat(100), "a", "A", " ", "#b"],
        "discarded_ideas": ["- dup", "dup", "y".repeat(300)],
    })
    .to_string();
    let e = parse_cognitive(Some(&answer), "p", "q");
    assert_eq!(e.new_ideas.len(), MAX_IDEAS);
    assert_eq!(e.tags, ["x".repeat(MAX_TAG_BYTES), "a".into(), "b".into()]);
    assert_eq!(e.discarded_ideas.len(), 2);
    assert_eq!(e.discarded_ideas[1].chars().count(), MAX_IDEA_CHARS);
    // Lists but no judgement: novel when there are new ideas.
    assert!(e.novel);
    assert_eq!(e.novelty, Some(1.0), "the lexical estimate stands in");
    let many_tags: Vec<String> = (0..20).map(|i| format!("t{i}")).collect();
    let e = parse_cognitive(
        Some(&serde_json::json!({ "tags": many_tags }).to_string()),
        "p",
        "q",
    );
    assert_eq!(e.tags.len(), MAX_REPLY_TAGS);
    assert!(!e.novel);
    assert_eq!(e.novelty, None, "nothing judged: unknown, not 0");
}

#[test]
fn the_reflection_line_follows_the_seeds_rules() {
    let eval = CognitiveEval {
        new_ideas: vec!["a".into(), "b".into()],
        refined_ideas: vec![],
        discarded_ideas: vec!["c".into()],
        ..CognitiveEval::default()
    };
    assert_eq!(
        reflection_line(Language::Ru, &eval),
        "новые идеи: a, b; отброшенные идеи: c"
    );
    assert_eq!(
        reflection_line(Language::En, &eval),
        "new ideas: a, b; discarded ideas: c"
    );
    let refined = CognitiveEval {
        refined_ideas: vec!["r".into()],
        ..CognitiveEval::default()
    };
    assert_eq!(
        reflection_line(Language::Ru, &refined),
        "доработанные идеи: r"
    );
    assert_eq!(
        reflection_line(Language::En, &CognitiveEval::default()),
        "no new ideas"
    );
    let fallback = CognitiveEval {
        fallback: true,
        ..CognitiveEval::default()
    };
    assert_eq!(
        reflection_line(Language::Ru, &fallback),
        "новых идей нет; новизна оценена по совпадению слов"
    );
    assert_eq!(
        reflex_record(Language::En),
        "anti-stagnation reflex: the reply repeated the previous one and was not stored again"
    );
}

#[test]
fn repeats_and_similarity() {
    assert!(is_repeat("Hello\n  world", "hello world"));
    assert!(!is_repeat("hello world", "hello world!"));
    assert_eq!(lexical_similarity("", ""), 1.0);
    assert_eq!(lexical_similarity("a", ""), 0.0);
    assert_eq!(lexical_similarity("Кот сидел", "кот, сидел!"), 1.0);
    assert!((lexical_similarity("a b c d", "a b x y") - 1.0 / 3.0).abs() < 1e-9);
}

proptest! {
    #[test]
    fn parsing_never_panics_and_stays_in_range(answer in ".{0,300}", prev in ".{0,80}", new in ".{0,80}") {
        let e = parse_cognitive(Some(&answer), &prev, &new);
        prop_assert!(e.novelty.is_none_or(|n| (0.0..=1.0).contains(&n)));
        prop_assert!(e.new_ideas.len() <= MAX_IDEAS && e.tags.len() <= MAX_REPLY_TAGS);
        let s = lexical_similarity(&prev, &new);
        prop_assert!((0.0..=1.0).contains(&s));
        let _ = reflection_line(Language::Ru, &e);
    }

    #[test]
    fn json_like_answers_never_panic(answer in r#"[\[\]{}":,0-9a-zа-я %/.\-]{0,200}"#) {
        let e = parse_cognitive(Some(&answer), "x", "y");
        prop_assert!(e.novelty.is_none_or(|n| (0.0..=1.0).contains(&n)));
    }
}
