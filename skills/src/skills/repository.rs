//! The skill repository: merges the built-in skills (embedded in the binary
//! with `include_str!` from `skills/builtin/<name>/`) with the user's folder
//! (`<data-dir>/skills/<name>/SKILL.md`); the user's skill wins a name clash.
//!
//! In Russian, `SKILL.ru.md` next to `SKILL.md` is preferred when present.
//! A broken skill is skipped with a `tracing::warn!` naming its file and is
//! listed in [`SkillLoad::skipped`]; it never stops the others from loading.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::limits::MAX_SKILL_FILE_BYTES;
use crate::skills::registry::SkillRegistry;
use crate::skills::skill::{Skill, SkillError, SkillOrigin, parse_skill};
use crate::texts::Language;

/// A built-in skill's files, embedded at compile time.
#[derive(Debug, Clone, Copy)]
pub struct BuiltinSkill {
    /// Folder name (= skill name).
    pub folder: &'static str,
    /// `SKILL.md`.
    pub en: &'static str,
    /// `SKILL.ru.md`, if the skill has one.
    pub ru: Option<&'static str>,
}

/// A built-in skill of `skills/builtin/<folder>/`, both languages.
macro_rules! builtin {
    ($folder:literal) => {
        BuiltinSkill {
            folder: $folder,
            en: include_str!(concat!("../../builtin/", $folder, "/SKILL.md")),
            ru: Some(include_str!(concat!(
                "../../builtin/",
                $folder,
                "/SKILL.ru.md"
            ))),
        }
    };
}

/// Every built-in skill (one per set the API's chat offers). Embedding keeps
/// a phone build free of asset paths.
pub const BUILTIN_SKILLS: &[BuiltinSkill] = &[
    builtin!("media"),
    builtin!("notes"),
    builtin!("messages"),
    builtin!("diary"),
    builtin!("goals"),
    builtin!("tasks"),
];

/// The skill file's name.
pub const SKILL_FILE: &str = "SKILL.md";
/// The Russian variant's file name.
pub const SKILL_FILE_RU: &str = "SKILL.ru.md";

/// The result of loading: the merged registry and what was skipped.
#[derive(Debug)]
pub struct SkillLoad {
    /// Skills that loaded.
    pub registry: SkillRegistry,
    /// Files skipped, each with its cause (each also logged as a warning).
    pub skipped: Vec<SkillError>,
}

/// Where skills come from.
#[derive(Debug, Clone)]
pub struct SkillRepository {
    language: Language,
    builtin: bool,
    user_dir: Option<PathBuf>,
}

impl SkillRepository {
    /// The built-in skills only, in `language`.
    pub fn new(language: Language) -> Self {
        Self {
            language,
            builtin: true,
            user_dir: None,
        }
    }

    /// Also reads the user's skills from `dir` (normally `<data-dir>/skills`).
    pub fn with_user_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.user_dir = Some(dir.into());
        self
    }

    /// Leaves the built-in skills out.
    pub fn without_builtin(mut self) -> Self {
        self.builtin = false;
        self
    }

    /// Reads every source; built-in first, then the user's, so the user wins.
    pub fn load(&self) -> SkillLoad {
        let mut registry = SkillRegistry::new();
        let mut skipped = Vec::new();
        if self.builtin {
            for builtin in BUILTIN_SKILLS {
                let (text, file_name) = match (self.language, builtin.ru) {
                    (Language::Ru, Some(ru)) => (ru, SKILL_FILE_RU),
                    _ => (builtin.en, SKILL_FILE),
                };
                let file = format!("builtin/{}/{file_name}", builtin.folder);
                match parse_skill(text, builtin.folder, &file, SkillOrigin::Builtin) {
                    Ok(skill) => {
                        registry.insert(skill);
                    }
                    Err(e) => skip(&mut skipped, e),
                }
            }
        }
        if let Some(dir) = &self.user_dir {
            for result in load_dir(dir, self.language) {
                match result {
                    Ok(skill) => {
                        if let Some(old) = registry.insert(skill)
                            && old.origin == SkillOrigin::Builtin
                        {
                            tracing::debug!(skill = %old.name, "user skill replaces the built-in one");
                        }
                    }
                    Err(e) => skip(&mut skipped, e),
                }
            }
        }
        SkillLoad { registry, skipped }
    }
}

