//! The frame codec at its bounds: round trips, exact bytes, truncation at every
//! byte, oversize refused before the body, garbage, and text splitting.

use futures::executor::block_on;
use futures::io::Cursor;
use serde_json::json;

use super::*;

fn request() -> ClientFrame {
    ClientFrame::Request(OffloadRequest {
        system: "sys".into(),
        messages: vec![ChatMessage::user("привет")],
        stream: true,
        max_tokens: Some(48),
        stop: vec![],
    })
}

#[test]
fn the_budget_travels_and_an_older_clients_frame_has_none() {
    let ClientFrame::Request(sent) = request() else {
        unreachable!()
    };
    assert_eq!(sent.model_request().max_tokens, Some(48));
    let older = br#"{"type":"request","system":"s","messages":[],"stream":false}"#;
    let mut bytes = u32::try_from(older.len()).unwrap().to_be_bytes().to_vec();
    bytes.extend_from_slice(older);
    let back: ClientFrame = read(&bytes, MAX_OFFLOAD_REQUEST_BYTES).unwrap().unwrap();
    let ClientFrame::Request(back) = back else {
        panic!("{back:?}")
    };
    assert_eq!(back.max_tokens, None);
    assert_eq!(back.model_request().max_tokens, None);
    assert!(back.model_request().stop.is_empty());
}

#[test]
fn stop_texts_travel_and_the_grammar_does_not() {
    let asked = ModelRequest::new("s".into(), vec![], Some(8))
        .with_grammar(Some("root ::= \"x\"".into()))
        .with_stop(&["TOOL_RESULT"]);
    let sent = OffloadRequest::new(&asked, false);
    let json = serde_json::to_value(&sent).unwrap();
    assert_eq!(json["stop"], json!(["TOOL_RESULT"]));
    assert!(json.get("grammar").is_none(), "{json}");
    let served = sent.model_request();
    assert_eq!(served.stop, ["TOOL_RESULT"]);
    assert_eq!(served.grammar, None);
}

fn read<T: DeserializeOwned>(bytes: &[u8], limit: usize) -> Result<Option<T>, WireError> {
    block_on(read_frame(&mut Cursor::new(bytes.to_vec()), limit))
}

#[test]
fn every_frame_round_trips() {
    let frames = vec![
        ServerFrame::Delta {
            text: "a\"b\n🦀".into(),
        },
        ServerFrame::Done {
            finish_reason: Some("stop".into()),
            usage: Some(Usage::new(3, 4)),
        },
        ServerFrame::Done {
            finish_reason: None,
            usage: None,
        },
    ];
    let kinds = [
        ErrorKind::NotPermitted,
        ErrorKind::Busy {
            retry_after_ms: 5000,
        },
        ErrorKind::ModelDown,
        ErrorKind::TooLarge,
        ErrorKind::Deadline,
        ErrorKind::BadRequest,
    ];
    let errors = kinds.into_iter().map(|kind| ServerFrame::Error {
        kind,
        message: "m".into(),
    });
    for frame in frames.into_iter().chain(errors) {
        let bytes = encode(&frame);
        let back: ServerFrame = read(&bytes, MAX_OFFLOAD_FRAME_BYTES).unwrap().unwrap();
        assert_eq!(back, frame);
    }
    for frame in [request(), ClientFrame::Cancel] {
        let back: ClientFrame = read(&encode(&frame), MAX_OFFLOAD_REQUEST_BYTES)
            .unwrap()
            .unwrap();
        assert_eq!(back, frame);
    }
}

#[test]
fn the_bytes_are_a_big_endian_length_and_json() {
    let bytes = encode(&ServerFrame::Error {
        kind: ErrorKind::Busy { retry_after_ms: 7 },
        message: "full".into(),
    });
    let body = &bytes[4..];
    assert_eq!(&bytes[..4], &(body.len() as u32).to_be_bytes());
    let v: serde_json::Value = serde_json::from_slice(body).unwrap();
    assert_eq!(
        v,
        json!({"type": "error", "kind": {"kind": "busy", "retry_after_ms": 7}, "message": "full"})
    );
    let v: serde_json::Value = serde_json::from_slice(&encode(&request())[4..]).unwrap();
    assert_eq!(
        v,
        json!({"type": "request", "system": "sys", "stream": true, "max_tokens": 48,
               "messages": [{"role": "user", "content": "привет"}]})
    );
}

