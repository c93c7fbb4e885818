//! One test per merge rule (see the module comment of `merge`).

use super::*;

/// A version written by `author` with vector `vv`, clock `at_ms` and text
/// `text` (`None`: a tombstone); its id is made from `n`.
fn ver(n: u16, author: &str, vv: &[(&str, u64)], at_ms: u64, text: Option<&str>) -> VersionRef {
    let mut v = VersionVector::new();
    for (device, count) in vv {
        for _ in 0..*count {
            v.bump(device).unwrap();
        }
    }
    let mut content = [0u8; 32];
    if let Some(t) = text {
        content = Sha256::digest(t.as_bytes()).into();
    }
    VersionRef {
        id: ItemId::numbered(n),
        vv: v,
        at_ms,
        author: author.into(),
        deleted: text.is_none(),
        content,
    }
}

fn record(versions: &[&VersionRef]) -> RecordVersions {
    let mut r = RecordVersions::new();
    for v in versions {
        r.insert((*v).clone());
    }
    r
}

fn winner(r: &RecordVersions) -> ItemId {
    r.winner().unwrap().id
}

#[test]
fn one_head_wins_and_a_later_version_replaces_it() {
    let mut r = RecordVersions::new();
    assert_eq!(r.winner(), None);
    let v1 = ver(1, "a", &[("a", 1)], 100, Some("one"));
    let out = r.insert(v1.clone());
    assert_eq!(out.placement, Placement::Head);
    assert!(out.winner_changed && out.conflicts.is_empty());
    // Written after seeing v1, with an older clock: it still wins.
    let v2 = ver(2, "b", &[("a", 1), ("b", 1)], 50, Some("two"));
    let out = r.insert(v2.clone());
    assert_eq!(out.placement, Placement::Head);
    assert!(out.winner_changed && out.conflicts.is_empty());
    assert_eq!(winner(&r), v2.id);
    assert_eq!(r.heads(), vec![&v2]);
}

#[test]
fn a_dominated_arrival_is_history_and_changes_nothing() {
    let v1 = ver(1, "a", &[("a", 1)], 999, Some("one"));
    let v2 = ver(2, "a", &[("a", 2)], 5, Some("two"));
    let mut r = record(&[&v2]);
    let out = r.insert(v1.clone());
    assert_eq!(out.placement, Placement::Superseded { kept: true });
    assert!(!out.winner_changed && out.conflicts.is_empty());
    assert_eq!(winner(&r), v2.id);
    assert_eq!(r.len(), 2, "kept as history");
    let dup = r.insert(v1);
    assert_eq!(dup.placement, Placement::Duplicate);
    assert_eq!(r.len(), 2);
}

#[test]
fn concurrent_heads_are_ordered_by_clock_then_author_then_id() {
    let a = ver(1, "a", &[("a", 1)], 200, Some("x"));
    let b = ver(2, "b", &[("b", 1)], 100, Some("y"));
    assert_eq!(winner(&record(&[&a, &b])), a.id);
    assert_eq!(winner(&record(&[&b, &a])), a.id);
    // Same clock: the greater author text wins.
    let c = ver(3, "c", &[("c", 1)], 200, Some("z"));
    assert_eq!(winner(&record(&[&a, &c])), c.id);
    assert_eq!(winner(&record(&[&c, &a])), c.id);
    // Same clock and author (a restored device, equal vectors): the id.
    let a2 = ver(9, "a", &[("a", 1)], 200, Some("w"));
    assert_eq!(winner(&record(&[&a, &a2])), a2.id);
    assert_eq!(winner(&record(&[&a2, &a])), a2.id);
    assert_eq!(record(&[&a, &a2]).heads().len(), 2);
}

#[test]
fn a_conflict_is_reported_once_with_a_key_from_the_two_ids() {
    let a = ver(1, "a", &[("a", 1)], 100, Some("x"));
    let b = ver(2, "b", &[("b", 1)], 200, Some("y"));
    let mut r = record(&[&a]);
    let out = r.insert(b.clone());
    assert_eq!(out.conflicts, vec![Conflict::of(a.id, b.id)]);
    assert_eq!(Conflict::of(a.id, b.id), Conflict::of(b.id, a.id));
    let c = Conflict::of(b.id, a.id);
    assert_eq!((c.a, c.b), (a.id, b.id), "sorted");
    assert_eq!(r.insert(b.clone()).conflicts, vec![], "not twice");
    assert_eq!(record(&[&b, &a]).conflicts(), r.conflicts());
    assert_ne!(Conflict::of(a.id, b.id).key, Conflict::of(a.id, a.id).key);
}

