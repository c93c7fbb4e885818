//! Fuzz target `tool_call` (see `porfiry_fuzz::targets`).

fn main() {
    porfiry_fuzz::main("tool_call");
}