#[test]
fn a_clean_end_before_a_frame_is_none_and_inside_one_is_truncated() {
    assert!(read::<ServerFrame>(&[], 100).unwrap().is_none());
    let bytes = encode(&request());
    for cut in 1..bytes.len() {
        let e = read::<ClientFrame>(&bytes[..cut], MAX_OFFLOAD_REQUEST_BYTES).unwrap_err();
        assert!(
            matches!(e, WireError::Truncated { .. }),
            "cut at {cut}: {e}"
        );
    }
}

#[test]
fn oversize_is_refused_from_the_length_alone() {
    // Only the length: a reader that tried to read the body would report truncation.
    let len = (MAX_OFFLOAD_FRAME_BYTES as u32 + 1).to_be_bytes();
    let e = read::<ServerFrame>(&len, MAX_OFFLOAD_FRAME_BYTES).unwrap_err();
    assert!(
        matches!(e, WireError::TooLarge { len, limit } if len == MAX_OFFLOAD_FRAME_BYTES + 1 && limit == MAX_OFFLOAD_FRAME_BYTES),
        "{e}"
    );
    // Exactly at the cap is read.
    let overhead = encode(&ServerFrame::Delta {
        text: String::new(),
    })
    .len()
        - 4;
    let text = "x".repeat(MAX_OFFLOAD_FRAME_BYTES - overhead);
    let bytes = encode(&ServerFrame::Delta { text });
    assert_eq!(bytes.len() - 4, MAX_OFFLOAD_FRAME_BYTES);
    assert!(
        read::<ServerFrame>(&bytes, MAX_OFFLOAD_FRAME_BYTES)
            .unwrap()
            .is_some()
    );
    let e = read::<ServerFrame>(&bytes, MAX_OFFLOAD_FRAME_BYTES - 1).unwrap_err();
    assert!(matches!(e, WireError::TooLarge { .. }), "{e}");
}

#[test]
fn garbage_and_the_wrong_shape_are_garbage() {
    for body in [
        &b"\xff\x00garbage"[..],
        b"{}",
        b"{\"type\":\"delta\"}",
        b"[1,2]",
        b"",
    ] {
        let mut bytes = (body.len() as u32).to_be_bytes().to_vec();
        bytes.extend_from_slice(body);
        let e = read::<ServerFrame>(&bytes, 100).unwrap_err();
        assert!(matches!(e, WireError::Garbage(_)), "{body:?}: {e}");
    }
    // A server frame is not a client frame.
    let bytes = encode(&ServerFrame::Delta { text: "x".into() });
    assert!(matches!(
        read::<ClientFrame>(&bytes, 100).unwrap_err(),
        WireError::Garbage(_)
    ));
}

#[test]
fn frames_follow_each_other_on_one_stream() {
    let mut bytes = encode(&ServerFrame::Delta { text: "a".into() });
    bytes.extend(encode(&ServerFrame::Done {
        finish_reason: None,
        usage: None,
    }));
    let mut cursor = Cursor::new(bytes);
    block_on(async {
        let a: ServerFrame = read_frame(&mut cursor, 100).await.unwrap().unwrap();
        let b: ServerFrame = read_frame(&mut cursor, 100).await.unwrap().unwrap();
        let end: Option<ServerFrame> = read_frame(&mut cursor, 100).await.unwrap();
        assert_eq!(a, ServerFrame::Delta { text: "a".into() });
        assert!(matches!(b, ServerFrame::Done { .. }));
        assert!(end.is_none());
    });
}

#[test]
fn text_splits_on_char_boundaries_within_the_cap() {
    assert!(split_text("").is_empty());
    assert_eq!(split_text("ab"), vec!["ab"]);
    let text = "ж".repeat(MAX_DELTA_TEXT_BYTES); // 2 bytes each
    let pieces = split_text(&text);
    assert_eq!(pieces.len(), 2);
    assert!(pieces.iter().all(|p| p.len() <= MAX_DELTA_TEXT_BYTES));
    assert_eq!(pieces.concat(), text);
    let odd = format!("a{}", "ж".repeat(MAX_DELTA_TEXT_BYTES / 2));
    let pieces = split_text(&odd);
    assert_eq!(pieces[0].len(), MAX_DELTA_TEXT_BYTES - 1);
    assert_eq!(pieces.concat(), odd);
    // The worst escaping of a full piece still fits one frame.
    let controls = "\u{1}".repeat(MAX_DELTA_TEXT_BYTES);
    assert!(encode(&ServerFrame::Delta { text: controls }).len() - 4 <= MAX_OFFLOAD_FRAME_BYTES);
}
