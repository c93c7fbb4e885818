//! Backup and restore on real files: a node with a friend, notes, a model
//! in its registry, a skill and a settings file is backed up while its database is open for writing, restored into
//! a new folder, and is the same node; a wrong passphrase, a truncated or a
//! changed file, or an occupied target writes nothing.

use clap::Parser as _;

use super::*;
use crate::cli::{Cli, Command};
use crate::commands::backup::write_backup;
use porfiry_backup::KdfCost;
use porfiry_mesh::friends::open;
use porfiry_mesh::notes::all_notes;
use porfiry_protocol::NodeKey;

/// A cheap KDF (the real cost is tested in `backup_crypt`).
const CHEAP: KdfCost = KdfCost {
    memory_kib: 64,
    passes: 1,
    lanes: 1,
};
const PASS: &[u8] = b"family passphrase";

fn cli(args: &[&str]) -> Command {
    Cli::try_parse_from(std::iter::once("porfiry").chain(args.iter().copied()))
        .unwrap()
        .command
}

/// A node with a named friend, two notes and one skill file.
fn node(root: &Path) -> (DataDir, String) {
    let dir = DataDir::new(root);
    porfiry_mesh::init::init(&dir, porfiry_skills::Language::En).unwrap();
    let friend = NodeKey::from_seed([7; 32]).peer_id().to_string();
    let Command::Friends(add) = cli(&["friends", "add", &friend, "--name", "anna"]) else {
        panic!()
    };
    crate::commands::friends::friends(&dir, &add, 1_000).unwrap();
    for text in ["first note", "second note"] {
        let Command::Notes(post) = cli(&["notes", "post", text]) else {
            panic!()
        };
        crate::commands::notes::notes(&dir, &post, 2_000).unwrap();
    }
    let Command::Llm(add) = cli(&[
        "llm",
        "add",
        "home",
        "--url",
        "http://127.0.0.1:8080/v1",
        "--model",
        "qwen",
        "--api-key-env",
        "HOME_LLM_KEY",
        "--main",
    ]) else {
        panic!()
    };
    crate::commands::llm::llm(&dir, &add).unwrap();
    std::fs::create_dir_all(dir.skills_dir().join("mine")).unwrap();
    std::fs::write(dir.skills_dir().join("mine/SKILL.md"), "# my skill\n").unwrap();
    std::fs::write(dir.root().join("api-token"), "secret").unwrap();
    (dir, friend)
}

/// What makes a node itself: peer id, friends, note texts.
fn identity_of(dir: &DataDir) -> (String, Vec<String>, Vec<String>) {
    let (key, store) = open(dir).unwrap();
    let friends = store
        .friends()
        .unwrap()
        .into_iter()
        .map(|f| f.row.peer_id)
        .collect();
    let mut notes: Vec<String> = all_notes(&store)
        .unwrap()
        .into_iter()
        .map(|n| n.row.text)
        .collect();
    notes.sort();
    (key.peer_id().to_string(), friends, notes)
}

#[test]
fn a_restored_node_is_the_same_node() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, friend) = node(&tmp.path().join("a"));
    // A writer holds the database open, as a running node does.
    let live = porfiry_storage::Store::open(dir.db_path()).unwrap();
    let file = tmp.path().join("a.porfiry-backup");
    let settings = tmp.path().join("porfiry.toml");
    std::fs::write(&settings, "offload = true\n").unwrap();
    let said = write_backup(&dir, &file, PASS, CHEAP, Some(&settings)).unwrap();
    drop(live);
    assert!(said.contains("1 skill files, settings file"), "{said}");
    let raw = std::fs::read(&file).unwrap();
    assert!(
        !raw.windows(10).any(|w| w == b"first note"),
        "the file is sealed"
    );

    let target = DataDir::new(tmp.path().join("restored/b"));
    let said = restore_into(&file, PASS, &target).unwrap();
    let before = identity_of(&dir);
    assert!(said.contains(&before.0), "{said}");
    let after = identity_of(&target);
    assert_eq!(after, before);
    assert_eq!(after.1, vec![friend]);
    assert_eq!(
        after.2,
        vec!["first note".to_owned(), "second note".to_owned()]
    );
    assert_eq!(
        std::fs::read_to_string(target.skills_dir().join("mine/SKILL.md")).unwrap(),
        "# my skill\n"
    );
    assert!(
        !target.root().join("api-token").exists(),
        "the API token stays behind"
    );
    assert!(said.contains("settings file is"), "{said}");
    assert_eq!(
        std::fs::read_to_string(target.root().join("porfiry.toml")).unwrap(),
        "offload = true\n"
    );
    // The model registry comes along, naming the key's variable, never a key.
    let (_, store) = open(&target).unwrap();
    let main = store.llm_main().unwrap().expect("the main model").row;
    assert_eq!(
        (main.name.as_str(), main.endpoint.as_str()),
        ("home", "http://127.0.0.1:8080/v1")
    );
    assert!(format!("{main:?}").contains("HOME_LLM_KEY"), "{main:?}");
    use std::os::unix::fs::PermissionsExt as _;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&target.identity_path()), 0o600);
    assert_eq!(mode(target.root()), 0o700);
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path().join("restored"))
        .unwrap()
        .collect();
    assert_eq!(leftovers.len(), 1, "no staging folder left behind");
}

