//! The chat dispatcher: runs one parsed call against the toolbox and one
//! session's activation, and says what enters the history.
//!
//! - `enable_toolset` / `disable_toolset` are invisible: their effect is the
//!   rebuilt prompt; the call and reply stay out of the history.
//! - A call to a tool of an inactive set whose arguments fit activates the
//!   set and runs at once when the tool only reads.
//! - One whose arguments don't fit, or whose tool acts on the world (plays,
//!   sends, writes, deletes), is the seed §7 substitution: the set is
//!   activated and the reply lists its tools and says the call was NOT run
//!   (so a call repeated from history never acts unchosen).
//! - Nothing is an error state: unknown names get "no X; available: …".
//! - A toolset tool whose arguments fit is not run here: the dispatcher is
//!   pure, so it hands back the [`Prepared`] call ([`Outcome::Run`]) and the
//!   session asks its driver to run it (`Step::RunTool`).

use crate::clock::ZonedTime;
use crate::session::activation::Activation;
use crate::session::parser::ToolCall;
use crate::skills::repository::reread;
use crate::texts;
use crate::tools::args::{ArgSpec, bind, join_or};
use crate::tools::core_tools::{self, CORE_TOOL_NAMES, CoreTool};
use crate::tools::prepared::{PrepareError, Prepared};
use crate::tools::toolbox::Toolbox;
use crate::tools::toolset::{ClientEvent, ToolEffect};

/// How a visible result came about (for traces and tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultKind {
    /// A core tool answered (`get_current_time`, `show_text`, `read_skill`).
    Core,
    /// A tool of an active set ran.
    Executed,
    /// A reading tool of an inactive set ran at once (its arguments fit);
    /// the set is now active.
    ActivatedAndExecuted,
    /// Seed §7: the set was activated, the call was NOT run (its arguments
    /// did not fit, or its tool acts on the world).
    Substituted,
    /// Arguments did not fit the schema; nothing ran.
    InvalidArgs,
    /// No such tool; nothing ran.
    UnknownTool,
    /// A known set without this tool; the set is now active, nothing ran.
    UnknownVerb,
}

/// What a call did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// `enable_toolset` / `disable_toolset`: nothing enters the history.
    Invisible {
        /// The reply (shown to the model once, only when nothing changed, so
        /// it does not repeat a no-op call; see `Session`).
        reply: String,
        /// Whether the set of active toolsets changed.
        changed: bool,
    },
    /// A toolset tool to run (its arguments fit); its output becomes the
    /// result. The set is active now.
    Run {
        /// The call, routed and bound.
        prepared: Prepared,
        /// [`ResultKind::Executed`] or [`ResultKind::ActivatedAndExecuted`].
        kind: ResultKind,
    },
    /// A result for the history, as a `TOOL_RESULT` message.
    Visible {
        /// The reply.
        text: String,
        /// Client events (`show_text`, toolset actions).
        events: Vec<ClientEvent>,
        /// How it came about.
        kind: ResultKind,
    },
}

impl Outcome {
    fn visible(text: impl Into<String>, kind: ResultKind) -> Self {
        Outcome::Visible {
            text: text.into(),
            events: Vec::new(),
            kind,
        }
    }
}

/// Runs `call` for a session. `now` gives the activation clock and the time
/// `get_current_time` reports.
pub fn dispatch(
    toolbox: &Toolbox,
    activation: &mut Activation,
    call: &ToolCall,
    now: &ZonedTime,
) -> Outcome {
    let lang = toolbox.language();
    let now_ms = now.unix_ms();
    if let Some(core) = CoreTool::from_name(&call.name) {
        return match core {
            CoreTool::GetCurrentTime => {
                Outcome::visible(core_tools::current_time(lang, now), ResultKind::Core)
            }
            CoreTool::ShowText => match bind(&[ArgSpec::text("text")], &call.args) {
                Ok(args) => {
                    let out = core_tools::show_text(lang, args.text("text"));
                    Outcome::Visible {
                        text: out.text,
                        events: out.events,
                        kind: ResultKind::Core,
                    }
                }
                Err(_) => Outcome::visible(
                    texts::args_invalid(lang, &core.spec(lang).schema_line()),
                    ResultKind::InvalidArgs,
                ),
            },
            CoreTool::ReadSkill => read_skill(toolbox, &name_arg(&call.args)),
            CoreTool::EnableToolset => enable(toolbox, activation, &name_arg(&call.args), now_ms),
            CoreTool::DisableToolset => disable(toolbox, activation, &name_arg(&call.args)),
        };
    }
    match toolbox.prepare(&call.name, &call.args) {
        Ok(prepared) => {
            let was_active = activation.is_active(prepared.set_name());
            activation.touch(prepared.set_name(), now_ms);
            if !was_active && prepared.effect() != ToolEffect::Read {
                // Seed §7 for a call that acts on the world: a call repeated
                // from history (a "ghost") must not play a film or send a
                // message the model did not choose again. The set is active
                // now; the same line, sent again, runs.
                let set = prepared.set_name().to_owned();
                let tools = toolbox.prompt().tool_lines(&set).unwrap_or("");
                let line = call_line(&call.name, &call.args);
                return Outcome::visible(
                    texts::substituted(lang, &set, tools.trim_end(), &call.name, &line),
                    ResultKind::Substituted,
                );
            }
            Outcome::Run {
                prepared,
                kind: if was_active {
                    ResultKind::Executed
                } else {
                    ResultKind::ActivatedAndExecuted
                },
            }
        }
        Err(PrepareError::UnknownTool { .. }) => Outcome::visible(
            texts::no_tool(
                lang,
                &call.name,
                &CORE_TOOL_NAMES.join(", "),
                &join_or(toolbox.toolsets().names(), texts::none(lang)),
            ),
            ResultKind::UnknownTool,
        ),
        Err(PrepareError::UnknownVerb { set, .. }) => {
            activation.touch(&set, now_ms);
            let tools = toolbox.prompt().tool_lines(&set).unwrap_or("");
            Outcome::visible(
                texts::no_such_tool_in_set(lang, &call.name, &set, tools.trim_end()),
                ResultKind::UnknownVerb,
            )
        }
        Err(PrepareError::InvalidArgs { schema, error }) => {
            tracing::debug!(tool = %call.name, %error, "arguments do not fit");
            let set = toolbox
                .toolsets()
                .set_of(&call.name)
                .map(|s| s.name().to_owned())
                .unwrap_or_default();
            let was_active = activation.is_active(&set);
            activation.touch(&set, now_ms);
            if was_active {
                Outcome::visible(texts::args_invalid(lang, &schema), ResultKind::InvalidArgs)
            } else {
                let tools = toolbox.prompt().tool_lines(&set).unwrap_or("");
                Outcome::visible(
                    texts::substituted(lang, &set, tools.trim_end(), &call.name, &schema),
                    ResultKind::Substituted,
                )
            }
        }
    }
}

