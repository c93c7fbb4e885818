//! Writes the seed corpus, `corpus/<target>/`, from real encodings: the
//! protocol's test-vector items (docs/protocol.md's seeds and fields), wire
//! messages, range-sync sessions and offload streams as the node writes
//! them, invitation codes, model replies from the parsers' tests, the
//! built-in SKILL.md files and small GGUF headers. Deterministic: run again,
//! the same bytes. `cargo run --example make_corpus` (from fuzz/).

use std::path::{Path, PathBuf};

use porfiry_fuzz::invite::code::{InviteCode, Secret};
use porfiry_fuzz::offload::wire::{ClientFrame, ErrorKind, OffloadRequest, ServerFrame, encode};
use porfiry_fuzz::targets::protocol::{NOW_MS, SYNC_KEY, frames, sync_set};
use porfiry_protocol::range_sync::{MIN_FRAME_BYTES, Reconciler, SyncSet};
use porfiry_protocol::wire::{self, Announce, WireItem, WireMessage};
use porfiry_protocol::{
    Audience, Body, ClubAction, ClubChange, ClubRef, ItemId, LlmAddress, LlmLimits, NodeKey, Note,
    PayloadDraft, Rating, ReachableAt, Retraction, StagnationStrategy, ThinkingMethod,
    VerifiedItem, sign,
};
use porfiry_skills::llm::{ChatMessage, Role, Usage};

/// RFC 8032 section 7.1 test secret 1, the seed of docs/protocol.md's first vector.
const SEED: [u8; 32] = [
    0x9d, 0x61, 0xb1, 0x9d, 0xef, 0xfd, 0x5a, 0x60, 0xba, 0x84, 0x4a, 0xf4, 0x92, 0xec, 0x2c, 0xc4,
    0x44, 0x49, 0xc5, 0x69, 0x7b, 0x32, 0x69, 0x19, 0x70, 0x3b, 0xac, 0x03, 0x1c, 0xae, 0x7f, 0x60,
];

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let items = items();
    let out = |target: &str, name: &str, bytes: &[u8]| {
        let dir: PathBuf = root.join(target);
        std::fs::create_dir_all(&dir).expect("corpus folder");
        std::fs::write(dir.join(name), bytes).expect("corpus file");
    };
    for (name, item) in &items {
        out("verified_item", name, item.envelope_bytes());
        out("payload", name, item.payload_bytes());
    }
    for (name, message) in wire_messages(&items) {
        out(
            "wire_frame",
            name,
            &wire::encode(&message).expect("encodes"),
        );
    }
    for (name, bytes) in range_sync_sessions() {
        out("range_sync", &name, &bytes);
    }
    for (name, bytes) in offload_streams() {
        out("offload_frame", name, &bytes);
    }
    for (name, bytes) in invites() {
        out("invite", name, &bytes);
    }
    for (i, reply) in TOOL_REPLIES.iter().enumerate() {
        out("tool_call", &format!("reply-{i}"), reply.as_bytes());
    }
    for (i, reply) in CORE_REPLIES.iter().enumerate() {
        out("hmp_commands", &format!("reply-{i}"), reply.as_bytes());
    }
    let builtin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../skills/builtin");
    for skill in ["diary", "media", "notes"] {
        let text = std::fs::read(builtin.join(skill).join("SKILL.md")).expect("a built-in skill");
        out("skill_md", skill, &text);
    }
    out("skill_md", "toolset", SKILL_WITH_TOOLSET.as_bytes());
    for (name, bytes) in gguf_files() {
        out("gguf_header", name, &bytes);
    }
}

fn draft(created_ms: u64, audience: Audience, body: Body) -> PayloadDraft {
    PayloadDraft {
        created_ms,
        audience,
        max_hops: 3,
        expires_ms: None,
        replaces: None,
        body,
    }
}