#[test]
fn the_conflict_key_is_fixed() {
    // Wire-level: every device must derive the same task key.
    let c = Conflict::of(ItemId([2; 32]), ItemId([1; 32]));
    assert_eq!(hex::encode(c.key), "523ceab94ed5d2adac03bf75606678f8");
    let doc = crate::mind::record::tests::doc_line("mind conflict key:");
    assert_eq!(doc, hex::encode(c.key), "docs/protocol.md quotes it");
}

#[test]
fn same_texts_and_tombstones_are_not_conflicts() {
    let a = ver(1, "a", &[("a", 1)], 100, Some("same"));
    let b = ver(2, "b", &[("b", 1)], 200, Some("same"));
    assert!(record(&[&a, &b]).conflicts().is_empty());
    let gone = ver(3, "c", &[("c", 1)], 300, None);
    let mut r = record(&[&a]);
    assert!(r.insert(gone.clone()).conflicts.is_empty());
    assert_eq!(winner(&r), gone.id, "a tombstone wins like any version");
    // ... and loses like any version: an edit written later by the clocks.
    let later = ver(4, "d", &[("d", 1)], 400, Some("back"));
    r.insert(later.clone());
    assert_eq!(winner(&r), later.id);
    assert!(!r.winner().unwrap().deleted);
}

#[test]
fn concurrency_is_judged_by_vectors_not_by_what_else_is_held() {
    // a1 then a2 on one device; b1 written apart on another.
    let a1 = ver(1, "a", &[("a", 1)], 100, Some("a1"));
    let a2 = ver(2, "a", &[("a", 2)], 110, Some("a2"));
    let b1 = ver(3, "b", &[("b", 1)], 105, Some("b1"));
    let both = vec![Conflict::of(a1.id, b1.id), Conflict::of(a2.id, b1.id)];
    let mut sorted = both.clone();
    sorted.sort();
    for order in [
        [&a1, &a2, &b1],
        [&a2, &a1, &b1],
        [&b1, &a2, &a1],
        [&a2, &b1, &a1],
    ] {
        let mut r = RecordVersions::new();
        let mut reported: Vec<Conflict> = order
            .iter()
            .flat_map(|v| r.insert((*v).clone()).conflicts)
            .collect();
        reported.sort();
        assert_eq!(reported, sorted);
        assert_eq!(r.conflicts(), sorted);
        assert_eq!(winner(&r), a2.id);
    }
}

#[test]
fn a_local_edit_after_several_heads_supersedes_them_all() {
    let a = ver(1, "a", &[("a", 1)], 100, Some("x"));
    let b = ver(2, "b", &[("b", 2)], 200, Some("y"));
    let mut r = record(&[&a, &b]);
    let vv = r.next_vv("a").unwrap();
    assert_eq!((vv.get("a"), vv.get("b")), (2, 2));
    let merged = VersionRef {
        vv,
        ..ver(3, "a", &[], 50, Some("x and y"))
    };
    let out = r.insert(merged.clone());
    assert_eq!(out.placement, Placement::Head);
    assert!(out.conflicts.is_empty() && out.winner_changed);
    assert_eq!(r.heads(), vec![&merged]);
    assert_eq!(RecordVersions::new().next_vv("z").unwrap().get("z"), 1);
}

