//! The library's public API on real files: a backup made into an unnamed
//! temporary file (the API's download) while the database is open for
//! writing restores into a fresh folder as the same node with its note and
//! settings file; what a restore refuses says why in one line and writes
//! nothing; an existing file is never replaced.

use std::io::Read as _;
use std::path::Path;

use porfiry_backup::crypt::CryptError;
use porfiry_backup::{
    BackupError, KdfCost, Source, backup_to_file, backup_to_temp_file, restore_into,
};
use porfiry_mesh::data_dir::DataDir;
use porfiry_mesh::friends::open;
use porfiry_mesh::notes::all_notes;
use porfiry_storage::{NoteSource, Sharing};

/// A cheap KDF (the real cost is tested in `crypt`).
const CHEAP: KdfCost = KdfCost {
    memory_kib: 64,
    passes: 1,
    lanes: 1,
};
const PASS: &[u8] = b"family passphrase";

/// A node with one private note.
fn node(root: &Path) -> DataDir {
    let dir = DataDir::new(root);
    porfiry_mesh::init::init(&dir, porfiry_skills::Language::En).unwrap();
    let (key, store) = open(&dir).unwrap();
    porfiry_mesh::sharing::post_note(
        &store,
        &key,
        "kept before the backup",
        Sharing::Private,
        NoteSource::Cli,
        1_000,
    )
    .unwrap();
    dir
}

fn peer_and_notes(dir: &DataDir) -> (String, Vec<String>) {
    let (key, store) = open(dir).unwrap();
    let notes = all_notes(&store)
        .unwrap()
        .into_iter()
        .map(|n| n.row.text)
        .collect();
    (key.peer_id().to_string(), notes)
}

#[test]
fn a_backup_in_a_temporary_file_restores_as_the_same_node() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = node(&tmp.path().join("a"));
    let settings = tmp.path().join("porfiry.toml");
    std::fs::write(&settings, "offload = true\n").unwrap();
    let scratch = tmp.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    // A writer holds the database open, as a running node does.
    let live = porfiry_storage::Store::open(dir.db_path()).unwrap();
    let source = Source {
        dir: &dir,
        settings: Some(&settings),
        made_by: "test 1.0",
    };
    let (mut file, written) = backup_to_temp_file(&source, &scratch, PASS, CHEAP).unwrap();
    drop(live);
    assert_eq!(
        std::fs::read_dir(&scratch).unwrap().count(),
        0,
        "the temporary file has no name"
    );
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).unwrap();
    assert_eq!(bytes.len() as u64, written.bytes, "read from its start");
    assert!(bytes.starts_with(porfiry_backup::crypt::MAGIC));
    assert!(written.settings && written.db_bytes > 0);
    assert_eq!(written.manifest.made_by, "test 1.0");

    let saved = tmp.path().join("saved.porfiry-backup");
    std::fs::write(&saved, &bytes).unwrap();
    let target = DataDir::new(tmp.path().join("b"));
    let restored = restore_into(&saved, PASS, &target).unwrap();
    let before = peer_and_notes(&dir);
    assert_eq!(restored.manifest.peer_id, before.0);
    assert_eq!(peer_and_notes(&target), before);
    assert_eq!(before.1, vec!["kept before the backup".to_owned()]);
    assert_eq!(
        restored.settings.as_deref(),
        Some(target.root().join("porfiry.toml").as_path())
    );
    assert_eq!(
        std::fs::read_to_string(target.root().join("porfiry.toml")).unwrap(),
        "offload = true\n"
    );
    assert!(restored.schema > 0);
}

#[test]
fn a_refused_restore_says_why_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = node(&tmp.path().join("a"));
    let file = tmp.path().join("backup");
    let source = Source {
        dir: &dir,
        settings: None,
        made_by: "test",
    };
    backup_to_file(&source, &file, PASS, CHEAP).unwrap();
    let out = tmp.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let target = DataDir::new(out.join("node"));

    let err = restore_into(&file, b"not the passphrase", &target).unwrap_err();
    let BackupError::Refused { reason, .. } = &err else {
        panic!("{err}")
    };
    assert!(
        matches!(**reason, BackupError::Crypt(CryptError::Refused)),
        "{reason:?}"
    );
    let line = err.to_string();
    assert!(
        line.starts_with("cannot restore ")
            && line.contains("wrong passphrase")
            && line.ends_with("; nothing was written"),
        "{line}"
    );
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0, "{line}");

    // An existing file is never replaced; a folder without a node is refused.
    let err = backup_to_file(&source, &file, PASS, CHEAP).unwrap_err();
    assert!(
        err.to_string().contains("cannot put the backup at"),
        "{err}"
    );
    let leftovers = std::fs::read_dir(tmp.path()).unwrap().count();
    assert_eq!(leftovers, 3, "a, backup, out: no temporary file left");
    let empty = DataDir::new(tmp.path().join("empty"));
    let nothing = Source {
        dir: &empty,
        ..source
    };
    let err = backup_to_temp_file(&nothing, tmp.path(), PASS, CHEAP).unwrap_err();
    assert!(matches!(err, BackupError::NoNode(_)), "{err}");
}
