//! The wire codec: every message round-trips; fixed test vectors (the ones
//! docs/wire.md shows) pin the bytes; every cap and every malformed shape is
//! refused with the error that names it; the frame cap is checked before
//! any parsing; `pack_items` splits under the caps and counts for SyncDone.

use porfiry_protocol::ItemId;
use porfiry_protocol::limits::MAX_ENVELOPE_BYTES;
use porfiry_protocol::wire::{
    self, Announce, MAX_CBOR_ITEMS, MAX_IDS_PER_MESSAGE, MAX_ITEMS_PER_MESSAGE, MAX_REASON_BYTES,
    MAX_WIRE_MESSAGE_BYTES, SYNC_FRAME_BYTES, WireError, WireItem, WireMessage,
};
use proptest::prelude::*;

fn all_kinds() -> Vec<WireMessage> {
    vec![
        WireMessage::Have {
            items: vec![
                Announce {
                    id: ItemId([1; 32]),
                    hops: 3,
                },
                Announce {
                    id: ItemId([2; 32]),
                    hops: 0,
                },
            ],
        },
        WireMessage::Want {
            ids: vec![ItemId([3; 32])],
        },
        WireMessage::Items {
            session: None,
            items: vec![WireItem {
                hops: 2,
                envelope: vec![0xa2, 1, 2],
            }],
        },
        WireMessage::Items {
            session: Some(u64::MAX),
            items: vec![],
        },
        WireMessage::SyncQuery {
            session: 1,
            frame: vec![0x61],
        },
        WireMessage::SyncReply {
            session: 2,
            frame: vec![0x61, 0],
        },
        WireMessage::SyncDone {
            session: 3,
            sent: 10_000,
        },
        WireMessage::SyncAbort {
            session: 4,
            reason: "timed out".into(),
        },
    ]
}

#[test]
fn every_message_round_trips() {
    for m in all_kinds() {
        let bytes = wire::encode(&m).unwrap();
        assert_eq!(wire::decode(&bytes), Ok(m.clone()), "{}", m.name());
    }
}

#[test]
fn test_vectors() {
    let want = WireMessage::Want {
        ids: vec![ItemId([0xab; 32])],
    };
    let mut expected = vec![0x82, 0x02, 0x58, 0x20];
    expected.extend([0xab; 32]);
    assert_eq!(wire::encode(&want).unwrap(), expected);
    let have = WireMessage::Have {
        items: vec![Announce {
            id: ItemId([0x11; 32]),
            hops: 2,
        }],
    };
    let mut expected = vec![0x83, 0x01, 0x58, 0x20];
    expected.extend([0x11; 32]);
    expected.extend([0x41, 0x02]);
    assert_eq!(wire::encode(&have).unwrap(), expected);
    let items = WireMessage::Items {
        session: Some(5),
        items: vec![WireItem {
            hops: 1,
            envelope: vec![0xa0],
        }],
    };
    assert_eq!(
        wire::encode(&items).unwrap(),
        vec![0x83, 0x03, 0x05, 0x81, 0x82, 0x01, 0x41, 0xa0]
    );
    let live = WireMessage::Items {
        session: None,
        items: vec![],
    };
    assert_eq!(wire::encode(&live).unwrap(), vec![0x83, 0x03, 0xf6, 0x80]);
    let done = WireMessage::SyncDone {
        session: 5,
        sent: 300,
    };
    assert_eq!(
        wire::encode(&done).unwrap(),
        vec![0x83, 0x06, 0x05, 0x19, 0x01, 0x2c]
    );
    let query = WireMessage::SyncQuery {
        session: 1,
        frame: vec![0x61, 0x00, 0x02, 0x00],
    };
    assert_eq!(
        wire::encode(&query).unwrap(),
        vec![0x83, 0x04, 0x01, 0x44, 0x61, 0x00, 0x02, 0x00]
    );
    let abort = WireMessage::SyncAbort {
        session: 1,
        reason: "x".into(),
    };
    assert_eq!(
        wire::encode(&abort).unwrap(),
        vec![0x83, 0x07, 0x01, 0x61, b'x']
    );
}

