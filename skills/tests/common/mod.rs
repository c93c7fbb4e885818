//! Shared fixtures for the integration tests: a film toolset named `media`
//! ([`films`]) with its catalogue, a second test toolset with several arguments, a toolbox, a manual clock, and a
//! scripted model that records every request.
#![allow(dead_code)]

pub mod films;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use porfiry_skills::{
    ArgSpec, Args, BoxFuture, Completion, Language, Llm, LlmError, LoopConfig, ManualClock,
    ModelRequest, Skill, SkillOrigin, SkillRegistry, SkillRepository, ToolOutput, ToolSpec,
    Toolbox, Toolset, ToolsetRegistry, ZonedTime,
};
use time::macros::datetime;

/// One minute in ms.
pub const MIN: i64 = 60_000;

use self::films::{Film, Films};

/// A small film catalogue.
pub fn films() -> Vec<Film> {
    let film = |id: &str, title: &str, year: Option<i32>, description: &str| Film {
        id: id.into(),
        title: title.into(),
        year,
        description: description.into(),
    };
    vec![
        film(
            "tt0146316",
            "Lara Croft: Tomb Raider",
            Some(2001),
            "An archaeologist races rivals for an ancient artifact.",
        ),
        film(
            "tt0325703",
            "Lara Croft Tomb Raider: The Cradle of Life",
            Some(2003),
            "Lara hunts Pandora's box.",
        ),
        film(
            "tt1365519",
            "Tomb Raider",
            Some(2018),
            "Young Lara Croft searches for her missing father.",
        ),
        film(
            "tt0133093",
            "The Matrix",
            Some(1999),
            "A hacker learns the world is a simulation.",
        ),
        film("tt0000001", "Untitled Home Video", None, ""),
    ]
}

/// A toolset with several argument kinds, to test routing and binding.
pub struct Notes {
    tools: Vec<ToolSpec>,
}

impl Notes {
    pub fn new() -> Self {
        Self {
            tools: vec![
                ToolSpec::new(
                    "notes_add",
                    "add a note",
                    vec![ArgSpec::word("topic"), ArgSpec::text("text")],
                ),
                ToolSpec::new("notes_list", "list notes", vec![]),
                ToolSpec::new(
                    "notes_mark",
                    "mark a note",
                    vec![
                        ArgSpec::int("n"),
                        ArgSpec::choice("state", &["done", "open"]).optional(),
                    ],
                ),
            ],
        }
    }
}

impl Toolset for Notes {
    fn name(&self) -> &str {
        "notes"
    }
    fn summary(&self) -> &str {
        "notes: add, list, mark"
    }
    fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }
    fn call(&self, tool: &str, args: &Args) -> ToolOutput {
        match tool {
            "notes_add" => ToolOutput::ok(format!(
                "added [{}] {}",
                args.text("topic"),
                args.text("text")
            )),
            "notes_list" => ToolOutput::ok("1. buy milk"),
            "notes_mark" => ToolOutput::ok(format!(
                "note {} is {}",
                args.int("n").unwrap_or(0),
                args.get("state").unwrap_or("done")
            )),
            _ => ToolOutput::failed("no such tool"),
        }
    }
}

/// A user skill tied to the notes set, and one tied to none.
pub fn extra_skills() -> Vec<Skill> {
    let skill = |name: &str, description: &str, toolset: Option<&str>| Skill {
        name: name.into(),
        description: description.into(),
        toolset: toolset.map(Into::into),
        body: format!("# {name}\nsteps for {name}"),
        origin: SkillOrigin::User(format!("/data/skills/{name}/SKILL.md").into()),
    };
    vec![
        skill("notes", "notes — call enable_toolset|notes", Some("notes")),
        skill("time-zones", "convert times between zones", None),
    ]
}

/// Toolsets media + notes, built-in skills + extra skills.
pub fn toolbox_with(config: LoopConfig) -> Arc<Toolbox> {
    let mut sets = ToolsetRegistry::new();
    sets.register(Films::new(films(), config.language)).unwrap();
    sets.register(Notes::new()).unwrap();
    let load = SkillRepository::new(config.language).load();
    assert!(load.skipped.is_empty());
    let mut skills = load.registry;
    for s in extra_skills() {
        skills.insert(s);
    }
    Arc::new(Toolbox::new(sets, skills, config))
}

/// [`toolbox_with`] default settings (English, 10 min, 8 rounds).
pub fn toolbox() -> Arc<Toolbox> {
    toolbox_with(LoopConfig::default())
}

/// A toolbox with only the media set and the built-in skills: the realistic
/// phone setup.
pub fn media_only(language: Language) -> Arc<Toolbox> {
    let mut sets = ToolsetRegistry::new();
    sets.register(Films::new(films(), language)).unwrap();
    let skills = SkillRepository::new(language).load().registry;
    Arc::new(Toolbox::new(
        sets,
        skills,
        LoopConfig::in_language(language),
    ))
}

/// An empty skill registry.
pub fn no_skills() -> SkillRegistry {
    SkillRegistry::new()
}

/// A clock at Saturday 2026-08-22 14:05 in Moscow.
pub fn clock() -> ManualClock {
    ManualClock::new(ZonedTime::new(
        datetime!(2026-08-22 14:05:00 +03:00),
        "Europe/Moscow",
    ))
}

/// A model that answers from a script and records every request; clones
/// share the script and the record.
#[derive(Default, Clone)]
pub struct ScriptedLlm {
    replies: Arc<Mutex<VecDeque<Result<String, LlmError>>>>,
    requests: Arc<Mutex<Vec<ModelRequest>>>,
}

impl ScriptedLlm {
    pub fn new<S: AsRef<str>>(replies: &[S]) -> Self {
        let llm = Self::default();
        for r in replies {
            llm.push(Ok(r.as_ref().to_owned()));
        }
        llm
    }

    pub fn push(&self, reply: Result<String, LlmError>) {
        self.replies.lock().unwrap().push_back(reply);
    }

    pub fn requests(&self) -> Vec<ModelRequest> {
        self.requests.lock().unwrap().clone()
    }
}

impl Llm for ScriptedLlm {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Completion, LlmError>> {
        self.requests.lock().unwrap().push(request.clone());
        let reply = self
            .replies
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| Err(LlmError::Other("script exhausted".into())));
        Box::pin(async move { reply.map(Completion::text) })
    }
}
