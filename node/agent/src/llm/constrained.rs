//! `--constrained on|off|auto`: whether model replies are decoded under the
//! grammar the tool loop and the core attach to each request
//! ([`porfiry_skills::grammar`]), and the one rule for which backend applies it.
//!
//! - **off**: no request carries a grammar.
//! - **auto** (the default): requests carry their grammar; the embedded
//!   engine applies it; an HTTP server is not sent it, since an arbitrary
//!   OpenAI-compatible server may refuse a field it does not know (llama.cpp's
//!   server reads `grammar`; others differ, and nothing cheap tells them apart).
//! - **on**: as auto, and HTTP servers are sent it as `grammar` (say this
//!   for a llama.cpp server). A friend's model cannot be constrained —
//!   offload does not carry grammars — so `on` with one is refused.
//!
//! docs/user-guide.md, "Constrained decoding", says the same for users.

use std::fmt;
use std::str::FromStr;

/// The `--constrained` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConstrainedMode {
    /// Every backend that can constrain does; HTTP servers are sent the grammar.
    On,
    /// Nothing is constrained.
    Off,
    /// The embedded engine constrains; HTTP servers and friends do not.
    #[default]
    Auto,
}

/// Where a model runs, as far as constraining goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The embedded llama.cpp engine (a GGUF file).
    Engine,
    /// An OpenAI-compatible server.
    Http,
    /// A friend's model over offload (which drops the grammar).
    Friend,
}

/// `--constrained on` with a model that cannot follow a grammar.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--constrained on: {model} cannot be constrained (offload does not carry the reply's \
     grammar); use --constrained auto or off, or a model of your own (--model-file, --llm-url)"
)]
pub struct CannotConstrain {
    /// The model, in words (`a friend's model`).
    pub model: String,
}

/// A word that is not `on`, `off` or `auto`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--constrained takes on, off or auto, not {0:?}")]
pub struct UnknownMode(pub String);

impl ConstrainedMode {
    /// Whether requests carry their grammar at all: every mode but `off`.
    pub fn builds_grammars(self) -> bool {
        self != Self::Off
    }

    /// Whether an HTTP server is sent the grammar: only with `on`.
    pub fn sends_to_http(self) -> bool {
        self == Self::On
    }

    /// Whether replies of `backend` are decoded under their grammar.
    pub fn constrains(self, backend: Backend) -> bool {
        match backend {
            Backend::Engine => self.builds_grammars(),
            Backend::Http => self.sends_to_http(),
            Backend::Friend => false,
        }
    }

    /// Refuses `on` for a backend that cannot follow a grammar; `model`
    /// names it in the error.
    pub fn check(self, backend: Backend, model: &str) -> Result<(), CannotConstrain> {
        if self == Self::On && !self.constrains(backend) {
            return Err(CannotConstrain {
                model: model.to_owned(),
            });
        }
        Ok(())
    }

    /// `constrained decoding: on (the embedded engine applies the grammar)`
    /// and the like, for the line `porfiry run` prints about its model.
    pub fn describe(self, backend: Backend) -> &'static str {
        match (self.constrains(backend), backend, self) {
            (true, Backend::Engine, _) => "on (the embedded engine follows the reply grammar)",
            (true, _, _) => "on (the server is sent the reply grammar as `grammar`)",
            (false, _, Self::Off) => "off",
            (false, Backend::Http, _) => {
                "off (an HTTP server gets the reply grammar only with --constrained on)"
            }
            (false, _, _) => "off (a friend's model gets no grammar over offload)",
        }
    }
}

impl FromStr for ConstrainedMode {
    type Err = UnknownMode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "on" => Ok(Self::On),
            "off" => Ok(Self::Off),
            "auto" => Ok(Self::Auto),
            _ => Err(UnknownMode(s.to_owned())),
        }
    }
}

impl fmt::Display for ConstrainedMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::On => "on",
            Self::Off => "off",
            Self::Auto => "auto",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_constrains_the_engine_only_and_on_adds_http() {
        use Backend::*;
        use ConstrainedMode::*;
        let table: Vec<(ConstrainedMode, [bool; 3])> = [On, Off, Auto]
            .into_iter()
            .map(|m| (m, [Engine, Http, Friend].map(|b| m.constrains(b))))
            .collect();
        assert_eq!(
            table,
            [
                (On, [true, true, false]),
                (Off, [false, false, false]),
                (Auto, [true, false, false]),
            ]
        );
        assert!(Auto.builds_grammars() && On.builds_grammars() && !Off.builds_grammars());
        assert!(On.sends_to_http() && !Auto.sends_to_http());
        assert_eq!(ConstrainedMode::default(), Auto);
    }

    #[test]
    fn on_with_a_friends_model_is_refused_and_says_what_to_do() {
        let e = ConstrainedMode::On
            .check(Backend::Friend, "a friend's model")
            .unwrap_err()
            .to_string();
        assert!(e.contains("a friend's model cannot be constrained"), "{e}");
        assert!(e.contains("--constrained auto or off"), "{e}");
        assert!(ConstrainedMode::On.check(Backend::Http, "m").is_ok());
        assert!(ConstrainedMode::Auto.check(Backend::Friend, "m").is_ok());
    }

    #[test]
    fn modes_parse_and_print_as_the_flag_writes_them() {
        for mode in [
            ConstrainedMode::On,
            ConstrainedMode::Off,
            ConstrainedMode::Auto,
        ] {
            assert_eq!(mode.to_string().parse::<ConstrainedMode>(), Ok(mode));
        }
        assert_eq!(" ON ".parse(), Ok(ConstrainedMode::On));
        let e = "yes".parse::<ConstrainedMode>().unwrap_err().to_string();
        assert_eq!(e, "--constrained takes on, off or auto, not \"yes\"");
    }

    #[test]
    fn each_state_is_described_for_the_run_line() {
        use Backend::*;
        use ConstrainedMode::*;
        assert!(Auto.describe(Engine).starts_with("on (the embedded engine"));
        assert!(On.describe(Http).starts_with("on (the server is sent"));
        assert!(Auto.describe(Http).contains("only with --constrained on"));
        assert_eq!(Off.describe(Engine), "off");
        assert!(Auto.describe(Friend).contains("friend's model"));
    }
}
