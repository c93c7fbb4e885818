//! The five core tools, always in the prompt and never disabled: names,
//! schemas, and the replies of the two that need no session state
//! (`get_current_time`, `show_text`). The dispatcher runs the other three.

use crate::clock::ZonedTime;
use crate::texts::{self, Language};
use crate::tools::args::ArgSpec;
use crate::tools::toolset::{ClientEvent, ToolEffect, ToolOutput, ToolSpec};

/// `get_current_time`: date, time and zone, ISO 8601.
pub const GET_CURRENT_TIME: &str = "get_current_time";
/// `show_text|text`: show text to the user.
pub const SHOW_TEXT: &str = "show_text";
/// `read_skill|name`: a skill's body into the history.
pub const READ_SKILL: &str = "read_skill";
/// `enable_toolset|name`: switch a set on (invisible call).
pub const ENABLE_TOOLSET: &str = "enable_toolset";
/// `disable_toolset|name`: switch a set off (invisible call).
pub const DISABLE_TOOLSET: &str = "disable_toolset";

/// Every core tool name, in prompt order.
pub const CORE_TOOL_NAMES: [&str; 5] = [
    GET_CURRENT_TIME,
    SHOW_TEXT,
    READ_SKILL,
    ENABLE_TOOLSET,
    DISABLE_TOOLSET,
];

/// A core tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoreTool {
    /// `get_current_time`.
    GetCurrentTime,
    /// `show_text`.
    ShowText,
    /// `read_skill`.
    ReadSkill,
    /// `enable_toolset`.
    EnableToolset,
    /// `disable_toolset`.
    DisableToolset,
}

impl CoreTool {
    /// The core tool called `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            GET_CURRENT_TIME => Self::GetCurrentTime,
            SHOW_TEXT => Self::ShowText,
            READ_SKILL => Self::ReadSkill,
            ENABLE_TOOLSET => Self::EnableToolset,
            DISABLE_TOOLSET => Self::DisableToolset,
            _ => return None,
        })
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Self::GetCurrentTime => GET_CURRENT_TIME,
            Self::ShowText => SHOW_TEXT,
            Self::ReadSkill => READ_SKILL,
            Self::EnableToolset => ENABLE_TOOLSET,
            Self::DisableToolset => DISABLE_TOOLSET,
        }
    }

    /// Its spec as the prompt shows it.
    pub fn spec(self, lang: Language) -> ToolSpec {
        let (description, args) = match self {
            Self::GetCurrentTime => (texts::desc_get_current_time(lang), vec![]),
            Self::ShowText => (texts::desc_show_text(lang), vec![ArgSpec::text("text")]),
            Self::ReadSkill => (texts::desc_read_skill(lang), vec![ArgSpec::word("name")]),
            Self::EnableToolset => (
                texts::desc_enable_toolset(lang),
                vec![ArgSpec::word("name")],
            ),
            Self::DisableToolset => (
                texts::desc_disable_toolset(lang),
                vec![ArgSpec::word("name")],
            ),
        };
        ToolSpec::new(self.name(), description, args, self.effect())
    }

    /// What it does to the world: nothing beyond the session. The time, a
    /// skill and showing text only read; switching sets changes only this
    /// session's prompt, which no one else sees.
    pub fn effect(self) -> ToolEffect {
        ToolEffect::Read
    }

    /// Every core tool, in prompt order.
    pub fn all() -> [CoreTool; 5] {
        [
            Self::GetCurrentTime,
            Self::ShowText,
            Self::ReadSkill,
            Self::EnableToolset,
            Self::DisableToolset,
        ]
    }
}

/// `get_current_time`'s reply: `2026-08-22T14:05:00+03:00 Europe/Moscow, Saturday`.
pub fn current_time(lang: Language, now: &ZonedTime) -> String {
    let weekday = texts::weekday(lang, now.at.weekday().number_days_from_monday());
    format!("{} {}, {weekday}", now.iso8601(), now.zone)
}

/// `show_text|text`: a display event and a confirmation.
pub fn show_text(lang: Language, text: &str) -> ToolOutput {
    ToolOutput::ok(texts::shown(lang)).with_event(ClientEvent::ShowText {
        text: text.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn names_round_trip_and_specs_match_names() {
        for tool in CoreTool::all() {
            assert_eq!(CoreTool::from_name(tool.name()), Some(tool));
            assert_eq!(tool.spec(Language::En).name, tool.name());
        }
        assert_eq!(CoreTool::from_name("media_search"), None);
        assert_eq!(CoreTool::all().map(CoreTool::name), CORE_TOOL_NAMES);
    }

    #[test]
    fn current_time_is_iso8601_with_offset_zone_and_weekday() {
        let now = ZonedTime::new(datetime!(2026-08-22 14:05:00 +03:00), "Europe/Moscow");
        assert_eq!(
            current_time(Language::En, &now),
            "2026-08-22T14:05:00+03:00 Europe/Moscow, Saturday"
        );
        assert_eq!(
            current_time(Language::Ru, &now),
            "2026-08-22T14:05:00+03:00 Europe/Moscow, суббота"
        );
    }

    #[test]
    fn show_text_emits_an_event_and_confirms() {
        let out = show_text(Language::En, "Lara Croft (2001)");
        assert_eq!(out.text, "shown to the user");
        assert_eq!(
            out.events,
            [ClientEvent::ShowText {
                text: "Lara Croft (2001)".into()
            }]
        );
    }
}
