//! Command extraction from a cognitive-core reply (seed 003 §4): the
//! `TOOL_CALL: tool|args` lines of the chat loop, and the HMP commands block
//! `# Команды:` / `# Commands:` … `# Конец команд` / `# End of commands`
//! holding JSON objects `{cmd_id, type, args, description}` where `type` is a
//! tool name (`diary_add`) and `args` bind by name.
//!
//! Forgiving of what small models write: a missing closing line (the block
//! runs to the end of the reply, or to the closing fence of a code fence
//! opened in it), code fences inside or around the block,
//! one object per line, objects spanning lines, a JSON array of objects,
//! extra keys such as the seed's `target_llm` (kept into the arguments), and
//! an explicit fenced JSON block of command objects without the heading.
//! Malformed JSON never fails the reply: it becomes a [`CommandProblem`]
//! with an English message for `process_log.result`, and the rest of the
//! reply still counts. Nothing here panics on any input (property-tested).

use serde_json::{Map, Value};

use crate::session::parser::{parse_line, strip_think};

/// Commands kept from one reply. A tick runs each command through
/// validation and the registry, and a small model that writes more than a
/// dozen commands in one reply is looping, not planning; 16 leaves room for
/// a real batch (read three records, add two, link them) and bounds a tick.
pub const MAX_COMMANDS_PER_REPLY: usize = 16;

/// Problems recorded for one reply; past this the reply is garbage and
/// one more line says so (each problem becomes a `process_log` row).
pub const MAX_PROBLEMS_PER_REPLY: usize = 8;

/// A problem's snippet of the offending text, in characters: enough to
/// recognise the command, short enough for a `process_log` row.
pub const MAX_PROBLEM_SNIPPET_CHARS: usize = 200;

/// One command the model asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    /// The model's id for the command (`cmd_id`), when it gave one.
    pub cmd_id: Option<String>,
    /// The tool name, lower case (`diary_add`).
    pub tool: String,
    /// The arguments as written.
    pub args: CommandArgs,
    /// The model's description of the command, when it gave one.
    pub description: Option<String>,
}

/// A command's arguments, as the model wrote them.
#[derive(Debug, Clone, PartialEq)]
pub enum CommandArgs {
    /// The raw text after the first `|` of a `TOOL_CALL` line (`"a|b"`), or
    /// a string / array `args` of a JSON command (array items joined by `|`):
    /// bound positionally with [`crate::bind`].
    Line(String),
    /// Named arguments of a JSON command (its `args` object plus any extra
    /// keys such as `target_llm`): bound with [`crate::bind_json`].
    Json(Map<String, Value>),
}

/// Something in the reply that looked like a command but could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandProblem {
    /// What was wrong, in English (stored in `process_log.result`).
    pub what: String,
    /// The start of the offending text, whitespace collapsed, at most
    /// [`MAX_PROBLEM_SNIPPET_CHARS`] characters.
    pub snippet: String,
}

/// Everything extracted from one reply, in reply order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extracted {
    /// The commands, at most [`MAX_COMMANDS_PER_REPLY`].
    pub commands: Vec<Command>,
    /// What could not be read, at most [`MAX_PROBLEMS_PER_REPLY`] + 1.
    pub problems: Vec<CommandProblem>,
}

/// Extracts the commands of a reply (see the module doc for the forms).
pub fn extract_commands(reply: &str) -> Extracted {
    let text = strip_think(reply);
    let mut out = Collector::default();
    let mut state = State::Outside;
    let mut chunk = String::new();
    for line in text.lines() {
        if let Some(rest) = block_start(line) {
            flush(&mut state, &mut chunk, &mut out);
            state = State::Block { fenced: false };
            chunk.push_str(rest);
            chunk.push('\n');
            continue;
        }
        match state {
            State::Outside => {
                if is_fence(line) {
                    state = State::Fence;
                } else if let Some(call) = parse_line(line) {
                    out.push_call(call.name, call.args);
                }
            }
            State::Fence => {
                if is_fence(line) {
                    flush(&mut state, &mut chunk, &mut out);
                } else {
                    chunk.push_str(line);
                    chunk.push('\n');
                }
            }
            State::Block { fenced } => {
                // The closing fence of a fenced block ends it as the closing
                // line would (seed: "or the explicit end of the JSON block").
                if is_block_end(line) || (fenced && is_fence(line)) {
                    flush(&mut state, &mut chunk, &mut out);
                } else {
                    if is_fence(line) {
                        state = State::Block { fenced: true };
                    }
                    chunk.push_str(line);
                    chunk.push('\n');
                }
            }
        }
    }
    // A block without its closing line runs to the end of the reply.
    flush(&mut state, &mut chunk, &mut out);
    out.finish()
}

