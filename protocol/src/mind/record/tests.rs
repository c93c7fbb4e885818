//! The `mind_record` body: its checks, its CBOR form (round trip, refused
//! shapes) and the fixed vector quoted in docs/protocol.md.

use super::*;
use crate::item::body::Body;
use crate::item::kinds::ItemKind;

/// The peer id of RFC 8032 test secret 1 (the author of the doc vectors).
const DEVICE: &str = "12D3KooWQK1wnefoLrcVHbbnf5tLzbopUd3K3bFAoJpA7YJgL5pV";

/// The body of the doc's mind record vector, and its CBOR bytes.
pub(crate) fn vector() -> MindRecord {
    let mut vv = VersionVector::new();
    vv.bump(DEVICE).unwrap();
    vv.bump(DEVICE).unwrap();
    MindRecord {
        table: MindTable::Diary,
        key: std::array::from_fn(|i| i as u8),
        vv,
        at_ms: 1_767_225_600_000,
        deleted: false,
        fields: BTreeMap::from([
            ("mood".into(), MindValue::Int(4)),
            ("pinned".into(), MindValue::Bool(true)),
            ("text".into(), MindValue::Text("Walked by the sea.".into())),
        ]),
    }
}

/// The vector's bytes, as docs/protocol.md quotes them. A change here is a
/// wire format change: every device of a person must agree on it.
pub(crate) const VECTOR_HEX: &str = concat!(
    "a6657461626c65656469617279636b657950000102030405060708090a0b0c0d0e0f",
    "627676a17834313244334b6f6f57514b31776e65666f4c7263564862626e663574",
    "4c7a626f705564334b336246416f4a704137594a674c357056026561745f6d731b",
    "0000019b76daa8006764656c65746564f4666669656c6473a3646d6f6f64046670",
    "696e6e6564f564746578747257616c6b656420627920746865207365612e",
);

fn encode(r: &MindRecord) -> Vec<u8> {
    let mut out = Vec::new();
    ciborium::into_writer(r, &mut out).unwrap();
    out
}

fn decode(bytes: &[u8]) -> Result<Body, ItemError> {
    let value: ciborium::Value = ciborium::from_reader(bytes).unwrap();
    Body::from_value(ItemKind::MindRecord, value)
}

#[test]
fn the_fixed_vector_encodes_to_its_bytes() {
    let bytes = encode(&vector());
    if std::env::var_os("PORFIRY_PRINT_VECTORS").is_some() {
        println!("mind_record body: {}", hex::encode(&bytes));
    }
    assert_eq!(hex::encode(&bytes), VECTOR_HEX);
    assert_eq!(decode(&bytes), Ok(Body::MindRecord(vector())));
    assert_eq!(vector().check(), Ok(()));
}

/// The line of docs/protocol.md that starts with `label`, less the label.
pub(crate) fn doc_line(label: &str) -> &'static str {
    include_str!("../../../../docs/protocol.md")
        .lines()
        .find_map(|l| l.strip_prefix(label))
        .map(str::trim)
        .unwrap_or_else(|| panic!("docs/protocol.md has no {label:?} line"))
}

#[test]
fn the_doc_quotes_the_fixed_vector() {
    assert_eq!(doc_line("mind_record body:"), VECTOR_HEX);
}

#[test]
fn cbor_round_trips_every_value_and_table() {
    for table in MindTable::ALL {
        assert_eq!(table.as_str().parse::<MindTable>(), Ok(table));
        let mut r = vector();
        r.table = table;
        r.fields = BTreeMap::from([
            ("a".into(), MindValue::Int(i64::MIN)),
            ("b".into(), MindValue::Int(i64::MAX)),
            ("c".into(), MindValue::Int(0)),
            ("d".into(), MindValue::Bool(false)),
            ("e".into(), MindValue::Text(String::new())),
            ("ж".into(), MindValue::Text("память".into())),
        ]);
        assert_eq!(decode(&encode(&r)), Ok(Body::MindRecord(r.clone())));
    }
    let mut tomb = vector();
    tomb.deleted = true;
    tomb.fields.clear();
    assert_eq!(decode(&encode(&tomb)), Ok(Body::MindRecord(tomb)));
}

#[test]
fn table_names_are_the_wire_names() {
    let names: Vec<&str> = MindTable::ALL.iter().map(|t| t.as_str()).collect();
    assert_eq!(
        names,
        [
            "diary",
            "concept",
            "link",
            "goal",
            "task",
            "llm_memory",
            "strategy",
            "method",
            "rating",
            "llm"
        ],
        "table names are wire format: never change them"
    );
    assert_eq!(
        "Diary".parse::<MindTable>(),
        Err(ItemError::UnknownMindTable("Diary".into()))
    );
}

