//! Loading skills from real folders on disk: merge with built-ins, the user
//! wins a name clash, every broken file is skipped with a warning naming it.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use porfiry_skills::limits::MAX_SKILL_FILE_BYTES;
use porfiry_skills::{Language, SkillError, SkillOrigin, SkillRepository};
use tracing_subscriber::fmt::MakeWriter;

fn write_skill(dir: &Path, folder: &str, file: &str, text: &[u8]) {
    let folder = dir.join(folder);
    fs::create_dir_all(&folder).unwrap();
    fs::write(folder.join(file), text).unwrap();
}

fn good(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\nbody of {name}\n")
}

/// Collects log output in memory.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Captured {
    type Writer = Captured;
    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

fn load_logging(repo: &SkillRepository) -> (porfiry_skills::SkillLoad, String) {
    let logs = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(logs.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::WARN)
        .finish();
    let load = tracing::subscriber::with_default(subscriber, || repo.load());
    let text = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    (load, text)
}

#[test]
fn user_skills_merge_with_builtins_and_win_a_clash() {
    let dir = tempfile::tempdir().unwrap();
    write_skill(
        dir.path(),
        "media",
        "SKILL.md",
        good("media", "my own film recipe").as_bytes(),
    );
    write_skill(
        dir.path(),
        "cooking",
        "SKILL.md",
        good("cooking", "recipes for dinner").as_bytes(),
    );
    fs::write(dir.path().join("README.txt"), "not a skill").unwrap();
    let load = SkillRepository::new(Language::En)
        .with_user_dir(dir.path())
        .load();
    assert!(load.skipped.is_empty(), "{:?}", load.skipped);
    assert_eq!(
        load.registry.names().collect::<Vec<_>>(),
        [
            "cooking", "diary", "goals", "media", "messages", "notes", "tasks"
        ]
    );
    let media = load.registry.get("media").unwrap();
    assert_eq!(media.description, "my own film recipe");
    assert_eq!(media.body, "body of media");
    assert_eq!(
        media.origin,
        SkillOrigin::User(dir.path().join("media").join("SKILL.md"))
    );
    assert_eq!(media.toolset, None);
}

#[test]
fn broken_front_matter_is_skipped_with_a_warning_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write_skill(
        dir.path(),
        "broken",
        "SKILL.md",
        b"---\nname: broken\ndescription: [unclosed\n---\nbody\n",
    );
    write_skill(
        dir.path(),
        "fine",
        "SKILL.md",
        good("fine", "works").as_bytes(),
    );
    let repo = SkillRepository::new(Language::En).with_user_dir(dir.path());
    let (load, logs) = load_logging(&repo);
    assert!(load.registry.get("fine").is_some(), "the others still load");
    assert!(load.registry.get("broken").is_none());
    assert_eq!(load.skipped.len(), 1);
    let broken_file = dir
        .path()
        .join("broken")
        .join("SKILL.md")
        .display()
        .to_string();
    assert!(matches!(&load.skipped[0], SkillError::BadYaml { file, .. } if *file == broken_file));
    assert!(logs.contains("WARN"), "{logs}");
    assert!(
        logs.contains(&broken_file),
        "the warning names the file: {logs}"
    );
    assert!(
        fs::metadata(&broken_file).is_ok(),
        "the broken file is left as it was"
    );
}

#[test]
fn every_kind_of_bad_folder_is_skipped_for_its_own_reason() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    fs::create_dir_all(p.join("empty")).unwrap();
    write_skill(
        p,
        "huge",
        "SKILL.md",
        &vec![b'a'; MAX_SKILL_FILE_BYTES as usize + 1],
    );
    write_skill(p, "binary", "SKILL.md", &[0xff, 0xfe, 0x00, 0x80]);
    write_skill(p, "renamed", "SKILL.md", good("other", "x").as_bytes());
    fs::create_dir_all(p.join("isdir").join("SKILL.md")).unwrap();
    let (load, logs) = load_logging(
        &SkillRepository::new(Language::En)
            .without_builtin()
            .with_user_dir(p),
    );
    assert!(load.registry.is_empty());
    let kinds: Vec<&str> = load
        .skipped
        .iter()
        .map(|e| match e {
            SkillError::NotUtf8 { .. } => "utf8",
            SkillError::Missing { .. } => "missing",
            SkillError::TooLarge { .. } => "large",
            SkillError::Io { .. } => "io",
            SkillError::NameMismatch { .. } => "mismatch",
            other => panic!("unexpected {other}"),
        })
        .collect();
    assert_eq!(
        kinds,
        ["utf8", "missing", "large", "io", "mismatch"],
        "folder-name order"
    );
    for e in &load.skipped {
        assert!(logs.contains(e.file()), "{} not in the log", e.file());
    }
}

