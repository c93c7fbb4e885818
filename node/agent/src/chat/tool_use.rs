//! The tool-use set for scoring a model on the tool loop (issue 30 §6,
//! issue 43 §2): requests a person makes of the node's agent, each with the
//! tools that answer it — or none, where a plain answer is right — in
//! English and Russian, and the rates a turn is scored by (pure).
//!
//! - **format-valid**: each model reply of the turn is either plain text
//!   (no `TOOL_CALL` marker at all) or a call the parser reads whose name is
//!   a tool the prompt can show (a core tool or a registered set's tool) and
//!   whose arguments fit that tool's schema;
//! - **right tool**: a request that needs a tool reached one of its tools;
//! - **no-tool precision**: a request that needs none got no call.
//!
//! Cases come built in ([`builtin_cases`]) or from a JSONL file a person
//! writes ([`parse_cases`]: `{"request": "...", "expected": ["tool"],
//! "language": "en"}` a line). [`super::tool_use_run`] runs them against a
//! model; `porfiry model score` is the command.

use std::path::{Path, PathBuf};

use porfiry_skills::Language;
use porfiry_skills::Toolbox;
use porfiry_skills::session::parser::{MARKER, ToolCall, parse_line, strip_think};
use porfiry_skills::tools::args::bind;
use porfiry_skills::tools::core_tools::CoreTool;
use serde::{Deserialize, Serialize};

/// One request of the set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolUseCase {
    /// What the person says.
    pub request: String,
    /// Any of these tools answers it (a set's `enable_toolset|set` does not:
    /// the case asks for the tool that does the work); empty: the request
    /// needs no tool, a plain answer is right.
    pub expected: Vec<String>,
    /// The language it is asked in (the agent is built in it).
    pub language: Language,
}

impl ToolUseCase {
    /// A case from borrowed parts.
    pub fn new(request: &str, expected: &[&str], language: Language) -> Self {
        Self {
            request: request.to_owned(),
            expected: expected.iter().map(|t| (*t).to_owned()).collect(),
            language,
        }
    }

    /// Whether a tool answers it.
    pub fn needs_tool(&self) -> bool {
        !self.expected.is_empty()
    }
}

/// The English requests: time, show text, skills, toolset activation, media
/// search, details, play and control, notes, messages, diary, goals and
/// tasks; then requests no tool serves (greetings, general knowledge).
pub const EN_CASES: &[(&str, &[&str])] = &[
    ("What time is it now?", &["get_current_time"]),
    ("What's today's date?", &["get_current_time"]),
    ("Which time zone are you in?", &["get_current_time"]),
    ("Show the text 'Dinner at 7' on my screen.", &["show_text"]),
    ("Put 'Back in 5 minutes' on the screen.", &["show_text"]),
    (
        "How do I look up films with you? Read your skill for it.",
        &["read_skill"],
    ),
    (
        "Read your notes skill and tell me the steps.",
        &["read_skill"],
    ),
    ("Turn on the films toolset.", &["enable_toolset"]),
    ("Enable the diary tools.", &["enable_toolset"]),
    ("Find films about Lara Croft.", &["media_search"]),
    ("Search for the Matrix.", &["media_search"]),
    ("Is there a film with dinosaurs?", &["media_search"]),
    ("Tell me about the film tt0133093.", &["media_info"]),
    ("Play the film tt0133093.", &["media_play"]),
    ("Start tt1365519 please.", &["media_play"]),
    ("Pause the film.", &["media_control"]),
    ("Stop the playback.", &["media_control"]),
    ("Write a note: buy milk.", &["notes_add"]),
    (
        "Note for my friends: the party is on Saturday.",
        &["notes_add"],
    ),
    ("What new notes do I have?", &["notes_list"]),
    ("List my unread notes.", &["notes_list"]),
    ("Read note 3 in full.", &["notes_read"]),
    ("Send anna a message: I'm on my way.", &["messages_send"]),
    (
        "Tell bob privately that the keys are under the mat.",
        &["messages_send"],
    ),
    (
        "Write in the diary: slept badly, coffee helped.",
        &["diary_add"],
    ),
    (
        "Search my diary for coffee.",
        &["diary_search", "diary_list"],
    ),
    ("Set a goal: run a 10 km race by June.", &["goals_add"]),
    ("What are my goals?", &["goals_list"]),
    ("Add a task: buy running shoes.", &["tasks_add"]),
    ("Show my tasks.", &["tasks_list"]),
    ("Mark task 2 as done.", &["tasks_update"]),
    ("Delete note 5.", &["notes_delete"]),
    ("Hello!", &[]),
    ("Thanks, that's all for now.", &[]),
    ("What is the capital of France?", &[]),
    ("How do you say 'cat' in Spanish?", &[]),
    ("What is 12 times 7?", &[]),
    ("Tell me a short joke.", &[]),
    ("Who wrote Romeo and Juliet?", &[]),
    ("Good night!", &[]),
    ("Explain in one sentence what a noun is.", &[]),
];

