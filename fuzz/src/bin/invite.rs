//! Fuzz target `invite` (see `porfiry_fuzz::targets`).

fn main() {
    porfiry_fuzz::main("invite");
}
