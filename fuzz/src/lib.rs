//! Fuzz targets for Porfiry's decoders of outside bytes (issue 46 §1).
//!
//! Each target in [`targets::TARGETS`] is a plain function of the input
//! bytes. `src/bin/<target>.rs` runs it under AFL++ when built with `cargo
//! afl build` (`cfg(fuzzing)`), and otherwise replays the files named on its
//! command line; `tests/replay.rs` runs every file of `corpus/<target>/` and
//! `regressions/<target>/` through the same function under plain `cargo
//! test`, so an input that crashed once stays fixed. Every input runs under
//! the heap bound of its target ([`alloc_cap`]). `run.sh` is what CI calls;
//! `docs/testing.md`, "Fuzzing", says how to use it all.

#![deny(unsafe_code)]

pub mod alloc_cap;
pub mod targets;

use targets::Target;

// Borrowed sources. Three decoders live in crates that are heavy to build
// instrumented: the offload frames and the invitation code in
// `porfiry-mesh` (libp2p, SQLite through porfiry-storage), the GGUF header
// reader in `porfiry-engine` (reqwest, rustls, tokio). Each is one
// self-contained file, so this crate compiles that very file as a module of
// its own and fuzzes it, and the instrumented build stays at about two
// minutes instead of five (docs/testing.md, "Fuzzing"). A change that makes
// one of them need more of its crate fails this crate's build, and so
// `fuzz/run.sh`, at once.

/// What `node/mesh/src/invite/code.rs` takes from `porfiry-mesh`'s `net`
/// (libp2p's own re-exports of these two types).
pub mod net {
    pub use libp2p_identity::PeerId;
    pub use multiaddr::Multiaddr;
}

/// `porfiry_mesh::invite::code`, compiled from its file (the folder is
/// named so that the file's own `mod` declarations resolve as in its crate).
#[path = "../../node/mesh/src/invite"]
pub mod invite {
    pub mod code;
}

/// `porfiry_offload`'s `wire` module, compiled from its file.
#[path = "../../node/offload/src"]
pub mod offload {
    pub mod wire;
}

/// `porfiry_engine::gguf`, compiled from its file.
#[path = "../../node/engine/src"]
pub mod engine {
    pub mod gguf;
}

#[global_allocator]
static ALLOC: alloc_cap::CappedAlloc = alloc_cap::CappedAlloc;

/// Runs `target` on one input under its heap bound; returns the most heap
/// it held at once, or says by how much the bound was broken.
pub fn run_one(target: &Target, data: &[u8]) -> Result<usize, String> {
    let bound = (target.heap_bound)(data.len());
    let ((), peak) = alloc_cap::with_limit(bound, || (target.run)(data));
    if peak > bound {
        return Err(format!(
            "{} held {peak} heap bytes for a {}-byte input; its bound is {bound}",
            target.name,
            data.len()
        ));
    }
    Ok(peak)
}

/// A target binary's `main`: the AFL++ loop when built by `cargo afl`,
/// else a replay of the files named as arguments (exit 1 on a broken bound).
pub fn main(name: &str) {
    let Some(target) = targets::by_name(name) else {
        eprintln!("no fuzz target {name}");
        std::process::exit(2);
    };
    #[cfg(fuzzing)]
    afl::fuzz!(|data: &[u8]| {
        if let Err(why) = run_one(&target, data) {
            panic!("{why}");
        }
    });
    #[cfg(not(fuzzing))]
    for path in std::env::args_os().skip(1) {
        let data = match std::fs::read(&path) {
            Ok(data) => data,
            Err(e) => {
                eprintln!("{}: {e}", path.to_string_lossy());
                std::process::exit(2);
            }
        };
        match run_one(&target, &data) {
            Ok(peak) => println!("{}: ok, {peak} heap bytes at most", path.to_string_lossy()),
            Err(why) => {
                eprintln!("{}: {why}", path.to_string_lossy());
                std::process::exit(1);
            }
        }
    }
}