#[test]
fn the_frame_cap_is_checked_before_parsing() {
    // Not even CBOR, but too long: the size is what gets reported.
    let junk = vec![0xff; MAX_WIRE_MESSAGE_BYTES + 1];
    assert_eq!(
        wire::decode(&junk),
        Err(WireError::FrameTooLarge {
            len: MAX_WIRE_MESSAGE_BYTES + 1,
            max: MAX_WIRE_MESSAGE_BYTES
        })
    );
}

#[test]
fn malformed_frames_say_what_is_wrong() {
    let cases: Vec<(Vec<u8>, WireError)> = vec![
        (vec![], WireError::Truncated),
        (vec![0x82, 0x02], WireError::Truncated),
        (vec![0x82, 0x02, 0x40, 0x00], WireError::TrailingBytes(1)),
        (vec![0x02], WireError::NotAMessage),
        (vec![0x80], WireError::NotAMessage),
        (vec![0x81, 0x61, b'x'], WireError::NotAMessage),
        (vec![0x82, 0x18, 0x63, 0x40], WireError::UnknownType(99)),
        (vec![0x81, 0x00], WireError::UnknownType(0)),
        (
            vec![0x83, 0x02, 0x40, 0x40],
            WireError::WrongArity {
                message: "want",
                got: 2,
                expected: 1,
            },
        ),
    ];
    for (bytes, err) in cases {
        assert_eq!(wire::decode(&bytes), Err(err), "{bytes:02x?}");
    }
    assert!(matches!(wire::decode(&[0x1c]), Err(WireError::BadCbor(_))));
    let deep = vec![0x81; 10_000];
    assert!(matches!(wire::decode(&deep), Err(WireError::BadCbor(d)) if d.contains("nested")));
}

fn bad_field(bytes: &[u8]) -> (String, String) {
    match wire::decode(bytes) {
        Err(WireError::BadField { message, field, .. }) => (message.into(), field.into()),
        other => panic!("expected BadField, got {other:?}"),
    }
}

#[test]
fn bad_fields_are_named() {
    // want.ids of 31 bytes: not whole ids.
    let mut b = vec![0x82, 0x02, 0x58, 31];
    b.extend([0; 31]);
    assert_eq!(bad_field(&b), ("want".into(), "ids".into()));
    // have with 1 id and 2 hop counts.
    let mut b = vec![0x83, 0x01, 0x58, 32];
    b.extend([0; 32]);
    b.extend([0x42, 1, 1]);
    assert_eq!(bad_field(&b), ("have".into(), "hops".into()));
    // items.session as text.
    assert_eq!(
        bad_field(&[0x83, 0x03, 0x61, b'a', 0x80]),
        ("items".into(), "session".into())
    );
    // an item that is not [hops, envelope], or with hops 256.
    assert_eq!(
        bad_field(&[0x83, 0x03, 0xf6, 0x81, 0x01]),
        ("items".into(), "items".into())
    );
    assert_eq!(
        bad_field(&[0x83, 0x03, 0xf6, 0x81, 0x82, 0x19, 0x01, 0x00, 0x40]),
        ("items".into(), "items".into())
    );
    // sync-done.sent beyond 32 bits; sync-query.frame as text; abort reason as bytes.
    assert_eq!(
        bad_field(&[0x83, 0x06, 0x01, 0x1b, 0, 0, 0, 1, 0, 0, 0, 0]),
        ("sync-done".into(), "sent".into())
    );
    assert_eq!(
        bad_field(&[0x83, 0x04, 0x01, 0x61, b'a']),
        ("sync-query".into(), "frame".into())
    );
    assert_eq!(
        bad_field(&[0x83, 0x07, 0x01, 0x41, b'a']),
        ("sync-abort".into(), "reason".into())
    );
    assert_eq!(
        bad_field(&[0x83, 0x05, 0x20, 0x40]),
        ("sync-reply".into(), "session".into())
    );
}

