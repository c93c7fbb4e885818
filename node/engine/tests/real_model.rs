//! The engine with a real model (SmolLM2-135M-Instruct Q4_1, found through
//! `PORFIRY_TEST_GGUF`): a streamed answer, cancel, `max_tokens`, prefix
//! reuse, the bounded queue, a reply grammar and stop texts, and a
//! truncated copy of the real file. Every
//! test here is named `real_model_…`: nextest runs them one at a time
//! (.config/nextest.toml) so that two do not share the 2 cores.

use std::time::Duration;

use futures::StreamExt;
use porfiry_engine::test_model::test_model_path;
use porfiry_engine::{Engine, EngineError, EngineOptions, GgufError};
use porfiry_skills::llm::{ChatMessage, Delta, Llm, ModelRequest};

/// One decoding thread: nextest runs other crates' tests beside these on
/// CI's 2 cores, and ggml's threads wait for each other at every step, so
/// two threads with a core taken are several times slower than one
/// (docs/benchmarks.md, "Embedded engine").
fn engine(options: EngineOptions) -> Engine {
    let path = test_model_path().unwrap_or_else(|e| panic!("{e}"));
    let options = EngineOptions {
        threads: Some(1),
        ..options
    };
    Engine::open(&path, &options).unwrap_or_else(|e| panic!("{e}"))
}

fn ask(text: &str, max_tokens: Option<u32>) -> ModelRequest {
    ModelRequest::new(
        "You are a helpful assistant.".into(),
        vec![ChatMessage::user(text)],
        max_tokens,
    )
}

const STORY: &str = "Write a long story about a lighthouse keeper and a storm.";

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn real_model_streams_an_answer_in_pieces() {
    let engine = engine(EngineOptions::default());
    assert!(engine.info().context > 0 && engine.info().context <= 4096);
    assert_eq!(engine.info().gguf.architecture, "llama");
    let deltas: Vec<Delta> = runtime().block_on(async {
        let stream = engine
            .stream(&ask("What is the capital of France?", Some(48)))
            .await
            .unwrap();
        stream.map(Result::unwrap).collect().await
    });
    let texts: Vec<&str> = deltas
        .iter()
        .filter_map(|d| match d {
            Delta::Text(t) => Some(t.as_str()),
            Delta::Done { .. } => None,
        })
        .collect();
    assert!(texts.len() > 1, "one piece per token or so: {texts:?}");
    let answer = texts.concat();
    assert!(answer.contains("Paris"), "{answer}");
    let Some(Delta::Done {
        finish_reason,
        usage: Some(usage),
        ..
    }) = deltas.last()
    else {
        panic!("no Done at the end: {deltas:?}");
    };
    assert!(matches!(finish_reason.as_deref(), Some("stop" | "length")));
    assert!(
        usage.prompt_tokens > 10 && usage.completion_tokens > 0,
        "{usage:?}"
    );
}

#[test]
fn real_model_dropping_the_stream_stops_decoding_within_one_token() {
    let engine = engine(EngineOptions::default());
    let at_drop = runtime().block_on(async {
        let mut stream = engine.stream(&ask(STORY, Some(400))).await.unwrap();
        for _ in 0..3 {
            assert!(matches!(stream.next().await, Some(Ok(Delta::Text(_)))));
        }
        drop(stream);
        engine.stats()
    });
    let after = engine.wait_for_requests(1);
    assert_eq!(after.cancelled, 1, "{after:?}");
    assert!(
        after.decoded_tokens - at_drop.decoded_tokens <= 1,
        "decoded {} tokens after the drop",
        after.decoded_tokens - at_drop.decoded_tokens
    );
    // The thread is free again: the next request is answered.
    let done = runtime()
        .block_on(engine.complete(&ask("Hi", Some(4))))
        .unwrap();
    assert!(done.usage.unwrap().completion_tokens <= 4);
}

