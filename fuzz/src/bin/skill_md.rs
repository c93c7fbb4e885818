//! Fuzz target `skill_md` (see `porfiry_fuzz::targets`).

fn main() {
    porfiry_fuzz::main("skill_md");
}