fn skip(skipped: &mut Vec<SkillError>, e: SkillError) {
    tracing::warn!(file = %e.file(), "skill skipped: {e}");
    skipped.push(e);
}

/// Loads every `<dir>/<name>/SKILL.md`, in folder-name order. A missing `dir`
/// means the user has no skills yet: not an error.
fn load_dir(dir: &Path, language: Language) -> Vec<Result<Skill, SkillError>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            tracing::debug!(dir = %dir.display(), "no user skill folder");
            return Vec::new();
        }
        Err(source) => {
            return vec![Err(SkillError::Io {
                file: dir.display().to_string(),
                source,
            })];
        }
    };
    let mut folders: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    folders
        .into_iter()
        .map(|folder| load_folder(&folder, language))
        .collect()
}

fn load_folder(folder: &Path, language: Language) -> Result<Skill, SkillError> {
    let Some(name) = folder.file_name().and_then(|n| n.to_str()) else {
        return Err(SkillError::NotUtf8 {
            file: folder.display().to_string(),
        });
    };
    let ru = folder.join(SKILL_FILE_RU);
    let path = if language == Language::Ru && ru.is_file() {
        ru
    } else {
        folder.join(SKILL_FILE)
    };
    let file = path.display().to_string();
    let text = read_limited(&path, &file)?;
    parse_skill(&text, name, &file, SkillOrigin::User(path.clone()))
}

/// The skill as its file reads now: a user's skill is read again from disk
/// (seed 000: skills are read lazily, so an edited recipe needs no restart);
/// a built-in one, shipped in the binary, is `skill` itself. A file that is
/// gone or broken now keeps the loaded skill, and the error says why.
pub fn reread(skill: &Skill) -> Result<Skill, SkillError> {
    let SkillOrigin::User(path) = &skill.origin else {
        return Ok(skill.clone());
    };
    let file = path.display().to_string();
    let text = read_limited(path, &file)?;
    parse_skill(&text, &skill.name, &file, SkillOrigin::User(path.clone()))
}

/// Reads a file of at most [`MAX_SKILL_FILE_BYTES`] as UTF-8.
fn read_limited(path: &Path, file: &str) -> Result<String, SkillError> {
    let io = |source| SkillError::Io {
        file: file.to_owned(),
        source,
    };
    let handle = match fs::File::open(path) {
        Ok(h) => h,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(SkillError::Missing {
                file: file.to_owned(),
            });
        }
        Err(e) => return Err(io(e)),
    };
    let mut bytes = Vec::new();
    // Read one byte past the limit to tell "exactly at" from "over" without
    // trusting metadata that may change under us.
    handle
        .take(MAX_SKILL_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    let len = bytes.len() as u64;
    if len > MAX_SKILL_FILE_BYTES {
        let bytes = fs::metadata(path).map(|m| m.len()).unwrap_or(len);
        return Err(SkillError::TooLarge {
            file: file.to_owned(),
            bytes,
        });
    }
    String::from_utf8(bytes).map_err(|_| SkillError::NotUtf8 {
        file: file.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_skill_parses_in_both_languages() {
        for lang in [Language::En, Language::Ru] {
            let load = SkillRepository::new(lang).load();
            assert!(load.skipped.is_empty(), "{:?}", load.skipped);
            assert_eq!(load.registry.len(), BUILTIN_SKILLS.len());
            let media = load.registry.get("media").unwrap();
            assert_eq!(media.toolset.as_deref(), Some("media"));
            assert!(media.description.contains("enable_toolset|media"));
        }
        let ru = SkillRepository::new(Language::Ru).load();
        assert!(ru.registry.get("media").unwrap().body.contains("Фильмы"));
    }

    #[test]
    fn without_builtin_and_without_a_user_dir_there_is_nothing() {
        let load = SkillRepository::new(Language::En).without_builtin().load();
        assert!(load.registry.is_empty());
        assert!(load.skipped.is_empty());
    }
}
