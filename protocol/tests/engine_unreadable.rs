//! Mixed versions (docs/protocol.md, "Mixed versions"): a friend running a
//! newer version sends, in a catch-up session, an item of a kind this
//! version does not know beside a note. The note is taken; the unknown
//! item is refused and counted, never stored (so never relayed), and the
//! session finishes. The item is remembered: the friend's next session
//! finds it held and sends nothing again, and a `have` of it is not
//! answered with a `want`.

mod engine_support;

use ed25519_dalek::Signer;
use engine_support::*;
use porfiry_protocol::engine::{Engine, Event, Inbound, Input, Output, RejectReason, SyncRole};
use porfiry_protocol::item::envelope::encode_envelope;
use porfiry_protocol::range_sync::{Reconciler, SyncSet};
use porfiry_protocol::wire::{SYNC_FRAME_BYTES, WireItem, WireMessage};
use porfiry_protocol::{Audience, ItemError, ItemId, NodeKey, VerifiedItem};

/// A kind code no version has used yet.
const NEWER_KIND: u64 = 99;

/// An item of [`NEWER_KIND`] by `author`, public, as a newer version
/// would sign it: (envelope, creation time).
fn newer_item(author: &NodeKey, created_ms: u64) -> (Vec<u8>, u64) {
    use ciborium::Value;
    let text = |s: &str| Value::Text(s.into());
    let payload = Value::Map(vec![
        (text("version"), Value::Integer(1.into())),
        (text("kind"), Value::Integer(NEWER_KIND.into())),
        (text("author"), Value::Bytes(author.author().0.to_vec())),
        (text("created_ms"), Value::Integer(created_ms.into())),
        (text("audience"), text("public")),
        (text("max_hops"), Value::Integer(3.into())),
        (
            text("body"),
            Value::Map(vec![(text("colour"), text("blue"))]),
        ),
    ]);
    let mut bytes = Vec::new();
    ciborium::into_writer(&payload, &mut bytes).expect("the payload encodes");
    let signer = ed25519_dalek::SigningKey::from_bytes(&author.seed());
    let signature = signer.sign(&bytes).to_bytes();
    (
        encode_envelope(&bytes, &signature).expect("the envelope encodes"),
        created_ms,
    )
}

/// Runs one catch-up session of friend 1 toward `e` over `held` (what
/// friend 1 holds, as (creation time, id)); returns the ids `e` turned out
/// to lack, and `e`'s outputs after the items in `send` (all of them, in
/// one `items` message) and the `sync-done`.
fn session(
    e: &mut Engine,
    now: u64,
    id: u64,
    held: &[(u64, ItemId)],
    send: impl Fn(&[ItemId]) -> Vec<Vec<u8>>,
) -> (Vec<ItemId>, Vec<Output>) {
    let mut set = SyncSet::new();
    for (created_ms, item) in held {
        set.insert(*created_ms, *item);
    }
    let (mut recon, mut frame) = Reconciler::initiator(set, [id as u8; 16], SYNC_FRAME_BYTES);
    let mut lacking = Vec::new();
    loop {
        let out = e.handle(
            now,
            Input::Received {
                peer: peer(1),
                message: Inbound::SyncQuery {
                    session: id,
                    frame: frame.clone(),
                },
            },
        );
        let reply = sent_to(&out, &peer(1))
            .into_iter()
            .find_map(|m| match m {
                WireMessage::SyncReply { session, frame } if *session == id => Some(frame.clone()),
                _ => None,
            })
            .expect("a sync-reply");
        let mut need = Vec::new();
        match recon
            .reconcile_with_ids(&reply, &mut lacking, &mut need)
            .expect("the reply reconciles")
        {
            Some(next) => frame = next,
            None => break,
        }
    }
    let envelopes = send(&lacking);
    let sent = u32::try_from(envelopes.len()).expect("a few");
    let mut out = Vec::new();
    if !envelopes.is_empty() {
        let items = WireMessage::Items {
            session: Some(id),
            items: envelopes
                .into_iter()
                .map(|envelope| WireItem { hops: 3, envelope })
                .collect(),
        };
        out.extend(e.handle(
            now,
            Input::Received {
                peer: peer(1),
                message: over_wire(&items, now),
            },
        ));
    }
    out.extend(e.handle(
        now,
        Input::Received {
            peer: peer(1),
            message: Inbound::SyncDone { session: id, sent },
        },
    ));
    (lacking, out)
}

