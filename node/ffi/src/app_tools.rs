//! The app's own tools: a toolset an app describes ([`ToolsetSpec`]) and
//! answers ([`ToolsetHandler`], a trait the app implements in Kotlin, Swift
//! or Python) enters the chat's registry like a built-in one — its
//! catalogue line, prefix routing, activation per session with its idle
//! time, the substitution of a call to an inactive set, the reply grammar,
//! and argument checks against its schema *before* the handler runs. The
//! handler runs on a blocking thread (an app's code may block); its error
//! is the tool's failure, which the model sees, the node running on.

use std::sync::Arc;

use porfiry_skills::tools::toolset::ToolSpec as LoopToolSpec;
use porfiry_skills::{
    ArgKind as LoopArgKind, ArgSpec as LoopArgSpec, Args, BoxFuture, CallContext, ToolEffect,
    ToolOutput, Toolset, ToolsetRegistry,
};

use crate::error::PorfiryError;

/// The most toolsets an app may register: each adds a catalogue line to
/// every prompt, and a small model's prompt has room for a few.
pub const MAX_APP_TOOLSETS: usize = 8;

/// The most tools in one app toolset: an active set shows every tool's
/// line; more than a dozen crowd a small model's prompt.
pub const MAX_APP_TOOLS: usize = 12;

/// The longest summary or tool description, in characters: one terse line
/// (seed 000 §10).
pub const MAX_APP_TOOL_TEXT_CHARS: usize = 200;

/// A toolset the app offers.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct ToolsetSpec {
    /// The set's name, `[a-z0-9]+`: its tools are `<name>_<verb>`.
    pub name: String,
    /// One line for the catalogue: what the set is for.
    pub summary: String,
    /// Its tools.
    pub tools: Vec<ToolSpec>,
}

/// One tool of an app's toolset.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct ToolSpec {
    /// `<set>_<verb>`.
    pub name: String,
    /// One short line: what it does.
    pub description: String,
    /// Its arguments, required ones first.
    pub args: Vec<ArgSpec>,
    /// Whether it only reads (shows, looks up). A call to an inactive set
    /// with fitting arguments runs at once only for such a tool; one that
    /// acts (plays, sends, switches on) waits for the model to call it
    /// again once its set is on (seed 000 §7). Default: it acts.
    #[uniffi(default = false)]
    pub only_reads: bool,
}

/// One argument of an app's tool.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct ArgSpec {
    /// Its name in the schema line.
    pub name: String,
    /// What it takes.
    pub kind: ArgKind,
    /// Whether it must be given.
    pub required: bool,
}

/// What an argument takes (the registry's own argument kinds).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum ArgKind {
    /// Free text as written.
    Text,
    /// One token (an id, a name).
    Word,
    /// A whole number.
    Int,
    /// One of `values`, matched without regard to case.
    Choice {
        /// The words it takes.
        values: Vec<String>,
    },
}

/// Why the app's tool failed: the model sees the message as the tool's
/// error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, uniffi::Error)]
pub enum ToolError {
    /// The tool could not do it.
    #[error("{message}")]
    Failed {
        /// What went wrong, for the model.
        message: String,
    },
}

/// Answers the calls of an app's toolset (the app implements it).
#[uniffi::export(with_foreign)]
pub trait ToolsetHandler: Send + Sync {
    /// Runs `tool` with `args`: every declared argument in order, `""` for
    /// an optional one not given. Returns the tool's reply for the model.
    fn call(&self, tool: String, args: Vec<String>) -> Result<String, ToolError>;
}

/// An app's toolset as the registry holds it; a clone shares the handler.
#[derive(Clone)]
pub(crate) struct AppToolset {
    name: String,
    summary: String,
    tools: Vec<LoopToolSpec>,
    handler: Arc<dyn ToolsetHandler>,
}

impl std::fmt::Debug for AppToolset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppToolset")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

