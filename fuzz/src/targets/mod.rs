//! The fuzz targets: one per decoder that takes bytes from outside, each a
//! plain function of the input bytes that panics (or aborts, through
//! [`crate::alloc_cap`]) only when the decoder breaks its contract.

pub mod gguf;
pub mod mesh;
pub mod protocol;
pub mod skills;

/// One target: its name (the binary's, and its folder under `corpus/` and
/// `regressions/`), the function, and the most heap it may hold at once for
/// an input of a given length. The bounds hold the target's own checks too
/// (a round trip holds the input about three times over); past a fixed
/// part they grow with the input: 4 bytes a byte for the wire frame
/// (measured: 3.8 MB for a 1 MB frame of 4,096 items, 0.8 MB for a 16 KB
/// one), 64 for the CBOR item and JSON or YAML texts (parsed values cost
/// 16 to 32 bytes per input byte at worst; a payload is at most 64 KiB),
/// and the GGUF reader may hold one metadata string of up to 16 MiB.
#[derive(Clone, Copy)]
pub struct Target {
    /// The name.
    pub name: &'static str,
    /// Feeds one input to the decoder.
    pub run: fn(&[u8]),
    /// The heap bound, in bytes, for an input of this many bytes.
    pub heap_bound: fn(usize) -> usize,
}

const KIB: usize = 1024;
const MIB: usize = 1024 * KIB;

/// Every target.
pub const TARGETS: &[Target] = &[
    Target {
        name: "wire_frame",
        run: protocol::wire_frame,
        heap_bound: |len| MIB + 4 * len,
    },
    Target {
        name: "verified_item",
        run: protocol::verified_item,
        heap_bound: |len| MIB + 64 * len,
    },
    Target {
        name: "payload",
        run: protocol::payload,
        heap_bound: |len| MIB + 64 * len,
    },
    Target {
        name: "range_sync",
        run: protocol::range_sync,
        heap_bound: |len| MIB + 16 * len,
    },
    Target {
        name: "offload_frame",
        run: mesh::offload_frame,
        heap_bound: |len| 2 * MIB + 64 * len,
    },
    Target {
        name: "invite",
        run: mesh::invite,
        heap_bound: |len| 256 * KIB + 16 * len,
    },
    Target {
        name: "tool_call",
        run: skills::tool_call,
        heap_bound: |len| MIB + 64 * len,
    },
    Target {
        name: "hmp_commands",
        run: skills::hmp_commands,
        heap_bound: |len| MIB + 64 * len,
    },
    Target {
        name: "skill_md",
        run: skills::skill_md,
        heap_bound: |len| MIB + 64 * len,
    },
    Target {
        name: "gguf_header",
        run: gguf::gguf_header,
        heap_bound: |len| 17 * MIB + 16 * len,
    },
];

/// The target called `name`.
pub fn by_name(name: &str) -> Option<Target> {
    TARGETS.iter().copied().find(|t| t.name == name)
}