/// One signed item of each kind, as docs/protocol.md's vectors are made.
fn items() -> Vec<(&'static str, VerifiedItem)> {
    let key = NodeKey::from_seed(SEED);
    let peer = key.peer_id().to_string();
    let signed = |d: PayloadDraft| sign(&key, &d).expect("signs");
    let note = signed(draft(
        NOW_MS,
        Audience::Public,
        Body::Note(Note {
            text: "Hello, mesh!".into(),
            topic: Some("greetings".into()),
            mentions: vec![],
            hashtags: vec!["hello".into()],
            priority: 0,
            source: "user".into(),
            reply_to: None,
        }),
    ));
    let club = ClubRef {
        name: "chess".into(),
        founder: peer.clone(),
    };
    let mut expiring = draft(
        NOW_MS + 1,
        Audience::Friends,
        Body::Rating(Rating {
            target: note.id(),
            score: 2,
            comment: "useful".into(),
        }),
    );
    expiring.expires_ms = Some(NOW_MS + 86_400_000);
    expiring.max_hops = 1;
    let mut replacing = draft(
        NOW_MS + 2,
        Audience::Group("family".into()),
        Body::LlmAddress(LlmAddress {
            name: "home-gpu".into(),
            endpoint: peer.clone(),
            model: "qwen3-32b".into(),
            features: vec!["chat".into(), "tools".into()],
            limits: LlmLimits {
                context_tokens: Some(32_768),
                max_output_tokens: None,
                requests_per_minute: Some(30),
            },
        }),
    );
    replacing.replaces = Some(ItemId([0x11; 32]));
    let mut reach = draft(
        NOW_MS + 4,
        Audience::Friends,
        Body::ReachableAt(ReachableAt {
            addresses: vec![
                "/ip4/192.0.2.10/tcp/4001".into(),
                format!("/ip4/203.0.113.7/tcp/4001/p2p/{peer}/p2p-circuit"),
            ],
        }),
    );
    reach.max_hops = 1;
    reach.replaces = Some(ItemId([0x22; 32]));
    vec![
        ("rating", signed(expiring)),
        ("llm-address", signed(replacing)),
        (
            "retraction",
            signed(draft(
                NOW_MS + 3,
                Audience::Public,
                Body::Retraction(Retraction { target: note.id() }),
            )),
        ),
        ("reachable-at", signed(reach)),
        (
            "strategy",
            signed(draft(
                NOW_MS + 5,
                Audience::Public,
                Body::StagnationStrategy(StagnationStrategy {
                    name: "walk".into(),
                    class: "reset".into(),
                    description: "Change the scene.".into(),
                    steps: vec!["stop".into(), "walk".into()],
                    cost: 1,
                    mechanism: Some("flashback".into()),
                }),
            )),
        ),
        (
            "method",
            signed(draft(
                NOW_MS + 6,
                Audience::Club(club.clone()),
                Body::ThinkingMethod(ThinkingMethod {
                    name: "five-whys".into(),
                    description: "Ask why five times.".into(),
                    steps: vec!["why?".into()],
                }),
            )),
        ),
        (
            "club-change",
            signed(draft(
                NOW_MS + 7,
                Audience::Club(club.clone()),
                Body::ClubChange(ClubChange {
                    club,
                    action: ClubAction::Add,
                    target: NodeKey::from_seed([2; 32]).peer_id().to_string(),
                }),
            )),
        ),
        ("note", note),
    ]
}

fn wire_messages(items: &[(&str, VerifiedItem)]) -> Vec<(&'static str, WireMessage)> {
    let ids: Vec<ItemId> = items.iter().map(|(_, i)| i.id()).collect();
    let (_, opening) = Reconciler::initiator(sync_set(), SYNC_KEY, MIN_FRAME_BYTES);
    vec![
        (
            "have",
            WireMessage::Have {
                items: ids.iter().map(|&id| Announce { id, hops: 2 }).collect(),
            },
        ),
        ("want", WireMessage::Want { ids: ids.clone() }),
        (
            "items",
            WireMessage::Items {
                session: None,
                items: items[..2]
                    .iter()
                    .map(|(_, i)| WireItem {
                        hops: 3,
                        envelope: i.envelope_bytes().to_vec(),
                    })
                    .collect(),
            },
        ),
        (
            "items-session",
            WireMessage::Items {
                session: Some(7),
                items: vec![WireItem {
                    hops: 1,
                    envelope: items[2].1.envelope_bytes().to_vec(),
                }],
            },
        ),
        (
            "sync-query",
            WireMessage::SyncQuery {
                session: 7,
                frame: opening,
            },
        ),
        (
            "sync-reply",
            WireMessage::SyncReply {
                session: 7,
                frame: vec![0x71, 0, 1, 2],
            },
        ),
        (
            "sync-done",
            WireMessage::SyncDone {
                session: 7,
                sent: 3,
            },
        ),
        (
            "sync-abort",
            WireMessage::SyncAbort {
                session: 7,
                reason: "frame out of order".into(),
            },
        ),
    ]
}

/// The other side's set: `keep` of every 10 of the target's items, and
/// `extra` items of its own.
fn other_set(keep: u32, extra: u32) -> SyncSet {
    let mut set = SyncSet::new();
    let mine = porfiry_fuzz::targets::protocol::SYNC_ITEMS;
    for n in 0..mine {
        if n % 10 < keep {
            let mut id = [0u8; 32];
            id[..4].copy_from_slice(&n.wrapping_mul(2_654_435_761).to_be_bytes());
            id[28..].copy_from_slice(&n.to_be_bytes());
            set.insert(NOW_MS + u64::from(n / 3) * 1_000, ItemId(id));
        }
    }
    for n in 0..extra {
        let mut id = [0xee; 32];
        id[28..].copy_from_slice(&n.to_be_bytes());
        set.insert(NOW_MS + u64::from(n) * 700, ItemId(id));
    }
    set
}

