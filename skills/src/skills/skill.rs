//! One skill: a `SKILL.md` with YAML front matter (`name`, `description`,
//! optional `toolset`) and a Markdown body, the recipe `read_skill` returns.
//! This module parses and checks one file's text; it does no IO.

use std::path::PathBuf;

use serde::Deserialize;

use crate::limits::{
    MAX_SKILL_DESCRIPTION_CHARS, MAX_SKILL_FILE_BYTES, MAX_SKILL_FRONT_MATTER_BYTES,
    MAX_SKILL_NAME_CHARS,
};
use crate::tools::registry::is_set_name;

/// Where a skill came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillOrigin {
    /// Shipped inside the crate (`skills/builtin/<name>/`).
    Builtin,
    /// The user's file at this path.
    User(PathBuf),
}

/// A parsed, checked skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// `[a-z0-9-]+`, equal to its folder's name.
    pub name: String,
    /// The one-line trigger shown in the skill index.
    pub description: String,
    /// The toolset this skill tells the model to enable, if any; while that
    /// set is active the skill leaves the index (seed §6).
    pub toolset: Option<String>,
    /// The recipe, returned whole by `read_skill`.
    pub body: String,
    /// Built-in or the user's.
    pub origin: SkillOrigin,
}

/// Why a skill file was skipped. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum SkillError {
    /// The file could not be read.
    #[error("{file}: cannot read: {source}")]
    Io {
        /// The file.
        file: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The folder holds no `SKILL.md`.
    #[error("{file}: missing")]
    Missing {
        /// The expected file.
        file: String,
    },
    /// Larger than [`MAX_SKILL_FILE_BYTES`].
    #[error("{file}: {bytes} bytes, more than the {MAX_SKILL_FILE_BYTES} allowed")]
    TooLarge {
        /// The file.
        file: String,
        /// Its size.
        bytes: u64,
    },
    /// Not UTF-8 (content or folder name).
    #[error("{file}: not UTF-8")]
    NotUtf8 {
        /// The file.
        file: String,
    },
    /// No `---` line opens the file.
    #[error("{file}: no front matter (the file must start with a --- line)")]
    NoFrontMatter {
        /// The file.
        file: String,
    },
    /// The opening `---` has no closing `---`.
    #[error("{file}: front matter is not closed by a --- line")]
    UnclosedFrontMatter {
        /// The file.
        file: String,
    },
    /// The front matter is longer than [`MAX_SKILL_FRONT_MATTER_BYTES`].
    #[error(
        "{file}: front matter is {bytes} bytes, more than the {MAX_SKILL_FRONT_MATTER_BYTES} allowed"
    )]
    FrontMatterTooLong {
        /// The file.
        file: String,
        /// Its length.
        bytes: usize,
    },
    /// The front matter is not YAML with `name` and `description`.
    #[error("{file}: bad front matter: {message}")]
    BadYaml {
        /// The file.
        file: String,
        /// The YAML parser's words.
        message: String,
    },
    /// `name` is not `[a-z0-9-]+` of at most [`MAX_SKILL_NAME_CHARS`].
    #[error("{file}: name {name:?} must be 1-{MAX_SKILL_NAME_CHARS} characters of a-z, 0-9 and -")]
    BadName {
        /// The file.
        file: String,
        /// The name given.
        name: String,
    },
    /// `name` differs from the folder name.
    #[error("{file}: name {name:?} differs from its folder {folder:?}")]
    NameMismatch {
        /// The file.
        file: String,
        /// The name given.
        name: String,
        /// The folder.
        folder: String,
    },
    /// `description` is empty.
    #[error("{file}: description is empty")]
    EmptyDescription {
        /// The file.
        file: String,
    },
    /// `description` longer than [`MAX_SKILL_DESCRIPTION_CHARS`].
    #[error(
        "{file}: description has {chars} characters, more than {MAX_SKILL_DESCRIPTION_CHARS}; keep the trigger to one short line"
    )]
    DescriptionTooLong {
        /// The file.
        file: String,
        /// Its length.
        chars: usize,
    },
    /// `toolset` is not a valid set name.
    #[error("{file}: toolset {toolset:?} is not a toolset name (a-z, 0-9)")]
    BadToolset {
        /// The file.
        file: String,
        /// The value given.
        toolset: String,
    },
}