/// Rewrites one top-level key of the vector's CBOR map and decodes it.
fn decode_with(key: &str, value: Option<ciborium::Value>) -> Result<Body, ItemError> {
    let mut map = ciborium::Value::serialized(&vector()).unwrap();
    let ciborium::Value::Map(entries) = &mut map else {
        unreachable!()
    };
    entries.retain(|(k, _)| k.as_text() != Some(key));
    if let Some(v) = value {
        entries.push((key.into(), v));
    }
    Body::from_value(ItemKind::MindRecord, map)
}

fn is_mismatch(r: Result<Body, ItemError>) -> bool {
    matches!(
        r,
        Err(ItemError::KindMismatch {
            kind: ItemKind::MindRecord,
            ..
        })
    )
}

#[test]
fn bad_shapes_are_refused_while_decoding() {
    use ciborium::Value as V;
    assert!(is_mismatch(decode_with("extra", Some(V::from(1)))));
    assert!(is_mismatch(decode_with("at_ms", None)), "missing field");
    assert!(is_mismatch(decode_with("table", Some(V::from("diaries")))));
    assert!(is_mismatch(decode_with("key", Some(V::Bytes(vec![0; 15])))));
    assert!(is_mismatch(decode_with("key", Some(V::Bytes(vec![0; 32])))));
    let field = |v: V| V::Map(vec![(V::from("x"), v)]);
    assert!(is_mismatch(decode_with(
        "fields",
        Some(field(V::Float(1.5)))
    )));
    assert!(is_mismatch(decode_with("fields", Some(field(V::Null)))));
    assert!(is_mismatch(decode_with(
        "fields",
        Some(field(V::from(u64::MAX)))
    )));
    assert!(is_mismatch(decode_with(
        "fields",
        Some(field(V::Array(vec![])))
    )));
    let twice = V::Map(vec![(V::from("x"), V::from(1)), (V::from("x"), V::from(2))]);
    assert!(is_mismatch(decode_with("fields", Some(twice))));
    let many = V::Map(
        (0..=MAX_MIND_FIELDS)
            .map(|i| (V::from(format!("f{i}")), V::from(true)))
            .collect(),
    );
    assert!(is_mismatch(decode_with("fields", Some(many))));
    let vv_twice = crate::mind::version::raw(&[(DEVICE, 1), (DEVICE, 2)]);
    assert!(is_mismatch(decode_with("vv", Some(vv_twice))));
    let vv_zero = crate::mind::version::raw(&[(DEVICE, 0)]);
    assert!(is_mismatch(decode_with("vv", Some(vv_zero))));
}

#[test]
fn check_refuses_each_broken_limit() {
    let with = |f: &dyn Fn(&mut MindRecord)| {
        let mut r = vector();
        f(&mut r);
        r.check()
    };
    assert_eq!(
        with(&|r| r.vv = VersionVector::new()),
        Err(ItemError::Empty {
            field: "mind_record.vv"
        })
    );
    assert_eq!(
        with(&|r| {
            r.vv = VersionVector::new();
            r.vv.bump("laptop").unwrap();
        }),
        Err(ItemError::BadDevice("laptop".into()))
    );
    assert_eq!(
        with(&|r| r.deleted = true),
        Err(ItemError::TombstoneWithFields(3))
    );
    assert_eq!(
        with(&|r| {
            r.deleted = true;
            r.fields.clear();
        }),
        Ok(())
    );
    assert_eq!(
        with(&|r| {
            r.fields = (0..=MAX_MIND_FIELDS)
                .map(|i| (format!("f{i}"), MindValue::Bool(true)))
                .collect();
        }),
        Err(ItemError::TooManyEntries {
            field: "mind_record.fields",
            count: MAX_MIND_FIELDS + 1,
            max: MAX_MIND_FIELDS
        })
    );
    assert_eq!(
        with(&|r| {
            r.fields.insert(String::new(), MindValue::Int(1));
        }),
        Err(ItemError::Empty {
            field: "mind_record.field_name"
        })
    );
    assert!(matches!(
        with(&|r| {
            r.fields
                .insert("n".repeat(MAX_NAME_LEN + 1), MindValue::Int(1));
        }),
        Err(ItemError::TooLong {
            field: "mind_record.field_name",
            ..
        })
    ));
    let text = |n: usize| MindValue::Text("x".repeat(n));
    assert_eq!(
        with(&|r| {
            r.fields.insert("text".into(), text(MAX_MIND_TEXT_BYTES));
        }),
        Ok(())
    );
    assert!(matches!(
        with(&|r| {
            r.fields
                .insert("text".into(), text(MAX_MIND_TEXT_BYTES + 1));
        }),
        Err(ItemError::TooLong {
            field: "mind_record.fields",
            ..
        })
    ));
    assert!(matches!(
        with(&|r| {
            r.fields.insert("text".into(), text(MAX_MIND_TEXT_BYTES));
            r.fields
                .insert("more".into(), text(MAX_MIND_TEXT_BYTES / 2));
        }),
        Err(ItemError::TooLong {
            field: "mind_record.total",
            ..
        })
    ));
    // The body check is the kind's check.
    let mut bad = vector();
    bad.deleted = true;
    assert_eq!(
        Body::MindRecord(bad).validate(),
        Err(ItemError::TombstoneWithFields(3))
    );
}