/// Whole sessions between the target's set and another, as the target's
/// side receives them: `[0]` + the initiator's frames to the target as
/// responder, `[1]` + the responder's frames to the target as initiator.
fn range_sync_sessions() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for (keep, extra) in [(10, 0), (9, 5), (5, 40), (0, 0), (0, 300)] {
        let push = |frame: &[u8], to: &mut Vec<u8>| {
            let len = u16::try_from(frame.len()).expect("a frame under 64 KiB");
            to.extend_from_slice(&len.to_be_bytes());
            to.extend_from_slice(frame);
        };
        // The target answers.
        let (mut a, mut query) = Reconciler::initiator(other_set(keep, extra), SYNC_KEY, 4096);
        let mut b = Reconciler::responder(sync_set(), MIN_FRAME_BYTES);
        let mut to_responder = vec![0u8];
        let (mut have, mut need) = (Vec::new(), Vec::new());
        for _ in 0..50 {
            push(&query, &mut to_responder);
            let reply = b.reconcile(&query).expect("responder accepts");
            match a.reconcile_with_ids(&reply, &mut have, &mut need) {
                Ok(Some(next)) => query = next,
                _ => break,
            }
        }
        // The target asks.
        let (mut a, mut query) = Reconciler::initiator(sync_set(), SYNC_KEY, MIN_FRAME_BYTES);
        let mut b = Reconciler::responder(other_set(keep, extra), MIN_FRAME_BYTES);
        let mut to_initiator = vec![1u8];
        for _ in 0..50 {
            let reply = b.reconcile(&query).expect("responder accepts");
            push(&reply, &mut to_initiator);
            match a.reconcile_with_ids(&reply, &mut have, &mut need) {
                Ok(Some(next)) => query = next,
                _ => break,
            }
        }
        assert!(frames(&to_responder[1..]).count() > 0);
        out.push((format!("respond-{keep}-{extra}"), to_responder));
        out.push((format!("ask-{keep}-{extra}"), to_initiator));
    }
    out
}

fn offload_streams() -> Vec<(&'static str, Vec<u8>)> {
    let request = OffloadRequest {
        system: "You are Porfiry.".into(),
        messages: vec![
            ChatMessage::new(Role::User, "Привет! What is on today?"),
            ChatMessage::new(Role::Assistant, "TOOL_CALL: tasks_list"),
        ],
        stream: true,
        max_tokens: Some(256),
        stop: vec!["\n\n".into()],
    };
    let mut client = vec![0u8];
    client.extend(encode(&ClientFrame::Request(request)));
    client.extend(encode(&ClientFrame::Cancel));
    let mut server = vec![1u8];
    server.extend(encode(&ServerFrame::Delta {
        text: "Two tasks: ".into(),
    }));
    server.extend(encode(&ServerFrame::Delta {
        text: "call mum, buy bread.".into(),
    }));
    server.extend(encode(&ServerFrame::Done {
        finish_reason: Some("stop".into()),
        usage: Some(Usage::new(120, 9)),
    }));
    let mut busy = vec![1u8];
    busy.extend(encode(&ServerFrame::Error {
        kind: ErrorKind::Busy {
            retry_after_ms: 1500,
        },
        message: "every slot is taken".into(),
    }));
    vec![("client", client), ("server", server), ("busy", busy)]
}

fn invites() -> Vec<(&'static str, Vec<u8>)> {
    let secret: Secret = *b"sixteen  secret!";
    let code = InviteCode {
        peer: NodeKey::from_seed(SEED).peer_id(),
        addresses: vec![
            "/ip4/192.0.2.10/tcp/4001".parse().expect("an address"),
            "/ip6/::1/udp/4001/quic-v1".parse().expect("an address"),
        ],
        secret,
    };
    let one = InviteCode {
        addresses: vec!["/dns4/home.example/tcp/4001".parse().expect("an address")],
        ..code.clone()
    };
    vec![
        ("code", code.encode().expect("encodes").into_bytes()),
        ("one-address", one.encode().expect("encodes").into_bytes()),
    ]
}

const TOOL_REPLIES: &[&str] = &[
    "TOOL_CALL: media_search|lara croft",
    "TOOL_CALL: get_current_time",
    "<think>the user wants the time</think>\nTOOL_CALL: get_current_time",
    "Sure.\n```\ntool_call: enable_toolset|media\n```",
    "**TOOL_CALL: notes_post(Hello friends|public)**",
    "TOOL_CALL: tasks_add {\"title\": \"buy bread\", \"due\": 3}\nTOOL_CALL: tasks_list",
    "Сегодня две задачи.",
    "TOOL_CALL: show_text|{\"a\":1}",
    "</think>TOOL_CALL: read_skill|notes.",
];