#[test]
fn caps_are_enforced_on_both_ends() {
    let ids = vec![ItemId([0; 32]); MAX_IDS_PER_MESSAGE + 1];
    let want = WireMessage::Want { ids: ids.clone() };
    let too_many = WireError::TooMany {
        message: "want",
        what: "ids",
        count: MAX_IDS_PER_MESSAGE + 1,
        max: MAX_IDS_PER_MESSAGE,
    };
    assert_eq!(wire::encode(&want), Err(too_many.clone()));
    // Hand-built frame with too many ids: refused on decode too.
    let packed: Vec<u8> = ids.iter().flat_map(|i| i.0).collect();
    let mut frame = Vec::new();
    ciborium::into_writer(
        &ciborium::Value::Array(vec![2u64.into(), ciborium::Value::Bytes(packed)]),
        &mut frame,
    )
    .unwrap();
    assert_eq!(wire::decode(&frame), Err(too_many));

    let big = WireMessage::Items {
        session: None,
        items: vec![WireItem {
            hops: 1,
            envelope: vec![0; MAX_ENVELOPE_BYTES + 1],
        }],
    };
    assert!(matches!(
        wire::encode(&big),
        Err(WireError::FieldTooLarge {
            field: "envelope",
            ..
        })
    ));
    let mut frame = Vec::new();
    let value = ciborium::Value::Array(vec![
        3u64.into(),
        ciborium::Value::Null,
        ciborium::Value::Array(vec![ciborium::Value::Array(vec![
            1u64.into(),
            ciborium::Value::Bytes(vec![0; MAX_ENVELOPE_BYTES + 1]),
        ])]),
    ]);
    ciborium::into_writer(&value, &mut frame).unwrap();
    assert!(matches!(
        wire::decode(&frame),
        Err(WireError::FieldTooLarge {
            field: "envelope",
            ..
        })
    ));

    let many = WireMessage::Items {
        session: None,
        items: vec![
            WireItem {
                hops: 1,
                envelope: vec![]
            };
            MAX_ITEMS_PER_MESSAGE + 1
        ],
    };
    assert!(matches!(
        wire::encode(&many),
        Err(WireError::TooMany { what: "items", .. })
    ));
    let frame = WireMessage::SyncQuery {
        session: 1,
        frame: vec![0; SYNC_FRAME_BYTES + 1],
    };
    assert!(matches!(
        wire::encode(&frame),
        Err(WireError::FieldTooLarge { field: "frame", .. })
    ));
    let reason = WireMessage::SyncAbort {
        session: 1,
        reason: "x".repeat(MAX_REASON_BYTES + 1),
    };
    assert!(matches!(
        wire::encode(&reason),
        Err(WireError::FieldTooLarge {
            field: "reason",
            ..
        })
    ));
    // Sixteen maximum envelopes do not fit one frame: encode refuses.
    let heavy = WireMessage::Items {
        session: None,
        items: vec![
            WireItem {
                hops: 1,
                envelope: vec![0; MAX_ENVELOPE_BYTES]
            };
            16
        ],
    };
    assert!(matches!(
        wire::encode(&heavy),
        Err(WireError::FrameTooLarge { .. })
    ));
}

#[test]
fn a_huge_declared_length_is_refused_without_allocating_it() {
    // A byte string claiming 2^60 bytes in a 12-byte frame.
    let frame = [0x82, 0x02, 0x5b, 0x10, 0, 0, 0, 0, 0, 0, 0];
    assert_eq!(wire::decode(&frame), Err(WireError::Truncated));
    let frame = [0x83, 0x03, 0xf6, 0x9b, 0x10, 0, 0, 0, 0, 0, 0, 0];
    assert_eq!(wire::decode(&frame), Err(WireError::Truncated));
}