#[test]
fn pruning_forgets_old_history_and_old_winning_tombstones_only() {
    let v1 = ver(1, "a", &[("a", 1)], 1_000, Some("one"));
    let v2 = ver(2, "a", &[("a", 2)], 2_000, Some("two"));
    let mut r = record(&[&v1, &v2]);
    assert_eq!(r.prunable(2_000 + TOMBSTONE_TTL_MS - 1), vec![]);
    assert_eq!(r.prunable(2_000 + TOMBSTONE_TTL_MS), vec![v1.id]);
    assert_eq!(r.prunable(u64::MAX), vec![v1.id], "a live winner stays");

    let gone = ver(3, "a", &[("a", 3)], 3_000, None);
    r.insert(gone.clone());
    // Before the tombstone's time is up, only what v2 superseded goes.
    assert_eq!(r.prunable(3_000 + TOMBSTONE_TTL_MS - 1), vec![v1.id]);
    let all = r.prune(3_000 + TOMBSTONE_TTL_MS);
    assert_eq!(all, vec![v1.id, v2.id, gone.id]);
    assert!(r.is_empty());

    // A tombstone that lost to a concurrent edit is no reason to prune.
    let t = ver(4, "a", &[("a", 1)], 1_000, None);
    let e = ver(5, "b", &[("b", 1)], 2_000, Some("kept"));
    assert_eq!(record(&[&t, &e]).prunable(u64::MAX), vec![]);
    // A clock at the end of time cannot overflow.
    let late = ver(6, "a", &[("a", 1)], u64::MAX, None);
    assert_eq!(record(&[&late]).prunable(u64::MAX), vec![late.id]);
}

#[test]
fn a_full_record_makes_room_from_its_oldest_history() {
    let mut r = RecordVersions::new();
    // One device's chain: every version but the last is history.
    let chain: Vec<VersionRef> = (1..=MAX_VERSIONS_PER_RECORD as u16)
        .map(|n| ver(n, "a", &[("a", u64::from(n))], u64::from(n), Some("t")))
        .collect();
    for v in &chain {
        assert_eq!(r.insert(v.clone()).evicted, None);
    }
    assert_eq!(r.len(), MAX_VERSIONS_PER_RECORD);
    // A dominated arrival into a full record is dropped.
    let old = ver(999, "a", &[("a", 1)], 0, Some("old"));
    let out = r.insert(old);
    assert_eq!(out.placement, Placement::Superseded { kept: false });
    assert_eq!(r.len(), MAX_VERSIONS_PER_RECORD);
    // A new head evicts the oldest history version.
    let b = ver(1000, "b", &[("b", 1)], 5, Some("b"));
    let out = r.insert(b.clone());
    assert_eq!(out.placement, Placement::Head);
    assert_eq!(out.evicted, Some(chain[0].id));
    assert_eq!(out.conflicts.len(), MAX_VERSIONS_PER_RECORD - 1);
    assert_eq!(r.len(), MAX_VERSIONS_PER_RECORD);
}

#[test]
fn a_record_full_of_heads_refuses_one_more() {
    // Equal vectors under different ids: heads that break the rules.
    let mut r = RecordVersions::new();
    for n in 0..MAX_VERSIONS_PER_RECORD as u16 {
        r.insert(ver(n, "a", &[("a", 1)], 1, None));
    }
    let before = r.clone();
    let out = r.insert(ver(5000, "a", &[("a", 1)], 1, None));
    assert_eq!(out.placement, Placement::Refused);
    assert_eq!((out.evicted, out.conflicts.len()), (None, 0));
    assert_eq!(r, before);
}

#[test]
fn a_version_ref_is_read_from_a_signed_item() {
    let key = crate::identity::NodeKey::from_seed([3; 32]);
    let mut body = crate::mind::record::tests::vector();
    body.vv = VersionVector::new();
    body.vv.bump(&key.peer_id().to_string()).unwrap();
    let item = crate::item::verified::sign(
        &key,
        &crate::item::payload::PayloadDraft {
            created_ms: body.at_ms,
            audience: crate::item::audience::Audience::Devices,
            max_hops: 1,
            expires_ms: None,
            replaces: None,
            body: Body::MindRecord(body.clone()),
        },
    )
    .unwrap();
    let v = VersionRef::of_item(&item).unwrap();
    assert_eq!(
        v,
        VersionRef::of(item.id(), key.peer_id().to_string(), &body)
    );
    assert_eq!(v.content, body.content_hash());
    assert_eq!((v.at_ms, v.deleted, &v.vv), (body.at_ms, false, &body.vv));
}