fn loop_arg(arg: &ArgSpec) -> LoopArgSpec {
    let spec = match &arg.kind {
        ArgKind::Text => LoopArgSpec::text(&arg.name),
        ArgKind::Word => LoopArgSpec::word(&arg.name),
        ArgKind::Int => LoopArgSpec::int(&arg.name),
        ArgKind::Choice { values } => LoopArgSpec {
            name: arg.name.clone(),
            kind: LoopArgKind::Choice(values.clone()),
            required: true,
        },
    };
    if arg.required { spec } else { spec.optional() }
}

fn check_text(what: &str, text: &str) -> Result<(), PorfiryError> {
    let chars = text.chars().count();
    if chars == 0 || chars > MAX_APP_TOOL_TEXT_CHARS || text.contains('\n') {
        return Err(PorfiryError::BadInput(format!(
            "{what}: one line of 1 to {MAX_APP_TOOL_TEXT_CHARS} characters"
        )));
    }
    Ok(())
}

impl AppToolset {
    /// The set `spec` describes, answered by `handler`; its texts and
    /// sizes checked (the registry checks the names when it is registered).
    pub(crate) fn new(
        spec: &ToolsetSpec,
        handler: Arc<dyn ToolsetHandler>,
    ) -> Result<AppToolset, PorfiryError> {
        check_text(&format!("toolset {} summary", spec.name), &spec.summary)?;
        if spec.tools.is_empty() || spec.tools.len() > MAX_APP_TOOLS {
            return Err(PorfiryError::BadInput(format!(
                "toolset {}: 1 to {MAX_APP_TOOLS} tools",
                spec.name
            )));
        }
        let mut tools = Vec::with_capacity(spec.tools.len());
        for tool in &spec.tools {
            check_text(
                &format!("tool {} description", tool.name),
                &tool.description,
            )?;
            let empty_choice =
                |a: &ArgSpec| matches!(&a.kind, ArgKind::Choice { values } if values.is_empty());
            if tool.args.iter().any(empty_choice) {
                return Err(PorfiryError::BadInput(format!(
                    "tool {}: a choice argument needs its values",
                    tool.name
                )));
            }
            let effect = if tool.only_reads {
                ToolEffect::Read
            } else {
                ToolEffect::Write
            };
            let args = tool.args.iter().map(loop_arg).collect();
            tools.push(LoopToolSpec::new(
                &tool.name,
                &tool.description,
                args,
                effect,
            ));
        }
        let set = AppToolset {
            name: spec.name.clone(),
            summary: spec.summary.clone(),
            tools,
            handler,
        };
        // The registry's own checks: the set's name, its tools' names,
        // required arguments first.
        let mut probe = ToolsetRegistry::new();
        probe
            .register(set.clone())
            .map_err(|e| PorfiryError::BadInput(e.to_string()))?;
        Ok(set)
    }

    /// The set's name.
    pub(crate) fn set_name(&self) -> &str {
        &self.name
    }
}

impl Toolset for AppToolset {
    fn name(&self) -> &str {
        &self.name
    }

    fn summary(&self) -> &str {
        &self.summary
    }

    fn tools(&self) -> &[LoopToolSpec] {
        &self.tools
    }