#[test]
fn real_model_max_tokens_ends_the_answer_with_length() {
    let engine = engine(EngineOptions::default());
    let done = runtime()
        .block_on(engine.complete(&ask(STORY, Some(7))))
        .unwrap();
    let usage = done.usage.unwrap();
    assert_eq!(usage.completion_tokens, 7, "{done:?}");
    assert_eq!(done.finish_reason.as_deref(), Some("length"));
    assert!(!done.text.is_empty());
}

#[test]
fn real_model_a_second_turn_decodes_only_the_new_suffix() {
    let engine = engine(EngineOptions::default());
    let rt = runtime();
    let first = ask("Name a colour.", Some(16));
    let one = rt.block_on(engine.complete(&first)).unwrap();
    let after_one = engine.stats();
    let p1 = one.usage.unwrap().prompt_tokens;
    assert_eq!(after_one.reused_tokens, 0);
    let mut second = first.clone();
    second
        .messages
        .push(ChatMessage::assistant(one.text.clone()));
    second.messages.push(ChatMessage::user("Name another one."));
    let two = rt.block_on(engine.complete(&second)).unwrap();
    let after_two = engine.stats();
    let p2 = two.usage.unwrap().prompt_tokens;
    let reused = after_two.reused_tokens - after_one.reused_tokens;
    assert!(
        reused >= p1,
        "reused {reused} of the first prompt's {p1} tokens"
    );
    let prompt_decoded =
        after_two.decoded_tokens - after_one.decoded_tokens - two.usage.unwrap().completion_tokens;
    assert!(
        prompt_decoded <= p2 - p1,
        "decoded {prompt_decoded} prompt tokens of {p2}; new since the first prompt: {}",
        p2 - p1
    );
    // The same prompt again: only its last token is decoded again.
    let before = engine.stats();
    rt.block_on(engine.complete(&ask("Name a colour.", Some(1))))
        .unwrap();
    assert_eq!(engine.stats().decoded_tokens - before.decoded_tokens, 1);
}

#[test]
fn real_model_a_full_queue_answers_busy_at_once() {
    let engine = engine(EngineOptions {
        queue_depth: 1,
        ..EngineOptions::default()
    });
    let rt = runtime();
    rt.block_on(async {
        // The first request is being answered (its first piece arrived)
        // and, unread, holds the thread; the second waits in the queue.
        let mut answering = engine.stream(&ask(STORY, Some(400))).await.unwrap();
        assert!(matches!(answering.next().await, Some(Ok(Delta::Text(_)))));
        let waiting = engine.stream(&ask("Hi", Some(2))).await.unwrap();
        let started = std::time::Instant::now();
        let Err(busy) = engine.stream(&ask("Hi", Some(2))).await else {
            panic!("a third request was queued past the bound");
        };
        assert!(started.elapsed() < Duration::from_secs(1));
        assert!(busy.to_string().contains("busy"), "{busy}");
        assert!(
            matches!(busy, porfiry_skills::llm::LlmError::Busy { waiting: 1, .. }),
            "typed: {busy:?}"
        );
        drop(answering);
        let rest: Vec<_> = waiting.collect().await;
        assert!(
            matches!(rest.last(), Some(Ok(Delta::Done { .. }))),
            "{rest:?}"
        );
    });
}

