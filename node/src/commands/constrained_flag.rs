//! `--constrained on|off|auto`, shared by `porfiry run`, `porfiry chat` and
//! `porfiry think`: whether model replies are decoded under their grammar
//! (a chat reply is text or one well-formed `TOOL_CALL` line of a shown
//! tool; a core reply's commands are catalogue tools). The rule for which
//! backend applies it is `porfiry_agent::llm::constrained`'s.

use clap::Args;
use porfiry_agent::llm::constrained::{Backend, CannotConstrain, ConstrainedMode};

/// The flag.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct ConstrainedArgs {
    /// Decode replies under their grammar, so a small model cannot garble a
    /// tool call: auto — the embedded engine (--model-file) only; on — also
    /// HTTP servers, sent as llama.cpp's `grammar` field (use it for a
    /// llama.cpp server; others may refuse the field); off — never.
    #[arg(long, value_name = "on|off|auto", default_value_t = ConstrainedMode::Auto,
          value_parser = parse_mode)]
    pub constrained: ConstrainedMode,
}

fn parse_mode(s: &str) -> Result<ConstrainedMode, String> {
    s.parse()
        .map_err(|e: porfiry_agent::llm::constrained::UnknownMode| e.to_string())
}

impl ConstrainedArgs {
    /// The mode.
    pub fn mode(&self) -> ConstrainedMode {
        self.constrained
    }

    /// Refuses `on` for a model that cannot follow a grammar.
    pub fn check(&self, backend: Backend, model: &str) -> Result<(), CannotConstrain> {
        self.constrained.check(backend, model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        flag: ConstrainedArgs,
    }

    #[test]
    fn the_flag_takes_on_off_auto_and_defaults_to_auto() {
        let mode = |args: &[&str]| {
            Cli::try_parse_from(std::iter::once("x").chain(args.iter().copied()))
                .map(|c| c.flag.mode())
        };
        assert_eq!(mode(&[]).unwrap(), ConstrainedMode::Auto);
        assert_eq!(mode(&["--constrained", "on"]).unwrap(), ConstrainedMode::On);
        assert_eq!(mode(&["--constrained=off"]).unwrap(), ConstrainedMode::Off);
        let e = mode(&["--constrained", "maybe"]).unwrap_err().to_string();
        assert!(e.contains("on, off or auto"), "{e}");
    }
}