#[test]
fn an_existing_backup_file_is_never_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, _) = node(&tmp.path().join("a"));
    let file = tmp.path().join("b");
    std::fs::write(&file, "older backup").unwrap();
    assert!(write_backup(&dir, &file, PASS, CHEAP, None).is_err());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "older backup");
    // A settings file that is not one is refused before anything is written.
    let bad = tmp.path().join("bad.toml");
    std::fs::write(&bad, "not = [toml").unwrap();
    let err = write_backup(&dir, &tmp.path().join("d"), PASS, CHEAP, Some(&bad)).unwrap_err();
    assert!(err.to_string().contains("bad.toml"), "{err}");
    assert!(!tmp.path().join("d").exists());
    let empty = DataDir::new(tmp.path().join("empty"));
    let err = write_backup(&empty, &tmp.path().join("c"), PASS, CHEAP, None).unwrap_err();
    assert!(err.to_string().contains("no node"), "{err}");
    assert!(!tmp.path().join("c").exists());
}

/// Each bad restore is one line, and leaves the target's parent as it was.
fn refused(file: &Path, pass: &[u8], parent: &Path) -> String {
    let target = DataDir::new(parent.join("node"));
    let err = restore_into(file, pass, &target).unwrap_err();
    let line = format!("{err:#}");
    assert!(!line.contains('\n'), "{line}");
    assert!(!target.root().exists(), "{line}: the target was made");
    let left = std::fs::read_dir(parent).map(|d| d.count()).unwrap_or(0);
    assert_eq!(left, 0, "{line}: something was written beside it");
    line
}

#[test]
fn a_wrong_passphrase_a_truncated_or_a_changed_file_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, _) = node(&tmp.path().join("a"));
    let file = tmp.path().join("backup");
    write_backup(&dir, &file, PASS, CHEAP, None).unwrap();
    let raw = std::fs::read(&file).unwrap();
    let parent = tmp.path().join("out");
    std::fs::create_dir(&parent).unwrap();

    let line = refused(&file, b"not the passphrase", &parent);
    assert!(
        line.contains("wrong passphrase") && line.contains("nothing was written"),
        "{line}"
    );

    let short = tmp.path().join("short");
    std::fs::write(&short, &raw[..raw.len() - 100]).unwrap();
    let line = refused(&short, PASS, &parent);
    assert!(line.contains("cannot restore"), "{line}");

    let changed = tmp.path().join("changed");
    let mut bytes = raw.clone();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&changed, &bytes).unwrap();
    let line = refused(&changed, PASS, &parent);
    assert!(line.contains("damaged or was changed"), "{line}");

    let other = tmp.path().join("other");
    std::fs::write(&other, b"hello, not a backup at all, just text").unwrap();
    assert!(refused(&other, PASS, &parent).contains("not a porfiry backup"));
}

#[test]
fn a_target_that_holds_anything_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, _) = node(&tmp.path().join("a"));
    let file = tmp.path().join("backup");
    write_backup(&dir, &file, PASS, CHEAP, None).unwrap();
    let err = restore_into(&file, PASS, &dir).unwrap_err();
    assert!(err.to_string().contains("already holds a node"), "{err}");
    let busy = tmp.path().join("busy");
    std::fs::create_dir(&busy).unwrap();
    std::fs::write(busy.join("x"), "x").unwrap();
    let err = restore_into(&file, PASS, &DataDir::new(&busy)).unwrap_err();
    assert!(err.to_string().contains("not empty"), "{err}");
    // An empty folder is fine.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    restore_into(&file, PASS, &DataDir::new(&empty)).unwrap();
    assert_eq!(identity_of(&DataDir::new(&empty)).0, identity_of(&dir).0);
    assert!(
        restore(
            None,
            &RestoreArgs {
                file,
                passphrase: Default::default()
            }
        )
        .is_err()
    );
}
