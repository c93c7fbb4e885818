//! Every checked-in input through its target on stable `cargo test`: the
//! seed corpus (`corpus/<target>/`) and the inputs that once broke a decoder
//! (`regressions/<target>/`, named after what they broke). A target whose
//! folders are empty fails, so a target cannot silently lose its corpus.

use std::path::{Path, PathBuf};

use porfiry_fuzz::run_one;
use porfiry_fuzz::targets::{TARGETS, Target, by_name};

fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

fn replay(name: &str) {
    let target: Target = by_name(name).expect("a target of that name");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut inputs = files(&root.join("corpus").join(name));
    let seeds = inputs.len();
    inputs.extend(files(&root.join("regressions").join(name)));
    assert!(seeds > 0, "corpus/{name}/ is empty");
    for path in inputs {
        let data = std::fs::read(&path).expect("a readable input");
        let outcome = std::panic::catch_unwind(|| run_one(&target, &data));
        match outcome {
            Ok(Ok(_)) => {}
            Ok(Err(why)) => panic!("{}: {why}", path.display()),
            Err(_) => panic!("{}: the target panicked (message above)", path.display()),
        }
    }
}

#[test]
fn every_target_has_a_replay_test() {
    let tests = include_str!("replay.rs");
    for t in TARGETS {
        assert!(
            tests.contains(&format!("fn {}()", t.name)),
            "no replay test for {}",
            t.name
        );
    }
}

#[test]
fn wire_frame() {
    replay("wire_frame");
}

#[test]
fn verified_item() {
    replay("verified_item");
}

#[test]
fn payload() {
    replay("payload");
}

#[test]
fn range_sync() {
    replay("range_sync");
}

#[test]
fn offload_frame() {
    replay("offload_frame");
}

#[test]
fn invite() {
    replay("invite");
}

#[test]
fn tool_call() {
    replay("tool_call");
}

#[test]
fn hmp_commands() {
    replay("hmp_commands");
}

#[test]
fn skill_md() {
    replay("skill_md");
}

#[test]
fn gguf_header() {
    replay("gguf_header");
}
