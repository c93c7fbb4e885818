//! `porfiry chat`: one chat session in the terminal. Reads one message per
//! line from stdin, prints each turn's events and answer to stdout (format in
//! `chat::transcript`), and exits 0 at the end of input. A failed model call
//! is one `[error]` line for that turn; the next line is answered as usual.
//! Needs no identity or database: `<data-dir>/skills/` is read, and on an
//! initialised node the chat has the node's chat sets over its database,
//! as `porfiry run`'s API has them (before `porfiry init`: media alone). The
//! model is a server (`--llm-url`/`--llm-model`) or a local GGUF run by the
//! embedded engine (`--model-file`), loaded before the first line is read.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use porfiry_skills::limits::DEFAULT_TOOLSET_IDLE_MS;

use crate::commands::constrained_flag::ConstrainedArgs;
use crate::commands::llm_flags::LlmCallArgs;
use crate::commands::model_file_flags::{ModelFileArgs, ModelFileConflict, file_entry};
use porfiry_agent::chat::input::{InputLine, MAX_INPUT_LINE_BYTES, read_line};
use porfiry_agent::chat::transcript::{ERROR_PREFIX, TraceWriter, render_error, render_reply};
use porfiry_agent::chat::{ChatConfig, ChatEngine, ChatSession, Language, local_clock};
use porfiry_mesh::data_dir::DataDir;

/// The output format, shown by `porfiry chat --help`.
pub const CHAT_AFTER_HELP: &str = "\
Input: one message per line on stdin (a pipe or the terminal); empty lines are
skipped; the chat ends, with exit code 0, at the end of input (Ctrl-D).

Output on stdout, turn after turn:
  [show] TEXT          the model showed TEXT to the user (show_text)
  [action] TOOL VALUE  a tool asks the app to act, e.g. \"[action] media_play tt0133093\"
  [error] MESSAGE      this turn failed (model unreachable, timeout, HTTP error,
                       bad reply, unusable input); the chat goes on with the next line
  any other line       the answer

--trace writes each prompt state, model reply and tool call to stderr, as
\"[trace] \" lines. The API key, if the server needs one, comes from
PORFIRY_LLM_API_KEY. User skills are read from <data-dir>/skills/<name>/SKILL.md.";

/// Flags of `porfiry chat`.
#[derive(Debug, Clone, Args)]
#[command(after_help = CHAT_AFTER_HELP)]
pub struct ChatArgs {
    /// Base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1
    /// (required unless --model-file).
    #[arg(
        long,
        env = "PORFIRY_LLM_URL",
        value_name = "URL",
        required_unless_present = "model_file"
    )]
    pub llm_url: Option<String>,
    /// Model name as the server knows it (required unless --model-file).
    #[arg(
        long,
        env = "PORFIRY_LLM_MODEL",
        value_name = "NAME",
        required_unless_present = "model_file"
    )]
    pub llm_model: Option<String>,
    /// A local GGUF model instead of a server.
    #[command(flatten)]
    pub file: ModelFileArgs,
    /// Call settings of the model (shared with `porfiry run`).
    #[command(flatten)]
    pub call: LlmCallArgs,
    /// Decoding under the reply grammar.
    #[command(flatten)]
    pub constrained: ConstrainedArgs,
    /// JSON array of {"id","title","year","description"} for the media toolset
    /// (default: a small built-in sample).
    #[arg(long, value_name = "FILE")]
    pub media_catalog: Option<PathBuf>,
    /// Language of the prompt and tool texts: en or ru.
    #[arg(long, value_name = "LANG", default_value = "en", value_parser = parse_language)]
    pub language: Language,
    /// Seconds a toolset stays on after its last use.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_TOOLSET_IDLE_MS / 1000)]
    pub toolset_idle_secs: u64,
    /// Print each prompt state, model reply and tool call to stderr.
    #[arg(long)]
    pub trace: bool,
}

fn parse_language(s: &str) -> Result<Language, String> {
    s.parse::<Language>().map_err(|e| e.to_string())
}