const CORE_REPLIES: &[&str] = &[
    "I will record this.\nTOOL_CALL: diary_add|Mesh needs trust|mesh\nand then\n**TOOL_CALL: goals_list**",
    "Thinking about the mesh.\n# Команды:\n```json\n{\n  \"cmd_id\": \"task-01\",\n  \"type\": \"llm_task\",\n  \"target_llm\": \"gpt-4o\",\n  \"args\": {\"task_description\": \"Проанализировать гипотезы\"},\n  \"description\": \"Поручение второй LLM\"\n}\n```\n# Конец команд\n",
    "# Commands:\n{\"type\": \"diary_add\", \"args\": {\"text\": \"a\"}}\n{\"type\": \"goals_list\"}\n# End of commands\nTOOL_CALL: tasks_list",
    "# Commands:\n[{\"type\": \"Diary Add\", \"args\": \"text|tag\", \"cmd_id\": 7}, {\"type\": \"cycle.pause\", \"args\": [30]}]\n",
    "# Commands:\n{\"args\": {}}\n{\"type\": \"дневник\"}\n[1]\nplease run these\n{\"type\": \"x\"",
    "```json\n{\"type\": \"goals_list\"}\n```",
];

const SKILL_WITH_TOOLSET: &str = "---\nname: garden\ndescription: >\n  Plan the garden: what to sow and when.\ntoolset: tasks\nlicense: MIT\n---\n# Garden\n\n1. TOOL_CALL: tasks_list\n";

/// GGUF headers written by hand (little-endian, version 3): every metadata
/// value type, a tensor table, and data of the right size.
fn gguf_files() -> Vec<(&'static str, Vec<u8>)> {
    let mut kv: Vec<u8> = Vec::new();
    let mut count = 0u64;
    let mut put = |key: &str, kind: u32, value: &[u8]| {
        kv.extend_from_slice(&(key.len() as u64).to_le_bytes());
        kv.extend_from_slice(key.as_bytes());
        kv.extend_from_slice(&kind.to_le_bytes());
        kv.extend_from_slice(value);
        count += 1;
    };
    let string = |s: &str| [&(s.len() as u64).to_le_bytes()[..], s.as_bytes()].concat();
    put("general.architecture", 8, &string("llama"));
    put("general.name", 8, &string("Tiny"));
    put("general.alignment", 4, &32u32.to_le_bytes());
    put("llama.context_length", 4, &2048u32.to_le_bytes());
    put("llama.block_count", 10, &2u64.to_le_bytes());
    put("llama.rope.freq_base", 6, &10_000f32.to_le_bytes());
    put("general.flag", 7, &[1]);
    put("general.i16", 3, &(-2i16).to_le_bytes());
    put("general.f64", 12, &1.5f64.to_le_bytes());
    put("tokenizer.chat_template", 8, &string("{{ x }}"));
    let tokens = [
        &8u32.to_le_bytes()[..],
        &3u64.to_le_bytes(),
        &string("a"),
        &string("b"),
        &string("<s>"),
    ]
    .concat();
    put("tokenizer.ggml.tokens", 9, &tokens);
    let scores = [&6u32.to_le_bytes()[..], &2u64.to_le_bytes(), &[0u8; 8]].concat();
    put("tokenizer.ggml.scores", 9, &scores);
    // One F32 tensor of 8 values, one Q8_0 tensor of 32.
    let mut tensors = Vec::new();
    for (name, dims, kind, offset) in [("a.weight", 8u64, 0u32, 0u64), ("b.weight", 32, 8, 32)] {
        tensors.extend_from_slice(&string(name));
        tensors.extend_from_slice(&1u32.to_le_bytes());
        tensors.extend_from_slice(&dims.to_le_bytes());
        tensors.extend_from_slice(&kind.to_le_bytes());
        tensors.extend_from_slice(&offset.to_le_bytes());
    }
    let mut file = b"GGUF".to_vec();
    file.extend_from_slice(&3u32.to_le_bytes());
    file.extend_from_slice(&2u64.to_le_bytes());
    file.extend_from_slice(&count.to_le_bytes());
    file.extend_from_slice(&kv);
    file.extend_from_slice(&tensors);
    let data_start = file.len().div_ceil(32) * 32;
    let mut whole = file.clone();
    whole.resize(data_start + 32 + 34, 0);
    let mut v2 = whole.clone();
    v2[4] = 2;
    vec![
        ("whole", whole),
        ("version-2", v2),
        ("header-only", file),
        ("not-gguf", b"PK\x03\x04 a zip".to_vec()),
    ]
}
