//! Shared test helpers: proptest strategies for every body kind and for
//! whole drafts (always within the limits), and a few fixed sample items.
#![allow(dead_code)] // each test file uses a different subset

use porfiry_protocol::devices::{DeviceStatement, DeviceUnlink, LinkProposal};
use porfiry_protocol::limits::{MAX_HOPS, MAX_SCORE, MIN_SCORE};
use porfiry_protocol::mind::{MindRecord, MindTable, MindValue, VersionVector};
use porfiry_protocol::{
    Audience, Body, ClubAction, ClubChange, ClubRef, ItemId, LlmAddress, LlmLimits, NodeKey, Note,
    PayloadDraft, Rating, ReachableAt, Retraction, StagnationStrategy, ThinkingMethod,
    VerifiedItem, sign,
};
use proptest::prelude::*;

/// Short printable text, any script.
pub fn short() -> impl Strategy<Value = String> {
    "\\PC{0,24}"
}

/// Non-empty short text.
pub fn name() -> impl Strategy<Value = String> {
    "\\PC{1,24}"
}

pub fn list() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(short(), 0..6)
}

pub fn item_id() -> impl Strategy<Value = ItemId> {
    any::<[u8; 32]>().prop_map(ItemId)
}

pub fn audience() -> impl Strategy<Value = Audience> {
    prop_oneof![
        Just(Audience::Public),
        Just(Audience::Friends),
        "[a-z0-9_-]{1,32}".prop_map(Audience::Group),
        Just(Audience::Devices),
    ]
}

pub fn endpoint() -> impl Strategy<Value = String> {
    prop_oneof![
        "https?://[a-z0-9.-]{1,30}(:[0-9]{1,5})?(/[a-z0-9/]{0,20})?",
        any::<[u8; 32]>().prop_map(|seed| NodeKey::from_seed(seed).peer_id().to_string()),
    ]
}

/// Multiaddr text as nodes write it: TCP on IPv4, or a relay circuit.
pub fn address() -> impl Strategy<Value = String> {
    prop_oneof![
        "/ip4/10\\.0\\.[1-9][0-9]?\\.[1-9]/tcp/[1-9][0-9]{0,3}",
        "/ip4/192\\.168\\.1\\.[1-9]/tcp/[1-9][0-9]{0,3}/p2p-circuit",
    ]
}

pub fn body() -> impl Strategy<Value = Body> {
    prop_oneof![
        prop::collection::vec(address(), 0..4)
            .prop_map(|addresses| Body::ReachableAt(ReachableAt { addresses })),
        (
            "\\PC{1,200}",
            prop::option::of(short()),
            list(),
            list(),
            any::<u8>(),
            short(),
            prop::option::of(item_id())
        )
            .prop_map(
                |(text, topic, mentions, hashtags, priority, source, reply_to)| {
                    Body::Note(Note {
                        text,
                        topic,
                        mentions,
                        hashtags,
                        priority,
                        source,
                        reply_to,
                    })
                }
            ),
        (
            name(),
            short(),
            short(),
            list(),
            any::<u8>(),
            proptest::option::of(name())
        )
            .prop_map(|(name, class, description, steps, cost, mechanism)| {
                Body::StagnationStrategy(StagnationStrategy {
                    name,
                    class,
                    description,
                    steps,
                    cost,
                    mechanism,
                })
            }),
        (name(), short(), list()).prop_map(|(name, description, steps)| Body::ThinkingMethod(
            ThinkingMethod {
                name,
                description,
                steps
            }
        )),
        (item_id(), MIN_SCORE..=MAX_SCORE, short()).prop_map(|(target, score, comment)| {
            Body::Rating(Rating {
                target,
                score,
                comment,
            })
        }),
        (
            name(),
            endpoint(),
            short(),
            list(),
            prop::option::of(any::<u32>()),
            prop::option::of(any::<u32>()),
            prop::option::of(any::<u32>())
        )
            .prop_map(|(name, endpoint, model, features, c, o, r)| {
                Body::LlmAddress(LlmAddress {
                    name,
                    endpoint,
                    model,
                    features,
                    limits: LlmLimits {
                        context_tokens: c,
                        max_output_tokens: o,
                        requests_per_minute: r,
                    },
                })
            }),
        item_id().prop_map(|target| Body::Retraction(Retraction { target })),
        (
            "[a-z0-9_-]{1,32}",
            any::<[u8; 32]>(),
            any::<[u8; 32]>(),
            0usize..4
        )
            .prop_map(|(name, founder, target, action)| {
                let peer = |seed| NodeKey::from_seed(seed).peer_id().to_string();
                Body::ClubChange(ClubChange {
                    club: ClubRef::new(&name, &peer(founder)).expect("valid club"),
                    action: [
                        ClubAction::Add,
                        ClubAction::AddAdmin,
                        ClubAction::Remove,
                        ClubAction::Leave,
                    ][action],
                    target: peer(target),
                })
            }),
        mind_record().prop_map(Body::MindRecord),
        device_statement().prop_map(Body::DeviceLink),
    ]
}

