//! The test vectors quoted in docs/protocol.md: each is recomputed here from
//! its seed and fixed fields and compared with the hex in the doc, so the
//! code and the spec cannot drift apart. Run with PORFIRY_PRINT_VECTORS=1 to
//! print freshly computed values (for editing the doc after a format change).

// This test reads docs/protocol.md on purpose; the ban on `std::fs`
// (protocol/clippy.toml) is for the engine.
#![allow(clippy::disallowed_methods)]

use porfiry_protocol::{
    Audience, Body, ItemId, LlmAddress, LlmLimits, NodeKey, Note, PayloadDraft, Rating,
    ReachableAt, Retraction, VerifiedItem, sign,
};

/// 2026-01-01T00:00:00Z in Unix ms: every vector's creation time.
const T0: u64 = 1_767_225_600_000;

/// RFC 8032 section 7.1 test secrets 1, 2 and 3.
const SEEDS: [&str; 3] = [
    "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
    "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
    "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
];

fn key(i: usize) -> NodeKey {
    let mut seed = [0u8; 32];
    hex::decode_to_slice(SEEDS[i], &mut seed).unwrap();
    NodeKey::from_seed(seed)
}

/// The vectors, in doc order: (signing key index, draft). Later vectors
/// point at earlier ones by id, as real items do.
fn computed() -> Vec<(usize, VerifiedItem)> {
    let mut out: Vec<(usize, VerifiedItem)> = Vec::new();
    let note = sign(
        &key(0),
        &PayloadDraft {
            created_ms: T0,
            audience: Audience::Public,
            max_hops: 3,
            expires_ms: None,
            replaces: None,
            body: Body::Note(Note {
                text: "Hello, mesh!".into(),
                topic: Some("greetings".into()),
                mentions: vec![],
                hashtags: vec!["hello".into()],
                priority: 0,
                source: "user".into(),
                reply_to: None,
            }),
        },
    )
    .unwrap();
    out.push((0, note.clone()));
    let rating = sign(
        &key(1),
        &PayloadDraft {
            created_ms: T0 + 1_000,
            audience: Audience::Friends,
            max_hops: 1,
            expires_ms: Some(T0 + 86_400_000),
            replaces: None,
            body: Body::Rating(Rating {
                target: note.id(),
                score: 2,
                comment: "useful".into(),
            }),
        },
    )
    .unwrap();
    out.push((1, rating));
    let llm = sign(
        &key(2),
        &PayloadDraft {
            created_ms: T0 + 2_000,
            audience: Audience::Group("family".into()),
            max_hops: 1,
            expires_ms: None,
            replaces: Some(ItemId([0x11; 32])),
            body: Body::LlmAddress(LlmAddress {
                name: "home-gpu".into(),
                endpoint: key(0).peer_id().to_string(),
                model: "qwen3-32b".into(),
                features: vec!["chat".into(), "tools".into()],
                limits: LlmLimits {
                    context_tokens: Some(32_768),
                    max_output_tokens: None,
                    requests_per_minute: Some(30),
                },
            }),
        },
    )
    .unwrap();
    out.push((2, llm));
    let retraction = sign(
        &key(0),
        &PayloadDraft {
            created_ms: T0 + 3_000,
            audience: Audience::Public,
            max_hops: 3,
            expires_ms: None,
            replaces: None,
            body: Body::Retraction(Retraction { target: note.id() }),
        },
    )
    .unwrap();
    out.push((0, retraction));
    let direct = sign(
        &key(1),
        &PayloadDraft {
            created_ms: T0 + 4_000,
            audience: Audience::Peer(key(0).peer_id().to_string()),
            max_hops: 1,
            expires_ms: None,
            replaces: None,
            body: Body::Note(Note {
                text: "Lunch at noon?".into(),
                topic: None,
                mentions: vec![],
                hashtags: vec![],
                priority: 1,
                source: "llm".into(),
                reply_to: Some(note.id()),
            }),
        },
    )
    .unwrap();
    out.push((1, direct));
    let reach = sign(
        &key(2),
        &PayloadDraft {
            created_ms: T0 + 5_000,
            audience: Audience::Friends,
            max_hops: 1,
            expires_ms: None,
            replaces: Some(ItemId([0x22; 32])),
            body: Body::ReachableAt(ReachableAt {
                addresses: vec![
                    "/ip4/192.0.2.10/tcp/4001".into(),
                    format!(
                        "/ip4/203.0.113.7/tcp/4001/p2p/{}/p2p-circuit",
                        key(0).peer_id()
                    ),
                ],
            }),
        },
    )
    .unwrap();
    out.push((2, reach));
    out
}

/// One vector as the doc writes it.
#[derive(Debug, Default, PartialEq)]
struct DocVector {
    seed: String,
    payload: String,
    signature: String,
    id: String,
}

/// Reads every `### Vector` section's `seed:`, `payload:`, `signature:` and
/// `id:` lines from docs/protocol.md.
fn doc_vectors() -> Vec<DocVector> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/protocol.md");
    let doc = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {path}: {e}"));
    let mut out = Vec::new();
    for section in doc.split("\n### Vector ").skip(1) {
        let section = section.split("\n## ").next().unwrap();
        let mut v = DocVector::default();
        for line in section.lines() {
            let Some((field, value)) = line.split_once(':') else {
                continue;
            };
            let value = value.trim().to_owned();
            match field.trim() {
                "seed" => v.seed = value,
                "payload" => v.payload = value,
                "signature" => v.signature = value,
                "id" => v.id = value,
                _ => {}
            }
        }
        out.push(v);
    }
    out
}

#[test]
fn the_doc_vectors_are_what_the_code_computes() {
    let computed: Vec<DocVector> = computed()
        .into_iter()
        .map(|(k, item)| DocVector {
            seed: SEEDS[k].into(),
            payload: hex::encode(item.payload_bytes()),
            signature: hex::encode(item.signature_bytes()),
            id: item.id().to_string(),
        })
        .collect();
    if std::env::var_os("PORFIRY_PRINT_VECTORS").is_some() {
        for v in &computed {
            println!(
                "seed:      {}\npayload:   {}\nsignature: {}\nid:        {}\n",
                v.seed, v.payload, v.signature, v.id
            );
        }
    }
    let doc = doc_vectors();
    assert!(
        doc.len() >= 3,
        "docs/protocol.md must hold at least three vectors, found {}",
        doc.len()
    );
    assert_eq!(doc, computed);
}

#[test]
fn the_doc_names_vector_one_by_its_peer_id() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/protocol.md"))
        .unwrap();
    assert!(
        doc.contains(&format!("PeerId\n`{}`", key(0).peer_id())),
        "vector 1 PeerId missing from the doc"
    );
}

#[test]
fn the_doc_vectors_decode_from_their_hex_alone() {
    // What another implementation does: take payload + signature, verify, hash.
    for v in doc_vectors() {
        let payload = hex::decode(&v.payload).unwrap();
        let signature = hex::decode(&v.signature).unwrap();
        let item = VerifiedItem::from_parts(&payload, &signature, 0).unwrap();
        assert_eq!(item.id().to_string(), v.id);
        let mut seed = [0u8; 32];
        hex::decode_to_slice(&v.seed, &mut seed).unwrap();
        assert_eq!(item.author(), NodeKey::from_seed(seed).author());
    }
}
