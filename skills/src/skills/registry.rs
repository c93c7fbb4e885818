//! The skill registry: the merged skills by name, and their index lines
//! (`name — trigger`) for the prompt. Bodies stay out of the prompt and are
//! read on demand with `read_skill`.

use std::collections::BTreeMap;

use crate::skills::skill::Skill;

/// Skills by name, in name order so the index is stable.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillRegistry {
    skills: BTreeMap<String, Skill>,
}

impl SkillRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// A registry of `skills`; of two with one name the later wins.
    pub fn from_skills(skills: impl IntoIterator<Item = Skill>) -> Self {
        let mut registry = Self::new();
        for skill in skills {
            registry.insert(skill);
        }
        registry
    }

    /// Adds a skill, replacing one of the same name (returned).
    pub fn insert(&mut self, skill: Skill) -> Option<Skill> {
        self.skills.insert(skill.name.clone(), skill)
    }

    /// The skill called `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.get(name)
    }

    /// Skill names in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.skills.keys().map(String::as_str)
    }

    /// Skills in name order.
    pub fn iter(&self) -> impl Iterator<Item = &Skill> {
        self.skills.values()
    }

    /// How many skills there are.
    pub fn len(&self) -> usize {
        self.skills.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// The index line of one skill: `name — description`.
    pub fn index_line(skill: &Skill) -> String {
        format!("{} — {}", skill.name, skill.description)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::skill::SkillOrigin;

    fn skill(name: &str, toolset: Option<&str>, origin: SkillOrigin) -> Skill {
        Skill {
            name: name.into(),
            description: format!("{name} trigger"),
            toolset: toolset.map(Into::into),
            body: String::new(),
            origin,
        }
    }

    #[test]
    fn later_skill_wins_and_names_are_in_order() {
        let user = SkillOrigin::User("u/media/SKILL.md".into());
        let reg = SkillRegistry::from_skills([
            skill("web", None, SkillOrigin::Builtin),
            skill("media", Some("media"), SkillOrigin::Builtin),
            skill("media", Some("media"), user.clone()),
        ]);
        assert_eq!(reg.len(), 2);
        assert_eq!(reg.get("media").unwrap().origin, user);
        assert_eq!(reg.names().collect::<Vec<_>>(), ["media", "web"]);
        assert_eq!(
            SkillRegistry::index_line(reg.get("web").unwrap()),
            "web — web trigger"
        );
        assert!(SkillRegistry::new().is_empty());
    }
}
