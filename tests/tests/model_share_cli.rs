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
//! - after A revokes the permission, B is refused again at once.

use std::path::Path;

use porfiry_engine::pull::catalogue::find;
use porfiry_engine::test_model::test_model_path;
use porfiry_tests::mesh_node::{MeshNode, wait_for};
use sha2::{Digest, Sha256};

/// The name A registers the model under, and B asks for.
const NAME: &str = "smol";
/// What B calls A (`friends add … --name`), and passes to `--from`.
const A_NAME: &str = "home";

/// How A logs a stream it refused, listed on, or sent a file's bytes on.
const REFUSED: &str = "Refused(NotPermitted)";
const LISTED: &str = "Listed(1)";
const SENT: &str = "Sent(";

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
    a.cli_ok(&["llm", "add", NAME, "--file", &model.display().to_string()]);
    // A knows B (it dials A) but has not allowed it to pull.
    a.befriend(&b, false, &[]);
    let address = a.start_server_with(0, &["--share-models"]);
    b.cli_ok(&["friends", "add", &a.peer_id, &address, "--name", A_NAME]);
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

    let listed: serde_json::Value =
        serde_json::from_str(&b.cli_ok(&["llm", "list", "--json"])).expect("llm list json");
    let registry = listed["registry"].as_array().expect("a registry");
    assert_eq!(registry.len(), 1, "{listed}");
    let row = &registry[0];
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
    let listed: serde_json::Value =
        serde_json::from_str(&b.cli_ok(&["llm", "list", "--json"])).expect("llm list json");
    assert_eq!(listed["registry"].as_array().map(Vec::len), Some(1));

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