impl SkillError {
    /// The file the error is about.
    pub fn file(&self) -> &str {
        match self {
            SkillError::Io { file, .. }
            | SkillError::Missing { file }
            | SkillError::TooLarge { file, .. }
            | SkillError::NotUtf8 { file }
            | SkillError::NoFrontMatter { file }
            | SkillError::UnclosedFrontMatter { file }
            | SkillError::FrontMatterTooLong { file, .. }
            | SkillError::BadYaml { file, .. }
            | SkillError::BadName { file, .. }
            | SkillError::NameMismatch { file, .. }
            | SkillError::EmptyDescription { file }
            | SkillError::DescriptionTooLong { file, .. }
            | SkillError::BadToolset { file, .. } => file,
        }
    }
}

/// The front matter fields we read; other keys (license, metadata, …) of the
/// Agent Skills convention are allowed and ignored.
#[derive(Deserialize)]
struct FrontMatter {
    name: String,
    description: String,
    #[serde(default)]
    toolset: Option<String>,
}

/// Parses the text of `<folder>/SKILL.md`; `file` names it in errors.
pub fn parse_skill(
    text: &str,
    folder: &str,
    file: &str,
    origin: SkillOrigin,
) -> Result<Skill, SkillError> {
    let file_owned = || file.to_owned();
    let (yaml, body) = split_front_matter(text).map_err(|e| match e {
        Split::NoOpening => SkillError::NoFrontMatter { file: file_owned() },
        Split::NoClosing => SkillError::UnclosedFrontMatter { file: file_owned() },
    })?;
    if yaml.len() > MAX_SKILL_FRONT_MATTER_BYTES {
        return Err(SkillError::FrontMatterTooLong {
            file: file_owned(),
            bytes: yaml.len(),
        });
    }
    let fm: FrontMatter = serde_yaml_ng::from_str(yaml).map_err(|e| SkillError::BadYaml {
        file: file_owned(),
        message: e.to_string(),
    })?;
    let name = fm.name.trim().to_owned();
    if !is_skill_name(&name) {
        return Err(SkillError::BadName {
            file: file_owned(),
            name,
        });
    }
    if name != folder {
        return Err(SkillError::NameMismatch {
            file: file_owned(),
            name,
            folder: folder.to_owned(),
        });
    }
    let description = fm
        .description
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if description.is_empty() {
        return Err(SkillError::EmptyDescription { file: file_owned() });
    }
    let chars = description.chars().count();
    if chars > MAX_SKILL_DESCRIPTION_CHARS {
        return Err(SkillError::DescriptionTooLong {
            file: file_owned(),
            chars,
        });
    }
    let toolset = match fm.toolset.map(|t| t.trim().to_owned()) {
        None => None,
        Some(t) if t.is_empty() => None,
        Some(t) if is_set_name(&t) => Some(t),
        Some(t) => {
            return Err(SkillError::BadToolset {
                file: file_owned(),
                toolset: t,
            });
        }
    };
    Ok(Skill {
        name,
        description,
        toolset,
        body: body.trim().to_owned(),
        origin,
    })
}

/// `[a-z0-9-]+`, at most [`MAX_SKILL_NAME_CHARS`].
pub fn is_skill_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_SKILL_NAME_CHARS
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

enum Split {
    NoOpening,
    NoClosing,
}

