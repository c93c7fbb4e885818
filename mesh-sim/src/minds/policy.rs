//! A mind's scripted model: a seeded policy standing in for an LLM behind
//! the real cognitive core. While it thinks it writes a new thought each
//! tick (and adds a concept or a diary entry now and then, as a model using
//! its tools does); once it drifts into a loop it repeats one sentence word
//! for word until a strategy the core applies gets it out. It answers the
//! core's reflex questions (novelty, emotions) as a model would judge its
//! own replies, so the core's own detectors, strategy choice and ratings do
//! the rest.
//!
//! The model never draws random numbers itself: the mind's loop
//! (`minds/mind.rs`) draws the policy's transitions between ticks from the
//! mind's seeded generator, and the model only reads [`PolicyState`]. The
//! same seed therefore gives the same replies whatever order the minds'
//! ticks run in.

use std::sync::{Arc, Mutex, PoisonError};

use porfiry_skills::Language;
use porfiry_skills::cognition::texts::prompt::core_system_prompt;
use porfiry_skills::llm::{BoxFuture, Completion, Llm, LlmError, ModelRequest};

/// The registry name of every mind's model.
pub const MODEL_NAME: &str = "scripted-policy";

/// Words fresh thoughts are made of: 48 words, eight a thought, so two
/// thoughts share few words and the core's similarity detector (0.8 word
/// overlap) sees new thinking.
const WORDS: [&str; 48] = [
    "river", "lantern", "orbit", "garden", "signal", "harbour", "winter", "copper", "meadow",
    "engine", "violin", "compass", "pebble", "thunder", "library", "saddle", "glacier", "market",
    "feather", "canyon", "kettle", "mirror", "tunnel", "orchard", "beacon", "ladder", "velvet",
    "quarry", "spiral", "anchor", "blossom", "cipher", "desert", "ember", "fabric", "gravel",
    "hollow", "island", "jigsaw", "kernel", "lagoon", "marble", "nectar", "oyster", "prism",
    "quartz", "ribbon", "summit",
];

/// Words in one fresh thought.
const WORDS_PER_THOUGHT: usize = 8;

/// The novelty a model gives its own fresh thought, and a looping one.
const FRESH_NOVELTY: f64 = 0.8;
/// See [`FRESH_NOVELTY`].
const LOOPING_NOVELTY: f64 = 0.05;

/// What the model knows between ticks; the mind's loop writes it.
#[derive(Debug, Clone, Default)]
pub struct PolicyState {
    /// The mind's index (names its concepts and strategies).
    pub mind: usize,
    /// Whether it is repeating itself now.
    pub looping: bool,
    /// Fresh thoughts written so far (each names a distinct concept).
    pub thoughts: u64,
    /// Commands to write in the next main reply (a new or shared
    /// strategy, a deletion), in order; taken by the reply.
    pub commands: Vec<String>,
}

/// The model the core talks to; one per mind.
pub struct PolicyLlm {
    state: Arc<Mutex<PolicyState>>,
}

impl PolicyLlm {
    /// A model reading `state`.
    pub fn new(state: Arc<Mutex<PolicyState>>) -> Self {
        Self { state }
    }
}

/// Eight words for thought `n` of mind `mind`: a fixed mix of the two, so
/// the same run writes the same thoughts.
fn thought_words(mind: usize, n: u64) -> String {
    let mut x = (mind as u64)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(n.wrapping_mul(0xBF58_476D_1CE4_E5B9));
    let mut out = Vec::with_capacity(WORDS_PER_THOUGHT);
    for _ in 0..WORDS_PER_THOUGHT {
        x ^= x >> 31;
        x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^= x >> 29;
        // Modulo 48: the index fits.
        out.push(WORDS[(x % WORDS.len() as u64) as usize]);
    }
    out.join(" ")
}

/// The main reply for `state`, taking its pending commands.
fn main_reply(state: &mut PolicyState) -> String {
    let mind = state.mind;
    let mut reply = if state.looping {
        format!("I keep returning to the same question, mind {mind}, and nothing moves.")
    } else {
        state.thoughts += 1;
        let n = state.thoughts;
        let words = thought_words(mind, n);
        // Three tools in turn and a quiet tick: no command streak, no
        // A/B alternation, and the graph grows every few ticks.
        let command = match n % 4 {
            0 => format!("\nTOOL_CALL: concepts_add|idea-{mind}-{n}|{words}"),
            1 => format!("\nTOOL_CALL: diary_add|Day note {n}: {words}"),
            2 => format!("\nTOOL_CALL: concepts_add|link-{mind}-{n}|{words}"),
            _ => String::new(),
        };
        format!("Thought {n}: {words}.{command}")
    };
    // A loop is word for word: what the mind meant to write waits for it.
    if !state.looping {
        for c in state.commands.drain(..) {
            reply.push_str("\nTOOL_CALL: ");
            reply.push_str(&c);
        }
    }
    reply
}

/// The answer to a reflex question (the cognitive and the emotional
/// evaluation read the keys they know from one JSON object).
fn reflex_answer(looping: bool) -> String {
    let (novel, novelty, mood) = if looping {
        ("no", LOOPING_NOVELTY, "boredom:3")
    } else {
        ("yes", FRESH_NOVELTY, "interest:3")
    };
    format!(
        r#"{{"novel": "{novel}", "novelty": {novelty}, "new_ideas": [], "refined_ideas": [], "discarded_ideas": [], "tags": ["thinking"], "emotions": ["{mood}"]}}"#
    )
}

/// Whether `request` is the tick's main call (its system prompt is the
/// core's context 0), not a reflex question.
pub(crate) fn is_main_call(request: &ModelRequest) -> bool {
    let first = core_system_prompt(Language::En)
        .lines()
        .next()
        .unwrap_or("-");
    request.system.starts_with(first)
}

impl Llm for PolicyLlm {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Completion, LlmError>> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let text = if is_main_call(request) {
            main_reply(&mut state)
        } else {
            reflex_answer(state.looping)
        };
        Box::pin(async move { Ok(Completion::text(text)) })
    }

    fn model_name(&self) -> String {
        MODEL_NAME.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_thoughts_differ_and_a_loop_repeats_word_for_word() {
        let mut s = PolicyState {
            mind: 3,
            ..Default::default()
        };
        let a = main_reply(&mut s);
        let b = main_reply(&mut s);
        assert_ne!(a, b);
        s.looping = true;
        s.commands.push("strategies_list".into());
        assert_eq!(main_reply(&mut s), main_reply(&mut s));
        assert_eq!(s.commands.len(), 1, "a loop writes no commands");
        s.looping = false;
        assert!(main_reply(&mut s).ends_with("\nTOOL_CALL: strategies_list"));
        assert!(s.commands.is_empty());
    }
}
