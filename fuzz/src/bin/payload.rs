//! Fuzz target `payload` (see `porfiry_fuzz::targets`).

fn main() {
    porfiry_fuzz::main("payload");
}
