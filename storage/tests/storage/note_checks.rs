//! The `notes` CHECKs of migration 0007: the same values are allowed and
//! refused as before, and inserting a note builds no temporary b-tree
//! (SQLite evaluates a CHECK `x IN (a, b, c)` that way on every insert).

use super::{raw, temp_store};

/// Inserts a note with `source` and `audience` through a raw connection.
fn insert(conn: &rusqlite::Connection, source: &str, audience: &str) -> rusqlite::Result<usize> {
    conn.execute(
        "INSERT INTO notes (text, source, audience, created, updated) VALUES ('x', ?1, ?2, 1, 1)",
        [source, audience],
    )
}

#[test]
fn note_checks_allow_and_refuse_what_they_did() {
    let (_dir, store) = temp_store();
    let conn = raw(&store);
    for source in ["user", "llm", "cli", "system"] {
        insert(&conn, source, "private").unwrap();
    }
    for audience in [
        "public",
        "friends",
        "group:family",
        "peer:12D3",
        "club:chess@12D3",
    ] {
        insert(&conn, "user", audience).unwrap();
    }
    for (source, audience) in [
        ("robot", "private"),
        ("", "private"),
        ("USER", "private"),
        ("user", "everyone"),
        ("user", "group:"),
        ("user", "club:chess"),
        ("user", "Public"),
    ] {
        let e = insert(&conn, source, audience).unwrap_err();
        assert!(e.to_string().contains("CHECK"), "{source} {audience}: {e}");
    }
}

#[test]
fn inserting_a_note_builds_no_temporary_btree() {
    let (_dir, store) = temp_store();
    let conn = raw(&store);
    let mut stmt = conn
        .prepare(
            "EXPLAIN INSERT INTO notes (text, source, audience, origin_item_id, created, updated)
             VALUES ('x', 'llm', 'public', x'00', 1, 1) ON CONFLICT (origin_item_id) DO NOTHING",
        )
        .unwrap();
    let ops: Vec<String> = stmt
        .query_map([], |r| r.get::<_, String>(1))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert!(!ops.is_empty());
    assert!(
        !ops.iter().any(|op| op == "OpenEphemeral"),
        "a note insert opens a temporary b-tree: {ops:?}"
    );
}