#[test]
fn a_newer_kind_is_refused_counted_remembered_and_not_sent_again() {
    let mut e = engine(0);
    connect(&mut e, 1, &[]);
    let author = key(1);
    let note: VerifiedItem = note(&author, T0 + 1, Audience::Public, 3, "known to both");
    let (newer, newer_created) = newer_item(&author, T0 + 2);
    let newer_id = ItemId::of_envelope(&newer);
    let held = [(note.created_ms(), note.id()), (newer_created, newer_id)];
    let envelope_of = |id: &ItemId| {
        if *id == note.id() {
            note.envelope_bytes().to_vec()
        } else {
            newer.clone()
        }
    };

    let (lacking, out) = session(&mut e, T0 + 10, 7, &held, |ids| {
        ids.iter().map(envelope_of).collect()
    });
    let mut lacking_sorted = lacking.clone();
    lacking_sorted.sort();
    let mut both = vec![note.id(), newer_id];
    both.sort();
    assert_eq!(lacking_sorted, both, "it lacked both at first");
    assert_eq!(
        stored(&out),
        [note.id()],
        "the note is taken, the other is not"
    );
    assert!(!e.holds(&newer_id));
    let seen = events(&out);
    assert!(
        seen.iter().any(|ev| matches!(
            ev,
            Event::Rejected {
                reason: RejectReason::Invalid(ItemError::UnknownKind(NEWER_KIND)),
                ..
            }
        )),
        "{seen:?}"
    );
    assert!(
        seen.iter().any(|ev| matches!(
            ev,
            Event::SyncFinished {
                session: 7,
                role: SyncRole::Responder,
                items: 2,
                ..
            }
        )),
        "the session finishes: {seen:?}"
    );

    // The next session finds nothing to send: the newer item counts as held.
    let (lacking, out) = session(&mut e, T0 + 20, 8, &held, |ids| {
        ids.iter().map(envelope_of).collect()
    });
    assert!(lacking.is_empty(), "nothing is sent again: {lacking:?}");
    assert!(
        events(&out).iter().any(|ev| matches!(
            ev,
            Event::SyncFinished {
                session: 8,
                items: 0,
                ..
            }
        )),
        "{out:?}"
    );

    // A `have` of it is not answered; one of an item never seen is.
    let out = have_from(&mut e, T0 + 30, 1, newer_id, 3);
    assert!(wants_to(&out, 1).is_empty());
    let fresh = engine_support::note(&author, T0 + 3, Audience::Public, 3, "new to 0");
    let out = have_from(&mut e, T0 + 31, 1, fresh.id(), 3);
    assert_eq!(wants_to(&out, 1), [fresh.id()]);
}

#[test]
fn an_unreadable_envelope_that_is_not_signed_by_its_author_is_not_remembered() {
    let mut e = engine(0);
    connect(&mut e, 1, &[]);
    let (mut forged, created) = newer_item(&key(1), T0 + 2);
    // One bit of the signature (the envelope's last bytes) flipped.
    let last = forged.len() - 1;
    forged[last] ^= 1;
    let id = ItemId::of_envelope(&forged);
    let (_, out) = session(&mut e, T0 + 10, 7, &[(created, id)], |_| {
        vec![forged.clone()]
    });
    assert!(stored(&out).is_empty());
    let out = have_from(&mut e, T0 + 30, 1, id, 3);
    assert_eq!(
        wants_to(&out, 1),
        [id],
        "asked for again: it proved nothing"
    );
}