#[test]
fn a_frame_of_many_tiny_items_is_refused_before_it_is_parsed() {
    // An input written for the `wire_frame` fuzz target broke its heap bound
    // (issue 46): a 1 MiB frame of one-byte integers made the parser hold
    // 32 MiB.
    let n = MAX_WIRE_MESSAGE_BYTES - 16;
    let mut frame = vec![0x82, 0x01, 0x9b];
    frame.extend_from_slice(&(n as u64).to_be_bytes());
    frame.resize(frame.len() + n, 0);
    assert_eq!(
        wire::decode(&frame),
        Err(WireError::TooMany {
            message: "frame",
            what: "CBOR data items",
            count: n + 3,
            max: MAX_CBOR_ITEMS,
        })
    );
    // The largest message by item count still decodes.
    let full = WireMessage::Items {
        session: Some(u64::MAX),
        items: (0..MAX_ITEMS_PER_MESSAGE)
            .map(|i| WireItem {
                hops: 255,
                envelope: vec![i as u8; 3],
            })
            .collect(),
    };
    let bytes = wire::encode(&full).unwrap();
    assert_eq!(wire::decode(&bytes), Ok(full));
}

#[test]
fn pack_items_splits_under_the_caps_and_counts_for_sync_done() {
    let env = vec![7u8; MAX_ENVELOPE_BYTES];
    let items: Vec<WireItem> = (0..40)
        .map(|i| WireItem {
            hops: i as u8,
            envelope: env.clone(),
        })
        .collect();
    let mut oversized = items.clone();
    oversized.insert(
        3,
        WireItem {
            hops: 1,
            envelope: vec![0; MAX_ENVELOPE_BYTES + 1],
        },
    );
    let messages = wire::pack_items(Some(9), oversized);
    let last = messages.last().unwrap().clone();
    assert_eq!(
        last,
        WireMessage::SyncDone {
            session: 9,
            sent: 40
        },
        "the oversized one is skipped, not counted"
    );
    let mut seen = Vec::new();
    for m in &messages[..messages.len() - 1] {
        let bytes = wire::encode(m).expect("every packed frame is within the caps");
        assert!(bytes.len() <= wire::ITEMS_MESSAGE_TARGET_BYTES);
        let WireMessage::Items {
            session: Some(9),
            items,
        } = m
        else {
            panic!("items expected")
        };
        seen.extend(items.iter().map(|i| i.hops));
    }
    assert_eq!(seen, (0..40).collect::<Vec<u8>>(), "order kept");
    assert_eq!(
        messages.len() - 1,
        14,
        "three 64 KiB envelopes fit a 256 KiB message, four do not"
    );

    let tiny: Vec<WireItem> = (0..MAX_ITEMS_PER_MESSAGE + 5)
        .map(|_| WireItem {
            hops: 1,
            envelope: vec![1],
        })
        .collect();
    let messages = wire::pack_items(None, tiny);
    assert_eq!(
        messages.len(),
        2,
        "the count cap splits too; no SyncDone without a session"
    );
    assert!(
        wire::pack_items(Some(1), vec![])
            == vec![WireMessage::SyncDone {
                session: 1,
                sent: 0
            }]
    );
}

proptest! {
    #[test]
    fn decode_never_panics_on_random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = wire::decode(&bytes);
    }

    #[test]
    fn random_messages_round_trip(
        ids in proptest::collection::vec(any::<[u8; 32]>(), 0..20),
        hops in any::<u8>(),
        session in proptest::option::of(any::<u64>()),
        envelopes in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..100), 0..10),
    ) {
        let have = WireMessage::Have { items: ids.iter().map(|i| Announce { id: ItemId(*i), hops }).collect() };
        let items = WireMessage::Items { session, items: envelopes.into_iter().map(|e| WireItem { hops, envelope: e }).collect() };
        for m in [have, items] {
            prop_assert_eq!(wire::decode(&wire::encode(&m).unwrap()), Ok(m));
        }
    }
}