/// The call as the model would send it again: `name|args`.
fn call_line(name: &str, args: &str) -> String {
    let args = args.trim();
    if args.is_empty() {
        name.to_owned()
    } else {
        format!("{name}|{args}")
    }
}

/// The one-word argument of read_skill / enable / disable, cleaned and
/// lower-cased; `""` when absent.
fn name_arg(raw: &str) -> String {
    bind(&[ArgSpec::word("name").optional()], raw)
        .map(|a| a.text("name").to_lowercase())
        .unwrap_or_default()
}

/// Whether `skill` can be followed here: it needs no set, or its set is
/// registered (a skill of a set this node lacks would send the model to
/// enable a set that answers "no toolset"; the prompt's index leaves it out
/// for the same reason).
fn usable(toolbox: &Toolbox, skill: &crate::skills::Skill) -> bool {
    skill
        .toolset
        .as_deref()
        .is_none_or(|set| toolbox.toolsets().get(set).is_some())
}

fn read_skill(toolbox: &Toolbox, name: &str) -> Outcome {
    let lang = toolbox.language();
    let found = toolbox.skills().get(name).filter(|s| usable(toolbox, s));
    let current = found.map(|loaded| {
        reread(loaded).unwrap_or_else(|e| {
            tracing::warn!(skill = name, error = %e, "skill file unreadable now; using the loaded one");
            loaded.clone()
        })
    });
    match current {
        Some(skill) if !skill.body.is_empty() => Outcome::visible(skill.body, ResultKind::Core),
        Some(skill) => Outcome::visible(skill.description, ResultKind::Core),
        None => Outcome::visible(
            texts::no_skill(
                lang,
                name,
                &join_or(
                    toolbox
                        .skills()
                        .iter()
                        .filter(|s| usable(toolbox, s))
                        .map(|s| s.name.as_str()),
                    texts::none(lang),
                ),
            ),
            ResultKind::Core,
        ),
    }
}

fn enable(toolbox: &Toolbox, activation: &mut Activation, name: &str, now_ms: u64) -> Outcome {
    let lang = toolbox.language();
    if toolbox.toolsets().get(name).is_none() {
        return Outcome::Invisible {
            reply: texts::no_toolset(
                lang,
                name,
                &join_or(toolbox.toolsets().names(), texts::none(lang)),
            ),
            changed: false,
        };
    }
    let was_active = activation.touch(name, now_ms);
    Outcome::Invisible {
        reply: if was_active {
            texts::already_active(lang, name)
        } else {
            texts::enabled(lang, name)
        },
        changed: !was_active,
    }
}

fn disable(toolbox: &Toolbox, activation: &mut Activation, name: &str) -> Outcome {
    let lang = toolbox.language();
    let unchanged = |reply: String| Outcome::Invisible {
        reply,
        changed: false,
    };
    if name.is_empty() {
        // Forgiving: no name means "switch off what is on".
        let off = activation.deactivate_all();
        if off.is_empty() {
            return unchanged(texts::no_active_toolsets(lang).to_owned());
        }
        return Outcome::Invisible {
            reply: texts::disabled(lang, &off.join(", ")),
            changed: true,
        };
    }
    if toolbox.toolsets().get(name).is_none() {
        return unchanged(texts::no_toolset(
            lang,
            name,
            &join_or(toolbox.toolsets().names(), texts::none(lang)),
        ));
    }
    if activation.deactivate(name) {
        return Outcome::Invisible {
            reply: texts::disabled(lang, name),
            changed: true,
        };
    }
    if activation.is_empty() {
        unchanged(texts::no_active_toolsets(lang).to_owned())
    } else {
        unchanged(texts::not_active(
            lang,
            name,
            &join_or(activation.active(), texts::none(lang)),
        ))
    }
}
