//! Opening, creating, migrating and refusing files.

use std::fs;

use porfiry_storage::{APPLICATION_ID, DB_FILE_NAME, SCHEMA_VERSION, StorageError, Store, TABLES};

use crate::temp_store;

fn sidecars_absent(path: &std::path::Path) {
    for ext in ["-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(ext);
        assert!(!std::path::Path::new(&p).exists(), "{ext} file left behind");
    }
}

#[test]
fn create_makes_a_wal_database_at_the_latest_version() {
    let (_dir, store) = temp_store();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let raw = crate::raw(&store);
    let mode: String = raw
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let app: i32 = raw
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .unwrap();
    assert_eq!(app, APPLICATION_ID);
    store.check_integrity().unwrap();
}

#[test]
fn foreign_keys_are_on() {
    let (_dir, store) = temp_store();
    // Observable through the API: a link to a missing concept is refused.
    let link = porfiry_storage::Link {
        from_concept: 1,
        to_concept: 2,
        relation: "is_a".into(),
        ..Default::default()
    };
    assert!(matches!(
        store.add(&link, 1),
        Err(StorageError::ForeignKey { table: "links", .. })
    ));
}

#[test]
fn open_refuses_a_missing_file_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE_NAME);
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StorageError::Missing { .. }), "{err}");
    assert!(!path.exists());
    sidecars_absent(&path);
}

#[test]
fn create_fails_clearly_when_the_directory_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no-such-dir").join(DB_FILE_NAME);
    assert!(matches!(
        Store::create(&path),
        Err(StorageError::Open { .. })
    ));
}

#[test]
fn reopening_is_idempotent_and_keeps_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE_NAME);
    {
        let s = Store::create(&path).unwrap();
        s.add(
            &porfiry_storage::Note {
                text: "hello".into(),
                ..Default::default()
            },
            5,
        )
        .unwrap();
    }
    for _ in 0..2 {
        let s = Store::open(&path).unwrap();
        assert_eq!(s.schema_version().unwrap(), SCHEMA_VERSION);
        assert_eq!(s.count::<porfiry_storage::Note>().unwrap(), 1);
    }
    // `create` on an existing file opens it too.
    assert_eq!(
        Store::create(&path)
            .unwrap()
            .count::<porfiry_storage::Note>()
            .unwrap(),
        1
    );
}

#[test]
fn garbage_file_is_refused_and_left_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE_NAME);
    let garbage: Vec<u8> = (0..10_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    fs::write(&path, &garbage).unwrap();
    for open in [Store::open, Store::create] {
        let err = open(&path).unwrap_err();
        match &err {
            StorageError::NotADatabase { path: p } => assert_eq!(p, &path),
            other => panic!("expected NotADatabase, got {other}"),
        }
        assert!(err.to_string().contains(DB_FILE_NAME), "{err}");
        assert_eq!(fs::read(&path).unwrap(), garbage);
        sidecars_absent(&path);
    }
}

#[test]
fn text_file_is_refused_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE_NAME);
    fs::write(&path, "this is my diary, not a database\n".repeat(100)).unwrap();
    assert!(matches!(
        Store::open(&path),
        Err(StorageError::NotADatabase { .. })
    ));
    sidecars_absent(&path);
}

#[test]
fn newer_schema_is_refused_and_left_unchanged() {
    let (dir, store) = temp_store();
    let path = store.path().to_owned();
    drop(store);
    {
        let raw = rusqlite::Connection::open(&path).unwrap();
        raw.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        raw.pragma_update(None, "journal_mode", "DELETE").unwrap();
    }
    let before = fs::read(&path).unwrap();
    let err = Store::open(&path).unwrap_err();
    match err {
        StorageError::NewerSchema { found, supported } => {
            assert_eq!((found, supported), (SCHEMA_VERSION + 1, SCHEMA_VERSION));
        }
        other => panic!("expected NewerSchema, got {other}"),
    }
    assert_eq!(fs::read(&path).unwrap(), before);
    drop(dir);
}

#[test]
fn another_programs_database_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE_NAME);
    {
        let raw = rusqlite::Connection::open(&path).unwrap();
        raw.execute_batch("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT);")
            .unwrap();
    }
    let before = fs::read(&path).unwrap();
    assert!(matches!(
        Store::open(&path),
        Err(StorageError::ForeignDatabase {
            application_id: 0,
            ..
        })
    ));
    assert_eq!(fs::read(&path).unwrap(), before);
}

#[test]
fn an_empty_file_becomes_a_fresh_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE_NAME);
    fs::write(&path, b"").unwrap();
    assert_eq!(
        Store::open(&path).unwrap().schema_version().unwrap(),
        SCHEMA_VERSION
    );
}

