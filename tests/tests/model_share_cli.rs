//! A model from a friend, end to end with two real `porfiry` processes on
//! loopback: node A registers the real test model (`llm add --file`) and
//! runs `porfiry run --share-models`; node B, A's friend under the name
//! `home`, runs `porfiry model pull smol --from home`. Proves that:
//!
//! - before A grants the permission (`friends models B on`), B's pull is
//!   refused with A's words and nothing is written in B's models folder;
//! - once granted (while A runs: the permission is read on every request),
//!   the pulled file is byte for byte A's file (SHA-256 equal, and the
//!   catalogue's pinned hash of the test model), and B's registry holds it as
//!   its main model (`llm list --json`), as a Hub pull registers one;
//! - the same pull again verifies the file in place and fetches nothing (A
//!   sent the bytes once) and does not register it twice;
//! - after A revokes the permission, B is refused again at once;
//! - with B's models folder on a tmpfs of a few MB (far below the file
//!   plus the safety margin), the permitted pull is refused before it
//!   starts with one line naming the folder and the byte counts: A sends no
//!   byte, nothing is written there, nothing is registered, B still
//!   answers; once the folder is back on the roomy disk the same pull
//!   works. Skipped, with the reason, where a tmpfs cannot be mounted.

mod tmpfs_common;

use std::path::Path;

use porfiry_engine::pull::catalogue::find;
use porfiry_engine::test_model::test_model_path;
use porfiry_model_share::transfer::DISK_MARGIN_BYTES;
use porfiry_storage::disk::free_bytes;
use porfiry_tests::mesh_node::{MeshNode, wait_for};
use sha2::{Digest, Sha256};
use tmpfs_common::Tmpfs;

/// The name A registers the model under, and B asks for.
const NAME: &str = "smol";
/// What B calls A (`friends add … --name`), and passes to `--from`.
const A_NAME: &str = "home";

/// How A logs a stream it refused, listed on, or sent a file's bytes on.
const REFUSED: &str = "Refused(NotPermitted)";
const LISTED: &str = "Listed(1)";
const SENT: &str = "Sent(";

/// B's models folder in the no-room test: a few MB, far below the test
/// model (99 MB) plus [`DISK_MARGIN_BYTES`], and cheap to mount.
const SMALL_TMPFS_BYTES: u64 = 4 << 20;

