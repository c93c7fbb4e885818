//! Fuzz target `offload_frame` (see `porfiry_fuzz::targets`).

fn main() {
    porfiry_fuzz::main("offload_frame");
}