/// The Russian requests, asked of the agent in Russian.
pub const RU_CASES: &[(&str, &[&str])] = &[
    ("Который сейчас час?", &["get_current_time"]),
    ("Какое сегодня число?", &["get_current_time"]),
    ("Покажи на экране текст «Ужин в 7».", &["show_text"]),
    ("Найди фильмы про Лару Крофт.", &["media_search"]),
    ("Включи фильм tt0133093.", &["media_play"]),
    ("Поставь фильм на паузу.", &["media_control"]),
    ("Запиши заметку: купить молоко.", &["notes_add"]),
    ("Какие у меня новые заметки?", &["notes_list"]),
    ("Отправь anna сообщение: я уже еду.", &["messages_send"]),
    ("Запиши в дневник: плохо спал, кофе помог.", &["diary_add"]),
    ("Поставь цель: пробежать 10 км к июню.", &["goals_add"]),
    ("Покажи мои задачи.", &["tasks_list"]),
    ("Привет!", &[]),
    ("Спасибо, пока всё.", &[]),
    ("Какая столица Франции?", &[]),
    ("Сколько будет 12 умножить на 7?", &[]),
    ("Расскажи короткую шутку.", &[]),
    ("Кто написал «Войну и мир»?", &[]),
    ("Спокойной ночи!", &[]),
    (
        "Объясни в одном предложении, что такое существительное.",
        &[],
    ),
];

/// The built-in set: every English case, then every Russian one; with a
/// language, that language's only.
pub fn builtin_cases(language: Option<Language>) -> Vec<ToolUseCase> {
    [(Language::En, EN_CASES), (Language::Ru, RU_CASES)]
        .into_iter()
        .filter(|(l, _)| language.is_none_or(|want| want == *l))
        .flat_map(|(l, cases)| cases.iter().map(move |(r, e)| ToolUseCase::new(r, e, l)))
        .collect()
}

/// Longest cases file read: thousands of requests are a few hundred KB;
/// more is not a cases file, and a scoring run over it would take days.
pub const MAX_CASES_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// Why a cases file cannot be used: one line naming the file (and line).
#[derive(Debug, thiserror::Error)]
pub enum CasesError {
    /// The file cannot be read.
    #[error("cases file {path}: {detail}")]
    File {
        /// The file.
        path: PathBuf,
        /// What failed.
        detail: String,
    },
    /// One line is not a case.
    #[error("cases file {path} line {line}: {detail}")]
    Line {
        /// The file.
        path: PathBuf,
        /// Its 1-based line number.
        line: usize,
        /// What is wrong.
        detail: String,
    },
}

/// One line of a cases file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseLine {
    request: String,
    #[serde(default)]
    expected: Vec<String>,
    language: Option<Language>,
}