/// The node that signs every generated device statement (`key(1)`): an
/// item carrying one must be signed by a side of it, so sign drafts with
/// [`signer`].
pub const DEVICE_SIGNER: u8 = 1;

/// A device link of `key(DEVICE_SIGNER)` with another node, or its unlink.
pub fn device_statement() -> impl Strategy<Value = DeviceStatement> {
    (
        any::<[u8; 32]>().prop_filter("another node", |s| *s != [DEVICE_SIGNER; 32]),
        any::<u64>(),
        any::<bool>(),
    )
        .prop_map(|(seed, at_ms, unlink)| {
            let (me, other) = (key(DEVICE_SIGNER), NodeKey::from_seed(seed));
            let other_id = other.peer_id().to_string();
            if unlink {
                DeviceStatement::Unlink(DeviceUnlink::sign(&me, &other_id, at_ms).expect("signs"))
            } else {
                let proposal = LinkProposal::new(&me, &other_id, at_ms).expect("proposes");
                DeviceStatement::Link(proposal.countersign(&other).expect("countersigns"))
            }
        })
}

/// The key to sign `d` with: `key(DEVICE_SIGNER)` for a device statement
/// (only its sides may publish it) and a memory version (its vector counts
/// that device), else the key of `seed`.
pub fn signer(d: &PayloadDraft, seed: [u8; 32]) -> NodeKey {
    match d.body {
        Body::DeviceLink(_) | Body::MindRecord(_) => key(DEVICE_SIGNER),
        _ => NodeKey::from_seed(seed),
    }
}

/// A mind record within its limits: 1 to 3 devices in its vector, a few
/// fields of every value type (none when it is a tombstone).
pub fn mind_record() -> impl Strategy<Value = MindRecord> {
    let value = prop_oneof![
        short().prop_map(MindValue::Text),
        any::<i64>().prop_map(MindValue::Int),
        any::<bool>().prop_map(MindValue::Bool),
    ];
    (
        0..MindTable::ALL.len(),
        any::<[u8; 16]>(),
        prop::collection::vec((any::<[u8; 32]>(), 1u64..4), 1..4),
        any::<u64>(),
        any::<bool>(),
        prop::collection::btree_map("[a-z_]{1,12}", value, 0..5),
    )
        .prop_map(|(table, key, devices, at_ms, deleted, fields)| {
            // Signed by `key(DEVICE_SIGNER)` (see [`signer`]), whose own
            // entry every version counts.
            let mut vv = VersionVector::new();
            vv.bump(&self::key(DEVICE_SIGNER).peer_id().to_string())
                .expect("one device");
            for (seed, writes) in devices {
                let device = NodeKey::from_seed(seed).peer_id().to_string();
                for _ in 0..writes {
                    vv.bump(&device).expect("at most 4 devices");
                }
            }
            MindRecord {
                table: MindTable::ALL[table],
                key,
                vv,
                at_ms,
                deleted,
                fields: if deleted { Default::default() } else { fields },
            }
        })
}

pub fn draft() -> impl Strategy<Value = PayloadDraft> {
    (
        0u64..u64::MAX / 2,
        audience(),
        1..=MAX_HOPS,
        prop::option::of(1u64..u64::MAX / 2),
        prop::option::of(item_id()),
        body(),
    )
        .prop_map(
            |(created_ms, audience, max_hops, ttl, replaces, body)| PayloadDraft {
                created_ms,
                // A club change travels to its own club only.
                audience: match &body {
                    Body::ClubChange(c) => Audience::Club(c.club.clone()),
                    // Addresses go to the author's friends, one hop.
                    Body::ReachableAt(_) => Audience::Friends,
                    // Device statements go to the person's devices.
                    Body::DeviceLink(_) => Audience::Devices,
                    // A person's memory goes to the person's devices only.
                    Body::MindRecord(_) => Audience::Devices,
                    _ => audience,
                },
                max_hops: match &body {
                    Body::ReachableAt(_) => 1,
                    _ => max_hops,
                },
                expires_ms: ttl.map(|t| created_ms + t),
                replaces,
                body,
            },
        )
}

pub fn key(n: u8) -> NodeKey {
    NodeKey::from_seed([n; 32])
}

pub fn note_draft(text: &str) -> PayloadDraft {
    PayloadDraft {
        created_ms: 1_700_000_000_000,
        audience: Audience::Public,
        max_hops: 3,
        expires_ms: None,
        replaces: None,
        body: Body::Note(Note {
            text: text.into(),
            topic: Some("mesh".into()),
            mentions: vec![],
            hashtags: vec!["hmp".into()],
            priority: 1,
            source: "user".into(),
            reply_to: None,
        }),
    }
}

pub fn sample_item(n: u8, text: &str) -> VerifiedItem {
    sign(&key(n), &note_draft(text)).unwrap()
}