#[test]
fn row_counts_cover_every_table_in_the_file() {
    let (_dir, store) = temp_store();
    store
        .add(
            &porfiry_storage::Note {
                text: "one".into(),
                ..Default::default()
            },
            1,
        )
        .unwrap();
    let counts = store.row_counts().unwrap();
    let names: Vec<&str> = counts.iter().map(|(t, _)| *t).collect();
    assert_eq!(names, TABLES);
    assert_eq!(counts.iter().find(|(t, _)| *t == "notes").unwrap().1, 1);
    let raw = crate::raw(&store);
    let mut stmt = raw
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .unwrap();
    let mut in_file: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut listed: Vec<String> = TABLES.iter().map(|s| s.to_string()).collect();
    in_file.sort();
    listed.sort();
    assert_eq!(in_file, listed, "TABLES must list every table");
}

#[test]
fn transaction_rolls_back_on_error_and_nests() {
    let (_dir, store) = temp_store();
    let note = |t: &str| porfiry_storage::Note {
        text: t.into(),
        ..Default::default()
    };
    let r: Result<(), StorageError> = store.transaction(|s| {
        s.add(&note("a"), 1)?;
        Err(StorageError::NotFound {
            table: "notes",
            key: "test".into(),
        })
    });
    assert!(r.is_err());
    assert_eq!(store.count::<porfiry_storage::Note>().unwrap(), 0);
    store
        .transaction(|s| {
            s.add(&note("outer"), 1)?;
            let inner: Result<(), StorageError> = s.transaction(|s| {
                s.add(&note("inner"), 1)?;
                Err(StorageError::NotFound {
                    table: "notes",
                    key: "inner".into(),
                })
            });
            assert!(inner.is_err());
            Ok(())
        })
        .unwrap();
    let texts: Vec<String> = store
        .notes_recent(10)
        .unwrap()
        .into_iter()
        .map(|n| n.row.text)
        .collect();
    assert_eq!(texts, ["outer"]);
}

#[test]
fn transaction_rolls_back_when_the_closure_panics() {
    let (_dir, store) = temp_store();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = store.transaction(|s| {
            s.add(
                &porfiry_storage::Note {
                    text: "x".into(),
                    ..Default::default()
                },
                1,
            )?;
            panic!("boom");
            #[allow(unreachable_code)]
            Ok(())
        });
    }));
    assert!(r.is_err());
    assert_eq!(store.count::<porfiry_storage::Note>().unwrap(), 0);
    store
        .add(
            &porfiry_storage::Note {
                text: "after".into(),
                ..Default::default()
            },
            1,
        )
        .unwrap();
}

#[cfg(unix)]
#[test]
fn a_new_database_is_private_to_its_owner() {
    use std::os::unix::fs::PermissionsExt;
    let (_dir, store) = temp_store();
    let mode = fs::metadata(store.path()).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "mode {mode:o}");
}

#[test]
fn a_store_can_move_to_another_thread() {
    let (_dir, store) = temp_store();
    let n = std::thread::spawn(move || store.count::<porfiry_storage::Note>().unwrap())
        .join()
        .unwrap();
    assert_eq!(n, 0);
}

#[test]
fn readers_see_the_last_commit_while_a_write_is_open() {
    let (_dir, writer) = temp_store();
    let reader = Store::open(writer.path()).unwrap();
    let note = |t: &str| porfiry_storage::Note {
        text: t.into(),
        ..Default::default()
    };
    writer.add(&note("committed"), 1).unwrap();
    writer
        .transaction(|w| {
            w.add(&note("pending"), 2)?;
            // WAL: the other connection reads without waiting, and sees only commits.
            let seen: Vec<String> = reader
                .notes_recent(10)?
                .into_iter()
                .map(|n| n.row.text)
                .collect();
            assert_eq!(seen, ["committed"]);
            Ok(())
        })
        .unwrap();
    assert_eq!(reader.count::<porfiry_storage::Note>().unwrap(), 2);
}

#[test]
fn a_failed_migration_is_rolled_back_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE_NAME);
    {
        // Ours by application id, version 0, but a `notes` table in the way.
        let raw = rusqlite::Connection::open(&path).unwrap();
        raw.pragma_update(None, "application_id", APPLICATION_ID)
            .unwrap();
        raw.execute_batch("CREATE TABLE notes (x TEXT);").unwrap();
    }
    match Store::open(&path) {
        Err(StorageError::Migration { version: 1, .. }) => {}
        other => panic!("expected Migration error, got {other:?}"),
    }
    let raw = rusqlite::Connection::open(&path).unwrap();
    let version: u32 = raw
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    let tables: u32 = raw
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        (version, tables),
        (0, 1),
        "nothing of the failed step remains"
    );
}

#[test]
fn a_damaged_sqlite_file_is_refused_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE_NAME);
    // A real SQLite header followed by noise.
    let mut bytes = b"SQLite format 3\0".to_vec();
    bytes.extend((0..8_176u32).map(|i| (i.wrapping_mul(40_503) >> 7) as u8));
    fs::write(&path, &bytes).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(
        matches!(
            err,
            StorageError::Corrupt { .. } | StorageError::NotADatabase { .. }
        ),
        "{err}"
    );
    assert_eq!(fs::read(&path).unwrap(), bytes);
    sidecars_absent(&path);
}