    fn call<'a>(
        &'a self,
        tool: &'a str,
        args: &'a Args,
        _ctx: &'a CallContext,
    ) -> BoxFuture<'a, ToolOutput> {
        let values: Vec<String> = self
            .tools
            .iter()
            .find(|t| t.name == tool)
            .map(|t| {
                t.args
                    .iter()
                    .map(|a| args.text(&a.name).to_owned())
                    .collect()
            })
            .unwrap_or_default();
        let handler = Arc::clone(&self.handler);
        let tool = tool.to_owned();
        Box::pin(async move {
            let name = tool.clone();
            match tokio::task::spawn_blocking(move || handler.call(tool, values)).await {
                Ok(Ok(reply)) => ToolOutput::ok(reply),
                Ok(Err(ToolError::Failed { message })) => ToolOutput::failed(message),
                Err(e) => {
                    tracing::warn!(tool = %name, "the app's tool handler failed: {e}");
                    ToolOutput::failed(format!("the app's {name} failed"))
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use porfiry_skills::{Caller, Clock, Language, ManualClock, SystemClock, bind};

    #[derive(Default)]
    struct Lamp {
        calls: Mutex<Vec<(String, Vec<String>)>>,
    }

    impl ToolsetHandler for Lamp {
        fn call(&self, tool: String, args: Vec<String>) -> Result<String, ToolError> {
            self.calls.lock().unwrap().push((tool, args.clone()));
            match args[0].as_str() {
                "on" => Ok("the lamp is on".into()),
                _ => Err(ToolError::Failed {
                    message: "the lamp is unplugged".into(),
                }),
            }
        }
    }

    fn spec() -> ToolsetSpec {
        ToolsetSpec {
            name: "lamp".into(),
            summary: "the room's lamp".into(),
            tools: vec![ToolSpec {
                name: "lamp_set".into(),
                description: "turn the lamp on or off".into(),
                args: vec![
                    ArgSpec {
                        name: "state".into(),
                        kind: ArgKind::Choice {
                            values: vec!["on".into(), "off".into()],
                        },
                        required: true,
                    },
                    ArgSpec {
                        name: "minutes".into(),
                        kind: ArgKind::Int,
                        required: false,
                    },
                ],
                only_reads: false,
            }],
        }
    }

    fn context() -> CallContext {
        CallContext::new(
            "s",
            Caller::User,
            ManualClock::new(SystemClock::utc().now()).now(),
            Language::En,
        )
    }

    #[tokio::test]
    async fn the_handler_gets_every_argument_in_order_and_its_error_is_the_tools() {
        let lamp = Arc::new(Lamp::default());
        let set = AppToolset::new(&spec(), lamp.clone()).unwrap();
        assert_eq!(
            set.tools()[0].schema_line(),
            "lamp_set|state(on/off)|[minutes(number)]"
        );
        assert_eq!(set.tools()[0].effect, ToolEffect::Write);
        let args = bind(&set.tools()[0].args, "on").unwrap();
        let out = set.call("lamp_set", &args, &context()).await;
        assert!(out.ok, "{out:?}");
        assert_eq!(out.text, "the lamp is on");
        let args = bind(&set.tools()[0].args, "off|5").unwrap();
        let out = set.call("lamp_set", &args, &context()).await;
        assert!(!out.ok);
        assert_eq!(out.text, "the lamp is unplugged");
        assert_eq!(
            *lamp.calls.lock().unwrap(),
            [
                ("lamp_set".to_owned(), vec!["on".to_owned(), String::new()]),
                (
                    "lamp_set".to_owned(),
                    vec!["off".to_owned(), "5".to_owned()]
                ),
            ]
        );
    }

    #[test]
    fn a_bad_spec_is_refused_with_its_reason() {
        let lamp: Arc<dyn ToolsetHandler> = Arc::new(Lamp::default());
        let bad = |edit: fn(&mut ToolsetSpec), needle: &str| {
            let mut s = spec();
            edit(&mut s);
            let e = AppToolset::new(&s, Arc::clone(&lamp)).unwrap_err();
            assert!(matches!(e, PorfiryError::BadInput(_)), "{e:?}");
            assert!(e.to_string().contains(needle), "{e} lacks {needle}");
        };
        bad(|s| s.name = "Lamp!".into(), "Lamp!");
        bad(|s| s.tools[0].name = "light_set".into(), "light_set");
        bad(|s| s.summary = String::new(), "summary");
        bad(
            |s| s.tools[0].description = "two\nlines".into(),
            "description",
        );
        bad(|s| s.tools.clear(), "tools");
        bad(
            |s| {
                s.tools[0].args[0].required = false;
                s.tools[0].args[1].required = true;
            },
            "lamp_set",
        );
        bad(
            |s| s.tools[0].args[0].kind = ArgKind::Choice { values: vec![] },
            "values",
        );
        assert!(AppToolset::new(&spec(), lamp).is_ok());
    }
}
