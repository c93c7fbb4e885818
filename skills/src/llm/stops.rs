//! Stop texts ([`ModelRequest::stop`]) where the protocol allows one, named
//! per call kind with the reason. A stop text ends the answer where it
//! starts; the backends honour it (the HTTP client sends `stop`, the
//! embedded engine watches its own output), so a small model that goes on
//! writing past what the protocol reads stops costing tokens.
//!
//! [`ModelRequest::stop`]: super::ModelRequest::stop

use crate::llm::message::TOOL_RESULT_PREFIX;
use crate::texts::{self, Language};

/// A chat reply: the model never writes a tool's result, the node does. A
/// small model that writes `TOOL_CALL: …` and then invents the
/// `TOOL_RESULT …` it expects (and an answer built on it) would only be
/// ignored past its first call; it stops before the invented result.
pub const CHAT_REPLY_STOP: [&str; 1] = [TOOL_RESULT_PREFIX];

/// A core tick's answer: the output instructions put the commands block at
/// the end of the reply, so the answer ends at the block's closing line
/// (the parser reads a block without that line to the end of the reply,
/// which is then where it was cut). Tool results reach the core in the next
/// tick's context 2, never inline.
pub fn tick_answer_stop(lang: Language) -> [&'static str; 2] {
    [texts::commands_block_end(lang), TOOL_RESULT_PREFIX]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cognition::commands::extract_commands;

    #[test]
    fn a_tick_answer_cut_at_its_stop_still_reads_every_command() {
        for lang in [Language::En, Language::Ru] {
            let [end, _] = tick_answer_stop(lang);
            let reply = format!(
                "{}\n{{\"cmd_id\": \"c1\", \"type\": \"diary_add\", \"args\": {{\"text\": \"x\"}}}}\n{end}\nmore",
                texts::commands_block_start(lang)
            );
            let cut = &reply[..reply.find(end).unwrap_or(reply.len())];
            let extracted = extract_commands(cut);
            assert_eq!(extracted.commands.len(), 1, "{lang}");
            assert!(extracted.problems.is_empty(), "{:?}", extracted.problems);
        }
    }
}
