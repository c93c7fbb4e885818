//! Fuzz target `range_sync` (see `porfiry_fuzz::targets`).

fn main() {
    porfiry_fuzz::main("range_sync");
}