/// Reads a cases file: one JSON object a line (blank lines and lines
/// starting with `#` skipped); a case without `language` is in `default`;
/// every expected tool must be one `known` accepts.
pub fn read_cases(
    path: &Path,
    default: Language,
    known: impl Fn(&str) -> bool,
) -> Result<Vec<ToolUseCase>, CasesError> {
    let file_error = |detail: String| CasesError::File {
        path: path.to_owned(),
        detail,
    };
    let meta = std::fs::metadata(path).map_err(|e| file_error(e.to_string()))?;
    if meta.len() > MAX_CASES_FILE_BYTES {
        return Err(file_error(format!(
            "{} bytes; a cases file is at most {MAX_CASES_FILE_BYTES}",
            meta.len()
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|e| file_error(e.to_string()))?;
    parse_cases(&text, path, default, known)
}

/// [`read_cases`] over text already read from `path`.
pub fn parse_cases(
    text: &str,
    path: &Path,
    default: Language,
    known: impl Fn(&str) -> bool,
) -> Result<Vec<ToolUseCase>, CasesError> {
    let mut cases = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let bad = |detail: String| CasesError::Line {
            path: path.to_owned(),
            line: i + 1,
            detail,
        };
        let case: CaseLine = serde_json::from_str(trimmed).map_err(|e| bad(e.to_string()))?;
        if case.request.trim().is_empty() {
            return Err(bad("the request is empty".into()));
        }
        if let Some(tool) = case.expected.iter().find(|t| !known(t)) {
            return Err(bad(format!("unknown tool name {tool:?}")));
        }
        cases.push(ToolUseCase {
            request: case.request,
            expected: case.expected,
            language: case.language.unwrap_or(default),
        });
    }
    if cases.is_empty() {
        return Err(CasesError::File {
            path: path.to_owned(),
            detail: "no cases in it".into(),
        });
    }
    Ok(cases)
}

/// Whether `name` is a tool of `toolbox`: a core tool or a registered set's.
pub fn is_known_tool(toolbox: &Toolbox, name: &str) -> bool {
    CoreTool::from_name(name).is_some() || toolbox.toolsets().set_of(name).is_some()
}

/// How one model reply reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyForm {
    /// Plain text: no marker anywhere.
    Text,
    /// A call the parser reads, to a tool the prompt can show, with
    /// arguments that fit its schema.
    Call(String),
    /// A marker the parser cannot read, a call to no such tool, or one
    /// whose arguments do not fit.
    Garbled,
}

/// Reads one model reply against `toolbox` (what the prompt can show).
pub fn reply_form(toolbox: &Toolbox, reply: &str) -> ReplyForm {
    let text = strip_think(reply);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.to_ascii_lowercase().contains(MARKER))
        .collect();
    let Some(first) = lines.first() else {
        return ReplyForm::Text;
    };
    match parse_line(first) {
        Some(call) if fits(toolbox, &call) => ReplyForm::Call(call.name),
        _ => ReplyForm::Garbled,
    }
}

/// Whether `call` names a core tool or a registered set's tool and its
/// arguments bind to that tool's schema.
fn fits(toolbox: &Toolbox, call: &ToolCall) -> bool {
    match CoreTool::from_name(&call.name) {
        Some(core) => bind(&core.spec(toolbox.language()).args, &call.args).is_ok(),
        None => toolbox.prepare(&call.name, &call.args).is_ok(),
    }
}

/// The score of one turn.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TurnScore {
    /// Model replies in the turn.
    pub replies: usize,
    /// Of them, format-valid.
    pub valid: usize,
    /// The tools the turn called, in order (format-valid calls only).
    pub called: Vec<String>,
    /// The turn called an expected tool.
    pub right_tool: bool,
    /// The request needs no tool and no reply tried a call (a garbled
    /// marker counts as a try).
    pub no_tool_ok: bool,
}

