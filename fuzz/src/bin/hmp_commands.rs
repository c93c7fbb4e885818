//! Fuzz target `hmp_commands` (see `porfiry_fuzz::targets`).

fn main() {
    porfiry_fuzz::main("hmp_commands");
}
