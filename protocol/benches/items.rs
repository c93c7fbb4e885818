//! Item speed: encode+sign one note, decode+verify one, and `verify_batch`
//! of 256 (criterion reports the batch; divide by 256 for per item). Also
//! one-by-one decode of the same 256, to show what batching saves.

// `criterion_group!` generates an undocumented `pub fn`.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use porfiry_protocol::{
    Audience, Body, NodeKey, Note, PayloadDraft, VerifiedItem, sign, verify_batch,
};

fn draft(i: usize) -> PayloadDraft {
    PayloadDraft {
        created_ms: 1_767_225_600_000 + i as u64,
        audience: Audience::Public,
        max_hops: 3,
        expires_ms: None,
        replaces: None,
        body: Body::Note(Note {
            // A typical short note: a few sentences.
            text: format!(
                "Note {i}: the meeting moved to Thursday; bring the notes from last week. #plans"
            ),
            topic: Some("plans".into()),
            mentions: vec!["12D3KooWQK1wnefoLrcVHbbnf5tLzbopUd3K3bFAoJpA7YJgL5pV".into()],
            hashtags: vec!["plans".into()],
            priority: 0,
            source: "user".into(),
            reply_to: None,
        }),
    }
}

fn items(c: &mut Criterion) {
    let key = NodeKey::from_seed([7; 32]);
    let one = draft(0);
    let signed = sign(&key, &one).unwrap();
    let bytes = signed.envelope_bytes().to_vec();

    c.bench_function("encode_sign_one", |b| {
        b.iter(|| sign(&key, black_box(&one)).unwrap())
    });
    c.bench_function("decode_verify_one", |b| {
        b.iter(|| VerifiedItem::decode(black_box(&bytes), 0).unwrap())
    });

    // 256 items from 16 authors, as a catch-up batch might hold.
    let keys: Vec<NodeKey> = (0..16u8).map(|i| NodeKey::from_seed([i; 32])).collect();
    let batch: Vec<Vec<u8>> = (0..256)
        .map(|i| {
            sign(&keys[i % 16], &draft(i))
                .unwrap()
                .envelope_bytes()
                .to_vec()
        })
        .collect();
    let refs: Vec<&[u8]> = batch.iter().map(Vec::as_slice).collect();
    let mut group = c.benchmark_group("verify_256");
    group.throughput(Throughput::Elements(256));
    group.bench_with_input(BenchmarkId::new("batch", 256), &refs, |b, refs| {
        b.iter(|| {
            let out = verify_batch(black_box(refs), 0);
            assert!(out.iter().all(Result::is_ok));
        })
    });
    // 256 items of one author: a returning phone's own notes, or a server's
    // owner's pushed live.
    let own: Vec<Vec<u8>> = (0..256)
        .map(|i| sign(&key, &draft(i)).unwrap().envelope_bytes().to_vec())
        .collect();
    let own_refs: Vec<&[u8]> = own.iter().map(Vec::as_slice).collect();
    group.bench_with_input(
        BenchmarkId::new("batch_one_author", 256),
        &own_refs,
        |b, refs| {
            b.iter(|| {
                let out = verify_batch(black_box(refs), 0);
                assert!(out.iter().all(Result::is_ok));
            })
        },
    );
    group.bench_with_input(BenchmarkId::new("one_by_one", 256), &refs, |b, refs| {
        b.iter(|| {
            for r in refs.iter() {
                VerifiedItem::decode(black_box(r), 0).unwrap();
            }
        })
    });
    group.finish();
}

criterion_group!(benches, items);
criterion_main!(benches);
