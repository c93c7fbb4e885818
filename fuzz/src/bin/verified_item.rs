//! Fuzz target `verified_item` (see `porfiry_fuzz::targets`).

fn main() {
    porfiry_fuzz::main("verified_item");
}