#[test]
fn real_model_a_truncated_copy_is_refused_naming_the_file() {
    let path = test_model_path().unwrap_or_else(|e| panic!("{e}"));
    let bytes = std::fs::read(&path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("half.gguf");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let err = Engine::open(&cut, &EngineOptions::default()).unwrap_err();
    assert!(
        matches!(err, EngineError::Gguf(GgufError::Truncated { .. })),
        "{err}"
    );
    assert!(err.to_string().contains("half.gguf"), "{err}");
}

#[test]
fn real_model_embeds_texts_closer_by_meaning() {
    let engine = engine(EngineOptions::default());
    let texts: Vec<String> = [
        "The cat sat on the mat.",
        "A cat was sitting on the mat.",
        "Quarterly tax forms are due in April.",
    ]
    .map(String::from)
    .to_vec();
    let before = engine.stats();
    let v = runtime().block_on(engine.embed(&texts)).unwrap();
    assert_eq!(v.len(), 3);
    let dims = v[0].len();
    assert!(dims >= 64 && v.iter().all(|x| x.len() == dims), "{dims}");
    let norm = |x: &[f32]| x.iter().map(|a| a * a).sum::<f32>().sqrt();
    assert!(
        v.iter().all(|x| (norm(x) - 1.0).abs() < 1e-3),
        "unit vectors"
    );
    let cos = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    let (near, far) = (cos(&v[0], &v[1]), cos(&v[0], &v[2]));
    println!("cosine: paraphrase {near:.3}, unrelated {far:.3}");
    assert!(near > far, "paraphrase {near} vs unrelated {far}");
    // The same text twice gives the same vector; an answer after still works.
    let again = runtime().block_on(engine.embed(&texts[..1])).unwrap();
    assert_eq!(again[0], v[0]);
    assert_eq!(
        engine.stats().requests,
        before.requests,
        "embeddings are not answers"
    );
    let answer = runtime()
        .block_on(engine.complete(&ask("What is the capital of France?", Some(16))))
        .unwrap();
    assert!(!answer.text.is_empty());
}

#[test]
fn real_model_a_grammar_holds_the_answer_to_its_text() {
    let engine = engine(EngineOptions::default());
    let request = ask("What is the capital of France?", Some(32)).with_grammar(Some(
        r#"root ::= "TOOL_CALL: get_current_time" "\n"?"#.into(),
    ));
    let done = runtime().block_on(engine.complete(&request)).unwrap();
    assert_eq!(done.text.trim_end(), "TOOL_CALL: get_current_time");
    assert_eq!(done.finish_reason.as_deref(), Some("stop"));
    assert!(
        engine.stats().grammar_resamples > 0,
        "the model would have answered Paris: the grammar chose for it"
    );
}

#[test]
fn real_model_a_stop_text_ends_the_answer_where_it_starts() {
    let engine = engine(EngineOptions::default());
    let request = ask("Count.", Some(32))
        .with_grammar(Some(r#"root ::= "one two three four""#.into()))
        .with_stop(&["three"]);
    let deltas: Vec<Delta> = runtime().block_on(async {
        let stream = engine.stream(&request).await.unwrap();
        stream.map(Result::unwrap).collect().await
    });
    let text: String = deltas
        .iter()
        .filter_map(|d| match d {
            Delta::Text(t) => Some(t.as_str()),
            Delta::Done { .. } => None,
        })
        .collect();
    assert_eq!(text, "one two ", "nothing of the stop text is streamed");
    assert!(
        matches!(deltas.last(), Some(Delta::Done { finish_reason: Some(r), .. }) if r == "stop"),
        "{deltas:?}"
    );
}

#[test]
fn real_model_a_grammar_llama_cpp_refuses_fails_that_request_only() {
    let engine = engine(EngineOptions::default());
    let rt = runtime();
    let bad = ask("Hi", Some(4)).with_grammar(Some("root ::= ( \"unclosed\"".into()));
    let e = rt.block_on(engine.complete(&bad)).unwrap_err().to_string();
    assert!(e.contains("llama.cpp refused the reply grammar"), "{e}");
    assert!(e.contains("--constrained off"), "{e}");
    assert_eq!(
        engine.stats().decoded_tokens,
        0,
        "refused before the prompt was read"
    );
    let no_root = ask("Hi", Some(4)).with_grammar(Some("answer ::= \"x\"".into()));
    assert!(rt.block_on(engine.complete(&no_root)).is_err());
    let fine = rt.block_on(engine.complete(&ask("Hi", Some(2)))).unwrap();
    assert!(
        fine.usage.unwrap().completion_tokens > 0,
        "the engine goes on"
    );
}