#[test]
fn the_largest_record_still_fits_an_envelope() {
    // The writer is one of the devices its vector counts.
    let key = crate::identity::NodeKey::from_seed([10; 32]);
    let mut r = vector();
    r.vv = VersionVector::new();
    for i in 0..crate::mind::version::MAX_DEVICES_PER_PERSON {
        let device = crate::identity::NodeKey::from_seed([i as u8 + 10; 32]).peer_id();
        r.vv.bump(&device.to_string()).unwrap();
    }
    // Names and texts at their limits, together at the record's limit.
    let per_field = MAX_MIND_RECORD_TEXT_BYTES / MAX_MIND_FIELDS;
    r.fields = (0..MAX_MIND_FIELDS)
        .map(|i| {
            let name = format!("{i:0>width$}", width = MAX_NAME_LEN);
            let text = "x".repeat(per_field - MAX_NAME_LEN);
            (name, MindValue::Text(text))
        })
        .collect();
    assert_eq!(r.check(), Ok(()));
    let item = crate::item::verified::sign(
        &key,
        &crate::item::payload::PayloadDraft {
            created_ms: r.at_ms,
            audience: crate::item::audience::Audience::Devices,
            max_hops: 1,
            expires_ms: None,
            replaces: None,
            body: Body::MindRecord(r),
        },
    );
    assert!(item.is_ok(), "{item:?}");
}

#[test]
fn the_content_hash_covers_the_fields_and_nothing_else() {
    let a = vector();
    let mut b = vector();
    b.at_ms += 1;
    b.vv.bump(DEVICE).unwrap();
    b.key = [0xff; 16];
    assert_eq!(a.content_hash(), b.content_hash());
    for change in [
        ("text", MindValue::Text("Walked by the sea!".into())),
        ("mood", MindValue::Int(5)),
        ("mood", MindValue::Text("4".into())),
        ("pinned", MindValue::Bool(false)),
        ("new", MindValue::Bool(false)),
    ] {
        let mut c = vector();
        c.fields.insert(change.0.into(), change.1.clone());
        assert_ne!(a.content_hash(), c.content_hash(), "{change:?}");
    }
    // Moving bytes from a name into its value is another content.
    let one = |k: &str, v: &str| MindRecord {
        fields: BTreeMap::from([(k.into(), MindValue::Text(v.into()))]),
        ..vector()
    };
    assert_ne!(one("ab", "c").content_hash(), one("a", "bc").content_hash());
}

#[test]
fn a_mind_record_travels_to_the_persons_devices_only() {
    use crate::item::audience::Audience;
    let key = crate::identity::NodeKey::from_seed([4; 32]);
    let mut body = vector();
    body.vv.bump(&key.peer_id().to_string()).unwrap();
    let draft = |audience| crate::item::payload::PayloadDraft {
        created_ms: 1,
        audience,
        max_hops: 2,
        expires_ms: None,
        replaces: None,
        body: Body::MindRecord(body.clone()),
    };
    let item = crate::item::verified::sign(&key, &draft(Audience::Devices)).unwrap();
    let back = crate::item::verified::VerifiedItem::decode(item.envelope_bytes(), 2).unwrap();
    assert_eq!(back.body(), &Body::MindRecord(body.clone()));
    // A version that does not count its own writer is refused.
    let foreign = crate::item::payload::PayloadDraft {
        body: Body::MindRecord(vector()),
        ..draft(Audience::Devices)
    };
    assert_eq!(
        crate::item::verified::sign(&key, &foreign).err(),
        Some(ItemError::MindWithoutAuthor(key.peer_id().to_string()))
    );
    for other in [
        Audience::Public,
        Audience::Friends,
        Audience::Group("family".into()),
        Audience::Peer(key.peer_id().to_string()),
    ] {
        assert_eq!(
            crate::item::verified::sign(&key, &draft(other.clone())).err(),
            Some(ItemError::MindBeyondDevices),
            "{other}"
        );
    }
}
