//! How long each kind of model answer may run ([`ModelRequest::max_tokens`]).
//!
//! A small model on a phone that rambles burns battery for every token it
//! writes: a tick that asked for nothing more once wrote a 1,900-token code
//! dump that took 107 s on two cores. Every call the node makes names its
//! budget here, with the reason for the number. A backend with a smaller
//! limit of its own (a model's `max_tokens` in the registry, an offload
//! server's cap) sends the smaller one.
//!
//! [`ModelRequest::max_tokens`]: super::ModelRequest::max_tokens

/// A tool-loop reply when the config names none: a `TOOL_CALL` line is
/// under 100 tokens, and 512 leaves room for a long plain answer (about 380
/// English words) while capping a runaway at a few seconds of decoding.
pub const DEFAULT_CHAT_REPLY_MAX_TOKENS: u32 = 512;

/// The cognitive evaluation's JSON: a yes/no, a number and four short lists
/// of ideas and tags fit in 160 tokens; a longer answer is cut, and a cut
/// answer falls back to the lexical novelty estimate.
pub const COGNITIVE_EVALUATION_MAX_TOKENS: u32 = 160;

/// The emotional evaluation: a JSON array of a few `"emotion:strength"`
/// strings (the seed asks for the listed emotions only, each 2-6 tokens).
pub const EMOTIONAL_EVALUATION_MAX_TOKENS: u32 = 48;

/// A validator's vote: one whole number, −3 ..= +3. 16 tokens leave room
/// for "Rating: +2." and a little preamble, which the vote parser reads.
pub const VALIDATOR_VOTE_MAX_TOKENS: u32 = 16;

/// An `llm_task` or `llm_ask` answer (a process the core started): it lands
/// in process_log and so in the next tick's prompt, where more than the chat
/// reply's budget would crowd out the rest.
pub const LLM_JOB_MAX_TOKENS: u32 = DEFAULT_CHAT_REPLY_MAX_TOKENS;

/// The budget a core tick's answer gets: the answer share its prompt
/// already left free ([`crate::cognition::budget::answer_reserve`]), so
/// prompt and answer fit the model's context together.
pub fn tick_answer_max_tokens(context_tokens: usize) -> u32 {
    let reserve = crate::cognition::budget::answer_reserve(context_tokens);
    u32::try_from(reserve).unwrap_or(u32::MAX)
}

/// The smaller of two optional limits (`None` is no limit).
pub fn smaller(a: Option<u32>, b: Option<u32>) -> Option<u32> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smaller_limit_wins_and_none_is_no_limit() {
        assert_eq!(smaller(Some(512), Some(100)), Some(100));
        assert_eq!(smaller(Some(64), Some(100)), Some(64));
        assert_eq!(smaller(None, Some(100)), Some(100));
        assert_eq!(smaller(Some(7), None), Some(7));
        assert_eq!(smaller(None, None), None);
    }

    #[test]
    fn a_tick_answers_within_the_share_its_prompt_left() {
        assert_eq!(tick_answer_max_tokens(2_048), 512);
        assert_eq!(tick_answer_max_tokens(32_768), 1_024);
    }
}