/// Where the line loop is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Plain text: only `TOOL_CALL` lines count.
    Outside,
    /// Inside a code fence outside a commands block: command objects (with
    /// a `type`) and `TOOL_CALL` lines count, other JSON is not ours.
    Fence,
    /// Inside a commands block: every piece must be a command. `fenced`:
    /// a code fence opened inside it, so its closing fence ends the block.
    Block {
        /// A fence is open.
        fenced: bool,
    },
}

/// Scans what a fence or block gathered and returns to [`State::Outside`].
fn flush(state: &mut State, chunk: &mut String, out: &mut Collector) {
    match *state {
        State::Outside => {}
        State::Fence => scan(chunk, false, out),
        State::Block { .. } => scan(chunk, true, out),
    }
    chunk.clear();
    *state = State::Outside;
}

/// `# Commands:` / `# Команды:` (any number of `#`, bold, any case): the
/// text after the colon on the same line, when the line opens a block.
fn block_start(line: &str) -> Option<&str> {
    let t = line.trim();
    let hashed = t.starts_with('#');
    let t = t.trim_start_matches(['#', '*', ' ', '\t']);
    for word in ["commands", "команды"] {
        let Some(head) = t.get(..word.len()) else {
            continue;
        };
        if !head.to_lowercase().eq(word) {
            continue;
        }
        let rest = t[word.len()..].trim_start_matches(['*', ' ']);
        if let Some(after) = rest.strip_prefix(':') {
            return Some(after.trim_start_matches(['*', ' ']));
        }
        if hashed && rest.trim().is_empty() {
            return Some("");
        }
    }
    None
}

/// `# End of commands` / `# Конец команд` (with or without `#`, bold, a
/// trailing period).
fn is_block_end(line: &str) -> bool {
    let t = line
        .trim()
        .trim_matches(['#', '*', ' ', '\t', '.', ':', '`'])
        .to_lowercase();
    matches!(
        t.as_str(),
        "end of commands" | "end commands" | "конец команд"
    )
}

/// A code-fence line: ```` ``` ```` with at most a language word
/// (```` ```json ````); a line with more after the backticks
/// (```` ```TOOL_CALL: diary_list``` ````) is text, not a fence.
fn is_fence(line: &str) -> bool {
    line.trim().strip_prefix("```").is_some_and(|rest| {
        rest.chars()
            .all(|c| c == '`' || c == '-' || c == '_' || c.is_ascii_alphanumeric())
    })
}

/// Reads a fence's or block's text: JSON objects and arrays, `TOOL_CALL`
/// lines, fence lines (skipped). `strict` (a commands block): anything
/// else is a problem; otherwise (a fence) only command-looking JSON counts.
fn scan(text: &str, strict: bool, out: &mut Collector) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() && !out.full() {
        match bytes[i] {
            b' ' | b'\t' | b'\r' | b'\n' | b',' => i += 1,
            b'{' | b'[' => match json_end(bytes, i) {
                Some(end) => {
                    read_json(&text[i..end], strict, out);
                    i = end;
                }
                None => {
                    let end = line_end(bytes, i);
                    if strict || text[i..].contains("\"type\"") {
                        out.problem(
                            "a JSON object in the commands block is not closed",
                            &text[i..],
                        );
                    }
                    i = end;
                }
            },
            _ => {
                let end = line_end(bytes, i);
                let line = &text[i..end];
                if let Some(call) = parse_line(line) {
                    out.push_call(call.name, call.args);
                } else if strict && !is_fence(line) && line.chars().any(char::is_alphanumeric) {
                    out.problem(
                        "text in the commands block is neither a JSON command object nor a TOOL_CALL line",
                        line,
                    );
                }
                i = end;
            }
        }
    }
}

