//! Fuzz target `wire_frame` (see `porfiry_fuzz::targets`).

fn main() {
    porfiry_fuzz::main("wire_frame");
}
