//! The seed's strategies and thinking methods are one record on all of a
//! person's devices: every node writes its own copy (`seed_core`), so
//! publishing each copy would give every device one more of each per
//! device. Instead each device gives its seeded rows the record key
//! [`seed_key`] derives from the seed alone (a strategy's mechanism, a
//! method's English name), the same everywhere, and publishes nothing of
//! them until the person edits or deletes one; that change then reaches
//! the other devices' own copies (`Store::mind_adopt_seed`).

use porfiry_protocol::mind::MindTable;
use porfiry_skills::Language;
use porfiry_skills::cognition::seeds::seed_methods;
use porfiry_skills::cognition::strategy::Mechanism;
use porfiry_storage::limits::MAX_LIST_LIMIT;
use porfiry_storage::{ListQuery, Result, StagnationStrategy, Store, ThinkingMethod};
use sha2::{Digest, Sha256};

/// Domain of [`seed_key`], so a seed's key is never another hash.
const SEED_KEY_DOMAIN: &[u8] = b"porfiry mind seed v1\0";

/// The record key of the seed named `name` in `table`: the first 16 bytes
/// of SHA-256 over [`SEED_KEY_DOMAIN`], the table's wire name, a zero byte
/// and the name. Wire format: every device must derive the same.
pub fn seed_key(table: MindTable, name: &str) -> [u8; 16] {
    let mut h = Sha256::new();
    h.update(SEED_KEY_DOMAIN);
    h.update(table.as_str().as_bytes());
    h.update([0]);
    h.update(name.as_bytes());
    let digest = h.finalize();
    let mut key = [0u8; 16];
    key.copy_from_slice(&digest[..16]);
    key
}

fn oldest_first() -> ListQuery {
    ListQuery {
        limit: Some(MAX_LIST_LIMIT),
        oldest_first: true,
        ..ListQuery::default()
    }
}

/// Gives every seeded row that is no record yet its seed's key: for each
/// mechanism the oldest of the person's own strategies tagged with it, for
/// each seed method the oldest own method named as it is in either
/// language. Returns how many rows it adopted (none on a second call).
pub fn adopt_seeds(store: &Store) -> Result<usize> {
    let mut adopted = 0;
    for m in Mechanism::ALL {
        let rows = store.list::<StagnationStrategy>(&ListQuery {
            tag: Some(m.tag()),
            ..oldest_first()
        })?;
        if let Some(r) = rows.into_iter().find(|r| r.row.origin_author.is_none()) {
            let key = seed_key(MindTable::Strategy, m.as_str());
            adopted += usize::from(store.mind_adopt_seed(MindTable::Strategy, r.id, &key)?);
        }
    }
    let methods = store.list::<ThinkingMethod>(&oldest_first())?;
    for (en, ru) in seed_methods(Language::En)
        .iter()
        .zip(seed_methods(Language::Ru).iter())
    {
        let seeded = methods.iter().find(|r| {
            r.row.origin_author.is_none() && (r.row.name == en.name || r.row.name == ru.name)
        });
        if let Some(r) = seeded {
            let key = seed_key(MindTable::Method, en.name);
            adopted += usize::from(store.mind_adopt_seed(MindTable::Method, r.id, &key)?);
        }
    }
    Ok(adopted)
}

#[cfg(test)]
mod tests {
    use porfiry_protocol::NodeKey;
    use porfiry_storage::StagnationStrategy;

    use super::*;
    use crate::devices::publish_mind;
    use crate::seed::seed_core;
    use crate::sharing::item_rows::stored_record;

    fn seeded(language: Language) -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::create(dir.path().join("n.db")).unwrap();
        seed_core(&s, language, 1).unwrap();
        (dir, s)
    }

    fn strategy_row(s: &Store, m: Mechanism) -> (i64, String) {
        let r = s
            .list::<StagnationStrategy>(&ListQuery {
                tag: Some(m.tag()),
                ..oldest_first()
            })
            .unwrap()
            .remove(0);
        (r.id, r.row.description)
    }

    /// The vector in docs/protocol.md ("What each table carries").
    #[test]
    fn the_seed_key_matches_its_vector() {
        assert_eq!(
            hex::encode(seed_key(MindTable::Strategy, "flashback")),
            "6b6ebf140946c3110ceb8ee615aac8ad"
        );
        assert_ne!(
            seed_key(MindTable::Method, "flashback"),
            seed_key(MindTable::Strategy, "flashback")
        );
    }

    #[test]
    fn seeded_rows_are_one_record_everywhere_and_only_a_change_travels() {
        let (_a, phone) = seeded(Language::Ru);
        let (_b, server) = seeded(Language::En);
        // Nothing seeded waits to be published: the server has its own.
        assert_eq!(phone.mind_outbox_len().unwrap(), 0);
        assert_eq!(server.mind_outbox_len().unwrap(), 0);
        assert_eq!(adopt_seeds(&phone).unwrap(), 0, "adopted once");
        let (p_id, _) = strategy_row(&phone, Mechanism::Flashback);
        let (s_id, _) = strategy_row(&server, Mechanism::Flashback);
        let key = seed_key(MindTable::Strategy, "flashback");
        assert_eq!(
            phone.mind_key_of(MindTable::Strategy, p_id).unwrap(),
            Some(key)
        );
        assert_eq!(
            server.mind_key_of(MindTable::Strategy, s_id).unwrap(),
            Some(key)
        );
        let methods = seed_methods(Language::En);
        assert!(!methods.is_empty());
        for s in [&phone, &server] {
            let m = s.list::<ThinkingMethod>(&oldest_first()).unwrap();
            assert_eq!(
                s.mind_key_of(MindTable::Method, m[0].id).unwrap(),
                Some(seed_key(MindTable::Method, methods[0].name))
            );
        }
        // The phone's person edits the seed: it reaches the server's own
        // copy, with no second one beside it.
        let strategies = server.count::<StagnationStrategy>().unwrap();
        let mut edited = phone.get::<StagnationStrategy>(p_id).unwrap().row;
        edited.description = "по-своему".into();
        phone.update(p_id, &edited, 5).unwrap();
        let phone_key = NodeKey::from_seed([1; 32]);
        let sent = publish_mind(&phone, &phone_key, 10).unwrap().versions;
        assert_eq!(sent.len(), 1);
        let rows: Vec<_> = sent
            .iter()
            .map(|i| stored_record(i, 0, Some(phone_key.peer_id().to_string())))
            .collect();
        server.insert_items(&rows).unwrap();
        assert_eq!(server.count::<StagnationStrategy>().unwrap(), strategies);
        assert_eq!(strategy_row(&server, Mechanism::Flashback).1, "по-своему");
    }
}
