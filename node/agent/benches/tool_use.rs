//! The tool-use table (issue 30 §6): every request of
//! `porfiry_agent::chat::tool_use::TOOL_USE_CASES` in a fresh session of the
//! API's agent (its six sets over a fresh database, its skills), against any
//! OpenAI-compatible server, scored for format-valid replies and the right
//! tool. A bench program, not criterion: it needs a model.
//!
//! ```sh
//! cargo bench -p porfiry-agent --bench tool_use -- \
//!     --llm-url http://127.0.0.1:11434/v1 --llm-model qwen2.5:3b [--language ru]
//! ```
//! Without `--llm-url` it says so and exits 0 (CI builds it, never runs it).

// A bench program has no API to document.
#![allow(missing_docs)]

use std::sync::Arc;
use std::time::Instant;

use porfiry_agent::chat::tool_use::{TOOL_USE_CASES, score};
use porfiry_agent::chat::{ChatConfig, ChatEngine, Language, Llm, TraceEvent};
use porfiry_agent::cognition::CoreEvents;
use porfiry_agent::llm::registry_models::RegistryModels;
use porfiry_agent::llm::{LlmTarget, OpenAiClient};
use porfiry_agent::toolsets::{CHAT_SETS, StoreTools, ToolsetOptions, core_toolsets};
use porfiry_storage::db::Db;
use porfiry_storage::{DB_FILE_NAME, Store};

struct Args {
    url: Option<String>,
    model: String,
    language: Language,
}

fn args() -> Args {
    let mut out = Args {
        url: None,
        model: "default".to_owned(),
        language: Language::En,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--llm-url" => out.url = it.next(),
            "--llm-model" => out.model = it.next().unwrap_or(out.model),
            "--language" => {
                out.language = it
                    .next()
                    .and_then(|l| l.parse().ok())
                    .unwrap_or(Language::En)
            }
            _ => {} // `--bench` and filters from cargo
        }
    }
    out
}

fn main() {
    let args = args();
    let Some(url) = args.url else {
        println!("tool_use: no model; pass -- --llm-url URL --llm-model NAME to score one");
        return;
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let db = Db::start(Store::create(dir.path().join(DB_FILE_NAME)).expect("db")).expect("actor");
    let tools = StoreTools {
        db,
        language: args.language,
        events: CoreEvents::new(),
        node: None,
    };
    let options = ToolsetOptions {
        language: args.language,
        ..ToolsetOptions::default()
    };
    let registry =
        core_toolsets(&options, &tools, Arc::new(RegistryModels::new(None))).expect("toolsets");
    let config = ChatConfig {
        language: args.language,
        ..ChatConfig::new(LlmTarget::new(url.as_str(), args.model.as_str()))
    };
    let llm: Arc<dyn Llm> = Arc::new(OpenAiClient::new(config.llm.clone()).expect("client"));
    let engine = ChatEngine::with_toolsets(&config, llm, registry.only(CHAT_SETS)).expect("engine");
    println!("| # | request | expected | replies | valid | right tool | s |");
    println!("|---|---|---|---|---|---|---|");
    let (mut replies, mut valid, mut right, mut failed) = (0, 0, 0, 0);
    let started = Instant::now();
    for (i, case) in TOOL_USE_CASES.iter().enumerate() {
        let mut session = engine.session();
        let mut seen = Vec::new();
        let t = Instant::now();
        let result = runtime.block_on(session.send_traced(case.request, |e| {
            if let TraceEvent::ModelReply(text) = e {
                seen.push(text.to_owned());
            }
        }));
        if let Err(e) = result {
            failed += 1;
            println!(
                "| {} | {} | model error: {e} | | | | |",
                i + 1,
                case.request
            );
            continue;
        }
        let s = score(engine.toolbox(), case, &seen);
        replies += s.replies;
        valid += s.valid;
        right += usize::from(s.right_tool);
        println!(
            "| {} | {} | {} | {} | {} | {} | {:.1} |",
            i + 1,
            case.request,
            case.expected.join(" / "),
            s.replies,
            s.valid,
            if s.right_tool { "yes" } else { "no" },
            t.elapsed().as_secs_f64()
        );
    }
    let n = TOOL_USE_CASES.len();
    println!(
        "\nmodel {}: format-valid {valid}/{replies} replies ({:.0} %), right tool {right}/{n} \
         requests ({:.0} %), {failed} model errors, {:.0} s in all",
        args.model,
        100.0 * valid as f64 / replies.max(1) as f64,
        100.0 * right as f64 / n as f64,
        started.elapsed().as_secs_f64()
    );
}