#[test]
fn a_file_of_exactly_the_limit_loads() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = good("big", "a big skill");
    text.push_str(&"x".repeat(MAX_SKILL_FILE_BYTES as usize - text.len()));
    write_skill(dir.path(), "big", "SKILL.md", text.as_bytes());
    let load = SkillRepository::new(Language::En)
        .with_user_dir(dir.path())
        .load();
    assert!(load.skipped.is_empty(), "{:?}", load.skipped);
    assert!(load.registry.get("big").is_some());
}

#[test]
fn a_missing_user_folder_is_no_error_but_a_file_in_its_place_is() {
    let dir = tempfile::tempdir().unwrap();
    let load = SkillRepository::new(Language::En)
        .with_user_dir(dir.path().join("nope"))
        .load();
    assert!(load.skipped.is_empty());
    assert_eq!(
        load.registry.len(),
        porfiry_skills::skills::repository::BUILTIN_SKILLS.len(),
        "built-ins only"
    );
    let file = dir.path().join("skills");
    fs::write(&file, "oops").unwrap();
    let load = SkillRepository::new(Language::En)
        .with_user_dir(&file)
        .load();
    assert!(
        matches!(&load.skipped[..], [SkillError::Io { file: f, .. }] if *f == file.display().to_string())
    );
    assert_eq!(
        load.registry.len(),
        porfiry_skills::skills::repository::BUILTIN_SKILLS.len()
    );
}

#[test]
fn russian_prefers_skill_ru_md_and_falls_back_to_skill_md() {
    let dir = tempfile::tempdir().unwrap();
    write_skill(
        dir.path(),
        "both",
        "SKILL.md",
        good("both", "english").as_bytes(),
    );
    write_skill(
        dir.path(),
        "both",
        "SKILL.ru.md",
        good("both", "русский").as_bytes(),
    );
    write_skill(
        dir.path(),
        "only-en",
        "SKILL.md",
        good("only-en", "english only").as_bytes(),
    );
    let ru = SkillRepository::new(Language::Ru)
        .with_user_dir(dir.path())
        .load()
        .registry;
    assert_eq!(ru.get("both").unwrap().description, "русский");
    assert_eq!(ru.get("only-en").unwrap().description, "english only");
    let en = SkillRepository::new(Language::En)
        .with_user_dir(dir.path())
        .load()
        .registry;
    assert_eq!(en.get("both").unwrap().description, "english");
}

/// A skill that points at a prompt heading names it as the prompt writes it:
/// the Russian skills said «Активные тулсеты» where the prompt says
/// «Активные наборы» (issue 42), and a small model matches words literally.
#[test]
fn skills_name_the_active_heading_the_prompt_uses() {
    for lang in [Language::En, Language::Ru] {
        let heading = porfiry_skills::texts::active_heading(lang, "x");
        let heading = heading.split(':').next().unwrap();
        let (open, close, word) = match lang {
            Language::En => ('"', '"', "Active"),
            Language::Ru => ('«', '»', "Активные"),
        };
        let pattern = format!("{open}{word}");
        let load = SkillRepository::new(lang).load();
        for skill in load.registry.iter() {
            for (at, _) in skill.body.match_indices(&pattern) {
                let rest = &skill.body[at + open.len_utf8()..];
                let named = rest.split(close).next().unwrap();
                assert_eq!(named, heading, "skill {} ({lang})", skill.name);
            }
        }
    }
}