/// The index after the end of the line holding `from`.
fn line_end(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |p| from + p + 1)
}

/// The index just past the bracket closing the `{` or `[` at `start`,
/// skipping brackets inside strings; `None` when it never closes. Linear.
fn json_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (offset, &b) in bytes[start..].iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(start + offset + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// One balanced JSON text: an object, or an array of objects.
fn read_json(raw: &str, strict: bool, out: &mut Collector) {
    let value: Value = match serde_json::from_str(raw) {
        Ok(value) => value,
        Err(e) => {
            if strict || raw.contains("\"type\"") {
                out.problem(&format!("malformed JSON in the commands block: {e}"), raw);
            }
            return;
        }
    };
    match value {
        Value::Object(object) => read_object(object, raw, strict, out),
        Value::Array(items) => {
            for item in items {
                match item {
                    Value::Object(object) => read_object(object, raw, strict, out),
                    other if strict => out.problem(
                        &format!("a command must be a JSON object, got {}", kind(&other)),
                        raw,
                    ),
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

/// The JSON type's name for a message.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The keys a command object may name its tool with, in order of trust:
/// the seed's `type`, then what models write instead.
const TOOL_KEYS: [&str; 3] = ["type", "tool", "command"];

/// One command object `{cmd_id, type, args, description, …}`.
fn read_object(mut object: Map<String, Value>, raw: &str, strict: bool, out: &mut Collector) {
    let Some(key) = TOOL_KEYS.iter().find(|k| object.contains_key(**k)) else {
        if strict {
            out.problem(
                "a command has no \"type\" (the tool name, e.g. diary_add)",
                raw,
            );
        }
        return;
    };
    let tool_value = object.remove(*key).unwrap_or(Value::Null);
    let Some(tool) = tool_value
        .as_str()
        .and_then(tool_name)
        .map(|t| seed_alias(&t).map_or(t, str::to_owned))
    else {
        out.problem(
            &format!(
                "\"type\" {tool_value} is not a tool name (letters, digits and _, e.g. diary_add)"
            ),
            raw,
        );
        return;
    };
    let cmd_id = object.remove("cmd_id").and_then(|v| match v {
        Value::String(s) => Some(s),
        Value::Null => None,
        other => Some(other.to_string()),
    });
    let description = object.remove("description").and_then(|v| match v {
        Value::String(s) => Some(s),
        _ => None,
    });
    let args = match object.remove("args") {
        None | Some(Value::Null) => CommandArgs::Json(object),
        Some(Value::Object(mut named)) => {
            // Extra keys (the seed's `target_llm`) are arguments too; the
            // `args` object wins on a clash.
            for (k, v) in object {
                named.entry(k).or_insert(v);
            }
            CommandArgs::Json(named)
        }
        Some(Value::String(line)) => CommandArgs::Line(line),
        Some(Value::Array(items)) => CommandArgs::Line(
            items
                .iter()
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join("|"),
        ),
        Some(other) => CommandArgs::Line(other.to_string()),
    };
    out.push(Command {
        cmd_id,
        tool,
        args,
        description,
    });
}

/// A tool name from a `type` value: lower case, `diary add` / `diary.add`
/// become `diary_add`; `None` when it is no name at all.
/// The catalogue tool a command type of seed 003's own examples names
/// (§4: `shell`, `diary_entry`, `graph_add`, `send_message`): a model that
/// read the seed writes them. `file_read` has no tool here and stays
/// unknown.
pub const SEED_ALIASES: [(&str, &str); 4] = [
    ("shell", "process_start"),
    ("diary_entry", "diary_add"),
    ("graph_add", "concepts_add"),
    ("send_message", "messages_send"),
];

/// The tool `name` stands for, when it is one of [`SEED_ALIASES`].
pub fn seed_alias(name: &str) -> Option<&'static str> {
    SEED_ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map(|(_, tool)| *tool)
}

fn tool_name(raw: &str) -> Option<String> {
    let mut name = String::with_capacity(raw.len());
    for c in raw.trim().chars() {
        match c {
            'a'..='z' | '0'..='9' | '_' | '-' => name.push(c),
            'A'..='Z' => name.push(c.to_ascii_lowercase()),
            ' ' | '.' | '/' | ':' if !name.ends_with('_') => name.push('_'),
            ' ' | '.' | '/' | ':' => {}
            _ => return None,
        }
    }
    let name = name.trim_matches('_');
    (!name.is_empty()).then(|| name.to_owned())
}

/// Gathers commands and problems under their caps.
#[derive(Default)]
struct Collector {
    commands: Vec<Command>,
    problems: Vec<CommandProblem>,
    dropped_commands: usize,
    dropped_problems: usize,
}

impl Collector {
    fn push_call(&mut self, tool: String, args: String) {
        self.push(Command {
            cmd_id: None,
            tool,
            args: CommandArgs::Line(args),
            description: None,
        });
    }

    fn push(&mut self, command: Command) {
        // Seed §4: a command's cmd_id is unique. A second command under an
        // id already used is reported, never run (it may be the same
        // command written twice).
        if let Some(id) = &command.cmd_id
            && self
                .commands
                .iter()
                .any(|c| c.cmd_id.as_deref() == Some(id.as_str()))
        {
            let what = format!(
                "duplicate cmd_id {id:?}: the first command with it is kept, this one ({}) is not run",
                command.tool
            );
            self.problem(&what, &format!("{id} {}", command.tool));
            return;
        }
        if self.commands.len() < MAX_COMMANDS_PER_REPLY {
            self.commands.push(command);
        } else {
            self.dropped_commands += 1;
        }
    }

    fn problem(&mut self, what: &str, text: &str) {
        if self.problems.len() < MAX_PROBLEMS_PER_REPLY {
            self.problems.push(CommandProblem {
                what: what.to_owned(),
                snippet: snippet(text),
            });
        } else {
            self.dropped_problems += 1;
        }
    }

    /// Past the problem cap the rest of the reply is not worth scanning.
    fn full(&self) -> bool {
        self.dropped_problems > 0
    }

    fn finish(mut self) -> Extracted {
        if self.dropped_commands > 0 {
            self.problems.push(CommandProblem {
                what: format!(
                    "the reply holds {} commands; only the first {MAX_COMMANDS_PER_REPLY} are kept, {} dropped",
                    MAX_COMMANDS_PER_REPLY + self.dropped_commands,
                    self.dropped_commands
                ),
                snippet: String::new(),
            });
        }
        if self.dropped_problems > 0 {
            self.problems.push(CommandProblem {
                what: format!(
                    "more than {MAX_PROBLEMS_PER_REPLY} unreadable commands; the rest of the reply was not read"
                ),
                snippet: String::new(),
            });
        }
        Extracted {
            commands: self.commands,
            problems: self.problems,
        }
    }
}

/// The start of `text`, whitespace runs collapsed, at most
/// [`MAX_PROBLEM_SNIPPET_CHARS`] characters (the last one `…` when cut).
fn snippet(text: &str) -> String {
    let mut out = String::new();
    let mut count = 0;
    for word in text.split_whitespace() {
        let sep = (!out.is_empty()).then_some(' ');
        for c in sep.into_iter().chain(word.chars()) {
            if count == MAX_PROBLEM_SNIPPET_CHARS {
                out.pop();
                out.push('…');
                return out;
            }
            out.push(c);
            count += 1;
        }
    }
    out
}

#[cfg(test)]
#[path = "commands_tests.rs"]
mod tests;
