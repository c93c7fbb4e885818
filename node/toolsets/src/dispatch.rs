//! What every node toolset shares around its [`porfiry_skills::Toolset`]
//! impl: the reply to a tool the set does not have ([`unknown_tool`]) and
//! [`run_toolset!`], the four trait methods of a set that keeps its specs in
//! `specs` and answers calls with an `async fn run(&self, tool, args, ctx)`.

use porfiry_skills::texts::no_such_tool_in_set;
use porfiry_skills::{Language, ToolSpec};

/// The reply to `tool`, which the set `set` does not have: the registry
/// routes only listed tools to a set, but a set answers anyway, listing
/// what it has.
pub(crate) fn unknown_tool(lang: Language, tool: &str, set: &str, specs: &[ToolSpec]) -> String {
    let lines: Vec<String> = specs.iter().map(ToolSpec::prompt_line).collect();
    no_such_tool_in_set(lang, tool, set, &lines.join("\n"))
}

/// `impl Toolset for $set`: named `$name`, its catalogue line
/// `$summary(self.$deps.language)`, its tools `self.specs`, each call
/// answered by `self.run(tool, args, ctx)`.
macro_rules! run_toolset {
    ($set:ty, $name:expr, $summary:path, $deps:ident) => {
        impl porfiry_skills::Toolset for $set {
            fn name(&self) -> &str {
                $name
            }

            fn summary(&self) -> &str {
                $summary(self.$deps.language)
            }

            fn tools(&self) -> &[porfiry_skills::ToolSpec] {
                &self.specs
            }

            fn call<'a>(
                &'a self,
                tool: &'a str,
                args: &'a porfiry_skills::Args,
                ctx: &'a porfiry_skills::CallContext,
            ) -> porfiry_skills::BoxFuture<'a, porfiry_skills::ToolOutput> {
                Box::pin(self.run(tool, args, ctx))
            }
        }
    };
}

pub(crate) use run_toolset;

#[cfg(test)]
mod tests {
    use porfiry_skills::{ArgSpec, ToolEffect};

    use super::*;

    #[test]
    fn an_unknown_tool_is_named_with_the_sets_tools() {
        let specs = [ToolSpec::new(
            "demo_list",
            "lists",
            vec![ArgSpec::word("x")],
            ToolEffect::Read,
        )];
        let text = unknown_tool(Language::En, "demo_nope", "demo", &specs);
        assert!(text.contains("demo_nope"), "{text}");
        assert!(text.contains(&specs[0].prompt_line()), "{text}");
    }
}