/// SHA-256 of the file at `path`, lower-case hex.
fn sha256_hex(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What is in `dir` (nothing when it does not exist).
fn entries(dir: &Path) -> Vec<String> {
    match std::fs::read_dir(dir) {
        Ok(read) => read
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => panic!("{}: {e}", dir.display()),
    }
}

/// B's `model pull NAME --from home`: (success, stdout, stderr).
fn pull(b: &MeshNode) -> (bool, String, String) {
    let out = b.cli(&["model", "pull", NAME, "--from", A_NAME]);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// B's `llm list --json` registry rows.
fn registry(b: &MeshNode) -> Vec<serde_json::Value> {
    let listed: serde_json::Value =
        serde_json::from_str(&b.cli_ok(&["llm", "list", "--json"])).expect("llm list json");
    listed["registry"]
        .as_array()
        .unwrap_or_else(|| panic!("a registry: {listed}"))
        .clone()
}

/// A registers `model` as [`NAME`] and runs with `--share-models`,
/// knowing B (which dials it) but not yet allowing it to pull; B knows A
/// as [`A_NAME`] at A's address.
fn share(a: &mut MeshNode, b: &MeshNode, model: &Path) {
    a.cli_ok(&["llm", "add", NAME, "--file", &model.display().to_string()]);
    a.befriend(b, false, &[]);
    let address = a.start_server_with(0, &["--share-models"]);
    b.cli_ok(&["friends", "add", &a.peer_id, &address, "--name", A_NAME]);
}

/// How many of A's model streams ended as `served` says (`Sent(`,
/// `Listed(`, `Refused(NotPermitted)`): A logs each stream once it closed.
fn served(a: &MeshNode, served: &str) -> usize {
    a.logged_count(&["model stream done", served])
}

/// Waits until A has logged `n` streams ended as `what`.
fn wait_served(a: &MeshNode, what: &str, n: usize) {
    wait_for(&format!("A to log {n} streams {what}"), || {
        served(a, what) >= n
    });
    assert_eq!(served(a, what), n, "{}", a.stderr());
}

#[test]
fn a_permitted_friend_pulls_the_exact_file_and_registers_it_and_others_get_nothing() {
    let model = test_model_path().unwrap_or_else(|e| panic!("{e}"));
    let model_sha = sha256_hex(&model);
    assert_eq!(
        model_sha,
        find("smollm2-135m").expect("in the catalogue").sha256,
        "the test model is the catalogue's file"
    );
    let file_name = model.file_name().expect("a file name").to_owned();

    let mut a = MeshNode::init("A");
    let b = MeshNode::init("B");
    share(&mut a, &b, &model);
    let models_dir = b.dir().join("models");

    let (ok, stdout, stderr) = pull(&b);
    assert!(!ok, "pulled without the permission: {stdout}");
    assert!(
        stderr.contains(&format!("friend {} refused", a.peer_id))
            && stderr.contains("does not share its models with you")
            && stderr.contains("porfiry friends models"),
        "{stderr}"
    );
    assert_eq!(
        entries(&models_dir),
        Vec::<String>::new(),
        "nothing written"
    );
    wait_served(&a, REFUSED, 1);

    let said = a.cli_ok(&["friends", "models", &b.peer_id, "on"]);
    assert!(said.contains("may pull"), "{said}");
    let (ok, stdout, stderr) = pull(&b);
    assert!(ok, "{stdout}\n{stderr}");
    let pulled = models_dir.join(&file_name);
    assert!(
        stdout.contains(&format!(
            "pulled {NAME} from {}: 99 MB into {} (sha256 verified)",
            a.peer_id,
            pulled.display()
        )) && stdout.contains("(main)"),
        "{stdout}"
    );
    assert_eq!(sha256_hex(&pulled), model_sha);
    assert_eq!(
        std::fs::metadata(&pulled).unwrap().len(),
        std::fs::metadata(&model).unwrap().len()
    );
    assert_eq!(
        entries(&models_dir),
        [file_name.to_string_lossy().into_owned()],
        "no partial file left"
    );
    wait_served(&a, LISTED, 1);
    wait_served(&a, SENT, 1);

    let rows = registry(&b);
    assert_eq!(rows.len(), 1, "{rows:?}");
    let row = &rows[0];
    assert_eq!(row["name"], NAME);
    assert_eq!(row["main"], true);
    assert_eq!(row["endpoint"], format!("file:{}", pulled.display()));
    assert_eq!(row["file"]["architecture"], "llama");

    // Again: verified in place; A sends nothing; registered once.
    let (ok, stdout, stderr) = pull(&b);
    assert!(ok, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("(already here, hash verified)")
            && stdout.contains(&format!("model {NAME} is already registered")),
        "{stdout}"
    );
    wait_served(&a, LISTED, 2);
    assert_eq!(served(&a, SENT), 1, "the second pull fetched bytes");
    assert_eq!(registry(&b).len(), 1);

    // Revoked while A runs: refused at once, B's file untouched.
    a.cli_ok(&["friends", "models", &b.peer_id, "off"]);
    let (ok, stdout, stderr) = pull(&b);
    assert!(!ok, "pulled after the revocation: {stdout}");
    assert!(
        stderr.contains("does not share its models with you"),
        "{stderr}"
    );
    assert_eq!(sha256_hex(&pulled), model_sha);
    wait_served(&a, REFUSED, 2);
    assert_eq!(served(&a, SENT), 1);
}

#[test]
fn a_pull_without_room_is_refused_before_starting_writes_nothing_and_works_once_room_is_back() {
    let model = test_model_path().unwrap_or_else(|e| panic!("{e}"));
    let model_bytes = std::fs::metadata(&model).unwrap().len();
    let file_name = model.file_name().expect("a file name").to_owned();

    let mut a = MeshNode::init("A");
    let b = MeshNode::init("B");
    // Only the models folder is small: B's database stays on the roomy disk,
    // so the check is seen to measure where the file would go.
    let models_dir = b.dir().join("models");
    let tmpfs = match Tmpfs::mount(&models_dir, SMALL_TMPFS_BYTES) {
        Ok(tmpfs) => tmpfs,
        Err(why) => {
            eprintln!("skipped: cannot mount a tmpfs here ({why})");
            return;
        }
    };
    share(&mut a, &b, &model);
    a.cli_ok(&["friends", "models", &b.peer_id, "on"]);

    let free = free_bytes(&models_dir).expect("the tmpfs's free space");
    let needed = model_bytes + DISK_MARGIN_BYTES;
    assert!(free < needed, "the tmpfs has room: {free} >= {needed}");
    let (ok, stdout, stderr) = pull(&b);
    assert!(!ok, "pulled into a full disk: {stdout}");
    assert_eq!(
        stderr,
        format!(
            "porfiry: not enough room in {}: the model needs {needed} bytes more \
             (with a safety margin), {free} are free\n",
            models_dir.display()
        ),
        "one line naming the folder and the byte counts"
    );
    assert_eq!(stdout, "");
    assert_eq!(
        entries(&models_dir),
        Vec::<String>::new(),
        "nothing written, not even a partial file"
    );
    assert_eq!(
        free_bytes(&models_dir),
        Some(free),
        "the tmpfs is untouched"
    );
    assert_eq!(
        registry(&b),
        Vec::<serde_json::Value>::new(),
        "nothing registered"
    );
    // B read A's list, then asked for no byte.
    wait_served(&a, LISTED, 1);
    assert_eq!(served(&a, SENT), 0, "A sent bytes to a full disk");
    assert!(a.is_running(), "{}", a.stderr());
    let status = b.cli_ok(&["status"]);
    assert!(status.contains(&b.peer_id), "{status}");

    // The folder back on the roomy disk: the same pull works.
    drop(tmpfs);
    let (ok, stdout, stderr) = pull(&b);
    assert!(ok, "{stdout}\n{stderr}");
    let pulled = models_dir.join(&file_name);
    assert_eq!(sha256_hex(&pulled), sha256_hex(&model));
    assert_eq!(
        entries(&models_dir),
        [file_name.to_string_lossy().into_owned()]
    );
    assert_eq!(registry(&b).len(), 1);
    wait_served(&a, SENT, 1);
}