impl ChatArgs {
    /// The engine settings these flags describe, for the node in `dir`.
    pub fn config(&self, dir: &DataDir) -> ChatConfig {
        // With --model-file the target only labels the model (no HTTP).
        let llm = match (&self.file.model_file, &self.llm_url, &self.llm_model) {
            (Some(path), _, _) => {
                let entry = file_entry(path);
                self.call.target(&entry.endpoint, &entry.model)
            }
            (None, url, model) => porfiry_agent::llm::LlmTarget {
                send_grammar: self.constrained.mode().sends_to_http(),
                ..self.call.target(
                    url.as_deref().unwrap_or_default(),
                    model.as_deref().unwrap_or_default(),
                )
            },
        };
        ChatConfig {
            language: self.language,
            media_catalog: match &self.media_catalog {
                Some(path) => porfiry_toolsets::CatalogSource::File(path.clone()),
                None => porfiry_toolsets::CatalogSource::Sample,
            },
            skills_dir: Some(dir.skills_dir()),
            toolset_idle: Duration::from_secs(self.toolset_idle_secs),
            constrained: self.constrained.mode().builds_grammars(),
            ..ChatConfig::new(llm)
        }
    }
}

impl ChatArgs {
    /// The embedded model of `--model-file`, loaded (refused together with
    /// `--llm-url`/`--llm-model`); `None` for a server.
    pub fn local_model(&self) -> anyhow::Result<Option<Arc<dyn porfiry_skills::Llm>>> {
        if self.file.model_file.is_some() {
            if self.llm_url.is_some() {
                return Err(ModelFileConflict::with("llm-url", "PORFIRY_LLM_URL").into());
            }
            if self.llm_model.is_some() {
                return Err(ModelFileConflict::with("llm-model", "PORFIRY_LLM_MODEL").into());
            }
        }
        Ok(self
            .file
            .open()?
            .map(|engine| engine as Arc<dyn porfiry_skills::Llm>))
    }
}

/// Runs `porfiry chat` on stdin/stdout until the end of input.
pub fn chat(dir: &DataDir, args: &ChatArgs) -> anyhow::Result<()> {
    // The local offset can only be read while the process has one thread.
    let clock = local_clock();
    let config = args.config(dir);
    let llm: Arc<dyn porfiry_skills::Llm> = match args.local_model()? {
        Some(local) => local,
        None => Arc::new(porfiry_agent::llm::OpenAiClient::new(config.llm.clone())?),
    };
    let engine = match chat_sets(dir, &config)? {
        Some(sets) => ChatEngine::with_toolsets(&config, llm, sets)?,
        None => ChatEngine::with_llm(&config, llm)?,
    }
    .with_clock(Arc::new(clock));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let stdin = std::io::stdin();
    let interactive = stdin.is_terminal();
    let mut stderr = std::io::stderr();
    if interactive {
        writeln!(
            stderr,
            "porfiry chat: model {} at {}; one message per line, Ctrl-D to quit",
            config.llm.model, config.llm.base_url
        )?;
    }
    let mut session = engine.session();
    let options = LoopOptions {
        trace: args.trace,
        prompt: interactive,
    };
    chat_loop(
        &runtime,
        &mut session,
        &mut stdin.lock(),
        &mut std::io::stdout(),
        &mut stderr,
        options,
    )
}

/// The node's chat sets (`CHAT_SETS`: media, notes, messages, diary,
/// goals, tasks) over its database, as `porfiry run`'s API has them, so
/// the terminal is the same agent; `None` for a data dir without a
/// database (`porfiry chat` before `porfiry init`: the media set alone).
/// `messages_send` answers that it needs the running node.
fn chat_sets(
    dir: &DataDir,
    config: &ChatConfig,
) -> anyhow::Result<Option<porfiry_skills::ToolsetRegistry>> {
    if !dir.db_path().exists() {
        return Ok(None);
    }
    let db = porfiry_storage::db::Db::open(&dir.db_path()).context("opening the database")?;
    let tools = porfiry_toolsets::StoreTools {
        db,
        language: config.language,
        events: porfiry_agent::cognition::CoreEvents::new(),
        node: None,
    };
    let models = Arc::new(porfiry_agent::llm::registry_models::RegistryModels::new(
        None,
    ));
    let all = porfiry_toolsets::core_toolsets(&config.toolset_options(), &tools, models)?;
    Ok(Some(all.only(porfiry_toolsets::CHAT_SETS)))
}