impl TurnScore {
    /// Whether the turn did what its case asks: reached a tool of a request
    /// that needs one, called none for a request that needs none.
    pub fn right(&self, case: &ToolUseCase) -> bool {
        if case.needs_tool() {
            self.right_tool
        } else {
            self.no_tool_ok
        }
    }
}

/// Scores a turn from its model replies, in order.
pub fn score(toolbox: &Toolbox, case: &ToolUseCase, replies: &[String]) -> TurnScore {
    let forms: Vec<ReplyForm> = replies.iter().map(|r| reply_form(toolbox, r)).collect();
    let called: Vec<String> = forms
        .iter()
        .filter_map(|f| match f {
            ReplyForm::Call(name) => Some(name.clone()),
            _ => None,
        })
        .collect();
    TurnScore {
        replies: forms.len(),
        valid: forms.iter().filter(|f| **f != ReplyForm::Garbled).count(),
        right_tool: called.iter().any(|name| case.expected.contains(name)),
        no_tool_ok: !case.needs_tool() && forms.iter().all(|f| *f == ReplyForm::Text),
        called,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use porfiry_skills::{LoopConfig, SkillRegistry};
    use porfiry_toolsets::{ToolsetOptions, node_toolsets};

    fn toolbox() -> Toolbox {
        let sets = node_toolsets(&ToolsetOptions::default()).unwrap();
        Toolbox::new(sets, SkillRegistry::new(), LoopConfig::default())
    }

    #[test]
    fn the_set_is_large_enough_and_names_only_real_tools_of_the_api() {
        let all = builtin_cases(None);
        let tool_cases = all.iter().filter(|c| c.needs_tool()).count();
        assert!(tool_cases >= 30, "{tool_cases}");
        let no_tool = |l: Language| {
            all.iter()
                .filter(|c| c.language == l && !c.needs_tool())
                .count()
        };
        assert!(no_tool(Language::En) >= 8 && no_tool(Language::Ru) >= 8);
        let ru = builtin_cases(Some(Language::Ru));
        assert!(ru.len() >= 8 && ru.iter().all(|c| c.language == Language::Ru));
        assert_eq!(ru.len(), RU_CASES.len());
        let known = [
            "get_current_time",
            "show_text",
            "read_skill",
            "enable_toolset",
            "media_search",
            "media_info",
            "media_play",
            "media_control",
            "notes_add",
            "notes_list",
            "notes_read",
            "notes_delete",
            "messages_send",
            "diary_add",
            "diary_search",
            "diary_list",
            "goals_add",
            "goals_list",
            "tasks_add",
            "tasks_list",
            "tasks_update",
        ];
        let tb = toolbox();
        for case in &all {
            for tool in &case.expected {
                assert!(known.contains(&tool.as_str()), "{tool} in {case:?}");
            }
        }
        // The API's sets are known to its toolbox; a made-up name is not.
        assert!(is_known_tool(&tb, "media_search") && is_known_tool(&tb, "read_skill"));
        assert!(!is_known_tool(&tb, "fly_to_mars"));
    }

    #[test]
    fn replies_read_as_text_a_known_call_or_garbled() {
        let tb = toolbox();
        assert_eq!(reply_form(&tb, "It is noon."), ReplyForm::Text);
        assert_eq!(
            reply_form(&tb, "<think>hm</think>TOOL_CALL: media_search|matrix"),
            ReplyForm::Call("media_search".into())
        );
        assert_eq!(
            reply_form(&tb, "Sure! tool_call: get_current_time"),
            ReplyForm::Call("get_current_time".into())
        );
        assert_eq!(
            reply_form(&tb, "TOOL_CALL: fly_to_mars|now"),
            ReplyForm::Garbled
        );
        assert_eq!(reply_form(&tb, "TOOL_CALL:"), ReplyForm::Garbled);
        assert_eq!(
            reply_form(&tb, "TOOL_CALL: media_search"),
            ReplyForm::Garbled,
            "a required argument is missing"
        );
        assert_eq!(reply_form(&tb, "TOOL_CALL: read_skill"), ReplyForm::Garbled);
        assert_eq!(
            reply_form(&tb, "TOOL_CALL: enable_toolset|media"),
            ReplyForm::Call("enable_toolset".into())
        );
        assert_eq!(
            reply_form(&tb, "TOOL_CALL {\"name\": 1}"),
            ReplyForm::Garbled
        );
    }

    #[test]
    fn a_turn_scores_its_valid_replies_and_whether_it_reached_the_tool() {
        let tb = toolbox();
        let case = builtin_cases(None).swap_remove(9); // "Find films about Lara Croft."
        assert_eq!(case.expected, ["media_search"]);
        let replies = [
            "TOOL_CALL: enable_toolset|media".to_owned(),
            "TOOL_CALL: media_search|lara croft".to_owned(),
            "Found two.".to_owned(),
        ];
        let scored = score(&tb, &case, &replies);
        assert_eq!(
            scored,
            TurnScore {
                replies: 3,
                valid: 3,
                called: vec!["enable_toolset".into(), "media_search".into()],
                right_tool: true,
                no_tool_ok: false,
            }
        );
        assert!(scored.right(&case));
        let invented = ["Lara Croft: Tomb Raider (2001), TOOL_CALL: search films".to_owned()];
        let scored = score(&tb, &case, &invented);
        assert_eq!((scored.valid, scored.right_tool), (0, false));
        assert!(!scored.right(&case));
    }

    #[test]
    fn a_request_that_needs_no_tool_is_right_only_without_any_call() {
        let tb = toolbox();
        let hello = ToolUseCase::new("Hello!", &[], Language::En);
        let plain = score(&tb, &hello, &["Hi there!".to_owned()]);
        assert!(plain.no_tool_ok && plain.right(&hello) && !plain.right_tool);
        let called = score(&tb, &hello, &["TOOL_CALL: get_current_time".to_owned()]);
        assert!(!called.right(&hello));
        let garbled = score(&tb, &hello, &["TOOL_CALL: wave|hand".to_owned()]);
        assert!(!garbled.right(&hello), "a garbled try is a call too");
    }

    #[test]
    fn a_cases_file_reads_line_by_line_and_names_the_file_and_line_of_an_error() {
        let tb = toolbox();
        let known = |t: &str| is_known_tool(&tb, t);
        let path = Path::new("/cases/mine.jsonl");
        let text = "# mine\n{\"request\": \"Find Alien\", \"expected\": [\"media_search\"]}\n\n\
                    {\"request\": \"Привет\", \"language\": \"ru\"}\n";
        let cases = parse_cases(text, path, Language::En, known).unwrap();
        assert_eq!(
            cases,
            [
                ToolUseCase::new("Find Alien", &["media_search"], Language::En),
                ToolUseCase::new("Привет", &[], Language::Ru),
            ]
        );
        let e = parse_cases(
            "{\"request\": \"a\"}\nnot json\n",
            path,
            Language::En,
            known,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("cases file /cases/mine.jsonl line 2: "),
            "{e}"
        );
        let e = parse_cases(
            "{\"request\": \"a\", \"expected\": [\"fly_to_mars\"]}",
            path,
            Language::En,
            known,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("line 1") && e.contains("unknown tool name \"fly_to_mars\""),
            "{e}"
        );
        let e = parse_cases(
            "{\"request\": \"a\", \"tools\": []}",
            path,
            Language::En,
            known,
        )
        .unwrap_err();
        assert!(e.to_string().contains("unknown field"), "{e}");
        let e = parse_cases("# nothing\n", path, Language::En, known).unwrap_err();
        assert!(e.to_string().contains("no cases"), "{e}");
        let e = read_cases(Path::new("/nonexistent/c.jsonl"), Language::En, known).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/c.jsonl"), "{e}");
    }
}