/// Splits `---\nyaml\n---\nbody`; blank lines and a BOM before the opening
/// line are allowed, and so are CRLF line ends.
fn split_front_matter(text: &str) -> Result<(&str, &str), Split> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut offset = 0;
    let mut yaml_start = None;
    for line in text.split_inclusive('\n') {
        let end = offset + line.len();
        let trimmed = line.trim();
        match yaml_start {
            None if trimmed.is_empty() => {}
            None if trimmed == "---" => yaml_start = Some(end),
            None => return Err(Split::NoOpening),
            Some(start) if trimmed == "---" || trimmed == "..." => {
                return Ok((&text[start..offset], &text[end..]));
            }
            Some(_) => {}
        }
        offset = end;
    }
    Err(if yaml_start.is_some() {
        Split::NoClosing
    } else {
        Split::NoOpening
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Skill, SkillError> {
        parse_skill(text, "media", "x/media/SKILL.md", SkillOrigin::Builtin)
    }

    #[test]
    fn parses_front_matter_and_body() {
        let s = parse("\u{feff}\n---\r\nname: media\r\ndescription: >\r\n  films:\r\n  find, play\r\ntoolset: media\r\nlicense: MIT\r\n---\r\n# Steps\r\n1. enable\r\n")
            .unwrap();
        assert_eq!(s.name, "media");
        assert_eq!(s.description, "films: find, play");
        assert_eq!(s.toolset.as_deref(), Some("media"));
        assert_eq!(s.body, "# Steps\r\n1. enable");
    }

    #[test]
    fn toolset_is_optional_and_body_may_be_empty() {
        let s = parse("---\nname: media\ndescription: d\ntoolset: ''\n---\n").unwrap();
        assert_eq!(s.toolset, None);
        assert_eq!(s.body, "");
    }

    #[test]
    fn every_broken_file_names_itself_and_its_cause() {
        type Check = fn(&SkillError) -> bool;
        let cases: [(&str, Check); 8] = [
            ("no front matter", |e| {
                matches!(e, SkillError::NoFrontMatter { .. })
            }),
            ("---\nname: media\n", |e| {
                matches!(e, SkillError::UnclosedFrontMatter { .. })
            }),
            ("---\nname: [\n---\n", |e| {
                matches!(e, SkillError::BadYaml { .. })
            }),
            ("---\nname: media\n---\n", |e| {
                matches!(e, SkillError::BadYaml { .. })
            }),
            ("---\nname: Media\ndescription: d\n---\n", |e| {
                matches!(e, SkillError::BadName { .. })
            }),
            ("---\nname: films\ndescription: d\n---\n", |e| {
                matches!(e, SkillError::NameMismatch { .. })
            }),
            ("---\nname: media\ndescription: '  '\n---\n", |e| {
                matches!(e, SkillError::EmptyDescription { .. })
            }),
            (
                "---\nname: media\ndescription: d\ntoolset: Media Set\n---\n",
                |e| matches!(e, SkillError::BadToolset { .. }),
            ),
        ];
        for (text, is_expected) in cases {
            let err = parse(text).unwrap_err();
            assert!(is_expected(&err), "{text:?} gave {err}");
            assert_eq!(err.file(), "x/media/SKILL.md");
            assert!(err.to_string().starts_with("x/media/SKILL.md: "), "{err}");
        }
    }

    #[test]
    fn an_overlong_description_is_refused() {
        let long = "w ".repeat(MAX_SKILL_DESCRIPTION_CHARS);
        let err = parse(&format!("---\nname: media\ndescription: {long}\n---\n")).unwrap_err();
        assert!(
            matches!(err, SkillError::DescriptionTooLong { chars, .. } if chars > MAX_SKILL_DESCRIPTION_CHARS)
        );
    }

    #[test]
    fn an_overlong_front_matter_is_refused_before_the_yaml_parser_sees_it() {
        // Found with the `skill_md` fuzz target (issue 46): deep flow
        // nesting costs the YAML parser time in the square of its depth
        // (32 KiB: 3 s, 5 MB).
        let deep = format!("---\nname: {}\n---\n", "[".repeat(32 * 1024));
        let err = parse(&deep).unwrap_err();
        assert!(
            matches!(err, SkillError::FrontMatterTooLong { bytes, .. } if bytes > MAX_SKILL_FRONT_MATTER_BYTES),
            "{err}"
        );
        assert_eq!(err.file(), "x/media/SKILL.md");
        // A long front matter within the limit still reads.
        let pad = format!(
            "license: {}\n",
            "x".repeat(MAX_SKILL_FRONT_MATTER_BYTES - 100)
        );
        assert!(parse(&format!("---\nname: media\ndescription: d\n{pad}---\n")).is_ok());
    }

    #[test]
    fn skill_names_follow_the_convention() {
        assert!(is_skill_name("media-2"));
        assert!(!is_skill_name(""));
        assert!(!is_skill_name("a_b"));
        assert!(!is_skill_name(&"a".repeat(MAX_SKILL_NAME_CHARS + 1)));
    }
}
