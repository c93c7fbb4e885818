//! Skills: knowledge the model reads on demand with `read_skill` — one
//! `SKILL.md` parsed and checked ([`Skill`]), the registry of merged skills
//! with their prompt index ([`SkillRegistry`]), and the repository that merges
//! built-in skills with the user's folder ([`SkillRepository`]).

pub mod registry;
pub mod repository;
pub mod skill;

pub use registry::SkillRegistry;
pub use repository::{SkillLoad, SkillRepository};
pub use skill::{Skill, SkillError, SkillOrigin};
