//! Fuzz target `gguf_header` (see `porfiry_fuzz::targets`).

fn main() {
    porfiry_fuzz::main("gguf_header");
}