/// How the loop talks to the terminal.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoopOptions {
    /// Write `--trace` lines to the error stream.
    pub trace: bool,
    /// Write a `> ` prompt to the error stream before each read.
    pub prompt: bool,
}

/// Reads messages from `input` until its end, writing each turn to `out`.
pub fn chat_loop(
    runtime: &tokio::runtime::Runtime,
    session: &mut ChatSession,
    input: &mut impl BufRead,
    out: &mut impl Write,
    err: &mut (impl Write + Send),
    options: LoopOptions,
) -> anyhow::Result<()> {
    loop {
        if options.prompt {
            write!(err, "> ")?;
            err.flush()?;
        }
        let line = read_line(input, MAX_INPUT_LINE_BYTES).context("cannot read stdin")?;
        let text = match line {
            None => {
                if options.prompt {
                    writeln!(err)?;
                }
                break;
            }
            Some(InputLine::Text(text)) if text.trim().is_empty() => continue,
            Some(InputLine::Text(text)) => text,
            Some(InputLine::NotUtf8) => {
                writeln!(out, "{ERROR_PREFIX}input line is not UTF-8 text; skipped")?;
                out.flush()?;
                continue;
            }
            Some(InputLine::TooLong { bytes }) => {
                writeln!(
                    out,
                    "{ERROR_PREFIX}input line of {bytes} bytes is longer than the \
                     {MAX_INPUT_LINE_BYTES}-byte limit; skipped"
                )?;
                out.flush()?;
                continue;
            }
        };
        let mut tracer = TraceWriter::new();
        let mut trace_failed = None;
        let result = runtime.block_on(session.send_traced(&text, |event| {
            if options.trace && trace_failed.is_none() {
                let lines = tracer.render(&event);
                if let Err(e) = err.write_all(lines.as_bytes()) {
                    trace_failed = Some(e);
                }
            }
        }));
        if let Some(e) = trace_failed {
            return Err(e).context("cannot write the trace to stderr");
        }
        let rendered = match result {
            Ok(reply) => render_reply(&reply),
            Err(e) => render_error(&e),
        };
        out.write_all(rendered.as_bytes())
            .and_then(|()| out.flush())
            .context("cannot write to stdout")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;
    use std::sync::Mutex;

    use porfiry_skills::{BoxFuture, Completion};

    use super::*;
    use porfiry_agent::chat::{Clock, Llm, ManualClock, ModelError, ModelRequest, SystemClock};
    use porfiry_agent::llm::LlmTarget;

    /// A model answering from a queue and recording the requests; clones
    /// share both.
    #[derive(Default, Clone)]
    struct Queue {
        replies: Arc<Mutex<Vec<Result<String, ModelError>>>>,
        seen: Arc<Mutex<Vec<ModelRequest>>>,
    }

    impl Llm for Queue {
        fn complete<'a>(
            &'a self,
            request: &'a ModelRequest,
        ) -> BoxFuture<'a, Result<Completion, ModelError>> {
            self.seen.lock().unwrap().push(request.clone());
            let next = self.replies.lock().unwrap().remove(0);
            Box::pin(async move { next.map(Completion::text) })
        }
    }

    fn run(model: &Queue, input: &[u8], trace: bool) -> (String, String) {
        let config = ChatConfig::new(LlmTarget::new("http://unused/v1", "m"));
        let clock = Arc::new(ManualClock::new(SystemClock::utc().now()));
        let engine = ChatEngine::with_llm(&config, Arc::new(model.clone()))
            .unwrap()
            .with_clock(clock);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let mut session = engine.session();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let options = LoopOptions {
            trace,
            prompt: false,
        };
        chat_loop(
            &runtime,
            &mut session,
            &mut Cursor::new(input.to_vec()),
            &mut out,
            &mut err,
            options,
        )
        .unwrap();
        (
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    }

    #[test]
    fn turns_print_events_answers_and_one_line_errors_and_skip_bad_lines() {
        let model = Queue::default();
        *model.replies.lock().unwrap() = vec![
            Ok("TOOL_CALL: show_text|hello there".into()),
            Ok("Done.".into()),
            Err(ModelError::Timeout {
                url: "http://unused/v1/chat/completions".into(),
                timeout: std::time::Duration::from_secs(1),
            }),
            Ok("Still here.".into()),
        ];
        let (out, err) = run(&model, b"show it\n\n  \n\xff\nsecond\nthird\n", false);
        assert_eq!(
            out,
            "[show] hello there\nDone.\n\
             [error] input line is not UTF-8 text; skipped\n\
             [error] model did not answer within 1000 ms\n\
             Still here.\n"
        );
        assert_eq!(err, "", "no trace unless asked");
        let seen = model.seen.lock().unwrap();
        assert_eq!(seen.len(), 4, "empty lines never reach the model");
    }

    #[test]
    fn trace_shows_prompt_states_and_calls_on_the_error_stream() {
        let model = Queue::default();
        *model.replies.lock().unwrap() = vec![
            Ok("TOOL_CALL: enable_toolset|media".into()),
            Ok("Ready.".into()),
        ];
        let (out, err) = run(&model, b"films\n", true);
        assert_eq!(out, "Ready.\n");
        assert!(err.contains("[trace] request 1: new prompt state"), "{err}");
        assert!(
            err.contains("invisible call TOOL_CALL: enable_toolset|media"),
            "{err}"
        );
        assert!(err.contains("[trace] request 2: new prompt state"), "{err}");
        assert!(err.contains("Active toolsets: media"), "{err}");
    }

    #[test]
    fn an_overlong_line_is_refused_and_the_chat_goes_on() {
        let model = Queue::default();
        *model.replies.lock().unwrap() = vec![Ok("ok".into())];
        let mut input = vec![b'x'; MAX_INPUT_LINE_BYTES + 1];
        input.extend_from_slice(b"\nnext\n");
        let (out, _) = run(&model, &input, false);
        assert!(out.starts_with("[error] input line of "), "{out}");
        assert!(out.ends_with("skipped\nok\n"), "{out}");
    }

    #[test]
    fn flags_become_engine_settings() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            chat: ChatArgs,
        }
        let cli = Cli::try_parse_from([
            "chat",
            "--llm-url",
            "http://h:1/v1",
            "--llm-model",
            "m1",
            "--llm-timeout-secs",
            "2",
            "--llm-retries",
            "0",
            "--language",
            "ru",
            "--toolset-idle-secs",
            "5",
            "--media-catalog",
            "/x/films.json",
        ])
        .unwrap();
        let c = cli.chat.config(&DataDir::new("/data"));
        assert_eq!(c.llm.timeout(), Duration::from_secs(2));
        assert_eq!(c.llm.connect_timeout(), Duration::from_secs(2));
        assert_eq!(c.llm.max_retries(), 0);
        assert_eq!(c.language, Language::Ru);
        assert_eq!(c.toolset_idle, Duration::from_secs(5));
        assert_eq!(c.skills_dir, Some(PathBuf::from("/data/skills")));
        assert_eq!(
            c.media_catalog,
            porfiry_toolsets::CatalogSource::File("/x/films.json".into())
        );
        let bad = Cli::try_parse_from([
            "chat",
            "--llm-url",
            "u",
            "--llm-model",
            "m",
            "--language",
            "de",
        ]);
        assert!(bad.is_err());
        let zero = Cli::try_parse_from([
            "chat",
            "--llm-url",
            "u",
            "--llm-model",
            "m",
            "--llm-timeout-secs",
            "0",
        ]);
        assert!(zero.is_err());
    }

    #[test]
    fn constrained_attaches_grammars_and_only_on_sends_them_to_a_server() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            chat: ChatArgs,
        }
        let config = |extra: &[&str]| {
            let args = ["chat", "--llm-url", "http://h:1/v1", "--llm-model", "m"];
            let cli = Cli::try_parse_from(args.iter().chain(extra)).unwrap();
            let c = cli.chat.config(&DataDir::new("/data"));
            (c.constrained, c.llm.send_grammar)
        };
        assert_eq!(config(&[]), (true, false), "auto: the server gets none");
        assert_eq!(config(&["--constrained", "on"]), (true, true));
        assert_eq!(config(&["--constrained", "off"]), (false, false));
        let file = Cli::try_parse_from(["chat", "--model-file", "/m/smol.gguf"]).unwrap();
        let c = file.chat.config(&DataDir::new("/data"));
        assert!(c.constrained, "auto constrains the embedded engine");
    }
}
